// Concurrency over time under the timeline: how many GPU operations ran at once, on the timeline's time axis.
#pragma once

#include "timeline_plottable.h" // includes QCustomPlot (see there)
#include "trace.h"

#include <memory>

namespace streamscope {

class TimelineView;

class ConcurrencyPlot : public QCustomPlot {
    Q_OBJECT
public:
    explicit ConcurrencyPlot(QWidget* parent = nullptr);

    void setTrace(std::shared_ptr<const Trace> trace);
    // Follows the timeline: the same visible time range, the plot area aligned under the timeline's.
    void followTimeline(TimelineView* timeline);
    // The step function shown: points (time ns relative to the trace's first span, operations running).
    const QCPGraph* graph0() const { return m_graph; }
    int maxConcurrency() const { return m_max; }
    // The visible range in absolute ns, as on the timeline.
    std::pair<double, double> visibleTimeRange() const;

public Q_SLOTS:
    void setVisibleTimeRange(double startNs, double endNs);

private:
    void alignWith(const TimelineView* timeline);

    std::shared_ptr<const Trace> m_trace;
    QCPGraph* m_graph = nullptr;
    double m_origin = 0;
    int m_max = 0;
};

} // namespace streamscope
