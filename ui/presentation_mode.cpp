#include "presentation_mode.h"

#include "analysis.h"
#include "concurrency_plot.h"
#include "format.h"
#include "lesson_gallery.h"
#include "main_window.h"
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

namespace {

// Colours for a projector: near-black text on white, saturated accents that stay apart when washed out.
constexpr auto kInk = "#111111";
constexpr auto kMuted = "#333333";
constexpr auto kAccent = "#0060A0";
constexpr auto kPass = "#15803d";
constexpr auto kFail = "#c62828";
constexpr auto kHighlight = "#F03C96"; // the timeline's highlight outline
constexpr int kMaxOpsListed = 6;
constexpr int kMaxThreadsListed = 4;
constexpr size_t kMaxHighlightedSpans = 400;
constexpr int kMaxLanesAboveText = 12;
constexpr size_t kMaxDiagnosticsShown = 3; // timelines with more lanes go beside the explanation

// The diagnostics to explain, at most kMaxDiagnosticsShown: the one naming the effect the lesson teaches first,
// then the others in rule order.
std::vector<const Diagnostic*> diagnosticsToShow(const TraceReport& report)
{
    std::vector<const Diagnostic*> shown;
    for (const Diagnostic& d : report.diagnostics)
        if (qs(d.rule) == report.effect) {
            shown.push_back(&d);
            break;
        }
    for (const Diagnostic& d : report.diagnostics)
        if (shown.size() < kMaxDiagnosticsShown && (shown.empty() || &d != shown.front()))
            shown.push_back(&d);
    return shown;
}

QString esc(const QString& s)
{
    return s.toHtmlEscaped();
}

QString px(double size)
{
    return QString::number(std::max(8, int(std::lround(size)))) + QStringLiteral("px");
}

QString colour(const char* name)
{
    return QLatin1String(name);
}

// "s1, s2" or "s0, s1, s2, …, s31" for long lists.
QString nameList(const QStringList& names)
{
    if (names.size() <= 6)
        return names.join(QStringLiteral(", "));
    return names.mid(0, 3).join(QStringLiteral(", ")) + QStringLiteral(", …, ") + names.last();
}

QString streamKindText(StreamKind kind)
{
    switch (kind) {
    case StreamKind::LegacyDefault: return QStringLiteral("legacy default stream");
    case StreamKind::PerThreadDefault: return QStringLiteral("per-thread default stream");
    case StreamKind::Blocking: return QStringLiteral("blocking");
    case StreamKind::NonBlocking: return QStringLiteral("non-blocking");
    }
    return {};
}

QString formatDurationNs(long long ns)
{
    return TimelineView::formatDuration(double(ns));
}

} // namespace

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
    QString text = QTextDocumentFragment::fromHtml(m_title->text()).toPlainText() + QLatin1Char('\n') +
                   stepIndicator() + QLatin1Char('\n');
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
    m_savedState = w->saveState();
    m_savedGeometry = w->geometry();
    m_savedWindowState = w->windowState();
    m_menuBarVisible = !w->menuBar()->isHidden();
    m_statusBarVisible = !w->statusBar()->isHidden();
    m_concurrencyVisible = !w->concurrencyPlot()->isHidden();
    m_savedFontScale = timeline->fontScale();
    m_savedLaneHeight = timeline->laneHeight();
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
    if (!w->restoreState(m_savedState))
        for (const QPointer<QWidget>& hidden : m_hidden)
            if (hidden)
                hidden->show();
    m_hidden.clear();
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

    const bool showTimeline = (m_step == Step::Timeline || m_step == Step::Explanation) && !waitingForTrace() &&
                              m_window->currentTrace();
    const bool showExplanation = showTimeline && m_step == Step::Explanation;
    m_textColumn->setVisible(!showTimeline);
    m_progress->setVisible(!showTimeline && (m_loading || m_runState == RunState::Running ||
                                             (m_step != Step::SetUp && m_awaitingTrace)));
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
    if (const auto trace = m_window->currentTrace(); trace && !waitingForTrace() && !id.isEmpty() &&
                                                     m_window->lessonVariant().isEmpty())
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

// ---- slide text --------------------------------------------------------------------------------------------------

QString PresentationMode::setUpHtml(double scale) const
{
    const double body = bodyPixelSize() * scale;
    const double detail = body * 0.78;
    const Scenario& s = m_window->scenarioModel()->scenario();
    QString h = QStringLiteral("<div style='color:%1'>").arg(colour(kInk));
    if (m_loading) {
        h += QStringLiteral("<p style='font-size:%1'>Opening the lesson…</p></div>").arg(px(body));
        return h;
    }
    // A variant: what it changes (its title is under the slide's title), before what the lesson itself shows.
    const QString variant = m_window->lessonVariant();
    QString change;
    for (const Variant& v : s.variants)
        if (!variant.isEmpty() && qs(v.id) == variant)
            change = qs(v.description);
    if (!change.isEmpty())
        h += QStringLiteral("<table width='100%' cellpadding='%1' style='background-color:#FFE08A; margin-bottom:%2'>"
                            "<tr><td style='font-size:%3'><b>What changes:</b> %4</td></tr></table>")
                 .arg(int(body * 0.3))
                 .arg(px(body * 0.4), px(body), esc(change));
    if (!s.description.empty())
        h += QStringLiteral("<p style='font-size:%1; margin-bottom:%2'>%3</p>")
                 .arg(px(body), px(body * 0.5), esc(qs(s.description)));

    h += QStringLiteral("<p style='font-size:%1; font-weight:bold; color:%2; margin-bottom:%3'>What runs</p>")
             .arg(px(body * 0.9), colour(kAccent), px(body * 0.2));
    h += QStringLiteral("<table cellspacing='0' cellpadding='%1' style='font-size:%2'>")
             .arg(int(detail * 0.15))
             .arg(px(detail));
    auto row = [&](const QString& label, const QString& html) {
        h += QStringLiteral("<tr><td valign='top' style='padding-right:%1'><b>").arg(px(detail)) + label +
             QStringLiteral("</b></td><td valign='top'>") + html + QStringLiteral("</td></tr>");
    };

    // Streams, grouped by what they are.
    std::vector<std::pair<QString, QStringList>> groups;
    for (const StreamSpec& stream : s.streams) {
        QString what = streamKindText(stream.kind) + QStringLiteral(", GPU ") + QString::number(stream.device);
        if (stream.priority != 0)
            what += QStringLiteral(", priority ") + QString::number(stream.priority);
        auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == what; });
        if (it == groups.end())
            groups.emplace_back(what, QStringList{qs(stream.name)});
        else
            it->second << qs(stream.name);
    }
    QStringList streamLines;
    for (const auto& [what, names] : groups)
        streamLines << QStringLiteral("<b>") + esc(nameList(names)) + QStringLiteral("</b> — ") + esc(what) +
                           (names.size() > 6 ? QStringLiteral(" (%1 streams)").arg(names.size()) : QString());
    if (!streamLines.isEmpty())
        row(s.streams.size() == 1 ? QStringLiteral("Stream") : QStringLiteral("Streams"),
            streamLines.join(QStringLiteral("<br>")));

    // Host threads and the operations they issue.
    for (size_t t = 0; t < s.threads.size() && t < size_t(kMaxThreadsListed); ++t) {
        const ThreadSpec& thread = s.threads[t];
        QString what = QStringLiteral("on GPU ") + QString::number(thread.device);
        if (thread.workers > 1)
            what += QStringLiteral(", a pool of %1 workers taking %2 tasks").arg(thread.workers).arg(thread.repeat);
        else if (thread.repeat > 1)
            what += QStringLiteral(", %1 times").arg(thread.repeat);
        QStringList ops;
        for (size_t i = 0; i < thread.ops.size() && i < size_t(kMaxOpsListed); ++i) {
            const Op& op = thread.ops[i];
            const QString name = qs(displayName(op));
            const QString summary = ScenarioModel::opSummary(op);
            ops << (summary.contains(name) ? esc(summary)
                                           : QStringLiteral("<b>") + esc(name) + QStringLiteral("</b>: ") + esc(summary));
        }
        if (thread.ops.size() > size_t(kMaxOpsListed))
            ops << QStringLiteral("… and %1 more").arg(thread.ops.size() - size_t(kMaxOpsListed));
        row(QStringLiteral("Thread ") + esc(qs(thread.name)),
            esc(what) + QStringLiteral(":<br>") + QStringLiteral("• ") + ops.join(QStringLiteral("<br>• ")));
    }
    if (s.threads.size() > size_t(kMaxThreadsListed))
        row(QString(), QStringLiteral("… and %1 more host threads").arg(s.threads.size() - size_t(kMaxThreadsListed)));
    if (const auto connections = s.run.maxConnections())
        row(QStringLiteral("Setting"), QStringLiteral("CUDA_DEVICE_MAX_CONNECTIONS = %1").arg(*connections));
    h += QStringLiteral("</table></div>");
    return h;
}

QString PresentationMode::runHtml(double scale) const
{
    const double body = bodyPixelSize() * scale;
    const double big = body * 1.25;
    RunController* runner = m_window->runController();
    const bool gpu = m_runState == RunState::Idle ? m_window->backend() == RunBackend::Gpu : m_runOnGpu;
    QString where;
    if (gpu) {
        const QString name = runner->gpuStatus().description;
        where = name.isEmpty() ? QStringLiteral("the GPU") : QStringLiteral("the GPU (") + esc(name) + QLatin1Char(')');
    } else {
        where = QStringLiteral("the simulator");
        if (!runner->profileId().isEmpty())
            where += QStringLiteral(" (%1 profile)").arg(esc(runner->profileId()));
    }
    QString h = QStringLiteral("<div style='color:%1'>").arg(colour(kInk));
    auto line = [&](double size, const QString& html, const char* ink = kInk, bool bold = false) {
        h += QStringLiteral("<p style='font-size:%1; color:%2;%3 margin-bottom:%4'>")
                 .arg(px(size), colour(ink), bold ? QStringLiteral(" font-weight:bold;") : QString(),
                      px(size * 0.4)) +
             html + QStringLiteral("</p>");
    };
    if (m_loading) {
        line(big, QStringLiteral("Opening the lesson…"), kInk, true);
    } else if (m_runState == RunState::Running || (m_runState == RunState::Idle && m_awaitingTrace)) {
        line(big, QStringLiteral("Running on ") + where + QStringLiteral("…"), kInk, true);
        if (!m_runMessage.isEmpty())
            line(body, esc(m_runMessage), kMuted);
    } else if (m_runState == RunState::Failed) {
        line(big, QStringLiteral("✖ The run failed"), kFail, true);
        line(body, esc(m_runMessage), kInk);
    } else if (m_runState == RunState::Finished) {
        const auto trace = m_window->currentTrace();
        line(big, QStringLiteral("✔ Finished on ") + where, kPass, true);
        QString done = (m_runOnGpu ? QStringLiteral("Ran in ") : QStringLiteral("Simulated in ")) +
                       formatDurationNs((long long)(m_runWallMs * 1e6)) + QLatin1Char('.');
        if (trace && trace->trace)
            done += QStringLiteral(" %1 GPU operations and %2 API calls recorded.")
                        .arg(trace->report.metrics.gpuSpanCount)
                        .arg(trace->report.metrics.apiCallCount);
        line(body, done, kInk);
        line(body, QStringLiteral("Next: the timeline →"), kAccent, true);
    } else {
        line(big, QStringLiteral("Ready to run on ") + where, kInk, true);
    }
    if (m_step != Step::Run && !m_loading)
        line(body, QStringLiteral("The %1 appears when the run has finished.").arg(stepName(m_step).toLower()), kMuted);
    h += QStringLiteral("</div>");
    return h;
}

QString PresentationMode::explanationHtml(double scale, bool columns) const
{
    const auto analyzed = m_window->currentTrace();
    const double body = (m_active ? bodyPixelSize() : 28) * scale;
    const double small = body * 0.8;
    const QString open = QStringLiteral("<div style='color:%1'>").arg(colour(kInk));
    if (!analyzed)
        return open + QStringLiteral("<p style='font-size:%1'>Run the lesson to see what happened.</p></div>").arg(px(body));
    const TraceReport& report = analyzed->report;
    const bool isVariant = !m_window->lessonVariant().isEmpty();
    auto heading = [&](const QString& text, bool first = false) -> QString {
        return QStringLiteral("<p style='font-size:%1; font-weight:bold; color:%2; margin-top:%3; margin-bottom:%4'>")
                   .arg(px(body * 0.85), colour(kAccent), px(first ? 0 : body * 0.5), px(body * 0.15)) +
               text + QStringLiteral("</p>");
    };

    // The verdict: the key check (the one the contrasting variant fails).
    QString verdict;
    const CheckResult* key = nullptr;
    for (const CheckResult& c : report.checks)
        if (c.expectation.key && !key)
            key = &c;
    if (!key && !report.checks.empty())
        key = &report.checks.front();
    if (key) {
        const bool pass = key->passed && key->error.empty();
        verdict += QStringLiteral("<p style='font-size:%1; font-weight:bold; color:%2; margin-top:0; margin-bottom:%3'>%4</p>")
                       .arg(px(body * 1.25), colour(pass ? kPass : kFail), px(body * 0.2),
                            pass ? QStringLiteral("✔ PASS") : QStringLiteral("✖ FAIL"));
        if (!key->expectation.why.empty())
            verdict += QStringLiteral("<p style='font-size:%1; margin-bottom:%2'>%3</p>")
                           .arg(px(body), px(body * 0.2), esc(qs(key->expectation.why)));
        verdict += QStringLiteral("<p style='font-size:%1; color:%2'>%3%4</p>")
                       .arg(px(small), colour(kMuted), esc(qs(key->description)),
                            key->error.empty() ? QString() : QStringLiteral(" — ") + esc(qs(key->error)));
        if (isVariant)
            verdict += QStringLiteral("<p style='font-size:%1; color:%2'>%3</p>")
                           .arg(px(small), colour(kMuted),
                                pass ? QStringLiteral("This variant was meant to fail the key check: compare it with "
                                                      "the lesson itself.")
                                     : QStringLiteral("As intended: this variant breaks what the lesson shows."));
    } else if (!report.note.isEmpty()) {
        verdict += QStringLiteral("<p style='font-size:%1; color:%2; margin-top:0'>%3</p>")
                       .arg(px(small), colour(kMuted), esc(report.note));
    }

    // The numbers that show the effect.
    const TraceMetrics& m = report.metrics;
    QString makespan = QStringLiteral("Makespan <b>%1</b>").arg(formatDurationNs(m.makespanNs));
    if (const auto base = m_baseMetrics.find(m_window->lessonId());
        isVariant && base != m_baseMetrics.end() && base->second.makespanNs > 0 && m.makespanNs > 0) {
        const double ratio = double(m.makespanNs) / double(base->second.makespanNs);
        makespan += QStringLiteral("<br>%1 without the change: <b>%2× %3</b>")
                        .arg(formatDurationNs(base->second.makespanNs),
                             QString::number(ratio >= 1 ? ratio : 1 / ratio, 'f', 2),
                             ratio >= 1 ? QStringLiteral("slower") : QStringLiteral("faster"));
    }
    QStringList numbers{makespan};
    if (std::isfinite(m.speedup) && m.speedup > 0)
        numbers << QStringLiteral("Speedup over serial <b>%1×</b>").arg(QString::number(m.speedup, 'f', 2));
    numbers << (m.maxConcurrency == 1 ? QStringLiteral("One GPU operation at a time")
                                      : QStringLiteral("Up to <b>%1</b> GPU operations at once").arg(m.maxConcurrency));
    if (m.copyComputeOverlapNs > 0)
        numbers << QStringLiteral("Copies overlap kernels for <b>%1</b>").arg(formatDurationNs(m.copyComputeOverlapNs));
    const QString effect = heading(QStringLiteral("What the run shows"), verdict.isEmpty()) +
                           QStringLiteral("<p style='font-size:%1; margin-top:0'>").arg(px(body)) +
                           numbers.join(QStringLiteral("<br>")) + QStringLiteral("</p>");

    // Why: the diagnostics, one sentence each (with what to do about a problem).
    QString why;
    if (!report.diagnostics.empty()) {
        bool spans = false;
        for (const Diagnostic& d : report.diagnostics)
            spans = spans || !d.spans.empty();
        why += heading(spans ? QStringLiteral("Why <span style='color:%1'>(outlined on the timeline)</span>")
                                   .arg(colour(kHighlight))
                             : QStringLiteral("Why"),
                       columns);
        for (const Diagnostic* shown : diagnosticsToShow(report)) {
            const Diagnostic& d = *shown;
            const bool info = d.severity == "info";
            why += QStringLiteral("<p style='font-size:%1; margin-bottom:%2'>%3 %4")
                       .arg(px(body * 0.9), px(body * 0.25), info ? QStringLiteral("ℹ") : QStringLiteral("⚠"),
                            esc(qs(d.message)));
            if (const DiagnosticRule* rule = findDiagnosticRule(d.rule); !info && rule && !rule->fix.empty())
                why += QStringLiteral("<br><span style='font-size:%1; color:%2'>%3</span>")
                           .arg(px(small), colour(kMuted), esc(qs(rule->fix)));
            why += QStringLiteral("</p>");
        }
    }

    // The other checks, one line each.
    QStringList others;
    for (const CheckResult& c : report.checks) {
        if (&c == key)
            continue;
        const bool pass = c.passed && c.error.empty();
        others << QStringLiteral("<span style='color:%1'><b>%2</b></span> %3")
                      .arg(colour(pass ? kPass : kFail), pass ? QStringLiteral("✔") : QStringLiteral("✖"),
                           esc(qs(c.description)));
    }
    if (!others.isEmpty())
        why += heading(QStringLiteral("Other checks"), columns && why.isEmpty()) +
               QStringLiteral("<p style='font-size:%1; margin-top:0'>").arg(px(small)) +
               others.join(QStringLiteral("<br>")) + QStringLiteral("</p>");

    if (!columns)
        return open + verdict + effect + why + QStringLiteral("</div>");
    // Below a short timeline: the verdict and numbers on the left, the reasons on the right.
    return open +
           QStringLiteral("<table width='100%' cellspacing='0' cellpadding='0'><tr><td width='47%' valign='top'>") +
           verdict + effect + QStringLiteral("</td><td width='6%'></td><td width='47%' valign='top'>") + why +
           QStringLiteral("</td></tr></table></div>");
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
