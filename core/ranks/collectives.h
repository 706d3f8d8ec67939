// Collectives across the ranks of a job: which spans of a trace are one collective call (or one send/recv pair) of
// several ranks, linked by flows of kind "collective" (rank R's part -> rank R+1's; a send -> its recv), and what
// each call shows: when each rank arrived, who arrived last and how long the others waited (the `straggler`
// diagnostic, docs/ANALYSIS.md; the per-collective metrics of `analyze`). docs/RANKS.md describes both.
#pragma once

#include "scenario.h"
#include "trace.h"

#include <cstdint>
#include <string>
#include <vector>

namespace streamscope {

// A collective span of a job's trace, as the linking needs it.
struct CollectiveSpan {
    uint32_t span = 0;
    int rank = 0;
    int thread = 0; // the host thread's index among its rank's threads
    CollectiveKind kind = CollectiveKind::AllReduce;
    int peer = -1; // send/recv: the other rank
};

// Adds the "collective" flows of these spans to a finalized trace: the k-th collective of a host thread on every
// rank is one call (NCCL matches calls on a communicator in issue order), the k-th send from a to b is the k-th recv
// on b from a. Returns the number of calls linked.
size_t linkCollectiveSpans(Trace& trace, std::vector<CollectiveSpan> spans);

// The collective spans of a job simulated as one scenario (expandJob), then linked.
size_t linkCollectives(Trace& trace, const Scenario& expandedJob);

// The collective spans of a merged job (rank_merge.h), each rank's ops known from the scenario its trace embeds
// (`scenarios` by rank; a rank without one has no collectives linked), then linked.
size_t linkMergedCollectives(Trace& merged, const std::vector<const Scenario*>& scenarios, int world);

// The send/recv peer of a collective op on `rank` of `world` ranks (-1 for other collectives).
int collectivePeer(const Op& op, int rank, int world);

// One collective call of a trace, from its "collective" flows: its parts by rank, when each rank's part was ready to
// run (its launch call returned and the previous op of its stream ended: it arrived), and when the call started.
struct CollectiveCallView {
    std::string name;
    std::vector<uint32_t> spans; // in rank order (the order of the flows)
    std::vector<int64_t> arrival;
    uint32_t last = 0;    // the span whose rank arrived last
    int64_t start = 0;    // the earliest start of its parts
    int64_t end = 0;      // the latest end
    int64_t waitedNs = 0; // the longest another rank waited for the last one
    int64_t totalWaitNs = 0;
};
std::vector<CollectiveCallView> collectiveCalls(const Trace& trace);

// The rank a span's row belongs to ("rank R · ..."), or -1.
int rankOfTrack(const Trace& trace, uint32_t track);

} // namespace streamscope
