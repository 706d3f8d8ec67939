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
    // Timing "cupti": the launch's stamp slot (kStampSlotBytes of device memory, zeroed before the launch), where the
    // kernel stamps %globaltimer at its start and end; null: no stamps. `stampWave` is the device's resident-block
    // capacity (SMs x blocks per SM): only the first and the last `stampWave` blocks stamp (see stampsOf()).
    uint64_t* stamps = nullptr;
    uint32_t stampWave = 0;
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
// Kernel stamps. A kernel given a slot takes the GPU's %globaltimer when one of its first `stampWave` blocks starts
// and when one of its last `stampWave` blocks ends; blocks are dispatched in index order, so the first block to
// start and the last to end are among those (on an H200 the stamps of one wave and of all 65536 blocks of a grid
// agreed to the nanosecond, tests/data/h200/experiments/kernel-stamps). The stamps are atomicMax over 8 shards 64
// bytes apart (the start as ~t), so that the atomics of a wide grid do not queue on one address: measured there,
// 20 triads of 65536 blocks took 1305 us against 1268 us unstamped, and one-block kernels no measurable time.
inline constexpr size_t kStampShards = 8;
inline constexpr size_t kStampShardWords = 8; // uint64 words from one shard to the next (64 bytes)
inline constexpr size_t kStampSlotWords = kStampShards * kStampShardWords;
inline constexpr size_t kStampSlotBytes = kStampSlotWords * sizeof(uint64_t);
struct KernelStamps {
    uint64_t start = 0; // %globaltimer, ns
    uint64_t end = 0;
};
// A slot read back from the device: false when the kernel left no stamp (it did not run, or failed).
bool stampsOf(const uint64_t* slot, KernelStamps& out);
// The resident-block capacity of the current device (the `stampWave` its launches take).
cudaError_t stampWave(uint32_t& wave);

// Enqueues the kernel on args.stream; returns cudaLaunchKernel's result.
cudaError_t launch(const LaunchArgs& args);

// Where the reduce kernel leaves its sum inside `scratch`.
float* reduceResult(void* scratch);

} // namespace streamscope::kernels
