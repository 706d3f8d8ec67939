// What the timeline view draws with besides its plottable: the time axis ticker, the legend items, and the layers
// painted over and beside the spans (hover and selection overlay, row labels, scroll bar); the time texts of its
// tooltips (sizes and grids as the panels write them: format.h). Internal to the view (timeline_view.cpp,
// timeline_view_input.cpp).
#pragma once

#include "timeline_view.h"

#include "format.h"
#include "timeline_plottable.h"
#include "timing_text.h"

#include <QFontInfo>
#include <QFontMetrics>

#include <algorithm>
#include <cmath>

namespace streamscope {

namespace timeline_detail {

struct TimeUnit {
    double scale; // ns per unit
    QString suffix;
};

// The theme of the view a legend item or layer draws in.
inline const Theme& themeOf(const QCustomPlot* plot)
{
    return static_cast<const TimelineView*>(plot)->theme();
}

inline TimeUnit timeUnitFor(double magnitudeNs)
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

inline QString formatTimePoint(double ns)
{
    const TimeUnit u = timeUnitFor(ns);
    return QString::number(ns / u.scale, 'f', u.scale > 1 ? 3 : 0) + QLatin1Char(' ') + u.suffix;
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
        painter->fillRect(iconRect, themeOf(mParentPlot).spanKind(m_kind));
        painter->setFont(mFont);
        painter->setPen(mTextColor);
        painter->drawText(QRect(iconRect.right() + 1 + mParentLegend->iconTextPadding(), mRect.top(), mRect.width(), h),
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
        painter->setPen(
            QPen(themeOf(mParentPlot).flowKind(m_kind), std::max(1.5, icon.height() / 8.0), flowKindPenStyle(m_kind)));
        TimelinePlottable::drawArrow(painter, QPointF(mRect.left(), y), QPointF(mRect.left() + icon.width(), y),
                                     std::max(5.0, icon.height() * 0.5));
        painter->setRenderHint(QPainter::Antialiasing, false);
        painter->setFont(mFont);
        painter->setPen(mTextColor);
        painter->drawText(
            QRect(mRect.left() + icon.width() + mParentLegend->iconTextPadding(), mRect.top(), mRect.width(), h),
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
        return QSize(icon.width() * 2 + mParentLegend->iconTextPadding() + fm.horizontalAdvance(text())
                         + mMargins.left() + mMargins.right(),
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
        painter->fillRect(bar, themeOf(mParentPlot).spanKind(SpanKind::Kernel));
        painter->save();
        TimelinePlottable::drawUncertainStart(painter, bar);
        painter->restore();
        painter->setFont(mFont);
        painter->setPen(mTextColor);
        painter->drawText(QRect(bar.right() + 1 + mParentLegend->iconTextPadding(), mRect.top(), mRect.width(), h),
                          Qt::AlignLeft | Qt::AlignVCenter | Qt::TextDontClip, text());
    }
};

inline QFont pixelFont(const QFont& base, int px, bool bold = false)
{
    QFont f = base;
    f.setPixelSize(std::max(6, px));
    f.setBold(bold);
    return f;
}
} // namespace timeline_detail

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
        const Theme& theme = v.theme();
        const TimelinePlottable* pl = v.m_plottable;
        const TimelineDrawStats& st = pl->lastDrawStats();
        if (!v.m_trace)
            return;
        const QRect area = v.plotArea();
        const QFont font =
            timeline_detail::pixelFont(v.font(), int(std::lround(QFontInfo(v.font()).pixelSize() * v.m_fontScale)));
        const QFontMetrics fm(font);

        if (v.m_measured) {
            const double x0 = v.xAxis->coordToPixel(double(v.m_measured->first - v.m_layout->origin()));
            const double x1 = v.xAxis->coordToPixel(double(v.m_measured->second - v.m_layout->origin()));
            const QRectF band(QPointF(x0, area.top()), QPointF(std::max(x1, x0 + 1), area.bottom() + 1));
            painter->fillRect(band, theme.measureBand);
            painter->setPen(QPen(theme.measureLine, 1));
            painter->drawLine(QPointF(band.left(), area.top()), QPointF(band.left(), area.bottom()));
            painter->drawLine(QPointF(band.right(), area.top()), QPointF(band.right(), area.bottom()));
            const QString text = QStringLiteral("\u0394 ")
                + TimelineView::formatDuration(double(v.m_measured->second - v.m_measured->first));
            const int w = fm.horizontalAdvance(text) + 12, h = fm.height() + 6;
            const double cx =
                std::clamp((band.left() + band.right()) / 2, area.left() + w / 2.0, area.right() - w / 2.0);
            const QRect box(int(cx - w / 2.0), area.top() + 4, w, h);
            painter->fillRect(box, theme.measureLabel);
            painter->setPen(theme.measureLabelText);
            painter->setFont(font);
            painter->drawText(box, Qt::AlignCenter, text);
        }

        if (!v.m_highlighted.empty()) {
            // The critical path: each span outlined, consecutive spans joined, in a colour no span kind uses.
            const QColor pathColor = theme.criticalPath;
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
            // The selected span's arrows: thick, solid and haloed in the background's colour, so they stand out of the
            // others.
            for (int pass = 0; pass < 2; ++pass) {
                for (const Flow& f : v.m_selectedFlows) {
                    if (!pl->isFlowKindVisible(f.kind))
                        continue;
                    const QColor c = pass == 0 ? theme.arrowHalo : theme.flowKind(f.kind);
                    painter->setPen(QPen(c, pass == 0 ? 5.0 : 2.4, Qt::SolidLine, Qt::RoundCap));
                    TimelinePlottable::drawArrow(painter, pl->flowFrom(f), pl->flowTo(f), head + (pass == 0 ? 2 : 0),
                                                 flowIsCurved(f.kind));
                }
            }
            painter->setRenderHint(QPainter::Antialiasing, false);
            const QRectF r = pl->spanRect(uint32_t(v.m_selected)).adjusted(-2, -2, 1, 1);
            painter->setPen(QPen(theme.selectionOuter, 2));
            painter->setBrush(Qt::NoBrush);
            painter->drawRect(r);
            painter->setPen(QPen(theme.selectionInner, 1));
            painter->drawRect(r.adjusted(1.5, 1.5, -1.5, -1.5));
        }
        if (v.m_hovered >= 0 && v.m_hovered != v.m_selected) {
            const QRectF r = pl->spanRect(uint32_t(v.m_hovered)).adjusted(-1, -1, 0, 0);
            painter->setPen(QPen(theme.hoverOutline, 1));
            painter->setBrush(Qt::NoBrush);
            painter->drawRect(r);
        }

        // Say why arrows are missing rather than leave the user guessing.
        if (st.flowsSkipped > 0 && !v.m_fitRows) {
            const QString text = QStringLiteral("%1 arrows in view \u2014 zoom in to show them").arg(st.flowsSkipped);
            painter->setFont(font);
            const int w = fm.horizontalAdvance(text) + 10;
            const QRect box(area.right() - w - 4, area.bottom() - fm.height() - 8, w, fm.height() + 4);
            painter->fillRect(box, theme.hintBackground);
            painter->setPen(theme.hintText);
            painter->drawText(box, Qt::AlignCenter, text);
        }
    }

    TimelineView* m_view;
};

// The view's one paint buffer, cleared to the opaque background colour: paintEvent copies it (QCustomPlot fills the
// background and blends each buffer over it, and clears a second buffer for its overlay layer every replot).
class OpaquePaintBuffer : public QCPPaintBufferPixmap {
public:
    using QCPPaintBufferPixmap::QCPPaintBufferPixmap;
    void setFill(const QColor& colour) { m_fill = colour; }
    void clear(const QColor&) override { mBuffer.fill(m_fill); }

private:
    QColor m_fill = Qt::white;
};

// Row names in the left margin: device and host headers in bold, streams and threads indented under them.
class TimelineRowLabels : public QCPLayerable {
public:
    explicit TimelineRowLabels(TimelineView* view) : QCPLayerable(view, QStringLiteral("axes")), m_view(view) {}

    QFont headerFont() const { return timeline_detail::pixelFont(m_view->font(), fontPx(), true); }
    QFont rowFont() const { return timeline_detail::pixelFont(m_view->font(), fontPx(), m_view->m_presentation); }
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
        const Theme& theme = v.theme();
        const QRect area = v.plotArea();
        // Within the axis rect's outer rect: an image's margin all round stays blank.
        const QRect clip = clipRect().intersected(v.axisRect()->outerRect());
        const auto& rows = v.m_layout->rows();
        const double laneTop = v.yAxis->pixelToCoord(area.top());
        const double laneBottom = v.yAxis->pixelToCoord(area.bottom() + 1);
        const double laneH = v.yAxis->coordToPixel(1) - v.yAxis->coordToPixel(0);
        if (rows.empty() || !(laneH > 0))
            return;
        const QFont hf = headerFont(), rf = rowFont();
        // Shrink the text when lanes are too low for it (images of many rows).
        const int px = std::max(6, std::min(fontPx(), int(laneH * 0.8)));
        const QFont hfs = timeline_detail::pixelFont(hf, px, true), rfs = timeline_detail::pixelFont(rf, px, rf.bold());
        const QFontMetrics hfm(hfs), rfm(rfs);
        const int left = clip.left() + 6;
        int trackRow = 0;
        for (size_t r = 0; r < rows.size() && rows[r].firstLane < laneBottom; ++r) {
            const TimelineRow& row = rows[r];
            const bool header = isHeaderRow(row);
            // A ranges row is shaded with the row below it, the host thread or stream it annotates.
            const bool ranges = row.kind == TimelineRowKind::Ranges;
            trackRow = header ? 0 : (ranges ? trackRow : trackRow + 1);
            const int shade = ranges ? trackRow + 1 : trackRow;
            if (row.firstLane + row.laneCount <= laneTop)
                continue;
            const int y0 = int(std::lround(v.yAxis->coordToPixel(row.firstLane)));
            const int y1 = int(std::lround(v.yAxis->coordToPixel(row.firstLane + row.laneCount)));
            if (header) {
                painter->fillRect(QRect(clip.left(), y0, clip.width(), y1 - y0), theme.rowHeader);
                painter->fillRect(QRect(clip.left(), y0, clip.width(), 1), theme.rowHeaderRule);
            } else if (shade % 2 == 0) {
                painter->fillRect(QRect(clip.left(), y0, clip.width(), y1 - y0), theme.rowAlternate);
            }
            // In a job, a device's header sits under its rank's (rank -> device -> stream).
            const bool nested = row.kind == TimelineRowKind::DeviceHeader && row.rank >= 0;
            const int x = header ? left + (nested ? indent() / 2 : 0) : left + indent();
            const int avail = std::max(0, clip.right() - 6 - x);
            const QFontMetrics& fm = header ? hfm : rfm;
            painter->setFont(header ? hfs : rfs);
            painter->setPen(header ? theme.rowHeaderText : ranges ? theme.rowRangesText : theme.rowText);
            // Centred on the first lane, so a stacked row reads like the others.
            const int lh = int(std::lround(laneH));
            // The elided text is kept per row until its label, width or font changes: eliding and laying out every
            // row's text again on each replot was 0.4 ms of a wheel notch (bench_window).
            if (m_elided.size() != rows.size())
                m_elided.assign(rows.size(), {});
            Elided& e = m_elided[r];
            const QFont& font = header ? hfs : rfs;
            if (e.avail != avail || e.font != font || e.label != row.label) {
                e.label = row.label;
                e.avail = avail;
                e.font = font;
                e.text = fm.elidedText(QString::fromStdString(row.label), Qt::ElideRight, avail);
            }
            painter->drawText(QRect(x, y0, avail, lh), Qt::AlignLeft | Qt::AlignVCenter, e.text);
        }
        painter->setPen(theme.rowHeaderRule);
        painter->drawLine(QPointF(area.left() - 1, area.top()), QPointF(area.left() - 1, area.bottom()));
    }

private:
    struct Elided {
        std::string label;
        int avail = -1;
        QFont font;
        QString text;
    };
    TimelineView* m_view;
    std::vector<Elided> m_elided; // per row of the layout
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
        const QRect thumb = m_view->scrollThumb();
        const Theme& theme = m_view->theme();
        const QPaintEngine* engine = painter->paintEngine();
        if (!engine || engine->type() != QPaintEngine::Raster
            || painter->transform().type() > QTransform::TxTranslate) {
            paint(painter, track, thumb, theme);
            return;
        }
        // On screen the bar is drawn once into an image and copied on every replot: an antialiased rounded track
        // the height of the plot took 0.65 ms of a 7 ms wheel notch (bench_window), and it only changes when the
        // rows scroll or the view is resized.
        const qreal dpr = painter->device() ? painter->device()->devicePixelRatioF() : 1.0;
        const QRect thumbInTrack = thumb.translated(-track.topLeft());
        if (m_cache.isNull() || m_cacheSize != track.size() || m_cacheThumb != thumbInTrack || m_cacheDpr != dpr
            || m_cacheTrack != theme.scrollTrack || m_cacheThumbColor != theme.scrollThumb) {
            m_cache = QImage(track.size() * dpr, QImage::Format_ARGB32_Premultiplied);
            m_cache.setDevicePixelRatio(dpr);
            m_cache.fill(Qt::transparent);
            QPainter p(&m_cache);
            p.setRenderHint(QPainter::Antialiasing, true);
            paint(&p, QRect(QPoint(0, 0), track.size()), thumbInTrack, theme);
            p.end();
            m_cacheSize = track.size();
            m_cacheThumb = thumbInTrack;
            m_cacheDpr = dpr;
            m_cacheTrack = theme.scrollTrack;
            m_cacheThumbColor = theme.scrollThumb;
        }
        painter->drawImage(track.topLeft(), m_cache);
    }

private:
    static void paint(QPainter* painter, const QRect& track, const QRect& thumb, const Theme& theme)
    {
        painter->setPen(Qt::NoPen);
        painter->setBrush(theme.scrollTrack);
        painter->drawRoundedRect(QRectF(track), 4, 4);
        painter->setBrush(theme.scrollThumb);
        painter->drawRoundedRect(QRectF(thumb).adjusted(1, 1, -1, -1), 3, 3);
    }

    TimelineView* m_view;
    QImage m_cache;
    QSize m_cacheSize;
    QRect m_cacheThumb;
    qreal m_cacheDpr = 0;
    QColor m_cacheTrack, m_cacheThumbColor;
};

} // namespace streamscope
