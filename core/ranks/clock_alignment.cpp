// Aligning ranks across hosts by their measured clock offsets (clock_alignment.h).
#include "clock_alignment.h"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <map>
#include <utility>

namespace streamscope {

namespace {

std::string ranksOf(std::vector<int> ranks)
{
    std::sort(ranks.begin(), ranks.end());
    std::string s;
    for (size_t i = 0; i < ranks.size(); ++i) {
        size_t j = i;
        while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1)
            ++j;
        s += (s.empty() ? "" : ", ") + std::to_string(ranks[i]);
        if (j > i)
            s += (j == i + 1 ? ", " : "-") + std::to_string(ranks[j]);
        i = j;
    }
    return (ranks.size() == 1 ? "rank " : "ranks ") + s;
}

std::string micro(int64_t ns)
{
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.1f µs", double(ns) / 1000.0);
    return buf;
}

} // namespace

Result<HostClockAlignment> alignByClockSync(const std::vector<HostClockRank>& ranks)
{
    std::map<std::string, std::vector<size_t>> hosts;
    for (size_t i = 0; i < ranks.size(); ++i)
        hosts[ranks[i].host].push_back(i);
    std::map<std::pair<std::string, std::string>, std::vector<int>> rendezvous; // (job, rank 0's host) -> ranks
    for (const HostClockRank& r : ranks)
        if (r.sync)
            rendezvous[{r.sync->job, r.sync->rootHost}].push_back(r.rank);
    std::string which;
    for (const auto& [h, is] : hosts) {
        std::vector<int> rs;
        for (size_t i : is)
            rs.push_back(ranks[i].rank);
        which += (which.empty() ? "" : "; ") + h + ": " + ranksOf(rs);
    }
    const std::string run = "run every rank with a rendezvous (run --rendezvous HOST:PORT, STREAMSCOPE_RENDEZVOUS, "
                            "or torchrun's MASTER_ADDR), or merge --align wall-clock to align them by each host's "
                            "system clock, with an error that depends on how well those clocks are synchronised "
                            "(NTP: typically 0.1-10 ms)";
    if (rendezvous.empty())
        return Error{{},
                     {},
                     "the ranks ran on " + std::to_string(hosts.size()) + " hosts (" + which
                         + ") that share no clock, and their traces carry no measured offset between hosts: " + run};
    if (rendezvous.size() > 1) {
        std::string groups;
        for (const auto& [key, rs] : rendezvous)
            groups += (groups.empty() ? "" : "; ") + ranksOf(rs) + " against rank 0 on host " + key.second
                + " (rendezvous " + key.first + ")";
        return Error{{},
                     {},
                     "the ranks' clock offsets were measured in different rendezvous (" + groups
                         + "): these traces are not of one job run, and their offsets are to different clocks"};
    }
    const std::string& root = rendezvous.begin()->first.second;
    std::map<std::string, const ClockSync*> best; // per host: the offset with the smallest uncertainty
    std::vector<int> unmeasured;
    std::string unmeasuredHosts;
    for (const auto& [h, is] : hosts) {
        const ClockSync* b = nullptr;
        for (size_t i : is)
            if (ranks[i].sync && (!b || ranks[i].sync->uncertaintyNs < b->uncertaintyNs))
                b = &*ranks[i].sync;
        best[h] = b;
        if (h == root || b)
            continue;
        for (size_t i : is)
            unmeasured.push_back(ranks[i].rank);
        unmeasuredHosts += (unmeasuredHosts.empty() ? "" : ", ") + h;
    }
    if (!unmeasured.empty())
        return Error{{},
                     {},
                     ranksOf(unmeasured) + " (host " + unmeasuredHosts + ") carry no clock offset to rank 0 (host "
                         + root
                         + "): they did not take part in its rendezvous, so their host's clock cannot be "
                           "related to rank 0's; "
                         + run};

    HostClockAlignment out;
    std::map<std::string, int64_t> hostOffset;
    int samples = INT_MAX;
    for (const auto& [h, b] : best) {
        if (h == root) {
            hostOffset[h] = 0; // rank 0's own steady clock: exact
            continue;
        }
        hostOffset[h] = b->offsetNs;
        out.errorNs = std::max(out.errorNs, b->uncertaintyNs);
        samples = std::min(samples, b->samples);
    }
    // Ranks of one host share its clock, so their measurements must agree within their uncertainties; where they do
    // not, the host name may stand for several machines (containers with one name, a time namespace).
    for (const auto& [h, is] : hosts)
        for (size_t i : is) {
            const auto& s = ranks[i].sync;
            const int64_t hostUncertainty = h == root ? 0 : best[h]->uncertaintyNs;
            const int64_t apart = s ? s->offsetNs - hostOffset[h] : 0;
            if (s && std::max(apart, -apart) > s->uncertaintyNs + hostUncertainty)
                out.notes.push_back("rank " + std::to_string(ranks[i].rank) + "'s measured clock offset is "
                                    + micro(apart) + " from host " + h + "'s, more than their uncertainties allow: is "
                                    + h + " one machine?");
        }
    int64_t base = INT64_MAX;
    for (const HostClockRank& r : ranks)
        base = std::min(base, r.originNs + hostOffset[r.host]);
    for (const HostClockRank& r : ranks)
        out.shifts.push_back(r.originNs + hostOffset[r.host] - base);
    out.sentence = std::to_string(hosts.size()) + " hosts, aligned by ping-pong to rank 0 (host " + root
        + "): error up to " + micro(out.errorNs) + " (half the shortest of "
        + (samples == INT_MAX ? std::string("the") : std::to_string(samples))
        + " round trips; ranks on one host share its steady clock)";
    return out;
}

} // namespace streamscope
