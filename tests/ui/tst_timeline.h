// The timeline: row layout and lane stacking, the plottable's culling and merging (through its draw list), hit
// tests, mouse and keyboard interaction with real events, arrows per kind, and image export (PNG pixels, SVG that
// parses, PDF that is a PDF). This header holds what the test's files share: traces made from span lists, a shown
// view, pixels and mouse events, and the test class. The tests: tst_timeline.cpp (layout, drawing, arrows, the time
// axis), tst_timeline_input.cpp (hit tests, mouse, wheel and keys), tst_timeline_export.cpp (images).
#pragma once

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

struct SpanSpec {
    uint32_t track;
    SpanKind kind;
    int64_t start, end;
    std::string name = "op";
};

inline Track streamTrack(std::string name, int device = 0, StreamKind kind = StreamKind::Blocking)
{
    Track t;
    t.kind = TrackKind::Stream;
    t.name = std::move(name);
    t.device = device;
    t.streamKind = kind;
    return t;
}

inline Track hostTrack(std::string name)
{
    Track t;
    t.kind = TrackKind::HostThread;
    t.name = std::move(name);
    return t;
}

inline std::shared_ptr<Trace> makeTrace(const std::vector<Track>& tracks, const std::vector<SpanSpec>& spans,
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
inline std::unique_ptr<TimelineView> makeView(std::shared_ptr<const Trace> trace, QSize size = {1000, 500})
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

inline int findSpan(const Trace& t, std::string_view name)
{
    for (uint32_t i = 0; i < t.spanCount(); ++i)
        if (t.spanName(i) == name)
            return int(i);
    return -1;
}

// Centre of a lane at time `ns` (relative to the trace start), in widget pixels, from the axes alone.
inline QPoint pixelOf(const TimelineView& v, double ns, int row, int lane = 0)
{
    const TimelineRow& r = v.timelineLayout().rows()[size_t(row)];
    const double x = v.xAxis->coordToPixel(ns);
    const double y = v.yAxis->coordToPixel(r.firstLane + lane + 0.5);
    return QPoint(int(std::lround(x)), int(std::lround(y)));
}

inline void sendMouse(QWidget* w, QEvent::Type type, QPoint pos, Qt::MouseButton button, Qt::MouseButtons buttons,
                      Qt::KeyboardModifiers mods = Qt::NoModifier)
{
    QMouseEvent e(type, QPointF(pos), QPointF(w->mapToGlobal(pos)), button, buttons, mods);
    QCoreApplication::sendEvent(w, &e);
}

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
    void summariesDrawWhatTheSpansDraw_data();
    void summariesDrawWhatTheSpansDraw();
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
