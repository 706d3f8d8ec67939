// The built `streamscope` app answers --help and --version without a display: no DISPLAY, no WAYLAND_DISPLAY and no
// QT_QPA_PLATFORM (QApplication would abort there), exit code 0 and the text on standard output. --version also
// names the folder of the lessons and profiles (tests/install/install_tree.sh checks it for an installed app).
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

namespace {

QString appPath()
{
    return QFileInfo(QStringLiteral(STREAMSCOPE_CLI)).dir().filePath(QStringLiteral("streamscope"));
}

struct Run {
    int exitCode = -1;
    QString out, err;
};

// The app with no display of any kind.
Run runWithoutDisplay(const QStringList& arguments)
{
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    for (const char* name : {"DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"})
        env.remove(QString::fromLatin1(name));
    QProcess app;
    app.setProcessEnvironment(env);
    app.start(appPath(), arguments);
    Run run;
    if (!app.waitForStarted(10000) || !app.waitForFinished(30000)) {
        app.kill();
        app.waitForFinished();
        run.err = QStringLiteral("did not finish: ") + app.errorString();
        return run;
    }
    run.exitCode = app.exitStatus() == QProcess::NormalExit ? app.exitCode() : -2; // -2: it crashed (aborted)
    run.out = QString::fromUtf8(app.readAllStandardOutput());
    run.err += QString::fromUtf8(app.readAllStandardError());
    return run;
}

} // namespace

class TestCommandLine : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY2(QFileInfo(appPath()).isExecutable(), qPrintable(appPath() + QStringLiteral(" was not built")));
    }

    void helpWithoutDisplay_data()
    {
        QTest::addColumn<QString>("option");
        QTest::newRow("--help") << QStringLiteral("--help");
        QTest::newRow("-h") << QStringLiteral("-h");
        QTest::newRow("--help-all") << QStringLiteral("--help-all");
    }

    void helpWithoutDisplay()
    {
        QFETCH(QString, option);
        const Run run = runWithoutDisplay({option});
        QVERIFY2(run.exitCode == 0, qPrintable(QStringLiteral("exit %1: %2").arg(run.exitCode).arg(run.err)));
        QVERIFY2(run.out.contains(QStringLiteral("Usage:")), qPrintable(run.out));
        QVERIFY2(run.out.contains(QStringLiteral("--export <image>")), qPrintable(run.out));
        QVERIFY2(run.out.contains(QStringLiteral("--version")), qPrintable(run.out));
        QVERIFY2(run.out.contains(QStringLiteral("see what CUDA streams do")), qPrintable(run.out));
        // Hidden options stay hidden.
        QVERIFY(!run.out.contains(QStringLiteral("--screenshot")));
    }

    void versionWithoutDisplay()
    {
        for (const QString& option : {QStringLiteral("--version"), QStringLiteral("-v")}) {
            const Run run = runWithoutDisplay({option});
            QVERIFY2(run.exitCode == 0, qPrintable(QStringLiteral("exit %1: %2").arg(run.exitCode).arg(run.err)));
            // The version, then where the lessons and profiles come from (here: STREAMSCOPE_RESOURCES, set by ctest).
            const QStringList lines = run.out.split(QLatin1Char('\n'));
            QCOMPARE(lines.size(), 3); // two lines and the newline after the second
            QCOMPARE(lines[0], QStringLiteral("streamscope " STREAMSCOPE_VERSION));
            QVERIFY2(lines[1].startsWith(QStringLiteral("lessons and profiles: ")), qPrintable(run.out));
            QVERIFY2(QFileInfo(lines[1].section(QStringLiteral(": "), 1)).isDir(), qPrintable(run.out));
        }
    }

    // Headless export with the image options: a cropped, doubled PNG of lesson 01's variant; bad options are bad
    // input (exit 2) with a message naming the option.
    void exportWithOptions()
    {
        QTemporaryDir dir;
        const QString png = dir.filePath(QStringLiteral("crop.png"));
        const Run run = runWithoutDisplay(
            {QStringLiteral("01"), QStringLiteral("--variant"), QStringLiteral("one-stream"),
             QStringLiteral("--export"), png, QStringLiteral("--width"), QStringLiteral("800"),
             QStringLiteral("--height"), QStringLiteral("600"), QStringLiteral("--fit"), QStringLiteral("crop"),
             QStringLiteral("--scale"), QStringLiteral("2"), QStringLiteral("--arrows"), QStringLiteral("none"),
             QStringLiteral("--range"), QStringLiteral("0.5ms..2ms"), QStringLiteral("--transparent"),
             QStringLiteral("--concurrency")});
        QVERIFY2(run.exitCode == 0, qPrintable(QStringLiteral("exit %1: %2").arg(run.exitCode).arg(run.err)));
        // 800 wide at scale 2; cropped to its rows, far less than 600 high.
        QVERIFY2(run.out.contains(QStringLiteral("exported ")) && run.out.contains(QStringLiteral("(1600 x ")),
                 qPrintable(run.out));
        QVERIFY(QFileInfo::exists(png));
        for (const QStringList& bad : {QStringList{QStringLiteral("--fit"), QStringLiteral("stretch")},
                                       QStringList{QStringLiteral("--scale"), QStringLiteral("100")},
                                       QStringList{QStringLiteral("--range"), QStringLiteral("2ms..1ms")},
                                       QStringList{QStringLiteral("--arrows"), QStringLiteral("launch,bogus")}}) {
            const Run r = runWithoutDisplay(
                QStringList{QStringLiteral("01"), QStringLiteral("--export"), dir.filePath(QStringLiteral("bad.png"))}
                + bad);
            QVERIFY2(r.exitCode == 2,
                     qPrintable(bad.join(QLatin1Char(' ')) + QStringLiteral(": exit ") + QString::number(r.exitCode)
                                + QStringLiteral(" ") + r.err));
            QVERIFY2(r.err.contains(bad.front()), qPrintable(r.err));
        }
    }

    // Without --arrows an image draws the arrows a new window draws: no sync arrows (lesson 11's 32 streams drew one
    // from each stream to the synchronize call); --arrows all draws them. The SVG's legend names the kinds drawn.
    void exportLeavesSyncArrowsOutByDefault()
    {
        QTemporaryDir dir;
        for (const bool all : {false, true}) {
            const QString svg = dir.filePath(all ? QStringLiteral("all.svg") : QStringLiteral("default.svg"));
            QStringList args{QStringLiteral("11"), QStringLiteral("--export"), svg};
            if (all)
                args << QStringLiteral("--arrows") << QStringLiteral("all");
            const Run run = runWithoutDisplay(args);
            QVERIFY2(run.exitCode == 0, qPrintable(QStringLiteral("exit %1: %2").arg(run.exitCode).arg(run.err)));
            QFile file(svg);
            QVERIFY(file.open(QIODevice::ReadOnly));
            const QString text = QString::fromUtf8(file.readAll());
            QVERIFY2(text.contains(QStringLiteral(">launch →<")), "the legend lists launch arrows");
            QCOMPARE(text.contains(QStringLiteral(">sync →<")), all);
        }
    }
};

QTEST_GUILESS_MAIN(TestCommandLine)
#include "tst_command_line.moc"
