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
#include "tst_diagnostics_cases.h"

#include <QTest>

#include <atomic>
#include <filesystem>
#include <functional>
#include <map>
#include <set>
#include <string>

using namespace streamscope;

namespace {

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
        {"19-straggler", "straggler"},
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
    shifted.spans.start.shift(kEpoch);
    shifted.spans.end.shift(kEpoch);
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
                                              "straggler",
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
            QCOMPARE(r.severity == "info", i >= 11); // the first eleven are problems, the rest effects
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
            << "12 streams on 4 hardware queues|CUDA_DEVICE_MAX_CONNECTIONS=4|'first 4' (s4)|'first 0' (s0)|"
               "of waiting summed over the operations, during"_q;
        QTest::newRow("filling") << "grid of ten waves"_q
                                 << "'big' (s1) has 10560 blocks|1056|'small' (s2)|could start only when it ended"_q;
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

    // DiagnosticOptions::cancel: set before the rules run, none runs; clear, the same findings as without it.
    void cancel()
    {
        const Trace t = lessonTrace("14-cuda-graph", "stream-launches");
        const auto all = diagnose(t);
        QVERIFY(!all.empty());
        std::atomic<bool> stop{false};
        DiagnosticOptions o;
        o.cancel = &stop;
        QCOMPARE(diagnose(t, o).size(), all.size());
        stop = true;
        QVERIFY(diagnose(t, o).empty());
    }

    // maxSpans cuts each diagnostic's list of spans short: a smaller limit lists a prefix of the longer list (long
    // lists are cut by selecting their first spans, not by sorting them all).
    void maxSpansPrefix()
    {
        const std::pair<const char*, const char*> lessons[] = {
            {"14-cuda-graph", "stream-launches"},     {"11-hardware-queues", "connections-1"},
            {"11-hardware-queues", "connections-8"},  {"08-copy-compute-pipeline", ""},
            {"12-gpu-filling-kernel", "gpu-filling"},
        };
        size_t checked = 0;
        for (const auto& [id, variant] : lessons) {
            const Trace t = lessonTrace(id, variant);
            const auto full = diagnose(t);
            for (size_t limit : {size_t(1), size_t(2), size_t(3), size_t(7)}) {
                DiagnosticOptions o;
                o.maxSpans = limit;
                const auto cut = diagnose(t, o);
                QCOMPARE(cut.size(), full.size());
                for (size_t k = 0; k < full.size(); ++k) {
                    const auto& all = full[k].spans;
                    const std::vector<uint32_t> prefix(all.begin(),
                                                       all.begin() + ptrdiff_t(std::min(limit, all.size())));
                    QVERIFY2(cut[k].spans == prefix, (std::string(id) + " " + full[k].rule).c_str());
                    checked += all.size() >= 4 * limit ? 1 : 0;
                }
            }
        }
        QVERIFY(checked >= 10); // lists long enough to be cut by selection
    }

    void everyCaseListsItsSpans()
    {
        // Lesson 07 on one device fills the GPU more than once: the one diagnostic words the first case and counts
        // the others; its spans are every case's, the first big kernel (named first) among them.
        const Trace t = lessonTrace("07-multi-gpu", "one-device");
        const auto ds = diagnose(t);
        const auto it = std::find_if(ds.begin(), ds.end(), [](const Diagnostic& d) {
            return d.rule == "gpu-filling-kernel" && d.message.find("The same happened with") != std::string::npos;
        });
        QVERIFY(it != ds.end());
        QVERIFY(!it->spans.empty());
        const std::string first(t.spanName(it->spans.front()));
        QVERIFY2(it->message.find(first) < it->message.find(" has "), (first + " | " + it->message).c_str());
    }

    // streams-overlap counts a device's stream pairs in a matrix up to 512 streams and in a hash map beyond: the same
    // streams and the same example pairs either way.
    void streamPairsAreCountedAlikeForFewAndManyStreams()
    {
        auto prefix = [](int quietStreams) {
            Trace t;
            const int64_t us = 1000;
            const int64_t busy[4][2] = {{0, 100}, {10, 110}, {20, 60}, {50, 200}};
            for (int s = 0; s < 4; ++s) {
                const uint32_t tr = t.addTrack({TrackKind::Stream, "s" + std::to_string(s), 0});
                t.addSpan({tr, SpanKind::Kernel, "k" + std::to_string(s), busy[s][0] * us, busy[s][1] * us});
            }
            // Streams that each ran alone, one after another, later.
            for (int s = 0; s < quietStreams; ++s) {
                const uint32_t tr = t.addTrack({TrackKind::Stream, "quiet" + std::to_string(s), 0});
                t.addSpan({tr, SpanKind::Kernel, "alone", (300 + 2 * s) * us, (300 + 2 * s) * us + 100});
            }
            t.finalize();
            for (const Diagnostic& d : diagnose(t))
                if (d.rule == "streams-overlap")
                    return q(d.message.substr(0, d.message.find(". Two or more")));
            return QString();
        };
        const QString few = prefix(8);
        QVERIFY2(
            few.startsWith(QLatin1String(
                "4 streams (s0, s1, s2 and 1 more) of device 0 ran at the same time: 'k1' (s1) ran beside 'k0' (s0)")),
            qPrintable(few));
        QCOMPARE(prefix(600), few);
    }

    // From a million spans diagnose() runs the rules on two threads (each into its own list; the context's shared
    // parts computed once by whichever rule asks first): the result is the rules' own results one after another, in
    // the rules' order, as on one thread.
    void rulesOnThreadsKeepTheRulesOrder()
    {
        Trace t;
        DeviceInfo d0, d1;
        d0.index = 0;
        d1.index = 1;
        t.info.devices = {d0, d1};
        const uint32_t host = t.addTrack({TrackKind::HostThread, "main"});
        std::vector<uint32_t> streams;
        for (int s = 0; s < 16; ++s)
            streams.push_back(t.addTrack({TrackKind::Stream, "s" + std::to_string(s), s % 2}));
        // 16 streams on two devices, 65,000 operations each (a copy every fourth), staggered so that they overlap.
        for (int s = 0; s < 16; ++s)
            for (int k = 0; k < 65'000; ++k) {
                const int64_t start = int64_t(k) * 10'000 + s * 600;
                const SpanKind kind = k % 4 == 3 ? SpanKind::MemcpyH2D : SpanKind::Kernel;
                t.addSpan({streams[size_t(s)], kind, kind == SpanKind::Kernel ? "k" : "copy", start, start + 7'000});
            }
        // After them, host functions of two streams one at a time: a problem, reported before the effects.
        const int64_t after = int64_t(65'000) * 10'000;
        t.addSpan({streams[0], SpanKind::HostFunc, "callback0", after, after + 200'000});
        t.addSpan({streams[2], SpanKind::HostFunc, "callback2", after + 201'000, after + 401'000});
        for (int k = 0; k < 2'000; ++k)
            t.addSpan(
                {host, SpanKind::Sync, "cudaStreamSynchronize", int64_t(k) * 300'000, int64_t(k) * 300'000 + 500});
        t.finalize();
        QVERIFY(t.spanCount() >= 1'000'000);
        const std::vector<Diagnostic> all = diagnose(t);
        std::vector<Diagnostic> oneByOne;
        for (const DiagnosticRule& rule : diagnosticRules()) {
            DiagnosticOptions only;
            only.rules = {std::string(rule.id)};
            for (Diagnostic& d : diagnose(t, only))
                oneByOne.push_back(std::move(d));
        }
        const std::set<std::string> fired = firedRules(all);
        QVERIFY2(fired.count("host-func-serialization") && fired.count("streams-overlap")
                     && fired.count("multi-device-overlap") && fired.count("copy-compute-overlap"),
                 qPrintable(joined(fired)));
        QCOMPARE(all.size(), oneByOne.size());
        for (size_t i = 0; i < all.size(); ++i) {
            QCOMPARE(q(all[i].rule), q(oneByOne[i].rule));
            QCOMPARE(q(all[i].message), q(oneByOne[i].message));
            QVERIFY(all[i].spans == oneByOne[i].spans);
        }
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
