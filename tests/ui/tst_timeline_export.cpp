// Timeline images (ui/timeline/image_export.h): PNG pixels, SVG that parses, PDF that is a PDF, errors, the view
// as shown, and a lesson.
#include "tst_timeline.h"

void TestTimeline::exportFormats_data()
{
    QTest::addColumn<QString>("file");
    QTest::newRow("png") << u"t.png"_qs;
    QTest::newRow("svg") << u"t.svg"_qs;
    QTest::newRow("pdf") << u"t.PDF"_qs;
}

void TestTimeline::exportFormats()
{
    QFETCH(QString, file);
    auto t = makeTrace({hostTrack("main"), streamTrack("s0"), streamTrack("s1")},
                       {{0, SpanKind::ApiCall, 0, 5000, "launch"},
                        {1, SpanKind::Kernel, 10000, 500000, "matmul"},
                        {2, SpanKind::MemcpyH2D, 200000, 900000, "upload"}},
                       {{0, 1, FlowKind::Launch}, {1, 2, FlowKind::Event}});
    QTemporaryDir dir;
    const QString path = dir.filePath(file);
    QString error;
    QVERIFY2(exportTimelineImage(*t, path, QSize(1280, 720), u"Two streams"_qs, &error), qPrintable(error));
    QFile f(path);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QByteArray data = f.readAll();
    switch (*imageFormatForPath(path)) {
    case ImageFormat::Png: {
        QImage img;
        QVERIFY(img.loadFromData(data, "PNG"));
        QCOMPARE(img.size(), QSize(1280, 720));
        break;
    }
    case ImageFormat::Svg: {
        QSvgRenderer renderer(data);
        QVERIFY(renderer.isValid());
        QXmlStreamReader xml(data);
        while (!xml.atEnd())
            xml.readNext();
        QVERIFY2(!xml.hasError(), qPrintable(xml.errorString()));
        QVERIFY(data.contains("Two streams"));
        QVERIFY(data.contains("matmul"));
        break;
    }
    case ImageFormat::Pdf:
        QVERIFY(data.startsWith("%PDF-"));
        QVERIFY(data.trimmed().endsWith("%%EOF"));
        QVERIFY2(data.size() > 4000, qPrintable(QString::number(data.size())));
        break;
    }
}

void TestTimeline::exportPngPixels()
{
    // A kernel in s0 over [0, 1 ms) and a copy in s1 over [0.5, 1 ms): their colours must show where they are.
    auto t = makeTrace({streamTrack("s0"), streamTrack("s1")},
                       {{0, SpanKind::Kernel, 0, 1000000, "k"}, {1, SpanKind::MemcpyH2D, 500000, 1000000, "c"}});
    QTemporaryDir dir;
    const QString path = dir.filePath(u"p.png"_qs);
    QString error;
    QVERIFY2(exportTimelineImage(*t, path, QSize(1200, 500), u"pixels"_qs, &error), qPrintable(error));
    QImage img(path);
    QCOMPARE(img.size(), QSize(1200, 500));
    img = img.convertToFormat(QImage::Format_RGB32);
    auto box = [&](QColor c) {
        QRect r;
        const QRgb want = c.rgb();
        int count = 0;
        // Skip the legend strip at the top: look below its swatches.
        for (int y = 90; y < img.height(); ++y) {
            const auto* line = reinterpret_cast<const QRgb*>(img.constScanLine(y));
            for (int x = 0; x < img.width(); ++x)
                if ((line[x] & 0xFFFFFF) == (want & 0xFFFFFF)) {
                    r = r.isNull() ? QRect(x, y, 1, 1) : r.united(QRect(x, y, 1, 1));
                    ++count;
                }
        }
        return std::make_pair(r, count);
    };
    const auto [kernel, kernelPixels] = box(spanKindColor(SpanKind::Kernel));
    const auto [copy, copyPixels] = box(spanKindColor(SpanKind::MemcpyH2D));
    QVERIFY2(kernelPixels > 5000, qPrintable(QString::number(kernelPixels)));
    QVERIFY2(copyPixels > 2500, qPrintable(QString::number(copyPixels)));
    // The copy is half as long as the kernel, ends where it ends, and lies in the row below.
    QVERIFY2(std::abs(copy.width() * 2 - kernel.width()) <= 6,
             qPrintable(QStringLiteral("%1 vs %2").arg(copy.width()).arg(kernel.width())));
    QVERIFY(std::abs(copy.right() - kernel.right()) <= 3);
    QVERIFY(copy.top() > kernel.bottom());
    QVERIFY(kernel.width() > 800); // fit to the width of the image
}

void TestTimeline::exportErrors()
{
    auto t = makeTrace({streamTrack("s0")}, {{0, SpanKind::Kernel, 0, 1000}});
    QTemporaryDir dir;
    QString error;
    QVERIFY(!exportTimelineImage(*t, dir.filePath(u"x.bmpx"_qs), QSize(800, 600), {}, &error));
    QVERIFY(error.contains(u"unknown image format"_qs));
    error.clear();
    QVERIFY(!exportTimelineImage(*t, dir.filePath(u"no/such/dir/x.png"_qs), QSize(800, 600), {}, &error));
    QVERIFY(!error.isEmpty());
    error.clear();
    QVERIFY(!exportTimelineImage(*t, dir.filePath(u"x.png"_qs), QSize(0, 600), {}, &error));
    QVERIFY(error.contains(u"size"_qs));
    QVERIFY(!QFile::exists(dir.filePath(u"x.png"_qs)));
    // An empty trace still makes an image.
    Trace empty;
    empty.finalize();
    QVERIFY2(exportTimelineImage(empty, dir.filePath(u"e.png"_qs), QSize(400, 300), u"empty"_qs, &error),
             qPrintable(error));
}

void TestTimeline::exportView()
{
    auto t = makeTrace({streamTrack("s0")},
                       {{0, SpanKind::Kernel, 0, 500000, "k"}, {0, SpanKind::Memset, 500000, 1000000, "m"}});
    auto v = makeView(t);
    v->setVisibleTimeRange(0, 400000); // only the kernel in view
    QTemporaryDir dir;
    const QString path = dir.filePath(u"v.png"_qs);
    QString error;
    QVERIFY2(exportTimelineImage(*v, path, QSize(800, 400), u"view"_qs, &error), qPrintable(error));
    QImage img = QImage(path).convertToFormat(QImage::Format_RGB32);
    QCOMPARE(img.size(), QSize(800, 400));
    int memset = 0, kernel = 0;
    for (int y = 60; y < img.height(); ++y)
        for (int x = 0; x < img.width(); ++x) {
            const QRgb p = img.pixel(x, y) & 0xFFFFFF;
            memset += p == (spanKindColor(SpanKind::Memset).rgb() & 0xFFFFFF);
            kernel += p == (spanKindColor(SpanKind::Kernel).rgb() & 0xFFFFFF);
        }
    QVERIFY(kernel > 5000);
    QCOMPARE(memset, 0);
}

void TestTimeline::exportLesson()
{
    auto preset = findPreset("08");
    QVERIFY2(preset.ok(), preset.ok() ? "" : preset.error().toString().c_str());
    auto loaded = loadScenarioFile(preset->path);
    QVERIFY2(loaded.ok(), loaded.ok() ? "" : loaded.error().toString().c_str());
    SimulatorBackend sim;
    auto out = runScenario(loaded->scenario, sim);
    QVERIFY(out.status.ok());
    QTemporaryDir dir;
    const QString path = dir.filePath(u"lesson.png"_qs);
    QString error;
    const QString title = defaultImageTitle(out.trace, path);
    QVERIFY(!title.isEmpty());
    QVERIFY2(exportTimelineImage(out.trace, path, QSize(1920, 1080), title, &error), qPrintable(error));
    const QImage img(path);
    QCOMPARE(img.size(), QSize(1920, 1080));
}
