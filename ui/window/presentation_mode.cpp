// Presentation mode: the window as slides for a classroom (set-up, run, explanation of each lesson), entered and
// left, stepped with the keys, laid out for a projector; the slides' text: presentation_slides.cpp.
#include "presentation_mode.h"
#include "presentation_style.h"

#include "analysis.h"
#include "concurrency_plot.h"
#include "format.h"
#include "lesson_gallery.h"
#include "main_window.h"
#include "main_window_parts.h"
#include "scenario_model.h"
#include "timeline_view.h"

#include <QAction>
#include <QApplication>
#include <QBoxLayout>
#include <QDockWidget>
#include <QFontInfo>
#include <QFrame>
#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QMenuBar>
#include <QProgressBar>
#include <QStatusBar>
#include <QTextDocument>
#include <QTextDocumentFragment>
#include <QTimer>
#include <QToolBar>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <set>

namespace streamscope {

using namespace presentation_detail;

QString PresentationMode::stepName(Step step)
{
    switch (step) {
    case Step::SetUp: return QStringLiteral("Set up");
    case Step::Run: return QStringLiteral("Run");
    case Step::Timeline: return QStringLiteral("Timeline");
    case Step::Explanation: return QStringLiteral("Explanation");
    }
    return {};
}

PresentationMode::PresentationMode(MainWindow* window) : QObject(window), m_window(window)
{
    setObjectName(QStringLiteral("presentationMode"));
    m_refreshTimer = new QTimer(this);
    m_refreshTimer->setSingleShot(true);
    m_refreshTimer->setInterval(0);
    connect(m_refreshTimer, &QTimer::timeout, this, &PresentationMode::refresh);

    connect(window, &MainWindow::documentOpened, this, [this] {
        if (!m_active || !m_loading)
            return;
        m_loading = false;
        RunController* runner = m_window->runController();
        // A trace document is shown as it opens; a lesson runs as it opens (its trace follows).
        if (!runner->isRunning() && m_window->currentTrace())
            m_awaitingTrace = false;
        if (m_step == Step::Run) {
            if (runner->isRunning()) {
                m_runState = RunState::Running;
                m_runOnGpu = runner->runningBackend() == RunBackend::Gpu;
            } else {
                startRun();
            }
        }
        refresh();
    });
    connect(window, &MainWindow::traceShown, this, [this] {
        if (!m_active)
            return;
        if (!m_loading)
            m_awaitingTrace = false;
        refresh();
    });
    connect(window, &MainWindow::errorShown, this, [this](const QString& message) {
        if (!m_active || !m_loading)
            return;
        // The lesson could not be opened: say so on the slide.
        m_loading = false;
        m_awaitingTrace = false;
        m_runState = RunState::Failed;
        m_runMessage = message;
        refresh();
    });

    RunController* runner = window->runController();
    connect(runner, &RunController::progressMessage, this, [this](const QString& message) {
        if (m_active && m_runState == RunState::Running) {
            m_runMessage = message;
            scheduleRefresh();
        }
    });
    connect(runner, &RunController::finished, this,
            [this](const std::shared_ptr<const AnalyzedTrace>&, RunBackend backend, double wallMs) {
                if (!m_active || m_runState != RunState::Running)
                    return;
                m_runState = RunState::Finished;
                m_runOnGpu = backend == RunBackend::Gpu;
                m_runWallMs = wallMs;
                m_runMessage.clear();
                scheduleRefresh();
            });
    connect(runner, &RunController::failed, this, [this](const QString& message, int) {
        if (!m_active || m_runState != RunState::Running)
            return;
        m_runState = RunState::Failed;
        m_runMessage = message;
        m_awaitingTrace = false; // the timeline keeps the trace it had
        scheduleRefresh();
    });
    connect(runner, &RunController::cancelled, this, [this] {
        if (!m_active || m_runState != RunState::Running)
            return;
        m_runState = RunState::Failed;
        m_runMessage = QStringLiteral("The run was cancelled.");
        m_awaitingTrace = false;
        scheduleRefresh();
    });
}

PresentationMode::~PresentationMode()
{
    if (m_active)
        qApp->removeEventFilter(this);
}

QString PresentationMode::stepIndicator() const
{
    return QStringLiteral("%1/%2 %3").arg(int(m_step) + 1).arg(kStepCount).arg(stepName(m_step));
}

int PresentationMode::bodyPixelSize() const
{
    return m_active ? std::max(28, int(std::lround(m_stageHeight * 0.040))) : 0;
}

QString PresentationMode::slideText() const
{
    if (!m_active)
        return {};
    QString text = QTextDocumentFragment::fromHtml(m_title->text()).toPlainText() + QLatin1Char('\n') + stepIndicator()
        + QLatin1Char('\n');
    if (!m_textColumn->isHidden())
        text += QTextDocumentFragment::fromHtml(m_textHtml).toPlainText() + QLatin1Char('\n');
    if (!m_explanation->isHidden())
        text += QTextDocumentFragment::fromHtml(m_explanationHtml).toPlainText() + QLatin1Char('\n');
    return text;
}

QString PresentationMode::explanationText() const
{
    return QTextDocumentFragment::fromHtml(explanationHtml(1.0, false)).toPlainText();
}

// ---- entering and leaving ------------------------------------------------------------------------------------

void PresentationMode::setActive(bool active)
{
    if (active)
        enter();
    else
        leave();
}

void PresentationMode::enter()
{
    if (m_active)
        return;
    MainWindow* w = m_window;
    TimelineView* timeline = w->timeline();
    m_shown = w->shownDocument();
    m_savedState = w->saveState();
    m_savedGeometry = w->geometry();
    m_savedWindowState = w->windowState();
    m_menuBarVisible = !w->menuBar()->isHidden();
    m_statusBarVisible = !w->statusBar()->isHidden();
    m_concurrencyVisible = !w->concurrencyPlot()->isHidden();
    m_savedFontScale = timeline->fontScale();
    m_savedLaneHeight = timeline->laneHeight();
    timeline->setLanesFillHeight(false); // the slide sizes the lanes itself (fitTimeline), up to laneTarget()
    // The slide sizes the lanes to its height (fitTimeline): six of them at the slide's lane height made the
    // timeline taller than its share above the explanation on a small screen (960x540, 1920x1080 at scale 2), and
    // it ran under the explanation.
    timeline->setMinimumVisibleLanes(0);
    m_savedFocus = QApplication::focusWidget();

    m_active = true;
    m_step = Step::SetUp;
    m_runState = RunState::Idle;
    m_runMessage.clear();
    m_loading = false;
    m_awaitingTrace = false;
    m_baseMetrics.clear();

    // The slide takes the centre; the window's own centre (message bar, timeline) is shown inside it.
    m_central = w->takeCentralWidget();
    buildStage();
    w->setCentralWidget(m_stage);

    m_hidden.clear();
    const auto docks = w->findChildren<QDockWidget*>(Qt::FindDirectChildrenOnly);
    for (QDockWidget* dock : docks)
        if (!dock->isHidden()) {
            m_hidden.emplace_back(dock);
            dock->hide();
        }
    const auto bars = w->findChildren<QToolBar*>(Qt::FindDirectChildrenOnly); // the window's, not a dock's
    for (QToolBar* bar : bars)
        if (!bar->isHidden()) {
            m_hidden.emplace_back(bar);
            bar->hide();
        }
    w->menuBar()->hide();
    w->statusBar()->hide();
    w->concurrencyPlot()->hide();
    timeline->setPresentationStyle(true);

    w->showFullScreen();
    qApp->installEventFilter(this);
    m_stage->setFocus(Qt::OtherFocusReason);
    applySizes();
    refresh();
    Q_EMIT activeChanged(true);
    Q_EMIT stepChanged(m_step);
}

void PresentationMode::leave()
{
    if (!m_active)
        return;
    MainWindow* w = m_window;
    TimelineView* timeline = w->timeline();
    qApp->removeEventFilter(this);
    m_active = false;
    m_refreshTimer->stop();

    restoreHighlight();
    timeline->setPresentationStyle(false);
    timeline->setFontScale(m_savedFontScale);
    timeline->setLaneHeight(m_savedLaneHeight);
    timeline->setLanesFillHeight(true);
    timeline->setMinimumVisibleLanes(kTimelineMinimumLanes);

    // The window's own centre goes back; the slide goes once the event that ended it is handled.
    if (m_stage) {
        w->takeCentralWidget();
        m_stage->hide();
        m_stage->deleteLater();
    }
    if (m_central) {
        w->setCentralWidget(m_central);
        m_central->show();
    }
    m_stage = nullptr;
    m_header = nullptr;
    m_title = m_indicator = m_text = m_explanation = m_keysHint = m_nextHint = nullptr;
    m_textColumn = nullptr;
    m_progress = nullptr;
    m_body = nullptr;

    if (m_savedWindowState & Qt::WindowFullScreen) {
        w->showFullScreen();
    } else {
        w->setWindowState(m_savedWindowState & ~Qt::WindowActive);
        if (!(m_savedWindowState & Qt::WindowMaximized))
            w->setGeometry(m_savedGeometry);
    }
    w->menuBar()->setVisible(m_menuBarVisible);
    w->statusBar()->setVisible(m_statusBarVisible);
    w->concurrencyPlot()->setVisible(m_concurrencyVisible);
    if (!w->restoreDockState(m_savedState))
        for (const QPointer<QWidget>& hidden : m_hidden)
            if (hidden)
                hidden->show();
    m_hidden.clear();
    // The lesson and variant it showed, with their trace and zoom, not the contrast or lesson presented last.
    if (m_shown)
        w->restoreShownDocument(*m_shown);
    m_shown.reset();
    if (m_savedFocus)
        m_savedFocus->setFocus(Qt::OtherFocusReason);
    Q_EMIT activeChanged(false);
}

void PresentationMode::buildStage()
{
    m_stage = new QWidget;
    m_stage->setObjectName(QStringLiteral("presentationStage"));
    m_stage->setFocusPolicy(Qt::StrongFocus);
    m_stage->setAutoFillBackground(true);
    QPalette palette = m_stage->palette();
    palette.setColor(QPalette::Window, Qt::white);
    palette.setColor(QPalette::WindowText, QColor(0x11, 0x11, 0x11));
    m_stage->setPalette(palette);

    m_header = new QFrame;
    m_header->setObjectName(QStringLiteral("presentationHeader"));
    m_title = new QLabel;
    m_title->setObjectName(QStringLiteral("presentationTitle"));
    m_title->setWordWrap(true);
    m_title->setTextFormat(Qt::RichText);
    m_indicator = new QLabel;
    m_indicator->setObjectName(QStringLiteral("presentationStep"));
    m_indicator->setAlignment(Qt::AlignCenter);
    auto* headerLayout = new QHBoxLayout(m_header);
    headerLayout->setContentsMargins(0, 0, 0, 0);
    headerLayout->addWidget(m_title, 1);
    headerLayout->addWidget(m_indicator, 0, Qt::AlignTop);

    // The text of Set up and Run (and of a step waiting for its trace); sized to the space it gets, not its text.
    m_textColumn = new QWidget;
    m_text = new QLabel;
    m_text->setObjectName(QStringLiteral("presentationText"));
    m_text->setTextFormat(Qt::RichText);
    m_text->setWordWrap(true);
    m_text->setAlignment(Qt::AlignLeft | Qt::AlignTop);
    m_text->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Ignored);
    m_progress = new QProgressBar;
    m_progress->setRange(0, 0);
    m_progress->setTextVisible(false);
    auto* textLayout = new QVBoxLayout(m_textColumn);
    textLayout->setContentsMargins(0, 0, 0, 0);
    textLayout->addWidget(m_progress);
    textLayout->addWidget(m_text, 1);

    m_explanation = new QLabel;
    m_explanation->setObjectName(QStringLiteral("presentationExplanation"));
    m_explanation->setTextFormat(Qt::RichText);
    m_explanation->setWordWrap(true);
    m_explanation->setAlignment(Qt::AlignLeft | Qt::AlignTop);
    m_explanation->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Ignored);

    m_body = new QBoxLayout(QBoxLayout::LeftToRight);
    m_body->setContentsMargins(0, 0, 0, 0);
    m_body->addWidget(m_textColumn, 1);
    if (m_central)
        m_body->addWidget(m_central, 1);
    m_body->addWidget(m_explanation, 1);

    m_keysHint = new QLabel(QStringLiteral("Space / → next   ← back   Esc leave"));
    m_nextHint = new QLabel;
    m_nextHint->setAlignment(Qt::AlignRight | Qt::AlignVCenter);
    auto* footer = new QHBoxLayout;
    footer->setContentsMargins(0, 0, 0, 0);
    footer->addWidget(m_keysHint);
    footer->addWidget(m_nextHint, 1);

    auto* layout = new QVBoxLayout(m_stage);
    layout->addWidget(m_header);
    layout->addLayout(m_body, 1);
    layout->addLayout(footer);
}

// ---- keys --------------------------------------------------------------------------------------------------------

bool PresentationMode::eventFilter(QObject* watched, QEvent* event)
{
    if (!m_active || !watched->isWidgetType())
        return QObject::eventFilter(watched, event);
    auto* widget = static_cast<QWidget*>(watched);
    switch (event->type()) {
    case QEvent::ShortcutOverride:
    case QEvent::KeyPress: {
        if (widget->window() != m_window)
            break;
        auto* key = static_cast<QKeyEvent*>(event);
        if (key->modifiers() & (Qt::ControlModifier | Qt::AltModifier | Qt::MetaModifier))
            break;
        const int k = key->key();
        const bool forward = k == Qt::Key_Space || k == Qt::Key_Right || k == Qt::Key_PageDown;
        const bool backward = k == Qt::Key_Left || k == Qt::Key_PageUp;
        const bool escape = k == Qt::Key_Escape;
        if (!forward && !backward && !escape)
            break;
        // Ours, not a shortcut's or the focused widget's.
        event->accept();
        if (event->type() == QEvent::ShortcutOverride)
            return true;
        if (key->isAutoRepeat())
            return true; // a held key must not race through the lesson
        if (escape)
            leave();
        else if (forward)
            step();
        else
            back();
        return true;
    }
    case QEvent::Close:
        // Leave first, so that the window saves its own layout, not the slide's.
        if (widget == m_window)
            leave();
        break;
    case QEvent::Resize:
        if (widget == m_stage) {
            applySizes();
            scheduleRefresh();
        } else if (widget == m_text || widget == m_explanation || widget == m_window->timeline()) {
            scheduleRefresh();
        }
        break;
    default: break;
    }
    return QObject::eventFilter(watched, event);
}

// ---- steps -------------------------------------------------------------------------------------------------------

void PresentationMode::step()
{
    if (!m_active)
        return;
    if (m_step != Step::Explanation) {
        setStep(Step(int(m_step) + 1));
        return;
    }
    const auto next = nextDocument();
    if (!next.first.isEmpty())
        openDocument(next, Step::SetUp);
}

void PresentationMode::back()
{
    if (!m_active)
        return;
    if (m_step != Step::SetUp) {
        setStep(Step(int(m_step) - 1));
        return;
    }
    const auto sequence = lessonSequence();
    const int i = sequenceIndex();
    if (i > 0)
        openDocument(sequence[size_t(i - 1)], Step::Explanation);
}

void PresentationMode::setStep(Step step)
{
    const Step previous = m_step;
    m_step = step;
    if (previous == Step::Explanation && step != Step::Explanation)
        restoreHighlight();
    if (step == Step::Run && previous != Step::Run)
        startRun();
    refresh();
    Q_EMIT stepChanged(step);
}

void PresentationMode::startRun()
{
    if (m_loading)
        return; // runs once the lesson has opened
    RunController* runner = m_window->runController();
    m_runState = RunState::Running;
    m_runMessage.clear();
    m_runOnGpu = m_window->backend() == RunBackend::Gpu;
    m_awaitingTrace = true;
    m_window->runScenario();
    // A scenario that cannot run says why in the window's message.
    if (m_runState == RunState::Running && !runner->isRunning()) {
        m_runState = RunState::Failed;
        m_runMessage = m_window->errorMessage();
        m_awaitingTrace = false;
    }
}

void PresentationMode::openDocument(const std::pair<QString, QString>& document, Step step)
{
    if (!m_window->openPath(document.first, document.second))
        return; // the user kept unsaved edits
    const Step previous = m_step;
    m_loading = true;
    m_awaitingTrace = true;
    m_runState = RunState::Idle;
    m_runMessage.clear();
    m_step = step;
    if (previous == Step::Explanation)
        restoreHighlight();
    refresh();
    Q_EMIT stepChanged(step);
}

std::vector<std::pair<QString, QString>> PresentationMode::lessonSequence() const
{
    std::vector<std::pair<QString, QString>> sequence;
    for (const LessonEntry& lesson : m_window->lessonGallery()->model()->lessons()) {
        sequence.emplace_back(lesson.id, QString());
        for (const QString& variant : lesson.variantIds)
            sequence.emplace_back(lesson.id, variant);
    }
    return sequence;
}

int PresentationMode::sequenceIndex() const
{
    const auto sequence = lessonSequence();
    const std::pair<QString, QString> current(m_window->lessonId(), m_window->lessonVariant());
    if (current.first.isEmpty())
        return -1;
    const auto it = std::find(sequence.begin(), sequence.end(), current);
    return it == sequence.end() ? -1 : int(it - sequence.begin());
}

std::pair<QString, QString> PresentationMode::nextDocument() const
{
    const auto sequence = lessonSequence();
    const int i = sequenceIndex();
    if (i < 0 || size_t(i + 1) >= sequence.size())
        return {};
    return sequence[size_t(i + 1)];
}

// ---- layout ------------------------------------------------------------------------------------------------------

void PresentationMode::scheduleRefresh()
{
    if (m_active)
        m_refreshTimer->start();
}

void PresentationMode::applySizes()
{
    if (!m_stage)
        return;
    m_stageHeight = m_stage->height();
    const int h = m_stageHeight;
    const int margin = std::max(12, int(std::lround(h * 0.025)));
    m_stage->layout()->setContentsMargins(margin, margin / 2, margin, margin / 3);
    m_stage->layout()->setSpacing(margin / 2);

    QFont title = m_stage->font();
    title.setPixelSize(std::max(36, int(std::lround(h * 0.050))));
    title.setBold(true);
    m_title->setFont(title);
    m_title->setStyleSheet(QStringLiteral("color:%1;").arg(colour(kInk)));

    const int indicatorPx = std::max(18, int(std::lround(h * 0.030)));
    QFont indicator = m_stage->font();
    indicator.setPixelSize(indicatorPx);
    indicator.setBold(true);
    m_indicator->setFont(indicator);
    m_indicator->setStyleSheet(QStringLiteral("color:white; background:%1; border-radius:%2px; padding:%3px %4px;")
                                   .arg(colour(kAccent))
                                   .arg(indicatorPx / 2)
                                   .arg(indicatorPx / 5)
                                   .arg(indicatorPx / 2));

    QFont small = m_stage->font();
    small.setPixelSize(std::max(15, int(std::lround(h * 0.022))));
    m_keysHint->setFont(small);
    m_nextHint->setFont(small);
    m_keysHint->setStyleSheet(QStringLiteral("color:#555555;"));
    m_nextHint->setStyleSheet(QStringLiteral("color:%1;").arg(colour(kMuted)));
    m_progress->setFixedHeight(std::max(10, int(std::lround(h * 0.018))));

    // The timeline's text about as big as the slides' small text, bold.
    TimelineView* timeline = m_window->timeline();
    const int basePx = std::max(1, QFontInfo(timeline->font()).pixelSize());
    timeline->setFontScale(std::max(1.5, std::max(18.0, h * 0.026) / basePx));
}

void PresentationMode::fitTimeline()
{
    TimelineView* timeline = m_window->timeline();
    if (!timeline->trace() || !timeline->isVisible())
        return;
    timeline->fitToView();
    timeline->replot(QCustomPlot::rpImmediateRefresh); // lays out the axis and legend for the new size
    const int lanes = std::max(1, timeline->timelineLayout().totalLanes());
    const int lane = std::clamp(timeline->timeAxisRect().height() / lanes, 10, laneTarget());
    if (lane != timeline->laneHeight())
        timeline->setLaneHeight(lane);
}

int PresentationMode::laneTarget() const
{
    const TimelineView* timeline = m_window->timeline();
    return int(std::lround(QFontInfo(timeline->font()).pixelSize() * timeline->fontScale() * 2.4));
}

void PresentationMode::layoutBody(bool explanation)
{
    TimelineView* timeline = m_window->timeline();
    const int lanes = timeline->trace() ? std::max(1, timeline->timelineLayout().totalLanes()) : 1;
    m_explanationBelow = lanes <= kMaxLanesAboveText;
    m_body->setDirection(m_explanationBelow ? QBoxLayout::TopToBottom : QBoxLayout::LeftToRight);
    int timelineShare = 58, textShare = 42;
    if (m_explanationBelow && explanation) {
        // The timeline as high as its rows need (as on the Timeline step) unless the explanation needs the room at
        // full size: then the lanes get lower, down to about one and a half lines of text.
        const int room = std::max(1, m_body->geometry().height() - m_body->spacing());
        const int overhead = std::max(0, timeline->height() - timeline->timeAxisRect().height()); // legend, axis
        const int full = lanes * laneTarget() + overhead;
        const int least = lanes * std::max(20, laneTarget() * 5 / 8) + overhead;
        QTextDocument doc;
        doc.setDefaultFont(m_explanation->font());
        doc.setDocumentMargin(0);
        doc.setHtml(explanationHtml(1.0, true));
        doc.setTextWidth(std::max(1, m_body->geometry().width()));
        const int text = int(std::ceil(doc.size().height()));
        timelineShare = std::clamp(std::clamp(room - text, least, full), room / 5, room * 65 / 100);
        textShare = std::max(1, room - timelineShare);
    }
    if (m_central)
        m_body->setStretchFactor(m_central, timelineShare);
    m_body->setStretchFactor(m_explanation, textShare);
}

template <typename Html>
void PresentationMode::fitText(QLabel* label, Html html)
{
    const QSize room = label->contentsRect().size();
    QTextDocument doc;
    doc.setDefaultFont(label->font());
    doc.setDocumentMargin(0);
    QString text;
    for (double scale = 1.0; scale > 0.5; scale -= 0.075) {
        text = html(scale);
        if (room.width() <= 0 || room.height() <= 0)
            break;
        doc.setHtml(text);
        doc.setTextWidth(room.width());
        if (doc.size().height() <= room.height())
            break;
    }
    label->setText(text);
}

void PresentationMode::refresh()
{
    if (!m_active || !m_stage)
        return;
    const Scenario& scenario = m_window->scenarioModel()->scenario();
    QString title = scenario.title.empty() ? m_window->documentTitle() : qs(scenario.title);
    if (m_loading)
        title = QStringLiteral("Opening the lesson…");
    const QString id = m_window->lessonId();
    if (!m_loading && !id.isEmpty())
        title = id.section(QLatin1Char('-'), 0, 0) + QStringLiteral(" · ") + title;
    title = esc(title);
    // A variant says so under the title on every step.
    if (const QString variant = m_window->lessonVariant(); !m_loading && !variant.isEmpty()) {
        QString variantTitle = variant;
        for (const Variant& v : scenario.variants)
            if (qs(v.id) == variant && !v.title.empty())
                variantTitle = qs(v.title);
        title += QStringLiteral("<br><span style='font-size:%1; font-weight:normal; background-color:#FFE08A'>"
                                "&nbsp;The contrast: %2&nbsp;</span>")
                     .arg(px(m_stageHeight * 0.032), esc(variantTitle));
    }
    m_title->setText(title);
    m_indicator->setText(stepIndicator());
    m_nextHint->setText(footerText());

    const bool showTimeline =
        (m_step == Step::Timeline || m_step == Step::Explanation) && !waitingForTrace() && m_window->currentTrace();
    const bool showExplanation = showTimeline && m_step == Step::Explanation;
    m_textColumn->setVisible(!showTimeline);
    m_progress->setVisible(
        !showTimeline && (m_loading || m_runState == RunState::Running || (m_step != Step::SetUp && m_awaitingTrace)));
    if (m_central)
        m_central->setVisible(showTimeline);
    m_explanation->setVisible(showExplanation);
    if (showTimeline)
        layoutBody(showExplanation);
    // Lay the slide out now, so that the text below is fitted to the size it gets.
    m_stage->layout()->activate();

    if (!showTimeline) {
        if (m_step == Step::SetUp)
            fitText(m_text, [this](double s) { return setUpHtml(s); });
        else
            fitText(m_text, [this](double s) { return runHtml(s); });
        m_textHtml = m_text->text();
    } else {
        fitTimeline();
    }
    if (showExplanation) {
        fitText(m_explanation, [this](double s) { return explanationHtml(s, m_explanationBelow); });
        m_explanationHtml = m_explanation->text();
        highlightDiagnostics();
    }
    // The run without a variant, for the variant's contrast.
    if (const auto trace = m_window->currentTrace();
        trace && !waitingForTrace() && !id.isEmpty() && m_window->lessonVariant().isEmpty())
        m_baseMetrics[id] = {trace->report.metrics.makespanNs, trace->report.metrics.speedup};
}

QString PresentationMode::footerText() const
{
    if (m_step != Step::Explanation)
        return QStringLiteral("Next: ") + stepName(Step(int(m_step) + 1));
    const auto next = nextDocument();
    if (next.first.isEmpty())
        return sequenceIndex() < 0 ? QString() : QStringLiteral("The last lesson");
    for (const LessonEntry& lesson : m_window->lessonGallery()->model()->lessons()) {
        if (lesson.id != next.first)
            continue;
        if (next.second.isEmpty())
            return QStringLiteral("Next: lesson %1 · %2").arg(lesson.id.section(QLatin1Char('-'), 0, 0), lesson.title);
        const int v = int(lesson.variantIds.indexOf(next.second));
        return QStringLiteral("Next: the contrast · %1").arg(v >= 0 ? lesson.variantTitles.at(v) : next.second);
    }
    return {};
}

// ---- highlight ---------------------------------------------------------------------------------------------------

void PresentationMode::highlightDiagnostics()
{
    const auto analyzed = m_window->currentTrace();
    TimelineView* timeline = m_window->timeline();
    if (!analyzed || timeline->trace() != analyzed->trace)
        return;
    std::set<uint32_t> spans;
    for (const Diagnostic* d : diagnosticsToShow(analyzed->report))
        for (uint32_t span : d->spans)
            if (spans.size() < kMaxHighlightedSpans)
                spans.insert(span);
    timeline->setHighlightedSpans(std::vector<uint32_t>(spans.begin(), spans.end()), false);
}

void PresentationMode::restoreHighlight()
{
    // What the window highlights on its own: the critical path, when that is turned on.
    TimelineView* timeline = m_window->timeline();
    std::vector<uint32_t> spans;
    const auto* criticalPathAction = m_window->findChild<QAction*>(QStringLiteral("highlight-critical-path"));
    if (timeline->trace() && criticalPathAction && criticalPathAction->isChecked())
        for (const CriticalPathSegment& segment : criticalPath(*timeline->trace()).segments)
            spans.push_back(segment.span);
    timeline->setHighlightedSpans(std::move(spans));
}

} // namespace streamscope