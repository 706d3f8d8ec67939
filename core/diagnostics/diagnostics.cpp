// The diagnostic engine: the table of rules (id, severity, title, what to change) and diagnose(), which runs the
// wanted rules over one Context. The rules themselves: serialization_rules.cpp, host_rules.cpp, effect_rules.cpp,
// timing_rules.cpp.
#include "diagnostics.h"

#include "diagnostics_context.h"
#include "parallel_for.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <thread>

namespace streamscope {

namespace {

const std::vector<DiagnosticRule> kRules = {
    {"pageable-memcpy", "warning", "Copies from pageable host memory block the host",
     "Allocate the host buffers pinned (cudaMallocHost / cudaHostRegister) so that cudaMemcpyAsync returns at once "
     "and the copies overlap kernels."},
    {"legacy-default-stream", "warning", "The legacy default stream serializes work",
     "Create streams with cudaStreamNonBlocking, compile with --default-stream per-thread, or give each host thread "
     "its own stream instead of stream 0."},
    {"hardware-queue-false-dependency", "warning", "Streams share hardware queues: false dependencies",
     "Set CUDA_DEVICE_MAX_CONNECTIONS (up to 32) before the CUDA context is created, use fewer streams, or issue "
     "the work breadth-first (first op of every stream, then the second ...)."},
    {"gpu-filling-kernel", "warning", "A kernel fills the GPU and leaves no room for other streams",
     "Give the big kernel fewer blocks (a grid-stride loop over one or two waves), or a lower priority than the "
     "work that must not wait."},
    {"host-func-serialization", "warning", "Host functions of different streams run one at a time",
     "Keep host functions short, or move their work into kernels or onto host threads of your own and signal the "
     "stream with an event."},
    {"sync-in-loop", "warning", "A host thread synchronizes after nearly every launch",
     "Issue a batch of work before synchronizing, and synchronize on an event only where the host needs the "
     "result."},
    {"launch-bound", "warning", "GPU operations are shorter than their launches",
     "Capture the sequence into a CUDA graph, fuse the small kernels, or give each launch more work."},
    {"implicit-sync", "warning", "A call synchronized the device implicitly",
     "Allocate and free outside the loop (or use cudaMallocAsync / cudaFreeAsync and a memory pool)."},
    {"timing-perturbation", "warning", "Timing changed the run",
     "Time with CUPTI (--timing cupti) where per-op CUDA events share hardware queues; with CUDA events where CUPTI "
     "slows graph launches; the trace stores the untimed makespan to compare."},
    {"straggler", "warning", "One rank held the others in collectives",
     "Find what made the last rank late (its kernels before the collective: a slower GPU, more data, host work) and "
     "balance the work; the other ranks' time waiting is lost to all of them."},
    {"wait-unrecorded-event", "error", "A stream waits on an event that is never recorded",
     "Record the event (cudaEventRecord) in the producing stream before the consumer's stream waits on it."},
    // Effects: what the run shows, the way the lessons teach it.
    {"streams-overlap", "info", "Work in different streams overlapped",
     "Independent work in separate streams runs at once when the device has room for it."},
    {"stream-serialization", "info", "One stream ran its work one operation at a time",
     "Operations of one stream run in issue order; put work that does not depend on the previous operation into "
     "another stream (created with cudaStreamNonBlocking) so that it can overlap."},
    {"copy-compute-overlap", "info", "Copies overlapped kernels",
     "The copy engines and the SMs work at once when copies and kernels are in different streams and the host "
     "memory is pinned."},
    {"event-dependency", "info", "An event ordered work across streams",
     "cudaEventRecord + cudaStreamWaitEvent make one stream wait for another on the GPU without blocking the host."},
    {"multi-device-overlap", "info", "Several GPUs worked at the same time",
     "Each device has its own SMs and copy engines: give each device its own host thread or stream and its share "
     "of the work."},
    {"stream-priority", "info", "A higher-priority stream overtook a running kernel",
     "Give latency-critical work a stream created with cudaStreamCreateWithPriority and a higher (numerically "
     "lower) priority."},
    {"graph-launch", "info", "A CUDA graph launched many operations with one call",
     "Capture short, repeated sequences of operations into a CUDA graph and launch it with cudaGraphLaunch."},
};

} // namespace

const std::vector<DiagnosticRule>& diagnosticRules()
{
    return kRules;
}

const DiagnosticRule* findDiagnosticRule(std::string_view id)
{
    for (const auto& r : kRules)
        if (r.id == id)
            return &r;
    return nullptr;
}

std::vector<Diagnostic> diagnose(const Trace& input, const DiagnosticOptions& options)
{
    using namespace diag;
    if (options.cancel && options.cancel->load(std::memory_order_relaxed))
        return {};
    Trace storage;
    const Trace* tp = &input;
    if (!input.finalized()) {
        storage = input;
        storage.finalize();
        tp = &storage;
    }
    // The caller's IncomingFlows index `input`: not given for a finalized copy of it.
    const Context c(*tp, options, tp == &input ? options.incoming : nullptr);
    auto wanted = [&options](std::string_view id) {
        const auto& r = options.rules;
        return r.empty() || std::find(r.begin(), r.end(), id) != r.end();
    };
    using RuleFn = void (*)(const Context&, std::vector<Diagnostic>&);
    const std::pair<std::string_view, RuleFn> rules[] = {
        {"pageable-memcpy", pageableMemcpy},
        {"legacy-default-stream", legacyDefaultStream},
        {"hardware-queue-false-dependency", hardwareQueues},
        {"gpu-filling-kernel", gpuFillingKernel},
        {"host-func-serialization", hostFuncSerialization},
        {"sync-in-loop", syncInLoop},
        {"launch-bound", launchBound},
        {"implicit-sync", implicitSync},
        {"timing-perturbation", timingPerturbation},
        {"straggler", straggler},
        {"wait-unrecorded-event", waitUnrecordedEvent},
        {"streams-overlap", streamsOverlap},
        {"stream-serialization", streamSerialization},
        {"copy-compute-overlap", copyComputeOverlap},
        {"event-dependency", eventDependency},
        {"multi-device-overlap", multiDeviceOverlap},
        {"stream-priority", streamPriority},
        {"graph-launch", graphLaunch},
    };
    // The rules read the trace and the context only: on a big trace they run on two threads, each rule into its
    // own list, and the lists are joined in rule order, as one thread gives them. The longest first (on the 10 M-span
    // benchmark trace streams-overlap is more than half of all; copy-compute-overlap, multi-device-overlap and
    // graph-launch follow), so that none of them starts last. Two threads, not one per core: the longest rule alone
    // takes about as long as all the others together, and each rule running at once adds its working arrays, a
    // few bytes per span (gigabytes at 100 M spans).
    constexpr size_t kRuleCount = std::size(rules);
    std::vector<size_t> order;
    for (const std::string_view first :
         {"streams-overlap", "copy-compute-overlap", "multi-device-overlap", "graph-launch", "stream-serialization"})
        for (size_t r = 0; r < kRuleCount; ++r)
            if (rules[r].first == first)
                order.push_back(r);
    for (size_t r = 0; r < kRuleCount; ++r)
        if (std::find(order.begin(), order.end(), r) == order.end())
            order.push_back(r);
    std::vector<std::vector<Diagnostic>> found(kRuleCount);
    // From a million spans (below, threads cost more than they save) to 50 million (above, the memory a second
    // rule at once needs weighs more than the time: at 10 M spans the analysis took 19 % less wall time and 20 %
    // more memory).
    constexpr size_t kSpansForThreads = 1'000'000;
    constexpr size_t kSpansForOneThread = 50'000'000;
    constexpr unsigned kMaxThreads = 2;
    const unsigned threads = c.n >= kSpansForThreads && c.n < kSpansForOneThread
        ? std::min(kMaxThreads, std::max(1u, std::thread::hardware_concurrency()))
        : 1;
    parallelFor(
        kRuleCount,
        [&](size_t k) {
            const auto& [id, fn] = rules[order[k]];
            if (options.cancel && options.cancel->load(std::memory_order_relaxed))
                return;
            if (wanted(id))
                fn(c, found[order[k]]);
        },
        threads);
    std::vector<Diagnostic> out;
    for (auto& list : found)
        std::move(list.begin(), list.end(), std::back_inserter(out));
    return out;
}

std::optional<Diagnostic> findEffect(const Trace& trace, const std::string& effect, const DiagnosticOptions& options)
{
    if (!findDiagnosticRule(effect))
        return std::nullopt;
    DiagnosticOptions only = options;
    only.rules = {effect};
    auto found = diagnose(trace, only);
    if (found.empty())
        return std::nullopt;
    return std::move(found.front());
}

} // namespace streamscope