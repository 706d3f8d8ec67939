// The CUDA backend (DESIGN.md §4): issues each op of the scenario with the real CUDA runtime call and times host
// API calls with steady_clock. GPU ops are timed by CUPTI activity records (matched by correlation id, already on
// steady_clock; per-stream anchor events check the alignment) or by timing events on their own stream, mapped onto
// that clock through one origin event per device and iteration. One last iteration runs with no timing at all. This
// file holds the public functions of cuda_backend.h (probeCuda, cuptiUnavailableReason, cuptiBuiltIn,
// makeCudaBackend, applyCudaEnvironment); the backend's state and class are in cuda_backend_state.h, which lists the
// files that implement it.
#include "cuda_backend.h"

#include "cuda_backend_state.h"
#include "cupti_tracer.h"

#include <cuda_runtime.h>

#include <cstdlib>
#include <exception>
#include <memory>
#include <string>

namespace streamscope {

using cuda_backend::versionText;

CudaProbe probeCuda()
{
    CudaProbe p;
    try {
        int driver = 0;
        if (cudaDriverGetVersion(&driver) != cudaSuccess)
            driver = 0;
        (void)cudaRuntimeGetVersion(&p.runtimeVersion);
        p.driverVersion = driver;
        if (driver == 0) {
            (void)cudaGetLastError();
            p.reason = "no CUDA driver (libcuda.so was not found: is the NVIDIA driver installed?)";
            return p;
        }
        int count = 0;
        const cudaError_t e = cudaGetDeviceCount(&count);
        if (e != cudaSuccess) {
            (void)cudaGetLastError();
            switch (e) {
            case cudaErrorNoDevice: p.reason = "no CUDA-capable device"; break;
            case cudaErrorInsufficientDriver:
                p.reason = "the CUDA driver (CUDA " + versionText(driver)
                    + ") is older than this build's CUDA runtime (" + versionText(p.runtimeVersion) + ")";
                break;
            default: p.reason = std::string("CUDA initialisation failed: ") + cudaGetErrorString(e); break;
            }
            return p;
        }
        p.deviceCount = count;
        if (count == 0) {
            p.reason = "no CUDA-capable device";
            return p;
        }
        for (int d = 0; d < count; ++d) {
            cudaDeviceProp prop{};
            if (cudaGetDeviceProperties(&prop, d) == cudaSuccess)
                p.deviceNames.emplace_back(prop.name);
            else {
                (void)cudaGetLastError();
                p.deviceNames.emplace_back("?");
            }
        }
        p.usable = true;
    } catch (const std::exception& ex) {
        p.usable = false;
        p.reason = std::string("CUDA probe failed: ") + ex.what();
    } catch (...) {
        p.usable = false;
        p.reason = "CUDA probe failed";
    }
    return p;
}

std::string cuptiUnavailableReason()
{
    return CuptiTracer::instance().attach();
}

bool cuptiBuiltIn()
{
    return CuptiTracer::builtIn();
}

std::unique_ptr<Backend> makeCudaBackend(const CudaBackendOptions& options)
{
    return std::make_unique<cuda_backend::CudaBackend>(options);
}

void applyCudaEnvironment(const Scenario& scenario)
{
    for (const auto& [key, value] : scenario.run.env)
        if (!key.empty())
            ::setenv(key.c_str(), value.c_str(), 1);
}

} // namespace streamscope
