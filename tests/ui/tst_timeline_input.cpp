// The timeline's input with real events: hit tests, click to select, hover and tooltips, wheel zoom, scrolling,
// W/A/S/D, measuring with Shift+drag, and the view kept across a new trace.
#include "tst_timeline.h"

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
    t->spans.setBytes(0, int64_t(64) << 20);
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
    QVERIFY(tip.contains(u"64 MiB"_qs)); // as the inspector and the span table write it (format.h)
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
