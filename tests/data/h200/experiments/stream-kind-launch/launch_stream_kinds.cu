// What one cudaLaunchKernel costs the host, by the kind of stream it goes into: blocking (cudaStreamCreate),
// non-blocking (cudaStreamNonBlocking), the legacy default stream and the per-thread default stream. For each, 7
// trials of N launches of an empty <<<1, 32>>> kernel, host steady clock around the launch calls only (device synced
// before and after each trial), per call in ns; prints the median and the range of the trials. The kinds are taken in
// a rotating order per round so that no kind always runs first.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

__global__ void empty() {}

static long long nowNs()
{
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

int main(int argc, char** argv)
{
    const int n = argc > 1 ? std::atoi(argv[1]) : 1000;
    cudaFree(nullptr);
    cudaStream_t blocking, nonBlocking;
    cudaStreamCreate(&blocking);
    cudaStreamCreateWithFlags(&nonBlocking, cudaStreamNonBlocking);
    const char* names[4] = {"blocking", "non-blocking", "legacy-default", "per-thread-default"};
    cudaStream_t streams[4] = {blocking, nonBlocking, cudaStreamLegacy, cudaStreamPerThread};
    std::vector<double> perCall[4];
    for (int k = 0; k < 4; ++k) { // warm-up
        for (int i = 0; i < n; ++i)
            empty<<<1, 32, 0, streams[k]>>>();
        cudaDeviceSynchronize();
    }
    for (int round = 0; round < 7; ++round)
        for (int j = 0; j < 4; ++j) {
            const int k = (round + j) % 4;
            cudaDeviceSynchronize();
            const long long t0 = nowNs();
            for (int i = 0; i < n; ++i)
                empty<<<1, 32, 0, streams[k]>>>();
            const long long t = nowNs() - t0;
            cudaDeviceSynchronize();
            perCall[k].push_back(double(t) / n);
        }
    if (cudaGetLastError() != cudaSuccess)
        return 1;
    for (int k = 0; k < 4; ++k) {
        auto v = perCall[k];
        std::sort(v.begin(), v.end());
        std::printf("n=%d %-19s median %6.0f ns  range %6.0f - %6.0f ns\n", n, names[k], v[3], v.front(), v.back());
    }
    return 0;
}
