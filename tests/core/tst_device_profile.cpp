// Device profiles: the shipped ones load, the profile writer and reader round-trip every field and the provenance
// of a calibrated profile, malformed values are rejected with the JSON path, and the figures a profile leaves out
// default to what reproduces the simulator's behaviour without them. Also streamscope-cli: a bad --profile is bad
// input (exit 2), and calibrate without a usable GPU is a runtime error (exit 3).
#include "device_profile.h"

#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <nlohmann/json.hpp>

#include <fstream>

namespace ss = streamscope;

namespace {

ss::DeviceProfile calibratedProfile()
{
    ss::DeviceProfile p;
    p.id = "calibrated";
    p.name = "NVIDIA Test GPU";
    p.sources = "Measured by streamscope-cli calibrate";
    p.smCount = 100;
    p.h2dPinnedBps = 55.2e9;
    p.h2dPinnedDuplexBps = 50.43e9;
    p.d2hPinnedDuplexBps = 50.57e9;
    p.memsetBps = 4283.73e9;
    p.workQueues = "engines"; // not the default, so that the round trip shows it
    p.batchedKernelCompletion = true;
    p.fp32Flops = 10.67e12;
    p.launchApiNs = 3789;
    p.launchApiRoundRobinNs = 3929;
    p.graphLaunchApiPerNodeNs = 5;
    p.hostFuncSpacingNs = 1485;
    p.priorityHighest = -5;
    p.hostFuncWakeCurve = {{8'100, 21'300}, {23'500, 36'000}, {3'001'000, 111'000}};
    p.hostFuncFirstWakeNs = 97'000;
    p.hostFuncReleaseNs = 4'400;
    p.minMemsetNs = 810;
    auto& c = p.calibration;
    c.tool = "streamscope-cli calibrate 0.1.0";
    c.command = "streamscope-cli calibrate -o gpu.json";
    c.gpu = "NVIDIA Test GPU";
    c.device = 1;
    c.driver = "580.159.04";
    c.cudaDriver = "13.0";
    c.cudaRuntime = "13.0";
    c.date = "2026-12-01T14:51:03Z";
    c.host = "gpu-host";
    c.figures.push_back({"launch_api_ns", "ns", 3789, 371, {3700, 3789, 3800, 4071, 3750}, "1000 launches"});
    c.figures.push_back({"h2d_pinned_gbps", "GB/s", 55.2, 0.29, {55.1, 55.2, 55.39, 55.2, 55.3}, "64 MiB copies"});
    c.figures.back().trimmedMean = true; // as the figures measured in fresh processes are
    c.notes.push_back("p2p_gbps not measured (one GPU)");
    return p;
}

std::string withField(const std::string& key, const nlohmann::json& value)
{
    auto doc = nlohmann::json::parse(ss::deviceProfileToJson(calibratedProfile()));
    const auto slash = key.find('/');
    if (slash == std::string::npos)
        doc[key] = value;
    else
        doc[nlohmann::json::json_pointer(key)] = value;
    return doc.dump();
}

} // namespace

class TestDeviceProfile : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void shippedProfilesLoad()
    {
        for (const auto& id : ss::builtinProfileIds()) {
            const auto p = ss::findDeviceProfile(id);
            QVERIFY2(p.ok(), p.ok() ? "" : p.error().toString().c_str());
            QCOMPARE(p->id, id);
            QVERIFY(!p->sources.empty());
        }
    }

    void newFieldsDefaultToTheOldBehaviour()
    {
        const std::string old = R"({"format": "streamscope-device-profile", "version": 1, "id": "old",
            "h2d_pinned_gbps": 20, "d2h_pinned_gbps": 21, "dram_gbps": 900, "launch_api_ns": 4000,
            "kernel_overhead_ns": 1700, "host_func_latency_ns": 5000})";
        const auto p = ss::parseDeviceProfile(old, "old.json");
        QVERIFY2(p.ok(), p.ok() ? "" : p.error().toString().c_str());
        QCOMPARE(p->launchApiRoundRobinNs, int64_t(4000));
        QCOMPARE(p->launchApiConcurrentNs, int64_t(4000));
        QCOMPARE(p->h2dPinnedDuplexBps, 20e9);
        QCOMPARE(p->d2hPinnedDuplexBps, 21e9);
        QCOMPARE(p->memsetBps, 900e9);
        QCOMPARE(p->graphLaunchApiPerNodeNs, int64_t(0));
        QCOMPARE(p->graphMinKernelNs, p->minKernelNs);
        QCOMPARE(p->spinOverheadNs, int64_t(0));
        QCOMPARE(p->memsetApiNs, p->copyApiNs);
        QCOMPARE(p->reduceBlockNs, 0.0);
        QVERIFY(p->hostFuncWakeCurve.empty()); // host_func_latency_ns and the doze rule, as before
        QCOMPARE(p->hostFuncSpacingNs, int64_t(6700));
        QCOMPARE(p->workQueues, std::string("connections"));
        QVERIFY(!p->batchedKernelCompletion);
        QVERIFY(p->calibration.empty());
        // A profile with no calibration writes none.
        QVERIFY(ss::deviceProfileToJson(*p).find("\"calibration\"") == std::string::npos);
    }

    void roundTripKeepsFieldsAndProvenance()
    {
        const ss::DeviceProfile a = calibratedProfile();
        const std::string text = ss::deviceProfileToJson(a);
        const auto b = ss::parseDeviceProfile(text, "gpu.json");
        QVERIFY2(b.ok(), b.ok() ? "" : b.error().toString().c_str());
        QCOMPARE(b->id, a.id);
        QCOMPARE(b->name, a.name);
        QCOMPARE(b->smCount, a.smCount);
        QCOMPARE(b->priorityHighest, a.priorityHighest);
        QCOMPARE(b->launchApiNs, a.launchApiNs);
        QCOMPARE(b->launchApiRoundRobinNs, a.launchApiRoundRobinNs);
        QCOMPARE(b->graphLaunchApiPerNodeNs, a.graphLaunchApiPerNodeNs);
        QCOMPARE(b->hostFuncSpacingNs, a.hostFuncSpacingNs);
        QCOMPARE(b->minKernelNs, a.minKernelNs);
        QCOMPARE(b->graphMinKernelNs, a.graphMinKernelNs);
        QCOMPARE(b->spinOverheadNs, a.spinOverheadNs);
        QCOMPARE(b->memsetApiNs, a.memsetApiNs);
        QCOMPARE(b->reduceBlockNs, a.reduceBlockNs);
        QVERIFY(b->hostFuncWakeCurve == a.hostFuncWakeCurve);
        QCOMPARE(b->hostFuncFirstWakeNs, a.hostFuncFirstWakeNs);
        QCOMPARE(b->hostFuncReleaseNs, a.hostFuncReleaseNs);
        QCOMPARE(b->minMemsetNs, a.minMemsetNs);
        QVERIFY(text.find("\"host_func_wake_curve\": [") != std::string::npos);
        QCOMPARE(b->workQueues, a.workQueues);
        QCOMPARE(b->batchedKernelCompletion, a.batchedKernelCompletion);
        for (auto [x, y] : {std::pair{b->h2dPinnedBps, a.h2dPinnedBps},
                            {b->h2dPinnedDuplexBps, a.h2dPinnedDuplexBps},
                            {b->d2hPinnedDuplexBps, a.d2hPinnedDuplexBps},
                            {b->memsetBps, a.memsetBps},
                            {b->fp32Flops, a.fp32Flops},
                            {b->dramBps, a.dramBps}})
            QVERIFY2(std::abs(x - y) <= 1e-9 * y,
                     qPrintable(QString::number(x) + QStringLiteral(" != ") + QString::number(y)));
        const auto& c = b->calibration;
        QCOMPARE(c.tool, a.calibration.tool);
        QCOMPARE(c.command, a.calibration.command);
        QCOMPARE(c.gpu, a.calibration.gpu);
        QCOMPARE(c.device, 1);
        QCOMPARE(c.driver, std::string("580.159.04"));
        QCOMPARE(c.cudaDriver, std::string("13.0"));
        QCOMPARE(c.cudaRuntime, std::string("13.0"));
        QCOMPARE(c.date, a.calibration.date);
        QCOMPARE(c.host, a.calibration.host);
        QCOMPARE(c.notes, a.calibration.notes);
        QCOMPARE(c.figures.size(), size_t(2));
        const ss::CalibrationFigure* f = c.figure("launch_api_ns");
        QVERIFY(f);
        QCOMPARE(f->value, 3789.0);
        QCOMPARE(f->spread, 371.0);
        QCOMPARE(f->unit, std::string("ns"));
        QCOMPARE(f->repeats, (std::vector<double>{3700, 3789, 3800, 4071, 3750}));
        QCOMPARE(f->method, std::string("1000 launches"));
        QCOMPARE(c.figures[1].key, std::string("h2d_pinned_gbps")); // measurement order kept
        QVERIFY(!f->trimmedMean);
        QVERIFY(c.figures[1].trimmedMean); // written as "trimmed_mean", read back as one
        QVERIFY(text.find("\"trimmed_mean\": 55.2") != std::string::npos);
        // Writing what was read gives the same text.
        QCOMPARE(ss::deviceProfileToJson(*b), text);
    }

    void badValuesRejected_data()
    {
        QTest::addColumn<QString>("key");
        QTest::addColumn<QString>("value"); // JSON
        QTest::addColumn<QString>("path");
        QTest::addColumn<QString>("message");
        QTest::newRow("string for a number") << "launch_api_ns"
                                             << "\"fast\""
                                             << "/launch_api_ns"
                                             << "expected a number";
        QTest::newRow("negative") << "kernel_overhead_ns"
                                  << "-5"
                                  << "/kernel_overhead_ns"
                                  << "must not be negative";
        QTest::newRow("fractional count") << "sm_count"
                                          << "13.5"
                                          << "/sm_count"
                                          << "expected a whole number";
        QTest::newRow("zero bandwidth") << "h2d_pinned_duplex_gbps"
                                        << "0"
                                        << "/h2d_pinned_duplex_gbps"
                                        << "must be positive";
        QTest::newRow("unknown field") << "warp_speed"
                                       << "9"
                                       << "/warp_speed"
                                       << "unknown field";
        // Hostile magnitudes: the simulator allocates per SM and per copy engine, and adds nanoseconds.
        QTest::newRow("2e9 SMs") << "sm_count"
                                 << "2000000000"
                                 << "/sm_count"
                                 << "2000000000 is out of range: from 1 to 4096";
        QTest::newRow("2e9 copy engines") << "copy_engines"
                                          << "2000000000"
                                          << "/copy_engines"
                                          << "from 1 to 64";
        QTest::newRow("1e-300 GB/s") << "h2d_pinned_gbps"
                                     << "1e-300"
                                     << "/h2d_pinned_gbps"
                                     << "from 0.001 to 100000";
        QTest::newRow("launch 1e19 ns") << "launch_api_ns"
                                        << "1e19"
                                        << "/launch_api_ns"
                                        << "from 0 to 10000000000";
        QTest::newRow("version 2^32+1") << "version"
                                        << "4294967297"
                                        << "/version"
                                        << "unsupported version";
        QTest::newRow("device 2^40") << "calibration/device"
                                     << "1099511627776"
                                     << "/calibration/device"
                                     << "device index";
        QTest::newRow("name not a string") << "name"
                                           << "7"
                                           << "/name"
                                           << "expected a string";
        QTest::newRow("unknown work queues") << "work_queues"
                                             << "\"per-warp\""
                                             << "/work_queues"
                                             << "expected \"connections\"";
        QTest::newRow("batched not a boolean") << "batched_kernel_completion"
                                               << "1"
                                               << "/batched_kernel_completion"
                                               << "expected true or false";
        QTest::newRow("calibration not an object") << "calibration"
                                                   << "3"
                                                   << "/calibration"
                                                   << "expected an object";
        QTest::newRow("calibration unknown field") << "calibration/colour"
                                                   << "\"red\""
                                                   << "/calibration/colour"
                                                   << "unknown field";
        QTest::newRow("gpu not a string") << "calibration/gpu"
                                          << "1"
                                          << "/calibration/gpu"
                                          << "expected a string";
        QTest::newRow("device negative") << "calibration/device"
                                         << "-1"
                                         << "/calibration/device"
                                         << "device index";
        QTest::newRow("notes not strings") << "calibration/notes"
                                           << "[1]"
                                           << "/calibration/notes/0"
                                           << "expected a string";
        QTest::newRow("figures not an object") << "calibration/figures"
                                               << "[]"
                                               << "/calibration/figures"
                                               << "expected an object";
        QTest::newRow("figure not an object") << "calibration/figures/launch_api_ns"
                                              << "5"
                                              << "/calibration/figures/launch_api_ns"
                                              << "is an object";
        QTest::newRow("median not a number") << "calibration/figures/launch_api_ns/median"
                                             << "\"x\""
                                             << "/calibration/figures/launch_api_ns/median"
                                             << "expected a number";
        QTest::newRow("spread negative") << "calibration/figures/launch_api_ns/spread"
                                         << "-1"
                                         << "/calibration/figures/launch_api_ns/spread"
                                         << "must not be negative";
        QTest::newRow("repeats empty") << "calibration/figures/launch_api_ns/repeats"
                                       << "[]"
                                       << "/calibration/figures/launch_api_ns/repeats"
                                       << "one per repeat";
        QTest::newRow("repeat not a number") << "calibration/figures/launch_api_ns/repeats"
                                             << "[1, \"2\"]"
                                             << "/calibration/figures/launch_api_ns/repeats/1"
                                             << "expected a number";
        QTest::newRow("median outside repeats") << "calibration/figures/launch_api_ns/median"
                                                << "10"
                                                << "/calibration/figures/launch_api_ns/median"
                                                << "outside its repeats";
        QTest::newRow("trimmed mean outside repeats") << "calibration/figures/h2d_pinned_gbps/trimmed_mean"
                                                      << "60"
                                                      << "/calibration/figures/h2d_pinned_gbps/trimmed_mean"
                                                      << "the trimmed mean lies outside its repeats";
        QTest::newRow("median and trimmed mean") << "calibration/figures/h2d_pinned_gbps/median"
                                                 << "55.2"
                                                 << "/calibration/figures/h2d_pinned_gbps"
                                                 << "its median or its trimmed_mean (one of them)";
        QTest::newRow("curve not an array") << "host_func_wake_curve"
                                            << "5"
                                            << "/host_func_wake_curve"
                                            << "expected an array of [idle_ns, wake_ns] points";
        QTest::newRow("curve point of three") << "host_func_wake_curve"
                                              << "[[1, 2], [3, 4, 5]]"
                                              << "/host_func_wake_curve/1"
                                              << "expected a point [idle_ns, wake_ns] of two numbers";
        QTest::newRow("curve negative wake-up") << "host_func_wake_curve"
                                                << "[[1000, -2]]"
                                                << "/host_func_wake_curve/0/1"
                                                << "whole nanoseconds from 0 to 10 s";
        QTest::newRow("curve idle not increasing") << "host_func_wake_curve"
                                                   << "[[5000, 20000], [5000, 30000]]"
                                                   << "/host_func_wake_curve/1/0"
                                                   << "the idle times must increase";
        QTest::newRow("figure unknown field") << "calibration/figures/launch_api_ns/mean"
                                              << "3"
                                              << "/calibration/figures/launch_api_ns/mean"
                                              << "unknown field";
    }

    void badValuesRejected()
    {
        QFETCH(QString, key);
        QFETCH(QString, value);
        QFETCH(QString, path);
        QFETCH(QString, message);
        const std::string k = key.toStdString();
        const std::string text =
            withField(k.find('/') == std::string::npos ? k : "/" + k, nlohmann::json::parse(value.toStdString()));
        const auto p = ss::parseDeviceProfile(text, "bad.json");
        QVERIFY(!p.ok());
        QCOMPARE(QString::fromStdString(p.error().file), QStringLiteral("bad.json"));
        QCOMPARE(QString::fromStdString(p.error().path), path);
        QVERIFY2(QString::fromStdString(p.error().message).contains(message), p.error().message.c_str());
    }

    // Text that is not a profile for nlohmann's reasons: two equal keys, a number beyond a double.
    void malformedJsonRejected_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("path");
        QTest::addColumn<QString>("message");
        QTest::newRow("duplicate key")
            << "{\"format\": \"streamscope-device-profile\", \"version\": 1, \"sm_count\": 4, \"sm_count\": 8}"
            << QString() << "duplicate key \"sm_count\"";
        QTest::newRow("number overflow") << "{\"format\": \"streamscope-device-profile\", \"sm_count\": 4e421}"
                                         << QString() << "not JSON";
    }

    void malformedJsonRejected()
    {
        QFETCH(QString, text);
        QFETCH(QString, path);
        QFETCH(QString, message);
        const auto p = ss::parseDeviceProfile(text.toStdString(), "bad.json");
        QVERIFY(!p.ok());
        QCOMPARE(QString::fromStdString(p.error().path), path);
        QVERIFY2(QString::fromStdString(p.error().message).contains(message), p.error().message.c_str());
    }

    void cliRejectsABadProfileFile()
    {
        QTemporaryDir dir;
        const QString bad = dir.filePath(QStringLiteral("bad.json"));
        std::ofstream(bad.toStdString()) << withField("/calibration/figures/launch_api_ns/median", "x");
        QProcess p;
        p.start(QStringLiteral(STREAMSCOPE_CLI),
                {QStringLiteral("run"), QStringLiteral("01"), QStringLiteral("--backend"), QStringLiteral("sim"),
                 QStringLiteral("--profile"), bad});
        QVERIFY(p.waitForFinished(60000));
        const QString err = QString::fromUtf8(p.readAllStandardError());
        QCOMPARE(p.exitCode(), 2);
        QVERIFY2(err.contains(bad + QStringLiteral(": /calibration/figures/launch_api_ns/median: expected a number")),
                 qPrintable(err));
    }

    void cliRunsWithAWrittenProfile()
    {
        QTemporaryDir dir;
        const QString file = dir.filePath(QStringLiteral("gpu.json"));
        std::ofstream(file.toStdString()) << ss::deviceProfileToJson(calibratedProfile());
        QProcess p;
        p.start(QStringLiteral(STREAMSCOPE_CLI),
                {QStringLiteral("run"), QStringLiteral("01"), QStringLiteral("--backend"), QStringLiteral("sim"),
                 QStringLiteral("--profile"), file});
        QVERIFY(p.waitForFinished(60000));
        QVERIFY2(p.exitCode() == 0, p.readAllStandardError().constData());
    }

    void calibrateNeedsAGpu()
    {
        auto env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("CUDA_VISIBLE_DEVICES"), QStringLiteral("-1"));
        QProcess p;
        p.setProcessEnvironment(env);
        p.start(QStringLiteral(STREAMSCOPE_CLI), {QStringLiteral("calibrate")});
        QVERIFY(p.waitForFinished(60000));
        const QString err = QString::fromUtf8(p.readAllStandardError());
        QCOMPARE(p.exitCode(), 3);
        QVERIFY2(err.contains(QLatin1String("needs a CUDA build")) || err.contains(QLatin1String("no usable GPU")),
                 qPrintable(err));
        QVERIFY(p.readAllStandardOutput().isEmpty());
    }
};

QTEST_GUILESS_MAIN(TestDeviceProfile)
#include "tst_device_profile.moc"
