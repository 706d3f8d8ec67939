// Aligning ranks across hosts by their measured clock offsets (clock_alignment.h).
#include "clock_alignment.h"

#include <algorithm>
#include <climits>
#include <cmath>
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

std::string listOf(const std::vector<std::string>& items)
{
    std::string s;
    for (size_t i = 0; i < items.size() && i < 8; ++i)
        s += (i ? ", " : "") + items[i];
    if (items.size() > 8)
        s += ", ... (" + std::to_string(items.size()) + " hosts)";
    return s;
}

// Below this, (u1 + u2) / (a2 - a1), two measurements tell a host's drift: 100 ppm is above crystal oscillators'
// typical few to tens of ppm, and a rate known that well moves a 1 ms span by at most 0.1 µs.
constexpr double kMaxRateError = 100e-6;

bool twice(const ClockSync& s)
{
    return s.atNs && s.after && s.after->atNs > *s.atNs;
}

// The offset a host is placed by, and its error: a line through two measurements, or one offset (clock_alignment.h).
struct HostLine {
    int64_t offset = 0; // at `at`, on the host's own steady clock
    int64_t at = 0;
    double rate = 0;
    bool drift = false; // placed by the line through two measurements (rate may still be 0)
    int64_t errorNs = 0;
    int64_t offsetAt(int64_t x) const
    {
        return offset + (rate == 0 ? 0 : int64_t(std::llround(rate * double(x - at))));
    }
};

bool tellsDrift(const ClockSync& s)
{
    return twice(s) && measuresDrift(s.uncertaintyNs, s.after->uncertaintyNs, s.after->atNs - *s.atNs);
}

int64_t worst(const ClockSync& s)
{
    if (!twice(s))
        return s.uncertaintyNs;
    if (tellsDrift(s))
        return std::max(s.uncertaintyNs, s.after->uncertaintyNs);
    const int64_t change = s.after->offsetNs - s.offsetNs;
    return std::max(s.uncertaintyNs, std::max(change, -change) + s.after->uncertaintyNs);
}

HostLine hostLine(const ClockSync& s)
{
    HostLine l;
    l.offset = s.offsetNs;
    l.at = s.atNs.value_or(0);
    l.errorNs = worst(s);
    l.drift = tellsDrift(s);
    if (l.drift)
        l.rate = double(s.after->offsetNs - s.offsetNs) / double(s.after->atNs - *s.atNs);
    return l;
}

} // namespace

bool measuresDrift(int64_t u1, int64_t u2, int64_t apartNs)
{
    return apartNs > 0 && double(u1) + double(u2) <= kMaxRateError * double(apartNs);
}

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
    // Per host: the measurement it is placed by. One taken before and after the run first (its drift can be
    // corrected), then the smallest error.
    std::map<std::string, const ClockSync*> best;
    std::vector<int> unmeasured;
    std::string unmeasuredHosts;
    for (const auto& [h, is] : hosts) {
        const ClockSync* b = nullptr;
        for (size_t i : is) {
            const ClockSync* s = ranks[i].sync ? &*ranks[i].sync : nullptr;
            if (s && (!b || std::make_pair(!twice(*s), worst(*s)) < std::make_pair(!twice(*b), worst(*b))))
                b = s;
        }
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
    std::map<std::string, HostLine> line;
    int samples = INT_MAX;
    std::vector<std::string> corrected, tooClose, once;
    for (const auto& [h, b] : best) {
        if (h == root) {
            line[h] = HostLine{}; // rank 0's own steady clock: exact
            continue;
        }
        HostLine l = hostLine(*b);
        out.errorNs = std::max(out.errorNs, l.errorNs);
        samples = std::min(samples, b->samples);
        char figure[64];
        if (l.drift) {
            std::snprintf(figure, sizeof figure, "%+.2f ± %.2f ppm", l.rate * 1e6,
                          double(b->uncertaintyNs + b->after->uncertaintyNs) / double(b->after->atNs - *b->atNs) * 1e6);
            corrected.push_back("host " + h + ": " + figure);
        } else if (twice(*b)) {
            std::snprintf(figure, sizeof figure, "%.2f s apart", double(b->after->atNs - *b->atNs) / 1e9);
            tooClose.push_back("host " + h + ": " + figure);
        } else {
            once.push_back(h);
            if (!b->afterMissing.empty())
                out.notes.push_back("host " + h + ": the clock offset was not measured again after the run ("
                                    + b->afterMissing + "), so its drift during the run is not corrected");
        }
        line[h] = l;
    }
    // Ranks of one host share its clock, so their measurements must agree within their uncertainties; where they do
    // not, the host name may stand for several machines (containers with one name, a time namespace).
    for (const auto& [h, is] : hosts)
        for (size_t i : is) {
            const auto& s = ranks[i].sync;
            if (!s)
                continue;
            const HostLine& l = line[h];
            const int64_t at = s->atNs ? *s->atNs : l.at;
            const int64_t apart = s->offsetNs - l.offsetAt(at);
            if (std::max(apart, -apart) > s->uncertaintyNs + l.errorNs)
                out.notes.push_back("rank " + std::to_string(ranks[i].rank) + "'s measured clock offset is "
                                    + micro(apart) + " from host " + h + "'s, more than their uncertainties allow: is "
                                    + h + " one machine?");
        }
    // Rank r's time t is at origin + t on its host's clock and at origin + t + offset(origin + t) on rank 0's.
    int64_t base = INT64_MAX;
    for (const HostClockRank& r : ranks)
        base = std::min(base, r.originNs + line[r.host].offsetAt(r.originNs));
    for (const HostClockRank& r : ranks) {
        const HostLine& l = line[r.host];
        out.maps.push_back(RankClockMap{r.originNs + l.offsetAt(r.originNs) - base, l.rate});
    }
    out.sentence = std::to_string(hosts.size()) + " hosts, aligned by ping-pong to rank 0 (host " + root
        + "): error up to " + micro(out.errorNs) + " (half the shortest of "
        + (samples == INT_MAX ? std::string("the") : std::to_string(samples))
        + " round trips; ranks on one host share its steady clock)";
    if (!corrected.empty())
        out.sentence +=
            "; clock drift corrected between the offsets measured before and after the run (" + listOf(corrected) + ")";
    if (!tooClose.empty())
        out.sentence += "; measured again too soon after the first to tell a drift from their error ("
            + listOf(tooClose) + "): the change between them is in the error";
    if (!once.empty())
        out.sentence += "; " + std::string(once.size() == 1 ? "host " : "hosts ") + listOf(once)
            + " measured before the run only: the clock drift during the run is not corrected nor in the error";
    return out;
}

} // namespace streamscope
