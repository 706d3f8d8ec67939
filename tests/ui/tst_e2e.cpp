// End to end: the real `streamscope` app under Xvfb (a real X server, not the offscreen platform) opens a lesson,
// runs it on the simulator and saves a screenshot of its window; the picture must show the timeline with bars.
#include "timeline_plottable.h"

#include <QColor>
#include <QDir>
#include <QFileInfo>
#include <QImage>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

using namespace streamscope;

namespace {

QString appPath()
{
    return QFileInfo(QStringLiteral(STREAMSCOPE_CLI)).dir().filePath(QStringLiteral("streamscope"));
}

// Pixels close to `colour` (the timeline's fill of a span kind).
int countColour(const QImage& image, QColor colour)
{
    int n = 0;
    for (int y = 0; y < image.height(); ++y)
        for (int x = 0; x < image.width(); ++x) {
            const QColor c = image.pixelColor(x, y);
            if (std::abs(c.red() - colour.red()) <= 6 && std::abs(c.green() - colour.green()) <= 6
                && std::abs(c.blue() - colour.blue()) <= 6)
                ++n;
        }
    return n;
}

} // namespace

class TestEndToEnd : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void lessonOnTheSimulatorUnderXvfb_data()
    {
        QTest::addColumn<QString>("lesson");
        QTest::addColumn<int>("kernelPixels"); // at least this many pixels in the kernel colour
        QTest::newRow("01 two streams") << "01" << 2000;
        QTest::newRow("08 pipeline") << "08" << 500;
    }

    void lessonOnTheSimulatorUnderXvfb()
    {
        QFETCH(QString, lesson);
        QFETCH(int, kernelPixels);
        const QString xvfbRun = QStandardPaths::findExecutable(QStringLiteral("xvfb-run"));
        if (xvfbRun.isEmpty())
            QSKIP("xvfb-run is not installed (Debian/Ubuntu package xvfb): the end-to-end test of the window needs it");
        QVERIFY2(QFileInfo(appPath()).isExecutable(), qPrintable(appPath() + QStringLiteral(" was not built")));

        QTemporaryDir dir;
        const QString shot = dir.filePath(QStringLiteral("window.png"));
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.remove(QStringLiteral("QT_QPA_PLATFORM")); // the real X platform, on Xvfb's display
        env.remove(QStringLiteral("WAYLAND_DISPLAY"));
        env.insert(QStringLiteral("XDG_CONFIG_HOME"), dir.filePath(QStringLiteral("config"))); // no saved layout
        env.insert(QStringLiteral("STREAMSCOPE_RESOURCES"), QStringLiteral(STREAMSCOPE_SOURCE_DIR "/resources"));
        QProcess app;
        app.setProcessEnvironment(env);
        app.setProcessChannelMode(QProcess::MergedChannels);
        app.start(xvfbRun,
                  {QStringLiteral("-a"), QStringLiteral("-s"), QStringLiteral("-screen 0 1600x1000x24"), appPath(),
                   lesson, QStringLiteral("--backend"), QStringLiteral("sim"), QStringLiteral("--screenshot"), shot,
                   QStringLiteral("--quit-after-run"), QStringLiteral("--width"), QStringLiteral("1400"),
                   QStringLiteral("--height"), QStringLiteral("900")});
        QVERIFY2(app.waitForStarted(10000), qPrintable(app.errorString()));
        if (!app.waitForFinished(120000)) {
            app.kill();
            app.waitForFinished();
            QFAIL(qPrintable(QStringLiteral("the app did not quit: ") + QString::fromUtf8(app.readAll())));
        }
        const QString output = QString::fromUtf8(app.readAll());
        QVERIFY2(app.exitStatus() == QProcess::NormalExit && app.exitCode() == 0, qPrintable(output));

        const QImage image(shot);
        QVERIFY2(!image.isNull(), qPrintable(QStringLiteral("no screenshot; output: ") + output));
        QCOMPARE(image.size(), QSize(1400, 900));
        // The timeline got a trace: kernel bars are on it.
        const int kernels = countColour(image, spanKindColor(SpanKind::Kernel));
        QVERIFY2(kernels >= kernelPixels, qPrintable(QStringLiteral("%1 kernel-coloured pixels").arg(kernels)));
    }
};

QTEST_MAIN(TestEndToEnd)
#include "tst_e2e.moc"
