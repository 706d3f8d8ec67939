// Kernel stamps, the CUDA backend's way of timing kernels under timing "cupti" (docs/TRACE.md §1.10): whether a
// scenario's kernels can stamp themselves and what CUPTI still has to record beside them (kernelsCanStamp,
// needsCuptiBesideStamps), the stamp slots and the GPU clock probe of each device (createStampSlots), and after each
// iteration the clock samples, the read-back of the slots and the kernels' spans on the host clock
// (sampleGpuClocks, collectStamps). The measurements behind the choices: tests/data/h200/experiments/kernel-stamps.
#include "cuda_backend_state.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <utility>

namespace streamscope::cuda_backend {

namespace {

// Slots created ahead beyond the plan's count (a launch past them runs without stamps and is counted).
constexpr size_t kStampMargin = 64;

} // namespace

// Kernel stamps need a slot per launch: every kernel op is issued by the backend itself (not inside a graph).
bool CudaBackend::kernelsCanStamp() const
{
    if (!m_plan || !m_plan->scenario)
        return false;
    // NCCL's kernels cannot stamp: with collectives, CUPTI records every kernel (one way of timing for all).
    for (const auto& th : m_plan->scenario->threads)
        for (const Op& op : th.ops)
            if (op.kind == OpKind::Graph || op.kind == OpKind::Collective)
                return false;
    return true;
}

// Whether anything CUPTI records is left beside the stamped kernels: copies and memsets.
bool CudaBackend::needsCuptiBesideStamps() const
{
    for (const auto& th : m_plan->scenario->threads)
        for (const Op& op : th.ops)
            if (op.kind == OpKind::Memcpy || op.kind == OpKind::Memset)
                return true;
    return false;
}

// Timing "cupti" with stamps: a slot per kernel launch of an iteration on each device (the launches of every thread
// of the scenario, repeats included, and a margin; a launch past them runs without stamps and is counted), and the
// clock probe. The probe's first round trips load its kernel: they are thrown away here.
Status CudaBackend::createStampSlots()
{
    if (!m_stampsOn)
        return {};
    const auto& plan = *m_plan;
    const auto& s = *plan.scenario;
    std::map<int, size_t> perDevice;
    for (size_t t = 0; t < s.threads.size(); ++t) {
        const auto& th = s.threads[t];
        const int h0 = plan.firstHostThread[t];
        for (const auto& op : th.ops) {
            if (op.kind != OpKind::Kernel)
                continue;
            const int sp = plan.stream(op.streamIndex, h0);
            if (sp >= 0)
                perDevice[plan.streams[size_t(sp)].device] += size_t(std::max(1, th.repeat));
        }
    }
    for (int d : m_deviceList) {
        auto& dev = *m_devices[size_t(d)];
        const std::string where = "device " + std::to_string(d);
        if (cudaError_t e = cudaSetDevice(d); e != cudaSuccess)
            return cudaFailure("cudaSetDevice", e, where);
        const size_t n = perDevice[d] + kStampMargin;
        const size_t bytes = n * kernels::kStampSlotBytes;
        if (cudaError_t e = cudaMalloc(reinterpret_cast<void**>(&dev.stampSlots), bytes); e != cudaSuccess)
            return cudaFailure("cudaMalloc", e, "the kernel stamp slots of " + where, std::to_string(bytes) + " bytes");
        if (cudaError_t e = cudaMemset(dev.stampSlots, 0, bytes); e != cudaSuccess)
            return cudaFailure("cudaMemset", e, "the kernel stamp slots of " + where);
        dev.stampCapacity = n;
        dev.nextStamp.store(0);
        dev.clockBefore = dev.clockAfter = dev.clockFirst = {};
        dev.stampHost.assign(n * kernels::kStampSlotWords, 0);
        if (cudaError_t e = kernels::stampWave(dev.stampWave); e != cudaSuccess)
            return cudaFailure("cudaDeviceGetAttribute", e, where, "the resident blocks per wave");
        kernels::GpuClockSample ignored;
        if (cudaError_t e = dev.clock.init(); e != cudaSuccess)
            return cudaFailure("cudaHostAlloc", e, where, "the GPU clock probe");
        if (cudaError_t e = dev.clock.sample(4, ignored); e != cudaSuccess)
            return cudaFailure("the GPU clock probe", e, where);
    }
    return {};
}

// The GPU clocks against the host clock, with the devices idle: before an iteration (clockBefore) or after it (the
// stamps of the iteration are then mapped by the line through both samples).
Status CudaBackend::sampleGpuClocks(bool after)
{
    if (!m_stampsOn)
        return {};
    for (int d : m_deviceList) {
        auto& dev = *m_devices[size_t(d)];
        kernels::GpuClockSample sample;
        if (cudaError_t e = dev.clock.sample(32, sample); e != cudaSuccess)
            return cudaFailure("the GPU clock probe", e, "device " + std::to_string(d));
        m_gpuClockErrorNs = std::max(m_gpuClockErrorNs, sample.errorNs);
        if (m_info)
            m_info->clockAlignmentErrorNs = std::max(m_info->clockAlignmentErrorNs, double(sample.errorNs));
        if (!after) {
            dev.clockBefore = sample;
            continue;
        }
        if (dev.clockFirst.errorNs < 0)
            dev.clockFirst = dev.clockBefore;
        // The two clocks' drift over the run so far, where it is long enough to tell it from the samples' error.
        if (const kernels::GpuClockSample& f = dev.clockFirst; f.errorNs >= 0 && sample.gpuNs - f.gpuNs > 100'000'000) {
            const double rate = double(sample.hostNs - f.hostNs) / double(sample.gpuNs - f.gpuNs);
            m_gpuClockDriftPpm = std::abs(rate - 1.0) * 1e6;
        }
        // The iteration's stamps, mapped through both samples; the next iteration starts from this one.
        const size_t used = std::min(dev.nextStamp.load(), dev.stampCapacity);
        if (used > 0) {
            if (cudaError_t e = cudaSetDevice(d); e != cudaSuccess)
                return cudaFailure("cudaSetDevice", e, "device " + std::to_string(d));
            const size_t bytes = used * kernels::kStampSlotBytes;
            if (cudaError_t e = cudaMemcpy(dev.stampHost.data(), dev.stampSlots, bytes, cudaMemcpyDeviceToHost);
                e != cudaSuccess)
                return cudaFailure("cudaMemcpy", e, "device " + std::to_string(d), "reading the kernel stamps");
            // Synchronous on the legacy stream but not ordered with non-blocking streams: the device sync makes
            // sure the zeroes are in before the next iteration's first stamp.
            if (cudaError_t e = cudaMemset(dev.stampSlots, 0, bytes); e != cudaSuccess)
                return cudaFailure("cudaMemset", e, "device " + std::to_string(d), "clearing the kernel stamps");
            if (cudaError_t e = cudaDeviceSynchronize(); e != cudaSuccess)
                return cudaFailure("cudaDeviceSynchronize", e, "device " + std::to_string(d));
        }
        dev.clockAfter = sample;
    }
    collectStamps();
    for (int d : m_deviceList) {
        auto& dev = *m_devices[size_t(d)];
        dev.clockBefore = dev.clockAfter;
        dev.nextStamp.store(0);
    }
    return {};
}

// This iteration's stamped kernels onto the host clock; their lanes' spans are checked against the anchor events.
void CudaBackend::collectStamps()
{
    std::map<std::pair<int, int>, std::pair<int64_t, int64_t>> laneSpans;
    for (auto& tsp : m_threads) {
        auto& ts = *tsp;
        for (const StampPending& p : ts.stamps) {
            if (!ts.records || p.record >= ts.records->size() || size_t(p.device) >= m_devices.size()
                || !m_devices[size_t(p.device)])
                continue;
            const auto& dev = *m_devices[size_t(p.device)];
            kernels::KernelStamps k;
            if (p.slot >= dev.stampCapacity
                || !kernels::stampsOf(dev.stampHost.data() + p.slot * kernels::kStampSlotWords, k)) {
                ++m_stampsMissing;
                continue;
            }
            OpRecord& rec = (*ts.records)[p.record];
            rec.gpuStart = kernels::gpuToHostNs(int64_t(k.start), dev.clockBefore, dev.clockAfter);
            rec.gpuEnd = kernels::gpuToHostNs(int64_t(k.end), dev.clockBefore, dev.clockAfter);
            // No kernel starts before its launch call began: a stamp that maps before it is within the clock's
            // error bound (half a round trip), and is drawn at the call's start.
            if (rec.hasApi() && rec.gpuStart < rec.apiStart)
                rec.gpuStart = rec.apiStart;
            rec.gpuEnd = std::max(rec.gpuEnd, rec.gpuStart);
            ++m_stampsRead;
            const auto lane =
                rec.stream >= 0 && size_t(rec.stream) < m_streams.size() ? m_streams[size_t(rec.stream)].lane : -1;
            if (lane >= 0) {
                auto [it, added] = laneSpans.try_emplace({m_iteration, lane}, rec.gpuStart, rec.gpuEnd);
                it->second.first = std::min(it->second.first, rec.gpuStart);
                it->second.second = std::max(it->second.second, rec.gpuEnd);
            }
        }
        ts.stamps.clear();
    }
    checkAnchors(laneSpans);
}

} // namespace streamscope::cuda_backend
