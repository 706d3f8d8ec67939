// The simulator's event-driven state, shared by its two halves: the host side (host threads issuing ops, iterations,
// synchronizing calls: simulator_host.cpp) and the GPU side (streams and hardware queues, dependencies, copy engines
// and the link: simulator_gpu.cpp; thread blocks on the SMs: simulator_blocks.cpp; rates: simulator_rates.cpp). The
// entry point is SimulatorBackend (simulator.h, simulator.cpp). Internal to the simulator.
#pragma once

#include "simulator.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <deque>
#include <initializer_list>
#include <limits>
#include <map>
#include <queue>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace streamscope::sim_detail {

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

enum class GpuOpType : uint8_t { Kernel, Copy, Memset, HostFunc, Marker, Collective };

// What a kernel's blocks spend their time on, for the rules of kernels side by side (simulator_rates.cpp): the SMs'
// pipelines (fma, matmul), the device memory as a stream of loads and stores (triad, reduce), the device memory tile
// by tile with a barrier between a tile's loads and its stores (transpose), or neither (spin, empty; replayed
// kernels, whose measured durations already hold what their neighbours did to them).
enum class KernelLoad : uint8_t { None, Compute, Streaming, Tiled };
enum class OpState : uint8_t { Pending, Ready, Started, Done };

struct GpuOp {
    // (Fields by size, widest first: no padding between them. OpTable holds one for each op not yet released.)
    int64_t readyTime = 0;
    int64_t readyAt = -1;  // when every dependency was met (state Ready)
    int64_t queuedAt = -1; // kernels: when it left its hardware queue for the SMs
    int64_t start = -1;
    int64_t end = -1;
    // kernels
    int64_t blockNs = 0; // a block's time at its share of the device's rate (simulator_rates.cpp: its speed)
    uint64_t readySeq = 0;
    double capacity = 1; // the blocks of it the device holds at once (SMs x occupancy)
    double speed = 1;    // its blocks' rate against their share of the device's rate
    // copies, memsets, host functions
    int64_t durationNs = 0;
    // copies while they run: what is left of durationNs at the full one-way rate, the share of that rate they get
    // now (below 1 while a pinned copy runs the other way: duplex_gbps), and since when
    double workLeftNs = 0;
    double rate = 1.0;
    int64_t progressAt = 0;
    double duplexRate = 1.0; // pinned H2D/D2H: duplex bandwidth / one-way bandwidth; else 1
    // kernels and memsets: the device memory they touch through the L2 (l2_bytes); a kernel whose buffers fit in it
    // runs l2_cold_factor longer when other work touched enough memory since its last run to evict them
    int64_t l2Bytes = 0;

    int device = 0;
    int stream = -1;
    uint32_t pendingDeps = 0;
    uint32_t releasedBy = kNone; // the op whose end met its last dependency
    uint32_t waitHolder = kNone; // the op whose end (or freed SMs) let it start
    RecordRef rec;
    uint32_t dependents = kNone; // list in m_links
    uint32_t waiters = kNone;    // list in m_links (targets are wait sets)
    // kernels
    uint32_t blocksTotal = 0;
    uint32_t blocksLeft = 0; // not yet dispatched
    uint32_t blocksDone = 0;
    uint32_t threadsPerBlock = 0;
    uint32_t sharedPerBlock = 0;
    int priority = 0;
    uint32_t resident = 0; // its blocks on the SMs now
    // copies
    int engine = -1;
    int dstDevice = -1;
    MeasuredOpKey key;    // the scenario op it runs (its buffers: every repeat of an op uses the same ones)
    uint32_t hwQueue = 0; // the work queue it was issued to
    // batched_kernel_completion: the kernels issued back to back with it (kNone: not batched); its completion is
    // signalled to other work once the batch has no kernel running or waiting
    uint32_t batch = kNone;
    // collectives: the call of the job it is one rank's part of (m_collectives)
    uint32_t collective = kNone;

    GpuOpType type = GpuOpType::Marker;
    OpState state = OpState::Pending;
    bool graphNode = false;
    bool hasRecord = false;
    bool measuredGap = false;         // replay: the gap before it in its stream is the recording's (a host function's
                                      // includes the driver thread's wake-up)
    WaitCause wait = WaitCause::None; // what held it after it was ready
    KernelLoad load = KernelLoad::None;
    bool dramBound = false; // memsets and device-to-device copies: they share the device memory's bandwidth
    bool measured = false;  // replay: its duration is the recorded one (the cache state is in it)
    bool signalled = false; // batched_kernel_completion: its completion was signalled
};

// The run's GPU ops by id. An op's whole state lives in a slot while it may still change or be asked about; once it
// ended and its end was signalled (release()), its slot goes to a later op and only what later work asks of an ended
// op is kept: when it ended, its kind, its record and what released it. A million-op run held every op's state
// (232 bytes) to its end; it now holds 28 bytes of each and the state of the ops in flight.
class OpTable {
public:
    void reserve(size_t ops)
    {
        m_slotOf.reserve(ops);
        m_ended.reserve(ops);
    }
    uint32_t add(const GpuOp& op)
    {
        uint32_t slot = 0;
        if (m_freeSlots.empty()) {
            slot = uint32_t(m_live.size());
            m_live.push_back(op);
        } else {
            slot = m_freeSlots.back();
            m_freeSlots.pop_back();
            m_live[slot] = op;
        }
        m_slotOf.push_back(slot);
        m_ended.emplace_back();
        return uint32_t(m_slotOf.size() - 1);
    }
    bool live(uint32_t id) const { return m_slotOf[id] != kNone; }
    // The state of an op not yet released.
    GpuOp& operator[](uint32_t id) { return m_live[liveSlot(id)]; }
    const GpuOp& operator[](uint32_t id) const { return m_live[liveSlot(id)]; }
    // What stays known of every op, released or not.
    OpState state(uint32_t id) const
    {
        const uint32_t slot = m_slotOf[id];
        return slot != kNone ? m_live[slot].state : OpState::Done;
    }
    int64_t end(uint32_t id) const { return known(id, &GpuOp::end, &Ended::end); }
    GpuOpType type(uint32_t id) const { return known(id, &GpuOp::type, &Ended::type); }
    bool graphNode(uint32_t id) const { return known(id, &GpuOp::graphNode, &Ended::graphNode); }
    bool hasRecord(uint32_t id) const { return known(id, &GpuOp::hasRecord, &Ended::hasRecord); }
    RecordRef rec(uint32_t id) const { return known(id, &GpuOp::rec, &Ended::rec); }
    uint32_t releasedBy(uint32_t id) const { return known(id, &GpuOp::releasedBy, &Ended::releasedBy); }
    // An op that ended and was signalled gives its slot back (nothing in flight refers to its state any more).
    void release(uint32_t id)
    {
        const uint32_t slot = liveSlot(id);
        const GpuOp& op = m_live[slot];
        m_ended[id] = {op.end, op.rec, op.releasedBy, op.type, op.graphNode, op.hasRecord};
        m_slotOf[id] = kNone;
        m_freeSlots.push_back(slot);
    }

private:
    struct Ended {
        int64_t end = -1;
        RecordRef rec;
        uint32_t releasedBy = kNone;
        GpuOpType type = GpuOpType::Marker;
        bool graphNode = false;
        bool hasRecord = false;
    };
    // A field of op `id` from its slot while it has one (one lookup), else what was kept when it was released (read
    // only then: these are asked on every issue and sync check).
    template <class T>
    T known(uint32_t id, T GpuOp::*field, T Ended::*kept) const
    {
        const uint32_t slot = m_slotOf[id];
        return slot != kNone ? m_live[slot].*field : m_ended[id].*kept;
    }
    uint32_t liveSlot(uint32_t id) const
    {
        const uint32_t slot = m_slotOf[id];
        if (slot == kNone) [[unlikely]]
            releasedOpUsed(id);
        return slot;
    }
    [[noreturn]] static void releasedOpUsed(uint32_t id);

    std::vector<GpuOp> m_live;
    std::vector<uint32_t> m_freeSlots;
    std::vector<uint32_t> m_slotOf; // by id: its slot in m_live, kNone once released
    std::vector<Ended> m_ended;     // by id: set when released
};

// One collective call (or one send/recv pair) of a job: the ranks' ops that take part, matched by their order per
// host thread (simulator_collectives.cpp).
struct CollectiveCall {
    CollectiveKind kind = CollectiveKind::AllReduce;
    CollectiveAlgorithm algorithm = CollectiveAlgorithm::Auto;
    int64_t bytes = 0;
    int expected = 0; // ops that take part: every rank, or 2 for a send/recv pair
    int root = 0;
    std::string what; // for messages: "all-reduce #3 of thread \"train\""
    std::vector<uint32_t> ops;
    std::vector<int> ranks; // of ops
    int arrived = 0;
    bool crossHost = false;
};

// Kernels issued back to back on a device whose completions are signalled together (batched_kernel_completion):
// when the last of them ends. A kernel issued after that, or after another op, starts a new batch.
struct KernelBatch {
    uint32_t open = 0;           // members not ended yet
    std::vector<uint32_t> ended; // members ended, their completion not yet signalled
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
    uint32_t hwQueue = 0;        // global queue index
    uint32_t lastOp = kNone;     // last op issued, markers included
    uint32_t lastRealOp = kNone; // last op with a GPU span
    RecordRef lastReal;
    std::vector<RecordRef> pendingEventFlows; // sources of event flows to the next real op
};

struct EventState {
    uint32_t capturedOp = kNone;     // the record marker of the latest record
    uint32_t capturedRealOp = kNone; // the last real op before that record
    RecordRef capturedReal;
};

struct WaitSet {
    uint32_t remaining = 0;
    int hostThread = 0;
    uint32_t record = 0; // index in the host thread's records
    int64_t wakeNs = 0;  // from the last awaited op's end until the call returns
    int64_t extraNs = 0; // cost of the call after the wait (malloc/free)
};

// A run of SMs' share of a batch: `blocks` thread blocks on each of the SMs sm .. sm + sms - 1. (SMs in the same
// state get the same blocks of a kernel: a kernel spread over an idle H200 is one item, not 132.)
struct BatchItem {
    uint16_t sm;
    uint16_t sms;
    uint32_t blocks;
};

// Thread blocks of one kernel dispatched together: they end together, when their work (in nanoseconds at their
// share of the device's rate) is done at the speed their kernel gets while they run.
struct Batch {
    uint32_t kernel;
    uint32_t first; // in m_batchItems
    uint32_t count;
    uint32_t blocks;
    double workLeftNs;
    double rate;
    int64_t progressAt;
    int64_t end;
    bool done;
    uint32_t pending = 0; // BlocksDone events of it still in the queue: its slot is reused only once none are left
};

struct DeviceState {
    const DeviceProfile* profile = nullptr;
    // What each SM has free. Never negative: dispatch places no more than is free.
    struct SmFree {
        int32_t blocks;
        int32_t threads;
        int64_t shared;
        bool operator==(const SmFree&) const = default;
    };
    std::vector<SmFree> smFree;
    // Bit s: SM s has a block slot and a thread free (else no block fits it): dispatch visits only these.
    std::vector<uint64_t> smsWithRoom;
    void updateRoom(size_t sm)
    {
        const uint64_t bit = uint64_t(1) << (sm % 64);
        if (smFree[sm].blocks > 0 && smFree[sm].threads > 0)
            smsWithRoom[sm / 64] |= bit;
        else
            smsWithRoom[sm / 64] &= ~bit;
    }
    // Sets the room bits of SMs first .. first + count - 1.
    void setRoom(size_t first, size_t count)
    {
        for (size_t sm = first, end = first + count; sm < end;) {
            const size_t bit = sm % 64;
            const size_t n = std::min(end - sm, 64 - bit);
            smsWithRoom[sm / 64] |= (n == 64 ? ~uint64_t(0) : (uint64_t(1) << n) - 1) << bit;
            sm += n;
        }
    }
    int64_t sumFreeThreads = 0;
    std::vector<uint32_t> dispatchList;            // kernels with blocks left, by (priority, ready order)
    std::vector<std::deque<uint32_t>> engineQueue; // copies waiting for each engine, in issue order (FIFO)
    std::vector<uint32_t> engineRunning;           // the copy each engine runs now, or kNone
    std::vector<uint32_t> engineLastOp;            // the copy that holds or last held each engine
    std::vector<uint32_t> dramRunning;             // memsets and device-to-device copies running now
    std::vector<uint32_t> runningBatches;          // batches of thread blocks on the SMs now
    std::vector<uint32_t> runningKernels;          // kernels with blocks on the SMs now
    int64_t hostFuncBusyUntil = 0;
    uint32_t hostFuncLastOp = kNone;
    uint32_t legacyStream = kNone;
    std::vector<uint32_t> streams; // planned streams on this device
    uint32_t queueBase = 0;        // its first work queue in m_hwQueues
    bool engineQueues = false;     // work_queues "engines": a compute queue and one per copy engine
    int64_t l2Traffic = 0;         // bytes kernels and memsets touched in device memory so far
    uint32_t openBatch = kNone;    // batched_kernel_completion: the batch the next kernel issued joins while
                                   // it has a kernel running or waiting
};

struct HostAgent {
    int64_t now = 0;
    size_t recordsPopulated = 0; // its records' pages are faulted in up to this many (populateAhead)
    int iteration = 0;
    int task = 0;
    int tasksTaken = 0;
    size_t opIndex = 0;
    bool finished = true;
    int lastLaunchStream = -1; // the stream of its previous kernel launch
    int64_t launchUntil = -1;  // when its latest kernel launch call returns
};

inline int occupancy(const DeviceProfile& p, uint32_t threads, uint32_t shared)
{
    if (threads == 0 || threads > uint32_t(p.maxThreadsPerSm))
        return 0;
    int o = std::min(p.maxBlocksPerSm, p.maxThreadsPerSm / int(threads));
    if (shared > 0)
        o = std::min<int64_t>(o, p.sharedBytesPerSm / shared);
    return o;
}

inline int64_t nsFor(double amount, double perSecond)
{
    return int64_t(std::llround(amount / perSecond * 1e9));
}

class Simulation {
public:
    Simulation(const RunPlan& plan, const std::vector<DeviceProfile>& profiles, const SimulatorOptions& options,
               Recording& out);

    Status run();

private:
    void schedule(int64_t t, EvType type, uint32_t a) { m_queue.push(Ev{std::max(t, m_now), m_seq++, type, a}); }

    // --- iterations and host threads -------------------------------------------------------------------------

    void reserveForRun();
    void startIteration(int iteration, int64_t t);
    bool takeTask(int h);
    void threadFinished(int h);
    void maybeEndIteration();
    void hostStep(int h);
    // One host call being simulated: its op, where the plan puts it, its record and the profile's costs.
    struct HostCall {
        int h;
        const Op& op;
        int opIndex;
        PlannedOp po;
        const DeviceProfile& prof;
        uint32_t recIndex;
        RecordRef self;
        MeasuredOpKey key;
    };
    // How a call ends: it returned (the thread goes on), it blocks until woken, or the simulation failed.
    enum class CallEnd { Returned, Blocked, Abandoned };
    HostCall beginCall(int h, const Op& op, int opIndex);
    OpRecord& callRecord(const HostCall& c);
    void endCall(const HostCall& c, int64_t cost);
    int64_t launchCost(int h, int64_t alone, const DeviceProfile& prof) const;
    CallEnd issueStreamWork(const HostCall& c);
    CallEnd launchGraph(const HostCall& c);
    void recordEvent(const HostCall& c);
    void waitEvent(const HostCall& c);
    CallEnd syncStream(const HostCall& c);
    CallEnd syncEvent(const HostCall& c);
    CallEnd syncDevice(const HostCall& c);
    void syncFlows(const std::vector<uint32_t>& streams, RecordRef to, FlowKind kind);
    void syncFlows(std::initializer_list<int> streams, RecordRef to, FlowKind kind);
    bool waitFor(const std::vector<uint32_t>& ops, int h, uint32_t record, int64_t wakeNs, int64_t extraNs);
    void wake(uint32_t ws);

    // --- GPU ops -------------------------------------------------------------------------------------------

    uint32_t newMarker(int stream);
    uint32_t makeGpuOp(const Op& op, int stream, RecordRef rec, bool graphNode);
    void applyMeasured(GpuOp& g, const OpRecord& r, const DeviceProfile& p) const;
    int64_t streamGap(uint32_t g, RecordRef rec, int64_t modelled);
    int64_t measuredHost(const MeasuredOpKey& key, int64_t modelled) const;
    static int64_t l2Footprint(const Op& op);
    struct BlockTime {
        int64_t ns;
        KernelLoad load;
    };
    static BlockTime blockDuration(const Op& op, const DeviceProfile& p, int occ, uint32_t blocks, uint32_t threads,
                                   bool graphNode);
    void addDep(uint32_t src, uint32_t dst, int64_t gap);
    int64_t gapBefore(const GpuOp& dst, uint32_t src) const;
    void issue(uint32_t g, int stream, int64_t launchTime, RecordRef rec);
    static bool isBlocking(StreamKind k) { return k == StreamKind::Blocking || k == StreamKind::PerThreadDefault; }

    uint32_t realReleaser(uint32_t g) const;
    void holdBy(GpuOp& op, WaitCause cause, uint32_t holder);
    void opReady(uint32_t g);
    void start(uint32_t g);
    void dispatch(int device);
    void touchL2(uint32_t g);
    void blocksDone(uint32_t b);
    void batchEventPopped(uint32_t b);
    void compactBatchItems();
    DeviceState* copyDestination(const GpuOp& op);
    void pumpCopies();
    void setRates(DeviceState& dev);
    double dramDemand(const DeviceState& dev) const;
    void setKernelRates(DeviceState& dev, double dram);
    void setCopyRates(DeviceState& dev, double dram);
    void copyDone(uint32_t g);
    void memsetDone(uint32_t g);
    void complete(uint32_t g);
    void record(uint32_t g);
    void releaseDependents(uint32_t g, bool sameBatchOnly);
    uint32_t newLink(uint32_t target, uint32_t next, int64_t gap);
    void release(uint32_t g);
    void signal(uint32_t g);

    // --- collectives (simulator_collectives.cpp) ------------------------------------------------------------------
    int rankOf(int scenarioThread) const;
    bool joinCollective(uint32_t g, const Op& op, int scenarioThread);
    void collectiveArrived(uint32_t g);
    std::string stalledCollectives() const;

    const RunPlan& m_plan;
    const Scenario& m_scenario;
    const SimulatorOptions& m_options;
    Recording& m_out;
    std::priority_queue<Ev, std::vector<Ev>, std::greater<>> m_queue;
    int64_t m_now = 0;
    uint64_t m_seq = 0;
    Status m_error;

    std::vector<DeviceState> m_devices;
    std::map<std::pair<int, MeasuredOpKey>, int64_t> m_l2LastTouch; // (device, op): l2Traffic after its last start
    std::vector<std::deque<uint32_t>> m_hwQueues;
    std::vector<KernelBatch> m_batchesOfKernels;
    std::vector<StreamState> m_streams;
    std::vector<EventState> m_events;
    OpTable m_ops;
    std::vector<uint32_t> m_toRelease; // ops signalled during the event being handled: released after it
    // Dependency and waiter lists, and wait sets: those of released ops and woken host calls are reused.
    std::vector<Link> m_links;
    std::vector<uint32_t> m_freeLinks;
    std::vector<WaitSet> m_waitSets;
    std::vector<uint32_t> m_freeWaitSets;
    // Batches of thread blocks and their (SMs, blocks) items. A million-op run dispatches millions of items,
    // so slots of finished batches are reused and the items of finished ones dropped (compactBatchItems()).
    std::vector<Batch> m_batches;
    std::vector<uint32_t> m_freeBatches;
    std::vector<BatchItem> m_batchItems;
    std::vector<BatchItem> m_placed; // dispatch's scratch: one kernel's items of one call
    size_t m_liveBatchItems = 0;
    std::vector<CollectiveCall> m_collectives;
    std::map<std::tuple<int, int, int, int64_t>, uint32_t> m_collectiveOf;  // (thread, src, dst, seq) -> call
    std::map<std::tuple<int, int, int, int, int>, int64_t> m_collectiveSeq; // (thread, src, dst, side, rank) -> seq
    uint32_t m_freedBy = kNone; // the kernel whose blocks just ended, while dispatch() hands out what they freed

    std::vector<HostAgent> m_agents;
    std::vector<int> m_nextTask;
    int m_iteration = 0;
    int m_totalIterations = 1;
    int m_finishedThreads = 0;
    bool m_barrierPending = false;
    int64_t m_outstanding = 0;
};

} // namespace streamscope::sim_detail
