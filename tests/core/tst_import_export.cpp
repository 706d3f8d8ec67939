// Importers and exporters: CSV, format detection, bad input of every kind, compressed and huge traces, the export API.
// Chrome traces are tested in tst_chrome_trace, PyTorch traces in tst_pytorch_trace, Nsight Systems exports in
// tst_nsys_sqlite (fixtures shared in import_export_fixtures.h).
#include "import_export_fixtures.h"

#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <atomic>

#ifdef STREAMSCOPE_TEST_ZLIB
#include <zlib.h>
#endif

class TestImportExport : public QObject {
    Q_OBJECT

private slots:
    // ---- progress and Cancel (the window's status bar while a big trace opens)

    void progressAndCancel()
    {
        Trace t;
        const uint32_t host = t.addTrack({TrackKind::HostThread, "main"});
        const uint32_t s = t.addTrack({TrackKind::Stream, "s1", 0});
        for (int64_t i = 0; i < 100'000; ++i) {
            const uint32_t api = t.addSpan({host, SpanKind::ApiCall, "cudaLaunchKernel", i * 1000, i * 1000 + 300});
            const uint32_t k = t.addSpan({s, SpanKind::Kernel, "kernel", i * 1000 + 400, i * 1000 + 900});
            t.addFlow(api, k, FlowKind::Launch);
        }
        t.finalize();
        QTemporaryDir dir;
        for (const ExportFormat format : {ExportFormat::Streamscope, ExportFormat::Chrome}) {
            const std::string path = dir.filePath(QStringLiteral("big.json")).toStdString();
            QVERIFY(exportTrace(t, path, format).ok());
            QVERIFY(fs::file_size(path) > (size_t(8) << 20)); // several steps of 4 MiB
            std::vector<double> seen;
            ImportProgress progress;
            progress.report = [&](double f) { seen.push_back(f); };
            auto back = importTraceFile(path, progress);
            QVERIFY2(back.ok(), back.error().toString().c_str());
            QCOMPARE(back->spanCount(), t.spanCount());
            QVERIFY2(seen.size() >= 3, qPrintable(QString::number(seen.size())));
            QVERIFY(std::is_sorted(seen.begin(), seen.end()));
            QVERIFY(seen.front() >= 0 && seen.front() < 1);
            QCOMPARE(seen.back(), 1.0);
            // Cancel at the first report: the import stops with "cancelled".
            std::atomic<bool> cancel{false};
            int reports = 0;
            progress.cancel = &cancel;
            progress.report = [&](double) {
                ++reports;
                cancel = true;
            };
            auto stopped = importTraceFile(path, progress);
            QVERIFY(!stopped.ok());
            QCOMPARE(q(stopped.error().message), QStringLiteral("cancelled"));
            QCOMPARE(reports, 1);
        }
    }

    // ---- CSV

    void csvExport()
    {
        Trace t;
        const uint32_t host = t.addTrack({TrackKind::HostThread, "main"});
        const uint32_t s = t.addTrack({TrackKind::Stream, "s,1", 2});
        const uint32_t api = t.addSpan({host, SpanKind::ApiCall, "cudaMemcpyAsync", 10, 20});
        const uint32_t copy = t.addSpan({s, SpanKind::MemcpyH2D, "copy \"a\"\nb", 30, 40, -1, -1, -1, 4096});
        t.addSpan({s, SpanKind::Kernel, "k", 41, 50});
        t.addFlow(api, copy, FlowKind::Launch);
        t.finalize();
        const std::string csv = traceToCsv(t);
        QCOMPARE(q(csv),
                 QStringLiteral("device,stream,thread,kind,name,start_ns,end_ns,bytes\r\n"
                                ",,main,api-call,cudaMemcpyAsync,10,20,0\r\n"
                                "2,\"s,1\",main,memcpy-h2d,\"copy \"\"a\"\"\nb\",30,40,4096\r\n"
                                "2,\"s,1\",,kernel,k,41,50,0\r\n"));
        QCOMPARE(n(detectTraceFormatFromContent(csv)), n(TraceFormat::Csv));
        // Reading it back: the same spans on the same tracks.
        auto back = importTraceText(csv, "t.csv");
        QVERIFY2(back.ok(), back.error().toString().c_str());
        QCOMPARE(back->spanCount(), size_t(3));
        QCOMPARE(back->tracks.size(), size_t(2));
        QCOMPARE(traceToCsv(*back),
                 std::string("device,stream,thread,kind,name,start_ns,end_ns,bytes\r\n"
                             ",,main,api-call,cudaMemcpyAsync,10,20,0\r\n"
                             "2,\"s,1\",,memcpy-h2d,\"copy \"\"a\"\"\nb\",30,40,4096\r\n"
                             "2,\"s,1\",,kernel,k,41,50,0\r\n"));
    }

    void csvRowsOfRecordedTraces()
    {
        // One row per span, in order; every row has eight fields and the kind names of the model.
        for (const auto& e : fs::directory_iterator(kSource / "tests" / "data" / "h200")) {
            if (e.path().extension() != ".json")
                continue;
            auto loaded = loadTraceFile(e.path().string());
            QVERIFY2(loaded.ok(), loaded.error().toString().c_str());
            const std::string csv = traceToCsv(*loaded);
            auto back = parseCsvTrace(csv, "x.csv");
            QVERIFY2(back.ok(), back.error().toString().c_str());
            QCOMPARE(back->spanCount(), loaded->spanCount());
            size_t rows = 0;
            for (size_t i = 0; i + 1 < csv.size(); ++i)
                rows += csv[i] == '\r' && csv[i + 1] == '\n';
            QCOMPARE(rows, loaded->spanCount() + 1);
            // The same spans per stream, by kind and time.
            std::multiset<std::tuple<std::string, int, int64_t, int64_t, int64_t>> a, b;
            for (const Trace* t : {&*loaded, &*back})
                for (uint32_t i = 0; i < t->spanCount(); ++i) {
                    const Track& tr = t->tracks[t->spans.track[i]];
                    (t == &*loaded ? a : b)
                        .insert({tr.name + "/" + std::string(t->spanName(i)), int(t->spans.kind[i]), t->spans.start[i],
                                 t->spans.end[i], t->spans.bytesOf(i)});
                }
            QVERIFY(a == b);
        }
    }

    void csvErrors_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("where");
        QTest::addColumn<QString>("message");
        const QString h = QStringLiteral("device,stream,thread,kind,name,start_ns,end_ns,bytes\r\n");
        QTest::newRow("header") << QStringLiteral("device,stream,thread,kind,name,start,end,bytes\r\n")
                                << QStringLiteral("row 1") << QStringLiteral("the header must be");
        QTest::newRow("fields") << h + QStringLiteral("0,s,,kernel,k,1,2\r\n") << QStringLiteral("row 2")
                                << QStringLiteral("expected 8 fields");
        QTest::newRow("kind") << h + QStringLiteral("0,s,,kernal,k,1,2,0\r\n") << QStringLiteral("row 2, kind")
                              << QStringLiteral("unknown span kind \"kernal\"");
        QTest::newRow("start") << h + QStringLiteral(",,t,api-call,k,1.5,2,0\r\n") << QStringLiteral("row 2, start_ns")
                               << QStringLiteral("must be an integer");
        QTest::newRow("order") << h + QStringLiteral(",,t,api-call,k,1,2,0\r\n,,t,sync,k,9,3,0\r\n")
                               << QStringLiteral("row 3, end_ns") << QStringLiteral("end before start (3 < 9)");
        QTest::newRow("quote") << h + QStringLiteral(",,t,api-call,\"k,1,2,0\r\n") << QStringLiteral("row 2")
                               << QStringLiteral("a quoted field is not closed");
        QTest::newRow("stray quote") << h + QStringLiteral(",,t,api-call,k\"x,1,2,0\r\n")
                                     << QStringLiteral("row 2, field 5") << QStringLiteral("double quote inside");
        QTest::newRow("negative bytes") << h + QStringLiteral("0,s,,memcpy-h2d,c,1,2,-8\r\n")
                                        << QStringLiteral("row 2, bytes") << QStringLiteral("must not be negative");
        QTest::newRow("device 2^40") << h + QStringLiteral("1099511627776,s,,kernel,k,1,2,0\r\n")
                                     << QStringLiteral("row 2, device") << QStringLiteral("must be a device index");
        QString devices = h;
        for (int d = 0; d <= 1024; ++d)
            devices += QStringLiteral("%1,s,,kernel,k,1,2,0\r\n").arg(d);
        QTest::newRow("1025 devices") << devices << QStringLiteral("row 1026, device")
                                      << QStringLiteral("too many devices: more than 1024; the limit is 1024");
    }
    void csvErrors()
    {
        QFETCH(QString, text);
        QFETCH(QString, where);
        QFETCH(QString, message);
        auto r = parseCsvTrace(text.toStdString(), "t.csv");
        QVERIFY(!r.ok());
        QCOMPARE(q(r.error().file), QStringLiteral("t.csv"));
        QCOMPARE(q(r.error().path), where);
        QVERIFY2(q(r.error().message).contains(message), r.error().toString().c_str());
    }

    // ---- detection and the API

    void detection_data()
    {
        QTest::addColumn<QByteArray>("prefix");
        QTest::addColumn<QString>("format");
        QTest::newRow("native") << QByteArray(R"({"format": "streamscope-trace", "version": 1})")
                                << QStringLiteral("streamscope");
        QTest::newRow("native, format late")
            << QByteArray(R"({"version": 1, "info": {"x": [1]}, "format": "s")") << QStringLiteral("streamscope");
        QTest::newRow("scenario") << QByteArray(R"({"format": "streamscope-scenario"})")
                                  << QStringLiteral("streamscope");
        QTest::newRow("chrome object") << QByteArray(R"( {"traceEvents": [{"ph": "X"}]})") << QStringLiteral("chrome");
        QTest::newRow("chrome, key inside")
            << QByteArray(R"({"otherData": {"format": "x"}, "traceEvents": [)") << QStringLiteral("chrome");
        QTest::newRow("chrome array") << QByteArray(R"([{"ph": "X", "cat": "kernel"})") << QStringLiteral("chrome");
        QTest::newRow("pytorch") << QByteArray(R"({"schemaVersion": 1, "deviceProperties": [)")
                                 << QStringLiteral("pytorch");
        QTest::newRow("pytorch by category")
            << QByteArray(R"({"traceEvents": [{"ph": "X", "cat": "cuda_runtime", "args": {"External id": 1}}]})")
            << QStringLiteral("pytorch");
        QTest::newRow("sqlite") << QByteArray("SQLite format 3\0\x10\0", 19) << QStringLiteral("nsys-sqlite");
        QTest::newRow("csv") << QByteArray("device,stream,thread,kind,name,start_ns,end_ns,bytes\r\n")
                             << QStringLiteral("csv");
        QTest::newRow("empty") << QByteArray() << QStringLiteral("unknown");
        QTest::newRow("text") << QByteArray("hello") << QStringLiteral("unknown");
        QTest::newRow("gzip") << QByteArray("\x1f\x8b\x08\0", 4) << QStringLiteral("unknown");
    }
    void detection()
    {
        QFETCH(QByteArray, prefix);
        QFETCH(QString, format);
        QCOMPARE(n(detectTraceFormatFromContent(std::string_view(prefix.constData(), size_t(prefix.size())))), format);
    }

    // Files other writers make: "traceEvents" after more than the detection prefix of other keys (Python's
    // json.dump(sort_keys=True)), and a complete event without "dur" (kept as an instant, counted).
    void otherWritersFiles()
    {
        std::string padding(100 * 1024, 'x');
        const std::string sorted = "{\"aaa\": \"" + padding
            + "\", \"displayTimeUnit\": \"ns\", \"traceEvents\": ["
              "{\"ph\": \"X\", \"name\": \"k\", \"cat\": \"kernel\", \"pid\": 1, \"tid\": 7, \"ts\": 1, \"dur\": 2},"
              "{\"ph\": \"X\", \"name\": \"lost\", \"cat\": \"kernel\", \"pid\": 1, \"tid\": 7, \"ts\": 5}]}";
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString path = dir.filePath(QStringLiteral("sorted.json"));
        {
            QFile f(path);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(sorted.data(), qint64(sorted.size()));
        }
        QCOMPARE(n(detectTraceFormat(path.toStdString())), QStringLiteral("chrome"));
        auto t = importTraceFile(path.toStdString());
        QVERIFY2(t.ok(), t.ok() ? "" : t.error().toString().c_str());
        QCOMPARE(t->spanCount(), size_t(2));
        bool instant = false;
        for (uint32_t i = 0; i < t->spanCount(); ++i)
            instant = instant || (t->spanName(i) == "lost" && t->duration(i) == 0);
        QVERIFY(instant);
        bool counted = false;
        for (const auto& [k, v] : t->info.settings)
            counted = counted || (k == "x_events_without_dur" && v.rfind("1 ", 0) == 0);
        QVERIFY(counted);
        auto fromText = importTraceText(sorted, "sorted.json");
        QVERIFY2(fromText.ok(), fromText.ok() ? "" : fromText.error().toString().c_str());
        QCOMPARE(fromText->spanCount(), size_t(2));
    }

    // Kineto traces from before 2022 name their categories "Runtime", "Kernel", "Memcpy": API calls and launch arrows
    // are read as from today's.
    void oldKinetoCategories()
    {
        const std::string text =
            "{\"traceEvents\": ["
            "{\"ph\": \"X\", \"cat\": \"Runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 9, \"tid\": 9, "
            "\"ts\": 10, \"dur\": 4, \"args\": {\"correlation\": 7, \"External id\": 3}},"
            "{\"ph\": \"X\", \"cat\": \"Kernel\", \"name\": \"k\", \"pid\": 0, \"tid\": 7, \"ts\": 20, \"dur\": 5, "
            "\"args\": {\"correlation\": 7, \"device\": 0, \"stream\": 7, \"External id\": 3}},"
            "{\"ph\": \"X\", \"cat\": \"Runtime\", \"name\": \"cudaDeviceSynchronize\", \"pid\": 9, \"tid\": 9, "
            "\"ts\": 15, \"dur\": 12, \"args\": {\"correlation\": 8, \"External id\": 4}}]}";
        QCOMPARE(n(detectTraceFormatFromContent(text)), QStringLiteral("pytorch"));
        auto t = importTraceText(text, "old-kineto.json");
        QVERIFY2(t.ok(), t.ok() ? "" : t.error().toString().c_str());
        size_t calls = 0, syncs = 0, launches = 0;
        for (uint32_t i = 0; i < t->spanCount(); ++i) {
            calls += t->spans.kind[i] == SpanKind::ApiCall;
            syncs += t->spans.kind[i] == SpanKind::Sync;
        }
        for (const auto& f : t->flows)
            launches += f.kind == FlowKind::Launch;
        QCOMPARE(calls, size_t(1));
        QCOMPARE(syncs, size_t(1));
        QCOMPARE(launches, size_t(1));
    }

    void importErrors_data()
    {
        QTest::addColumn<QByteArray>("content");
        QTest::addColumn<QString>("where");
        QTest::addColumn<QString>("message");
        QTest::newRow("empty") << QByteArray() << QString() << QStringLiteral("the file is empty");
        QTest::newRow("gzip") << QByteArray("\x1f\x8b\x08\0\0\0", 6) << QString()
                              << QStringLiteral("a gzip-compressed file");
        QTest::newRow("text") << QByteArray("hello") << QString() << QStringLiteral("not a trace StreamScope can read");
        QTest::newRow("negative dur") << QByteArray(R"({"traceEvents": [{"ph": "X", "ts": 1, "dur": -2}]})")
                                      << QStringLiteral("byte 17") << QStringLiteral("negative \"dur\"");
        QTest::newRow("ts type") << QByteArray(R"({"traceEvents": [{"ph": "X", "ts": true, "dur": 2}]})")
                                 << QStringLiteral("byte 35") << QStringLiteral("\"ts\" must be a number");
        QTest::newRow("event type") << QByteArray(R"({"traceEvents": [1, 2]})") << QStringLiteral("byte 17")
                                    << QStringLiteral("an event must be a JSON object");
        QTest::newRow("duplicate ts") << QByteArray(R"({"traceEvents": [{"ph": "X", "ts": 1, "dur": 2, "ts": 5}]})")
                                      << QStringLiteral("byte 54")
                                      << QStringLiteral("duplicate key \"ts\" in an event");
        QTest::newRow("duplicate pid") << QByteArray(R"({"traceEvents": [{"pid": 1, "ph": "X", "pid": 2}]})")
                                       << QStringLiteral("byte 46") << QStringLiteral("duplicate key \"pid\"");
        QTest::newRow("events type") << QByteArray(R"({"traceEvents": {}})") << QStringLiteral("byte 16")
                                     << QStringLiteral("\"traceEvents\" must be an array");
        QTest::newRow("no events") << QByteArray(R"({"traceEvents2": [], "otherData": {}, "x": 1})") << QString()
                                   << QStringLiteral("a JSON object without \"traceEvents\"");
        QTest::newRow("no events, late key")
            << QByteArray(R"({"otherData": {}, "traceEvents": 5})") << QStringLiteral("byte 33")
            << QStringLiteral("\"traceEvents\" must be an array");
        QTest::newRow("missing comma") << QByteArray(R"({"traceEvents": [{"ph": "X" "ts": 1}]})")
                                       << QStringLiteral("byte 28") << QStringLiteral("expected '}' or ','");
        QTest::newRow("trailing text") << QByteArray(R"({"traceEvents": []} x)") << QStringLiteral("byte 20")
                                       << QStringLiteral("unexpected text after the end");
        // Not raw strings: moc does not understand them and counts their unbalanced braces.
        QTest::newRow("truncated object")
            << QByteArray("{\"traceEvents\": [{\"ph\": \"X\", \"ts\": 1, \"dur\": 2}, {\"ph")
            << QStringLiteral("byte 53") << QStringLiteral("unexpected end of file");
        QTest::newRow("truncated array") << QByteArray("[{\"ph\": \"X\", \"ts\": 1, \"dur\": 2}, {\"ph\": \"X\", \"ts")
                                         << QStringLiteral("byte 48") << QStringLiteral("unexpected end of file");
        QTest::newRow("control char") << QByteArray("{\"traceEvents\": [{\"name\": \"a\x01\"}]}")
                                      << QStringLiteral("byte 28") << QStringLiteral("control character");
        QTest::newRow("bad escape") << QByteArray(R"({"traceEvents": [{"name": "a\q"}]})") << QStringLiteral("byte 29")
                                    << QStringLiteral("unknown escape");
        QTest::newRow("deep") << QByteArray("{\"traceEvents\": [{\"args\": " + QByteArray(300, '[')
                                            + QByteArray(300, ']') + "}]}")
                              << QStringLiteral("byte 283") << QStringLiteral("nested deeper than 256");
        QTest::newRow("grid range") << QByteArray(
            R"({"traceEvents": [{"ph": "X", "ts": 1, "dur": 1, "args": {"grid": [1, -1, 1]}}]})")
                                    << QStringLiteral("byte 69") << QStringLiteral("args.grid is out of range");
        QTest::newRow("own export version") << QByteArray(
            R"({"traceEvents": [], "otherData": {"streamscope": {"format": "streamscope-chrome-export", "version": 9}}})")
                                            << QStringLiteral("/otherData/streamscope/version")
                                            << QStringLiteral("unsupported version 9");
        QTest::newRow("own export header") << QByteArray(
            R"({"traceEvents": [], "otherData": {"streamscope": {"format": "streamscope-chrome-export", "version": 1, "trace": {"format": "streamscope-trace", "version": 1, "info": {}, "strings": [], "span_kinds": [], "flow_kinds": [], "tracks": [{"kind": "tram"}], "spans": {"track": [], "kind": [], "name": [], "start": [], "end": []}, "flows": {"from": [], "to": [], "kind": []}}}}})")
                                           << QStringLiteral("/otherData/streamscope/trace/tracks/0/kind")
                                           << QStringLiteral("unknown track kind");
        QTest::newRow("pytorch devices") << QByteArray(
            R"({"schemaVersion": 1, "deviceProperties": {"id": 0}, "traceEvents": []})")
                                         << QStringLiteral("/deviceProperties") << QStringLiteral("must be an array");
        QTest::newRow("native") << QByteArray(R"({"format": "streamscope-trace", "version": 2})")
                                << QStringLiteral("/version") << QStringLiteral("unsupported version 2");
        // Ids and devices that fit no integer are errors, never folded into another value (nor UB: 4e42).
        QTest::newRow("device 2^31") << QByteArray(
            "{\"traceEvents\": [{\"ph\": \"X\", \"ts\": 1, \"dur\": 1, \"args\": {\"device\": 2147483648}}]}")
                                     << QStringLiteral("byte 66")
                                     << QStringLiteral("args.device: device 2147483648 is out of range");
        QTest::newRow("device 2^63-1") << QByteArray(
            "{\"traceEvents\": [{\"ph\": \"X\", \"ts\": 1, \"dur\": 1, \"args\": {\"device\": "
            "9223372036854775807}}]}") << QStringLiteral("byte 66")
                                       << QStringLiteral("device 9223372036854775807 is out of range");
        QTest::newRow("pid 1e300") << QByteArray(
            "{\"traceEvents\": [{\"ph\": \"X\", \"ts\": 1, \"dur\": 1, \"pid\": 1e300}]}")
                                   << QStringLiteral("byte 55")
                                   << QStringLiteral("a numeric id (from -2^63 to 2^63-1) is out of range");
        QTest::newRow("tid 4e42") << QByteArray(
            "{\"traceEvents\": [{\"ph\": \"X\", \"ts\": 1, \"dur\": 1, \"tid\": 4e42}]}")
                                  << QStringLiteral("byte 55") << QStringLiteral("is out of range");
        QTest::newRow("flow id 2^64") << QByteArray(
            "{\"traceEvents\": [{\"ph\": \"s\", \"ts\": 1, \"id\": 18446744073709551616}]}")
                                      << QStringLiteral("byte 44") << QStringLiteral("is out of range");
        QTest::newRow("pytorch device 2^40")
            << QByteArray("{\"schemaVersion\": 1, \"traceEvents\": [{\"ph\": \"X\", \"cat\": \"kernel\", \"ts\": 1, "
                          "\"dur\": 1, \"pid\": 1099511627776, \"tid\": 7}]}")
            << QStringLiteral("pid 1099511627776, tid 7") << QStringLiteral("device 1099511627776 is out of range");
    }

    // More devices or tracks than the limits: an error that names the limit, found before the tracks are built.
    void chromeLimits()
    {
        std::string devices = "{\"traceEvents\": [";
        for (int d = 0; d <= 1024; ++d)
            devices += std::string(d ? "," : "")
                + "{\"ph\": \"X\", \"cat\": \"kernel\", \"ts\": 1, \"dur\": 1, \"pid\": " + std::to_string(d)
                + ", \"tid\": 7, \"args\": {\"device\": " + std::to_string(d) + "}}";
        devices += "]}";
        auto r = parseChromeTrace(devices, "d.json");
        QVERIFY(!r.ok());
        QVERIFY2(q(r.error().message).contains(QStringLiteral("too many devices: more than 1024; the limit is 1024")),
                 r.error().toString().c_str());
        std::string pids = "[";
        for (int p = 0; p <= 200000; ++p)
            pids += std::string(p ? "," : "") + "{\"ph\": \"X\", \"ts\": 1, \"dur\": 1, \"pid\": " + std::to_string(p)
                + "}";
        pids += "]";
        r = parseChromeTrace(pids, "p.json");
        QVERIFY(!r.ok());
        QVERIFY2(q(r.error().path).startsWith(QStringLiteral("byte ")), r.error().toString().c_str());
        QVERIFY2(q(r.error().message).contains(QStringLiteral("too many tracks: more than 200000")),
                 r.error().toString().c_str());
    }
    void importErrors()
    {
        QFETCH(QByteArray, content);
        QFETCH(QString, where);
        QFETCH(QString, message);
        QTemporaryDir dir;
        const std::string path = dir.filePath(QStringLiteral("in.json")).toStdString();
        QVERIFY(writeFile(path, content.toStdString()));
        auto r = importTraceFile(path);
        QVERIFY(!r.ok());
        QCOMPARE(q(r.error().file), q(path));
        QCOMPARE(q(r.error().path), where);
        QVERIFY2(q(r.error().message).contains(message), r.error().toString().c_str());
        // The same from text in memory (the reader without refills).
        auto m = importTraceText(content.toStdString(), "mem.json");
        QVERIFY(!m.ok());
        QCOMPARE(q(m.error().path), where);
    }

    void importFileErrors()
    {
        QTemporaryDir dir;
        auto missing = importTraceFile(dir.filePath(QStringLiteral("nope.json")).toStdString());
        QVERIFY(!missing.ok());
        QVERIFY(q(missing.error().message).startsWith(QStringLiteral("cannot open")));
        auto directory = importTraceFile(dir.path().toStdString());
        QVERIFY(!directory.ok());
        QVERIFY(q(directory.error().message).contains(QStringLiteral("directory")));
        const std::string rep = dir.filePath(QStringLiteral("r.nsys-rep")).toStdString();
        QVERIFY(writeFile(rep, std::string("\x01\x02binary report", 15)));
        auto report = importTraceFile(rep);
        QVERIFY(!report.ok());
        QVERIFY2(q(report.error().message).contains(QStringLiteral("nsys export --type sqlite")),
                 report.error().toString().c_str());
    }

    // A gzip-compressed trace (*.json.gz) opens like the plain file; a truncated one is a clear error, never a crash;
    // the CLI takes it too.
    void gzipCompressedTraces()
    {
        const fs::path dir = kSource / "tests" / "data" / "pytorch";
        const std::string gz = (dir / "two-streams-event.json.gz").string();
        const std::string plain = (dir / "two-streams-event.json").string();
        auto packed = importTraceFile(gz);
        if (!canReadGzip()) {
            QVERIFY(!packed.ok());
            QVERIFY2(q(packed.error().message).contains(QStringLiteral("gunzip")), packed.error().toString().c_str());
            QSKIP("this build has no zlib: compressed traces give the error above");
        }
        QVERIFY2(packed.ok(), packed.error().toString().c_str());
        auto unpacked = importTraceFile(plain);
        QVERIFY2(unpacked.ok(), unpacked.error().toString().c_str());
        QVERIFY(packed->spanCount() > 100);
        QCOMPARE(traceToJson(*packed), traceToJson(*unpacked));

        QTemporaryDir tmp;
        const std::string bytes = readFile(gz);
        QVERIFY(bytes.size() > 1000);
        const std::string cutPath = tmp.filePath(QStringLiteral("cut.json.gz")).toStdString();
        QVERIFY(writeFile(cutPath, bytes.substr(0, bytes.size() / 2)));
        auto cutOff = importTraceFile(cutPath);
        QVERIFY(!cutOff.ok());
        QCOMPARE(q(cutOff.error().file), q(cutPath));
        QVERIFY2(q(cutOff.error().message).contains(QStringLiteral("cannot be unpacked")),
                 cutOff.error().toString().c_str());

        QProcess cli;
        cli.start(QStringLiteral(STREAMSCOPE_CLI), {QStringLiteral("analyze"), q(gz), QStringLiteral("--json")});
        QVERIFY(cli.waitForFinished(60000));
        QCOMPARE(cli.exitCode(), 0);
        const Json report = Json::parse(cli.readAllStandardOutput().toStdString(), nullptr, false);
        QVERIFY(report.is_object() && report.contains("metrics"));
        cli.start(QStringLiteral(STREAMSCOPE_CLI), {QStringLiteral("analyze"), q(cutPath)});
        QVERIFY(cli.waitForFinished(60000));
        QCOMPARE(cli.exitCode(), 2);
        QVERIFY(cli.readAllStandardError().contains("cannot be unpacked"));
    }

    // A gzip bomb (gigabytes of zeros in a few megabytes) is refused with the limit after the bytes are counted,
    // never unpacked into memory; the CLI exits 2 with the same message.
    void gzipBombIsRefused()
    {
#ifdef STREAMSCOPE_TEST_ZLIB
        if (!canReadGzip())
            QSKIP("this build has no zlib");
        // One gzip member of 64 MiB of zeros, repeated: gzip readers unpack concatenated members as one stream.
        const std::string zeros(size_t(64) << 20, '\0');
        z_stream z{};
        QCOMPARE(deflateInit2(&z, 9, Z_DEFLATED, 15 + 16, 9, Z_DEFAULT_STRATEGY), Z_OK);
        std::string member(deflateBound(&z, uLong(zeros.size())), '\0');
        z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(zeros.data()));
        z.avail_in = uInt(zeros.size());
        z.next_out = reinterpret_cast<Bytef*>(member.data());
        z.avail_out = uInt(member.size());
        QCOMPARE(deflate(&z, Z_FINISH), Z_STREAM_END);
        member.resize(z.total_out);
        deflateEnd(&z);
        const size_t members = kMaxUnpackedTraceBytes / zeros.size() + 8; // 2.5 GiB unpacked
        std::string bomb;
        for (size_t i = 0; i < members; ++i)
            bomb += member;
        QVERIFY(bomb.size() < (size_t(8) << 20));
        QTemporaryDir tmp;
        const std::string path = tmp.filePath(QStringLiteral("bomb.json.gz")).toStdString();
        QVERIFY(writeFile(path, bomb));
        auto r = importTraceFile(path);
        QVERIFY(!r.ok());
        QCOMPARE(q(r.error().file), q(path));
        QVERIFY2(
            q(r.error().message)
                .contains(
                    QStringLiteral("the limit for a compressed trace is %1").arg(qulonglong(kMaxUnpackedTraceBytes))),
            r.error().toString().c_str());
        QProcess cli;
        cli.start(QStringLiteral(STREAMSCOPE_CLI), {QStringLiteral("analyze"), q(path)});
        QVERIFY(cli.waitForFinished(60000));
        QCOMPARE(cli.exitCode(), 2);
        QVERIFY(cli.readAllStandardError().contains("the limit for a compressed trace"));
#else
        QSKIP("the tests were built without zlib");
#endif
    }

    // 100 000 streams, and as many host threads and Chrome processes, import and analyze in linear time (CI's
    // timeout is the check).
    void hundredThousandTracks()
    {
        QTemporaryDir tmp;
        std::string chrome = "[";
        for (int p = 0; p < 100000; ++p)
            chrome += std::string(p ? "," : "") + "{\"ph\": \"X\", \"name\": \"f\", \"ts\": " + std::to_string(p)
                + ", \"dur\": 1, \"pid\": " + std::to_string(p) + ", \"tid\": 1}";
        chrome += "]";
        const std::string chromePath = tmp.filePath(QStringLiteral("pids.json")).toStdString();
        QVERIFY(writeFile(chromePath, chrome));
        auto pids = importTraceFile(chromePath);
        QVERIFY2(pids.ok(), pids.error().toString().c_str());
        QCOMPARE(pids->tracks.size(), size_t(100000));
        QProcess analyze;
        analyze.start(QStringLiteral(STREAMSCOPE_CLI),
                      {QStringLiteral("analyze"), q(chromePath), QStringLiteral("--json")});
        QVERIFY(analyze.waitForFinished(120000));
        QCOMPARE(analyze.exitCode(), 0);
        for (const bool streams : {true, false}) {
            std::string csv = std::string(kCsvHeader) + "\r\n";
            // The kernels all run at once (every pair of streams overlaps); the calls one after another.
            for (int i = 0; i < 100000; ++i)
                csv += (streams ? "0,s" + std::to_string(i) + ",,kernel,k," + std::to_string(i) + ","
                                + std::to_string(i + 1000000)
                                : ",,t" + std::to_string(i) + ",api-call,cudaLaunchKernel," + std::to_string(10 * i)
                                + "," + std::to_string(10 * i + 5))
                    + ",0\r\n";
            const std::string path = tmp.filePath(QStringLiteral("tracks.csv")).toStdString();
            QVERIFY(writeFile(path, csv));
            auto r = importTraceFile(path);
            QVERIFY2(r.ok(), r.error().toString().c_str());
            QCOMPARE(r->tracks.size(), size_t(100000));
            QProcess cli;
            cli.start(QStringLiteral(STREAMSCOPE_CLI), {QStringLiteral("analyze"), q(path), QStringLiteral("--json")});
            QVERIFY(cli.waitForFinished(120000));
            QCOMPARE(cli.exitCode(), 0);
        }
    }

    // Every prefix of a valid export, and random corruption of it: an error with a byte offset, or a trace; never a
    // crash, never a hang.
    void truncatedAndCorrupted_data()
    {
        QTest::addColumn<QString>("which");
        QTest::newRow("chrome export") << QStringLiteral("chrome");
        QTest::newRow("pytorch fixture") << QStringLiteral("pytorch");
    }
    void truncatedAndCorrupted()
    {
        QFETCH(QString, which);
        const std::string full = which == QLatin1String("chrome") ? traceToChromeJson(richTrace())
                                                                  : readFile(kFixtures / "two-streams-event.json");
        QVERIFY(!full.empty());
        const auto parse = [&](const std::string& text) {
            return which == QLatin1String("chrome") ? parseChromeTrace(text, "t.json")
                                                    : parsePyTorchTrace(text, "t.json");
        };
        size_t failures = 0;
        for (size_t at = 0; at < full.size(); at += (at < 200 ? 1 : 7)) {
            auto r = parse(cut(full, at));
            // The end of the object is at the very end: every shorter prefix is cut off.
            QVERIFY2(!r.ok(), ("a prefix of " + std::to_string(at) + " bytes was accepted").c_str());
            QVERIFY2(r.error().path.rfind("byte ", 0) == 0 || r.error().path.rfind("/", 0) == 0,
                     r.error().toString().c_str());
            ++failures;
        }
        QVERIFY(failures > 100);
        std::mt19937 rng(42);
        for (int round = 0; round < 300; ++round) {
            std::string bad = full;
            const int flips = 1 + int(rng() % 4);
            for (int k = 0; k < flips; ++k)
                bad[rng() % bad.size()] = "{}[]\",:\\x0 -eE.\x01"[rng() % 16];
            auto r = parse(bad);
            if (!r.ok())
                QVERIFY2(!r.error().message.empty(), r.error().toString().c_str());
        }
    }

    void exportApi()
    {
        QVERIFY(exportFormatFromString("chrome") == ExportFormat::Chrome);
        QVERIFY(exportFormatFromString("streamscope") == ExportFormat::Streamscope);
        QVERIFY(exportFormatFromString("csv") == ExportFormat::Csv);
        QVERIFY(!exportFormatFromString("svg"));
        const Trace t = richTrace();
        QTemporaryDir dir;
        for (ExportFormat f : {ExportFormat::Streamscope, ExportFormat::Chrome, ExportFormat::Csv}) {
            const std::string path = dir.filePath(QStringLiteral("out.") + n(f)).toStdString();
            const Status st = exportTrace(t, path, f);
            QVERIFY2(st.ok(), st.error().toString().c_str());
            QCOMPARE(readFile(path), exportTraceText(t, f));
            auto back = importTraceFile(path);
            QVERIFY2(back.ok(), back.error().toString().c_str());
            QCOMPARE(back->spanCount(), t.spanCount());
            if (f != ExportFormat::Csv)
                QCOMPARE(traceToJson(*back), traceToJson(t));
        }
        const Status st = exportTrace(t, dir.path().toStdString(), ExportFormat::Csv);
        QVERIFY(!st.ok());
        QVERIFY(q(st.error().message).contains(QStringLiteral("directory")));
    }
};

QTEST_GUILESS_MAIN(TestImportExport)
#include "tst_import_export.moc"
