// timing-perturbation: the timed run against the same work without any timing (DESIGN.md §4). Reads what the CUDA
// backend stored in the run info: the timed and untimed makespans (host clock, first issue to device sync) and the
// timing used, and names the cause it can see from the trace.
#include "diagnostics_context.h"

#include <cstdlib>
#include <map>
#include <set>
#include <string>

namespace streamscope::diag {

namespace {

std::string settingOf(const RunInfo& info, std::string_view key)
{
    for (const auto& [k, v] : info.settings)
        if (k == key)
            return v;
    return {};
}

// The hardware work queues of the run: the leading number of CUDA_DEVICE_MAX_CONNECTIONS ("8 (default)").
int connectionsOf(const RunInfo& info, int fallback)
{
    const std::string v = settingOf(info, "CUDA_DEVICE_MAX_CONNECTIONS");
    const int n = std::atoi(v.c_str());
    return n > 0 ? n : fallback;
}

} // namespace

void timingPerturbation(const Context& c, std::vector<Diagnostic>& out)
{
    const RunInfo& info = c.t.info;
    const int64_t timed = std::atoll(settingOf(info, "timed_makespan_ns").c_str());
    const int64_t untimed = std::atoll(settingOf(info, "untimed_makespan_ns").c_str());
    if (timed <= 0 || untimed <= 0 || double(timed) <= c.th.timingPerturbationMax * double(untimed))
        return;
    const std::string timing = settingOf(info, "timing");

    // Streams with GPU work per device, and graph launches.
    std::map<int, std::set<uint32_t>> streamsOf;
    size_t graphLaunches = 0;
    size_t launches = 0;
    for (uint32_t i = 0; i < c.t.spanCount(); ++i) {
        const auto& tr = c.t.tracks[c.t.spans.track[i]];
        if (tr.kind == TrackKind::Stream && isGpuSpan(c.t.spans.kind[i]))
            streamsOf[tr.device].insert(c.t.spans.track[i]);
        if (c.t.spans.kind[i] == SpanKind::ApiCall) {
            const std::string_view name = c.t.spanName(i);
            graphLaunches += name == "cudaGraphLaunch";
            launches += name == "cudaLaunchKernel" || name == "cudaGraphLaunch" || name == "cudaMemcpyAsync" ||
                        name == "cudaMemsetAsync";
        }
    }
    size_t maxStreams = 0;
    int busiest = 0;
    for (const auto& [d, s] : streamsOf)
        if (s.size() > maxStreams) {
            maxStreams = s.size();
            busiest = d;
        }
    const int connections = connectionsOf(info, c.th.defaultMaxConnections);

    std::string cause;
    std::string avoid;
    if (timing == "events" || timing == "both") {
        if (int(maxStreams) > connections) {
            cause = "the CUDA event recorded after each operation waits for it in its hardware work queue, and device " +
                    std::to_string(busiest) + " ran " + std::to_string(maxStreams) + " streams on " +
                    std::to_string(connections) + " queues (CUDA_DEVICE_MAX_CONNECTIONS), so each event held back " +
                    "the streams behind it";
        } else {
            cause = "the CUDA events around each operation add GPU work and hold back the next operation of their "
                    "stream";
        }
        avoid = "Run with --timing cupti (the default where CUPTI is usable): CUPTI adds no work to the streams.";
    } else if (timing == "cupti") {
        if (graphLaunches > 0) {
            cause = "CUPTI records every node of the " + plural(int64_t(graphLaunches), "graph launch", "graph launches") +
                    ", which slows the graph launches";
            avoid = "Run with --timing events to time each graph as one span without that cost.";
        } else if (launches > 0 && double(timed - untimed) / double(launches) > 500.0) {
            cause = "CUPTI adds host cost to every launch (" + c.at((timed - untimed) / int64_t(launches)) +
                    " more per call on average over " + std::to_string(launches) + " calls), and the run is bound " +
                    "by the host issuing them";
            avoid = "Compare with --timing events; fewer, larger launches (or a CUDA graph) make the run less "
                    "sensitive to it.";
        } else {
            cause = "CUPTI's tracing slowed the GPU operations themselves";
            avoid = "Compare with --timing events.";
        }
    } else {
        return;
    }
    const double pct = 100.0 * (double(timed) / double(untimed) - 1.0);
    std::string msg = "The timed run took " + c.at(timed) + ", " + std::to_string(int(std::lround(pct))) +
                      "% longer than the same work without any timing (" + c.at(untimed) + "): " + cause + ". " +
                      avoid;
    out.push_back(c.make("timing-perturbation", std::move(msg), {}));
}

} // namespace streamscope::diag
