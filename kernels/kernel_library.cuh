// The kernel library: the kernels a scenario can launch (spin, empty, fma, triad, matmul, transpose, reduce), each
// with a configurable grid, block, dynamic shared memory and stream.
//
// A plain host header (no device code, no core types) so that both nvcc (C++17) and the C++20 backend include
// it; the kernels themselves live in kernel_library.cu.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace streamscope::kernels {

enum class Kernel { Spin, Empty, Fma, Triad, Matmul, Transpose, Reduce };

const char* kernelName(Kernel k);

// One launch. Every kernel covers its whole problem with any grid: blocks walk elements or tiles grid-stride, so a
// derived grid (one block per tile, effectiveGrid() in core) and a small given one (several tiles per block) do
// the same work. Which buffers a kernel reads and writes (sizes from bufferNeeds()):
//   spin       none; each block spins for `spinNs` nanoseconds of %globaltimer
//   empty      none
//   fma        out[outCount]: thread i writes its result to out[i] when i < outCount; `size` iterations
//   triad      out[size] = in0[size] + scalar * in1[size]
//   matmul     out = in0 x in1, all size x size, row-major; tile = block.x (square blocks of 8, 16 or 32)
//   transpose  out = in0 transposed, size x size; tile = block.x (8, 16, 32 or 64), block.y rows per pass
//   reduce     sum of in0[size]; `scratch` (scratchBytes, zeroed once before the first launch) holds the block
//              partial sums, a block counter and the result (reduceResult())
struct LaunchArgs {
    Kernel kernel = Kernel::Empty;
    dim3 grid{1, 1, 1};
    dim3 block{1, 1, 1};
    size_t sharedBytes = 0; // dynamic shared memory asked for by the scenario, on top of the kernel's own
    cudaStream_t stream = nullptr;
    int64_t size = 0;
    uint64_t spinNs = 0;
    float* out = nullptr;
    const float* in0 = nullptr;
    const float* in1 = nullptr;
    int64_t outCount = 0;
    float scalar = 3.0f;
    void* scratch = nullptr;
    // Fault injection (CudaBackendOptions::injectFault): launch, in place of the kernel and with its grid, one that
    // writes to an address no allocation covers, so that the kernel fails with cudaErrorIllegalAddress.
    bool illegalAddress = false;
};

// Device memory a launch needs.
struct BufferNeeds {
    size_t outFloats = 0;
    size_t in0Floats = 0;
    size_t in1Floats = 0;
    size_t scratchBytes = 0;
    size_t totalBytes() const { return (outFloats + in0Floats + in1Floats) * sizeof(float) + scratchBytes; }
};

// fma results are written for at most this many threads (the result only keeps the chains alive).
inline constexpr int64_t kFmaMaxOutputs = int64_t(1) << 20;

BufferNeeds bufferNeeds(Kernel k, int64_t size, dim3 grid, dim3 block);
// Empty when the shape can be launched; else what is wrong, in a sentence for the user.
std::string checkShape(Kernel k, dim3 grid, dim3 block, int64_t size);
// Dynamic shared memory the kernel itself uses with this block (the scenario's comes on top).
size_t ownSharedBytes(Kernel k, dim3 block);
// Allows the kernel more than 48 KiB of dynamic shared memory on the current device when it needs it.
cudaError_t prepareSharedMemory(Kernel k, dim3 block, size_t sharedBytes);
// Loads the kernel's code into the current device's context now (CUDA loads modules lazily, on first launch by
// default since 12.x), so that the first measured launch does not pay for it.
cudaError_t preload(Kernel k, dim3 block);
// Enqueues the kernel on args.stream; returns cudaLaunchKernel's result.
cudaError_t launch(const LaunchArgs& args);

// Where the reduce kernel leaves its sum inside `scratch`.
float* reduceResult(void* scratch);

} // namespace streamscope::kernels
