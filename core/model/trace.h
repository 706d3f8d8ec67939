// The trace: what a run, the simulator or an importer produces. Spans are stored column-wise and, after
// finalize(), grouped by track and sorted by start within each track, so that views and analysis can binary-search.
#pragma once

#include "scenario.h"
#include "time_column.h"

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace streamscope {

inline constexpr int kTraceVersion = 1;

enum class SpanKind : uint8_t {
    Kernel,    // "kernel"
    MemcpyH2D, // "memcpy-h2d"
    MemcpyD2H, // "memcpy-d2h"
    MemcpyD2D, // "memcpy-d2d"
    MemcpyP2P, // "memcpy-p2p"
    Memset,    // "memset"
    HostFunc,  // "host-func"
    ApiCall,   // "api-call"  a CUDA runtime call on a host thread
    Sync,      // "sync"      a host thread blocked in a synchronizing call
    HostWork,  // "host-work" CPU work on a host thread
    Range,     // "range"     a named interval of a framework or an annotation (a PyTorch CPU op, record_function, a
               //             Python function, an NVTX-like range): it encloses other spans, is no work of its own
               //             and is on a track of kind Ranges
};
inline constexpr int kSpanKindCount = 11;

enum class FlowKind : uint8_t {
    Launch,   // "launch":   host API call -> the GPU operation it enqueued
    Event,    // "event":    the work an event recorded -> the operation that waited on it
    Sync,     // "sync":     GPU operation -> the host call that waited for it
    Implicit, // "implicit": legacy default stream barrier, implicit synchronization of malloc/free
    Call,     // "call":     a range (a CPU op, an annotation) -> a runtime call made inside it; no dependency
    // "collective": one collective call linked across its ranks (rank R's part -> rank R+1's), or a send -> its recv
    Collective,
};
inline constexpr int kFlowKindCount = 6;

enum class TrackKind : uint8_t {
    HostThread, // "host-thread"
    Stream,     // "stream"
    Ranges,     // "ranges": one nesting depth of the ranges on a host thread or a stream (Track::parent, depth)
};

enum class TraceSource : uint8_t {
    CudaEvents, // "cuda-events"
    Cupti,      // "cupti"
    Simulator,  // "simulator"
    Imported,   // "imported"
};

// How far a GPU span's start is known (event-timed traces; docs/TRACE.md "Timing"). CUPTI, the simulator and
// importers measure starts: every span is Measured.
enum class SpanTiming : uint8_t {
    Measured,  // "measured"
    Corrected, // "corrected": the event fired before the op could run; the start was moved to where the
               //              evidence puts it (the copy engine's previous copy, a spin kernel's known duration)
    Uncertain, // "uncertain": the event fired while other work held the GPU; the op may have waited for SMs or a
               //              queue, so its start is only bounded: it began at or after the drawn start
};

// Why a GPU operation that was ready (its stream, its events and its launch allowed it to run) did not start yet:
// the resource that held it (docs/TRACE.md "Waits"). The simulator records it with the operation whose end let it
// start; recorded and imported traces carry none, and the analysis infers it from what was running.
enum class WaitCause : uint8_t {
    None,           // "none"
    Sms,            // "sms":              the SMs it needed were held by other kernels
    CopyEngine,     // "copy-engine":      its copy engine was moving another copy
    HardwareQueue,  // "hardware-queue":   work of another stream ahead of it in their shared hardware queue could not
                    //                     start yet, and a queue starts only its head
    HostFuncThread, // "host-func-thread": the driver thread that runs host functions was running another one
};
inline constexpr int kWaitCauseCount = 5;
inline constexpr uint32_t kNoSpan = 0xffffffffu;
std::string_view toString(WaitCause);
std::optional<WaitCause> waitCauseFromString(std::string_view);
std::string_view toString(SpanTiming);
std::optional<SpanTiming> spanTimingFromString(std::string_view);
std::string_view toString(SpanKind);
std::string_view toString(FlowKind);
std::string_view toString(TrackKind);
std::string_view toString(TraceSource);
std::optional<SpanKind> spanKindFromString(std::string_view);
std::optional<FlowKind> flowKindFromString(std::string_view);
std::optional<TrackKind> trackKindFromString(std::string_view);
std::optional<TraceSource> traceSourceFromString(std::string_view);
bool isGpuSpan(SpanKind); // stream work: not the host kinds, not ranges
bool isCopySpan(SpanKind);
// The span a GPU operation of a scenario gets: a copy by its direction, a memset, a host function, or a kernel
// (graph nodes and graphs included).
SpanKind gpuSpanKindOf(const Op& op);

struct Track {
    TrackKind kind = TrackKind::Stream;
    std::string name; // stream name as the source names it, or the host thread's name
    int device = -1;  // streams: the device; host threads: the bound device (or -1)
    StreamKind streamKind = StreamKind::Blocking;
    int priority = 0;
    int64_t id = -1; // the source's own id: CUDA stream id, OS thread id; -1 when unknown
    // Ranges tracks: the host-thread or stream track they annotate, and the nesting depth (0: outermost). One track
    // per depth keeps the spans of a track disjoint, as everything that walks a track assumes.
    int parent = -1;
    int depth = 0;
};

struct DeviceInfo {
    int index = 0;
    std::string name; // "NVIDIA H200", "simulated NVIDIA H200 (profile h200)"
    std::vector<std::pair<std::string, std::string>> properties; // sm_count, copy_engines, driver, ...
};

struct RunInfo {
    TraceSource source = TraceSource::Simulator;
    std::string backend; // "simulator", "cuda", "pytorch", ...
    std::string scenarioId;
    std::string scenarioTitle;
    std::string variant;      // the scenario variant run, if any
    std::string scenarioJson; // the scenario as run (variant applied), so `check` can evaluate its expectations
    std::vector<DeviceInfo> devices;
    std::string host;
    std::string date;                                          // ISO 8601
    std::string command;                                       // the command that made the trace
    std::vector<std::pair<std::string, std::string>> settings; // CUDA_DEVICE_MAX_CONNECTIONS, profile, ...
    double clockAlignmentErrorNs = 0; // bound on the error of mapping device clocks to the host clock
};

// A run setting's value, or nullptr where the trace has none.
const std::string* findSetting(const RunInfo& info, std::string_view key);
// Sets a run setting: its value replaced where it is there, else appended.
void setSetting(RunInfo& info, std::string_view key, std::string value);

// Fields of one span, for appending.
struct SpanInit {
    uint32_t track = 0;
    SpanKind kind = SpanKind::Kernel;
    std::string_view name;
    int64_t start = 0;   // ns
    int64_t end = 0;     // ns
    int32_t thread = -1; // scenario thread index it came from (-1: unknown)
    int32_t op = -1;     // op index within that thread
    int32_t iteration = -1;
    int64_t bytes = 0;
    Dim3 grid{0, 0, 0}; // kernels; 0 = unknown
    Dim3 block{0, 0, 0};
    SpanTiming timing = SpanTiming::Measured;
    // Timing "both": the per-op CUDA event times minus the CUPTI times of the same op (ns); kNoEventError: none.
    int64_t eventStartError = INT64_MIN;
    int64_t eventEndError = INT64_MIN;
    int32_t task = 0; // which repeat of its thread's ops (a pool's task), 0 for threads that run them once
};

inline constexpr int64_t kNoEventError = INT64_MIN;

// What a copy moved or a kernel launched with. Spans share these: copies repeat their sizes and kernels their
// launch shapes, so a trace holds a small table of them and one index per span (SpanColumns::detail).
struct SpanDetail {
    int64_t bytes = 0;
    Dim3 grid{0, 0, 0}; // kernels; 0 = unknown
    Dim3 block{0, 0, 0};
    bool operator==(const SpanDetail&) const = default;
};
struct SpanDetailHash {
    size_t operator()(const SpanDetail& d) const;
};

// Struct of arrays: one entry per span in every column. The columns that many traces leave at their default are
// optional: empty when every span has the default, else one entry per span (a reader that fills them directly may
// leave them short: finalize() gives the rest the default, and drops a column whose every entry is the default).
// Read them through the ...Of(i) accessors.
struct SpanColumns {
    std::vector<uint32_t> track;
    std::vector<SpanKind> kind;
    std::vector<uint32_t> name; // index into Trace::strings
    TimeColumn start;           // ns; about 4 bytes a span (time_column.h)
    TimeColumn end;
    // Optional columns.
    std::vector<int32_t> thread;          // scenario thread index; empty: all -1 (imported traces)
    std::vector<int32_t> op;              // op index within that thread; empty: all -1
    std::vector<int32_t> iteration;       // empty: all -1
    std::vector<uint32_t> detail;         // index into details; empty: all 0 (no bytes, grid or block)
    std::vector<SpanDetail> details;      // the distinct details; entry 0 is the default (when any)
    std::vector<SpanTiming> timing;       // empty: all Measured
    std::vector<int64_t> eventStartError; // empty: no event errors
    std::vector<int64_t> eventEndError;
    std::vector<WaitCause> wait;   // what held a ready GPU op (simulator traces)
    std::vector<uint32_t> waitFor; // the span whose end let it start, kNoSpan: none
    std::vector<int32_t> task;     // the repeat (pool task) of its thread's ops; empty: all 0

    size_t size() const { return start.size(); }
    int32_t threadOf(size_t i) const { return i < thread.size() ? thread[i] : -1; }
    int32_t opOf(size_t i) const { return i < op.size() ? op[i] : -1; }
    int32_t iterationOf(size_t i) const { return i < iteration.size() ? iteration[i] : -1; }
    const SpanDetail& detailOf(size_t i) const { return i < detail.size() ? details[detail[i]] : kNoDetail; }
    int64_t bytesOf(size_t i) const { return detailOf(i).bytes; }
    const Dim3& gridOf(size_t i) const { return detailOf(i).grid; }
    const Dim3& blockOf(size_t i) const { return detailOf(i).block; }
    WaitCause waitOf(size_t i) const { return i < wait.size() ? wait[i] : WaitCause::None; }
    uint32_t waitForOf(size_t i) const { return i < waitFor.size() ? waitFor[i] : kNoSpan; }
    SpanTiming timingOf(size_t i) const { return i < timing.size() ? timing[i] : SpanTiming::Measured; }
    int32_t taskOf(size_t i) const { return i < task.size() ? task[i] : 0; }
    bool hasEventError(size_t i) const { return i < eventStartError.size() && eventStartError[i] != kNoEventError; }

    // Set one optional field of span i (< size()), the column made where it was empty.
    void setThread(size_t i, int32_t v) { setOptional(thread, i, v, -1); }
    void setOp(size_t i, int32_t v) { setOptional(op, i, v, -1); }
    void setIteration(size_t i, int32_t v) { setOptional(iteration, i, v, -1); }
    void setDetail(size_t i, const SpanDetail& d);
    void setBytes(size_t i, int64_t bytes);
    // Replaces the details of all spans by these full columns (readers; one entry per span each).
    void setDetails(const std::vector<int64_t>& bytes, const std::vector<Dim3>& grid, const std::vector<Dim3>& block);
    // Full columns of the details, for writers of formats that hold one entry per span.
    std::vector<int64_t> bytesColumn() const;
    std::vector<Dim3> gridColumn() const;
    std::vector<Dim3> blockColumn() const;
    // Index of d in details, added where new.
    uint32_t internDetail(const SpanDetail& d);

    // Pads short optional columns with their default and drops those whose every entry is the default.
    void compact();
    void reserve(size_t n); // the columns every span has, and the optional ones in use
    void clear();
    size_t memoryBytes() const;

    static const SpanDetail kNoDetail;

private:
    // An optional column gets its entries up to i only when span i differs from the default: appending stays
    // O(1) amortised, and a trace that never sets the field never holds the column.
    template <typename T>
    void setOptional(std::vector<T>& col, size_t i, T v, T def)
    {
        if (col.size() <= i) {
            if (v == def)
                return;
            if (col.size() == i && i + 1 == size()) {
                col.push_back(v); // the span just added (a resize by one entry is not inlined)
                return;
            }
            col.resize(size(), def);
        }
        col[i] = v;
    }
    std::unordered_map<SpanDetail, uint32_t, SpanDetailHash> m_detailIndex; // rebuilt where a reader set details
};

struct Flow {
    uint32_t from = 0; // span index
    uint32_t to = 0;   // span index
    FlowKind kind = FlowKind::Launch;
    bool operator==(const Flow&) const = default;
};

class Trace {
public:
    RunInfo info;
    std::vector<Track> tracks;
    SpanColumns spans;
    std::vector<Flow> flows;
    std::vector<std::string> strings;

    uint32_t intern(std::string_view s);
    uint32_t addTrack(Track t);
    uint32_t addSpan(const SpanInit& s); // returns the span's index until finalize() reorders
    void addFlow(uint32_t from, uint32_t to, FlowKind kind) { flows.push_back({from, to, kind}); }
    // Records that span `waiter` was held by a resource until span `holder` ended (indices as addSpan returned).
    void setWait(uint32_t waiter, WaitCause cause, uint32_t holder);

    // Every field of span i, the name pointing into this trace's strings: the one place that reads a span back
    // into what addSpan() takes, so that copies between traces drop no column.
    SpanInit spanInit(uint32_t i) const;
    // Appends span i of `src` on track `track` of this trace, every column copied, its name re-interned and its
    // times moved by `shift` ns. Its wait names another span, so it is copied by copyWaitsFrom() once all are in.
    uint32_t copySpanFrom(const Trace& src, uint32_t i, uint32_t track, int64_t shift = 0);
    // Copies the waits of the spans of `src` that were copied: spanMap[i] is the copy of span i (kNoSpan: none).
    // A holder that was not copied leaves the wait without its holder.
    void copyWaitsFrom(const Trace& src, const std::vector<uint32_t>& spanMap);

    // Groups spans by track, sorts by (start, end) within each track, remaps flows and drops flows whose ends
    // are out of range. Idempotent.
    void finalize();
    bool finalized() const { return m_finalized; }

    // After finalize(): spans of track t are [trackBegin(t), trackEnd(t)).
    uint32_t trackBegin(uint32_t t) const { return m_trackOffsets[t]; }
    uint32_t trackEnd(uint32_t t) const { return m_trackOffsets[t + 1]; }

    size_t spanCount() const { return spans.size(); }
    std::string_view spanName(uint32_t i) const { return strings[spans.name[i]]; }
    int64_t duration(uint32_t i) const { return spans.end[i] - spans.start[i]; }
    // Earliest start and latest end over all spans (0, 0 when empty). Kept by finalize() while the times stay as
    // they were then (a scan of every span otherwise: 0.35 s at 100 M spans, asked for by every view of a trace).
    std::pair<int64_t, int64_t> timeRange() const;
    // Track index of a stream by name (optionally on a device), or -1.
    int findStreamTrack(std::string_view name, int device = -1) const;
    // Approximate memory held by the trace, for benchmarks.
    size_t memoryBytes() const;

private:
    // Looked up by a string_view, without making a std::string of it (intern() runs for every span a trace gets).
    struct StringHash {
        using is_transparent = void;
        size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
    };
    std::unordered_map<std::string, uint32_t, StringHash, std::equal_to<>> m_stringIndex;
    std::vector<uint32_t> m_trackOffsets{0};
    bool m_finalized = false;
    // timeRange() as finalize() found it, for the start and end columns of these content ids (0: none kept).
    std::pair<int64_t, int64_t> m_timeRange{0, 0};
    std::pair<uint64_t, uint64_t> m_timeRangeOf{0, 0};
};

// The trace itself when it is finalized, else a finalized copy of it kept in `storage`: for readers that need the
// per-track grouping and must not change their input.
const Trace& finalizedView(const Trace& trace, Trace& storage);

} // namespace streamscope
