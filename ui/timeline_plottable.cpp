#include "timeline_plottable.h"

#include <QFontMetricsF>
#include <QPainter>
#include <QPainterPath>
#include <QVarLengthArray>

#include <algorithm>
#include <cmath>
#include <limits>

namespace streamscope {

QColor spanKindColor(SpanKind kind)
{
    // Okabe & Ito (2008), "Color Universal Design": distinguishable with protanopia, deuteranopia and tritanopia.
    switch (kind) {
    case SpanKind::Kernel: return QColor(0x00, 0x72, 0xB2);    // blue
    case SpanKind::MemcpyH2D: return QColor(0x00, 0x9E, 0x73); // bluish green (Nsight: HtoD green)
    case SpanKind::MemcpyD2H: return QColor(0xD5, 0x5E, 0x00); // vermillion (Nsight: DtoH red)
    case SpanKind::MemcpyD2D: return QColor(0xE6, 0x9F, 0x00); // orange
    case SpanKind::MemcpyP2P: return QColor(0xCC, 0x79, 0xA7); // reddish purple
    case SpanKind::Memset: return QColor(0xF0, 0xE4, 0x42);    // yellow
    case SpanKind::HostFunc: return QColor(0x56, 0xB4, 0xE9);  // sky blue
    case SpanKind::ApiCall: return QColor(0xA6, 0xA6, 0xA6);   // grey: overhead, not work
    case SpanKind::Sync: return QColor(0x88, 0x22, 0x55);      // wine: the host thread is blocked
    case SpanKind::HostWork: return QColor(0xDD, 0xCC, 0x77);  // sand (Tol): CPU work
    case SpanKind::Range: return QColor(0xD4, 0xDC, 0xE6);     // pale slate: encloses work, is none itself
    }
    return QColor(Qt::gray);
}

QColor spanKindTextColor(SpanKind kind)
{
    const QColor c = spanKindColor(kind);
    // Relative luminance (sRGB approximation): dark text on light bars, white on dark ones.
    const double l = 0.2126 * c.redF() * c.redF() + 0.7152 * c.greenF() * c.greenF() + 0.0722 * c.blueF() * c.blueF();
    return l > 0.18 ? QColor(0x10, 0x10, 0x10) : QColor(Qt::white);
}

QString spanKindLabel(SpanKind kind)
{
    switch (kind) {
    case SpanKind::Kernel: return QStringLiteral("kernel");
    case SpanKind::MemcpyH2D: return QStringLiteral("memcpy HtoD");
    case SpanKind::MemcpyD2H: return QStringLiteral("memcpy DtoH");
    case SpanKind::MemcpyD2D: return QStringLiteral("memcpy DtoD");
    case SpanKind::MemcpyP2P: return QStringLiteral("memcpy peer");
    case SpanKind::Memset: return QStringLiteral("memset");
    case SpanKind::HostFunc: return QStringLiteral("host function");
    case SpanKind::ApiCall: return QStringLiteral("API call");
    case SpanKind::Sync: return QStringLiteral("sync (blocked)");
    case SpanKind::HostWork: return QStringLiteral("host work");
    case SpanKind::Range: return QStringLiteral("range (op, annotation)");
    }
    return {};
}

QString trackNameText(const QString& word, const std::string& name)
{
    const QString n = QString::fromStdString(name);
    const QString noun = word.section(QLatin1Char(' '), -1); // "host thread" -> "thread"
    if (n.startsWith(noun + QLatin1Char(' '), Qt::CaseInsensitive))
        return word.chopped(noun.size()) + n;
    return word + QLatin1Char(' ') + n;
}

QColor flowKindColor(FlowKind kind)
{
    switch (kind) {
    case FlowKind::Launch: return QColor(0x50, 0x50, 0x50);
    case FlowKind::Event: return QColor(0xB3, 0x58, 0x06);
    case FlowKind::Sync: return QColor(0x88, 0x22, 0x55);
    case FlowKind::Implicit: return QColor(0x6A, 0x3D, 0x9A);
    case FlowKind::Call: return QColor(0x8A, 0x96, 0xA8); // the ranges' slate, darker: an annotation, no dependency
    }
    return QColor(Qt::black);
}

QString flowKindLabel(FlowKind kind)
{
    switch (kind) {
    case FlowKind::Launch: return QStringLiteral("launch");
    case FlowKind::Event: return QStringLiteral("event");
    case FlowKind::Sync: return QStringLiteral("sync");
    case FlowKind::Implicit: return QStringLiteral("implicit");
    case FlowKind::Call: return QStringLiteral("op call");
    }
    return {};
}

Qt::PenStyle flowKindPenStyle(FlowKind kind)
{
    switch (kind) {
    case FlowKind::Launch: return Qt::SolidLine;
    case FlowKind::Event: return Qt::SolidLine;
    case FlowKind::Sync: return Qt::DashLine;
    case FlowKind::Implicit: return Qt::DotLine;
    case FlowKind::Call: return Qt::SolidLine;
    }
    return Qt::SolidLine;
}

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

// Pixel mapping of one draw: x = ax + bx * key, y = ay + by * lane (by > 0: lanes grow downwards).
struct TimelinePlottable::Mapping {
    QRect rect;
    double ax = 0, bx = 1, ay = 0, by = 1;
    int64_t origin = 0;
    bool valid = false;
    double xOfTime(int64_t t) const { return ax + bx * double(t - origin); }
    double keyOfX(double x) const { return (x - ax) / bx; }
    double yOfLane(double lane) const { return ay + by * lane; }
    double laneOfY(double y) const { return (y - ay) / by; }
};

TimelinePlottable::TimelinePlottable(QCPAxis* keyAxis, QCPAxis* valueAxis) : QCPAbstractPlottable(keyAxis, valueAxis)
{
    setSelectable(QCP::stNone);
    setAntialiasedFill(false);
    setAntialiased(false);
}

TimelinePlottable::~TimelinePlottable() = default;

void TimelinePlottable::setTrace(const Trace* trace, const TimelineLayout* layout)
{
    m_trace = trace;
    m_layout = trace ? layout : nullptr;
    m_names.reset(trace);
    m_labelNames.clear();
    m_labelSprites.clear();
    m_labelFontPx = -1;
    m_anyUncertain = trace && std::find(trace->spans.timing.begin(), trace->spans.timing.end(),
                                        SpanTiming::Uncertain) != trace->spans.timing.end();
    buildFlowIndex();
}

void TimelinePlottable::buildFlowIndex()
{
    m_flowOrder.clear();
    m_flowMinTime.clear();
    m_flowPrefixMaxTime.clear();
    if (!m_trace || m_trace->flows.empty())
        return;
    const Trace& tr = *m_trace;
    const size_t n = tr.flows.size();
    std::vector<std::pair<int64_t, uint32_t>> keyed(n);
    for (size_t i = 0; i < n; ++i) {
        const Flow& f = tr.flows[i];
        keyed[i] = {std::min(tr.spans.start[f.from], tr.spans.start[f.to]), uint32_t(i)};
    }
    std::sort(keyed.begin(), keyed.end());
    m_flowOrder.resize(n);
    m_flowMinTime.resize(n);
    m_flowPrefixMaxTime.resize(n);
    int64_t maxTime = std::numeric_limits<int64_t>::min();
    for (size_t i = 0; i < n; ++i) {
        const Flow& f = tr.flows[keyed[i].second];
        m_flowOrder[i] = keyed[i].second;
        m_flowMinTime[i] = keyed[i].first;
        maxTime = std::max({maxTime, tr.spans.end[f.from], tr.spans.end[f.to]});
        m_flowPrefixMaxTime[i] = maxTime;
    }
}

void TimelinePlottable::setFlowKindVisible(FlowKind kind, bool visible)
{
    m_flowVisible[size_t(kind)] = visible;
}

TimelinePlottable::Mapping TimelinePlottable::mapping() const
{
    Mapping m;
    QCPAxis* ka = keyAxis();
    QCPAxis* va = valueAxis();
    if (!ka || !va || !m_layout)
        return m;
    m.rect = ka->axisRect()->rect();
    m.ax = ka->coordToPixel(0);
    m.bx = ka->coordToPixel(1) - m.ax;
    m.ay = va->coordToPixel(0);
    m.by = va->coordToPixel(1) - m.ay;
    m.origin = m_layout->origin();
    m.valid = m.bx > 0 && m.by > 0 && std::isfinite(m.bx) && std::isfinite(m.by) && m.rect.width() > 0;
    return m;
}

double TimelinePlottable::barInset() const
{
    const Mapping m = mapping();
    return std::clamp(std::round(m.by * 0.12), 1.0, 4.0);
}

QFont TimelinePlottable::labelFont() const
{
    const Mapping m = mapping();
    QFont f = parentPlot() ? parentPlot()->font() : QFont();
    const double barH = m.by - 2 * std::clamp(std::round(m.by * 0.12), 1.0, 4.0);
    f.setPixelSize(std::clamp(int(std::lround(barH * 0.72)), 7, std::max(7, m_maxLabelPx)));
    f.setBold(m_highContrast);
    return f;
}

void TimelinePlottable::setHighContrast(bool on)
{
    m_highContrast = on;
    m_labelFontPx = -1; // the rendered labels change weight
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
    const int64_t* start;
    const int64_t* end;
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

// Walks the spans [first, last) of one lane (positions in the lane; `Contiguous`: span index = base + position,
// else lane[position]) and appends their rectangles. Spans a pixel wide or more get one rectangle each; the ones
// starting in one pixel column fold into one block, found by galloping search, so a wide view costs O(columns).
template <bool Contiguous>
void walkLane(const LaneWalk& w, const uint32_t* lane, uint32_t base, size_t first, size_t last,
              TimelineDrawList& out, size_t& visited)
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
            const int L = floorPx(xs, w.pxLo, w.pxHi);
            const int R = ceilPx(xe, w.pxLo, w.pxHi);
            int width = std::max(1, R - L);
            if (width >= 4)
                --width; // a one-pixel gap tells back-to-back spans apart
            runs.push_back({L, L + width, s, 1, w.row, kind, false});
            ++out.stats.spanRects;
            if (width >= w.labelMinWidth)
                out.labels.push_back({QRect(L, w.y, width, w.barH), s});
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
            __builtin_prefetch(w.start + a);
            __builtin_prefetch(w.end + a);
            __builtin_prefetch(w.kinds + a);
        }
        // Join the previous block of this lane when it is of the same kind and touches this column.
        if (runs.size() > laneStart && runs.back().merged && runs.back().kind == kind && runs.back().x1 >= c) {
            runs.back().x1 = std::max(runs.back().x1, c + 1);
            runs.back().spanCount += count;
        } else {
            runs.push_back({c, c + 1, s, count, w.row, kind, true});
            ++out.stats.mergedRects;
        }
        p = q;
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
    w.start = tr.spans.start.data();
    w.end = tr.spans.end.data();
    w.kinds = tr.spans.kind.data();
    w.ax = m.ax;
    w.bx = m.bx;
    w.invBx = 1.0 / m.bx;
    w.origin = m.origin;
    w.barH = std::max(1, int(std::lround(m.by - 2 * inset)));
    w.pxLo = m.rect.left() - 2;
    w.pxHi = m.rect.right() + 3;
    w.labelMinWidth = m.by >= 9 ? std::max(16, int(m.by * 1.2)) : std::numeric_limits<int>::max();
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
        for (int l = 0; l < row.laneCount; ++l) {
            const int laneIndex = row.firstLane + l;
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
            // Lanes of tracks without overlaps hold consecutive span indices: no indirection.
            if (!lane.list)
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
            if (!runs[k].merged && runs[k].x1 - runs[k].x0 >= 4 &&
                tr.spans.timingOf(runs[k].firstSpan) == SpanTiming::Uncertain)
                out.uncertainRuns.push_back(uint32_t(k));
        out.stats.uncertainMarks = out.uncertainRuns.size();
    }
    computeArrows(m, out);
}

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
    if (m_flowOrder.empty())
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
    const size_t hi = size_t(std::upper_bound(m_flowMinTime.begin(), m_flowMinTime.end(), t1) - m_flowMinTime.begin());
    const auto prefixMax = m_flowPrefixMaxTime.begin();
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
        const uint32_t fi = m_flowOrder[i];
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

QRectF TimelinePlottable::laneRect(int row, int lane) const
{
    const Mapping m = mapping();
    if (!m_layout || row < 0 || row >= int(m_layout->rows().size()))
        return {};
    const TimelineRow& r = m_layout->rows()[size_t(row)];
    const double y = m.yOfLane(r.firstLane + lane);
    return QRectF(m.rect.left(), y, m.rect.width(), m.by);
}

QRectF TimelinePlottable::spanRect(uint32_t span) const
{
    const Mapping m = mapping();
    if (!m_trace || !m_layout || span >= m_trace->spanCount())
        return {};
    const int row = m_layout->rowOfTrack(m_trace->spans.track[span]);
    if (row < 0)
        return {};
    const double inset = std::clamp(std::round(m.by * 0.12), 1.0, 4.0);
    const int lane = m_layout->rows()[size_t(row)].firstLane + m_layout->laneOfSpan(span);
    const double y = std::round(m.yOfLane(lane) + inset);
    const double barH = std::max(1.0, std::round(m.by - 2 * inset));
    double x0 = std::floor(m.xOfTime(m_trace->spans.start[span]));
    double x1 = std::ceil(m.xOfTime(m_trace->spans.end[span]));
    // Keep coordinates sane for spans far outside the view.
    x0 = std::clamp(x0, double(m.rect.left()) - 1e6, double(m.rect.right()) + 1e6);
    x1 = std::clamp(x1, double(m.rect.left()) - 1e6, double(m.rect.right()) + 1e6);
    return QRectF(x0, y, std::max(1.0, x1 - x0), barH);
}

int TimelinePlottable::spanAt(QPointF pos, double tolerancePx) const
{
    const Mapping m = mapping();
    if (!m.valid || !m_trace || !m_trace->finalized() || !m.rect.contains(pos.toPoint()))
        return -1;
    const TimelineLayout& lay = *m_layout;
    const double laneY = m.laneOfY(pos.y());
    const int row = lay.rowAtLane(laneY);
    if (row < 0)
        return -1;
    const TimelineRow& r = lay.rows()[size_t(row)];
    if (r.firstGlobalLane < 0)
        return -1;
    const int laneInRow = std::clamp(int(std::floor(laneY)) - r.firstLane, 0, r.laneCount - 1);
    const Trace& tr = *m_trace;
    const TimelineLane& lane = lay.lane(size_t(r.firstGlobalLane + laneInRow));
    const double key = m.keyOfX(pos.x());
    const double tol = tolerancePx / m.bx;
    const int64_t ta = m.origin + int64_t(std::floor(key - tol));
    const int64_t tb = m.origin + int64_t(std::ceil(key + tol));
    // Candidates: spans ending after ta and starting before tb (a handful at most for a given pixel).
    const size_t p = firstEndingAfter(tr, lane, 0, ta);
    const size_t e = firstStartingAtOrAfter(tr, lane, p, tb + 1);
    int best = -1;
    double bestDist = std::numeric_limits<double>::infinity();
    const double x = pos.x();
    for (size_t k = p; k < e && k < p + 64; ++k) { // beyond 64 sub-pixel spans, the nearest of the first is as good
        const uint32_t s = lane.at(k);
        const double xs = std::floor(m.xOfTime(tr.spans.start[s]));
        const double xe = std::max(xs + 1, std::ceil(m.xOfTime(tr.spans.end[s])));
        const double d = x < xs ? xs - x : (x >= xe ? x - xe + 1 : 0);
        if (d < bestDist) {
            bestDist = d;
            best = int(s);
            if (d == 0)
                break;
        }
    }
    return bestDist <= tolerancePx ? best : -1;
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

QRect TimelinePlottable::uncertainStartRect(const QRect& bar)
{
    // About a third of the bar, never more than a few bar heights: a hint at the start, not a second colour.
    const int w = bar.width() < 8 ? bar.width()
                                  : std::clamp(int(std::lround(bar.width() * 0.35)), 4, std::max(8, 3 * bar.height()));
    return QRect(bar.left(), bar.top(), w, bar.height());
}

void TimelinePlottable::drawUncertainStart(QPainter* painter, const QRect& bar)
{
    const QRect r = uncertainStartRect(bar);
    if (r.width() <= 0 || r.height() <= 0)
        return;
    painter->fillRect(r, QColor(255, 255, 255, 96));
    // "/" hatching: lines x + y = c, clipped to the rectangle by hand (no clip state per bar).
    const int step = std::max(4, r.height() / 3);
    const int x0 = r.left(), x1 = r.right(), y0 = r.top(), y1 = r.bottom();
    QVarLengthArray<QLine, 64> lines;
    for (int c = x0 + y0 + step / 2; c <= x1 + y1; c += step) {
        const int xa = std::max(x0, c - y1), xb = std::min(x1, c - y0);
        if (xa <= xb)
            lines.append(QLine(xa, c - xa, xb, c - xb));
    }
    painter->setPen(QPen(QColor(0, 0, 0, 90), 1));
    painter->drawLines(lines.constData(), int(lines.size()));
    // The drawn start is a bound: a dashed edge there.
    painter->setPen(QPen(QColor(0, 0, 0, 110), 1, Qt::DotLine));
    painter->drawLine(QPoint(x0, y0), QPoint(x0, y1));
}

void TimelinePlottable::drawLabels(QPainter* painter, const TimelineDrawList& list) const
{
    if (!m_labels || list.labels.empty())
        return;
    const QFont font = labelFont();
    painter->setFont(font);
    const QFontMetricsF fm(font);
    const QPaintEngine* engine = painter->paintEngine();
    // On raster devices each distinct label (name, characters shown, text colour) is rendered once into a small
    // image and then blitted: a label costs one image copy instead of shaping and rasterizing glyphs every frame.
    const bool sprites = engine && engine->type() == QPaintEngine::Raster
        && painter->transform().type() <= QTransform::TxTranslate;
    const qreal dpr = painter->device() ? painter->device()->devicePixelRatioF() : 1.0;
    if (m_labelFontPx != font.pixelSize() || m_labelNames.size() != m_trace->strings.size() || m_spriteDpr != dpr
        || m_labelSprites.size() > 8192) {
        m_labelNames.clear();
        m_labelNames.resize(m_trace->strings.size());
        m_labelSprites.clear();
        m_labelFontPx = font.pixelSize();
        m_spriteDpr = dpr;
    }
    const QString ellipsis(QChar(0x2026));
    const double ellipsisWidth = fm.horizontalAdvance(ellipsis);
    const double pad = std::max(2.0, fm.averageCharWidth() * 0.5);
    const double minWidth = fm.horizontalAdvance(QStringLiteral("M")) + ellipsisWidth + 2 * pad;
    const double ascent = fm.ascent(), height = fm.height();
    int lastKind = -1;
    for (const auto& label : list.labels) {
        const uint32_t s = label.span;
        const uint32_t nameIndex = m_trace->spans.name[s];
        // The visible part of the bar, so a long span's name stays on screen.
        const QRect clip = m_lastClip.intersected(label.rect);
        if (clip.width() < minWidth)
            continue;
        auto& name = m_labelNames[nameIndex];
        if (!name) {
            name = std::make_unique<LabelName>();
            name->text = m_names.shortNameOfString(nameIndex);
            name->prefix.reserve(size_t(name->text.size()) + 1);
            double x = 0;
            name->prefix.push_back(0);
            for (QChar c : std::as_const(name->text)) {
                x += fm.horizontalAdvance(c);
                name->prefix.push_back(float(x));
            }
            name->width = float(fm.horizontalAdvance(name->text));
        }
        const double avail = clip.width() - 2 * pad;
        qsizetype chars = name->text.size();
        bool elided = false;
        if (name->width > avail) {
            // Characters that fit before an ellipsis (per-character advances: close enough to decide where to cut).
            chars = qsizetype(std::upper_bound(name->prefix.begin(), name->prefix.end(), float(avail - ellipsisWidth))
                              - name->prefix.begin())
                - 1;
            if (chars > 0 && name->text.at(chars - 1).isHighSurrogate())
                --chars;
            if (chars < 1)
                continue;
            elided = true;
        }
        const SpanKind kind = m_trace->spans.kind[s];
        const QColor colour = spanKindTextColor(kind);
        const double top = clip.top() + (clip.height() - height) / 2;
        if (sprites) {
            const uint64_t key = (uint64_t(nameIndex) << 32) | (uint64_t(chars) << 2) | (elided ? 2 : 0)
                | (colour == Qt::white ? 1 : 0);
            auto it = m_labelSprites.find(key);
            if (it == m_labelSprites.end()) {
                const QString text = elided ? name->text.left(chars) + ellipsis : name->text;
                const QSize size(int(std::ceil(fm.horizontalAdvance(text))) + 2, int(std::ceil(height)) + 1);
                QImage image(size * dpr, QImage::Format_ARGB32_Premultiplied);
                image.setDevicePixelRatio(dpr);
                image.fill(Qt::transparent);
                QPainter p(&image);
                p.setFont(font);
                p.setPen(colour);
                p.drawText(QPointF(0, ascent), text);
                p.end();
                it = m_labelSprites.emplace(key, std::move(image)).first;
            }
            painter->drawImage(QPointF(clip.left() + pad, std::round(top)), it->second);
        } else {
            if (int(kind) != lastKind) {
                painter->setPen(colour);
                lastKind = int(kind);
            }
            const QString text = elided ? name->text.left(chars) + ellipsis : name->text;
            painter->drawText(QPointF(clip.left() + pad, top + ascent), text);
        }
    }
}

void TimelinePlottable::draw(QCPPainter* painter)
{
    if (!m_trace || !m_layout)
        return;
    const Mapping m = mapping();
    if (!m.valid)
        return;
    painter->setRenderHint(QPainter::Antialiasing, false);
    m_lastClip = m.rect;

    // Row shading: alternate tracks and mark device headers, so the eye can follow a row across the chart.
    if (m_rowShading) {
        const double laneTop = m.laneOfY(m.rect.top()), laneBottom = m.laneOfY(m.rect.bottom() + 1);
        const auto& rows = m_layout->rows();
        painter->setPen(Qt::NoPen);
        int trackRow = 0;
        for (size_t r = 0; r < rows.size() && rows[r].firstLane < laneBottom; ++r) {
            const TimelineRow& row = rows[r];
            const bool header = row.firstGlobalLane < 0;
            // A ranges row is shaded with the row below it, the host thread or stream it annotates.
            const bool ranges = row.kind == TimelineRowKind::Ranges;
            trackRow = header ? 0 : (ranges ? trackRow : trackRow + 1);
            const int shade = ranges ? trackRow + 1 : trackRow;
            if (row.firstLane + row.laneCount <= laneTop)
                continue;
            const int y0 = int(std::lround(m.yOfLane(row.firstLane)));
            const int y1 = int(std::lround(m.yOfLane(row.firstLane + row.laneCount)));
            if (header) {
                painter->fillRect(QRect(m.rect.left(), y0, m.rect.width(), y1 - y0), QColor(0xE3, 0xE7, 0xED));
                painter->fillRect(QRect(m.rect.left(), y0, m.rect.width(), 1), QColor(0xB0, 0xB8, 0xC4));
            } else if (shade % 2 == 0) {
                painter->fillRect(QRect(m.rect.left(), y0, m.rect.width(), y1 - y0), QColor(0xF4, 0xF5, 0xF7));
            }
        }
    }

    computeDrawList(m_drawList);
    // On raster devices (the screen, PNG) bars are filled into one row of pixels per lane and that row is copied down
    // the bar: no per-rectangle cost in the paint engine. Vector devices (SVG, PDF) get one rectangle per run, batched
    // by colour.
    const QPaintEngine* engine = painter->paintEngine();
    if (engine && engine->type() == QPaintEngine::Raster && painter->transform().type() <= QTransform::TxTranslate
        && !m_drawList.laneTop.empty()) {
        drawSpansRaster(painter, m_drawList);
    } else {
        painter->setPen(Qt::NoPen);
        for (int k = 0; k < kSpanKindCount; ++k) {
            const std::vector<QRect> rects = m_drawList.rectsOfKind(SpanKind(k));
            if (rects.empty())
                continue;
            painter->setBrush(spanKindColor(SpanKind(k)));
            painter->drawRects(rects.data(), int(rects.size()));
        }
    }
    painter->setBrush(Qt::NoBrush);
    if (m_highContrast) {
        // Outlines keep back-to-back bars of one kind apart and light colours distinct from the background.
        std::vector<QRect> outlines;
        for (const TimelineDrawList::Run& run : m_drawList.runs)
            if (run.x1 - run.x0 >= 4)
                outlines.push_back(m_drawList.rectOf(run).adjusted(0, 0, -1, -1));
        painter->setPen(QPen(QColor(0, 0, 0, 170), 1));
        painter->drawRects(outlines.data(), int(outlines.size()));
    }
    if (!m_drawList.uncertainRuns.empty()) {
        painter->save();
        for (uint32_t k : m_drawList.uncertainRuns)
            drawUncertainStart(painter, m_drawList.rectOf(m_drawList.runs[k]));
        painter->restore();
    }
    drawLabels(painter, m_drawList);

    if (!m_drawList.arrows.empty()) {
        painter->setRenderHint(QPainter::Antialiasing, true);
        const double head = std::clamp(m.by * 0.35, 4.0, m_highContrast ? 14.0 : 9.0);
        const double weight = m_highContrast ? 2.0 : 1.0;
        for (const auto& a : m_drawList.arrows) {
            QColor c = flowKindColor(a.kind);
            const bool launch = a.kind == FlowKind::Launch || a.kind == FlowKind::Call;
            c.setAlpha(launch ? 150 : 230); // launches are many and mostly obvious; dependencies are the story
            painter->setPen(QPen(c, (launch ? 1.0 : 1.6) * weight, flowKindPenStyle(a.kind)));
            drawArrow(painter, a.from, a.to, head, flowIsCurved(a.kind));
        }
        painter->setRenderHint(QPainter::Antialiasing, false);
    }
    m_lastStats = m_drawList.stats;
}

void TimelinePlottable::drawSpansRaster(QPainter* painter, const TimelineDrawList& list) const
{
    const int width = list.canvasRight - list.canvasLeft;
    const int rows = int(list.laneTop.size());
    if (width <= 0 || rows <= 0)
        return;
    if (m_canvas.width() < width || m_canvas.height() < rows)
        m_canvas = QImage(std::max(width, m_canvas.width()), std::max(rows, m_canvas.height()),
                          QImage::Format_ARGB32_Premultiplied);
    uchar* bits = m_canvas.bits();
    const qsizetype stride = m_canvas.bytesPerLine();
    for (int r = 0; r < rows; ++r)
        std::fill_n(reinterpret_cast<QRgb*>(bits + r * stride), width, QRgb(0));
    std::array<QRgb, kSpanKindCount> colours;
    for (int k = 0; k < kSpanKindCount; ++k)
        colours[size_t(k)] = qPremultiply(spanKindColor(SpanKind(k)).rgba());
    for (const TimelineDrawList::Run& run : list.runs) {
        const int x0 = std::max(run.x0, list.canvasLeft) - list.canvasLeft;
        const int x1 = std::min(run.x1, list.canvasRight) - list.canvasLeft;
        auto* line = reinterpret_cast<QRgb*>(bits + run.lane * stride);
        if (x1 > x0)
            std::fill(line + x0, line + x1, colours[size_t(run.kind)]);
    }
    const QImage& canvas = m_canvas;
    for (int r = 0; r < rows; ++r)
        for (int dy = 0; dy < list.barHeight; ++dy)
            painter->drawImage(QPoint(list.canvasLeft, list.laneTop[size_t(r)] + dy), canvas, QRect(0, r, width, 1));
}

void TimelinePlottable::drawLegendIcon(QCPPainter* painter, const QRectF& rect) const
{
    painter->fillRect(rect, spanKindColor(SpanKind::Kernel));
}

double TimelinePlottable::selectTest(const QPointF&, bool, QVariant*) const
{
    return -1; // the view hit-tests spans itself (spanAt), with binary search
}

QCPRange TimelinePlottable::getKeyRange(bool& foundRange, QCP::SignDomain) const
{
    foundRange = m_layout && m_trace && m_trace->spanCount() > 0;
    return foundRange ? QCPRange(0, double(m_layout->endTime() - m_layout->origin())) : QCPRange();
}

QCPRange TimelinePlottable::getValueRange(bool& foundRange, QCP::SignDomain, const QCPRange&) const
{
    foundRange = m_layout && m_layout->totalLanes() > 0;
    return foundRange ? QCPRange(0, m_layout->totalLanes()) : QCPRange();
}

} // namespace streamscope
