// The critical path: through hand-made dependency graphs, through every lesson (naming each one's dependency), through
// the resources that held ready work, and over a million spans.
#include "tst_analysis.h"

#include "collectives.h"
#include "diagnostics.h"

// ---- critical path ------------------------------------------------------------------------------------------

void TestAnalysis::criticalPath_data()
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

void TestAnalysis::criticalPath()
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
void TestAnalysis::criticalPathOfLessons_data()
{
    addEveryTrace();
}

void TestAnalysis::criticalPathOfLessons()
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

// The window's report builds the flows by target once for the critical path and the diagnostics, which run at once:
// on every lesson the index lists each span's incoming flows in order, and the path and the findings given it are
// those each computes with its own.
void TestAnalysis::incomingFlowsSharedGiveTheSameResults_data()
{
    addEveryTrace();
}

void TestAnalysis::incomingFlowsSharedGiveTheSameResults()
{
    const Trace t = fetchTrace();
    QVERIFY(t.finalized());
    const IncomingFlows incoming(t);
    std::vector<std::vector<uint32_t>> expected(t.spanCount());
    for (uint32_t k = 0; k < t.flows.size(); ++k)
        if (t.flows[k].to < t.spanCount())
            expected[t.flows[k].to].push_back(k);
    for (uint32_t i = 0; i < t.spanCount(); ++i) {
        const auto of = incoming.of(i);
        QVERIFY(std::vector<uint32_t>(of.begin(), of.end()) == expected[i]);
    }
    QVERIFY(incoming.of(uint32_t(t.spanCount())).empty());

    const CriticalPath own = streamscope::criticalPath(t), shared = streamscope::criticalPath(t, &incoming);
    QCOMPARE(shared.segments.size(), own.segments.size());
    for (size_t k = 0; k < own.segments.size(); ++k) {
        QCOMPARE(shared.segments[k].span, own.segments[k].span);
        QVERIFY(shared.segments[k].reason == own.segments[k].reason);
        QCOMPARE(shared.segments[k].idleBeforeNs, own.segments[k].idleBeforeNs);
    }
    QCOMPARE(shared.lengthNs, own.lengthNs);

    DiagnosticOptions options;
    options.incoming = &incoming;
    const std::vector<Diagnostic> mine = diagnose(t), given = diagnose(t, options);
    QCOMPARE(given.size(), mine.size());
    for (size_t k = 0; k < mine.size(); ++k) {
        QCOMPARE(q(given[k].rule), q(mine[k].rule));
        QCOMPARE(q(given[k].message), q(mine[k].message));
        QVERIFY(given[k].spans == mine[k].spans);
    }
}

void TestAnalysis::criticalPathNamesTheLessonsDependency_data()
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

void TestAnalysis::criticalPathNamesTheLessonsDependency()
{
    QFETCH(QString, lesson);
    QFETCH(QString, variant);
    QFETCH(QString, reason);
    QFETCH(QString, span);
    const CriticalPath p = streamscope::criticalPath(simulate(::lesson(lesson.toStdString(), variant.toStdString())));
    bool found = false;
    for (const auto& s : p.segments)
        found = found || (q(s.name) == span && q(std::string(toString(s.reason))) == reason);
    QVERIFY2(found, qPrintable(pathText(p)));
}

// A GPU op that was ready but held is released by what held it: recorded by the simulator on the lessons,
// inferred from what ran on the H200 recordings of the same lessons.
namespace {

// "h2d" or "d2h": the direction whose copies of a recording took longer (the median span of each).
std::string slowerCopyDirection(const std::string& file)
{
    const auto t = loadTraceFile(file);
    if (!t.ok())
        return "?";
    std::vector<int64_t> h2d, d2h;
    for (uint32_t i = 0; i < t->spanCount(); ++i) {
        if (t->spans.kind[i] == SpanKind::MemcpyH2D)
            h2d.push_back(t->duration(i));
        else if (t->spans.kind[i] == SpanKind::MemcpyD2H)
            d2h.push_back(t->duration(i));
    }
    if (h2d.empty() || d2h.empty())
        return "?";
    auto median = [](std::vector<int64_t> v) {
        std::nth_element(v.begin(), v.begin() + ptrdiff_t(v.size() / 2), v.end());
        return v[v.size() / 2];
    };
    return median(h2d) > median(d2h) ? "h2d" : "d2h";
}

} // namespace

void TestAnalysis::criticalPathFollowsResources_data()
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
    // Pinned copies both ways share the link at duplex bandwidth; the path runs through the slower direction's
    // engine, each of its copies waiting for the one before it: in the simulator the direction with the lower
    // duplex figure of the profile (which one differs between calibrations: 47.5 against 51.3 GB/s H2D/D2H in one,
    // 52.1 against 50.6 in another), on the H200 the direction whose copies took longer in the recording.
    const auto profile = findDeviceProfile("h200");
    QVERIFY(profile.ok());
    const std::string simSlow = profile->h2dPinnedDuplexBps < profile->d2hPinnedDuplexBps ? "h2d" : "d2h";
    QTest::newRow("sim 08: copy engine") << "08"_q << QString() << QString() << q(simSlow + " 1") << q(simSlow + " 0")
                                         << "copy-engine"_q;
    const std::string recSlow = slowerCopyDirection(rec("08-copy-compute-pipeline.json").toStdString());
    QTest::newRow("h200 08: copy engine") << QString() << QString() << rec("08-copy-compute-pipeline.json")
                                          << q(recSlow + " 1") << q(recSlow + " 0") << "copy-engine"_q;
    QTest::newRow("sim 15: host-function thread") << "15"_q << QString() << QString() << "callback 1"_q
                                                  << "callback 0"_q
                                                  << "host-func-thread"_q;
    QTest::newRow("h200 15: host-function thread")
        << QString() << QString() << rec("15-host-functions.json") << "callback 2"_q
        << "callback 1"_q
        << "host-func-thread"_q;
}

void TestAnalysis::criticalPathFollowsResources()
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
void TestAnalysis::criticalPathInfersResources_data()
{
    QTest::addColumn<QString>("spans");
    QTest::addColumn<int>("extraStreams"); // idle streams added to the device (a queue shared above 8)
    QTest::addColumn<int>("grid");         // blocks of A, 0: unknown
    QTest::addColumn<QString>("reason");   // why B could start
    QTest::addColumn<QString>("cause");
    const QString kernels = "h:api-call:0:100:L1 h:api-call:100:200:L2 s1:kernel:300:50300:A s2:kernel:50300:60000:B"_q;
    QTest::newRow("kernel after a kernel of unknown size: SMs") << kernels << 0 << 0 << "resource"_q
                                                                << "sms"_q;
    QTest::newRow("kernel after a kernel that filled the SMs") << kernels << 0 << 1000 << "resource"_q
                                                               << "sms"_q;
    QTest::newRow("room on the SMs, own queues: no resource") << kernels << 0 << 4 << "launch"_q
                                                              << "none"_q;
    QTest::newRow("room on the SMs, 10 streams: queue") << kernels << 8 << 4 << "resource"_q
                                                        << "hardware-queue"_q;
    QTest::newRow("copy after a copy of the same direction")
        << "h:api-call:0:100:L1 h:api-call:100:200:L2 s1:memcpy-h2d:300:50300:A s2:memcpy-h2d:50300:60000:B"_q << 0 << 0
        << "resource"_q
        << "copy-engine"_q;
    QTest::newRow("copies of two directions: no resource")
        << "h:api-call:0:100:L1 h:api-call:100:200:L2 s1:memcpy-h2d:300:50300:A s2:memcpy-d2h:50300:60000:B"_q << 0 << 0
        << "launch"_q
        << "none"_q;
    QTest::newRow("host function after a host function")
        << "h:api-call:0:100:L1 h:api-call:100:200:L2 s1:host-func:300:50300:A s2:host-func:50300:60000:B"_q << 0 << 0
        << "resource"_q
        << "host-func-thread"_q;
    QTest::newRow("a wait of 3 us is latency, not inferred")
        << "h:api-call:0:100:L1 h:api-call:100:200:L2 s1:kernel:300:3200:A s2:kernel:3200:60000:B"_q << 0 << 0
        << "launch"_q
        << "none"_q;
}

void TestAnalysis::criticalPathInfersResources()
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
        if (t.spanName(i) == "A") {
            SpanDetail d = t.spans.detailOf(i);
            d.grid = Dim3{uint32_t(grid), grid ? 1u : 0u, grid ? 1u : 0u};
            t.spans.setDetail(i, d);
        }
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
void TestAnalysis::criticalPathNamesEveryLongWait_data()
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

void TestAnalysis::criticalPathNamesEveryLongWait()
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
void TestAnalysis::criticalPathOfAMillionSpans()
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

namespace {

uint32_t spanNamed(const Trace& t, std::string_view name)
{
    for (uint32_t i = 0; i < t.spanCount(); ++i)
        if (t.spanName(i) == name)
            return i;
    qFatal("no span %s", std::string(name).c_str());
}

} // namespace

// Two ranks in one collective call (rows "rank R · ..."): rank 1's compute ends 190 ns after rank 0's. Rank 0's part
// waited for rank 1, the last to arrive: the path goes through rank 1's compute, and the wait is a collective wait
// naming rank 1, not idle time in rank 0's stream.
void TestAnalysis::criticalPathNamesCollectiveWaits()
{
    // As the simulator places them: both parts start when the last rank has arrived.
    Trace sim = traceOf("c0:kernel:0:100:A0 c0:kernel:300:350:P0 c1/1:kernel:0:290:A1 c1/1:kernel:300:350:P1"_q,
                        "P0>P1:collective"_q);
    sim.tracks[uint32_t(sim.findStreamTrack("c0"))].name = "rank 0 · c0";
    sim.tracks[uint32_t(sim.findStreamTrack("c1"))].name = "rank 1 · c1";
    const CriticalPath p = streamscope::criticalPath(sim);
    QCOMPARE(pathText(p), "A1:start:290:0 P0:resource:50:10"_q);
    const CriticalPathSegment& wait = p.segments[1];
    QCOMPARE(wait.waitRank, 1);
    QCOMPARE(wait.waitNs, qint64(190));
    QCOMPARE(wait.waitPart, uint32_t(spanNamed(sim, "P1")));
    QVERIFY(wait.wait == WaitCause::None);
    QCOMPARE(p.collectiveWaitNs, qint64(190));
    QCOMPARE(p.resourceWaitNs, qint64(0));
    QCOMPARE(p.idleByCause[size_t(IdleCause::StreamGap)], qint64(0));
    QCOMPARE(p.busyNs + p.idleNs, p.lengthNs);
    const std::string text = describeRelease(sim, p, 1);
    QVERIFY2(text.find("waited 190 ns in the collective for rank 1") != std::string::npos, text.c_str());
    const auto j = nlohmann::json::parse(analysisToJson(sim));
    QCOMPARE(j["critical_path"][1]["reason"].get<std::string>(), std::string("collective wait"));
    QCOMPARE(j["critical_path"][1]["wait"]["rank"].get<int>(), 1);
    QCOMPARE(j["critical_path_summary"]["collective_wait_ns"].get<int64_t>(), int64_t(190));
    // The inspector's question for rank 0's part: what released it.
    const CriticalPath released = releaseOf(sim, uint32_t(spanNamed(sim, "P0")));
    QCOMPARE(pathText(released), "A1:start:290:0 P0:resource:50:10"_q);
    QCOMPARE(released.segments[1].waitRank, 1);

    // As NCCL runs them: each rank's kernel starts when launched and spins until all have arrived. The path ends in
    // rank 1's part (it started last), which waited for no one: plain stream order.
    Trace nccl = traceOf("c0:kernel:0:100:A0 c0:kernel:100:350:P0 c1/1:kernel:0:290:A1 c1/1:kernel:290:350:P1"_q,
                         "P0>P1:collective"_q);
    nccl.tracks[uint32_t(nccl.findStreamTrack("c0"))].name = "rank 0 · c0";
    nccl.tracks[uint32_t(nccl.findStreamTrack("c1"))].name = "rank 1 · c1";
    const CriticalPath q = streamscope::criticalPath(nccl);
    QCOMPARE(pathText(q), "A1:start:290:0 P1:stream order:60:0"_q);
    QCOMPARE(q.collectiveWaitNs, qint64(0));
    // Rank 0's long part is released by rank 1's compute: its 190 ns of spinning were a wait for rank 1.
    const CriticalPath r = releaseOf(nccl, uint32_t(spanNamed(nccl, "P0")));
    QCOMPARE(pathText(r), "A1:start:290:0 P0:resource:60:0"_q);
    QCOMPARE(r.segments[1].waitRank, 1);
    QCOMPARE(r.segments[1].waitNs, qint64(190));

    // Without the collective flow the two parts are unrelated: rank 0's part follows its own stream.
    const Trace apart =
        traceOf("c0:kernel:0:100:A0 c0:kernel:300:360:P0 c1/1:kernel:0:290:A1 c1/1:kernel:300:350:P1"_q);
    QCOMPARE(pathText(streamscope::criticalPath(apart)), "A0:start:100:0 P0:stream order:60:200"_q);
}

// Lesson 19 (a straggler rank): the path runs through the straggler's compute, and the last all-reduce of the rank
// the walk started from is named a collective wait for rank 2 instead of a millisecond of stream-gap idle.
void TestAnalysis::criticalPathCollectiveWaitOfALesson()
{
    const Trace t = simulate(lesson("19"));
    const CriticalPath p = streamscope::criticalPath(t);
    QVERIFY(p.collectiveWaitNs > 900'000);
    QVERIFY(p.idleNs < 100'000);
    bool named = false;
    for (const auto& seg : p.segments) {
        if (seg.waitPart != kNoSpan) {
            QCOMPARE(seg.waitRank, 2);
            named = true;
        } else if (isGpuSpan(seg.kind)) {
            QCOMPARE(rankOfTrack(t, seg.track), 2); // the rest of the path is the straggler's work
        }
    }
    QVERIFY(named);
}
