// Ranks recorded on several hosts onto one clock, by the offsets the ranks measured to rank 0's steady clock at their
// rendezvous (ranks.h ClockSync, rendezvous.h). Ranks on one host share its steady clock exactly, so a host needs one
// measurement (its best); rank 0's own host needs none. The alignment's error is the largest uncertainty among the
// hosts' measurements, and is stated; ranks that cannot be aligned are refused, naming them and why.
#pragma once

#include "ranks.h"
#include "result.h"

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

struct HostClockAlignment {
    std::vector<int64_t> shifts; // per input, added to its times
    int64_t errorNs = 0;         // the largest uncertainty of the offsets used
    std::string sentence;        // how, and how well: "3 hosts, aligned by ping-pong to rank 0 (host a): ..."
    std::vector<std::string> notes;
};

// Ranks on more than one host. Refused (BadInput): ranks on a host other than rank 0's none of which carries an
// offset; ranks measured in different rendezvous (different jobs, or rank 0 on different hosts).
Result<HostClockAlignment> alignByClockSync(const std::vector<HostClockRank>& ranks);

} // namespace streamscope
