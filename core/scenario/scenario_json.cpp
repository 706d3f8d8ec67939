// Scenario JSON: reading (parseScenario, loadScenarioFile, validateScenario) and the JSON text and message helpers
// its parts share (scenario_json_internal.h lists the parts).
#include "scenario_json.h"
#include "scenario_json_internal.h"

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

namespace scenario_json {

std::string versionNote()
{
    return "this StreamScope reads version " + std::to_string(kScenarioVersion);
}

std::string dumpJson(const Json& j)
{
    return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

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

std::string formatNumber(double v)
{
    return dumpJson(Json(v));
}

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

std::string positionText(const std::string& text, size_t byte)
{
    const auto [line, column] = lineAndColumn(text, byte);
    return "at byte " + std::to_string(byte) + " (line " + std::to_string(line) + ", column " + std::to_string(column)
        + ")";
}

Json parseJsonText(const std::string& text, const std::string& file, int maxDepth)
{
    // Refused before parsing: deep nesting costs memory to build, and nlohmann's dump() recurses when the
    // scenario is written out again (into a trace, by the editor).
    if (const auto at = nestingTooDeepAt(text, maxDepth))
        throw ReadFailure{
            {file, "", "nesting deeper than " + std::to_string(maxDepth) + " levels " + positionText(text, *at + 1)}};
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
    case OpKind::Collective: f.insert(f.end(), {"stream", "bytes", "algorithm", "root", "peer"}); break;
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
    for (CollectiveKind k : {CollectiveKind::AllReduce, CollectiveKind::AllGather, CollectiveKind::ReduceScatter,
                             CollectiveKind::Broadcast, CollectiveKind::Send, CollectiveKind::Recv})
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
    return k == KernelKind::Fma || k == KernelKind::Triad || k == KernelKind::Matmul || k == KernelKind::Transpose
        || k == KernelKind::Reduce;
}

bool kernelNeedsGrid(KernelKind k)
{
    return k == KernelKind::Spin || k == KernelKind::Empty || k == KernelKind::Fma;
}

bool isGraphNodeKind(OpKind k)
{
    return k == OpKind::Kernel || k == OpKind::Memcpy || k == OpKind::Memset || k == OpKind::HostFunc;
}

bool needsStreamOnThreadDevice(OpKind k)
{
    return k != OpKind::StreamSync;
}

} // namespace scenario_json

using namespace scenario_json;

Result<ScenarioReadResult> parseScenario(const std::string& text, const std::string& file, const std::string& variant,
                                         const ScenarioLimits& limits)
{
    try {
        if (text.size() > limits.maxBytes)
            return Error{file, "",
                         "the scenario is " + std::to_string(text.size()) + " bytes; the limit is "
                             + std::to_string(limits.maxBytes)};
        Json root = parseJsonText(text, file, limits.maxDepth);
        if (variant.empty())
            return ScenarioReader(file, limits).read(root);

        ScenarioReader(file, limits).readHeader(root);
        std::vector<std::string> known;
        const int index = findVariant(root, variant, known);
        if (index < 0) {
            // A malformed document gets its own error first; only a sound one gets "unknown variant".
            (void)ScenarioReader(file, limits).read(root);
            return Error{file, "/variants",
                         "unknown variant " + jsonQuoted(variant)
                             + (known.empty() ? std::string(": this scenario has no variants")
                                              : " (known: " + joinQuoted(known) + ")")};
        }
        applyVariant(root, size_t(index), file, limits);
        ScenarioReadResult result;
        try {
            result = ScenarioReader(file, limits).read(root);
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
                         "the file is " + std::to_string(size) + " bytes; the limit is "
                             + std::to_string(limits.maxBytes)};
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
            return Error{path, "",
                         "the file is larger than the limit of " + std::to_string(limits.maxBytes) + " bytes"};
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

} // namespace streamscope
