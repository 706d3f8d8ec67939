// The main window's documents: scenarios, lessons and traces opened (off the GUI thread), saved, autosaved and
// recovered, exported; recent files; the window title.
#include "main_window.h"
#include "main_window_parts.h"

#include "analysis.h"
#include "concurrency_plot.h"

#include "analysis_panel.h"
#include "calibrate_dialog.h"
#include "compare_view.h"
#include "format.h"
#include "image_export.h"
#include "job_loader.h"
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
#include "trace_binary.h"
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
#include <QFile>
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

namespace {

constexpr int kMaxRecentFiles = 10;

// Saves text as every StreamScope file is saved (saveTextFileAtomic: a temporary file renamed over the old one); the
// error names the file.
bool writeFileAtomically(const QString& path, const std::string& text, QString* error)
{
    if (Status saved = saveTextFileAtomic(path.toStdString(), text); !saved) {
        *error = qs(saved.error().toString());
        return false;
    }
    return true;
}

// What an opened trace is, for the window title: "trace (PyTorch)", "trace (GPU run on NVIDIA H200)".
QString traceKindText(const Trace& trace)
{
    const RunInfo& info = trace.info;
    if (const QString job = jobKindText(trace); !job.isEmpty())
        return job;
    switch (info.source) {
    case TraceSource::Imported: {
        static const std::pair<const char*, const char*> kTools[] = {
            {"pytorch", "PyTorch"}, {"chrome", "Chrome JSON"}, {"nsys", "Nsight Systems"}, {"csv", "CSV"}};
        for (const auto& [id, name] : kTools)
            if (info.backend == id)
                return QStringLiteral("trace (%1)").arg(QLatin1String(name));
        return info.backend.empty() ? QStringLiteral("imported trace")
                                    : QStringLiteral("trace (%1)").arg(qs(info.backend));
    }
    case TraceSource::Cupti:
    case TraceSource::CudaEvents:
        return info.devices.empty() || info.devices.front().name.empty()
            ? QStringLiteral("trace (GPU run)")
            : QStringLiteral("trace (GPU run on %1)").arg(qs(info.devices.front().name));
    case TraceSource::Simulator: return QStringLiteral("trace (simulated)");
    }
    return QStringLiteral("trace");
}

// Why an opened trace has no scenario, and what to do instead (the Scenario dock says it).
QString noScenarioText(const AnalyzedTrace& trace)
{
    const RunInfo& info = trace.trace->info;
    if (!info.scenarioJson.empty()) // it has one, but it could not be read
        return (trace.report.note.isEmpty() ? QStringLiteral("The scenario in the trace could not be read.")
                                            : trace.report.note)
            + QStringLiteral(" The trace is shown as recorded.");
    static const std::pair<const char*, const char*> kFrom[] = {{"pytorch", "a PyTorch profiler trace"},
                                                                {"chrome", "a Chrome JSON trace"},
                                                                {"nsys", "an Nsight Systems report"},
                                                                {"csv", "a CSV file"}};
    QString from;
    for (const auto& [id, what] : kFrom)
        if (info.source == TraceSource::Imported && info.backend == id)
            from = QLatin1String(what);
    return (from.isEmpty() ? QStringLiteral("It was recorded without the scenario that made it")
                           : QStringLiteral("It was imported from %1").arg(from))
        + QStringLiteral(": the timeline, the span table and the analysis show it as recorded, but there is nothing "
                         "to edit or run again. To try the same pattern on the simulator, start a New Scenario or "
                         "open a lesson.");
}

} // namespace

// ---- documents -------------------------------------------------------------------------------------------------

QString MainWindow::documentTitle() const
{
    if (!m_path.isEmpty())
        return QFileInfo(m_path).completeBaseName();
    if (!m_tracePath.isEmpty())
        return QFileInfo(m_tracePath).completeBaseName();
    if (!m_lessonId.isEmpty())
        return m_lessonId + (m_variant.isEmpty() ? QString() : QLatin1Char(' ') + m_variant);
    if (!m_untitledName.isEmpty())
        return m_untitledName;
    return QStringLiteral("untitled");
}

bool MainWindow::isModified() const
{
    return !m_model->undoStack()->isClean();
}

QString MainWindow::autosaveDirectory()
{
    return QDir(QStandardPaths::writableLocation(QStandardPaths::AppDataLocation)).filePath(QStringLiteral("autosave"));
}

void MainWindow::setAutosaveDelay(int ms)
{
    m_autosaveTimer->setInterval(ms);
}

void MainWindow::writeAutosave()
{
    if (!isModified() || m_editor->mode() != ScenarioEditor::Mode::Editable) {
        removeAutosave();
        return;
    }
    QDir().mkpath(autosaveDirectory());
    QString error;
    // The document's path beside it (one line; empty for an untitled scenario), then the scenario itself.
    if (!writeFileAtomically(m_autosavePath + QStringLiteral(".origin"), m_path.toStdString(), &error)
        || !writeFileAtomically(m_autosavePath, scenarioToJson(m_model->scenario()), &error))
        m_statusText->setText(QStringLiteral("Could not autosave: %1").arg(error));
}

void MainWindow::removeAutosave()
{
    QFile::remove(m_autosavePath);
    QFile::remove(m_autosavePath + QStringLiteral(".origin"));
}

bool MainWindow::recoverAutosaved()
{
    QDir dir(autosaveDirectory());
    const QFileInfoList files =
        dir.entryInfoList({QStringLiteral("scenario-*-*.json")}, QDir::Files, QDir::Time); // newest first
    for (const QFileInfo& file : files) {
        // scenario-PID-N.json: left behind only where that process is gone.
        const qint64 pid = file.fileName().section(QLatin1Char('-'), 1, 1).toLongLong();
        if (pid <= 0 || pid == QCoreApplication::applicationPid() || (::kill(pid_t(pid), 0) == 0 || errno == EPERM))
            continue;
        QFile originFile(file.filePath() + QStringLiteral(".origin"));
        const QString origin =
            originFile.open(QIODevice::ReadOnly) ? QString::fromUtf8(originFile.readAll()).trimmed() : QString();
        const QString what =
            (origin.isEmpty() ? QStringLiteral("An untitled scenario") : QStringLiteral("The scenario %1").arg(origin))
            + QStringLiteral(" (last autosaved %1)")
                  .arg(file.lastModified().toString(QStringLiteral("yyyy-MM-dd hh:mm:ss")));
        const RecoverChoice choice = m_recoverPrompt(what);
        if (choice == RecoverChoice::Keep)
            continue;
        if (choice == RecoverChoice::Recover) {
            auto read = loadScenarioFile(file.filePath().toStdString());
            if (!read) {
                showError(
                    QStringLiteral("The autosaved scenario cannot be recovered: %1").arg(qs(read.error().toString())));
                continue; // kept: it may be opened as a file
            }
            m_path = origin;
            m_lessonId.clear();
            m_variant.clear();
            m_traceFile.clear();
            m_tracePath.clear();
            m_untitledName.clear();
            m_model->setScenario(std::move(read->scenario));
            m_model->undoStack()->resetClean(); // unsaved until the user saves it
            m_editor->setMode(ScenarioEditor::Mode::Editable);
            QFile::remove(file.filePath());
            QFile::remove(file.filePath() + QStringLiteral(".origin"));
            updateTitle();
            updateLesson();
            m_statusText->setText(QStringLiteral("Recovered %1.").arg(what));
            writeAutosave(); // this window's own copy now
            runScenario();
            return true;
        }
        QFile::remove(file.filePath());
        QFile::remove(file.filePath() + QStringLiteral(".origin"));
    }
    return false;
}

void MainWindow::updateTitle()
{
    // A trace opened as such says so: its file's name and what made it.
    if (!m_tracePath.isEmpty())
        setWindowTitle(QFileInfo(m_tracePath).fileName() + QStringLiteral(" — ") + m_traceKind
                       + QStringLiteral("[*] — StreamScope"));
    else
        setWindowTitle(documentTitle() + QStringLiteral("[*] — StreamScope"));
    setWindowModified(isModified());
    updateScenarioActions();
}

void MainWindow::updateScenarioActions()
{
    if (!m_runAction)
        return;
    const bool none = m_editor->mode() == ScenarioEditor::Mode::NoScenario;
    const QString why = QStringLiteral("This trace carries no scenario to run or save: open a lesson or start a New "
                                       "Scenario to run one");
    m_runAction->setEnabled(!none);
    const bool embedded = m_editor->mode() == ScenarioEditor::Mode::EmbeddedInTrace;
    m_runAction->setToolTip(none           ? why
                                : embedded ? QStringLiteral("Run the trace's scenario again, as an editable copy (F5)")
                                           : QStringLiteral("Run the scenario on the chosen backend (F5)"));
    m_runAction->setStatusTip(none ? why : QString());
    for (QAction* a : {m_saveAction, m_saveAsAction, m_compareVariantAction}) {
        if (!a)
            continue;
        a->setEnabled(!none);
        a->setStatusTip(none ? why : QString());
    }
}

void MainWindow::updateLesson()
{
    const Scenario& s = m_model->scenario();
    QString variantText;
    if (!m_variant.isEmpty()) {
        variantText = QStringLiteral("Variant ") + m_variant;
        for (const Variant& v : s.variants) {
            if (qs(v.id) != m_variant)
                continue;
            variantText =
                QStringLiteral("Variant “") + (v.title.empty() ? qs(v.id) : qs(v.title)) + QStringLiteral("”");
            if (!v.description.empty())
                variantText += QStringLiteral(": ") + qs(v.description);
        }
        variantText += QStringLiteral(" The variant shows the contrast: it is meant to fail the lesson's key check.");
    }
    m_analysis->setLesson(qs(s.title), qs(s.description), variantText);
}

bool MainWindow::maybeSave()
{
    if (!isModified())
        return true;
    switch (m_unsavedPrompt()) {
    case UnsavedChoice::Save: return save();
    case UnsavedChoice::Discard: return true;
    case UnsavedChoice::Cancel: return false;
    }
    return false;
}

std::shared_ptr<ImportProgress> MainWindow::startOpening(const QString& status)
{
    ++m_openGeneration;
    if (m_openCancel)
        *m_openCancel = true; // the opening before stops: the newest request wins
    // The progress owns its cancel flag, so that a worker still reading it outlives a newer opening's.
    struct Opening {
        std::shared_ptr<std::atomic<bool>> cancel = std::make_shared<std::atomic<bool>>(false);
        ImportProgress progress;
    };
    auto opening = std::make_shared<Opening>();
    m_openCancel = opening->cancel;
    m_cancelAction->setEnabled(true);
    m_statusText->setText(status);
    // Progress reaches the status bar from the worker; a newer opening makes it stale.
    opening->progress.cancel = opening->cancel.get();
    const QPointer<MainWindow> self(this);
    const quint64 asked = m_openGeneration;
    opening->progress.report = [self, asked](double fraction) {
        postToGuiThread(self, [asked, fraction](MainWindow& w) {
            if (w.m_openGeneration == asked)
                w.showOpenProgress(fraction);
        });
    };
    return {opening, &opening->progress};
}

bool MainWindow::openPath(const QString& pathOrLesson, const QString& variant)
{
    if (const QStringList job = jobPathsOf(pathOrLesson); !job.isEmpty())
        return openJob(job); // a folder of rank traces, or job.*.json
    if (!maybeSave())
        return false;
    const std::shared_ptr<ImportProgress> progress = startOpening(QStringLiteral("Opening %1…").arg(pathOrLesson));
    // Files are read and parsed off the GUI thread (traces can be large); the newest request wins. A big trace is
    // drawn first and analysed after (analyzeShownTrace).
    runOffGuiThread(
        this, &MainWindow::m_openGeneration,
        [pathOrLesson, variant, progress] {
            return loadDocument(pathOrLesson, variant, progress.get(), kAnalyzeLaterSpans);
        },
        [](MainWindow& w, Result<LoadedDocument> loaded) {
            w.endOpening();
            if (!loaded) {
                w.showError(qs(loaded.error().toString()));
                w.m_statusText->setText(QStringLiteral("Could not open the file."));
                return;
            }
            w.applyDocument(std::move(loaded.value()));
        });
    return true;
}

void MainWindow::cancelOpening()
{
    if (!m_openCancel)
        return;
    *m_openCancel = true;
    ++m_openGeneration; // what it read is dropped when it arrives: the window stays as it was
    endOpening();
    m_statusText->setText(QStringLiteral("Opening cancelled."));
}

void MainWindow::showOpenProgress(double fraction)
{
    if (!m_openCancel || fraction >= 1.0)
        return;
    m_progress->setRange(0, 100);
    m_progress->setValue(int(fraction * 100));
    m_progress->setFormat(QStringLiteral("%p %"));
    m_progress->setTextVisible(true);
    m_progress->setToolTip(QStringLiteral("Reading the file: Run ▸ Cancel (Ctrl+.) stops"));
    m_progress->show();
}

void MainWindow::endOpening()
{
    m_openCancel.reset();
    m_progress->setRange(0, 0); // busy, as runs show it
    m_progress->setTextVisible(false);
    m_progress->setToolTip(QString());
    if (!m_runner->isRunning())
        m_progress->hide();
    m_cancelAction->setEnabled(m_runner->isRunning());
}

void MainWindow::analyzeShownTrace()
{
    ++m_analysisGeneration;
    stopAnalysis();
    if (!m_trace || m_trace->analysed)
        return;
    const std::shared_ptr<const Trace> trace = m_trace->trace;
    auto cancel = std::make_shared<std::atomic<bool>>(false);
    m_analysisCancel = cancel;
    m_analysisOf = trace.get();
    m_statusText->setText(m_statusText->text() + QStringLiteral(" Analysing…"));
    runOffGuiThread(
        this, &MainWindow::m_analysisGeneration, [trace, cancel] { return makeAnalyzedTrace(trace, cancel.get()); },
        [](MainWindow& w, std::shared_ptr<const AnalyzedTrace> analyzed) {
            if (!w.m_trace || w.m_trace->trace != analyzed->trace)
                return; // another trace is shown by now
            w.m_analysisCancel.reset();
            w.m_analysisOf = nullptr;
            w.m_trace = std::move(analyzed);
            w.m_analysis->setTrace(w.m_trace);
            w.updateCriticalPath();
            w.updateTimingNotice();
            w.updateWhatIfAction();
            QString status = w.m_statusText->text();
            status.replace(QStringLiteral(" Analysing…"), QString());
            w.m_statusText->setText(status);
            Q_EMIT w.analysisShown();
        });
}

void MainWindow::stopAnalysis()
{
    if (m_analysisCancel)
        *m_analysisCancel = true;
    m_analysisCancel.reset();
    m_analysisOf = nullptr;
}

void MainWindow::applyDocument(LoadedDocument doc)
{
    clearError();
    // The Spans filter belongs to the document it was typed for: another file, lesson or variant starts unfiltered
    // (a re-run of the same one keeps it).
    const QString shownPath = m_path.isEmpty() ? m_tracePath : m_path;
    if (doc.lessonId != m_lessonId || doc.variant != m_variant || (doc.lessonId.isEmpty() && doc.path != shownPath))
        m_spanFilter->clear();
    m_lessonId = doc.lessonId;
    m_variant = doc.variant;
    m_untitledName.clear();
    m_traceFile.clear();
    m_tracePath.clear();
    const bool isFile = doc.lessonId.isEmpty();
    if (isFile)
        addRecentFile(doc.path);
    if (doc.kind == DocumentKind::Trace) {
        // The trace as recorded is the document; its embedded scenario is shown read-only (Edit a copy makes it an
        // ordinary scenario), and an imported trace, which has none, says so instead of showing an empty scenario.
        m_path.clear();
        m_traceFile = doc.path;
        m_tracePath = doc.path;
        m_traceKind = traceKindText(*doc.trace->trace);
        m_runner->cancel();
        const bool hasScenario = doc.hasScenario;
        m_model->setScenario(hasScenario ? std::move(doc.scenario) : Scenario{});
        m_editor->setMode(hasScenario ? ScenarioEditor::Mode::EmbeddedInTrace : ScenarioEditor::Mode::NoScenario,
                          hasScenario ? QString() : noScenarioText(*doc.trace));
        m_liveTimer->stop(); // the trace is what the user opened: no preview replaces it
        showTrace(doc.trace, doc.path, -1);
        m_statusText->setText(QStringLiteral("Opened the trace %1.").arg(doc.path));
        analyzeShownTrace(); // a big trace: drawn now, analysed next
    } else {
        m_path = isFile ? doc.path : QString();
        m_model->setScenario(std::move(doc.scenario));
        m_editor->setMode(ScenarioEditor::Mode::Editable);
        m_liveTimer->stop(); // runScenario below runs it
        m_gallery->setCurrentLesson(doc.lessonId, doc.variant);
        QStringList warnings;
        for (const Warning& w : doc.warnings)
            warnings << qs(w.toString());
        m_statusText->setText(warnings.isEmpty() ? QStringLiteral("Opened %1.").arg(documentTitle())
                                                 : QStringLiteral("Opened %1 with %2 warning(s): %3")
                                                       .arg(documentTitle())
                                                       .arg(warnings.size())
                                                       .arg(warnings.front()));
        // Run it right away: on the GPU when one is usable (possibly once the probe has said so), else simulated.
        if (!m_userChoseBackend && m_runner->gpuStatus().state == GpuStatus::State::Checking)
            m_gpuRunPending = true;
        runScenario();
    }
    m_editor->selectItem(ScenarioItemRef::settings());
    updateTitle();
    updateLesson();
    Q_EMIT documentOpened(doc.path);
}

// ---- what the window shows, kept and put back --------------------------------------------------------------------

struct ShownDocument {
    QString path, lessonId, variant, traceFile, tracePath, traceKind, untitledName;
    Scenario scenario;
    ScenarioEditor::Mode editorMode = ScenarioEditor::Mode::Editable;
    bool modified = false;
    std::shared_ptr<const AnalyzedTrace> trace;
    double wallMs = -1;
    std::pair<double, double> timeRange;
    double verticalScroll = 0;
    int selectedSpan = -1;
    QString spanFilter;

    bool sameDocument(const MainWindow& w) const
    {
        return path == w.m_path && lessonId == w.m_lessonId && variant == w.m_variant && tracePath == w.m_tracePath
            && untitledName == w.m_untitledName;
    }
};

std::shared_ptr<const ShownDocument> MainWindow::shownDocument() const
{
    auto shown = std::make_shared<ShownDocument>();
    shown->path = m_path;
    shown->lessonId = m_lessonId;
    shown->variant = m_variant;
    shown->traceFile = m_traceFile;
    shown->tracePath = m_tracePath;
    shown->traceKind = m_traceKind;
    shown->untitledName = m_untitledName;
    shown->scenario = m_model->scenario();
    shown->editorMode = m_editor->mode();
    shown->modified = isModified();
    shown->trace = m_trace;
    shown->wallMs = m_traceWallMs;
    shown->timeRange = m_timeline->visibleTimeRange();
    shown->verticalScroll = m_timeline->verticalScroll();
    shown->selectedSpan = m_timeline->selectedSpan();
    shown->spanFilter = m_spanFilter->text();
    return shown;
}

void MainWindow::restoreShownDocument(const ShownDocument& shown)
{
    if (!shown.sameDocument(*this)) {
        ++m_openGeneration; // a document still being read is dropped when it arrives
        m_runner->cancel(); // and a run of the other document never reaches the timeline
        m_liveTimer->stop();
        m_gpuRunPending = false;
        m_previewRun = false;
        clearError();
        m_path = shown.path;
        m_lessonId = shown.lessonId;
        m_variant = shown.variant;
        m_traceFile = shown.traceFile;
        m_tracePath = shown.tracePath;
        m_traceKind = shown.traceKind;
        m_untitledName = shown.untitledName;
        m_model->setScenario(shown.scenario);
        if (shown.modified)
            m_model->undoStack()->resetClean(); // its edits are still unsaved
        m_liveTimer->stop();                    // the trace below is the one it showed: nothing runs again
        m_editor->setMode(shown.editorMode,
                          shown.editorMode == ScenarioEditor::Mode::NoScenario && shown.trace
                              ? noScenarioText(*shown.trace)
                              : QString());
        m_gallery->setCurrentLesson(m_lessonId, m_variant);
        showTrace(shown.trace, shown.traceFile, shown.wallMs);
        if (shown.selectedSpan >= 0 && m_trace && m_trace == shown.trace)
            m_timeline->selectSpan(shown.selectedSpan);
        m_editor->selectItem(ScenarioItemRef::settings());
        updateTitle();
        updateLesson();
        m_statusText->setText(QStringLiteral("Showing %1 again.").arg(documentTitle()));
    }
    m_spanFilter->setText(shown.spanFilter);
    // The zoom it had (selectSpan above may have moved it).
    if (m_timeline->trace()) {
        m_timeline->setVisibleTimeRange(shown.timeRange.first, shown.timeRange.second);
        m_timeline->setVerticalScroll(shown.verticalScroll);
    }
}

void MainWindow::newScenario()
{
    if (!maybeSave())
        return;
    m_spanFilter->clear();
    Scenario s;
    s.title = "New scenario";
    s.devices.push_back(DeviceSpec{0, {}});
    s.streams.push_back(StreamSpec{"s1", 0, StreamKind::NonBlocking, 0});
    s.streams.push_back(StreamSpec{"s2", 0, StreamKind::NonBlocking, 0});
    ThreadSpec t;
    t.name = "main";
    s.threads.push_back(t);
    for (const char* stream : {"s1", "s2"}) {
        Op k = ScenarioModel::defaultOp(s, 0, OpKind::Kernel);
        k.stream = stream;
        s.threads[0].ops.push_back(k);
    }
    s.threads[0].ops.push_back(ScenarioModel::defaultOp(s, 0, OpKind::DeviceSync));
    m_path.clear();
    m_lessonId.clear();
    m_variant.clear();
    m_traceFile.clear();
    m_tracePath.clear();
    m_untitledName.clear();
    m_gallery->clearCurrentLesson();
    m_model->setScenario(std::move(s));
    m_editor->setMode(ScenarioEditor::Mode::Editable);
    m_liveTimer->stop();
    m_editor->selectItem(ScenarioItemRef::settings());
    updateTitle();
    runScenario();
}

bool MainWindow::saveScenarioAs(const QString& path)
{
    QString error;
    if (!writeFileAtomically(path, scenarioToJson(m_model->scenario()), &error)) {
        showError(error);
        return false;
    }
    m_path = path;
    m_lessonId.clear();
    m_variant.clear(); // a file of its own now, no longer a lesson's variant
    m_untitledName.clear();
    if (m_editor->mode() == ScenarioEditor::Mode::EmbeddedInTrace) { // the scenario of a trace, saved: the document
        m_tracePath.clear();
        m_editor->setMode(ScenarioEditor::Mode::Editable);
    }
    m_model->undoStack()->setClean();
    removeAutosave();
    addRecentFile(path);
    updateTitle();
    updateLesson();
    m_statusText->setText(QStringLiteral("Saved %1.").arg(path));
    return true;
}

bool MainWindow::save()
{
    if (!m_path.isEmpty())
        return saveScenarioAs(m_path);
    QSettings settings;
    const QString suggestion = QDir(settings.value(QStringLiteral("lastDir"), QDir::homePath()).toString())
                                   .filePath(documentTitle() + QStringLiteral(".json"));
    const QString path = QFileDialog::getSaveFileName(this, QStringLiteral("Save the scenario"), suggestion,
                                                      QStringLiteral("Scenario (*.json)"));
    return !path.isEmpty() && saveScenarioAs(path);
}

bool MainWindow::saveTraceAs(const QString& path, ExportFormat format)
{
    if (!m_trace) {
        showError(QStringLiteral("There is no trace to save yet: run the scenario first."));
        return false;
    }
    QString error;
    if (!writeFileAtomically(path, exportTraceText(*m_trace->trace, format), &error)) {
        showError(error);
        return false;
    }
    addRecentFile(path);
    m_statusText->setText(QStringLiteral("Saved the trace to %1.").arg(path));
    return true;
}

bool MainWindow::exportImage(const QString& path, QSize size)
{
    ImageOptions options;
    options.size = size;
    return exportImage(path, options);
}

bool MainWindow::exportImage(const QString& path, ImageOptions options)
{
    if (!m_trace) {
        showError(QStringLiteral("There is no trace to export yet: run the scenario first."));
        return false;
    }
    QString error;
    // What the view shows (its time range, the arrows turned on, the selection) unless the options say otherwise.
    if (options.title.isEmpty())
        options.title = defaultImageTitle(*m_trace->trace, m_traceFile);
    if (!exportTimelineImage(*m_timeline, path, options, &error)) {
        showError(error.isEmpty() ? QStringLiteral("Could not export %1").arg(path) : error);
        return false;
    }
    return true;
}

void MainWindow::addRecentFile(const QString& path)
{
    QSettings settings;
    QStringList files = settings.value(QStringLiteral("recentFiles")).toStringList();
    const QString absolute = QFileInfo(path).absoluteFilePath();
    files.removeAll(absolute);
    files.prepend(absolute);
    while (files.size() > kMaxRecentFiles)
        files.removeLast();
    settings.setValue(QStringLiteral("recentFiles"), files);
    rebuildRecentMenu();
}

QStringList MainWindow::recentFiles() const
{
    return QSettings().value(QStringLiteral("recentFiles")).toStringList();
}

void MainWindow::rebuildRecentMenu()
{
    m_recentMenu->clear();
    const QStringList files = recentFiles();
    for (const QString& f : files) {
        QAction* a = m_recentMenu->addAction(QFileInfo(f).fileName(), this, [this, f] { openPath(f); });
        a->setToolTip(f);
        a->setStatusTip(f);
    }
    if (files.isEmpty())
        m_recentMenu->addAction(QStringLiteral("(none)"))->setEnabled(false);
    else {
        m_recentMenu->addSeparator();
        m_recentMenu->addAction(QStringLiteral("Clear"), this, [this] {
            QSettings().remove(QStringLiteral("recentFiles"));
            rebuildRecentMenu();
        });
    }
}

} // namespace streamscope
