// The CUDA backend (DESIGN.md §4): issues each op of the scenario with the real CUDA runtime call and times host
// API calls with steady_clock. GPU ops are timed by CUPTI activity records (matched by correlation id, already on
// steady_clock; per-stream anchor events check the alignment) or by timing events on their own stream, mapped onto
// that clock through one origin event per device and iteration. One last iteration runs with no timing at all.
#include "cuda_backend.h"

#include "cupti_records.h"
#include "cupti_tracer.h"
#include "kernel_library.cuh"

#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>
#include <nvtx3/nvToolsExtCudaRt.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <exception>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <sys/syscall.h>
#include <tuple>
#include <unistd.h>
#include <utility>
#include <vector>

namespace streamscope {

namespace {

// Trials of the origin measurement per device and iteration; the narrowest [t0, t1] window wins.
constexpr int kOriginTrials = 4;
// Timing events created ahead beyond the plan's exact count (the pool grows in the issue path only past this).
constexpr size_t kTimingEventMargin = 64;
// Buffers allocated ahead for free ops that no malloc op of their host thread precedes.
constexpr size_t kMaxFreePool = 64;
// The device memory a scenario may claim for its buffers, as a share of what is free.
constexpr double kMaxMemoryShare = 0.9;

int64_t hostNowNs()
{
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

// Busy-waits on the host clock (host-work on a host thread, host functions on the driver's thread); an aborted
// run stops waiting so that nothing outlives it.
void spinHost(double us, const std::atomic<bool>* abort)
{
    const int64_t end = hostNowNs() + int64_t(std::llround(std::max(0.0, us) * 1000.0));
    while (hostNowNs() < end)
        if (abort && abort->load(std::memory_order_relaxed))
            return;
}

struct HostFuncArg {
    double us = 0;
    const std::atomic<bool>* abort = nullptr;
};

void CUDART_CB runHostFunc(void* p)
{
    const auto* arg = static_cast<const HostFuncArg*>(p);
    spinHost(arg->us, arg->abort);
}

// One issued host function, timed from inside: when it ran, on the host clock. Events around it would say when
// its stream reached it instead, and the driver runs the host functions of all streams one at a time, so that
// span would include the wait for the other streams' callbacks (measured on an H200: four 170 us callbacks in
// four streams looked concurrent).
struct HostFuncSlot {
    const HostFuncArg* arg = nullptr;
    std::atomic<int64_t> start{-1};
    std::atomic<int64_t> end{-1};
};

void CUDART_CB runTimedHostFunc(void* p)
{
    auto* slot = static_cast<HostFuncSlot*>(p);
    slot->start.store(hostNowNs(), std::memory_order_relaxed);
    spinHost(slot->arg->us, slot->arg->abort);
    slot->end.store(hostNowNs(), std::memory_order_release);
}

std::string versionText(int v)
{
    return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

std::string bytesText(double b)
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

std::string dimText(Dim3 d)
{
    return std::to_string(d.x) + "x" + std::to_string(d.y) + "x" + std::to_string(d.z);
}

dim3 toDim3(Dim3 d) { return dim3(d.x, d.y, d.z); }

kernels::Kernel libraryKernel(KernelKind k)
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

std::string_view apiName(const Op& op)
{
    if (op.kind == OpKind::Memcpy && op.copy == CopyKind::P2P)
        return "cudaMemcpyPeerAsync";
    return cudaApiName(op.kind);
}

bool isCapturable(OpKind k)
{
    return k == OpKind::Kernel || k == OpKind::Memcpy || k == OpKind::Memset || k == OpKind::HostFunc;
}

// "file: /json/path: message" style failure of a CUDA call; clears the thread's last-error state so that a
// non-sticky error does not resurface in a later call.
Status cudaFailure(std::string_view api, cudaError_t e, std::string_view where, std::string_view detail = {})
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

Status runtimeError(std::string msg) { return Status(Error{{}, {}, std::move(msg)}, ErrorClass::Runtime); }

class NvtxRange {
public:
    NvtxRange(bool on, const char* name) : m_on(on)
    {
        if (m_on)
            nvtxRangePushA(name);
    }
    ~NvtxRange()
    {
        if (m_on)
            nvtxRangePop();
    }
    NvtxRange(const NvtxRange&) = delete;
    NvtxRange& operator=(const NvtxRange&) = delete;

private:
    bool m_on;
};

struct DeviceAllocation {
    void* ptr = nullptr;
    int device = 0;
    int64_t bytes = 0;
};

struct GraphResources;

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

OpResources::OpResources() = default;
OpResources::~OpResources() = default;
OpResources::OpResources(OpResources&&) noexcept = default;

// A GPU span to read back at the end of the iteration.
struct Timing {
    uint32_t record = 0;
    int device = 0;
    cudaEvent_t start = nullptr;
    cudaEvent_t end = nullptr;
};

// A GPU op (or graph launch) whose CUPTI records are matched at the end of the iteration.
struct CuptiPending {
    std::vector<OpRecord>* records = nullptr; // the recording the op's record is in
    int iteration = 0;
    uint32_t record = 0;     // the op's record; a graph launch's own record
    CorrelationIds ids;
    uint32_t firstNode = 0;  // graphs: the records of the nodes that CUPTI records, in node order
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
    std::vector<CuptiPending> cupti;                // matched once, after the last timed iteration
    size_t iterationFirstRecord = 0;                // records of the current iteration start here
    std::unique_ptr<HostFuncSlot[]> hostFuncSlots; // for one iteration
    size_t hostFuncSlotCount = 0;
    size_t nextHostFuncSlot = 0;
    std::vector<std::pair<uint32_t, const HostFuncSlot*>> hostFuncTimings; // (record, slot) this iteration
    std::vector<DeviceAllocation> mallocs;   // live allocations of malloc ops, taken by free ops
    std::vector<DeviceAllocation> freePool;  // for free ops with no malloc before them
    std::vector<int64_t> freePoolSizes;      // what freePool holds when full
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
    cudaStream_t captureStream = nullptr;
    std::vector<int> streams;       // planned streams of the device
    std::vector<int> legacyBarrier; // the ones that synchronize with the legacy default stream
    std::vector<int> legacyLanes;   // their lanes and the legacy default stream's, ascending
    int64_t sharedOptin = 0;
};

// CUDA_DEVICE_MAX_CONNECTIONS is read once, when the process creates its CUDA context.
std::mutex g_contextMutex;
std::optional<std::string> g_connectionsAtContext;

void setSetting(RunInfo& info, const std::string& key, std::string value)
{
    for (auto& [k, v] : info.settings)
        if (k == key) {
            v = std::move(value);
            return;
        }
    info.settings.emplace_back(key, std::move(value));
}

class CudaBackend final : public Backend {
public:
    explicit CudaBackend(CudaBackendOptions options) : m_options(options) {}
    ~CudaBackend() override { release(); }
    CudaBackend(const CudaBackend&) = delete;
    CudaBackend& operator=(const CudaBackend&) = delete;

    std::string name() const override { return "cuda"; }
    TraceSource source() const override { return m_cuptiTiming ? TraceSource::Cupti : TraceSource::CudaEvents; }
    bool simulatesHostThreads() const override { return false; }

    Status prepare(const RunPlan& plan, RunInfo& info) override;
    Status beginThread(HostThreadContext& ctx) override;
    Status issue(HostThreadContext& ctx, const PlannedOp& op) override;
    void endThread(HostThreadContext& ctx) override;
    Status endIteration(int iteration) override;
    bool beginUntimedIteration() override;
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
    static cudaError_t enqueue(const Op& op, const OpResources& res, cudaStream_t stream);
    std::string launchDetail(const Op& op, const OpResources& res) const;

    Status issueGpuOp(ThreadState& ts, const PlannedOp& p, OpResources& res, OpRecord r);
    Status issueTimedHostFunc(ThreadState& ts, const PlannedOp& p, OpResources& res, OpRecord r);
    Status issueGraph(ThreadState& ts, const PlannedOp& p, OpResources& res, OpRecord r);
    Status issueRecord(ThreadState& ts, const PlannedOp& p, OpResources& res, OpRecord r);
    Status issueWait(ThreadState& ts, const PlannedOp& p, OpResources& res, OpRecord r);
    Status issueSync(ThreadState& ts, const PlannedOp& p, OpResources& res, OpRecord r);
    Status issueMalloc(ThreadState& ts, const PlannedOp& p, OpResources& res, OpRecord r);
    Status issueFree(ThreadState& ts, const PlannedOp& p, OpResources& res, OpRecord r);

    // Dependency bookkeeping; callers hold m_depMutex.
    void noteGpuOp(int stream, RecordRef first, RecordRef last);
    void flowsFromDevice(int device, RecordRef to, FlowKind kind, std::vector<DepRecord>& out) const;

    CudaBackendOptions m_options;
    // What times GPU ops now: per-op events, CUPTI, either, or (the untimed iteration) neither. Changed only between
    // iterations, while no host thread runs.
    bool m_opEvents = false;
    bool m_cuptiOn = false;
    bool m_cuptiByOrder = false;        // CUPTI records matched by their place in their stream (no API callbacks)
    std::vector<uint32_t> m_laneCuptiStream; // CUPTI's id of each lane's stream (matching by order)
    bool m_cuptiTiming = false;    // the run's GPU spans come from CUPTI (stays set through the untimed iteration)
    bool m_untimedNow = false;
    TimingMode m_timing = TimingMode::Events;
    int64_t m_cuptiOffset = 0;     // host clock minus CUPTI's
    int64_t m_lastSyncDone = 0;    // host clock when the devices were last found idle
    int64_t m_timedEndNs = INT64_MAX; // host clock when the timed iterations were over
    std::vector<int64_t> m_timedMakespans; // host clock, first issue to device sync, per measured iteration
    std::vector<int64_t> m_untimedMakespans;
    size_t m_cuptiMatched = 0, m_cuptiUnmatchedOps = 0, m_cuptiForeign = 0, m_cuptiLate = 0;
    uint64_t m_cuptiDropped = 0;
    int64_t m_anchorWorstNs = 0;   // largest distance of a CUPTI span outside its lane's anchor events
    size_t m_anchorChecks = 0;
    std::vector<int64_t> m_anchorEndGaps; // end anchor minus the lane's last CUPTI end
    struct AnchorTimes {
        int64_t start = -1, end = -1; // host clock, through the origin event; -1: none
    };
    std::map<std::pair<int, int>, AnchorTimes> m_anchorTimes; // (iteration, lane)
    int m_iteration = 0;          // the iteration being collected
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
    std::vector<EventState> m_events;   // by scenario event
    std::vector<std::unique_ptr<ThreadState>> m_threads;
    std::vector<std::pair<int, int>> m_peerEnabled; // (device, peer) this run enabled
    int64_t m_timingEventsPerIteration = 0;

    std::mutex m_depMutex;
    std::vector<DepRecord> m_deps;
};

// ---------------------------------------------------------------------------------------------------------------
// prepare

Status CudaBackend::prepare(const RunPlan& plan, RunInfo& info)
{
    release();
    m_plan = &plan;
    m_info = &info;
    m_abort.store(false);
    m_finishStatus = {};
    m_prepared = true;
    m_deps.clear();
    m_timedStarts.store(0);
    m_sharedStarts.store(0);

    if (info.host.empty()) {
        char host[256] = {};
        if (gethostname(host, sizeof host - 1) == 0)
            info.host = host;
    }
    if (info.date.empty()) {
        const std::time_t now = std::time(nullptr);
        std::tm tm{};
        gmtime_r(&now, &tm);
        char buf[32];
        std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
        info.date = buf;
    }

    if (Status st = checkDevices(plan); !st)
        return st;
    // CUPTI before the first context and stream: its start-up costs fall here, never in a measured iteration.
    resolveTiming(info);
    if (Status st = describeDevices(info); !st)
        return st;
    if (Status st = createStreams(); !st)
        return st;
    resolveCuptiStreams();
    if (Status st = createEvents(); !st)
        return st;
    if (Status st = enablePeerAccess(info); !st)
        return st;
    if (Status st = checkMemory(); !st)
        return st;
    if (Status st = prepareThreads(); !st)
        return st;
    if (Status st = createTimingPools(); !st)
        return st;
    if (Status st = fillFreePools(); !st)
        return st;
    if (Status st = warmUpStreams(); !st)
        return st;
    // Buffer initialisation and graph uploads are done before the first origin.
    for (int d : m_deviceList) {
        if (cudaError_t e = cudaSetDevice(d); e != cudaSuccess)
            return cudaFailure("cudaSetDevice", e, "device " + std::to_string(d));
        if (cudaError_t e = cudaDeviceSynchronize(); e != cudaSuccess)
            return cudaFailure("cudaDeviceSynchronize", e, "device " + std::to_string(d) + " after preparing");
    }
    setSetting(info, "time_ops", m_options.timeOps ? "on" : "off");
    setSetting(info, "timing_events_per_iteration", std::to_string(m_timingEventsPerIteration));
    setSetting(info, "graph_timing",
               m_cuptiOn ? "per node (CUPTI records of the graph's kernel, copy and memset nodes)"
               : m_options.graphNodeTiming ? "per node (captured event-record nodes)"
                                           : "whole graph (one span per launch)");
    std::string how;
    if (m_cuptiOn)
        how = "CUPTI activity records (CONCURRENT_KERNEL, MEMCPY, MEMCPY2, MEMSET) matched by correlation id, on "
              "the host's steady clock; one anchor event per stream before and after each iteration";
    if (m_opEvents)
        how += std::string(how.empty() ? "" : "; plus ") +
               "CUDA events on each op's stream; one origin event per device and iteration" +
               (m_options.shareBoundaryEvents
                    ? "; an op issued to a busy stream (its last timed op's end event not complete, nothing "
                      "enqueued after it) starts at that end event"
                    : "; a start and an end event around every op");
    if (!how.empty())
        setSetting(info, "timing_method", how);
    return anchorAll();
}

Status CudaBackend::checkDevices(const RunPlan& plan)
{
    int count = 0;
    if (cudaError_t e = cudaGetDeviceCount(&count); e != cudaSuccess) {
        (void)cudaGetLastError();
        const CudaProbe probe = probeCuda();
        return runtimeError("no usable GPU: " +
                            (probe.reason.empty() ? std::string(cudaGetErrorString(e)) : probe.reason));
    }
    auto check = [&](int d, const std::string& who) -> Status {
        if (d >= 0 && d < count)
            return {};
        return runtimeError(who + "device " + std::to_string(d) + " does not exist: this machine has " +
                            std::to_string(count) + " CUDA device" + (count == 1 ? "" : "s") +
                            (count > 0 ? " (0.." + std::to_string(count - 1) + ")" : ""));
    };
    m_deviceList = plan.devices();
    for (int d : m_deviceList)
        if (Status st = check(d, ""); !st) {
            m_deviceList.clear();
            return st;
        }
    // Peer copies name their destination device in the op.
    const auto& s = *plan.scenario;
    for (size_t t = 0; t < s.threads.size(); ++t) {
        std::vector<const Op*> stack;
        for (const auto& op : s.threads[t].ops)
            stack.push_back(&op);
        while (!stack.empty()) {
            const Op* op = stack.back();
            stack.pop_back();
            for (const auto& n : op->ops)
                stack.push_back(&n);
            if (op->kind == OpKind::Memcpy && op->copy == CopyKind::P2P) {
                if (Status st = check(op->dstDevice, "the destination of peer copy \"" + displayName(*op) +
                                                         "\" in thread \"" + s.threads[t].name + "\": ");
                    !st) {
                    m_deviceList.clear();
                    return st;
                }
                if (std::find(m_deviceList.begin(), m_deviceList.end(), op->dstDevice) == m_deviceList.end())
                    m_deviceList.push_back(op->dstDevice);
            }
        }
    }
    std::sort(m_deviceList.begin(), m_deviceList.end());
    m_devices.clear();
    m_devices.resize(size_t(m_deviceList.empty() ? 0 : m_deviceList.back() + 1));
    for (int d : m_deviceList) {
        m_devices[size_t(d)] = std::make_unique<DeviceState>();
        m_devices[size_t(d)]->index = d;
    }
    return {};
}

Status CudaBackend::describeDevices(RunInfo& info)
{
    int driver = 0;
    int runtime = 0;
    (void)cudaDriverGetVersion(&driver);
    (void)cudaRuntimeGetVersion(&runtime);
    info.devices.clear();
    for (int d : m_deviceList) {
        cudaDeviceProp prop{};
        if (cudaError_t e = cudaGetDeviceProperties(&prop, d); e != cudaSuccess)
            return cudaFailure("cudaGetDeviceProperties", e, "device " + std::to_string(d));
        auto attr = [d](cudaDeviceAttr a) {
            int v = 0;
            if (cudaDeviceGetAttribute(&v, a, d) != cudaSuccess) {
                (void)cudaGetLastError();
                return std::string("?");
            }
            return std::to_string(v);
        };
        DeviceInfo di;
        di.index = d;
        di.name = prop.name;
        auto add = [&di](std::string k, std::string v) { di.properties.emplace_back(std::move(k), std::move(v)); };
        add("sm_count", std::to_string(prop.multiProcessorCount));
        add("compute_capability", std::to_string(prop.major) + "." + std::to_string(prop.minor));
        add("async_engine_count", std::to_string(prop.asyncEngineCount));
        add("memory_bytes", std::to_string(prop.totalGlobalMem));
        add("clock_khz", attr(cudaDevAttrClockRate));
        add("memory_clock_khz", attr(cudaDevAttrMemoryClockRate));
        add("memory_bus_width_bits", std::to_string(prop.memoryBusWidth));
        add("l2_cache_bytes", std::to_string(prop.l2CacheSize));
        add("max_threads_per_sm", std::to_string(prop.maxThreadsPerMultiProcessor));
        add("max_blocks_per_sm", std::to_string(prop.maxBlocksPerMultiProcessor));
        add("shared_memory_per_sm", std::to_string(prop.sharedMemPerMultiprocessor));
        add("shared_memory_per_block_optin", std::to_string(prop.sharedMemPerBlockOptin));
        add("registers_per_sm", std::to_string(prop.regsPerMultiprocessor));
        add("concurrent_kernels", std::to_string(prop.concurrentKernels));
        int least = 0;
        int greatest = 0;
        if (cudaSetDevice(d) == cudaSuccess && cudaDeviceGetStreamPriorityRange(&least, &greatest) == cudaSuccess)
            add("priority_range", std::to_string(least) + ".." + std::to_string(greatest));
        else
            (void)cudaGetLastError();
        add("driver_version", versionText(driver));
        add("runtime_version", versionText(runtime));
        char bus[32] = {};
        if (cudaDeviceGetPCIBusId(bus, sizeof bus, d) == cudaSuccess)
            add("pci_bus_id", bus);
        else
            (void)cudaGetLastError();
        info.devices.push_back(std::move(di));
        m_devices[size_t(d)]->sharedOptin = int64_t(prop.sharedMemPerBlockOptin);
    }

    // The effective CUDA_DEVICE_MAX_CONNECTIONS: the value in the environment when this process created its
    // CUDA context (the first prepare; cudaSetDevice below creates it).
    std::lock_guard lock(g_contextMutex);
    const char* env = std::getenv("CUDA_DEVICE_MAX_CONNECTIONS");
    const std::string now = env ? env : "";
    if (!g_connectionsAtContext)
        g_connectionsAtContext = now;
    std::string effective = g_connectionsAtContext->empty() ? "8 (default)" : *g_connectionsAtContext;
    if (*g_connectionsAtContext != now)
        effective += " (this process's CUDA context was created with it; " +
                     (now.empty() ? std::string("unsetting it") : "the requested " + now) +
                     " takes effect in a new process only)";
    setSetting(info, "CUDA_DEVICE_MAX_CONNECTIONS", effective);
    return {};
}

Status CudaBackend::createStreams()
{
    const auto& plan = *m_plan;
    m_streams.assign(plan.streams.size(), {});
    // Created in plan order: CUDA assigns hardware work queues round-robin in creation order, which is what the
    // plan (and the simulator) assume.
    for (size_t i = 0; i < plan.streams.size(); ++i) {
        const auto& ps = plan.streams[i];
        auto& st = m_streams[i];
        st.device = ps.device;
        st.kind = ps.kind;
        auto& dev = *m_devices[size_t(ps.device)];
        dev.streams.push_back(int(i));
        if (ps.kind == StreamKind::Blocking || ps.kind == StreamKind::PerThreadDefault)
            dev.legacyBarrier.push_back(int(i));
        switch (ps.kind) {
        case StreamKind::LegacyDefault:
            st.handle = cudaStreamLegacy;
            break;
        case StreamKind::PerThreadDefault:
            st.handle = cudaStreamPerThread; // resolved per issuing host thread and current device
            break;
        case StreamKind::Blocking:
        case StreamKind::NonBlocking: {
            if (cudaError_t e = cudaSetDevice(ps.device); e != cudaSuccess)
                return cudaFailure("cudaSetDevice", e, "device " + std::to_string(ps.device));
            const unsigned flags = ps.kind == StreamKind::NonBlocking ? cudaStreamNonBlocking : cudaStreamDefault;
            if (cudaError_t e = cudaStreamCreateWithPriority(&st.handle, flags, ps.priority); e != cudaSuccess)
                return cudaFailure("cudaStreamCreateWithPriority", e, "stream \"" + ps.name + "\"",
                                   "device " + std::to_string(ps.device) + ", priority " +
                                       std::to_string(ps.priority));
            st.owned = true;
            if (m_options.nvtx)
                nvtxNameCudaStreamA(st.handle, ps.name.c_str());
            break;
        }
        }
    }
    // Lanes: one per CUDA stream. The legacy default stream is one per device, a per-thread default stream one per
    // host thread and device.
    std::map<std::tuple<int, int, int>, int> laneOf;
    for (size_t i = 0; i < plan.streams.size(); ++i) {
        const auto& ps = plan.streams[i];
        std::tuple<int, int, int> key{0, int(i), 0};
        if (ps.kind == StreamKind::LegacyDefault)
            key = {1, ps.device, 0};
        else if (ps.kind == StreamKind::PerThreadDefault)
            key = {2, ps.hostThread, ps.device};
        const auto [it, added] = laneOf.emplace(key, int(laneOf.size()));
        m_streams[i].lane = it->second;
    }
    m_laneCount = laneOf.size();
    m_lanes = std::make_unique<Lane[]>(m_laneCount);
    for (const auto& st : m_streams) {
        Lane& lane = m_lanes[size_t(st.lane)];
        lane.handle = st.handle;
        lane.device = st.device;
        lane.perThread = st.kind == StreamKind::PerThreadDefault;
    }
    for (int d : m_deviceList) {
        auto& dev = *m_devices[size_t(d)];
        dev.legacyLanes.clear();
        for (int b : dev.streams)
            if (m_streams[size_t(b)].kind != StreamKind::NonBlocking)
                dev.legacyLanes.push_back(m_streams[size_t(b)].lane);
        std::sort(dev.legacyLanes.begin(), dev.legacyLanes.end());
        dev.legacyLanes.erase(std::unique(dev.legacyLanes.begin(), dev.legacyLanes.end()), dev.legacyLanes.end());
    }
    for (auto& st : m_streams)
        st.lockLanes = st.kind == StreamKind::LegacyDefault ? m_devices[size_t(st.device)]->legacyLanes
                                                            : std::vector<int>{st.lane};

    // Private capture streams come after the scenario's, so that they do not shift its work-queue mapping.
    const auto& s = *plan.scenario;
    for (const auto& h : plan.hostThreads)
        for (const auto& op : s.threads[size_t(h.thread)].ops) {
            if (op.kind != OpKind::Graph)
                continue;
            const int sp = plan.stream(op.streamIndex, int(&h - plan.hostThreads.data()));
            if (sp < 0)
                continue;
            auto& dev = *m_devices[size_t(plan.streams[size_t(sp)].device)];
            if (dev.captureStream)
                continue;
            if (cudaError_t e = cudaSetDevice(dev.index); e != cudaSuccess)
                return cudaFailure("cudaSetDevice", e, "device " + std::to_string(dev.index));
            if (cudaError_t e = cudaStreamCreateWithFlags(&dev.captureStream, cudaStreamNonBlocking); e != cudaSuccess)
                return cudaFailure("cudaStreamCreateWithFlags", e, "the graph capture stream of device " +
                                                                       std::to_string(dev.index));
        }
    return {};
}

Status CudaBackend::createEvents()
{
    const auto& s = *m_plan->scenario;
    m_events.assign(s.events.size(), {});
    for (size_t i = 0; i < s.events.size(); ++i) {
        auto& ev = m_events[i];
        ev.perDevice.assign(m_devices.size(), nullptr);
        for (int d : m_deviceList) {
            if (cudaError_t e = cudaSetDevice(d); e != cudaSuccess)
                return cudaFailure("cudaSetDevice", e, "device " + std::to_string(d));
            if (cudaError_t e = cudaEventCreateWithFlags(&ev.perDevice[size_t(d)], cudaEventDisableTiming);
                e != cudaSuccess)
                return cudaFailure("cudaEventCreateWithFlags", e, "event \"" + s.events[i] + "\"",
                                   "device " + std::to_string(d));
        }
    }
    return {};
}

Status CudaBackend::enablePeerAccess(RunInfo& info)
{
    const auto& s = *m_plan->scenario;
    std::vector<std::pair<int, int>> pairs;
    std::vector<const Op*> stack;
    for (const auto& h : m_plan->hostThreads) {
        const int hi = int(&h - m_plan->hostThreads.data());
        for (const auto& top : s.threads[size_t(h.thread)].ops) {
            const int sp = m_plan->stream(top.streamIndex, hi);
            const int src = sp >= 0 ? m_plan->streams[size_t(sp)].device : h.device;
            stack.assign(1, &top);
            while (!stack.empty()) {
                const Op* op = stack.back();
                stack.pop_back();
                for (const auto& n : op->ops)
                    stack.push_back(&n);
                if (op->kind == OpKind::Memcpy && op->copy == CopyKind::P2P && op->dstDevice != src)
                    pairs.emplace_back(src, op->dstDevice);
            }
        }
    }
    std::sort(pairs.begin(), pairs.end());
    pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
    for (auto [src, dst] : pairs) {
        std::string state;
        for (auto [a, b] : {std::pair{src, dst}, std::pair{dst, src}}) {
            int can = 0;
            if (cudaError_t e = cudaDeviceCanAccessPeer(&can, a, b); e != cudaSuccess)
                return cudaFailure("cudaDeviceCanAccessPeer", e, "devices " + std::to_string(a) + " and " +
                                                                     std::to_string(b));
            if (!can) {
                state = "not available (copies are staged through host memory)";
                continue;
            }
            if (cudaError_t e = cudaSetDevice(a); e != cudaSuccess)
                return cudaFailure("cudaSetDevice", e, "device " + std::to_string(a));
            const cudaError_t e = cudaDeviceEnablePeerAccess(b, 0);
            if (e == cudaErrorPeerAccessAlreadyEnabled)
                (void)cudaGetLastError();
            else if (e != cudaSuccess)
                return cudaFailure("cudaDeviceEnablePeerAccess", e, "device " + std::to_string(a) + " to peer " +
                                                                        std::to_string(b));
            else
                m_peerEnabled.emplace_back(a, b);
        }
        setSetting(info, "peer_access " + std::to_string(src) + "->" + std::to_string(dst),
                   state.empty() ? "enabled" : state);
    }
    return {};
}

// Device memory every op's buffers need, per device, against what is free: a clear message instead of an
// out-of-memory failure half-way through allocating.
Status CudaBackend::checkMemory()
{
    const auto& s = *m_plan->scenario;
    std::map<int, double> need;
    auto addOp = [&](const Op& op, int device, auto& self) -> void {
        const double bytes = double(std::max<int64_t>(op.bytes, 0));
        switch (op.kind) {
        case OpKind::Kernel: {
            if (!kernels::checkShape(libraryKernel(op.kernel), toDim3(effectiveGrid(op)), toDim3(op.block), op.size)
                     .empty())
                break;
            need[device] += double(
                kernels::bufferNeeds(libraryKernel(op.kernel), op.size, toDim3(effectiveGrid(op)), toDim3(op.block))
                    .totalBytes());
            break;
        }
        case OpKind::Memcpy:
            if (op.copy == CopyKind::D2D)
                need[device] += 2 * bytes;
            else if (op.copy == CopyKind::P2P) {
                need[device] += bytes;
                need[op.dstDevice] += bytes;
            } else
                need[device] += bytes;
            break;
        case OpKind::Memset:
            need[device] += bytes;
            break;
        case OpKind::Graph:
            for (const auto& n : op.ops)
                self(n, device, self);
            break;
        default:
            break;
        }
    };
    for (size_t h = 0; h < m_plan->hostThreads.size(); ++h) {
        const auto& ph = m_plan->hostThreads[h];
        for (const auto& op : s.threads[size_t(ph.thread)].ops) {
            const int sp = m_plan->stream(op.streamIndex, int(h));
            addOp(op, sp >= 0 ? m_plan->streams[size_t(sp)].device : ph.device, addOp);
        }
    }
    for (auto [d, bytes] : need) {
        if (cudaError_t e = cudaSetDevice(d); e != cudaSuccess)
            return cudaFailure("cudaSetDevice", e, "device " + std::to_string(d));
        size_t freeBytes = 0;
        size_t totalBytes = 0;
        if (cudaError_t e = cudaMemGetInfo(&freeBytes, &totalBytes); e != cudaSuccess)
            return cudaFailure("cudaMemGetInfo", e, "device " + std::to_string(d));
        if (bytes > kMaxMemoryShare * double(freeBytes))
            return runtimeError("the scenario's buffers need " + bytesText(bytes) + " of memory on device " +
                                std::to_string(d) + " (every op of every host thread has its own), but only " +
                                bytesText(double(freeBytes)) + " of " + bytesText(double(totalBytes)) +
                                " are free: use smaller sizes or fewer ops");
    }
    return {};
}

Status CudaBackend::allocateDevice(OpResources& res, int device, size_t bytes, void** out)
{
    *out = nullptr;
    // At least 256 bytes, so that zero-byte copies and memsets still get valid pointers.
    bytes = std::max<size_t>(bytes, 256);
    if (cudaError_t e = cudaSetDevice(device); e != cudaSuccess)
        return cudaFailure("cudaSetDevice", e, res.where, "device " + std::to_string(device));
    if (cudaError_t e = cudaMalloc(out, bytes); e != cudaSuccess)
        return cudaFailure("cudaMalloc", e, res.where,
                           bytesText(double(bytes)) + " on device " + std::to_string(device) + ", while preparing");
    res.deviceMemory.push_back({*out, device, int64_t(bytes)});
    // Zeros: real numbers for the kernels, no denormals, no NaNs.
    if (cudaError_t e = cudaMemset(*out, 0, bytes); e != cudaSuccess)
        return cudaFailure("cudaMemset", e, res.where, "while preparing");
    return {};
}

Status CudaBackend::prepareOp(ThreadState& ts, const Op& op, int device, OpResources& res, const std::string& path)
{
    switch (op.kind) {
    case OpKind::Kernel: {
        const auto k = libraryKernel(op.kernel);
        const Dim3 grid = effectiveGrid(op);
        if (std::string why = kernels::checkShape(k, toDim3(grid), toDim3(op.block), op.size); !why.empty())
            return Status(Error{{}, path, why + " (thread \"" + ts.name + "\", op \"" + res.name + "\")"},
                          ErrorClass::BadInput);
        if (op.sharedBytes < 0)
            return Status(Error{{}, path + "/shared", "dynamic shared memory must not be negative"},
                          ErrorClass::BadInput);
        const auto& dev = *m_devices[size_t(device)];
        const int64_t sharedTotal = int64_t(kernels::ownSharedBytes(k, toDim3(op.block))) + op.sharedBytes;
        if (sharedTotal > dev.sharedOptin)
            return runtimeError("op \"" + res.name + "\" of thread \"" + ts.name + "\" needs " +
                                std::to_string(sharedTotal) + " B of dynamic shared memory per block; device " +
                                std::to_string(device) + " allows at most " + std::to_string(dev.sharedOptin) + " B");
        auto& a = res.launch;
        a.kernel = k;
        a.grid = toDim3(grid);
        a.block = toDim3(op.block);
        a.sharedBytes = size_t(op.sharedBytes);
        a.size = op.size;
        a.spinNs = uint64_t(std::llround(std::max(0.0, op.durationUs) * 1000.0));
        a.illegalAddress = !m_options.illegalAddressOp.empty() && res.name == m_options.illegalAddressOp;
        const auto needs = kernels::bufferNeeds(k, op.size, a.grid, a.block);
        void* p = nullptr;
        if (needs.outFloats) {
            if (Status st = allocateDevice(res, device, needs.outFloats * sizeof(float), &p); !st)
                return st;
            a.out = static_cast<float*>(p);
            a.outCount = int64_t(needs.outFloats);
        }
        if (needs.in0Floats) {
            if (Status st = allocateDevice(res, device, needs.in0Floats * sizeof(float), &p); !st)
                return st;
            a.in0 = static_cast<const float*>(p);
        }
        if (needs.in1Floats) {
            if (Status st = allocateDevice(res, device, needs.in1Floats * sizeof(float), &p); !st)
                return st;
            a.in1 = static_cast<const float*>(p);
        }
        if (needs.scratchBytes) {
            if (Status st = allocateDevice(res, device, needs.scratchBytes, &p); !st)
                return st;
            a.scratch = p;
        }
        if (cudaError_t e = cudaSetDevice(device); e != cudaSuccess)
            return cudaFailure("cudaSetDevice", e, res.where);
        if (cudaError_t e = kernels::prepareSharedMemory(k, a.block, a.sharedBytes); e != cudaSuccess)
            return cudaFailure("cudaFuncSetAttribute", e, res.where,
                               std::to_string(sharedTotal) + " B of dynamic shared memory");
        if (cudaError_t e = kernels::preload(k, a.block); e != cudaSuccess)
            return cudaFailure("cudaFuncGetAttributes", e, res.where, "loading the kernel");
        return {};
    }
    case OpKind::Memcpy: {
        res.bytes = size_t(std::max<int64_t>(op.bytes, 0));
        const size_t alloc = std::max<size_t>(res.bytes, 256);
        void* a = nullptr;
        void* b = nullptr;
        res.srcDevice = device;
        res.dstDevice = device;
        if (op.copy == CopyKind::H2D || op.copy == CopyKind::D2H) {
            if (op.pinned) {
                if (cudaError_t e = cudaMallocHost(&res.hostMemory, alloc); e != cudaSuccess)
                    return cudaFailure("cudaMallocHost", e, res.where, bytesText(double(alloc)) + ", while preparing");
                res.hostPinned = true;
            } else {
                res.hostMemory = std::malloc(alloc);
                if (!res.hostMemory)
                    return runtimeError("malloc of " + bytesText(double(alloc)) +
                                        " of pageable host memory failed for " + res.where);
            }
            // Touch every page now, so that first-touch faults do not land in the measured copies.
            std::memset(res.hostMemory, 0, alloc);
            if (Status st = allocateDevice(res, device, res.bytes, &a); !st)
                return st;
            res.src = op.copy == CopyKind::H2D ? res.hostMemory : a;
            res.dst = op.copy == CopyKind::H2D ? a : res.hostMemory;
        } else if (op.copy == CopyKind::D2D) {
            if (Status st = allocateDevice(res, device, res.bytes, &a); !st)
                return st;
            if (Status st = allocateDevice(res, device, res.bytes, &b); !st)
                return st;
            res.src = a;
            res.dst = b;
        } else {
            if (op.dstDevice < 0)
                return Status(Error{{}, path + "/dst_device", "a peer copy needs a destination device"},
                              ErrorClass::BadInput);
            res.dstDevice = op.dstDevice;
            if (Status st = allocateDevice(res, device, res.bytes, &a); !st)
                return st;
            if (Status st = allocateDevice(res, op.dstDevice, res.bytes, &b); !st)
                return st;
            res.src = a;
            res.dst = b;
        }
        return {};
    }
    case OpKind::Memset: {
        res.bytes = size_t(std::max<int64_t>(op.bytes, 0));
        void* a = nullptr;
        if (Status st = allocateDevice(res, device, res.bytes, &a); !st)
            return st;
        res.dst = a;
        return {};
    }
    case OpKind::HostFunc:
        res.hostFunc.us = op.durationUs;
        res.hostFunc.abort = &m_abort;
        return {};
    case OpKind::Graph: {
        res.graph = std::make_unique<GraphResources>();
        auto& g = *res.graph;
        g.device = device;
        g.nodes.resize(op.ops.size());
        for (size_t n = 0; n < op.ops.size(); ++n) {
            const Op& node = op.ops[n];
            auto& nr = g.nodes[n];
            nr.name = displayName(node);
            nr.where = res.where + " node " + std::to_string(n) + " \"" + nr.name + "\"";
            const std::string nodePath = path + "/ops/" + std::to_string(n);
            if (!isCapturable(node.kind))
                return Status(Error{{}, nodePath + "/kind",
                                    "a graph holds kernel, memcpy, memset and host-func ops; \"" +
                                        std::string(toString(node.kind)) + "\" cannot be captured (" + nr.where + ")"},
                              ErrorClass::BadInput);
            if (Status st = prepareOp(ts, node, device, nr, nodePath); !st)
                return st;
        }
        const bool nodeTiming = m_opEvents && !m_cuptiOn && m_options.graphNodeTiming && !op.ops.empty();
        Status st = captureGraph(ts, op, device, res, nodeTiming);
        if (!st && nodeTiming) // per-node timing is a refinement: fall back to one span for the whole graph
            st = captureGraph(ts, op, device, res, false);
        return st;
    }
    default:
        return {};
    }
}

Status CudaBackend::captureGraph(ThreadState&, const Op& op, int device, OpResources& res, bool nodeTiming)
{
    auto& g = *res.graph;
    auto& dev = *m_devices[size_t(device)];
    // Drop what an earlier attempt left.
    if (g.exec)
        (void)cudaGraphExecDestroy(g.exec);
    if (g.graph)
        (void)cudaGraphDestroy(g.graph);
    g.exec = nullptr;
    g.graph = nullptr;
    for (auto ev : g.placeholders)
        (void)cudaEventDestroy(ev);
    g.placeholders.clear();
    g.timingNodes.clear();
    g.nodeTiming = nodeTiming;

    if (cudaError_t e = cudaSetDevice(device); e != cudaSuccess)
        return cudaFailure("cudaSetDevice", e, res.where);
    if (nodeTiming) {
        g.placeholders.resize(op.ops.size() + 1, nullptr);
        for (auto& ev : g.placeholders)
            if (cudaError_t e = cudaEventCreateWithFlags(&ev, cudaEventDefault); e != cudaSuccess)
                return cudaFailure("cudaEventCreateWithFlags", e, res.where, "graph timing events");
    }
    cudaStream_t cs = dev.captureStream;
    if (cudaError_t e = cudaStreamBeginCapture(cs, cudaStreamCaptureModeThreadLocal); e != cudaSuccess)
        return cudaFailure("cudaStreamBeginCapture", e, res.where);
    auto abandon = [&](std::string_view api, cudaError_t e, const std::string& where, std::string_view detail) {
        cudaGraph_t partial = nullptr;
        (void)cudaStreamEndCapture(cs, &partial);
        if (partial)
            (void)cudaGraphDestroy(partial);
        return cudaFailure(api, e, where, detail);
    };
    if (nodeTiming)
        if (cudaError_t e = cudaEventRecordWithFlags(g.placeholders[0], cs, cudaEventRecordExternal); e != cudaSuccess)
            return abandon("cudaEventRecordWithFlags", e, res.where, "graph timing node, during capture");
    for (size_t n = 0; n < op.ops.size(); ++n) {
        if (cudaError_t e = enqueue(op.ops[n], g.nodes[n], cs); e != cudaSuccess) {
            std::string detail = "during capture";
            if (op.ops[n].kind == OpKind::Memcpy && !op.ops[n].pinned &&
                (op.ops[n].copy == CopyKind::H2D || op.ops[n].copy == CopyKind::D2H))
                detail += "; copies in a graph need pinned host memory";
            else if (op.ops[n].kind == OpKind::Kernel)
                detail = launchDetail(op.ops[n], g.nodes[n]) + ", " + detail;
            return abandon(apiName(op.ops[n]), e, g.nodes[n].where, detail);
        }
        if (nodeTiming)
            if (cudaError_t e = cudaEventRecordWithFlags(g.placeholders[n + 1], cs, cudaEventRecordExternal);
                e != cudaSuccess)
                return abandon("cudaEventRecordWithFlags", e, res.where, "graph timing node, during capture");
    }
    if (cudaError_t e = cudaStreamEndCapture(cs, &g.graph); e != cudaSuccess)
        return cudaFailure("cudaStreamEndCapture", e, res.where);
    if (cudaError_t e = cudaGraphInstantiate(&g.exec, g.graph, 0); e != cudaSuccess)
        return cudaFailure("cudaGraphInstantiate", e, res.where);
    if (cudaError_t e = cudaGraphUpload(g.exec, cs); e != cudaSuccess)
        return cudaFailure("cudaGraphUpload", e, res.where);
    if (!nodeTiming)
        return {};

    // Find the captured event-record nodes by their placeholder events.
    size_t count = 0;
    if (cudaError_t e = cudaGraphGetNodes(g.graph, nullptr, &count); e != cudaSuccess)
        return cudaFailure("cudaGraphGetNodes", e, res.where);
    std::vector<cudaGraphNode_t> nodes(count);
    if (cudaError_t e = cudaGraphGetNodes(g.graph, nodes.data(), &count); e != cudaSuccess)
        return cudaFailure("cudaGraphGetNodes", e, res.where);
    g.timingNodes.assign(g.placeholders.size(), nullptr);
    for (auto node : nodes) {
        cudaGraphNodeType type{};
        if (cudaGraphNodeGetType(node, &type) != cudaSuccess || type != cudaGraphNodeTypeEventRecord)
            continue;
        cudaEvent_t ev = nullptr;
        if (cudaGraphEventRecordNodeGetEvent(node, &ev) != cudaSuccess)
            continue;
        const auto it = std::find(g.placeholders.begin(), g.placeholders.end(), ev);
        if (it != g.placeholders.end())
            g.timingNodes[size_t(it - g.placeholders.begin())] = node;
    }
    (void)cudaGetLastError();
    if (std::find(g.timingNodes.begin(), g.timingNodes.end(), nullptr) != g.timingNodes.end())
        return runtimeError("the timing nodes of graph " + res.where + " were not found after capture");
    g.launchEvents.assign(g.placeholders.size(), nullptr);
    return {};
}

Status CudaBackend::prepareThreads()
{
    const auto& plan = *m_plan;
    const auto& s = *plan.scenario;
    m_threads.clear();
    const size_t iterations = size_t(plan.totalIterations());
    for (size_t h = 0; h < plan.hostThreads.size(); ++h) {
        const auto& ph = plan.hostThreads[h];
        const auto& th = s.threads[size_t(ph.thread)];
        auto ts = std::make_unique<ThreadState>();
        ts->hostThread = int(h);
        ts->thread = ph.thread;
        ts->device = ph.device;
        ts->name = ph.name;
        ts->ops.resize(th.ops.size());
        size_t perPass = 0;
        size_t timingsPerPass = 0;
        size_t hostFuncsPerPass = 0;
        for (size_t i = 0; i < th.ops.size(); ++i) {
            const Op& op = th.ops[i];
            auto& res = ts->ops[i];
            res.name = displayName(op);
            res.where = "thread \"" + ph.name + "\" op " + std::to_string(i) + " \"" + res.name + "\"";
            const std::string path = "/threads/" + std::to_string(ph.thread) + "/ops/" + std::to_string(i);
            const int sp = plan.stream(op.streamIndex, int(h));
            const bool needsStream = isGpuOp(op.kind) || op.kind == OpKind::Record || op.kind == OpKind::Wait ||
                                     op.kind == OpKind::StreamSync;
            if (needsStream && sp < 0)
                return Status(Error{{}, path + "/stream", res.where + " needs a stream"},
                              ErrorClass::BadInput);
            if ((op.kind == OpKind::Record || op.kind == OpKind::Wait || op.kind == OpKind::EventSync) &&
                (op.eventIndex < 0 || size_t(op.eventIndex) >= m_events.size()))
                return Status(Error{{}, path + "/event", res.where + " names no known event"},
                              ErrorClass::BadInput);
            const int device = sp >= 0 ? plan.streams[size_t(sp)].device : ph.device;
            if (Status st = prepareOp(*ts, op, device, res, path); !st)
                return st;
            perPass += 1 + op.ops.size();
            hostFuncsPerPass += op.kind == OpKind::HostFunc;
            if (isGpuOp(op.kind))
                timingsPerPass += op.kind == OpKind::Graph ? std::max<size_t>(1, op.ops.size()) : 1;
        }
        const size_t repeat = size_t(std::max(1, th.repeat));
        const size_t workers = size_t(std::max(1, th.workers));
        const size_t tasks = workers == 1 ? repeat : std::min(repeat, (repeat + workers - 1) / workers * 2);
        ts->expectedRecords = perPass * tasks * iterations;
        ts->expectedTimings = timingsPerPass * tasks;
        ts->timings.reserve(ts->expectedTimings);
        if ((m_opEvents || m_cuptiOn) && hostFuncsPerPass > 0) {
            // A worker may take every task of its pool: `repeat` bounds its passes.
            ts->hostFuncSlotCount = hostFuncsPerPass * repeat;
            ts->hostFuncSlots = std::make_unique<HostFuncSlot[]>(ts->hostFuncSlotCount);
            ts->hostFuncTimings.reserve(ts->hostFuncSlotCount);
        }
        ts->mallocs.reserve(16);

        // Free ops that find no live allocation of a malloc op take one allocated ahead (outside the measured
        // calls); count them over one iteration's passes.
        int64_t live = 0;
        for (size_t pass = 0; pass < repeat && ts->freePoolSizes.size() < kMaxFreePool; ++pass)
            for (const auto& op : th.ops) {
                if (op.kind == OpKind::Malloc)
                    ++live;
                else if (op.kind == OpKind::Free) {
                    if (live > 0)
                        --live;
                    else if (ts->freePoolSizes.size() < kMaxFreePool)
                        ts->freePoolSizes.push_back(op.bytes);
                }
            }
        m_threads.push_back(std::move(ts));
    }
    return {};
}

// One pool of timing events per device, sized for one iteration (the events are read back and reused at the end
// of every iteration, so the pool does not grow with the iteration count).
Status CudaBackend::createTimingPools()
{
    const auto& plan = *m_plan;
    const auto& s = *plan.scenario;
    std::map<int, size_t> perDevice;
    if (m_opEvents) {
        for (size_t t = 0; t < s.threads.size(); ++t) {
            const auto& th = s.threads[t];
            const int h0 = plan.firstHostThread[t];
            for (const auto& op : th.ops) {
                if (!isGpuOp(op.kind))
                    continue;
                const int sp = plan.stream(op.streamIndex, h0);
                if (sp < 0)
                    continue;
                const bool nodes = op.kind == OpKind::Graph && m_options.graphNodeTiming && !op.ops.empty();
                const size_t events = nodes ? op.ops.size() + 1 : 2;
                perDevice[plan.streams[size_t(sp)].device] += events * size_t(std::max(1, th.repeat));
            }
        }
    }
    m_timingEventsPerIteration = 0;
    for (int d : m_deviceList) {
        auto& dev = *m_devices[size_t(d)];
        if (cudaError_t e = cudaSetDevice(d); e != cudaSuccess)
            return cudaFailure("cudaSetDevice", e, "device " + std::to_string(d));
        const size_t n = m_opEvents ? perDevice[d] + kTimingEventMargin : 0;
        dev.timingPool.assign(n, nullptr);
        for (auto& ev : dev.timingPool)
            if (cudaError_t e = cudaEventCreateWithFlags(&ev, cudaEventDefault); e != cudaSuccess)
                return cudaFailure("cudaEventCreateWithFlags", e, "the timing events of device " + std::to_string(d),
                                   std::to_string(n) + " events");
        for (auto& ev : dev.originCandidates)
            if (cudaError_t e = cudaEventCreateWithFlags(&ev, cudaEventDefault); e != cudaSuccess)
                return cudaFailure("cudaEventCreateWithFlags", e, "the origin events of device " + std::to_string(d));
        m_timingEventsPerIteration += int64_t(n);
    }
    // CUPTI's anchor events, two per lane.
    for (size_t l = 0; l < m_laneCount && m_cuptiOn && !m_opEvents; ++l) {
        Lane& lane = m_lanes[l];
        if (cudaError_t e = cudaSetDevice(lane.device); e != cudaSuccess)
            return cudaFailure("cudaSetDevice", e, "device " + std::to_string(lane.device));
        for (cudaEvent_t* ev : {&lane.anchorStart, &lane.anchorEnd})
            if (cudaError_t e = cudaEventCreateWithFlags(ev, cudaEventDefault); e != cudaSuccess)
                return cudaFailure("cudaEventCreateWithFlags", e, "the anchor events of a stream");
        m_timingEventsPerIteration += 2;
    }
    return {};
}

Status CudaBackend::fillFreePools()
{
    for (auto& tsp : m_threads) {
        auto& ts = *tsp;
        if (ts.freePool.size() >= ts.freePoolSizes.size())
            continue;
        if (cudaError_t e = cudaSetDevice(ts.device); e != cudaSuccess)
            return cudaFailure("cudaSetDevice", e, "thread \"" + ts.name + "\"");
        for (size_t i = ts.freePool.size(); i < ts.freePoolSizes.size(); ++i) {
            const int64_t bytes = ts.freePoolSizes[i];
            void* p = nullptr;
            if (cudaError_t e = cudaMalloc(&p, size_t(std::max<int64_t>(bytes, 1))); e != cudaSuccess)
                return cudaFailure("cudaMalloc", e, "thread \"" + ts.name + "\"",
                                   bytesText(double(bytes)) + " for a free op, while preparing");
            ts.freePool.push_back({p, ts.device, bytes});
        }
    }
    return {};
}

void CUDART_CB noHostFunc(void*) {}

// Timing "cupti" without API callbacks (they cost each launch about 0.4-1.2 us on an H200: bench_cupti_overhead):
// CUPTI gives every API call the next correlation id, so a stream's records, by id, are its calls in order — where
// one host thread issues all of a stream's work. The rule: every stream that gets a kernel, copy or memset is one the
// backend created and gets them from one host thread; no graphs and no peer copies (whose records name streams
// and devices of their own). Anything else keeps the callbacks and their ids.
bool CudaBackend::cuptiCanMatchByOrder() const
{
    const RunPlan& plan = *m_plan;
    const Scenario& s = *plan.scenario;
    std::vector<int> issuer(plan.streams.size(), -1);
    for (size_t h = 0; h < plan.hostThreads.size(); ++h) {
        for (const Op& op : s.threads[size_t(plan.hostThreads[h].thread)].ops) {
            if (op.kind == OpKind::Graph || (op.kind == OpKind::Memcpy && op.copy == CopyKind::P2P))
                return false;
            if (op.kind != OpKind::Kernel && op.kind != OpKind::Memcpy && op.kind != OpKind::Memset)
                continue;
            const int sp = plan.stream(op.streamIndex, int(h));
            if (sp < 0)
                return false;
            const StreamKind kind = plan.streams[size_t(sp)].kind;
            if (kind != StreamKind::Blocking && kind != StreamKind::NonBlocking)
                return false;
            if (issuer[size_t(sp)] >= 0 && issuer[size_t(sp)] != int(h))
                return false;
            issuer[size_t(sp)] = int(h);
        }
    }
    return true;
}

// CUPTI's id of every lane's stream, for matching by order; where one cannot be had, the callbacks go back on.
void CudaBackend::resolveCuptiStreams()
{
    m_laneCuptiStream.assign(m_laneCount, 0);
    if (!m_cuptiByOrder)
        return;
    for (size_t l = 0; l < m_laneCount; ++l) {
        const Lane& lane = m_lanes[l];
        if (lane.perThread || lane.handle == cudaStreamLegacy || lane.handle == nullptr)
            continue;
        m_laneCuptiStream[l] = CuptiTracer::streamId(lane.handle);
        if (m_laneCuptiStream[l] == 0) {
            (void)CuptiTracer::instance().setApiCallbacks(true); // should that fail, its ops say "without records"
            m_cuptiByOrder = false;
            return;
        }
    }
}

// The first kernel launch and host function of a process cost the host far more than later ones (seen on an H200:
// 30 us and 14 us against 5 us and 4 us, with the kernel's module already loaded): pay that here, on every stream
// the scenario created, so that the first measured calls show what the calls cost.
Status CudaBackend::warmUpStreams()
{
    for (size_t i = 0; i < m_streams.size(); ++i) {
        const auto& st = m_streams[i];
        if (st.kind == StreamKind::PerThreadDefault) // belongs to host threads that do not exist yet
            continue;
        const std::string where = "stream \"" + m_plan->streams[i].name + "\"";
        if (cudaError_t e = cudaSetDevice(st.device); e != cudaSuccess)
            return cudaFailure("cudaSetDevice", e, where);
        kernels::LaunchArgs a;
        a.kernel = kernels::Kernel::Empty;
        a.stream = st.handle;
        if (cudaError_t e = kernels::launch(a); e != cudaSuccess)
            return cudaFailure("cudaLaunchKernel", e, where, "warming up the stream");
        if (cudaError_t e = cudaLaunchHostFunc(st.handle, noHostFunc, nullptr); e != cudaSuccess)
            return cudaFailure("cudaLaunchHostFunc", e, where, "warming up the stream");
    }
    return {};
}

// Maps each device's clock onto the host clock for the coming iteration: the origin event completed somewhere in
// [t0, t1] around its record and synchronize; its midpoint is the estimate and half the width the error bound.
Status CudaBackend::anchorAll()
{
    for (int d : m_deviceList) {
        auto& dev = *m_devices[size_t(d)];
        if (cudaError_t e = cudaSetDevice(d); e != cudaSuccess)
            return cudaFailure("cudaSetDevice", e, "device " + std::to_string(d));
        int64_t bestWidth = -1;
        for (auto ev : dev.originCandidates) {
            const int64_t t0 = hostNowNs();
            const cudaError_t recorded = cudaEventRecord(ev, cudaStreamLegacy);
            const cudaError_t e = recorded == cudaSuccess ? cudaEventSynchronize(ev) : recorded;
            const int64_t t1 = hostNowNs();
            if (e != cudaSuccess)
                return cudaFailure(recorded != cudaSuccess ? "cudaEventRecord" : "cudaEventSynchronize", e,
                                   "the origin event of device " + std::to_string(d));
            if (bestWidth < 0 || t1 - t0 < bestWidth) {
                bestWidth = t1 - t0;
                dev.origin = ev;
                dev.anchorNs = t0 + (t1 - t0) / 2;
            }
        }
        if (m_info)
            m_info->clockAlignmentErrorNs = std::max(m_info->clockAlignmentErrorNs, double(bestWidth) / 2.0);
    }
    if (m_cuptiOn) {
        int64_t error = 0;
        m_cuptiOffset = CuptiTracer::instance().clockOffsetNs(&error);
        if (m_info)
            m_info->clockAlignmentErrorNs = std::max(m_info->clockAlignmentErrorNs, double(error));
        recordStartAnchors();
    }
    return {};
}

// ---------------------------------------------------------------------------------------------------------------
// issue path

Status CudaBackend::beginThread(HostThreadContext& ctx)
{
    if (!m_prepared || ctx.hostThread < 0 || size_t(ctx.hostThread) >= m_threads.size())
        return runtimeError("the CUDA backend was not prepared for host thread " + std::to_string(ctx.hostThread));
    auto& ts = *m_threads[size_t(ctx.hostThread)];
    ctx.backendData = &ts;
    ts.records = ctx.records;
    ts.iterationFirstRecord = ts.records ? ts.records->size() : 0;
    if (!ts.reserved && ts.records) {
        ts.records->reserve(ts.records->size() + ts.expectedRecords);
        ts.reserved = true;
    }
    // Bind the host thread to its device again at each iteration (an op may have left another device current).
    ts.currentDevice = -1;
    if (m_options.nvtx)
        nvtxNameOsThreadA(uint32_t(syscall(SYS_gettid)), ts.name.c_str());
    if (cudaError_t e = cudaSetDevice(ts.device); e != cudaSuccess)
        return cudaFailure("cudaSetDevice", e, "thread \"" + ts.name + "\"", "device " + std::to_string(ts.device));
    ts.currentDevice = ts.device;
    return {};
}

void CudaBackend::endThread(HostThreadContext&) {}

Status CudaBackend::useDevice(ThreadState& ts, int device, std::string_view where)
{
    if (ts.currentDevice == device)
        return {};
    // Kernel launches and the legacy / per-thread default stream handles need the stream's device current.
    if (cudaError_t e = cudaSetDevice(device); e != cudaSuccess)
        return cudaFailure("cudaSetDevice", e, where, "device " + std::to_string(device));
    ts.currentDevice = device;
    return {};
}

cudaEvent_t CudaBackend::acquireEvent(int device)
{
    auto& dev = *m_devices[size_t(device)];
    const size_t i = dev.nextTiming.fetch_add(1, std::memory_order_relaxed);
    if (i < dev.timingPool.size())
        return dev.timingPool[i];
    // More GPU ops than the plan said (should not happen): grow, reusing what earlier iterations created.
    std::lock_guard lock(dev.overflowMutex);
    if (dev.overflowUsed < dev.overflow.size())
        return dev.overflow[dev.overflowUsed++];
    cudaEvent_t ev = nullptr;
    if (cudaEventCreateWithFlags(&ev, cudaEventDefault) != cudaSuccess) {
        (void)cudaGetLastError();
        return nullptr;
    }
    dev.overflow.push_back(ev);
    ++dev.overflowUsed;
    return ev;
}

std::optional<LaneGuard> CudaBackend::lockLanes(const StreamState& st)
{
    if (!m_opEvents || st.lockLanes.empty())
        return std::nullopt;
    return std::optional<LaneGuard>{std::in_place, m_lanes.get(), st.lockLanes};
}

// The start event of a timed op about to be enqueued to `st` (its lanes locked): the lane's last end event while
// that has not completed yet (see Lane), else a fresh event recorded now.
Status CudaBackend::startEvent(const StreamState& st, const std::string& where, cudaEvent_t& out)
{
    m_timedStarts.fetch_add(1, std::memory_order_relaxed);
    Lane& lane = m_lanes[size_t(st.lane)];
    if (m_options.shareBoundaryEvents && lane.lastEnd) {
        const cudaError_t q = cudaEventQuery(lane.lastEnd);
        if (q == cudaErrorNotReady) {
            out = lane.lastEnd;
            m_sharedStarts.fetch_add(1, std::memory_order_relaxed);
            return {};
        }
        if (q != cudaSuccess)
            return cudaFailure("cudaEventQuery", q, where, "the previous op's end event");
    }
    out = acquireEvent(st.device);
    if (!out)
        return runtimeError("cudaEventCreate failed for " + where + ": out of timing events");
    if (cudaError_t e = cudaEventRecord(out, st.handle); e != cudaSuccess)
        return cudaFailure("cudaEventRecord", e, where, "start timing event");
    return {};
}

// After an enqueue to `st` (its lanes locked): `end` is the lane's new last end event, or null where what was
// enqueued was no timed op ending in an event. A legacy-default-stream enqueue is something the next op of every
// blocking stream of the device waits for, and its own next op waits for the blocking streams: none of them
// shares an end event with it.
void CudaBackend::endLane(const StreamState& st, cudaEvent_t end)
{
    if (!m_opEvents)
        return;
    if (st.kind == StreamKind::LegacyDefault) {
        for (int l : st.lockLanes)
            m_lanes[size_t(l)].lastEnd = nullptr;
        return;
    }
    m_lanes[size_t(st.lane)].lastEnd = end;
}

cudaError_t CudaBackend::enqueue(const Op& op, const OpResources& res, cudaStream_t stream)
{
    switch (op.kind) {
    case OpKind::Kernel: {
        kernels::LaunchArgs a = res.launch;
        a.stream = stream;
        return kernels::launch(a);
    }
    case OpKind::Memcpy:
        switch (op.copy) {
        case CopyKind::H2D: return cudaMemcpyAsync(res.dst, res.src, res.bytes, cudaMemcpyHostToDevice, stream);
        case CopyKind::D2H: return cudaMemcpyAsync(res.dst, res.src, res.bytes, cudaMemcpyDeviceToHost, stream);
        case CopyKind::D2D: return cudaMemcpyAsync(res.dst, res.src, res.bytes, cudaMemcpyDeviceToDevice, stream);
        case CopyKind::P2P:
            return cudaMemcpyPeerAsync(res.dst, res.dstDevice, res.src, res.srcDevice, res.bytes, stream);
        }
        return cudaErrorInvalidValue;
    case OpKind::Memset:
        return cudaMemsetAsync(res.dst, 0, res.bytes, stream);
    case OpKind::HostFunc:
        return cudaLaunchHostFunc(stream, runHostFunc, const_cast<HostFuncArg*>(&res.hostFunc));
    default:
        return cudaErrorInvalidValue;
    }
}

std::string CudaBackend::launchDetail(const Op& op, const OpResources& res) const
{
    if (op.kind != OpKind::Kernel)
        return {};
    return "grid " + dimText(effectiveGrid(op)) + ", block " + dimText(op.block) + ", " +
           std::to_string(kernels::ownSharedBytes(res.launch.kernel, res.launch.block) + res.launch.sharedBytes) +
           " B dynamic shared memory";
}

Status CudaBackend::issue(HostThreadContext& ctx, const PlannedOp& p)
{
    auto* tsp = static_cast<ThreadState*>(ctx.backendData);
    if (!tsp || !p.op || p.opIndex < 0 || size_t(p.opIndex) >= tsp->ops.size())
        return runtimeError("the CUDA backend got an op it did not prepare");
    if (m_abort.load(std::memory_order_relaxed))
        return runtimeError("run aborted");
    auto& ts = *tsp;
    auto& res = ts.ops[size_t(p.opIndex)];
    NvtxRange range(m_options.nvtx, res.name.c_str());
    OpRecord r;
    r.thread = p.thread;
    r.op = p.opIndex;
    r.iteration = p.iteration;
    r.task = p.task;
    r.stream = p.stream;
    switch (p.op->kind) {
    case OpKind::Kernel:
    case OpKind::Memcpy:
    case OpKind::Memset:
    case OpKind::HostFunc:
        return issueGpuOp(ts, p, res, r);
    case OpKind::Graph:
        return issueGraph(ts, p, res, r);
    case OpKind::Record:
        return issueRecord(ts, p, res, r);
    case OpKind::Wait:
        return issueWait(ts, p, res, r);
    case OpKind::StreamSync:
    case OpKind::EventSync:
    case OpKind::DeviceSync:
        return issueSync(ts, p, res, r);
    case OpKind::HostWork:
        r.apiKind = SpanKind::HostWork;
        r.stream = -1;
        r.apiStart = hostNowNs();
        spinHost(p.op->durationUs, &m_abort);
        r.apiEnd = hostNowNs();
        ts.records->push_back(r);
        return {};
    case OpKind::Malloc:
        return issueMalloc(ts, p, res, r);
    case OpKind::Free:
        return issueFree(ts, p, res, r);
    }
    return runtimeError("unknown op kind in " + res.where);
}

Status CudaBackend::issueGpuOp(ThreadState& ts, const PlannedOp& p, OpResources& res, OpRecord r)
{
    const auto& st = m_streams[size_t(p.stream)];
    if (Status s = useDevice(ts, st.device, res.where); !s)
        return s;
    if (p.op->kind == OpKind::HostFunc && (m_opEvents || m_cuptiOn) && ts.nextHostFuncSlot < ts.hostFuncSlotCount)
        return issueTimedHostFunc(ts, p, res, r);
    Timing t;
    const auto guard = lockLanes(st);
    if (m_opEvents) {
        t.device = st.device;
        if (Status started = startEvent(st, res.where, t.start); !started)
            return started; // the run ends; collect() resets the lanes
        endLane(st, nullptr); // until the end event is recorded
        t.end = acquireEvent(st.device);
        if (!t.end)
            return runtimeError("cudaEventCreate failed for " + res.where + ": out of timing events");
    }
    r.gpuKind = gpuSpanKindOf(*p.op);
    const bool cupti = m_cuptiOn && p.op->kind != OpKind::HostFunc;
    if (cupti) {
        anchorLane(st);
        CuptiTracer::resetCorrelationIds();
    }
    r.apiStart = hostNowNs();
    const cudaError_t e = enqueue(*p.op, res, st.handle);
    r.apiEnd = hostNowNs();
    const CorrelationIds ids = cupti ? CuptiTracer::lastCorrelationIds() : CorrelationIds{};
    if (e != cudaSuccess)
        return cudaFailure(apiName(*p.op), e, res.where, launchDetail(*p.op, res));
    if (m_opEvents) {
        if (cudaError_t e2 = cudaEventRecord(t.end, st.handle); e2 != cudaSuccess)
            return cudaFailure("cudaEventRecord", e2, res.where, "end timing event");
        endLane(st, t.end);
    }
    const auto index = uint32_t(ts.records->size());
    ts.records->push_back(r);
    if (m_opEvents) {
        t.record = index;
        ts.timings.push_back(t);
    }
    if (cupti)
        ts.cupti.push_back({ts.records, r.iteration, index, ids, 0, 0, st.lane});
    const RecordRef ref{uint32_t(ts.hostThread), index};
    std::lock_guard lock(m_depMutex);
    noteGpuOp(p.stream, ref, ref);
    return {};
}

Status CudaBackend::issueTimedHostFunc(ThreadState& ts, const PlannedOp& p, OpResources& res, OpRecord r)
{
    const auto& st = m_streams[size_t(p.stream)];
    HostFuncSlot& slot = ts.hostFuncSlots[ts.nextHostFuncSlot++];
    slot.arg = &res.hostFunc;
    slot.start.store(-1, std::memory_order_relaxed);
    slot.end.store(-1, std::memory_order_relaxed);
    r.gpuKind = SpanKind::HostFunc;
    const auto guard = lockLanes(st);
    endLane(st, nullptr); // timed from inside: the next op needs a start event of its own
    r.apiStart = hostNowNs();
    const cudaError_t e = cudaLaunchHostFunc(st.handle, runTimedHostFunc, &slot);
    r.apiEnd = hostNowNs();
    if (e != cudaSuccess)
        return cudaFailure("cudaLaunchHostFunc", e, res.where);
    const auto index = uint32_t(ts.records->size());
    ts.records->push_back(r);
    ts.hostFuncTimings.emplace_back(index, &slot);
    const RecordRef ref{uint32_t(ts.hostThread), index};
    std::lock_guard lock(m_depMutex);
    noteGpuOp(p.stream, ref, ref);
    return {};
}

Status CudaBackend::issueGraph(ThreadState& ts, const PlannedOp& p, OpResources& res, OpRecord r)
{
    const auto& st = m_streams[size_t(p.stream)];
    auto& g = *res.graph;
    if (Status s = useDevice(ts, st.device, res.where); !s)
        return s;
    // CUPTI records every kernel, copy and memset node; events time the graph as a whole or per node.
    const bool cupti = m_cuptiOn;
    const bool nodes = m_opEvents && !cupti && g.nodeTiming;
    const bool whole = m_opEvents && !cupti && !g.nodeTiming;
    Timing t;
    t.device = st.device;
    const auto guard = lockLanes(st);
    if (nodes) {
        // Fresh events into the captured event-record nodes; takes effect for this launch only.
        for (size_t k = 0; k < g.timingNodes.size(); ++k) {
            g.launchEvents[k] = acquireEvent(st.device);
            if (!g.launchEvents[k])
                return runtimeError("cudaEventCreate failed for " + res.where + ": out of timing events");
            if (cudaError_t e = cudaGraphExecEventRecordNodeSetEvent(g.exec, g.timingNodes[k], g.launchEvents[k]);
                e != cudaSuccess)
                return cudaFailure("cudaGraphExecEventRecordNodeSetEvent", e, res.where);
        }
    } else if (whole) {
        if (Status started = startEvent(st, res.where, t.start); !started)
            return started;
        t.end = acquireEvent(st.device);
        if (!t.end)
            return runtimeError("cudaEventCreate failed for " + res.where + ": out of timing events");
    }
    // (Per-node timing needs no start: the graph begins with its own captured event-record node.)
    endLane(st, nullptr); // until the end event is recorded
    r.gpuKind = SpanKind::Kernel;
    if (cupti) {
        anchorLane(st);
        CuptiTracer::resetCorrelationIds();
    }
    r.apiStart = hostNowNs();
    const cudaError_t e = cudaGraphLaunch(m_untimedNow && g.untimedExec ? g.untimedExec : g.exec, st.handle);
    r.apiEnd = hostNowNs();
    const CorrelationIds ids = cupti ? CuptiTracer::lastCorrelationIds() : CorrelationIds{};
    if (e != cudaSuccess)
        return cudaFailure("cudaGraphLaunch", e, res.where);
    if (whole) {
        if (cudaError_t e2 = cudaEventRecord(t.end, st.handle); e2 != cudaSuccess)
            return cudaFailure("cudaEventRecord", e2, res.where, "end timing event");
        endLane(st, t.end);
    } else if (nodes) {
        endLane(st, g.launchEvents.back()); // the graph's last node: its final event-record node
    }

    const auto graphIndex = uint32_t(ts.records->size());
    ts.records->push_back(r);
    const auto h = uint32_t(ts.hostThread);
    RecordRef first{h, graphIndex};
    RecordRef last = first;
    if (whole) {
        t.record = graphIndex;
        ts.timings.push_back(t);
    } else if (nodes || cupti) {
        // One record per node. Host-function nodes leave no CUPTI record: under CUPTI the nodes that have one, in
        // graph order, take the records.
        CuptiPending pending{ts.records, r.iteration, graphIndex, ids, uint32_t(ts.records->size()), 0, st.lane};
        for (size_t n = 0; n < g.nodes.size(); ++n) {
            if (cupti && p.op->ops[n].kind == OpKind::HostFunc)
                continue;
            OpRecord nr = r;
            nr.node = int(n);
            nr.apiStart = nr.apiEnd = -1;
            nr.gpuKind = gpuSpanKindOf(p.op->ops[n]);
            const auto index = uint32_t(ts.records->size());
            ts.records->push_back(nr);
            if (nodes)
                ts.timings.push_back({index, st.device, g.launchEvents[n], g.launchEvents[n + 1]});
            if (pending.nodeCount++ == 0)
                first = {h, index};
            last = {h, index};
        }
        if (cupti)
            ts.cupti.push_back(pending);
    }
    std::lock_guard lock(m_depMutex);
    if (nodes || (cupti && first.index != graphIndex))
        m_deps.push_back({{h, graphIndex}, first, FlowKind::Launch, true, false});
    noteGpuOp(p.stream, first, last);
    return {};
}

Status CudaBackend::issueRecord(ThreadState& ts, const PlannedOp& p, OpResources& res, OpRecord r)
{
    auto& st = m_streams[size_t(p.stream)];
    if (Status s = useDevice(ts, st.device, res.where); !s)
        return s;
    auto& ev = m_events[size_t(p.op->eventIndex)];
    cudaEvent_t handle = ev.perDevice[size_t(st.device)];
    cudaError_t e = cudaSuccess;
    {
        const auto guard = lockLanes(st);
        endLane(st, nullptr); // something in the stream between two timed ops
        // Held across the call: the record must see the stream's last op, and a concurrent wait the new record.
        std::lock_guard lock(m_depMutex);
        r.apiStart = hostNowNs();
        e = cudaEventRecord(handle, st.handle);
        r.apiEnd = hostNowNs();
        if (e == cudaSuccess) {
            ev.latest = handle;
            ev.captured = st.last;
        }
    }
    if (e != cudaSuccess)
        return cudaFailure("cudaEventRecord", e, res.where);
    ts.records->push_back(r);
    return {};
}

Status CudaBackend::issueWait(ThreadState& ts, const PlannedOp& p, OpResources& res, OpRecord r)
{
    auto& st = m_streams[size_t(p.stream)];
    if (Status s = useDevice(ts, st.device, res.where); !s)
        return s;
    auto& ev = m_events[size_t(p.op->eventIndex)];
    cudaError_t e = cudaSuccess;
    {
        const auto guard = lockLanes(st);
        endLane(st, nullptr); // the stream's next op may start when the event completes, not when the stream is free
        std::lock_guard lock(m_depMutex);
        // Never recorded: CUDA makes the wait a no-op; wait on this device's handle, which holds no record.
        cudaEvent_t handle = ev.latest ? ev.latest : ev.perDevice[size_t(st.device)];
        r.apiStart = hostNowNs();
        e = cudaStreamWaitEvent(st.handle, handle, 0);
        r.apiEnd = hostNowNs();
        if (e == cudaSuccess && ev.captured)
            st.pendingEvents.push_back(*ev.captured);
    }
    if (e != cudaSuccess)
        return cudaFailure("cudaStreamWaitEvent", e, res.where);
    ts.records->push_back(r);
    return {};
}

Status CudaBackend::issueSync(ThreadState& ts, const PlannedOp& p, OpResources& res, OpRecord r)
{
    const Op& op = *p.op;
    r.apiKind = SpanKind::Sync;
    const auto index = uint32_t(ts.records->size());
    const RecordRef to{uint32_t(ts.hostThread), index};
    std::vector<DepRecord> flows;
    cudaError_t e = cudaSuccess;
    switch (op.kind) {
    case OpKind::StreamSync: {
        const auto& st = m_streams[size_t(p.stream)];
        if (Status s = useDevice(ts, st.device, res.where); !s)
            return s;
        {
            std::lock_guard lock(m_depMutex);
            if (st.last)
                flows.push_back({*st.last, to, FlowKind::Sync, false, true});
        }
        r.apiStart = hostNowNs();
        e = cudaStreamSynchronize(st.handle);
        r.apiEnd = hostNowNs();
        break;
    }
    case OpKind::EventSync: {
        r.stream = -1;
        auto& ev = m_events[size_t(op.eventIndex)];
        cudaEvent_t handle = nullptr;
        {
            std::lock_guard lock(m_depMutex);
            handle = ev.latest ? ev.latest : ev.perDevice[size_t(ts.device)];
            if (ev.captured)
                flows.push_back({*ev.captured, to, FlowKind::Sync, false, true});
        }
        r.apiStart = hostNowNs();
        e = cudaEventSynchronize(handle);
        r.apiEnd = hostNowNs();
        break;
    }
    default: { // device-sync: the host thread's device
        r.stream = -1;
        if (Status s = useDevice(ts, ts.device, res.where); !s)
            return s;
        {
            std::lock_guard lock(m_depMutex);
            flowsFromDevice(ts.device, to, FlowKind::Sync, flows);
        }
        r.apiStart = hostNowNs();
        e = cudaDeviceSynchronize();
        r.apiEnd = hostNowNs();
        break;
    }
    }
    if (e != cudaSuccess)
        return cudaFailure(cudaApiName(op.kind), e, res.where);
    ts.records->push_back(r);
    if (!flows.empty()) {
        std::lock_guard lock(m_depMutex);
        m_deps.insert(m_deps.end(), flows.begin(), flows.end());
    }
    return {};
}

Status CudaBackend::issueMalloc(ThreadState& ts, const PlannedOp& p, OpResources& res, OpRecord r)
{
    r.apiKind = SpanKind::ApiCall; // an API call that synchronizes implicitly: Implicit flows, not a Sync span
    r.stream = -1;
    if (Status s = useDevice(ts, ts.device, res.where); !s)
        return s;
    const RecordRef to{uint32_t(ts.hostThread), uint32_t(ts.records->size())};
    std::vector<DepRecord> flows;
    {
        std::lock_guard lock(m_depMutex);
        flowsFromDevice(ts.device, to, FlowKind::Implicit, flows);
    }
    void* ptr = nullptr;
    const size_t bytes = size_t(std::max<int64_t>(p.op->bytes, 0));
    r.apiStart = hostNowNs();
    const cudaError_t e = cudaMalloc(&ptr, bytes);
    r.apiEnd = hostNowNs();
    if (e != cudaSuccess)
        return cudaFailure("cudaMalloc", e, res.where, bytesText(double(bytes)) + " on device " +
                                                           std::to_string(ts.device));
    ts.mallocs.push_back({ptr, ts.device, p.op->bytes});
    ts.records->push_back(r);
    std::lock_guard lock(m_depMutex);
    m_deps.insert(m_deps.end(), flows.begin(), flows.end());
    return {};
}

Status CudaBackend::issueFree(ThreadState& ts, const PlannedOp& p, OpResources& res, OpRecord r)
{
    r.apiKind = SpanKind::ApiCall;
    r.stream = -1;
    if (Status s = useDevice(ts, ts.device, res.where); !s)
        return s;
    // The latest live allocation of the same size, else the latest one, else one allocated ahead.
    auto take = [&](std::vector<DeviceAllocation>& from) -> std::optional<DeviceAllocation> {
        if (from.empty())
            return std::nullopt;
        auto it = std::find_if(from.rbegin(), from.rend(), [&](const DeviceAllocation& a) {
            return a.bytes == p.op->bytes;
        });
        const auto pos = it != from.rend() ? std::prev(it.base()) : std::prev(from.end());
        DeviceAllocation a = *pos;
        from.erase(pos);
        return a;
    };
    std::optional<DeviceAllocation> a = take(ts.mallocs);
    if (!a)
        a = take(ts.freePool);
    if (!a) {
        // Beyond what prepare() foresaw: allocate now, outside the measured call.
        void* ptr = nullptr;
        if (cudaError_t e = cudaMalloc(&ptr, size_t(std::max<int64_t>(p.op->bytes, 1))); e != cudaSuccess)
            return cudaFailure("cudaMalloc", e, res.where, "the buffer for this free op");
        a = DeviceAllocation{ptr, ts.device, p.op->bytes};
    }
    const RecordRef to{uint32_t(ts.hostThread), uint32_t(ts.records->size())};
    std::vector<DepRecord> flows;
    {
        std::lock_guard lock(m_depMutex);
        flowsFromDevice(ts.device, to, FlowKind::Implicit, flows);
    }
    r.apiStart = hostNowNs();
    const cudaError_t e = cudaFree(a->ptr);
    r.apiEnd = hostNowNs();
    if (e != cudaSuccess)
        return cudaFailure("cudaFree", e, res.where);
    ts.records->push_back(r);
    std::lock_guard lock(m_depMutex);
    m_deps.insert(m_deps.end(), flows.begin(), flows.end());
    return {};
}

// Flows into a GPU op (or graph: first..last node) from what it waits for, and the stream's new last op.
void CudaBackend::noteGpuOp(int stream, RecordRef first, RecordRef last)
{
    auto& st = m_streams[size_t(stream)];
    for (const auto& from : st.pendingEvents)
        m_deps.push_back({from, first, FlowKind::Event, false, false});
    st.pendingEvents.clear();
    if (st.kind == StreamKind::LegacyDefault) {
        // The legacy default stream waits for earlier work of every blocking stream of its device, and their
        // later work waits for it.
        for (int b : m_devices[size_t(st.device)]->legacyBarrier) {
            auto& bs = m_streams[size_t(b)];
            if (bs.last && !bs.lastJoinedLegacy) {
                m_deps.push_back({*bs.last, first, FlowKind::Implicit, false, false});
                bs.lastJoinedLegacy = true;
            }
            bs.pendingLegacy = last;
        }
    } else if (st.pendingLegacy) {
        m_deps.push_back({*st.pendingLegacy, first, FlowKind::Implicit, false, false});
        st.pendingLegacy.reset();
    }
    st.last = last;
    st.lastJoinedLegacy = false;
}

void CudaBackend::flowsFromDevice(int device, RecordRef to, FlowKind kind, std::vector<DepRecord>& out) const
{
    for (int s : m_devices[size_t(device)]->streams)
        if (const auto& st = m_streams[size_t(s)]; st.last)
            out.push_back({*st.last, to, kind, false, true});
}

// ---------------------------------------------------------------------------------------------------------------
// iterations, read-back, release

Status CudaBackend::collect(std::string_view when)
{
    Status first;
    for (int d : m_deviceList) {
        cudaError_t e = cudaSetDevice(d);
        if (e == cudaSuccess)
            e = cudaDeviceSynchronize();
        if (e != cudaSuccess && first)
            first = cudaFailure("cudaDeviceSynchronize", e, "device " + std::to_string(d) + " " + std::string(when));
    }
    m_lastSyncDone = hostNowNs();
    for (auto& tsp : m_threads) {
        auto& ts = *tsp;
        for (const auto& t : ts.timings) {
            if (!ts.records || t.record >= ts.records->size())
                continue;
            const auto& dev = *m_devices[size_t(t.device)];
            float msStart = 0;
            float msEnd = 0;
            if (!dev.origin || cudaEventElapsedTime(&msStart, dev.origin, t.start) != cudaSuccess ||
                cudaEventElapsedTime(&msEnd, dev.origin, t.end) != cudaSuccess) {
                (void)cudaGetLastError(); // not recorded or not completed: the op keeps no GPU span
                continue;
            }
            auto& rec = (*ts.records)[t.record];
            rec.gpuStart = dev.anchorNs + int64_t(std::llround(double(msStart) * 1e6));
            rec.gpuEnd = dev.anchorNs + int64_t(std::llround(double(msEnd) * 1e6));
            // The start event is recorded just before the launch call (its own host cost stays outside the API
            // span) and completes as soon as an idle stream reaches it, which can be before that call began
            // (up to ~6 us before it on an H200 with several host threads); a shared start (the previous op's end
            // event, see Lane) can complete between its query and the call. No op starts before it is launched.
            if (rec.hasApi() && rec.gpuStart < rec.apiStart)
                rec.gpuStart = rec.apiStart;
            rec.gpuEnd = std::max(rec.gpuEnd, rec.gpuStart);
        }
        ts.timings.clear();
        // Host functions timed themselves on the host clock (the device sync above waited for them).
        for (const auto& [record, slot] : ts.hostFuncTimings) {
            const int64_t end = slot->end.load(std::memory_order_acquire);
            const int64_t start = slot->start.load(std::memory_order_relaxed);
            if (!ts.records || record >= ts.records->size() || start < 0 || end < start)
                continue;
            (*ts.records)[record].gpuStart = start;
            (*ts.records)[record].gpuEnd = end;
        }
        ts.hostFuncTimings.clear();
        ts.nextHostFuncSlot = 0;
    }
    readAnchors();
    for (int d : m_deviceList) {
        auto& dev = *m_devices[size_t(d)];
        dev.nextTiming.store(0);
        dev.overflowUsed = 0;
    }
    // The pool's events are recorded again from the next iteration on: no lane may point at one.
    for (size_t l = 0; l < m_laneCount; ++l) {
        m_lanes[l].lastEnd = nullptr;
        m_lanes[l].anchored.store(false);
        m_lanes[l].ended = false;
    }
    return first;
}

// Matches this iteration's CUPTI records to the ops that issued them (the devices are idle: everything was
// recorded). Timing "both": the event times of the same op move to eventStart/eventEnd.
void CudaBackend::collectCupti()
{
    bool any = false;
    for (const auto& ts : m_threads)
        any = any || !ts->cupti.empty();
    if (!any)
        return;
    auto& tracer = CuptiTracer::instance();
    const std::vector<CuptiRecord> records = tracer.take(&m_cuptiDropped);
    std::vector<CuptiIssue> issues;
    std::vector<std::pair<const ThreadState*, const CuptiPending*>> owners;
    // Everything is recorded: the devices were synchronized after the last timed iteration.
    for (const auto& tsp : m_threads)
        for (const auto& pnd : tsp->cupti) {
            CuptiIssue issue{pnd.ids.runtime, pnd.ids.driver};
            if (m_cuptiByOrder && pnd.lane >= 0 && size_t(pnd.lane) < m_laneCuptiStream.size() && pnd.records &&
                pnd.record < pnd.records->size()) {
                issue.device = uint32_t(m_lanes[size_t(pnd.lane)].device);
                issue.streamId = m_laneCuptiStream[size_t(pnd.lane)];
                issue.order = (*pnd.records)[pnd.record].apiStart;
            }
            issues.push_back(issue);
            owners.emplace_back(tsp.get(), &pnd);
        }
    const CuptiMatch match = matchCuptiRecords(records, issues, m_cuptiOffset, m_timedEndNs);
    m_cuptiForeign += match.unmatched;
    m_cuptiLate += match.late;
    std::map<std::pair<int, int>, std::pair<int64_t, int64_t>> laneSpans; // (iteration, lane): first start, last end
    for (size_t k = 0; k < owners.size(); ++k) {
        const CuptiPending& pnd = *owners[k].second;
        std::vector<OpRecord>* ops = pnd.records;
        const auto& times = match.times[k];
        if (!ops || pnd.record >= ops->size())
            continue;
        if (times.empty()) {
            ++m_cuptiUnmatchedOps;
            continue;
        }
        m_cuptiMatched += times.size();
        auto place = [&](OpRecord& rec, int64_t start, int64_t end) {
            if (rec.hasGpu()) { // timing "both": what the events said
                rec.eventStart = rec.gpuStart;
                rec.eventEnd = rec.gpuEnd;
            }
            rec.gpuStart = start;
            rec.gpuEnd = std::max(start, end);
            if (pnd.lane >= 0) {
                auto [it, added] = laneSpans.try_emplace({pnd.iteration, pnd.lane}, start, end);
                it->second.first = std::min(it->second.first, start);
                it->second.second = std::max(it->second.second, end);
            }
        };
        if (pnd.nodeCount == 0) {
            // One op, one record (a staged copy may come in several: the op spans them all).
            int64_t end = times.front().end;
            for (const auto& t : times)
                end = std::max(end, t.end);
            place((*ops)[pnd.record], times.front().start, end);
        } else {
            const size_t n = std::min<size_t>(pnd.nodeCount, times.size());
            for (size_t i = 0; i < n && pnd.firstNode + i < ops->size(); ++i)
                place((*ops)[pnd.firstNode + i], times[i].start, times[i].end);
            if (times.size() != pnd.nodeCount)
                ++m_cuptiUnmatchedOps;
        }
    }
    checkAnchors(laneSpans);
    if (!m_options.cuptiCapturePath.empty())
        writeCuptiCapture(records, issues, owners);
    for (auto& tsp : m_threads)
        tsp->cupti.clear();
}

// The lanes' anchor events of the iteration just synchronized, on the host clock (the events are reused).
void CudaBackend::readAnchors()
{
    for (size_t l = 0; l < m_laneCount; ++l) {
        Lane& lane = m_lanes[l];
        if (!lane.anchored.load() || size_t(lane.device) >= m_devices.size() || !m_devices[size_t(lane.device)])
            continue;
        const auto& dev = *m_devices[size_t(lane.device)];
        AnchorTimes a;
        float ms = 0;
        if (dev.origin && cudaEventElapsedTime(&ms, dev.origin, lane.anchorStart) == cudaSuccess)
            a.start = dev.anchorNs + int64_t(std::llround(double(ms) * 1e6));
        if (lane.ended && dev.origin && cudaEventElapsedTime(&ms, dev.origin, lane.anchorEnd) == cudaSuccess)
            a.end = dev.anchorNs + int64_t(std::llround(double(ms) * 1e6));
        (void)cudaGetLastError();
        if (a.start >= 0)
            m_anchorTimes[{m_iteration, int(l)}] = a;
    }
}

// The lane's CUPTI spans against its anchor events, which the event clock (origin event) maps: a span outside
// [start anchor, end anchor] means the two clock mappings disagree by that much.
void CudaBackend::checkAnchors(const std::map<std::pair<int, int>, std::pair<int64_t, int64_t>>& laneSpans)
{
    for (const auto& [key, span] : laneSpans) {
        const auto it = m_anchorTimes.find(key);
        if (it == m_anchorTimes.end())
            continue;
        const auto [lo, hi] = span;
        int64_t worst = it->second.start - lo;
        if (it->second.end >= 0) {
            worst = std::max(worst, hi - it->second.end);
            m_anchorEndGaps.push_back(it->second.end - hi);
        }
        m_anchorWorstNs = std::max(m_anchorWorstNs, worst);
        ++m_anchorChecks;
    }
}

void CudaBackend::writeCuptiCapture(const std::vector<CuptiRecord>& records, const std::vector<CuptiIssue>& issues,
                                    const std::vector<std::pair<const ThreadState*, const CuptiPending*>>& owners)
{
    CuptiCapture c;
    c.hostMinusCupti = m_cuptiOffset;
    c.timedEnd = m_timedEndNs;
    c.issues = issues;
    c.records = records;
    for (const auto& [ts, pnd] : owners) {
        const OpRecord* rec = pnd->records && pnd->record < pnd->records->size() ? &(*pnd->records)[pnd->record] : nullptr;
        c.issueApiStart.push_back(rec ? rec->apiStart : -1);
        c.issueApiEnd.push_back(rec ? rec->apiEnd : -1);
        c.issueNames.push_back(rec && size_t(rec->op) < ts->ops.size() ? ts->ops[size_t(rec->op)].name : "");
    }
    std::ofstream out(m_options.cuptiCapturePath, std::ios::binary | std::ios::trunc);
    out << cuptiCaptureToJson(c);
}

// Timing "cupti": the lane's anchor event before its first op of the iteration. Nothing of the iteration is
// before it in its stream, so it completes as soon as the queue reaches it and holds nothing back.
void CudaBackend::anchorLane(const StreamState& st)
{
    Lane& lane = m_lanes[size_t(st.lane)];
    if (m_opEvents || !lane.anchorStart || lane.anchored.load(std::memory_order_acquire))
        return;
    std::lock_guard lock(lane.mutex);
    if (lane.anchored.load(std::memory_order_relaxed))
        return;
    if (cudaEventRecord(lane.anchorStart, st.handle) != cudaSuccess) {
        (void)cudaGetLastError();
        return;
    }
    lane.anchored.store(true, std::memory_order_release);
}

// Timing "cupti", before an iteration's host threads start: every lane's start anchor, into idle streams and queues,
// off the clock of the iteration (recorded in the issue path, 128 of them cost 128 streams' run about 20 %). Per-thread
// default streams take theirs at their first op, on their own host thread.
void CudaBackend::recordStartAnchors()
{
    if (m_opEvents)
        return;
    for (size_t l = 0; l < m_laneCount; ++l) {
        Lane& lane = m_lanes[l];
        if (lane.perThread || !lane.anchorStart)
            continue;
        if (cudaSetDevice(lane.device) == cudaSuccess && cudaEventRecord(lane.anchorStart, lane.handle) == cudaSuccess)
            lane.anchored.store(true);
        else
            (void)cudaGetLastError();
    }
}

// After the devices went idle at the end of the iteration: nothing follows these events in their queues.
void CudaBackend::recordEndAnchors()
{
    for (size_t l = 0; l < m_laneCount; ++l) {
        Lane& lane = m_lanes[l];
        if (!lane.anchored.load() || lane.perThread || !lane.anchorEnd)
            continue;
        if (cudaSetDevice(lane.device) == cudaSuccess && cudaEventRecord(lane.anchorEnd, lane.handle) == cudaSuccess)
            lane.ended = true;
        else
            (void)cudaGetLastError();
    }
}

// Host clock from the iteration's first issuing call to the device sync that found all work done: the same
// measure for timed and untimed iterations.
void CudaBackend::noteIterationMakespan(int iteration)
{
    int64_t first = INT64_MAX;
    for (const auto& tsp : m_threads) {
        if (!tsp->records)
            continue;
        for (size_t i = tsp->iterationFirstRecord; i < tsp->records->size(); ++i)
            if ((*tsp->records)[i].hasApi())
                first = std::min(first, (*tsp->records)[i].apiStart);
    }
    if (first == INT64_MAX || !m_plan)
        return;
    const int64_t makespan = m_lastSyncDone - first;
    if (m_untimedNow)
        m_untimedMakespans.push_back(makespan);
    else if (iteration >= std::max(0, m_plan->scenario->run.warmup))
        m_timedMakespans.push_back(makespan);
}

void CudaBackend::storeTimingSettings()
{
    RunInfo& info = *m_info;
    auto median = [](std::vector<int64_t> v) {
        std::nth_element(v.begin(), v.begin() + ptrdiff_t(v.size() / 2), v.end());
        return v[v.size() / 2];
    };
    if (!m_timedMakespans.empty()) {
        const int64_t timed = median(m_timedMakespans);
        setSetting(info, "timed_makespan_ns", std::to_string(timed));
        setSetting(info, "timed_iterations", std::to_string(m_timedMakespans.size()));
        if (!m_untimedMakespans.empty()) {
            const int64_t untimed = median(m_untimedMakespans);
            setSetting(info, "untimed_makespan_ns", std::to_string(untimed));
            setSetting(info, "untimed_iterations", std::to_string(m_untimedMakespans.size()));
            char buf[64];
            std::snprintf(buf, sizeof buf, "%.4f", double(timed) / double(std::max<int64_t>(1, untimed)));
            setSetting(info, "timing_perturbation", buf);
        }
    }
    if (m_cuptiTiming) {
        setSetting(info, "cupti_matching",
                   m_cuptiByOrder ? "by stream order (no API callbacks: every stream is issued by one host thread)"
                                  : "by correlation id (API callbacks on the issuing calls)");
        setSetting(info, "cupti_records", std::to_string(m_cuptiMatched) + " matched to ops; " +
                                              std::to_string(m_cuptiUnmatchedOps) + " ops without their records; " +
                                              std::to_string(m_cuptiForeign) + " of the backend's own work; " +
                                              std::to_string(m_cuptiLate) + " after the timed iterations; " +
                                              std::to_string(m_cuptiDropped) + " dropped by CUPTI");
        if (m_anchorChecks > 0) {
            std::vector<int64_t> gaps = m_anchorEndGaps;
            std::sort(gaps.begin(), gaps.end());
            char buf[256];
            std::snprintf(buf, sizeof buf,
                          "%zu stream-iterations: CUPTI spans within their streams' anchor events to %.1f us; end "
                          "anchor %.1f us after the last span (median)",
                          m_anchorChecks, double(std::max<int64_t>(0, m_anchorWorstNs)) / 1000.0,
                          gaps.empty() ? 0.0 : double(gaps[gaps.size() / 2]) / 1000.0);
            setSetting(info, "clock_check", buf);
        }
    }
}

bool CudaBackend::beginUntimedIteration()
{
    if (!m_prepared || !m_options.timeOps || !m_options.measureUntimed || !m_plan)
        return false;
    // As many untimed iterations as timed ones, at least 3 and at most 5: both figures are medians (with one untimed
    // run, lesson 13's same-priority variant gave timed/untimed 1.00 and 1.50 in two sessions on an H200).
    const int measured = std::max(1, m_plan->scenario->run.iterations);
    if (int(m_untimedMakespans.size()) >= std::clamp(measured, 3, 5))
        return false;
    if (m_untimedNow)
        return true;
    m_untimedNow = true;
    m_timedEndNs = hostNowNs();
    m_depsBeforeUntimed = m_deps.size();
    m_opEvents = false;
    if (m_cuptiOn) {
        CuptiTracer::instance().disable();
        instantiateUntimedGraphs();
    }
    m_cuptiOn = false;
    return true;
}

// Fresh instances of the scenario's graphs, made with CUPTI disabled, for the untimed iterations (off the clock:
// between iterations). Where one cannot be made, the untimed iterations launch the timed instance.
void CudaBackend::instantiateUntimedGraphs()
{
    for (auto& tsp : m_threads)
        for (auto& res : tsp->ops) {
            if (!res.graph || !res.graph->graph)
                continue;
            auto& g = *res.graph;
            const auto& dev = *m_devices[size_t(g.device)];
            if (cudaSetDevice(g.device) != cudaSuccess ||
                cudaGraphInstantiate(&g.untimedExec, g.graph, 0) != cudaSuccess ||
                cudaGraphUpload(g.untimedExec, dev.captureStream) != cudaSuccess) {
                (void)cudaGetLastError();
                if (g.untimedExec)
                    (void)cudaGraphExecDestroy(g.untimedExec);
                g.untimedExec = nullptr;
            }
        }
    for (int d : m_deviceList)
        if (cudaSetDevice(d) != cudaSuccess || cudaDeviceSynchronize() != cudaSuccess)
            (void)cudaGetLastError();
}

// Timing: the mode asked for, or auto; CUPTI failures fall back to events with the reason (the run goes on).
void CudaBackend::resolveTiming(RunInfo& info)
{
    m_opEvents = false;
    m_cuptiOn = false;
    m_cuptiByOrder = false;
    m_laneCuptiStream.clear();
    m_cuptiTiming = false;
    m_untimedNow = false;
    m_timedEndNs = INT64_MAX;
    m_timedMakespans.clear();
    m_untimedMakespans.clear();
    m_cuptiMatched = m_cuptiUnmatchedOps = m_cuptiForeign = m_cuptiLate = 0;
    m_anchorWorstNs = 0;
    m_anchorChecks = 0;
    m_anchorEndGaps.clear();
    m_anchorTimes.clear();
    if (!m_options.timeOps) {
        m_timing = TimingMode::Events;
        setSetting(info, "timing", "none");
        return;
    }
    const TimingMode asked = m_options.timing;
    std::string reason;
    if (asked != TimingMode::Events) {
        reason = cuptiUnavailableReason();
        m_cuptiByOrder = reason.empty() && cuptiCanMatchByOrder();
        if (reason.empty())
            reason = CuptiTracer::instance().enable(!m_cuptiByOrder);
        m_cuptiOn = reason.empty();
        m_cuptiByOrder = m_cuptiByOrder && m_cuptiOn;
    }
    m_opEvents = !m_cuptiOn || asked == TimingMode::Both;
    m_cuptiTiming = m_cuptiOn;
    m_timing = m_cuptiOn ? (asked == TimingMode::Both ? TimingMode::Both : TimingMode::Cupti) : TimingMode::Events;
    info.source = m_cuptiOn ? TraceSource::Cupti : TraceSource::CudaEvents;
    setSetting(info, "timing", std::string(toString(m_timing)));
    if (asked != TimingMode::Events && !m_cuptiOn)
        setSetting(info, "timing_reason", "CUDA events instead of CUPTI: " + reason);
}

// A sync or implicit flow says "this waited for that": keep it only where that was still running when the waiting
// call was made (as the simulator does); an op that had finished before is no reason to wait.
void CudaBackend::appendDeps(Recording& rec)
{
    auto find = [&rec](RecordRef r) -> const OpRecord* {
        if (r.hostThread >= rec.records.size() || r.index >= rec.records[r.hostThread].size())
            return nullptr;
        return &rec.records[r.hostThread][r.index];
    };
    rec.deps.reserve(rec.deps.size() + m_deps.size());
    for (const auto& d : m_deps) {
        if (d.kind == FlowKind::Sync || d.kind == FlowKind::Implicit) {
            const OpRecord* from = find(d.from);
            const OpRecord* to = find(d.to);
            if (from && to && from->hasGpu() && to->hasApi() && from->gpuEnd <= to->apiStart)
                continue;
        }
        rec.deps.push_back(d);
    }
    m_deps.clear();
}

void CudaBackend::resetIterationState()
{
    std::lock_guard lock(m_depMutex);
    for (auto& st : m_streams) {
        st.last.reset();
        st.lastJoinedLegacy = false;
        st.pendingEvents.clear();
        st.pendingLegacy.reset();
    }
    for (auto& ev : m_events)
        ev.captured.reset();
}

Status CudaBackend::endIteration(int iteration)
{
    // Timing "cupti": the iteration ends when the devices are idle; the end anchors go in after that, so that neither
    // their host cost nor their completion counts in the timed makespan (128 of them made 128 streams' run 20 %
    // longer than its untimed one on an H200).
    int64_t idle = -1;
    if (m_cuptiOn) {
        for (int d : m_deviceList)
            if (cudaSetDevice(d) != cudaSuccess || cudaDeviceSynchronize() != cudaSuccess)
                (void)cudaGetLastError(); // collect() below reports it
        idle = hostNowNs();
        recordEndAnchors();
    }
    m_iteration = iteration;
    Status st = collect("at the end of iteration " + std::to_string(iteration));
    if (idle >= 0)
        m_lastSyncDone = idle;
    noteIterationMakespan(iteration);
    if (m_untimedNow) {
        std::lock_guard lock(m_depMutex);
        m_deps.resize(std::min(m_deps.size(), m_depsBeforeUntimed));
    }
    resetIterationState();
    // Every iteration starts with the same device memory: what malloc ops left is freed, free ops get their
    // buffers back.
    for (auto& tsp : m_threads) {
        for (const auto& a : tsp->mallocs) {
            (void)cudaSetDevice(a.device);
            if (cudaError_t e = cudaFree(a.ptr); e != cudaSuccess && st)
                st = cudaFailure("cudaFree", e, "thread \"" + tsp->name + "\"", "an allocation of a malloc op");
        }
        tsp->mallocs.clear();
    }
    if (st)
        st = fillFreePools();
    if (st && m_plan && iteration + 1 < m_plan->totalIterations())
        st = anchorAll();
    return st;
}

Status CudaBackend::keep(Status st)
{
    if (!st && m_finishStatus)
        m_finishStatus = st;
    return st;
}

Status CudaBackend::finish(Recording& rec)
{
    m_finishStatus = {};
    if (m_prepared) {
        // What the last (possibly failed) iteration timed is still read back, so that a partial trace keeps it.
        bool pending = false;
        for (const auto& ts : m_threads)
            pending = pending || !ts->timings.empty() || !ts->hostFuncTimings.empty();
        if (pending)
            keep(collect("while finishing the run"));
        if (m_cuptiOn)
            CuptiTracer::instance().disable();
        collectCupti();
        if (m_info)
            storeTimingSettings();
        if (m_info && (m_timing == TimingMode::Events || m_timing == TimingMode::Both))
            setSetting(*m_info, "shared_start_events",
                       std::to_string(m_sharedStarts.load()) + " of " + std::to_string(m_timedStarts.load()));
        std::lock_guard lock(m_depMutex);
        appendDeps(rec);
    }
    release();
    return m_finishStatus;
}

void CudaBackend::release()
{
    if (!m_prepared)
        return;
    auto check = [this](std::string_view api, cudaError_t e, std::string_view what) {
        if (e != cudaSuccess)
            keep(cudaFailure(api, e, what, "while releasing"));
    };
    // Nothing may still use what is freed below.
    for (int d : m_deviceList)
        if (cudaSetDevice(d) == cudaSuccess)
            check("cudaDeviceSynchronize", cudaDeviceSynchronize(), "device " + std::to_string(d));
    std::vector<OpResources*> stack;
    for (auto& tsp : m_threads) {
        auto& ts = *tsp;
        for (auto& res : ts.ops)
            stack.push_back(&res);
        while (!stack.empty()) {
            OpResources* res = stack.back();
            stack.pop_back();
            if (res->graph) {
                auto& g = *res->graph;
                if (g.exec)
                    check("cudaGraphExecDestroy", cudaGraphExecDestroy(g.exec), res->where);
                if (g.untimedExec)
                    check("cudaGraphExecDestroy", cudaGraphExecDestroy(g.untimedExec), res->where);
                g.untimedExec = nullptr;
                if (g.graph)
                    check("cudaGraphDestroy", cudaGraphDestroy(g.graph), res->where);
                for (auto ev : g.placeholders)
                    check("cudaEventDestroy", cudaEventDestroy(ev), res->where);
                g.exec = nullptr;
                g.graph = nullptr;
                g.placeholders.clear();
                for (auto& n : g.nodes) // freed below; the vectors themselves go with m_threads
                    stack.push_back(&n);
            }
            for (const auto& a : res->deviceMemory) {
                (void)cudaSetDevice(a.device);
                check("cudaFree", cudaFree(a.ptr), res->where);
            }
            res->deviceMemory.clear();
            if (res->hostMemory) {
                if (res->hostPinned)
                    check("cudaFreeHost", cudaFreeHost(res->hostMemory), res->where);
                else
                    std::free(res->hostMemory);
                res->hostMemory = nullptr;
            }
        }
        for (auto* list : {&ts.mallocs, &ts.freePool})
            for (const auto& a : *list) {
                (void)cudaSetDevice(a.device);
                check("cudaFree", cudaFree(a.ptr), "thread \"" + ts.name + "\"");
            }
    }
    m_threads.clear();
    for (auto& st : m_streams)
        if (st.owned && st.handle) {
            (void)cudaSetDevice(st.device);
            check("cudaStreamDestroy", cudaStreamDestroy(st.handle), "a scenario stream");
        }
    m_streams.clear();
    for (size_t l = 0; l < m_laneCount; ++l)
        for (cudaEvent_t ev : {m_lanes[l].anchorStart, m_lanes[l].anchorEnd})
            if (ev)
                check("cudaEventDestroy", cudaEventDestroy(ev), "an anchor event");
    if (m_cuptiOn) {
        CuptiTracer::instance().disable();
        (void)CuptiTracer::instance().take();
    }
    m_cuptiOn = false;
    m_opEvents = false;
    m_lanes.reset();
    m_laneCount = 0;
    for (auto& ev : m_events)
        for (auto h : ev.perDevice)
            if (h)
                check("cudaEventDestroy", cudaEventDestroy(h), "a scenario event");
    m_events.clear();
    for (auto& devp : m_devices) {
        if (!devp)
            continue;
        auto& dev = *devp;
        (void)cudaSetDevice(dev.index);
        for (auto* list : {&dev.timingPool, &dev.overflow})
            for (auto ev : *list)
                if (ev)
                    check("cudaEventDestroy", cudaEventDestroy(ev), "a timing event");
        for (auto ev : dev.originCandidates)
            if (ev)
                check("cudaEventDestroy", cudaEventDestroy(ev), "an origin event");
        if (dev.captureStream)
            check("cudaStreamDestroy", cudaStreamDestroy(dev.captureStream), "the capture stream");
    }
    m_devices.clear();
    for (auto [a, b] : m_peerEnabled)
        if (cudaSetDevice(a) == cudaSuccess)
            check("cudaDeviceDisablePeerAccess", cudaDeviceDisablePeerAccess(b), "device " + std::to_string(a));
    m_peerEnabled.clear();
    (void)cudaGetLastError();
    m_deviceList.clear();
    m_plan = nullptr;
    m_info = nullptr;
    m_prepared = false;
}

} // namespace

// ---------------------------------------------------------------------------------------------------------------
// public functions

CudaProbe probeCuda()
{
    CudaProbe p;
    try {
        int driver = 0;
        if (cudaDriverGetVersion(&driver) != cudaSuccess)
            driver = 0;
        (void)cudaRuntimeGetVersion(&p.runtimeVersion);
        p.driverVersion = driver;
        if (driver == 0) {
            (void)cudaGetLastError();
            p.reason = "no CUDA driver (libcuda.so was not found: is the NVIDIA driver installed?)";
            return p;
        }
        int count = 0;
        const cudaError_t e = cudaGetDeviceCount(&count);
        if (e != cudaSuccess) {
            (void)cudaGetLastError();
            switch (e) {
            case cudaErrorNoDevice:
                p.reason = "no CUDA-capable device";
                break;
            case cudaErrorInsufficientDriver:
                p.reason = "the CUDA driver (CUDA " + versionText(driver) +
                           ") is older than this build's CUDA runtime (" + versionText(p.runtimeVersion) + ")";
                break;
            default:
                p.reason = std::string("CUDA initialisation failed: ") + cudaGetErrorString(e);
                break;
            }
            return p;
        }
        p.deviceCount = count;
        if (count == 0) {
            p.reason = "no CUDA-capable device";
            return p;
        }
        for (int d = 0; d < count; ++d) {
            cudaDeviceProp prop{};
            if (cudaGetDeviceProperties(&prop, d) == cudaSuccess)
                p.deviceNames.emplace_back(prop.name);
            else {
                (void)cudaGetLastError();
                p.deviceNames.emplace_back("?");
            }
        }
        p.usable = true;
    } catch (const std::exception& ex) {
        p.usable = false;
        p.reason = std::string("CUDA probe failed: ") + ex.what();
    } catch (...) {
        p.usable = false;
        p.reason = "CUDA probe failed";
    }
    return p;
}

std::string cuptiUnavailableReason() { return CuptiTracer::instance().attach(); }

bool cuptiBuiltIn() { return CuptiTracer::builtIn(); }

std::unique_ptr<Backend> makeCudaBackend(const CudaBackendOptions& options)
{
    return std::make_unique<CudaBackend>(options);
}

void applyCudaEnvironment(const Scenario& scenario)
{
    for (const auto& [key, value] : scenario.run.env)
        if (!key.empty())
            ::setenv(key.c_str(), value.c_str(), 1);
}

} // namespace streamscope
