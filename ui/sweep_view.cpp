#include "sweep_view.h"

#include "device_profile.h"
#include "format.h"
#include "scenario_json.h"
#include "simulator.h"
#include "trace_json.h"

#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
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

namespace {

// The most values one sweep takes: each is a full run, and the plot's labels must stay readable.
constexpr int kMaxValues = 256;
// The limits of the core's rewrites (analysis.cpp), checked here so that the message comes before any run.
constexpr double kMaxStreams = 4096;
constexpr double kMaxChunks = 1'000'000;

// Okabe–Ito colours, as on the timeline.
const QColor kMakespanColour(0, 114, 178);
const QColor kRelativeColour(213, 94, 0);
const QColor kSpeedupColour(0, 158, 115);
const QColor kErrorColour(204, 0, 0);

QString valueText(double v)
{
    return QString::number(v, 'g', 10);
}

QString speedupText(double s)
{
    return QString::number(s, 'f', s < 10 ? 2 : 1) + QStringLiteral("×");
}

bool isWhole(double v)
{
    return std::fabs(v - std::round(v)) < 1e-9;
}

// The makespan axis' unit for a largest makespan: ns per unit and its name.
std::pair<double, QString> makespanUnit(double maxNs)
{
    if (maxNs < 1e6)
        return {1e3, QStringLiteral("µs")};
    if (maxNs < 1e9)
        return {1e6, QStringLiteral("ms")};
    return {1e9, QStringLiteral("s")};
}

QTableWidgetItem* cell(const QString& text, Qt::Alignment align = Qt::AlignRight | Qt::AlignVCenter)
{
    auto* item = new QTableWidgetItem(text);
    item->setTextAlignment(align);
    item->setFlags(Qt::ItemIsSelectable | Qt::ItemIsEnabled);
    return item;
}

} // namespace

SweepView::SweepView(QWidget* parent)
    : QWidget(parent), m_rerunTimer(new QTimer(this)), m_tick(new QTimer(this))
{
    setObjectName(QStringLiteral("sweepView"));

    // ---- controls
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

    // ---- plot: makespan on the left axis, the two speedups on the right, one column per value
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
    m_plot->yAxis->setLabelColor(kMakespanColour.darker(120));
    m_plot->yAxis->setTickLabelColor(kMakespanColour.darker(120));
    m_plot->yAxis2->setLabel(QStringLiteral("speedup (×)"));
    for (QCPAxis* axis : {m_plot->xAxis, m_plot->yAxis, m_plot->yAxis2})
        axis->grid()->setPen(QPen(QColor(0xE4, 0xE4, 0xE4), 0, Qt::SolidLine));
    m_plot->yAxis2->grid()->setVisible(false);

    m_makespanGraph = m_plot->addGraph(m_plot->xAxis, m_plot->yAxis);
    m_makespanGraph->setName(QStringLiteral("makespan (left)"));
    m_makespanGraph->setPen(QPen(kMakespanColour, 2.2));
    m_makespanGraph->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, kMakespanColour, Qt::white, 8));
    m_relativeGraph = m_plot->addGraph(m_plot->xAxis, m_plot->yAxis2);
    m_relativeGraph->setName(QStringLiteral("speedup vs the first value (right)"));
    // Wider than the serialized-work line drawn over it: the two often coincide, and both must stay visible.
    m_relativeGraph->setPen(QPen(kRelativeColour, 4.0));
    m_relativeGraph->setScatterStyle(
        QCPScatterStyle(QCPScatterStyle::ssSquare, QPen(kRelativeColour, 2.0), Qt::white, 10));
    m_speedupGraph = m_plot->addGraph(m_plot->xAxis, m_plot->yAxis2);
    m_speedupGraph->setName(QStringLiteral("speedup over serialized work (right)"));
    m_speedupGraph->setPen(QPen(kSpeedupColour, 2.0, Qt::DashLine));
    m_speedupGraph->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssTriangle, kSpeedupColour, Qt::white, 8));
    m_failedGraph = m_plot->addGraph(m_plot->xAxis, m_plot->yAxis);
    m_failedGraph->setName(QStringLiteral("failed"));
    m_failedGraph->setLineStyle(QCPGraph::lsNone);
    m_failedGraph->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCross, QPen(kErrorColour, 2.5), Qt::NoBrush, 12));
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

    // ---- table: one row per value, in the order swept
    m_table = new QTableWidget(0, 6);
    m_table->setObjectName(QStringLiteral("sweepTable"));
    m_table->setHorizontalHeaderLabels({QStringLiteral("Value"), QStringLiteral("Makespan"),
                                        QStringLiteral("vs first"), QStringLiteral("vs serial"),
                                        QStringLiteral("At once"), QStringLiteral("Note")});
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

    auto* splitter = new QSplitter(Qt::Horizontal);
    splitter->setChildrenCollapsible(false);
    splitter->addWidget(m_plot);
    splitter->addWidget(m_table);
    splitter->setStretchFactor(0, 3);
    splitter->setStretchFactor(1, 2);

    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(6, 6, 6, 6);
    layout->setSpacing(10);
    layout->addWidget(controls);
    layout->addWidget(splitter, 1);

    // ---- behaviour
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

    updateThreads();
    updateGpuChoice();
    rebuildPlot();
    rebuildTable();
    updateControls();
    setMessage(QStringLiteral("Choose a knob and its values, then Run Sweep. Each value is a full run of the "
                              "scenario with that knob changed."));
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
            m_threadBox->addItem(QStringLiteral("%1: %2").arg(t).arg(th.name.empty() ? QStringLiteral("thread")
                                                                                      : qs(th.name)),
                                 int(t));
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
            out.error = QStringLiteral("The number of %1 must be a whole number; %2 is not.")
                            .arg(k == SweepKnob::Streams ? QStringLiteral("streams") : QStringLiteral("chunks"),
                                 valueText(v));
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

// ---- running ---------------------------------------------------------------------------------------------------

void SweepView::setState(State state)
{
    const bool wasRunning = m_state == State::Running;
    m_state = state;
    updateControls();
    if (state == State::Running)
        m_tick->start();
    else
        m_tick->stop();
    if (wasRunning != (state == State::Running))
        Q_EMIT runningChanged(state == State::Running);
}

void SweepView::setMessage(const QString& text, bool error)
{
    m_messageLabel->setText(text);
    m_messageLabel->setStyleSheet(error ? QStringLiteral("color:#8e1c1c; background:#fdecea; border:1px solid #e57373; "
                                                         "padding:4px;")
                                        : QString());
}

QString SweepView::message() const
{
    return m_messageLabel->text();
}

void SweepView::fail(const QString& message)
{
    setState(State::Failed);
    setMessage(message, true);
    Q_EMIT failed(message);
}

void SweepView::run()
{
    m_rerunTimer->stop();
    // A sweep in progress is superseded.
    ++m_generation;
    if (m_simCancel)
        m_simCancel->store(true);
    stopProcess();

    const SweepValues values = parseValues(m_valuesEdit->text(), knob());
    if (!values.ok()) {
        fail(values.error);
        return;
    }
    if (!m_scenario) {
        fail(QStringLiteral("The scenario has an error; fix it in the editor before sweeping."));
        return;
    }
    if (knob() != SweepKnob::Streams && m_threadBox->currentData().toInt() >= int(m_scenario->threads.size()))
        setThread(-1);

    m_spec = SweepSpec{};
    m_spec.knob = knob();
    m_spec.values = values.values;
    m_spec.thread = thread();
    m_swept = m_scenario;
    m_sweptBackend = backend();
    m_points.clear();
    m_stale = false;
    m_clock.start();
    m_progressBar->setRange(0, int(m_spec.values.size()));
    m_progressBar->setValue(0);
    setState(State::Running);
    rebuildPlot();
    rebuildTable();
    Q_EMIT started(m_sweptBackend);
    if (m_sweptBackend == RunBackend::Gpu)
        startGpu();
    else
        startSimulation();
}

void SweepView::cancel()
{
    if (m_state != State::Running)
        return;
    m_rerunTimer->stop();
    ++m_generation;
    if (m_simCancel)
        m_simCancel->store(true);
    stopProcess();
    setState(State::Cancelled);
    setMessage(QStringLiteral("Sweep cancelled after %1 of %2 values.").arg(m_points.size()).arg(m_spec.values.size()));
    Q_EMIT cancelled();
}

// ---- simulator -------------------------------------------------------------------------------------------------

void SweepView::startSimulation()
{
    const quint64 generation = m_generation;
    auto cancelFlag = std::make_shared<std::atomic<bool>>(false);
    m_simCancel = cancelFlag;
    const QString profile = m_runner ? m_runner->profileId() : QString();
    const SweepSpec spec = m_spec;
    const std::shared_ptr<const Scenario> scenario = m_swept;
    QPointer<SweepView> self(this);
    setMessage(QStringLiteral("Simulating…"));
    QThread* worker = QThread::create([self, scenario, spec, profile, cancelFlag, generation] {
        auto post = [self](auto fn) { QMetaObject::invokeMethod(qApp, std::move(fn), Qt::QueuedConnection); };
        SimulatorOptions options;
        if (!profile.isEmpty()) {
            auto found = findDeviceProfile(profile.toStdString());
            if (!found) {
                const QString message = qs(found.error().toString());
                post([self, generation, message] {
                    if (self && generation == self->m_generation)
                        self->fail(QStringLiteral("Simulator profile: ") + message);
                });
                return;
            }
            options.profile = std::move(found).value();
        }
        // One value at a time, so that the plot fills in as the sweep goes.
        for (size_t i = 0; i < spec.values.size(); ++i) {
            if (cancelFlag->load())
                return;
            SweepSpec one = spec;
            one.values = {spec.values[i]};
            const std::vector<SweepPoint> result = runSweep(*scenario, one, options, cancelFlag.get());
            if (cancelFlag->load())
                return;
            SweepPoint point;
            point.value = spec.values[i];
            if (result.empty())
                point.error = "not simulated";
            else
                point = result.front();
            post([self, generation, i, point] {
                if (self)
                    self->addSimulatedPoint(generation, int(i), point);
            });
        }
        post([self, generation] {
            if (!self || generation != self->m_generation)
                return;
            self->m_lastSimMs = double(self->m_clock.nsecsElapsed()) / 1e6;
            self->finishSweep(QStringLiteral("Simulated %1 values in %2.")
                                  .arg(self->m_points.size())
                                  .arg(formatNs(self->m_lastSimMs * 1e6)));
        });
    });
    connect(worker, &QThread::finished, worker, &QObject::deleteLater);
    worker->start();
}

void SweepView::addSimulatedPoint(quint64 generation, int index, const SweepPoint& point)
{
    if (generation != m_generation || index != int(m_points.size()))
        return;
    m_points.push_back(point);
    setRelativeSpeedups(m_points);
    const int total = int(m_spec.values.size());
    m_progressBar->setValue(int(m_points.size()));
    const QString text = QStringLiteral("Simulating… %1 of %2").arg(m_points.size()).arg(total);
    setMessage(text);
    Q_EMIT progress(int(m_points.size()), total, text);
    rebuildPlot();
    rebuildTable();
}

void SweepView::finishSweep(const QString& summaryPrefix)
{
    setRelativeSpeedups(m_points);
    setState(State::Finished);
    rebuildPlot();
    rebuildTable();
    setMessage(summaryPrefix + QLatin1Char(' ') + summary());
    Q_EMIT finished();
}

QString SweepView::summary() const
{
    QStringList parts;
    int best = -1, errors = 0;
    for (size_t i = 0; i < m_points.size(); ++i) {
        const auto& p = m_points[i];
        if (!p.error.empty()) {
            ++errors;
            continue;
        }
        if (best < 0 || p.makespanNs < m_points[size_t(best)].makespanNs)
            best = int(i);
    }
    if (best >= 0) {
        const auto& p = m_points[size_t(best)];
        parts << QStringLiteral("Fastest: %1 = %2, %3 (%4 the first value).")
                     .arg(qs(toString(m_spec.knob)), valueText(p.value), formatNs(double(p.makespanNs)),
                          speedupText(p.relativeSpeedup));
    }
    if (errors > 0) {
        const auto failed =
            std::find_if(m_points.begin(), m_points.end(), [](const SweepPoint& p) { return !p.error.empty(); });
        parts << QStringLiteral("%1 of %2 values failed (the table says why), %3 = %4: %5")
                     .arg(errors)
                     .arg(m_points.size())
                     .arg(qs(toString(m_spec.knob)), valueText(failed->value), qs(failed->error));
    }
    if (m_stale)
        parts << QStringLiteral("The scenario has changed since this sweep: Run Sweep to update it.");
    return parts.join(QLatin1Char(' '));
}

// ---- GPU through streamscope-cli -------------------------------------------------------------------------------

void SweepView::startGpu()
{
    const QString cli = m_runner ? m_runner->cliPath() : QString();
    if (cli.isEmpty() || !QFileInfo(cli).isExecutable()) {
        fail(QStringLiteral("streamscope-cli was not found next to the app (%1).").arg(cli));
        return;
    }
    m_tmp = std::make_unique<QTemporaryDir>();
    if (!m_tmp->isValid()) {
        fail(QStringLiteral("Could not create a temporary directory: ") + m_tmp->errorString());
        return;
    }
    const QString scenarioPath = m_tmp->filePath(QStringLiteral("sweep-scenario.json"));
    if (Status s = saveTextFileAtomic(scenarioPath.toStdString(), scenarioToJson(*m_swept)); !s) {
        fail(qs(s.error().toString()));
        return;
    }
    QStringList values;
    for (double v : m_spec.values)
        values << QString::number(v, 'g', 12);
    QStringList args{QStringLiteral("sweep"), scenarioPath, QStringLiteral("--knob"), qs(toString(m_spec.knob)),
                     QStringLiteral("--values"), values.join(QLatin1Char(',')), QStringLiteral("--backend"),
                     QStringLiteral("cuda"), QStringLiteral("--json")};
    if (m_spec.thread >= 0)
        args << QStringLiteral("--thread") << QString::number(m_spec.thread);
    // Timed as the window's GPU runs are (the toolbar's Timing choice).
    args << timingArguments(m_runner ? m_runner->timingMode() : TimingMode::Auto);

    auto* process = new QProcess(this);
    m_process = process;
    m_stderr.clear();
    m_gpuProgress.clear();
    m_gpuDone = 0;
    process->setProgram(cli);
    process->setArguments(args);
    connect(process, &QProcess::readyReadStandardError, this, [this, process] {
        if (process == m_process)
            gpuReadStderr();
    });
    connect(process, &QProcess::finished, this, [this, process](int code, QProcess::ExitStatus status) {
        if (process == m_process)
            gpuFinished(code, status);
    });
    connect(process, &QProcess::errorOccurred, this, [this, process](QProcess::ProcessError error) {
        if (process != m_process || error != QProcess::FailedToStart)
            return;
        m_process = nullptr;
        process->deleteLater();
        m_tmp.reset();
        fail(QStringLiteral("Could not start %1: %2").arg(process->program(), process->errorString()));
    });
    setMessage(QStringLiteral("GPU: starting…"));
    process->start();
}

void SweepView::gpuReadStderr()
{
    m_stderr += m_process->readAllStandardError();
    // "sweep I/N: knob = v on BACKEND" lines are the progress (run I of N has started); the rest is kept for errors.
    static const QRegularExpression progressLine(QStringLiteral("^sweep (\\d+)/(\\d+): (.*?)(?: on (.+))?$"));
    qsizetype start = 0;
    QByteArray rest;
    for (qsizetype nl = m_stderr.indexOf('\n'); nl >= 0; start = nl + 1, nl = m_stderr.indexOf('\n', start)) {
        const QByteArray line = m_stderr.mid(start, nl - start);
        const auto m = progressLine.match(QString::fromUtf8(line).trimmed());
        if (!m.hasMatch()) {
            rest += line + '\n';
            continue;
        }
        const int i = m.captured(1).toInt();
        const int n = m.captured(2).toInt();
        m_gpuDone = std::max(0, i - 1);
        m_gpuProgress = QStringLiteral("%1 (run %2 of %3)").arg(m.captured(3)).arg(i).arg(n);
        if (!m.captured(4).isEmpty())
            m_gpuProgress += QStringLiteral(" on ") + m.captured(4);
        if (n > 0 && n != m_progressBar->maximum())
            m_progressBar->setRange(0, n);
        m_progressBar->setValue(m_gpuDone);
        const QString text = QStringLiteral("GPU: ") + m_gpuProgress;
        setMessage(text + QStringLiteral(", %1 s").arg(double(m_clock.elapsed()) / 1000.0, 0, 'f', 1));
        Q_EMIT progress(m_gpuDone, n, text);
    }
    m_stderr = rest + m_stderr.mid(start);
}

void SweepView::gpuFinished(int exitCode, QProcess::ExitStatus status)
{
    QProcess* process = m_process;
    m_process = nullptr;
    m_stderr += process->readAllStandardError();
    const QByteArray out = process->readAllStandardOutput();
    const QByteArray err = m_stderr;
    m_stderr.clear();
    process->deleteLater();
    m_tmp.reset();
    if (status == QProcess::CrashExit) {
        fail(QStringLiteral("streamscope-cli crashed during the sweep. ") + cliErrorMessage(err));
        return;
    }
    // Exit code 3 with points: some values failed on the GPU (each point says why); without points: a GPU error.
    QString parseError;
    std::optional<std::vector<SweepPoint>> points;
    if (exitCode == 0 || exitCode == 3)
        points = parseSweepJson(out, &parseError);
    if (!points) {
        const QString reason = cliErrorMessage(err);
        const QString what = exitCode == 2   ? QStringLiteral("Bad input")
                             : exitCode == 3 ? QStringLiteral("GPU error")
                             : exitCode == 0 ? QStringLiteral("Could not read the sweep")
                                             : QStringLiteral("streamscope-cli failed (exit code %1)").arg(exitCode);
        fail(what + QStringLiteral(": ") +
             (reason.isEmpty() ? (parseError.isEmpty() ? QStringLiteral("no message") : parseError) : reason));
        return;
    }
    m_points = std::move(*points);
    setRelativeSpeedups(m_points);
    m_progressBar->setValue(m_progressBar->maximum());
    finishSweep(QStringLiteral("Ran %1 values on the GPU in %2.")
                    .arg(m_points.size())
                    .arg(formatNs(double(m_clock.nsecsElapsed()))));
}

void SweepView::stopProcess()
{
    if (!m_process)
        return;
    QProcess* p = m_process;
    m_process = nullptr;
    p->disconnect(this);
    stopChildProcess(p, std::move(m_tmp)); // the scenario file lives until the child has exited
}

// ---- plot and table --------------------------------------------------------------------------------------------

QString SweepView::knobLabel() const
{
    switch (m_spec.knob) {
    case SweepKnob::Streams: return QStringLiteral("streams");
    case SweepKnob::Chunks: return QStringLiteral("chunks (times the thread issues its ops)");
    case SweepKnob::KernelSize: return QStringLiteral("kernel size (× the scenario's)");
    }
    return {};
}

void SweepView::rebuildPlot()
{
    QVector<double> keys, makespans, relative, speedups;
    double maxNs = 0, maxSpeedup = 1;
    for (const auto& p : m_points)
        if (p.error.empty()) {
            maxNs = std::max(maxNs, double(p.makespanNs));
            maxSpeedup = std::max({maxSpeedup, p.speedup, p.relativeSpeedup});
        }
    const auto [unitNs, unitName] = makespanUnit(maxNs);
    QVector<double> failedKeys;
    for (const auto& p : m_points) {
        if (!p.error.empty()) {
            failedKeys << p.value;
            continue;
        }
        keys << p.value;
        makespans << double(p.makespanNs) / unitNs;
        relative << p.relativeSpeedup;
        speedups << p.speedup;
    }
    m_makespanGraph->setData(keys, makespans, true);
    m_relativeGraph->setData(keys, relative, true);
    m_speedupGraph->setData(keys, speedups, true);
    if (failedKeys.isEmpty())
        m_failedGraph->removeFromLegend();
    else
        m_failedGraph->addToLegend();

    // x: the values swept, each labelled; geometric values (1, 2, 4, 8) on a log scale so that they spread evenly.
    std::vector<double> xs = m_spec.values;
    std::sort(xs.begin(), xs.end());
    bool geometric = xs.size() >= 3 && xs.front() > 0;
    for (size_t i = 1; geometric && i < xs.size(); ++i)
        geometric = xs[i] / xs[i - 1] >= 1.45;
    QCPAxis* x = m_plot->xAxis;
    x->setScaleType(geometric ? QCPAxis::stLogarithmic : QCPAxis::stLinear);
    m_tickValues.clear();
    m_tickStride = 0;
    if (!xs.empty() && xs.size() <= 24) {
        m_tickValues = xs; // labelled in fitLegend, as many as fit
        x->setTicker(QSharedPointer<QCPAxisTickerText>::create());
        x->setSubTicks(false);
    } else if (geometric) {
        x->setTicker(QSharedPointer<QCPAxisTickerLog>::create());
        x->setSubTicks(true);
    } else {
        x->setTicker(QSharedPointer<QCPAxisTicker>::create());
        x->setSubTicks(true);
    }
    if (xs.empty()) {
        x->setScaleType(QCPAxis::stLinear);
        x->setRange(0, 1);
    } else if (geometric) {
        x->setRange(xs.front() / 1.25, xs.back() * 1.25);
    } else {
        const double pad = xs.size() > 1 ? 0.05 * (xs.back() - xs.front()) : 0.5;
        x->setRange(xs.front() - pad, xs.back() + pad);
    }
    x->setLabel(m_swept ? knobLabel() : QStringLiteral("knob value"));

    m_plot->yAxis->setLabel(QStringLiteral("makespan (%1)").arg(unitName));
    m_plot->yAxis->setRange(0, maxNs > 0 ? maxNs / unitNs * 1.12 : 1);
    // Failed values: a cross just above the value axis, where no makespan can be.
    const double failedAt = m_plot->yAxis->range().upper * 0.04;
    m_failedGraph->setData(failedKeys, QVector<double>(failedKeys.size(), failedAt), true);
    m_plot->yAxis2->setRange(0, maxSpeedup * 1.12);

    QString title = QStringLiteral("Sweep");
    if (m_swept) {
        const QString name = m_swept->id.empty() ? (m_swept->title.empty() ? QStringLiteral("the scenario")
                                                                             : qs(m_swept->title))
                                                 : qs(m_swept->id);
        title = QStringLiteral("%1 over %2 values of %3, %4")
                    .arg(name)
                    .arg(m_spec.values.size())
                    .arg(qs(toString(m_spec.knob)),
                         m_sweptBackend == RunBackend::Gpu ? QStringLiteral("on the GPU")
                                                           : QStringLiteral("simulated"));
    }
    m_fullTitle = title;
    m_title->setText(title);
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void SweepView::rebuildTable()
{
    m_table->horizontalHeaderItem(0)->setText(m_swept ? qs(toString(m_spec.knob)) : QStringLiteral("Value"));
    m_table->setRowCount(int(m_points.size()));
    int best = -1;
    for (size_t i = 0; i < m_points.size(); ++i)
        if (m_points[i].error.empty() && (best < 0 || m_points[i].makespanNs < m_points[size_t(best)].makespanNs))
            best = int(i);
    for (size_t i = 0; i < m_points.size(); ++i) {
        const auto& p = m_points[i];
        const int row = int(i);
        m_table->setItem(row, 0, cell(valueText(p.value)));
        if (!p.error.empty()) {
            auto* failed = cell(QStringLiteral("failed"));
            failed->setForeground(kErrorColour);
            m_table->setItem(row, 1, failed);
            for (int c = 2; c < 5; ++c)
                m_table->setItem(row, c, cell(QStringLiteral("–")));
            auto* note = cell(qs(p.error), Qt::AlignLeft | Qt::AlignVCenter);
            note->setForeground(kErrorColour);
            m_table->setItem(row, 5, note);
            for (int c = 0; c < 6; ++c)
                m_table->item(row, c)->setToolTip(qs(p.error));
            continue;
        }
        m_table->setItem(row, 1, cell(formatNs(double(p.makespanNs))));
        m_table->setItem(row, 2, cell(speedupText(p.relativeSpeedup)));
        m_table->setItem(row, 3, cell(speedupText(p.speedup)));
        m_table->setItem(row, 4, cell(QString::number(p.maxConcurrency)));
        m_table->setItem(row, 5, cell(row == best && m_points.size() > 1 ? QStringLiteral("fastest") : QString(),
                                      Qt::AlignLeft | Qt::AlignVCenter));
        const QString tip = pointText(row);
        for (int c = 0; c < 6; ++c) {
            m_table->item(row, c)->setToolTip(tip);
            if (row == best) {
                QFont bold = m_table->font();
                bold.setBold(true);
                m_table->item(row, c)->setFont(bold);
            }
        }
    }
    // Wide enough for the numbers and a short note; a long error is elided (its tooltip has it all).
    for (int c = 0; c < 5; ++c)
        m_table->resizeColumnToContents(c);
    QFont bold = m_table->font();
    bold.setBold(true);
    int width = 2 * m_table->frameWidth() + m_table->verticalScrollBar()->sizeHint().width() +
                QFontMetrics(bold).horizontalAdvance(QStringLiteral("fastest")) + 24;
    for (int c = 0; c < 5; ++c)
        width += m_table->horizontalHeader()->sectionSize(c);
    // The dock stays narrow enough for small screens: the table asks for its width from the splitter instead of
    // forcing a minimum.
    if (auto* splitter = qobject_cast<QSplitter*>(m_table->parentWidget()); splitter && m_table->width() < width) {
        const int total = splitter->width();
        const int tableWidth = std::min(width, std::max(160, total / 2));
        splitter->setSizes({total - tableWidth, tableWidth});
    }
}

void SweepView::fitLegend()
{
    // As many legend entries per row as fit the plot's width (a narrow dock wraps them).
    QCPLegend* legend = m_plot->legend;
    const int available = m_plot->width() - 12;
    std::vector<int> widths;
    for (int i = 0; i < legend->itemCount(); ++i)
        if (const QCPAbstractLegendItem* item = legend->item(i)) // empty cells of the grid are null
            widths.push_back(item->minimumOuterSizeHint().width());
    // The grid's columns are as wide as their widest entry.
    int perRow = std::max<int>(1, int(widths.size()));
    for (; perRow > 1; --perRow) {
        std::vector<int> columns(size_t(perRow), 0);
        for (size_t i = 0; i < widths.size(); ++i)
            columns[i % size_t(perRow)] = std::max(columns[i % size_t(perRow)], widths[i]);
        int used = legend->margins().left() + legend->margins().right() + legend->columnSpacing() * (perRow - 1);
        for (int w : columns)
            used += w;
        if (used <= available)
            break;
    }
    if (legend->wrap() != perRow) {
        legend->setWrap(perRow);
        legend->setFillOrder(QCPLegend::foColumnsFirst, true);
    }
    // The title and the value labels fit the plot's width: a long title is elided, and when the values are
    // crowded only every second (third, …) one is labelled.
    const QString shownTitle = QFontMetrics(m_title->font())
                                   .elidedText(m_fullTitle, Qt::ElideRight, std::max(60, m_plot->width() - 16));
    if (m_title->text() != shownTitle)
        m_title->setText(shownTitle);
    if (auto ticker = m_plot->xAxis->ticker().dynamicCast<QCPAxisTickerText>(); ticker && !m_tickValues.empty()) {
        const QFontMetrics fm(m_plot->xAxis->tickLabelFont());
        int widest = 0;
        for (double v : m_tickValues)
            widest = std::max(widest, fm.horizontalAdvance(valueText(v)));
        const double axisWidth = std::max(1, m_plot->axisRect()->width() > 0 ? m_plot->axisRect()->width()
                                                                             : m_plot->width() - 100);
        const size_t stride = std::max<size_t>(
            1, size_t(std::ceil(double(m_tickValues.size()) * double(widest + 10) / axisWidth)));
        if (stride != m_tickStride) {
            m_tickStride = stride;
            ticker->clear();
            for (size_t i = 0; i < m_tickValues.size(); i += stride)
                ticker->addTick(m_tickValues[i], valueText(m_tickValues[i]));
        }
    }
}

int SweepView::pointNear(const QPoint& pos, double maxPixels) const
{
    if (!m_plot->axisRect()->rect().contains(pos))
        return -1;
    int best = -1;
    double bestDistance = maxPixels;
    for (size_t i = 0; i < m_points.size(); ++i) {
        if (!m_points[i].error.empty())
            continue;
        const double d = std::fabs(m_plot->xAxis->coordToPixel(m_points[i].value) - pos.x());
        if (d <= bestDistance) {
            bestDistance = d;
            best = int(i);
        }
    }
    return best;
}

QString SweepView::pointText(int index) const
{
    const auto& p = m_points[size_t(index)];
    return QStringLiteral("<b>%1 = %2</b><br>makespan %3<br>%4 vs the first value<br>%5 over serialized work "
                          "(GPU work %6)<br>up to %7 GPU operations at once<br><i>Double-click to see its timeline</i>")
        .arg(qs(toString(m_spec.knob)), valueText(p.value), formatNs(double(p.makespanNs)),
             speedupText(p.relativeSpeedup), speedupText(p.speedup), formatNs(double(p.gpuWorkNs)))
        .arg(p.maxConcurrency);
}

} // namespace streamscope
