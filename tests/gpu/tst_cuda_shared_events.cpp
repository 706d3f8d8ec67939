// Shared boundary events (CudaBackendOptions::shareBoundaryEvents): an op issued to a busy stream starts at the
// previous op's end event. These tests check that the spans stay truthful: ordered, non-negative and
// non-overlapping in one stream, and with a start of their own wherever the op did not start when the previous op
// ended — after an idle gap, behind an event wait, behind the legacy default stream, behind a host function, and
// where another host thread or another per-thread default stream put work in between.
#include "gpu_test_support.h"

#include <cstdio>

using namespace streamscope;
using namespace streamscope::gputest;

namespace {

// "N of M" from the run's shared_start_events setting; {-1, -1} when missing.
std::pair<int64_t, int64_t> sharedStarts(const Trace& t)
{
    long long n = -1;
    long long m = -1;
    const std::string v = settingOf(t.info, "shared_start_events");
    if (std::sscanf(v.c_str(), "%lld of %lld", &n, &m) != 2)
        return {-1, -1};
    return {n, m};
}

std::vector<SpanRef> named(const Trace& t, std::string_view track, std::string_view name)
{
    std::vector<SpanRef> out;
    for (const auto& s : spansOn(t, track))
        if (t.spanName(s.index) == name)
            out.push_back(s);
    return out;
}

// The spans of one stream track, in start order: non-negative, not overlapping (no tolerance: a shared boundary
// is one event, so the next start equals the previous end). Returns how many boundaries were shared.
size_t checkStreamSpans(const Trace& t, std::string_view track)
{
    const auto spans = spansOn(t, track);
    size_t touching = 0;
    for (size_t i = 0; i < spans.size(); ++i) {
        EXPECT_LE(spans[i].start, spans[i].end) << track << ": " << t.spanName(spans[i].index) << " #" << i;
        if (i == 0)
            continue;
        EXPECT_GE(spans[i].start, spans[i - 1].end) << track << ": " << t.spanName(spans[i].index) << " #" << i
                                                    << " overlaps " << t.spanName(spans[i - 1].index);
        touching += spans[i].start == spans[i - 1].end;
    }
    return touching;
}

TEST(CudaSharedEvents, BusyStreamSpansAreOrderedAndDoNotOverlap)
{
    STREAMSCOPE_REQUIRE_GPU();
    std::vector<Op> ops;
    for (int i = 0; i < 10; ++i)
        ops.push_back(spin("s", 50, 1, 32, "k" + std::to_string(i)));
    Scenario s = scenario("busy-stream", {stream("s", StreamKind::NonBlocking)}, {thread("main", ops, 0, 3)});
    s.run.warmup = 1;
    s.run.iterations = 2;
    s = validated(s);
    for (bool share : {true, false}) {
        SCOPED_TRACE(share ? "shared boundary events" : "start and end event per op");
        CudaBackendOptions options;
        options.timing = TimingMode::Events;
        options.shareBoundaryEvents = share;
        const RunOutcome out = runOnGpu(s, options);
        ASSERT_TRUE(out.status.ok()) << out.status.error().toString();
        const Trace& t = out.trace;
        const auto [shared, timed] = sharedStarts(t);
        std::cout << (share ? "shared" : "separate") << ": " << shared << " of " << timed
                  << " ops started at the previous op's end event\n";
        EXPECT_EQ(timed, 3 * 3 * 10) << "warm-up and 2 iterations of 3 passes of 10 ops";
        if (share) { // the host issues a launch every few us, the kernels take 50 us: most ops find the stream busy
            EXPECT_GE(shared, timed / 2);
        } else {
            EXPECT_EQ(shared, 0);
        }

        const auto spans = spansOn(t, "s");
        ASSERT_EQ(spans.size(), size_t(2 * 3 * 10));
        for (size_t i = 0; i < spans.size(); ++i) {
            EXPECT_EQ(t.spanName(spans[i].index), "k" + std::to_string(i % 10)) << "stream order, span " << i;
            EXPECT_GE(spans[i].end - spans[i].start, 49'000) << "a 50 us kernel, span " << i;
            // A shared start is the previous op's end: the span holds the kernel and the launch gap, no more.
            EXPECT_LT(spans[i].end - spans[i].start, 100'000) << "a 50 us kernel, span " << i;
        }
        const size_t touching = checkStreamSpans(t, "s");
        // A spin kernel that started after the launch gap is drawn from its real start (end minus its duration):
        // such spans no longer touch their predecessor.
        size_t corrected = 0;
        for (const auto& sp : spans)
            corrected += t.spans.timingOf(sp.index) == SpanTiming::Corrected;
        if (share) {
            EXPECT_GT(touching + corrected, 0u) << "no two spans share a boundary event";
        }
    }
}

TEST(CudaSharedEvents, OpAfterAnIdleGapGetsItsOwnStart)
{
    STREAMSCOPE_REQUIRE_GPU();
    // The stream runs dry during the host work: "b" starts when it is launched, not when "a" ended.
    Scenario s = scenario(
        "idle-gap", {stream("s", StreamKind::NonBlocking)},
        {thread("main",
                {spin("s", 50, 1, 32, "a"), withDuration(simple(OpKind::HostWork), 3000), spin("s", 50, 1, 32, "b")}, 0,
                3)});
    s.run.warmup = 1;
    const RunOutcome out = runOnGpu(validated(s));
    ASSERT_TRUE(out.status.ok()) << out.status.error().toString();
    const Trace& t = out.trace;
    const auto a = named(t, "s", "a");
    const auto b = named(t, "s", "b");
    const auto work = spansOn(t, "main", SpanKind::HostWork);
    const auto launches = spansOn(t, "main", SpanKind::ApiCall);
    ASSERT_EQ(a.size(), 3u);
    ASSERT_EQ(b.size(), 3u);
    ASSERT_EQ(work.size(), 3u);
    const double tolerance = t.info.clockAlignmentErrorNs + 2000.0;
    for (size_t i = 0; i < b.size(); ++i) {
        EXPECT_GE(double(b[i].start) + tolerance, double(work[i].end)) << "b starts after the host work, pass " << i;
        EXPECT_GE(b[i].start - a[i].end, 2'500'000) << "the idle gap is not in b's span, pass " << i;
        EXPECT_GE(b[i].end - b[i].start, 49'000);
        EXPECT_LT(b[i].end - b[i].start, 200'000) << "b's span is its kernel, not the gap, pass " << i;
    }
    // b's launch call is the first API call after each host work span; b starts within 100 us of its end.
    // (The start is never before the call began: collect() clamps it there.)
    for (size_t i = 0; i < b.size(); ++i) {
        const auto call =
            std::find_if(launches.begin(), launches.end(), [&](const SpanRef& c) { return c.start >= work[i].end; });
        ASSERT_NE(call, launches.end());
        EXPECT_LT(double(b[i].start), double(call->end) + tolerance + 100'000.0) << "pass " << i;
    }
    checkStreamSpans(t, "s");
}

TEST(CudaSharedEvents, OpBehindAnEventWaitGetsItsOwnStart)
{
    STREAMSCOPE_REQUIRE_GPU();
    // b1 is issued while b0 still runs, but waits for the event recorded after "long" on stream a.
    Scenario s = scenario(
        "wait", {stream("a", StreamKind::NonBlocking), stream("b", StreamKind::NonBlocking)},
        {thread("main",
                {spin("a", 2000, 1, 32, "long"), simple(OpKind::Record, "a", "ev"), spin("b", 200, 1, 32, "b0"),
                 simple(OpKind::Wait, "b", "ev"), spin("b", 50, 1, 32, "b1"), simple(OpKind::DeviceSync)},
                0, 2)});
    s.run.warmup = 1;
    const RunOutcome out = runOnGpu(validated(s));
    ASSERT_TRUE(out.status.ok()) << out.status.error().toString();
    const Trace& t = out.trace;
    const auto lng = named(t, "a", "long");
    const auto b1 = named(t, "b", "b1");
    ASSERT_EQ(lng.size(), 2u);
    ASSERT_EQ(b1.size(), 2u);
    for (size_t i = 0; i < b1.size(); ++i) {
        EXPECT_GE(b1[i].start + 1000, lng[i].end) << "b1 starts when the event it waits for completes, pass " << i;
        EXPECT_LT(b1[i].end - b1[i].start, 500'000) << "b1's span is its 50 us kernel, pass " << i;
    }
    checkStreamSpans(t, "a");
    checkStreamSpans(t, "b");
}

TEST(CudaSharedEvents, BlockingStreamOpBehindTheLegacyStreamGetsItsOwnStart)
{
    STREAMSCOPE_REQUIRE_GPU();
    // s1 is issued while s0 still runs, but waits for the legacy-default-stream kernel issued before it.
    Scenario s = scenario("legacy", {stream("s", StreamKind::Blocking), stream("null", StreamKind::LegacyDefault)},
                          {thread("main",
                                  {spin("s", 200, 1, 32, "s0"), spin("null", 1000, 1, 32, "L"),
                                   spin("s", 50, 1, 32, "s1"), simple(OpKind::DeviceSync)},
                                  0, 2)});
    s.run.warmup = 1;
    const RunOutcome out = runOnGpu(validated(s));
    ASSERT_TRUE(out.status.ok()) << out.status.error().toString();
    const Trace& t = out.trace;
    const auto s0 = named(t, "s", "s0");
    const auto l = named(t, "null", "L");
    const auto s1 = named(t, "s", "s1");
    ASSERT_EQ(s0.size(), 2u);
    ASSERT_EQ(l.size(), 2u);
    ASSERT_EQ(s1.size(), 2u);
    for (size_t i = 0; i < s1.size(); ++i) {
        EXPECT_GE(l[i].start + 1000, s0[i].end) << "the legacy stream waits for s0, pass " << i;
        EXPECT_GE(s1[i].start + 1000, l[i].end) << "s1 waits for the legacy stream, pass " << i;
        EXPECT_LT(s1[i].end - s1[i].start, 500'000) << "s1's span is its 50 us kernel, pass " << i;
    }
    checkStreamSpans(t, "s");
    checkStreamSpans(t, "null");
}

TEST(CudaSharedEvents, OpBehindAHostFunctionGetsItsOwnStart)
{
    STREAMSCOPE_REQUIRE_GPU();
    // k1 is issued while k0 still runs, but starts only after the host function between them returned.
    const Op hostFunc = withDuration(simple(OpKind::HostFunc, "s"), 500);
    Scenario s = scenario(
        "host-func", {stream("s", StreamKind::NonBlocking)},
        {thread("main",
                {spin("s", 200, 1, 32, "k0"), hostFunc, spin("s", 50, 1, 32, "k1"), simple(OpKind::StreamSync, "s")}, 0,
                2)});
    s.run.warmup = 1;
    const RunOutcome out = runOnGpu(validated(s));
    ASSERT_TRUE(out.status.ok()) << out.status.error().toString();
    const Trace& t = out.trace;
    const auto hf = spansOn(t, "s", SpanKind::HostFunc);
    const auto k1 = named(t, "s", "k1");
    ASSERT_EQ(hf.size(), 2u);
    ASSERT_EQ(k1.size(), 2u);
    const double tolerance = t.info.clockAlignmentErrorNs + 2000.0;
    for (size_t i = 0; i < k1.size(); ++i) {
        EXPECT_GE(double(k1[i].start) + tolerance, double(hf[i].end))
            << "k1 starts after the host function, pass " << i;
        EXPECT_LT(k1[i].end - k1[i].start, 300'000) << "k1's span is its 50 us kernel, pass " << i;
    }
}

TEST(CudaSharedEvents, TwoHostThreadsInOneStreamDoNotOverlap)
{
    STREAMSCOPE_REQUIRE_GPU();
    Scenario s =
        scenario("two-threads", {stream("s", StreamKind::NonBlocking)},
                 {thread("t1", {spin("s", 30, 1, 32, "x")}, 0, 20), thread("t2", {spin("s", 30, 1, 32, "y")}, 0, 20)});
    s.run.warmup = 1;
    s.run.iterations = 2;
    const RunOutcome out = runOnGpu(validated(s));
    ASSERT_TRUE(out.status.ok()) << out.status.error().toString();
    const auto spans = spansOn(out.trace, "s");
    ASSERT_EQ(spans.size(), 2u * 2u * 20u);
    for (const auto& k : spans) {
        EXPECT_GE(k.end - k.start, 29'000);
        EXPECT_LT(k.end - k.start, 130'000) << "a 30 us kernel with its events around it only";
    }
    checkStreamSpans(out.trace, "s");
}

TEST(CudaSharedEvents, PerThreadDefaultStreamsOfOneThreadAreOneStream)
{
    STREAMSCOPE_REQUIRE_GPU();
    // p1 and p2 are both the host thread's cudaStreamPerThread: c runs after b, not after a.
    Scenario s =
        scenario("per-thread", {stream("p1", StreamKind::PerThreadDefault), stream("p2", StreamKind::PerThreadDefault)},
                 {thread("main",
                         {spin("p1", 200, 1, 32, "a"), spin("p2", 200, 1, 32, "b"), spin("p1", 50, 1, 32, "c"),
                          simple(OpKind::DeviceSync)},
                         0, 2)});
    s.run.warmup = 1;
    const RunOutcome out = runOnGpu(validated(s));
    ASSERT_TRUE(out.status.ok()) << out.status.error().toString();
    const Trace& t = out.trace;
    const auto b = named(t, "p2@main", "b");
    const auto c = named(t, "p1@main", "c");
    ASSERT_EQ(b.size(), 2u);
    ASSERT_EQ(c.size(), 2u);
    for (size_t i = 0; i < c.size(); ++i) {
        EXPECT_GE(c[i].start, b[i].end) << "c starts after b, pass " << i;
        EXPECT_LT(c[i].end - c[i].start, 150'000) << "c's span is its 50 us kernel, pass " << i;
    }
    checkStreamSpans(t, "p1@main");
    checkStreamSpans(t, "p2@main");
}

} // namespace
