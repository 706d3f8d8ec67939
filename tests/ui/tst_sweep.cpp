// The sweep view: a simulator sweep of a lesson gives the points the lesson predicts, in the plot and the table;
// Cancel stops it; bad values say what is wrong; GPU sweeps go through streamscope-cli (a stand-in script here, fed
// the JSON the real CLI prints) with progress from its stderr, points from its stdout and its errors shown; and the
// main window opens the view from the Analysis menu, where it follows the scenario in the editor.
//
// STREAMSCOPE_SWEEP_SCREENSHOTS=DIR saves pictures of the view and the window there.
#include "document_loader.h"
#include "main_window.h"
#include "run_controller.h"
#include "scenario_json.h"
#include "scenario_model.h"
#include "sweep_view.h"

#include "analysis.h"
#include "whatif.h"

#include <QAction>
#include <QComboBox>
#include <QDir>
#include <QDockWidget>
#include <QFile>
#include <QFileInfo>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QProcess>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QUndoStack>

#include <memory>

using namespace streamscope;

namespace {

// A lesson, validated, as the editor hands it over.
std::shared_ptr<const Scenario> lesson(const QString& id)
{
    auto doc = loadDocument(id);
    if (!doc)
        return nullptr;
    auto valid = validateScenario(std::move(doc->scenario));
    if (!valid)
        return nullptr;
    return std::make_shared<const Scenario>(std::move(valid->scenario));
}

// A stand-in for streamscope-cli: a shell script. Asked about the GPU, it says "Fake GPU" is usable.
QString writeScript(const QTemporaryDir& dir, const QString& name, const QString& sweepBody)
{
    const QString path = dir.filePath(name);
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly))
        return {};
    f.write("#!/bin/sh\n"
            "case \"$1\" in\n"
            "--version) echo 'streamscope-cli 0.0 (CUDA backend built)'; exit 0 ;;\n"
            "run) echo '  device 0: Fake GPU'; exit 0 ;;\n"
            "esac\n");
    f.write(sweepBody.toUtf8());
    f.close();
    f.setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner);
    return path;
}

QString writeFile(const QTemporaryDir& dir, const QString& name, const QByteArray& text)
{
    const QString path = dir.filePath(name);
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly))
        return {};
    f.write(text);
    return path;
}

QByteArray readFile(const QString& path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

// What the real streamscope-cli prints for `sweep ARGS --json`.
QByteArray realSweepJson(const QStringList& args)
{
    QProcess p;
    p.start(QStringLiteral(STREAMSCOPE_CLI),
            QStringList{QStringLiteral("sweep")} + args + QStringList{QStringLiteral("--json")});
    if (!p.waitForFinished(60000))
        return {};
    return p.readAllStandardOutput();
}

bool hasGraphPoint(const QCPGraph* g, double key, double value)
{
    for (auto it = g->data()->constBegin(); it != g->data()->constEnd(); ++it)
        if (qFuzzyCompare(it->key, key) && std::fabs(it->value - value) <= 1e-9 * std::max(1.0, std::fabs(value)))
            return true;
    return false;
}

// With STREAMSCOPE_SWEEP_SCREENSHOTS set: a picture of the widget, at `size` when given.
void saveShot(QWidget* widget, const QString& name, QSize size = {})
{
    const QString dir = qEnvironmentVariable("STREAMSCOPE_SWEEP_SCREENSHOTS");
    if (dir.isEmpty())
        return;
    QDir().mkpath(dir);
    if (size.isValid())
        widget->resize(size);
    QCoreApplication::processEvents();
    if (auto* view = qobject_cast<SweepView*>(widget))
        view->plot()->replot(QCustomPlot::rpImmediateRefresh);
    widget->grab().save(QDir(dir).filePath(name));
}

// The GPU is usable as far as the view can tell: the runner's probe asked the stand-in.
bool probe(RunController& runner)
{
    runner.probeGpu();
    return QTest::qWaitFor([&] { return runner.gpuStatus().state == GpuStatus::State::Usable; }, 10000);
}

} // namespace

class TestSweep : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        if (qEnvironmentVariableIsEmpty("STREAMSCOPE_RESOURCES"))
            qputenv("STREAMSCOPE_RESOURCES", QByteArrayLiteral(STREAMSCOPE_SOURCE_DIR "/resources"));
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName(QStringLiteral("StreamScopeTest"));
        QCoreApplication::setApplicationName(QStringLiteral("tst_sweep"));
        QSettings().clear();
    }

    void parseValues_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<int>("knob");
        QTest::addColumn<QList<double>>("values");
        QTest::addColumn<QString>("error");
        const int streams = int(SweepKnob::Streams), chunks = int(SweepKnob::Chunks), size = int(SweepKnob::KernelSize);
        QTest::newRow("list") << "1,2,4" << streams << QList<double>{1, 2, 4} << QString();
        QTest::newRow("spaces and semicolons") << " 1 2; 4 " << streams << QList<double>{1, 2, 4} << QString();
        QTest::newRow("range") << "1..4, 8" << streams << QList<double>{1, 2, 3, 4, 8} << QString();
        QTest::newRow("duplicates once") << "2, 1, 2" << chunks << QList<double>{2, 1} << QString();
        QTest::newRow("factors") << "0.25, 0.5x, 2×" << size << QList<double>{0.25, 0.5, 2} << QString();
        QTest::newRow("zero") << "0" << streams << QList<double>{} << "greater than 0; 0 is not";
        QTest::newRow("negative") << "1, -2" << size << QList<double>{} << "greater than 0; -2 is not";
        QTest::newRow("not a number") << "abc" << streams << QList<double>{} << "“abc” is not a number";
        QTest::newRow("empty") << "  " << streams << QList<double>{} << "No values to sweep";
        QTest::newRow("fractional streams") << "1.5" << streams << QList<double>{} << "streams must be a whole";
        QTest::newRow("fractional chunks") << "2, 2.5" << chunks << QList<double>{} << "chunks must be a whole";
        QTest::newRow("too many streams") << "5000" << streams << QList<double>{} << "At most 4096 streams";
        QTest::newRow("huge range") << "1..5000" << streams << QList<double>{} << "At most 256 values";
        QTest::newRow("backwards range") << "4..1" << streams << QList<double>{} << "“4..1” is not a range";
    }

    void parseValues()
    {
        QFETCH(QString, text);
        QFETCH(int, knob);
        QFETCH(QList<double>, values);
        QFETCH(QString, error);
        const SweepValues parsed = SweepView::parseValues(text, SweepKnob(knob));
        if (error.isEmpty()) {
            QVERIFY2(parsed.ok(), qPrintable(parsed.error));
            QCOMPARE(QList<double>(parsed.values.begin(), parsed.values.end()), values);
        } else {
            QVERIFY(!parsed.ok());
            QVERIFY2(parsed.error.contains(error), qPrintable(parsed.error));
        }
    }

    // The defaults shown in the field read back as the core's defaults.
    void defaultValuesRoundTrip()
    {
        QCOMPARE(SweepView::formatValues(defaultSweepValues(SweepKnob::Streams)), QStringLiteral("1..16"));
        for (SweepKnob k : {SweepKnob::Streams, SweepKnob::Chunks, SweepKnob::KernelSize}) {
            const SweepValues parsed = SweepView::parseValues(SweepView::formatValues(defaultSweepValues(k)), k);
            QVERIFY2(parsed.ok(), qPrintable(parsed.error));
            QCOMPARE(parsed.values, defaultSweepValues(k));
        }
        SweepView view;
        QVERIFY(view.knob() == SweepKnob::Streams);
        QCOMPARE(view.valuesText(), QStringLiteral("1..16"));
        view.setKnob(SweepKnob::KernelSize);
        QCOMPARE(view.valuesText(), QStringLiteral("0.25, 0.5, 1, 2, 4"));
        view.setValuesText(QStringLiteral("0.5, 1"));
        view.setKnob(SweepKnob::Streams);
        QCOMPARE(view.valuesText(), QStringLiteral("1..16"));
        view.setKnob(SweepKnob::KernelSize); // each knob keeps the values last used with it
        QCOMPARE(view.valuesText(), QStringLiteral("0.5, 1"));
    }

    void simulatorSweepOfALesson_data()
    {
        QTest::addColumn<QString>("lessonId");
        QTest::newRow("01 two streams") << QStringLiteral("01");
        QTest::newRow("10 many small kernels") << QStringLiteral("10");
    }

    // More streams let the lesson's kernels overlap: 1, 2, 4 streams each finish sooner.
    void simulatorSweepOfALesson()
    {
        QFETCH(QString, lessonId);
        const auto scenario = lesson(lessonId);
        QVERIFY(scenario);
        SweepView view;
        RunController runner;
        view.setRunController(&runner);
        view.setScenario(scenario);
        view.setKnob(SweepKnob::Streams);
        view.setValuesText(QStringLiteral("1, 2, 4"));
        QSignalSpy finished(&view, &SweepView::finished);
        QSignalSpy progress(&view, &SweepView::progress);
        QSignalSpy running(&view, &SweepView::runningChanged);
        view.run();
        QVERIFY(view.isRunning());
        QVERIFY(finished.wait(30000));
        QCOMPARE(view.state(), SweepView::State::Finished);
        QCOMPARE(view.sweptBackend(), RunBackend::Simulator);
        QCOMPARE(running.count(), 2);

        const auto& points = view.points();
        QCOMPARE(points.size(), size_t(3));
        QCOMPARE(points[0].value, 1.0);
        QCOMPARE(points[1].value, 2.0);
        QCOMPARE(points[2].value, 4.0);
        for (const auto& p : points)
            QVERIFY2(p.error.empty(), p.error.c_str());
        QVERIFY(points[0].makespanNs > points[1].makespanNs);
        QVERIFY(points[1].makespanNs > points[2].makespanNs);
        QCOMPARE(points[0].relativeSpeedup, 1.0);
        QVERIFY(points[1].relativeSpeedup > 1.5);
        QVERIFY(points[2].relativeSpeedup > points[1].relativeSpeedup);
        QVERIFY(points[2].speedup > points[1].speedup && points[1].speedup > points[0].speedup);
        QCOMPARE(points[2].maxConcurrency, 4);

        // The same numbers as the core's sweep (the simulator is deterministic).
        SweepSpec spec;
        spec.knob = SweepKnob::Streams;
        spec.values = {1, 2, 4};
        const auto core = runSweep(*scenario, spec);
        for (size_t i = 0; i < 3; ++i) {
            QCOMPARE(points[i].makespanNs, core[i].makespanNs);
            QCOMPARE(points[i].relativeSpeedup, core[i].relativeSpeedup);
        }

        // Progress: one step per value.
        QCOMPARE(progress.count(), 3);
        QCOMPARE(progress.last().at(0).toInt(), 3);
        QCOMPARE(progress.last().at(1).toInt(), 3);

        // The plot: makespan on the left axis (in its unit), both speedups on the right, a point per value.
        const QCPGraph* makespan = view.makespanGraph();
        QCOMPARE(makespan->dataCount(), 3);
        QCOMPARE(makespan->valueAxis(), view.plot()->yAxis);
        QCOMPARE(view.relativeSpeedupGraph()->valueAxis(), view.plot()->yAxis2);
        QCOMPARE(view.speedupGraph()->valueAxis(), view.plot()->yAxis2);
        const QString label = view.plot()->yAxis->label();
        const double unit = label.contains(QStringLiteral("(ms)")) ? 1e6
            : label.contains(QStringLiteral("(µs)"))               ? 1e3
                                                                   : 1e9;
        for (const auto& p : points) {
            QVERIFY(hasGraphPoint(makespan, p.value, double(p.makespanNs) / unit));
            QVERIFY(hasGraphPoint(view.relativeSpeedupGraph(), p.value, p.relativeSpeedup));
            QVERIFY(hasGraphPoint(view.speedupGraph(), p.value, p.speedup));
        }
        QVERIFY(makespan->scatterStyle().shape() != QCPScatterStyle::ssNone);
        QVERIFY(view.plot()->legend->visible());
        QVERIFY(view.plot()->legend->hasItemWithPlottable(makespan));
        QVERIFY(view.plot()->legend->hasItemWithPlottable(view.relativeSpeedupGraph()));
        QVERIFY(view.plot()->legend->hasItemWithPlottable(view.speedupGraph()));
        QCOMPARE(view.failedGraph()->dataCount(), 0);
        QVERIFY(!view.plot()->legend->hasItemWithPlottable(view.failedGraph()));
        QVERIFY(view.plot()->xAxis->label().contains(QStringLiteral("streams")));
        // The axes hold every point.
        for (const auto& p : points) {
            QVERIFY(view.plot()->xAxis->range().contains(p.value));
            QVERIFY(view.plot()->yAxis->range().contains(double(p.makespanNs) / unit));
            QVERIFY(view.plot()->yAxis2->range().contains(p.relativeSpeedup));
        }

        // The table: a row per value, in order; the fastest marked.
        QTableWidget* table = view.table();
        QCOMPARE(table->rowCount(), 3);
        QCOMPARE(table->item(0, 0)->text(), QStringLiteral("1"));
        QCOMPARE(table->item(2, 0)->text(), QStringLiteral("4"));
        QVERIFY(table->item(2, 5)->text().contains(QStringLiteral("fastest")));
        QVERIFY2(view.message().contains(QStringLiteral("Fastest: streams = 4")), qPrintable(view.message()));

        // The rewritten scenario of a point: four streams.
        auto four = view.scenarioForPoint(2);
        QVERIFY(four);
        QCOMPARE(four->streams.size(), size_t(4));
    }

    void cancelStopsASweep()
    {
        SweepView view;
        view.setScenario(lesson(QStringLiteral("10")));
        view.setValuesText(QStringLiteral("1..16"));
        QSignalSpy finished(&view, &SweepView::finished);
        QSignalSpy cancelled(&view, &SweepView::cancelled);
        view.run();
        QVERIFY(view.isRunning());
        QVERIFY(view.cancelButton()->isEnabled());
        QVERIFY(!view.runButton()->isEnabled());
        view.cancel();
        QCOMPARE(cancelled.count(), 1);
        QCOMPARE(view.state(), SweepView::State::Cancelled);
        QVERIFY(!view.isRunning());
        QVERIFY(view.runButton()->isEnabled());
        QVERIFY(view.message().contains(QStringLiteral("cancelled")));
        // Whatever the worker still sends is dropped.
        QTest::qWait(300);
        QCOMPARE(finished.count(), 0);
        QVERIFY(view.points().size() < 16);

        // The view sweeps again afterwards.
        view.run();
        QVERIFY(finished.wait(30000));
        QCOMPARE(view.points().size(), size_t(16));
    }

    void badValuesSayWhatIsWrong_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("message");
        QTest::newRow("zero") << "0"
                              << "greater than 0";
        QTest::newRow("letters") << "abc"
                                 << "“abc” is not a number";
        QTest::newRow("one bad among good") << "1, 2, x4"
                                            << "“x4” is not a number";
    }

    void badValuesSayWhatIsWrong()
    {
        QFETCH(QString, text);
        QFETCH(QString, message);
        SweepView view;
        view.setScenario(lesson(QStringLiteral("01")));
        view.setValuesText(text);
        QSignalSpy started(&view, &SweepView::started);
        QSignalSpy failed(&view, &SweepView::failed);
        view.run();
        QCOMPARE(failed.count(), 1);
        QCOMPARE(started.count(), 0);
        QCOMPARE(view.state(), SweepView::State::Failed);
        QVERIFY2(failed.first().at(0).toString().contains(message), qPrintable(failed.first().at(0).toString()));
        QVERIFY2(view.message().contains(message), qPrintable(view.message()));
        QVERIFY(!view.isRunning());
    }

    void scenarioWithAnErrorIsNotSwept()
    {
        SweepView view;
        view.setScenario(nullptr);
        QSignalSpy failed(&view, &SweepView::failed);
        view.run();
        QCOMPARE(failed.count(), 1);
        QVERIFY2(view.message().contains(QStringLiteral("fix it in the editor")), qPrintable(view.message()));
    }

    // A value the core cannot rewrite fails on its own, with the reason in its row.
    void errorsArePerPoint()
    {
        Scenario s;
        s.id = "legacy-only";
        s.devices.push_back(DeviceSpec{0, {}});
        s.streams.push_back(StreamSpec{"legacy", 0, StreamKind::LegacyDefault, 0});
        ThreadSpec t;
        t.name = "main";
        Op k;
        k.kind = OpKind::Kernel;
        k.kernel = KernelKind::Spin;
        k.durationUs = 100;
        k.stream = "legacy";
        t.ops.push_back(k);
        s.threads.push_back(t);
        auto valid = validateScenario(s);
        QVERIFY2(valid, valid.error().toString().c_str());
        SweepView view;
        view.setScenario(std::make_shared<const Scenario>(valid->scenario));
        view.setValuesText(QStringLiteral("1, 2"));
        QSignalSpy finished(&view, &SweepView::finished);
        view.run();
        QVERIFY(finished.wait(30000));
        QCOMPARE(view.points().size(), size_t(2));
        QVERIFY(!view.points()[0].error.empty());
        QCOMPARE(view.makespanGraph()->dataCount(), 0);
        QCOMPARE(view.failedGraph()->dataCount(), 2);
        QVERIFY(view.plot()->legend->hasItemWithPlottable(view.failedGraph()));
        QCOMPARE(view.table()->rowCount(), 2);
        QCOMPARE(view.table()->item(0, 1)->text(), QStringLiteral("failed"));
        QVERIFY2(view.table()->item(0, 5)->text().contains(QStringLiteral("no blocking or non-blocking stream")),
                 qPrintable(view.table()->item(0, 5)->text()));
        QVERIFY2(view.message().contains(QStringLiteral("2 of 2 values failed")), qPrintable(view.message()));
    }

    // On the GPU the view runs `streamscope-cli sweep FILE --backend cuda --json --timing M`: progress from stderr,
    // the points from stdout.
    void gpuSweepThroughTheCli()
    {
        QTemporaryDir dir;
        const QByteArray json =
            realSweepJson({QStringLiteral("01"), QStringLiteral("--knob"), QStringLiteral("streams"),
                           QStringLiteral("--values"), QStringLiteral("1,2")});
        QVERIFY(json.contains("\"points\""));
        const QString canned = writeFile(dir, QStringLiteral("sweep.json"), json);
        const QString args = dir.filePath(QStringLiteral("args"));
        const QString scenarioCopy = dir.filePath(QStringLiteral("scenario.json"));
        const QString cli = writeScript(dir, QStringLiteral("cli"),
                                        QStringLiteral("echo \"$@\" > '%1'\ncp \"$2\" '%2'\n"
                                                       "echo 'sweep 1/2: streams = 1 on cuda (Fake GPU)' >&2\n"
                                                       "echo 'sweep 2/2: streams = 2 on cuda (Fake GPU)' >&2\n"
                                                       "cat '%3'\n")
                                            .arg(args, scenarioCopy, canned));
        RunController runner;
        runner.setCliPath(cli);
        SweepView view;
        view.setRunController(&runner);
        QVERIFY(!view.setBackend(RunBackend::Gpu)); // not before the GPU is known to be usable
        QVERIFY(probe(runner));
        QVERIFY(view.backendBox()->currentText() == QStringLiteral("Simulator"));
        QVERIFY(view.backendBox()->itemText(1).contains(QStringLiteral("Fake GPU")));
        QVERIFY(view.setBackend(RunBackend::Gpu));
        const auto scenario = lesson(QStringLiteral("01"));
        view.setScenario(scenario);
        view.setValuesText(QStringLiteral("1, 2"));
        // Timed as the window's GPU runs are: the run controller's choice.
        runner.setTimingMode(TimingMode::Events);
        QSignalSpy finished(&view, &SweepView::finished);
        QSignalSpy progress(&view, &SweepView::progress);
        view.run();
        QVERIFY(finished.wait(20000));
        QCOMPARE(view.sweptBackend(), RunBackend::Gpu);

        const QString called = QString::fromUtf8(readFile(args)).trimmed();
        QVERIFY2(called.startsWith(QStringLiteral("sweep ")), qPrintable(called));
        QVERIFY2(called.endsWith(QStringLiteral("--knob streams --values 1,2 --backend cuda --json --timing events")),
                 qPrintable(called));
        // The scenario file it got is the editor's scenario.
        auto written = parseScenario(readFile(scenarioCopy).toStdString(), "scenario.json");
        QVERIFY2(written, written.error().toString().c_str());
        QCOMPARE(written->scenario.streams.size(), scenario->streams.size());
        QCOMPARE(written->scenario.threads.size(), scenario->threads.size());

        QCOMPARE(progress.count(), 2);
        QCOMPARE(progress.at(0).at(0).toInt(), 0);
        QCOMPARE(progress.at(1).at(0).toInt(), 1);
        QCOMPARE(progress.at(1).at(1).toInt(), 2);
        QVERIFY2(progress.at(1).at(2).toString().contains(QStringLiteral("streams = 2")),
                 qPrintable(progress.at(1).at(2).toString()));

        QString error;
        const auto expected = SweepView::parseSweepJson(json, &error);
        QVERIFY2(expected, qPrintable(error));
        QCOMPARE(view.points().size(), size_t(2));
        for (size_t i = 0; i < 2; ++i) {
            QCOMPARE(view.points()[i].value, (*expected)[i].value);
            QCOMPARE(view.points()[i].makespanNs, (*expected)[i].makespanNs);
            QCOMPARE(view.points()[i].speedup, (*expected)[i].speedup);
            QVERIFY(view.points()[i].makespanNs > 0);
        }
        QCOMPARE(view.makespanGraph()->dataCount(), 2);
        QCOMPARE(view.table()->rowCount(), 2);
        QVERIFY2(view.message().contains(QStringLiteral("on the GPU")), qPrintable(view.message()));
        saveShot(&view, QStringLiteral("sweep-gpu.png"), QSize(1400, 420));
    }

    void gpuErrorsAreShown_data()
    {
        QTest::addColumn<QString>("body");
        QTest::addColumn<bool>("finishes");
        QTest::addColumn<QString>("message");
        QTest::newRow("no GPU (exit 3)")
            << "echo 'error: no usable GPU: CUDA driver version is insufficient' >&2\nexit 3\n"
            << false << "GPU error: no usable GPU: CUDA driver version is insufficient";
        QTest::newRow("bad input (exit 2)")
            << "echo 'error: s.json: /threads/0/ops/1/stream: no stream \"x\"' >&2\nexit 2\n"
            << false << "Bad input: s.json: /threads/0/ops/1/stream: no stream";
        QTest::newRow("not JSON") << "echo 'hello'\nexit 0\n" << false << "Could not read the sweep";
        QTest::newRow("crash") << "kill -SEGV $$\n" << false << "crashed";
        QTest::newRow("some values failed (exit 3)")
            << "echo 'sweep 1/2: streams = 1 on cuda' >&2\necho 'sweep 2/2: streams = 2 on cuda' >&2\n"
               "echo '{\"knob\": \"streams\", \"points\": [{\"value\": 1.0, \"makespan_ns\": 2000000, \"speedup\": 1.0,"
               " \"relative_speedup\": 1.0, \"max_concurrency\": 1, \"gpu_work_ns\": 2000000},"
               " {\"value\": 2.0, \"error\": \"CUDA error: out of memory\"}]}'\nexit 3\n"
            << true << "1 of 2 values failed";
    }

    void gpuErrorsAreShown()
    {
        QFETCH(QString, body);
        QFETCH(bool, finishes);
        QFETCH(QString, message);
        QTemporaryDir dir;
        RunController runner;
        runner.setCliPath(writeScript(dir, QStringLiteral("cli"), body));
        QVERIFY(probe(runner));
        SweepView view;
        view.setRunController(&runner);
        QVERIFY(view.setBackend(RunBackend::Gpu));
        view.setScenario(lesson(QStringLiteral("01")));
        view.setValuesText(QStringLiteral("1, 2"));
        QSignalSpy finished(&view, &SweepView::finished);
        QSignalSpy failed(&view, &SweepView::failed);
        view.run();
        QVERIFY(QTest::qWaitFor([&] { return !view.isRunning(); }, 20000));
        QCOMPARE(finished.count(), finishes ? 1 : 0);
        QCOMPARE(failed.count(), finishes ? 0 : 1);
        QVERIFY2(view.message().contains(message), qPrintable(view.message()));
        if (finishes) {
            QCOMPARE(view.points().size(), size_t(2));
            QCOMPARE(view.makespanGraph()->dataCount(), 1);
            QVERIFY(view.table()->item(1, 5)->text().contains(QStringLiteral("out of memory")));
            saveShot(&view, QStringLiteral("sweep-gpu-partial.png"), QSize(1400, 420));
        } else if (QByteArray(QTest::currentDataTag()).startsWith("no GPU")) {
            saveShot(&view, QStringLiteral("sweep-gpu-error.png"), QSize(1400, 420));
        }
    }

    void gpuCancelKillsTheChild()
    {
        QTemporaryDir dir;
        const QString pidFile = dir.filePath(QStringLiteral("pid"));
        RunController runner;
        runner.setCliPath(
            writeScript(dir, QStringLiteral("cli"), QStringLiteral("echo $$ > '%1'\nexec sleep 60\n").arg(pidFile)));
        QVERIFY(probe(runner));
        SweepView view;
        view.setRunController(&runner);
        QVERIFY(view.setBackend(RunBackend::Gpu));
        view.setScenario(lesson(QStringLiteral("01")));
        QSignalSpy cancelled(&view, &SweepView::cancelled);
        QSignalSpy finished(&view, &SweepView::finished);
        view.run();
        QTRY_VERIFY_WITH_TIMEOUT(QFileInfo(pidFile).size() > 0, 10000);
        QVERIFY(view.isRunning());
        view.cancel();
        QCOMPARE(cancelled.count(), 1);
        QVERIFY(!view.isRunning());
        const QString pid = QString::fromUtf8(readFile(pidFile)).trimmed();
        QVERIFY(!pid.isEmpty());
        // Killed and reaped.
        QTRY_VERIFY_WITH_TIMEOUT(!QFileInfo::exists(QStringLiteral("/proc/") + pid), 5000);
        QCOMPARE(finished.count(), 0);
    }

    // Analysis > Sweep… shows the view in a dock; it sweeps the scenario in the editor and follows its edits, and a
    // double-clicked point is simulated onto the timeline while the editor keeps the scenario.
    void mainWindowSweep()
    {
        MainWindow w;
        w.setGpuProbeEnabled(false);
        w.setUnsavedPrompt([] { return MainWindow::UnsavedChoice::Discard; });
        w.resize(1600, 1000);
        w.show();
        QSignalSpy shown(&w, &MainWindow::traceShown);
        QVERIFY(w.openPath(QStringLiteral("01")));
        QVERIFY(shown.wait(10000));

        auto* view = w.findChild<SweepView*>();
        QVERIFY(view);
        auto* dock = w.findChild<QDockWidget*>(QStringLiteral("sweepDock"));
        QVERIFY(dock);
        QVERIFY(!dock->isVisible());
        QAction* action = w.findChild<QAction*>(QStringLiteral("sweep"));
        QVERIFY(action);
        QVERIFY(!action->shortcut().isEmpty());
        QCOMPARE(view->scenario(), w.scenarioModel()->validatedScenario());
        view->setQuickSweepLimitMs(1e12); // however slow this machine, edits re-run the sweep

        // Shown: it sweeps by itself, on the simulator, with the knob's default values.
        QSignalSpy finished(view, &SweepView::finished);
        action->trigger();
        QVERIFY(dock->isVisible());
        QVERIFY(finished.wait(30000));
        QCOMPARE(view->points().size(), size_t(16));
        QCOMPARE(view->makespanGraph()->dataCount(), 16);
        const int64_t twoStreamsBefore = view->points()[1].makespanNs;

        // An edit of the scenario sweeps again: twice the work per kernel takes longer with two streams too.
        Scenario bigger = w.scenarioModel()->scenario();
        for (auto& op : bigger.threads[0].ops)
            op.size *= 2;
        w.scenarioModel()->applyScenario(bigger, QStringLiteral("bigger kernels"));
        QCOMPARE(view->scenario(), w.scenarioModel()->validatedScenario());
        QVERIFY(finished.wait(30000));
        QCOMPARE(view->points().size(), size_t(16));
        QVERIFY(view->points()[1].makespanNs > twoStreamsBefore);

        saveShot(&w, QStringLiteral("sweep-window.png"));

        // Double-clicking the row of 4 streams shows that scenario's timeline: four streams.
        QTableWidget* table = view->table();
        QCOMPARE(table->item(3, 0)->text(), QStringLiteral("4"));
        table->scrollToItem(table->item(3, 0));
        const QPoint at = table->visualItemRect(table->item(3, 0)).center();
        QSignalSpy activated(view, &SweepView::pointActivated);
        QTest::mouseClick(table->viewport(), Qt::LeftButton, {}, at);
        QTest::mouseDClick(table->viewport(), Qt::LeftButton, {}, at);
        QCOMPARE(activated.count(), 1);
        QCOMPARE(activated.first().at(0).toInt(), 3);
        QVERIFY(shown.wait(10000));
        int streamTracks = 0;
        for (const Track& t : w.currentTrace()->trace->tracks)
            streamTracks += t.kind == TrackKind::Stream;
        QCOMPARE(streamTracks, 4);
        QCOMPARE(w.scenarioModel()->scenario().streams.size(), size_t(2));
        bool said = false;
        for (const QLabel* l : w.statusBar()->findChildren<QLabel*>())
            said = said || l->text().contains(QStringLiteral("streams = 4 from the sweep"));
        QVERIFY(said);

        // A sweep too slow to follow edits is marked out of date instead.
        view->setQuickSweepLimitMs(0);
        w.scenarioModel()->undoStack()->undo();
        QCOMPARE(view->scenario(), w.scenarioModel()->validatedScenario());
        QTest::qWait(400);
        QCOMPARE(finished.count(), 2);
        QVERIFY2(view->message().contains(QStringLiteral("changed since this sweep")), qPrintable(view->message()));
        view->setQuickSweepLimitMs(1e12);

        // Kernel size: factors on a log axis.
        view->setKnob(SweepKnob::KernelSize);
        view->run();
        QVERIFY(finished.wait(30000));
        QCOMPARE(view->points().size(), size_t(5));
        QCOMPARE(view->plot()->xAxis->scaleType(), QCPAxis::stLogarithmic);
        saveShot(&w, QStringLiteral("sweep-window-kernel-size.png"));
        view->setValuesText(QStringLiteral("0.5, 0, 2"));
        view->run();
        QCOMPARE(view->state(), SweepView::State::Failed);
        saveShot(&w, QStringLiteral("sweep-window-bad-values.png"));
    }
};

QTEST_MAIN(TestSweep)
#include "tst_sweep.moc"
