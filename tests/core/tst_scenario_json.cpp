// Scenario JSON: reading (values, defaults, resolution), writing (round trips), variants, files and in-memory
// validation. Every error with its JSON path, warnings and limits against hostile files: tst_scenario_json_errors.
#include "scenario_json_fixtures.h"

#include <QTest>

class TestScenarioJson : public QObject {
    Q_OBJECT

private slots:
    void parsesValuesAndDefaults()
    {
        const auto r = parse(kBase);
        QVERIFY2(r.ok(), describe(r).c_str());
        const Scenario& s = r->scenario;
        QVERIFY(r->warnings.empty());
        QCOMPARE(s.version, 1);
        QCOMPARE(qb(s.id), QByteArray("base"));
        QCOMPARE(qb(s.description), QByteArray("Every op once."));

        QCOMPARE(s.devices.size(), size_t(2));
        QCOMPARE(qb(s.devices[0].profile), QByteArray("h200"));
        QCOMPARE(s.devices[1].index, 1);
        QVERIFY(s.devices[1].profile.empty());

        QCOMPARE(s.streams.size(), size_t(4));
        QCOMPARE(kindName(s.streams[0].kind), kindName(StreamKind::Blocking)); // default
        QCOMPARE(s.streams[0].priority, 0);
        QCOMPARE(s.streams[0].device, 0);
        QCOMPARE(s.streams[1].device, 1);
        QCOMPARE(kindName(s.streams[2].kind), kindName(StreamKind::NonBlocking));
        QCOMPARE(s.streams[2].priority, -1);
        QCOMPARE(kindName(s.streams[3].kind), kindName(StreamKind::LegacyDefault));

        QCOMPARE(s.threads.size(), size_t(2));
        const ThreadSpec& main = s.threads[0];
        QCOMPARE(main.repeat, 2);
        QCOMPARE(main.workers, 1);
        QCOMPARE(main.device, 0);
        QCOMPARE(s.threads[1].workers, 2);
        QCOMPARE(s.threads[1].device, 1);

        const Op& spin = main.ops[0];
        QCOMPARE(kindName(spin.kind), kindName(OpKind::Kernel));
        QCOMPARE(kindName(spin.kernel), kindName(KernelKind::Spin)); // default
        QCOMPARE(spin.grid, (Dim3{4, 1, 1}));
        QVERIFY(spin.gridGiven);
        QCOMPARE(spin.block, (Dim3{256, 1, 1})); // default
        QCOMPARE(spin.durationUs, 100.0);
        QCOMPARE(spin.streamIndex, 0);

        const Op& copy = main.ops[1];
        QCOMPARE(kindName(copy.copy), kindName(CopyKind::H2D));
        QCOMPARE(copy.bytes, int64_t(1024));
        QVERIFY(copy.pinned); // default

        const Op& matmul = main.ops[4];
        QCOMPARE(kindName(matmul.kernel), kindName(KernelKind::Matmul));
        QVERIFY(!matmul.gridGiven);
        QCOMPARE(matmul.size, int64_t(512));
        QCOMPARE(matmul.block, (Dim3{16, 16, 1}));
        QCOMPARE(matmul.streamIndex, 2);

        const Op& graph = main.ops[5];
        QCOMPARE(kindName(graph.kind), kindName(OpKind::Graph));
        QCOMPARE(graph.ops.size(), size_t(3));
        for (const Op& node : graph.ops) {
            QCOMPARE(qb(node.stream), QByteArray("s3")); // inherited
            QCOMPARE(node.streamIndex, 2);
        }
        QCOMPARE(graph.ops[0].grid, (Dim3{2, 3, 1}));
        QCOMPARE(kindName(graph.ops[0].kernel), kindName(KernelKind::Empty));
        QCOMPARE(kindName(graph.ops[1].kind), kindName(OpKind::Memset));
        QCOMPARE(graph.ops[2].durationUs, 5.0);

        QCOMPARE(main.ops[7].durationUs, 0.0); // host-func default
        QCOMPARE(main.ops[9].durationUs, 2.5);
        QCOMPARE(main.ops[12].bytes, int64_t(0)); // free without bytes
        QCOMPARE(qb(main.ops[13].name), QByteArray("done"));
        QCOMPARE(main.ops[14].grid, (Dim3{64, 2, 2}));
        QCOMPARE(main.ops[14].streamIndex, 3);

        const ThreadSpec& worker = s.threads[1];
        QCOMPARE(kindName(worker.ops[0].kernel), kindName(KernelKind::Fma));
        QCOMPARE(worker.ops[0].grid, (Dim3{8, 1, 2}));
        QCOMPARE(worker.ops[0].sharedBytes, int64_t(1024));
        QCOMPARE(kindName(worker.ops[1].copy), kindName(CopyKind::P2P));
        QCOMPARE(worker.ops[1].dstDevice, 0);
        QCOMPARE(worker.ops[7].bytes, int64_t(16));

        // Events in order of first appearance, resolved in every op that names one.
        QCOMPARE(s.events, (std::vector<std::string>{"e1", "e2"}));
        QCOMPARE(main.ops[2].eventIndex, 0);
        QCOMPARE(main.ops[3].eventIndex, 0);
        QCOMPARE(main.ops[10].eventIndex, 0);
        QCOMPARE(worker.ops[4].eventIndex, 1);

        QCOMPARE(s.run.warmup, 1);
        QCOMPARE(s.run.iterations, 3);
        QCOMPARE(qb(s.run.env.at("CUDA_DEVICE_MAX_CONNECTIONS")), QByteArray("8"));
        QCOMPARE(qb(s.run.env.at("OTHER")), QByteArray("x"));
        QCOMPARE(s.run.maxConnections(), std::optional<int>(8));

        QCOMPARE(s.expect.size(), size_t(2));
        QCOMPARE(qb(s.expect[0].id), QByteArray("overlap"));
        QCOMPARE(s.expect[0].streams, (std::vector<std::string>{"s1", "s3"}));
        QVERIFY(s.expect[0].key);
        QCOMPARE(qb(s.expect[0].why), QByteArray("The streams overlap."));
        QCOMPARE(qb(s.expect[1].op), QByteArray("<"));
        QCOMPARE(s.expect[1].device, -1);

        QCOMPARE(s.variants.size(), size_t(2));
        QCOMPARE(qb(s.variants[0].title), QByteArray("Serial"));
        QVERIFY(s.variants[0].hasExpect);
        QCOMPARE(s.variants[0].expect.size(), size_t(1));
        QCOMPARE(dumped(Json::parse(s.variants[0].patchJson)),
                 dumped(Json::parse(R"({"/threads/0/ops/4/stream": "s1", "/streams/2/kind": "blocking"})")));
        QVERIFY(!s.variants[1].hasExpect);
    }

    void minimalDefaults()
    {
        const auto r = parse(R"({"format": "streamscope-scenario", "version": 1,
            "streams": [{"name": "s"}, {"name": "t", "device": 2}],
            "threads": [{"name": "h", "ops": [{"op": "kernel", "stream": "s", "grid": 1, "duration_us": 1}]},
                        {"name": "g", "device": 3}]})");
        QVERIFY2(r.ok(), describe(r).c_str());
        const Scenario& s = r->scenario;
        // Without "devices", the devices are those that streams and threads name, in index order.
        QCOMPARE(s.devices.size(), size_t(3));
        QCOMPARE(s.devices[0].index, 0);
        QCOMPARE(s.devices[1].index, 2);
        QCOMPARE(s.devices[2].index, 3);
        QCOMPARE(s.run.warmup, 0);
        QCOMPARE(s.run.iterations, 1);
        QVERIFY(s.run.env.empty());
        QVERIFY(s.expect.empty());
        QVERIFY(s.variants.empty());
        QVERIFY(s.threads[1].ops.empty());
        QVERIFY(s.events.empty());
    }

    void gridForms_data()
    {
        QTest::addColumn<QByteArray>("grid");
        QTest::addColumn<uint>("x");
        QTest::addColumn<uint>("y");
        QTest::addColumn<uint>("z");
        QTest::newRow("int") << QByteArray("7") << 7u << 1u << 1u;
        QTest::newRow("[x]") << QByteArray("[7]") << 7u << 1u << 1u;
        QTest::newRow("[x,y]") << QByteArray("[7, 3]") << 7u << 3u << 1u;
        QTest::newRow("[x,y,z]") << QByteArray("[7, 3, 2]") << 7u << 3u << 2u;
        QTest::newRow("whole float") << QByteArray("1e3") << 1000u << 1u << 1u;
        QTest::newRow("largest") << QByteArray("[2147483647, 65535, 65535]") << 2147483647u << 65535u << 65535u;
    }

    void gridForms()
    {
        QFETCH(QByteArray, grid);
        QFETCH(uint, x);
        QFETCH(uint, y);
        QFETCH(uint, z);
        const auto r = parse(patched("/threads/0/ops/0/grid", grid));
        QVERIFY2(r.ok(), describe(r).c_str());
        QCOMPARE(r->scenario.threads[0].ops[0].grid, (Dim3{x, y, z}));
    }

    void roundTrip_data()
    {
        QTest::addColumn<QByteArray>("text");
        QTest::addColumn<QByteArray>("variant");
        QTest::newRow("every field") << QByteArray(kBase) << QByteArray();
        QTest::newRow("variant applied") << QByteArray(kBase) << QByteArray("serial");
        QTest::newRow("minimal") << QByteArray(R"({"format": "streamscope-scenario", "version": 1,
            "threads": [{"name": "cpu", "ops": [{"op": "host-work", "duration_us": 0}]}]})")
                                 << QByteArray();
        QTest::newRow("pageable, big numbers, odd names")
            << QByteArray(R"({"format": "streamscope-scenario", "version": 1,
            "title": "Ünïcode \u0022quoted\u0022 ~/",
            "streams": [{"name": "a/b~c", "priority": -5, "kind": "per-thread-default"}],
            "threads": [{"name": "t", "repeat": 1000, "workers": 16, "ops": [
              {"op": "memcpy", "stream": "a/b~c", "kind": "d2h", "bytes": 9007199254740993, "host": "pageable"},
              {"op": "memcpy", "stream": "a/b~c", "kind": "d2d", "bytes": 1},
              {"op": "kernel", "stream": "a/b~c", "grid": [1, 1, 5], "block": [8, 8, 8], "duration_us": 0.1}]}],
            "run": {"env": {"CUDA_DEVICE_MAX_CONNECTIONS": "08", "X": "1"}},
            "variants": [{"id": "v", "set": {}, "expect": []}, {"id": "w"}]})")
            << QByteArray();
    }

    void roundTrip()
    {
        QFETCH(QByteArray, text);
        QFETCH(QByteArray, variant);
        const auto first = parse(text.toStdString(), variant.toStdString());
        QVERIFY2(first.ok(), describe(first).c_str());
        const std::string written = scenarioToJson(first->scenario);
        const auto second = parse(written);
        QVERIFY2(second.ok(), (describe(second) + "\n" + written).c_str());
        const std::string diff = diffScenario(first->scenario, second->scenario);
        QVERIFY2(diff.empty(), ("differs at " + diff + "\n" + written).c_str());
        QCOMPARE(qb(scenarioToJson(second->scenario)), qb(written)); // canonical: a fixed point
        QCOMPARE(second->warnings.size(), first->warnings.size());
    }

    void roundTripInMemory()
    {
        // A scenario built in code (as the editor does), resolved and with every field set, survives writing.
        Scenario s = editorScenario();
        s.id = "mem";
        s.description = "built in code";
        s.devices = {DeviceSpec{0, "laptop"}};
        s.run.warmup = 2;
        s.run.iterations = 5;
        s.run.env["CUDA_DEVICE_MAX_CONNECTIONS"] = "4";
        s.threads[0].repeat = 3;
        s.threads[0].workers = 2;
        Op graph;
        graph.kind = OpKind::Graph;
        graph.stream = "b";
        Op node;
        node.kind = OpKind::Kernel;
        node.kernel = KernelKind::Transpose;
        node.size = 2048;
        node.block = Dim3{32, 8, 1};
        node.sharedBytes = 4096;
        graph.ops = {node, node};
        s.threads[0].ops.push_back(graph);
        Expectation e;
        e.id = "gap";
        e.metric = "gap_us";
        e.spans = {"kernel", "memcpy d2h"};
        e.kinds = {"kernel"};
        e.device = 0;
        e.op = ">";
        e.value = 12.25;
        e.why = "The copy waits.";
        s.expect = {e};
        Variant v;
        v.id = "nb";
        v.patchJson = R"({"/streams/0/kind": "non-blocking"})";
        v.expect = {e};
        v.hasExpect = true;
        s.variants = {v};

        const auto validated = validateScenario(s);
        QVERIFY2(validated.ok(), describe(validated).c_str());
        const Scenario& resolved = validated->scenario;
        const auto again = parse(scenarioToJson(resolved));
        QVERIFY2(again.ok(), describe(again).c_str());
        const std::string diff = diffScenario(resolved, again->scenario);
        QVERIFY2(diff.empty(), diff.c_str());
        // The resolved scenario equals the one built, apart from what resolution fills in.
        QCOMPARE(resolved.threads[0].ops[4].ops[0].size, int64_t(2048));
        QCOMPARE(qb(resolved.threads[0].ops[4].ops[1].stream), QByteArray("b"));
        QCOMPARE(resolved.events, (std::vector<std::string>{"done"}));
        QCOMPARE(qb(resolved.devices[0].profile), QByteArray("laptop"));
        QCOMPARE(resolved.expect[0].spans, e.spans);
    }

    void writerIsCanonical()
    {
        const auto r = parse(kBase);
        QVERIFY2(r.ok(), describe(r).c_str());
        const std::string text = scenarioToJson(r->scenario);
        QVERIFY(text.starts_with("{\n  \"format\": \"streamscope-scenario\",\n  \"version\": 1,"));
        QVERIFY(text.ends_with("}\n"));
        const Json j = Json::parse(text);
        // Defaults are left out...
        QVERIFY(!j["streams"][0].contains("kind"));
        QVERIFY(!j["streams"][0].contains("device"));
        QVERIFY(!j["streams"][0].contains("priority"));
        QVERIFY(!j["threads"][0].contains("workers"));
        QVERIFY(!j["threads"][0]["ops"][0].contains("block"));
        QVERIFY(!j["threads"][0]["ops"][1].contains("host"));
        QVERIFY(!j["threads"][0]["ops"][4].contains("grid"));             // derived from size
        QVERIFY(!j["threads"][0]["ops"][5]["ops"][0].contains("stream")); // inherited from the graph
        QVERIFY(!j["expect"][1].contains("device"));
        QVERIFY(!j["expect"][1].contains("key"));
        // ...what is needed is written.
        QCOMPARE(dumped(j["threads"][0]["ops"][0]["grid"]), dumped(Json(4)));
        QCOMPARE(dumped(j["threads"][0]["ops"][4]["block"]), dumped(Json::parse("[16, 16]")));
        QCOMPARE(dumped(j["threads"][1]["ops"][0]["grid"]), dumped(Json::parse("[8, 1, 2]")));
        QCOMPARE(dumped(j["run"]["env"]["CUDA_DEVICE_MAX_CONNECTIONS"]), dumped(Json(8)));
        QCOMPARE(dumped(j["variants"][0]["set"]["/streams/2/kind"]), dumped(Json("blocking")));

        Scenario bare;
        bare.threads.push_back(ThreadSpec{"t", 0, 1, 1, {}});
        const Json b = Json::parse(scenarioToJson(bare));
        QVERIFY(!b.contains("run"));
        QVERIFY(!b.contains("devices"));
        QVERIFY(!b.contains("expect"));
        QVERIFY(!b.contains("variants"));
    }

    void expectationToJsonWritesOneExpectation()
    {
        Expectation e;
        e.metric = "busy_us";
        e.streams = {"s1"};
        e.value = 3;
        Json j = Json::parse(expectationToJson(e));
        QCOMPARE(dumped(j),
                 dumped(Json::parse(R"({"metric": "busy_us", "streams": ["s1"], "op": ">=", "value": 3.0})")));
        e.id = "busy";
        e.device = 1;
        e.op = "<=";
        e.why = "because";
        e.key = true;
        e.kinds = {"kernel"};
        e.spans = {"k"};
        j = Json::parse(expectationToJson(e));
        QCOMPARE(dumped(j["id"]), dumped(Json("busy")));
        QCOMPARE(dumped(j["device"]), dumped(Json(1)));
        QCOMPARE(dumped(j["op"]), dumped(Json("<=")));
        QCOMPARE(dumped(j["why"]), dumped(Json("because")));
        QCOMPARE(dumped(j["key"]), dumped(Json(true)));
        QCOMPARE(dumped(j["kinds"]), dumped(Json::parse(R"(["kernel"])")));
        QCOMPARE(dumped(j["spans"]), dumped(Json::parse(R"(["k"])")));
    }

    void variantApplies()
    {
        const auto r = parse(kBase, "serial");
        QVERIFY2(r.ok(), describe(r).c_str());
        const Scenario& s = r->scenario;
        QCOMPARE(qb(s.threads[0].ops[4].stream), QByteArray("s1"));
        QCOMPARE(s.threads[0].ops[4].streamIndex, 0);
        QCOMPARE(kindName(s.streams[2].kind), kindName(StreamKind::Blocking));
        // The variant's expectations replace the scenario's.
        QCOMPARE(s.expect.size(), size_t(1));
        QCOMPARE(qb(s.expect[0].metric), QByteArray("max_concurrency"));
        QCOMPARE(s.expect[0].kinds, (std::vector<std::string>{"kernel"}));
        QCOMPARE(s.variants.size(), size_t(2));
    }

    void variantEffectReplacesTheScenarios()
    {
        const std::string path = std::string(STREAMSCOPE_SOURCE_DIR) + "/resources/presets/07-multi-gpu.json";
        const auto main = loadScenarioFile(path);
        QVERIFY2(main.ok(), describe(main).c_str());
        QCOMPARE(qb(main->scenario.effect), QByteArray("multi-device-overlap"));
        const auto one = loadScenarioFile(path, "one-device");
        QVERIFY2(one.ok(), describe(one).c_str());
        QCOMPARE(qb(one->scenario.effect), QByteArray("gpu-filling-kernel"));
        // Written back, the effect stays where it was.
        const auto again = parseScenario(scenarioToJson(one->scenario), "again");
        QVERIFY2(again.ok(), describe(again).c_str());
        QCOMPARE(qb(again->scenario.effect), QByteArray("gpu-filling-kernel"));
        QCOMPARE(qb(again->scenario.variants[0].effect), QByteArray("gpu-filling-kernel"));
    }

    void variantWithoutExpectKeepsTheScenarios()
    {
        const auto r = parse(kBase, "more");
        QVERIFY2(r.ok(), describe(r).c_str());
        QCOMPARE(r->scenario.threads[0].repeat, 5);
        QCOMPARE(r->scenario.expect.size(), size_t(2));
        QCOMPARE(qb(r->scenario.expect[0].id), QByteArray("overlap"));
        // Without a variant nothing changes.
        const auto base = parse(kBase);
        QCOMPARE(base->scenario.threads[0].repeat, 2);
        QCOMPARE(kindName(base->scenario.streams[2].kind), kindName(StreamKind::NonBlocking));
    }

    void variantAppendsAndAddsStreams()
    {
        Json doc = Json::parse(kBase);
        doc["variants"].push_back(Json::parse(R"({"id": "four", "set": {
            "/streams/-": {"name": "s4", "kind": "non-blocking"},
            "/threads/0/ops/7/stream": "s4",
            "/threads/0/ops/-": {"op": "stream-sync", "stream": "s4"},
            "/run/env/CUDA_DEVICE_MAX_CONNECTIONS": 1},
          "expect": [{"metric": "busy_us", "streams": ["s4"], "op": ">", "value": 0}]})"));
        const std::string text = doc.dump();
        QVERIFY2(parse(text).ok(), describe(parse(text)).c_str()); // "s4" is known to the variant's expect
        const auto r = parse(text, "four");
        QVERIFY2(r.ok(), describe(r).c_str());
        QCOMPARE(r->scenario.streams.size(), size_t(5));
        QCOMPARE(r->scenario.threads[0].ops[7].streamIndex, 4);
        QCOMPARE(kindName(r->scenario.threads[0].ops.back().kind), kindName(OpKind::StreamSync));
        QCOMPARE(r->scenario.run.maxConnections(), std::optional<int>(1));
        QCOMPARE(r->scenario.expect[0].streams, (std::vector<std::string>{"s4"}));
    }

    void variantWildcards()
    {
        Json doc = Json::parse(kBase);
        doc["variants"].push_back(Json::parse(R"({"id": "star", "set": {
            "/threads/*/ops/*/host": "pageable",
            "/streams/*/priority": -2,
            "/threads/0/ops/5/ops/*/name": "node"}})"));
        doc["threads"][0]["ops"][5]["ops"][1]["name"] = "named";
        const auto r = parse(doc.dump(), "star");
        QVERIFY2(r.ok(), describe(r).c_str());
        ScenarioLimits small;
        small.maxBytes = doc.dump().size() + 10;
        QVERIFY2(parse(doc.dump(), "star", small).ok(), "a few small copies are allowed");
        const Scenario& s = r->scenario;
        // Only values that exist are replaced: the one copy with "host", the one stream with "priority".
        QVERIFY(s.threads[0].ops[1].pinned);
        QVERIFY(!s.threads[1].ops[2].pinned);
        QCOMPARE(r->warnings.size(), size_t(1));
        QCOMPARE(qb(r->warnings[0].path), QByteArray("/threads/1/ops/2/host"));
        QCOMPARE(s.streams[0].priority, 0);
        QCOMPARE(s.streams[2].priority, -2);
        QVERIFY(s.threads[0].ops[5].ops[0].name.empty());
        QCOMPARE(qb(s.threads[0].ops[5].ops[1].name), QByteArray("node"));
    }

    void variantErrors_data()
    {
        QTest::addColumn<QByteArray>("set");
        QTest::addColumn<QByteArray>("path");
        QTest::addColumn<QByteArray>("message");
        QTest::newRow("missing parent") << QByteArray(R"({"/threads/5/repeat": 1})")
                                        << QByteArray("/variants/2/set/~1threads~15~1repeat")
                                        << QByteArray(R"("/threads/5" does not exist)");
        QTest::newRow("past the end") << QByteArray(R"({"/streams/9": {"name": "x"}})")
                                      << QByteArray("/variants/2/set/~1streams~19")
                                      << QByteArray(R"(the array "/streams" has 4 elements)");
        QTest::newRow("not an index") << QByteArray(R"({"/streams/x": 1})")
                                      << QByteArray("/variants/2/set/~1streams~1x") << QByteArray("is not an index");
        QTest::newRow("into a scalar") << QByteArray(R"({"/title/x": 1})") << QByteArray("/variants/2/set/~1title~1x")
                                       << QByteArray("not an object or array");
        QTest::newRow("wildcard matches nothing")
            << QByteArray(R"({"/threads/0/ops/*/hots": "pageable"})")
            << QByteArray("/variants/2/set/~1threads~10~1ops~1*~1hots") << QByteArray("it matches nothing");
        QTest::newRow("wildcard at the top")
            << QByteArray(R"({"/*/0/id": "x"})") << QByteArray("/variants/2/set/~1*~10~1id")
            << QByteArray("cannot stand for a top-level field");
        QTest::newRow("wildcard copies too much")
            << QByteArray::fromStdString(Json{{"/threads/*/ops/*/stream", std::string(5000000, 'x')}}.dump())
            << QByteArray("/variants/2/set/~1threads~1*~1ops~1*~1stream")
            << QByteArray("17 copies of 5000002 bytes exceed the limit of 67108864 bytes");
        QTest::newRow("result invalid") << QByteArray(R"({"/streams/0/kind": "bogus"})")
                                        << QByteArray("/streams/0/kind") << QByteArray(R"(with variant "bad" applied)");
    }

    void variantErrors()
    {
        QFETCH(QByteArray, set);
        QFETCH(QByteArray, path);
        QFETCH(QByteArray, message);
        Json doc = Json::parse(kBase);
        doc["variants"].push_back(Json{{"id", "bad"}, {"set", Json::parse(set.toStdString())}});
        const auto r = parse(doc.dump(), "bad");
        QVERIFY(!r.ok());
        QVERIFY2(qb(r.error().path) == path, r.error().toString().c_str());
        QVERIFY2(qb(r.error().message).contains(message), r.error().toString().c_str());
    }

    void unknownVariant()
    {
        const auto r = parse(kBase, "fast");
        QVERIFY(!r.ok());
        QCOMPARE(qb(r.error().path), QByteArray("/variants"));
        QVERIFY2(qb(r.error().message).contains(R"(unknown variant "fast" (known: "serial", "more"))"),
                 r.error().toString().c_str());

        const auto none = parse(patched("/variants", ""), "fast");
        QVERIFY(!none.ok());
        QVERIFY2(qb(none.error().message).contains("this scenario has no variants"), none.error().toString().c_str());

        // A broken file says what is broken, not that the variant is missing.
        const auto broken = parse(patched("/streams/0/kind", R"("bogus")"), "fast");
        QVERIFY(!broken.ok());
        QCOMPARE(qb(broken.error().path), QByteArray("/streams/0/kind"));
    }

    void loadFile()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const std::string good = dir.filePath(QStringLiteral("good.json")).toStdString();
        const std::string bad = dir.filePath(QStringLiteral("bad.json")).toStdString();
        {
            QFile f(QString::fromStdString(good));
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(kBase);
        }
        {
            QFile f(QString::fromStdString(bad));
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(QByteArray::fromStdString(patched("/threads/0/ops/1/stream", R"("s9")")));
        }
        const auto r = loadScenarioFile(good);
        QVERIFY2(r.ok(), describe(r).c_str());
        QCOMPARE(r->scenario.threads.size(), size_t(2));
        const auto v = loadScenarioFile(good, "more");
        QVERIFY(v.ok());
        QCOMPARE(v->scenario.threads[0].repeat, 5);

        const auto e = loadScenarioFile(bad);
        QVERIFY(!e.ok());
        QCOMPARE(qb(e.error().file), qb(bad));
        QCOMPARE(qb(e.error().path), QByteArray("/threads/0/ops/1/stream"));
        QVERIFY(qb(e.error().toString()).startsWith(qb(bad + ": /threads/0/ops/1/stream: unknown stream")));

        const std::string missing = dir.filePath(QStringLiteral("missing.json")).toStdString();
        const auto m = loadScenarioFile(missing);
        QVERIFY(!m.ok());
        QCOMPARE(qb(m.error().file), qb(missing));
        QVERIFY2(qb(m.error().message).contains("does not exist"), m.error().toString().c_str());

        const auto d = loadScenarioFile(dir.path().toStdString());
        QVERIFY(!d.ok());
        QVERIFY2(qb(d.error().message).contains("is a directory"), d.error().toString().c_str());

        ScenarioLimits small;
        small.maxBytes = 64;
        const auto big = loadScenarioFile(good, {}, small);
        QVERIFY(!big.ok());
        QVERIFY2(qb(big.error().message).contains("the limit is 64"), big.error().toString().c_str());
    }

    void validateResolvesAnEditorScenario()
    {
        Scenario s = editorScenario();
        const auto r = validateScenario(s, "editor");
        QVERIFY2(r.ok(), describe(r).c_str());
        const Scenario& v = r->scenario;
        QCOMPARE(v.threads[0].ops[0].streamIndex, 0);
        QCOMPARE(v.threads[0].ops[2].streamIndex, 1);
        QCOMPARE(v.threads[0].ops[1].eventIndex, 0);
        QCOMPARE(v.threads[0].ops[2].eventIndex, 0);
        QCOMPARE(v.events, (std::vector<std::string>{"done"}));
        QCOMPARE(v.devices.size(), size_t(1)); // derived from the streams and threads
        QVERIFY(v.threads[0].ops[0].gridGiven);
        QVERIFY(r->warnings.empty());

        s.threads[0].ops[3].pinned = false;
        const auto w = validateScenario(s, "editor");
        QVERIFY(w.ok());
        QCOMPARE(w->warnings.size(), size_t(1));
        QCOMPARE(qb(w->warnings[0].path), QByteArray("/threads/0/ops/3/host"));
    }

    void validateReportsFilePaths_data()
    {
        QTest::addColumn<int>("breakage");
        QTest::addColumn<QByteArray>("path");
        QTest::addColumn<QByteArray>("message");
        QTest::newRow("unknown stream") << 0 << QByteArray("/threads/0/ops/3/stream")
                                        << QByteArray(R"(unknown stream "zz")");
        QTest::newRow("duplicate stream")
            << 1 << QByteArray("/streams/1/name") << QByteArray(R"(duplicate stream name "a")");
        QTest::newRow("spin without duration")
            << 2 << QByteArray("/threads/0/ops/0/duration_us") << QByteArray("duration_us must be greater than 0");
        QTest::newRow("negative bytes") << 3 << QByteArray("/threads/0/ops/3/bytes")
                                        << QByteArray("bytes must not be negative");
        QTest::newRow("bad patch") << 4 << QByteArray("/variants/0/set")
                                   << QByteArray("expected an object, got string");
        QTest::newRow("no threads") << 5 << QByteArray("/threads")
                                    << QByteArray("a scenario needs at least one host thread");
        QTest::newRow("node in another stream") << 6 << QByteArray("/threads/0/ops/4/ops/0/stream")
                                                << QByteArray("a graph node runs in its graph's stream");
        QTest::newRow("too many ops") << 7 << QByteArray("/threads/0/ops/2") << QByteArray("too many operations");
    }

    void validateReportsFilePaths()
    {
        QFETCH(int, breakage);
        QFETCH(QByteArray, path);
        QFETCH(QByteArray, message);
        Scenario s = editorScenario();
        ScenarioLimits limits;
        switch (breakage) {
        case 0: s.threads[0].ops[3].stream = "zz"; break;
        case 1: s.streams[1].name = "a"; break;
        case 2: s.threads[0].ops[0].durationUs = 0; break;
        case 3: s.threads[0].ops[3].bytes = -5; break;
        case 4: s.variants.push_back(Variant{"v", {}, {}, "{not json", {}, false, {}}); break;
        case 5: s.threads.clear(); break;
        case 6: {
            Op graph;
            graph.kind = OpKind::Graph;
            graph.stream = "a";
            Op node;
            node.kind = OpKind::Memset;
            node.stream = "b";
            node.bytes = 8;
            graph.ops = {node};
            s.threads[0].ops.push_back(graph);
            break;
        }
        case 7: limits.maxOps = 2; break;
        }
        const auto r = validateScenario(s, "editor", limits);
        QVERIFY(!r.ok());
        QCOMPARE(qb(r.error().file), QByteArray("editor"));
        QVERIFY2(qb(r.error().path) == path, r.error().toString().c_str());
        QVERIFY2(qb(r.error().message).contains(message), r.error().toString().c_str());
    }
};

QTEST_GUILESS_MAIN(TestScenarioJson)
#include "tst_scenario_json.moc"
