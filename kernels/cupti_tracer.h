// The CUPTI tracer: true start and end of every GPU operation from the CUPTI Activity API (DESIGN.md §4), with no
// work added to the streams. Records are CONCURRENT_KERNEL (never KERNEL, which serializes kernels), MEMCPY,
// MEMCPY2 (peer) and MEMSET, graph nodes included; each carries the correlation id of the API call that issued it,
// which the issuing thread reads right after the call (lastCorrelationIds). Timestamps are on the host's
// steady clock: CUPTI is given that clock (cuptiActivityRegisterTimestampCallback) and maps the GPU's onto it.
//
// One tracer per process (CUPTI allows one subscriber): attach() once, then enable()/disable() around the timed
// iterations. Plain C++ header; the CUPTI types stay in cupti_tracer.cpp.
#pragma once

#include "cupti_records.h"

#include <cstdint>
#include <string>
#include <vector>

namespace streamscope {

struct CorrelationIds {
    uint32_t runtime = 0; // of the last CUDA runtime call this thread entered; 0: none
    uint32_t driver = 0;  // of the first driver-API kernel launch (recordDriverLaunches): NCCL's; a runtime call's
                          // own driver call shares the runtime call's id
};

class CuptiTracer {
public:
    // The process's tracer. attach() subscribes and registers the buffers; an empty string on success, else why
    // CUPTI is not usable ("another profiler is attached", "insufficient permission", CUPTI's message).
    static CuptiTracer& instance();
    static bool builtIn(); // false: this build has no CUPTI, and attach() says so
    std::string attach();
    bool attached() const { return m_attached; }

    // Starts and stops recording (activity kinds and API callbacks): the untimed iteration runs with both off.
    // Without callbacks (`callbacks` false) no correlation id is read per call: records are matched by their place
    // in their stream instead (matchCuptiRecords). The callbacks cost each launch about 0.4-1.2 us on an H200
    // (bench_cupti_overhead). Without `kernels` no CONCURRENT_KERNEL records are made (kernels that stamp
    // themselves: CUPTI's kernel records cost each launch 1.6-3.3 us on an H200).
    std::string enable(bool callbacks = true, bool kernels = true);
    void disable();
    bool enabled() const { return m_enabled; }
    // Detaches CUPTI from the process (cuptiFinalize), so that what runs next runs with no CUPTI at all: a graph
    // launch costs more while CUPTI is attached even with recording disabled (an H200's lesson 14 untimed: 453 µs
    // with CUPTI attached, 326 µs without). Call with the devices synchronized and after take(); attach() works
    // again afterwards. An empty string on success.
    std::string detach();

    // Whether the API callbacks also read the correlation id of kernel launches made with the driver API (NCCL's):
    // set before enable(); off by default, as every launch of the runtime then pays for a second callback.
    static void recordDriverLaunches(bool on);

    // Turns the API callbacks on or off while recording.
    std::string setApiCallbacks(bool on);
    bool apiCallbacks() const { return m_callbacks; }

    // CUPTI's id of a CUDA stream (a cudaStream_t), as its records carry it; 0 when CUPTI cannot tell.
    static uint32_t streamId(void* stream);

    // Clears this thread's correlation ids before an issuing call; reads them after it.
    static void resetCorrelationIds();
    static CorrelationIds lastCorrelationIds();

    // Flushes CUPTI's buffers (call after the devices are synchronized) and returns what was recorded since the last
    // take, and how many records CUPTI dropped. The first enqueue after a flush cost about 700 us on an H200: take
    // once, after the last timed iteration.
    std::vector<CuptiRecord> take(uint64_t* dropped = nullptr);

    // The host steady clock minus CUPTI's clock, measured now (0 when CUPTI runs on the steady clock), and half the
    // narrowest sampling window: the bound on that offset's error.
    int64_t clockOffsetNs(int64_t* errorNs = nullptr) const;
    bool usesHostClock() const { return m_hostClock; }

private:
    CuptiTracer() = default;
    bool m_attached = false;
    bool m_enabled = false;
    bool m_callbacks = false;
    bool m_hostClock = false;
    std::string m_attachError;
};

} // namespace streamscope
