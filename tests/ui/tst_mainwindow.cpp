// The main window's runs: a lesson opened runs on the simulator, the timeline, concurrency plot, panels and
// selection follow it, quick controls and edits re-simulate; GPU runs go through streamscope-cli.
#include "tst_mainwindow.h"

#include <QDockWidget>

void TestMainWindow::initTestCase()
{
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("StreamScopeTest"));
    QCoreApplication::setApplicationName(QStringLiteral("tst_mainwindow"));
    QSettings().clear();
}

void TestMainWindow::openLessonRunsOnTheSimulator()
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

void TestMainWindow::criticalPathHighlight()
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

// Sync arrows start off (one from every stream to each synchronize call would hide the rest); what the user
// picks in View > Dependency Arrows comes back in the next session.
void TestMainWindow::arrowChoicesAreKept()
{
    QSettings().clear();
    auto action = [](MainWindow& w, FlowKind k) {
        return w.findChild<QAction*>(QStringLiteral("arrows-") + flowKindLabel(k));
    };
    {
        auto w = makeWindow();
        QVERIFY(action(*w, FlowKind::Sync));
        QVERIFY(!action(*w, FlowKind::Sync)->isChecked());
        QVERIFY(!w->timeline()->isFlowKindVisible(FlowKind::Sync));
        for (FlowKind k : {FlowKind::Launch, FlowKind::Event, FlowKind::Implicit, FlowKind::Call}) {
            QVERIFY(action(*w, k)->isChecked());
            QVERIFY(w->timeline()->isFlowKindVisible(k));
        }
        action(*w, FlowKind::Launch)->setChecked(false);
        action(*w, FlowKind::Sync)->setChecked(true);
        QVERIFY(!w->timeline()->isFlowKindVisible(FlowKind::Launch));
    }
    auto again = makeWindow();
    QVERIFY(!action(*again, FlowKind::Launch)->isChecked());
    QVERIFY(!again->timeline()->isFlowKindVisible(FlowKind::Launch));
    QVERIFY(action(*again, FlowKind::Sync)->isChecked());
    QVERIFY(again->timeline()->isFlowKindVisible(FlowKind::Sync));
    QSettings().clear();
}

// The Spans filter is the document's: it stays through a re-run, and another lesson, variant or a new scenario
// starts unfiltered.
void TestMainWindow::theSpanFilterIsTheDocuments()
{
    auto w = makeWindow();
    QVERIFY(openAndRun(*w, QStringLiteral("01")));
    auto* filter = w->findChild<QLineEdit*>(QStringLiteral("span-filter"));
    QVERIFY(filter);
    filter->setText(QStringLiteral("transpose"));
    const int filtered = w->spanProxy()->rowCount();
    QVERIFY(filtered > 0 && filtered < w->spanModel()->rowCount());
    QSignalSpy shown(w.get(), &MainWindow::traceShown);
    w->runScenario();
    QVERIFY(shown.wait(10000));
    QCOMPARE(filter->text(), QStringLiteral("transpose"));
    QCOMPARE(w->spanProxy()->rowCount(), filtered);
    QVERIFY(openAndRun(*w, QStringLiteral("01"), QStringLiteral("one-stream")));
    QVERIFY(filter->text().isEmpty());
    QCOMPARE(w->spanProxy()->rowCount(), w->spanModel()->rowCount());
    filter->setText(QStringLiteral("transpose"));
    QVERIFY(openAndRun(*w, QStringLiteral("02")));
    QVERIFY(filter->text().isEmpty());
    filter->setText(QStringLiteral("transpose"));
    w->newScenario();
    QVERIFY(filter->text().isEmpty());
}

// W/A/S/D reach the timeline from the span table, but type into the Spans filter; Esc there hands the focus back.
void TestMainWindow::navigationKeysReachTheTimeline()
{
    auto w = makeWindow();
    w->show();
    QVERIFY(QTest::qWaitForWindowExposed(w.get()));
    QVERIFY(openAndRun(*w, QStringLiteral("01")));
    TimelineView* timeline = w->timeline();
    const auto width = [&] {
        const auto [a, b] = timeline->visibleTimeRange();
        return b - a;
    };
    const double full = width();
    w->activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(w.get()));
    for (QWidget* p = w->spanTable(); p; p = p->parentWidget())
        if (auto* dock = qobject_cast<QDockWidget*>(p)) {
            dock->show();
            dock->raise();
        }
    QTRY_VERIFY(w->spanTable()->isVisible());
    w->spanTable()->setFocus();
    QTRY_VERIFY(w->spanTable()->hasFocus());
    QTest::keyClick(w->spanTable(), Qt::Key_W);
    QVERIFY2(width() < full * 0.95, qPrintable(QStringLiteral("%1 of %2").arg(width()).arg(full)));
    const double zoomed = width();
    QTest::keyClick(w->spanTable(), Qt::Key_S);
    QVERIFY(width() > zoomed);
    QTest::keyClick(w->spanTable(), Qt::Key_Home);
    QCOMPARE(width(), full);
    // Ctrl+A stays the table's (select all), not a pan.
    QTest::keyClick(w->spanTable(), Qt::Key_A, Qt::ControlModifier);
    QCOMPARE(width(), full);

    auto* filter = w->findChild<QLineEdit*>(QStringLiteral("span-filter"));
    QVERIFY(filter);
    filter->setFocus();
    QTRY_VERIFY(filter->hasFocus());
    QTest::keyClicks(filter, QStringLiteral("wasd"));
    QCOMPARE(filter->text(), QStringLiteral("wasd"));
    QCOMPARE(width(), full);
    QTest::keyClick(filter, Qt::Key_Escape);
    QTRY_VERIFY(timeline->hasFocus());
    QTest::keyClick(timeline, Qt::Key_W);
    QVERIFY(width() < full * 0.95);
}

// Lesson 08's eight rows in a big window share its height rather than crowd its top third (up to 2.5 times their
// height); lesson 11's 34 rows keep theirs and scroll.
void TestMainWindow::fewRowsFillTheTimeline()
{
    auto w = testing::makeTestWindow({1400, 1000});
    QVERIFY(openAndRun(*w, QStringLiteral("08")));
    TimelineView* timeline = w->timeline();
    timeline->replot(QCustomPlot::rpImmediateRefresh);
    const int lanes = timeline->timelineLayout().totalLanes();
    const double base = timeline->laneHeight(), shown = timeline->shownLaneHeight();
    const int area = timeline->timeAxisRect().height();
    QVERIFY2(lanes * base < area,
             qPrintable(QStringLiteral("%1 lanes of %2 px in %3 px").arg(lanes).arg(base).arg(area)));
    QVERIFY2(shown > base, qPrintable(QStringLiteral("%1 px, as laneHeight()").arg(shown)));
    QVERIFY(shown <= TimelineView::kMaxLaneStretch * base + 1e-9);
    QVERIFY(lanes * shown <= area + 1);
    // Every lane drawn: the vertical axis shows them all, each `shown` px high.
    QVERIFY(timeline->yAxis->range().upper >= lanes - 1e-6);
    QVERIFY(std::abs(timeline->yAxis->coordToPixel(0) - timeline->yAxis->coordToPixel(1)) >= shown - 1);

    QVERIFY(openAndRun(*w, QStringLiteral("11")));
    timeline->replot(QCustomPlot::rpImmediateRefresh);
    if (timeline->timelineLayout().totalLanes() * timeline->laneHeight() > timeline->timeAxisRect().height())
        QCOMPARE(timeline->shownLaneHeight(), double(timeline->laneHeight()));
}

void TestMainWindow::concurrencyPlotFollowsTheTimeline()
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
    const double from = double(first) + 0.25 * double(last - first), to = double(first) + 0.5 * double(last - first);
    w->timeline()->setVisibleTimeRange(from, to);
    w->timeline()->replot(QCustomPlot::rpImmediateRefresh);
    const auto [a, b] = plot->visibleTimeRange();
    const auto [ta, tb] = w->timeline()->visibleTimeRange();
    QVERIFY2(std::abs(a - ta) < 1 && std::abs(b - tb) < 1,
             qPrintable(QStringLiteral("%1..%2 vs %3..%4").arg(a).arg(b).arg(ta).arg(tb)));
    // The two time axes line up.
    QCOMPARE(plot->axisRect()->left(), w->timeline()->timeAxisRect().left());

    // 32 streams at once: the count labels stay apart (each a line of room from the next).
    QVERIFY(openAndRun(*w, QStringLiteral("11")));
    plot->replot(QCustomPlot::rpImmediateRefresh);
    QCOMPARE(plot->maxConcurrency(), 32);
    const QVector<double> ticks = plot->yAxis->tickVector();
    QVERIFY(ticks.size() >= 2);
    const int fh = QFontMetrics(plot->yAxis->tickLabelFont()).height();
    for (int i = 1; i < ticks.size(); ++i) {
        const double apart = std::abs(plot->yAxis->coordToPixel(ticks[i]) - plot->yAxis->coordToPixel(ticks[i - 1]));
        QVERIFY2(apart >= 1.5 * fh,
                 qPrintable(QStringLiteral("labels %1 and %2 are %3 px apart (font %4 px)")
                                .arg(ticks[i - 1])
                                .arg(ticks[i])
                                .arg(apart)
                                .arg(fh)));
    }
}

void TestMainWindow::quickControlReSimulates()
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

void TestMainWindow::anInvalidEditKeepsTheTraceAndSaysWhy()
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
    // The timeline left up is marked as the scenario before the edit, with the reason.
    QTRY_VERIFY(w->errorMessage().contains(QStringLiteral("before this edit")));
    QVERIFY(w->errorMessage().contains(QStringLiteral("/threads/0/ops/0/stream")));
    w->runScenario();
    QVERIFY(w->errorMessage().contains(QStringLiteral("/threads/0/ops/0/stream")));
    m->undoStack()->undo();
    QTRY_VERIFY(w->errorMessage().isEmpty()); // valid again: simulated, the mark gone
    QVERIFY(w->currentTrace() != before);
}

void TestMainWindow::selectionFollows()
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

// GPU runs start streamscope-cli next to the app; here a script stands in for it.
void TestMainWindow::gpuRunsThroughTheCli()
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
    const QString gpuError = writeScript(dir, QStringLiteral("cli-3"),
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
        QStringLiteral("while [ $# -gt 0 ]; do [ \"$1\" = -o ] && out=$2; shift; done\n"
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
    const QString slow =
        writeScript(dir, QStringLiteral("cli-slow"), QStringLiteral("echo $$ > '%1'\nexec sleep 60\n").arg(pidFile));
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
void TestMainWindow::gpuProbe()
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
void TestMainWindow::gpuRunWithTheRealCli()
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
          w->currentTrace()->trace->info.devices.empty() ? "?" : w->currentTrace()->trace->info.devices[0].name.c_str(),
          w->analysisPanel()->passedChecks(), int(w->currentTrace()->report.checks.size()));
    QVERIFY(w->errorMessage().isEmpty());
    QCOMPARE(w->timeline()->trace(), w->currentTrace()->trace);
}

QTEST_MAIN(TestMainWindow)
