// The trace model and its native JSON format: finalize() ordering and flow remapping, exact round trips, every
// parse error path, and the atomic file save.
#include "trace.h"
#include "trace_json.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QSet>
#include <QTemporaryDir>
#include <QTest>

#include <cstring>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <csignal>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace streamscope;

namespace {

QString q(const std::string& s);

// Writes the trace, reads it back, checks both with `check`, and requires the second writing to equal the first;
// the first writing goes to `text`.
template <typename Check>
void checkRoundTrip(const Trace& t, const char* file, Check check, std::string& text)
{
    check(t);
    text = traceToJson(t);
    auto back = parseTrace(text, file);
    QVERIFY2(back.ok(), back.error().toString().c_str());
    check(*back);
    QCOMPARE(q(traceToJson(*back)), q(text));
}

QString q(const std::string& s)
{
    return QString::fromStdString(s);
}

// Enum names for QCOMPARE (which cannot print enum classes without Q_ENUM).
template <typename E>
QString n(E e)
{
    const std::string_view s = toString(e);
    return QString::fromUtf8(s.data(), qsizetype(s.size()));
}

std::string readAll(const QString& path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return "<unreadable>";
    return f.readAll().toStdString();
}

bool writeAll(const QString& path, const QByteArray& data)
{
    QFile f(path);
    return f.open(QIODevice::WriteOnly | QIODevice::Truncate) && f.write(data) == data.size();
}

// A trace with every field set to something other than its default.
Trace richTrace()
{
    Trace t;
    t.info.source = TraceSource::Cupti;
    t.info.backend = "cuda";
    t.info.scenarioId = "two-streams";
    t.info.scenarioTitle = "Two streams \"overlap\"";
    t.info.variant = "one-stream";
    t.info.scenarioJson = R"({"format": "streamscope-scenario", "version": 1, "id": "two-streams",
        "streams": [{"name": "s1"}, {"name": "s2", "kind": "non-blocking"}], "zeta": 1, "alpha": [1, 2.5, null]})";
    t.info.devices.push_back({0, "NVIDIA H200", {{"sm_count", "132"}, {"copy_engines", "7"}}});
    t.info.devices.push_back({1, "NVIDIA H200 #2", {}});
    t.info.host = "gpu-node-7";
    t.info.date = "2025-01-02T03:04:05Z";
    t.info.command = "streamscope-cli run two-streams --backend cuda";
    t.info.settings = {{"CUDA_DEVICE_MAX_CONNECTIONS", "8"}, {"profile", "h200"}};
    t.info.clockAlignmentErrorNs = 1234.5;

    const uint32_t host = t.addTrack({TrackKind::HostThread, "main", 0, StreamKind::Blocking, 0, 4242});
    const uint32_t s1 = t.addTrack({TrackKind::Stream, "s1", 0, StreamKind::NonBlocking, -2, 13});
    const uint32_t s2 = t.addTrack({TrackKind::Stream, "ptds@main", 1, StreamKind::PerThreadDefault, 0, -1});

    // Beyond 2^53: a double would lose the last digit.
    const int64_t big = (int64_t(1) << 53) + 1;
    const uint32_t api = t.addSpan({host, SpanKind::ApiCall, "cudaLaunchKernel", 100, 2100, 0, 0, 0, 0, {}, {}});
    const uint32_t k = t.addSpan(
        {s1, SpanKind::Kernel, "matmul \u00e9\u4e2d \"q\"\n", 3000, big, 0, 0, 0, 0, {132, 2, 1}, {256, 1, 1}});
    const uint32_t c = t.addSpan(
        {s2, SpanKind::MemcpyP2P, "memcpy p2p", 50, 60, 0, 1, 3, std::numeric_limits<int64_t>::max(), {}, {}});
    const uint32_t sync =
        t.addSpan({host, SpanKind::Sync, "cudaStreamSynchronize", 2100, big + 10, 0, 2, 0, 0, {}, {}});
    t.addSpan({s1, SpanKind::HostFunc, "callback", -500, -400, -1, -1, -1, 0, {}, {}});
    t.addFlow(api, k, FlowKind::Launch);
    t.addFlow(k, sync, FlowKind::Sync);
    t.addFlow(c, k, FlowKind::Event);
    t.addFlow(c, sync, FlowKind::Implicit);
    t.finalize();
    return t;
}

// A small valid document; the parse error cases each break one thing in it.
const std::string kBase = R"({"format":"streamscope-trace","version":1,)"
                          R"("info":{"source":"simulator","settings":{"k":"v"},"devices":[{"index":0,"name":"gpu"}]},)"
                          R"("strings":["a","b"],"span_kinds":["kernel","memcpy-h2d"],"flow_kinds":["launch"],)"
                          R"("tracks":[{"kind":"stream","name":"s1","device":0,"stream_kind":"blocking"}],)"
                          R"("spans":{"track":[0,0],"kind":[0,1],"name":[0,1],"start":[0,10],"end":[5,20],)"
                          R"("grid":[[1,1,1],[0,0,0]]},)"
                          R"("flows":{"from":[0],"to":[1],"kind":[0]}})";

std::string replaced(const std::string& from, const std::string& to)
{
    std::string s = kBase;
    const auto pos = s.find(from);
    if (pos == std::string::npos)
        return "<pattern not in the base document: " + from + ">";
    return s.replace(pos, from.size(), to);
}

QStringList dirEntries(const QString& dir)
{
    return QDir(dir).entryList(QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot, QDir::Name);
}

} // namespace

class TestTrace : public QObject {
    Q_OBJECT

private slots:
    // Optional columns (SpanColumns): absent while every span has the default, made on the first span that does
    // not, kept in step by finalize()'s reordering, and dropped again when a reader fills them with defaults.
    void optionalColumnsOnlyWhereUsed()
    {
        Trace t;
        const uint32_t s = t.addTrack({TrackKind::Stream, "s"});
        for (int i = 0; i < 3; ++i)
            t.addSpan({s, SpanKind::Kernel, "imported", 100 - 10 * i, 105 - 10 * i});
        QVERIFY(t.spans.thread.empty() && t.spans.op.empty() && t.spans.iteration.empty());
        QVERIFY(t.spans.detail.empty() && t.spans.details.empty());
        QCOMPARE(t.spans.threadOf(1), -1);
        QCOMPARE(t.spans.bytesOf(1), int64_t(0));
        QVERIFY(t.spans.gridOf(1) == (Dim3{0, 0, 0}));

        // A copy with a thread and bytes, then kernels sharing one launch shape.
        t.addSpan({s, SpanKind::MemcpyH2D, "copy", 0, 5, 2, 7, 1, 4096, {}, {}});
        for (int i = 0; i < 50; ++i)
            t.addSpan({s, SpanKind::Kernel, "k", 200 + i, 201 + i, 2, 8, 1, 0, {64, 1, 1}, {256, 1, 1}});
        t.addSpan({s, SpanKind::MemcpyH2D, "copy", 300, 305, 2, 7, 1, 4096, {}, {}});
        QCOMPARE(t.spans.thread.size(), t.spanCount());
        QCOMPARE(t.spans.detail.size(), t.spanCount());
        // The default, the copy's size and the kernels' shape.
        QCOMPARE(t.spans.details.size(), size_t(3));
        const uint32_t copy = 3;
        QCOMPARE(t.spans.threadOf(copy), 2);
        QCOMPARE(t.spans.opOf(copy), 7);
        QCOMPARE(t.spans.bytesOf(copy), int64_t(4096));
        QCOMPARE(t.spans.threadOf(0), -1);

        // finalize() sorts by start: the copy at 0 comes first, its fields with it.
        t.finalize();
        QCOMPARE(q(std::string(t.spanName(0))), QStringLiteral("copy"));
        QCOMPARE(t.spans.threadOf(0), 2);
        QCOMPARE(t.spans.bytesOf(0), int64_t(4096));
        QCOMPARE(q(std::string(t.spanName(1))), QStringLiteral("imported"));
        QCOMPARE(t.spans.threadOf(1), -1);
        QCOMPARE(t.spans.bytesOf(1), int64_t(0));
        for (uint32_t i = 0; i < t.spanCount(); ++i)
            if (t.spanName(i) == "k") {
                QVERIFY(t.spans.gridOf(i) == (Dim3{64, 1, 1}));
                QVERIFY(t.spans.blockOf(i) == (Dim3{256, 1, 1}));
                QCOMPARE(t.spans.opOf(i), 8);
            }

        // A document whose thread/op/iteration/bytes/grid/block are all defaults reads into no optional column,
        // and is written back the same.
        Trace imported;
        const uint32_t st = imported.addTrack({TrackKind::Stream, "s"});
        for (int i = 0; i < 1000; ++i)
            imported.addSpan({st, SpanKind::Kernel, "k", 10 * i, 10 * i + 5});
        imported.finalize();
        const std::string text = traceToJson(imported);
        auto back = parseTrace(text, "imported.json");
        QVERIFY2(back.ok(), back.ok() ? "" : back.error().toString().c_str());
        QVERIFY(back->spans.thread.empty() && back->spans.op.empty() && back->spans.iteration.empty());
        QVERIFY(back->spans.detail.empty());
        QCOMPARE(q(traceToJson(*back)), q(text));
        // track, kind, name, start and end: 25 bytes a span, and nothing for the rest.
        QVERIFY2(back->spans.memoryBytes() <= 26 * back->spanCount(),
                 std::to_string(back->spans.memoryBytes()).c_str());
    }

    // A reader that reserved room for more spans than came (the Chrome reader projects them from the bytes read so
    // far) and wrote into it ahead: finalize() gives the room's pages back to the kernel without moving the columns
    // (no copy), memoryBytes() counts the spans and not the room, and spans added later go into the room. The same
    // for the arrows' list.
    void finalizeGivesBackRoomInPlace()
    {
#if !defined(__linux__)
        QSKIP("pages are given back in place on Linux only");
#else
        Trace t;
        const uint32_t st = t.addTrack({TrackKind::Stream, "s"});
        t.spans.reserve(1'000'000);
        for (int i = 0; i < 1000; ++i)
            t.addSpan({st, SpanKind::Kernel, "k", 10 * i, 10 * i + 5});
        auto& track = t.spans.track;
        track.resize(500'000, 7); // the room's first pages written, as a reader's pages faulted in ahead are
        track.resize(1000);
        const uint32_t* trackData = track.data();
        const size_t capacity = track.capacity();
        const long page = sysconf(_SC_PAGESIZE);
        const auto roomPages = [&] {
            const auto begin =
                (reinterpret_cast<uintptr_t>(track.data() + track.size()) + page - 1) & ~uintptr_t(page - 1);
            const auto end = reinterpret_cast<uintptr_t>(track.data() + 400'000) & ~uintptr_t(page - 1);
            std::vector<unsigned char> resident((end - begin) / size_t(page));
            if (mincore(reinterpret_cast<void*>(begin), end - begin, resident.data()) != 0)
                return -1;
            return int(std::count_if(resident.begin(), resident.end(), [](unsigned char r) { return r & 1; }));
        };
        QVERIFY(roomPages() > 300); // 1.6 MB of the room written
        // The arrows' list grown by doubling, its room written ahead as well.
        t.flows.resize(200'000, Flow{0, 1, FlowKind::Launch});
        t.flows.resize(500);
        const auto flowRoomPages = [&] {
            const auto begin =
                (reinterpret_cast<uintptr_t>(t.flows.data() + t.flows.size()) + page - 1) & ~uintptr_t(page - 1);
            const auto end = reinterpret_cast<uintptr_t>(t.flows.data() + 190'000) & ~uintptr_t(page - 1);
            std::vector<unsigned char> resident((end - begin) / size_t(page));
            if (mincore(reinterpret_cast<void*>(begin), end - begin, resident.data()) != 0)
                return -1;
            return int(std::count_if(resident.begin(), resident.end(), [](unsigned char r) { return r & 1; }));
        };
        QVERIFY(flowRoomPages() > 300);
        const size_t before = t.memoryBytes();
        t.finalize();
        QCOMPARE(roomPages(), 0);
        QCOMPARE(flowRoomPages(), 0);
        QCOMPARE(t.flows.size(), size_t(1)); // the 500 equal arrows are one
        QVERIFY2(t.memoryBytes() < before, std::to_string(t.memoryBytes()).c_str());
        QCOMPARE(static_cast<const void*>(track.data()), static_cast<const void*>(trackData));
        QCOMPARE(track.capacity(), capacity);
        // track, kind, name, start and end of 1000 spans, each column rounded up to whole pages.
        QVERIFY2(t.spans.memoryBytes() <= 5 * 4096 + 26 * 1000, std::to_string(t.spans.memoryBytes()).c_str());
        for (int i = 1000; i < 3000; ++i)
            t.addSpan({st, SpanKind::Kernel, "k", 10 * i, 10 * i + 5});
        t.finalize();
        QCOMPARE(static_cast<const void*>(track.data()), static_cast<const void*>(trackData));
        QCOMPARE(t.spanCount(), size_t(3000));
        for (uint32_t i = 0; i < 3000; ++i) {
            QCOMPARE(t.spans.track[i], st);
            QCOMPARE(t.spans.start[i], int64_t(10) * i);
            QCOMPARE(t.spans.end[i], int64_t(10) * i + 5);
        }
#endif
    }

    // Copying every span of a trace into another with the same tracks gives the same trace: a column that
    // copySpanFrom() dropped would show in the written document (which holds every column, the optional ones too).
    void copySpanFromKeepsEveryColumn()
    {
        Trace src = richTrace();
        const uint32_t s1 = uint32_t(src.findStreamTrack("s1"));
        const uint32_t k = src.addSpan({s1,
                                        SpanKind::Kernel,
                                        "timed",
                                        7000,
                                        8000,
                                        2,
                                        5,
                                        3,
                                        64,
                                        {4, 2, 1},
                                        {32, 8, 1},
                                        SpanTiming::Uncertain,
                                        -120,
                                        45,
                                        6});
        const uint32_t held = src.addSpan({s1, SpanKind::Kernel, "held", 8000, 9000});
        src.setWait(held, WaitCause::Sms, k);
        src.finalize();
        QVERIFY(!src.spans.timing.empty() && !src.spans.eventStartError.empty() && !src.spans.wait.empty()
                && !src.spans.task.empty());

        Trace copy;
        copy.info = src.info;
        copy.tracks = src.tracks;
        copy.strings = src.strings; // the same string indices, so that the documents compare equal
        std::vector<uint32_t> spanMap(src.spanCount());
        for (uint32_t i = 0; i < src.spanCount(); ++i)
            spanMap[i] = copy.copySpanFrom(src, i, src.spans.track[i]);
        copy.copyWaitsFrom(src, spanMap);
        for (const Flow& f : src.flows)
            copy.addFlow(spanMap[f.from], spanMap[f.to], f.kind);
        copy.finalize();
        QCOMPARE(q(traceToJson(copy)), q(traceToJson(src)));

        // Onto another track, moved in time; the name is interned in the target's own strings.
        Trace moved;
        moved.addTrack({TrackKind::Stream, "other"});
        moved.addSpan({0, SpanKind::Memset, "first", 0, 1});
        const uint32_t i = moved.copySpanFrom(src, src.trackBegin(s1) + 2, 0, 1000);
        const SpanInit a = src.spanInit(src.trackBegin(s1) + 2);
        const SpanInit b = moved.spanInit(i);
        QCOMPARE(q(std::string(b.name)), q(std::string(a.name)));
        QCOMPARE(moved.spans.name[i], 1u);
        QCOMPARE(b.track, 0u);
        QCOMPARE(b.start, a.start + 1000);
        QCOMPARE(b.end, a.end + 1000);
        QCOMPARE(b.task, a.task);
        QCOMPARE(b.eventStartError, a.eventStartError);
    }

    void finalizeGroupsAndSorts()
    {
        Trace t;
        const uint32_t a = t.addTrack({TrackKind::Stream, "a"});
        const uint32_t b = t.addTrack({TrackKind::Stream, "b"});
        const uint32_t empty = t.addTrack({TrackKind::Stream, "empty"});
        t.addSpan({b, SpanKind::Kernel, "b2", 20, 30});
        t.addSpan({a, SpanKind::Kernel, "a2", 10, 40});
        t.addSpan({b, SpanKind::Kernel, "b1", 5, 6});
        t.addSpan({a, SpanKind::Kernel, "a1", 10, 15}); // same start as a2: the shorter first
        t.addSpan({a, SpanKind::Kernel, "a0", 0, 1});
        QVERIFY(!t.finalized());
        t.finalize();
        QVERIFY(t.finalized());

        QStringList names;
        for (uint32_t i = 0; i < t.spanCount(); ++i)
            names << q(std::string(t.spanName(i)));
        QCOMPARE(names,
                 (QStringList{QStringLiteral("a0"), QStringLiteral("a1"), QStringLiteral("a2"), QStringLiteral("b1"),
                              QStringLiteral("b2")}));
        QCOMPARE(t.trackBegin(a), 0u);
        QCOMPARE(t.trackEnd(a), 3u);
        QCOMPARE(t.trackBegin(b), 3u);
        QCOMPARE(t.trackEnd(b), 5u);
        QCOMPARE(t.trackBegin(empty), t.trackEnd(empty));
        for (uint32_t i = 0; i < t.spanCount(); ++i)
            QCOMPARE(t.spans.track[i], i < 3 ? a : b);

        const auto before = traceToJson(t);
        t.finalize();
        QCOMPARE(q(traceToJson(t)), q(before));
    }

    // Many spans of equal track, start and end, added out of order: finalize orders them as a stable sort by
    // (track, start, end) would, ties in the order they were added (the order is the trace's; a file written from
    // it must not change with the sort used).
    void finalizeKeepsTiesInSpanOrder()
    {
        Trace t;
        for (int k = 0; k < 7; ++k)
            t.addTrack({TrackKind::Stream, "s" + std::to_string(k)});
        struct Added {
            uint32_t track;
            int64_t start, end;
            uint32_t index;
        };
        std::vector<Added> added;
        uint64_t x = 12345;
        auto next = [&x](uint64_t n) {
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            return (x >> 33) % n;
        };
        for (uint32_t i = 0; i < 5000; ++i) {
            const auto track = uint32_t(next(7));
            const auto start = int64_t(next(40)) * 10; // few distinct times: many ties
            const int64_t end = start + int64_t(next(3)) * 5;
            t.addSpan({track, SpanKind::Kernel, std::to_string(i), start, end});
            added.push_back({track, start, end, i});
        }
        std::stable_sort(added.begin(), added.end(), [](const Added& a, const Added& b) {
            return std::tie(a.track, a.start, a.end) < std::tie(b.track, b.start, b.end);
        });
        t.finalize();
        QCOMPARE(t.spanCount(), uint32_t(added.size()));
        for (uint32_t i = 0; i < t.spanCount(); ++i) {
            QCOMPARE(std::string(t.spanName(i)), std::to_string(added[i].index));
            QCOMPARE(t.spans.track[i], added[i].track);
            QCOMPARE(t.spans.start[i], added[i].start);
        }
    }

    void finalizeRemapsFlows()
    {
        Trace t;
        const uint32_t host = t.addTrack({TrackKind::HostThread, "main"});
        const uint32_t s = t.addTrack({TrackKind::Stream, "s"});
        // Added stream first, host last: finalize moves the host spans to the front.
        const uint32_t kernel = t.addSpan({s, SpanKind::Kernel, "kernel", 10, 20});
        const uint32_t copy = t.addSpan({s, SpanKind::MemcpyH2D, "copy", 0, 5});
        const uint32_t launch = t.addSpan({host, SpanKind::ApiCall, "launch", 1, 2});
        const uint32_t wait = t.addSpan({host, SpanKind::Sync, "wait", 3, 25});
        t.addFlow(launch, kernel, FlowKind::Launch);
        t.addFlow(kernel, wait, FlowKind::Sync);
        t.addFlow(copy, kernel, FlowKind::Event);
        t.addFlow(copy, kernel, FlowKind::Event); // duplicate: dropped
        t.addFlow(copy, 99, FlowKind::Event);     // out of range: dropped
        t.finalize();

        QCOMPARE(t.flows.size(), size_t(3));
        QSet<QString> arrows;
        for (const Flow& f : t.flows)
            arrows << q(std::string(t.spanName(f.from)) + " -" + std::string(toString(f.kind)) + "-> "
                        + std::string(t.spanName(f.to)));
        QCOMPARE(arrows,
                 (QSet<QString>{QStringLiteral("launch -launch-> kernel"), QStringLiteral("kernel -sync-> wait"),
                                QStringLiteral("copy -event-> kernel")}));
        QVERIFY(std::is_sorted(t.flows.begin(), t.flows.end(), [](const Flow& x, const Flow& y) {
            return std::tie(x.from, x.to) < std::tie(y.from, y.to);
        }));
    }

    void roundTripIsExact()
    {
        const Trace t = richTrace();
        const std::string first = traceToJson(t);
        auto parsed = parseTrace(first, "rich.json");
        QVERIFY2(parsed.ok(), parsed.error().toString().c_str());
        QVERIFY(parsed->finalized());
        const std::string second = traceToJson(*parsed);
        QCOMPARE(q(second), q(first));

        const Trace& p = *parsed;
        QCOMPARE(n(p.info.source), n(TraceSource::Cupti));
        QCOMPARE(q(p.info.backend), QStringLiteral("cuda"));
        QCOMPARE(q(p.info.scenarioTitle), q(t.info.scenarioTitle));
        QCOMPARE(q(p.info.variant), QStringLiteral("one-stream"));
        QCOMPARE(p.info.devices.size(), size_t(2));
        QCOMPARE(q(p.info.devices[0].properties[0].first), QStringLiteral("sm_count"));
        QCOMPARE(q(p.info.devices[0].properties[1].second), QStringLiteral("7"));
        QVERIFY(p.info.settings == t.info.settings);
        QCOMPARE(p.info.clockAlignmentErrorNs, 1234.5);
        QCOMPARE(p.tracks.size(), t.tracks.size());
        for (size_t i = 0; i < t.tracks.size(); ++i) {
            QCOMPARE(n(p.tracks[i].kind), n(t.tracks[i].kind));
            QCOMPARE(q(p.tracks[i].name), q(t.tracks[i].name));
            QCOMPARE(p.tracks[i].device, t.tracks[i].device);
            QCOMPARE(n(p.tracks[i].streamKind), n(t.tracks[i].streamKind));
            QCOMPARE(p.tracks[i].priority, t.tracks[i].priority);
            QCOMPARE(p.tracks[i].id, t.tracks[i].id);
        }
        QVERIFY(p.spans.track == t.spans.track);
        QVERIFY(p.spans.kind == t.spans.kind);
        QVERIFY(p.spans.start == t.spans.start);
        QVERIFY(p.spans.end == t.spans.end);
        QVERIFY(p.spans.thread == t.spans.thread);
        QVERIFY(p.spans.op == t.spans.op);
        QVERIFY(p.spans.iteration == t.spans.iteration);
        QVERIFY(p.spans.bytesColumn() == t.spans.bytesColumn());
        QVERIFY(p.spans.gridColumn() == t.spans.gridColumn());
        QVERIFY(p.spans.blockColumn() == t.spans.blockColumn());
        QVERIFY(p.flows == t.flows);
        for (uint32_t i = 0; i < t.spanCount(); ++i)
            QCOMPARE(q(std::string(p.spanName(i))), q(std::string(t.spanName(i))));
        // int64 precision: 2^53 + 1 survives.
        QVERIFY(std::find(p.spans.end.begin(), p.spans.end.end(), (int64_t(1) << 53) + 1) != p.spans.end.end());
        const std::vector<int64_t> bytes = p.spans.bytesColumn();
        QVERIFY(std::find(bytes.begin(), bytes.end(), std::numeric_limits<int64_t>::max()) != bytes.end());
    }

    // What held a GPU op (simulator traces): kept through finalize's reordering and the native format.
    void waitsSurviveFinalizeAndRoundTrip()
    {
        Trace t;
        const uint32_t s1 = t.addTrack({TrackKind::Stream, "s1"});
        const uint32_t s2 = t.addTrack({TrackKind::Stream, "s2"});
        const uint32_t small = t.addSpan({s2, SpanKind::Kernel, "small", 500, 700});
        const uint32_t big = t.addSpan({s1, SpanKind::Kernel, "big", 0, 510});
        t.setWait(small, WaitCause::Sms, big);
        t.addSpan({s1, SpanKind::Kernel, "later", 600, 900}); // added after the column exists
        t.finalize();
        const auto check = [](const Trace& x) {
            for (uint32_t i = 0; i < x.spanCount(); ++i) {
                const bool isSmall = x.spanName(i) == "small";
                QCOMPARE(n(x.spans.waitOf(i)), n(isSmall ? WaitCause::Sms : WaitCause::None));
                if (isSmall)
                    QCOMPARE(q(std::string(x.spanName(x.spans.waitForOf(i)))), QStringLiteral("big"));
                else
                    QCOMPARE(x.spans.waitForOf(i), kNoSpan);
            }
        };
        std::string text;
        checkRoundTrip(t, "w.json", check, text);
        if (QTest::currentTestFailed())
            return;
        // A trace without waits writes no such columns.
        Trace plain;
        plain.addSpan({plain.addTrack({TrackKind::Stream, "s"}), SpanKind::Kernel, "k", 0, 1});
        plain.finalize();
        QVERIFY(traceToJson(plain).find("\"wait\"") == std::string::npos);
    }

    // Repeats (pool tasks): the column follows finalize's reordering and round-trips; a trace whose spans all ran
    // once writes none, and a negative task is refused with its path.
    void tasksSurviveFinalizeAndRoundTrip()
    {
        Trace t;
        const uint32_t s = t.addTrack({TrackKind::Stream, "s"});
        t.addSpan({s, SpanKind::Kernel, "k", 0, 10}); // before the column exists
        for (int task = 2; task >= 1; --task) {
            SpanInit init{s, SpanKind::Kernel, "k", 100 * task, 100 * task + 10};
            init.task = task;
            t.addSpan(init);
        }
        t.finalize();
        const auto check = [](const Trace& x) {
            QCOMPARE(x.spans.task.size(), size_t(3));
            for (uint32_t i = 0; i < x.spanCount(); ++i)
                QCOMPARE(x.spans.taskOf(i), int32_t(x.spans.start[i] / 100));
        };
        std::string text;
        checkRoundTrip(t, "t.json", check, text);
        if (QTest::currentTestFailed())
            return;
        Trace plain;
        plain.addSpan({plain.addTrack({TrackKind::Stream, "s"}), SpanKind::Kernel, "k", 0, 1});
        plain.finalize();
        QVERIFY(traceToJson(plain).find("\"task\"") == std::string::npos);
        std::string bad = text;
        const size_t at = bad.find("\"task\": [");
        QVERIFY(at != std::string::npos);
        bad.replace(at, std::strlen("\"task\": [0"), "\"task\": [-1");
        auto refused = parseTrace(bad, "bad.json");
        QVERIFY(!refused.ok());
        QVERIFY2(refused.error().toString().find("/spans/task/0") != std::string::npos,
                 refused.error().toString().c_str());
    }

    void embeddedScenarioIsAnObject()
    {
        const Trace t = richTrace();
        const auto doc = nlohmann::json::parse(traceToJson(t));
        QVERIFY(doc["info"]["scenario"].is_object());
        QVERIFY(doc["info"]["scenario"] == nlohmann::json::parse(t.info.scenarioJson));

        auto parsed = parseTrace(traceToJson(t), "t.json");
        QVERIFY2(parsed.ok(), parsed.error().toString().c_str());
        // The scenario text comes back as equal JSON, with its own key order (zeta before alpha).
        QVERIFY(nlohmann::json::parse(parsed->info.scenarioJson) == nlohmann::json::parse(t.info.scenarioJson));
        QVERIFY(parsed->info.scenarioJson.find("zeta") < parsed->info.scenarioJson.find("alpha"));

        Trace none = t;
        none.info.scenarioJson.clear();
        QVERIFY(!nlohmann::json::parse(traceToJson(none))["info"].contains("scenario"));
        auto noneParsed = parseTrace(traceToJson(none), "none.json");
        QVERIFY(noneParsed.ok());
        QVERIFY(noneParsed->info.scenarioJson.empty());

        // Text that is not a JSON object is kept verbatim as a string.
        Trace broken = t;
        broken.info.scenarioJson = "{not json";
        const std::string text = traceToJson(broken);
        QVERIFY(nlohmann::json::parse(text)["info"]["scenario"].is_string());
        auto brokenParsed = parseTrace(text, "broken.json");
        QVERIFY(brokenParsed.ok());
        QCOMPARE(q(brokenParsed->info.scenarioJson), QStringLiteral("{not json"));
        QCOMPARE(q(traceToJson(*brokenParsed)), q(text));
    }

    void writesFinalizedOrder()
    {
        Trace t;
        const uint32_t a = t.addTrack({TrackKind::Stream, "a"});
        const uint32_t b = t.addTrack({TrackKind::Stream, "b"});
        const uint32_t x = t.addSpan({b, SpanKind::Kernel, "x", 5, 9});
        const uint32_t y = t.addSpan({a, SpanKind::Kernel, "y", 7, 8});
        t.addFlow(x, y, FlowKind::Event);
        Trace f = t;
        f.finalize();
        QCOMPARE(q(traceToJson(t)), q(traceToJson(f)));
        const auto doc = nlohmann::json::parse(traceToJson(t));
        QVERIFY(doc["spans"]["track"] == nlohmann::json::parse("[0, 1]"));
        QVERIFY(doc["flows"]["from"] == nlohmann::json::parse("[1]"));
        QVERIFY(doc["flows"]["to"] == nlohmann::json::parse("[0]"));
    }

    void readsUnsortedFilesAndOptionalColumns()
    {
        // Hand-written: spans out of order, legends in another order, optional columns left out.
        const std::string text = R"({"format":"streamscope-trace","version":1,"info":{},"strings":["late","early"],
            "span_kinds":["memset","kernel"],"flow_kinds":["sync","event"],
            "tracks":[{"kind":"stream","name":"s"}],
            "spans":{"track":[0,0],"kind":[1,0],"name":[0,1],"start":[50,10],"end":[60,20]},
            "flows":{"from":[0],"to":[1],"kind":[1]}})";
        auto parsed = parseTrace(text, "hand.json");
        QVERIFY2(parsed.ok(), parsed.error().toString().c_str());
        const Trace& t = *parsed;
        QCOMPARE(n(t.info.source), n(TraceSource::Imported));
        QCOMPARE(q(std::string(t.spanName(0))), QStringLiteral("early"));
        QCOMPARE(n(t.spans.kind[0]), n(SpanKind::Memset));
        QCOMPARE(n(t.spans.kind[1]), n(SpanKind::Kernel));
        QCOMPARE(t.spans.threadOf(0), -1);
        QVERIFY(t.spans.gridOf(0) == (Dim3{0, 0, 0}));
        QCOMPARE(t.tracks[0].device, -1);
        QCOMPARE(n(t.tracks[0].streamKind), n(StreamKind::Blocking));
        QCOMPARE(t.flows.size(), size_t(1));
        QCOMPARE(q(std::string(t.spanName(t.flows[0].from))), QStringLiteral("late"));
        QCOMPARE(q(std::string(t.spanName(t.flows[0].to))), QStringLiteral("early"));
        QCOMPARE(n(t.flows[0].kind), n(FlowKind::Event));
    }

    void parseErrors_data()
    {
        QTest::addColumn<QByteArray>("text");
        QTest::addColumn<QString>("path");
        QTest::addColumn<QString>("message");
        const auto row = [](const char* name, const std::string& text, const char* path, const char* message) {
            QTest::newRow(name) << QByteArray::fromStdString(text) << QString::fromUtf8(path)
                                << QString::fromUtf8(message);
        };
        row("base is valid", kBase, "", "");
        row("empty", "", "byte 1", "not valid JSON");
        row("truncated", kBase.substr(0, 30), "byte 31", "not valid JSON");
        row("garbage", "{\"format\": streamscope}", "byte 12", "not valid JSON");
        row("deep nesting", replaced(R"("k":"v")", R"("k":)" + std::string(300, '[') + std::string(300, ']')), "byte ",
            "nested deeper than 256 levels");
        row("not an object", "[1, 2]", "", "expected a JSON object, found an array");
        row("no format", replaced(R"("format":"streamscope-trace",)", ""), "", "missing key \"format\"");
        row("scenario file", replaced("streamscope-trace", "streamscope-scenario"), "/format", "this is a scenario");
        row("other format", replaced("streamscope-trace", "chrome"), "/format", "format is \"chrome\"");
        row("version 2", replaced(R"("version":1)", R"("version":2)"), "/version", "unsupported version 2");
        row("version string", replaced(R"("version":1)", R"("version":"1")"), "/version", "must be an integer");
        row("no version", replaced(R"("version":1,)", ""), "", "missing key \"version\"");
        row("unknown key", replaced(R"("flows":)", R"("flow":{},"flows":)"), "/flow", "unknown key \"flow\"");
        row("missing spans",
            replaced(R"("spans":{"track":[0,0],"kind":[0,1],"name":[0,1],"start":[0,10],)"
                     R"("end":[5,20],"grid":[[1,1,1],[0,0,0]]},)",
                     ""),
            "", "missing key \"spans\"");
        row("info not object",
            replaced(R"({"source":"simulator","settings":{"k":"v"},"devices":[{"index":0,"name":"gpu"}]})", "[]"),
            "/info", "must be an object");
        row("unknown source", replaced(R"("source":"simulator")", R"("source":"nsys")"), "/info/source",
            "unknown source \"nsys\"");
        row("unknown info key", replaced(R"("source":"simulator")", R"("source":"simulator","gpu":1)"), "/info/gpu",
            "unknown key \"gpu\"");
        row("scenario not object", replaced(R"("source":"simulator")", R"("source":"simulator","scenario":5)"),
            "/info/scenario", "must be an object");
        row("setting not string", replaced(R"("k":"v")", R"("a/b":[1])"), "/info/settings/a~1b",
            "must be a string, not an array");
        row("device without index", replaced(R"({"index":0,"name":"gpu"})", R"({"name":"gpu"})"), "/info/devices/0",
            "missing key \"index\"");
        row("clock error string",
            replaced(R"("source":"simulator")", R"("source":"simulator","clock_alignment_error_ns":"5")"),
            "/info/clock_alignment_error_ns", "must be a number");
        row("string not string", replaced(R"(["a","b"])", R"(["a",2])"), "/strings/1", "must be a string");
        row("unknown span kind", replaced(R"(["kernel","memcpy-h2d"])", R"(["kernel","kernal"])"), "/span_kinds/1",
            "unknown span kind \"kernal\"");
        row("unknown flow kind", replaced(R"(["launch"])", R"(["lunch"])"), "/flow_kinds/0",
            "unknown flow kind \"lunch\"");
        row("unknown track kind", replaced(R"("kind":"stream")", R"("kind":"queue")"), "/tracks/0/kind",
            "unknown track kind \"queue\"");
        row("unknown stream kind", replaced(R"("stream_kind":"blocking")", R"("stream_kind":"nonblocking")"),
            "/tracks/0/stream_kind", "unknown stream kind \"nonblocking\"");
        row("track without name", replaced(R"("name":"s1",)", ""), "/tracks/0", "missing key \"name\"");
        row("track device fraction", replaced(R"("device":0,"stream)", R"("device":0.5,"stream)"), "/tracks/0/device",
            "must be an integer");
        row("end before start", replaced(R"("end":[5,20])", R"("end":[5,9])"), "/spans/end/1", "end before start");
        row("column too short", replaced(R"("end":[5,20])", R"("end":[5])"), "/spans/end",
            "column has 1 values, but /spans/track has 2");
        row("grid column too long", replaced(R"("grid":[[1,1,1],[0,0,0]])", R"("grid":[[1,1,1],[0,0,0],[1,1,1]])"),
            "/spans/grid", "column has 3 values");
        row("missing column", replaced(R"("start":[0,10],)", ""), "/spans", "missing column \"start\"");
        row("unknown column", replaced(R"("end":[5,20],)", R"("end":[5,20],"colour":[1,2],)"), "/spans/colour",
            "unknown key \"colour\"");
        row("column not array", replaced(R"("start":[0,10])", R"("start":{})"), "/spans/start", "must be an array");
        row("track out of range", replaced(R"("track":[0,0])", R"("track":[0,1])"), "/spans/track/1",
            "track 1 is out of range (tracks has 1 entry)");
        row("negative track", replaced(R"("track":[0,0])", R"("track":[0,-1])"), "/spans/track/1",
            "track -1 is out of range");
        row("kind out of range", replaced(R"("kind":[0,1])", R"("kind":[0,2])"), "/spans/kind/1",
            "kind 2 is out of range (span_kinds has 2 entries)");
        row("name out of range", replaced(R"("name":[0,1])", R"("name":[7,1])"), "/spans/name/0",
            "name 7 is out of range (strings has 2 entries)");
        row("fractional start", replaced(R"("start":[0,10])", R"("start":[0,10.5])"), "/spans/start/1",
            "must be an integer");
        row("start beyond int64", replaced(R"("start":[0,10])", R"("start":[0,9223372036854775808])"), "/spans/start/1",
            "out of range");
        row("thread beyond int32", replaced(R"("end":[5,20],)", R"("end":[5,20],"thread":[0,2147483648],)"),
            "/spans/thread/1", "out of range");
        row("short grid", replaced(R"([[1,1,1],[0,0,0]])", R"([[1,1,1],[0,0]])"), "/spans/grid/1", "three integers");
        row("negative grid", replaced(R"([[1,1,1],[0,0,0]])", R"([[1,-1,1],[0,0,0]])"), "/spans/grid/0/1",
            "out of range");
        row("spans not object",
            replaced(R"("spans":{"track":[0,0],"kind":[0,1],"name":[0,1],"start":[0,10],"end":[5,20],)"
                     R"("grid":[[1,1,1],[0,0,0]]})",
                     R"("spans":7)"),
            "/spans", "must be an object, not an integer");
        row("string in column", replaced(R"("start":[0,10])", R"("start":[0,"10"])"), "/spans/start/1",
            "must be an integer, not a string");
        row("object in column", replaced(R"("name":[0,1])", R"("name":[{"a":[1,{}]},1])"), "/spans/name/0",
            "must be an integer, not an object");
        row("array in column", replaced(R"("kind":[0,1])", R"("kind":[0,[1]])"), "/spans/kind/1",
            "must be an integer, not an array");
        row("bytes beyond int64", replaced(R"("end":[5,20],)", R"("end":[5,20],"bytes":[18446744073709551615,0],)"),
            "/spans/bytes/0", "18446744073709551615 is out of range");
        row("grid entry not array", replaced(R"([[1,1,1],[0,0,0]])", R"([[1,1,1],0])"), "/spans/grid/1",
            "three integers");
        row("grid component string", replaced(R"([[1,1,1],[0,0,0]])", R"([[1,"1",1],[0,0,0]])"), "/spans/grid/0/1",
            "must be an integer, not a string");
        row("grid component fraction", replaced(R"([[1,1,1],[0,0,0]])", R"([[1,1,1],[0,0,0.5]])"), "/spans/grid/1/2",
            "must be an integer, not a number with a fraction");
        row("grid too long", replaced(R"([[1,1,1],[0,0,0]])", R"([[1,1,1,1],[0,0,0]])"), "/spans/grid/0",
            "three integers");
        row("grid beyond uint32", replaced(R"([[1,1,1],[0,0,0]])", R"([[1,1,4294967296],[0,0,0]])"), "/spans/grid/0/2",
            "4294967296 is out of range (0 to 4294967295)");
        row("null in flows", replaced(R"("from":[0])", R"("from":[null])"), "/flows/from/0",
            "must be an integer, not null");
        row("flows not object", replaced(R"({"from":[0],"to":[1],"kind":[0]})", "[[0,1,0]]"), "/flows",
            "must be an object, not an array");
        row("column nested in object", replaced(R"("start":[0,10])", R"("start":{"v":[0,10]})"), "/spans/start",
            "must be an array, not an object");
        row("flow from out of range", replaced(R"("from":[0])", R"("from":[5])"), "/flows/from/0",
            "span 5 is out of range (spans has 2 entries)");
        row("flow kind out of range", replaced(R"("to":[1],"kind":[0])", R"("to":[1],"kind":[1])"), "/flows/kind/0",
            "kind 1 is out of range (flow_kinds has 1 entry)");
        row("flow columns mismatch", replaced(R"("to":[1])", R"("to":[1,0])"), "/flows/to",
            "column has 2 values, but /flows/from has 1");
        row("flow column missing", replaced(R"("to":[1],)", ""), "/flows", "missing column \"to\"");
        const auto waits = [](const char* wait, const char* waitFor) {
            return replaced(R"("grid":[[1,1,1],[0,0,0]]})",
                            std::string(R"("grid":[[1,1,1],[0,0,0]],"wait":)") + wait + R"(,"wait_for":)" + waitFor
                                + "}");
        };
        row("duplicate key", replaced(R"("version":1,)", R"("version":1,"version":1,)"), "",
            "duplicate key \"version\": an object names each key once");
        row("duplicate column", replaced(R"("start":[0,10],)", R"("start":[0,10],"start":[0,10],)"), "/spans",
            "duplicate key \"start\"");
        row("duplicate key in info", replaced(R"("source":"simulator",)", R"("source":"simulator","source":"cupti",)"),
            "/info", "duplicate key \"source\"");
        row("waits are valid", waits("[0,1]", "[-1,0]"), "", "");
        row("wait cause out of range", waits("[0,9]", "[-1,0]"), "/spans/wait/1", "wait 9 is not a wait cause");
        row("wait holder out of range", waits("[0,1]", "[-1,2]"), "/spans/wait_for/1", "span 2 is out of range");
        row("wait without its holder",
            replaced(R"("grid":[[1,1,1],[0,0,0]]})", R"("grid":[[1,1,1],[0,0,0]],"wait":[0,1]})"), "/spans",
            "wait and wait_for come together");
    }

    void parseErrors()
    {
        QFETCH(QByteArray, text);
        QFETCH(QString, path);
        QFETCH(QString, message);
        auto r = parseTrace(text.toStdString(), "bad.json");
        if (message.isEmpty()) {
            QVERIFY2(r.ok(), r.error().toString().c_str());
            return;
        }
        QVERIFY(!r.ok());
        const Error& e = r.error();
        QCOMPARE(q(e.file), QStringLiteral("bad.json"));
        if (path.endsWith(QLatin1Char(' '))) // a prefix: the exact byte is the parser's business
            QVERIFY2(q(e.path).startsWith(path), e.toString().c_str());
        else
            QCOMPARE(q(e.path), path);
        QVERIFY2(q(e.message).contains(message), e.toString().c_str());
        QVERIFY(q(e.toString()).startsWith(QStringLiteral("bad.json: ")));
        QVERIFY(r.errorClass() == ErrorClass::BadInput);
    }

    void saveAndLoadFile()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const std::string path = dir.filePath(QStringLiteral("trace.json")).toStdString();
        const Trace t = richTrace();
        const Status st = saveTextFileAtomic(path, traceToJson(t));
        QVERIFY2(st.ok(), st.error().toString().c_str());
        auto loaded = loadTraceFile(path);
        QVERIFY2(loaded.ok(), loaded.error().toString().c_str());
        QCOMPARE(q(traceToJson(*loaded)), q(traceToJson(t)));
        QCOMPARE(dirEntries(dir.path()), QStringList{QStringLiteral("trace.json")});

        // Replacing keeps nothing of the old content and leaves no temporary file.
        QVERIFY(saveTextFileAtomic(path, "short").ok());
        QCOMPARE(q(readAll(q(path))), QStringLiteral("short"));
        QCOMPARE(dirEntries(dir.path()), QStringList{QStringLiteral("trace.json")});

        // Errors in the file name the file.
        QVERIFY(saveTextFileAtomic(path, "{\"format\": \"streamscope-trace\", \"version\": 9}").ok());
        auto bad = loadTraceFile(path);
        QVERIFY(!bad.ok());
        QCOMPARE(q(bad.error().toString()),
                 q(path)
                     + QStringLiteral(": /version: unsupported version 9 (this "
                                      "StreamScope reads version 1)"));
    }

    void saveKeepsMode()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("script.json"));
        QVERIFY(writeAll(path, "old"));
        QVERIFY(::chmod(path.toLocal8Bit().constData(), 0640) == 0);
        QVERIFY(saveTextFileAtomic(path.toStdString(), "new").ok());
        struct stat st {};
        QVERIFY(::stat(path.toLocal8Bit().constData(), &st) == 0);
        QCOMPARE(int(st.st_mode & 0777), 0640);
    }

    void saveThroughSymlinkReplacesTarget()
    {
        QTemporaryDir dir;
        const QString real = dir.filePath(QStringLiteral("real.json"));
        const QString link = dir.filePath(QStringLiteral("link.json"));
        QVERIFY(writeAll(real, "old"));
        QVERIFY(QFile::link(real, link));
        QVERIFY(saveTextFileAtomic(link.toStdString(), "new").ok());
        QVERIFY(QFileInfo(link).isSymLink());
        QCOMPARE(q(readAll(real)), QStringLiteral("new"));
    }

    void saveFailures_data()
    {
        QTest::addColumn<QString>("target"); // relative to a fresh temporary directory
        QTest::addColumn<QString>("message");
        QTest::newRow("is a directory") << QStringLiteral("sub") << QStringLiteral("it is a directory");
        QTest::newRow("no parent directory")
            << QStringLiteral("missing/trace.json") << QStringLiteral("No such file or directory");
        QTest::newRow("parent is a file")
            << QStringLiteral("existing.json/trace.json") << QStringLiteral("Not a directory");
    }

    void saveFailures()
    {
        QFETCH(QString, target);
        QFETCH(QString, message);
        QTemporaryDir dir;
        QVERIFY(QDir(dir.path()).mkdir(QStringLiteral("sub")));
        QVERIFY(writeAll(dir.filePath(QStringLiteral("sub/keep.json")), "keep"));
        QVERIFY(writeAll(dir.filePath(QStringLiteral("existing.json")), "old"));
        const QStringList before = dirEntries(dir.path());

        const std::string path = dir.filePath(target).toStdString();
        const Status st = saveTextFileAtomic(path, "new content");
        QVERIFY(!st.ok());
        QCOMPARE(q(st.error().file), q(path));
        QVERIFY2(q(st.error().message).contains(message), st.error().toString().c_str());
        QCOMPARE(dirEntries(dir.path()), before);
        QCOMPARE(dirEntries(dir.filePath(QStringLiteral("sub"))), QStringList{QStringLiteral("keep.json")});
        QCOMPARE(q(readAll(dir.filePath(QStringLiteral("existing.json")))), QStringLiteral("old"));
    }

    void saveFailingWriteKeepsTarget()
    {
        // A write that fails half way (file size limit: works for root too) leaves the old file and no temporary.
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("trace.json"));
        QVERIFY(writeAll(path, "old content"));
        struct rlimit old {};
        QVERIFY(::getrlimit(RLIMIT_FSIZE, &old) == 0);
        const auto previousHandler = std::signal(SIGXFSZ, SIG_IGN);
        struct rlimit small = old;
        small.rlim_cur = 100;
        QVERIFY(::setrlimit(RLIMIT_FSIZE, &small) == 0);
        const Status st = saveTextFileAtomic(path.toStdString(), std::string(10000, 'x'));
        ::setrlimit(RLIMIT_FSIZE, &old);
        std::signal(SIGXFSZ, previousHandler);

        QVERIFY(!st.ok());
        QCOMPARE(q(st.error().file), path);
        QVERIFY2(q(st.error().message).contains(QStringLiteral("write failed")), st.error().toString().c_str());
        QCOMPARE(q(readAll(path)), QStringLiteral("old content"));
        QCOMPARE(dirEntries(dir.path()), QStringList{QStringLiteral("trace.json")});
    }

    void saveIntoReadOnlyDirectory()
    {
        if (::geteuid() == 0)
            QSKIP("running as root: directory permissions do not apply");
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("trace.json"));
        QVERIFY(writeAll(path, "old"));
        QVERIFY(::chmod(dir.path().toLocal8Bit().constData(), 0555) == 0);
        const Status st = saveTextFileAtomic(path.toStdString(), "new");
        ::chmod(dir.path().toLocal8Bit().constData(), 0755);
        QVERIFY(!st.ok());
        QVERIFY2(q(st.error().message).contains(QStringLiteral("Permission denied")), st.error().toString().c_str());
        QCOMPARE(q(readAll(path)), QStringLiteral("old"));
        QCOMPARE(dirEntries(dir.path()), QStringList{QStringLiteral("trace.json")});
    }

    void readTextFileLimits()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("ten.txt"));
        QVERIFY(writeAll(path, "0123456789"));
        auto exact = readTextFile(path.toStdString(), 10);
        QVERIFY(exact.ok());
        QCOMPARE(q(*exact), QStringLiteral("0123456789"));

        auto big = readTextFile(path.toStdString(), 9);
        QVERIFY(!big.ok());
        QCOMPARE(q(big.error().file), path);
        QVERIFY2(q(big.error().message).contains(QStringLiteral("too large (10 bytes; the limit is 9)")),
                 big.error().toString().c_str());

        auto missing = readTextFile(dir.filePath(QStringLiteral("nope.json")).toStdString());
        QVERIFY(!missing.ok());
        QVERIFY(q(missing.error().toString())
                    .endsWith(QStringLiteral("nope.json: cannot open: No such file or directory")));

        auto directory = readTextFile(dir.path().toStdString());
        QVERIFY(!directory.ok());
        QVERIFY(q(directory.error().message).contains(QStringLiteral("directory")));

        const QString empty = dir.filePath(QStringLiteral("empty.txt"));
        QVERIFY(writeAll(empty, ""));
        auto e = readTextFile(empty.toStdString());
        QVERIFY(e.ok());
        QVERIFY(e->empty());
    }

    void readTextFileFromPipe()
    {
        // Not a regular file: its size is unknown, the limit still applies.
        int fds[2];
        QVERIFY(::pipe(fds) == 0);
        const std::string data(100000, 'p');
        QVERIFY(::write(fds[1], data.data(), 60000) == 60000); // fits a default pipe buffer (64 KiB)
        ::close(fds[1]);
        const std::string path = "/dev/fd/" + std::to_string(fds[0]);
        auto r = readTextFile(path, 50000);
        QVERIFY(!r.ok());
        QVERIFY2(q(r.error().message).contains(QStringLiteral("too large")), r.error().toString().c_str());
        ::close(fds[0]);

        QVERIFY(::pipe(fds) == 0);
        QVERIFY(::write(fds[1], data.data(), 60000) == 60000);
        ::close(fds[1]);
        auto ok = readTextFile("/dev/fd/" + std::to_string(fds[0]));
        ::close(fds[0]);
        QVERIFY2(ok.ok(), ok.error().toString().c_str());
        QCOMPARE(ok->size(), size_t(60000));
    }
};

QTEST_GUILESS_MAIN(TestTrace)
#include "tst_trace.moc"
