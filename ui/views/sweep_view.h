// The sweep view (Analysis > Sweep): varies one knob of the scenario in the editor — the number of streams, the
// chunks a thread issues, the kernel size — over a list of values and plots makespan and speedup against it, with
// a table of the points.
// - Simulator: in-process on a worker thread (core runSweep, one value at a time so that the plot fills in as it
//   goes); a newer sweep supersedes an older one, and after an edit the sweep runs again by itself when the last
//   one was quick.
// - GPU: `streamscope-cli sweep SCENARIO --backend cuda --json --timing M` started with QProcess (M: the run
//   controller's timing choice; a GPU fault cannot take the window down; Cancel kills the child). Its
//   "sweep I/N: knob = v" lines on stderr are the progress, the JSON on stdout the points.
#pragma once

#include "analysis.h"
#include "run_controller.h"
#include "scenario.h"
#include "timeline_plottable.h" // includes QCustomPlot (see there)
#include "whatif.h"

#include <QElapsedTimer>
#include <QHash>
#include <QPointer>
#include <QProcess>
#include <QString>
#include <QWidget>

#include <atomic>
#include <memory>
#include <optional>
#include <vector>

class QBoxLayout;
class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QSplitter;
class QTableWidget;
class QTemporaryDir;
class QTimer;

namespace streamscope {

// The values typed into the view, parsed: the values, or why they cannot be swept.
struct SweepValues {
    std::vector<double> values;
    QString error;
    bool ok() const { return error.isEmpty(); }
};

class SweepView : public QWidget {
    Q_OBJECT
public:
    enum class State { Idle, Running, Finished, Failed, Cancelled };

    explicit SweepView(QWidget* parent = nullptr);
    ~SweepView() override;

    // Where GPU sweeps go (its streamscope-cli), whether the GPU is usable, and the simulator profile.
    void setRunController(RunController* runner);
    // The scenario to sweep (validated; nullptr while it has an error). After an edit a simulator sweep runs again
    // when "Follow edits" is on, the view is visible and the last sweep was quick; otherwise the points are marked
    // as out of date.
    void setScenario(std::shared_ptr<const Scenario> scenario);
    std::shared_ptr<const Scenario> scenario() const { return m_scenario; }

    // ---- settings (the controls)
    SweepKnob knob() const;
    // Switches the knob; the values become the ones last used for it (its defaults at first).
    void setKnob(SweepKnob knob);
    QString valuesText() const;
    void setValuesText(const QString& text);
    // Chunks and kernel size: the scenario thread to change; -1: every thread.
    int thread() const;
    void setThread(int thread);
    RunBackend backend() const;
    // False (and the simulator kept) when the GPU is not usable.
    bool setBackend(RunBackend backend);
    bool followsEdits() const;
    void setFollowEdits(bool on);
    // Following edits re-runs a simulator sweep only when the last one took less than this (default 1 s); slower
    // sweeps are marked out of date instead.
    void setQuickSweepLimitMs(double ms) { m_quickSweepMs = ms; }

    // "1, 2, 4", "1..16" (every whole number from 1 to 16), "0.5x"; commas, semicolons or spaces between values.
    static SweepValues parseValues(const QString& text, SweepKnob knob);
    // The reverse: runs of three or more consecutive whole numbers become "a..b".
    static QString formatValues(const std::vector<double>& values);
    // The points of `streamscope-cli sweep --json` (sweepToJson's shape); nullopt with `error` set when it is not that.
    static std::optional<std::vector<SweepPoint>> parseSweepJson(const QByteArray& json, QString* error = nullptr);

    // ---- running
    // Sweeps the scenario with the current settings; a sweep in progress is cancelled first. Bad values or a
    // scenario with an error fail at once (failed, with the message shown).
    void run();
    void cancel();
    bool isRunning() const { return m_state == State::Running; }
    State state() const { return m_state; }
    // The backend of the sweep shown (or running).
    RunBackend sweptBackend() const { return m_sweptBackend; }

    // ---- result (the sweep shown)
    const SweepSpec& sweptSpec() const { return m_spec; }
    const std::vector<SweepPoint>& points() const { return m_points; }
    // The line under the controls: progress, a summary, or the error.
    QString message() const;
    // The swept scenario rewritten for point `index` (what double-clicking the point shows on the timeline).
    Result<Scenario> scenarioForPoint(int index) const;

    // ---- parts (for tests)
    QCustomPlot* plot() const { return m_plot; }
    QCPGraph* makespanGraph() const { return m_makespanGraph; }
    QCPGraph* relativeSpeedupGraph() const { return m_relativeGraph; }
    QCPGraph* speedupGraph() const { return m_speedupGraph; }
    // Values that failed: a cross on the value axis.
    QCPGraph* failedGraph() const { return m_failedGraph; }
    QTableWidget* table() const { return m_table; }
    QComboBox* knobBox() const { return m_knobBox; }
    QComboBox* backendBox() const { return m_backendBox; }
    QLineEdit* valuesEdit() const { return m_valuesEdit; }
    QPushButton* runButton() const { return m_runButton; }
    QPushButton* cancelButton() const { return m_cancelButton; }
    QProgressBar* progressBar() const { return m_progressBar; }
    // Controls, chart and table side by side where there is room (a dock under the timeline), one above the other
    // in a narrow column (the compact layout's docks): side by side there, the chart was 220 px wide.
    bool isStacked() const { return m_stacked; }
    static constexpr int kSideBySideWidth = 720;

Q_SIGNALS:
    void started(RunBackend backend);
    // `done` of `total` values swept; `text` as shown ("GPU: streams = 2 (2 of 5)…").
    void progress(int done, int total, const QString& text);
    void finished();
    void failed(const QString& message);
    void cancelled();
    void runningChanged(bool running);
    // A point was double-clicked (in the plot or the table).
    void pointActivated(int index);

protected:
    void showEvent(QShowEvent* event) override;
    void changeEvent(QEvent* event) override; // a new palette: the chart, table and message re-coloured
    bool event(QEvent* event) override;       // follows the width its parent (a scroll area's viewport) offers
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    // The constructor's parts.
    QWidget* createControls();
    void createPlot();
    void applyPlotColours();
    void createTable();
    void connectControls();
    void startSimulation();
    void startGpu();
    void gpuReadStderr();
    void gpuFinished(int exitCode, QProcess::ExitStatus status);
    void stopProcess();
    void addSimulatedPoint(quint64 generation, int index, const SweepPoint& point);
    void finishSweep(const QString& summaryPrefix);
    void fail(const QString& message);
    void setState(State state);
    void setMessage(const QString& text, bool error = false);
    void updateControls();
    void updateGpuChoice();
    void updateThreads();
    void onKnobChanged();
    void scheduleRerun();
    void rebuildPlot();
    void rebuildTable();
    void fitLegend();
    void arrangeFor(int width);
    int pointNear(const QPoint& pos, double maxPixels) const;
    QString pointText(int index) const;
    QString summary() const;
    QString knobLabel() const;

    QPointer<RunController> m_runner;
    std::shared_ptr<const Scenario> m_scenario;

    // The sweep shown (or running): its spec, scenario, backend and points.
    SweepSpec m_spec;
    std::shared_ptr<const Scenario> m_swept;
    RunBackend m_sweptBackend = RunBackend::Simulator;
    std::vector<SweepPoint> m_points;
    State m_state = State::Idle;
    bool m_stale = false;     // the scenario changed since the sweep shown
    quint64 m_generation = 0; // results of an older generation are stale and dropped
    std::shared_ptr<std::atomic<bool>> m_simCancel;
    QElapsedTimer m_clock;
    double m_lastSimMs = 0; // how long the last complete simulator sweep took
    double m_quickSweepMs = 1000;
    QTimer* m_rerunTimer = nullptr;
    QTimer* m_tick = nullptr;

    QPointer<QProcess> m_process;
    std::unique_ptr<QTemporaryDir> m_tmp;
    QByteArray m_stderr;   // the GPU sweep's stderr, progress lines taken out
    QString m_gpuProgress; // "streams = 2 (2 of 5)"
    int m_gpuDone = 0;

    QHash<int, QString> m_valuesByKnob; // the values text last used per knob
    SweepKnob m_shownKnob = SweepKnob::Streams;

    QComboBox* m_knobBox = nullptr;
    QLineEdit* m_valuesEdit = nullptr;
    QComboBox* m_threadBox = nullptr;
    QComboBox* m_backendBox = nullptr;
    QCheckBox* m_followBox = nullptr;
    QPushButton* m_runButton = nullptr;
    QPushButton* m_cancelButton = nullptr;
    QProgressBar* m_progressBar = nullptr;
    QLabel* m_messageLabel = nullptr;
    bool m_messageError = false;
    QCustomPlot* m_plot = nullptr;
    QCPTextElement* m_title = nullptr;
    QString m_fullTitle;              // the title before it is elided to the plot's width
    std::vector<double> m_tickValues; // the swept values labelled on the x axis (every stride-th when narrow)
    size_t m_tickStride = 0;
    QCPGraph* m_makespanGraph = nullptr;
    QCPGraph* m_relativeGraph = nullptr;
    QCPGraph* m_speedupGraph = nullptr;
    QCPGraph* m_failedGraph = nullptr;
    QTableWidget* m_table = nullptr;
    QBoxLayout* m_layout = nullptr;
    QSplitter* m_splitter = nullptr;
    bool m_stacked = false;
};

} // namespace streamscope
