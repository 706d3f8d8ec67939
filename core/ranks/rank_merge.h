// One job from its ranks: `streamscope-cli merge job.*.json -o job.json` (docs/RANKS.md). Each rank's trace keeps its
// rows under "rank R · ...", its devices become devices of the job (one per rank and GPU), its times move onto one
// clock. Ranks on one host share that host's steady clock, so their alignment is exact; simulated ranks all start at
// 0; ranks on different hosts are aligned by the offsets to rank 0's clock they measured at their rendezvous
// (clock_alignment.h), with that error stated; without offsets the merge refuses them unless told to align them by
// the hosts' system clocks, whose error it cannot know and says so.
#pragma once

#include "result.h"
#include "trace.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace streamscope {

struct RankTrace {
    std::string file; // for messages
    Trace trace;
};

struct MergeOptions {
    bool alignWallClock = false; // ranks on several hosts: align by each host's system clock
    bool ranksByOrder = false;   // traces without a rank (not run under a launcher): their order is their rank
    // Clocks already aligned by the caller (foreign_ranks.h: other tools' traces, by the wall clock they record): the
    // sentence that says how and how well, and the shift of each input trace (in input order). The clock settings
    // of StreamScope's own traces are then not read.
    struct PresetAlignment {
        std::string alignment;
        std::vector<int64_t> shiftNs;
    };
    std::optional<PresetAlignment> presetAlignment;
};

struct MergeResult {
    Trace trace;
    std::vector<std::string> notes; // what the merge did that a user should know (missing ranks, alignment)
    std::string alignment;          // how the clocks were aligned, and how well: one sentence
};

Result<MergeResult> mergeRankTraces(std::vector<RankTrace> ranks, const MergeOptions& options = {});

} // namespace streamscope
