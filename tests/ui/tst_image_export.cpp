// Timeline images for slides: an SVG names only font families that browsers and slide tools resolve alike
// (sans-serif, not Qt's "Sans Serif", which no browser knows and which fell back to a serif font), and still
// parses and renders; the concurrency strip goes into images and keeps every burst at a wide view.
#include "analysis.h"
#include "concurrency_plot.h"
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

    // The concurrency strip: under the time axis, within the requested size (fill) or added to the cropped rows, its
    // step rising where the first kernel starts (its plot area aligned under the timeline's).
    void concurrencyStrip()
    {
        const auto trace = hostAndStream(); // kernels at 1, 3 and 5 ms: one operation running at a time
        QTemporaryDir dir;
        QString error;
        ImageOptions o;
        o.size = QSize(1200, 900);
        o.arrows = std::array<bool, kFlowKindCount>{};
        const QString plain = dir.filePath(QStringLiteral("plain.png")),
                      strip = dir.filePath(QStringLiteral("strip.png"));
        QVERIFY2(exportTimelineImage(*trace, plain, o, &error), qPrintable(error));
        o.concurrency = true;
        QVERIFY2(exportTimelineImage(*trace, strip, o, &error), qPrintable(error));
        const QImage a = QImage(plain).convertToFormat(QImage::Format_RGB32);
        const QImage b = QImage(strip).convertToFormat(QImage::Format_RGB32);
        QCOMPARE(b.size(), QSize(1200, 900));
        const QColor blue = Theme::light().seriesBlue;
        auto isBlue = [&](QRgb p) {
            return std::abs(qRed(p) - blue.red()) < 12 && std::abs(qGreen(p) - blue.green()) < 12
                && std::abs(qBlue(p) - blue.blue()) < 12;
        };
        // The strip's colour from row `from` down (kernels may be drawn in a blue too): count, top row, first column.
        auto bluePixels = [&](const QImage& img, int from, int* top, int* left) {
            int n = 0;
            *top = img.height();
            *left = img.width();
            for (int y = from; y < img.height(); ++y) {
                const auto* line = reinterpret_cast<const QRgb*>(img.constScanLine(y));
                for (int x = 0; x < img.width(); ++x)
                    if (isBlue(line[x])) {
                        ++n;
                        *top = std::min(*top, y);
                        *left = std::min(*left, x);
                    }
            }
            return n;
        };
        // The strip takes the bottom of the image (about six lines of text); without it, no such colour there.
        const int bottom = 900 - 50;
        int top = 0, left = 0;
        QCOMPARE(bluePixels(a, bottom, &top, &left), 0);
        QVERIFY(bluePixels(b, bottom, &top, &left) > 100);
        // The first kernel's left edge in the rows above (below the title and the legend, whose swatch is a kernel's).
        const QRgb kernel = spanKindColor(SpanKind::Kernel, Theme::light()).rgb() & 0xFFFFFF;
        int kernelLeft = b.width();
        for (int y = b.height() / 4; y < top; ++y) {
            const auto* line = reinterpret_cast<const QRgb*>(b.constScanLine(y));
            for (int x = 0; x < b.width(); ++x)
                if ((line[x] & 0xFFFFFF) == kernel)
                    kernelLeft = std::min(kernelLeft, x);
        }
        QVERIFY2(std::abs(left - kernelLeft) <= 3, qPrintable(QStringLiteral("%1 %2").arg(left).arg(kernelLeft)));

        // Crop: the strip comes on top of the rows' height.
        o.crop = true;
        const QString cropped = dir.filePath(QStringLiteral("crop.png"));
        QVERIFY2(exportTimelineImage(*trace, cropped, o, &error), qPrintable(error));
        o.concurrency = false;
        QVERIFY2(exportTimelineImage(*trace, plain, o, &error), qPrintable(error));
        const int withStrip = QImage(cropped).height(), without = QImage(plain).height();
        QVERIFY2(withStrip >= without + 48 && withStrip <= without + 300,
                 qPrintable(QStringLiteral("%1 %2").arg(withStrip).arg(without)));
    }

    // The concurrency strip at a wide view: one point per pixel column, each the most operations running within it,
    // so that a 50 ns burst of three in a 5.5 ms trace still shows; zoomed in, the exact steps.
    void concurrencyAtAWideView()
    {
        auto t = std::make_shared<Trace>();
        for (const char* name : {"s0", "s1", "s2"}) {
            Track stream;
            stream.kind = TrackKind::Stream;
            stream.name = name;
            t->addTrack(stream);
        }
        auto kernel = [&](uint32_t track, int64_t start, int64_t end) {
            SpanInit init;
            init.track = track;
            init.kind = SpanKind::Kernel;
            init.name = "k";
            init.start = start;
            init.end = end;
            t->addSpan(init);
        };
        for (int64_t i = 0; i < 5000; ++i)
            kernel(0, i * 1100, i * 1100 + 1000);
        kernel(1, 2'500'100, 2'500'150);
        kernel(2, 2'500'100, 2'500'150);
        t->finalize();
        ConcurrencyPlot plot;
        plot.resize(500, 100);
        plot.setTrace(t);
        QCOMPARE(plot.maxConcurrency(), 3);
        const auto [first, last] = t->timeRange();
        plot.setVisibleTimeRange(double(first), double(last));
        const QCPGraph* g = plot.graph0();
        QVERIFY2(g->dataCount() <= 501, qPrintable(QString::number(g->dataCount())));
        double most = 0;
        for (auto it = g->data()->constBegin(); it != g->data()->constEnd(); ++it)
            most = std::max(most, it->value);
        QCOMPARE(most, 3.0);
        QCOMPARE(plot.runningAt(2'500'120.0), 3);
        QCOMPARE(plot.runningAt(1'050.0), 0);
        QCOMPARE(plot.runningAt(500.0), 1);
        // Zoomed to 10 kernels: the steps themselves.
        plot.setVisibleTimeRange(1'100'000.0, 1'111'000.0);
        QVERIFY2(g->dataCount() >= 20 && g->dataCount() <= 24, qPrintable(QString::number(g->dataCount())));
        for (auto it = g->data()->constBegin(); it != g->data()->constEnd(); ++it)
            QCOMPARE(int(it->value), plot.runningAt(it->key));
    }

    // Every column of a wide view holds the most operations running at any time within it, exactly: checked against
    // the steps themselves for random kernels in four streams (many steps per column, bursts and gaps).
    void concurrencyColumnsAreExact()
    {
        auto t = std::make_shared<Trace>();
        for (const char* name : {"s0", "s1", "s2", "s3"}) {
            Track stream;
            stream.kind = TrackKind::Stream;
            stream.name = name;
            t->addTrack(stream);
        }
        uint32_t seed = 17;
        auto rnd = [&seed](int64_t n) {
            seed = seed * 1664525u + 1013904223u;
            return int64_t((seed >> 8) % uint32_t(n));
        };
        for (uint32_t track = 0; track < 4; ++track) {
            int64_t at = rnd(1000);
            for (int i = 0; i < 3000; ++i) {
                SpanInit init;
                init.track = track;
                init.kind = SpanKind::Kernel;
                init.name = "k";
                init.start = at;
                init.end = at + 1 + rnd(i % 500 == 0 ? 20000 : 300);
                at = init.end + rnd(i % 97 == 0 ? 30000 : 400);
                t->addSpan(init);
            }
        }
        t->finalize();
        ConcurrencyPlot plot;
        plot.resize(400, 100);
        plot.setTrace(t);
        const auto [first, last] = t->timeRange();
        const std::vector<ConcurrencyStep> steps = concurrencySteps(*t);
        QVERIFY(steps.size() > 4000);
        for (const auto& [a, b] : {std::pair{first, last}, std::pair{first + (last - first) / 3, last - 12345}}) {
            plot.setVisibleTimeRange(double(a), double(b));
            const QCPGraph* g = plot.graph0();
            QVERIFY(g->dataCount() > 100 && g->dataCount() <= 401);
            // (Times relative to the first span, as the plot keeps them.)
            auto at = [&](size_t i) { return double(steps[i].time) - double(first); };
            for (auto it = g->data()->constBegin(); it + 1 != g->data()->constEnd(); ++it) {
                const double t0 = it->key, t1 = (it + 1)->key;
                int expected = 0; // the step in effect at t0, and every step starting before t1
                for (size_t i = 0; i < steps.size() && at(i) < t1; ++i)
                    if (at(i) >= t0 || i + 1 == steps.size() || at(i + 1) > t0)
                        expected = std::max(expected, steps[i].count);
                QCOMPARE(int(it->value), expected);
            }
        }
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
