// Timeline images for slides: an SVG names only font families that browsers and slide tools resolve alike
// (sans-serif, not Qt's "Sans Serif", which no browser knows and which fell back to a serif font), and still
// parses and renders.
#include "image_export.h"
#include "theme.h"
#include "timeline_plottable.h"
#include "timeline_view.h"

#include <QFile>
#include <QRegularExpression>
#include <QSvgRenderer>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <cmath>
#include <memory>

using namespace streamscope;

namespace {

std::shared_ptr<Trace> hostAndStream()
{
    auto t = std::make_shared<Trace>();
    Track host;
    host.kind = TrackKind::HostThread;
    host.name = "main";
    t->addTrack(host);
    Track stream;
    stream.kind = TrackKind::Stream;
    stream.name = "s1";
    t->addTrack(stream);
    for (uint32_t i = 0; i < 6; ++i) {
        SpanInit init;
        init.track = i % 2;
        init.kind = i % 2 ? SpanKind::Kernel : SpanKind::ApiCall;
        init.name = i % 2 ? "gemm" : "cudaLaunchKernel";
        init.start = int64_t(i) * 1'000'000;
        init.end = init.start + 800'000;
        t->addSpan(init);
    }
    t->finalize();
    return t;
}

QStringList fontFamilies(const QString& svg)
{
    QStringList families;
    static const QRegularExpression family(QStringLiteral("font-family=\"([^\"]*)\""));
    for (auto it = family.globalMatch(svg); it.hasNext();)
        families << it.next().captured(1);
    families.removeDuplicates();
    return families;
}

} // namespace

class TestImageExport : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void genericFamilies_data()
    {
        QTest::addColumn<QString>("written");
        QTest::addColumn<QString>("generic");
        QTest::newRow("Qt's sans") << "Sans Serif"
                                   << "sans-serif";
        QTest::newRow("sans") << "Sans"
                              << "sans-serif";
        QTest::newRow("already generic") << "sans-serif"
                                         << "sans-serif";
        QTest::newRow("serif") << "Serif"
                               << "serif";
        QTest::newRow("monospace") << "Monospace"
                                   << "monospace";
        QTest::newRow("a named family") << "DejaVu Sans"
                                        << "'DejaVu Sans', sans-serif";
    }

    void genericFamilies()
    {
        QFETCH(QString, written);
        QFETCH(QString, generic);
        const QByteArray svg =
            QStringLiteral("<g font-family=\"%1\" font-size=\"13\"><text>x</text></g>").arg(written).toUtf8();
        QCOMPARE(QString::fromUtf8(svgWithGenericFontFamilies(svg)),
                 QStringLiteral("<g font-family=\"%1\" font-size=\"13\"><text>x</text></g>").arg(generic));
    }

    void svgExportUsesGenericFamilies()
    {
        const auto trace = hostAndStream();
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("timeline.svg"));
        QString error;
        QVERIFY2(exportTimelineImage(*trace, path, {1280, 720}, QStringLiteral("Two streams"), &error),
                 qPrintable(error));
        QFile file(path);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QString svg = QString::fromUtf8(file.readAll());
        QVERIFY2(!svg.contains(QStringLiteral("font-family=\"Sans Serif\"")), qPrintable(svg.left(2000)));
        const QStringList families = fontFamilies(svg);
        QVERIFY2(!families.isEmpty(), qPrintable(svg.left(2000)));
        for (const QString& f : families)
            QVERIFY2(f == QLatin1String("sans-serif") || f.endsWith(QLatin1String(", sans-serif")), qPrintable(f));
        QVERIFY(svg.contains(QStringLiteral("font-family=\"sans-serif\""))
                || svg.contains(QStringLiteral(", sans-serif\"")));
        // The title is text in it, and it still renders.
        QVERIFY(svg.contains(QStringLiteral("Two streams")));
        QSvgRenderer renderer(path);
        QVERIFY(renderer.isValid());
    }

    // Fill: the rows grow to the image's height; crop: the image is only as high as its rows; both keep a margin
    // all round (the first and last columns are background).
    void fillAndCrop()
    {
        const auto trace = hostAndStream();
        QTemporaryDir dir;
        QString error;
        ImageOptions o;
        o.size = QSize(1200, 900);
        o.title = QStringLiteral("fit");
        const QString fill = dir.filePath(QStringLiteral("fill.png")), crop = dir.filePath(QStringLiteral("crop.png"));
        QVERIFY2(exportTimelineImage(*trace, fill, o, &error), qPrintable(error));
        o.crop = true;
        QVERIFY2(exportTimelineImage(*trace, crop, o, &error), qPrintable(error));
        const QImage a = QImage(fill).convertToFormat(QImage::Format_RGB32);
        const QImage b = QImage(crop).convertToFormat(QImage::Format_RGB32);
        QCOMPARE(a.size(), QSize(1200, 900));
        QCOMPARE(b.width(), 1200);
        QVERIFY2(b.height() < 450 && b.height() > 120, qPrintable(QString::number(b.height())));
        const QRgb kernel = spanKindColor(SpanKind::Kernel, Theme::light()).rgb() & 0xFFFFFF;
        auto kernelRows = [&](const QImage& img) {
            int rows = 0;
            for (int y = 0; y < img.height(); ++y) {
                const auto* line = reinterpret_cast<const QRgb*>(img.constScanLine(y));
                for (int x = 0; x < img.width(); ++x)
                    if ((line[x] & 0xFFFFFF) == kernel) {
                        ++rows;
                        break;
                    }
            }
            return rows;
        };
        // Two rows of four lanes' worth in 900 px: the kernel bars are far taller filled than cropped.
        QVERIFY2(kernelRows(a) > 2 * kernelRows(b),
                 qPrintable(QStringLiteral("%1 %2").arg(kernelRows(a)).arg(kernelRows(b))));
        for (const QImage* img : {&a, &b}) {
            const QRgb bg = img->pixel(0, 0);
            for (int y = 0; y < img->height(); ++y) {
                QCOMPARE(img->pixel(0, y), bg);
                QCOMPARE(img->pixel(1, y), bg);
                QCOMPARE(img->pixel(img->width() - 1, y), bg);
            }
        }
    }

    // Scale 2: twice the pixels of the same layout, 192 dpi; transparent: no background.
    void scaleAndTransparency()
    {
        const auto trace = hostAndStream();
        QTemporaryDir dir;
        QString error;
        ImageOptions o;
        o.size = QSize(640, 360);
        o.scale = 2;
        o.transparent = true;
        const QString path = dir.filePath(QStringLiteral("x2.png"));
        QVERIFY2(exportTimelineImage(*trace, path, o, &error), qPrintable(error));
        const QImage img(path);
        QCOMPARE(img.size(), QSize(1280, 720));
        QVERIFY(std::abs(img.dotsPerMeterX() * 0.0254 - 192) < 1);
        QVERIFY(img.hasAlphaChannel());
        QCOMPARE(qAlpha(img.pixel(0, 0)), 0);
        o.scale = 100;
        QVERIFY(!exportTimelineImage(*trace, path, o, &error));
        QVERIFY2(error.contains(QStringLiteral("scale")), qPrintable(error));
    }

    // Ranges as the time axis reads them (from the first span) and arrow kinds by name.
    void rangeAndArrowOptions()
    {
        const auto trace = hostAndStream(); // spans from 0 to 5.8 ms
        QString error;
        const auto r = parseImageTimeRange(QStringLiteral("0.2ms..1.5ms"), *trace, &error);
        QVERIFY2(r, qPrintable(error));
        QCOMPARE(r->first, 200'000.0);
        QCOMPARE(r->second, 1'500'000.0);
        const auto us = parseImageTimeRange(QStringLiteral("200us..3 s"), *trace, &error);
        QVERIFY(us && us->first == 200'000.0 && us->second == 3e9);
        QVERIFY(!parseImageTimeRange(QStringLiteral("2ms..1ms"), *trace, &error));
        QVERIFY(!parseImageTimeRange(QStringLiteral("1ms"), *trace, &error));
        QVERIFY(!parseImageTimeRange(QStringLiteral("a..b"), *trace, &error));
        const auto some = parseImageArrows(QStringLiteral("launch, sync"), &error);
        QVERIFY(some && (*some)[size_t(FlowKind::Launch)] && (*some)[size_t(FlowKind::Sync)]
                && !(*some)[size_t(FlowKind::Event)]);
        const auto none = parseImageArrows(QStringLiteral("none"), &error);
        QVERIFY(none && std::none_of(none->begin(), none->end(), [](bool b) { return b; }));
        QVERIFY(!parseImageArrows(QStringLiteral("launch,bogus"), &error));
        QVERIFY2(error.contains(QStringLiteral("bogus")), qPrintable(error));
    }
};

QTEST_MAIN(TestImageExport)
#include "tst_image_export.moc"
