// straggler: in a job of several ranks, one rank reached its collective calls last and the others waited for it
// (docs/ANALYSIS.md). Works on every trace whose collective calls are linked across ranks ("collective" flows): a job
// simulated as one, or a merge of per-rank traces.
#include "collectives.h"
#include "diagnostics_context.h"

#include <map>

namespace streamscope::diag {

void straggler(const Context& c, std::vector<Diagnostic>& out)
{
    const auto calls = collectiveCalls(c.t);
    if (calls.empty())
        return;
    struct Late {
        size_t calls = 0;
        int64_t maxWait = 0;
        int64_t totalWait = 0;
        std::vector<uint32_t> spans;
    };
    std::map<int, Late> byRank; // rank that arrived last -> what the others lost to it
    size_t held = 0;
    for (const auto& call : calls) {
        if (call.waitedNs < c.th.minWaitNs)
            continue;
        ++held;
        const int rank = rankOfTrack(c.t, c.t.spans.track[call.last]);
        Late& l = byRank[rank];
        ++l.calls;
        l.maxWait = std::max(l.maxWait, call.waitedNs);
        l.totalWait += call.totalWaitNs;
        l.spans.push_back(call.last);
    }
    for (auto& [rank, l] : byRank) {
        // The rank that held the most calls is the straggler; others are named only if they held a third of them.
        if (l.calls * 3 < held)
            continue;
        const uint32_t first = l.spans.front();
        Diagnostic d;
        d.rule = "straggler";
        d.severity = "warning";
        d.message = (rank >= 0 ? "Rank " + std::to_string(rank) : std::string("One rank")) + " reached "
            + std::to_string(l.calls) + " of " + std::to_string(calls.size()) + " collective calls last ("
            + c.label(first) + "): the other ranks waited up to " + c.at(l.maxWait) + " for it, " + c.at(l.totalWait)
            + " in all, before the calls could start.";
        if (l.spans.size() > c.o.maxSpans)
            l.spans.resize(c.o.maxSpans);
        d.spans = std::move(l.spans);
        out.push_back(std::move(d));
    }
}

} // namespace streamscope::diag
