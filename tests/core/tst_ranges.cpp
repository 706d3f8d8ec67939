// Ranges (ranges.h): PyTorch's CPU ops, record_function / user annotations, Python functions and GPU annotations as
// spans on lanes of their own, one per nesting depth; the "call" arrows from an op to the runtime calls made in it;
// which op launched a GPU operation; that no metric counts them; and that they survive every format we write.
#include "analysis.h"
#include "chrome_trace.h"
#include "csv_trace.h"
#include "metrics.h"
#include "pytorch_trace.h"
#include "ranges.h"
#include "trace.h"
#include "trace_formats.h"
#include "trace_json.h"

#include <QTest>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <tuple>

using namespace streamscope;
using Json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

QString q(std::string_view s)
{
    return QString::fromUtf8(s.data(), qsizetype(s.size()));
}

const fs::path kData = fs::path(STREAMSCOPE_SOURCE_DIR) / "tests" / "data" / "pytorch";

Trace imported(const fs::path& p)
{
    auto r = importTraceFile(p.string());
    if (!r)
        qFatal("%s", r.error().toString().c_str());
    return std::move(*r);
}

// No two spans of one track overlap (half-open), on every track.
bool tracksAreDisjoint(const Trace& t, QString& why)
{
    for (uint32_t tr = 0; tr < t.tracks.size(); ++tr) {
        if (t.tracks[tr].kind != TrackKind::Ranges)
            continue; // host threads and streams are as the source recorded them
        for (uint32_t i = t.trackBegin(tr) + 1; i < t.trackEnd(tr); ++i)
            if (t.spans.start[i] < t.spans.end[i - 1]) {
                why = q(t.spanName(i - 1)) + QStringLiteral(" and ") + q(t.spanName(i)) + QStringLiteral(" overlap");
                return false;
            }
    }
    return true;
}

// A range's parent track and depth.
std::pair<int, int> placeOf(const Trace& t, uint32_t span)
{
    const Track& tr = t.tracks[t.spans.track[span]];
    return {tr.parent, tr.depth};
}

uint32_t findSpan(const Trace& t, std::string_view name, SpanKind kind)
{
    for (uint32_t i = 0; i < t.spanCount(); ++i)
        if (t.spans.kind[i] == kind && t.spanName(i) == name)
            return i;
    return kNoOrigin;
}

// The trace without its ranges and call arrows: what the import gave before ranges existed.
Trace withoutRanges(const Trace& t)
{
    Trace out;
    out.info = t.info;
    for (const Track& tr : t.tracks)
        if (tr.kind != TrackKind::Ranges)
            out.addTrack(tr);
    std::vector<uint32_t> index(t.spanCount(), kNoOrigin);
    for (uint32_t i = 0; i < t.spanCount(); ++i) {
        if (t.spans.kind[i] == SpanKind::Range)
            continue;
        SpanInit s;
        s.track = t.spans.track[i];
        s.kind = t.spans.kind[i];
        s.name = t.spanName(i);
        s.start = t.spans.start[i];
        s.end = t.spans.end[i];
        s.bytes = t.spans.bytesOf(i);
        s.grid = t.spans.gridOf(i);
        s.block = t.spans.blockOf(i);
        index[i] = out.addSpan(s);
    }
    for (const Flow& f : t.flows)
        if (index[f.from] != kNoOrigin && index[f.to] != kNoOrigin)
            out.addFlow(index[f.from], index[f.to], f.kind);
    out.finalize();
    return out;
}

// The ranges of a trace as (parent track name, depth, name, start, end), for comparing traces whose span order
// differs.
std::multiset<std::tuple<std::string, int, std::string, int64_t, int64_t>> rangeSet(const Trace& t)
{
    std::multiset<std::tuple<std::string, int, std::string, int64_t, int64_t>> out;
    for (uint32_t i = 0; i < t.spanCount(); ++i)
        if (t.spans.kind[i] == SpanKind::Range) {
            const auto [parent, depth] = placeOf(t, i);
            out.emplace(t.tracks[size_t(parent)].name, depth, std::string(t.spanName(i)), t.spans.start[i],
                        t.spans.end[i]);
        }
    return out;
}

} // namespace

class TestRanges : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void placementByDepth()
    {
        Trace t;
        const uint32_t host = t.addTrack({TrackKind::HostThread, "main", -1, StreamKind::Blocking, 0, 7});
        const uint32_t stream = t.addTrack({TrackKind::Stream, "s1", 0, StreamKind::Blocking, 0, 13});
        const auto range = [&](uint32_t track, const char* name, int64_t b, int64_t e) {
            t.addSpan({track, SpanKind::Range, name, b, e});
        };
        range(host, "A", 0, 100);
        range(host, "B", 10, 50);
        range(host, "C", 20, 30);
        range(host, "E", 40, 70); // starts inside B, ends after it: one deeper, not overlapping B's lane
        range(host, "D", 60, 90);
        range(host, "F", 100, 120); // back-to-back with A: the same lane
        range(stream, "step", 5, 95);
        t.addSpan({host, SpanKind::ApiCall, "cudaLaunchKernel", 22, 25});
        t.addSpan({stream, SpanKind::Kernel, "k", 30, 80});
        t.finalize();
        placeRangesOnTracks(t);
        QVERIFY(t.finalized());
        // The host thread and the stream keep their indices; the lanes come after them, by parent and depth.
        QCOMPARE(t.tracks.size(), size_t(2 + 3 + 1));
        QVERIFY(t.tracks[0].kind == TrackKind::HostThread);
        QVERIFY(t.tracks[1].kind == TrackKind::Stream);
        for (size_t d = 0; d < 3; ++d) {
            QVERIFY(t.tracks[2 + d].kind == TrackKind::Ranges);
            QCOMPARE(t.tracks[2 + d].parent, 0);
            QCOMPARE(t.tracks[2 + d].depth, int(d));
            QCOMPARE(q(t.tracks[2 + d].name), QStringLiteral("main"));
        }
        QCOMPARE(t.tracks[5].parent, 1);
        QCOMPARE(t.tracks[5].device, 0);
        const std::map<std::string, std::pair<int, int>> expected{
            {"A", {0, 0}}, {"B", {0, 1}}, {"C", {0, 2}}, {"E", {0, 2}}, {"D", {0, 1}}, {"F", {0, 0}}, {"step", {1, 0}}};
        for (const auto& [name, place] : expected) {
            const uint32_t i = findSpan(t, name, SpanKind::Range);
            QVERIFY2(i != kNoOrigin, name.c_str());
            QCOMPARE(placeOf(t, i), place);
        }
        QString why;
        QVERIFY2(tracksAreDisjoint(t, why), qPrintable(why));
        // The work stays where it was.
        QCOMPARE(t.spans.track[findSpan(t, "cudaLaunchKernel", SpanKind::ApiCall)], host);
        QCOMPARE(t.spans.track[findSpan(t, "k", SpanKind::Kernel)], stream);
        // Placing again changes nothing.
        const std::string once = traceToJson(t);
        placeRangesOnTracks(t);
        QCOMPARE(traceToJson(t), once);
    }

    void pythonFunctionNames_data()
    {
        QTest::addColumn<QString>("name");
        QTest::addColumn<bool>("python");
        QTest::newRow("frame") << QStringLiteral("model.py(12): forward") << true;
        QTest::newRow("path") << QStringLiteral("torch/nn/modules/module.py(1736): _call_impl") << true;
        QTest::newRow("module") << QStringLiteral("nn.Module: Linear_0") << true;
        QTest::newRow("builtin") << QStringLiteral("<built-in method matmul of type object at 0x7f>") << true;
        QTest::newRow("op") << QStringLiteral("aten::mm") << false;
        QTest::newRow("annotation") << QStringLiteral("ProfilerStep#0") << false;
        QTest::newRow("no line") << QStringLiteral("model.py(): forward") << false;
    }
    void pythonFunctionNames()
    {
        QFETCH(QString, name);
        QFETCH(bool, python);
        QCOMPARE(isPythonFunctionName(name.toStdString()), python);
    }

    // The hand-written Kineto fixture: a user annotation around a Python function around aten::mm, whose
    // cudaLaunchKernel launched the GEMM; a gpu_user_annotation on stream 7.
    void fixture()
    {
        const Trace t = imported(kData / "fixtures" / "two-streams-event.json");
        int ranges = 0;
        for (uint32_t i = 0; i < t.spanCount(); ++i)
            ranges += t.spans.kind[i] == SpanKind::Range;
        QCOMPARE(ranges, 4);
        const int host = 0, stream7 = 1;
        QCOMPARE(q(t.tracks[size_t(host)].name), QStringLiteral("thread 4242 (python3)"));
        QCOMPARE(q(t.tracks[size_t(stream7)].name), QStringLiteral("stream 7"));
        QCOMPARE(placeOf(t, findSpan(t, "ProfilerStep#0", SpanKind::Range)).second, 0);
        QCOMPARE(placeOf(t, findSpan(t, "torch/nn/modules/module.py(1736): _call_impl", SpanKind::Range)),
                 std::make_pair(host, 1));
        QCOMPARE(placeOf(t, findSpan(t, "aten::mm", SpanKind::Range)), std::make_pair(host, 2));
        // The GPU annotation goes on the stream it covers, not on the host thread.
        int onStream = 0;
        for (uint32_t i = 0; i < t.spanCount(); ++i)
            if (t.spans.kind[i] == SpanKind::Range && placeOf(t, i).first == stream7) {
                ++onStream;
                QCOMPARE(q(t.spanName(i)), QStringLiteral("ProfilerStep#0"));
            }
        QCOMPARE(onStream, 1);

        // kernel <-launch- cudaLaunchKernel <-call- aten::mm (its External id), inside the Python function.
        const LaunchOrigins origins(t);
        const uint32_t gemm =
            findSpan(t, "void gemm_kernel<float, 128, 64>(float const*, float const*, float*, int)", SpanKind::Kernel);
        QVERIFY(gemm != kNoOrigin);
        const LaunchOrigin o = origins.of(gemm);
        QVERIFY(o.call != kNoOrigin);
        QCOMPARE(q(t.spanName(o.call)), QStringLiteral("cudaLaunchKernel"));
        QCOMPARE(q(launchOriginText(t, o)),
                 QStringLiteral("aten::mm (python: torch/nn/modules/module.py(1736): _call_impl)"));
        // A call's own origin is the op it was made in; a range's enclosing ranges go outermost first.
        QCOMPARE(origins.of(o.call).op, o.op);
        const auto around = origins.enclosingRanges(o.op);
        QCOMPARE(around.size(), size_t(2));
        QCOMPARE(q(t.spanName(around[0])), QStringLiteral("ProfilerStep#0"));
        // GPU time by launching op: the GEMM's 50.125 us under aten::mm.
        const auto byOp = gpuTimeByLaunchingOp(t);
        const auto mm = std::find_if(byOp.begin(), byOp.end(), [](const OpGpuTime& g) { return g.op == "aten::mm"; });
        QVERIFY(mm != byOp.end());
        QCOMPARE(mm->spans, 1u);
        QCOMPARE(mm->gpuNs, int64_t(50125));
        uint32_t gpuSpans = 0;
        for (const OpGpuTime& g : byOp)
            gpuSpans += g.spans;
        QCOMPARE(gpuSpans, 4u); // every GPU span counted once
    }

    // Ranges are no work: metrics and the critical path are what they are without them.
    void rangesCountInNoMetric()
    {
        for (const char* name : {"two-streams-event.json", "copy-pipeline.json"}) {
            const Trace t = imported(kData / name);
            const Trace bare = withoutRanges(t);
            QVERIFY(bare.spanCount() < t.spanCount());
            const TraceMetrics a = computeMetrics(t), b = computeMetrics(bare);
            QCOMPARE(a.gpuSpanCount, b.gpuSpanCount);
            QCOMPARE(a.apiCallCount, b.apiCallCount);
            QCOMPARE(a.makespanNs, b.makespanNs);
            QCOMPARE(a.gpuWorkNs, b.gpuWorkNs);
            QCOMPARE(a.hostMakespanNs, b.hostMakespanNs);
            QCOMPARE(a.maxConcurrency, b.maxConcurrency);
            const CriticalPath pa = criticalPath(t), pb = criticalPath(bare);
            QCOMPARE(pa.segments.size(), pb.segments.size());
            for (size_t k = 0; k < pa.segments.size(); ++k) {
                QVERIFY(pa.segments[k].kind != SpanKind::Range);
                QCOMPARE(q(pa.segments[k].name), q(pb.segments[k].name));
            }
            QCOMPARE(pa.lengthNs, pb.lengthNs);
        }
    }

    // The traces recorded on an H200: every range event of the file is a range, nested by depth, lanes disjoint, and
    // every kernel launched from a thread with CPU ops reaches the op Kineto says (its "External id").
    void recorded_data()
    {
        QTest::addColumn<QString>("file");
        for (const char* f : {"two-streams-event.json", "copy-pipeline.json", "threads-own-streams.json"})
            QTest::newRow(f) << q(f);
    }
    void recorded()
    {
        QFETCH(QString, file);
        const fs::path path = kData / file.toStdString();
        const Trace t = imported(path);
        const Json doc = Json::parse(std::ifstream(path), nullptr, false);
        QVERIFY(doc.is_object());
        // Per category in the file: how many, and their names.
        std::map<std::string, int> perCategory;
        std::multiset<std::string> fileNames, importedNames;
        std::map<int64_t, std::string> opOfExternalId;
        std::map<int64_t, std::vector<std::string>> expectedOps; // stream -> the op of each kernel, by start
        std::vector<std::tuple<int64_t, double, std::string>> kernels;
        for (const Json& e : doc.at("traceEvents")) {
            if (e.value("ph", "") != "X")
                continue;
            const std::string cat = e.value("cat", "");
            if (chrome::isPyTorchRangeCategory(cat)) {
                ++perCategory[cat];
                fileNames.insert(e.at("name").get<std::string>());
                if (cat == "cpu_op" && e.contains("args") && e["args"].contains("External id"))
                    opOfExternalId[e["args"]["External id"].get<int64_t>()] = e.at("name").get<std::string>();
            }
            if (cat == "kernel")
                kernels.emplace_back(e.at("tid").get<int64_t>(), e.at("ts").get<double>(),
                                     e["args"].contains("External id")
                                         ? std::to_string(e["args"]["External id"].get<int64_t>())
                                         : std::string());
        }
        std::sort(kernels.begin(), kernels.end());
        for (const auto& [tid, ts, ext] : kernels)
            expectedOps[tid].push_back(ext.empty() ? std::string() : opOfExternalId[std::stoll(ext)]);
        for (uint32_t i = 0; i < t.spanCount(); ++i)
            if (t.spans.kind[i] == SpanKind::Range)
                importedNames.insert(std::string(t.spanName(i)));
        QCOMPARE(importedNames.size(), fileNames.size());
        QVERIFY(importedNames == fileNames);
        QString summary;
        for (const auto& [cat, n] : perCategory)
            summary += q(cat) + QStringLiteral(" ") + QString::number(n) + QStringLiteral("; ");

        // Lanes: disjoint; each range below depth 0 lies in a range one depth up, a depth-0 range in none.
        QString why;
        QVERIFY2(tracksAreDisjoint(t, why), qPrintable(why));
        const LaunchOrigins origins(t);
        int maxDepth = -1;
        for (uint32_t i = 0; i < t.spanCount(); ++i) {
            if (t.spans.kind[i] != SpanKind::Range)
                continue;
            QVERIFY(t.tracks[t.spans.track[i]].kind == TrackKind::Ranges);
            const int depth = placeOf(t, i).second;
            maxDepth = std::max(maxDepth, depth);
            const auto around = origins.enclosingRanges(i);
            QCOMPARE(int(around.size()), depth);
            for (uint32_t r : around)
                QVERIFY(t.spans.start[r] <= t.spans.start[i] && t.spans.end[i] <= t.spans.end[r]);
        }

        // Kernels: those whose launching call was made on a thread with ranges reach their op, Kineto's.
        int launched = 0, resolved = 0, matching = 0;
        std::map<int64_t, std::vector<std::string>> resolvedOps;
        for (uint32_t i = 0; i < t.spanCount(); ++i) {
            if (t.spans.kind[i] != SpanKind::Kernel)
                continue;
            const LaunchOrigin o = origins.of(i);
            const std::string op = o.op == kNoOrigin ? std::string() : std::string(t.spanName(o.op));
            resolvedOps[t.tracks[t.spans.track[i]].id].push_back(op);
            if (o.call == kNoOrigin)
                continue;
            ++launched;
            resolved += o.op != kNoOrigin;
        }
        for (auto& [stream, ops] : expectedOps) {
            QCOMPARE(resolvedOps[stream].size(), ops.size());
            for (size_t k = 0; k < ops.size(); ++k) {
                QCOMPARE(q(resolvedOps[stream][k]), q(ops[k]));
                matching += !ops[k].empty();
            }
        }
        const bool threadsHaveOps = perCategory["cpu_op"] > 0;
        QCOMPARE(resolved, threadsHaveOps ? launched : 0);
        qInfo("%s: ranges %s max depth %d; kernels with a launch arrow %d, resolved to an op %d (as Kineto's "
              "External id: %d)",
              qPrintable(file), qPrintable(summary), maxDepth, launched, resolved, matching);

        // Filtering by "aten" finds the aten ops.
        int aten = 0;
        for (const std::string& n : importedNames)
            aten += n.starts_with("aten::");
        QCOMPARE(aten, perCategory["cpu_op"]);
    }

    // Native JSON, our Chrome export and CSV all bring the ranges back.
    void roundTrips_data()
    {
        QTest::addColumn<QString>("file");
        QTest::newRow("fixture") << QStringLiteral("fixtures/two-streams-event.json");
        QTest::newRow("recorded") << QStringLiteral("two-streams-event.json");
        QTest::newRow("recorded gzip") << QStringLiteral("copy-pipeline-gzip.json.gz");
    }
    void roundTrips()
    {
        QFETCH(QString, file);
        const Trace t = imported(kData / file.toStdString());
        const std::string native = traceToJson(t);
        QVERIFY(native.find("\"kind\": \"ranges\"") != std::string::npos);
        auto back = parseTrace(native, "native.json");
        QVERIFY2(back.ok(), back.ok() ? "" : back.error().toString().c_str());
        QCOMPARE(traceToJson(*back), native);
        auto chrome = parseChromeTrace(traceToChromeJson(t), "chrome.json");
        QVERIFY2(chrome.ok(), chrome.ok() ? "" : chrome.error().toString().c_str());
        QCOMPARE(traceToJson(*chrome), native);
        // CSV has no tracks of its own: a range is a row of the thread or stream it annotates, and comes back on
        // the same lane.
        const std::string csv = traceToCsv(t);
        QVERIFY(csv.find(",range,") != std::string::npos);
        auto fromCsv = parseCsvTrace(csv, "spans.csv");
        QVERIFY2(fromCsv.ok(), fromCsv.ok() ? "" : fromCsv.error().toString().c_str());
        QVERIFY(rangeSet(*fromCsv) == rangeSet(t));
        const auto rangeRows = [](const std::string& text) {
            QStringList rows;
            for (const QString& row : q(text).split(QStringLiteral("\r\n")))
                if (row.contains(QStringLiteral(",range,")))
                    rows << row;
            rows.sort();
            return rows;
        };
        QCOMPARE(rangeRows(traceToCsv(*fromCsv)), rangeRows(csv));
    }

    void nativeFormatChecksParents()
    {
        const std::string head = "{\"format\": \"streamscope-trace\", \"version\": 1, \"info\": {}, \"strings\": [], "
                                 "\"span_kinds\": [], \"flow_kinds\": [], \"tracks\": [";
        const std::string tail =
            "], \"spans\": {\"track\": [], \"kind\": [], \"name\": [], \"start\": [], \"end\": []}, "
            "\"flows\": {\"from\": [], \"to\": [], \"kind\": []}}";
        const std::string host = "{\"kind\": \"host-thread\", \"name\": \"main\"}";
        auto ok = parseTrace(
            head + host + ", {\"kind\": \"ranges\", \"name\": \"main\", \"parent\": 0, \"depth\": 1}" + tail, "t.json");
        QVERIFY2(ok.ok(), ok.ok() ? "" : ok.error().toString().c_str());
        QCOMPARE(ok->tracks[1].depth, 1);
        auto bad =
            parseTrace(head + host + ", {\"kind\": \"ranges\", \"name\": \"x\", \"parent\": 1}" + tail, "t.json");
        QVERIFY(!bad.ok());
        QCOMPARE(q(bad.error().path), QStringLiteral("/tracks/1/parent"));
        auto none = parseTrace(head + "{\"kind\": \"ranges\", \"name\": \"x\"}" + tail, "t.json");
        QVERIFY(!none.ok());
    }
};

QTEST_GUILESS_MAIN(TestRanges)
#include "tst_ranges.moc"
