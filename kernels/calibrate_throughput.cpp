// The calibration's throughput and CUPTI passes, Calibrator members like those of calibrate_benchmarks.cpp:
// kernelThroughput (the kernel library's triad, fma, matmul and transpose, and a triad of few blocks for
// memory_saturation) and cuptiSplit (an empty kernel's duration and gap from CUPTI records, in a pass of its own
// after everything untimed).
#include "calibrator.h"

#include "calibrate_kernels.cuh"
#include "cuda_backend.h"
#include "cupti_tracer.h"
#include "kernel_library.cuh"

#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace streamscope::calibrate {

void Calibrator::kernelThroughput()
{
    // The kernel library's kernels with the shapes scenarios give them; `count` back to back, per kernel.
    auto perKernel = [&](const kernels::LaunchArgs& a, int count) {
        return double(untimed([&] {
                   for (int i = 0; i < count; ++i)
                       check(kernels::launch(a), "cudaLaunchKernel");
               }))
            / count;
    };
    const int64_t n = m_opt.quick ? (int64_t(1) << 24) : (int64_t(1) << 27);
    float* a = nullptr;
    float* b = nullptr;
    float* c = nullptr;
    check(cudaMalloc(&a, size_t(n) * 4), "cudaMalloc");
    check(cudaMalloc(&b, size_t(n) * 4), "cudaMalloc");
    check(cudaMalloc(&c, size_t(n) * 4), "cudaMalloc");
    check(cudaMemset(b, 0, size_t(n) * 4), "cudaMemset");
    check(cudaMemset(c, 0, size_t(n) * 4), "cudaMemset");
    kernels::LaunchArgs triad;
    triad.kernel = Kernel::Triad;
    triad.block = dim3(256, 1, 1);
    triad.grid = dim3(uint32_t(std::min<int64_t>((n + 255) / 256, int64_t(1) << 20)), 1, 1); // effectiveGrid()
    triad.size = n;
    triad.out = a;
    triad.in0 = b;
    triad.in1 = c;
    triad.stream = m_s;
    measured(
        "triad_kernel_ns", "triad kernel, " + std::to_string(n >> 20) + " Mi floats", "ns",
        [&] { return perKernel(triad, 5); },
        "host clock from device sync to device sync of 5 triad kernels (kernel library, block 256, the derived "
        "grid) over "
            + std::to_string(n) + " floats in one stream, per kernel");
    // The same kernel with a quarter of the blocks the model fills (264 of 256 threads on an H200's 132 SMs): a
    // streaming kernel of few blocks moves more than its blocks' share of the bandwidth.
    kernels::LaunchArgs fewTriad = triad;
    fewTriad.size = std::min<int64_t>(n, int64_t(1) << 24);
    fewTriad.grid = dim3(uint32_t(std::max(1, m_sms * 2)), 1, 1);
    measured(
        "triad_few_blocks_kernel_ns",
        "triad kernel, " + std::to_string(fewTriad.size >> 20) + " Mi floats, 2 blocks per SM", "ns",
        [&] { return perKernel(fewTriad, 5); },
        "as triad_kernel_ns with 5 kernels over " + std::to_string(fewTriad.size) + " floats and a grid of "
            + std::to_string(fewTriad.grid.x)
            + " blocks of 256 threads (2 per SM, a quarter of the 8 the model fills)");
    m_fewTriadN = double(fewTriad.size);
    m_fewTriadBlocks = double(fewTriad.grid.x);

    kernels::LaunchArgs fma;
    fma.kernel = Kernel::Fma;
    fma.block = dim3(256, 1, 1);
    fma.grid = dim3(uint32_t(m_sms) * 8u * 2u, 1, 1); // two full waves of 8 blocks of 256 threads per SM
    fma.size = m_opt.quick ? 2000 : 20000;
    fma.out = a;
    fma.outCount = std::min<int64_t>(n, kernels::kFmaMaxOutputs);
    fma.stream = m_s;
    measured(
        "fma_kernel_ns", "fma kernel", "ns", [&] { return perKernel(fma, 3); },
        "host clock from device sync to device sync of 3 fma kernels (kernel library, " + std::to_string(fma.size)
            + " iterations, grid " + std::to_string(fma.grid.x) + " x 256 threads) in one stream, per kernel");

    const int64_t m = m_opt.quick ? 1024 : 4096;
    float* ma = nullptr;
    float* mb = nullptr;
    float* mc = nullptr;
    check(cudaMalloc(&ma, size_t(m * m) * 4), "cudaMalloc");
    check(cudaMalloc(&mb, size_t(m * m) * 4), "cudaMalloc");
    check(cudaMalloc(&mc, size_t(m * m) * 4), "cudaMalloc");
    check(cudaMemset(ma, 0, size_t(m * m) * 4), "cudaMemset");
    check(cudaMemset(mb, 0, size_t(m * m) * 4), "cudaMemset");
    kernels::LaunchArgs mm;
    mm.kernel = Kernel::Matmul;
    mm.block = dim3(16, 16, 1);
    mm.grid = dim3(uint32_t((m + 15) / 16), uint32_t((m + 15) / 16), 1); // effectiveGrid()
    mm.size = m;
    mm.in0 = ma;
    mm.in1 = mb;
    mm.out = mc;
    mm.stream = m_s;
    measured(
        "matmul_kernel_ns", "matmul kernel, " + std::to_string(m) + " x " + std::to_string(m), "ns",
        [&] { return perKernel(mm, 3); },
        "host clock from device sync to device sync of 3 matmul kernels (kernel library, 16 x 16 tiles, the "
        "derived grid) of "
            + std::to_string(m) + " x " + std::to_string(m) + " floats in one stream, per kernel");
    // The shapes lessons 01 and 02 give their kernels (264 blocks of 256 threads: 2 of the 8 per SM the model
    // fills), to compare with what the model makes of them (its time scales with the blocks resident).
    mm.size = std::min<int64_t>(m, 768);
    mm.grid = dim3(264, 1, 1);
    measured(
        "matmul_264_blocks_kernel_ns", "matmul kernel, 768 x 768, 264 blocks (lessons 01, 02)", "ns",
        [&] { return perKernel(mm, 5); },
        "as matmul_kernel_ns with 5 kernels of 768 x 768 floats and a grid of 264 blocks of 16 x 16 threads, the "
        "shape of lessons 01 and 02 (not a profile field: it shows how a kernel of a quarter of the resident "
        "blocks runs)");
    // The same kernel with its buffers evicted: each one after a memset of twice the L2 into another buffer (the
    // memsets timed alone and taken off).
    int l2 = 0;
    check(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, m_opt.device), "cudaDeviceGetAttribute");
    if (l2 > 0) {
        const size_t scratchBytes = size_t(l2) * 2;
        void* scratch = nullptr;
        check(cudaMalloc(&scratch, scratchBytes), "cudaMalloc");
        auto memsets = [&](bool withMatmul) {
            return double(untimed([&] {
                       for (int i = 0; i < 5; ++i) {
                           check(cudaMemsetAsync(scratch, i, scratchBytes, m_s), "cudaMemsetAsync");
                           if (withMatmul)
                               check(kernels::launch(mm), "cudaLaunchKernel");
                       }
                   }))
                / 5;
        };
        measured(
            "matmul_264_blocks_cold_kernel_ns", "matmul kernel, 768 x 768, 264 blocks, buffers evicted", "ns",
            [&] { return memsets(true) - memsets(false); },
            "as matmul_264_blocks_kernel_ns, each kernel after a cudaMemsetAsync of " + std::to_string(scratchBytes)
                + " bytes (twice the L2) into another buffer, less the same memsets alone");
        check(cudaFree(scratch), "cudaFree");
    }
    kernels::LaunchArgs tr;
    tr.kernel = Kernel::Transpose;
    tr.block = dim3(32, 8, 1);
    tr.grid = dim3(264, 1, 1);
    tr.size = std::min<int64_t>(m, 4096);
    tr.in0 = ma;
    tr.out = mc;
    tr.stream = m_s;
    measured(
        "transpose_264_blocks_kernel_ns", "transpose kernel, 4096 x 4096, 264 blocks (lessons 01, 02)", "ns",
        [&] { return perKernel(tr, 5); },
        "host clock from device sync to device sync of 5 transpose kernels (kernel library, 32 x 8 threads) of "
            + std::to_string(tr.size) + " x " + std::to_string(tr.size)
            + " floats with a grid of 264 blocks, the "
              "shape of lessons 01 and 02 (not a profile field)");
    // A reduce of one element per thread (the derived grid): every block ends with a __threadfence and an atomicAdd
    // on the one counter, which the device serializes (on an H200 262144 blocks took 0.93 ms, 3.5 ns each).
    kernels::LaunchArgs red;
    red.kernel = Kernel::Reduce;
    red.block = dim3(256, 1, 1);
    red.size = n / 2;
    red.grid = dim3(uint32_t((red.size + 255) / 256), 1, 1); // effectiveGrid()
    red.in0 = b;
    const size_t scratchBytes = kernels::bufferNeeds(Kernel::Reduce, red.size, red.grid, red.block).scratchBytes;
    check(cudaMalloc(&red.scratch, scratchBytes), "cudaMalloc");
    check(cudaMemset(red.scratch, 0, scratchBytes), "cudaMemset");
    red.stream = m_s;
    measured(
        "reduce_kernel_ns", "reduce kernel, " + std::to_string(red.size >> 20) + " Mi floats, one per thread", "ns",
        [&] { return perKernel(red, 3); },
        "host clock from device sync to device sync of 3 reduce kernels (kernel library, block 256, the derived grid "
        "of "
            + std::to_string(red.grid.x) + " blocks) over " + std::to_string(red.size)
            + " floats in one stream, per kernel");
    m_reduceBlocks = double(red.grid.x);
    check(cudaFree(red.scratch), "cudaFree");
    m_fmaIterations = fma.size;
    m_fmaThreads = double(fma.grid.x) * 256;
    m_triadN = double(n);
    m_matmulN = double(m);
    for (float* p : {a, b, c, ma, mb, mc})
        check(cudaFree(p), "cudaFree");
}

void Calibrator::cuptiSplit()
{
    auto& cupti = CuptiTracer::instance();
    std::string why = cuptiUnavailableReason();
    if (why.empty())
        why = cupti.attach();
    if (!why.empty()) {
        m_cuptiNote = why;
        return;
    }
    const int n = m_opt.quick ? 100 : 400;
    std::vector<double> gaps;
    measured(
        "cupti_empty_kernel_ns", "empty kernel duration (CUPTI)", "ns",
        [&] {
            check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
            (void)cupti.take();
            if (std::string e = cupti.enable(); !e.empty())
                throw CudaFailure{"CUPTI: " + e};
            launchSpin(m_s, 4'000'000);
            for (int i = 0; i < n; ++i)
                launchEmpty(m_s);
            sync();
            cupti.disable();
            auto records = cupti.take();
            std::vector<std::pair<int64_t, int64_t>> spans;
            for (const auto& r : records)
                if (r.kind == CuptiRecordKind::Kernel && r.name.find("emptyKernel") != std::string::npos)
                    spans.emplace_back(r.start, r.end);
            std::sort(spans.begin(), spans.end());
            if (spans.size() < 2)
                throw CudaFailure{"CUPTI recorded " + std::to_string(spans.size()) + " of the " + std::to_string(n)
                                  + " empty kernels"};
            std::vector<double> d;
            std::vector<double> g;
            for (size_t i = 0; i < spans.size(); ++i) {
                d.push_back(double(spans[i].second - spans[i].first));
                if (i > 0)
                    g.push_back(double(spans[i].first - spans[i - 1].second));
            }
            gaps.push_back(median(g));
            return median(d);
        },
        "CUPTI CONCURRENT_KERNEL records of " + std::to_string(n)
            + " empty kernels queued behind a 4 ms kernel in one "
              "stream (a pass of its own, after every untimed figure): median of end - start");
    gaps.erase(gaps.begin());
    figure("cupti_empty_kernel_gap_ns", "gap between queued empty kernels (CUPTI)", "ns", gaps,
           "the same records: median of the next kernel's start - this kernel's end");
}

} // namespace streamscope::calibrate
