// The CUDA backend through runScenario on a real GPU: every op kind, the spans and flows the trace gets, stream
// semantics that must show (overlap, stream order, the legacy default stream barrier), errors that must come back
// as values with a partial trace, and resources that must be released.
#include "gpu_test_support.h"

#include <cuda_runtime.h>

#include <chrono>
#include <map>
#include <set>

using namespace streamscope;
using namespace streamscope::gputest;

namespace {

constexpr int64_t kMiB = 1 << 20;

// Every op kind, every stream kind, a graph, events and syncs, in one thread repeated twice.
Scenario everyOpScenario()
{
    Op k1 = spin("s1", 100, 1, 32, "k1");
    Op hf = simple(OpKind::HostFunc, "s1");
    hf.durationUs = 300;
    Op before = spin("s3", 300, 1, 32, "before-legacy");
    Op legacy = spin("null", 50, 1, 32, "legacy");
    Op after = spin("s3", 50, 1, 32, "after-legacy");
    Op nodeSpin = spin("s1", 10, 1, 32, "g0");
    Op nodeFma = kernel("s1", KernelKind::Fma, 100, Dim3{64, 1, 1}, "g2");
    std::vector<Op> ops{
        k1,                                                                                       // 0
        copy("s1", CopyKind::H2D, kMiB),                                                          // 1
        simple(OpKind::Record, "s1", "ev"),                                                       // 2
        simple(OpKind::Wait, "s2", "ev"),                                                         // 3
        kernel("s2", KernelKind::Triad, 1 << 20, Dim3{256, 1, 1}, "triad"),                       // 4
        withBytes(simple(OpKind::Memset, "s2"), kMiB),                                            // 5
        copy("s2", CopyKind::D2H, kMiB, false),                                                   // 6 pageable
        copy("s3", CopyKind::D2D, kMiB),                                                          // 7
        hf,                                                                                       // 8
        simple(OpKind::StreamSync, "s1"),                                                         // 9
        simple(OpKind::EventSync, {}, "ev"),                                                      // 10
        before,                                                                                   // 11
        legacy,                                                                                   // 12
        after,                                                                                    // 13
        simple(OpKind::DeviceSync),                                                               // 14
        withDuration(simple(OpKind::HostWork), 30),                                               // 15
        graph("s1", {nodeSpin, withBytes(simple(OpKind::Memset, "s1"), 4096), nodeFma}, "graph"), // 16
        withBytes(simple(OpKind::Malloc), kMiB),                                                  // 17
        withBytes(simple(OpKind::Free), kMiB),                                                    // 18
        spin("pt", 20, 1, 32, "per-thread"),                                                      // 19
        kernel("s1", KernelKind::Matmul, 64, Dim3{16, 16, 1}, "matmul"),                          // 20
        kernel("s2", KernelKind::Transpose, 256, Dim3{32, 8, 1}, "transpose"),                    // 21
        kernel("s3", KernelKind::Reduce, 1 << 20, Dim3{256, 1, 1}, "reduce"),                     // 22
        kernel("s1", KernelKind::Empty, 0, Dim3{32, 1, 1}, "empty"),                              // 23
        kernel("s2", KernelKind::Fma, 1000, Dim3{128, 1, 1}, "fma"),                              // 24
        simple(OpKind::DeviceSync),                                                               // 25
    };
    ops[23].grid = Dim3{1, 1, 1};
    ops[23].gridGiven = true;
    ops[23].size = 0;
    Scenario s = scenario("every-op",
                          {stream("s1", StreamKind::NonBlocking, 0, -1), stream("s2", StreamKind::Blocking),
                           stream("s3", StreamKind::Blocking), stream("null", StreamKind::LegacyDefault),
                           stream("pt", StreamKind::PerThreadDefault)},
                          {thread("main", ops, 0, 2)});
    s.run.warmup = 1;
    s.run.iterations = 2;
    return s;
}

// Fails the test where a GPU span starts before the host call that enqueued it (beyond the alignment error),
// or where two spans of one stream overlap (stream order).
void checkTimeBase(const Trace& t)
{
    const double tolerance = t.info.clockAlignmentErrorNs + 2000.0;
    for (const auto& f : t.flows) {
        if (f.kind != FlowKind::Launch)
            continue;
        EXPECT_GE(double(t.spans.start[f.to]) + tolerance, double(t.spans.start[f.from]))
            << t.spanName(f.to) << " on " << trackOf(t, f.to) << " starts before its launch call "
            << t.spanName(f.from);
    }
    for (uint32_t tr = 0; tr < t.tracks.size(); ++tr) {
        if (t.tracks[tr].kind != TrackKind::Stream)
            continue;
        for (uint32_t i = t.trackBegin(tr); i + 1 < t.trackEnd(tr); ++i)
            EXPECT_GE(t.spans.start[i + 1] + 1000, t.spans.end[i])
                << "stream " << t.tracks[tr].name << ": " << t.spanName(i + 1) << " overlaps " << t.spanName(i);
    }
    for (uint32_t i = 0; i < t.spanCount(); ++i)
        EXPECT_LE(t.spans.start[i], t.spans.end[i]) << t.spanName(i);
}

std::vector<SpanRef> named(const Trace& t, std::string_view track, std::string_view name)
{
    std::vector<SpanRef> out;
    for (const auto& s : spansOn(t, track))
        if (t.spanName(s.index) == name)
            out.push_back(s);
    return out;
}

TEST(CudaBackend, ProbeDescribesTheMachine)
{
    STREAMSCOPE_REQUIRE_GPU();
    const auto& p = probe();
    EXPECT_GT(p.deviceCount, 0);
    EXPECT_EQ(p.deviceNames.size(), size_t(p.deviceCount));
    EXPECT_GT(p.driverVersion, 0);
    EXPECT_GT(p.runtimeVersion, 0);
    std::cout << "GPU 0: " << p.deviceNames[0] << ", driver " << p.driverVersion << ", runtime " << p.runtimeVersion
              << "\n";
}

TEST(CudaBackend, EveryOpKindGivesItsSpansAndFlows)
{
    STREAMSCOPE_REQUIRE_GPU();
    const Scenario s = validated(everyOpScenario());
    const RunOutcome out = runOnGpu(s);
    ASSERT_TRUE(out.status.ok()) << out.status.error().toString();
    const Trace& t = out.trace;
    const int passes = 2 * 2; // repeat x measured iterations (the warm-up is dropped)

    EXPECT_EQ(t.info.backend, "cuda");
    EXPECT_EQ(t.info.source, TraceSource::CudaEvents);
    ASSERT_EQ(t.info.devices.size(), 1u);
    EXPECT_FALSE(t.info.devices[0].name.empty());
    bool hasSmCount = false;
    for (const auto& [k, v] : t.info.devices[0].properties)
        hasSmCount = hasSmCount || (k == "sm_count" && std::stoi(v) > 0);
    EXPECT_TRUE(hasSmCount);
    EXPECT_FALSE(settingOf(t.info, "CUDA_DEVICE_MAX_CONNECTIONS").empty());
    EXPECT_GT(t.info.clockAlignmentErrorNs, 0.0);
    EXPECT_LT(t.info.clockAlignmentErrorNs, 1e6) << "origin mapping took more than 2 ms";
    std::cout << "clock alignment error: " << t.info.clockAlignmentErrorNs << " ns\n";

    // GPU spans: one per op and pass, on the right stream.
    for (auto [track, name] : {std::pair{"s1", "k1"}, std::pair{"s2", "triad"}, std::pair{"s3", "before-legacy"},
                               std::pair{"null", "legacy"}, std::pair{"pt@main", "per-thread"},
                               std::pair{"s1", "graph"}, std::pair{"s1", "matmul"}, std::pair{"s2", "transpose"},
                               std::pair{"s3", "reduce"}, std::pair{"s1", "empty"}, std::pair{"s2", "fma"}})
        EXPECT_EQ(named(t, track, name).size(), size_t(passes)) << name << " on " << track;
    for (SpanKind k :
         {SpanKind::MemcpyH2D, SpanKind::MemcpyD2H, SpanKind::MemcpyD2D, SpanKind::HostFunc, SpanKind::HostWork})
        EXPECT_EQ(countSpans(t, k), size_t(passes)) << toString(k);
    EXPECT_EQ(countSpans(t, SpanKind::Memset), size_t(passes));   // the graph's memset node is inside its span
    EXPECT_GE(countSpans(t, SpanKind::Sync), size_t(4 * passes)); // stream, event, 2x device sync
    for (const auto& w : spansOn(t, "main", SpanKind::HostWork))
        EXPECT_GE(w.end - w.start, 29'000);
    for (const auto& k : named(t, "s1", "k1"))
        EXPECT_GE(k.end - k.start, 99'000) << "a 100 us spin kernel";

    // Host API spans on the host thread.
    EXPECT_EQ(countSpansNamed(t, "cudaGraphLaunch"), size_t(passes));
    EXPECT_EQ(countSpansNamed(t, "cudaMalloc"), size_t(passes));
    EXPECT_EQ(countSpansNamed(t, "cudaFree"), size_t(passes));
    EXPECT_EQ(countSpansNamed(t, "cudaStreamWaitEvent"), size_t(passes));

    // Flows: launches, the record/wait dependency, syncs, the legacy default stream barrier, the graph launch.
    EXPECT_GE(countFlows(t, FlowKind::Launch), size_t(17 * passes)); // 16 GPU ops + the graph's first node
    EXPECT_EQ(countFlowsBetween(t, FlowKind::Event, "s1", "s2"), size_t(passes)) << "h2d copy -> triad";
    EXPECT_GE(countFlowsBetween(t, FlowKind::Sync, "s1", "main"), size_t(passes)) << "host-func -> stream-sync";
    EXPECT_GE(countFlowsBetween(t, FlowKind::Implicit, "s3", "null"), size_t(passes)) << "before-legacy -> legacy";
    EXPECT_GE(countFlowsBetween(t, FlowKind::Implicit, "null", "s3"), size_t(passes)) << "legacy -> after-legacy";
    size_t graphLaunchFlows = 0;
    for (const auto& f : t.flows)
        graphLaunchFlows +=
            f.kind == FlowKind::Launch && t.spanName(f.from) == "cudaGraphLaunch" && t.spanName(f.to) == "graph";
    EXPECT_EQ(graphLaunchFlows, size_t(passes));

    // The legacy stream waited for s3's earlier work, and s3's later work waited for it.
    const auto b = named(t, "s3", "before-legacy");
    const auto l = named(t, "null", "legacy");
    const auto a = named(t, "s3", "after-legacy");
    ASSERT_EQ(b.size(), l.size());
    ASSERT_EQ(l.size(), a.size());
    for (size_t i = 0; i < l.size(); ++i) {
        EXPECT_GE(l[i].start + 1000, b[i].end);
        EXPECT_GE(a[i].start + 1000, l[i].end);
    }
    // The triad waited for the event recorded after the h2d copy.
    const auto h2d = spansOn(t, "s1", SpanKind::MemcpyH2D);
    const auto triad = named(t, "s2", "triad");
    ASSERT_EQ(h2d.size(), triad.size());
    for (size_t i = 0; i < h2d.size(); ++i)
        EXPECT_GE(triad[i].start + 1000, h2d[i].end);
    // The host function's span is when it ran, on the host clock: about its 300 us.
    for (const auto& f : spansOn(t, "s1", SpanKind::HostFunc)) {
        EXPECT_GE(f.end - f.start, 299'000);
        EXPECT_LT(f.end - f.start, 400'000);
    }

    std::set<int> iterations;
    for (uint32_t i = 0; i < t.spanCount(); ++i)
        iterations.insert(t.spans.iterationOf(i));
    EXPECT_EQ(iterations, (std::set<int>{0, 1}));
    checkTimeBase(t);
}

TEST(CudaBackend, TwoNonBlockingStreamsOfOneBlockKernelsOverlap)
{
    STREAMSCOPE_REQUIRE_GPU();
    Scenario s = scenario("overlap", {stream("a", StreamKind::NonBlocking), stream("b", StreamKind::NonBlocking)},
                          {thread("main", {spin("a", 2000, 1, 32, "ka"), spin("b", 2000, 1, 32, "kb")}, 0, 4)});
    s.run.warmup = 1;
    const RunOutcome out = runOnGpu(validated(s));
    ASSERT_TRUE(out.status.ok()) << out.status.error().toString();
    const auto a = spansOn(out.trace, "a", SpanKind::Kernel);
    const auto b = spansOn(out.trace, "b", SpanKind::Kernel);
    ASSERT_EQ(a.size(), 4u);
    ASSERT_EQ(b.size(), 4u);
    const double overlap = overlapFraction(a, b);
    std::cout << "overlap of two non-blocking streams: " << overlap << "\n";
    EXPECT_GE(overlap, 0.8);
    const auto [first, last] = out.trace.timeRange();
    EXPECT_LT(double(last - first), 0.75 * 2 * 4 * 2000e3) << "the two streams ran one after the other";
    checkTimeBase(out.trace);
}

TEST(CudaBackend, OneStreamSerializes)
{
    STREAMSCOPE_REQUIRE_GPU();
    Scenario s = scenario("serial", {stream("a", StreamKind::NonBlocking)},
                          {thread("main", {spin("a", 500, 1, 32, "k1"), spin("a", 500, 1, 32, "k2")}, 0, 3)});
    const RunOutcome out = runOnGpu(validated(s));
    ASSERT_TRUE(out.status.ok()) << out.status.error().toString();
    const auto k = spansOn(out.trace, "a", SpanKind::Kernel);
    ASSERT_EQ(k.size(), 6u);
    EXPECT_GE(k.back().end - k.front().start, 6 * 500'000 - 10'000);
    checkTimeBase(out.trace);
}

Scenario graphScenario()
{
    std::vector<Op> nodes;
    for (int i = 0; i < 5; ++i)
        nodes.push_back(spin("g", 20, 1, 32, "n" + std::to_string(i)));
    nodes.push_back(withBytes(simple(OpKind::Memset, "g"), 4096));
    nodes.push_back(kernel("g", KernelKind::Fma, 100, Dim3{64, 1, 1}, "fma"));
    Scenario s =
        scenario("graph", {stream("g", StreamKind::NonBlocking)}, {thread("main", {graph("g", nodes, "chain")}, 0, 3)});
    s.run.warmup = 1;
    return validated(s);
}

TEST(CudaBackend, GraphLaunchIsOneSpanByDefault)
{
    STREAMSCOPE_REQUIRE_GPU();
    const RunOutcome out = runOnGpu(graphScenario());
    ASSERT_TRUE(out.status.ok()) << out.status.error().toString();
    const auto spans = spansOn(out.trace, "g");
    ASSERT_EQ(spans.size(), 3u);
    for (const auto& g : spans) {
        EXPECT_EQ(out.trace.spanName(g.index), "chain");
        EXPECT_GE(g.end - g.start, 5 * 20'000 - 2'000);
    }
    EXPECT_EQ(countFlowsBetween(out.trace, FlowKind::Launch, "main", "g"), 3u);
    EXPECT_EQ(settingOf(out.trace.info, "graph_timing"), "whole graph (one span per launch)");
    checkTimeBase(out.trace);
}

TEST(CudaBackend, GraphNodesAreTimedOneByOneOnRequest)
{
    STREAMSCOPE_REQUIRE_GPU();
    CudaBackendOptions options;
    options.timing = TimingMode::Events;
    options.graphNodeTiming = true;
    const RunOutcome out = runOnGpu(graphScenario(), options);
    ASSERT_TRUE(out.status.ok()) << out.status.error().toString();
    const auto spans = spansOn(out.trace, "g");
    ASSERT_EQ(spans.size(), 3u * 7u);
    const char* names[] = {"n0", "n1", "n2", "n3", "n4", "memset", "fma"};
    for (size_t i = 0; i < spans.size(); ++i) {
        EXPECT_EQ(out.trace.spanName(spans[i].index), names[i % 7]);
        if (i % 7 < 5) {
            EXPECT_GE(spans[i].end - spans[i].start, 19'000) << "node " << i;
        }
    }
    EXPECT_EQ(countSpans(out.trace, SpanKind::Memset), 3u);
    EXPECT_EQ(countSpansNamed(out.trace, "cudaGraphLaunch"), 3u);
    // The launch flow goes from the cudaGraphLaunch call to the first node.
    size_t toFirst = 0;
    for (const auto& f : out.trace.flows)
        toFirst += f.kind == FlowKind::Launch && out.trace.spanName(f.to) == "n0";
    EXPECT_EQ(toFirst, 3u);
    checkTimeBase(out.trace);
}

TEST(CudaBackend, HostFunctionsAreTimedWhenTheyRun)
{
    STREAMSCOPE_REQUIRE_GPU();
    std::vector<StreamSpec> streams;
    std::vector<Op> ops;
    for (int i = 0; i < 4; ++i) {
        const std::string name = "s" + std::to_string(i);
        streams.push_back(stream(name, StreamKind::NonBlocking));
        ops.push_back(withDuration(simple(OpKind::HostFunc, name), 200));
    }
    Scenario s = scenario("host-funcs", streams, {thread("main", ops, 0, 2)});
    const RunOutcome out = runOnGpu(validated(s));
    ASSERT_TRUE(out.status.ok()) << out.status.error().toString();
    std::vector<SpanRef> all;
    for (int i = 0; i < 4; ++i)
        for (const auto& f : spansOn(out.trace, "s" + std::to_string(i), SpanKind::HostFunc)) {
            EXPECT_GE(f.end - f.start, 199'000);
            EXPECT_LT(f.end - f.start, 300'000) << "the span is the callback's run, not its wait for a turn";
            all.push_back(f);
        }
    ASSERT_EQ(all.size(), 8u);
    // How many ran at once (the driver's choice; DESIGN.md §3.7 says they may serialize).
    int maxConcurrent = 0;
    for (const auto& a : all) {
        int n = 0;
        for (const auto& b : all)
            n += b.start <= a.start && a.start < b.end;
        maxConcurrent = std::max(maxConcurrent, n);
    }
    std::cout << "host functions running at once, at most: " << maxConcurrent << "\n";
    checkTimeBase(out.trace);
}

TEST(CudaBackend, TimeOpsOffRunsWithoutGpuSpans)
{
    STREAMSCOPE_REQUIRE_GPU();
    CudaBackendOptions options;
    options.timing = TimingMode::Events;
    options.timeOps = false;
    const RunOutcome out = runOnGpu(validated(everyOpScenario()), options);
    ASSERT_TRUE(out.status.ok()) << out.status.error().toString();
    EXPECT_EQ(countSpans(out.trace, SpanKind::Kernel), 0u);
    EXPECT_GT(countSpans(out.trace, SpanKind::ApiCall), 0u);
    EXPECT_EQ(settingOf(out.trace.info, "time_ops"), "off");
}

TEST(CudaBackend, HostThreadsAndWorkerPools)
{
    STREAMSCOPE_REQUIRE_GPU();
    Scenario s =
        scenario("threads",
                 {stream("a", StreamKind::NonBlocking), stream("b", StreamKind::NonBlocking),
                  stream("pt", StreamKind::PerThreadDefault)},
                 {thread("t1", {spin("a", 200, 1, 32, "ka"), simple(OpKind::StreamSync, "a")}, 0, 3),
                  thread("t2", {spin("b", 200, 1, 32, "kb"), simple(OpKind::StreamSync, "b")}, 0, 3),
                  thread("pool", {spin("pt", 100, 1, 32, "task"), simple(OpKind::StreamSync, "pt")}, 0, 9, 3)});
    s.run.iterations = 2;
    const RunOutcome out = runOnGpu(validated(s));
    ASSERT_TRUE(out.status.ok()) << out.status.error().toString();
    EXPECT_EQ(countSpansNamed(out.trace, "ka"), 6u);
    EXPECT_EQ(countSpansNamed(out.trace, "kb"), 6u);
    EXPECT_EQ(countSpansNamed(out.trace, "task"), 18u);
    size_t poolTracks = 0;
    for (const auto& tr : out.trace.tracks)
        poolTracks += tr.kind == TrackKind::HostThread && tr.name.rfind("pool#", 0) == 0;
    EXPECT_EQ(poolTracks, 3u);
    // Each worker's per-thread default stream is its own track.
    EXPECT_GE(out.trace.findStreamTrack("pt@pool#0"), 0);
    checkTimeBase(out.trace);
}

TEST(CudaBackend, PeerCopyBetweenTwoGpus)
{
    STREAMSCOPE_REQUIRE_GPU();
    if (probe().deviceCount < 2)
        GTEST_SKIP() << "needs two GPUs; this machine has " << probe().deviceCount;
    Scenario s =
        scenario("p2p", {stream("d0", StreamKind::NonBlocking, 0), stream("d1", StreamKind::NonBlocking, 1)},
                 {thread("gpu0", {spin("d0", 300, 132, 128, "k0"), copy("d0", CopyKind::P2P, 64 * kMiB, true, 1)}, 0),
                  thread("gpu1", {spin("d1", 300, 132, 128, "k1")}, 1)},
                 {0, 1});
    const RunOutcome out = runOnGpu(validated(s));
    ASSERT_TRUE(out.status.ok()) << out.status.error().toString();
    EXPECT_EQ(out.trace.info.devices.size(), 2u);
    EXPECT_EQ(countSpans(out.trace, SpanKind::MemcpyP2P), 1u);
    EXPECT_EQ(countSpansNamed(out.trace, "k1"), 1u);
    checkTimeBase(out.trace);
}

TEST(CudaBackend, InvalidDeviceIsARuntimeErrorWithATrace)
{
    STREAMSCOPE_REQUIRE_GPU();
    const int bad = probe().deviceCount; // one past the last device
    Scenario s = scenario("bad-device", {stream("s", StreamKind::NonBlocking, bad)},
                          {thread("main", {spin("s", 10)}, bad)}, {bad});
    const auto t0 = std::chrono::steady_clock::now();
    const RunOutcome out = runOnGpu(validated(s));
    const auto seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    ASSERT_FALSE(out.status.ok());
    EXPECT_EQ(out.status.errorClass(), ErrorClass::Runtime);
    EXPECT_NE(out.status.error().message.find("device " + std::to_string(bad) + " does not exist"), std::string::npos)
        << out.status.error().message;
    EXPECT_FALSE(out.trace.tracks.empty()) << "the trace keeps the run's tracks";
    EXPECT_LT(seconds, 30.0);
}

TEST(CudaBackend, FailureMidRunKeepsWhatWasTimed)
{
    STREAMSCOPE_REQUIRE_GPU();
    // cudaMalloc of 1 PiB fails in the issue path, after the kernel before it was issued and timed.
    Scenario s = scenario("oom", {stream("s", StreamKind::NonBlocking)},
                          {thread("main",
                                  {spin("s", 100, 1, 32, "before"), withBytes(simple(OpKind::Malloc), int64_t(1) << 50),
                                   spin("s", 100, 1, 32, "after")})});
    const RunOutcome out = runOnGpu(validated(s));
    ASSERT_FALSE(out.status.ok());
    EXPECT_EQ(out.status.errorClass(), ErrorClass::Runtime);
    const std::string& msg = out.status.error().message;
    EXPECT_NE(msg.find("cudaMalloc failed for thread \"main\" op 1 \"malloc\""), std::string::npos) << msg;
    EXPECT_EQ(countSpansNamed(out.trace, "before"), 1u) << "the partial trace keeps the kernel issued before";
    EXPECT_EQ(countSpansNamed(out.trace, "after"), 0u);
}

TEST(CudaBackend, AFailureStopsTheOtherThreadsWithoutWaitingForThem)
{
    STREAMSCOPE_REQUIRE_GPU();
    // Thread "slow" has 20 s of host work and a 20 s host function ahead; thread "fails" fails at once. The abort
    // must end both waits early: the run returns in seconds, not in 40.
    Op longHostFunc = withDuration(simple(OpKind::HostFunc, "a"), 20e6);
    Scenario s = scenario("abort", {stream("a", StreamKind::NonBlocking), stream("b", StreamKind::NonBlocking)},
                          {thread("slow", {longHostFunc, withDuration(simple(OpKind::HostWork), 20e6)}),
                           thread("fails",
                                  {spin("b", 200'000, 1, 32, "wait-a-bit"), simple(OpKind::StreamSync, "b"),
                                   withBytes(simple(OpKind::Malloc), int64_t(1) << 50)})});
    const auto t0 = std::chrono::steady_clock::now();
    const RunOutcome out = runOnGpu(validated(s));
    const auto seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    ASSERT_FALSE(out.status.ok());
    EXPECT_NE(out.status.error().message.find("cudaMalloc failed"), std::string::npos) << out.status.error().message;
    EXPECT_LT(seconds, 10.0);
}

TEST(CudaBackend, UnrunnableKernelShapeIsBadInput)
{
    STREAMSCOPE_REQUIRE_GPU();
    Scenario s = scenario("bad-shape", {stream("s", StreamKind::NonBlocking)},
                          {thread("main", {kernel("s", KernelKind::Matmul, 64, Dim3{256, 1, 1})})});
    const RunOutcome out = runOnGpu(validated(s));
    ASSERT_FALSE(out.status.ok());
    EXPECT_EQ(out.status.errorClass(), ErrorClass::BadInput);
    EXPECT_EQ(out.status.error().path, "/threads/0/ops/0");
    EXPECT_NE(out.status.error().message.find("matmul"), std::string::npos) << out.status.error().message;
}

TEST(CudaBackend, ResourcesAreReleasedOverManyRuns)
{
    STREAMSCOPE_REQUIRE_GPU();
    Scenario s = validated(everyOpScenario());
    // Add sizeable buffers so that a leak would show.
    s.threads[0].ops.push_back(kernel("s2", KernelKind::Triad, 8 << 20, Dim3{256, 1, 1}, "big-triad"));
    s.threads[0].ops.push_back(copy("s1", CopyKind::H2D, 32 * kMiB));
    s = validated(s);
    ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
    auto freeMemory = [] {
        size_t freeBytes = 0;
        size_t total = 0;
        EXPECT_EQ(cudaMemGetInfo(&freeBytes, &total), cudaSuccess);
        return int64_t(freeBytes);
    };
    {
        const RunOutcome first = runOnGpu(s);
        ASSERT_TRUE(first.status.ok()) << first.status.error().toString();
    }
    const int64_t before = freeMemory();
    auto backend = makeCudaBackend();
    for (int i = 0; i < 20; ++i) {
        // Alternate a fresh backend and a reused one: both must release everything in finish().
        const RunOutcome out = (i % 2) ? runScenario(s, *backend) : runOnGpu(s);
        ASSERT_TRUE(out.status.ok()) << "run " << i << ": " << out.status.error().toString();
    }
    const int64_t after = freeMemory();
    EXPECT_GE(after, before - 16 * kMiB) << "device memory leaked: " << (before - after) / kMiB << " MiB";
}

} // namespace
