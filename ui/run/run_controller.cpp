#include "run_controller.h"

#include "device_profile.h"
#include "format.h"
#include "runner.h"
#include "scenario_json.h"
#include "simulator.h"
#include "trace_json.h"
#include "worker.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QThread>
#include <QTimer>

namespace streamscope {

QString gpuChoiceText(const GpuStatus& gpu)
{
    switch (gpu.state) {
    case GpuStatus::State::Unknown: return QStringLiteral("GPU (not checked)");
    case GpuStatus::State::Checking: return QStringLiteral("GPU (checking…)");
    case GpuStatus::State::Usable: return QStringLiteral("GPU: ") + gpu.description;
    case GpuStatus::State::Unusable: return QStringLiteral("GPU (not available)");
    }
    return QStringLiteral("GPU");
}

QString cliErrorMessage(const QByteArray& stderrBytes)
{
    const QStringList lines = QString::fromUtf8(stderrBytes).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    QStringList errors;
    for (const QString& line : lines)
        if (line.startsWith(QLatin1String("error: ")))
            errors << line.mid(7);
    if (!errors.isEmpty())
        return errors.join(QLatin1Char('\n'));
    return lines.mid(std::max<qsizetype>(0, lines.size() - 5)).join(QLatin1Char('\n'));
}

QString timingModeLabel(TimingMode mode)
{
    switch (mode) {
    case TimingMode::Auto: return QStringLiteral("Auto (CUPTI where usable)");
    case TimingMode::Cupti: return QStringLiteral("CUPTI");
    case TimingMode::Events: return QStringLiteral("CUDA events");
    case TimingMode::Both: return QStringLiteral("Both");
    }
    return {};
}

QString timingModeDescription(TimingMode mode)
{
    switch (mode) {
    case TimingMode::Auto:
        return QStringLiteral("CUPTI activity records where CUPTI is usable, else CUDA events (the trace says which "
                              "and why)");
    case TimingMode::Cupti:
        return QStringLiteral("CUPTI activity records: the true start and end of each GPU operation, no work added "
                              "to the streams");
    case TimingMode::Events:
        return QStringLiteral("A CUDA event around every operation: a start is when the stream reached the op (it "
                              "may still wait for SMs), and events share the hardware queues, which can slow the run");
    case TimingMode::Both:
        return QStringLiteral("CUPTI spans plus the per-op CUDA event times of the same run, to see how far the "
                              "events are from CUPTI (costs what events cost)");
    }
    return {};
}

QStringList timingArguments(TimingMode mode)
{
    return {QStringLiteral("--timing"), qs(toString(mode))};
}

QStringList gpuRunArguments(const QString& scenarioPath, const QString& tracePath, TimingMode timing)
{
    return QStringList{QStringLiteral("run"), scenarioPath, QStringLiteral("--backend"), QStringLiteral("cuda"),
                       QStringLiteral("-o"),  tracePath,    QStringLiteral("--progress")}
    + timingArguments(timing);
}

RunController::RunController(QObject* parent) : QObject(parent), m_tick(new QTimer(this))
{
    m_tick->setInterval(250);
    connect(m_tick, &QTimer::timeout, this, [this] {
        if (m_running && m_runningBackend == RunBackend::Gpu)
            Q_EMIT progressMessage(QStringLiteral("Running on the GPU… %1%2 s")
                                       .arg(m_progress.isEmpty() ? QString() : m_progress + QStringLiteral(", "))
                                       .arg(double(m_clock.elapsed()) / 1000.0, 0, 'f', 1));
    });
}

RunController::~RunController()
{
    if (m_simCancel)
        m_simCancel->store(true);
    for (QProcess* p : {m_process.data(), m_probe.data()}) {
        if (p) {
            p->disconnect(this);
            p->kill();
            p->waitForFinished(3000);
        }
    }
}

QStringList RunController::profileIds()
{
    QStringList ids;
    for (const auto& id : builtinProfileIds())
        ids << qs(id);
    return ids;
}

QString RunController::cliPath() const
{
    if (!m_cliPath.isEmpty())
        return m_cliPath;
    return QDir(QCoreApplication::applicationDirPath()).filePath(QStringLiteral("streamscope-cli"));
}

void RunController::setRunning(bool running)
{
    if (m_running == running)
        return;
    m_running = running;
    if (running)
        m_tick->start();
    else
        m_tick->stop();
    Q_EMIT runningChanged(running);
}

// ---- simulator -------------------------------------------------------------------------------------------------

Result<Trace> RunController::simulate(const Scenario& scenario, const QString& profileId, const QString& variant,
                                      const std::atomic<bool>* cancel)
{
    SimulatorOptions options;
    if (!profileId.isEmpty()) {
        auto profile = findDeviceProfile(profileId.toStdString());
        if (!profile)
            return Result<Trace>(profile.error(), profile.errorClass());
        options.profile = std::move(profile).value();
    }
    SimulatorBackend backend(std::move(options));
    RunOptions run;
    run.variant = variant.toStdString();
    run.command =
        "streamscope (simulator" + (profileId.isEmpty() ? std::string() : ", profile " + profileId.toStdString()) + ")";
    run.cancel = cancel;
    RunOutcome outcome = runScenario(scenario, backend, run);
    if (!outcome.status)
        return Result<Trace>(outcome.status.error(), outcome.status.errorClass());
    return std::move(outcome.trace);
}

void RunController::startSimulation(std::shared_ptr<const Scenario> scenario, const QString& variant)
{
    auto cancelFlag = std::make_shared<std::atomic<bool>>(false);
    m_simCancel = cancelFlag;
    const QString profile = m_profileId;
    struct Simulated {
        std::shared_ptr<const AnalyzedTrace> analyzed;
        QString error;
    };
    // A cancelled run moves the generation on (cancel, or the run that superseded it), so its result is dropped.
    runOffGuiThread(
        this, &RunController::m_generation,
        [scenario, variant, profile, cancelFlag] {
            Simulated out;
            auto result = simulate(*scenario, profile, variant, cancelFlag.get());
            if (result)
                out.analyzed = makeAnalyzedTrace(std::move(result).value());
            else
                out.error = qs(result.error().toString());
            return out;
        },
        [](RunController& c, Simulated out) {
            const double ms = double(c.m_clock.nsecsElapsed()) / 1e6;
            c.setRunning(false);
            if (out.analyzed)
                Q_EMIT c.finished(out.analyzed, RunBackend::Simulator, ms);
            else
                Q_EMIT c.failed(out.error, -1);
        });
}

// ---- GPU through streamscope-cli -------------------------------------------------------------------------------

void RunController::startGpu(std::shared_ptr<const Scenario> scenario)
{
    m_tmp = std::make_unique<QTemporaryDir>();
    if (!m_tmp->isValid()) {
        setRunning(false);
        Q_EMIT failed(QStringLiteral("Could not create a temporary directory: ") + m_tmp->errorString(), -1);
        return;
    }
    const QString scenarioPath = m_tmp->filePath(QStringLiteral("scenario.json"));
    m_tracePath = m_tmp->filePath(QStringLiteral("trace.json"));
    if (Status s = saveTextFileAtomic(scenarioPath.toStdString(), scenarioToJson(*scenario)); !s) {
        setRunning(false);
        Q_EMIT failed(qs(s.error().toString()), -1);
        return;
    }
    const QString cli = cliPath();
    if (!QFileInfo(cli).isExecutable()) {
        setRunning(false);
        Q_EMIT failed(QStringLiteral("streamscope-cli was not found next to the app (%1)").arg(cli), -1);
        return;
    }
    auto* process = new QProcess(this);
    m_process = process;
    process->setProgram(cli);
    process->setArguments(gpuRunArguments(scenarioPath, m_tracePath, m_timing));
    m_stderr.clear();
    m_progress.clear();
    connect(process, &QProcess::readyReadStandardError, this, [this, process] {
        if (process != m_process)
            return;
        m_stderr += process->readAllStandardError();
        // Progress lines ("progress: I/N iterations") become the status; everything else is kept for errors.
        qsizetype start = 0;
        QByteArray rest;
        for (qsizetype nl = m_stderr.indexOf('\n'); nl >= 0; start = nl + 1, nl = m_stderr.indexOf('\n', start)) {
            const QByteArray line = m_stderr.mid(start, nl - start);
            if (line.startsWith("progress: ")) {
                const QList<QByteArray> parts = line.mid(10).split(' ').first().split('/');
                if (parts.size() == 2)
                    m_progress = QStringLiteral("iteration %1 of %2")
                                     .arg(QString::fromLatin1(parts[0]), QString::fromLatin1(parts[1]));
            } else {
                rest += line + '\n';
            }
        }
        m_stderr = rest + m_stderr.mid(start);
    });
    connect(process, &QProcess::finished, this, [this, process](int code, QProcess::ExitStatus status) {
        if (process != m_process)
            return;
        gpuProcessFinished(code, status);
    });
    connect(process, &QProcess::errorOccurred, this, [this, process](QProcess::ProcessError error) {
        if (process != m_process || error != QProcess::FailedToStart)
            return;
        m_process = nullptr;
        process->deleteLater();
        setRunning(false);
        Q_EMIT failed(QStringLiteral("Could not start %1: %2").arg(process->program(), process->errorString()), -1);
    });
    Q_EMIT progressMessage(QStringLiteral("Running on the GPU…"));
    process->start();
}

void RunController::gpuProcessFinished(int exitCode, QProcess::ExitStatus status)
{
    QProcess* process = m_process;
    m_process = nullptr;
    const QByteArray err = m_stderr + process->readAllStandardError();
    m_stderr.clear();
    process->deleteLater();
    if (status == QProcess::CrashExit) {
        setRunning(false);
        m_tmp.reset();
        Q_EMIT failed(QStringLiteral("streamscope-cli crashed. ") + cliErrorMessage(err), -1);
        return;
    }
    QString failure;
    if (exitCode != 0 && exitCode != 1) {
        const QString what = exitCode == 2 ? QStringLiteral("Bad input")
            : exitCode == 3                ? QStringLiteral("GPU error")
                                           : QStringLiteral("streamscope-cli failed (exit code %1)").arg(exitCode);
        failure = what + QStringLiteral(": ") + cliErrorMessage(err);
        // A GPU run that failed part-way leaves the trace of what it issued and timed until then: shown with the
        // error. Anything else (bad input, no trace written) is the error alone.
        if (exitCode != 3 || !QFileInfo(m_tracePath).isFile() || QFileInfo(m_tracePath).size() == 0) {
            setRunning(false);
            m_tmp.reset();
            Q_EMIT failed(failure, exitCode);
            return;
        }
    }
    // Read the trace off the GUI thread: real traces can be large.
    Q_EMIT progressMessage(QStringLiteral("Reading the trace…"));
    const QString tracePath = m_tracePath;
    std::shared_ptr<QTemporaryDir> keep(m_tmp.release());
    struct Read {
        std::shared_ptr<const AnalyzedTrace> analyzed;
        QString error;
    };
    runOffGuiThread(
        this, &RunController::m_generation,
        [tracePath, keep] {
            Read out;
            auto trace = loadTraceFile(tracePath.toStdString());
            if (trace)
                out.analyzed = makeAnalyzedTrace(std::move(trace).value());
            else
                out.error = qs(trace.error().toString());
            return out;
        },
        [failure, exitCode](RunController& c, Read out) {
            const double ms = double(c.m_clock.nsecsElapsed()) / 1e6;
            c.setRunning(false);
            if (!failure.isEmpty()) {
                if (out.analyzed)
                    Q_EMIT c.partialTrace(out.analyzed, ms);
                Q_EMIT c.failed(failure, exitCode);
            } else if (out.analyzed) {
                Q_EMIT c.finished(out.analyzed, RunBackend::Gpu, ms);
            } else {
                Q_EMIT c.failed(QStringLiteral("Could not read the GPU trace: ") + out.error, -1);
            }
        });
}

void stopChildProcess(QProcess* p, std::unique_ptr<QTemporaryDir> files)
{
    if (!p)
        return;
    // Its temporary files live until it has exited; then it is reaped and deleted (no zombie, no leak).
    std::shared_ptr<QTemporaryDir> keep(files.release());
    QObject::connect(p, &QProcess::finished, p, [p, keep] { p->deleteLater(); });
    // SIGTERM first so that the CLI can tear down its CUDA context; SIGKILL if it does not exit soon.
    p->terminate();
    QTimer::singleShot(1500, p, [p] {
        if (p->state() != QProcess::NotRunning)
            p->kill();
    });
}

void RunController::stopProcess()
{
    if (!m_process)
        return;
    QProcess* p = m_process;
    m_process = nullptr;
    p->disconnect(this);
    stopChildProcess(p, std::move(m_tmp));
}

// ---- runs ------------------------------------------------------------------------------------------------------

void RunController::run(RunBackend backend, std::shared_ptr<const Scenario> scenario, const QString& variant)
{
    if (m_running) {
        // A newer run supersedes the one in progress (live simulation while the user turns a knob).
        if (m_simCancel)
            m_simCancel->store(true);
        stopProcess();
    }
    ++m_generation;
    m_clock.start();
    m_runningBackend = backend;
    setRunning(true);
    Q_EMIT started(backend);
    if (!scenario) {
        setRunning(false);
        Q_EMIT failed(QStringLiteral("The scenario has an error; fix it before running."), 2);
        return;
    }
    if (backend == RunBackend::Gpu)
        startGpu(std::move(scenario));
    else
        startSimulation(std::move(scenario), variant);
}

void RunController::cancel()
{
    if (!m_running)
        return;
    ++m_generation;
    if (m_simCancel)
        m_simCancel->store(true);
    stopProcess();
    setRunning(false);
    Q_EMIT cancelled();
}

// ---- GPU probe -------------------------------------------------------------------------------------------------

void RunController::finishProbe(GpuStatus::State state, const QString& description)
{
    if (m_probe) {
        m_probe->deleteLater();
        m_probe = nullptr;
    }
    m_probeDir.reset();
    m_gpu.state = state;
    m_gpu.description = description;
    Q_EMIT gpuStatusChanged();
}

void RunController::probeGpu()
{
    if (m_probe)
        return;
    const QString cli = cliPath();
    if (!QFileInfo(cli).isExecutable()) {
        finishProbe(GpuStatus::State::Unusable, QStringLiteral("streamscope-cli was not found next to the app"));
        return;
    }
    m_gpu.state = GpuStatus::State::Checking;
    m_gpu.description = QStringLiteral("checking…");
    Q_EMIT gpuStatusChanged();

    // Step 1: is the CUDA backend built in? Step 2: does a one-kernel scenario run on the GPU?
    m_probeStep = 1;
    auto* p = new QProcess(this);
    m_probe = p;
    p->setProgram(cli);
    p->setArguments({QStringLiteral("--version")});
    connect(p, &QProcess::errorOccurred, this, [this, p](QProcess::ProcessError e) {
        if (p == m_probe && e == QProcess::FailedToStart)
            finishProbe(GpuStatus::State::Unusable,
                        QStringLiteral("could not start streamscope-cli: ") + p->errorString());
    });
    connect(p, &QProcess::finished, this, [this, p, cli](int code, QProcess::ExitStatus status) {
        if (p != m_probe)
            return;
        const QString out = QString::fromUtf8(p->readAllStandardOutput());
        const QByteArray err = p->readAllStandardError();
        if (m_probeStep == 1) {
            if (status != QProcess::NormalExit || code != 0) {
                finishProbe(GpuStatus::State::Unusable, QStringLiteral("streamscope-cli --version failed"));
                return;
            }
            if (out.contains(QLatin1String("no CUDA backend"))) {
                finishProbe(GpuStatus::State::Unusable,
                            QStringLiteral("streamscope-cli was built without the CUDA backend"));
                return;
            }
            Scenario probe;
            probe.id = "gpu-probe";
            probe.devices.push_back(DeviceSpec{0, {}});
            probe.streams.push_back(StreamSpec{"s", 0, StreamKind::NonBlocking, 0});
            ThreadSpec t;
            t.name = "main";
            Op k;
            k.kind = OpKind::Kernel;
            k.kernel = KernelKind::Empty;
            k.stream = "s";
            k.grid = Dim3{1, 1, 1};
            k.gridGiven = true;
            k.block = Dim3{32, 1, 1};
            t.ops.push_back(k);
            probe.threads.push_back(t);
            m_probeDir = std::make_unique<QTemporaryDir>();
            const QString path = m_probeDir->filePath(QStringLiteral("probe.json"));
            if (!m_probeDir->isValid() || !saveTextFileAtomic(path.toStdString(), scenarioToJson(probe))) {
                finishProbe(GpuStatus::State::Unusable, QStringLiteral("could not write a probe scenario"));
                return;
            }
            m_probeStep = 2;
            p->start(cli, {QStringLiteral("run"), path, QStringLiteral("--backend"), QStringLiteral("cuda")});
            return;
        }
        if (status == QProcess::NormalExit && code == 0) {
            static const QRegularExpression deviceLine(QStringLiteral("^\\s*device \\d+: (.+)$"),
                                                       QRegularExpression::MultilineOption);
            const auto m = deviceLine.match(out);
            finishProbe(GpuStatus::State::Usable, m.hasMatch() ? m.captured(1).trimmed() : QStringLiteral("GPU"));
            return;
        }
        QString reason = cliErrorMessage(err);
        if (reason.startsWith(QLatin1String("no usable GPU: ")))
            reason = reason.mid(15);
        finishProbe(GpuStatus::State::Unusable, reason.isEmpty() ? QStringLiteral("no usable GPU") : reason);
    });
    p->start();
}

} // namespace streamscope
