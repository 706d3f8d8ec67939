// The ranks of a job on the timeline: each rank's rows folded under its header row or shown (timeline_view.h).
#include "timeline_plottable.h"
#include "timeline_view.h"

#include <algorithm>

namespace streamscope {

void TimelineView::setRankCollapsed(int rank, bool collapsed)
{
    if (!m_trace || isRankCollapsed(rank) == collapsed)
        return;
    if (collapsed)
        m_collapsedRanks.insert(rank);
    else
        m_collapsedRanks.erase(rank);
    // The rows change; the spans, the arrows, the selection and the time range do not.
    std::shared_ptr<const FlowIndex> flows = m_plottable->flowIndex();
    m_plottable->setTrace(nullptr, nullptr);
    m_layout = std::make_shared<const TimelineLayout>(*m_trace, m_collapsedRanks);
    m_plottable->setTrace(m_trace.get(), m_layout.get(), std::move(flows));
    updateMargins();
    requestReplot(); // the vertical scroll is clamped to the new rows when the plot is laid out
}

bool TimelineView::toggleRankAt(QPoint pos)
{
    const QRect area = plotArea();
    if (!m_trace || pos.x() >= area.left() || pos.y() < area.top() || pos.y() > area.bottom())
        return false;
    const int row = m_layout->rowAtLane(yAxis->pixelToCoord(pos.y()));
    if (row < 0 || m_layout->rows()[size_t(row)].kind != TimelineRowKind::RankHeader)
        return false;
    const int rank = m_layout->rows()[size_t(row)].rank;
    setRankCollapsed(rank, !isRankCollapsed(rank));
    return true;
}

} // namespace streamscope
