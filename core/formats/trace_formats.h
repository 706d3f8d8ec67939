// Opening other tools' traces and exporting to them: the one entry point the CLI and the GUI use.
//
//   importTraceFile(path)          the format is detected from the content, never from the file name:
//                                  StreamScope's own trace (JSON or binary), Chrome/Perfetto JSON, a PyTorch profiler
//                                  trace, an Nsight Systems SQLite export, or a CSV written by exportTrace; any of the
//                                  text formats also gzip-compressed (*.json.gz), where zlib is built in
//   exportTrace(trace, path, fmt)  streamscope | streamscope-binary | chrome | csv, saved atomically
//
// docs/FORMATS.md lists what each format carries and how it maps onto the trace model.
#pragma once

#include "import_progress.h"
#include "result.h"
#include "trace.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace streamscope {

enum class TraceFormat {
    Streamscope,       // "streamscope-trace" JSON
    StreamscopeBinary, // the binary native format (trace_binary.h), *.sstrace
    Chrome,            // Chrome Trace Event JSON (chrome://tracing, Perfetto)
    PyTorch,           // torch.profiler's export_chrome_trace
    NsysSqlite,        // nsys export --type sqlite
    Csv,               // exportTrace(..., ExportFormat::Csv)
    Unknown,
};

enum class ExportFormat { Streamscope, StreamscopeBinary, Chrome, Csv };

// "streamscope", "streamscope-binary", "chrome", "pytorch", "nsys-sqlite", "csv", "unknown"
std::string_view toString(TraceFormat);
std::string_view toString(ExportFormat); // "streamscope", "streamscope-binary", "chrome", "csv"
std::optional<ExportFormat> exportFormatFromString(std::string_view); // for --to
// The native format a trace saved to `path` gets where no format is named: binary for *.sstrace, else JSON.
ExportFormat nativeFormatForPath(std::string_view path);
// Saves `trace` in the native format nativeFormatForPath chooses, atomically.
Status saveNativeTrace(const Trace& trace, const std::string& path);
// What a file is, from its first bytes. Unknown also for files that cannot be read (importTraceFile says why).
TraceFormat detectTraceFormat(const std::string& path);
// The same for text in memory (the first bytes are enough).
TraceFormat detectTraceFormatFromContent(std::string_view prefix);

// A gzip-compressed file is unpacked whole in memory; one that unpacks to more than this many bytes is refused
// before its text is allocated (a "gzip bomb" costs a second or two and no memory). An uncompressed trace may be
// larger: the readers stream it from the file.
constexpr size_t kMaxUnpackedTraceBytes = size_t(2) << 30;

Result<Trace> importTraceFile(const std::string& path);
// The same, reporting how far it is and stopping when asked (import_progress.h): a cancelled import returns the
// error kImportCancelled ("cancelled").
Result<Trace> importTraceFile(const std::string& path, const ImportProgress& progress);
// Whether importTraceFile unpacks gzip-compressed files (*.json.gz): this build has zlib.
bool canReadGzip();
// Text already in memory (not for SQLite databases); `file` names it in errors.
Result<Trace> importTraceText(std::string_view text, const std::string& file);

// Writes atomically (saveTextFileAtomic): the file is the old one or the new one, never half of each.
Status exportTrace(const Trace& trace, const std::string& path, ExportFormat format);
// The text exportTrace writes (bytes, for the binary format).
std::string exportTraceText(const Trace& trace, ExportFormat format);

// ---------------------------------------------------------------------------------------------------------------
// For importers: dependency arrows from CUDA correlation ids, as CUPTI-based tools (PyTorch's Kineto, Nsight
// Systems) record them. All spans are given by their index before Trace::finalize().
class CudaDependencies {
public:
    // A host API call (runtime or driver); `process` scopes correlation ids (Nsight: the process; else 0).
    void apiCall(int64_t process, int64_t correlation, uint32_t span, int64_t start);
    // A GPU operation with the correlation id of the call that enqueued it (-1: unknown).
    void gpuOp(int64_t process, int64_t correlation, uint32_t span, int64_t device, int64_t stream, int64_t start,
               int64_t end);

    struct Call {
        uint32_t span = 0;
        int64_t start = 0;
    };
    std::optional<Call> findCall(int64_t process, int64_t correlation) const;

    // cudaStreamSynchronize: the last work enqueued on `stream` before the call -> the call (if it had to wait).
    void streamSync(int64_t process, int64_t device, int64_t stream, Call call);
    // cudaDeviceSynchronize / cuCtxSynchronize: the last work of the device to finish -> the call.
    void contextSync(int64_t process, int64_t device, Call call);
    // cudaStreamWaitEvent: the work `recordStream` had when the event was recorded (at host time `recordTime`) ->
    // the first operation enqueued on `stream` after the wait (host time `waitTime`).
    void streamWait(int64_t process, int64_t device, int64_t stream, int64_t waitTime, int64_t recordStream,
                    int64_t recordTime);
    // cudaEventSynchronize: the work recorded by the event -> the call.
    void eventSync(int64_t process, int64_t device, int64_t recordStream, int64_t recordTime, Call call);

    // Launch arrows (call -> each operation it enqueued), then the event and sync arrows; parse-time indices.
    std::vector<Flow> flows();

private:
    struct Key {
        int64_t a = 0, b = 0, c = 0;
        bool operator==(const Key&) const = default;
    };
    struct KeyHash {
        size_t operator()(const Key& k) const noexcept;
    };
    struct Op {
        int64_t launch = 0; // host time of the enqueuing call, or the op's own start when unknown
        int64_t start = 0, end = 0;
        uint32_t span = 0;
        int64_t correlation = -1;
    };
    struct Pending {
        enum Type { StreamSync, ContextSync, StreamWait, EventSync } type;
        int64_t process, device, stream, time, otherStream, otherTime;
        Call call;
    };
    void prepare();
    const std::vector<Op>* streamOps(int64_t process, int64_t device, int64_t stream) const;
    const Op* lastLaunchedBefore(int64_t process, int64_t device, int64_t stream, int64_t time) const;

    std::unordered_map<Key, Call, KeyHash> m_calls;
    std::unordered_map<Key, std::vector<Op>, KeyHash> m_streams; // (process, device, stream)
    std::vector<Pending> m_pending;
    bool m_prepared = false;
};

} // namespace streamscope
