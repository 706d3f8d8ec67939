// The what-if sweeps (core/whatif/whatif.h): streams, chunks and kernel size over a range of values, the dependencies
// they keep, bad values, and the names of the knobs.
#include "tst_analysis.h"

// ---- sweeps -------------------------------------------------------------------------------------------------

void TestAnalysis::sweepStreams_data()
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

void TestAnalysis::sweepStreams()
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

void TestAnalysis::sweepKeepsDependencies()
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

void TestAnalysis::sweepChunksAndSize()
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

void TestAnalysis::sweepErrors_data()
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

void TestAnalysis::sweepErrors()
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

void TestAnalysis::runSweep()
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

void TestAnalysis::knobNames()
{
    for (SweepKnob k : {SweepKnob::Streams, SweepKnob::Chunks, SweepKnob::KernelSize})
        QVERIFY(sweepKnobFromString(toString(k)) == std::optional<SweepKnob>(k));
    QVERIFY(!sweepKnobFromString("threads").has_value());
    QCOMPARE(defaultSweepValues(SweepKnob::Streams).size(), size_t(16));
}
