// The simulator's rules of streams and the GPU (DESIGN §3 rules 1-5): stream order, the legacy default stream,
// events, hardware queues, block dispatch with leftovers and priorities, what held each op, kernel durations.
#include "tst_simulator.h"

void TestSimulator::initTestCase()
{
    QVERIFY(findDeviceProfile("h200").ok());
}

void TestSimulator::streamOrder()
{
    const auto t = simulate(Builder().stream("s").thread("main").spin("a", "s", 50).spin("b", "s", 50).build());
    const int a = span(t, "a"), b = span(t, "b");
    QVERIFY(a >= 0 && b >= 0);
    QVERIFY(startOf(t, b) >= endOf(t, a));
    QVERIFY(endOf(t, a) - startOf(t, a) >= 50 * us);
}

void TestSimulator::twoStreamsOverlap()
{
    const auto t =
        simulate(Builder().stream("s1").stream("s2").thread("main").spin("a", "s1", 100).spin("b", "s2", 100).build());
    QVERIFY(overlaps(t, span(t, "a"), span(t, "b")));
}

void TestSimulator::legacyStreamBarrier()
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

void TestSimulator::nonBlockingStreamsExempt()
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

void TestSimulator::perThreadDefaultIsBlocking()
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

void TestSimulator::eventWait()
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

void TestSimulator::waitOnUnrecordedEventIsNoOp()
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

void TestSimulator::eventsAcrossDevices()
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

void TestSimulator::hardwareQueueFalseDependency_data()
{
    QTest::addColumn<QString>("connections");
    QTest::addColumn<bool>("overlap");
    QTest::newRow("1 queue") << QStringLiteral("1") << false;
    QTest::newRow("8 queues") << QStringLiteral("8") << true;
}

void TestSimulator::hardwareQueueFalseDependency()
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

void TestSimulator::leftoverBlockDispatch()
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

void TestSimulator::prioritiesDoNotPreempt()
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

// The simulator records what held each ready op and which op's end let it start; nothing where nothing did.
void TestSimulator::recordsWhatHeldEachOp()
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
    t = simulate(Builder().stream("s1").stream("s2").thread("main").spin("x", "s1", 100).spin("y", "s2", 100).build());
    QVERIFY(t.spans.wait.empty());
}

// A spin kernel runs its spin, spin_overhead_ns and an empty kernel's cost; a compute-bound kernel of fewer blocks than
// the device holds reaches the full rate at compute_saturation of them, a transpose runs in proportion (streaming
// kernels: tst_simulator_kernels.cpp); a reduce of many blocks lasts at least its blocks times reduce_block_ns.
void TestSimulator::kernelDurations()
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
            p.spinOverheadNs = 100;
            p.computeSaturation = saturation;
        });
        return t.duration(uint32_t(span(t, "k")));
    };
    QCOMPARE(duration(Builder::spinOp("k", "s", 10), 1.0), int64_t(10'600));
    // 264 blocks of 256 threads: a quarter of the 1056 an H200 holds.
    const Op mm = kernel(KernelKind::Matmul, 768, 264, {16, 16, 1});
    const int64_t linear = duration(mm, 1.0), saturating = duration(mm, 0.5);
    QVERIFY(std::abs(double(linear) / double(saturating) - 2.0) < 0.01);
    const Op tr = kernel(KernelKind::Transpose, 4096, 264, {32, 8, 1});
    QCOMPARE(duration(tr, 0.5), duration(tr, 1.0));
    // A full wave is at the full rate whatever the saturation.
    const Op full = kernel(KernelKind::Matmul, 768, 1056, {16, 16, 1});
    QCOMPARE(duration(full, 0.5), duration(full, 1.0));

    // A reduce's block ends go one after another: 262144 blocks of one element per thread last 262144 x
    // reduce_block_ns (the memory model alone gives a tenth of that); 528 blocks over 128 MiB stay memory-bound.
    const auto reduceNs = [](const Op& op, double blockNs) {
        const auto t = simulateWith(Builder().stream("s").thread("main").op(op).build(),
                                    [&](DeviceProfile& p) { p.reduceBlockNs = blockNs; });
        return t.duration(uint32_t(span(t, "k")));
    };
    const Op many = kernel(KernelKind::Reduce, int64_t(1) << 26, 262144, {256, 1, 1});
    const int64_t memoryBound = reduceNs(many, 0);
    const int64_t serialized = reduceNs(many, 3.5);
    QVERIFY2(std::abs(double(serialized) - 262144 * 3.5) < 0.01 * 262144 * 3.5,
             qPrintable(QString::number(serialized)));
    QVERIFY(memoryBound < serialized / 5);
    const Op few = kernel(KernelKind::Reduce, int64_t(1) << 25, 528, {256, 1, 1});
    QCOMPARE(reduceNs(few, 3.5), reduceNs(few, 0));
}

// The L2 rule: a kernel whose buffers fit in the L2 runs its modelled time when they are still there and
// l2_cold_factor times it when other work touched more than two thirds of the L2 since its last run; copies do not
// count, kernels larger than the L2 never get the factor, and a profile without the rule simulates as before.
void TestSimulator::l2Residency()
{
    Op mm;
    mm.kind = OpKind::Kernel;
    mm.kernel = KernelKind::Matmul;
    mm.name = "mm";
    mm.stream = "s";
    mm.size = 768; // 7 MB of buffers
    mm.grid = {264, 1, 1};
    mm.gridGiven = true;
    mm.block = {16, 16, 1};
    Op big = mm;
    big.name = "big";
    big.size = 4096; // 192 MiB: larger than the L2
    const auto memset = [](int64_t bytes) {
        Op o;
        o.kind = OpKind::Memset;
        o.name = "memset";
        o.stream = "s";
        o.bytes = bytes;
        return o;
    };
    const auto profile = [](double factor) {
        return [factor](DeviceProfile& p) {
            p.l2Bytes = 60 << 20;
            p.l2ColdFactor = factor;
        };
    };
    const auto alone =
        simulateWith(Builder().stream("s").thread("main", 0, 3).op(mm).iterations(0, 1).build(), profile(1.5));
    const int64_t first = alone.duration(uint32_t(span(alone, "mm", 0)));
    const int64_t warm = alone.duration(uint32_t(span(alone, "mm", 1)));
    QCOMPARE(alone.duration(uint32_t(span(alone, "mm", 2))), warm);
    // Its first run finds its buffers evicted.
    QVERIFY(std::abs(double(first) / double(warm) - 1.5) < 0.01);

    const auto after = [&](const Op& other, double factor) {
        const auto t =
            simulateWith(Builder().stream("s").thread("main", 0, 3).op(mm).op(other).build(), profile(factor));
        return t.duration(uint32_t(span(t, "mm", 2)));
    };
    QCOMPARE(after(memset(16 << 20), 1.5), warm); // less than 30 % of the L2: warm
    QVERIFY(std::abs(double(after(memset(128 << 20), 1.5)) / double(warm) - 1.5) < 0.01); // all evicted
    const double partial = double(after(memset(30 << 20), 1.5)) / double(warm);           // half the L2: in between
    QVERIFY(partial > 1.05 && partial < 1.45);
    Op h2d;
    h2d.kind = OpKind::Memcpy;
    h2d.name = "h2d";
    h2d.stream = "s";
    h2d.copy = CopyKind::H2D;
    h2d.bytes = 128 << 20;
    h2d.pinned = true;
    QCOMPARE(after(h2d, 1.5), warm);               // copies do not evict
    QCOMPARE(after(memset(128 << 20), 1.0), warm); // no rule without the factor

    // A kernel larger than the L2 runs its modelled time whatever ran before it.
    const auto bigAfter = [&](int64_t bytes) {
        const auto t =
            simulateWith(Builder().stream("s").thread("main", 0, 2).op(big).op(memset(bytes)).build(), profile(1.5));
        return t.duration(uint32_t(span(t, "big", 1)));
    };
    QCOMPARE(bigAfter(128 << 20), bigAfter(4096));
}

QTEST_GUILESS_MAIN(TestSimulator)
