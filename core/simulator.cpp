#include "simulator.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <queue>
#include <string>

namespace streamscope {

namespace {

constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();

enum class EvType : uint8_t {
    HostStep,       // a host thread issues its next op
    OpReady,        // every dependency of a GPU op is met
    OpDone,         // a copy, memset or host function ends
    BlocksDone,     // a batch of thread blocks ends and frees its SM resources
    IterationStart, // all host threads joined and all devices drained
};

struct Ev {
    int64_t time;
    uint64_t seq; // ties break by scheduling order: the simulation is deterministic
    EvType type;
    uint32_t a;
    bool operator>(const Ev& o) const { return time != o.time ? time > o.time : seq > o.seq; }
};

enum class GpuOpType : uint8_t { Kernel, Copy, Memset, HostFunc, Marker };
enum class OpState : uint8_t { Pending, Ready, Started, Done };

struct GpuOp {
    GpuOpType type = GpuOpType::Marker;
    OpState state = OpState::Pending;
    bool graphNode = false;
    bool hasRecord = false;
    int device = 0;
    int stream = -1;
    uint32_t pendingDeps = 0;
    int64_t readyTime = 0;
    int64_t readyAt = -1;        // when every dependency was met (state Ready)
    int64_t queuedAt = -1;       // kernels: when it left its hardware queue for the SMs
    uint32_t releasedBy = kNone; // the op whose end met its last dependency
    WaitCause wait = WaitCause::None; // what held it after it was ready
    uint32_t waitHolder = kNone;      // the op whose end (or freed SMs) let it start
    int64_t start = -1;
    int64_t end = -1;
    RecordRef rec;
    uint32_t dependents = kNone; // list in m_links
    uint32_t waiters = kNone;    // list in m_links (targets are wait sets)
    // kernels
    uint32_t blocksTotal = 0;
    uint32_t blocksLeft = 0;     // not yet dispatched
    uint32_t blocksDone = 0;
    uint32_t threadsPerBlock = 0;
    uint32_t sharedPerBlock = 0;
    int priority = 0;
    int64_t blockNs = 0;
    uint64_t readySeq = 0;
    // copies, memsets, host functions
    int64_t durationNs = 0;
    int engine = -1;
    int dstDevice = -1;
    // copies while they run: what is left of durationNs at the full one-way rate, the share of that rate they get
    // now (below 1 while a pinned copy runs the other way: duplex_gbps), and since when
    double workLeftNs = 0;
    double rate = 1.0;
    int64_t progressAt = 0;
    double duplexRate = 1.0; // pinned H2D/D2H: duplex bandwidth / one-way bandwidth; else 1
    bool dramBound = false;  // memsets and device-to-device copies: they share the device memory's bandwidth
    uint32_t hwQueue = 0;    // the work queue it was issued to
    // batched_kernel_completion: the kernels issued back to back with it (kNone: not batched); its completion is
    // signalled to other work once the batch has no kernel running or waiting
    uint32_t batch = kNone;
    bool signalled = false;
};

// Kernels issued back to back on a device whose completions are signalled together (batched_kernel_completion):
// when the last of them ends. A kernel issued after that, or after another op, starts a new batch.
struct KernelBatch {
    uint32_t open = 0;                // members not ended yet
    std::vector<uint32_t> ended;      // members ended, their completion not yet signalled
};

struct Link {
    uint32_t target;
    uint32_t next;
    int64_t gap;
};

struct StreamState {
    int device = 0;
    StreamKind kind = StreamKind::Blocking;
    int priority = 0;
    uint32_t hwQueue = 0;              // global queue index
    uint32_t lastOp = kNone;           // last op issued, markers included
    uint32_t lastRealOp = kNone;       // last op with a GPU span
    RecordRef lastReal;
    std::vector<RecordRef> pendingEventFlows; // sources of event flows to the next real op
};

struct EventState {
    uint32_t capturedOp = kNone;       // the record marker of the latest record
    uint32_t capturedRealOp = kNone;   // the last real op before that record
    RecordRef capturedReal;
};

struct WaitSet {
    uint32_t remaining = 0;
    int hostThread = 0;
    uint32_t record = 0;   // index in the host thread's records
    int64_t wakeNs = 0;    // from the last awaited op's end until the call returns
    int64_t extraNs = 0;   // cost of the call after the wait (malloc/free)
};

struct Batch {
    uint32_t kernel;
    uint32_t first; // in m_batchItems
    uint32_t count;
};

struct DeviceState {
    const DeviceProfile* profile = nullptr;
    std::vector<int32_t> freeThreads;
    std::vector<int32_t> freeBlocks;
    std::vector<int64_t> freeShared;
    int64_t sumFreeThreads = 0;
    std::vector<uint32_t> dispatchList; // kernels with blocks left, by (priority, ready order)
    std::vector<std::deque<uint32_t>> engineQueue; // copies waiting for each engine, in issue order (FIFO)
    std::vector<uint32_t> engineRunning;          // the copy each engine runs now, or kNone
    std::vector<uint32_t> engineLastOp; // the copy that holds or last held each engine
    std::vector<uint32_t> dramRunning;  // memsets and device-to-device copies running now
    int64_t hostFuncBusyUntil = 0;
    uint32_t hostFuncLastOp = kNone;
    uint32_t legacyStream = kNone;
    std::vector<uint32_t> streams;      // planned streams on this device
    uint32_t queueBase = 0;             // its first work queue in m_hwQueues
    bool engineQueues = false;          // work_queues "engines": a compute queue and one per copy engine
    uint32_t openBatch = kNone;         // batched_kernel_completion: the batch the next kernel issued joins while
                                        // it has a kernel running or waiting
};

struct HostAgent {
    int64_t now = 0;
    int iteration = 0;
    int task = 0;
    int tasksTaken = 0;
    size_t opIndex = 0;
    bool finished = true;
    int lastLaunchStream = -1; // the stream of its previous kernel launch
};

int occupancy(const DeviceProfile& p, uint32_t threads, uint32_t shared)
{
    if (threads == 0 || threads > uint32_t(p.maxThreadsPerSm))
        return 0;
    int o = std::min(p.maxBlocksPerSm, p.maxThreadsPerSm / int(threads));
    if (shared > 0)
        o = std::min<int64_t>(o, p.sharedBytesPerSm / shared);
    return o;
}

int64_t nsFor(double amount, double perSecond)
{
    return int64_t(std::llround(amount / perSecond * 1e9));
}

class Simulation {
public:
    Simulation(const RunPlan& plan, const std::vector<DeviceProfile>& profiles, const SimulatorOptions& options,
               Recording& out)
        : m_plan(plan), m_scenario(*plan.scenario), m_options(options), m_out(out)
    {
        m_devices.resize(profiles.size());
        for (size_t d = 0; d < profiles.size(); ++d) {
            auto& dev = m_devices[d];
            const auto& p = profiles[d];
            dev.profile = &p;
            dev.freeThreads.assign(size_t(p.smCount), p.maxThreadsPerSm);
            dev.freeBlocks.assign(size_t(p.smCount), p.maxBlocksPerSm);
            dev.freeShared.assign(size_t(p.smCount), p.sharedBytesPerSm);
            dev.sumFreeThreads = int64_t(p.smCount) * p.maxThreadsPerSm;
            dev.engineQueue.assign(size_t(std::max(1, p.copyEngines)), {});
            dev.engineRunning.assign(dev.engineQueue.size(), kNone);
            dev.engineLastOp.assign(dev.engineQueue.size(), kNone);
        }
        uint32_t queuesPerDevice = 1;
        for (int c : plan.deviceConnections)
            queuesPerDevice = std::max<uint32_t>(queuesPerDevice, uint32_t(c));
        for (size_t d = 0; d < profiles.size(); ++d) {
            m_devices[d].engineQueues = profiles[d].workQueues == "engines";
            if (m_devices[d].engineQueues) // the compute queue, then one per copy engine
                queuesPerDevice = std::max<uint32_t>(queuesPerDevice, uint32_t(1 + m_devices[d].engineQueue.size()));
        }
        for (size_t d = 0; d < profiles.size(); ++d)
            m_devices[d].queueBase = uint32_t(d) * queuesPerDevice;
        m_hwQueues.resize(profiles.size() * queuesPerDevice);
        m_streams.resize(plan.streams.size());
        for (size_t s = 0; s < plan.streams.size(); ++s) {
            const auto& ps = plan.streams[s];
            auto& st = m_streams[s];
            st.device = ps.device;
            st.kind = ps.kind;
            st.priority = ps.priority;
            st.hwQueue = uint32_t(ps.device) * queuesPerDevice + uint32_t(ps.hardwareQueue);
            m_devices[size_t(ps.device)].streams.push_back(uint32_t(s));
            if (ps.kind == StreamKind::LegacyDefault)
                m_devices[size_t(ps.device)].legacyStream = uint32_t(s);
        }
        m_events.resize(m_scenario.events.size());
        m_agents.resize(plan.hostThreads.size());
        m_nextTask.assign(m_scenario.threads.size(), 0);
        m_out.records.assign(plan.hostThreads.size(), {});
        m_out.deps.clear();
    }

    Status run()
    {
        m_totalIterations = m_plan.totalIterations();
        startIteration(0, 0);
        while (!m_queue.empty()) {
            const Ev ev = m_queue.top();
            m_queue.pop();
            m_now = ev.time;
            switch (ev.type) {
            case EvType::HostStep:
                hostStep(int(ev.a));
                break;
            case EvType::OpReady:
                opReady(ev.a);
                break;
            case EvType::OpDone:
                if (m_ops[ev.a].type == GpuOpType::Copy)
                    copyDone(ev.a);
                else if (m_ops[ev.a].type == GpuOpType::Memset && m_ops[ev.a].dramBound)
                    memsetDone(ev.a);
                else
                    complete(ev.a);
                break;
            case EvType::BlocksDone:
                blocksDone(ev.a);
                break;
            case EvType::IterationStart:
                startIteration(int(ev.a), m_now);
                break;
            }
            if (!m_error.ok())
                return m_error;
        }
        if (m_iteration < m_totalIterations)
            return Error{{}, {}, "simulation stalled: host threads are waiting for work that never completes"};
        return {};
    }

private:
    void schedule(int64_t t, EvType type, uint32_t a) { m_queue.push(Ev{std::max(t, m_now), m_seq++, type, a}); }

    // --- iterations and host threads -------------------------------------------------------------------------

    void startIteration(int iteration, int64_t t)
    {
        m_iteration = iteration;
        if (iteration >= m_totalIterations)
            return;
        std::fill(m_nextTask.begin(), m_nextTask.end(), 0);
        m_finishedThreads = 0;
        m_barrierPending = false;
        for (size_t h = 0; h < m_agents.size(); ++h) {
            auto& a = m_agents[h];
            a.iteration = iteration;
            a.now = t;
            a.opIndex = 0;
            a.tasksTaken = 0;
            a.finished = false;
            if (!takeTask(int(h))) {
                threadFinished(int(h));
                continue;
            }
            schedule(t, EvType::HostStep, uint32_t(h));
        }
    }

    bool takeTask(int h)
    {
        auto& a = m_agents[size_t(h)];
        const auto& ph = m_plan.hostThreads[size_t(h)];
        const auto& th = m_scenario.threads[size_t(ph.thread)];
        const int tasks = std::max(1, th.repeat);
        if (std::max(1, th.workers) == 1) {
            if (a.tasksTaken >= tasks)
                return false;
            a.task = a.tasksTaken++;
        } else {
            // A worker pool: the worker free first takes the next task (ties: lower worker first).
            int& next = m_nextTask[size_t(ph.thread)];
            if (next >= tasks)
                return false;
            a.task = next++;
        }
        a.opIndex = 0;
        return true;
    }

    void threadFinished(int h)
    {
        auto& a = m_agents[size_t(h)];
        a.finished = true;
        if (++m_finishedThreads == int(m_agents.size())) {
            m_barrierPending = true;
            maybeEndIteration();
        }
    }

    void maybeEndIteration()
    {
        if (!m_barrierPending || m_outstanding != 0)
            return;
        m_barrierPending = false;
        int64_t t = m_now;
        for (const auto& a : m_agents)
            t = std::max(t, a.now);
        // Between iterations every host thread joins and every device is synchronized.
        schedule(t + (m_devices.empty() ? 0 : m_devices[0].profile->syncApiNs), EvType::IterationStart,
                 uint32_t(m_iteration + 1));
    }

    void hostStep(int h)
    {
        auto& a = m_agents[size_t(h)];
        const auto& ph = m_plan.hostThreads[size_t(h)];
        const auto& th = m_scenario.threads[size_t(ph.thread)];
        a.now = std::max(a.now, m_now);
        if (a.opIndex >= th.ops.size()) {
            if (!takeTask(h)) {
                threadFinished(h);
                return;
            }
            if (th.ops.empty()) {
                schedule(a.now, EvType::HostStep, uint32_t(h));
                return;
            }
        }
        const size_t opIndex = a.opIndex++;
        const Op& op = th.ops[opIndex];
        const PlannedOp po = m_plan.plannedOp(h, int(opIndex), a.iteration, a.task);
        const DeviceProfile& prof = *m_devices[size_t(ph.device)].profile;

        auto& records = m_out.records[size_t(h)];
        const auto recIndex = uint32_t(records.size());
        records.push_back({});
        OpRecord& r = records.back();
        r.thread = ph.thread;
        r.op = int(opIndex);
        r.iteration = a.iteration;
        r.task = a.task;
        r.stream = po.stream;
        const MeasuredOpKey key{ph.thread, int(opIndex), -1};
        // Replay: the host time the recorded thread spent before this call, outside CUDA calls.
        if (const auto gap = m_options.measuredHostGapNs.find(key); gap != m_options.measuredHostGapNs.end())
            a.now += std::max<int64_t>(0, gap->second);
        r.apiStart = a.now;
        const RecordRef self{uint32_t(h), recIndex};
        bool blocked = false;

        auto simpleCall = [&](int64_t cost) { records[recIndex].apiEnd = a.now + measuredHost(key, cost); };

        switch (op.kind) {
        case OpKind::Kernel:
        case OpKind::Memcpy:
        case OpKind::Memset:
        case OpKind::HostFunc: {
            // A launch into another stream than the thread's previous one costs the host more (round-robin).
            const bool switched = a.lastLaunchStream >= 0 && a.lastLaunchStream != po.stream;
            const int64_t cost = op.kind == OpKind::Kernel ? (switched ? prof.launchApiRoundRobinNs : prof.launchApiNs)
                : op.kind == OpKind::HostFunc             ? prof.hostFuncApiNs
                                                          : prof.copyApiNs;
            if (op.kind == OpKind::Kernel)
                a.lastLaunchStream = po.stream;
            simpleCall(cost);
            const uint32_t g = makeGpuOp(op, po.stream, self, false);
            if (g == kNone)
                return;
            records[recIndex].gpuKind = gpuSpanKindOf(op);
            issue(g, po.stream, records[recIndex].apiEnd + prof.launchLatencyNs, self);
            if (op.kind == OpKind::Memcpy && !op.pinned && (op.copy == CopyKind::H2D || op.copy == CopyKind::D2H)) {
                // Pageable memory: the runtime stages the copy and returns only when it is done.
                blocked = waitFor({g}, h, recIndex, 1000, 0);
            }
            break;
        }
        case OpKind::Graph: {
            simpleCall(prof.graphLaunchApiNs + prof.graphLaunchApiPerNodeNs * int64_t(op.ops.size()));
            const int64_t launch = records[recIndex].apiEnd + prof.launchLatencyNs;
            for (size_t n = 0; n < op.ops.size(); ++n) {
                OpRecord node;
                node.thread = ph.thread;
                node.op = int(opIndex);
                node.node = int(n);
                node.iteration = a.iteration;
                node.task = a.task;
                node.stream = po.stream;
                node.gpuKind = gpuSpanKindOf(op.ops[n]);
                const RecordRef nodeRef{uint32_t(h), uint32_t(records.size())};
                records.push_back(node);
                const uint32_t g = makeGpuOp(op.ops[n], po.stream, nodeRef, true);
                if (g == kNone)
                    return;
                issue(g, po.stream, launch, nodeRef);
                if (n == 0)
                    m_out.deps.push_back({self, nodeRef, FlowKind::Launch, true, false});
            }
            break;
        }
        case OpKind::Record: {
            simpleCall(prof.eventRecordApiNs);
            auto& st = m_streams[size_t(po.stream)];
            auto& ev = m_events[size_t(op.eventIndex)];
            ev.capturedRealOp = st.lastRealOp;
            ev.capturedReal = st.lastReal;
            const uint32_t m = newMarker(po.stream);
            issue(m, po.stream, records[recIndex].apiEnd + prof.launchLatencyNs, self);
            ev.capturedOp = m;
            break;
        }
        case OpKind::Wait: {
            simpleCall(prof.streamWaitApiNs);
            const auto& ev = m_events[size_t(op.eventIndex)];
            const uint32_t m = newMarker(po.stream);
            // Waiting on an event never recorded is a no-op (CUDA semantics).
            if (ev.capturedOp != kNone)
                addDep(ev.capturedOp, m, 0);
            if (ev.capturedRealOp != kNone)
                m_streams[size_t(po.stream)].pendingEventFlows.push_back(ev.capturedReal);
            issue(m, po.stream, records[recIndex].apiEnd + prof.launchLatencyNs, self);
            break;
        }
        case OpKind::StreamSync: {
            records[recIndex].apiKind = SpanKind::Sync;
            const auto& st = m_streams[size_t(po.stream)];
            syncFlows({po.stream}, self, FlowKind::Sync);
            if (st.lastOp != kNone && m_ops[st.lastOp].state != OpState::Done)
                blocked = waitFor({st.lastOp}, h, recIndex, prof.eventSyncWakeNs, 0);
            else
                simpleCall(prof.syncApiNs);
            break;
        }
        case OpKind::EventSync: {
            records[recIndex].apiKind = SpanKind::Sync;
            const auto& ev = m_events[size_t(op.eventIndex)];
            if (ev.capturedRealOp != kNone && m_ops[ev.capturedRealOp].state != OpState::Done)
                m_out.deps.push_back({ev.capturedReal, self, FlowKind::Sync, false, true});
            if (ev.capturedOp != kNone && m_ops[ev.capturedOp].state != OpState::Done)
                blocked = waitFor({ev.capturedOp}, h, recIndex, prof.eventSyncWakeNs, 0);
            else
                simpleCall(prof.syncApiNs);
            break;
        }
        case OpKind::DeviceSync:
        case OpKind::Malloc:
        case OpKind::Free: {
            const bool isSync = op.kind == OpKind::DeviceSync;
            records[recIndex].apiKind = isSync ? SpanKind::Sync : SpanKind::ApiCall;
            const auto& dev = m_devices[size_t(ph.device)];
            // cudaMalloc and cudaFree synchronize the device implicitly.
            syncFlows(dev.streams, self, isSync ? FlowKind::Sync : FlowKind::Implicit);
            std::vector<uint32_t> pending;
            for (uint32_t s : dev.streams) {
                const uint32_t last = m_streams[s].lastOp;
                if (last != kNone && m_ops[last].state != OpState::Done)
                    pending.push_back(last);
            }
            const int64_t extra = isSync ? 0 : measuredHost(key, prof.mallocApiNs);
            if (!pending.empty())
                blocked = waitFor(pending, h, recIndex, prof.eventSyncWakeNs, extra);
            else
                simpleCall(isSync ? prof.syncApiNs : prof.mallocApiNs);
            break;
        }
        case OpKind::HostWork:
            records[recIndex].apiKind = SpanKind::HostWork;
            simpleCall(int64_t(std::llround(op.durationUs * 1000.0)));
            break;
        }
        if (!blocked) {
            a.now = m_out.records[size_t(h)][recIndex].apiEnd;
            schedule(a.now, EvType::HostStep, uint32_t(h));
        }
    }

    // Sync/implicit flows from the last real op of each stream that is still running to a host call.
    void syncFlows(const std::vector<uint32_t>& streams, RecordRef to, FlowKind kind)
    {
        for (uint32_t s : streams) {
            const auto& st = m_streams[s];
            if (st.lastRealOp != kNone && m_ops[st.lastRealOp].state != OpState::Done)
                m_out.deps.push_back({st.lastReal, to, kind, false, true});
        }
    }
    void syncFlows(std::initializer_list<int> streams, RecordRef to, FlowKind kind)
    {
        std::vector<uint32_t> v;
        for (int s : streams)
            v.push_back(uint32_t(s));
        syncFlows(v, to, kind);
    }

    bool waitFor(const std::vector<uint32_t>& ops, int h, uint32_t record, int64_t wakeNs, int64_t extraNs)
    {
        const auto ws = uint32_t(m_waitSets.size());
        WaitSet w;
        w.hostThread = h;
        w.record = record;
        w.wakeNs = wakeNs;
        w.extraNs = extraNs;
        for (uint32_t g : ops) {
            if (m_ops[g].state == OpState::Done)
                continue;
            ++w.remaining;
            m_links.push_back({ws, m_ops[g].waiters, 0});
            m_ops[g].waiters = uint32_t(m_links.size() - 1);
        }
        if (w.remaining == 0) {
            m_out.records[size_t(h)][record].apiEnd = m_agents[size_t(h)].now + wakeNs + extraNs;
            return false;
        }
        m_waitSets.push_back(w);
        return true;
    }

    void wake(uint32_t ws)
    {
        auto& w = m_waitSets[ws];
        if (--w.remaining != 0)
            return;
        auto& r = m_out.records[size_t(w.hostThread)][w.record];
        r.apiEnd = std::max(m_now + w.wakeNs + w.extraNs, r.apiStart + w.extraNs);
        m_agents[size_t(w.hostThread)].now = r.apiEnd;
        schedule(r.apiEnd, EvType::HostStep, uint32_t(w.hostThread));
    }

    // --- GPU ops -------------------------------------------------------------------------------------------

    uint32_t newMarker(int stream)
    {
        GpuOp g;
        g.type = GpuOpType::Marker;
        g.device = m_streams[size_t(stream)].device;
        g.stream = stream;
        m_ops.push_back(g);
        return uint32_t(m_ops.size() - 1);
    }

    uint32_t makeGpuOp(const Op& op, int stream, RecordRef rec, bool graphNode)
    {
        const auto& st = m_streams[size_t(stream)];
        const DeviceProfile& p = *m_devices[size_t(st.device)].profile;
        GpuOp g;
        g.device = st.device;
        g.stream = stream;
        g.rec = rec;
        g.hasRecord = true;
        g.graphNode = graphNode;
        switch (op.kind) {
        case OpKind::Kernel: {
            g.type = GpuOpType::Kernel;
            const Dim3 grid = effectiveGrid(op);
            g.blocksTotal = uint32_t(std::min<uint64_t>(grid.count(), std::numeric_limits<uint32_t>::max()));
            g.blocksLeft = g.blocksTotal;
            g.threadsPerBlock = uint32_t(op.block.count());
            g.sharedPerBlock = uint32_t(op.sharedBytes);
            g.priority = st.priority;
            const int occ = occupancy(p, g.threadsPerBlock, g.sharedPerBlock);
            if (occ < 1) {
                m_error = Status(Error{{}, {},
                                       "kernel \"" + displayName(op) + "\": a block of " + std::to_string(g.threadsPerBlock)
                                           + " threads and " + std::to_string(g.sharedPerBlock)
                                           + " bytes of shared memory does not fit on an SM of " + p.name},
                                 ErrorClass::BadInput);
                return kNone;
            }
            g.blockNs = blockDuration(op, p, occ, g.blocksTotal, g.threadsPerBlock);
            break;
        }
        case OpKind::Memcpy: {
            g.type = GpuOpType::Copy;
            double bw = p.d2dBps;
            const int engines = std::max(1, p.copyEngines);
            switch (op.copy) {
            case CopyKind::H2D:
                bw = op.pinned ? p.h2dPinnedBps : p.h2dPageableBps;
                g.engine = 0;
                if (op.pinned)
                    g.duplexRate = std::min(1.0, p.h2dPinnedDuplexBps / p.h2dPinnedBps);
                break;
            case CopyKind::D2H:
                bw = op.pinned ? p.d2hPinnedBps : p.d2hPageableBps;
                g.engine = engines >= 2 ? 1 : 0; // one copy engine: both directions serialize
                if (op.pinned)
                    g.duplexRate = std::min(1.0, p.d2hPinnedDuplexBps / p.d2hPinnedBps);
                break;
            case CopyKind::D2D:
                bw = p.d2dBps;
                g.engine = std::min(2, engines - 1);
                g.dramBound = true;
                break;
            case CopyKind::P2P:
                // A peer copy leaves through the source's outgoing engine and arrives through the destination's
                // incoming one: it occupies both devices.
                bw = p.p2pBps;
                g.engine = engines >= 2 ? 1 : 0;
                g.dstDevice = op.dstDevice;
                break;
            }
            g.durationNs = p.copyLatencyNs + nsFor(double(op.bytes), bw);
            break;
        }
        case OpKind::Memset:
            g.type = GpuOpType::Memset;
            g.dramBound = true;
            g.durationNs = std::max(p.minKernelNs, nsFor(double(op.bytes), p.memsetBps));
            break;
        case OpKind::HostFunc:
            g.type = GpuOpType::HostFunc;
            g.durationNs = int64_t(std::llround(op.durationUs * 1000.0));
            break;
        default:
            g.type = GpuOpType::Marker;
            break;
        }
        if (g.type != GpuOpType::Marker)
            applyMeasured(g, m_out.records[rec.hostThread][rec.index], p);
        m_ops.push_back(g);
        return uint32_t(m_ops.size() - 1);
    }

    // Replay: a measured duration replaces the model's. A kernel's blocks take it per wave of the whole device, so
    // that the kernel alone runs what it ran in the recording.
    void applyMeasured(GpuOp& g, const OpRecord& r, const DeviceProfile& p) const
    {
        const auto it = m_options.measuredGpuNs.find({r.thread, r.op, r.node});
        if (it == m_options.measuredGpuNs.end() || it->second <= 0)
            return;
        if (g.type != GpuOpType::Kernel) {
            g.durationNs = it->second;
            g.duplexRate = 1.0; // a measured copy or memset already ran at what sharing left it
            g.dramBound = false;
            return;
        }
        const int occ = occupancy(p, g.threadsPerBlock, g.sharedPerBlock);
        const uint64_t resident = uint64_t(std::max(1, p.smCount)) * uint64_t(std::max(1, occ));
        const uint64_t waves = std::max<uint64_t>(1, (uint64_t(g.blocksTotal) + resident - 1) / resident);
        g.blockNs = std::max<int64_t>(1, it->second / int64_t(waves));
    }

    // Replay: the time the recorded GPU left between this op and the previous one in its stream, where it was queued.
    int64_t streamGap(uint32_t g, RecordRef rec, int64_t modelled) const
    {
        if (m_options.measuredStreamGapNs.empty() || m_ops[g].type == GpuOpType::Marker)
            return modelled;
        const OpRecord& r = m_out.records[rec.hostThread][rec.index];
        const auto it = m_options.measuredStreamGapNs.find({r.thread, r.op, r.node});
        return it != m_options.measuredStreamGapNs.end() ? std::max<int64_t>(0, it->second) : modelled;
    }

    int64_t measuredHost(const MeasuredOpKey& key, int64_t modelled) const
    {
        const auto it = m_options.measuredHostNs.find(key);
        return it != m_options.measuredHostNs.end() && it->second > 0 ? it->second : modelled;
    }

    // Time one thread block runs. Spin blocks run their duration; problem-size kernels share the device's
    // throughput among all resident blocks, so a full wave of blocks takes the kernel's whole-GPU time.
    static int64_t blockDuration(const Op& op, const DeviceProfile& p, int occ, uint32_t blocks, uint32_t threads)
    {
        const double resident = double(p.smCount) * occ;
        const double n = double(std::max<int64_t>(1, op.size));
        double fullGpuNs = 0;
        switch (op.kernel) {
        case KernelKind::Spin:
            // Its spin plus what an empty kernel costs (on the H200 a 1 µs spin ran 1.8 µs, a 500 µs one 500.5 µs).
            return std::max<int64_t>(1, int64_t(std::llround(op.durationUs * 1000.0))) + p.minKernelNs;
        case KernelKind::Empty:
            return p.minKernelNs;
        case KernelKind::Fma:
            fullGpuNs = 2.0 * n * double(blocks) * threads / p.fp32Flops * 1e9;
            break;
        case KernelKind::Triad:
            fullGpuNs = 12.0 * n / p.dramBps * 1e9;
            break;
        case KernelKind::Matmul:
            fullGpuNs = 2.0 * n * n * n / p.matmulFlops * 1e9;
            break;
        case KernelKind::Transpose:
            fullGpuNs = 8.0 * n * n / p.dramBps * 1e9;
            break;
        case KernelKind::Reduce:
            fullGpuNs = 4.0 * n / p.dramBps * 1e9;
            break;
        }
        // One wave or more: every block gets its share of the device's rate. Fewer blocks than the device holds:
        // memory-bound kernels run in proportion to their blocks; compute-bound ones reach the full rate already at
        // compute_saturation of the resident blocks (a block keeps its SM's pipelines busier than its share).
        const bool compute = op.kernel == KernelKind::Fma || op.kernel == KernelKind::Matmul;
        const double b = double(std::max(1u, blocks));
        if (compute && b < resident) {
            const double wave = fullGpuNs * std::max(1.0, p.computeSaturation * resident / b);
            return std::max<int64_t>(p.minKernelNs / 2, int64_t(std::llround(wave)));
        }
        const double perBlock = fullGpuNs * resident / b;
        return std::max<int64_t>(p.minKernelNs / 2, int64_t(std::llround(perBlock)));
    }

    void addDep(uint32_t src, uint32_t dst, int64_t gap)
    {
        auto& s = m_ops[src];
        auto& d = m_ops[dst];
        if (s.state == OpState::Done) {
            d.readyTime = std::max(d.readyTime, s.end + gap);
            return;
        }
        ++d.pendingDeps;
        m_links.push_back({dst, s.dependents, gap});
        s.dependents = uint32_t(m_links.size() - 1);
    }

    int64_t gapBefore(const GpuOp& dst, uint32_t src) const
    {
        if (dst.type == GpuOpType::Marker)
            return 0;
        const DeviceProfile& p = *m_devices[size_t(dst.device)].profile;
        if (dst.graphNode && src != kNone && m_ops[src].graphNode)
            return p.graphNodeOverheadNs;
        return p.kernelOverheadNs;
    }

    void issue(uint32_t g, int stream, int64_t launchTime, RecordRef rec)
    {
        auto& st = m_streams[size_t(stream)];
        auto& dev = m_devices[size_t(st.device)];
        const bool real = m_ops[g].type != GpuOpType::Marker;
        m_ops[g].readyTime = std::max(m_ops[g].readyTime, launchTime);
        if (st.lastOp != kNone)
            addDep(st.lastOp, g, streamGap(g, rec, gapBefore(m_ops[g], st.lastOp)));
        // The legacy default stream waits for earlier work in every blocking stream of its device, and later
        // work in blocking streams waits for it. Non-blocking streams are exempt.
        if (st.kind == StreamKind::LegacyDefault) {
            for (uint32_t other : dev.streams) {
                const auto& os = m_streams[other];
                if (other == uint32_t(stream) || !isBlocking(os.kind) || os.lastOp == kNone)
                    continue;
                addDep(os.lastOp, g, gapBefore(m_ops[g], os.lastOp));
                // An arrow only from work issued since the previous legacy op: older work it already waited for.
                const bool newSinceLegacy = st.lastOp == kNone || os.lastRealOp > st.lastOp;
                if (real && newSinceLegacy && os.lastRealOp != kNone && m_ops[os.lastRealOp].state != OpState::Done)
                    m_out.deps.push_back({os.lastReal, rec, FlowKind::Implicit, false, false});
            }
        } else if (isBlocking(st.kind) && dev.legacyStream != kNone && dev.legacyStream != uint32_t(stream)) {
            const auto& ls = m_streams[dev.legacyStream];
            if (ls.lastOp != kNone) {
                addDep(ls.lastOp, g, gapBefore(m_ops[g], ls.lastOp));
                if (real && ls.lastRealOp != kNone && m_ops[ls.lastRealOp].state != OpState::Done)
                    m_out.deps.push_back({ls.lastReal, rec, FlowKind::Implicit, false, false});
            }
        }
        if (real) {
            for (const auto& from : st.pendingEventFlows)
                m_out.deps.push_back({from, rec, FlowKind::Event, false, false});
            st.pendingEventFlows.clear();
            st.lastRealOp = g;
            st.lastReal = rec;
        }
        st.lastOp = g;
        // The queue: the stream's hardware queue, or with engine queues its engine's (copies: their copy engine's,
        // everything else: the compute queue).
        auto& op = m_ops[g];
        op.hwQueue = dev.engineQueues ? dev.queueBase + (op.type == GpuOpType::Copy ? 1 + uint32_t(op.engine) : 0)
                                      : st.hwQueue;
        m_hwQueues[op.hwQueue].push_back(g);
        if (dev.profile->batchedKernelCompletion && real) {
            // Kernels issued back to back join one batch; any other op issued to the device ends it.
            if (op.type == GpuOpType::Kernel) {
                if (dev.openBatch == kNone || m_batchesOfKernels[dev.openBatch].open == 0) {
                    dev.openBatch = uint32_t(m_batchesOfKernels.size());
                    m_batchesOfKernels.emplace_back();
                }
                op.batch = dev.openBatch;
                ++m_batchesOfKernels[op.batch].open;
            } else {
                dev.openBatch = kNone;
            }
        }
        ++m_outstanding;
        if (m_ops[g].pendingDeps == 0)
            schedule(m_ops[g].readyTime, EvType::OpReady, g);
    }

    static bool isBlocking(StreamKind k) { return k == StreamKind::Blocking || k == StreamKind::PerThreadDefault; }

    // The real op at the end of the chain of releases (markers pass their release on).
    uint32_t realReleaser(uint32_t g) const
    {
        for (int guard = 0; g != kNone && guard < 1'000'000; ++guard) {
            if (m_ops[g].type != GpuOpType::Marker)
                return g;
            g = m_ops[g].releasedBy;
        }
        return kNone;
    }

    void holdBy(GpuOp& op, WaitCause cause, uint32_t holder)
    {
        if (holder == kNone || m_ops[holder].type == GpuOpType::Marker)
            return;
        op.wait = cause;
        op.waitHolder = holder;
    }

    void opReady(uint32_t g)
    {
        m_ops[g].state = OpState::Ready;
        m_ops[g].readyAt = m_now;
        // An op leaves its hardware queue only from the head: an op still waiting blocks everything behind it
        // in the same queue (false dependencies between streams sharing a queue).
        auto& q = m_hwQueues[m_ops[g].hwQueue];
        while (!q.empty() && m_ops[q.front()].state == OpState::Ready) {
            const uint32_t head = q.front();
            q.pop_front();
            // Ready before the head of its queue was: held by the queue until what released that head ended.
            if (head != g && m_ops[head].readyAt < m_now)
                holdBy(m_ops[head], WaitCause::HardwareQueue, realReleaser(m_ops[g].releasedBy));
            start(head);
        }
    }

    void start(uint32_t g)
    {
        auto& op = m_ops[g];
        auto& dev = m_devices[size_t(op.device)];
        op.state = OpState::Started;
        switch (op.type) {
        case GpuOpType::Marker:
            op.start = m_now;
            complete(g);
            return;
        case GpuOpType::Kernel: {
            op.readySeq = m_seq++;
            op.queuedAt = m_now;
            auto pos = std::upper_bound(dev.dispatchList.begin(), dev.dispatchList.end(), g,
                                        [this](uint32_t a, uint32_t b) {
                                            const auto& x = m_ops[a];
                                            const auto& y = m_ops[b];
                                            return x.priority != y.priority ? x.priority < y.priority
                                                                            : x.readySeq < y.readySeq;
                                        });
            dev.dispatchList.insert(pos, g);
            dispatch(op.device);
            return;
        }
        case GpuOpType::Copy: {
            // Each copy engine is a FIFO: the copy starts when it is first in its engine's queue (both devices'
            // for a peer copy) and the engine is free.
            DeviceState* dst = copyDestination(op);
            const auto e = size_t(op.engine);
            const bool busy = dev.engineRunning[e] != kNone || !dev.engineQueue[e].empty();
            const bool dstBusy = dst && (dst->engineRunning[0] != kNone || !dst->engineQueue[0].empty());
            if (busy)
                holdBy(op, WaitCause::CopyEngine, dev.engineLastOp[e]);
            else if (dstBusy)
                holdBy(op, WaitCause::CopyEngine, dst->engineLastOp[0]);
            dev.engineQueue[e].push_back(g);
            dev.engineLastOp[e] = g;
            if (dst) {
                dst->engineQueue[0].push_back(g);
                dst->engineLastOp[0] = g;
            }
            pumpCopies();
            return;
        }
        case GpuOpType::Memset:
            op.start = m_now;
            op.end = m_now + op.durationNs;
            if (!op.dramBound) {
                schedule(op.end, EvType::OpDone, g);
                return;
            }
            op.workLeftNs = double(op.durationNs);
            op.progressAt = m_now;
            op.rate = 0; // set below
            dev.dramRunning.push_back(g);
            setCopyRates(dev);
            return;
        case GpuOpType::HostFunc: {
            // One driver thread per device runs host functions: they serialize across streams. Asleep, it wakes up
            // host_func_latency_ns after the stream reaches the function; awake (a host function ended no longer
            // than host_func_spacing_ns ago, or is running), it starts the next one that spacing after the last.
            const DeviceProfile& p = *dev.profile;
            const int64_t last = dev.hostFuncBusyUntil;
            const bool awake = dev.hostFuncLastOp != kNone && m_now <= last + p.hostFuncSpacingNs;
            const int64_t s = awake ? std::max(m_now, last + p.hostFuncSpacingNs) : m_now + p.hostFuncLatencyNs;
            if (last > m_now)
                holdBy(op, WaitCause::HostFuncThread, dev.hostFuncLastOp);
            op.start = s;
            op.end = s + op.durationNs;
            dev.hostFuncBusyUntil = op.end;
            dev.hostFuncLastOp = g;
            schedule(op.end, EvType::OpDone, g);
            return;
        }
        }
    }

    // Thread blocks go to SMs as resources allow, kernels in dispatch order (priority, then arrival): the first
    // kernel takes what it can, later kernels get the leftovers. Running blocks are never preempted.
    void dispatch(int device)
    {
        auto& dev = m_devices[size_t(device)];
        const int sms = dev.profile->smCount;
        for (size_t i = 0; i < dev.dispatchList.size();) {
            const uint32_t g = dev.dispatchList[i];
            auto& k = m_ops[g];
            if (dev.sumFreeThreads < int64_t(k.threadsPerBlock)) {
                ++i;
                continue;
            }
            const auto first = uint32_t(m_batchItems.size());
            // Breadth first, as the hardware spreads blocks over SMs: at most an even share per SM first.
            const uint32_t share = (k.blocksLeft + uint32_t(sms) - 1) / uint32_t(sms);
            for (int pass = 0; pass < 2 && k.blocksLeft > 0; ++pass) {
                for (int sm = 0; sm < sms && k.blocksLeft > 0; ++sm) {
                    const size_t s = size_t(sm);
                    uint32_t fit = uint32_t(std::max(0, std::min(dev.freeBlocks[s],
                                                                 dev.freeThreads[s] / int32_t(k.threadsPerBlock))));
                    if (k.sharedPerBlock > 0)
                        fit = std::min<uint32_t>(fit, uint32_t(dev.freeShared[s] / k.sharedPerBlock));
                    uint32_t n = std::min(fit, k.blocksLeft);
                    if (pass == 0)
                        n = std::min(n, share);
                    if (n == 0)
                        continue;
                    dev.freeBlocks[s] -= int32_t(n);
                    dev.freeThreads[s] -= int32_t(n * k.threadsPerBlock);
                    dev.freeShared[s] -= int64_t(n) * k.sharedPerBlock;
                    dev.sumFreeThreads -= int64_t(n) * k.threadsPerBlock;
                    k.blocksLeft -= n;
                    m_batchItems.push_back({uint16_t(sm), n});
                }
            }
            const auto count = uint32_t(m_batchItems.size()) - first;
            if (count > 0) {
                if (k.start < 0) {
                    k.start = m_now;
                    // Queued for the SMs earlier: held until the blocks of m_freedBy gave some back.
                    if (m_now > k.queuedAt)
                        holdBy(k, WaitCause::Sms, m_freedBy);
                }
                m_batches.push_back({g, first, count});
                schedule(m_now + k.blockNs, EvType::BlocksDone, uint32_t(m_batches.size() - 1));
            }
            if (k.blocksLeft == 0)
                dev.dispatchList.erase(dev.dispatchList.begin() + std::ptrdiff_t(i));
            else
                ++i;
        }
    }

    void blocksDone(uint32_t b)
    {
        const Batch batch = m_batches[b];
        auto& k = m_ops[batch.kernel];
        auto& dev = m_devices[size_t(k.device)];
        for (uint32_t i = 0; i < batch.count; ++i) {
            const auto [sm, n] = m_batchItems[batch.first + i];
            dev.freeBlocks[sm] += int32_t(n);
            dev.freeThreads[sm] += int32_t(n * k.threadsPerBlock);
            dev.freeShared[sm] += int64_t(n) * k.sharedPerBlock;
            dev.sumFreeThreads += int64_t(n) * k.threadsPerBlock;
            k.blocksDone += n;
        }
        if (k.blocksDone == k.blocksTotal)
            complete(batch.kernel);
        m_freedBy = batch.kernel;
        dispatch(k.device);
        m_freedBy = kNone;
    }

    // A peer copy's destination device (its incoming engine is engine 0), or null.
    DeviceState* copyDestination(const GpuOp& op)
    {
        return op.dstDevice >= 0 && size_t(op.dstDevice) < m_devices.size() ? &m_devices[size_t(op.dstDevice)]
                                                                              : nullptr;
    }

    // Starts every copy that is first in its engines' queues and whose engines are free; then sets the rates.
    void pumpCopies()
    {
        bool started = true;
        while (started) {
            started = false;
            for (auto& dev : m_devices)
                for (size_t e = 0; e < dev.engineQueue.size(); ++e) {
                    if (dev.engineRunning[e] != kNone || dev.engineQueue[e].empty())
                        continue;
                    const uint32_t g = dev.engineQueue[e].front();
                    auto& op = m_ops[g];
                    DeviceState& src = m_devices[size_t(op.device)];
                    DeviceState* dst = copyDestination(op);
                    const auto se = size_t(op.engine);
                    if (src.engineRunning[se] != kNone || src.engineQueue[se].front() != g)
                        continue;
                    if (dst && (dst->engineRunning[0] != kNone || dst->engineQueue[0].front() != g))
                        continue;
                    src.engineQueue[se].pop_front();
                    src.engineRunning[se] = g;
                    if (dst) {
                        dst->engineQueue[0].pop_front();
                        dst->engineRunning[0] = g;
                    }
                    op.start = m_now;
                    op.workLeftNs = double(op.durationNs);
                    op.progressAt = m_now;
                    op.rate = 0; // set below
                    if (op.dramBound)
                        src.dramRunning.push_back(g);
                    started = true;
                }
        }
        for (size_t d = 0; d < m_devices.size(); ++d)
            setCopyRates(m_devices[d]);
    }

    // Pinned copies in both directions at once share the link: each runs at its duplex bandwidth while the other
    // runs. Memsets and device-to-device copies each saturate the device memory: k of them at once run at 1/k of
    // their own rate. An op whose rate changes gets its end moved (the event at the old end is then ignored).
    void setCopyRates(DeviceState& dev)
    {
        const uint32_t h2d = dev.engineRunning.empty() ? kNone : dev.engineRunning[0];
        const uint32_t d2h = dev.engineRunning.size() >= 2 ? dev.engineRunning[1] : kNone;
        const bool duplex = h2d != kNone && d2h != kNone && m_ops[h2d].duplexRate < 1.0 && m_ops[d2h].duplexRate < 1.0;
        const double dramShare = dev.dramRunning.empty() ? 1.0 : 1.0 / double(dev.dramRunning.size());
        auto setRate = [&](uint32_t g) {
            auto& op = m_ops[g];
            double rate = duplex && (g == h2d || g == d2h) ? op.duplexRate : 1.0;
            if (op.dramBound)
                rate *= dramShare;
            if (rate == op.rate)
                return;
            op.workLeftNs = std::max(0.0, op.workLeftNs - double(m_now - op.progressAt) * op.rate);
            op.progressAt = m_now;
            op.rate = rate;
            op.end = m_now + int64_t(std::ceil(op.workLeftNs / rate));
            schedule(op.end, EvType::OpDone, g);
        };
        for (uint32_t g : dev.engineRunning)
            if (g != kNone && m_ops[g].device == int(&dev - m_devices.data())) // a peer copy: its source's business
                setRate(g);
        for (uint32_t g : dev.dramRunning)
            if (m_ops[g].type == GpuOpType::Memset)
                setRate(g); // (device-to-device copies are among engineRunning)
    }

    // A memset's end that shares the device memory: only the event at its current end counts.
    void memsetDone(uint32_t g)
    {
        auto& op = m_ops[g];
        if (op.state == OpState::Done || op.end != m_now)
            return;
        auto& dev = m_devices[size_t(op.device)];
        std::erase(dev.dramRunning, g);
        complete(g);
        setCopyRates(dev);
    }

    // A copy's end: only the event at its current end counts (a rate change moved it).
    void copyDone(uint32_t g)
    {
        auto& op = m_ops[g];
        if (op.state == OpState::Done || op.end != m_now)
            return;
        auto& dev = m_devices[size_t(op.device)];
        dev.engineRunning[size_t(op.engine)] = kNone;
        if (DeviceState* dst = copyDestination(op))
            dst->engineRunning[0] = kNone;
        if (op.dramBound)
            std::erase(dev.dramRunning, g);
        complete(g);
        pumpCopies();
    }

    void complete(uint32_t g)
    {
        auto& op = m_ops[g];
        op.state = OpState::Done;
        op.end = m_now;
        if (op.start < 0)
            op.start = m_now;
        record(g);
        if (op.batch == kNone) {
            signal(g);
            return;
        }
        // A batched kernel: later kernels of its batch may start now (they are issued behind it), the rest of the
        // world hears of it when no kernel of the batch is left running or waiting.
        KernelBatch& b = m_batchesOfKernels[op.batch];
        b.ended.push_back(g);
        releaseDependents(g, /*sameBatchOnly=*/true);
        if (--b.open == 0) {
            const std::vector<uint32_t> members = std::move(b.ended);
            b.ended.clear();
            for (uint32_t m : members)
                signal(m);
        }
    }

    void record(uint32_t g)
    {
        auto& op = m_ops[g];
        if (op.hasRecord) {
            auto& r = m_out.records[op.rec.hostThread][op.rec.index];
            r.gpuStart = op.start;
            r.gpuEnd = op.end;
            if (op.wait != WaitCause::None && op.waitHolder != kNone && m_ops[op.waitHolder].hasRecord) {
                r.gpuWait = op.wait;
                r.gpuWaitHolder = m_ops[op.waitHolder].rec;
            }
        }
    }

    // Releases the ops waiting for g (with sameBatchOnly: only the kernels of g's batch; each link once).
    void releaseDependents(uint32_t g, bool sameBatchOnly)
    {
        auto& op = m_ops[g];
        for (uint32_t l = op.dependents; l != kNone; l = m_links[l].next) {
            if (m_links[l].gap < 0)
                continue; // released already
            auto& d = m_ops[m_links[l].target];
            if (sameBatchOnly && (d.batch == kNone || d.batch != op.batch))
                continue;
            d.readyTime = std::max(d.readyTime, m_now + m_links[l].gap);
            m_links[l].gap = -1;
            if (--d.pendingDeps == 0) {
                d.releasedBy = g;
                schedule(d.readyTime, EvType::OpReady, m_links[l].target);
            }
        }
    }

    // Tells the rest of the work that g ended: its dependents, host threads waiting for it, the iteration.
    void signal(uint32_t g)
    {
        auto& op = m_ops[g];
        if (op.signalled)
            return;
        op.signalled = true;
        releaseDependents(g, false);
        for (uint32_t l = op.waiters; l != kNone; l = m_links[l].next)
            wake(m_links[l].target);
        --m_outstanding;
        maybeEndIteration();
    }

    const RunPlan& m_plan;
    const Scenario& m_scenario;
    const SimulatorOptions& m_options;
    Recording& m_out;
    std::priority_queue<Ev, std::vector<Ev>, std::greater<>> m_queue;
    int64_t m_now = 0;
    uint64_t m_seq = 0;
    Status m_error;

    std::vector<DeviceState> m_devices;
    std::vector<std::deque<uint32_t>> m_hwQueues;
    std::vector<KernelBatch> m_batchesOfKernels;
    std::vector<StreamState> m_streams;
    std::vector<EventState> m_events;
    std::vector<GpuOp> m_ops;
    std::vector<Link> m_links;
    std::vector<WaitSet> m_waitSets;
    std::vector<Batch> m_batches;
    std::vector<std::pair<uint16_t, uint32_t>> m_batchItems;
    uint32_t m_freedBy = kNone; // the kernel whose blocks just ended, while dispatch() hands out what they freed

    std::vector<HostAgent> m_agents;
    std::vector<int> m_nextTask;
    int m_iteration = 0;
    int m_totalIterations = 1;
    int m_finishedThreads = 0;
    bool m_barrierPending = false;
    int64_t m_outstanding = 0;
};

} // namespace

SimulatorBackend::SimulatorBackend(SimulatorOptions options) : m_options(std::move(options)) {}
SimulatorBackend::~SimulatorBackend() = default;

Status SimulatorBackend::prepare(const RunPlan& plan, RunInfo& info)
{
    const auto devices = plan.devices();
    const int maxDevice = devices.empty() ? 0 : devices.back();
    m_profiles.assign(size_t(maxDevice + 1), DeviceProfile{});
    std::vector<bool> used(size_t(maxDevice + 1), false);
    for (int d : devices)
        used[size_t(d)] = true;
    for (int d = 0; d <= maxDevice; ++d) {
        if (m_options.profile) {
            m_profiles[size_t(d)] = *m_options.profile;
            continue;
        }
        if (auto it = m_options.deviceProfiles.find(d); it != m_options.deviceProfiles.end()) {
            m_profiles[size_t(d)] = it->second;
            continue;
        }
        const DeviceSpec* spec = plan.scenario->device(d);
        auto p = findDeviceProfile(spec && !spec->profile.empty() ? spec->profile : std::string("h200"));
        if (!p)
            return Status(p.error(), ErrorClass::BadInput);
        m_profiles[size_t(d)] = *p;
    }
    info.devices.clear();
    for (int d : devices) {
        const auto& p = m_profiles[size_t(d)];
        DeviceInfo di;
        di.index = d;
        di.name = p.name + " (simulated)";
        di.properties = {
            {"profile", p.id},
            {"sm_count", std::to_string(p.smCount)},
            {"max_threads_per_sm", std::to_string(p.maxThreadsPerSm)},
            {"copy_engines", std::to_string(p.copyEngines)},
            {"hardware_queues", std::to_string(plan.deviceConnections[size_t(d)])},
        };
        info.devices.push_back(std::move(di));
        info.settings.emplace_back("profile[" + std::to_string(d) + "]", p.id);
    }
    info.clockAlignmentErrorNs = 0;
    return {};
}

Status SimulatorBackend::simulate(const RunPlan& plan, Recording& out)
{
    if (m_profiles.empty())
        return Error{{}, {}, "simulator: prepare() was not called"};
    Simulation sim(plan, m_profiles, m_options, out);
    return sim.run();
}

Status SimulatorBackend::finish(Recording&)
{
    return {};
}

} // namespace streamscope
