// The sweep view: one knob of the scenario (streams, chunks, kernel work, ...) over a list of values, each value a
// run. Here: its controls, settings, the values and the scenario of each point; running: sweep_view_run.cpp; the
// plot and the table: sweep_view_plot.cpp.
#include "sweep_view.h"
#include "sweep_view_parts.h"

#include "device_profile.h"
#include "format.h"
#include "plot_theme.h"
#include "scenario_json.h"
#include "theme.h"
#include "trace_json.h"

#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QEvent>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QProgressBar>
#include <QPushButton>
#include <QRegularExpression>
#include <QScrollBar>
#include <QSplitter>
#include <QStandardItemModel>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QThread>
#include <QTimer>
#include <QToolButton>
#include <QToolTip>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

namespace streamscope {

using namespace sweep_detail;

SweepView::SweepView(QWidget* parent) : QWidget(parent), m_rerunTimer(new QTimer(this)), m_tick(new QTimer(this))
{
    setObjectName(QStringLiteral("sweepView"));

    QWidget* controls = createControls();
    createPlot();
    createTable();

    m_splitter = new QSplitter(Qt::Horizontal);
    m_splitter->setChildrenCollapsible(false);
    m_splitter->addWidget(m_plot);
    m_splitter->addWidget(m_table);
    m_splitter->setStretchFactor(0, 3);
    m_splitter->setStretchFactor(1, 2);

    m_layout = new QHBoxLayout(this);
    m_layout->setContentsMargins(6, 6, 6, 6);
    m_layout->setSpacing(10);
    m_layout->addWidget(controls);
    m_layout->addWidget(m_splitter, 1);

    connectControls();
    updateThreads();
    updateGpuChoice();
    rebuildPlot();
    rebuildTable();
    updateControls();
    setMessage(QStringLiteral("Choose a knob and its values, then Run Sweep. Each value is a full run of the "
                              "scenario with that knob changed."));
}

// The controls column: knob, values, thread, backend, Follow edits, Run and Cancel, progress and message.
QWidget* SweepView::createControls()
{
    m_knobBox = new QComboBox;
    m_knobBox->setObjectName(QStringLiteral("sweepKnob"));
    m_knobBox->addItem(QStringLiteral("Streams"), int(SweepKnob::Streams));
    m_knobBox->setItemData(0,
                           QStringLiteral("The scenario rewritten with N streams of its kind; its work is dealt to "
                                          "them round-robin, one chain of operations at a time."),
                           Qt::ToolTipRole);
    m_knobBox->addItem(QStringLiteral("Chunks"), int(SweepKnob::Chunks));
    m_knobBox->setItemData(1,
                           QStringLiteral("The thread's op list issued N times (its repeat), each op's work divided "
                                          "by the same factor: the same total work in more, smaller pieces."),
                           Qt::ToolTipRole);
    m_knobBox->addItem(QStringLiteral("Kernel size"), int(SweepKnob::KernelSize));
    m_knobBox->setItemData(2,
                           QStringLiteral("Every kernel's duration or problem size scaled so that its work is this "
                                          "many times the scenario's (0.5: half, 2: double)."),
                           Qt::ToolTipRole);

    m_valuesEdit = new QLineEdit;
    m_valuesEdit->setObjectName(QStringLiteral("sweepValues"));
    m_valuesEdit->setPlaceholderText(QStringLiteral("e.g. 1, 2, 4 or 1..16"));
    m_valuesEdit->setToolTip(QStringLiteral("The values to try, separated by commas or spaces; a..b is every whole "
                                            "number from a to b. Enter runs the sweep."));
    auto* defaults = new QToolButton;
    defaults->setText(QStringLiteral("Defaults"));
    defaults->setToolTip(QStringLiteral("The knob's usual range"));
    connect(defaults, &QToolButton::clicked, this, [this] {
        m_valuesEdit->setText(formatValues(defaultSweepValues(knob())));
        scheduleRerun();
    });
    auto* valuesRow = new QHBoxLayout;
    valuesRow->setContentsMargins(0, 0, 0, 0);
    valuesRow->setSpacing(4);
    valuesRow->addWidget(m_valuesEdit, 1);
    valuesRow->addWidget(defaults);

    m_threadBox = new QComboBox;
    m_threadBox->setObjectName(QStringLiteral("sweepThread"));
    m_threadBox->setToolTip(QStringLiteral("Chunks and kernel size: the host thread whose work changes"));
    m_backendBox = new QComboBox;
    m_backendBox->setObjectName(QStringLiteral("sweepBackend"));
    m_backendBox->addItem(QStringLiteral("Simulator"), int(RunBackend::Simulator));
    m_backendBox->addItem(QStringLiteral("GPU (not checked)"), int(RunBackend::Gpu));
    m_followBox = new QCheckBox(QStringLiteral("Follow edits"));
    m_followBox->setChecked(true);
    m_followBox->setToolTip(QStringLiteral("Simulator: sweep again after every edit of the scenario (when a sweep "
                                           "takes under a second)"));

    m_runButton = new QPushButton(QStringLiteral("Run Sweep"));
    m_runButton->setObjectName(QStringLiteral("sweepRun"));
    m_runButton->setDefault(true);
    m_cancelButton = new QPushButton(QStringLiteral("Cancel"));
    m_cancelButton->setObjectName(QStringLiteral("sweepCancel"));
    auto* buttons = new QHBoxLayout;
    buttons->setContentsMargins(0, 0, 0, 0);
    buttons->addWidget(m_runButton);
    buttons->addWidget(m_cancelButton);

    m_progressBar = new QProgressBar;
    m_progressBar->setFormat(QStringLiteral("%v of %m"));
    m_progressBar->setMaximumHeight(18);
    m_progressBar->hide();
    m_messageLabel = new QLabel;
    m_messageLabel->setObjectName(QStringLiteral("sweepMessage"));
    m_messageLabel->setWordWrap(true);
    m_messageLabel->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_messageLabel->setAlignment(Qt::AlignLeft | Qt::AlignTop);

    auto* controls = new QWidget;
    controls->setMinimumWidth(200);
    controls->setMaximumWidth(330);
    auto* form = new QFormLayout;
    form->setContentsMargins(0, 0, 0, 0);
    form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    form->addRow(QStringLiteral("Knob"), m_knobBox);
    form->addRow(QStringLiteral("Values"), valuesRow);
    form->addRow(QStringLiteral("Thread"), m_threadBox);
    form->addRow(QStringLiteral("Backend"), m_backendBox);
    auto* controlsLayout = new QVBoxLayout(controls);
    controlsLayout->setContentsMargins(0, 0, 0, 0);
    controlsLayout->addLayout(form);
    controlsLayout->addWidget(m_followBox);
    controlsLayout->addLayout(buttons);
    controlsLayout->addWidget(m_progressBar);
    controlsLayout->addWidget(m_messageLabel);
    controlsLayout->addStretch(1);
    return controls;
}

// The plot: makespan on the left axis, the two speedups on the right, one column per value.
void SweepView::createPlot()
{
    m_plot = new QCustomPlot;
    m_plot->setObjectName(QStringLiteral("sweepPlot"));
    m_plot->setMinimumSize(220, 180);
    m_plot->setAntialiasedElements(QCP::aePlottables | QCP::aeScatters);
    m_plot->plotLayout()->insertRow(0);
    QFont titleFont = font();
    titleFont.setBold(true);
    m_title = new QCPTextElement(m_plot, QString(), titleFont);
    m_plot->plotLayout()->addElement(0, 0, m_title);
    m_plot->yAxis2->setVisible(true);
    m_plot->yAxis2->setLabel(QStringLiteral("speedup (×)"));
    for (QCPAxis* axis : {m_plot->xAxis, m_plot->yAxis, m_plot->yAxis2})
        axis->grid()->setPen(QPen(Qt::lightGray, 0, Qt::SolidLine)); // coloured by applyTheme
    m_plot->yAxis2->grid()->setVisible(false);

    m_makespanGraph = m_plot->addGraph(m_plot->xAxis, m_plot->yAxis);
    m_makespanGraph->setName(QStringLiteral("makespan (left)"));
    m_relativeGraph = m_plot->addGraph(m_plot->xAxis, m_plot->yAxis2);
    m_relativeGraph->setName(QStringLiteral("speedup vs the first value (right)"));
    m_speedupGraph = m_plot->addGraph(m_plot->xAxis, m_plot->yAxis2);
    m_speedupGraph->setName(QStringLiteral("speedup over serialized work (right)"));
    m_failedGraph = m_plot->addGraph(m_plot->xAxis, m_plot->yAxis);
    m_failedGraph->setName(QStringLiteral("failed"));
    m_failedGraph->setLineStyle(QCPGraph::lsNone);
    m_failedGraph->removeFromLegend();
    for (QCPGraph* g : {m_makespanGraph, m_relativeGraph, m_speedupGraph, m_failedGraph})
        g->setSelectable(QCP::stNone);

    // The legend in a row of its own under the axes, so that it never hides a point.
    m_plot->legend->setVisible(true);
    m_plot->axisRect()->insetLayout()->take(m_plot->legend);
    m_plot->plotLayout()->addElement(2, 0, m_plot->legend);
    m_plot->plotLayout()->setRowStretchFactor(0, 0.001);
    m_plot->plotLayout()->setRowStretchFactor(2, 0.001);
    m_plot->legend->setFillOrder(QCPLegend::foColumnsFirst);
    m_plot->legend->setBorderPen(Qt::NoPen);
    m_plot->legend->setBrush(Qt::NoBrush);
    m_plot->legend->setColumnSpacing(16);
    m_plot->legend->setMargins(QMargins(4, 0, 4, 2));
    connect(m_plot, &QCustomPlot::beforeReplot, this, &SweepView::fitLegend);
    applyPlotColours();

    m_plot->setMouseTracking(true);
    connect(m_plot, &QCustomPlot::mouseMove, this, [this](QMouseEvent* event) {
        const int i = pointNear(event->pos(), 24);
        if (i >= 0)
            QToolTip::showText(event->globalPosition().toPoint(), pointText(i), m_plot);
        else
            QToolTip::hideText();
    });
    connect(m_plot, &QCustomPlot::mouseDoubleClick, this, [this](QMouseEvent* event) {
        const int i = pointNear(event->pos(), 24);
        if (i >= 0)
            Q_EMIT pointActivated(i);
    });
    m_plot->setToolTip(QString());
}

// The table: one row per value, in the order swept.
void SweepView::createTable()
{
    m_table = new QTableWidget(0, 6);
    m_table->setObjectName(QStringLiteral("sweepTable"));
    m_table->setHorizontalHeaderLabels({QStringLiteral("Value"), QStringLiteral("Makespan"), QStringLiteral("vs first"),
                                        QStringLiteral("vs serial"), QStringLiteral("At once"),
                                        QStringLiteral("Note")});
    m_table->horizontalHeaderItem(2)->setToolTip(QStringLiteral("Speedup vs the first value: its makespan / this one"));
    m_table->horizontalHeaderItem(3)->setToolTip(QStringLiteral(
        "Speedup over serialized work: GPU work / makespan, how much faster than the same operations one by one"));
    m_table->horizontalHeaderItem(4)->setToolTip(QStringLiteral("The most GPU operations that ran at once"));
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->setAlternatingRowColors(true);
    m_table->verticalHeader()->hide();
    m_table->verticalHeader()->setDefaultSectionSize(m_table->fontMetrics().height() + 6);
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_table->horizontalHeader()->setSectionResizeMode(5, QHeaderView::Stretch);
    m_table->setWordWrap(false);
    // The table is kept wide enough for its numbers (rebuildTable); a long note is elided, its tooltip has it all.
    m_table->setHorizontalScrollBarPolicy(Qt::ScrollBarAsNeeded);
    m_table->setMinimumWidth(160);
    m_table->setToolTip(QStringLiteral("Double-click a row to see that point's timeline"));
    connect(m_table, &QTableWidget::cellDoubleClicked, this, [this](int row, int) {
        if (row >= 0 && row < int(m_points.size()))
            Q_EMIT pointActivated(row);
    });
}

// What the controls do: a changed knob, thread, backend or value reruns the sweep (after a pause, while typing);
// the tick shows a GPU sweep's progress.
void SweepView::connectControls()
{
    m_valuesEdit->setText(formatValues(defaultSweepValues(SweepKnob::Streams)));
    connect(m_knobBox, &QComboBox::currentIndexChanged, this, &SweepView::onKnobChanged);
    connect(m_threadBox, &QComboBox::activated, this, &SweepView::scheduleRerun);
    connect(m_backendBox, &QComboBox::activated, this, [this] {
        updateControls();
        scheduleRerun();
    });
    connect(m_followBox, &QCheckBox::toggled, this, [this](bool on) {
        if (on && m_stale)
            scheduleRerun();
    });
    connect(m_valuesEdit, &QLineEdit::returnPressed, this, &SweepView::run);
    connect(m_runButton, &QPushButton::clicked, this, &SweepView::run);
    connect(m_cancelButton, &QPushButton::clicked, this, &SweepView::cancel);
    m_rerunTimer->setSingleShot(true);
    m_rerunTimer->setInterval(200);
    connect(m_rerunTimer, &QTimer::timeout, this, [this] {
        if (m_state == State::Running && m_sweptBackend == RunBackend::Gpu)
            return;
        run();
    });
    m_tick->setInterval(250);
    connect(m_tick, &QTimer::timeout, this, [this] {
        if (m_state != State::Running || m_sweptBackend != RunBackend::Gpu)
            return;
        const QString done =
            m_gpuProgress.isEmpty() ? QStringLiteral("starting… ") : m_gpuProgress + QStringLiteral(", ");
        setMessage(QStringLiteral("GPU: %1%2 s").arg(done).arg(double(m_clock.elapsed()) / 1000.0, 0, 'f', 1));
    });
}

SweepView::~SweepView()
{
    ++m_generation;
    if (m_simCancel)
        m_simCancel->store(true);
    if (m_process) {
        m_process->disconnect(this);
        m_process->kill();
        m_process->waitForFinished(3000);
    }
}

// ---- settings --------------------------------------------------------------------------------------------------

void SweepView::setRunController(RunController* runner)
{
    if (m_runner)
        m_runner->disconnect(this);
    m_runner = runner;
    if (runner)
        connect(runner, &RunController::gpuStatusChanged, this, &SweepView::updateGpuChoice);
    updateGpuChoice();
}

SweepKnob SweepView::knob() const
{
    return SweepKnob(m_knobBox->currentData().toInt());
}

void SweepView::setKnob(SweepKnob k)
{
    m_knobBox->setCurrentIndex(m_knobBox->findData(int(k)));
}

QString SweepView::valuesText() const
{
    return m_valuesEdit->text();
}

void SweepView::setValuesText(const QString& text)
{
    m_valuesEdit->setText(text);
}

int SweepView::thread() const
{
    if (knob() == SweepKnob::Streams)
        return -1;
    return m_threadBox->currentData().toInt();
}

void SweepView::setThread(int t)
{
    const int i = m_threadBox->findData(t);
    m_threadBox->setCurrentIndex(i >= 0 ? i : 0);
}

RunBackend SweepView::backend() const
{
    return RunBackend(m_backendBox->currentData().toInt());
}

bool SweepView::setBackend(RunBackend b)
{
    if (b == RunBackend::Gpu && !(m_runner && m_runner->gpuStatus().state == GpuStatus::State::Usable))
        return false;
    m_backendBox->setCurrentIndex(m_backendBox->findData(int(b)));
    updateControls();
    return true;
}

bool SweepView::followsEdits() const
{
    return m_followBox->isChecked();
}

void SweepView::setFollowEdits(bool on)
{
    m_followBox->setChecked(on);
}

void SweepView::onKnobChanged()
{
    // Each knob keeps its own values: streams 1..16 make no sense as kernel sizes.
    m_valuesByKnob[int(m_shownKnob)] = m_valuesEdit->text();
    m_shownKnob = knob();
    const auto it = m_valuesByKnob.constFind(int(m_shownKnob));
    m_valuesEdit->setText(it != m_valuesByKnob.constEnd() ? *it : formatValues(defaultSweepValues(m_shownKnob)));
    updateControls();
    scheduleRerun();
}

void SweepView::updateThreads()
{
    const int current = m_threadBox->count() > 0 ? m_threadBox->currentData().toInt() : -1;
    m_threadBox->clear();
    m_threadBox->addItem(QStringLiteral("every thread"), -1);
    if (m_scenario)
        for (size_t t = 0; t < m_scenario->threads.size(); ++t) {
            const auto& th = m_scenario->threads[t];
            m_threadBox->addItem(
                QStringLiteral("%1: %2").arg(t).arg(th.name.empty() ? QStringLiteral("thread") : qs(th.name)), int(t));
        }
    const int i = m_threadBox->findData(current);
    m_threadBox->setCurrentIndex(i >= 0 ? i : 0);
}

void SweepView::updateGpuChoice()
{
    const int gpuRow = m_backendBox->findData(int(RunBackend::Gpu));
    const GpuStatus gpu = m_runner ? m_runner->gpuStatus() : GpuStatus{};
    const QString text = gpuChoiceText(gpu);
    const bool usable = gpu.state == GpuStatus::State::Usable;
    m_backendBox->setItemText(gpuRow, text);
    m_backendBox->setItemData(gpuRow,
                              gpu.state == GpuStatus::State::Unusable
                                  ? QStringLiteral("No usable GPU: ") + gpu.description
                                  : QStringLiteral("One run of streamscope-cli per value, on the GPU, timed as the "
                                                   "toolbar's Timing choice says"),
                              Qt::ToolTipRole);
    if (auto* model = qobject_cast<QStandardItemModel*>(m_backendBox->model()))
        if (QStandardItem* item = model->item(gpuRow))
            item->setEnabled(usable);
    if (!usable && backend() == RunBackend::Gpu)
        m_backendBox->setCurrentIndex(m_backendBox->findData(int(RunBackend::Simulator)));
    updateControls();
}

void SweepView::updateControls()
{
    const bool running = m_state == State::Running;
    m_threadBox->setEnabled(knob() != SweepKnob::Streams && m_threadBox->count() > 1);
    m_followBox->setEnabled(backend() == RunBackend::Simulator);
    m_runButton->setEnabled(!running);
    m_cancelButton->setEnabled(running);
    m_progressBar->setVisible(running);
}

// ---- values ----------------------------------------------------------------------------------------------------

SweepValues SweepView::parseValues(const QString& text, SweepKnob k)
{
    SweepValues out;
    static const QRegularExpression separators(QStringLiteral("[,;\\s]+"));
    static const QRegularExpression range(QStringLiteral("^(.+?)\\.\\.(.+)$"));
    const QStringList tokens = text.split(separators, Qt::SkipEmptyParts);
    const QString example = QStringLiteral("Enter values such as 1, 2, 4 or a range such as 1..16.");
    if (tokens.isEmpty()) {
        out.error = QStringLiteral("No values to sweep. ") + example;
        return out;
    }
    const QLocale c = QLocale::c();
    auto number = [&](QString token, double* v) {
        if (token.endsWith(QLatin1Char('x')) || token.endsWith(QStringLiteral("×")))
            token.chop(1);
        bool ok = false;
        *v = c.toDouble(token, &ok);
        if (!ok || !std::isfinite(*v)) {
            out.error = QStringLiteral("“%1” is not a number. ").arg(token) + example;
            return false;
        }
        return true;
    };
    std::vector<double> values;
    for (const QString& token : tokens) {
        if (const auto m = range.match(token); m.hasMatch()) {
            double a = 0, b = 0;
            if (!number(m.captured(1), &a) || !number(m.captured(2), &b))
                return out;
            if (!isWhole(a) || !isWhole(b) || a > b) {
                out.error = QStringLiteral("“%1” is not a range: a..b takes whole numbers, the smaller first "
                                           "(1..16).")
                                .arg(token);
                return out;
            }
            if (b - a + 1 > kMaxValues) {
                out.error = QStringLiteral("At most %1 values at a time; “%2” has %3.")
                                .arg(kMaxValues)
                                .arg(token)
                                .arg(qint64(b - a + 1));
                return out;
            }
            for (double v = a; v <= b; v += 1)
                values.push_back(v);
            continue;
        }
        double v = 0;
        if (!number(token, &v))
            return out;
        values.push_back(v);
    }
    std::vector<double> unique;
    std::set<double> seen;
    for (double v : values) {
        if (!(v > 0)) {
            out.error = QStringLiteral("Values must be greater than 0; %1 is not.").arg(valueText(v));
            return out;
        }
        if (k != SweepKnob::KernelSize && !isWhole(v)) {
            out.error =
                QStringLiteral("The number of %1 must be a whole number; %2 is not.")
                    .arg(k == SweepKnob::Streams ? QStringLiteral("streams") : QStringLiteral("chunks"), valueText(v));
            return out;
        }
        if (k == SweepKnob::Streams && v > kMaxStreams) {
            out.error = QStringLiteral("At most %1 streams; %2 is too many.")
                            .arg(QString::number(qint64(kMaxStreams)), valueText(v));
            return out;
        }
        if (k == SweepKnob::Chunks && v > kMaxChunks) {
            out.error = QStringLiteral("At most %1 chunks; %2 is too many.")
                            .arg(QString::number(qint64(kMaxChunks)), valueText(v));
            return out;
        }
        if (seen.insert(v).second)
            unique.push_back(v);
    }
    if (int(unique.size()) > kMaxValues) {
        out.error = QStringLiteral("At most %1 values at a time (got %2).").arg(kMaxValues).arg(unique.size());
        return out;
    }
    out.values = std::move(unique);
    return out;
}

QString SweepView::formatValues(const std::vector<double>& values)
{
    QStringList parts;
    for (size_t i = 0; i < values.size();) {
        size_t j = i;
        while (j + 1 < values.size() && isWhole(values[i]) && values[j + 1] == values[j] + 1)
            ++j;
        if (j - i >= 2) {
            parts << valueText(values[i]) + QStringLiteral("..") + valueText(values[j]);
            i = j + 1;
        } else {
            parts << valueText(values[i]);
            ++i;
        }
    }
    return parts.join(QStringLiteral(", "));
}

std::optional<std::vector<SweepPoint>> SweepView::parseSweepJson(const QByteArray& json, QString* error)
{
    QJsonParseError parseError;
    const QJsonDocument doc = QJsonDocument::fromJson(json, &parseError);
    auto fail = [error](const QString& message) {
        if (error)
            *error = message;
        return std::nullopt;
    };
    if (doc.isNull())
        return fail(QStringLiteral("the sweep's output is not JSON: ") + parseError.errorString());
    const QJsonValue list = doc.object().value(QStringLiteral("points"));
    if (!doc.isObject() || !list.isArray())
        return fail(QStringLiteral("the sweep's output has no \"points\" list"));
    std::vector<SweepPoint> points;
    const QJsonArray array = list.toArray();
    for (const QJsonValue& v : array) {
        const QJsonObject o = v.toObject();
        if (!o.value(QStringLiteral("value")).isDouble())
            return fail(QStringLiteral("a point of the sweep's output has no \"value\""));
        SweepPoint p;
        p.value = o.value(QStringLiteral("value")).toDouble();
        if (o.contains(QStringLiteral("error"))) {
            p.error = o.value(QStringLiteral("error")).toString().toStdString();
            if (p.error.empty())
                p.error = "failed";
        } else {
            p.makespanNs = int64_t(o.value(QStringLiteral("makespan_ns")).toDouble());
            p.speedup = o.value(QStringLiteral("speedup")).toDouble();
            p.relativeSpeedup = o.value(QStringLiteral("relative_speedup")).toDouble();
            p.maxConcurrency = o.value(QStringLiteral("max_concurrency")).toInt();
            p.gpuWorkNs = int64_t(o.value(QStringLiteral("gpu_work_ns")).toDouble());
        }
        points.push_back(std::move(p));
    }
    return points;
}

// ---- scenario --------------------------------------------------------------------------------------------------

void SweepView::setScenario(std::shared_ptr<const Scenario> scenario)
{
    if (scenario == m_scenario)
        return;
    m_scenario = std::move(scenario);
    updateThreads();
    updateControls();
    if (m_swept || isRunning()) {
        m_stale = true;
        scheduleRerun();
        if (m_stale && m_state != State::Running)
            setMessage(summary());
    }
}

void SweepView::scheduleRerun()
{
    // Only what is instant runs by itself: a simulator sweep, of a valid scenario, that was quick last time.
    if (!m_followBox->isChecked() || backend() != RunBackend::Simulator || !m_scenario || !isVisible())
        return;
    if (m_state == State::Running && m_sweptBackend == RunBackend::Gpu)
        return;
    if (m_lastSimMs >= m_quickSweepMs)
        return;
    m_rerunTimer->start();
}

// The chart in the theme's colours (Okabe–Ito series, as on the timeline): makespan blue, the speedups vermillion and
// green, failures red.
void SweepView::applyPlotColours()
{
    const Theme& t = Theme::of(this);
    applyPlotTheme(*m_plot, t);
    const QColor makespanText = t.isDark ? t.seriesBlue.lighter(115) : t.seriesBlue.darker(120);
    m_plot->yAxis->setLabelColor(makespanText);
    m_plot->yAxis->setTickLabelColor(makespanText);
    m_makespanGraph->setPen(QPen(t.seriesBlue, 2.2));
    m_makespanGraph->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, t.seriesBlue, t.plotBackground, 8));
    // Wider than the serialized-work line drawn over it: the two often coincide, and both must stay visible.
    m_relativeGraph->setPen(QPen(t.seriesOrange, 4.0));
    m_relativeGraph->setScatterStyle(
        QCPScatterStyle(QCPScatterStyle::ssSquare, QPen(t.seriesOrange, 2.0), QBrush(t.plotBackground), 10));
    m_speedupGraph->setPen(QPen(t.seriesGreen, 2.0, Qt::DashLine));
    m_speedupGraph->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssTriangle, t.seriesGreen, t.plotBackground, 8));
    m_failedGraph->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCross, QPen(t.seriesRed, 2.5), Qt::NoBrush, 12));
}

void SweepView::changeEvent(QEvent* event)
{
    QWidget::changeEvent(event);
    if (!isThemeChange(event) || !m_plot || !m_table)
        return;
    applyPlotColours();
    setMessage(m_messageLabel->text(), m_messageError);
    rebuildTable();
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

bool SweepView::event(QEvent* event)
{
    // In a scroll area the view is never narrower than its minimum, so its own width cannot say that the column is
    // narrow: the viewport's can.
    switch (event->type()) {
    case QEvent::ParentAboutToChange:
        if (parentWidget())
            parentWidget()->removeEventFilter(this);
        break;
    case QEvent::ParentChange:
        if (parentWidget()) {
            parentWidget()->installEventFilter(this);
            arrangeFor(parentWidget()->width());
        }
        break;
    case QEvent::Resize:
        if (!parentWidget())
            arrangeFor(width());
        break;
    default: break;
    }
    return QWidget::event(event);
}

bool SweepView::eventFilter(QObject* watched, QEvent* event)
{
    if (watched == parentWidget() && event->type() == QEvent::Resize)
        arrangeFor(parentWidget()->width());
    return QWidget::eventFilter(watched, event);
}

void SweepView::arrangeFor(int width)
{
    const bool stacked = width < kSideBySideWidth;
    if (stacked == m_stacked || !m_layout)
        return;
    m_stacked = stacked;
    m_layout->setDirection(stacked ? QBoxLayout::TopToBottom : QBoxLayout::LeftToRight);
    m_splitter->setOrientation(stacked ? Qt::Vertical : Qt::Horizontal);
}

void SweepView::showEvent(QShowEvent* event)
{
    QWidget::showEvent(event);
    if (m_stale || (!m_swept && m_state == State::Idle))
        scheduleRerun();
}

Result<Scenario> SweepView::scenarioForPoint(int index) const
{
    if (!m_swept || index < 0 || index >= int(m_points.size()))
        return Error{{}, {}, "no such point of the sweep"};
    return sweepScenario(*m_swept, m_spec.knob, m_points[size_t(index)].value, m_spec.thread, m_spec.keepTotalWork);
}

} // namespace streamscope
