// The simulator, rule by rule (DESIGN §3): each test builds the smallest scenario that shows one rule and
// fails when the rule is removed from the simulator.
#include "device_profile.h"
#include "runner.h"
#include "scenario_json.h"
#include "simulator.h"
#include "trace_json.h"

#include <QTest>

#include <cmath>
#include <string>

using namespace streamscope;

namespace {

QString q(const std::string& s)
{
    return QString::fromStdString(s);
}
QString operator""_q(const char* s, size_t n)
{
    return QString::fromUtf8(s, qsizetype(n));
}

// Builds scenarios in code.
class Builder {
public:
    Builder()
    {
        m_s.id = "test";
        m_s.devices.push_back({0, ""});
    }
    Builder& device(int index, const std::string& profile = {})
    {
        if (!m_s.device(index))
            m_s.devices.push_back({index, profile});
        else
            for (auto& d : m_s.devices)
                if (d.index == index)
                    d.profile = profile;
        return *this;
    }
    Builder& stream(const std::string& name, StreamKind kind = StreamKind::NonBlocking, int device = 0,
                    int priority = 0)
    {
        m_s.streams.push_back({name, device, kind, priority});
        return *this;
    }
    Builder& thread(const std::string& name, int device = 0, int repeat = 1, int workers = 1)
    {
        ThreadSpec t;
        t.name = name;
        t.device = device;
        t.repeat = repeat;
        t.workers = workers;
        m_s.threads.push_back(t);
        return *this;
    }
    Builder& env(const std::string& k, const std::string& v)
    {
        m_s.run.env[k] = v;
        return *this;
    }
    Builder& iterations(int warmup, int measured)
    {
        m_s.run.warmup = warmup;
        m_s.run.iterations = measured;
        return *this;
    }
    Builder& op(Op o)
    {
        m_s.threads.back().ops.push_back(std::move(o));
        return *this;
    }
    Builder& spin(const std::string& name, const std::string& stream, double us, uint32_t grid = 1,
                  uint32_t block = 256)
    {
        return op(spinOp(name, stream, us, grid, block));
    }
    Builder& copy(const std::string& name, const std::string& stream, CopyKind kind, int64_t bytes, bool pinned = true)
    {
        Op o;
        o.kind = OpKind::Memcpy;
        o.name = name;
        o.stream = stream;
        o.copy = kind;
        o.bytes = bytes;
        o.pinned = pinned;
        return op(o);
    }
    Builder& simple(OpKind kind, const std::string& stream = {}, const std::string& event = {}, double us = 0,
                    const std::string& name = {})
    {
        Op o;
        o.kind = kind;
        o.stream = stream;
        o.event = event;
        o.durationUs = us;
        o.name = name;
        o.bytes = kind == OpKind::Malloc || kind == OpKind::Free ? 1 << 20 : 0;
        return op(o);
    }
    static Op spinOp(const std::string& name, const std::string& stream, double us, uint32_t grid = 1,
                     uint32_t block = 256)
    {
        Op o;
        o.kind = OpKind::Kernel;
        o.kernel = KernelKind::Spin;
        o.name = name;
        o.stream = stream;
        o.durationUs = us;
        o.grid = {grid, 1, 1};
        o.gridGiven = true;
        o.block = {block, 1, 1};
        return o;
    }
    Scenario build() const
    {
        auto r = validateScenario(m_s, "test");
        if (!r) {
            qWarning("%s", r.error().toString().c_str());
            return m_s;
        }
        return r->scenario;
    }

private:
    Scenario m_s;
};

Trace simulate(const Scenario& s, const std::string& profile = "h200")
{
    SimulatorOptions opt;
    auto p = findDeviceProfile(profile);
    if (p)
        opt.profile = *p;
    SimulatorBackend sim(opt);
    auto out = runScenario(s, sim);
    if (!out.status)
        qWarning("%s", out.status.error().toString().c_str());
    return std::move(out.trace);
}

// With a profile of chosen figures (the h200 profile, then `change` applied).
template <typename F>
Trace simulateWith(const Scenario& s, F&& change)
{
    auto p = findDeviceProfile("h200");
    if (!p)
        qFatal("%s", p.error().toString().c_str());
    DeviceProfile profile = *p;
    change(profile);
    SimulatorOptions opt;
    opt.profile = profile;
    SimulatorBackend sim(opt);
    auto out = runScenario(s, sim);
    if (!out.status)
        qWarning("%s", out.status.error().toString().c_str());
    return std::move(out.trace);
}

// The GPU span with this name (the n-th, in start order), or -1.
int span(const Trace& t, const std::string& name, int nth = 0)
{
    std::vector<uint32_t> found;
    for (uint32_t i = 0; i < t.spanCount(); ++i)
        if (isGpuSpan(t.spans.kind[i]) && t.spanName(i) == name)
            found.push_back(i);
    std::sort(found.begin(), found.end(), [&](uint32_t a, uint32_t b) { return t.spans.start[a] < t.spans.start[b]; });
    return nth < int(found.size()) ? int(found[size_t(nth)]) : -1;
}

int hostSpan(const Trace& t, const std::string& name, int nth = 0)
{
    int seen = 0;
    for (uint32_t i = 0; i < t.spanCount(); ++i)
        if (!isGpuSpan(t.spans.kind[i]) && t.spanName(i) == name && seen++ == nth)
            return int(i);
    return -1;
}

int64_t startOf(const Trace& t, int i)
{
    return t.spans.start[size_t(i)];
}
int64_t endOf(const Trace& t, int i)
{
    return t.spans.end[size_t(i)];
}
bool overlaps(const Trace& t, int a, int b)
{
    return startOf(t, a) < endOf(t, b) && startOf(t, b) < endOf(t, a);
}

bool hasFlow(const Trace& t, int from, int to, FlowKind kind)
{
    for (const auto& f : t.flows)
        if (int(f.from) == from && int(f.to) == to && f.kind == kind)
            return true;
    return false;
}

constexpr int64_t us = 1000;

} // namespace

class TestSimulator : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() { QVERIFY(findDeviceProfile("h200").ok()); }

    void streamOrder()
    {
        const auto t = simulate(Builder().stream("s").thread("main").spin("a", "s", 50).spin("b", "s", 50).build());
        const int a = span(t, "a"), b = span(t, "b");
        QVERIFY(a >= 0 && b >= 0);
        QVERIFY(startOf(t, b) >= endOf(t, a));
        QVERIFY(endOf(t, a) - startOf(t, a) >= 50 * us);
    }

    void twoStreamsOverlap()
    {
        const auto t = simulate(
            Builder().stream("s1").stream("s2").thread("main").spin("a", "s1", 100).spin("b", "s2", 100).build());
        QVERIFY(overlaps(t, span(t, "a"), span(t, "b")));
    }

    void legacyStreamBarrier()
    {
        // Blocking streams: the legacy-stream kernel waits for a, and b waits for it.
        const auto t = simulate(Builder()
                                    .stream("s1", StreamKind::Blocking)
                                    .stream("s2", StreamKind::Blocking)
                                    .stream("null", StreamKind::LegacyDefault)
                                    .thread("main")
                                    .spin("a", "s1", 100)
                                    .spin("legacy", "null", 100)
                                    .spin("b", "s2", 100)
                                    .build());
        const int a = span(t, "a"), l = span(t, "legacy"), b = span(t, "b");
        QVERIFY(startOf(t, l) >= endOf(t, a));
        QVERIFY(startOf(t, b) >= endOf(t, l));
        QVERIFY(hasFlow(t, a, l, FlowKind::Implicit));
        QVERIFY(hasFlow(t, l, b, FlowKind::Implicit));
    }

    void nonBlockingStreamsExempt()
    {
        const auto t = simulate(Builder()
                                    .stream("s1", StreamKind::NonBlocking)
                                    .stream("s2", StreamKind::NonBlocking)
                                    .stream("null", StreamKind::LegacyDefault)
                                    .thread("main")
                                    .spin("a", "s1", 100)
                                    .spin("legacy", "null", 100)
                                    .spin("b", "s2", 100)
                                    .build());
        const int a = span(t, "a"), l = span(t, "legacy"), b = span(t, "b");
        QVERIFY(overlaps(t, a, l));
        QVERIFY(overlaps(t, l, b));
    }

    void perThreadDefaultIsBlocking()
    {
        // Per-thread default streams are ordinary blocking streams: the legacy stream still waits for them.
        const auto t = simulate(Builder()
                                    .stream("ptds", StreamKind::PerThreadDefault)
                                    .stream("null", StreamKind::LegacyDefault)
                                    .thread("main")
                                    .spin("a", "ptds", 100)
                                    .spin("legacy", "null", 100)
                                    .build());
        QVERIFY(startOf(t, span(t, "legacy")) >= endOf(t, span(t, "a")));
        // ...but two threads' per-thread default streams overlap each other.
        const auto t2 = simulate(Builder()
                                     .stream("ptds", StreamKind::PerThreadDefault)
                                     .thread("t1")
                                     .spin("a", "ptds", 100)
                                     .thread("t2")
                                     .spin("b", "ptds", 100)
                                     .build());
        QVERIFY(overlaps(t2, span(t2, "a"), span(t2, "b")));
        QCOMPARE(t2.findStreamTrack("ptds@t1") >= 0, true);
        QCOMPARE(t2.findStreamTrack("ptds@t2") >= 0, true);
    }

    void eventWait()
    {
        const auto t = simulate(Builder()
                                    .stream("s1")
                                    .stream("s2")
                                    .thread("main")
                                    .spin("producer", "s1", 100)
                                    .simple(OpKind::Record, "s1", "done")
                                    .spin("other", "s2", 50)
                                    .simple(OpKind::Wait, "s2", "done")
                                    .spin("consumer", "s2", 50)
                                    .build());
        const int p = span(t, "producer"), o = span(t, "other"), c = span(t, "consumer");
        QVERIFY(startOf(t, c) >= endOf(t, p));
        QVERIFY(overlaps(t, p, o));
        QVERIFY(hasFlow(t, p, c, FlowKind::Event));
    }

    void waitOnUnrecordedEventIsNoOp()
    {
        const auto t = simulate(Builder()
                                    .stream("s1")
                                    .stream("s2")
                                    .thread("main")
                                    .spin("producer", "s1", 100)
                                    .simple(OpKind::Wait, "s2", "never")
                                    .spin("consumer", "s2", 50)
                                    .build());
        QVERIFY(overlaps(t, span(t, "producer"), span(t, "consumer")));
    }

    void eventsAcrossDevices()
    {
        const auto t = simulate(Builder()
                                    .device(1)
                                    .stream("s0", StreamKind::NonBlocking, 0)
                                    .stream("s1", StreamKind::NonBlocking, 1)
                                    .thread("t0", 0)
                                    .spin("producer", "s0", 100)
                                    .simple(OpKind::Record, "s0", "e")
                                    .thread("t1", 1)
                                    .simple(OpKind::HostWork, {}, {}, 20)
                                    .simple(OpKind::Wait, "s1", "e")
                                    .spin("consumer", "s1", 50)
                                    .build());
        QVERIFY(startOf(t, span(t, "consumer")) >= endOf(t, span(t, "producer")));
    }

    void hardwareQueueFalseDependency_data()
    {
        QTest::addColumn<QString>("connections");
        QTest::addColumn<bool>("overlap");
        QTest::newRow("1 queue") << QStringLiteral("1") << false;
        QTest::newRow("8 queues") << QStringLiteral("8") << true;
    }
    void hardwareQueueFalseDependency()
    {
        QFETCH(QString, connections);
        QFETCH(bool, overlap);
        // Depth-first issue: a1, b1 (waits for a1) in s1, then a2 in s2. With one queue, a2 sits behind b1.
        const auto t = simulate(Builder()
                                    .stream("s1")
                                    .stream("s2")
                                    .env("CUDA_DEVICE_MAX_CONNECTIONS", connections.toStdString())
                                    .thread("main")
                                    .spin("a1", "s1", 100)
                                    .spin("b1", "s1", 100)
                                    .spin("a2", "s2", 100)
                                    .build());
        QCOMPARE(overlaps(t, span(t, "a1"), span(t, "a2")), overlap);
    }

    void copyEngines()
    {
        // H2D and D2H overlap on a GPU with >= 2 copy engines...
        auto b = Builder()
                     .stream("s1")
                     .stream("s2")
                     .stream("s3")
                     .thread("main")
                     .copy("up", "s1", CopyKind::H2D, 64 << 20)
                     .copy("down", "s2", CopyKind::D2H, 64 << 20)
                     .copy("up2", "s3", CopyKind::H2D, 64 << 20);
        const auto t = simulate(b.build());
        QVERIFY(overlaps(t, span(t, "up"), span(t, "down")));
        // ...copies in one direction serialize...
        QVERIFY(!overlaps(t, span(t, "up"), span(t, "up2")));
        // ...and with one copy engine both directions serialize.
        const auto laptop = simulate(b.build(), "laptop");
        QVERIFY(!overlaps(laptop, span(laptop, "up"), span(laptop, "down")));
    }

    // Pinned copies in both directions at once share the link: each runs at its duplex bandwidth while the other
    // runs, and at the full one-way rate before and after. Pageable copies and profiles without duplex figures
    // are unaffected.
    void duplexCopiesShareTheLink()
    {
        auto build = [](bool pinned) {
            return Builder()
                .stream("s1")
                .stream("s2")
                .thread("main")
                .copy("up", "s1", CopyKind::H2D, 100'000'000, pinned)
                .copy("down", "s2", CopyKind::D2H, 50'000'000, pinned)
                .build();
        };
        auto figures = [](double duplexGbps) {
            return [duplexGbps](DeviceProfile& p) {
                p.copyLatencyNs = 0;
                p.h2dPinnedBps = p.d2hPinnedBps = 50e9;
                p.h2dPageableBps = p.d2hPageableBps = 50e9;
                p.h2dPinnedDuplexBps = p.d2hPinnedDuplexBps = duplexGbps * 1e9;
            };
        };
        const auto t = simulateWith(build(true), figures(25));
        const int up = span(t, "up"), down = span(t, "down");
        QVERIFY(up >= 0 && down >= 0 && overlaps(t, up, down));
        const int64_t lag = startOf(t, down) - startOf(t, up); // the second launch call
        QVERIFY(lag >= 0 && lag < 20 * us);
        // down: 50 MB at 25 GB/s, all of it beside up.
        QCOMPARE(endOf(t, down) - startOf(t, down), int64_t(2'000'000));
        // up: alone for `lag` at 50 GB/s, beside down for 2 ms at 25 GB/s (50 MB), the rest (50 MB less what the lag
        // moved) alone at 50 GB/s: 3 ms in all, against 2 ms alone.
        const int64_t upNs = endOf(t, up) - startOf(t, up);
        QVERIFY2(std::abs(upNs - 3'000'000) <= 2, qPrintable(QString::number(upNs)));

        // Without duplex figures (duplex = one-way): 1 ms and 2 ms.
        const auto full = simulateWith(build(true), figures(50));
        QCOMPARE(endOf(full, span(full, "down")) - startOf(full, span(full, "down")), int64_t(1'000'000));
        QCOMPARE(endOf(full, span(full, "up")) - startOf(full, span(full, "up")), int64_t(2'000'000));
        // Pageable copies keep their own bandwidth.
        const auto pageable = simulateWith(build(false), figures(25));
        QCOMPARE(endOf(pageable, span(pageable, "down")) - startOf(pageable, span(pageable, "down")),
                 int64_t(1'000'000));
    }

    // work_queues "engines" (Fermi and older): one compute queue and one per copy engine, shared by every stream in
    // issue order. A copy waiting for its kernel holds back another stream's copy behind it on the same engine, and a
    // kernel waiting for its copy holds back another stream's kernel; with a queue per stream neither waits.
    void engineQueuesAreSharedByEveryStream()
    {
        auto b = Builder()
                     .stream("s1")
                     .stream("s2")
                     .thread("main")
                     .copy("in 1", "s1", CopyKind::H2D, 4 << 20)
                     .spin("k1", "s1", 200)
                     .copy("out 1", "s1", CopyKind::D2H, 4 << 20)
                     .copy("in 2", "s2", CopyKind::H2D, 4 << 20)
                     .spin("k2", "s2", 200);
        const auto engines = simulateWith(b.build(), [](DeviceProfile& p) {
            p.copyEngines = 1;
            p.workQueues = "engines";
        });
        // One copy engine: in 2 is queued behind out 1, which waits for k1.
        QVERIFY(startOf(engines, span(engines, "in 2")) >= endOf(engines, span(engines, "out 1")));
        QVERIFY(startOf(engines, span(engines, "k2")) >= endOf(engines, span(engines, "k1")));
        const auto streams = simulateWith(b.build(), [](DeviceProfile& p) { p.copyEngines = 1; });
        // A hardware queue per stream: in 2 goes right after in 1 on the engine, k2 beside k1.
        QVERIFY(startOf(streams, span(streams, "in 2")) < startOf(streams, span(streams, "k1")));
        QVERIFY(overlaps(streams, span(streams, "k1"), span(streams, "k2")));
        // Two copy engines and engine queues: the copy out no longer holds back the copy in.
        const auto two = simulateWith(b.build(), [](DeviceProfile& p) {
            p.copyEngines = 2;
            p.workQueues = "engines";
        });
        QVERIFY(startOf(two, span(two, "in 2")) < startOf(two, span(two, "k1")));
        QCOMPARE(q(std::string(toString(engines.spans.waitOf(size_t(span(engines, "in 2")))))), "copy-engine"_q);
    }

    // batched_kernel_completion (Fermi): kernels issued back to back signal their completion when the last of them
    // ends, so a copy waiting for the first waits for all of them; a kernel issued after another op starts a batch.
    void batchedKernelCompletion()
    {
        auto b = Builder()
                     .stream("s1")
                     .stream("s2")
                     .thread("main")
                     .spin("short", "s1", 50, 1)
                     .spin("long", "s2", 400, 1)
                     .copy("out", "s1", CopyKind::D2H, 1 << 20);
        const auto batched = simulateWith(b.build(), [](DeviceProfile& p) { p.batchedKernelCompletion = true; });
        const auto plain = simulateWith(b.build(), [](DeviceProfile&) {});
        const int outB = span(batched, "out"), outP = span(plain, "out");
        QVERIFY(startOf(batched, outB) >= endOf(batched, span(batched, "long")));
        QVERIFY(startOf(plain, outP) < endOf(plain, span(plain, "long")));
        QVERIFY(startOf(plain, outP) >= endOf(plain, span(plain, "short")));
        // The kernels still ran side by side: only the signal waits.
        QVERIFY(overlaps(batched, span(batched, "short"), span(batched, "long")));
        // A copy between the kernels: two batches, the copy after "short" no longer waits for "long".
        const auto split = simulateWith(Builder()
                                            .stream("s1")
                                            .stream("s2")
                                            .thread("main")
                                            .spin("short", "s1", 50, 1)
                                            .copy("out", "s1", CopyKind::D2H, 1 << 20)
                                            .spin("long", "s2", 400, 1)
                                            .build(),
                                        [](DeviceProfile& p) { p.batchedKernelCompletion = true; });
        QVERIFY(startOf(split, span(split, "out")) < endOf(split, span(split, "long")));
    }

    // The published ordering of "How to Overlap Data Transfers in CUDA C/C++" (tests/data/overlap-transfers/README.md):
    // one copy engine: V2 fastest, V1 no faster than sequential; two copy engines and one compute queue (Fermi): V1
    // fastest, V2 between; Hyper-Q: V1 and V2 alike, both faster than sequential.
    void overlapDataTransfersOrdering()
    {
        const std::string dir = STREAMSCOPE_SOURCE_DIR "/tests/data/overlap-transfers/";
        auto makespan = [&](const char* variant, const char* profileName) -> int64_t {
            auto sc = loadScenarioFile(dir + variant + ".json");
            auto profile = loadDeviceProfile(dir + profileName + ".json");
            if (!sc || !profile) {
                qWarning("%s", (!sc ? sc.error().toString() : profile.error().toString()).c_str());
                return -1;
            }
            SimulatorOptions opt;
            opt.profile = *profile;
            SimulatorBackend sim(opt);
            auto out = runScenario(sc->scenario, sim);
            if (!out.status)
                return -1;
            int64_t lo = INT64_MAX, hi = 0;
            for (uint32_t i = 0; i < out.trace.spanCount(); ++i)
                if (isGpuSpan(out.trace.spans.kind[i])) {
                    lo = std::min(lo, out.trace.spans.start[i]);
                    hi = std::max(hi, out.trace.spans.end[i]);
                }
            return hi - lo;
        };
        struct Row {
            const char* profile;
            int64_t seq, v1, v2;
        };
        std::vector<Row> rows;
        for (const char* p : {"one-copy-engine", "two-copy-engines", "hyper-q"})
            rows.push_back({p, makespan("sequential", p), makespan("v1", p), makespan("v2", p)});
        for (const Row& r : rows) {
            QVERIFY2(r.seq > 0 && r.v1 > 0 && r.v2 > 0, r.profile);
            qInfo("%s: sequential %.1f us, V1 %.1f us, V2 %.1f us", r.profile, double(r.seq) / 1e3, double(r.v1) / 1e3,
                  double(r.v2) / 1e3);
        }
        QVERIFY(rows[0].v2 < rows[0].seq && rows[0].seq <= rows[0].v1);
        QVERIFY(rows[1].v1 < rows[1].v2 && rows[1].v2 < rows[1].seq);
        QVERIFY(std::abs(rows[2].v1 - rows[2].v2) * 50 < rows[2].v1); // within 2 %
        QVERIFY(rows[2].v1 < rows[2].seq);
    }

    // Memsets and device-to-device copies each saturate the device memory: side by side in two streams they take as
    // long as one after the other; with a kernel that touches no memory beside them nothing is shared.
    void memsetsAndDeviceCopiesShareMemoryBandwidth()
    {
        auto figures = [](DeviceProfile& p) {
            p.copyLatencyNs = 0;
            p.memsetBps = 4e12;
            p.d2dBps = 2e12;
            p.minKernelNs = 0;
        };
        Op set;
        set.kind = OpKind::Memset;
        set.stream = "a";
        set.bytes = 400'000'000; // 100 µs alone at 4 TB/s
        set.name = "set";
        const auto t = simulateWith(Builder()
                                        .stream("a")
                                        .stream("b")
                                        .thread("main")
                                        .op(set)
                                        .copy("copy", "b", CopyKind::D2D, 200'000'000) // 100 µs alone at 2 TB/s
                                        .build(),
                                    figures);
        const int m = span(t, "set"), c = span(t, "copy");
        QVERIFY(m >= 0 && c >= 0 && overlaps(t, m, c));
        const int64_t lag = startOf(t, c) - startOf(t, m);
        QVERIFY(lag >= 0 && lag < 20 * us);
        // Side by side each gets half: the memset's 100 µs of work takes 200 µs less the lag it ran alone.
        QVERIFY2(std::abs((endOf(t, m) - startOf(t, m)) - (200 * us - lag)) <= 2, qPrintable(QString::number(lag)));
        QVERIFY2(std::abs(std::max(endOf(t, m), endOf(t, c)) - startOf(t, m) - 200 * us) <= 2,
                 "together as one after the other");
        // Beside a spin kernel a memset runs at its own rate.
        const auto spin =
            simulateWith(Builder().stream("a").stream("b").thread("main").op(set).spin("k", "b", 300).build(), figures);
        QCOMPARE(endOf(spin, span(spin, "set")) - startOf(spin, span(spin, "set")), 100 * us);
    }

    void peerCopyOccupiesBothDevices()
    {
        Op p2p;
        p2p.kind = OpKind::Memcpy;
        p2p.name = "peer";
        p2p.stream = "s0";
        p2p.copy = CopyKind::P2P;
        p2p.bytes = 256 << 20;
        p2p.dstDevice = 1;
        const auto t = simulate(Builder()
                                    .device(1)
                                    .stream("s0", StreamKind::NonBlocking, 0)
                                    .stream("s1", StreamKind::NonBlocking, 1)
                                    .stream("s1b", StreamKind::NonBlocking, 1)
                                    .thread("t0", 0)
                                    .op(p2p)
                                    .thread("t1", 1)
                                    .copy("upload on 1", "s1", CopyKind::H2D, 64 << 20)
                                    .copy("download on 1", "s1b", CopyKind::D2H, 64 << 20)
                                    .build());
        // The copy arrives through device 1's incoming engine: device 1's H2D copy waits, its D2H does not.
        QVERIFY(!overlaps(t, span(t, "peer"), span(t, "upload on 1")));
        QVERIFY(overlaps(t, span(t, "peer"), span(t, "download on 1")));
    }

    void pageableCopyBlocksHost_data()
    {
        QTest::addColumn<bool>("pinned");
        QTest::newRow("pinned") << true;
        QTest::newRow("pageable") << false;
    }
    void pageableCopyBlocksHost()
    {
        QFETCH(bool, pinned);
        const auto t = simulate(Builder()
                                    .stream("s1")
                                    .stream("s2")
                                    .thread("main")
                                    .copy("copy", "s1", CopyKind::H2D, 64 << 20, pinned)
                                    .spin("kernel", "s2", 100)
                                    .build());
        const int c = span(t, "copy"), k = span(t, "kernel");
        const int api = hostSpan(t, "cudaMemcpyAsync");
        QVERIFY(api >= 0);
        if (pinned) {
            QVERIFY(overlaps(t, c, k));
            QVERIFY(endOf(t, api) < endOf(t, c));
        } else {
            QVERIFY(!overlaps(t, c, k));
            QVERIFY(endOf(t, api) >= endOf(t, c));
            // Pageable copies are staged at a lower bandwidth.
            const auto pinnedTrace =
                simulate(Builder().stream("s1").thread("main").copy("copy", "s1", CopyKind::H2D, 64 << 20).build());
            QVERIFY(t.duration(uint32_t(c)) > 2 * pinnedTrace.duration(uint32_t(span(pinnedTrace, "copy"))));
        }
    }

    void leftoverBlockDispatch()
    {
        // H200: 132 SMs x 8 blocks of 256 threads = 1056 resident blocks. 1.5 waves of `big`, then `small`
        // in another stream: small gets SMs only when big's second wave leaves room (its tail).
        const auto t = simulate(Builder()
                                    .stream("s1")
                                    .stream("s2")
                                    .thread("main")
                                    .spin("big", "s1", 100, 1584, 256)
                                    .spin("small", "s2", 20, 1, 256)
                                    .build());
        const int big = span(t, "big"), small = span(t, "small");
        QVERIFY(startOf(t, small) >= startOf(t, big) + 100 * us);
        QVERIFY(startOf(t, small) < endOf(t, big));
        QVERIFY(endOf(t, big) - startOf(t, big) >= 200 * us);
    }

    void prioritiesDoNotPreempt()
    {
        // Two GPU-filling low-priority kernels, then a high-priority one: it waits for running blocks (no
        // preemption) but its blocks are dispatched before the queued low-priority blocks.
        const auto t = simulate(Builder()
                                    .stream("low1", StreamKind::NonBlocking, 0, 0)
                                    .stream("low2", StreamKind::NonBlocking, 0, 0)
                                    .stream("high", StreamKind::NonBlocking, 0, -5)
                                    .thread("main")
                                    .spin("l1", "low1", 100, 2112, 256)
                                    .spin("l2", "low2", 100, 2112, 256)
                                    .spin("h", "high", 100, 132, 256)
                                    .build());
        const int l1 = span(t, "l1"), l2 = span(t, "l2"), h = span(t, "h");
        QVERIFY(startOf(t, h) >= startOf(t, l1) + 100 * us); // not preempted
        QVERIFY(endOf(t, h) < endOf(t, l1));                 // jumped l1's second wave
        QVERIFY(endOf(t, h) <= startOf(t, l2) + 100 * us);
        // Same priority: h runs after both.
        const auto same = simulate(Builder()
                                       .stream("low1")
                                       .stream("low2")
                                       .stream("high")
                                       .thread("main")
                                       .spin("l1", "low1", 100, 2112, 256)
                                       .spin("l2", "low2", 100, 2112, 256)
                                       .spin("h", "high", 100, 132, 256)
                                       .build());
        QVERIFY(startOf(same, span(same, "h")) >= endOf(same, span(same, "l1")));
        QVERIFY(startOf(t, h) < startOf(same, span(same, "h")));
        (void)l2;
    }

    void hostFunctionsSerialize()
    {
        const auto t = simulate(Builder()
                                    .stream("s1")
                                    .stream("s2")
                                    .thread("main")
                                    .simple(OpKind::HostFunc, "s1", {}, 100, "f1")
                                    .simple(OpKind::HostFunc, "s2", {}, 100, "f2")
                                    .spin("after", "s1", 10)
                                    .build());
        const int f1 = span(t, "f1"), f2 = span(t, "f2"), after = span(t, "after");
        QVERIFY(f1 >= 0 && f2 >= 0);
        QVERIFY(!overlaps(t, f1, f2));
        QVERIFY(startOf(t, after) >= endOf(t, f1)); // a host function blocks later work in its stream
    }

    // The simulator records what held each ready op and which op's end let it start; nothing where nothing did.
    void recordsWhatHeldEachOp()
    {
        const auto held = [](const Trace& t, const std::string& waiter) {
            const int i = span(t, waiter);
            const uint32_t h = t.spans.waitForOf(size_t(i));
            return std::string(toString(t.spans.waitOf(size_t(i)))) + ":"
                + (h == kNoSpan ? std::string("-") : std::string(t.spanName(h)));
        };
        // SMs: 'big' has four waves of blocks; 'small' gets SMs only as its last blocks end.
        auto t = simulate(Builder()
                              .stream("s1")
                              .stream("s2")
                              .thread("main")
                              .spin("big", "s1", 100, 132 * 8 * 4)
                              .spin("small", "s2", 50, 132 * 8)
                              .build());
        QCOMPARE(q(held(t, "small")), "sms:big"_q);
        QCOMPARE(q(held(t, "big")), "none:-"_q);
        // A hardware queue: with one connection a2 sits behind b1, which waits for a1.
        t = simulate(Builder()
                         .stream("s1")
                         .stream("s2")
                         .env("CUDA_DEVICE_MAX_CONNECTIONS", "1")
                         .thread("main")
                         .spin("a1", "s1", 100)
                         .spin("b1", "s1", 100)
                         .spin("a2", "s2", 100)
                         .build());
        QCOMPARE(q(held(t, "a2")), "hardware-queue:a1"_q);
        QCOMPARE(q(held(t, "b1")), "none:-"_q); // stream order is a dependency, not a resource
        // A copy engine: two H2D copies in two streams.
        t = simulate(Builder()
                         .stream("s1")
                         .stream("s2")
                         .thread("main")
                         .copy("c1", "s1", CopyKind::H2D, 64 << 20)
                         .copy("c2", "s2", CopyKind::H2D, 64 << 20)
                         .copy("d1", "s2", CopyKind::D2H, 1 << 20)
                         .build());
        QCOMPARE(q(held(t, "c2")), "copy-engine:c1"_q);
        // The host-function thread.
        t = simulate(Builder()
                         .stream("s1")
                         .stream("s2")
                         .thread("main")
                         .simple(OpKind::HostFunc, "s1", {}, 100, "f1")
                         .simple(OpKind::HostFunc, "s2", {}, 100, "f2")
                         .build());
        QCOMPARE(q(held(t, "f2")), "host-func-thread:f1"_q);
        QCOMPARE(q(held(t, "f1")), "none:-"_q);
        // Two streams of one-block kernels: nothing waits.
        t = simulate(
            Builder().stream("s1").stream("s2").thread("main").spin("x", "s1", 100).spin("y", "s2", 100).build());
        QVERIFY(t.spans.wait.empty());
    }

    // A launch into another stream than the thread's previous launch costs launch_api_round_robin_ns, one into the
    // same stream launch_api_ns: measured apart on the H200 (calibrate).
    void roundRobinLaunchCost()
    {
        const auto t = simulateWith(Builder()
                                        .stream("s1")
                                        .stream("s2")
                                        .thread("main")
                                        .spin("a", "s1", 10)
                                        .spin("b", "s2", 10)
                                        .spin("c", "s2", 10)
                                        .spin("d", "s1", 10)
                                        .build(),
                                    [](DeviceProfile& p) {
                                        p.launchApiNs = 3000;
                                        p.launchApiRoundRobinNs = 5000;
                                    });
        std::vector<int64_t> calls;
        for (uint32_t i = 0; i < t.spanCount(); ++i)
            if (t.spans.kind[i] == SpanKind::ApiCall)
                calls.push_back(t.duration(i));
        QCOMPARE(calls, (std::vector<int64_t>{3000, 5000, 3000, 5000}));
    }

    // Launch calls of host threads that launch at the same time cost more (launch_api_concurrent_ns with four
    // threads at once, in proportion below that); a thread launching alone pays launch_api_ns.
    void launchesFromSeveralThreadsContend()
    {
        auto build = [](int threads) {
            Builder b;
            for (int t = 0; t < threads; ++t)
                b.stream("s" + std::to_string(t));
            for (int t = 0; t < threads; ++t) {
                b.thread("t" + std::to_string(t));
                for (int k = 0; k < 10; ++k)
                    b.spin("k", "s" + std::to_string(t), 1, 1, 32);
            }
            return b.build();
        };
        auto figures = [](DeviceProfile& p) {
            p.launchApiNs = p.launchApiRoundRobinNs = 4000;
            p.launchApiConcurrentNs = 10000;
        };
        auto calls = [](const Trace& t) {
            std::vector<int64_t> d;
            for (uint32_t i = 0; i < t.spanCount(); ++i)
                if (t.spans.kind[i] == SpanKind::ApiCall)
                    d.push_back(t.duration(i));
            std::sort(d.begin(), d.end());
            return d;
        };
        const auto alone = calls(simulateWith(build(1), figures));
        QCOMPARE(alone.front(), int64_t(4000));
        QCOMPARE(alone.back(), int64_t(4000));
        const auto four = calls(simulateWith(build(4), figures));
        QCOMPARE(four.size(), size_t(40));
        // The first thread to call finds nobody launching; once all four are in, each call costs the full 10 µs.
        QCOMPARE(four.front(), int64_t(4000));
        QCOMPARE(four[four.size() / 2], int64_t(10000));
        QCOMPARE(four.back(), int64_t(10000));
        // Two threads: 4 + (10 - 4) / 3 = 6 µs while the other launches.
        const auto two = calls(simulateWith(build(2), figures));
        QCOMPARE(two[two.size() / 2], int64_t(6000));
        // A profile without the figure: no contention.
        const auto plain = calls(simulateWith(build(4), [](DeviceProfile& p) {
            p.launchApiNs = p.launchApiRoundRobinNs = p.launchApiConcurrentNs = 4000;
        }));
        QCOMPARE(plain.back(), int64_t(4000));
    }

    // cudaGraphLaunch costs graph_launch_api_ns plus graph_launch_api_per_node_ns per node; a memset runs at
    // memset_gbps.
    void graphLaunchPerNodeAndMemsetBandwidth()
    {
        Op graph;
        graph.kind = OpKind::Graph;
        graph.stream = "s";
        for (int i = 0; i < 100; ++i)
            graph.ops.push_back(Builder::spinOp("tiny", {}, 1));
        Op memset;
        memset.kind = OpKind::Memset;
        memset.stream = "s";
        memset.name = "set";
        memset.bytes = int64_t(1) << 30;
        const auto t =
            simulateWith(Builder().stream("s").thread("main").op(graph).op(memset).build(), [](DeviceProfile& p) {
                p.graphLaunchApiNs = 1000;
                p.graphLaunchApiPerNodeNs = 10;
                p.memsetBps = 1e12;
            });
        QCOMPARE(t.duration(uint32_t(hostSpan(t, "cudaGraphLaunch"))), int64_t(2000));
        QCOMPARE(t.duration(uint32_t(span(t, "set"))), int64_t(1073742)); // 2^30 B at 10^12 B/s
    }

    // The host-function thread: asleep, it wakes host_func_latency_ns after the stream reaches a host function;
    // awake, it starts the next host_func_spacing_ns after the previous one ended, in any stream.
    void hostFunctionWakeUpAndSpacing()
    {
        const auto t = simulateWith(Builder()
                                        .stream("s1")
                                        .stream("s2")
                                        .thread("main")
                                        .spin("k", "s1", 100)
                                        .simple(OpKind::HostFunc, "s1", {}, 50, "f1")
                                        .simple(OpKind::HostFunc, "s1", {}, 50, "f2")
                                        .spin("k2", "s2", 120)
                                        .simple(OpKind::HostFunc, "s2", {}, 50, "g")
                                        .build(),
                                    [](DeviceProfile& p) {
                                        p.kernelOverheadNs = 1000;
                                        p.hostFuncLatencyNs = 50'000;
                                        p.hostFuncSpacingNs = 3000;
                                    });
        const int k = span(t, "k"), f1 = span(t, "f1"), f2 = span(t, "f2"), g = span(t, "g");
        QVERIFY(k >= 0 && f1 >= 0 && f2 >= 0 && g >= 0);
        // f1: the thread was asleep, it wakes up for it.
        QCOMPARE(startOf(t, f1) - endOf(t, k), int64_t(1000 + 50'000));
        // g (s2) was ready while f1 ran: the awake thread takes it after the spacing, then f2 after the spacing.
        QCOMPARE(startOf(t, g), endOf(t, f1) + 3000);
        QCOMPARE(startOf(t, f2), endOf(t, g) + 3000);
        QCOMPARE(q(std::string(toString(t.spans.waitOf(size_t(g))))), "host-func-thread"_q);
    }

    // A spin kernel runs its spin plus an empty kernel's cost; a compute-bound kernel of fewer blocks than the
    // device holds reaches the full rate at compute_saturation of them, a memory-bound one runs in proportion.
    void kernelDurations()
    {
        const auto kernel = [](KernelKind kind, int64_t size, uint32_t grid, Dim3 block) {
            Op o;
            o.kind = OpKind::Kernel;
            o.kernel = kind;
            o.name = "k";
            o.stream = "s";
            o.size = size;
            o.grid = {grid, 1, 1};
            o.gridGiven = true;
            o.block = block;
            return o;
        };
        const auto duration = [](const Op& op, double saturation) {
            const auto t = simulateWith(Builder().stream("s").thread("main").op(op).build(), [&](DeviceProfile& p) {
                p.minKernelNs = 500;
                p.computeSaturation = saturation;
            });
            return t.duration(uint32_t(span(t, "k")));
        };
        QCOMPARE(duration(Builder::spinOp("k", "s", 10), 1.0), int64_t(10'500));
        // 264 blocks of 256 threads: a quarter of the 1056 an H200 holds.
        const Op mm = kernel(KernelKind::Matmul, 768, 264, {16, 16, 1});
        const int64_t linear = duration(mm, 1.0), saturating = duration(mm, 0.5);
        QVERIFY(std::abs(double(linear) / double(saturating) - 2.0) < 0.01);
        const Op tr = kernel(KernelKind::Transpose, 4096, 264, {32, 8, 1});
        QCOMPARE(duration(tr, 0.5), duration(tr, 1.0));
        // A full wave is at the full rate whatever the saturation.
        const Op full = kernel(KernelKind::Matmul, 768, 1056, {16, 16, 1});
        QCOMPARE(duration(full, 0.5), duration(full, 1.0));
    }

    void mallocSynchronizesImplicitly_data()
    {
        QTest::addColumn<int>("kind");
        QTest::newRow("malloc") << int(OpKind::Malloc);
        QTest::newRow("free") << int(OpKind::Free);
    }
    void mallocSynchronizesImplicitly()
    {
        QFETCH(int, kind);
        const auto t = simulate(Builder()
                                    .stream("s1")
                                    .stream("s2")
                                    .thread("main")
                                    .spin("a", "s1", 200)
                                    .simple(OpKind(kind))
                                    .spin("b", "s2", 50)
                                    .build());
        QVERIFY(startOf(t, span(t, "b")) >= endOf(t, span(t, "a")));
        // Without the allocation the two kernels overlap.
        const auto t2 = simulate(
            Builder().stream("s1").stream("s2").thread("main").spin("a", "s1", 200).spin("b", "s2", 50).build());
        QVERIFY(overlaps(t2, span(t2, "a"), span(t2, "b")));
    }

    void syncBlocksHost()
    {
        const auto t = simulate(Builder()
                                    .stream("s1")
                                    .thread("main")
                                    .spin("a", "s1", 200)
                                    .simple(OpKind::StreamSync, "s1")
                                    .simple(OpKind::HostWork, {}, {}, 10, "after")
                                    .build());
        const int sync = hostSpan(t, "cudaStreamSynchronize");
        QVERIFY(sync >= 0);
        QVERIFY(t.spans.kind[size_t(sync)] == SpanKind::Sync);
        QVERIFY(endOf(t, sync) >= endOf(t, span(t, "a")));
        QVERIFY(hasFlow(t, span(t, "a"), sync, FlowKind::Sync));
        QVERIFY(startOf(t, hostSpan(t, "after")) >= endOf(t, sync));
    }

    void graphLaunchCost()
    {
        Op graph;
        graph.kind = OpKind::Graph;
        graph.stream = "s";
        for (int i = 0; i < 50; ++i) {
            auto k = Builder::spinOp("tiny", {}, 2);
            graph.ops.push_back(k);
        }
        Builder g;
        g.stream("s").thread("main").op(graph);
        Builder plain;
        plain.stream("s").thread("main");
        for (int i = 0; i < 50; ++i)
            plain.spin("tiny", "s", 2);
        const auto tg = simulate(g.build());
        const auto tp = simulate(plain.build());
        int apiGraph = 0, apiPlain = 0;
        for (uint32_t i = 0; i < tg.spanCount(); ++i)
            apiGraph += tg.spans.kind[i] == SpanKind::ApiCall;
        for (uint32_t i = 0; i < tp.spanCount(); ++i)
            apiPlain += tp.spans.kind[i] == SpanKind::ApiCall;
        QCOMPARE(apiGraph, 1);
        QCOMPARE(apiPlain, 50);
        QCOMPARE(span(tg, "tiny", 49) >= 0, true);
        const auto rg = tg.timeRange(), rp = tp.timeRange();
        QVERIFY(rg.second - rg.first < rp.second - rp.first);
    }

    void workerPoolSharesTasks()
    {
        // 4 workers take 8 tasks: each worker issues about two of them, on its own per-thread default stream.
        const auto t = simulate(Builder()
                                    .stream("ptds", StreamKind::PerThreadDefault)
                                    .thread("pool", 0, 8, 4)
                                    .spin("task", "ptds", 100)
                                    .simple(OpKind::StreamSync, "ptds")
                                    .build());
        int kernels = 0;
        for (uint32_t i = 0; i < t.spanCount(); ++i)
            kernels += t.spans.kind[i] == SpanKind::Kernel;
        QCOMPARE(kernels, 8);
        for (int w = 0; w < 4; ++w) {
            const int track = t.findStreamTrack("ptds@pool#" + std::to_string(w));
            QVERIFY(track >= 0);
            QCOMPARE(int(t.trackEnd(uint32_t(track)) - t.trackBegin(uint32_t(track))), 2);
        }
        const auto [lo, hi] = t.timeRange();
        QVERIFY(hi - lo < 300 * us); // 4-way parallel, not 8 x 100 us
    }

    void iterationsAndWarmup()
    {
        const auto t = simulate(Builder().iterations(2, 3).stream("s").thread("main").spin("k", "s", 10).build());
        int kernels = 0, maxIter = -1;
        for (uint32_t i = 0; i < t.spanCount(); ++i)
            if (t.spans.kind[i] == SpanKind::Kernel) {
                ++kernels;
                maxIter = std::max(maxIter, t.spans.iteration[i]);
            }
        QCOMPARE(kernels, 3);
        QCOMPARE(maxIter, 2);
        QCOMPARE(t.timeRange().first, int64_t(0));
    }

    void deterministic()
    {
        auto b = Builder()
                     .stream("s1")
                     .stream("s2", StreamKind::Blocking)
                     .stream("null", StreamKind::LegacyDefault)
                     .thread("a", 0, 20)
                     .spin("k1", "s1", 7, 300)
                     .copy("c", "s2", CopyKind::H2D, 1 << 20)
                     .simple(OpKind::Record, "s1", "e")
                     .thread("b", 0, 20)
                     .simple(OpKind::Wait, "s2", "e")
                     .spin("k2", "null", 3, 50)
                     .simple(OpKind::HostFunc, "s2", {}, 5);
        const auto s = b.build();
        QCOMPARE(traceToJson(simulate(s)), traceToJson(simulate(s)));
    }

    void kernelTooLargeForSmIsAnError()
    {
        auto s = Builder().stream("s").thread("main").spin("k", "s", 10, 1, 1024).build();
        s.threads[0].ops[0].sharedBytes = 1 << 30;
        SimulatorBackend sim;
        const auto out = runScenario(s, sim);
        QVERIFY(!out.status.ok());
        QVERIFY(out.status.error().message.find("does not fit") != std::string::npos);
    }
};

QTEST_GUILESS_MAIN(TestSimulator)
#include "tst_simulator.moc"
