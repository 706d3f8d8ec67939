// Timeline images for slides: an SVG names only font families that browsers and slide tools resolve alike
// (sans-serif, not Qt's "Sans Serif", which no browser knows and which fell back to a serif font), and still
// parses and renders.
#include "image_export.h"
#include "timeline_view.h"

#include <QFile>
#include <QRegularExpression>
#include <QSvgRenderer>
#include <QTemporaryDir>
#include <QTest>

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
};

QTEST_MAIN(TestImageExport)
#include "tst_image_export.moc"
