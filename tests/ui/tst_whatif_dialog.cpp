// Analysis ▸ What if… (whatif_dialog.h, MainWindow::replayWhatIf, CompareView::compareWithReplay) on the offscreen
// platform: a GPU recording opened, a setting chosen in the dialog, the replay shown beside the recording in the
// compare window with the replay's error stated first; disabled, with the reason, for a trace that is not one.
#include "compare_view.h"
#include "main_window.h"
#include "timeline_view.h"
#include "whatif.h"
#include "whatif_dialog.h"
#include "window_fixture.h"

#include <QAction>
#include <QApplication>
#include <QComboBox>
#include <QDir>
#include <QSettings>
#include <QSignalSpy>
#include <QTest>
#include <QTimer>

using namespace streamscope;
using namespace streamscope::testing;

namespace {

QString h200(const char* name)
{
    return QStringLiteral(STREAMSCOPE_SOURCE_DIR "/tests/data/h200/") + QString::fromUtf8(name);
}

// With STREAMSCOPE_SCREENSHOT_DIR set, as tst_compare does: a picture of the window for the docs.
void saveScreenshot(QWidget* w, const QString& name)
{
    const QString dir = qEnvironmentVariable("STREAMSCOPE_SCREENSHOT_DIR");
    if (!dir.isEmpty())
        w->grab().save(QDir(dir).filePath(name));
}

bool openTrace(MainWindow& w, const QString& path)
{
    QSignalSpy shown(&w, &MainWindow::traceShown);
    if (!w.openPath(path))
        return false;
    return (shown.count() > 0 || shown.wait(10000)) && w.currentTrace();
}

} // namespace

class TestWhatIfDialog : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        QCoreApplication::setOrganizationName(QStringLiteral("StreamScopeTests"));
        QCoreApplication::setApplicationName(QStringLiteral("tst_whatif_dialog"));
    }
    void init() { QSettings().clear(); }

    void dialogOffersTheRecordingsSettings()
    {
        auto trace = importTraceFile(h200("variants/11-hardware-queues--connections-8.json").toStdString());
        QVERIFY(trace);
        auto scenario = recordedScenario(*trace);
        QVERIFY(scenario);
        WhatIfDialog dialog(*scenario, QStringLiteral("11"));
        QVERIFY(dialog.keyBox()->findData(QStringLiteral("connections")) >= 0);
        QVERIFY(dialog.keyBox()->findData(QStringLiteral("priority.s31")) >= 0);
        QVERIFY(dialog.keyBox()->findData(QStringLiteral("kind.s0")) >= 0);
        // Starts from what the recording ran with.
        dialog.setSetting(QStringLiteral("connections"), QString());
        dialog.keyBox()->setCurrentIndex(0);
        dialog.keyBox()->setCurrentIndex(dialog.keyBox()->findData(QStringLiteral("connections")));
        QCOMPARE(dialog.valueBox()->currentText(), QStringLiteral("8"));
        // A bad value keeps the dialog open and names the key.
        dialog.setSetting(QStringLiteral("connections"), QStringLiteral("40"));
        dialog.accept();
        QVERIFY(dialog.result() != QDialog::Accepted);
        QVERIFY2(dialog.errorText().contains(QStringLiteral("--set connections")), qPrintable(dialog.errorText()));
        dialog.show();
        saveScreenshot(&dialog, QStringLiteral("whatif-dialog.png"));
        dialog.setSetting(QStringLiteral("connections"), QStringLiteral("32"));
        dialog.accept();
        QCOMPARE(dialog.result(), int(QDialog::Accepted));
        QVERIFY(dialog.setting() == (ReplaySetting{"connections", "32"}));
    }

    void whatIfShowsTheReplayBesideTheRecording()
    {
        auto w = makeTestWindow(QSize(1200, 800));
        QVERIFY(openTrace(*w, h200("variants/11-hardware-queues--connections-8.json")));
        QAction* action = w->whatIfAction();
        QVERIFY(action);
        QVERIFY2(action->isEnabled(), qPrintable(action->toolTip()));

        // The menu's action opens the dialog (modal); choose 32 connections there and replay.
        bool answered = false;
        QTimer::singleShot(0, this, [&answered] {
            auto* dialog = qobject_cast<WhatIfDialog*>(QApplication::activeModalWidget());
            if (!dialog)
                return;
            dialog->setSetting(QStringLiteral("connections"), QStringLiteral("32"));
            answered = true;
            dialog->accept();
        });
        action->trigger();
        QVERIFY(answered);
        CompareView* view = w->compareView();
        QVERIFY(view);
        QSignalSpy shown(view, &CompareView::comparisonShown);
        QVERIFY(view->isBusy() || shown.count() > 0);
        QVERIFY(shown.count() > 0 || shown.wait(20000));

        // A: the recording as opened; B: the replay with the setting.
        QCOMPARE(view->timelineA()->trace(), w->currentTrace()->trace);
        QVERIFY(view->timelineB()->trace());
        QVERIFY(view->timelineB()->trace()->info.source == TraceSource::Simulator);
        QVERIFY2(view->nameA().endsWith(QStringLiteral("(recorded)")), qPrintable(view->nameA()));
        QCOMPARE(view->nameB(), QStringLiteral("replay: connections=32"));
        // The replay's error on the unchanged run comes first, then the comparison.
        QVERIFY2(view->notice().startsWith(QStringLiteral("replay of the unchanged run: makespan ")),
                 qPrintable(view->notice()));
        QVERIFY(view->notice().contains(QStringLiteral("recorded (")));
        const QString summary = view->summary();
        const qsizetype error = summary.indexOf(QStringLiteral("replay of the unchanged run"));
        const qsizetype takes = summary.indexOf(QStringLiteral(" takes "));
        QVERIFY2(error >= 0 && error < 10 && takes > error, qPrintable(summary));
        QVERIFY(summary.contains(QStringLiteral("faster")));
        QVERIFY(view->comparison());
        QVERIFY(view->comparison()->b.makespanNs < view->comparison()->a.makespanNs);
        QVERIFY(!view->metricRow(QStringLiteral("Makespan")).isEmpty());
        view->resize(1400, 900);
        saveScreenshot(view, QStringLiteral("whatif.png"));

        // Another comparison drops the notice.
        view->setTraces(w->currentTrace()->trace, QStringLiteral("a"), w->currentTrace()->trace, QStringLiteral("b"));
        QVERIFY(view->notice().isEmpty());
    }

    void disabledWithTheReasonForOtherTraces()
    {
        auto w = makeTestWindow(QSize(1000, 700));
        QAction* action = w->whatIfAction();
        QVERIFY(action);
        QVERIFY(!action->isEnabled()); // nothing open yet
        QVERIFY(openAndRun(*w, QStringLiteral("01")));
        QVERIFY(!action->isEnabled());
        QVERIFY2(action->toolTip().contains(QStringLiteral("not recorded on a GPU")), qPrintable(action->toolTip()));
        QCOMPARE(w->replayWhatIf({{"streams", "2"}}), nullptr);
        QVERIFY(w->errorMessage().contains(QStringLiteral("not recorded on a GPU")));
        // A recording makes it available again.
        QVERIFY(openTrace(*w, h200("13-stream-priorities.json")));
        QVERIFY(action->isEnabled());
    }
};

QTEST_MAIN(TestWhatIfDialog)
#include "tst_whatif_dialog.moc"
