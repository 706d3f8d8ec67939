// What recording costs on a real GPU.
//
//   bench_cuda_overhead [--json] [--kernels 200] [--launches 2000] [--iterations 5]
//
// (a) Recording overhead: the makespan of the same work — N one-block spin kernels of 50 us and of 200 us spread
//     over 4 non-blocking streams, then a device sync — with and without start/end events around every op
//     (CudaBackendOptions::timeOps). The makespan is measured on the host clock (first API call to the end of the
//     device sync) so that both runs are measured the same way; reported as the ratio with/without.
// (b) Engine overhead: host time per op for M empty-kernel launches into one stream through runScenario, against
//     a plain CUDA loop making the same launches (and one that records two events per launch, as the engine does).
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
    std::vector<double> makespanUs;   // per iteration
    std::vector<double> perLaunchUs;  // per iteration: first launch start to last launch end, over launches
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
    const int iterations = std::max(1, s.run.iterations);
    std::vector<int64_t> first(size_t(iterations), INT64_MAX), last(size_t(iterations), INT64_MIN);
    std::vector<int64_t> launchFirst(size_t(iterations), INT64_MAX), launchLast(size_t(iterations), INT64_MIN);
    std::vector<int64_t> launches(size_t(iterations), 0);
    for (uint32_t i = 0; i < t.spanCount(); ++i) {
        if (t.tracks[t.spans.track[i]].kind != ss::TrackKind::HostThread)
            continue;
        const auto it = size_t(std::clamp(t.spans.iteration[i], 0, iterations - 1));
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
            out.perLaunchUs.push_back(double(launchLast[size_t(it)] - launchFirst[size_t(it)]) / 1e3 /
                                      double(launches[size_t(it)]));
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

// The same launches in a plain loop: host time per launch, with or without two events around each.
bool plainLoop(int launches, int iterations, bool events, std::vector<double>& perLaunchUs, std::string& error)
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
    std::vector<cudaEvent_t> ev(events ? size_t(2 * launches) : 0);
    for (auto& e : ev)
        check(cudaEventCreate(&e), "cudaEventCreate");
    bool ok = error.empty();
    for (int it = -1; it < iterations && ok; ++it) { // it = -1: warm-up
        const int64_t t0 = nowNs();
        for (int i = 0; i < launches; ++i) {
            if (events)
                cudaEventRecord(ev[size_t(2 * i)], s);
            emptyKernel<<<1, 32, 0, s>>>();
            if (events)
                cudaEventRecord(ev[size_t(2 * i + 1)], s);
        }
        const int64_t t1 = nowNs();
        ok = check(cudaGetLastError(), "launch") && check(cudaStreamSynchronize(s), "cudaStreamSynchronize");
        if (it >= 0)
            perLaunchUs.push_back(double(t1 - t0) / 1e3 / launches);
    }
    for (auto e : ev)
        cudaEventDestroy(e);
    cudaStreamDestroy(s);
    return ok;
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
        ss::CudaBackendOptions timed;
        ss::CudaBackendOptions untimed;
        untimed.timeOps = false;
        Measured with;
        Measured without;
        if (!run(s, timed, with, error) || !run(s, untimed, without, error)) {
            ok = false;
            break;
        }
        const double a = median(with.makespanUs);
        const double b = median(without.makespanUs);
        nlohmann::ordered_json r;
        r["kernels"] = cfg.kernels;
        r["streams"] = 4;
        r["kernel_us"] = us;
        r["ideal_makespan_us"] = us * cfg.kernels / 4.0;
        r["makespan_us_with_events"] = a;
        r["makespan_us_without_events"] = b;
        r["ratio"] = b > 0 ? a / b : 0.0;
        recording.push_back(r);
        if (!cfg.json)
            std::printf("recording  %d x %.0f us spin in 4 streams: makespan %.1f us with events, %.1f us without, "
                        "ratio %.4f\n",
                        cfg.kernels, us, a, b, b > 0 ? a / b : 0.0);
    }
    j["recording_overhead"] = recording;

    // (b) engine overhead
    if (ok) {
        const ss::Scenario s = engineScenario(cfg.launches, cfg.iterations);
        ss::CudaBackendOptions timed;
        ss::CudaBackendOptions untimed;
        untimed.timeOps = false;
        untimed.nvtx = false;
        Measured engineTimed;
        Measured engineUntimed;
        std::vector<double> plain;
        std::vector<double> plainEvents;
        ok = run(s, untimed, engineUntimed, error) && run(s, timed, engineTimed, error) &&
             plainLoop(cfg.launches, cfg.iterations, false, plain, error) &&
             plainLoop(cfg.launches, cfg.iterations, true, plainEvents, error);
        if (ok) {
            nlohmann::ordered_json e;
            e["launches"] = cfg.launches;
            e["plain_loop_us_per_op"] = median(plain);
            e["engine_us_per_op"] = median(engineUntimed.perLaunchUs);
            e["engine_overhead_us_per_op"] = median(engineUntimed.perLaunchUs) - median(plain);
            e["plain_loop_with_events_us_per_op"] = median(plainEvents);
            e["engine_with_events_us_per_op"] = median(engineTimed.perLaunchUs);
            e["engine_with_events_overhead_us_per_op"] = median(engineTimed.perLaunchUs) - median(plainEvents);
            j["engine_overhead"] = e;
            if (!cfg.json) {
                std::printf("engine     %d empty kernels, host time per op: plain loop %.2f us, engine %.2f us "
                            "(+%.2f us)\n",
                            cfg.launches, median(plain), median(engineUntimed.perLaunchUs),
                            median(engineUntimed.perLaunchUs) - median(plain));
                std::printf("           with 2 events per op: plain loop %.2f us, engine %.2f us (+%.2f us)\n",
                            median(plainEvents), median(engineTimed.perLaunchUs),
                            median(engineTimed.perLaunchUs) - median(plainEvents));
            }
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
