// The timeline plottable: the trace and layout it draws, the rectangles of lanes and spans, hit tests, and the draw
// itself (spans raster, labels, uncertain starts, arrows). What to draw: timeline_draw_list.cpp; arrows:
// timeline_arrows.cpp; colours: timeline_palette.cpp.
#include "timeline_plottable.h"
#include "timeline_plottable_mapping.h"

#include <QFontMetricsF>
#include <QPainter>
#include <QPainterPath>
#include <QVarLengthArray>

#include <algorithm>
#include <cmath>
#include <limits>

namespace streamscope {

TimelinePlottable::TimelinePlottable(QCPAxis* keyAxis, QCPAxis* valueAxis) : QCPAbstractPlottable(keyAxis, valueAxis)
{
    setSelectable(QCP::stNone);
    setAntialiasedFill(false);
    setAntialiased(false);
}

TimelinePlottable::~TimelinePlottable() = default;

void TimelinePlottable::setTrace(const Trace* trace, const TimelineLayout* layout,
                                 std::shared_ptr<const FlowIndex> flows)
{
    m_trace = trace;
    m_layout = trace ? layout : nullptr;
    m_names.reset(trace);
    m_labelNames.clear();
    m_labelSprites.clear();
    m_labelFontPx = -1;
    m_anyUncertain = trace
        && std::find(trace->spans.timing.begin(), trace->spans.timing.end(), SpanTiming::Uncertain)
            != trace->spans.timing.end();
    if (!trace)
        m_flows.reset();
    else if (flows && flows->trace == trace)
        m_flows = std::move(flows);
    else
        m_flows = std::make_shared<const FlowIndex>(*trace);
}

void TimelinePlottable::setFlowKindVisible(FlowKind kind, bool visible)
{
    m_flowVisible[size_t(kind)] = visible;
}

TimelinePlottable::Mapping TimelinePlottable::mapping() const
{
    Mapping m;
    QCPAxis* ka = keyAxis();
    QCPAxis* va = valueAxis();
    if (!ka || !va || !m_layout)
        return m;
    m.rect = ka->axisRect()->rect();
    m.ax = ka->coordToPixel(0);
    m.bx = ka->coordToPixel(1) - m.ax;
    m.ay = va->coordToPixel(0);
    m.by = va->coordToPixel(1) - m.ay;
    m.origin = m_layout->origin();
    m.valid = m.bx > 0 && m.by > 0 && std::isfinite(m.bx) && std::isfinite(m.by) && m.rect.width() > 0;
    return m;
}

double TimelinePlottable::barInset() const
{
    const Mapping m = mapping();
    return std::clamp(std::round(m.by * 0.12), 1.0, 4.0);
}

QFont TimelinePlottable::labelFont() const
{
    const Mapping m = mapping();
    QFont f = parentPlot() ? parentPlot()->font() : QFont();
    const double barH = m.by - 2 * std::clamp(std::round(m.by * 0.12), 1.0, 4.0);
    f.setPixelSize(std::clamp(int(std::lround(barH * 0.72)), 7, std::max(7, m_maxLabelPx)));
    f.setBold(m_highContrast);
    return f;
}

void TimelinePlottable::setHighContrast(bool on)
{
    m_highContrast = on;
    m_labelFontPx = -1; // the rendered labels change weight
}

void TimelinePlottable::setTheme(const Theme& theme)
{
    m_theme = &theme;
    m_labelFontPx = -1; // the rendered labels may change colour
}

QRectF TimelinePlottable::laneRect(int row, int lane) const
{
    const Mapping m = mapping();
    if (!m_layout || row < 0 || row >= int(m_layout->rows().size()))
        return {};
    const TimelineRow& r = m_layout->rows()[size_t(row)];
    const double y = m.yOfLane(r.firstLane + lane);
    return QRectF(m.rect.left(), y, m.rect.width(), m.by);
}

QRectF TimelinePlottable::spanRect(uint32_t span) const
{
    const Mapping m = mapping();
    if (!m_trace || !m_layout || span >= m_trace->spanCount())
        return {};
    const int row = m_layout->rowOfTrack(m_trace->spans.track[span]);
    if (row < 0)
        return {};
    const double inset = std::clamp(std::round(m.by * 0.12), 1.0, 4.0);
    const int lane = m_layout->rows()[size_t(row)].firstLane + m_layout->laneOfSpan(span);
    const double y = std::round(m.yOfLane(lane) + inset);
    const double barH = std::max(1.0, std::round(m.by - 2 * inset));
    double x0 = std::floor(m.xOfTime(m_trace->spans.start[span]));
    double x1 = std::ceil(m.xOfTime(m_trace->spans.end[span]));
    // Keep coordinates sane for spans far outside the view.
    x0 = std::clamp(x0, double(m.rect.left()) - 1e6, double(m.rect.right()) + 1e6);
    x1 = std::clamp(x1, double(m.rect.left()) - 1e6, double(m.rect.right()) + 1e6);
    return QRectF(x0, y, std::max(1.0, x1 - x0), barH);
}

int TimelinePlottable::spanAt(QPointF pos, double tolerancePx) const
{
    const Mapping m = mapping();
    if (!m.valid || !m_trace || !m_trace->finalized() || !m.rect.contains(pos.toPoint()))
        return -1;
    const TimelineLayout& lay = *m_layout;
    const double laneY = m.laneOfY(pos.y());
    const int row = lay.rowAtLane(laneY);
    if (row < 0)
        return -1;
    const TimelineRow& r = lay.rows()[size_t(row)];
    if (r.firstGlobalLane < 0)
        return -1;
    const int laneInRow = std::clamp(int(std::floor(laneY)) - r.firstLane, 0, r.laneCount - 1);
    const Trace& tr = *m_trace;
    const double key = m.keyOfX(pos.x());
    const double tol = tolerancePx / m.bx;
    const int64_t ta = m.origin + int64_t(std::floor(key - tol));
    const int64_t tb = m.origin + int64_t(std::ceil(key + tol));
    int best = -1;
    double bestDist = std::numeric_limits<double>::infinity();
    const double x = pos.x();
    // A folded rank's header row draws its streams' lanes over each other: the nearest span of any of them.
    const int first = r.overlaidLanes > 0 ? 0 : laneInRow;
    const int last = r.overlaidLanes > 0 ? r.overlaidLanes - 1 : laneInRow;
    for (int l = first; l <= last && bestDist > 0; ++l) {
        const TimelineLane& lane = lay.lane(size_t(r.firstGlobalLane + l));
        // Candidates: spans ending after ta and starting before tb (a handful at most for a given pixel); beyond
        // 64 sub-pixel spans, the nearest of the first is as good.
        const size_t p = firstEndingAfter(tr, lane, 0, ta);
        const size_t e = firstStartingAtOrAfter(tr, lane, p, tb + 1);
        for (size_t k = p; k < e && k < p + 64; ++k) {
            const uint32_t s = lane.at(k);
            const double xs = std::floor(m.xOfTime(tr.spans.start[s]));
            const double xe = std::max(xs + 1, std::ceil(m.xOfTime(tr.spans.end[s])));
            const double d = x < xs ? xs - x : (x >= xe ? x - xe + 1 : 0);
            if (d < bestDist) {
                bestDist = d;
                best = int(s);
                if (d == 0)
                    break;
            }
        }
    }
    return bestDist <= tolerancePx ? best : -1;
}

QRect TimelinePlottable::uncertainStartRect(const QRect& bar)
{
    // About a third of the bar, never more than a few bar heights: a hint at the start, not a second colour.
    const int w = bar.width() < 8 ? bar.width()
                                  : std::clamp(int(std::lround(bar.width() * 0.35)), 4, std::max(8, 3 * bar.height()));
    return QRect(bar.left(), bar.top(), w, bar.height());
}

void TimelinePlottable::drawUncertainStart(QPainter* painter, const QRect& bar)
{
    const QRect r = uncertainStartRect(bar);
    if (r.width() <= 0 || r.height() <= 0)
        return;
    painter->fillRect(r, QColor(255, 255, 255, 96));
    // "/" hatching: lines x + y = c, clipped to the rectangle by hand (no clip state per bar).
    const int step = std::max(4, r.height() / 3);
    const int x0 = r.left(), x1 = r.right(), y0 = r.top(), y1 = r.bottom();
    QVarLengthArray<QLine, 64> lines;
    for (int c = x0 + y0 + step / 2; c <= x1 + y1; c += step) {
        const int xa = std::max(x0, c - y1), xb = std::min(x1, c - y0);
        if (xa <= xb)
            lines.append(QLine(xa, c - xa, xb, c - xb));
    }
    painter->setPen(QPen(QColor(0, 0, 0, 90), 1));
    painter->drawLines(lines.constData(), int(lines.size()));
    // The drawn start is a bound: a dashed edge there.
    painter->setPen(QPen(QColor(0, 0, 0, 110), 1, Qt::DotLine));
    painter->drawLine(QPoint(x0, y0), QPoint(x0, y1));
}

void TimelinePlottable::drawLabels(QPainter* painter, const TimelineDrawList& list) const
{
    if (!m_labels || list.labels.empty())
        return;
    const QFont font = labelFont();
    painter->setFont(font);
    const QFontMetricsF fm(font);
    const QPaintEngine* engine = painter->paintEngine();
    // On raster devices each distinct label (name, characters shown, text colour) is rendered once into a small
    // image and then blitted: a label costs one image copy instead of shaping and rasterizing glyphs every frame.
    const bool sprites =
        engine && engine->type() == QPaintEngine::Raster && painter->transform().type() <= QTransform::TxTranslate;
    const qreal dpr = painter->device() ? painter->device()->devicePixelRatioF() : 1.0;
    if (m_labelFontPx != font.pixelSize() || m_labelNames.size() != m_trace->strings.size() || m_spriteDpr != dpr
        || m_labelSprites.size() > 8192) {
        m_labelNames.clear();
        m_labelNames.resize(m_trace->strings.size());
        m_labelSprites.clear();
        m_labelFontPx = font.pixelSize();
        m_spriteDpr = dpr;
    }
    const QString ellipsis(QChar(0x2026));
    const double ellipsisWidth = fm.horizontalAdvance(ellipsis);
    const double pad = std::max(2.0, fm.averageCharWidth() * 0.5);
    // A name that does not fit with the usual padding gets the bar's whole width but a pixel each side, whole or
    // shortened to its first characters and an ellipsis: a 23 px bar still says "tr…" (its tooltip says the rest).
    const double narrowPad = 1;
    const double minWidth = ellipsisWidth + 2 * narrowPad + 1;
    const double ascent = fm.ascent(), height = fm.height();
    int lastKind = -1;
    for (const auto& label : list.labels) {
        const uint32_t s = label.span;
        const uint32_t nameIndex = m_trace->spans.name[s];
        // The visible part of the bar, so a long span's name stays on screen.
        const QRect clip = m_lastClip.intersected(label.rect);
        if (clip.width() < minWidth)
            continue;
        auto& name = m_labelNames[nameIndex];
        if (!name) {
            name = std::make_unique<LabelName>();
            name->text = m_names.shortNameOfString(nameIndex);
            name->prefix.reserve(size_t(name->text.size()) + 1);
            double x = 0;
            name->prefix.push_back(0);
            for (QChar c : std::as_const(name->text)) {
                x += fm.horizontalAdvance(c);
                name->prefix.push_back(float(x));
            }
            name->width = float(fm.horizontalAdvance(name->text));
        }
        double labelPad = pad;
        double avail = clip.width() - 2 * labelPad;
        if (name->width > avail) {
            labelPad = narrowPad;
            avail = clip.width() - 2 * labelPad;
        }
        qsizetype chars = name->text.size();
        bool elided = false;
        if (name->width > avail) {
            // Characters that fit before an ellipsis (per-character advances: close enough to decide where to cut).
            chars = qsizetype(std::upper_bound(name->prefix.begin(), name->prefix.end(), float(avail - ellipsisWidth))
                              - name->prefix.begin())
                - 1;
            if (chars > 0 && name->text.at(chars - 1).isHighSurrogate())
                --chars;
            if (chars < 1)
                continue;
            elided = true;
        }
        const SpanKind kind = m_trace->spans.kind[s];
        const QColor colour = m_theme->spanKindText(kind);
        const double top = clip.top() + (clip.height() - height) / 2;
        if (sprites) {
            const uint64_t key =
                (uint64_t(nameIndex) << 32) | (uint64_t(chars) << 2) | (elided ? 2 : 0) | (colour == Qt::white ? 1 : 0);
            auto it = m_labelSprites.find(key);
            if (it == m_labelSprites.end()) {
                const QString text = elided ? name->text.left(chars) + ellipsis : name->text;
                const QSize size(int(std::ceil(fm.horizontalAdvance(text))) + 2, int(std::ceil(height)) + 1);
                QImage image(size * dpr, QImage::Format_ARGB32_Premultiplied);
                image.setDevicePixelRatio(dpr);
                image.fill(Qt::transparent);
                QPainter p(&image);
                p.setFont(font);
                p.setPen(colour);
                p.drawText(QPointF(0, ascent), text);
                p.end();
                it = m_labelSprites.emplace(key, std::move(image)).first;
            }
            painter->drawImage(QPointF(clip.left() + labelPad, std::round(top)), it->second);
        } else {
            if (int(kind) != lastKind) {
                painter->setPen(colour);
                lastKind = int(kind);
            }
            const QString text = elided ? name->text.left(chars) + ellipsis : name->text;
            painter->drawText(QPointF(clip.left() + labelPad, top + ascent), text);
        }
    }
}

void TimelinePlottable::draw(QCPPainter* painter)
{
    if (!m_trace || !m_layout)
        return;
    const Mapping m = mapping();
    if (!m.valid)
        return;
    painter->setRenderHint(QPainter::Antialiasing, false);
    m_lastClip = m.rect;

    // Row shading: alternate tracks and mark device headers, so the eye can follow a row across the chart.
    if (m_rowShading) {
        const double laneTop = m.laneOfY(m.rect.top()), laneBottom = m.laneOfY(m.rect.bottom() + 1);
        const auto& rows = m_layout->rows();
        painter->setPen(Qt::NoPen);
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
            const int y0 = int(std::lround(m.yOfLane(row.firstLane)));
            const int y1 = int(std::lround(m.yOfLane(row.firstLane + row.laneCount)));
            if (header) {
                painter->fillRect(QRect(m.rect.left(), y0, m.rect.width(), y1 - y0), m_theme->rowHeader);
                painter->fillRect(QRect(m.rect.left(), y0, m.rect.width(), 1), m_theme->rowHeaderRule);
            } else if (shade % 2 == 0) {
                painter->fillRect(QRect(m.rect.left(), y0, m.rect.width(), y1 - y0), m_theme->rowAlternate);
            }
        }
    }

    computeDrawList(m_drawList);
    // On raster devices (the screen, PNG) bars are filled into one row of pixels per lane and that row is copied down
    // the bar: no per-rectangle cost in the paint engine. Vector devices (SVG, PDF) get one rectangle per run, batched
    // by colour.
    const QPaintEngine* engine = painter->paintEngine();
    if (engine && engine->type() == QPaintEngine::Raster && painter->transform().type() <= QTransform::TxTranslate
        && !m_drawList.laneTop.empty()) {
        drawSpansRaster(painter, m_drawList);
    } else {
        painter->setPen(Qt::NoPen);
        for (int k = 0; k < kSpanKindCount; ++k) {
            const std::vector<QRect> rects = m_drawList.rectsOfKind(SpanKind(k));
            if (rects.empty())
                continue;
            painter->setBrush(m_theme->spanKind(SpanKind(k)));
            painter->drawRects(rects.data(), int(rects.size()));
            const std::vector<QRect> dividers = m_drawList.dividersOfKind(SpanKind(k));
            if (dividers.empty())
                continue;
            painter->setBrush(spanDividerColor(SpanKind(k), *m_theme));
            painter->drawRects(dividers.data(), int(dividers.size()));
        }
    }
    painter->setBrush(Qt::NoBrush);
    if (m_highContrast) {
        // Outlines keep back-to-back bars of one kind apart and light colours distinct from the background.
        std::vector<QRect> outlines;
        for (const TimelineDrawList::Run& run : m_drawList.runs)
            if (run.x1 - run.x0 >= 4)
                outlines.push_back(m_drawList.rectOf(run).adjusted(0, 0, -1, -1));
        painter->setPen(QPen(QColor(0, 0, 0, 170), 1));
        painter->drawRects(outlines.data(), int(outlines.size()));
    }
    if (!m_drawList.uncertainRuns.empty()) {
        painter->save();
        for (uint32_t k : m_drawList.uncertainRuns)
            drawUncertainStart(painter, m_drawList.rectOf(m_drawList.runs[k]));
        painter->restore();
    }
    drawLabels(painter, m_drawList);

    if (!m_drawList.arrows.empty()) {
        painter->setRenderHint(QPainter::Antialiasing, true);
        const double head = std::clamp(m.by * 0.35, 4.0, m_highContrast ? 14.0 : 9.0);
        // Many arrows in view (a big trace zoomed in): every arrow a pixel wide, which the raster engine draws
        // with its line drawer; wider pens are outlined and filled, about 0.1 ms a curve. A few arrows (a lesson)
        // draw dependencies wider.
        const bool many = m_drawList.arrows.size() > kManyArrows;
        const double weight = m_highContrast ? 2.0 : 1.0;
        for (const auto& a : m_drawList.arrows) {
            QColor c = m_theme->flowKind(a.kind);
            const bool launch = a.kind == FlowKind::Launch || a.kind == FlowKind::Call;
            c.setAlpha(launch ? 150 : many ? 255 : 230); // launches are many and obvious; dependencies the story
            painter->setPen(QPen(c, (launch || many ? 1.0 : 1.6) * weight, flowKindPenStyle(a.kind)));
            drawArrow(painter, a.from, a.to, head, flowIsCurved(a.kind));
        }
        painter->setRenderHint(QPainter::Antialiasing, false);
    }
    m_lastStats = m_drawList.stats;
}

void TimelinePlottable::drawSpansRaster(QPainter* painter, const TimelineDrawList& list) const
{
    const int width = list.canvasRight - list.canvasLeft;
    const int rows = int(list.laneTop.size());
    if (width <= 0 || rows <= 0)
        return;
    if (m_canvas.width() < width || m_canvas.height() < rows)
        m_canvas = QImage(std::max(width, m_canvas.width()), std::max(rows, m_canvas.height()),
                          QImage::Format_ARGB32_Premultiplied);
    uchar* bits = m_canvas.bits();
    const qsizetype stride = m_canvas.bytesPerLine();
    for (int r = 0; r < rows; ++r)
        std::fill_n(reinterpret_cast<QRgb*>(bits + r * stride), width, QRgb(0));
    std::array<QRgb, kSpanKindCount> colours, dividers;
    for (int k = 0; k < kSpanKindCount; ++k) {
        colours[size_t(k)] = qPremultiply(m_theme->spanKind(SpanKind(k)).rgba());
        dividers[size_t(k)] = qPremultiply(spanDividerColor(SpanKind(k), *m_theme).rgba());
    }
    for (const TimelineDrawList::Run& run : list.runs) {
        const int x0 = std::max(run.x0, list.canvasLeft) - list.canvasLeft;
        const int x1 = std::min(run.x1, list.canvasRight) - list.canvasLeft;
        auto* line = reinterpret_cast<QRgb*>(bits + run.lane * stride);
        if (x1 > x0) {
            std::fill(line + x0, line + x1, colours[size_t(run.kind)]);
            if (run.divider && run.x0 >= list.canvasLeft)
                line[x0] = dividers[size_t(run.kind)];
        }
    }
    const QImage& canvas = m_canvas;
    for (int r = 0; r < rows; ++r)
        for (int dy = 0; dy < list.barHeight; ++dy)
            painter->drawImage(QPoint(list.canvasLeft, list.laneTop[size_t(r)] + dy), canvas, QRect(0, r, width, 1));
}

void TimelinePlottable::drawLegendIcon(QCPPainter* painter, const QRectF& rect) const
{
    painter->fillRect(rect, m_theme->spanKind(SpanKind::Kernel));
}

double TimelinePlottable::selectTest(const QPointF&, bool, QVariant*) const
{
    return -1; // the view hit-tests spans itself (spanAt), with binary search
}

QCPRange TimelinePlottable::getKeyRange(bool& foundRange, QCP::SignDomain) const
{
    foundRange = m_layout && m_trace && m_trace->spanCount() > 0;
    return foundRange ? QCPRange(0, double(m_layout->endTime() - m_layout->origin())) : QCPRange();
}

QCPRange TimelinePlottable::getValueRange(bool& foundRange, QCP::SignDomain, const QCPRange&) const
{
    foundRange = m_layout && m_layout->totalLanes() > 0;
    return foundRange ? QCPRange(0, m_layout->totalLanes()) : QCPRange();
}

} // namespace streamscope