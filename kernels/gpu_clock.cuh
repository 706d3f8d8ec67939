// The GPU's clock (%globaltimer, the nanosecond clock that kernel stamps read) against the host's steady clock, by
// ping-pong over mapped host memory: the host writes a sequence number and notes its clock, a one-thread kernel
// waits for it and answers with %globaltimer, the host notes its clock when the answer arrives. The GPU read its
// clock somewhere in that round trip, so its midpoint is the estimate and half the round trip the error bound.
// On an H200 the narrowest of 200 round trips was 1.35 us; the offset moved 1.1 us in about 5 s
// (tests/data/h200/experiments/kernel-stamps).
//
// Plain host header (no device code), as kernel_library.cuh.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace streamscope::kernels {

struct GpuClockSample {
    int64_t hostNs = 0;   // host steady clock, midpoint of the round trip
    int64_t gpuNs = 0;    // %globaltimer read inside it
    int64_t errorNs = -1; // half the round trip; -1: no sample
};

class GpuClockProbe {
public:
    GpuClockProbe() = default;
    ~GpuClockProbe();
    GpuClockProbe(const GpuClockProbe&) = delete;
    GpuClockProbe& operator=(const GpuClockProbe&) = delete;

    // On the current device: the mapped buffers and the stream the probe kernel runs in.
    cudaError_t init(int maxSamples = 64);
    // `samples` round trips (at most maxSamples) on the idle device; the narrowest one. A round trip that gets no
    // answer within `timeoutNs` ends the probe with cudaErrorLaunchTimeout.
    cudaError_t sample(int samples, GpuClockSample& best, int64_t timeoutNs = 100'000'000);
    void release();

private:
    unsigned int* m_flag = nullptr;        // host pointer, mapped
    unsigned long long* m_reply = nullptr; // host pointer, mapped; one slot per round trip
    cudaStream_t m_stream = nullptr;
    int m_device = -1;
    int m_max = 0;
};

// Host time of a %globaltimer value, by the line through two samples (or the offset of one).
int64_t gpuToHostNs(int64_t gpuNs, const GpuClockSample& before, const GpuClockSample& after);

} // namespace streamscope::kernels
