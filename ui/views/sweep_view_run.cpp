// Running a sweep: on the simulator (in a worker thread, point by point) or on the GPU through streamscope-cli sweep
// in a child process, with progress, cancel and the summary.
#include "sweep_view.h"
#include "sweep_view_parts.h"

#include "device_profile.h"
#include "format.h"
#include "scenario_json.h"
#include "simulator.h"
#include "theme.h"
#include "trace_json.h"
#include "worker.h"

#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QProgressBar>
#include <QPushButton>
#include <QRegularExpression>
#include <QScrollBar>
#include <QSplitter>
#include <QStandardItemModel>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QThread>
#include <QTimer>
#include <QToolButton>
#include <QToolTip>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

namespace streamscope {

using namespace sweep_detail;

// ---- running ---------------------------------------------------------------------------------------------------

void SweepView::setState(State state)
{
    const bool wasRunning = m_state == State::Running;
    m_state = state;
    updateControls();
    if (state == State::Running)
        m_tick->start();
    else
        m_tick->stop();
    if (wasRunning != (state == State::Running))
        Q_EMIT runningChanged(state == State::Running);
}

void SweepView::setMessage(const QString& text, bool error)
{
    m_messageLabel->setText(text);
    m_messageError = error;
    const ThemeBox& box = Theme::of(this).error;
    m_messageLabel->setStyleSheet(error ? QStringLiteral("color:%1; background:%2; border:1px solid %3; padding:4px;")
                                              .arg(box.text.name(), box.background.name(), box.border.name())
                                        : QString());
}

QString SweepView::message() const
{
    return m_messageLabel->text();
}

void SweepView::fail(const QString& message)
{
    setState(State::Failed);
    setMessage(message, true);
    Q_EMIT failed(message);
}

void SweepView::run()
{
    m_rerunTimer->stop();
    // A sweep in progress is superseded.
    ++m_generation;
    if (m_simCancel)
        m_simCancel->store(true);
    stopProcess();

    const SweepValues values = parseValues(m_valuesEdit->text(), knob());
    if (!values.ok()) {
        fail(values.error);
        return;
    }
    if (!m_scenario) {
        fail(QStringLiteral("The scenario has an error; fix it in the editor before sweeping."));
        return;
    }
    if (knob() != SweepKnob::Streams && m_threadBox->currentData().toInt() >= int(m_scenario->threads.size()))
        setThread(-1);

    m_spec = SweepSpec{};
    m_spec.knob = knob();
    m_spec.values = values.values;
    m_spec.thread = thread();
    m_swept = m_scenario;
    m_sweptBackend = backend();
    m_points.clear();
    m_stale = false;
    m_clock.start();
    m_progressBar->setRange(0, int(m_spec.values.size()));
    m_progressBar->setValue(0);
    setState(State::Running);
    rebuildPlot();
    rebuildTable();
    Q_EMIT started(m_sweptBackend);
    if (m_sweptBackend == RunBackend::Gpu)
        startGpu();
    else
        startSimulation();
}

void SweepView::cancel()
{
    if (m_state != State::Running)
        return;
    m_rerunTimer->stop();
    ++m_generation;
    if (m_simCancel)
        m_simCancel->store(true);
    stopProcess();
    setState(State::Cancelled);
    setMessage(QStringLiteral("Sweep cancelled after %1 of %2 values.").arg(m_points.size()).arg(m_spec.values.size()));
    Q_EMIT cancelled();
}

// ---- simulator -------------------------------------------------------------------------------------------------

void SweepView::startSimulation()
{
    const quint64 generation = m_generation;
    auto cancelFlag = std::make_shared<std::atomic<bool>>(false);
    m_simCancel = cancelFlag;
    const QString profile = m_runner ? m_runner->profileId() : QString();
    const SweepSpec spec = m_spec;
    const std::shared_ptr<const Scenario> scenario = m_swept;
    QPointer<SweepView> self(this);
    setMessage(QStringLiteral("Simulating…"));
    enum class Ended { Done, Cancelled, NoProfile };
    struct Outcome {
        Ended ended = Ended::Done;
        QString message;
    };
    runOffGuiThread(
        this, &SweepView::m_generation,
        [self, scenario, spec, profile, cancelFlag, generation] {
            SimulatorOptions options;
            if (!profile.isEmpty()) {
                auto found = findDeviceProfile(profile.toStdString());
                if (!found)
                    return Outcome{Ended::NoProfile, qs(found.error().toString())};
                options.profile = std::move(found).value();
            }
            // One value at a time, so that the plot fills in as the sweep goes.
            for (size_t i = 0; i < spec.values.size(); ++i) {
                if (cancelFlag->load())
                    return Outcome{Ended::Cancelled, {}};
                SweepSpec one = spec;
                one.values = {spec.values[i]};
                const std::vector<SweepPoint> result = runSweep(*scenario, one, options, cancelFlag.get());
                if (cancelFlag->load())
                    return Outcome{Ended::Cancelled, {}};
                SweepPoint point;
                point.value = spec.values[i];
                if (result.empty())
                    point.error = "not simulated";
                else
                    point = result.front();
                postToGuiThread(
                    self, [generation, i, point](SweepView& v) { v.addSimulatedPoint(generation, int(i), point); });
            }
            return Outcome{};
        },
        [](SweepView& v, Outcome out) {
            if (out.ended == Ended::NoProfile) {
                v.fail(QStringLiteral("Simulator profile: ") + out.message);
                return;
            }
            if (out.ended == Ended::Cancelled)
                return;
            v.m_lastSimMs = double(v.m_clock.nsecsElapsed()) / 1e6;
            v.finishSweep(
                QStringLiteral("Simulated %1 values in %2.").arg(v.m_points.size()).arg(formatNs(v.m_lastSimMs * 1e6)));
        });
}

void SweepView::addSimulatedPoint(quint64 generation, int index, const SweepPoint& point)
{
    if (generation != m_generation || index != int(m_points.size()))
        return;
    m_points.push_back(point);
    setRelativeSpeedups(m_points);
    const int total = int(m_spec.values.size());
    m_progressBar->setValue(int(m_points.size()));
    const QString text = QStringLiteral("Simulating… %1 of %2").arg(m_points.size()).arg(total);
    setMessage(text);
    Q_EMIT progress(int(m_points.size()), total, text);
    rebuildPlot();
    rebuildTable();
}

void SweepView::finishSweep(const QString& summaryPrefix)
{
    setRelativeSpeedups(m_points);
    setState(State::Finished);
    rebuildPlot();
    rebuildTable();
    setMessage(summaryPrefix + QLatin1Char(' ') + summary());
    Q_EMIT finished();
}

QString SweepView::summary() const
{
    QStringList parts;
    int best = -1, errors = 0;
    for (size_t i = 0; i < m_points.size(); ++i) {
        const auto& p = m_points[i];
        if (!p.error.empty()) {
            ++errors;
            continue;
        }
        if (best < 0 || p.makespanNs < m_points[size_t(best)].makespanNs)
            best = int(i);
    }
    if (best >= 0) {
        const auto& p = m_points[size_t(best)];
        parts << QStringLiteral("Fastest: %1 = %2, %3 (%4 the first value).")
                     .arg(qs(toString(m_spec.knob)), valueText(p.value), formatNs(double(p.makespanNs)),
                          speedupText(p.relativeSpeedup));
    }
    if (errors > 0) {
        const auto failed =
            std::find_if(m_points.begin(), m_points.end(), [](const SweepPoint& p) { return !p.error.empty(); });
        parts << QStringLiteral("%1 of %2 values failed (the table says why), %3 = %4: %5")
                     .arg(errors)
                     .arg(m_points.size())
                     .arg(qs(toString(m_spec.knob)), valueText(failed->value), qs(failed->error));
    }
    if (m_stale)
        parts << QStringLiteral("The scenario has changed since this sweep: Run Sweep to update it.");
    return parts.join(QLatin1Char(' '));
}

// ---- GPU through streamscope-cli -------------------------------------------------------------------------------

void SweepView::startGpu()
{
    const QString cli = m_runner ? m_runner->cliPath() : QString();
    if (cli.isEmpty() || !QFileInfo(cli).isExecutable()) {
        fail(QStringLiteral("streamscope-cli was not found next to the app (%1).").arg(cli));
        return;
    }
    m_tmp = std::make_unique<QTemporaryDir>();
    if (!m_tmp->isValid()) {
        fail(QStringLiteral("Could not create a temporary directory: ") + m_tmp->errorString());
        return;
    }
    const QString scenarioPath = m_tmp->filePath(QStringLiteral("sweep-scenario.json"));
    if (Status s = saveTextFileAtomic(scenarioPath.toStdString(), scenarioToJson(*m_swept)); !s) {
        fail(qs(s.error().toString()));
        return;
    }
    QStringList values;
    for (double v : m_spec.values)
        values << QString::number(v, 'g', 12);
    QStringList args{QStringLiteral("sweep"),     scenarioPath,
                     QStringLiteral("--knob"),    qs(toString(m_spec.knob)),
                     QStringLiteral("--values"),  values.join(QLatin1Char(',')),
                     QStringLiteral("--backend"), QStringLiteral("cuda"),
                     QStringLiteral("--json")};
    if (m_spec.thread >= 0)
        args << QStringLiteral("--thread") << QString::number(m_spec.thread);
    // Timed as the window's GPU runs are (the toolbar's Timing choice).
    args << timingArguments(m_runner ? m_runner->timingMode() : TimingMode::Auto);

    auto* process = new QProcess(this);
    m_process = process;
    m_stderr.clear();
    m_gpuProgress.clear();
    m_gpuDone = 0;
    process->setProgram(cli);
    process->setArguments(args);
    connect(process, &QProcess::readyReadStandardError, this, [this, process] {
        if (process == m_process)
            gpuReadStderr();
    });
    connect(process, &QProcess::finished, this, [this, process](int code, QProcess::ExitStatus status) {
        if (process == m_process)
            gpuFinished(code, status);
    });
    connect(process, &QProcess::errorOccurred, this, [this, process](QProcess::ProcessError error) {
        if (process != m_process || error != QProcess::FailedToStart)
            return;
        m_process = nullptr;
        process->deleteLater();
        m_tmp.reset();
        fail(QStringLiteral("Could not start %1: %2").arg(process->program(), process->errorString()));
    });
    setMessage(QStringLiteral("GPU: starting…"));
    process->start();
}

void SweepView::gpuReadStderr()
{
    m_stderr += m_process->readAllStandardError();
    // "sweep I/N: knob = v on BACKEND" lines are the progress (run I of N has started); the rest is kept for errors.
    static const QRegularExpression progressLine(QStringLiteral("^sweep (\\d+)/(\\d+): (.*?)(?: on (.+))?$"));
    qsizetype start = 0;
    QByteArray rest;
    for (qsizetype nl = m_stderr.indexOf('\n'); nl >= 0; start = nl + 1, nl = m_stderr.indexOf('\n', start)) {
        const QByteArray line = m_stderr.mid(start, nl - start);
        const auto m = progressLine.match(QString::fromUtf8(line).trimmed());
        if (!m.hasMatch()) {
            rest += line + '\n';
            continue;
        }
        const int i = m.captured(1).toInt();
        const int n = m.captured(2).toInt();
        m_gpuDone = std::max(0, i - 1);
        m_gpuProgress = QStringLiteral("%1 (run %2 of %3)").arg(m.captured(3)).arg(i).arg(n);
        if (!m.captured(4).isEmpty())
            m_gpuProgress += QStringLiteral(" on ") + m.captured(4);
        if (n > 0 && n != m_progressBar->maximum())
            m_progressBar->setRange(0, n);
        m_progressBar->setValue(m_gpuDone);
        const QString text = QStringLiteral("GPU: ") + m_gpuProgress;
        setMessage(text + QStringLiteral(", %1 s").arg(double(m_clock.elapsed()) / 1000.0, 0, 'f', 1));
        Q_EMIT progress(m_gpuDone, n, text);
    }
    m_stderr = rest + m_stderr.mid(start);
}

void SweepView::gpuFinished(int exitCode, QProcess::ExitStatus status)
{
    QProcess* process = m_process;
    m_process = nullptr;
    m_stderr += process->readAllStandardError();
    const QByteArray out = process->readAllStandardOutput();
    const QByteArray err = m_stderr;
    m_stderr.clear();
    process->deleteLater();
    m_tmp.reset();
    if (status == QProcess::CrashExit) {
        fail(QStringLiteral("streamscope-cli crashed during the sweep. ") + cliErrorMessage(err));
        return;
    }
    // Exit code 3 with points: some values failed on the GPU (each point says why); without points: a GPU error.
    QString parseError;
    std::optional<std::vector<SweepPoint>> points;
    if (exitCode == 0 || exitCode == 3)
        points = parseSweepJson(out, &parseError);
    if (!points) {
        const QString reason = cliErrorMessage(err);
        const QString what = exitCode == 2 ? QStringLiteral("Bad input")
            : exitCode == 3                ? QStringLiteral("GPU error")
            : exitCode == 0                ? QStringLiteral("Could not read the sweep")
                                           : QStringLiteral("streamscope-cli failed (exit code %1)").arg(exitCode);
        fail(what + QStringLiteral(": ")
             + (reason.isEmpty() ? (parseError.isEmpty() ? QStringLiteral("no message") : parseError) : reason));
        return;
    }
    m_points = std::move(*points);
    setRelativeSpeedups(m_points);
    m_progressBar->setValue(m_progressBar->maximum());
    finishSweep(QStringLiteral("Ran %1 values on the GPU in %2.")
                    .arg(m_points.size())
                    .arg(formatNs(double(m_clock.nsecsElapsed()))));
}

void SweepView::stopProcess()
{
    if (!m_process)
        return;
    QProcess* p = m_process;
    m_process = nullptr;
    p->disconnect(this);
    stopChildProcess(p, std::move(m_tmp)); // the scenario file lives until the child has exited
}

} // namespace streamscope
