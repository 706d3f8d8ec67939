// Calibration: microbenchmarks that measure, on this machine's GPU, every figure of a device profile the way the
// simulator uses it (streamscope-cli calibrate). Nothing in the measured loops is timed per op: the host steady
// clock runs from one device sync to the next, each figure is the median of `repeats` repeats (their spread is kept
// beside it), and the kernels are the kernel library's, so that dram_gbps, fp32_tflops and matmul_tflops fit the
// simulator's kernel model. The one exception is the split of an empty kernel's in-stream spacing into the
// kernel's own duration and the gap before the next: that needs the true start and end of each kernel, so it comes
// from a CUPTI pass run after everything else. Plain C++ header (no CUDA types) so that the CLI can use it.
#pragma once

#include "device_profile.h"
#include "result.h"

#include <atomic>
#include <functional>
#include <string>

namespace streamscope {

struct CalibrationOptions {
    int device = 0;
    int repeats = 5;
    bool quick = false; // fewer calls per repeat and smaller problems (tests): the same figures, rougher
    // What an API call costs the host differs from process to process, and every scenario run is a fresh process: the
    // host costs are measured again in this many fresh processes of `executable` (`streamscope-cli`, run as
    // `calibrate --host-costs-only`) and each becomes the median over them. 0, or no executable: this process only.
    int hostProcesses = 11;
    std::string executable;
    bool hostCostsOnly = false;                       // measure the host costs only (what such a fresh process does)
    std::string command;                              // the command line, for the provenance
    std::string toolVersion;                          // StreamScope's version
    std::function<void(const std::string&)> progress; // one line per figure as it is measured
    const std::atomic<bool>* cancel = nullptr;        // set: stop at the next figure
};

// Measures a profile of device `options.device` (id "calibrated", name the GPU's) with its provenance in
// `calibration`. Runtime errors carry CUDA's message; no usable GPU is a runtime error too.
Result<DeviceProfile> calibrateDevice(const CalibrationOptions& options);

} // namespace streamscope
