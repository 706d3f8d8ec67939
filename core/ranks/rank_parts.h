// A job's trace by rank: which ranks it holds, one rank's part of it as a trace of its own (what Compare Ranks shows
// side by side), and what each rank did (the per-rank table of the window's analysis). Works on any trace whose rows
// are named "rank R · ..." (a merge, rank_merge.h, or a job simulated whole), read from a file or not.
#pragma once

#include "trace.h"

#include <cstdint>
#include <vector>

namespace streamscope {

// The ranks that have rows in the trace, in increasing order (empty: not a job of ranks).
std::vector<int> ranksOfTrace(const Trace& trace);

// Rank `rank`'s rows of a job, named as that rank's own trace names them (without "rank R · "), its devices
// numbered as the rank numbered them (the "rank_device" property a merge records; else in order), its spans,
// waits and flows; the collective flows, which cross ranks, are left out. The info is the job's, its settings
// without those of the job as a whole ("ranks", "clock_alignment", "collectives", "rank N" of the other ranks), plus
// "rank" (this one). Empty (no rows) for a rank the trace does not hold.
Trace rankPartOfTrace(const Trace& job, int rank);

// What one rank did in a job.
struct RankSummary {
    int rank = 0;
    size_t spans = 0;
    int64_t firstGpuStart = 0, lastGpuEnd = 0; // its GPU work (0, 0: none)
    int64_t gpuBusyNs = 0;                     // time at least one of its GPU ops ran
    int64_t collectiveNs = 0;                  // time in its parts of collective calls
    int64_t collectiveWaitNs = 0;              // how long it waited in collective calls for the rank that arrived last
    size_t calls = 0;                          // collective calls it took part in
    size_t arrivedLast = 0;                    // of them, the calls it reached last (it held the others)
};
std::vector<RankSummary> summarizeRanks(const Trace& trace);

} // namespace streamscope
