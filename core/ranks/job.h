// A job of several ranks simulated as one scenario (runScenario with "ranks", expandJob): one rank's own trace cut
// out of the job's, as that rank's process under a launcher writes it (docs/RANKS.md "Collectives").
#pragma once

#include "scenario.h"
#include "trace.h"

namespace streamscope {

// Rank `rank`'s rows of a job's trace, named as a one-rank run names them (without "rank R · "), its devices,
// threads and spans numbered as in the rank's own scenario; flows within the rank are kept, "collective" flows
// (they cross ranks) are not. The info is the job's, without its settings "ranks", "clock_alignment" and
// "devices_per_rank".
Trace extractRankTrace(const Trace& job, const JobLayout& layout, int rank);

} // namespace streamscope
