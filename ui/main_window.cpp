#include "main_window.h"

#include "analysis.h"
#include "concurrency_plot.h"

#include "analysis_panel.h"
#include "calibrate_dialog.h"
#include "compare_view.h"
#include "whatif_dialog.h"
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
#include <QStandardPaths>
#include <QSpinBox>
#include <QStandardItemModel>
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

QDockWidget* makeDock(const QString& title, const QString& objectName, QWidget* content, QMainWindow* parent)
{
    auto* dock = new QDockWidget(title, parent);
    dock->setObjectName(objectName);
    dock->setWidget(content);
    dock->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable |
                      QDockWidget::DockWidgetClosable);
    return dock;
}

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
        return trace.report.note + QStringLiteral(" The trace is shown as recorded.");
    static const std::pair<const char*, const char*> kFrom[] = {{"pytorch", "a PyTorch profiler trace"},
                                                                {"chrome", "a Chrome JSON trace"},
                                                                {"nsys", "an Nsight Systems report"},
                                                                {"csv", "a CSV file"}};
    QString from;
    for (const auto& [id, what] : kFrom)
        if (info.source == TraceSource::Imported && info.backend == id)
            from = QLatin1String(what);
    return (from.isEmpty() ? QStringLiteral("It was recorded without the scenario that made it")
                           : QStringLiteral("It was imported from %1").arg(from)) +
           QStringLiteral(": the timeline, the span table and the analysis show it as recorded, but there is nothing "
                          "to edit or run again. To try the same pattern on the simulator, start a New Scenario or "
                          "open a lesson.");
}

} // namespace

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent), m_model(new ScenarioModel(this)), m_runner(new RunController(this)),
      m_timeline(new TimelineView), m_liveTimer(new QTimer(this)), m_progressDelay(new QTimer(this))
{
    setObjectName(QStringLiteral("StreamScopeMainWindow"));
    setAcceptDrops(true);
    setDockNestingEnabled(true);
    m_recoverPrompt = [this](const QString& what) {
        QMessageBox box(QMessageBox::Question, QStringLiteral("Recover unsaved changes"),
                        QStringLiteral("StreamScope did not close normally. %1 has changes that were not saved. "
                                       "Recover them?").arg(what),
                        QMessageBox::NoButton, this);
        QPushButton* recover = box.addButton(QStringLiteral("Recover"), QMessageBox::AcceptRole);
        QPushButton* discard = box.addButton(QStringLiteral("Discard"), QMessageBox::DestructiveRole);
        box.addButton(QStringLiteral("Later"), QMessageBox::RejectRole);
        box.setDefaultButton(recover);
        box.exec();
        return box.clickedButton() == recover   ? RecoverChoice::Recover
               : box.clickedButton() == discard ? RecoverChoice::Discard
                                                : RecoverChoice::Keep;
    };
    m_unsavedPrompt = [this] {
        const auto answer = QMessageBox::warning(
            this, QStringLiteral("Unsaved changes"),
            QStringLiteral("%1 has changes that are not saved. Save them?").arg(documentTitle()),
            QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel, QMessageBox::Save);
        return answer == QMessageBox::Save      ? UnsavedChoice::Save
               : answer == QMessageBox::Discard ? UnsavedChoice::Discard
                                                : UnsavedChoice::Cancel;
    };

    // Centre: a message bar (run and file errors) over the timeline.
    m_messageBar = new QFrame;
    m_messageBar->setObjectName(QStringLiteral("messageBar"));
    m_messageBar->setStyleSheet(QStringLiteral("#messageBar { background:#fdecea; border:1px solid #e57373; }"));
    m_messageText = new QLabel;
    m_messageText->setWordWrap(true);
    m_messageText->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_messageText->setStyleSheet(QStringLiteral("color:#8e1c1c;"));
    auto* closeMessage = new QToolButton;
    closeMessage->setText(QStringLiteral("✕"));
    closeMessage->setAutoRaise(true);
    closeMessage->setToolTip(QStringLiteral("Dismiss"));
    connect(closeMessage, &QToolButton::clicked, this, &MainWindow::clearError);
    auto* barLayout = new QHBoxLayout(m_messageBar);
    barLayout->setContentsMargins(8, 4, 4, 4);
    barLayout->addWidget(m_messageText, 1);
    barLayout->addWidget(closeMessage, 0, Qt::AlignTop);
    m_messageBar->hide();

    // What a GPU trace says about its timing: it changed the run; CUPTI was not used (timing_text.h). Shown across
    // the whole window under the toolbar (see createToolbars): at 1280 px the centre alone is too narrow for a line.
    m_timingWarning = new NoticeBar(NoticeBar::Tone::Warning);
    m_timingInfo = new NoticeBar(NoticeBar::Tone::Info);
    connect(m_timingWarning, &NoticeBar::dismissed, this, &MainWindow::updateNoticeVisibility);
    connect(m_timingInfo, &NoticeBar::dismissed, this, &MainWindow::updateNoticeVisibility);
    connect(m_timingWarning, &NoticeBar::actionTriggered, this, [this] {
        if (!m_suggestedTiming)
            return;
        setTimingMode(*m_suggestedTiming);
        m_statusText->setText(QStringLiteral("GPU runs are now timed with %1: run again (F5) to compare.")
                                  .arg(timingModeLabel(timingMode())));
    });

    auto* centre = new QWidget;
    auto* centreLayout = new QVBoxLayout(centre);
    centreLayout->setContentsMargins(0, 0, 0, 0);
    centreLayout->setSpacing(0);
    centreLayout->addWidget(m_messageBar);
    centreLayout->addWidget(m_timeline, 1);
    m_concurrency = new ConcurrencyPlot;
    m_concurrency->followTimeline(m_timeline);
    centreLayout->addWidget(m_concurrency);
    setCentralWidget(centre);
    m_timeline->setFocusPolicy(Qt::StrongFocus);

    m_progress = new QProgressBar;
    m_progress->setRange(0, 0);
    m_progress->setMaximumWidth(160);
    m_progress->setMaximumHeight(16);
    m_progress->hide();
    m_statusText = new QLabel;
    statusBar()->addWidget(m_statusText, 1);
    statusBar()->addPermanentWidget(m_progress);
    m_progressDelay->setSingleShot(true);
    m_progressDelay->setInterval(150);
    connect(m_progressDelay, &QTimer::timeout, this, [this] { m_progress->setVisible(m_runner->isRunning()); });

    createDocks();
    createActions();
    createToolbars();

    // Live simulation: every edit (and undo/redo) re-simulates, coalesced per event-loop turn.
    m_liveTimer->setSingleShot(true);
    m_liveTimer->setInterval(0);
    connect(m_liveTimer, &QTimer::timeout, this, &MainWindow::liveRun);
    connect(m_model->undoStack(), &QUndoStack::indexChanged, this, &MainWindow::scheduleLiveRun);
    connect(m_model->undoStack(), &QUndoStack::cleanChanged, this, &MainWindow::updateTitle);
    // Autosave: a moment after the last edit, while there are unsaved ones.
    static std::atomic<int> windows{0};
    m_autosavePath = QDir(autosaveDirectory())
                         .filePath(QStringLiteral("scenario-%1-%2.json").arg(QCoreApplication::applicationPid()).arg(++windows));
    m_autosaveTimer = new QTimer(this);
    m_autosaveTimer->setSingleShot(true);
    m_autosaveTimer->setInterval(1000);
    connect(m_autosaveTimer, &QTimer::timeout, this, &MainWindow::writeAutosave);
    connect(m_model->undoStack(), &QUndoStack::indexChanged, m_autosaveTimer, qOverload<>(&QTimer::start));
    connect(m_model->undoStack(), &QUndoStack::cleanChanged, m_autosaveTimer, qOverload<>(&QTimer::start));
    connect(m_model, &ScenarioModel::scenarioChanged, this, &MainWindow::updateLesson);

    // Runs.
    connect(m_runner, &RunController::finished, this,
            [this](std::shared_ptr<const AnalyzedTrace> trace, RunBackend b, double ms) {
                clearError();
                m_traceFile.clear();
                showTrace(std::move(trace), {}, ms, m_previewRun && b == RunBackend::Simulator);
                m_statusText->setText(b == RunBackend::Gpu ? QStringLiteral("Ran on the GPU in %1.").arg(formatNs(ms * 1e6))
                                                           : QStringLiteral("Simulated in %1.").arg(formatNs(ms * 1e6)));
            });
    connect(m_runner, &RunController::partialTrace, this, [this](std::shared_ptr<const AnalyzedTrace> trace, double ms) {
        m_traceFile.clear();
        m_partialShown = true;
        showTrace(std::move(trace), {}, ms);
    });
    connect(m_runner, &RunController::failed, this, [this](const QString& message, int) {
        if (m_quitAfterScreenshot)
            std::fprintf(stderr, "streamscope: the run failed: %s\n", qPrintable(message));
        const bool partial = std::exchange(m_partialShown, false);
        showError(partial ? message + QStringLiteral("\nThe timeline shows the partial trace: what ran until the failure.")
                          : message);
        m_statusText->setText(partial ? QStringLiteral("The run failed; the partial trace is shown.")
                                      : QStringLiteral("The run failed."));
        if (m_quitAfterScreenshot)
            QCoreApplication::exit(message.startsWith(QLatin1String("GPU error")) ? 3 : 2);
    });
    connect(m_runner, &RunController::cancelled, this, [this] { m_statusText->setText(QStringLiteral("Run cancelled.")); });
    connect(m_runner, &RunController::progressMessage, m_statusText, &QLabel::setText);
    connect(m_runner, &RunController::runningChanged, this, [this](bool running) {
        m_cancelAction->setEnabled(running);
        if (running) {
            m_progressDelay->start();
        } else {
            m_progressDelay->stop();
            m_progress->hide();
        }
    });
    connect(m_runner, &RunController::started, this, [this](RunBackend b) {
        if (b == RunBackend::Gpu) {
            m_progress->show();
            m_statusText->setText(QStringLiteral("Running on the GPU…"));
        }
    });
    connect(m_runner, &RunController::gpuStatusChanged, this, &MainWindow::updateGpuChoice);

    // Selection: timeline ⇄ span table ⇄ inspector.
    connect(m_timeline, &TimelineView::spanSelected, this, [this](int span) {
        m_inspector->showSpan(span);
        selectSpanInTable(span);
    });
    connect(m_inspector, &SpanInspector::spanActivated, m_timeline, &TimelineView::selectSpan);
    connect(m_analysis, &AnalysisPanel::spanActivated, m_timeline, &TimelineView::selectSpan);
    connect(m_inspector, &SpanInspector::opActivated, this, [this](int thread, int op) {
        if (auto* dock = findChild<QDockWidget*>(QStringLiteral("scenarioDock"))) {
            dock->show();
            dock->raise();
        }
        m_editor->selectItem(ScenarioItemRef::op(thread, op));
    });
    connect(m_spanTable->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex& current) {
                if (m_syncingSelection || !current.isValid())
                    return;
                const int span = m_spanProxy->spanAtRow(current.row());
                m_syncingSelection = true;
                m_timeline->selectSpan(span);
                m_syncingSelection = false;
            });

    connect(m_editor, &ScenarioEditor::editCopyRequested, this, &MainWindow::editScenarioCopy);
    connect(m_gallery, &LessonGallery::openRequested, this,
            [this](const QString& id, const QString& variant) { openPath(id, variant); });

    readSettings();
    updateGpuChoice();
    updateTitle();
    updateLesson();
    rebuildRecentMenu();
}

MainWindow::~MainWindow()
{
    removeAutosave(); // a window that closes keeps nothing to recover
    // Signals sent while the parts go (the undo stack clearing itself, the timeline dropping its trace) must not
    // reach a half-destroyed window; and the widgets that watch the scenario model go before it does.
    for (QObject* sender : std::initializer_list<QObject*>{m_model, m_model->undoStack(), m_runner, m_timeline,
                                                           m_inspector, m_analysis, m_spanTable->selectionModel(), m_gallery,
                                                           m_liveTimer, m_progressDelay})
        disconnect(sender, nullptr, this, nullptr);
    const auto docks = findChildren<QDockWidget*>(Qt::FindDirectChildrenOnly);
    for (QDockWidget* dock : docks)
        delete dock;
}

QuickControls* MainWindow::quickControls() const
{
    return m_editor->quickControls();
}

// ---- construction ----------------------------------------------------------------------------------------------

void MainWindow::createDocks()
{
    m_editor = new ScenarioEditor(m_model);
    m_gallery = new LessonGallery;
    m_inspector = new SpanInspector;
    m_analysis = new AnalysisPanel;
    m_runInfo = new RunInfoPanel;

    m_spanModel = new SpanTableModel(this);
    m_spanProxy = new SpanTableProxy(this);
    m_spanProxy->setSourceModel(m_spanModel);
    m_spanTable = new QTableView;
    m_spanTable->setModel(m_spanProxy);
    // Unsorted at first: spans come grouped by stream and sorted by start, and sorting millions of rows takes
    // seconds, so it happens only when a header is clicked.
    m_spanTable->horizontalHeader()->setSortIndicator(-1, Qt::AscendingOrder);
    m_spanTable->setSortingEnabled(true);
    m_spanTable->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_spanTable->setSelectionMode(QAbstractItemView::SingleSelection);
    m_spanTable->setAlternatingRowColors(true);
    m_spanTable->verticalHeader()->hide();
    m_spanTable->verticalHeader()->setDefaultSectionSize(m_spanTable->fontMetrics().height() + 6);
    m_spanTable->horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
    m_spanTable->horizontalHeader()->setStretchLastSection(true);
    m_spanTable->setWordWrap(false);
    const int unit = m_spanTable->fontMetrics().averageCharWidth();
    const int widths[] = {21, 19, 18, 11, 11, 11, 10, 10, 14, 16};
    for (int c = 0; c < SpanTableModel::ColumnCount; ++c)
        m_spanTable->setColumnWidth(c, widths[c] * unit);
    m_spanFilter = new QLineEdit;
    m_spanFilter->setPlaceholderText(QStringLiteral("Filter by name, kind or stream…"));
    m_spanFilter->setClearButtonEnabled(true);
    connect(m_spanFilter, &QLineEdit::textChanged, m_spanProxy, &SpanTableProxy::setFilterText);
    auto* spans = new QWidget;
    auto* spansLayout = new QVBoxLayout(spans);
    spansLayout->setContentsMargins(4, 4, 4, 4);
    spansLayout->setSpacing(4);
    spansLayout->addWidget(m_spanFilter);
    spansLayout->addWidget(m_spanTable, 1);
    // Grouped: GPU time by the op that launched it (PyTorch traces; ranges.h), instead of one row per span.
    m_opModel = new OpGpuTimeModel(this);
    auto* opProxy = new QSortFilterProxyModel(this);
    opProxy->setSourceModel(m_opModel);
    opProxy->setSortRole(OpGpuTimeModel::SortRole);
    m_opTable = new QTableView;
    m_opTable->setObjectName(QStringLiteral("op-gpu-time"));
    m_opTable->setModel(opProxy);
    m_opTable->setSortingEnabled(true);
    m_opTable->sortByColumn(OpGpuTimeModel::GpuTimeColumn, Qt::DescendingOrder);
    m_opTable->setAlternatingRowColors(true);
    m_opTable->verticalHeader()->hide();
    m_opTable->horizontalHeader()->setStretchLastSection(true);
    m_opTable->setColumnWidth(OpGpuTimeModel::OpColumn, 30 * unit);
    m_opTable->hide();
    m_groupByOp = new QCheckBox(QStringLiteral("Group GPU time by launching op"));
    m_groupByOp->setObjectName(QStringLiteral("group-by-op"));
    m_groupByOp->setToolTip(QStringLiteral("One row per op (CPU op, annotation) whose calls launched GPU work: how "
                                           "many GPU operations and how much GPU time"));
    connect(m_groupByOp, &QCheckBox::toggled, this, [this](bool on) {
        m_spanTable->setVisible(!on);
        m_spanFilter->setVisible(!on);
        m_opTable->setVisible(on);
    });
    spansLayout->addWidget(m_opTable, 1);
    spansLayout->addWidget(m_groupByOp);

    QDockWidget* scenarioDock = makeDock(QStringLiteral("Scenario"), QStringLiteral("scenarioDock"), m_editor, this);
    QDockWidget* lessonsDock = makeDock(QStringLiteral("Lessons"), QStringLiteral("lessonsDock"), m_gallery, this);
    QDockWidget* analysisDock = makeDock(QStringLiteral("Analysis"), QStringLiteral("analysisDock"), m_analysis, this);
    QDockWidget* inspectorDock = makeDock(QStringLiteral("Inspector"), QStringLiteral("inspectorDock"), m_inspector, this);
    QDockWidget* runInfoDock = makeDock(QStringLiteral("Run info"), QStringLiteral("runInfoDock"), m_runInfo, this);
    QDockWidget* spansDock = makeDock(QStringLiteral("Spans"), QStringLiteral("spansDock"), spans, this);

    addDockWidget(Qt::LeftDockWidgetArea, scenarioDock);
    tabifyDockWidget(scenarioDock, lessonsDock);
    scenarioDock->raise();
    addDockWidget(Qt::RightDockWidgetArea, analysisDock);
    addDockWidget(Qt::RightDockWidgetArea, inspectorDock);
    splitDockWidget(analysisDock, inspectorDock, Qt::Vertical);
    tabifyDockWidget(inspectorDock, runInfoDock);
    inspectorDock->raise();
    addDockWidget(Qt::BottomDockWidgetArea, spansDock);
    setCorner(Qt::BottomLeftCorner, Qt::LeftDockWidgetArea);
    setCorner(Qt::BottomRightCorner, Qt::RightDockWidgetArea);
    resizeDocks({scenarioDock, analysisDock}, {390, 340}, Qt::Horizontal);
    resizeDocks({analysisDock, inspectorDock}, {520, 320}, Qt::Vertical);
    resizeDocks({spansDock}, {250}, Qt::Vertical);
}

void MainWindow::createActions()
{
    // File
    QMenu* file = menuBar()->addMenu(QStringLiteral("&File"));
    m_newAction = file->addAction(QStringLiteral("&New Scenario"), this, &MainWindow::newScenario);
    m_newAction->setShortcut(QKeySequence::New);
    m_newAction->setIconText(QStringLiteral("New"));
    QAction* open = m_openAction = file->addAction(QStringLiteral("&Open…"), this, [this] {
        QSettings settings;
        const QString path = QFileDialog::getOpenFileName(
            this, QStringLiteral("Open a scenario or trace"), settings.value(QStringLiteral("lastDir")).toString(),
            QStringLiteral("Scenarios and traces (*.json *.json.gz *.csv *.sqlite);;All files (*)"));
        if (!path.isEmpty()) {
            settings.setValue(QStringLiteral("lastDir"), QFileInfo(path).absolutePath());
            openPath(path);
        }
    });
    open->setShortcut(QKeySequence::Open);
    open->setIconText(QStringLiteral("Open"));
    QMenu* lessons = file->addMenu(QStringLiteral("Open &Lesson"));
    for (const LessonEntry& e : m_gallery->model()->lessons()) {
        lessons->addAction(e.id.section(QLatin1Char('-'), 0, 0) + QStringLiteral("  ") + e.title, this,
                           [this, id = e.id] { openPath(id); });
    }
    m_recentMenu = file->addMenu(QStringLiteral("Open &Recent"));
    file->addSeparator();
    m_saveAction = file->addAction(QStringLiteral("&Save Scenario"), this, &MainWindow::save);
    m_saveAction->setShortcut(QKeySequence::Save);
    m_saveAction->setIconText(QStringLiteral("Save"));
    QAction* saveAs = m_saveAsAction = file->addAction(QStringLiteral("Save Scenario &As…"), this, [this] {
        QSettings settings;
        QString suggestion = m_path;
        if (suggestion.isEmpty())
            suggestion = QDir(settings.value(QStringLiteral("lastDir"), QDir::homePath()).toString())
                             .filePath((m_lessonId.isEmpty() ? QStringLiteral("scenario") : m_lessonId) +
                                       QStringLiteral(".json"));
        const QString path = QFileDialog::getSaveFileName(this, QStringLiteral("Save the scenario"), suggestion,
                                                          QStringLiteral("Scenario (*.json)"));
        if (!path.isEmpty())
            saveScenarioAs(path);
    });
    saveAs->setShortcut(QKeySequence::SaveAs);
    m_saveTraceAction = file->addAction(QStringLiteral("Save &Trace As…"), this, [this] {
        QSettings settings;
        const QString suggestion = QDir(settings.value(QStringLiteral("lastDir"), QDir::homePath()).toString())
                                       .filePath(documentTitle() + QStringLiteral(".trace.json"));
        QString filter;
        const QString chrome = QStringLiteral("Chrome/Perfetto trace (*.json)");
        const QString csv = QStringLiteral("CSV, one row per span (*.csv)");
        const QString path = QFileDialog::getSaveFileName(
            this, QStringLiteral("Save the trace"), suggestion,
            QStringLiteral("StreamScope trace (*.json);;") + chrome + QStringLiteral(";;") + csv, &filter);
        if (path.isEmpty())
            return;
        const ExportFormat format = filter == chrome ? ExportFormat::Chrome
                                    : filter == csv || path.endsWith(QLatin1String(".csv"), Qt::CaseInsensitive)
                                        ? ExportFormat::Csv
                                        : ExportFormat::Streamscope;
        saveTraceAs(path, format);
    });
    m_exportAction = file->addAction(QStringLiteral("&Export Image…"), this, [this] {
        QSettings settings;
        const QString suggestion = QDir(settings.value(QStringLiteral("lastDir"), QDir::homePath()).toString())
                                       .filePath(documentTitle() + QStringLiteral(".png"));
        QString filter;
        const QString path = QFileDialog::getSaveFileName(
            this, QStringLiteral("Export the timeline"), suggestion,
            QStringLiteral("PNG image (*.png);;SVG drawing (*.svg);;PDF document (*.pdf)"), &filter);
        if (path.isEmpty())
            return;
        QString chosen = path;
        if (!imageFormatForPath(chosen))
            chosen += filter.startsWith(QLatin1String("SVG"))   ? QStringLiteral(".svg")
                      : filter.startsWith(QLatin1String("PDF")) ? QStringLiteral(".pdf")
                                                                : QStringLiteral(".png");
        // The size, remembered for next time (PDF: points).
        QDialog dialog(this);
        dialog.setWindowTitle(QStringLiteral("Image size"));
        auto* width = new QSpinBox;
        auto* height = new QSpinBox;
        width->setRange(200, 16000);
        height->setRange(150, 16000);
        const QSize last = settings.value(QStringLiteral("exportSize"), QSize(1920, 1080)).toSize();
        width->setValue(last.width());
        height->setValue(last.height());
        auto* form = new QFormLayout(&dialog);
        form->addRow(QStringLiteral("Width"), width);
        form->addRow(QStringLiteral("Height"), height);
        auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
        connect(buttons, &QDialogButtonBox::accepted, &dialog, &QDialog::accept);
        connect(buttons, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
        form->addRow(buttons);
        if (dialog.exec() != QDialog::Accepted)
            return;
        const QSize size(width->value(), height->value());
        settings.setValue(QStringLiteral("exportSize"), size);
        if (exportImage(chosen, size))
            m_statusText->setText(QStringLiteral("Exported %1.").arg(chosen));
    });
    m_exportAction->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_E));
    m_exportAction->setIconText(QStringLiteral("Export Image"));
    file->addSeparator();
    QAction* quit = file->addAction(QStringLiteral("&Quit"), this, &QWidget::close);
    quit->setShortcut(QKeySequence::Quit);

    // Edit
    QMenu* edit = menuBar()->addMenu(QStringLiteral("&Edit"));
    QAction* undo = m_model->undoStack()->createUndoAction(this, QStringLiteral("&Undo"));
    undo->setShortcut(QKeySequence::Undo);
    QAction* redo = m_model->undoStack()->createRedoAction(this, QStringLiteral("&Redo"));
    redo->setShortcuts({QKeySequence::Redo, QKeySequence(Qt::CTRL | Qt::Key_Y)});
    edit->addAction(undo);
    edit->addAction(redo);
    edit->addSeparator();
    edit->addMenu(m_editor->addMenu());
    edit->addAction(m_editor->removeAction());
    edit->addAction(m_editor->moveUpAction());
    edit->addAction(m_editor->moveDownAction());
    edit->addAction(m_editor->duplicateAction());

    // Run
    QMenu* run = menuBar()->addMenu(QStringLiteral("&Run"));
    m_runAction = run->addAction(QStringLiteral("&Run"), this, &MainWindow::runScenario);
    m_runAction->setShortcuts({QKeySequence(Qt::Key_F5), QKeySequence(Qt::CTRL | Qt::Key_R)});
    m_runAction->setToolTip(QStringLiteral("Run the scenario on the chosen backend (F5)"));
    m_cancelAction = run->addAction(QStringLiteral("&Cancel"), m_runner, &RunController::cancel);
    m_cancelAction->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_Period));
    m_cancelAction->setEnabled(false);
    run->addSeparator();
    run->addAction(QStringLiteral("Check the &GPU Again"), this, [this] {
        m_probed = true;
        m_runner->probeGpu();
    });

    // View
    m_viewMenu = menuBar()->addMenu(QStringLiteral("&View"));
    QAction* fit = m_viewMenu->addAction(QStringLiteral("&Fit to View"), m_timeline, &TimelineView::fitToView);
    fit->setToolTip(QStringLiteral("Show the whole trace (0 or Home on the timeline)"));
    QMenu* arrows = m_viewMenu->addMenu(QStringLiteral("Dependency &Arrows"));
    for (FlowKind k : {FlowKind::Launch, FlowKind::Event, FlowKind::Sync, FlowKind::Implicit, FlowKind::Call}) {
        QAction* a = arrows->addAction(flowKindLabel(k));
        a->setCheckable(true);
        a->setChecked(m_timeline->isFlowKindVisible(k));
        a->setObjectName(QStringLiteral("arrows-") + flowKindLabel(k));
        connect(a, &QAction::toggled, this, [this, k](bool on) { m_timeline->setFlowKindVisible(k, on); });
    }
    m_criticalPathAction = m_viewMenu->addAction(QStringLiteral("Highlight &Critical Path"));
    m_criticalPathAction->setObjectName(QStringLiteral("highlight-critical-path"));
    m_criticalPathAction->setCheckable(true);
    m_criticalPathAction->setShortcut(QKeySequence(QStringLiteral("Ctrl+K")));
    m_criticalPathAction->setToolTip(QStringLiteral("Outline the chain of operations that decided the run's length"));
    connect(m_criticalPathAction, &QAction::toggled, this, &MainWindow::updateCriticalPath);
    m_viewMenu->addSeparator();
    const auto docks = findChildren<QDockWidget*>();
    for (QDockWidget* d : docks)
        m_viewMenu->addAction(d->toggleViewAction());

    // Analysis: compare, sweep, presentation (each part adds its own actions).
    m_analysisMenu = menuBar()->addMenu(QStringLiteral("&Analysis"));
    createCompareActions();
    createSweepActions();
    createPresentationActions();

    // Tools: a profile measured on this GPU becomes the simulator's profile.
    QMenu* tools = menuBar()->addMenu(QStringLiteral("&Tools"));
    addCalibrateAction(tools, m_runner, this, [this](const QString& path) {
        selectProfileFile(m_profileBox, path);
        m_runner->setProfileId(path);
        scheduleLiveRun();
    });

    QMenu* help = menuBar()->addMenu(QStringLiteral("&Help"));
    help->addAction(QStringLiteral("&Keys and Mouse"), this, [this] {
        QMessageBox::information(
            this, QStringLiteral("Keys and mouse"),
            QStringLiteral("<p><b>Timeline</b> (Perfetto/Tracy style)</p><table>"
                           "<tr><td>Wheel, W / S</td><td>zoom in / out</td></tr>"
                           "<tr><td>Drag, A / D, ← →</td><td>pan</td></tr>"
                           "<tr><td>↑ ↓, Page Up / Down</td><td>scroll the rows</td></tr>"
                           "<tr><td>Shift+drag, right drag</td><td>measure a range</td></tr>"
                           "<tr><td>Click</td><td>select a span (inspector, span table)</td></tr>"
                           "<tr><td>F</td><td>focus the selection</td></tr>"
                           "<tr><td>0, Home</td><td>fit to view</td></tr>"
                           "<tr><td>Esc</td><td>clear selection and range</td></tr></table>"
                           "<p><b>Scenario</b>: Delete removes, Ctrl+↑/↓ moves, Ctrl+D duplicates, Ctrl+Z/Ctrl+Shift+Z "
                           "undo/redo. F5 runs.</p>"
                           "<p><b>Presentation mode</b> (F11): Space, → or Page Down steps forward (set up, run, "
                           "timeline, explanation, then the contrast and the next lesson); ←, Page Up back; Esc "
                           "leaves.</p>"));
    });
    help->addAction(QStringLiteral("&About StreamScope"), this, [this] {
        QMessageBox::about(this, QStringLiteral("About StreamScope"),
                           QStringLiteral("<p><b>StreamScope</b> shows what CUDA streams do: configure host threads, "
                                          "devices, streams and the work they issue, run it on a GPU or the "
                                          "simulator, and explore the timeline.</p>"));
    });
}

void MainWindow::createToolbars()
{
    QToolBar* bar = addToolBar(QStringLiteral("Main"));
    bar->setObjectName(QStringLiteral("mainToolBar"));
    bar->setMovable(false);
    bar->setToolButtonStyle(Qt::ToolButtonTextOnly);
    bar->addAction(m_newAction);
    bar->addAction(m_openAction);
    bar->addAction(m_saveAction);
    bar->addSeparator();

    bar->addWidget(new QLabel(QStringLiteral(" Backend ")));
    m_backendBox = new QComboBox;
    m_backendBox->addItem(QStringLiteral("Simulator"), int(RunBackend::Simulator));
    m_backendBox->addItem(QStringLiteral("GPU"), int(RunBackend::Gpu));
    m_backendBox->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    connect(m_backendBox, &QComboBox::activated, this, [this] {
        m_userChoseBackend = true;
        m_gpuRunPending = false;
        updateBackendControls();
    });
    bar->addWidget(m_backendBox);
    bar->addWidget(new QLabel(QStringLiteral(" Profile ")));
    m_profileBox = new QComboBox;
    m_profileBox->addItem(QStringLiteral("scenario's"), QString());
    for (const QString& id : RunController::profileIds())
        m_profileBox->addItem(id, id);
    m_profileBox->setToolTip(QStringLiteral("Simulator device profile for every GPU (the scenario's own by default)"));
    connect(m_profileBox, &QComboBox::activated, this, [this] {
        m_runner->setProfileId(m_profileBox->currentData().toString());
        scheduleLiveRun();
    });
    bar->addWidget(m_profileBox);
    bar->addWidget(new QLabel(QStringLiteral(" Timing ")));
    m_timingBox = new QComboBox;
    m_timingBox->setObjectName(QStringLiteral("timingBox"));
    for (TimingMode mode : {TimingMode::Auto, TimingMode::Cupti, TimingMode::Events, TimingMode::Both}) {
        m_timingBox->addItem(timingModeLabel(mode), int(mode));
        m_timingBox->setItemData(m_timingBox->count() - 1, timingModeDescription(mode), Qt::ToolTipRole);
    }
    m_timingBox->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    connect(m_timingBox, &QComboBox::activated, this,
            [this] { setTimingMode(TimingMode(m_timingBox->currentData().toInt())); });
    bar->addWidget(m_timingBox);
    bar->addAction(m_runAction);
    bar->addAction(m_cancelAction);
    m_liveBox = new QCheckBox(QStringLiteral("Live"));
    m_liveBox->setChecked(true);
    m_liveBox->setToolTip(QStringLiteral("Re-simulate (in-process) after every edit; Run uses the chosen backend"));
    bar->addWidget(m_liveBox);
    bar->addSeparator();
    QAction* fit = bar->addAction(QStringLiteral("Fit"), m_timeline, &TimelineView::fitToView);
    fit->setToolTip(QStringLiteral("Show the whole trace (0 or Home on the timeline)"));
    bar->addAction(m_exportAction);

    // The timing banners, the window's width under the run controls.
    addToolBarBreak(Qt::TopToolBarArea);
    m_noticeToolBar = addToolBar(QStringLiteral("Timing notices"));
    m_noticeToolBar->setObjectName(QStringLiteral("timingNoticeToolBar"));
    m_noticeToolBar->setMovable(false);
    m_noticeToolBar->setFloatable(false);
    m_noticeToolBar->toggleViewAction()->setVisible(false); // shown by the trace, not by the user
    auto* notices = new QWidget;
    notices->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Preferred);
    auto* noticesLayout = new QVBoxLayout(notices);
    noticesLayout->setContentsMargins(0, 0, 0, 0);
    noticesLayout->setSpacing(2);
    noticesLayout->addWidget(m_timingWarning);
    noticesLayout->addWidget(m_timingInfo);
    m_noticeToolBar->addWidget(notices);
    m_noticeToolBar->hide();
}

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
    if (!writeFileAtomically(m_autosavePath + QStringLiteral(".origin"), m_path.toStdString(), &error) ||
        !writeFileAtomically(m_autosavePath, scenarioToJson(m_model->scenario()), &error))
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
        const QString what = (origin.isEmpty() ? QStringLiteral("An untitled scenario")
                                               : QStringLiteral("The scenario %1").arg(origin)) +
                             QStringLiteral(" (last autosaved %1)")
                                 .arg(file.lastModified().toString(QStringLiteral("yyyy-MM-dd hh:mm:ss")));
        const RecoverChoice choice = m_recoverPrompt(what);
        if (choice == RecoverChoice::Keep)
            continue;
        if (choice == RecoverChoice::Recover) {
            auto read = loadScenarioFile(file.filePath().toStdString());
            if (!read) {
                showError(QStringLiteral("The autosaved scenario cannot be recovered: %1").arg(qs(read.error().toString())));
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
        setWindowTitle(QFileInfo(m_tracePath).fileName() + QStringLiteral(" — ") + m_traceKind +
                       QStringLiteral("[*] — StreamScope"));
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
    m_runAction->setToolTip(none       ? why
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
            variantText = QStringLiteral("Variant “") + (v.title.empty() ? qs(v.id) : qs(v.title)) + QStringLiteral("”");
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

bool MainWindow::openPath(const QString& pathOrLesson, const QString& variant)
{
    if (!maybeSave())
        return false;
    ++m_openGeneration;
    m_statusText->setText(QStringLiteral("Opening %1…").arg(pathOrLesson));
    // Files are read and parsed off the GUI thread (traces can be large); the newest request wins.
    runOffGuiThread(
        this, &MainWindow::m_openGeneration, [pathOrLesson, variant] { return loadDocument(pathOrLesson, variant); },
        [](MainWindow& w, Result<LoadedDocument> loaded) {
            if (!loaded) {
                w.showError(qs(loaded.error().toString()));
                w.m_statusText->setText(QStringLiteral("Could not open the file."));
                return;
            }
            w.applyDocument(std::move(loaded.value()));
        });
    return true;
}

void MainWindow::applyDocument(LoadedDocument doc)
{
    clearError();
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
    } else {
        m_path = isFile ? doc.path : QString();
        m_model->setScenario(std::move(doc.scenario));
        m_editor->setMode(ScenarioEditor::Mode::Editable);
        m_liveTimer->stop(); // runScenario below runs it
        if (!doc.lessonId.isEmpty())
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

void MainWindow::newScenario()
{
    if (!maybeSave())
        return;
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
    if (!m_trace) {
        showError(QStringLiteral("There is no trace to export yet: run the scenario first."));
        return false;
    }
    QString error;
    // What the view shows: its time range, the arrows turned on, the selection.
    if (!exportTimelineImage(*m_timeline, path, size, defaultImageTitle(*m_trace->trace, m_traceFile), &error)) {
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
    m_backendBox->setItemData(gpuRow, gpu.state == GpuStatus::State::Unusable
                                          ? QStringLiteral("No usable GPU: ") + gpu.description
                                          : gpu.description,
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
        showError(QStringLiteral("The scenario cannot run: ") +
                  (error ? error->path + QStringLiteral(": ") + error->message : QStringLiteral("it has an error")));
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
        m_statusText->setText(QStringLiteral("Not simulated: ") +
                              (error ? error->path + QStringLiteral(": ") + error->message : QString()));
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
        keepView = from > double(first) + 0.02 * double(last - first) || to < double(last) - 0.02 * double(last - first);
    }
    m_trace = std::move(trace);
    std::shared_ptr<const Trace> t = m_trace ? m_trace->trace : nullptr;
    m_syncingSelection = true;
    m_timeline->setTrace(t, keepView);
    m_spanModel->setTrace(t);
    m_opModel->setTrace(t);
    m_syncingSelection = false;
    m_inspector->setTrace(t);
    m_runInfo->setTrace(t, file, wallMs);
    m_analysis->setTrace(m_trace);
    m_concurrency->setTrace(t);
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
}

void MainWindow::updateTimingNotice()
{
    const TimingNotice notice = m_trace && m_trace->trace
                                    ? timingNotice(*m_trace->trace, m_trace->report.diagnostics)
                                    : TimingNotice{};
    m_timingWarning->setNotice(notice.perturbation.title, notice.perturbation.text);
    // One click to the timing the fix names, unless GPU runs already use it.
    m_suggestedTiming.reset();
    if (!notice.perturbation.isEmpty() && notice.suggested && *notice.suggested != timingMode())
        m_suggestedTiming = notice.suggested;
    if (m_suggestedTiming)
        m_timingWarning->setAction(QStringLiteral("Time with %1").arg(timingModeLabel(*m_suggestedTiming)),
                                   QStringLiteral("Set Timing to %1 for the next GPU run")
                                       .arg(timingModeLabel(*m_suggestedTiming)));
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
    if (t && m_criticalPathAction && m_criticalPathAction->isChecked()) {
        const CriticalPath path = criticalPath(*t);
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
    const int row = m_spanProxy->rowOfSpan(span);
    if (row < 0) {
        m_spanTable->selectionModel()->clearSelection();
    } else {
        const QModelIndex index = m_spanProxy->index(row, 0);
        m_spanTable->selectionModel()->setCurrentIndex(
            index, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
        m_spanTable->scrollTo(index);
    }
    m_syncingSelection = false;
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

// ---- window events ---------------------------------------------------------------------------------------------

void MainWindow::showEvent(QShowEvent* event)
{
    QMainWindow::showEvent(event);
    if (m_probeGpu && !m_probed) {
        m_probed = true;
        m_runner->probeGpu();
    }
}

void MainWindow::closeEvent(QCloseEvent* event)
{
    if (!maybeSave()) {
        event->ignore();
        return;
    }
    m_autosaveTimer->stop();
    removeAutosave();
    m_runner->cancel();
    writeSettings();
    event->accept();
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event)
{
    if (event->mimeData()->hasUrls()) {
        const QList<QUrl> urls = event->mimeData()->urls();
        if (!urls.isEmpty() && urls.front().isLocalFile())
            event->acceptProposedAction();
    }
}

void MainWindow::dropEvent(QDropEvent* event)
{
    const QList<QUrl> urls = event->mimeData()->urls();
    if (urls.isEmpty() || !urls.front().isLocalFile())
        return;
    event->acceptProposedAction();
    // After the drop has finished: the unsaved-changes prompt must not run inside the drag's event loop.
    const QString path = urls.front().toLocalFile();
    QTimer::singleShot(0, this, [this, path] { openPath(path); });
}

void MainWindow::readSettings()
{
    QSettings settings;
    if (!restoreGeometry(settings.value(QStringLiteral("window/geometry")).toByteArray()))
        resize(1600, 1000);
    restoreState(settings.value(QStringLiteral("window/state")).toByteArray());
    updateNoticeVisibility(); // a saved state must not show an empty banner
    m_liveBox->setChecked(settings.value(QStringLiteral("liveSimulation"), true).toBool());
    const QString profile = settings.value(QStringLiteral("profile")).toString();
    if (profile.endsWith(QLatin1String(".json")) && QFileInfo::exists(profile))
        selectProfileFile(m_profileBox, profile); // a calibrated profile saved earlier
    const int p = m_profileBox->findData(profile);
    if (p >= 0) {
        m_profileBox->setCurrentIndex(p);
        m_runner->setProfileId(profile);
    }
    if (const auto timing = timingModeFromString(settings.value(QStringLiteral("timing")).toString().toStdString()))
        setTimingMode(*timing);
}

void MainWindow::writeSettings()
{
    QSettings settings;
    settings.setValue(QStringLiteral("window/geometry"), saveGeometry());
    settings.setValue(QStringLiteral("window/state"), saveState());
    settings.setValue(QStringLiteral("liveSimulation"), m_liveBox->isChecked());
    settings.setValue(QStringLiteral("profile"), m_profileBox->currentData().toString());
    settings.setValue(QStringLiteral("timing"), qs(toString(timingMode())));
}

// ---- Analysis menu ------------------------------------------------------------------------------------------------

void MainWindow::createCompareActions()
{
    // Two runs side by side on one time scale, with what changed (compare_view.h).
    QAction* variant = m_analysisMenu->addAction(QStringLiteral("Compare with &Variant…"), this, [this] {
        const bool offerWithout = !m_variant.isEmpty() && (!m_lessonId.isEmpty() || !m_path.isEmpty());
        if (const auto choice = chooseVariant(this, documentTitle(), m_model->scenario(), m_variant, offerWithout))
            compareWithVariant(*choice);
    });
    m_compareVariantAction = variant;
    variant->setObjectName(QStringLiteral("compare-variant"));
    variant->setStatusTip(QStringLiteral("Simulate the scenario and one of its variants, and show both timelines and "
                                         "what changed"));
    QAction* file = m_analysisMenu->addAction(QStringLiteral("Compare with &File…"), this, [this] {
        if (!m_trace) {
            showError(QStringLiteral("There is no trace to compare yet: run the scenario or open a trace first."));
            return;
        }
        QSettings settings;
        const QString path = QFileDialog::getOpenFileName(
            this, QStringLiteral("Compare with a trace or scenario"), settings.value(QStringLiteral("lastDir")).toString(),
            QStringLiteral("Traces and scenarios (*.json *.json.gz *.csv *.sqlite);;All files (*)"));
        if (path.isEmpty())
            return;
        settings.setValue(QStringLiteral("lastDir"), QFileInfo(path).absolutePath());
        compareWithFile(path);
    });
    file->setObjectName(QStringLiteral("compare-file"));
    file->setStatusTip(QStringLiteral("Show the trace on the timeline above a trace or scenario from a file, on one "
                                      "time scale, and what changed"));
    // A GPU recording replayed with the durations it measured and one setting changed (whatif_dialog.h).
    m_whatIfAction = m_analysisMenu->addAction(QStringLiteral("What &if…"), this, [this] {
        if (!m_trace || !m_trace->trace)
            return;
        auto scenario = recordedScenario(*m_trace->trace);
        if (!scenario) {
            showError(qs(scenario.error().toString()));
            return;
        }
        WhatIfDialog dialog(*scenario, documentTitle(), this);
        if (dialog.exec() == QDialog::Accepted)
            replayWhatIf({dialog.setting()});
    });
    m_whatIfAction->setObjectName(QStringLiteral("what-if"));
    m_analysisMenu->setToolTipsVisible(true); // the reason What if… is disabled
    updateWhatIfAction();
    m_analysisMenu->addSeparator();
}

void MainWindow::updateWhatIfAction()
{
    if (!m_whatIfAction)
        return;
    QString why;
    if (!m_trace || !m_trace->trace) {
        why = QStringLiteral("Open a trace recorded on a GPU by StreamScope to replay it with a setting changed");
    } else if (auto scenario = recordedScenario(*m_trace->trace); !scenario) {
        why = QStringLiteral("What if… replays a GPU recording of StreamScope's with its scenario embedded; this "
                             "trace: ")
            + qs(scenario.error().message);
    }
    m_whatIfAction->setEnabled(why.isEmpty());
    const QString tip = why.isEmpty() ? QStringLiteral("Replay the recording on the simulator with the durations it "
                                                       "measured and one setting changed, beside the recording")
                                      : why;
    m_whatIfAction->setToolTip(tip);
    m_whatIfAction->setStatusTip(tip);
}

CompareView* MainWindow::replayWhatIf(const std::vector<ReplaySetting>& settings)
{
    if (!m_trace || !m_trace->trace)
        return nullptr;
    if (auto scenario = recordedScenario(*m_trace->trace); !scenario) {
        showError(qs(scenario.error().toString()));
        return nullptr;
    }
    if (!m_compareView) {
        m_compareView = new CompareView(this);
        m_compareView->setWindowFlag(Qt::Window);
    }
    m_compareView->compareWithReplay(m_trace->trace, documentTitle(), settings);
    m_compareView->show();
    m_compareView->raise();
    m_compareView->activateWindow();
    return m_compareView;
}

CompareView* MainWindow::compareView() const
{
    return m_compareView;
}

CompareView* MainWindow::compareWithVariant(const QString& variant)
{
    const auto scenario = m_model->validatedScenario();
    if (!scenario) {
        showError(QStringLiteral("The scenario cannot be compared: it has an error (see the scenario editor)."));
        return nullptr;
    }
    std::shared_ptr<const Scenario> asWritten;
    if (variant.isEmpty()) {
        const auto doc = loadDocument(m_lessonId.isEmpty() ? m_path : m_lessonId);
        if (!doc || doc->kind != DocumentKind::Scenario) {
            showError(doc ? QStringLiteral("%1 is not a scenario.").arg(m_path) : qs(doc.error().toString()));
            return nullptr;
        }
        asWritten = std::make_shared<const Scenario>(doc->scenario);
    }
    if (!m_compareView) {
        m_compareView = new CompareView(this);
        m_compareView->setWindowFlag(Qt::Window);
    }
    if (asWritten)
        m_compareView->compareScenarios(scenario, documentTitle(), asWritten,
                                        QStringLiteral("without the variant (as written)"), m_runner->profileId());
    else
        m_compareView->compareWithVariant(scenario, documentTitle(), variant, m_runner->profileId());
    m_compareView->show();
    m_compareView->raise();
    m_compareView->activateWindow();
    return m_compareView;
}

CompareView* MainWindow::compareWithFile(const QString& path)
{
    if (!m_trace)
        return nullptr;
    if (!m_compareView) {
        m_compareView = new CompareView(this);
        m_compareView->setWindowFlag(Qt::Window);
    }
    m_compareView->compareWithFile(m_trace->trace, documentTitle(), path, m_runner->profileId());
    m_compareView->show();
    m_compareView->raise();
    m_compareView->activateWindow();
    return m_compareView;
}

void MainWindow::createSweepActions()
{
    // Makespan and speedup against one knob of the scenario in the editor (sweep_view.h): a dock under the
    // timeline, next to the span table.
    auto* view = new SweepView;
    view->setRunController(m_runner);
    view->setScenario(m_model->validatedScenario());
    connect(m_model, &ScenarioModel::scenarioChanged, view,
            [this, view] { view->setScenario(m_model->validatedScenario()); });
    QDockWidget* dock = makeDock(QStringLiteral("Sweep"), QStringLiteral("sweepDock"), view, this);
    addDockWidget(Qt::BottomDockWidgetArea, dock);
    if (auto* spans = findChild<QDockWidget*>(QStringLiteral("spansDock")))
        tabifyDockWidget(spans, dock);
    dock->hide();
    // A dock added to the bottom area rebalances the side docks: give them their widths again.
    auto* scenarioDock = findChild<QDockWidget*>(QStringLiteral("scenarioDock"));
    auto* analysisDock = findChild<QDockWidget*>(QStringLiteral("analysisDock"));
    if (scenarioDock && analysisDock)
        resizeDocks({scenarioDock, analysisDock}, {390, 340}, Qt::Horizontal);
    // A double-clicked point: its rewritten scenario simulated onto the timeline; the editor keeps the scenario.
    connect(view, &SweepView::pointActivated, this, [this, view](int index) {
        auto rewritten = view->scenarioForPoint(index);
        if (!rewritten) {
            showError(QStringLiteral("Cannot show that point: ") + qs(rewritten.error().toString()));
            return;
        }
        m_previewRun = false;
        m_runner->run(RunBackend::Simulator, std::make_shared<const Scenario>(std::move(rewritten).value()));
        const QString shown = QStringLiteral("The timeline shows %1 = %2 from the sweep, simulated; the editor keeps "
                                             "your scenario (F5 runs it).")
                                  .arg(qs(toString(view->sweptSpec().knob)))
                                  .arg(view->points()[size_t(index)].value);
        // Said once that run is on the timeline; any later run drops the note.
        auto note = std::make_shared<std::array<QMetaObject::Connection, 2>>();
        (*note)[0] = connect(m_runner, &RunController::finished, this, [this, note, shown] {
            disconnect((*note)[0]);
            disconnect((*note)[1]);
            m_statusText->setText(shown);
        });
        (*note)[1] = connect(m_runner, &RunController::started, this, [this, note] {
            disconnect((*note)[0]);
            disconnect((*note)[1]);
        });
    });
    QAction* action = m_analysisMenu->addAction(QStringLiteral("&Sweep…"), this, [this, dock, view, scenarioDock,
                                                                              analysisDock] {
        // Showing it must not squeeze the side docks.
        const QList<int> sideWidths{scenarioDock ? scenarioDock->width() : 0, analysisDock ? analysisDock->width() : 0};
        dock->show();
        dock->raise();
        resizeDocks({dock}, {qMax(dock->height(), 360)}, Qt::Vertical);
        if (scenarioDock && analysisDock && scenarioDock->isVisible() && analysisDock->isVisible())
            resizeDocks({scenarioDock, analysisDock}, sideWidths, Qt::Horizontal);
        view->setFocus();
    });
    action->setObjectName(QStringLiteral("sweep"));
    action->setShortcut(QKeySequence(QStringLiteral("Ctrl+Shift+W")));
    action->setToolTip(QStringLiteral("Vary streams, chunks or kernel size and plot makespan and speedup"));
    m_viewMenu->addAction(dock->toggleViewAction());
}

void MainWindow::createPresentationActions()
{
    // Slides of the open lesson for a classroom projector (presentation_mode.h).
    auto* presentation = new PresentationMode(this);
    QAction* action = m_analysisMenu->addAction(QStringLiteral("&Presentation Mode"));
    action->setObjectName(QStringLiteral("presentation-mode"));
    action->setCheckable(true);
    action->setShortcut(QKeySequence(Qt::Key_F11));
    action->setToolTip(QStringLiteral("Full-screen slides of the lesson: set up, run, timeline, explanation "
                                      "(Space or → steps, ← back, Esc leaves)"));
    addAction(action); // the shortcut works while the menu bar is hidden
    m_viewMenu->addSeparator();
    m_viewMenu->addAction(action);
    connect(action, &QAction::toggled, presentation, &PresentationMode::setActive);
    connect(presentation, &PresentationMode::activeChanged, action, &QAction::setChecked);
    connect(presentation, &PresentationMode::activeChanged, this, [this](bool on) {
        m_presenting = on;
        updateNoticeVisibility(); // leaving restores the window's state, the banner's visibility included
    });
}

} // namespace streamscope
