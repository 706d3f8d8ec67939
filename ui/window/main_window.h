// The main window: the timeline in the centre, banners across the window for what a GPU trace says about its
// timing (timing changed the run; CUPTI was not used); docks for the scenario editor (quick controls, tree,
// properties), the lesson gallery, the inspector of the selected span, the span table, the run info and the
// analysis. A toolbar with the run controls (backend, simulator profile, GPU timing). File menu with New, Open
// (scenario or trace, told apart by content), Save/Save As (atomic), recent files, Export image and Quit; drag and
// drop of files; a prompt before unsaved edits are lost; window state and run settings kept in QSettings.
#pragma once

#include "document_loader.h"
#include "image_export.h"
#include "run_controller.h"
#include "trace_import.h"
#include "whatif.h"

#include <QMainWindow>
#include <QRect>
#include <QSize>

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

class QAction;
class QCheckBox;
class QComboBox;
class QFrame;
class QLabel;
class QLineEdit;
class QMenu;
class QProgressBar;
class QTableView;
class QTimer;
class QToolBar;
class QToolButton;

namespace streamscope {

class AnalysisPanel;
class CompareView;
class LessonGallery;
class NoticeBar;
class QuickControls;
class RunInfoPanel;
class ScenarioEditor;
class ScenarioModel;
class SpanInspector;
class SpanTableModel;
class SpanTableProxy;
class OpGpuTimeModel;
class TimelineView;
struct ShownDocument; // MainWindow::shownDocument

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(QWidget* parent = nullptr);
    ~MainWindow() override;

    // ---- documents
    // Opens a scenario or trace file, or a lesson by id or number; asynchronously (the file is read on a worker
    // thread): documentOpened or errorShown tell when it is done. A scenario (or lesson) is run right away.
    // Returns false when the user kept unsaved edits instead.
    bool openPath(const QString& pathOrLesson, const QString& variant = {});
    // Opens the per-rank traces of one job as one trace (job_open.cpp, docs/RANKS.md): several files, or folders of
    // them, read and merged on a worker thread (with progress and Cancel as for a file); a merge that is refused (ranks
    // on several hosts, a rank given twice) shows why. openPath sends a folder or a pattern ("job.*.json") here.
    bool openJob(const QStringList& paths);
    void newScenario();
    // Writes the scenario atomically (QSaveFile); false with the message shown on failure.
    bool saveScenarioAs(const QString& path);
    bool save();
    // The trace shown, in StreamScope's format (opens again with everything) or for other tools.
    bool saveTraceAs(const QString& path, ExportFormat format = ExportFormat::Streamscope);
    // PNG, SVG or PDF of the trace shown, by the path's extension.
    bool exportImage(const QString& path, QSize size);
    bool exportImage(const QString& path, ImageOptions options);
    QString documentPath() const { return m_path; }
    // The lesson open (its id, "01-two-streams") and its variant; empty when the document is not a lesson.
    QString lessonId() const { return m_lessonId; }
    QString lessonVariant() const { return m_variant; }
    QString documentTitle() const;
    // The trace file that is the document (opened as a trace: its scenario read-only, or none); empty otherwise.
    QString traceDocumentPath() const { return m_tracePath; }
    bool isModified() const;

    // Asked before unsaved edits are lost (replaceable, for tests).
    enum class UnsavedChoice { Save, Discard, Cancel };
    void setUnsavedPrompt(std::function<UnsavedChoice()> prompt) { m_unsavedPrompt = std::move(prompt); }

    // ---- autosave: nothing the user made is lost
    // While the scenario has unsaved edits it is also written, a moment after each edit, to a file of this window's
    // own in autosaveDirectory() (atomically, as a scenario file, with the document's path beside it); saving,
    // discarding or closing removes it. A window that never closed (a crash, a kill) leaves it behind, and
    // recoverAutosaved() offers it back.
    static QString autosaveDirectory();
    QString autosavePath() const { return m_autosavePath; }
    void setAutosaveDelay(int ms);
    // Offers, newest first, the scenarios of windows whose process is gone; the one recovered becomes this window's
    // unsaved scenario (its file's path kept, so Save writes it there). Returns whether one was recovered.
    enum class RecoverChoice { Recover, Discard, Keep };
    void setRecoverPrompt(std::function<RecoverChoice(const QString& what)> prompt)
    {
        m_recoverPrompt = std::move(prompt);
    }
    bool recoverAutosaved();

    // ---- running
    RunBackend backend() const;
    void setBackend(RunBackend backend);
    // How GPU runs and sweeps are timed (passed to streamscope-cli as --timing); the simulator ignores it.
    TimingMode timingMode() const;
    void setTimingMode(TimingMode mode);
    // Runs the scenario in the editor on the chosen backend. A scenario embedded in the trace shown becomes an
    // editable copy first (what runs is no longer the trace); a trace without a scenario has nothing to run.
    void runScenario();
    // The scenario embedded in the trace shown becomes an ordinary, editable, unsaved scenario ("Edit a copy").
    void editScenarioCopy();
    QAction* runAction() const { return m_runAction; }
    QAction* saveAction() const { return m_saveAction; }
    // Re-simulate after every edit (on by default).
    void setLiveSimulation(bool on);
    bool liveSimulation() const;
    // Skip asking streamscope-cli about the GPU (headless runs, tests).
    void setGpuProbeEnabled(bool enabled) { m_probeGpu = enabled; }
    // Save a screenshot of the window after the first run that shows a trace, then optionally quit (exit code 0,
    // or 1 when it could not be saved). For the end-to-end test and the README's picture.
    void setScreenshotAfterRun(const QString& path, bool quit);

    // ---- what the window shows, kept and put back
    // The document (scenario, lesson and variant, or trace), its trace and the timeline's zoom: presentation mode
    // keeps it on entering and puts it back on leaving, after stepping through other lessons and variants.
    std::shared_ptr<const ShownDocument> shownDocument() const;
    // The same document still open: only the zoom goes back (the scenario keeps its undo history). Another one: it
    // is shown again as it was (its unsaved edits unsaved, its trace not run again); a run or an opening under way
    // is dropped.
    void restoreShownDocument(const ShownDocument& shown);

    // ---- window layout (View menu)
    // The docks where they start (every one shown but the sweep), the toolbars shown, and the window at its
    // default size (defaultSize(), shrunk to fit the screen).
    void resetLayout();
    // Puts back docks saved with saveState() (presentation mode on leaving): not taken as the user arranging them.
    bool restoreDockState(const QByteArray& state);
    static QSize defaultSize() { return {1600, 1000}; }
    // Below this much room on the screen or in the window (logical pixels), the docks are tabs of one column on the
    // left (unless the user arranged them).
    static constexpr QSize kCompactLayoutSize{1100, 640};
    // Help ▸ About: the name and version.
    static QString aboutText();

    // ---- comparison (Analysis menu)
    // Opens the compare window (it fills in asynchronously: CompareView::comparisonShown or failed): the scenario in
    // the editor (A) against the same with one of its variants applied (B), both simulated; an empty `variant`
    // compares against the lesson or file as written (without the variant it was opened with). Or the trace shown
    // (A) against a file (B): a trace in any format the app opens, or a scenario (simulated).
    CompareView* compareWithVariant(const QString& variant);
    CompareView* compareWithFile(const QString& path);
    // Analysis ▸ Compare Ranks…: in a job of several ranks, rank `a`'s part of it (A) against rank `b`'s (B), each as
    // its own trace (rankPartOfTrace). Nullptr (with the reason shown) when the trace shown holds no such ranks.
    CompareView* compareRanks(int a, int b);
    QAction* compareRanksAction() const { return m_compareRanksAction; }
    CompareView* compareView() const;
    // Analysis ▸ What if…: the GPU recording shown (A) against its replay with `settings` changed (B), in the compare
    // window; the replay runs on a worker thread. Nullptr (with the reason shown) when the trace shown is not a GPU
    // recording with its scenario embedded.
    CompareView* replayWhatIf(const std::vector<ReplaySetting>& settings);
    QAction* whatIfAction() const { return m_whatIfAction; }

    // ---- parts (for tests)
    ScenarioModel* scenarioModel() const { return m_model; }
    RunController* runController() const { return m_runner; }
    TimelineView* timeline() const { return m_timeline; }
    class ConcurrencyPlot* concurrencyPlot() const { return m_concurrency; }
    ScenarioEditor* scenarioEditor() const { return m_editor; }
    QuickControls* quickControls() const;
    LessonGallery* lessonGallery() const { return m_gallery; }
    SpanTableModel* spanModel() const { return m_spanModel; }
    SpanTableProxy* spanProxy() const { return m_spanProxy; }
    QTableView* spanTable() const { return m_spanTable; }
    OpGpuTimeModel* opGpuTimeModel() const { return m_opModel; }
    QTableView* opGpuTimeTable() const { return m_opTable; }
    class QCheckBox* groupByOpBox() const { return m_groupByOp; }
    SpanInspector* inspector() const { return m_inspector; }
    AnalysisPanel* analysisPanel() const { return m_analysis; }
    RunInfoPanel* runInfoPanel() const { return m_runInfo; }
    std::shared_ptr<const AnalyzedTrace> currentTrace() const { return m_trace; }
    // Whether the analysis of the trace shown (metrics, checks, diagnostics, critical path) is in the panels: a big
    // trace (kAnalyzeLaterSpans and more) is drawn as soon as it is read, and its analysis follows. By its spans, not
    // its file's size: a binary trace of version 3 holds from 10 to over 100 times the spans of JSON per byte.
    bool isAnalysisShown() const { return m_trace && m_trace->analysed; }
    static constexpr size_t kAnalyzeLaterSpans = 250'000;
    // A file being opened: Run ▸ Cancel (Ctrl+.) stops reading it, and the window stays as it was.
    bool isOpening() const { return m_openCancel != nullptr; }
    void cancelOpening();
    // The message shown above the timeline (run and file errors); empty when none.
    QString errorMessage() const;
    // The banners above the timeline: timing changed the run (warning), CUPTI was not used (info).
    NoticeBar* timingWarningBar() const { return m_timingWarning; }
    NoticeBar* timingInfoBar() const { return m_timingInfo; }
    QComboBox* timingBox() const { return m_timingBox; }
    QStringList recentFiles() const;

Q_SIGNALS:
    void documentOpened(const QString& path);
    // A new trace is on the timeline.
    void traceShown();
    // Its analysis is in the panels (with traceShown, or after it for a big trace file).
    void analysisShown();
    // The concurrency strip's steps, counted after the trace was drawn (a big trace file), are in the strip.
    void concurrencyShown();
    void errorShown(const QString& message);

protected:
    void closeEvent(QCloseEvent* event) override;
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;
    void showEvent(QShowEvent* event) override;
    void changeEvent(QEvent* event) override;       // a new palette: the message bar in the theme's colours
    void resizeEvent(QResizeEvent* event) override; // the docks' layout follows the window's size (fitDocksToWindow)

private:
    friend struct ShownDocument;
    void createActions();
    // The constructor's parts (main_window.cpp); the menus and toolbars are main_window_actions.cpp's.
    void createPrompts();
    void createCentre();
    void applyMessageColors();
    void addThemeMenu(QMenu* view); // View ▸ Theme: System, Light, Dark (theme.h)
    void connectEditing();
    void connectRuns();
    void connectSelection();
    void createDocks();
    // The docks' default places and sizes (every dock shown but the sweep); resetLayout uses it again. `compact`:
    // every dock a tab of one column on the left (a small screen or window), else the timeline between docks on
    // the left, on the right and below.
    void arrangeDocks(bool compact);
    // Which of arrangeDocks' two layouts the docks are in, if either: Other once a dock was moved, floated or closed.
    enum class DockLayout { Wide, Compact, Other };
    DockLayout dockLayout() const;
    // A window made smaller than kCompactLayoutSize (or larger again) gets the layout of its size, unless the user
    // arranged the docks: a half-screen window had kept the docks beside the timeline and left it 230 px.
    void fitDocksToWindow();
    // A dock the user moved, floated or docked again since arrangeDocks: their arrangement is kept, even where it
    // looks like one of arrangeDocks' layouts (every dock moved to the left by hand in a wide window).
    void watchDockMoves();
    // The shortcuts of the menus' actions work while the menu bar is hidden (presentation mode).
    void keepShortcutsWithoutMenuBar();
    void createToolbars();
    void applyDocument(LoadedDocument doc);
    // `preview`: a live re-simulation of an edit, which keeps the user's zoom (unless the view showed everything).
    void showTrace(std::shared_ptr<const AnalyzedTrace> trace, const QString& file, double wallMs,
                   bool preview = false);
    void updateCriticalPath();
    // A big trace's second step: its analysis on a worker, then in the panels.
    void analyzeShownTrace();
    void stopAnalysis(); // the analysis on a worker, if any, skips its stages not begun
    // Starts opening a document or job: the opening before is cancelled, `status` shown, Cancel enabled; the
    // progress the worker reports to (its cancel flag is the window's m_openCancel).
    std::shared_ptr<ImportProgress> startOpening(const QString& status);
    void showOpenProgress(double fraction);
    void endOpening();
    void showError(const QString& message);
    void clearError();
    bool maybeSave();
    void updateTitle();
    // Run, Save and Compare with Variant: enabled when there is a scenario to run or save, else why not.
    void updateScenarioActions();
    // What if…: enabled for a GPU recording with its scenario embedded, else the tooltip says why not.
    void updateWhatIfAction();
    void updateGpuChoice();
    // Profile for the simulator, timing for the GPU: each enabled for its backend.
    void updateBackendControls();
    void updateTimingNotice();
    void updateNoticeVisibility();
    void updateLesson();
    void addRecentFile(const QString& path);
    void rebuildRecentMenu();
    void scheduleLiveRun();
    void liveRun();
    void selectSpanInTable(int span);
    void updateSpanPager(); // the span table's pager: shown where its rows fill more than a page
    void takeScreenshot();
    void readSettings();
    void writeSettings();
    // Analysis menu parts.
    void createCompareActions();
    // job_open.cpp: File ▸ Open Job… and Analysis ▸ Compare Ranks…
    void createJobOpenAction(QMenu* file);
    void createCompareRanksAction();
    void updateCompareRanksAction();
    void chooseRanksToCompare();
    void createSweepActions();
    void createPresentationActions();
    CompareView* ensureCompareView();
    // Shown, raised and (the first time) fitted to the screen.
    void showCompareView();

    ScenarioModel* m_model;
    RunController* m_runner;
    TimelineView* m_timeline;
    QAction* m_criticalPathAction = nullptr;
    class ConcurrencyPlot* m_concurrency = nullptr;
    ScenarioEditor* m_editor = nullptr;
    LessonGallery* m_gallery = nullptr;
    SpanInspector* m_inspector = nullptr;
    SpanTableModel* m_spanModel = nullptr;
    SpanTableProxy* m_spanProxy = nullptr;
    OpGpuTimeModel* m_opModel = nullptr; // the span table grouped: GPU time by launching op
    QTableView* m_opTable = nullptr;
    class QCheckBox* m_groupByOp = nullptr;
    QTableView* m_spanTable = nullptr;
    QLineEdit* m_spanFilter = nullptr;
    QLabel* m_spanPage = nullptr; // "Rows 1 – 1,000,000 of 100,000,000", where the table has several pages
    QToolButton* m_spanPrevPage = nullptr;
    QToolButton* m_spanNextPage = nullptr;
    AnalysisPanel* m_analysis = nullptr;
    RunInfoPanel* m_runInfo = nullptr;

    QFrame* m_messageBar = nullptr;
    QLabel* m_messageText = nullptr;
    QProgressBar* m_progress = nullptr;
    QLabel* m_statusText = nullptr;
    QComboBox* m_backendBox = nullptr;
    QComboBox* m_profileBox = nullptr;
    QComboBox* m_timingBox = nullptr;
    NoticeBar* m_timingWarning = nullptr;
    NoticeBar* m_timingInfo = nullptr;
    QToolBar* m_noticeToolBar = nullptr;
    std::optional<TimingMode> m_suggestedTiming; // what the banner's "Time with …" sets
    bool m_presenting = false;
    QCheckBox* m_liveBox = nullptr;
    QMenu* m_recentMenu = nullptr;
    QMenu* m_viewMenu = nullptr;
    QMenu* m_analysisMenu = nullptr;
    QPointer<CompareView> m_compareView;
    QAction* m_newAction = nullptr;
    QAction* m_openAction = nullptr;
    QAction* m_runAction = nullptr;
    QAction* m_cancelAction = nullptr;
    QAction* m_saveAction = nullptr;
    QAction* m_saveAsAction = nullptr;
    QAction* m_compareVariantAction = nullptr;
    QAction* m_whatIfAction = nullptr;
    QAction* m_compareRanksAction = nullptr;
    QAction* m_exportAction = nullptr;
    QAction* m_saveTraceAction = nullptr;
    QTimer* m_liveTimer = nullptr;
    QTimer* m_autosaveTimer = nullptr;
    QString m_autosavePath;
    std::function<RecoverChoice(const QString&)> m_recoverPrompt;
    void writeAutosave();
    void removeAutosave();
    QTimer* m_progressDelay = nullptr;
    QTimer* m_dockFitTimer = nullptr; // fitDocksToWindow once a resize has settled
    bool m_docksByHand = false;       // the user moved a dock since arrangeDocks (watchDockMoves); saved in settings
    bool m_placingDocks = false;      // arrangeDocks or a saved state is placing the docks: no move of the user's

    QString m_path;      // the scenario file (empty: untitled, or a lesson)
    QString m_lessonId;  // the lesson open, if any
    QString m_variant;   // its variant
    QString m_traceFile; // the trace file shown, if one was opened
    QString m_tracePath; // the trace file that is the document (see traceDocumentPath)
    QString m_traceKind; // what that trace is, for the title: "trace (PyTorch)"
    QString m_untitledName;
    std::shared_ptr<const AnalyzedTrace> m_trace;
    double m_traceWallMs = -1; // how long the run shown took (-1: not known, an opened trace)
    std::function<UnsavedChoice()> m_unsavedPrompt;
    quint64 m_openGeneration = 0;
    quint64 m_analysisGeneration = 0;
    quint64 m_concurrencyGeneration = 0;
    std::shared_ptr<std::atomic<bool>> m_openCancel; // set while a file is being opened
    // The analysis running on a worker (analyzeShownTrace) and its trace: stopped once another trace is shown, so that
    // the worker lets go of the one it reads (at 100 M spans 2 GB, analysed for a minute and more).
    std::shared_ptr<std::atomic<bool>> m_analysisCancel;
    const Trace* m_analysisOf = nullptr;
    // The concurrency strip's steps being counted on a worker (a big trace's, after its first frame): stopped when
    // another trace is shown (the count holds its trace for up to 40 s at 100 M spans).
    std::shared_ptr<std::atomic<bool>> m_concurrencyCancel;
    bool m_syncingSelection = false;
    bool m_previewRun = false;   // the run in progress is a live preview
    bool m_partialShown = false; // a failed GPU run's partial trace was just shown (its error follows)
    bool m_shownOnce = false;
    QRect m_settingsGeometry; // the geometry readSettings gave the window (fitted to the screen again when shown)
    bool m_probeGpu = true;
    bool m_probed = false;
    bool m_userChoseBackend = false;
    bool m_gpuRunPending = false; // run on the GPU once it turns out usable (opening a lesson at start)
    QString m_screenshotPath;
    bool m_quitAfterScreenshot = false;
    bool m_screenshotScheduled = false;
};

} // namespace streamscope
