// The kernel library on a real GPU: every compute kernel against a CPU reference, with derived and small given
// grids (blocks walk the problem grid-stride), and the spin kernel's duration.
#include "gpu_clock.cuh"
#include "gpu_test_support.h"
#include "kernel_library.cuh"

#include <cuda_runtime.h>

#include <chrono>
#include <cmath>
#include <random>
#include <vector>

namespace k = streamscope::kernels;

namespace {

#define CUDA_OK(call)                                                                                                  \
    do {                                                                                                               \
        const cudaError_t e_ = (call);                                                                                 \
        ASSERT_EQ(e_, cudaSuccess) << #call << ": " << cudaGetErrorString(e_);                                         \
    } while (0)

// Device buffer that frees itself.
struct DeviceBuffer {
    void* ptr = nullptr;
    explicit DeviceBuffer(size_t bytes)
    {
        if (cudaMalloc(&ptr, std::max<size_t>(bytes, 16)) != cudaSuccess)
            ptr = nullptr;
        else
            (void)cudaMemset(ptr, 0, std::max<size_t>(bytes, 16));
    }
    ~DeviceBuffer()
    {
        if (ptr)
            (void)cudaFree(ptr);
    }
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;
    float* f() const { return static_cast<float*>(ptr); }
};

std::vector<float> randomFloats(size_t n, unsigned seed, float lo = -1.0f, float hi = 1.0f)
{
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(lo, hi);
    std::vector<float> v(n);
    for (auto& x : v)
        x = dist(rng);
    return v;
}

dim3 tiles2d(int64_t n, uint32_t tile)
{
    const auto t = uint32_t((n + tile - 1) / tile);
    return dim3(t, t, 1);
}

class KernelLibrary : public ::testing::Test {
protected:
    void SetUp() override
    {
        STREAMSCOPE_REQUIRE_GPU();
        ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
        ASSERT_EQ(cudaStreamCreateWithFlags(&m_stream, cudaStreamNonBlocking), cudaSuccess);
    }
    void TearDown() override
    {
        if (m_stream)
            (void)cudaStreamDestroy(m_stream);
    }
    cudaStream_t m_stream = nullptr;
};

TEST_F(KernelLibrary, FmaMatchesCpu)
{
    const dim3 grid(3, 2, 1);
    const dim3 block(64, 2, 1);
    const int64_t iterations = 1000;
    const auto needs = k::bufferNeeds(k::Kernel::Fma, iterations, grid, block);
    const size_t threads = 3 * 2 * 64 * 2;
    ASSERT_EQ(needs.outFloats, threads);
    DeviceBuffer out(needs.outFloats * sizeof(float));
    ASSERT_NE(out.ptr, nullptr);
    k::LaunchArgs a;
    a.kernel = k::Kernel::Fma;
    a.grid = grid;
    a.block = block;
    a.stream = m_stream;
    a.size = iterations;
    a.out = out.f();
    a.outCount = int64_t(needs.outFloats);
    CUDA_OK(k::launch(a));
    CUDA_OK(cudaStreamSynchronize(m_stream));
    std::vector<float> got(threads);
    CUDA_OK(cudaMemcpy(got.data(), out.ptr, threads * sizeof(float), cudaMemcpyDeviceToHost));
    for (size_t tid = 0; tid < threads; ++tid) {
        float a0 = 1.0f + float(tid & 7u) * 0.125f;
        float a1 = a0 + 0.5f;
        float a2 = a0 + 0.25f;
        float a3 = a0 + 0.75f;
        for (int64_t i = 0; i < iterations; ++i) {
            a0 = std::fma(a0, 0.999f, 0.001f);
            a1 = std::fma(a1, 0.999f, 0.001f);
            a2 = std::fma(a2, 0.999f, 0.001f);
            a3 = std::fma(a3, 0.999f, 0.001f);
        }
        const float want = ((a0 + a1) + a2) + a3;
        ASSERT_NEAR(got[tid], want, 1e-5f * std::fabs(want)) << "thread " << tid;
    }
}

TEST_F(KernelLibrary, TriadMatchesCpuWithDerivedAndSmallGrids)
{
    const int64_t n = (1 << 20) + 3;
    const auto b = randomFloats(size_t(n), 1);
    const auto c = randomFloats(size_t(n), 2);
    DeviceBuffer da(size_t(n) * 4), db(size_t(n) * 4), dc(size_t(n) * 4);
    ASSERT_TRUE(da.ptr && db.ptr && dc.ptr);
    CUDA_OK(cudaMemcpy(db.ptr, b.data(), size_t(n) * 4, cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(dc.ptr, c.data(), size_t(n) * 4, cudaMemcpyHostToDevice));
    for (dim3 grid : {dim3(uint32_t((n + 255) / 256), 1, 1), dim3(7, 1, 1)}) {
        CUDA_OK(cudaMemset(da.ptr, 0, size_t(n) * 4));
        k::LaunchArgs a;
        a.kernel = k::Kernel::Triad;
        a.grid = grid;
        a.block = dim3(256, 1, 1);
        a.stream = m_stream;
        a.size = n;
        a.out = da.f();
        a.in0 = db.f();
        a.in1 = dc.f();
        a.scalar = 3.0f;
        CUDA_OK(k::launch(a));
        CUDA_OK(cudaStreamSynchronize(m_stream));
        std::vector<float> got(static_cast<size_t>(n));
        CUDA_OK(cudaMemcpy(got.data(), da.ptr, size_t(n) * 4, cudaMemcpyDeviceToHost));
        for (int64_t i = 0; i < n; ++i)
            ASSERT_NEAR(got[size_t(i)], b[size_t(i)] + 3.0f * c[size_t(i)], 1e-5f) << "grid " << grid.x << " i " << i;
    }
}

TEST_F(KernelLibrary, MatmulMatchesCpuForEveryTile)
{
    const int64_t n = 100; // not a multiple of any tile: the edges are exercised
    const auto A = randomFloats(size_t(n * n), 3);
    const auto B = randomFloats(size_t(n * n), 4);
    std::vector<double> want(size_t(n * n), 0.0);
    for (int64_t i = 0; i < n; ++i)
        for (int64_t kk = 0; kk < n; ++kk)
            for (int64_t j = 0; j < n; ++j)
                want[size_t(i * n + j)] += double(A[size_t(i * n + kk)]) * double(B[size_t(kk * n + j)]);
    DeviceBuffer dA(size_t(n * n) * 4), dB(size_t(n * n) * 4), dC(size_t(n * n) * 4);
    ASSERT_TRUE(dA.ptr && dB.ptr && dC.ptr);
    CUDA_OK(cudaMemcpy(dA.ptr, A.data(), size_t(n * n) * 4, cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(dB.ptr, B.data(), size_t(n * n) * 4, cudaMemcpyHostToDevice));
    for (uint32_t tile : {8u, 16u, 32u}) {
        for (dim3 grid : {tiles2d(n, tile), dim3(5, 1, 1)}) {
            ASSERT_EQ(k::checkShape(k::Kernel::Matmul, grid, dim3(tile, tile, 1), n), "");
            CUDA_OK(cudaMemset(dC.ptr, 0, size_t(n * n) * 4));
            k::LaunchArgs a;
            a.kernel = k::Kernel::Matmul;
            a.grid = grid;
            a.block = dim3(tile, tile, 1);
            a.stream = m_stream;
            a.size = n;
            a.out = dC.f();
            a.in0 = dA.f();
            a.in1 = dB.f();
            CUDA_OK(k::launch(a));
            CUDA_OK(cudaStreamSynchronize(m_stream));
            std::vector<float> got(size_t(n * n));
            CUDA_OK(cudaMemcpy(got.data(), dC.ptr, size_t(n * n) * 4, cudaMemcpyDeviceToHost));
            for (size_t i = 0; i < got.size(); ++i)
                ASSERT_NEAR(got[i], want[i], 1e-3)
                    << "tile " << tile << " grid " << grid.x << "x" << grid.y << " element " << i;
        }
    }
}

TEST_F(KernelLibrary, TransposeMatchesCpuForEveryTile)
{
    const int64_t n = 1000;
    const auto in = randomFloats(size_t(n * n), 5);
    DeviceBuffer dIn(size_t(n * n) * 4), dOut(size_t(n * n) * 4);
    ASSERT_TRUE(dIn.ptr && dOut.ptr);
    CUDA_OK(cudaMemcpy(dIn.ptr, in.data(), size_t(n * n) * 4, cudaMemcpyHostToDevice));
    for (dim3 block : {dim3(32, 8, 1), dim3(16, 16, 1), dim3(64, 4, 1), dim3(8, 3, 1)}) {
        for (dim3 grid : {tiles2d(n, block.x), dim3(264, 1, 1)}) {
            ASSERT_EQ(k::checkShape(k::Kernel::Transpose, grid, block, n), "");
            CUDA_OK(cudaMemset(dOut.ptr, 0, size_t(n * n) * 4));
            k::LaunchArgs a;
            a.kernel = k::Kernel::Transpose;
            a.grid = grid;
            a.block = block;
            a.stream = m_stream;
            a.size = n;
            a.out = dOut.f();
            a.in0 = dIn.f();
            CUDA_OK(k::launch(a));
            CUDA_OK(cudaStreamSynchronize(m_stream));
            std::vector<float> got(size_t(n * n));
            CUDA_OK(cudaMemcpy(got.data(), dOut.ptr, size_t(n * n) * 4, cudaMemcpyDeviceToHost));
            for (int64_t r = 0; r < n; ++r)
                for (int64_t c = 0; c < n; ++c)
                    ASSERT_EQ(got[size_t(r * n + c)], in[size_t(c * n + r)])
                        << "block " << block.x << "x" << block.y << " grid " << grid.x << " at " << r << "," << c;
        }
    }
}

TEST_F(KernelLibrary, ReduceMatchesCpuAndRelaunches)
{
    const int64_t n = 10'000'019;
    const auto in = randomFloats(size_t(n), 6, 0.0f, 1.0f);
    double want = 0;
    for (float x : in)
        want += double(x);
    DeviceBuffer dIn(size_t(n) * 4);
    ASSERT_NE(dIn.ptr, nullptr);
    CUDA_OK(cudaMemcpy(dIn.ptr, in.data(), size_t(n) * 4, cudaMemcpyHostToDevice));
    for (auto [grid, block] :
         {std::pair{dim3(264, 1, 1), dim3(256, 1, 1)}, std::pair{dim3(1000, 1, 1), dim3(100, 1, 1)},
          std::pair{dim3(1, 1, 1), dim3(1024, 1, 1)}}) {
        const auto needs = k::bufferNeeds(k::Kernel::Reduce, n, grid, block);
        DeviceBuffer scratch(needs.scratchBytes); // zeroed: the block counter starts at 0
        ASSERT_NE(scratch.ptr, nullptr);
        for (int launch = 0; launch < 3; ++launch) { // the last block resets the counter for the next launch
            k::LaunchArgs a;
            a.kernel = k::Kernel::Reduce;
            a.grid = grid;
            a.block = block;
            a.stream = m_stream;
            a.size = n;
            a.in0 = dIn.f();
            a.scratch = scratch.ptr;
            CUDA_OK(k::launch(a));
            CUDA_OK(cudaStreamSynchronize(m_stream));
            float got = 0;
            CUDA_OK(cudaMemcpy(&got, k::reduceResult(scratch.ptr), sizeof got, cudaMemcpyDeviceToHost));
            ASSERT_NEAR(double(got), want, 1e-4 * want)
                << "grid " << grid.x << " block " << block.x << " launch " << launch;
        }
    }
}

TEST_F(KernelLibrary, SpinLastsAtLeastTheRequestedTime)
{
    cudaEvent_t start = nullptr;
    cudaEvent_t end = nullptr;
    CUDA_OK(cudaEventCreate(&start));
    CUDA_OK(cudaEventCreate(&end));
    // CUDA loads a kernel's module at its first launch (lazy loading): a first launch between two events measured
    // 415 us for a 20 us spin on an H200. Load it first, as the backend does in prepare().
    CUDA_OK(k::preload(k::Kernel::Spin, dim3(128, 1, 1)));
    for (double us : {20.0, 200.0, 2000.0}) {
        for (dim3 grid : {dim3(1, 1, 1), dim3(264, 1, 1)}) {
            k::LaunchArgs a;
            a.kernel = k::Kernel::Spin;
            a.grid = grid;
            a.block = dim3(128, 1, 1);
            a.stream = m_stream;
            a.spinNs = uint64_t(us * 1000);
            CUDA_OK(cudaEventRecord(start, m_stream));
            CUDA_OK(k::launch(a));
            CUDA_OK(cudaEventRecord(end, m_stream));
            CUDA_OK(cudaEventSynchronize(end));
            float ms = 0;
            CUDA_OK(cudaEventElapsedTime(&ms, start, end));
            // %globaltimer may tick in steps of up to ~1 us; events resolve ~0.5 us. The upper bound only says
            // that the spin ends (timing figures belong to the benchmarks).
            EXPECT_GE(double(ms) * 1000.0, us - 2.0) << "spin of " << us << " us, grid " << grid.x;
            EXPECT_LT(double(ms) * 1000.0, us * 2.0 + 1000.0) << "spin of " << us << " us, grid " << grid.x;
        }
    }
    (void)cudaEventDestroy(start);
    (void)cudaEventDestroy(end);
}

int64_t steadyNs()
{
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

// Kernel stamps: every kernel, given a zeroed slot, stamps a start and an end; a spin's stamps span its duration;
// a wide grid (past one wave of resident blocks) stamps too; with no slot nothing is written.
TEST_F(KernelLibrary, KernelsStampTheirStartAndEnd)
{
    uint32_t wave = 0;
    CUDA_OK(k::stampWave(wave));
    ASSERT_GT(wave, 0u);
    const int64_t n = 1 << 22;
    DeviceBuffer out(size_t(n) * 4);
    DeviceBuffer in0(size_t(n) * 4);
    DeviceBuffer in1(size_t(n) * 4);
    DeviceBuffer scratch(k::bufferNeeds(k::Kernel::Reduce, n, dim3(1024, 1, 1), dim3(256, 1, 1)).scratchBytes);
    struct Case {
        k::Kernel kernel;
        dim3 grid;
        dim3 block;
        int64_t size;
        uint64_t spinNs;
    };
    const std::vector<Case> cases{
        {k::Kernel::Spin, dim3(1, 1, 1), dim3(32, 1, 1), 0, 100'000},
        {k::Kernel::Spin, dim3(wave * 3, 1, 1), dim3(32, 1, 1), 0, 5'000},
        {k::Kernel::Empty, dim3(wave * 4 + 7, 1, 1), dim3(256, 1, 1), 0, 0},
        {k::Kernel::Fma, dim3(264, 1, 1), dim3(256, 1, 1), 1000, 0},
        {k::Kernel::Triad, dim3(uint32_t(n / 256), 1, 1), dim3(256, 1, 1), n, 0},
        {k::Kernel::Matmul, tiles2d(512, 16), dim3(16, 16, 1), 512, 0},
        {k::Kernel::Transpose, tiles2d(1024, 32), dim3(32, 8, 1), 1024, 0},
        {k::Kernel::Reduce, dim3(1024, 1, 1), dim3(256, 1, 1), n, 0},
    };
    DeviceBuffer slots(cases.size() * k::kStampSlotBytes);
    std::vector<int64_t> before(cases.size());
    for (size_t i = 0; i < cases.size(); ++i) {
        const Case& c = cases[i];
        CUDA_OK(k::preload(c.kernel, c.block));
        k::LaunchArgs a;
        a.kernel = c.kernel;
        a.grid = c.grid;
        a.block = c.block;
        a.stream = m_stream;
        a.size = c.size;
        a.spinNs = c.spinNs;
        a.out = out.f();
        a.in0 = in0.f();
        a.in1 = in1.f();
        a.outCount = k::kFmaMaxOutputs;
        a.scratch = scratch.ptr;
        a.stamps = static_cast<uint64_t*>(slots.ptr) + i * k::kStampSlotWords;
        a.stampWave = wave;
        CUDA_OK(k::launch(a));
        a.stamps = nullptr; // the same kernel again without stamps: it must not write the slot
        CUDA_OK(k::launch(a));
    }
    CUDA_OK(cudaStreamSynchronize(m_stream));
    std::vector<uint64_t> host(cases.size() * k::kStampSlotWords);
    CUDA_OK(cudaMemcpy(host.data(), slots.ptr, host.size() * 8, cudaMemcpyDeviceToHost));
    uint64_t previousEnd = 0;
    for (size_t i = 0; i < cases.size(); ++i) {
        k::KernelStamps st;
        ASSERT_TRUE(k::stampsOf(host.data() + i * k::kStampSlotWords, st)) << k::kernelName(cases[i].kernel);
        EXPECT_GE(st.end, st.start) << k::kernelName(cases[i].kernel);
        EXPECT_GE(st.start, previousEnd) << k::kernelName(cases[i].kernel) << " starts before the one before it ended";
        previousEnd = st.end;
    }
    k::KernelStamps spin;
    ASSERT_TRUE(k::stampsOf(host.data(), spin));
    EXPECT_NEAR(double(spin.end - spin.start) / 1000.0, 100.0, 2.0) << "a 100 us one-block spin";
    const std::vector<uint64_t> zero(k::kStampSlotWords, 0);
    k::KernelStamps none;
    EXPECT_FALSE(k::stampsOf(zero.data(), none));
}

// The GPU clock against the host clock: a stamped kernel launched after one host reading and synchronized before
// another maps between them, to within the probe's error bound.
TEST_F(KernelLibrary, GpuClockProbeMapsStampsBetweenHostTimes)
{
    k::GpuClockProbe probe;
    CUDA_OK(probe.init());
    k::GpuClockSample first;
    CUDA_OK(probe.sample(32, first));
    ASSERT_GE(first.errorNs, 0);
    EXPECT_LT(first.errorNs, 50'000) << "half the narrowest round trip";
    uint32_t wave = 0;
    CUDA_OK(k::stampWave(wave));
    DeviceBuffer slot(k::kStampSlotBytes);
    k::LaunchArgs a;
    a.kernel = k::Kernel::Spin;
    a.spinNs = 200'000;
    a.stream = m_stream;
    a.stamps = static_cast<uint64_t*>(slot.ptr);
    a.stampWave = wave;
    CUDA_OK(k::preload(a.kernel, a.block));
    const int64_t hostBefore = steadyNs();
    CUDA_OK(k::launch(a));
    CUDA_OK(cudaStreamSynchronize(m_stream));
    const int64_t hostAfter = steadyNs();
    k::GpuClockSample second;
    CUDA_OK(probe.sample(32, second));
    std::vector<uint64_t> host(k::kStampSlotWords);
    CUDA_OK(cudaMemcpy(host.data(), slot.ptr, k::kStampSlotBytes, cudaMemcpyDeviceToHost));
    k::KernelStamps st;
    ASSERT_TRUE(k::stampsOf(host.data(), st));
    const int64_t start = k::gpuToHostNs(int64_t(st.start), first, second);
    const int64_t end = k::gpuToHostNs(int64_t(st.end), first, second);
    const int64_t bound = std::max(first.errorNs, second.errorNs) + 1000;
    EXPECT_GE(start + bound, hostBefore) << "the kernel starts after its launch call began";
    EXPECT_LE(end, hostAfter + bound) << "and ends before the sync returned";
    EXPECT_NEAR(double(end - start) / 1000.0, 200.0, 2.0);
}

TEST_F(KernelLibrary, EmptyAndLargeDynamicSharedMemoryLaunch)
{
    k::LaunchArgs a;
    a.kernel = k::Kernel::Empty;
    a.grid = dim3(10, 1, 1);
    a.block = dim3(64, 1, 1);
    a.stream = m_stream;
    CUDA_OK(k::launch(a));
    // 96 KiB of dynamic shared memory needs the opt-in attribute (H100/H200 allow up to 227 KiB per block).
    cudaDeviceProp prop{};
    CUDA_OK(cudaGetDeviceProperties(&prop, 0));
    const size_t shared = 96 * 1024;
    if (prop.sharedMemPerBlockOptin >= shared) {
        a.kernel = k::Kernel::Spin;
        a.spinNs = 1000;
        a.sharedBytes = shared;
        CUDA_OK(k::prepareSharedMemory(a.kernel, a.block, a.sharedBytes));
        CUDA_OK(k::launch(a));
    }
    CUDA_OK(cudaStreamSynchronize(m_stream));
}

} // namespace

TEST(KernelShapes, RejectsWhatTheKernelsCannotRun)
{
    // Pure host checks: no GPU needed.
    EXPECT_NE(k::checkShape(k::Kernel::Matmul, dim3(1, 1, 1), dim3(256, 1, 1), 64), "");
    EXPECT_NE(k::checkShape(k::Kernel::Matmul, dim3(1, 1, 1), dim3(16, 8, 1), 64), "");
    EXPECT_EQ(k::checkShape(k::Kernel::Matmul, dim3(1, 1, 1), dim3(16, 16, 1), 64), "");
    EXPECT_NE(k::checkShape(k::Kernel::Transpose, dim3(1, 1, 1), dim3(32, 64, 1), 64), "");
    EXPECT_EQ(k::checkShape(k::Kernel::Transpose, dim3(1, 1, 1), dim3(32, 8, 1), 64), "");
    EXPECT_NE(k::checkShape(k::Kernel::Spin, dim3(0, 1, 1), dim3(32, 1, 1), 0), "");
    EXPECT_NE(k::checkShape(k::Kernel::Spin, dim3(1, 1, 1), dim3(64, 32, 1), 0), "");
    EXPECT_EQ(k::bufferNeeds(k::Kernel::Triad, 100, dim3(1, 1, 1), dim3(32, 1, 1)).totalBytes(), 1200u);
}
