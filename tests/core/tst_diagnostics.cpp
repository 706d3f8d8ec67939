// The diagnostics (core/diagnostics/diagnostics.h): each rule on a small trace where it must fire and one where it
// must not (simulated scenarios, the same with the flows or the embedded scenario taken away as an importer would
// leave them, and traces made by hand); every lesson and variant on the simulator and every trace recorded on an H200,
// where the rules must name the effect the lesson teaches and stay silent on the good configurations.
#include "diagnostics.h"

#include "analysis.h"
#include "resources.h"
#include "runner.h"
#include "scenario_json.h"
#include "simulator.h"
#include "span_names.h"
#include "trace_json.h"

#include <QTest>

#include <filesystem>
#include <functional>
#include <map>
#include <set>
#include <string>

using namespace streamscope;

namespace {

QString q(const std::string& s)
{
    return QString::fromStdString(s);
}
QString operator""_q(const char* s, size_t n)
{
    return QString::fromUtf8(s, qsizetype(n));
}

// Builds scenarios in code.
class Builder {
public:
    Builder()
    {
        m_s.id = "test";
        m_s.devices.push_back({0, "h200"});
    }
    Builder& stream(const std::string& name, StreamKind kind = StreamKind::NonBlocking, int device = 0)
    {
        m_s.streams.push_back({name, device, kind, 0});
        return *this;
    }
    Builder& thread(const std::string& name, int repeat = 1, int workers = 1)
    {
        ThreadSpec t;
        t.name = name;
        t.repeat = repeat;
        t.workers = workers;
        m_s.threads.push_back(t);
        return *this;
    }
    Builder& env(const std::string& k, const std::string& v)
    {
        m_s.run.env[k] = v;
        return *this;
    }
    Builder& op(Op o)
    {
        m_s.threads.back().ops.push_back(std::move(o));
        return *this;
    }
    static Op spinOp(const std::string& name, const std::string& stream, double us, uint32_t grid = 1)
    {
        Op o;
        o.kind = OpKind::Kernel;
        o.kernel = KernelKind::Spin;
        o.name = name;
        o.stream = stream;
        o.durationUs = us;
        o.grid = {grid, 1, 1};
        o.gridGiven = true;
        o.block = {256, 1, 1};
        return o;
    }
    Builder& spin(const std::string& name, const std::string& stream, double us, uint32_t grid = 1)
    {
        return op(spinOp(name, stream, us, grid));
    }
    Builder& copy(const std::string& name, const std::string& stream, CopyKind kind, int64_t bytes, bool pinned)
    {
        Op o;
        o.kind = OpKind::Memcpy;
        o.name = name;
        o.stream = stream;
        o.copy = kind;
        o.bytes = bytes;
        o.pinned = pinned;
        return op(o);
    }
    Builder& simple(OpKind kind, const std::string& stream = {}, const std::string& event = {}, double us = 0,
                    const std::string& name = {})
    {
        Op o;
        o.kind = kind;
        o.stream = stream;
        o.event = event;
        o.durationUs = us;
        o.name = name;
        o.bytes = kind == OpKind::Malloc || kind == OpKind::Free ? 1 << 20 : 0;
        return op(o);
    }
    Builder& graph(const std::string& name, const std::string& stream, int nodes, double us)
    {
        Op g;
        g.kind = OpKind::Graph;
        g.name = name;
        g.stream = stream;
        for (int i = 0; i < nodes; ++i)
            g.ops.push_back(spinOp("node", stream, us));
        return op(g);
    }
    Scenario build() const
    {
        auto r = validateScenario(m_s, "test");
        if (!r)
            qFatal("%s", r.error().toString().c_str());
        return r->scenario;
    }

private:
    Scenario m_s;
};

Trace simulate(const Scenario& s)
{
    SimulatorBackend sim;
    auto out = runScenario(s, sim);
    if (!out.status)
        qFatal("%s", out.status.error().toString().c_str());
    return std::move(out.trace);
}

Trace lessonTrace(const std::string& id, const std::string& variant)
{
    auto p = findPreset(id);
    if (!p)
        qFatal("%s", p.error().toString().c_str());
    auto l = loadScenarioFile(p->path, variant);
    if (!l)
        qFatal("%s", l.error().toString().c_str());
    return simulate(l->scenario);
}

// What an importer leaves: no embedded scenario, and only the flows of the given kinds.
Trace imported(Trace t, std::set<FlowKind> keep = {})
{
    t.info.scenarioJson.clear();
    t.info.source = TraceSource::Imported;
    std::erase_if(t.flows, [&keep](const Flow& f) { return !keep.count(f.kind); });
    return t;
}

Trace withoutImplicitFlows(Trace t)
{
    std::erase_if(t.flows, [](const Flow& f) { return f.kind == FlowKind::Implicit; });
    return t;
}

Trace withoutScenario(Trace t)
{
    t.info.scenarioJson.clear();
    return t;
}

// A hand-made trace: span "track:kind:start:end:name[:grid]" (µs), tracks 'h...' host threads, others streams;
// flows "from>to:kind" by span name; device 0 described by `properties` ("sm_count=4 ...").
Trace handMade(const QString& spans, const QString& flows = {}, const QString& properties = {})
{
    Trace t;
    std::map<QString, uint32_t> tracks;
    for (const QString& item : spans.split(QLatin1Char(' '), Qt::SkipEmptyParts)) {
        const QStringList f = item.split(QLatin1Char(':'));
        auto it = tracks.find(f[0]);
        if (it == tracks.end()) {
            Track tr;
            tr.name = f[0].toStdString();
            tr.kind = tr.name[0] == 'h' ? TrackKind::HostThread : TrackKind::Stream;
            tr.device = 0;
            it = tracks.emplace(f[0], t.addTrack(tr)).first;
        }
        SpanInit s;
        s.track = it->second;
        s.kind = *spanKindFromString(f[1].toStdString());
        const std::string name = f[4].toStdString();
        s.name = name;
        s.start = f[2].toLongLong() * 1000;
        s.end = f[3].toLongLong() * 1000;
        if (f.size() > 5) {
            s.grid = {f[5].toUInt(), 1, 1};
            s.block = {256, 1, 1};
        }
        t.addSpan(s);
    }
    auto byName = [&t](const QString& name) {
        for (uint32_t i = 0; i < t.spanCount(); ++i)
            if (t.spanName(i) == name.toStdString())
                return i;
        qFatal("no span %s", qPrintable(name));
        return uint32_t(0);
    };
    for (const QString& item : flows.split(QLatin1Char(' '), Qt::SkipEmptyParts)) {
        const QStringList f = item.split(QLatin1Char(':'));
        const QStringList ends = f[0].split(QLatin1Char('>'));
        t.addFlow(byName(ends[0]), byName(ends[1]), *flowKindFromString(f[1].toStdString()));
    }
    DeviceInfo d;
    d.index = 0;
    d.name = "hand-made GPU";
    for (const QString& p : properties.split(QLatin1Char(' '), Qt::SkipEmptyParts)) {
        const QStringList kv = p.split(QLatin1Char('='));
        d.properties.emplace_back(kv[0].toStdString(), kv[1].toStdString());
    }
    t.info.devices.push_back(d);
    t.info.source = TraceSource::Imported;
    t.finalize();
    return t;
}

Trace handMade(const char* spans, const char* flows = "", const char* properties = "")
{
    return handMade(QString::fromUtf8(spans), QString::fromUtf8(flows), QString::fromUtf8(properties));
}

using Factory = std::function<Trace()>;

Scenario pageableCopies(bool pinned)
{
    return Builder()
        .stream("s1")
        .stream("s2")
        .thread("main")
        .copy("h2d in", "s1", CopyKind::H2D, 64 << 20, pinned)
        .spin("compute", "s2", 300)
        .copy("d2h out", "s1", CopyKind::D2H, 64 << 20, pinned)
        .simple(OpKind::DeviceSync)
        .build();
}

Scenario legacyBetween(StreamKind kind)
{
    return Builder()
        .stream("s1", kind)
        .stream("s2", kind)
        .stream("null", StreamKind::LegacyDefault)
        .thread("main")
        .spin("a", "s1", 200)
        .spin("legacy", "null", 10)
        .spin("b", "s2", 200)
        .spin("legacy2", "null", 10)
        .simple(OpKind::DeviceSync)
        .build();
}

Scenario threadsOnOneStream(StreamKind kind)
{
    return Builder()
        .stream("default", kind)
        .thread("pool", 8, 2)
        .spin("task", "default", 200)
        .simple(OpKind::StreamSync, "default")
        .build();
}

Scenario depthFirst(int streams, const std::string& connections)
{
    Builder b;
    for (int s = 0; s < streams; ++s)
        b.stream("s" + std::to_string(s));
    b.env("CUDA_DEVICE_MAX_CONNECTIONS", connections).thread("main");
    for (int s = 0; s < streams; ++s)
        b.spin("first " + std::to_string(s), "s" + std::to_string(s), 200)
            .spin("second " + std::to_string(s), "s" + std::to_string(s), 200);
    return b.simple(OpKind::DeviceSync).build();
}

Scenario bigAndSmall(uint32_t grid, double us)
{
    return Builder()
        .stream("s1")
        .stream("s2")
        .thread("main")
        .spin("big", "s1", us, grid)
        .spin("small", "s2", 100, 132)
        .simple(OpKind::DeviceSync)
        .build();
}

Scenario hostFuncs(int streams)
{
    Builder b;
    for (int s = 0; s < streams; ++s)
        b.stream("s" + std::to_string(s));
    b.thread("main");
    for (int i = 0; i < 3; ++i) {
        const std::string s = "s" + std::to_string(i % streams);
        b.spin("before " + std::to_string(i), s, 50, 8)
            .simple(OpKind::HostFunc, s, {}, 150, "callback " + std::to_string(i));
    }
    return b.simple(OpKind::DeviceSync).build();
}

Scenario syncLoop(double kernelUs)
{
    return Builder()
        .stream("s")
        .thread("main", 20)
        .spin("work", "s", kernelUs, 16)
        .simple(OpKind::StreamSync, "s")
        .build();
}

Scenario syncOnceAtTheEnd()
{
    Builder b;
    b.stream("s").thread("main");
    for (int i = 0; i < 20; ++i)
        b.spin("work", "s", 20, 16);
    return b.simple(OpKind::StreamSync, "s").build();
}

Scenario tinyKernels(double us)
{
    return Builder().stream("s").thread("main", 200).spin("tiny", "s", us).build();
}

Scenario tinyGraph()
{
    return Builder().stream("s").thread("main", 10).graph("20 tiny kernels", "s", 20, 1).build();
}

Scenario allocation(bool betweenKernels)
{
    Builder b;
    b.stream("s1").thread("main");
    if (betweenKernels)
        b.spin("k1", "s1", 500, 16).simple(OpKind::Free).spin("k2", "s1", 100, 16);
    else
        b.simple(OpKind::Malloc).spin("k1", "s1", 500, 16).spin("k2", "s1", 100, 16);
    return b.simple(OpKind::DeviceSync).build();
}

Scenario waitFor(bool recorded)
{
    Builder b;
    b.stream("s1").stream("s2").thread("main").spin("producer", "s1", 300, 16);
    if (recorded)
        b.simple(OpKind::Record, "s1", "ready");
    b.simple(OpKind::Wait, "s2", "ready").spin("consumer", "s2", 100, 16);
    return b.simple(OpKind::DeviceSync).build();
}

const std::map<std::string, Factory>& cases()
{
    static const std::map<std::string, Factory> c = {
        {"pageable copies", [] { return simulate(pageableCopies(false)); }},
        {"pinned copies", [] { return simulate(pageableCopies(true)); }},
        {"pageable copies, imported", [] { return imported(simulate(pageableCopies(false))); }},
        {"pinned copies, imported", [] { return imported(simulate(pageableCopies(true))); }},
        {"pageable copies, launch flows only",
         [] { return imported(simulate(pageableCopies(false)), {FlowKind::Launch}); }},

        {"blocking streams and the legacy stream", [] { return simulate(legacyBetween(StreamKind::Blocking)); }},
        {"non-blocking streams and the legacy stream", [] { return simulate(legacyBetween(StreamKind::NonBlocking)); }},
        {"per-thread default streams and the legacy stream",
         [] { return simulate(legacyBetween(StreamKind::PerThreadDefault)); }},
        {"blocking streams, no implicit flows",
         [] { return withoutImplicitFlows(simulate(legacyBetween(StreamKind::Blocking))); }},
        {"non-blocking streams, no implicit flows",
         [] { return withoutImplicitFlows(simulate(legacyBetween(StreamKind::NonBlocking))); }},
        {"threads share the legacy stream", [] { return simulate(threadsOnOneStream(StreamKind::LegacyDefault)); }},
        {"threads with per-thread default streams",
         [] { return simulate(threadsOnOneStream(StreamKind::PerThreadDefault)); }},

        {"12 streams on 4 queues", [] { return simulate(depthFirst(12, "4")); }},
        {"12 streams on 32 queues", [] { return simulate(depthFirst(12, "32")); }},
        {"4 streams on 4 queues", [] { return simulate(depthFirst(4, "4")); }},
        {"12 streams on 4 queues, imported",
         [] {
             Trace t = imported(simulate(depthFirst(12, "4")), {FlowKind::Launch});
             t.info.settings = {{"CUDA_DEVICE_MAX_CONNECTIONS", "4"}};
             return t;
         }},
        {"12 streams, default connections, imported",
         [] { return imported(simulate(depthFirst(12, "8")), {FlowKind::Launch}); }},

        {"grid of ten waves", [] { return simulate(bigAndSmall(10560, 50)); }},
        {"grid of half the GPU", [] { return simulate(bigAndSmall(528, 500)); }},
        {"grid of ten waves, by hand",
         [] {
             // 4 SMs x 8 blocks of 256 threads = 32 resident blocks; the big kernel has 320.
             return handMade("h:api-call:0:2:launch-big h:api-call:2:4:launch-small s1:kernel:5:505:big:320 "
                             "s2:kernel:480:530:small:4",
                             "launch-big>big:launch launch-small>small:launch",
                             "sm_count=4 max_threads_per_sm=2048 max_blocks_per_sm=32");
         }},
        {"grid that fits, by hand",
         [] {
             return handMade("h:api-call:0:2:launch-big h:api-call:2:4:launch-small s1:kernel:5:505:big:32 "
                             "s2:kernel:480:530:small:4",
                             "launch-big>big:launch launch-small>small:launch",
                             "sm_count=4 max_threads_per_sm=2048 max_blocks_per_sm=32");
         }},
        {"grid of ten waves, device unknown",
         [] {
             return handMade("h:api-call:0:2:launch-big h:api-call:2:4:launch-small s1:kernel:5:505:big:320 "
                             "s2:kernel:480:530:small:4",
                             "launch-big>big:launch launch-small>small:launch");
         }},

        {"host functions in three streams", [] { return simulate(hostFuncs(3)); }},
        {"host functions in one stream", [] { return simulate(hostFuncs(1)); }},
        {"host functions in three streams, imported", [] { return imported(simulate(hostFuncs(3))); }},
        {"host functions, by hand",
         [] {
             return handMade("s0:kernel:0:100:k0 s0:host-func:105:305:callback0 s1:kernel:0:100:k1 "
                             "s1:host-func:306:506:callback1");
         }},
        {"host functions that overlapped, by hand",
         [] {
             return handMade("s0:kernel:0:100:k0 s0:host-func:105:305:callback0 s1:kernel:0:100:k1 "
                             "s1:host-func:110:310:callback1");
         }},

        {"sync after every short kernel", [] { return simulate(syncLoop(20)); }},
        {"sync after every long kernel", [] { return simulate(syncLoop(2000)); }},
        {"sync once at the end", [] { return simulate(syncOnceAtTheEnd()); }},

        {"200 tiny kernels", [] { return simulate(tinyKernels(1)); }},
        {"200 kernels of 50 us", [] { return simulate(tinyKernels(50)); }},
        {"graphs of tiny kernels", [] { return simulate(tinyGraph()); }},

        {"free between kernels", [] { return simulate(allocation(true)); }},
        {"malloc before the work", [] { return simulate(allocation(false)); }},
        {"free between kernels, imported", [] { return imported(simulate(allocation(true)), {FlowKind::Launch}); }},
        {"malloc before the work, imported", [] { return imported(simulate(allocation(false)), {FlowKind::Launch}); }},

        {"wait on a never-recorded event", [] { return simulate(waitFor(false)); }},
        {"wait on a recorded event", [] { return simulate(waitFor(true)); }},
        {"wait on a never-recorded event, no scenario", [] { return withoutScenario(simulate(waitFor(false))); }},

        // Effects, on the lessons that teach them and their contrasts.
        {"two streams", [] { return lessonTrace("01-two-streams", ""); }},
        {"two streams, imported", [] { return imported(lessonTrace("01-two-streams", "")); }},
        {"one stream", [] { return lessonTrace("02-one-stream", ""); }},
        {"one stream, imported with launches",
         [] { return imported(lessonTrace("02-one-stream", ""), {FlowKind::Launch}); }},
        {"one stream, imported", [] { return imported(lessonTrace("02-one-stream", "")); }},
        {"copy/compute pipeline", [] { return lessonTrace("08-copy-compute-pipeline", ""); }},
        {"copy/compute pipeline, imported", [] { return imported(lessonTrace("08-copy-compute-pipeline", "")); }},
        {"copy/compute pipeline in one stream", [] { return lessonTrace("08-copy-compute-pipeline", "one-stream"); }},
        {"pageable pipeline", [] { return lessonTrace("09-pinned-vs-pageable", "pageable"); }},
        {"record and wait", [] { return lessonTrace("03-record-wait", ""); }},
        {"record and wait, imported", [] { return imported(lessonTrace("03-record-wait", ""), {FlowKind::Event}); }},
        {"wait without record", [] { return lessonTrace("03-record-wait", "no-wait"); }},
        {"two devices", [] { return lessonTrace("07-multi-gpu", ""); }},
        {"two devices, imported", [] { return imported(lessonTrace("07-multi-gpu", "")); }},
        {"eight devices", [] { return lessonTrace("07-multi-gpu", "8-gpus"); }},
        {"two threads on one device", [] { return lessonTrace("07-multi-gpu", "one-device"); }},
        {"two devices one after the other, by hand",
         [] {
             Trace t;
             const uint32_t a = t.addTrack({TrackKind::Stream, "a", 0});
             const uint32_t b = t.addTrack({TrackKind::Stream, "b", 1});
             t.addSpan({a, SpanKind::Kernel, "k0", 0, 100'000});
             t.addSpan({b, SpanKind::Kernel, "k1", 100'000, 200'000});
             t.finalize();
             return t;
         }},
        {"priorities", [] { return lessonTrace("13-stream-priorities", ""); }},
        {"same priorities", [] { return lessonTrace("13-stream-priorities", "same-priority"); }},
        {"graph launches", [] { return lessonTrace("14-cuda-graph", ""); }},
        {"stream launches", [] { return lessonTrace("14-cuda-graph", "stream-launches"); }},
    };
    return c;
}

std::set<std::string> firedRules(const std::vector<Diagnostic>& ds)
{
    std::set<std::string> rules;
    for (const auto& d : ds)
        rules.insert(d.rule);
    return rules;
}

// The problems found (warnings and errors), without the effects (severity "info").
// The problems of the workload; timing-perturbation is about the measurement (tst_event_timing covers it).
std::set<std::string> firedProblems(const std::vector<Diagnostic>& ds)
{
    std::set<std::string> rules;
    for (const auto& d : ds)
        if (d.severity != "info" && d.rule != "timing-perturbation")
            rules.insert(d.rule);
    return rules;
}

std::string describe(const std::vector<Diagnostic>& ds)
{
    std::string s;
    for (const auto& d : ds)
        s += "\n  " + d.rule + ": " + d.message;
    return s.empty() ? " (none)" : s;
}

QString joined(const std::set<std::string>& rules)
{
    QStringList parts;
    for (const auto& r : rules)
        parts << q(r);
    return parts.join(QLatin1Char(','));
}

// What the rules must say on each lesson configuration (the simulator): the effect it teaches, and nothing else.
const std::map<std::string, std::string>& lessonRules()
{
    static const std::map<std::string, std::string> r = {
        {"03-record-wait/no-wait", "wait-unrecorded-event"},
        {"04-default-stream/blocking", "legacy-default-stream"},
        {"06-worker-pool/legacy-stream", "legacy-default-stream"},
        {"09-pinned-vs-pageable/pageable", "pageable-memcpy"},
        {"11-hardware-queues/connections-8", "hardware-queue-false-dependency"},
        {"11-hardware-queues/connections-1", "hardware-queue-false-dependency"},
        {"12-gpu-filling-kernel/gpu-filling", "gpu-filling-kernel"},
        {"13-stream-priorities/same-priority", "gpu-filling-kernel"},
        {"14-cuda-graph/stream-launches", "launch-bound"},
        {"15-host-functions", "host-func-serialization"},
        {"07-multi-gpu/one-device", "gpu-filling-kernel"},
        {"16-sync-in-loop/sync-every-launch", "sync-in-loop"},
        {"17-implicit-sync/malloc-in-loop", "implicit-sync"},
    };
    return r;
}

// Every diagnostic is well-formed: a known rule and its severity, one sentence, valid spans in time order, and at
// least one of its spans named in the message.
void checkWellFormed(const Trace& t, const std::vector<Diagnostic>& ds)
{
    for (const auto& d : ds) {
        const DiagnosticRule* rule = findDiagnosticRule(d.rule);
        QVERIFY2(rule, d.rule.c_str());
        QCOMPARE(q(d.severity), q(std::string(rule->severity)));
        QVERIFY2(!d.message.empty() && d.message.back() == '.', d.message.c_str());
        QVERIFY2(d.message.find('\n') == std::string::npos, d.message.c_str());
        QVERIFY2(!d.spans.empty(), d.message.c_str());
        bool named = false;
        for (size_t k = 0; k < d.spans.size(); ++k) {
            QVERIFY(d.spans[k] < t.spanCount());
            if (k > 0)
                QVERIFY(t.spans.start[d.spans[k - 1]] <= t.spans.start[d.spans[k]]);
            named = named || d.message.find(shortSpanName(t.spanName(d.spans[k]))) != std::string::npos;
        }
        QVERIFY2(named, d.message.c_str());
    }
}

// Times in sentences are relative to the trace's start, as on the timeline: the same trace on an epoch clock (as
// imported traces are) says exactly the same.
void sameAfterEpochShift(const Trace& t, const std::vector<Diagnostic>& ds)
{
    Trace shifted = t;
    constexpr int64_t kEpoch = 5'157'186'974'000'000'000; // 5157186.974 s, a CLOCK_MONOTONIC of a busy host
    for (auto* column : {&shifted.spans.start, &shifted.spans.end})
        for (auto& v : *column)
            v += kEpoch;
    const auto again = diagnose(shifted);
    QCOMPARE(again.size(), ds.size());
    for (size_t i = 0; i < ds.size(); ++i)
        QCOMPARE(q(again[i].message), q(ds[i].message));
}

} // namespace

class TestDiagnostics : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() { QVERIFY2(listPresets().size() >= 15, "set STREAMSCOPE_RESOURCES to resources/"); }

    void catalogue()
    {
        const std::vector<std::string> ids = {"pageable-memcpy",
                                              "legacy-default-stream",
                                              "hardware-queue-false-dependency",
                                              "gpu-filling-kernel",
                                              "host-func-serialization",
                                              "sync-in-loop",
                                              "launch-bound",
                                              "implicit-sync",
                                              "timing-perturbation",
                                              "wait-unrecorded-event",
                                              "streams-overlap",
                                              "stream-serialization",
                                              "copy-compute-overlap",
                                              "event-dependency",
                                              "multi-device-overlap",
                                              "stream-priority",
                                              "graph-launch"};
        QCOMPARE(diagnosticRules().size(), ids.size());
        for (size_t i = 0; i < ids.size(); ++i) {
            const auto& r = diagnosticRules()[i];
            QCOMPARE(q(std::string(r.id)), q(ids[i]));
            QVERIFY(r.severity == "info" || r.severity == "warning" || r.severity == "error");
            QCOMPARE(r.severity == "info", i >= 10); // the first ten are problems, the rest effects
            QVERIFY(!r.title.empty() && !r.fix.empty());
            QCOMPARE(findDiagnosticRule(r.id), &r);
        }
        QVERIFY(!findDiagnosticRule("no-such-rule"));
    }

    // Each rule on a trace where it must fire and on one where it must not.
    void rule_data()
    {
        QTest::addColumn<QString>("trace");
        QTest::addColumn<QString>("rule");
        QTest::addColumn<bool>("fires");
        auto row = [](const char* trace, const char* rule, bool fires) {
            QTest::newRow((std::string(fires ? "fires: " : "silent: ") + trace).c_str())
                << QString::fromUtf8(trace) << QString::fromUtf8(rule) << fires;
        };
        row("pageable copies", "pageable-memcpy", true);
        row("pinned copies", "pageable-memcpy", false);
        row("pageable copies, imported", "pageable-memcpy", true);
        row("pinned copies, imported", "pageable-memcpy", false);
        row("pageable copies, launch flows only", "pageable-memcpy", true);

        row("blocking streams and the legacy stream", "legacy-default-stream", true);
        row("non-blocking streams and the legacy stream", "legacy-default-stream", false);
        row("per-thread default streams and the legacy stream", "legacy-default-stream", true);
        row("blocking streams, no implicit flows", "legacy-default-stream", true);
        row("non-blocking streams, no implicit flows", "legacy-default-stream", false);
        row("threads share the legacy stream", "legacy-default-stream", true);
        row("threads with per-thread default streams", "legacy-default-stream", false);

        row("12 streams on 4 queues", "hardware-queue-false-dependency", true);
        row("12 streams on 32 queues", "hardware-queue-false-dependency", false);
        row("4 streams on 4 queues", "hardware-queue-false-dependency", false);
        row("12 streams on 4 queues, imported", "hardware-queue-false-dependency", true);
        row("12 streams, default connections, imported", "hardware-queue-false-dependency", true);

        row("grid of ten waves", "gpu-filling-kernel", true);
        row("grid of half the GPU", "gpu-filling-kernel", false);
        row("grid of ten waves, by hand", "gpu-filling-kernel", true);
        row("grid that fits, by hand", "gpu-filling-kernel", false);
        row("grid of ten waves, device unknown", "gpu-filling-kernel", false);

        row("host functions in three streams", "host-func-serialization", true);
        row("host functions in one stream", "host-func-serialization", false);
        row("host functions in three streams, imported", "host-func-serialization", true);
        row("host functions, by hand", "host-func-serialization", true);
        row("host functions that overlapped, by hand", "host-func-serialization", false);

        row("sync after every short kernel", "sync-in-loop", true);
        row("sync after every long kernel", "sync-in-loop", false);
        row("sync once at the end", "sync-in-loop", false);

        row("200 tiny kernels", "launch-bound", true);
        row("200 kernels of 50 us", "launch-bound", false);
        row("graphs of tiny kernels", "launch-bound", false);

        row("free between kernels", "implicit-sync", true);
        row("malloc before the work", "implicit-sync", false);
        row("free between kernels, imported", "implicit-sync", true);
        row("malloc before the work, imported", "implicit-sync", false);

        row("wait on a never-recorded event", "wait-unrecorded-event", true);
        row("wait on a recorded event", "wait-unrecorded-event", false);
        row("wait on a never-recorded event, no scenario", "wait-unrecorded-event", false);

        row("two streams", "streams-overlap", true);
        row("two streams, imported", "streams-overlap", true);
        row("one stream", "streams-overlap", false);
        row("copy/compute pipeline in one stream", "streams-overlap", false);

        row("one stream", "stream-serialization", true);
        row("one stream, imported with launches", "stream-serialization", true);
        row("copy/compute pipeline in one stream", "stream-serialization", true);
        row("one stream, imported", "stream-serialization", false); // no launches: no evidence of waiting
        row("two streams", "stream-serialization", false);

        row("copy/compute pipeline", "copy-compute-overlap", true);
        row("copy/compute pipeline, imported", "copy-compute-overlap", true);
        row("copy/compute pipeline in one stream", "copy-compute-overlap", false);
        row("pageable pipeline", "copy-compute-overlap", false);

        row("record and wait", "event-dependency", true);
        row("record and wait, imported", "event-dependency", true);
        row("wait without record", "event-dependency", false);
        row("two streams", "event-dependency", false);

        row("two devices", "multi-device-overlap", true);
        row("two devices, imported", "multi-device-overlap", true);
        row("eight devices", "multi-device-overlap", true);
        row("two threads on one device", "multi-device-overlap", false);
        row("two devices one after the other, by hand", "multi-device-overlap", false);

        row("priorities", "stream-priority", true);
        row("same priorities", "stream-priority", false);
        row("two streams", "stream-priority", false);

        row("graph launches", "graph-launch", true);
        row("graphs of tiny kernels", "graph-launch", true);
        row("stream launches", "graph-launch", false);
    }
    void rule()
    {
        QFETCH(QString, trace);
        QFETCH(QString, rule);
        QFETCH(bool, fires);
        const auto it = cases().find(trace.toStdString());
        QVERIFY2(it != cases().end(), qPrintable(trace));
        const Trace t = it->second();
        const auto ds = diagnose(t);
        checkWellFormed(t, ds);
        const bool fired = firedRules(ds).count(rule.toStdString()) > 0;
        QVERIFY2(fired == fires,
                 (std::string(fires ? "expected " : "did not expect ") + rule.toStdString() + "; got" + describe(ds))
                     .c_str());
        if (fires && findDiagnosticRule(rule.toStdString())->severity != "info") {
            // Only this problem: the small traces show one problem each.
            for (const auto& d : ds)
                QVERIFY2(q(d.rule) == rule || d.severity == "info", describe(ds).c_str());
        }
    }

    void messages_data()
    {
        QTest::addColumn<QString>("trace");
        QTest::addColumn<QString>("words"); // '|'-separated fragments the message must contain
        QTest::newRow("pageable") << "pageable copies"_q
                                  << "2 copies|'h2d in' (s1)|cudaMemcpyAsync|pageable"_q;
        QTest::newRow("pageable, imported") << "pageable copies, imported"_q
                                            << "blocked the host thread|'h2d in' (s1)"_q;
        QTest::newRow("legacy") << "blocking streams and the legacy stream"_q
                                << "'legacy' (null) waited for 'a' (s1)|'b' (s2) waited for 'legacy' (null)"_q;
        QTest::newRow("legacy, threads") << "threads share the legacy stream"_q
                                         << "pool#0 and pool#1|legacy default stream 'default'|'task' (default)"_q;
        QTest::newRow("queues")
            << "12 streams on 4 queues"_q
            << "12 streams on 4 hardware queues|CUDA_DEVICE_MAX_CONNECTIONS=4|'first 4' (s4)|'first 0' (s0)"_q;
        QTest::newRow("filling") << "grid of ten waves"_q
                                 << "'big' (s1) has 10560 blocks|1056|'small' (s2)"_q;
        QTest::newRow("filling, by hand") << "grid of ten waves, by hand"_q
                                          << "'big' (s1) has 320 blocks|4 SMs x 8|= 32"_q;
        QTest::newRow("host functions") << "host functions in three streams"_q
                                        << "'callback 1' (s1)|'callback 0' (s0)"_q;
        QTest::newRow("sync") << "sync after every short kernel"_q
                              << "Host thread main|20 syncs for 20 launches"_q;
        QTest::newRow("launches") << "200 tiny kernels"_q
                                  << "200 GPU operations|'tiny' (s)|cudaLaunchKernel"_q;
        QTest::newRow("implicit") << "free between kernels"_q
                                  << "cudaFree on host thread main|'k1' (s1)"_q;
        QTest::newRow("implicit, imported") << "free between kernels, imported"_q
                                            << "cudaFree on host thread main|'k1' (s1)"_q;
        QTest::newRow("unrecorded") << "wait on a never-recorded event"_q
                                    << "stream s2|event 'ready'|'consumer' (s2)"_q;
    }
    void messages()
    {
        QFETCH(QString, trace);
        QFETCH(QString, words);
        const auto ds = diagnose(cases().at(trace.toStdString())());
        QVERIFY(!ds.empty());
        for (const QString& w : words.split(QLatin1Char('|')))
            QVERIFY2(q(ds.front().message).contains(w), (w.toStdString() + " not in: " + ds.front().message).c_str());
    }

    // Every lesson and variant on the simulator: the rules name the lesson's effect and stay silent elsewhere.
    void lessons_data()
    {
        QTest::addColumn<QString>("id");
        QTest::addColumn<QString>("variant");
        QTest::addColumn<QString>("rules");
        for (const auto& p : listPresets()) {
            std::vector<std::string> variants{""};
            variants.insert(variants.end(), p.variants.begin(), p.variants.end());
            for (const auto& v : variants) {
                const std::string key = v.empty() ? p.id : p.id + "/" + v;
                const auto it = lessonRules().find(key);
                QTest::newRow(key.c_str())
                    << q(p.id) << q(v) << (it == lessonRules().end() ? QString() : q(it->second));
            }
        }
    }
    void lessons()
    {
        QFETCH(QString, id);
        QFETCH(QString, variant);
        QFETCH(QString, rules);
        const Trace t = lessonTrace(id.toStdString(), variant.toStdString());
        const auto ds = diagnose(t);
        checkWellFormed(t, ds);
        QVERIFY2(joined(firedProblems(ds)) == rules, describe(ds).c_str());
        // The analysis names the effect the lesson teaches.
        const std::string effect = lessonEffect(t.info);
        QVERIFY2(!effect.empty(), "every lesson and variant names its effect");
        QVERIFY2(firedRules(ds).count(effect), (effect + " not named; got" + describe(ds)).c_str());
        sameAfterEpochShift(t, ds);
        QVERIFY(findEffect(t, effect).has_value());
    }

    // The lessons' main configurations recorded on an H200 (tests/data/h200): the same verdicts as the simulator.
    void recorded_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("rules");
        const std::filesystem::path dir = std::filesystem::path(STREAMSCOPE_SOURCE_DIR) / "tests" / "data" / "h200";
        std::vector<std::filesystem::path> files;
        for (const auto& d : {dir, dir / "variants"})
            for (const auto& e : std::filesystem::directory_iterator(d))
                if (e.path().extension() == ".json")
                    files.push_back(e.path());
        std::sort(files.begin(), files.end());
        QVERIFY(files.size() >= 31);
        for (const auto& f : files) {
            // "12-gpu-filling-kernel--gpu-filling.json" is lesson 12, variant gpu-filling.
            std::string key = f.stem().string();
            if (const auto dash = key.find("--"); dash != std::string::npos)
                key.replace(dash, 2, "/");
            const auto it = lessonRules().find(key);
            QTest::newRow(key.c_str()) << q(f.string()) << (it == lessonRules().end() ? QString() : q(it->second));
        }
    }
    void recorded()
    {
        QFETCH(QString, file);
        QFETCH(QString, rules);
        auto t = loadTraceFile(file.toStdString());
        QVERIFY2(t.ok(), t.ok() ? "" : t.error().toString().c_str());
        const auto ds = diagnose(*t);
        checkWellFormed(*t, ds);
        QVERIFY2(joined(firedProblems(ds)) == rules, describe(ds).c_str());
        // The analysis names the effect the lesson teaches, on the GPU as on the simulator.
        const std::string effect = lessonEffect(t->info);
        QVERIFY2(!effect.empty(), "every lesson and variant names its effect");
        QVERIFY2(firedRules(ds).count(effect), (effect + " not named; got" + describe(ds)).c_str());
        sameAfterEpochShift(*t, ds);
        // Imported without the scenario and with only launch flows, the verdict on the good ones stays silent.
        const auto bare = diagnose(imported(*t, {FlowKind::Launch}));
        if (rules.isEmpty())
            QVERIFY2(firedProblems(bare).empty(), describe(bare).c_str());
        else if (t->info.variant.empty())
            QVERIFY2(firedProblems(bare).count(rules.toStdString()), describe(bare).c_str());
    }

    void options()
    {
        const Trace t = lessonTrace("14-cuda-graph", "stream-launches");
        DiagnosticOptions o;
        o.rules = {"pageable-memcpy"};
        QVERIFY(diagnose(t, o).empty());
        o.rules = {"launch-bound"};
        auto ds = diagnose(t, o);
        QCOMPARE(ds.size(), size_t(1));
        QCOMPARE(ds[0].spans.size(), size_t(200));
        o.maxSpans = 10;
        ds = diagnose(t, o);
        QCOMPARE(ds[0].spans.size(), size_t(10));
        // A stricter threshold silences the rule.
        o.thresholds.minShortLaunches = 1000;
        QVERIFY(diagnose(t, o).empty());

        // maxNamedSpans: the rest are counted.
        const Trace pageable = lessonTrace("09-pinned-vs-pageable", "pageable");
        DiagnosticOptions named;
        named.maxNamedSpans = 2;
        ds = diagnose(pageable, named);
        QCOMPARE(ds.size(), size_t(1));
        QVERIFY2(q(ds[0].message).contains(QStringLiteral("and 13 more")), ds[0].message.c_str());
    }

    void unfinalizedTrace()
    {
        // Spans in reverse order, never finalized: the diagnostics run on a finalized copy.
        Trace t;
        const uint32_t s0 = t.addTrack({TrackKind::Stream, "s0", 0});
        const uint32_t s1 = t.addTrack({TrackKind::Stream, "s1", 0});
        t.addSpan({s1, SpanKind::HostFunc, "callback1", 306000, 506000});
        t.addSpan({s1, SpanKind::Kernel, "k1", 0, 100000});
        t.addSpan({s0, SpanKind::HostFunc, "callback0", 105000, 305000});
        t.addSpan({s0, SpanKind::Kernel, "k0", 0, 100000});
        const auto ds = diagnose(t);
        QCOMPARE(joined(firedProblems(ds)), QStringLiteral("host-func-serialization"));
        QCOMPARE(q(ds[0].rule), QStringLiteral("host-func-serialization")); // problems come before effects
        QCOMPARE(joined(firedRules(ds)), QStringLiteral("host-func-serialization,streams-overlap"));
    }
};

QTEST_GUILESS_MAIN(TestDiagnostics)
#include "tst_diagnostics.moc"
