#include "trace_json.h"

#include "file_io.h"
#include "import_limits.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
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

// ordered_json keeps keys in the order written, so files read like the reference in docs/TRACE.md and the
// embedded scenario keeps its own key order.
using Json = nlohmann::ordered_json;

constexpr std::string_view kFormat = "streamscope-trace";
// Deeper nesting than this is refused before parsing: nlohmann's dump() recurses, and the scenario embedded in
// a trace is written back out when the trace is saved again.
constexpr int kMaxDepth = 256;

// ---------------------------------------------------------------------------------------------------------------
// Writing

std::string dumpJson(const Json& j, int indent = -1)
{
    // Names come from CUDA, the OS and imported files: invalid UTF-8 is replaced rather than thrown on.
    return j.dump(indent, ' ', false, Json::error_handler_t::replace);
}

void appendString(std::string& out, std::string_view s)
{
    out += dumpJson(Json(s));
}

// Re-indents a pretty-printed value nested `by` spaces deeper (JSON strings never hold raw newlines).
std::string indentNested(const std::string& pretty, int by)
{
    std::string out;
    out.reserve(pretty.size() + pretty.size() / 8);
    const std::string pad(size_t(by), ' ');
    for (char c : pretty) {
        out += c;
        if (c == '\n')
            out += pad;
    }
    return out;
}

template <typename T, typename F>
void appendColumn(std::string& out, std::string_view key, const std::vector<T>& v, F&& write, bool last = false)
{
    out += "    \"";
    out += key;
    out += "\": [";
    for (size_t i = 0; i < v.size(); ++i) {
        if (i)
            out += ',';
        write(out, v[i]);
    }
    out += last ? "]\n" : "],\n";
}


Json keyValueObject(const std::vector<std::pair<std::string, std::string>>& kv)
{
    Json o = Json::object();
    for (const auto& [k, v] : kv)
        o[k] = v;
    return o;
}

Json infoToJson(const RunInfo& info)
{
    Json j = Json::object();
    j["source"] = toString(info.source);
    j["backend"] = info.backend;
    j["scenario_id"] = info.scenarioId;
    j["scenario_title"] = info.scenarioTitle;
    j["variant"] = info.variant;
    if (!info.scenarioJson.empty()) {
        // Embedded as an object so the file stays readable JSON; text that is not an object is kept as a string.
        Json scenario = Json::parse(info.scenarioJson, nullptr, false);
        if (scenario.is_object())
            j["scenario"] = std::move(scenario);
        else
            j["scenario"] = info.scenarioJson;
    }
    Json devices = Json::array();
    for (const auto& d : info.devices) {
        Json dev = Json::object();
        dev["index"] = d.index;
        dev["name"] = d.name;
        dev["properties"] = keyValueObject(d.properties);
        devices.push_back(std::move(dev));
    }
    j["devices"] = std::move(devices);
    j["host"] = info.host;
    j["date"] = info.date;
    j["command"] = info.command;
    j["settings"] = keyValueObject(info.settings);
    j["clock_alignment_error_ns"] = std::isfinite(info.clockAlignmentErrorNs) ? info.clockAlignmentErrorNs : 0.0;
    return j;
}

std::string writeFinalized(const Trace& t)
{
    const size_t n = t.spans.size();
    std::string out;
    out.reserve(4096 + n * 64 + t.flows.size() * 16);
    out += "{\n  \"format\": \"";
    out += kFormat;
    out += "\",\n  \"version\": ";
    appendInt(out, kTraceVersion);
    out += ",\n  \"info\": ";
    out += indentNested(dumpJson(infoToJson(t.info), 2), 2);

    out += ",\n  \"strings\": [";
    for (size_t i = 0; i < t.strings.size(); ++i) {
        if (i)
            out += ',';
        appendString(out, t.strings[i]);
    }
    out += "],\n  \"span_kinds\": [";
    for (int k = 0; k < kSpanKindCount; ++k) {
        if (k)
            out += ", ";
        appendString(out, toString(SpanKind(k)));
    }
    out += "],\n  \"flow_kinds\": [";
    for (int k = 0; k < kFlowKindCount; ++k) {
        if (k)
            out += ", ";
        appendString(out, toString(FlowKind(k)));
    }
    out += "],\n  \"tracks\": [";
    for (size_t i = 0; i < t.tracks.size(); ++i) {
        const Track& tr = t.tracks[i];
        out += i ? ",\n    " : "\n    ";
        out += "{\"kind\": ";
        appendString(out, toString(tr.kind));
        out += ", \"name\": ";
        appendString(out, tr.name);
        out += ", \"device\": ";
        appendInt(out, tr.device);
        out += ", \"stream_kind\": ";
        appendString(out, toString(tr.streamKind));
        out += ", \"priority\": ";
        appendInt(out, tr.priority);
        out += ", \"id\": ";
        appendInt(out, tr.id);
        if (tr.kind == TrackKind::Ranges) {
            out += ", \"parent\": ";
            appendInt(out, tr.parent);
            out += ", \"depth\": ";
            appendInt(out, tr.depth);
        }
        out += '}';
    }
    out += t.tracks.empty() ? "],\n" : "\n  ],\n";

    const auto writeInt = [](std::string& o, auto v) { appendInt(o, int64_t(v)); };
    const auto& s = t.spans;
    out += "  \"spans\": {\n";
    appendColumn(out, "track", s.track, writeInt);
    appendColumn(out, "kind", s.kind, writeInt);
    appendColumn(out, "name", s.name, writeInt);
    appendColumn(out, "start", s.start, writeInt);
    appendColumn(out, "end", s.end, writeInt);
    appendColumn(out, "thread", s.thread, writeInt);
    appendColumn(out, "op", s.op, writeInt);
    appendColumn(out, "iteration", s.iteration, writeInt);
    appendColumn(out, "bytes", s.bytes, writeInt);
    appendColumn(out, "grid", s.grid, appendDim3);
    const bool timing = !s.timing.empty();
    const bool errors = !s.eventStartError.empty();
    const bool waits = !s.wait.empty();
    appendColumn(out, "block", s.block, appendDim3, !timing && !errors && !waits);
    // Optional columns (docs/TRACE.md): only where a span differs from the default.
    if (timing)
        appendColumn(out, "timing", s.timing, writeInt, !errors && !waits);
    if (errors) {
        appendColumn(out, "event_start_error", s.eventStartError, writeInt);
        appendColumn(out, "event_end_error", s.eventEndError, writeInt, !waits);
    }
    if (waits) {
        appendColumn(out, "wait", s.wait, writeInt);
        appendColumn(out, "wait_for", s.waitFor,
                     [](std::string& o, uint32_t v) { appendInt(o, v == kNoSpan ? -1 : int64_t(v)); }, true);
    }
    out += "  },\n  \"flows\": {\n";
    appendColumn(out, "from", t.flows, [](std::string& o, const Flow& f) { appendInt(o, f.from); });
    appendColumn(out, "to", t.flows, [](std::string& o, const Flow& f) { appendInt(o, f.to); });
    appendColumn(out, "kind", t.flows, [](std::string& o, const Flow& f) { appendInt(o, int(f.kind)); }, true);
    out += "  }\n}\n";
    return out;
}

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

std::string child(const std::string& path, std::string_view key) { return path + "/" + jsonPointerToken(key); }
std::string child(const std::string& path, size_t index) { return path + "/" + std::to_string(index); }

std::string inQuotes(std::string_view s) { return dumpJson(Json(s)); }

std::string_view typeName(Json::value_t t)
{
    switch (t) {
    case Json::value_t::null: return "null";
    case Json::value_t::object: return "an object";
    case Json::value_t::array: return "an array";
    case Json::value_t::string: return "a string";
    case Json::value_t::boolean: return "a boolean";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned: return "an integer";
    case Json::value_t::number_float: return "a number with a fraction or exponent";
    default: return "something else";
    }
}

std::string typeName(const Json& j) { return std::string(typeName(j.type())); }

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

// One column of "spans" or "flows", captured while parsing instead of being built as JSON values: a million
// spans as a JSON DOM take several times the memory and time of the integers themselves.
struct RawColumn {
    bool dims = false;           // grid, block: [x, y, z] per entry
    std::vector<int64_t> values; // integer columns
    std::vector<Dim3> dim3;      // dims columns
    // The first entry that is not what the column holds: its index, a path below it ("/1" inside [x, y, z]).
    bool bad = false;
    size_t badIndex = 0;
    std::string badSuffix;
    std::string badMessage;

    size_t size() const { return dims ? dim3.size() : values.size(); }
    void markBad(size_t index, std::string suffix, std::string message)
    {
        if (bad)
            return;
        bad = true;
        badIndex = index;
        badSuffix = std::move(suffix);
        badMessage = std::move(message);
    }
};

constexpr std::string_view kDimMessage = "must be an array of three integers [x, y, z]";

// Builds the JSON document like nlohmann's DOM parser, except that arrays directly under the root's "spans" and
// "flows" objects become RawColumns (an empty array stands in for them in the document).
class TraceSax final : public nlohmann::json_sax<Json> {
public:
    Json root;
    std::map<std::string, RawColumn> columns; // by JSON path: "/spans/start"
    size_t errorByte = 0;
    std::string errorMessage;
    std::string duplicateKey, duplicatePath; // a key an object names twice (nlohmann would keep the last silently)

    bool null() override { return scalar(Json::value_t::null, [] { return Json(nullptr); }); }
    bool boolean(bool v) override { return scalar(Json::value_t::boolean, [v] { return Json(v); }); }
    bool number_float(number_float_t v, const string_t&) override
    {
        return scalar(Json::value_t::number_float, [v] { return Json(v); });
    }
    bool string(string_t& v) override { return scalar(Json::value_t::string, [&v] { return Json(std::move(v)); }); }
    bool binary(binary_t& v) override { return scalar(Json::value_t::binary, [&v] { return Json(std::move(v)); }); }

    bool number_integer(number_integer_t v) override
    {
        if (m_column)
            return integer(v, false);
        return place(Json(v)) != nullptr;
    }
    bool number_unsigned(number_unsigned_t v) override
    {
        if (m_column) {
            if (v > uint64_t(std::numeric_limits<int64_t>::max())) {
                const size_t index = m_column->size() - (m_captureDepth == 2 ? 1 : 0);
                m_column->markBad(index, m_captureDepth == 2 ? "/" + std::to_string(m_dimPos) : std::string(),
                                  std::to_string(v) + " is out of range");
                return integer(0, true);
            }
            return integer(int64_t(v), false);
        }
        return place(Json(v)) != nullptr;
    }

    bool start_object(std::size_t) override
    {
        if (m_column) {
            nested(Json::value_t::object);
            return true;
        }
        Json* o = place(Json::object());
        m_stack.push_back(o);
        return true;
    }
    bool key(string_t& k) override
    {
        if (m_column)
            return true;
        if (m_stack.back()->is_object() && m_stack.back()->contains(k)) {
            duplicateKey = k;
            duplicatePath = m_stack.size() == 1 ? std::string()
                : m_stack.size() == 2           ? "/" + jsonPointerToken(m_rootKey)
                                                : "/" + jsonPointerToken(m_rootKey) + "/" + jsonPointerToken(m_tableKey);
            return false;
        }
        if (m_stack.size() == 1)
            m_rootKey = k;
        else if (m_stack.size() == 2)
            m_tableKey = k;
        m_slot = &(*m_stack.back())[k];
        return true;
    }
    bool end_object() override
    {
        if (m_column) {
            --m_skipDepth;
            return true;
        }
        m_stack.pop_back();
        return true;
    }
    bool start_array(std::size_t) override
    {
        if (m_column) {
            if (m_skipDepth > 0) {
                ++m_skipDepth;
            } else if (m_captureDepth == 1 && m_column->dims) {
                m_captureDepth = 2;
                m_dimPos = 0;
                m_column->dim3.push_back({0, 0, 0});
            } else {
                nested(Json::value_t::array);
            }
            return true;
        }
        if (m_stack.size() == 2 && m_stack.back()->is_object() && (m_rootKey == "spans" || m_rootKey == "flows")) {
            const std::string path = "/" + m_rootKey + "/" + jsonPointerToken(m_tableKey);
            m_column = &(columns[path] = RawColumn{});
            m_column->dims = m_rootKey == "spans" && (m_tableKey == "grid" || m_tableKey == "block");
            m_captureDepth = 1;
            place(Json::array());
            return true;
        }
        m_stack.push_back(place(Json::array()));
        return true;
    }
    bool end_array() override
    {
        if (m_column) {
            if (m_skipDepth > 0) {
                --m_skipDepth;
            } else if (m_captureDepth == 2) {
                if (m_dimPos != 3)
                    m_column->markBad(m_column->dim3.size() - 1, {}, std::string(kDimMessage));
                m_captureDepth = 1;
            } else {
                m_column = nullptr;
                m_captureDepth = 0;
            }
            return true;
        }
        m_stack.pop_back();
        return true;
    }
    bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& ex) override
    {
        errorByte = position;
        errorMessage = ex.what();
        return false;
    }

private:
    Json* place(Json value)
    {
        if (m_stack.empty()) {
            root = std::move(value);
            return &root;
        }
        if (m_stack.back()->is_array()) {
            m_stack.back()->push_back(std::move(value));
            return &m_stack.back()->back();
        }
        *m_slot = std::move(value);
        return m_slot;
    }

    template <typename Make>
    bool scalar(Json::value_t type, Make&& make)
    {
        if (!m_column)
            return place(make()) != nullptr;
        if (m_skipDepth > 0)
            return true;
        wrongType(type);
        return true;
    }

    // An integer inside a captured column.
    bool integer(int64_t v, bool alreadyBad)
    {
        if (m_skipDepth > 0)
            return true;
        if (!m_column->dims) {
            m_column->values.push_back(v);
            return true;
        }
        if (m_captureDepth == 1) { // a bare number where [x, y, z] belongs
            m_column->markBad(m_column->dim3.size(), {}, std::string(kDimMessage));
            m_column->dim3.push_back({0, 0, 0});
            return true;
        }
        const size_t index = m_column->dim3.size() - 1;
        if (m_dimPos < 3 && !alreadyBad) {
            if (v < 0 || v > int64_t(std::numeric_limits<uint32_t>::max()))
                m_column->markBad(index, "/" + std::to_string(m_dimPos),
                                  std::to_string(v) + " is out of range (0 to 4294967295)");
            else
                (m_dimPos == 0 ? m_column->dim3.back().x
                               : m_dimPos == 1 ? m_column->dim3.back().y
                                               : m_column->dim3.back().z) = uint32_t(v);
        }
        ++m_dimPos;
        return true;
    }

    // A value of the wrong type at the current position of a captured column.
    void wrongType(Json::value_t type)
    {
        if (!m_column->dims) {
            m_column->markBad(m_column->values.size(), {}, "must be an integer, not " + std::string(typeName(type)));
            m_column->values.push_back(0);
        } else if (m_captureDepth == 1) {
            m_column->markBad(m_column->dim3.size(), {}, std::string(kDimMessage));
            m_column->dim3.push_back({0, 0, 0});
        } else {
            m_column->markBad(m_column->dim3.size() - 1, "/" + std::to_string(m_dimPos),
                              "must be an integer, not " + std::string(typeName(type)));
            ++m_dimPos;
        }
    }

    // An object or array where a column entry (or a component of one) belongs: reported, then skipped.
    void nested(Json::value_t type)
    {
        if (m_skipDepth == 0)
            wrongType(type);
        ++m_skipDepth;
    }

    std::vector<Json*> m_stack;
    Json* m_slot = nullptr;
    std::string m_rootKey, m_tableKey;
    RawColumn* m_column = nullptr;
    int m_captureDepth = 0; // 1: in the column, 2: in one [x, y, z]
    int m_skipDepth = 0;    // inside a wrong object or array in a column
    int m_dimPos = 0;
};

// Columns of one table ("spans", "flows"): every column an array of the same length as the first one read.
class ColumnReader {
public:
    ColumnReader(const Json& table, std::string path, const std::map<std::string, RawColumn>& raw)
        : m_table(table), m_path(std::move(path)), m_raw(raw)
    {
    }

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
            fail(p, "column has " + std::to_string(raw.size()) + " values, but " + m_first + " has "
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
            fail(child(path, i), std::string(what) + " " + std::to_string(v) + " is out of range (" + std::string(table)
                                     + " has " + std::to_string(count) + (count == 1 ? " entry)" : " entries)"));
        map(i, uint32_t(v));
    }
}

void readSpans(const Json& j, const std::map<std::string, RawColumn>& raw, Trace& t, const std::vector<SpanKind>& kinds)
{
    const std::string path = "/spans";
    expectObject(j, path);
    checkKeys(j, path,
              {"track", "kind", "name", "start", "end", "thread", "op", "iteration", "bytes", "grid", "block", "timing",
               "event_start_error", "event_end_error", "wait", "wait_for"});
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
    s.start = start->values;
    s.end = end->values;
    for (size_t i = 0; i < n; ++i)
        if (s.end[i] < s.start[i])
            fail(child(cols.path("end"), i), "end before start (" + std::to_string(s.end[i]) + " < "
                                                 + std::to_string(s.start[i]) + ")");
    readInts(thread, cols.path("thread"), s.thread, int32_t(-1), n);
    readInts(op, cols.path("op"), s.op, int32_t(-1), n);
    readInts(iteration, cols.path("iteration"), s.iteration, int32_t(-1), n);
    readInts(bytes, cols.path("bytes"), s.bytes, int64_t(0), n);
    if (grid)
        s.grid = grid->dim3;
    else
        s.grid.assign(n, Dim3{0, 0, 0});
    if (block)
        s.block = block->dim3;
    else
        s.block.assign(n, Dim3{0, 0, 0});
    if (const RawColumn* timing = cols.column("timing", false)) {
        s.timing.resize(n);
        for (size_t i = 0; i < n; ++i) {
            const int64_t v = timing->values[i];
            if (v < 0 || v > int64_t(SpanTiming::Uncertain))
                fail(child(cols.path("timing"), i), "timing " + std::to_string(v) +
                                                        " is not 0 (measured), 1 (corrected) or 2 (uncertain)");
            s.timing[i] = SpanTiming(v);
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
                fail(child(cols.path("wait"), i), "wait " + std::to_string(v) + " is not a wait cause (0 to "
                                                      + std::to_string(kWaitCauseCount - 1) + ")");
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

// Finds nesting deeper than kMaxDepth; returns the byte offset where it happens, or npos.
size_t tooDeepAt(const std::string& text)
{
    int depth = 0;
    bool inString = false;
    for (size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (inString) {
            if (c == '\\')
                ++i;
            else if (c == '"')
                inString = false;
        } else if (c == '"') {
            inString = true;
        } else if (c == '[' || c == '{') {
            if (++depth > kMaxDepth)
                return i;
        } else if (c == ']' || c == '}') {
            --depth;
        }
    }
    return std::string::npos;
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
        fail("/version", "unsupported version " + dumpJson(version) + " (this StreamScope reads version "
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

    const auto spanKinds = readLegend<SpanKind>(required(root, "span_kinds", ""), "/span_kinds", spanKindFromString,
                                                "span kind");
    const auto flowKinds = readLegend<FlowKind>(required(root, "flow_kinds", ""), "/flow_kinds", flowKindFromString,
                                                "flow kind");

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
            fail(child(child("/tracks", i), "parent"), "track " + std::to_string(tr.parent)
                                                          + " is not a host thread or stream of the file (tracks has "
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

std::string parentDir(const std::string& path)
{
    const auto slash = path.find_last_of('/');
    if (slash == std::string::npos)
        return ".";
    if (slash == 0)
        return "/";
    return path.substr(0, slash);
}

std::string baseName(const std::string& path)
{
    const auto slash = path.find_last_of('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

} // namespace

std::string traceToJson(const Trace& trace)
{
    if (trace.finalized())
        return writeFinalized(trace);
    Trace copy = trace;
    copy.finalize();
    return writeFinalized(copy);
}

Result<Trace> parseTrace(const std::string& text, const std::string& file)
{
    if (const size_t at = tooDeepAt(text); at != std::string::npos)
        return Error{file, "byte " + std::to_string(at),
                     "JSON nested deeper than " + std::to_string(kMaxDepth) + " levels"};
    TraceSax sax;
    try {
        if (!Json::sax_parse(text, &sax)) {
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

Status saveTextFileAtomic(const std::string& path, const std::string& text)
{
    if (path.empty())
        return Error{{}, {}, "no file name given"};
    std::string target = path;
    struct stat st {};
    // Saving through a symbolic link replaces the file it points to, not the link.
    if (::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
        if (char* real = ::realpath(path.c_str(), nullptr)) {
            target = real;
            std::free(real);
        }
    }
    const bool exists = ::stat(target.c_str(), &st) == 0;
    if (exists && S_ISDIR(st.st_mode))
        return Error{path, {}, "cannot save: it is a directory"};

    // The temporary file lives beside the target so that rename() replaces it in one step (same file system).
    static std::atomic<unsigned> counter{0};
    const std::string dir = parentDir(target);
    const std::string stem = baseName(target).substr(0, 200);
    std::string tmp;
    int fd = -1;
    for (int attempt = 0; attempt < 100 && fd < 0; ++attempt) {
        tmp = dir + "/." + stem + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
        fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd < 0 && errno != EEXIST)
            break;
    }
    if (fd < 0)
        return Error{path, {}, "cannot save: cannot create a file in " + dir + ": " + errnoText(errno)};
    if (exists && S_ISREG(st.st_mode))
        (void)::fchmod(fd, st.st_mode & 07777);

    const auto failWith = [&](const std::string& what, int err) {
        if (fd >= 0)
            ::close(fd);
        ::unlink(tmp.c_str());
        return Status(Error{path, {}, "cannot save: " + what + ": " + errnoText(err)});
    };
    size_t done = 0;
    while (done < text.size()) {
        const ssize_t w = ::write(fd, text.data() + done, text.size() - done);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return failWith("write failed", errno);
        }
        done += size_t(w);
    }
    if (::fsync(fd) != 0)
        return failWith("fsync failed", errno);
    const int closed = ::close(fd);
    fd = -1;
    if (closed != 0)
        return failWith("close failed", errno);
    if (::rename(tmp.c_str(), target.c_str()) != 0)
        return failWith("cannot replace the file", errno);
    // Makes the rename itself durable; a failure here leaves a complete file either way.
    if (int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); dfd >= 0) {
        (void)::fsync(dfd);
        ::close(dfd);
    }
    return Status::success();
}

Result<std::string> readTextFile(const std::string& path, size_t maxBytes)
{
    OpenFile file;
    if (Status opened = openForReading(path, file); !opened)
        return opened.error();
    const struct stat& st = file.status;
    const auto tooLarge = [&](uint64_t size) {
        return Error{path, {}, "file is too large (" + std::to_string(size) + " bytes; the limit is "
                                   + std::to_string(maxBytes) + ")"};
    };
    if (S_ISREG(st.st_mode) && uint64_t(st.st_size) > maxBytes)
        return tooLarge(uint64_t(st.st_size));

    std::string text;
    try {
        // Regular files: their size, then a probe for growth; pipes and devices: grown as read. Bounded by maxBytes.
        text.resize(S_ISREG(st.st_mode) ? size_t(st.st_size) : std::min(maxBytes, size_t(64) << 10));
        size_t done = 0;
        for (;;) {
            const ssize_t r = readFully(file.fd, text.data() + done, text.size() - done);
            if (r < 0)
                return Error{path, {}, "cannot read: " + errnoText(errno)};
            done += size_t(r);
            if (done < text.size())
                break; // the end of the file
            char probe;
            const ssize_t p = readFully(file.fd, &probe, 1);
            if (p < 0)
                return Error{path, {}, "cannot read: " + errnoText(errno)};
            if (p == 0)
                break;
            if (done + 1 > maxBytes)
                return tooLarge(uint64_t(done) + 1);
            text.resize(std::min(maxBytes, std::max(done * 2, size_t(64) << 10)));
            text[done++] = probe;
        }
        text.resize(done);
    } catch (const std::bad_alloc&) {
        return Error{path, {}, "not enough memory to read the file"};
    }
    return text;
}

} // namespace streamscope
