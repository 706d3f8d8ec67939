// What one draw of the timeline shows (TimelineDrawList): per lane, the visible spans as rectangles, those narrower
// than a pixel folded into one block per pixel column, so that a wide view costs O(columns), not O(spans); their
// labels, and the arrows (timeline_arrows.cpp).
#include "timeline_plottable.h"
#include "timeline_plottable_mapping.h"

#include <QFontMetricsF>
#include <QPainter>
#include <QPainterPath>
#include <QVarLengthArray>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

namespace streamscope {

void TimelineDrawList::clear()
{
    runs.clear();
    laneTop.clear();
    labels.clear();
    uncertainRuns.clear();
    arrows.clear();
    stats = {};
}

bool TimelineDrawList::drawsSpan(uint32_t span) const
{
    return std::any_of(runs.begin(), runs.end(), [span](const Run& r) { return r.firstSpan == span; });
}

void TimelineDrawList::Runs::grow()
{
    const size_t capacity = std::max<size_t>(1024, m_capacity * 2);
    std::unique_ptr<Run[]> data(new Run[capacity]);
    std::copy(m_data.get(), m_data.get() + m_size, data.get());
    m_data = std::move(data);
    m_capacity = capacity;
}

std::vector<QRect> TimelineDrawList::rectsOfKind(SpanKind kind) const
{
    std::vector<QRect> out;
    for (const Run& r : runs)
        if (r.kind == kind)
            out.push_back(rectOf(r));
    return out;
}

std::vector<QRect> TimelineDrawList::dividersOfKind(SpanKind kind) const
{
    std::vector<QRect> out;
    for (const Run& r : runs)
        if (r.divider && r.kind == kind)
            out.push_back(QRect(r.x0, laneTop[r.lane], 1, barHeight));
    return out;
}

// Pixel column of x, clamped to [lo, hi] (also keeps far-off coordinates out of int range). No libm call: x86-64
// without SSE4.1 has no floor instruction, and this runs for every span in view.
static inline int floorPx(double x, int lo, int hi)
{
    if (!(x > lo))
        return lo;
    if (x > hi)
        return hi;
    const int i = int(x);
    return i - (double(i) > x);
}

static inline int ceilPx(double x, int lo, int hi)
{
    if (!(x > lo))
        return lo;
    if (x > hi)
        return hi;
    const int i = int(x);
    return i + (double(i) < x);
}

namespace {

// What the walk over one lane needs: the columns, the pixel mapping and where to put the lane's rectangles.
struct LaneWalk {
    TimeColumn::const_iterator start;
    TimeColumn::const_iterator end;
    const SpanKind* kinds;
    double ax, bx, invBx;
    int64_t origin;
    int y, barH, pxLo, pxHi, labelMinWidth;
    uint16_t row;

    double px(int64_t t) const { return ax + bx * double(t - origin); }
    // The first integer time at or right of pixel boundary `column`.
    int64_t timeAtColumn(int column) const
    {
        const double v = (column - ax) * invBx;
        const auto i = int64_t(v); // truncates towards zero: the ceiling for v <= 0
        return origin + i + (double(i) < v);
    }
};

// Appends a span drawn as a bar of its own, pixel columns [L, R), after the runs of its lane from `laneStart` on.
// A bar of 4 px or more leaves its last column empty, so that a gap tells back-to-back spans apart; where the next
// bar starts in that column (the spans are less than a pixel apart) a divider in a shade of the bar's colour takes
// its place: otherwise ten back-to-back kernels of one stream read as one long bar.
inline void appendSpanRun(const LaneWalk& w, TimelineDrawList& out, size_t laneStart, int L, int R, uint32_t s,
                          SpanKind kind, double exactWidth)
{
    auto& runs = out.runs;
    int width = std::max(1, R - L);
    if (width >= 4)
        --width;
    bool divider = false;
    if (runs.size() > laneStart) {
        TimelineDrawList::Run& prev = runs.back();
        if (!prev.merged && prev.kind == kind && L <= prev.x1 && exactWidth >= 3
            && w.px(w.end[prev.firstSpan]) - w.px(w.start[prev.firstSpan]) >= 3) {
            divider = true;
            prev.x1 = std::max(prev.x0 + 1, std::min(prev.x1, L));
        }
    }
    runs.push_back({L, L + width, s, 1, w.row, kind, false, divider});
    ++out.stats.spanRects;
    if (width >= w.labelMinWidth)
        out.labels.push_back({QRect(L, w.y, width, w.barH), s});
}

// Walks the spans [first, last) of one lane (positions in the lane; `Contiguous`: span index = base + position,
// else lane[position]) and appends their rectangles. Spans a pixel wide or more get one rectangle each; the ones
// starting in one pixel column fold into one block, found by galloping search, so a wide view costs O(columns).
template <bool Contiguous>
void walkLane(const LaneWalk& w, const uint32_t* lane, uint32_t base, size_t first, size_t last, TimelineDrawList& out,
              size_t& visited)
{
    auto id = [lane, base](size_t k) -> uint32_t {
        if constexpr (Contiguous)
            return base + uint32_t(k);
        else
            return lane[k];
    };
    auto& runs = out.runs;
    const size_t laneStart = runs.size(); // runs before this belong to other lanes
    size_t lastCount = 1;                 // spans in the last pixel column
    size_t p = first;
    while (p < last) {
        const uint32_t s = id(p);
        ++visited;
        const double xs = w.px(w.start[s]), xe = w.px(w.end[s]);
        const SpanKind kind = w.kinds[s];
        if (xe - xs >= 1.0) {
            appendSpanRun(w, out, laneStart, floorPx(xs, w.pxLo, w.pxHi), ceilPx(xe, w.pxLo, w.pxHi), s, kind, xe - xs);
            ++p;
            continue;
        }
        // Sub-pixel: every span starting in this pixel column joins one block. Only the last of them can reach past
        // the column (spans in a lane are disjoint); if it is a pixel wide it is drawn on its own.
        const int c = floorPx(xs, w.pxLo - 1, w.pxHi);
        const int64_t next = w.timeAtColumn(c + 1);
        // The first span starting in a later column: look next to where the previous column's count says it is
        // (neighbouring columns hold about as many spans; the few steps stay within a cache line or two, which
        // matters when millions of spans do not fit in the cache), then gallop or bisect if it is not there.
        auto before = [&](size_t k) { return w.start[id(k)] < next; };
        size_t q;
        const size_t guess = std::min(p + std::max<size_t>(1, lastCount), last);
        if (guess > p + 1 && !before(guess - 1)) {
            size_t k = guess - 1;
            for (int n = 0; n < 8 && k > p + 1 && !before(k - 1); ++n)
                --k;
            ++visited;
            if (k == p + 1 || before(k - 1)) {
                q = k;
            } else {
                size_t lo = p + 1, hi = k - 1; // before(lo - 1), !before(hi)
                while (lo < hi) {
                    const size_t mid = lo + (hi - lo) / 2;
                    if (before(mid))
                        lo = mid + 1;
                    else
                        hi = mid;
                }
                q = lo;
            }
        } else {
            size_t k = guess;
            for (int n = 0; n < 8 && k < last && before(k); ++n)
                ++k;
            ++visited;
            size_t lo = k, hi = k, step = std::max<size_t>(8, lastCount);
            while (hi < last && before(hi)) {
                ++visited;
                lo = hi + 1;
                hi = std::min(hi + step, last);
                step *= 2;
            }
            while (lo < hi) {
                const size_t mid = lo + (hi - lo) / 2;
                if (before(mid))
                    lo = mid + 1;
                else
                    hi = mid;
            }
            q = lo;
        }
        q = std::max(q, p + 1);
        if (q - 1 != p) {
            const uint32_t l = id(q - 1);
            if (w.px(w.end[l]) - w.px(w.start[l]) >= 1.0)
                --q;
        }
        const uint32_t count = uint32_t(q - p);
        lastCount = count;
        // With millions of spans the columns' first spans are cache misses apart: ask for the one a few columns
        // ahead now, so that it has arrived when the walk gets there.
        if (const size_t ahead = q + 4 * size_t(count); ahead < last) {
            const uint32_t a = id(ahead);
            w.start.prefetch(a);
            w.end.prefetch(a);
            __builtin_prefetch(w.kinds + a);
        }
        // Join the previous block of this lane when it is of the same kind and touches this column.
        if (runs.size() > laneStart && runs.back().merged && runs.back().kind == kind && runs.back().x1 >= c) {
            runs.back().x1 = std::max(runs.back().x1, c + 1);
            runs.back().spanCount += count;
        } else {
            runs.push_back({c, c + 1, s, count, w.row, kind, true, false});
            ++out.stats.mergedRects;
        }
        p = q;
    }
}

// Walks the items of a lane's summary level (lane_summary.h) that lie in [t0, t1) instead of its spans: a pixel
// column holds one to three buckets, so the walk costs O(columns) however many spans are in view, and it reads one
// small sequential array instead of missing the cache at every column of a multi-gigabyte span column. A span of
// its own that is a pixel wide is drawn as the span walk draws it; the other items starting in one pixel column
// become one block of their dominant kind (by time), joined with the block before when of the same kind.
void walkSummary(const LaneWalk& w, const LaneSummaryLevel& level, const TimelineLane& lane, int64_t t0, int64_t t1,
                 TimelineDrawList& out, size_t& visited)
{
    const auto& items = level.items;
    size_t i = firstItemEndingAfter(level, 0, t0);
    const size_t e = firstItemStartingAtOrAfter(level, i, t1);
    auto& runs = out.runs;
    const size_t laneStart = runs.size();
    std::array<float, kSpanKindCount> weight{};
    while (i < e) {
        const LaneSummaryItem& it = items[i];
        ++visited;
        const double xs = w.px(it.start), xe = w.px(it.end);
        if (it.count == 1 && xe - xs >= 1.0) {
            appendSpanRun(w, out, laneStart, floorPx(xs, w.pxLo, w.pxHi), ceilPx(xe, w.pxLo, w.pxHi), lane.at(it.first),
                          it.kind, xe - xs);
            ++i;
            continue;
        }
        const int c = floorPx(xs, w.pxLo - 1, w.pxHi);
        uint32_t count = 0;
        double groupEnd = xe;
        size_t j = i;
        for (; j < e; ++j) {
            const LaneSummaryItem& q = items[j];
            const double qs = w.px(q.start), qe = w.px(q.end);
            if (j > i && (floorPx(qs, w.pxLo - 1, w.pxHi) != c || (q.count == 1 && qe - qs >= 1.0)))
                break;
            weight[size_t(q.kind)] += std::max(q.weight, 1.0f);
            count += q.count;
            groupEnd = std::max(groupEnd, qe);
        }
        visited += j - i - 1;
        int best = 0; // a tie goes to the lower kind, as in the summary
        for (int k = 0; k < kSpanKindCount; ++k) {
            if (weight[size_t(k)] > weight[size_t(best)])
                best = k;
        }
        weight.fill(0.0f);
        const auto kind = SpanKind(best);
        // A block's spans start in a bucket, which may straddle two columns: it covers the columns its spans reach.
        const int x1 = std::max(c + 1, ceilPx(groupEnd, w.pxLo, w.pxHi));
        if (runs.size() > laneStart && runs.back().merged && runs.back().kind == kind && runs.back().x1 >= c) {
            runs.back().x1 = std::max(runs.back().x1, x1);
            runs.back().spanCount += count;
        } else {
            runs.push_back({c, x1, lane.at(it.first), count, w.row, kind, true, false});
            ++out.stats.mergedRects;
        }
        i = j;
    }
}

} // namespace

void TimelinePlottable::computeDrawList(TimelineDrawList& out) const
{
    out.clear();
    if (!m_trace || !m_layout || !m_trace->finalized())
        return;
    const Mapping m = mapping();
    if (!m.valid)
        return;
    const Trace& tr = *m_trace;
    const TimelineLayout& lay = *m_layout;

    // Visible time window, a pixel wider each side, in absolute ns.
    const double k0 = m.keyOfX(m.rect.left() - 1), k1 = m.keyOfX(m.rect.right() + 2);
    const int64_t t0 = m.origin + int64_t(std::floor(std::max(k0, -9e18)));
    const int64_t t1 = m.origin + int64_t(std::ceil(std::min(k1, 9e18)));
    const double laneTop = m.laneOfY(m.rect.top()), laneBottom = m.laneOfY(m.rect.bottom() + 1);
    const double inset = std::clamp(std::round(m.by * 0.12), 1.0, 4.0);

    LaneWalk w;
    w.start = tr.spans.start.begin();
    w.end = tr.spans.end.begin();
    w.kinds = tr.spans.kind.data();
    w.ax = m.ax;
    w.bx = m.bx;
    w.invBx = 1.0 / m.bx;
    w.origin = m.origin;
    w.barH = std::max(1, int(std::lround(m.by - 2 * inset)));
    w.pxLo = m.rect.left() - 2;
    w.pxHi = m.rect.right() + 3;
    // Bars wide enough for a character and an ellipsis in the label font are candidates (drawLabels measures); a
    // threshold from the lane height left 44 px "transpose" bars unlabelled in an exported 01 lesson.
    w.labelMinWidth = m.by >= 9 ? std::max(10, int(labelFont().pixelSize() * 1.1)) : std::numeric_limits<int>::max();
    out.canvasLeft = w.pxLo;
    out.canvasRight = w.pxHi + 1;
    out.barHeight = w.barH;

    size_t visited = 0;
    const auto& rows = lay.rows();
    int r = std::max(0, lay.rowAtLane(std::max(0.0, laneTop)));
    for (; r < int(rows.size()) && rows[size_t(r)].firstLane < laneBottom; ++r) {
        const TimelineRow& row = rows[size_t(r)];
        if (row.firstGlobalLane < 0 || row.firstLane + row.laneCount <= laneTop)
            continue;
        ++out.stats.rowsDrawn;
        const int drawn = globalLanesOfRow(row);
        for (int l = 0; l < drawn; ++l) {
            const int laneIndex = drawnLaneOfRow(row, l);
            if (laneIndex + 1 <= laneTop || laneIndex >= laneBottom)
                continue;
            const size_t g = size_t(row.firstGlobalLane + l);
            const TimelineLane& lane = lay.lane(g);
            const size_t p = firstEndingAfter(tr, lane, 0, t0);
            const size_t e = firstStartingAtOrAfter(tr, lane, p, t1);
            if (p == e)
                continue;
            w.y = int(std::lround(m.yOfLane(laneIndex) + inset));
            w.row = uint16_t(std::min<size_t>(out.laneTop.size(), std::numeric_limits<uint16_t>::max()));
            out.laneTop.push_back(w.y);
            // Wide views draw a summary level's items (O(columns)); narrower ones the spans themselves. Lanes of
            // tracks without overlaps hold consecutive span indices: no indirection.
            const LaneSummaryLevel* level = m_useSummaries ? lay.summary(g).levelFor(w.invBx) : nullptr;
            if (level)
                walkSummary(w, *level, lane, t0, t1, out, visited);
            else if (!lane.list)
                walkLane<true>(w, nullptr, lane.base, p, e, out, visited);
            else
                walkLane<false>(w, lane.list, 0, p, e, out, visited);
        }
    }
    out.stats.spansVisited = visited;
    out.stats.labels = out.labels.size();
    if (m_anyUncertain) {
        // Only bars of their own, wide enough to show a mark; blocks of sub-pixel spans stay plain.
        const auto& runs = out.runs;
        for (size_t k = 0; k < runs.size(); ++k)
            if (!runs[k].merged && runs[k].x1 - runs[k].x0 >= 4
                && tr.spans.timingOf(runs[k].firstSpan) == SpanTiming::Uncertain)
                out.uncertainRuns.push_back(uint32_t(k));
        out.stats.uncertainMarks = out.uncertainRuns.size();
    }
    computeArrows(m, out);
}

} // namespace streamscope
