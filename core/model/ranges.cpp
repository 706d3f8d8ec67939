#include "ranges.h"

#include <algorithm>
#include <cctype>
#include <limits>
#include <map>

namespace streamscope {

void placeRangesOnTracks(Trace& t)
{
    if (!t.finalized())
        t.finalize();
    const auto& s = t.spans;
    const auto baseTracks = uint32_t(t.tracks.size());
    struct Move {
        uint32_t span, parent, depth;
    };
    std::vector<Move> moves;
    std::vector<uint32_t> depths(baseTracks, 0); // per track: how many depths its ranges need
    std::vector<uint32_t> ranges;
    std::vector<std::pair<int64_t, uint32_t>> open; // (end, depth) of the ranges not ended yet
    std::vector<int64_t> laneEnd;                   // per depth: the end of its last range
    for (uint32_t tr = 0; tr < baseTracks; ++tr) {
        if (t.tracks[tr].kind == TrackKind::Ranges)
            continue;
        ranges.clear();
        for (uint32_t i = t.trackBegin(tr); i < t.trackEnd(tr); ++i)
            if (s.kind[i] == SpanKind::Range)
                ranges.push_back(i);
        if (ranges.empty())
            continue;
        // Outer before inner: by start, the longer first at equal starts.
        std::stable_sort(ranges.begin(), ranges.end(), [&s](uint32_t a, uint32_t b) {
            return s.start[a] != s.start[b] ? s.start[a] < s.start[b] : s.end[a] > s.end[b];
        });
        // A range goes one below the innermost range that contains it, on the first depth from there whose last
        // range has ended: properly nested ranges get their nesting depth, and one that starts inside another and
        // ends after it moves down a depth rather than overlap it.
        open.clear();
        laneEnd.clear();
        for (uint32_t r : ranges) {
            std::erase_if(open, [&](const auto& o) { return o.first <= s.start[r]; });
            int inner = -1;
            for (const auto& [end, d] : open)
                if (end >= s.end[r])
                    inner = std::max(inner, int(d));
            auto depth = uint32_t(inner + 1);
            while (depth < laneEnd.size() && laneEnd[depth] > s.start[r])
                ++depth;
            if (depth >= laneEnd.size())
                laneEnd.resize(depth + 1, std::numeric_limits<int64_t>::min());
            laneEnd[depth] = std::max(s.end[r], s.start[r]);
            open.emplace_back(s.end[r], depth);
            moves.push_back({r, tr, depth});
            depths[tr] = std::max(depths[tr], depth + 1);
        }
    }
    if (moves.empty())
        return;
    std::vector<uint32_t> firstTrack(baseTracks, 0);
    for (uint32_t tr = 0; tr < baseTracks; ++tr) {
        firstTrack[tr] = uint32_t(t.tracks.size());
        const Track parent = t.tracks[tr];
        for (uint32_t d = 0; d < depths[tr]; ++d) {
            Track lane;
            lane.kind = TrackKind::Ranges;
            lane.name = parent.name;
            lane.device = parent.kind == TrackKind::Stream ? parent.device : -1;
            lane.parent = int(tr);
            lane.depth = int(d);
            t.addTrack(std::move(lane));
        }
    }
    for (const Move& m : moves)
        t.spans.track[m.span] = firstTrack[m.parent] + m.depth;
    t.finalize();
}

bool isPythonFunctionName(std::string_view name)
{
    if (name.starts_with("nn.Module: ") || name.starts_with("nn.Optimizer: ") || name.starts_with("<built-in "))
        return true;
    // "path/file.py(LINE): function"
    const size_t py = name.find(".py(");
    if (py == std::string_view::npos)
        return false;
    size_t i = py + 4;
    const size_t digits = i;
    while (i < name.size() && std::isdigit(static_cast<unsigned char>(name[i])))
        ++i;
    return i > digits && name.substr(i).starts_with("): ");
}

LaunchOrigins::LaunchOrigins(const Trace& trace) : m_t(trace)
{
    const size_t n = trace.spanCount();
    m_launchedBy.assign(n, kNoOrigin);
    m_calledIn.assign(n, kNoOrigin);
    for (const Flow& f : trace.flows) {
        if (f.from >= n || f.to >= n)
            continue;
        if (f.kind == FlowKind::Launch && m_launchedBy[f.to] == kNoOrigin)
            m_launchedBy[f.to] = f.from;
        else if (f.kind == FlowKind::Call && m_calledIn[f.to] == kNoOrigin)
            m_calledIn[f.to] = f.from;
    }
    m_lanes.resize(trace.tracks.size());
    for (uint32_t tr = 0; tr < trace.tracks.size(); ++tr) {
        const Track& track = trace.tracks[tr];
        if (track.kind != TrackKind::Ranges || track.parent < 0 || size_t(track.parent) >= trace.tracks.size()
            || track.depth < 0)
            continue;
        auto& lanes = m_lanes[size_t(track.parent)];
        if (lanes.size() <= size_t(track.depth))
            lanes.resize(size_t(track.depth) + 1, kNoOrigin);
        lanes[size_t(track.depth)] = tr;
    }
}

std::vector<uint32_t> LaunchOrigins::enclosingRanges(uint32_t span) const
{
    std::vector<uint32_t> out;
    if (span >= m_t.spanCount() || !m_t.finalized())
        return out;
    const auto& s = m_t.spans;
    const Track& track = m_t.tracks[s.track[span]];
    size_t parent = s.track[span], depths = m_lanes[parent].size();
    if (track.kind == TrackKind::Ranges) {
        if (track.parent < 0)
            return out;
        parent = size_t(track.parent);
        depths = std::min(m_lanes[parent].size(), size_t(std::max(track.depth, 0)));
    }
    const int64_t at = s.start[span];
    for (size_t d = 0; d < depths; ++d) {
        const uint32_t lane = m_lanes[parent][d];
        if (lane == kNoOrigin)
            continue;
        const auto b = s.start.begin() + m_t.trackBegin(lane);
        const auto e = s.start.begin() + m_t.trackEnd(lane);
        auto it = std::upper_bound(b, e, at); // the spans of a lane are disjoint: the last one starting by `at`
        if (it == b)
            continue;
        const auto r = uint32_t(it - 1 - s.start.begin());
        if (at < s.end[r] || s.start[r] == at)
            out.push_back(r);
    }
    return out;
}

LaunchOrigin LaunchOrigins::of(uint32_t span) const
{
    LaunchOrigin o;
    if (span >= m_t.spanCount())
        return o;
    const SpanKind k = m_t.spans.kind[span];
    if (isGpuSpan(k))
        o.call = m_launchedBy[span];
    else if (k == SpanKind::ApiCall || k == SpanKind::Sync)
        o.call = span;
    if (o.call == kNoOrigin)
        return o;
    o.op = m_calledIn[o.call];
    if (o.op == kNoOrigin || isPythonFunctionName(m_t.spanName(o.op)))
        return o;
    const auto around = enclosingRanges(o.op);
    for (auto it = around.rbegin(); it != around.rend(); ++it)
        if (isPythonFunctionName(m_t.spanName(*it))) {
            o.python = *it;
            break;
        }
    return o;
}

std::string launchOriginText(const Trace& trace, const LaunchOrigin& origin)
{
    if (origin.op == kNoOrigin || origin.op >= trace.spanCount())
        return {};
    std::string text(trace.spanName(origin.op));
    if (origin.python != kNoOrigin && origin.python < trace.spanCount())
        text += " (python: " + std::string(trace.spanName(origin.python)) + ")";
    return text;
}

std::vector<uint32_t> launchingOps(const Trace& t)
{
    std::vector<uint32_t> ops(t.spanCount(), kNoOrigin);
    if (!t.finalized())
        return ops;
    const LaunchOrigins origins(t);
    for (uint32_t i = 0; i < t.spanCount(); ++i)
        ops[i] = origins.of(i).op;
    return ops;
}

std::vector<OpGpuTime> gpuTimeByLaunchingOp(const Trace& input)
{
    Trace copy;
    const Trace* tp = &input;
    if (!input.finalized()) {
        copy = input;
        copy.finalize();
        tp = &copy;
    }
    return gpuTimeByLaunchingOp(*tp, launchingOps(*tp));
}

std::vector<OpGpuTime> gpuTimeByLaunchingOp(const Trace& t, const std::vector<uint32_t>& ops)
{
    // Summed per name (the op span's interned string; the last entry: GPU work launched by no op).
    const uint32_t noOp = uint32_t(t.strings.size());
    std::vector<OpGpuTime> byName(t.strings.size() + 1);
    const SpanColumns& s = t.spans;
    const TimeColumn::View start = s.start.view(), end = s.end.view();
    for (uint32_t i = 0; i < t.spanCount() && i < ops.size(); ++i) {
        if (!isGpuSpan(s.kind[i]))
            continue;
        const uint32_t op = ops[i];
        OpGpuTime& g = byName[op == kNoOrigin ? noOp : s.name[op]];
        ++g.spans;
        g.gpuNs += end[i] - start[i];
    }
    std::vector<OpGpuTime> out;
    for (uint32_t n = 0; n <= noOp; ++n) {
        if (byName[n].spans == 0)
            continue;
        byName[n].op = n == noOp ? std::string() : t.strings[n];
        out.push_back(std::move(byName[n]));
    }
    // Most GPU time first; ties by name ("" first), as the names' order was before.
    std::sort(out.begin(), out.end(), [](const OpGpuTime& a, const OpGpuTime& b) {
        return a.gpuNs != b.gpuNs ? a.gpuNs > b.gpuNs : a.op < b.op;
    });
    return out;
}

} // namespace streamscope
