#include "cupti_tracer.h"

#ifdef STREAMSCOPE_HAVE_CUPTI
#include <cupti.h>
#endif

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <utility>

namespace streamscope {

#ifdef STREAMSCOPE_HAVE_CUPTI

namespace {

// Activity buffers: allocated ahead and handed to CUPTI from a pool, so that a buffer request during a timed
// iteration costs a pop, not an allocation; the records are parsed after the devices synchronized.
constexpr size_t kBufferBytes = 8u << 20;
constexpr size_t kBuffersAhead = 8;
constexpr size_t kAlignment = 8;

thread_local uint32_t t_runtimeId = 0;
thread_local uint32_t t_driverId = 0;

std::mutex g_bufferMutex;
std::vector<uint8_t*> g_freeBuffers;
std::vector<std::pair<uint8_t*, size_t>> g_completed;
uint64_t g_dropped = 0;
CUpti_SubscriberHandle g_subscriber = nullptr;

uint64_t CUPTIAPI steadyNow()
{
    return uint64_t(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
            .count());
}

uint8_t* newBuffer()
{
    return static_cast<uint8_t*>(std::aligned_alloc(kAlignment, kBufferBytes));
}

void CUPTIAPI bufferRequested(uint8_t** buffer, size_t* size, size_t* maxNumRecords)
{
    uint8_t* b = nullptr;
    {
        std::lock_guard lock(g_bufferMutex);
        if (!g_freeBuffers.empty()) {
            b = g_freeBuffers.back();
            g_freeBuffers.pop_back();
        }
    }
    if (!b)
        b = newBuffer();
    *buffer = b;
    *size = b ? kBufferBytes : 0;
    *maxNumRecords = 0;
}

void CUPTIAPI bufferCompleted(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t validSize)
{
    std::lock_guard lock(g_bufferMutex);
    g_completed.emplace_back(buffer, validSize);
}

// The id CUPTI gives the records of what a call enqueues: read on entry, where it is already assigned. The
// runtime call and the driver call it makes share that id (seen on an H200, CUDA 13.0: 200 of 200 records).
void CUPTIAPI onApi(void*, CUpti_CallbackDomain domain, CUpti_CallbackId, const void* data)
{
    const auto* cb = static_cast<const CUpti_CallbackData*>(data);
    if (cb->callbackSite != CUPTI_API_ENTER)
        return;
    if (domain == CUPTI_CB_DOMAIN_RUNTIME_API && t_runtimeId == 0)
        t_runtimeId = cb->correlationId;
    else if (domain == CUPTI_CB_DOMAIN_DRIVER_API && t_driverId == 0)
        t_driverId = cb->correlationId;
}

// The calls that enqueue what CUPTI records: only these get a callback (whole callback domains would intercept every
// runtime and driver call the backend makes).
constexpr CUpti_CallbackId kIssueCalls[] = {
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,      CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060,  CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020,       CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_ptsz_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020,       CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_ptsz_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyPeerAsync_v4000,   CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000,
    CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_ptsz_v10000,
};

// Kernel launches and copies made through the driver API, as NCCL makes them (cuLaunchKernelEx, through
// cuGetProcAddress): on only for runs with collectives (CuptiTracer::recordDriverLaunches).
constexpr CUpti_CallbackId kDriverLaunches[] = {
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,       CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,     CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyAsync,        CUPTI_DRIVER_TRACE_CBID_cuMemcpyAsync_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoDAsync_v2, CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoDAsync_v2_ptsz,
};
std::atomic<bool> g_driverLaunches{false};

CUptiResult enableIssueCallbacks(uint32_t on)
{
    for (CUpti_CallbackId id : kIssueCalls)
        if (CUptiResult r = cuptiEnableCallback(on, g_subscriber, CUPTI_CB_DOMAIN_RUNTIME_API, id); r != CUPTI_SUCCESS)
            return r;
    const uint32_t driver = on && g_driverLaunches.load() ? 1 : 0;
    for (CUpti_CallbackId id : kDriverLaunches)
        if (CUptiResult r = cuptiEnableCallback(driver, g_subscriber, CUPTI_CB_DOMAIN_DRIVER_API, id);
            r != CUPTI_SUCCESS)
            return r;
    return CUPTI_SUCCESS;
}

std::string resultText(const char* call, CUptiResult r)
{
    switch (r) {
    case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
        return "another profiler is attached (CUPTI allows one; " + std::string(call) + ")";
    case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES:
        return "insufficient permission for CUPTI (" + std::string(call) + ")";
    default: break;
    }
    const char* s = nullptr;
    if (cuptiGetResultString(r, &s) != CUPTI_SUCCESS || !s)
        s = "unknown CUPTI error";
    return std::string(call) + " failed: " + s;
}

constexpr CUpti_ActivityKind kKinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
                                         CUPTI_ACTIVITY_KIND_MEMCPY2, CUPTI_ACTIVITY_KIND_MEMSET};

// The fields every record kind shares (the peer copy's device is its source).
template <typename Record>
CuptiRecord common(CuptiRecordKind kind, const Record& m, uint32_t device)
{
    CuptiRecord r;
    r.kind = kind;
    r.correlationId = m.correlationId;
    r.deviceId = device;
    r.streamId = m.streamId;
    r.start = int64_t(m.start);
    r.end = int64_t(m.end);
    r.graphNodeId = m.graphNodeId;
    r.graphId = m.graphId;
    return r;
}

void parseBuffer(uint8_t* buffer, size_t validSize, std::vector<CuptiRecord>& out)
{
    CUpti_Activity* rec = nullptr;
    while (cuptiActivityGetNextRecord(buffer, validSize, &rec) == CUPTI_SUCCESS) {
        switch (rec->kind) {
        case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
        case CUPTI_ACTIVITY_KIND_KERNEL: {
            const auto& k = *reinterpret_cast<const CUpti_ActivityKernel10*>(rec);
            CuptiRecord r = common(CuptiRecordKind::Kernel, k, k.deviceId);
            if (k.name)
                r.name = k.name;
            out.push_back(std::move(r));
            break;
        }
        case CUPTI_ACTIVITY_KIND_MEMCPY: {
            const auto& m = *reinterpret_cast<const CUpti_ActivityMemcpy6*>(rec);
            out.push_back(common(CuptiRecordKind::Memcpy, m, m.deviceId));
            out.back().bytes = int64_t(m.bytes);
            break;
        }
        case CUPTI_ACTIVITY_KIND_MEMCPY2: {
            const auto& m = *reinterpret_cast<const CUpti_ActivityMemcpyPtoP4*>(rec);
            out.push_back(common(CuptiRecordKind::MemcpyPeer, m, m.srcDeviceId));
            out.back().bytes = int64_t(m.bytes);
            break;
        }
        case CUPTI_ACTIVITY_KIND_MEMSET: {
            const auto& m = *reinterpret_cast<const CUpti_ActivityMemset4*>(rec);
            out.push_back(common(CuptiRecordKind::Memset, m, m.deviceId));
            out.back().bytes = int64_t(m.bytes);
            break;
        }
        default: break;
        }
    }
}

} // namespace

CuptiTracer& CuptiTracer::instance()
{
    static CuptiTracer tracer;
    return tracer;
}

bool CuptiTracer::builtIn()
{
    return true;
}

std::string CuptiTracer::attach()
{
    if (m_attached)
        return {};
    if (!m_attachError.empty())
        return m_attachError;
    if (CUptiResult r = cuptiSubscribe(&g_subscriber, onApi, nullptr); r != CUPTI_SUCCESS) {
        g_subscriber = nullptr;
        return m_attachError = resultText("cuptiSubscribe", r);
    }
    // The clock before any kind is enabled: it applies to records of kinds enabled after it.
    m_hostClock = cuptiActivityRegisterTimestampCallback(steadyNow) == CUPTI_SUCCESS;
    {
        std::lock_guard lock(g_bufferMutex);
        while (g_freeBuffers.size() < kBuffersAhead)
            if (uint8_t* b = newBuffer())
                g_freeBuffers.push_back(b);
            else
                break;
    }
    if (CUptiResult r = cuptiActivityRegisterCallbacks(bufferRequested, bufferCompleted); r != CUPTI_SUCCESS) {
        (void)cuptiUnsubscribe(g_subscriber);
        g_subscriber = nullptr;
        return m_attachError = resultText("cuptiActivityRegisterCallbacks", r);
    }
    m_attached = true;
    return {};
}

std::string CuptiTracer::enable(bool callbacks, bool kernels)
{
    if (!m_attached)
        return "CUPTI is not attached";
    if (m_enabled)
        return setApiCallbacks(callbacks);
    if (std::string e = setApiCallbacks(callbacks); !e.empty()) {
        disable();
        return e;
    }
    for (auto kind : kKinds)
        if (kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL && !kernels)
            continue;
        else if (CUptiResult r = cuptiActivityEnable(kind); r != CUPTI_SUCCESS) {
            disable();
            return resultText("cuptiActivityEnable", r);
        }
    m_enabled = true;
    return {};
}

void CuptiTracer::disable()
{
    if (!m_attached)
        return;
    for (auto kind : kKinds)
        (void)cuptiActivityDisable(kind);
    (void)enableIssueCallbacks(0);
    m_callbacks = false;
    m_enabled = false;
}

std::string CuptiTracer::detach()
{
    if (!m_attached)
        return {};
    disable();
    const CUptiResult r = cuptiFinalize();
    g_subscriber = nullptr;
    m_attached = false;
    m_hostClock = false;
    {
        std::lock_guard lock(g_bufferMutex);
        for (auto [buffer, valid] : g_completed)
            if (buffer)
                g_freeBuffers.push_back(buffer); // records after the last take() belong to no timed iteration
        g_completed.clear();
    }
    return r == CUPTI_SUCCESS ? std::string() : resultText("cuptiFinalize", r);
}

std::string CuptiTracer::setApiCallbacks(bool on)
{
    if (!m_attached)
        return "CUPTI is not attached";
    if (on == m_callbacks)
        return {};
    if (CUptiResult r = enableIssueCallbacks(on ? 1 : 0); r != CUPTI_SUCCESS)
        return resultText("cuptiEnableCallback", r);
    m_callbacks = on;
    return {};
}

uint32_t CuptiTracer::streamId(void* stream)
{
    uint32_t id = 0;
    if (cuptiGetStreamIdEx(nullptr, static_cast<CUstream>(stream), 0, &id) != CUPTI_SUCCESS)
        return 0;
    return id;
}

void CuptiTracer::recordDriverLaunches(bool on)
{
    g_driverLaunches.store(on);
    if (instance().m_callbacks)
        (void)enableIssueCallbacks(1);
}

void CuptiTracer::resetCorrelationIds()
{
    t_runtimeId = 0;
    t_driverId = 0;
}

CorrelationIds CuptiTracer::lastCorrelationIds()
{
    return {t_runtimeId, t_driverId};
}

std::vector<CuptiRecord> CuptiTracer::take(uint64_t* dropped)
{
    std::vector<CuptiRecord> out;
    if (!m_attached)
        return out;
    (void)cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    std::vector<std::pair<uint8_t*, size_t>> done;
    {
        std::lock_guard lock(g_bufferMutex);
        done.swap(g_completed);
    }
    for (auto [buffer, valid] : done) {
        if (buffer && valid)
            parseBuffer(buffer, valid, out);
        std::lock_guard lock(g_bufferMutex);
        if (buffer)
            g_freeBuffers.push_back(buffer);
    }
    size_t n = 0;
    if (cuptiActivityGetNumDroppedRecords(nullptr, 0, &n) == CUPTI_SUCCESS)
        g_dropped += n;
    if (dropped)
        *dropped = g_dropped;
    return out;
}

int64_t CuptiTracer::clockOffsetNs(int64_t* errorNs) const
{
    int64_t best = -1;
    int64_t offset = 0;
    for (int i = 0; i < 8; ++i) {
        const int64_t h0 = int64_t(steadyNow());
        uint64_t c = 0;
        if (cuptiGetTimestamp(&c) != CUPTI_SUCCESS)
            break;
        const int64_t h1 = int64_t(steadyNow());
        if (best < 0 || h1 - h0 < best) {
            best = h1 - h0;
            offset = (h0 + (h1 - h0) / 2) - int64_t(c);
        }
    }
    if (errorNs)
        *errorNs = best < 0 ? 0 : best / 2;
    return offset;
}

#else // no CUPTI in this build: every GPU run times with CUDA events and says why

CuptiTracer& CuptiTracer::instance()
{
    static CuptiTracer tracer;
    return tracer;
}

bool CuptiTracer::builtIn()
{
    return false;
}
std::string CuptiTracer::attach()
{
    return "no CUPTI in this build (the CUDA toolkit's CUPTI was not found)";
}
std::string CuptiTracer::enable(bool, bool)
{
    return attach();
}
void CuptiTracer::disable() {}
std::string CuptiTracer::setApiCallbacks(bool)
{
    return attach();
}
std::string CuptiTracer::detach()
{
    return {};
}
uint32_t CuptiTracer::streamId(void*)
{
    return 0;
}
void CuptiTracer::recordDriverLaunches(bool) {}
void CuptiTracer::resetCorrelationIds() {}
CorrelationIds CuptiTracer::lastCorrelationIds()
{
    return {};
}
std::vector<CuptiRecord> CuptiTracer::take(uint64_t* dropped)
{
    if (dropped)
        *dropped = 0;
    return {};
}
int64_t CuptiTracer::clockOffsetNs(int64_t* errorNs) const
{
    if (errorNs)
        *errorNs = 0;
    return 0;
}

#endif

} // namespace streamscope
