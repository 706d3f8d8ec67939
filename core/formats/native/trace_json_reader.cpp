// The native trace format, reading: parseTrace and loadTraceFile, every error with its JSON path (docs/TRACE.md).
#include "trace_json.h"
#include "trace_json_sax.h"

#include "file_io.h"
#include "import_limits.h"
#include "import_progress.h"
#include "json_strict.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <limits>
#include <map>
#include <set>
#include <system_error>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

// GCC 13 flags every `const Json& x = f(node, "")` as a possibly dangling reference because a temporary string is
// passed next to the node; the references point into the parsed document, which outlives them.
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 13
#pragma GCC diagnostic ignored "-Wdangling-reference"
#endif

namespace streamscope {

namespace {

using namespace trace_json;

// Deeper nesting than this is refused before parsing: nlohmann's dump() recurses, and the scenario embedded in
// a trace is written back out when the trace is saved again.
constexpr int kMaxDepth = 256;

// ---------------------------------------------------------------------------------------------------------------
// Reading

// Thrown inside the reader only; parseTrace turns it into an Error value.
struct ReadError {
    std::string path;
    std::string message;
};

[[noreturn]] void fail(std::string path, std::string message)
{
    throw ReadError{std::move(path), std::move(message)};
}

std::string child(const std::string& path, std::string_view key)
{
    return path + "/" + jsonPointerToken(key);
}
std::string child(const std::string& path, size_t index)
{
    return path + "/" + std::to_string(index);
}

std::string inQuotes(std::string_view s)
{
    return dumpJson(Json(s));
}

std::string rangeText(int64_t lo, int64_t hi)
{
    return "(" + std::to_string(lo) + " to " + std::to_string(hi) + ")";
}

const Json& expectObject(const Json& j, const std::string& path)
{
    if (!j.is_object())
        fail(path, "must be an object, not " + typeName(j));
    return j;
}

const Json& expectArray(const Json& j, const std::string& path)
{
    if (!j.is_array())
        fail(path, "must be an array, not " + typeName(j));
    return j;
}

// Refuses keys the format does not have: a misspelt key would otherwise be ignored silently.
void checkKeys(const Json& obj, const std::string& path, std::initializer_list<std::string_view> known)
{
    for (auto it = obj.begin(); it != obj.end(); ++it)
        if (std::find(known.begin(), known.end(), it.key()) == known.end())
            fail(child(path, it.key()), "unknown key " + inQuotes(it.key()));
}

const Json& required(const Json& obj, std::string_view key, const std::string& path)
{
    auto it = obj.find(std::string(key));
    if (it == obj.end())
        fail(path, "missing key " + inQuotes(key));
    return *it;
}

const Json* optional(const Json& obj, std::string_view key)
{
    auto it = obj.find(std::string(key));
    return it == obj.end() ? nullptr : &*it;
}

int64_t toInt(const Json& j, const std::string& path, int64_t lo, int64_t hi)
{
    int64_t v = 0;
    if (j.is_number_unsigned()) {
        const auto u = j.get<uint64_t>();
        if (u > uint64_t(hi))
            fail(path, std::to_string(u) + " is out of range " + rangeText(lo, hi));
        v = int64_t(u);
    } else if (j.is_number_integer()) {
        v = j.get<int64_t>();
    } else {
        fail(path, "must be an integer, not " + typeName(j));
    }
    if (v < lo || v > hi)
        fail(path, std::to_string(v) + " is out of range " + rangeText(lo, hi));
    return v;
}

int toInt32(const Json& j, const std::string& path)
{
    return int(toInt(j, path, std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max()));
}

std::string toStr(const Json& j, const std::string& path)
{
    if (!j.is_string())
        fail(path, "must be a string, not " + typeName(j));
    return j.get<std::string>();
}

std::string optionalString(const Json& obj, std::string_view key, const std::string& path)
{
    const Json* v = optional(obj, key);
    return v ? toStr(*v, child(path, key)) : std::string();
}

std::vector<std::pair<std::string, std::string>> readKeyValues(const Json& j, const std::string& path)
{
    expectObject(j, path);
    std::vector<std::pair<std::string, std::string>> out;
    for (auto it = j.begin(); it != j.end(); ++it) {
        const Json& v = it.value();
        if (v.is_string())
            out.emplace_back(it.key(), v.get<std::string>());
        else if (v.is_number() || v.is_boolean()) // hand-written files: 132 for "132"
            out.emplace_back(it.key(), dumpJson(v));
        else
            fail(child(path, it.key()), "must be a string, not " + typeName(v));
    }
    return out;
}

RunInfo readInfo(const Json& j, const std::string& path)
{
    expectObject(j, path);
    checkKeys(j, path,
              {"source", "backend", "scenario_id", "scenario_title", "variant", "scenario", "devices", "host", "date",
               "command", "settings", "clock_alignment_error_ns"});
    RunInfo info;
    info.source = TraceSource::Imported;
    if (const Json* v = optional(j, "source")) {
        const std::string s = toStr(*v, child(path, "source"));
        const auto src = traceSourceFromString(s);
        if (!src)
            fail(child(path, "source"),
                 "unknown source " + inQuotes(s) + " (expected cuda-events, cupti, simulator or imported)");
        info.source = *src;
    }
    info.backend = optionalString(j, "backend", path);
    info.scenarioId = optionalString(j, "scenario_id", path);
    info.scenarioTitle = optionalString(j, "scenario_title", path);
    info.variant = optionalString(j, "variant", path);
    if (const Json* v = optional(j, "scenario")) {
        if (v->is_object())
            info.scenarioJson = dumpJson(*v, 2);
        else if (v->is_string())
            info.scenarioJson = v->get<std::string>();
        else
            fail(child(path, "scenario"), "must be an object (the scenario as run), not " + typeName(*v));
    }
    if (const Json* v = optional(j, "devices")) {
        const std::string dpath = child(path, "devices");
        expectArray(*v, dpath);
        for (size_t i = 0; i < v->size(); ++i) {
            const std::string p = child(dpath, i);
            const Json& d = expectObject((*v)[i], p);
            checkKeys(d, p, {"index", "name", "properties"});
            DeviceInfo dev;
            dev.index = int(toInt(required(d, "index", p), child(p, "index"), 0, std::numeric_limits<int32_t>::max()));
            dev.name = optionalString(d, "name", p);
            if (const Json* props = optional(d, "properties"))
                dev.properties = readKeyValues(*props, child(p, "properties"));
            info.devices.push_back(std::move(dev));
        }
    }
    info.host = optionalString(j, "host", path);
    info.date = optionalString(j, "date", path);
    info.command = optionalString(j, "command", path);
    if (const Json* v = optional(j, "settings"))
        info.settings = readKeyValues(*v, child(path, "settings"));
    if (const Json* v = optional(j, "clock_alignment_error_ns")) {
        if (!v->is_number())
            fail(child(path, "clock_alignment_error_ns"), "must be a number, not " + typeName(*v));
        info.clockAlignmentErrorNs = v->get<double>();
    }
    return info;
}

template <typename E>
std::vector<E> readLegend(const Json& j, const std::string& path, std::optional<E> (*fromString)(std::string_view),
                          std::string_view what)
{
    expectArray(j, path);
    std::vector<E> out;
    out.reserve(j.size());
    for (size_t i = 0; i < j.size(); ++i) {
        const std::string s = toStr(j[i], child(path, i));
        const auto k = fromString(s);
        if (!k)
            fail(child(path, i), "unknown " + std::string(what) + " " + inQuotes(s));
        out.push_back(*k);
    }
    return out;
}

Track readTrack(const Json& j, const std::string& path)
{
    expectObject(j, path);
    checkKeys(j, path, {"kind", "name", "device", "stream_kind", "priority", "id", "parent", "depth"});
    Track t;
    const std::string kind = toStr(required(j, "kind", path), child(path, "kind"));
    const auto k = trackKindFromString(kind);
    if (!k)
        fail(child(path, "kind"),
             "unknown track kind " + inQuotes(kind) + " (expected \"stream\", \"host-thread\" or \"ranges\")");
    t.kind = *k;
    t.name = toStr(required(j, "name", path), child(path, "name"));
    if (const Json* v = optional(j, "device"))
        t.device = toInt32(*v, child(path, "device"));
    if (const Json* v = optional(j, "stream_kind")) {
        const std::string s = toStr(*v, child(path, "stream_kind"));
        const auto sk = streamKindFromString(s);
        if (!sk)
            fail(child(path, "stream_kind"),
                 "unknown stream kind " + inQuotes(s)
                     + " (expected legacy-default, per-thread-default, blocking or non-blocking)");
        t.streamKind = *sk;
    }
    if (const Json* v = optional(j, "priority"))
        t.priority = toInt32(*v, child(path, "priority"));
    if (const Json* v = optional(j, "id"))
        t.id = toInt(*v, child(path, "id"), std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max());
    if (const Json* v = optional(j, "parent"))
        t.parent = toInt32(*v, child(path, "parent"));
    if (const Json* v = optional(j, "depth"))
        t.depth = toInt32(*v, child(path, "depth"));
    if (t.kind == TrackKind::Ranges && t.depth < 0)
        fail(child(path, "depth"), "must not be negative");
    return t;
}

// Columns of one table ("spans", "flows"): every column an array of the same length as the first one read.
class ColumnReader {
public:
    ColumnReader(const Json& table, std::string path, const std::map<std::string, RawColumn>& raw)
        : m_table(table), m_path(std::move(path)), m_raw(raw)
    {}

    const RawColumn* column(std::string_view key, bool isRequired)
    {
        const Json* c = optional(m_table, key);
        if (!c) {
            if (isRequired)
                fail(m_path, "missing column " + inQuotes(key));
            return nullptr;
        }
        const std::string p = child(m_path, key);
        expectArray(*c, p);
        auto it = m_raw.find(p);
        if (it == m_raw.end())
            fail(p, "internal error: column not captured");
        const RawColumn& raw = it->second;
        if (m_first.empty()) {
            m_first = p;
            m_size = raw.size();
        } else if (raw.size() != m_size) {
            fail(p,
                 "column has " + std::to_string(raw.size()) + " values, but " + m_first + " has "
                     + std::to_string(m_size));
        }
        if (raw.bad)
            fail(child(p, raw.badIndex) + raw.badSuffix, raw.badMessage);
        return &raw;
    }
    size_t size() const { return m_size; }
    std::string path(std::string_view key) const { return child(m_path, key); }

private:
    const Json& m_table;
    std::string m_path;
    const std::map<std::string, RawColumn>& m_raw;
    std::string m_first;
    size_t m_size = 0;
};

// Integers of a column converted to T after a range check; `fallback` fills a column that is absent.
template <typename T>
void readInts(const RawColumn* c, const std::string& path, std::vector<T>& out, T fallback, size_t n)
{
    out.clear();
    if (!c) {
        out.assign(n, fallback);
        return;
    }
    constexpr auto lo = int64_t(std::numeric_limits<T>::min());
    constexpr auto hi = int64_t(std::numeric_limits<T>::max());
    out.resize(n);
    for (size_t i = 0; i < n; ++i) {
        const int64_t v = c->values[i];
        if constexpr (sizeof(T) < sizeof(int64_t))
            if (v < lo || v > hi)
                fail(child(path, i), std::to_string(v) + " is out of range " + rangeText(lo, hi));
        out[i] = T(v);
    }
}

// Indices into a table of `count` entries: "track 7 is out of range (tracks has 2 entries)".
template <typename Map>
void readIndices(const RawColumn* c, const std::string& path, size_t count, std::string_view what,
                 std::string_view table, Map&& map)
{
    for (size_t i = 0; i < c->values.size(); ++i) {
        const int64_t v = c->values[i];
        if (v < 0 || uint64_t(v) >= count)
            fail(child(path, i),
                 std::string(what) + " " + std::to_string(v) + " is out of range (" + std::string(table) + " has "
                     + std::to_string(count) + (count == 1 ? " entry)" : " entries)"));
        map(i, uint32_t(v));
    }
}

void readSpans(const Json& j, const std::map<std::string, RawColumn>& raw, Trace& t, const std::vector<SpanKind>& kinds)
{
    const std::string path = "/spans";
    expectObject(j, path);
    checkKeys(j, path,
              {"track", "kind", "name", "start", "end", "thread", "op", "iteration", "bytes", "grid", "block", "timing",
               "event_start_error", "event_end_error", "wait", "wait_for", "task"});
    ColumnReader cols(j, path, raw);
    const RawColumn* track = cols.column("track", true);
    const RawColumn* kind = cols.column("kind", true);
    const RawColumn* name = cols.column("name", true);
    const RawColumn* start = cols.column("start", true);
    const RawColumn* end = cols.column("end", true);
    const RawColumn* thread = cols.column("thread", false);
    const RawColumn* op = cols.column("op", false);
    const RawColumn* iteration = cols.column("iteration", false);
    const RawColumn* bytes = cols.column("bytes", false);
    const RawColumn* grid = cols.column("grid", false);
    const RawColumn* block = cols.column("block", false);
    const size_t n = cols.size();
    if (n > std::numeric_limits<uint32_t>::max())
        fail(path, "too many spans");

    auto& s = t.spans;
    s.track.resize(n);
    readIndices(track, cols.path("track"), t.tracks.size(), "track", "tracks",
                [&](size_t i, uint32_t v) { s.track[i] = v; });
    s.kind.resize(n);
    readIndices(kind, cols.path("kind"), kinds.size(), "kind", "span_kinds",
                [&](size_t i, uint32_t v) { s.kind[i] = kinds[v]; });
    s.name.resize(n);
    readIndices(name, cols.path("name"), t.strings.size(), "name", "strings",
                [&](size_t i, uint32_t v) { s.name[i] = v; });
    s.start.assign(start->values.begin(), start->values.end());
    s.end.assign(end->values.begin(), end->values.end());
    for (size_t i = 0; i < n; ++i)
        if (s.end[i] < s.start[i])
            fail(child(cols.path("end"), i),
                 "end before start (" + std::to_string(s.end[i]) + " < " + std::to_string(s.start[i]) + ")");
    readInts(thread, cols.path("thread"), s.thread, int32_t(-1), n);
    readInts(op, cols.path("op"), s.op, int32_t(-1), n);
    readInts(iteration, cols.path("iteration"), s.iteration, int32_t(-1), n);
    {
        // Read in full, then kept as a table of the distinct details (SpanColumns::detail).
        std::vector<int64_t> byteColumn;
        readInts(bytes, cols.path("bytes"), byteColumn, int64_t(0), n);
        const std::vector<Dim3> none(grid && block ? 0 : n, Dim3{0, 0, 0});
        s.setDetails(byteColumn, grid ? grid->dim3 : none, block ? block->dim3 : none);
    }
    if (const RawColumn* timing = cols.column("timing", false)) {
        s.timing.resize(n);
        for (size_t i = 0; i < n; ++i) {
            const int64_t v = timing->values[i];
            if (v < 0 || v > int64_t(SpanTiming::Uncertain))
                fail(child(cols.path("timing"), i),
                     "timing " + std::to_string(v) + " is not 0 (measured), 1 (corrected) or 2 (uncertain)");
            s.timing[i] = SpanTiming(v);
        }
    }
    if (const RawColumn* task = cols.column("task", false)) {
        s.task.resize(n);
        for (size_t i = 0; i < n; ++i) {
            const int64_t v = task->values[i];
            if (v < 0 || v > std::numeric_limits<int32_t>::max())
                fail(child(cols.path("task"), i), "task " + std::to_string(v) + " is not a repeat index (0 or more)");
            s.task[i] = int32_t(v);
        }
    }
    const RawColumn* startError = cols.column("event_start_error", false);
    const RawColumn* endError = cols.column("event_end_error", false);
    if (bool(startError) != bool(endError))
        fail(path, "event_start_error and event_end_error come together");
    if (startError) {
        s.eventStartError = startError->values;
        s.eventEndError = endError->values;
    }
    const RawColumn* wait = cols.column("wait", false);
    const RawColumn* waitFor = cols.column("wait_for", false);
    if (bool(wait) != bool(waitFor))
        fail(path, "wait and wait_for come together");
    if (wait) {
        s.wait.resize(n);
        s.waitFor.resize(n);
        for (size_t i = 0; i < n; ++i) {
            const int64_t v = wait->values[i];
            if (v < 0 || v >= kWaitCauseCount)
                fail(child(cols.path("wait"), i),
                     "wait " + std::to_string(v) + " is not a wait cause (0 to " + std::to_string(kWaitCauseCount - 1)
                         + ")");
            s.wait[i] = WaitCause(v);
            const int64_t h = waitFor->values[i];
            if (h < -1 || h >= int64_t(n))
                fail(child(cols.path("wait_for"), i),
                     "span " + std::to_string(h) + " is out of range (spans has " + std::to_string(n) + " entries)");
            s.waitFor[i] = h < 0 ? kNoSpan : uint32_t(h);
        }
    }
}

void readFlows(const Json& j, const std::map<std::string, RawColumn>& raw, Trace& t, const std::vector<FlowKind>& kinds)
{
    const std::string path = "/flows";
    expectObject(j, path);
    checkKeys(j, path, {"from", "to", "kind"});
    ColumnReader cols(j, path, raw);
    const RawColumn* from = cols.column("from", true);
    const RawColumn* to = cols.column("to", true);
    const RawColumn* kind = cols.column("kind", true);
    t.flows.resize(cols.size());
    const size_t spans = t.spans.size();
    readIndices(from, cols.path("from"), spans, "span", "spans", [&](size_t i, uint32_t v) { t.flows[i].from = v; });
    readIndices(to, cols.path("to"), spans, "span", "spans", [&](size_t i, uint32_t v) { t.flows[i].to = v; });
    readIndices(kind, cols.path("kind"), kinds.size(), "kind", "flow_kinds",
                [&](size_t i, uint32_t v) { t.flows[i].kind = kinds[v]; });
}

Trace readTrace(const Json& root, const std::map<std::string, RawColumn>& raw)
{
    if (!root.is_object())
        fail("", "not a StreamScope trace: expected a JSON object, found " + typeName(root));
    const Json* format = optional(root, "format");
    if (!format)
        fail("", "not a StreamScope trace: missing key \"format\" (expected \"streamscope-trace\")");
    if (!format->is_string() || format->get<std::string>() != kFormat) {
        std::string msg =
            "not a StreamScope trace: format is " + dumpJson(*format) + ", expected \"streamscope-trace\"";
        if (format->is_string() && format->get<std::string>() == "streamscope-scenario")
            msg += " (this is a scenario: run it to make a trace)";
        fail("/format", msg);
    }
    const Json& version = required(root, "version", "");
    if (!version.is_number_integer())
        fail("/version", "must be an integer, not " + typeName(version));
    if (version.is_number_unsigned() ? version.get<uint64_t>() != uint64_t(kTraceVersion)
                                     : version.get<int64_t>() != kTraceVersion)
        fail("/version",
             "unsupported version " + dumpJson(version) + " (this StreamScope reads version "
                 + std::to_string(kTraceVersion) + ")");
    checkKeys(root, "",
              {"format", "version", "info", "strings", "span_kinds", "flow_kinds", "tracks", "spans", "flows"});

    Trace t;
    t.info = readInfo(required(root, "info", ""), "/info");

    const Json& strings = expectArray(required(root, "strings", ""), "/strings");
    if (strings.size() > std::numeric_limits<uint32_t>::max())
        fail("/strings", "too many strings");
    t.strings.reserve(strings.size());
    for (size_t i = 0; i < strings.size(); ++i)
        t.strings.push_back(toStr(strings[i], child("/strings", i)));

    const auto spanKinds =
        readLegend<SpanKind>(required(root, "span_kinds", ""), "/span_kinds", spanKindFromString, "span kind");
    const auto flowKinds =
        readLegend<FlowKind>(required(root, "flow_kinds", ""), "/flow_kinds", flowKindFromString, "flow kind");

    const Json& tracks = expectArray(required(root, "tracks", ""), "/tracks");
    if (tracks.size() > kMaxImportedTracks)
        fail("/tracks", tooManyTracksMessage());
    t.tracks.reserve(tracks.size());
    std::set<int> devices; // of the streams
    for (size_t i = 0; i < tracks.size(); ++i) {
        t.addTrack(readTrack(tracks[i], child("/tracks", i)));
        const Track& tr = t.tracks.back();
        if (tr.kind == TrackKind::Stream && devices.insert(tr.device).second && devices.size() > kMaxImportedDevices)
            fail(child(child("/tracks", i), "device"), tooManyDevicesMessage());
    }
    // Ranges annotate a host thread or a stream of the file.
    for (size_t i = 0; i < t.tracks.size(); ++i) {
        const Track& tr = t.tracks[i];
        if (tr.kind != TrackKind::Ranges)
            continue;
        if (tr.parent < 0 || size_t(tr.parent) >= t.tracks.size()
            || t.tracks[size_t(tr.parent)].kind == TrackKind::Ranges)
            fail(child(child("/tracks", i), "parent"),
                 "track " + std::to_string(tr.parent) + " is not a host thread or stream of the file (tracks has "
                     + std::to_string(t.tracks.size()) + " entries)");
    }

    readSpans(required(root, "spans", ""), raw, t, spanKinds);
    readFlows(required(root, "flows", ""), raw, t, flowKinds);
    t.finalize();
    return t;
}

std::string cleanParseMessage(const std::string& what)
{
    // "[json.exception.parse_error.101] parse error at line 1, column 2: syntax error ..." -> from "line" on.
    auto pos = what.find("] ");
    std::string s = pos == std::string::npos ? what : what.substr(pos + 2);
    if (s.rfind("parse error at ", 0) == 0)
        s = s.substr(15);
    return s;
}
} // namespace

namespace {
// The text as nlohmann's parser reads it, a byte at a time, reporting the import's progress every 4 MiB. On Cancel
// the input ends there: the parse fails, and importTraceFile returns "cancelled" instead of its message.
class ProgressIterator {
public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = char;
    using difference_type = std::ptrdiff_t;
    using pointer = const char*;
    using reference = const char&;

    ProgressIterator(const char* p, const char* begin, const char* end) : m_p(p), m_begin(begin), m_end(end) {}
    reference operator*() const { return *m_p; }
    ProgressIterator& operator++()
    {
        ++m_p;
        if (((m_p - m_begin) & kStepMask) == 0
            && !import_detail::step(uint64_t(m_p - m_begin), uint64_t(m_end - m_begin)))
            m_p = m_end;
        return *this;
    }
    ProgressIterator operator++(int)
    {
        ProgressIterator before = *this;
        ++*this;
        return before;
    }
    bool operator==(const ProgressIterator& other) const { return m_p == other.m_p; }
    bool operator!=(const ProgressIterator& other) const { return m_p != other.m_p; }

private:
    static constexpr std::ptrdiff_t kStepMask = (std::ptrdiff_t(4) << 20) - 1;
    const char* m_p;
    const char* m_begin;
    const char* m_end;
};
} // namespace

Result<Trace> parseTrace(const std::string& text, const std::string& file)
{
    if (const auto at = nestingTooDeepAt(text, kMaxDepth))
        return Error{file, "byte " + std::to_string(*at),
                     "JSON nested deeper than " + std::to_string(kMaxDepth) + " levels"};
    TraceSax sax;
    try {
        const char* begin = text.data();
        const char* end = begin + text.size();
        const bool parsed = import_detail::active()
            ? Json::sax_parse(ProgressIterator(begin, begin, end), ProgressIterator(end, begin, end), &sax)
            : Json::sax_parse(text, &sax);
        if (!parsed) {
            if (!sax.duplicateKey.empty())
                return Error{file, sax.duplicatePath,
                             "duplicate key \"" + sax.duplicateKey + "\": an object names each key once"};
            return Error{file, "byte " + std::to_string(sax.errorByte),
                         "not valid JSON: " + cleanParseMessage(sax.errorMessage)};
        }
    } catch (const std::bad_alloc&) {
        return Error{file, {}, "out of memory while reading the trace"};
    }
    try {
        return readTrace(sax.root, sax.columns);
    } catch (const ReadError& e) {
        return Error{file, e.path, e.message};
    } catch (const std::bad_alloc&) {
        return Error{file, {}, "out of memory while reading the trace"};
    }
}

Result<Trace> loadTraceFile(const std::string& path)
{
    auto text = readTextFile(path);
    if (!text)
        return text.error();
    return parseTrace(*text, path);
}
} // namespace streamscope
