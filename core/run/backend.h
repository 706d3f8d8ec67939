// The Backend interface: what executes a run plan. The simulator (simulator.h) implements it in core; the CUDA
// backend in kernels/ implements it on a real GPU. The Runner (runner.h) drives either and turns what they
// record into a Trace.
#pragma once

#include "result.h"
#include "run_plan.h"
#include "trace.h"

#include <cstdint>
#include <vector>

namespace streamscope {

// What became of one issued op (or one graph node). Times are ns on one time base per run.
// Names a record: host thread and index in that host thread's record list.
struct RecordRef {
    uint32_t hostThread = 0;
    uint32_t index = 0;
    bool operator==(const RecordRef&) const = default;
};

struct OpRecord {
    // (Fields by size, widest first: no padding between them.)
    int64_t apiStart = -1; // host span, -1 when none
    int64_t apiEnd = -1;
    int64_t gpuStart = -1; // GPU span, -1 when none
    int64_t gpuEnd = -1;
    // Timing "both": the op's CUDA event times beside the CUPTI times in gpuStart/gpuEnd; -1 when none.
    int64_t eventStart = -1;
    int64_t eventEnd = -1;
    int thread = 0; // scenario thread
    int op = 0;     // op index within the thread
    int node = -1;  // graph node index, -1 for the op itself
    int iteration = 0;
    int task = 0;
    int stream = -1; // planned stream of the GPU span
    // Simulator: what held the GPU op after it was ready, and the record whose GPU op's end let it start.
    RecordRef gpuWaitHolder;
    WaitCause gpuWait = WaitCause::None;
    SpanKind apiKind = SpanKind::ApiCall;
    SpanKind gpuKind = SpanKind::Kernel;
    bool hasApi() const { return apiStart >= 0; }
    bool hasGpu() const { return gpuStart >= 0; }
};

// A dependency arrow between two records; each end is the record's GPU span or its host span.
struct DepRecord {
    RecordRef from;
    RecordRef to;
    FlowKind kind = FlowKind::Event;
    bool fromHost = false;
    bool toHost = false;
};

struct Recording {
    std::vector<std::vector<OpRecord>> records; // per planned host thread, in issue order
    std::vector<DepRecord> deps;
};

// State of one host thread while it issues (real-thread backends).
struct HostThreadContext {
    int hostThread = 0;
    const PlannedHostThread* info = nullptr;
    std::vector<OpRecord>* records = nullptr; // append one record per issued op (plus graph nodes)
    void* backendData = nullptr;              // the backend's per-thread state
};

class Backend {
public:
    virtual ~Backend() = default;
    virtual std::string name() const = 0; // "simulator", "cuda"
    virtual TraceSource source() const = 0;
    // True: simulate() runs the host threads in simulated time (deterministic); the Runner starts no threads.
    virtual bool simulatesHostThreads() const = 0;
    // Whether it runs collective ops (the simulator models them; the CUDA backend calls NCCL where built with it).
    virtual bool runsCollectives() const { return simulatesHostThreads(); }
    // Whether a scenario with "ranks" runs on it as the whole job in one process (expandJob): every rank's threads,
    // streams and devices at once. Otherwise (a launcher started one process per rank) it runs one rank's part.
    virtual bool runsWholeJobs() const { return simulatesHostThreads(); }

    // Creates streams, events and buffers; describes the devices in `info`.
    virtual Status prepare(const RunPlan& plan, RunInfo& info) = 0;

    // Simulating backends: the whole run.
    virtual Status simulate(const RunPlan& plan, Recording& out);

    // Real-thread backends, called by the Runner: on each host thread, beginThread, then issue for each op in
    // order, then endThread; after all host threads of an iteration joined, endIteration.
    virtual Status beginThread(HostThreadContext& ctx);
    virtual Status issue(HostThreadContext& ctx, const PlannedOp& op);
    virtual void endThread(HostThreadContext& ctx);
    // On the host thread that finished last, after its endThread and before the Runner's own thread wakes up for
    // endIteration: where the iteration ends as a program's would (the CUDA backend waits for its devices there,
    // on a thread that is running, so that the wake-up of the Runner's sleeping thread is not in the makespan).
    virtual void lastThreadDone() {}
    virtual Status endIteration(int iteration);
    // Real-thread backends that measure the observer effect (DESIGN.md §4): after the measured iterations the
    // Runner calls beginUntimedIteration() and, while it returns true, runs one more iteration whose records it
    // discards (endIteration(totalIterations + k) after each). The backend times nothing in them (no events, no
    // CUPTI) and stores their makespan, host clock from device sync to device sync, in the run info.
    virtual bool beginUntimedIteration() { return false; }
    // Whether the untimed iterations may run between the measured ones: the Runner then follows each measured
    // iteration with an untimed one (while beginUntimedIteration() still asks for one) and calls
    // endUntimedIteration() after it, so that a drift of the host's speed over the run weighs on both makespans
    // alike. Asked after prepare(). The rest run after the measured iterations, as without this.
    virtual bool interleavesUntimedIterations() const { return false; }
    virtual Status endUntimedIteration() { return {}; }
    // Asks every host thread to stop issuing as soon as it can (another thread failed).
    virtual void abort() {}

    // Fills GPU times and dependencies of the records, releases every resource. Called on every path, also
    // after a failure, so that the partial trace is kept.
    virtual Status finish(Recording& rec) = 0;
};

} // namespace streamscope
