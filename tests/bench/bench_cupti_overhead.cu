// What CUPTI activity tracing costs the host, and which of its settings change that.
//
//   bench_cupti_overhead --config NAME [--streams 128] [--repeats 7] [--json]
//   bench_cupti_overhead --list
//
// One configuration per process, because CUPTI's device-buffer attributes only apply to contexts created after they
// are set. In that process the same work runs untimed first (CUPTI not attached), then under the configuration:
//   (a) N non-blocking streams with one one-block 1 ms kernel each, then a device sync (the case of
//       ManyStreamsAreNotSerializedByCupti: bound by how fast the host issues the launches);
//   (b) 1000 empty kernels into one stream, then a stream sync.
// Reported per workload: the median (over the repeats) makespan from the first launch to the end of the sync on
// the host clock, the host time per launch call, and the ratio timed/untimed. Plain CUDA and CUPTI only, no
// StreamScope engine: the figures say what CUPTI itself costs. Without a usable GPU it says why and exits 0.
#include <cuda_runtime.h>
#include <cupti.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

namespace {

__global__ void emptyKernel() {}

__global__ void spinFor(unsigned long long ns)
{
    unsigned long long t0 = 0;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    for (;;) {
        unsigned long long t = 0;
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
        if (t - t0 >= ns)
            break;
    }
}

struct Config {
    const char* name;
    const char* what;
};

constexpr Config kConfigs[] = {
    {"none", "no CUPTI at all: the same work twice, for the run-to-run spread"},
    {"engine",
     "what StreamScope enables: CONCURRENT_KERNEL, MEMCPY, MEMCPY2, MEMSET, the host-clock timestamp "
     "callback and runtime callbacks on the launch calls"},
    {"kernel-only", "CONCURRENT_KERNEL alone, CUPTI's own clock, no callbacks"},
    {"no-callbacks", "the engine's kinds and clock, no runtime callbacks"},
    {"no-clock", "the engine's kinds and callbacks, CUPTI's own clock"},
    {"callbacks-only", "runtime callbacks on the launch calls, no activity kind"},
    {"host-pinned", "engine, with CUPTI's profiling buffers in pinned host memory"},
    {"big-buffers", "engine, with 64 MiB device buffers and 8 preallocated"},
    {"hw-trace", "engine, with cuptiActivityEnableHWTrace (kernel timestamps from hardware events)"},
};

const Config* findConfig(const std::string& name)
{
    for (const Config& c : kConfigs)
        if (name == c.name)
            return &c;
    return nullptr;
}

double median(std::vector<double> v)
{
    if (v.empty())
        return 0;
    std::sort(v.begin(), v.end());
    return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

double nowNs()
{
    return double(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
            .count());
}

uint64_t CUPTIAPI steadyNow()
{
    return uint64_t(nowNs());
}

constexpr size_t kBufferBytes = 8u << 20;
size_t g_records = 0;

void CUPTIAPI bufferRequested(uint8_t** buffer, size_t* size, size_t* maxNumRecords)
{
    *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kBufferBytes));
    *size = *buffer ? kBufferBytes : 0;
    *maxNumRecords = 0;
}

void CUPTIAPI bufferCompleted(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t validSize)
{
    CUpti_Activity* rec = nullptr;
    while (cuptiActivityGetNextRecord(buffer, validSize, &rec) == CUPTI_SUCCESS)
        ++g_records;
    std::free(buffer);
}

thread_local uint32_t t_lastId = 0;
void CUPTIAPI onApi(void*, CUpti_CallbackDomain, CUpti_CallbackId, const void* data)
{
    const auto* cb = static_cast<const CUpti_CallbackData*>(data);
    if (cb->callbackSite == CUPTI_API_ENTER)
        t_lastId = cb->correlationId;
}

bool ok(CUptiResult r, const char* what, std::string& error)
{
    if (r == CUPTI_SUCCESS)
        return true;
    const char* s = nullptr;
    cuptiGetResultString(r, &s);
    error = std::string(what) + ": " + (s ? s : "unknown CUPTI error");
    return false;
}

// Sets up CUPTI as the configuration says; an error text when a step failed (the run then still measures what
// was enabled, and says so).
std::string setContextAttributes(const std::string& config)
{
    std::string error;
    if (config == "host-pinned") {
        uint8_t on = 1;
        size_t n = sizeof on;
        if (!ok(cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_MEM_ALLOCATION_TYPE_HOST_PINNED, &n, &on),
                "CUPTI_ACTIVITY_ATTR_MEM_ALLOCATION_TYPE_HOST_PINNED", error))
            return error;
    }
    if (config == "big-buffers") {
        size_t bytes = 64u << 20;
        size_t n = sizeof bytes;
        size_t pre = 8;
        if (!ok(cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE, &n, &bytes),
                "CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE", error)
            || !ok(cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_PRE_ALLOCATE_VALUE, &n, &pre),
                   "CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_PRE_ALLOCATE_VALUE", error))
            return error;
    }
    return {};
}

std::string attach(const std::string& config)
{
    std::string error;
    if (config == "none")
        return {};
    const bool engineKinds = config != "kernel-only" && config != "callbacks-only";
    const bool callbacks = config != "kernel-only" && config != "no-callbacks";
    const bool clock = config != "kernel-only" && config != "no-clock" && config != "callbacks-only";
    CUpti_SubscriberHandle subscriber = nullptr;
    if (callbacks) {
        if (!ok(cuptiSubscribe(&subscriber, onApi, nullptr), "cuptiSubscribe", error))
            return error;
        for (CUpti_CallbackId id :
             {CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000})
            if (!ok(cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API, id), "cuptiEnableCallback", error))
                return error;
    }
    if (config == "callbacks-only")
        return {};
    if (clock
        && !ok(cuptiActivityRegisterTimestampCallback(steadyNow), "cuptiActivityRegisterTimestampCallback", error))
        return error;
    if (!ok(cuptiActivityRegisterCallbacks(bufferRequested, bufferCompleted), "cuptiActivityRegisterCallbacks", error))
        return error;
    if (config == "hw-trace" && !ok(cuptiActivityEnableHWTrace(1), "cuptiActivityEnableHWTrace", error))
        return error;
    if (!ok(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), "CONCURRENT_KERNEL", error))
        return error;
    if (engineKinds)
        for (CUpti_ActivityKind k :
             {CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMCPY2, CUPTI_ACTIVITY_KIND_MEMSET})
            if (!ok(cuptiActivityEnable(k), "cuptiActivityEnable", error))
                return error;
    return {};
}

struct Figures {
    double makespanNs = 0;
    double perLaunchNs = 0;
};

// One repeat of (a): N streams, one 1 ms one-block kernel each.
Figures manyStreams(const std::vector<cudaStream_t>& streams)
{
    const double t0 = nowNs();
    for (cudaStream_t s : streams)
        spinFor<<<1, 32, 0, s>>>(1'000'000);
    const double issued = nowNs();
    cudaDeviceSynchronize();
    const double t1 = nowNs();
    return {t1 - t0, (issued - t0) / double(streams.size())};
}

// One repeat of (b): 1000 empty kernels into one stream.
Figures emptyKernels(cudaStream_t s)
{
    constexpr int kLaunches = 1000;
    const double t0 = nowNs();
    for (int i = 0; i < kLaunches; ++i)
        emptyKernel<<<1, 32, 0, s>>>();
    const double issued = nowNs();
    cudaStreamSynchronize(s);
    const double t1 = nowNs();
    return {t1 - t0, (issued - t0) / kLaunches};
}

struct Measured {
    Figures streams, empty;
};

Measured measure(const std::vector<cudaStream_t>& streams, int repeats)
{
    std::vector<double> a, ap, b, bp;
    manyStreams(streams); // warm-up (also CUPTI's first-launch set-up when attached)
    emptyKernels(streams[0]);
    for (int r = 0; r < repeats; ++r) {
        const Figures f = manyStreams(streams);
        a.push_back(f.makespanNs);
        ap.push_back(f.perLaunchNs);
        const Figures g = emptyKernels(streams[0]);
        b.push_back(g.makespanNs);
        bp.push_back(g.perLaunchNs);
    }
    return {{median(a), median(ap)}, {median(b), median(bp)}};
}

} // namespace

int main(int argc, char** argv)
{
    std::string config;
    int nStreams = 128;
    int repeats = 7;
    bool json = false;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--config" && i + 1 < argc) {
            config = argv[++i];
        } else if (a == "--streams" && i + 1 < argc) {
            nStreams = std::atoi(argv[++i]);
        } else if (a == "--repeats" && i + 1 < argc) {
            repeats = std::atoi(argv[++i]);
        } else if (a == "--json") {
            json = true;
        } else if (a == "--list") {
            for (const Config& c : kConfigs)
                std::cout << c.name << "\t" << c.what << '\n';
            return 0;
        } else {
            std::cerr << "usage: bench_cupti_overhead --config NAME [--streams N] [--repeats R] [--json] | --list\n";
            return 2;
        }
    }
    const Config* c = findConfig(config);
    if (!c || nStreams < 1 || nStreams > 4096 || repeats < 1) {
        std::cerr << "bench_cupti_overhead: unknown configuration or bad number (see --list)\n";
        return 2;
    }
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
        std::cout << "bench_cupti_overhead: no usable GPU, nothing measured\n";
        return 0;
    }
    // Attributes that apply to new contexts are set before the context exists; the rest after the untimed part.
    std::string error = setContextAttributes(config);
    cudaSetDevice(0);
    std::vector<cudaStream_t> streams(static_cast<size_t>(nStreams));
    for (cudaStream_t& s : streams)
        cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    const Measured untimed = measure(streams, repeats);
    if (error.empty())
        error = attach(config);
    const Measured timed = measure(streams, repeats);
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);

    nlohmann::json out{{"config", c->name},  {"what", c->what},      {"streams", nStreams},
                       {"repeats", repeats}, {"cupti_error", error}, {"records", g_records}};
    auto add = [&](const char* key, const Figures& u, const Figures& t) {
        out[key] = {{"untimed_makespan_us", u.makespanNs / 1e3},
                    {"timed_makespan_us", t.makespanNs / 1e3},
                    {"ratio", u.makespanNs > 0 ? t.makespanNs / u.makespanNs : 0},
                    {"untimed_per_launch_us", u.perLaunchNs / 1e3},
                    {"timed_per_launch_us", t.perLaunchNs / 1e3}};
    };
    add("many_streams", untimed.streams, timed.streams);
    add("empty_kernels", untimed.empty, timed.empty);
    if (json) {
        std::cout << out.dump() << '\n';
    } else {
        std::printf("%-14s %s%s\n", c->name, c->what, error.empty() ? "" : ("  [" + error + "]").c_str());
        for (const char* key : {"many_streams", "empty_kernels"}) {
            const auto& f = out[key];
            std::printf("  %-13s untimed %8.1f us (%.2f us/launch)  timed %8.1f us (%.2f us/launch)  ratio %.3f\n", key,
                        f["untimed_makespan_us"].get<double>(), f["untimed_per_launch_us"].get<double>(),
                        f["timed_makespan_us"].get<double>(), f["timed_per_launch_us"].get<double>(),
                        f["ratio"].get<double>());
        }
    }
    for (cudaStream_t s : streams)
        cudaStreamDestroy(s);
    return 0;
}
