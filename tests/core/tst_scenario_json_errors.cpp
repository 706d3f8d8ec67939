// Scenario JSON that must be refused or warned about: every error with its JSON path, input that is not a scenario,
// warnings in document order, limits against hostile files (issued counts, nesting, duplicate keys, huge counts).
#include "scenario_json_fixtures.h"

#include <QTest>

class TestScenarioJsonErrors : public QObject {
    Q_OBJECT

private slots:
    // Each row sets (or, with an empty value, removes) one value of the base scenario.
    void errors_data()
    {
        QTest::addColumn<QByteArray>("pointer");
        QTest::addColumn<QByteArray>("value");
        QTest::addColumn<QByteArray>("path");
        QTest::addColumn<QByteArray>("message");

        const auto row = [](const char* name, const char* pointer, const char* value, const char* path,
                            const char* message) {
            QTest::newRow(name) << QByteArray(pointer) << QByteArray(value) << QByteArray(path) << QByteArray(message);
        };
        // header
        row("format wrong", "/format", R"("streamscope-trace")", "/format", "not a StreamScope scenario");
        row("format missing", "/format", "", "", R"(missing field "format")");
        row("version 7", "/version", "7", "/version", "unsupported version 7 (this StreamScope reads version 1)");
        row("version string", "/version", R"("1")", "/version", "expected an integer, got string");
        row("version missing", "/version", "", "", R"(missing field "version")");
        row("unknown top field", "/titel", R"("x")", "/titel", R"(unknown field "titel" (did you mean "title"?))");
        row("title not string", "/title", "3", "/title", "expected a string, got integer");
        row("effect unknown", "/effect", R"("streams-overlapp")", "/effect",
            R"(unknown effect "streams-overlapp" (did you mean "streams-overlap"?))");
        row("effect not string", "/effect", "3", "/effect", "expected a string, got integer");
        row("variant effect unknown", "/variants/0/effect", R"("overlap-everything")", "/variants/0/effect",
            R"(unknown effect "overlap-everything")");
        // types
        row("repeat string", "/threads/0/repeat", R"("2")", "/threads/0/repeat", "expected an integer, got string");
        row("repeat fraction", "/threads/0/repeat", "1.5", "/threads/0/repeat", "expected an integer, got number 1.5");
        row("repeat zero", "/threads/0/repeat", "0", "/threads/0/repeat", "repeat must be at least 1, got 0");
        row("repeat too big", "/threads/0/repeat", "3000000000", "/threads/0/repeat", "repeat must be at most");
        row("workers zero", "/threads/1/workers", "0", "/threads/1/workers", "workers must be at least 1");
        row("streams not array", "/streams", "{}", "/streams", "expected an array, got object");
        row("thread not object", "/threads/0", "5", "/threads/0", "expected an object, got integer");
        row("op name not string", "/threads/0/ops/0/name", "3", "/threads/0/ops/0/name",
            "expected a string, got integer");
        row("bytes too large", "/threads/0/ops/1/bytes", "18446744073709551615", "/threads/0/ops/1/bytes",
            "is too large");
        // ops
        row("unknown op", "/threads/0/ops/0/op", R"("kernal")", "/threads/0/ops/0/op",
            R"(unknown op "kernal" (did you mean "kernel"?))");
        row("unknown op listed", "/threads/0/ops/0/op", R"("launch")", "/threads/0/ops/0/op",
            R"(unknown op "launch" (one of: "kernel", "memcpy")");
        row("op missing", "/threads/0/ops/13/op", "", "/threads/0/ops/13", R"(missing field "op")");
        row("unknown field", "/threads/0/ops/0/strem", R"("s1")", "/threads/0/ops/0/strem",
            R"(unknown field "strem" (did you mean "stream"?))");
        row("field of another op", "/threads/0/ops/0/bytes", "4", "/threads/0/ops/0/bytes",
            R"(field "bytes" does not apply to a kernel op)");
        row("unknown stream", "/threads/0/ops/1/stream", R"("s9")", "/threads/0/ops/1/stream",
            R"(unknown stream "s9")");
        row("unknown stream of a graph", "/threads/0/ops/5/stream", R"("s9")", "/threads/0/ops/5/stream",
            R"(unknown stream "s9")");
        row("stream missing", "/threads/0/ops/6/stream", "", "/threads/0/ops/6", R"(missing field "stream")");
        row("stream of another device", "/threads/0/ops/0/stream", R"("s2")", "/threads/0/ops/0/stream",
            R"(stream "s2" is on device 1 but thread "main" is bound to device 0)");
        row("record on another device", "/threads/1/ops/4/stream", R"("s1")", "/threads/1/ops/4/stream",
            R"(stream "s1" is on device 0 but thread "worker" is bound to device 1)");
        // kernels
        row("zero grid", "/threads/0/ops/0/grid", "0", "/threads/0/ops/0/grid", "grid must not be zero");
        row("zero grid in array", "/threads/0/ops/5/ops/0/grid", "[2, 0]", "/threads/0/ops/5/ops/0/grid/1",
            "grid must not be zero");
        row("negative grid", "/threads/0/ops/0/grid", "-3", "/threads/0/ops/0/grid", "grid must be positive, got -3");
        row("grid of four", "/threads/0/ops/0/grid", "[1, 1, 1, 1]", "/threads/0/ops/0/grid",
            "grid must have 1 to 3 dimensions");
        row("grid empty", "/threads/0/ops/0/grid", "[]", "/threads/0/ops/0/grid", "grid must have 1 to 3 dimensions");
        row("grid string", "/threads/0/ops/0/grid", R"("4")", "/threads/0/ops/0/grid",
            "expected an integer or an array of 1 to 3 integers, got string");
        row("grid y too big", "/threads/0/ops/0/grid", "[1, 65536]", "/threads/0/ops/0/grid/1",
            "grid.y must be at most 65535");
        row("block too big", "/threads/0/ops/0/block", "[64, 32]", "/threads/0/ops/0/block",
            "block has 2048 threads; CUDA allows at most 1024 per block");
        row("block zero", "/threads/0/ops/0/block", "0", "/threads/0/ops/0/block", "block must not be zero");
        row("block z too big", "/threads/0/ops/0/block", "[1, 1, 65]", "/threads/0/ops/0/block/2",
            "block.z must be at most 64");
        row("spin without grid", "/threads/0/ops/0/grid", "", "/threads/0/ops/0", R"(missing field "grid")");
        row("spin without duration", "/threads/0/ops/0/duration_us", "", "/threads/0/ops/0",
            R"(missing field "duration_us")");
        row("spin duration zero", "/threads/0/ops/0/duration_us", "0", "/threads/0/ops/0/duration_us",
            "duration_us must be greater than 0");
        row("spin duration huge", "/threads/0/ops/0/duration_us", "1e12", "/threads/0/ops/0/duration_us",
            "duration_us must be at most");
        row("spin with size", "/threads/0/ops/0/size", "5", "/threads/0/ops/0/size",
            R"("size" applies only to fma, triad, matmul, transpose and reduce kernels)");
        row("matmul without size", "/threads/0/ops/4/size", "", "/threads/0/ops/4", R"(missing field "size")");
        row("matmul size zero", "/threads/0/ops/4/size", "0", "/threads/0/ops/4/size", "size must be at least 1");
        row("matmul with duration", "/threads/0/ops/4/duration_us", "5", "/threads/0/ops/4/duration_us",
            R"("duration_us" applies only to spin kernels)");
        row("fma without grid", "/threads/1/ops/0/grid", "", "/threads/1/ops/0", R"(missing field "grid")");
        row("unknown kernel", "/threads/0/ops/4/kernel", R"("matmull")", "/threads/0/ops/4/kernel",
            R"(unknown kernel "matmull" (did you mean "matmul"?))");
        row("negative shared bytes", "/threads/1/ops/0/shared_bytes", "-1", "/threads/1/ops/0/shared_bytes",
            "shared_bytes must not be negative");
        // copies and memory
        row("negative bytes", "/threads/0/ops/1/bytes", "-1", "/threads/0/ops/1/bytes", "bytes must not be negative");
        row("negative memset bytes", "/threads/0/ops/6/bytes", "-4096", "/threads/0/ops/6/bytes",
            "bytes must not be negative");
        row("zero malloc bytes", "/threads/0/ops/11/bytes", "0", "/threads/0/ops/11/bytes", "bytes must be at least 1");
        row("memcpy without bytes", "/threads/0/ops/1/bytes", "", "/threads/0/ops/1", R"(missing field "bytes")");
        row("memcpy without kind", "/threads/0/ops/1/kind", "", "/threads/0/ops/1", R"(missing field "kind")");
        row("unknown copy kind", "/threads/0/ops/1/kind", R"("h2x")", "/threads/0/ops/1/kind",
            R"(unknown copy kind "h2x")");
        row("host on p2p", "/threads/1/ops/1/host", R"("pinned")", "/threads/1/ops/1/host",
            R"("host" applies only to h2d and d2h copies)");
        row("host value", "/threads/0/ops/1/host", R"("locked")", "/threads/0/ops/1/host",
            R"("host" must be "pinned" or "pageable", got "locked")");
        row("p2p without destination", "/threads/1/ops/1/dst_device", "", "/threads/1/ops/1",
            R"(missing field "dst_device")");
        row("p2p to itself", "/threads/1/ops/1/dst_device", "1", "/threads/1/ops/1/dst_device",
            "a p2p copy needs a destination other than its stream's device 1");
        row("p2p to undeclared", "/threads/1/ops/1/dst_device", "7", "/threads/1/ops/1/dst_device",
            R"(device 7 is not declared in "devices")");
        row("dst_device on h2d", "/threads/0/ops/1/dst_device", "1", "/threads/0/ops/1/dst_device",
            R"("dst_device" applies only to p2p copies)");
        // events, syncs, host work
        row("record without event", "/threads/0/ops/2/event", "", "/threads/0/ops/2", R"(missing field "event")");
        row("empty event", "/threads/0/ops/2/event", R"("")", "/threads/0/ops/2/event",
            "an event's name must not be empty");
        row("event-sync without event", "/threads/0/ops/10/event", "", "/threads/0/ops/10", R"(missing field "event")");
        row("host-work negative", "/threads/0/ops/9/duration_us", "-1", "/threads/0/ops/9/duration_us",
            "duration_us must not be negative");
        row("host-work without duration", "/threads/0/ops/9/duration_us", "", "/threads/0/ops/9",
            R"(missing field "duration_us")");
        row("device-sync with stream", "/threads/0/ops/13/stream", R"("s1")", "/threads/0/ops/13/stream",
            R"(field "stream" does not apply to a device-sync op)");
        // graphs
        row("graph in a graph", "/threads/0/ops/5/ops/0", R"({"op": "graph", "ops": []})", "/threads/0/ops/5/ops/0/op",
            "graphs do not nest");
        row("sync in a graph", "/threads/0/ops/5/ops/0", R"({"op": "stream-sync"})", "/threads/0/ops/5/ops/0/op",
            "a graph node cannot be a stream-sync op");
        row("record in a graph", "/threads/0/ops/5/ops/0", R"({"op": "record", "event": "x"})",
            "/threads/0/ops/5/ops/0/op", "a graph node cannot be a record op");
        row("node in another stream", "/threads/0/ops/5/ops/1/stream", R"("s1")", "/threads/0/ops/5/ops/1/stream",
            R"(a graph node runs in its graph's stream "s3", not "s1")");
        row("empty graph", "/threads/0/ops/5/ops", "[]", "/threads/0/ops/5/ops", "a graph needs at least one node");
        row("graph node error path", "/threads/0/ops/5/ops/1/bytes", "-2", "/threads/0/ops/5/ops/1/bytes",
            "bytes must not be negative");
        // devices, streams, threads
        row("duplicate device", "/devices/1/index", "0", "/devices/1/index",
            "duplicate device index 0 (also at /devices/0)");
        row("negative device", "/devices/1/index", "-1", "/devices/1/index", "index must not be negative");
        row("device out of range", "/devices/1/index", "64", "/devices/1/index", "device 64 is out of range");
        row("device without index", "/devices/1/index", "", "/devices/1", R"(missing field "index")");
        row("stream on undeclared device", "/streams/0/device", "5", "/streams/0/device",
            R"(device 5 is not declared in "devices")");
        row("thread on undeclared device", "/threads/0/device", "3", "/threads/0/device",
            R"(device 3 is not declared in "devices")");
        row("duplicate stream", "/streams/1/name", R"("s1")", "/streams/1/name",
            R"(duplicate stream name "s1" (also at /streams/0))");
        row("empty stream name", "/streams/1/name", R"("")", "/streams/1/name", "a stream's name must not be empty");
        row("stream without name", "/streams/1/name", "", "/streams/1", R"(missing field "name")");
        row("unknown stream kind", "/streams/2/kind", R"("nonblocking")", "/streams/2/kind",
            R"(unknown stream kind "nonblocking" (did you mean "non-blocking"?))");
        row("two legacy streams", "/streams/0/kind", R"("legacy-default")", "/streams/3/kind",
            R"(device 0 already has a legacy-default stream ("s1"))");
        row("priority positive", "/streams/2/priority", "1", "/streams/2/priority",
            "priority must be between -5 and 0, got 1");
        row("priority too low", "/streams/2/priority", "-6", "/streams/2/priority",
            "priority must be between -5 and 0, got -6");
        row("stream field typo", "/streams/2/priorty", "0", "/streams/2/priorty",
            R"(unknown field "priorty" (did you mean "priority"?))");
        row("duplicate thread", "/threads/1/name", R"("main")", "/threads/1/name",
            R"(duplicate thread name "main" (also at /threads/0))");
        row("thread without name", "/threads/1/name", "", "/threads/1", R"(missing field "name")");
        row("no threads", "/threads", "[]", "/threads", "a scenario needs at least one host thread");
        row("threads missing", "/threads", "", "", R"(missing field "threads")");
        // run
        row("max connections too big", "/run/env/CUDA_DEVICE_MAX_CONNECTIONS", "64",
            "/run/env/CUDA_DEVICE_MAX_CONNECTIONS", "CUDA_DEVICE_MAX_CONNECTIONS must be an integer from 1 to 32");
        row("max connections zero", "/run/env/CUDA_DEVICE_MAX_CONNECTIONS", "0", "/run/env/CUDA_DEVICE_MAX_CONNECTIONS",
            "from 1 to 32");
        row("max connections text", "/run/env/CUDA_DEVICE_MAX_CONNECTIONS", R"("eight")",
            "/run/env/CUDA_DEVICE_MAX_CONNECTIONS", "from 1 to 32");
        row("env value boolean", "/run/env/OTHER", "true", "/run/env/OTHER",
            "expected a string or an integer, got boolean");
        row("iterations zero", "/run/iterations", "0", "/run/iterations", "iterations must be at least 1");
        row("warmup negative", "/run/warmup", "-1", "/run/warmup", "warmup must be at least 0");
        row("run field typo", "/run/iteration", "1", "/run/iteration",
            R"(unknown field "iteration" (did you mean "iterations"?))");
        // expect
        row("expect unknown stream", "/expect/0/streams/1", R"("s9")", "/expect/0/streams/1", R"(unknown stream "s9")");
        row("expect bad comparison", "/expect/0/op", R"("=<")", "/expect/0/op", R"(unknown comparison "=<")");
        row("expect without value", "/expect/1/value", "", "/expect/1", R"(missing field "value")");
        row("expect without metric", "/expect/1/metric", "", "/expect/1", R"(missing field "metric")");
        row("expect unknown metric", "/expect/0/metric", R"("overlapp")", "/expect/0", R"(unknown metric "overlapp")");
        row("expect wrong argument count", "/expect/0/streams", R"(["s1"])", "/expect/0", "");
        row("expect duplicate id", "/expect/1/id", R"("overlap")", "/expect/1/id",
            R"(duplicate expectation id "overlap")");
        row("expect key not bool", "/expect/0/key", "1", "/expect/0/key", "expected true or false, got integer");
        row("expect field typo", "/expect/0/vaule", "1", "/expect/0/vaule",
            R"(unknown field "vaule" (did you mean "value"?))");
        // variants
        row("duplicate variant", "/variants/1/id", R"("serial")", "/variants/1/id", R"(duplicate variant id "serial")");
        row("variant without id", "/variants/1/id", "", "/variants/1", R"(missing field "id")");
        row("variant set not object", "/variants/1/set", "[]", "/variants/1/set", "expected an object, got array");
        row("variant set not a pointer", "/variants/1/set", R"({"threads/0": 1})", "/variants/1/set/threads~10",
            "not a JSON pointer");
        row("variant sets variants", "/variants/1/set", R"({"/variants/0/id": "x"})",
            "/variants/1/set/~1variants~10~1id", "a variant cannot change the variants");
        row("variant expect unknown stream", "/variants/0/expect/0",
            R"({"metric": "busy_us", "streams": ["s7"], "value": 1})", "/variants/0/expect/0/streams/0",
            R"(unknown stream "s7")");
    }

    void errors()
    {
        QFETCH(QByteArray, pointer);
        QFETCH(QByteArray, value);
        QFETCH(QByteArray, path);
        QFETCH(QByteArray, message);
        const auto r = parse(patched(pointer, value));
        QVERIFY2(!r.ok(), "accepted an invalid scenario");
        const Error& e = r.error();
        QCOMPARE(qb(e.file), QByteArray("test.json"));
        QVERIFY2(qb(e.path) == path, e.toString().c_str());
        QVERIFY2(qb(e.message).contains(message), e.toString().c_str());
        QVERIFY(!e.message.empty());
        QCOMPARE(r.errorClass(), ErrorClass::BadInput);
    }

    // Input that is not a scenario at all.
    void textErrors_data()
    {
        QTest::addColumn<QByteArray>("text");
        QTest::addColumn<QByteArray>("path");
        QTest::addColumn<QByteArray>("message");
        QTest::newRow("empty") << QByteArray("") << QByteArray() << QByteArray("not JSON: ");
        QTest::newRow("truncated") << QByteArray(R"({"format": )") << QByteArray() << QByteArray("not JSON: ");
        QTest::newRow("byte and line") << QByteArray("{\n  \"format\": \"streamscope-scenario\",\n  x\n}")
                                       << QByteArray() << QByteArray("at byte 41 (line 3, column 3)");
        QTest::newRow("number overflow") << QByteArray(R"({"format": 1e999})") << QByteArray()
                                         << QByteArray("not JSON: number overflow");
        QTest::newRow("array") << QByteArray("[1, 2]") << QByteArray() << QByteArray("expected an object, got array");
        QTest::newRow("string") << QByteArray(R"("scenario")") << QByteArray()
                                << QByteArray("expected an object, got string");
        QTest::newRow("a trace") << QByteArray(R"({"format": "streamscope-trace", "version": 1})")
                                 << QByteArray("/format") << QByteArray("not a StreamScope scenario");
        QTest::newRow("no format") << QByteArray(R"({"version": 1})") << QByteArray()
                                   << QByteArray(R"(missing field "format")");
        QTest::newRow("version before fields") << QByteArray(R"({"format": "streamscope-scenario", "version": 2,
            "future": true})") << QByteArray("/version")
                                               << QByteArray("unsupported version 2");
    }

    void textErrors()
    {
        QFETCH(QByteArray, text);
        QFETCH(QByteArray, path);
        QFETCH(QByteArray, message);
        const auto r = parse(text.toStdString());
        QVERIFY(!r.ok());
        QVERIFY2(qb(r.error().path) == path, r.error().toString().c_str());
        QVERIFY2(qb(r.error().message).contains(message), r.error().toString().c_str());
    }

    void warnings_data()
    {
        QTest::addColumn<QByteArray>("pointer");
        QTest::addColumn<QByteArray>("value");
        QTest::addColumn<QByteArray>("path");
        QTest::addColumn<QByteArray>("message");
        QTest::newRow("pageable h2d") << QByteArray("/threads/0/ops/1/host") << QByteArray(R"("pageable")")
                                      << QByteArray("/threads/0/ops/1/host")
                                      << QByteArray("an async copy from pageable memory runs synchronously: the host "
                                                    "thread blocks and the copy cannot overlap with kernels");
        QTest::newRow("pageable d2h") << QByteArray("/threads/1/ops/2/host") << QByteArray(R"("pageable")")
                                      << QByteArray("/threads/1/ops/2/host") << QByteArray("pageable memory");
        QTest::newRow("wait never recorded")
            << QByteArray("/threads/0/ops/3/event") << QByteArray(R"("e9")") << QByteArray("/threads/0/ops/3/event")
            << QByteArray(R"(event "e9" is waited on but never recorded: the wait does nothing)");
        QTest::newRow("event-sync never recorded")
            << QByteArray("/threads/0/ops/10/event") << QByteArray(R"("e9")") << QByteArray("/threads/0/ops/10/event")
            << QByteArray(R"(event "e9" is synchronized on but never recorded)");
        // Recorded later in another thread is still recorded: no warning (empty path and message).
        QTest::newRow("recorded elsewhere")
            << QByteArray("/threads/0/ops/3/event") << QByteArray(R"("e2")") << QByteArray() << QByteArray();
    }

    void warnings()
    {
        QFETCH(QByteArray, pointer);
        QFETCH(QByteArray, value);
        QFETCH(QByteArray, path);
        QFETCH(QByteArray, message);
        const auto r = parse(patched(pointer, value));
        QVERIFY2(r.ok(), describe(r).c_str()); // a warning never stops reading
        if (message.isEmpty()) {
            QVERIFY(r->warnings.empty());
            return;
        }
        QCOMPARE(r->warnings.size(), size_t(1));
        QCOMPARE(qb(r->warnings[0].file), QByteArray("test.json"));
        QCOMPARE(qb(r->warnings[0].path), path);
        QVERIFY2(qb(r->warnings[0].message).contains(message), r->warnings[0].toString().c_str());
    }

    void warningsInDocumentOrder()
    {
        Json doc = Json::parse(kBase);
        doc["threads"][0]["ops"][3]["event"] = "e9";      // found after all ops are read
        doc["threads"][0]["ops"][1]["host"] = "pageable"; // found while reading
        doc["threads"][1]["ops"][2]["host"] = "pageable";
        const auto r = parse(doc.dump());
        QVERIFY2(r.ok(), describe(r).c_str());
        QCOMPARE(r->warnings.size(), size_t(3));
        QCOMPARE(qb(r->warnings[0].path), QByteArray("/threads/0/ops/1/host"));
        QCOMPARE(qb(r->warnings[1].path), QByteArray("/threads/0/ops/3/event"));
        QCOMPARE(qb(r->warnings[2].path), QByteArray("/threads/1/ops/2/host"));
    }

    void neverRecordedEventIsResolved()
    {
        const auto r = parse(patched("/threads/0/ops/3/event", R"("e9")"));
        QVERIFY2(r.ok(), describe(r).c_str());
        QCOMPARE(r->scenario.events, (std::vector<std::string>{"e1", "e9", "e2"}));
        QCOMPARE(r->scenario.threads[0].ops[3].eventIndex, 1);
    }

    void limits_data()
    {
        QTest::addColumn<QByteArray>("limit");
        QTest::addColumn<qint64>("value");
        QTest::addColumn<QByteArray>("path");
        QTest::addColumn<QByteArray>("message");
        // The base scenario: ops 0-4 of "main", then a graph (op 5) of 3 nodes; 3 host threads; 4 streams.
        QTest::newRow("ops") << QByteArray("maxOps") << qint64(5) << QByteArray("/threads/0/ops/5")
                             << QByteArray("too many operations: the limit is 5");
        QTest::newRow("graph nodes count as ops")
            << QByteArray("maxOps") << qint64(7) << QByteArray("/threads/0/ops/5/ops/1")
            << QByteArray("graph nodes included");
        QTest::newRow("issued") << QByteArray("maxIssued") << qint64(100) << QByteArray()
                                << QByteArray("the limit is 100");
        QTest::newRow("threads") << QByteArray("maxThreads") << qint64(2) << QByteArray("/threads/1/workers")
                                 << QByteArray("too many host threads: 3 (pool workers included); the limit is 2");
        QTest::newRow("streams") << QByteArray("maxStreams") << qint64(3) << QByteArray("/streams/3")
                                 << QByteArray("too many streams: the limit is 3");
        QTest::newRow("devices") << QByteArray("maxDevices") << qint64(1) << QByteArray("/devices/1")
                                 << QByteArray("too many devices: the limit is 1");
        QTest::newRow("bytes") << QByteArray("maxBytes") << qint64(100) << QByteArray()
                               << QByteArray("bytes; the limit is 100");
        QTest::newRow("depth") << QByteArray("maxDepth") << qint64(3) << QByteArray()
                               << QByteArray("nesting deeper than 3 levels");
    }

    void limits()
    {
        QFETCH(QByteArray, limit);
        QFETCH(qint64, value);
        QFETCH(QByteArray, path);
        QFETCH(QByteArray, message);
        ScenarioLimits limits;
        if (limit == "maxOps")
            limits.maxOps = value;
        else if (limit == "maxIssued")
            limits.maxIssued = value;
        else if (limit == "maxThreads")
            limits.maxThreads = int(value);
        else if (limit == "maxStreams")
            limits.maxStreams = int(value);
        else if (limit == "maxDevices")
            limits.maxDevices = int(value);
        else if (limit == "maxBytes")
            limits.maxBytes = size_t(value);
        else if (limit == "maxDepth")
            limits.maxDepth = int(value);
        QVERIFY(parse(kBase).ok()); // within the default limits
        const auto r = parse(kBase, {}, limits);
        QVERIFY2(!r.ok(), "limit not enforced");
        QVERIFY2(qb(r.error().path) == path, r.error().toString().c_str());
        QVERIFY2(qb(r.error().message).contains(message), r.error().toString().c_str());
    }

    void issuedCountMatchesCountOperations()
    {
        // The limit counts what countOperations() counts, plus warm-up iterations.
        const auto r = parse(kBase);
        QVERIFY(r.ok());
        const int64_t measured = countOperations(r->scenario);
        const int64_t issued = measured / r->scenario.run.iterations * (r->scenario.run.iterations + 1);
        ScenarioLimits limits;
        limits.maxIssued = issued;
        QVERIFY2(parse(kBase, {}, limits).ok(), "the exact count must be allowed");
        limits.maxIssued = issued - 1;
        const auto over = parse(kBase, {}, limits);
        QVERIFY(!over.ok());
        QVERIFY2(qb(over.error().message).contains(qb("issue " + std::to_string(issued) + " operations")),
                 over.error().toString().c_str());
    }

    // The default limit on issued operations keeps a run within its memory budget (docs/SCENARIO.md: about 290
    // bytes per issued op): the count at the limit is read, one more is refused, before anything is simulated.
    void defaultIssuedLimitIsSafe()
    {
        const int64_t limit = ScenarioLimits{}.maxIssued;
        QVERIFY(limit <= 5'000'000);
        const auto scenario = [](int64_t repeat) {
            return R"({"format": "streamscope-scenario", "version": 1, "devices": [{"index": 0}],
                       "streams": [{"name": "s1", "device": 0}], "run": {"iterations": 1, "warmup": 0},
                       "threads": [{"name": "t", "repeat": )"
                + std::to_string(repeat) + R"(,
                                    "ops": [{"op": "kernel", "stream": "s1", "kernel": "empty", "grid": 1}]}]})";
        };
        const auto at = parse(scenario(limit));
        QVERIFY2(at.ok(), describe(at).c_str());
        const auto over = parse(scenario(limit + 1));
        QVERIFY(!over.ok());
        QVERIFY2(qb(over.error().message).contains(qb("the limit is " + std::to_string(limit))),
                 over.error().toString().c_str());
    }

    // A thread without ops repeated two billion times would keep the runner busy for hours doing nothing: each
    // empty repetition counts as one issued operation.
    void emptyRepetitionsCount()
    {
        const auto r = parse(R"({"format": "streamscope-scenario", "version": 1, "devices": [{"index": 0}],
                                 "threads": [{"name": "t", "repeat": 2000000000, "ops": []}]})");
        QVERIFY(!r.ok());
        QVERIFY2(qb(r.error().message).contains(qb("the limit is")), r.error().toString().c_str());
    }

    // Two equal keys in one object: nlohmann would keep the last silently; the reader names the key and its object.
    void duplicateKeysAreRefused_data()
    {
        QTest::addColumn<QByteArray>("text");
        QTest::addColumn<QByteArray>("path");
        QTest::addColumn<QByteArray>("key");
        QTest::newRow("top") << QByteArray(R"({"format": "streamscope-scenario", "version": 1, "version": 2})")
                             << QByteArray() << QByteArray("version");
        QTest::newRow("thread") << QByteArray(R"({"format": "streamscope-scenario", "version": 1,
            "devices": [{"index": 0}], "threads": [{"name": "a", "ops": []}, {"name": "b", "repeat": 2,
            "ops": [], "repeat": 3}]})")
                                << QByteArray("/threads/1") << QByteArray("repeat");
        QTest::newRow("escaped key") << QByteArray(R"({"format": "streamscope-scenario", "a/b": {"x": 1, "x": 2}})")
                                     << QByteArray("/a~1b") << QByteArray("x");
    }

    void duplicateKeysAreRefused()
    {
        QFETCH(QByteArray, text);
        QFETCH(QByteArray, path);
        QFETCH(QByteArray, key);
        const auto r = parse(text.toStdString());
        QVERIFY(!r.ok());
        QVERIFY2(qb(r.error().path) == path, r.error().toString().c_str());
        QVERIFY2(qb(r.error().message).contains("duplicate key \"" + key + "\""), r.error().toString().c_str());
    }

    void deepNestingIsAnErrorNotACrash_data()
    {
        QTest::addColumn<int>("depth");
        QTest::newRow("33") << 33;
        QTest::newRow("10000") << 10000;
        QTest::newRow("1000000") << 1000000;
    }

    void deepNestingIsAnErrorNotACrash()
    {
        QFETCH(int, depth);
        const std::string prefix = R"({"format": "streamscope-scenario", "version": 1, "description": )";
        const std::string text =
            prefix + std::string(size_t(depth - 1), '[') + std::string(size_t(depth - 1), ']') + "}";
        const auto r = parse(text);
        QVERIFY(!r.ok());
        // Reported where the 33rd level opens: the 32nd bracket.
        QCOMPARE(qb(r.error().message),
                 qb("nesting deeper than 32 levels at byte " + std::to_string(prefix.size() + 32) + " (line 1, column "
                    + std::to_string(prefix.size() + 32) + ")"));
    }

    void bracketsInStringsDoNotNest()
    {
        Json doc = Json::parse(kBase);
        doc["description"] = std::string(100, '[') + "\"{{{" + std::string(100, '{');
        doc["streams"].push_back(Json{{"name", std::string(40, '[') + "\\"}});
        doc["threads"][0]["ops"][6]["stream"] = doc["streams"][4]["name"];
        const auto r = parse(doc.dump());
        QVERIFY2(r.ok(), describe(r).c_str());
    }

    void nestingAtTheLimitIsRead()
    {
        // 32 levels: the root, "variants", the variant, "set", then 28 arrays in a value that is never applied.
        const auto text = [](int arrays) {
            Json doc = Json::parse(kBase);
            doc["variants"][1]["set"]["/description"] =
                Json::parse(std::string(size_t(arrays), '[') + std::string(size_t(arrays), ']'));
            return doc.dump();
        };
        const auto atLimit = parse(text(28));
        QVERIFY2(atLimit.ok(), describe(atLimit).c_str());
        const auto over = parse(text(29));
        QVERIFY(!over.ok());
        QVERIFY2(qb(over.error().message).startsWith("nesting deeper than 32 levels"), over.error().toString().c_str());
    }

    void hugeCountsDoNotOverflow()
    {
        // 2^31 repeats x 2^31 iterations x many ops overflows int64 if multiplied naively.
        Json doc = Json::parse(kBase);
        doc["threads"][0]["repeat"] = 2147483647;
        doc["run"]["iterations"] = 2147483647;
        doc["run"]["warmup"] = 2147483647;
        const auto r = parse(doc.dump());
        QVERIFY(!r.ok());
        QVERIFY2(qb(r.error().message).contains("the run would issue more than"), r.error().toString().c_str());
    }

    void manyOpsGiveAnError()
    {
        Json doc = Json::parse(kBase);
        Json& ops = doc["threads"][0]["ops"];
        for (int i = 0; i < 3000; ++i)
            ops.push_back(Json{{"op", "host-work"}, {"duration_us", 1}});
        ScenarioLimits limits;
        limits.maxOps = 2000;
        const auto r = parse(doc.dump(), {}, limits);
        QVERIFY(!r.ok());
        // "main" has 15 ops and 3 graph nodes; the 1983rd op added is the 2001st.
        QCOMPARE(qb(r.error().path), QByteArray("/threads/0/ops/1997"));
        QVERIFY(parse(doc.dump()).ok());
    }
};

QTEST_GUILESS_MAIN(TestScenarioJsonErrors)
#include "tst_scenario_json_errors.moc"
