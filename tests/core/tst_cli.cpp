// End-to-end tests of streamscope-cli: runs the built executable (STREAMSCOPE_CLI) and checks exit codes and output.
#include "device_profile.h"
#include "expect.h"
#include "resources.h"
#include "scenario.h"
#include "scenario_json.h"
#include "trace_json.h"

#include "cli_process.h"

#include <nlohmann/json.hpp>

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

namespace ss = streamscope;

namespace {

using streamscope::testing::CliResult;
using streamscope::testing::runCli;

// An environment in which the CUDA runtime sees no GPU, so that GPU paths behave the same on every machine.
QProcessEnvironment noGpuEnvironment()
{
    auto env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("CUDA_VISIBLE_DEVICES"), QStringLiteral("-1"));
    return env;
}

ss::Op spinKernel(const std::string& stream, double us)
{
    ss::Op k;
    k.kind = ss::OpKind::Kernel;
    k.kernel = ss::KernelKind::Spin;
    k.stream = stream;
    k.grid = ss::Dim3{1, 1, 1};
    k.gridGiven = true;
    k.durationUs = us;
    return k;
}

// Two 100 us kernels in two non-blocking streams. `makespanBelowUs` is the bound of its one expectation.
ss::Scenario makeScenario(double makespanBelowUs)
{
    ss::Scenario s;
    s.id = "cli-test";
    s.title = "CLI test";
    s.description = "Two kernels in two streams.";
    s.devices.push_back(ss::DeviceSpec{0, {}});
    s.streams.push_back(ss::StreamSpec{"s1", 0, ss::StreamKind::NonBlocking, 0});
    s.streams.push_back(ss::StreamSpec{"s2", 0, ss::StreamKind::NonBlocking, 0});
    ss::ThreadSpec t;
    t.name = "main";
    t.device = 0;
    t.ops.push_back(spinKernel("s1", 100));
    t.ops.push_back(spinKernel("s2", 100));
    ss::Op sync;
    sync.kind = ss::OpKind::DeviceSync;
    t.ops.push_back(sync);
    s.threads.push_back(std::move(t));
    ss::Expectation e;
    e.id = "short";
    e.metric = "makespan_us";
    e.op = "<";
    e.value = makespanBelowUs;
    e.why = "The two kernels finish within the bound the test sets.";
    s.expect.push_back(e);
    return s;
}

bool writeFile(const QString& path, const std::string& text)
{
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate))
        return false;
    return f.write(text.data(), qint64(text.size())) == qint64(text.size());
}

QByteArray readFile(const QString& path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return {};
    return f.readAll();
}

QStringList nonEmptyLines(const QString& text)
{
    return text.split(QLatin1Char('\n'), Qt::SkipEmptyParts);
}

} // namespace

class TestCli : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    QString m_passing; // scenario whose expectation holds
    QString m_failing; // scenario whose expectation fails

    QString path(const char* name) const { return m_dir.filePath(QString::fromUtf8(name)); }

    // Runs the passing scenario on the simulator into a trace file.
    QString makeTrace(const char* name, const QString& scenario)
    {
        const QString trace = path(name);
        const auto r = runCli({QStringLiteral("run"), scenario, QStringLiteral("--backend"), QStringLiteral("sim"),
                               QStringLiteral("-o"), trace});
        if (r.code != 0 || !QFile::exists(trace))
            qWarning("%s", qPrintable(r.describe()));
        return trace;
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        QVERIFY2(QFile::exists(QStringLiteral(STREAMSCOPE_CLI)), STREAMSCOPE_CLI);
        bool known = false;
        for (const auto& metric : ss::expectationMetrics())
            known = known || metric.first == "makespan_us";
        QVERIFY2(known, "the expectation metric makespan_us is not known");
        m_passing = path("passing.json");
        m_failing = path("failing.json");
        QVERIFY(writeFile(m_passing, ss::scenarioToJson(makeScenario(1e9))));
        QVERIFY(writeFile(m_failing, ss::scenarioToJson(makeScenario(0.001))));
        // The written scenarios must be valid, or the tests below test nothing.
        auto check = ss::loadScenarioFile(m_passing.toStdString());
        QVERIFY2(check.ok(), check.error().toString().c_str());
    }

    void version()
    {
        const auto r = runCli({QStringLiteral("--version")});
        QCOMPARE(r.code, 0);
        QVERIFY2(r.out.contains(QStringLiteral("streamscope-cli")), qPrintable(r.describe()));
        // Where the lessons and profiles come from: STREAMSCOPE_RESOURCES (ctest sets it) before anything else.
        const QString resources = qEnvironmentVariable("STREAMSCOPE_RESOURCES");
        QVERIFY2(r.out.contains(QStringLiteral("\nlessons and profiles: ")
                                + (resources.isEmpty() ? QString() : resources + QLatin1Char('\n'))),
                 qPrintable(r.describe()));
    }

    void help()
    {
        const auto r = runCli({QStringLiteral("--help")});
        QCOMPARE(r.code, 0);
        QVERIFY(r.out.contains(QStringLiteral("run")));
        QVERIFY(r.out.contains(QStringLiteral("analyze")));
    }

    void usageErrors_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::newRow("no subcommand") << QStringList{};
        QTest::newRow("unknown subcommand") << QStringList{QStringLiteral("frobnicate")};
        QTest::newRow("run without scenario") << QStringList{QStringLiteral("run")};
        QTest::newRow("unknown backend") << QStringList{QStringLiteral("run"), QStringLiteral("01"),
                                                        QStringLiteral("--backend"), QStringLiteral("gpu")};
        QTest::newRow("unknown option") << QStringList{QStringLiteral("presets"), QStringLiteral("--bogus")};
        QTest::newRow("convert without -o") << QStringList{QStringLiteral("convert"), QStringLiteral("x.json")};
    }

    void usageErrors()
    {
        QFETCH(QStringList, args);
        const auto r = runCli(args);
        QVERIFY2(r.code == 2, qPrintable(r.describe()));
        QVERIFY2(r.err.contains(QStringLiteral("error:")), qPrintable(r.describe()));
    }

    void presets()
    {
        const auto r = runCli({QStringLiteral("presets")});
        QVERIFY2(r.code == 0, qPrintable(r.describe()));
        const auto lines = nonEmptyLines(r.out);
        const auto presets = ss::listPresets();
        QCOMPARE(lines.size(), qsizetype(presets.size()));
        static const QRegularExpression line(QStringLiteral("^(\\S+)  (\\S.*)$"));
        for (qsizetype i = 0; i < lines.size(); ++i) {
            const auto m = line.match(lines[i]);
            QVERIFY2(m.hasMatch(), qPrintable(lines[i]));
            QCOMPARE(m.captured(1), QString::fromStdString(presets[size_t(i)].id));
            QCOMPARE(m.captured(2), QString::fromStdString(presets[size_t(i)].title));
        }
    }

    void profiles()
    {
        const auto r = runCli({QStringLiteral("profiles")});
        QVERIFY2(r.code == 0, qPrintable(r.describe()));
        QCOMPARE(nonEmptyLines(r.out).size(), qsizetype(ss::builtinProfileIds().size()));
    }

    void runPresetWithCheck()
    {
        const auto presets = ss::listPresets();
        QVERIFY2(!presets.empty(), "no lessons found in resources/presets");
        const QString id = QString::fromStdString(presets.front().id);
        const QString number = id.section(QLatin1Char('-'), 0, 0);
        const QString suffix = id.section(QLatin1Char('-'), 1);
        // By id, by number without its leading zero and by the name after the number.
        QStringList names{id, QString::number(number.toInt())};
        int sameSuffix = 0;
        for (const auto& p : presets)
            sameSuffix += QString::fromStdString(p.id).endsWith(QLatin1Char('-') + suffix) ? 1 : 0;
        if (sameSuffix == 1)
            names << suffix;
        for (const auto& name : names) {
            const auto r = runCli({QStringLiteral("run"), name, QStringLiteral("--backend"), QStringLiteral("sim"),
                                   QStringLiteral("--check")});
            QVERIFY2(r.code == 0, qPrintable(name + QLatin1Char('\n') + r.describe()));
            QVERIFY2(r.out.contains(id), qPrintable(r.describe()));
            QVERIFY2(r.out.contains(QStringLiteral("makespan")), qPrintable(r.describe()));
            QVERIFY2(r.out.contains(QStringLiteral("backend: simulator")), qPrintable(r.describe()));
            // Every lesson has expectations, and they hold on the simulator.
            QVERIFY2(r.out.contains(QStringLiteral("PASS")), qPrintable(r.describe()));
            QVERIFY2(!r.out.contains(QStringLiteral("FAIL")), qPrintable(r.describe()));
        }
    }

    void runVariant()
    {
        const auto presets = ss::listPresets();
        const ss::PresetInfo* withVariant = nullptr;
        for (const auto& p : presets)
            if (!p.variants.empty() && !withVariant)
                withVariant = &p;
        QVERIFY2(withVariant, "no lesson in resources/presets has a variant");
        const QString id = QString::fromStdString(withVariant->id);
        const QString variant = QString::fromStdString(withVariant->variants.front());
        auto r = runCli({QStringLiteral("run"), id, QStringLiteral("--backend"), QStringLiteral("sim"),
                         QStringLiteral("--variant"), variant});
        QVERIFY2(r.code == 0, qPrintable(r.describe()));
        QVERIFY2(r.out.contains(QStringLiteral("[variant ") + variant + QLatin1Char(']')), qPrintable(r.describe()));

        r = runCli({QStringLiteral("run"), id, QStringLiteral("--backend"), QStringLiteral("sim"),
                    QStringLiteral("--variant"), QStringLiteral("no-such-variant")});
        QVERIFY2(r.code == 2, qPrintable(r.describe()));
        QVERIFY2(r.err.contains(QStringLiteral("no-such-variant")), qPrintable(r.describe()));
    }

    void runScenarioFile()
    {
        const auto r = runCli({QStringLiteral("run"), m_passing, QStringLiteral("--backend"), QStringLiteral("sim"),
                               QStringLiteral("--check")});
        QVERIFY2(r.code == 0, qPrintable(r.describe()));
        QVERIFY2(r.out.contains(QStringLiteral("PASS")), qPrintable(r.describe()));
        QVERIFY2(!r.out.contains(QStringLiteral("FAIL")), qPrintable(r.describe()));
        QVERIFY2(r.out.contains(QStringLiteral("s1")), qPrintable(r.describe()));
        QVERIFY2(r.out.contains(QStringLiteral("s2")), qPrintable(r.describe()));
        QVERIFY2(r.out.contains(QStringLiteral("The two kernels finish")), qPrintable(r.describe()));
        // The desktop app reads the device lines to name the GPU a run used.
        static const QRegularExpression deviceLine(QStringLiteral("^\\s*device 0: \\S"),
                                                   QRegularExpression::MultilineOption);
        QVERIFY2(deviceLine.match(r.out).hasMatch(), qPrintable(r.describe()));
    }

    void runFailingCheck()
    {
        const QString trace = path("failing-trace.json");
        const auto r = runCli({QStringLiteral("run"), m_failing, QStringLiteral("--backend"), QStringLiteral("sim"),
                               QStringLiteral("--check"), QStringLiteral("-o"), trace});
        QVERIFY2(r.code == 1, qPrintable(r.describe()));
        QVERIFY2(r.out.contains(QStringLiteral("FAIL")), qPrintable(r.describe()));
        QVERIFY2(QFile::exists(trace), "the trace is written also when a check fails");
        // Without --check the same run succeeds.
        const auto plain =
            runCli({QStringLiteral("run"), m_failing, QStringLiteral("--backend"), QStringLiteral("sim")});
        QVERIFY2(plain.code == 0, qPrintable(plain.describe()));
    }

    void warningsGoToStderr()
    {
        ss::Scenario s = makeScenario(1e9);
        ss::Op wait;
        wait.kind = ss::OpKind::Wait;
        wait.stream = "s2";
        wait.event = "never-recorded";
        s.threads[0].ops.insert(s.threads[0].ops.begin(), wait);
        const QString file = path("warns.json");
        QVERIFY(writeFile(file, ss::scenarioToJson(s)));
        const auto r = runCli({QStringLiteral("run"), file, QStringLiteral("--backend"), QStringLiteral("sim")});
        QVERIFY2(r.code == 0, qPrintable(r.describe()));
        QVERIFY2(r.err.contains(QStringLiteral("warning: ") + file + QStringLiteral(": /threads/0/ops/0")),
                 qPrintable(r.describe()));
        QVERIFY2(!r.out.contains(QStringLiteral("warning")), qPrintable(r.describe()));
    }

    void badInput_data()
    {
        QTest::addColumn<QString>("fileName");
        QTest::addColumn<QString>("jsonPointer"); // where the error is
        QTest::addColumn<QString>("newValue");    // JSON text put there; empty: the file is cut short instead
        QTest::newRow("unknown stream") << QStringLiteral("bad-stream-ref.json")
                                        << QStringLiteral("/threads/0/ops/1/stream") << QStringLiteral("\"nosuch\"");
        QTest::newRow("wrong type") << QStringLiteral("bad-type.json") << QStringLiteral("/streams/0/name")
                                    << QStringLiteral("5");
        QTest::newRow("unknown op kind") << QStringLiteral("bad-kind.json") << QStringLiteral("/threads/0/ops/0/op")
                                         << QStringLiteral("\"teleport\"");
        QTest::newRow("syntax error") << QStringLiteral("bad-syntax.json") << QString() << QString();
    }

    void badInput()
    {
        QFETCH(QString, fileName);
        QFETCH(QString, jsonPointer);
        QFETCH(QString, newValue);
        std::string text = ss::scenarioToJson(makeScenario(1e9));
        if (newValue.isEmpty()) {
            text.resize(text.size() / 2);
        } else {
            auto doc = nlohmann::json::parse(text);
            const nlohmann::json::json_pointer ptr(jsonPointer.toStdString());
            QVERIFY2(doc.contains(ptr), qPrintable(jsonPointer));
            doc[ptr] = nlohmann::json::parse(newValue.toStdString());
            text = doc.dump(2);
        }
        const QString file = m_dir.filePath(fileName);
        QVERIFY(writeFile(file, text));
        const auto r = runCli({QStringLiteral("run"), file, QStringLiteral("--backend"), QStringLiteral("sim")});
        QVERIFY2(r.code == 2, qPrintable(r.describe()));
        QVERIFY2(r.err.startsWith(QStringLiteral("error: ")), qPrintable(r.describe()));
        QVERIFY2(r.err.contains(fileName), qPrintable(r.describe()));
        if (!jsonPointer.isEmpty())
            QVERIFY2(r.err.contains(jsonPointer), qPrintable(r.describe()));
    }

    void missingFiles_data()
    {
        QTest::addColumn<QString>("command");
        QTest::newRow("run") << QStringLiteral("run");
        QTest::newRow("analyze") << QStringLiteral("analyze");
        QTest::newRow("check") << QStringLiteral("check");
    }

    void missingFiles()
    {
        QFETCH(QString, command);
        const QString missing = path("does-not-exist.json");
        const auto r = runCli({command, missing});
        QVERIFY2(r.code == 2, qPrintable(r.describe()));
        QVERIFY2(r.err.contains(QStringLiteral("does-not-exist.json")), qPrintable(r.describe()));
    }

    void unknownPreset()
    {
        const auto r = runCli({QStringLiteral("run"), QStringLiteral("no-such-lesson"), QStringLiteral("--backend"),
                               QStringLiteral("sim")});
        QVERIFY2(r.code == 2, qPrintable(r.describe()));
        QVERIFY2(r.err.contains(QStringLiteral("no-such-lesson")), qPrintable(r.describe()));
        const auto n =
            runCli({QStringLiteral("run"), QStringLiteral("999"), QStringLiteral("--backend"), QStringLiteral("sim")});
        QVERIFY2(n.code == 2, qPrintable(n.describe()));
    }

    void unknownProfile()
    {
        const auto r = runCli({QStringLiteral("run"), m_passing, QStringLiteral("--backend"), QStringLiteral("sim"),
                               QStringLiteral("--profile"), QStringLiteral("no-such-gpu")});
        QVERIFY2(r.code == 2, qPrintable(r.describe()));
        QVERIFY2(r.err.contains(QStringLiteral("no-such-gpu")), qPrintable(r.describe()));
    }

    void shippedProfile()
    {
        const auto ids = ss::builtinProfileIds();
        QVERIFY2(!ids.empty(), "no device profiles found in resources/profiles");
        const auto r = runCli({QStringLiteral("run"), m_passing, QStringLiteral("--backend"), QStringLiteral("sim"),
                               QStringLiteral("--profile"), QString::fromStdString(ids.front())});
        QVERIFY2(r.code == 0, qPrintable(r.describe()));
    }

    void cudaBackendWithoutGpu()
    {
        const auto version = runCli({QStringLiteral("--version")});
        const bool built = !version.out.contains(QStringLiteral("no CUDA backend"));
        const auto r = runCli({QStringLiteral("run"), m_passing, QStringLiteral("--backend"), QStringLiteral("cuda")},
                              noGpuEnvironment());
        QVERIFY2(r.code == 3, qPrintable(r.describe()));
        QVERIFY2(r.err.startsWith(QStringLiteral("error: ")), qPrintable(r.describe()));
        if (!built)
            QVERIFY2(r.err.contains(QStringLiteral("not built")), qPrintable(r.describe()));
        else
            QVERIFY2(r.err.contains(QStringLiteral("no usable GPU")), qPrintable(r.describe()));
    }

    void autoFallsBackToSimulator()
    {
        const auto r = runCli({QStringLiteral("run"), m_passing, QStringLiteral("--backend"), QStringLiteral("auto")},
                              noGpuEnvironment());
        QVERIFY2(r.code == 0, qPrintable(r.describe()));
        QVERIFY2(r.err.contains(QStringLiteral("no usable GPU (")), qPrintable(r.describe()));
        QVERIFY2(r.err.contains(QStringLiteral("using the simulator")), qPrintable(r.describe()));
        QVERIFY2(r.out.contains(QStringLiteral("backend: simulator")), qPrintable(r.describe()));
    }

    void analyzeJson()
    {
        const QString trace = makeTrace("analyze-trace.json", m_passing);
        QVERIFY(QFile::exists(trace));
        const auto r = runCli({QStringLiteral("analyze"), trace, QStringLiteral("--json")});
        QVERIFY2(r.code == 0, qPrintable(r.describe()));
        QJsonParseError error;
        const auto doc = QJsonDocument::fromJson(r.out.toUtf8(), &error);
        QVERIFY2(error.error == QJsonParseError::NoError, qPrintable(error.errorString() + r.describe()));
        QVERIFY(doc.isObject());
        const QJsonObject root = doc.object();
        const QJsonObject metrics = root.value(QStringLiteral("metrics")).toObject();
        QVERIFY(metrics.value(QStringLiteral("makespan_ns")).isDouble());
        // Two 100 us kernels: the makespan is at least one of them.
        QVERIFY2(metrics.value(QStringLiteral("makespan_ns")).toDouble() >= 100000.0, qPrintable(r.out));
        QVERIFY(metrics.value(QStringLiteral("gpu_work_ns")).toDouble() >= 200000.0);
        QVERIFY(metrics.value(QStringLiteral("speedup")).isDouble());
        QVERIFY(metrics.value(QStringLiteral("max_concurrency")).toInt() >= 1);
        QCOMPARE(metrics.value(QStringLiteral("gpu_span_count")).toInt(), 2);
        QVERIFY(metrics.value(QStringLiteral("api_call_count")).toInt() >= 2);
        QVERIFY(metrics.value(QStringLiteral("copy_compute_overlap_ns")).isDouble());
        const QJsonArray streams = metrics.value(QStringLiteral("streams")).toArray();
        QStringList names;
        for (const auto& s : streams) {
            const auto o = s.toObject();
            names << o.value(QStringLiteral("name")).toString();
            QVERIFY(o.value(QStringLiteral("busy_ns")).toDouble() >= 100000.0);
            QCOMPARE(o.value(QStringLiteral("span_count")).toInt(), 1);
            QCOMPARE(o.value(QStringLiteral("device")).toInt(), 0);
        }
        QVERIFY2(names.contains(QStringLiteral("s1")) && names.contains(QStringLiteral("s2")), qPrintable(r.out));
        QCOMPARE(root.value(QStringLiteral("source")).toString(), QStringLiteral("simulator"));
        QCOMPARE(root.value(QStringLiteral("scenario_id")).toString(), QStringLiteral("cli-test"));

        const auto text = runCli({QStringLiteral("analyze"), trace});
        QVERIFY2(text.code == 0, qPrintable(text.describe()));
        QVERIFY(text.out.contains(QStringLiteral("makespan")));
        QVERIFY(text.out.contains(QStringLiteral("s1")));
    }

    void analyzeDiagnosesAndCompares()
    {
        // The blocking variant of lesson 4 against its main configuration.
        const QString blocking = path("lesson4-blocking.json");
        const QString nonBlocking = path("lesson4.json");
        auto r = runCli({QStringLiteral("run"), QStringLiteral("04"), QStringLiteral("--variant"),
                         QStringLiteral("blocking"), QStringLiteral("--backend"), QStringLiteral("sim"),
                         QStringLiteral("-o"), blocking});
        QVERIFY2(QFile::exists(blocking), qPrintable(r.describe()));
        r = runCli({QStringLiteral("run"), QStringLiteral("04"), QStringLiteral("--backend"), QStringLiteral("sim"),
                    QStringLiteral("-o"), nonBlocking});
        QVERIFY2(r.code == 0, qPrintable(r.describe()));

        r = runCli({QStringLiteral("analyze"), blocking, QStringLiteral("--json")});
        QVERIFY2(r.code == 0, qPrintable(r.describe()));
        const QJsonObject root = QJsonDocument::fromJson(r.out.toUtf8()).object();
        QVERIFY(root.value(QStringLiteral("metrics")).toObject().value(QStringLiteral("makespan_ns")).toDouble()
                > 3.5e6);
        QVERIFY(!root.value(QStringLiteral("critical_path")).toArray().isEmpty());
        const QJsonArray diagnostics = root.value(QStringLiteral("diagnostics")).toArray();
        QVERIFY2(!diagnostics.isEmpty(), qPrintable(r.out));
        const QJsonObject d = diagnostics.first().toObject();
        QCOMPARE(d.value(QStringLiteral("rule")).toString(), QStringLiteral("legacy-default-stream"));
        QVERIFY(!d.value(QStringLiteral("message")).toString().isEmpty());
        QVERIFY(!d.value(QStringLiteral("spans")).toArray().isEmpty());

        r = runCli({QStringLiteral("analyze"), blocking, nonBlocking});
        QVERIFY2(r.code == 0, qPrintable(r.describe()));
        QVERIFY2(r.out.contains(QStringLiteral("faster")), qPrintable(r.out));
        r = runCli({QStringLiteral("analyze"), blocking, nonBlocking, QStringLiteral("--json")});
        QVERIFY2(r.code == 0, qPrintable(r.describe()));
        QVERIFY(QJsonDocument::fromJson(r.out.toUtf8()).isObject());
    }

    void runProgressLines()
    {
        const auto r = runCli({QStringLiteral("run"), QStringLiteral("04"), QStringLiteral("--backend"),
                               QStringLiteral("sim"), QStringLiteral("--progress")});
        QVERIFY2(r.code == 0, qPrintable(r.describe()));
        // Lesson 4 has one warm-up and one measured iteration.
        QVERIFY2(r.err.contains(QStringLiteral("progress: 2/2 iterations")), qPrintable(r.describe()));
        const auto quiet =
            runCli({QStringLiteral("run"), QStringLiteral("04"), QStringLiteral("--backend"), QStringLiteral("sim")});
        QVERIFY(!quiet.err.contains(QStringLiteral("progress:")));
    }

    void sweepStreams()
    {
        auto r =
            runCli({QStringLiteral("sweep"), QStringLiteral("08"), QStringLiteral("--knob"), QStringLiteral("streams"),
                    QStringLiteral("--values"), QStringLiteral("1,4"), QStringLiteral("--json")});
        QVERIFY2(r.code == 0, qPrintable(r.describe()));
        const QJsonArray points =
            QJsonDocument::fromJson(r.out.toUtf8()).object().value(QStringLiteral("points")).toArray();
        QCOMPARE(points.size(), 2);
        const double one = points[0].toObject().value(QStringLiteral("makespan_ns")).toDouble();
        const double four = points[1].toObject().value(QStringLiteral("makespan_ns")).toDouble();
        QVERIFY2(four < one * 0.7, qPrintable(r.out)); // the pipeline needs several streams to overlap
        r = runCli({QStringLiteral("sweep"), QStringLiteral("08"), QStringLiteral("--knob"), QStringLiteral("colour")});
        QCOMPARE(r.code, 2);
    }

    void analyzeBadTrace()
    {
        const QString file = path("not-a-trace.json");
        QVERIFY(writeFile(file, "{\"format\": \"streamscope-trace\", \"version\": "));
        const auto r = runCli({QStringLiteral("analyze"), file, QStringLiteral("--json")});
        QVERIFY2(r.code == 2, qPrintable(r.describe()));
        QVERIFY2(r.err.contains(QStringLiteral("not-a-trace.json")), qPrintable(r.describe()));
        QVERIFY2(r.out.isEmpty(), qPrintable(r.describe()));
    }

    void checkTrace()
    {
        const QString failing = makeTrace("check-failing.json", m_failing);
        QVERIFY(QFile::exists(failing));
        auto r = runCli({QStringLiteral("check"), failing});
        QVERIFY2(r.code == 1, qPrintable(r.describe()));
        QVERIFY2(r.out.contains(QStringLiteral("FAIL")), qPrintable(r.describe()));
        QVERIFY2(r.out.contains(QStringLiteral("The two kernels finish")), qPrintable(r.describe()));

        const QString passing = makeTrace("check-passing.json", m_passing);
        r = runCli({QStringLiteral("check"), passing});
        QVERIFY2(r.code == 0, qPrintable(r.describe()));
        QVERIFY2(r.out.contains(QStringLiteral("PASS")), qPrintable(r.describe()));
        QVERIFY2(!r.out.contains(QStringLiteral("FAIL")), qPrintable(r.describe()));
    }

    void convertRoundTrip()
    {
        const QString original = makeTrace("convert-in.json", m_passing);
        const QString once = path("convert-once.json");
        const QString twice = path("convert-twice.json");
        auto r = runCli({QStringLiteral("convert"), original, QStringLiteral("-o"), once});
        QVERIFY2(r.code == 0, qPrintable(r.describe()));
        r = runCli({QStringLiteral("convert"), once, QStringLiteral("-o"), twice, QStringLiteral("--to"),
                    QStringLiteral("streamscope")});
        QVERIFY2(r.code == 0, qPrintable(r.describe()));
        QCOMPARE(readFile(twice), readFile(once));

        auto a = ss::loadTraceFile(original.toStdString());
        auto b = ss::loadTraceFile(once.toStdString());
        QVERIFY2(a.ok(), a.error().toString().c_str());
        QVERIFY2(b.ok(), b.error().toString().c_str());
        QCOMPARE(b->spanCount(), a->spanCount());
        QCOMPARE(b->tracks.size(), a->tracks.size());
        QVERIFY(b->flows == a->flows);
        QVERIFY(b->spans.start == a->spans.start);
        QVERIFY(b->spans.end == a->spans.end);
        QCOMPARE(b->info.scenarioJson, a->info.scenarioJson);

        const auto before = runCli({QStringLiteral("analyze"), original, QStringLiteral("--json")});
        const auto after = runCli({QStringLiteral("analyze"), once, QStringLiteral("--json")});
        QCOMPARE(after.out, before.out);
    }

    void convertRejects()
    {
        const QString original = makeTrace("convert-reject.json", m_passing);
        auto r = runCli({QStringLiteral("convert"), original, QStringLiteral("-o"), path("x.out"),
                         QStringLiteral("--to"), QStringLiteral("bogus")});
        QVERIFY2(r.code == 2, qPrintable(r.describe()));
        QVERIFY(!QFile::exists(path("x.out")));

        r = runCli({QStringLiteral("convert"), m_passing, QStringLiteral("-o"), path("y.out")});
        QVERIFY2(r.code == 2, qPrintable(r.describe()));
        QVERIFY2(r.err.contains(QStringLiteral("scenario")), qPrintable(r.describe()));

        const QString junk = path("junk.txt");
        QVERIFY(writeFile(junk, "hello, world\n"));
        r = runCli({QStringLiteral("convert"), junk, QStringLiteral("-o"), path("z.out")});
        QVERIFY2(r.code == 2, qPrintable(r.describe()));
        QVERIFY2(r.err.contains(QStringLiteral("junk.txt")), qPrintable(r.describe()));
    }
    // replay: the replay's error on the unchanged run first, then the changed run against the recording; -o writes
    // the replayed trace; bad keys, values and traces are exit 2 with the key or the reason named.
    void replay()
    {
        const QString h200 = QStringLiteral(STREAMSCOPE_SOURCE_DIR "/tests/data/h200/");
        const QString trace = h200 + QStringLiteral("variants/11-hardware-queues--connections-8.json");
        const QString out = path("replayed.json");
        const auto r = runCli({QStringLiteral("replay"), trace, QStringLiteral("--set"),
                               QStringLiteral("connections=32"), QStringLiteral("-o"), out});
        QVERIFY2(r.code == 0, qPrintable(r.describe()));
        const qsizetype error = r.out.indexOf(QStringLiteral("replay of the unchanged run: makespan "));
        const qsizetype compared = r.out.indexOf(QStringLiteral("recorded -> replay (connections=32)"));
        QVERIFY2(error >= 0 && compared > error, qPrintable(r.describe()));
        QVERIFY2(r.out.contains(QStringLiteral("against the untimed run's")), qPrintable(r.out));
        QVERIFY2(r.out.contains(QStringLiteral("faster")), qPrintable(r.out));
        QVERIFY2(r.err.contains(QStringLiteral("replayed trace written to")), qPrintable(r.describe()));
        const auto analyzed = runCli({QStringLiteral("analyze"), out, QStringLiteral("--json")});
        QVERIFY2(analyzed.code == 0, qPrintable(analyzed.describe()));
        QVERIFY(analyzed.out.contains(QStringLiteral("\"source\": \"simulator\"")));

        const auto json =
            runCli({QStringLiteral("replay"), trace, QStringLiteral("--set"), QStringLiteral("pinned=true"),
                    QStringLiteral("--set"), QStringLiteral("priorities=off"), QStringLiteral("--json")});
        QVERIFY2(json.code == 0, qPrintable(json.describe()));
        const QJsonObject root = QJsonDocument::fromJson(json.out.toUtf8()).object();
        QVERIFY(
            root.value(QStringLiteral("replay_error")).toObject().value(QStringLiteral("makespan_error")).isDouble());
        QCOMPARE(root.value(QStringLiteral("settings")).toArray().size(), 2);

        auto expectBadInput = [](const QStringList& args, const QString& message) {
            const auto bad = runCli(args);
            QVERIFY2(bad.code == 2, qPrintable(bad.describe()));
            QVERIFY2(bad.err.contains(message), qPrintable(bad.describe()));
        };
        expectBadInput({QStringLiteral("replay"), trace, QStringLiteral("--set"), QStringLiteral("warps=4")},
                       QStringLiteral("error: --set warps: unknown key"));
        expectBadInput({QStringLiteral("replay"), trace, QStringLiteral("--set"), QStringLiteral("connections=0")},
                       QStringLiteral("error: --set connections: CUDA_DEVICE_MAX_CONNECTIONS must be an integer"));
        expectBadInput({QStringLiteral("replay"), trace, QStringLiteral("--set"), QStringLiteral("priority.x=-1")},
                       QStringLiteral("--set priority.x: no stream \"x\""));
        const QString simulated = makeTrace("replay-simulated.json", m_passing);
        expectBadInput({QStringLiteral("replay"), simulated}, QStringLiteral("not recorded on a GPU"));
        expectBadInput({QStringLiteral("replay"), path("no-such-trace.json")}, QStringLiteral("no-such-trace.json"));
    }
};

QTEST_GUILESS_MAIN(TestCli)
#include "tst_cli.moc"
