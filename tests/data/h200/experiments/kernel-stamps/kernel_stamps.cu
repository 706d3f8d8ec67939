// Can StreamScope's kernels time themselves? Each block stamps %globaltimer at its start (atomicMin) and end
// (atomicMax) into a per-launch slot. Measured: launch and makespan cost of the stamps against plain launches, with
// CUPTI detached, with only CUPTI's MEMCPY/MEMSET activity, and with CONCURRENT_KERNEL; the stamps against CUPTI's
// kernel records; %globaltimer's resolution; a host/GPU clock ping-pong over mapped memory.
// nvcc -O2 -arch=sm_90 kernel_stamps.cu -lcupti -o kernel_stamps
#include <cuda_runtime.h>
#include <cupti.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

typedef unsigned long long u64;
__device__ __forceinline__ u64 gt() { u64 t; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); return t; }
__device__ __forceinline__ void stampStart(u64* s) { if (s && threadIdx.x == 0) atomicMin(&s[0], gt()); }
__device__ __forceinline__ void stampEnd(u64* s) { if (s) { __syncthreads(); if (threadIdx.x == 0) atomicMax(&s[1], gt()); } }
__global__ void empty() {}
__global__ void emptyS(u64* s) { stampStart(s); stampEnd(s); }
__global__ void spin(u64 ns) { if (threadIdx.x == 0) { u64 t = gt(); while (gt() - t < ns) {} } __syncthreads(); }
__global__ void spinS(u64 ns, u64* s) { stampStart(s); if (threadIdx.x == 0) { u64 t = gt(); while (gt() - t < ns) {} } __syncthreads(); stampEnd(s); }
__global__ void resolution(u64* out) {
    u64 prev = gt(), n = 0, minD = ~0ull, sumD = 0;
    for (int i = 0; i < 200000 && n < 2000; ++i) { u64 t = gt(); if (t != prev) { u64 d = t - prev; minD = d < minD ? d : minD; sumD += d; ++n; prev = t; } }
    out[0] = minD; out[1] = n ? sumD / n : 0; out[2] = n;
}
__global__ void pong(volatile unsigned* flag, volatile u64* reply, int n) {
    for (int i = 1; i <= n; ++i) { while (*flag != unsigned(i)) {} reply[i] = gt(); __threadfence_system(); }
}
static u64 nowNs() { return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

static u64* slots;       // device, 2 per launch
static const int kMax = 4096;
static void resetSlots() {
    std::vector<u64> h(2 * kMax); for (int i = 0; i < kMax; ++i) { h[2 * i] = ~0ull; h[2 * i + 1] = 0; }
    cudaMemcpy(slots, h.data(), h.size() * 8, cudaMemcpyHostToDevice);
}
static std::vector<cudaStream_t> streams;

// case: 0 = 1000 empty one stream; 1 = N streams x 1 ms one-block spin; 2 = one 65536x256 empty grid, 20 times
static double once(int which, int n, bool stamped) {
    cudaDeviceSynchronize();
    u64 t0 = nowNs();
    if (which == 0) for (int i = 0; i < n; ++i) { if (stamped) emptyS<<<1, 32, 0, streams[0]>>>(slots + 2 * i); else empty<<<1, 32, 0, streams[0]>>>(); }
    if (which == 1) for (int i = 0; i < n; ++i) { if (stamped) spinS<<<1, 32, 0, streams[i]>>>(1000000, slots + 2 * i); else spin<<<1, 32, 0, streams[i]>>>(1000000); }
    if (which == 2) for (int i = 0; i < n; ++i) { if (stamped) emptyS<<<65536, 256, 0, streams[0]>>>(slots + 2 * i); else empty<<<65536, 256, 0, streams[0]>>>(); }
    cudaDeviceSynchronize();
    return (nowNs() - t0) / 1000.0;
}
static void report(const char* state, int which, int n, bool stamped) {
    std::vector<double> v;
    for (int r = 0; r < 9; ++r) { resetSlots(); v.push_back(once(which, n, stamped)); }
    std::sort(v.begin(), v.end());
    const char* what = which == 0 ? "empty launches, one stream" : which == 1 ? "1 ms one-block spins, one stream each" : "empty 65536x256 grids";
    printf("%-26s %-8s %4d %-40s median %9.1f us (min %9.1f max %9.1f)\n", state, stamped ? "stamped" : "plain", n, what, v[4], v[0], v[8]);
}
static void all(const char* state) {
    report(state, 0, 1000, false); report(state, 0, 1000, true);
    report(state, 1, 32, false); report(state, 1, 32, true);
    report(state, 1, 128, false); report(state, 1, 128, true);
    report(state, 2, 20, false); report(state, 2, 20, true);
}

struct Rec { unsigned corr; u64 start, end; };
static std::vector<Rec> recs;
static void CUPTIAPI bufReq(uint8_t** b, size_t* sz, size_t* maxRec) { *sz = 8 << 20; *b = (uint8_t*)aligned_alloc(8, *sz); *maxRec = 0; }
static void CUPTIAPI bufDone(CUcontext, uint32_t, uint8_t* b, size_t, size_t valid) {
    CUpti_Activity* r = nullptr;
    while (cuptiActivityGetNextRecord(b, valid, &r) == CUPTI_SUCCESS) {
        if (r->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) { auto* k = (CUpti_ActivityKernel9*)r; recs.push_back({k->correlationId, k->start, k->end}); }
    }
    free(b);
}
static void pct(const char* what, std::vector<long long> v) {
    std::sort(v.begin(), v.end()); if (v.empty()) return;
    printf("  %-44s n=%zu p10 %lld median %lld p90 %lld min %lld max %lld ns\n", what, v.size(), v[v.size() / 10], v[v.size() / 2], v[v.size() * 9 / 10], v.front(), v.back());
}
static void pingpong(const char* when) {
    unsigned* flag; u64* reply; const int n = 200;
    cudaHostAlloc(&flag, 4, cudaHostAllocMapped); cudaHostAlloc(&reply, (n + 1) * 8, cudaHostAllocMapped);
    *flag = 0; memset(reply, 0, (n + 1) * 8);
    unsigned* dflag; u64* dreply; cudaHostGetDevicePointer(&dflag, flag, 0); cudaHostGetDevicePointer(&dreply, reply, 0);
    pong<<<1, 1, 0, streams[0]>>>(dflag, dreply, n);
    std::vector<std::pair<long long, long long>> s; // rtt, offset
    for (int i = 1; i <= n; ++i) {
        u64 t0 = nowNs(); *(volatile unsigned*)flag = i;
        while (((volatile u64*)reply)[i] == 0) {}
        u64 t1 = nowNs();
        s.push_back({(long long)(t1 - t0), (long long)reply[i] - (long long)((t0 + t1) / 2)});
    }
    cudaDeviceSynchronize();
    std::sort(s.begin(), s.end());
    long long lo = s[0].second, hi = s[0].second; for (int i = 0; i < 10; ++i) { lo = std::min(lo, s[i].second); hi = std::max(hi, s[i].second); }
    printf("ping-pong %-10s rtt min %lld median %lld ns; offset (GPU - host) at min rtt %lld ns; 10 narrowest span %lld ns\n", when, s[0].first, s[n / 2].first, s[0].second, hi - lo);
    cudaFreeHost(flag); cudaFreeHost(reply);
}

int main() {
    cudaSetDevice(0);
    cudaDeviceProp p; cudaGetDeviceProperties(&p, 0); int drv; cudaDriverGetVersion(&drv);
    printf("GPU %s, driver API %d\n", p.name, drv);
    streams.resize(128); for (auto& s : streams) cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    cudaMalloc(&slots, 2 * kMax * 8);
    u64* res; cudaMallocManaged(&res, 24); resolution<<<1, 1>>>(res); cudaDeviceSynchronize();
    printf("globaltimer: smallest step %llu ns, mean step %llu ns over %llu steps\n", res[0], res[1], res[2]);
    for (int i = 0; i < 3; ++i) once(1, 128, true), once(0, 1000, true), once(2, 20, true);
    pingpong("start");
    all("no CUPTI");
    cuptiActivityRegisterCallbacks(bufReq, bufDone);
    cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY); cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMSET);
    once(0, 1000, true);
    all("CUPTI MEMCPY+MEMSET");
    cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    once(0, 1000, true); cuptiActivityFlushAll(1); recs.clear();
    all("CUPTI +CONCURRENT_KERNEL");
    // stamps against CUPTI's records: 1000 stamped 10 us spins, one stream, then 128 1 ms spins over 128 streams
    for (int pass = 0; pass < 2; ++pass) {
        resetSlots(); cuptiActivityFlushAll(1); recs.clear();
        const int n = pass == 0 ? 1000 : 128;
        for (int i = 0; i < n; ++i) {
            if (pass == 0) spinS<<<1, 32, 0, streams[0]>>>(10000, slots + 2 * i); else spinS<<<1, 32, 0, streams[i]>>>(1000000, slots + 2 * i);
        }
        cudaDeviceSynchronize(); cuptiActivityFlushAll(1);
        std::vector<u64> h(2 * n); cudaMemcpy(h.data(), slots, h.size() * 8, cudaMemcpyDeviceToHost);
        std::sort(recs.begin(), recs.end(), [](const Rec& a, const Rec& b) { return a.corr < b.corr; });
        if ((int)recs.size() < n) { printf("only %zu records\n", recs.size()); continue; }
        std::vector<long long> ds, de, dur;
        for (int i = 0; i < n; ++i) { const Rec& r = recs[recs.size() - n + i]; ds.push_back((long long)h[2 * i] - (long long)r.start); de.push_back((long long)r.end - (long long)h[2 * i + 1]); dur.push_back((long long)(r.end - r.start) - (long long)(h[2 * i + 1] - h[2 * i])); }
        printf("stamps vs CUPTI records, %s:\n", pass == 0 ? "1000 x 10 us spins, one stream" : "128 x 1 ms spins, 128 streams");
        pct("stamp start - CUPTI start", ds); pct("CUPTI end - stamp end", de); pct("CUPTI duration - stamp duration", dur);
    }
    cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL); cuptiActivityDisable(CUPTI_ACTIVITY_KIND_MEMCPY); cuptiActivityDisable(CUPTI_ACTIVITY_KIND_MEMSET);
    cuptiActivityFlushAll(1); cuptiFinalize();
    all("after cuptiFinalize");
    pingpong("end");
    return 0;
}
