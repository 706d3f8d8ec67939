// The scenario: what the user configures — devices, streams, host threads and the operations they issue.
// Read and written as JSON by scenario_json.h; names below are the JSON spellings.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace streamscope {

inline constexpr int kScenarioVersion = 1;

struct Dim3 {
    uint32_t x = 1, y = 1, z = 1;
    uint64_t count() const { return uint64_t(x) * y * z; }
    bool operator==(const Dim3&) const = default;
};

enum class StreamKind {
    LegacyDefault,    // "legacy-default": the NULL stream; a barrier for blocking streams of its device
    PerThreadDefault, // "per-thread-default": cudaStreamPerThread; one blocking stream per host thread
    Blocking,         // "blocking": cudaStreamCreate
    NonBlocking,      // "non-blocking": cudaStreamCreateWithFlags(cudaStreamNonBlocking)
};

enum class OpKind {
    Kernel,     // "kernel"
    Memcpy,     // "memcpy"
    Memset,     // "memset"
    Record,     // "record"       cudaEventRecord
    Wait,       // "wait"         cudaStreamWaitEvent
    HostFunc,   // "host-func"    cudaLaunchHostFunc
    StreamSync, // "stream-sync"  cudaStreamSynchronize
    EventSync,  // "event-sync"   cudaEventSynchronize
    DeviceSync, // "device-sync"  cudaDeviceSynchronize
    HostWork,   // "host-work"    CPU time on the host thread
    Graph,      // "graph"        a sub-list captured once into a CUDA graph, launched per issue
    Malloc,     // "malloc"       cudaMalloc (synchronizes implicitly)
    Free,       // "free"         cudaFree (synchronizes implicitly)
    // A collective or point-to-point transfer between ranks (NCCL: ncclAllReduce, ..., ncclSend/ncclRecv): a GPU op
    // in its stream, spelled in JSON by its CollectiveKind ("all-reduce", ...). docs/SCENARIO.md "Collectives".
    Collective,
};

enum class CollectiveKind : uint8_t {
    AllReduce,     // "all-reduce"
    AllGather,     // "all-gather"
    ReduceScatter, // "reduce-scatter"
    Broadcast,     // "broadcast"
    Send,          // "send"
    Recv,          // "recv"
};

// How the simulator moves a collective's data between the ranks (docs/SCENARIO.md "Collectives").
enum class CollectiveAlgorithm : uint8_t {
    Auto, // "auto": the faster of ring and tree for the op, as NCCL's tuner picks one per call
    Ring, // "ring"
    Tree, // "tree"
};

enum class CopyKind { H2D, D2H, D2D, P2P }; // "h2d", "d2h", "d2d", "p2p"

// Kernels of the kernel library (kernels/). Spin runs each block for `durationUs` (timed by %globaltimer);
// the others do real work sized by `size`.
enum class KernelKind {
    Spin,      // "spin"
    Empty,     // "empty"
    Fma,       // "fma": compute-bound, `size` FMA iterations per thread
    Triad,     // "triad": memory-bound a = b + s*c over `size` floats
    Matmul,    // "matmul": tiled size x size x size float multiply
    Transpose, // "transpose": tiled size x size float transpose
    Reduce,    // "reduce": sum of `size` floats
};

struct DeviceSpec {
    int index = 0;       // CUDA device ordinal
    std::string profile; // simulator device profile id ("h200", "laptop"); empty = default
};

struct StreamSpec {
    std::string name;
    int device = 0;
    StreamKind kind = StreamKind::Blocking;
    int priority = 0; // CUDA convention: lower number = higher priority (H200: 0 .. -5)
};

struct Op {
    OpKind kind = OpKind::Kernel;
    std::string name;     // shown on the timeline and as the NVTX range; defaults from the op
    std::string stream;   // stream name (GPU ops, record, wait, host-func, stream-sync, graph)
    int streamIndex = -1; // resolved index into Scenario::streams
    std::string event;    // record, wait, event-sync
    int eventIndex = -1;  // resolved index into Scenario::events

    // kernel
    KernelKind kernel = KernelKind::Spin;
    Dim3 grid;
    Dim3 block{256, 1, 1};
    bool gridGiven = false;  // false: derived from `size` for problem-size kernels
    double durationUs = 0;   // spin: per block; host-func, host-work: on the host
    int64_t size = 0;        // problem size of fma/triad/matmul/transpose/reduce
    int64_t sharedBytes = 0; // dynamic shared memory per block

    // memcpy / memset / malloc / free
    CopyKind copy = CopyKind::H2D;
    int64_t bytes = 0;
    bool pinned = true; // host memory of h2d/d2h copies: "host": "pinned" | "pageable"
    int dstDevice = -1; // p2p: destination device (source is the stream's device)

    // collective: `bytes` is the whole buffer (all-reduce: the buffer reduced; all-gather: the gathered output;
    // reduce-scatter: the input; broadcast, send, recv: the data moved)
    CollectiveKind collective = CollectiveKind::AllReduce;
    CollectiveAlgorithm algorithm = CollectiveAlgorithm::Auto;
    int root = 0;       // broadcast: the rank that sends
    int peer = -1;      // send/recv: the other rank, or -1 when peerOffset names it
    int peerOffset = 0; // send/recv: +1 "next", -1 "previous" (around the ring of ranks); 0 when peer is a rank

    // graph: the nodes, captured from `stream` as a chain
    std::vector<Op> ops;
};

struct ThreadSpec {
    std::string name;
    int device = 0;  // cudaSetDevice at thread start
    int repeat = 1;  // times the op list is issued per iteration (tasks, for a worker pool)
    int workers = 1; // > 1: a worker pool of this many host threads taking the `repeat` tasks from a queue
    std::vector<Op> ops;
};

// How a GPU run times its operations (DESIGN.md §4; docs/TRACE.md "Timing"). "auto": CUPTI where it is usable,
// else CUDA events.
enum class TimingMode : uint8_t {
    Auto,   // "auto"
    Cupti,  // "cupti":  CUPTI activity records; per-stream anchor events only
    Events, // "events": CUDA events around every op (waits corrected or marked uncertain)
    Both,   // "both":   CUPTI spans plus the per-op event times of the same run, for their error
};
std::string_view toString(TimingMode);
std::optional<TimingMode> timingModeFromString(std::string_view);

struct RunSettings {
    int warmup = 0;     // iterations run first and left out of the trace
    int iterations = 1; // measured iterations; all threads join and all devices sync between iterations
    std::map<std::string, std::string> env; // e.g. CUDA_DEVICE_MAX_CONNECTIONS
    TimingMode timing = TimingMode::Auto;   // GPU runs only; the CLI's --timing overrides it
    std::optional<int> maxConnections() const;
};

// A machine-checkable statement about the result of a run (see expect.h for the metrics).
struct Expectation {
    std::string id;
    std::string metric;               // makespan_us, busy_us, overlap, max_concurrency, speedup, gap_us, ...
    std::vector<std::string> streams; // metric arguments: stream names
    std::vector<std::string> spans;   // metric arguments: span names
    std::vector<std::string> kinds;   // metric arguments: span kinds
    int device = -1;
    std::string op = ">="; // <, <=, >, >=, ==
    double value = 0;
    std::string why;  // the sentence a user reads
    bool key = false; // the check that the lesson's contrasting variant must fail
};

// A named change of the scenario: JSON pointer assignments applied to the scenario JSON before parsing.
struct Variant {
    std::string id;
    std::string title;
    std::string description;
    std::string patchJson;           // {"/streams/0/kind": "blocking", ...} as JSON text
    std::vector<Expectation> expect; // replaces the scenario's expectations when present
    bool hasExpect = false;
    std::string effect; // replaces the scenario's effect when set
};

// How a scenario runs as a job of several ranks (docs/SCENARIO.md "Ranks"): every rank runs the scenario, with the
// overrides that name it applied first.
struct RankOverride {
    std::vector<int> ranks;
    std::string patchJson; // {"/threads/0/ops/1/duration_us": 900} as JSON text, applied like a variant's "set"
    std::string why;       // what the override stands for ("rank 2 is a straggler")
};

enum class RankLink : uint8_t {
    NvLink, // "nvlink"
    Pcie,   // "pcie"
};

struct RankSpec {
    int count = 0;                      // ranks of a run without a launcher; 0: not a multi-rank scenario
    int perHost = 0;                    // ranks per host (0: all on one host); collectives across hosts use InfiniBand
    RankLink link = RankLink::NvLink;   // how the GPUs of one host are connected
    bool bindDeviceByLocalRank = false; // "device": "local-rank": each rank's device 0 is GPU <local rank>
    std::vector<RankOverride> overrides;
    bool given() const { return count > 0; }
};

// A job's scenario expanded for the simulator (scenario_json.h expandJob): every rank's devices, streams, threads and
// events in one scenario, named "rank R · ...", and which rank each thread belongs to. Empty for an ordinary scenario;
// never written to JSON.
struct JobLayout {
    int worldSize = 0; // 0: not an expanded job
    int perHost = 0;   // ranks per host (0: all on one host)
    RankLink link = RankLink::NvLink;
    int devicesPerRank = 1;       // rank R's device d is device R * devicesPerRank + d
    std::vector<int> threadRank;  // by thread
    std::vector<int> localThread; // by thread: its index among its rank's threads
    std::vector<int> streamRank;  // by stream
    bool expanded() const { return worldSize > 0; }
};

struct Scenario {
    int version = kScenarioVersion;
    std::string id;
    std::string title;
    std::string description; // what to look for, a few sentences
    // The effect the scenario shows, as the id of the diagnostic rule that names it (diagnostics.h): a lesson's
    // analysis must report it, on the simulator and on a GPU.
    std::string effect;
    std::vector<DeviceSpec> devices;
    std::vector<StreamSpec> streams;
    std::vector<ThreadSpec> threads;
    std::vector<std::string> events; // all event names, collected from the ops
    RunSettings run;
    std::vector<Expectation> expect;
    std::vector<Variant> variants;
    RankSpec ranks;
    JobLayout job;

    int streamIndex(std::string_view name) const;
    int eventIndex(std::string_view name) const;
    const DeviceSpec* device(int index) const;
};

std::string_view toString(StreamKind);
std::string_view toString(OpKind);
std::string_view toString(CopyKind);
std::string_view toString(KernelKind);
std::optional<StreamKind> streamKindFromString(std::string_view);
std::optional<OpKind> opKindFromString(std::string_view);
std::optional<CopyKind> copyKindFromString(std::string_view);
std::optional<KernelKind> kernelKindFromString(std::string_view);
std::string_view toString(CollectiveKind);
std::string_view toString(CollectiveAlgorithm);
std::string_view toString(RankLink);
std::optional<CollectiveKind> collectiveKindFromString(std::string_view);
std::optional<CollectiveAlgorithm> collectiveAlgorithmFromString(std::string_view);
std::optional<RankLink> rankLinkFromString(std::string_view);
// The JSON spelling of an op's "op" field: its kind, or for a collective its CollectiveKind.
std::string_view opName(const Op&);
// The prefix of a rank's rows in a job: "rank 2 · ".
std::string rankPrefix(int rank);
// True when any thread of the scenario has a collective op.
bool hasCollectives(const Scenario&);

// True when the op puts work on a GPU stream (and so has a GPU span).
bool isGpuOp(OpKind);
// The name shown for an op: its own name, else one derived from it ("matmul", "memcpy h2d", ...).
std::string displayName(const Op&);
// Grid of a kernel: the given one, or one derived from `size` for problem-size kernels.
Dim3 effectiveGrid(const Op&);
// Total operation count, graph nodes and repeats included, over all iterations (warm-up excluded).
int64_t countOperations(const Scenario&);

} // namespace streamscope

namespace streamscope {
// The CUDA runtime call an op makes ("cudaLaunchKernel", ...); host-work has none and returns "host-work".
std::string_view cudaApiName(OpKind);
} // namespace streamscope
