// Launch, cudaMalloc and pageable copy costs as StreamScope's runs issue them (Calibrator::runnerLaunchCosts,
// runnerMallocCost, runnerPageableCopies; calibrator.h). The bare loops of
// hostCosts time cudaLaunchKernel alone; a scenario run issues each launch through the Runner and the CUDA backend,
// which look the op up, take its stream's lock, stamp the host clock and keep a record around every call. On the
// H200 machines a bare loop issued empty launches at 3.7 µs each where StreamScope's untimed runs of 1000 of them took
// 3.8-5.4 ms (tests/data/h200/experiments/). So the launch figures the simulator uses come from scenarios run
// through the same Runner and backend with no timing at all: 1 thread into one stream, 1 thread round robin over 32
// streams, 4 threads at once each into its own stream — the host clock from the start of a thread's first launch
// call to the end of its last, divided by the launches, per iteration (the median thread for 4 threads).
#include "calibrator.h"

#include "cuda_backend.h"
#include "runner.h"
#include "scenario_json.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <iterator>
#include <map>
#include <numeric>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace streamscope::calibrate {

namespace {

// The start of every calibration scenario: its format, id and device.
nlohmann::ordered_json scenarioOn(int device, const char* id)
{
    nlohmann::ordered_json s;
    s["format"] = "streamscope-scenario";
    s["version"] = 1;
    s["id"] = id;
    s["devices"] = nlohmann::ordered_json::array({{{"index", device}}});
    return s;
}

// `threads` host threads, each issuing `perRepeat` empty <<<1, 32>>> launches round robin over its own `streams`
// non-blocking streams, `repeat` times (the Runner syncs the device after each iteration); one warm-up and
// `iterations` measured iterations.
std::string launchScenario(int device, int threads, int streams, int perRepeat, int repeat, int iterations)
{
    nlohmann::ordered_json s = scenarioOn(device, "calibrate-launches");
    s["streams"] = nlohmann::ordered_json::array();
    s["threads"] = nlohmann::ordered_json::array();
    for (int t = 0; t < threads; ++t) {
        nlohmann::ordered_json ops = nlohmann::ordered_json::array();
        for (int k = 0; k < perRepeat; ++k) {
            const std::string stream = "t" + std::to_string(t) + "s" + std::to_string(k % streams);
            ops.push_back(
                {{"op", "kernel"}, {"name", "e"}, {"stream", stream}, {"kernel", "empty"}, {"grid", 1}, {"block", 32}});
        }
        for (int k = 0; k < streams; ++k)
            s["streams"].push_back({{"name", "t" + std::to_string(t) + "s" + std::to_string(k)},
                                    {"device", device},
                                    {"kind", "non-blocking"}});
        s["threads"].push_back({{"name", "t" + std::to_string(t)}, {"repeat", repeat}, {"ops", ops}});
    }
    s["run"] = {{"warmup", 1}, {"iterations", iterations}};
    return s.dump();
}

// One host thread launching a 30 µs kernel, then allocating and freeing `bytes` (cudaMalloc, then cudaFree, which
// waits for the kernel), `repeat` times: an allocation in a loop of GPU work, as lesson 17 has it.
std::string mallocScenario(int device, int64_t bytes, int repeat, int iterations)
{
    nlohmann::ordered_json s = scenarioOn(device, "calibrate-malloc");
    s["streams"] = nlohmann::ordered_json::array({{{"name", "s"}, {"device", device}, {"kind", "non-blocking"}}});
    nlohmann::ordered_json ops = nlohmann::ordered_json::array();
    ops.push_back({{"op", "kernel"},
                   {"name", "k"},
                   {"stream", "s"},
                   {"kernel", "spin"},
                   {"duration_us", 30},
                   {"grid", 1},
                   {"block", 32}});
    ops.push_back({{"op", "malloc"}, {"bytes", bytes}});
    ops.push_back({{"op", "free"}, {"bytes", bytes}});
    s["threads"] = nlohmann::ordered_json::array({{{"name", "t"}, {"repeat", repeat}, {"ops", ops}}});
    s["run"] = {{"warmup", 1}, {"iterations", iterations}};
    return s.dump();
}

// One host thread copying `copies` buffers of `bytes` of pageable host memory (each op its own buffer, touched before
// the run) in one direction, a stream sync after each; one warm-up and `iterations` measured iterations.
std::string pageableScenario(int device, const char* kind, int64_t bytes, int copies, int iterations)
{
    nlohmann::ordered_json s = scenarioOn(device, "calibrate-pageable");
    s["streams"] = nlohmann::ordered_json::array({{{"name", "s"}, {"device", device}, {"kind", "non-blocking"}}});
    nlohmann::ordered_json ops = nlohmann::ordered_json::array();
    for (int k = 0; k < copies; ++k) {
        ops.push_back({{"op", "memcpy"},
                       {"name", std::string(kind) + " " + std::to_string(k)},
                       {"stream", "s"},
                       {"kind", kind},
                       {"bytes", bytes},
                       {"host", "pageable"}});
        ops.push_back({{"op", "stream-sync"}, {"stream", "s"}});
    }
    s["threads"] = nlohmann::ordered_json::array({{{"name", "t"}, {"ops", ops}}});
    s["run"] = {{"warmup", 1}, {"iterations", iterations}};
    return s.dump();
}

// One host thread, one stream: `rounds` times a one-block spin kernel of `kernelUs` and a 5 µs host function, which
// waits for the kernel and which the next kernel waits for; one warm-up and `iterations` measured iterations.
std::string hostFuncChainScenario(int device, int kernelUs, int rounds, int iterations)
{
    nlohmann::ordered_json s = scenarioOn(device, "calibrate-host-func-chain");
    s["streams"] = nlohmann::ordered_json::array({{{"name", "s"}, {"device", device}, {"kind", "non-blocking"}}});
    nlohmann::ordered_json ops = nlohmann::ordered_json::array();
    ops.push_back({{"op", "kernel"},
                   {"name", "k"},
                   {"stream", "s"},
                   {"kernel", "spin"},
                   {"duration_us", kernelUs},
                   {"grid", 1},
                   {"block", 32}});
    ops.push_back({{"op", "host-func"}, {"name", "cb"}, {"stream", "s"}, {"duration_us", 5}});
    s["threads"] = nlohmann::ordered_json::array({{{"name", "t"}, {"repeat", rounds}, {"ops", ops}}});
    s["run"] = {{"warmup", 1}, {"iterations", iterations}};
    return s.dump();
}

} // namespace

std::vector<double> Calibrator::runnerLaunchCost(int threads, int streams)
{
    const int perRepeat = streams;
    const int repeat = std::max(1, m_calls / perRepeat);
    return runnerCallCost(launchScenario(m_opt.device, threads, streams, perRepeat, repeat, m_repeats),
                          {"cudaLaunchKernel"}, perRepeat * repeat);
}

// Runs `scenario` through the Runner and the CUDA backend; per iteration and thread, the host clock from the start
// of its first call named in `calls` to the end of its last (or, with `spanDurations`, the sum of those calls' own
// durations), divided by `count`; per iteration the median thread.
std::vector<double> Calibrator::runnerCallCost(const std::string& scenario, const std::set<std::string>& calls,
                                               int count, bool spanDurations)
{
    auto parsed = parseScenario(scenario, "<calibration scenario>");
    if (!parsed)
        throw CudaFailure{"calibration scenario: " + parsed.error().toString()};
    CudaBackendOptions options;
    // Launches: no events, no CUPTI, what an untimed iteration issues. The host calls' own durations (cudaMalloc):
    // with the default timing, so that the process holds what a scenario run's process holds (its kernels' stamp
    // slots: beside them a 1 MiB cudaMalloc cost 1.7-2.6 µs on the H200, without them 44 µs).
    options.timeOps = spanDurations;
    options.measureUntimed = false;
    auto backend = makeCudaBackend(options);
    RunOptions run;
    run.cancel = m_opt.cancel;
    RunOutcome out = runScenario(parsed->scenario, *backend, run);
    if (!out.status)
        throw CudaFailure{"calibration scenario run: " + out.status.error().toString()};
    // Per (iteration, thread): the first launch call's start and the last one's end.
    std::map<std::pair<int, int>, std::pair<int64_t, int64_t>> window;
    const Trace& t = out.trace;
    for (uint32_t i = 0; i < t.spanCount(); ++i) {
        if (t.spans.kind[i] != SpanKind::ApiCall || calls.count(std::string(t.spanName(i))) == 0)
            continue;
        if (spanDurations) { // the calls' own durations, summed
            auto& w = window[{t.spans.iterationOf(i), t.spans.threadOf(i)}];
            w.second += t.spans.end[i] - t.spans.start[i];
            continue;
        }
        auto [it, fresh] =
            window.try_emplace({t.spans.iterationOf(i), t.spans.threadOf(i)}, t.spans.start[i], t.spans.end[i]);
        if (!fresh) {
            it->second.first = std::min(it->second.first, t.spans.start[i]);
            it->second.second = std::max(it->second.second, t.spans.end[i]);
        }
    }
    std::map<int, std::vector<double>> perIteration;
    for (const auto& [key, w] : window)
        perIteration[key.first].push_back(double(w.second - w.first) / count);
    std::vector<double> values;
    for (auto& [iteration, perThread] : perIteration)
        values.push_back(median(perThread));
    if (int(values.size()) != m_repeats)
        throw CudaFailure{"calibration scenario run: " + std::to_string(values.size()) + " iterations measured, not "
                          + std::to_string(m_repeats)};
    return values;
}

void Calibrator::runnerLaunchCosts()
{
    const std::string how = " through StreamScope's Runner and CUDA backend with no timing (the path of a scenario "
                            "run's untimed iterations): host clock from the start of a thread's first "
                            "cudaLaunchKernel to the end of its last, divided by the "
        + std::to_string(m_calls) + " launches of an empty <<<1, 32>>> kernel";
    if (m_opt.cancel && m_opt.cancel->load())
        throw Cancelled{};
    figure("launch_api_ns", "launch cost into one stream, as runs issue it", "ns", runnerLaunchCost(1, 1),
           "one thread into one non-blocking stream," + how);
    figure("launch_api_round_robin_ns", "launch cost round-robin over 32 streams, as runs issue it", "ns",
           runnerLaunchCost(1, 32), "one thread, each launch into the next of 32 non-blocking streams," + how);
    figure("launch_api_concurrent_ns", "launch cost while 4 host threads launch at once, as runs issue it", "ns",
           runnerLaunchCost(4, 1),
           "4 threads at once, each into its own non-blocking stream (the median thread)," + how);
}

// cudaMalloc as runs issue it: what it costs depends on what ran before (on the H200 a loop of 1 MiB pairs on an idle
// device cost 34-44 µs per call, through the Runner as in a bare loop; in lesson 17's loop of kernels cudaMalloc took
// 1.7-2.6 µs and cudaFree returned 3.8 µs after the kernels it waited for), so the figure the simulator uses comes
// from a loop like lesson 17's through the Runner and the backend.
void Calibrator::runnerMallocCost()
{
    if (m_opt.cancel && m_opt.cancel->load())
        throw Cancelled{};
    const int repeat = m_opt.quick ? 10 : 100;
    constexpr int64_t kBytes = int64_t(1) << 20;
    figure("malloc_api_ns", "cudaMalloc cost in a loop of GPU work, as runs issue it", "ns",
           runnerCallCost(mallocScenario(m_opt.device, kBytes, repeat, m_repeats), {"cudaMalloc"}, repeat, true),
           "one thread launching a 30 us spin kernel, allocating 1 MiB and freeing it (cudaFree waits for the "
           "kernel), "
               + std::to_string(repeat)
               + " times, through StreamScope's Runner and CUDA backend with no timing: the mean cudaMalloc call "
                 "(the simulator charges it for cudaMalloc and for cudaFree after its wait; on an idle device a "
                 "pair costs cuda_malloc_free_ns each)");
}

// Pageable copies go through the driver's staging buffers, copied by the CPU: their speed is the host's, and it
// differs from process to process, so they are measured with the host costs, again in fresh processes
// (calibrate_processes.cpp). And it depends on how they are issued: on an H200 machine 64 MiB host-to-device copies
// of one buffer issued back to back ran at 13.9-14.5 GB/s in some processes (the CPU staging the next copy while the
// last one's DMA ran), where each of a pipeline's copies, from its own buffer between other work, ran at 8.5 GB/s.
// So they are measured as scenarios issue them: each op its own buffer, a stream sync after each copy, through the
// Runner and the backend with no timing.
void Calibrator::runnerPageableCopies()
{
    if (m_opt.cancel && m_opt.cancel->load())
        throw Cancelled{};
    const auto bytes = int64_t(pageableBytes(m_opt.quick));
    const int copies = m_opt.quick ? 2 : 4;
    const std::string size = std::to_string(bytes >> 20) + " MiB";
    const std::string how = std::to_string(copies) + " copies of " + size
        + ", each from its own buffer and followed by a stream sync, through StreamScope's Runner and CUDA backend "
          "with no timing: host clock from the start of the first cudaMemcpyAsync to the end of the last "
          "cudaStreamSynchronize, per copy";
    const std::set<std::string> calls{"cudaMemcpyAsync", "cudaStreamSynchronize"};
    figure("h2d_pageable_copy_ns", "H2D pageable " + size + " copy, as runs issue it", "ns",
           runnerCallCost(pageableScenario(m_opt.device, "h2d", bytes, copies, m_repeats), calls, copies),
           how + ", pageable host to device");
    figure("d2h_pageable_copy_ns", "D2H pageable " + size + " copy, as runs issue it", "ns",
           runnerCallCost(pageableScenario(m_opt.device, "d2h", bytes, copies, m_repeats), calls, copies),
           how + ", device to pageable host");
}

// A host function's wake-up against the time the driver's thread sat idle (tests/data/h200/experiments/host-func-wake:
// on an H200 a thread that ran a host function 7 µs before woke a mean 23 µs after the kernel, after 13-104 µs idle
// 36-42 µs, after 205 µs 73 µs; the trials of host_func_after_kernel_ns, which start from an idle thread, gave 47 µs).
// Chains of a K µs kernel and a host function, K from 2 µs to 3 ms, run through the Runner and the CUDA backend with
// its kernels stamping themselves: per host function, from its kernel's end (the kernel's %globaltimer stamp on the
// host clock) to its start (host clock inside it), and the idle time, from the host function before it to that
// kernel's end. Per chain and iteration the mean wake-up and the median idle; the first host function of an
// iteration, after the device sync, is left out.
void Calibrator::runnerHostFuncWake()
{
    const std::vector<int> kernelUs = m_opt.quick
        ? std::vector<int>{5, 50, 500}
        : std::vector<int>(std::begin(kHostFuncChainUs), std::end(kHostFuncChainUs));
    std::vector<double> firstWake; // each iteration's first host function, after the Runner's device sync
    std::vector<double> release;   // per chain, the mean from a host function's end to the next kernel's start
    for (const int k : kernelUs) {
        if (m_opt.cancel && m_opt.cancel->load())
            throw Cancelled{};
        const int rounds = m_opt.quick || k >= 500 ? 20 : 50;
        auto parsed =
            parseScenario(hostFuncChainScenario(m_opt.device, k, rounds, m_repeats), "<calibration scenario>");
        if (!parsed)
            throw CudaFailure{"calibration scenario: " + parsed.error().toString()};
        CudaBackendOptions options;
        options.measureUntimed = false;
        auto backend = makeCudaBackend(options);
        RunOptions run;
        run.cancel = m_opt.cancel;
        RunOutcome out = runScenario(parsed->scenario, *backend, run);
        if (!out.status)
            throw CudaFailure{"calibration scenario run: " + out.status.error().toString()};
        const Trace& t = out.trace;
        // Per iteration, the kernels and host functions of the one stream in start order.
        std::map<int, std::vector<uint32_t>> ops;
        for (uint32_t i = 0; i < t.spanCount(); ++i)
            if (t.spans.kind[i] == SpanKind::Kernel || t.spans.kind[i] == SpanKind::HostFunc)
                ops[t.spans.iterationOf(i)].push_back(i);
        std::vector<double> wake;
        std::vector<double> idle;
        std::vector<double> gaps;
        for (auto& [iteration, v] : ops) {
            std::sort(v.begin(), v.end(), [&](uint32_t a, uint32_t b) { return t.spans.start[a] < t.spans.start[b]; });
            std::vector<double> w;
            std::vector<double> d;
            int64_t lastEnd = -1;
            for (size_t j = 1; j < v.size(); ++j) {
                const uint32_t prev = v[j - 1];
                const uint32_t next = v[j];
                if (t.spans.kind[prev] == SpanKind::HostFunc && t.spans.kind[next] == SpanKind::Kernel)
                    gaps.push_back(double(t.spans.start[next] - t.spans.end[prev]));
                if (t.spans.kind[prev] != SpanKind::Kernel || t.spans.kind[next] != SpanKind::HostFunc)
                    continue;
                const double since = double(t.spans.start[next] - t.spans.end[prev]);
                if (lastEnd >= 0) {
                    w.push_back(since);
                    d.push_back(double(t.spans.end[prev] - lastEnd));
                } else {
                    firstWake.push_back(since);
                }
                lastEnd = t.spans.end[next];
            }
            if (w.empty())
                throw CudaFailure{"calibration scenario run: no host function after a kernel in iteration "
                                  + std::to_string(iteration)};
            wake.push_back(std::accumulate(w.begin(), w.end(), 0.0) / double(w.size()));
            idle.push_back(median(d));
        }
        if (!gaps.empty())
            release.push_back(std::accumulate(gaps.begin(), gaps.end(), 0.0) / double(gaps.size()));
        const std::string chain = std::to_string(rounds) + " rounds of a " + std::to_string(k)
            + " us one-block spin kernel and a 5 us host function in one stream, through StreamScope's Runner and "
              "CUDA backend with the kernels stamping themselves";
        figure("host_func_idle_" + std::to_string(k) + "us_chain_ns",
               "host-function thread idle in a chain of " + std::to_string(k) + " us kernels", "ns", idle,
               chain + ": per iteration the median time from a host function's end to the end of the next kernel");
        figure("host_func_wake_" + std::to_string(k) + "us_chain_ns",
               "host function wake-up in a chain of " + std::to_string(k) + " us kernels", "ns", wake,
               chain
                   + ": per iteration the mean time from a kernel's end (its stamp) to the start of the host "
                     "function after it (host clock inside it), the first of the iteration left out");
    }
    const std::string chains = "the chains of host_func_wake_curve (" + std::to_string(kernelUs.size())
        + " chains of K us kernels and 5 us host functions in one stream, through the Runner)";
    figure("host_func_release_ns", "host function to the next kernel", "ns", release,
           chains
               + ": per chain the mean time from a host function's end (host clock inside it) to the start of "
                 "the kernel after it (its stamp); the median over the chains");
    figure("host_func_first_wake_chain_ns", "first host function of an iteration", "ns", firstWake,
           chains
               + ": from the kernel's end (its stamp) to the start of each iteration's first host "
                 "function, which follows the Runner's device sync and its work between iterations; the "
                 "mean over every iteration of every chain less the highest and lowest tenth",
           true);
}

} // namespace streamscope::calibrate
