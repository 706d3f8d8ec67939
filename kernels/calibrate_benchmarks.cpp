// The calibration's microbenchmarks, each a Calibrator member that stores its figures (calibrator.h): hostCosts
// (what each API call costs the host: launches, event records and waits, syncs, copies, memsets, host functions,
// cudaMalloc and cudaFree), graphs (the launch cost of 1- and 1000-node graphs, node spacing), gpuSpacing (empty
// kernels and small copies queued back to back), latencies (kernel start, host functions after a kernel, sync
// wake-up, seen through a kernel's store to mapped memory), copies (every direction and host memory kind, memsets,
// duplex, peer). kernelThroughput and cuptiSplit are in calibrate_throughput.cpp.
#include "calibrator.h"

#include "calibrate_kernels.cuh"
#include "cuda_backend.h"
#include "cupti_tracer.h"
#include "kernel_library.cuh"

#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace streamscope::calibrate {

namespace {

void CUDART_CB noopHostFunc(void*) {}

struct HostFuncStamp {
    int64_t start = 0;
    int64_t end = 0;
};
void CUDART_CB stampHostFunc(void* p)
{
    auto* s = static_cast<HostFuncStamp*>(p);
    s->start = nowNs();
    s->end = nowNs();
}

} // namespace

void Calibrator::hostCosts()
{
    const int n = m_calls;
    const std::string perCall = "host steady clock around " + std::to_string(n) + " calls";
    measured(
        "launch_call_ns", "cudaLaunchKernel alone, into one stream", "ns",
        [&] {
            sync();
            const int64_t t0 = nowNs();
            for (int i = 0; i < n; ++i)
                launchEmpty(m_s);
            const int64_t t = nowNs() - t0;
            sync();
            return double(t) / n;
        },
        perCall + " of cudaLaunchKernel (empty kernel, <<<1, 1>>>) into one stream, divided by their number");
    measured(
        "launch_call_round_robin_ns", "cudaLaunchKernel alone, round-robin over 32 streams", "ns",
        [&] {
            check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
            const int64_t t0 = nowNs();
            for (int i = 0; i < n; ++i)
                launchEmpty(m_rr[size_t(i) % m_rr.size()]);
            const int64_t t = nowNs() - t0;
            check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
            return double(t) / n;
        },
        perCall + " of cudaLaunchKernel (empty kernel), each into the next of 32 non-blocking streams");
    // Four host threads launching at once, each into its own stream: the driver serializes part of each call.
    measured(
        "launch_call_concurrent_ns", "cudaLaunchKernel alone, 4 host threads at once", "ns",
        [&] {
            constexpr int kThreads = 4;
            check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
            std::atomic<int> ready{0};
            std::vector<int64_t> elapsed(kThreads, 0);
            std::vector<cudaError_t> errors(kThreads, cudaSuccess);
            std::vector<std::thread> threads;
            for (int t = 0; t < kThreads; ++t)
                threads.emplace_back([&, t] {
                    // No exceptions here (check() throws): errors are kept and reported on the calling thread.
                    cudaError_t& error = errors[size_t(t)];
                    error = cudaSetDevice(m_opt.device);
                    kernels::LaunchArgs a;
                    a.kernel = Kernel::Empty;
                    a.stream = m_rr[size_t(t)];
                    ready.fetch_add(1);
                    while (ready.load() < kThreads) {}
                    const int64_t t0 = nowNs();
                    for (int i = 0; i < n && error == cudaSuccess; ++i)
                        error = kernels::launch(a);
                    elapsed[size_t(t)] = nowNs() - t0;
                });
            for (auto& th : threads)
                th.join();
            for (cudaError_t e : errors)
                check(e, "cudaLaunchKernel (empty, from 4 host threads)");
            check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
            std::sort(elapsed.begin(), elapsed.end());
            return double(elapsed[kThreads / 2]) / n;
        },
        perCall
            + " of cudaLaunchKernel (empty kernel) in each of 4 host threads at once, each into its own "
              "non-blocking stream, divided by their number (the median thread)");

    // The launch figures the simulator uses: the same launches issued as a scenario run issues them
    // (calibrate_runner.cpp).
    runnerLaunchCosts();

    cudaEvent_t ev = nullptr;
    check(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming), "cudaEventCreateWithFlags");
    measured(
        "event_record_api_ns", "cudaEventRecord cost", "ns",
        [&] {
            sync();
            const int64_t t0 = nowNs();
            for (int i = 0; i < n; ++i)
                check(cudaEventRecord(ev, m_s), "cudaEventRecord");
            const int64_t t = nowNs() - t0;
            sync();
            return double(t) / n;
        },
        perCall + " of cudaEventRecord (a cudaEventDisableTiming event) into an idle stream");
    measured(
        "stream_wait_api_ns", "cudaStreamWaitEvent cost", "ns",
        [&] {
            check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
            launchSpin(m_s, 3'000'000);
            check(cudaEventRecord(ev, m_s), "cudaEventRecord");
            const int64_t t0 = nowNs();
            for (int i = 0; i < n; ++i)
                check(cudaStreamWaitEvent(m_s2, ev, 0), "cudaStreamWaitEvent");
            const int64_t t = nowNs() - t0;
            check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
            return double(t) / n;
        },
        perCall + " of cudaStreamWaitEvent on an event recorded behind a 3 ms kernel in another stream");
    check(cudaEventDestroy(ev), "cudaEventDestroy");

    measured(
        "sync_api_ns", "cudaStreamSynchronize on an idle stream", "ns",
        [&] {
            sync();
            const int64_t t0 = nowNs();
            for (int i = 0; i < n; ++i)
                sync();
            return double(nowNs() - t0) / n;
        },
        perCall + " of cudaStreamSynchronize on a stream with no work");

    const int copies = std::max(10, n / 4);
    void* dev = nullptr;
    void* host = nullptr;
    check(cudaMalloc(&dev, 4096), "cudaMalloc");
    check(cudaMallocHost(&host, 4096), "cudaMallocHost");
    measured(
        "copy_api_ns", "cudaMemcpyAsync cost (4 B pinned H2D)", "ns",
        [&] {
            sync();
            const int64_t t0 = nowNs();
            for (int i = 0; i < copies; ++i)
                check(cudaMemcpyAsync(dev, host, 4, cudaMemcpyHostToDevice, m_s), "cudaMemcpyAsync");
            const int64_t t = nowNs() - t0;
            sync();
            return double(t) / copies;
        },
        "host steady clock around " + std::to_string(copies)
            + " calls of cudaMemcpyAsync, 4 bytes pinned host to device, "
              "into one stream");
    measured(
        "memset_api_ns", "cudaMemsetAsync cost (4 B)", "ns",
        [&] {
            sync();
            const int64_t t0 = nowNs();
            for (int i = 0; i < copies; ++i)
                check(cudaMemsetAsync(dev, 0, 4, m_s), "cudaMemsetAsync");
            const int64_t t = nowNs() - t0;
            sync();
            return double(t) / copies;
        },
        "host steady clock around " + std::to_string(copies)
            + " calls of cudaMemsetAsync of 4 bytes into one stream "
              "(the simulator charges copy_api_ns for memsets too)");
    measured(
        "host_func_api_ns", "cudaLaunchHostFunc cost", "ns",
        [&] {
            sync();
            const int64_t t0 = nowNs();
            for (int i = 0; i < copies; ++i)
                check(cudaLaunchHostFunc(m_s, noopHostFunc, nullptr), "cudaLaunchHostFunc");
            const int64_t t = nowNs() - t0;
            sync();
            return double(t) / copies;
        },
        "host steady clock around " + std::to_string(copies)
            + " calls of cudaLaunchHostFunc (a function that returns "
              "at once) into one stream");
    check(cudaFree(dev), "cudaFree");
    check(cudaFreeHost(host), "cudaFreeHost");

    const int allocs = m_opt.quick ? 5 : 50;
    constexpr size_t kAllocBytes = 16u << 20;
    std::vector<double> mallocNs;
    std::vector<double> freeNs;
    const auto both = repeat([&] {
        check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
        int64_t m = 0;
        int64_t f = 0;
        for (int i = 0; i < allocs; ++i) {
            void* p = nullptr;
            const int64_t t0 = nowNs();
            check(cudaMalloc(&p, kAllocBytes), "cudaMalloc");
            const int64_t t1 = nowNs();
            check(cudaFree(p), "cudaFree");
            m += t1 - t0;
            f += nowNs() - t1;
        }
        mallocNs.push_back(double(m) / allocs);
        freeNs.push_back(double(f) / allocs);
        return double(m + f) / (2.0 * allocs);
    });
    mallocNs.erase(mallocNs.begin()); // the warm-up
    freeNs.erase(freeNs.begin());
    const std::string allocMethod = "host steady clock around each of " + std::to_string(allocs)
        + " cudaMalloc / cudaFree pairs of 16 MiB on an idle device";
    figure("cuda_malloc_ns", "cudaMalloc cost (16 MiB, idle device)", "ns", mallocNs, allocMethod + ": cudaMalloc");
    figure("cuda_free_ns", "cudaFree cost (16 MiB, idle device)", "ns", freeNs, allocMethod + ": cudaFree");
    figure("cuda_malloc_free_ns", "cudaMalloc/cudaFree cost (mean of the two, 16 MiB, idle device)", "ns", both,
           allocMethod
               + ": the mean of a cudaMalloc and a cudaFree (not a profile field: malloc_api_ns comes from "
                 "runs, runnerMallocCost)");
    runnerMallocCost();
}

void Calibrator::graphs()
{
    // A chain of `nodes` empty kernels, or of spin kernels of `spinNs`.
    auto build = [&](int nodes, uint64_t spinNs = 0) {
        cudaGraph_t g = nullptr;
        check(cudaStreamBeginCapture(m_s, cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture");
        for (int i = 0; i < nodes; ++i) {
            if (spinNs > 0)
                launchSpin(m_s, spinNs);
            else
                launchEmpty(m_s);
        }
        check(cudaStreamEndCapture(m_s, &g), "cudaStreamEndCapture");
        cudaGraphExec_t exec = nullptr;
        check(cudaGraphInstantiate(&exec, g, 0), "cudaGraphInstantiate");
        check(cudaGraphUpload(exec, m_s), "cudaGraphUpload");
        check(cudaGraphDestroy(g), "cudaGraphDestroy");
        sync();
        return exec;
    };
    constexpr int kBig = 1000;
    cudaGraphExec_t one = build(1);
    cudaGraphExec_t big = build(kBig);
    const int launches = m_opt.quick ? 20 : 400;
    auto apiCost = [&](cudaGraphExec_t g, int count) {
        int64_t sum = 0;
        for (int i = 0; i < count; ++i) {
            sync();
            const int64_t t0 = nowNs();
            check(cudaGraphLaunch(g, m_s), "cudaGraphLaunch");
            sum += nowNs() - t0;
        }
        sync();
        return double(sum) / count;
    };
    measured(
        "graph_launch_api_1_node_ns", "graph launch cost, 1 node", "ns", [&] { return apiCost(one, launches); },
        "host steady clock around each of " + std::to_string(launches)
            + " cudaGraphLaunch calls of an uploaded graph of one empty kernel into an idle stream");
    measured(
        "graph_launch_api_1000_nodes_ns", "graph launch cost, 1000 nodes", "ns",
        [&] { return apiCost(big, launches / 5); },
        "as graph_launch_api_1_node_ns, for a graph of 1000 empty kernels in a chain (stream capture)");
    // GPU time per node: the graph queued behind a 3 ms kernel, so that the launch call's own cost is hidden.
    auto behindBlocker = [&](cudaGraphExec_t g) {
        return double(untimed([&] {
            launchSpin(m_s, 3'000'000);
            check(cudaGraphLaunch(g, m_s), "cudaGraphLaunch");
        }));
    };
    measured(
        "graph_node_spacing_ns", "graph node spacing (GPU)", "ns",
        [&] { return (behindBlocker(big) - behindBlocker(one)) / (kBig - 1); },
        "host clock from device sync to device sync of a 3 ms kernel followed by the 1000-node graph, minus the "
        "same with the 1-node graph, divided by 999: start-to-start spacing of empty kernel nodes on the GPU");
    // The same with 1 µs spin kernels: what a spin kernel costs beyond its spin and an empty node.
    cudaGraphExec_t oneSpin = build(1, 1000);
    cudaGraphExec_t bigSpin = build(kBig, 1000);
    measured(
        "graph_spin_node_spacing_ns", "graph node spacing of 1 us spins (GPU)", "ns",
        [&] { return (behindBlocker(bigSpin) - behindBlocker(oneSpin)) / (kBig - 1); },
        "as graph_node_spacing_ns, for graphs of 1000 and of 1 spin kernels of 1 us <<<1, 32>>>");
    for (cudaGraphExec_t g : {one, big, oneSpin, bigSpin})
        check(cudaGraphExecDestroy(g), "cudaGraphExecDestroy");
}

void Calibrator::gpuSpacing()
{
    // Queued behind a kernel that runs longer than the launches take to issue, empty kernels run back to back as
    // fast as the GPU takes them.
    const int n = m_opt.quick ? 100 : 400;
    auto run = [&](int kernels) {
        return double(untimed([&] {
            launchSpin(m_s, 4'000'000);
            for (int i = 0; i < kernels; ++i)
                launchEmpty(m_s);
        }));
    };
    measured(
        "kernel_spacing_ns", "empty kernel spacing in one stream (GPU)", "ns", [&] { return (run(n) - run(0)) / n; },
        "host clock from device sync to device sync of a 4 ms kernel followed by " + std::to_string(n)
            + " empty kernels in its stream, minus the same without them, divided by their number: "
              "start-to-start spacing of empty kernels on the GPU");

    // Tiny copies the same way: their spacing is the fixed cost of a copy plus the gap between stream ops.
    void* dev = nullptr;
    void* host = nullptr;
    check(cudaMalloc(&dev, 4096), "cudaMalloc");
    check(cudaMallocHost(&host, 4096), "cudaMallocHost");
    const int copies = m_opt.quick ? 50 : 200;
    auto runCopies = [&](int count) {
        return double(untimed([&] {
            launchSpin(m_s, 3'000'000);
            for (int i = 0; i < count; ++i)
                check(cudaMemcpyAsync(dev, host, 4, cudaMemcpyHostToDevice, m_s), "cudaMemcpyAsync");
        }));
    };
    measured(
        "copy_spacing_ns", "4-byte H2D copy spacing in one stream (GPU)", "ns",
        [&] { return (runCopies(copies) - runCopies(0)) / copies; },
        "as kernel_spacing_ns with " + std::to_string(copies)
            + " cudaMemcpyAsync of 4 bytes pinned host to device behind a 3 ms kernel");
    check(cudaFree(dev), "cudaFree");
    check(cudaFreeHost(host), "cudaFreeHost");
}

void Calibrator::latencies()
{
    const int trials = m_opt.quick ? 20 : 200;
    measured(
        "launch_latency_ns", "kernel start latency (launch returns -> kernel runs)", "ns",
        [&] {
            std::vector<double> v;
            for (int i = 0; i < trials; ++i) {
                sync();
                const uint32_t value = ++m_flagValue;
                check(kernels::launchFlagKernel(m_flag, value, 0, m_s), "cudaLaunchKernel (flag)");
                const int64_t t0 = nowNs();
                v.push_back(double(waitFlag(value) - t0));
            }
            sync();
            return median(v);
        },
        "median of " + std::to_string(trials)
            + " launches into an idle stream: from cudaLaunchKernel returning until "
              "the host sees the kernel's store to mapped pinned memory (one PCIe write included)");

    const int funcs = 10;
    std::vector<double> spacingRepeats;
    measured(
        "host_func_after_kernel_ns", "host function start after its kernel ends", "ns",
        [&] {
            std::vector<double> first;
            std::vector<double> later;
            std::vector<HostFuncStamp> stamps(static_cast<size_t>(funcs));
            for (int i = 0; i < trials; ++i) {
                sync();
                std::fill(stamps.begin(), stamps.end(), HostFuncStamp{});
                const uint32_t value = ++m_flagValue;
                check(kernels::launchFlagKernel(m_flag, value, 20'000, m_s), "cudaLaunchKernel (flag)");
                for (auto& s : stamps)
                    check(cudaLaunchHostFunc(m_s, stampHostFunc, &s), "cudaLaunchHostFunc");
                const int64_t kernelEnd = waitFlag(value);
                sync();
                first.push_back(double(stamps[0].start - kernelEnd));
                for (size_t f = 1; f < stamps.size(); ++f)
                    later.push_back(double(stamps[f].start - stamps[f - 1].end));
            }
            spacingRepeats.push_back(median(later));
            return median(first);
        },
        "median of " + std::to_string(trials) + " trials: a kernel stores to mapped pinned memory as it ends, "
            + std::to_string(funcs)
            + " host functions follow it in its stream; from the host seeing the store until the "
              "first host function starts (host steady clock inside it)");
    spacingRepeats.erase(spacingRepeats.begin());
    figure("host_func_spacing_ns", "host function spacing (end -> start of the next)", "ns", spacingRepeats,
           "the same trials: from the end of one host function until the next one queued in the same stream starts "
           "(median of the "
               + std::to_string(funcs - 1) + " spacings per trial)");

    // The driver's host-function thread after it sat idle: each trial sleeps the host `idle`, then a 20 µs kernel and
    // one host function (on the H200 machines the first host function of a lesson iteration started 130 µs after
    // its kernel, where these back-to-back trials give 33 µs).
    for (const int idleUs : kHostFuncIdleUs) {
        measured(
            "host_func_after_idle_" + std::to_string(idleUs) + "us_ns",
            "host function start after its kernel ends, driver thread idle " + std::to_string(idleUs) + " us", "ns",
            [&] {
                std::vector<double> first;
                for (int i = 0; i < 10; ++i) {
                    sync();
                    std::this_thread::sleep_for(std::chrono::microseconds(idleUs));
                    HostFuncStamp stamp{};
                    const uint32_t value = ++m_flagValue;
                    check(kernels::launchFlagKernel(m_flag, value, 20'000, m_s), "cudaLaunchKernel (flag)");
                    check(cudaLaunchHostFunc(m_s, stampHostFunc, &stamp), "cudaLaunchHostFunc");
                    const int64_t kernelEnd = waitFlag(value);
                    sync();
                    first.push_back(double(stamp.start - kernelEnd));
                }
                return median(first);
            },
            "as host_func_after_kernel_ns with one host function, 10 trials, each after the host slept "
                + std::to_string(idleUs) + " us with the device idle (the driver's thread had nothing to run)");
    }

    measured(
        "event_sync_wake_ns", "sync wake-up (work ends -> cudaStreamSynchronize returns)", "ns",
        [&] {
            std::vector<double> v;
            for (int i = 0; i < trials / 2; ++i) {
                sync();
                const uint32_t value = ++m_flagValue;
                std::atomic<int64_t> seen{0};
                std::atomic<bool> ready{false};
                std::thread poller([&] {
                    ready = true;
                    seen = waitFlag(value);
                });
                while (!ready) {}
                check(kernels::launchFlagKernel(m_flag, value, 200'000, m_s), "cudaLaunchKernel (flag)");
                check(cudaStreamSynchronize(m_s), "cudaStreamSynchronize");
                const int64_t returned = nowNs();
                poller.join();
                v.push_back(double(returned - seen.load()));
            }
            return median(v);
        },
        "median of " + std::to_string(trials / 2)
            + " trials: a 200 us kernel stores to mapped pinned memory as it "
              "ends while the host waits in cudaStreamSynchronize; from another host thread seeing the store until the "
              "call "
              "returns");
}

void Calibrator::copies(DeviceProfile& p)
{
    const size_t bytes = m_opt.quick ? (16u << 20) : (64u << 20);
    const size_t big = bytes * 4;
    const int count = m_opt.quick ? 4 : 8;
    void* dev = nullptr;
    void* dev2 = nullptr;
    void* pinned = nullptr;
    void* pinned2 = nullptr;
    check(cudaMalloc(&dev, big), "cudaMalloc");
    check(cudaMalloc(&dev2, big), "cudaMalloc");
    check(cudaMallocHost(&pinned, bytes), "cudaMallocHost");
    check(cudaMallocHost(&pinned2, bytes), "cudaMallocHost");
    std::memset(pinned, 1, bytes);
    std::memset(pinned2, 2, bytes);

    // Time per copy of `count` copies back to back in one stream, device sync to device sync.
    auto perCopy = [&](void* dst, const void* src, size_t n, cudaMemcpyKind kind) {
        return double(untimed([&] {
                   for (int i = 0; i < count; ++i)
                       check(cudaMemcpyAsync(dst, src, n, kind, m_s), "cudaMemcpyAsync");
               }))
            / count;
    };
    const std::string size = std::to_string(bytes >> 20) + " MiB";
    const std::string how = "host clock from device sync to device sync of " + std::to_string(count)
        + " cudaMemcpyAsync of " + size + " back to back in one stream, per copy";
    measured(
        "h2d_pinned_copy_ns", "H2D pinned " + size + " copy", "ns",
        [&] { return perCopy(dev, pinned, bytes, cudaMemcpyHostToDevice); }, how + ", pinned host to device");
    measured(
        "d2h_pinned_copy_ns", "D2H pinned " + size + " copy", "ns",
        [&] { return perCopy(pinned, dev, bytes, cudaMemcpyDeviceToHost); }, how + ", device to pinned host");
    measured(
        "d2d_copy_ns", "D2D " + std::to_string(big >> 20) + " MiB copy", "ns",
        [&] { return perCopy(dev2, dev, big, cudaMemcpyDeviceToDevice); },
        "as h2d_pinned_copy_ns with " + std::to_string(big >> 20) + " MiB device to device");
    measured(
        "memset_ns", "memset " + std::to_string(big >> 20) + " MiB", "ns",
        [&] {
            return double(untimed([&] {
                       for (int i = 0; i < count; ++i)
                           check(cudaMemsetAsync(dev, 0, big, m_s), "cudaMemsetAsync");
                   }))
                / count;
        },
        "host clock from device sync to device sync of " + std::to_string(count) + " cudaMemsetAsync of "
            + std::to_string(big >> 20) + " MiB of device memory in one stream, per memset");

    // Small memsets queued behind a 4 ms kernel, so that the host's cost of issuing them is hidden: the GPU's time
    // per memset (the held-out memsets-500-small: 4 KiB memsets ran 1.53 us apart on an H200).
    const int smallMemsets = m_opt.quick ? 200 : 1000;
    auto behindSpin = [&](bool withMemsets) {
        return double(untimed([&] {
            launchSpin(m_s, 4'000'000);
            if (withMemsets)
                for (int i = 0; i < smallMemsets; ++i)
                    check(cudaMemsetAsync(dev, 0, 4096, m_s), "cudaMemsetAsync");
        }));
    };
    measured(
        "small_memset_ns", "memset 4 KiB, queued", "ns",
        [&] { return (behindSpin(true) - behindSpin(false)) / smallMemsets; },
        "host clock from device sync to device sync of a 4 ms spin kernel and " + std::to_string(smallMemsets)
            + " cudaMemsetAsync of 4 KiB queued behind it in one stream, less the kernel alone, per memset");

    // Both directions at once, one stream each: when each direction's stream is done.
    std::vector<double> downRepeats;
    measured(
        "h2d_duplex_copy_ns", "H2D pinned " + size + " copy while D2H runs", "ns",
        [&] {
            check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
            const int64_t t0 = nowNs();
            for (int i = 0; i < count; ++i) {
                check(cudaMemcpyAsync(dev, pinned, bytes, cudaMemcpyHostToDevice, m_s), "cudaMemcpyAsync");
                check(cudaMemcpyAsync(pinned2, dev2, bytes, cudaMemcpyDeviceToHost, m_s2), "cudaMemcpyAsync");
            }
            int64_t up = 0;
            int64_t down = 0;
            while (up == 0 || down == 0) {
                if (up == 0) {
                    const cudaError_t e = cudaStreamQuery(m_s);
                    if (e == cudaSuccess)
                        up = nowNs();
                    else if (e != cudaErrorNotReady)
                        check(e, "cudaStreamQuery");
                }
                if (down == 0) {
                    const cudaError_t e = cudaStreamQuery(m_s2);
                    if (e == cudaSuccess)
                        down = nowNs();
                    else if (e != cudaErrorNotReady)
                        check(e, "cudaStreamQuery");
                }
            }
            downRepeats.push_back(double(down - t0) / count);
            return double(up - t0) / count;
        },
        "host clock from device sync until cudaStreamQuery reports done, " + std::to_string(count) + " H2D copies of "
            + size + " pinned in one stream while " + std::to_string(count) + " D2H copies run in another, per copy");
    downRepeats.erase(downRepeats.begin());
    figure("d2h_duplex_copy_ns", "D2H pinned " + size + " copy while H2D runs", "ns", downRepeats,
           "the same runs, the D2H stream");

    if (m_deviceCount > 1) {
        const int peer = m_opt.device == 0 ? 1 : 0;
        int can = 0;
        check(cudaDeviceCanAccessPeer(&can, m_opt.device, peer), "cudaDeviceCanAccessPeer");
        void* peerBuf = nullptr;
        check(cudaSetDevice(peer), "cudaSetDevice");
        check(cudaMalloc(&peerBuf, bytes), "cudaMalloc (peer)");
        check(cudaSetDevice(m_opt.device), "cudaSetDevice");
        if (can) {
            const cudaError_t e = cudaDeviceEnablePeerAccess(peer, 0);
            if (e != cudaErrorPeerAccessAlreadyEnabled)
                check(e, "cudaDeviceEnablePeerAccess");
        }
        measured(
            "p2p_copy_ns", "peer copy " + size + " to device " + std::to_string(peer), "ns",
            [&] {
                return double(untimed([&] {
                           for (int i = 0; i < count; ++i)
                               check(cudaMemcpyPeerAsync(peerBuf, peer, dev, m_opt.device, bytes, m_s),
                                     "cudaMemcpyPeerAsync");
                       }))
                    / count;
            },
            "host clock from device sync to device sync of " + std::to_string(count) + " cudaMemcpyPeerAsync of " + size
                + " to device " + std::to_string(peer)
                + (can ? " (peer access enabled)" : " (no peer access: staged)"));
        check(cudaFree(peerBuf), "cudaFree");
    } else {
        m_cal.notes.push_back("p2p_gbps not measured (one GPU): the profile keeps "
                              + formatValue(p.p2pBps / 1e9, "GB/s"));
    }
    check(cudaFree(dev), "cudaFree");
    check(cudaFree(dev2), "cudaFree");
    check(cudaFreeHost(pinned), "cudaFreeHost");
    check(cudaFreeHost(pinned2), "cudaFreeHost");
}

} // namespace streamscope::calibrate
