// The timeline view: its construction, the trace it shows, the visible range and lanes, title, legend, fonts and
// margins, zoom and pan, hover and selection, and painting. Input and tooltips: timeline_view_input.cpp.
#include "timeline_view.h"

#include "timeline_view_parts.h"

#include <QHelpEvent>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QToolTip>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>

namespace streamscope {

using namespace timeline_detail;

TimelineView::TimelineView(QWidget* parent) : QCustomPlot(parent)
{
    setInteractions({});
    setAttribute(Qt::WA_OpaquePaintEvent); // paintEvent covers every pixel: no background fill first
    setFocusPolicy(Qt::StrongFocus);
    setMouseTracking(true);
    setNoAntialiasingOnDrag(true);
    setAntialiasedElements(QCP::aeNone);
    setNotAntialiasedElements(QCP::aeAll);
    setPlottingHint(QCP::phCacheLabels, true);

    yAxis->setRangeReversed(true);
    yAxis->setVisible(false);
    yAxis->grid()->setVisible(false);
    m_timeTicker = QSharedPointer<QCPAxisTicker>(new TimeTicker);
    xAxis->setTicker(m_timeTicker);
    xAxis->grid()->setZeroLinePen(Qt::NoPen);
    xAxis->grid()->setSubGridVisible(false);
    xAxis->setLabel(QStringLiteral("Time"));
    axisRect()->setAutoMargins(QCP::msTop | QCP::msBottom);
    axisRect()->setMinimumMargins(QMargins(0, 6, 0, 0));

    m_plottable = new TimelinePlottable(xAxis, yAxis);
    m_overlay = new TimelineOverlay(this);
    m_rowLabels = new TimelineRowLabels(this);
    new TimelineScrollBar(this);
    if (QCPLayer* overlayLayer = layer(QStringLiteral("overlay")))
        overlayLayer->setMode(QCPLayer::lmLogical);
    mPaintBuffers.clear();
    mPaintBuffers.append(
        QSharedPointer<QCPAbstractPaintBuffer>(new OpaquePaintBuffer(viewport().size(), bufferDevicePixelRatio())));

    m_kindLegend = new QCPLegend;
    plotLayout()->insertRow(0);
    plotLayout()->addElement(0, 0, m_kindLegend);
    m_kindLegend->setLayer(QStringLiteral("legend"));
    m_kindLegend->setBorderPen(Qt::NoPen);
    m_kindLegend->setBrush(Qt::NoBrush);
    m_kindLegend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
    m_kindLegend->setSelectableParts(QCPLegend::spNone);
    plotLayout()->setRowStretchFactor(0, 0.001);

    connect(this, &QCustomPlot::afterLayout, this, &TimelineView::onAfterLayout);
    connect(xAxis, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), this, &TimelineView::onXRangeChanged);

    m_laneHeight = std::max(16, int(std::lround(QFontInfo(font()).pixelSize() * 1.6)));
    applyTheme();
    applyFonts();
    updateMargins();
    fitToView();
}

TimelineView::~TimelineView() = default;

void TimelineView::setTrace(std::shared_ptr<const Trace> trace, bool keepView)
{
    setTrace(std::move(trace), keepView, nullptr);
}

void TimelineView::setTrace(std::shared_ptr<const Trace> trace, bool keepView,
                            std::shared_ptr<const TimelineLayout> layout, std::shared_ptr<const FlowIndex> flows)
{
    keepView = keepView && m_trace && trace;
    const QCPRange keptRange = xAxis->range();
    const double keptScroll = m_scrollLanes;
    m_plottable->setTrace(nullptr, nullptr);
    m_trace = std::move(trace);
    // The same job again (a re-run) keeps its ranks folded; a new trace starts as initiallyCollapsedRanks says.
    if (!keepView)
        m_collapsedRanks = m_trace ? initiallyCollapsedRanks(*m_trace) : std::set<int>();
    if (!m_trace)
        m_layout = std::make_shared<const TimelineLayout>();
    else if (layout && layout->trace() == m_trace.get() && layout->collapsedRanks() == m_collapsedRanks)
        m_layout = std::move(layout);
    else
        m_layout = std::make_shared<const TimelineLayout>(*m_trace, m_collapsedRanks);
    m_plottable->setTrace(m_trace.get(), m_layout.get(), std::move(flows));
    const bool hadSelection = m_selected >= 0;
    m_selected = -1;
    m_hovered = -1;
    m_selectedFlows.clear();
    m_highlighted.clear();
    m_measured.reset();
    m_scrollLanes = 0;
    m_stretchLanes = 0;
    rebuildLegend();
    updateMargins();
    if (keepView) {
        xAxis->setRange(keptRange);
        clampXRange();
        m_scrollLanes = keptScroll;
        requestReplot();
    } else {
        fitToView();
    }
    if (hadSelection)
        Q_EMIT spanSelected(-1);
}

QRect TimelineView::plotArea() const
{
    return xAxis->axisRect()->rect();
}

double TimelineView::xOfPixel(double x) const
{
    return xAxis->pixelToCoord(x);
}

int TimelineView::spanAt(QPoint pos) const
{
    return m_plottable->spanAt(QPointF(pos), 3);
}

void TimelineView::setFlowKindVisible(FlowKind kind, bool visible)
{
    if (m_plottable->isFlowKindVisible(kind) == visible)
        return;
    m_plottable->setFlowKindVisible(kind, visible);
    rebuildLegend();
    updateMargins();
    requestReplot();
}

bool TimelineView::isFlowKindVisible(FlowKind kind) const
{
    return m_plottable->isFlowKindVisible(kind);
}

std::pair<double, double> TimelineView::visibleTimeRange() const
{
    const double o = double(m_layout->origin());
    return {xAxis->range().lower + o, xAxis->range().upper + o};
}

void TimelineView::setVisibleTimeRange(double startNs, double endNs)
{
    const double o = double(m_layout->origin());
    if (endNs < startNs)
        std::swap(startNs, endNs);
    xAxis->setRange(startNs - o, endNs - o);
    clampXRange();
    requestReplot();
}

double TimelineView::verticalScroll() const
{
    return m_scrollLanes;
}

void TimelineView::setVerticalScroll(double lanes)
{
    m_scrollLanes = std::max(0.0, lanes);
    requestReplot();
}

void TimelineView::setLanesFillHeight(bool on)
{
    m_stretchToFill = on;
    requestReplot();
}

void TimelineView::setLaneHeight(int pixels)
{
    m_laneHeight = std::clamp(pixels, 4, 200);
    requestReplot();
}

void TimelineView::setMeasuredRange(int64_t startNs, int64_t endNs)
{
    if (endNs < startNs)
        std::swap(startNs, endNs);
    m_measured = std::make_pair(startNs, endNs);
    replotOverlay();
    Q_EMIT measuredRangeChanged(startNs, endNs);
}

void TimelineView::clearMeasuredRange()
{
    if (!m_measured)
        return;
    m_measured.reset();
    replotOverlay();
    Q_EMIT measuredRangeChanged(-1, -1);
}

void TimelineView::setTitle(const QString& title)
{
    if (title.isEmpty()) {
        if (m_titleElement) {
            plotLayout()->remove(m_titleElement);
            plotLayout()->simplify();
            m_titleElement = nullptr;
        }
    } else if (!m_titleElement) {
        plotLayout()->insertRow(0);
        m_titleElement = new QCPTextElement(this, title);
        plotLayout()->addElement(0, 0, m_titleElement);
        plotLayout()->setRowStretchFactor(0, 0.001);
        m_titleElement->setTextColor(m_theme->plotTitle);
        m_titleElement->setMargins(QMargins(8, 8, 8, 2));
    } else {
        m_titleElement->setText(title);
    }
    applyFonts();
    requestReplot();
}

QString TimelineView::title() const
{
    return m_titleElement ? m_titleElement->text() : QString();
}

void TimelineView::setLegendVisible(bool visible)
{
    if (isLegendVisible() == visible)
        return;
    if (visible) {
        const int row = m_titleElement ? 1 : 0;
        plotLayout()->insertRow(row);
        plotLayout()->addElement(row, 0, m_kindLegend);
        plotLayout()->setRowStretchFactor(row, 0.001);
        m_kindLegend->setVisible(true);
    } else {
        plotLayout()->take(m_kindLegend);
        plotLayout()->simplify();
        m_kindLegend->setVisible(false);
    }
    requestReplot();
}

bool TimelineView::isLegendVisible() const
{
    return m_kindLegend->visible() && m_kindLegend->layout() != nullptr;
}

void TimelineView::setFontScale(double scale)
{
    m_fontScale = std::clamp(scale, 0.5, 8.0);
    applyFonts();
    updateMargins();
    requestReplot();
}

void TimelineView::setPresentationStyle(bool on)
{
    m_presentation = on;
    m_plottable->setHighContrast(on);
    applyFonts();
    updateMargins();
    requestReplot();
}

void TimelineView::rebuildLegend(const std::array<size_t, kFlowKindCount>* drawnFlows)
{
    m_kindLegend->clearItems();
    if (!m_trace)
        return;
    std::array<bool, kSpanKindCount> spanKinds{};
    for (SpanKind k : m_trace->spans.kind)
        spanKinds[size_t(k)] = true;
    std::array<bool, kFlowKindCount> flowKinds{};
    for (const Flow& f : m_trace->flows)
        flowKinds[size_t(f.kind)] = true;
    for (int k = 0; k < kSpanKindCount; ++k)
        if (spanKinds[size_t(k)])
            m_kindLegend->addItem(new SpanKindLegendItem(m_kindLegend, SpanKind(k)));
    for (int k = 0; k < kFlowKindCount; ++k)
        if (flowKinds[size_t(k)] && isFlowKindVisible(FlowKind(k)) && (!drawnFlows || (*drawnFlows)[size_t(k)] > 0))
            m_kindLegend->addItem(new FlowKindLegendItem(m_kindLegend, FlowKind(k)));
    const auto& timing = m_trace->spans.timing;
    if (std::find(timing.begin(), timing.end(), SpanTiming::Uncertain) != timing.end())
        m_kindLegend->addItem(new UncertainStartLegendItem(m_kindLegend));
    applyFonts();
}

void TimelineView::applyFonts()
{
    const int basePx = QFontInfo(font()).pixelSize();
    const int px = int(std::lround(basePx * m_fontScale));
    const QFont f = pixelFont(font(), px, m_presentation);
    const QColor contrast = m_theme->isDark ? QColor(Qt::white) : QColor(Qt::black);
    const QColor text = m_presentation ? contrast : m_theme->plotText;
    xAxis->setTickLabelFont(f);
    xAxis->setLabelFont(f);
    xAxis->setTickLabelColor(text);
    xAxis->setLabelColor(text);
    const QColor axis = m_presentation ? contrast : m_theme->plotAxis;
    const qreal axisWidth = m_presentation ? std::max(2.0, std::round(m_fontScale)) : 1.0;
    xAxis->setBasePen(QPen(axis, axisWidth));
    xAxis->setTickPen(QPen(axis, axisWidth));
    xAxis->setTickLengthIn(0);
    xAxis->setTickLengthOut(int(std::lround(5 * m_fontScale)));
    xAxis->setSubTickLengthIn(0);
    xAxis->setSubTickLengthOut(int(std::lround(2 * m_fontScale)));
    m_kindLegend->setFont(f);
    m_kindLegend->setIconSize(int(std::lround(px * 1.6)), int(std::lround(px * 0.9)));
    m_kindLegend->setIconTextPadding(int(std::lround(px * 0.4)));
    m_kindLegend->setColumnSpacing(int(std::lround(px * 1.2)));
    m_kindLegend->setRowSpacing(int(std::lround(px * 0.2)));
    m_kindLegend->setMargins(QMargins(m_rowLabelWidth, int(std::lround(px * 0.4)), 8, int(std::lround(px * 0.2))));
    for (int i = 0; i < m_kindLegend->itemCount(); ++i) {
        QCPAbstractLegendItem* item = m_kindLegend->item(i);
        if (!item)
            continue; // a wrapped legend's grid has empty cells
        item->setFont(f);
        item->setTextColor(text);
        item->setMargins(QMargins(0, 0, 0, 0));
    }
    if (m_titleElement)
        m_titleElement->setFont(pixelFont(font(), int(std::lround(px * 1.45)), true));
    m_plottable->setMaxLabelPixelSize(int(std::lround(px * 1.1)));
}

void TimelineView::setFixedTheme(const Theme* theme)
{
    m_fixedTheme = theme;
    applyTheme();
    applyFonts();
    requestReplot();
}

void TimelineView::applyTheme()
{
    m_theme = m_fixedTheme ? m_fixedTheme : &Theme::of(this);
    const Theme& t = *m_theme;
    setBackground(QBrush(t.plotBackground));
    for (const auto& buffer : std::as_const(mPaintBuffers))
        if (auto* opaque = dynamic_cast<OpaquePaintBuffer*>(buffer.data()))
            opaque->setFill(t.plotBackground);
    xAxis->grid()->setPen(QPen(t.timelineGrid, 1, Qt::SolidLine));
    xAxis->setSubTickPen(QPen(t.plotSubTick));
    if (m_titleElement)
        m_titleElement->setTextColor(t.plotTitle);
    m_plottable->setTheme(t);
}

void TimelineView::updateMargins()
{
    int widest = 0;
    if (m_rowLabels) {
        const QFontMetrics hfm(m_rowLabels->headerFont()), rfm(m_rowLabels->rowFont());
        const auto& rows = m_layout->rows();
        for (size_t i = 0; i < rows.size() && i < 20000; ++i) {
            const bool header = isHeaderRow(rows[i]);
            const QString text = QString::fromStdString(rows[i].label);
            const int indent = header ? 0 : m_rowLabels->indent();
            widest = std::max(widest, (header ? hfm : rfm).horizontalAdvance(text) + indent);
        }
    }
    const int px = int(std::lround(QFontInfo(font()).pixelSize() * m_fontScale));
    m_rowLabelWidth = std::max(std::clamp(widest + 16, px * 6, px * 24), m_minRowLabelWidth);
    // Long device names are elided rather than squeeze the bars (big text, a narrow centre at Qt's scale 2).
    if (!m_fitRows)
        m_rowLabelWidth = std::min(m_rowLabelWidth, std::max(px * 6, width() * 3 / 10));
    const int right = m_fitRows ? int(std::lround(16 * m_fontScale)) : 14;
    axisRect()->setMargins(QMargins(m_rowLabelWidth, 0, right, 0));
    const QMargins legendMargins = m_kindLegend->margins();
    m_kindLegend->setMargins(QMargins(m_rowLabelWidth, legendMargins.top(), 8, legendMargins.bottom()));
    // Legend columns: as many as fit in the width.
    int itemWidth = 1;
    for (int i = 0; i < m_kindLegend->itemCount(); ++i)
        if (QCPAbstractLegendItem* item = m_kindLegend->item(i))
            itemWidth = std::max(itemWidth, item->minimumOuterSizeHint().width());
    const int avail = std::max(1, (m_fitRows ? viewport().width() : width()) - m_rowLabelWidth - 16);
    const int columns = std::max(1, avail / (itemWidth + m_kindLegend->columnSpacing()));
    if (columns != m_kindLegend->wrap()) {
        m_kindLegend->setWrap(columns);
        // setWrap() alone leaves the items where they are: rearrange them into the new number of columns.
        m_kindLegend->setFillOrder(QCPLayoutGrid::foColumnsFirst, true);
    }
    if (m_fitRows) {
        // Images lay rows out top-down with spare height at the bottom: keep the legend at its natural height.
        m_kindLegend->setSizeConstraintRect(QCPLayoutElement::scrOuterRect);
        m_kindLegend->setMaximumSize(QWIDGETSIZE_MAX, m_kindLegend->minimumOuterSizeHint().height());
    } else if (m_minimumLanes > 0) {
        // Room for the lanes asked for under the legend (which wraps to more lines in a narrow centre), and for the
        // time axis below them.
        const int legend = m_kindLegend->visible() ? m_kindLegend->minimumOuterSizeHint().height() : 0;
        const int fh = QFontMetrics(font()).height();
        setMinimumHeight(legend + m_minimumLanes * std::max(1, m_laneHeight) + 3 * fh + 8);
    } else {
        setMinimumHeight(0);
    }
}

double TimelineView::visibleLanes() const
{
    return double(plotArea().height()) / shownLaneHeight();
}

double TimelineView::shownLaneHeight() const
{
    // Where every lane fits, they share the height rather than leave most of it empty (lesson 08 in a 1920x1080
    // window drew its eight rows over the top third), up to kMaxLaneStretch times their height. For the most lanes
    // this trace has shown: folding a rank leaves the other rows, and the header just clicked, where they were.
    const double base = std::max(1, m_laneHeight);
    const int total = std::max(m_layout ? m_layout->totalLanes() : 0, m_stretchLanes);
    if (!m_stretchToFill || m_fitRows || total <= 0)
        return base;
    return std::clamp(double(plotArea().height()) / total, base, base * kMaxLaneStretch);
}

void TimelineView::onAfterLayout()
{
    const QRect area = plotArea();
    const int total = m_layout->totalLanes();
    if (m_fitRows) {
        // An image shows every row: lanes as high as the area allows, up to a comfortable maximum.
        const int px = int(std::lround(QFontInfo(font()).pixelSize() * m_fontScale));
        const double lanes = m_fillRows
            ? double(std::max(total, 1))
            : std::max(double(std::max(total, 1)), area.height() / (px * kImageMaxLaneHeight));
        yAxis->setRange(0, lanes);
    } else {
        m_stretchLanes = std::max(m_stretchLanes, total);
        const double visible = double(area.height()) / shownLaneHeight();
        m_scrollLanes = std::clamp(m_scrollLanes, 0.0, std::max(0.0, total - visible));
        yAxis->setRange(m_scrollLanes, m_scrollLanes + std::max(visible, 1e-3));
    }
    static_cast<TimeTicker*>(m_timeTicker.data())->setTickCount(std::max(3, area.width() / int(110 * m_fontScale)));
}

QRect TimelineView::scrollTrack() const
{
    const QRect area = plotArea();
    if (m_fitRows || m_layout->totalLanes() <= visibleLanes() + 1e-9 || area.height() <= 0)
        return {};
    return QRect(area.right() + 4, area.top(), 8, area.height());
}

QRect TimelineView::scrollThumb() const
{
    const QRect track = scrollTrack();
    if (track.isEmpty())
        return {};
    const double total = std::max(1, m_layout->totalLanes());
    const int h = std::max(16, int(track.height() * visibleLanes() / total));
    const double maxScroll = std::max(1e-9, total - visibleLanes());
    const double fraction = std::clamp(m_scrollLanes / maxScroll, 0.0, 1.0);
    const int y = track.top() + int(std::lround((track.height() - h) * fraction));
    return QRect(track.left(), y, track.width(), h);
}

void TimelineView::onXRangeChanged(const QCPRange& range)
{
    const TimeUnit u = timeUnitFor(std::max(std::abs(range.lower), std::abs(range.upper)));
    static_cast<TimeTicker*>(m_timeTicker.data())->setUnit(u.scale);
    const QString label = QStringLiteral("Time (") + u.suffix + QLatin1Char(')');
    if (xAxis->label() != label)
        xAxis->setLabel(label);
    const double o = double(m_layout->origin());
    Q_EMIT visibleTimeRangeChanged(range.lower + o, range.upper + o);
}

void TimelineView::setMinimumTimeExtent(double ns)
{
    m_minTimeExtent = std::max(0.0, ns);
    clampXRange();
    requestReplot();
}

void TimelineView::setMinimumRowLabelWidth(int pixels)
{
    m_minRowLabelWidth = std::max(0, pixels);
    updateMargins();
    requestReplot();
}

void TimelineView::clampXRange()
{
    QCPRange r = xAxis->range();
    const double len = std::max({1.0, double(m_layout->endTime() - m_layout->origin()), m_minTimeExtent});
    double width = std::clamp(r.size(), 10.0, len * 1.5 + 1000);
    double centre = r.center();
    centre = std::clamp(centre, -width * 0.5 + width * 0.1, len + width * 0.5 - width * 0.1);
    if (width != r.size() || centre != r.center())
        xAxis->setRange(centre - width / 2, centre + width / 2);
}

void TimelineView::fitToView()
{
    const double len = std::max(double(m_layout->endTime() - m_layout->origin()), m_minTimeExtent);
    if (len <= 0) {
        xAxis->setRange(-1000, 1000 + std::max(0.0, len));
    } else {
        const double pad = len * 0.01;
        xAxis->setRange(-pad, len + pad);
    }
    m_scrollLanes = 0;
    requestReplot();
}

void TimelineView::zoomAround(double factor, double pixelX)
{
    const QCPRange r = xAxis->range();
    const double key = xOfPixel(pixelX);
    xAxis->setRange(key - (key - r.lower) * factor, key + (r.upper - key) * factor);
    clampXRange();
    requestReplot();
}

void TimelineView::panByFraction(double fraction)
{
    const QCPRange r = xAxis->range();
    const double d = r.size() * fraction;
    xAxis->setRange(r.lower + d, r.upper + d);
    clampXRange();
    requestReplot();
}

void TimelineView::scrollLanes(double lanes)
{
    m_scrollLanes = std::max(0.0, m_scrollLanes + lanes);
    requestReplot();
}

static double cursorXOr(const TimelineView* view, double fallback)
{
    const QPoint p = view->mapFromGlobal(QCursor::pos());
    const QRect area = view->xAxis->axisRect()->rect();
    return area.contains(p) ? double(p.x()) : fallback;
}

void TimelineView::zoomIn()
{
    zoomAround(0.8, cursorXOr(this, plotArea().center().x()));
}

void TimelineView::zoomOut()
{
    zoomAround(1.25, cursorXOr(this, plotArea().center().x()));
}

void TimelineView::panLeft()
{
    panByFraction(-0.1);
}

void TimelineView::panRight()
{
    panByFraction(0.1);
}

void TimelineView::requestReplot()
{
    replot(QCustomPlot::rpQueuedReplot);
}

void TimelineView::setHighlightedSpans(std::vector<uint32_t> spans, bool joined)
{
    m_highlighted = std::move(spans);
    m_highlightJoined = joined;
    replotOverlay();
}

void TimelineView::replotOverlay()
{
    update(); // the overlay is painted in paintEvent, over the unchanged buffer
}

void TimelineView::setHovered(int spanIndex)
{
    if (spanIndex == m_hovered)
        return;
    m_hovered = spanIndex;
    replotOverlay();
    Q_EMIT spanHovered(spanIndex);
}

void TimelineView::selectSpan(int spanIndex)
{
    if (!m_trace || spanIndex < 0 || size_t(spanIndex) >= m_trace->spanCount())
        spanIndex = -1;
    const bool changed = spanIndex != m_selected;
    m_selected = spanIndex;
    m_selectedFlows.clear();
    if (spanIndex >= 0) {
        // Flows are sorted by `from`: the outgoing ones are one binary search away; incoming ones need a scan.
        const auto& flows = m_trace->flows;
        auto lo = std::lower_bound(flows.begin(), flows.end(), uint32_t(spanIndex),
                                   [](const Flow& f, uint32_t s) { return f.from < s; });
        for (auto it = lo; it != flows.end() && it->from == uint32_t(spanIndex); ++it)
            m_selectedFlows.push_back(*it);
        for (const Flow& f : flows)
            if (f.to == uint32_t(spanIndex))
                m_selectedFlows.push_back(f);

        // Scroll (and zoom if it is too small to see) the span into view.
        const double s = double(m_trace->spans.start[size_t(spanIndex)] - m_layout->origin());
        const double e = double(m_trace->spans.end[size_t(spanIndex)] - m_layout->origin());
        const QCPRange r = xAxis->range();
        const double pxPerNs = plotArea().width() / std::max(r.size(), 1e-9);
        double width = r.size();
        if ((e - s) * pxPerNs < 3)
            width = std::max((e - s) * 10, 1000.0);
        if (e - s > width * 0.9)
            width = (e - s) * 1.25;
        if (width != r.size() || s < r.lower || e > r.upper) {
            const double c = (s + e) / 2;
            xAxis->setRange(c - width / 2, c + width / 2);
            clampXRange();
        }
        const int row = m_layout->rowOfTrack(m_trace->spans.track[size_t(spanIndex)]);
        if (row >= 0) {
            const double lane = m_layout->rows()[size_t(row)].firstLane + m_layout->laneOfSpan(uint32_t(spanIndex));
            const double visible = visibleLanes();
            if (lane < m_scrollLanes || lane + 1 > m_scrollLanes + visible)
                m_scrollLanes = std::max(0.0, lane - visible / 2);
        }
        requestReplot();
    } else {
        replotOverlay();
    }
    if (changed)
        Q_EMIT spanSelected(spanIndex);
}

QSize TimelineView::minimumSizeHint() const
{
    const QSize hint = QCustomPlot::minimumSizeHint();
    return {std::min(hint.width(), m_rowLabelWidth + 160), hint.height()};
}

void TimelineView::resizeEvent(QResizeEvent* event)
{
    QCustomPlot::resizeEvent(event);
    updateMargins();
}

void TimelineView::leaveEvent(QEvent* event)
{
    setHovered(-1);
    QCustomPlot::leaveEvent(event);
}

void TimelineView::paintEvent(QPaintEvent* event)
{
    Q_UNUSED(event);
    QCPPainter painter(this);
    if (!painter.isActive())
        return;
    // WA_OpaquePaintEvent: every pixel must be painted. Before the first replot, or after a resize before the queued
    // replot, the buffer is missing or smaller than the widget: show the background there.
    const bool ready = !mPaintBuffers.isEmpty() && !mPaintBuffers.first()->invalidated();
    if (!ready) {
        painter.fillRect(rect(), m_theme->plotBackground);
        replot(rpQueuedReplot);
        return;
    }
    const QSize buffer = mPaintBuffers.first()->size();
    if (buffer.width() < width())
        painter.fillRect(QRect(buffer.width(), 0, width() - buffer.width(), height()), m_theme->plotBackground);
    if (buffer.height() < height())
        painter.fillRect(QRect(0, buffer.height(), width(), height() - buffer.height()), m_theme->plotBackground);
    painter.setCompositionMode(QPainter::CompositionMode_Source); // the buffer is opaque: a copy
    for (const auto& b : std::as_const(mPaintBuffers))
        b->draw(&painter);
    painter.setCompositionMode(QPainter::CompositionMode_SourceOver);
    m_overlay->paint(&painter);
}

bool TimelineView::event(QEvent* event)
{
    if (event->type() == QEvent::ToolTip) {
        auto* help = static_cast<QHelpEvent*>(event);
        const int s = spanAt(help->pos());
        if (s >= 0)
            QToolTip::showText(help->globalPos(), spanToolTip(s), this);
        else
            QToolTip::hideText();
        return true;
    }
    return QCustomPlot::event(event);
}

void TimelineView::changeEvent(QEvent* event)
{
    QCustomPlot::changeEvent(event);
    if (isThemeChange(event) && !m_fixedTheme && &Theme::of(this) != m_theme) {
        applyTheme();
        applyFonts();
        requestReplot();
    }
}

void TimelineView::setMinimumVisibleLanes(int lanes)
{
    m_minimumLanes = std::max(0, lanes);
    updateMargins();
}

} // namespace streamscope
