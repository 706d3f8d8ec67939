// Light and dark themes (theme.h): every text colour of both themes reads at WCAG AA (4.5:1) on its background; with
// View ▸ Theme ▸ Dark the timeline, the concurrency strip and the compare and sweep charts are drawn dark, and every
// piece of text of the analysis panel (the checks, "What this run shows", the diagnostics), the inspector and the
// run info reads at 4.5:1 on what it is drawn on; the choice is kept in QSettings and the next start of the app
// applies it (or --theme's); Light and System put the light palette back; images stay light. With
// STREAMSCOPE_THEME_SHOTS=DIR the window is saved there in both themes.
#include "analysis_panel.h"
#include "compare_view.h"
#include "concurrency_plot.h"
#include "image_export.h"
#include "main_window.h"
#include "presentation_mode.h"
#include "property_editor.h"
#include "run_info_panel.h"
#include "scenario_editor.h"
#include "scenario_model.h"
#include "span_inspector.h"
#include "sweep_view.h"
#include "theme.h"
#include "timeline_view.h"
#include "window_fixture.h"

#include <QAction>
#include <QApplication>
#include <QDir>
#include <QDockWidget>
#include <QFileInfo>
#include <QLabel>
#include <QProcess>
#include <QRegularExpression>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QTextBlock>
#include <QTextBrowser>
#include <QTextCursor>
#include <QTextDocument>
#include <QTextTable>
#include <QUndoStack>

#include <vector>

using namespace streamscope;

namespace {

// A piece of text as drawn: its colour and what is under it.
struct DrawnText {
    QString text;
    QColor foreground, background;
};

QColor brushColour(const QTextFormat& format, QTextFormat::Property property)
{
    return format.hasProperty(property) ? format.brushProperty(property).color() : QColor();
}

// Every fragment of text of a browser's document with the colour it is drawn in and the background under it (its
// own, its paragraph's, its table cell's or table's, else the viewport's base).
std::vector<DrawnText> drawnTexts(const QTextBrowser* browser)
{
    std::vector<DrawnText> out;
    const QPalette palette = browser->viewport()->palette();
    const QTextDocument* doc = browser->document();
    for (QTextBlock block = doc->begin(); block.isValid(); block = block.next()) {
        QColor under = brushColour(block.blockFormat(), QTextFormat::BackgroundBrush);
        if (!under.isValid()) {
            QTextCursor cursor(block);
            if (const QTextTable* table = cursor.currentTable()) {
                under = brushColour(table->cellAt(cursor).format(), QTextFormat::BackgroundBrush);
                if (!under.isValid())
                    under = brushColour(table->format(), QTextFormat::BackgroundBrush);
            }
        }
        if (!under.isValid())
            under = palette.color(QPalette::Base);
        for (auto it = block.begin(); !it.atEnd(); ++it) {
            const QTextFragment f = it.fragment();
            if (!f.isValid() || f.text().trimmed().isEmpty())
                continue;
            const QTextCharFormat cf = f.charFormat();
            QColor fg = brushColour(cf, QTextFormat::ForegroundBrush);
            if (!fg.isValid())
                fg = cf.isAnchor() ? palette.color(QPalette::Link) : palette.color(QPalette::Text);
            QColor bg = brushColour(cf, QTextFormat::BackgroundBrush);
            out.push_back({f.text(), fg, bg.isValid() ? bg : under});
        }
    }
    return out;
}

// Fails with the first fragment under 4.5:1; `seen` collects the backgrounds met.
bool readable(const QTextBrowser* browser, QString* why, std::vector<QColor>* seen = nullptr)
{
    const auto texts = drawnTexts(browser);
    if (texts.empty()) {
        *why = QStringLiteral("no text");
        return false;
    }
    for (const DrawnText& t : texts) {
        if (seen)
            seen->push_back(t.background);
        const double c = contrastRatio(t.foreground, t.background);
        if (c < 4.5) {
            *why = QStringLiteral("\"%1\": %2 on %3, contrast %4")
                       .arg(t.text.left(60), t.foreground.name(), t.background.name())
                       .arg(c, 0, 'f', 2);
            return false;
        }
    }
    return true;
}

// The share of an image's pixels darker than lightness 80.
double darkShare(const QImage& image)
{
    const QImage rgb = image.convertToFormat(QImage::Format_RGB32);
    qint64 dark = 0;
    for (int y = 0; y < rgb.height(); ++y)
        for (int x = 0; x < rgb.width(); ++x)
            dark += QColor(rgb.pixel(x, y)).lightness() < 80 ? 1 : 0;
    return double(dark) / std::max<qint64>(1, qint64(rgb.width()) * rgb.height());
}

double darkShare(QWidget* widget)
{
    return darkShare(widget->grab().toImage());
}

void choose(MainWindow& w, ThemeChoice choice)
{
    auto* action = w.findChild<QAction*>(QStringLiteral("theme-") + themeChoiceName(choice));
    QVERIFY(action);
    action->trigger();
    QVERIFY(action->isChecked());
    QCoreApplication::processEvents(); // widgets get their new palettes from posted events
}

void saveShot(QWidget* w, const QString& name)
{
    const QString dir = qEnvironmentVariable("STREAMSCOPE_THEME_SHOTS");
    if (dir.isEmpty())
        return;
    QTest::qWait(50); // laid out and painted
    w->grab().save(QDir(dir).filePath(name));
}

QString appPath()
{
    return QFileInfo(QStringLiteral(STREAMSCOPE_CLI)).dir().filePath(QStringLiteral("streamscope"));
}

} // namespace

class TestTheme : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName(QStringLiteral("StreamScopeTest"));
        QCoreApplication::setApplicationName(QStringLiteral("tst_theme"));
        QSettings().clear();
        m_startPalette = QApplication::palette();
    }

    void cleanup() { applyThemeChoice(ThemeChoice::System); }

    // Each theme's text colours on the backgrounds they are drawn on, at 4.5:1; bars and lines at 3:1 on the dark
    // plot (where the light one keeps Okabe–Ito's pale yellow and sand on white, as every such palette does).
    void coloursReadInBothThemes_data()
    {
        QTest::addColumn<bool>("dark");
        QTest::newRow("light") << false;
        QTest::newRow("dark") << true;
    }

    void coloursReadInBothThemes()
    {
        QFETCH(bool, dark);
        const Theme& t = dark ? Theme::dark() : Theme::light();
        const QPalette palette = dark ? darkPalette() : lightPalette();
        QCOMPARE(&Theme::forPalette(palette), &t);
        QCOMPARE(t.isDark, dark);
        auto check = [](const QColor& fg, const QColor& bg, const char* what, double least = 4.5) {
            const double c = contrastRatio(fg, bg);
            QVERIFY2(c >= least,
                     qPrintable(QStringLiteral("%1: %2 on %3, contrast %4")
                                    .arg(QLatin1String(what), fg.name(), bg.name())
                                    .arg(c, 0, 'f', 2)));
        };
        for (QPalette::ColorRole bg : {QPalette::Base, QPalette::Window}) {
            const QColor b = palette.color(bg);
            check(palette.color(QPalette::Text), b, "text");
            check(palette.color(QPalette::Link), b, "link");
            check(t.muted, b, "muted");
            check(t.faint, b, "faint");
            check(t.pass, b, "pass");
            check(t.fail, b, "fail");
            check(t.warning, b, "warning");
            check(t.info, b, "info");
            check(t.better, b, "better");
            check(t.worse, b, "worse");
        }
        check(t.muted, palette.color(QPalette::ToolTipBase), "tooltip muted");
        check(palette.color(QPalette::Text), t.sectionBackground, "section row");
        check(palette.color(QPalette::Text), t.note.background, "variant note");
        check(palette.color(QPalette::Text), t.effect.background, "effect text");
        check(t.pass, t.effect.background, "effect title");
        for (const ThemeBox* box : {&t.note, &t.effect, &t.notice, &t.error})
            check(box->text, box->background, "box text");
        check(t.plotText, t.plotBackground, "plot text");
        check(t.plotTitle, t.plotBackground, "plot title");
        check(t.hintText, t.plotBackground, "hint");
        check(t.measureLabelText, t.measureLabel, "measured duration");
        for (const QColor& row : {t.plotBackground, t.rowAlternate, t.rowHeader}) {
            check(t.rowText, row, "row label");
            check(t.rowHeaderText, row, "header label");
            check(t.rowRangesText, row, "ranges label");
        }
        for (int k = 0; k < kSpanKindCount; ++k) {
            const auto kind = SpanKind(k);
            check(t.spanKindText(kind), t.spanKind(kind), "name in a bar");
            if (dark && kind != SpanKind::Range)
                check(t.spanKind(kind), t.plotBackground, "bar", 3.0);
        }
        if (dark)
            for (int k = 0; k < kFlowKindCount; ++k)
                check(t.flowKind(FlowKind(k)), t.plotBackground, "arrow", 3.0);
    }

    void choiceNamesRoundTrip()
    {
        for (ThemeChoice c : {ThemeChoice::System, ThemeChoice::Light, ThemeChoice::Dark})
            QCOMPARE(parseThemeChoice(themeChoiceName(c)), std::optional<ThemeChoice>(c));
        QCOMPARE(parseThemeChoice(QStringLiteral("Dark")), std::optional<ThemeChoice>(ThemeChoice::Dark));
        QVERIFY(!parseThemeChoice(QStringLiteral("purple")));
        QSettings().setValue(QStringLiteral("view/theme"), QStringLiteral("purple"));
        QCOMPARE(savedThemeChoice(), ThemeChoice::System);
    }

    void darkThemeIsReadableAndKept()
    {
        QSettings().clear();
        auto w = testing::makeTestWindow({1280, 800});
        QVERIFY(testing::openAndRun(*w, QStringLiteral("08")));
        QVERIFY(!w->timeline()->theme().isDark);
        QVERIFY(darkShare(w->timeline()) < 0.2);

        choose(*w, ThemeChoice::Dark);
        QCOMPARE(appliedThemeChoice(), ThemeChoice::Dark);
        QCOMPARE(QSettings().value(QStringLiteral("view/theme")).toString(), QStringLiteral("dark"));
        QCOMPARE(savedThemeChoice(), ThemeChoice::Dark);
        QVERIFY(QApplication::palette().color(QPalette::Window).lightness() < 128);

        // The plots: dark backgrounds, drawn so.
        QTRY_VERIFY(w->timeline()->theme().isDark);
        QTRY_VERIFY2(darkShare(w->timeline()) > 0.5, qPrintable(QString::number(darkShare(w->timeline()))));
        QCOMPARE(w->timeline()->xAxis->tickLabelColor(), Theme::dark().plotText);
        QCOMPARE(w->concurrencyPlot()->yAxis->tickLabelColor(), Theme::dark().plotText);
        QTRY_VERIFY(darkShare(w->concurrencyPlot()) > 0.5);

        // The panels' text, fragment by fragment, on what it is drawn on.
        QString why;
        auto* analysis = w->analysisPanel()->findChild<QTextBrowser*>();
        QVERIFY(analysis);
        QVERIFY(w->analysisPanel()->html().contains(QStringLiteral("What this run shows")));
        std::vector<QColor> backgrounds;
        QVERIFY2(readable(analysis, &why, &backgrounds), qPrintable(why));
        // "What this run shows" sits in the theme's dark green box, not the light theme's pale one.
        QVERIFY(std::count(backgrounds.begin(), backgrounds.end(), Theme::dark().effect.background) > 0);
        QVERIFY(std::count(backgrounds.begin(), backgrounds.end(), Theme::light().effect.background) == 0);
        bool passSeen = false;
        for (const DrawnText& t : drawnTexts(analysis))
            passSeen = passSeen || (t.text.contains(QStringLiteral("PASS")) && t.foreground == Theme::dark().pass);
        QVERIFY(passSeen);
        w->timeline()->selectSpan(0);
        auto* inspector = w->inspector()->findChild<QTextBrowser*>();
        QVERIFY(inspector);
        QVERIFY2(readable(inspector, &why), qPrintable(why));
        auto* runInfo = w->runInfoPanel()->findChild<QTextBrowser*>();
        QVERIFY(runInfo);
        QVERIFY2(readable(runInfo, &why), qPrintable(why));

        // The scenario's status line under the tree, in its colour on the window.
        const auto labels = w->scenarioEditor()->findChildren<QLabel*>();
        bool statusSeen = false;
        static const QRegularExpression colour(QStringLiteral("color:(#[0-9a-fA-F]{6})"));
        for (const QLabel* label : labels) {
            const auto m = colour.match(label->text());
            if (!m.hasMatch())
                continue;
            statusSeen = true;
            const double c = contrastRatio(QColor(m.captured(1)), label->palette().color(QPalette::Window));
            QVERIFY2(c >= 4.5, qPrintable(label->text()));
        }
        QVERIFY(statusSeen);
        saveShot(w.get(), QStringLiteral("window-dark.png"));
        for (const char* dock : {"lessonsDock", "runInfoDock", "scenarioDock", "inspectorDock"}) {
            if (auto* d = w->findChild<QDockWidget*>(QLatin1String(dock)))
                d->raise();
            saveShot(w.get(), QStringLiteral("window-dark-%1.png").arg(QLatin1String(dock)));
        }

        // A validation error: red under its field and in the status line, readable on the dark window.
        const ScenarioItemRef second = ScenarioItemRef::op(0, 1);
        Op op = *w->scenarioModel()->op(second);
        op.stream = "nope";
        w->scenarioModel()->setOp(second, op, QStringLiteral("stream"));
        w->scenarioEditor()->selectItem(second);
        QTRY_VERIFY(!w->scenarioEditor()->propertyEditor()->fieldMessage(QStringLiteral("stream")).isEmpty());
        bool messageSeen = false;
        const auto fieldLabels = w->scenarioEditor()->propertyEditor()->findChildren<QLabel*>();
        for (const QLabel* label : fieldLabels) {
            if (!label->text().contains(QStringLiteral("nope")) || label->isHidden())
                continue;
            messageSeen = true;
            const auto m = colour.match(label->styleSheet());
            QVERIFY2(m.hasMatch(), qPrintable(label->styleSheet()));
            QCOMPARE(QColor(m.captured(1)), Theme::dark().fail);
            QVERIFY(contrastRatio(QColor(m.captured(1)), label->palette().color(QPalette::Window)) >= 4.5);
        }
        QVERIFY(messageSeen);
        saveShot(w.get(), QStringLiteral("window-dark-invalid.png"));
        w->scenarioModel()->undoStack()->undo();

        // Images stay light.
        QTemporaryDir dir;
        const QString png = dir.filePath(QStringLiteral("t.png"));
        QVERIFY(exportTimelineImage(*w->timeline(), png, QSize(800, 450), QStringLiteral("title")));
        const QImage image(png);
        QVERIFY(!image.isNull());
        QCOMPARE(QColor(image.pixel(2, 2)), QColor(Qt::white));
        QVERIFY(darkShare(image) < 0.2);
        QVERIFY(w->timeline()->theme().isDark); // the window's own view is untouched

        // Back to light: everything as it was.
        choose(*w, ThemeChoice::Light);
        QCOMPARE(QSettings().value(QStringLiteral("view/theme")).toString(), QStringLiteral("light"));
        QTRY_VERIFY(!w->timeline()->theme().isDark);
        QCOMPARE(w->timeline()->xAxis->tickLabelColor(), Theme::light().plotText);
        QTRY_VERIFY(darkShare(w->timeline()) < 0.2);
        QTRY_VERIFY(darkShare(w->concurrencyPlot()) < 0.2);
        backgrounds.clear();
        QVERIFY2(readable(analysis, &why, &backgrounds), qPrintable(why));
        QVERIFY(std::count(backgrounds.begin(), backgrounds.end(), Theme::light().effect.background) > 0);
        saveShot(w.get(), QStringLiteral("window-light.png"));

        // System: the palette the application started with.
        choose(*w, ThemeChoice::Dark);
        choose(*w, ThemeChoice::System);
        QCOMPARE(savedThemeChoice(), ThemeChoice::System);
        QCOMPARE(QApplication::palette().color(QPalette::Window), m_startPalette.color(QPalette::Window));
        QCOMPARE(QApplication::palette().color(QPalette::Text), m_startPalette.color(QPalette::Text));
        QTRY_VERIFY(!w->timeline()->theme().isDark);
    }

    // The charts beside the window re-colour with it.
    void compareAndSweepFollow()
    {
        auto w = testing::makeTestWindow({1280, 800});
        QVERIFY(testing::openAndRun(*w, QStringLiteral("04")));
        CompareView compare;
        compare.setTraces(w->currentTrace()->trace, QStringLiteral("A"), w->currentTrace()->trace, QStringLiteral("B"));
        compare.resize(1000, 800);
        compare.show();
        SweepView sweep;
        sweep.resize(900, 400);
        sweep.show();
        QVERIFY(QTest::qWaitForWindowExposed(&compare));
        QVERIFY(darkShare(compare.histogramPlot()) < 0.2);
        choose(*w, ThemeChoice::Dark);
        QTRY_VERIFY(darkShare(compare.histogramPlot()) > 0.5);
        QCOMPARE(compare.histogramPlot()->xAxis->tickLabelColor(), Theme::dark().plotText);
        QTRY_VERIFY(compare.timelineA()->theme().isDark);
        QVERIFY(compare.timelineB()->theme().isDark);
        auto* sweepPlot = sweep.findChild<QCustomPlot*>(QStringLiteral("sweepPlot"));
        QVERIFY(sweepPlot);
        QTRY_VERIFY(darkShare(sweepPlot) > 0.5);
        QCOMPARE(sweepPlot->xAxis->tickLabelColor(), Theme::dark().plotText);
        saveShot(&compare, QStringLiteral("compare-dark.png"));
        QSignalSpy swept(&sweep, &SweepView::finished);
        sweep.setScenario(std::make_shared<const Scenario>(w->scenarioModel()->scenario()));
        sweep.run();
        QVERIFY(swept.wait(10000));
        saveShot(&sweep, QStringLiteral("sweep-dark.png"));
        choose(*w, ThemeChoice::Light);
        QTRY_VERIFY(darkShare(compare.histogramPlot()) < 0.2);
        QTRY_VERIFY(darkShare(sweepPlot) < 0.2);
        QCOMPARE(sweepPlot->xAxis->tickLabelColor(), Theme::light().plotText);
    }

    // Presentation mode's slides stay white under the dark theme (a projector's), the timeline on them light too;
    // back in the window it is dark again.
    void presentationStaysLight()
    {
        auto w = testing::makeTestWindow({1280, 800});
        QVERIFY(testing::openAndRun(*w, QStringLiteral("01")));
        choose(*w, ThemeChoice::Dark);
        QTRY_VERIFY(w->timeline()->theme().isDark);
        auto* p = w->findChild<PresentationMode*>();
        QVERIFY(p);
        p->enter();
        QTest::keyClick(w.get(), Qt::Key_Space);
        QTRY_COMPARE_WITH_TIMEOUT(p->runState(), PresentationMode::RunState::Finished, 10000);
        QTest::keyClick(w.get(), Qt::Key_Right);
        QTRY_VERIFY(w->timeline()->isVisible());
        QTRY_VERIFY(!w->timeline()->theme().isDark);
        QTRY_VERIFY(darkShare(w->timeline()) < 0.2);
        saveShot(w.get(), QStringLiteral("presentation-dark-theme.png"));
        p->leave();
        QTRY_VERIFY(w->timeline()->theme().isDark);
    }

    // The app: a kept Dark applies at the next start, --theme overrides it for one start, a wrong one is refused.
    void appStartsInTheKeptTheme_data()
    {
        QTest::addColumn<QString>("kept");
        QTest::addColumn<QString>("option");
        QTest::addColumn<bool>("dark");
        QTest::newRow("kept dark") << QStringLiteral("dark") << QString() << true;
        QTest::newRow("--theme light over kept dark") << QStringLiteral("dark") << QStringLiteral("light") << false;
        QTest::newRow("--theme dark") << QString() << QStringLiteral("dark") << true;
    }

    void appStartsInTheKeptTheme()
    {
        QFETCH(QString, kept);
        QFETCH(QString, option);
        QFETCH(bool, dark);
        QTemporaryDir dir;
        const QString config = dir.filePath(QStringLiteral("config"));
        if (!kept.isEmpty()) {
            QSettings settings(config + QStringLiteral("/StreamScope/StreamScope.conf"), QSettings::IniFormat);
            settings.setValue(QStringLiteral("view/theme"), kept);
        }
        const QString shot = dir.filePath(QStringLiteral("window.png"));
        QStringList arguments = {QStringLiteral("01"),
                                 QStringLiteral("--screenshot"),
                                 shot,
                                 QStringLiteral("--quit-after-run"),
                                 QStringLiteral("--width"),
                                 QStringLiteral("900"),
                                 QStringLiteral("--height"),
                                 QStringLiteral("600")};
        if (!option.isEmpty())
            arguments << QStringLiteral("--theme") << option;
        const int code = runApp(config, arguments);
        QCOMPARE(code, 0);
        const QImage image(shot);
        QVERIFY(!image.isNull());
        const double share = darkShare(image);
        QVERIFY2(dark ? share > 0.5 : share < 0.3, qPrintable(QString::number(share)));
    }

    void appRefusesAnUnknownTheme()
    {
        QTemporaryDir dir;
        QCOMPARE(runApp(dir.filePath(QStringLiteral("config")), {QStringLiteral("--theme"), QStringLiteral("purple")}),
                 2);
    }

private:
    static int runApp(const QString& config, const QStringList& arguments)
    {
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
        env.insert(QStringLiteral("XDG_CONFIG_HOME"), config);
        QProcess app;
        app.setProcessEnvironment(env);
        app.setProcessChannelMode(QProcess::MergedChannels);
        app.start(appPath(), arguments);
        if (!app.waitForStarted(10000) || !app.waitForFinished(60000)) {
            app.kill();
            app.waitForFinished();
            return -1;
        }
        if (app.exitCode() != 0)
            qWarning("%s", app.readAll().constData());
        return app.exitStatus() == QProcess::NormalExit ? app.exitCode() : -2;
    }

    QPalette m_startPalette;
};

QTEST_MAIN(TestTheme)
#include "tst_theme.moc"
