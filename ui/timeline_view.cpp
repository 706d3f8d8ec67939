#include "timeline_view.h"

#include "timeline_plottable.h"
#include "timing_text.h"

#include <QFontInfo>
#include <QFontMetrics>
#include <QHelpEvent>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QToolTip>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>

namespace streamscope {

namespace {

struct TimeUnit {
    double scale; // ns per unit
    QString suffix;
};

TimeUnit timeUnitFor(double magnitudeNs)
{
    magnitudeNs = std::abs(magnitudeNs);
    if (magnitudeNs < 1e3)
        return {1, QStringLiteral("ns")};
    if (magnitudeNs < 1e6)
        return {1e3, QStringLiteral("\u00B5s")};
    if (magnitudeNs < 1e9)
        return {1e6, QStringLiteral("ms")};
    return {1e9, QStringLiteral("s")};
}

QString formatTimePoint(double ns)
{
    const TimeUnit u = timeUnitFor(ns);
    return QString::number(ns / u.scale, 'f', u.scale > 1 ? 3 : 0) + QLatin1Char(' ') + u.suffix;
}

QString formatBytes(int64_t bytes)
{
    const double b = double(bytes);
    if (b >= double(1 << 30))
        return QString::number(b / double(1 << 30), 'f', 2) + QStringLiteral(" GiB");
    if (b >= double(1 << 20))
        return QString::number(b / double(1 << 20), 'f', 2) + QStringLiteral(" MiB");
    if (b >= 1024)
        return QString::number(b / 1024, 'f', 1) + QStringLiteral(" KiB");
    return QString::number(bytes) + QStringLiteral(" B");
}

QString formatDim3(const Dim3& d)
{
    return QStringLiteral("(%1, %2, %3)").arg(d.x).arg(d.y).arg(d.z);
}

// Tick labels in one unit chosen from the visible range (the axis label names it), with as many decimals as the
// tick step needs.
class TimeTicker : public QCPAxisTicker {
public:
    void setUnit(double scale) { m_scale = scale; }

protected:
    double getTickStep(const QCPRange& range) override
    {
        m_step = QCPAxisTicker::getTickStep(range);
        return m_step;
    }
    QString getTickLabel(double tick, const QLocale&, QChar, int) override
    {
        // As many decimals as the step needs to be exact (0.25 ms steps: 2), so that labels differ.
        const double stepInUnit = m_step / m_scale;
        int decimals = 0;
        for (double v = stepInUnit; decimals < 9 && std::abs(v - std::round(v)) > 1e-6 * std::max(1.0, v); v *= 10)
            ++decimals;
        if (std::abs(tick) < m_step * 1e-6)
            tick = 0;
        return QString::number(tick / m_scale, 'f', decimals);
    }

private:
    double m_scale = 1;
    double m_step = 1;
};

class SpanKindLegendItem : public QCPAbstractLegendItem {
public:
    SpanKindLegendItem(QCPLegend* legend, SpanKind kind) : QCPAbstractLegendItem(legend), m_kind(kind)
    {
        setSelectable(false);
    }

protected:
    QSize minimumOuterSizeHint() const override
    {
        const QFontMetrics fm(mFont);
        const QSize icon = mParentLegend->iconSize();
        return QSize(icon.width() + mParentLegend->iconTextPadding() + fm.horizontalAdvance(spanKindLabel(m_kind))
                         + mMargins.left() + mMargins.right(),
                     std::max(fm.height(), icon.height()) + mMargins.top() + mMargins.bottom());
    }
    void draw(QCPPainter* painter) override
    {
        const QSize icon = mParentLegend->iconSize();
        const QFontMetrics fm(mFont);
        const int h = std::max(fm.height(), icon.height());
        painter->setRenderHint(QPainter::Antialiasing, false);
        const QRect iconRect(mRect.left(), mRect.top() + (h - icon.height()) / 2, icon.width(), icon.height());
        painter->fillRect(iconRect, spanKindColor(m_kind));
        painter->setFont(mFont);
        painter->setPen(mTextColor);
        painter->drawText(QRect(iconRect.right() + 1 + mParentLegend->iconTextPadding(), mRect.top(),
                                mRect.width(), h),
                          Qt::AlignLeft | Qt::AlignVCenter | Qt::TextDontClip, spanKindLabel(m_kind));
    }

private:
    SpanKind m_kind;
};

class FlowKindLegendItem : public QCPAbstractLegendItem {
public:
    FlowKindLegendItem(QCPLegend* legend, FlowKind kind) : QCPAbstractLegendItem(legend), m_kind(kind)
    {
        setSelectable(false);
    }

protected:
    QString text() const { return flowKindLabel(m_kind) + QStringLiteral(" \u2192"); }
    QSize minimumOuterSizeHint() const override
    {
        const QFontMetrics fm(mFont);
        const QSize icon = mParentLegend->iconSize();
        return QSize(icon.width() + mParentLegend->iconTextPadding() + fm.horizontalAdvance(text()) + mMargins.left()
                         + mMargins.right(),
                     std::max(fm.height(), icon.height()) + mMargins.top() + mMargins.bottom());
    }
    void draw(QCPPainter* painter) override
    {
        const QSize icon = mParentLegend->iconSize();
        const QFontMetrics fm(mFont);
        const int h = std::max(fm.height(), icon.height());
        const double y = mRect.top() + h / 2.0;
        painter->setRenderHint(QPainter::Antialiasing, true);
        painter->setPen(QPen(flowKindColor(m_kind), std::max(1.5, icon.height() / 8.0), flowKindPenStyle(m_kind)));
        TimelinePlottable::drawArrow(painter, QPointF(mRect.left(), y), QPointF(mRect.left() + icon.width(), y),
                                     std::max(5.0, icon.height() * 0.5));
        painter->setRenderHint(QPainter::Antialiasing, false);
        painter->setFont(mFont);
        painter->setPen(mTextColor);
        painter->drawText(QRect(mRect.left() + icon.width() + mParentLegend->iconTextPadding(), mRect.top(),
                                mRect.width(), h),
                          Qt::AlignLeft | Qt::AlignVCenter | Qt::TextDontClip, text());
    }

private:
    FlowKind m_kind;
};

// Event-timed GPU runs: the mark of a bar whose start is only a bound, as the timeline draws it.
class UncertainStartLegendItem : public QCPAbstractLegendItem {
public:
    explicit UncertainStartLegendItem(QCPLegend* legend) : QCPAbstractLegendItem(legend) { setSelectable(false); }

protected:
    static QString text() { return QStringLiteral("start uncertain"); }
    QSize minimumOuterSizeHint() const override
    {
        const QFontMetrics fm(mFont);
        const QSize icon = mParentLegend->iconSize();
        return QSize(icon.width() * 2 + mParentLegend->iconTextPadding() + fm.horizontalAdvance(text()) +
                         mMargins.left() + mMargins.right(),
                     std::max(fm.height(), icon.height()) + mMargins.top() + mMargins.bottom());
    }
    void draw(QCPPainter* painter) override
    {
        const QSize icon = mParentLegend->iconSize();
        const QFontMetrics fm(mFont);
        const int h = std::max(fm.height(), icon.height());
        painter->setRenderHint(QPainter::Antialiasing, false);
        // A kernel bar twice the icon's width, so that the marked part reads as the start of a bar.
        const QRect bar(mRect.left(), mRect.top() + (h - icon.height()) / 2, icon.width() * 2, icon.height());
        painter->fillRect(bar, spanKindColor(SpanKind::Kernel));
        painter->save();
        TimelinePlottable::drawUncertainStart(painter, bar);
        painter->restore();
        painter->setFont(mFont);
        painter->setPen(mTextColor);
        painter->drawText(QRect(bar.right() + 1 + mParentLegend->iconTextPadding(), mRect.top(), mRect.width(), h),
                          Qt::AlignLeft | Qt::AlignVCenter | Qt::TextDontClip, text());
    }
};

QFont pixelFont(const QFont& base, int px, bool bold = false)
{
    QFont f = base;
    f.setPixelSize(std::max(6, px));
    f.setBold(bold);
    return f;
}

} // namespace

// Hover, selection (with its arrows) and the measured range. On screen they are painted in paintEvent over the
// copied paint buffer, so changing them costs a copy and a few lines, never a replot; in images (toPainter) this
// layerable paints them with the rest.
class TimelineOverlay : public QCPLayerable {
public:
    explicit TimelineOverlay(TimelineView* view) : QCPLayerable(view, QStringLiteral("overlay")), m_view(view) {}

    void paint(QPainter* painter) const
    {
        painter->save();
        painter->setClipRect(m_view->plotArea());
        paintOverlay(painter);
        painter->restore();
    }

protected:
    void applyDefaultAntialiasingHint(QCPPainter* painter) const override
    {
        painter->setRenderHint(QPainter::Antialiasing, false);
    }
    QRect clipRect() const override { return m_view->plotArea(); }
    void draw(QCPPainter* painter) override
    {
        if (m_view->m_fitRows)
            paintOverlay(painter);
    }

private:
    void paintOverlay(QPainter* painter) const
    {
        const TimelineView& v = *m_view;
        const TimelinePlottable* pl = v.m_plottable;
        const TimelineDrawStats& st = pl->lastDrawStats();
        if (!v.m_trace)
            return;
        const QRect area = v.plotArea();
        const QFont font = pixelFont(v.font(), int(std::lround(QFontInfo(v.font()).pixelSize() * v.m_fontScale)));
        const QFontMetrics fm(font);

        if (v.m_measured) {
            const double x0 = v.xAxis->coordToPixel(double(v.m_measured->first - v.m_layout.origin()));
            const double x1 = v.xAxis->coordToPixel(double(v.m_measured->second - v.m_layout.origin()));
            const QRectF band(QPointF(x0, area.top()), QPointF(std::max(x1, x0 + 1), area.bottom() + 1));
            painter->fillRect(band, QColor(0, 114, 178, 36));
            painter->setPen(QPen(QColor(0, 90, 150), 1));
            painter->drawLine(QPointF(band.left(), area.top()), QPointF(band.left(), area.bottom()));
            painter->drawLine(QPointF(band.right(), area.top()), QPointF(band.right(), area.bottom()));
            const QString text = QStringLiteral("\u0394 ")
                + TimelineView::formatDuration(double(v.m_measured->second - v.m_measured->first));
            const int w = fm.horizontalAdvance(text) + 12, h = fm.height() + 6;
            const double cx =
                std::clamp((band.left() + band.right()) / 2, area.left() + w / 2.0, area.right() - w / 2.0);
            const QRect box(int(cx - w / 2.0), area.top() + 4, w, h);
            painter->fillRect(box, QColor(0, 90, 150));
            painter->setPen(Qt::white);
            painter->setFont(font);
            painter->drawText(box, Qt::AlignCenter, text);
        }

        if (!v.m_highlighted.empty()) {
            // The critical path: each span outlined, consecutive spans joined, in a colour no span kind uses.
            const QColor pathColor(0xF0, 0x3C, 0x96);
            painter->setRenderHint(QPainter::Antialiasing, true);
            painter->setBrush(Qt::NoBrush);
            QPointF previousEnd;
            bool havePrevious = false;
            const QRectF clip = QRectF(area).adjusted(-4, -4, 4, 4);
            for (uint32_t span : v.m_highlighted) {
                if (span >= v.m_trace->spanCount())
                    continue;
                const QRectF r = pl->spanRect(span);
                if (v.m_highlightJoined && havePrevious && (clip.contains(previousEnd) || clip.intersects(r))) {
                    painter->setPen(QPen(pathColor, 2.0, Qt::DotLine, Qt::RoundCap));
                    // Join at the point of this span where the previous one ended (a sync that began earlier
                    // and returned after it is joined where it waited, not where it started).
                    const double x = std::clamp(previousEnd.x(), r.left(), std::max(r.left(), r.right()));
                    painter->drawLine(previousEnd, QPointF(x, r.center().y()));
                }
                if (r.intersects(clip)) {
                    painter->setPen(QPen(pathColor, 2.5));
                    painter->drawRect(r.adjusted(-1.5, -1.5, 1.5, 1.5));
                }
                previousEnd = QPointF(r.right(), r.center().y());
                havePrevious = true;
            }
            painter->setRenderHint(QPainter::Antialiasing, false);
        }

        if (v.m_selected >= 0) {
            painter->setRenderHint(QPainter::Antialiasing, true);
            const double head = std::clamp(v.yAxis->coordToPixel(1) - v.yAxis->coordToPixel(0), 5.0, 10.0);
            // The selected span's arrows: thick, solid and haloed in white, so they stand out of the others.
            for (int pass = 0; pass < 2; ++pass) {
                for (const Flow& f : v.m_selectedFlows) {
                    if (!pl->isFlowKindVisible(f.kind))
                        continue;
                    const QColor c = pass == 0 ? QColor(255, 255, 255, 230) : flowKindColor(f.kind);
                    painter->setPen(QPen(c, pass == 0 ? 5.0 : 2.4, Qt::SolidLine, Qt::RoundCap));
                    TimelinePlottable::drawArrow(painter, pl->flowFrom(f), pl->flowTo(f), head + (pass == 0 ? 2 : 0),
                                                 flowIsCurved(f.kind));
                }
            }
            painter->setRenderHint(QPainter::Antialiasing, false);
            const QRectF r = pl->spanRect(uint32_t(v.m_selected)).adjusted(-2, -2, 1, 1);
            painter->setPen(QPen(Qt::black, 2));
            painter->setBrush(Qt::NoBrush);
            painter->drawRect(r);
            painter->setPen(QPen(Qt::white, 1));
            painter->drawRect(r.adjusted(1.5, 1.5, -1.5, -1.5));
        }
        if (v.m_hovered >= 0 && v.m_hovered != v.m_selected) {
            const QRectF r = pl->spanRect(uint32_t(v.m_hovered)).adjusted(-1, -1, 0, 0);
            painter->setPen(QPen(QColor(0, 0, 0, 200), 1));
            painter->setBrush(Qt::NoBrush);
            painter->drawRect(r);
        }

        // Say why arrows are missing rather than leave the user guessing.
        if (st.flowsSkipped > 0 && !v.m_fitRows) {
            const QString text = QStringLiteral("%1 arrows in view \u2014 zoom in to show them").arg(st.flowsSkipped);
            painter->setFont(font);
            const int w = fm.horizontalAdvance(text) + 10;
            const QRect box(area.right() - w - 4, area.bottom() - fm.height() - 8, w, fm.height() + 4);
            painter->fillRect(box, QColor(255, 255, 255, 220));
            painter->setPen(QColor(0x50, 0x50, 0x50));
            painter->drawText(box, Qt::AlignCenter, text);
        }
    }

    TimelineView* m_view;
};

namespace {
// The view's one paint buffer, cleared to opaque white: paintEvent copies it (QCustomPlot fills the background and
// blends each buffer over it, and clears a second buffer for its overlay layer every replot).
class OpaquePaintBuffer : public QCPPaintBufferPixmap {
public:
    using QCPPaintBufferPixmap::QCPPaintBufferPixmap;
    void clear(const QColor&) override { mBuffer.fill(Qt::white); }
};
} // namespace

// Row names in the left margin: device and host headers in bold, streams and threads indented under them.
class TimelineRowLabels : public QCPLayerable {
public:
    explicit TimelineRowLabels(TimelineView* view) : QCPLayerable(view, QStringLiteral("axes")), m_view(view) {}

    QFont headerFont() const { return pixelFont(m_view->font(), fontPx(), true); }
    QFont rowFont() const { return pixelFont(m_view->font(), fontPx(), m_view->m_presentation); }
    int indent() const { return int(std::lround(fontPx() * 1.0)); }
    int fontPx() const { return int(std::lround(QFontInfo(m_view->font()).pixelSize() * m_view->m_fontScale)); }

protected:
    void applyDefaultAntialiasingHint(QCPPainter* painter) const override
    {
        painter->setRenderHint(QPainter::Antialiasing, false);
    }
    QRect clipRect() const override
    {
        const QRect area = m_view->plotArea();
        return QRect(m_view->viewport().left(), area.top(), area.left() - m_view->viewport().left(), area.height());
    }
    void draw(QCPPainter* painter) override
    {
        const TimelineView& v = *m_view;
        const QRect area = v.plotArea();
        const QRect clip = clipRect();
        const auto& rows = v.m_layout.rows();
        const double laneTop = v.yAxis->pixelToCoord(area.top());
        const double laneBottom = v.yAxis->pixelToCoord(area.bottom() + 1);
        const double laneH = v.yAxis->coordToPixel(1) - v.yAxis->coordToPixel(0);
        if (rows.empty() || !(laneH > 0))
            return;
        const QFont hf = headerFont(), rf = rowFont();
        // Shrink the text when lanes are too low for it (images of many rows).
        const int px = std::max(6, std::min(fontPx(), int(laneH * 0.8)));
        const QFont hfs = pixelFont(hf, px, true), rfs = pixelFont(rf, px, rf.bold());
        const QFontMetrics hfm(hfs), rfm(rfs);
        const int left = clip.left() + 6;
        int trackRow = 0;
        for (size_t r = 0; r < rows.size() && rows[r].firstLane < laneBottom; ++r) {
            const TimelineRow& row = rows[r];
            const bool header = row.firstGlobalLane < 0;
            // A ranges row is shaded with the row below it, the host thread or stream it annotates.
            const bool ranges = row.kind == TimelineRowKind::Ranges;
            trackRow = header ? 0 : (ranges ? trackRow : trackRow + 1);
            const int shade = ranges ? trackRow + 1 : trackRow;
            if (row.firstLane + row.laneCount <= laneTop)
                continue;
            const int y0 = int(std::lround(v.yAxis->coordToPixel(row.firstLane)));
            const int y1 = int(std::lround(v.yAxis->coordToPixel(row.firstLane + row.laneCount)));
            if (header) {
                painter->fillRect(QRect(clip.left(), y0, clip.width(), y1 - y0), QColor(0xE3, 0xE7, 0xED));
                painter->fillRect(QRect(clip.left(), y0, clip.width(), 1), QColor(0xB0, 0xB8, 0xC4));
            } else if (shade % 2 == 0) {
                painter->fillRect(QRect(clip.left(), y0, clip.width(), y1 - y0), QColor(0xF4, 0xF5, 0xF7));
            }
            const QString text = QString::fromStdString(row.label);
            const int x = header ? left : left + indent();
            const int avail = clip.right() - 6 - x;
            const QFontMetrics& fm = header ? hfm : rfm;
            painter->setFont(header ? hfs : rfs);
            painter->setPen(header ? QColor(0x1F, 0x2A, 0x3A) : ranges ? QColor(0x6A, 0x74, 0x82) : QColor(0x20, 0x20, 0x20));
            // Centred on the first lane, so a stacked row reads like the others.
            const int lh = int(std::lround(laneH));
            painter->drawText(QRect(x, y0, std::max(0, avail), lh), Qt::AlignLeft | Qt::AlignVCenter,
                              fm.elidedText(text, Qt::ElideRight, std::max(0, avail)));
        }
        painter->setPen(QColor(0xB0, 0xB8, 0xC4));
        painter->drawLine(QPointF(area.left() - 1, area.top()), QPointF(area.left() - 1, area.bottom()));
    }

private:
    TimelineView* m_view;
};

// The vertical scroll bar: a track and a thumb in the right margin, drawn with the frame.
class TimelineScrollBar : public QCPLayerable {
public:
    explicit TimelineScrollBar(TimelineView* view) : QCPLayerable(view, QStringLiteral("axes")), m_view(view) {}

protected:
    void applyDefaultAntialiasingHint(QCPPainter* painter) const override
    {
        painter->setRenderHint(QPainter::Antialiasing, true);
    }
    void draw(QCPPainter* painter) override
    {
        const QRect track = m_view->scrollTrack();
        if (track.isEmpty())
            return;
        painter->setPen(Qt::NoPen);
        painter->setBrush(QColor(0, 0, 0, 18));
        painter->drawRoundedRect(QRectF(track), 4, 4);
        painter->setBrush(QColor(0, 0, 0, 90));
        painter->drawRoundedRect(QRectF(m_view->scrollThumb()).adjusted(1, 1, -1, -1), 3, 3);
    }

private:
    TimelineView* m_view;
};

TimelineView::TimelineView(QWidget* parent) : QCustomPlot(parent)
{
    setInteractions({});
    setAttribute(Qt::WA_OpaquePaintEvent); // paintEvent covers every pixel: no background fill first
    setFocusPolicy(Qt::StrongFocus);
    setMouseTracking(true);
    setNoAntialiasingOnDrag(true);
    setBackground(QBrush(Qt::white));
    setAntialiasedElements(QCP::aeNone);
    setNotAntialiasedElements(QCP::aeAll);
    setPlottingHint(QCP::phCacheLabels, true);

    yAxis->setRangeReversed(true);
    yAxis->setVisible(false);
    yAxis->grid()->setVisible(false);
    m_timeTicker = QSharedPointer<QCPAxisTicker>(new TimeTicker);
    xAxis->setTicker(m_timeTicker);
    xAxis->grid()->setPen(QPen(QColor(0, 0, 0, 38), 1, Qt::SolidLine));
    xAxis->grid()->setZeroLinePen(Qt::NoPen);
    xAxis->grid()->setSubGridVisible(false);
    xAxis->setBasePen(QPen(QColor(0x60, 0x60, 0x60)));
    xAxis->setTickPen(QPen(QColor(0x60, 0x60, 0x60)));
    xAxis->setSubTickPen(QPen(QColor(0x90, 0x90, 0x90)));
    xAxis->setLabel(QStringLiteral("Time"));
    axisRect()->setAutoMargins(QCP::msTop | QCP::msBottom);
    axisRect()->setMinimumMargins(QMargins(0, 6, 0, 0));

    m_plottable = new TimelinePlottable(xAxis, yAxis);
    m_overlay = new TimelineOverlay(this);
    m_rowLabels = new TimelineRowLabels(this);
    new TimelineScrollBar(this);
    if (QCPLayer* overlayLayer = layer(QStringLiteral("overlay")))
        overlayLayer->setMode(QCPLayer::lmLogical);
    mPaintBuffers.clear();
    mPaintBuffers.append(QSharedPointer<QCPAbstractPaintBuffer>(
        new OpaquePaintBuffer(viewport().size(), bufferDevicePixelRatio())));

    m_kindLegend = new QCPLegend;
    plotLayout()->insertRow(0);
    plotLayout()->addElement(0, 0, m_kindLegend);
    m_kindLegend->setLayer(QStringLiteral("legend"));
    m_kindLegend->setBorderPen(Qt::NoPen);
    m_kindLegend->setBrush(Qt::NoBrush);
    m_kindLegend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
    m_kindLegend->setSelectableParts(QCPLegend::spNone);
    plotLayout()->setRowStretchFactor(0, 0.001);

    connect(this, &QCustomPlot::afterLayout, this, &TimelineView::onAfterLayout);
    connect(xAxis, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), this, &TimelineView::onXRangeChanged);

    m_laneHeight = std::max(16, int(std::lround(QFontInfo(font()).pixelSize() * 1.6)));
    applyFonts();
    updateMargins();
    fitToView();
}

TimelineView::~TimelineView() = default;

void TimelineView::setTrace(std::shared_ptr<const Trace> trace, bool keepView)
{
    keepView = keepView && m_trace && trace;
    const QCPRange keptRange = xAxis->range();
    const double keptScroll = m_scrollLanes;
    m_plottable->setTrace(nullptr, nullptr);
    m_trace = std::move(trace);
    m_layout = m_trace ? TimelineLayout(*m_trace) : TimelineLayout();
    m_plottable->setTrace(m_trace.get(), &m_layout);
    const bool hadSelection = m_selected >= 0;
    m_selected = -1;
    m_hovered = -1;
    m_selectedFlows.clear();
    m_highlighted.clear();
    m_measured.reset();
    m_scrollLanes = 0;
    rebuildLegend();
    updateMargins();
    if (keepView) {
        xAxis->setRange(keptRange);
        clampXRange();
        m_scrollLanes = keptScroll;
        requestReplot();
    } else {
        fitToView();
    }
    if (hadSelection)
        Q_EMIT spanSelected(-1);
}

QRect TimelineView::plotArea() const
{
    return xAxis->axisRect()->rect();
}

double TimelineView::xOfPixel(double x) const
{
    return xAxis->pixelToCoord(x);
}

int TimelineView::spanAt(QPoint pos) const
{
    return m_plottable->spanAt(QPointF(pos), 3);
}

void TimelineView::setFlowKindVisible(FlowKind kind, bool visible)
{
    if (m_plottable->isFlowKindVisible(kind) == visible)
        return;
    m_plottable->setFlowKindVisible(kind, visible);
    rebuildLegend();
    updateMargins();
    requestReplot();
}

bool TimelineView::isFlowKindVisible(FlowKind kind) const
{
    return m_plottable->isFlowKindVisible(kind);
}

std::pair<double, double> TimelineView::visibleTimeRange() const
{
    const double o = double(m_layout.origin());
    return {xAxis->range().lower + o, xAxis->range().upper + o};
}

void TimelineView::setVisibleTimeRange(double startNs, double endNs)
{
    const double o = double(m_layout.origin());
    if (endNs < startNs)
        std::swap(startNs, endNs);
    xAxis->setRange(startNs - o, endNs - o);
    clampXRange();
    requestReplot();
}

double TimelineView::verticalScroll() const
{
    return m_scrollLanes;
}

void TimelineView::setVerticalScroll(double lanes)
{
    m_scrollLanes = std::max(0.0, lanes);
    requestReplot();
}

void TimelineView::setLaneHeight(int pixels)
{
    m_laneHeight = std::clamp(pixels, 4, 200);
    requestReplot();
}

void TimelineView::setMeasuredRange(int64_t startNs, int64_t endNs)
{
    if (endNs < startNs)
        std::swap(startNs, endNs);
    m_measured = std::make_pair(startNs, endNs);
    replotOverlay();
    Q_EMIT measuredRangeChanged(startNs, endNs);
}

void TimelineView::clearMeasuredRange()
{
    if (!m_measured)
        return;
    m_measured.reset();
    replotOverlay();
    Q_EMIT measuredRangeChanged(-1, -1);
}

void TimelineView::setTitle(const QString& title)
{
    if (title.isEmpty()) {
        if (m_titleElement) {
            plotLayout()->remove(m_titleElement);
            plotLayout()->simplify();
            m_titleElement = nullptr;
        }
    } else if (!m_titleElement) {
        plotLayout()->insertRow(0);
        m_titleElement = new QCPTextElement(this, title);
        plotLayout()->addElement(0, 0, m_titleElement);
        plotLayout()->setRowStretchFactor(0, 0.001);
        m_titleElement->setTextColor(QColor(0x10, 0x10, 0x10));
        m_titleElement->setMargins(QMargins(8, 8, 8, 2));
    } else {
        m_titleElement->setText(title);
    }
    applyFonts();
    requestReplot();
}

QString TimelineView::title() const
{
    return m_titleElement ? m_titleElement->text() : QString();
}

void TimelineView::setLegendVisible(bool visible)
{
    if (isLegendVisible() == visible)
        return;
    if (visible) {
        const int row = m_titleElement ? 1 : 0;
        plotLayout()->insertRow(row);
        plotLayout()->addElement(row, 0, m_kindLegend);
        plotLayout()->setRowStretchFactor(row, 0.001);
        m_kindLegend->setVisible(true);
    } else {
        plotLayout()->take(m_kindLegend);
        plotLayout()->simplify();
        m_kindLegend->setVisible(false);
    }
    requestReplot();
}

bool TimelineView::isLegendVisible() const
{
    return m_kindLegend->visible() && m_kindLegend->layout() != nullptr;
}

void TimelineView::setFontScale(double scale)
{
    m_fontScale = std::clamp(scale, 0.5, 8.0);
    applyFonts();
    updateMargins();
    requestReplot();
}

void TimelineView::setPresentationStyle(bool on)
{
    m_presentation = on;
    m_plottable->setHighContrast(on);
    applyFonts();
    updateMargins();
    requestReplot();
}

void TimelineView::rebuildLegend(const std::array<size_t, kFlowKindCount>* drawnFlows)
{
    m_kindLegend->clearItems();
    if (!m_trace)
        return;
    std::array<bool, kSpanKindCount> spanKinds{};
    for (SpanKind k : m_trace->spans.kind)
        spanKinds[size_t(k)] = true;
    std::array<bool, kFlowKindCount> flowKinds{};
    for (const Flow& f : m_trace->flows)
        flowKinds[size_t(f.kind)] = true;
    for (int k = 0; k < kSpanKindCount; ++k)
        if (spanKinds[size_t(k)])
            m_kindLegend->addItem(new SpanKindLegendItem(m_kindLegend, SpanKind(k)));
    for (int k = 0; k < kFlowKindCount; ++k)
        if (flowKinds[size_t(k)] && isFlowKindVisible(FlowKind(k)) && (!drawnFlows || (*drawnFlows)[size_t(k)] > 0))
            m_kindLegend->addItem(new FlowKindLegendItem(m_kindLegend, FlowKind(k)));
    const auto& timing = m_trace->spans.timing;
    if (std::find(timing.begin(), timing.end(), SpanTiming::Uncertain) != timing.end())
        m_kindLegend->addItem(new UncertainStartLegendItem(m_kindLegend));
    applyFonts();
}

void TimelineView::applyFonts()
{
    const int basePx = QFontInfo(font()).pixelSize();
    const int px = int(std::lround(basePx * m_fontScale));
    const QFont f = pixelFont(font(), px, m_presentation);
    const QColor text = m_presentation ? QColor(Qt::black) : QColor(0x20, 0x20, 0x20);
    xAxis->setTickLabelFont(f);
    xAxis->setLabelFont(f);
    xAxis->setTickLabelColor(text);
    xAxis->setLabelColor(text);
    const QColor axis = m_presentation ? QColor(Qt::black) : QColor(0x60, 0x60, 0x60);
    const qreal axisWidth = m_presentation ? std::max(2.0, std::round(m_fontScale)) : 1.0;
    xAxis->setBasePen(QPen(axis, axisWidth));
    xAxis->setTickPen(QPen(axis, axisWidth));
    xAxis->setTickLengthIn(0);
    xAxis->setTickLengthOut(int(std::lround(5 * m_fontScale)));
    xAxis->setSubTickLengthIn(0);
    xAxis->setSubTickLengthOut(int(std::lround(2 * m_fontScale)));
    m_kindLegend->setFont(f);
    m_kindLegend->setIconSize(int(std::lround(px * 1.6)), int(std::lround(px * 0.9)));
    m_kindLegend->setIconTextPadding(int(std::lround(px * 0.4)));
    m_kindLegend->setColumnSpacing(int(std::lround(px * 1.2)));
    m_kindLegend->setRowSpacing(int(std::lround(px * 0.2)));
    m_kindLegend->setMargins(QMargins(m_rowLabelWidth, int(std::lround(px * 0.4)), 8, int(std::lround(px * 0.2))));
    for (int i = 0; i < m_kindLegend->itemCount(); ++i) {
        QCPAbstractLegendItem* item = m_kindLegend->item(i);
        if (!item)
            continue; // a wrapped legend's grid has empty cells
        item->setFont(f);
        item->setTextColor(text);
        item->setMargins(QMargins(0, 0, 0, 0));
    }
    if (m_titleElement)
        m_titleElement->setFont(pixelFont(font(), int(std::lround(px * 1.45)), true));
    m_plottable->setMaxLabelPixelSize(int(std::lround(px * 1.1)));
}

void TimelineView::updateMargins()
{
    int widest = 0;
    if (m_rowLabels) {
        const QFontMetrics hfm(m_rowLabels->headerFont()), rfm(m_rowLabels->rowFont());
        const auto& rows = m_layout.rows();
        for (size_t i = 0; i < rows.size() && i < 20000; ++i) {
            const bool header = rows[i].firstGlobalLane < 0;
            const QString text = QString::fromStdString(rows[i].label);
            const int indent = header ? 0 : m_rowLabels->indent();
            widest = std::max(widest, (header ? hfm : rfm).horizontalAdvance(text) + indent);
        }
    }
    const int px = int(std::lround(QFontInfo(font()).pixelSize() * m_fontScale));
    m_rowLabelWidth = std::max(std::clamp(widest + 16, px * 6, px * 24), m_minRowLabelWidth);
    if (m_presentation) // big text: long device names are elided rather than squeeze the bars
        m_rowLabelWidth = std::min(m_rowLabelWidth, std::max(px * 6, width() * 3 / 10));
    const int right = m_fitRows ? int(std::lround(16 * m_fontScale)) : 14;
    axisRect()->setMargins(QMargins(m_rowLabelWidth, 0, right, 0));
    const QMargins legendMargins = m_kindLegend->margins();
    m_kindLegend->setMargins(QMargins(m_rowLabelWidth, legendMargins.top(), 8, legendMargins.bottom()));
    // Legend columns: as many as fit in the width.
    int itemWidth = 1;
    for (int i = 0; i < m_kindLegend->itemCount(); ++i)
        if (QCPAbstractLegendItem* item = m_kindLegend->item(i))
            itemWidth = std::max(itemWidth, item->minimumOuterSizeHint().width());
    const int avail = std::max(1, (m_fitRows ? viewport().width() : width()) - m_rowLabelWidth - 16);
    const int columns = std::max(1, avail / (itemWidth + m_kindLegend->columnSpacing()));
    if (columns != m_kindLegend->wrap()) {
        m_kindLegend->setWrap(columns);
        // setWrap() alone leaves the items where they are: rearrange them into the new number of columns.
        m_kindLegend->setFillOrder(QCPLayoutGrid::foColumnsFirst, true);
    }
    if (m_fitRows) {
        // Images lay rows out top-down with spare height at the bottom: keep the legend at its natural height.
        m_kindLegend->setSizeConstraintRect(QCPLayoutElement::scrOuterRect);
        m_kindLegend->setMaximumSize(QWIDGETSIZE_MAX, m_kindLegend->minimumOuterSizeHint().height());
    }
}

double TimelineView::visibleLanes() const
{
    return double(plotArea().height()) / std::max(1, m_laneHeight);
}

void TimelineView::onAfterLayout()
{
    const QRect area = plotArea();
    const int total = m_layout.totalLanes();
    if (m_fitRows) {
        // An image shows every row: lanes as high as the area allows, up to a comfortable maximum.
        const int px = int(std::lround(QFontInfo(font()).pixelSize() * m_fontScale));
        const double lanes = std::max(double(std::max(total, 1)), area.height() / (px * kImageMaxLaneHeight));
        yAxis->setRange(0, lanes);
    } else {
        const double visible = double(area.height()) / std::max(1, m_laneHeight);
        m_scrollLanes = std::clamp(m_scrollLanes, 0.0, std::max(0.0, total - visible));
        yAxis->setRange(m_scrollLanes, m_scrollLanes + std::max(visible, 1e-3));
    }
    static_cast<TimeTicker*>(m_timeTicker.data())->setTickCount(std::max(3, area.width() / int(110 * m_fontScale)));
}

QRect TimelineView::scrollTrack() const
{
    const QRect area = plotArea();
    if (m_fitRows || m_layout.totalLanes() <= visibleLanes() + 1e-9 || area.height() <= 0)
        return {};
    return QRect(area.right() + 4, area.top(), 8, area.height());
}

QRect TimelineView::scrollThumb() const
{
    const QRect track = scrollTrack();
    if (track.isEmpty())
        return {};
    const double total = std::max(1, m_layout.totalLanes());
    const int h = std::max(16, int(track.height() * visibleLanes() / total));
    const double maxScroll = std::max(1e-9, total - visibleLanes());
    const double fraction = std::clamp(m_scrollLanes / maxScroll, 0.0, 1.0);
    const int y = track.top() + int(std::lround((track.height() - h) * fraction));
    return QRect(track.left(), y, track.width(), h);
}

void TimelineView::onXRangeChanged(const QCPRange& range)
{
    const TimeUnit u = timeUnitFor(std::max(std::abs(range.lower), std::abs(range.upper)));
    static_cast<TimeTicker*>(m_timeTicker.data())->setUnit(u.scale);
    const QString label = QStringLiteral("Time (") + u.suffix + QLatin1Char(')');
    if (xAxis->label() != label)
        xAxis->setLabel(label);
    const double o = double(m_layout.origin());
    Q_EMIT visibleTimeRangeChanged(range.lower + o, range.upper + o);
}

void TimelineView::setMinimumTimeExtent(double ns)
{
    m_minTimeExtent = std::max(0.0, ns);
    clampXRange();
    requestReplot();
}

void TimelineView::setMinimumRowLabelWidth(int pixels)
{
    m_minRowLabelWidth = std::max(0, pixels);
    updateMargins();
    requestReplot();
}

void TimelineView::clampXRange()
{
    QCPRange r = xAxis->range();
    const double len = std::max({1.0, double(m_layout.endTime() - m_layout.origin()), m_minTimeExtent});
    double width = std::clamp(r.size(), 10.0, len * 1.5 + 1000);
    double centre = r.center();
    centre = std::clamp(centre, -width * 0.5 + width * 0.1, len + width * 0.5 - width * 0.1);
    if (width != r.size() || centre != r.center())
        xAxis->setRange(centre - width / 2, centre + width / 2);
}

void TimelineView::fitToView()
{
    const double len = std::max(double(m_layout.endTime() - m_layout.origin()), m_minTimeExtent);
    if (len <= 0) {
        xAxis->setRange(-1000, 1000 + std::max(0.0, len));
    } else {
        const double pad = len * 0.01;
        xAxis->setRange(-pad, len + pad);
    }
    m_scrollLanes = 0;
    requestReplot();
}

void TimelineView::zoomAround(double factor, double pixelX)
{
    const QCPRange r = xAxis->range();
    const double key = xOfPixel(pixelX);
    xAxis->setRange(key - (key - r.lower) * factor, key + (r.upper - key) * factor);
    clampXRange();
    requestReplot();
}

void TimelineView::panByFraction(double fraction)
{
    const QCPRange r = xAxis->range();
    const double d = r.size() * fraction;
    xAxis->setRange(r.lower + d, r.upper + d);
    clampXRange();
    requestReplot();
}

void TimelineView::scrollLanes(double lanes)
{
    m_scrollLanes = std::max(0.0, m_scrollLanes + lanes);
    requestReplot();
}

static double cursorXOr(const TimelineView* view, double fallback)
{
    const QPoint p = view->mapFromGlobal(QCursor::pos());
    const QRect area = view->xAxis->axisRect()->rect();
    return area.contains(p) ? double(p.x()) : fallback;
}

void TimelineView::zoomIn()
{
    zoomAround(0.8, cursorXOr(this, plotArea().center().x()));
}

void TimelineView::zoomOut()
{
    zoomAround(1.25, cursorXOr(this, plotArea().center().x()));
}

void TimelineView::panLeft()
{
    panByFraction(-0.1);
}

void TimelineView::panRight()
{
    panByFraction(0.1);
}

void TimelineView::requestReplot()
{
    replot(QCustomPlot::rpQueuedReplot);
}

void TimelineView::setHighlightedSpans(std::vector<uint32_t> spans, bool joined)
{
    m_highlighted = std::move(spans);
    m_highlightJoined = joined;
    replotOverlay();
}

void TimelineView::replotOverlay()
{
    update(); // the overlay is painted in paintEvent, over the unchanged buffer
}

void TimelineView::setHovered(int spanIndex)
{
    if (spanIndex == m_hovered)
        return;
    m_hovered = spanIndex;
    replotOverlay();
    Q_EMIT spanHovered(spanIndex);
}

void TimelineView::selectSpan(int spanIndex)
{
    if (!m_trace || spanIndex < 0 || size_t(spanIndex) >= m_trace->spanCount())
        spanIndex = -1;
    const bool changed = spanIndex != m_selected;
    m_selected = spanIndex;
    m_selectedFlows.clear();
    if (spanIndex >= 0) {
        // Flows are sorted by `from`: the outgoing ones are one binary search away; incoming ones need a scan.
        const auto& flows = m_trace->flows;
        auto lo = std::lower_bound(flows.begin(), flows.end(), uint32_t(spanIndex),
                                   [](const Flow& f, uint32_t s) { return f.from < s; });
        for (auto it = lo; it != flows.end() && it->from == uint32_t(spanIndex); ++it)
            m_selectedFlows.push_back(*it);
        for (const Flow& f : flows)
            if (f.to == uint32_t(spanIndex))
                m_selectedFlows.push_back(f);

        // Scroll (and zoom if it is too small to see) the span into view.
        const double s = double(m_trace->spans.start[size_t(spanIndex)] - m_layout.origin());
        const double e = double(m_trace->spans.end[size_t(spanIndex)] - m_layout.origin());
        const QCPRange r = xAxis->range();
        const double pxPerNs = plotArea().width() / std::max(r.size(), 1e-9);
        double width = r.size();
        if ((e - s) * pxPerNs < 3)
            width = std::max((e - s) * 10, 1000.0);
        if (e - s > width * 0.9)
            width = (e - s) * 1.25;
        if (width != r.size() || s < r.lower || e > r.upper) {
            const double c = (s + e) / 2;
            xAxis->setRange(c - width / 2, c + width / 2);
            clampXRange();
        }
        const int row = m_layout.rowOfTrack(m_trace->spans.track[size_t(spanIndex)]);
        if (row >= 0) {
            const double lane = m_layout.rows()[size_t(row)].firstLane + m_layout.laneOfSpan(uint32_t(spanIndex));
            const double visible = visibleLanes();
            if (lane < m_scrollLanes || lane + 1 > m_scrollLanes + visible)
                m_scrollLanes = std::max(0.0, lane - visible / 2);
        }
        requestReplot();
    } else {
        replotOverlay();
    }
    if (changed)
        Q_EMIT spanSelected(spanIndex);
}

QString TimelineView::formatDuration(double ns)
{
    const double a = std::abs(ns);
    if (a < 1e3)
        return QString::number(ns, 'f', 0) + QStringLiteral(" ns");
    const TimeUnit u = timeUnitFor(a);
    const double v = ns / u.scale;
    const int decimals = std::abs(v) < 10 ? 2 : (std::abs(v) < 100 ? 1 : 0);
    return QString::number(v, 'f', decimals) + QLatin1Char(' ') + u.suffix;
}

QString TimelineView::spanToolTip(int spanIndex) const
{
    if (!m_trace || spanIndex < 0 || size_t(spanIndex) >= m_trace->spanCount())
        return {};
    const Trace& tr = *m_trace;
    const auto i = size_t(spanIndex);
    const SpanKind kind = tr.spans.kind[i];
    const Track& own = tr.tracks[tr.spans.track[i]];
    // A range is shown with the host thread or stream it annotates.
    const bool ranges = own.kind == TrackKind::Ranges && own.parent >= 0 && size_t(own.parent) < tr.tracks.size();
    const Track& track = ranges ? tr.tracks[size_t(own.parent)] : own;
    QString where;
    if (track.kind == TrackKind::HostThread)
        where = trackNameText(QStringLiteral("host thread"), track.name);
    else
        where = trackNameText(QStringLiteral("stream"), track.name)
            + (track.device >= 0 ? QStringLiteral(" \u00B7 GPU ") + QString::number(track.device) : QString());
    const double dur = double(tr.spans.end[i] - tr.spans.start[i]);
    // The short name as the title; a long kernel signature in full under it, smaller, for reading (not for fitting).
    const SpanDisplayNames& names = m_plottable->spanNames();
    QString text = QStringLiteral("<b>") + names.shortName(uint32_t(i)).toHtmlEscaped() + QStringLiteral("</b>");
    if (names.isShortened(uint32_t(i))) {
        // Some template signatures run to thousands of characters: the tooltip stays a tooltip, the inspector has all.
        constexpr qsizetype kMaxFull = 1000;
        const QString& full = names.fullName(uint32_t(i));
        const QString shown = full.size() > kMaxFull
            ? full.left(kMaxFull).toHtmlEscaped() + QStringLiteral("… (in full in the inspector)")
            : full.toHtmlEscaped();
        text += QStringLiteral("<br><span style='color:#555; font-size:small'>") + shown + QStringLiteral("</span>");
    }
    text += QStringLiteral("<br>") + spanKindLabel(kind) + QStringLiteral(" on ") + where.toHtmlEscaped()
        + QStringLiteral("<br>start ") + formatTimePoint(double(tr.spans.start[i] - m_layout.origin()))
        + QStringLiteral(" \u00B7 duration ") + formatDuration(dur);
    if (tr.spans.bytes[i] > 0) {
        text += QStringLiteral("<br>") + formatBytes(tr.spans.bytes[i]);
        if (dur > 0)
            text += QStringLiteral(" \u00B7 ") + QString::number(double(tr.spans.bytes[i]) / dur, 'f', 1)
                + QStringLiteral(" GB/s");
    }
    if (kind == SpanKind::Kernel && tr.spans.grid[i].count() > 0)
        text += QStringLiteral("<br>grid ") + formatDim3(tr.spans.grid[i]) + QStringLiteral(" \u00B7 block ")
            + formatDim3(tr.spans.block[i]);
    if (tr.spans.timingOf(i) != SpanTiming::Measured) // a start that is only a bound, or was moved
        text += QStringLiteral("<br><i>") + spanTimingText(tr, uint32_t(i)).toHtmlEscaped() + QStringLiteral("</i>");
    if (const QString error = spanEventErrorText(tr, uint32_t(i)); !error.isEmpty())
        text += QStringLiteral("<br>") + error.toHtmlEscaped();
    if (tr.spans.op[i] >= 0)
        text += QStringLiteral("<br><span style='color:#666'>thread %1, op %2, iteration %3</span>")
                    .arg(tr.spans.thread[i])
                    .arg(tr.spans.op[i])
                    .arg(tr.spans.iteration[i]);
    return text;
}

void TimelineView::mousePressEvent(QMouseEvent* event)
{
    setFocus(Qt::MouseFocusReason);
    m_pressPos = event->position().toPoint();
    m_dragMoved = false;
    m_dragStartXRange = xAxis->range();
    m_dragStartScroll = m_scrollLanes;
    const bool measure = event->button() == Qt::RightButton
        || (event->button() == Qt::LeftButton && (event->modifiers() & Qt::ShiftModifier));
    const QRect track = scrollTrack();
    if (event->button() == Qt::LeftButton && !track.isEmpty() && track.adjusted(-3, 0, 3, 0).contains(m_pressPos)) {
        const QRect thumb = scrollThumb();
        if (m_pressPos.y() < thumb.top())
            scrollLanes(-visibleLanes() * 0.9);
        else if (m_pressPos.y() > thumb.bottom())
            scrollLanes(visibleLanes() * 0.9);
        m_drag = Drag::ScrollThumb;
        m_thumbGrab = std::clamp(m_pressPos.y() - scrollThumb().top(), 0, thumb.height());
    } else if (measure && plotArea().contains(m_pressPos)) {
        m_drag = Drag::Measure;
        m_measureAnchor = xOfPixel(m_pressPos.x());
        setCursor(Qt::SizeHorCursor);
    } else if (event->button() == Qt::LeftButton || event->button() == Qt::MiddleButton) {
        m_drag = Drag::Pan;
    } else {
        m_drag = Drag::None;
    }
    event->accept();
}

void TimelineView::mouseMoveEvent(QMouseEvent* event)
{
    const QPoint pos = event->position().toPoint();
    if (m_drag != Drag::None && (pos - m_pressPos).manhattanLength() >= 3)
        m_dragMoved = true;
    if (m_drag == Drag::Pan && m_dragMoved) {
        setCursor(Qt::ClosedHandCursor);
        const double nsPerPx = m_dragStartXRange.size() / std::max(1, plotArea().width());
        const double dx = (pos.x() - m_pressPos.x()) * nsPerPx;
        xAxis->setRange(m_dragStartXRange.lower - dx, m_dragStartXRange.upper - dx);
        clampXRange();
        m_scrollLanes = std::max(0.0, m_dragStartScroll - double(pos.y() - m_pressPos.y()) / std::max(1, m_laneHeight));
        requestReplot();
    } else if (m_drag == Drag::ScrollThumb) {
        const QRect track = scrollTrack(), thumb = scrollThumb();
        if (!track.isEmpty() && track.height() > thumb.height()) {
            const double fraction = double(pos.y() - m_thumbGrab - track.top()) / (track.height() - thumb.height());
            m_scrollLanes = std::clamp(fraction, 0.0, 1.0) * std::max(0.0, m_layout.totalLanes() - visibleLanes());
            requestReplot();
        }
    } else if (m_drag == Drag::Measure && m_dragMoved) {
        const double a = m_measureAnchor, b = xOfPixel(pos.x());
        const double o = double(m_layout.origin());
        m_measured = std::make_pair(int64_t(std::llround(std::min(a, b) + o)),
                                    int64_t(std::llround(std::max(a, b) + o)));
        replotOverlay();
    } else if (m_drag == Drag::None) {
        setHovered(spanAt(pos));
    }
    event->accept();
}

void TimelineView::mouseReleaseEvent(QMouseEvent* event)
{
    const Drag drag = m_drag;
    m_drag = Drag::None;
    unsetCursor();
    const QPoint pos = event->position().toPoint();
    if (drag == Drag::Pan && !m_dragMoved && event->button() == Qt::LeftButton) {
        selectSpan(spanAt(pos));
    } else if (drag == Drag::Measure) {
        if (m_dragMoved && m_measured)
            Q_EMIT measuredRangeChanged(m_measured->first, m_measured->second);
        else
            clearMeasuredRange();
    }
    event->accept();
}

void TimelineView::mouseDoubleClickEvent(QMouseEvent* event)
{
    if (event->button() != Qt::LeftButton)
        return;
    const int s = spanAt(event->position().toPoint());
    if (s < 0) {
        fitToView();
        return;
    }
    // Frame the span.
    const double a = double(m_trace->spans.start[size_t(s)] - m_layout.origin());
    const double b = double(m_trace->spans.end[size_t(s)] - m_layout.origin());
    const double pad = std::max((b - a) * 0.15, 50.0);
    xAxis->setRange(a - pad, b + pad);
    clampXRange();
    selectSpan(s);
    requestReplot();
}

void TimelineView::wheelEvent(QWheelEvent* event)
{
    const QPoint d = event->angleDelta();
    // Some platforms turn Alt+wheel or Shift+wheel into horizontal wheel events: take whichever delta is set.
    const double steps = (d.y() != 0 ? d.y() : d.x()) / 120.0;
    if (event->modifiers() & (Qt::ControlModifier | Qt::AltModifier)) {
        scrollLanes(-steps * 3);
    } else if (event->modifiers() & Qt::ShiftModifier) {
        panByFraction(-steps * 0.1);
    } else {
        if (d.y() != 0)
            zoomAround(std::pow(0.85, d.y() / 120.0), event->position().x());
        if (d.x() != 0)
            panByFraction(-d.x() / 120.0 * 0.1);
    }
    event->accept();
}

void TimelineView::keyPressEvent(QKeyEvent* event)
{
    switch (event->key()) {
    case Qt::Key_W:
    case Qt::Key_Plus:
    case Qt::Key_Equal:
        zoomIn();
        break;
    case Qt::Key_S:
    case Qt::Key_Minus:
        zoomOut();
        break;
    case Qt::Key_A:
    case Qt::Key_Left:
        panLeft();
        break;
    case Qt::Key_D:
    case Qt::Key_Right:
        panRight();
        break;
    case Qt::Key_Up:
        scrollLanes(-1);
        break;
    case Qt::Key_Down:
        scrollLanes(1);
        break;
    case Qt::Key_PageUp:
        scrollLanes(-visibleLanes() * 0.9);
        break;
    case Qt::Key_PageDown:
        scrollLanes(visibleLanes() * 0.9);
        break;
    case Qt::Key_F:
        // Perfetto: F focuses the selection; without one, fit everything.
        if (m_selected >= 0 && m_trace) {
            const double a = double(m_trace->spans.start[size_t(m_selected)] - m_layout.origin());
            const double b = double(m_trace->spans.end[size_t(m_selected)] - m_layout.origin());
            const double pad = std::max((b - a) * 0.15, 50.0);
            xAxis->setRange(a - pad, b + pad);
            clampXRange();
            requestReplot();
        } else {
            fitToView();
        }
        break;
    case Qt::Key_0:
    case Qt::Key_Home:
        fitToView();
        break;
    case Qt::Key_Escape:
        clearMeasuredRange();
        selectSpan(-1);
        break;
    default:
        QCustomPlot::keyPressEvent(event);
        return;
    }
    event->accept();
}

void TimelineView::keyReleaseEvent(QKeyEvent* event)
{
    QCustomPlot::keyReleaseEvent(event);
}

void TimelineView::resizeEvent(QResizeEvent* event)
{
    QCustomPlot::resizeEvent(event);
    updateMargins();
}

void TimelineView::leaveEvent(QEvent* event)
{
    setHovered(-1);
    QCustomPlot::leaveEvent(event);
}

void TimelineView::paintEvent(QPaintEvent* event)
{
    Q_UNUSED(event);
    QCPPainter painter(this);
    if (!painter.isActive())
        return;
    // WA_OpaquePaintEvent: every pixel must be painted. Before the first replot, or after a resize before the queued
    // replot, the buffer is missing or smaller than the widget: show white there.
    const bool ready = !mPaintBuffers.isEmpty() && !mPaintBuffers.first()->invalidated();
    if (!ready) {
        painter.fillRect(rect(), Qt::white);
        replot(rpQueuedReplot);
        return;
    }
    const QSize buffer = mPaintBuffers.first()->size();
    if (buffer.width() < width())
        painter.fillRect(QRect(buffer.width(), 0, width() - buffer.width(), height()), Qt::white);
    if (buffer.height() < height())
        painter.fillRect(QRect(0, buffer.height(), width(), height() - buffer.height()), Qt::white);
    painter.setCompositionMode(QPainter::CompositionMode_Source); // the buffer is opaque: a copy
    for (const auto& b : std::as_const(mPaintBuffers))
        b->draw(&painter);
    painter.setCompositionMode(QPainter::CompositionMode_SourceOver);
    m_overlay->paint(&painter);
}

bool TimelineView::event(QEvent* event)
{
    if (event->type() == QEvent::ToolTip) {
        auto* help = static_cast<QHelpEvent*>(event);
        const int s = spanAt(help->pos());
        if (s >= 0)
            QToolTip::showText(help->globalPos(), spanToolTip(s), this);
        else
            QToolTip::hideText();
        return true;
    }
    return QCustomPlot::event(event);
}

} // namespace streamscope
