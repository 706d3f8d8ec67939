#include "calibrate_dialog.h"

#include "device_profile.h"
#include "run_controller.h"
#include "trace_json.h"

#include <QAction>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QDir>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFontDatabase>
#include <QLabel>
#include <QMenu>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTimer>
#include <QVBoxLayout>

namespace streamscope {

// ---- the CLI as the source ------------------------------------------------------------------------------------

CliCalibrationSource::CliCalibrationSource(QString cliPath, QObject* parent)
    : CalibrationSource(parent), m_cli(std::move(cliPath))
{}

CliCalibrationSource::~CliCalibrationSource()
{
    if (m_process) {
        m_process->disconnect(this);
        m_process->setParent(nullptr); // outlives this source until it has exited and is reaped
        stopChildProcess(m_process, nullptr);
    }
}

void CliCalibrationSource::start(const QString& outputPath)
{
    auto* p = new QProcess(this);
    m_process = p;
    connect(p, &QProcess::readyReadStandardError, this, &CliCalibrationSource::readProgress);
    connect(p, &QProcess::errorOccurred, this, [this, p](QProcess::ProcessError e) {
        if (e == QProcess::FailedToStart)
            Q_EMIT finished(false, QStringLiteral("could not start streamscope-cli: ") + p->errorString());
    });
    connect(p, &QProcess::finished, this, [this, p](int code, QProcess::ExitStatus status) {
        readProgress();
        if (!m_stderr.isEmpty())
            Q_EMIT progress(QString::fromUtf8(m_stderr).trimmed());
        m_stderr.clear();
        p->deleteLater();
        m_process = nullptr;
        if (m_cancelled)
            Q_EMIT finished(false, QStringLiteral("cancelled"));
        else if (status == QProcess::NormalExit && code == 0)
            Q_EMIT finished(true, {});
        else {
            const QString why = cliErrorMessage(m_allErr);
            Q_EMIT finished(false, why.isEmpty() ? QStringLiteral("streamscope-cli calibrate failed") : why);
        }
    });
    p->start(m_cli, {QStringLiteral("calibrate"), QStringLiteral("-o"), outputPath});
}

void CliCalibrationSource::cancel()
{
    if (!m_process)
        return;
    m_cancelled = true;
    // SIGTERM first so that the CLI can tear down its CUDA context; SIGKILL if it does not exit soon.
    m_process->terminate();
    QTimer::singleShot(1500, m_process, [p = m_process] {
        if (p && p->state() != QProcess::NotRunning)
            p->kill();
    });
}

void CliCalibrationSource::readProgress()
{
    if (!m_process)
        return;
    const QByteArray bytes = m_process->readAllStandardError();
    m_stderr += bytes;
    m_allErr += bytes;
    for (qsizetype nl = m_stderr.indexOf('\n'); nl >= 0; nl = m_stderr.indexOf('\n')) {
        const QString line = QString::fromUtf8(m_stderr.left(nl)).trimmed();
        m_stderr.remove(0, nl + 1);
        if (!line.isEmpty())
            Q_EMIT progress(line);
    }
}

// ---- the dialog ---------------------------------------------------------------------------------------------

CalibrateDialog::CalibrateDialog(CalibrationSource* source, QWidget* parent)
    : QDialog(parent), m_dir(std::make_unique<QTemporaryDir>()), m_source(source)
{
    setWindowTitle(QStringLiteral("Calibrate this GPU"));
    m_source->setParent(this);
    m_status = new QLabel(QStringLiteral("Measuring launch, copy and kernel costs on this GPU (a few seconds)…"));
    m_status->setWordWrap(true);
    m_busy = new QProgressBar;
    m_busy->setRange(0, 0);
    m_log = new QPlainTextEdit;
    m_log->setReadOnly(true);
    m_log->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    m_log->setMinimumSize(640, 320);
    auto* buttons = new QDialogButtonBox;
    m_save = buttons->addButton(QStringLiteral("&Save Profile…"), QDialogButtonBox::ActionRole);
    m_use = buttons->addButton(QStringLiteral("Save and &Use for the Simulator…"), QDialogButtonBox::AcceptRole);
    m_cancel = buttons->addButton(QDialogButtonBox::Cancel);
    m_close = buttons->addButton(QDialogButtonBox::Close);
    m_save->setEnabled(false);
    m_use->setEnabled(false);
    m_close->setVisible(false);
    m_save->setToolTip(
        QStringLiteral("Save the measured device profile (JSON; streamscope-cli --profile FILE reads it)"));
    m_use->setToolTip(QStringLiteral("Save the profile and simulate with it from now on (toolbar: Profile)"));
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(m_status);
    layout->addWidget(m_busy);
    layout->addWidget(m_log, 1);
    layout->addWidget(buttons);

    connect(m_cancel, &QPushButton::clicked, this, [this] {
        if (m_state == State::Running)
            m_source->cancel();
        else
            reject();
    });
    connect(m_close, &QPushButton::clicked, this, &QDialog::accept);
    connect(m_save, &QPushButton::clicked, this, [this] { (void)save(); });
    connect(m_use, &QPushButton::clicked, this, [this] {
        if (!save())
            return;
        Q_EMIT useProfile(m_savedPath);
        accept();
    });
    connect(m_source, &CalibrationSource::progress, this, &CalibrateDialog::onProgress);
    connect(m_source, &CalibrationSource::finished, this, &CalibrateDialog::onFinished);

    if (!m_dir->isValid()) {
        onFinished(false, QStringLiteral("could not make a temporary folder for the profile"));
        return;
    }
    m_outputPath = m_dir->filePath(QStringLiteral("calibrated.json"));
    m_source->start(m_outputPath);
}

CalibrateDialog::~CalibrateDialog()
{
    if (m_state == State::Running)
        m_source->cancel();
}

QString CalibrateDialog::log() const
{
    return m_log->toPlainText();
}

void CalibrateDialog::setState(State s)
{
    m_state = s;
    const bool running = s == State::Running;
    m_busy->setVisible(running);
    m_cancel->setVisible(running);
    m_close->setVisible(!running);
    m_save->setEnabled(s == State::Succeeded);
    m_use->setEnabled(s == State::Succeeded);
    Q_EMIT stateChanged(s);
}

void CalibrateDialog::onProgress(const QString& line)
{
    m_log->appendPlainText(line);
    static const QString prefix = QStringLiteral("calibrating device ");
    if (line.startsWith(prefix)) {
        // "calibrating device 0: NVIDIA H200 (driver ...), 5 repeats per figure"
        const qsizetype colon = line.indexOf(QLatin1String(": "));
        const qsizetype paren = line.indexOf(QLatin1String(" ("), colon);
        if (colon > 0 && paren > colon)
            m_gpuName = line.mid(colon + 2, paren - colon - 2);
        m_status->setText(QStringLiteral("Measuring launch, copy and kernel costs on %1 (a few seconds)…")
                              .arg(m_gpuName.isEmpty() ? QStringLiteral("this GPU") : m_gpuName));
    }
}

void CalibrateDialog::onFinished(bool ok, const QString& message)
{
    if (m_state != State::Running)
        return;
    if (!ok) {
        const bool cancelled = message == QLatin1String("cancelled");
        m_status->setText(cancelled ? QStringLiteral("Calibration cancelled: no profile was written.")
                                    : QStringLiteral("Calibration failed: ") + message);
        setState(cancelled ? State::Cancelled : State::Failed);
        return;
    }
    const auto profile = loadDeviceProfile(m_outputPath.toStdString());
    if (!profile) {
        m_status->setText(QStringLiteral("The calibration wrote a profile that does not load: ")
                          + QString::fromStdString(profile.error().toString()));
        setState(State::Failed);
        return;
    }
    m_gpuName = QString::fromStdString(profile->name);
    m_status->setText(
        QStringLiteral("Measured %1: launch %2 µs, kernel start latency %3 µs, H2D %4 GB/s, DRAM %5 GB/s. Save the "
                       "profile to simulate with it.")
            .arg(m_gpuName)
            .arg(double(profile->launchApiNs) / 1e3, 0, 'f', 2)
            .arg(double(profile->launchLatencyNs) / 1e3, 0, 'f', 2)
            .arg(profile->h2dPinnedBps / 1e9, 0, 'f', 1)
            .arg(profile->dramBps / 1e9, 0, 'f', 0));
    setState(State::Succeeded);
}

bool CalibrateDialog::save()
{
    if (!m_savedPath.isEmpty())
        return true;
    QString name = m_gpuName.isEmpty() ? QStringLiteral("calibrated") : m_gpuName.toLower();
    name.replace(QLatin1Char(' '), QLatin1Char('-'));
    const QString dir = QStandardPaths::writableLocation(QStandardPaths::AppDataLocation);
    const QString suggested = QDir(dir.isEmpty() ? QDir::homePath() : dir).filePath(name + QStringLiteral(".json"));
    QString path;
    if (m_chooser) {
        path = m_chooser(suggested);
    } else {
        QDir().mkpath(QFileInfo(suggested).absolutePath());
        path = QFileDialog::getSaveFileName(this, QStringLiteral("Save Device Profile"), suggested,
                                            QStringLiteral("Device profiles (*.json)"));
    }
    if (path.isEmpty())
        return false;
    if (!path.endsWith(QLatin1String(".json")))
        path += QStringLiteral(".json"); // findDeviceProfile takes a name ending in .json as a file
    QFile in(m_outputPath);
    if (!in.open(QIODevice::ReadOnly) || !saveTextFileAtomic(path.toStdString(), in.readAll().toStdString())) {
        m_status->setText(QStringLiteral("Could not save the profile to %1").arg(path));
        return false;
    }
    m_savedPath = QFileInfo(path).absoluteFilePath();
    m_status->setText(
        QStringLiteral("Saved %1 (streamscope-cli run SCENARIO --backend sim --profile %1).").arg(m_savedPath));
    m_save->setEnabled(false);
    return true;
}

// ---- the menu action ----------------------------------------------------------------------------------------

QAction* addCalibrateAction(QMenu* menu, RunController* runner, QWidget* dialogParent,
                            std::function<void(const QString& path)> useProfile)
{
    menu->setToolTipsVisible(true);
    QAction* action = menu->addAction(QStringLiteral("&Calibrate this GPU…"));
    action->setObjectName(QStringLiteral("calibrateAction"));
    auto update = [action, runner] {
        const GpuStatus& gpu = runner->gpuStatus();
        action->setEnabled(gpu.state == GpuStatus::State::Usable);
        switch (gpu.state) {
        case GpuStatus::State::Usable:
            action->setToolTip(QStringLiteral("Measure a simulator device profile on %1").arg(gpu.description));
            break;
        case GpuStatus::State::Checking:
            action->setToolTip(QStringLiteral("Needs a usable GPU: checking for one…"));
            break;
        case GpuStatus::State::Unusable:
            action->setToolTip(QStringLiteral("Needs a usable GPU: ") + gpu.description);
            break;
        case GpuStatus::State::Unknown:
            action->setToolTip(QStringLiteral("Needs a usable GPU: not checked yet (Run ▸ Check the GPU Again)"));
            break;
        }
    };
    update();
    QObject::connect(runner, &RunController::gpuStatusChanged, action, update);
    QObject::connect(action, &QAction::triggered, dialogParent, [runner, dialogParent, useProfile] {
        auto* dialog = new CalibrateDialog(new CliCalibrationSource(runner->cliPath()), dialogParent);
        dialog->setAttribute(Qt::WA_DeleteOnClose);
        QObject::connect(dialog, &CalibrateDialog::useProfile, dialogParent, useProfile);
        dialog->open();
    });
    return action;
}

void selectProfileFile(QComboBox* box, const QString& path)
{
    int i = box->findData(path);
    if (i < 0) {
        box->addItem(QFileInfo(path).fileName(), path);
        i = box->count() - 1;
        box->setItemData(i, path, Qt::ToolTipRole);
    }
    box->setCurrentIndex(i);
}

} // namespace streamscope
