// Merge benchmark (issue 16, point 5): a data-parallel job of many ranks, each a PyTorch profiler trace with NCCL
// all-reduce kernels and one straggler rank (tests/support/kineto_job.h), generated in memory rank by rank and
// parsed as the importer parses a file; then merged (mergeJobTraces: alignment by baseTimeNanoseconds, the NCCL
// calls linked), then analysed as `streamscope-cli analyze` does (the collective calls, the diagnostics with the
// straggler, the critical path). Reports the wall and CPU time of each stage, the resident memory after it and the
// peak. --out saves the merged job (binary native format for *.sstrace) for bench_window --file. --write DIR only
// writes the ranks' traces as files (DIR/worker<R>.pt.trace.json), for `streamscope-cli merge DIR` from disk.
//
//   bench_merge [--json] [--ranks 64] [--spans 100000] [--out FILE] [--write DIR]
#include "analysis.h"
#include "collectives.h"
#include "diagnostics.h"
#include "foreign_ranks.h"
#include "pytorch_trace.h"
#include "trace_formats.h"

#include "bench_process.h"
#include "kineto_job.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

namespace ss = streamscope;
using namespace streamscope::bench;

namespace {

struct Stage {
    std::string name;
    double wallMs = 0, cpuMs = 0, rssMb = 0, peakMb = 0;
};

class Timer {
public:
    Timer() : m_wall(std::chrono::steady_clock::now()), m_cpu(cpuSeconds()) {}
    Stage done(std::string name) const
    {
        const double wall =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - m_wall).count();
        return {std::move(name), wall, (cpuSeconds() - m_cpu) * 1000.0, residentMb(), peakRssMb()};
    }

private:
    std::chrono::steady_clock::time_point m_wall;
    double m_cpu;
};

} // namespace

int main(int argc, char** argv)
{
    bool json = false;
    int ranks = 64;
    long spansPerRank = 100'000;
    std::string out, write;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--json")
            json = true;
        else if (a == "--ranks" && i + 1 < argc)
            ranks = std::atoi(argv[++i]);
        else if (a == "--spans" && i + 1 < argc)
            spansPerRank = std::atol(argv[++i]);
        else if (a == "--out" && i + 1 < argc)
            out = argv[++i];
        else if (a == "--write" && i + 1 < argc)
            write = argv[++i];
        else {
            std::fprintf(stderr,
                         "usage: bench_merge [--json] [--ranks 64] [--spans 100000] [--out FILE] [--write DIR]\n");
            return 2;
        }
    }
    ss::testing::KinetoJobSpec spec;
    spec.ranks = ranks;
    spec.kernelsPerStep = 8;
    spec.straggler = ranks / 2;
    // Spans per step and rank: 8 launches and 8 compute kernels, the event record, the stream wait, the NCCL launch
    // and kernel, the stream sync.
    spec.steps = int(std::max<long>(1, spansPerRank / (2 * spec.kernelsPerStep + 5)));
    std::vector<Stage> stages;
    if (!write.empty()) {
        for (int r = 0; r < ranks; ++r) {
            const std::string path = write + "/worker" + std::to_string(r) + ".pt.trace.json";
            std::ofstream f(path, std::ios::binary);
            f << ss::testing::kinetoJob(spec, r)[size_t(r)];
            if (!f) {
                std::fprintf(stderr, "cannot write %s\n", path.c_str());
                return 1;
            }
        }
        return 0;
    }

    // Generate and parse rank by rank, so that only one rank's text is held at a time.
    Timer t0;
    double parseMs = 0;
    size_t textBytes = 0;
    std::vector<ss::RankTrace> traces;
    for (int r = 0; r < ranks; ++r) {
        // The generation is not what is measured; "parse" is timed alone below.
        std::string text = std::move(ss::testing::kinetoJob(spec, r)[size_t(r)]);
        textBytes += text.size();
        const auto p0 = std::chrono::steady_clock::now();
        auto trace = ss::parsePyTorchTrace(text, "rank" + std::to_string(r) + ".json");
        parseMs += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - p0).count();
        if (!trace) {
            std::fprintf(stderr, "%s\n", trace.error().toString().c_str());
            return 1;
        }
        traces.push_back({"rank" + std::to_string(r) + ".json", std::move(*trace)});
    }
    stages.push_back(t0.done("generate + parse"));
    size_t inputSpans = 0;
    for (const auto& r : traces)
        inputSpans += r.trace.spanCount();

    Timer t1;
    auto merged = ss::mergeJobTraces(std::move(traces));
    if (!merged) {
        std::fprintf(stderr, "%s\n", merged.error().toString().c_str());
        return 1;
    }
    stages.push_back(t1.done("merge"));
    const ss::Trace& job = merged->trace;

    Timer t2;
    const auto calls = ss::collectiveCalls(job);
    stages.push_back(t2.done("collective calls"));
    Timer t3;
    const auto diagnostics = ss::diagnose(job);
    stages.push_back(t3.done("diagnostics"));
    std::string straggler;
    for (const auto& d : diagnostics)
        if (d.rule == "straggler")
            straggler = d.message;
    Timer t4;
    const ss::CriticalPath path = ss::criticalPath(job);
    stages.push_back(t4.done("critical path"));
    Timer t5;
    const ss::TraceAnalysis analysis = ss::analyzeTrace(job);
    stages.push_back(t5.done("metrics"));
    if (!out.empty()) {
        Timer t6;
        if (ss::Status saved = ss::saveNativeTrace(job, out); !saved) {
            std::fprintf(stderr, "%s\n", saved.error().toString().c_str());
            return 1;
        }
        stages.push_back(t6.done("save " + out));
    }

    nlohmann::ordered_json j;
    j["ranks"] = ranks;
    j["spans_per_rank"] = inputSpans / size_t(ranks);
    j["spans"] = job.spanCount();
    j["flows"] = job.flows.size();
    j["kineto_json_mb"] = double(textBytes) / (1024.0 * 1024.0);
    j["parse_ms"] = parseMs;
    j["trace_memory_mb"] = double(job.memoryBytes()) / (1024.0 * 1024.0);
    j["collective_calls"] = calls.size();
    j["critical_path_segments"] = path.segments.size();
    j["critical_path_collective_wait_ms"] = double(path.collectiveWaitNs) / 1e6;
    j["makespan_ms"] = double(analysis.makespanNs) / 1e6;
    j["straggler"] = straggler;
    for (const auto& s : stages)
        j["stages"].push_back({{"stage", s.name},
                               {"wall_ms", s.wallMs},
                               {"cpu_ms", s.cpuMs},
                               {"rss_mb", s.rssMb},
                               {"peak_rss_mb", s.peakMb}});
    if (json) {
        std::printf("%s\n", j.dump(2).c_str());
        return 0;
    }
    std::printf("%d ranks x %zu spans = %zu spans, %zu flows; %.0f MB of Kineto JSON parsed in %.0f ms; merged trace "
                "%.0f MB in memory\n",
                ranks, inputSpans / size_t(ranks), job.spanCount(), job.flows.size(), double(textBytes) / 1048576.0,
                parseMs, double(job.memoryBytes()) / 1048576.0);
    std::printf("%-24s %10s %10s %10s %10s\n", "stage", "wall ms", "cpu ms", "rss MB", "peak MB");
    for (const auto& s : stages)
        std::printf("%-24s %10.0f %10.0f %10.0f %10.0f\n", s.name.c_str(), s.wallMs, s.cpuMs, s.rssMb, s.peakMb);
    std::printf("%zu collective calls linked; critical path %zu segments, collective wait %.1f ms\n", calls.size(),
                path.segments.size(), double(path.collectiveWaitNs) / 1e6);
    std::printf("straggler: %s\n", straggler.c_str());
    return 0;
}
