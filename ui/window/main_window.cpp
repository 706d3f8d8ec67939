// The main window: its construction (panels, docks and their wiring, the settings it restores) and its window
// events. The rest is split along what a reader looks for: main_window_actions.cpp (menus, toolbars, the Analysis
// menu's windows), main_window_documents.cpp (open, save, autosave, recent files), main_window_runs.cpp (running
// the scenario and showing the trace).
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
#include "screen_fit.h"
#include "span_inspector.h"
#include "span_table_model.h"
#include "sweep_view.h"
#include "text_file.h"
#include "theme.h"
#include "timeline_keys.h"
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
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QPixmap>
#include <QPointer>
#include <QProgressBar>
#include <QPushButton>
#include <QScopedValueRollback>
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

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <initializer_list>
#include <utility>

namespace streamscope {

// Less room than this, on the screen or in the window, gets every dock as a tab of one column on the left
// (arrangeDocks).
static bool isCompactRoom(const QRect& room)
{
    return room.width() < MainWindow::kCompactLayoutSize.width()
        || room.height() < MainWindow::kCompactLayoutSize.height();
}

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent), m_model(new ScenarioModel(this)), m_runner(new RunController(this)),
      m_timeline(new TimelineView), m_liveTimer(new QTimer(this)), m_progressDelay(new QTimer(this))
{
    setObjectName(QStringLiteral("StreamScopeMainWindow"));
    setAcceptDrops(true);
    setDockNestingEnabled(true);
    createPrompts();
    createCentre();
    createDocks();
    createActions();
    createToolbars();
    arrangeDocks(isCompactRoom(availableGeometry(this)));
    watchDockMoves();
    m_dockFitTimer = new QTimer(this);
    m_dockFitTimer->setSingleShot(true);
    m_dockFitTimer->setInterval(150);
    connect(m_dockFitTimer, &QTimer::timeout, this, &MainWindow::fitDocksToWindow);
    keepShortcutsWithoutMenuBar();
    // W/A/S/D and the other navigation keys reach the timeline unless a text field is being typed in.
    new TimelineKeys(this, m_timeline);

    connectEditing();
    connectRuns();
    connectSelection();

    readSettings();
    updateGpuChoice();
    updateTitle();
    updateLesson();
    rebuildRecentMenu();
}

// The questions the window asks (recover an autosave, save unsaved changes); tests replace them.
void MainWindow::createPrompts()
{
    m_recoverPrompt = [this](const QString& what) {
        QMessageBox box(QMessageBox::Question, QStringLiteral("Recover unsaved changes"),
                        QStringLiteral("StreamScope did not close normally. %1 has changes that were not saved. "
                                       "Recover them?")
                            .arg(what),
                        QMessageBox::NoButton, this);
        QPushButton* recover = box.addButton(QStringLiteral("Recover"), QMessageBox::AcceptRole);
        QPushButton* discard = box.addButton(QStringLiteral("Discard"), QMessageBox::DestructiveRole);
        box.addButton(QStringLiteral("Later"), QMessageBox::RejectRole);
        box.setDefaultButton(recover);
        box.exec();
        return box.clickedButton() == recover ? RecoverChoice::Recover
            : box.clickedButton() == discard  ? RecoverChoice::Discard
                                              : RecoverChoice::Keep;
    };
    m_unsavedPrompt = [this] {
        const auto answer =
            QMessageBox::warning(this, QStringLiteral("Unsaved changes"),
                                 QStringLiteral("%1 has changes that are not saved. Save them?").arg(documentTitle()),
                                 QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel, QMessageBox::Save);
        return answer == QMessageBox::Save   ? UnsavedChoice::Save
            : answer == QMessageBox::Discard ? UnsavedChoice::Discard
                                             : UnsavedChoice::Cancel;
    };
}

// The centre (the message bar over the timeline and the concurrency plot), the timing notices and the status bar.
void MainWindow::createCentre()
{
    // Centre: a message bar (run and file errors) over the timeline.
    m_messageBar = new QFrame;
    m_messageBar->setObjectName(QStringLiteral("messageBar"));
    m_messageText = new QLabel;
    m_messageText->setObjectName(QStringLiteral("messageText"));
    m_messageText->setWordWrap(true);
    m_messageText->setTextInteractionFlags(Qt::TextSelectableByMouse);
    applyMessageColors();
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
    m_timeline->setMinimumVisibleLanes(kTimelineMinimumLanes);
    m_timeline->setLanesFillHeight(true); // a few rows in a big window: taller, not crowded at the top
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
}

// What an edit sets off: the live simulation, the autosave, the title and the lesson panel.
void MainWindow::connectEditing()
{
    // Live simulation: every edit (and undo/redo) re-simulates, coalesced per event-loop turn.
    m_liveTimer->setSingleShot(true);
    m_liveTimer->setInterval(0);
    connect(m_liveTimer, &QTimer::timeout, this, &MainWindow::liveRun);
    connect(m_model->undoStack(), &QUndoStack::indexChanged, this, &MainWindow::scheduleLiveRun);
    connect(m_model->undoStack(), &QUndoStack::cleanChanged, this, &MainWindow::updateTitle);
    // Autosave: a moment after the last edit, while there are unsaved ones.
    static std::atomic<int> windows{0};
    m_autosavePath =
        QDir(autosaveDirectory())
            .filePath(QStringLiteral("scenario-%1-%2.json").arg(QCoreApplication::applicationPid()).arg(++windows));
    m_autosaveTimer = new QTimer(this);
    m_autosaveTimer->setSingleShot(true);
    m_autosaveTimer->setInterval(1000);
    connect(m_autosaveTimer, &QTimer::timeout, this, &MainWindow::writeAutosave);
    connect(m_model->undoStack(), &QUndoStack::indexChanged, m_autosaveTimer, qOverload<>(&QTimer::start));
    connect(m_model->undoStack(), &QUndoStack::cleanChanged, m_autosaveTimer, qOverload<>(&QTimer::start));
    connect(m_model, &ScenarioModel::scenarioChanged, this, &MainWindow::updateLesson);
}

// What a run's end, failure, cancel and progress show.
void MainWindow::connectRuns()
{
    connect(m_runner, &RunController::finished, this,
            [this](std::shared_ptr<const AnalyzedTrace> trace, RunBackend b, double ms) {
                clearError();
                m_traceFile.clear();
                showTrace(std::move(trace), {}, ms, m_previewRun && b == RunBackend::Simulator);
                m_statusText->setText(b == RunBackend::Gpu
                                          ? QStringLiteral("Ran on the GPU in %1.").arg(formatNs(ms * 1e6))
                                          : QStringLiteral("Simulated in %1.").arg(formatNs(ms * 1e6)));
            });
    connect(m_runner, &RunController::partialTrace, this,
            [this](std::shared_ptr<const AnalyzedTrace> trace, double ms) {
                m_traceFile.clear();
                m_partialShown = true;
                showTrace(std::move(trace), {}, ms);
            });
    connect(m_runner, &RunController::failed, this, [this](const QString& message, int) {
        if (m_quitAfterScreenshot)
            std::fprintf(stderr, "streamscope: the run failed: %s\n", qPrintable(message));
        const bool partial = std::exchange(m_partialShown, false);
        showError(partial
                      ? message + QStringLiteral("\nThe timeline shows the partial trace: what ran until the failure.")
                      : message);
        m_statusText->setText(partial ? QStringLiteral("The run failed; the partial trace is shown.")
                                      : QStringLiteral("The run failed."));
        if (m_quitAfterScreenshot)
            QCoreApplication::exit(message.startsWith(QLatin1String("GPU error")) ? 3 : 2);
    });
    connect(m_runner, &RunController::cancelled, this,
            [this] { m_statusText->setText(QStringLiteral("Run cancelled.")); });
    connect(m_runner, &RunController::progressMessage, m_statusText, &QLabel::setText);
    connect(m_runner, &RunController::runningChanged, this, [this](bool running) {
        m_cancelAction->setEnabled(running || isOpening());
        if (running) {
            m_progressDelay->start();
        } else {
            m_progressDelay->stop();
            if (!isOpening())
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
}

// Selection: timeline ⇄ span table ⇄ inspector; the editor's and the gallery's requests.
void MainWindow::connectSelection()
{
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
}

MainWindow::~MainWindow()
{
    removeAutosave(); // a window that closes keeps nothing to recover
    // Signals sent while the parts go (the undo stack clearing itself, the timeline dropping its trace) must not
    // reach a half-destroyed window; and the widgets that watch the scenario model go before it does.
    for (QObject* sender :
         std::initializer_list<QObject*>{m_model, m_model->undoStack(), m_runner, m_timeline, m_inspector, m_analysis,
                                         m_spanTable->selectionModel(), m_gallery, m_liveTimer, m_progressDelay})
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
    m_spanFilter->setObjectName(QStringLiteral("span-filter"));
    connect(m_spanFilter, &QLineEdit::textChanged, m_spanProxy, &SpanTableProxy::setFilterText);
    // More spans than a page of the table (SpanTableProxy::kPageRows): which rows are shown, and the way to the others.
    m_spanPage = new QLabel;
    m_spanPage->setObjectName(QStringLiteral("span-page"));
    auto pageButton = [this](const QString& text, const QString& tip, int step) {
        auto* b = new QToolButton;
        b->setText(text);
        b->setToolTip(tip);
        b->setAutoRaise(true);
        connect(b, &QToolButton::clicked, this, [this, step] { m_spanProxy->setPage(m_spanProxy->page() + step); });
        return b;
    };
    m_spanPrevPage = pageButton(QStringLiteral("‹ Previous"), QStringLiteral("The previous page of rows"), -1);
    m_spanNextPage = pageButton(QStringLiteral("Next ›"), QStringLiteral("The next page of rows"), +1);
    connect(m_spanProxy, &SpanTableProxy::pageChanged, this, &MainWindow::updateSpanPager);
    auto* spans = new QWidget;
    auto* spansLayout = new QVBoxLayout(spans);
    spansLayout->setContentsMargins(4, 4, 4, 4);
    spansLayout->setSpacing(4);
    auto* filterRow = new QHBoxLayout;
    filterRow->addWidget(m_spanFilter, 1);
    filterRow->addWidget(m_spanPrevPage);
    filterRow->addWidget(m_spanPage);
    filterRow->addWidget(m_spanNextPage);
    spansLayout->addLayout(filterRow);
    spansLayout->addWidget(m_spanTable, 1);
    updateSpanPager();
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

    makeDock(QStringLiteral("Scenario"), QStringLiteral("scenarioDock"), m_editor, this);
    makeDock(QStringLiteral("Lessons"), QStringLiteral("lessonsDock"), m_gallery, this);
    makeDock(QStringLiteral("Analysis"), QStringLiteral("analysisDock"), m_analysis, this);
    makeDock(QStringLiteral("Inspector"), QStringLiteral("inspectorDock"), m_inspector, this);
    makeDock(QStringLiteral("Run info"), QStringLiteral("runInfoDock"), m_runInfo, this);
    makeDock(QStringLiteral("Spans"), QStringLiteral("spansDock"), spans, this);
}

void MainWindow::watchDockMoves()
{
    const auto docks = findChildren<QDockWidget*>(Qt::FindDirectChildrenOnly);
    for (QDockWidget* d : docks) {
        const auto moved = [this] {
            if (!m_placingDocks)
                m_docksByHand = true;
        };
        connect(d, &QDockWidget::dockLocationChanged, this, moved);
        connect(d, &QDockWidget::topLevelChanged, this, moved);
    }
}

bool MainWindow::restoreDockState(const QByteArray& state)
{
    const QScopedValueRollback placing(m_placingDocks, true);
    return restoreState(state);
}

void MainWindow::arrangeDocks(bool compact)
{
    const QScopedValueRollback placing(m_placingDocks, true);
    m_docksByHand = false;
    auto dock = [this](const char* name) { return findChild<QDockWidget*>(QLatin1String(name)); };
    QDockWidget* scenarioDock = dock("scenarioDock");
    QDockWidget* lessonsDock = dock("lessonsDock");
    QDockWidget* analysisDock = dock("analysisDock");
    QDockWidget* inspectorDock = dock("inspectorDock");
    QDockWidget* runInfoDock = dock("runInfoDock");
    QDockWidget* spansDock = dock("spansDock");
    QDockWidget* sweepDock = dock("sweepDock");
    const auto docks = findChildren<QDockWidget*>(Qt::FindDirectChildrenOnly);
    for (QDockWidget* d : docks) {
        d->setFloating(false);
        d->setVisible(d != sweepDock);
    }

    addDockWidget(Qt::LeftDockWidgetArea, scenarioDock);
    tabifyDockWidget(scenarioDock, lessonsDock);
    scenarioDock->raise();
    setCorner(Qt::BottomLeftCorner, Qt::LeftDockWidgetArea);
    setCorner(Qt::BottomRightCorner, Qt::RightDockWidgetArea);
    if (compact) {
        // A small screen (1920x1080 at Qt's scale 2 is 960x540): every dock a tab of one column on the left. Docks
        // on the right left the timeline about 230 px wide, its legend wrapped to a column, and with the docks under
        // it the window's minimum height was 603 px on a 540 px screen, with no timeline row to see.
        QDockWidget* last = lessonsDock;
        for (QDockWidget* d : {analysisDock, inspectorDock, runInfoDock, spansDock, sweepDock}) {
            if (!d)
                continue;
            addDockWidget(Qt::LeftDockWidgetArea, d);
            tabifyDockWidget(last, d);
            last = d;
        }
        if (sweepDock)
            sweepDock->hide();
        scenarioDock->raise();
        const int across = std::min(availableGeometry(this).width(), isVisible() ? width() : 1 << 20);
        resizeDocks({scenarioDock}, {std::min(390, across * 2 / 5)}, Qt::Horizontal);
        return;
    }
    addDockWidget(Qt::RightDockWidgetArea, analysisDock);
    addDockWidget(Qt::RightDockWidgetArea, inspectorDock);
    splitDockWidget(analysisDock, inspectorDock, Qt::Vertical);
    tabifyDockWidget(inspectorDock, runInfoDock);
    inspectorDock->raise();
    addDockWidget(Qt::BottomDockWidgetArea, spansDock);
    // The sweep (Analysis ▸ Sweep…) beside the span table, hidden until asked for.
    if (sweepDock) {
        addDockWidget(Qt::BottomDockWidgetArea, sweepDock);
        tabifyDockWidget(spansDock, sweepDock);
        sweepDock->hide();
        spansDock->raise();
    }
    resizeDocks({scenarioDock, analysisDock}, {390, 340}, Qt::Horizontal);
    resizeDocks({analysisDock, inspectorDock}, {520, 320}, Qt::Vertical);
    resizeDocks({spansDock}, {250}, Qt::Vertical);
}

MainWindow::DockLayout MainWindow::dockLayout() const
{
    const auto area = [this](const char* name) {
        QDockWidget* d = findChild<QDockWidget*>(QLatin1String(name));
        return d ? dockWidgetArea(d) : Qt::NoDockWidgetArea;
    };
    bool allLeft = true;
    const auto docks = findChildren<QDockWidget*>(Qt::FindDirectChildrenOnly);
    for (QDockWidget* d : docks) {
        // The sweep is hidden until asked for; any other dock closed (its View menu entry unchecked) was the user's.
        if (d->isFloating() || (d->objectName() != QLatin1String("sweepDock") && !d->toggleViewAction()->isChecked()))
            return DockLayout::Other;
        allLeft = allLeft && dockWidgetArea(d) == Qt::LeftDockWidgetArea;
    }
    if (allLeft)
        return DockLayout::Compact;
    const bool wide = area("scenarioDock") == Qt::LeftDockWidgetArea && area("lessonsDock") == Qt::LeftDockWidgetArea
        && area("analysisDock") == Qt::RightDockWidgetArea && area("inspectorDock") == Qt::RightDockWidgetArea
        && area("runInfoDock") == Qt::RightDockWidgetArea && area("spansDock") == Qt::BottomDockWidgetArea
        && (area("sweepDock") == Qt::BottomDockWidgetArea || area("sweepDock") == Qt::NoDockWidgetArea);
    return wide ? DockLayout::Wide : DockLayout::Other;
}

void MainWindow::fitDocksToWindow()
{
    const auto* presenting = findChild<QAction*>(QStringLiteral("presentation-mode"));
    if (!isVisible() || isFullScreen() || (presenting && presenting->isChecked()))
        return;
    const DockLayout now = dockLayout();
    if (now == DockLayout::Other || m_docksByHand)
        return;
    const bool compact = isCompactRoom(availableGeometry(this)) || isCompactRoom(QRect(QPoint(), size()));
    if (compact != (now == DockLayout::Compact))
        arrangeDocks(compact);
}

void MainWindow::resetLayout()
{
    if (isFullScreen() || isMaximized())
        showNormal();
    arrangeDocks(isCompactRoom(availableGeometry(this)));
    const auto bars = findChildren<QToolBar*>(Qt::FindDirectChildrenOnly);
    for (QToolBar* bar : bars)
        if (bar != m_noticeToolBar)
            bar->show();
    updateNoticeVisibility(); // the timing banners: shown by the trace, not by the layout
    menuBar()->show();
    statusBar()->show();
    resize(sizeWithin(defaultSize(), availableGeometry(this)));
    fitToScreen(this);
}

void MainWindow::keepShortcutsWithoutMenuBar()
{
    // An action's shortcut works while a widget it is on is visible: on the window itself as well as in its menu,
    // Save As (Ctrl+Shift+S), Quit (Ctrl+Q) and the rest still work while presentation mode hides the menu bar.
    std::vector<QMenu*> menus;
    const auto top = menuBar()->actions();
    for (QAction* a : top)
        if (a->menu())
            menus.push_back(a->menu());
    for (size_t i = 0; i < menus.size(); ++i) {
        const auto actions = menus[i]->actions();
        for (QAction* a : actions) {
            if (a->menu())
                menus.push_back(a->menu());
            else if (!a->shortcuts().isEmpty() && a->shortcutContext() == Qt::WindowShortcut)
                addAction(a); // (the editor's Delete and Ctrl+↑/↓ are the scenario tree's alone)
        }
    }
}

void MainWindow::applyMessageColors()
{
    const ThemeBox& box = Theme::of(this).error;
    m_messageBar->setStyleSheet(QStringLiteral("#messageBar { background:%1; border:1px solid %2; } "
                                               "#messageBar QLabel, #messageBar QToolButton { color:%3; }")
                                    .arg(box.background.name(), box.border.name(), box.text.name()));
}

// ---- window events ---------------------------------------------------------------------------------------------

void MainWindow::changeEvent(QEvent* event)
{
    QMainWindow::changeEvent(event);
    if (isThemeChange(event) && m_messageBar)
        applyMessageColors();
}

void MainWindow::resizeEvent(QResizeEvent* event)
{
    QMainWindow::resizeEvent(event);
    if (m_dockFitTimer && isVisible())
        m_dockFitTimer->start();
}

void MainWindow::showEvent(QShowEvent* event)
{
    QMainWindow::showEvent(event);
    if (!m_shownOnce) {
        m_shownOnce = true;
        // Again with the window frame, which is known only now: its title bar on the screen too. Unless a size was
        // asked for since (--width/--height, a test): that one is kept.
        if (geometry() == m_settingsGeometry && !isMaximized() && !isFullScreen())
            fitToScreen(this);
        // A size asked for before the window showed (--width/--height, a saved geometry) gets its layout now.
        fitDocksToWindow();
    }
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
    // Several files: the ranks of one job.
    QStringList paths;
    for (const QUrl& url : urls)
        if (url.isLocalFile())
            paths << url.toLocalFile();
    if (paths.size() > 1) {
        QTimer::singleShot(0, this, [this, paths] { openJob(paths); });
        return;
    }
    QTimer::singleShot(0, this, [this, path] { openPath(path); });
}

void MainWindow::readSettings()
{
    QSettings settings;
    // A window saved on a bigger screen (a desk monitor, then a 1280×720 projector) still fits this one.
    if (restoreGeometry(settings.value(QStringLiteral("window/geometry")).toByteArray()))
        fitToScreen(this);
    else
        resize(sizeWithin(defaultSize(), availableGeometry(this)));
    const bool restored = restoreDockState(settings.value(QStringLiteral("window/state")).toByteArray());
    m_docksByHand = restored && settings.value(QStringLiteral("window/docksByHand"), false).toBool();
    if (restored && isCompactRoom(availableGeometry(this))) {
        // Docks saved right of and below the timeline on a bigger screen held the window's minimum above this
        // screen's size and left the timeline no rows: this screen gets the layout a first start here gives it.
        const auto docks = findChildren<QDockWidget*>(Qt::FindDirectChildrenOnly);
        const bool oneColumn = std::all_of(docks.begin(), docks.end(), [this](QDockWidget* d) {
            return !d->isFloating() && dockWidgetArea(d) == Qt::LeftDockWidgetArea;
        });
        if (!oneColumn) {
            arrangeDocks(true);
            fitToScreen(this);
        }
    }
    m_settingsGeometry = geometry();
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
    settings.setValue(QStringLiteral("window/docksByHand"), m_docksByHand);
    settings.setValue(QStringLiteral("liveSimulation"), m_liveBox->isChecked());
    settings.setValue(QStringLiteral("profile"), m_profileBox->currentData().toString());
    settings.setValue(QStringLiteral("timing"), qs(toString(timingMode())));
}

} // namespace streamscope
