// Runs scenarios: on the simulator in-process (on a worker thread, so the window never freezes; a newer run
// supersedes an older one) or on the GPU through `streamscope-cli run SCENARIO --backend cuda -o TRACE --timing M`
// started next to the app with QProcess (isolating GPU faults from the window; Cancel kills the child). Also finds
// out whether the GPU is usable, by asking streamscope-cli.
#pragma once

#include "document_loader.h"
#include "scenario.h"

#include <QElapsedTimer>
#include <QObject>
#include <QPointer>
#include <QProcess>
#include <QString>
#include <QStringList>

#include <atomic>
#include <memory>

class QTemporaryDir;
class QTimer;

namespace streamscope {

enum class RunBackend { Simulator, Gpu };

// Stops a child process without blocking: SIGTERM, SIGKILL if it has not exited 1.5 s later; the process object
// and its temporary files are deleted once it has exited (reaped, no zombie).
void stopChildProcess(QProcess* process, std::unique_ptr<QTemporaryDir> files);

struct GpuStatus {
    enum class State { Unknown, Checking, Usable, Unusable };
    State state = State::Unknown;
    QString description; // Usable: the GPU's name ("NVIDIA H200"); Unusable: why not
};

// The GPU entry of a backend choice: "GPU: NVIDIA H200", "GPU (not available)", ...
QString gpuChoiceText(const GpuStatus& gpu);
// streamscope-cli's error message from its stderr: its "error: ..." lines, else its last lines.
QString cliErrorMessage(const QByteArray& stderrBytes);

// How GPU runs time their operations, as the run controls offer it (DESIGN.md §4): "Auto (CUPTI where usable)",
// "CUPTI", "CUDA events", "Both"; and a sentence on what each measures and costs (for tooltips).
QString timingModeLabel(TimingMode mode);
QString timingModeDescription(TimingMode mode);
// `--timing auto|cupti|events|both`: passed on every GPU run and sweep, so that the choice in the window wins over
// the scenario's run.timing (the CLI's rule).
QStringList timingArguments(TimingMode mode);
// The arguments of a GPU run: run SCENARIO --backend cuda -o TRACE --progress --timing M.
QStringList gpuRunArguments(const QString& scenarioPath, const QString& tracePath, TimingMode timing);

class RunController : public QObject {
    Q_OBJECT
public:
    explicit RunController(QObject* parent = nullptr);
    ~RunController() override;

    // Simulator device profile for every device ("h200", "laptop"); empty: each device's own profile.
    void setProfileId(const QString& id) { m_profileId = id; }
    QString profileId() const { return m_profileId; }
    static QStringList profileIds();

    // How GPU runs (and GPU sweeps) time their operations; the simulator ignores it.
    void setTimingMode(TimingMode mode) { m_timing = mode; }
    TimingMode timingMode() const { return m_timing; }

    // streamscope-cli: next to the app's executable unless set.
    QString cliPath() const;
    void setCliPath(const QString& path) { m_cliPath = path; }

    // Asks streamscope-cli whether a GPU is usable (asynchronously; gpuStatusChanged tells the answer).
    void probeGpu();
    const GpuStatus& gpuStatus() const { return m_gpu; }

    bool isRunning() const { return m_running; }
    RunBackend runningBackend() const { return m_runningBackend; }

    // Starts a run of a validated scenario; a run in progress is cancelled first. `variant` is recorded in the trace.
    void run(RunBackend backend, std::shared_ptr<const Scenario> scenario, const QString& variant = {});
    // Stops the run in progress (kills the GPU child process); emits cancelled.
    void cancel();

    // Simulates synchronously (headless export, tests). `profileId` as setProfileId.
    static Result<Trace> simulate(const Scenario& scenario, const QString& profileId = {}, const QString& variant = {},
                                  const std::atomic<bool>* cancel = nullptr);

Q_SIGNALS:
    void started(RunBackend backend);
    void progressMessage(const QString& message);
    // A run finished; wallMs: how long it took, as the user waited.
    void finished(std::shared_ptr<const AnalyzedTrace> trace, RunBackend backend, double wallMs);
    // A run failed: the message to show (for GPU runs, streamscope-cli's error) and its exit code (or -1).
    void failed(const QString& message, int exitCode);
    // A GPU run failed part-way (exit code 3) and left the trace of what ran until then; `failed` follows.
    void partialTrace(std::shared_ptr<const AnalyzedTrace> trace, double wallMs);
    void cancelled();
    void runningChanged(bool running);
    void gpuStatusChanged();

private:
    void startSimulation(std::shared_ptr<const Scenario> scenario, const QString& variant);
    void startGpu(std::shared_ptr<const Scenario> scenario);
    void gpuProcessFinished(int exitCode, QProcess::ExitStatus status);
    void setRunning(bool running);
    void stopProcess();
    void finishProbe(GpuStatus::State state, const QString& description);

    QString m_profileId;
    TimingMode m_timing = TimingMode::Auto;
    QString m_cliPath;
    GpuStatus m_gpu;
    bool m_running = false;
    RunBackend m_runningBackend = RunBackend::Simulator;
    quint64 m_generation = 0; // runs with an older generation are stale and dropped
    std::shared_ptr<std::atomic<bool>> m_simCancel;
    QElapsedTimer m_clock;

    QPointer<QProcess> m_process;
    std::unique_ptr<QTemporaryDir> m_tmp;
    QString m_tracePath;
    QTimer* m_tick = nullptr;
    QByteArray m_stderr; // the GPU run's stderr so far (progress lines are taken out of it as they come)
    QString m_progress;  // "iteration 2 of 5", from the CLI's --progress lines

    QPointer<QProcess> m_probe;
    std::unique_ptr<QTemporaryDir> m_probeDir;
    int m_probeStep = 0;
};

} // namespace streamscope
