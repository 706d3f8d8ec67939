// The main window's documents: autosave and recovery, atomic saves, the prompt about unsaved edits, traces opened by
// content (imported ones too, with the scenario they embed), short kernel names, and bad files named with the place.
#include "tst_mainwindow.h"

// Nothing the user made is lost: an edited scenario is autosaved a moment after the edit, and saving removes
// the file. A file that a process which is gone left behind (a crash) is offered back; recovered, it is the
// window's unsaved scenario, with the path it came from; discarded, it is deleted; one of a live process is
// never offered.
void TestMainWindow::autosaveAndRecovery()
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
    const QString crashed = QDir(MainWindow::autosaveDirectory()).filePath(QStringLiteral("scenario-4194305-1.json"));
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

void TestMainWindow::saveIsAtomicAndRoundTrips()
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
    QCOMPARE(QDir(dir.path()).entryList(QDir::Files | QDir::Hidden), QStringList{QStringLiteral("three-threads.json")});
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

void TestMainWindow::unsavedEditsPrompt()
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

void TestMainWindow::opensTracesByContent()
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

namespace {
// A trace file of `spans` spans (API calls launching kernels, an arrow each), StreamScope's format (JSON, or the
// binary format with `binary`).
QString writeBigTrace(const QTemporaryDir& dir, int64_t spans, bool binary = false)
{
    Trace t;
    const uint32_t host = t.addTrack({TrackKind::HostThread, "main"});
    const uint32_t s = t.addTrack({TrackKind::Stream, "s1", 0});
    for (int64_t i = 0; i < spans / 2; ++i) {
        const uint32_t api = t.addSpan({host, SpanKind::ApiCall, "cudaLaunchKernel", i * 1000, i * 1000 + 300});
        const uint32_t k = t.addSpan({s, SpanKind::Kernel, "kernel", i * 1000 + 400, i * 1000 + 900});
        t.addFlow(api, k, FlowKind::Launch);
    }
    t.finalize();
    const QString path = dir.filePath(binary ? QStringLiteral("big.sstrace") : QStringLiteral("big.json"));
    return exportTrace(t, path.toStdString(), binary ? ExportFormat::StreamscopeBinary : ExportFormat::Streamscope).ok()
        ? path
        : QString();
}
} // namespace

// A trace of kAnalyzeLaterSpans and more is on the timeline as soon as it is read; the Analysis panel says its
// analysis is coming, and then shows it. The concurrency strip's steps come after the first frame too. The same for
// the binary file of the trace, a few hundred kilobytes: big by its spans, not by its size.
void TestMainWindow::aBigTraceIsDrawnBeforeItsAnalysis_data()
{
    QTest::addColumn<bool>("binary");
    QTest::newRow("JSON") << false;
    QTest::newRow("binary") << true;
}

void TestMainWindow::aBigTraceIsDrawnBeforeItsAnalysis()
{
    QFETCH(bool, binary);
    QTemporaryDir dir;
    const QString path = writeBigTrace(dir, 400'000, binary);
    QVERIFY(!path.isEmpty());
    QVERIFY(400'000 >= MainWindow::kAnalyzeLaterSpans);
    if (binary)
        QVERIFY2(QFileInfo(path).size() < 4 << 20, qPrintable(QString::number(QFileInfo(path).size())));
    auto w = makeWindow();
    bool analysedAtFirstFrame = true;
    QString panelAtFirstFrame;
    bool countingAtFirstFrame = false;
    connect(w.get(), &MainWindow::traceShown, w.get(), [&] {
        analysedAtFirstFrame = w->isAnalysisShown();
        panelAtFirstFrame = w->analysisPanel()->html();
        countingAtFirstFrame = w->concurrencyPlot()->isCounting();
    });
    QSignalSpy shown(w.get(), &MainWindow::traceShown);
    QSignalSpy analysed(w.get(), &MainWindow::analysisShown);
    QSignalSpy counted(w.get(), &MainWindow::concurrencyShown);
    QVERIFY(w->openPath(path));
    QVERIFY(shown.wait(60000));
    QVERIFY(!analysedAtFirstFrame);
    QVERIFY(countingAtFirstFrame);
    QVERIFY(counted.count() > 0 || counted.wait(60000));
    QVERIFY(!w->concurrencyPlot()->isCounting());
    QCOMPARE(w->concurrencyPlot()->maxConcurrency(), 1); // one kernel at a time
    QVERIFY(w->concurrencyPlot()->graph0()->dataCount() > 0);
    QVERIFY2(panelAtFirstFrame.contains(QStringLiteral("Analysing the trace")), qPrintable(panelAtFirstFrame));
    QCOMPARE(w->timeline()->trace()->spanCount(), size_t(400'000));
    QVERIFY(analysed.count() > 0 || analysed.wait(60000));
    QVERIFY(w->isAnalysisShown());
    QCOMPARE(w->currentTrace()->report.metrics.gpuSpanCount, int64_t(200'000));
    QVERIFY(!w->analysisPanel()->html().contains(QStringLiteral("Analysing the trace")));
}

// More spans than a page of the span table: the pager says which rows are shown and turns the pages; a span
// selected on the timeline brings its page into the table, its row selected.
void TestMainWindow::spanTableTurnsPages()
{
    auto w = makeWindow();
    QVERIFY(openAndRun(*w, QStringLiteral("08")));
    SpanTableProxy* proxy = w->spanProxy();
    auto* label = w->findChild<QLabel*>(QStringLiteral("span-page"));
    QVERIFY(label);
    QVERIFY(label->isHidden()); // one page: no pager
    const int total = w->spanModel()->rowCount();
    QVERIFY(total > 12);
    proxy->setPageRows(5);
    QCOMPARE(proxy->pageCount(), (total + 4) / 5);
    QCOMPARE(proxy->rowCount(), 5);
    QVERIFY(!label->isHidden());
    QCOMPARE(label->text(), QStringLiteral("Rows 1 – 5 of %1").arg(QLocale().toString(total)));
    // Every span on exactly one page, in the model's order.
    std::vector<int> seen;
    for (int p = 0; p < proxy->pageCount(); ++p) {
        proxy->setPage(p);
        QCOMPARE(proxy->page(), p);
        for (int r = 0; r < proxy->rowCount(); ++r) {
            const int span = proxy->spanAtRow(r);
            QCOMPARE(proxy->rowOfSpan(span), r);
            QCOMPARE(proxy->pageOfSpan(span), p);
            seen.push_back(span);
        }
    }
    QCOMPARE(int(seen.size()), total);
    for (int i = 0; i < total; ++i)
        QCOMPARE(seen[size_t(i)], i);
    proxy->setPage(proxy->pageCount() + 3); // clamped
    QCOMPARE(proxy->page(), proxy->pageCount() - 1);
    // A span on another page, selected on the timeline: its page, its row.
    proxy->setPage(0);
    const int span = total - 2;
    w->timeline()->selectSpan(span);
    QCOMPARE(proxy->page(), span / 5);
    QVERIFY(w->spanTable()->currentIndex().isValid());
    QCOMPARE(proxy->spanAtRow(w->spanTable()->currentIndex().row()), span);
    QVERIFY(label->text().startsWith(QStringLiteral("Rows %1 – ").arg(QLocale().toString(span / 5 * 5 + 1))));
    // Sorted: pages of the sorted order, from the first; a row picked in the table selects its span.
    proxy->sort(SpanTableModel::DurationColumn, Qt::DescendingOrder);
    QCOMPARE(proxy->page(), 0);
    int64_t last = std::numeric_limits<int64_t>::max();
    const Trace& t = *w->currentTrace()->trace;
    for (int p = 0; p < proxy->pageCount(); ++p) {
        proxy->setPage(p);
        for (int r = 0; r < proxy->rowCount(); ++r) {
            const int64_t d = t.duration(uint32_t(proxy->spanAtRow(r)));
            QVERIFY(d <= last);
            last = d;
        }
    }
    w->spanTable()->setCurrentIndex(proxy->index(2, 0));
    QCOMPARE(w->timeline()->selectedSpan(), proxy->spanAtRow(2));
}

// A big trace's span table is sorted and filtered on a worker: the rows shown stay, the pager says what is being
// done, and the rows that come are those a sort on the GUI thread gives, with the selection on its span; the newest
// request wins.
void TestMainWindow::bigSpanTablesSortOnAWorker()
{
    auto w = makeWindow();
    QVERIFY(openAndRun(*w, QStringLiteral("08")));
    SpanTableProxy* proxy = w->spanProxy();
    auto* label = w->findChild<QLabel*>(QStringLiteral("span-page"));
    QVERIFY(label);
    const int total = w->spanModel()->rowCount();
    // The order a sort on the GUI thread gives.
    proxy->sort(SpanTableModel::DurationColumn, Qt::DescendingOrder);
    QVERIFY(!proxy->isUpdating());
    std::vector<int> expected;
    for (int r = 0; r < proxy->rowCount(); ++r)
        expected.push_back(proxy->spanAtRow(r));
    proxy->sort(-1);
    QCOMPARE(proxy->spanAtRow(1), 1);

    proxy->setAsyncRows(1); // every trace is big
    const int span = total / 2;
    w->spanTable()->setCurrentIndex(proxy->index(proxy->rowOfSpan(span), 0));
    QSignalSpy ready(proxy, &SpanTableProxy::rowsReady);
    proxy->sort(SpanTableModel::DurationColumn, Qt::DescendingOrder);
    QVERIFY(proxy->isUpdating());
    QCOMPARE(proxy->spanAtRow(1), 1); // the rows shown until the new ones come
    QVERIFY(!label->isHidden());
    QCOMPARE(label->text(), QStringLiteral("Sorting…"));
    QVERIFY(label->toolTip().startsWith(
        QStringLiteral("Sorting %1 spans in the background").arg(QLocale().toString(total))));
    QTRY_COMPARE(ready.count(), 1);
    QVERIFY(!proxy->isUpdating());
    QVERIFY(label->isHidden()); // one page
    std::vector<int> sorted;
    for (int r = 0; r < proxy->rowCount(); ++r)
        sorted.push_back(proxy->spanAtRow(r));
    QCOMPARE(sorted, expected);
    QCOMPARE(proxy->spanAtRow(w->spanTable()->currentIndex().row()), span);

    // Two filters typed one after the other: the second's rows, once.
    proxy->setFilterText(QStringLiteral("kernel"));
    proxy->setFilterText(QStringLiteral("memcpy"));
    QCOMPARE(label->text(), QStringLiteral("Filtering and sorting…"));
    QTRY_COMPARE(ready.count(), 2);
    QTest::qWait(50);
    QCOMPARE(ready.count(), 2);
    const Trace& t = *w->currentTrace()->trace;
    QVERIFY(proxy->rowCount() > 0);
    for (int r = 0; r < proxy->rowCount(); ++r) {
        const auto i = uint32_t(proxy->spanAtRow(r));
        QVERIFY(t.spanName(i).find("emcpy") != std::string::npos || t.spans.kind[i] != SpanKind::Kernel);
        if (r > 0)
            QVERIFY(t.duration(i) <= t.duration(uint32_t(proxy->spanAtRow(r - 1))));
    }
    // Back to the model's order: at once.
    proxy->setFilterText({});
    proxy->sort(-1);
    QVERIFY(!proxy->isUpdating());
    QCOMPARE(proxy->rowCount(), total);
    QCOMPARE(proxy->spanAtRow(total - 1), total - 1);
}

// While a big file is read the status bar shows how far it is; Cancel stops it, and the window keeps what it showed.
void TestMainWindow::openingABigTraceCanBeCancelled()
{
    QTemporaryDir dir;
    const QString path = writeBigTrace(dir, 1'000'000);
    QVERIFY(!path.isEmpty());
    auto w = makeWindow();
    QVERIFY(openAndRun(*w, QStringLiteral("02")));
    const auto before = w->currentTrace();
    const QString lesson = w->lessonId();
    QVERIFY(w->openPath(path));
    QVERIFY(w->isOpening());
    QProgressBar* bar = nullptr;
    QTRY_VERIFY_WITH_TIMEOUT(
        [&] {
            for (QProgressBar* b : w->findChildren<QProgressBar*>())
                if (b->isVisible() && b->maximum() == 100 && b->value() < 100)
                    return (bar = b) != nullptr;
            return false;
        }(),
        30000);
    w->cancelOpening();
    QVERIFY(!w->isOpening());
    QVERIFY(!bar->isVisible());
    QTest::qWait(1500); // what was read is dropped when it arrives
    QCOMPARE(w->currentTrace(), before);
    QCOMPARE(w->lessonId(), lesson);
    QVERIFY(w->errorMessage().isEmpty());
}

// A trace opened is a trace: its file and what made it in the title, no empty scenario with a validation error,
// nothing to run.
void TestMainWindow::anImportedTraceIsATrace()
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

void TestMainWindow::aTraceShowsTheScenarioItEmbedsReadOnly()
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

void TestMainWindow::runningAnEmbeddedScenarioRunsACopy()
{
    auto w = makeWindow();
    QSignalSpy shown(w.get(), &MainWindow::traceShown);
    QVERIFY(w->openPath(QStringLiteral(STREAMSCOPE_SOURCE_DIR "/tests/data/h200/01-two-streams.json")));
    QVERIFY(shown.wait(10000));
    const auto opened = w->currentTrace();
    // F5 is a window shortcut: it reaches the action only in the active window (Xvfb without a window manager
    // activates a window shown only at times).
    w->activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(w.get()));
    QTest::keyClick(w.get(), Qt::Key_F5);
    QVERIFY(shown.wait(10000));
    QVERIFY(w->currentTrace() != opened);
    QCOMPARE(w->scenarioEditor()->mode(), ScenarioEditor::Mode::Editable);
    QCOMPARE(shownTitle(*w), QStringLiteral("01-two-streams (copy) — StreamScope"));
}

// Kernels named as PyTorch records them: short in the table and the inspector, whole in the tooltip and the
// inspector's full name, found by the filter through either.
void TestMainWindow::kernelSignaturesReadShortInTheWindow()
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

void TestMainWindow::badFilesSayWhereAndWhat()
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
