// The CUDA backend's prepare(): everything a run needs is made here, before the first measured iteration, and
// freed again by release(). In order: the devices the plan uses (checkDevices) and their properties
// (describeDevices), the scenario's streams and their lanes (createStreams), its events (createEvents), peer access
// for peer copies (enablePeerAccess), a check that every op's buffers fit in device memory (checkMemory), each host
// thread's ops (prepareThreads; one op's own preparation is in cuda_backend_prepare_ops.cpp), buffers for free ops
// (fillFreePools) and a first launch on every stream (warmUpStreams). The timing steps it calls (resolveTiming,
// createTimingPools, anchorAll) are in cuda_backend_timing.cpp.
#include "cuda_backend_state.h"

#include "cupti_tracer.h"

#include <cuda_runtime.h>
#include <nvtx3/nvToolsExtCudaRt.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <unistd.h>
#include <utility>
#include <vector>

namespace streamscope::cuda_backend {

namespace {

// Buffers allocated ahead for free ops that no malloc op of their host thread precedes.
constexpr size_t kMaxFreePool = 64;
// The device memory a scenario may claim for its buffers, as a share of what is free.
constexpr double kMaxMemoryShare = 0.9;

// CUDA_DEVICE_MAX_CONNECTIONS is read once, when the process creates its CUDA context.
std::mutex g_contextMutex;
std::optional<std::string> g_connectionsAtContext;

void CUDART_CB noHostFunc(void*) {}

} // namespace

Status CudaBackend::prepare(const RunPlan& plan, RunInfo& info)
{
    release();
    m_plan = &plan;
    m_info = &info;
    m_abort.store(false);
    m_ncclFailed.store(false);
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

    // NCCL found and the job's layout checked before any CUDA call: a missing library is the first thing said.
    if (Status st = checkCollectives(plan); !st)
        return st;
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
    if (Status st = createStampSlots(); !st)
        return st;
    if (Status st = fillFreePools(); !st)
        return st;
    // Every rank blocks here until all ranks joined each communicator.
    if (Status st = createCommunicators(info); !st)
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
               m_cuptiOn                       ? "per node (CUPTI records of the graph's kernel, copy and memset nodes)"
                   : m_options.graphNodeTiming ? "per node (captured event-record nodes)"
                                               : "whole graph (one span per launch)");
    std::string how;
    if (m_stampsOn)
        how = "kernels stamp %globaltimer (first and last wave of blocks) into a slot per launch, read back after "
              "each iteration and mapped onto the host's steady clock by ping-pong samples before and after it";
    if (m_cuptiOn)
        how += std::string(how.empty() ? "" : "; ")
            + (m_stampsOn ? "CUPTI activity records (MEMCPY, MEMCPY2, MEMSET)"
                          : "CUPTI activity records (CONCURRENT_KERNEL, MEMCPY, MEMCPY2, MEMSET)")
            + (m_cuptiByOrder ? " matched by their order in their stream" : " matched by correlation id")
            + ", on the host's steady clock";
    if (m_cuptiOn || m_stampsOn)
        how += "; one anchor event per stream before and after each iteration";
    if (m_opEvents)
        how += std::string(how.empty() ? "" : "; plus ")
            + "CUDA events on each op's stream; one origin event per device and iteration"
            + (m_options.shareBoundaryEvents
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
        return runtimeError("no usable GPU: "
                            + (probe.reason.empty() ? std::string(cudaGetErrorString(e)) : probe.reason));
    }
    auto check = [&](int d, const std::string& who) -> Status {
        if (d >= 0 && d < count)
            return {};
        return runtimeError(who + "device " + std::to_string(d) + " does not exist: this machine has "
                            + std::to_string(count) + " CUDA device" + (count == 1 ? "" : "s")
                            + (count > 0 ? " (0.." + std::to_string(count - 1) + ")" : ""));
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
                if (Status st = check(op->dstDevice,
                                      "the destination of peer copy \"" + displayName(*op) + "\" in thread \""
                                          + s.threads[t].name + "\": ");
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
        effective += " (this process's CUDA context was created with it; "
            + (now.empty() ? std::string("unsetting it") : "the requested " + now)
            + " takes effect in a new process only)";
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
        case StreamKind::LegacyDefault: st.handle = cudaStreamLegacy; break;
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
                                   "device " + std::to_string(ps.device) + ", priority " + std::to_string(ps.priority));
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
                return cudaFailure("cudaStreamCreateWithFlags", e,
                                   "the graph capture stream of device " + std::to_string(dev.index));
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
                return cudaFailure("cudaDeviceCanAccessPeer", e,
                                   "devices " + std::to_string(a) + " and " + std::to_string(b));
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
                return cudaFailure("cudaDeviceEnablePeerAccess", e,
                                   "device " + std::to_string(a) + " to peer " + std::to_string(b));
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
        case OpKind::Memset: need[device] += bytes; break;
        case OpKind::Collective: need[device] += 2 * bytes + 4.0 * kMaxRanks; break; // send, receive; rounding
        case OpKind::Graph:
            for (const auto& n : op.ops)
                self(n, device, self);
            break;
        default: break;
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
            return runtimeError("the scenario's buffers need " + bytesText(bytes) + " of memory on device "
                                + std::to_string(d) + " (every op of every host thread has its own), but only "
                                + bytesText(double(freeBytes)) + " of " + bytesText(double(totalBytes))
                                + " are free: use smaller sizes or fewer ops");
    }
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
            const bool needsStream = isGpuOp(op.kind) || op.kind == OpKind::Record || op.kind == OpKind::Wait
                || op.kind == OpKind::StreamSync;
            if (needsStream && sp < 0)
                return Status(Error{{}, path + "/stream", res.where + " needs a stream"}, ErrorClass::BadInput);
            if ((op.kind == OpKind::Record || op.kind == OpKind::Wait || op.kind == OpKind::EventSync)
                && (op.eventIndex < 0 || size_t(op.eventIndex) >= m_events.size()))
                return Status(Error{{}, path + "/event", res.where + " names no known event"}, ErrorClass::BadInput);
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
        if ((m_opEvents || m_cuptiOn || m_stampsOn) && hostFuncsPerPass > 0) {
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

void CudaBackend::release()
{
    if (!m_prepared)
        return;
    auto check = [this](std::string_view api, cudaError_t e, std::string_view what) {
        if (e != cudaSuccess)
            keep(cudaFailure(api, e, what, "while releasing"));
    };
    releaseCommunicators(true); // after a failure: aborted first, so that no kernel waits for a peer forever
    // Nothing may still use what is freed below.
    for (int d : m_deviceList)
        if (cudaSetDevice(d) == cudaSuccess)
            check("cudaDeviceSynchronize", cudaDeviceSynchronize(), "device " + std::to_string(d));
    releaseCommunicators(false);
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
    for (int d : m_deviceList) {
        if (size_t(d) >= m_devices.size() || !m_devices[size_t(d)])
            continue;
        auto& dev = *m_devices[size_t(d)];
        (void)cudaSetDevice(d);
        if (dev.stampSlots)
            check("cudaFree", cudaFree(dev.stampSlots), "the kernel stamp slots of device " + std::to_string(d));
        dev.stampSlots = nullptr;
        dev.stampCapacity = 0;
        dev.clock.release();
    }
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

} // namespace streamscope::cuda_backend
