#include <cuda_runtime.h>
#include <chrono>
#include <cstdio>
#include <vector>
#include <algorithm>
__global__ void empty() {}
__global__ void spin(long long ns) { long long t0 = clock64(); while (clock64() - t0 < ns * 2) {} }
static double nowUs() { return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
int main() {
    cudaStream_t s, s2; cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking); cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking);
    for (int i = 0; i < 100; ++i) empty<<<1, 32, 0, s>>>(); cudaDeviceSynchronize();
    for (int n : {100, 1000, 4000}) for (int mode = 0; mode < 3; ++mode) {
        std::vector<double> calls, total;
        for (int r = 0; r < 7; ++r) {
            cudaDeviceSynchronize();
            if (mode == 1) spin<<<1, 32, 0, s>>>(40000000LL);   // same stream busy ~20-40 ms
            if (mode == 2) spin<<<1, 32, 0, s2>>>(40000000LL);  // other stream busy, ours idle
            double t0 = nowUs();
            for (int i = 0; i < n; ++i) empty<<<1, 32, 0, s>>>();
            double t1 = nowUs();
            cudaStreamSynchronize(s);
            double t2 = nowUs();
            calls.push_back((t1 - t0) / n); total.push_back(t2 - t0);
        }
        std::sort(calls.begin(), calls.end()); std::sort(total.begin(), total.end());
        printf("n=%4d %-28s per call median %.2f us (min %.2f max %.2f); calls+sync median %.0f us\n", n,
               mode == 0 ? "idle GPU" : mode == 1 ? "behind a long kernel" : "other stream busy", calls[3], calls[0], calls[6], total[3]);
    }
}
