// The CUDA backend's issue path, run on one real host thread per planned thread: beginThread binds the thread to
// its state and device, issue() makes each op's CUDA call and records its host API span, through issueGpuOp
// (kernels, copies, memsets, host functions; issueTimedHostFunc), issueGraph, issueRecord, issueWait, issueSync,
// issueMalloc and issueFree. With timing "events" each GPU op gets its timing events here (acquireEvent,
// startEvent, endLane: the lanes' shared boundary events, under the lanes' locks); enqueue makes the one CUDA call
// that puts an op into a stream (also used by graph capture). The dependency bookkeeping (noteGpuOp,
// flowsFromDevice, appendDeps, resetIterationState) records what each op waited for, as flows for the trace.
#include "cuda_backend_state.h"

#include "cupti_tracer.h"

#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <iterator>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <sys/syscall.h>
#include <unistd.h>
#include <utility>
#include <vector>

namespace streamscope::cuda_backend {

namespace {

// Busy-waits on the host clock (host-work on a host thread, host functions on the driver's thread); an aborted
// run stops waiting so that nothing outlives it.
void spinHost(double us, const std::atomic<bool>* abort)
{
    const int64_t end = hostNowNs() + int64_t(std::llround(std::max(0.0, us) * 1000.0));
    while (hostNowNs() < end)
        if (abort && abort->load(std::memory_order_relaxed))
            return;
}

void CUDART_CB runHostFunc(void* p)
{
    const auto* arg = static_cast<const HostFuncArg*>(p);
    spinHost(arg->us, arg->abort);
}

void CUDART_CB runTimedHostFunc(void* p)
{
    auto* slot = static_cast<HostFuncSlot*>(p);
    slot->start.store(hostNowNs(), std::memory_order_relaxed);
    spinHost(slot->arg->us, slot->arg->abort);
    slot->end.store(hostNowNs(), std::memory_order_release);
}

std::string dimText(Dim3 d)
{
    return std::to_string(d.x) + "x" + std::to_string(d.y) + "x" + std::to_string(d.z);
}

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

} // namespace

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

// The iteration's end as a program's: the last host thread waits for every device while it still runs. The
// Runner's thread sleeps until then, and its wake-up took up to 190 µs on the H200 machines (lesson 04 ended its
// work at 1.06 ms and its makespan read 1.25 ms), which is StreamScope's, not the scenario's. endIteration syncs
// again (idle by then) and reports any error.
void CudaBackend::lastThreadDone()
{
    for (int d : m_deviceList)
        if (cudaSetDevice(d) != cudaSuccess || cudaDeviceSynchronize() != cudaSuccess)
            (void)cudaGetLastError();
    m_threadsIdleAt.store(hostNowNs());
}

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

cudaError_t CudaBackend::enqueue(const Op& op, const OpResources& res, cudaStream_t stream, uint64_t* stamps,
                                 uint32_t stampWave)
{
    switch (op.kind) {
    case OpKind::Kernel: {
        kernels::LaunchArgs a = res.launch;
        a.stream = stream;
        a.stamps = stamps;
        a.stampWave = stampWave;
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
    case OpKind::Memset: return cudaMemsetAsync(res.dst, 0, res.bytes, stream);
    case OpKind::HostFunc: return cudaLaunchHostFunc(stream, runHostFunc, const_cast<HostFuncArg*>(&res.hostFunc));
    default: return cudaErrorInvalidValue;
    }
}

std::string CudaBackend::launchDetail(const Op& op, const OpResources& res) const
{
    if (op.kind != OpKind::Kernel)
        return {};
    return "grid " + dimText(effectiveGrid(op)) + ", block " + dimText(op.block) + ", "
        + std::to_string(kernels::ownSharedBytes(res.launch.kernel, res.launch.block) + res.launch.sharedBytes)
        + " B dynamic shared memory";
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
    case OpKind::HostFunc: return issueGpuOp(ts, p, res, r);
    case OpKind::Graph: return issueGraph(ts, p, res, r);
    case OpKind::Record: return issueRecord(ts, p, res, r);
    case OpKind::Wait: return issueWait(ts, p, res, r);
    case OpKind::StreamSync:
    case OpKind::EventSync:
    case OpKind::DeviceSync: return issueSync(ts, p, res, r);
    case OpKind::HostWork:
        r.apiKind = SpanKind::HostWork;
        r.stream = -1;
        r.apiStart = hostNowNs();
        spinHost(p.op->durationUs, &m_abort);
        r.apiEnd = hostNowNs();
        ts.records->push_back(r);
        return {};
    case OpKind::Malloc: return issueMalloc(ts, p, res, r);
    case OpKind::Free: return issueFree(ts, p, res, r);
    case OpKind::Collective: return issueCollective(ts, p, res, r); // cuda_backend_nccl.cpp
    }
    return runtimeError("unknown op kind in " + res.where);
}

Status CudaBackend::issueGpuOp(ThreadState& ts, const PlannedOp& p, OpResources& res, OpRecord r)
{
    const auto& st = m_streams[size_t(p.stream)];
    if (Status s = useDevice(ts, st.device, res.where); !s)
        return s;
    if (p.op->kind == OpKind::HostFunc && (m_opEvents || m_cuptiOn || m_stampsOn)
        && ts.nextHostFuncSlot < ts.hostFuncSlotCount)
        return issueTimedHostFunc(ts, p, res, r);
    Timing t;
    const auto guard = lockLanes(st);
    if (Status started = beginOpTiming(st, res.where, t); !started)
        return started; // the run ends; collect() resets the lanes
    r.gpuKind = gpuSpanKindOf(*p.op);
    // Timing "cupti": a kernel stamps itself into the next slot of its device; CUPTI records the rest.
    const bool stamped = m_stampsOn && p.op->kind == OpKind::Kernel;
    const bool cupti = m_cuptiOn && p.op->kind != OpKind::HostFunc && !stamped;
    uint64_t* stampSlot = nullptr;
    size_t slot = 0;
    uint32_t wave = 0;
    if (stamped) {
        auto& dev = *m_devices[size_t(st.device)];
        slot = dev.nextStamp.fetch_add(1, std::memory_order_relaxed);
        if (slot < dev.stampCapacity)
            stampSlot = dev.stampSlots + slot * kernels::kStampSlotWords;
        wave = dev.stampWave;
        anchorLane(st);
    }
    if (cupti) {
        anchorLane(st);
        CuptiTracer::resetCorrelationIds();
    }
    r.apiStart = hostNowNs();
    const cudaError_t e = enqueue(*p.op, res, st.handle, stampSlot, wave);
    r.apiEnd = hostNowNs();
    const CorrelationIds ids = cupti ? CuptiTracer::lastCorrelationIds() : CorrelationIds{};
    if (e != cudaSuccess)
        return cudaFailure(apiName(*p.op), e, res.where, launchDetail(*p.op, res));
    uint32_t index = 0;
    if (Status done = finishGpuOp(ts, p, st, r, t, cupti, ids, res.where, index); !done)
        return done;
    if (stamped)
        ts.stamps.push_back({index, st.device, slot});
    return {};
}

Status CudaBackend::beginOpTiming(const StreamState& st, const std::string& where, Timing& t)
{
    if (!m_opEvents)
        return {};
    t.device = st.device;
    if (Status started = startEvent(st, where, t.start); !started)
        return started;
    endLane(st, nullptr); // until the end event is recorded
    t.end = acquireEvent(st.device);
    if (!t.end)
        return runtimeError("cudaEventCreate failed for " + where + ": out of timing events");
    return {};
}

Status CudaBackend::finishGpuOp(ThreadState& ts, const PlannedOp& p, const StreamState& st, const OpRecord& r, Timing t,
                                bool cupti, const CorrelationIds& ids, const std::string& where, uint32_t& index)
{
    if (m_opEvents) {
        if (cudaError_t e = cudaEventRecord(t.end, st.handle); e != cudaSuccess)
            return cudaFailure("cudaEventRecord", e, where, "end timing event");
        endLane(st, t.end);
    }
    index = uint32_t(ts.records->size());
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
    // An API call that does not wait for the device: on the H200 cudaMalloc returned while a kernel ran in 30 of 30
    // tries at every size from 4 KiB to 256 MiB (docs/ACCURACY.md), so no Implicit flows (cudaFree has them).
    r.apiKind = SpanKind::ApiCall;
    r.stream = -1;
    if (Status s = useDevice(ts, ts.device, res.where); !s)
        return s;
    void* ptr = nullptr;
    const size_t bytes = size_t(std::max<int64_t>(p.op->bytes, 0));
    r.apiStart = hostNowNs();
    const cudaError_t e = cudaMalloc(&ptr, bytes);
    r.apiEnd = hostNowNs();
    if (e != cudaSuccess)
        return cudaFailure("cudaMalloc", e, res.where,
                           bytesText(double(bytes)) + " on device " + std::to_string(ts.device));
    ts.mallocs.push_back({ptr, ts.device, p.op->bytes});
    ts.records->push_back(r);
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
        auto it =
            std::find_if(from.rbegin(), from.rend(), [&](const DeviceAllocation& a) { return a.bytes == p.op->bytes; });
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

} // namespace streamscope::cuda_backend
