// The native trace format, writing: traceToJson, columns as arrays in docs/TRACE.md's order.
#include "trace_json.h"
#include "trace_json_format.h"

#include "file_io.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

namespace streamscope {

namespace {

using trace_json::dumpJson;
using trace_json::Json;
using trace_json::kFormat;

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

template <typename Column, typename F>
void appendColumn(std::string& out, std::string_view key, const Column& v, F&& write, bool last = false)
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

// A column of n entries, entry i written by write(out, i): for optional columns read through their accessors.
template <typename F>
void appendIndexed(std::string& out, std::string_view key, size_t n, F&& write, bool last = false)
{
    out += "    \"";
    out += key;
    out += "\": [";
    for (size_t i = 0; i < n; ++i) {
        if (i)
            out += ',';
        write(out, i);
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
    // Every span has thread, op, iteration, bytes, grid and block in the document, even where the trace holds
    // none of them (SpanColumns' optional columns).
    appendIndexed(out, "thread", n, [&](std::string& o, size_t i) { appendInt(o, s.threadOf(i)); });
    appendIndexed(out, "op", n, [&](std::string& o, size_t i) { appendInt(o, s.opOf(i)); });
    appendIndexed(out, "iteration", n, [&](std::string& o, size_t i) { appendInt(o, s.iterationOf(i)); });
    appendIndexed(out, "bytes", n, [&](std::string& o, size_t i) { appendInt(o, s.bytesOf(i)); });
    appendIndexed(out, "grid", n, [&](std::string& o, size_t i) { appendDim3(o, s.gridOf(i)); });
    const bool timing = !s.timing.empty();
    const bool errors = !s.eventStartError.empty();
    const bool waits = !s.wait.empty();
    const bool tasks = s.task.size() == s.size() && s.size() > 0;
    appendIndexed(
        out, "block", n, [&](std::string& o, size_t i) { appendDim3(o, s.blockOf(i)); },
        !timing && !errors && !waits && !tasks);
    // Optional columns (docs/TRACE.md): only where a span differs from the default.
    if (timing)
        appendColumn(out, "timing", s.timing, writeInt, !errors && !waits && !tasks);
    if (errors) {
        appendColumn(out, "event_start_error", s.eventStartError, writeInt);
        appendColumn(out, "event_end_error", s.eventEndError, writeInt, !waits && !tasks);
    }
    if (waits) {
        appendColumn(out, "wait", s.wait, writeInt);
        appendColumn(
            out, "wait_for", s.waitFor,
            [](std::string& o, uint32_t v) { appendInt(o, v == kNoSpan ? -1 : int64_t(v)); }, !tasks);
    }
    if (tasks)
        appendColumn(out, "task", s.task, writeInt, true);
    out += "  },\n  \"flows\": {\n";
    appendColumn(out, "from", t.flows, [](std::string& o, const Flow& f) { appendInt(o, f.from); });
    appendColumn(out, "to", t.flows, [](std::string& o, const Flow& f) { appendInt(o, f.to); });
    appendColumn(
        out, "kind", t.flows, [](std::string& o, const Flow& f) { appendInt(o, int(f.kind)); }, true);
    out += "  }\n}\n";
    return out;
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

} // namespace streamscope
