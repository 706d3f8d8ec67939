#include "concurrency_plot.h"

#include "analysis.h"
#include "timeline_view.h"

#include <algorithm>

namespace streamscope {

ConcurrencyPlot::ConcurrencyPlot(QWidget* parent) : QCustomPlot(parent)
{
    setObjectName(QStringLiteral("concurrencyPlot"));
    setMinimumHeight(70);
    setMaximumHeight(140);
    setNoAntialiasingOnDrag(true);
    m_graph = addGraph();
    m_graph->setLineStyle(QCPGraph::lsStepLeft);
    m_graph->setPen(QPen(QColor(0, 114, 178), 1.5));
    m_graph->setBrush(QColor(0, 114, 178, 60));
    yAxis->setLabel(QStringLiteral("running"));
    yAxis->setSubTicks(false);
    xAxis->setTickLabels(false);
    xAxis->setTicks(false);
    auto ticker = QSharedPointer<QCPAxisTickerFixed>::create();
    ticker->setTickStep(1.0);
    ticker->setScaleStrategy(QCPAxisTickerFixed::ssMultiples);
    yAxis->setTicker(ticker);
    yAxis->grid()->setPen(QPen(QColor(0xE0, 0xE0, 0xE0)));
    xAxis->grid()->setVisible(false);
    axisRect()->setAutoMargins(QCP::msTop | QCP::msBottom);
    setToolTip(QStringLiteral("GPU operations running at once (all devices)"));
}

void ConcurrencyPlot::setTrace(std::shared_ptr<const Trace> trace)
{
    m_trace = std::move(trace);
    QVector<double> keys, values;
    m_max = 0;
    m_origin = 0;
    if (m_trace && m_trace->spanCount() > 0) {
        m_origin = double(m_trace->timeRange().first);
        const auto steps = concurrencySteps(*m_trace);
        keys.reserve(qsizetype(steps.size()));
        values.reserve(qsizetype(steps.size()));
        for (const auto& s : steps) {
            keys.push_back(double(s.time) - m_origin);
            values.push_back(double(s.count));
            m_max = std::max(m_max, s.count);
        }
        if (!keys.isEmpty()) {
            // Close the last step at the end of the trace.
            keys.push_back(double(m_trace->timeRange().second) - m_origin);
            values.push_back(values.back());
        }
    }
    m_graph->setData(keys, values, true);
    yAxis->setRange(0, std::max(1, m_max) + 0.5);
    replot(rpQueuedReplot);
}

std::pair<double, double> ConcurrencyPlot::visibleTimeRange() const
{
    return {xAxis->range().lower + m_origin, xAxis->range().upper + m_origin};
}

void ConcurrencyPlot::setVisibleTimeRange(double startNs, double endNs)
{
    xAxis->setRange(startNs - m_origin, endNs - m_origin);
    replot(rpQueuedReplot);
}

void ConcurrencyPlot::alignWith(const TimelineView* timeline)
{
    // Both widgets span the same width of the centre: the same margins put the two time axes on top of each other.
    const QRect area = timeline->timeAxisRect();
    const QMargins wanted(area.left(), 0, std::max(0, timeline->width() - area.right() - 1), 0);
    const auto [from, to] = timeline->visibleTimeRange();
    const auto [mine0, mine1] = visibleTimeRange();
    if (axisRect()->margins() == wanted && from == mine0 && to == mine1)
        return;
    axisRect()->setMargins(wanted);
    setVisibleTimeRange(from, to);
}

void ConcurrencyPlot::followTimeline(TimelineView* timeline)
{
    connect(timeline, &TimelineView::visibleTimeRangeChanged, this, [this, timeline] { alignWith(timeline); });
    connect(timeline, &QCustomPlot::afterReplot, this, [this, timeline] { alignWith(timeline); });
}

} // namespace streamscope
