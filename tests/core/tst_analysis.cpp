// The analysis's metrics on hand-made traces and on every lesson and recorded trace, its JSON and text forms, and
// the comparison of two traces.
#include "tst_analysis.h"

namespace {

// A reproducible pseudo-random sequence (a linear congruential generator) for the random traces below:
// next(n) is in [0, n).
struct Lcg {
    uint64_t seed;
    int64_t operator()(int64_t n)
    {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        return int64_t((seed >> 33) % uint64_t(n));
    }
};

// `count` streams, on devices 0 and 1 in turn: the stream tracks of the random traces below.
std::vector<uint32_t> addStreams(Trace& t, int count)
{
    std::vector<uint32_t> tracks;
    for (int k = 0; k < count; ++k)
        tracks.push_back(t.addTrack({TrackKind::Stream, "s" + std::to_string(k), k % 2}));
    return tracks;
}

} // namespace

void TestAnalysis::initTestCase()
{
    QVERIFY2(listPresets().size() >= 15, "set STREAMSCOPE_RESOURCES to resources/");
}

// ---- metrics on hand-made traces ----------------------------------------------------------------------------

void TestAnalysis::metrics_data()
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
    QTest::newRow("two streams") << "s1:kernel:0:100:a s1:kernel:150:200:b s2:kernel:50:120:c s2:memcpy-h2d:180:300:d"_q
                                 << qint64(300) << qint64(270) << "120~150"_q
                                 << "30,200,70"_q
                                 << "0=1 50=2 100=1 120=0 150=1 180=2 200=1 300=0"_q << qint64(70) << qint64(20)
                                 << "100~150|120~180"_q;
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

void TestAnalysis::metrics()
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

void TestAnalysis::concurrencySeriesAgreesWithTheProfile()
{
    // concurrencySeries merges each track's sorted starts and ends; analyzeTrace's profile sorts every span's. On a
    // trace of 12 streams on 2 devices whose spans touch, nest, overlap on one stream (as imported ones may), last
    // no time, and share instants, plus host calls and ranges, which do not count: the same steps, overall and
    // per device, and the same maximum.
    Trace t;
    const std::vector<uint32_t> tracks = addStreams(t, 12);
    const uint32_t host = t.addTrack({TrackKind::HostThread, "main", 0});
    Lcg next{12345};
    for (int i = 0; i < 4000; ++i) {
        const uint32_t track = tracks[size_t(next(12))];
        const int64_t start = next(100) * 10; // coarse: many spans start and end at one instant
        const int64_t length = next(8) == 0 ? 0 : next(30) * 10;
        const SpanKind kind = next(5) == 0 ? SpanKind::MemcpyH2D : SpanKind::Kernel;
        t.addSpan({track, kind, "k", start, start + length});
        if (next(4) == 0)
            t.addSpan({host, SpanKind::ApiCall, "cudaLaunchKernel", start, start + 5});
    }
    t.finalize();
    const TraceAnalysis a = analyzeTrace(t);
    QVERIFY(a.concurrency.steps.size() > 100);
    QCOMPARE(stepsText(concurrencySteps(t)), stepsText(a.concurrency.steps));
    QCOMPARE(concurrencySeries(t).maxCount, a.concurrency.maxConcurrency);
    QCOMPARE(a.devices.size(), size_t(2));
    for (const DeviceAnalysis& d : a.devices)
        QCOMPARE(stepsText(concurrencySteps(t, d.device)), stepsText(d.concurrency.steps));
    // Held in about 6 bytes a step, not 16.
    const ConcurrencySeries series = concurrencySeries(t);
    QCOMPARE(series.size(), a.concurrency.steps.size());
    QVERIFY(series.memoryBytes() < series.size() * 8);
    // The same from a trace not finalized (a finalized copy is made).
    Trace unfinalized;
    unfinalized.addTrack({TrackKind::Stream, "s", 0});
    unfinalized.addSpan({0, SpanKind::Kernel, "b", 50, 80});
    unfinalized.addSpan({0, SpanKind::Kernel, "a", 0, 60});
    QCOMPARE(stepsText(concurrencySteps(unfinalized)), "0=1 50=2 60=1 80=0"_q);
}

void TestAnalysis::concurrencySeriesStopsWhenCancelled()
{
    // The window counts a big trace's steps on a worker and sets the flag when another trace is shown: the count
    // ends early, empty, and lets go of the trace.
    Trace t;
    const uint32_t s = t.addTrack({TrackKind::Stream, "s", 0});
    for (int i = 0; i < 1000; ++i)
        t.addSpan({s, SpanKind::Kernel, "k", 10 * i, 10 * i + 15});
    t.finalize();
    std::atomic<bool> cancel{false};
    const ConcurrencySeries counted = concurrencySeries(t, -1, &cancel);
    QCOMPARE(counted.size(), size_t(2000));
    QCOMPARE(counted.maxCount, 2);
    cancel = true;
    const ConcurrencySeries stopped = concurrencySeries(t, -1, &cancel);
    QCOMPARE(stopped.size(), size_t(0));
    QCOMPARE(stopped.maxCount, 0);
}

void TestAnalysis::metricsAgreeWithACountPerNanosecond()
{
    // computeMetrics merges each track's spans and then the tracks' lists; checked against a count at every
    // nanosecond of a trace of 10 streams on 2 devices whose copies and kernels overlap within and across streams,
    // touch, and last no time: the most running at once, copy and kernel time together, each stream's busy time.
    Trace t;
    const std::vector<uint32_t> tracks = addStreams(t, 10);
    const uint32_t host = t.addTrack({TrackKind::HostThread, "main", 0});
    Lcg next{777};
    constexpr int64_t kEnd = 3000;
    std::vector<int> running(kEnd, 0), copying(kEnd, 0), computing(kEnd, 0);
    std::vector<std::vector<int>> streamRunning(tracks.size(), std::vector<int>(kEnd, 0));
    for (int i = 0; i < 3000; ++i) {
        const size_t k = size_t(next(int64_t(tracks.size())));
        const int64_t start = next(2900), length = next(6) == 0 ? 0 : next(60);
        const bool copy = next(3) == 0;
        t.addSpan({tracks[k], copy ? SpanKind::MemcpyH2D : SpanKind::Kernel, "x", start, start + length});
        for (int64_t x = start; x < start + length; ++x) {
            ++running[size_t(x)];
            ++(copy ? copying : computing)[size_t(x)];
            ++streamRunning[k][size_t(x)];
        }
        if (next(3) == 0)
            t.addSpan({host, SpanKind::ApiCall, "cudaLaunchKernel", start, start + 3});
    }
    t.finalize();
    const TraceMetrics m = computeMetrics(t);
    QCOMPARE(m.maxConcurrency, *std::max_element(running.begin(), running.end()));
    QCOMPARE(maxConcurrency(t), m.maxConcurrency);
    int64_t both = 0;
    for (int64_t x = 0; x < kEnd; ++x)
        both += copying[size_t(x)] > 0 && computing[size_t(x)] > 0;
    QCOMPARE(m.copyComputeOverlapNs, both);
    QCOMPARE(m.streams.size(), tracks.size());
    for (size_t k = 0; k < tracks.size(); ++k) {
        QCOMPARE(m.streams[k].track, tracks[k]);
        QCOMPARE(m.streams[k].busyNs,
                 int64_t(std::count_if(streamRunning[k].begin(), streamRunning[k].end(), [](int n) { return n > 0; })));
    }
    // Per device, as the expectations ask for it.
    for (int device : {0, 1}) {
        std::vector<int> onDevice(kEnd, 0);
        for (size_t k = 0; k < tracks.size(); ++k)
            if (int(k) % 2 == device)
                for (int64_t x = 0; x < kEnd; ++x)
                    onDevice[size_t(x)] += streamRunning[k][size_t(x)];
        QCOMPARE(maxConcurrency(t, device), *std::max_element(onDevice.begin(), onDevice.end()));
    }
}

void TestAnalysis::twoDevices()
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

void TestAnalysis::launchRate()
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

void TestAnalysis::emptyTrace()
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

void TestAnalysis::unfinalizedTrace()
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
void TestAnalysis::metricsAgreeWithChecks_data()
{
    addEveryTrace();
}

void TestAnalysis::metricsAgreeWithChecks()
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

// ---- JSON and text ------------------------------------------------------------------------------------------

void TestAnalysis::json_data()
{
    addEveryTrace();
}

void TestAnalysis::json()
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
    QCOMPARE(j.at("critical_path_summary").at("segments").get<size_t>(), streamscope::criticalPath(t).segments.size());
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

void TestAnalysis::jsonOnOneLine()
{
    const Trace t = traceOf("s1:kernel:0:100:a");
    ReportOptions o;
    o.indent = -1;
    const std::string s = analysisToJson(t, o);
    QVERIFY(s.find('\n') == std::string::npos);
    QVERIFY(nlohmann::json::parse(s).contains("diagnostics"));
}

void TestAnalysis::formatDuration_data()
{
    QTest::addColumn<qint64>("ns");
    QTest::addColumn<QString>("text");
    QTest::newRow("ns") << qint64(850) << "850 ns"_q;
    QTest::newRow("us") << qint64(12500) << QString::fromUtf8("12.5 \u00B5s");
    QTest::newRow("ms") << qint64(3210000) << "3.210 ms"_q;
    QTest::newRow("s") << qint64(1234000000) << "1.234 s"_q;
}

void TestAnalysis::formatDuration()
{
    QFETCH(qint64, ns);
    QFETCH(QString, text);
    QCOMPARE(q(streamscope::formatDuration(ns)), text);
}

// ---- comparison ---------------------------------------------------------------------------------------------

void TestAnalysis::compare()
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

void TestAnalysis::compareUnmatchedStreams()
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

QTEST_GUILESS_MAIN(TestAnalysis)
