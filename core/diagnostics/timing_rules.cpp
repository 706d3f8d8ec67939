// timing-perturbation: the timed run against the same work without any timing (DESIGN.md §4). Reads what the CUDA
// backend stored in the run info: the timed and untimed makespans (host clock, first issue to device sync) and the
// timing used, and names the cause it can see from the trace.
#include "diagnostics_context.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <set>
#include <string>

namespace streamscope::diag {

namespace {

std::string settingOf(const RunInfo& info, std::string_view key)
{
    const std::string* v = findSetting(info, key);
    return v ? *v : std::string();
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

    // Streams with GPU work per device, the GPU spans, the launch calls and the graph launches.
    std::map<int, std::set<uint32_t>> streamsOf;
    std::vector<uint32_t> gpu;
    std::vector<uint32_t> launches;
    std::vector<uint32_t> graphLaunches;
    for (uint32_t i = 0; i < c.t.spanCount(); ++i) {
        const auto& tr = c.t.tracks[c.t.spans.track[i]];
        if (tr.kind == TrackKind::Stream && isGpuSpan(c.t.spans.kind[i])) {
            streamsOf[tr.device].insert(c.t.spans.track[i]);
            gpu.push_back(i);
        }
        if (c.t.spans.kind[i] == SpanKind::ApiCall) {
            const std::string_view name = c.t.spanName(i);
            if (name == "cudaGraphLaunch")
                graphLaunches.push_back(i);
            if (name == "cudaLaunchKernel" || name == "cudaGraphLaunch" || name == "cudaMemcpyAsync"
                || name == "cudaMemsetAsync")
                launches.push_back(i);
        }
    }
    if (gpu.empty())
        return;
    size_t maxStreams = 0;
    int busiest = 0;
    for (const auto& [d, st] : streamsOf)
        if (st.size() > maxStreams) {
            maxStreams = st.size();
            busiest = d;
        }
    const int connections = connectionsOf(info, c.th.defaultMaxConnections);
    const int64_t extra = timed - untimed;
    // Fewer than three runs on either side: a difference may be run-to-run variation (lesson 13's same-priority
    // variant gave 0.81 and 1.18 in two runs of one timed iteration on an H200).
    const auto runs = [&](std::string_view key) {
        const std::string v = settingOf(info, key);
        return v.empty() ? 1 : std::atoi(v.c_str());
    };
    const bool fewRuns = runs("untimed_iterations") < 3 || runs("timed_iterations") < 3;

    std::string cause;
    std::string avoid;
    std::vector<uint32_t> spans;
    if (timing == "events" || timing == "both") {
        if (int(maxStreams) > connections) {
            for (uint32_t i : gpu)
                if (c.t.tracks[c.t.spans.track[i]].device == busiest)
                    spans.push_back(i);
            cause = "the CUDA event recorded after each operation (e.g. " + c.label(spans.front())
                + ") waits for it in its hardware work queue, and device " + std::to_string(busiest) + " ran "
                + std::to_string(maxStreams) + " streams on " + std::to_string(connections)
                + " queues (CUDA_DEVICE_MAX_CONNECTIONS), so each event held back the streams behind it";
        } else {
            spans = gpu;
            cause = "the CUDA events around each operation (e.g. " + c.label(spans.front())
                + ") add GPU work and hold back the next operation of their stream";
        }
        avoid = "Run with --timing cupti (the default where CUPTI is usable): CUPTI adds no work to the streams.";
    } else if (timing == "cupti") {
        if (!graphLaunches.empty()) {
            spans = graphLaunches;
            cause = "CUPTI records every node of the graphs launched by "
                + plural(int64_t(graphLaunches.size()), "cudaGraphLaunch call", "cudaGraphLaunch calls")
                + ", which slows the graph launches";
            avoid = "Run with --timing events to time each graph as one span without that cost.";
        } else if (launches.size() >= 100 && extra / int64_t(launches.size()) <= 5000) {
            spans = launches;
            cause = "CUPTI adds host cost to every launch (" + c.at(extra / int64_t(launches.size()))
                + " more per call over " + std::to_string(launches.size()) + " calls such as "
                + std::string(c.t.spanName(launches.front())) + "), and the run is bound by the host issuing them";
            avoid = "Compare with --timing events; fewer, larger launches (or a CUDA graph) make the run less "
                    "sensitive to it.";
        } else {
            spans = gpu;
            cause = "CUPTI's tracing slowed the run (its operations, e.g. " + c.label(spans.front())
                + ", or their launches)"
                + (fewRuns ? ", or run-to-run variation: fewer than three timed or untimed iterations were compared"
                           : std::string());
            avoid = "Compare with --timing events, and with more iterations (run.iterations).";
        }
    } else {
        return;
    }
    std::sort(spans.begin(), spans.end(), [&](uint32_t x, uint32_t y) { return c.start(x) < c.start(y); });
    if (spans.size() > c.o.maxSpans)
        spans.resize(c.o.maxSpans);
    const double pct = 100.0 * (double(timed) / double(untimed) - 1.0);
    std::string msg = "The timed run took " + c.at(timed) + ", " + std::to_string(int(std::lround(pct)))
        + "% longer than the same work without any timing (" + c.at(untimed) + "): " + cause + ". " + avoid;
    out.push_back(c.make("timing-perturbation", std::move(msg), std::move(spans)));
}

} // namespace streamscope::diag
