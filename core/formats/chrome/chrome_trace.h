// Chrome Trace Event JSON (chrome://tracing, Perfetto, and what many profilers write): export and import.
//
// Export: a process per device (and one for the host), a thread per stream and per host thread, spans as complete
// events ("ph": "X") with their details in "args", dependency arrows as flow events ("ph": "s" / "f", bound to the
// enclosing slice), and StreamScope's own run information in "otherData" so that our exports come back exactly.
// Import: a streaming reader over the bytes (no document tree), so that traces of gigabytes load at disk speed; the
// same reader serves the PyTorch profiler importer (pytorch_trace.h). docs/FORMATS.md describes both directions.
#pragma once

#include "result.h"
#include "trace.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace streamscope {

// The whole file as text. Deterministic; a trace that is not finalized is finalized in a copy first.
std::string traceToChromeJson(const Trace& trace);

// A Chrome Trace Event file: the JSON object format ({"traceEvents": [...]}) or the bare array format ([...]).
// Files written by traceToChromeJson come back with the same info, tracks, spans and flows.
namespace chrome {
// How an input is parsed. The result is the same with any options; only the time differs.
struct ReadOptions {
    // Threads that parse events (the reader's own included): 0 picks the cores there are (at most 8; one thread
    // where there are fewer than 4), 1 parses on the caller's thread alone. Inputs under 16 MiB are parsed on one
    // thread unless chunkBytes is given.
    unsigned threads = 0;
    // Bytes of input per chunk a thread parses; 0 picks 1 MiB. Small values exercise the chunk seams (tests).
    size_t chunkBytes = 0;
};
} // namespace chrome

Result<Trace> parseChromeTrace(std::string_view text, const std::string& file, const chrome::ReadOptions& options = {});
// The same, reading the file in chunks: memory stays proportional to the trace, not to the file.
Result<Trace> loadChromeTraceFile(const std::string& path, const chrome::ReadOptions& options = {});

// ---------------------------------------------------------------------------------------------------------------
// The reading engine, shared by the Chrome and the PyTorch importers. Not needed to use them.
namespace chrome {

// How events turn into spans. Generic: every complete and begin/end event is a span. PyTorch: GPU kernels, memcpys
// and memsets, the CUDA runtime/driver calls, and as ranges (SpanKind::Range) the CPU operators, Python functions
// and annotations that nest around them; the profiler's own rows are not spans, and "cuda_sync" records become
// SyncRecords.
enum class Dialect { Generic, PyTorch };

// A span kind not known yet: decided by the track it lands on (stream: kernel, host thread: host-work).
inline constexpr auto kUnknownKind = SpanKind(255);
inline constexpr uint32_t kNoSpan = 0xffffffffu;

// One (pid, tid) of the file. Either may be a string in the file ("pid": "Spans"): then its text is kept and the
// number is -1.
struct RawThread {
    int64_t pid = 0;
    int64_t tid = 0;
    std::string pidText; // non-empty when the pid was a string
    std::string tidText; // non-empty when the tid was a string
    std::string name;    // "thread_name" metadata
    int64_t sortIndex = 0;
    bool hasSortIndex = false;
    uint64_t spans = 0;
    uint64_t gpuSpans = 0; // spans whose kind is known to be GPU work
    int64_t device = -1;   // "device" seen in the args of its spans
    std::string stream;    // "stream" seen in the args of its spans (a name, or a number as text)
    bool streamIsNumber = false;
    std::vector<uint32_t> open; // "B" events not yet ended
};

struct RawProcess {
    int64_t pid = 0;
    std::string pidText;
    std::string name;   // "process_name" metadata
    std::string labels; // "process_labels" metadata
    int64_t sortIndex = 0;
    bool hasSortIndex = false;
};

// One end of a flow event that still has to be bound to a span by time.
struct FlowEnd {
    uint32_t thread = 0;   // raw thread
    int64_t ts = 0;        // ns
    bool enclosing = true; // the slice enclosing ts; false: the next slice that starts at or after ts
};

struct UnboundFlow {
    FlowEnd from, to;
    int kind = -1;           // a FlowKind from the event's name ("launch", ...), -1: decided by the ends
    bool launchOnly = false; // "ac2g": PyTorch's launch arrows, host call -> GPU work
};

// A flow's kind still to be decided by its ends (RawTrace::trace's flows).
inline constexpr FlowKind kFlowKindByEnds = FlowKind(0xff);
// A flow's kind from a FlowKind's number (flowKindFromString's, IndexFlow::kind): kFlowKindByEnds for -1 or none.
inline FlowKind flowKindOrByEnds(int kind)
{
    return kind >= 0 && kind < kFlowKindCount ? FlowKind(kind) : kFlowKindByEnds;
}

// A flow whose ends are known spans (parse-time indices).
struct IndexFlow {
    uint32_t from = 0;
    uint32_t to = 0;
    int kind = -1; // -1: decided by the ends
};

// A CUDA synchronization record of the PyTorch profiler ("cat": "cuda_sync"): host-side timing of a
// synchronizing call, drawn on the GPU stream it concerns.
struct SyncRecord {
    enum Type { StreamWait, StreamSync, EventSync, ContextSync, Other } type = Other;
    uint32_t thread = 0; // raw thread (pid = device, tid = stream)
    int64_t ts = 0;      // ns
    int64_t device = -1;
    int64_t stream = -1;
    int64_t waitOnStream = -1;      // the stream the waited-for event was recorded on
    int64_t recordCorrelation = -1; // correlation id of the cudaEventRecord call
    int64_t correlation = -1;       // correlation id of the synchronizing call itself
};

struct RawTrace {
    // Spans as read: track = raw thread index, times in ns as the file gives them (µs * 1000), kinds possibly
    // kUnknownKind. Columns only; strings interned. Its flows: the arrows between known spans (parse-time indices),
    // their kinds kFlowKindByEnds where the ends decide (finish() turns them into the trace's flows in place).
    Trace trace;
    std::vector<RawThread> threads;
    std::vector<RawProcess> processes;
    std::vector<UnboundFlow> unboundFlows;
    std::vector<std::pair<uint32_t, int64_t>> correlations; // (span, args.correlation)
    std::vector<std::pair<uint32_t, int64_t>> externalIds;  // (span, args."External id"), PyTorch dialect only
    std::vector<SyncRecord> syncs;
    std::string otherData;        // raw JSON text of the top-level "otherData" value
    std::string deviceProperties; // raw JSON text of the top-level "deviceProperties" value (PyTorch)
    std::vector<std::pair<std::string, std::string>> topLevel; // other top-level keys with scalar values
    uint64_t bytes = 0;                                        // size of the input
    uint64_t skippedEvents = 0;                                // events that are not spans in this dialect
    uint64_t withoutDur = 0;                                   // complete events ("X") without "dur", read as instants
};

Result<RawTrace> readText(std::string_view text, const std::string& file, Dialect dialect,
                          const ReadOptions& options = {});
Result<RawTrace> readFile(const std::string& path, Dialect dialect, const ReadOptions& options = {});

// Guesses the dialect from the start of a file (the first few kilobytes are enough): PyTorch's top-level keys
// ("schemaVersion", "deviceProperties") or its event categories.
Dialect detectDialect(std::string_view prefix);

// Completes a RawTrace whose `trace.tracks` the caller has filled: moves every span to threadTrack[its raw thread],
// decides unknown kinds, adds `extra` and the raw trace's index flows, binds the unbound flows by time (unless
// `bindUnbound` is false), sorts and finalizes. `origin` is added to every time.
Result<Trace> finish(RawTrace&& raw, const std::vector<uint32_t>& threadTrack, std::vector<IndexFlow> extra,
                     bool bindUnbound, int64_t origin, const std::string& file);

// The device a stream row belongs to when the file does not say: digits in a process name like "GPU 1",
// "Device 1" or "cuda:1"; -1 when there are none.
int deviceFromProcessName(std::string_view name);

// Span kind from a category and name as profilers write them: "kernel", "gpu_memcpy" with "Memcpy HtoD ...",
// "gpu_memset", "cuda_runtime"/"cuda_driver" (a call whose name contains "Synchronize" is a sync), or one of
// StreamScope's own kind names.
std::optional<SpanKind> kindFromCategory(std::string_view category, std::string_view name);
// Kineto's categories of ranges: "cpu_op" (before 2022 "Operator"), "user_annotation", "gpu_user_annotation",
// "python_function".
bool isPyTorchRangeCategory(std::string_view category);
// HtoD, DtoH, DtoD, PtoP (and the array/unified variants) in a copy's name or label; D2D when there is none.
SpanKind memcpyKindFromName(std::string_view name);

} // namespace chrome

} // namespace streamscope
