// Timeline images from the main window and from the built app without a display (streamscope FILE --export).
#include "tst_mainwindow.h"

#include "export_dialog.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QSpinBox>

void TestMainWindow::exportFromTheWindow()
{
    QTemporaryDir dir;
    auto w = makeWindow();
    QVERIFY(openAndRun(*w, QStringLiteral("08")));
    for (const char* ext : {"png", "svg", "pdf"}) {
        const QString path = dir.filePath(QStringLiteral("t.") + QLatin1String(ext));
        QVERIFY2(w->exportImage(path, QSize(800, 450)), qPrintable(w->errorMessage()));
        QVERIFY(QFileInfo(path).size() > 0);
    }
    QCOMPARE(QImage(dir.filePath(QStringLiteral("t.png"))).size(), QSize(800, 450));

    // The dialog's choices: it starts from the arrows the timeline shows, and what is chosen is what is exported
    // (the whole trace, cropped, at scale 2), and remembered for the next time.
    std::array<bool, kFlowKindCount> shown{};
    shown[size_t(FlowKind::Launch)] = true;
    {
        ExportImageDialog dialog(shown, false, false);
        auto* launch = dialog.findChild<QCheckBox*>(QStringLiteral("export-arrow-launch"));
        auto* sync = dialog.findChild<QCheckBox*>(QStringLiteral("export-arrow-sync"));
        QVERIFY(launch && sync && launch->isChecked() && !sync->isChecked());
        sync->setChecked(true);
        dialog.findChild<QComboBox*>(QStringLiteral("export-fit"))->setCurrentIndex(1);
        dialog.findChild<QComboBox*>(QStringLiteral("export-range"))->setCurrentIndex(1);
        dialog.findChild<QDoubleSpinBox*>(QStringLiteral("export-scale"))->setValue(2);
        dialog.findChild<QSpinBox*>(QStringLiteral("export-width"))->setValue(900);
        ImageOptions o = dialog.options();
        QVERIFY(o.crop && o.scale == 2 && dialog.wholeTrace() && o.size == QSize(900, 1080));
        QVERIFY(o.arrows && (*o.arrows)[size_t(FlowKind::Sync)] && !(*o.arrows)[size_t(FlowKind::Event)]);
        dialog.remember();
        o.range = wholeTraceRange(*w->timeline()->trace());
        const QString path = dir.filePath(QStringLiteral("options.png"));
        QVERIFY2(w->exportImage(path, o), qPrintable(w->errorMessage()));
        const QImage img(path);
        QCOMPARE(img.width(), 1800);
        QVERIFY2(img.height() < 2160, qPrintable(QString::number(img.height())));
    }
    ExportImageDialog again(shown, false, false);
    QVERIFY(again.options().crop && again.options().scale == 2 && again.wholeTrace());
}

void TestMainWindow::headlessExport_data()
{
    QTest::addColumn<QString>("input");
    QTest::addColumn<int>("width");
    QTest::addColumn<int>("height");
    QTest::newRow("lesson") << "01" << 640 << 360;
    QTest::newRow("scenario file") << STREAMSCOPE_SOURCE_DIR "/resources/presets/08-copy-compute-pipeline.json" << 1024
                                   << 512;
}

// The built app renders without a display (offscreen chosen by itself) to a PNG of the size asked for.
void TestMainWindow::headlessExport()
{
    QFETCH(QString, input);
    QFETCH(int, width);
    QFETCH(int, height);
    QVERIFY2(QFileInfo(appPath()).isExecutable(), qPrintable(appPath() + QStringLiteral(" was not built")));
    QTemporaryDir dir;
    const QString out = dir.filePath(QStringLiteral("out.png"));
    const Process p = runApp({input, QStringLiteral("--export"), out, QStringLiteral("--width"), QString::number(width),
                              QStringLiteral("--height"), QString::number(height)},
                             headlessEnv());
    QVERIFY2(p.code == 0, qPrintable(p.err));
    const QImage image(out);
    QVERIFY(!image.isNull());
    QCOMPARE(image.size(), QSize(width, height));
    QSet<QRgb> seen;
    for (int y = 0; y < image.height(); y += 4)
        for (int x = 0; x < image.width(); x += 4)
            seen.insert(image.pixel(x, y));
    QVERIFY2(seen.size() > 5, "the image is blank");
}

void TestMainWindow::headlessExportOfATraceAndSvg()
{
    QTemporaryDir dir;
    const QString trace = dir.filePath(QStringLiteral("t.json"));
    QProcess cli;
    cli.setProcessEnvironment(headlessEnv());
    cli.start(QStringLiteral(STREAMSCOPE_CLI),
              {QStringLiteral("run"), QStringLiteral("03"), QStringLiteral("--backend"), QStringLiteral("sim"),
               QStringLiteral("-o"), trace});
    QVERIFY(cli.waitForFinished(30000));
    QCOMPARE(cli.exitCode(), 0);
    const QString svg = dir.filePath(QStringLiteral("t.svg"));
    const Process p = runApp({trace, QStringLiteral("--export"), svg}, headlessEnv());
    QVERIFY2(p.code == 0, qPrintable(p.err));
    QFile f(svg);
    QVERIFY(f.open(QIODevice::ReadOnly));
    QVERIFY(f.readAll().contains("<svg"));
}

void TestMainWindow::headlessExportBadInput_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("message");
    QTest::newRow("missing file") << QStringList{QStringLiteral("nope.json"), QStringLiteral("--export"),
                                                 QStringLiteral("x.png")}
                                  << "nope.json";
    QTest::newRow("unknown format") << QStringList{QStringLiteral("01"), QStringLiteral("--export"),
                                                   QStringLiteral("x.bmp")}
                                    << ".png, .svg or .pdf";
    QTest::newRow("bad width") << QStringList{QStringLiteral("01"), QStringLiteral("--export"), QStringLiteral("x.png"),
                                              QStringLiteral("--width"), QStringLiteral("wide")}
                               << "--width";
    QTest::newRow("no input") << QStringList{QStringLiteral("--export"), QStringLiteral("x.png")} << "needs a scenario";
    QTest::newRow("bad variant") << QStringList{
        QStringLiteral("01"), QStringLiteral("--variant"), QStringLiteral("zzz"), QStringLiteral("--export"),
        QStringLiteral("x.png")} << "zzz";
}

void TestMainWindow::headlessExportBadInput()
{
    QFETCH(QStringList, args);
    QFETCH(QString, message);
    QTemporaryDir dir;
    for (QString& a : args)
        if (a == QLatin1String("x.png") || a == QLatin1String("x.bmp"))
            a = dir.filePath(a);
    const Process p = runApp(args, headlessEnv());
    QCOMPARE(p.code, 2);
    QVERIFY2(p.err.contains(message), qPrintable(p.err));
    QVERIFY(!QFile::exists(dir.filePath(QStringLiteral("x.png"))));
}
