// Other tools' per-rank traces as one job (foreign_ranks.h): the rank and the wall-clock origin of each, then
// mergeRankTraces with the clocks already aligned, then the NCCL kernels linked across ranks.
#include "foreign_ranks.h"

#include "collectives.h"
#include "ranks.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <climits>
#include <map>
#include <tuple>

namespace streamscope {

namespace {

// The wall clock a trace's times count from, in ns since the Unix epoch, must lie in [0, 2^62): far beyond any real
// date, and small enough that differences between ranks and the shifted times stay in int64.
constexpr int64_t kMaxWallOriginNs = int64_t(1) << 62;
// Older Kineto wrote absolute times (µs since the epoch) without baseTimeNanoseconds: a trace whose times lie after
// 2001 on the epoch's scale is taken to be on the wall clock already.
constexpr int64_t kEpochTimesFromNs = int64_t(1'000'000'000) * 1'000'000'000;

struct ForeignRank {
    int rank = 0;
    int worldSize = 0; // 0: the tool does not say (Nsight Systems)
    int64_t wallOriginNs = 0;
};

std::optional<int64_t> wholeNumber(std::string_view v)
{
    int64_t out = 0;
    const auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
    if (ec != std::errc() || ptr != v.data() + v.size())
        return std::nullopt;
    return out;
}

int64_t earliestTime(const Trace& t)
{
    int64_t lo = INT64_MAX;
    for (int64_t s : t.spans.start)
        lo = std::min(lo, s);
    return lo;
}

Result<ForeignRank> readPyTorchRank(const RankTrace& r, size_t index, size_t count, const MergeOptions& options)
{
    ForeignRank out;
    const RunInfo& info = r.trace.info;
    if (const std::string* text = findSetting(info, "distributedInfo")) {
        const auto j = nlohmann::json::parse(*text, nullptr, false);
        if (j.is_discarded() || !j.is_object())
            return Error{r.file, "/distributedInfo", "must be an object with rank and world_size"};
        const auto rank = j.find("rank");
        const auto world = j.find("world_size");
        if (rank == j.end() || !rank->is_number_integer())
            return Error{r.file, "/distributedInfo/rank", "must be a whole number (the rank of this process)"};
        if (world == j.end() || !world->is_number_integer())
            return Error{r.file, "/distributedInfo/world_size", "must be a whole number (the number of ranks)"};
        const int64_t rk = rank->get<int64_t>(), ws = world->get<int64_t>();
        if (ws < 1 || ws > kMaxRanks || rk < 0 || rk >= ws)
            return Error{r.file, "/distributedInfo",
                         "rank " + std::to_string(rk) + " of world size " + std::to_string(ws)
                             + " is not a rank of that world (at most " + std::to_string(kMaxRanks) + " ranks)"};
        out.rank = int(rk);
        out.worldSize = int(ws);
    } else if (options.ranksByOrder) {
        out.rank = int(index);
        out.worldSize = int(count);
    } else {
        return Error{r.file, "/distributedInfo",
                     "missing: the trace does not say its rank (Kineto writes distributedInfo when torch.distributed "
                     "is initialised); merge --ranks-by-order takes the files' order as their ranks"};
    }
    if (const std::string* base = findSetting(info, "baseTimeNanoseconds")) {
        const auto v = wholeNumber(*base);
        if (!v || *v < 0 || *v >= kMaxWallOriginNs)
            return Error{r.file, "/baseTimeNanoseconds",
                         "must be a whole number of ns since 1970, not '" + *base + "'"};
        out.wallOriginNs = *v;
    } else if (r.trace.spanCount() > 0 && earliestTime(r.trace) >= kEpochTimesFromNs) {
        out.wallOriginNs = 0; // times since the epoch already
    } else {
        return Error{r.file, "/baseTimeNanoseconds",
                     "missing, and the times are not on the wall clock: nothing places this rank's times beside "
                     "the other ranks', so it cannot be aligned with them"};
    }
    return out;
}

Result<ForeignRank> readNsysRank(const RankTrace& r, size_t index, const MergeOptions& options)
{
    ForeignRank out;
    if (options.ranksByOrder) {
        out.rank = int(index);
    } else if (const auto rank = rankFromFileName(r.file)) {
        if (*rank >= kMaxRanks)
            return Error{r.file,
                         {},
                         "rank " + std::to_string(*rank) + " (from the file name): at most " + std::to_string(kMaxRanks)
                             + " ranks are merged"};
        out.rank = *rank;
    } else {
        return Error{r.file,
                     {},
                     "an Nsight Systems export does not say its rank, and its file name has no number: name the "
                     "files by rank (report.0.sqlite, report.1.sqlite, ...: the last number in the name is the "
                     "rank) or use merge --ranks-by-order"};
    }
    const std::string* start = findSetting(r.trace.info, "session_start_utc_ns");
    const auto v = start ? wholeNumber(*start) : std::nullopt;
    if (!v || *v < 0 || *v >= kMaxWallOriginNs)
        return Error{r.file, "TARGET_INFO_SESSION_START_TIME",
                     "no utcEpochNs: where the report's time 0 lies on the wall clock is unknown, so it cannot be "
                     "aligned with the other ranks"};
    out.wallOriginNs = *v;
    return out;
}

std::string alignmentSentence(RankTraceTool tool)
{
    const std::string what = tool == RankTraceTool::PyTorch
        ? "by each rank's wall clock as the PyTorch profiler recorded it (baseTimeNanoseconds)"
        : "by each report's session start on the wall clock (Nsight Systems' utcEpochNs)";
    return what
        + ": error unknown, as good as the hosts' clock synchronisation (NTP: typically 0.1-10 ms) and the tool's "
          "own mapping of GPU times onto that clock";
}

} // namespace

std::string_view toString(RankTraceTool t)
{
    switch (t) {
    case RankTraceTool::StreamScope: return "StreamScope";
    case RankTraceTool::PyTorch: return "PyTorch profiler";
    case RankTraceTool::Nsys: return "Nsight Systems";
    case RankTraceTool::Other: return "other";
    }
    return "other";
}

RankTraceTool rankTraceToolOf(const Trace& trace)
{
    if (trace.info.source != TraceSource::Imported)
        return RankTraceTool::StreamScope;
    if (trace.info.backend == "pytorch")
        return RankTraceTool::PyTorch;
    if (trace.info.backend == "nsys")
        return RankTraceTool::Nsys;
    return RankTraceTool::Other;
}

std::optional<int> rankFromFileName(std::string_view path)
{
    if (const size_t slash = path.find_last_of("/\\"); slash != std::string_view::npos)
        path.remove_prefix(slash + 1);
    size_t end = path.size();
    while (end > 0 && !(path[end - 1] >= '0' && path[end - 1] <= '9'))
        --end;
    if (end == 0)
        return std::nullopt;
    size_t begin = end;
    while (begin > 0 && path[begin - 1] >= '0' && path[begin - 1] <= '9')
        --begin;
    int rank = 0;
    const auto [ptr, ec] = std::from_chars(path.data() + begin, path.data() + end, rank);
    if (ec != std::errc() || ptr != path.data() + end)
        return INT_MAX; // more digits than a rank has: refused by the caller as out of range
    return rank;
}

std::string_view ncclCollectiveOf(std::string_view name)
{
    if (name.starts_with("void "))
        name.remove_prefix(5);
    for (std::string_view prefix : {std::string_view("ncclDevKernel_"), std::string_view("ncclKernel_")})
        if (name.starts_with(prefix)) {
            name.remove_prefix(prefix.size());
            const size_t stop = name.find_first_of("_(<");
            return name.substr(0, stop);
        }
    return {};
}

size_t linkNcclKernels(Trace& merged, std::vector<std::string>& notes)
{
    merged.finalize();
    const auto& s = merged.spans;
    // Which names are NCCL kernels: once per name, not once per span.
    std::vector<int8_t> nameKind(merged.strings.size(), -1); // -1 unknown, 0 not NCCL, 1 collective, 2 p2p
    auto kindOfName = [&](uint32_t id) {
        if (nameKind[id] < 0) {
            const std::string_view op = ncclCollectiveOf(merged.strings[id]);
            nameKind[id] = op.empty() ? 0 : (op == "SendRecv" || op == "Send" || op == "Recv") ? 2 : 1;
        }
        return nameKind[id];
    };
    // Per rank, its streams with NCCL kernels in (device, stream id) order: the n-th is communicator stream n.
    std::map<int, std::vector<std::tuple<int, int64_t, uint32_t>>> streamsOfRank;
    size_t p2p = 0;
    for (uint32_t tr = 0; tr < merged.tracks.size(); ++tr) {
        const Track& track = merged.tracks[tr];
        if (track.kind != TrackKind::Stream)
            continue;
        const int rank = rankOfTrack(merged, tr);
        if (rank < 0)
            continue;
        bool any = false;
        for (uint32_t i = merged.trackBegin(tr); i < merged.trackEnd(tr); ++i)
            if (s.kind[i] == SpanKind::Kernel && s.name[i] < nameKind.size()) {
                const int8_t k = kindOfName(s.name[i]);
                any = any || k == 1;
                p2p += k == 2;
            }
        if (any)
            streamsOfRank[rank].emplace_back(track.device, track.id, tr);
    }
    // (stream number, k) -> the parts of the call, by rank.
    std::map<std::pair<size_t, size_t>, std::vector<std::pair<int, uint32_t>>> calls;
    std::map<size_t, std::map<int, size_t>> kernelsPerStream; // stream number -> rank -> NCCL kernels
    for (auto& [rank, streams] : streamsOfRank) {
        std::sort(streams.begin(), streams.end());
        for (size_t n = 0; n < streams.size(); ++n) {
            const uint32_t tr = std::get<2>(streams[n]);
            size_t k = 0;
            for (uint32_t i = merged.trackBegin(tr); i < merged.trackEnd(tr); ++i)
                if (s.kind[i] == SpanKind::Kernel && kindOfName(s.name[i]) == 1)
                    calls[{n, k++}].emplace_back(rank, i);
            kernelsPerStream[n][rank] = k;
        }
    }
    size_t linked = 0, mismatched = 0, alone = 0;
    for (auto& [key, parts] : calls) {
        if (parts.size() < 2) {
            ++alone;
            continue;
        }
        const std::string_view op = ncclCollectiveOf(merged.spanName(parts.front().second));
        const bool same = std::all_of(parts.begin(), parts.end(),
                                      [&](const auto& p) { return ncclCollectiveOf(merged.spanName(p.second)) == op; });
        if (!same) {
            ++mismatched;
            continue;
        }
        for (size_t i = 0; i + 1 < parts.size(); ++i)
            merged.addFlow(parts[i].second, parts[i + 1].second, FlowKind::Collective);
        ++linked;
    }
    merged.finalize();
    for (const auto& [n, perRank] : kernelsPerStream) {
        const auto [lo, hi] = std::minmax_element(perRank.begin(), perRank.end(),
                                                  [](const auto& a, const auto& b) { return a.second < b.second; });
        if (lo->second != hi->second || perRank.size() < streamsOfRank.size())
            notes.push_back("NCCL stream " + std::to_string(n) + " of each rank: rank " + std::to_string(lo->first)
                            + " has " + std::to_string(lo->second) + " NCCL kernels, rank " + std::to_string(hi->first)
                            + " " + std::to_string(hi->second)
                            + (perRank.size() < streamsOfRank.size() ? ", and some ranks have no such stream" : "")
                            + ": the traces cover different calls, and calls are paired by their order");
    }
    if (mismatched > 0)
        notes.push_back(std::to_string(mismatched)
                        + " NCCL calls not linked: the ranks' kernels at that place run different collectives, so "
                          "their NCCL streams do not pair up by order (several communicators created in a different "
                          "order on different ranks?)");
    if (alone > 0)
        notes.push_back(std::to_string(alone) + " NCCL kernels have no counterpart on another rank");
    if (p2p > 0)
        notes.push_back(std::to_string(p2p)
                        + " point-to-point NCCL kernels (SendRecv) are not linked: their kernels do not say the peer");
    return linked;
}

Result<MergeResult> mergeJobTraces(std::vector<RankTrace> ranks, const MergeOptions& options)
{
    if (ranks.empty())
        return mergeRankTraces(std::move(ranks), options);
    const RankTraceTool tool = rankTraceToolOf(ranks.front().trace);
    for (const RankTrace& r : ranks)
        if (const RankTraceTool t = rankTraceToolOf(r.trace); t != tool)
            return Error{r.file,
                         {},
                         "a " + std::string(toString(t)) + " trace beside " + std::string(toString(tool)) + " traces ("
                             + ranks.front().file
                             + " is one): a job is merged from one tool's traces, whose clocks it knows"};
    if (tool == RankTraceTool::StreamScope)
        return mergeRankTraces(std::move(ranks), options);
    if (tool == RankTraceTool::Other)
        return Error{ranks.front().file,
                     {},
                     "a " + ranks.front().trace.info.backend
                         + " trace records neither a rank nor a clock shared with other ranks: merge reads "
                           "StreamScope's per-rank traces, PyTorch profiler traces and Nsight Systems SQLite "
                           "exports"};
    std::vector<ForeignRank> recs;
    for (size_t i = 0; i < ranks.size(); ++i) {
        auto rec = tool == RankTraceTool::PyTorch ? readPyTorchRank(ranks[i], i, ranks.size(), options)
                                                  : readNsysRank(ranks[i], i, options);
        if (!rec)
            return rec.error();
        recs.push_back(*rec);
    }
    if (tool == RankTraceTool::Nsys) {
        // The reports do not say the world size: the ranks given, and any below the highest (missing ones noted).
        int world = int(ranks.size());
        for (const auto& r : recs)
            world = std::max(world, r.rank + 1);
        for (auto& r : recs)
            r.worldSize = world;
    }
    int64_t base = INT64_MAX;
    for (const auto& r : recs)
        base = std::min(base, r.wallOriginNs);
    MergeOptions aligned = options;
    aligned.presetAlignment = MergeOptions::PresetAlignment{alignmentSentence(tool), {}};
    for (size_t i = 0; i < ranks.size(); ++i) {
        const int64_t shift = recs[i].wallOriginNs - base; // in [0, 2^62)
        for (int64_t e : ranks[i].trace.spans.end)
            if (e > INT64_MAX - shift)
                return Error{ranks[i].file, {}, "a time out of range once placed on the job's clock"};
        aligned.presetAlignment->shiftNs.push_back(shift);
        setSetting(ranks[i].trace.info, "rank", std::to_string(recs[i].rank));
        setSetting(ranks[i].trace.info, "world_size", std::to_string(recs[i].worldSize));
    }
    auto merged = mergeRankTraces(std::move(ranks), aligned);
    if (!merged)
        return merged;
    if (const size_t linked = linkNcclKernels(merged->trace, merged->notes); linked > 0)
        setSetting(merged->trace.info, "collectives", std::to_string(linked) + " NCCL calls linked across ranks");
    return merged;
}

} // namespace streamscope
