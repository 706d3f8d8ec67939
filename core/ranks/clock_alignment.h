// Ranks recorded on several hosts onto one clock, by the offsets the ranks measured to rank 0's steady clock at their
// rendezvous (ranks.h ClockSync, rendezvous.h). Ranks on one host share its steady clock exactly, so a host needs one
// measurement (its best); rank 0's own host needs none. The alignment's error is the largest uncertainty among the
// hosts' measurements, and is stated; ranks that cannot be aligned are refused, naming them and why.
#pragma once

#include "ranks.h"
#include "result.h"

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace streamscope {

struct HostClockRank {
    int rank = 0;
    std::string host;
    int64_t originNs = 0; // the trace's time 0 on its host's steady clock
    std::optional<ClockSync> sync;
};

// Where a rank's trace time t lies on the job's clock: t + shift + rate * t.
struct RankClockMap {
    int64_t shift = 0;
    double rate = 0; // the host's clock drift against rank 0's (0: none corrected); e.g. 2e-6 for 2 ppm
    int64_t map(int64_t t) const { return t + shift + (rate == 0 ? 0 : int64_t(std::llround(rate * double(t)))); }
};

struct HostClockAlignment {
    std::vector<RankClockMap> maps; // per input
    int64_t errorNs = 0;            // the largest error of the hosts' alignment (below)
    std::string sentence;           // how, and how well: "3 hosts, aligned by ping-pong to rank 0 (host a): ..."
    std::vector<std::string> notes;
};

// Ranks on more than one host. Refused (BadInput): ranks on a host other than rank 0's none of which carries an
// offset; ranks measured in different rendezvous (different jobs, or rank 0 on different hosts).
//
// A host measured before and after the run (ClockSync::after) is placed by the line through the two offsets: if its
// clock's rate against rank 0's stayed the same between them (drift changes with temperature over minutes, not
// within a run), the offset at any time between lies within the larger of the two uncertainties. Two measurements
// closer together than (u1 + u2) / 100 ppm are too close to tell a drift from their error: the first offset is used
// and, with the drift bounded by the second, the error is max(u1, |o2 - o1| + u2). A host measured once is placed
// by that offset and its error is u1; its drift during the run is not in it, and the sentence says so.
Result<HostClockAlignment> alignByClockSync(const std::vector<HostClockRank>& ranks);

// Whether two offsets measured `apartNs` apart, within ±u1 and ±u2, tell a drift: (u1 + u2) / apart <= 100 ppm.
bool measuresDrift(int64_t u1, int64_t u2, int64_t apartNs);

} // namespace streamscope
