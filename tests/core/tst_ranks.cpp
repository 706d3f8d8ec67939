// Per-rank runs and their merge (ranks.h, rank_merge.h): the launchers' environments, the per-rank file names, the
// clock alignment and what a merged job holds; then streamscope-cli run under the launchers' variables and merge.
#include "rank_broadcast.h"
#include "rank_merge.h"
#include "ranks.h"
#include "trace_formats.h"
#include "trace_json.h"

#include "cli_process.h"

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <thread>

namespace ss = streamscope;
using streamscope::testing::runCli;

namespace {

// An environment lookup over a table, as the launchers would set it.
ss::EnvLookup table(std::map<std::string, std::string> vars)
{
    return [vars = std::move(vars)](const char* name) -> const char* {
        const auto it = vars.find(name);
        return it == vars.end() ? nullptr : it->second.c_str();
    };
}

ss::RankInfo rankOf(const std::map<std::string, std::string>& vars)
{
    auto r = ss::rankFromEnvironment(table(vars));
    if (!r || !*r)
        return ss::RankInfo{-1, 0, -1, 0, r ? "none" : r.error().toString(), {}};
    return **r;
}

// One rank's trace: a host thread that launched a kernel at `at` (its time 0) on its stream, with the rank record.
ss::Trace rankTrace(int rank, int world, const std::string& host, int64_t origin, bool simulated = false,
                    std::optional<ss::ClockSync> sync = {})
{
    ss::Trace t;
    t.info.source = simulated ? ss::TraceSource::Simulator : ss::TraceSource::Cupti;
    t.info.backend = simulated ? "simulator" : "cuda";
    t.info.scenarioId = "job";
    t.info.devices.push_back({0, "NVIDIA H200", {}});
    const uint32_t thread = t.addTrack({ss::TrackKind::HostThread, "main", 0});
    ss::Track s;
    s.name = "s0";
    s.device = 0;
    const uint32_t stream = t.addTrack(s);
    ss::SpanInit api;
    api.track = thread;
    api.kind = ss::SpanKind::ApiCall;
    api.name = "cudaLaunchKernel";
    api.start = 0;
    api.end = 5000;
    const uint32_t a = t.addSpan(api);
    ss::SpanInit k;
    k.track = stream;
    k.kind = ss::SpanKind::Kernel;
    k.name = "gemm";
    k.start = 6000;
    k.end = 106000;
    const uint32_t b = t.addSpan(k);
    t.addFlow(a, b, ss::FlowKind::Launch);
    ss::RankInfo info;
    info.rank = rank;
    info.worldSize = world;
    info.localRank = rank;
    info.launcher = "Open MPI";
    ss::RankClock clock;
    clock.simulated = simulated;
    clock.originNs = origin;
    clock.wallOffsetNs = 1'000'000'000;
    clock.wallOffsetErrorNs = 20;
    clock.sync = std::move(sync);
    ss::addRankSettings(t.info, info, host, clock);
    t.finalize();
    return t;
}

int64_t kernelStart(const ss::Trace& t, int rank)
{
    const std::string name = "rank " + std::to_string(rank) + " · s0";
    for (uint32_t i = 0; i < t.spanCount(); ++i)
        if (t.tracks[t.spans.track[i]].name == name)
            return t.spans.start[i];
    return -1;
}

QProcessEnvironment launcherEnvironment(const std::map<QString, QString>& vars)
{
    auto env = QProcessEnvironment::systemEnvironment();
    for (const QString& k : env.keys())
        if (k.startsWith(QLatin1String("OMPI_")) || k.startsWith(QLatin1String("PMI_"))
            || k.startsWith(QLatin1String("SLURM_")) || k == QLatin1String("RANK") || k == QLatin1String("WORLD_SIZE")
            || k == QLatin1String("LOCAL_RANK") || k == QLatin1String("LOCAL_WORLD_SIZE")
            || k == QLatin1String("MASTER_ADDR") || k == QLatin1String("MASTER_PORT")
            || k == QLatin1String("STREAMSCOPE_RENDEZVOUS"))
            env.remove(k);
    env.insert(QStringLiteral("CUDA_VISIBLE_DEVICES"), QStringLiteral("-1"));
    for (const auto& [k, v] : vars)
        env.insert(k, v);
    return env;
}

} // namespace

class TestRanks : public QObject {
    Q_OBJECT

private slots:
    void launchersAreRead()
    {
        ss::RankInfo r = rankOf({{"OMPI_COMM_WORLD_RANK", "3"},
                                 {"OMPI_COMM_WORLD_SIZE", "8"},
                                 {"OMPI_COMM_WORLD_LOCAL_RANK", "1"},
                                 {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"}});
        QCOMPARE(r.rank, 3);
        QCOMPARE(r.worldSize, 8);
        QCOMPARE(r.localRank, 1);
        QCOMPARE(r.localWorldSize, 2);
        QCOMPARE(QString::fromStdString(r.launcher), QStringLiteral("Open MPI"));

        r = rankOf({{"PMI_RANK", "2"}, {"PMI_SIZE", "4"}, {"MPI_LOCALRANKID", "0"}});
        QCOMPARE(QString::fromStdString(r.launcher), QStringLiteral("MPICH"));
        QCOMPARE(r.rank, 2);
        QCOMPARE(r.localRank, 0);

        r = rankOf({{"RANK", "5"}, {"WORLD_SIZE", "16"}, {"LOCAL_RANK", "1"}, {"LOCAL_WORLD_SIZE", "4"}});
        QCOMPARE(QString::fromStdString(r.launcher), QStringLiteral("torchrun"));
        QCOMPARE(r.rank, 5);
        QCOMPARE(r.localWorldSize, 4);

        // srun: a job step's task; a batch script's own environment (no step) is not a rank.
        r = rankOf({{"SLURM_PROCID", "7"}, {"SLURM_NTASKS", "8"}, {"SLURM_LOCALID", "3"}, {"SLURM_STEP_ID", "0"}});
        QCOMPARE(QString::fromStdString(r.launcher), QStringLiteral("Slurm"));
        QCOMPARE(r.rank, 7);
        QCOMPARE(r.localRank, 3);
        QCOMPARE(QString::fromStdString(rankOf({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "8"}}).launcher),
                 QStringLiteral("none"));
        // `srun torchrun ...`: torchrun's global rank, not Slurm's per-node task.
        r = rankOf(
            {{"SLURM_PROCID", "1"}, {"SLURM_NTASKS", "2"}, {"SLURM_STEP_ID", "0"}, {"RANK", "6"}, {"WORLD_SIZE", "8"}});
        QCOMPARE(QString::fromStdString(r.launcher), QStringLiteral("torchrun"));
        QCOMPARE(r.rank, 6);

        QCOMPARE(QString::fromStdString(rankOf({}).launcher), QStringLiteral("none"));
    }

    void badLauncherValuesAreErrors_data()
    {
        QTest::addColumn<QString>("var");
        QTest::addColumn<QString>("value");
        QTest::addColumn<QString>("message");
        QTest::newRow("not a number") << "RANK"
                                      << "one"
                                      << "RANK=\"one\": not a whole number";
        QTest::newRow("rank past the world") << "RANK"
                                             << "4"
                                             << "RANK=\"4\": expected a whole number from 0 to 3";
        QTest::newRow("negative") << "RANK"
                                  << "-1"
                                  << "expected a whole number from 0 to 3";
        QTest::newRow("huge world") << "WORLD_SIZE"
                                    << "100000"
                                    << "WORLD_SIZE=\"100000\": expected a whole number "
                                       "from 1 to 4096";
        QTest::newRow("overflow") << "WORLD_SIZE"
                                  << "99999999999999999999"
                                  << "expected a whole number";
        QTest::newRow("trailing text") << "LOCAL_RANK"
                                       << "1x"
                                       << "LOCAL_RANK=\"1x\": not a whole number";
    }
    void badLauncherValuesAreErrors()
    {
        QFETCH(QString, var);
        QFETCH(QString, value);
        QFETCH(QString, message);
        std::map<std::string, std::string> vars{{"RANK", "1"}, {"WORLD_SIZE", "4"}, {"LOCAL_RANK", "1"}};
        vars[var.toStdString()] = value.toStdString();
        auto r = ss::rankFromEnvironment(table(vars));
        QVERIFY(!r);
        QVERIFY2(QString::fromStdString(r.error().toString()).contains(message), r.error().toString().c_str());
        auto missing = ss::rankFromEnvironment(table({{"RANK", "1"}}));
        QVERIFY(!missing);
        QVERIFY(QString::fromStdString(missing.error().message).contains(QLatin1String("WORLD_SIZE is not")));
    }

    void outputNamesPerRank()
    {
        ss::RankInfo r{3, 4, 1, 2, "Open MPI", {}};
        QCOMPARE(QString::fromStdString(*ss::expandRankPattern("job.%r.json", r, "n1")), QStringLiteral("job.3.json"));
        QCOMPARE(QString::fromStdString(*ss::expandRankPattern("%h/%l-%r-100%%.json", r, "n1")),
                 QStringLiteral("n1/1-3-100%.json"));
        auto shared = ss::expandRankPattern("job.json", r, "n1");
        QVERIFY(!shared);
        QVERIFY(QString::fromStdString(shared.error().message).contains(QLatin1String("put %r in the name")));
        QVERIFY(ss::expandRankPattern("job.json", ss::RankInfo{0, 1, 0, 1, "Open MPI", {}}, "n1"));
    }

    void wallOffsetIsSampled()
    {
        const ss::RankClock c = ss::sampleWallOffset();
        QVERIFY(c.wallOffsetErrorNs >= 0);
        QVERIFY(c.wallOffsetErrorNs < 1'000'000); // back-to-back clock reads: far below a millisecond
        QVERIFY(c.wallOffsetNs != 0);
    }

    void ranksOfOneHostShareItsClock()
    {
        std::vector<ss::RankTrace> in;
        in.push_back({"job.1.json", rankTrace(1, 2, "n1", 7'000)});
        in.push_back({"job.0.json", rankTrace(0, 2, "n1", 3'000)});
        auto m = ss::mergeRankTraces(std::move(in));
        QVERIFY2(m, m ? "" : m.error().toString().c_str());
        const ss::Trace& t = m->trace;
        QCOMPARE(t.tracks.size(), size_t(4));
        QCOMPARE(t.info.devices.size(), size_t(2));
        QCOMPARE(QString::fromStdString(t.info.devices[0].name), QStringLiteral("rank 0 · NVIDIA H200"));
        QCOMPARE(t.spanCount(), size_t(4));
        QCOMPARE(t.flows.size(), size_t(2));
        // Rank 1 began 4 µs after rank 0 on the same steady clock.
        QCOMPARE(kernelStart(t, 0), int64_t(6'000));
        QCOMPARE(kernelStart(t, 1), int64_t(10'000));
        QVERIFY(QString::fromStdString(m->alignment).contains(QLatin1String("exact")));
        QVERIFY(m->notes.empty());
        // The flows still join each rank's launch to its own kernel.
        for (const ss::Flow& f : t.flows)
            QCOMPARE(t.tracks[t.spans.track[f.from]].name.substr(0, 7),
                     t.tracks[t.spans.track[f.to]].name.substr(0, 7));
    }

    void ranksOfSeveralHostsNeedAWallClock()
    {
        auto inputs = [] {
            std::vector<ss::RankTrace> in;
            in.push_back({"a.json", rankTrace(0, 2, "n1", 3'000)});
            in.push_back({"b.json", rankTrace(1, 2, "n2", 900'000)});
            in[1].trace.info.settings.push_back({"x", "y"});
            return in;
        };
        auto refused = ss::mergeRankTraces(inputs());
        QVERIFY(!refused);
        const QString why = QString::fromStdString(refused.error().message);
        QVERIFY2(why.contains(QLatin1String("n1: rank 0; n2: rank 1"))
                     && why.contains(QLatin1String("--align wall-clock")),
                 qPrintable(why));
        ss::MergeOptions o;
        o.alignWallClock = true;
        auto m = ss::mergeRankTraces(inputs(), o);
        QVERIFY(m);
        // Same wall offset on both hosts: rank 1's time 0 is 897 µs after rank 0's.
        QCOMPARE(kernelStart(m->trace, 1) - kernelStart(m->trace, 0), int64_t(897'000));
        QVERIFY(QString::fromStdString(m->alignment).contains(QLatin1String("error unknown")));
    }

    // Ranks on hosts a and b, measured against rank 0 on a: a's ranks share rank 0's clock exactly; b's are placed by
    // the best of its ranks' offsets, and the merge states that offset's uncertainty as its error.
    void ranksOfSeveralHostsAreAlignedByTheirMeasuredOffsets()
    {
        auto sync = [](int64_t offset, int64_t uncertainty, std::string job = "j1", std::string root = "a") {
            return std::optional<ss::ClockSync>(ss::ClockSync{
                offset, uncertainty, 32, std::move(root), std::move(job), std::nullopt, std::nullopt, {}});
        };
        auto inputs = [&] {
            std::vector<ss::RankTrace> in;
            in.push_back({"r0.json", rankTrace(0, 4, "a", 1'000'000, false, sync(0, 0))});
            in.push_back({"r1.json", rankTrace(1, 4, "a", 1'500'000, false, sync(700, 9'000))});
            // b's clock is 5.8 ms behind a's: rank 2's time 0 is at 1.2 ms on rank 0's clock.
            in.push_back({"r2.json", rankTrace(2, 4, "b", 7'000'000, false, sync(-5'800'000, 38'000))});
            in.push_back({"r3.json", rankTrace(3, 4, "b", 7'100'000, false, sync(-5'810'000, 50'000))});
            return in;
        };
        auto m = ss::mergeRankTraces(inputs());
        QVERIFY2(m, m ? "" : m.error().toString().c_str());
        QCOMPARE(kernelStart(m->trace, 0), int64_t(6'000));
        QCOMPARE(kernelStart(m->trace, 1), int64_t(506'000)); // one host with rank 0: its clock, not the estimate
        QCOMPARE(kernelStart(m->trace, 2), int64_t(206'000));
        QCOMPARE(kernelStart(m->trace, 3), int64_t(306'000)); // host b's best offset (rank 2's), shared by rank 3
        const QString sentence = QString::fromStdString(m->alignment);
        QCOMPARE(sentence,
                 QStringLiteral("2 hosts, aligned by ping-pong to rank 0 (host a): error up to 38.0 µs (half "
                                "the shortest of 32 round trips; ranks on one host share its steady clock); host b "
                                "measured before the run only: the clock drift during the run is not corrected nor "
                                "in the error"));
        QCOMPARE(QString::fromStdString(*ss::findSetting(m->trace.info, "clock_alignment")), sentence);
        QVERIFY(m->trace.info.clockAlignmentErrorNs >= 38'000);
        QVERIFY(m->notes.empty());

        // Ranks of one host whose offsets disagree beyond their uncertainties: said, since the name may be two
        // machines'.
        auto split = inputs();
        split[3] = {"r3.json", rankTrace(3, 4, "b", 7'100'000, false, sync(-1'000'000, 50'000))};
        auto noted = ss::mergeRankTraces(std::move(split));
        QVERIFY(noted);
        QCOMPARE(noted->notes.size(), size_t(1));
        QVERIFY2(QString::fromStdString(noted->notes[0]).contains(QLatin1String("is b one machine?")),
                 noted->notes[0].c_str());

        // The merged trace keeps the sentence, where the window's run information shows it.
        QTemporaryDir dir;
        const std::string file = dir.filePath(QStringLiteral("job.json")).toStdString();
        QVERIFY(ss::saveNativeTrace(m->trace, file));
        auto back = ss::loadTraceFile(file);
        QVERIFY(back);
        QCOMPARE(QString::fromStdString(*ss::findSetting(back->info, "clock_alignment")), sentence);
    }

    // Offsets measured before and after the run: a host whose clock drifted is placed by the line through the two,
    // its spans mapped time by time; two measurements too close together to tell a drift put the change between
    // them into the error instead; what a rank's trace records about them is read back, and checked.
    void hostClockDriftIsCorrectedBetweenTwoMeasurements()
    {
        // Host b's clock gains 20 ppm on host a's: 400.02 µs between a measurement at 6 ms and one 20.001 s later.
        auto sync = [](int64_t offset, int64_t at, int64_t afterOffset, int64_t afterAt) {
            ss::ClockSync s{offset, 10'000, 32, "a", "j1", at, ss::ClockSync::Sample{afterOffset, 10'000, 32, afterAt},
                            {}};
            return std::optional<ss::ClockSync>(std::move(s));
        };
        auto job = [&](std::optional<ss::ClockSync> b) {
            std::vector<ss::RankTrace> in;
            in.push_back({"r0.json", rankTrace(0, 2, "a", 1'000'000, false, sync(0, 500'000, 0, 20'001'000'000))});
            ss::Trace r1 = rankTrace(1, 2, "b", 7'000'000, false, std::move(b));
            ss::SpanInit late; // 10 s into rank 1's run
            late.track = 1;
            late.kind = ss::SpanKind::Kernel;
            late.name = "late";
            late.start = 10'000'000'000;
            late.end = 10'001'000'000;
            r1.addSpan(late);
            r1.finalize();
            in.push_back({"r1.json", std::move(r1)});
            return in;
        };
        auto startOf = [](const ss::Trace& t, const char* name) {
            for (uint32_t i = 0; i < t.spanCount(); ++i)
                if (t.spanName(i) == name)
                    return std::make_pair(int64_t(t.spans.start[i]), int64_t(t.spans.end[i]));
            return std::make_pair(int64_t(-1), int64_t(-1));
        };
        const int64_t o1 = -5'800'000;
        const int64_t a1 = 6'000'000;
        const int64_t a2 = a1 + 20'001'000'000;
        auto m = ss::mergeRankTraces(job(sync(o1, a1, o1 + 400'020, a2)));
        QVERIFY2(m, m ? "" : m.error().toString().c_str());
        // Rank 1's time 0 is at 7 ms on b's clock, where b's offset is -5,799.98 µs: 1,200.02 µs on a's; rank 0's
        // time 0 is at 1 ms, the job's 0.
        QCOMPARE(kernelStart(m->trace, 1), int64_t(206'020));
        // 10 s later b's clock has gained another 200 µs: without the correction the span would be 200 µs early.
        QCOMPARE(startOf(m->trace, "late"), std::make_pair(int64_t(10'000'400'020), int64_t(10'001'400'040)));
        QCOMPARE(m->trace.info.clockAlignmentErrorNs, 10'000.0);
        QCOMPARE(QString::fromStdString(m->alignment),
                 QStringLiteral("2 hosts, aligned by ping-pong to rank 0 (host a): error up to 10.0 µs (half the "
                                "shortest of 32 round trips; ranks on one host share its steady clock); clock drift "
                                "corrected between the offsets measured before and after the run (host b: +20.00 ± "
                                "1.00 ppm)"));
        QVERIFY(QString::fromStdString(*ss::findSetting(m->trace.info, "rank 1"))
                    .endsWith(QLatin1String("drift +20.00 ppm corrected")));
        QVERIFY(m->notes.empty());

        // 0.1 s apart with 10 µs each: the rate is known to 200 ppm only. The first offset places the host, and the
        // 3 µs change between the two measurements goes into the error: 13 µs.
        auto close = ss::mergeRankTraces(job(sync(o1, a1, o1 + 3'000, a1 + 100'000'000)));
        QVERIFY(close);
        QCOMPARE(kernelStart(close->trace, 1), int64_t(206'000));
        QCOMPARE(startOf(close->trace, "late").first, int64_t(10'000'200'000));
        QCOMPARE(close->trace.info.clockAlignmentErrorNs, 13'000.0);
        QVERIFY2(QString::fromStdString(close->alignment)
                     .endsWith(QStringLiteral("error up to 13.0 µs (half the shortest of 32 round trips; ranks on one "
                                              "host share its steady clock); measured again too soon after the first "
                                              "to tell a drift from their error (host b: 0.10 s apart): the change "
                                              "between them is in the error")),
                 close->alignment.c_str());

        // Not measured again (the rank's run outlasted the rendezvous' timeout): said, and not corrected.
        ss::ClockSync once{o1, 10'000, 32, "a", "j1", a1, std::nullopt, "rank 0 did not answer within 60 s"};
        auto single = ss::mergeRankTraces(job(once));
        QVERIFY(single);
        QCOMPARE(startOf(single->trace, "late").first, int64_t(10'000'200'000));
        QCOMPARE(single->notes.size(), size_t(1));
        QCOMPARE(QString::fromStdString(single->notes[0]),
                 QStringLiteral("host b: the clock offset was not measured again after the run (rank 0 did not "
                                "answer within 60 s), so its drift during the run is not corrected"));

        // What run writes is what merge reads, through a file.
        QTemporaryDir dir;
        const std::string file = dir.filePath(QStringLiteral("r1.json")).toStdString();
        for (const auto& written : {*sync(o1, a1, o1 + 400'020, a2), once}) {
            auto in = job(written);
            QVERIFY(ss::saveNativeTrace(in[1].trace, file));
            auto back = ss::loadTraceFile(file);
            QVERIFY(back);
            auto read = ss::readClockSync(back->info);
            QVERIFY(read && *read);
            QCOMPARE((*read)->atNs, written.atNs);
            QCOMPARE((*read)->after.has_value(), written.after.has_value());
            if (written.after) {
                QCOMPARE((*read)->after->offsetNs, written.after->offsetNs);
                QCOMPARE((*read)->after->uncertaintyNs, written.after->uncertaintyNs);
                QCOMPARE((*read)->after->samples, written.after->samples);
                QCOMPARE((*read)->after->atNs, written.after->atNs);
            }
            QCOMPARE((*read)->afterMissing, written.afterMissing);
        }
        // A second measurement before the first, or one without the first's time: named, not merged.
        auto broken = job(sync(o1, a1, o1 + 400'020, a2));
        ss::setSetting(broken[1].trace.info, "clock_sync_after_at_ns", "5000000");
        auto bad = ss::mergeRankTraces(std::move(broken));
        QVERIFY(!bad);
        QVERIFY2(QString::fromStdString(bad.error().toString())
                     .startsWith(QLatin1String("r1.json: info.settings.clock_sync_after_at_ns: 5000000 is not after "
                                               "clock_sync_at_ns (6000000)")),
                 bad.error().toString().c_str());
        auto noFirst = job(sync(o1, a1, o1 + 400'020, a2));
        auto& settings = noFirst[1].trace.info.settings;
        settings.erase(std::remove_if(settings.begin(), settings.end(),
                                      [](const auto& kv) { return kv.first == "clock_sync_at_ns"; }),
                       settings.end());
        bad = ss::mergeRankTraces(std::move(noFirst));
        QVERIFY(!bad);
        QVERIFY2(QString::fromStdString(bad.error().toString())
                     .startsWith(QLatin1String("r1.json: info.settings.clock_sync_at_ns: missing")),
                 bad.error().toString().c_str());
    }

    void ranksThatCannotBeAlignedAreRefused()
    {
        auto sync = [](std::string job, std::string root) {
            return std::optional<ss::ClockSync>(
                ss::ClockSync{-5'000, 20'000, 32, std::move(root), std::move(job), std::nullopt, std::nullopt, {}});
        };
        auto error = [](std::vector<ss::RankTrace> in) {
            auto m = ss::mergeRankTraces(std::move(in));
            return m ? QStringLiteral("merged: ") + QString::fromStdString(m->alignment)
                     : QString::fromStdString(m.error().toString());
        };
        // Host c's ranks took part in no rendezvous.
        std::vector<ss::RankTrace> unmeasured;
        unmeasured.push_back({"r0.json", rankTrace(0, 4, "a", 0, false, sync("j1", "a"))});
        unmeasured.push_back({"r1.json", rankTrace(1, 4, "b", 0, false, sync("j1", "a"))});
        unmeasured.push_back({"r2.json", rankTrace(2, 4, "c", 0)});
        unmeasured.push_back({"r3.json", rankTrace(3, 4, "c", 0)});
        QString why = error(std::move(unmeasured));
        QVERIFY2(why.startsWith(QLatin1String("ranks 2, 3 (host c) carry no clock offset to rank 0 (host a)"))
                     && why.contains(QLatin1String("--align wall-clock")),
                 qPrintable(why));
        // Offsets from two rendezvous: two runs (or two jobs) put together.
        std::vector<ss::RankTrace> twoRuns;
        twoRuns.push_back({"r0.json", rankTrace(0, 2, "a", 0, false, sync("j1", "a"))});
        twoRuns.push_back({"r1.json", rankTrace(1, 2, "b", 0, false, sync("j2", "a"))});
        why = error(std::move(twoRuns));
        QVERIFY2(why.contains(QLatin1String("measured in different rendezvous (rank 0 against rank 0 on host a "
                                            "(rendezvous j1); rank 1 against rank 0 on host a (rendezvous j2))")),
                 qPrintable(why));
        std::vector<ss::RankTrace> twoRoots;
        twoRoots.push_back({"r0.json", rankTrace(0, 2, "a", 0, false, sync("j1", "a"))});
        twoRoots.push_back({"r1.json", rankTrace(1, 2, "b", 0, false, sync("j1", "z"))});
        QVERIFY(error(std::move(twoRoots)).contains(QLatin1String("against rank 0 on host z")));
        // A clock_sync record that is not what run writes: the file and the setting are named.
        std::vector<ss::RankTrace> broken;
        broken.push_back({"r0.json", rankTrace(0, 2, "a", 0, false, sync("j1", "a"))});
        broken.push_back({"r1.json", rankTrace(1, 2, "b", 0, false, sync("j1", "a"))});
        ss::setSetting(broken[1].trace.info, "clock_sync_uncertainty_ns", "-3");
        why = error(std::move(broken));
        QVERIFY2(why.startsWith(QLatin1String("r1.json: info.settings.clock_sync_uncertainty_ns: \"-3\" is not a "
                                              "whole number from 0")),
                 qPrintable(why));
        // The wall clocks remain the explicit fallback.
        std::vector<ss::RankTrace> wall;
        wall.push_back({"r0.json", rankTrace(0, 2, "a", 0, false, sync("j1", "a"))});
        wall.push_back({"r1.json", rankTrace(1, 2, "c", 0)});
        ss::MergeOptions o;
        o.alignWallClock = true;
        auto m = ss::mergeRankTraces(std::move(wall), o);
        QVERIFY(m);
        QVERIFY(QString::fromStdString(m->alignment).contains(QLatin1String("error unknown")));
    }

    void mergeRefusesWhatIsNotOneJob()
    {
        auto error = [](std::vector<ss::RankTrace> in, const ss::MergeOptions& o = {}) {
            auto m = ss::mergeRankTraces(std::move(in), o);
            return m ? QString() : QString::fromStdString(m.error().toString());
        };
        std::vector<ss::RankTrace> twice;
        twice.push_back({"a.json", rankTrace(0, 2, "n1", 0)});
        twice.push_back({"b.json", rankTrace(0, 2, "n1", 0)});
        QVERIFY(error(std::move(twice)).contains(QLatin1String("b.json: rank 0 again: a.json is rank 0 too")));

        std::vector<ss::RankTrace> worlds;
        worlds.push_back({"a.json", rankTrace(0, 2, "n1", 0)});
        worlds.push_back({"b.json", rankTrace(1, 4, "n1", 0)});
        QVERIFY(error(std::move(worlds)).contains(QLatin1String("world size 4, but a.json has 2")));

        std::vector<ss::RankTrace> mixed;
        mixed.push_back({"a.json", rankTrace(0, 2, "n1", 0)});
        mixed.push_back({"sim.json", rankTrace(1, 2, "n1", 0, true)});
        QVERIFY(error(std::move(mixed)).contains(QLatin1String("sim.json: a simulated rank cannot be merged")));

        auto plain = [] {
            ss::Trace t = rankTrace(0, 1, "n1", 0);
            t.info.settings.clear();
            std::vector<ss::RankTrace> in;
            in.push_back({"p.json", t});
            in.push_back({"q.json", t});
            return in;
        };
        QVERIFY(error(plain()).contains(QLatin1String("p.json: not a per-rank trace")));
        ss::MergeOptions byOrder;
        byOrder.ranksByOrder = true;
        // Without a rank record there is no clock record either: such traces are taken as simulated only.
        QVERIFY(error(plain(), byOrder).contains(QLatin1String("no clock_origin_ns")));
    }

    void missingRanksAreNamed()
    {
        std::vector<ss::RankTrace> in;
        in.push_back({"a.json", rankTrace(0, 4, "n1", 0, true)});
        in.push_back({"c.json", rankTrace(2, 4, "n1", 0, true)});
        auto m = ss::mergeRankTraces(std::move(in));
        QVERIFY(m);
        QCOMPARE(m->notes.size(), size_t(1));
        QCOMPARE(QString::fromStdString(m->notes[0]),
                 QStringLiteral("ranks 1, 3 of 4 are missing: the job is shown "
                                "without them"));
        QVERIFY(QString::fromStdString(m->alignment).startsWith(QLatin1String("simulated ranks")));
    }

    // streamscope-cli run under the launchers' variables writes one trace per rank; merge puts them together.
    void cliRunsRanksAndMerges()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        for (int r = 0; r < 4; ++r) {
            const auto env = launcherEnvironment({{QStringLiteral("RANK"), QString::number(r)},
                                                  {QStringLiteral("WORLD_SIZE"), QStringLiteral("4")},
                                                  {QStringLiteral("LOCAL_RANK"), QString::number(r)}});
            const auto c = runCli(
                {QStringLiteral("run"), QStringLiteral("08"), QStringLiteral("-o"), QStringLiteral("job.%r.json")}, env,
                dir.path());
            QVERIFY2(c.code == 0, qPrintable(c.err));
        }
        QVERIFY(QFile::exists(dir.filePath(QStringLiteral("job.3.json"))));
        const auto m = runCli({QStringLiteral("merge"), QStringLiteral("job.0.json"), QStringLiteral("job.1.json"),
                               QStringLiteral("job.2.json"), QStringLiteral("job.3.json"), QStringLiteral("-o"),
                               QStringLiteral("job.json")},
                              launcherEnvironment({}), dir.path());
        QVERIFY2(m.code == 0, qPrintable(m.err));
        QVERIFY2(m.out.contains(QLatin1String("merged 4 rank traces of 08-copy-compute-pipeline")), qPrintable(m.out));
        QVERIFY(m.out.contains(QLatin1String("clock alignment: simulated ranks")));
        auto merged = ss::loadTraceFile(dir.filePath(QStringLiteral("job.json")).toStdString());
        QVERIFY(merged);
        QCOMPARE(merged->info.devices.size(), size_t(4));
        auto one = ss::loadTraceFile(dir.filePath(QStringLiteral("job.0.json")).toStdString());
        QVERIFY(one);
        QCOMPARE(merged->spanCount(), 4 * one->spanCount());
        QCOMPARE(merged->flows.size(), 4 * one->flows.size());
        // A folder is read as its traces (the merged file is not a rank: it is refused by name).
        const auto folder =
            runCli({QStringLiteral("merge"), dir.path(), QStringLiteral("-o"), QStringLiteral("x.json")},
                   launcherEnvironment({}), dir.path());
        QCOMPARE(folder.code, 2);
        QVERIFY2(folder.err.contains(QLatin1String("job.json: not a per-rank trace")), qPrintable(folder.err));

        // One file for every rank, or a value the launcher cannot have set: exit 2, saying why.
        const auto rank1 = launcherEnvironment({{QStringLiteral("OMPI_COMM_WORLD_RANK"), QStringLiteral("1")},
                                                {QStringLiteral("OMPI_COMM_WORLD_SIZE"), QStringLiteral("4")}});
        const auto shared =
            runCli({QStringLiteral("run"), QStringLiteral("01"), QStringLiteral("-o"), QStringLiteral("same.json")},
                   rank1, dir.path());
        QCOMPARE(shared.code, 2);
        QVERIFY2(shared.err.contains(QLatin1String("put %r in the name")), qPrintable(shared.err));
        QVERIFY(!QFile::exists(dir.filePath(QStringLiteral("same.json"))));
        const auto bad = runCli({QStringLiteral("run"), QStringLiteral("01")},
                                launcherEnvironment({{QStringLiteral("SLURM_PROCID"), QStringLiteral("x")},
                                                     {QStringLiteral("SLURM_NTASKS"), QStringLiteral("2")},
                                                     {QStringLiteral("SLURM_STEP_ID"), QStringLiteral("0")}}),
                                dir.path());
        QCOMPARE(bad.code, 2);
        QVERIFY2(bad.err.contains(QLatin1String("SLURM_PROCID=\"x\": not a whole number")), qPrintable(bad.err));
    }

    // NCCL's unique id through files: rank 0 writes, the others wait for it; a file of another job is never taken.
    void fileBroadcastSharesRankZerosBlob()
    {
        QTemporaryDir dir;
        const std::string path = dir.filePath(QStringLiteral("job.nccl-id")).toStdString();
        const std::string id(128, '\x07');
        auto rank0 = ss::fileBroadcast(path, 0, "job-a");
        auto rank1 = ss::fileBroadcast(path, 1, "job-a", std::chrono::seconds(10));
        // Rank 1 starts waiting before rank 0 has written.
        ss::Result<std::string> got = std::string();
        std::thread reader([&] { got = rank1({}); });
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        auto sent = rank0(id);
        reader.join();
        QVERIFY2(sent.ok(), sent.ok() ? "" : sent.error().toString().c_str());
        QVERIFY2(got.ok(), got.ok() ? "" : got.error().toString().c_str());
        QCOMPARE(got->size(), size_t(128));
        QVERIFY(*got == id);
        // The second broadcast (a second communicator) uses a file of its own.
        QVERIFY(rank0(std::string("second")).ok());
        auto second = rank1({});
        QVERIFY(second.ok() && *second == "second");
        QVERIFY(QFile::exists(QString::fromStdString(path + ".0")));
        ss::removeBroadcastFiles(path, 2);
        QVERIFY(!QFile::exists(QString::fromStdString(path + ".0")));
        QVERIFY(!QFile::exists(QString::fromStdString(path + ".1")));

        // A file left by another job (another key) is not taken: the wait ends in an error that says so.
        QVERIFY(ss::fileBroadcast(path, 0, "job-old")(id).ok());
        auto stale = ss::fileBroadcast(path, 1, "job-new", std::chrono::milliseconds(200))({});
        QVERIFY(!stale.ok());
        QVERIFY2(stale.error().message.find("another job's") != std::string::npos, stale.error().message.c_str());
        QVERIFY(stale.errorClass() == ss::ErrorClass::Runtime);
        // Nothing there at all: the error names the file and the rank.
        auto missing = ss::fileBroadcast(path + "-none", 3, "job", std::chrono::milliseconds(100))({});
        QVERIFY(!missing.ok());
        QVERIFY2(missing.error().message.find("rank 3 waited") != std::string::npos, missing.error().message.c_str());
        QVERIFY2(missing.error().message.find("never appeared") != std::string::npos, missing.error().message.c_str());
    }

    void broadcastPathAndJobKey()
    {
        QCOMPARE(QString::fromStdString(ss::defaultBroadcastPath("out/job.%r.json", "h1", "k")),
                 QStringLiteral("out/job.ranks.json.nccl-id"));
        QCOMPARE(QString::fromStdString(ss::defaultBroadcastPath("%h/job.%l.%r.json", "h1", "k")),
                 QStringLiteral("h1/job.ranks.ranks.json.nccl-id"));
        const std::string tmp = ss::defaultBroadcastPath("", "h1", "key-1");
        QVERIFY(tmp.find("streamscope-nccl-id.") != std::string::npos);
        QVERIFY(tmp != ss::defaultBroadcastPath("", "h1", "key-2"));
        const std::map<std::string, std::string> slurm{{"SLURM_JOB_ID", "42"}, {"SLURM_STEP_ID", "3"}};
        const auto lookup = [&](const char* v) -> const char* {
            const auto it = slurm.find(v);
            return it == slurm.end() ? nullptr : it->second.c_str();
        };
        QCOMPARE(QString::fromStdString(ss::jobKeyFromEnvironment(lookup)),
                 QStringLiteral("SLURM_JOB_ID=42;SLURM_STEP_ID=3"));
        // No launcher variables: the parent process (the launcher's daemon on this host) tells the job.
        const auto none = [](const char*) -> const char* { return nullptr; };
        QVERIFY(ss::jobKeyFromEnvironment(none).starts_with("ppid="));
    }
};

QTEST_GUILESS_MAIN(TestRanks)
#include "tst_ranks.moc"
