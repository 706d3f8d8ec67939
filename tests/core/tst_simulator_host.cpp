// The simulator's rules of the host side (DESIGN §3 rules 7-10): host functions, the cost of launches and graph
// launches, implicit and explicit syncs, worker pools, iterations, determinism and what it refuses.
#include "tst_simulator.h"

#include "simulator_state.h"

#include <stdexcept>

void TestSimulator::hostFunctionsSerialize()
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

// A launch into another stream than the thread's previous launch costs launch_api_round_robin_ns, one into the
// same stream launch_api_ns: measured apart on the H200 (calibrate).
void TestSimulator::roundRobinLaunchCost()
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
void TestSimulator::launchesFromSeveralThreadsContend()
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
    const auto plain = calls(simulateWith(
        build(4), [](DeviceProfile& p) { p.launchApiNs = p.launchApiRoundRobinNs = p.launchApiConcurrentNs = 4000; }));
    QCOMPARE(plain.back(), int64_t(4000));
}

// cudaGraphLaunch costs graph_launch_api_ns plus graph_launch_api_per_node_ns per node; a memset runs at
// memset_gbps, and its call costs memset_api_ns where a copy's costs copy_api_ns.
void TestSimulator::graphLaunchPerNodeAndMemsetBandwidth()
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
    const auto t = simulateWith(
        Builder().stream("s").thread("main").op(graph).op(memset).copy("copy", "s", CopyKind::D2D, 4096).build(),
        [](DeviceProfile& p) {
            p.graphLaunchApiNs = 1000;
            p.graphLaunchApiPerNodeNs = 10;
            p.memsetBps = 1e12;
            p.memsetApiNs = 1250; // cudaMemsetAsync costs the host less than cudaMemcpyAsync (H200: 1.25 / 2.06 us)
            p.copyApiNs = 2060;
        });
    QCOMPARE(t.duration(uint32_t(hostSpan(t, "cudaGraphLaunch"))), int64_t(2000));
    QCOMPARE(t.duration(uint32_t(span(t, "set"))), int64_t(1073742)); // 2^30 B at 10^12 B/s
    QCOMPARE(t.duration(uint32_t(hostSpan(t, "cudaMemsetAsync"))), int64_t(1250));
    QCOMPARE(t.duration(uint32_t(hostSpan(t, "cudaMemcpyAsync"))), int64_t(2060));
}

// The host-function thread: asleep, it wakes host_func_latency_ns after the stream reaches a host function;
// awake, it starts the next host_func_spacing_ns after the previous one ended, in any stream.
void TestSimulator::hostFunctionWakeUpAndSpacing()
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
                                    p.hostFuncWakeCurve.clear(); // the rule without a measured curve
                                    p.kernelOverheadNs = 1000;
                                    p.hostFuncLatencyNs = 50'000;
                                    p.hostFuncSpacingNs = 3000;
                                    p.hostFuncDozeNs = 0; // no dozing (hostFunctionThreadDozes)
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

// Idle longer than host_func_doze_ns (or not yet run in this iteration), the driver's thread wakes up
// host_func_deep_latency_ns after its stream reaches a host function; idle less, host_func_latency_ns.
void TestSimulator::hostFunctionThreadDozes()
{
    const auto t = simulateWith(Builder()
                                    .stream("s1")
                                    .thread("main")
                                    .spin("k1", "s1", 100)
                                    .simple(OpKind::HostFunc, "s1", {}, 10, "f1")
                                    .spin("k2", "s1", 60) // f1 ends, k2 runs 60 µs: idle less than the doze
                                    .simple(OpKind::HostFunc, "s1", {}, 10, "f2")
                                    .spin("k3", "s1", 300) // idle longer than the doze
                                    .simple(OpKind::HostFunc, "s1", {}, 10, "f3")
                                    .iterations(1, 1) // each iteration starts with the thread asleep
                                    .build(),
                                [](DeviceProfile& p) {
                                    p.hostFuncWakeCurve.clear(); // the rule without a measured curve
                                    p.kernelOverheadNs = 1000;
                                    p.hostFuncLatencyNs = 30'000;
                                    p.hostFuncSpacingNs = 3000;
                                    p.hostFuncDozeNs = 200'000;
                                    p.hostFuncDeepLatencyNs = 130'000;
                                });
    const int k1 = span(t, "k1"), f1 = span(t, "f1"), k2 = span(t, "k2"), f2 = span(t, "f2"), k3 = span(t, "k3"),
              f3 = span(t, "f3");
    QVERIFY(k1 >= 0 && f1 >= 0 && k2 >= 0 && f2 >= 0 && k3 >= 0 && f3 >= 0);
    QCOMPARE(startOf(t, f1) - endOf(t, k1), int64_t(1000 + 130'000)); // the iteration's first: asleep
    QCOMPARE(startOf(t, f2) - endOf(t, k2), int64_t(1000 + 30'000));  // idle about 90 µs
    QCOMPARE(startOf(t, f3) - endOf(t, k3), int64_t(1000 + 130'000)); // idle about 330 µs
}

// With a measured wake-up curve the thread's wake-up is the curve at its idle time (from the previous host function's
// end until the stream reaches the next), linear between the points and clamped past them; the iteration's first
// host function takes the curve's longest idle. host_func_latency_ns and the doze rule are not used.
namespace {
// One stream, one iteration: kernels of 100, 50 and 200 µs, each followed by a 10 µs host function.
Scenario hostFunctionRounds()
{
    return Builder()
        .stream("s1")
        .thread("main")
        .spin("k1", "s1", 100)
        .simple(OpKind::HostFunc, "s1", {}, 10, "f1")
        .spin("k2", "s1", 50)
        .simple(OpKind::HostFunc, "s1", {}, 10, "f2")
        .spin("k3", "s1", 200)
        .simple(OpKind::HostFunc, "s1", {}, 10, "f3")
        .iterations(1, 1)
        .build();
}
} // namespace

void TestSimulator::hostFunctionWakeFollowsCurve()
{
    const std::vector<std::pair<int64_t, int64_t>> curve = {{10'000, 20'000}, {100'000, 40'000}, {400'000, 100'000}};
    QCOMPARE(interpolateCurve(curve, 0), int64_t(20'000));
    QCOMPARE(interpolateCurve(curve, 55'000), int64_t(30'000));
    QCOMPARE(interpolateCurve(curve, 250'000), int64_t(70'000));
    QCOMPARE(interpolateCurve(curve, 5'000'000), int64_t(100'000));
    QCOMPARE(interpolateCurve({}, 5), int64_t(0));
    const auto t = simulateWith(hostFunctionRounds(), [&](DeviceProfile& p) {
        p.kernelOverheadNs = 1000;
        p.hostFuncLatencyNs = 30'000;
        p.hostFuncSpacingNs = 3000;
        p.hostFuncDozeNs = 200'000;
        p.hostFuncDeepLatencyNs = 130'000;
        p.hostFuncWakeCurve = curve;
        p.hostFuncFirstWakeNs = 0; // the curve's longest idle
    });
    const int k1 = span(t, "k1"), f1 = span(t, "f1"), k2 = span(t, "k2"), f2 = span(t, "f2"), k3 = span(t, "k3"),
              f3 = span(t, "f3");
    QVERIFY(k1 >= 0 && f1 >= 0 && k2 >= 0 && f2 >= 0 && k3 >= 0 && f3 >= 0);
    QCOMPARE(startOf(t, f1) - endOf(t, k1), int64_t(1000 + 100'000)); // the iteration's first: the longest idle
    // Ready 1 µs after its kernel; idle since the host function before it ended.
    const int64_t idle2 = endOf(t, k2) + 1000 - endOf(t, f1);
    const int64_t idle3 = endOf(t, k3) + 1000 - endOf(t, f2);
    QVERIFY(idle2 > 50'000 && idle2 < 100'000);
    QVERIFY(idle3 > 200'000 && idle3 < 400'000);
    QCOMPARE(startOf(t, f2) - endOf(t, k2), 1000 + interpolateCurve(curve, idle2));
    QCOMPARE(startOf(t, f3) - endOf(t, k3), 1000 + interpolateCurve(curve, idle3));
    // Between the points: shorter idle, earlier wake-up.
    QVERIFY(startOf(t, f2) - endOf(t, k2) < startOf(t, f3) - endOf(t, k3));
}

// An iteration's first host function, where the profile has host_func_first_wake_ns, wakes that long after its
// kernel (the curve only for the later ones).
void TestSimulator::hostFunctionFirstWakeOfIteration()
{
    const auto t = simulateWith(hostFunctionRounds(), [](DeviceProfile& p) {
        p.kernelOverheadNs = 1000;
        p.hostFuncWakeCurve = {{10'000, 20'000}, {100'000, 40'000}};
        p.hostFuncFirstWakeNs = 70'000;
    });
    const int k1 = span(t, "k1"), f1 = span(t, "f1"), k2 = span(t, "k2"), f2 = span(t, "f2");
    QVERIFY(k1 >= 0 && f1 >= 0 && k2 >= 0 && f2 >= 0);
    QCOMPARE(startOf(t, f1) - endOf(t, k1), int64_t(1000 + 70'000));
    const int64_t idle2 = endOf(t, k2) + 1000 - endOf(t, f1);
    QCOMPARE(startOf(t, f2) - endOf(t, k2), 1000 + interpolateCurve({{10'000, 20'000}, {100'000, 40'000}}, idle2));
}

// After a host function its stream waits host_func_release_ns for the driver thread to release it (on the H200
// 3-7 µs, where kernel_overhead_ns is 0.7 µs): the next kernel starts that long after the host function's end. A
// host function right after another is the thread's own business and keeps host_func_spacing_ns.
void TestSimulator::hostFunctionReleasesItsStream()
{
    auto run = [](int64_t release) {
        return simulateWith(Builder()
                                .stream("s1")
                                .thread("main")
                                .spin("k1", "s1", 20)
                                .simple(OpKind::HostFunc, "s1", {}, 10, "f1")
                                .simple(OpKind::HostFunc, "s1", {}, 10, "f2")
                                .spin("k2", "s1", 20)
                                .build(),
                            [release](DeviceProfile& p) {
                                p.kernelOverheadNs = 700;
                                p.hostFuncSpacingNs = 1200;
                                p.hostFuncReleaseNs = release;
                            });
    };
    for (const int64_t release : {int64_t(0), int64_t(4'500)}) {
        const auto t = run(release);
        const int f1 = span(t, "f1"), f2 = span(t, "f2"), k2 = span(t, "k2");
        QVERIFY(f1 >= 0 && f2 >= 0 && k2 >= 0);
        QCOMPARE(startOf(t, f2) - endOf(t, f1), int64_t(1200));
        QCOMPARE(startOf(t, k2) - endOf(t, f2), release > 0 ? release : int64_t(700)); // 0: kernel_overhead_ns
    }
}

// cudaFree waits for the device; cudaMalloc does not (on the H200 it returned while a kernel ran in 30 of 30 tries
// at every size from 4 KiB to 256 MiB, cudaFree never did: docs/ACCURACY.md).
void TestSimulator::freeSynchronizesImplicitly()
{
    const auto t = simulate(Builder()
                                .stream("s1")
                                .stream("s2")
                                .thread("main")
                                .spin("a", "s1", 200)
                                .simple(OpKind::Free)
                                .spin("b", "s2", 50)
                                .build());
    QVERIFY(startOf(t, span(t, "b")) >= endOf(t, span(t, "a")));
    // Without the free the two kernels overlap.
    const auto t2 =
        simulate(Builder().stream("s1").stream("s2").thread("main").spin("a", "s1", 200).spin("b", "s2", 50).build());
    QVERIFY(overlaps(t2, span(t2, "a"), span(t2, "b")));
}

void TestSimulator::mallocDoesNotWait()
{
    const auto t = simulateWith(Builder()
                                    .stream("s1")
                                    .stream("s2")
                                    .thread("main")
                                    .spin("a", "s1", 200)
                                    .simple(OpKind::Malloc)
                                    .spin("b", "s2", 50)
                                    .build(),
                                [](DeviceProfile& p) { p.mallocApiNs = 3000; });
    const int malloc = hostSpan(t, "cudaMalloc");
    QVERIFY(malloc >= 0);
    QCOMPARE(t.duration(uint32_t(malloc)), int64_t(3000));
    QVERIFY(endOf(t, malloc) < endOf(t, span(t, "a")));
    QVERIFY(overlaps(t, span(t, "a"), span(t, "b")));
}

void TestSimulator::syncBlocksHost()
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

void TestSimulator::graphLaunchCost()
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

// An empty kernel lasts min_kernel_ns in a stream and graph_min_kernel_ns as a graph's node (the graph executor
// starts the next node while the last one retires: on an H200 empty nodes ran 520 ns apart, an empty kernel lasted
// 640 ns); a spin kernel adds its spin and spin_overhead_ns. Profiles without the figures keep min_kernel_ns.
void TestSimulator::graphNodesAndSpinCost()
{
    Op empty;
    empty.kind = OpKind::Kernel;
    empty.kernel = KernelKind::Empty;
    empty.name = "e";
    empty.grid = {1, 1, 1};
    empty.gridGiven = true;
    empty.block = {32, 1, 1};
    Op graph;
    graph.kind = OpKind::Graph;
    graph.stream = "s";
    for (int i = 0; i < 10; ++i)
        graph.ops.push_back(empty);
    graph.ops.push_back(Builder::spinOp("spin", {}, 1, 1, 32));
    Op streamEmpty = empty;
    streamEmpty.name = "stream e";
    streamEmpty.stream = "s";
    Op streamSpin = Builder::spinOp("stream spin", "s", 1, 1, 32);
    const Scenario s = Builder().stream("s").thread("main").op(graph).op(streamEmpty).op(streamSpin).build();
    const auto t = simulateWith(s, [](DeviceProfile& p) {
        p.minKernelNs = 640;
        p.graphMinKernelNs = 520;
        p.graphNodeOverheadNs = 0;
        p.spinOverheadNs = 116;
    });
    for (int i = 0; i < 10; ++i)
        QCOMPARE(t.duration(uint32_t(span(t, "e", i))), int64_t(520));
    QCOMPARE(startOf(t, span(t, "e", 9)) - startOf(t, span(t, "e", 0)), int64_t(9 * 520));
    QCOMPARE(t.duration(uint32_t(span(t, "spin"))), int64_t(1000 + 116 + 520));
    QCOMPARE(t.duration(uint32_t(span(t, "stream e"))), int64_t(640));
    QCOMPARE(t.duration(uint32_t(span(t, "stream spin"))), int64_t(1000 + 116 + 640));
    // Without the figures: every empty kernel min_kernel_ns, a spin its spin plus that.
    const auto plain = simulateWith(s, [](DeviceProfile& p) {
        p.minKernelNs = 640;
        p.graphMinKernelNs = 640;
        p.graphNodeOverheadNs = 0;
        p.spinOverheadNs = 0;
    });
    QCOMPARE(plain.duration(uint32_t(span(plain, "e", 3))), int64_t(640));
    QCOMPARE(plain.duration(uint32_t(span(plain, "spin"))), int64_t(1640));
}

void TestSimulator::workerPoolSharesTasks()
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

void TestSimulator::iterationsAndWarmup()
{
    const auto t = simulate(Builder().iterations(2, 3).stream("s").thread("main").spin("k", "s", 10).build());
    int kernels = 0, maxIter = -1;
    for (uint32_t i = 0; i < t.spanCount(); ++i)
        if (t.spans.kind[i] == SpanKind::Kernel) {
            ++kernels;
            maxIter = std::max(maxIter, t.spans.iterationOf(i));
        }
    QCOMPARE(kernels, 3);
    QCOMPARE(maxIter, 2);
    QCOMPARE(t.timeRange().first, int64_t(0));
}

void TestSimulator::deterministic()
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

void TestSimulator::kernelTooLargeForSmIsAnError()
{
    auto s = Builder().stream("s").thread("main").spin("k", "s", 10, 1, 1024).build();
    s.threads[0].ops[0].sharedBytes = 1 << 30;
    SimulatorBackend sim;
    const auto out = runScenario(s, sim);
    QVERIFY(!out.status.ok());
    QVERIFY(out.status.error().message.find("does not fit") != std::string::npos);
}

// The op table: an op that ended and was signalled gives its slot to the next op made, and what later work asks of
// it (state, end, kind, record, releaser) stays known; asking for the rest of its state is an error, not a read of
// the op now in its slot.
void TestSimulator::endedOpsGiveTheirSlotsBack()
{
    using namespace sim_detail;
    OpTable ops;
    GpuOp a;
    a.type = GpuOpType::Kernel;
    a.state = OpState::Done;
    a.end = 1234;
    a.rec = {2, 7};
    a.hasRecord = true;
    a.graphNode = true;
    a.releasedBy = 5;
    GpuOp b;
    b.type = GpuOpType::Copy;
    const uint32_t ia = ops.add(a), ib = ops.add(b);
    QCOMPARE(ia, 0u);
    QCOMPARE(ib, 1u);
    QVERIFY(ops.live(ia));
    QCOMPARE(&ops[ia] + 1, &ops[ib]); // two slots
    ops.release(ia);
    QVERIFY(!ops.live(ia));
    QCOMPARE(ops.state(ia), OpState::Done);
    QCOMPARE(ops.end(ia), int64_t(1234));
    QCOMPARE(ops.type(ia), GpuOpType::Kernel);
    QVERIFY(ops.graphNode(ia));
    QVERIFY(ops.hasRecord(ia));
    QVERIFY(ops.rec(ia) == (RecordRef{2, 7}));
    QCOMPARE(ops.releasedBy(ia), 5u);
    QVERIFY_THROWS_EXCEPTION(std::logic_error, ops[ia]);
    GpuOp c;
    c.type = GpuOpType::Marker;
    c.end = 99;
    const uint32_t ic = ops.add(c);
    QCOMPARE(ic, 2u);
    QCOMPARE(&ops[ic], &ops[ib] - 1); // a's slot
    QCOMPARE(ops.end(ia), int64_t(1234));
    QCOMPARE(ops.type(ia), GpuOpType::Kernel);
    QCOMPARE(ops.end(ic), int64_t(99));
    QCOMPARE(ops.state(ib), OpState::Pending);
}

// Ops long ended (their slots given to later ops) still answer the work issued after them: a kernel issued after
// a stream sync starts kernel_overhead_ns after the previous kernel's end, and syncs on an event recorded long ago
// and on a stream idle since return at once.
void TestSimulator::laterWorkAsksAboutReleasedOps()
{
    Builder b;
    b.stream("s1").stream("s2").thread("main");
    b.spin("a", "s1", 10).simple(OpKind::Record, "s1", "e").simple(OpKind::StreamSync, "s1");
    b.spin("b", "s1", 10); // issued once "a" is released: its start needs a's end
    for (int i = 0; i < 20; ++i)
        b.spin("k", "s2", 5);
    b.simple(OpKind::StreamSync, "s2");
    b.simple(OpKind::Wait, "s2", "e").spin("c", "s2", 5);
    b.simple(OpKind::EventSync, {}, "e").simple(OpKind::StreamSync, "s1").simple(OpKind::StreamSync, "s2");
    auto p = findDeviceProfile("h200");
    QVERIFY(bool(p));
    DeviceProfile profile = *p;
    profile.kernelOverheadNs = 50'000; // longer than the sync's wake-up and the next launch
    SimulatorOptions opt;
    opt.profile = profile;
    SimulatorBackend sim(opt);
    const auto out = runScenario(b.build(), sim);
    QVERIFY2(out.status.ok(), out.status.ok() ? "" : out.status.error().toString().c_str());
    const Trace& t = out.trace;
    const int a = span(t, "a"), sb = span(t, "b"), c = span(t, "c"), lastK = span(t, "k", 19);
    QVERIFY(a >= 0 && sb >= 0 && c >= 0 && lastK >= 0);
    QCOMPARE(startOf(t, sb), endOf(t, a) + 50'000);
    QVERIFY(startOf(t, c) >= endOf(t, lastK));
    // The event sync and the sync of s1 after it found their work done: each took the call's cost alone.
    std::vector<int64_t> syncs;
    for (uint32_t i = 0; i < t.spanCount(); ++i)
        if (t.spans.kind[i] == SpanKind::Sync)
            syncs.push_back(t.duration(i));
    QCOMPARE(syncs.size(), size_t(5));
    QCOMPARE(syncs[2], profile.syncApiNs);
    QCOMPARE(syncs[3], profile.syncApiNs);
}
