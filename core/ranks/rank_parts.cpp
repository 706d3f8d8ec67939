// A job's trace by rank (rank_parts.h).
#include "rank_parts.h"

#include "collectives.h"
#include "scenario.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <optional>
#include <set>
#include <string_view>

namespace streamscope {

namespace {

std::optional<int> intProperty(const DeviceInfo& d, std::string_view key)
{
    for (const auto& [k, v] : d.properties)
        if (k == key) {
            int value = 0;
            const auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), value);
            if (ec == std::errc() && p == v.data() + v.size())
                return value;
        }
    return std::nullopt;
}

// Time covered by a set of intervals.
int64_t unionLength(std::vector<std::pair<int64_t, int64_t>> intervals)
{
    std::sort(intervals.begin(), intervals.end());
    int64_t total = 0, curStart = 0, curEnd = INT64_MIN;
    for (const auto& [s, e] : intervals) {
        if (s > curEnd) {
            if (curEnd > curStart)
                total += curEnd - curStart;
            curStart = s;
            curEnd = e;
        } else {
            curEnd = std::max(curEnd, e);
        }
    }
    if (curEnd > curStart)
        total += curEnd - curStart;
    return total;
}

} // namespace

std::vector<int> ranksOfTrace(const Trace& trace)
{
    std::set<int> ranks;
    for (uint32_t t = 0; t < trace.tracks.size(); ++t)
        if (const int r = rankOfTrack(trace, t); r >= 0)
            ranks.insert(r);
    return {ranks.begin(), ranks.end()};
}

Trace rankPartOfTrace(const Trace& jobTrace, int rank)
{
    Trace storage;
    const Trace& job = finalizedView(jobTrace, storage);
    Trace out;
    out.info = job.info;
    const std::string ownSetting = "rank " + std::to_string(rank);
    std::erase_if(out.info.settings, [&](const auto& kv) {
        return kv.first == "ranks" || kv.first == "clock_alignment" || kv.first == "collectives"
            || kv.first == "devices_per_rank" || (kv.first.starts_with("rank ") && kv.first != ownSetting);
    });
    out.info.settings.emplace_back("rank", std::to_string(rank));

    // The rank's devices: those its rows are on, and those the merge marked as its own.
    std::set<int> jobDevices;
    for (uint32_t t = 0; t < job.tracks.size(); ++t)
        if (rankOfTrack(job, t) == rank && job.tracks[t].device >= 0)
            jobDevices.insert(job.tracks[t].device);
    for (const DeviceInfo& d : job.info.devices)
        if (intProperty(d, "rank") == rank)
            jobDevices.insert(d.index);
    const std::string prefix = rankPrefix(rank);
    std::map<int, int> device;
    std::set<int> taken;
    out.info.devices.clear();
    for (int index : jobDevices) {
        const auto info = std::find_if(job.info.devices.begin(), job.info.devices.end(),
                                       [index](const DeviceInfo& d) { return d.index == index; });
        DeviceInfo copy;
        if (info != job.info.devices.end())
            copy = *info;
        // As the rank numbered it, where the merge kept that number and no other device of the rank has it.
        const std::optional<int> own =
            info != job.info.devices.end() ? intProperty(*info, "rank_device") : std::nullopt;
        int number = own && *own >= 0 ? *own : 0;
        while (taken.count(number))
            ++number;
        taken.insert(number);
        device[index] = number;
        copy.index = number;
        if (copy.name.starts_with(prefix))
            copy.name = copy.name.substr(prefix.size());
        std::erase_if(copy.properties, [](const auto& kv) { return kv.first == "rank" || kv.first == "rank_device"; });
        out.info.devices.push_back(std::move(copy));
    }
    std::sort(out.info.devices.begin(), out.info.devices.end(),
              [](const DeviceInfo& a, const DeviceInfo& b) { return a.index < b.index; });

    std::vector<uint32_t> trackMap(job.tracks.size(), kNoSpan);
    for (uint32_t t = 0; t < job.tracks.size(); ++t) {
        if (rankOfTrack(job, t) != rank)
            continue;
        Track copy = job.tracks[t];
        copy.name = copy.name.substr(prefix.size());
        if (copy.device >= 0)
            copy.device = device[copy.device];
        trackMap[t] = uint32_t(out.tracks.size());
        out.tracks.push_back(std::move(copy));
    }
    for (auto& t : out.tracks)
        if (t.parent >= 0)
            t.parent = size_t(t.parent) < trackMap.size() && trackMap[size_t(t.parent)] != kNoSpan
                ? int(trackMap[size_t(t.parent)])
                : -1;
    std::vector<uint32_t> spanMap(job.spanCount(), kNoSpan);
    for (uint32_t i = 0; i < job.spanCount(); ++i)
        if (const uint32_t track = trackMap[job.spans.track[i]]; track != kNoSpan)
            spanMap[i] = out.copySpanFrom(job, i, track);
    out.copyWaitsFrom(job, spanMap);
    for (const Flow& f : job.flows)
        if (f.kind != FlowKind::Collective && f.from < spanMap.size() && f.to < spanMap.size()
            && spanMap[f.from] != kNoSpan && spanMap[f.to] != kNoSpan)
            out.addFlow(spanMap[f.from], spanMap[f.to], f.kind);
    out.finalize();
    return out;
}

std::vector<RankSummary> summarizeRanks(const Trace& trace)
{
    const std::vector<int> ranks = ranksOfTrace(trace);
    std::vector<RankSummary> out(ranks.size());
    std::map<int, size_t> index;
    for (size_t i = 0; i < ranks.size(); ++i) {
        out[i].rank = ranks[i];
        index[ranks[i]] = i;
    }
    if (ranks.empty())
        return out;
    std::vector<int> trackRank(trace.tracks.size(), -1);
    for (uint32_t t = 0; t < trace.tracks.size(); ++t)
        trackRank[t] = rankOfTrack(trace, t);
    std::vector<std::vector<std::pair<int64_t, int64_t>>> gpu(ranks.size());
    const auto& s = trace.spans;
    for (uint32_t i = 0; i < trace.spanCount(); ++i) {
        const int r = s.track[i] < trackRank.size() ? trackRank[s.track[i]] : -1;
        if (r < 0)
            continue;
        RankSummary& sum = out[index[r]];
        ++sum.spans;
        if (!isGpuSpan(s.kind[i]))
            continue;
        gpu[index[r]].emplace_back(s.start[i], s.end[i]);
        if (gpu[index[r]].size() == 1 || s.start[i] < sum.firstGpuStart)
            sum.firstGpuStart = s.start[i];
        if (gpu[index[r]].size() == 1 || s.end[i] > sum.lastGpuEnd)
            sum.lastGpuEnd = s.end[i];
    }
    for (size_t i = 0; i < ranks.size(); ++i)
        out[i].gpuBusyNs = unionLength(std::move(gpu[i]));
    for (const CollectiveCallView& call : collectiveCalls(trace)) {
        int64_t lastArrival = INT64_MIN;
        for (int64_t a : call.arrival)
            lastArrival = std::max(lastArrival, a);
        for (size_t k = 0; k < call.spans.size(); ++k) {
            const uint32_t span = call.spans[k];
            const int r = trackRank[s.track[span]];
            if (r < 0)
                continue;
            RankSummary& sum = out[index[r]];
            ++sum.calls;
            sum.collectiveNs += s.end[span] - s.start[span];
            const int64_t a = call.arrival[k];
            const int64_t wait = a < 0 && lastArrival > INT64_MAX + a ? INT64_MAX : lastArrival - a;
            sum.collectiveWaitNs = wait > INT64_MAX - sum.collectiveWaitNs ? INT64_MAX : sum.collectiveWaitNs + wait;
            if (span == call.last)
                ++sum.arrivedLast;
        }
    }
    return out;
}

} // namespace streamscope
