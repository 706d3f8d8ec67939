// The calibration's Calibrator (calibrate.h), shared by the two files that implement it: the helpers they both use
// (host clock, CUDA failures as exceptions, medians, how a figure is rounded and printed) and the class, which runs
// every microbenchmark with a warm-up and `repeats` repeats, stores each figure with its repeats, spread and method,
// and holds the streams, mapped flag and problem sizes the microbenchmarks share. Internal to kernels/:
//   calibrate.cpp             calibrateDevice; Calibrator::run (set-up, the order of the measurements, the
//                             provenance), deviceProperties, deriveFields (the profile fields from the figures)
//   calibrate_benchmarks.cpp  the microbenchmarks: hostCosts, graphs, gpuSpacing, latencies, copies,
//                             kernelThroughput, cuptiSplit
//   calibrate_processes.cpp   hostCostsInFreshProcesses: the host costs again in fresh processes
//   calibrate_runner.cpp      runnerLaunchCosts, runnerMallocCost, runnerPageableCopies: those costs as scenario
//                             runs issue them
#pragma once

#include "calibrate.h"

#include "kernel_library.cuh"

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <set>
#include <string>
#include <vector>

namespace streamscope::calibrate {

// How long the driver's host-function thread sits idle in calibrate's host_func_after_idle trials (µs).
inline constexpr int kHostFuncIdleUs[] = {50, 100, 200, 500, 1000, 3000};
// The kernels of calibrate's host-function chains (µs): the driver thread idles about this long between them.
inline constexpr int kHostFuncChainUs[] = {2, 5, 10, 20, 50, 100, 200, 500, 1000, 3000};

using kernels::Kernel;

inline int64_t nowNs()
{
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

struct CudaFailure {
    std::string message;
};

inline void check(cudaError_t e, const char* what)
{
    if (e != cudaSuccess)
        throw CudaFailure{std::string(what) + ": " + cudaGetErrorString(e)};
}

struct Cancelled {};

inline double median(std::vector<double> v)
{
    if (v.empty())
        return 0;
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// The mean of `v` less its highest and lowest tenth (none of fewer than ten values): where the values fall in two
// groups, as a launch's cost does from process to process, a median of a few lands in either group, this mean
// between them (docs/PROFILES.md).
inline double trimmedMean(std::vector<double> v)
{
    if (v.empty())
        return 0;
    std::sort(v.begin(), v.end());
    const size_t k = v.size() / 10;
    double sum = 0;
    for (size_t i = k; i < v.size() - k; ++i)
        sum += v[i];
    return sum / double(v.size() - 2 * k);
}

inline std::string formatValue(double v, const std::string& unit)
{
    char buf[64];
    if (unit == "ns") {
        const double a = std::fabs(v);
        if (a < 1e3)
            std::snprintf(buf, sizeof buf, "%.0f ns", v);
        else if (a < 1e6)
            std::snprintf(buf, sizeof buf, "%.2f \u00b5s", v / 1e3);
        else
            std::snprintf(buf, sizeof buf, "%.3f ms", v / 1e6);
    } else if (unit == "count") {
        std::snprintf(buf, sizeof buf, "%.0f", v);
    } else {
        std::snprintf(buf, sizeof buf, "%.2f %s", v, unit.c_str());
    }
    return buf;
}

inline double roundTo(double v, const std::string& unit)
{
    if (unit == "ns" || unit == "count")
        return std::round(v);
    return std::round(v * 100) / 100;
}

// Sets a figure's repeats, each rounded as its unit is, and their median and spread.
inline void setRepeats(CalibrationFigure& f, std::vector<double> values)
{
    for (double& x : values)
        x = roundTo(x, f.unit);
    f.value = roundTo(median(values), f.unit);
    f.trimmedMean = false;
    const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
    f.spread = roundTo(*hi - *lo, f.unit);
    f.repeats = std::move(values);
}

class Calibrator {
public:
    explicit Calibrator(const CalibrationOptions& o) : m_opt(o), m_repeats(std::max(1, o.repeats)) {}

    DeviceProfile run();

private:
    // Runs `one` once unmeasured (warm-up), then `repeats` times; each call returns one repeat's value.
    std::vector<double> repeat(const std::function<double()>& one)
    {
        if (m_opt.cancel && m_opt.cancel->load())
            throw Cancelled{};
        (void)one();
        std::vector<double> v;
        for (int r = 0; r < m_repeats; ++r)
            v.push_back(one());
        return v;
    }

    // Stores a figure, the median of its values (trimmed: their trimmed mean, for a long-tailed figure whose mean is
    // what a run pays), and prints its progress line.
    double figure(const std::string& key, const std::string& label, const std::string& unit, std::vector<double> values,
                  const std::string& method, bool trimmed = false)
    {
        CalibrationFigure f;
        f.key = key;
        f.unit = unit;
        setRepeats(f, std::move(values));
        if (trimmed) {
            f.value = roundTo(trimmedMean(f.repeats), unit);
            f.trimmedMean = true;
        }
        f.method = method;
        if (m_opt.progress) {
            std::string line = label + ": " + formatValue(f.value, unit);
            if (trimmed)
                line += " (trimmed mean of " + std::to_string(f.repeats.size()) + ", spread "
                    + formatValue(f.spread, unit) + ")";
            else if (f.repeats.size() > 1)
                line +=
                    " (" + std::to_string(f.repeats.size()) + " repeats, spread " + formatValue(f.spread, unit) + ")";
            m_opt.progress(line);
        }
        m_cal.figures.push_back(f);
        return f.value;
    }

    double measured(const std::string& key, const std::string& label, const std::string& unit,
                    const std::function<double()>& one, const std::string& method)
    {
        return figure(key, label, unit, repeat(one), method);
    }

    // Per-repeat values of a figure already stored.
    const std::vector<double>& repeatsOf(const std::string& key) const { return m_cal.figure(key)->repeats; }
    std::vector<double> derived(const std::string& key, const std::function<double(double)>& f) const
    {
        std::vector<double> v;
        for (double x : repeatsOf(key))
            v.push_back(f(x));
        return v;
    }

    void sync() { check(cudaStreamSynchronize(m_s), "cudaStreamSynchronize"); }
    void launchEmpty(cudaStream_t s)
    {
        kernels::LaunchArgs a;
        a.kernel = Kernel::Empty;
        a.stream = s;
        check(kernels::launch(a), "cudaLaunchKernel (empty)");
    }
    void launchSpin(cudaStream_t s, uint64_t ns)
    {
        kernels::LaunchArgs a;
        a.kernel = Kernel::Spin;
        a.block = dim3(32, 1, 1);
        a.spinNs = ns;
        a.stream = s;
        check(kernels::launch(a), "cudaLaunchKernel (spin)");
    }
    // Host time of `body` from a synchronized device to the next stream sync.
    int64_t untimed(const std::function<void()>& body)
    {
        check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
        const int64_t t0 = nowNs();
        body();
        check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
        return nowNs() - t0;
    }
    // Polls the mapped flag until it reads `value`; returns when it did (host clock).
    int64_t waitFlag(uint32_t value)
    {
        while (*m_flag != value) {}
        return nowNs();
    }

    void deviceProperties(DeviceProfile& p);
    void hostCosts();
    // h2d_pageable_copy_ns and d2h_pageable_copy_ns: host-side figures, measured with the host costs, through the
    // Runner (calibrate_runner.cpp), with copies of pageableBytes.
    void runnerPageableCopies();
    static size_t pageableBytes(bool quick) { return quick ? (16u << 20) : (64u << 20); }
    // launch_api_ns, launch_api_round_robin_ns and launch_api_concurrent_ns from scenarios run through the Runner
    // and the CUDA backend with no timing (calibrate_runner.cpp); runnerLaunchCost: one repeat per iteration.
    void runnerLaunchCosts();
    void runnerMallocCost();
    // host_func_idle_Kus_chain_ns and host_func_wake_Kus_chain_ns for each K of kHostFuncChainUs: the points of
    // host_func_wake_curve (calibrate_runner.cpp).
    void runnerHostFuncWake();
    std::vector<double> runnerCallCost(const std::string& scenario, const std::set<std::string>& calls, int count,
                                       bool spanDurations = false);
    std::vector<double> runnerLaunchCost(int threads, int streams);
    // The host figures [first, end) of m_cal.figures (the host costs and the pageable copies) measured again in
    // m_opt.hostProcesses fresh processes (calibrate_processes.cpp); each becomes the trimmed mean over them.
    void hostCostsInFreshProcesses(size_t firstHostFigure, size_t endHostFigure);
    void graphs();
    void gpuSpacing();
    void latencies();
    void copies(DeviceProfile& p);
    void kernelThroughput();
    void cuptiSplit();
    void deriveFields(DeviceProfile& p);
    // Releases the streams and the mapped flag; the profile with its provenance.
    DeviceProfile finish(DeviceProfile& p, void* flag);

    CalibrationOptions m_opt;
    int m_repeats;
    int m_calls = 1000; // calls per repeat for host costs
    DeviceCalibration m_cal;
    int m_sms = 0;
    int m_deviceCount = 1;
    cudaStream_t m_s = nullptr;
    cudaStream_t m_s2 = nullptr;
    std::vector<cudaStream_t> m_rr;
    volatile uint32_t* m_flag = nullptr;
    uint32_t m_flagValue = 0;
    std::string m_cuptiNote;
    int64_t m_fmaIterations = 0;
    double m_fmaThreads = 0;
    double m_triadN = 0;
    double m_fewTriadN = 0; // the triad of few blocks (memory_saturation)
    double m_fewTriadBlocks = 0;
    double m_reduceBlocks = 0; // the blocks of reduce_kernel_ns
    double m_matmulN = 0;
};

} // namespace streamscope::calibrate
