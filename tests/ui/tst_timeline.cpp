// The timeline: row layout and lane stacking, the plottable's culling and merging (through its draw list), hit
// tests, mouse and keyboard interaction with real events, arrows per kind, and image export (PNG pixels, SVG that
// parses, PDF that is a PDF).
#include "image_export.h"
#include "resources.h"
#include "runner.h"
#include "scenario_json.h"
#include "simulator.h"
#include "timeline_layout.h"
#include "timeline_plottable.h"
#include "timeline_view.h"

#include <QFile>
#include <QImage>
#include <QSignalSpy>
#include <QSvgRenderer>
#include <QTemporaryDir>
#include <QTest>
#include <QXmlStreamReader>

#include <memory>
#include <vector>

using namespace streamscope;

namespace {

struct SpanSpec {
    uint32_t track;
    SpanKind kind;
    int64_t start, end;
    std::string name = "op";
};

Track streamTrack(std::string name, int device = 0, StreamKind kind = StreamKind::Blocking)
{
    Track t;
    t.kind = TrackKind::Stream;
    t.name = std::move(name);
    t.device = device;
    t.streamKind = kind;
    return t;
}

Track hostTrack(std::string name)
{
    Track t;
    t.kind = TrackKind::HostThread;
    t.name = std::move(name);
    return t;
}

std::shared_ptr<Trace> makeTrace(const std::vector<Track>& tracks, const std::vector<SpanSpec>& spans,
                                 const std::vector<Flow>& flows = {})
{
    auto t = std::make_shared<Trace>();
    for (const Track& tr : tracks)
        t->addTrack(tr);
    for (const SpanSpec& s : spans) {
        SpanInit init;
        init.track = s.track;
        init.kind = s.kind;
        init.name = s.name;
        init.start = s.start;
        init.end = s.end;
        t->addSpan(init);
    }
    for (const Flow& f : flows)
        t->addFlow(f.from, f.to, f.kind);
    t->finalize();
    return t;
}

// A view shown (offscreen) and laid out at `size`.
std::unique_ptr<TimelineView> makeView(std::shared_ptr<const Trace> trace, QSize size = {1000, 500})
{
    auto v = std::make_unique<TimelineView>();
    v->resize(size);
    v->setTrace(std::move(trace));
    v->show();
    if (!QTest::qWaitForWindowExposed(v.get()))
        qWarning("timeline view not exposed");
    v->replot();
    return v;
}

int findSpan(const Trace& t, std::string_view name)
{
    for (uint32_t i = 0; i < t.spanCount(); ++i)
        if (t.spanName(i) == name)
            return int(i);
    return -1;
}

// Centre of a lane at time `ns` (relative to the trace start), in widget pixels, from the axes alone.
QPoint pixelOf(const TimelineView& v, double ns, int row, int lane = 0)
{
    const TimelineRow& r = v.timelineLayout().rows()[size_t(row)];
    const double x = v.xAxis->coordToPixel(ns);
    const double y = v.yAxis->coordToPixel(r.firstLane + lane + 0.5);
    return QPoint(int(std::lround(x)), int(std::lround(y)));
}

void sendMouse(QWidget* w, QEvent::Type type, QPoint pos, Qt::MouseButton button, Qt::MouseButtons buttons,
               Qt::KeyboardModifiers mods = Qt::NoModifier)
{
    QMouseEvent e(type, QPointF(pos), QPointF(w->mapToGlobal(pos)), button, buttons, mods);
    QCoreApplication::sendEvent(w, &e);
}

} // namespace

class TestTimeline : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void layoutRows();
    void assignLanes_data();
    void assignLanes();
    void stackedSpansAreAllDrawn();
    void layoutCostsNothingPerSpanWithoutOverlaps();
    void naturalOrder_data();
    void naturalOrder();
    void culling_data();
    void culling();
    void merging_data();
    void merging();
    void hitTest();
    void hitTestTinySpan();
    void clickSelects();
    void hoverAndTooltip();
    void shortNamesInBarsAndTooltip();
    void selectSpanScrollsIntoView();
    void wheelZoomsAroundCursor();
    void setTraceKeepsView();
    void verticalScrolling();
    void keysZoomAndPan_data();
    void keysZoomAndPan();
    void measureWithShiftDrag();
    void flowKinds();
    void timeAxisUnits_data();
    void timeAxisUnits();
    void formatDuration_data();
    void formatDuration();
    void exportFormats_data();
    void exportFormats();
    void exportPngPixels();
    void exportErrors();
    void exportView();
    void exportLesson();
};

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
    const auto got = streamscope::assignLanes(start.data(), end.data(), start.size(), count);
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
    QVERIFY2(plain.memoryBytes() < 4096, qPrintable(QString::number(plain.memoryBytes())));
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
    QVERIFY(stacked.memoryBytes() < 4096 + 5001 * 6);
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

void TestTimeline::hitTest()
{
    auto t = makeTrace({hostTrack("main"), streamTrack("s0"), streamTrack("s1")},
                       {{0, SpanKind::ApiCall, 0, 10000, "launch"},
                        {1, SpanKind::Kernel, 20000, 60000, "k1"},
                        {1, SpanKind::Kernel, 70000, 90000, "k2"},
                        {2, SpanKind::MemcpyH2D, 10000, 100000, "copy"}});
    auto v = makeView(t);
    v->setVisibleTimeRange(0, 100000);
    v->replot();
    const TimelineLayout& L = v->timelineLayout();
    const int rowMain = L.rowOfTrack(0), rowS0 = L.rowOfTrack(1), rowS1 = L.rowOfTrack(2);
    QCOMPARE(v->spanAt(pixelOf(*v, 5000, rowMain)), findSpan(*t, "launch"));
    QCOMPARE(v->spanAt(pixelOf(*v, 40000, rowS0)), findSpan(*t, "k1"));
    QCOMPARE(v->spanAt(pixelOf(*v, 80000, rowS0)), findSpan(*t, "k2"));
    QCOMPARE(v->spanAt(pixelOf(*v, 65000, rowS0)), -1); // the gap between k1 and k2
    QCOMPARE(v->spanAt(pixelOf(*v, 15000, rowS0)), -1);
    QCOMPARE(v->spanAt(pixelOf(*v, 65000, rowS1)), findSpan(*t, "copy"));
    QCOMPARE(v->spanAt(pixelOf(*v, 40000, 0)), -1);                    // a header row
    QCOMPARE(v->spanAt(QPoint(5, pixelOf(*v, 40000, rowS0).y())), -1); // the row labels
    // spanAt agrees with the drawn geometry.
    for (uint32_t s = 0; s < t->spanCount(); ++s)
        QCOMPARE(v->spanAt(v->spansPlottable()->spanRect(s).center().toPoint()), int(s));
}

void TestTimeline::hitTestTinySpan()
{
    // A 1 ns kernel at a 1 ms view is far below a pixel: hovering within a few pixels still finds it.
    auto t = makeTrace({streamTrack("s0")},
                       {{0, SpanKind::Kernel, 500000, 500001, "tiny"},
                        {0, SpanKind::Kernel, 0, 1, "first"},
                        {0, SpanKind::Kernel, 1000000, 1000001, "last"}});
    auto v = makeView(t);
    const int row = v->timelineLayout().rowOfTrack(0);
    const QPoint p = pixelOf(*v, 500000, row);
    QCOMPARE(v->spanAt(p), findSpan(*t, "tiny"));
    QCOMPARE(v->spanAt(p + QPoint(2, 0)), findSpan(*t, "tiny"));
    QCOMPARE(v->spanAt(p + QPoint(20, 0)), -1);
}

void TestTimeline::clickSelects()
{
    auto t = makeTrace({streamTrack("s0")},
                       {{0, SpanKind::Kernel, 0, 40000, "a"}, {0, SpanKind::Kernel, 60000, 100000, "b"}});
    TimelineView v;
    v.resize(900, 400);
    v.setTrace(t);
    v.show();
    QVERIFY(QTest::qWaitForWindowExposed(&v));
    v.replot();
    QSignalSpy spy(&v, &TimelineView::spanSelected);
    const int row = v.timelineLayout().rowOfTrack(0);
    QTest::mouseClick(&v, Qt::LeftButton, Qt::NoModifier, pixelOf(v, 80000, row));
    QCOMPARE(spy.count(), 1);
    QCOMPARE(spy.takeFirst().at(0).toInt(), findSpan(*t, "b"));
    QCOMPARE(v.selectedSpan(), findSpan(*t, "b"));
    // The same span again: no new signal.
    QTest::mouseClick(&v, Qt::LeftButton, Qt::NoModifier, pixelOf(v, 90000, row));
    QCOMPARE(spy.count(), 0);
    QTest::mouseClick(&v, Qt::LeftButton, Qt::NoModifier, pixelOf(v, 10000, row));
    QCOMPARE(spy.count(), 1);
    QCOMPARE(spy.takeFirst().at(0).toInt(), findSpan(*t, "a"));
    // Empty space clears the selection.
    QTest::mouseClick(&v, Qt::LeftButton, Qt::NoModifier, pixelOf(v, 50000, row));
    QCOMPARE(spy.count(), 1);
    QCOMPARE(spy.takeFirst().at(0).toInt(), -1);
    QCOMPARE(v.selectedSpan(), -1);
    // A drag pans instead of selecting.
    const auto before = v.visibleTimeRange();
    const QPoint p = pixelOf(v, 20000, row);
    sendMouse(&v, QEvent::MouseButtonPress, p, Qt::LeftButton, Qt::LeftButton);
    sendMouse(&v, QEvent::MouseMove, p + QPoint(100, 0), Qt::NoButton, Qt::LeftButton);
    sendMouse(&v, QEvent::MouseButtonRelease, p + QPoint(100, 0), Qt::LeftButton, Qt::NoButton);
    QCOMPARE(spy.count(), 0);
    QVERIFY(v.visibleTimeRange().first < before.first);
}

void TestTimeline::hoverAndTooltip()
{
    auto t = makeTrace({streamTrack("s0", 0)}, {{0, SpanKind::MemcpyH2D, 0, 1000000, "upload"}});
    t->spans.bytes[0] = int64_t(64) << 20;
    auto v = makeView(t);
    QSignalSpy spy(v.get(), &TimelineView::spanHovered);
    const QPoint p = pixelOf(*v, 500000, v->timelineLayout().rowOfTrack(0));
    sendMouse(v.get(), QEvent::MouseMove, p, Qt::NoButton, Qt::NoButton);
    QCOMPARE(v->hoveredSpan(), 0);
    QCOMPARE(spy.count(), 1);
    const QString tip = v->spanToolTip(0);
    QVERIFY(tip.contains(u"upload"_qs));
    QVERIFY(tip.contains(u"memcpy HtoD"_qs));
    QVERIFY(tip.contains(u"stream s0"_qs));
    QVERIFY(tip.contains(u"1.00 ms"_qs));
    QVERIFY(tip.contains(u"64.00 MiB"_qs));
    sendMouse(v.get(), QEvent::MouseMove, QPoint(2, 2), Qt::NoButton, Qt::NoButton);
    QCOMPARE(v->hoveredSpan(), -1);
}

void TestTimeline::shortNamesInBarsAndTooltip()
{
    // A kernel named as the PyTorch profiler records it, and one whose name is short already.
    const std::string pytorch =
        "void at::native::vectorized_elementwise_kernel<4, at::native::AUnaryFunctor<float, float, float, "
        "at::native::binary_internal::MulFunctor<float> >, std::array<char*, 2ul> >(int, at::native::AUnaryFunctor<"
        "float, float, float, at::native::binary_internal::MulFunctor<float> >, std::array<char*, 2ul>)";
    auto t = makeTrace({streamTrack("s0", 0)},
                       {{0, SpanKind::Kernel, 0, 600000, pytorch}, {0, SpanKind::Kernel, 600000, 1000000, "matmul"}});
    auto v = makeView(t);
    const int kernel = findSpan(*t, pytorch);
    const int matmul = findSpan(*t, "matmul");
    // The bars' labels: the short name, once per distinct name of the trace.
    const SpanDisplayNames& names = v->spansPlottable()->spanNames();
    QCOMPARE(names.trace(), t.get());
    QCOMPARE(names.shortName(uint32_t(kernel)), u"vectorized_elementwise_kernel<…>"_qs);
    QCOMPARE(&names.shortName(uint32_t(kernel)), &names.shortNameOfString(t->spans.name[size_t(kernel)]));
    QCOMPARE(names.shortName(uint32_t(matmul)), u"matmul"_qs);
    TimelineDrawList list;
    v->spansPlottable()->computeDrawList(list);
    QVERIFY(std::any_of(list.labels.begin(), list.labels.end(),
                        [&](const TimelineDrawList::Label& l) { return int(l.span) == kernel; }));
    // The tooltip's title is the short name; the full signature follows on its own line.
    const QString tip = v->spanToolTip(kernel);
    QVERIFY2(tip.startsWith(u"<b>vectorized_elementwise_kernel&lt;…&gt;</b><br>"_qs), qPrintable(tip));
    QVERIFY(tip.contains(QString::fromStdString(pytorch).toHtmlEscaped() + u"</span><br>kernel on stream s0"_qs));
    // A name that is short already is not said twice.
    const QString plain = v->spanToolTip(matmul);
    QVERIFY2(plain.startsWith(u"<b>matmul</b><br>kernel on stream s0"_qs), qPrintable(plain));
}

void TestTimeline::selectSpanScrollsIntoView()
{
    std::vector<SpanSpec> spans;
    std::vector<Track> tracks;
    for (int s = 0; s < 60; ++s) // more rows than fit
        tracks.push_back(streamTrack("s" + std::to_string(s)));
    for (int s = 0; s < 60; ++s)
        for (int i = 0; i < 100; ++i)
            spans.push_back({uint32_t(s), SpanKind::Kernel, i * 10000, i * 10000 + 50, "k"});
    auto t = makeTrace(tracks, spans);
    auto v = makeView(t, {800, 300});
    v->setVisibleTimeRange(0, 20000);
    v->replot();
    QSignalSpy spy(v.get(), &TimelineView::spanSelected);
    const uint32_t target = t->trackBegin(55) + 90; // far right, far down, 50 ns long
    v->selectSpan(int(target));
    QCOMPARE(spy.count(), 1);
    v->replot();
    const auto [a, b] = v->visibleTimeRange();
    QVERIFY(a <= double(t->spans.start[target]) && double(t->spans.end[target]) <= b);
    const QRectF r = v->spansPlottable()->spanRect(target);
    QVERIFY2(v->axisRect()->rect().contains(r.center().toPoint()), "selected span not scrolled into view");
    QVERIFY(r.width() >= 3); // zoomed so that it can be seen
    QCOMPARE(v->spanAt(r.center().toPoint()), int(target));
    v->selectSpan(-1);
    QCOMPARE(spy.count(), 2);
    QCOMPARE(v->selectedSpan(), -1);
}

void TestTimeline::wheelZoomsAroundCursor()
{
    auto t = makeTrace({streamTrack("s0")}, {{0, SpanKind::Kernel, 0, 1000000}});
    auto v = makeView(t);
    const QRect area = v->axisRect()->rect();
    const QPoint p(area.left() + area.width() / 4, area.center().y());
    const double keyBefore = v->xAxis->pixelToCoord(p.x());
    const double widthBefore = v->xAxis->range().size();
    QWheelEvent in(QPointF(p), QPointF(v->mapToGlobal(p)), QPoint(), QPoint(0, 120), Qt::NoButton, Qt::NoModifier,
                   Qt::NoScrollPhase, false);
    QCoreApplication::sendEvent(v.get(), &in);
    QVERIFY(v->xAxis->range().size() < widthBefore * 0.9);
    QVERIFY(std::abs(v->xAxis->pixelToCoord(p.x()) - keyBefore) < widthBefore * 1e-6);
    QWheelEvent out(QPointF(p), QPointF(v->mapToGlobal(p)), QPoint(), QPoint(0, -240), Qt::NoButton, Qt::NoModifier,
                    Qt::NoScrollPhase, false);
    QCoreApplication::sendEvent(v.get(), &out);
    QVERIFY(v->xAxis->range().size() > widthBefore * 1.05);
    v->fitToView();
    QVERIFY(std::abs(v->xAxis->range().size() - widthBefore) < 1);
}

void TestTimeline::setTraceKeepsView()
{
    auto a = makeTrace({streamTrack("s0")}, {{0, SpanKind::Kernel, 0, 1000000, "a"}});
    auto b = makeTrace({streamTrack("s0")}, {{0, SpanKind::Kernel, 0, 2000000, "b"}});
    auto v = makeView(a);
    v->selectSpan(0);
    v->setVisibleTimeRange(100000, 200000);
    QSignalSpy spy(v.get(), &TimelineView::spanSelected);
    v->setTrace(b, true); // a live preview of an edited scenario: the user's zoom stays
    QCOMPARE(v->visibleTimeRange().first, 100000.0);
    QCOMPARE(v->visibleTimeRange().second, 200000.0);
    QCOMPARE(v->selectedSpan(), -1);
    QCOMPARE(spy.count(), 1);
    v->setTrace(a); // a new document: fit
    QVERIFY(v->visibleTimeRange().first < 0 && v->visibleTimeRange().second > 1000000);
}

void TestTimeline::verticalScrolling()
{
    std::vector<Track> tracks;
    std::vector<SpanSpec> spans;
    for (int s = 0; s < 60; ++s) {
        tracks.push_back(streamTrack("s" + std::to_string(s)));
        spans.push_back({uint32_t(s), SpanKind::Kernel, 0, 1000});
    }
    auto t = makeTrace(tracks, spans);
    auto v = makeView(t, {800, 300});
    QCOMPARE(v->verticalScroll(), 0.0);
    // Drag the scroll bar's thumb (right of the chart, at the top) down.
    const QRect area = v->axisRect()->rect();
    const QPoint thumb(area.right() + 8, area.top() + 4);
    sendMouse(v.get(), QEvent::MouseButtonPress, thumb, Qt::LeftButton, Qt::LeftButton);
    sendMouse(v.get(), QEvent::MouseMove, thumb + QPoint(0, 60), Qt::NoButton, Qt::LeftButton);
    sendMouse(v.get(), QEvent::MouseButtonRelease, thumb + QPoint(0, 60), Qt::LeftButton, Qt::NoButton);
    QVERIFY(v->verticalScroll() > 5);
    // Page Down / Up; the scroll stops at the last row.
    v->setVerticalScroll(0);
    QTest::keyClick(v.get(), Qt::Key_PageDown);
    QVERIFY(v->verticalScroll() > 3);
    for (int i = 0; i < 20; ++i)
        QTest::keyClick(v.get(), Qt::Key_PageDown);
    v->replot();
    const double visible = double(area.height()) / v->laneHeight();
    QVERIFY(std::abs(v->verticalScroll() - (v->timelineLayout().totalLanes() - visible)) < 0.01);
    // Alt+wheel scrolls rows.
    v->setVerticalScroll(0);
    QWheelEvent wheel(QPointF(area.center()), QPointF(v->mapToGlobal(area.center())), QPoint(), QPoint(0, -120),
                      Qt::NoButton, Qt::AltModifier, Qt::NoScrollPhase, false);
    QCoreApplication::sendEvent(v.get(), &wheel);
    QCOMPARE(v->verticalScroll(), 3.0);
}

void TestTimeline::keysZoomAndPan_data()
{
    QTest::addColumn<int>("key");
    QTest::addColumn<int>("widthChange"); // -1 narrower, 0 same, +1 wider
    QTest::addColumn<int>("centreChange");
    QTest::newRow("W zooms in") << int(Qt::Key_W) << -1 << 0;
    QTest::newRow("S zooms out") << int(Qt::Key_S) << 1 << 0;
    QTest::newRow("A pans left") << int(Qt::Key_A) << 0 << -1;
    QTest::newRow("D pans right") << int(Qt::Key_D) << 0 << 1;
}

void TestTimeline::keysZoomAndPan()
{
    QFETCH(int, key);
    QFETCH(int, widthChange);
    QFETCH(int, centreChange);
    auto t = makeTrace({streamTrack("s0")}, {{0, SpanKind::Kernel, 0, 1000000}});
    auto v = makeView(t);
    v->setVisibleTimeRange(400000, 600000);
    const QCPRange before = v->xAxis->range();
    QTest::keyClick(v.get(), Qt::Key(key));
    const QCPRange after = v->xAxis->range();
    auto sign = [](double d, double eps) { return d > eps ? 1 : (d < -eps ? -1 : 0); };
    QCOMPARE(sign(after.size() - before.size(), 1.0), widthChange);
    if (widthChange == 0)
        QCOMPARE(sign(after.center() - before.center(), 1.0), centreChange);
}

void TestTimeline::measureWithShiftDrag()
{
    auto t = makeTrace({streamTrack("s0")}, {{0, SpanKind::Kernel, 0, 1000000}});
    auto v = makeView(t);
    v->setVisibleTimeRange(0, 1000000);
    v->replot();
    QSignalSpy spy(v.get(), &TimelineView::measuredRangeChanged);
    QSignalSpy selected(v.get(), &TimelineView::spanSelected);
    const int row = v->timelineLayout().rowOfTrack(0);
    const QPoint a = pixelOf(*v, 200000, row), b = pixelOf(*v, 450000, row);
    sendMouse(v.get(), QEvent::MouseButtonPress, a, Qt::LeftButton, Qt::LeftButton, Qt::ShiftModifier);
    sendMouse(v.get(), QEvent::MouseMove, b, Qt::NoButton, Qt::LeftButton, Qt::ShiftModifier);
    sendMouse(v.get(), QEvent::MouseButtonRelease, b, Qt::LeftButton, Qt::NoButton, Qt::ShiftModifier);
    QCOMPARE(spy.count(), 1);
    const qint64 start = spy.at(0).at(0).toLongLong(), end = spy.at(0).at(1).toLongLong();
    const double nsPerPixel = 1000000.0 / v->axisRect()->width();
    QVERIFY2(std::abs(double(end - start) - 250000) <= 2 * nsPerPixel, qPrintable(QString::number(end - start)));
    QVERIFY(v->measuredRange().has_value());
    QCOMPARE(selected.count(), 0); // measuring does not select
    // Right-button drag measures too; Escape clears.
    sendMouse(v.get(), QEvent::MouseButtonPress, b, Qt::RightButton, Qt::RightButton);
    sendMouse(v.get(), QEvent::MouseMove, a, Qt::NoButton, Qt::RightButton);
    sendMouse(v.get(), QEvent::MouseButtonRelease, a, Qt::RightButton, Qt::NoButton);
    QCOMPARE(spy.count(), 2);
    QTest::keyClick(v.get(), Qt::Key_Escape);
    QVERIFY(!v->measuredRange().has_value());
    QCOMPARE(spy.last().at(0).toLongLong(), qint64(-1));
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

void TestTimeline::exportFormats_data()
{
    QTest::addColumn<QString>("file");
    QTest::newRow("png") << u"t.png"_qs;
    QTest::newRow("svg") << u"t.svg"_qs;
    QTest::newRow("pdf") << u"t.PDF"_qs;
}

void TestTimeline::exportFormats()
{
    QFETCH(QString, file);
    auto t = makeTrace({hostTrack("main"), streamTrack("s0"), streamTrack("s1")},
                       {{0, SpanKind::ApiCall, 0, 5000, "launch"},
                        {1, SpanKind::Kernel, 10000, 500000, "matmul"},
                        {2, SpanKind::MemcpyH2D, 200000, 900000, "upload"}},
                       {{0, 1, FlowKind::Launch}, {1, 2, FlowKind::Event}});
    QTemporaryDir dir;
    const QString path = dir.filePath(file);
    QString error;
    QVERIFY2(exportTimelineImage(*t, path, QSize(1280, 720), u"Two streams"_qs, &error), qPrintable(error));
    QFile f(path);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QByteArray data = f.readAll();
    switch (*imageFormatForPath(path)) {
    case ImageFormat::Png: {
        QImage img;
        QVERIFY(img.loadFromData(data, "PNG"));
        QCOMPARE(img.size(), QSize(1280, 720));
        break;
    }
    case ImageFormat::Svg: {
        QSvgRenderer renderer(data);
        QVERIFY(renderer.isValid());
        QXmlStreamReader xml(data);
        while (!xml.atEnd())
            xml.readNext();
        QVERIFY2(!xml.hasError(), qPrintable(xml.errorString()));
        QVERIFY(data.contains("Two streams"));
        QVERIFY(data.contains("matmul"));
        break;
    }
    case ImageFormat::Pdf:
        QVERIFY(data.startsWith("%PDF-"));
        QVERIFY(data.trimmed().endsWith("%%EOF"));
        QVERIFY2(data.size() > 4000, qPrintable(QString::number(data.size())));
        break;
    }
}

void TestTimeline::exportPngPixels()
{
    // A kernel in s0 over [0, 1 ms) and a copy in s1 over [0.5, 1 ms): their colours must show where they are.
    auto t = makeTrace({streamTrack("s0"), streamTrack("s1")},
                       {{0, SpanKind::Kernel, 0, 1000000, "k"}, {1, SpanKind::MemcpyH2D, 500000, 1000000, "c"}});
    QTemporaryDir dir;
    const QString path = dir.filePath(u"p.png"_qs);
    QString error;
    QVERIFY2(exportTimelineImage(*t, path, QSize(1200, 500), u"pixels"_qs, &error), qPrintable(error));
    QImage img(path);
    QCOMPARE(img.size(), QSize(1200, 500));
    img = img.convertToFormat(QImage::Format_RGB32);
    auto box = [&](QColor c) {
        QRect r;
        const QRgb want = c.rgb();
        int count = 0;
        // Skip the legend strip at the top: look below its swatches.
        for (int y = 90; y < img.height(); ++y) {
            const auto* line = reinterpret_cast<const QRgb*>(img.constScanLine(y));
            for (int x = 0; x < img.width(); ++x)
                if ((line[x] & 0xFFFFFF) == (want & 0xFFFFFF)) {
                    r = r.isNull() ? QRect(x, y, 1, 1) : r.united(QRect(x, y, 1, 1));
                    ++count;
                }
        }
        return std::make_pair(r, count);
    };
    const auto [kernel, kernelPixels] = box(spanKindColor(SpanKind::Kernel));
    const auto [copy, copyPixels] = box(spanKindColor(SpanKind::MemcpyH2D));
    QVERIFY2(kernelPixels > 5000, qPrintable(QString::number(kernelPixels)));
    QVERIFY2(copyPixels > 2500, qPrintable(QString::number(copyPixels)));
    // The copy is half as long as the kernel, ends where it ends, and lies in the row below.
    QVERIFY2(std::abs(copy.width() * 2 - kernel.width()) <= 6,
             qPrintable(QStringLiteral("%1 vs %2").arg(copy.width()).arg(kernel.width())));
    QVERIFY(std::abs(copy.right() - kernel.right()) <= 3);
    QVERIFY(copy.top() > kernel.bottom());
    QVERIFY(kernel.width() > 800); // fit to the width of the image
}

void TestTimeline::exportErrors()
{
    auto t = makeTrace({streamTrack("s0")}, {{0, SpanKind::Kernel, 0, 1000}});
    QTemporaryDir dir;
    QString error;
    QVERIFY(!exportTimelineImage(*t, dir.filePath(u"x.bmpx"_qs), QSize(800, 600), {}, &error));
    QVERIFY(error.contains(u"unknown image format"_qs));
    error.clear();
    QVERIFY(!exportTimelineImage(*t, dir.filePath(u"no/such/dir/x.png"_qs), QSize(800, 600), {}, &error));
    QVERIFY(!error.isEmpty());
    error.clear();
    QVERIFY(!exportTimelineImage(*t, dir.filePath(u"x.png"_qs), QSize(0, 600), {}, &error));
    QVERIFY(error.contains(u"size"_qs));
    QVERIFY(!QFile::exists(dir.filePath(u"x.png"_qs)));
    // An empty trace still makes an image.
    Trace empty;
    empty.finalize();
    QVERIFY2(exportTimelineImage(empty, dir.filePath(u"e.png"_qs), QSize(400, 300), u"empty"_qs, &error),
             qPrintable(error));
}

void TestTimeline::exportView()
{
    auto t = makeTrace({streamTrack("s0")},
                       {{0, SpanKind::Kernel, 0, 500000, "k"}, {0, SpanKind::Memset, 500000, 1000000, "m"}});
    auto v = makeView(t);
    v->setVisibleTimeRange(0, 400000); // only the kernel in view
    QTemporaryDir dir;
    const QString path = dir.filePath(u"v.png"_qs);
    QString error;
    QVERIFY2(exportTimelineImage(*v, path, QSize(800, 400), u"view"_qs, &error), qPrintable(error));
    QImage img = QImage(path).convertToFormat(QImage::Format_RGB32);
    QCOMPARE(img.size(), QSize(800, 400));
    int memset = 0, kernel = 0;
    for (int y = 60; y < img.height(); ++y)
        for (int x = 0; x < img.width(); ++x) {
            const QRgb p = img.pixel(x, y) & 0xFFFFFF;
            memset += p == (spanKindColor(SpanKind::Memset).rgb() & 0xFFFFFF);
            kernel += p == (spanKindColor(SpanKind::Kernel).rgb() & 0xFFFFFF);
        }
    QVERIFY(kernel > 5000);
    QCOMPARE(memset, 0);
}

void TestTimeline::exportLesson()
{
    auto preset = findPreset("08");
    QVERIFY2(preset.ok(), preset.ok() ? "" : preset.error().toString().c_str());
    auto loaded = loadScenarioFile(preset->path);
    QVERIFY2(loaded.ok(), loaded.ok() ? "" : loaded.error().toString().c_str());
    SimulatorBackend sim;
    auto out = runScenario(loaded->scenario, sim);
    QVERIFY(out.status.ok());
    QTemporaryDir dir;
    const QString path = dir.filePath(u"lesson.png"_qs);
    QString error;
    const QString title = defaultImageTitle(out.trace, path);
    QVERIFY(!title.isEmpty());
    QVERIFY2(exportTimelineImage(out.trace, path, QSize(1920, 1080), title, &error), qPrintable(error));
    const QImage img(path);
    QCOMPARE(img.size(), QSize(1920, 1080));
}

QTEST_MAIN(TestTimeline)
#include "tst_timeline.moc"
