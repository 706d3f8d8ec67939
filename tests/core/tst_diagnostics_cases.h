// The traces and scenarios the diagnostics test (tst_diagnostics.cpp) tries each rule on: a scenario builder, lessons
// simulated, traces as an importer would leave them (flows or the embedded scenario taken away), traces made by
// hand from one line of text, and the table of named cases the rules must fire or stay silent on.
#pragma once

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

inline QString q(const std::string& s)
{
    return QString::fromStdString(s);
}
inline QString operator""_q(const char* s, size_t n)
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

inline Trace simulate(const Scenario& s)
{
    SimulatorBackend sim;
    auto out = runScenario(s, sim);
    if (!out.status)
        qFatal("%s", out.status.error().toString().c_str());
    return std::move(out.trace);
}

inline Trace lessonTrace(const std::string& id, const std::string& variant)
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
inline Trace imported(Trace t, std::set<FlowKind> keep = {})
{
    t.info.scenarioJson.clear();
    t.info.source = TraceSource::Imported;
    std::erase_if(t.flows, [&keep](const Flow& f) { return !keep.count(f.kind); });
    return t;
}

inline Trace withoutImplicitFlows(Trace t)
{
    std::erase_if(t.flows, [](const Flow& f) { return f.kind == FlowKind::Implicit; });
    return t;
}

inline Trace withoutScenario(Trace t)
{
    t.info.scenarioJson.clear();
    return t;
}

// A hand-made trace: span "track:kind:start:end:name[:grid]" (µs), tracks 'h...' host threads, others streams;
// flows "from>to:kind" by span name; device 0 described by `properties` ("sm_count=4 ...").
inline Trace handMade(const QString& spans, const QString& flows = {}, const QString& properties = {})
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

inline Trace handMade(const char* spans, const char* flows = "", const char* properties = "")
{
    return handMade(QString::fromUtf8(spans), QString::fromUtf8(flows), QString::fromUtf8(properties));
}

using Factory = std::function<Trace()>;

inline Scenario pageableCopies(bool pinned)
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

inline Scenario legacyBetween(StreamKind kind)
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

inline Scenario threadsOnOneStream(StreamKind kind)
{
    return Builder()
        .stream("default", kind)
        .thread("pool", 8, 2)
        .spin("task", "default", 200)
        .simple(OpKind::StreamSync, "default")
        .build();
}

inline Scenario depthFirst(int streams, const std::string& connections)
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

inline Scenario bigAndSmall(uint32_t grid, double us)
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

inline Scenario hostFuncs(int streams)
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

inline Scenario syncLoop(double kernelUs)
{
    return Builder()
        .stream("s")
        .thread("main", 20)
        .spin("work", "s", kernelUs, 16)
        .simple(OpKind::StreamSync, "s")
        .build();
}

inline Scenario syncOnceAtTheEnd()
{
    Builder b;
    b.stream("s").thread("main");
    for (int i = 0; i < 20; ++i)
        b.spin("work", "s", 20, 16);
    return b.simple(OpKind::StreamSync, "s").build();
}

inline Scenario tinyKernels(double us)
{
    return Builder().stream("s").thread("main", 200).spin("tiny", "s", us).build();
}

inline Scenario tinyGraph()
{
    return Builder().stream("s").thread("main", 10).graph("20 tiny kernels", "s", 20, 1).build();
}

inline Scenario allocation(bool betweenKernels)
{
    Builder b;
    b.stream("s1").thread("main");
    if (betweenKernels)
        b.spin("k1", "s1", 500, 16).simple(OpKind::Free).spin("k2", "s1", 100, 16);
    else
        b.simple(OpKind::Malloc).spin("k1", "s1", 500, 16).spin("k2", "s1", 100, 16);
    return b.simple(OpKind::DeviceSync).build();
}

inline Scenario waitFor(bool recorded)
{
    Builder b;
    b.stream("s1").stream("s2").thread("main").spin("producer", "s1", 300, 16);
    if (recorded)
        b.simple(OpKind::Record, "s1", "ready");
    b.simple(OpKind::Wait, "s2", "ready").spin("consumer", "s2", 100, 16);
    return b.simple(OpKind::DeviceSync).build();
}

inline const std::map<std::string, Factory>& cases()
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
