// The Runner: executes a scenario on a Backend — host threads as real threads issuing their ops in order (or
// simulated ones), warm-up and measured iterations, worker pools — and turns the recording into a Trace with
// host API spans, GPU spans and dependency flows.
#pragma once

#include "backend.h"
#include "result.h"
#include "scenario.h"
#include "trace.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>

namespace streamscope {

struct RunOptions {
    std::string variant;                                         // recorded in the run info
    std::string command;                                         // recorded in the run info
    std::function<void(int iteration, int iterations)> progress; // called as iterations complete
    const std::atomic<bool>* cancel = nullptr;
};

struct RunOutcome {
    Trace trace; // finalized; partial when status failed
    Status status;
    // Where trace time 0 is on the recording clock (the host's steady clock for GPU runs, simulated time for the
    // simulator), so that per-rank traces can be put on one timeline (ranks.h).
    int64_t clockOriginNs = 0;
    bool simulatedClock = false;
    // A job of several ranks simulated as one (scenario.ranks, expandJob): which rank each thread and stream is.
    JobLayout job;
};

// A scenario with "ranks" runs on a simulating backend as one job of ranks.count ranks (expandJob): the trace has
// every rank's rows, "rank R · name", as `merge` writes them; so does it on a backend that runs whole jobs (the CUDA
// backend: one GPU per rank). Collectives need a backend that runs them (Backend::runsCollectives).
RunOutcome runScenario(const Scenario& scenario, Backend& backend, const RunOptions& options = {});

// Builds the trace from a recording (exposed for tests): drops warm-up records, rebases time to the first
// measured span (its time on the recording clock in *origin), adds launch flows and the recorded dependencies. It
// consumes the recording: each host thread's records are freed once its spans are in the trace.
Trace buildTrace(const RunPlan& plan, Recording&& rec, RunInfo info, int64_t* origin = nullptr);

} // namespace streamscope
