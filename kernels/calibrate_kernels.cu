#include "calibrate_kernels.cuh"

namespace streamscope::kernels {

namespace {

__global__ void flagKernel(volatile uint32_t* flag, uint32_t value, uint64_t spinNs)
{
    if (spinNs > 0) {
        uint64_t start;
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
        for (;;) {
            uint64_t now;
            asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
            if (now - start >= spinNs)
                break;
        }
    }
    *flag = value;
    __threadfence_system();
}

} // namespace

cudaError_t launchFlagKernel(volatile uint32_t* flag, uint32_t value, uint64_t spinNs, cudaStream_t stream)
{
    flagKernel<<<1, 1, 0, stream>>>(flag, value, spinNs);
    return cudaGetLastError();
}

} // namespace streamscope::kernels
