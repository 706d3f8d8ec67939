// Scenario JSON: reading (values, defaults, resolution), writing (round trips), every error with its JSON path,
// warnings, limits against hostile files, variants, files and in-memory validation.
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

QByteArray qb(const std::string& s)
{
    return QByteArray::fromStdString(s);
}

QByteArray dumped(const Json& j)
{
    return QByteArray::fromStdString(j.dump());
}

// Enums compare by their JSON names, so a failure prints them.
template <typename E>
QByteArray kindName(E e)
{
    const std::string_view n = toString(e);
    return QByteArray(n.data(), qsizetype(n.size()));
}

std::string describe(const Result<ScenarioReadResult>& r)
{
    return r.ok() ? std::string("ok") : r.error().toString();
}

// The base scenario with one value set (value: JSON text) or removed (value: empty).
std::string patched(const QByteArray& pointer, const QByteArray& value)
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
std::string diffOps(const std::vector<Op>& a, const std::vector<Op>& b, const std::string& at);

std::string diffOp(const Op& a, const Op& b, const std::string& at)
{
#define STREAMSCOPE_DIFF(f)                                                                                        \
    if (!(a.f == b.f))                                                                                             \
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

std::string diffOps(const std::vector<Op>& a, const std::vector<Op>& b, const std::string& at)
{
    if (a.size() != b.size())
        return at + ".size";
    for (size_t i = 0; i < a.size(); ++i)
        if (auto d = diffOp(a[i], b[i], at + "[" + std::to_string(i) + "]"); !d.empty())
            return d;
    return {};
}

std::string diffExpect(const std::vector<Expectation>& ea, const std::vector<Expectation>& eb, const std::string& where)
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

std::string diffScenario(const Scenario& a, const Scenario& b)
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
        if (Json::parse(x.patchJson.empty() ? "null" : x.patchJson) !=
            Json::parse(y.patchJson.empty() ? "null" : y.patchJson))
            return here + ".patchJson";
        if (auto d = diffExpect(x.expect, y.expect, here + ".expect"); !d.empty())
            return d;
    }
    return {};
#undef STREAMSCOPE_DIFF
}

Result<ScenarioReadResult> parse(const std::string& text, const std::string& variant = {},
                                 const ScenarioLimits& limits = {})
{
    return parseScenario(text, "test.json", variant, limits);
}

// An editor-style scenario: names only, nothing resolved, no devices declared.
Scenario editorScenario()
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

class TestScenarioJson : public QObject {
    Q_OBJECT

private slots:
    void parsesValuesAndDefaults()
    {
        const auto r = parse(kBase);
        QVERIFY2(r.ok(), describe(r).c_str());
        const Scenario& s = r->scenario;
        QVERIFY(r->warnings.empty());
        QCOMPARE(s.version, 1);
        QCOMPARE(qb(s.id), QByteArray("base"));
        QCOMPARE(qb(s.description), QByteArray("Every op once."));

        QCOMPARE(s.devices.size(), size_t(2));
        QCOMPARE(qb(s.devices[0].profile), QByteArray("h200"));
        QCOMPARE(s.devices[1].index, 1);
        QVERIFY(s.devices[1].profile.empty());

        QCOMPARE(s.streams.size(), size_t(4));
        QCOMPARE(kindName(s.streams[0].kind), kindName(StreamKind::Blocking)); // default
        QCOMPARE(s.streams[0].priority, 0);
        QCOMPARE(s.streams[0].device, 0);
        QCOMPARE(s.streams[1].device, 1);
        QCOMPARE(kindName(s.streams[2].kind), kindName(StreamKind::NonBlocking));
        QCOMPARE(s.streams[2].priority, -1);
        QCOMPARE(kindName(s.streams[3].kind), kindName(StreamKind::LegacyDefault));

        QCOMPARE(s.threads.size(), size_t(2));
        const ThreadSpec& main = s.threads[0];
        QCOMPARE(main.repeat, 2);
        QCOMPARE(main.workers, 1);
        QCOMPARE(main.device, 0);
        QCOMPARE(s.threads[1].workers, 2);
        QCOMPARE(s.threads[1].device, 1);

        const Op& spin = main.ops[0];
        QCOMPARE(kindName(spin.kind), kindName(OpKind::Kernel));
        QCOMPARE(kindName(spin.kernel), kindName(KernelKind::Spin)); // default
        QCOMPARE(spin.grid, (Dim3{4, 1, 1}));
        QVERIFY(spin.gridGiven);
        QCOMPARE(spin.block, (Dim3{256, 1, 1})); // default
        QCOMPARE(spin.durationUs, 100.0);
        QCOMPARE(spin.streamIndex, 0);

        const Op& copy = main.ops[1];
        QCOMPARE(kindName(copy.copy), kindName(CopyKind::H2D));
        QCOMPARE(copy.bytes, int64_t(1024));
        QVERIFY(copy.pinned); // default

        const Op& matmul = main.ops[4];
        QCOMPARE(kindName(matmul.kernel), kindName(KernelKind::Matmul));
        QVERIFY(!matmul.gridGiven);
        QCOMPARE(matmul.size, int64_t(512));
        QCOMPARE(matmul.block, (Dim3{16, 16, 1}));
        QCOMPARE(matmul.streamIndex, 2);

        const Op& graph = main.ops[5];
        QCOMPARE(kindName(graph.kind), kindName(OpKind::Graph));
        QCOMPARE(graph.ops.size(), size_t(3));
        for (const Op& node : graph.ops) {
            QCOMPARE(qb(node.stream), QByteArray("s3")); // inherited
            QCOMPARE(node.streamIndex, 2);
        }
        QCOMPARE(graph.ops[0].grid, (Dim3{2, 3, 1}));
        QCOMPARE(kindName(graph.ops[0].kernel), kindName(KernelKind::Empty));
        QCOMPARE(kindName(graph.ops[1].kind), kindName(OpKind::Memset));
        QCOMPARE(graph.ops[2].durationUs, 5.0);

        QCOMPARE(main.ops[7].durationUs, 0.0); // host-func default
        QCOMPARE(main.ops[9].durationUs, 2.5);
        QCOMPARE(main.ops[12].bytes, int64_t(0)); // free without bytes
        QCOMPARE(qb(main.ops[13].name), QByteArray("done"));
        QCOMPARE(main.ops[14].grid, (Dim3{64, 2, 2}));
        QCOMPARE(main.ops[14].streamIndex, 3);

        const ThreadSpec& worker = s.threads[1];
        QCOMPARE(kindName(worker.ops[0].kernel), kindName(KernelKind::Fma));
        QCOMPARE(worker.ops[0].grid, (Dim3{8, 1, 2}));
        QCOMPARE(worker.ops[0].sharedBytes, int64_t(1024));
        QCOMPARE(kindName(worker.ops[1].copy), kindName(CopyKind::P2P));
        QCOMPARE(worker.ops[1].dstDevice, 0);
        QCOMPARE(worker.ops[7].bytes, int64_t(16));

        // Events in order of first appearance, resolved in every op that names one.
        QCOMPARE(s.events, (std::vector<std::string>{"e1", "e2"}));
        QCOMPARE(main.ops[2].eventIndex, 0);
        QCOMPARE(main.ops[3].eventIndex, 0);
        QCOMPARE(main.ops[10].eventIndex, 0);
        QCOMPARE(worker.ops[4].eventIndex, 1);

        QCOMPARE(s.run.warmup, 1);
        QCOMPARE(s.run.iterations, 3);
        QCOMPARE(qb(s.run.env.at("CUDA_DEVICE_MAX_CONNECTIONS")), QByteArray("8"));
        QCOMPARE(qb(s.run.env.at("OTHER")), QByteArray("x"));
        QCOMPARE(s.run.maxConnections(), std::optional<int>(8));

        QCOMPARE(s.expect.size(), size_t(2));
        QCOMPARE(qb(s.expect[0].id), QByteArray("overlap"));
        QCOMPARE(s.expect[0].streams, (std::vector<std::string>{"s1", "s3"}));
        QVERIFY(s.expect[0].key);
        QCOMPARE(qb(s.expect[0].why), QByteArray("The streams overlap."));
        QCOMPARE(qb(s.expect[1].op), QByteArray("<"));
        QCOMPARE(s.expect[1].device, -1);

        QCOMPARE(s.variants.size(), size_t(2));
        QCOMPARE(qb(s.variants[0].title), QByteArray("Serial"));
        QVERIFY(s.variants[0].hasExpect);
        QCOMPARE(s.variants[0].expect.size(), size_t(1));
        QCOMPARE(dumped(Json::parse(s.variants[0].patchJson)),
                 dumped(Json::parse(R"({"/threads/0/ops/4/stream": "s1", "/streams/2/kind": "blocking"})")));
        QVERIFY(!s.variants[1].hasExpect);
    }

    void minimalDefaults()
    {
        const auto r = parse(R"({"format": "streamscope-scenario", "version": 1,
            "streams": [{"name": "s"}, {"name": "t", "device": 2}],
            "threads": [{"name": "h", "ops": [{"op": "kernel", "stream": "s", "grid": 1, "duration_us": 1}]},
                        {"name": "g", "device": 3}]})");
        QVERIFY2(r.ok(), describe(r).c_str());
        const Scenario& s = r->scenario;
        // Without "devices", the devices are those that streams and threads name, in index order.
        QCOMPARE(s.devices.size(), size_t(3));
        QCOMPARE(s.devices[0].index, 0);
        QCOMPARE(s.devices[1].index, 2);
        QCOMPARE(s.devices[2].index, 3);
        QCOMPARE(s.run.warmup, 0);
        QCOMPARE(s.run.iterations, 1);
        QVERIFY(s.run.env.empty());
        QVERIFY(s.expect.empty());
        QVERIFY(s.variants.empty());
        QVERIFY(s.threads[1].ops.empty());
        QVERIFY(s.events.empty());
    }

    void gridForms_data()
    {
        QTest::addColumn<QByteArray>("grid");
        QTest::addColumn<uint>("x");
        QTest::addColumn<uint>("y");
        QTest::addColumn<uint>("z");
        QTest::newRow("int") << QByteArray("7") << 7u << 1u << 1u;
        QTest::newRow("[x]") << QByteArray("[7]") << 7u << 1u << 1u;
        QTest::newRow("[x,y]") << QByteArray("[7, 3]") << 7u << 3u << 1u;
        QTest::newRow("[x,y,z]") << QByteArray("[7, 3, 2]") << 7u << 3u << 2u;
        QTest::newRow("whole float") << QByteArray("1e3") << 1000u << 1u << 1u;
        QTest::newRow("largest") << QByteArray("[2147483647, 65535, 65535]") << 2147483647u << 65535u << 65535u;
    }

    void gridForms()
    {
        QFETCH(QByteArray, grid);
        QFETCH(uint, x);
        QFETCH(uint, y);
        QFETCH(uint, z);
        const auto r = parse(patched("/threads/0/ops/0/grid", grid));
        QVERIFY2(r.ok(), describe(r).c_str());
        QCOMPARE(r->scenario.threads[0].ops[0].grid, (Dim3{x, y, z}));
    }

    void roundTrip_data()
    {
        QTest::addColumn<QByteArray>("text");
        QTest::addColumn<QByteArray>("variant");
        QTest::newRow("every field") << QByteArray(kBase) << QByteArray();
        QTest::newRow("variant applied") << QByteArray(kBase) << QByteArray("serial");
        QTest::newRow("minimal") << QByteArray(R"({"format": "streamscope-scenario", "version": 1,
            "threads": [{"name": "cpu", "ops": [{"op": "host-work", "duration_us": 0}]}]})")
                                 << QByteArray();
        QTest::newRow("pageable, big numbers, odd names")
            << QByteArray(R"({"format": "streamscope-scenario", "version": 1,
            "title": "Ünïcode \u0022quoted\u0022 ~/",
            "streams": [{"name": "a/b~c", "priority": -5, "kind": "per-thread-default"}],
            "threads": [{"name": "t", "repeat": 1000, "workers": 16, "ops": [
              {"op": "memcpy", "stream": "a/b~c", "kind": "d2h", "bytes": 9007199254740993, "host": "pageable"},
              {"op": "memcpy", "stream": "a/b~c", "kind": "d2d", "bytes": 1},
              {"op": "kernel", "stream": "a/b~c", "grid": [1, 1, 5], "block": [8, 8, 8], "duration_us": 0.1}]}],
            "run": {"env": {"CUDA_DEVICE_MAX_CONNECTIONS": "08", "X": "1"}},
            "variants": [{"id": "v", "set": {}, "expect": []}, {"id": "w"}]})")
            << QByteArray();
    }

    void roundTrip()
    {
        QFETCH(QByteArray, text);
        QFETCH(QByteArray, variant);
        const auto first = parse(text.toStdString(), variant.toStdString());
        QVERIFY2(first.ok(), describe(first).c_str());
        const std::string written = scenarioToJson(first->scenario);
        const auto second = parse(written);
        QVERIFY2(second.ok(), (describe(second) + "\n" + written).c_str());
        const std::string diff = diffScenario(first->scenario, second->scenario);
        QVERIFY2(diff.empty(), ("differs at " + diff + "\n" + written).c_str());
        QCOMPARE(qb(scenarioToJson(second->scenario)), qb(written)); // canonical: a fixed point
        QCOMPARE(second->warnings.size(), first->warnings.size());
    }

    void roundTripInMemory()
    {
        // A scenario built in code (as the editor does), resolved and with every field set, survives writing.
        Scenario s = editorScenario();
        s.id = "mem";
        s.description = "built in code";
        s.devices = {DeviceSpec{0, "laptop"}};
        s.run.warmup = 2;
        s.run.iterations = 5;
        s.run.env["CUDA_DEVICE_MAX_CONNECTIONS"] = "4";
        s.threads[0].repeat = 3;
        s.threads[0].workers = 2;
        Op graph;
        graph.kind = OpKind::Graph;
        graph.stream = "b";
        Op node;
        node.kind = OpKind::Kernel;
        node.kernel = KernelKind::Transpose;
        node.size = 2048;
        node.block = Dim3{32, 8, 1};
        node.sharedBytes = 4096;
        graph.ops = {node, node};
        s.threads[0].ops.push_back(graph);
        Expectation e;
        e.id = "gap";
        e.metric = "gap_us";
        e.spans = {"kernel", "memcpy d2h"};
        e.kinds = {"kernel"};
        e.device = 0;
        e.op = ">";
        e.value = 12.25;
        e.why = "The copy waits.";
        s.expect = {e};
        Variant v;
        v.id = "nb";
        v.patchJson = R"({"/streams/0/kind": "non-blocking"})";
        v.expect = {e};
        v.hasExpect = true;
        s.variants = {v};

        const auto validated = validateScenario(s);
        QVERIFY2(validated.ok(), describe(validated).c_str());
        const Scenario& resolved = validated->scenario;
        const auto again = parse(scenarioToJson(resolved));
        QVERIFY2(again.ok(), describe(again).c_str());
        const std::string diff = diffScenario(resolved, again->scenario);
        QVERIFY2(diff.empty(), diff.c_str());
        // The resolved scenario equals the one built, apart from what resolution fills in.
        QCOMPARE(resolved.threads[0].ops[4].ops[0].size, int64_t(2048));
        QCOMPARE(qb(resolved.threads[0].ops[4].ops[1].stream), QByteArray("b"));
        QCOMPARE(resolved.events, (std::vector<std::string>{"done"}));
        QCOMPARE(qb(resolved.devices[0].profile), QByteArray("laptop"));
        QCOMPARE(resolved.expect[0].spans, e.spans);
    }

    void writerIsCanonical()
    {
        const auto r = parse(kBase);
        QVERIFY2(r.ok(), describe(r).c_str());
        const std::string text = scenarioToJson(r->scenario);
        QVERIFY(text.starts_with("{\n  \"format\": \"streamscope-scenario\",\n  \"version\": 1,"));
        QVERIFY(text.ends_with("}\n"));
        const Json j = Json::parse(text);
        // Defaults are left out...
        QVERIFY(!j["streams"][0].contains("kind"));
        QVERIFY(!j["streams"][0].contains("device"));
        QVERIFY(!j["streams"][0].contains("priority"));
        QVERIFY(!j["threads"][0].contains("workers"));
        QVERIFY(!j["threads"][0]["ops"][0].contains("block"));
        QVERIFY(!j["threads"][0]["ops"][1].contains("host"));
        QVERIFY(!j["threads"][0]["ops"][4].contains("grid"));       // derived from size
        QVERIFY(!j["threads"][0]["ops"][5]["ops"][0].contains("stream")); // inherited from the graph
        QVERIFY(!j["expect"][1].contains("device"));
        QVERIFY(!j["expect"][1].contains("key"));
        // ...what is needed is written.
        QCOMPARE(dumped(j["threads"][0]["ops"][0]["grid"]), dumped(Json(4)));
        QCOMPARE(dumped(j["threads"][0]["ops"][4]["block"]), dumped(Json::parse("[16, 16]")));
        QCOMPARE(dumped(j["threads"][1]["ops"][0]["grid"]), dumped(Json::parse("[8, 1, 2]")));
        QCOMPARE(dumped(j["run"]["env"]["CUDA_DEVICE_MAX_CONNECTIONS"]), dumped(Json(8)));
        QCOMPARE(dumped(j["variants"][0]["set"]["/streams/2/kind"]), dumped(Json("blocking")));

        Scenario bare;
        bare.threads.push_back(ThreadSpec{"t", 0, 1, 1, {}});
        const Json b = Json::parse(scenarioToJson(bare));
        QVERIFY(!b.contains("run"));
        QVERIFY(!b.contains("devices"));
        QVERIFY(!b.contains("expect"));
        QVERIFY(!b.contains("variants"));
    }

    void expectationToJsonWritesOneExpectation()
    {
        Expectation e;
        e.metric = "busy_us";
        e.streams = {"s1"};
        e.value = 3;
        Json j = Json::parse(expectationToJson(e));
        QCOMPARE(dumped(j),
                 dumped(Json::parse(R"({"metric": "busy_us", "streams": ["s1"], "op": ">=", "value": 3.0})")));
        e.id = "busy";
        e.device = 1;
        e.op = "<=";
        e.why = "because";
        e.key = true;
        e.kinds = {"kernel"};
        e.spans = {"k"};
        j = Json::parse(expectationToJson(e));
        QCOMPARE(dumped(j["id"]), dumped(Json("busy")));
        QCOMPARE(dumped(j["device"]), dumped(Json(1)));
        QCOMPARE(dumped(j["op"]), dumped(Json("<=")));
        QCOMPARE(dumped(j["why"]), dumped(Json("because")));
        QCOMPARE(dumped(j["key"]), dumped(Json(true)));
        QCOMPARE(dumped(j["kinds"]), dumped(Json::parse(R"(["kernel"])")));
        QCOMPARE(dumped(j["spans"]), dumped(Json::parse(R"(["k"])")));
    }

    // Each row sets (or, with an empty value, removes) one value of the base scenario.
    void errors_data()
    {
        QTest::addColumn<QByteArray>("pointer");
        QTest::addColumn<QByteArray>("value");
        QTest::addColumn<QByteArray>("path");
        QTest::addColumn<QByteArray>("message");

        const auto row = [](const char* name, const char* pointer, const char* value, const char* path,
                            const char* message) {
            QTest::newRow(name) << QByteArray(pointer) << QByteArray(value) << QByteArray(path) << QByteArray(message);
        };
        // header
        row("format wrong", "/format", R"("streamscope-trace")", "/format", "not a StreamScope scenario");
        row("format missing", "/format", "", "", R"(missing field "format")");
        row("version 7", "/version", "7", "/version", "unsupported version 7 (this StreamScope reads version 1)");
        row("version string", "/version", R"("1")", "/version", "expected an integer, got string");
        row("version missing", "/version", "", "", R"(missing field "version")");
        row("unknown top field", "/titel", R"("x")", "/titel", R"(unknown field "titel" (did you mean "title"?))");
        row("title not string", "/title", "3", "/title", "expected a string, got integer");
        row("effect unknown", "/effect", R"("streams-overlapp")", "/effect",
            R"(unknown effect "streams-overlapp" (did you mean "streams-overlap"?))");
        row("effect not string", "/effect", "3", "/effect", "expected a string, got integer");
        row("variant effect unknown", "/variants/0/effect", R"("overlap-everything")", "/variants/0/effect",
            R"(unknown effect "overlap-everything")");
        // types
        row("repeat string", "/threads/0/repeat", R"("2")", "/threads/0/repeat", "expected an integer, got string");
        row("repeat fraction", "/threads/0/repeat", "1.5", "/threads/0/repeat", "expected an integer, got number 1.5");
        row("repeat zero", "/threads/0/repeat", "0", "/threads/0/repeat", "repeat must be at least 1, got 0");
        row("repeat too big", "/threads/0/repeat", "3000000000", "/threads/0/repeat", "repeat must be at most");
        row("workers zero", "/threads/1/workers", "0", "/threads/1/workers", "workers must be at least 1");
        row("streams not array", "/streams", "{}", "/streams", "expected an array, got object");
        row("thread not object", "/threads/0", "5", "/threads/0", "expected an object, got integer");
        row("op name not string", "/threads/0/ops/0/name", "3", "/threads/0/ops/0/name",
            "expected a string, got integer");
        row("bytes too large", "/threads/0/ops/1/bytes", "18446744073709551615", "/threads/0/ops/1/bytes",
            "is too large");
        // ops
        row("unknown op", "/threads/0/ops/0/op", R"("kernal")", "/threads/0/ops/0/op",
            R"(unknown op "kernal" (did you mean "kernel"?))");
        row("unknown op listed", "/threads/0/ops/0/op", R"("launch")", "/threads/0/ops/0/op",
            R"(unknown op "launch" (one of: "kernel", "memcpy")");
        row("op missing", "/threads/0/ops/13/op", "", "/threads/0/ops/13", R"(missing field "op")");
        row("unknown field", "/threads/0/ops/0/strem", R"("s1")", "/threads/0/ops/0/strem",
            R"(unknown field "strem" (did you mean "stream"?))");
        row("field of another op", "/threads/0/ops/0/bytes", "4", "/threads/0/ops/0/bytes",
            R"(field "bytes" does not apply to a kernel op)");
        row("unknown stream", "/threads/0/ops/1/stream", R"("s9")", "/threads/0/ops/1/stream",
            R"(unknown stream "s9")");
        row("unknown stream of a graph", "/threads/0/ops/5/stream", R"("s9")", "/threads/0/ops/5/stream",
            R"(unknown stream "s9")");
        row("stream missing", "/threads/0/ops/6/stream", "", "/threads/0/ops/6", R"(missing field "stream")");
        row("stream of another device", "/threads/0/ops/0/stream", R"("s2")", "/threads/0/ops/0/stream",
            R"(stream "s2" is on device 1 but thread "main" is bound to device 0)");
        row("record on another device", "/threads/1/ops/4/stream", R"("s1")", "/threads/1/ops/4/stream",
            R"(stream "s1" is on device 0 but thread "worker" is bound to device 1)");
        // kernels
        row("zero grid", "/threads/0/ops/0/grid", "0", "/threads/0/ops/0/grid", "grid must not be zero");
        row("zero grid in array", "/threads/0/ops/5/ops/0/grid", "[2, 0]", "/threads/0/ops/5/ops/0/grid/1",
            "grid must not be zero");
        row("negative grid", "/threads/0/ops/0/grid", "-3", "/threads/0/ops/0/grid", "grid must be positive, got -3");
        row("grid of four", "/threads/0/ops/0/grid", "[1, 1, 1, 1]", "/threads/0/ops/0/grid",
            "grid must have 1 to 3 dimensions");
        row("grid empty", "/threads/0/ops/0/grid", "[]", "/threads/0/ops/0/grid", "grid must have 1 to 3 dimensions");
        row("grid string", "/threads/0/ops/0/grid", R"("4")", "/threads/0/ops/0/grid",
            "expected an integer or an array of 1 to 3 integers, got string");
        row("grid y too big", "/threads/0/ops/0/grid", "[1, 65536]", "/threads/0/ops/0/grid/1",
            "grid.y must be at most 65535");
        row("block too big", "/threads/0/ops/0/block", "[64, 32]", "/threads/0/ops/0/block",
            "block has 2048 threads; CUDA allows at most 1024 per block");
        row("block zero", "/threads/0/ops/0/block", "0", "/threads/0/ops/0/block", "block must not be zero");
        row("block z too big", "/threads/0/ops/0/block", "[1, 1, 65]", "/threads/0/ops/0/block/2",
            "block.z must be at most 64");
        row("spin without grid", "/threads/0/ops/0/grid", "", "/threads/0/ops/0", R"(missing field "grid")");
        row("spin without duration", "/threads/0/ops/0/duration_us", "", "/threads/0/ops/0",
            R"(missing field "duration_us")");
        row("spin duration zero", "/threads/0/ops/0/duration_us", "0", "/threads/0/ops/0/duration_us",
            "duration_us must be greater than 0");
        row("spin duration huge", "/threads/0/ops/0/duration_us", "1e12", "/threads/0/ops/0/duration_us",
            "duration_us must be at most");
        row("spin with size", "/threads/0/ops/0/size", "5", "/threads/0/ops/0/size",
            R"("size" applies only to fma, triad, matmul, transpose and reduce kernels)");
        row("matmul without size", "/threads/0/ops/4/size", "", "/threads/0/ops/4", R"(missing field "size")");
        row("matmul size zero", "/threads/0/ops/4/size", "0", "/threads/0/ops/4/size", "size must be at least 1");
        row("matmul with duration", "/threads/0/ops/4/duration_us", "5", "/threads/0/ops/4/duration_us",
            R"("duration_us" applies only to spin kernels)");
        row("fma without grid", "/threads/1/ops/0/grid", "", "/threads/1/ops/0", R"(missing field "grid")");
        row("unknown kernel", "/threads/0/ops/4/kernel", R"("matmull")", "/threads/0/ops/4/kernel",
            R"(unknown kernel "matmull" (did you mean "matmul"?))");
        row("negative shared bytes", "/threads/1/ops/0/shared_bytes", "-1", "/threads/1/ops/0/shared_bytes",
            "shared_bytes must not be negative");
        // copies and memory
        row("negative bytes", "/threads/0/ops/1/bytes", "-1", "/threads/0/ops/1/bytes", "bytes must not be negative");
        row("negative memset bytes", "/threads/0/ops/6/bytes", "-4096", "/threads/0/ops/6/bytes",
            "bytes must not be negative");
        row("zero malloc bytes", "/threads/0/ops/11/bytes", "0", "/threads/0/ops/11/bytes", "bytes must be at least 1");
        row("memcpy without bytes", "/threads/0/ops/1/bytes", "", "/threads/0/ops/1", R"(missing field "bytes")");
        row("memcpy without kind", "/threads/0/ops/1/kind", "", "/threads/0/ops/1", R"(missing field "kind")");
        row("unknown copy kind", "/threads/0/ops/1/kind", R"("h2x")", "/threads/0/ops/1/kind",
            R"(unknown copy kind "h2x")");
        row("host on p2p", "/threads/1/ops/1/host", R"("pinned")", "/threads/1/ops/1/host",
            R"("host" applies only to h2d and d2h copies)");
        row("host value", "/threads/0/ops/1/host", R"("locked")", "/threads/0/ops/1/host",
            R"("host" must be "pinned" or "pageable", got "locked")");
        row("p2p without destination", "/threads/1/ops/1/dst_device", "", "/threads/1/ops/1",
            R"(missing field "dst_device")");
        row("p2p to itself", "/threads/1/ops/1/dst_device", "1", "/threads/1/ops/1/dst_device",
            "a p2p copy needs a destination other than its stream's device 1");
        row("p2p to undeclared", "/threads/1/ops/1/dst_device", "7", "/threads/1/ops/1/dst_device",
            R"(device 7 is not declared in "devices")");
        row("dst_device on h2d", "/threads/0/ops/1/dst_device", "1", "/threads/0/ops/1/dst_device",
            R"("dst_device" applies only to p2p copies)");
        // events, syncs, host work
        row("record without event", "/threads/0/ops/2/event", "", "/threads/0/ops/2", R"(missing field "event")");
        row("empty event", "/threads/0/ops/2/event", R"("")", "/threads/0/ops/2/event",
            "an event's name must not be empty");
        row("event-sync without event", "/threads/0/ops/10/event", "", "/threads/0/ops/10",
            R"(missing field "event")");
        row("host-work negative", "/threads/0/ops/9/duration_us", "-1", "/threads/0/ops/9/duration_us",
            "duration_us must not be negative");
        row("host-work without duration", "/threads/0/ops/9/duration_us", "", "/threads/0/ops/9",
            R"(missing field "duration_us")");
        row("device-sync with stream", "/threads/0/ops/13/stream", R"("s1")", "/threads/0/ops/13/stream",
            R"(field "stream" does not apply to a device-sync op)");
        // graphs
        row("graph in a graph", "/threads/0/ops/5/ops/0", R"({"op": "graph", "ops": []})",
            "/threads/0/ops/5/ops/0/op", "graphs do not nest");
        row("sync in a graph", "/threads/0/ops/5/ops/0", R"({"op": "stream-sync"})", "/threads/0/ops/5/ops/0/op",
            "a graph node cannot be a stream-sync op");
        row("record in a graph", "/threads/0/ops/5/ops/0", R"({"op": "record", "event": "x"})",
            "/threads/0/ops/5/ops/0/op", "a graph node cannot be a record op");
        row("node in another stream", "/threads/0/ops/5/ops/1/stream", R"("s1")", "/threads/0/ops/5/ops/1/stream",
            R"(a graph node runs in its graph's stream "s3", not "s1")");
        row("empty graph", "/threads/0/ops/5/ops", "[]", "/threads/0/ops/5/ops", "a graph needs at least one node");
        row("graph node error path", "/threads/0/ops/5/ops/1/bytes", "-2", "/threads/0/ops/5/ops/1/bytes",
            "bytes must not be negative");
        // devices, streams, threads
        row("duplicate device", "/devices/1/index", "0", "/devices/1/index",
            "duplicate device index 0 (also at /devices/0)");
        row("negative device", "/devices/1/index", "-1", "/devices/1/index", "index must not be negative");
        row("device out of range", "/devices/1/index", "64", "/devices/1/index", "device 64 is out of range");
        row("device without index", "/devices/1/index", "", "/devices/1", R"(missing field "index")");
        row("stream on undeclared device", "/streams/0/device", "5", "/streams/0/device",
            R"(device 5 is not declared in "devices")");
        row("thread on undeclared device", "/threads/0/device", "3", "/threads/0/device",
            R"(device 3 is not declared in "devices")");
        row("duplicate stream", "/streams/1/name", R"("s1")", "/streams/1/name",
            R"(duplicate stream name "s1" (also at /streams/0))");
        row("empty stream name", "/streams/1/name", R"("")", "/streams/1/name", "a stream's name must not be empty");
        row("stream without name", "/streams/1/name", "", "/streams/1", R"(missing field "name")");
        row("unknown stream kind", "/streams/2/kind", R"("nonblocking")", "/streams/2/kind",
            R"(unknown stream kind "nonblocking" (did you mean "non-blocking"?))");
        row("two legacy streams", "/streams/0/kind", R"("legacy-default")", "/streams/3/kind",
            R"(device 0 already has a legacy-default stream ("s1"))");
        row("priority positive", "/streams/2/priority", "1", "/streams/2/priority",
            "priority must be between -5 and 0, got 1");
        row("priority too low", "/streams/2/priority", "-6", "/streams/2/priority",
            "priority must be between -5 and 0, got -6");
        row("stream field typo", "/streams/2/priorty", "0", "/streams/2/priorty",
            R"(unknown field "priorty" (did you mean "priority"?))");
        row("duplicate thread", "/threads/1/name", R"("main")", "/threads/1/name",
            R"(duplicate thread name "main" (also at /threads/0))");
        row("thread without name", "/threads/1/name", "", "/threads/1", R"(missing field "name")");
        row("no threads", "/threads", "[]", "/threads", "a scenario needs at least one host thread");
        row("threads missing", "/threads", "", "", R"(missing field "threads")");
        // run
        row("max connections too big", "/run/env/CUDA_DEVICE_MAX_CONNECTIONS", "64",
            "/run/env/CUDA_DEVICE_MAX_CONNECTIONS", "CUDA_DEVICE_MAX_CONNECTIONS must be an integer from 1 to 32");
        row("max connections zero", "/run/env/CUDA_DEVICE_MAX_CONNECTIONS", "0",
            "/run/env/CUDA_DEVICE_MAX_CONNECTIONS", "from 1 to 32");
        row("max connections text", "/run/env/CUDA_DEVICE_MAX_CONNECTIONS", R"("eight")",
            "/run/env/CUDA_DEVICE_MAX_CONNECTIONS", "from 1 to 32");
        row("env value boolean", "/run/env/OTHER", "true", "/run/env/OTHER",
            "expected a string or an integer, got boolean");
        row("iterations zero", "/run/iterations", "0", "/run/iterations", "iterations must be at least 1");
        row("warmup negative", "/run/warmup", "-1", "/run/warmup", "warmup must be at least 0");
        row("run field typo", "/run/iteration", "1", "/run/iteration",
            R"(unknown field "iteration" (did you mean "iterations"?))");
        // expect
        row("expect unknown stream", "/expect/0/streams/1", R"("s9")", "/expect/0/streams/1", R"(unknown stream "s9")");
        row("expect bad comparison", "/expect/0/op", R"("=<")", "/expect/0/op", R"(unknown comparison "=<")");
        row("expect without value", "/expect/1/value", "", "/expect/1", R"(missing field "value")");
        row("expect without metric", "/expect/1/metric", "", "/expect/1", R"(missing field "metric")");
        row("expect unknown metric", "/expect/0/metric", R"("overlapp")", "/expect/0", R"(unknown metric "overlapp")");
        row("expect wrong argument count", "/expect/0/streams", R"(["s1"])", "/expect/0", "");
        row("expect duplicate id", "/expect/1/id", R"("overlap")", "/expect/1/id",
            R"(duplicate expectation id "overlap")");
        row("expect key not bool", "/expect/0/key", "1", "/expect/0/key", "expected true or false, got integer");
        row("expect field typo", "/expect/0/vaule", "1", "/expect/0/vaule",
            R"(unknown field "vaule" (did you mean "value"?))");
        // variants
        row("duplicate variant", "/variants/1/id", R"("serial")", "/variants/1/id",
            R"(duplicate variant id "serial")");
        row("variant without id", "/variants/1/id", "", "/variants/1", R"(missing field "id")");
        row("variant set not object", "/variants/1/set", "[]", "/variants/1/set", "expected an object, got array");
        row("variant set not a pointer", "/variants/1/set", R"({"threads/0": 1})", "/variants/1/set/threads~10",
            "not a JSON pointer");
        row("variant sets variants", "/variants/1/set", R"({"/variants/0/id": "x"})",
            "/variants/1/set/~1variants~10~1id", "a variant cannot change the variants");
        row("variant expect unknown stream", "/variants/0/expect/0",
            R"({"metric": "busy_us", "streams": ["s7"], "value": 1})", "/variants/0/expect/0/streams/0",
            R"(unknown stream "s7")");
    }

    void errors()
    {
        QFETCH(QByteArray, pointer);
        QFETCH(QByteArray, value);
        QFETCH(QByteArray, path);
        QFETCH(QByteArray, message);
        const auto r = parse(patched(pointer, value));
        QVERIFY2(!r.ok(), "accepted an invalid scenario");
        const Error& e = r.error();
        QCOMPARE(qb(e.file), QByteArray("test.json"));
        QVERIFY2(qb(e.path) == path, e.toString().c_str());
        QVERIFY2(qb(e.message).contains(message), e.toString().c_str());
        QVERIFY(!e.message.empty());
        QCOMPARE(r.errorClass(), ErrorClass::BadInput);
    }

    // Input that is not a scenario at all.
    void textErrors_data()
    {
        QTest::addColumn<QByteArray>("text");
        QTest::addColumn<QByteArray>("path");
        QTest::addColumn<QByteArray>("message");
        QTest::newRow("empty") << QByteArray("") << QByteArray() << QByteArray("not JSON: ");
        QTest::newRow("truncated") << QByteArray(R"({"format": )") << QByteArray()
                                   << QByteArray("not JSON: ");
        QTest::newRow("byte and line") << QByteArray("{\n  \"format\": \"streamscope-scenario\",\n  x\n}")
                                       << QByteArray() << QByteArray("at byte 41 (line 3, column 3)");
        QTest::newRow("number overflow") << QByteArray(R"({"format": 1e999})") << QByteArray()
                                         << QByteArray("not JSON: number overflow");
        QTest::newRow("array") << QByteArray("[1, 2]") << QByteArray() << QByteArray("expected an object, got array");
        QTest::newRow("string") << QByteArray(R"("scenario")") << QByteArray()
                                << QByteArray("expected an object, got string");
        QTest::newRow("a trace") << QByteArray(R"({"format": "streamscope-trace", "version": 1})")
                                 << QByteArray("/format") << QByteArray("not a StreamScope scenario");
        QTest::newRow("no format") << QByteArray(R"({"version": 1})") << QByteArray()
                                   << QByteArray(R"(missing field "format")");
        QTest::newRow("version before fields") << QByteArray(R"({"format": "streamscope-scenario", "version": 2,
            "future": true})") << QByteArray("/version") << QByteArray("unsupported version 2");
    }

    void textErrors()
    {
        QFETCH(QByteArray, text);
        QFETCH(QByteArray, path);
        QFETCH(QByteArray, message);
        const auto r = parse(text.toStdString());
        QVERIFY(!r.ok());
        QVERIFY2(qb(r.error().path) == path, r.error().toString().c_str());
        QVERIFY2(qb(r.error().message).contains(message), r.error().toString().c_str());
    }

    void warnings_data()
    {
        QTest::addColumn<QByteArray>("pointer");
        QTest::addColumn<QByteArray>("value");
        QTest::addColumn<QByteArray>("path");
        QTest::addColumn<QByteArray>("message");
        QTest::newRow("pageable h2d") << QByteArray("/threads/0/ops/1/host") << QByteArray(R"("pageable")")
                                      << QByteArray("/threads/0/ops/1/host")
                                      << QByteArray("an async copy from pageable memory runs synchronously: the host "
                                                    "thread blocks and the copy cannot overlap with kernels");
        QTest::newRow("pageable d2h") << QByteArray("/threads/1/ops/2/host") << QByteArray(R"("pageable")")
                                      << QByteArray("/threads/1/ops/2/host") << QByteArray("pageable memory");
        QTest::newRow("wait never recorded")
            << QByteArray("/threads/0/ops/3/event") << QByteArray(R"("e9")") << QByteArray("/threads/0/ops/3/event")
            << QByteArray(R"(event "e9" is waited on but never recorded: the wait does nothing)");
        QTest::newRow("event-sync never recorded")
            << QByteArray("/threads/0/ops/10/event") << QByteArray(R"("e9")") << QByteArray("/threads/0/ops/10/event")
            << QByteArray(R"(event "e9" is synchronized on but never recorded)");
        // Recorded later in another thread is still recorded: no warning (empty path and message).
        QTest::newRow("recorded elsewhere") << QByteArray("/threads/0/ops/3/event") << QByteArray(R"("e2")")
                                            << QByteArray() << QByteArray();
    }

    void warnings()
    {
        QFETCH(QByteArray, pointer);
        QFETCH(QByteArray, value);
        QFETCH(QByteArray, path);
        QFETCH(QByteArray, message);
        const auto r = parse(patched(pointer, value));
        QVERIFY2(r.ok(), describe(r).c_str()); // a warning never stops reading
        if (message.isEmpty()) {
            QVERIFY(r->warnings.empty());
            return;
        }
        QCOMPARE(r->warnings.size(), size_t(1));
        QCOMPARE(qb(r->warnings[0].file), QByteArray("test.json"));
        QCOMPARE(qb(r->warnings[0].path), path);
        QVERIFY2(qb(r->warnings[0].message).contains(message), r->warnings[0].toString().c_str());
    }

    void warningsInDocumentOrder()
    {
        Json doc = Json::parse(kBase);
        doc["threads"][0]["ops"][3]["event"] = "e9";   // found after all ops are read
        doc["threads"][0]["ops"][1]["host"] = "pageable"; // found while reading
        doc["threads"][1]["ops"][2]["host"] = "pageable";
        const auto r = parse(doc.dump());
        QVERIFY2(r.ok(), describe(r).c_str());
        QCOMPARE(r->warnings.size(), size_t(3));
        QCOMPARE(qb(r->warnings[0].path), QByteArray("/threads/0/ops/1/host"));
        QCOMPARE(qb(r->warnings[1].path), QByteArray("/threads/0/ops/3/event"));
        QCOMPARE(qb(r->warnings[2].path), QByteArray("/threads/1/ops/2/host"));
    }

    void neverRecordedEventIsResolved()
    {
        const auto r = parse(patched("/threads/0/ops/3/event", R"("e9")"));
        QVERIFY2(r.ok(), describe(r).c_str());
        QCOMPARE(r->scenario.events, (std::vector<std::string>{"e1", "e9", "e2"}));
        QCOMPARE(r->scenario.threads[0].ops[3].eventIndex, 1);
    }

    void limits_data()
    {
        QTest::addColumn<QByteArray>("limit");
        QTest::addColumn<qint64>("value");
        QTest::addColumn<QByteArray>("path");
        QTest::addColumn<QByteArray>("message");
        // The base scenario: ops 0-4 of "main", then a graph (op 5) of 3 nodes; 3 host threads; 4 streams.
        QTest::newRow("ops") << QByteArray("maxOps") << qint64(5) << QByteArray("/threads/0/ops/5")
                             << QByteArray("too many operations: the limit is 5");
        QTest::newRow("graph nodes count as ops") << QByteArray("maxOps") << qint64(7)
                                                  << QByteArray("/threads/0/ops/5/ops/1")
                                                  << QByteArray("graph nodes included");
        QTest::newRow("issued") << QByteArray("maxIssued") << qint64(100) << QByteArray()
                                << QByteArray("the limit is 100");
        QTest::newRow("threads") << QByteArray("maxThreads") << qint64(2) << QByteArray("/threads/1/workers")
                                 << QByteArray("too many host threads: 3 (pool workers included); the limit is 2");
        QTest::newRow("streams") << QByteArray("maxStreams") << qint64(3) << QByteArray("/streams/3")
                                 << QByteArray("too many streams: the limit is 3");
        QTest::newRow("devices") << QByteArray("maxDevices") << qint64(1) << QByteArray("/devices/1")
                                 << QByteArray("too many devices: the limit is 1");
        QTest::newRow("bytes") << QByteArray("maxBytes") << qint64(100) << QByteArray()
                               << QByteArray("bytes; the limit is 100");
        QTest::newRow("depth") << QByteArray("maxDepth") << qint64(3) << QByteArray()
                               << QByteArray("nesting deeper than 3 levels");
    }

    void limits()
    {
        QFETCH(QByteArray, limit);
        QFETCH(qint64, value);
        QFETCH(QByteArray, path);
        QFETCH(QByteArray, message);
        ScenarioLimits limits;
        if (limit == "maxOps")
            limits.maxOps = value;
        else if (limit == "maxIssued")
            limits.maxIssued = value;
        else if (limit == "maxThreads")
            limits.maxThreads = int(value);
        else if (limit == "maxStreams")
            limits.maxStreams = int(value);
        else if (limit == "maxDevices")
            limits.maxDevices = int(value);
        else if (limit == "maxBytes")
            limits.maxBytes = size_t(value);
        else if (limit == "maxDepth")
            limits.maxDepth = int(value);
        QVERIFY(parse(kBase).ok()); // within the default limits
        const auto r = parse(kBase, {}, limits);
        QVERIFY2(!r.ok(), "limit not enforced");
        QVERIFY2(qb(r.error().path) == path, r.error().toString().c_str());
        QVERIFY2(qb(r.error().message).contains(message), r.error().toString().c_str());
    }

    void issuedCountMatchesCountOperations()
    {
        // The limit counts what countOperations() counts, plus warm-up iterations.
        const auto r = parse(kBase);
        QVERIFY(r.ok());
        const int64_t measured = countOperations(r->scenario);
        const int64_t issued = measured / r->scenario.run.iterations * (r->scenario.run.iterations + 1);
        ScenarioLimits limits;
        limits.maxIssued = issued;
        QVERIFY2(parse(kBase, {}, limits).ok(), "the exact count must be allowed");
        limits.maxIssued = issued - 1;
        const auto over = parse(kBase, {}, limits);
        QVERIFY(!over.ok());
        QVERIFY2(qb(over.error().message).contains(qb("issue " + std::to_string(issued) + " operations")),
                 over.error().toString().c_str());
    }

    // The default limit on issued operations keeps a run within its memory budget (docs/SCENARIO.md: about 290
    // bytes per issued op): the count at the limit is read, one more is refused, before anything is simulated.
    void defaultIssuedLimitIsSafe()
    {
        const int64_t limit = ScenarioLimits{}.maxIssued;
        QVERIFY(limit <= 5'000'000);
        const auto scenario = [](int64_t repeat) {
            return R"({"format": "streamscope-scenario", "version": 1, "devices": [{"index": 0}],
                       "streams": [{"name": "s1", "device": 0}], "run": {"iterations": 1, "warmup": 0},
                       "threads": [{"name": "t", "repeat": )" + std::to_string(repeat) + R"(,
                                    "ops": [{"op": "kernel", "stream": "s1", "kernel": "empty", "grid": 1}]}]})";
        };
        const auto at = parse(scenario(limit));
        QVERIFY2(at.ok(), describe(at).c_str());
        const auto over = parse(scenario(limit + 1));
        QVERIFY(!over.ok());
        QVERIFY2(qb(over.error().message).contains(qb("the limit is " + std::to_string(limit))),
                 over.error().toString().c_str());
    }

    // A thread without ops repeated two billion times would keep the runner busy for hours doing nothing: each
    // empty repetition counts as one issued operation.
    void emptyRepetitionsCount()
    {
        const auto r = parse(R"({"format": "streamscope-scenario", "version": 1, "devices": [{"index": 0}],
                                 "threads": [{"name": "t", "repeat": 2000000000, "ops": []}]})");
        QVERIFY(!r.ok());
        QVERIFY2(qb(r.error().message).contains(qb("the limit is")), r.error().toString().c_str());
    }

    // Two equal keys in one object: nlohmann would keep the last silently; the reader names the key and its object.
    void duplicateKeysAreRefused_data()
    {
        QTest::addColumn<QByteArray>("text");
        QTest::addColumn<QByteArray>("path");
        QTest::addColumn<QByteArray>("key");
        QTest::newRow("top") << QByteArray(R"({"format": "streamscope-scenario", "version": 1, "version": 2})")
                             << QByteArray() << QByteArray("version");
        QTest::newRow("thread") << QByteArray(R"({"format": "streamscope-scenario", "version": 1,
            "devices": [{"index": 0}], "threads": [{"name": "a", "ops": []}, {"name": "b", "repeat": 2,
            "ops": [], "repeat": 3}]})") << QByteArray("/threads/1") << QByteArray("repeat");
        QTest::newRow("escaped key") << QByteArray(R"({"format": "streamscope-scenario", "a/b": {"x": 1, "x": 2}})")
                                     << QByteArray("/a~1b") << QByteArray("x");
    }

    void duplicateKeysAreRefused()
    {
        QFETCH(QByteArray, text);
        QFETCH(QByteArray, path);
        QFETCH(QByteArray, key);
        const auto r = parse(text.toStdString());
        QVERIFY(!r.ok());
        QVERIFY2(qb(r.error().path) == path, r.error().toString().c_str());
        QVERIFY2(qb(r.error().message).contains("duplicate key \"" + key + "\""), r.error().toString().c_str());
    }

    void deepNestingIsAnErrorNotACrash_data()
    {
        QTest::addColumn<int>("depth");
        QTest::newRow("33") << 33;
        QTest::newRow("10000") << 10000;
        QTest::newRow("1000000") << 1000000;
    }

    void deepNestingIsAnErrorNotACrash()
    {
        QFETCH(int, depth);
        const std::string prefix = R"({"format": "streamscope-scenario", "version": 1, "description": )";
        const std::string text =
            prefix + std::string(size_t(depth - 1), '[') + std::string(size_t(depth - 1), ']') + "}";
        const auto r = parse(text);
        QVERIFY(!r.ok());
        // Reported where the 33rd level opens: the 32nd bracket.
        QCOMPARE(qb(r.error().message), qb("nesting deeper than 32 levels at byte " +
                                           std::to_string(prefix.size() + 32) + " (line 1, column " +
                                           std::to_string(prefix.size() + 32) + ")"));
    }

    void bracketsInStringsDoNotNest()
    {
        Json doc = Json::parse(kBase);
        doc["description"] = std::string(100, '[') + "\"{{{" + std::string(100, '{');
        doc["streams"].push_back(Json{{"name", std::string(40, '[') + "\\"}});
        doc["threads"][0]["ops"][6]["stream"] = doc["streams"][4]["name"];
        const auto r = parse(doc.dump());
        QVERIFY2(r.ok(), describe(r).c_str());
    }

    void nestingAtTheLimitIsRead()
    {
        // 32 levels: the root, "variants", the variant, "set", then 28 arrays in a value that is never applied.
        const auto text = [](int arrays) {
            Json doc = Json::parse(kBase);
            doc["variants"][1]["set"]["/description"] = Json::parse(std::string(size_t(arrays), '[') +
                                                                    std::string(size_t(arrays), ']'));
            return doc.dump();
        };
        const auto atLimit = parse(text(28));
        QVERIFY2(atLimit.ok(), describe(atLimit).c_str());
        const auto over = parse(text(29));
        QVERIFY(!over.ok());
        QVERIFY2(qb(over.error().message).startsWith("nesting deeper than 32 levels"), over.error().toString().c_str());
    }

    void hugeCountsDoNotOverflow()
    {
        // 2^31 repeats x 2^31 iterations x many ops overflows int64 if multiplied naively.
        Json doc = Json::parse(kBase);
        doc["threads"][0]["repeat"] = 2147483647;
        doc["run"]["iterations"] = 2147483647;
        doc["run"]["warmup"] = 2147483647;
        const auto r = parse(doc.dump());
        QVERIFY(!r.ok());
        QVERIFY2(qb(r.error().message).contains("the run would issue more than"), r.error().toString().c_str());
    }

    void manyOpsGiveAnError()
    {
        Json doc = Json::parse(kBase);
        Json& ops = doc["threads"][0]["ops"];
        for (int i = 0; i < 3000; ++i)
            ops.push_back(Json{{"op", "host-work"}, {"duration_us", 1}});
        ScenarioLimits limits;
        limits.maxOps = 2000;
        const auto r = parse(doc.dump(), {}, limits);
        QVERIFY(!r.ok());
        // "main" has 15 ops and 3 graph nodes; the 1983rd op added is the 2001st.
        QCOMPARE(qb(r.error().path), QByteArray("/threads/0/ops/1997"));
        QVERIFY(parse(doc.dump()).ok());
    }

    void variantApplies()
    {
        const auto r = parse(kBase, "serial");
        QVERIFY2(r.ok(), describe(r).c_str());
        const Scenario& s = r->scenario;
        QCOMPARE(qb(s.threads[0].ops[4].stream), QByteArray("s1"));
        QCOMPARE(s.threads[0].ops[4].streamIndex, 0);
        QCOMPARE(kindName(s.streams[2].kind), kindName(StreamKind::Blocking));
        // The variant's expectations replace the scenario's.
        QCOMPARE(s.expect.size(), size_t(1));
        QCOMPARE(qb(s.expect[0].metric), QByteArray("max_concurrency"));
        QCOMPARE(s.expect[0].kinds, (std::vector<std::string>{"kernel"}));
        QCOMPARE(s.variants.size(), size_t(2));
    }

    void variantEffectReplacesTheScenarios()
    {
        const std::string path = std::string(STREAMSCOPE_SOURCE_DIR) + "/resources/presets/07-multi-gpu.json";
        const auto main = loadScenarioFile(path);
        QVERIFY2(main.ok(), describe(main).c_str());
        QCOMPARE(qb(main->scenario.effect), QByteArray("multi-device-overlap"));
        const auto one = loadScenarioFile(path, "one-device");
        QVERIFY2(one.ok(), describe(one).c_str());
        QCOMPARE(qb(one->scenario.effect), QByteArray("gpu-filling-kernel"));
        // Written back, the effect stays where it was.
        const auto again = parseScenario(scenarioToJson(one->scenario), "again");
        QVERIFY2(again.ok(), describe(again).c_str());
        QCOMPARE(qb(again->scenario.effect), QByteArray("gpu-filling-kernel"));
        QCOMPARE(qb(again->scenario.variants[0].effect), QByteArray("gpu-filling-kernel"));
    }

    void variantWithoutExpectKeepsTheScenarios()
    {
        const auto r = parse(kBase, "more");
        QVERIFY2(r.ok(), describe(r).c_str());
        QCOMPARE(r->scenario.threads[0].repeat, 5);
        QCOMPARE(r->scenario.expect.size(), size_t(2));
        QCOMPARE(qb(r->scenario.expect[0].id), QByteArray("overlap"));
        // Without a variant nothing changes.
        const auto base = parse(kBase);
        QCOMPARE(base->scenario.threads[0].repeat, 2);
        QCOMPARE(kindName(base->scenario.streams[2].kind), kindName(StreamKind::NonBlocking));
    }

    void variantAppendsAndAddsStreams()
    {
        Json doc = Json::parse(kBase);
        doc["variants"].push_back(Json::parse(R"({"id": "four", "set": {
            "/streams/-": {"name": "s4", "kind": "non-blocking"},
            "/threads/0/ops/7/stream": "s4",
            "/threads/0/ops/-": {"op": "stream-sync", "stream": "s4"},
            "/run/env/CUDA_DEVICE_MAX_CONNECTIONS": 1},
          "expect": [{"metric": "busy_us", "streams": ["s4"], "op": ">", "value": 0}]})"));
        const std::string text = doc.dump();
        QVERIFY2(parse(text).ok(), describe(parse(text)).c_str()); // "s4" is known to the variant's expect
        const auto r = parse(text, "four");
        QVERIFY2(r.ok(), describe(r).c_str());
        QCOMPARE(r->scenario.streams.size(), size_t(5));
        QCOMPARE(r->scenario.threads[0].ops[7].streamIndex, 4);
        QCOMPARE(kindName(r->scenario.threads[0].ops.back().kind), kindName(OpKind::StreamSync));
        QCOMPARE(r->scenario.run.maxConnections(), std::optional<int>(1));
        QCOMPARE(r->scenario.expect[0].streams, (std::vector<std::string>{"s4"}));
    }

    void variantWildcards()
    {
        Json doc = Json::parse(kBase);
        doc["variants"].push_back(Json::parse(R"({"id": "star", "set": {
            "/threads/*/ops/*/host": "pageable",
            "/streams/*/priority": -2,
            "/threads/0/ops/5/ops/*/name": "node"}})"));
        doc["threads"][0]["ops"][5]["ops"][1]["name"] = "named";
        const auto r = parse(doc.dump(), "star");
        QVERIFY2(r.ok(), describe(r).c_str());
        ScenarioLimits small;
        small.maxBytes = doc.dump().size() + 10;
        QVERIFY2(parse(doc.dump(), "star", small).ok(), "a few small copies are allowed");
        const Scenario& s = r->scenario;
        // Only values that exist are replaced: the one copy with "host", the one stream with "priority".
        QVERIFY(s.threads[0].ops[1].pinned);
        QVERIFY(!s.threads[1].ops[2].pinned);
        QCOMPARE(r->warnings.size(), size_t(1));
        QCOMPARE(qb(r->warnings[0].path), QByteArray("/threads/1/ops/2/host"));
        QCOMPARE(s.streams[0].priority, 0);
        QCOMPARE(s.streams[2].priority, -2);
        QVERIFY(s.threads[0].ops[5].ops[0].name.empty());
        QCOMPARE(qb(s.threads[0].ops[5].ops[1].name), QByteArray("node"));
    }

    void variantErrors_data()
    {
        QTest::addColumn<QByteArray>("set");
        QTest::addColumn<QByteArray>("path");
        QTest::addColumn<QByteArray>("message");
        QTest::newRow("missing parent") << QByteArray(R"({"/threads/5/repeat": 1})")
                                        << QByteArray("/variants/2/set/~1threads~15~1repeat")
                                        << QByteArray(R"("/threads/5" does not exist)");
        QTest::newRow("past the end") << QByteArray(R"({"/streams/9": {"name": "x"}})")
                                      << QByteArray("/variants/2/set/~1streams~19")
                                      << QByteArray(R"(the array "/streams" has 4 elements)");
        QTest::newRow("not an index") << QByteArray(R"({"/streams/x": 1})")
                                      << QByteArray("/variants/2/set/~1streams~1x")
                                      << QByteArray("is not an index");
        QTest::newRow("into a scalar") << QByteArray(R"({"/title/x": 1})") << QByteArray("/variants/2/set/~1title~1x")
                                       << QByteArray("not an object or array");
        QTest::newRow("wildcard matches nothing") << QByteArray(R"({"/threads/0/ops/*/hots": "pageable"})")
                                                  << QByteArray("/variants/2/set/~1threads~10~1ops~1*~1hots")
                                                  << QByteArray("it matches nothing");
        QTest::newRow("wildcard at the top") << QByteArray(R"({"/*/0/id": "x"})")
                                             << QByteArray("/variants/2/set/~1*~10~1id")
                                             << QByteArray("cannot stand for a top-level field");
        QTest::newRow("wildcard copies too much")
            << QByteArray::fromStdString(Json{{"/threads/*/ops/*/stream", std::string(5000000, 'x')}}.dump())
            << QByteArray("/variants/2/set/~1threads~1*~1ops~1*~1stream")
            << QByteArray("17 copies of 5000002 bytes exceed the limit of 67108864 bytes");
        QTest::newRow("result invalid") << QByteArray(R"({"/streams/0/kind": "bogus"})")
                                        << QByteArray("/streams/0/kind")
                                        << QByteArray(R"(with variant "bad" applied)");
    }

    void variantErrors()
    {
        QFETCH(QByteArray, set);
        QFETCH(QByteArray, path);
        QFETCH(QByteArray, message);
        Json doc = Json::parse(kBase);
        doc["variants"].push_back(Json{{"id", "bad"}, {"set", Json::parse(set.toStdString())}});
        const auto r = parse(doc.dump(), "bad");
        QVERIFY(!r.ok());
        QVERIFY2(qb(r.error().path) == path, r.error().toString().c_str());
        QVERIFY2(qb(r.error().message).contains(message), r.error().toString().c_str());
    }

    void unknownVariant()
    {
        const auto r = parse(kBase, "fast");
        QVERIFY(!r.ok());
        QCOMPARE(qb(r.error().path), QByteArray("/variants"));
        QVERIFY2(qb(r.error().message).contains(R"(unknown variant "fast" (known: "serial", "more"))"),
                 r.error().toString().c_str());

        const auto none = parse(patched("/variants", ""), "fast");
        QVERIFY(!none.ok());
        QVERIFY2(qb(none.error().message).contains("this scenario has no variants"), none.error().toString().c_str());

        // A broken file says what is broken, not that the variant is missing.
        const auto broken = parse(patched("/streams/0/kind", R"("bogus")"), "fast");
        QVERIFY(!broken.ok());
        QCOMPARE(qb(broken.error().path), QByteArray("/streams/0/kind"));
    }

    void loadFile()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const std::string good = dir.filePath(QStringLiteral("good.json")).toStdString();
        const std::string bad = dir.filePath(QStringLiteral("bad.json")).toStdString();
        {
            QFile f(QString::fromStdString(good));
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(kBase);
        }
        {
            QFile f(QString::fromStdString(bad));
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(QByteArray::fromStdString(patched("/threads/0/ops/1/stream", R"("s9")")));
        }
        const auto r = loadScenarioFile(good);
        QVERIFY2(r.ok(), describe(r).c_str());
        QCOMPARE(r->scenario.threads.size(), size_t(2));
        const auto v = loadScenarioFile(good, "more");
        QVERIFY(v.ok());
        QCOMPARE(v->scenario.threads[0].repeat, 5);

        const auto e = loadScenarioFile(bad);
        QVERIFY(!e.ok());
        QCOMPARE(qb(e.error().file), qb(bad));
        QCOMPARE(qb(e.error().path), QByteArray("/threads/0/ops/1/stream"));
        QVERIFY(qb(e.error().toString()).startsWith(qb(bad + ": /threads/0/ops/1/stream: unknown stream")));

        const std::string missing = dir.filePath(QStringLiteral("missing.json")).toStdString();
        const auto m = loadScenarioFile(missing);
        QVERIFY(!m.ok());
        QCOMPARE(qb(m.error().file), qb(missing));
        QVERIFY2(qb(m.error().message).contains("does not exist"), m.error().toString().c_str());

        const auto d = loadScenarioFile(dir.path().toStdString());
        QVERIFY(!d.ok());
        QVERIFY2(qb(d.error().message).contains("is a directory"), d.error().toString().c_str());

        ScenarioLimits small;
        small.maxBytes = 64;
        const auto big = loadScenarioFile(good, {}, small);
        QVERIFY(!big.ok());
        QVERIFY2(qb(big.error().message).contains("the limit is 64"), big.error().toString().c_str());
    }

    void validateResolvesAnEditorScenario()
    {
        Scenario s = editorScenario();
        const auto r = validateScenario(s, "editor");
        QVERIFY2(r.ok(), describe(r).c_str());
        const Scenario& v = r->scenario;
        QCOMPARE(v.threads[0].ops[0].streamIndex, 0);
        QCOMPARE(v.threads[0].ops[2].streamIndex, 1);
        QCOMPARE(v.threads[0].ops[1].eventIndex, 0);
        QCOMPARE(v.threads[0].ops[2].eventIndex, 0);
        QCOMPARE(v.events, (std::vector<std::string>{"done"}));
        QCOMPARE(v.devices.size(), size_t(1)); // derived from the streams and threads
        QVERIFY(v.threads[0].ops[0].gridGiven);
        QVERIFY(r->warnings.empty());

        s.threads[0].ops[3].pinned = false;
        const auto w = validateScenario(s, "editor");
        QVERIFY(w.ok());
        QCOMPARE(w->warnings.size(), size_t(1));
        QCOMPARE(qb(w->warnings[0].path), QByteArray("/threads/0/ops/3/host"));
    }

    void validateReportsFilePaths_data()
    {
        QTest::addColumn<int>("breakage");
        QTest::addColumn<QByteArray>("path");
        QTest::addColumn<QByteArray>("message");
        QTest::newRow("unknown stream") << 0 << QByteArray("/threads/0/ops/3/stream")
                                        << QByteArray(R"(unknown stream "zz")");
        QTest::newRow("duplicate stream") << 1 << QByteArray("/streams/1/name")
                                          << QByteArray(R"(duplicate stream name "a")");
        QTest::newRow("spin without duration") << 2 << QByteArray("/threads/0/ops/0/duration_us")
                                               << QByteArray("duration_us must be greater than 0");
        QTest::newRow("negative bytes") << 3 << QByteArray("/threads/0/ops/3/bytes")
                                        << QByteArray("bytes must not be negative");
        QTest::newRow("bad patch") << 4 << QByteArray("/variants/0/set")
                                   << QByteArray("expected an object, got string");
        QTest::newRow("no threads") << 5 << QByteArray("/threads")
                                    << QByteArray("a scenario needs at least one host thread");
        QTest::newRow("node in another stream") << 6 << QByteArray("/threads/0/ops/4/ops/0/stream")
                                                << QByteArray("a graph node runs in its graph's stream");
        QTest::newRow("too many ops") << 7 << QByteArray("/threads/0/ops/2")
                                      << QByteArray("too many operations");
    }

    void validateReportsFilePaths()
    {
        QFETCH(int, breakage);
        QFETCH(QByteArray, path);
        QFETCH(QByteArray, message);
        Scenario s = editorScenario();
        ScenarioLimits limits;
        switch (breakage) {
        case 0: s.threads[0].ops[3].stream = "zz"; break;
        case 1: s.streams[1].name = "a"; break;
        case 2: s.threads[0].ops[0].durationUs = 0; break;
        case 3: s.threads[0].ops[3].bytes = -5; break;
        case 4: s.variants.push_back(Variant{"v", {}, {}, "{not json", {}, false, {}}); break;
        case 5: s.threads.clear(); break;
        case 6: {
            Op graph;
            graph.kind = OpKind::Graph;
            graph.stream = "a";
            Op node;
            node.kind = OpKind::Memset;
            node.stream = "b";
            node.bytes = 8;
            graph.ops = {node};
            s.threads[0].ops.push_back(graph);
            break;
        }
        case 7: limits.maxOps = 2; break;
        }
        const auto r = validateScenario(s, "editor", limits);
        QVERIFY(!r.ok());
        QCOMPARE(qb(r.error().file), QByteArray("editor"));
        QVERIFY2(qb(r.error().path) == path, r.error().toString().c_str());
        QVERIFY2(qb(r.error().message).contains(message), r.error().toString().c_str());
    }
};

QTEST_GUILESS_MAIN(TestScenarioJson)
#include "tst_scenario_json.moc"
