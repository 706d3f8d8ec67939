// The simulator's rules of copies (DESIGN §3 rules 6 and 11): copy engines, the link both directions share, memory
// bandwidth, peer and pageable copies; and the work queues of older GPUs, which show on copies.
#include "tst_simulator.h"

void TestSimulator::copyEngines()
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
void TestSimulator::duplexCopiesShareTheLink()
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
    QCOMPARE(endOf(pageable, span(pageable, "down")) - startOf(pageable, span(pageable, "down")), int64_t(1'000'000));
}

// work_queues "engines" (Fermi and older): one compute queue and one per copy engine, shared by every stream in
// issue order. A copy waiting for its kernel holds back another stream's copy behind it on the same engine, and a
// kernel waiting for its copy holds back another stream's kernel; with a queue per stream neither waits.
void TestSimulator::engineQueuesAreSharedByEveryStream()
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
void TestSimulator::batchedKernelCompletion()
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
void TestSimulator::overlapDataTransfersOrdering()
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
void TestSimulator::memsetsAndDeviceCopiesShareMemoryBandwidth()
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

// A small memset lasts min_memset_ns (on the H200 4 KiB memsets queued in a stream ran 1.53 µs apart, empty kernels
// 1.36 µs), min_kernel_ns where the profile has no such figure; a large one its bytes at the memset bandwidth.
void TestSimulator::smallMemsetsLastMinMemset()
{
    auto run = [](int64_t minMemset, int64_t bytes) {
        Op set;
        set.kind = OpKind::Memset;
        set.stream = "a";
        set.bytes = bytes;
        set.name = "set";
        const auto t = simulateWith(Builder().stream("a").thread("main").op(set).build(), [&](DeviceProfile& p) {
            p.minKernelNs = 640;
            p.minMemsetNs = minMemset;
            p.memsetBps = 4e12;
        });
        const int m = span(t, "set");
        return m >= 0 ? t.duration(uint32_t(m)) : int64_t(-1);
    };
    QCOMPARE(run(810, 4096), int64_t(810));
    QCOMPARE(run(0, 4096), int64_t(640));               // no figure: as an empty kernel
    QCOMPARE(run(810, 400'000'000), int64_t(100 * us)); // 100 µs at 4 TB/s
}

void TestSimulator::peerCopyOccupiesBothDevices()
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

void TestSimulator::pageableCopyBlocksHost_data()
{
    QTest::addColumn<bool>("pinned");
    QTest::newRow("pinned") << true;
    QTest::newRow("pageable") << false;
}

void TestSimulator::pageableCopyBlocksHost()
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
