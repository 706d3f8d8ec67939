// Chrome trace export and import: exact round trips through our export, its structure and flow binding, layouts of
// earlier versions, exact times, and Chrome traces of other producers.
#include "import_export_fixtures.h"

#include <QTest>

#include <charconv>
#include <limits>
#include <string>
#include <system_error>

class TestChromeTrace : public QObject {
    Q_OBJECT

private slots:
    // ---- Chrome export and round trips

    void chromeRoundTrip_data()
    {
        QTest::addColumn<QString>("name");
        QTest::newRow("rich") << QStringLiteral("rich");
        QTest::newRow("empty") << QStringLiteral("empty");
        for (const char* id : {"01-two-streams", "05-host-threads", "07-multi-gpu", "08-copy-compute-pipeline",
                               "14-cuda-graph", "15-host-functions"})
            QTest::newRow((std::string("sim ") + id).c_str()) << QStringLiteral("sim:%1").arg(QLatin1String(id));
        for (const auto& e : fs::directory_iterator(kSource / "tests" / "data" / "h200"))
            if (e.path().extension() == ".json")
                QTest::newRow(e.path().filename().string().c_str()) << q(e.path().string());
    }
    void chromeRoundTrip()
    {
        QFETCH(QString, name);
        Trace original;
        if (name == QLatin1String("rich")) {
            original = richTrace();
        } else if (name == QLatin1String("empty")) {
            original.finalize();
        } else if (name.startsWith(QLatin1String("sim:"))) {
            original = simulated(name.mid(4).toStdString());
            if (original.spanCount() == 0)
                QSKIP("preset not found in this checkout");
        } else {
            auto loaded = loadTraceFile(name.toStdString());
            QVERIFY2(loaded.ok(), loaded.error().toString().c_str());
            original = std::move(loaded.value());
        }
        const std::string chrome = traceToChromeJson(original);
        QCOMPARE(n(detectTraceFormatFromContent(chrome)), n(TraceFormat::Chrome));
        auto back = parseChromeTrace(chrome, "x.json");
        QVERIFY2(back.ok(), back.error().toString().c_str());
        // Same info, tracks, spans, flows and kinds: the native text is equal byte for byte.
        QCOMPARE(traceToJson(*back), traceToJson(original));
        QVERIFY(back->finalized());
        // Deterministic.
        QCOMPARE(traceToChromeJson(*back), chrome);

        // Through files, detection and the streaming reader, with a small trace and a large one alike.
        QTemporaryDir dir;
        const std::string path = dir.filePath(QStringLiteral("t.json")).toStdString();
        const Status saved = exportTrace(original, path, ExportFormat::Chrome);
        QVERIFY2(saved.ok(), saved.error().toString().c_str());
        QCOMPARE(n(detectTraceFormat(path)), n(TraceFormat::Chrome));
        auto imported = importTraceFile(path);
        QVERIFY2(imported.ok(), imported.error().toString().c_str());
        QCOMPARE(traceToJson(*imported), traceToJson(original));
    }

    void chromeExportStructure()
    {
        const Trace t = richTrace();
        const Json doc = Json::parse(traceToChromeJson(t));
        QVERIFY(doc.is_object());
        QVERIFY(doc.at("traceEvents").is_array());
        std::map<std::pair<int64_t, int64_t>, std::string> threadNames;
        std::map<int64_t, std::string> processNames;
        int complete = 0, flowStarts = 0, flowEnds = 0;
        for (const Json& e : doc["traceEvents"]) {
            const std::string ph = e.at("ph");
            if (ph == "M" && e["name"] == "thread_name")
                threadNames[{e["pid"].get<int64_t>(), e["tid"].get<int64_t>()}] = e["args"]["name"];
            if (ph == "M" && e["name"] == "process_name")
                processNames[e["pid"].get<int64_t>()] = e["args"]["name"];
            if (ph == "X") {
                QVERIFY(e["ts"].is_number() && e["dur"].is_number());
                QCOMPARE(e["cat"].get<std::string>(), std::string("streamscope"));
                QVERIFY(e["args"]["kind"].is_string());
                QCOMPARE(e["args"]["span"].get<int>(), complete); // also what speedscope tells spans apart by
                ++complete;
            }
            if (ph == "s")
                ++flowStarts;
            if (ph == "f") {
                ++flowEnds;
                QCOMPARE(e["bp"].get<std::string>(), std::string("e"));
            }
        }
        QCOMPARE(complete, int(t.spanCount()));
        QCOMPARE(flowStarts, int(t.flows.size()));
        QCOMPARE(flowEnds, int(t.flows.size()));
        // A process per device and one for the host, a thread per track, named.
        QCOMPARE(processNames.size(), size_t(4));
        QCOMPARE(processNames[0], std::string("GPU 0: NVIDIA H200"));
        QCOMPARE(processNames[1], std::string("GPU 1: NVIDIA H200 #2"));
        QCOMPARE(processNames[1000000], std::string("Host"));
        QCOMPARE(threadNames.size(), t.tracks.size());
        QCOMPARE(threadNames[std::make_pair(int64_t(0), int64_t(2))], std::string("s1"));
        QCOMPARE(threadNames[std::make_pair(int64_t(1000000), int64_t(1))], t.tracks[0].name);

        // The kernel: ts/dur in µs with the ns as fraction, and its details in args.
        for (const Json& e : doc["traceEvents"]) {
            if (e["ph"] != "X" || e["args"]["kind"] != "kernel")
                continue;
            QCOMPARE(e["args"]["stream"].get<std::string>(), std::string("s1"));
            QCOMPARE(e["args"]["device"].get<int>(), 0);
            QCOMPARE(q(e["args"]["grid"].dump()), QStringLiteral("[132,2,1]"));
            QCOMPARE(q(e["args"]["block"].dump()), QStringLiteral("[256,1,1]"));
            QCOMPARE(e["args"]["thread"].get<int>(), 0);
            QCOMPARE(e["ts"].get<double>(), 3.5); // 3000 ns after the earliest start (-500 ns)
        }
        const Json other = doc.at("otherData").at("streamscope"); // a copy: GCC 13 -Wdangling-reference
        QCOMPARE(other.at("format").get<std::string>(), std::string("streamscope-chrome-export"));
        QCOMPARE(other.at("time_origin_ns").get<int64_t>(), int64_t(-500));
        QCOMPARE(other.at("trace").at("info").at("backend").get<std::string>(), std::string("cuda"));
        // Old Perfetto versions read "ts" before any array value of an event: it comes second.
        const std::string text = traceToChromeJson(t);
        QVERIFY(text.find("{\"ph\":\"X\",\"ts\":") != std::string::npos);
        QVERIFY(text.find("\\u00") != std::string::npos); // the \x01 in a name, escaped
    }

    void chromeFlowBinding_data()
    {
        QTest::addColumn<QString>("name");
        QTest::newRow("rich") << QStringLiteral("rich");
        for (const char* id : {"04-default-stream", "05-host-threads", "11-hardware-queues", "15-host-functions"})
            QTest::newRow(id) << QStringLiteral("sim:%1").arg(QLatin1String(id));
    }
    void chromeFlowBinding()
    {
        // Viewers bind a flow event to a slice by time, not by our args.span: Chrome DevTools' trace engine to the
        // first event (in file order) of the same pid, tid, ts and cat, pairing "s" with the next "f" of the same
        // cat, name and id in file order; Perfetto to the slice open on the thread at ts (complete events sort
        // before flow events of equal time), an "f" only with "bp": "e". Each rule must land on the span the flow
        // names, wherever that span is the only one starting at its time on its thread.
        QFETCH(QString, name);
        const Trace t = name == QLatin1String("rich") ? richTrace() : simulated(name.mid(4).toStdString());
        if (t.spanCount() == 0)
            QSKIP("preset not found in this checkout");
        const Json doc = Json::parse(traceToChromeJson(t));
        std::vector<const Json*> slices;
        std::map<std::tuple<int64_t, int64_t, double>, int> starts; // (pid, tid, ts) -> slices starting there
        for (const Json& e : doc["traceEvents"]) {
            if (e["ph"] == "X") {
                slices.push_back(&e);
                ++starts[{e["pid"].get<int64_t>(), e["tid"].get<int64_t>(), e["ts"].get<double>()}];
            }
        }
        const auto firstAt = [&](const Json& flow) -> int {
            for (size_t i = 0; i < slices.size(); ++i) {
                const Json& x = *slices[i];
                if (x["pid"] == flow["pid"] && x["tid"] == flow["tid"] && x["ts"] == flow["ts"]
                    && x["cat"] == flow["cat"])
                    return int(i);
            }
            return -1;
        };
        const Json& events = doc["traceEvents"];
        std::set<int64_t> ids;
        size_t flows = 0, bound = 0;
        for (size_t i = 0; i < events.size(); ++i) {
            if (events[i]["ph"] != "s")
                continue;
            ++flows;
            QVERIFY(i + 1 < events.size());
            const Json& s = events[i];
            const Json& f = events[i + 1];
            QCOMPARE(f["ph"].get<std::string>(), std::string("f"));
            QCOMPARE(f["bp"].get<std::string>(), std::string("e"));
            QVERIFY(f["id"] == s["id"] && f["cat"] == s["cat"] && f["name"] == s["name"]);
            // Perfetto reads events in time order and drops an "f" before its "s": a flow starts at its earlier end.
            QVERIFY(s["ts"].get<double>() <= f["ts"].get<double>());
            QVERIFY(s["args"]["end"] != f["args"]["end"]);
            QVERIFY(ids.insert(s["id"].get<int64_t>()).second); // Perfetto keeps v1 ids for the whole trace
            for (const Json* end : {&s, &f}) {
                const int span = (*end)["args"]["span"].get<int>();
                QVERIFY(span >= 0 && size_t(span) < slices.size());
                const Json& x = *slices[size_t(span)];
                QVERIFY(x["pid"] == (*end)["pid"] && x["tid"] == (*end)["tid"] && x["ts"] == (*end)["ts"]);
                QCOMPARE(x["cat"].get<std::string>(), (*end)["cat"].get<std::string>());
                if (starts[{x["pid"].get<int64_t>(), x["tid"].get<int64_t>(), x["ts"].get<double>()}] == 1) {
                    QCOMPARE(firstAt(*end), span);
                    ++bound;
                }
            }
        }
        QCOMPARE(flows, t.flows.size());
        if (name != QLatin1String("rich"))
            QCOMPARE(bound, 2 * flows); // the lessons have no two spans starting together on a track
        else
            QVERIFY(bound >= flows); // two of its ends are at a span that starts with a zero-length one
    }

    void chromePreviousLayoutImports()
    {
        // Exports written before spans and arrows shared a category ("cat" the span kind, arrows "dependency", no
        // args.span on spans, every flow starting at its source, no args.end) are the same version and come back
        // exactly. Rewritten as text, one event a line: through a JSON document the times would become doubles.
        const Trace t = richTrace();
        std::istringstream in(traceToChromeJson(t));
        std::vector<std::string> lines;
        for (std::string line; std::getline(in, line);)
            lines.push_back(line);
        const std::string shared = "\"cat\":\"streamscope\"";
        const auto replace = [](std::string& line, const std::string& what, const std::string& with) {
            const size_t at = line.find(what);
            QVERIFY2(at != std::string::npos, line.c_str());
            line.replace(at, what.size(), with);
        };
        int swapped = 0;
        for (size_t i = 0; i < lines.size(); ++i) {
            std::string& line = lines[i];
            if (line.starts_with("{\"ph\":\"X\"")) {
                const size_t kind = line.find("\"kind\":\"") + 8;
                replace(line, shared, "\"cat\":\"" + line.substr(kind, line.find('"', kind) - kind) + "\"");
                const size_t span = line.rfind(",\"span\":");
                QVERIFY(span != std::string::npos);
                line.erase(span, line.rfind("}}") - span);
            } else if (line.starts_with("{\"ph\":\"s\"")) {
                QVERIFY(i + 1 < lines.size());
                std::string& next = lines[i + 1];
                for (std::string* l : {&line, &next})
                    replace(*l, shared, "\"cat\":\"dependency\"");
                if (line.find(",\"end\":\"to\"") != std::string::npos) {
                    // Started at its target: the source's event becomes the "s", the target's the "f".
                    replace(line, "{\"ph\":\"s\"", "{\"ph\":\"f\"");
                    replace(line, ",\"id\":", ",\"bp\":\"e\",\"id\":");
                    replace(next, "{\"ph\":\"f\"", "{\"ph\":\"s\"");
                    replace(next, ",\"bp\":\"e\"", "");
                    const bool comma = next.ends_with(',');
                    if (!comma)
                        next += ',';
                    std::swap(line, next);
                    if (!comma)
                        next.pop_back();
                    ++swapped;
                }
                replace(line, ",\"end\":\"from\"", "");
                replace(next, ",\"end\":\"to\"", "");
                ++i;
            }
        }
        QVERIFY(swapped > 0); // the kernel's sync arrow: its call began before the kernel
        std::string old;
        for (const std::string& line : lines)
            old += line + '\n';
        QVERIFY(old.find(shared) == std::string::npos);
        QVERIFY(old.find(",\"end\":\"") == std::string::npos);
        auto back = parseChromeTrace(old, "old.json");
        QVERIFY2(back.ok(), back.error().toString().c_str());
        QCOMPARE(traceToJson(*back), traceToJson(t));
    }

    void chromeTimesAreExact()
    {
        // ts/dur as µs with three decimals: whole ns survive, whatever the magnitude.
        Trace t;
        const uint32_t s = t.addTrack({TrackKind::Stream, "s", 0});
        const int64_t base = int64_t(1) << 60;
        for (int64_t d : {0LL, 1LL, 999LL, 1000LL, 1001LL, 123456789LL})
            t.addSpan({s, SpanKind::Kernel, "k", base + d * 7, base + d * 7 + d});
        t.addSpan({s, SpanKind::Kernel, "low", std::numeric_limits<int64_t>::min() / 2, 0});
        t.finalize();
        auto back = parseChromeTrace(traceToChromeJson(t), "x");
        QVERIFY2(back.ok(), back.error().toString().c_str());
        QCOMPARE(back->spans.start, t.spans.start);
        QCOMPARE(back->spans.end, t.spans.end);
    }

    void chromeDurationsAddUp()
    {
        // Viewers add "ts" and "dur" as doubles. Where one span ends as the next begins, the sum must be the next
        // one's "ts", not a hair past it (Chrome DevTools would leave the next one out), and still read back exact.
        Trace t;
        const uint32_t host = t.addTrack({TrackKind::HostThread, "main", 0});
        std::mt19937_64 random(7);
        int64_t at = 0;
        for (int i = 0; i < 3000; ++i) {
            const int64_t d = int64_t(random() % 10'000'000) + 1;
            t.addSpan({host, SpanKind::ApiCall, "cudaMemcpyAsync", at, at + d});
            at += d;
        }
        const uint32_t other = t.addTrack({TrackKind::HostThread, "other", 0});
        t.addSpan({other, SpanKind::ApiCall, "pageable", 4956407, 7203369}); // 4956.407 + 2246.962 > 7203.369
        t.addSpan({other, SpanKind::ApiCall, "next", 7203369, 7207369});
        // speedscope subtracts the thread's earliest "ts" before it adds "dur": kernels of a graph back to back,
        // as an H200 ran them (lesson 14), from 5.249 µs on: (6.825 - 5.249) + 1.576 is a hair past 8.401 - 5.249.
        const uint32_t graph = t.addTrack({TrackKind::Stream, "s", 0});
        for (int64_t k = 0; k < 200; ++k)
            t.addSpan({graph, SpanKind::Kernel, "tiny", 5249 + 1576 * k, 5249 + 1576 * (k + 1)});
        t.finalize();
        const std::string text = traceToChromeJson(t);
        const Json doc = Json::parse(text);
        std::map<std::pair<int64_t, double>, double> ends; // (tid, ts) -> ts + dur, as a viewer computes them
        for (const Json& e : doc["traceEvents"])
            if (e["ph"] == "X")
                ends[{e["tid"].get<int64_t>(), e["ts"].get<double>()}] = e["ts"].get<double>() + e["dur"].get<double>();
        int touching = 0;
        for (const auto& [where, end] : ends) {
            const auto next = ends.upper_bound(where);
            if (next != ends.end() && next->first.first == where.first) {
                QVERIFY(end <= next->first.second);
                touching += end == next->first.second;
            }
        }
        QCOMPARE(touching, 3000 + 199);
        // And as speedscope computes them: every time less the thread's earliest.
        std::map<int64_t, double> base;
        for (const auto& [where, end] : ends)
            base.try_emplace(where.first, where.second);
        int touchingInSpeedscope = 0;
        for (const Json& e : doc["traceEvents"]) {
            if (e["ph"] != "X")
                continue;
            const int64_t tid = e["tid"].get<int64_t>();
            const double ts = e["ts"].get<double>(), b = base[tid];
            const double end = (ts - b) + e["dur"].get<double>();
            const auto next = ends.upper_bound({tid, ts});
            if (next != ends.end() && next->first.first == tid) {
                QVERIFY2(end <= next->first.second - b, std::to_string(ts).c_str());
                touchingInSpeedscope += end == next->first.second - b;
            }
        }
        QCOMPARE(touchingInSpeedscope, 3000 + 199);
        QVERIFY(text.find("\"dur\":2246.9619999999995,") != std::string::npos);
        auto back = parseChromeTrace(text, "x.json");
        QVERIFY2(back.ok(), back.error().toString().c_str());
        QCOMPARE(traceToJson(*back), traceToJson(t));
    }

    // ---- Chrome traces of other producers

    void chromeForeign()
    {
        // Object format; process and thread names; a B/E pair; v1 flows bound to the enclosing slice and to the next
        // slice; a v2 flow (bind_id); string pids; counters and instants ignored; a GPU row by its category.
        const std::string text = R"({"displayTimeUnit": "ns", "traceEvents": [
            {"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "my app"}},
            {"ph": "M", "name": "thread_name", "pid": 1, "tid": 11, "args": {"name": "main"}},
            {"ph": "M", "name": "thread_name", "pid": 1, "tid": 12, "args": {"name": "worker"}},
            {"ph": "M", "name": "process_name", "pid": 2, "args": {"name": "GPU 3"}},
            {"ph": "M", "name": "thread_name", "pid": 2, "tid": 1, "args": {"name": "Stream 1"}},
            {"ph": "X", "pid": 1, "tid": 11, "ts": 10, "dur": 5.5, "name": "launch", "cat": "cuda_runtime"},
            {"ph": "s", "id": "0x10", "pid": 1, "tid": 11, "ts": 11, "name": "dep", "cat": "x"},
            {"ph": "X", "pid": 2, "tid": 1, "ts": 20, "dur": 10, "name": "gemm", "cat": "kernel",
             "args": {"grid": [4, 2], "block": [128], "device": 3}},
            {"ph": "f", "id": 16, "pid": 2, "tid": 1, "ts": 21, "bp": "e", "name": "dep", "cat": "x"},
            {"ph": "s", "id": 5, "pid": 2, "tid": 1, "ts": 25, "name": "done", "cat": "y"},
            {"ph": "B", "pid": 1, "tid": 12, "ts": 40, "name": "wait \u00fcber", "cat": "misc"},
            {"ph": "f", "id": 5, "pid": 1, "tid": 12, "ts": 39, "name": "done", "cat": "y"},
            {"ph": "E", "pid": 1, "tid": 12, "ts": 42.25},
            {"ph": "X", "pid": 1, "tid": 11, "ts": 50, "dur": 1, "name": "a", "bind_id": "0xab", "flow_out": true},
            {"ph": "X", "pid": 1, "tid": 12, "ts": 60, "dur": 1, "name": "b", "bind_id": 171, "flow_in": true},
            {"ph": "C", "pid": 1, "ts": 1, "name": "mem", "args": {"value": 10}},
            {"ph": "i", "pid": 1, "tid": 11, "ts": 3, "name": "mark", "s": "t"},
            {"ph": "X", "pid": "Spans", "tid": "Trace", "ts": 0, "dur": 100, "name": "whole"}
        ], "otherData": {"version": "my tracer 1.0"}, "metadata": {"x": [1, 2]}})";
        QCOMPARE(n(detectTraceFormatFromContent(text)), n(TraceFormat::Chrome));
        auto r = importTraceText(text, "foreign.json");
        QVERIFY2(r.ok(), r.error().toString().c_str());
        const Trace& t = *r;
        QCOMPARE(n(t.info.source), QStringLiteral("imported"));
        QCOMPARE(q(t.info.backend), QStringLiteral("chrome"));
        const int main = trackIndex(t, "main"), worker = trackIndex(t, "worker"), stream = trackIndex(t, "Stream 1");
        QVERIFY(main >= 0 && worker >= 0 && stream >= 0);
        QCOMPARE(n(t.tracks[size_t(stream)].kind), QStringLiteral("stream"));
        QCOMPARE(t.tracks[size_t(stream)].device, 3);
        QCOMPARE(n(t.tracks[size_t(main)].kind), QStringLiteral("host-thread"));
        QCOMPARE(t.tracks[size_t(main)].id, int64_t(11));
        QCOMPARE(t.info.devices.size(), size_t(1));
        QCOMPARE(t.info.devices[0].index, 3);
        QCOMPARE(countSpans(t, "main", -2, {SpanKind::ApiCall}), 1);
        QCOMPARE(countSpans(t, "main", -2, {SpanKind::HostWork}), 1); // "a": no category
        QCOMPARE(countSpans(t, "Stream 1", 3, {SpanKind::Kernel}), 1);
        QCOMPARE(countSpans(t, "worker", -2, {SpanKind::HostWork}), 2);
        // The kernel's details.
        for (uint32_t i = 0; i < t.spanCount(); ++i) {
            if (t.spanName(i) == "gemm") {
                QCOMPARE(t.spans.start[i], int64_t(20000));
                QCOMPARE(t.spans.end[i], int64_t(30000));
                QVERIFY(t.spans.gridOf(i) == (Dim3{4, 2, 1}));
                QVERIFY(t.spans.blockOf(i) == (Dim3{128, 1, 1}));
            }
            if (t.spanName(i) == "wait \u00fcber") {
                QCOMPARE(t.spans.start[i], int64_t(40000));
                QCOMPARE(t.spans.end[i], int64_t(42250));
            }
        }
        QCOMPARE(flowNames(t, FlowKind::Launch), QStringList{QStringLiteral("launch -> gemm")});
        QCOMPARE(flowNames(t, FlowKind::Sync), QStringList{QStringLiteral("gemm -> wait \u00fcber")});
        QCOMPARE(t.flows.size(), size_t(2)); // a -> b is host to host: no CUDA dependency
        // The string pid's span has a track of its own.
        QVERIFY(trackIndex(t, "thread Trace") >= 0);
    }

    void chromeFlowsInterleaved()
    {
        // v1 flows: two open at once and ended in the other order, one started twice (the second start counts), one
        // in steps, one ended with no start, the same id in two categories.
        const std::string text = R"({"traceEvents": [
            {"ph": "X", "pid": 1, "tid": 1, "ts": 0, "dur": 10, "name": "a1"},
            {"ph": "s", "id": 1, "pid": 1, "tid": 1, "ts": 1, "name": "launch", "cat": "c"},
            {"ph": "X", "pid": 1, "tid": 2, "ts": 0, "dur": 10, "name": "b1"},
            {"ph": "s", "id": 2, "pid": 1, "tid": 2, "ts": 1, "name": "launch", "cat": "c"},
            {"ph": "s", "id": 1, "pid": 1, "tid": 2, "ts": 2, "name": "launch", "cat": "other"},
            {"ph": "X", "pid": 1, "tid": 3, "ts": 20, "dur": 10, "name": "x2"},
            {"ph": "f", "id": 2, "pid": 1, "tid": 3, "ts": 21, "bp": "e", "name": "launch", "cat": "c"},
            {"ph": "X", "pid": 1, "tid": 3, "ts": 40, "dur": 10, "name": "x1"},
            {"ph": "f", "id": 1, "pid": 1, "tid": 3, "ts": 41, "bp": "e", "name": "launch", "cat": "c"},
            {"ph": "X", "pid": 1, "tid": 1, "ts": 60, "dur": 10, "name": "a2"},
            {"ph": "s", "id": 3, "pid": 1, "tid": 1, "ts": 61, "name": "launch", "cat": "c"},
            {"ph": "X", "pid": 1, "tid": 1, "ts": 80, "dur": 10, "name": "a3"},
            {"ph": "s", "id": 3, "pid": 1, "tid": 1, "ts": 81, "name": "launch", "cat": "c"},
            {"ph": "X", "pid": 1, "tid": 3, "ts": 100, "dur": 10, "name": "x3"},
            {"ph": "f", "id": 3, "pid": 1, "tid": 3, "ts": 101, "bp": "e", "name": "launch", "cat": "c"},
            {"ph": "f", "id": 3, "pid": 1, "tid": 3, "ts": 102, "bp": "e", "name": "launch", "cat": "c"},
            {"ph": "X", "pid": 1, "tid": 1, "ts": 120, "dur": 10, "name": "s1"},
            {"ph": "s", "id": 4, "pid": 1, "tid": 1, "ts": 121, "name": "launch", "cat": "c"},
            {"ph": "X", "pid": 1, "tid": 2, "ts": 140, "dur": 10, "name": "s2"},
            {"ph": "t", "id": 4, "pid": 1, "tid": 2, "ts": 141, "name": "launch", "cat": "c"},
            {"ph": "X", "pid": 1, "tid": 3, "ts": 160, "dur": 10, "name": "s3"},
            {"ph": "f", "id": 4, "pid": 1, "tid": 3, "ts": 161, "bp": "e", "name": "launch", "cat": "c"},
            {"ph": "X", "pid": 1, "tid": 3, "ts": 180, "dur": 10, "name": "y"},
            {"ph": "f", "id": 9, "pid": 1, "tid": 3, "ts": 181, "bp": "e", "name": "launch", "cat": "c"},
            {"ph": "X", "pid": 1, "tid": 3, "ts": 200, "dur": 10, "name": "z"},
            {"ph": "f", "id": 1, "pid": 1, "tid": 3, "ts": 201, "bp": "e", "name": "launch", "cat": "other"}
        ]})";
        auto r = importTraceText(text, "flows.json");
        QVERIFY2(r.ok(), r.error().toString().c_str());
        QCOMPARE(flowNames(*r, FlowKind::Launch),
                 (QStringList{QStringLiteral("a1 -> x1"), QStringLiteral("a3 -> x3"), QStringLiteral("b1 -> x2"),
                              QStringLiteral("b1 -> z"), QStringLiteral("s1 -> s2"), QStringLiteral("s2 -> s3")}));
    }

    void chromeBareArray()
    {
        // The array format; the closing bracket may be missing, and a trailing comma is tolerated.
        for (
            const std::string& text :
            {std::string(
                 R"([{"ph":"X","pid":1,"tid":1,"ts":1,"dur":2,"name":"a"},{"ph":"X","pid":1,"tid":1,"ts":5,"dur":1,"name":"b"}])"),
             std::string(
                 R"([{"ph":"X","pid":1,"tid":1,"ts":1,"dur":2,"name":"a"},{"ph":"X","pid":1,"tid":1,"ts":5,"dur":1,"name":"b"},)"),
             std::string("\xef\xbb\xbf[{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":2,\"name\":\"a\"},\n"
                         "{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":5,\"dur\":1,\"name\":\"b\"}\n")}) {
            auto r = importTraceText(text, "array.json");
            QVERIFY2(r.ok(), r.error().toString().c_str());
            QCOMPARE(r->spanCount(), size_t(2));
            QCOMPARE(r->tracks.size(), size_t(1));
        }
        auto empty = parseChromeTrace("[]", "e.json");
        QVERIFY2(empty.ok(), empty.error().toString().c_str());
        QCOMPARE(empty->spanCount(), size_t(0));
    }

    void chromeKeysInChangingOrders()
    {
        // The reader takes the bytes between two values as the events before had them (KeySteps): events of one
        // layout, then others that differ from it by a key's order, white space, an escape, an unknown key or a
        // duplicate, each read as written.
        std::string text = "{\"traceEvents\":[\n";
        struct Expected {
            std::string name;
            int64_t start, end, op;
            Dim3 grid;
        };
        std::vector<Expected> expected;
        const auto add = [&](const std::string& event, Expected e) {
            text += (expected.empty() ? "" : ",\n") + event;
            expected.push_back(std::move(e));
        };
        for (int i = 0; i < 200; ++i) {
            const std::string ts = std::to_string(i * 10), name = "k" + std::to_string(i % 7);
            const std::string op = std::to_string(i), grid = std::to_string(i + 1);
            const int64_t start = i * 10000;
            switch (i % 8) {
            case 0:
            case 1:
            case 2: // the common layout
                add(R"({"ph":"X","ts":)" + ts + R"(,"dur":2.5,"pid":0,"tid":1,"name":")" + name
                        + R"(","cat":"kernel","args":{"grid":[)" + grid + R"(,1,1],"op":)" + op + "}}",
                    {name, start, start + 2500, i, {uint32_t(i + 1), 1, 1}});
                break;
            case 3: // "dur" before "ts", "op" before "grid"
                add(R"({"ph":"X","dur":3,"ts":)" + ts + R"(,"pid":0,"tid":1,"name":")" + name
                        + R"(","cat":"kernel","args":{"op":)" + op + R"(,"grid":[)" + grid + "]}}",
                    {name, start, start + 3000, i, {uint32_t(i + 1), 1, 1}});
                break;
            case 4: // white space around the colons and commas
                add(R"({ "ph" : "X" , "ts" :)" + ts + R"( , "dur": 1 ,"pid":0,"tid":1,"name" :")" + name
                        + R"(","cat":"kernel","args": { "grid" :[ )" + grid + R"( ] , "op" : )" + op + " } }",
                    {name, start, start + 1000, i, {uint32_t(i + 1), 1, 1}});
                break;
            case 5: // an escaped key, and unknown keys of more than 32 bytes
                add(R"({"ph":"X","ts":)" + ts + R"(,"dur":2.5,"pid":0,"tid":1,"name":")" + name
                        + R"(","a key the reader does not know of, rather long":[1,{"x":2}],"cat":"kernel",)"
                        + R"("args":{"another unknown key, longer than the steps":"v","grid":[)" + grid
                        + R"(,1,1],"op":)" + op + "}}",
                    {name, start, start + 2500, i, {uint32_t(i + 1), 1, 1}});
                break;
            case 6: // no args
                add(R"({"ph":"X","ts":)" + ts + R"(,"dur":2.5,"pid":0,"tid":1,"name":")" + name
                        + R"(","cat":"kernel"})",
                    {name, start, start + 2500, -1, {0, 0, 0}});
                break;
            default: // a key that starts as a known one does
                add(R"({"ph":"X","ts":)" + ts + R"(,"tsx":5,"dur":2.5,"pid":0,"tid":1,"name":")" + name
                        + R"(","cat":"kernel","args":{"grid":[)" + grid + R"(,1,1],"opx":9,"op":)" + op + "}}",
                    {name, start, start + 2500, i, {uint32_t(i + 1), 1, 1}});
            }
        }
        auto r = parseChromeTrace(text + "\n]}", "orders.json");
        QVERIFY2(r.ok(), r.error().toString().c_str());
        QCOMPARE(r->spanCount(), expected.size());
        for (uint32_t i = 0; i < r->spanCount(); ++i) { // one track, sorted by start: in the order written
            const Expected& e = expected[i];
            QCOMPARE(std::string(r->spanName(i)), e.name);
            QCOMPARE(r->spans.start[i], e.start);
            QCOMPARE(r->spans.end[i], e.end);
            QCOMPARE(int64_t(r->spans.opOf(i)), e.op);
            QVERIFY2(r->spans.gridOf(i) == e.grid, std::to_string(i).c_str());
        }
        // A key twice, where the bytes before each are those of the events before: the error names the second.
        const std::string twice = text + ",\n" + R"({"ph":"X","ts":1,"dur":2.5,"dur":3,"pid":0})" + "\n]}";
        auto bad = parseChromeTrace(twice, "twice.json");
        QVERIFY(!bad.ok());
        QCOMPARE(q(bad.error().message), QStringLiteral("duplicate key \"dur\" in an event"));
        QCOMPARE(q(bad.error().path), QStringLiteral("byte %1").arg(twice.rfind("3,\"pid\"")));
    }

    void chromeNumbersOfEveryLength()
    {
        // Integers and times of every length up to past what an int64 holds, read where the text has room after
        // them and where it ends right after them (the reader scans digits differently in the two cases): the
        // values, the clamping and the errors are those of the decimal text.
        const std::string digits = "9876543210987654321098";
        for (const bool room : {false, true}) {
            const std::string tail = room ? std::string(64, ' ') : std::string();
            for (size_t n = 1; n <= 21; ++n) {
                const std::string op = digits.substr(0, n);
                const std::string text =
                    R"([{"ph":"X","ts":1,"dur":1,"pid":1,"tid":1,"name":"k","args":{"op":)" + op + "}}" + tail;
                auto r = parseChromeTrace(text, "x.json");
                const std::string where = "op of " + std::to_string(n) + " digits, room " + std::to_string(room);
                int64_t v = 0;
                const auto parsed = std::from_chars(op.data(), op.data() + op.size(), v);
                if (parsed.ec != std::errc()) { // beyond 2^63 - 1
                    QVERIFY2(!r.ok(), where.c_str());
                    QVERIFY2(r.error().message.find("args.op is out of range") != std::string::npos,
                             r.error().message.c_str());
                    continue;
                }
                QVERIFY2(r.ok(), (where + ": " + r.error().toString()).c_str());
                QCOMPARE(r->spans.opOf(0), int32_t(std::min<int64_t>(v, std::numeric_limits<int32_t>::max())));
            }
            for (size_t n = 1; n <= 18; ++n) {
                for (size_t places = 0; places <= 5; ++places) {
                    const std::string decimals = std::string("12951").substr(0, places);
                    const std::string ts = digits.substr(0, n) + (places ? "." + decimals : "");
                    const std::string text = R"([{"ph":"X","dur":1,"pid":1,"tid":1,"name":"k","ts":)" + ts + "}" + tail;
                    auto r = parseChromeTrace(text, "x.json");
                    const std::string where = "ts " + ts + ", room " + std::to_string(room);
                    const uint64_t whole = std::stoull(digits.substr(0, n));
                    if (whole > (uint64_t(std::numeric_limits<int64_t>::max()) - 1000) / 1000) {
                        QVERIFY2(!r.ok(), where.c_str());
                        QVERIFY2(r.error().message.find("\"ts\" is out of range") != std::string::npos,
                                 r.error().message.c_str());
                        continue;
                    }
                    QVERIFY2(r.ok(), (where + ": " + r.error().toString()).c_str());
                    // Nanoseconds: three decimals exactly, the fourth rounding half up, the rest dropped.
                    int64_t ns = int64_t(whole) * 1000 + (places ? std::stoll((decimals + "000").substr(0, 3)) : 0);
                    if (places >= 4 && decimals[3] >= '5')
                        ++ns;
                    QCOMPARE(r->spans.start[0], ns);
                }
            }
        }
    }

    void chromeGridsOfEveryForm()
    {
        // args.grid as writers put it ([x,y,z], read at once where the text has room) and in every other form the
        // reader takes or refuses, with and without room after it: the same dims or the same error either way.
        struct Case {
            const char* text;
            Dim3 grid;         // when read
            const char* error; // else: part of the message
        };
        const Case cases[] = {
            {"[132,1,1]", {132, 1, 1}, nullptr},
            {"[999999999,88,7]", {999999999, 88, 7}, nullptr},
            {"[4294967295,1,2]", {4294967295u, 1, 2}, nullptr},
            {"[0,0,0]", {0, 0, 0}, nullptr},
            {"[ 3, 4 ,5 ]", {3, 4, 5}, nullptr},
            {"[6,7]", {6, 7, 1}, nullptr},
            {"[8]", {8, 1, 1}, nullptr},
            {"[]", {1, 1, 1}, nullptr},
            {"[1,2,3,4]", {1, 2, 3}, nullptr},
            {"[4294967296,1,1]", {}, "args.grid is out of range"},
            {"[-1,1,1]", {}, "args.grid is out of range"},
            {"[1,1,1", {}, "not valid JSON"},
            {"[1,,1]", {}, "args.grid must be a number"},
        };
        for (const bool room : {false, true}) {
            for (const Case& c : cases) {
                // A kernel (the grid is kept for kernels) whose grid is the text's last value.
                const std::string text =
                    R"([{"ph":"X","ts":1,"dur":1,"pid":1,"tid":1,"name":"k","args":{"kind":"kernel","grid":)"
                    + std::string(c.text) + (room ? "}}" + std::string(64, ' ') : "}}");
                auto r = parseChromeTrace(text, "x.json");
                const std::string where = std::string(c.text) + ", room " + std::to_string(room);
                if (c.error) {
                    QVERIFY2(!r.ok(), where.c_str());
                    QVERIFY2(r.error().message.find(c.error) != std::string::npos,
                             (where + ": " + r.error().message).c_str());
                    continue;
                }
                QVERIFY2(r.ok(), (where + ": " + r.error().toString()).c_str());
                QVERIFY2(r->spans.gridOf(0) == c.grid, where.c_str());
            }
        }
    }

    void chromeStreamingMatchesInMemory()
    {
        // A file larger than the reader's buffer (4 MiB): events cut at buffer ends are read again whole.
        Trace t;
        const uint32_t host = t.addTrack({TrackKind::HostThread, "main"});
        const uint32_t s = t.addTrack({TrackKind::Stream, "s", 0});
        std::string longName(5 << 20, 'x'); // one name longer than the buffer
        for (int i = 0; i < 40000; ++i) {
            const uint32_t a = t.addSpan({host, SpanKind::ApiCall, "cudaLaunchKernel", i * 100, i * 100 + 50});
            const uint32_t k = t.addSpan({s,
                                          SpanKind::Kernel,
                                          i == 20000 ? std::string_view(longName) : "kernel \"k\"",
                                          i * 100 + 60,
                                          i * 100 + 90,
                                          0,
                                          i,
                                          0,
                                          0,
                                          {1, 1, 1},
                                          {32, 1, 1}});
            t.addFlow(a, k, FlowKind::Launch);
        }
        t.finalize();
        QTemporaryDir dir;
        const std::string path = dir.filePath(QStringLiteral("big.json")).toStdString();
        QVERIFY(exportTrace(t, path, ExportFormat::Chrome).ok());
        auto r = loadChromeTraceFile(path);
        QVERIFY2(r.ok(), r.error().toString().c_str());
        QCOMPARE(traceToJson(*r), traceToJson(t));
    }
};

QTEST_GUILESS_MAIN(TestChromeTrace)
#include "tst_chrome_trace.moc"
