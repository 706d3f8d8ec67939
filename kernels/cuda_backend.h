// The CUDA backend: runs a scenario on real GPUs, timing every GPU operation with CUDA events on its own stream
// and every host API call with the host clock. Plain C++ header (no CUDA types) so that the CLI can use it.
#pragma once

#include "backend.h"

#include <memory>
#include <string>
#include <vector>

namespace streamscope {

struct CudaProbe {
    bool usable = false;
    std::string reason;                 // why not usable: "no CUDA driver", "no CUDA device", CUDA's message
    int deviceCount = 0;
    std::vector<std::string> deviceNames;
    int driverVersion = 0;              // cudaDriverGetVersion, e.g. 13000
    int runtimeVersion = 0;
};

// Asks the CUDA driver whether a GPU is usable; never creates a context, never throws.
CudaProbe probeCuda();

struct CudaBackendOptions {
    bool timeOps = true;                // bracket every GPU op with start/end events (off: benchmark baseline)
    bool nvtx = true;                   // NVTX ranges named after the ops
};

// Set CUDA_DEVICE_MAX_CONNECTIONS (and other scenario env) before this is created: it must be in the
// environment before the first CUDA context exists. applyCudaEnvironment() does that.
std::unique_ptr<Backend> makeCudaBackend(const CudaBackendOptions& options = {});
// Exports the scenario's run.env (e.g. CUDA_DEVICE_MAX_CONNECTIONS) into this process's environment.
void applyCudaEnvironment(const Scenario& scenario);

} // namespace streamscope
