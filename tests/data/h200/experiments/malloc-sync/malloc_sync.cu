// Does cudaMalloc / cudaFree wait for work in flight, and what does each cost, by size?
// For each size: (a) idle device: 30 malloc/free pairs, median cost of each; (b) busy device: a 300 us spin kernel in a
// non-blocking stream, then malloc (cost, and whether the kernel was still running when it returned), then free
// (same). 30 repeats, medians. Host steady clock.
#include <cuda_runtime.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>
static double nowUs() { return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
__global__ void spin(unsigned long long ns) {
    unsigned long long t0; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    unsigned long long t = t0; while (t - t0 < ns) asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
}
static double med(std::vector<double> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; }
int main(int argc, char** argv) {
    cudaFree(0);
    void* keep = nullptr;
    if (argc > 1) { cudaMalloc(&keep, 4096); printf("a 4 KiB allocation stays live beside the loops\n"); }
    cudaStream_t s; cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    spin<<<1, 32, 0, s>>>(1000); cudaDeviceSynchronize();
    size_t sizes[] = {4096, 65536, 1 << 20, 2 << 20, 4 << 20, 8 << 20, 16 << 20, 64 << 20, 256 << 20};
    printf("%10s %12s %12s | %12s %10s %12s %10s %12s\n", "bytes", "idle_malloc", "idle_free", "busy_malloc", "k_running", "busy_free", "k_running", "free_after_k");
    for (size_t b : sizes) {
        std::vector<double> im, ifr, bm, bf, fa; int runM = 0, runF = 0;
        for (int i = 0; i < 31; ++i) {
            void* p; double t0 = nowUs(); cudaMalloc(&p, b); double t1 = nowUs(); cudaFree(p); double t2 = nowUs();
            if (i) { im.push_back(t1 - t0); ifr.push_back(t2 - t1); }
        }
        for (int i = 0; i < 31; ++i) {
            cudaEvent_t e; cudaEventCreateWithFlags(&e, cudaEventDisableTiming);
            spin<<<1, 32, 0, s>>>(300000); cudaEventRecord(e, s);
            double k0 = nowUs();
            void* p; double t0 = nowUs(); cudaMalloc(&p, b); double t1 = nowUs();
            bool r1 = cudaEventQuery(e) == cudaErrorNotReady;
            double t2 = nowUs(); cudaFree(p); double t3 = nowUs();
            bool r2 = cudaEventQuery(e) == cudaErrorNotReady;
            cudaEventSynchronize(e); double k1 = nowUs();
            if (i) { bm.push_back(t1 - t0); bf.push_back(t3 - t2); runM += r1; runF += r2; fa.push_back(t3 - k1); }
            (void)k0; cudaEventDestroy(e);
        }
        printf("%10zu %12.2f %12.2f | %12.2f %7d/30 %12.2f %7d/30 %12.2f\n", b, med(im), med(ifr), med(bm), runM, med(bf), runF, med(fa));
    }
    // In a loop like lesson 17's: two 50 us kernels in two streams, malloc 1 MiB, free, 10 times.
    cudaStream_t s2; cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking);
    for (size_t b : {size_t(1) << 20, size_t(16) << 20}) {
        for (int rep = 0; rep < 3; ++rep) {
            cudaDeviceSynchronize(); double t0 = nowUs();
            for (int i = 0; i < 10; ++i) { spin<<<1, 32, 0, s>>>(50000); spin<<<1, 32, 0, s2>>>(50000); void* p; cudaMalloc(&p, b); cudaFree(p); }
            cudaDeviceSynchronize(); printf("loop %zu bytes: %.1f us\n", b, nowUs() - t0);
        }
    }
    cudaFree(keep);
    return 0;
}
