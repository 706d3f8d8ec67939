// Simulator benchmark: generated scenarios of ~10k, 100k and 1M operations over many host threads and streams,
// mixing kernels, copies, event records/waits and syncs. Reports wall time, ops/s and peak memory per size, then
// times the analysis of the trace the window and `streamscope-cli analyze` run on every trace: the metrics
// (analyzeTrace), the critical path and the diagnostics (all rules).
//
//   bench_sim [--json] [--sizes 10000,100000,1000000] [--threads 16] [--streams 32] [--per-rule] [--diagnostics FILE]
//
// --per-rule also times each diagnostic rule alone; --diagnostics FILE writes every diagnostic (rule, severity,
// message, spans) of size N to FILE.N.json, to compare two builds' findings on the same trace.
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
#include <fstream>
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
    int64_t one = 0;             // child mode: run this size only and print one JSON line
    bool perRule = false;        // also time each diagnostic rule alone
    std::string diagnosticsPath; // write the diagnostics (rule, severity, message, spans) here as JSON
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
    const double sys0 = systemSeconds();
    const long faults0 = minorFaults();
    const auto t0 = std::chrono::steady_clock::now();
    ss::RunOutcome outcome = ss::runScenario(scenario, backend);
    const auto t1 = std::chrono::steady_clock::now();
    const double cpu = cpuSeconds() - cpu0;
    const double sys = systemSeconds() - sys0;
    const long faults = minorFaults() - faults0;
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
    j["system_seconds"] = sys;  // of cpu_seconds: the kernel's share (page faults, mostly)
    j["minor_faults"] = faults; // fresh pages the simulation touched
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
    const double pathCpu0 = cpuSeconds();
    j["critical_path_seconds"] = timed([&] { (void)ss::criticalPath(outcome.trace); });
    j["critical_path_cpu_seconds"] = cpuSeconds() - pathCpu0;
    const double diagCpu0 = cpuSeconds();
    j["diagnose_seconds"] = timed([&] { found = ss::diagnose(outcome.trace).size(); });
    j["diagnose_cpu_seconds"] = cpuSeconds() - diagCpu0; // the machine may be shared: CPU time is steadier
    j["diagnostics"] = found;
    if (cfg.perRule) {
        nlohmann::ordered_json rules = nlohmann::ordered_json::object();
        for (const auto& rule : ss::diagnosticRules()) {
            ss::DiagnosticOptions only;
            only.rules = {std::string(rule.id)};
            rules[std::string(rule.id)] = timed([&] { (void)ss::diagnose(outcome.trace, only); });
        }
        j["rule_seconds"] = rules;
    }
    if (!cfg.diagnosticsPath.empty()) {
        // Every finding in full, to compare two builds' diagnostics of the same trace byte for byte.
        nlohmann::ordered_json all = nlohmann::ordered_json::array();
        for (const auto& d : ss::diagnose(outcome.trace))
            all.push_back({{"rule", d.rule}, {"severity", d.severity}, {"message", d.message}, {"spans", d.spans}});
        std::ofstream(cfg.diagnosticsPath) << all.dump(1) << '\n';
    }
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
        } else if (arg == "--per-rule") {
            cfg.perRule = true;
        } else if (arg == "--diagnostics") {
            const char* v = next();
            if (!v)
                return false;
            cfg.diagnosticsPath = v;
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
        std::cerr << "usage: bench_sim [--json] [--sizes N,N,...] [--threads N] [--streams N] [--per-rule] "
                     "[--diagnostics FILE]\n";
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
        std::string args = "--one " + std::to_string(size) + " --threads " + std::to_string(cfg.threads) + " --streams "
            + std::to_string(cfg.streams) + (cfg.perRule ? " --per-rule" : "");
        if (!cfg.diagnosticsPath.empty())
            args += " --diagnostics " + shellQuote(cfg.diagnosticsPath + "." + std::to_string(size) + ".json");
        const auto j = runChild(self, args);
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
            std::printf("%12s diagnose CPU s %.3f\n", "", j["diagnose_cpu_seconds"].get<double>());
            if (j.contains("rule_seconds"))
                for (const auto& [rule, s] : j["rule_seconds"].items())
                    std::printf("%12s %-34s %8.3f s\n", "", rule.c_str(), s.get<double>());
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
