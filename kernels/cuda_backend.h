// The CUDA backend: runs a scenario on real GPUs, timing every GPU operation with CUPTI activity records or with
// CUDA events on its stream (DESIGN.md §4), every host API call with the host clock, and one more iteration with no
// timing at all: the observer effect as a number. Plain C++ header (no CUDA types) so that the CLI can use it.
#pragma once

#include "backend.h"
#include "rank_broadcast.h"

#include <memory>
#include <string>
#include <vector>

namespace streamscope {

struct CudaProbe {
    bool usable = false;
    std::string reason; // why not usable: "no CUDA driver", "no CUDA device", CUDA's message
    int deviceCount = 0;
    std::vector<std::string> deviceNames;
    int driverVersion = 0; // cudaDriverGetVersion, e.g. 13000
    int runtimeVersion = 0;
};

// Asks the CUDA driver whether a GPU is usable; never creates a context, never throws.
CudaProbe probeCuda();

// Whether this build and machine can time with CUPTI: an empty string, else the one-line reason why not (no CUPTI
// in the build, another profiler attached, insufficient permission). Attaches CUPTI on first use.
std::string cuptiUnavailableReason();
bool cuptiBuiltIn();

// Whether this build runs collective ops on GPUs (NCCL's header was found at build time; the library itself is
// loaded when a run needs it, nccl_loader.h), and an empty string where NCCL loads, else why it does not.
bool ncclBuiltIntoBackend();
std::string ncclUnavailableReason();

struct CudaBackendOptions {
    // cupti: CUPTI activity records (per-stream anchor events only); events: CUDA events around every op; both:
    // CUPTI spans plus the event times, for their error; auto: cupti where usable, else events (with the reason).
    TimingMode timing = TimingMode::Auto;
    bool timeOps = true;          // time GPU ops at all (off: benchmark baseline)
    bool measureUntimed = true;   // run one more iteration with no timing and store its makespan
    std::string cuptiCapturePath; // where set: the CUPTI records of the last measured iteration (tests/data)
    // Timing "events": an op issued to a busy stream (the previous timed op's end event not complete yet, nothing else
    // enqueued behind it) starts at that end event instead of a start event of its own: one event per op on a busy
    // stream. Off: a start and an end event around every op (the benchmark compares both).
    bool shareBoundaryEvents = true;
    bool nvtx = true; // NVTX ranges named after the ops
    // Timing "events", graphs: one span per graph node, from event-record nodes captured between the nodes (their
    // events are swapped for fresh ones before every launch). Off: one span per graph launch. Costly, so off by
    // default: on an H200 the node updates made each cudaGraphLaunch take ~50 us instead of a few, and every 1 us node
    // ~4 us.
    bool graphNodeTiming = false;
    // Fault injection, for checking what a failed GPU run leaves: every launch of the kernel op of this name
    // (its `name`, as in the trace) runs a kernel that writes to an unmapped address instead, so that the run fails
    // with CUDA's cudaErrorIllegalAddress (a sticky error: the context is unusable afterwards). Empty: none.
    std::string illegalAddressOp;
    // Collective ops (NCCL; docs/RANKS.md "Collectives on GPUs"). A scenario that is one rank's part of a job started
    // by a launcher: its rank, the job's world size, and how rank 0's NCCL unique id reaches the other ranks (one
    // broadcast per communicator: one per host thread that issues collectives, in thread order). With worldSize 1,
    // or a whole job expanded into this process (runScenario with "ranks"), the communicators are made here
    // (ncclCommInitAll, one GPU per rank) and no broadcast is needed.
    struct Collectives {
        int rank = 0;
        int worldSize = 1;
        RankBroadcast broadcast;
    } collectives;
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
