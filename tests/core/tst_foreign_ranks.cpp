// Merging other tools' per-rank traces (foreign_ranks.h): PyTorch profiler traces of a data-parallel job with NCCL
// all-reduce kernels (synthetic, tests/support/kineto_job.h) and Nsight Systems SQLite exports built here from the
// documented schema; their rank, their wall-clock alignment, the NCCL calls linked across ranks and the straggler
// named; bad inputs refused by `streamscope-cli merge` with exit 2 and a message naming the file.
#include "analysis.h"
#include "collectives.h"
#include "diagnostics.h"
#include "foreign_ranks.h"
#include "nsys_sqlite.h"
#include "pytorch_trace.h"
#include "ranks.h"
#include "trace_formats.h"

#include "cli_process.h"
#include "import_export_fixtures.h"
#include "kineto_job.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <string>

namespace ss = streamscope;
using ss::testing::KinetoJobSpec;
using ss::testing::runCli;

namespace {

std::vector<ss::RankTrace> parsedJob(const KinetoJobSpec& spec)
{
    std::vector<ss::RankTrace> ranks;
    const auto texts = ss::testing::kinetoJob(spec);
    for (size_t r = 0; r < texts.size(); ++r) {
        const std::string file = "job.rank" + std::to_string(r) + ".json";
        auto t = ss::parsePyTorchTrace(texts[r], file);
        if (!t)
            qFatal("%s", t.error().toString().c_str());
        ranks.push_back({file, std::move(*t)});
    }
    return ranks;
}

void writeFile(const QString& path, const std::string& text)
{
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly) || f.write(text.data(), qint64(text.size())) != qint64(text.size()))
        qFatal("cannot write %s", qPrintable(path));
}

// One rank's Nsight Systems export: a compute kernel (stream 7) of computeNs, then an NCCL all-reduce kernel
// (stream 20) that starts when the compute ends and ends at `ncclEnd` (on the job's clock: session start + time).
std::string nsysRank(int64_t sessionStart, int64_t computeNs, int64_t ncclEnd)
{
    const int64_t computeEnd = 1'000 + computeNs;
    return kNsysSchema + R"SQL(
INSERT INTO StringIds VALUES (1, 'compute_kernel'), (2, 'ncclDevKernel_AllReduce_Sum_f32_RING_LL');
INSERT INTO TARGET_INFO_GPU (vmId, id, name, smCount, cuDevice) VALUES (0, 0, 'NVIDIA H200', 132, 0);
INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES ()SQL"
        + std::to_string(sessionStart) + R"SQL(, '2026-12-05T12:00:00Z', 'x');
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES
    (1000, )SQL"
        + std::to_string(computeEnd)
        + R"SQL(, 0, 1, NULL, 7, 1, 1, 1, 1, NULL, 0, 0, 32, 64, 1, 1, 256, 1, 1, 0, 0, 0, 0, 1, 0, NULL, NULL),
    ()SQL"
        + std::to_string(computeEnd + 500) + ", " + std::to_string(ncclEnd - sessionStart)
        + R"SQL(, 0, 1, NULL, 20, 2, 1, 2, 2, NULL, 0, 0, 32, 2, 1, 1, 640, 1, 1, 0, 0, 0, 0, 2, 0, NULL, NULL);
)SQL";
}

} // namespace

class TestForeignRanks : public QObject {
    Q_OBJECT

private slots:
    void ncclNames_data();
    void ncclNames();
    void rankFromFileName();
    void pytorchJob_data();
    void pytorchJob();
    void pytorchRanksByOrder();
    void pytorchRefused_data();
    void pytorchRefused();
    void ncclCallsThatDoNotPairUp();
    void nsysJob();
    void cliMergesAFolder();
    void cliRefuses_data();
    void cliRefuses();
};

void TestForeignRanks::ncclNames_data()
{
    QTest::addColumn<QString>("name");
    QTest::addColumn<QString>("collective");
    QTest::newRow("dev kernel") << "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)"
                                << "AllReduce";
    QTest::newRow("old kernel") << "ncclKernel_AllGather_RING_LL_Sum_int8_t(ncclWorkElem)"
                                << "AllGather";
    QTest::newRow("void") << "void ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL(int)"
                          << "ReduceScatter";
    QTest::newRow("generic") << "ncclDevKernel_Generic_4"
                             << "Generic";
    QTest::newRow("p2p") << "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)"
                         << "SendRecv";
    QTest::newRow("not nccl") << "void at::native::vectorized_elementwise_kernel<4>"
                              << "";
    QTest::newRow("nccl inside a name") << "my_ncclKernel_AllReduce"
                                        << "";
}

void TestForeignRanks::ncclNames()
{
    QFETCH(QString, name);
    QFETCH(QString, collective);
    QCOMPARE(QString::fromStdString(std::string(ss::ncclCollectiveOf(name.toStdString()))), collective);
}

void TestForeignRanks::rankFromFileName()
{
    QCOMPARE(ss::rankFromFileName("/tmp/job/report.3.sqlite"), std::optional<int>(3));
    QCOMPARE(ss::rankFromFileName("runs/v2/trace_rank12.json.gz"), std::optional<int>(12));
    QCOMPARE(ss::rankFromFileName("report-0"), std::optional<int>(0));
    QCOMPARE(ss::rankFromFileName("/data/7/report.sqlite"), std::optional<int>()); // the folder's number is not it
    QVERIFY(*ss::rankFromFileName("r99999999999999999999.sqlite") >= ss::kMaxRanks);
}

void TestForeignRanks::pytorchJob_data()
{
    QTest::addColumn<int>("ranks");
    QTest::addColumn<int>("straggler");
    QTest::newRow("2 ranks") << 2 << 0;
    QTest::newRow("3 ranks") << 3 << 2;
    QTest::newRow("4 ranks") << 4 << 1;
}

// Each rank's times count from its own baseTimeNanoseconds (7 ms apart): only the alignment by it puts the ends of
// one all-reduce call (NCCL's kernels of one call end together) at one time on the job's clock.
void TestForeignRanks::pytorchJob()
{
    QFETCH(int, ranks);
    QFETCH(int, straggler);
    KinetoJobSpec spec;
    spec.ranks = ranks;
    spec.straggler = straggler;
    auto merged = ss::mergeJobTraces(parsedJob(spec));
    QVERIFY2(merged.ok(), merged ? "" : merged.error().toString().c_str());
    const ss::Trace& t = merged->trace;
    QVERIFY2(merged->alignment.find("baseTimeNanoseconds") != std::string::npos, merged->alignment.c_str());
    QVERIFY(merged->alignment.find("error unknown") != std::string::npos);
    QCOMPARE(*ss::findSetting(t.info, "collectives"), std::string("3 NCCL calls linked across ranks"));
    QVERIFY2(merged->notes.empty(), merged->notes.empty() ? "" : merged->notes.front().c_str());
    QCOMPARE(int(t.info.devices.size()), ranks);

    const auto calls = ss::collectiveCalls(t);
    QCOMPARE(calls.size(), size_t(3));
    for (const auto& c : calls) {
        QCOMPARE(int(c.spans.size()), ranks);
        for (size_t k = 0; k < c.spans.size(); ++k) {
            QCOMPARE(ss::rankOfTrack(t, t.spans.track[c.spans[k]]), int(k));
            QCOMPARE(t.spans.end[c.spans[k]], c.end); // aligned: NCCL's parts of one call end together
        }
        QCOMPARE(ss::rankOfTrack(t, t.spans.track[c.last]), straggler);
        // The others waited for the straggler's extra compute (the ranks' host threads start 1 µs apart).
        QVERIFY2(std::llabs(c.waitedNs - spec.extraNs) <= 5'000, std::to_string(c.waitedNs).c_str());
    }
    bool named = false;
    for (const auto& d : ss::diagnose(t))
        if (d.rule == "straggler") {
            named = true;
            QVERIFY2(d.message.find("Rank " + std::to_string(straggler) + " reached 3 of 3") != std::string::npos,
                     d.message.c_str());
        }
    QVERIFY(named);
    // The critical path names the early ranks' spinning as a wait for the straggler, not as their own work.
    const ss::CriticalPath path = ss::criticalPath(t);
    for (const auto& seg : path.segments)
        if (seg.waitPart != ss::kNoSpan)
            QCOMPARE(seg.waitRank, straggler);
}

void TestForeignRanks::pytorchRanksByOrder()
{
    KinetoJobSpec spec;
    spec.ranks = 2;
    spec.distributedInfo = false;
    auto refused = ss::mergeJobTraces(parsedJob(spec));
    QVERIFY(!refused.ok());
    QCOMPARE(refused.error().path, std::string("/distributedInfo"));
    QVERIFY(refused.error().message.find("--ranks-by-order") != std::string::npos);
    ss::MergeOptions byOrder;
    byOrder.ranksByOrder = true;
    auto merged = ss::mergeJobTraces(parsedJob(spec), byOrder);
    QVERIFY2(merged.ok(), merged ? "" : merged.error().toString().c_str());
    QCOMPARE(ss::collectiveCalls(merged->trace).size(), size_t(3));
}

void TestForeignRanks::pytorchRefused_data()
{
    QTest::addColumn<QString>("edit");
    QTest::addColumn<QString>("path");
    QTest::addColumn<QString>("message");
    QTest::newRow("rank outside the world") << "rank1"
                                            << "/distributedInfo"
                                            << "rank 5 of world size 2";
    QTest::newRow("rank not a number") << "rankText"
                                       << "/distributedInfo/rank"
                                       << "whole number";
    QTest::newRow("no base time") << "noBase"
                                  << "/baseTimeNanoseconds"
                                  << "cannot be aligned";
    QTest::newRow("duplicate rank") << "duplicate"
                                    << ""
                                    << "rank 0 again";
    QTest::newRow("negative base time") << "negativeBase"
                                        << "/baseTimeNanoseconds"
                                        << "whole number of ns since 1970";
}

void TestForeignRanks::pytorchRefused()
{
    QFETCH(QString, edit);
    QFETCH(QString, path);
    QFETCH(QString, message);
    KinetoJobSpec spec;
    spec.ranks = 2;
    spec.baseTime = edit != QLatin1String("noBase");
    auto texts = ss::testing::kinetoJob(spec);
    const std::string from = "\"rank\": 1,";
    if (edit == QLatin1String("rank1"))
        texts[1].replace(texts[1].find(from), from.size(), "\"rank\": 5,");
    if (edit == QLatin1String("rankText"))
        texts[1].replace(texts[1].find(from), from.size(), "\"rank\": \"one\",");
    if (edit == QLatin1String("duplicate"))
        texts[1] = texts[0];
    const std::string base = "\"baseTimeNanoseconds\": ";
    if (edit == QLatin1String("negativeBase"))
        texts[1].insert(texts[1].find(base) + base.size(), "-");
    std::vector<ss::RankTrace> ranks;
    for (size_t r = 0; r < texts.size(); ++r) {
        const std::string file = "r" + std::to_string(r) + ".json";
        auto t = ss::parsePyTorchTrace(texts[r], file);
        QVERIFY(t.ok());
        ranks.push_back({file, std::move(*t)});
    }
    auto merged = ss::mergeJobTraces(std::move(ranks));
    QVERIFY(!merged.ok());
    QCOMPARE(QString::fromStdString(merged.error().path), path);
    QVERIFY2(merged.error().message.find(message.toStdString()) != std::string::npos,
             merged.error().toString().c_str());
    QVERIFY(!merged.error().file.empty());
}

// Rank 1 ran an all-gather where rank 0 ran its first all-reduce: the streams do not pair up there, and that call is
// left unlinked with a note rather than linked across different collectives.
void TestForeignRanks::ncclCallsThatDoNotPairUp()
{
    KinetoJobSpec spec;
    spec.ranks = 2;
    auto texts = ss::testing::kinetoJob(spec);
    const std::string from = "ncclDevKernel_AllReduce";
    texts[1].replace(texts[1].find(from), from.size(), "ncclDevKernel_AllGather");
    std::vector<ss::RankTrace> ranks;
    for (size_t r = 0; r < texts.size(); ++r)
        ranks.push_back({"r" + std::to_string(r), std::move(*ss::parsePyTorchTrace(texts[r], "r"))});
    auto merged = ss::mergeJobTraces(std::move(ranks));
    QVERIFY(merged.ok());
    QCOMPARE(ss::collectiveCalls(merged->trace).size(), size_t(2));
    QCOMPARE(merged->notes.size(), size_t(1));
    QVERIFY(merged->notes[0].find("1 NCCL calls not linked") != std::string::npos);
}

// Two Nsight Systems exports named by rank; rank 1's session started 3 ms after rank 0's, and its compute took
// 400 µs longer: both all-reduce kernels end at one time on the job's clock, rank 1 is the straggler.
void TestForeignRanks::nsysJob()
{
    if (!ss::nsysSqliteSupported())
        QSKIP("built without SQLite");
    QTemporaryDir dir;
    const int64_t session0 = int64_t(1'796'000'000) * 1'000'000'000;
    const int64_t session1 = session0 + 3'000'000;
    const int64_t ncclEnd = session0 + 10'000'000; // on the wall clock
    const std::string f0 = dir.filePath(QStringLiteral("report.0.sqlite")).toStdString();
    const std::string f1 = dir.filePath(QStringLiteral("report.1.sqlite")).toStdString();
    // Rank 1's session began 3 ms later, so its times are 3 ms smaller for the same wall time.
    QVERIFY(ss::executeSqlScript(f0, nsysRank(session0, 100'000, ncclEnd)).ok());
    QVERIFY(ss::executeSqlScript(f1, nsysRank(session1, 500'000, ncclEnd)).ok());
    // Rank 1's compute ends at 501 µs on its clock, 3.501 ms on the job's; rank 0's at 101 µs: rank 1 arrived last.
    std::vector<ss::RankTrace> ranks;
    for (const std::string& f : {f1, f0}) { // the order given does not matter: the names say the ranks
        auto t = ss::loadNsysSqliteFile(f);
        QVERIFY2(t.ok(), t ? "" : t.error().toString().c_str());
        ranks.push_back({f, std::move(*t)});
    }
    auto merged = ss::mergeJobTraces(std::move(ranks));
    QVERIFY2(merged.ok(), merged ? "" : merged.error().toString().c_str());
    QVERIFY(merged->alignment.find("utcEpochNs") != std::string::npos);
    const auto calls = ss::collectiveCalls(merged->trace);
    QCOMPARE(calls.size(), size_t(1));
    const auto& c = calls[0];
    QCOMPARE(merged->trace.spans.end[c.spans[0]], merged->trace.spans.end[c.spans[1]]);
    QCOMPARE(ss::rankOfTrack(merged->trace, merged->trace.spans.track[c.spans[1]]), 1);
    QCOMPARE(ss::rankOfTrack(merged->trace, merged->trace.spans.track[c.last]), 1);
    QCOMPARE(c.waitedNs, int64_t(3'400'000)); // rank 0 arrived at 101.5 µs, rank 1 at 3.5015 ms

    // Without a number in its name a report has no rank; without its session's start on the wall clock, no clock.
    const std::string unnamed = dir.filePath(QStringLiteral("report.sqlite")).toStdString();
    QVERIFY(QFile::copy(QString::fromStdString(f0), QString::fromStdString(unnamed)));
    std::vector<ss::RankTrace> noRank;
    noRank.push_back({unnamed, std::move(*ss::loadNsysSqliteFile(unnamed))});
    auto refused = ss::mergeJobTraces(std::move(noRank));
    QVERIFY(!refused.ok());
    QVERIFY(refused.error().message.find("--ranks-by-order") != std::string::npos);
    QVERIFY(ss::executeSqlScript(f0, "DELETE FROM TARGET_INFO_SESSION_START_TIME;").ok());
    std::vector<ss::RankTrace> noClock;
    noClock.push_back({f0, std::move(*ss::loadNsysSqliteFile(f0))});
    auto unaligned = ss::mergeJobTraces(std::move(noClock));
    QVERIFY(!unaligned.ok());
    QCOMPARE(unaligned.error().path, std::string("TARGET_INFO_SESSION_START_TIME"));
}

void TestForeignRanks::cliMergesAFolder()
{
    QTemporaryDir dir;
    KinetoJobSpec spec;
    const auto texts = ss::testing::kinetoJob(spec);
    for (size_t r = 0; r < texts.size(); ++r)
        writeFile(dir.filePath(QStringLiteral("worker%1.pt.trace.json").arg(r)), texts[r]);
    const QString out = dir.filePath(QStringLiteral("job.sstrace"));
    const auto merged = runCli({QStringLiteral("merge"), dir.path(), QStringLiteral("-o"), out});
    QVERIFY2(merged.code == 0, qPrintable(merged.describe()));
    QVERIFY2(merged.out.contains(QStringLiteral("collectives: 3 NCCL calls linked across ranks")),
             qPrintable(merged.out));
    QVERIFY(merged.out.contains(QStringLiteral("error unknown")));
    const auto analyzed = runCli({QStringLiteral("analyze"), out});
    QVERIFY2(analyzed.out.contains(QStringLiteral("straggler: Rank 2 reached 3 of 3")), qPrintable(analyzed.out));
    QVERIFY2(analyzed.out.contains(QStringLiteral("in the collective for rank 2")), qPrintable(analyzed.out));
}

void TestForeignRanks::cliRefuses_data()
{
    QTest::addColumn<QString>("kind");
    QTest::addColumn<QString>("message");
    QTest::newRow("mixed formats") << "mixed"
                                   << "a StreamScope trace beside PyTorch profiler traces";
    QTest::newRow("duplicate ranks") << "duplicate"
                                     << "rank 0 again";
    QTest::newRow("missing rank info") << "norank"
                                       << "/distributedInfo";
    QTest::newRow("chrome traces") << "chrome"
                                   << "records neither a rank nor a clock";
}

void TestForeignRanks::cliRefuses()
{
    QFETCH(QString, kind);
    QFETCH(QString, message);
    QTemporaryDir dir;
    KinetoJobSpec spec;
    spec.ranks = 2;
    spec.distributedInfo = kind != QLatin1String("norank");
    auto texts = ss::testing::kinetoJob(spec);
    if (kind == QLatin1String("duplicate"))
        texts[1] = texts[0];
    QStringList files;
    for (size_t r = 0; r < texts.size(); ++r) {
        files << dir.filePath(QStringLiteral("r%1.json").arg(r));
        writeFile(files.back(), texts[r]);
    }
    if (kind == QLatin1String("mixed")) {
        files << dir.filePath(QStringLiteral("sim.json"));
        const auto ran = runCli({QStringLiteral("run"), QStringLiteral("01"), QStringLiteral("-o"), files.back()});
        QVERIFY2(ran.code == 0, qPrintable(ran.describe()));
    }
    if (kind == QLatin1String("chrome")) {
        files.clear();
        for (int r = 0; r < 2; ++r) {
            files << dir.filePath(QStringLiteral("c%1.json").arg(r));
            writeFile(files.back(),
                      R"({"traceEvents": [{"ph": "X", "name": "k", "pid": 1, "tid": 1, "ts": 0, "dur": 5}]})");
        }
    }
    const auto merged = runCli(QStringList{QStringLiteral("merge")} << files << QStringLiteral("-o")
                                                                    << dir.filePath(QStringLiteral("job.json")));
    QCOMPARE(merged.code, 2);
    QVERIFY2(merged.err.contains(message), qPrintable(merged.describe()));
    QVERIFY2(merged.err.contains(QStringLiteral(".json")), qPrintable(merged.err)); // names the file
    QVERIFY(!QFile::exists(dir.filePath(QStringLiteral("job.json"))));
}

QTEST_GUILESS_MAIN(TestForeignRanks)
#include "tst_foreign_ranks.moc"
