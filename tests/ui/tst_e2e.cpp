// End to end: the real `streamscope` app under Xvfb (a real X server, not the offscreen platform) opens a lesson,
// runs it on the simulator and saves a screenshot of its window; the picture must show the timeline with bars. Without
// --width and --height the window takes its default size shrunk to the screen (on a 1280x720 screen it was once
// 1600x1000, its edges off the screen).
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
        QTest::addColumn<QSize>("screen");
        QTest::addColumn<QSize>("size"); // --width and --height; empty: none given
        QTest::newRow("01 two streams") << "01" << 2000 << QSize(1600, 1000) << QSize(1400, 900);
        QTest::newRow("08 pipeline") << "08" << 500 << QSize(1600, 1000) << QSize(1400, 900);
        QTest::newRow("08 at its default size on 1280x720") << "08" << 500 << QSize(1280, 720) << QSize();
    }

    void lessonOnTheSimulatorUnderXvfb()
    {
        QFETCH(QString, lesson);
        QFETCH(int, kernelPixels);
        QFETCH(QSize, screen);
        QFETCH(QSize, size);
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
        QStringList arguments{QStringLiteral("-a"),
                              QStringLiteral("-s"),
                              QStringLiteral("-screen 0 %1x%2x24").arg(screen.width()).arg(screen.height()),
                              appPath(),
                              lesson,
                              QStringLiteral("--backend"),
                              QStringLiteral("sim"),
                              QStringLiteral("--screenshot"),
                              shot,
                              QStringLiteral("--quit-after-run")};
        if (size.isValid())
            arguments << QStringLiteral("--width") << QString::number(size.width()) << QStringLiteral("--height")
                      << QString::number(size.height());
        app.start(xvfbRun, arguments);
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
        if (size.isValid())
            QCOMPARE(image.size(), size);
        else
            QVERIFY2(image.width() <= screen.width() && image.height() <= screen.height()
                         && image.width() >= screen.width() / 2 && image.height() >= screen.height() / 2,
                     qPrintable(QStringLiteral("%1x%2 on a %3x%4 screen")
                                    .arg(image.width())
                                    .arg(image.height())
                                    .arg(screen.width())
                                    .arg(screen.height())));
        // The timeline got a trace: kernel bars are on it.
        const int kernels = countColour(image, spanKindColor(SpanKind::Kernel));
        QVERIFY2(kernels >= kernelPixels, qPrintable(QStringLiteral("%1 kernel-coloured pixels").arg(kernels)));
    }
};

QTEST_MAIN(TestEndToEnd)
#include "tst_e2e.moc"
