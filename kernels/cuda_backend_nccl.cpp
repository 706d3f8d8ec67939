// The CUDA backend's collective ops, through NCCL loaded at run time (nccl_loader.h; docs/RANKS.md "Collectives on
// GPUs"). checkCollectives loads NCCL and checks that the job fits NCCL's rules before CUDA is touched;
// prepareCollective allocates each op's buffers once (reused by every iteration); createCommunicators makes one
// communicator per host thread that issues collectives — NCCL matches the calls of a communicator in issue order, as
// the simulator and `merge` match the k-th collective of a host thread across ranks (collectives.h) — with
// ncclCommInitAll when every rank is in this process, else ncclCommInitRank with rank 0's unique id shared through
// the caller's RankBroadcast; issueCollective makes the NCCL call, timed like any GPU op (CUPTI records of the kernel
// NCCL launches, matched by the correlation id of its launch; or events around the call); releaseCommunicators
// destroys them (aborts them after a failure, so that no rank waits for a peer that is gone).
//
// Elements are float32 (sum for all-reduce and reduce-scatter): `bytes` rounded up to whole floats per rank's part;
// send and receive buffers apart (out of place).
#include "cuda_backend_state.h"

#include "collectives.h"
#include "cupti_tracer.h"
#include "nccl_api.h"
#include "nccl_loader.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace streamscope {

bool ncclBuiltIntoBackend()
{
    return ncclBuiltIn();
}

std::string ncclUnavailableReason()
{
    return loadNccl();
}

} // namespace streamscope

namespace streamscope::cuda_backend {

namespace {

// Who a scenario thread is in the job: its rank, its index among its rank's threads, the world size.
struct ThreadRole {
    int rank = 0;
    int local = 0;
    int world = 1;
};

ThreadRole roleOf(const Scenario& s, int thread, const CudaBackendOptions::Collectives& c)
{
    if (s.job.expanded())
        return {s.job.threadRank[size_t(thread)], s.job.localThread[size_t(thread)], s.job.worldSize};
    return {c.rank, thread, std::max(1, c.worldSize)};
}

std::string opPath(size_t thread, size_t op)
{
    return "/threads/" + std::to_string(thread) + "/ops/" + std::to_string(op);
}

Status badInput(std::string path, std::string message)
{
    return Status(Error{{}, std::move(path), std::move(message)}, ErrorClass::BadInput);
}

// Elements (float32) of one rank's part of the op, and the bytes of its send and receive buffers on its rank.
struct CollectiveShape {
    size_t count = 0;
    size_t sendBytes = 0;
    size_t recvBytes = 0;
};

CollectiveShape shapeOf(const Op& op, int world)
{
    const auto bytes = size_t(std::max<int64_t>(op.bytes, 0));
    const size_t parts = op.collective == CollectiveKind::AllGather || op.collective == CollectiveKind::ReduceScatter
        ? size_t(std::max(1, world))
        : 1;
    const size_t count = (bytes + parts * sizeof(float) - 1) / (parts * sizeof(float));
    const size_t part = count * sizeof(float);
    switch (op.collective) {
    case CollectiveKind::AllGather: return {count, part, part * parts};
    case CollectiveKind::ReduceScatter: return {count, part * parts, part};
    case CollectiveKind::Send: return {count, part, 0};
    case CollectiveKind::Recv: return {count, 0, part};
    default: return {count, part, part};
    }
}

} // namespace

#ifdef STREAMSCOPE_HAVE_NCCL

struct NcclState {
    std::vector<ncclComm_t> comms; // every communicator made, for release
    std::map<int, ncclComm_t> byThread;
    bool destroyed = false;
};

namespace {

std::string ncclText(ncclResult_t r, ncclComm_t comm)
{
    const NcclApi& api = ncclApi();
    std::string text = api.getErrorString ? api.getErrorString(r) : "NCCL error " + std::to_string(int(r));
    if (api.getLastError)
        if (const char* last = api.getLastError(comm); last && *last)
            text += " (" + std::string(last) + ")";
    return text;
}

std::string_view ncclCallName(CollectiveKind k)
{
    switch (k) {
    case CollectiveKind::AllReduce: return "ncclAllReduce";
    case CollectiveKind::AllGather: return "ncclAllGather";
    case CollectiveKind::ReduceScatter: return "ncclReduceScatter";
    case CollectiveKind::Broadcast: return "ncclBroadcast";
    case CollectiveKind::Send: return "ncclSend";
    case CollectiveKind::Recv: return "ncclRecv";
    }
    return "nccl";
}

Status ncclFailure(std::string_view call, ncclResult_t r, ncclComm_t comm, const std::string& where,
                   const std::string& detail)
{
    (void)cudaGetLastError();
    return runtimeError(std::string(call) + " failed for " + where + " (" + detail + "): " + ncclText(r, comm));
}

} // namespace

#endif

Status CudaBackend::checkCollectives(const RunPlan& plan)
{
    const Scenario& s = *plan.scenario;
    m_collectives = hasCollectives(s);
    if (!m_collectives)
        return {};
    if (std::string why = loadNccl(); !why.empty())
        return runtimeError(why);
    std::map<int, int> deviceOfThread; // scenario thread -> device of its collectives
    for (size_t t = 0; t < s.threads.size(); ++t) {
        const ThreadSpec& th = s.threads[t];
        const ThreadRole role = roleOf(s, int(t), m_options.collectives);
        for (size_t o = 0; o < th.ops.size(); ++o) {
            const Op& op = th.ops[o];
            if (op.kind != OpKind::Collective)
                continue;
            const std::string path = opPath(t, o);
            if (th.workers > 1)
                return badInput(path,
                                "a collective op in a worker pool (thread \"" + th.name
                                    + "\"): NCCL matches the calls of every rank in issue order, and the workers "
                                      "of a pool take their tasks in no fixed order");
            const int device = op.streamIndex >= 0 ? s.streams[size_t(op.streamIndex)].device : th.device;
            if (auto [it, fresh] = deviceOfThread.emplace(int(t), device); !fresh && it->second != device)
                return badInput(path,
                                "thread \"" + th.name + "\" issues collectives on device " + std::to_string(it->second)
                                    + " and on device " + std::to_string(device)
                                    + ": a host thread's collectives use one communicator, which is one GPU");
            if (op.collective == CollectiveKind::Broadcast && op.root >= role.world)
                return badInput(path + "/root",
                                "root " + std::to_string(op.root) + " is not a rank of this job of "
                                    + std::to_string(role.world) + " rank" + (role.world == 1 ? "" : "s"));
            const int peer = collectivePeer(op, role.rank, role.world);
            if ((op.collective == CollectiveKind::Send || op.collective == CollectiveKind::Recv)
                && (peer < 0 || peer >= role.world))
                return badInput(path + "/peer",
                                "peer " + std::to_string(peer < 0 ? op.peer : peer) + " is not a rank of this job of "
                                    + std::to_string(role.world) + " rank" + (role.world == 1 ? "" : "s"));
            if (peer == role.rank)
                return badInput(path + "/peer",
                                std::string(toString(op.collective)) + " on rank " + std::to_string(role.rank)
                                    + " names its own rank: NCCL runs a send to self only together with its recv in "
                                      "one group call, and StreamScope issues every op on its own (run it on the "
                                      "simulator, or with two ranks)");
        }
    }
    if (s.job.expanded() || std::max(1, m_options.collectives.worldSize) == 1) {
        // Every rank in this process: one GPU each (NCCL refuses two ranks of a communicator on one GPU).
        std::map<int, std::map<int, int>> gpuOf; // local thread -> rank -> device
        for (const auto& [t, device] : deviceOfThread) {
            const ThreadRole role = roleOf(s, t, m_options.collectives);
            gpuOf[role.local][role.rank] = device;
        }
        int count = 0;
        if (cudaGetDeviceCount(&count) != cudaSuccess) {
            (void)cudaGetLastError();
            count = 0;
        }
        const int world = s.job.expanded() ? s.job.worldSize : 1;
        for (const auto& [local, ranks] : gpuOf) {
            std::set<int> used;
            for (const auto& [rank, device] : ranks)
                if (!used.insert(device).second)
                    return badInput({},
                                    "two ranks of one communicator use GPU " + std::to_string(device)
                                        + ": NCCL refuses that (one GPU per rank)");
            if (int(ranks.size()) != world)
                return badInput({},
                                "host thread " + std::to_string(local) + " issues collectives on "
                                    + std::to_string(ranks.size()) + " of the job's " + std::to_string(world)
                                    + " ranks: every rank must make the same collective calls");
        }
        const auto devices = plan.devices();
        if (count > 0 && !devices.empty() && devices.back() >= count)
            return badInput({},
                            "this job of " + std::to_string(world) + " rank" + (world == 1 ? "" : "s") + " needs "
                                + std::to_string(devices.back() + 1)
                                + " GPUs in one process (one per rank: NCCL refuses two ranks on one GPU); this "
                                  "machine has "
                                + std::to_string(count)
                                + ". Run it under a launcher on machines with more GPUs, or with --backend sim");
    } else if (!m_options.collectives.broadcast) {
        return runtimeError("rank " + std::to_string(m_options.collectives.rank) + " of "
                            + std::to_string(m_options.collectives.worldSize)
                            + " has no way to receive rank 0's NCCL unique id (no rank broadcast was given)");
    }
    return {};
}

Status CudaBackend::prepareCollective(ThreadState& ts, const Op& op, int device, OpResources& res,
                                      const std::string& path)
{
    (void)path;
    const Scenario& s = *m_plan->scenario;
    const ThreadRole role = roleOf(s, ts.thread, m_options.collectives);
    const CollectiveShape shape = shapeOf(op, role.world);
    res.ncclCount = shape.count;
    res.ncclRank = role.rank;
    res.ncclWorld = role.world;
    res.ncclPeer = collectivePeer(op, role.rank, role.world);
    res.bytes = shape.sendBytes + shape.recvBytes;
    // Out of place: a job of one rank still moves its data (NCCL skips an in-place call of one rank, and copies an
    // out-of-place one with cudaMemcpyAsync), and a rank's input is not overwritten by the call.
    if (shape.sendBytes > 0)
        if (Status st = allocateDevice(res, device, shape.sendBytes, &res.src); !st)
            return st;
    if (shape.recvBytes > 0)
        if (Status st = allocateDevice(res, device, shape.recvBytes, &res.dst); !st)
            return st;
    res.srcDevice = device;
    res.dstDevice = device;
    return {};
}

#ifdef STREAMSCOPE_HAVE_NCCL

Status CudaBackend::createCommunicators(RunInfo& info)
{
    if (!m_collectives)
        return {};
    const Scenario& s = *m_plan->scenario;
    const NcclApi& api = ncclApi();
    m_nccl = std::make_shared<NcclState>();
    auto& state = *m_nccl;
    // Host threads that issue collectives, by their index among their rank's threads: one communicator each.
    std::map<int, std::map<int, std::pair<int, int>>> byLocal; // local thread -> rank -> (scenario thread, device)
    for (size_t t = 0; t < s.threads.size(); ++t)
        for (const Op& op : s.threads[t].ops)
            if (op.kind == OpKind::Collective) {
                const ThreadRole role = roleOf(s, int(t), m_options.collectives);
                const int device = op.streamIndex >= 0 ? s.streams[size_t(op.streamIndex)].device : s.threads[t].device;
                byLocal[role.local][role.rank] = {int(t), device};
                break;
            }
    const bool inProcess = s.job.expanded() || std::max(1, m_options.collectives.worldSize) == 1;
    const int world = s.job.expanded() ? s.job.worldSize : std::max(1, m_options.collectives.worldSize);
    for (const auto& [local, ranks] : byLocal) {
        if (inProcess) {
            std::vector<int> devices;
            for (const auto& [rank, td] : ranks)
                devices.push_back(td.second);
            std::vector<ncclComm_t> comms(devices.size(), nullptr);
            if (ncclResult_t r = api.commInitAll(comms.data(), int(devices.size()), devices.data()); r != ncclSuccess) {
                m_ncclFailed.store(true);
                return ncclFailure("ncclCommInitAll", r, nullptr, "host thread " + std::to_string(local),
                                   std::to_string(world) + " rank" + (world == 1 ? "" : "s") + " in this process");
            }
            size_t i = 0;
            for (const auto& [rank, td] : ranks) {
                state.comms.push_back(comms[i]);
                state.byThread[td.first] = comms[i++];
            }
            continue;
        }
        const int rank = m_options.collectives.rank;
        const auto [thread, device] = ranks.begin()->second;
        std::string blob;
        if (rank == 0) {
            ncclUniqueId id{};
            if (ncclResult_t r = api.getUniqueId(&id); r != ncclSuccess) {
                m_ncclFailed.store(true);
                return ncclFailure("ncclGetUniqueId", r, nullptr, "rank 0", "host thread " + std::to_string(local));
            }
            blob.assign(id.internal, sizeof id.internal);
        }
        auto shared = m_options.collectives.broadcast(blob);
        if (!shared) {
            m_ncclFailed.store(true);
            return runtimeError("rank " + std::to_string(rank)
                                + " could not get rank 0's NCCL unique id: " + shared.error().toString());
        }
        ncclUniqueId id{};
        if (shared->size() != sizeof id.internal) {
            m_ncclFailed.store(true);
            return runtimeError("rank " + std::to_string(rank) + " got " + std::to_string(shared->size())
                                + " bytes as rank 0's NCCL unique id; expected " + std::to_string(sizeof id.internal));
        }
        std::copy(shared->begin(), shared->end(), id.internal);
        if (cudaError_t e = cudaSetDevice(device); e != cudaSuccess)
            return cudaFailure("cudaSetDevice", e, "rank " + std::to_string(rank), "device " + std::to_string(device));
        ncclComm_t comm = nullptr;
        if (ncclResult_t r = api.commInitRank(&comm, world, id, rank); r != ncclSuccess) {
            m_ncclFailed.store(true);
            std::string hint;
            if (r == ncclInvalidUsage)
                hint = "; two ranks on one GPU? NCCL refuses that: give each rank its own GPU (\"ranks\": "
                       "{\"device\": \"local-rank\"} binds GPU <local rank>)";
            return ncclFailure("ncclCommInitRank", r, comm,
                               "rank " + std::to_string(rank) + " of " + std::to_string(world),
                               "device " + std::to_string(device) + ", host thread " + std::to_string(local) + hint);
        }
        state.comms.push_back(comm);
        state.byThread[thread] = comm;
    }
    for (auto& tsp : m_threads) {
        const auto it = state.byThread.find(tsp->thread);
        const auto& ops = s.threads[size_t(tsp->thread)].ops;
        for (size_t o = 0; o < ops.size() && o < tsp->ops.size(); ++o)
            if (ops[o].kind == OpKind::Collective)
                tsp->ops[o].ncclComm = it == state.byThread.end() ? nullptr : it->second;
    }
    setSetting(info, "nccl",
               "NCCL " + ncclVersionText() + " from " + ncclLoadedFrom() + "; " + std::to_string(state.comms.size())
                   + " communicator" + (state.comms.size() == 1 ? "" : "s") + " of " + std::to_string(world) + " rank"
                   + (world == 1 ? "" : "s")
                   + (inProcess ? " in this process (ncclCommInitAll)" : " (ncclCommInitRank)")
                   + "; float32 elements, buffers reused by every iteration");
    setSetting(info, "collective_timing",
               m_cuptiOn ? "CUPTI kernel records of the kernel NCCL launches in each call, matched by correlation id"
                   : m_opEvents ? "CUDA events around each NCCL call in its stream"
                                : "none");
    return {};
}

void CudaBackend::releaseCommunicators(bool beforeSync)
{
    if (!m_nccl || m_nccl->destroyed)
        return;
    const bool failed = m_ncclFailed.load() || m_abort.load() || !m_finishStatus.ok();
    if (beforeSync && !failed)
        return; // destroyed after the devices are idle
    const NcclApi& api = ncclApi();
    // After a failure a peer may never arrive: abort, which ends the kernels that wait for it.
    for (ncclComm_t c : m_nccl->comms)
        if (c)
            (void)(failed ? api.commAbort(c) : api.commDestroy(c));
    m_nccl->comms.clear();
    m_nccl->byThread.clear();
    m_nccl->destroyed = true;
}

Status CudaBackend::issueCollective(ThreadState& ts, const PlannedOp& p, OpResources& res, OpRecord r)
{
    const auto& st = m_streams[size_t(p.stream)];
    if (Status s = useDevice(ts, st.device, res.where); !s)
        return s;
    if (!res.ncclComm)
        return runtimeError(res.where + " has no NCCL communicator");
    const NcclApi& api = ncclApi();
    auto comm = static_cast<ncclComm_t>(res.ncclComm);
    Timing t;
    const auto guard = lockLanes(st);
    if (Status started = beginOpTiming(st, res.where, t); !started)
        return started;
    r.gpuKind = gpuSpanKindOf(*p.op);
    const bool cupti = m_cuptiOn;
    if (cupti) {
        anchorLane(st);
        CuptiTracer::resetCorrelationIds();
    }
    const Op& op = *p.op;
    r.apiStart = hostNowNs();
    ncclResult_t e = ncclSuccess;
    switch (op.collective) {
    case CollectiveKind::AllReduce:
        e = api.allReduce(res.src, res.dst, res.ncclCount, ncclFloat32, ncclSum, comm, st.handle);
        break;
    case CollectiveKind::AllGather:
        e = api.allGather(res.src, res.dst, res.ncclCount, ncclFloat32, comm, st.handle);
        break;
    case CollectiveKind::ReduceScatter:
        e = api.reduceScatter(res.src, res.dst, res.ncclCount, ncclFloat32, ncclSum, comm, st.handle);
        break;
    case CollectiveKind::Broadcast:
        e = api.broadcast(res.src, res.dst, res.ncclCount, ncclFloat32, op.root, comm, st.handle);
        break;
    case CollectiveKind::Send: e = api.send(res.src, res.ncclCount, ncclFloat32, res.ncclPeer, comm, st.handle); break;
    case CollectiveKind::Recv: e = api.recv(res.dst, res.ncclCount, ncclFloat32, res.ncclPeer, comm, st.handle); break;
    }
    r.apiEnd = hostNowNs();
    const CorrelationIds ids = cupti ? CuptiTracer::lastCorrelationIds() : CorrelationIds{};
    if (e != ncclSuccess) {
        m_ncclFailed.store(true);
        std::string detail = "rank " + std::to_string(res.ncclRank) + " of " + std::to_string(res.ncclWorld);
        if (res.ncclPeer >= 0)
            detail += ", peer " + std::to_string(res.ncclPeer);
        detail += ", " + std::to_string(res.ncclCount) + " floats, device " + std::to_string(st.device);
        return ncclFailure(ncclCallName(op.collective), e, comm, res.where, detail);
    }
    uint32_t index = 0;
    return finishGpuOp(ts, p, st, r, t, cupti, ids, res.where, index);
}

#else

struct NcclState {};

Status CudaBackend::createCommunicators(RunInfo&)
{
    return m_collectives ? runtimeError(loadNccl()) : Status{};
}

void CudaBackend::releaseCommunicators(bool) {}

Status CudaBackend::issueCollective(ThreadState&, const PlannedOp&, OpResources& res, OpRecord)
{
    return runtimeError(res.where + ": " + loadNccl());
}

#endif

} // namespace streamscope::cuda_backend
