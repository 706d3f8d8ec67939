// Does an event recorded into each stream just before an iteration (StreamScope's start anchors) make the
// iteration's launches slower? 128 non-blocking streams, one 1 ms one-block spin each, device sync to device sync on
// the host clock; the variants interleaved, 31 rounds, medians.
// nvcc -O2 -arch=sm_90 anchor_cost.cu -o anchor_cost
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

typedef unsigned long long u64;
__device__ __forceinline__ u64 gt() { u64 t; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); return t; }
__global__ void spin(u64 ns, u64* s) {
    if (s && threadIdx.x == 0) atomicMax(&s[0], ~gt());
    if (threadIdx.x == 0) { u64 t = gt(); while (gt() - t < ns) {} }
    __syncthreads();
    if (s && threadIdx.x == 0) atomicMax(&s[1], gt());
}
static double nowUs() { return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
int main(int argc, char** argv) {
    const int n = argc > 1 ? atoi(argv[1]) : 128;
    std::vector<cudaStream_t> st(n); std::vector<cudaEvent_t> ev(n), evEnd(n);
    for (int i = 0; i < n; ++i) { cudaStreamCreateWithFlags(&st[i], cudaStreamNonBlocking); cudaEventCreate(&ev[i]); cudaEventCreate(&evEnd[i]); }
    u64* slots; cudaMalloc(&slots, n * 512); cudaMemset(slots, 0, n * 512); cudaDeviceSynchronize();
    const char* names[] = {"plain", "stamped", "anchors before", "anchors before + after", "stamped + anchors before + after"};
    std::vector<std::vector<double>> t(5);
    for (int round = 0; round < 32; ++round) for (int v = 0; v < 5; ++v) {
        const bool stamped = v == 1 || v == 4, before = v >= 2, after = v >= 3;
        if (before) for (int i = 0; i < n; ++i) cudaEventRecord(ev[i], st[i]);
        cudaDeviceSynchronize();
        double t0 = nowUs();
        for (int i = 0; i < n; ++i) spin<<<1, 32, 0, st[i]>>>(1000000, stamped ? slots + 64 * i : nullptr);
        cudaDeviceSynchronize();
        double t1 = nowUs();
        if (after) { for (int i = 0; i < n; ++i) cudaEventRecord(evEnd[i], st[i]); cudaDeviceSynchronize(); }
        if (stamped) { cudaMemset(slots, 0, n * 512); cudaDeviceSynchronize(); }
        if (round) t[v].push_back(t1 - t0);
    }
    for (int v = 0; v < 5; ++v) {
        std::sort(t[v].begin(), t[v].end());
        printf("%d streams %-34s median %7.1f us (p10 %7.1f p90 %7.1f)\n", n, names[v], t[v][t[v].size() / 2], t[v][t[v].size() / 10], t[v][t[v].size() * 9 / 10]);
    }
}
