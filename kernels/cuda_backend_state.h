// The CUDA backend's state, shared by the files that implement it (DESIGN.md §4): what each op, host thread,
// CUDA stream ("lane"), planned stream, scenario event and device holds during a run, the CudaBackend class, and the
// helpers more than one of its files uses (host clock, CUDA failures as a Status, run settings). Internal to
// kernels/: cuda_backend.h is what others include. The class's parts, file by file:
//   cuda_backend.cpp              probeCuda, cuptiUnavailableReason, cuptiBuiltIn, makeCudaBackend,
//                                 applyCudaEnvironment
//   cuda_backend_prepare.cpp      prepare() and its steps (devices, streams, events, peer access, the memory check,
//                                 host threads, free pools, warm-up); release()
//   cuda_backend_prepare_ops.cpp  one op's buffers and kernel arguments (prepareOp), graph capture (captureGraph)
//   cuda_backend_issue.cpp        the issue path: beginThread, issue and its issue* parts, lanes, enqueue,
//                                 dependency bookkeeping
//   cuda_backend_timing.cpp       timing mode, timing events and origins, read-back of events and CUPTI records,
//                                 anchors, iteration ends, untimed iterations, timing settings, finish()
//   cuda_backend_stamps.cpp       kernel stamps (timing "cupti"): slots, GPU clock samples, read-back
//   cuda_backend_nccl.cpp         collective ops through NCCL: checks, buffers, communicators, issue, release
#pragma once

#include "cuda_backend.h"

#include "cupti_records.h"
#include "cupti_tracer.h"
#include "gpu_clock.cuh"
#include "kernel_library.cuh"

#include <cuda_runtime.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace streamscope::cuda_backend {

// Trials of the origin measurement per device and iteration; the narrowest [t0, t1] window wins.
inline constexpr int kOriginTrials = 4;

inline int64_t hostNowNs()
{
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

struct HostFuncArg {
    double us = 0;
    const std::atomic<bool>* abort = nullptr;
};

// One issued host function, timed from inside: when it ran, on the host clock. Events around it would say when
// its stream reached it instead, and the driver runs the host functions of all streams one at a time, so that
// span would include the wait for the other streams' callbacks (measured on an H200: four 170 us callbacks in
// four streams looked concurrent).
struct HostFuncSlot {
    const HostFuncArg* arg = nullptr;
    std::atomic<int64_t> start{-1};
    std::atomic<int64_t> end{-1};
};

inline std::string versionText(int v)
{
    return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

inline std::string bytesText(double b)
{
    char buf[64];
    if (b >= double(1ull << 30))
        std::snprintf(buf, sizeof buf, "%.2f GiB", b / double(1ull << 30));
    else if (b >= double(1ull << 20))
        std::snprintf(buf, sizeof buf, "%.2f MiB", b / double(1ull << 20));
    else
        std::snprintf(buf, sizeof buf, "%.0f B", b);
    return buf;
}

inline dim3 toDim3(Dim3 d)
{
    return dim3(d.x, d.y, d.z);
}

inline kernels::Kernel libraryKernel(KernelKind k)
{
    switch (k) {
    case KernelKind::Spin: return kernels::Kernel::Spin;
    case KernelKind::Empty: return kernels::Kernel::Empty;
    case KernelKind::Fma: return kernels::Kernel::Fma;
    case KernelKind::Triad: return kernels::Kernel::Triad;
    case KernelKind::Matmul: return kernels::Kernel::Matmul;
    case KernelKind::Transpose: return kernels::Kernel::Transpose;
    case KernelKind::Reduce: return kernels::Kernel::Reduce;
    }
    return kernels::Kernel::Empty;
}

inline std::string_view apiName(const Op& op)
{
    if (op.kind == OpKind::Memcpy && op.copy == CopyKind::P2P)
        return "cudaMemcpyPeerAsync";
    return cudaApiName(op.kind);
}

// "file: /json/path: message" style failure of a CUDA call; clears the thread's last-error state so that a
// non-sticky error does not resurface in a later call.
inline Status cudaFailure(std::string_view api, cudaError_t e, std::string_view where, std::string_view detail = {})
{
    (void)cudaGetLastError();
    std::string msg = std::string(api) + " failed";
    if (!where.empty())
        msg += " for " + std::string(where);
    msg += ": ";
    msg += cudaGetErrorString(e);
    if (!detail.empty())
        msg += " (" + std::string(detail) + ")";
    return Status(Error{{}, {}, std::move(msg)}, ErrorClass::Runtime);
}

inline Status runtimeError(std::string msg)
{
    return Status(Error{{}, {}, std::move(msg)}, ErrorClass::Runtime);
}

struct DeviceAllocation {
    void* ptr = nullptr;
    int device = 0;
    int64_t bytes = 0;
};

struct GraphResources;
struct NcclState;

// What one op (or graph node) of one host thread owns: its buffers, its kernel arguments, its graph.
struct OpResources {
    std::string name;  // displayName(op): NVTX range and messages
    std::string where; // `thread "main" op 3 "matmul"` for messages
    kernels::LaunchArgs launch;
    void* src = nullptr;
    void* dst = nullptr;
    size_t bytes = 0;
    int srcDevice = -1;
    int dstDevice = -1;
    HostFuncArg hostFunc;
    std::vector<DeviceAllocation> deviceMemory;
    void* hostMemory = nullptr;
    bool hostPinned = false;
    std::unique_ptr<GraphResources> graph;
    // collective: the communicator (an ncclComm_t) of its host thread, float32 elements per rank's part, the buffers
    // NCCL reads (src) and writes (dst), the send/recv peer, the rank and world size.
    void* ncclComm = nullptr;
    size_t ncclCount = 0;
    int ncclPeer = -1;
    int ncclRank = 0;
    int ncclWorld = 1;

    OpResources();
    ~OpResources();
    OpResources(OpResources&&) noexcept;
};

// A graph op of one host thread: captured once in prepare(), launched per issue. With per-node timing the chain
// is event0, node0, event1, node1, ..., eventN: node i spans [event i, event i+1]; the events of the captured
// event-record nodes are swapped for fresh pool events before each launch.
struct GraphResources {
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    // The untimed iterations' instance, made after CUPTI was disabled: an instance made while CUPTI recorded keeps
    // reporting its nodes (and paying for it) after CUPTI is disabled.
    cudaGraphExec_t untimedExec = nullptr;
    std::vector<OpResources> nodes;
    std::vector<cudaEvent_t> placeholders;
    std::vector<cudaGraphNode_t> timingNodes;
    std::vector<cudaEvent_t> launchEvents; // scratch for one launch (sized in prepare)
    bool nodeTiming = false;
    int device = 0;
};

inline OpResources::OpResources() = default;
inline OpResources::~OpResources() = default;
inline OpResources::OpResources(OpResources&&) noexcept = default;

// A GPU span to read back at the end of the iteration.
struct Timing {
    uint32_t record = 0;
    int device = 0;
    cudaEvent_t start = nullptr;
    cudaEvent_t end = nullptr;
};

// A kernel launch that stamps itself (timing "cupti"): its record and its slot in the device's stamp slots.
struct StampPending {
    uint32_t record = 0;
    int device = 0;
    size_t slot = 0;
};

// A GPU op (or graph launch) whose CUPTI records are matched at the end of the iteration.
struct CuptiPending {
    std::vector<OpRecord>* records = nullptr; // the recording the op's record is in
    int iteration = 0;
    uint32_t record = 0; // the op's record; a graph launch's own record
    CorrelationIds ids;
    uint32_t firstNode = 0; // graphs: the records of the nodes that CUPTI records, in node order
    uint32_t nodeCount = 0;
    int lane = -1;
};

struct ThreadState {
    int hostThread = 0;
    int thread = 0; // scenario thread
    int device = 0;
    std::string name;
    std::vector<OpRecord>* records = nullptr;
    std::vector<OpResources> ops;
    int currentDevice = -1;
    std::vector<Timing> timings;
    std::vector<CuptiPending> cupti;               // matched once, after the last timed iteration
    std::vector<StampPending> stamps;              // read back at the end of each iteration
    size_t iterationFirstRecord = 0;               // records of the current iteration start here
    std::unique_ptr<HostFuncSlot[]> hostFuncSlots; // for one iteration
    size_t hostFuncSlotCount = 0;
    size_t nextHostFuncSlot = 0;
    std::vector<std::pair<uint32_t, const HostFuncSlot*>> hostFuncTimings; // (record, slot) this iteration
    std::vector<DeviceAllocation> mallocs;  // live allocations of malloc ops, taken by free ops
    std::vector<DeviceAllocation> freePool; // for free ops with no malloc before them
    std::vector<int64_t> freePoolSizes;     // what freePool holds when full
    size_t expectedRecords = 0;
    size_t expectedTimings = 0;
    bool reserved = false;
};

// What one CUDA stream's timed ops share. Several planned streams can be one CUDA stream (the per-thread default
// streams of one host thread and device), so this is per CUDA stream ("lane"), not per planned stream.
//
// Shared boundary events: a start event completes when its stream reaches it, i.e. when the work before it in the
// stream is done. When the previous thing in the stream is a timed op's end event that has not completed yet
// (cudaEventQuery: not ready), a start event recorded now would complete right after that end event, so the end
// event serves as the new op's start and saves the GPU one event (~1.2 us on an H200) and the host one record.
// Anything else enqueued in between (an event record or wait, a host function, a legacy-default-stream op the
// stream's next op waits for) or an end event already complete (the stream may be idle: the op starts when it
// arrives) takes a start event of its own. If the end event completes between the query and the launch, the op
// starts when it arrives, at most the launch latency after the call began; collect() clamps the start to the
// call's start, which is the same bound a start event recorded before the call has.
//
// The mutex is held from that decision to the end event's record, and by everything else that enqueues into the
// lane while ops are timed, so that no other host thread's work lands between an op and its events.
//
// Timing "cupti": no event is recorded per op. Each lane gets one anchor event before the iteration starts and one
// after its work is done, both into idle streams, so that they hold nothing back: the CUPTI spans of the lane must
// lie between them on the event clock, a check of the two clock mappings against each other.
struct Lane {
    std::mutex mutex;
    cudaEvent_t lastEnd = nullptr; // end event of the lane's last timed op, if nothing was enqueued after it
    std::atomic<bool> anchored{false};
    bool ended = false;
    cudaEvent_t anchorStart = nullptr;
    cudaEvent_t anchorEnd = nullptr;
    cudaStream_t handle = nullptr;
    int device = 0;
    bool perThread = false; // cudaStreamPerThread: only its own host thread can record on it
};

// Locks lanes in the given (ascending) order; unlocks on destruction.
class LaneGuard {
public:
    LaneGuard(Lane* lanes, const std::vector<int>& which) : m_lanes(lanes), m_which(which)
    {
        for (int l : m_which)
            m_lanes[l].mutex.lock();
    }
    ~LaneGuard()
    {
        for (auto it = m_which.rbegin(); it != m_which.rend(); ++it)
            m_lanes[*it].mutex.unlock();
    }
    LaneGuard(const LaneGuard&) = delete;
    LaneGuard& operator=(const LaneGuard&) = delete;

private:
    Lane* m_lanes;
    const std::vector<int>& m_which;
};

struct StreamState {
    cudaStream_t handle = nullptr;
    bool owned = false;
    int device = 0;
    StreamKind kind = StreamKind::Blocking;
    int lane = -1;              // the CUDA stream's Lane
    std::vector<int> lockLanes; // lanes an enqueue locks, ascending: its own; legacy default stream: also the
                                // lanes of the device's blocking streams, whose next ops wait for it
    // Dependency bookkeeping (under m_depMutex), reset every iteration.
    std::optional<RecordRef> last;          // last GPU op issued to the stream
    bool lastJoinedLegacy = false;          // `last` already flows into a legacy-default-stream op
    std::vector<RecordRef> pendingEvents;   // event flows into the stream's next GPU op
    std::optional<RecordRef> pendingLegacy; // legacy-stream op the next GPU op of this blocking stream waits for
};

struct EventState {
    std::vector<cudaEvent_t> perDevice; // by device index; an event records only on its own device's streams
    cudaEvent_t latest = nullptr;       // handle of the latest record (cudaStreamWaitEvent waits on that one)
    std::optional<RecordRef> captured;  // the GPU op that record captured (this iteration)
};

struct DeviceState {
    int index = 0;
    std::vector<cudaEvent_t> timingPool;
    std::atomic<size_t> nextTiming{0};
    std::mutex overflowMutex;
    std::vector<cudaEvent_t> overflow;
    size_t overflowUsed = 0;
    std::array<cudaEvent_t, kOriginTrials> originCandidates{};
    cudaEvent_t origin = nullptr;
    int64_t anchorNs = 0;
    // Kernel stamps (timing "cupti"): one slot of kernels::kStampSlotWords per kernel launch of an iteration,
    // zeroed between iterations; the clock samples before and after the iteration map them onto the host clock.
    uint64_t* stampSlots = nullptr;
    size_t stampCapacity = 0;
    std::atomic<size_t> nextStamp{0};
    uint32_t stampWave = 0;
    std::vector<uint64_t> stampHost;
    kernels::GpuClockProbe clock;
    kernels::GpuClockSample clockBefore;
    kernels::GpuClockSample clockAfter;
    kernels::GpuClockSample clockFirst; // the run's first sample, for the drift
    cudaStream_t captureStream = nullptr;
    std::vector<int> streams;       // planned streams of the device
    std::vector<int> legacyBarrier; // the ones that synchronize with the legacy default stream
    std::vector<int> legacyLanes;   // their lanes and the legacy default stream's, ascending
    int64_t sharedOptin = 0;
};

class CudaBackend final : public Backend {
public:
    explicit CudaBackend(CudaBackendOptions options) : m_options(options) {}
    ~CudaBackend() override { release(); }
    CudaBackend(const CudaBackend&) = delete;
    CudaBackend& operator=(const CudaBackend&) = delete;

    std::string name() const override { return "cuda"; }
    TraceSource source() const override { return m_cuptiTiming ? TraceSource::Cupti : TraceSource::CudaEvents; }
    bool simulatesHostThreads() const override { return false; }
    bool runsCollectives() const override { return ncclBuiltIntoBackend(); }
    bool runsWholeJobs() const override { return true; } // one GPU per rank (cuda_backend_nccl.cpp checks)

    Status prepare(const RunPlan& plan, RunInfo& info) override;
    Status beginThread(HostThreadContext& ctx) override;
    Status issue(HostThreadContext& ctx, const PlannedOp& op) override;
    void endThread(HostThreadContext& ctx) override;
    void lastThreadDone() override;
    Status endIteration(int iteration) override;
    bool beginUntimedIteration() override;
    bool interleavesUntimedIterations() const override;
    Status endUntimedIteration() override;
    void abort() override { m_abort.store(true); }
    Status finish(Recording& rec) override;

private:
    void resolveTiming(RunInfo& info);
    Status checkDevices(const RunPlan& plan);
    Status describeDevices(RunInfo& info);
    Status createStreams();
    Status createEvents();
    Status enablePeerAccess(RunInfo& info);
    Status checkMemory();
    Status prepareThreads();
    Status prepareOp(ThreadState& ts, const Op& op, int device, OpResources& res, const std::string& path);
    Status allocateDevice(OpResources& res, int device, size_t bytes, void** out);
    Status captureGraph(ThreadState& ts, const Op& op, int device, OpResources& res, bool nodeTiming);
    Status createTimingPools();
    bool kernelsCanStamp() const;
    bool needsCuptiBesideStamps() const;
    Status createStampSlots();
    Status sampleGpuClocks(bool after);
    void collectStamps();
    Status fillFreePools();
    Status warmUpStreams();
    bool cuptiCanMatchByOrder() const;
    void resolveCuptiStreams();
    Status anchorAll();
    Status collect(std::string_view when);
    void collectCupti();
    void readAnchors();
    void checkAnchors(const std::map<std::pair<int, int>, std::pair<int64_t, int64_t>>& laneSpans);
    void writeCuptiCapture(const std::vector<CuptiRecord>& records, const std::vector<CuptiIssue>& issues,
                           const std::vector<std::pair<const ThreadState*, const CuptiPending*>>& owners);
    void anchorLane(const StreamState& st);
    void recordEndAnchors();
    void recordStartAnchors();
    void noteIterationMakespan(int iteration);
    void storeTimingSettings();
    void instantiateUntimedGraphs();
    void resetIterationState();
    void appendDeps(Recording& rec);
    void release();
    Status keep(Status st); // remembers the first failure of finish()

    Status useDevice(ThreadState& ts, int device, std::string_view where);
    cudaEvent_t acquireEvent(int device);
    std::optional<LaneGuard> lockLanes(const StreamState& st);
    Status startEvent(const StreamState& st, const std::string& where, cudaEvent_t& out);
    void endLane(const StreamState& st, cudaEvent_t end);
    static cudaError_t enqueue(const Op& op, const OpResources& res, cudaStream_t stream, uint64_t* stamps = nullptr,
                               uint32_t stampWave = 0);
    std::string launchDetail(const Op& op, const OpResources& res) const;

    // The two ends of enqueuing a GPU op, shared by the CUDA ops and the collectives. Before: with per-op events
    // its start event recorded and its lane held until the end event is. After: the end event, the op's record,
    // its timing and CUPTI entries, and the stream's last GPU op; `index` is the record's.
    Status beginOpTiming(const StreamState& st, const std::string& where, Timing& t);
    Status finishGpuOp(ThreadState& ts, const PlannedOp& p, const StreamState& st, const OpRecord& r, Timing t,
                       bool cupti, const CorrelationIds& ids, const std::string& where, uint32_t& index);
    Status issueGpuOp(ThreadState& ts, const PlannedOp& p, OpResources& res, OpRecord r);
    Status issueTimedHostFunc(ThreadState& ts, const PlannedOp& p, OpResources& res, OpRecord r);
    Status issueGraph(ThreadState& ts, const PlannedOp& p, OpResources& res, OpRecord r);
    Status issueRecord(ThreadState& ts, const PlannedOp& p, OpResources& res, OpRecord r);
    Status issueWait(ThreadState& ts, const PlannedOp& p, OpResources& res, OpRecord r);
    Status issueSync(ThreadState& ts, const PlannedOp& p, OpResources& res, OpRecord r);
    Status issueMalloc(ThreadState& ts, const PlannedOp& p, OpResources& res, OpRecord r);
    Status issueFree(ThreadState& ts, const PlannedOp& p, OpResources& res, OpRecord r);
    Status issueCollective(ThreadState& ts, const PlannedOp& p, OpResources& res, OpRecord r);

    // Collective ops (cuda_backend_nccl.cpp).
    Status checkCollectives(const RunPlan& plan); // NCCL loaded, the job's layout fits NCCL; before any CUDA call
    Status prepareCollective(ThreadState& ts, const Op& op, int device, OpResources& res, const std::string& path);
    Status createCommunicators(RunInfo& info);
    void releaseCommunicators(bool beforeSync);

    // Dependency bookkeeping; callers hold m_depMutex.
    void noteGpuOp(int stream, RecordRef first, RecordRef last);
    void flowsFromDevice(int device, RecordRef to, FlowKind kind, std::vector<DepRecord>& out) const;

    CudaBackendOptions m_options;
    // What times GPU ops now: per-op events, CUPTI, either, or (the untimed iteration) neither. Changed only between
    // iterations, while no host thread runs.
    bool m_opEvents = false;
    bool m_cuptiOn = false;
    bool m_cuptiDetached = false;            // CUPTI was detached before the untimed iterations
    std::string m_cuptiDetachError;          // why it could not be
    bool m_cuptiByOrder = false;             // CUPTI records matched by their place in their stream (no API callbacks)
    std::vector<uint32_t> m_laneCuptiStream; // CUPTI's id of each lane's stream (matching by order)
    bool m_cuptiTiming = false;  // the run's GPU spans come from CUPTI and kernel stamps (set through the untimed one)
    bool m_stampsOn = false;     // kernels stamp %globaltimer now (timed iterations of timing "cupti")
    bool m_cuptiUsed = false;    // CUPTI recorded the timed iterations
    bool m_kernelStamps = false; // the run's kernels stamped themselves (stays set through the untimed iteration)
    size_t m_stampsRead = 0, m_stampsMissing = 0;
    int64_t m_gpuClockErrorNs = -1; // widest half round trip of the clock samples that mapped stamps
    double m_gpuClockDriftPpm = 0;  // |rate - 1| over the run (100 ms or more), in parts per million
    bool m_untimedNow = false;
    bool m_opEventsTimed = false;      // m_opEvents of the measured iterations, while an untimed one runs
    bool m_untimedInterleaved = false; // an untimed iteration ran between measured ones
    TimingMode m_timing = TimingMode::Events;
    int64_t m_cuptiOffset = 0;                // host clock minus CUPTI's
    int64_t m_lastSyncDone = 0;               // host clock when the devices were last found idle
    std::atomic<int64_t> m_threadsIdleAt{-1}; // host clock when the last host thread found its devices idle
    int64_t m_timedEndNs = INT64_MAX;         // host clock when the timed iterations were over
    std::vector<int64_t> m_timedMakespans;    // host clock, first issue to device sync, per measured iteration
    std::vector<int64_t> m_untimedMakespans;
    size_t m_cuptiMatched = 0, m_cuptiUnmatchedOps = 0, m_cuptiForeign = 0, m_cuptiLate = 0;
    uint64_t m_cuptiDropped = 0;
    int64_t m_anchorWorstNs = 0; // largest distance of a CUPTI span outside its lane's anchor events
    size_t m_anchorChecks = 0;
    std::vector<int64_t> m_anchorEndGaps; // end anchor minus the lane's last CUPTI end
    struct AnchorTimes {
        int64_t start = -1, end = -1; // host clock, through the origin event; -1: none
    };
    std::map<std::pair<int, int>, AnchorTimes> m_anchorTimes; // (iteration, lane)
    int m_iteration = 0;                                      // the iteration being collected
    size_t m_depsBeforeUntimed = 0; // the untimed iteration's flows are dropped with its records
    const RunPlan* m_plan = nullptr;
    RunInfo* m_info = nullptr; // alive from prepare() to finish() (the Runner keeps it for the trace)
    std::atomic<bool> m_abort{false};
    bool m_prepared = false;
    Status m_finishStatus;

    std::vector<std::unique_ptr<DeviceState>> m_devices; // by device index; null where unused
    std::vector<int> m_deviceList;
    std::vector<StreamState> m_streams; // by planned stream
    std::unique_ptr<Lane[]> m_lanes;    // by lane (CUDA stream)
    size_t m_laneCount = 0;
    std::atomic<int64_t> m_timedStarts{0};  // timed ops with start events (not graph nodes) ...
    std::atomic<int64_t> m_sharedStarts{0}; // ... of them started at the previous op's end event
    std::vector<EventState> m_events;       // by scenario event
    std::vector<std::unique_ptr<ThreadState>> m_threads;
    std::vector<std::pair<int, int>> m_peerEnabled; // (device, peer) this run enabled
    int64_t m_timingEventsPerIteration = 0;

    std::mutex m_depMutex;
    std::vector<DepRecord> m_deps;

    bool m_collectives = false;        // the scenario has collective ops
    std::shared_ptr<NcclState> m_nccl; // the communicators (shared_ptr: NcclState is complete only where NCCL is)
    std::atomic<bool> m_ncclFailed{false};
};

} // namespace streamscope::cuda_backend
