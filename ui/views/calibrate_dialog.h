// Tools ▸ Calibrate this GPU…: measures a simulator device profile on this machine's GPU by running
// `streamscope-cli calibrate -o FILE` as a child process, as GPU runs do (a GPU fault cannot take the window down,
// and Cancel is a clean kill). The dialog shows the progress lines as they come, then offers to save the profile
// and to use it for the simulator. The calibration itself comes from a CalibrationSource, so that tests can fake it.
#pragma once

#include <QDialog>
#include <QObject>
#include <QPointer>
#include <QProcess>
#include <QString>

#include <functional>
#include <memory>

class QComboBox;
class QLabel;
class QMenu;
class QAction;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;
class QTemporaryDir;

namespace streamscope {

class RunController;

// Where a calibration comes from: start() writes a device profile to `outputPath`, telling its progress lines on
// the way; finished() says whether it succeeded (else why not). cancel() stops it; finished(false, ...) follows.
class CalibrationSource : public QObject {
    Q_OBJECT
public:
    using QObject::QObject;
    virtual void start(const QString& outputPath) = 0;
    virtual void cancel() = 0;

Q_SIGNALS:
    void progress(const QString& line);
    void finished(bool ok, const QString& message);
};

// streamscope-cli calibrate in a child process; its stderr lines are the progress.
class CliCalibrationSource : public CalibrationSource {
    Q_OBJECT
public:
    explicit CliCalibrationSource(QString cliPath, QObject* parent = nullptr);
    ~CliCalibrationSource() override;
    void start(const QString& outputPath) override;
    void cancel() override;

private:
    void readProgress();
    QString m_cli;
    QPointer<QProcess> m_process;
    QByteArray m_stderr; // not yet a whole line
    QByteArray m_allErr; // for the error message
    bool m_cancelled = false;
};

class CalibrateDialog : public QDialog {
    Q_OBJECT
public:
    enum class State { Running, Succeeded, Failed, Cancelled };

    // Takes ownership of `source` and starts it.
    explicit CalibrateDialog(CalibrationSource* source, QWidget* parent = nullptr);
    ~CalibrateDialog() override;

    State state() const { return m_state; }
    QString log() const;
    QString savedPath() const { return m_savedPath; }
    // Asks where to save the profile (a file dialog unless set; tests set it). Empty: the user declined.
    void setSavePathChooser(std::function<QString(const QString& suggested)> chooser)
    {
        m_chooser = std::move(chooser);
    }

    QPushButton* saveButton() const { return m_save; }
    QPushButton* useButton() const { return m_use; }
    QPushButton* cancelButton() const { return m_cancel; }

Q_SIGNALS:
    // The user chose to simulate with the saved profile at `path`.
    void useProfile(const QString& path);
    void stateChanged(State state);

private:
    void onProgress(const QString& line);
    void onFinished(bool ok, const QString& message);
    bool save();
    void setState(State s);

    std::unique_ptr<QTemporaryDir> m_dir;
    QString m_outputPath;
    QString m_gpuName;
    QString m_savedPath;
    CalibrationSource* m_source = nullptr;
    std::function<QString(const QString&)> m_chooser;
    State m_state = State::Running;
    QLabel* m_status = nullptr;
    QProgressBar* m_busy = nullptr;
    QPlainTextEdit* m_log = nullptr;
    QPushButton* m_cancel = nullptr;
    QPushButton* m_save = nullptr;
    QPushButton* m_use = nullptr;
    QPushButton* m_close = nullptr;
};

// Adds "Calibrate this GPU…" to `menu`: enabled while `runner` finds a usable GPU, else disabled with a tooltip
// saying why. Triggered, it opens a CalibrateDialog on streamscope-cli; `useProfile` gets the saved profile's path.
QAction* addCalibrateAction(QMenu* menu, RunController* runner, QWidget* dialogParent,
                            std::function<void(const QString& path)> useProfile);
// Selects the profile file `path` in a profile box (data: profile id or path), adding it where it is missing.
void selectProfileFile(QComboBox* box, const QString& path);

} // namespace streamscope
