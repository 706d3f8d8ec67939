#include <cuda_runtime.h>
#include <cupti.h>
#include <nvtx3/nvToolsExt.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>
#include <algorithm>
__global__ void empty() {}
static double nowUs() { return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
static cudaStream_t s;
static double loop(int n, bool nvtx) {
    cudaDeviceSynchronize(); double t0 = nowUs();
    for (int i = 0; i < n; ++i) { if (nvtx) nvtxRangePushA("e"); empty<<<1, 32, 0, s>>>(); if (nvtx) nvtxRangePop(); }
    cudaDeviceSynchronize(); return nowUs() - t0;
}
static void report(const char* what, bool nvtx, bool thread) {
    std::vector<double> v;
    for (int r = 0; r < 7; ++r) {
        double us = 0;
        if (thread) { std::thread t([&] { cudaSetDevice(0); us = loop(1000, nvtx); }); t.join(); } else us = loop(1000, nvtx);
        v.push_back(us);
    }
    std::sort(v.begin(), v.end());
    printf("%-45s nvtx=%d thread=%d: 1000 launches sync-to-sync median %.0f us (min %.0f max %.0f)\n", what, nvtx, thread, v[3], v[0], v[6]);
}
static void CUPTIAPI bufReq(uint8_t** b, size_t* sz, size_t* maxRec) { *sz = 8 << 20; *b = (uint8_t*)aligned_alloc(8, *sz); *maxRec = 0; }
static void CUPTIAPI bufDone(CUcontext, uint32_t, uint8_t* b, size_t, size_t) { free(b); }
int main() {
    cudaSetDevice(0); cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking); loop(100, false);
    for (int nv = 0; nv < 2; ++nv) for (int th = 0; th < 2; ++th) report("plain", nv, th);
    cuptiActivityRegisterCallbacks(bufReq, bufDone);
    cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    for (int nv = 0; nv < 2; ++nv) for (int th = 0; th < 2; ++th) report("CUPTI CONCURRENT_KERNEL on", nv, th);
    cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL); cuptiActivityFlushAll(0);
    for (int nv = 0; nv < 2; ++nv) for (int th = 0; th < 2; ++th) report("CUPTI disabled (attached)", nv, th);
    cuptiFinalize();
    for (int nv = 0; nv < 2; ++nv) for (int th = 0; th < 2; ++th) report("after cuptiFinalize", nv, th);
    return 0;
}
