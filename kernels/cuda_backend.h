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
    // An op issued to a busy stream (the previous timed op's end event not complete yet, nothing else enqueued
    // behind it) starts at that end event instead of a start event of its own: one event per op on a busy
    // stream. Off: a start and an end event around every op (the benchmark compares both).
    bool shareBoundaryEvents = true;
    bool nvtx = true;                   // NVTX ranges named after the ops
    // Graphs: one span per graph node, from event-record nodes captured between the nodes (their events are swapped
    // for fresh ones before every launch). Off: one span per graph launch. Costly, so off by default: on an H200
    // the node updates made each cudaGraphLaunch take ~50 us instead of a few, and every 1 us node ~4 us.
    bool graphNodeTiming = false;
};

// The backend maps GPU times onto the host clock and stores the error bound in the RunInfo given to prepare(), which
// must stay alive until finish() returns (runScenario keeps it for the trace).
//
// Set CUDA_DEVICE_MAX_CONNECTIONS (and other scenario env) before this is created: it must be in the
// environment before the first CUDA context exists. applyCudaEnvironment() does that.
std::unique_ptr<Backend> makeCudaBackend(const CudaBackendOptions& options = {});
// Exports the scenario's run.env (e.g. CUDA_DEVICE_MAX_CONNECTIONS) into this process's environment.
void applyCudaEnvironment(const Scenario& scenario);

} // namespace streamscope
