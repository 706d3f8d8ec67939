// Kernels of the calibration microbenchmarks (calibrate_benchmarks.cpp) beyond the kernel library: a kernel that
// tells the host it ran by writing to mapped pinned memory. Plain host header, like kernel_library.cuh.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace streamscope::kernels {

// One thread spins `spinNs` nanoseconds of %globaltimer (0: none), then stores `value` to `flag` (mapped pinned
// host memory) and makes the store visible to the host before the kernel ends. The host polling `flag` sees the
// kernel run with no timing event or profiler in the stream.
cudaError_t launchFlagKernel(volatile uint32_t* flag, uint32_t value, uint64_t spinNs, cudaStream_t stream);

} // namespace streamscope::kernels
