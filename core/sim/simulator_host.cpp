// The simulator's host side: the Simulation set up from the run plan, the event loop (run), iterations and their
// barriers, host threads taking tasks, and hostStep, which issues each op of a host thread as it reaches it (the
// API call's cost, blocking calls, waits on the GPU). The GPU side is simulator_gpu.cpp.
#include "simulator_state.h"

#include "populate_pages.h"

namespace streamscope::sim_detail {

Simulation::Simulation(const RunPlan& plan, const std::vector<DeviceProfile>& profiles, const SimulatorOptions& options,
                       Recording& out)
    : m_plan(plan), m_scenario(*plan.scenario), m_options(options), m_out(out)
{
    m_devices.resize(profiles.size());
    for (size_t d = 0; d < profiles.size(); ++d) {
        auto& dev = m_devices[d];
        const auto& p = profiles[d];
        dev.profile = &p;
        dev.smFree.assign(size_t(p.smCount), {p.maxBlocksPerSm, p.maxThreadsPerSm, p.sharedBytesPerSm});
        dev.sumFreeThreads = int64_t(p.smCount) * p.maxThreadsPerSm;
        dev.smsWithRoom.assign((size_t(p.smCount) + 63) / 64, 0);
        for (size_t sm = 0; sm < size_t(p.smCount); ++sm)
            dev.updateRoom(sm);
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
    reserveForRun();
}

// Room for every record and GPU op the run will make, counted from the plan: grown by doubling instead, the op
// table held its old and its new array at once, which set the peak (104 of 138 MB at 300,000 ops, heaptrack;
// docs/PERFORMANCE.md). (The op table reserves what it keeps of every op; the state of ops in flight grows.)
// Room not used is never touched, so it costs address space only; it is bounded, so that a scenario of absurd
// counts fails (or not) as it runs, as before, and not here.
void Simulation::reserveForRun()
{
    constexpr size_t kMostReserved = size_t(1) << 24;
    const double iterations = std::max(1, m_plan.totalIterations());
    double total = 0; // counts that could overflow 64 bits in a scenario of absurd repeats
    for (size_t h = 0; h < m_plan.hostThreads.size(); ++h) {
        const auto& th = m_scenario.threads[size_t(m_plan.hostThreads[h].thread)];
        size_t perTask = 0;
        for (const Op& op : th.ops)
            perTask += 1 + op.ops.size(); // the op and its graph's nodes
        // A pool's workers share its tasks: each is given its share here, and grows beyond it where it takes more.
        const double tasks = std::max(1, th.repeat), workers = std::max(1, th.workers);
        const double records = double(perTask) * std::ceil(tasks / workers) * iterations;
        m_out.records[h].reserve(size_t(std::min(records, double(kMostReserved))));
        total += records;
    }
    // Markers beside the ops' own.
    m_ops.reserve(size_t(std::min(total * 1.125 + 64, double(2 * kMostReserved))));
}

Status Simulation::run()
{
    m_totalIterations = m_plan.totalIterations();
    startIteration(0, 0);
    while (!m_queue.empty()) {
        const Ev ev = m_queue.top();
        m_queue.pop();
        m_now = ev.time;
        switch (ev.type) {
        case EvType::HostStep: hostStep(int(ev.a)); break;
        case EvType::OpReady: opReady(ev.a); break;
        case EvType::OpDone:
            // (An op released already ended: this is an event at an end a rate change moved.)
            if (!m_ops.live(ev.a))
                break;
            if (m_ops[ev.a].type == GpuOpType::Copy)
                copyDone(ev.a);
            else if (m_ops[ev.a].type == GpuOpType::Memset && m_ops[ev.a].dramBound)
                memsetDone(ev.a);
            else
                complete(ev.a);
            break;
        case EvType::BlocksDone:
            blocksDone(ev.a);
            batchEventPopped(ev.a);
            break;
        case EvType::IterationStart: startIteration(int(ev.a), m_now); break;
        }
        for (uint32_t g : m_toRelease)
            release(g);
        m_toRelease.clear();
        if (!m_error.ok())
            return m_error;
    }
    if (m_iteration < m_totalIterations) {
        if (std::string stalled = stalledCollectives(); !stalled.empty())
            return Status(Error{{}, {}, "simulation stalled: " + stalled}, ErrorClass::BadInput);
        return Error{{}, {}, "simulation stalled: host threads are waiting for work that never completes"};
    }
    return {};
}

// --- iterations and host threads -------------------------------------------------------------------------
void Simulation::startIteration(int iteration, int64_t t)
{
    m_iteration = iteration;
    if (iteration >= m_totalIterations)
        return;
    std::fill(m_nextTask.begin(), m_nextTask.end(), 0);
    // Every iteration starts on idle devices, their host-function threads asleep (host_func_doze_ns): between two
    // iterations StreamScope syncs and reads back for a millisecond or more.
    for (auto& dev : m_devices) {
        dev.hostFuncLastOp = kNone;
        dev.hostFuncBusyUntil = 0;
    }
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

bool Simulation::takeTask(int h)
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

void Simulation::threadFinished(int h)
{
    auto& a = m_agents[size_t(h)];
    a.finished = true;
    if (++m_finishedThreads == int(m_agents.size())) {
        m_barrierPending = true;
        maybeEndIteration();
    }
}

void Simulation::maybeEndIteration()
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

void Simulation::hostStep(int h)
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
    const HostCall c = beginCall(h, th.ops[opIndex], int(opIndex));

    CallEnd end = CallEnd::Returned;
    switch (c.op.kind) {
    case OpKind::Kernel:
    case OpKind::Memcpy:
    case OpKind::Memset:
    case OpKind::HostFunc:
    case OpKind::Collective: end = issueStreamWork(c); break;
    case OpKind::Graph: end = launchGraph(c); break;
    case OpKind::Record: recordEvent(c); break;
    case OpKind::Wait: waitEvent(c); break;
    case OpKind::StreamSync: end = syncStream(c); break;
    case OpKind::EventSync: end = syncEvent(c); break;
    case OpKind::DeviceSync:
    case OpKind::Free: end = syncDevice(c); break;
    case OpKind::Malloc:
        callRecord(c).apiKind = SpanKind::ApiCall;
        endCall(c, c.prof.mallocApiNs);
        break;
    case OpKind::HostWork:
        callRecord(c).apiKind = SpanKind::HostWork;
        endCall(c, int64_t(std::llround(c.op.durationUs * 1000.0)));
        break;
    }
    if (end == CallEnd::Abandoned)
        return;
    if (end == CallEnd::Returned) {
        a.now = m_out.records[size_t(h)][c.recIndex].apiEnd;
        schedule(a.now, EvType::HostStep, uint32_t(h));
    }
}

// The API call's record, started when the host thread reaches the op (after the host time a replay measured
// before it).
Simulation::HostCall Simulation::beginCall(int h, const Op& op, int opIndex)
{
    auto& a = m_agents[size_t(h)];
    const auto& ph = m_plan.hostThreads[size_t(h)];
    const PlannedOp po = m_plan.plannedOp(h, opIndex, a.iteration, a.task);
    auto& records = m_out.records[size_t(h)];
    const auto recIndex = uint32_t(records.size());
    // The reserved records' pages faulted in 8192 records (700 KB) at a time, not trapped one page at a time.
    populateAhead(records, a.recordsPopulated, 8192);
    records.push_back({});
    OpRecord& r = records.back();
    r.thread = ph.thread;
    r.op = opIndex;
    r.iteration = a.iteration;
    r.task = a.task;
    r.stream = po.stream;
    const MeasuredOpKey key{ph.thread, opIndex, -1};
    // Replay: the host time the recorded thread spent before this call, outside CUDA calls.
    if (const auto gap = m_options.measuredHostGapNs.find(key); gap != m_options.measuredHostGapNs.end())
        a.now += std::max<int64_t>(0, gap->second);
    r.apiStart = a.now;
    return HostCall{
        h, op, opIndex, po, *m_devices[size_t(ph.device)].profile, recIndex, RecordRef{uint32_t(h), recIndex}, key};
}

OpRecord& Simulation::callRecord(const HostCall& c)
{
    return m_out.records[size_t(c.h)][c.recIndex];
}

// A kernel launch's host cost where other host threads of the device are in launch calls too: the driver serializes
// part of each call. From `alone` (no other thread launching) to launch_api_concurrent_ns (four threads at once), in
// proportion to the other threads launching, at most three of them.
int64_t Simulation::launchCost(int h, int64_t alone, const DeviceProfile& prof) const
{
    if (prof.launchApiConcurrentNs == prof.launchApiNs)
        return alone;
    const int64_t now = m_agents[size_t(h)].now;
    int others = 0;
    for (size_t o = 0; o < m_agents.size(); ++o)
        others += int(o) != h && m_agents[o].launchUntil > now;
    others = std::min(others, 3);
    return alone + (prof.launchApiConcurrentNs - prof.launchApiNs) * others / 3;
}

// The call returns after `cost` (or the host time a replay measured for it).
void Simulation::endCall(const HostCall& c, int64_t cost)
{
    callRecord(c).apiEnd = m_agents[size_t(c.h)].now + measuredHost(c.key, cost);
}

// A kernel launch, copy, memset or host function: the API call, then the work queued in its stream.
Simulation::CallEnd Simulation::issueStreamWork(const HostCall& c)
{
    const Op& op = c.op;
    const DeviceProfile& prof = c.prof;
    auto& a = m_agents[size_t(c.h)];
    // A launch into another stream than the thread's previous one costs the host more (round-robin).
    const bool switched = a.lastLaunchStream >= 0 && a.lastLaunchStream != c.po.stream;
    const int64_t cost = op.kind == OpKind::Kernel
        ? launchCost(c.h, switched ? prof.launchApiRoundRobinNs : prof.launchApiNs, prof)
        : op.kind == OpKind::HostFunc   ? prof.hostFuncApiNs
        : op.kind == OpKind::Memset     ? prof.memsetApiNs
        : op.kind == OpKind::Collective ? prof.launchApiNs // NCCL enqueues a kernel
                                        : prof.copyApiNs;
    if (op.kind == OpKind::Kernel)
        a.lastLaunchStream = c.po.stream;
    endCall(c, cost);
    if (op.kind == OpKind::Kernel)
        a.launchUntil = callRecord(c).apiEnd;
    const uint32_t g = makeGpuOp(op, c.po.stream, c.self, false);
    if (g == kNone)
        return CallEnd::Abandoned;
    callRecord(c).gpuKind = gpuSpanKindOf(op);
    issue(g, c.po.stream, callRecord(c).apiEnd + prof.launchLatencyNs, c.self);
    if (op.kind == OpKind::Memcpy && !op.pinned && (op.copy == CopyKind::H2D || op.copy == CopyKind::D2H)) {
        // Pageable memory: the runtime stages the copy and returns only when it is done.
        if (waitFor({g}, c.h, c.recIndex, 1000, 0))
            return CallEnd::Blocked;
    }
    return CallEnd::Returned;
}

// A graph launch: one API call, then every node queued in the graph's stream at once.
Simulation::CallEnd Simulation::launchGraph(const HostCall& c)
{
    const Op& op = c.op;
    const auto& a = m_agents[size_t(c.h)];
    const auto& ph = m_plan.hostThreads[size_t(c.h)];
    auto& records = m_out.records[size_t(c.h)];
    endCall(c, c.prof.graphLaunchApiNs + c.prof.graphLaunchApiPerNodeNs * int64_t(op.ops.size()));
    const int64_t launch = records[c.recIndex].apiEnd + c.prof.launchLatencyNs;
    for (size_t n = 0; n < op.ops.size(); ++n) {
        OpRecord node;
        node.thread = ph.thread;
        node.op = c.opIndex;
        node.node = int(n);
        node.iteration = a.iteration;
        node.task = a.task;
        node.stream = c.po.stream;
        node.gpuKind = gpuSpanKindOf(op.ops[n]);
        const RecordRef nodeRef{uint32_t(c.h), uint32_t(records.size())};
        records.push_back(node);
        const uint32_t g = makeGpuOp(op.ops[n], c.po.stream, nodeRef, true);
        if (g == kNone)
            return CallEnd::Abandoned;
        issue(g, c.po.stream, launch, nodeRef);
        if (n == 0)
            m_out.deps.push_back({c.self, nodeRef, FlowKind::Launch, true, false});
    }
    return CallEnd::Returned;
}

// cudaEventRecord: a marker in the stream that the event captures (and the last real op, for flows).
void Simulation::recordEvent(const HostCall& c)
{
    endCall(c, c.prof.eventRecordApiNs);
    auto& st = m_streams[size_t(c.po.stream)];
    auto& ev = m_events[size_t(c.op.eventIndex)];
    ev.capturedRealOp = st.lastRealOp;
    ev.capturedReal = st.lastReal;
    const uint32_t m = newMarker(c.po.stream);
    issue(m, c.po.stream, callRecord(c).apiEnd + c.prof.launchLatencyNs, c.self);
    ev.capturedOp = m;
}

// cudaStreamWaitEvent: a marker in the stream that depends on the event's marker.
void Simulation::waitEvent(const HostCall& c)
{
    endCall(c, c.prof.streamWaitApiNs);
    const auto& ev = m_events[size_t(c.op.eventIndex)];
    const uint32_t m = newMarker(c.po.stream);
    // Waiting on an event never recorded is a no-op (CUDA semantics).
    if (ev.capturedOp != kNone)
        addDep(ev.capturedOp, m, 0);
    if (ev.capturedRealOp != kNone)
        m_streams[size_t(c.po.stream)].pendingEventFlows.push_back(ev.capturedReal);
    issue(m, c.po.stream, callRecord(c).apiEnd + c.prof.launchLatencyNs, c.self);
}

// cudaStreamSynchronize: blocks until the stream's last op is done.
Simulation::CallEnd Simulation::syncStream(const HostCall& c)
{
    callRecord(c).apiKind = SpanKind::Sync;
    const auto& st = m_streams[size_t(c.po.stream)];
    syncFlows({c.po.stream}, c.self, FlowKind::Sync);
    if (st.lastOp != kNone && m_ops.state(st.lastOp) != OpState::Done)
        return waitFor({st.lastOp}, c.h, c.recIndex, c.prof.eventSyncWakeNs, 0) ? CallEnd::Blocked : CallEnd::Returned;
    endCall(c, c.prof.syncApiNs);
    return CallEnd::Returned;
}

// cudaEventSynchronize: blocks until the event's marker is reached.
Simulation::CallEnd Simulation::syncEvent(const HostCall& c)
{
    callRecord(c).apiKind = SpanKind::Sync;
    const auto& ev = m_events[size_t(c.op.eventIndex)];
    if (ev.capturedRealOp != kNone && m_ops.state(ev.capturedRealOp) != OpState::Done)
        m_out.deps.push_back({ev.capturedReal, c.self, FlowKind::Sync, false, true});
    if (ev.capturedOp != kNone && m_ops.state(ev.capturedOp) != OpState::Done)
        return waitFor({ev.capturedOp}, c.h, c.recIndex, c.prof.eventSyncWakeNs, 0) ? CallEnd::Blocked
                                                                                    : CallEnd::Returned;
    endCall(c, c.prof.syncApiNs);
    return CallEnd::Returned;
}

// cudaDeviceSynchronize, and cudaFree, which synchronizes the device implicitly: block until every stream of the
// device is done. (cudaMalloc does not wait: on the H200 it returned while a kernel ran in 30 of 30 tries at every
// size from 4 KiB to 256 MiB, and cudaFree returned only after the kernel ended; docs/ACCURACY.md.)
Simulation::CallEnd Simulation::syncDevice(const HostCall& c)
{
    const bool isSync = c.op.kind == OpKind::DeviceSync;
    callRecord(c).apiKind = isSync ? SpanKind::Sync : SpanKind::ApiCall;
    const auto& dev = m_devices[size_t(m_plan.hostThreads[size_t(c.h)].device)];
    syncFlows(dev.streams, c.self, isSync ? FlowKind::Sync : FlowKind::Implicit);
    std::vector<uint32_t> pending;
    for (uint32_t s : dev.streams) {
        const uint32_t last = m_streams[s].lastOp;
        if (last != kNone && m_ops.state(last) != OpState::Done)
            pending.push_back(last);
    }
    const int64_t extra = isSync ? 0 : measuredHost(c.key, c.prof.mallocApiNs);
    if (!pending.empty())
        return waitFor(pending, c.h, c.recIndex, c.prof.eventSyncWakeNs, extra) ? CallEnd::Blocked : CallEnd::Returned;
    endCall(c, isSync ? c.prof.syncApiNs : c.prof.mallocApiNs);
    return CallEnd::Returned;
}

// Sync/implicit flows from the last real op of each stream that is still running to a host call.
void Simulation::syncFlows(const std::vector<uint32_t>& streams, RecordRef to, FlowKind kind)
{
    for (uint32_t s : streams) {
        const auto& st = m_streams[s];
        if (st.lastRealOp != kNone && m_ops.state(st.lastRealOp) != OpState::Done)
            m_out.deps.push_back({st.lastReal, to, kind, false, true});
    }
}

void Simulation::syncFlows(std::initializer_list<int> streams, RecordRef to, FlowKind kind)
{
    std::vector<uint32_t> v;
    for (int s : streams)
        v.push_back(uint32_t(s));
    syncFlows(v, to, kind);
}

bool Simulation::waitFor(const std::vector<uint32_t>& ops, int h, uint32_t record, int64_t wakeNs, int64_t extraNs)
{
    const auto ws = uint32_t(m_freeWaitSets.empty() ? m_waitSets.size() : m_freeWaitSets.back());
    WaitSet w;
    w.hostThread = h;
    w.record = record;
    w.wakeNs = wakeNs;
    w.extraNs = extraNs;
    for (uint32_t g : ops) {
        if (m_ops.state(g) == OpState::Done)
            continue;
        ++w.remaining;
        m_ops[g].waiters = newLink(ws, m_ops[g].waiters, 0);
    }
    if (w.remaining == 0) {
        m_out.records[size_t(h)][record].apiEnd = m_agents[size_t(h)].now + wakeNs + extraNs;
        return false;
    }
    if (ws == m_waitSets.size()) {
        m_waitSets.push_back(w);
    } else {
        m_freeWaitSets.pop_back();
        m_waitSets[ws] = w;
    }
    return true;
}

void Simulation::wake(uint32_t ws)
{
    auto& w = m_waitSets[ws];
    if (--w.remaining != 0)
        return;
    auto& r = m_out.records[size_t(w.hostThread)][w.record];
    r.apiEnd = std::max(m_now + w.wakeNs + w.extraNs, r.apiStart + w.extraNs);
    m_agents[size_t(w.hostThread)].now = r.apiEnd;
    schedule(r.apiEnd, EvType::HostStep, uint32_t(w.hostThread));
    m_freeWaitSets.push_back(ws); // no op's waiter list leads to it any more: each of its ops woke it once
}

} // namespace streamscope::sim_detail
