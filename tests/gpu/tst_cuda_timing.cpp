// Timing modes on a real GPU (DESIGN.md §4): CUPTI spans of every op kind, graph nodes, the untimed iteration and
// the observer effect, the error of CUDA events against CUPTI, and the fall-back to events.
#include "gpu_test_support.h"

#include "event_timing.h"

#include <cmath>
#include <iostream>

using namespace streamscope;
using namespace streamscope::gputest;

namespace {

constexpr int64_t kMiB = 1 << 20;

CudaBackendOptions timing(TimingMode m)
{
    CudaBackendOptions o;
    o.timing = m;
    return o;
}

#define STREAMSCOPE_REQUIRE_CUPTI()                                                                                    \
    do {                                                                                                               \
        STREAMSCOPE_REQUIRE_GPU();                                                                                     \
        if (const std::string why = cuptiUnavailableReason(); !why.empty())                                            \
            GTEST_SKIP() << "CUPTI not usable: " << why;                                                               \
    } while (0)

// One op of every kind that CUPTI records, in one stream, with known spin durations.
Scenario everyKindScenario()
{
    Op hf = simple(OpKind::HostFunc, "s");
    hf.durationUs = 50;
    std::vector<Op> ops{
        spin("s", 200, 1, 32, "spin200"),
        copy("s", CopyKind::H2D, 4 * kMiB),
        copy("s", CopyKind::D2H, 4 * kMiB),
        copy("s", CopyKind::D2D, 4 * kMiB),
        withBytes(simple(OpKind::Memset, "s"), 4 * kMiB),
        hf,
        spin("s", 50, 132, 128, "spin50-wide"),
        kernel("s", KernelKind::Triad, 1 << 22, Dim3{256, 1, 1}, "triad"),
        simple(OpKind::DeviceSync),
    };
    Scenario s = scenario("every-kind", {stream("s", StreamKind::NonBlocking)}, {thread("main", ops)});
    s.run.warmup = 1;
    s.run.iterations = 2;
    return validated(s);
}

// Spin kernels of known per-block duration come out within 1 % + 2 µs, under every mode, alone in their stream.
void checkSpinDurations(const Trace& t, const std::string& mode)
{
    size_t seen = 0;
    for (uint32_t i = 0; i < t.spanCount(); ++i) {
        double us = 0;
        if (t.spanName(i) == "spin200")
            us = 200;
        else if (t.spanName(i) == "spin50-wide")
            us = 50;
        else
            continue;
        ++seen;
        const double d = double(t.duration(i)) / 1000.0;
        EXPECT_NEAR(d, us, us * 0.01 + 2.0) << mode << ": " << t.spanName(i) << " lasted " << d << " us";
    }
    EXPECT_EQ(seen, 4u) << mode; // two kernels, two measured iterations
}

TEST(CudaTiming, EveryOpKindUnderEveryMode)
{
    STREAMSCOPE_REQUIRE_CUPTI();
    for (TimingMode m : {TimingMode::Cupti, TimingMode::Events, TimingMode::Both}) {
        const std::string mode(toString(m));
        const RunOutcome out = runOnGpu(everyKindScenario(), timing(m));
        ASSERT_TRUE(out.status.ok()) << mode << ": " << out.status.error().toString();
        const Trace& t = out.trace;
        EXPECT_EQ(settingOf(t.info, "timing"), mode);
        EXPECT_EQ(t.info.source, m == TimingMode::Events ? TraceSource::CudaEvents : TraceSource::Cupti);
        for (SpanKind k :
             {SpanKind::MemcpyH2D, SpanKind::MemcpyD2H, SpanKind::MemcpyD2D, SpanKind::Memset, SpanKind::HostFunc})
            EXPECT_EQ(countSpans(t, k), 2u) << mode << ": " << toString(k);
        EXPECT_EQ(countSpans(t, SpanKind::Kernel), 6u) << mode;
        checkSpinDurations(t, mode);
        // Every GPU span lies between its launch call's start and the sync that waited for it.
        for (const auto& f : t.flows) {
            if (f.kind == FlowKind::Launch) {
                EXPECT_GE(t.spans.start[f.to] + int64_t(t.info.clockAlignmentErrorNs) + 2000, t.spans.start[f.from])
                    << mode << ": " << t.spanName(f.to) << " starts before its launch";
            }
        }
        // The untimed iteration ran and its makespan is stored beside the timed one.
        EXPECT_FALSE(settingOf(t.info, "untimed_makespan_ns").empty()) << mode;
        EXPECT_FALSE(settingOf(t.info, "timed_makespan_ns").empty()) << mode;
        if (m != TimingMode::Events) {
            EXPECT_NE(settingOf(t.info, "cupti_records").find(" 0 ops without"), std::string::npos)
                << settingOf(t.info, "cupti_records");
        }
        // `cupti`: the kernels stamp themselves and CUPTI records the copies and memsets; `both`: CUPTI records all.
        if (m == TimingMode::Cupti) {
            EXPECT_EQ(settingOf(t.info, "kernel_timing").rfind("stamps", 0), 0u) << settingOf(t.info, "kernel_timing");
            // three kernels in each of three iterations (one warm-up)
            EXPECT_NE(settingOf(t.info, "kernel_stamps").find("9 kernel launches stamped, 0 without"),
                      std::string::npos)
                << settingOf(t.info, "kernel_stamps");
        } else if (m == TimingMode::Both) {
            EXPECT_EQ(settingOf(t.info, "kernel_timing"), "CUPTI CONCURRENT_KERNEL records");
        }
    }
}

// 32 and 128 one-block kernels in non-blocking streams, default 8 connections: under `cupti` (kernels stamp
// themselves) they all start together and the run takes as long as without any timing.
TEST(CudaTiming, ManyStreamsAreNotSerializedByCupti)
{
    STREAMSCOPE_REQUIRE_CUPTI();
    for (int n : {32, 128}) {
        std::vector<StreamSpec> streams;
        std::vector<Op> ops;
        for (int i = 0; i < n; ++i) {
            streams.push_back(stream("s" + std::to_string(i), StreamKind::NonBlocking));
            ops.push_back(spin("s" + std::to_string(i), 1000, 1, 32, "k" + std::to_string(i)));
        }
        ops.push_back(simple(OpKind::DeviceSync));
        Scenario s = scenario("streams-" + std::to_string(n), streams, {thread("main", ops)});
        s.run.warmup = 1;
        // Five timed against five untimed iterations: both figures are medians, so that one slow iteration of the
        // host (launch calls vary 4-7 us between processes on the same H200 machine) does not decide the ratio.
        s.run.iterations = 5;
        const RunOutcome out = runOnGpu(validated(s), timing(TimingMode::Cupti));
        ASSERT_TRUE(out.status.ok()) << out.status.error().toString();
        const Trace& t = out.trace;
        // Kernels only: they stamp themselves, and CUPTI is not in the process at all.
        EXPECT_EQ(settingOf(t.info, "kernel_timing").rfind("stamps", 0), 0u) << settingOf(t.info, "kernel_timing");
        EXPECT_EQ(settingOf(t.info, "untimed_cupti").rfind("not used", 0), 0u) << settingOf(t.info, "untimed_cupti");
        EXPECT_NE(settingOf(t.info, "kernel_stamps").find(", 0 without stamps"), std::string::npos)
            << settingOf(t.info, "kernel_stamps");
        EXPECT_EQ(countSpans(t, SpanKind::Kernel), size_t(n * s.run.iterations));
        // No CUPTI to detach: the untimed iterations alternate with the timed ones, so that the host's launch rate,
        // which drifts over a run, weighs on both makespans alike.
        EXPECT_EQ(settingOf(t.info, "untimed_order").rfind("interleaved", 0), 0u) << settingOf(t.info, "untimed_order");
        for (int it = 0; it < s.run.iterations; ++it) {
            int64_t lo = INT64_MAX;
            int64_t hi = INT64_MIN;
            int64_t firstCall = INT64_MAX;
            int64_t lastCall = INT64_MIN;
            for (uint32_t i = 0; i < t.spanCount(); ++i) {
                if (t.spans.iterationOf(i) != it)
                    continue;
                if (t.spans.kind[i] == SpanKind::Kernel) {
                    lo = std::min(lo, t.spans.start[i]);
                    hi = std::max(hi, t.spans.start[i]);
                } else if (t.spanName(i) == "cudaLaunchKernel") {
                    firstCall = std::min(firstCall, t.spans.start[i]);
                    lastCall = std::max(lastCall, t.spans.end[i]);
                }
            }
            // Within 0.5 ms of one another, or of the host's own issue time where issuing takes longer than that
            // (128 launches into idle streams take about 1 ms on an H200 host even without timing): no kernel
            // waits for another stream's.
            const int64_t window = std::max<int64_t>(500'000, lastCall - firstCall + 50'000);
            EXPECT_LE(hi - lo, window) << n << " streams, iteration " << it << ": starts spread over "
                                       << (hi - lo) / 1000 << " us, issue took " << (lastCall - firstCall) / 1000
                                       << " us";
            if (n == 32) {
                EXPECT_LE(hi - lo, 500'000) << "32 streams, iteration " << it;
            }
        }
        std::cout << n << " streams: timed/untimed " << settingOf(t.info, "timing_perturbation") << '\n';
        const double ratio = std::stod(settingOf(t.info, "timing_perturbation"));
        EXPECT_LE(ratio, 1.05) << n << " streams: timed/untimed " << ratio;
    }
}

// Kernels and host functions only: no CUPTI in the process; the kernels stamp themselves and the host functions
// time themselves from inside, as under every other mode.
TEST(CudaTiming, HostFunctionsBesideStampedKernels)
{
    STREAMSCOPE_REQUIRE_GPU();
    Op hf = simple(OpKind::HostFunc, "s");
    hf.durationUs = 30;
    Scenario s = scenario(
        "host-funcs", {stream("s", StreamKind::NonBlocking)},
        {thread("main",
                {spin("s", 40, 1, 32, "before"), hf, spin("s", 40, 1, 32, "after"), simple(OpKind::DeviceSync)})});
    s.run.warmup = 1;
    s.run.iterations = 2;
    const RunOutcome out = runOnGpu(validated(s), timing(TimingMode::Cupti));
    ASSERT_TRUE(out.status.ok()) << out.status.error().toString();
    const Trace& t = out.trace;
    EXPECT_EQ(settingOf(t.info, "kernel_timing").rfind("stamps", 0), 0u);
    EXPECT_EQ(countSpans(t, SpanKind::Kernel), 4u);
    EXPECT_EQ(countSpans(t, SpanKind::HostFunc), 2u);
    const auto spans = spansOn(t, "s");
    ASSERT_EQ(spans.size(), 6u);
    for (size_t i = 1; i < spans.size(); ++i)
        EXPECT_GE(spans[i].start + 1000, spans[i - 1].end) << "one stream: each span after the one before";
}

TEST(CudaTiming, GraphNodesAreSpansUnderCupti)
{
    STREAMSCOPE_REQUIRE_CUPTI();
    std::vector<Op> nodes{spin("g", 20, 1, 32, "n0"), withBytes(simple(OpKind::Memset, "g"), 4096),
                          spin("g", 30, 1, 32, "n2"), copy("g", CopyKind::D2D, kMiB)};
    Scenario s = scenario("graph", {stream("g", StreamKind::NonBlocking)},
                          {thread("main", {graph("g", nodes, "chain"), simple(OpKind::DeviceSync)}, 0, 3)});
    s.run.warmup = 1;
    s.run.iterations = 1;
    const RunOutcome out = runOnGpu(validated(s), timing(TimingMode::Cupti));
    ASSERT_TRUE(out.status.ok()) << out.status.error().toString();
    const Trace& t = out.trace;
    const auto spans = spansOn(t, "g");
    ASSERT_EQ(spans.size(), 12u); // 3 launches x 4 nodes
    for (size_t i = 0; i < spans.size(); ++i) {
        const std::string_view want = i % 4 == 0 ? "n0" : i % 4 == 2 ? "n2" : "";
        if (!want.empty()) {
            EXPECT_EQ(t.spanName(spans[i].index), want);
        }
        if (i > 0) {
            EXPECT_GE(spans[i].start, spans[i - 1].end - 1000)
                << "graph nodes follow the chain: " << t.spanName(spans[i - 1].index) << " [" << spans[i - 1].start
                << ", " << spans[i - 1].end << "] then " << t.spanName(spans[i].index) << " [" << spans[i].start << ", "
                << spans[i].end << "]";
        }
    }
    EXPECT_NEAR(double(t.duration(spans[0].index)) / 1000.0, 20.0, 2.2);
    // Each launch links its first node.
    size_t linked = 0;
    for (const auto& f : t.flows)
        linked += f.kind == FlowKind::Launch && t.spanName(f.from) == "cudaGraphLaunch";
    EXPECT_EQ(linked, 3u);
}

// Timing "both": every GPU op carries its events' error, and the summary says events start early.
TEST(CudaTiming, BothSummarizesTheEventError)
{
    STREAMSCOPE_REQUIRE_CUPTI();
    std::vector<Op> ops;
    for (int i = 0; i < 8; ++i) {
        ops.push_back(copy("a", CopyKind::H2D, 16 * kMiB));
        ops.push_back(copy("b", CopyKind::H2D, 16 * kMiB)); // waits for the copy engine behind a's copy
    }
    ops.push_back(simple(OpKind::DeviceSync));
    Scenario s = scenario("both", {stream("a", StreamKind::NonBlocking), stream("b", StreamKind::NonBlocking)},
                          {thread("main", ops)});
    s.run.warmup = 1;
    const RunOutcome out = runOnGpu(validated(s), timing(TimingMode::Both));
    ASSERT_TRUE(out.status.ok()) << out.status.error().toString();
    const auto err = summarizeEventTimingError(out.trace);
    ASSERT_TRUE(err.has_value());
    EXPECT_EQ(err->spans, 16u);
    EXPECT_LE(err->startMeanNs, 0.0) << "events never start late";
    EXPECT_LT(err->endMedianNs, 20'000.0) << "event ends are close to the truth";
    std::cout << "event error: start median " << err->startMedianNs << " ns, p90 " << err->startP90Ns << " ns, mean "
              << err->startMeanNs << " ns; end median " << err->endMedianNs << " ns, p90 " << err->endP90Ns << " ns\n";
}

// Events mode corrects what the evidence allows: the same copies, drawn one after the other.
TEST(CudaTiming, EventsCorrectCopiesWaitingForTheirEngine)
{
    STREAMSCOPE_REQUIRE_GPU();
    std::vector<Op> ops;
    for (int i = 0; i < 4; ++i) {
        ops.push_back(copy("a", CopyKind::H2D, 16 * kMiB));
        ops.push_back(copy("b", CopyKind::H2D, 16 * kMiB));
    }
    ops.push_back(simple(OpKind::DeviceSync));
    Scenario s = scenario("events", {stream("a", StreamKind::NonBlocking), stream("b", StreamKind::NonBlocking)},
                          {thread("main", ops)});
    s.run.warmup = 1;
    const RunOutcome out = runOnGpu(validated(s), timing(TimingMode::Events));
    ASSERT_TRUE(out.status.ok()) << out.status.error().toString();
    const auto a = spansOn(out.trace, "a");
    const auto b = spansOn(out.trace, "b");
    EXPECT_LT(overlapFraction(a, b), 0.02) << "same-direction copies never overlap";
}

} // namespace
