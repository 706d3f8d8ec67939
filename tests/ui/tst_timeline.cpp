// The timeline's layout and drawing: rows and lanes, the plottable's culling and merging, arrows per kind, the time
// axis and its durations.
#include "tst_timeline.h"

#include <random>

void TestTimeline::layoutRows()
{
    auto t = makeTrace({streamTrack("s10", 0), streamTrack("s2", 0), hostTrack("main"),
                        streamTrack("legacy", 0, StreamKind::LegacyDefault), streamTrack("x", 1),
                        streamTrack("ptds", 0, StreamKind::PerThreadDefault), hostTrack("worker")},
                       {{0, SpanKind::Kernel, 0, 10}});
    DeviceInfo d0;
    d0.index = 0;
    d0.name = "NVIDIA H200";
    t->info.devices.push_back(d0);
    const TimelineLayout layout(*t);
    std::vector<std::string> labels;
    std::vector<TimelineRowKind> kinds;
    for (const TimelineRow& r : layout.rows()) {
        labels.push_back(r.label);
        kinds.push_back(r.kind);
    }
    const std::vector<std::string> expected{
        "Host threads", "main", "worker", "GPU 0 \xC2\xB7 NVIDIA H200", "legacy", "ptds", "s2", "s10", "GPU 1", "x"};
    QCOMPARE(labels, expected);
    QCOMPARE(kinds.front(), TimelineRowKind::HostHeader);
    QCOMPARE(kinds[3], TimelineRowKind::DeviceHeader);
    QCOMPARE(kinds[4], TimelineRowKind::Stream);
    QCOMPARE(layout.totalLanes(), 10);
    QCOMPARE(layout.rowOfTrack(0), 7); // s10
    QCOMPARE(layout.rowAtLane(7.5), 7);
    QCOMPARE(layout.rowAtLane(-0.1), -1);
    QCOMPARE(layout.rowAtLane(10), -1);
}

void TestTimeline::assignLanes_data()
{
    QTest::addColumn<QList<qint64>>("intervals"); // start, end pairs sorted by start
    QTest::addColumn<QList<int>>("lanes");
    QTest::addColumn<int>("laneCount");
    QTest::newRow("empty") << QList<qint64>{} << QList<int>{} << 0;
    QTest::newRow("disjoint") << QList<qint64>{0, 10, 10, 20, 25, 30} << QList<int>{0, 0, 0} << 1;
    QTest::newRow("nested") << QList<qint64>{0, 100, 10, 20, 30, 40} << QList<int>{0, 1, 1} << 2;
    QTest::newRow("three at once") << QList<qint64>{0, 10, 1, 11, 2, 12} << QList<int>{0, 1, 2} << 3;
    QTest::newRow("lowest free lane") << QList<qint64>{0, 10, 1, 5, 2, 20, 6, 8, 12, 30} << QList<int>{0, 1, 2, 1, 0}
                                      << 3;
    QTest::newRow("zero length") << QList<qint64>{5, 5, 5, 5, 5, 7} << QList<int>{0, 0, 0} << 1;
}

void TestTimeline::assignLanes()
{
    QFETCH(QList<qint64>, intervals);
    QFETCH(QList<int>, lanes);
    QFETCH(int, laneCount);
    std::vector<int64_t> start, end;
    for (qsizetype i = 0; i + 1 < intervals.size(); i += 2) {
        start.push_back(intervals[i]);
        end.push_back(intervals[i + 1]);
    }
    int count = -1;
    const streamscope::TimeColumn startColumn(start), endColumn(end);
    const auto got = streamscope::assignLanes(startColumn.begin(), endColumn.begin(), start.size(), count);
    QList<int> gotList(got.begin(), got.end());
    QCOMPARE(gotList, lanes);
    QCOMPARE(count, laneCount);
}

void TestTimeline::stackedSpansAreAllDrawn()
{
    // Overlapping spans in one track (possible in imported traces): none may hide another.
    auto t = makeTrace({streamTrack("s0")},
                       {{0, SpanKind::Kernel, 0, 1000, "a"},
                        {0, SpanKind::MemcpyH2D, 100, 600, "b"},
                        {0, SpanKind::Kernel, 200, 300, "c"},
                        {0, SpanKind::Kernel, 700, 900, "d"}});
    auto v = makeView(t);
    const TimelineLayout& L = v->timelineLayout();
    const int row = L.rowOfTrack(0);
    QCOMPARE(L.rows()[size_t(row)].laneCount, 3);
    const int a = findSpan(*t, "a"), b = findSpan(*t, "b"), c = findSpan(*t, "c"), d = findSpan(*t, "d");
    QCOMPARE(L.laneOfSpan(uint32_t(a)), 0);
    QCOMPARE(L.laneOfSpan(uint32_t(b)), 1);
    QCOMPARE(L.laneOfSpan(uint32_t(c)), 2);
    QCOMPARE(L.laneOfSpan(uint32_t(d)), 1);
    TimelineDrawList list;
    v->spansPlottable()->computeDrawList(list);
    for (int s : {a, b, c, d})
        QVERIFY2(list.drawsSpan(uint32_t(s)), qPrintable(QString::number(s)));
    // Different lanes are drawn at different heights.
    QVERIFY(v->spansPlottable()->spanRect(uint32_t(a)).top() < v->spansPlottable()->spanRect(uint32_t(b)).top());
    QVERIFY(v->spansPlottable()->spanRect(uint32_t(b)).top() < v->spansPlottable()->spanRect(uint32_t(c)).top());
    // And each can be hit.
    QCOMPARE(v->spanAt(v->spansPlottable()->spanRect(uint32_t(c)).center().toPoint()), c);
    QCOMPARE(v->spanAt(v->spansPlottable()->spanRect(uint32_t(b)).center().toPoint()), b);
}

void TestTimeline::layoutCostsNothingPerSpanWithoutOverlaps()
{
    std::vector<SpanSpec> spans;
    for (int i = 0; i < 20000; ++i)
        spans.push_back({uint32_t(i % 4), SpanKind::Kernel, i * 100, i * 100 + 50});
    auto t = makeTrace({streamTrack("a"), streamTrack("b"), streamTrack("c"), streamTrack("d")}, spans);
    const TimelineLayout plain(*t);
    // Nothing per span but the lanes' summaries by zoom level, a few bytes a span (lane_summary.h).
    QVERIFY2(plain.memoryBytes() < 4096 + 4 * 20000, qPrintable(QString::number(plain.memoryBytes())));
    QCOMPARE(plain.globalLaneCount(), size_t(4));
    QVERIFY(plain.lane(0).list == nullptr);
    QCOMPARE(plain.lane(0).count, 5000u);
    // One overlap: that track (only) gets a lane per span and lists per lane.
    spans.push_back({1, SpanKind::MemcpyH2D, 0, 1000000});
    auto t2 = makeTrace({streamTrack("a"), streamTrack("b"), streamTrack("c"), streamTrack("d")}, spans);
    const TimelineLayout stacked(*t2);
    QCOMPARE(stacked.globalLaneCount(), size_t(5));
    const TimelineRow& b = stacked.rows()[size_t(stacked.rowOfTrack(1))];
    QCOMPARE(b.laneCount, 2);
    QCOMPARE(stacked.lane(size_t(b.firstGlobalLane)).count + stacked.lane(size_t(b.firstGlobalLane + 1)).count, 5001u);
    QVERIFY(stacked.memoryBytes() < 4096 + 5001 * 6 + 4 * 20001);
}

void TestTimeline::naturalOrder_data()
{
    QTest::addColumn<QString>("a");
    QTest::addColumn<QString>("b");
    QTest::addColumn<bool>("less");
    QTest::newRow("s2 < s10") << u"s2"_qs << u"s10"_qs << true;
    QTest::newRow("s10 > s2") << u"s10"_qs << u"s2"_qs << false;
    QTest::newRow("prefix") << u"s"_qs << u"s1"_qs << true;
    QTest::newRow("letters") << u"a"_qs << u"b"_qs << true;
    QTest::newRow("equal") << u"s1"_qs << u"s1"_qs << false;
    QTest::newRow("leading zeros") << u"s002"_qs << u"s10"_qs << true;
}

void TestTimeline::naturalOrder()
{
    QFETCH(QString, a);
    QFETCH(QString, b);
    QFETCH(bool, less);
    QCOMPARE(naturalLess(a.toStdString(), b.toStdString()), less);
}

void TestTimeline::culling_data()
{
    QTest::addColumn<double>("from"); // visible range, ns
    QTest::addColumn<double>("to");
    QTest::addColumn<QString>("span");
    QTest::addColumn<bool>("drawn");
    // Track s0: "k<i>" = [i*1000, i*1000+100) for i in 0..99. Track s1: "long" = [0, 100000) and "late" at 99000.
    QTest::newRow("inside") << 50000.0 << 51000.0 << u"k50"_qs << true;
    QTest::newRow("ended before") << 50000.0 << 51000.0 << u"k45"_qs << false;
    QTest::newRow("just before") << 50000.0 << 51000.0 << u"k49"_qs << false;
    QTest::newRow("starts after") << 50000.0 << 51000.0 << u"k55"_qs << false;
    QTest::newRow("long span started before") << 50000.0 << 51000.0 << u"long"_qs << true;
    QTest::newRow("after the long span") << 50000.0 << 51000.0 << u"late"_qs << false;
    QTest::newRow("crosses the left edge") << 30050.0 << 31000.0 << u"k30"_qs << true;
    QTest::newRow("full view: first") << -1000.0 << 101000.0 << u"k0"_qs << true;
    QTest::newRow("full view: last") << -1000.0 << 101000.0 << u"k99"_qs << true;
}

void TestTimeline::culling()
{
    QFETCH(double, from);
    QFETCH(double, to);
    QFETCH(QString, span);
    QFETCH(bool, drawn);
    std::vector<SpanSpec> spans;
    for (int i = 0; i < 100; ++i)
        spans.push_back({0, SpanKind::Kernel, i * 1000, i * 1000 + 100, "k" + std::to_string(i)});
    spans.push_back({1, SpanKind::MemcpyH2D, 0, 99000, "long"});
    spans.push_back({1, SpanKind::MemcpyH2D, 99000, 100000, "late"});
    auto t = makeTrace({streamTrack("s0"), streamTrack("s1")}, spans);
    auto v = makeView(t);
    v->setVisibleTimeRange(from, to);
    v->replot();
    TimelineDrawList list;
    v->spansPlottable()->computeDrawList(list);
    const int s = findSpan(*t, span.toStdString());
    QVERIFY(s >= 0);
    QCOMPARE(list.drawsSpan(uint32_t(s)), drawn);
    // Culling by binary search: a narrow window looks at a handful of spans, not all of them.
    if (to - from < 2000)
        QVERIFY2(list.stats.spansVisited <= 6, qPrintable(QString::number(list.stats.spansVisited)));
}

void TestTimeline::merging_data()
{
    QTest::addColumn<bool>("alternateKinds");
    QTest::addColumn<double>("zoom"); // fraction of the trace visible
    QTest::newRow("one kind, full view") << false << 1.0;
    QTest::newRow("two kinds, full view") << true << 1.0;
    QTest::newRow("one kind, 1 %") << false << 0.01;
    QTest::newRow("two kinds, 0.1 %") << true << 0.001;
    QTest::newRow("one kind, 0.01 %") << false << 0.0001;
}

void TestTimeline::merging()
{
    QFETCH(bool, alternateKinds);
    QFETCH(double, zoom);
    // 100k spans of 5 ns every 10 ns: at full view a thousand of them share each pixel.
    constexpr int n = 100000;
    std::vector<SpanSpec> spans;
    spans.reserve(n);
    for (int i = 0; i < n; ++i)
        spans.push_back({0, alternateKinds && (i % 2) ? SpanKind::MemcpyH2D : SpanKind::Kernel, int64_t(i) * 10,
                         int64_t(i) * 10 + 5});
    auto t = makeTrace({streamTrack("s0")}, spans);
    auto v = makeView(t);
    const double len = double(n) * 10;
    v->setVisibleTimeRange(len * 0.5 - len * zoom / 2, len * 0.5 + len * zoom / 2);
    v->replot();
    TimelineDrawList list;
    v->spansPlottable()->computeDrawList(list);
    const int width = v->axisRect()->width();
    const double visibleSpans = n * zoom;
    const double spansPerPixel = visibleSpans / width;
    const bool subPixel = 5 * width / (len * zoom) < 1;
    QVERIFY(list.stats.rects() > 0);
    if (subPixel) {
        // At most one block per pixel column (per kind present in it); one kind joins into a single block.
        QVERIFY2(list.stats.rects() <= size_t(alternateKinds ? 2 * (width + 4) : 1),
                 qPrintable(QString::number(list.stats.rects())));
        QCOMPARE(list.stats.spanRects, size_t(0));
        // Galloping past each pixel column: far fewer spans looked at than lie in view.
        if (spansPerPixel > 8)
            QVERIFY2(double(list.stats.spansVisited) < visibleSpans / 4,
                     qPrintable(QString::number(list.stats.spansVisited)));
        // Every visible span is accounted for by some block.
        size_t covered = 0;
        for (const auto& run : list.runs)
            covered += run.spanCount;
        QVERIFY(double(covered) >= visibleSpans * 0.98);
    } else {
        // Wide enough to see: one rectangle each.
        QVERIFY2(double(list.stats.spanRects) >= visibleSpans * 0.98,
                 qPrintable(QString::number(list.stats.spanRects)));
        QCOMPARE(list.stats.mergedRects, size_t(0));
    }
}

void TestTimeline::summariesDrawWhatTheSpansDraw_data()
{
    QTest::addColumn<double>("zoom"); // fraction of the trace visible
    QTest::newRow("full view") << 1.0;
    QTest::newRow("10 %") << 0.1;
    QTest::newRow("1 %") << 0.01;
    QTest::newRow("0.1 %") << 0.001;
}

// A wide view drawn from the lanes' summaries (lane_summary.h) shows what the walk over the spans shows: every
// pixel column a span starts in is drawn, and nothing more than a pixel away from the spans; every span is in a
// block; fewer items looked at than spans in view.
void TestTimeline::summariesDrawWhatTheSpansDraw()
{
    QFETCH(double, zoom);
    std::mt19937_64 rng(5);
    std::vector<SpanSpec> spans;
    for (uint32_t track = 0; track < 3; ++track) {
        int64_t t = 0;
        for (int i = 0; i < 40000; ++i) {
            const int64_t scale = int64_t(1) << (rng() % 12); // 1 ns to 4 us, bursts and gaps
            const int64_t d = int64_t(rng() % uint64_t(scale)) + 1;
            const auto kind = rng() % 5 == 0 ? SpanKind::MemcpyH2D : SpanKind::Kernel;
            spans.push_back({track, kind, t, t + d});
            t += d + int64_t(rng() % uint64_t(scale));
        }
    }
    auto t = makeTrace({streamTrack("a"), streamTrack("b"), streamTrack("c")}, spans);
    auto v = makeView(t);
    QVERIFY(!v->timelineLayout().summary(0).levels().empty());
    const auto [first, last] = t->timeRange();
    const double len = double(last - first);
    v->setVisibleTimeRange(len * 0.37 - len * zoom / 2, len * 0.37 + len * zoom / 2);
    v->replot();
    TimelinePlottable* plottable = v->spansPlottable();
    TimelineDrawList withSummaries, withSpans;
    plottable->computeDrawList(withSummaries);
    plottable->setSummariesUsed(false);
    plottable->computeDrawList(withSpans);
    plottable->setSummariesUsed(true);
    QCOMPARE(withSummaries.laneTop, withSpans.laneTop);
    // Pixel columns covered per lane.
    const int width = withSpans.canvasRight - withSpans.canvasLeft + 2;
    auto covered = [&](const TimelineDrawList& list) {
        std::vector<std::vector<bool>> columns(list.laneTop.size(), std::vector<bool>(size_t(width), false));
        for (const auto& r : list.runs)
            for (int x = std::max(r.x0, list.canvasLeft - 1); x < std::min(r.x1, list.canvasRight + 1); ++x)
                columns[r.lane][size_t(x - list.canvasLeft + 1)] = true;
        return columns;
    };
    const auto a = covered(withSummaries), b = covered(withSpans);
    for (size_t lane = 0; lane < a.size(); ++lane) {
        for (int x = 0; x < width; ++x) {
            const bool near = b[lane][size_t(x)] || (x > 0 && b[lane][size_t(x - 1)]);
            QVERIFY2(!b[lane][size_t(x)] || a[lane][size_t(x)],
                     qPrintable(QStringLiteral("lane %1 column %2 hidden").arg(lane).arg(x)));
            QVERIFY2(!a[lane][size_t(x)] || near,
                     qPrintable(QStringLiteral("lane %1 column %2 drawn from nothing").arg(lane).arg(x)));
        }
    }
    // Every span in view is in a run.
    size_t inView = 0, inRuns = 0;
    for (const SpanSpec& s : spans)
        inView += double(s.end - first) > v->visibleTimeRange().first
            && double(s.start - first) < v->visibleTimeRange().second;
    for (const auto& r : withSummaries.runs)
        inRuns += r.spanCount;
    QVERIFY2(double(inRuns) >= double(inView) * 0.99, qPrintable(QStringLiteral("%1 of %2").arg(inRuns).arg(inView)));
    // Finer views than the finest level walk the spans: never more looked at, and fewer at full view.
    QVERIFY2(zoom < 1.0 ? withSummaries.stats.spansVisited <= withSpans.stats.spansVisited
                        : withSummaries.stats.spansVisited < withSpans.stats.spansVisited,
             qPrintable(QStringLiteral("%1 items, %2 spans")
                            .arg(withSummaries.stats.spansVisited)
                            .arg(withSpans.stats.spansVisited)));
}

void TestTimeline::flowKinds()
{
    auto t = makeTrace(
        {hostTrack("main"), streamTrack("s0"), streamTrack("s1")},
        {{0, SpanKind::ApiCall, 0, 5000, "launch a"},
         {0, SpanKind::ApiCall, 5000, 10000, "launch b"},
         {1, SpanKind::Kernel, 10000, 50000, "a"},
         {2, SpanKind::Kernel, 50000, 90000, "b"},
         {0, SpanKind::Sync, 10000, 90000, "sync"}},
        {{0, 2, FlowKind::Launch}, {1, 3, FlowKind::Launch}, {2, 3, FlowKind::Event}, {3, 4, FlowKind::Sync}});
    auto v = makeView(t);
    auto count = [&](FlowKind k) {
        v->replot();
        TimelineDrawList list;
        v->spansPlottable()->computeDrawList(list);
        return list.stats.flowsByKind[size_t(k)];
    };
    QCOMPARE(count(FlowKind::Launch), size_t(2));
    QCOMPARE(count(FlowKind::Event), size_t(1));
    QCOMPARE(count(FlowKind::Sync), size_t(1));
    v->setFlowKindVisible(FlowKind::Event, false);
    QVERIFY(!v->isFlowKindVisible(FlowKind::Event));
    QCOMPARE(count(FlowKind::Event), size_t(0));
    QCOMPARE(count(FlowKind::Launch), size_t(2));
    v->setFlowKindVisible(FlowKind::Event, true);
    QCOMPARE(count(FlowKind::Event), size_t(1));
    // The event arrow goes from the end of "a" to the start of "b", downwards.
    const Flow ev{uint32_t(findSpan(*t, "a")), uint32_t(findSpan(*t, "b")), FlowKind::Event};
    const QPointF from = v->spansPlottable()->flowFrom(ev), to = v->spansPlottable()->flowTo(ev);
    QVERIFY(std::abs(from.x() - v->xAxis->coordToPixel(50000)) < 1.5);
    QVERIFY(to.x() - v->xAxis->coordToPixel(50000) > -0.5 && to.x() - v->xAxis->coordToPixel(50000) < 4);
    QVERIFY(to.y() > from.y());
    QCOMPARE(to.y(), v->spansPlottable()->spanRect(ev.to).top()); // into the top edge of "b", which is below
    // Too many arrows to read are not drawn, and the count says so.
    v->spansPlottable()->setMaxFlowsDrawn(2);
    v->replot();
    TimelineDrawList list;
    v->spansPlottable()->computeDrawList(list);
    QCOMPARE(list.stats.flows, size_t(0));
    QCOMPARE(list.stats.flowsSkipped, size_t(4));
}

void TestTimeline::timeAxisUnits_data()
{
    QTest::addColumn<double>("width");
    QTest::addColumn<QString>("label");
    QTest::newRow("ns") << 500.0 << u"Time (ns)"_qs;
    QTest::newRow("us") << 500e3 << u"Time (\u00B5s)"_qs;
    QTest::newRow("ms") << 500e6 << u"Time (ms)"_qs;
    QTest::newRow("s") << 50e9 << u"Time (s)"_qs;
}

void TestTimeline::timeAxisUnits()
{
    QFETCH(double, width);
    QFETCH(QString, label);
    auto t = makeTrace({streamTrack("s0")}, {{0, SpanKind::Kernel, 0, 100000000000}});
    auto v = makeView(t);
    v->setVisibleTimeRange(0, width);
    QCOMPARE(v->xAxis->label(), label);
    // Tick labels differ from each other (enough decimals for the step).
    v->replot();
    const QVector<QString> labels = v->xAxis->tickVectorLabels();
    QVERIFY(labels.size() >= 3);
    for (qsizetype i = 1; i < labels.size(); ++i)
        QVERIFY2(labels[i] != labels[i - 1], qPrintable(labels[i]));
}

void TestTimeline::formatDuration_data()
{
    QTest::addColumn<double>("ns");
    QTest::addColumn<QString>("text");
    QTest::newRow("ns") << 850.0 << u"850 ns"_qs;
    QTest::newRow("us") << 12345.0 << u"12.3 \u00B5s"_qs;
    QTest::newRow("ms") << 4560000.0 << u"4.56 ms"_qs;
    QTest::newRow("s") << 123e9 << u"123 s"_qs;
}

void TestTimeline::formatDuration()
{
    QFETCH(double, ns);
    QFETCH(QString, text);
    QCOMPARE(TimelineView::formatDuration(ns), text);
}

QTEST_MAIN(TestTimeline)
