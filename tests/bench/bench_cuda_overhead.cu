// What recording costs on a real GPU.
//
//   bench_cuda_overhead [--json] [--kernels 200] [--launches 2000] [--iterations 5]
//
// (a) Recording overhead: the makespan of the same work — N one-block spin kernels of 50 us and of 200 us spread
//     over 4 non-blocking streams, then a device sync — with and without timing events (CudaBackendOptions::
//     timeOps), and with the default shared boundary events (an op issued to a busy stream starts at the previous
//     op's end event) against a start and an end event around every op (shareBoundaryEvents off). The makespan is
//     measured on the host clock (first API call to the end of the device sync) so that all runs are measured the
//     same way; reported as the ratio with/without.
// (b) Engine overhead: host time per op for M empty-kernel launches into one stream through runScenario, against
//     a plain CUDA loop making the same launches, one that records two events per launch, and one that does what
//     the engine's shared events do (cudaEventQuery of the last end event, a start event only when it completed,
//     an end event).
// (c) The host cost of cudaEventQuery on a completed and on a not-yet-completed event.
//
// Timing figures belong here, not in the tests (DESIGN.md §8). Without a usable GPU it says why and exits 0.
#include "cuda_backend.h"
#include "runner.h"
#include "scenario.h"
#include "scenario_json.h"

#include <cuda_runtime.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

namespace ss = streamscope;

namespace {

__global__ void emptyKernel() {}

__global__ void spinCycles(long long cycles)
{
    const long long t0 = clock64();
    while (clock64() - t0 < cycles) {}
}

struct Config {
    bool json = false;
    int kernels = 200;
    int launches = 2000;
    int iterations = 5;
};

double median(std::vector<double> v)
{
    if (v.empty())
        return 0;
    std::sort(v.begin(), v.end());
    return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

int64_t nowNs()
{
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

ss::Op spinOp(const std::string& stream, double us)
{
    ss::Op op;
    op.kind = ss::OpKind::Kernel;
    op.kernel = ss::KernelKind::Spin;
    op.stream = stream;
    op.durationUs = us;
    op.grid = ss::Dim3{1, 1, 1};
    op.gridGiven = true;
    op.block = ss::Dim3{32, 1, 1};
    return op;
}

// Per measured iteration of a run: the host time from its first API call to the end of its last one (the closing
// sync), and the host time from the first kernel launch call to the end of the last, per launch.
struct Measured {
    std::vector<double> makespanUs;  // per iteration
    std::vector<double> perLaunchUs; // per iteration: first launch start to last launch end, over launches
    std::string sharedStarts;        // the run's "shared_start_events" setting ("N of M"), if any
};

bool run(const ss::Scenario& raw, const ss::CudaBackendOptions& options, Measured& out, std::string& error)
{
    auto valid = ss::validateScenario(raw);
    if (!valid) {
        error = valid.error().toString();
        return false;
    }
    const ss::Scenario& s = valid->scenario;
    auto backend = ss::makeCudaBackend(options);
    const ss::RunOutcome r = ss::runScenario(s, *backend);
    if (!r.status) {
        error = r.status.error().toString();
        return false;
    }
    const ss::Trace& t = r.trace;
    for (const auto& [k, v] : t.info.settings)
        if (k == "shared_start_events")
            out.sharedStarts = v;
    const int iterations = std::max(1, s.run.iterations);
    std::vector<int64_t> first(size_t(iterations), INT64_MAX), last(size_t(iterations), INT64_MIN);
    std::vector<int64_t> launchFirst(size_t(iterations), INT64_MAX), launchLast(size_t(iterations), INT64_MIN);
    std::vector<int64_t> launches(size_t(iterations), 0);
    for (uint32_t i = 0; i < t.spanCount(); ++i) {
        if (t.tracks[t.spans.track[i]].kind != ss::TrackKind::HostThread)
            continue;
        const auto it = size_t(std::clamp(t.spans.iterationOf(i), 0, iterations - 1));
        first[it] = std::min(first[it], t.spans.start[i]);
        last[it] = std::max(last[it], t.spans.end[i]);
        if (t.spanName(i) == "cudaLaunchKernel") {
            launchFirst[it] = std::min(launchFirst[it], t.spans.start[i]);
            launchLast[it] = std::max(launchLast[it], t.spans.end[i]);
            ++launches[it];
        }
    }
    for (int it = 0; it < iterations; ++it) {
        if (first[size_t(it)] < last[size_t(it)])
            out.makespanUs.push_back(double(last[size_t(it)] - first[size_t(it)]) / 1e3);
        if (launches[size_t(it)] > 0)
            out.perLaunchUs.push_back(double(launchLast[size_t(it)] - launchFirst[size_t(it)]) / 1e3
                                      / double(launches[size_t(it)]));
    }
    return true;
}

// (a) N spin kernels of `us` round-robin over 4 non-blocking streams, then a device sync.
ss::Scenario recordingScenario(int kernels, double us, int iterations)
{
    ss::Scenario s;
    s.id = "bench-recording-" + std::to_string(int(us)) + "us";
    s.devices.push_back({0, {}});
    for (int i = 0; i < 4; ++i)
        s.streams.push_back({"s" + std::to_string(i), 0, ss::StreamKind::NonBlocking, 0});
    ss::ThreadSpec t;
    t.name = "main";
    for (int k = 0; k < kernels; ++k)
        t.ops.push_back(spinOp("s" + std::to_string(k % 4), us));
    ss::Op sync;
    sync.kind = ss::OpKind::DeviceSync;
    t.ops.push_back(sync);
    s.threads.push_back(t);
    s.run.warmup = 1;
    s.run.iterations = iterations;
    return s;
}

// (b) M empty kernels into one stream (one op repeated), then a stream sync.
ss::Scenario engineScenario(int launches, int iterations)
{
    ss::Scenario s;
    s.id = "bench-engine";
    s.devices.push_back({0, {}});
    s.streams.push_back({"s", 0, ss::StreamKind::NonBlocking, 0});
    ss::ThreadSpec t;
    t.name = "main";
    ss::Op k;
    k.kind = ss::OpKind::Kernel;
    k.kernel = ss::KernelKind::Empty;
    k.stream = "s";
    k.grid = ss::Dim3{1, 1, 1};
    k.gridGiven = true;
    k.block = ss::Dim3{32, 1, 1};
    t.ops.push_back(k);
    t.repeat = launches;
    s.threads.push_back(t);
    s.run.warmup = 1;
    s.run.iterations = iterations;
    return s;
}

enum class LoopEvents { None, Two, Shared };

// The same launches in a plain loop: host time per launch, with no events, two events around each, or the
// engine's shared scheme (the last end event queried; a start event only where it had completed; an end event).
bool plainLoop(int launches, int iterations, LoopEvents events, std::vector<double>& perLaunchUs, int64_t& shared,
               bool& notReadyLeftAsLastError, std::string& error)
{
    auto check = [&](cudaError_t e, const char* what) {
        if (e != cudaSuccess && error.empty())
            error = std::string(what) + ": " + cudaGetErrorString(e);
        return e == cudaSuccess;
    };
    if (!check(cudaSetDevice(0), "cudaSetDevice"))
        return false;
    cudaStream_t s = nullptr;
    if (!check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreateWithFlags"))
        return false;
    std::vector<cudaEvent_t> ev(events != LoopEvents::None ? size_t(2 * launches) : 0);
    for (auto& e : ev)
        check(cudaEventCreate(&e), "cudaEventCreate");
    bool ok = error.empty();
    shared = 0;
    for (int it = -1; it < iterations && ok; ++it) { // it = -1: warm-up
        size_t next = 0;
        cudaEvent_t lastEnd = nullptr;
        int64_t sharedNow = 0;
        const int64_t t0 = nowNs();
        for (int i = 0; i < launches; ++i) {
            if (events == LoopEvents::Two)
                cudaEventRecord(ev[next++], s);
            else if (events == LoopEvents::Shared) {
                if (lastEnd && cudaEventQuery(lastEnd) == cudaErrorNotReady)
                    ++sharedNow;
                else
                    cudaEventRecord(ev[next++], s);
            }
            emptyKernel<<<1, 32, 0, s>>>();
            if (events != LoopEvents::None) {
                lastEnd = ev[next++];
                cudaEventRecord(lastEnd, s);
            }
        }
        const int64_t t1 = nowNs();
        cudaError_t last = cudaGetLastError();
        if (last == cudaErrorNotReady) { // what a not-ready query leaves behind, if anything
            notReadyLeftAsLastError = true;
            last = cudaSuccess;
        }
        ok = check(last, "launch") && check(cudaStreamSynchronize(s), "cudaStreamSynchronize");
        if (it >= 0) {
            perLaunchUs.push_back(double(t1 - t0) / 1e3 / launches);
            shared += sharedNow;
        }
    }
    for (auto e : ev)
        cudaEventDestroy(e);
    cudaStreamDestroy(s);
    return ok;
}

// Host cost of one cudaEventQuery: on an event behind a ~20 ms kernel (not ready) and on a completed one.
bool queryCost(int queries, double& notReadyUs, double& completeUs, std::string& error)
{
    auto check = [&](cudaError_t e, const char* what) {
        if (e != cudaSuccess && error.empty())
            error = std::string(what) + ": " + cudaGetErrorString(e);
        return e == cudaSuccess;
    };
    int clockKhz = 0;
    if (!check(cudaSetDevice(0), "cudaSetDevice")
        || !check(cudaDeviceGetAttribute(&clockKhz, cudaDevAttrClockRate, 0), "cudaDeviceGetAttribute"))
        return false;
    cudaStream_t s = nullptr;
    cudaEvent_t ev = nullptr;
    if (!check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreateWithFlags")
        || !check(cudaEventCreate(&ev), "cudaEventCreate"))
        return false;
    spinCycles<<<1, 32, 0, s>>>(std::max<long long>(1, clockKhz) * 20); // ~20 ms at the base clock or more
    bool ok = check(cudaGetLastError(), "launch") && check(cudaEventRecord(ev, s), "cudaEventRecord");
    int notReady = 0;
    const int64_t t0 = nowNs();
    for (int i = 0; i < queries && ok; ++i)
        notReady += cudaEventQuery(ev) == cudaErrorNotReady;
    const int64_t t1 = nowNs();
    (void)cudaGetLastError();
    ok = ok && check(cudaEventSynchronize(ev), "cudaEventSynchronize");
    const int64_t t2 = nowNs();
    for (int i = 0; i < queries && ok; ++i)
        ok = check(cudaEventQuery(ev), "cudaEventQuery");
    const int64_t t3 = nowNs();
    if (ok && notReady < queries)
        error = "the spin kernel ended before the not-ready queries did (" + std::to_string(notReady) + " of "
            + std::to_string(queries) + " not ready)";
    notReadyUs = double(t1 - t0) / 1e3 / queries;
    completeUs = double(t3 - t2) / 1e3 / queries;
    cudaEventDestroy(ev);
    cudaStreamDestroy(s);
    return ok && error.empty();
}

} // namespace

int main(int argc, char** argv)
{
    Config cfg;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        auto next = [&](int& v) {
            if (i + 1 < argc)
                v = std::max(1, std::atoi(argv[++i]));
        };
        if (arg == "--json")
            cfg.json = true;
        else if (arg == "--kernels")
            next(cfg.kernels);
        else if (arg == "--launches")
            next(cfg.launches);
        else if (arg == "--iterations")
            next(cfg.iterations);
        else {
            std::cerr << "usage: bench_cuda_overhead [--json] [--kernels N] [--launches M] [--iterations K]\n";
            return 2;
        }
    }

    nlohmann::ordered_json j;
    j["benchmark"] = "cuda_overhead";
    const ss::CudaProbe probe = ss::probeCuda();
    if (!probe.usable) {
        j["skipped"] = "no usable GPU: " + probe.reason;
        if (cfg.json)
            std::cout << j.dump() << "\n";
        else
            std::cout << "bench_cuda_overhead: no usable GPU: " << probe.reason << "\n";
        return 0;
    }
    j["gpu"] = probe.deviceNames.empty() ? "?" : probe.deviceNames[0];
    j["driver_version"] = probe.driverVersion;
    j["runtime_version"] = probe.runtimeVersion;
    j["iterations"] = cfg.iterations;

    std::string error;
    bool ok = true;

    // (a) recording overhead
    nlohmann::ordered_json recording = nlohmann::ordered_json::array();
    for (double us : {50.0, 200.0}) {
        const ss::Scenario s = recordingScenario(cfg.kernels, us, cfg.iterations);
        ss::CudaBackendOptions timed; // per-op CUDA events (CUPTI's cost: tools/gpu_timing_figures.py)
        timed.timing = ss::TimingMode::Events;
        ss::CudaBackendOptions separate = timed;
        separate.shareBoundaryEvents = false;
        ss::CudaBackendOptions untimed;
        untimed.timeOps = false;
        Measured with;
        Measured withSeparate;
        Measured without;
        if (!run(s, timed, with, error) || !run(s, separate, withSeparate, error) || !run(s, untimed, without, error)) {
            ok = false;
            break;
        }
        const double a = median(with.makespanUs);
        const double a2 = median(withSeparate.makespanUs);
        const double b = median(without.makespanUs);
        nlohmann::ordered_json r;
        r["kernels"] = cfg.kernels;
        r["streams"] = 4;
        r["kernel_us"] = us;
        r["ideal_makespan_us"] = us * cfg.kernels / 4.0;
        r["makespan_us_with_events"] = a;
        r["makespan_us_with_separate_events"] = a2;
        r["makespan_us_without_events"] = b;
        r["ratio"] = b > 0 ? a / b : 0.0;
        r["ratio_separate_events"] = b > 0 ? a2 / b : 0.0;
        r["shared_start_events"] = with.sharedStarts;
        recording.push_back(r);
        if (!cfg.json)
            std::printf("recording  %d x %.0f us spin in 4 streams: makespan %.1f us with shared events (%s shared), "
                        "%.1f us with start+end events, %.1f us without; ratio %.4f (start+end: %.4f)\n",
                        cfg.kernels, us, a, with.sharedStarts.c_str(), a2, b, b > 0 ? a / b : 0.0,
                        b > 0 ? a2 / b : 0.0);
    }
    j["recording_overhead"] = recording;

    // (b) engine overhead
    if (ok) {
        const ss::Scenario s = engineScenario(cfg.launches, cfg.iterations);
        ss::CudaBackendOptions timed; // per-op CUDA events (CUPTI's cost: tools/gpu_timing_figures.py)
        timed.timing = ss::TimingMode::Events;
        ss::CudaBackendOptions separate = timed;
        separate.shareBoundaryEvents = false;
        ss::CudaBackendOptions untimed;
        untimed.timeOps = false;
        untimed.nvtx = false;
        Measured engineTimed;
        Measured engineSeparate;
        Measured engineUntimed;
        std::vector<double> plain;
        std::vector<double> plainEvents;
        std::vector<double> plainShared;
        int64_t unused = 0;
        int64_t plainSharedCount = 0;
        bool notReadySticky = false;
        ok = run(s, untimed, engineUntimed, error) && run(s, timed, engineTimed, error)
            && run(s, separate, engineSeparate, error)
            && plainLoop(cfg.launches, cfg.iterations, LoopEvents::None, plain, unused, notReadySticky, error)
            && plainLoop(cfg.launches, cfg.iterations, LoopEvents::Two, plainEvents, unused, notReadySticky, error)
            && plainLoop(cfg.launches, cfg.iterations, LoopEvents::Shared, plainShared, plainSharedCount,
                         notReadySticky, error);
        if (ok) {
            const double pl = median(plain);
            const double en = median(engineUntimed.perLaunchUs);
            const double pl2 = median(plainEvents);
            const double enSep = median(engineSeparate.perLaunchUs);
            const double plSh = median(plainShared);
            const double enSh = median(engineTimed.perLaunchUs);
            nlohmann::ordered_json e;
            e["launches"] = cfg.launches;
            e["plain_loop_us_per_op"] = pl;
            e["engine_us_per_op"] = en;
            e["engine_overhead_us_per_op"] = en - pl;
            e["plain_loop_with_events_us_per_op"] = pl2;
            e["engine_with_separate_events_us_per_op"] = enSep;
            e["engine_with_separate_events_overhead_us_per_op"] = enSep - pl2;
            e["plain_loop_with_shared_events_us_per_op"] = plSh;
            e["plain_loop_shared_starts"] =
                std::to_string(plainSharedCount) + " of " + std::to_string(int64_t(cfg.launches) * cfg.iterations);
            e["engine_with_events_us_per_op"] = enSh;
            e["engine_with_events_overhead_us_per_op"] = enSh - plSh;
            e["engine_with_events_over_plain_with_two_events_us_per_op"] = enSh - pl2;
            e["engine_shared_start_events"] = engineTimed.sharedStarts;
            e["not_ready_query_left_last_error"] = notReadySticky;
            j["engine_overhead"] = e;
            if (!cfg.json) {
                std::printf("engine     %d empty kernels, host time per op: plain loop %.2f us, engine %.2f us "
                            "(+%.2f us)\n",
                            cfg.launches, pl, en, en - pl);
                std::printf("           start+end events per op: plain loop %.2f us, engine %.2f us (+%.2f us)\n", pl2,
                            enSep, enSep - pl2);
                std::printf("           shared events: plain loop %.2f us, engine %.2f us (+%.2f us; %s shared)\n",
                            plSh, enSh, enSh - plSh, engineTimed.sharedStarts.c_str());
            }
        }
    }

    // (c) cudaEventQuery
    if (ok) {
        double notReadyUs = 0;
        double completeUs = 0;
        ok = queryCost(2000, notReadyUs, completeUs, error);
        if (ok) {
            nlohmann::ordered_json q;
            q["queries"] = 2000;
            q["not_ready_us"] = notReadyUs;
            q["complete_us"] = completeUs;
            j["event_query"] = q;
            if (!cfg.json)
                std::printf("query      cudaEventQuery host cost: %.3f us not ready, %.3f us complete\n", notReadyUs,
                            completeUs);
        }
    }
    if (!ok) {
        j["error"] = error;
        if (!cfg.json)
            std::cerr << "bench_cuda_overhead: " << error << "\n";
    }
    if (cfg.json)
        std::cout << j.dump() << "\n";
    return ok ? 0 : 1;
}
