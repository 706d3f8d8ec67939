// Simulator benchmark: generated scenarios of ~10k, 100k and 1M operations over many host threads and streams,
// mixing kernels, copies, event records/waits and syncs. Reports wall time, ops/s and peak memory per size, then
// times the analysis of the trace the window and `streamscope-cli analyze` run on every trace: the metrics
// (analyzeTrace), the critical path and the diagnostics (all rules).
//
//   bench_sim [--json] [--sizes 10000,100000,1000000] [--threads 16] [--streams 32]
//
// Each size runs in a fresh child process (this executable re-executed with --one), so that the peak resident
// memory (getrusage ru_maxrss) belongs to that size alone.
#include "analysis.h"
#include "diagnostics.h"
#include "runner.h"
#include "scenario.h"
#include "scenario_json.h"
#include "simulator.h"

#include "bench_process.h"
#include "bench_workload.h"

#include <nlohmann/json.hpp>

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace ss = streamscope;
using namespace streamscope::bench;

namespace {

struct Config {
    int threads = 16;
    int streams = 32;
    std::vector<int64_t> sizes{10'000, 100'000, 1'000'000};
    bool json = false;
    int64_t one = 0; // child mode: run this size only and print one JSON line
};

// Child mode: one size, one JSON line on stdout.
int runOne(const Config& cfg)
{
    ss::ScenarioLimits limits;
    limits.maxIssued = std::max<int64_t>(limits.maxIssued, cfg.one * 2);
    auto validated = ss::validateScenario(generate(cfg.one, cfg.threads, cfg.streams), "bench", limits);
    if (!validated) {
        std::cerr << "bench_sim: generated scenario is invalid: " << validated.error().toString() << '\n';
        return 1;
    }
    const ss::Scenario& scenario = validated->scenario;
    ss::SimulatorBackend backend;
    const double cpu0 = cpuSeconds();
    const auto t0 = std::chrono::steady_clock::now();
    ss::RunOutcome outcome = ss::runScenario(scenario, backend);
    const auto t1 = std::chrono::steady_clock::now();
    const double cpu = cpuSeconds() - cpu0;
    if (!outcome.status) {
        std::cerr << "bench_sim: simulation failed: " << outcome.status.error().toString() << '\n';
        return 1;
    }
    const double seconds = std::chrono::duration<double>(t1 - t0).count();
    const int64_t ops = ss::countOperations(scenario);
    nlohmann::ordered_json j;
    j["ops"] = ops;
    j["seconds"] = seconds;
    j["cpu_seconds"] = cpu;
    j["ops_per_second"] = seconds > 0 ? double(ops) / seconds : 0.0;
    j["peak_rss_mb"] = peakRssMb();
    j["spans"] = outcome.trace.spanCount();
    j["flows"] = outcome.trace.flows.size();
    const auto [first, last] = outcome.trace.timeRange();
    j["simulated_ms"] = double(last - first) / 1e6;
    j["trace_mb"] = double(outcome.trace.memoryBytes()) / (1024.0 * 1024.0);
    // The analysis of that trace (after the peak memory of the simulation was read).
    auto timed = [](auto&& work) {
        const auto a = std::chrono::steady_clock::now();
        work();
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count();
    };
    size_t found = 0;
    j["analyze_seconds"] = timed([&] { (void)ss::analyzeTrace(outcome.trace); });
    j["critical_path_seconds"] = timed([&] { (void)ss::criticalPath(outcome.trace); });
    j["diagnose_seconds"] = timed([&] { found = ss::diagnose(outcome.trace).size(); });
    j["diagnostics"] = found;
    std::cout << j.dump() << std::endl;
    return 0;
}

bool parseArgs(int argc, char** argv, Config& cfg)
{
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        auto next = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
        if (arg == "--json") {
            cfg.json = true;
        } else if (arg == "--threads" || arg == "--streams" || arg == "--one" || arg == "--sizes") {
            const char* v = next();
            if (!v)
                return false;
            if (arg == "--threads")
                cfg.threads = std::atoi(v);
            else if (arg == "--streams")
                cfg.streams = std::atoi(v);
            else if (arg == "--one")
                cfg.one = std::atoll(v);
            else {
                cfg.sizes.clear();
                std::stringstream list(v);
                for (std::string item; std::getline(list, item, ',');)
                    if (!item.empty())
                        cfg.sizes.push_back(std::atoll(item.c_str()));
            }
        } else {
            return false;
        }
    }
    return cfg.threads >= 1 && cfg.streams >= 2 && !cfg.sizes.empty()
        && std::all_of(cfg.sizes.begin(), cfg.sizes.end(), [](int64_t n) { return n > 0; });
}

} // namespace

int main(int argc, char** argv)
{
    Config cfg;
    if (!parseArgs(argc, argv, cfg)) {
        std::cerr << "usage: bench_sim [--json] [--sizes N,N,...] [--threads N] [--streams N]\n";
        return 2;
    }
    if (cfg.one > 0)
        return runOne(cfg);

    std::sort(cfg.sizes.begin(), cfg.sizes.end());
    const std::string self = shellQuote(selfPath(argv[0]));
    nlohmann::ordered_json sizes = nlohmann::ordered_json::object();
    if (!cfg.json) {
        std::printf("bench_sim: %d host threads, %d streams, simulator (default profile); one process per size\n",
                    cfg.threads, cfg.streams);
        std::printf("%12s %12s %10s %10s %14s %14s %10s %10s %10s\n", "ops", "spans", "seconds", "CPU s", "ops/s",
                    "peak RSS MB", "analyze s", "path s", "diagnose s");
        std::fflush(stdout);
    }
    for (int64_t size : cfg.sizes) {
        const auto j = runChild(self,
                                "--one " + std::to_string(size) + " --threads " + std::to_string(cfg.threads)
                                    + " --streams " + std::to_string(cfg.streams));
        if (j.is_null()) {
            std::cerr << "bench_sim: size " << size << " failed\n";
            return 1;
        }
        sizes[std::to_string(size)] = j;
        if (!cfg.json) {
            std::printf("%12lld %12lld %10.3f %10.3f %14.0f %14.1f %10.3f %10.3f %10.3f\n",
                        static_cast<long long>(j["ops"].get<int64_t>()),
                        static_cast<long long>(j["spans"].get<int64_t>()), j["seconds"].get<double>(),
                        j["cpu_seconds"].get<double>(), j["ops_per_second"].get<double>(),
                        j["peak_rss_mb"].get<double>(), j["analyze_seconds"].get<double>(),
                        j["critical_path_seconds"].get<double>(), j["diagnose_seconds"].get<double>());
            std::fflush(stdout);
        }
    }
    if (cfg.json) {
        nlohmann::ordered_json root;
        root["threads"] = cfg.threads;
        root["streams"] = cfg.streams;
        root["sizes"] = sizes;
        std::cout << root.dump(2) << '\n';
    }
    return 0;
}
