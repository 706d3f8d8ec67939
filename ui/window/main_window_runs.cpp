// The main window's runs: the backend and timing chosen, the scenario run (live while it is edited) and the
// trace shown in the timeline and the panels.
#include "main_window.h"
#include "main_window_parts.h"

#include "analysis.h"
#include "concurrency_plot.h"

#include "analysis_panel.h"
#include "calibrate_dialog.h"
#include "compare_view.h"
#include "format.h"
#include "image_export.h"
#include "lesson_gallery.h"
#include "notice_bar.h"
#include "presentation_mode.h"
#include "property_editor.h"
#include "quick_controls.h"
#include "resources.h"
#include "run_info_panel.h"
#include "scenario_editor.h"
#include "scenario_json.h"
#include "scenario_model.h"
#include "span_inspector.h"
#include "span_table_model.h"
#include "sweep_view.h"
#include "text_file.h"
#include "timeline_plottable.h"
#include "timeline_view.h"
#include "timing_text.h"
#include "trace_import.h"
#include "trace_json.h"
#include "whatif_dialog.h"
#include "worker.h"

#include <QAction>
#include <QActionGroup>
#include <QApplication>
#include <QCheckBox>
#include <QCloseEvent>
#include <QComboBox>
#include <QDialog>
#include <QDialogButtonBox>
#include <QDir>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QFrame>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QKeySequence>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QPixmap>
#include <QPointer>
#include <QProgressBar>
#include <QPushButton>
#include <QSettings>
#include <QSortFilterProxyModel>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTableView>
#include <QThread>
#include <QTimer>
#include <QToolBar>
#include <QToolButton>
#include <QTreeView>
#include <QUndoStack>
#include <QUrl>
#include <QVBoxLayout>

#include <signal.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <initializer_list>
#include <utility>

namespace streamscope {

// ---- running ---------------------------------------------------------------------------------------------------

RunBackend MainWindow::backend() const
{
    return RunBackend(m_backendBox->currentData().toInt());
}

void MainWindow::setBackend(RunBackend b)
{
    m_userChoseBackend = true;
    m_gpuRunPending = false;
    m_backendBox->setCurrentIndex(m_backendBox->findData(int(b)));
    updateBackendControls();
}

TimingMode MainWindow::timingMode() const
{
    return m_runner->timingMode();
}

void MainWindow::setTimingMode(TimingMode mode)
{
    m_timingBox->setCurrentIndex(m_timingBox->findData(int(mode)));
    m_runner->setTimingMode(mode);
    // The banner's "Time with …" is done once that is the choice.
    if (m_suggestedTiming == mode) {
        m_suggestedTiming.reset();
        m_timingWarning->setAction({});
    }
}

void MainWindow::updateBackendControls()
{
    const bool gpu = backend() == RunBackend::Gpu;
    m_profileBox->setEnabled(!gpu);
    // Timing stays choosable while the GPU is usable: a GPU sweep uses it whatever Run's backend is.
    m_timingBox->setEnabled(gpu || m_runner->gpuStatus().state == GpuStatus::State::Usable);
    m_timingBox->setToolTip(
        gpu ? QStringLiteral("How GPU runs and sweeps time their operations (streamscope-cli --timing); the trace "
                             "says which timing it used and what it cost")
            : QStringLiteral("Applies to GPU runs and GPU sweeps: the simulator ignores it"));
}

void MainWindow::setLiveSimulation(bool on)
{
    m_liveBox->setChecked(on);
}

bool MainWindow::liveSimulation() const
{
    return m_liveBox->isChecked();
}

void MainWindow::updateGpuChoice()
{
    const GpuStatus& gpu = m_runner->gpuStatus();
    const int gpuRow = m_backendBox->findData(int(RunBackend::Gpu));
    auto* model = qobject_cast<QStandardItemModel*>(m_backendBox->model());
    const bool usable = gpu.state == GpuStatus::State::Usable;
    m_backendBox->setItemText(gpuRow, gpuChoiceText(gpu));
    m_backendBox->setItemData(
        gpuRow,
        gpu.state == GpuStatus::State::Unusable ? QStringLiteral("No usable GPU: ") + gpu.description : gpu.description,
        Qt::ToolTipRole);
    if (model)
        if (QStandardItem* item = model->item(gpuRow))
            item->setEnabled(usable);
    if (!usable && backend() == RunBackend::Gpu)
        m_backendBox->setCurrentIndex(m_backendBox->findData(int(RunBackend::Simulator)));
    updateBackendControls();
    m_backendBox->setToolTip(gpu.state == GpuStatus::State::Unusable
                                 ? QStringLiteral("Simulator only: no usable GPU (%1)").arg(gpu.description)
                                 : QStringLiteral("Where Run executes the scenario"));
    // At start the lesson ran simulated while the GPU was being checked: now it runs on the GPU.
    if (usable && !m_userChoseBackend) {
        m_backendBox->setCurrentIndex(gpuRow);
        updateBackendControls();
        if (m_gpuRunPending) {
            m_gpuRunPending = false;
            runScenario();
        }
    } else if (gpu.state != GpuStatus::State::Checking) {
        m_gpuRunPending = false;
    }
}

void MainWindow::editScenarioCopy()
{
    if (m_editor->mode() != ScenarioEditor::Mode::EmbeddedInTrace)
        return;
    m_untitledName = QFileInfo(m_tracePath).completeBaseName() + QStringLiteral(" (copy)");
    m_tracePath.clear();
    m_editor->setMode(ScenarioEditor::Mode::Editable);
    updateTitle();
    m_statusText->setText(
        QStringLiteral("The scenario is now an unsaved copy: edit it, run it (F5), save it (Ctrl+S)."));
}

void MainWindow::runScenario()
{
    switch (m_editor->mode()) {
    case ScenarioEditor::Mode::NoScenario:
        m_statusText->setText(QStringLiteral("This trace carries no scenario to run."));
        return;
    case ScenarioEditor::Mode::EmbeddedInTrace: editScenarioCopy(); break;
    case ScenarioEditor::Mode::Editable: break;
    }
    const auto validated = m_model->validatedScenario();
    if (!validated) {
        const auto error = m_model->error();
        showError(QStringLiteral("The scenario cannot run: ")
                  + (error ? error->path + QStringLiteral(": ") + error->message : QStringLiteral("it has an error")));
        return;
    }
    m_previewRun = false;
    m_runner->run(backend(), validated, m_variant);
}

void MainWindow::scheduleLiveRun()
{
    if (m_liveBox->isChecked() && m_editor->mode() == ScenarioEditor::Mode::Editable)
        m_liveTimer->start();
}

void MainWindow::liveRun()
{
    // The in-process simulator, whatever the backend: it answers within milliseconds.
    if (m_editor->mode() != ScenarioEditor::Mode::Editable)
        return; // an opened trace stays on the timeline
    const auto validated = m_model->validatedScenario();
    if (!validated) {
        const auto error = m_model->error();
        const QString why = error ? error->path + QStringLiteral(": ") + error->message : QString();
        m_statusText->setText(QStringLiteral("Not simulated: ") + why);
        // Said where the timeline is: what it shows is the scenario before the edit (the next valid one replaces
        // it and this message).
        if (m_trace)
            showError(QStringLiteral("The timeline shows the scenario as it was before this edit, which is not "
                                     "valid: ")
                      + why);
        return;
    }
    if (m_runner->isRunning() && m_runner->runningBackend() == RunBackend::Gpu)
        return; // a GPU run in progress is not replaced by a preview
    m_previewRun = true;
    m_runner->run(RunBackend::Simulator, validated, m_variant);
}

void MainWindow::showTrace(std::shared_ptr<const AnalyzedTrace> trace, const QString& file, double wallMs, bool preview)
{
    // A preview keeps the time range the user zoomed to; one that showed the whole trace shows the whole new one.
    bool keepView = false;
    if (preview && m_trace && m_timeline->trace()) {
        const auto [first, last] = m_timeline->trace()->timeRange();
        const auto [from, to] = m_timeline->visibleTimeRange();
        keepView =
            from > double(first) + 0.02 * double(last - first) || to < double(last) - 0.02 * double(last - first);
    }
    m_trace = std::move(trace);
    m_traceWallMs = wallMs;
    std::shared_ptr<const Trace> t = m_trace ? m_trace->trace : nullptr;
    if (m_analysisOf && m_analysisOf != t.get())
        stopAnalysis(); // the trace it analyses is no longer shown
    m_syncingSelection = true;
    // The views' parts built off the GUI thread with the trace (AnalyzedTrace::layout), handed over.
    std::shared_ptr<const TimelineLayout> layout = m_trace ? std::exchange(m_trace->layout, nullptr) : nullptr;
    std::shared_ptr<const FlowIndex> flows = m_trace ? std::exchange(m_trace->flows, nullptr) : nullptr;
    m_timeline->setTrace(t, keepView, std::move(layout), std::move(flows));
    m_spanModel->setTrace(t, m_trace ? std::exchange(m_trace->launchingOps, nullptr) : nullptr);
    m_opModel->setTrace(t, m_trace ? std::exchange(m_trace->opGpuTimes, nullptr) : nullptr);
    m_syncingSelection = false;
    m_inspector->setTrace(t);
    m_runInfo->setTrace(t, file, wallMs);
    m_analysis->setTrace(m_trace);
    m_concurrency->setTrace(t, m_trace ? std::exchange(m_trace->concurrency, nullptr) : nullptr,
                            m_trace && m_trace->concurrencyToCome);
    ++m_concurrencyGeneration;
    if (m_concurrencyCancel)
        *m_concurrencyCancel = true; // a count under way is for the trace shown before: its result would be dropped
    m_concurrencyCancel.reset();
    if (m_concurrency->isCounting()) {
        // A big trace is drawn before the strip's steps are counted (12 s at 100 M spans, docs/PERFORMANCE.md): they
        // follow, with the histograms where the strip shows those.
        const bool histograms = m_concurrency->mode() == ConcurrencyPlot::Mode::Histogram;
        auto cancel = std::make_shared<std::atomic<bool>>(false);
        m_concurrencyCancel = cancel;
        runOffGuiThread(
            this, &MainWindow::m_concurrencyGeneration,
            [t, histograms, cancel] { return makeConcurrencyPlotData(*t, histograms, cancel.get()); },
            [t](MainWindow& w, std::shared_ptr<const ConcurrencyPlotData> data) {
                w.m_concurrencyCancel.reset();
                w.m_concurrency->setData(t, std::move(data));
                Q_EMIT w.concurrencyShown();
            });
    }
    m_concurrency->setVisibleTimeRange(m_timeline->visibleTimeRange().first, m_timeline->visibleTimeRange().second);
    updateCriticalPath();
    updateTimingNotice();
    updateWhatIfAction();
    if ((!m_screenshotPath.isEmpty() || m_quitAfterScreenshot) && !m_screenshotScheduled) {
        m_screenshotScheduled = true;
        // Let the docks settle and the timeline replot first.
        QTimer::singleShot(400, this, &MainWindow::takeScreenshot);
    }
    Q_EMIT traceShown();
    if (m_trace && m_trace->analysed)
        Q_EMIT analysisShown();
}

void MainWindow::updateTimingNotice()
{
    const TimingNotice notice =
        m_trace && m_trace->trace ? timingNotice(*m_trace->trace, m_trace->report.diagnostics) : TimingNotice{};
    m_timingWarning->setNotice(notice.perturbation.title, notice.perturbation.text);
    // One click to the timing the fix names, unless GPU runs already use it.
    m_suggestedTiming.reset();
    if (!notice.perturbation.isEmpty() && notice.suggested && *notice.suggested != timingMode())
        m_suggestedTiming = notice.suggested;
    if (m_suggestedTiming)
        m_timingWarning->setAction(
            QStringLiteral("Time with %1").arg(timingModeLabel(*m_suggestedTiming)),
            QStringLiteral("Set Timing to %1 for the next GPU run").arg(timingModeLabel(*m_suggestedTiming)));
    else
        m_timingWarning->setAction({});
    m_timingInfo->setNotice(notice.fallback.title, notice.fallback.text);
    updateNoticeVisibility();
}

void MainWindow::updateNoticeVisibility()
{
    // Not over a presentation's slides; the bars hide themselves when dismissed or empty.
    m_noticeToolBar->setVisible(!m_presenting && (!m_timingWarning->isHidden() || !m_timingInfo->isHidden()));
}

void MainWindow::updateCriticalPath()
{
    std::vector<uint32_t> spans;
    const std::shared_ptr<const Trace> t = m_timeline->trace();
    // The report's path (computed off the GUI thread with the analysis); none until a big trace is analysed.
    if (t && m_trace && m_trace->trace == t && m_trace->analysed && m_criticalPathAction
        && m_criticalPathAction->isChecked()) {
        const CriticalPath& path = m_trace->report.criticalPath;
        spans.reserve(path.segments.size());
        for (const auto& segment : path.segments)
            spans.push_back(segment.span);
    }
    m_timeline->setHighlightedSpans(std::move(spans));
}

void MainWindow::selectSpanInTable(int span)
{
    if (m_syncingSelection)
        return;
    m_syncingSelection = true;
    if (const int page = m_spanProxy->pageOfSpan(span); page >= 0)
        m_spanProxy->setPage(page); // the page of the span's row (nothing changes where it is shown)
    const int row = m_spanProxy->rowOfSpan(span);
    if (row < 0) {
        m_spanTable->selectionModel()->clearSelection();
    } else {
        const QModelIndex index = m_spanProxy->index(row, 0);
        m_spanTable->selectionModel()->setCurrentIndex(index,
                                                       QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
        m_spanTable->scrollTo(index);
    }
    m_syncingSelection = false;
}

void MainWindow::updateSpanPager()
{
    const bool updating = m_spanProxy->isUpdating();
    const bool paged = m_spanProxy->pageCount() > 1;
    m_spanPage->setVisible(paged || updating);
    for (QWidget* w : std::initializer_list<QWidget*>{m_spanPrevPage, m_spanNextPage})
        w->setVisible(paged);
    const QLocale locale;
    if (updating) {
        // A big trace's rows are sorted or filtered on a worker: the rows shown stay until the new ones come.
        // (Short beside the filter box; the tooltip says more.)
        const bool filtering = !m_spanProxy->filterText().isEmpty(), sorting = m_spanProxy->sortColumn() >= 0;
        const QString doing = filtering && sorting ? QStringLiteral("Filtering and sorting")
            : filtering                            ? QStringLiteral("Filtering")
                                                   : QStringLiteral("Sorting");
        m_spanPage->setText(doing + QStringLiteral("…"));
        m_spanPage->setToolTip(QStringLiteral("%1 %2 spans in the background: the rows shown stay until the new ones "
                                              "are ready")
                                   .arg(doing, locale.toString(m_spanModel->rowCount())));
        m_spanPrevPage->setEnabled(false);
        m_spanNextPage->setEnabled(false);
        return;
    }
    if (!paged)
        return;
    const qsizetype first = m_spanProxy->firstRowOfPage();
    m_spanPage->setToolTip({});
    m_spanPage->setText(QStringLiteral("Rows %1 – %2 of %3")
                            .arg(locale.toString(first + 1), locale.toString(first + m_spanProxy->rowCount()),
                                 locale.toString(m_spanProxy->totalRows())));
    m_spanPrevPage->setEnabled(m_spanProxy->page() > 0);
    m_spanNextPage->setEnabled(m_spanProxy->page() + 1 < m_spanProxy->pageCount());
}

void MainWindow::showError(const QString& message)
{
    m_messageText->setText(message);
    m_messageBar->show();
    Q_EMIT errorShown(message);
}

void MainWindow::clearError()
{
    m_messageText->clear();
    m_messageBar->hide();
}

QString MainWindow::errorMessage() const
{
    return m_messageBar->isHidden() ? QString() : m_messageText->text();
}

void MainWindow::setScreenshotAfterRun(const QString& path, bool quit)
{
    m_screenshotPath = path;
    m_quitAfterScreenshot = quit;
    m_screenshotScheduled = false;
}

void MainWindow::takeScreenshot()
{
    bool ok = true;
    if (!m_screenshotPath.isEmpty()) {
        const QPixmap shot = grab();
        ok = !shot.isNull() && shot.save(m_screenshotPath, "PNG");
        if (!ok)
            std::fprintf(stderr, "streamscope: could not save the screenshot to %s\n", qPrintable(m_screenshotPath));
    }
    if (m_quitAfterScreenshot) {
        m_model->undoStack()->setClean(); // nothing to ask about
        QCoreApplication::exit(ok ? 0 : 1);
    }
}

} // namespace streamscope
