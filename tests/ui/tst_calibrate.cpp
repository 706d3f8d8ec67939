// Tools ▸ Calibrate this GPU…: the menu item is off (saying why) without a usable GPU, and the dialog's flow
// (progress, save, use, cancel, failure) with a fake calibration in place of streamscope-cli.
#include "calibrate_dialog.h"
#include "device_profile.h"
#include "run_controller.h"
#include "window_fixture.h"

#include <QAction>
#include <QComboBox>
#include <QFile>
#include <QLabel>
#include <QMenu>
#include <QPushButton>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>

using namespace streamscope;

namespace {

// Writes a profile like streamscope-cli calibrate does, after a few progress lines; or fails; or waits.
class FakeCalibration : public CalibrationSource {
    Q_OBJECT
public:
    enum class Outcome { Succeed, Fail, Wait };
    explicit FakeCalibration(Outcome outcome) : m_outcome(outcome) {}
    bool cancelled = false;

    void start(const QString& outputPath) override
    {
        QTimer::singleShot(0, this, [this, outputPath] {
            Q_EMIT progress(QStringLiteral("calibrating device 0: Fake GPU (driver 1.0, CUDA 13.0 driver, 13.0 "
                                           "runtime), 5 repeats per figure"));
            Q_EMIT progress(QStringLiteral("launch cost into one stream: 3.10 µs (5 repeats, spread 100 ns)"));
            if (m_outcome == Outcome::Fail) {
                Q_EMIT finished(false, QStringLiteral("no usable GPU: no CUDA device"));
                return;
            }
            if (m_outcome == Outcome::Wait)
                return;
            DeviceProfile p;
            p.id = "calibrated";
            p.name = "Fake GPU";
            p.launchApiNs = 3100;
            p.calibration.tool = "streamscope-cli calibrate";
            p.calibration.gpu = "Fake GPU";
            p.calibration.figures.push_back({"launch_api_ns", "ns", 3100, 100, {3000, 3100, 3100, 3100, 3100}, "fake"});
            QFile f(outputPath);
            if (f.open(QIODevice::WriteOnly))
                f.write(QByteArray::fromStdString(deviceProfileToJson(p)));
            f.close();
            Q_EMIT finished(true, {});
        });
    }
    void cancel() override
    {
        cancelled = true;
        Q_EMIT finished(false, QStringLiteral("cancelled"));
    }

private:
    Outcome m_outcome;
};

} // namespace

class TestCalibrate : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void disabledWithoutGpu()
    {
        RunController runner;
        runner.setCliPath(QStringLiteral("/nonexistent/streamscope-cli"));
        QMenu menu;
        QWidget parent;
        QAction* action = addCalibrateAction(&menu, &runner, &parent, {});
        QVERIFY(!action->isEnabled());
        QVERIFY2(action->toolTip().contains(QLatin1String("not checked yet")), qPrintable(action->toolTip()));
        QVERIFY(menu.toolTipsVisible());
        runner.probeGpu();
        QVERIFY(!action->isEnabled());
        QVERIFY2(action->toolTip().contains(QLatin1String("Needs a usable GPU: streamscope-cli was not found")),
                 qPrintable(action->toolTip()));
    }

    void disabledByTheRealCliWithoutGpu()
    {
        // This build's streamscope-cli on this machine: no CUDA backend, or no GPU. Either way, off, with the reason.
        RunController runner;
        runner.setCliPath(QStringLiteral(STREAMSCOPE_CLI));
        QMenu menu;
        QWidget parent;
        QAction* action = addCalibrateAction(&menu, &runner, &parent, {});
        QSignalSpy changed(&runner, &RunController::gpuStatusChanged);
        runner.probeGpu();
        QTRY_VERIFY_WITH_TIMEOUT(runner.gpuStatus().state != GpuStatus::State::Checking, 20000);
        if (runner.gpuStatus().state == GpuStatus::State::Usable)
            QSKIP("this machine has a usable GPU");
        QVERIFY(!action->isEnabled());
        QVERIFY2(action->toolTip().startsWith(QLatin1String("Needs a usable GPU: ")), qPrintable(action->toolTip()));
        QVERIFY(action->toolTip().contains(runner.gpuStatus().description));
    }

    void mainWindowHasTheItem()
    {
        auto w = testing::makeTestWindow(QSize(1200, 800));
        auto* action = w->findChild<QAction*>(QStringLiteral("calibrateAction"));
        QVERIFY(action);
        QVERIFY(!action->isEnabled()); // the test window does not look for a GPU
        QVERIFY(action->text().contains(QLatin1String("Calibrate this GPU")));
    }

    void succeedsThenSavesAndUses()
    {
        auto* fake = new FakeCalibration(FakeCalibration::Outcome::Succeed);
        CalibrateDialog dialog(fake);
        QCOMPARE(dialog.state(), CalibrateDialog::State::Running);
        QVERIFY(!dialog.saveButton()->isEnabled());
        QVERIFY(!dialog.useButton()->isEnabled());
        QTRY_COMPARE(dialog.state(), CalibrateDialog::State::Succeeded);
        QVERIFY(dialog.log().contains(QStringLiteral("launch cost into one stream: 3.10 µs")));
        QVERIFY(dialog.saveButton()->isEnabled());
        QVERIFY(dialog.useButton()->isEnabled());

        QTemporaryDir dir;
        QString suggested;
        dialog.setSavePathChooser([&](const QString& s) {
            suggested = s;
            return dir.filePath(QStringLiteral("mine")); // .json is added
        });
        QSignalSpy used(&dialog, &CalibrateDialog::useProfile);
        dialog.useButton()->click();
        QVERIFY(suggested.endsWith(QLatin1String("fake-gpu.json")));
        QCOMPARE(used.count(), 1);
        const QString path = used.at(0).at(0).toString();
        QCOMPARE(path, dir.filePath(QStringLiteral("mine.json")));
        const auto loaded = findDeviceProfile(path.toStdString());
        QVERIFY2(loaded.ok(), loaded.ok() ? "" : loaded.error().toString().c_str());
        QCOMPARE(QString::fromStdString(loaded->calibration.gpu), QStringLiteral("Fake GPU"));
        QCOMPARE(loaded->launchApiNs, int64_t(3100));

        QComboBox box;
        box.addItem(QStringLiteral("h200"), QStringLiteral("h200"));
        selectProfileFile(&box, path);
        QCOMPARE(box.currentData().toString(), path);
        QCOMPARE(box.currentText(), QStringLiteral("mine.json"));
        selectProfileFile(&box, path);
        QCOMPARE(box.count(), 2);
    }

    void cancel()
    {
        auto* fake = new FakeCalibration(FakeCalibration::Outcome::Wait);
        CalibrateDialog dialog(fake);
        QTRY_VERIFY(dialog.log().contains(QLatin1String("Fake GPU")));
        QVERIFY(dialog.cancelButton()->isVisible() || !dialog.isVisible());
        dialog.cancelButton()->click();
        QVERIFY(fake->cancelled);
        QCOMPARE(dialog.state(), CalibrateDialog::State::Cancelled);
        QVERIFY(!dialog.saveButton()->isEnabled());
        QVERIFY(!dialog.useButton()->isEnabled());
    }

    void failure()
    {
        CalibrateDialog dialog(new FakeCalibration(FakeCalibration::Outcome::Fail));
        QTRY_COMPARE(dialog.state(), CalibrateDialog::State::Failed);
        QVERIFY(!dialog.saveButton()->isEnabled());
        QVERIFY(dialog.findChildren<QLabel*>().size() > 0);
        bool said = false;
        for (auto* l : dialog.findChildren<QLabel*>())
            said = said || l->text().contains(QLatin1String("no usable GPU: no CUDA device"));
        QVERIFY(said);
    }
};

QTEST_MAIN(TestCalibrate)
#include "tst_calibrate.moc"
