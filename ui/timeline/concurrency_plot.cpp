#include "concurrency_plot.h"

#include "analysis.h"
#include "format.h"
#include "plot_theme.h"
#include "timeline_view.h"

#include <QComboBox>
#include <QHelpEvent>
#include <QSettings>
#include <QToolButton>
#include <QToolTip>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace streamscope {

namespace {

const QString kModeKey = QStringLiteral("concurrencyPlot/mode");

QString percentText(int64_t part, int64_t total)
{
    if (total <= 0)
        return QStringLiteral("–");
    const double p = 100.0 * double(part) / double(total);
    if (part > 0 && p < 0.1)
        return QStringLiteral("<0.1 %");
    return QString::number(p, 'f', p >= 9.95 || p == 0 ? 0 : 1) + QStringLiteral(" %");
}

// The step function, filled as one rectangle per step: QCPGraph's polygon fill of thousands of vertical edges (a
// wide view of a big trace) cost milliseconds a frame. Neighbouring steps of one height are one rectangle, and the
// rectangles go to the paint engine in one call: one drawRect per step was 1.1 ms of a 7 ms wheel notch at 1 M
// spans (bench_window, a step per pixel column).
class StepGraph : public QCPGraph {
public:
    using QCPGraph::QCPGraph;

protected:
    void drawFill(QCPPainter* painter, QVector<QPointF>* lines) const override
    {
        if (brush().style() == Qt::NoBrush || brush().color().alpha() == 0 || lines->size() < 2)
            return;
        const double base = valueAxis()->coordToPixel(0);
        painter->setPen(Qt::NoPen);
        painter->setBrush(brush());
        applyFillAntialiasingHint(painter);
        m_rects.clear();
        // lsStepLeft lines: (x0, y0) (x1, y0) (x1, y1) (x2, y1) ...: the horizontal pieces are the steps.
        for (qsizetype i = 0; i + 1 < lines->size(); ++i) {
            const QPointF& a = (*lines)[i];
            const QPointF& b = (*lines)[i + 1];
            if (a.y() != b.y() || !(b.x() > a.x()))
                continue;
            // Whole pixels (the fill is not antialiased): the raster engine fills integer rectangles directly.
            const int x0 = int(std::lround(a.x())), x1 = int(std::lround(b.x()));
            const int y0 = int(std::lround(std::min(a.y(), base))), y1 = int(std::lround(std::max(a.y(), base)));
            if (x1 <= x0 || y1 <= y0)
                continue;
            if (!m_rects.isEmpty() && m_rects.last().top() == y0 && m_rects.last().bottom() == y1 - 1
                && m_rects.last().right() + 1 >= x0)
                m_rects.last().setRight(std::max(m_rects.last().right(), x1 - 1));
            else
                m_rects.append(QRect(x0, y0, x1 - x0, y1 - y0));
        }
        if (!m_rects.isEmpty())
            painter->drawRects(m_rects.constData(), int(m_rects.size()));
    }

private:
    mutable QVector<QRect> m_rects; // kept between draws: no allocation per frame
};

} // namespace

double DurationTicker::getTickStep(const QCPRange& range)
{
    const double top = std::max(std::abs(range.lower), std::abs(range.upper));
    m_scale = top < 1e3 ? 1 : top < 1e6 ? 1e3 : top < 1e9 ? 1e6 : 1e9;
    m_suffix = top < 1e3 ? QStringLiteral(" ns")
        : top < 1e6      ? QStringLiteral(" µs")
        : top < 1e9      ? QStringLiteral(" ms")
                         : QStringLiteral(" s");
    return QCPAxisTicker::getTickStep(range);
}

QString DurationTicker::getTickLabel(double tick, const QLocale&, QChar, int)
{
    if (std::abs(tick) < m_scale * 1e-9)
        return QStringLiteral("0");
    return QString::number(tick / m_scale, 'g', 4) + m_suffix;
}

std::vector<ConcurrencyHistogram> concurrencyHistograms(const Trace& trace)
{
    AnalysisOptions options;
    options.concurrencySteps = false;
    options.maxOverlapStreams = 0; // the stream-pair overlaps are not needed here
    const TraceAnalysis a = analyzeTrace(trace, options);
    auto make = [](int device, const ConcurrencyProfile& p) {
        ConcurrencyHistogram h;
        h.device = device;
        h.timeAtNs = p.timeAtNs;
        h.totalNs = std::accumulate(h.timeAtNs.begin(), h.timeAtNs.end(), int64_t(0));
        return h;
    };
    std::vector<ConcurrencyHistogram> out;
    out.push_back(make(-1, a.concurrency));
    for (const DeviceAnalysis& d : a.devices)
        if (d.spanCount > 0)
            out.push_back(make(d.device, d.concurrency));
    return out;
}

QString histogramBarLabel(int64_t ns, int64_t totalNs)
{
    if (ns <= 0)
        return QStringLiteral("none");
    return formatNs(double(ns)) + QStringLiteral(" · ") + percentText(ns, totalNs);
}

ConcurrencyPlot::ConcurrencyPlot(QWidget* parent) : QCustomPlot(parent)
{
    setObjectName(QStringLiteral("concurrencyPlot"));
    setNoAntialiasingOnDrag(true);
    m_graph = new StepGraph(xAxis, yAxis);
    m_graph->setLineStyle(QCPGraph::lsStepLeft);
    // Steps are horizontal and vertical lines: nothing to smooth, and antialiasing a dense outline is slow.
    m_graph->setAntialiased(false);
    m_graph->setAntialiasedFill(false);

    // Horizontal bars: keyed by k on the vertical axis, time on the horizontal one.
    m_bars = new QCPBars(yAxis, xAxis);
    m_bars->setWidth(0.7);
    m_bars->setSelectable(QCP::stNone);
    m_bars->setVisible(false);

    yAxis->setSubTicks(false);
    // No solid line at 0 operations: over time it is the bottom axis anyway, and in the histogram k = 0 is a row
    // whose line struck through the label of the row above it when the rows are thin (lesson 11 at 1280x720).
    yAxis->grid()->setZeroLinePen(Qt::NoPen);
    m_countTicker = QSharedPointer<CountTicker>::create();
    m_countTicker->setTickStep(1.0);
    m_countTicker->setScaleStrategy(QCPAxisTickerFixed::ssMultiples);
    yAxis->setTicker(m_countTicker);
    m_durationTicker = QSharedPointer<DurationTicker>::create();
    m_durationTicker->setTickCount(6);
    xAxis->setTicker(m_durationTicker);
    xAxis->setSubTicks(false);
    applyTheme();
    axisRect()->setAutoMargins(QCP::msTop | QCP::msBottom);
    m_alignedMargins = axisRect()->margins();

    m_modeButton = new QToolButton(this);
    m_modeButton->setObjectName(QStringLiteral("concurrencyModeButton"));
    m_modeButton->setText(QStringLiteral("Histogram"));
    m_modeButton->setCheckable(true);
    m_modeButton->setToolTip(QStringLiteral("Show how long each number of GPU operations ran at once (histogram), "
                                            "instead of the number running over time"));
    QFont small = m_modeButton->font();
    small.setPointSizeF(small.pointSizeF() * 0.9);
    m_modeButton->setFont(small);
    connect(m_modeButton, &QToolButton::toggled, this,
            [this](bool on) { setMode(on ? Mode::Histogram : Mode::OverTime); });

    m_deviceBox = new QComboBox(this);
    m_deviceBox->setObjectName(QStringLiteral("concurrencyDeviceBox"));
    m_deviceBox->setFont(small);
    m_deviceBox->setToolTip(QStringLiteral("The histogram of all GPUs together, or of one GPU"));
    m_deviceBox->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    m_deviceBox->hide();
    connect(m_deviceBox, &QComboBox::activated, this,
            [this](int index) { setHistogramDevice(m_deviceBox->itemData(index).toInt()); });

    // The axes' texts and the labels are fitted to the plot's size, known for sure only once laid out (a resize lays
    // them out before the axis has its new height): again after each replot, and once more if that changed them.
    connect(this, &QCustomPlot::afterReplot, this, [this] {
        bool again = fitToSize();
        if (m_mode == Mode::Histogram && !m_labels.empty()) {
            std::vector<bool> before;
            for (const QCPItemText* label : m_labels)
                before.push_back(label->visible());
            const QCPRange keys = xAxis->range(), rows = yAxis->range();
            layoutHistogramLabels();
            again = again || keys != xAxis->range() || rows != yAxis->range();
            for (size_t i = 0; i < m_labels.size() && !again; ++i)
                again = m_labels[i]->visible() != before[i];
        }
        if (again)
            replot(rpQueuedReplot);
    });
    m_mode = QSettings().value(kModeKey).toString() == QLatin1String("histogram") ? Mode::Histogram : Mode::OverTime;
    applyMode();
}

ConcurrencyPlot::~ConcurrencyPlot() = default;

std::shared_ptr<const ConcurrencyPlotData> makeConcurrencyPlotData(const Trace& trace, bool withHistograms,
                                                                   const std::atomic<bool>* cancel)
{
    auto data = std::make_shared<ConcurrencyPlotData>();
    if (withHistograms)
        data->histograms = concurrencyHistograms(trace);
    if (trace.spanCount() == 0 || (cancel && *cancel))
        return data;
    std::tie(data->origin, data->end) = trace.timeRange();
    data->series = concurrencySeries(trace, -1, cancel);
    const std::vector<uint16_t>& counts = data->series.counts;
    constexpr size_t kBlock = ConcurrencyPlotData::kStepBlock;
    data->blockMax.reserve(counts.size() / kBlock + 1);
    for (size_t i = 0; i < counts.size(); i += kBlock)
        data->blockMax.push_back(*std::max_element(
            counts.begin() + std::ptrdiff_t(i), counts.begin() + std::ptrdiff_t(std::min(counts.size(), i + kBlock))));
    return data;
}

void ConcurrencyPlot::setTrace(std::shared_ptr<const Trace> trace, std::shared_ptr<const ConcurrencyPlotData> data,
                               bool dataToCome)
{
    m_trace = std::move(trace);
    m_histograms.reset();
    m_counting = m_trace && !data && dataToCome;
    m_data = !m_trace || m_counting ? nullptr : data ? std::move(data) : makeConcurrencyPlotData(*m_trace);
    // The data's origin is the trace's first span: the same before the data come.
    m_origin = m_data ? double(m_data->origin) : m_trace ? double(m_trace->timeRange().first) : 0;
    showData();
}

void ConcurrencyPlot::setData(const std::shared_ptr<const Trace>& trace,
                              std::shared_ptr<const ConcurrencyPlotData> data)
{
    if (!m_counting || trace != m_trace || !data)
        return;
    m_counting = false;
    m_data = std::move(data);
    if (m_data->histograms)
        setHistograms(*m_data->histograms);
    showData();
}

void ConcurrencyPlot::showData()
{
    m_stepTimes = m_data ? m_data->series.times.view() : TimeColumn::View{};
    m_max = m_data ? m_data->series.maxCount : 0;
    // While a big trace's steps are counted (setTrace with dataToCome): a note in the middle of the plot area.
    if (m_counting && !m_countingNote) {
        m_countingNote = new QCPItemText(this);
        m_countingNote->setClipToAxisRect(true);
        m_countingNote->position->setType(QCPItemPosition::ptAxisRectRatio);
        m_countingNote->position->setCoords(0.5, 0.5);
        m_countingNote->setPositionAlignment(Qt::AlignCenter);
        m_countingNote->setText(QStringLiteral("Counting the GPU operations running…"));
        m_countingNote->setFont(m_modeButton->font());
        m_countingNote->setColor(m_theme->plotFaintText);
    } else if (!m_counting && m_countingNote) {
        removeItem(m_countingNote);
        m_countingNote = nullptr;
    }
    updateShownSteps();
    applyMode();
}

size_t ConcurrencyPlot::stepCount() const
{
    // The last step is closed at the end of the trace by one more point with the same count.
    return m_data && m_data->series.size() > 0 ? m_data->series.size() + 1 : 0;
}

double ConcurrencyPlot::stepKey(size_t i) const
{
    return double(i < m_stepTimes.size() ? m_stepTimes[i] : m_data->end) - m_origin;
}

int ConcurrencyPlot::stepValue(size_t i) const
{
    const std::vector<uint16_t>& counts = m_data->series.counts;
    return counts[std::min(i, counts.size() - 1)];
}

size_t ConcurrencyPlot::firstStepAfter(double t) const
{
    size_t lo = 0, hi = stepCount();
    while (lo < hi) {
        const size_t mid = lo + (hi - lo) / 2;
        if (stepKey(mid) <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int ConcurrencyPlot::maxOfSteps(size_t from, size_t to) const
{
    constexpr size_t kBlock = ConcurrencyPlotData::kStepBlock;
    to = std::min(to, m_data->series.size()); // the closing point repeats the last count
    if (from >= to)
        return stepValue(from);
    int best = 0;
    while (from < to && from % kBlock != 0)
        best = std::max(best, stepValue(from++));
    while (from + kBlock <= to) {
        best = std::max(best, int(m_data->blockMax[from / kBlock]));
        from += kBlock;
    }
    while (from < to)
        best = std::max(best, stepValue(from++));
    return best;
}

void ConcurrencyPlot::updateShownSteps()
{
    QVector<double> keys, values;
    const size_t n = stepCount();
    if (n > 0) {
        const double a = m_timeRange.first, b = m_timeRange.second;
        const int columns = std::max(1, axisRect()->width() > 1 ? axisRect()->width() : width());
        // The steps that reach into [a, b]: the one in effect at a, through the first at or after b.
        auto inEffectAt = [&](double t) {
            const size_t after = firstStepAfter(t);
            return after == 0 ? size_t(0) : after - 1;
        };
        const size_t lo = inEffectAt(a);
        size_t atOrAfterB = firstStepAfter(b); // then back over the steps exactly at b
        while (atOrAfterB > 0 && stepKey(atOrAfterB - 1) == b)
            --atOrAfterB;
        const size_t hi = std::min(n, atOrAfterB + 1);
        if (hi - lo <= size_t(2 * columns) || !(b > a)) {
            for (size_t i = lo; i < hi; ++i) {
                keys.push_back(stepKey(i));
                values.push_back(stepValue(i));
            }
        } else {
            // More steps than pixels: each pixel column shows the most operations that ran at any time within it,
            // so that no burst of concurrency disappears at a wide view, and the graph has two points per column.
            const double dt = (b - a) / columns;
            keys.reserve(columns + 1);
            values.reserve(columns + 1);
            // The columns' boundaries are found by galloping forward from the previous one, not by a binary search
            // over all the steps: two of those per column missed the cache about 40 times each at 1 M steps
            // (0.8 ms of a 7 ms wheel notch, bench_window).
            auto firstAtOrAfter = [&](size_t start, double t) {
                size_t below = start, probe = start, step = 1; // every step before `below` is earlier than t
                while (probe < n && stepKey(probe) < t) {
                    below = probe + 1;
                    probe = std::min(n, probe + step);
                    step *= 2;
                }
                size_t low = below, high = probe; // every step before low is earlier than t; high is not (or is n)
                while (low < high) {
                    const size_t mid = low + (high - low) / 2;
                    if (stepKey(mid) < t)
                        low = mid + 1;
                    else
                        high = mid;
                }
                return low;
            };
            size_t from = lo; // the step in effect at the column's start
            for (int c = 0; c < columns; ++c) {
                const double t0 = a + c * dt, t1 = a + (c + 1) * dt;
                const size_t next = firstAtOrAfter(from, t1); // the first step at or after the column's end
                keys.push_back(t0);
                values.push_back(maxOfSteps(from, std::min(n, std::max(from + 1, next))));
                // The next column's first step: the last one at or before t1.
                size_t after = next;
                while (after < n && stepKey(after) == t1)
                    ++after;
                from = after == 0 ? 0 : after - 1;
            }
            keys.push_back(b);
            values.push_back(values.back());
        }
    }
    m_graph->setData(keys, values, true);
}

int ConcurrencyPlot::runningAt(double t) const
{
    const size_t after = firstStepAfter(t);
    if (after == 0 || after == stepCount())
        return -1;
    return stepValue(after - 1);
}

std::pair<double, double> ConcurrencyPlot::visibleTimeRange() const
{
    return {m_timeRange.first + m_origin, m_timeRange.second + m_origin};
}

void ConcurrencyPlot::setVisibleTimeRange(double startNs, double endNs)
{
    m_timeRange = {startNs - m_origin, endNs - m_origin};
    if (m_mode == Mode::OverTime) {
        updateShownSteps();
        xAxis->setRange(m_timeRange.first, m_timeRange.second);
        replot(rpQueuedReplot);
    }
}

void ConcurrencyPlot::setMode(Mode mode)
{
    if (mode == m_mode)
        return;
    m_mode = mode;
    QSettings().setValue(kModeKey, mode == Mode::Histogram ? QStringLiteral("histogram") : QStringLiteral("over-time"));
    applyMode();
    Q_EMIT modeChanged(mode);
}

void ConcurrencyPlot::ensureHistograms()
{
    // While the steps are counted off the GUI thread the histograms come with them (not computed here, at the
    // size that made the steps wait).
    if (m_histograms || m_counting)
        return;
    setHistograms(m_trace ? concurrencyHistograms(*m_trace) : std::vector<ConcurrencyHistogram>{});
}

void ConcurrencyPlot::setHistograms(std::vector<ConcurrencyHistogram> histograms)
{
    m_histograms = std::move(histograms);
    const QSignalBlocker block(m_deviceBox);
    m_deviceBox->clear();
    m_deviceBox->addItem(QStringLiteral("All GPUs"), -1);
    for (const ConcurrencyHistogram& h : *m_histograms)
        if (h.device >= 0)
            m_deviceBox->addItem(QStringLiteral("GPU %1").arg(h.device), h.device);
    const int index = m_deviceBox->findData(m_histogramDevice);
    if (index < 0)
        m_histogramDevice = -1;
    m_deviceBox->setCurrentIndex(std::max(0, index));
}

const ConcurrencyHistogram& ConcurrencyPlot::histogram()
{
    ensureHistograms();
    static const ConcurrencyHistogram empty;
    if (!m_histograms)
        return empty; // still counting
    for (const ConcurrencyHistogram& h : *m_histograms)
        if (h.device == m_histogramDevice)
            return h;
    return m_histograms->empty() ? empty : m_histograms->front();
}

std::vector<int> ConcurrencyPlot::histogramDevices()
{
    ensureHistograms();
    std::vector<int> devices;
    for (const ConcurrencyHistogram& h : m_histograms ? *m_histograms : std::vector<ConcurrencyHistogram>{})
        devices.push_back(h.device);
    return devices;
}

void ConcurrencyPlot::setHistogramDevice(int device)
{
    ensureHistograms();
    const int index = m_deviceBox->findData(device);
    if (index < 0)
        return;
    m_histogramDevice = device;
    m_deviceBox->setCurrentIndex(index);
    if (m_mode == Mode::Histogram) {
        updateHistogram();
        replot(rpQueuedReplot);
    }
}

QStringList ConcurrencyPlot::histogramBarLabels() const
{
    QStringList texts;
    for (const QCPItemText* label : m_labels)
        texts << label->text();
    return texts;
}

void ConcurrencyPlot::updateHistogram()
{
    m_fitted.reset(); // the axis labels are set afresh below: fitToSize shortens them again
    m_shown = histogram();
    QVector<double> keys, values;
    for (size_t k = 0; k < m_shown.timeAtNs.size(); ++k) {
        keys.push_back(double(k));
        values.push_back(double(m_shown.timeAtNs[k]));
    }
    m_bars->setData(keys, values, true);
    for (QCPItemText* label : m_labels)
        removeItem(label);
    m_labels.clear();
    for (size_t k = 0; k < m_shown.timeAtNs.size(); ++k) {
        auto* label = new QCPItemText(this);
        label->setClipToAxisRect(true);
        label->position->setAxes(xAxis, yAxis);
        label->position->setCoords(double(m_shown.timeAtNs[k]), double(k));
        label->setPositionAlignment(Qt::AlignLeft | Qt::AlignVCenter);
        label->setPadding(QMargins(5, 0, 0, 0));
        label->setText(histogramBarLabel(m_shown.timeAtNs[k], m_shown.totalNs));
        label->setColor(m_shown.timeAtNs[k] > 0 ? m_theme->plotText : m_theme->plotFaintText);
        label->setFont(m_modeButton->font());
        m_labels.push_back(label);
    }
    const int top = std::max(0, int(m_shown.timeAtNs.size()) - 1);
    yAxis->setRange(-0.6, top + 0.6);
    const QString where = m_shown.device < 0 ? QString() : QStringLiteral(" on GPU %1").arg(m_shown.device);
    const QString total = formatNs(double(m_shown.totalNs));
    m_timeLabels = {QStringLiteral("time") + where
                        + QStringLiteral(" (of the %1 from first to last GPU operation)").arg(total),
                    QStringLiteral("time") + where + QStringLiteral(" (of %1)").arg(total), QStringLiteral("time")};
    xAxis->setLabel(m_timeLabels.front());
    layoutHistogramLabels();
}

void ConcurrencyPlot::layoutHistogramLabels()
{
    if (m_mode != Mode::Histogram)
        return;
    // The time axis leaves room right of the longest bar for its label.
    const double longest =
        m_shown.timeAtNs.empty() ? 0.0 : double(*std::max_element(m_shown.timeAtNs.begin(), m_shown.timeAtNs.end()));
    // The labels' own font: the button's may have been polished to another size since they were made.
    const QFontMetrics fm(m_labels.empty() ? m_modeButton->font() : m_labels.front()->font());
    const QMargins m = axisRect()->margins();
    const int plotWidth = std::max(1, width() - m.left() - m.right());
    // "1.02 ms · 25 %" where there is room for it beside the bars, the share alone in a narrow plot (lesson 11 at
    // 960x540 cut "709.8 µs · 56 %" to "709.8 µ"); the tooltip has both.
    auto widest = [&](bool shareOnly) {
        int w = 0;
        for (size_t k = 0; k < m_labels.size() && k < m_shown.timeAtNs.size(); ++k) {
            const int64_t ns = m_shown.timeAtNs[k];
            const QString text =
                shareOnly && ns > 0 ? percentText(ns, m_shown.totalNs) : histogramBarLabel(ns, m_shown.totalNs);
            w = std::max(w, fm.horizontalAdvance(text) + 12);
        }
        return w;
    };
    const bool shareOnly = widest(false) > 0.6 * plotWidth;
    for (size_t k = 0; k < m_labels.size() && k < m_shown.timeAtNs.size(); ++k) {
        const int64_t ns = m_shown.timeAtNs[k];
        m_labels[k]->setText(shareOnly && ns > 0 ? percentText(ns, m_shown.totalNs)
                                                 : histogramBarLabel(ns, m_shown.totalNs));
    }
    const int labelWidth = widest(shareOnly);
    const double fraction = std::clamp(double(labelWidth) / plotWidth, 0.05, 0.6);
    xAxis->setRange(0, std::max(1.0, longest) / (1.0 - fraction));

    // Room above the top row and below the bottom one for half a label: lesson 11's top label was cut at 1280x720.
    const int topRow = std::max(0, int(m_labels.size()) - 1);
    const double pad = histogramRowPadding(topRow, fm.height());
    yAxis->setRange(-pad, topRow + pad);

    // Thin rows: label the longest bars first and skip those that would overlap a label already placed.
    // After a layout the axis says how far apart the rows really are (with the padding just set); an estimate before
    // it. The estimate alone, from the margins of the last layout, let the labels of lesson 11's 33 rows overlap;
    // as a bound on the real spacing it left lesson 07's middle bar unlabelled in rows 20 px apart.
    const int rows = std::max<int>(1, int(m_labels.size()));
    double rowPx = double(std::max(1, height() - m.top() - m.bottom() - 2 * fm.height())) / (rows + 0.2);
    if (axisRect()->height() > 1)
        rowPx = std::abs(yAxis->coordToPixel(1) - yAxis->coordToPixel(0));
    const int spacing = std::max(1, int(std::ceil(fm.height() / std::max(1.0, rowPx))));
    std::vector<int> order(m_labels.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [this](int a, int b) { return m_shown.timeAtNs[size_t(a)] > m_shown.timeAtNs[size_t(b)]; });
    std::vector<int> placed;
    for (int k : order) {
        const bool free = std::none_of(placed.begin(), placed.end(), [&](int p) { return std::abs(p - k) < spacing; });
        m_labels[size_t(k)]->setVisible(free);
        if (free)
            placed.push_back(k);
    }
}

void ConcurrencyPlot::applyMode()
{
    m_fitted.reset(); // the axis labels are set afresh below: fitToSize shortens them again
    const bool histogramMode = m_mode == Mode::Histogram;
    {
        const QSignalBlocker block(m_modeButton);
        m_modeButton->setChecked(histogramMode);
    }
    m_graph->setVisible(!histogramMode);
    m_bars->setVisible(histogramMode);
    xAxis->setTicks(histogramMode);
    xAxis->setTickLabels(histogramMode);
    xAxis->grid()->setVisible(histogramMode);
    if (histogramMode) {
        yAxis->setLabel(QStringLiteral("operations running"));
        updateHistogram();
        setToolTip(QString());
    } else {
        for (QCPItemText* label : m_labels)
            removeItem(label);
        m_labels.clear();
        xAxis->setLabel(QString());
        yAxis->setLabel(QStringLiteral("running"));
        updateShownSteps();
        xAxis->setRange(m_timeRange.first, m_timeRange.second);
        setToolTip(QString());
    }
    updateCountTicks(); // the count axis' ticks for the mode (and over time its range)
    m_deviceBox->setVisible(histogramMode && m_histograms && m_histograms->size() > 2);
    updateHeight();
    fitToSize();
    placeControls();
    replot(rpQueuedReplot);
}

void ConcurrencyPlot::updateHeight()
{
    if (m_mode == Mode::OverTime) {
        setMinimumHeight(70);
        setMaximumHeight(140);
        return;
    }
    // A row per k, tall enough for its label, up to a height that leaves the timeline most of the room; on a small
    // screen it gives way (down to 120 px, labels of thin rows skipped) before the timeline's rows do.
    const int fh = QFontMetrics(m_modeButton->font()).height();
    const int rows = std::max(2, m_max + 1);
    const int wanted = std::clamp(rows * (fh + 8) + 3 * fh + 16, 140, 300);
    setMinimumHeight(std::min(wanted, 120));
    setMaximumHeight(wanted);
}

void ConcurrencyPlot::placeControls()
{
    // In the left margin (under the timeline's row labels), clear of the vertical axis and its labels.
    m_modeButton->adjustSize();
    m_modeButton->move(m_buttonInRightCorner ? std::max(4, width() - m_modeButton->width() - 4) : 4, 4);
    m_deviceBox->adjustSize();
    m_deviceBox->move(4, m_modeButton->geometry().bottom() + 4);
}

void ConcurrencyPlot::applyTheme()
{
    m_theme = m_fixedTheme ? m_fixedTheme : &Theme::of(this);
    const Theme& t = *m_theme;
    applyPlotTheme(*this, t);
    QPen line(t.seriesBlue, 1);
    line.setCosmetic(true);
    m_graph->setPen(line);
    QColor fill = t.seriesBlue;
    fill.setAlpha(t.isDark ? 80 : 60);
    m_graph->setBrush(fill);
    m_bars->setPen(QPen(t.isDark ? t.seriesBlue.lighter(120) : t.seriesBlue.darker(120), 1));
    fill.setAlpha(170);
    m_bars->setBrush(fill);
    for (size_t k = 0; k < m_labels.size() && k < m_shown.timeAtNs.size(); ++k)
        m_labels[k]->setColor(m_shown.timeAtNs[k] > 0 ? t.plotText : t.plotFaintText);
    if (m_countingNote)
        m_countingNote->setColor(t.plotFaintText);
}

void ConcurrencyPlot::changeEvent(QEvent* event)
{
    QCustomPlot::changeEvent(event);
    if (isThemeChange(event) && !m_fixedTheme && &Theme::of(this) != m_theme) {
        applyTheme();
        replot(rpQueuedReplot);
    }
}

QSize ConcurrencyPlot::minimumSizeHint() const
{
    const QSize hint = QCustomPlot::minimumSizeHint();
    return {std::min(hint.width(), axisRect()->margins().left() + 160), hint.height()};
}

void ConcurrencyPlot::resizeEvent(QResizeEvent* event)
{
    QCustomPlot::resizeEvent(event);
    if (m_mode == Mode::OverTime)
        updateShownSteps(); // the columns changed
    updateCountTicks();
    fitToSize();
    placeControls();
    if (m_mode == Mode::Histogram) {
        layoutHistogramLabels();
        replot(rpQueuedReplot);
    }
}

bool ConcurrencyPlot::event(QEvent* event)
{
    if (event->type() != QEvent::ToolTip)
        return QCustomPlot::event(event);
    auto* help = static_cast<QHelpEvent*>(event);
    QString text;
    if (axisRect()->rect().contains(help->pos())) {
        if (m_mode == Mode::Histogram) {
            const long k = std::lround(yAxis->pixelToCoord(help->pos().y()));
            if (k >= 0 && size_t(k) < m_shown.timeAtNs.size()) {
                const int64_t ns = m_shown.timeAtNs[size_t(k)];
                text =
                    QStringLiteral("%1 GPU operation%2 running%3: %4 of %5 (%6)")
                        .arg(k)
                        .arg(k == 1 ? QString() : QStringLiteral("s"))
                        .arg(m_shown.device < 0 ? QString() : QStringLiteral(" on GPU %1").arg(m_shown.device))
                        .arg(formatNs(double(ns)), formatNs(double(m_shown.totalNs)), percentText(ns, m_shown.totalNs));
            }
        } else {
            const double t = xAxis->pixelToCoord(help->pos().x());
            if (const int running = runningAt(t); running >= 0)
                text = QStringLiteral("At %1: %2 GPU operation%3 running")
                           .arg(formatNs(t))
                           .arg(running)
                           .arg(running == 1 ? QString() : QStringLiteral("s"));
        }
    }
    if (text.isEmpty())
        QToolTip::hideText();
    else
        QToolTip::showText(help->globalPos(), text, this);
    return true;
}

void ConcurrencyPlot::prepareForImage(const Theme& theme, int px, const QMargins& plotMargins)
{
    m_fixedTheme = &theme;
    m_mode = Mode::OverTime; // not setMode: the window's remembered choice is not the image's
    applyMode();
    applyTheme();
    m_modeButton->hide();
    m_deviceBox->hide();
    setMinimumHeight(0);
    setMaximumHeight(QWIDGETSIZE_MAX);
    QFont f = font();
    f.setPixelSize(std::max(6, px));
    yAxis->setTickLabelFont(f);
    yAxis->setLabelFont(f);
    yAxis->setTickLengthIn(0);
    yAxis->setTickLengthOut(std::max(3, px / 3));
    axisRect()->setAutoMargins(QCP::msNone);
    axisRect()->setMargins(plotMargins);
    // For the size the image gives it (a widget never shown has no layout yet).
    fitCountAxis(height() - plotMargins.top() - plotMargins.bottom(), f);
}

void ConcurrencyPlot::alignWith(const TimelineView* timeline)
{
    // Both widgets span the same width of the centre: the same margins put the two time axes on top of each other.
    const QRect area = timeline->timeAxisRect();
    const QMargins wanted(area.left(), 0, std::max(0, timeline->width() - area.right() - 1), 0);
    const auto [from, to] = timeline->visibleTimeRange();
    const auto [mine0, mine1] = visibleTimeRange();
    if (m_alignedMargins == wanted && from == mine0 && to == mine1)
        return;
    m_alignedMargins = wanted;
    fitToSize(); // the margins: the timeline's, or wider where the histogram needs room for the button
    setVisibleTimeRange(from, to);
    if (m_mode == Mode::Histogram) {
        layoutHistogramLabels();
        replot(rpQueuedReplot);
    }
}

void ConcurrencyPlot::followTimeline(TimelineView* timeline)
{
    connect(timeline, &TimelineView::visibleTimeRangeChanged, this, [this, timeline] { alignWith(timeline); });
    connect(timeline, &QCustomPlot::afterReplot, this, [this, timeline] { alignWith(timeline); });
}

} // namespace streamscope
