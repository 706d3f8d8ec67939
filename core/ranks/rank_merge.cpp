// Merging per-rank traces into one (rank_merge.h): read each rank's record (ranks.h), choose the clock alignment,
// then copy tracks, devices, spans and flows with their indices moved.
#include "rank_merge.h"

#include "clock_alignment.h"
#include "collectives.h"
#include "ranks.h"
#include "scenario_json.h"

#include <algorithm>
#include <charconv>
#include <climits>
#include <cstdio>
#include <map>
#include <optional>
#include <set>

namespace streamscope {

namespace {

std::optional<int64_t> settingInt(const RunInfo& info, std::string_view key)
{
    const std::string* v = findSetting(info, key);
    if (!v)
        return std::nullopt;
    int64_t out = 0;
    const auto [ptr, ec] = std::from_chars(v->data(), v->data() + v->size(), out);
    if (ec != std::errc() || ptr != v->data() + v->size())
        return std::nullopt;
    return out;
}

struct RankRecord {
    int rank = 0;
    int worldSize = 0;
    std::string host;
    bool simulated = false;
    int64_t origin = 0;
    int64_t wallOffset = 0;
    int64_t wallError = 0;
    std::optional<ClockSync> sync; // the offset to rank 0's clock measured at the rendezvous
    int64_t shift = 0;             // added to the rank's times
    double rate = 0;               // and rate * time: its host's clock drift, where measured (clock_alignment.h)
};

Error inFile(const RankTrace& r, const std::string& message)
{
    return Error{r.file, {}, message};
}

Result<RankRecord> readRecord(const RankTrace& r, size_t index, const MergeOptions& options)
{
    RankRecord rec;
    const RunInfo& info = r.trace.info;
    rec.host = info.host;
    const auto rank = settingInt(info, "rank");
    const auto world = settingInt(info, "world_size");
    if (rank && world) {
        if (*world < 1 || *world > kMaxRanks || *rank < 0 || *rank >= *world)
            return inFile(r,
                          "info.settings: rank " + std::to_string(*rank) + " of world size " + std::to_string(*world)
                              + " is not a rank of that world (at most " + std::to_string(kMaxRanks) + " ranks)");
        rec.rank = int(*rank);
        rec.worldSize = int(*world);
    } else if (options.ranksByOrder) {
        rec.rank = int(index);
    } else {
        return inFile(r,
                      "not a per-rank trace: info.settings has no rank and world_size (it was not run under "
                      "mpirun, srun or torchrun); merge --ranks-by-order takes the files' order as their ranks");
    }
    if (options.presetAlignment && index < options.presetAlignment->shiftNs.size()) {
        rec.shift = options.presetAlignment->shiftNs[index];
        return rec;
    }
    const std::string* clock = findSetting(info, "clock");
    if (clock ? *clock == "simulated" : info.source == TraceSource::Simulator) {
        rec.simulated = true;
        return rec;
    }
    const auto origin = settingInt(info, "clock_origin_ns");
    if (!origin)
        return inFile(r,
                      "info.settings has no clock_origin_ns: where this rank's time 0 lies on its host's clock "
                      "is unknown, so it cannot be aligned with the other ranks");
    rec.origin = *origin;
    rec.wallOffset = settingInt(info, "clock_wall_offset_ns").value_or(0);
    rec.wallError = settingInt(info, "clock_wall_offset_error_ns").value_or(0);
    auto sync = readClockSync(info);
    if (!sync)
        return Error{r.file, sync.error().path, sync.error().message};
    rec.sync = std::move(*sync);
    if (rec.host.empty())
        return inFile(r, "info.host is empty: ranks can only be aligned by their host's clock when the host is known");
    return rec;
}

std::string rankList(const std::vector<int>& ranks)
{
    std::string s;
    for (size_t i = 0; i < ranks.size(); ++i) {
        size_t j = i;
        while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1)
            ++j;
        if (!s.empty())
            s += ", ";
        s += std::to_string(ranks[i]);
        if (j > i)
            s += (j == i + 1 ? ", " : "-") + std::to_string(ranks[j]);
        i = j;
    }
    return s;
}

std::string microseconds(int64_t ns)
{
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.1f µs", double(ns) / 1000.0);
    return buf;
}

// Chooses each rank's shift onto the job's clock, and says how good the alignment is.
// alignmentError: the error that the alignment adds to each rank's own; notes: what the user should know about it.
Result<std::string> align(std::vector<RankRecord>& recs, const std::vector<RankTrace>& ranks, const MergeOptions& o,
                          int64_t& alignmentError, std::vector<std::string>& notes)
{
    const auto simulated = size_t(std::count_if(recs.begin(), recs.end(), [](const auto& r) { return r.simulated; }));
    if (simulated == recs.size())
        return std::string("simulated ranks: each starts at time 0 of the simulator's clock (exact)");
    if (simulated > 0) {
        const size_t i =
            size_t(std::find_if(recs.begin(), recs.end(), [](const auto& r) { return r.simulated; }) - recs.begin());
        return inFile(ranks[i],
                      "a simulated rank cannot be merged with ranks recorded on a GPU: their clocks have "
                      "nothing in common");
    }
    std::map<std::string, std::vector<int>> hosts;
    for (const auto& r : recs)
        hosts[r.host].push_back(r.rank);
    if (hosts.size() == 1) {
        const int64_t base = std::min_element(recs.begin(), recs.end(), [](const auto& a, const auto& b) {
                                 return a.origin < b.origin;
                             })->origin;
        for (auto& r : recs)
            r.shift = r.origin - base;
        return "one host (" + hosts.begin()->first + "): every rank's times are on its steady clock (exact)";
    }
    if (!o.alignWallClock) {
        std::vector<HostClockRank> clocks;
        for (const auto& r : recs)
            clocks.push_back({r.rank, r.host, r.origin, r.sync});
        auto measured = alignByClockSync(clocks);
        if (!measured)
            return measured.error();
        for (size_t i = 0; i < recs.size(); ++i) {
            recs[i].shift = measured->maps[i].shift;
            recs[i].rate = measured->maps[i].rate;
        }
        alignmentError = measured->errorNs;
        notes.insert(notes.end(), measured->notes.begin(), measured->notes.end());
        return measured->sentence;
    }
    int64_t base = INT64_MAX;
    int64_t sampling = 0;
    for (const auto& r : recs) {
        base = std::min(base, r.origin + r.wallOffset);
        sampling = std::max(sampling, r.wallError);
    }
    for (auto& r : recs)
        r.shift = r.origin + r.wallOffset - base;
    return "by each host's system clock (" + std::to_string(hosts.size())
        + " hosts): error unknown, as good as the hosts' clock synchronisation (NTP: typically 0.1-10 ms), plus "
        + microseconds(2 * sampling) + " of sampling";
}

void copyRank(Trace& out, const Trace& in, int rank, const RankClockMap& clock)
{
    const std::string prefix = "rank " + std::to_string(rank) + " · ";
    std::map<int, int> device;
    for (const DeviceInfo& d : in.info.devices) {
        DeviceInfo copy = d;
        copy.index = int(out.info.devices.size());
        copy.name = prefix + d.name;
        copy.properties.emplace_back("rank", std::to_string(rank));
        copy.properties.emplace_back("rank_device", std::to_string(d.index));
        device[d.index] = copy.index;
        out.info.devices.push_back(std::move(copy));
    }
    auto deviceOf = [&](int d) {
        if (d < 0)
            return d;
        const auto it = device.find(d);
        if (it != device.end())
            return it->second;
        DeviceInfo added;
        added.index = int(out.info.devices.size());
        added.name = prefix + "device " + std::to_string(d);
        added.properties = {{"rank", std::to_string(rank)}, {"rank_device", std::to_string(d)}};
        device[d] = added.index;
        out.info.devices.push_back(std::move(added));
        return device[d];
    };
    const auto trackBase = uint32_t(out.tracks.size());
    for (const Track& t : in.tracks) {
        Track copy = t;
        copy.name = prefix + t.name;
        copy.device = deviceOf(t.device);
        if (copy.parent >= 0)
            copy.parent += int(trackBase);
        out.tracks.push_back(std::move(copy));
    }
    const auto spanBase = uint32_t(out.spanCount());
    std::vector<uint32_t> spanMap(in.spanCount());
    for (uint32_t i = 0; i < in.spanCount(); ++i) {
        if (clock.rate == 0) {
            spanMap[i] = out.copySpanFrom(in, i, trackBase + in.spans.track[i], clock.shift);
            continue;
        }
        // A drifting host's clock: each time mapped on its own (a linear map keeps every span's order and nesting).
        SpanInit s = in.spanInit(i);
        s.track = trackBase + in.spans.track[i];
        s.start = clock.map(s.start);
        s.end = clock.map(s.end);
        spanMap[i] = out.addSpan(s);
    }
    out.copyWaitsFrom(in, spanMap);
    for (const Flow& f : in.flows)
        out.addFlow(spanBase + f.from, spanBase + f.to, f.kind);
}

} // namespace

Result<MergeResult> mergeRankTraces(std::vector<RankTrace> ranks, const MergeOptions& options)
{
    if (ranks.empty())
        return Error{{}, {}, "no traces to merge"};
    if (ranks.size() > size_t(kMaxRanks))
        return Error{{},
                     {},
                     std::to_string(ranks.size()) + " traces: at most " + std::to_string(kMaxRanks)
                         + " ranks are merged"};
    std::vector<RankRecord> recs;
    std::map<int, size_t> byRank;
    for (size_t i = 0; i < ranks.size(); ++i) {
        auto rec = readRecord(ranks[i], i, options);
        if (!rec)
            return rec.error();
        if (const auto [it, fresh] = byRank.emplace(rec->rank, i); !fresh)
            return inFile(ranks[i],
                          "rank " + std::to_string(rec->rank) + " again: " + ranks[it->second].file + " is rank "
                              + std::to_string(rec->rank) + " too");
        if (!recs.empty() && rec->worldSize != recs.front().worldSize)
            return inFile(ranks[i],
                          "world size " + std::to_string(rec->worldSize) + ", but " + ranks.front().file + " has "
                              + std::to_string(recs.front().worldSize) + ": these ranks are not of one job");
        recs.push_back(std::move(*rec));
    }
    MergeResult result;
    int64_t alignmentError = 0;
    auto aligned = options.presetAlignment ? Result<std::string>(options.presetAlignment->alignment)
                                           : align(recs, ranks, options, alignmentError, result.notes);
    if (!aligned)
        return aligned.error();
    result.alignment = *aligned;
    const int world = recs.front().worldSize > 0 ? recs.front().worldSize : int(ranks.size());
    std::vector<int> missing;
    for (int r = 0; r < world; ++r)
        if (!byRank.count(r))
            missing.push_back(r);
    if (!missing.empty())
        result.notes.push_back("ranks " + rankList(missing) + " of " + std::to_string(world)
                               + " are missing: the job is shown without them");

    Trace& out = result.trace;
    const RunInfo& first = ranks[byRank.begin()->second].trace.info;
    out.info.source = first.source;
    out.info.backend = first.backend;
    out.info.scenarioId = first.scenarioId;
    out.info.scenarioTitle = first.scenarioTitle;
    out.info.date = first.date;
    std::set<std::string> hostSet;
    for (const auto& r : recs)
        if (!r.host.empty())
            hostSet.insert(r.host);
    for (const auto& h : hostSet)
        out.info.host += (out.info.host.empty() ? "" : ", ") + h;
    out.info.settings.emplace_back("ranks", std::to_string(ranks.size()) + " of world size " + std::to_string(world));
    out.info.settings.emplace_back("clock_alignment", result.alignment);
    for (const auto& [rank, i] : byRank) {
        const RankRecord& rec = recs[i];
        const Trace& t = ranks[i].trace;
        out.info.clockAlignmentErrorNs = std::max(out.info.clockAlignmentErrorNs, t.info.clockAlignmentErrorNs);
        std::string about = ranks[i].file;
        if (!rec.host.empty())
            about += ", host " + rec.host;
        if (const std::string* lr = findSetting(t.info, "local_rank"))
            about += ", local rank " + *lr;
        about += ", shifted by " + microseconds(rec.shift);
        if (rec.rate != 0) {
            char drift[64];
            std::snprintf(drift, sizeof drift, ", drift %+.2f ppm corrected", rec.rate * 1e6);
            about += drift;
        }
        out.info.settings.emplace_back("rank " + std::to_string(rank), about);
        copyRank(out, t, rank, RankClockMap{rec.shift, rec.rate});
        // Copied: only its info (the scenario, for the collectives below) is read again. Dropping the rest now keeps
        // the peak near the inputs' size instead of the inputs and the job together (64 ranks x 100 k spans).
        RunInfo info = std::move(ranks[i].trace.info);
        ranks[i].trace = Trace{};
        ranks[i].trace.info = std::move(info);
    }
    out.info.clockAlignmentErrorNs += double(alignmentError); // the ranks' own bounds and the hosts' add up
    out.finalize();
    // Collectives: each rank's ops from the scenario its trace embeds; each call linked across its ranks.
    std::vector<std::optional<Scenario>> scenarios(static_cast<size_t>(world));
    std::vector<const Scenario*> byRankScenario(size_t(world), nullptr);
    for (const auto& [rank, i] : byRank) {
        const std::string& json = ranks[i].trace.info.scenarioJson;
        if (json.empty() || rank >= world)
            continue;
        if (auto parsed = parseScenario(json, ranks[i].file)) {
            scenarios[size_t(rank)] = std::move(parsed->scenario);
            byRankScenario[size_t(rank)] = &*scenarios[size_t(rank)];
        }
    }
    if (const size_t linked = linkMergedCollectives(out, byRankScenario, world); linked > 0)
        out.info.settings.emplace_back("collectives", std::to_string(linked) + " calls linked across ranks");
    return result;
}

} // namespace streamscope
