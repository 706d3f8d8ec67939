// One rank's trace out of a simulated job's (job.h).
#include "job.h"

#include "collectives.h"

#include <algorithm>
#include <cstdlib>

namespace streamscope {

Trace extractRankTrace(const Trace& jobTrace, const JobLayout& layout, int rank)
{
    Trace storage;
    const Trace& job = finalizedView(jobTrace, storage);
    Trace out;
    out.info = job.info;
    std::erase_if(out.info.settings, [](const auto& kv) {
        return kv.first == "ranks" || kv.first == "clock_alignment" || kv.first == "devices_per_rank";
    });
    const int perRank = std::max(1, layout.devicesPerRank);
    const int first = rank * perRank;
    out.info.devices.clear();
    for (const auto& d : job.info.devices)
        if (d.index >= first && d.index < first + perRank) {
            DeviceInfo copy = d;
            copy.index -= first;
            out.info.devices.push_back(std::move(copy));
        }
    std::erase_if(out.info.settings, [&](const auto& kv) {
        // profile[d] of the job's devices: keep this rank's, numbered as its own
        if (!kv.first.starts_with("profile["))
            return false;
        const int d = std::atoi(kv.first.c_str() + 8);
        return d < first || d >= first + perRank;
    });
    for (auto& [k, v] : out.info.settings)
        if (k.starts_with("profile[")) {
            const int d = std::atoi(k.c_str() + 8);
            k = "profile[" + std::to_string(d - first) + "]";
        }
    const std::string prefix = rankPrefix(rank);
    std::vector<uint32_t> trackMap(job.tracks.size(), kNoSpan);
    for (uint32_t t = 0; t < job.tracks.size(); ++t) {
        if (rankOfTrack(job, t) != rank)
            continue;
        Track copy = job.tracks[t];
        copy.name = copy.name.substr(prefix.size());
        if (copy.device >= 0)
            copy.device -= first;
        trackMap[t] = uint32_t(out.tracks.size());
        out.tracks.push_back(std::move(copy));
    }
    for (auto& t : out.tracks)
        if (t.parent >= 0)
            t.parent = trackMap[size_t(t.parent)] == kNoSpan ? -1 : int(trackMap[size_t(t.parent)]);
    int firstThread = 0;
    while (size_t(firstThread) < layout.threadRank.size() && layout.threadRank[size_t(firstThread)] != rank)
        ++firstThread;
    std::vector<uint32_t> spanMap(job.spanCount(), kNoSpan);
    for (uint32_t i = 0; i < job.spanCount(); ++i) {
        const uint32_t track = trackMap[job.spans.track[i]];
        if (track == kNoSpan)
            continue;
        // The rank's threads are numbered from 0 in its own trace.
        SpanInit init = job.spanInit(i);
        init.track = track;
        if (init.thread >= 0)
            init.thread -= firstThread;
        spanMap[i] = out.addSpan(init);
    }
    out.copyWaitsFrom(job, spanMap);
    for (const Flow& f : job.flows)
        if (f.kind != FlowKind::Collective && spanMap[f.from] != kNoSpan && spanMap[f.to] != kNoSpan)
            out.addFlow(spanMap[f.from], spanMap[f.to], f.kind);
    out.finalize();
    return out;
}

} // namespace streamscope
