// The simulator's GPU side: ops made from the scenario (makeGpuOp, measured durations applied), dependencies
// between them, issue into streams and hardware queues, a thread block's time (blockDuration), copies on the copy
// engines sharing the link, completion, events and the release of waiting work. The blocks' placement on the SMs
// is simulator_blocks.cpp.
#include "simulator_state.h"

#include <algorithm>
#include <limits>
#include <stdexcept>

namespace streamscope::sim_detail {

void OpTable::releasedOpUsed(uint32_t id)
{
    throw std::logic_error("the state of GPU op " + std::to_string(id) + " was asked for after it was released");
}

// --- GPU ops -------------------------------------------------------------------------------------------
uint32_t Simulation::newMarker(int stream)
{
    GpuOp g;
    g.type = GpuOpType::Marker;
    g.device = m_streams[size_t(stream)].device;
    g.stream = stream;
    return m_ops.add(g);
}

uint32_t Simulation::makeGpuOp(const Op& op, int stream, RecordRef rec, bool graphNode)
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
            m_error = Status(Error{{},
                                   {},
                                   "kernel \"" + displayName(op) + "\": a block of " + std::to_string(g.threadsPerBlock)
                                       + " threads and " + std::to_string(g.sharedPerBlock)
                                       + " bytes of shared memory does not fit on an SM of " + p.name},
                             ErrorClass::BadInput);
            return kNone;
        }
        const BlockTime bt = blockDuration(op, p, occ, g.blocksTotal, g.threadsPerBlock, graphNode);
        g.blockNs = bt.ns;
        g.load = bt.load;
        g.capacity = double(std::max(1, p.smCount)) * occ;
        g.l2Bytes = l2Footprint(op);
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
        g.durationNs =
            std::max(p.minMemsetNs > 0 ? p.minMemsetNs : p.minKernelNs, nsFor(double(op.bytes), p.memsetBps));
        g.l2Bytes = op.bytes;
        break;
    case OpKind::HostFunc:
        g.type = GpuOpType::HostFunc;
        g.durationNs = int64_t(std::llround(op.durationUs * 1000.0));
        break;
    case OpKind::Collective: g.type = GpuOpType::Collective; break;
    default: g.type = GpuOpType::Marker; break;
    }
    if (g.type != GpuOpType::Marker) {
        const OpRecord& r = m_out.records[rec.hostThread][rec.index];
        g.key = {r.thread, r.op, r.node};
        if (g.type != GpuOpType::Collective)
            applyMeasured(g, r, p);
    }
    const uint32_t index = m_ops.add(g);
    if (g.type == GpuOpType::Collective && !joinCollective(index, op, g.key.thread))
        return kNone;
    return index;
}

// Replay: a measured duration replaces the model's. A kernel's blocks take it per wave of the whole device, so
// that the kernel alone runs what it ran in the recording.
void Simulation::applyMeasured(GpuOp& g, const OpRecord& r, const DeviceProfile& p) const
{
    const auto it = m_options.measuredGpuNs.find({r.thread, r.op, r.node});
    if (it == m_options.measuredGpuNs.end() || it->second <= 0)
        return;
    g.measured = true;
    if (g.type != GpuOpType::Kernel) {
        g.durationNs = it->second;
        g.duplexRate = 1.0; // a measured copy or memset already ran at what sharing left it
        g.dramBound = false;
        return;
    }
    g.load = KernelLoad::None; // its measured time already holds what its neighbours did to it
    const int occ = occupancy(p, g.threadsPerBlock, g.sharedPerBlock);
    const uint64_t resident = uint64_t(std::max(1, p.smCount)) * uint64_t(std::max(1, occ));
    const uint64_t waves = std::max<uint64_t>(1, (uint64_t(g.blocksTotal) + resident - 1) / resident);
    g.blockNs = std::max<int64_t>(1, it->second / int64_t(waves));
}

// Replay: the time the recorded GPU left between this op and the previous one in its stream, where it was queued.
int64_t Simulation::streamGap(uint32_t g, RecordRef rec, int64_t modelled)
{
    if (m_options.measuredStreamGapNs.empty() || m_ops[g].type == GpuOpType::Marker)
        return modelled;
    const OpRecord& r = m_out.records[rec.hostThread][rec.index];
    const auto it = m_options.measuredStreamGapNs.find({r.thread, r.op, r.node});
    if (it == m_options.measuredStreamGapNs.end())
        return modelled;
    m_ops[g].measuredGap = true;
    return std::max<int64_t>(0, it->second);
}

int64_t Simulation::measuredHost(const MeasuredOpKey& key, int64_t modelled) const
{
    const auto it = m_options.measuredHostNs.find(key);
    return it != m_options.measuredHostNs.end() && it->second > 0 ? it->second : modelled;
}

// Time one thread block runs. Spin blocks run their duration; problem-size kernels share the device's
// throughput among all resident blocks, so a full wave of blocks takes the kernel's whole-GPU time. That is a
// block's time at its share of the device's rate; what the kernel gets beside others, or with fewer blocks than the
// device holds, is its speed (simulator_rates.cpp).
Simulation::BlockTime Simulation::blockDuration(const Op& op, const DeviceProfile& p, int occ, uint32_t blocks,
                                                uint32_t threads, bool graphNode)
{
    const double resident = double(p.smCount) * occ;
    const double n = double(std::max<int64_t>(1, op.size));
    // What an empty kernel costs: in a graph, whose executor starts the next node while the last one retires, the
    // graph's node spacing where it is shorter (on an H200 empty nodes ran 520-548 ns apart, an empty kernel of a
    // stream lasts 576-671 ns in CUPTI's records).
    const int64_t empty = graphNode ? std::min(p.graphMinKernelNs, p.minKernelNs) : p.minKernelNs;
    double fullGpuNs = 0;
    switch (op.kernel) {
    case KernelKind::Spin:
        // Its spin, the spin loop's own cost and what an empty kernel costs (on an H200 graph nodes of 1, 2, 5 and
        // 20 µs spins ran 100, 130, 69 and 80 ns further apart than their spin plus the empty nodes' spacing).
        return {std::max<int64_t>(1, int64_t(std::llround(op.durationUs * 1000.0))) + p.spinOverheadNs + empty,
                KernelLoad::None};
    case KernelKind::Empty: return {empty, KernelLoad::None};
    case KernelKind::Fma: fullGpuNs = 2.0 * n * double(blocks) * threads / p.fp32Flops * 1e9; break;
    case KernelKind::Triad: fullGpuNs = 12.0 * n / p.dramBps * 1e9; break;
    case KernelKind::Matmul: fullGpuNs = 2.0 * n * n * n / p.matmulFlops * 1e9; break;
    case KernelKind::Transpose: fullGpuNs = 8.0 * n * n / p.dramBps * 1e9; break;
    case KernelKind::Reduce: fullGpuNs = 4.0 * n / p.dramBps * 1e9; break;
    }
    // Every block gets its share of the device's rate.
    const double b = double(std::max(1u, blocks));
    const double perBlock = fullGpuNs * resident / b;
    KernelLoad load = op.kernel == KernelKind::Fma || op.kernel == KernelKind::Matmul ? KernelLoad::Compute
        : op.kernel == KernelKind::Transpose                                          ? KernelLoad::Tiled
                                                                                      : KernelLoad::Streaming;
    // A reduce's blocks each end with a __threadfence and an atomicAdd on the one counter, which the device does one
    // after another: a wave of the resident blocks lasts at least that many of them (on an H200 262144 blocks of one
    // element per thread took 0.93 ms, where the memory model gives 0.07 ms). Bound by that, its blocks are not
    // sped up by the memory's rules (they are counted as a tiled kernel's: in proportion).
    const double serialized = op.kernel == KernelKind::Reduce ? std::min(b, resident) * p.reduceBlockNs : 0;
    if (serialized > perBlock)
        load = KernelLoad::Tiled;
    return {std::max<int64_t>(p.minKernelNs / 2, int64_t(std::llround(std::max(perBlock, serialized)))), load};
}

// The device memory a kernel of the library touches (its buffers: triad three arrays of `size` floats, matmul three
// size x size matrices, transpose two, reduce one); spin, empty and fma kernels touch none worth counting.
int64_t Simulation::l2Footprint(const Op& op)
{
    const int64_t n = std::max<int64_t>(1, op.size);
    switch (op.kernel) {
    case KernelKind::Triad: return 12 * n;
    case KernelKind::Matmul: return 12 * n * n;
    case KernelKind::Transpose: return 8 * n * n;
    case KernelKind::Reduce: return 4 * n;
    default: return 0;
    }
}

// The L2 rule, when a kernel or memset starts. Memsets and kernels add what they touch to the device's traffic. A
// kernel whose buffers fit in the L2 finds them there (its modelled time) when less than 30 % of the L2 was
// touched by other work since its last run, and evicted (l2_cold_factor times its modelled time) when more than two
// thirds was, in proportion in between; its first run finds them evicted. Measured on the H200 with the 768 x 768
// matmul (7 MB) run back to back and after other ops: 197.8 µs after itself, 198.0 after a 16 MiB memset, 248.7
// after 32 MiB, 269.9 after 48 MiB and 270.1 after 128 MiB; after a read-only 128 MiB reduce 268.0; after a pinned
// 128 MiB host-to-device copy 197.7 (copies do not count). Kernels larger than the L2 never find their buffers
// there: their modelled rate is already the memory's.
void Simulation::touchL2(uint32_t g)
{
    auto& op = m_ops[g];
    auto& dev = m_devices[size_t(op.device)];
    if (op.l2Bytes <= 0)
        return;
    const int64_t before = dev.l2Traffic;
    dev.l2Traffic += op.l2Bytes;
    const DeviceProfile& p = *dev.profile;
    if (op.type != GpuOpType::Kernel || p.l2Bytes <= 0 || p.l2ColdFactor <= 1.0)
        return;
    auto [it, first] = m_l2LastTouch.try_emplace({op.device, op.key}, 0);
    const int64_t since = before - it->second;
    it->second = dev.l2Traffic;
    if (op.measured || op.l2Bytes > p.l2Bytes)
        return;
    const double lo = double(p.l2Bytes) * 0.3;
    const double hi = double(p.l2Bytes) * 2 / 3;
    const double cold = first ? 1.0 : std::clamp((double(since) - lo) / (hi - lo), 0.0, 1.0);
    if (cold > 0)
        op.blockNs = int64_t(std::llround(double(op.blockNs) * (1.0 + (p.l2ColdFactor - 1.0) * cold)));
}

void Simulation::addDep(uint32_t src, uint32_t dst, int64_t gap)
{
    auto& d = m_ops[dst];
    if (m_ops.state(src) == OpState::Done) {
        d.readyTime = std::max(d.readyTime, m_ops.end(src) + gap);
        return;
    }
    auto& s = m_ops[src];
    ++d.pendingDeps;
    s.dependents = newLink(dst, s.dependents, gap);
}

int64_t Simulation::gapBefore(const GpuOp& dst, uint32_t src) const
{
    if (dst.type == GpuOpType::Marker)
        return 0;
    const DeviceProfile& p = *m_devices[size_t(dst.device)].profile;
    if (dst.graphNode && src != kNone && m_ops.graphNode(src))
        return p.graphNodeOverheadNs;
    // After a host function the stream waits for the driver thread to release it (a host function after one is
    // the thread's own business: host_func_spacing_ns).
    if (src != kNone && m_ops.type(src) == GpuOpType::HostFunc && dst.type != GpuOpType::HostFunc
        && p.hostFuncReleaseNs > 0)
        return p.hostFuncReleaseNs;
    return p.kernelOverheadNs;
}

void Simulation::issue(uint32_t g, int stream, int64_t launchTime, RecordRef rec)
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
            if (real && newSinceLegacy && os.lastRealOp != kNone && m_ops.state(os.lastRealOp) != OpState::Done)
                m_out.deps.push_back({os.lastReal, rec, FlowKind::Implicit, false, false});
        }
    } else if (isBlocking(st.kind) && dev.legacyStream != kNone && dev.legacyStream != uint32_t(stream)) {
        const auto& ls = m_streams[dev.legacyStream];
        if (ls.lastOp != kNone) {
            addDep(ls.lastOp, g, gapBefore(m_ops[g], ls.lastOp));
            if (real && ls.lastRealOp != kNone && m_ops.state(ls.lastRealOp) != OpState::Done)
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
    op.hwQueue =
        dev.engineQueues ? dev.queueBase + (op.type == GpuOpType::Copy ? 1 + uint32_t(op.engine) : 0) : st.hwQueue;
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

// The real op at the end of the chain of releases (markers pass their release on).
uint32_t Simulation::realReleaser(uint32_t g) const
{
    for (int guard = 0; g != kNone && guard < 1'000'000; ++guard) {
        if (m_ops.type(g) != GpuOpType::Marker)
            return g;
        g = m_ops.releasedBy(g);
    }
    return kNone;
}

void Simulation::holdBy(GpuOp& op, WaitCause cause, uint32_t holder)
{
    if (holder == kNone || m_ops.type(holder) == GpuOpType::Marker)
        return;
    op.wait = cause;
    op.waitHolder = holder;
}

void Simulation::opReady(uint32_t g)
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

void Simulation::start(uint32_t g)
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
        auto pos =
            std::upper_bound(dev.dispatchList.begin(), dev.dispatchList.end(), g, [this](uint32_t a, uint32_t b) {
                const auto& x = m_ops[a];
                const auto& y = m_ops[b];
                return x.priority != y.priority ? x.priority < y.priority : x.readySeq < y.readySeq;
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
        touchL2(g);
        op.end = m_now + op.durationNs;
        if (!op.dramBound) {
            schedule(op.end, EvType::OpDone, g);
            return;
        }
        op.workLeftNs = double(op.durationNs);
        op.progressAt = m_now;
        op.rate = 0; // set below
        dev.dramRunning.push_back(g);
        setRates(dev);
        return;
    case GpuOpType::Collective: collectiveArrived(g); return;
    case GpuOpType::HostFunc: {
        // One driver thread per device runs host functions: they serialize across streams. Asleep, it wakes up
        // host_func_latency_ns after the stream reaches the function; awake (a host function ended no longer
        // than host_func_spacing_ns ago, or is running), it starts the next one that spacing after the last.
        const DeviceProfile& p = *dev.profile;
        const int64_t last = dev.hostFuncBusyUntil;
        // Idle longer than host_func_doze_ns (or never run), it wakes up host_func_deep_latency_ns after.
        const bool awake = dev.hostFuncLastOp != kNone && m_now <= last + p.hostFuncSpacingNs;
        const bool dozed = p.hostFuncDozeNs > 0 && (dev.hostFuncLastOp == kNone || m_now > last + p.hostFuncDozeNs);
        // With a measured wake-up curve: its value at the time the thread sat idle; the iteration's first,
        // host_func_first_wake_ns (where measured, else the curve's longest idle).
        const int64_t latency = p.hostFuncWakeCurve.empty()
            ? (dozed ? std::max(p.hostFuncLatencyNs, p.hostFuncDeepLatencyNs) : p.hostFuncLatencyNs)
            : dev.hostFuncLastOp != kNone ? interpolateCurve(p.hostFuncWakeCurve, m_now - last)
            : p.hostFuncFirstWakeNs > 0   ? p.hostFuncFirstWakeNs
                                          : p.hostFuncWakeCurve.back().second;
        // Replayed with the recording's gap before it in its stream, that gap already holds the thread's wake-up.
        const int64_t s = op.measuredGap ? std::max(m_now, last)
            : awake                      ? std::max(m_now, last + p.hostFuncSpacingNs)
                                         : m_now + latency;
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

// A peer copy's destination device (its incoming engine is engine 0), or null.
DeviceState* Simulation::copyDestination(const GpuOp& op)
{
    return op.dstDevice >= 0 && size_t(op.dstDevice) < m_devices.size() ? &m_devices[size_t(op.dstDevice)] : nullptr;
}

// Starts every copy that is first in its engines' queues and whose engines are free; then sets the rates.
void Simulation::pumpCopies()
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
    for (auto& dev : m_devices)
        setRates(dev);
}

// A memset's end that shares the device memory: only the event at its current end counts.
void Simulation::memsetDone(uint32_t g)
{
    auto& op = m_ops[g];
    if (op.state == OpState::Done || op.end != m_now)
        return;
    auto& dev = m_devices[size_t(op.device)];
    std::erase(dev.dramRunning, g);
    complete(g);
    setRates(dev);
}

// A copy's end: only the event at its current end counts (a rate change moved it).
void Simulation::copyDone(uint32_t g)
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

void Simulation::complete(uint32_t g)
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

void Simulation::record(uint32_t g)
{
    auto& op = m_ops[g];
    if (op.hasRecord) {
        auto& r = m_out.records[op.rec.hostThread][op.rec.index];
        r.gpuStart = op.start;
        r.gpuEnd = op.end;
        if (op.wait != WaitCause::None && op.waitHolder != kNone && m_ops.hasRecord(op.waitHolder)) {
            r.gpuWait = op.wait;
            r.gpuWaitHolder = m_ops.rec(op.waitHolder);
        }
    }
}

uint32_t Simulation::newLink(uint32_t target, uint32_t next, int64_t gap)
{
    if (m_freeLinks.empty()) {
        m_links.push_back({target, next, gap});
        return uint32_t(m_links.size() - 1);
    }
    const uint32_t l = m_freeLinks.back();
    m_freeLinks.pop_back();
    m_links[l] = {target, next, gap};
    return l;
}

// An op ended and signalled: its lists of dependents and waiters were walked, and its state goes.
void Simulation::release(uint32_t g)
{
    const GpuOp& op = m_ops[g];
    for (uint32_t list : {op.dependents, op.waiters})
        for (uint32_t l = list; l != kNone; l = m_links[l].next)
            m_freeLinks.push_back(l);
    m_ops.release(g);
}

// Releases the ops waiting for g (with sameBatchOnly: only the kernels of g's batch; each link once).
void Simulation::releaseDependents(uint32_t g, bool sameBatchOnly)
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
void Simulation::signal(uint32_t g)
{
    auto& op = m_ops[g];
    if (op.signalled)
        return;
    op.signalled = true;
    releaseDependents(g, false);
    for (uint32_t l = op.waiters; l != kNone; l = m_links[l].next)
        wake(m_links[l].target);
    --m_outstanding;
    m_toRelease.push_back(g);
    maybeEndIteration();
}

} // namespace streamscope::sim_detail
