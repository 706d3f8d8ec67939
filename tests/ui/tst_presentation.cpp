// Presentation mode on the offscreen platform: entering it on lesson 01 hides the docks, toolbars and menu and makes
// the text big; the keys step set up → run → timeline → explanation, with the trace on the timeline at step 3 and
// the lesson's effect in the explanation at step 4; the next key opens the contrasting variant, back returns to
// the lesson's explanation; Esc (and the menu action's F11) put the window back as it was, the lesson it showed
// (not the contrast presented last) included.
// With STREAMSCOPE_PRESENTATION_SHOTS=DIR each step is saved as DIR/NN-step.png (to look at the slides).
#include "format.h"
#include "main_window.h"
#include "presentation_mode.h"
#include "run_controller.h"
#include "scenario_json.h"
#include "scenario_model.h"
#include "sweep_view.h"
#include "timeline_view.h"
#include "window_fixture.h"

#include <QAction>
#include <QCoreApplication>
#include <QDir>
#include <QDockWidget>
#include <QFontInfo>
#include <QLabel>
#include <QMenuBar>
#include <QScreen>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTest>
#include <QToolBar>

#include <cmath>
#include <memory>

using namespace streamscope;

namespace {

constexpr int kRunTimeoutMs = 30000;

QStringList visibleDocks(const QMainWindow& w)
{
    QStringList names;
    const auto docks = w.findChildren<QDockWidget*>();
    for (const QDockWidget* d : docks)
        if (d->isVisible())
            names << d->objectName();
    names.sort();
    return names;
}

int visibleToolBars(const QMainWindow& w)
{
    int n = 0;
    const auto bars = w.findChildren<QToolBar*>();
    for (const QToolBar* b : bars)
        n += b->isVisible() ? 1 : 0;
    return n;
}

} // namespace

class TestPresentation : public QObject {
    Q_OBJECT
private:
    std::unique_ptr<MainWindow> makeWindow() { return testing::makeTestWindow({1400, 900}); }

    bool openAndRun(MainWindow& w, const QString& lesson, const QString& variant = {})
    {
        return testing::openAndRun(w, lesson, variant, kRunTimeoutMs);
    }

    static PresentationMode* presentation(const MainWindow& w) { return w.findChild<PresentationMode*>(); }

    // With screenshots asked for, the window as big as the screen (a bare X server has no window manager to make it
    // full screen).
    static void sizeForShots(MainWindow& w)
    {
        if (!qEnvironmentVariableIsEmpty("STREAMSCOPE_PRESENTATION_SHOTS"))
            w.setGeometry(w.screen()->geometry());
    }

    // The screenshot of a step, when asked for.
    void shot(MainWindow& w, const QString& name)
    {
        const QString dir = qEnvironmentVariable("STREAMSCOPE_PRESENTATION_SHOTS");
        if (dir.isEmpty())
            return;
        QDir().mkpath(dir);
        QTest::qWait(300); // queued replots and the slide's fitting
        QVERIFY(w.grab().save(QDir(dir).filePath(name + QStringLiteral(".png"))));
    }

private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName(QStringLiteral("StreamScopeTest"));
        QCoreApplication::setApplicationName(QStringLiteral("tst_presentation"));
        QSettings().clear();
    }

    void timelineDefaultsAreUnchanged()
    {
        TimelineView view;
        QCOMPARE(view.fontScale(), 1.0);
        QVERIFY(!view.presentationStyle());
        QVERIFY(!view.spansPlottable()->highContrast());
        QVERIFY(!view.spansPlottable()->labelFont().bold());
    }

    void menuActionEntersAndLeaves()
    {
        auto w = makeWindow();
        QVERIFY(openAndRun(*w, QStringLiteral("01")));
        auto* action = w->findChild<QAction*>(QStringLiteral("presentation-mode"));
        QVERIFY(action);
        QCOMPARE(action->shortcut(), QKeySequence(Qt::Key_F11));
        PresentationMode* p = presentation(*w);
        QVERIFY(p);
        QSignalSpy active(p, &PresentationMode::activeChanged);
        action->trigger();
        QVERIFY(p->isActive());
        QVERIFY(action->isChecked());
        QVERIFY(w->isFullScreen());
        action->trigger();
        QVERIFY(!p->isActive());
        QVERIFY(!action->isChecked());
        QCOMPARE(active.count(), 2);
    }

    void enteringHidesDocksAndEnlargesFonts()
    {
        auto w = makeWindow();
        QVERIFY(openAndRun(*w, QStringLiteral("01")));
        const QStringList docksBefore = visibleDocks(*w);
        QVERIFY(!docksBefore.isEmpty());
        QVERIFY(visibleToolBars(*w) > 0);
        const int appFontPx = QFontInfo(w->font()).pixelSize();

        PresentationMode* p = presentation(*w);
        p->enter();
        QVERIFY(p->isActive());
        QVERIFY(visibleDocks(*w).isEmpty());
        QCOMPARE(visibleToolBars(*w), 0);
        QVERIFY(!w->menuBar()->isVisible());
        QVERIFY(!w->statusBar()->isVisible());
        QVERIFY(w->isFullScreen());
        QCOMPARE(w->centralWidget(), p->stage());

        // Big text on the slide and on the timeline, which is high-contrast.
        QVERIFY2(p->bodyPixelSize() >= 2 * appFontPx, qPrintable(QString::number(p->bodyPixelSize())));
        auto* title = p->stage()->findChild<QLabel*>(QStringLiteral("presentationTitle"));
        QVERIFY(title);
        QVERIFY(QFontInfo(title->font()).pixelSize() > p->bodyPixelSize());
        QVERIFY(title->font().bold());
        QVERIFY(w->timeline()->fontScale() >= 1.5);
        QVERIFY(w->timeline()->presentationStyle());
        QVERIFY(w->timeline()->spansPlottable()->labelFont().bold());

        // Step 1 shows the lesson's title, what to look for and what runs, no timeline.
        QCOMPARE(p->currentStep(), PresentationMode::Step::SetUp);
        QCOMPARE(p->stepIndicator(), QStringLiteral("1/4 Set up"));
        const QString text = p->slideText();
        QVERIFY2(text.contains(QStringLiteral("Two streams")), qPrintable(text));
        QVERIFY2(text.contains(QStringLiteral("What runs")), qPrintable(text));
        QVERIFY2(text.contains(QStringLiteral("non-blocking")), qPrintable(text));
        QVERIFY2(text.contains(QStringLiteral("Thread main")), qPrintable(text));
        QVERIFY2(text.contains(QStringLiteral("transpose")), qPrintable(text));
        QVERIFY(!w->timeline()->isVisible());
        p->leave();
    }

    void keysStepThroughTheLessonAndIntoItsVariant()
    {
        auto w = makeWindow();
        QVERIFY(openAndRun(*w, QStringLiteral("01")));
        PresentationMode* p = presentation(*w);
        sizeForShots(*w);
        p->enter();
        shot(*w, QStringLiteral("01-set-up"));

        // 2: Run, on the window's backend (the simulator here), with progress until it finishes.
        QSignalSpy finished(w->runController(), &RunController::finished);
        QTest::keyClick(w.get(), Qt::Key_Space);
        QCOMPARE(p->currentStep(), PresentationMode::Step::Run);
        QCOMPARE(p->stepIndicator(), QStringLiteral("2/4 Run"));
        QVERIFY(p->slideText().contains(QStringLiteral("Running on the simulator"))
                || p->runState() == PresentationMode::RunState::Finished);
        QTRY_COMPARE_WITH_TIMEOUT(p->runState(), PresentationMode::RunState::Finished, kRunTimeoutMs);
        QCOMPARE(finished.count(), 1);
        QTRY_VERIFY_WITH_TIMEOUT(p->slideText().contains(QStringLiteral("Finished on the simulator")), kRunTimeoutMs);
        QVERIFY(!w->timeline()->isVisible());
        shot(*w, QStringLiteral("02-run"));

        // 3: the timeline, with the trace, fitted; the keys are the presentation's, not the timeline's pan.
        QTest::keyClick(w.get(), Qt::Key_Right);
        QCOMPARE(p->currentStep(), PresentationMode::Step::Timeline);
        QTRY_VERIFY(w->timeline()->isVisible());
        QVERIFY(w->timeline()->trace());
        QCOMPARE(w->timeline()->trace(), w->currentTrace()->trace);
        QVERIFY(w->timeline()->spansPlottable()->highContrast());
        const auto [first, last] = w->timeline()->trace()->timeRange();
        const auto [from, to] = w->timeline()->visibleTimeRange();
        QVERIFY(from <= double(first) && to >= double(last));
        // Every row fits: the lanes were sized to the height.
        QVERIFY(w->timeline()->laneHeight() * w->timeline()->timelineLayout().totalLanes()
                <= w->timeline()->timeAxisRect().height() + w->timeline()->laneHeight());
        // At the slide's lane height, not stretched further as the window's rows are.
        QCOMPARE(w->timeline()->shownLaneHeight(), double(w->timeline()->laneHeight()));
        shot(*w, QStringLiteral("03-timeline"));

        // 4: the explanation beside the timeline: the verdict and the effect (makespan, overlap).
        QTest::keyClick(w->timeline(), Qt::Key_Right);
        QCOMPARE(p->currentStep(), PresentationMode::Step::Explanation);
        QCOMPARE(w->timeline()->visibleTimeRange(), std::make_pair(from, to));
        const QString explanation = p->explanationText();
        QVERIFY2(explanation.contains(QStringLiteral("PASS")), qPrintable(explanation));
        QVERIFY2(explanation.contains(QStringLiteral("Makespan")), qPrintable(explanation));
        QVERIFY2(explanation.contains(QStringLiteral("overlap")), qPrintable(explanation));
        QVERIFY2(explanation.contains(QStringLiteral("Speedup over serial")), qPrintable(explanation));
        QVERIFY(p->slideText().contains(QStringLiteral("Makespan")));
        QVERIFY(w->timeline()->isVisible());
        auto* panel = p->stage()->findChild<QLabel*>(QStringLiteral("presentationExplanation"));
        QVERIFY(panel && panel->isVisible());
        // Beside the timeline or (few rows, as here) below it, never over it.
        const QRect timelineRect(w->timeline()->mapTo(p->stage(), QPoint(0, 0)), w->timeline()->size());
        QVERIFY(!panel->geometry().intersects(timelineRect));
        QVERIFY(panel->geometry().top() >= timelineRect.bottom());
        shot(*w, QStringLiteral("04-explanation"));

        // Past the last step: the contrasting variant, from its Set up step.
        QCOMPARE(p->nextDocument(), std::make_pair(QStringLiteral("01-two-streams"), QStringLiteral("one-stream")));
        QSignalSpy opened(w.get(), &MainWindow::documentOpened);
        QTest::keyClick(w.get(), Qt::Key_PageDown); // what presentation clickers send
        QCOMPARE(p->currentStep(), PresentationMode::Step::SetUp);
        QVERIFY(opened.wait(kRunTimeoutMs));
        QCOMPARE(w->lessonId(), QStringLiteral("01-two-streams"));
        QCOMPARE(w->lessonVariant(), QStringLiteral("one-stream"));
        QTRY_VERIFY(p->slideText().contains(QStringLiteral("Both kernels in one stream")));
        QVERIFY(p->slideText().contains(QStringLiteral("What changes: The transpose goes into s1 too")));
        shot(*w, QStringLiteral("05-variant-set-up"));

        QTest::keyClick(w.get(), Qt::Key_Space);
        QTRY_COMPARE_WITH_TIMEOUT(p->runState(), PresentationMode::RunState::Finished, kRunTimeoutMs);
        QTest::keyClick(w.get(), Qt::Key_Space);
        QTest::keyClick(w.get(), Qt::Key_Space);
        QCOMPARE(p->currentStep(), PresentationMode::Step::Explanation);
        QTRY_VERIFY(w->timeline()->isVisible());
        const QString contrast = p->explanationText();
        QVERIFY2(contrast.contains(QStringLiteral("FAIL")), qPrintable(contrast));
        QVERIFY2(contrast.contains(QStringLiteral("without the change")), qPrintable(contrast));
        shot(*w, QStringLiteral("06-variant-explanation"));
        QCOMPARE(p->nextDocument().first, QStringLiteral("02-one-stream"));

        // Back through the steps, and before the first one to the lesson's explanation.
        QTest::keyClick(w.get(), Qt::Key_PageUp);
        QCOMPARE(p->currentStep(), PresentationMode::Step::Timeline);
        QTest::keyClick(w.get(), Qt::Key_Left);
        QTest::keyClick(w.get(), Qt::Key_Left);
        QCOMPARE(p->currentStep(), PresentationMode::Step::SetUp);
        QTest::keyClick(w.get(), Qt::Key_Left);
        QCOMPARE(p->currentStep(), PresentationMode::Step::Explanation);
        QTRY_COMPARE_WITH_TIMEOUT(w->lessonVariant(), QString(), kRunTimeoutMs);
        QTRY_VERIFY_WITH_TIMEOUT(w->timeline()->isVisible(), kRunTimeoutMs);
        QVERIFY(p->explanationText().contains(QStringLiteral("PASS")));
        p->leave();
    }

    void everyLessonPresents_data()
    {
        QTest::addColumn<QString>("lesson");
        for (int i = 1; i <= 15; ++i)
            QTest::newRow(qPrintable(QString::number(i))) << QStringLiteral("%1").arg(i, 2, 10, QLatin1Char('0'));
    }

    // Every lesson: its streams on the Set up slide; after its run, the trace on the timeline and an explanation
    // with its verdict and makespan.
    void everyLessonPresents()
    {
        QFETCH(QString, lesson);
        auto w = makeWindow();
        QVERIFY(openAndRun(*w, lesson));
        PresentationMode* p = presentation(*w);
        sizeForShots(*w);
        p->enter();
        const QString text = p->slideText();
        QVERIFY2(text.contains(QStringLiteral("What runs")), qPrintable(text));
        const std::string& firstStream = w->scenarioModel()->scenario().streams.front().name;
        QVERIFY2(text.contains(QString::fromStdString(firstStream)), qPrintable(text));
        shot(*w, QStringLiteral("lesson-%1-1-set-up").arg(lesson));
        p->step();
        QTRY_COMPARE_WITH_TIMEOUT(p->runState(), PresentationMode::RunState::Finished, kRunTimeoutMs);
        p->step();
        QTRY_VERIFY_WITH_TIMEOUT(w->timeline()->isVisible(), kRunTimeoutMs);
        QCOMPARE(w->timeline()->trace(), w->currentTrace()->trace);
        shot(*w, QStringLiteral("lesson-%1-3-timeline").arg(lesson));
        p->step();
        const QString explanation = p->explanationText();
        QVERIFY2(explanation.contains(QStringLiteral("PASS")), qPrintable(explanation)); // the lesson itself passes
        QVERIFY2(explanation.contains(QStringLiteral("Makespan")), qPrintable(explanation));
        // The sentence that names the effect the lesson teaches comes first among the reasons.
        const TraceReport& report = w->currentTrace()->report;
        QVERIFY(!report.effect.isEmpty());
        int effectAt = -1;
        for (const Diagnostic& d : report.diagnostics)
            if (qs(d.rule) == report.effect)
                effectAt = int(explanation.indexOf(qs(d.message).left(40)));
        QVERIFY2(effectAt >= 0, qPrintable(report.effect + QStringLiteral(" not in: ") + explanation));
        for (const Diagnostic& d : report.diagnostics) {
            const int at = int(explanation.indexOf(qs(d.message).left(40)));
            QVERIFY2(at < 0 || at >= effectAt, qPrintable(qs(d.rule)));
        }
        shot(*w, QStringLiteral("lesson-%1-4-explanation").arg(lesson));
        p->leave();
    }

    // Stepping on into the lesson's contrast and leaving: the window shows the lesson it showed before presenting,
    // not the variant presented last — its title, scenario, trace and zoom — so that a sweep after it sweeps that.
    void leavingShowsTheDocumentItShowedBefore()
    {
        auto w = makeWindow();
        QVERIFY(openAndRun(*w, QStringLiteral("02")));
        QTest::qWait(50);
        TimelineView* timeline = w->timeline();
        const auto [first, last] = timeline->trace()->timeRange();
        const double span = double(last - first);
        timeline->setVisibleTimeRange(double(first) + span * 0.2, double(first) + span * 0.6);
        const auto zoom = timeline->visibleTimeRange();
        const QString title = w->windowTitle();
        const QString lesson = w->lessonId();
        const std::string scenario = scenarioToJson(w->scenarioModel()->scenario());
        const auto trace = w->currentTrace();
        const QStringList docks = visibleDocks(*w);
        // The sweep's inputs as the user left them.
        auto* sweep = w->findChild<SweepView*>();
        QVERIFY(sweep);
        sweep->setKnob(SweepKnob::KernelSize);
        sweep->setValuesText(QStringLiteral("0.5, 1, 3"));
        sweep->setThread(0);
        QCOMPARE(lesson, QStringLiteral("02-one-stream"));
        QCOMPARE(w->lessonVariant(), QString());
        QVERIFY(!w->isModified());

        PresentationMode* p = presentation(*w);
        p->enter();
        for (int i = 0; i < 3; ++i)
            p->step();
        QTRY_COMPARE_WITH_TIMEOUT(p->runState(), PresentationMode::RunState::Finished, kRunTimeoutMs);
        QCOMPARE(p->currentStep(), PresentationMode::Step::Explanation);
        QSignalSpy opened(w.get(), &MainWindow::documentOpened);
        p->step(); // the contrast
        QVERIFY(opened.wait(kRunTimeoutMs));
        QCOMPARE(w->lessonVariant(), QStringLiteral("two-streams"));
        p->step(); // and its run
        QTRY_COMPARE_WITH_TIMEOUT(p->runState(), PresentationMode::RunState::Finished, kRunTimeoutMs);
        QVERIFY(w->windowTitle().startsWith(QStringLiteral("02-one-stream two-streams")));

        QTest::keyClick(w.get(), Qt::Key_Escape);
        QVERIFY(!p->isActive());
        QCOMPARE(w->windowTitle(), title);
        QCOMPARE(w->lessonId(), lesson);
        QCOMPARE(w->lessonVariant(), QString());
        QVERIFY(!w->isModified());
        QCOMPARE(scenarioToJson(w->scenarioModel()->scenario()), scenario);
        QCOMPARE(w->currentTrace(), trace);
        QCOMPARE(timeline->trace(), trace->trace);
        const auto restored = timeline->visibleTimeRange();
        QVERIFY(std::abs(restored.first - zoom.first) < 1 && std::abs(restored.second - zoom.second) < 1);
        QCOMPARE(visibleDocks(*w), docks);
        // Nothing of the variant comes after: no run replaces the trace, and the sweep has the lesson's scenario.
        QTest::qWait(200);
        QCOMPARE(w->currentTrace(), trace);
        QVERIFY(sweep->scenario());
        QCOMPARE(scenarioToJson(*sweep->scenario()), scenario);
        QVERIFY(sweep->knob() == SweepKnob::KernelSize);
        QCOMPARE(sweep->valuesText(), QStringLiteral("0.5, 1, 3"));
        QCOMPARE(sweep->thread(), 0);
    }

    void escapeRestoresTheWindow()
    {
        auto w = makeWindow();
        QVERIFY(openAndRun(*w, QStringLiteral("01")));
        QTest::qWait(50);
        const QStringList docksBefore = visibleDocks(*w);
        const int barsBefore = visibleToolBars(*w);
        const QRect geometryBefore = w->geometry();
        QWidget* centralBefore = w->centralWidget();
        TimelineView* timeline = w->timeline();
        const double scaleBefore = timeline->fontScale();
        const int laneBefore = timeline->laneHeight();

        PresentationMode* p = presentation(*w);
        p->enter();
        QTest::keyClick(w.get(), Qt::Key_Space);
        QTest::keyClick(w.get(), Qt::Key_Space);
        QTest::keyClick(w.get(), Qt::Key_Space);
        QCOMPARE(p->currentStep(), PresentationMode::Step::Explanation);
        QTRY_VERIFY_WITH_TIMEOUT(timeline->isVisible(), kRunTimeoutMs);
        QVERIFY(timeline->laneHeight() != laneBefore || timeline->fontScale() != scaleBefore);

        QTest::keyClick(timeline, Qt::Key_Escape);
        QVERIFY(!p->isActive());
        QCOMPARE(w->centralWidget(), centralBefore);
        QVERIFY(timeline->isVisible());
        QCOMPARE(visibleDocks(*w), docksBefore);
        QCOMPARE(visibleToolBars(*w), barsBefore);
        QVERIFY(w->menuBar()->isVisible());
        QVERIFY(w->statusBar()->isVisible());
        QVERIFY(!w->isFullScreen());
        QTRY_COMPARE(w->geometry(), geometryBefore);
        QCOMPARE(timeline->fontScale(), scaleBefore);
        QCOMPARE(timeline->laneHeight(), laneBefore);
        QVERIFY(!timeline->presentationStyle());
        QVERIFY(!timeline->spansPlottable()->highContrast());
        QVERIFY(timeline->highlightedSpans().empty());
        QTRY_VERIFY(!w->findChild<QWidget*>(QStringLiteral("presentationStage")));

        // Keys are the timeline's again.
        const auto before = timeline->visibleTimeRange();
        timeline->setFocus();
        QTest::keyClick(timeline, Qt::Key_D);
        QTRY_VERIFY(timeline->visibleTimeRange() != before);
    }
};

QTEST_MAIN(TestPresentation)
#include "tst_presentation.moc"
