// The analysis of a trace (core/analysis/analysis.h): metrics on small traces whose answers are worked out by hand in
// the comments, the critical path through hand-made dependency graphs and through every lesson, the JSON and text
// forms, the comparison of two traces and the what-if sweeps.
#include "analysis.h"
#include "diagnostics.h"
#include "expect.h"
#include "resources.h"
#include "runner.h"
#include "scenario_json.h"
#include "simulator.h"
#include "trace_formats.h"
#include "trace_json.h"
#include "trace_spec.h"
#include "whatif.h"

#include <QTest>

#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <map>
#include <string>

using namespace streamscope;
using streamscope::testing::traceOf;

namespace {

QString q(const std::string& s)
{
    return QString::fromStdString(s);
}
QString operator""_q(const char* s, size_t n)
{
    return QString::fromUtf8(s, qsizetype(n));
}

QString joined(const std::vector<int64_t>& v)
{
    QStringList parts;
    for (int64_t x : v)
        parts << QString::number(x);
    return parts.join(QLatin1Char(','));
}

QString stepsText(const std::vector<ConcurrencyStep>& steps)
{
    QStringList parts;
    for (const auto& s : steps)
        parts << QString::number(s.time) + QLatin1Char('=') + QString::number(s.count);
    return parts.join(QLatin1Char(' '));
}

QString gapsText(const std::vector<Interval>& gaps)
{
    QStringList parts;
    for (const auto& g : gaps)
        parts << QString::number(g.start) + QLatin1Char('~') + QString::number(g.end);
    return parts.join(QLatin1Char(' '));
}

// "name:reason:contribution:idle" per segment.
QString pathText(const CriticalPath& p)
{
    QStringList parts;
    for (const auto& s : p.segments)
        parts << q(s.name) + QLatin1Char(':') + q(std::string(toString(s.reason))) + QLatin1Char(':')
                + QString::number(s.contributionNs) + QLatin1Char(':') + QString::number(s.idleBeforeNs);
    return parts.join(QLatin1Char(' '));
}

Scenario lesson(const std::string& id, const std::string& variant = {})
{
    auto p = findPreset(id);
    if (!p)
        qFatal("%s", p.error().toString().c_str());
    auto l = loadScenarioFile(p->path, variant);
    if (!l)
        qFatal("%s", l.error().toString().c_str());
    return std::move(l->scenario);
}

Trace simulate(const Scenario& s)
{
    SimulatorBackend sim;
    auto out = runScenario(s, sim);
    if (!out.status)
        qFatal("%s", out.status.error().toString().c_str());
    return std::move(out.trace);
}

// Every lesson and variant (sim), and every recorded trace: the inputs of the property tests.
void addEveryTrace()
{
    QTest::addColumn<QString>("lesson");
    QTest::addColumn<QString>("variant");
    QTest::addColumn<QString>("file");
    for (const auto& p : listPresets()) {
        QTest::newRow(("sim " + p.id).c_str()) << q(p.id) << QString() << QString();
        for (const auto& v : p.variants)
            QTest::newRow(("sim " + p.id + "/" + v).c_str()) << q(p.id) << q(v) << QString();
    }
    const std::filesystem::path dir = std::filesystem::path(STREAMSCOPE_SOURCE_DIR) / "tests" / "data" / "h200";
    std::vector<std::string> files;
    for (const auto& d : {dir, dir / "variants"})
        for (const auto& e : std::filesystem::directory_iterator(d))
            if (e.path().extension() == ".json")
                files.push_back(e.path().string());
    std::sort(files.begin(), files.end());
    for (const auto& f : files)
        QTest::newRow(("h200 " + std::filesystem::path(f).stem().string()).c_str()) << QString() << QString() << q(f);
}

Trace fetchTrace()
{
    QFETCH(QString, lesson);
    QFETCH(QString, variant);
    QFETCH(QString, file);
    if (!file.isEmpty()) {
        auto t = importTraceFile(file.toStdString()); // native, or another tool's format
        if (!t)
            qFatal("%s", t.error().toString().c_str());
        return std::move(*t);
    }
    return simulate(::lesson(lesson.toStdString(), variant.toStdString()));
}

double metric(const Trace& t, const std::string& name, std::vector<std::string> streams = {})
{
    Expectation e;
    e.metric = name;
    e.streams = std::move(streams);
    auto r = evaluateMetric(t, e);
    return r ? *r : -1;
}

} // namespace

class TestAnalysis : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() { QVERIFY2(listPresets().size() >= 15, "set STREAMSCOPE_RESOURCES to resources/"); }

    // ---- metrics on hand-made traces ----------------------------------------------------------------------------

    void metrics_data()
    {
        QTest::addColumn<QString>("spans");
        QTest::addColumn<qint64>("makespan");
        QTest::addColumn<qint64>("busy");
        QTest::addColumn<QString>("gaps");
        QTest::addColumn<QString>("timeAt");     // time with exactly k GPU ops running, k = 0..max
        QTest::addColumn<QString>("steps");      // time=count
        QTest::addColumn<qint64>("overlapS1S2"); // ns both busy
        QTest::addColumn<qint64>("copyCompute"); // ns a copy ran with a kernel
        QTest::addColumn<QString>("streamGaps"); // of s1, then "|", then of s2

        // s1: a 0-100, b 150-200; s2: c 50-120, d (copy) 180-300.
        // Running: 0-50 a; 50-100 a c; 100-120 c; 120-150 none; 150-180 b; 180-200 b d; 200-300 d.
        // time at 0: 30, at 1: 50+20+30+100 = 200, at 2: 50+20 = 70. s1 busy 150, s2 busy 190, both 50+20 = 70.
        QTest::newRow("two streams")
            << "s1:kernel:0:100:a s1:kernel:150:200:b s2:kernel:50:120:c s2:memcpy-h2d:180:300:d"_q << qint64(300)
            << qint64(270) << "120~150"_q
            << "30,200,70"_q
            << "0=1 50=2 100=1 120=0 150=1 180=2 200=1 300=0"_q << qint64(70) << qint64(20) << "100~150|120~180"_q;
        // Back to back is not concurrent (half-open spans).
        QTest::newRow("back to back") << "s1:kernel:0:100:a s2:kernel:100:200:b"_q << qint64(200) << qint64(200) << ""_q
                                      << "0,200"_q
                                      << "0=1 200=0"_q << qint64(0) << qint64(0) << "|"_q;
        // Host spans are not GPU work; zero-length spans cover no time.
        QTest::newRow("host spans and empty spans")
            << "h:api-call:0:10:call s1:kernel:20:40:a s1:kernel:50:50:empty s2:kernel:60:80:b h:sync:10:90:wait"_q
            << qint64(60) << qint64(40) << "40~60"_q
            << "20,40"_q
            << "20=1 40=0 60=1 80=0"_q << qint64(0) << qint64(0) << "40~50|"_q;
        // Three at once on one stream pair plus a third stream: max 3.
        QTest::newRow("three at once") << "s1:kernel:0:90:a s2:kernel:10:50:b s3:memset:20:30:c"_q << qint64(90)
                                       << qint64(90) << ""_q
                                       << "0,50,30,10"_q
                                       << "0=1 10=2 20=3 30=2 50=1 90=0"_q << qint64(40) << qint64(0) << "|"_q;
    }
    void metrics()
    {
        QFETCH(QString, spans);
        QFETCH(qint64, makespan);
        QFETCH(qint64, busy);
        QFETCH(QString, gaps);
        QFETCH(QString, timeAt);
        QFETCH(QString, steps);
        QFETCH(qint64, overlapS1S2);
        QFETCH(qint64, copyCompute);
        QFETCH(QString, streamGaps);
        const Trace t = traceOf(spans);
        const TraceAnalysis a = analyzeTrace(t);
        QCOMPARE(a.makespanNs, makespan);
        QCOMPARE(a.busyNs, busy);
        QCOMPARE(gapsText(a.gaps), gaps);
        QCOMPARE(a.idleNs, makespan - busy);
        QCOMPARE(joined(a.concurrency.timeAtNs), timeAt);
        QCOMPARE(stepsText(a.concurrency.steps), steps);
        QCOMPARE(a.concurrency.maxConcurrency, int(a.concurrency.timeAtNs.size()) - 1);
        QCOMPARE(a.copyComputeOverlapNs, copyCompute);
        // The time-weighted mean concurrency is the work over the makespan: the speedup over serialized work.
        QVERIFY(std::fabs(a.concurrency.averageConcurrency - a.speedup) < 1e-9);
        const int s1 = t.findStreamTrack("s1"), s2 = t.findStreamTrack("s2");
        size_t i1 = 0, i2 = 0;
        for (size_t k = 0; k < a.streams.size(); ++k) {
            if (int(a.streams[k].track) == s1)
                i1 = k;
            if (int(a.streams[k].track) == s2)
                i2 = k;
        }
        QCOMPARE(a.overlapNs[i1][i2], overlapS1S2);
        QCOMPARE(a.overlapNs[i2][i1], overlapS1S2);
        const QStringList sg = streamGaps.split(QLatin1Char('|'));
        QCOMPARE(gapsText(a.streams[i1].gaps), sg[0]);
        QCOMPARE(gapsText(a.streams[i2].gaps), sg[1]);
        // concurrencySteps() is the same step function on its own.
        QCOMPARE(stepsText(concurrencySteps(t)), steps);
        // The one-device run's figures are its device's.
        QCOMPARE(a.devices.size(), size_t(1));
        QCOMPARE(joined(a.devices[0].concurrency.timeAtNs), timeAt);
        QCOMPARE(a.devices[0].idleNs, a.idleNs);
    }

    void twoDevices()
    {
        // s1 on device 0: 0-100, copy 100-150; s2 on device 1: kernel 50-150. Device 0: makespan 150, busy 150, no
        // concurrency beyond 1; device 1: makespan 100. Overall: 0-50 one, 50-150 two.
        const Trace t = traceOf("s1/0:kernel:0:100:a s1/0:memcpy-d2h:100:150:c s2/1:kernel:50:150:b");
        const TraceAnalysis a = analyzeTrace(t);
        QCOMPARE(a.devices.size(), size_t(2));
        QCOMPARE(a.devices[0].device, 0);
        QCOMPARE(a.devices[0].makespanNs, qint64(150));
        QCOMPARE(a.devices[0].concurrency.maxConcurrency, 1);
        QCOMPARE(a.devices[0].copyComputeOverlapNs, qint64(0));
        QCOMPARE(a.devices[1].makespanNs, qint64(100));
        QCOMPARE(a.devices[1].streamCount, 1);
        QCOMPARE(joined(a.concurrency.timeAtNs), QStringLiteral("0,50,100"));
        QCOMPARE(a.makespanNs, qint64(150));
        // As the lessons' copy_compute_overlap: the copy on device 0 against the kernel on device 1.
        QCOMPARE(a.copyComputeOverlapNs, qint64(50));
        QCOMPARE(a.metrics.copyComputeOverlapNs, computeMetrics(t).copyComputeOverlapNs);
        QCOMPARE(a.streams[0].utilization, 1.0);
    }

    void launchRate()
    {
        // Four launches in 1000 ns of host time: 4e6 per second. One of the API calls launches nothing.
        const Trace t = traceOf("h:api-call:0:100:l1 h:api-call:300:400:l2 h:api-call:500:550:rec "
                                "h:api-call:600:700:l3 h:api-call:800:900:l4 h:sync:900:1000:wait "
                                "s1:kernel:150:250:k1 s1:kernel:450:500:k2 s1:kernel:750:800:k3 s1:kernel:910:950:k4",
                                "l1>k1:launch l2>k2:launch l3>k3:launch l4>k4:launch k4>wait:sync");
        const TraceAnalysis a = analyzeTrace(t);
        QCOMPARE(a.hostThreads.size(), size_t(1));
        const auto& h = a.hostThreads[0];
        QCOMPARE(h.apiCalls, qint64(5));
        QCOMPARE(h.launchCalls, qint64(4));
        QCOMPARE(h.syncCalls, qint64(1));
        QCOMPARE(h.activeNs, qint64(1000));
        QCOMPARE(h.launchesPerSecond, 4e6);
        QCOMPARE(h.meanLaunchNs, 100.0);
        QCOMPARE(h.syncNs, qint64(100));
        QCOMPARE(a.launchesPerSecond, 4e6);
        // Without launch flows (an imported trace) launches are counted by the API's name.
        const Trace imported = traceOf("h:api-call:0:100:cudaLaunchKernel h:api-call:100:200:cudaEventRecord "
                                       "h:api-call:200:300:cudaMemcpyAsync s1:kernel:150:250:k");
        QCOMPARE(analyzeTrace(imported).hostThreads[0].launchCalls, qint64(2));
    }

    void emptyTrace()
    {
        Trace t;
        t.finalize();
        const TraceAnalysis a = analyzeTrace(t);
        QCOMPARE(a.makespanNs, qint64(0));
        QVERIFY(a.devices.empty());
        QVERIFY(streamscope::criticalPath(t).segments.empty());
        QVERIFY(diagnose(t).empty());
        const auto j = nlohmann::json::parse(analysisToJson(t));
        QCOMPARE(j["metrics"]["makespan_ns"].get<int64_t>(), int64_t(0));
        QVERIFY(j["critical_path"].empty());
        QVERIFY(!analysisReport(t).empty());
    }

    void unfinalizedTrace()
    {
        // Spans added out of order and never finalized: analysed on a finalized copy.
        Trace t;
        const uint32_t s = t.addTrack({TrackKind::Stream, "s1", 0});
        t.addSpan({s, SpanKind::Kernel, "b", 200, 300});
        t.addSpan({s, SpanKind::Kernel, "a", 0, 100});
        QVERIFY(!t.finalized());
        const TraceAnalysis a = analyzeTrace(t);
        QCOMPARE(a.makespanNs, qint64(300));
        QCOMPARE(gapsText(a.gaps), QStringLiteral("100~200"));
        const auto p = streamscope::criticalPath(t);
        QCOMPARE(pathText(p), QStringLiteral("a:start:100:0 b:stream order:100:100"));
    }

    // The analysis's metrics are the lessons' metrics (metrics.h and the expectation checks), on every lesson.
    void metricsAgreeWithChecks_data() { addEveryTrace(); }
    void metricsAgreeWithChecks()
    {
        const Trace t = fetchTrace();
        const TraceAnalysis a = analyzeTrace(t);
        const TraceMetrics m = computeMetrics(t);
        QCOMPARE(a.metrics.makespanNs, m.makespanNs);
        QCOMPARE(a.metrics.gpuWorkNs, m.gpuWorkNs);
        QCOMPARE(a.metrics.speedup, m.speedup);
        QCOMPARE(a.metrics.maxConcurrency, m.maxConcurrency);
        QCOMPARE(a.metrics.copyComputeOverlapNs, m.copyComputeOverlapNs);
        QCOMPARE(a.metrics.hostMakespanNs, m.hostMakespanNs);
        QCOMPARE(a.metrics.gpuSpanCount, m.gpuSpanCount);
        QCOMPARE(a.metrics.apiCallCount, m.apiCallCount);
        QCOMPARE(a.metrics.streams.size(), m.streams.size());
        for (size_t i = 0; i < m.streams.size(); ++i) {
            QCOMPARE(a.metrics.streams[i].busyNs, m.streams[i].busyNs);
            QCOMPARE(a.streams[i].busyNs, m.streams[i].busyNs);
        }
        QCOMPARE(a.copyComputeOverlap, metric(t, "copy_compute_overlap"));
        // Concurrency profile: covers the makespan, and its mean is the speedup.
        int64_t covered = 0;
        for (int64_t ns : a.concurrency.timeAtNs)
            covered += ns;
        QCOMPARE(covered, a.makespanNs);
        QVERIFY(std::fabs(a.concurrency.averageConcurrency - a.speedup) < 1e-9);
        QCOMPARE(a.busyNs + a.idleNs, a.makespanNs);
        // Overlap of every pair of named streams, as the `overlap` check computes it.
        for (size_t i = 0; i < a.streams.size(); ++i)
            for (size_t j = i + 1; j < a.streams.size() && j < 6; ++j) {
                if (a.streams[i].name == a.streams[j].name)
                    continue;
                const double expected = metric(t, "overlap", {a.streams[i].name, a.streams[j].name});
                if (expected >= 0)
                    QVERIFY(std::fabs(a.overlapFraction[i][j] - expected) < 1e-12);
            }
    }

    // ---- critical path ------------------------------------------------------------------------------------------

    void criticalPath_data()
    {
        QTest::addColumn<QString>("spans");
        QTest::addColumn<QString>("flows");
        QTest::addColumn<QString>("path"); // name:reason:contribution:idle before

        // The sync ends last; it was released by K2 (its sync flow), K2 by K1 (stream order, later than its own
        // launch L2), K1 by its launch L1. L1 10; K1 100 - max(15, 10) = 85 after 5 idle; K2 50; S 10.
        QTest::newRow("launch, stream order, sync")
            << "h:api-call:0:10:L1 h:api-call:10:20:L2 s1:kernel:15:100:K1 s1:kernel:100:150:K2 h:sync:20:160:S"_q
            << "L1>K1:launch L2>K2:launch K2>S:sync"_q
            << "L1:start:10:0 K1:launch:85:5 K2:stream order:50:0 S:sync:10:0"_q;
        // The consumer C waited for P through the event (P ended after C's stream predecessor I).
        QTest::newRow("event wait") << "s1:kernel:0:400:P s2:kernel:0:300:I s2:kernel:410:500:C"_q
                                    << "P>C:event"_q
                                    << "P:start:400:0 C:event wait:90:10"_q;
        // The legacy default stream barrier.
        QTest::newRow("implicit") << "s1:kernel:0:100:A d:kernel:110:120:L s2:kernel:130:200:B"_q
                                  << "A>L:implicit L>B:implicit"_q
                                  << "A:start:100:0 L:implicit:10:10 B:implicit:70:10"_q;
        // Host work before the launch: host issue order.
        QTest::newRow("host issue order") << "h:host-work:0:50:W h:api-call:50:55:L s1:kernel:60:100:K"_q
                                          << "L>K:launch"_q
                                          << "W:start:50:0 L:host issue order:5:0 K:launch:40:5"_q;
        // Two predecessors end at the same time: the explicit dependency (event) is the reason, not stream order.
        QTest::newRow("tie prefers the flow") << "s1:kernel:0:100:A s1:kernel:100:200:B s2:kernel:0:100:E"_q
                                              << "E>B:event"_q
                                              << "E:start:100:0 B:event wait:100:0"_q;
        // An imported trace without sync flows: the sync waited for the stream span that ended inside it.
        QTest::newRow("sync without flows") << "h:sync:0:500:S s1:kernel:0:480:K s2:kernel:0:100:early"_q
                                            << ""_q
                                            << "K:start:480:0 S:sync:20:0"_q;
        // A kernel that started before its launch call returned (event timing): it accounts for the time after.
        QTest::newRow("start before launch end") << "h:api-call:0:30:L s1:kernel:10:100:K"_q
                                                 << "L>K:launch"_q
                                                 << "L:start:30:0 K:launch:70:0"_q;
        // A predecessor that ends after the span is no predecessor (the walk only goes back in time).
        QTest::newRow("later flow source ignored")
            << "s1:kernel:0:100:A s2:kernel:50:300:Z s1:kernel:120:200:B h:sync:0:500:S"_q
            << "Z>B:event B>S:sync"_q
            << "A:start:100:0 B:stream order:80:20 S:sync:300:0"_q;
    }
    void criticalPath()
    {
        QFETCH(QString, spans);
        QFETCH(QString, flows);
        QFETCH(QString, path);
        const Trace t = traceOf(spans, flows);
        const CriticalPath p = streamscope::criticalPath(t);
        QCOMPARE(pathText(p), path);
        QCOMPARE(p.busyNs + p.idleNs, p.lengthNs);
        QCOMPARE(p.endNs - p.startNs, p.lengthNs);
    }

    // On every lesson: the path ends with the span that ends last, runs forward in time, and its contributions and
    // idle times add up to its length.
    void criticalPathOfLessons_data() { addEveryTrace(); }
    void criticalPathOfLessons()
    {
        const Trace t = fetchTrace();
        const CriticalPath p = streamscope::criticalPath(t);
        QVERIFY(!p.segments.empty());
        QCOMPARE(p.endNs, t.timeRange().second);
        QCOMPARE(p.busyNs + p.idleNs, p.lengthNs);
        QCOMPARE(p.gpuNs + p.hostNs, p.busyNs);
        QVERIFY(p.segments.front().reason == PathReason::Start);
        for (size_t k = 0; k < p.segments.size(); ++k) {
            const auto& s = p.segments[k];
            QVERIFY(s.contributionNs >= 0);
            QVERIFY(s.idleBeforeNs >= 0);
            QCOMPARE(q(s.name), q(std::string(t.spanName(s.span))));
            QCOMPARE(s.start, t.spans.start[s.span]);
            if (k > 0) {
                QVERIFY(s.reason != PathReason::Start);
                QVERIFY(p.segments[k - 1].end <= s.end);
            }
        }
    }

    void criticalPathNamesTheLessonsDependency_data()
    {
        QTest::addColumn<QString>("lesson");
        QTest::addColumn<QString>("variant");
        QTest::addColumn<QString>("reason");
        QTest::addColumn<QString>("span"); // a span on the path released for that reason
        QTest::newRow("03 consumer waits for the producer") << "03"_q
                                                            << ""_q
                                                            << "event wait"_q
                                                            << "consumer"_q;
        QTest::newRow("04 blocking: the barrier") << "04"_q
                                                  << "blocking"_q
                                                  << "implicit"_q
                                                  << "work4"_q;
        QTest::newRow("02 one stream") << "02"_q
                                       << ""_q
                                       << "stream order"_q
                                       << "transpose"_q;
        QTest::newRow("15 the callbacks") << "15"_q
                                          << ""_q
                                          << "stream order"_q
                                          << "after 3"_q;
    }
    void criticalPathNamesTheLessonsDependency()
    {
        QFETCH(QString, lesson);
        QFETCH(QString, variant);
        QFETCH(QString, reason);
        QFETCH(QString, span);
        const CriticalPath p =
            streamscope::criticalPath(simulate(::lesson(lesson.toStdString(), variant.toStdString())));
        bool found = false;
        for (const auto& s : p.segments)
            found = found || (q(s.name) == span && q(std::string(toString(s.reason))) == reason);
        QVERIFY2(found, qPrintable(pathText(p)));
    }

    // A GPU op that was ready but held is released by what held it: recorded by the simulator on the lessons,
    // inferred from what ran on the H200 recordings of the same lessons.
    void criticalPathFollowsResources_data()
    {
        QTest::addColumn<QString>("lesson");
        QTest::addColumn<QString>("variant");
        QTest::addColumn<QString>("file"); // empty: the lesson simulated
        QTest::addColumn<QString>("waiter");
        QTest::addColumn<QString>("holder");
        QTest::addColumn<QString>("cause");
        const std::string h200 = std::string(STREAMSCOPE_SOURCE_DIR) + "/tests/data/h200/";
        const auto rec = [&h200](const char* f) { return q(h200 + f); };
        QTest::newRow("sim 12 gpu-filling: SMs") << "12"_q
                                                 << "gpu-filling"_q << QString() << "small"_q
                                                 << "big"_q
                                                 << "sms"_q;
        QTest::newRow("h200 12 gpu-filling: SMs")
            << QString() << QString() << rec("variants/12-gpu-filling-kernel--gpu-filling.json") << "small"_q
            << "big"_q
            << "sms"_q;
        QTest::newRow("sim 07 one device: SMs") << "07"_q
                                                << "one-device"_q << QString() << "work1"_q
                                                << "work0"_q
                                                << "sms"_q;
        QTest::newRow("sim 11 connections-8: queue") << "11"_q
                                                     << "connections-8"_q << QString() << "first 31"_q
                                                     << "first 23"_q
                                                     << "hardware-queue"_q;
        QTest::newRow("h200 11 connections-8: queue")
            << QString() << QString() << rec("variants/11-hardware-queues--connections-8.json") << "first 15"_q
            << "first 7"_q
            << "hardware-queue"_q;
        QTest::newRow("sim 11 connections-1: queue") << "11"_q
                                                     << "connections-1"_q << QString() << "first 1"_q
                                                     << "first 0"_q
                                                     << "hardware-queue"_q;
        // Pinned copies both ways share the link at duplex bandwidth; D2H is the slower direction then (50.6 against
        // 51.0 GB/s in the H200 profile), so each D2H copy waits for the one before it on its engine, simulated and
        // on the H200 alike, and the path runs through the D2H engine's queue.
        QTest::newRow("sim 08: copy engine") << "08"_q << QString() << QString() << "d2h 1"_q
                                             << "d2h 0"_q
                                             << "copy-engine"_q;
        QTest::newRow("h200 08: copy engine")
            << QString() << QString() << rec("08-copy-compute-pipeline.json") << "d2h 1"_q
            << "d2h 0"_q
            << "copy-engine"_q;
        QTest::newRow("sim 15: host-function thread") << "15"_q << QString() << QString() << "callback 1"_q
                                                      << "callback 0"_q
                                                      << "host-func-thread"_q;
        QTest::newRow("h200 15: host-function thread")
            << QString() << QString() << rec("15-host-functions.json") << "callback 2"_q
            << "callback 1"_q
            << "host-func-thread"_q;
    }
    void criticalPathFollowsResources()
    {
        QFETCH(QString, lesson);
        QFETCH(QString, variant);
        QFETCH(QString, file);
        QFETCH(QString, waiter);
        QFETCH(QString, holder);
        QFETCH(QString, cause);
        Trace t;
        if (file.isEmpty()) {
            t = simulate(::lesson(lesson.toStdString(), variant.toStdString()));
        } else {
            auto loaded = loadTraceFile(file.toStdString());
            QVERIFY2(loaded.ok(), loaded.error().toString().c_str());
            t = std::move(*loaded);
        }
        const CriticalPath p = streamscope::criticalPath(t);
        size_t k = 1;
        while (k < p.segments.size() && q(p.segments[k].name) != waiter)
            ++k;
        QVERIFY2(k < p.segments.size(), qPrintable(pathText(p)));
        const CriticalPathSegment& seg = p.segments[k];
        QCOMPARE(q(std::string(toString(seg.reason))), "resource"_q);
        QCOMPARE(q(std::string(toString(seg.wait))), cause);
        QCOMPARE(q(p.segments[k - 1].name), holder);
        QCOMPARE(seg.waitInferred, !file.isEmpty());
        // Ready at the end of its last dependency, held until the holder let it start.
        QVERIFY2(seg.waitNs > 1000, qPrintable(QString::number(seg.waitNs)));
        QVERIFY(seg.waitNs <= seg.start - p.segments.front().start);
        QVERIFY(p.resourceWaitNs >= seg.waitNs);
        const std::string text = describeRelease(t, p, k);
        QVERIFY2(text.starts_with("waited ") && text.find("'" + holder.toStdString() + "'") != std::string::npos,
                 text.c_str());
    }

    // Inference on a trace without recorded waits: from what ended on the device while the op was ready.
    void criticalPathInfersResources_data()
    {
        QTest::addColumn<QString>("spans");
        QTest::addColumn<int>("extraStreams"); // idle streams added to the device (a queue shared above 8)
        QTest::addColumn<int>("grid");         // blocks of A, 0: unknown
        QTest::addColumn<QString>("reason");   // why B could start
        QTest::addColumn<QString>("cause");
        const QString kernels =
            "h:api-call:0:100:L1 h:api-call:100:200:L2 s1:kernel:300:50300:A s2:kernel:50300:60000:B"_q;
        QTest::newRow("kernel after a kernel of unknown size: SMs") << kernels << 0 << 0 << "resource"_q
                                                                    << "sms"_q;
        QTest::newRow("kernel after a kernel that filled the SMs") << kernels << 0 << 1000 << "resource"_q
                                                                   << "sms"_q;
        QTest::newRow("room on the SMs, own queues: no resource") << kernels << 0 << 4 << "launch"_q
                                                                  << "none"_q;
        QTest::newRow("room on the SMs, 10 streams: queue") << kernels << 8 << 4 << "resource"_q
                                                            << "hardware-queue"_q;
        QTest::newRow("copy after a copy of the same direction")
            << "h:api-call:0:100:L1 h:api-call:100:200:L2 s1:memcpy-h2d:300:50300:A s2:memcpy-h2d:50300:60000:B"_q << 0
            << 0 << "resource"_q
            << "copy-engine"_q;
        QTest::newRow("copies of two directions: no resource")
            << "h:api-call:0:100:L1 h:api-call:100:200:L2 s1:memcpy-h2d:300:50300:A s2:memcpy-d2h:50300:60000:B"_q << 0
            << 0 << "launch"_q
            << "none"_q;
        QTest::newRow("host function after a host function")
            << "h:api-call:0:100:L1 h:api-call:100:200:L2 s1:host-func:300:50300:A s2:host-func:50300:60000:B"_q << 0
            << 0 << "resource"_q
            << "host-func-thread"_q;
        QTest::newRow("a wait of 3 us is latency, not inferred")
            << "h:api-call:0:100:L1 h:api-call:100:200:L2 s1:kernel:300:3200:A s2:kernel:3200:60000:B"_q << 0 << 0
            << "launch"_q
            << "none"_q;
    }
    void criticalPathInfersResources()
    {
        QFETCH(QString, spans);
        QFETCH(int, extraStreams);
        QFETCH(int, grid);
        QFETCH(QString, reason);
        QFETCH(QString, cause);
        Trace t = traceOf(spans, "L1>A:launch L2>B:launch"_q);
        t.info.source = TraceSource::Imported;
        t.info.devices = {{0, "GPU", {{"sm_count", "132"}}}};
        for (int i = 0; i < extraStreams; ++i)
            t.addTrack({TrackKind::Stream, "idle " + std::to_string(i), 0});
        for (uint32_t i = 0; i < t.spanCount(); ++i)
            if (t.spanName(i) == "A")
                t.spans.grid[i] = Dim3{uint32_t(grid), grid ? 1u : 0u, grid ? 1u : 0u};
        t.finalize();
        const CriticalPath p = streamscope::criticalPath(t);
        QCOMPARE(q(p.segments.back().name), "B"_q);
        QCOMPARE(q(std::string(toString(p.segments.back().reason))), reason);
        QCOMPARE(q(std::string(toString(p.segments.back().wait))), cause);
        if (cause != "none"_q) {
            QCOMPARE(q(p.segments[p.segments.size() - 2].name), "A"_q);
            QCOMPARE(p.segments.back().waitNs, int64_t(50300 - 200));
            QCOMPARE(p.idleNs, int64_t(300 - 100)); // launch latency of A; B starts as A ends
        }
    }

    // On every lesson, variant and recording: an op the simulator recorded as held for more than 5 % of the path
    // is released by its holder on the path, and no idle time before a part is left without a cause.
    void criticalPathNamesEveryLongWait_data()
    {
        addEveryTrace();
        // The real PyTorch traces too (recorded on an H200; tests/data/pytorch/README.md).
        const auto dir = std::filesystem::path(STREAMSCOPE_SOURCE_DIR) / "tests" / "data" / "pytorch";
        std::vector<std::string> files;
        for (const auto& e : std::filesystem::directory_iterator(dir))
            if (const std::string f = e.path().filename().string();
                (f.ends_with(".json") || f.ends_with(".json.gz")) && f.find("provenance") == std::string::npos)
                files.push_back(e.path().string());
        std::sort(files.begin(), files.end());
        for (const auto& f : files)
            QTest::newRow(("pytorch " + std::filesystem::path(f).filename().string()).c_str())
                << QString() << QString() << q(f);
    }
    void criticalPathNamesEveryLongWait()
    {
        const Trace t = fetchTrace();
        const CriticalPath p = streamscope::criticalPath(t);
        for (size_t k = 1; k < p.segments.size(); ++k) {
            const CriticalPathSegment& seg = p.segments[k];
            if (seg.idleBeforeNs * 20 > p.lengthNs)
                QVERIFY2(idleCauseOf(seg) != IdleCause::Other, describeRelease(t, p, k).c_str());
            // A hold the simulator recorded is never shown as idle time.
            const uint32_t holder = t.spans.waitForOf(seg.span);
            if (holder != kNoSpan && t.spans.end[holder] <= seg.end && seg.idleBeforeNs * 20 > p.lengthNs)
                QFAIL((seg.name + ": " + describeRelease(t, p, k)).c_str());
        }
        int64_t idle = 0;
        for (int64_t v : p.idleByCause)
            idle += v;
        QCOMPARE(idle, p.idleNs);
    }

    // A million spans: one host thread launching 500 000 kernels round-robin into four streams. (How fast is a
    // benchmark's business; this checks the walk over a long path is right.)
    void criticalPathOfAMillionSpans()
    {
        Trace t;
        const uint32_t host = t.addTrack({TrackKind::HostThread, "main", 0});
        uint32_t streams[4];
        for (int s = 0; s < 4; ++s)
            streams[s] = t.addTrack({TrackKind::Stream, "s" + std::to_string(s), 0});
        const int n = 500'000;
        t.spans.reserve(2 * n);
        int64_t streamEnd[4] = {0, 0, 0, 0};
        for (int i = 0; i < n; ++i) {
            const int64_t callStart = int64_t(i) * 2500;
            const uint32_t call = t.addSpan({host, SpanKind::ApiCall, "cudaLaunchKernel", callStart, callStart + 2500});
            const int s = i % 4;
            // Kernels of 12 µs: four streams of them take 3 µs per launch, longer than the 2.5 µs launches.
            const int64_t start = std::max(callStart + 2500 + 4000, streamEnd[s] + 1000);
            streamEnd[s] = start + 12000;
            const uint32_t k = t.addSpan({streams[s], SpanKind::Kernel, "k", start, start + 12000});
            t.addFlow(call, k, FlowKind::Launch);
        }
        t.finalize();
        const CriticalPath p = streamscope::criticalPath(t);
        QCOMPARE(p.endNs, t.timeRange().second);
        QCOMPARE(p.busyNs + p.idleNs, p.lengthNs);
        // GPU-bound: after the first launch the path stays in the last stream, 125 000 kernels long.
        QVERIFY(p.segments.front().reason == PathReason::Start);
        QVERIFY(p.segments.back().kind == SpanKind::Kernel);
        QVERIFY(p.segments.size() >= size_t(n / 4));
        QVERIFY(p.gpuNs > p.lengthNs * 9 / 10);
        const TraceAnalysis a = analyzeTrace(t);
        QCOMPARE(a.metrics.gpuSpanCount, qint64(n));
        QCOMPARE(a.concurrency.maxConcurrency, 4);
    }

    // ---- JSON and text ------------------------------------------------------------------------------------------

    void json_data() { addEveryTrace(); }
    void json()
    {
        const Trace t = fetchTrace();
        ReportOptions o;
        o.concurrencySteps = true;
        o.maxCriticalPathSegments = 5;
        const auto j = nlohmann::json::parse(analysisToJson(t, o));
        const TraceMetrics m = computeMetrics(t);
        const auto& jm = j.at("metrics");
        // The key names of the CLI's earlier output are kept.
        QCOMPARE(jm.at("makespan_ns").get<int64_t>(), m.makespanNs);
        QCOMPARE(jm.at("gpu_work_ns").get<int64_t>(), m.gpuWorkNs);
        QCOMPARE(jm.at("max_concurrency").get<int>(), m.maxConcurrency);
        QCOMPARE(jm.at("copy_compute_overlap_ns").get<int64_t>(), m.copyComputeOverlapNs);
        QCOMPARE(jm.at("api_call_count").get<int64_t>(), m.apiCallCount);
        QCOMPARE(jm.at("streams").size(), m.streams.size());
        for (size_t i = 0; i < m.streams.size(); ++i) {
            QCOMPARE(q(jm["streams"][i].at("name").get<std::string>()), q(m.streams[i].name));
            QCOMPARE(jm["streams"][i].at("busy_ns").get<int64_t>(), m.streams[i].busyNs);
        }
        QVERIFY(jm.at("concurrency").at("steps").is_array());
        QVERIFY(jm.at("devices").is_array());
        QVERIFY(jm.at("host_threads").is_array());
        const auto& cp = j.at("critical_path");
        QVERIFY(cp.is_array() && !cp.empty() && cp.size() <= 5);
        for (const auto& s : cp) {
            QVERIFY(s.at("span").get<uint32_t>() < t.spanCount());
            QVERIFY(s.contains("reason") && s.contains("contribution_ns") && s.contains("track_name"));
        }
        QCOMPARE(cp.back().at("end_ns").get<int64_t>(), t.timeRange().second);
        QCOMPARE(j.at("critical_path_summary").at("segments").get<size_t>(),
                 streamscope::criticalPath(t).segments.size());
        const auto diagnostics = diagnose(t);
        QCOMPARE(j.at("diagnostics").size(), diagnostics.size());
        for (size_t i = 0; i < diagnostics.size(); ++i) {
            QCOMPARE(q(j["diagnostics"][i].at("rule").get<std::string>()), q(diagnostics[i].rule));
            QCOMPARE(q(j["diagnostics"][i].at("message").get<std::string>()), q(diagnostics[i].message));
            QVERIFY(j["diagnostics"][i].at("spans").get<std::vector<uint32_t>>() == diagnostics[i].spans);
        }
        const std::string report = analysisReport(t);
        QVERIFY(report.find("makespan:") != std::string::npos);
        QVERIFY(report.find("critical path:") != std::string::npos);
        for (const auto& d : diagnostics)
            QVERIFY(report.find(d.message) != std::string::npos);
    }

    void jsonOnOneLine()
    {
        const Trace t = traceOf("s1:kernel:0:100:a");
        ReportOptions o;
        o.indent = -1;
        const std::string s = analysisToJson(t, o);
        QVERIFY(s.find('\n') == std::string::npos);
        QVERIFY(nlohmann::json::parse(s).contains("diagnostics"));
    }

    void formatDuration_data()
    {
        QTest::addColumn<qint64>("ns");
        QTest::addColumn<QString>("text");
        QTest::newRow("ns") << qint64(850) << "850 ns"_q;
        QTest::newRow("us") << qint64(12500) << QString::fromUtf8("12.5 \u00B5s");
        QTest::newRow("ms") << qint64(3210000) << "3.210 ms"_q;
        QTest::newRow("s") << qint64(1234000000) << "1.234 s"_q;
    }
    void formatDuration()
    {
        QFETCH(qint64, ns);
        QFETCH(QString, text);
        QCOMPARE(q(streamscope::formatDuration(ns)), text);
    }

    // ---- comparison ---------------------------------------------------------------------------------------------

    void compare()
    {
        // Lesson 1 (two streams overlap) against its one-stream variant.
        const Trace a = simulate(lesson("01"));
        const Trace b = simulate(lesson("01", "one-stream"));
        const TraceComparison c = compareTraces(a, b);
        QVERIFY(c.makespanDeltaNs > 0);
        QCOMPARE(c.makespanDeltaNs, c.b.makespanNs - c.a.makespanNs);
        QVERIFY(c.speedupOfB < 1);
        QVERIFY(c.speedupDelta < 0);
        QVERIFY(c.maxConcurrencyDelta < 0);
        QVERIFY(c.averageConcurrencyDelta < 0);
        // s1 and s2 are in both; in B, s2 has no work.
        QCOMPARE(c.streams.size(), size_t(2));
        QCOMPARE(q(c.streams[1].name), QStringLiteral("s2"));
        QVERIFY(c.streams[1].inA && c.streams[1].inB);
        QCOMPARE(c.streams[1].busyB, qint64(0));
        QCOMPARE(c.streams[1].busyDeltaNs, -c.streams[1].busyA);
        QCOMPARE(c.overlaps.size(), size_t(1));
        QVERIFY(c.overlaps[0].fractionA >= 0.6);
        QCOMPARE(c.overlaps[0].fractionB, 0.0);

        const auto j = nlohmann::json::parse(comparisonToJson(c));
        QCOMPARE(j.at("a").at("makespan_ns").get<int64_t>(), c.a.makespanNs);
        QCOMPARE(j.at("b").at("makespan_ns").get<int64_t>(), c.b.makespanNs);
        QCOMPARE(j.at("difference").at("makespan_ns").get<int64_t>(), c.makespanDeltaNs);
        QVERIFY(j.at("difference").contains("speedup"));
        QVERIFY(j.at("difference").contains("max_concurrency"));
        QCOMPARE(j.at("streams").size(), size_t(2));
        QCOMPARE(j.at("overlap").size(), size_t(1));
        const std::string text = comparisonReport(c, "two-streams", "one-stream");
        QVERIFY(text.find("two-streams -> one-stream") != std::string::npos);
        QVERIFY(text.find("makespan:") != std::string::npos);
        QVERIFY(text.find("s1 / s2") != std::string::npos);
    }

    void compareUnmatchedStreams()
    {
        const Trace a = traceOf("s1:kernel:0:100:a x:kernel:0:50:b");
        const Trace b = traceOf("s1:kernel:0:80:a y:kernel:0:50:c");
        const TraceComparison c = compareTraces(a, b);
        QCOMPARE(c.streams.size(), size_t(3));
        QVERIFY(c.streams[1].inA && !c.streams[1].inB);
        QVERIFY(!c.streams[2].inA && c.streams[2].inB);
        QCOMPARE(c.streams[0].busyDeltaNs, qint64(-20));
        QVERIFY(c.overlaps.empty());
        QCOMPARE(c.speedupOfB, 100.0 / 80.0);
    }

    // ---- sweeps -------------------------------------------------------------------------------------------------

    void sweepStreams_data()
    {
        QTest::addColumn<QString>("lesson");
        QTest::addColumn<int>("streams");
        QTest::addColumn<int>("used"); // streams that get work
        QTest::newRow("01 in one stream") << "01"_q << 1 << 1;
        QTest::newRow("01 in two") << "01"_q << 2 << 2;
        QTest::newRow("01 in eight") << "01"_q << 8 << 8; // 10 repeats x 2 kernels, unrolled
        QTest::newRow("03 in one") << "03"_q << 1 << 1;
        QTest::newRow("03 in four") << "03"_q << 4 << 2; // two chains: producer+record, independent+wait+consumer
        QTest::newRow("08 in two") << "08"_q << 2 << 2;
        QTest::newRow("08 in sixteen") << "08"_q << 16 << 8; // eight chunks
        QTest::newRow("04 keeps the default stream") << "04"_q << 2 << 3;
    }
    void sweepStreams()
    {
        QFETCH(QString, lesson);
        QFETCH(int, streams);
        QFETCH(int, used);
        const Scenario base = ::lesson(lesson.toStdString());
        auto s = sweepScenario(base, SweepKnob::Streams, streams);
        QVERIFY2(s.ok(), s.ok() ? "" : s.error().toString().c_str());
        QVERIFY(s->variants.empty());
        int ordinary = 0;
        for (const auto& st : s->streams)
            ordinary += st.kind == StreamKind::Blocking || st.kind == StreamKind::NonBlocking;
        QCOMPARE(ordinary, streams);
        // The same operations run (repeats unrolled), and the rewritten scenario simulates.
        QCOMPARE(countOperations(*s), countOperations(base));
        const Trace t = simulate(*s);
        const TraceAnalysis a = analyzeTrace(t);
        int busy = 0;
        for (const auto& st : a.streams)
            busy += st.spanCount > 0;
        QCOMPARE(busy, used);
        QCOMPARE(a.metrics.gpuSpanCount, computeMetrics(simulate(base)).gpuSpanCount);
    }

    void sweepKeepsDependencies()
    {
        // Lesson 3 in two streams: the consumer still waits for the producer's event.
        auto s = sweepScenario(lesson("03"), SweepKnob::Streams, 2);
        QVERIFY(s.ok());
        const Trace t = simulate(*s);
        Expectation gap;
        gap.metric = "gap_us";
        gap.spans = {"producer", "consumer"};
        auto r = evaluateMetric(t, gap);
        QVERIFY(r.ok());
        QVERIFY(*r >= 0);
    }

    void sweepChunksAndSize()
    {
        // Chunks: the thread's repeat becomes N, each op's work scaled so that the total stays the same.
        const Scenario base = lesson("08");
        auto four = sweepScenario(base, SweepKnob::Chunks, 4);
        QVERIFY(four.ok());
        QCOMPARE(four->threads[0].repeat, 4);
        QCOMPARE(four->threads[0].ops[0].bytes, base.threads[0].ops[0].bytes / 4);
        QCOMPARE(four->threads[0].ops[1].durationUs, base.threads[0].ops[1].durationUs / 4);
        auto same = sweepScenario(base, SweepKnob::Chunks, 4, -1, false);
        QVERIFY(same.ok());
        QCOMPARE(same->threads[0].ops[0].bytes, base.threads[0].ops[0].bytes);

        // Kernel size: durations and problem sizes scale; copies do not.
        const Scenario one = lesson("01");
        auto twice = sweepScenario(one, SweepKnob::KernelSize, 8);
        QVERIFY(twice.ok());
        QCOMPARE(twice->threads[0].ops[0].size, one.threads[0].ops[0].size * 2); // matmul: n^3 work
        const Scenario spin = lesson("12");
        auto half = sweepScenario(spin, SweepKnob::KernelSize, 0.5);
        QVERIFY(half.ok());
        QCOMPARE(half->threads[0].ops[0].durationUs, spin.threads[0].ops[0].durationUs / 2);
        const Scenario pipe = lesson("08");
        auto bigger = sweepScenario(pipe, SweepKnob::KernelSize, 2);
        QCOMPARE(bigger->threads[0].ops[0].bytes, pipe.threads[0].ops[0].bytes);
        // Only the chosen thread changes.
        const Scenario threads = lesson("05");
        auto first = sweepScenario(threads, SweepKnob::KernelSize, 2, 0);
        QVERIFY(first.ok());
        QCOMPARE(first->threads[0].ops[0].durationUs, 1000.0);
        QCOMPARE(first->threads[1].ops[0].durationUs, 500.0);
    }

    void sweepErrors_data()
    {
        QTest::addColumn<QString>("lesson");
        QTest::addColumn<QString>("knob");
        QTest::addColumn<double>("value");
        QTest::addColumn<int>("thread");
        QTest::addColumn<QString>("message");
        QTest::newRow("zero") << "01"_q
                              << "streams"_q << 0.0 << -1 << "positive"_q;
        QTest::newRow("negative size") << "01"_q
                                       << "kernel-size"_q << -2.0 << -1 << "positive"_q;
        QTest::newRow("no such thread") << "01"_q
                                        << "chunks"_q << 2.0 << 3 << "no thread 3"_q;
        QTest::newRow("too many streams") << "01"_q
                                          << "streams"_q << 5000.0 << -1 << "1..4096"_q;
        QTest::newRow("only default streams") << "06"_q
                                              << "streams"_q << 2.0 << -1 << "no blocking or non-blocking"_q;
    }
    void sweepErrors()
    {
        QFETCH(QString, lesson);
        QFETCH(QString, knob);
        QFETCH(double, value);
        QFETCH(int, thread);
        QFETCH(QString, message);
        const auto k = sweepKnobFromString(knob.toStdString());
        QVERIFY(k.has_value());
        auto s = sweepScenario(::lesson(lesson.toStdString()), *k, value, thread);
        QVERIFY(!s.ok());
        QVERIFY2(q(s.error().toString()).contains(message), s.error().toString().c_str());
    }

    void runSweep()
    {
        // Lesson 10's 32 one-block kernels: more streams, shorter makespan, up to the 32 hardware queues.
        SweepSpec spec;
        spec.knob = SweepKnob::Streams;
        spec.values = {1, 2, 4, 8, 0};
        const auto points = streamscope::runSweep(lesson("10"), spec);
        QCOMPARE(points.size(), size_t(5));
        for (size_t i = 0; i < 4; ++i) {
            QVERIFY2(points[i].error.empty(), points[i].error.c_str());
            QVERIFY(points[i].makespanNs > 0);
            QCOMPARE(points[i].maxConcurrency, int(points[i].value));
            if (i > 0)
                QVERIFY(points[i].makespanNs < points[i - 1].makespanNs);
        }
        QCOMPARE(points[0].relativeSpeedup, 1.0);
        QVERIFY(points[3].relativeSpeedup > 6);
        QVERIFY(points[3].speedup > 6);
        QVERIFY(!points[4].error.empty());
        const auto j = nlohmann::json::parse(sweepToJson(spec, points));
        QCOMPARE(q(j.at("knob").get<std::string>()), QStringLiteral("streams"));
        QCOMPARE(j.at("points").size(), size_t(5));
        QCOMPARE(j["points"][1].at("makespan_ns").get<int64_t>(), points[1].makespanNs);
        QVERIFY(j["points"][4].contains("error"));

        auto all = sweepScenarios(lesson("01"), SweepSpec{SweepKnob::Chunks, {}, -1, true});
        QVERIFY(all.ok());
        QCOMPARE(all->size(), defaultSweepValues(SweepKnob::Chunks).size());
        std::atomic<bool> cancel{true};
        QVERIFY(streamscope::runSweep(lesson("01"), spec, {}, &cancel).empty());
    }

    void knobNames()
    {
        for (SweepKnob k : {SweepKnob::Streams, SweepKnob::Chunks, SweepKnob::KernelSize})
            QVERIFY(sweepKnobFromString(toString(k)) == std::optional<SweepKnob>(k));
        QVERIFY(!sweepKnobFromString("threads").has_value());
        QCOMPARE(defaultSweepValues(SweepKnob::Streams).size(), size_t(16));
    }
};

QTEST_GUILESS_MAIN(TestAnalysis)
#include "tst_analysis.moc"
