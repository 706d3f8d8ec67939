// What the import and export tests share (tst_import_export, tst_chrome_trace, tst_pytorch_trace,
// tst_nsys_sqlite): file helpers, a trace with every kind of span and flow, simulated lessons, counts over a trace,
// and the Nsight Systems SQLite schema and rows built from the documented tables.
#pragma once

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

inline QString q(const std::string& s)
{
    return QString::fromStdString(s);
}

template <typename E>
inline QString n(E e)
{
    const std::string_view s = toString(e);
    return QString::fromUtf8(s.data(), qsizetype(s.size()));
}

const fs::path kSource = STREAMSCOPE_SOURCE_DIR;
const fs::path kFixtures = kSource / "tests" / "data" / "pytorch" / "fixtures";

inline std::string readFile(const fs::path& p)
{
    auto r = readTextFile(p.string());
    return r ? *r : std::string();
}

inline bool writeFile(const std::string& path, const std::string& data)
{
    QFile f(q(path));
    return f.open(QIODevice::WriteOnly | QIODevice::Truncate)
        && f.write(data.data(), qint64(data.size())) == qint64(data.size());
}

// Every field set to something other than its default, names that need escaping, times beyond 2^53, negative
// times, zero-length spans, a track without spans, every flow kind.
inline Trace richTrace()
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
    const uint32_t k = t.addSpan({s1,
                                  SpanKind::Kernel,
                                  "matmul \u00e9\u4e2d \"q\"\n\t\\ \x01",
                                  3000,
                                  big,
                                  0,
                                  0,
                                  0,
                                  0,
                                  {132, 2, 1},
                                  {256, 1, 1}});
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

inline Trace simulated(const std::string& presetId)
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
inline int countSpans(const Trace& t, std::string_view track, int device, std::initializer_list<SpanKind> kinds)
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

inline int countFlows(const Trace& t, FlowKind kind)
{
    int count = 0;
    for (const auto& f : t.flows)
        count += f.kind == kind;
    return count;
}

// "from name -> to name" of every flow of a kind, sorted.
inline QStringList flowNames(const Trace& t, FlowKind kind)
{
    QStringList out;
    for (const auto& f : t.flows)
        if (f.kind == kind)
            out << q(std::string(t.spanName(f.from)) + " -> " + std::string(t.spanName(f.to)));
    out.sort();
    return out;
}

inline int trackIndex(const Trace& t, std::string_view name)
{
    for (size_t i = 0; i < t.tracks.size(); ++i)
        if (t.tracks[i].name == name)
            return int(i);
    return -1;
}

inline std::string cut(const std::string& s, size_t at)
{
    return s.substr(0, std::min(at, s.size()));
}

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
