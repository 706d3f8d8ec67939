// Nsight Systems SQLite exports built from the documented schema: two processes, every table the importer reads,
// errors, hostile and corrupt databases, and builds without SQLite.
#include "import_export_fixtures.h"

#include <QTest>

class TestNsysSqlite : public QObject {
    Q_OBJECT

private slots:
    // ---- Nsight Systems SQLite

    // Two processes whose main threads share a name (an MPI job, a data loader): their rows are told apart by pid.
    void nsysTwoProcesses()
    {
        if (!nsysSqliteSupported())
            QSKIP("built without SQLite3 (libsqlite3-dev)");
        QTemporaryDir dir;
        const std::string db = dir.filePath(QStringLiteral("two.sqlite")).toStdString();
        // Process 5000, thread 5000: globalTid = (1 << 56) + (pid << 24) + tid, as Nsight Systems encodes it.
        const std::string second = "INSERT INTO ThreadNames VALUES (20, 0, 72057677924012936);\n"
                                   "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES "
                                   "(1200, 1300, 0, 72057677924012936, 100, 11, 0, NULL);\n";
        const Status made = executeSqlScript(db, kNsysSchema + kNsysRows + second);
        QVERIFY2(made.ok(), made.error().toString().c_str());
        auto r = importTraceFile(db);
        QVERIFY2(r.ok(), r.error().toString().c_str());
        std::set<std::string> hostRows;
        for (const auto& tr : r->tracks)
            if (tr.kind == TrackKind::HostThread)
                hostRows.insert(tr.name);
        QVERIFY2(hostRows.count("main (pid 4321)") && hostRows.count("main (pid 5000)"),
                 [&] {
                     std::string all;
                     for (const auto& h : hostRows)
                         all += h + "; ";
                     return all;
                 }()
                     .c_str());
    }

    void nsysSqlite()
    {
        if (!nsysSqliteSupported())
            QSKIP("built without SQLite3 (libsqlite3-dev)");
        QTemporaryDir dir;
        const std::string db = dir.filePath(QStringLiteral("report.sqlite")).toStdString();
        const Status made = executeSqlScript(db, kNsysSchema + kNsysRows);
        QVERIFY2(made.ok(), made.error().toString().c_str());
        QCOMPARE(n(detectTraceFormat(db)), n(TraceFormat::NsysSqlite));
        auto r = importTraceFile(db);
        QVERIFY2(r.ok(), r.error().toString().c_str());
        const Trace& t = *r;
        QCOMPARE(q(t.info.backend), QStringLiteral("nsys"));
        QCOMPARE(q(t.info.host), QStringLiteral("gpu-node-7"));
        QCOMPARE(q(t.info.date), QStringLiteral("2025-11-30T05:57:34Z"));
        QCOMPARE(t.info.devices.size(), size_t(1));
        QCOMPARE(q(t.info.devices[0].name), QStringLiteral("NVIDIA H200"));
        std::map<std::string, std::string> props(t.info.devices[0].properties.begin(),
                                                 t.info.devices[0].properties.end());
        QCOMPARE(q(props["sm_count"]), QStringLiteral("132"));
        QCOMPARE(q(props["compute_capability"]), QStringLiteral("9.0"));
        // Tracks: host threads by name (the global tid's low 24 bits), then streams of device 0.
        QCOMPARE(t.tracks.size(), size_t(4));
        QCOMPARE(q(t.tracks[0].name), QStringLiteral("main"));
        QCOMPARE(t.tracks[0].id, int64_t(4321 + 0x000000)); // 72057666532282593 & 0xffffff
        QCOMPARE(q(t.tracks[1].name), QStringLiteral("loader"));
        QCOMPARE(q(t.tracks[2].name), QStringLiteral("stream 7"));
        QCOMPARE(q(t.tracks[3].name), QStringLiteral("stream 14"));
        QCOMPARE(countSpans(t, "stream 7", 0, {SpanKind::Kernel}), 1);
        QCOMPARE(countSpans(t, "stream 7", 0, {SpanKind::Memset}), 1);
        QCOMPARE(countSpans(t, "stream 14", 0, {SpanKind::Kernel}), 1);
        QCOMPARE(countSpans(t, "stream 14", 0, {SpanKind::MemcpyH2D}), 1);
        QCOMPARE(countSpans(t, "stream 14", 0, {SpanKind::MemcpyD2H}), 1);
        QCOMPARE(countSpans(t, "main", -2, {SpanKind::ApiCall}), 6);
        QCOMPARE(countSpans(t, "main", -2, {SpanKind::Sync}), 1);
        QCOMPARE(countSpans(t, "loader", -2, {SpanKind::ApiCall}), 1);
        QCOMPARE(countSpans(t, "loader", -2, {SpanKind::Sync}), 1);
        for (uint32_t i = 0; i < t.spanCount(); ++i) {
            const std::string name(t.spanName(i));
            QVERIFY2(name.find("_v3020") == std::string::npos && name.find("_v7000") == std::string::npos,
                     name.c_str());
            if (t.spans.kind[i] == SpanKind::Kernel && t.spans.start[i] == 2000) {
                QCOMPARE(q(name), QStringLiteral("void k1<float>(float*)"));
                QVERIFY(t.spans.gridOf(i) == (Dim3{264, 1, 1}));
                QVERIFY(t.spans.blockOf(i) == (Dim3{256, 1, 1}));
            }
            if (t.spans.kind[i] == SpanKind::MemcpyH2D) {
                QCOMPARE(q(name), QStringLiteral("Memcpy HtoD (Pinned -> Device)"));
                QCOMPARE(t.spans.bytesOf(i), int64_t(4194304));
            }
            if (t.spans.kind[i] == SpanKind::MemcpyD2H)
                QCOMPARE(q(name), QStringLiteral("Memcpy DtoH (Device -> Pageable)"));
        }
        QCOMPARE(flowNames(t, FlowKind::Launch),
                 (QStringList{QStringLiteral("cudaLaunchKernel -> k2_kernel"),
                              QStringLiteral("cudaLaunchKernel -> void k1<float>(float*)"),
                              QStringLiteral("cudaMemcpyAsync -> Memcpy DtoH (Device -> Pageable)"),
                              QStringLiteral("cudaMemcpyAsync -> Memcpy HtoD (Pinned -> Device)"),
                              QStringLiteral("cudaMemsetAsync -> Memset (Device)")}));
        QCOMPARE(flowNames(t, FlowKind::Event), QStringList{QStringLiteral("void k1<float>(float*) -> k2_kernel")});
        QCOMPARE(flowNames(t, FlowKind::Sync),
                 (QStringList{QStringLiteral("Memcpy DtoH (Device -> Pageable) -> cudaDeviceSynchronize"),
                              // the D2H of the other thread came after the call began: not waited for
                              QStringLiteral("Memcpy HtoD (Pinned -> Device) -> cudaStreamSynchronize")}));
    }

    void nsysSqliteErrors_data()
    {
        QTest::addColumn<QString>("sql");
        QTest::addColumn<QString>("where");
        QTest::addColumn<QString>("message");
        QTest::newRow("end before start")
            << QStringLiteral("UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET end = 10 WHERE start = 5100;")
            << QStringLiteral("CUPTI_ACTIVITY_KIND_KERNEL row 2") << QStringLiteral("end before start (10 < 5100)");
        QTest::newRow("unknown name") << QStringLiteral(
            "UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET nameId = 99 WHERE correlationId = 3;")
                                      << QStringLiteral("CUPTI_ACTIVITY_KIND_RUNTIME row 3")
                                      << QStringLiteral("name id 99 is not in StringIds");
        QTest::newRow("text time") << QStringLiteral(
            "CREATE TABLE m AS SELECT * FROM CUPTI_ACTIVITY_KIND_MEMSET; DROP TABLE "
            "CUPTI_ACTIVITY_KIND_MEMSET; CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start, end, "
            "deviceId, streamId, bytes); INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET VALUES "
            "(1, 2, 0, 7, 8), ('soon', 9, 0, 7, 8);")
                                   << QStringLiteral("CUPTI_ACTIVITY_KIND_MEMSET row 2")
                                   << QStringLiteral("start is not an integer");
        QTest::newRow("no cuda tables") << QStringLiteral(
            "DROP TABLE CUPTI_ACTIVITY_KIND_KERNEL; DROP TABLE CUPTI_ACTIVITY_KIND_MEMCPY; DROP "
            "TABLE CUPTI_ACTIVITY_KIND_MEMSET; DROP TABLE CUPTI_ACTIVITY_KIND_RUNTIME;")
                                        << QString() << QStringLiteral("without CUDA activity tables");
    }
    void nsysSqliteErrors()
    {
        if (!nsysSqliteSupported())
            QSKIP("built without SQLite3 (libsqlite3-dev)");
        QFETCH(QString, sql);
        QFETCH(QString, where);
        QFETCH(QString, message);
        QTemporaryDir dir;
        const std::string db = dir.filePath(QStringLiteral("bad.sqlite")).toStdString();
        const Status made = executeSqlScript(db, kNsysSchema + kNsysRows + sql.toStdString());
        QVERIFY2(made.ok(), made.error().toString().c_str());
        auto r = importTraceFile(db);
        QVERIFY(!r.ok());
        QCOMPARE(q(r.error().file), q(db));
        QCOMPARE(q(r.error().path), where);
        QVERIFY2(q(r.error().message).contains(message), r.error().toString().c_str());
    }

    // A database is a program as much as data: views that never return, or return rows without end, and ids
    // that fit no int are refused with the table and the limit, within the budget.
    void nsysSqliteHostile_data()
    {
        QTest::addColumn<QString>("sql");
        QTest::addColumn<QString>("where");
        QTest::addColumn<QString>("message");
        const QString endless = QStringLiteral("DROP TABLE StringIds; CREATE VIEW StringIds AS WITH RECURSIVE "
                                               "c(id) AS (SELECT 1 UNION ALL SELECT id + 1 FROM c) ");
        QTest::newRow("rows without end")
            << endless + QStringLiteral("SELECT id, 'x' AS value FROM c;") << QStringLiteral("StringIds")
            << QStringLiteral("more than 100000 rows read from the database; the "
                              "limit is 100000");
        QTest::newRow("never returns") << endless + QStringLiteral("SELECT id, 'x' AS value FROM c WHERE id < 0;")
                                       << QStringLiteral("StringIds") << QStringLiteral("more than 1 s inside SQLite");
        QTest::newRow("device 2^40") << QStringLiteral(
            "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET deviceId = 1099511627776 WHERE start = 5100;")
                                     << QStringLiteral("CUPTI_ACTIVITY_KIND_KERNEL row 2")
                                     << QStringLiteral("device 1099511627776 is out of range");
        QTest::newRow("gpu 2^40") << QStringLiteral("UPDATE TARGET_INFO_GPU SET cuDevice = 1099511627776;")
                                  << QStringLiteral("TARGET_INFO_GPU row 1")
                                  << QStringLiteral("device 1099511627776 is out of range");
        QTest::newRow("threads") << QStringLiteral("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME WITH RECURSIVE c(x) AS "
                                                   "(SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 200001) SELECT "
                                                   "10 * x, 10 * x + 5, 0, (7 << 24) + x, NULL, 10, 0, NULL FROM c;")
                                 << QStringLiteral("CUPTI_ACTIVITY_KIND_RUNTIME row 200006")
                                 << QStringLiteral("too many tracks: more than 200000");
    }
    void nsysSqliteHostile()
    {
        if (!nsysSqliteSupported())
            QSKIP("built without SQLite3 (libsqlite3-dev)");
        QFETCH(QString, sql);
        QFETCH(QString, where);
        QFETCH(QString, message);
        QTemporaryDir dir;
        const std::string db = dir.filePath(QStringLiteral("hostile.sqlite")).toStdString();
        const Status made = executeSqlScript(db, kNsysSchema + kNsysRows + sql.toStdString());
        QVERIFY2(made.ok(), made.error().toString().c_str());
        NsysLimits limits;
        limits.maxRows = 100000;
        limits.maxQuerySeconds = 1;
        if (QTest::currentDataTag() == QByteArrayLiteral("threads"))
            limits = NsysLimits{};
        auto r = loadNsysSqliteFile(db, limits);
        QVERIFY(!r.ok());
        QCOMPARE(q(r.error().file), q(db));
        QCOMPARE(q(r.error().path), where);
        QVERIFY2(q(r.error().message).contains(message), r.error().toString().c_str());
    }

    void nsysSqliteCorrupt()
    {
        if (!nsysSqliteSupported())
            QSKIP("built without SQLite3 (libsqlite3-dev)");
        QTemporaryDir dir;
        const std::string db = dir.filePath(QStringLiteral("r.sqlite")).toStdString();
        QVERIFY(executeSqlScript(db, kNsysSchema + kNsysRows).ok());
        const std::string bytes = readFile(db);
        // A database cut short, and one with its pages overwritten after the header: errors, never a crash.
        for (size_t at : {size_t(100), size_t(4096), bytes.size() / 2}) {
            const std::string cutPath = dir.filePath(QStringLiteral("cut.sqlite")).toStdString();
            QVERIFY(writeFile(cutPath, cut(bytes, at)));
            auto r = importTraceFile(cutPath);
            if (!r.ok())
                QVERIFY2(!r.error().message.empty(), r.error().toString().c_str());
        }
        std::string garbled = bytes;
        std::mt19937 rng(7);
        for (size_t i = 100; i < garbled.size(); i += 1 + rng() % 64)
            garbled[i] = char(rng());
        const std::string garbledPath = dir.filePath(QStringLiteral("garbled.sqlite")).toStdString();
        QVERIFY(writeFile(garbledPath, garbled));
        auto r = importTraceFile(garbledPath);
        if (!r.ok())
            QVERIFY2(!r.error().message.empty(), r.error().toString().c_str());
    }

    void sqliteWithoutSupport()
    {
        if (nsysSqliteSupported())
            QSKIP("this build reads SQLite; the message for builds without it is tested where they are made");
        QTemporaryDir dir;
        const std::string db = dir.filePath(QStringLiteral("r.sqlite")).toStdString();
        QVERIFY(writeFile(db, std::string("SQLite format 3\0", 16) + std::string(4080, '\0')));
        auto r = importTraceFile(db);
        QVERIFY(!r.ok());
        QVERIFY2(q(r.error().message).contains(QStringLiteral("without SQLite support")), r.error().toString().c_str());
    }
};

QTEST_GUILESS_MAIN(TestNsysSqlite)
#include "tst_nsys_sqlite.moc"
