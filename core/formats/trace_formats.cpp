#include "trace_formats.h"

#include "chrome_trace.h"
#include "csv_trace.h"
#include "file_io.h"
#include "nsys_sqlite.h"
#include "pytorch_trace.h"
#include "trace_binary.h"
#include "trace_json.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <system_error>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef STREAMSCOPE_HAVE_ZLIB
#include <zlib.h>
#endif

namespace streamscope {

namespace {

constexpr size_t kPeekBytes = size_t(64) << 10;

bool startsWith(std::string_view s, std::string_view prefix)
{
    return s.substr(0, prefix.size()) == prefix;
}

bool endsWith(std::string_view s, std::string_view suffix)
{
    return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

bool isWs(char c)
{
    return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

// The keys of the outermost object in a JSON prefix, each with the string value it has (if it is a string), as
// far as the prefix goes. Enough to tell a StreamScope trace ({"format": ...}) from a Chrome one.
std::vector<std::pair<std::string, std::string>> topLevelKeys(std::string_view p, bool* complete = nullptr)
{
    std::vector<std::pair<std::string, std::string>> keys;
    if (complete)
        *complete = false;
    size_t i = 0;
    while (i < p.size() && isWs(p[i]))
        ++i;
    if (i >= p.size() || p[i] != '{')
        return keys;
    int depth = 0;
    bool expectKey = false;
    std::string pendingKey;
    bool afterColon = false;
    const auto readString = [&](size_t& k) -> std::optional<std::string> {
        std::string s;
        for (++k; k < p.size(); ++k) {
            if (p[k] == '\\') {
                if (++k < p.size())
                    s += p[k];
            } else if (p[k] == '"') {
                ++k;
                return s;
            } else {
                s += p[k];
            }
        }
        return std::nullopt;
    };
    while (i < p.size()) {
        const char c = p[i];
        if (c == '"') {
            auto s = readString(i);
            if (!s)
                break;
            if (depth == 1 && expectKey) {
                pendingKey = *s;
                expectKey = false;
            } else if (depth == 1 && afterColon) {
                keys.back().second = *s;
            }
            afterColon = false;
            continue;
        }
        if (c == '{' || c == '[') {
            ++depth;
            if (depth == 1)
                expectKey = true;
            afterColon = false;
        } else if (c == '}' || c == ']') {
            if (--depth == 0 && complete)
                *complete = true;
        } else if (c == ',' && depth == 1) {
            expectKey = true;
        } else if (c == ':' && depth == 1) {
            keys.emplace_back(pendingKey, std::string());
            afterColon = true;
        } else if (!isWs(c)) {
            afterColon = false;
        }
        ++i;
    }
    return keys;
}

Result<std::string> peek(const std::string& path, size_t bytes = kPeekBytes)
{
    OpenFile file;
    if (Status opened = openForReading(path, file); !opened)
        return opened.error();
    if (bytes == std::string::npos) { // the whole file
        struct stat st {};
        if (fstat(file.fd, &st) != 0)
            return Error{path, {}, "cannot read: " + errnoText(errno)};
        bytes = size_t(st.st_size);
    }
    std::string buf(bytes, '\0');
    const ssize_t n = readFully(file.fd, buf.data(), buf.size());
    if (n < 0)
        return Error{path, {}, "cannot read: " + errnoText(errno)};
    buf.resize(size_t(n));
    return buf;
}

Error unknownFormat(const std::string& path, std::string_view prefix)
{
    if (prefix.empty())
        return Error{path, {}, "the file is empty"};
    if (prefix.size() >= 2 && static_cast<unsigned char>(prefix[0]) == 0x1f
        && static_cast<unsigned char>(prefix[1]) == 0x8b)
        return Error{path, {}, "the file is compressed with gzip: decompress it first (gunzip), then open the .json"};
    size_t first = 0;
    while (first < prefix.size() && isWs(prefix[first]))
        ++first;
    if (first < prefix.size() && prefix[first] == '{')
        return Error{path,
                     {},
                     "a JSON object without \"traceEvents\" (a Chrome trace) or \"format\" (a StreamScope "
                     "trace): not a trace StreamScope can read"};
    if (endsWith(path, ".nsys-rep") || endsWith(path, ".qdrep"))
        return Error{path,
                     {},
                     "an Nsight Systems report: export it to SQLite first "
                     "(nsys export --type sqlite -o report.sqlite report.nsys-rep), then open the .sqlite"};
    return Error{path,
                 {},
                 "not a trace StreamScope can read: expected a StreamScope trace, Chrome/Perfetto trace "
                 "JSON, a PyTorch profiler trace, an Nsight Systems SQLite export or a StreamScope CSV"};
}

} // namespace

std::string_view toString(TraceFormat f)
{
    switch (f) {
    case TraceFormat::Streamscope: return "streamscope";
    case TraceFormat::StreamscopeBinary: return "streamscope-binary";
    case TraceFormat::Chrome: return "chrome";
    case TraceFormat::PyTorch: return "pytorch";
    case TraceFormat::NsysSqlite: return "nsys-sqlite";
    case TraceFormat::Csv: return "csv";
    case TraceFormat::Unknown: break;
    }
    return "unknown";
}

std::string_view toString(ExportFormat f)
{
    switch (f) {
    case ExportFormat::Streamscope: return "streamscope";
    case ExportFormat::StreamscopeBinary: return "streamscope-binary";
    case ExportFormat::Chrome: return "chrome";
    case ExportFormat::Csv: return "csv";
    }
    return "?";
}

std::optional<ExportFormat> exportFormatFromString(std::string_view s)
{
    if (s == "streamscope")
        return ExportFormat::Streamscope;
    if (s == "streamscope-binary")
        return ExportFormat::StreamscopeBinary;
    if (s == "chrome" || s == "perfetto")
        return ExportFormat::Chrome;
    if (s == "csv")
        return ExportFormat::Csv;
    return std::nullopt;
}

static TraceFormat detectFormat(std::string_view prefix, bool* undecided);

TraceFormat detectTraceFormatFromContent(std::string_view prefix)
{
    return detectFormat(prefix, nullptr);
}

// A JSON object whose prefix names neither "format" nor "traceEvents" is decided by its whole text: Python's
// json.dump(sort_keys=True) writes "traceEvents" after every other key, often more than the prefix holds.
static TraceFormat detectFormat(std::string_view prefix, bool* undecided)
{
    if (undecided)
        *undecided = false;
    if (startsWith(prefix, std::string_view("SQLite format 3\0", 16)))
        return TraceFormat::NsysSqlite;
    if (looksLikeBinaryTrace(prefix))
        return TraceFormat::StreamscopeBinary;
    std::string_view p = prefix;
    if (startsWith(p, "\xef\xbb\xbf"))
        p.remove_prefix(3);
    if (startsWith(p, kCsvHeader)
        && (p.size() == kCsvHeader.size() || p[kCsvHeader.size()] == '\r' || p[kCsvHeader.size()] == '\n'))
        return TraceFormat::Csv;
    while (!p.empty() && isWs(p.front()))
        p.remove_prefix(1);
    if (p.empty())
        return TraceFormat::Unknown;
    if (p.front() == '[')
        return chrome::detectDialect(prefix) == chrome::Dialect::PyTorch ? TraceFormat::PyTorch : TraceFormat::Chrome;
    if (p.front() != '{')
        return TraceFormat::Unknown;
    bool format = false, events = false, pytorch = false, complete = false;
    for (const auto& [key, value] : topLevelKeys(p, &complete)) {
        if (key == "format")
            format = true;
        else if (key == "traceEvents")
            events = true;
        else if (key == "schemaVersion" || key == "deviceProperties")
            pytorch = true;
    }
    if (format && !events)
        return TraceFormat::Streamscope;
    if (pytorch || (events && chrome::detectDialect(prefix) == chrome::Dialect::PyTorch))
        return TraceFormat::PyTorch;
    if (events)
        return TraceFormat::Chrome;
    // A whole JSON object with neither key is no trace; in a long file they may come later: the native reader will
    // say what it misses, unless the caller decides on the whole text (undecided).
    if (!complete && undecided)
        *undecided = true;
    return complete ? TraceFormat::Unknown : TraceFormat::Streamscope;
}

// Profilers often compress their traces (PyTorch's and Kineto's *.json.gz): read such a file whole, uncompressed.
static bool isGzip(std::string_view prefix)
{
    return prefix.size() >= 2 && uint8_t(prefix[0]) == 0x1f && uint8_t(prefix[1]) == 0x8b;
}

#ifdef STREAMSCOPE_HAVE_ZLIB
// zlib's message, without the path it starts with (the error names the file already).
static std::string gzipMessage(gzFile f, const std::string& path, int& code)
{
    std::string message = gzerror(f, &code);
    if (message.rfind(path + ": ", 0) == 0)
        message.erase(0, path.size() + 2);
    return message;
}

// The bytes `path` unpacks to, counted without keeping them, up to `limit` + 1: a gzip bomb (gigabytes of zeros
// in a few megabytes) is refused after a second or two with a megabyte of buffer, before anything is allocated
// for its text.
static Result<size_t> gzipUnpackedSize(const std::string& path, size_t limit)
{
    gzFile f = gzopen(path.c_str(), "rb");
    if (!f)
        return Error{path, {}, "cannot open: " + errnoText(errno)};
    gzbuffer(f, 1 << 20);
    std::vector<char> buf(size_t(1) << 20);
    size_t total = 0;
    int n = 0;
    while (total <= limit && (n = gzread(f, buf.data(), unsigned(buf.size()))) > 0)
        total += size_t(n);
    int code = Z_OK;
    const std::string message = gzipMessage(f, path, code);
    gzclose(f);
    if (n < 0 || (code != Z_OK && code != Z_STREAM_END))
        return Error{path,
                     {},
                     "a gzip-compressed file that cannot be unpacked: " + message + " (after " + std::to_string(total)
                         + " bytes)"};
    return total;
}
#endif

static Result<std::string> readGzipFile(const std::string& path, size_t limit = std::string::npos)
{
#ifdef STREAMSCOPE_HAVE_ZLIB
    std::string text;
    if (limit == std::string::npos) {
        // The whole file: measured first, so that what is over the limit costs no memory and what is under it is
        // read into one allocation of its size.
        auto size = gzipUnpackedSize(path, kMaxUnpackedTraceBytes);
        if (!size)
            return size.error();
        if (*size > kMaxUnpackedTraceBytes)
            return Error{path,
                         {},
                         "a gzip-compressed file that unpacks to more than " + std::to_string(kMaxUnpackedTraceBytes)
                             + " bytes; the limit for a compressed "
                               "trace is "
                             + std::to_string(kMaxUnpackedTraceBytes)
                             + " (unpack it with gunzip and open the file itself)"};
        limit = *size;
        text.reserve(limit);
    }
    gzFile f = gzopen(path.c_str(), "rb");
    if (!f)
        return Error{path, {}, "cannot open: " + errnoText(errno)};
    gzbuffer(f, 1 << 20);
    std::vector<char> buf(size_t(1) << 20);
    int n = 0;
    while (text.size() < limit && (n = gzread(f, buf.data(), unsigned(std::min(buf.size(), limit - text.size())))) > 0)
        text.append(buf.data(), size_t(n));
    int code = Z_OK;
    const std::string message = gzipMessage(f, path, code);
    gzclose(f);
    if (n < 0 || (code != Z_OK && code != Z_STREAM_END))
        return Error{path,
                     {},
                     "a gzip-compressed file that cannot be unpacked: " + message + " (after "
                         + std::to_string(text.size()) + " bytes)"};
    return text;
#else
    (void)limit;
    return Error{path,
                 {},
                 "a gzip-compressed file, and this StreamScope was built without zlib: unpack it with "
                 "gunzip first"};
#endif
}

TraceFormat detectTraceFormat(const std::string& path)
{
    auto prefix = peek(path);
    if (!prefix)
        return TraceFormat::Unknown;
    if (isGzip(*prefix)) {
        // The format of what it unpacks to.
        auto unpacked = readGzipFile(path, kPeekBytes);
        return unpacked ? detectTraceFormatFromContent(*unpacked) : TraceFormat::Unknown;
    }
    bool undecided = false;
    const TraceFormat format = detectFormat(*prefix, &undecided);
    if (!undecided)
        return format;
    auto whole = peek(path, std::string::npos);
    return whole ? detectFormat(*whole, nullptr) : format;
}

bool canReadGzip()
{
#ifdef STREAMSCOPE_HAVE_ZLIB
    return true;
#else
    return false;
#endif
}

Result<Trace> importTraceFile(const std::string& path)
{
    auto prefix = peek(path);
    if (!prefix)
        return prefix.error();
    if (isGzip(*prefix)) {
        auto text = readGzipFile(path);
        if (!text)
            return text.error();
        if (detectTraceFormatFromContent(std::string_view(*text).substr(0, kPeekBytes)) == TraceFormat::NsysSqlite)
            return Error{path, {}, "a compressed SQLite database: unpack it with gunzip first"};
        return importTraceText(*text, path);
    }
    bool undecided = false;
    TraceFormat format = detectFormat(*prefix, &undecided);
    if (undecided) {
        auto whole = peek(path, std::string::npos);
        if (!whole)
            return whole.error();
        format = detectFormat(*whole, nullptr);
    }
    switch (format) {
    case TraceFormat::Streamscope: return loadTraceFile(path);
    case TraceFormat::StreamscopeBinary: return loadBinaryTraceFile(path);
    case TraceFormat::Chrome: return loadChromeTraceFile(path);
    case TraceFormat::PyTorch: return loadPyTorchTraceFile(path);
    case TraceFormat::NsysSqlite: return loadNsysSqliteFile(path);
    case TraceFormat::Csv: return loadCsvTraceFile(path);
    case TraceFormat::Unknown: break;
    }
    return unknownFormat(path, *prefix);
}

Result<Trace> importTraceFile(const std::string& path, const ImportProgress& progress)
{
    const import_detail::ProgressScope scope(&progress);
    auto trace = importTraceFile(path);
    if (import_detail::cancelled())
        return Error{path, {}, kImportCancelled};
    import_detail::step(1, 1);
    return trace;
}

Result<Trace> importTraceText(std::string_view text, const std::string& file)
{
    bool undecided = false;
    TraceFormat format = detectFormat(text.substr(0, kPeekBytes), &undecided);
    if (undecided)
        format = detectFormat(text, nullptr);
    switch (format) {
    case TraceFormat::Streamscope: return parseTrace(std::string(text), file);
    case TraceFormat::StreamscopeBinary: return parseBinaryTrace(text, file);
    case TraceFormat::Chrome: return parseChromeTrace(text, file);
    case TraceFormat::PyTorch: return parsePyTorchTrace(text, file);
    case TraceFormat::NsysSqlite:
        return Error{file, {}, "an SQLite database: open it as a file (importTraceFile), not as text"};
    case TraceFormat::Csv: return parseCsvTrace(text, file);
    case TraceFormat::Unknown: break;
    }
    return unknownFormat(file, text.substr(0, kPeekBytes));
}

std::string exportTraceText(const Trace& trace, ExportFormat format)
{
    switch (format) {
    case ExportFormat::Streamscope: return traceToJson(trace);
    case ExportFormat::StreamscopeBinary: return traceToBinary(trace);
    case ExportFormat::Chrome: return traceToChromeJson(trace);
    case ExportFormat::Csv: return traceToCsv(trace);
    }
    return {};
}

Status exportTrace(const Trace& trace, const std::string& path, ExportFormat format)
{
    std::string text;
    try {
        text = exportTraceText(trace, format);
    } catch (const std::bad_alloc&) {
        return Error{path, {}, "cannot save: not enough memory to write the trace"};
    }
    return saveTextFileAtomic(path, text);
}

ExportFormat nativeFormatForPath(std::string_view path)
{
    return hasBinaryTraceExtension(path) ? ExportFormat::StreamscopeBinary : ExportFormat::Streamscope;
}

Status saveNativeTrace(const Trace& trace, const std::string& path)
{
    return exportTrace(trace, path, nativeFormatForPath(path));
}

// ---------------------------------------------------------------------------------------------------------------
// CudaDependencies

size_t CudaDependencies::KeyHash::operator()(const Key& k) const noexcept
{
    uint64_t h = uint64_t(k.a) * 0x9e3779b97f4a7c15ull;
    h ^= uint64_t(k.b) + 0x7f4a7c159e3779b9ull + (h << 6) + (h >> 2);
    h ^= uint64_t(k.c) * 0xc2b2ae3d27d4eb4full + (h << 6) + (h >> 2);
    return size_t(h);
}

void CudaDependencies::apiCall(int64_t process, int64_t correlation, uint32_t span, int64_t start)
{
    if (correlation < 0)
        return;
    m_calls[{process, correlation, 0}] = {span, start};
    m_prepared = false;
}

void CudaDependencies::gpuOp(int64_t process, int64_t correlation, uint32_t span, int64_t device, int64_t stream,
                             int64_t start, int64_t end)
{
    m_streams[{process, device, stream}].push_back({start, start, end, span, correlation});
    m_prepared = false;
}

std::optional<CudaDependencies::Call> CudaDependencies::findCall(int64_t process, int64_t correlation) const
{
    if (correlation < 0)
        return std::nullopt;
    auto it = m_calls.find({process, correlation, 0});
    if (it == m_calls.end())
        return std::nullopt;
    return it->second;
}

void CudaDependencies::streamSync(int64_t process, int64_t device, int64_t stream, Call call)
{
    m_pending.push_back({Pending::StreamSync, process, device, stream, call.start, 0, 0, call});
}

void CudaDependencies::contextSync(int64_t process, int64_t device, Call call)
{
    m_pending.push_back({Pending::ContextSync, process, device, 0, call.start, 0, 0, call});
}

void CudaDependencies::streamWait(int64_t process, int64_t device, int64_t stream, int64_t waitTime,
                                  int64_t recordStream, int64_t recordTime)
{
    m_pending.push_back({Pending::StreamWait, process, device, stream, waitTime, recordStream, recordTime, {}});
}

void CudaDependencies::eventSync(int64_t process, int64_t device, int64_t recordStream, int64_t recordTime, Call call)
{
    m_pending.push_back({Pending::EventSync, process, device, 0, call.start, recordStream, recordTime, call});
}

void CudaDependencies::prepare()
{
    if (m_prepared)
        return;
    for (auto& [key, ops] : m_streams) {
        const int64_t process = key.a;
        for (Op& op : ops)
            if (const auto call = findCall(process, op.correlation))
                op.launch = call->start;
        // Work in a stream runs in the order it was enqueued: the order of the enqueuing calls.
        std::stable_sort(ops.begin(), ops.end(), [](const Op& a, const Op& b) {
            return a.launch != b.launch ? a.launch < b.launch : a.start < b.start;
        });
    }
    m_prepared = true;
}

const std::vector<CudaDependencies::Op>* CudaDependencies::streamOps(int64_t process, int64_t device,
                                                                     int64_t stream) const
{
    auto it = m_streams.find({process, device, stream});
    return it == m_streams.end() ? nullptr : &it->second;
}

const CudaDependencies::Op* CudaDependencies::lastLaunchedBefore(int64_t process, int64_t device, int64_t stream,
                                                                 int64_t time) const
{
    const auto* ops = streamOps(process, device, stream);
    if (!ops)
        return nullptr;
    auto it = std::lower_bound(ops->begin(), ops->end(), time, [](const Op& op, int64_t t) { return op.launch < t; });
    if (it == ops->begin())
        return nullptr;
    return &*(it - 1);
}

std::vector<Flow> CudaDependencies::flows()
{
    prepare();
    // The streams of each (process, device), for context syncs: a scan of every stream per sync was quadratic.
    std::unordered_map<Key, std::vector<const std::pair<const Key, std::vector<Op>>*>, KeyHash> deviceStreams;
    for (const auto& entry : m_streams)
        deviceStreams[{entry.first.a, entry.first.b, 0}].push_back(&entry);
    std::vector<Flow> out;
    for (const auto& [key, ops] : m_streams)
        for (const Op& op : ops)
            if (const auto call = findCall(key.a, op.correlation))
                out.push_back({call->span, op.span, FlowKind::Launch});
    for (const Pending& p : m_pending) {
        switch (p.type) {
        case Pending::StreamSync:
            // An arrow only where the host had to wait: the work was still running when the call began.
            if (const Op* op = lastLaunchedBefore(p.process, p.device, p.stream, p.time); op && op->end > p.time)
                out.push_back({op->span, p.call.span, FlowKind::Sync});
            break;
        case Pending::ContextSync: {
            const Op* last = nullptr;
            const auto streams = deviceStreams.find({p.process, p.device, 0});
            if (streams == deviceStreams.end())
                break;
            for (const auto* entry : streams->second) {
                const Key& key = entry->first;
                const Op* op = lastLaunchedBefore(key.a, key.b, key.c, p.time);
                if (op && (!last || op->end > last->end))
                    last = op;
            }
            if (last && last->end > p.time)
                out.push_back({last->span, p.call.span, FlowKind::Sync});
            break;
        }
        case Pending::StreamWait: {
            const Op* producer = lastLaunchedBefore(p.process, p.device, p.otherStream, p.otherTime);
            const auto* ops = streamOps(p.process, p.device, p.stream);
            if (!producer || !ops)
                break;
            auto it = std::upper_bound(ops->begin(), ops->end(), p.time,
                                       [](int64_t t, const Op& op) { return t < op.launch; });
            if (it != ops->end())
                out.push_back({producer->span, it->span, FlowKind::Event});
            break;
        }
        case Pending::EventSync:
            if (const Op* op = lastLaunchedBefore(p.process, p.device, p.otherStream, p.otherTime);
                op && op->end > p.time)
                out.push_back({op->span, p.call.span, FlowKind::Sync});
            break;
        }
    }
    return out;
}

#ifndef STREAMSCOPE_HAVE_SQLITE
// Built without SQLite3 (nsys_sqlite.cpp is compiled only where it is found).
bool nsysSqliteSupported()
{
    return false;
}

Result<Trace> loadNsysSqliteFile(const std::string& path, const NsysLimits&)
{
    return Error{path,
                 {},
                 "an SQLite database (Nsight Systems export?), but this StreamScope was built without "
                 "SQLite support: install the SQLite development files (libsqlite3-dev) and rebuild"};
}

Status executeSqlScript(const std::string& databasePath, const std::string&)
{
    return Error{databasePath, {}, "this StreamScope was built without SQLite support"};
}
#endif

} // namespace streamscope
