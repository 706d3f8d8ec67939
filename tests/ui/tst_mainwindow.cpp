// The main window on the offscreen platform: opening a lesson runs it on the simulator and the timeline gets the
// trace; a quick-control change re-simulates; selection follows between timeline, span table and inspector; saving
// is atomic and round-trips; traces open by content; GPU runs go through streamscope-cli (a stand-in script here)
// with errors shown and Cancel killing the child; and the built app exports images headless.
#include "analysis.h"
#include "analysis_panel.h"
#include "concurrency_plot.h"
#include "document_loader.h"
#include "format.h"
#include "main_window.h"
#include "metrics.h"
#include "property_editor.h"
#include "quick_controls.h"
#include "run_controller.h"
#include "scenario_editor.h"
#include "scenario_json.h"
#include "scenario_model.h"
#include "span_inspector.h"
#include "span_table_model.h"
#include "timeline_view.h"
#include "trace_import.h"
#include "trace_json.h"
#include "window_fixture.h"

#include <QCoreApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QImage>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QProcess>
#include <QSet>
#include <QSettings>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QToolBar>
#include <QTreeView>
#include <QUndoStack>

using namespace streamscope;

namespace {

QString appPath()
{
    // The app is built next to streamscope-cli.
    return QFileInfo(QStringLiteral(STREAMSCOPE_CLI)).dir().filePath(QStringLiteral("streamscope"));
}

// A stand-in for streamscope-cli: a shell script.
QString writeScript(const QTemporaryDir& dir, const QString& name, const QString& body)
{
    const QString path = dir.filePath(name);
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly))
        return {};
    f.write("#!/bin/sh\n");
    f.write(body.toUtf8());
    f.close();
    f.setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner);
    return path;
}

struct Process {
    int code = -1;
    QString out, err;
};

Process runApp(const QStringList& args, const QProcessEnvironment& env)
{
    QProcess p;
    p.setProcessEnvironment(env);
    p.start(appPath(), args);
    Process r;
    if (!p.waitForFinished(60000)) {
        p.kill();
        p.waitForFinished();
        r.err = QStringLiteral("timed out");
        return r;
    }
    r.code = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    r.out = QString::fromUtf8(p.readAllStandardOutput());
    r.err = QString::fromUtf8(p.readAllStandardError());
    return r;
}

// The title as the window manager shows it: "[*]" becomes "*" while there are unsaved edits.
QString shownTitle(const QWidget& w)
{
    const QString mark = w.isWindowModified() ? QStringLiteral("*") : QString();
    return QString(w.windowTitle()).replace(QStringLiteral("[*]"), mark);
}

QProcessEnvironment headlessEnv()
{
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.remove(QStringLiteral("DISPLAY"));
    env.remove(QStringLiteral("WAYLAND_DISPLAY"));
    env.remove(QStringLiteral("QT_QPA_PLATFORM"));
    env.insert(QStringLiteral("STREAMSCOPE_RESOURCES"), QStringLiteral(STREAMSCOPE_SOURCE_DIR "/resources"));
    return env;
}

} // namespace

class TestMainWindow : public QObject {
    Q_OBJECT
private:
    std::unique_ptr<MainWindow> makeWindow() { return testing::makeTestWindow({1400, 900}); }

    bool openAndRun(MainWindow& w, const QString& lesson, const QString& variant = {})
    {
        return testing::openAndRun(w, lesson, variant, 10000);
    }

private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName(QStringLiteral("StreamScopeTest"));
        QCoreApplication::setApplicationName(QStringLiteral("tst_mainwindow"));
        QSettings().clear();
    }

    void openLessonRunsOnTheSimulator()
    {
        auto w = makeWindow();
        QSignalSpy opened(w.get(), &MainWindow::documentOpened);
        QVERIFY(openAndRun(*w, QStringLiteral("01")));
        QCOMPARE(opened.count(), 1);
        const auto trace = w->currentTrace();
        QVERIFY(trace->trace->info.source == TraceSource::Simulator);
        QCOMPARE(w->timeline()->trace(), trace->trace);
        QVERIFY(trace->trace->spanCount() > 0);
        QCOMPARE(w->spanModel()->rowCount(), int(trace->trace->spanCount()));
        QCOMPARE(w->analysisPanel()->passedChecks(), 2);
        QCOMPARE(w->analysisPanel()->failedChecks(), 0);
        QVERIFY(w->analysisPanel()->html().contains(QStringLiteral("PASS")));
        QVERIFY(w->windowTitle().contains(QStringLiteral("01-two-streams")));
        QVERIFY(!w->isModified());
        QVERIFY(w->errorMessage().isEmpty());

        // The contrasting variant fails its key check.
        QVERIFY(openAndRun(*w, QStringLiteral("01"), QStringLiteral("one-stream")));
        QVERIFY(w->analysisPanel()->failedChecks() >= 1);
        QVERIFY(w->analysisPanel()->html().contains(QStringLiteral("FAIL")));
    }

    void criticalPathHighlight()
    {
        auto w = makeWindow();
        QVERIFY(openAndRun(*w, QStringLiteral("04"), QStringLiteral("blocking")));
        auto* action = w->findChild<QAction*>(QStringLiteral("highlight-critical-path"));
        QVERIFY(action);
        QVERIFY(w->timeline()->highlightedSpans().empty());
        auto countPathPixels = [&] {
            w->timeline()->replot(QCustomPlot::rpImmediateRefresh);
            const QImage img = w->timeline()->grab().toImage().convertToFormat(QImage::Format_RGB32);
            int n = 0;
            for (int y = 0; y < img.height(); ++y)
                for (int x = 0; x < img.width(); ++x) {
                    const QRgb c = img.pixel(x, y);
                    n += std::abs(qRed(c) - 0xF0) + std::abs(qGreen(c) - 0x3C) + std::abs(qBlue(c) - 0x96) < 60;
                }
            return n;
        };
        const int before = countPathPixels();
        action->setChecked(true);
        const auto trace = w->currentTrace()->trace;
        const CriticalPath path = criticalPath(*trace);
        std::vector<uint32_t> expected;
        for (const auto& s : path.segments)
            expected.push_back(s.span);
        QVERIFY(!expected.empty());
        QCOMPARE(w->timeline()->highlightedSpans(), expected);
        // The blocking variant's path runs through all four 1 ms kernels, one after the other.
        int kernels = 0;
        for (uint32_t s : expected)
            kernels += trace->spans.kind[s] == SpanKind::Kernel && trace->duration(s) >= 900000;
        QCOMPARE(kernels, 4);
        QVERIFY(countPathPixels() > before + 100);
        action->setChecked(false);
        QVERIFY(w->timeline()->highlightedSpans().empty());
    }

    void concurrencyPlotFollowsTheTimeline()
    {
        auto w = makeWindow();
        QVERIFY(openAndRun(*w, QStringLiteral("08")));
        ConcurrencyPlot* plot = w->concurrencyPlot();
        QVERIFY(plot);
        const auto trace = w->currentTrace()->trace;
        QCOMPARE(plot->maxConcurrency(), computeMetrics(*trace).maxConcurrency);
        QVERIFY(plot->graph0()->dataCount() > 2);
        // Zoom the timeline: the plot shows the same time range.
        const auto [first, last] = trace->timeRange();
        const double from = double(first) + 0.25 * double(last - first),
                     to = double(first) + 0.5 * double(last - first);
        w->timeline()->setVisibleTimeRange(from, to);
        w->timeline()->replot(QCustomPlot::rpImmediateRefresh);
        const auto [a, b] = plot->visibleTimeRange();
        const auto [ta, tb] = w->timeline()->visibleTimeRange();
        QVERIFY2(std::abs(a - ta) < 1 && std::abs(b - tb) < 1,
                 qPrintable(QStringLiteral("%1..%2 vs %3..%4").arg(a).arg(b).arg(ta).arg(tb)));
        // The two time axes line up.
        QCOMPARE(plot->axisRect()->left(), w->timeline()->timeAxisRect().left());
    }

    void quickControlReSimulates()
    {
        auto w = makeWindow();
        QVERIFY(openAndRun(*w, QStringLiteral("08")));
        const auto before = w->currentTrace();
        QCOMPARE(before->report.metrics.gpuSpanCount, 24);
        QSignalSpy shown(w.get(), &MainWindow::traceShown);
        QElapsedTimer clock;
        clock.start();
        w->quickControls()->chunksBox()->setValue(4);
        QVERIFY(shown.wait(5000));
        qInfo("chunks 8 -> 4: re-simulated and shown in %lld ms", clock.elapsed());
        QCOMPARE(w->currentTrace()->report.metrics.gpuSpanCount, 12);
        QCOMPARE(w->timeline()->trace(), w->currentTrace()->trace);
        QVERIFY(w->isModified());
        // Undo re-simulates too.
        w->scenarioModel()->undoStack()->undo();
        QVERIFY(shown.wait(5000));
        QCOMPARE(w->currentTrace()->report.metrics.gpuSpanCount, 24);
        // Pageable memory breaks the pipeline: the key check fails.
        QVERIFY(w->analysisPanel()->failedChecks() == 0);
        w->quickControls()->apply(
            [&] {
                QuickSettings q = w->quickControls()->settings();
                q.memory = MemoryMode::Pageable;
                return q;
            }(),
            QStringLiteral("host memory"));
        QVERIFY(shown.wait(5000));
        QVERIFY(w->analysisPanel()->failedChecks() >= 1);
    }

    void anInvalidEditKeepsTheTraceAndSaysWhy()
    {
        auto w = makeWindow();
        QVERIFY(openAndRun(*w, QStringLiteral("01")));
        const auto before = w->currentTrace();
        ScenarioModel* m = w->scenarioModel();
        Op op = *m->op(ScenarioItemRef::op(0, 0));
        op.stream = "missing";
        m->setOp(ScenarioItemRef::op(0, 0), op, QStringLiteral("stream"));
        QTest::qWait(100);
        QCOMPARE(w->currentTrace(), before);
        w->runScenario();
        QVERIFY(w->errorMessage().contains(QStringLiteral("/threads/0/ops/0/stream")));
        m->undoStack()->undo();
    }

    void selectionFollows()
    {
        auto w = makeWindow();
        QVERIFY(openAndRun(*w, QStringLiteral("03")));
        const auto& trace = *w->currentTrace()->trace;
        int kernel = -1;
        for (uint32_t i = 0; i < trace.spanCount() && kernel < 0; ++i)
            if (trace.spans.kind[i] == SpanKind::Kernel)
                kernel = int(i);
        QVERIFY(kernel >= 0);
        // Timeline -> table and inspector.
        w->timeline()->selectSpan(kernel);
        QCOMPARE(w->inspector()->span(), kernel);
        QVERIFY(w->inspector()->html().contains(qs(trace.spanName(uint32_t(kernel))).toHtmlEscaped()));
        const QModelIndex current = w->spanTable()->currentIndex();
        QVERIFY(current.isValid());
        QCOMPARE(w->spanProxy()->spanAtRow(current.row()), kernel);
        // Table -> timeline.
        const int other =
            w->spanProxy()->spanAtRow(0) == kernel ? w->spanProxy()->spanAtRow(1) : w->spanProxy()->spanAtRow(0);
        w->spanTable()->setCurrentIndex(w->spanProxy()->index(w->spanProxy()->rowOfSpan(other), 0));
        QCOMPARE(w->timeline()->selectedSpan(), other);
        QCOMPARE(w->inspector()->span(), other);
        // Inspector link -> timeline and table.
        QSignalSpy selected(w->timeline(), &TimelineView::spanSelected);
        Q_EMIT w->inspector()->spanActivated(kernel);
        QCOMPARE(selected.count(), 1);
        QCOMPARE(w->timeline()->selectedSpan(), kernel);
        QCOMPARE(w->spanProxy()->spanAtRow(w->spanTable()->currentIndex().row()), kernel);
        // The inspector lists the kernel's dependencies (its launch at least).
        QVERIFY(w->inspector()->html().contains(QStringLiteral("launched by")));
    }

    // Nothing the user made is lost: an edited scenario is autosaved a moment after the edit, and saving removes
    // the file. A file that a process which is gone left behind (a crash) is offered back; recovered, it is the
    // window's unsaved scenario, with the path it came from; discarded, it is deleted; one of a live process is
    // never offered.
    void autosaveAndRecovery()
    {
        QDir(MainWindow::autosaveDirectory()).removeRecursively();
        QTemporaryDir dir;
        auto w = makeWindow();
        w->setAutosaveDelay(0);
        QVERIFY(openAndRun(*w, QStringLiteral("05")));
        QVERIFY(!QFileInfo::exists(w->autosavePath()));
        w->quickControls()->threadsBox()->setValue(3);
        QVERIFY(w->isModified());
        QTRY_VERIFY(QFileInfo::exists(w->autosavePath()));
        auto autosaved = loadScenarioFile(w->autosavePath().toStdString());
        QVERIFY2(autosaved.ok(), autosaved.error().toString().c_str());
        QCOMPARE(QString::fromStdString(scenarioToJson(autosaved->scenario)),
                 QString::fromStdString(scenarioToJson(w->scenarioModel()->scenario())));
        const QString path = dir.filePath(QStringLiteral("mine.json"));
        QVERIFY(w->saveScenarioAs(path));
        QVERIFY(!QFileInfo::exists(w->autosavePath()));
        w->quickControls()->threadsBox()->setValue(4);
        QTRY_VERIFY(QFileInfo::exists(w->autosavePath()));
        const std::string edited = scenarioToJson(w->scenarioModel()->scenario());

        // The same files as a crashed process (pid 2^22 + 1 is beyond Linux's pid range: never alive) left them.
        const QString crashed =
            QDir(MainWindow::autosaveDirectory()).filePath(QStringLiteral("scenario-4194305-1.json"));
        QVERIFY(QFile::copy(w->autosavePath(), crashed));
        QVERIFY(QFile::copy(w->autosavePath() + QStringLiteral(".origin"), crashed + QStringLiteral(".origin")));
        // This process's own file (a window still open) is not offered.
        auto other = makeWindow();
        QStringList offered;
        other->setRecoverPrompt([&offered](const QString& what) {
            offered << what;
            return MainWindow::RecoverChoice::Keep;
        });
        QVERIFY(!other->recoverAutosaved());
        QCOMPARE(offered.size(), 1);
        QVERIFY2(offered.front().contains(path), qPrintable(offered.front()));
        QVERIFY(QFileInfo::exists(crashed)); // kept for later
        other->setRecoverPrompt([](const QString&) { return MainWindow::RecoverChoice::Recover; });
        QVERIFY(other->recoverAutosaved());
        QVERIFY(!QFileInfo::exists(crashed));
        QVERIFY(other->isModified());
        QCOMPARE(other->documentPath(), path);
        QCOMPARE(QString::fromStdString(scenarioToJson(other->scenarioModel()->scenario())),
                 QString::fromStdString(edited));

        // Discarded: deleted, and nothing is offered again.
        QVERIFY(QFile::copy(w->autosavePath(), crashed));
        other->setRecoverPrompt([](const QString&) { return MainWindow::RecoverChoice::Discard; });
        QVERIFY(!other->recoverAutosaved());
        QVERIFY(!QFileInfo::exists(crashed));
        other->setUnsavedPrompt([] { return MainWindow::UnsavedChoice::Discard; });
        w->setUnsavedPrompt([] { return MainWindow::UnsavedChoice::Discard; });
        const QString own = w->autosavePath();
        w->close();
        QVERIFY(!QFileInfo::exists(own)); // a window that closes leaves nothing behind
    }

    void saveIsAtomicAndRoundTrips()
    {
        QTemporaryDir dir;
        auto w = makeWindow();
        QVERIFY(openAndRun(*w, QStringLiteral("05")));
        w->quickControls()->threadsBox()->setValue(3);
        QVERIFY(w->isModified());
        const QString path = dir.filePath(QStringLiteral("three-threads.json"));
        QFile old(path);
        QVERIFY(old.open(QIODevice::WriteOnly));
        old.write("the previous content");
        old.close();
        QVERIFY(w->saveScenarioAs(path));
        QVERIFY(!w->isModified());
        QCOMPARE(w->documentPath(), path);
        QVERIFY(w->windowTitle().contains(QStringLiteral("three-threads")));
        QVERIFY(w->recentFiles().contains(QFileInfo(path).absoluteFilePath()));
        // Replaced whole, with no temporary file left behind.
        QCOMPARE(QDir(dir.path()).entryList(QDir::Files | QDir::Hidden),
                 QStringList{QStringLiteral("three-threads.json")});
        auto loaded = loadScenarioFile(path.toStdString());
        QVERIFY2(loaded, loaded ? "" : loaded.error().toString().c_str());
        QCOMPARE(QString::fromStdString(scenarioToJson(loaded->scenario)),
                 QString::fromStdString(scenarioToJson(w->scenarioModel()->scenario())));
        QCOMPARE(loaded->scenario.threads.size(), w->scenarioModel()->scenario().threads.size());

        // Opened again in a new window: the same scenario, not modified.
        auto w2 = makeWindow();
        QVERIFY(openAndRun(*w2, path));
        QCOMPARE(QString::fromStdString(scenarioToJson(w2->scenarioModel()->scenario())),
                 QString::fromStdString(scenarioToJson(w->scenarioModel()->scenario())));
        QVERIFY(!w2->isModified());

        // A directory that does not exist: an error, nothing written.
        QVERIFY(!w->saveScenarioAs(dir.filePath(QStringLiteral("no/such/dir/x.json"))));
        QVERIFY(w->errorMessage().contains(QStringLiteral("x.json")));
    }

    void unsavedEditsPrompt()
    {
        auto w = makeWindow();
        QVERIFY(openAndRun(*w, QStringLiteral("01")));
        w->quickControls()->threadsBox()->setValue(2);
        int asked = 0;
        w->setUnsavedPrompt([&] {
            ++asked;
            return MainWindow::UnsavedChoice::Cancel;
        });
        QVERIFY(!w->openPath(QStringLiteral("02")));
        QCOMPARE(asked, 1);
        QVERIFY(w->isModified());
        QVERIFY(!w->close()); // cancelled
        QCOMPARE(asked, 2);
        QVERIFY(w->isVisible());
        w->setUnsavedPrompt([&] {
            ++asked;
            return MainWindow::UnsavedChoice::Discard;
        });
        QVERIFY(openAndRun(*w, QStringLiteral("02")));
        QCOMPARE(asked, 3);
        QVERIFY(!w->isModified());
    }

    void opensTracesByContent()
    {
        QTemporaryDir dir;
        auto w = makeWindow();
        QVERIFY(openAndRun(*w, QStringLiteral("08")));
        // Saved under a name that says nothing about what it is.
        const QString path = dir.filePath(QStringLiteral("run.data"));
        QVERIFY(w->saveTraceAs(path));
        QCOMPARE(detectFormat(readTextFile(path.toStdString()).value()), QStringLiteral("streamscope-trace"));

        auto w2 = makeWindow();
        QSignalSpy shown(w2.get(), &MainWindow::traceShown);
        QVERIFY(w2->openPath(path));
        QVERIFY(shown.wait(10000));
        const auto opened = w2->currentTrace();
        QCOMPARE(opened->trace->spanCount(), w->currentTrace()->trace->spanCount());
        // The embedded scenario is in the editor; the trace is not replaced by a simulation.
        QCOMPARE(w2->scenarioModel()->scenario().id, std::string("08-copy-compute-pipeline"));
        QTest::qWait(200);
        QCOMPARE(w2->currentTrace(), opened);
        QVERIFY(w2->analysisPanel()->passedChecks() >= 1);

        // Other tools' formats open the same way (here a Chrome trace, also under a name that says nothing).
        const QString chrome = dir.filePath(QStringLiteral("run.chrome"));
        QVERIFY(w->saveTraceAs(chrome, ExportFormat::Chrome));
        QVERIFY(readTextFile(chrome.toStdString())->find("traceEvents") != std::string::npos);
        QVERIFY(w2->openPath(chrome));
        QVERIFY(shown.wait(10000));
        QCOMPARE(w2->currentTrace()->trace->spanCount(), w->currentTrace()->trace->spanCount());
        QVERIFY(w2->errorMessage().isEmpty());

        // A compressed PyTorch trace (*.json.gz) opens like the plain one.
        if (canReadGzip()) {
            const QString gz = QStringLiteral(STREAMSCOPE_SOURCE_DIR "/tests/data/pytorch/two-streams-event.json.gz");
            QVERIFY(w2->openPath(gz));
            QVERIFY(shown.wait(10000));
            auto plain = importTraceFile(STREAMSCOPE_SOURCE_DIR "/tests/data/pytorch/two-streams-event.json");
            QVERIFY(plain.ok());
            QCOMPARE(w2->currentTrace()->trace->spanCount(), plain->spanCount());
            QVERIFY(w2->errorMessage().isEmpty());
        }
    }

    // A trace opened is a trace: its file and what made it in the title, no empty scenario with a validation error,
    // nothing to run.
    void anImportedTraceIsATrace()
    {
        auto w = makeWindow();
        QSignalSpy shown(w.get(), &MainWindow::traceShown);
        QVERIFY(w->openPath(QStringLiteral(STREAMSCOPE_SOURCE_DIR "/tests/data/pytorch/two-streams-event.json")));
        QVERIFY(shown.wait(10000));
        const auto opened = w->currentTrace();
        QCOMPARE(shownTitle(*w), QStringLiteral("two-streams-event.json — trace (PyTorch) — StreamScope"));
        QVERIFY(!w->traceDocumentPath().isEmpty());
        ScenarioEditor* editor = w->scenarioEditor();
        QCOMPARE(editor->mode(), ScenarioEditor::Mode::NoScenario);
        QVERIFY2(editor->noticeText().startsWith(QStringLiteral("This trace carries no scenario")),
                 qPrintable(editor->noticeText()));
        QVERIFY(editor->noticeText().contains(QStringLiteral("PyTorch profiler")));
        // No error: not above the timeline, not anywhere in the dock.
        QVERIFY(w->errorMessage().isEmpty());
        const auto labels = editor->findChildren<QLabel*>();
        for (const QLabel* label : labels) {
            if (!label->isVisible())
                continue;
            QVERIFY2(!label->text().contains(QStringLiteral("/threads")), qPrintable(label->text()));
            QVERIFY2(!label->text().contains(QStringLiteral("✖")), qPrintable(label->text()));
        }
        QVERIFY(!editor->tree()->isVisible());
        QVERIFY(!editor->quickControls()->isVisible());
        // Run is disabled and says why, on the toolbar too; F5 and runScenario() run nothing.
        QAction* run = w->runAction();
        QVERIFY(!run->isEnabled());
        QVERIFY2(run->toolTip().contains(QStringLiteral("no scenario")), qPrintable(run->toolTip()));
        QToolBar* bar = w->findChild<QToolBar*>(QStringLiteral("mainToolBar"));
        QVERIFY(bar);
        QWidget* button = bar->widgetForAction(run);
        QVERIFY(button && !button->isEnabled());
        QVERIFY(button->toolTip().contains(QStringLiteral("no scenario")));
        QVERIFY(!w->saveAction()->isEnabled());
        QSignalSpy started(w->runController(), &RunController::started);
        QTest::keyClick(w.get(), Qt::Key_F5);
        w->runScenario();
        QTest::qWait(200);
        QCOMPARE(started.count(), 0);
        QCOMPARE(w->currentTrace(), opened);
        QVERIFY(w->errorMessage().isEmpty());

        // A lesson opened next is a scenario again.
        QVERIFY(openAndRun(*w, QStringLiteral("01")));
        QCOMPARE(editor->mode(), ScenarioEditor::Mode::Editable);
        QVERIFY(editor->noticeText().isEmpty());
        QVERIFY(editor->tree()->isVisible());
        QVERIFY(run->isEnabled());
        QVERIFY(w->saveAction()->isEnabled());
        QCOMPARE(shownTitle(*w), QStringLiteral("01-two-streams — StreamScope"));
    }

    void aTraceShowsTheScenarioItEmbedsReadOnly()
    {
        auto w = makeWindow();
        QSignalSpy shown(w.get(), &MainWindow::traceShown);
        QVERIFY(w->openPath(QStringLiteral(STREAMSCOPE_SOURCE_DIR "/tests/data/h200/01-two-streams.json")));
        QVERIFY(shown.wait(10000));
        const auto opened = w->currentTrace();
        QCOMPARE(shownTitle(*w), QStringLiteral("01-two-streams.json — trace (GPU run on NVIDIA H200) — StreamScope"));
        ScenarioEditor* editor = w->scenarioEditor();
        QCOMPARE(editor->mode(), ScenarioEditor::Mode::EmbeddedInTrace);
        QVERIFY2(editor->noticeText().startsWith(QStringLiteral("Scenario embedded in the trace (read-only)")),
                 qPrintable(editor->noticeText()));
        QVERIFY(w->errorMessage().isEmpty());
        QCOMPARE(w->scenarioModel()->scenario().id, std::string("01-two-streams"));
        // Shown to read: the tree and the fields, which do not change it.
        QVERIFY(editor->tree()->isVisible());
        QVERIFY(editor->editCopyButton()->isVisible());
        QVERIFY(!editor->quickControls()->isVisible());
        auto* title = qobject_cast<QLineEdit*>(editor->propertyEditor()->fieldEditor(QStringLiteral("title")));
        QVERIFY(title);
        QVERIFY(title->isReadOnly());
        QVERIFY(!editor->removeAction()->isEnabled());
        QVERIFY(!editor->duplicateAction()->isEnabled());
        QVERIFY(!editor->addMenu()->menuAction()->isEnabled());
        QVERIFY(w->runAction()->isEnabled());
        QTest::qWait(200);
        QCOMPARE(w->currentTrace(), opened); // no preview replaces it

        // Edit a copy: an ordinary, editable, unsaved scenario; the trace stays until something runs.
        QTest::mouseClick(editor->editCopyButton(), Qt::LeftButton);
        QCOMPARE(editor->mode(), ScenarioEditor::Mode::Editable);
        QVERIFY(editor->noticeText().isEmpty());
        QVERIFY(!editor->editCopyButton()->isVisible());
        QVERIFY(editor->quickControls()->isVisible());
        QCOMPARE(shownTitle(*w), QStringLiteral("01-two-streams (copy) — StreamScope"));
        QVERIFY(w->traceDocumentPath().isEmpty());
        QVERIFY(w->documentPath().isEmpty());
        QVERIFY(!w->isModified());
        QCOMPARE(w->currentTrace(), opened);
        title = qobject_cast<QLineEdit*>(editor->propertyEditor()->fieldEditor(QStringLiteral("title")));
        QVERIFY(title && !title->isReadOnly());
        editor->selectItem(ScenarioItemRef::op(0, 0));
        QVERIFY(editor->duplicateAction()->isEnabled());
        // An edit re-simulates, as for any scenario.
        w->setLiveSimulation(true);
        w->quickControls()->chunksBox()->setValue(w->quickControls()->chunksBox()->value() + 1);
        QVERIFY(shown.wait(5000));
        QVERIFY(w->currentTrace() != opened);
        QVERIFY(w->currentTrace()->trace->info.source == TraceSource::Simulator);
        QVERIFY(w->isModified());
        QCOMPARE(shownTitle(*w), QStringLiteral("01-two-streams (copy)* — StreamScope"));
    }

    void runningAnEmbeddedScenarioRunsACopy()
    {
        auto w = makeWindow();
        QSignalSpy shown(w.get(), &MainWindow::traceShown);
        QVERIFY(w->openPath(QStringLiteral(STREAMSCOPE_SOURCE_DIR "/tests/data/h200/01-two-streams.json")));
        QVERIFY(shown.wait(10000));
        const auto opened = w->currentTrace();
        QTest::keyClick(w.get(), Qt::Key_F5);
        QVERIFY(shown.wait(10000));
        QVERIFY(w->currentTrace() != opened);
        QCOMPARE(w->scenarioEditor()->mode(), ScenarioEditor::Mode::Editable);
        QCOMPARE(shownTitle(*w), QStringLiteral("01-two-streams (copy) — StreamScope"));
    }

    // Kernels named as PyTorch records them: short in the table and the inspector, whole in the tooltip and the
    // inspector's full name, found by the filter through either.
    void kernelSignaturesReadShortInTheWindow()
    {
        const std::string kernel =
            "void at::native::vectorized_elementwise_kernel<4, at::native::AUnaryFunctor<float, float, float, "
            "at::native::binary_internal::MulFunctor<float> >, std::array<char*, 2ul> >(int, "
            "at::native::AUnaryFunctor<float, float, float, at::native::binary_internal::MulFunctor<float> >, "
            "std::array<char*, 2ul>)";
        Trace t;
        t.info.source = TraceSource::Imported;
        t.info.backend = "pytorch";
        Track host;
        host.kind = TrackKind::HostThread;
        host.name = "thread 431 (python3)";
        const uint32_t h = t.addTrack(host);
        Track stream;
        stream.name = "stream 7";
        stream.device = 0;
        const uint32_t s = t.addTrack(stream);
        SpanInit launch;
        launch.track = h;
        launch.kind = SpanKind::ApiCall;
        launch.name = "cudaLaunchKernel";
        launch.start = 0;
        launch.end = 4'000;
        const uint32_t l = t.addSpan(launch);
        SpanInit k;
        k.track = s;
        k.kind = SpanKind::Kernel;
        k.name = kernel;
        k.start = 5'000;
        k.end = 50'000;
        t.addFlow(l, t.addSpan(k), FlowKind::Launch);
        t.finalize();
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("mul.json"));
        QVERIFY(saveTextFileAtomic(path.toStdString(), traceToJson(t)).ok());

        auto w = makeWindow();
        QSignalSpy shown(w.get(), &MainWindow::traceShown);
        QVERIFY(w->openPath(path));
        QVERIFY(shown.wait(10000));
        const Trace& trace = *w->currentTrace()->trace;
        int span = -1;
        for (uint32_t i = 0; i < trace.spanCount(); ++i)
            if (trace.spans.kind[i] == SpanKind::Kernel)
                span = int(i);
        QVERIFY(span >= 0);
        const QString shortName = QStringLiteral("vectorized_elementwise_kernel<…>");
        const QModelIndex name = w->spanModel()->index(span, SpanTableModel::NameColumn);
        QCOMPARE(name.data().toString(), shortName);
        QCOMPARE(name.data(Qt::ToolTipRole).toString(), QString::fromStdString(kernel));
        // The host thread is named once, not "thread thread 431".
        QCOMPARE(w->spanModel()->index(span == 0 ? 1 : 0, SpanTableModel::TrackColumn).data().toString(),
                 QStringLiteral("thread 431 (python3)"));
        w->timeline()->selectSpan(span);
        const QString html = w->inspector()->html();
        QVERIFY(html.contains(shortName.toHtmlEscaped() + QStringLiteral("</h3>")));
        QVERIFY(html.contains(QString::fromStdString(kernel).toHtmlEscaped()));
        const QString tip = w->timeline()->spanToolTip(span);
        QVERIFY(tip.startsWith(QStringLiteral("<b>") + shortName.toHtmlEscaped()));
        // Tracks named as importers name them are not named twice ("stream stream 7").
        QVERIFY2(html.contains(QStringLiteral("stream 7 on GPU 0")) && !html.contains(QStringLiteral("stream stream")),
                 qPrintable(html));
        QVERIFY(html.contains(QStringLiteral("host thread 431 (python3)")));
        QVERIFY2(tip.contains(QStringLiteral("kernel on stream 7 · GPU 0")), qPrintable(tip));
        QLineEdit* filter = nullptr;
        for (QLineEdit* e : w->findChildren<QLineEdit*>())
            if (e->placeholderText().startsWith(QStringLiteral("Filter by name")))
                filter = e;
        QVERIFY(filter);
        filter->setText(QStringLiteral("MulFunctor"));
        QCOMPARE(w->spanProxy()->rowCount(), 1);
        QCOMPARE(w->spanProxy()->spanAtRow(0), span);
        QVERIFY(!w->analysisPanel()->html().contains(QStringLiteral("MulFunctor")));
        QCOMPARE(shownTitle(*w), QStringLiteral("mul.json — trace (PyTorch) — StreamScope"));
    }

    void badFilesSayWhereAndWhat()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("broken.json"));
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(R"({"format": "streamscope-scenario", "version": 1, "streams": [{"name": "s"}],
                    "threads": [{"name": "t", "ops": [{"op": "kernel", "stream": "s", "kernel": "warp"}]}]})");
        f.close();
        auto w = makeWindow();
        QSignalSpy error(w.get(), &MainWindow::errorShown);
        QVERIFY(w->openPath(path));
        QVERIFY(error.wait(5000));
        const QString message = w->errorMessage();
        QVERIFY2(message.contains(QStringLiteral("broken.json")), qPrintable(message));
        QVERIFY2(message.contains(QStringLiteral("/threads/0/ops/0/kernel")), qPrintable(message));
        QVERIFY(w->openPath(QStringLiteral("no-such-lesson")));
        QVERIFY(error.wait(5000));
        QVERIFY(w->errorMessage().contains(QStringLiteral("no-such-lesson")));
    }

    // GPU runs start streamscope-cli next to the app; here a script stands in for it.
    void gpuRunsThroughTheCli()
    {
        QTemporaryDir dir;
        // A trace to hand back, as the CLI would write it.
        auto w = makeWindow();
        QVERIFY(openAndRun(*w, QStringLiteral("01")));
        const QString canned = dir.filePath(QStringLiteral("canned.json"));
        QVERIFY(w->saveTraceAs(canned));
        const QString ok = writeScript(dir, QStringLiteral("cli-ok"),
                                       QStringLiteral("while [ $# -gt 0 ]; do [ \"$1\" = -o ] && out=$2; shift; done\n"
                                                      "cp '%1' \"$out\"\necho '  device 0: Fake GPU'\n")
                                           .arg(canned));
        w->runController()->setCliPath(ok);
        w->setBackend(RunBackend::Gpu);
        QSignalSpy finished(w->runController(), &RunController::finished);
        w->runScenario();
        QVERIFY(finished.wait(10000));
        QCOMPARE(finished.takeFirst().at(1).value<RunBackend>(), RunBackend::Gpu);
        QVERIFY(w->errorMessage().isEmpty());

        // Exit code 3: the CLI's message is shown.
        const QString gpuError =
            writeScript(dir, QStringLiteral("cli-3"),
                        QStringLiteral("echo 'error: no usable GPU: the test says so' >&2\nexit 3\n"));
        w->runController()->setCliPath(gpuError);
        QSignalSpy failed(w->runController(), &RunController::failed);
        w->runScenario();
        QVERIFY(failed.wait(10000));
        QCOMPARE(failed.takeFirst().at(1).toInt(), 3);
        QVERIFY2(w->errorMessage().contains(QStringLiteral("the test says so")), qPrintable(w->errorMessage()));

        // Exit code 3 after the trace was written: a GPU fault part-way. The partial trace is shown with the error.
        const QString partial = writeScript(
            dir, QStringLiteral("cli-partial"),
            QStringLiteral(
                "while [ $# -gt 0 ]; do [ \"$1\" = -o ] && out=$2; shift; done\n"
                "cp '%1' \"$out\"\n"
                "echo 'error: cudaStreamSynchronize failed for thread \"main\" op 2: an illegal memory access "
                "was encountered' >&2\necho \"partial trace written to $out\" >&2\nexit 3\n")
                .arg(canned));
        w->runController()->setCliPath(partial);
        QSignalSpy shownPartial(w->runController(), &RunController::partialTrace);
        const auto before = w->currentTrace();
        w->runScenario();
        QVERIFY(failed.wait(10000));
        QCOMPARE(failed.takeFirst().at(1).toInt(), 3);
        QCOMPARE(shownPartial.count(), 1);
        QVERIFY(w->currentTrace() && w->currentTrace() != before);
        QVERIFY(w->currentTrace()->trace->spanCount() > 0);
        QCOMPARE(w->timeline()->trace(), w->currentTrace()->trace);
        QVERIFY2(w->errorMessage().contains(QStringLiteral("illegal memory access")), qPrintable(w->errorMessage()));
        QVERIFY2(w->errorMessage().contains(QStringLiteral("partial trace")), qPrintable(w->errorMessage()));

        // The next run in the same window works.
        w->runController()->setCliPath(ok);
        w->runScenario();
        QVERIFY(finished.wait(10000));
        QVERIFY(w->errorMessage().isEmpty());

        // Cancel kills the child.
        const QString pidFile = dir.filePath(QStringLiteral("pid"));
        const QString slow = writeScript(dir, QStringLiteral("cli-slow"),
                                         QStringLiteral("echo $$ > '%1'\nexec sleep 60\n").arg(pidFile));
        w->runController()->setCliPath(slow);
        QSignalSpy cancelled(w->runController(), &RunController::cancelled);
        w->runScenario();
        QTRY_VERIFY_WITH_TIMEOUT(QFile::exists(pidFile) && QFileInfo(pidFile).size() > 0, 10000);
        QVERIFY(w->runController()->isRunning());
        w->runController()->cancel();
        QCOMPARE(cancelled.count(), 1);
        QVERIFY(!w->runController()->isRunning());
        QFile pf(pidFile);
        QVERIFY(pf.open(QIODevice::ReadOnly));
        const QString pid = QString::fromUtf8(pf.readAll()).trimmed();
        QVERIFY(!pid.isEmpty());
        // Killed and reaped: no such process any more (not even a zombie).
        QTRY_VERIFY_WITH_TIMEOUT(!QFileInfo::exists(QStringLiteral("/proc/") + pid), 5000);
    }

    // The real streamscope-cli says whether a GPU is usable: a name when it is, a reason when not.
    void gpuProbe()
    {
        RunController runner;
        runner.setCliPath(QStringLiteral(STREAMSCOPE_CLI));
        QSignalSpy changed(&runner, &RunController::gpuStatusChanged);
        runner.probeGpu();
        QTRY_VERIFY_WITH_TIMEOUT(runner.gpuStatus().state == GpuStatus::State::Usable
                                     || runner.gpuStatus().state == GpuStatus::State::Unusable,
                                 60000);
        QVERIFY(!runner.gpuStatus().description.isEmpty());
        qInfo("GPU: %s (%s)", runner.gpuStatus().state == GpuStatus::State::Usable ? "usable" : "not usable",
              qPrintable(runner.gpuStatus().description));
        runner.setCliPath(QStringLiteral("/nonexistent/streamscope-cli"));
        runner.probeGpu();
        QCOMPARE(runner.gpuStatus().state, GpuStatus::State::Unusable);
    }

    // On a machine with a usable GPU: lesson 01 runs there through the real streamscope-cli.
    void gpuRunWithTheRealCli()
    {
        auto w = makeWindow();
        w->runController()->setCliPath(QStringLiteral(STREAMSCOPE_CLI));
        w->runController()->probeGpu();
        QTRY_VERIFY_WITH_TIMEOUT(w->runController()->gpuStatus().state != GpuStatus::State::Checking, 60000);
        if (w->runController()->gpuStatus().state != GpuStatus::State::Usable)
            QSKIP(qPrintable(QStringLiteral("no usable GPU: ") + w->runController()->gpuStatus().description));
        QSignalSpy finished(w->runController(), &RunController::finished);
        w->setBackend(RunBackend::Gpu);
        QVERIFY(w->openPath(QStringLiteral("01")));
        QVERIFY(finished.wait(120000));
        QTRY_VERIFY_WITH_TIMEOUT(w->currentTrace() && w->currentTrace()->trace->info.source != TraceSource::Simulator,
                                 5000);
        qInfo("GPU run: %s, %d of %d checks passed",
              w->currentTrace()->trace->info.devices.empty() ? "?"
                                                             : w->currentTrace()->trace->info.devices[0].name.c_str(),
              w->analysisPanel()->passedChecks(), int(w->currentTrace()->report.checks.size()));
        QVERIFY(w->errorMessage().isEmpty());
        QCOMPARE(w->timeline()->trace(), w->currentTrace()->trace);
    }

    void exportFromTheWindow()
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
    }

    void headlessExport_data()
    {
        QTest::addColumn<QString>("input");
        QTest::addColumn<int>("width");
        QTest::addColumn<int>("height");
        QTest::newRow("lesson") << "01" << 640 << 360;
        QTest::newRow("scenario file") << STREAMSCOPE_SOURCE_DIR "/resources/presets/08-copy-compute-pipeline.json"
                                       << 1024 << 512;
    }

    // The built app renders without a display (offscreen chosen by itself) to a PNG of the size asked for.
    void headlessExport()
    {
        QFETCH(QString, input);
        QFETCH(int, width);
        QFETCH(int, height);
        QVERIFY2(QFileInfo(appPath()).isExecutable(), qPrintable(appPath() + QStringLiteral(" was not built")));
        QTemporaryDir dir;
        const QString out = dir.filePath(QStringLiteral("out.png"));
        const Process p = runApp({input, QStringLiteral("--export"), out, QStringLiteral("--width"),
                                  QString::number(width), QStringLiteral("--height"), QString::number(height)},
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

    void headlessExportOfATraceAndSvg()
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

    void headlessExportBadInput_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("message");
        QTest::newRow("missing file") << QStringList{QStringLiteral("nope.json"), QStringLiteral("--export"),
                                                     QStringLiteral("x.png")}
                                      << "nope.json";
        QTest::newRow("unknown format") << QStringList{QStringLiteral("01"), QStringLiteral("--export"),
                                                       QStringLiteral("x.bmp")}
                                        << ".png, .svg or .pdf";
        QTest::newRow("bad width") << QStringList{
            QStringLiteral("01"), QStringLiteral("--export"), QStringLiteral("x.png"), QStringLiteral("--width"),
            QStringLiteral("wide")} << "--width";
        QTest::newRow("no input") << QStringList{QStringLiteral("--export"), QStringLiteral("x.png")}
                                  << "needs a scenario";
        QTest::newRow("bad variant") << QStringList{
            QStringLiteral("01"), QStringLiteral("--variant"), QStringLiteral("zzz"), QStringLiteral("--export"),
            QStringLiteral("x.png")} << "zzz";
    }

    void headlessExportBadInput()
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
};

QTEST_MAIN(TestMainWindow)
#include "tst_mainwindow.moc"
