// streamscope-cli calibrate (calibrate.h): calibrateDevice checks for a usable GPU and runs a Calibrator, whose
// run() sets up the streams, the mapped flag and the kernels, runs the microbenchmarks of calibrate_benchmarks.cpp in
// their order (the CUPTI pass last) and returns the profile with its provenance: tool, command, driver and CUDA
// versions, date, host and a one-line summary in `sources`. deviceProperties records what cudaDeviceProp says;
// deriveFields turns the measured figures into the profile's fields as the simulator uses them, each a figure of
// its own with the formula it came from.
#include "calibrate.h"

#include "calibrate_kernels.cuh"
#include "calibrator.h"
#include "cuda_backend.h"
#include "kernel_library.cuh"

#include <cuda_runtime.h>

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace streamscope::calibrate {

namespace {

std::string versionText(int v)
{
    return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
}

std::string driverRelease()
{
    // "NVRM version: NVIDIA UNIX [Open] Kernel Module [for x86_64]  580.159.04  Release Build ..." (Linux only): the
    // first word after "Module" that looks like a release number.
    std::ifstream in("/proc/driver/nvidia/version");
    std::string line;
    if (!std::getline(in, line))
        return {};
    const auto pos = line.find("Module");
    if (pos == std::string::npos)
        return {};
    std::istringstream words(line.substr(pos + 6));
    for (std::string w; words >> w;)
        if (std::isdigit(static_cast<unsigned char>(w[0])) && w.find('.') != std::string::npos)
            return w;
    return {};
}

std::string utcNow()
{
    const std::time_t t = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

std::string hostName()
{
    char host[256] = {};
    if (gethostname(host, sizeof host - 1) != 0)
        return {};
    return host;
}

} // namespace

void Calibrator::deviceProperties(DeviceProfile& p)
{
    cudaDeviceProp prop{};
    check(cudaGetDeviceProperties(&prop, m_opt.device), "cudaGetDeviceProperties");
    m_sms = prop.multiProcessorCount;
    p.name = prop.name;
    p.smCount = prop.multiProcessorCount;
    p.maxThreadsPerSm = prop.maxThreadsPerMultiProcessor;
    p.maxBlocksPerSm = prop.maxBlocksPerMultiProcessor;
    p.sharedBytesPerSm = int64_t(prop.sharedMemPerMultiprocessor);
    p.copyEngines = std::max(1, prop.asyncEngineCount);
    p.l2Bytes = prop.l2CacheSize;
    int lo = 0;
    int hi = 0;
    check(cudaDeviceGetStreamPriorityRange(&lo, &hi), "cudaDeviceGetStreamPriorityRange");
    p.priorityLowest = lo;
    p.priorityHighest = hi;
    // CUDA_DEVICE_MAX_CONNECTIONS defaults to 8; a set value is what this process's streams got.
    p.hardwareQueues = 8;
    if (const char* c = std::getenv("CUDA_DEVICE_MAX_CONNECTIONS"); c && std::atoi(c) > 0) {
        p.hardwareQueues = std::atoi(c);
        m_cal.notes.push_back("hardware_queues is CUDA_DEVICE_MAX_CONNECTIONS=" + std::string(c)
                              + " as set for the calibration, not the CUDA default of 8");
    }
    m_cal.gpu = p.name;
    if (m_opt.progress)
        m_opt.progress("calibrating device " + std::to_string(m_opt.device) + ": " + p.name + " (driver "
                       + (m_cal.driver.empty() ? "unknown" : m_cal.driver) + ", CUDA " + m_cal.cudaDriver + " driver, "
                       + m_cal.cudaRuntime + " runtime), " + std::to_string(m_repeats) + " repeats per figure");
    const std::string prop_ = "cudaDeviceProp";
    figure("sm_count", "SMs", "count", {double(p.smCount)}, prop_ + "::multiProcessorCount");
    figure("max_threads_per_sm", "threads per SM", "count", {double(p.maxThreadsPerSm)},
           prop_ + "::maxThreadsPerMultiProcessor");
    figure("max_blocks_per_sm", "blocks per SM", "count", {double(p.maxBlocksPerSm)},
           prop_ + "::maxBlocksPerMultiProcessor");
    figure("shared_bytes_per_sm", "shared memory per SM (bytes)", "count", {double(p.sharedBytesPerSm)},
           prop_ + "::sharedMemPerMultiprocessor");
    figure("copy_engines", "async copy engines", "count", {double(p.copyEngines)}, prop_ + "::asyncEngineCount");
    figure("l2_bytes", "L2 cache (bytes)", "count", {double(p.l2Bytes)}, prop_ + "::l2CacheSize");
    figure("priority_highest", "highest stream priority", "count", {double(hi)}, "cudaDeviceGetStreamPriorityRange");
}

void Calibrator::deriveFields(DeviceProfile& p)
{
    auto med = [&](const std::string& key) { return m_cal.figure(key)->value; };
    auto setNs = [](int64_t& field, double v) { field = std::max<int64_t>(0, int64_t(std::llround(v))); };
    if (m_opt.progress)
        m_opt.progress("profile fields (as the simulator uses them):");

    // An empty kernel's spacing in its stream is min_kernel_ns (the kernel) plus kernel_overhead_ns (the gap
    // before the next op of the stream).
    const double spacing = med("kernel_spacing_ns");
    double minKernel = spacing / 2;
    if (m_cal.figure("cupti_empty_kernel_ns")) {
        minKernel = std::min(spacing, med("cupti_empty_kernel_ns"));
        figure("min_kernel_ns", "  min_kernel_ns", "ns", derived("cupti_empty_kernel_ns", [](double x) { return x; }),
               "= cupti_empty_kernel_ns: how long an empty kernel lasts in a trace");
    } else {
        m_cal.notes.push_back("CUPTI not usable (" + m_cuptiNote
                              + "): min_kernel_ns and kernel_overhead_ns are each half of kernel_spacing_ns, "
                                "an assumption, not a measurement");
        figure("min_kernel_ns", "  min_kernel_ns", "ns", derived("kernel_spacing_ns", [](double x) { return x / 2; }),
               "= kernel_spacing_ns / 2 (CUPTI not usable: assumed split)");
    }
    setNs(p.minKernelNs, med("min_kernel_ns"));
    figure("kernel_overhead_ns", "  kernel_overhead_ns", "ns",
           derived("kernel_spacing_ns", [&](double x) { return std::max(0.0, x - minKernel); }),
           "= kernel_spacing_ns - min_kernel_ns: the GPU-side gap before the next op of a stream");
    setNs(p.kernelOverheadNs, med("kernel_overhead_ns"));
    const double overhead = double(p.kernelOverheadNs);

    setNs(p.launchApiNs, med("launch_api_ns"));
    setNs(p.launchApiRoundRobinNs, med("launch_api_round_robin_ns"));
    setNs(p.launchApiConcurrentNs, med("launch_api_concurrent_ns"));
    setNs(p.eventRecordApiNs, med("event_record_api_ns"));
    setNs(p.streamWaitApiNs, med("stream_wait_api_ns"));
    setNs(p.syncApiNs, med("sync_api_ns"));
    setNs(p.copyApiNs, med("copy_api_ns"));
    setNs(p.memsetApiNs, med("memset_api_ns"));
    setNs(p.hostFuncApiNs, med("host_func_api_ns"));
    setNs(p.mallocApiNs, med("malloc_api_ns"));
    setNs(p.launchLatencyNs, med("launch_latency_ns"));
    setNs(p.eventSyncWakeNs, med("event_sync_wake_ns"));
    setNs(p.hostFuncSpacingNs, med("host_func_spacing_ns"));

    const double perNodeMedian = (med("graph_launch_api_1000_nodes_ns") - med("graph_launch_api_1_node_ns")) / 999.0;
    {
        const auto& one = repeatsOf("graph_launch_api_1_node_ns");
        const auto& big = repeatsOf("graph_launch_api_1000_nodes_ns");
        std::vector<double> perNode;
        std::vector<double> fixed;
        for (size_t i = 0; i < one.size() && i < big.size(); ++i) {
            perNode.push_back(std::max(0.0, (big[i] - one[i]) / 999.0));
            fixed.push_back(std::max(0.0, one[i] - std::max(0.0, perNodeMedian)));
        }
        figure("graph_launch_api_per_node_ns", "  graph_launch_api_per_node_ns", "ns", perNode,
               "= (graph_launch_api_1000_nodes_ns - graph_launch_api_1_node_ns) / 999");
        figure("graph_launch_api_ns", "  graph_launch_api_ns", "ns", fixed,
               "= graph_launch_api_1_node_ns - graph_launch_api_per_node_ns: the cost of a launch before its nodes");
    }
    setNs(p.graphLaunchApiPerNodeNs, med("graph_launch_api_per_node_ns"));
    setNs(p.graphLaunchApiNs, med("graph_launch_api_ns"));
    figure("graph_node_overhead_ns", "  graph_node_overhead_ns", "ns",
           derived("graph_node_spacing_ns", [&](double x) { return std::max(0.0, x - double(p.minKernelNs)); }),
           "= graph_node_spacing_ns - min_kernel_ns: the GPU-side gap between nodes of a graph");
    setNs(p.graphNodeOverheadNs, med("graph_node_overhead_ns"));
    figure("graph_min_kernel_ns", "  graph_min_kernel_ns", "ns",
           derived("graph_node_spacing_ns", [&](double x) { return std::min(x, double(p.minKernelNs)); }),
           "= min(graph_node_spacing_ns, min_kernel_ns): what an empty kernel node of a graph takes");
    setNs(p.graphMinKernelNs, med("graph_min_kernel_ns"));
    if (m_cal.figure("graph_spin_node_spacing_ns")) {
        const double emptyNode = med("graph_node_spacing_ns");
        figure("spin_overhead_ns", "  spin_overhead_ns", "ns",
               derived("graph_spin_node_spacing_ns", [&](double x) { return std::max(0.0, x - 1000.0 - emptyNode); }),
               "= graph_spin_node_spacing_ns - 1000 - graph_node_spacing_ns: what a spin kernel takes beyond its "
               "spin and an empty kernel");
        setNs(p.spinOverheadNs, med("spin_overhead_ns"));
    }
    figure("copy_latency_ns", "  copy_latency_ns", "ns",
           derived("copy_spacing_ns", [&](double x) { return std::max(0.0, x - overhead); }),
           "= copy_spacing_ns - kernel_overhead_ns: the fixed cost of a copy on its engine");
    setNs(p.copyLatencyNs, med("copy_latency_ns"));
    figure("host_func_latency_ns", "  host_func_latency_ns", "ns",
           derived("host_func_after_kernel_ns", [&](double x) { return std::max(0.0, x - overhead); }),
           "= host_func_after_kernel_ns - kernel_overhead_ns (the simulator puts that gap before every stream op)");
    setNs(p.hostFuncLatencyNs, med("host_func_latency_ns"));
    // After it sat idle long enough the driver's thread wakes up later: host_func_deep_latency_ns from the longest idle
    // trial, host_func_doze_ns the shortest idle whose latency is past half way from host_func_latency_ns to it.
    {
        const int longest = kHostFuncIdleUs[std::size(kHostFuncIdleUs) - 1];
        const std::string deepKey = "host_func_after_idle_" + std::to_string(longest) + "us_ns";
        if (m_cal.figure(deepKey)) {
            figure("host_func_deep_latency_ns", "  host_func_deep_latency_ns", "ns",
                   derived(deepKey, [&](double x) { return std::max(0.0, x - overhead); }),
                   "= " + deepKey + " - kernel_overhead_ns");
            setNs(p.hostFuncDeepLatencyNs, med("host_func_deep_latency_ns"));
            const double half = (double(p.hostFuncLatencyNs) + double(p.hostFuncDeepLatencyNs)) / 2;
            double doze = 0;
            if (double(p.hostFuncDeepLatencyNs) > 1.5 * double(p.hostFuncLatencyNs))
                for (const int idleUs : kHostFuncIdleUs)
                    if (med("host_func_after_idle_" + std::to_string(idleUs) + "us_ns") - overhead >= half) {
                        doze = idleUs * 1000.0;
                        break;
                    }
            figure("host_func_doze_ns", "  host_func_doze_ns", "ns", {doze},
                   "the shortest idle of the host_func_after_idle trials whose latency is at least half way from "
                   "host_func_latency_ns to host_func_deep_latency_ns (0: no such step, the rule is off)");
            p.hostFuncDozeNs = int64_t(doze);
        }
    }
    // The wake-up against the thread's idle time, from the chains, as the simulator counts them: it makes a host
    // function ready kernel_overhead_ns after its kernel's end, so a point is (idle + overhead, wake-up - overhead).
    p.hostFuncWakeCurve.clear();
    std::string curve;
    for (const int k : kHostFuncChainUs) {
        const CalibrationFigure* idle = m_cal.figure("host_func_idle_" + std::to_string(k) + "us_chain_ns");
        const CalibrationFigure* wake = m_cal.figure("host_func_wake_" + std::to_string(k) + "us_chain_ns");
        if (!idle || !wake)
            continue;
        const int64_t x = std::max<int64_t>(0, std::llround(idle->value + overhead));
        const int64_t y = std::max<int64_t>(0, std::llround(wake->value - overhead));
        if (!p.hostFuncWakeCurve.empty() && x <= p.hostFuncWakeCurve.back().first)
            continue; // idle times that do not increase: the longer chain's point is left out
        p.hostFuncWakeCurve.emplace_back(x, y);
        curve += (curve.empty() ? "" : ", ") + formatValue(double(x), "ns") + " -> " + formatValue(double(y), "ns");
    }
    if (m_opt.progress && !curve.empty())
        m_opt.progress("  host_func_wake_curve (idle -> wake-up): " + curve);
    // As the simulator counts them: the first host function ready kernel_overhead_ns after its kernel's end; the
    // release is the whole gap before the stream's next op.
    if (m_cal.figure("host_func_first_wake_chain_ns") && !p.hostFuncWakeCurve.empty()) {
        figure("host_func_first_wake_ns", "  host_func_first_wake_ns", "ns",
               derived("host_func_first_wake_chain_ns", [&](double x) { return std::max(0.0, x - overhead); }),
               "= host_func_first_wake_chain_ns - kernel_overhead_ns", true);
        setNs(p.hostFuncFirstWakeNs, m_cal.figure("host_func_first_wake_ns")->value);
    }
    if (const CalibrationFigure* release = m_cal.figure("host_func_release_ns"))
        p.hostFuncReleaseNs = std::max<int64_t>(1, std::llround(release->value));

    // Bandwidths as the simulator uses them: a copy lasts copy_latency_ns + bytes / bandwidth, and consecutive
    // copies of a stream are kernel_overhead_ns apart.
    const double fixedCopy = double(p.copyLatencyNs) + overhead;
    auto bandwidth = [&](const std::string& key, const std::string& from, double bytes, double fixed,
                         const std::string& method) {
        return figure(key, "  " + key, "GB/s",
                      derived(from, [&](double ns) { return bytes / std::max(1.0, ns - fixed); }), method)
            * 1e9;
    };
    const double bytes = double((m_opt.quick ? 16u : 64u) << 20);
    const std::string copyMethod = ": bytes / (time per copy - copy_latency_ns - kernel_overhead_ns)";
    p.h2dPinnedBps = bandwidth("h2d_pinned_gbps", "h2d_pinned_copy_ns", bytes, fixedCopy, copyMethod);
    p.d2hPinnedBps = bandwidth("d2h_pinned_gbps", "d2h_pinned_copy_ns", bytes, fixedCopy, copyMethod);
    const double pageable = double(pageableBytes(m_opt.quick));
    p.h2dPageableBps = bandwidth("h2d_pageable_gbps", "h2d_pageable_copy_ns", pageable, fixedCopy, copyMethod);
    p.d2hPageableBps = bandwidth("d2h_pageable_gbps", "d2h_pageable_copy_ns", pageable, fixedCopy, copyMethod);
    p.h2dPinnedDuplexBps = bandwidth("h2d_pinned_duplex_gbps", "h2d_duplex_copy_ns", bytes, fixedCopy, copyMethod);
    p.d2hPinnedDuplexBps = bandwidth("d2h_pinned_duplex_gbps", "d2h_duplex_copy_ns", bytes, fixedCopy, copyMethod);
    p.d2dBps = bandwidth("d2d_gbps", "d2d_copy_ns", bytes * 4, fixedCopy, copyMethod);
    if (m_cal.figure("p2p_copy_ns"))
        p.p2pBps = bandwidth("p2p_gbps", "p2p_copy_ns", bytes, fixedCopy, copyMethod);
    // A memset lasts max(min_memset_ns, bytes / memset bandwidth), kernel_overhead_ns after the op before it.
    p.memsetBps =
        bandwidth("memset_gbps", "memset_ns", bytes * 4, overhead, ": bytes / (time per memset - kernel_overhead_ns)");
    if (m_cal.figure("small_memset_ns")) {
        figure("min_memset_ns", "  min_memset_ns", "ns",
               derived("small_memset_ns", [&](double x) { return std::max(1.0, x - overhead); }),
               "= small_memset_ns - kernel_overhead_ns: the shortest a memset takes");
        setNs(p.minMemsetNs, med("min_memset_ns"));
    }
    // Kernels: the simulator's whole-GPU time of each kernel model, and the gap before each in its stream.
    p.dramBps = bandwidth("dram_gbps", "triad_kernel_ns", 12.0 * m_triadN, overhead,
                          ": 12 bytes per element (two reads, one write) / (time per triad - kernel_overhead_ns)");
    const double fmaFlops = 2.0 * double(m_fmaIterations) * m_fmaThreads;
    p.fp32Flops =
        figure("fp32_tflops", "  fp32_tflops", "TFLOP/s",
               derived("fma_kernel_ns", [&](double ns) { return fmaFlops / std::max(1.0, ns - overhead) / 1e3; }),
               "= 2 x iterations x threads / (time per fma kernel - kernel_overhead_ns), the FLOP count the "
               "simulator's fma model uses; the kernel runs four FMA chains, so the hardware did 4 x this")
        * 1e12;
    const double mmFlops = 2.0 * m_matmulN * m_matmulN * m_matmulN;
    p.matmulFlops =
        figure("matmul_tflops", "  matmul_tflops", "TFLOP/s",
               derived("matmul_kernel_ns", [&](double ns) { return mmFlops / std::max(1.0, ns - overhead) / 1e3; }),
               "= 2 n^3 / (time per matmul kernel - kernel_overhead_ns)")
        * 1e12;
    // A compute-bound kernel of few blocks: the 768 x 768 matmul of 264 blocks of 256 threads fills the fraction
    // f of the resident blocks, and ran t where the full device rate gives t_full: its rate saturates at
    // f x t / t_full of the resident blocks (1: in proportion to the blocks).
    const double resident = double(p.smCount) * std::min(p.maxBlocksPerSm, p.maxThreadsPerSm / 256);
    const double fullNs = 2.0 * 768.0 * 768.0 * 768.0 / p.matmulFlops * 1e9;
    p.computeSaturation =
        figure("compute_saturation", "  compute_saturation", "fraction",
               derived("matmul_264_blocks_kernel_ns",
                       [&](double ns) {
                           const double f = 264.0 / std::max(1.0, resident);
                           return std::clamp(f * std::max(1.0, ns - overhead) / fullNs, 0.01, 1.0);
                       }),
               "= f x (time of the 264-block matmul - kernel_overhead_ns) / (2 x 768^3 / matmul rate), "
               "f = 264 / resident blocks of 256 threads: where a compute-bound kernel's rate "
               "stops growing with its blocks");
    // A streaming memory-bound kernel of few blocks: the triad of 2 blocks of 256 threads per SM fills the fraction f
    // of the resident blocks and ran t where the device's bandwidth gives t_full: its rate saturates at f x t /
    // t_full of the resident blocks (1: in proportion to the blocks).
    if (m_cal.figure("triad_few_blocks_kernel_ns") && m_fewTriadBlocks > 0) {
        const double fullTriadNs = 12.0 * m_fewTriadN / p.dramBps * 1e9;
        p.memorySaturation =
            figure("memory_saturation", "  memory_saturation", "fraction",
                   derived("triad_few_blocks_kernel_ns",
                           [&](double ns) {
                               const double f = std::min(1.0, m_fewTriadBlocks / std::max(1.0, resident));
                               return std::clamp(f * std::max(1.0, ns - overhead) / fullTriadNs, f, 1.0);
                           }),
                   "= f x (time of the triad of 2 blocks per SM - kernel_overhead_ns) / (12 bytes x n / dram rate), "
                   "f = its blocks / resident blocks of 256 threads: where a streaming kernel's bandwidth stops "
                   "growing with its blocks");
    }
    // The L2 rule: the same matmul with its buffers evicted against back to back.
    if (m_cal.figure("matmul_264_blocks_cold_kernel_ns")) {
        const double warm = std::max(1.0, med("matmul_264_blocks_kernel_ns") - overhead);
        p.l2ColdFactor = figure("l2_cold_factor", "  l2_cold_factor", "factor",
                                derived("matmul_264_blocks_cold_kernel_ns",
                                        [&](double ns) { return std::clamp((ns - overhead) / warm, 1.0, 100.0); }),
                                "= (time of the 264-block matmul after a memset of twice the L2 - kernel_overhead_ns) "
                                "/ (its time back to back - kernel_overhead_ns): how much longer a kernel whose "
                                "buffers fit in the L2 runs when other work evicted them");
    }
    // The reduce's serialized block ends: a wave of resident blocks takes at least that many times this.
    if (m_cal.figure("reduce_kernel_ns") && m_reduceBlocks > 0)
        p.reduceBlockNs = figure(
            "reduce_block_ns", "  reduce_block_ns", "ns/block",
            derived("reduce_kernel_ns", [&](double ns) { return std::max(0.0, ns - overhead) / m_reduceBlocks; }),
            "= (time per reduce kernel - kernel_overhead_ns) / its blocks: what each block's "
            "__threadfence and atomicAdd on the one counter cost, one block after another");
}

DeviceProfile Calibrator::run()
{
    DeviceProfile p;
    p.id = "calibrated";
    check(cudaGetDeviceCount(&m_deviceCount), "cudaGetDeviceCount");
    if (m_opt.device < 0 || m_opt.device >= m_deviceCount)
        throw CudaFailure{"no CUDA device " + std::to_string(m_opt.device) + " (this machine has "
                          + std::to_string(m_deviceCount) + ")"};
    check(cudaSetDevice(m_opt.device), "cudaSetDevice");
    check(cudaFree(nullptr), "creating the CUDA context");
    m_calls = m_opt.quick ? 200 : 4000;

    m_cal.tool = "streamscope-cli calibrate" + (m_opt.toolVersion.empty() ? "" : " " + m_opt.toolVersion);
    m_cal.command = m_opt.command;
    m_cal.device = m_opt.device;
    m_cal.driver = driverRelease();
    int v = 0;
    if (cudaDriverGetVersion(&v) == cudaSuccess)
        m_cal.cudaDriver = versionText(v);
    if (cudaRuntimeGetVersion(&v) == cudaSuccess)
        m_cal.cudaRuntime = versionText(v);
    m_cal.date = utcNow();
    m_cal.host = hostName();
    deviceProperties(p);

    // Streams: blocking streams like cudaStreamCreate; the round-robin set non-blocking, so that the legacy default
    // stream is not involved.
    check(cudaStreamCreate(&m_s), "cudaStreamCreate");
    check(cudaStreamCreate(&m_s2), "cudaStreamCreate");
    m_rr.resize(32);
    for (auto& s : m_rr)
        check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
    void* flag = nullptr;
    check(cudaHostAlloc(&flag, 64, cudaHostAllocMapped), "cudaHostAlloc (mapped)");
    m_flag = static_cast<volatile uint32_t*>(flag);
    *m_flag = 0;
    for (Kernel k : {Kernel::Empty, Kernel::Spin, Kernel::Triad, Kernel::Fma})
        check(kernels::preload(k, dim3(256, 1, 1)), "loading the kernel library");
    check(kernels::preload(Kernel::Transpose, dim3(32, 8, 1)), "loading the kernel library");
    check(kernels::preload(Kernel::Matmul, dim3(16, 16, 1)), "loading the kernel library");
    check(kernels::launchFlagKernel(m_flag, 0, 0, m_s), "cudaLaunchKernel (flag)");
    sync();

    const size_t firstHostFigure = m_cal.figures.size();
    hostCosts();
    runnerPageableCopies();
    if (m_opt.hostCostsOnly)
        return finish(p, flag);
    hostCostsInFreshProcesses(firstHostFigure, m_cal.figures.size());
    graphs();
    gpuSpacing();
    latencies();
    copies(p);
    kernelThroughput();
    runnerHostFuncWake();
    cuptiSplit(); // last: nothing untimed runs with CUPTI attached
    deriveFields(p);
    return finish(p, flag);
}

DeviceProfile Calibrator::finish(DeviceProfile& p, void* flag)
{
    for (auto s : m_rr)
        (void)cudaStreamDestroy(s);
    (void)cudaStreamDestroy(m_s);
    (void)cudaStreamDestroy(m_s2);
    (void)cudaFreeHost(flag);

    p.sources = "Measured by " + m_cal.tool + " on " + p.name + " (device " + std::to_string(m_opt.device) + ", driver "
        + (m_cal.driver.empty() ? "unknown" : m_cal.driver) + ", CUDA " + m_cal.cudaDriver + " driver / "
        + m_cal.cudaRuntime + " runtime) on " + m_cal.host + ", " + m_cal.date + "; every figure is " + "the median of "
        + std::to_string(m_repeats) + " repeats"
        + (m_opt.hostProcesses > 0 && !m_opt.executable.empty() && !m_opt.hostCostsOnly
               ? ", the host API costs and pageable copies the mean over " + std::to_string(m_opt.hostProcesses)
                   + " fresh processes less their highest and lowest tenth"
               : std::string())
        + " (see \"calibration\").";
    p.calibration = m_cal;
    return p;
}

} // namespace streamscope::calibrate

namespace streamscope {

using calibrate::Calibrator;
using calibrate::Cancelled;
using calibrate::CudaFailure;

Result<DeviceProfile> calibrateDevice(const CalibrationOptions& options)
{
    const CudaProbe probe = probeCuda();
    if (!probe.usable)
        return Result<DeviceProfile>(Error{{}, {}, "no usable GPU: " + probe.reason}, ErrorClass::Runtime);
    try {
        Calibrator c(options);
        return c.run();
    } catch (const CudaFailure& f) {
        return Result<DeviceProfile>(Error{{}, {}, f.message}, ErrorClass::Runtime);
    } catch (const Cancelled&) {
        (void)cudaDeviceSynchronize();
        return Result<DeviceProfile>(Error{{}, {}, "calibration cancelled"}, ErrorClass::Runtime);
    }
}

} // namespace streamscope
