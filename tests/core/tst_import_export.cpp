// Importers and exporters: exact round trips through our Chrome export, foreign Chrome traces, PyTorch profiler
// traces (hand-written fixtures that mimic Kineto, and real ones from tests/data/pytorch when present), Nsight Systems
// SQLite exports built from the documented schema, CSV, format detection, and bad input of every kind.
#include "chrome_trace.h"
#include "csv_trace.h"
#include "nsys_sqlite.h"
#include "pytorch_trace.h"
#include "resources.h"
#include "runner.h"
#include "scenario_json.h"
#include "simulator.h"
#include "trace.h"
#include "trace_formats.h"
#include "trace_json.h"

#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <nlohmann/json.hpp>

#ifdef STREAMSCOPE_TEST_ZLIB
#include <zlib.h>
#endif

#include <filesystem>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <tuple>

using namespace streamscope;
using Json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

QString q(const std::string& s) { return QString::fromStdString(s); }

template <typename E>
QString n(E e)
{
    const std::string_view s = toString(e);
    return QString::fromUtf8(s.data(), qsizetype(s.size()));
}

const fs::path kSource = STREAMSCOPE_SOURCE_DIR;
const fs::path kFixtures = kSource / "tests" / "data" / "pytorch" / "fixtures";

std::string readFile(const fs::path& p)
{
    auto r = readTextFile(p.string());
    return r ? *r : std::string();
}

bool writeFile(const std::string& path, const std::string& data)
{
    QFile f(q(path));
    return f.open(QIODevice::WriteOnly | QIODevice::Truncate)
        && f.write(data.data(), qint64(data.size())) == qint64(data.size());
}

// Every field set to something other than its default, names that need escaping, times beyond 2^53, negative
// times, zero-length spans, a track without spans, every flow kind.
Trace richTrace()
{
    Trace t;
    t.info.source = TraceSource::Cupti;
    t.info.backend = "cuda";
    t.info.scenarioId = "two-streams";
    t.info.scenarioTitle = "Two streams \"overlap\"";
    t.info.variant = "one-stream";
    t.info.scenarioJson = R"({"format": "streamscope-scenario", "version": 1, "id": "two-streams", "zeta": [1, 2.5]})";
    t.info.devices.push_back({0, "NVIDIA H200", {{"sm_count", "132"}, {"copy_engines", "7"}}});
    t.info.devices.push_back({1, "NVIDIA H200 #2", {}});
    t.info.host = "gpu-node-7";
    t.info.date = "2025-01-02T03:04:05Z";
    t.info.command = "streamscope-cli run two-streams --backend cuda";
    t.info.settings = {{"CUDA_DEVICE_MAX_CONNECTIONS", "8"}, {"profile", "h200"}};
    t.info.clockAlignmentErrorNs = 1234.5;

    const uint32_t host = t.addTrack({TrackKind::HostThread, "main, \"the\" thread", 0, StreamKind::Blocking, 0, 4242});
    const uint32_t s1 = t.addTrack({TrackKind::Stream, "s1", 0, StreamKind::NonBlocking, -2, 13});
    const uint32_t s2 = t.addTrack({TrackKind::Stream, "ptds@main", 1, StreamKind::PerThreadDefault, 0, -1});
    t.addTrack({TrackKind::Stream, "idle", 1, StreamKind::LegacyDefault, 0, -1});
    const uint32_t nodev = t.addTrack({TrackKind::Stream, "s?", -1, StreamKind::Blocking, 0, -1});

    const int64_t big = (int64_t(1) << 53) + 1;
    const uint32_t api = t.addSpan({host, SpanKind::ApiCall, "cudaLaunchKernel", 100, 2100, 0, 0, 0, 0, {}, {}});
    const uint32_t k = t.addSpan({s1, SpanKind::Kernel, "matmul \u00e9\u4e2d \"q\"\n\t\\ \x01", 3000, big, 0, 0, 0,
                                  0, {132, 2, 1}, {256, 1, 1}});
    const uint32_t c = t.addSpan(
        {s2, SpanKind::MemcpyP2P, "memcpy p2p", 50, 60, 0, 1, 3, std::numeric_limits<int64_t>::max(), {}, {}});
    const uint32_t sync =
        t.addSpan({host, SpanKind::Sync, "cudaStreamSynchronize", 2100, big + 10, 0, 2, 0, 0, {}, {}});
    t.addSpan({s1, SpanKind::HostFunc, "callback", -500, -400, -1, -1, -1, 0, {}, {}});
    t.addSpan({s1, SpanKind::Memset, "memset", 5000, 5000, 1, 7, 2, 4096, {}, {}});
    t.addSpan({s1, SpanKind::Memset, "memset", 5000, 5000, 1, 8, 2, 4096, {}, {}}); // same start as the last one
    t.addSpan({host, SpanKind::HostWork, "host work", 2100, 2100, 0, 3, 0, 0, {0, 5, 0}, {}});
    const uint32_t h2d = t.addSpan({nodev, SpanKind::MemcpyH2D, "h2d", 70, 80, 2, 0, 1, 1 << 20, {}, {}});
    const uint32_t d2h = t.addSpan({s2, SpanKind::MemcpyD2H, "d2h", 70, 90, 2, 1, 1, 1 << 20, {}, {}});
    t.addSpan({s2, SpanKind::MemcpyD2D, "d2d", 91, 95, 2, 2, 1, 77, {}, {}});
    t.addFlow(api, k, FlowKind::Launch);
    t.addFlow(k, sync, FlowKind::Sync);
    t.addFlow(c, k, FlowKind::Event);
    t.addFlow(c, sync, FlowKind::Implicit);
    t.addFlow(h2d, d2h, FlowKind::Event);
    t.finalize();
    return t;
}

Trace simulated(const std::string& presetId)
{
    auto preset = findPreset(presetId);
    if (!preset)
        return {};
    auto loaded = loadScenarioFile(preset->path);
    if (!loaded)
        return {};
    SimulatorBackend sim;
    auto out = runScenario(loaded->scenario, sim);
    return out.status ? std::move(out.trace) : Trace{};
}

// Spans of one track of a kind, by track name and device.
int countSpans(const Trace& t, std::string_view track, int device, std::initializer_list<SpanKind> kinds)
{
    int count = 0;
    for (uint32_t i = 0; i < t.spanCount(); ++i) {
        const Track& tr = t.tracks[t.spans.track[i]];
        if (tr.name != track || (device >= -1 && tr.kind == TrackKind::Stream && tr.device != device))
            continue;
        for (SpanKind k : kinds)
            if (t.spans.kind[i] == k)
                ++count;
    }
    return count;
}

int countFlows(const Trace& t, FlowKind kind)
{
    int count = 0;
    for (const auto& f : t.flows)
        count += f.kind == kind;
    return count;
}

// "from name -> to name" of every flow of a kind, sorted.
QStringList flowNames(const Trace& t, FlowKind kind)
{
    QStringList out;
    for (const auto& f : t.flows)
        if (f.kind == kind)
            out << q(std::string(t.spanName(f.from)) + " -> " + std::string(t.spanName(f.to)));
    out.sort();
    return out;
}

int trackIndex(const Trace& t, std::string_view name)
{
    for (size_t i = 0; i < t.tracks.size(); ++i)
        if (t.tracks[i].name == name)
            return int(i);
    return -1;
}

std::string cut(const std::string& s, size_t at) { return s.substr(0, std::min(at, s.size())); }

// The minimal documented tables of an Nsight Systems SQLite export (nsys 2024.6 schema, trimmed to what the
// importer reads plus a few columns it must ignore).
const std::string kNsysSchema = R"SQL(
CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE ThreadNames (nameId INTEGER NOT NULL, priority INTEGER, globalTid INTEGER);
CREATE TABLE TARGET_INFO_GPU (vmId INTEGER NOT NULL, id INTEGER NOT NULL, name TEXT, busLocation TEXT,
    isDiscrete INTEGER, l2CacheSize INTEGER, totalMemory INTEGER, memoryBandwidth INTEGER, clockRate INTEGER,
    smCount INTEGER, pwGpuId INTEGER, uuid TEXT, luid INTEGER, chipName TEXT, cuDevice INTEGER,
    asyncEngines INTEGER, computeMajor INTEGER, computeMinor INTEGER);
CREATE TABLE TARGET_INFO_SESSION_START_TIME (utcEpochNs INTEGER, utcTime TEXT, localTime TEXT);
CREATE TABLE TARGET_INFO_SYSTEM_ENV (globalVid INTEGER, devStateName TEXT NOT NULL, name TEXT NOT NULL,
    nameEnum INTEGER NOT NULL, value TEXT NOT NULL);
CREATE TABLE META_DATA_EXPORT (name TEXT NOT NULL, value TEXT);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
    contextId INTEGER NOT NULL, greenContextId INTEGER, streamId INTEGER NOT NULL, correlationId INTEGER,
    globalPid INTEGER, demangledName INTEGER NOT NULL, shortName INTEGER NOT NULL, mangledName INTEGER,
    launchType INTEGER, cacheConfig INTEGER, registersPerThread INTEGER NOT NULL, gridX INTEGER NOT NULL,
    gridY INTEGER NOT NULL, gridZ INTEGER NOT NULL, blockX INTEGER NOT NULL, blockY INTEGER NOT NULL,
    blockZ INTEGER NOT NULL, staticSharedMemory INTEGER NOT NULL, dynamicSharedMemory INTEGER NOT NULL,
    localMemoryPerThread INTEGER NOT NULL, localMemoryTotal INTEGER NOT NULL, gridId INTEGER NOT NULL,
    sharedMemoryExecuted INTEGER, graphNodeId INTEGER, sharedMemoryLimitConfig INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
    contextId INTEGER NOT NULL, greenContextId INTEGER, streamId INTEGER NOT NULL, correlationId INTEGER,
    globalPid INTEGER, bytes INTEGER NOT NULL, copyKind INTEGER NOT NULL, deprecatedSrcId INTEGER,
    srcKind INTEGER, dstKind INTEGER, srcDeviceId INTEGER, srcContextId INTEGER, dstDeviceId INTEGER,
    dstContextId INTEGER, migrationCause INTEGER, graphNodeId INTEGER, virtualAddress INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
    contextId INTEGER NOT NULL, greenContextId INTEGER, streamId INTEGER NOT NULL, correlationId INTEGER,
    globalPid INTEGER, value INTEGER NOT NULL, bytes INTEGER NOT NULL, graphNodeId INTEGER, memKind INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL,
    eventClass INTEGER NOT NULL, globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL,
    returnValue INTEGER NOT NULL, callchainId INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (start INTEGER NOT NULL, end INTEGER NOT NULL,
    deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, greenContextId INTEGER, streamId INTEGER NOT NULL,
    correlationId INTEGER, globalPid INTEGER, syncType INTEGER NOT NULL, eventId INTEGER NOT NULL);
CREATE TABLE CUPTI_ACTIVITY_KIND_CUDA_EVENT (deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL,
    streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER, eventId INTEGER NOT NULL);
)SQL";

// One process (pid 4321) with two threads; device 0, streams 7 and 14.
// Thread 4321: kernels k1 (stream 7) and k2 (stream 14) with a cudaStreamWaitEvent between them, an H2D copy,
// a memset, cudaStreamSynchronize. Thread 4322: a pageable D2H copy on stream 14 and cudaDeviceSynchronize.
const std::string kNsysRows = R"SQL(
INSERT INTO StringIds VALUES (1, 'void k1<float>(float*)'), (2, 'k1'), (3, 'k2_kernel'), (4, 'k2_kernel'),
    (10, 'cudaLaunchKernel_v7000'), (11, 'cudaEventRecord_v3020'), (12, 'cudaStreamWaitEvent_v3020'),
    (13, 'cudaMemcpyAsync_v3020'), (14, 'cudaMemsetAsync_v3020'), (15, 'cudaStreamSynchronize_v3020'),
    (16, 'cudaDeviceSynchronize_v3020'), (20, 'main'), (21, 'loader');
INSERT INTO ThreadNames VALUES (20, 0, 72057666532282593), (21, 0, 72057666532282594);
INSERT INTO TARGET_INFO_GPU (vmId, id, name, busLocation, l2CacheSize, totalMemory, smCount, cuDevice, asyncEngines,
    computeMajor, computeMinor) VALUES (0, 0, 'NVIDIA H200', '0000:00:06.0', 62914560, 150109880320, 132, 0, 3, 9, 0);
INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES (1764482254000000000, '2025-11-30T05:57:34Z', 'x');
INSERT INTO TARGET_INFO_SYSTEM_ENV VALUES (0, 'x', 'Hostname', 1, 'gpu-node-7');
INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_PRODUCT_VERSION', '2024.6.2.225'), ('EXPORT_SCHEMA_VERSION', '3.16.1');
-- runtime calls: (start, end, eventClass, globalTid, correlationId, nameId, returnValue, callchainId)
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES
    (1000, 1500, 0, 72057666532282593, 1, 10, 0, NULL),
    (1600, 1700, 0, 72057666532282593, 2, 11, 0, NULL),
    (1800, 1900, 0, 72057666532282593, 3, 12, 0, NULL),
    (2000, 2400, 0, 72057666532282593, 4, 10, 0, NULL),
    (2500, 2600, 0, 72057666532282593, 5, 13, 0, NULL),
    (2700, 2800, 0, 72057666532282593, 6, 14, 0, NULL),
    (2900, 9000, 0, 72057666532282593, 7, 15, 0, NULL),
    (3000, 3100, 0, 72057666532282594, 8, 13, 0, NULL),
    (3200, 9500, 0, 72057666532282594, 9, 16, 0, NULL);
-- kernels: start, end, deviceId, contextId, greenContextId, streamId, correlationId, globalPid, demangledName,
-- shortName, mangledName, launchType, cacheConfig, registersPerThread, grid, block, shared memory, local memory,
-- gridId, sharedMemoryExecuted, graphNodeId, sharedMemoryLimitConfig
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES
    (2000, 5000, 0, 1, NULL, 7, 1, 72057666532278272, 1, 2, NULL, 0, 0, 32, 264, 1, 1, 256, 1, 1, 0, 0, 0, 0, 1, 0, NULL, NULL),
    (5100, 6000, 0, 1, NULL, 14, 4, 72057666532278272, 3, 4, NULL, 0, 0, 32, 132, 2, 1, 32, 8, 1, 0, 0, 0, 0, 2, 0, NULL, NULL);
-- copies: ..., bytes, copyKind, deprecatedSrcId, srcKind, dstKind, ...
INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES
    (6100, 7000, 0, 1, NULL, 14, 5, 72057666532278272, 4194304, 1, NULL, 1, 2, 0, 1, 0, 1, NULL, NULL, NULL),
    (7100, 8800, 0, 1, NULL, 14, 8, 72057666532278272, 65536, 2, NULL, 2, 0, 0, 1, 0, 1, NULL, NULL, NULL);
INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET VALUES
    (5200, 5300, 0, 1, NULL, 7, 6, 72057666532278272, 0, 1024, NULL, 2);
-- synchronization: ..., syncType (1 event sync, 2 stream wait, 3 stream sync, 4 context sync), eventId
INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION VALUES
    (1800, 1900, 0, 1, NULL, 14, 3, 72057666532278272, 2, 55),
    (2900, 9000, 0, 1, NULL, 14, 7, 72057666532278272, 3, 0),
    (3200, 9500, 0, 1, NULL, 4294967295, 9, 72057666532278272, 4, 0);
INSERT INTO CUPTI_ACTIVITY_KIND_CUDA_EVENT VALUES (0, 1, 7, 2, 72057666532278272, 55);
)SQL";

} // namespace

class TestImportExport : public QObject {
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
        QCOMPARE(touching, 3000);
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
                QVERIFY(t.spans.grid[i] == (Dim3{4, 2, 1}));
                QVERIFY(t.spans.block[i] == (Dim3{128, 1, 1}));
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

    void chromeBareArray()
    {
        // The array format; the closing bracket may be missing, and a trailing comma is tolerated.
        for (const std::string& text :
             {std::string(R"([{"ph":"X","pid":1,"tid":1,"ts":1,"dur":2,"name":"a"},{"ph":"X","pid":1,"tid":1,"ts":5,"dur":1,"name":"b"}])"),
              std::string(R"([{"ph":"X","pid":1,"tid":1,"ts":1,"dur":2,"name":"a"},{"ph":"X","pid":1,"tid":1,"ts":5,"dur":1,"name":"b"},)"),
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

    void chromeStreamingMatchesInMemory()
    {
        // A file larger than the reader's buffer (4 MiB): events cut at buffer ends are read again whole.
        Trace t;
        const uint32_t host = t.addTrack({TrackKind::HostThread, "main"});
        const uint32_t s = t.addTrack({TrackKind::Stream, "s", 0});
        std::string longName(5 << 20, 'x'); // one name longer than the buffer
        for (int i = 0; i < 40000; ++i) {
            const uint32_t a = t.addSpan({host, SpanKind::ApiCall, "cudaLaunchKernel", i * 100, i * 100 + 50});
            const uint32_t k = t.addSpan({s, SpanKind::Kernel, i == 20000 ? std::string_view(longName) : "kernel \"k\"",
                                          i * 100 + 60, i * 100 + 90, 0, i, 0, 0, {1, 1, 1}, {32, 1, 1}});
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

    // ---- PyTorch profiler traces

    void pytorchTwoStreamsEvent()
    {
        const fs::path path = kFixtures / "two-streams-event.json";
        QCOMPARE(n(detectTraceFormat(path.string())), n(TraceFormat::PyTorch));
        auto r = importTraceFile(path.string());
        QVERIFY2(r.ok(), r.error().toString().c_str());
        const Trace& t = *r;
        QCOMPARE(q(t.info.backend), QStringLiteral("pytorch"));
        QCOMPARE(n(t.info.source), QStringLiteral("imported"));
        // Tracks: the host thread, then the two streams of device 0 by id; then the ranges' lanes (tst_ranges).
        QCOMPARE(t.tracks.size(), size_t(7));
        QCOMPARE(q(t.tracks[0].name), QStringLiteral("thread 4242 (python3)"));
        QCOMPARE(n(t.tracks[0].kind), QStringLiteral("host-thread"));
        QCOMPARE(t.tracks[0].id, int64_t(4242));
        QCOMPARE(q(t.tracks[1].name), QStringLiteral("stream 7"));
        QCOMPARE(t.tracks[1].id, int64_t(7));
        QCOMPARE(t.tracks[1].device, 0);
        QCOMPARE(q(t.tracks[2].name), QStringLiteral("stream 13"));
        // Spans per stream and kind; CPU ops, Python functions and annotations are ranges, sync records no spans.
        QCOMPARE(countSpans(t, "stream 7", 0, {SpanKind::Kernel}), 1);
        QCOMPARE(countSpans(t, "stream 7", 0, {SpanKind::Memset}), 1);
        QCOMPARE(countSpans(t, "stream 13", 0, {SpanKind::Kernel}), 1);
        QCOMPARE(countSpans(t, "stream 13", 0, {SpanKind::MemcpyH2D}), 1);
        QCOMPARE(countSpans(t, "thread 4242 (python3)", -2, {SpanKind::ApiCall}), 6);
        QCOMPARE(countSpans(t, "thread 4242 (python3)", -2, {SpanKind::Sync}), 2);
        QCOMPARE(t.spanCount(), size_t(12 + 4)); // and four ranges
        for (uint32_t i = 0; i < t.spanCount(); ++i) {
            if (t.spans.kind[i] == SpanKind::Kernel && t.tracks[t.spans.track[i]].name == "stream 7") {
                QCOMPARE(t.spans.start[i], int64_t(110000));
                QCOMPARE(t.spans.end[i], int64_t(160125));
                QVERIFY(t.spans.grid[i] == (Dim3{264, 1, 1}));
                QVERIFY(t.spans.block[i] == (Dim3{256, 1, 1}));
            }
            if (t.spans.kind[i] == SpanKind::MemcpyH2D) {
                QCOMPARE(t.spans.bytes[i], int64_t(4194304));
                QCOMPARE(q(std::string(t.spanName(i))), QStringLiteral("Memcpy HtoD (Pinned -> Device)"));
            }
        }
        // Arrows: each launch by its correlation id; the stream wait (record on stream 7 -> next work of stream
        // 13); cudaStreamSynchronize waited for the copy; cudaDeviceSynchronize found the GPU idle.
        QCOMPARE(flowNames(t, FlowKind::Launch),
                 (QStringList{QStringLiteral("cudaLaunchKernel -> transpose_kernel"),
                              QStringLiteral("cudaLaunchKernel -> void gemm_kernel<float, 128, 64>(float const*, "
                                             "float const*, float*, int)"),
                              QStringLiteral("cudaMemcpyAsync -> Memcpy HtoD (Pinned -> Device)"),
                              QStringLiteral("cudaMemsetAsync -> Memset (Device)")}));
        QCOMPARE(flowNames(t, FlowKind::Event),
                 QStringList{QStringLiteral(
                     "void gemm_kernel<float, 128, 64>(float const*, float const*, float*, int) -> transpose_kernel")});
        QCOMPARE(flowNames(t, FlowKind::Sync),
                 QStringList{QStringLiteral("Memcpy HtoD (Pinned -> Device) -> cudaStreamSynchronize")});
        QCOMPARE(t.flows.size(), size_t(6 + 8)); // and a call arrow to each of the eight runtime calls
        // Device properties under the CUDA backend's names; the file's scalars as settings.
        QCOMPARE(t.info.devices.size(), size_t(1));
        QCOMPARE(q(t.info.devices[0].name), QStringLiteral("NVIDIA H200"));
        std::map<std::string, std::string> props(t.info.devices[0].properties.begin(),
                                                 t.info.devices[0].properties.end());
        QCOMPARE(q(props["sm_count"]), QStringLiteral("132"));
        QCOMPARE(q(props["compute_capability"]), QStringLiteral("9.0"));
        QCOMPARE(q(props["memory_bytes"]), QStringLiteral("150109880320"));
        QCOMPARE(q(props["warpSize"]), QStringLiteral("32"));
        std::map<std::string, std::string> settings(t.info.settings.begin(), t.info.settings.end());
        QCOMPARE(q(settings["cuda_runtime_version"]), QStringLiteral("12080"));
        QCOMPARE(q(settings["trace_id"]), QStringLiteral("4F1A2B3C4D5E6F70"));

        // Through our Chrome export and back: nothing lost.
        auto again = parseChromeTrace(traceToChromeJson(t), "again.json");
        QVERIFY2(again.ok(), again.error().toString().c_str());
        QCOMPARE(traceToJson(*again), traceToJson(t));
    }

    void pytorchStreamWaitWithoutLinks()
    {
        // Kineto leaves "wait_on_stream" and the record's correlation at -1 where it could not link them (torch 2.11
        // with CUDA 13): the record is the last cudaEventRecord* of the waiting thread, the recorded stream the one
        // it last launched into.
        std::string text = readFile(kFixtures / "two-streams-event.json");
        const std::string linked = "\"wait_on_stream\": 7,\n      \"wait_on_cuda_event_record_corr_id\": 102,";
        const auto at = text.find(linked);
        QVERIFY(at != std::string::npos);
        text.replace(at, linked.size(), "\"wait_on_stream\": -1, \"wait_on_cuda_event_record_corr_id\": -1,");
        auto r = parsePyTorchTrace(text, "unlinked.json");
        QVERIFY2(r.ok(), r.error().toString().c_str());
        QCOMPARE(flowNames(*r, FlowKind::Event),
                 QStringList{QStringLiteral(
                     "void gemm_kernel<float, 128, 64>(float const*, float const*, float*, int) -> transpose_kernel")});
    }

    void pytorchThreadsOwnStreams()
    {
        auto r = importTraceFile((kFixtures / "threads-own-streams.json").string());
        QVERIFY2(r.ok(), r.error().toString().c_str());
        const Trace& t = *r;
        QCOMPARE(t.tracks.size(), size_t(4));
        QCOMPARE(q(t.tracks[0].name), QStringLiteral("thread 5001 (worker-0)"));
        QCOMPARE(q(t.tracks[1].name), QStringLiteral("thread 5002 (worker-1)"));
        QCOMPARE(t.tracks[2].device, 0);
        QCOMPARE(q(t.tracks[2].name), QStringLiteral("stream 7"));
        QCOMPARE(t.tracks[3].device, 1);
        QCOMPARE(q(t.tracks[3].name), QStringLiteral("stream 21"));
        QCOMPARE(countSpans(t, "stream 7", 0, {SpanKind::Kernel}), 3);
        QCOMPARE(countSpans(t, "stream 21", 1, {SpanKind::Kernel}), 2);
        QCOMPARE(countSpans(t, "stream 21", 1, {SpanKind::MemcpyD2H}), 1);
        QCOMPARE(countSpans(t, "thread 5001 (worker-0)", -2, {SpanKind::ApiCall}), 3); // one is cuLaunchKernel
        QCOMPARE(countSpans(t, "thread 5001 (worker-0)", -2, {SpanKind::Sync}), 1);
        QCOMPARE(countSpans(t, "thread 5002 (worker-1)", -2, {SpanKind::ApiCall}), 3);
        QCOMPARE(countSpans(t, "thread 5002 (worker-1)", -2, {SpanKind::Sync}), 1);
        QCOMPARE(countFlows(t, FlowKind::Launch), 6);
        QCOMPARE(flowNames(t, FlowKind::Sync),
                 (QStringList{QStringLiteral("Memcpy DtoH (Device -> Pageable) -> cudaDeviceSynchronize"),
                              QStringLiteral("add_kernel_\u00e9 -> cudaStreamSynchronize")}));
        QCOMPARE(t.info.devices.size(), size_t(2));
        // Launch arrows go from each thread to its own stream only.
        for (const auto& f : t.flows)
            if (f.kind == FlowKind::Launch)
                QCOMPARE(t.spans.track[f.from] == 0 ? 0 : 1, t.spans.track[f.to] == 2 ? 0 : 1);
    }

    void pytorchWithoutCorrelationIds()
    {
        // Older traces: no "correlation" in args; the "ac2g" flow events give the launch arrows.
        auto r = importTraceFile((kFixtures / "copy-pipeline-legacy.json").string());
        QVERIFY2(r.ok(), r.error().toString().c_str());
        const Trace& t = *r;
        QCOMPARE(t.tracks.size(), size_t(3));
        for (const char* stream : {"stream 7", "stream 13"}) {
            QCOMPARE(countSpans(t, stream, 0, {SpanKind::MemcpyH2D}), 1);
            QCOMPARE(countSpans(t, stream, 0, {SpanKind::Kernel}), 1);
            QCOMPARE(countSpans(t, stream, 0, {SpanKind::MemcpyD2H}), 1);
        }
        QCOMPARE(countSpans(t, "thread 6000 (python)", -2, {SpanKind::ApiCall}), 6);
        QCOMPARE(countSpans(t, "thread 6000 (python)", -2, {SpanKind::Sync}), 1);
        QCOMPARE(countFlows(t, FlowKind::Launch), 6);
        QCOMPARE(t.flows.size(), size_t(6));
        for (const auto& f : t.flows) {
            QCOMPARE(n(t.tracks[t.spans.track[f.from]].kind), QStringLiteral("host-thread"));
            QCOMPARE(n(t.tracks[t.spans.track[f.to]].kind), QStringLiteral("stream"));
        }
        QCOMPARE(q(t.info.devices.at(0).name), QStringLiteral("NVIDIA A100-SXM4-80GB"));
    }

    // Traces recorded on a GPU by tools/make_pytorch_traces.py, checked against the counts the script took from
    // the profiler's own events (in the provenance file beside each trace).
    void pytorchRecorded_data()
    {
        QTest::addColumn<QString>("provenance");
        const fs::path dir = kSource / "tests" / "data" / "pytorch";
        int rows = 0;
        if (fs::is_directory(dir))
            for (const auto& e : fs::directory_iterator(dir))
                if (e.path().filename().string().ends_with(".provenance.json")) {
                    QTest::newRow(e.path().filename().string().c_str()) << q(e.path().string());
                    ++rows;
                }
        if (rows == 0)
            QTest::newRow("none") << QString();
    }
    void pytorchRecorded()
    {
        QFETCH(QString, provenance);
        if (provenance.isEmpty())
            QSKIP("no PyTorch traces recorded on a GPU in tests/data/pytorch yet: run "
                  "tools/make_pytorch_traces.py tests/data/pytorch on a machine with a GPU");
        const Json prov = Json::parse(readFile(provenance.toStdString()), nullptr, false);
        QVERIFY(prov.is_object());
        const fs::path tracePath =
            fs::path(provenance.toStdString()).parent_path() / prov.at("trace").get<std::string>();
        QCOMPARE(n(detectTraceFormat(tracePath.string())), n(TraceFormat::PyTorch));
        auto r = importTraceFile(tracePath.string());
        QVERIFY2(r.ok(), r.error().toString().c_str());
        const Trace& t = *r;
        const Json expected = prov.at("expected"); // copies: GCC 13 -Wdangling-reference
        const Json streamCounts = expected.at("streams");
        // GPU work per (device, stream).
        for (const Json& s : streamCounts) {
            const int device = s.at("device");
            const std::string name = "stream " + std::to_string(s.at("stream").get<int64_t>());
            QCOMPARE(countSpans(t, name, device, {SpanKind::Kernel}), s.at("kernels").get<int>());
            QCOMPARE(countSpans(t, name, device,
                                {SpanKind::MemcpyH2D, SpanKind::MemcpyD2H, SpanKind::MemcpyD2D, SpanKind::MemcpyP2P}),
                     s.at("memcpys").get<int>());
            QCOMPARE(countSpans(t, name, device, {SpanKind::Memset}), s.at("memsets").get<int>());
        }
        int streams = 0, hostCalls = 0;
        for (const auto& tr : t.tracks)
            streams += tr.kind == TrackKind::Stream;
        for (uint32_t i = 0; i < t.spanCount(); ++i)
            hostCalls += t.spans.kind[i] == SpanKind::ApiCall || t.spans.kind[i] == SpanKind::Sync;
        QCOMPARE(streams, int(expected.at("streams").size()));
        QCOMPARE(hostCalls, expected.at("runtime_calls").get<int>());
        QCOMPARE(countFlows(t, FlowKind::Launch), expected.at("launch_links").get<int>());
        if (expected.value("stream_wait_events", 0) > 0)
            QVERIFY2(countFlows(t, FlowKind::Event) >= 1, "stream wait events recorded, but no event arrow");
        QCOMPARE(int(t.info.devices.size()) >= 1, true);
        // And our Chrome export of it comes back whole.
        auto again = parseChromeTrace(traceToChromeJson(t), "again.json");
        QVERIFY2(again.ok(), again.error().toString().c_str());
        QCOMPARE(traceToJson(*again), traceToJson(t));
    }

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
                 }().c_str());
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
                QVERIFY(t.spans.grid[i] == (Dim3{264, 1, 1}));
                QVERIFY(t.spans.block[i] == (Dim3{256, 1, 1}));
            }
            if (t.spans.kind[i] == SpanKind::MemcpyH2D) {
                QCOMPARE(q(name), QStringLiteral("Memcpy HtoD (Pinned -> Device)"));
                QCOMPARE(t.spans.bytes[i], int64_t(4194304));
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
        QTest::newRow("unknown name")
            << QStringLiteral("UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET nameId = 99 WHERE correlationId = 3;")
            << QStringLiteral("CUPTI_ACTIVITY_KIND_RUNTIME row 3") << QStringLiteral("name id 99 is not in StringIds");
        QTest::newRow("text time")
            << QStringLiteral("CREATE TABLE m AS SELECT * FROM CUPTI_ACTIVITY_KIND_MEMSET; DROP TABLE "
                              "CUPTI_ACTIVITY_KIND_MEMSET; CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start, end, "
                              "deviceId, streamId, bytes); INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET VALUES "
                              "(1, 2, 0, 7, 8), ('soon', 9, 0, 7, 8);")
            << QStringLiteral("CUPTI_ACTIVITY_KIND_MEMSET row 2") << QStringLiteral("start is not an integer");
        QTest::newRow("no cuda tables")
            << QStringLiteral("DROP TABLE CUPTI_ACTIVITY_KIND_KERNEL; DROP TABLE CUPTI_ACTIVITY_KIND_MEMCPY; DROP "
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
        QTest::newRow("rows without end") << endless + QStringLiteral("SELECT id, 'x' AS value FROM c;")
                                          << QStringLiteral("StringIds")
                                          << QStringLiteral("more than 100000 rows read from the database; the "
                                                            "limit is 100000");
        QTest::newRow("never returns") << endless + QStringLiteral("SELECT id, 'x' AS value FROM c WHERE id < 0;")
                                       << QStringLiteral("StringIds")
                                       << QStringLiteral("more than 1 s inside SQLite");
        QTest::newRow("device 2^40")
            << QStringLiteral("UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET deviceId = 1099511627776 WHERE start = 5100;")
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
        QCOMPARE(q(csv), QStringLiteral("device,stream,thread,kind,name,start_ns,end_ns,bytes\r\n"
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
                                 t->spans.end[i], t->spans.bytes[i]});
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
        QTest::newRow("start") << h + QStringLiteral(",,t,api-call,k,1.5,2,0\r\n")
                               << QStringLiteral("row 2, start_ns") << QStringLiteral("must be an integer");
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
        QTest::newRow("native, format late") << QByteArray(R"({"version": 1, "info": {"x": [1]}, "format": "s")")
                                             << QStringLiteral("streamscope");
        QTest::newRow("scenario") << QByteArray(R"({"format": "streamscope-scenario"})")
                                  << QStringLiteral("streamscope");
        QTest::newRow("chrome object") << QByteArray(R"( {"traceEvents": [{"ph": "X"}]})") << QStringLiteral("chrome");
        QTest::newRow("chrome, key inside") << QByteArray(R"({"otherData": {"format": "x"}, "traceEvents": [)")
                                            << QStringLiteral("chrome");
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
        const std::string sorted = "{\"aaa\": \"" + padding + "\", \"displayTimeUnit\": \"ns\", \"traceEvents\": ["
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
        QTest::newRow("gzip") << QByteArray("\x1f\x8b\x08\0\0\0", 6) << QString() << QStringLiteral("a gzip-compressed file");
        QTest::newRow("text") << QByteArray("hello") << QString() << QStringLiteral("not a trace StreamScope can read");
        QTest::newRow("negative dur") << QByteArray(R"({"traceEvents": [{"ph": "X", "ts": 1, "dur": -2}]})")
                                      << QStringLiteral("byte 17") << QStringLiteral("negative \"dur\"");
        QTest::newRow("ts type") << QByteArray(R"({"traceEvents": [{"ph": "X", "ts": true, "dur": 2}]})")
                                 << QStringLiteral("byte 35") << QStringLiteral("\"ts\" must be a number");
        QTest::newRow("event type") << QByteArray(R"({"traceEvents": [1, 2]})") << QStringLiteral("byte 17")
                                    << QStringLiteral("an event must be a JSON object");
        QTest::newRow("duplicate ts") << QByteArray(R"({"traceEvents": [{"ph": "X", "ts": 1, "dur": 2, "ts": 5}]})")
                                      << QStringLiteral("byte 54") << QStringLiteral("duplicate key \"ts\" in an event");
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
        QTest::newRow("truncated object") << QByteArray("{\"traceEvents\": [{\"ph\": \"X\", \"ts\": 1, \"dur\": 2}, {\"ph")
                                          << QStringLiteral("byte 53") << QStringLiteral("unexpected end of file");
        QTest::newRow("truncated array")
            << QByteArray("[{\"ph\": \"X\", \"ts\": 1, \"dur\": 2}, {\"ph\": \"X\", \"ts") << QStringLiteral("byte 48")
            << QStringLiteral("unexpected end of file");
        QTest::newRow("control char") << QByteArray("{\"traceEvents\": [{\"name\": \"a\x01\"}]}")
                                       << QStringLiteral("byte 28") << QStringLiteral("control character");
        QTest::newRow("bad escape") << QByteArray(R"({"traceEvents": [{"name": "a\q"}]})") << QStringLiteral("byte 29")
                                    << QStringLiteral("unknown escape");
        QTest::newRow("deep") << QByteArray("{\"traceEvents\": [{\"args\": " + QByteArray(300, '[')
                                            + QByteArray(300, ']') + "}]}")
                              << QStringLiteral("byte 283") << QStringLiteral("nested deeper than 256");
        QTest::newRow("grid range")
            << QByteArray(R"({"traceEvents": [{"ph": "X", "ts": 1, "dur": 1, "args": {"grid": [1, -1, 1]}}]})")
            << QStringLiteral("byte 69") << QStringLiteral("args.grid is out of range");
        QTest::newRow("own export version")
            << QByteArray(R"({"traceEvents": [], "otherData": {"streamscope": {"format": "streamscope-chrome-export", "version": 9}}})")
            << QStringLiteral("/otherData/streamscope/version") << QStringLiteral("unsupported version 9");
        QTest::newRow("own export header")
            << QByteArray(R"({"traceEvents": [], "otherData": {"streamscope": {"format": "streamscope-chrome-export", "version": 1, "trace": {"format": "streamscope-trace", "version": 1, "info": {}, "strings": [], "span_kinds": [], "flow_kinds": [], "tracks": [{"kind": "tram"}], "spans": {"track": [], "kind": [], "name": [], "start": [], "end": []}, "flows": {"from": [], "to": [], "kind": []}}}}})")
            << QStringLiteral("/otherData/streamscope/trace/tracks/0/kind") << QStringLiteral("unknown track kind");
        QTest::newRow("pytorch devices")
            << QByteArray(R"({"schemaVersion": 1, "deviceProperties": {"id": 0}, "traceEvents": []})")
            << QStringLiteral("/deviceProperties") << QStringLiteral("must be an array");
        QTest::newRow("native") << QByteArray(R"({"format": "streamscope-trace", "version": 2})")
                                << QStringLiteral("/version") << QStringLiteral("unsupported version 2");
        // Ids and devices that fit no integer are errors, never folded into another value (nor UB: 4e42).
        QTest::newRow("device 2^31")
            << QByteArray("{\"traceEvents\": [{\"ph\": \"X\", \"ts\": 1, \"dur\": 1, \"args\": {\"device\": 2147483648}}]}")
            << QStringLiteral("byte 66") << QStringLiteral("args.device: device 2147483648 is out of range");
        QTest::newRow("device 2^63-1")
            << QByteArray("{\"traceEvents\": [{\"ph\": \"X\", \"ts\": 1, \"dur\": 1, \"args\": {\"device\": "
                          "9223372036854775807}}]}")
            << QStringLiteral("byte 66") << QStringLiteral("device 9223372036854775807 is out of range");
        QTest::newRow("pid 1e300") << QByteArray("{\"traceEvents\": [{\"ph\": \"X\", \"ts\": 1, \"dur\": 1, \"pid\": 1e300}]}")
                                   << QStringLiteral("byte 55") << QStringLiteral("a numeric id (from -2^63 to 2^63-1) is out of range");
        QTest::newRow("tid 4e42") << QByteArray("{\"traceEvents\": [{\"ph\": \"X\", \"ts\": 1, \"dur\": 1, \"tid\": 4e42}]}")
                                  << QStringLiteral("byte 55") << QStringLiteral("is out of range");
        QTest::newRow("flow id 2^64")
            << QByteArray("{\"traceEvents\": [{\"ph\": \"s\", \"ts\": 1, \"id\": 18446744073709551616}]}")
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
            devices += std::string(d ? "," : "") + "{\"ph\": \"X\", \"cat\": \"kernel\", \"ts\": 1, \"dur\": 1, \"pid\": " +
                       std::to_string(d) + ", \"tid\": 7, \"args\": {\"device\": " + std::to_string(d) + "}}";
        devices += "]}";
        auto r = parseChromeTrace(devices, "d.json");
        QVERIFY(!r.ok());
        QVERIFY2(q(r.error().message).contains(QStringLiteral("too many devices: more than 1024; the limit is 1024")),
                 r.error().toString().c_str());
        std::string pids = "[";
        for (int p = 0; p <= 200000; ++p)
            pids += std::string(p ? "," : "") + "{\"ph\": \"X\", \"ts\": 1, \"dur\": 1, \"pid\": " + std::to_string(p) + "}";
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
        QVERIFY2(q(r.error().message).contains(QStringLiteral("the limit for a compressed trace is %1")
                                                   .arg(qulonglong(kMaxUnpackedTraceBytes))),
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
            chrome += std::string(p ? "," : "") + "{\"ph\": \"X\", \"name\": \"f\", \"ts\": " + std::to_string(p) +
                      ", \"dur\": 1, \"pid\": " + std::to_string(p) + ", \"tid\": 1}";
        chrome += "]";
        const std::string chromePath = tmp.filePath(QStringLiteral("pids.json")).toStdString();
        QVERIFY(writeFile(chromePath, chrome));
        auto pids = importTraceFile(chromePath);
        QVERIFY2(pids.ok(), pids.error().toString().c_str());
        QCOMPARE(pids->tracks.size(), size_t(100000));
        QProcess analyze;
        analyze.start(QStringLiteral(STREAMSCOPE_CLI), {QStringLiteral("analyze"), q(chromePath), QStringLiteral("--json")});
        QVERIFY(analyze.waitForFinished(120000));
        QCOMPARE(analyze.exitCode(), 0);
        for (const bool streams : {true, false}) {
            std::string csv = std::string(kCsvHeader) + "\r\n";
            // The kernels all run at once (every pair of streams overlaps); the calls one after another.
            for (int i = 0; i < 100000; ++i)
                csv += (streams ? "0,s" + std::to_string(i) + ",,kernel,k," + std::to_string(i) + "," +
                                      std::to_string(i + 1000000)
                                : ",,t" + std::to_string(i) + ",api-call,cudaLaunchKernel," + std::to_string(10 * i) +
                                      "," + std::to_string(10 * i + 5))
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
