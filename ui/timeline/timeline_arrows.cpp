// The timeline's dependency arrows: where each flow leaves and enters its spans, which of them are drawn, and how
// an arrow is painted (straight for launches and syncs, curved between GPU operations).
#include "timeline_plottable.h"
#include "timeline_plottable_mapping.h"

#include <QFontMetricsF>
#include <QPainter>
#include <QPainterPath>
#include <QVarLengthArray>

#include <algorithm>
#include <cmath>
#include <limits>

namespace streamscope {

bool flowIsCurved(FlowKind kind)
{
    return kind == FlowKind::Event || kind == FlowKind::Implicit;
}

QPointF TimelinePlottable::flowFrom(const Flow& f) const
{
    const Mapping m = mapping();
    if (!m_trace || !m_layout)
        return {};
    const Trace& tr = *m_trace;
    const QRectF a = spanRect(f.from), b = spanRect(f.to);
    if (flowIsCurved(f.kind)) // GPU-to-GPU dependencies leave the end of the work that had to finish, mid-height
        return {m.xOfTime(tr.spans.end[f.from]), a.center().y()};
    // Host <-> GPU: straight, between the bars' facing edges. A launch leaves its call at the moment the op began
    // when that was during the call; a sync leaves the end of the GPU op the host waited for.
    // An op's call arrow leaves the op where the call began.
    // A collective's parts on two ranks start together: the arrow joins their starts.
    if (f.kind == FlowKind::Collective)
        return {m.xOfTime(tr.spans.start[f.from]), b.center().y() > a.center().y() ? a.bottom() : a.top()};
    const int64_t t = f.kind == FlowKind::Launch || f.kind == FlowKind::Call
        ? std::clamp(tr.spans.start[f.to], tr.spans.start[f.from], tr.spans.end[f.from])
        : tr.spans.end[f.from];
    const double y = b.center().y() > a.center().y() ? a.bottom() : a.top();
    return {m.xOfTime(t), y};
}

QPointF TimelinePlottable::flowTo(const Flow& f) const
{
    const Mapping m = mapping();
    if (!m_trace || !m_layout)
        return {};
    const Trace& tr = *m_trace;
    const QRectF a = spanRect(f.from), b = spanRect(f.to);
    const double below = b.center().y() - a.center().y();
    if (flowIsCurved(f.kind)) {
        // Finish-to-start, as Gantt charts draw it: into the edge of the waiting op that faces the source, just
        // inside its start.
        const double x = m.xOfTime(tr.spans.start[f.to]) + std::min(3.0, b.width() / 2);
        return {x, below > 0 ? b.top() : (below < 0 ? b.bottom() : b.center().y())};
    }
    // A sync ends the host call that waited: point at its end; a launch at the start of the op.
    const int64_t t = f.kind == FlowKind::Sync ? tr.spans.end[f.to] : tr.spans.start[f.to];
    return {m.xOfTime(t), below > 0 ? b.top() : b.bottom()};
}

void TimelinePlottable::computeArrows(const Mapping& m, TimelineDrawList& out) const
{
    if (!m_flows || m_flows->order.empty())
        return;
    bool any = false;
    for (bool v : m_flowVisible)
        any = any || v;
    if (!any)
        return;
    const Trace& tr = *m_trace;
    const int64_t t0 = m.origin + int64_t(std::floor(m.keyOfX(m.rect.left())));
    const int64_t t1 = m.origin + int64_t(std::ceil(m.keyOfX(m.rect.right() + 1)));
    // Candidates: min time <= t1 and (prefix) max time >= t0.
    const auto& minTime = m_flows->minTime;
    const size_t hi = size_t(std::upper_bound(minTime.begin(), minTime.end(), t1) - minTime.begin());
    const auto prefixMax = m_flows->prefixMaxTime.begin();
    const size_t lo = size_t(std::lower_bound(prefixMax, prefixMax + ptrdiff_t(hi), t0) - prefixMax);
    if (hi <= lo)
        return;
    if (hi - lo > size_t(m_maxFlows) * 16) {
        out.stats.flowsSkipped = hi - lo; // far too many to read: do not even look
        return;
    }
    const double laneTop = m.laneOfY(m.rect.top()), laneBottom = m.laneOfY(m.rect.bottom() + 1);
    const TimelineLayout& lay = *m_layout;
    auto laneOf = [&](uint32_t span) {
        const int row = lay.rowOfTrack(tr.spans.track[span]);
        return row < 0 ? -1.0 : double(lay.rows()[size_t(row)].firstLane + lay.laneOfSpan(span));
    };
    size_t count = 0;
    for (size_t i = lo; i < hi; ++i) {
        const uint32_t fi = m_flows->order[i];
        const Flow& f = tr.flows[fi];
        if (!m_flowVisible[size_t(f.kind)])
            continue;
        if (std::max(tr.spans.end[f.from], tr.spans.end[f.to]) < t0)
            continue;
        // A launch arrow is only legible when its API call is: at a wide view a thread's calls share a few pixels
        // and their arrows would fan out into a grey wedge over the bars. (The selected span's arrows are always
        // drawn, on the overlay.)
        if (f.kind == FlowKind::Launch && double(tr.spans.end[f.from] - tr.spans.start[f.from]) * m.bx < 3)
            continue;
        if (f.kind == FlowKind::Call && double(tr.spans.end[f.to] - tr.spans.start[f.to]) * m.bx < 3)
            continue; // the same for an op's calls
        const double la = laneOf(f.from), lb = laneOf(f.to);
        if (la < 0 || lb < 0 || (la + 1 <= laneTop && lb + 1 <= laneTop) || (la >= laneBottom && lb >= laneBottom))
            continue;
        ++count;
        if (count > size_t(m_maxFlows))
            continue;
        out.arrows.push_back({flowFrom(f), flowTo(f), f.kind, fi});
    }
    if (count > size_t(m_maxFlows)) {
        out.arrows.clear();
        out.stats.flowsSkipped = count;
    }
    out.stats.flows = out.arrows.size();
    for (const auto& a : out.arrows)
        ++out.stats.flowsByKind[size_t(a.kind)];
}

void TimelinePlottable::drawArrow(QPainter* painter, QPointF from, QPointF to, double headSize, bool curved)
{
    const QPointF d = to - from;
    const double len = std::hypot(d.x(), d.y());
    if (len < 0.5) {
        painter->drawLine(from, to);
        return;
    }
    QPointF u = d / len; // direction of the head
    QPointF base = to - u * headSize;
    if (curved) {
        // Finish-to-start connector: leaves the end of the source to the right, enters the target vertically (or,
        // within one row, from the left). An arrow between the end of one bar and the start of the next one right
        // below it keeps a visible length and direction.
        const bool vertical = std::abs(d.y()) > 0.5;
        u = vertical ? QPointF(0, d.y() > 0 ? 1 : -1) : QPointF(1, 0);
        base = to - u * headSize;
        const double reachX = std::max(std::abs(d.x()) / 2, headSize * 1.5);
        const double reachY = std::max(std::abs(d.y()) / 2, headSize);
        QPainterPath path(from);
        path.cubicTo(from + QPointF(reachX, 0), base - u * (vertical ? reachY : reachX), base);
        const QBrush oldBrush = painter->brush();
        painter->setBrush(Qt::NoBrush);
        painter->drawPath(path);
        painter->setBrush(oldBrush);
    } else {
        painter->drawLine(from, base);
    }
    const QPointF n(-u.y(), u.x());
    const QPointF head[3] = {to, base + n * (headSize * 0.5), base - n * (headSize * 0.5)};
    const QPen old = painter->pen();
    painter->setPen(Qt::NoPen);
    painter->setBrush(old.color());
    painter->drawPolygon(head, 3);
    painter->setPen(old);
    painter->setBrush(Qt::NoBrush);
}

} // namespace streamscope
