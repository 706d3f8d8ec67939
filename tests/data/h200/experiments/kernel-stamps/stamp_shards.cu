// What the stamps cost on grids of many short blocks, by how the atomics are spread: one slot, 32 or 128 shards
// (128 bytes apart), and start stamps only from the first 2048 blocks. Kernels: 20 empty 65536x256 grids, and 20
// triads of 16 Mi floats (65536 blocks of 256 threads, one element each). Median of 9 runs, device sync to sync.
// nvcc -O2 -arch=sm_90 stamp_shards.cu -o stamp_shards
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

typedef unsigned long long u64;
__device__ __forceinline__ u64 gt() { u64 t; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); return t; }
__device__ __forceinline__ unsigned lin() { return (blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x; }
// mode 0: none; 1: one slot; 2: 32 shards; 3: 128 shards; 4: start from blocks < 2048 only, end 32 shards;
// 5: start 32 shards, end by the block's last warp to finish (a shared counter, no end barrier); 6: start 32
// shards, end by every warp into 128 shards; 7: start 32 shards only
__device__ __forceinline__ void st(u64* s, int mode, unsigned* count) {
    if (mode == 5) { if (threadIdx.x == 0) *count = 0; __syncthreads(); }
    if (mode >= 5) { if (threadIdx.x == 0) atomicMin(&s[(lin() & 31) * 16], gt()); return; }
    if (mode == 0 || threadIdx.x != 0) return;
    const unsigned b = lin();
    if (mode == 1) atomicMin(&s[0], gt());
    if (mode == 2) atomicMin(&s[(b & 31) * 16], gt());
    if (mode == 3) atomicMin(&s[(b & 127) * 16], gt());
    if (mode == 4 && b < 2048) atomicMin(&s[(b & 31) * 16], gt());
}
__device__ __forceinline__ void en(u64* s, int mode, unsigned* count) {
    if (mode == 0 || mode == 7) return;
    if (mode == 5) {
        __syncwarp();
        if ((threadIdx.x & 31) == 0 && atomicAdd_block(count, 1u) == (blockDim.x + 31) / 32 - 1) atomicMax(&s[(lin() & 31) * 16 + 8], gt());
        return;
    }
    if (mode == 6) {
        __syncwarp();
        if ((threadIdx.x & 31) == 0) atomicMax(&s[((lin() * 8 + threadIdx.x / 32) & 127) * 16 + 8], gt());
        return;
    }
    __syncthreads();
    if (threadIdx.x != 0) return;
    const unsigned b = lin();
    if (mode == 1) atomicMax(&s[1], gt());
    if (mode == 2 || mode == 4) atomicMax(&s[(b & 31) * 16 + 8], gt());
    if (mode == 3) atomicMax(&s[(b & 127) * 16 + 8], gt());
}
__global__ void empty(u64* s, int mode) { __shared__ unsigned count; st(s, mode, &count); en(s, mode, &count); }
__global__ void triad(float* a, const float* b, const float* c, long n, u64* s, int mode) {
    __shared__ unsigned count;
    st(s, mode, &count);
    long i = long(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n) a[i] = b[i] + 3.0f * c[i];
    en(s, mode, &count);
}
static u64 nowNs() { return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
int main() {
    const long n = 16l << 20;
    float *a, *b, *c; cudaMalloc(&a, n * 4); cudaMalloc(&b, n * 4); cudaMalloc(&c, n * 4);
    cudaMemset(b, 0, n * 4); cudaMemset(c, 0, n * 4);
    u64* s; cudaMalloc(&s, 20 * 128 * 16 * 8); cudaMemset(s, 0, 20 * 128 * 16 * 8);
    cudaStream_t st; cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking);
    const char* names[] = {"none", "one slot", "32 shards", "128 shards", "start <2048, end 32 shards", "end by last warp (shared count)", "end by every warp, 128 shards", "start only, 32 shards"};
    for (int k = 0; k < 2; ++k) for (int mode = 0; mode < 8; ++mode) {
        std::vector<double> v;
        for (int r = 0; r < 10; ++r) {
            cudaDeviceSynchronize(); u64 t0 = nowNs();
            for (int i = 0; i < 20; ++i) {
                u64* slot = s + i * 128 * 16;
                if (k == 0) empty<<<65536, 256, 0, st>>>(slot, mode); else triad<<<65536, 256, 0, st>>>(a, b, c, n, slot, mode);
            }
            cudaDeviceSynchronize(); if (r) v.push_back((nowNs() - t0) / 1000.0);
        }
        std::sort(v.begin(), v.end());
        printf("%-6s %-28s 20 launches median %8.1f us (min %8.1f max %8.1f): %.2f us per launch\n", k ? "triad" : "empty", names[mode], v[4], v[0], v[8], v[4] / 20);
    }
}
