// What the scenario JSON tests share (tst_scenario_json, tst_scenario_json_errors): the base scenario that uses every
// op and field (the error and warning tables patch one value of it), patching, parsing and diffs of scenarios.
#pragma once

#include "scenario.h"
#include "scenario_json.h"

#include <nlohmann/json.hpp>

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <string>

using namespace streamscope;

namespace {

using Json = nlohmann::json;

// A valid scenario that uses every op and field; the error and warning tables patch one value of it.
// Op indices of thread "main" are noted because the tables name them.
const char* const kBase = R"json({
  "format": "streamscope-scenario",
  "version": 1,
  "id": "base",
  "title": "Base",
  "description": "Every op once.",
  "devices": [{"index": 0, "profile": "h200"}, {"index": 1}],
  "streams": [
    {"name": "s1"},
    {"name": "s2", "device": 1},
    {"name": "s3", "kind": "non-blocking", "priority": -1},
    {"name": "null", "kind": "legacy-default"}
  ],
  "threads": [
    {"name": "main", "repeat": 2, "ops": [
      {"op": "kernel", "stream": "s1", "grid": 4, "duration_us": 100},
      {"op": "memcpy", "stream": "s1", "kind": "h2d", "bytes": 1024},
      {"op": "record", "stream": "s1", "event": "e1"},
      {"op": "wait", "stream": "s3", "event": "e1"},
      {"op": "kernel", "stream": "s3", "kernel": "matmul", "size": 512, "block": [16, 16]},
      {"op": "graph", "stream": "s3", "ops": [
        {"op": "kernel", "kernel": "empty", "grid": [2, 3]},
        {"op": "memset", "bytes": 64},
        {"op": "host-func", "duration_us": 5}
      ]},
      {"op": "memset", "stream": "s1", "bytes": 4096},
      {"op": "host-func", "stream": "s1"},
      {"op": "stream-sync", "stream": "s1"},
      {"op": "host-work", "duration_us": 2.5},
      {"op": "event-sync", "event": "e1"},
      {"op": "malloc", "bytes": 1048576},
      {"op": "free"},
      {"op": "device-sync", "name": "done"},
      {"op": "kernel", "stream": "null", "kernel": "triad", "size": 1000000, "grid": [64, 2, 2]}
    ]},
    {"name": "worker", "device": 1, "workers": 2, "repeat": 4, "ops": [
      {"op": "kernel", "stream": "s2", "kernel": "fma", "grid": [8, 1, 2], "size": 100, "shared_bytes": 1024},
      {"op": "memcpy", "stream": "s2", "kind": "p2p", "bytes": 4096, "dst_device": 0},
      {"op": "memcpy", "stream": "s2", "kind": "d2h", "bytes": 4096, "host": "pinned"},
      {"op": "wait", "stream": "s2", "event": "e1"},
      {"op": "record", "stream": "s2", "event": "e2"},
      {"op": "stream-sync", "stream": "s1"},
      {"op": "kernel", "stream": "s2", "kernel": "reduce", "size": 4096, "name": "sum"},
      {"op": "free", "bytes": 16}
    ]}
  ],
  "run": {"warmup": 1, "iterations": 3, "env": {"CUDA_DEVICE_MAX_CONNECTIONS": 8, "OTHER": "x"}},
  "expect": [
    {"id": "overlap", "metric": "overlap", "streams": ["s1", "s3"], "op": ">=", "value": 0.5,
     "why": "The streams overlap.", "key": true},
    {"metric": "makespan_us", "op": "<", "value": 1000}
  ],
  "variants": [
    {"id": "serial", "title": "Serial", "description": "One stream.",
     "set": {"/threads/0/ops/4/stream": "s1", "/streams/2/kind": "blocking"},
     "expect": [{"metric": "max_concurrency", "kinds": ["kernel"], "op": "==", "value": 1}]},
    {"id": "more", "set": {"/threads/0/repeat": 5}}
  ]
})json";

inline QByteArray qb(const std::string& s)
{
    return QByteArray::fromStdString(s);
}

inline QByteArray dumped(const Json& j)
{
    return QByteArray::fromStdString(j.dump());
}

// Enums compare by their JSON names, so a failure prints them.
template <typename E>
inline QByteArray kindName(E e)
{
    const std::string_view n = toString(e);
    return QByteArray(n.data(), qsizetype(n.size()));
}

inline std::string describe(const Result<ScenarioReadResult>& r)
{
    return r.ok() ? std::string("ok") : r.error().toString();
}

// The base scenario with one value set (value: JSON text) or removed (value: empty).
inline std::string patched(const QByteArray& pointer, const QByteArray& value)
{
    Json doc = Json::parse(kBase);
    const Json::json_pointer ptr(pointer.toStdString());
    if (value.isEmpty()) {
        Json& parent = doc.at(ptr.parent_pointer());
        if (parent.is_array())
            parent.erase(size_t(std::stoul(ptr.back())));
        else
            parent.erase(ptr.back());
    } else {
        doc[ptr] = Json::parse(value.toStdString());
    }
    return doc.dump(2);
}

// Field-by-field comparison; returns where two scenarios differ, empty when they are equal.
inline std::string diffOps(const std::vector<Op>& a, const std::vector<Op>& b, const std::string& at);

inline std::string diffOp(const Op& a, const Op& b, const std::string& at)
{
#define STREAMSCOPE_DIFF(f)                                                                                            \
    if (!(a.f == b.f))                                                                                                 \
        return at + "." #f;
    STREAMSCOPE_DIFF(kind)
    STREAMSCOPE_DIFF(name)
    STREAMSCOPE_DIFF(stream)
    STREAMSCOPE_DIFF(streamIndex)
    STREAMSCOPE_DIFF(event)
    STREAMSCOPE_DIFF(eventIndex)
    STREAMSCOPE_DIFF(kernel)
    STREAMSCOPE_DIFF(grid)
    STREAMSCOPE_DIFF(block)
    STREAMSCOPE_DIFF(gridGiven)
    STREAMSCOPE_DIFF(durationUs)
    STREAMSCOPE_DIFF(size)
    STREAMSCOPE_DIFF(sharedBytes)
    STREAMSCOPE_DIFF(copy)
    STREAMSCOPE_DIFF(bytes)
    STREAMSCOPE_DIFF(pinned)
    STREAMSCOPE_DIFF(dstDevice)
    return diffOps(a.ops, b.ops, at + ".ops");
}

inline std::string diffOps(const std::vector<Op>& a, const std::vector<Op>& b, const std::string& at)
{
    if (a.size() != b.size())
        return at + ".size";
    for (size_t i = 0; i < a.size(); ++i)
        if (auto d = diffOp(a[i], b[i], at + "[" + std::to_string(i) + "]"); !d.empty())
            return d;
    return {};
}

inline std::string diffExpect(const std::vector<Expectation>& ea, const std::vector<Expectation>& eb,
                              const std::string& where)
{
    if (ea.size() != eb.size())
        return where + ".size";
    for (size_t i = 0; i < ea.size(); ++i) {
        const Expectation& a = ea[i];
        const Expectation& b = eb[i];
        const std::string at = where + "[" + std::to_string(i) + "]";
        STREAMSCOPE_DIFF(id)
        STREAMSCOPE_DIFF(metric)
        STREAMSCOPE_DIFF(streams)
        STREAMSCOPE_DIFF(spans)
        STREAMSCOPE_DIFF(kinds)
        STREAMSCOPE_DIFF(device)
        STREAMSCOPE_DIFF(op)
        STREAMSCOPE_DIFF(value)
        STREAMSCOPE_DIFF(why)
        STREAMSCOPE_DIFF(key)
    }
    return {};
}

inline std::string diffScenario(const Scenario& a, const Scenario& b)
{
    const std::string at = "scenario";
    STREAMSCOPE_DIFF(version)
    STREAMSCOPE_DIFF(id)
    STREAMSCOPE_DIFF(title)
    STREAMSCOPE_DIFF(description)
    STREAMSCOPE_DIFF(events)
    STREAMSCOPE_DIFF(run.warmup)
    STREAMSCOPE_DIFF(run.iterations)
    STREAMSCOPE_DIFF(run.env)
    if (a.devices.size() != b.devices.size())
        return "devices.size";
    for (size_t i = 0; i < a.devices.size(); ++i)
        if (a.devices[i].index != b.devices[i].index || a.devices[i].profile != b.devices[i].profile)
            return "devices[" + std::to_string(i) + "]";
    if (a.streams.size() != b.streams.size())
        return "streams.size";
    for (size_t i = 0; i < a.streams.size(); ++i) {
        const StreamSpec& x = a.streams[i];
        const StreamSpec& y = b.streams[i];
        if (x.name != y.name || x.device != y.device || x.kind != y.kind || x.priority != y.priority)
            return "streams[" + std::to_string(i) + "]";
    }
    if (a.threads.size() != b.threads.size())
        return "threads.size";
    for (size_t i = 0; i < a.threads.size(); ++i) {
        const ThreadSpec& x = a.threads[i];
        const ThreadSpec& y = b.threads[i];
        const std::string here = "threads[" + std::to_string(i) + "]";
        if (x.name != y.name || x.device != y.device || x.repeat != y.repeat || x.workers != y.workers)
            return here;
        if (auto d = diffOps(x.ops, y.ops, here + ".ops"); !d.empty())
            return d;
    }
    if (auto d = diffExpect(a.expect, b.expect, "expect"); !d.empty())
        return d;
    if (a.variants.size() != b.variants.size())
        return "variants.size";
    for (size_t i = 0; i < a.variants.size(); ++i) {
        const Variant& x = a.variants[i];
        const Variant& y = b.variants[i];
        const std::string here = "variants[" + std::to_string(i) + "]";
        if (x.id != y.id || x.title != y.title || x.description != y.description || x.hasExpect != y.hasExpect)
            return here;
        if (Json::parse(x.patchJson.empty() ? "null" : x.patchJson)
            != Json::parse(y.patchJson.empty() ? "null" : y.patchJson))
            return here + ".patchJson";
        if (auto d = diffExpect(x.expect, y.expect, here + ".expect"); !d.empty())
            return d;
    }
    return {};
#undef STREAMSCOPE_DIFF
}

inline Result<ScenarioReadResult> parse(const std::string& text, const std::string& variant = {},
                                        const ScenarioLimits& limits = {})
{
    return parseScenario(text, "test.json", variant, limits);
}

// An editor-style scenario: names only, nothing resolved, no devices declared.
inline Scenario editorScenario()
{
    Scenario s;
    s.title = "Editor";
    s.streams = {StreamSpec{"a", 0, StreamKind::Blocking, 0}, StreamSpec{"b", 0, StreamKind::NonBlocking, -2}};
    ThreadSpec t;
    t.name = "host";
    Op k;
    k.kind = OpKind::Kernel;
    k.stream = "a";
    k.grid = Dim3{2, 1, 1};
    k.durationUs = 50;
    Op rec;
    rec.kind = OpKind::Record;
    rec.stream = "a";
    rec.event = "done";
    Op wait;
    wait.kind = OpKind::Wait;
    wait.stream = "b";
    wait.event = "done";
    Op copy;
    copy.kind = OpKind::Memcpy;
    copy.stream = "b";
    copy.copy = CopyKind::D2H;
    copy.bytes = 1 << 20;
    t.ops = {k, rec, wait, copy};
    s.threads = {t};
    return s;
}

} // namespace
