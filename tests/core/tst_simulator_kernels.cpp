// Kernels side by side (DESIGN §3 rule 4, simulator_rates.cpp): compute-bound kernels share the SMs' pipelines with
// the kernels working beside them, memory-bound kernels share the device memory's bandwidth (with memsets and
// device-to-device copies), and a streaming kernel of few blocks moves more than its blocks' share of it. The
// figures come from tests/data/h200/experiments/kernel-interference/.
#include "tst_simulator.h"

namespace {

Op kernelOp(KernelKind kind, const std::string& name, const std::string& stream, int64_t size, uint32_t grid,
            Dim3 block)
{
    Op o;
    o.kind = OpKind::Kernel;
    o.kernel = kind;
    o.name = name;
    o.stream = stream;
    o.size = size;
    o.grid = {grid, 1, 1};
    o.gridGiven = true;
    o.block = block;
    return o;
}

// Lessons 01 and 02's shapes: 264 blocks of 256 threads, a quarter of the 1056 an H200 holds.
Op matmul(const std::string& name, const std::string& stream)
{
    return kernelOp(KernelKind::Matmul, name, stream, 768, 264, {16, 16, 1});
}
Op transpose(const std::string& name, const std::string& stream)
{
    return kernelOp(KernelKind::Transpose, name, stream, 4096, 264, {32, 8, 1});
}
Op triad(const std::string& name, const std::string& stream, uint32_t grid, int64_t size = int64_t(1) << 24)
{
    return kernelOp(KernelKind::Triad, name, stream, size, grid, {256, 1, 1});
}

// The duration of each named kernel, run with the h200 profile less its L2 rule, `change` applied.
template <typename F>
std::vector<int64_t> durations(const Scenario& s, const std::vector<std::string>& names, F&& change)
{
    const auto t = simulateWith(s, [&](DeviceProfile& p) {
        p.l2ColdFactor = 1.0;
        change(p);
    });
    std::vector<int64_t> out;
    for (const auto& n : names) {
        const int i = span(t, n);
        out.push_back(i >= 0 ? t.duration(uint32_t(i)) : -1);
    }
    return out;
}

} // namespace

// Two 264-block matmuls side by side each take longer than one alone (on an H200 241-245 µs against 198 µs); one
// beside a transpose slows too; beside a spin of as many blocks it does not. Without a saturation (1: a kernel runs
// in proportion to its blocks) nothing is shared.
void TestSimulator::computeKernelsShareTheSms()
{
    const auto keep = [](DeviceProfile& p) { p.computeSaturation = 0.45; };
    const int64_t alone =
        durations(Builder().stream("a").thread("main").op(matmul("mm", "a")).build(), {"mm"}, keep)[0];
    const Scenario two =
        Builder().stream("a").stream("b").thread("main").op(matmul("mm", "a")).op(matmul("mm2", "b")).build();
    const auto pair = durations(two, {"mm", "mm2"}, keep);
    QVERIFY2(pair[0] > alone * 105 / 100 && pair[1] > alone * 105 / 100,
             qPrintable(QStringLiteral("alone %1, side by side %2 and %3").arg(alone).arg(pair[0]).arg(pair[1])));
    // Both hold a quarter of the device: half of it working, above the saturation of 0.45, so each gets 1 / 0.5 of
    // its share of the rate where alone it got 1 / 0.45.
    QVERIFY2(std::abs(double(pair[0]) / double(alone) - 0.5 / 0.45) < 0.01, qPrintable(QString::number(pair[0])));
    const auto linear = [](DeviceProfile& p) { p.computeSaturation = 1.0; };
    const auto pairLinear = durations(two, {"mm", "mm2"}, linear);
    QCOMPARE(pairLinear[0],
             durations(Builder().stream("a").thread("main").op(matmul("mm", "a")).build(), {"mm"}, linear)[0]);

    const auto besideTranspose = durations(
        Builder().stream("a").stream("b").thread("main").op(matmul("mm", "a")).op(transpose("tr", "b")).build(), {"mm"},
        keep);
    QVERIFY(besideTranspose[0] > alone * 105 / 100);
    const auto besideSpin = durations(
        Builder().stream("a").stream("b").thread("main").op(matmul("mm", "a")).spin("sp", "b", 300, 264).build(),
        {"mm"}, keep);
    QCOMPARE(besideSpin[0], alone);
}

// A triad of 264 blocks (a quarter of what the device holds) moves more than a quarter of the bandwidth: on an H200
// 192 MiB in 129 µs, where its share gives 262 µs. With memory_saturation 0.5 it takes half its share's time; a
// transpose (tiled) keeps its share; a profile without the field (1) simulates as before.
void TestSimulator::fewBlocksStreamFasterThanTheirShare()
{
    const Scenario s = Builder().stream("a").thread("main").op(triad("tri", "a", 264)).build();
    const auto at = [&](double saturation) {
        return durations(s, {"tri"}, [&](DeviceProfile& p) { p.memorySaturation = saturation; })[0];
    };
    const int64_t share = at(1.0);
    const int64_t fast = at(0.5);
    QVERIFY2(std::abs(double(fast) / double(share) - 0.5) < 0.01,
             qPrintable(QStringLiteral("share %1, saturating %2").arg(share).arg(fast)));
    // Below its blocks' fraction the saturation changes nothing: the kernel cannot outrun the full rate.
    QCOMPARE(at(0.1), durations(s, {"tri"}, [](DeviceProfile& p) { p.memorySaturation = 0.25; })[0]);
    const Scenario tr = Builder().stream("a").thread("main").op(transpose("tr", "a")).build();
    QCOMPARE(durations(tr, {"tr"}, [](DeviceProfile& p) { p.memorySaturation = 0.5; })[0],
             durations(tr, {"tr"}, [](DeviceProfile& p) { p.memorySaturation = 1.0; })[0]);
    // A full grid is at the device's bandwidth whatever the saturation.
    const Scenario full = Builder().stream("a").thread("main").op(triad("tri", "a", 1056)).build();
    QCOMPARE(durations(full, {"tri"}, [](DeviceProfile& p) { p.memorySaturation = 0.5; })[0],
             durations(full, {"tri"}, [](DeviceProfile& p) { p.memorySaturation = 1.0; })[0]);
}

// Memory-bound kernels share the device memory's bandwidth: two triads of 528 blocks, each at the full bandwidth
// alone (memory_saturation 0.5), take twice as long side by side; two that each use a quarter of it (saturation 1)
// do not slow each other. A memset beside a full-grid triad shares with it too.
void TestSimulator::memoryKernelsShareBandwidth()
{
    const auto sat = [](double v) { return [v](DeviceProfile& p) { p.memorySaturation = v; }; };
    const int64_t alone =
        durations(Builder().stream("a").thread("main").op(triad("t1", "a", 528)).build(), {"t1"}, sat(0.5))[0];
    const Scenario two =
        Builder().stream("a").stream("b").thread("main").op(triad("t1", "a", 528)).op(triad("t2", "b", 528)).build();
    const auto pair = durations(two, {"t1", "t2"}, sat(0.5));
    QVERIFY2(pair[0] > alone * 19 / 10 && pair[1] > alone * 19 / 10,
             qPrintable(QStringLiteral("alone %1, side by side %2 and %3").arg(alone).arg(pair[0]).arg(pair[1])));
    const int64_t quarter =
        durations(Builder().stream("a").thread("main").op(triad("t1", "a", 264)).build(), {"t1"}, sat(1.0))[0];
    const Scenario quarters =
        Builder().stream("a").stream("b").thread("main").op(triad("t1", "a", 264)).op(triad("t2", "b", 264)).build();
    QCOMPARE(durations(quarters, {"t1"}, sat(1.0))[0], quarter);

    Op memset;
    memset.kind = OpKind::Memset;
    memset.name = "ms";
    memset.stream = "b";
    memset.bytes = int64_t(256) << 20;
    const int64_t triadAlone =
        durations(Builder().stream("a").thread("main").op(triad("t1", "a", 1056)).build(), {"t1"}, sat(1.0))[0];
    const int64_t memsetAlone = durations(Builder().stream("b").thread("main").op(memset).build(), {"ms"}, sat(1.0))[0];
    const auto both =
        durations(Builder().stream("a").stream("b").thread("main").op(triad("t1", "a", 1056)).op(memset).build(),
                  {"t1", "ms"}, sat(1.0));
    QVERIFY2(both[0] > triadAlone * 11 / 10 && both[1] > memsetAlone * 11 / 10,
             qPrintable(QStringLiteral("triad %1 -> %2, memset %3 -> %4")
                            .arg(triadAlone)
                            .arg(both[0])
                            .arg(memsetAlone)
                            .arg(both[1])));
}

// A long run dispatches far more (SM, blocks) items than are ever running at once: the slots of finished batches
// are reused and their items dropped. Two streams of 400 matmuls each, side by side in lockstep: every pair in the
// middle runs as every other (the SMs' accounting stays exact), and the run is the same every time.
void TestSimulator::batchSlotsAreReused()
{
    Builder b;
    b.stream("a").stream("b").thread("main", 0, 400);
    b.op(matmul("mm", "a")).op(matmul("mm2", "b"));
    const Scenario s = b.build();
    const Trace t = simulate(s);
    const Trace again = simulate(s);
    QCOMPARE(t.spans.start, again.spans.start);
    QCOMPARE(t.spans.end, again.spans.end);
    std::vector<std::pair<int64_t, int64_t>> mmSpans, trSpans; // (start, duration)
    for (uint32_t i = 0; i < t.spanCount(); ++i)
        if (t.spans.kind[i] == SpanKind::Kernel)
            (t.spanName(i) == "mm" ? mmSpans : trSpans).emplace_back(t.spans.start[i], t.duration(i));
    std::sort(mmSpans.begin(), mmSpans.end());
    std::sort(trSpans.begin(), trSpans.end());
    std::vector<int64_t> mm, tr;
    for (const auto& [start, d] : mmSpans)
        mm.push_back(d);
    for (const auto& [start, d] : trSpans)
        tr.push_back(d);
    QCOMPARE(int(mm.size()), 400);
    QCOMPARE(int(tr.size()), 400);
    for (size_t i = 2; i + 2 < mm.size(); ++i) {
        QVERIFY2(std::abs(mm[i] - mm[2]) <= mm[2] / 1000,
                 qPrintable(QStringLiteral("matmul %1: %2 ns, the third %3 ns").arg(i).arg(mm[i]).arg(mm[2])));
        QVERIFY2(std::abs(tr[i] - tr[2]) <= tr[2] / 1000,
                 qPrintable(QStringLiteral("second stream %1: %2 ns, the third %3 ns").arg(i).arg(tr[i]).arg(tr[2])));
    }
}
