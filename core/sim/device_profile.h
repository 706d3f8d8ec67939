// A device profile: the numbers the simulator needs to stand in for one GPU model. Shipped as JSON under
// resources/profiles/ (each file names its sources); loadable from any path. `streamscope-cli calibrate` measures
// one on the user's GPU and keeps, in its "calibration" object, how: the machine and every figure's repeats.
#pragma once

#include "result.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace streamscope {

// One measured figure: the value of each repeat, their median (what the profile field gets) and spread.
struct CalibrationFigure {
    std::string key;  // the profile field it sets ("launch_api_ns"), or a figure with no field of its own
    std::string unit; // "ns", "GB/s", "TFLOP/s", "count"
    // The figure: the median of its repeats, or, where `trimmedMean` is set, their mean less the highest and lowest
    // tenth (the repeats are fresh processes whose figures fall in groups, where a median of a few jumps between
    // them). Its JSON key says which: "median" or "trimmed_mean".
    double value = 0;
    double spread = 0;           // largest minus smallest repeat
    std::vector<double> repeats; // one value per repeat, in the order measured
    std::string method;          // what was timed, in a sentence
    bool trimmedMean = false;
};

// Provenance of a measured profile (the "calibration" object of its JSON).
struct DeviceCalibration {
    std::string tool;        // "streamscope-cli calibrate 0.1.0"
    std::string command;     // the command line
    std::string gpu;         // cudaDeviceProp::name
    int device = 0;          // CUDA device index it ran on
    std::string driver;      // NVIDIA driver release, "580.65.06" (empty where unknown)
    std::string cudaDriver;  // CUDA version the driver supports (cudaDriverGetVersion), "13.0"
    std::string cudaRuntime; // CUDA runtime the tool was built with (cudaRuntimeGetVersion), "13.0"
    std::string date;        // ISO 8601, UTC
    std::string host;
    std::vector<CalibrationFigure> figures;
    std::vector<std::string> notes;

    bool empty() const { return tool.empty() && figures.empty(); }
    const CalibrationFigure* figure(std::string_view key) const;
};

struct DeviceProfile {
    std::string id;      // "h200"
    std::string name;    // "NVIDIA H200"
    std::string sources; // where the figures come from

    // Compute resources
    int smCount = 132;
    int maxThreadsPerSm = 2048;
    int maxBlocksPerSm = 32;
    int64_t sharedBytesPerSm = 228 * 1024;
    int copyEngines = 3;    // async copy engines; >= 2: H2D and D2H run in parallel
    int hardwareQueues = 8; // default CUDA_DEVICE_MAX_CONNECTIONS
    // How streams reach the device's work queues. "connections" (Kepler and later): each stream is bound to one of
    // the hardware queues (CUDA_DEVICE_MAX_CONNECTIONS), all its ops in it. "engines" (Fermi and older): one compute
    // queue (kernels, memsets, host functions, event markers) and one queue per copy engine, each shared by every
    // stream in issue order.
    std::string workQueues = "connections";
    // Fermi's concurrent kernels: kernels issued back to back on a device (no other op issued between them) signal
    // their completion to other work when the last of them has ended.
    bool batchedKernelCompletion = false;
    int priorityLowest = 0; // cudaDeviceGetStreamPriorityRange
    int priorityHighest = -5;

    // Throughput (for problem-size kernels and copies), bytes/s and FLOP/s
    double h2dPinnedBps = 55e9;
    double d2hPinnedBps = 55e9;
    double h2dPageableBps = 7.5e9;
    double d2hPageableBps = 7.5e9;
    double d2dBps = 2.0e12;     // device-to-device copy (read + write counted once)
    double p2pBps = 300e9;      // peer copy between two devices
    double dramBps = 4.0e12;    // memory-bound kernels (triad, transpose, reduce, memset)
    double fp32Flops = 60e12;   // compute-bound kernels (fma)
    double matmulFlops = 20e12; // the library's tiled (non tensor-core) matmul

    // Fixed costs, ns
    int64_t launchApiNs = 2500;        // host cost of cudaLaunchKernel
    int64_t copyApiNs = 3000;          // host cost of cudaMemcpyAsync
    int64_t eventRecordApiNs = 850;    // host cost of cudaEventRecord
    int64_t streamWaitApiNs = 700;     // host cost of cudaStreamWaitEvent
    int64_t hostFuncApiNs = 2000;      // host cost of cudaLaunchHostFunc
    int64_t syncApiNs = 1000;          // host cost of a sync call that does not wait
    int64_t mallocApiNs = 10000;       // host cost of cudaMalloc / cudaFree after their implicit sync
    int64_t graphLaunchApiNs = 2500;   // host cost of cudaGraphLaunch
    int64_t launchLatencyNs = 4000;    // from the end of a launch call until the GPU can start the op
    int64_t kernelOverheadNs = 1200;   // GPU-side gap between dependent operations in a stream
    int64_t graphNodeOverheadNs = 600; // GPU-side gap between nodes of a graph
    int64_t copyLatencyNs = 2000;      // fixed cost of a copy on a copy engine
    int64_t hostFuncLatencyNs = 5000;  // from the stream reaching a host function until it runs on the driver thread
    int64_t minKernelNs = 1500;        // the shortest a kernel takes (an empty kernel)
    int64_t eventSyncWakeNs = 2000;    // from the awaited work finishing until the waiting host thread returns

    // Newer figures. When a profile leaves one out it gets the value that gives the behaviour of a profile without
    // it (in brackets), so old profiles keep simulating as they did.
    int64_t launchApiRoundRobinNs = 2500; // host cost of cudaLaunchKernel when each launch goes to another
                                          // stream than the one before (round-robin) [launch_api_ns]
    int64_t launchApiConcurrentNs = 2500; // host cost of cudaLaunchKernel while 4 host threads launch at once, each
                                          // into its own stream [launch_api_ns]
    int64_t graphLaunchApiPerNodeNs = 0;  // host cost of cudaGraphLaunch per node of the graph, on top of
                                          // graph_launch_api_ns [0]
    int64_t hostFuncSpacingNs = 6200;     // from the end of a host function until the next one queued in the same
                                          // stream starts [kernel_overhead_ns + host_func_latency_ns]
    double h2dPinnedDuplexBps = 55e9;     // per-direction bandwidth of pinned copies while H2D and D2H run at the
    double d2hPinnedDuplexBps = 55e9;     // same time on two engines [h2d_pinned_gbps, d2h_pinned_gbps]
    double memsetBps = 4.0e12;            // cudaMemsetAsync of device memory [dram_gbps]
    double computeSaturation = 1.0;       // the fraction of the resident blocks at which a compute-bound kernel
                                          // (fma, matmul) reaches the device's full rate; fewer blocks run
                                          // proportionally slower [1: in proportion to the blocks, as memory-bound
                                          // kernels do]
    double memorySaturation = 1.0;        // the fraction of the resident blocks at which a streaming memory-bound
                                          // kernel (triad, reduce) reaches the device memory's bandwidth; fewer
                                          // blocks run proportionally slower [1: in proportion to the blocks]

    int64_t hostFuncDozeNs = 0;        // the driver's host-function thread, idle longer than this, wakes up
    int64_t hostFuncDeepLatencyNs = 0; // host_func_deep_latency_ns after the stream reaches a host function [0: off]
    int64_t l2Bytes = 0;               // the L2 cache (cudaDeviceProp::l2CacheSize) [0: no L2 rule]
    double l2ColdFactor = 1.0; // how much longer a kernel whose buffers fit in the L2 runs when other work evicted
                               // them since its last run (the simulator's L2 rule) [1: no L2 rule]
    int64_t graphMinKernelNs = 1500; // the shortest a kernel node of a graph takes: the spacing of a graph's empty
                                     // kernel nodes where it is below min_kernel_ns [min_kernel_ns]
    int64_t spinOverheadNs = 0;      // what a spin kernel takes beyond its duration and an empty kernel [0]
    int64_t memsetApiNs = 3000;      // host cost of cudaMemsetAsync [copy_api_ns]
    double reduceBlockNs = 0;        // a reduce kernel's blocks each end with a fence and an atomic on one counter,
                                     // one after another: a wave of B resident blocks lasts at least B x this [0]
    // The driver thread's wake-up for a host function against how long the thread sat idle: [idle_ns, wake_ns]
    // points, idle increasing, between which the simulator interpolates (clamped at both ends). Where set it replaces
    // host_func_latency_ns, host_func_doze_ns and host_func_deep_latency_ns [empty: those three].
    std::vector<std::pair<int64_t, int64_t>> hostFuncWakeCurve;
    // With the curve: the wake-up for an iteration's first host function, after the device sync and the Runner's
    // work between iterations [0: the curve's longest idle].
    int64_t hostFuncFirstWakeNs = 0;
    // From the end of a host function until the next op of its stream can start: the GPU waits for the driver
    // thread to release the stream [0: kernel_overhead_ns].
    int64_t hostFuncReleaseNs = 0;
    int64_t minMemsetNs = 0; // the shortest a memset takes, queued in a stream [0: min_kernel_ns]

    // Links between the GPUs of a job, for the simulator's collectives (simulator_collectives.cpp): bandwidth per
    // direction of one GPU's link and the latency of one step of a ring or tree. NOMINAL figures, not measured:
    // NVLink 4 (H100/H200) 900 GB/s per GPU both ways, 450 one way; PCIe 5.0 x16 about 63 GB/s one way; InfiniBand
    // NDR 400 Gb/s = 50 GB/s per port one way; the latencies are the order of one NCCL step over such a link
    // (docs/PROFILES.md "Links"). A profile that measures them overrides them.
    double nvlinkBps = 450e9;
    int64_t nvlinkLatencyNs = 2000;
    double pcieBps = 63e9;
    int64_t pcieLatencyNs = 3000;
    double ibBps = 50e9;
    int64_t ibLatencyNs = 5000;

    DeviceCalibration calibration; // empty unless measured by streamscope-cli calibrate
};

// Loads a profile from a JSON file; errors name the file and the field.
Result<DeviceProfile> loadDeviceProfile(const std::string& path);
// Parses profile JSON text (`file` is used in error messages only).
Result<DeviceProfile> parseDeviceProfile(const std::string& text, const std::string& file);
// The profiles shipped in resources/profiles/ (see resources.h for where they are found).
std::vector<std::string> builtinProfileIds();
// The profile as JSON text that parseDeviceProfile reads back to the same profile (calibration included).
// The curve's value at x: linear between its points, its first and last value outside them (0 where empty).
int64_t interpolateCurve(const std::vector<std::pair<int64_t, int64_t>>& curve, int64_t x);

std::string deviceProfileToJson(const DeviceProfile& profile);
// Finds a shipped profile by id, or loads `idOrPath` as a file when it names one.
Result<DeviceProfile> findDeviceProfile(const std::string& idOrPath);

} // namespace streamscope
