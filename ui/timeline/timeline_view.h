// The timeline: a QCustomPlot showing a Trace as a Gantt chart — host-thread rows on top, then per device a header
// and its streams — with one plottable for all spans (TimelinePlottable), dependency arrows, hover tooltip, click to
// select, wheel/drag and W/A/S/D navigation (the Perfetto convention) and a measured range (Shift+drag or right
// button drag). Stays interactive with millions of spans: drawing and hit tests are binary searches over the
// trace's start-sorted columns (see timeline_layout.h), the frame is one opaque paint buffer that paintEvent copies,
// and hover, selection and the measured range are painted over that copy, so changing them never replots.
//
// Mouse: wheel zooms around the cursor (Shift+wheel pans, Ctrl/Alt+wheel scrolls rows), drag pans, click selects,
// double-click frames a span (or fits all), Shift+drag or right-drag measures. Keys: W/S zoom, A/D pan, F frames
// the selection (or fits all), 0/Home fit, Up/Down/PageUp/PageDown scroll rows, Esc clears.
#pragma once

#include "timeline_layout.h"
#include "timeline_plottable.h" // includes QCustomPlot (see there) and the span-kind palette

#include <QString>

#include <array>
#include <memory>
#include <optional>
#include <set>
#include <utility>
#include <vector>

namespace streamscope {

class Trace;
class TimelinePlottable;
class TimelineOverlay;
class TimelineRowLabels;
class TimelineScrollBar;

class TimelineView : public QCustomPlot {
    Q_OBJECT
public:
    explicit TimelineView(QWidget* parent = nullptr);
    ~TimelineView() override;

    // Shows `trace` (finalized; finalize() is not called here) and fits it to view. nullptr clears the view.
    // The view keeps the trace alive; it must not change while shown. With `keepView` the visible time range (from
    // the trace start) and the vertical scroll stay as they were: for live what-if previews of an edited scenario.
    // The selection and the measured range are cleared either way.
    void setTrace(std::shared_ptr<const Trace> trace, bool keepView = false);
    // The same with its layout built already (off the GUI thread, for a big trace): used when it was built for
    // `trace` with the ranks folded that this call would fold (initiallyCollapsedRanks for a new view, the view's
    // own when it is kept), else built here.
    // `flows`, the trace's arrow index built beforehand, likewise (null: built here).
    void setTrace(std::shared_ptr<const Trace> trace, bool keepView, std::shared_ptr<const TimelineLayout> layout,
                  std::shared_ptr<const FlowIndex> flows = nullptr);
    const std::shared_ptr<const Trace>& trace() const { return m_trace; }
    const TimelineLayout& timelineLayout() const { return *m_layout; }

    // Hit test in widget coordinates: the span under `pos` (the nearest within a few pixels for spans narrower
    // than that), or -1.
    int spanAt(QPoint pos) const;
    int selectedSpan() const { return m_selected; }
    // The rectangle of the time axis (the area the bars are drawn in), for widgets that align under it.
    QRect timeAxisRect() const { return plotArea(); }
    // Spans drawn with a highlight outline and, with `joined`, joined in order (the critical path); cleared by
    // setTrace().
    void setHighlightedSpans(std::vector<uint32_t> spans, bool joined = true);
    const std::vector<uint32_t>& highlightedSpans() const { return m_highlighted; }
    int hoveredSpan() const { return m_hovered; }

    // Dependency arrows per kind (all visible by default).
    void setFlowKindVisible(FlowKind kind, bool visible);
    bool isFlowKindVisible(FlowKind kind) const;

    // Visible time range in the trace's nanoseconds (absolute, as in Trace::spans.start).
    std::pair<double, double> visibleTimeRange() const;
    void setVisibleTimeRange(double startNs, double endNs);
    // Vertical scroll, in lane units (0 = top row).
    double verticalScroll() const;
    void setVerticalScroll(double lanes);
    // The time the view can show, from the trace's start: at least `ns` even when the trace is shorter (0: the
    // trace's own length). Views compared side by side get the same extent, so that both can show the same range.
    void setMinimumTimeExtent(double ns);
    // The row-label column is at least this wide (pixels): views stacked for a comparison line up their time axes.
    void setMinimumRowLabelWidth(int pixels);
    int rowLabelWidth() const { return m_rowLabelWidth; }
    // Height of one lane in pixels (default from the font); rows with n lanes are n times this high.
    int laneHeight() const { return m_laneHeight; }
    // The lanes' height as drawn: laneHeight(), or with setLanesFillHeight up to kMaxLaneStretch times it where
    // every lane fits (the main window's timeline; views stacked for a comparison keep one height).
    double shownLaneHeight() const;
    void setLanesFillHeight(bool on);
    static constexpr double kMaxLaneStretch = 2.5;
    void setLaneHeight(int pixels);
    // The widget's minimum height keeps this many lanes visible under the legend and above the time axis (0: none).
    void setMinimumVisibleLanes(int lanes);

    // A job of several ranks: a rank's rows folded under its header row, which then draws the rank's streams over
    // each other, or shown (a click on the header's label toggles it; timeline_rank_groups.cpp). A new trace starts
    // with every rank shown, a job of more than kRanksShownUnfolded ranks with every rank folded.
    void setRankCollapsed(int rank, bool collapsed);
    bool isRankCollapsed(int rank) const { return m_collapsedRanks.count(rank) > 0; }

    // The measured range (Shift+drag or right-button drag), in absolute ns; empty when none.
    std::optional<std::pair<int64_t, int64_t>> measuredRange() const { return m_measured; }
    void setMeasuredRange(int64_t startNs, int64_t endNs);
    void clearMeasuredRange();

    // A title line above the legend (image export uses it; empty = no title, the default).
    void setTitle(const QString& title);
    QString title() const;
    void setLegendVisible(bool visible);
    bool isLegendVisible() const;
    // Text size as a multiple of the widget font's (1 by default): axis, legend, row labels and names in bars.
    void setFontScale(double scale);
    double fontScale() const { return m_fontScale; }
    // Projector style (off by default): bold black text, heavier axis and dependency arrows, outlined bars.
    void setPresentationStyle(bool on);
    bool presentationStyle() const { return m_presentation; }
    // The colours the view draws with: its palette's theme (theme.h), followed when the palette changes; or, once
    // set, `theme` whatever the palette (images are light). nullptr follows the palette again.
    void setFixedTheme(const Theme* theme);
    const Theme& theme() const { return *m_theme; }

    // The plottable drawing all spans (for tests and image export).
    TimelinePlottable* spansPlottable() const { return m_plottable; }

    // How much a wheel event zooms: the visible time range is multiplied by this (below 1 zooms in, wheel away from
    // the user). A mouse wheel's notch (120 units of angleDelta, 15°) zooms kWheelZoomPerNotch times, as Perfetto
    // and Tracy about do; a trackpad's small deltas zoom by the same share of a notch, so that a swipe zooms
    // smoothly instead of in jumps. Where only pixelDelta is set, kWheelPixelsPerNotch pixels count as a notch.
    static constexpr double kWheelZoomPerNotch = 1.5;
    static constexpr double kWheelPixelsPerNotch = 120;
    static double wheelZoomFactor(QPoint angleDelta, QPoint pixelDelta);

    // Formats a duration for people: "850 ns", "12.3 µs", "4.56 ms", "1.23 s".
    static QString formatDuration(double ns);
    // The tooltip text of a span (name, kind, stream, start, duration, bytes or grid/block).
    QString spanToolTip(int spanIndex) const;

public Q_SLOTS:
    // Selects a span (-1 clears), emits spanSelected when it changes, and scrolls/zooms it into view.
    void selectSpan(int spanIndex);
    void clearSelection() { selectSpan(-1); }
    void fitToView();
    void zoomIn();   // W
    void zoomOut();  // S
    void panLeft();  // A
    void panRight(); // D

Q_SIGNALS:
    // The user clicked a span (or selectSpan changed it); -1 when the selection was cleared.
    void spanSelected(int spanIndex);
    void spanHovered(int spanIndex);
    void visibleTimeRangeChanged(double startNs, double endNs);
    // A measured range was set (absolute ns); emitted with start == end == -1 when cleared.
    void measuredRangeChanged(qint64 startNs, qint64 endNs);

public:
    // QCustomPlot's minimum is its layout's: the legend's columns, which are as many as the last width allowed, so
    // the window could never again be narrower than the timeline had once been (2146 px at Qt's scale 2). The
    // legend wraps to fewer columns when narrower: only the row labels and a little of the plot are a minimum.
    QSize minimumSizeHint() const override;

protected:
    void mousePressEvent(QMouseEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void mouseReleaseEvent(QMouseEvent* event) override;
    void mouseDoubleClickEvent(QMouseEvent* event) override;
    void wheelEvent(QWheelEvent* event) override;
    void keyPressEvent(QKeyEvent* event) override;
    void keyReleaseEvent(QKeyEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;
    void leaveEvent(QEvent* event) override;
    bool event(QEvent* event) override;
    void changeEvent(QEvent* event) override;
    void paintEvent(QPaintEvent* event) override;

private:
    friend class TimelineOverlay;
    friend class TimelineRowLabels;
    friend class TimelineScrollBar;
    friend struct TimelineImageRenderer;
    // In images, lanes grow to fill the height up to this many times the text height.
    static constexpr double kImageMaxLaneHeight = 3.0;
    void onAfterLayout();
    void onXRangeChanged(const QCPRange& range);
    // Span kinds present, flow kinds present and visible (and, when given, drawn).
    void rebuildLegend(const std::array<size_t, kFlowKindCount>* drawnFlows = nullptr);
    void applyFonts();
    void applyTheme();
    void updateMargins();
    void clampXRange();
    void zoomAround(double factor, double pixelX);
    void panByFraction(double fraction);
    void scrollLanes(double lanes);
    void setHovered(int spanIndex);
    void replotOverlay();
    void requestReplot();
    // The vertical scroll bar, painted in the right margin (a QScrollBar child would repaint with every frame).
    QRect scrollTrack() const;
    QRect scrollThumb() const;
    double visibleLanes() const;
    double xOfPixel(double x) const; // pixel -> x-axis coordinate (ns relative to the layout's origin)
    QRect plotArea() const;          // the axis rect
    // A click at `pos` on a rank's header label folds or unfolds the rank; whether it was one.
    bool toggleRankAt(QPoint pos);

    std::shared_ptr<const Trace> m_trace;
    std::shared_ptr<const TimelineLayout> m_layout = std::make_shared<const TimelineLayout>(); // never null
    TimelinePlottable* m_plottable = nullptr;
    TimelineOverlay* m_overlay = nullptr;
    TimelineRowLabels* m_rowLabels = nullptr;
    QCPTextElement* m_titleElement = nullptr;
    QCPLegend* m_kindLegend = nullptr;
    QSharedPointer<QCPAxisTicker> m_timeTicker;
    const Theme* m_theme = &Theme::light();
    const Theme* m_fixedTheme = nullptr;
    int m_laneHeight = 18;
    int m_stretchLanes = 0; // the most lanes this trace has shown (shownLaneHeight)
    bool m_stretchToFill = false;
    double m_scrollLanes = 0;      // vertical scroll (top lane)
    double m_fontScale = 1;        // images for slides use bigger text
    bool m_presentation = false;   // projector style
    bool m_highlightJoined = true; // the highlighted spans are a path
    bool m_fitRows = false;        // images: shrink/stretch lanes so that every row fits
    int m_minimumLanes = 0;
    bool m_fillRows = false; // images with m_fitRows: lanes as high as the area allows (no maximum)
    int m_selected = -1;
    int m_hovered = -1;
    std::vector<Flow> m_selectedFlows;
    std::vector<uint32_t> m_highlighted;
    std::optional<std::pair<int64_t, int64_t>> m_measured;
    int m_rowLabelWidth = 80;
    int m_minRowLabelWidth = 0;
    double m_minTimeExtent = 0;
    std::set<int> m_collapsedRanks;

    enum class Drag { None, Pan, Measure, ScrollThumb };
    Drag m_drag = Drag::None;
    QPoint m_pressPos;
    bool m_dragMoved = false;
    QCPRange m_dragStartXRange;
    double m_dragStartScroll = 0;
    double m_measureAnchor = 0; // x-axis coordinate
    int m_thumbGrab = 0;        // pixels from the thumb's top where it was grabbed
};

} // namespace streamscope
