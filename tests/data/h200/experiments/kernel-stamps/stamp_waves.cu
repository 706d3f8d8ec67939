// Stamps from the first and last K blocks only (K = SMs x resident blocks per SM: one wave), the start stored as
// ~t so that both stamps are atomicMax into memory zeroed once. What that costs by how many shards (and how far
// apart) the atomics are spread over; and how far the end from the last K blocks is from the end over all blocks.
// nvcc -O2 -arch=sm_90 stamp_waves.cu -o stamp_waves
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

typedef unsigned long long u64;
__device__ __forceinline__ u64 gt() { u64 t; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); return t; }
struct Cfg { unsigned k, shards, stride; };
// s: 2*shards*stride u64s; start at s[i*stride], end at s[(shards+i)*stride]
__device__ __forceinline__ void st(u64* s, Cfg c) {
    if (!s || threadIdx.x != 0 || blockIdx.x >= c.k) return;
    atomicMax(&s[(blockIdx.x % c.shards) * c.stride], ~gt());
}
__device__ __forceinline__ void en(u64* s, Cfg c) {
    if (!s || blockIdx.x + c.k < gridDim.x) return;
    __syncthreads();
    if (threadIdx.x == 0) atomicMax(&s[(c.shards + blockIdx.x % c.shards) * c.stride], gt());
}
__global__ void empty(u64* s, Cfg c) { st(s, c); en(s, c); }
__global__ void triad(float* a, const float* b, const float* c, long n, u64* s, Cfg g) {
    st(s, g);
    long i = long(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n) a[i] = b[i] + 3.0f * c[i];
    en(s, g);
}
// Both at once in one launch, so that both see the same execution: all blocks into s[0..1], one wave into s[2..3].
__global__ void triadBoth(float* a, const float* b, const float* c, long n, u64* s, unsigned wave) {
    if (threadIdx.x == 0) { const u64 t = ~gt(); atomicMax(&s[0], t); if (blockIdx.x < wave) atomicMax(&s[2], t); }
    long i = long(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n) a[i] = b[i] + 3.0f * c[i];
    __syncthreads();
    if (threadIdx.x == 0) { const u64 t = gt(); atomicMax(&s[1], t); if (blockIdx.x + wave >= gridDim.x) atomicMax(&s[3], t); }
}
static u64 nowNs() { return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
int main() {
    cudaDeviceProp p; cudaGetDeviceProperties(&p, 0);
    const unsigned wave = p.multiProcessorCount * p.maxBlocksPerMultiProcessor;
    printf("%s: %d SMs x %d blocks = wave of %u blocks\n", p.name, p.multiProcessorCount, p.maxBlocksPerMultiProcessor, wave);
    const long n = 16l << 20;
    float *a, *b, *c; cudaMalloc(&a, n * 4); cudaMalloc(&b, n * 4); cudaMalloc(&c, n * 4);
    cudaMemset(b, 0, n * 4); cudaMemset(c, 0, n * 4);
    const size_t slotU64 = 2 * 32 * 16;
    u64* s; cudaMalloc(&s, 20 * slotU64 * 8);
    cudaStream_t st; cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking);
    struct V { const char* name; bool on; Cfg c; } vs[] = {
        {"none", false, {0, 1, 1}},
        {"all blocks, 1 shard", true, {1u << 31, 1, 1}},
        {"one wave, 1 shard", true, {wave, 1, 1}},
        {"one wave, 4 shards 32 B apart", true, {wave, 4, 4}},
        {"one wave, 8 shards 64 B apart", true, {wave, 8, 8}},
        {"one wave, 8 shards 128 B apart", true, {wave, 8, 16}},
        {"one wave, 32 shards 128 B apart", true, {wave, 32, 16}},
        {"all blocks, 32 shards 128 B apart", true, {1u << 31, 32, 16}},
    };
    for (int k = 0; k < 2; ++k) for (const V& v : vs) {
        std::vector<double> t;
        for (int r = 0; r < 10; ++r) {
            cudaMemset(s, 0, 20 * slotU64 * 8);
            cudaDeviceSynchronize(); u64 t0 = nowNs();
            for (int i = 0; i < 20; ++i) {
                u64* slot = v.on ? s + i * slotU64 : nullptr;
                if (k == 0) empty<<<65536, 256, 0, st>>>(slot, v.c); else triad<<<65536, 256, 0, st>>>(a, b, c, n, slot, v.c);
            }
            cudaDeviceSynchronize(); if (r) t.push_back((nowNs() - t0) / 1000.0);
        }
        std::sort(t.begin(), t.end());
        printf("%-6s %-36s 20 launches median %8.1f us (min %8.1f max %8.1f): %.2f us per launch\n", k ? "triad" : "empty", v.name, t[4], t[0], t[8], t[4] / 20);
    }
    // the first/last wave's stamps against all blocks' stamps of the same launches
    u64* w; cudaMalloc(&w, 4 * 8 * 100);
    cudaMemset(w, 0, 4 * 8 * 100);
    for (int i = 0; i < 100; ++i) triadBoth<<<65536, 256, 0, st>>>(a, b, c, n, w + 4 * i, wave);
    std::vector<u64> h(4 * 100); cudaMemcpy(h.data(), w, h.size() * 8, cudaMemcpyDeviceToHost);
    std::vector<long long> ds, de;
    for (int i = 0; i < 100; ++i) { ds.push_back((long long)(~h[4 * i + 2] - ~h[4 * i])); de.push_back((long long)(h[4 * i + 1] - h[4 * i + 3])); }
    std::sort(ds.begin(), ds.end()); std::sort(de.begin(), de.end());
    printf("triad, 100 launches: first wave's start - all blocks' start median %lld ns (max %lld); all blocks' end - last wave's end median %lld ns (p90 %lld, max %lld)\n",
           ds[50], ds[99], de[50], de[90], de[99]);
}
