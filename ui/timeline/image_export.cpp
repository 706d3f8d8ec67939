#include "image_export.h"

#include "analysis.h"
#include "concurrency_plot.h"
#include "resources.h"
#include "scenario_json.h"
#include "text_file.h"
#include "timeline_plottable.h"
#include "timeline_view.h"

#include <QBuffer>
#include <QFileInfo>
#include <QFontInfo>
#include <QImage>
#include <QImageWriter>
#include <QPageSize>
#include <QPdfWriter>
#include <QRegularExpression>
#include <QSvgGenerator>

#include <algorithm>
#include <cmath>
#include <memory>

namespace streamscope {

std::optional<ImageFormat> imageFormatForPath(const QString& path)
{
    const QString ext = QFileInfo(path).suffix().toLower();
    if (ext == QLatin1String("png"))
        return ImageFormat::Png;
    if (ext == QLatin1String("svg"))
        return ImageFormat::Svg;
    if (ext == QLatin1String("pdf"))
        return ImageFormat::Pdf;
    return std::nullopt;
}

QByteArray svgWithGenericFontFamilies(const QByteArray& svg)
{
    static const QRegularExpression family(QStringLiteral("font-family=\"([^\"]*)\""));
    const QString text = QString::fromUtf8(svg);
    QString out;
    out.reserve(text.size());
    qsizetype from = 0;
    for (auto it = family.globalMatch(text); it.hasNext();) {
        const QRegularExpressionMatch m = it.next();
        out += QStringView(text).mid(from, m.capturedStart() - from);
        const QString name = m.captured(1).trimmed();
        const QString key = name.toLower().remove(QLatin1Char(' ')).remove(QLatin1Char('-'));
        QString generic;
        if (key.isEmpty() || key == QLatin1String("sans") || key == QLatin1String("sansserif")
            || key == QLatin1String("helvetica") || key == QLatin1String("arial"))
            generic = QStringLiteral("sans-serif");
        else if (key == QLatin1String("serif") || key == QLatin1String("times"))
            generic = QStringLiteral("serif");
        else if (key == QLatin1String("monospace") || key == QLatin1String("mono") || key == QLatin1String("courier"))
            generic = QStringLiteral("monospace");
        else
            generic = QStringLiteral("'%1', sans-serif").arg(QString(name).remove(QLatin1Char('\'')));
        out += QStringLiteral("font-family=\"%1\"").arg(generic);
        from = m.capturedEnd();
    }
    out += QStringView(text).mid(from);
    return out.toUtf8();
}

// A lesson variant's title ("One stream" for 01's `one-stream`), or the id where the lesson or variant is unknown.
QString variantTitle(const Trace& trace)
{
    const std::string& id = trace.info.variant;
    if (auto preset = findPreset(trace.info.scenarioId); preset.ok())
        if (auto loaded = loadScenarioFile(preset->path); loaded.ok())
            for (const Variant& v : loaded->scenario.variants)
                if (v.id == id && !v.title.empty())
                    return QString::fromStdString(v.title);
    return QString::fromStdString(id);
}

QString defaultImageTitle(const Trace& trace, const QString& tracePath)
{
    QString title = QString::fromStdString(trace.info.scenarioTitle);
    if (!title.isEmpty() && !trace.info.variant.empty())
        title += QStringLiteral(" \u2014 ") + variantTitle(trace);
    if (title.isEmpty() && !tracePath.isEmpty())
        title = QFileInfo(tracePath).fileName();
    if (title.isEmpty())
        title = QString::fromStdString(trace.info.scenarioId);
    return title;
}

// Sets a view up for an image: every row fits the height (growing to fill it, or at a comfortable height with the
// image cropped to them), text sized for the image, a margin all round, a title, no scroll bar, the light theme
// whatever the window's (images go on slides and into papers).
struct TimelineImageRenderer {
    static constexpr int kTextPx = 13; // the text size of the 1280x720 design

    // 1280x720 is the size text is designed for; bigger images (slides at 1920x1080) get bigger text.
    static double fontScale(const ImageOptions& o)
    {
        return o.textScale > 0 ? std::clamp(o.textScale, 0.5, 8.0)
                               : std::clamp(std::min(o.size.width() / 1280.0, o.size.height() / 720.0), 0.75, 4.0);
    }

    // The concurrency strip under the time axis: about six lines of text high, at most a third of the image.
    static int stripHeight(const ImageOptions& o)
    {
        if (!o.concurrency)
            return 0;
        const int px = int(std::lround(kTextPx * fontScale(o)));
        return std::clamp(6 * px, 48, std::max(48, o.size.height() / 3));
    }

    // The part of the image the timeline gets (all of it, less the concurrency strip).
    static QSize timelineArea(const ImageOptions& o)
    {
        return QSize(o.size.width(), std::max(16, o.size.height() - stripHeight(o)));
    }

    static void prepare(TimelineView& view, const ImageOptions& o)
    {
        const QSize size = timelineArea(o);
        view.setFixedTheme(&Theme::light());
        view.m_fontScale = fontScale(o);
        view.m_fitRows = true;
        view.m_fillRows = !o.crop;
        QFont font = view.font(); // the same text size on every platform and screen
        font.setPixelSize(kTextPx);
        view.setFont(font);
        view.setViewport(QRect(QPoint(0, 0), size));
        view.setTitle(o.title);
        view.setLegendVisible(o.legend);
        view.applyFonts();
        view.updateMargins();
        const int px = int(std::lround(QFontInfo(view.font()).pixelSize() * view.m_fontScale));
        // A margin all round: nothing touches the edge of a slide.
        view.plotLayout()->setMargins(QMargins(px, px / 2, px, px / 2));
        if (o.crop) {
            // Rows on top at a comfortable height, the time axis right under them, spare height in a spacer that
            // cropToContent takes off.
            const int lanes = std::max(1, view.m_layout->totalLanes());
            const int content = int(std::ceil(lanes * px * TimelineView::kImageMaxLaneHeight));
            view.axisRect()->setMaximumSize(QWIDGETSIZE_MAX, content);
            auto* spacer = new QCPLayoutElement(&view);
            const int row = view.plotLayout()->rowCount();
            view.plotLayout()->addElement(row, 0, spacer);
            view.plotLayout()->setRowStretchFactor(row, 0.001);
        }
        if (o.transparent) {
            view.setBackground(Qt::NoBrush);
            view.axisRect()->setBackground(Qt::NoBrush);
        }
    }

    // Crop: lays the image out at `size` and returns the size without the spare height under the rows.
    static QSize cropToContent(TimelineView& view, QSize size)
    {
        QImage probe(size, QImage::Format_ARGB32_Premultiplied);
        {
            QCPPainter painter(&probe);
            view.toPainter(&painter, size.width(), size.height());
        }
        QCPLayoutGrid* grid = view.plotLayout();
        QCPLayoutElement* spacer = grid->element(grid->rowCount() - 1, 0);
        const int spare = spacer ? spacer->outerRect().height() : 0;
        return QSize(size.width(), std::max(16, size.height() - spare));
    }

    // The options the view does not carry: the time range, the arrows, the critical path.
    static void applyContent(TimelineView& view, const ImageOptions& o)
    {
        if (o.range)
            view.setVisibleTimeRange(o.range->first, o.range->second);
        if (o.arrows)
            for (int k = 0; k < kFlowKindCount; ++k)
                view.setFlowKindVisible(FlowKind(k), (*o.arrows)[size_t(k)]);
        if (o.criticalPath && view.trace()) {
            std::vector<uint32_t> spans;
            for (const auto& segment : criticalPath(*view.trace()).segments)
                spans.push_back(segment.span);
            const auto [a, b] = view.visibleTimeRange();
            view.setHighlightedSpans(std::move(spans));
            view.setVisibleTimeRange(a, b);
        }
    }

    // The legend lists the arrow kinds the image shows (launch arrows, say, are left out at a wide view): draw once
    // to learn which.
    static void fitLegendToDrawing(TimelineView& view, QSize size)
    {
        QImage probe(size, QImage::Format_ARGB32_Premultiplied);
        {
            QCPPainter painter(&probe);
            view.toPainter(&painter, size.width(), size.height());
        }
        const auto drawn = view.m_plottable->lastDrawStats().flowsByKind;
        view.rebuildLegend(&drawn);
        view.updateMargins();
    }

    static bool validate(const QString& path, const ImageOptions& o, QString* error)
    {
        QString message;
        const QSize size = o.size;
        if (!imageFormatForPath(path))
            message = path + QStringLiteral(": unknown image format (use .png, .svg or .pdf)");
        else if (size.width() < 16 || size.height() < 16 || size.width() > 32768 || size.height() > 32768)
            message = QStringLiteral("%1: image size %2x%3 is out of range (16 to 32768)")
                          .arg(path)
                          .arg(size.width())
                          .arg(size.height());
        else if (!(o.scale >= 0.25 && o.scale <= 8) || size.width() * o.scale > 32768
                 || size.height() * o.scale > 32768)
            message = QStringLiteral("%1: scale %2 is out of range (0.25 to 8, at most 32768 pixels a side)")
                          .arg(path)
                          .arg(o.scale);
        else if (o.range && !(o.range->second > o.range->first))
            message = QStringLiteral("%1: the time range is empty").arg(path);
        if (error && !message.isEmpty())
            *error = message;
        return message.isEmpty();
    }

    // The concurrency strip of the window (over time, operations running), for the image's width and the range the
    // view shows; aligned under the timeline's plot area when drawn (drawAll).
    static std::unique_ptr<ConcurrencyPlot> makeStrip(const TimelineView& view, QSize size, const ImageOptions& o)
    {
        auto strip = std::make_unique<ConcurrencyPlot>();
        strip->resize(size);
        strip->setTrace(view.trace());
        const int px = int(std::lround(kTextPx * view.m_fontScale));
        strip->prepareForImage(Theme::light(), px, stripMargins(view, size.width()));
        const auto [from, to] = view.visibleTimeRange();
        strip->setVisibleTimeRange(from, to);
        if (o.transparent) {
            strip->setBackground(Qt::NoBrush);
            strip->axisRect()->setBackground(Qt::NoBrush);
        }
        return strip;
    }

    // The strip's plot area under the timeline's: the same left and right edges, a little room above and below.
    static QMargins stripMargins(const TimelineView& view, int width)
    {
        const QRect plot = view.timeAxisRect();
        const int px = int(std::lround(kTextPx * view.m_fontScale));
        return QMargins(plot.left(), px / 2, std::max(0, width - plot.right() - 1), px / 2);
    }

    // The timeline in the top `timelineHeight` pixels of a `width`-wide image, the strip (if any) under it.
    static void drawAll(QCPPainter* painter, TimelineView& view, ConcurrencyPlot* strip, int width, int timelineHeight,
                        int stripHeight)
    {
        view.toPainter(painter, width, timelineHeight);
        if (!strip)
            return;
        strip->axisRect()->setMargins(stripMargins(view, width)); // the timeline's layout as just drawn
        painter->save();
        painter->translate(0, timelineHeight);
        strip->toPainter(painter, width, stripHeight);
        painter->restore();
    }

    static bool render(TimelineView& view, ConcurrencyPlot* strip, const QString& path, QSize size, int timelineHeight,
                       const ImageOptions& o, QString* error)
    {
        auto fail = [error](const QString& message) {
            if (error)
                *error = message;
            return false;
        };
        const auto format = imageFormatForPath(path);
        const int stripHeight = size.height() - timelineHeight;
        auto draw = [&](QCPPainter* painter) {
            drawAll(painter, view, strip, size.width(), timelineHeight, stripHeight);
        };

        // Drawn into memory, then saved as every StreamScope file is (saveTextFileAtomic: renamed over the old one).
        QBuffer file;
        file.open(QIODevice::WriteOnly);
        const int w = size.width(), h = size.height();
        switch (*format) {
        case ImageFormat::Png: {
            // `scale` device pixels per pixel: the same layout, sharper (and its dots per inch say so).
            const QSize pixels(int(std::lround(w * o.scale)), int(std::lround(h * o.scale)));
            QImage image(pixels, QImage::Format_ARGB32_Premultiplied);
            image.fill(o.transparent ? QColor(Qt::transparent) : view.theme().plotBackground);
            const int dotsPerMeter = int(std::lround(96.0 * o.scale / 0.0254));
            image.setDotsPerMeterX(dotsPerMeter);
            image.setDotsPerMeterY(dotsPerMeter);
            {
                QCPPainter painter(&image);
                painter.scale(o.scale, o.scale);
                draw(&painter);
            }
            QImageWriter writer(&file, "png");
            if (!writer.write(image))
                return fail(path + QStringLiteral(": ") + writer.errorString());
            break;
        }
        case ImageFormat::Svg: {
            QSvgGenerator svg;
            svg.setOutputDevice(&file);
            svg.setSize(size);
            svg.setResolution(96); // the CSS pixel: browsers and slide tools show `size` at 100 %
            svg.setViewBox(QRect(0, 0, w, h));
            svg.setTitle(view.title());
            svg.setDescription(QStringLiteral("StreamScope timeline"));
            QCPPainter painter;
            if (!painter.begin(&svg))
                return fail(path + QStringLiteral(": cannot start the SVG painter"));
            painter.setMode(QCPPainter::pmVectorized);
            painter.setMode(QCPPainter::pmNoCaching);
            draw(&painter);
            painter.end();
            const QByteArray generic = svgWithGenericFontFamilies(file.data());
            file.close();
            file.setData(generic);
            break;
        }
        case ImageFormat::Pdf: {
            QPdfWriter pdf(&file);
            pdf.setResolution(72); // one unit = one point, so `size` is the page size in points
            pdf.setPageSize(QPageSize(QSizeF(w, h), QPageSize::Point, QString(), QPageSize::ExactMatch));
            pdf.setPageMargins(QMarginsF(0, 0, 0, 0));
            pdf.setTitle(view.title());
            pdf.setCreator(QStringLiteral("StreamScope"));
            QCPPainter painter;
            if (!painter.begin(&pdf))
                return fail(path + QStringLiteral(": cannot start the PDF painter"));
            painter.setMode(QCPPainter::pmVectorized);
            painter.setMode(QCPPainter::pmNoCaching);
            draw(&painter);
            painter.end();
            break;
        }
        }
        file.close();
        const QByteArray& bytes = file.data();
        if (Status saved = saveTextFileAtomic(path.toStdString(), std::string(bytes.constData(), size_t(bytes.size())));
            !saved)
            return fail(QString::fromStdString(saved.error().toString()));
        return true;
    }
};

namespace {

// Legend, crop and render, once the view shows what the image is to show.
bool finish(TimelineView& view, const QString& path, const ImageOptions& o, QString* error)
{
    using R = TimelineImageRenderer;
    QSize area = R::timelineArea(o);
    if (o.crop) {
        area = R::cropToContent(view, area);
        view.resize(area);
        view.setViewport(QRect(QPoint(0, 0), area));
    }
    R::fitLegendToDrawing(view, area);
    const int stripHeight = R::stripHeight(o);
    std::unique_ptr<ConcurrencyPlot> strip;
    if (stripHeight > 0)
        strip = R::makeStrip(view, QSize(area.width(), stripHeight), o);
    return R::render(view, strip.get(), path, QSize(area.width(), area.height() + stripHeight), area.height(), o,
                     error);
}

} // namespace

bool exportTimelineImage(const Trace& trace, const QString& path, const ImageOptions& o, QString* error)
{
    if (!TimelineImageRenderer::validate(path, o, error))
        return false;
    TimelineView view;
    view.resize(TimelineImageRenderer::timelineArea(o));
    // The caller keeps the trace alive for the duration of the call: share it without owning it.
    view.setTrace(std::shared_ptr<const Trace>(&trace, [](const Trace*) {}));
    TimelineImageRenderer::prepare(view, o);
    view.fitToView();
    TimelineImageRenderer::applyContent(view, o);
    return finish(view, path, o, error);
}

bool exportTimelineImage(const TimelineView& source, const QString& path, const ImageOptions& options, QString* error)
{
    if (!TimelineImageRenderer::validate(path, options, error))
        return false;
    if (!source.trace()) {
        if (error)
            *error = QStringLiteral("no trace to export");
        return false;
    }
    // What the view shows, unless the options say otherwise: its time range, arrow kinds, measured range, selection.
    ImageOptions o = options;
    if (!o.range)
        o.range = source.visibleTimeRange();
    if (!o.arrows) {
        std::array<bool, kFlowKindCount> shown{};
        for (int k = 0; k < kFlowKindCount; ++k)
            shown[size_t(k)] = source.isFlowKindVisible(FlowKind(k));
        o.arrows = shown;
    }
    TimelineView view;
    view.resize(TimelineImageRenderer::timelineArea(o));
    view.setTrace(source.trace());
    TimelineImageRenderer::prepare(view, o);
    if (source.measuredRange())
        view.setMeasuredRange(source.measuredRange()->first, source.measuredRange()->second);
    if (source.selectedSpan() >= 0)
        view.selectSpan(source.selectedSpan()); // it scrolls: the range is set after it
    TimelineImageRenderer::applyContent(view, o);
    return finish(view, path, o, error);
}

bool exportTimelineImage(const Trace& trace, const QString& path, QSize size, const QString& title, QString* error)
{
    ImageOptions o;
    o.size = size;
    o.title = title;
    return exportTimelineImage(trace, path, o, error);
}

bool exportTimelineImage(const TimelineView& view, const QString& path, QSize size, const QString& title,
                         QString* error)
{
    ImageOptions o;
    o.size = size;
    o.title = title;
    return exportTimelineImage(view, path, o, error);
}

std::pair<double, double> wholeTraceRange(const Trace& trace)
{
    if (trace.spanCount() == 0)
        return {0.0, 1.0};
    const int64_t a = *std::min_element(trace.spans.start.begin(), trace.spans.start.end());
    const int64_t b = *std::max_element(trace.spans.end.begin(), trace.spans.end.end());
    return {double(a), double(std::max(b, a + 1))};
}

std::optional<std::pair<double, double>> parseImageTimeRange(const QString& text, const Trace& trace, QString* error)
{
    auto fail = [&](const QString& why) -> std::optional<std::pair<double, double>> {
        if (error)
            *error = QStringLiteral("time range \"%1\": %2").arg(text, why);
        return std::nullopt;
    };
    const QStringList parts = text.split(QStringLiteral(".."));
    if (parts.size() != 2)
        return fail(QStringLiteral("expected FROM..TO, such as 0.2ms..1.5ms"));
    static const QRegularExpression value(
        QStringLiteral("^\\s*([0-9]*\\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\\s*(ns|us|µs|ms|s)?\\s*$"));
    double ns[2] = {0, 0};
    for (int k = 0; k < 2; ++k) {
        const QRegularExpressionMatch m = value.match(parts[k]);
        if (!m.hasMatch())
            return fail(QStringLiteral("\"%1\" is not a time (a number and ns, us, ms or s)").arg(parts[k].trimmed()));
        const QString unit = m.captured(2);
        const double factor = unit == QLatin1String("ns")                      ? 1.0
            : unit == QLatin1String("us") || unit == QStringLiteral("\u00b5s") ? 1e3
            : unit == QLatin1String("s")                                       ? 1e9
                                                                               : 1e6; // ms, or none
        ns[k] = m.captured(1).toDouble() * factor;
    }
    if (!(ns[1] > ns[0]))
        return fail(QStringLiteral("its end must come after its start"));
    const double origin = trace.spanCount() > 0 ? wholeTraceRange(trace).first : 0.0;
    return std::make_pair(origin + ns[0], origin + ns[1]);
}

std::array<bool, kFlowKindCount> defaultArrowKinds()
{
    std::array<bool, kFlowKindCount> on{};
    on.fill(true);
    on[size_t(FlowKind::Sync)] = false;
    return on;
}

std::optional<std::array<bool, kFlowKindCount>> parseImageArrows(const QString& text, QString* error)
{
    std::array<bool, kFlowKindCount> on{};
    const QString t = text.trimmed().toLower();
    if (t == QLatin1String("all")) {
        on.fill(true);
        return on;
    }
    if (t == QLatin1String("none") || t.isEmpty())
        return on;
    for (const QString& name : t.split(QLatin1Char(','), Qt::SkipEmptyParts)) {
        const std::optional<FlowKind> kind = flowKindFromString(name.trimmed().toStdString());
        if (!kind) {
            if (error)
                *error = QStringLiteral("unknown arrow kind \"%1\" (all, none, or launch, event, sync, implicit, call, "
                                        "collective separated by commas)")
                             .arg(name.trimmed());
            return std::nullopt;
        }
        on[size_t(*kind)] = true;
    }
    return on;
}

} // namespace streamscope
