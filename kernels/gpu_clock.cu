#include "gpu_clock.cuh"

#include <chrono>

namespace streamscope::kernels {

namespace {

constexpr unsigned int kStop = 0xffffffffu;

// Waits for sequence numbers 1..n in `flag` and answers each with %globaltimer; kStop ends it early.
__global__ void pongKernel(volatile unsigned int* flag, volatile unsigned long long* reply, int n)
{
    for (int i = 1; i <= n; ++i) {
        unsigned int f;
        while ((f = *flag) != unsigned(i) && f != kStop) {}
        if (f == kStop)
            return;
        unsigned long long t;
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
        reply[i] = t;
        __threadfence_system();
    }
}

int64_t steadyNs()
{
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

} // namespace

GpuClockProbe::~GpuClockProbe()
{
    release();
}

cudaError_t GpuClockProbe::init(int maxSamples)
{
    release();
    m_max = maxSamples < 1 ? 1 : maxSamples;
    cudaError_t e = cudaGetDevice(&m_device);
    if (e == cudaSuccess)
        e = cudaHostAlloc(reinterpret_cast<void**>(&m_flag), sizeof(unsigned int), cudaHostAllocMapped);
    if (e == cudaSuccess)
        e = cudaHostAlloc(reinterpret_cast<void**>(&m_reply), sizeof(unsigned long long) * size_t(m_max + 1),
                          cudaHostAllocMapped);
    if (e == cudaSuccess)
        e = cudaStreamCreateWithFlags(&m_stream, cudaStreamNonBlocking);
    if (e != cudaSuccess)
        release();
    return e;
}

cudaError_t GpuClockProbe::sample(int samples, GpuClockSample& best, int64_t timeoutNs)
{
    best = {};
    if (!m_flag || !m_reply || !m_stream)
        return cudaErrorNotReady;
    const int n = samples < 1 ? 1 : (samples > m_max ? m_max : samples);
    int previous = 0;
    cudaError_t e = cudaGetDevice(&previous);
    if (e == cudaSuccess && previous != m_device)
        e = cudaSetDevice(m_device);
    if (e != cudaSuccess)
        return e;
    volatile unsigned int* flag = m_flag;
    volatile unsigned long long* reply = m_reply;
    *flag = 0;
    for (int i = 0; i <= n; ++i)
        reply[i] = 0;
    unsigned int* dflag = nullptr;
    unsigned long long* dreply = nullptr;
    e = cudaHostGetDevicePointer(reinterpret_cast<void**>(&dflag), m_flag, 0);
    if (e == cudaSuccess)
        e = cudaHostGetDevicePointer(reinterpret_cast<void**>(&dreply), m_reply, 0);
    if (e == cudaSuccess) {
        pongKernel<<<1, 1, 0, m_stream>>>(dflag, dreply, n);
        e = cudaGetLastError();
    }
    for (int i = 1; i <= n && e == cudaSuccess; ++i) {
        const int64_t t0 = steadyNs();
        *flag = unsigned(i);
        int64_t t1 = t0;
        while (reply[i] == 0) {
            t1 = steadyNs();
            if (t1 - t0 > timeoutNs) {
                e = cudaErrorLaunchTimeout;
                break;
            }
        }
        if (e != cudaSuccess)
            break;
        t1 = steadyNs();
        const int64_t half = (t1 - t0) / 2;
        if (best.errorNs < 0 || half < best.errorNs) {
            best.errorNs = half;
            best.hostNs = t0 + half;
            best.gpuNs = int64_t(reply[i]);
        }
    }
    if (e != cudaSuccess) {
        *flag = kStop;
        best = {};
    }
    const cudaError_t s = cudaStreamSynchronize(m_stream);
    if (e == cudaSuccess)
        e = s;
    if (previous != m_device)
        (void)cudaSetDevice(previous);
    return e;
}

void GpuClockProbe::release()
{
    if (m_stream) {
        int previous = 0;
        const bool other = cudaGetDevice(&previous) == cudaSuccess && previous != m_device && m_device >= 0;
        if (other)
            (void)cudaSetDevice(m_device);
        (void)cudaStreamDestroy(m_stream);
        if (other)
            (void)cudaSetDevice(previous);
    }
    if (m_flag)
        (void)cudaFreeHost(m_flag);
    if (m_reply)
        (void)cudaFreeHost(m_reply);
    m_flag = nullptr;
    m_reply = nullptr;
    m_stream = nullptr;
    m_device = -1;
}

int64_t gpuToHostNs(int64_t gpuNs, const GpuClockSample& before, const GpuClockSample& after)
{
    const bool hasBefore = before.errorNs >= 0;
    const bool hasAfter = after.errorNs >= 0;
    if (!hasBefore && !hasAfter)
        return -1;
    if (!hasBefore || !hasAfter || after.gpuNs == before.gpuNs) {
        const GpuClockSample& s = hasBefore ? before : after;
        return gpuNs - s.gpuNs + s.hostNs;
    }
    // host = before.host + (gpu - before.gpu) * (after.host - before.host) / (after.gpu - before.gpu)
    const double rate = double(after.hostNs - before.hostNs) / double(after.gpuNs - before.gpuNs);
    return before.hostNs + int64_t(double(gpuNs - before.gpuNs) * rate);
}

} // namespace streamscope::kernels
