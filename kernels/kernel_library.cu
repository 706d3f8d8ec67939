#include "kernel_library.cuh"

#include <algorithm>

namespace streamscope::kernels {

namespace {

// Default dynamic shared memory limit; more needs cudaFuncAttributeMaxDynamicSharedMemorySize.
constexpr size_t kDefaultSharedLimit = 48 * 1024;
// The reduce scratch: block counter, result, then one partial sum per block.
constexpr size_t kReduceHeaderBytes = 16;

__device__ __forceinline__ uint64_t globalTimerNs()
{
    // %globaltimer is a nanosecond wall clock, independent of SM clock boosts and throttling.
    uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__device__ __forceinline__ uint64_t linearBlock()
{
    return (uint64_t(blockIdx.z) * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;
}

__device__ __forceinline__ uint32_t linearThread()
{
    return (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
}

__device__ __forceinline__ uint32_t blockThreads()
{
    return blockDim.x * blockDim.y * blockDim.z;
}

__device__ __forceinline__ uint64_t gridBlocks()
{
    return uint64_t(gridDim.x) * gridDim.y * gridDim.z;
}

struct Stamp {
    unsigned long long* slot;
    uint32_t wave;
};

// Kernel stamps (kernel_library.cuh): the first `wave` blocks stamp their start, the last `wave` their end.
__device__ __forceinline__ void stampStart(Stamp s)
{
    const uint64_t b = linearBlock();
    if (s.slot == nullptr || linearThread() != 0 || b >= s.wave)
        return;
    atomicMax(&s.slot[(b % kStampShards) * kStampShardWords], ~(unsigned long long)globalTimerNs());
}

// Called by every thread of the block (the barrier waits for the block's last warp); the condition is the block's.
__device__ __forceinline__ void stampEnd(Stamp s)
{
    const uint64_t b = linearBlock();
    if (s.slot == nullptr || b + s.wave < gridBlocks())
        return;
    __syncthreads();
    if (linearThread() == 0)
        atomicMax(&s.slot[(b % kStampShards) * kStampShardWords + 1], (unsigned long long)globalTimerNs());
}

// Each block holds its SM slots for `ns`. One thread watches the clock and the others wait at the barrier: with every
// thread of a full GPU polling %globaltimer, 50 us blocks of 256 threads ran about 75 us under CUPTI on an H200
// (tools/gpu_timing_figures.py shows the effect on lessons 12 and 13), while one-warp blocks kept their time.
__device__ __forceinline__ void spinBody(uint64_t ns)
{
    if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) {
        const uint64_t start = globalTimerNs();
        while (globalTimerNs() - start < ns) {}
    }
    __syncthreads();
}

__global__ void emptyKernel(Stamp st)
{
    stampStart(st);
    stampEnd(st);
}

// Fault injection: a store to the top of the address space, where no allocation lives (cudaErrorIllegalAddress).
__global__ void writeIllegalAddress()
{
    if (threadIdx.x == 0)
        *reinterpret_cast<volatile int*>(~uintptr_t(0) & ~uintptr_t(0xff)) = int(blockIdx.x);
}

__device__ __forceinline__ void fmaBody(int64_t iterations, float* out, int64_t outCount)
{
    const uint64_t tid = linearBlock() * blockThreads() + linearThread();
    // Four independent chains give the FMA pipes instruction-level parallelism; x -> 0.999 x + 0.001 stays in
    // [0, 2] so no value turns denormal or infinite.
    float a0 = 1.0f + float(tid & 7u) * 0.125f;
    float a1 = a0 + 0.5f;
    float a2 = a0 + 0.25f;
    float a3 = a0 + 0.75f;
    const float m = 0.999f;
    const float c = 0.001f;
#pragma unroll 4
    for (int64_t i = 0; i < iterations; ++i) {
        a0 = fmaf(a0, m, c);
        a1 = fmaf(a1, m, c);
        a2 = fmaf(a2, m, c);
        a3 = fmaf(a3, m, c);
    }
    if (int64_t(tid) < outCount)
        out[tid] = ((a0 + a1) + a2) + a3;
}

__device__ __forceinline__ void triadBody(float* a, const float* b, const float* c, float s, int64_t n)
{
    const uint64_t stride = gridBlocks() * blockThreads();
    for (uint64_t i = linearBlock() * blockThreads() + linearThread(); i < uint64_t(n); i += stride)
        a[i] = b[i] + s * c[i];
}

// C = A x B with T x T tiles staged in shared memory; block T x T, one output per thread and tile. Blocks walk
// the output tiles grid-stride, so any grid computes the whole product: a derived grid (one block per tile) or a
// small given one (each block does several tiles, like a persistent kernel).
template <int T>
__device__ __forceinline__ void matmulBody(const float* A, const float* B, float* C, int64_t n)
{
    __shared__ float As[T][T];
    __shared__ float Bs[T][T];
    const int tx = int(threadIdx.x);
    const int ty = int(threadIdx.y);
    const uint64_t tilesPerRow = uint64_t(n + T - 1) / T;
    const uint64_t tiles = tilesPerRow * tilesPerRow;
    for (uint64_t tile = linearBlock(); tile < tiles; tile += gridBlocks()) {
        const int64_t row = int64_t(tile / tilesPerRow) * T + ty;
        const int64_t col = int64_t(tile % tilesPerRow) * T + tx;
        float acc = 0.0f;
        for (int64_t t = 0; t < n; t += T) {
            As[ty][tx] = (row < n && t + tx < n) ? A[row * n + t + tx] : 0.0f;
            Bs[ty][tx] = (t + ty < n && col < n) ? B[(t + ty) * n + col] : 0.0f;
            __syncthreads();
#pragma unroll
            for (int k = 0; k < T; ++k)
                acc += As[ty][k] * Bs[k][tx];
            __syncthreads();
        }
        if (row < n && col < n)
            C[row * n + col] = acc;
    }
}

// out = in^T through a T x (T + 1) shared tile (the padding column avoids bank conflicts on the transposed
// read); block T x R, each thread moves T / R elements per tile; tiles grid-stride as in matmulKernel.
template <int T>
__device__ __forceinline__ void transposeBody(const float* in, float* out, int64_t n)
{
    __shared__ float tile[T][T + 1];
    const int tx = int(threadIdx.x);
    const int ty = int(threadIdx.y);
    const uint64_t tilesPerRow = uint64_t(n + T - 1) / T;
    const uint64_t tiles = tilesPerRow * tilesPerRow;
    for (uint64_t t = linearBlock(); t < tiles; t += gridBlocks()) {
        const int64_t tileRow = int64_t(t / tilesPerRow);
        const int64_t tileCol = int64_t(t % tilesPerRow);
        int64_t x = tileCol * T + tx;
        int64_t y = tileRow * T + ty;
        for (int j = 0; ty + j < T; j += int(blockDim.y))
            if (x < n && y + j < n)
                tile[ty + j][tx] = in[(y + j) * n + x];
        __syncthreads();
        x = tileRow * T + tx;
        y = tileCol * T + ty;
        for (int j = 0; ty + j < T; j += int(blockDim.y))
            if (x < n && y + j < n)
                out[(y + j) * n + x] = tile[tx][ty + j];
        __syncthreads();
    }
}

// Tree sum of one value per thread of the block through shared memory (any block size); the sum is in s[0].
__device__ float blockSum(float* s, float v)
{
    const uint32_t tid = linearThread();
    const uint32_t n = blockThreads();
    s[tid] = v;
    __syncthreads();
    uint32_t p = 1;
    while (p < n)
        p <<= 1;
    for (uint32_t stride = p >> 1; stride > 0; stride >>= 1) {
        if (tid < stride && tid + stride < n)
            s[tid] += s[tid + stride];
        __syncthreads();
    }
    return s[0];
}

// One pass: every block sums its grid-stride share, the last block to finish sums the partials (the
// threadFenceReduction pattern) and resets the counter for the next launch.
__device__ __forceinline__ void reduceBody(const float* in, int64_t n, unsigned char* scratch)
{
    extern __shared__ float sdata[];
    __shared__ bool isLast;
    auto* counter = reinterpret_cast<unsigned int*>(scratch);
    auto* result = reinterpret_cast<float*>(scratch + 4);
    auto* partials = reinterpret_cast<float*>(scratch + kReduceHeaderBytes);
    const uint32_t tid = linearThread();
    const uint64_t blocks = gridBlocks();
    const uint64_t stride = blocks * blockThreads();
    float v = 0.0f;
    for (uint64_t i = linearBlock() * blockThreads() + tid; i < uint64_t(n); i += stride)
        v += in[i];
    const float sum = blockSum(sdata, v);
    if (tid == 0) {
        partials[linearBlock()] = sum;
        __threadfence();
        const unsigned int done = atomicAdd(counter, 1u);
        isLast = uint64_t(done) + 1 == blocks;
    }
    __syncthreads();
    if (!isLast)
        return;
    float t = 0.0f;
    for (uint64_t i = tid; i < blocks; i += blockThreads())
        t += __ldcg(&partials[i]);
    __syncthreads();
    const float total = blockSum(sdata, t);
    if (tid == 0) {
        *result = total;
        *counter = 0;
    }
}

__global__ void spinKernel(uint64_t ns, Stamp st)
{
    stampStart(st);
    spinBody(ns);
    stampEnd(st);
}

__global__ void fmaKernel(int64_t iterations, float* out, int64_t outCount, Stamp st)
{
    stampStart(st);
    fmaBody(iterations, out, outCount);
    stampEnd(st);
}

__global__ void triadKernel(float* a, const float* b, const float* c, float s, int64_t n, Stamp st)
{
    stampStart(st);
    triadBody(a, b, c, s, n);
    stampEnd(st);
}

template <int T>
__global__ void matmulKernel(const float* A, const float* B, float* C, int64_t n, Stamp st)
{
    stampStart(st);
    matmulBody<T>(A, B, C, n);
    stampEnd(st);
}

template <int T>
__global__ void transposeKernel(const float* in, float* out, int64_t n, Stamp st)
{
    stampStart(st);
    transposeBody<T>(in, out, n);
    stampEnd(st);
}

__global__ void reduceKernel(const float* in, int64_t n, unsigned char* scratch, Stamp st)
{
    stampStart(st);
    reduceBody(in, n, scratch);
    stampEnd(st);
}

bool isTile(uint32_t v, std::initializer_list<uint32_t> allowed)
{
    return std::find(allowed.begin(), allowed.end(), v) != allowed.end();
}

const void* matmulFunction(uint32_t tile)
{
    switch (tile) {
    case 8: return reinterpret_cast<const void*>(&matmulKernel<8>);
    case 16: return reinterpret_cast<const void*>(&matmulKernel<16>);
    case 32: return reinterpret_cast<const void*>(&matmulKernel<32>);
    default: return nullptr;
    }
}

const void* transposeFunction(uint32_t tile)
{
    switch (tile) {
    case 8: return reinterpret_cast<const void*>(&transposeKernel<8>);
    case 16: return reinterpret_cast<const void*>(&transposeKernel<16>);
    case 32: return reinterpret_cast<const void*>(&transposeKernel<32>);
    case 64: return reinterpret_cast<const void*>(&transposeKernel<64>);
    default: return nullptr;
    }
}

const void* function(Kernel k, dim3 block)
{
    switch (k) {
    case Kernel::Spin: return reinterpret_cast<const void*>(&spinKernel);
    case Kernel::Empty: return reinterpret_cast<const void*>(&emptyKernel);
    case Kernel::Fma: return reinterpret_cast<const void*>(&fmaKernel);
    case Kernel::Triad: return reinterpret_cast<const void*>(&triadKernel);
    case Kernel::Matmul: return matmulFunction(block.x);
    case Kernel::Transpose: return transposeFunction(block.x);
    case Kernel::Reduce: return reinterpret_cast<const void*>(&reduceKernel);
    }
    return nullptr;
}

std::string dimString(dim3 d)
{
    return std::to_string(d.x) + "x" + std::to_string(d.y) + "x" + std::to_string(d.z);
}

} // namespace

const char* kernelName(Kernel k)
{
    switch (k) {
    case Kernel::Spin: return "spin";
    case Kernel::Empty: return "empty";
    case Kernel::Fma: return "fma";
    case Kernel::Triad: return "triad";
    case Kernel::Matmul: return "matmul";
    case Kernel::Transpose: return "transpose";
    case Kernel::Reduce: return "reduce";
    }
    return "?";
}

BufferNeeds bufferNeeds(Kernel k, int64_t size, dim3 grid, dim3 block)
{
    BufferNeeds b;
    const auto n = size_t(std::max<int64_t>(0, size));
    switch (k) {
    case Kernel::Spin:
    case Kernel::Empty: break;
    case Kernel::Fma: {
        const uint64_t threads = uint64_t(grid.x) * grid.y * grid.z * block.x * block.y * block.z;
        b.outFloats = size_t(std::min<uint64_t>(threads, uint64_t(kFmaMaxOutputs)));
        break;
    }
    case Kernel::Triad: b.outFloats = b.in0Floats = b.in1Floats = n; break;
    case Kernel::Matmul: b.outFloats = b.in0Floats = b.in1Floats = n * n; break;
    case Kernel::Transpose: b.outFloats = b.in0Floats = n * n; break;
    case Kernel::Reduce:
        b.in0Floats = n;
        b.scratchBytes = kReduceHeaderBytes + size_t(grid.x) * grid.y * grid.z * sizeof(float);
        break;
    }
    return b;
}

std::string checkShape(Kernel k, dim3 grid, dim3 block, int64_t size)
{
    if (grid.x == 0 || grid.y == 0 || grid.z == 0 || block.x == 0 || block.y == 0 || block.z == 0)
        return std::string(kernelName(k)) + ": grid " + dimString(grid) + " and block " + dimString(block)
            + " must not have a zero dimension";
    if (uint64_t(block.x) * block.y * block.z > 1024)
        return std::string(kernelName(k)) + ": block " + dimString(block) + " has more than 1024 threads";
    if (size < 0)
        return std::string(kernelName(k)) + ": size must not be negative";
    switch (k) {
    case Kernel::Matmul:
        if (!isTile(block.x, {8, 16, 32}) || block.y != block.x || block.z != 1)
            return "matmul needs a square block of 8x8, 16x16 or 32x32 threads (the tile, block.x); got "
                + dimString(block);
        break;
    case Kernel::Transpose:
        if (!isTile(block.x, {8, 16, 32, 64}) || block.y > block.x || block.z != 1)
            return "transpose needs block.x of 8, 16, 32 or 64 (the tile width) and block.y <= block.x (rows per "
                   "pass, e.g. 32x8); got "
                + dimString(block);
        break;
    case Kernel::Reduce:
        if (uint64_t(grid.x) * grid.y * grid.z > 0xffffffffull)
            return "reduce: grid " + dimString(grid) + " has too many blocks";
        break;
    default: break;
    }
    return {};
}

size_t ownSharedBytes(Kernel k, dim3 block)
{
    return k == Kernel::Reduce ? size_t(block.x) * block.y * block.z * sizeof(float) : 0;
}

cudaError_t prepareSharedMemory(Kernel k, dim3 block, size_t sharedBytes)
{
    const size_t total = ownSharedBytes(k, block) + sharedBytes;
    if (total <= kDefaultSharedLimit)
        return cudaSuccess;
    const void* f = function(k, block);
    if (!f)
        return cudaErrorInvalidValue;
    return cudaFuncSetAttribute(f, cudaFuncAttributeMaxDynamicSharedMemorySize, int(total));
}

cudaError_t preload(Kernel k, dim3 block)
{
    const void* f = function(k, block);
    if (!f)
        return cudaErrorInvalidValue;
    cudaFuncAttributes attr{};
    return cudaFuncGetAttributes(&attr, f);
}

cudaError_t launch(const LaunchArgs& a)
{
    if (a.illegalAddress)
        return cudaLaunchKernel(reinterpret_cast<const void*>(&writeIllegalAddress), a.grid, a.block, nullptr, 0,
                                a.stream);
    const void* f = function(a.kernel, a.block);
    if (!f)
        return cudaErrorInvalidConfiguration;
    const size_t shared = ownSharedBytes(a.kernel, a.block) + a.sharedBytes;
    int64_t size = a.size;
    uint64_t spinNs = a.spinNs;
    int64_t outCount = a.outCount;
    float scalar = a.scalar;
    float* out = a.out;
    const float* in0 = a.in0;
    const float* in1 = a.in1;
    auto* scratch = static_cast<unsigned char*>(a.scratch);
    Stamp st{reinterpret_cast<unsigned long long*>(a.stamps), a.stampWave};
    switch (a.kernel) {
    case Kernel::Spin: {
        void* args[] = {&spinNs, &st};
        return cudaLaunchKernel(f, a.grid, a.block, args, shared, a.stream);
    }
    case Kernel::Empty: {
        void* args[] = {&st};
        return cudaLaunchKernel(f, a.grid, a.block, args, shared, a.stream);
    }
    case Kernel::Fma: {
        void* args[] = {&size, &out, &outCount, &st};
        return cudaLaunchKernel(f, a.grid, a.block, args, shared, a.stream);
    }
    case Kernel::Triad: {
        void* args[] = {&out, &in0, &in1, &scalar, &size, &st};
        return cudaLaunchKernel(f, a.grid, a.block, args, shared, a.stream);
    }
    case Kernel::Matmul: {
        void* args[] = {&in0, &in1, &out, &size, &st};
        return cudaLaunchKernel(f, a.grid, a.block, args, shared, a.stream);
    }
    case Kernel::Transpose: {
        void* args[] = {&in0, &out, &size, &st};
        return cudaLaunchKernel(f, a.grid, a.block, args, shared, a.stream);
    }
    case Kernel::Reduce: {
        void* args[] = {&in0, &size, &scratch, &st};
        return cudaLaunchKernel(f, a.grid, a.block, args, shared, a.stream);
    }
    }
    return cudaErrorInvalidValue;
}

bool stampsOf(const uint64_t* slot, KernelStamps& out)
{
    uint64_t notStart = 0;
    uint64_t end = 0;
    for (size_t i = 0; i < kStampShards; ++i) {
        notStart = std::max(notStart, slot[i * kStampShardWords]);
        end = std::max(end, slot[i * kStampShardWords + 1]);
    }
    if (notStart == 0 || end == 0)
        return false;
    out.start = ~notStart;
    out.end = std::max(end, out.start);
    return true;
}

cudaError_t stampWave(uint32_t& wave)
{
    int device = 0;
    int sms = 0;
    int blocks = 0;
    cudaError_t e = cudaGetDevice(&device);
    if (e == cudaSuccess)
        e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
    if (e == cudaSuccess)
        e = cudaDeviceGetAttribute(&blocks, cudaDevAttrMaxBlocksPerMultiprocessor, device);
    wave = e == cudaSuccess ? uint32_t(std::max(1, sms) * std::max(1, blocks)) : 0;
    return e;
}

float* reduceResult(void* scratch)
{
    return reinterpret_cast<float*>(static_cast<unsigned char*>(scratch) + 4);
}

} // namespace streamscope::kernels
