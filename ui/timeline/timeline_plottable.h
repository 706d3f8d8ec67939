// One QCustomPlot plottable that draws every span of a trace (never one item per span), the way fast trace viewers
// do (Qt Creator's tracing renderer, Tracy, Perfetto):
// - cull: per visible lane, binary-search the first span ending after the window's start and the first starting
//   after its end (a lane's spans are sorted by start and end, see timeline_layout.h);
// - merge: spans narrower than a pixel fold into one block per pixel column; a wide view walks the lane's summary
//   level whose buckets are at most a pixel (lane_summary.h, built once with the layout; a block gets the kind with
//   the most time in it), so it costs O(pixel columns), not O(spans); a narrower one walks the spans, finding the
//   next column by galloping search (a block gets its first span's kind); neighbouring blocks of one colour join;
// - batch: rectangles are grouped by span kind and filled with one drawRects call per colour, antialiasing off;
// - labels inside bars where the name fits (the short name, span_display_names.h); dependency arrows (flows) per
//   kind, only when few enough to read;
// - spans whose start is only a bound (SpanTiming::Uncertain, event-timed GPU runs) get a hatched, lighter left
//   part, drawn over their bar after the batches: only those few spans cost anything extra.
// Hover and selection are not drawn here but on the view's buffered overlay layer, so they repaint almost for free.
#pragma once

#include "span_display_names.h"
#include "theme.h"
#include "timeline_layout.h"

// qcustomplot.h (2.1) uses `foreach` in inline templates, which QT_NO_FOREACH (set for this project) removes: give
// it a range-for for the length of the include. Include QCustomPlot through this header (or timeline_view.h).
#if defined(QT_NO_FOREACH) && !defined(foreach) && !defined(QCUSTOMPLOT_H)
#define foreach(variable, container) for (variable : container)
#define STREAMSCOPE_QCP_FOREACH
#endif
#include <qcustomplot.h>
#ifdef STREAMSCOPE_QCP_FOREACH
#undef foreach
#undef STREAMSCOPE_QCP_FOREACH
#endif

#include <QColor>
#include <QImage>
#include <QRect>
#include <QString>

#include <array>
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

namespace streamscope {

// The span-kind palette of a theme (theme.h): Okabe–Ito colours (distinguishable with the common colour-vision
// deficiencies) plus greys and muted tones for host activity, and a readable text colour on each; the application's
// theme unless one is given. For the legend, the panels that name kinds, exports and tests.
QColor spanKindColor(SpanKind kind, const Theme& theme = Theme::current());
QColor spanKindTextColor(SpanKind kind, const Theme& theme = Theme::current());
QString spanKindLabel(SpanKind kind); // "kernel", "memcpy HtoD", ..., "API call", "sync (blocked)", "host work"
// The colour of the 1-px divider between two back-to-back bars of one kind: a shade darker than a light bar, lighter
// than a dark one, so that a run of same-kind spans does not read as one long span.
QColor spanDividerColor(SpanKind kind, const Theme& theme = Theme::current());
QColor flowKindColor(FlowKind kind, const Theme& theme = Theme::current());
QString flowKindLabel(FlowKind kind); // "launch", "event", "sync", "implicit", "op call"
// A track in words: `word` ("thread", "host thread", "stream") and the track's name, "thread main", "stream s1"; a
// name that already says it, as importers write them ("thread 431 (python3)", "stream 7"), is not said twice.
QString trackNameText(const QString& word, const std::string& name);
Qt::PenStyle flowKindPenStyle(FlowKind kind);
// Event and implicit dependencies (GPU to GPU) are drawn as finish-to-start curves, launches and syncs (host <-> GPU)
// straight.
bool flowIsCurved(FlowKind kind);

// What one draw produced (for tests and benchmarks).
struct TimelineDrawStats {
    size_t rowsDrawn = 0;
    size_t spansVisited = 0; // spans looked at (binary/galloping searches skip the rest)
    size_t spanRects = 0;    // rectangles for spans at least a pixel wide
    size_t mergedRects = 0;  // rectangles standing for one or more sub-pixel spans (after joining neighbours)
    size_t labels = 0;
    size_t flows = 0;          // arrows drawn
    size_t flowsSkipped = 0;   // arrows in view but not drawn because there were too many to read
    size_t uncertainMarks = 0; // bars marked as having an uncertain start
    std::array<size_t, kFlowKindCount> flowsByKind{}; // arrows drawn per FlowKind
    size_t rects() const { return spanRects + mergedRects; }
};

// The bars of one draw: runs of pixels per lane, left to right, lane after lane (what draw() fills), each with the
// span it stands for. A run is one span at least a pixel wide, or a block of sub-pixel spans.
struct TimelineDrawList {
    struct Run {
        int x0, x1;         // pixel columns [x0, x1)
        uint32_t firstSpan; // the (first) span it stands for
        uint32_t spanCount; // spans it covers (1 for a span drawn on its own)
        uint16_t lane;      // index into laneTop
        SpanKind kind;
        bool merged;  // a block of sub-pixel spans
        bool divider; // back to back with the bar before, both at least 3 px: a 1-px divider in column x0
    };
    // A growable array of runs that keeps its memory between draws and appends without a call per run.
    class Runs {
    public:
        const Run* begin() const { return m_data.get(); }
        const Run* end() const { return m_data.get() + m_size; }
        size_t size() const { return m_size; }
        bool empty() const { return m_size == 0; }
        const Run& operator[](size_t i) const { return m_data[i]; }
        Run& back() { return m_data[m_size - 1]; }
        void clear() { m_size = 0; }
        void push_back(const Run& r)
        {
            if (m_size == m_capacity)
                grow();
            m_data[m_size++] = r;
        }

    private:
        void grow();
        std::unique_ptr<Run[]> m_data;
        size_t m_size = 0, m_capacity = 0;
    };
    Runs runs;
    std::vector<int> laneTop; // top pixel of the bars of each lane drawn
    int barHeight = 0;
    int canvasLeft = 0, canvasRight = 0; // pixel range the runs are clamped to
    QRect rectOf(const Run& r) const { return QRect(r.x0, laneTop[r.lane], r.x1 - r.x0, barHeight); }
    // The rectangles of one kind (the vector path draws them with one drawRects call per colour).
    std::vector<QRect> rectsOfKind(SpanKind kind) const;
    // The dividers drawn over the bars of one kind (Run::divider), a pixel wide.
    std::vector<QRect> dividersOfKind(SpanKind kind) const;
    struct Label {
        QRect rect;
        uint32_t span;
    };
    std::vector<Label> labels;
    // Runs (indices into runs) of single spans whose start is uncertain: they get the mark.
    std::vector<uint32_t> uncertainRuns;
    struct Arrow {
        QPointF from, to;
        FlowKind kind;
        uint32_t flow;
    };
    std::vector<Arrow> arrows;
    TimelineDrawStats stats;
    void clear();
    // Every span drawn (individually or inside a merged block's first span), for tests.
    bool drawsSpan(uint32_t span) const;
};

class TimelinePlottable : public QCPAbstractPlottable {
    Q_OBJECT
public:
    // Draws on keyAxis (relative ns, layout.origin() = 0) and valueAxis (lane units, range reversed: 0 at the top).
    TimelinePlottable(QCPAxis* keyAxis, QCPAxis* valueAxis);
    ~TimelinePlottable() override;

    // Both must outlive the plottable or the next setTrace; nullptr clears. `flows`: the trace's arrow index, built
    // beforehand (null, or one of another trace: built now).
    void setTrace(const Trace* trace, const TimelineLayout* layout, std::shared_ptr<const FlowIndex> flows = nullptr);
    const std::shared_ptr<const FlowIndex>& flowIndex() const { return m_flows; }
    const Trace* trace() const { return m_trace; }
    const TimelineLayout* timelineLayout() const { return m_layout; }
    // The names shown for the trace's spans (shared with the view's tooltip).
    const SpanDisplayNames& spanNames() const { return m_names; }

    void setFlowKindVisible(FlowKind kind, bool visible);
    bool isFlowKindVisible(FlowKind kind) const { return m_flowVisible[size_t(kind)]; }
    // More arrows than this in view are not drawn (a wide view of a big trace would be a grey haze).
    void setMaxFlowsDrawn(int n) { m_maxFlows = n; }
    int maxFlowsDrawn() const { return m_maxFlows; }
    void setLabelsVisible(bool visible) { m_labels = visible; }
    void setRowShading(bool on) { m_rowShading = on; }
    // Largest pixel size of the names inside bars (they otherwise grow with the lane height).
    void setMaxLabelPixelSize(int px) { m_maxLabelPx = px; }
    // Projector style: bold names in bars, a dark outline around each bar, heavier arrows (off by default).
    void setHighContrast(bool on);
    bool highContrast() const { return m_highContrast; }
    // The colours of bars, names, row shading and arrows (the light theme until the view sets its own).
    void setTheme(const Theme& theme);
    const Theme& theme() const { return *m_theme; }

    // Wide views draw the lanes' summaries by zoom level (lane_summary.h) instead of walking their spans; off, every
    // view walks the spans (for benchmarks and tests that compare the two).
    void setSummariesUsed(bool on) { m_useSummaries = on; }
    bool summariesUsed() const { return m_useSummaries; }
    // Computes what draw() would draw for the current axes (culling, merging, labels, arrows).
    void computeDrawList(TimelineDrawList& out) const;
    // Above this many arrows in view every arrow is drawn a pixel wide (fast); dependencies are wider below it.
    static constexpr size_t kManyArrows = 64;
    const TimelineDrawStats& lastDrawStats() const { return m_lastStats; }
    // Memory held by the plottable's own index (the arrow index), for benchmarks.
    size_t memoryBytes() const
    {
        return (m_flows ? m_flows->memoryBytes() : 0) + m_labelNames.capacity() * sizeof(void*);
    }

    // Geometry in widget pixels for the current axes.
    QRectF spanRect(uint32_t span) const; // the bar (at least 1 px wide)
    QRectF laneRect(int row, int lane) const;
    // Start and end points of a flow's arrow.
    QPointF flowFrom(const Flow& flow) const;
    QPointF flowTo(const Flow& flow) const;
    // The span under `pos`: containing it, else the nearest within `tolerancePx` horizontally; -1 when none.
    int spanAt(QPointF pos, double tolerancePx = 3) const;
    // Bar geometry: inset from the lane's edges.
    double barInset() const;
    // The font for labels inside bars, sized for the lane height.
    QFont labelFont() const;

    // Draws one arrow (line and head) — the overlay uses it to highlight the selected span's arrows.
    // `curved`: a finish-to-start connector (dependencies: out to the right, into the target's edge), else a straight
    // line (launches, syncs).
    static void drawArrow(QPainter* painter, QPointF from, QPointF to, double headSize, bool curved = false);
    // The mark of a bar whose start is uncertain (the op began at or after the drawn start): its left part washed
    // lighter and hatched with thin dark lines, which shows on every span colour, on any background, on screen and
    // in exports. `bar`: the bar's rectangle; the legend draws its icon with it too.
    static void drawUncertainStart(QPainter* painter, const QRect& bar);
    // The part of `bar` that drawUncertainStart marks.
    static QRect uncertainStartRect(const QRect& bar);

    // QCPAbstractPlottable
    double selectTest(const QPointF& pos, bool onlyVisible, QVariant* details = nullptr) const override;
    QCPRange getKeyRange(bool& foundRange, QCP::SignDomain inSignDomain = QCP::sdBoth) const override;
    QCPRange getValueRange(bool& foundRange, QCP::SignDomain inSignDomain = QCP::sdBoth,
                           const QCPRange& inKeyRange = QCPRange()) const override;

protected:
    void draw(QCPPainter* painter) override;
    void drawLegendIcon(QCPPainter* painter, const QRectF& rect) const override;

private:
    struct Mapping; // pixel <-> axis coordinates of one draw
    Mapping mapping() const;
    void computeArrows(const Mapping& m, TimelineDrawList& out) const;
    void drawLabels(QPainter* painter, const TimelineDrawList& list) const;
    void drawSpansRaster(QPainter* painter, const TimelineDrawList& list) const;

    const Trace* m_trace = nullptr;
    const TimelineLayout* m_layout = nullptr;
    std::array<bool, kFlowKindCount> m_flowVisible{true, true, true, true, true, true};
    int m_maxFlows = 600;
    bool m_labels = true;
    bool m_rowShading = true;
    bool m_highContrast = false;
    bool m_useSummaries = true;
    const Theme* m_theme = &Theme::light();
    int m_maxLabelPx = 28;
    // Flows sorted by their earliest end point, with the prefix maximum of their latest, to cull arrows by time.
    std::shared_ptr<const FlowIndex> m_flows;
    bool m_anyUncertain = false; // some span of the trace has SpanTiming::Uncertain
    struct LabelName {
        QString text;
        std::vector<float> prefix; // advance of the first i characters, to decide where to elide
        float width = 0;
    };
    SpanDisplayNames m_names; // the short names shown in bars, once per trace string
    mutable std::vector<std::unique_ptr<LabelName>> m_labelNames; // per trace string, measured when first drawn
    mutable std::unordered_map<uint64_t, QImage> m_labelSprites;  // rendered labels, see drawLabels
    mutable int m_labelFontPx = -1;
    mutable qreal m_spriteDpr = 1;
    mutable TimelineDrawList m_drawList; // reused between draws (no allocation per frame)
    mutable QImage m_canvas;             // raster drawing: one row of pixels per lane
    TimelineDrawStats m_lastStats;
    QRect m_lastClip;
};

} // namespace streamscope
