// Analysis of a trace, shared by the CLI and the GUI: metrics per run, device, stream and host thread (busy time,
// idle gaps, the concurrency profile, overlap between streams, copy/compute overlap, speedup over the same work
// serialized, launch rates), the critical path through the dependency graph and the comparison of two traces. The
// what-if sweeps of a scenario are in whatif.h, the diagnostics (why work did not overlap) are in diagnostics.h.
// See docs/ANALYSIS.md.
//
// Span indices in the results refer to the trace as given; the trace must be finalized (the runner and the trace
// readers finalize). An unfinalized trace is analysed on a finalized copy, and indices then refer to that order.
#pragma once

#include "duration_format.h" // formatDuration, which the reports write every duration with
#include "metrics.h"
#include "result.h"
#include "scenario.h"
#include "trace.h"

#include <array>
#include <atomic>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace streamscope {

// ---- metrics ----------------------------------------------------------------------------------------------------

// The number of GPU operations running from `time` until the next step's time (the last step has count 0).
struct ConcurrencyStep {
    int64_t time = 0;
    int count = 0;
    bool operator==(const ConcurrencyStep&) const = default;
};

// How many GPU operations ran at once over a time range.
struct ConcurrencyProfile {
    std::vector<int64_t> timeAtNs; // [k]: time spent with exactly k GPU operations running, k = 0..max
    int maxConcurrency = 0;
    double averageConcurrency = 0;      // time-weighted mean over the range (= GPU work / range)
    std::vector<ConcurrencyStep> steps; // step function for plotting (empty unless requested)
};

struct StreamAnalysis {
    uint32_t track = 0;
    std::string name;
    int device = -1;
    StreamKind kind = StreamKind::Blocking;
    int priority = 0;
    int64_t spanCount = 0;  // GPU spans
    int64_t firstStart = 0; // of its GPU spans (0 when it has none)
    int64_t lastEnd = 0;
    int64_t busyNs = 0;         // union of its GPU spans
    int64_t gpuWorkNs = 0;      // sum of its GPU span durations
    std::vector<Interval> gaps; // idle between its first start and last end
    int64_t idleNs = 0;         // total of `gaps`
    double utilization = 0;     // busyNs / its device's makespan
};

struct DeviceAnalysis {
    int device = -1;
    std::string name;      // from the run info, when known
    int streamCount = 0;   // stream tracks with GPU spans
    int64_t spanCount = 0; // GPU spans
    int64_t firstStart = 0;
    int64_t lastEnd = 0;
    int64_t makespanNs = 0;     // first GPU span start to last GPU span end on this device
    int64_t busyNs = 0;         // time at least one GPU operation ran
    int64_t gpuWorkNs = 0;      // sum of GPU span durations: the work serialized
    double speedup = 0;         // gpuWorkNs / makespanNs
    std::vector<Interval> gaps; // device idle (no GPU operation) inside its makespan
    int64_t idleNs = 0;
    ConcurrencyProfile concurrency;
    int64_t copyNs = 0;               // union of copies
    int64_t kernelNs = 0;             // union of kernels
    int64_t copyComputeOverlapNs = 0; // time a copy and a kernel ran at once
    double copyComputeOverlap = 0;    // fraction of copy time during which a kernel ran (0..1)
};

struct HostThreadAnalysis {
    uint32_t track = 0;
    std::string name;
    int device = -1;
    int64_t firstStart = 0;
    int64_t lastEnd = 0;
    int64_t activeNs = 0;    // first span start to last span end: the host time of the launch rate
    int64_t apiCalls = 0;    // api-call spans
    int64_t launchCalls = 0; // API calls that enqueued GPU work (sources of launch flows)
    int64_t syncCalls = 0;   // sync spans
    int64_t apiNs = 0;       // time in api-call spans
    int64_t launchNs = 0;    // time in launching calls
    int64_t syncNs = 0;      // time blocked in sync spans
    int64_t hostWorkNs = 0;
    double launchesPerSecond = 0; // launchCalls / activeNs
    double meanLaunchNs = 0;      // launchNs / launchCalls
};

struct TraceAnalysis {
    TraceMetrics metrics;   // the basic metrics (metrics.h), as the lessons' checks see them
    int64_t firstStart = 0; // first GPU span start (all devices)
    int64_t lastEnd = 0;
    int64_t makespanNs = 0; // = metrics.makespanNs
    int64_t busyNs = 0;     // time at least one GPU operation ran on any device
    int64_t gpuWorkNs = 0;
    double speedup = 0;         // gpuWorkNs / makespanNs: the speedup over the same work serialized
    std::vector<Interval> gaps; // time no GPU of the run was busy, inside the makespan
    int64_t idleNs = 0;
    ConcurrencyProfile concurrency; // over all devices
    int64_t copyComputeOverlapNs = 0;
    double copyComputeOverlap = 0;
    std::vector<DeviceAnalysis> devices;         // ascending device index
    std::vector<StreamAnalysis> streams;         // stream tracks in track order
    std::vector<HostThreadAnalysis> hostThreads; // host-thread tracks in track order
    // Overlap between streams, indexed like `streams`: time both were busy at once, and that as a fraction of the
    // less busy stream's busy time (the `overlap` metric of the lessons' checks). Empty when there are more than
    // AnalysisOptions::maxOverlapStreams streams.
    std::vector<std::vector<int64_t>> overlapNs;
    std::vector<std::vector<double>> overlapFraction;
    double launchesPerSecond = 0; // over all host threads: launch calls / host time span
};

struct AnalysisOptions {
    bool concurrencySteps = true;   // fill ConcurrencyProfile::steps (overall and per device)
    size_t maxOverlapStreams = 512; // the overlap matrix costs O(streams x spans)
};

TraceAnalysis analyzeTrace(const Trace& trace, const AnalysisOptions& options = {});

// The step function of the number of GPU operations running on `device` (-1: all devices).
std::vector<ConcurrencyStep> concurrencySteps(const Trace& trace, int device = -1);

// The same step function held compactly (about 6 bytes a step instead of 16), for the concurrency plot of a big
// trace: step i runs from times[i] to times[i + 1] with counts[i] operations, the last step's count is 0. A count
// above 65,535 is kept as 65,535 (maxCount keeps the true maximum).
struct ConcurrencySeries {
    TimeColumn times;
    std::vector<uint16_t> counts;
    int maxCount = 0;
    size_t size() const { return counts.size(); }
    size_t memoryBytes() const;
};
// `cancel`, where given and set while it runs (another trace shown), ends it early with an empty series.
ConcurrencySeries concurrencySeries(const Trace& trace, int device = -1, const std::atomic<bool>* cancel = nullptr);
// Its maxCount alone, the steps not kept: the most GPU spans of positive length running at one instant on
// `device` (-1: all), ends before starts at one instant (metrics.h's maxConcurrency of all GPU kinds).
int maxGpuConcurrency(const Trace& trace, int device = -1);

// ---- critical path ----------------------------------------------------------------------------------------------

// Why a critical-path segment could start: the dependency that released it.
enum class PathReason : uint8_t {
    Start,          // "start": the first segment of the path
    StreamOrder,    // "stream order": the previous operation in its stream
    Launch,         // "launch": the host API call that enqueued it
    EventWait,      // "event wait": an event it waited for (cudaStreamWaitEvent)
    Sync,           // "sync": the GPU work a host call waited for
    Implicit,       // "implicit": the legacy default stream barrier, or an implicit synchronization
    HostIssueOrder, // "host issue order": the previous call of its host thread
    Resource,       // "resource": it was ready, and a resource held it until the previous segment ended or gave
                    //             it room (the kernels on the SMs it needed, the copy in its copy engine, the work
                    //             ahead of it in a shared hardware queue, the host-function thread; or, for a part of a
                    //             collective call linked across ranks, the rank that reached the call last
                    //             (a collective wait: CriticalPathSegment::waitRank)
};
std::string_view toString(PathReason);

struct CriticalPathSegment {
    uint32_t span = 0;
    std::string name;
    SpanKind kind = SpanKind::Kernel;
    uint32_t track = 0;
    int64_t start = 0;
    int64_t end = 0;
    int64_t contributionNs = 0; // end minus the later of its start and its predecessor's end
    int64_t idleBeforeNs = 0;   // time between its predecessor's end and its start (nothing on the path ran)
    PathReason reason = PathReason::Start;
    // Reason Resource: what held it, and for how long it was ready but held (its start minus the end of the last
    // dependency); inferred from what ran on its device where the trace does not record it (not a simulator trace).
    WaitCause wait = WaitCause::None;
    int64_t waitNs = 0;
    bool waitInferred = false;
    // Reason Resource, a collective wait: this part of a collective call (linked across ranks) was ready waitNs
    // before the part of rank waitRank (span waitPart), the last to arrive; its predecessor on the path is what
    // released that part. wait stays None.
    int waitRank = -1;
    uint32_t waitPart = kNoSpan;
};

// What the idle time before a critical-path segment was, by what released the segment.
enum class IdleCause : uint8_t {
    LaunchLatency,   // a GPU op after its launch call
    StreamGap,       // a GPU op after its stream's previous op
    HostFuncLatency, // a host function after its stream's previous op
    HostGap,         // a host call after the previous one of its thread: time outside CUDA calls
    SyncWake,        // a host call after the GPU op it waited for
    DependencyGap,   // after an event, an implicit synchronization or a resource
    Other,
};
inline constexpr int kIdleCauseCount = 7;
std::string_view toString(IdleCause);     // a phrase for reports
std::string_view idleCauseKey(IdleCause); // "launch_latency", ...: the JSON keys

struct CriticalPath {
    std::vector<CriticalPathSegment> segments; // in time order: the first segment starts the path
    int64_t startNs = 0;
    int64_t endNs = 0;
    int64_t lengthNs = 0;         // endNs - startNs = busyNs + idleNs
    int64_t busyNs = 0;           // sum of contributions
    int64_t idleNs = 0;           // sum of idle time between segments
    int64_t gpuNs = 0;            // contributions of GPU spans
    int64_t hostNs = 0;           // contributions of host spans (API calls, syncs, host work)
    int64_t resourceWaitNs = 0;   // sum of the segments' waitNs: time its ops were ready but held by resources
    int64_t collectiveWaitNs = 0; // sum of the collective waits' waitNs: time its collectives waited for a rank
    std::array<int64_t, kIdleCauseCount> idleByCause{}; // idleNs by IdleCause
};

// Flows by the span they point to, for walking dependencies backwards: of(span) lists indices into trace.flows.
class IncomingFlows {
public:
    explicit IncomingFlows(const Trace& trace);
    std::span<const uint32_t> of(uint32_t span) const;

private:
    std::vector<uint32_t> m_offsets; // per span, into m_flows (counting sort by target)
    std::vector<uint32_t> m_flows;
};

// Walks back from the span that ends last, at each step to the predecessor (stream order, host issue order or a
// flow) that ended latest: the one that released the span. O(spans + flows).
// A GPU op that was ready but started later than its dependencies allowed is released by what held it (reason
// Resource): recorded by the simulator, inferred from what ran on the device in other traces.
// `incoming`: the trace's IncomingFlows where the caller holds them for another analysis too (the window's report
// runs the critical path and the diagnostics at once: one index instead of two); used for a finalized trace only.
CriticalPath criticalPath(const Trace& trace, const IncomingFlows* incoming = nullptr);
// What released one span of a finalized trace, by the same rule: a path of two segments, its releaser and the span
// (with the reason, and for a resource what held it and how long); one segment when nothing did ("start"). For the
// inspector: O(spans + flows) a call.
CriticalPath releaseOf(const Trace& trace, uint32_t span);
// What released segment k, in words: "after launch", or "waited 501.5 µs for SMs held by 'big' (s1)".
std::string describeRelease(const Trace& trace, const CriticalPath& path, size_t k);
IdleCause idleCauseOf(const CriticalPathSegment& segment);
// The path's idle time by cause, the largest first, causes without idle time left out.
std::vector<std::pair<IdleCause, int64_t>> idleLargestFirst(const CriticalPath& path);
// Where the idle time before segment k went, when the trace knows: "in 'aten::randn'" for host time inside a traced
// range (a PyTorch CPU op, a Python function) of the segment's thread; empty otherwise.
std::string describeIdle(const Trace& trace, const CriticalPath& path, size_t k);

// ---- JSON and text ----------------------------------------------------------------------------------------------

struct Diagnostic; // diagnostics.h

struct ReportOptions {
    size_t maxCriticalPathSegments = 2000; // longer paths: the last ones (nearest the end) are kept
    size_t maxGapsPerItem = 50;            // per device and stream: the longest gaps, listed in time order
    bool concurrencySteps = false;         // include the step functions in the JSON
    int indent = 2;                        // JSON indentation; -1: one line
};

// {"metrics": {...}, "critical_path": [...], "critical_path_summary": {...}, "diagnostics": [...]}. The metrics
// keep the key names of the CLI's earlier output (makespan_ns, gpu_work_ns, speedup, max_concurrency,
// copy_compute_overlap_ns, host_makespan_ns, gpu_span_count, api_call_count, streams[].{name, device, busy_ns,
// span_count}) and add the rest.
std::string analysisToJson(const Trace& trace, const ReportOptions& options = {});
std::string analysisToJson(const Trace& trace, const TraceAnalysis& analysis, const CriticalPath& path,
                           const std::vector<Diagnostic>& diagnostics, const ReportOptions& options = {});
// A readable report of the same.
std::string analysisReport(const Trace& trace, const ReportOptions& options = {});
std::string analysisReport(const Trace& trace, const TraceAnalysis& analysis, const CriticalPath& path,
                           const std::vector<Diagnostic>& diagnostics, const ReportOptions& options = {});

// ---- comparison of two traces -----------------------------------------------------------------------------------

struct StreamComparison {
    std::string name;
    int device = -1;
    bool inA = false, inB = false;
    int64_t busyA = 0, busyB = 0;
    int64_t busyDeltaNs = 0; // busyB - busyA
};

struct OverlapComparison {
    std::string streamA, streamB; // stream names (device-qualified when names repeat across devices)
    double fractionA = 0, fractionB = 0;
    int64_t nsA = 0, nsB = 0;
};

struct TraceComparison {
    TraceAnalysis a, b;
    int64_t makespanDeltaNs = 0; // b - a
    double makespanRatio = 0;    // b / a (0 when a has none)
    double speedupOfB = 0;       // a.makespan / b.makespan: how much faster B finishes
    double speedupDelta = 0;     // b.speedup - a.speedup (speedup over serialized work)
    int maxConcurrencyDelta = 0;
    double averageConcurrencyDelta = 0;
    int64_t copyComputeOverlapDeltaNs = 0;
    double copyComputeOverlapDelta = 0;
    int64_t idleDeltaNs = 0;
    std::vector<StreamComparison> streams;   // matched by (device, name)
    std::vector<OverlapComparison> overlaps; // stream pairs present in both traces
};

TraceComparison compareTraces(const Trace& a, const Trace& b, const AnalysisOptions& options = {});
std::string comparisonToJson(const TraceComparison& c, const ReportOptions& options = {});
std::string comparisonReport(const TraceComparison& c, const std::string& nameA = "A", const std::string& nameB = "B");

} // namespace streamscope
