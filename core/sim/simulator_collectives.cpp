// The simulator's collectives: each rank's op of one collective call (or of one send/recv pair) waits until every
// rank taking part has reached it in its stream, then all of them run together for the algorithm's time over the
// job's link (collective_model.h). The last rank to arrive sets the start: a straggler holds everyone. A collective
// takes no SMs and no copy engine here (NCCL's kernels use a few blocks per channel; not modelled).
#include "collective_model.h"
#include "simulator_state.h"

#include <cmath>

namespace streamscope {

namespace {

int ceilLog2(int n)
{
    int steps = 0;
    while ((1 << steps) < n)
        ++steps;
    return steps;
}

bool hasTree(CollectiveKind k)
{
    return k == CollectiveKind::AllReduce || k == CollectiveKind::Broadcast;
}

double ringNs(CollectiveKind kind, double s, double n, double alpha)
{
    switch (kind) {
    case CollectiveKind::AllReduce: return 2 * (n - 1) / n * s + 2 * (n - 1) * alpha;
    case CollectiveKind::AllGather:
    case CollectiveKind::ReduceScatter: return (n - 1) / n * s + (n - 1) * alpha;
    case CollectiveKind::Broadcast: return s + (n - 1) * alpha;
    case CollectiveKind::Send:
    case CollectiveKind::Recv: return s + alpha;
    }
    return 0;
}

double treeNs(CollectiveKind kind, double s, int n, double alpha)
{
    const double steps = ceilLog2(n);
    return kind == CollectiveKind::AllReduce ? 2 * s + 2 * steps * alpha : s + steps * alpha;
}

} // namespace

CollectiveAlgorithm chosenAlgorithm(CollectiveKind kind, CollectiveAlgorithm algorithm, int64_t bytes, int ranks,
                                    double bps, int64_t latencyNs)
{
    if (!hasTree(kind))
        return CollectiveAlgorithm::Ring;
    if (algorithm != CollectiveAlgorithm::Auto)
        return algorithm;
    const double s = double(bytes) / bps * 1e9;
    return treeNs(kind, s, ranks, double(latencyNs)) < ringNs(kind, s, ranks, double(latencyNs))
        ? CollectiveAlgorithm::Tree
        : CollectiveAlgorithm::Ring;
}

int64_t collectiveNs(CollectiveKind kind, CollectiveAlgorithm algorithm, int64_t bytes, int ranks, double bps,
                     int64_t latencyNs)
{
    const bool p2p = kind == CollectiveKind::Send || kind == CollectiveKind::Recv;
    if (ranks <= 1 && !p2p)
        return 0;
    const double s = double(bytes) / bps * 1e9;
    const double alpha = double(latencyNs);
    const double ns = chosenAlgorithm(kind, algorithm, bytes, ranks, bps, latencyNs) == CollectiveAlgorithm::Tree
        ? treeNs(kind, s, ranks, alpha)
        : ringNs(kind, s, double(ranks), alpha);
    // At most an hour, as any op's duration: a huge size over a slow link must not leave int64's range.
    constexpr double kMaxNs = 3600.0 * 1e9;
    return int64_t(std::llround(std::min(ns, kMaxNs)));
}

} // namespace streamscope

namespace streamscope::sim_detail {

int Simulation::rankOf(int scenarioThread) const
{
    const auto& job = m_scenario.job;
    return job.expanded() && size_t(scenarioThread) < job.threadRank.size() ? job.threadRank[size_t(scenarioThread)]
                                                                            : 0;
}

// Finds (or opens) the call this op is its rank's part of: the k-th collective its host thread issues matches the
// k-th of the same thread of every other rank (NCCL: calls on a communicator match in issue order); the k-th send
// from rank a to rank b matches the k-th receive on b from a.
bool Simulation::joinCollective(uint32_t g, const Op& op, int scenarioThread)
{
    const auto& job = m_scenario.job;
    const int world = job.expanded() ? job.worldSize : 1;
    const int rank = rankOf(scenarioThread);
    const int thread = job.expanded() ? job.localThread[size_t(scenarioThread)] : scenarioThread;
    const bool p2p = op.collective == CollectiveKind::Send || op.collective == CollectiveKind::Recv;
    const std::string threadName = m_scenario.threads[size_t(scenarioThread)].name;
    // The op's JSON path in the rank's scenario, for messages.
    const std::string path = "/threads/" + std::to_string(thread) + "/ops/" + std::to_string(m_ops[g].key.op);
    int src = -1, dst = -1, side = 0;
    if (p2p) {
        const int peer = op.peerOffset != 0 ? ((rank + op.peerOffset) % world + world) % world : op.peer;
        auto fail = [&](const std::string& why) {
            m_error =
                Status(Error{{}, path, std::string(toString(op.collective)) + " on thread " + threadName + ": " + why},
                       ErrorClass::BadInput);
            return false;
        };
        if (peer < 0 || peer >= world)
            return fail("peer " + std::to_string(peer) + " is not a rank of this job of " + std::to_string(world)
                        + " ranks");
        if (peer == rank)
            return fail("rank " + std::to_string(rank) + " cannot send to or receive from itself");
        const bool send = op.collective == CollectiveKind::Send;
        src = send ? rank : peer;
        dst = send ? peer : rank;
        side = send ? 1 : 2;
    }
    // Collectives count per rank; a send or recv per pair of ranks and side (the rank is one end of the pair).
    const int64_t seq = m_collectiveSeq[{thread, src, dst, side, p2p ? -1 : rank}]++;
    auto [it, fresh] = m_collectiveOf.try_emplace({thread, src, dst, seq}, uint32_t(m_collectives.size()));
    if (fresh) {
        CollectiveCall call;
        call.kind = op.collective;
        call.algorithm = op.algorithm;
        call.bytes = op.bytes;
        call.root = op.root;
        call.expected = p2p ? 2 : world;
        call.what = p2p ? "send/recv #" + std::to_string(seq + 1) + " from rank " + std::to_string(src) + " to rank "
                + std::to_string(dst)
                        : std::string(toString(op.collective)) + " #" + std::to_string(seq + 1);
        // The thread's own name, without the rank prefix a job's rows carry.
        const size_t dot = threadName.find(" · ");
        call.what += " of thread \"" + (dot == std::string::npos ? threadName : threadName.substr(dot + 4)) + "\"";
        m_collectives.push_back(std::move(call));
    }
    CollectiveCall& call = m_collectives[it->second];
    const bool kindMatches = p2p || call.kind == op.collective;
    if (!kindMatches || call.bytes != op.bytes || (!p2p && call.root != op.root)) {
        m_error = Status(Error{{},
                               path,
                               "rank " + std::to_string(rank) + " calls " + std::string(toString(op.collective))
                                   + " of " + std::to_string(op.bytes) + " bytes where rank "
                                   + std::to_string(call.ranks.front()) + " calls " + std::string(toString(call.kind))
                                   + " of " + std::to_string(call.bytes) + " bytes (" + call.what
                                   + "): every rank must make the same collective calls in the same order"},
                         ErrorClass::BadInput);
        return false;
    }
    if (int(call.ops.size()) >= call.expected) {
        m_error = Status(Error{{}, path, call.what + ": more ranks call it than the job has"}, ErrorClass::BadInput);
        return false;
    }
    call.ops.push_back(g);
    call.ranks.push_back(rank);
    if (job.perHost > 0 && rank / job.perHost != call.ranks.front() / job.perHost)
        call.crossHost = true;
    if (!p2p && job.perHost > 0 && world > job.perHost)
        call.crossHost = true;
    m_ops[g].collective = it->second;
    return true;
}

// A rank's op reached the head of its stream: when it is the last of its call, every rank's op starts now.
void Simulation::collectiveArrived(uint32_t g)
{
    CollectiveCall& call = m_collectives[m_ops[g].collective];
    m_ops[g].queuedAt = m_now;
    if (++call.arrived < call.expected)
        return;
    const DeviceProfile& p = *m_devices[size_t(m_ops[g].device)].profile;
    const auto link = m_scenario.job.link;
    const double bps = call.crossHost ? p.ibBps : link == RankLink::Pcie ? p.pcieBps : p.nvlinkBps;
    const int64_t latency = call.crossHost ? p.ibLatencyNs
        : link == RankLink::Pcie           ? p.pcieLatencyNs
                                           : p.nvlinkLatencyNs;
    const int ranks = call.kind == CollectiveKind::Send || call.kind == CollectiveKind::Recv ? 2 : call.expected;
    const int64_t ns =
        std::max(p.minKernelNs, collectiveNs(call.kind, call.algorithm, call.bytes, ranks, bps, latency));
    for (uint32_t m : call.ops) {
        auto& op = m_ops[m];
        op.start = m_now;
        op.end = m_now + ns;
        schedule(op.end, EvType::OpDone, m);
    }
}

// The calls some ranks reached and others never did, for the message of a stalled simulation.
std::string Simulation::stalledCollectives() const
{
    for (const auto& call : m_collectives) {
        if (call.arrived >= call.expected)
            continue;
        std::string reached, blocked;
        for (size_t i = 0; i < call.ops.size(); ++i) {
            std::string& list = m_ops[call.ops[i]].queuedAt >= 0 ? reached : blocked;
            list += (list.empty() ? "" : ", ") + std::to_string(call.ranks[i]);
        }
        std::string text = call.what + " was reached by rank(s) " + (reached.empty() ? std::string("none") : reached)
            + " of " + std::to_string(call.expected) + " that take part";
        if (!blocked.empty())
            text +=
                "; rank(s) " + blocked + " issued it, but their stream never reached it (blocked behind earlier work)";
        if (call.ops.size() < size_t(call.expected))
            text += "; the others never call it";
        return text
            + ": every rank must make the same collective calls in the same order (a send needs its recv, and "
              "blocking sends on both sides deadlock as in NCCL outside a group)";
    }
    return {};
}

} // namespace streamscope::sim_detail
