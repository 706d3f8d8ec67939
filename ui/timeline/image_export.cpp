#include "image_export.h"

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

QString defaultImageTitle(const Trace& trace, const QString& tracePath)
{
    QString title = QString::fromStdString(trace.info.scenarioTitle);
    if (!title.isEmpty() && !trace.info.variant.empty())
        title += QStringLiteral(" \u2014 ") + QString::fromStdString(trace.info.variant);
    if (title.isEmpty() && !tracePath.isEmpty())
        title = QFileInfo(tracePath).fileName();
    if (title.isEmpty())
        title = QString::fromStdString(trace.info.scenarioId);
    return title;
}

// Sets a view up for an image: every row fits the height, text sized for the image, a title, no scroll bar, the
// light theme whatever the window's (images go on slides and into papers).
struct TimelineImageRenderer {
    static void prepare(TimelineView& view, QSize size, const QString& title)
    {
        view.setFixedTheme(&Theme::light());
        // 1280x720 is the size text is designed for; bigger images (slides at 1920x1080) get bigger text.
        view.m_fontScale = std::clamp(std::min(size.width() / 1280.0, size.height() / 720.0), 0.75, 4.0);
        view.m_fitRows = true;
        QFont font = view.font(); // the same text size on every platform and screen
        font.setPixelSize(13);
        view.setFont(font);
        view.setViewport(QRect(QPoint(0, 0), size));
        view.setTitle(title);
        view.applyFonts();
        view.updateMargins();
        // Rows on top, the time axis right under them: spare height stays blank below instead of an empty chart.
        const int px = int(std::lround(QFontInfo(view.font()).pixelSize() * view.m_fontScale));
        const int lanes = std::max(1, view.m_layout.totalLanes());
        const int content = int(std::ceil(lanes * px * TimelineView::kImageMaxLaneHeight));
        view.axisRect()->setMaximumSize(QWIDGETSIZE_MAX, content);
        auto* spacer = new QCPLayoutElement(&view);
        const int row = view.plotLayout()->rowCount();
        view.plotLayout()->addElement(row, 0, spacer);
        view.plotLayout()->setRowStretchFactor(row, 0.001);
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

    static bool validate(const QString& path, QSize size, QString* error)
    {
        QString message;
        if (!imageFormatForPath(path))
            message = path + QStringLiteral(": unknown image format (use .png, .svg or .pdf)");
        else if (size.width() < 16 || size.height() < 16 || size.width() > 32768 || size.height() > 32768)
            message = QStringLiteral("%1: image size %2x%3 is out of range (16 to 32768)")
                          .arg(path)
                          .arg(size.width())
                          .arg(size.height());
        if (error && !message.isEmpty())
            *error = message;
        return message.isEmpty();
    }

    static bool render(TimelineView& view, const QString& path, QSize size, QString* error)
    {
        auto fail = [error](const QString& message) {
            if (error)
                *error = message;
            return false;
        };
        const auto format = imageFormatForPath(path);

        // Drawn into memory, then saved as every StreamScope file is (saveTextFileAtomic: renamed over the old one).
        QBuffer file;
        file.open(QIODevice::WriteOnly);
        const int w = size.width(), h = size.height();
        switch (*format) {
        case ImageFormat::Png: {
            QImage image(size, QImage::Format_ARGB32_Premultiplied);
            image.fill(view.theme().plotBackground);
            {
                QCPPainter painter(&image);
                view.toPainter(&painter, w, h);
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
            view.toPainter(&painter, w, h);
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
            view.toPainter(&painter, w, h);
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

bool exportTimelineImage(const Trace& trace, const QString& path, QSize size, const QString& title, QString* error)
{
    if (!TimelineImageRenderer::validate(path, size, error))
        return false;
    TimelineView view;
    view.resize(size);
    // The caller keeps the trace alive for the duration of the call: share it without owning it.
    view.setTrace(std::shared_ptr<const Trace>(&trace, [](const Trace*) {}));
    TimelineImageRenderer::prepare(view, size, title);
    view.fitToView();
    TimelineImageRenderer::fitLegendToDrawing(view, size);
    return TimelineImageRenderer::render(view, path, size, error);
}

bool exportTimelineImage(const TimelineView& source, const QString& path, QSize size, const QString& title,
                         QString* error)
{
    if (!TimelineImageRenderer::validate(path, size, error))
        return false;
    if (!source.trace()) {
        if (error)
            *error = QStringLiteral("no trace to export");
        return false;
    }
    TimelineView view;
    view.resize(size);
    view.setTrace(source.trace());
    TimelineImageRenderer::prepare(view, size, title);
    const auto [a, b] = source.visibleTimeRange();
    view.setVisibleTimeRange(a, b);
    for (int k = 0; k < kFlowKindCount; ++k)
        view.setFlowKindVisible(FlowKind(k), source.isFlowKindVisible(FlowKind(k)));
    if (source.measuredRange())
        view.setMeasuredRange(source.measuredRange()->first, source.measuredRange()->second);
    if (source.selectedSpan() >= 0) {
        // Select without moving: selectSpan scrolls, so restore the range after it.
        view.selectSpan(source.selectedSpan());
        view.setVisibleTimeRange(a, b);
    }
    TimelineImageRenderer::fitLegendToDrawing(view, size);
    return TimelineImageRenderer::render(view, path, size, error);
}

} // namespace streamscope
