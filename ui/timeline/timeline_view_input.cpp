// The timeline view's input and tooltips: mouse (select, pan, measure, drag the scroll thumb), wheel (zoom, scroll)
// and keyboard; the tooltip text of a span.
#include "timeline_view.h"

#include "duration_format.h"
#include "timeline_view_parts.h"

#include <QHelpEvent>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QToolTip>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>

namespace streamscope {

using namespace timeline_detail;

QString TimelineView::formatDuration(double ns)
{
    const DurationParts p = durationParts(ns, {DurationPrecision::Significant});
    return QString::number(p.value, 'f', p.decimals) + QLatin1Char(' ') + QString::fromUtf8(p.unit);
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
        text += QStringLiteral("<br><span style='color:%1; font-size:small'>").arg(Theme::current().muted.name())
            + shown + QStringLiteral("</span>");
    }
    text += QStringLiteral("<br>") + spanKindLabel(kind) + QStringLiteral(" on ") + where.toHtmlEscaped()
        + QStringLiteral("<br>start ") + formatTimePoint(double(tr.spans.start[i] - m_layout->origin()))
        + QStringLiteral(" \u00B7 duration ") + formatDuration(dur);
    if (tr.spans.bytesOf(i) > 0) {
        text += QStringLiteral("<br>") + formatBytes(tr.spans.bytesOf(i));
        if (dur > 0)
            text += QStringLiteral(" \u00B7 ") + QString::number(double(tr.spans.bytesOf(i)) / dur, 'f', 1)
                + QStringLiteral(" GB/s");
    }
    if (kind == SpanKind::Kernel && tr.spans.gridOf(i).count() > 0)
        text += QStringLiteral("<br>grid ") + formatDim3(tr.spans.gridOf(i)) + QStringLiteral(" \u00B7 block ")
            + formatDim3(tr.spans.blockOf(i));
    if (tr.spans.timingOf(i) != SpanTiming::Measured) // a start that is only a bound, or was moved
        text += QStringLiteral("<br><i>") + spanTimingText(tr, uint32_t(i)).toHtmlEscaped() + QStringLiteral("</i>");
    if (const QString error = spanEventErrorText(tr, uint32_t(i)); !error.isEmpty())
        text += QStringLiteral("<br>") + error.toHtmlEscaped();
    if (tr.spans.opOf(i) >= 0)
        text += QStringLiteral("<br><span style='color:%1'>thread %2, op %3, iteration %4</span>")
                    .arg(Theme::current().muted.name())
                    .arg(tr.spans.threadOf(i))
                    .arg(tr.spans.opOf(i))
                    .arg(tr.spans.iterationOf(i));
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
        m_scrollLanes = std::max(0.0, m_dragStartScroll - double(pos.y() - m_pressPos.y()) / shownLaneHeight());
        requestReplot();
    } else if (m_drag == Drag::ScrollThumb) {
        const QRect track = scrollTrack(), thumb = scrollThumb();
        if (!track.isEmpty() && track.height() > thumb.height()) {
            const double fraction = double(pos.y() - m_thumbGrab - track.top()) / (track.height() - thumb.height());
            m_scrollLanes = std::clamp(fraction, 0.0, 1.0) * std::max(0.0, m_layout->totalLanes() - visibleLanes());
            requestReplot();
        }
    } else if (m_drag == Drag::Measure && m_dragMoved) {
        const double a = m_measureAnchor, b = xOfPixel(pos.x());
        const double o = double(m_layout->origin());
        m_measured =
            std::make_pair(int64_t(std::llround(std::min(a, b) + o)), int64_t(std::llround(std::max(a, b) + o)));
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
        if (!toggleRankAt(pos))
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
    const double a = double(m_trace->spans.start[size_t(s)] - m_layout->origin());
    const double b = double(m_trace->spans.end[size_t(s)] - m_layout->origin());
    const double pad = std::max((b - a) * 0.15, 50.0);
    xAxis->setRange(a - pad, b + pad);
    clampXRange();
    selectSpan(s);
    requestReplot();
}

double TimelineView::wheelZoomFactor(QPoint angleDelta, QPoint pixelDelta)
{
    const double notches = angleDelta.y() != 0 ? angleDelta.y() / 120.0 : pixelDelta.y() / kWheelPixelsPerNotch;
    return std::pow(kWheelZoomPerNotch, -notches);
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
        if (d.y() != 0 || (d.x() == 0 && event->pixelDelta().y() != 0))
            zoomAround(wheelZoomFactor(d, event->pixelDelta()), event->position().x());
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
    case Qt::Key_Equal: zoomIn(); break;
    case Qt::Key_S:
    case Qt::Key_Minus: zoomOut(); break;
    case Qt::Key_A:
    case Qt::Key_Left: panLeft(); break;
    case Qt::Key_D:
    case Qt::Key_Right: panRight(); break;
    case Qt::Key_Up: scrollLanes(-1); break;
    case Qt::Key_Down: scrollLanes(1); break;
    case Qt::Key_PageUp: scrollLanes(-visibleLanes() * 0.9); break;
    case Qt::Key_PageDown: scrollLanes(visibleLanes() * 0.9); break;
    case Qt::Key_F:
        // Perfetto: F focuses the selection; without one, fit everything.
        if (m_selected >= 0 && m_trace) {
            const double a = double(m_trace->spans.start[size_t(m_selected)] - m_layout->origin());
            const double b = double(m_trace->spans.end[size_t(m_selected)] - m_layout->origin());
            const double pad = std::max((b - a) * 0.15, 50.0);
            xAxis->setRange(a - pad, b + pad);
            clampXRange();
            requestReplot();
        } else {
            fitToView();
        }
        break;
    case Qt::Key_0:
    case Qt::Key_Home: fitToView(); break;
    case Qt::Key_Escape:
        clearMeasuredRange();
        selectSpan(-1);
        break;
    default: QCustomPlot::keyPressEvent(event); return;
    }
    event->accept();
}

void TimelineView::keyReleaseEvent(QKeyEvent* event)
{
    QCustomPlot::keyReleaseEvent(event);
}

} // namespace streamscope
