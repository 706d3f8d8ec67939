// A short calibration on the real GPU: every figure is there, with its repeats, and plausible. Plausible, not
// exact: timing figures belong to benchmarks (DESIGN.md §8); these bounds only catch a broken microbenchmark
// (a unit slip, a figure of zero, a loop that timed nothing).
#include "calibrate.h"
#include "device_profile.h"
#include "gpu_test_support.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace streamscope {
namespace {

const Result<DeviceProfile>& calibrated()
{
    static const Result<DeviceProfile> r = [] {
        CalibrationOptions o;
        o.repeats = 3;
        o.quick = true;
        o.command = "tst_calibrate";
        o.hostProcesses = 3;
        o.executable = STREAMSCOPE_CLI;
        return calibrateDevice(o);
    }();
    return r;
}

TEST(Calibrate, FiguresArePlausible)
{
    STREAMSCOPE_REQUIRE_GPU();
    const auto& r = calibrated();
    ASSERT_TRUE(r.ok()) << r.error().toString();
    const DeviceProfile& p = *r;
    EXPECT_FALSE(p.name.empty());
    EXPECT_GE(p.smCount, 1);
    EXPECT_GE(p.maxThreadsPerSm, 32);
    EXPECT_GE(p.copyEngines, 1);
    for (int64_t ns : {p.launchApiNs, p.launchApiRoundRobinNs, p.eventRecordApiNs, p.streamWaitApiNs, p.copyApiNs,
                       p.hostFuncApiNs, p.syncApiNs, p.graphLaunchApiNs, p.launchLatencyNs, p.minKernelNs}) {
        EXPECT_GT(ns, 0);
        EXPECT_LT(ns, 50'000);
    }
    EXPECT_LT(p.kernelOverheadNs, 50'000);
    EXPECT_GT(p.mallocApiNs, 0);
    EXPECT_GE(p.graphLaunchApiPerNodeNs, 0);
    EXPECT_GE(p.hostFuncLatencyNs, 0);
    EXPECT_GT(p.hostFuncSpacingNs, 0);
    // The wake-up curve from the host-function chains: idle times increasing (checked on parsing too), from a few
    // microseconds to milliseconds, each wake-up under a millisecond.
    ASSERT_GE(p.hostFuncWakeCurve.size(), 2u);
    EXPECT_LT(p.hostFuncWakeCurve.front().first, 100'000);
    EXPECT_GT(p.hostFuncWakeCurve.back().first, 200'000);
    for (const auto& [idle, wake] : p.hostFuncWakeCurve) {
        EXPECT_GT(wake, 0) << idle;
        EXPECT_LT(wake, 1'000'000) << idle;
    }
    // The same chains: the stream's release after a host function and the wake-up of an iteration's first one.
    EXPECT_GT(p.hostFuncReleaseNs, 0);
    EXPECT_LT(p.hostFuncReleaseNs, 100'000);
    EXPECT_GT(p.hostFuncFirstWakeNs, 0);
    EXPECT_LT(p.hostFuncFirstWakeNs, 5'000'000);
    EXPECT_GT(p.minMemsetNs, 0); // 4 KiB memsets queued behind a kernel
    EXPECT_LT(p.minMemsetNs, 50'000);
    for (double bps : {p.h2dPinnedBps, p.d2hPinnedBps, p.h2dPageableBps, p.d2hPageableBps, p.h2dPinnedDuplexBps,
                       p.d2hPinnedDuplexBps, p.d2dBps, p.memsetBps, p.dramBps}) {
        EXPECT_GT(bps, 1e9);
        EXPECT_LT(bps, 1e14);
    }
    EXPECT_GT(p.fp32Flops, 1e11);
    EXPECT_GT(p.matmulFlops, 1e10);
}

TEST(Calibrate, ProvenanceRoundTrips)
{
    STREAMSCOPE_REQUIRE_GPU();
    const auto& r = calibrated();
    ASSERT_TRUE(r.ok()) << r.error().toString();
    const DeviceCalibration& c = r->calibration;
    EXPECT_EQ(c.gpu, r->name);
    EXPECT_FALSE(c.date.empty());
    EXPECT_FALSE(c.cudaRuntime.empty());
    EXPECT_EQ(c.command, "tst_calibrate");
    for (const char* key : {"launch_api_ns", "launch_api_round_robin_ns", "kernel_spacing_ns", "min_kernel_ns",
                            "kernel_overhead_ns", "h2d_pinned_gbps", "d2h_pinned_duplex_gbps", "dram_gbps",
                            "fp32_tflops", "matmul_tflops", "host_func_latency_ns", "host_func_spacing_ns",
                            "graph_launch_api_per_node_ns", "graph_node_overhead_ns", "event_sync_wake_ns"}) {
        const CalibrationFigure* f = c.figure(key);
        ASSERT_NE(f, nullptr) << key;
        EXPECT_EQ(f->repeats.size(), 3u) << key;
        EXPECT_GE(f->spread, 0) << key;
        EXPECT_FALSE(f->method.empty()) << key;
    }
    // The host costs and the pageable copies come from fresh processes of streamscope-cli, one repeat each.
    for (const char* key : {"launch_api_ns", "launch_api_concurrent_ns", "event_record_api_ns", "malloc_api_ns",
                            "h2d_pageable_copy_ns", "d2h_pageable_copy_ns"}) {
        const CalibrationFigure* f = c.figure(key);
        ASSERT_NE(f, nullptr) << key;
        EXPECT_NE(f->method.find("over 3 fresh processes"), std::string::npos) << key << ": " << f->method;
        // Fewer than ten processes: nothing is trimmed, the figure is their mean (rounded as its unit is).
        ASSERT_EQ(f->repeats.size(), 3u) << key;
        EXPECT_TRUE(f->trimmedMean) << key;
        const double mean = (f->repeats[0] + f->repeats[1] + f->repeats[2]) / 3;
        EXPECT_NEAR(f->value, mean, 0.51) << key;
    }
    EXPECT_TRUE(!c.figure("sm_count")->trimmedMean);
    EXPECT_NE(r->sources.find("mean over 3 fresh processes less their highest and lowest tenth"), std::string::npos)
        << r->sources;
    const auto back = parseDeviceProfile(deviceProfileToJson(*r), "calibrated.json");
    ASSERT_TRUE(back.ok()) << back.error().toString();
    EXPECT_EQ(back->launchApiNs, r->launchApiNs);
    EXPECT_EQ(back->calibration.figures.size(), c.figures.size());
}

// What each of those processes does: the host costs and the pageable copies, nothing after them.
TEST(Calibrate, HostCostsOnlyMeasuresTheHostCosts)
{
    STREAMSCOPE_REQUIRE_GPU();
    CalibrationOptions o;
    o.repeats = 2;
    o.quick = true;
    o.hostCostsOnly = true;
    const auto r = calibrateDevice(o);
    ASSERT_TRUE(r.ok()) << r.error().toString();
    ASSERT_NE(r->calibration.figure("launch_api_ns"), nullptr);
    EXPECT_EQ(r->calibration.figure("launch_api_ns")->repeats.size(), 2u);
    ASSERT_NE(r->calibration.figure("h2d_pageable_copy_ns"), nullptr);
    ASSERT_NE(r->calibration.figure("d2h_pageable_copy_ns"), nullptr);
    EXPECT_EQ(r->calibration.figure("d2h_pageable_copy_ns")->repeats.size(), 2u);
    EXPECT_EQ(r->calibration.figure("kernel_spacing_ns"), nullptr);
    EXPECT_EQ(r->calibration.figure("h2d_pinned_gbps"), nullptr);
}

} // namespace
} // namespace streamscope
