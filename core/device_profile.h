// A device profile: the numbers the simulator needs to stand in for one GPU model. Shipped as JSON under
// resources/profiles/ (each file names its sources); loadable from any path.
#pragma once

#include "result.h"

#include <cstdint>
#include <string>
#include <vector>

namespace streamscope {

struct DeviceProfile {
    std::string id;               // "h200"
    std::string name;             // "NVIDIA H200"
    std::string sources;          // where the figures come from

    // Compute resources
    int smCount = 132;
    int maxThreadsPerSm = 2048;
    int maxBlocksPerSm = 32;
    int64_t sharedBytesPerSm = 228 * 1024;
    int copyEngines = 3;          // async copy engines; >= 2: H2D and D2H run in parallel
    int hardwareQueues = 8;       // default CUDA_DEVICE_MAX_CONNECTIONS
    int priorityLowest = 0;       // cudaDeviceGetStreamPriorityRange
    int priorityHighest = -5;

    // Throughput (for problem-size kernels and copies), bytes/s and FLOP/s
    double h2dPinnedBps = 55e9;
    double d2hPinnedBps = 55e9;
    double h2dPageableBps = 7.5e9;
    double d2hPageableBps = 7.5e9;
    double d2dBps = 2.0e12;       // device-to-device copy (read + write counted once)
    double p2pBps = 300e9;        // peer copy between two devices
    double dramBps = 4.0e12;      // memory-bound kernels (triad, transpose, reduce, memset)
    double fp32Flops = 60e12;     // compute-bound kernels (fma)
    double matmulFlops = 20e12;   // the library's tiled (non tensor-core) matmul

    // Fixed costs, ns
    int64_t launchApiNs = 2500;       // host cost of cudaLaunchKernel
    int64_t copyApiNs = 3000;         // host cost of cudaMemcpyAsync / cudaMemsetAsync
    int64_t eventRecordApiNs = 850;   // host cost of cudaEventRecord
    int64_t streamWaitApiNs = 700;    // host cost of cudaStreamWaitEvent
    int64_t hostFuncApiNs = 2000;     // host cost of cudaLaunchHostFunc
    int64_t syncApiNs = 1000;         // host cost of a sync call that does not wait
    int64_t mallocApiNs = 10000;      // host cost of cudaMalloc / cudaFree after their implicit sync
    int64_t graphLaunchApiNs = 2500;  // host cost of cudaGraphLaunch
    int64_t launchLatencyNs = 4000;   // from the end of a launch call until the GPU can start the op
    int64_t kernelOverheadNs = 1200;  // GPU-side gap between dependent operations in a stream
    int64_t graphNodeOverheadNs = 600;// GPU-side gap between nodes of a graph
    int64_t copyLatencyNs = 2000;     // fixed cost of a copy on a copy engine
    int64_t hostFuncLatencyNs = 5000; // from the stream reaching a host function until it runs on the driver thread
    int64_t minKernelNs = 1500;       // the shortest a kernel takes (an empty kernel)
    int64_t eventSyncWakeNs = 2000;   // from the awaited work finishing until the waiting host thread returns
};

// Loads a profile from a JSON file; errors name the file and the field.
Result<DeviceProfile> loadDeviceProfile(const std::string& path);
// Parses profile JSON text (`file` is used in error messages only).
Result<DeviceProfile> parseDeviceProfile(const std::string& text, const std::string& file);
// The profiles shipped in resources/profiles/ (see resources.h for where they are found).
std::vector<std::string> builtinProfileIds();
// Finds a shipped profile by id, or loads `idOrPath` as a file when it names one.
Result<DeviceProfile> findDeviceProfile(const std::string& idOrPath);

} // namespace streamscope
