#include "timeline_layout.h"

#include "collectives.h"
#include "parallel_for.h"
#include "rank_parts.h"
#include "scenario.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <limits>
#include <map>
#include <numeric>
#include <queue>
#include <string_view>

namespace streamscope {

bool naturalLess(std::string_view a, std::string_view b)
{
    size_t i = 0, j = 0;
    while (i < a.size() && j < b.size()) {
        const bool da = std::isdigit(static_cast<unsigned char>(a[i])) != 0;
        const bool db = std::isdigit(static_cast<unsigned char>(b[j])) != 0;
        if (da && db) {
            size_t ie = i, je = j;
            while (ie < a.size() && std::isdigit(static_cast<unsigned char>(a[ie])))
                ++ie;
            while (je < b.size() && std::isdigit(static_cast<unsigned char>(b[je])))
                ++je;
            // Compare numerically without overflow: strip leading zeros, then longer is bigger.
            size_t is = i, js = j;
            while (is + 1 < ie && a[is] == '0')
                ++is;
            while (js + 1 < je && b[js] == '0')
                ++js;
            if (ie - is != je - js)
                return ie - is < je - js;
            const int c = a.substr(is, ie - is).compare(b.substr(js, je - js));
            if (c != 0)
                return c < 0;
            i = ie;
            j = je;
            continue;
        }
        if (a[i] != b[j])
            return static_cast<unsigned char>(a[i]) < static_cast<unsigned char>(b[j]);
        ++i;
        ++j;
    }
    return a.size() - i < b.size() - j;
}

std::vector<uint16_t> assignLanes(TimeColumn::const_iterator startAt, TimeColumn::const_iterator endAt, size_t n,
                                  int& laneCount)
{
    std::vector<uint16_t> lanes(n, 0);
    laneCount = n > 0 ? 1 : 0;
    // Fast path: most tracks (a CUDA stream runs its work in order) never overlap. The times are unpacked a chunk
    // at a time (copyTo) instead of read one by one.
    const TimeColumn::View startView = startAt.view(), endView = endAt.view();
    const size_t s0 = startAt.index(), e0 = endAt.index();
    int64_t lastEnd = std::numeric_limits<int64_t>::min();
    bool overlaps = false;
    constexpr size_t kChunk = 1024;
    std::array<int64_t, kChunk> starts, ends;
    for (size_t c = 0; c < n && !overlaps; c += kChunk) {
        const size_t m = std::min(kChunk, n - c);
        startView.copyTo(s0 + c, s0 + c + m, starts.data());
        endView.copyTo(e0 + c, e0 + c + m, ends.data());
        for (size_t i = 0; i < m && !overlaps; ++i) {
            overlaps = starts[i] < lastEnd;
            lastEnd = std::max(lastEnd, ends[i]);
        }
    }
    if (!overlaps)
        return lanes;
    auto start = [&](size_t i) { return startView[s0 + i]; };
    auto end = [&](size_t i) { return endView[e0 + i]; };

    // Greedy interval partitioning: the lowest lane free at each start. Optimal (lanes = deepest overlap), and
    // spans within a lane stay disjoint, hence sorted by end too.
    using Busy = std::pair<int64_t, uint16_t>; // (end, lane)
    std::priority_queue<Busy, std::vector<Busy>, std::greater<>> busy;
    std::priority_queue<uint16_t, std::vector<uint16_t>, std::greater<>> freeLanes;
    int count = 0;
    constexpr int kMaxLanes = std::numeric_limits<uint16_t>::max();
    for (size_t i = 0; i < n; ++i) {
        while (!busy.empty() && busy.top().first <= start(i)) {
            freeLanes.push(busy.top().second);
            busy.pop();
        }
        uint16_t lane;
        if (!freeLanes.empty()) {
            lane = freeLanes.top();
            freeLanes.pop();
        } else if (count < kMaxLanes) {
            lane = uint16_t(count++);
        } else {
            // 65535 spans at once in one track: stack the rest in the last lane (they may then overlap there).
            lane = uint16_t(kMaxLanes - 1);
            lanes[i] = lane;
            continue;
        }
        lanes[i] = lane;
        busy.push({std::max(end(i), start(i)), lane});
    }
    laneCount = std::max(count, 1);
    return lanes;
}

namespace {

// "Rank 2 · host node7": the host from the merge's note on the rank ("rank 2": "FILE, host node7, ...").
std::string rankHeaderLabel(const Trace& trace, int rank)
{
    std::string label = "Rank " + std::to_string(rank);
    if (const std::string* about = findSetting(trace.info, "rank " + std::to_string(rank))) {
        const size_t at = about->find(", host ");
        if (at != std::string::npos) {
            const size_t from = at + 7, to = about->find(',', from);
            label += " \xC2\xB7 host " + about->substr(from, to == std::string::npos ? std::string::npos : to - from);
        }
    }
    return label;
}

// "GPU 0 · NVIDIA H200"; within a rank, the GPU as that rank numbers it and named without the rank (its header
// above says it).
std::string deviceHeaderLabel(const Trace& trace, int device, int rank)
{
    if (device < 0)
        return "Unknown device";
    const DeviceInfo* info = nullptr;
    for (const DeviceInfo& d : trace.info.devices)
        if (d.index == device)
            info = &d;
    std::string number = std::to_string(device), name = info ? info->name : std::string();
    if (rank >= 0 && info) {
        for (const auto& [key, value] : info->properties)
            if (key == "rank_device")
                number = value;
        const std::string prefix = rankPrefix(rank);
        if (name.starts_with(prefix))
            name = name.substr(prefix.size());
    }
    return name.empty() ? "GPU " + number : "GPU " + number + " \xC2\xB7 " + name; // U+00B7 middle dot
}

} // namespace

std::set<int> initiallyCollapsedRanks(const Trace& trace)
{
    const std::vector<int> ranks = ranksOfTrace(trace);
    return ranks.size() > kRanksShownUnfolded ? std::set<int>(ranks.begin(), ranks.end()) : std::set<int>();
}

TimelineLayout::TimelineLayout(const Trace& trace, const std::set<int>& collapsedRanks)
    : m_trace(&trace), m_collapsedRanks(collapsedRanks)
{
    const size_t n = trace.spanCount();
    if (n > 0) {
        auto [lo, hi] = trace.timeRange();
        m_origin = lo;
        m_end = hi;
    }

    // Lanes per track; only tracks with overlaps store a lane per span.
    const size_t trackCount = trace.tracks.size();
    std::vector<int> trackLanes(trackCount, 1);
    m_trackLaneOffset.assign(trackCount, -1);
    const bool indexed = trace.finalized();
    // The tracks on all cores, each alone (at 100 M spans the layout took 6.6 s on one core, docs/PERFORMANCE.md).
    std::vector<std::vector<uint16_t>> lanesOf(indexed ? trackCount : 0);
    parallelFor(lanesOf.size(), [&](size_t t) {
        const uint32_t b = trace.trackBegin(uint32_t(t)), e = trace.trackEnd(uint32_t(t));
        int count = 1;
        auto lanes = assignLanes(trace.spans.start.begin() + b, trace.spans.end.begin() + b, e - b, count);
        trackLanes[t] = std::max(count, 1);
        if (count > 1)
            lanesOf[t] = std::move(lanes);
    });
    for (size_t t = 0; t < lanesOf.size(); ++t)
        if (!lanesOf[t].empty()) {
            m_trackLaneOffset[t] = int64_t(m_spanLane.size());
            m_spanLane.insert(m_spanLane.end(), lanesOf[t].begin(), lanesOf[t].end());
            lanesOf[t] = {};
        }

    // Rows: host threads (in track order, as the run created them), then per device its streams.
    auto streamRank = [](StreamKind k) {
        switch (k) {
        case StreamKind::LegacyDefault: return 0;
        case StreamKind::PerThreadDefault: return 1;
        default: return 2;
        }
    };
    // Rows by rank (-1: rows of no rank, all of a trace that is no job): its host threads, its devices' streams.
    struct RankRows {
        std::vector<uint32_t> hostTracks;
        std::map<int, std::vector<uint32_t>> deviceStreams;
    };
    std::map<int, RankRows> byRank;
    std::vector<std::vector<uint32_t>> rangesOf(trackCount); // per host thread or stream: its Ranges tracks by depth
    for (uint32_t t = 0; t < trackCount; ++t) {
        const Track& tr = trace.tracks[t];
        if (tr.kind == TrackKind::Ranges) {
            if (tr.parent >= 0 && size_t(tr.parent) < trackCount && tr.depth >= 0 && tr.depth < 4096
                && trace.tracks[size_t(tr.parent)].kind != TrackKind::Ranges) {
                auto& lanes = rangesOf[size_t(tr.parent)];
                if (lanes.size() <= size_t(tr.depth))
                    lanes.resize(size_t(tr.depth) + 1, std::numeric_limits<uint32_t>::max());
                lanes[size_t(tr.depth)] = t;
            }
        } else if (tr.kind == TrackKind::HostThread) {
            byRank[rankOfTrack(trace, t)].hostTracks.push_back(t);
        } else {
            byRank[rankOfTrack(trace, t)].deviceStreams[tr.device].push_back(t);
        }
    }
    m_rowOfTrack.assign(trackCount, -1);
    m_trackFirstLane.assign(trackCount, 0);
    m_overlaidFirstLane.assign(trackCount, -1);
    int lane = 0;
    int globalLanes = 0;
    int rowRank = -1;
    auto addRangesRow = [&](uint32_t parent) {
        const auto& lanes = rangesOf[parent];
        if (lanes.empty())
            return;
        TimelineRow row;
        row.kind = TimelineRowKind::Ranges;
        row.track = int(parent);
        row.device = trace.tracks[parent].device;
        row.rank = rowRank;
        row.label = "ranges";
        row.firstLane = lane;
        row.laneCount = int(lanes.size());
        row.firstGlobalLane = globalLanes;
        lane += row.laneCount;
        globalLanes += row.laneCount;
        for (size_t d = 0; d < lanes.size(); ++d)
            if (lanes[d] != std::numeric_limits<uint32_t>::max()) {
                m_rowOfTrack[lanes[d]] = int(m_rows.size());
                m_trackFirstLane[lanes[d]] = int(d);
            }
        m_rows.push_back(std::move(row));
    };
    auto addTrackRow = [&](TimelineRowKind kind, uint32_t t) {
        addRangesRow(t);
        TimelineRow row;
        row.kind = kind;
        row.track = int(t);
        row.device = trace.tracks[t].device;
        row.rank = rowRank;
        const bool host = kind == TimelineRowKind::HostThread;
        row.label = trace.tracks[t].name.empty() ? std::string(host ? "thread" : "stream") : trace.tracks[t].name;
        row.firstLane = lane;
        row.laneCount = trackLanes[t];
        row.firstGlobalLane = globalLanes;
        lane += row.laneCount;
        globalLanes += row.laneCount;
        m_rowOfTrack[t] = int(m_rows.size());
        m_rows.push_back(std::move(row));
    };
    auto addHeader = [&](TimelineRowKind kind, int device, std::string label) {
        TimelineRow row;
        row.kind = kind;
        row.device = device;
        row.rank = rowRank;
        row.label = std::move(label);
        row.firstLane = lane;
        row.laneCount = 1;
        lane += 1;
        m_rows.push_back(std::move(row));
    };
    for (auto& [rank, rows] : byRank) {
        rowRank = rank;
        if (rank >= 0) {
            const bool collapsed = collapsedRanks.count(rank) > 0;
            // U+25B8 / U+25BE: small right- and down-pointing triangles, as a tree shows a closed or open branch.
            addHeader(TimelineRowKind::RankHeader, -1,
                      (collapsed ? "\xE2\x96\xB8 " : "\xE2\x96\xBE ") + rankHeaderLabel(trace, rank));
            if (collapsed) {
                // The rank's summary: every lane of its streams, drawn over each other in the header's lane.
                TimelineRow& header = m_rows.back();
                header.firstGlobalLane = globalLanes;
                for (auto& [device, streams] : rows.deviceStreams)
                    for (uint32_t t : streams) {
                        m_rowOfTrack[t] = int(m_rows.size()) - 1;
                        m_overlaidFirstLane[t] = globalLanes;
                        globalLanes += trackLanes[t];
                    }
                header.overlaidLanes = globalLanes - header.firstGlobalLane;
                if (header.overlaidLanes == 0)
                    header.firstGlobalLane = -1;
                continue;
            }
        }
        if (!rows.hostTracks.empty()) {
            if (rank < 0) // a rank's header stands for its host threads' too
                addHeader(TimelineRowKind::HostHeader, -1, "Host threads");
            for (uint32_t t : rows.hostTracks)
                addTrackRow(TimelineRowKind::HostThread, t);
        }
        for (auto& [device, streams] : rows.deviceStreams) {
            std::stable_sort(streams.begin(), streams.end(), [&](uint32_t a, uint32_t b) {
                const Track& ta = trace.tracks[a];
                const Track& tb = trace.tracks[b];
                if (streamRank(ta.streamKind) != streamRank(tb.streamKind))
                    return streamRank(ta.streamKind) < streamRank(tb.streamKind);
                return naturalLess(ta.name, tb.name);
            });
            addHeader(TimelineRowKind::DeviceHeader, device, deviceHeaderLabel(trace, device, rank));
            for (uint32_t t : streams)
                addTrackRow(TimelineRowKind::Stream, t);
        }
    }
    m_totalLanes = lane;
    m_rowFirstLane.reserve(m_rows.size());
    for (const TimelineRow& r : m_rows)
        m_rowFirstLane.push_back(r.firstLane);

    // Spans per lane: a track with one lane is its consecutive spans; the lanes of a track with overlaps list theirs.
    m_lanes.assign(size_t(globalLanes), TimelineLane{});
    m_summaries.resize(size_t(globalLanes));
    if (!indexed)
        return;
    m_laneLists.reserve(m_spanLane.size());
    for (uint32_t t = 0; t < trackCount; ++t) {
        if (m_rowOfTrack[t] < 0)
            continue; // a Ranges track of no host thread or stream: not drawn
        const TimelineRow& row = m_rows[size_t(m_rowOfTrack[t])];
        const bool overlaid = m_overlaidFirstLane[t] >= 0;
        const uint32_t b = trace.trackBegin(t), e = trace.trackEnd(t);
        if (m_trackLaneOffset[t] < 0) {
            const int g = overlaid ? m_overlaidFirstLane[t] : row.firstGlobalLane + m_trackFirstLane[t];
            m_lanes[size_t(g)] = TimelineLane{nullptr, b, e - b};
            continue;
        }
        const uint16_t* lanes = m_spanLane.data() + m_trackLaneOffset[t];
        const int firstGlobal = overlaid ? m_overlaidFirstLane[t] : row.firstGlobalLane;
        const int laneCount = overlaid ? trackLanes[t] : row.laneCount;
        for (int l = 0; l < laneCount; ++l) {
            const size_t begin = m_laneLists.size();
            for (uint32_t i = b; i < e; ++i)
                if (lanes[i - b] == l)
                    m_laneLists.push_back(i);
            const auto count = uint32_t(m_laneLists.size() - begin);
            m_lanes[size_t(firstGlobal + l)] = TimelineLane{nullptr, uint32_t(begin), count};
        }
    }
    // Pointers only now that m_laneLists no longer grows.
    for (uint32_t t = 0; t < trackCount; ++t) {
        if (m_trackLaneOffset[t] < 0 || m_rowOfTrack[t] < 0)
            continue;
        const TimelineRow& row = m_rows[size_t(m_rowOfTrack[t])];
        const bool overlaid = m_overlaidFirstLane[t] >= 0;
        const int firstGlobal = overlaid ? m_overlaidFirstLane[t] : row.firstGlobalLane;
        const int laneCount = overlaid ? trackLanes[t] : row.laneCount;
        for (int l = 0; l < laneCount; ++l) {
            TimelineLane& ln = m_lanes[size_t(firstGlobal + l)];
            ln.list = m_laneLists.data() + ln.base;
            ln.base = 0;
        }
    }
    buildSummaries();
}

void TimelineLayout::buildSummaries()
{
    const Trace& trace = *m_trace;
    // The lanes on all cores, the longest first (taken as threads come free, the longest last could keep one
    // core busy alone).
    std::vector<uint32_t> order(m_lanes.size());
    std::iota(order.begin(), order.end(), 0u);
    std::stable_sort(order.begin(), order.end(),
                     [this](uint32_t a, uint32_t b) { return m_lanes[a].count > m_lanes[b].count; });
    parallelFor(order.size(), [&](size_t k) {
        const size_t g = order[k];
        const TimelineLane& lane = m_lanes[g];
        LaneSpans spans;
        spans.start = trace.spans.start.view();
        spans.end = trace.spans.end.view();
        spans.kind = trace.spans.kind.data();
        spans.list = lane.list;
        spans.base = lane.base;
        spans.count = lane.count;
        m_summaries[g] = LaneSummary(spans, m_origin);
    });
}

FlowIndex::FlowIndex(const Trace& tr) : trace(&tr)
{
    const size_t n = tr.flows.size();
    if (n == 0)
        return;
    std::vector<std::pair<int64_t, uint32_t>> keyed(n);
    const TimeColumn::View start = tr.spans.start.view(), end = tr.spans.end.view();
    for (size_t i = 0; i < n; ++i) {
        const Flow& f = tr.flows[i];
        keyed[i] = {std::min(start[f.from], start[f.to]), uint32_t(i)};
    }
    std::sort(keyed.begin(), keyed.end());
    order.resize(n);
    minTime.resize(n);
    prefixMaxTime.resize(n);
    int64_t maxTime = std::numeric_limits<int64_t>::min();
    for (size_t i = 0; i < n; ++i) {
        const Flow& f = tr.flows[keyed[i].second];
        order[i] = keyed[i].second;
        minTime[i] = keyed[i].first;
        maxTime = std::max({maxTime, end[f.from], end[f.to]});
        prefixMaxTime[i] = maxTime;
    }
}

int TimelineLayout::laneOfSpan(uint32_t span) const
{
    if (!m_trace || span >= m_trace->spanCount())
        return 0;
    const uint32_t t = m_trace->spans.track[span];
    if (t >= m_trackLaneOffset.size())
        return 0;
    if (m_overlaidFirstLane[t] >= 0)
        return 0; // drawn in its folded rank's header row
    if (m_trackLaneOffset[t] < 0)
        return m_trackFirstLane[t];
    return m_spanLane[size_t(m_trackLaneOffset[t]) + (span - m_trace->trackBegin(t))];
}

int TimelineLayout::rowAtLane(double laneY) const
{
    if (m_rows.empty() || laneY < 0 || laneY >= m_totalLanes)
        return -1;
    auto it = std::upper_bound(m_rowFirstLane.begin(), m_rowFirstLane.end(), laneY,
                               [](double v, int first) { return v < double(first); });
    return int(it - m_rowFirstLane.begin()) - 1;
}

int TimelineLayout::rowOfTrack(uint32_t track) const
{
    return track < m_rowOfTrack.size() ? m_rowOfTrack[track] : -1;
}

size_t TimelineLayout::memoryBytes() const
{
    size_t bytes = m_spanLane.capacity() * sizeof(uint16_t) + m_laneLists.capacity() * sizeof(uint32_t)
        + m_lanes.capacity() * sizeof(TimelineLane) + m_trackLaneOffset.capacity() * sizeof(int64_t)
        + m_rowOfTrack.capacity() * sizeof(int) + m_rowFirstLane.capacity() * sizeof(int)
        + m_trackFirstLane.capacity() * sizeof(int) + m_overlaidFirstLane.capacity() * sizeof(int)
        + m_summaries.capacity() * sizeof(LaneSummary);
    for (const LaneSummary& summary : m_summaries)
        bytes += summary.memoryBytes();
    for (const TimelineRow& r : m_rows)
        bytes += sizeof(TimelineRow) + r.label.capacity();
    return bytes;
}

size_t firstEndingAfter(const Trace& trace, const TimelineLane& lane, size_t from, int64_t t)
{
    const TimeColumn& end = trace.spans.end;
    size_t lo = from, hi = lane.count;
    while (lo < hi) {
        const size_t mid = lo + (hi - lo) / 2;
        if (end[lane.at(mid)] <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

size_t firstStartingAtOrAfter(const Trace& trace, const TimelineLane& lane, size_t from, int64_t t)
{
    const TimeColumn& start = trace.spans.start;
    size_t lo = from, hi = lane.count;
    while (lo < hi) {
        const size_t mid = lo + (hi - lo) / 2;
        if (start[lane.at(mid)] < t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

} // namespace streamscope
