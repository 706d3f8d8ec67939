// CUPTI failures never stop a run that events can time: with another CUPTI subscriber in the process (what a profiler
// such as Nsight Systems is), a GPU run that needs CUPTI (copies, memsets, graphs) falls back to CUDA events and
// says why; one of kernels alone times them with their stamps. A process of its own: CUPTI
// allows one subscriber per process, and the tracer remembers why it could not attach.
#include "gpu_test_support.h"

#include <cupti.h>

using namespace streamscope;
using namespace streamscope::gputest;

namespace {

void CUPTIAPI otherProfiler(void*, CUpti_CallbackDomain, CUpti_CallbackId, const void*) {}

TEST(CudaCuptiBusy, AnotherProfilerMakesTheRunUseEvents)
{
    STREAMSCOPE_REQUIRE_GPU();
    CUpti_SubscriberHandle other = nullptr;
    ASSERT_EQ(cuptiSubscribe(&other, otherProfiler, nullptr), CUPTI_SUCCESS) << "the test's own subscriber";

    // A memset needs CUPTI (kernels stamp themselves, copies and memsets cannot): the run falls back to events.
    const Op memset = withBytes(simple(OpKind::Memset, "s"), 1 << 20);
    Scenario s = scenario("busy", {stream("s", StreamKind::NonBlocking)},
                          {thread("main", {spin("s", 50, 1, 32, "k"), memset, simple(OpKind::DeviceSync)})});
    for (TimingMode asked : {TimingMode::Auto, TimingMode::Cupti, TimingMode::Both}) {
        CudaBackendOptions o;
        o.timing = asked;
        const RunOutcome out = runOnGpu(validated(s), o);
        ASSERT_TRUE(out.status.ok()) << toString(asked) << ": " << out.status.error().toString();
        EXPECT_EQ(settingOf(out.trace.info, "timing"), "events") << toString(asked);
        EXPECT_EQ(out.trace.info.source, TraceSource::CudaEvents);
        const std::string reason = settingOf(out.trace.info, "timing_reason");
        EXPECT_NE(reason.find("another profiler is attached"), std::string::npos) << reason;
        EXPECT_EQ(countSpans(out.trace, SpanKind::Kernel), 1u);
        EXPECT_EQ(countSpans(out.trace, SpanKind::Memset), 1u);
    }

    // Kernels alone need no CUPTI: the run times them with their own stamps, beside the other profiler.
    Scenario kernels = scenario("kernels", {stream("s", StreamKind::NonBlocking)},
                                {thread("main", {spin("s", 50, 1, 32, "k"), simple(OpKind::DeviceSync)})});
    for (TimingMode asked : {TimingMode::Auto, TimingMode::Cupti}) {
        CudaBackendOptions o;
        o.timing = asked;
        const RunOutcome out = runOnGpu(validated(kernels), o);
        ASSERT_TRUE(out.status.ok()) << toString(asked) << ": " << out.status.error().toString();
        EXPECT_EQ(settingOf(out.trace.info, "timing"), "cupti") << toString(asked);
        EXPECT_EQ(settingOf(out.trace.info, "kernel_timing").rfind("stamps", 0), 0u);
        EXPECT_TRUE(settingOf(out.trace.info, "timing_reason").empty());
        EXPECT_EQ(countSpans(out.trace, SpanKind::Kernel), 1u);
    }
    EXPECT_FALSE(cuptiUnavailableReason().empty());
    (void)cuptiUnsubscribe(other);
}

} // namespace
