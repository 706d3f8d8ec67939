#include "scenario_json.h"

#include "diagnostics.h"
#include "expect.h"
#include "file_io.h"
#include "json_strict.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <optional>
#include <set>
#include <string_view>
#include <system_error>
#include <unordered_map>

namespace streamscope {

namespace {

// Reading uses the sorted-map json: lookups stay O(log n) on hostile files with huge objects. Writing uses
// ordered_json so that files read in the order of docs/SCENARIO.md ("format" first).
using Json = nlohmann::json;
using OrderedJson = nlohmann::ordered_json;

constexpr std::string_view kFormat = "streamscope-scenario";
constexpr int kMinPriority = -5; // CUDA's greatest priority on current GPUs (H200: 0 .. -5)
constexpr int kMaxBlockThreads = 1024;
constexpr int kMaxBlockZ = 64;
constexpr int64_t kMaxGridX = std::numeric_limits<int32_t>::max();
constexpr int64_t kMaxGridYZ = 65535;
constexpr int kMaxConnections = 32;                     // CUDA_DEVICE_MAX_CONNECTIONS range
constexpr double kMaxDurationUs = 3600.0 * 1'000'000.0; // one hour: keeps nanosecond arithmetic far from overflow

// The first error ends reading; it travels as an exception inside this file only and leaves as a Result.
struct ReadFailure {
    Error error;
};

// ---------------------------------------------------------------------------------------------------------------
// Small helpers

std::string versionNote()
{
    return "this StreamScope reads version " + std::to_string(kScenarioVersion);
}

std::string dumpJson(const Json& j)
{
    return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

// A name as it appears in a message: JSON-quoted, so control characters in hostile names stay visible.
std::string jsonQuoted(std::string_view s)
{
    return dumpJson(Json(s));
}

std::string child(const std::string& path, std::string_view key)
{
    return path + "/" + jsonPointerToken(key);
}

std::string child(const std::string& path, size_t index)
{
    return path + "/" + std::to_string(index);
}

std::string typeName(const Json& v)
{
    switch (v.type()) {
    case Json::value_t::null: return "null";
    case Json::value_t::boolean: return "boolean";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned: return "integer";
    case Json::value_t::number_float: return "number " + dumpJson(v);
    case Json::value_t::string: return "string";
    case Json::value_t::array: return "array";
    case Json::value_t::object: return "object";
    default: return "unsupported value";
    }
}

size_t editDistance(std::string_view a, std::string_view b)
{
    std::vector<size_t> row(b.size() + 1);
    for (size_t j = 0; j <= b.size(); ++j)
        row[j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
        size_t diagonal = row[0];
        row[0] = i;
        for (size_t j = 1; j <= b.size(); ++j) {
            const size_t above = row[j];
            const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + cost});
            diagonal = above;
        }
    }
    return row[b.size()];
}

// The closest candidate, when it is close enough to be a likely typo.
template <typename Range>
std::optional<std::string> closest(std::string_view word, const Range& candidates)
{
    const size_t allowed = word.size() <= 3 ? 1 : word.size() <= 6 ? 2 : 3;
    std::optional<std::string> best;
    size_t bestDistance = allowed + 1;
    for (const auto& c : candidates) {
        const std::string_view candidate(c);
        // Long hostile names would make the quadratic distance expensive; typos are short.
        if (candidate.size() > 256 || word.size() > 256)
            continue;
        const size_t d = editDistance(word, candidate);
        if (d < bestDistance && d < std::max(word.size(), candidate.size())) {
            bestDistance = d;
            best = std::string(candidate);
        }
    }
    return best;
}

template <typename Range>
std::string joinQuoted(const Range& names)
{
    std::string out;
    for (const auto& n : names) {
        if (!out.empty())
            out += ", ";
        out += jsonQuoted(std::string_view(n));
    }
    return out;
}

// " (did you mean "x"?)" or " (one of: "a", "b")" for a value that is not one of `candidates`.
template <typename Range>
std::string hint(std::string_view word, const Range& candidates, bool listWhenNoMatch = true)
{
    if (auto best = closest(word, candidates))
        return " (did you mean " + jsonQuoted(*best) + "?)";
    if (!listWhenNoMatch || std::empty(candidates))
        return {};
    return " (one of: " + joinQuoted(candidates) + ")";
}

std::string formatNumber(double v)
{
    return dumpJson(Json(v));
}

// Saturating arithmetic for the issued-operation count: hostile repeat and iteration counts must not overflow.
int64_t saturatingMul(int64_t a, int64_t b)
{
    constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
    if (a <= 0 || b <= 0)
        return 0;
    return a > kMax / b ? kMax : a * b;
}

int64_t saturatingAdd(int64_t a, int64_t b)
{
    constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
    return a > kMax - b ? kMax : a + b;
}

bool parseDecimal(std::string_view s, int64_t& out)
{
    if (s.empty())
        return false;
    const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    return ec == std::errc() && p == s.data() + s.size();
}

// ---------------------------------------------------------------------------------------------------------------
// JSON text -> document

std::pair<size_t, size_t> lineAndColumn(const std::string& text, size_t byte)
{
    const size_t pos = std::min(byte == 0 ? 0 : byte - 1, text.size());
    size_t line = 1;
    size_t lineStart = 0;
    for (size_t i = 0; i < pos; ++i) {
        if (text[i] == '\n') {
            ++line;
            lineStart = i + 1;
        }
    }
    return {line, pos - lineStart + 1};
}

// nlohmann's what() is "[json.exception.parse_error.101] parse error at line 1, column 2: syntax error ...":
// keep only the part after the position, which we state ourselves.
std::string plainMessage(const char* what)
{
    std::string_view s(what);
    if (const size_t bracket = s.find("] "); s.starts_with("[json.exception.") && bracket != s.npos)
        s.remove_prefix(bracket + 2);
    if (s.starts_with("parse error")) {
        if (const size_t colon = s.find(": "); colon != s.npos)
            s.remove_prefix(colon + 2);
    }
    return std::string(s);
}

// The byte offset at which the text first nests deeper than maxDepth containers, if it does. A linear pass over
// the text instead of nlohmann's parser callback: that callback's parser rescans the enclosing array after every
// object it closes (quadratic: a million ops took minutes). Strings are skipped, so brackets in names don't count;
// on malformed text the parser afterwards reports the syntax error.
std::optional<size_t> nestingTooDeepAt(const std::string& text, int maxDepth)
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
            continue;
        }
        if (c == '"') {
            inString = true;
        } else if (c == '[' || c == '{') {
            if (++depth > maxDepth)
                return i;
        } else if (c == ']' || c == '}') {
            --depth;
        }
    }
    return std::nullopt;
}

std::string positionText(const std::string& text, size_t byte)
{
    const auto [line, column] = lineAndColumn(text, byte);
    return "at byte " + std::to_string(byte) + " (line " + std::to_string(line) + ", column " +
           std::to_string(column) + ")";
}

Json parseJsonText(const std::string& text, const std::string& file, int maxDepth)
{
    // Refused before parsing: deep nesting costs memory to build, and nlohmann's dump() recurses when the
    // scenario is written out again (into a trace, by the editor).
    if (const auto at = nestingTooDeepAt(text, maxDepth))
        throw ReadFailure{{file, "",
                           "nesting deeper than " + std::to_string(maxDepth) + " levels " +
                               positionText(text, *at + 1)}};
    try {
        return parseJsonStrict<Json>(text);
    } catch (const DuplicateJsonKey& d) {
        // nlohmann would keep the last value silently; the author may have meant the first.
        throw ReadFailure{{file, d.pointer, "duplicate key " + jsonQuoted(d.key) + ": an object names each key once"}};
    } catch (const Json::parse_error& e) {
        throw ReadFailure{{file, "", "not JSON: " + plainMessage(e.what()) + " " + positionText(text, e.byte)}};
    } catch (const Json::exception& e) {
        throw ReadFailure{{file, "", "not JSON: " + plainMessage(e.what())}};
    }
}

// ---------------------------------------------------------------------------------------------------------------
// Field tables

using FieldList = std::vector<std::string_view>;

const FieldList kTopFields{"format",  "version", "id",  "title",  "description", "effect",
                           "devices", "streams", "threads", "run", "expect",      "variants"};
const FieldList kDeviceFields{"index", "profile"};
const FieldList kStreamFields{"name", "device", "kind", "priority"};
const FieldList kThreadFields{"name", "device", "repeat", "workers", "ops"};
const FieldList kRunFields{"warmup", "iterations", "env", "timing"};
const FieldList kExpectFields{"id", "metric", "streams", "spans", "kinds", "device", "op", "value", "why", "key"};
const FieldList kVariantFields{"id", "title", "description", "set", "expect", "effect"};
const FieldList kAllOpFields{"op",  "name",  "stream",   "event",       "kernel", "grid",       "block",
                             "duration_us", "size", "shared_bytes", "kind", "bytes", "host", "dst_device", "ops"};
const std::vector<std::string_view> kCompareOps{"<", "<=", ">", ">=", "=="};

FieldList opFields(OpKind kind)
{
    FieldList f{"op", "name"};
    switch (kind) {
    case OpKind::Kernel:
        f.insert(f.end(), {"stream", "kernel", "grid", "block", "duration_us", "size", "shared_bytes"});
        break;
    case OpKind::Memcpy: f.insert(f.end(), {"stream", "kind", "bytes", "host", "dst_device"}); break;
    case OpKind::Memset: f.insert(f.end(), {"stream", "bytes"}); break;
    case OpKind::Record:
    case OpKind::Wait: f.insert(f.end(), {"stream", "event"}); break;
    case OpKind::HostFunc: f.insert(f.end(), {"stream", "duration_us"}); break;
    case OpKind::StreamSync: f.push_back("stream"); break;
    case OpKind::EventSync: f.push_back("event"); break;
    case OpKind::DeviceSync: break;
    case OpKind::HostWork: f.push_back("duration_us"); break;
    case OpKind::Graph: f.insert(f.end(), {"stream", "ops"}); break;
    case OpKind::Malloc:
    case OpKind::Free: f.push_back("bytes"); break;
    }
    return f;
}

std::vector<std::string> opKindNames()
{
    std::vector<std::string> names;
    for (OpKind k : {OpKind::Kernel, OpKind::Memcpy, OpKind::Memset, OpKind::Record, OpKind::Wait, OpKind::HostFunc,
                     OpKind::StreamSync, OpKind::EventSync, OpKind::DeviceSync, OpKind::HostWork, OpKind::Graph,
                     OpKind::Malloc, OpKind::Free})
        names.emplace_back(toString(k));
    return names;
}

std::vector<std::string> kernelKindNames()
{
    std::vector<std::string> names;
    for (KernelKind k : {KernelKind::Spin, KernelKind::Empty, KernelKind::Fma, KernelKind::Triad, KernelKind::Matmul,
                         KernelKind::Transpose, KernelKind::Reduce})
        names.emplace_back(toString(k));
    return names;
}

std::vector<std::string> copyKindNames()
{
    return {"h2d", "d2h", "d2d", "p2p"};
}

std::vector<std::string> streamKindNames()
{
    return {"legacy-default", "per-thread-default", "blocking", "non-blocking"};
}

bool isProblemSizeKernel(KernelKind k)
{
    return k == KernelKind::Fma || k == KernelKind::Triad || k == KernelKind::Matmul ||
           k == KernelKind::Transpose || k == KernelKind::Reduce;
}

// fma's size is iterations per thread, so its grid says how many threads there are; spin and empty have no size.
bool kernelNeedsGrid(KernelKind k)
{
    return k == KernelKind::Spin || k == KernelKind::Empty || k == KernelKind::Fma;
}

bool isGraphNodeKind(OpKind k)
{
    return k == OpKind::Kernel || k == OpKind::Memcpy || k == OpKind::Memset || k == OpKind::HostFunc;
}

// Ops that work in the stream itself and so must be issued from the stream's device. cudaStreamSynchronize is
// legal on any device's stream, so stream-sync is left out.
bool needsStreamOnThreadDevice(OpKind k)
{
    return k != OpKind::StreamSync;
}

// ---------------------------------------------------------------------------------------------------------------
// Document -> Scenario

class Reader {
public:
    Reader(const std::string& file, const ScenarioLimits& limits) : m_file(file), m_limits(limits) {}

    [[noreturn]] void fail(std::string path, std::string message) const
    {
        throw ReadFailure{Error{m_file, std::move(path), std::move(message)}};
    }

    // "format" and "version" first: a trace or a newer scenario gets that answer, not a list of unknown fields.
    void readHeader(const Json& root)
    {
        expectObject(root, "");
        const Json* format = find(root, "format");
        if (!format)
            fail("", "missing field \"format\": not a StreamScope scenario (expected \"format\": " +
                         jsonQuoted(kFormat) + ")");
        const std::string f = readString(*format, "/format");
        if (f != kFormat)
            fail("/format",
                 "not a StreamScope scenario: format is " + jsonQuoted(f) + ", expected " + jsonQuoted(kFormat));
        const Json* version = find(root, "version");
        if (!version)
            fail("", "missing field \"version\" (" + versionNote() + ")");
        const int64_t v = readInt(*version, "/version");
        if (v != kScenarioVersion)
            fail("/version", "unsupported version " + std::to_string(v) + " (" + versionNote() + ")");
        m_scenario.version = int(v);
    }

    ScenarioReadResult read(const Json& root)
    {
        readHeader(root);
        checkFields(root, "", kTopFields);
        m_scenario.id = optionalString(root, "id", "");
        m_scenario.title = optionalString(root, "title", "");
        m_scenario.description = optionalString(root, "description", "");
        m_scenario.effect = readEffect(root, "");
        readDevices(root);
        readStreams(root);
        readThreads(root);
        readRun(root);
        checkIssuedCount();
        if (const Json* e = find(root, "expect"))
            m_scenario.expect = readExpectations(*e, "/expect", streamNames());
        readVariants(root);
        warnUnrecordedEvents();
        // Document order: event warnings are found only after all ops are read.
        std::stable_sort(m_warnings.begin(), m_warnings.end(),
                         [](const PendingWarning& a, const PendingWarning& b) { return a.op < b.op; });
        std::vector<Warning> warnings;
        warnings.reserve(m_warnings.size());
        for (auto& w : m_warnings)
            warnings.push_back(std::move(w.warning));
        if (!m_devicesDeclared) {
            for (int index : m_usedDevices)
                m_scenario.devices.push_back(DeviceSpec{index, {}});
        }
        return ScenarioReadResult{std::move(m_scenario), std::move(warnings)};
    }

    // ---- values ----------------------------------------------------------------------------------------------

    static const Json* find(const Json& obj, const char* key)
    {
        const auto it = obj.find(key);
        return it == obj.end() ? nullptr : &*it;
    }

    void expectObject(const Json& v, const std::string& path) const
    {
        if (!v.is_object())
            fail(path, "expected an object, got " + typeName(v));
    }

    void expectArray(const Json& v, const std::string& path) const
    {
        if (!v.is_array())
            fail(path, "expected an array, got " + typeName(v));
    }

    std::string readString(const Json& v, const std::string& path) const
    {
        if (!v.is_string())
            fail(path, "expected a string, got " + typeName(v));
        return v.get<std::string>();
    }

    std::string readName(const Json& v, const std::string& path, std::string_view what) const
    {
        std::string s = readString(v, path);
        if (s.empty())
            fail(path, std::string(what) + " must not be empty");
        return s;
    }

    std::string optionalString(const Json& obj, const char* key, const std::string& path) const
    {
        const Json* v = find(obj, key);
        return v ? readString(*v, child(path, key)) : std::string();
    }

    int64_t readInt(const Json& v, const std::string& path) const
    {
        if (v.is_number_unsigned()) {
            if (v.get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max()))
                fail(path, "integer " + dumpJson(v) + " is too large");
            return int64_t(v.get<uint64_t>());
        }
        if (v.is_number_integer())
            return v.get<int64_t>();
        if (v.is_number_float()) {
            // Writers such as Python's json may spell 1e6 as a float; accept whole numbers.
            const double d = v.get<double>();
            if (std::trunc(d) == d && std::abs(d) < 9.0e18)
                return int64_t(d);
        }
        fail(path, "expected an integer, got " + typeName(v));
    }

    // An integer in [lo, hi]; the message names the field and the allowed range.
    int64_t readIntIn(const Json& v, const std::string& path, std::string_view field, int64_t lo, int64_t hi) const
    {
        const int64_t x = readInt(v, path);
        const bool unbounded = hi >= std::numeric_limits<int>::max();
        if (x < lo && unbounded)
            fail(path, std::string(field) + " must be at least " + std::to_string(lo) + ", got " + std::to_string(x));
        if (x > hi && unbounded)
            fail(path, std::string(field) + " must be at most " + std::to_string(hi) + ", got " + std::to_string(x));
        if (x < lo || x > hi)
            fail(path, std::string(field) + " must be between " + std::to_string(lo) + " and " + std::to_string(hi) +
                           ", got " + std::to_string(x));
        return x;
    }

    double readNumber(const Json& v, const std::string& path) const
    {
        if (!v.is_number())
            fail(path, "expected a number, got " + typeName(v));
        return v.get<double>();
    }

    bool readBool(const Json& v, const std::string& path) const
    {
        if (!v.is_boolean())
            fail(path, "expected true or false, got " + typeName(v));
        return v.get<bool>();
    }

    double readDuration(const Json& v, const std::string& path, bool positive) const
    {
        const double d = readNumber(v, path);
        if (positive && !(d > 0))
            fail(path, "duration_us must be greater than 0, got " + formatNumber(d));
        if (d < 0)
            fail(path, "duration_us must not be negative, got " + formatNumber(d));
        if (d > kMaxDurationUs)
            fail(path, "duration_us must be at most " + formatNumber(kMaxDurationUs) + " (one hour), got " +
                           formatNumber(d));
        return d;
    }

    int64_t readBytes(const Json& v, const std::string& path) const
    {
        const int64_t b = readInt(v, path);
        if (b < 0)
            fail(path, "bytes must not be negative, got " + std::to_string(b));
        if (b == 0)
            fail(path, "bytes must be at least 1");
        return b;
    }

    // Fields not in `allowed` are errors; a near miss gets a suggestion. `others` are fields that exist
    // elsewhere (another op kind), which gets a clearer message than "unknown".
    void checkFields(const Json& obj, const std::string& path, const FieldList& allowed,
                     const FieldList& others = {}, std::string_view owner = {}) const
    {
        for (const auto& item : obj.items()) {
            const std::string& key = item.key();
            if (std::find(allowed.begin(), allowed.end(), key) != allowed.end())
                continue;
            const std::string p = child(path, key);
            if (!owner.empty() && std::find(others.begin(), others.end(), key) != others.end())
                fail(p, "field " + jsonQuoted(key) + " does not apply to " + std::string(owner));
            fail(p, "unknown field " + jsonQuoted(key) + hint(key, allowed));
        }
    }

    void missing(const std::string& path, std::string_view field, std::string_view why = {}) const
    {
        fail(path,
             "missing field " + jsonQuoted(field) + (why.empty() ? std::string() : " (" + std::string(why) + ")"));
    }

    const Json& required(const Json& obj, const char* key, const std::string& path, std::string_view why = {}) const
    {
        const Json* v = find(obj, key);
        if (!v)
            missing(path, key, why);
        return *v;
    }

    // ---- devices ---------------------------------------------------------------------------------------------

    void readDevices(const Json& root)
    {
        const Json* devices = find(root, "devices");
        if (!devices)
            return;
        m_devicesDeclared = true;
        expectArray(*devices, "/devices");
        std::unordered_map<int, size_t> seen;
        for (size_t i = 0; i < devices->size(); ++i) {
            const std::string path = child("/devices", i);
            if (i >= size_t(m_limits.maxDevices))
                fail(path, "too many devices: the limit is " + std::to_string(m_limits.maxDevices));
            const Json& d = (*devices)[i];
            expectObject(d, path);
            checkFields(d, path, kDeviceFields);
            DeviceSpec spec;
            spec.index = readDeviceIndex(required(d, "index", path), child(path, "index"), "index");
            spec.profile = optionalString(d, "profile", path);
            if (auto [it, inserted] = seen.emplace(spec.index, i); !inserted)
                fail(child(path, "index"), "duplicate device index " + std::to_string(spec.index) + " (also at " +
                                               child("/devices", it->second) + ")");
            m_scenario.devices.push_back(std::move(spec));
        }
    }

    int readDeviceIndex(const Json& v, const std::string& path, std::string_view field) const
    {
        const int64_t index = readInt(v, path);
        if (index < 0)
            fail(path, std::string(field) + " must not be negative, got " + std::to_string(index));
        if (index >= m_limits.maxDevices)
            fail(path, "device " + std::to_string(index) + " is out of range: device indices go from 0 to " +
                           std::to_string(m_limits.maxDevices - 1));
        return int(index);
    }

    // A device named by a stream, thread or peer copy: declared when "devices" is given, else collected.
    int readDeviceRef(const Json& v, const std::string& path, std::string_view field)
    {
        const int index = readDeviceIndex(v, path, field);
        if (m_devicesDeclared) {
            if (!m_scenario.device(index))
                fail(path, "device " + std::to_string(index) + " is not declared in \"devices\"");
        } else {
            m_usedDevices.insert(index);
        }
        return index;
    }

    // ---- streams ---------------------------------------------------------------------------------------------

    void readStreams(const Json& root)
    {
        const Json* streams = find(root, "streams");
        if (!streams)
            return;
        expectArray(*streams, "/streams");
        std::unordered_map<int, size_t> legacyByDevice;
        for (size_t i = 0; i < streams->size(); ++i) {
            const std::string path = child("/streams", i);
            if (i >= size_t(m_limits.maxStreams))
                fail(path, "too many streams: the limit is " + std::to_string(m_limits.maxStreams));
            const Json& s = (*streams)[i];
            expectObject(s, path);
            checkFields(s, path, kStreamFields);
            StreamSpec spec;
            spec.name = readName(required(s, "name", path), child(path, "name"), "a stream's name");
            if (auto [it, inserted] = m_streamByName.emplace(spec.name, int(i)); !inserted)
                fail(child(path, "name"), "duplicate stream name " + jsonQuoted(spec.name) + " (also at " +
                                              child("/streams", size_t(it->second)) + ")");
            if (const Json* d = find(s, "device"))
                spec.device = readDeviceRef(*d, child(path, "device"), "device");
            else
                spec.device = readDeviceRef(Json(0), child(path, "device"), "device");
            if (const Json* k = find(s, "kind")) {
                const std::string kind = readString(*k, child(path, "kind"));
                const auto parsed = streamKindFromString(kind);
                if (!parsed)
                    fail(child(path, "kind"),
                         "unknown stream kind " + jsonQuoted(kind) + hint(kind, streamKindNames()));
                spec.kind = *parsed;
            }
            if (const Json* p = find(s, "priority"))
                spec.priority = int(readIntIn(*p, child(path, "priority"), "priority", kMinPriority, 0));
            if (spec.kind == StreamKind::LegacyDefault) {
                if (auto [it, inserted] = legacyByDevice.emplace(spec.device, i); !inserted)
                    fail(child(path, "kind"),
                         "device " + std::to_string(spec.device) + " already has a legacy-default stream (" +
                             jsonQuoted(m_scenario.streams[it->second].name) +
                             "): there is one NULL stream per device");
            }
            m_scenario.streams.push_back(std::move(spec));
        }
    }

    // A few names are listed; thousands would bury the message.
    static std::string streamHint(const std::string& name, const std::set<std::string>& names)
    {
        if (names.empty())
            return " (\"streams\" declares none)";
        return hint(name, names, names.size() <= 8);
    }

    std::set<std::string> streamNames() const
    {
        std::set<std::string> names;
        for (const auto& s : m_scenario.streams)
            names.insert(s.name);
        return names;
    }

    // ---- threads and ops -------------------------------------------------------------------------------------

    void readThreads(const Json& root)
    {
        const Json& threads = required(root, "threads", "", "a scenario needs at least one host thread");
        expectArray(threads, "/threads");
        if (threads.empty())
            fail("/threads", "a scenario needs at least one host thread");
        std::unordered_map<std::string, size_t> names;
        int64_t hostThreads = 0;
        for (size_t i = 0; i < threads.size(); ++i) {
            const std::string path = child("/threads", i);
            const Json& t = threads[i];
            expectObject(t, path);
            checkFields(t, path, kThreadFields);
            ThreadSpec spec;
            spec.name = readName(required(t, "name", path), child(path, "name"), "a thread's name");
            if (auto [it, inserted] = names.emplace(spec.name, i); !inserted)
                fail(child(path, "name"), "duplicate thread name " + jsonQuoted(spec.name) + " (also at " +
                                              child("/threads", it->second) + ")");
            if (const Json* d = find(t, "device"))
                spec.device = readDeviceRef(*d, child(path, "device"), "device");
            else
                spec.device = readDeviceRef(Json(0), child(path, "device"), "device");
            if (const Json* r = find(t, "repeat"))
                spec.repeat = int(readIntIn(*r, child(path, "repeat"), "repeat", 1, std::numeric_limits<int>::max()));
            if (const Json* w = find(t, "workers"))
                spec.workers =
                    int(readIntIn(*w, child(path, "workers"), "workers", 1, std::numeric_limits<int>::max()));
            hostThreads += spec.workers;
            if (hostThreads > m_limits.maxThreads)
                fail(find(t, "workers") ? child(path, "workers") : path,
                     "too many host threads: " + std::to_string(hostThreads) +
                         " (pool workers included); the limit is " + std::to_string(m_limits.maxThreads));
            if (const Json* ops = find(t, "ops")) {
                const std::string opsPath = child(path, "ops");
                expectArray(*ops, opsPath);
                spec.ops.reserve(ops->size());
                for (size_t o = 0; o < ops->size(); ++o)
                    spec.ops.push_back(readOp((*ops)[o], child(opsPath, o), spec, nullptr));
            }
            m_scenario.threads.push_back(std::move(spec));
        }
    }

    void countOp(const std::string& path)
    {
        if (++m_opCount > m_limits.maxOps)
            fail(path, "too many operations: the limit is " + std::to_string(m_limits.maxOps) +
                           " in all threads, graph nodes included");
    }

    Op readOp(const Json& v, const std::string& path, const ThreadSpec& thread, const Op* graph)
    {
        expectObject(v, path);
        const Json& kindValue = required(v, "op", path);
        const std::string kindName = readString(kindValue, child(path, "op"));
        const auto kind = opKindFromString(kindName);
        if (!kind)
            fail(child(path, "op"), "unknown op " + jsonQuoted(kindName) + hint(kindName, opKindNames()));
        if (graph && *kind == OpKind::Graph)
            fail(child(path, "op"), "graphs do not nest: a graph node is a kernel, memcpy, memset or host-func op");
        if (graph && !isGraphNodeKind(*kind))
            fail(child(path, "op"), "a graph node cannot be a " + kindName +
                                        " op: graph nodes are kernel, memcpy, memset and host-func ops");
        countOp(path);

        Op op;
        op.kind = *kind;
        checkFields(v, path, opFields(op.kind), kAllOpFields, "a " + kindName + " op");
        op.name = optionalString(v, "name", path);

        switch (op.kind) {
        case OpKind::Kernel: readKernel(v, path, op, thread, graph); break;
        case OpKind::Memcpy: readMemcpy(v, path, op, thread, graph); break;
        case OpKind::Memset:
            readStream(v, path, op, thread, graph);
            op.bytes = readBytes(required(v, "bytes", path), child(path, "bytes"));
            break;
        case OpKind::Record:
        case OpKind::Wait:
            readStream(v, path, op, thread, graph);
            readEvent(v, path, op);
            break;
        case OpKind::HostFunc:
            readStream(v, path, op, thread, graph);
            if (const Json* d = find(v, "duration_us"))
                op.durationUs = readDuration(*d, child(path, "duration_us"), false);
            break;
        case OpKind::StreamSync: readStream(v, path, op, thread, graph); break;
        case OpKind::EventSync: readEvent(v, path, op); break;
        case OpKind::DeviceSync: break;
        case OpKind::HostWork:
            op.durationUs = readDuration(required(v, "duration_us", path), child(path, "duration_us"), false);
            break;
        case OpKind::Graph: readGraph(v, path, op, thread); break;
        case OpKind::Malloc: op.bytes = readBytes(required(v, "bytes", path), child(path, "bytes")); break;
        case OpKind::Free:
            if (const Json* b = find(v, "bytes"))
                op.bytes = readBytes(*b, child(path, "bytes"));
            break;
        }
        return op;
    }

    void readStream(const Json& v, const std::string& path, Op& op, const ThreadSpec& thread, const Op* graph)
    {
        const Json* s = find(v, "stream");
        const std::string p = child(path, "stream");
        if (graph) {
            // Nodes are captured from the graph's stream; naming another one would suggest a fork that isn't there.
            if (s) {
                const std::string name = readString(*s, p);
                if (name != graph->stream)
                    fail(p, "a graph node runs in its graph's stream " + jsonQuoted(graph->stream) + ", not " +
                                jsonQuoted(name) + " (leave \"stream\" out to inherit it)");
            }
            op.stream = graph->stream;
            op.streamIndex = graph->streamIndex;
            return;
        }
        if (!s)
            missing(path, "stream");
        op.stream = readString(*s, p);
        const auto it = m_streamByName.find(op.stream);
        if (it == m_streamByName.end())
            fail(p, "unknown stream " + jsonQuoted(op.stream) + streamHint(op.stream, streamNames()));
        op.streamIndex = it->second;
        const StreamSpec& stream = m_scenario.streams[size_t(op.streamIndex)];
        if (needsStreamOnThreadDevice(op.kind) && stream.device != thread.device)
            fail(p,
                 "stream " + jsonQuoted(stream.name) + " is on device " + std::to_string(stream.device) +
                     " but thread " + jsonQuoted(thread.name) + " is bound to device " + std::to_string(thread.device));
    }

    void readEvent(const Json& v, const std::string& path, Op& op)
    {
        const std::string p = child(path, "event");
        op.event = readName(required(v, "event", path), p, "an event's name");
        auto [it, inserted] = m_eventByName.emplace(op.event, int(m_scenario.events.size()));
        if (inserted) {
            m_scenario.events.push_back(op.event);
            m_eventRecorded.push_back(false);
        }
        op.eventIndex = it->second;
        if (op.kind == OpKind::Record)
            m_eventRecorded[size_t(op.eventIndex)] = true;
        else
            m_eventUses.push_back({p, op.eventIndex, op.kind, m_opCount});
    }

    Dim3 readDim(const Json& v, const std::string& path, std::string_view field, bool isGrid) const
    {
        std::vector<std::pair<const Json*, std::string>> parts;
        if (v.is_array()) {
            if (v.empty() || v.size() > 3)
                fail(path, std::string(field) + " must have 1 to 3 dimensions, got " + std::to_string(v.size()));
            for (size_t i = 0; i < v.size(); ++i)
                parts.emplace_back(&v[i], child(path, i));
        } else if (v.is_number()) {
            parts.emplace_back(&v, path);
        } else {
            fail(path, "expected an integer or an array of 1 to 3 integers, got " + typeName(v));
        }
        static constexpr const char* kAxis[] = {"x", "y", "z"};
        uint32_t dims[3] = {1, 1, 1};
        for (size_t i = 0; i < parts.size(); ++i) {
            const int64_t n = readInt(*parts[i].first, parts[i].second);
            if (n == 0)
                fail(parts[i].second, std::string(field) + " must not be zero");
            if (n < 0)
                fail(parts[i].second, std::string(field) + " must be positive, got " + std::to_string(n));
            const int64_t max = isGrid ? (i == 0 ? kMaxGridX : kMaxGridYZ) : (i == 2 ? kMaxBlockZ : kMaxBlockThreads);
            if (n > max)
                fail(parts[i].second, std::string(field) + "." + kAxis[i] + " must be at most " + std::to_string(max) +
                                          " (a CUDA limit), got " + std::to_string(n));
            dims[i] = uint32_t(n);
        }
        return Dim3{dims[0], dims[1], dims[2]};
    }

    void readKernel(const Json& v, const std::string& path, Op& op, const ThreadSpec& thread, const Op* graph)
    {
        readStream(v, path, op, thread, graph);
        std::string kernelName = "spin";
        if (const Json* k = find(v, "kernel")) {
            kernelName = readString(*k, child(path, "kernel"));
            const auto parsed = kernelKindFromString(kernelName);
            if (!parsed)
                fail(child(path, "kernel"),
                     "unknown kernel " + jsonQuoted(kernelName) + hint(kernelName, kernelKindNames()));
            op.kernel = *parsed;
        }
        if (const Json* g = find(v, "grid")) {
            op.grid = readDim(*g, child(path, "grid"), "grid", true);
            op.gridGiven = true;
        } else if (kernelNeedsGrid(op.kernel)) {
            missing(path, "grid", "a " + kernelName + " kernel needs a grid");
        }
        if (const Json* b = find(v, "block")) {
            op.block = readDim(*b, child(path, "block"), "block", false);
            if (op.block.count() > kMaxBlockThreads)
                fail(child(path, "block"), "block has " + std::to_string(op.block.count()) +
                                               " threads; CUDA allows at most 1024 per block");
        }
        if (op.kernel == KernelKind::Spin) {
            op.durationUs =
                readDuration(required(v, "duration_us", path, "a spin kernel runs each block for duration_us"),
                             child(path, "duration_us"), true);
        } else if (find(v, "duration_us")) {
            fail(child(path, "duration_us"), "\"duration_us\" applies only to spin kernels (a " + kernelName +
                                                 " kernel takes the time its work takes)");
        }
        if (isProblemSizeKernel(op.kernel)) {
            op.size = readIntIn(required(v, "size", path, "a " + kernelName + " kernel needs a problem size"),
                                child(path, "size"), "size", 1, std::numeric_limits<int64_t>::max());
        } else if (find(v, "size")) {
            fail(child(path, "size"), "\"size\" applies only to fma, triad, matmul, transpose and reduce kernels");
        }
        if (const Json* s = find(v, "shared_bytes")) {
            op.sharedBytes = readInt(*s, child(path, "shared_bytes"));
            if (op.sharedBytes < 0)
                fail(child(path, "shared_bytes"), "shared_bytes must not be negative, got " +
                                                      std::to_string(op.sharedBytes));
        }
    }

    void readMemcpy(const Json& v, const std::string& path, Op& op, const ThreadSpec& thread, const Op* graph)
    {
        readStream(v, path, op, thread, graph);
        const std::string kindPath = child(path, "kind");
        const std::string kind = readString(required(v, "kind", path, "h2d, d2h, d2d or p2p"), kindPath);
        const auto parsed = copyKindFromString(kind);
        if (!parsed)
            fail(kindPath, "unknown copy kind " + jsonQuoted(kind) + hint(kind, copyKindNames()));
        op.copy = *parsed;
        op.bytes = readBytes(required(v, "bytes", path), child(path, "bytes"));
        const bool hostSide = op.copy == CopyKind::H2D || op.copy == CopyKind::D2H;
        if (const Json* h = find(v, "host")) {
            const std::string hostPath = child(path, "host");
            if (!hostSide)
                fail(hostPath, "\"host\" applies only to h2d and d2h copies");
            const std::string host = readString(*h, hostPath);
            if (host == "pageable") {
                op.pinned = false;
                warn(hostPath, "an async copy from pageable memory runs synchronously: the host thread blocks and "
                               "the copy cannot overlap with kernels");
            } else if (host != "pinned") {
                fail(hostPath, "\"host\" must be \"pinned\" or \"pageable\", got " + jsonQuoted(host));
            }
        }
        if (op.copy == CopyKind::P2P) {
            const std::string dstPath = child(path, "dst_device");
            op.dstDevice = readDeviceRef(required(v, "dst_device", path, "a p2p copy needs a destination device"),
                                         dstPath, "dst_device");
            const int src = m_scenario.streams[size_t(op.streamIndex)].device;
            if (op.dstDevice == src)
                fail(dstPath, "a p2p copy needs a destination other than its stream's device " + std::to_string(src));
        } else if (find(v, "dst_device")) {
            fail(child(path, "dst_device"), "\"dst_device\" applies only to p2p copies");
        }
    }

    void readGraph(const Json& v, const std::string& path, Op& op, const ThreadSpec& thread)
    {
        readStream(v, path, op, thread, nullptr);
        const std::string nodesPath = child(path, "ops");
        const Json& nodes = required(v, "ops", path, "the graph's nodes");
        expectArray(nodes, nodesPath);
        if (nodes.empty())
            fail(nodesPath, "a graph needs at least one node");
        op.ops.reserve(nodes.size());
        for (size_t i = 0; i < nodes.size(); ++i)
            op.ops.push_back(readOp(nodes[i], child(nodesPath, i), thread, &op));
    }

    // ---- run -------------------------------------------------------------------------------------------------

    void readRun(const Json& root)
    {
        const Json* run = find(root, "run");
        if (!run)
            return;
        expectObject(*run, "/run");
        checkFields(*run, "/run", kRunFields);
        RunSettings& settings = m_scenario.run;
        if (const Json* w = find(*run, "warmup"))
            settings.warmup = int(readIntIn(*w, "/run/warmup", "warmup", 0, std::numeric_limits<int>::max()));
        if (const Json* i = find(*run, "iterations"))
            settings.iterations =
                int(readIntIn(*i, "/run/iterations", "iterations", 1, std::numeric_limits<int>::max()));
        if (const Json* t = find(*run, "timing")) {
            if (!t->is_string())
                fail("/run/timing", "expected a string (auto, cupti, events or both), got " + typeName(*t));
            const auto mode = timingModeFromString(t->get<std::string>());
            if (!mode)
                fail("/run/timing", "unknown timing " + jsonQuoted(t->get<std::string>()) +
                                        ": expected auto, cupti, events or both");
            settings.timing = *mode;
        }
        if (const Json* env = find(*run, "env")) {
            expectObject(*env, "/run/env");
            for (const auto& item : env->items()) {
                const std::string& name = item.key();
                const std::string p = child("/run/env", name);
                if (name.empty() || name.find('=') != std::string::npos || name.find('\0') != std::string::npos)
                    fail(p, "not an environment variable name: " + jsonQuoted(name));
                std::string value;
                if (item.value().is_string())
                    value = item.value().get<std::string>();
                else if (item.value().is_number_integer())
                    value = std::to_string(readInt(item.value(), p));
                else
                    fail(p, "expected a string or an integer, got " + typeName(item.value()));
                if (value.find('\0') != std::string::npos)
                    fail(p, "an environment value cannot hold a NUL character");
                if (name == "CUDA_DEVICE_MAX_CONNECTIONS") {
                    int64_t n = 0;
                    if (!parseDecimal(value, n) || n < 1 || n > kMaxConnections)
                        fail(p, "CUDA_DEVICE_MAX_CONNECTIONS must be an integer from 1 to " +
                                    std::to_string(kMaxConnections) + ", got " + jsonQuoted(value));
                }
                settings.env[name] = std::move(value);
            }
        }
    }

    // Same count as countOperations() (graph nodes and repeats included; workers share the repeat tasks), plus
    // the warm-up iterations, in arithmetic that saturates instead of overflowing on hostile counts.
    void checkIssuedCount() const
    {
        int64_t perIteration = 0;
        for (const auto& t : m_scenario.threads) {
            int64_t perPass = 0;
            for (const auto& op : t.ops)
                perPass = saturatingAdd(perPass, 1 + int64_t(op.ops.size()));
            // A repetition without ops still costs the runner a pass: counted as one, so that a huge repeat of
            // nothing cannot keep a run busy for hours.
            perPass = std::max<int64_t>(perPass, 1);
            perIteration = saturatingAdd(perIteration, saturatingMul(perPass, t.repeat));
        }
        const int64_t iterations = int64_t(m_scenario.run.iterations) + m_scenario.run.warmup;
        const int64_t issued = saturatingMul(perIteration, iterations);
        if (issued > m_limits.maxIssued) {
            const std::string count = issued == std::numeric_limits<int64_t>::max() ? std::string("more than 2^63")
                                                                                     : std::to_string(issued);
            fail("", "the run would issue " + count +
                         " operations (ops x repeat x (warm-up + iterations)); the limit is " +
                         std::to_string(m_limits.maxIssued));
        }
    }

    // ---- expectations ----------------------------------------------------------------------------------------

    std::vector<std::string> readStringList(const Json& v, const std::string& path) const
    {
        expectArray(v, path);
        std::vector<std::string> out;
        out.reserve(v.size());
        for (size_t i = 0; i < v.size(); ++i)
            out.push_back(readString(v[i], child(path, i)));
        return out;
    }

    Expectation readExpectation(const Json& v, const std::string& path, const std::set<std::string>& streams) const
    {
        expectObject(v, path);
        checkFields(v, path, kExpectFields);
        Expectation e;
        e.id = optionalString(v, "id", path);
        e.metric = readName(required(v, "metric", path), child(path, "metric"), "metric");
        if (const Json* s = find(v, "streams"))
            e.streams = readStringList(*s, child(path, "streams"));
        if (const Json* s = find(v, "spans"))
            e.spans = readStringList(*s, child(path, "spans"));
        if (const Json* k = find(v, "kinds"))
            e.kinds = readStringList(*k, child(path, "kinds"));
        if (const Json* d = find(v, "device"))
            e.device = int(readIntIn(*d, child(path, "device"), "device", 0, m_limits.maxDevices - 1));
        if (const Json* o = find(v, "op")) {
            e.op = readString(*o, child(path, "op"));
            if (std::find(kCompareOps.begin(), kCompareOps.end(), e.op) == kCompareOps.end())
                fail(child(path, "op"),
                     "unknown comparison " + jsonQuoted(e.op) + " (one of: " + joinQuoted(kCompareOps) + ")");
        }
        e.value =
            readNumber(required(v, "value", path, "the number the metric is compared with"), child(path, "value"));
        e.why = optionalString(v, "why", path);
        if (const Json* k = find(v, "key"))
            e.key = readBool(*k, child(path, "key"));
        if (const std::string problem = validateExpectation(e); !problem.empty())
            fail(path, problem);
        for (size_t i = 0; i < e.streams.size(); ++i) {
            if (!streams.count(e.streams[i]))
                fail(child(child(path, "streams"), i),
                     "unknown stream " + jsonQuoted(e.streams[i]) + streamHint(e.streams[i], streams));
        }
        return e;
    }

    std::vector<Expectation> readExpectations(const Json& v, const std::string& path,
                                              const std::set<std::string>& streams) const
    {
        expectArray(v, path);
        std::vector<Expectation> out;
        std::unordered_map<std::string, size_t> ids;
        for (size_t i = 0; i < v.size(); ++i) {
            const std::string p = child(path, i);
            out.push_back(readExpectation(v[i], p, streams));
            const std::string& id = out.back().id;
            if (id.empty())
                continue;
            if (auto [it, inserted] = ids.emplace(id, i); !inserted)
                fail(child(p, "id"), "duplicate expectation id " + jsonQuoted(id) + " (also at " +
                                         child(path, it->second) + ")");
        }
        return out;
    }

    // ---- variants --------------------------------------------------------------------------------------------

    // Checks that each key of a variant's "set" is a JSON pointer a variant may assign. Whether the target's
    // parent exists is known only when the variant is applied (an earlier assignment may create it).
    void checkSetPointers(const Json& set, const std::string& setPath) const
    {
        for (const auto& item : set.items()) {
            const std::string& pointer = item.key();
            const std::string p = child(setPath, pointer);
            if (pointer.empty())
                fail(p, "a variant cannot replace the whole scenario; set its parts (\"/threads/0/repeat\")");
            try {
                const Json::json_pointer ptr(pointer);
                (void)ptr;
            } catch (const Json::exception& e) {
                fail(p, "not a JSON pointer: " + jsonQuoted(pointer) + " (" + plainMessage(e.what()) + ")");
            }
            if (pointer == "/variants" || pointer.starts_with("/variants/"))
                fail(p, "a variant cannot change the variants");
        }
    }

    // Stream names an expectation of this variant may use: the scenario's, and those its "set" brings in.
    std::set<std::string> variantStreamNames(const Json& set) const
    {
        std::set<std::string> names = streamNames();
        std::vector<const Json*> pending;
        for (const auto& item : set.items()) {
            if (!item.key().starts_with("/streams"))
                continue;
            if (item.key().ends_with("/name") && item.value().is_string())
                names.insert(item.value().get<std::string>());
            pending.push_back(&item.value());
        }
        while (!pending.empty()) {
            const Json* v = pending.back();
            pending.pop_back();
            if (v->is_object()) {
                if (const Json* n = find(*v, "name"); n && n->is_string())
                    names.insert(n->get<std::string>());
            }
            if (v->is_array()) {
                for (const auto& e : *v)
                    pending.push_back(&e);
            }
        }
        return names;
    }

    // "effect": the id of a diagnostic rule.
    std::string readEffect(const Json& object, const std::string& path)
    {
        const std::string effect = optionalString(object, "effect", path);
        if (effect.empty() || findDiagnosticRule(effect))
            return effect;
        std::vector<std::string> ids;
        for (const auto& r : diagnosticRules())
            ids.emplace_back(r.id);
        fail(child(path, "effect"), "unknown effect " + jsonQuoted(effect) + hint(effect, ids)
                                        + ": an effect is the id of an analysis rule (streamscope-cli analyze)");
    }

    void readVariants(const Json& root)
    {
        const Json* variants = find(root, "variants");
        if (!variants)
            return;
        expectArray(*variants, "/variants");
        std::unordered_map<std::string, size_t> ids;
        for (size_t i = 0; i < variants->size(); ++i) {
            const std::string path = child("/variants", i);
            const Json& v = (*variants)[i];
            expectObject(v, path);
            checkFields(v, path, kVariantFields);
            Variant variant;
            variant.id = readName(required(v, "id", path), child(path, "id"), "a variant's id");
            if (auto [it, inserted] = ids.emplace(variant.id, i); !inserted)
                fail(child(path, "id"), "duplicate variant id " + jsonQuoted(variant.id) + " (also at " +
                                            child("/variants", it->second) + ")");
            variant.title = optionalString(v, "title", path);
            variant.description = optionalString(v, "description", path);
            variant.effect = readEffect(v, path);
            const Json* set = find(v, "set");
            if (set) {
                expectObject(*set, child(path, "set"));
                checkSetPointers(*set, child(path, "set"));
                variant.patchJson = dumpJson(*set);
            }
            if (const Json* e = find(v, "expect")) {
                variant.expect =
                    readExpectations(*e, child(path, "expect"), set ? variantStreamNames(*set) : streamNames());
                variant.hasExpect = true;
            }
            m_scenario.variants.push_back(std::move(variant));
        }
    }

    // ---- warnings --------------------------------------------------------------------------------------------

    void warn(std::string path, std::string message, int64_t op = -1)
    {
        m_warnings.push_back({op < 0 ? m_opCount : op, Warning{m_file, std::move(path), std::move(message)}});
    }

    // CUDA makes a wait on a never-recorded event a no-op; legal, but almost always a mistake in a scenario.
    void warnUnrecordedEvents()
    {
        for (const auto& use : m_eventUses) {
            if (m_eventRecorded[size_t(use.event)])
                continue;
            const std::string& name = m_scenario.events[size_t(use.event)];
            if (use.kind == OpKind::Wait)
                warn(use.path, "event " + jsonQuoted(name) + " is waited on but never recorded: the wait does nothing",
                     use.op);
            else
                warn(use.path,
                     "event " + jsonQuoted(name) + " is synchronized on but never recorded: the sync returns at once",
                     use.op);
        }
    }

private:
    struct EventUse {
        std::string path;
        int event = -1;
        OpKind kind = OpKind::Wait;
        int64_t op = 0; // ordinal of the op, for document order
    };

    struct PendingWarning {
        int64_t op = 0;
        Warning warning;
    };

    const std::string& m_file;
    const ScenarioLimits& m_limits;
    Scenario m_scenario;
    std::vector<PendingWarning> m_warnings;
    bool m_devicesDeclared = false;
    std::set<int> m_usedDevices;
    std::unordered_map<std::string, int> m_streamByName;
    std::unordered_map<std::string, int> m_eventByName;
    std::vector<bool> m_eventRecorded;
    std::vector<EventUse> m_eventUses;
    int64_t m_opCount = 0;
};

// ---------------------------------------------------------------------------------------------------------------
// Variants

// The index of the variant with this id in the document, or -1.
int findVariant(const Json& root, const std::string& id, std::vector<std::string>& known)
{
    const auto it = root.find("variants");
    if (it == root.end() || !it->is_array())
        return -1;
    int found = -1;
    for (size_t i = 0; i < it->size(); ++i) {
        const Json& v = (*it)[i];
        if (!v.is_object())
            continue;
        const auto idIt = v.find("id");
        if (idIt == v.end() || !idIt->is_string())
            continue;
        known.push_back(idIt->get<std::string>());
        if (found < 0 && known.back() == id)
            found = int(i);
    }
    return found;
}

bool isArrayIndex(const std::string& token, size_t& index)
{
    if (token.empty() || (token.size() > 1 && token[0] == '0'))
        return false;
    int64_t n = 0;
    if (!parseDecimal(token, n) || n < 0)
        return false;
    index = size_t(n);
    return true;
}

// Replaces the value at the rest of the tokens under `node`, for every element or member where a token is "*";
// only values that exist are replaced. Without a value, only counts the matches. Recursion is bounded by the
// document's depth.
void assignWhereExists(Json& node, const std::vector<std::string>& tokens, size_t i, const Json* value, size_t& count)
{
    const auto visit = [&](Json& next) {
        if (i + 1 == tokens.size()) {
            if (value)
                next = *value;
            ++count;
        } else {
            assignWhereExists(next, tokens, i + 1, value, count);
        }
    };
    const std::string& token = tokens[i];
    size_t index = 0;
    if (token == "*") {
        if (node.is_structured()) {
            for (auto& element : node)
                visit(element);
        }
    } else if (node.is_object()) {
        if (const auto it = node.find(token); it != node.end())
            visit(*it);
    } else if (node.is_array() && isArrayIndex(token, index) && index < node.size()) {
        visit(node[index]);
    }
}

// Applies each "set" assignment of the variant to the document. Keys are applied in sorted order, which puts a
// parent's assignment before its children's.
void applyVariant(Json& root, size_t variantIndex, const std::string& file, const ScenarioLimits& limits)
{
    const std::string path = "/variants/" + std::to_string(variantIndex);
    const Json& variant = root["variants"][variantIndex];
    const auto setIt = variant.find("set");
    if (setIt == variant.end())
        return;
    const std::string setPath = path + "/set";
    auto fail = [&file](std::string p, std::string message) {
        throw ReadFailure{Error{file, std::move(p), std::move(message)}};
    };
    if (!setIt->is_object())
        fail(setPath, "expected an object, got " + typeName(*setIt));
    // A copy: `variant` points into the document that the assignments change.
    const Json set = *setIt;
    for (const auto& item : set.items()) {
        const std::string& pointer = item.key();
        const std::string p = child(setPath, pointer);
        if (pointer.empty())
            fail(p, "a variant cannot replace the whole scenario; set its parts (\"/threads/0/repeat\")");
        if (pointer == "/variants" || pointer.starts_with("/variants/"))
            fail(p, "a variant cannot change the variants");
        try {
            const Json::json_pointer ptr(pointer);
            std::vector<std::string> tokens;
            for (Json::json_pointer rest = ptr; !rest.empty(); rest.pop_back())
                tokens.push_back(rest.back());
            std::reverse(tokens.begin(), tokens.end());
            if (tokens.front() == "*")
                fail(p, "\"*\" cannot stand for a top-level field (it would reach the variants)");
            if (std::find(tokens.begin(), tokens.end(), "*") != tokens.end()) {
                // "*" stands for every element (or member): one assignment for a whole list of ops or streams.
                size_t count = 0;
                assignWhereExists(root, tokens, 0, nullptr, count);
                if (count == 0)
                    fail(p, "cannot set " + jsonQuoted(pointer) +
                                ": it matches nothing (a \"*\" assignment replaces only values that exist)");
                // Each match gets a copy: a large value times many matches must not grow the scenario unbounded.
                const size_t valueBytes = dumpJson(item.value()).size();
                if (valueBytes > limits.maxBytes / count)
                    fail(p, "cannot set " + jsonQuoted(pointer) + ": " + std::to_string(count) + " copies of " +
                                std::to_string(valueBytes) + " bytes exceed the limit of " +
                                std::to_string(limits.maxBytes) + " bytes");
                count = 0;
                assignWhereExists(root, tokens, 0, &item.value(), count);
                continue;
            }
            const Json::json_pointer parentPtr = ptr.parent_pointer();
            const std::string last = ptr.back();
            if (!root.contains(parentPtr))
                fail(p,
                     "cannot set " + jsonQuoted(pointer) + ": " + jsonQuoted(parentPtr.to_string()) +
                         " does not exist");
            Json& parent = root.at(parentPtr);
            if (parent.is_object()) {
                parent[last] = item.value();
            } else if (parent.is_array()) {
                size_t index = 0;
                if (last == "-") {
                    parent.push_back(item.value());
                } else if (!isArrayIndex(last, index)) {
                    fail(p,
                         "cannot set " + jsonQuoted(pointer) + ": " + jsonQuoted(last) +
                             " is not an index of the array " + jsonQuoted(parentPtr.to_string()));
                } else if (index < parent.size()) {
                    parent[index] = item.value();
                } else if (index == parent.size()) {
                    parent.push_back(item.value());
                } else {
                    fail(p,
                         "cannot set " + jsonQuoted(pointer) + ": the array " + jsonQuoted(parentPtr.to_string()) +
                             " has " + std::to_string(parent.size()) + " elements");
                }
            } else {
                fail(p, "cannot set " + jsonQuoted(pointer) + ": " + jsonQuoted(parentPtr.to_string()) + " is " +
                            typeName(parent) + ", not an object or array");
            }
        } catch (const Json::exception& e) {
            fail(p, "not a usable JSON pointer: " + jsonQuoted(pointer) + " (" + plainMessage(e.what()) + ")");
        }
    }
}

// ---------------------------------------------------------------------------------------------------------------
// Scenario -> JSON

OrderedJson dimToJson(const Dim3& d)
{
    if (d.y == 1 && d.z == 1)
        return d.x;
    if (d.z == 1)
        return OrderedJson::array({d.x, d.y});
    return OrderedJson::array({d.x, d.y, d.z});
}

OrderedJson opToJson(const Op& op, const Op* graph)
{
    OrderedJson j;
    j["op"] = toString(op.kind);
    if (!op.name.empty())
        j["name"] = op.name;
    // Graph nodes inherit the graph's stream; a different one is written so that validation reports it.
    const auto writeStream = [&] {
        if (!graph || (!op.stream.empty() && op.stream != graph->stream))
            j["stream"] = op.stream;
    };
    switch (op.kind) {
    case OpKind::Kernel:
        writeStream();
        j["kernel"] = toString(op.kernel);
        if (op.gridGiven || kernelNeedsGrid(op.kernel))
            j["grid"] = dimToJson(op.grid);
        if (op.block != Dim3{256, 1, 1})
            j["block"] = dimToJson(op.block);
        if (op.kernel == KernelKind::Spin)
            j["duration_us"] = op.durationUs;
        if (isProblemSizeKernel(op.kernel))
            j["size"] = op.size;
        if (op.sharedBytes != 0)
            j["shared_bytes"] = op.sharedBytes;
        break;
    case OpKind::Memcpy:
        writeStream();
        j["kind"] = toString(op.copy);
        j["bytes"] = op.bytes;
        if (!op.pinned && (op.copy == CopyKind::H2D || op.copy == CopyKind::D2H))
            j["host"] = "pageable";
        if (op.copy == CopyKind::P2P)
            j["dst_device"] = op.dstDevice;
        break;
    case OpKind::Memset:
        writeStream();
        j["bytes"] = op.bytes;
        break;
    case OpKind::Record:
    case OpKind::Wait:
        writeStream();
        j["event"] = op.event;
        break;
    case OpKind::HostFunc:
        writeStream();
        if (op.durationUs != 0)
            j["duration_us"] = op.durationUs;
        break;
    case OpKind::StreamSync: writeStream(); break;
    case OpKind::EventSync: j["event"] = op.event; break;
    case OpKind::DeviceSync: break;
    case OpKind::HostWork: j["duration_us"] = op.durationUs; break;
    case OpKind::Graph: {
        writeStream();
        OrderedJson nodes = OrderedJson::array();
        for (const auto& node : op.ops)
            nodes.push_back(opToJson(node, &op));
        j["ops"] = std::move(nodes);
        break;
    }
    case OpKind::Malloc: j["bytes"] = op.bytes; break;
    case OpKind::Free:
        if (op.bytes != 0)
            j["bytes"] = op.bytes;
        break;
    }
    return j;
}

OrderedJson expectationJson(const Expectation& e)
{
    OrderedJson j;
    if (!e.id.empty())
        j["id"] = e.id;
    j["metric"] = e.metric;
    if (!e.streams.empty())
        j["streams"] = e.streams;
    if (!e.spans.empty())
        j["spans"] = e.spans;
    if (!e.kinds.empty())
        j["kinds"] = e.kinds;
    if (e.device != -1)
        j["device"] = e.device;
    j["op"] = e.op;
    j["value"] = e.value;
    if (!e.why.empty())
        j["why"] = e.why;
    if (e.key)
        j["key"] = true;
    return j;
}

OrderedJson expectationsJson(const std::vector<Expectation>& list)
{
    OrderedJson a = OrderedJson::array();
    for (const auto& e : list)
        a.push_back(expectationJson(e));
    return a;
}

std::string dumpOrdered(const OrderedJson& j, int indent)
{
    return j.dump(indent, ' ', false, OrderedJson::error_handler_t::replace);
}

} // namespace

// -------------------------------------------------------------------------------------------------------------------

Result<ScenarioReadResult> parseScenario(const std::string& text, const std::string& file, const std::string& variant,
                                         const ScenarioLimits& limits)
{
    try {
        if (text.size() > limits.maxBytes)
            return Error{file, "",
                         "the scenario is " + std::to_string(text.size()) + " bytes; the limit is " +
                             std::to_string(limits.maxBytes)};
        Json root = parseJsonText(text, file, limits.maxDepth);
        if (variant.empty())
            return Reader(file, limits).read(root);

        Reader(file, limits).readHeader(root);
        std::vector<std::string> known;
        const int index = findVariant(root, variant, known);
        if (index < 0) {
            // A malformed document gets its own error first; only a sound one gets "unknown variant".
            (void)Reader(file, limits).read(root);
            return Error{file, "/variants",
                         "unknown variant " + jsonQuoted(variant) +
                             (known.empty() ? std::string(": this scenario has no variants")
                                            : " (known: " + joinQuoted(known) + ")")};
        }
        applyVariant(root, size_t(index), file, limits);
        ScenarioReadResult result;
        try {
            result = Reader(file, limits).read(root);
        } catch (ReadFailure& failure) {
            failure.error.message += " (with variant " + jsonQuoted(variant) + " applied)";
            throw;
        }
        const Variant& applied = result.scenario.variants[size_t(index)];
        if (applied.hasExpect)
            result.scenario.expect = applied.expect;
        if (!applied.effect.empty())
            result.scenario.effect = applied.effect;
        return result;
    } catch (const ReadFailure& failure) {
        return failure.error;
    } catch (const std::bad_alloc&) {
        return Error{file, "", "out of memory while reading the scenario"};
    } catch (const std::exception& e) {
        return Error{file, "", std::string("cannot read the scenario: ") + e.what()};
    }
}

Result<ScenarioReadResult> loadScenarioFile(const std::string& path, const std::string& variant,
                                            const ScenarioLimits& limits)
{
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::file_status status = fs::status(path, ec);
    if (status.type() == fs::file_type::not_found)
        return Error{path, "", "cannot open the file: it does not exist"};
    if (ec)
        return Error{path, "", "cannot open the file: " + ec.message()};
    if (fs::is_directory(status))
        return Error{path, "", "cannot open the file: it is a directory"};
    if (fs::is_regular_file(status)) {
        const uintmax_t size = fs::file_size(path, ec);
        if (!ec && size > limits.maxBytes)
            return Error{path, "",
                         "the file is " + std::to_string(size) + " bytes; the limit is " +
                             std::to_string(limits.maxBytes)};
    }
    std::ifstream in(path, std::ios::binary);
    if (!in)
        return Error{path, "", "cannot open the file for reading"};
    // Read in chunks up to the limit: a pipe or a growing file has no trustworthy size.
    std::string text;
    char buffer[1 << 16];
    while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
        text.append(buffer, size_t(in.gcount()));
        if (text.size() > limits.maxBytes)
            return Error{path, "", "the file is larger than the limit of " + std::to_string(limits.maxBytes) +
                                       " bytes"};
    }
    if (in.bad())
        return Error{path, "", "cannot read the file"};
    return parseScenario(text, path, variant, limits);
}

Result<ScenarioReadResult> validateScenario(Scenario scenario, const std::string& file, const ScenarioLimits& limits)
{
    // One set of rules: the scenario is checked in the form it would be saved in, so paths match the file.
    // The size limit is for files; an in-memory scenario is bounded by the op and thread limits instead.
    ScenarioLimits inMemory = limits;
    inMemory.maxBytes = std::numeric_limits<size_t>::max();
    return parseScenario(scenarioToJson(scenario), file, {}, inMemory);
}

std::string scenarioToJson(const Scenario& s)
{
    OrderedJson j;
    j["format"] = kFormat;
    j["version"] = s.version;
    if (!s.id.empty())
        j["id"] = s.id;
    if (!s.title.empty())
        j["title"] = s.title;
    if (!s.description.empty())
        j["description"] = s.description;
    if (!s.effect.empty())
        j["effect"] = s.effect;
    if (!s.devices.empty()) {
        OrderedJson devices = OrderedJson::array();
        for (const auto& d : s.devices) {
            OrderedJson dj;
            dj["index"] = d.index;
            if (!d.profile.empty())
                dj["profile"] = d.profile;
            devices.push_back(std::move(dj));
        }
        j["devices"] = std::move(devices);
    }
    OrderedJson streams = OrderedJson::array();
    for (const auto& st : s.streams) {
        OrderedJson sj;
        sj["name"] = st.name;
        if (st.device != 0)
            sj["device"] = st.device;
        if (st.kind != StreamKind::Blocking)
            sj["kind"] = toString(st.kind);
        if (st.priority != 0)
            sj["priority"] = st.priority;
        streams.push_back(std::move(sj));
    }
    j["streams"] = std::move(streams);
    OrderedJson threads = OrderedJson::array();
    for (const auto& t : s.threads) {
        OrderedJson tj;
        tj["name"] = t.name;
        if (t.device != 0)
            tj["device"] = t.device;
        if (t.repeat != 1)
            tj["repeat"] = t.repeat;
        if (t.workers != 1)
            tj["workers"] = t.workers;
        OrderedJson ops = OrderedJson::array();
        for (const auto& op : t.ops)
            ops.push_back(opToJson(op, nullptr));
        tj["ops"] = std::move(ops);
        threads.push_back(std::move(tj));
    }
    j["threads"] = std::move(threads);

    OrderedJson run = OrderedJson::object();
    if (s.run.warmup != 0)
        run["warmup"] = s.run.warmup;
    if (s.run.iterations != 1)
        run["iterations"] = s.run.iterations;
    if (!s.run.env.empty()) {
        OrderedJson env = OrderedJson::object();
        for (const auto& [name, value] : s.run.env) {
            int64_t n = 0;
            // CUDA_DEVICE_MAX_CONNECTIONS reads best as the number it is; other values stay text.
            if (name == "CUDA_DEVICE_MAX_CONNECTIONS" && parseDecimal(value, n) && std::to_string(n) == value)
                env[name] = n;
            else
                env[name] = value;
        }
        run["env"] = std::move(env);
    }
    if (s.run.timing != TimingMode::Auto)
        run["timing"] = std::string(toString(s.run.timing));
    if (!run.empty())
        j["run"] = std::move(run);
    if (!s.expect.empty())
        j["expect"] = expectationsJson(s.expect);
    if (!s.variants.empty()) {
        OrderedJson variants = OrderedJson::array();
        for (const auto& v : s.variants) {
            OrderedJson vj;
            vj["id"] = v.id;
            if (!v.title.empty())
                vj["title"] = v.title;
            if (!v.description.empty())
                vj["description"] = v.description;
            if (!v.patchJson.empty()) {
                // Text that is not a JSON object is kept as a string, so that validation points at it.
                OrderedJson set = OrderedJson::parse(v.patchJson, nullptr, false);
                vj["set"] = set.is_discarded() ? OrderedJson(v.patchJson) : std::move(set);
            }
            if (v.hasExpect)
                vj["expect"] = expectationsJson(v.expect);
            if (!v.effect.empty())
                vj["effect"] = v.effect;
            variants.push_back(std::move(vj));
        }
        j["variants"] = std::move(variants);
    }
    return dumpOrdered(j, 2) + "\n";
}

std::string expectationToJson(const Expectation& e)
{
    return dumpOrdered(expectationJson(e), -1);
}

} // namespace streamscope
