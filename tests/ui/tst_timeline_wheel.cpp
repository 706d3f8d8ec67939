// The timeline's wheel zoom: 1.5 times per notch of a mouse wheel (120 units of angleDelta), in and out; a
// trackpad's small deltas by the same share of a notch, so that eight events of 15 units zoom as one notch; a
// trackpad that only sends pixelDelta likewise. Real QWheelEvents on a view shown offscreen.
#include "timeline_view.h"

#include <QTest>
#include <QWheelEvent>

#include <cmath>
#include <memory>

using namespace streamscope;

namespace {

std::shared_ptr<Trace> twoStreams()
{
    auto t = std::make_shared<Trace>();
    for (const char* name : {"s1", "s2"}) {
        Track track;
        track.kind = TrackKind::Stream;
        track.name = name;
        t->addTrack(track);
    }
    for (uint32_t i = 0; i < 40; ++i) {
        SpanInit init;
        init.track = i % 2;
        init.kind = SpanKind::Kernel;
        init.name = "k";
        init.start = int64_t(i) * 100'000;
        init.end = init.start + 90'000;
        t->addSpan(init);
    }
    t->finalize();
    return t;
}

double visibleWidth(const TimelineView& v)
{
    const auto [a, b] = v.visibleTimeRange();
    return b - a;
}

void wheel(TimelineView& v, QPoint angleDelta, QPoint pixelDelta = {})
{
    const QPointF pos = v.timeAxisRect().center();
    QWheelEvent e(pos, v.mapToGlobal(pos), pixelDelta, angleDelta, Qt::NoButton, Qt::NoModifier, Qt::NoScrollPhase,
                  false);
    QCoreApplication::sendEvent(&v, &e);
}

} // namespace

class TestTimelineWheel : public QObject {
    Q_OBJECT
private:
    std::unique_ptr<TimelineView> makeView()
    {
        auto v = std::make_unique<TimelineView>();
        v->resize(1000, 400);
        v->setTrace(twoStreams());
        v->show();
        if (!QTest::qWaitForWindowExposed(v.get()))
            qWarning("timeline view not exposed");
        v->replot();
        return v;
    }

private Q_SLOTS:
    void factorPerNotch()
    {
        QCOMPARE(TimelineView::kWheelZoomPerNotch, 1.5);
        QVERIFY(std::abs(TimelineView::wheelZoomFactor({0, 120}, {}) - 1 / 1.5) < 1e-12);
        QVERIFY(std::abs(TimelineView::wheelZoomFactor({0, -120}, {}) - 1.5) < 1e-12);
        QVERIFY(std::abs(TimelineView::wheelZoomFactor({0, 240}, {}) - 1 / 2.25) < 1e-12);
        // A trackpad's small steps: proportional, and eight of 15 units make one notch.
        const double small = TimelineView::wheelZoomFactor({0, 15}, {});
        QVERIFY(small < 1 && small > 0.9);
        QVERIFY(std::abs(std::pow(small, 8) - 1 / 1.5) < 1e-12);
        // Only pixels (some trackpads): kWheelPixelsPerNotch pixels are a notch; angleDelta wins when both are set.
        QVERIFY(std::abs(TimelineView::wheelZoomFactor({}, {0, int(TimelineView::kWheelPixelsPerNotch)}) - 1 / 1.5)
                < 1e-12);
        QCOMPARE(TimelineView::wheelZoomFactor({0, 120}, {0, 3}), TimelineView::wheelZoomFactor({0, 120}, {}));
        QCOMPARE(TimelineView::wheelZoomFactor({}, {}), 1.0);
    }

    void oneNotchZoomsOneAndAHalfTimes()
    {
        auto v = makeView();
        const double fitted = visibleWidth(*v);
        wheel(*v, {0, 120});
        const double in = visibleWidth(*v);
        QVERIFY2(std::abs(fitted / in - 1.5) < 1e-6, qPrintable(QString::number(fitted / in)));
        wheel(*v, {0, 120});
        QVERIFY(std::abs(in / visibleWidth(*v) - 1.5) < 1e-6);
        wheel(*v, {0, -120});
        QVERIFY(std::abs(visibleWidth(*v) - in) < 1e-6 * in); // out again by the same factor
    }

    void trackpadZoomsSmoothly()
    {
        auto v = makeView();
        const double fitted = visibleWidth(*v);
        double last = fitted;
        for (int i = 0; i < 8; ++i) {
            wheel(*v, {0, 15}, {0, 2});
            const double now = visibleWidth(*v);
            QVERIFY2(last / now < 1.06, qPrintable(QString::number(last / now))); // small steps, no jump
            last = now;
        }
        QVERIFY(std::abs(fitted / last - 1.5) < 1e-6);
        // Pixels alone.
        const double before = visibleWidth(*v);
        wheel(*v, {}, {0, int(TimelineView::kWheelPixelsPerNotch)});
        QVERIFY(std::abs(before / visibleWidth(*v) - 1.5) < 1e-6);
    }
};

QTEST_MAIN(TestTimelineWheel)
#include "tst_timeline_wheel.moc"
