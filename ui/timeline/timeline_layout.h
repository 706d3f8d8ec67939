// Rows of the timeline, computed from a Trace (Qt-free): host-thread rows on top, then per device a header row and
// its streams (legacy default stream first, then the per-thread default streams, then by name), the way Nsight
// Systems lays out a report. A job of several ranks (rows "rank R · ...", docs/RANKS.md) is grouped rank -> device
// -> stream: per rank a header row, its host threads, then its devices and their streams. Ranges (PyTorch's CPU ops,
// annotations) are one row directly above the host thread or stream they annotate, a lane per nesting depth, the
// outermost on top. Overlapping spans of one track are never hidden: they are stacked into lanes (greedy interval
// partitioning, so a row has as many lanes as its deepest overlap). Within a lane spans do not overlap, so they are
// sorted by start *and* by end: the first span visible in a time window is one binary search away, even when it began
// long before the window.
#pragma once

#include "lane_summary.h"
#include "trace.h"

#include <cstdint>
#include <set>
#include <string>
#include <vector>

namespace streamscope {

enum class TimelineRowKind : uint8_t {
    HostHeader,   // "Host threads"
    HostThread,   // a host thread's API calls, syncs and host work
    DeviceHeader, // "GPU 0 · NVIDIA H200"
    Stream,       // a stream of a device
    Ranges,       // the ranges (CPU ops, annotations) of the host thread or stream in the row below: one lane per
                  // nesting depth, each lane a track of kind Ranges
    RankHeader,   // "▾ Rank 2 · host node7": a rank of a job, above its host threads and devices ("▸": collapsed)
};

struct TimelineRow {
    TimelineRowKind kind = TimelineRowKind::Stream;
    int track = -1; // index into Trace::tracks; -1 for headers; Ranges: the host thread or stream annotated
    int device = -1;
    int rank = -1; // the rank of a job the row belongs to (-1: none)
    std::string label;
    int firstLane = 0;        // vertical position in lane units (rows are stacked top to bottom)
    int laneCount = 1;        // headers: 1
    int firstGlobalLane = -1; // index of its first lane in TimelineLayout's lane arrays; -1 for headers
    // A folded rank's header row: the lanes of the rank's streams (global lanes firstGlobalLane, ...), all drawn
    // over each other in the row's one lane, so that the folded rank still shows when its GPUs worked; 0: none.
    int overlaidLanes = 0;
};

inline bool isHeaderRow(const TimelineRow& row)
{
    return row.kind == TimelineRowKind::HostHeader || row.kind == TimelineRowKind::DeviceHeader
        || row.kind == TimelineRowKind::RankHeader;
}
// How many of the layout's lanes a row draws, and the lane (from the top of the chart) its k-th one is drawn in.
inline int globalLanesOfRow(const TimelineRow& row)
{
    return row.firstGlobalLane < 0 ? 0 : (row.overlaidLanes > 0 ? row.overlaidLanes : row.laneCount);
}
inline int drawnLaneOfRow(const TimelineRow& row, int k)
{
    return row.overlaidLanes > 0 ? row.firstLane : row.firstLane + k;
}

// The spans of one lane, in start (and end) order: consecutive span indices (a track without overlaps: no storage at
// all), or a list.
struct TimelineLane {
    const uint32_t* list = nullptr; // nullptr: the spans are base, base + 1, ..., base + count - 1
    uint32_t base = 0;
    uint32_t count = 0;
    uint32_t at(size_t position) const { return list ? list[position] : base + uint32_t(position); }
};

class TimelineLayout {
public:
    TimelineLayout() = default;
    // Builds rows and lanes of a finalized trace, which must outlive the layout (it reads the spans' tracks). The
    // ranks in `collapsedRanks` show their header row only: their streams' spans are drawn over each other in it
    // (rowOfTrack is the header row, laneOfSpan 0); their host threads' spans are in no row (rowOfTrack -1).
    explicit TimelineLayout(const Trace& trace, const std::set<int>& collapsedRanks = {});

    // The trace it was built for (nullptr: none) and the ranks it shows folded.
    const Trace* trace() const { return m_trace; }
    const std::set<int>& collapsedRanks() const { return m_collapsedRanks; }

    const std::vector<TimelineRow>& rows() const { return m_rows; }
    // Total height in lane units.
    int totalLanes() const { return m_totalLanes; }
    // The row whose lanes cover vertical position `lane` (lane units from the top), or -1.
    int rowAtLane(double lane) const;
    // The row of a track, or -1.
    int rowOfTrack(uint32_t track) const;

    // Lane of a span within its row (0 = top lane).
    int laneOfSpan(uint32_t span) const;
    // Lanes over all tracks: row r has lanes rows()[r].firstGlobalLane + 0 .. laneCount - 1.
    size_t globalLaneCount() const { return m_lanes.size(); }
    const TimelineLane& lane(size_t globalLane) const { return m_lanes[globalLane]; }
    // The lane's summaries by zoom level (lane_summary.h), built with the layout: what a wide view draws.
    const LaneSummary& summary(size_t globalLane) const { return m_summaries[globalLane]; }

    // Time origin: the earliest span start; the view's x axis is ns relative to it (so that absolute epoch
    // timestamps of imported traces keep ns precision in a double).
    int64_t origin() const { return m_origin; }
    int64_t endTime() const { return m_end; }

    // Memory held by the index structures, for benchmarks.
    size_t memoryBytes() const;

private:
    const Trace* m_trace = nullptr;
    std::set<int> m_collapsedRanks;
    std::vector<TimelineRow> m_rows;
    std::vector<int> m_rowOfTrack;
    std::vector<int> m_rowFirstLane; // rows' firstLane, for binary search
    int m_totalLanes = 0;
    void buildSummaries();
    std::vector<TimelineLane> m_lanes;      // per global lane
    std::vector<LaneSummary> m_summaries;   // per global lane
    std::vector<uint32_t> m_laneLists;      // the span lists of lanes of tracks with overlaps
    std::vector<int64_t> m_trackLaneOffset; // per track: -1 (one lane) or offset into m_spanLane
    std::vector<uint16_t> m_spanLane;       // lane per span, for tracks with overlaps only
    std::vector<int> m_trackFirstLane;      // per track: its first lane in its row (a Ranges track: its depth)
    std::vector<int> m_overlaidFirstLane;   // per track: its first global lane when it is overlaid in a folded
                                            // rank's header row, else -1
    int64_t m_origin = 0;
    int64_t m_end = 0;
};

// The trace's flows (arrows) sorted by the earlier start of their two spans, with the prefix maximum of their
// later end, so that the arrows of a time window are two binary searches away. Built once per trace (on the loader's
// thread, beside the layout: 1.2 s for the 7.4 M flows of the 100 M-span benchmark trace); the timeline keeps it
// when a rank is folded or unfolded and only the layout is built again.
struct FlowIndex {
    explicit FlowIndex(const Trace& trace);
    const Trace* trace = nullptr; // the trace it was built for
    std::vector<uint32_t> order;  // flow indices
    std::vector<int64_t> minTime;
    std::vector<int64_t> prefixMaxTime;
    size_t memoryBytes() const
    {
        return order.capacity() * sizeof(uint32_t) + (minTime.capacity() + prefixMaxTime.capacity()) * sizeof(int64_t);
    }
};

// Lane assignment of one track's spans (sorted by start): the lowest lane free at each span's start. Exposed for
// tests. Returns the lane per span and sets `laneCount`.
std::vector<uint16_t> assignLanes(TimeColumn::const_iterator start, TimeColumn::const_iterator end, size_t n,
                                  int& laneCount);

// The ranks a new view of `trace` shows folded: none, or every rank of a job of more than kRanksShownUnfolded ranks
// (a row per rank, each showing when its GPUs worked, rather than hundreds of stream rows).
inline constexpr size_t kRanksShownUnfolded = 8;
std::set<int> initiallyCollapsedRanks(const Trace& trace);

// Natural order of names: "s2" < "s10".
bool naturalLess(std::string_view a, std::string_view b);

// Position (in the lane, from `from`) of the first span whose end is > t (a lane's spans are sorted by end).
size_t firstEndingAfter(const Trace& trace, const TimelineLane& lane, size_t from, int64_t t);
// Position (in the lane, from `from`) of the first span whose start is >= t.
size_t firstStartingAtOrAfter(const Trace& trace, const TimelineLane& lane, size_t from, int64_t t);

} // namespace streamscope
