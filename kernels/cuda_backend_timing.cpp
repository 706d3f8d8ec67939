// How the CUDA backend times GPU ops, and what it does between iterations. Before the run: the timing mode,
// CUPTI or CUDA events with the reason for any fallback (resolveTiming), whether CUPTI records can be matched by
// stream order (cuptiCanMatchByOrder, resolveCuptiStreams), the per-device timing event pools (createTimingPools)
// and each iteration's origin events that map the device clock onto the host clock (anchorAll). After each
// iteration (endIteration): the event times read back onto the host clock (collect), the lanes' anchor events
// (readAnchors, recordStartAnchors, recordEndAnchors, anchorLane) and the iteration's makespan. The untimed
// iterations (beginUntimedIteration, interleaved with the measured ones where no CUPTI is in the process:
// endUntimedIteration; instantiateUntimedGraphs), and at the end (finish) the CUPTI records matched to their ops
// (collectCupti, checkAnchors, writeCuptiCapture) and the timing settings stored in the RunInfo. The kernel stamps'
// part is in cuda_backend_stamps.cpp.
#include "cuda_backend_state.h"

#include "cupti_tracer.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace streamscope::cuda_backend {

namespace {

// Timing events created ahead beyond the plan's exact count (the pool grows in the issue path only past this).
constexpr size_t kTimingEventMargin = 64;

} // namespace

// ---------------------------------------------------------------------------------------------------------------
// before the run: timing mode, CUPTI streams, timing events, origins

// Timing: the mode asked for, or auto; CUPTI failures fall back to events with the reason (the run goes on).
void CudaBackend::resolveTiming(RunInfo& info)
{
    m_opEvents = false;
    m_cuptiOn = false;
    m_cuptiByOrder = false;
    m_cuptiDetached = false;
    m_cuptiDetachError.clear();
    m_laneCuptiStream.clear();
    m_cuptiTiming = false;
    m_stampsOn = false;
    m_kernelStamps = false;
    m_cuptiUsed = false;
    m_stampsRead = m_stampsMissing = 0;
    m_gpuClockErrorNs = -1;
    m_gpuClockDriftPpm = 0;
    m_untimedNow = false;
    m_untimedInterleaved = false;
    m_timedEndNs = INT64_MAX;
    m_timedMakespans.clear();
    m_untimedMakespans.clear();
    m_cuptiMatched = m_cuptiUnmatchedOps = m_cuptiForeign = m_cuptiLate = 0;
    m_anchorWorstNs = 0;
    m_anchorChecks = 0;
    m_anchorEndGaps.clear();
    m_anchorTimes.clear();
    if (!m_options.timeOps) {
        m_timing = TimingMode::Events;
        setSetting(info, "timing", "none");
        return;
    }
    const TimingMode asked = m_options.timing;
    // Timing "cupti": kernels stamp the GPU's clock themselves, and CUPTI records only what they cannot (copies and
    // memsets), so that a kernel-only scenario runs with no CUPTI in the process at all. With graphs (whose nodes
    // are captured once and cannot take a slot per launch) and under "both", CUPTI records the kernels too.
    const bool stamps = (asked == TimingMode::Auto || asked == TimingMode::Cupti) && kernelsCanStamp();
    const bool needCupti = asked != TimingMode::Events && (!stamps || needsCuptiBesideStamps());
    std::string reason;
    if (needCupti) {
        reason = cuptiUnavailableReason();
        m_cuptiByOrder = reason.empty() && cuptiCanMatchByOrder();
        // NCCL launches its kernels with the driver API (cuLaunchKernelEx): their correlation ids come from
        // driver callbacks.
        CuptiTracer::recordDriverLaunches(m_collectives);
        if (reason.empty())
            reason = CuptiTracer::instance().enable(!m_cuptiByOrder, !stamps);
        m_cuptiOn = reason.empty();
        m_cuptiByOrder = m_cuptiByOrder && m_cuptiOn;
    } else if (stamps && CuptiTracer::instance().attached()) {
        // Attached (by an earlier run of this process) but not needed: an attached CUPTI slows launches even with
        // recording off (tests/data/h200/experiments/launch-cost).
        (void)CuptiTracer::instance().detach();
    }
    m_cuptiUsed = m_cuptiOn;
    m_stampsOn = stamps && (m_cuptiOn || !needCupti);
    m_kernelStamps = m_stampsOn;
    m_opEvents = !(m_cuptiOn || m_stampsOn) || asked == TimingMode::Both;
    m_cuptiTiming = m_cuptiOn || m_stampsOn;
    m_timing = m_cuptiTiming ? (asked == TimingMode::Both ? TimingMode::Both : TimingMode::Cupti) : TimingMode::Events;
    info.source = m_cuptiTiming ? TraceSource::Cupti : TraceSource::CudaEvents;
    setSetting(info, "timing", std::string(toString(m_timing)));
    if (m_cuptiTiming)
        setSetting(info, "kernel_timing",
                   m_stampsOn ? "stamps: each kernel takes %globaltimer at its first block's start and last block's "
                                "end; the GPU clock mapped by host ping-pong"
                              : "CUPTI CONCURRENT_KERNEL records");
    if (asked != TimingMode::Events && !m_cuptiTiming)
        setSetting(info, "timing_reason", "CUDA events instead of CUPTI: " + reason);
}

// Timing "cupti" without API callbacks (they cost each launch about 0.4-1.2 us on an H200: bench_cupti_overhead):
// CUPTI gives every API call the next correlation id, so a stream's records, by id, are its calls in order — where
// one host thread issues all of a stream's work. The rule: every stream that gets a kernel, copy or memset is one the
// backend created and gets them from one host thread; no graphs and no peer copies (whose records name streams
// and devices of their own). Anything else keeps the callbacks and their ids.
bool CudaBackend::cuptiCanMatchByOrder() const
{
    const RunPlan& plan = *m_plan;
    const Scenario& s = *plan.scenario;
    std::vector<int> issuer(plan.streams.size(), -1);
    for (size_t h = 0; h < plan.hostThreads.size(); ++h) {
        for (const Op& op : s.threads[size_t(plan.hostThreads[h].thread)].ops) {
            // NCCL may put work of its own into the stream in a call: matched by the call's correlation ids only.
            if (op.kind == OpKind::Graph || op.kind == OpKind::Collective
                || (op.kind == OpKind::Memcpy && op.copy == CopyKind::P2P))
                return false;
            if (op.kind != OpKind::Kernel && op.kind != OpKind::Memcpy && op.kind != OpKind::Memset)
                continue;
            const int sp = plan.stream(op.streamIndex, int(h));
            if (sp < 0)
                return false;
            const StreamKind kind = plan.streams[size_t(sp)].kind;
            if (kind != StreamKind::Blocking && kind != StreamKind::NonBlocking)
                return false;
            if (issuer[size_t(sp)] >= 0 && issuer[size_t(sp)] != int(h))
                return false;
            issuer[size_t(sp)] = int(h);
        }
    }
    return true;
}

// CUPTI's id of every lane's stream, for matching by order; where one cannot be had, the callbacks go back on.
void CudaBackend::resolveCuptiStreams()
{
    m_laneCuptiStream.assign(m_laneCount, 0);
    if (!m_cuptiByOrder)
        return;
    for (size_t l = 0; l < m_laneCount; ++l) {
        const Lane& lane = m_lanes[l];
        if (lane.perThread || lane.handle == cudaStreamLegacy || lane.handle == nullptr)
            continue;
        m_laneCuptiStream[l] = CuptiTracer::streamId(lane.handle);
        if (m_laneCuptiStream[l] == 0) {
            (void)CuptiTracer::instance().setApiCallbacks(true); // should that fail, its ops say "without records"
            m_cuptiByOrder = false;
            return;
        }
    }
}

// One pool of timing events per device, sized for one iteration (the events are read back and reused at the end
// of every iteration, so the pool does not grow with the iteration count).
Status CudaBackend::createTimingPools()
{
    const auto& plan = *m_plan;
    const auto& s = *plan.scenario;
    std::map<int, size_t> perDevice;
    if (m_opEvents) {
        for (size_t t = 0; t < s.threads.size(); ++t) {
            const auto& th = s.threads[t];
            const int h0 = plan.firstHostThread[t];
            for (const auto& op : th.ops) {
                if (!isGpuOp(op.kind))
                    continue;
                const int sp = plan.stream(op.streamIndex, h0);
                if (sp < 0)
                    continue;
                const bool nodes = op.kind == OpKind::Graph && m_options.graphNodeTiming && !op.ops.empty();
                const size_t events = nodes ? op.ops.size() + 1 : 2;
                perDevice[plan.streams[size_t(sp)].device] += events * size_t(std::max(1, th.repeat));
            }
        }
    }
    m_timingEventsPerIteration = 0;
    for (int d : m_deviceList) {
        auto& dev = *m_devices[size_t(d)];
        if (cudaError_t e = cudaSetDevice(d); e != cudaSuccess)
            return cudaFailure("cudaSetDevice", e, "device " + std::to_string(d));
        const size_t n = m_opEvents ? perDevice[d] + kTimingEventMargin : 0;
        dev.timingPool.assign(n, nullptr);
        for (auto& ev : dev.timingPool)
            if (cudaError_t e = cudaEventCreateWithFlags(&ev, cudaEventDefault); e != cudaSuccess)
                return cudaFailure("cudaEventCreateWithFlags", e, "the timing events of device " + std::to_string(d),
                                   std::to_string(n) + " events");
        for (auto& ev : dev.originCandidates)
            if (cudaError_t e = cudaEventCreateWithFlags(&ev, cudaEventDefault); e != cudaSuccess)
                return cudaFailure("cudaEventCreateWithFlags", e, "the origin events of device " + std::to_string(d));
        m_timingEventsPerIteration += int64_t(n);
    }
    // CUPTI's anchor events, two per lane.
    for (size_t l = 0; l < m_laneCount && (m_cuptiOn || m_stampsOn) && !m_opEvents; ++l) {
        Lane& lane = m_lanes[l];
        if (cudaError_t e = cudaSetDevice(lane.device); e != cudaSuccess)
            return cudaFailure("cudaSetDevice", e, "device " + std::to_string(lane.device));
        for (cudaEvent_t* ev : {&lane.anchorStart, &lane.anchorEnd})
            if (cudaError_t e = cudaEventCreateWithFlags(ev, cudaEventDefault); e != cudaSuccess)
                return cudaFailure("cudaEventCreateWithFlags", e, "the anchor events of a stream");
        m_timingEventsPerIteration += 2;
    }
    return {};
}

// Maps each device's clock onto the host clock for the coming iteration: the origin event completed somewhere in
// [t0, t1] around its record and synchronize; its midpoint is the estimate and half the width the error bound.
Status CudaBackend::anchorAll()
{
    for (int d : m_deviceList) {
        auto& dev = *m_devices[size_t(d)];
        if (cudaError_t e = cudaSetDevice(d); e != cudaSuccess)
            return cudaFailure("cudaSetDevice", e, "device " + std::to_string(d));
        int64_t bestWidth = -1;
        for (auto ev : dev.originCandidates) {
            const int64_t t0 = hostNowNs();
            const cudaError_t recorded = cudaEventRecord(ev, cudaStreamLegacy);
            const cudaError_t e = recorded == cudaSuccess ? cudaEventSynchronize(ev) : recorded;
            const int64_t t1 = hostNowNs();
            if (e != cudaSuccess)
                return cudaFailure(recorded != cudaSuccess ? "cudaEventRecord" : "cudaEventSynchronize", e,
                                   "the origin event of device " + std::to_string(d));
            if (bestWidth < 0 || t1 - t0 < bestWidth) {
                bestWidth = t1 - t0;
                dev.origin = ev;
                dev.anchorNs = t0 + (t1 - t0) / 2;
            }
        }
        if (m_info)
            m_info->clockAlignmentErrorNs = std::max(m_info->clockAlignmentErrorNs, double(bestWidth) / 2.0);
    }
    if (m_cuptiOn) {
        int64_t error = 0;
        m_cuptiOffset = CuptiTracer::instance().clockOffsetNs(&error);
        if (m_info)
            m_info->clockAlignmentErrorNs = std::max(m_info->clockAlignmentErrorNs, double(error));
    }
    if (Status st = sampleGpuClocks(false); !st)
        return st;
    if (m_cuptiOn || m_stampsOn)
        recordStartAnchors();
    return {};
}

// ---------------------------------------------------------------------------------------------------------------
// iterations, read-back, finish

Status CudaBackend::collect(std::string_view when)
{
    Status first;
    for (int d : m_deviceList) {
        cudaError_t e = cudaSetDevice(d);
        if (e == cudaSuccess)
            e = cudaDeviceSynchronize();
        if (e != cudaSuccess && first)
            first = cudaFailure("cudaDeviceSynchronize", e, "device " + std::to_string(d) + " " + std::string(when));
    }
    m_lastSyncDone = hostNowNs();
    for (auto& tsp : m_threads) {
        auto& ts = *tsp;
        for (const auto& t : ts.timings) {
            if (!ts.records || t.record >= ts.records->size())
                continue;
            const auto& dev = *m_devices[size_t(t.device)];
            float msStart = 0;
            float msEnd = 0;
            if (!dev.origin || cudaEventElapsedTime(&msStart, dev.origin, t.start) != cudaSuccess
                || cudaEventElapsedTime(&msEnd, dev.origin, t.end) != cudaSuccess) {
                (void)cudaGetLastError(); // not recorded or not completed: the op keeps no GPU span
                continue;
            }
            auto& rec = (*ts.records)[t.record];
            rec.gpuStart = dev.anchorNs + int64_t(std::llround(double(msStart) * 1e6));
            rec.gpuEnd = dev.anchorNs + int64_t(std::llround(double(msEnd) * 1e6));
            // The start event is recorded just before the launch call (its own host cost stays outside the API
            // span) and completes as soon as an idle stream reaches it, which can be before that call began
            // (up to ~6 us before it on an H200 with several host threads); a shared start (the previous op's end
            // event, see Lane) can complete between its query and the call. No op starts before it is launched.
            if (rec.hasApi() && rec.gpuStart < rec.apiStart)
                rec.gpuStart = rec.apiStart;
            rec.gpuEnd = std::max(rec.gpuEnd, rec.gpuStart);
        }
        ts.timings.clear();
        // Host functions timed themselves on the host clock (the device sync above waited for them).
        for (const auto& [record, slot] : ts.hostFuncTimings) {
            const int64_t end = slot->end.load(std::memory_order_acquire);
            const int64_t start = slot->start.load(std::memory_order_relaxed);
            if (!ts.records || record >= ts.records->size() || start < 0 || end < start)
                continue;
            (*ts.records)[record].gpuStart = start;
            (*ts.records)[record].gpuEnd = end;
        }
        ts.hostFuncTimings.clear();
        ts.nextHostFuncSlot = 0;
    }
    readAnchors();
    for (int d : m_deviceList) {
        auto& dev = *m_devices[size_t(d)];
        dev.nextTiming.store(0);
        dev.overflowUsed = 0;
    }
    // The pool's events are recorded again from the next iteration on: no lane may point at one.
    for (size_t l = 0; l < m_laneCount; ++l) {
        m_lanes[l].lastEnd = nullptr;
        m_lanes[l].anchored.store(false);
        m_lanes[l].ended = false;
    }
    return first;
}

// Matches this iteration's CUPTI records to the ops that issued them (the devices are idle: everything was
// recorded). Timing "both": the event times of the same op move to eventStart/eventEnd.
void CudaBackend::collectCupti()
{
    bool any = false;
    for (const auto& ts : m_threads)
        any = any || !ts->cupti.empty();
    if (!any)
        return;
    auto& tracer = CuptiTracer::instance();
    const std::vector<CuptiRecord> records = tracer.take(&m_cuptiDropped);
    std::vector<CuptiIssue> issues;
    std::vector<std::pair<const ThreadState*, const CuptiPending*>> owners;
    // Everything is recorded: the devices were synchronized after the last timed iteration.
    for (const auto& tsp : m_threads)
        for (const auto& pnd : tsp->cupti) {
            CuptiIssue issue{pnd.ids.runtime, pnd.ids.driver};
            if (m_cuptiByOrder && pnd.lane >= 0 && size_t(pnd.lane) < m_laneCuptiStream.size() && pnd.records
                && pnd.record < pnd.records->size()) {
                issue.device = uint32_t(m_lanes[size_t(pnd.lane)].device);
                issue.streamId = m_laneCuptiStream[size_t(pnd.lane)];
                issue.order = (*pnd.records)[pnd.record].apiStart;
            }
            issues.push_back(issue);
            owners.emplace_back(tsp.get(), &pnd);
        }
    const CuptiMatch match = matchCuptiRecords(records, issues, m_cuptiOffset, m_timedEndNs);
    m_cuptiForeign += match.unmatched;
    m_cuptiLate += match.late;
    std::map<std::pair<int, int>, std::pair<int64_t, int64_t>> laneSpans; // (iteration, lane): first start, last end
    for (size_t k = 0; k < owners.size(); ++k) {
        const CuptiPending& pnd = *owners[k].second;
        std::vector<OpRecord>* ops = pnd.records;
        const auto& times = match.times[k];
        if (!ops || pnd.record >= ops->size())
            continue;
        if (times.empty()) {
            ++m_cuptiUnmatchedOps;
            continue;
        }
        m_cuptiMatched += times.size();
        auto place = [&](OpRecord& rec, int64_t start, int64_t end) {
            if (rec.hasGpu()) { // timing "both": what the events said
                rec.eventStart = rec.gpuStart;
                rec.eventEnd = rec.gpuEnd;
            }
            rec.gpuStart = start;
            rec.gpuEnd = std::max(start, end);
            if (pnd.lane >= 0) {
                auto [it, added] = laneSpans.try_emplace({pnd.iteration, pnd.lane}, start, end);
                it->second.first = std::min(it->second.first, start);
                it->second.second = std::max(it->second.second, end);
            }
        };
        if (pnd.nodeCount == 0) {
            // One op, one record (a staged copy may come in several: the op spans them all).
            int64_t end = times.front().end;
            for (const auto& t : times)
                end = std::max(end, t.end);
            place((*ops)[pnd.record], times.front().start, end);
        } else {
            const size_t n = std::min<size_t>(pnd.nodeCount, times.size());
            for (size_t i = 0; i < n && pnd.firstNode + i < ops->size(); ++i)
                place((*ops)[pnd.firstNode + i], times[i].start, times[i].end);
            if (times.size() != pnd.nodeCount)
                ++m_cuptiUnmatchedOps;
        }
    }
    checkAnchors(laneSpans);
    if (!m_options.cuptiCapturePath.empty())
        writeCuptiCapture(records, issues, owners);
    for (auto& tsp : m_threads)
        tsp->cupti.clear();
}

// The lanes' anchor events of the iteration just synchronized, on the host clock (the events are reused).
void CudaBackend::readAnchors()
{
    for (size_t l = 0; l < m_laneCount; ++l) {
        Lane& lane = m_lanes[l];
        if (!lane.anchored.load() || size_t(lane.device) >= m_devices.size() || !m_devices[size_t(lane.device)])
            continue;
        const auto& dev = *m_devices[size_t(lane.device)];
        AnchorTimes a;
        float ms = 0;
        if (dev.origin && cudaEventElapsedTime(&ms, dev.origin, lane.anchorStart) == cudaSuccess)
            a.start = dev.anchorNs + int64_t(std::llround(double(ms) * 1e6));
        if (lane.ended && dev.origin && cudaEventElapsedTime(&ms, dev.origin, lane.anchorEnd) == cudaSuccess)
            a.end = dev.anchorNs + int64_t(std::llround(double(ms) * 1e6));
        (void)cudaGetLastError();
        if (a.start >= 0)
            m_anchorTimes[{m_iteration, int(l)}] = a;
    }
}

// The lane's CUPTI spans against its anchor events, which the event clock (origin event) maps: a span outside
// [start anchor, end anchor] means the two clock mappings disagree by that much.
void CudaBackend::checkAnchors(const std::map<std::pair<int, int>, std::pair<int64_t, int64_t>>& laneSpans)
{
    for (const auto& [key, span] : laneSpans) {
        const auto it = m_anchorTimes.find(key);
        if (it == m_anchorTimes.end())
            continue;
        const auto [lo, hi] = span;
        int64_t worst = it->second.start - lo;
        if (it->second.end >= 0) {
            worst = std::max(worst, hi - it->second.end);
            m_anchorEndGaps.push_back(it->second.end - hi);
        }
        m_anchorWorstNs = std::max(m_anchorWorstNs, worst);
        ++m_anchorChecks;
    }
}

void CudaBackend::writeCuptiCapture(const std::vector<CuptiRecord>& records, const std::vector<CuptiIssue>& issues,
                                    const std::vector<std::pair<const ThreadState*, const CuptiPending*>>& owners)
{
    CuptiCapture c;
    c.hostMinusCupti = m_cuptiOffset;
    c.timedEnd = m_timedEndNs;
    c.issues = issues;
    c.records = records;
    for (const auto& [ts, pnd] : owners) {
        const OpRecord* rec =
            pnd->records && pnd->record < pnd->records->size() ? &(*pnd->records)[pnd->record] : nullptr;
        c.issueApiStart.push_back(rec ? rec->apiStart : -1);
        c.issueApiEnd.push_back(rec ? rec->apiEnd : -1);
        c.issueNames.push_back(rec && size_t(rec->op) < ts->ops.size() ? ts->ops[size_t(rec->op)].name : "");
    }
    std::ofstream out(m_options.cuptiCapturePath, std::ios::binary | std::ios::trunc);
    out << cuptiCaptureToJson(c);
}

// Timing "cupti": the lane's anchor event before its first op of the iteration. Nothing of the iteration is
// before it in its stream, so it completes as soon as the queue reaches it and holds nothing back.
void CudaBackend::anchorLane(const StreamState& st)
{
    Lane& lane = m_lanes[size_t(st.lane)];
    if (m_opEvents || !lane.anchorStart || lane.anchored.load(std::memory_order_acquire))
        return;
    std::lock_guard lock(lane.mutex);
    if (lane.anchored.load(std::memory_order_relaxed))
        return;
    if (cudaEventRecord(lane.anchorStart, st.handle) != cudaSuccess) {
        (void)cudaGetLastError();
        return;
    }
    lane.anchored.store(true, std::memory_order_release);
}

// Timing "cupti", before an iteration's host threads start: every lane's start anchor, into idle streams and queues,
// off the clock of the iteration (recorded in the issue path, 128 of them cost 128 streams' run about 20 %). Per-thread
// default streams take theirs at their first op, on their own host thread.
void CudaBackend::recordStartAnchors()
{
    if (m_opEvents)
        return;
    for (size_t l = 0; l < m_laneCount; ++l) {
        Lane& lane = m_lanes[l];
        if (lane.perThread || !lane.anchorStart)
            continue;
        if (cudaSetDevice(lane.device) == cudaSuccess && cudaEventRecord(lane.anchorStart, lane.handle) == cudaSuccess)
            lane.anchored.store(true);
        else
            (void)cudaGetLastError();
    }
}

// After the devices went idle at the end of the iteration: nothing follows these events in their queues.
void CudaBackend::recordEndAnchors()
{
    for (size_t l = 0; l < m_laneCount; ++l) {
        Lane& lane = m_lanes[l];
        if (!lane.anchored.load() || lane.perThread || !lane.anchorEnd)
            continue;
        if (cudaSetDevice(lane.device) == cudaSuccess && cudaEventRecord(lane.anchorEnd, lane.handle) == cudaSuccess)
            lane.ended = true;
        else
            (void)cudaGetLastError();
    }
}

// Host clock from the iteration's first issuing call to the device sync that found all work done: the same
// measure for timed and untimed iterations.
void CudaBackend::noteIterationMakespan(int iteration)
{
    int64_t first = INT64_MAX;
    for (const auto& tsp : m_threads) {
        if (!tsp->records)
            continue;
        for (size_t i = tsp->iterationFirstRecord; i < tsp->records->size(); ++i)
            if ((*tsp->records)[i].hasApi())
                first = std::min(first, (*tsp->records)[i].apiStart);
    }
    if (first == INT64_MAX || !m_plan)
        return;
    const int64_t makespan = m_lastSyncDone - first;
    if (m_untimedNow)
        m_untimedMakespans.push_back(makespan);
    else if (iteration >= std::max(0, m_plan->scenario->run.warmup))
        m_timedMakespans.push_back(makespan);
}

void CudaBackend::storeTimingSettings()
{
    RunInfo& info = *m_info;
    auto median = [](std::vector<int64_t> v) {
        std::nth_element(v.begin(), v.begin() + ptrdiff_t(v.size() / 2), v.end());
        return v[v.size() / 2];
    };
    if (!m_timedMakespans.empty()) {
        const int64_t timed = median(m_timedMakespans);
        setSetting(info, "timed_makespan_ns", std::to_string(timed));
        setSetting(info, "timed_iterations", std::to_string(m_timedMakespans.size()));
        if (!m_untimedMakespans.empty()) {
            const int64_t untimed = median(m_untimedMakespans);
            setSetting(info, "untimed_makespan_ns", std::to_string(untimed));
            setSetting(info, "untimed_iterations", std::to_string(m_untimedMakespans.size()));
            char buf[64];
            std::snprintf(buf, sizeof buf, "%.4f", double(timed) / double(std::max<int64_t>(1, untimed)));
            setSetting(info, "timing_perturbation", buf);
            setSetting(info, "untimed_order",
                       m_untimedInterleaved ? "interleaved: each measured iteration followed by an untimed one"
                           : m_cuptiUsed    ? "after the measured iterations, with CUPTI detached for them"
                                            : "after the measured iterations");
        }
    }
    if (m_kernelStamps) {
        char drift[64] = "";
        if (m_gpuClockDriftPpm > 0)
            std::snprintf(drift, sizeof drift, "; clocks drift %.2f ppm over the run", m_gpuClockDriftPpm);
        char buf[320];
        std::snprintf(buf, sizeof buf,
                      "%zu kernel launches stamped, %zu without stamps; GPU clock mapped to within %.2f us (widest "
                      "half round trip of its samples, before and after each iteration)%s",
                      m_stampsRead, m_stampsMissing, double(std::max<int64_t>(0, m_gpuClockErrorNs)) / 1000.0, drift);
        setSetting(info, "kernel_stamps", buf);
    }
    if (m_kernelStamps && !m_cuptiUsed)
        setSetting(info, "untimed_cupti", "not used: the scenario's GPU ops are kernels, which stamp themselves");
    if (m_cuptiUsed) {
        setSetting(info, "untimed_cupti",
                   m_cuptiDetached                  ? "detached (cuptiFinalize) before the untimed iterations"
                       : m_cuptiDetachError.empty() ? "attached, recording disabled"
                                                    : "attached, recording disabled (" + m_cuptiDetachError + ")");
        setSetting(info, "cupti_matching",
                   m_cuptiByOrder ? "by stream order (no API callbacks: every stream is issued by one host thread)"
                                  : "by correlation id (API callbacks on the issuing calls)");
        setSetting(info, "cupti_records",
                   std::to_string(m_cuptiMatched) + " matched to ops; " + std::to_string(m_cuptiUnmatchedOps)
                       + " ops without their records; " + std::to_string(m_cuptiForeign)
                       + " of the backend's own work; " + std::to_string(m_cuptiLate) + " after the timed iterations; "
                       + std::to_string(m_cuptiDropped) + " dropped by CUPTI");
    }
    if (m_cuptiTiming && m_anchorChecks > 0) {
        std::vector<int64_t> gaps = m_anchorEndGaps;
        std::sort(gaps.begin(), gaps.end());
        char buf[256];
        std::snprintf(buf, sizeof buf,
                      "%zu stream-iterations: GPU spans within their streams' anchor events to %.1f us; end anchor "
                      "%.1f us after the last span (median)",
                      m_anchorChecks, double(std::max<int64_t>(0, m_anchorWorstNs)) / 1000.0,
                      gaps.empty() ? 0.0 : double(gaps[gaps.size() / 2]) / 1000.0);
        setSetting(info, "clock_check", buf);
    }
}

bool CudaBackend::beginUntimedIteration()
{
    if (!m_prepared || !m_options.timeOps || !m_options.measureUntimed || !m_plan)
        return false;
    // As many untimed iterations as timed ones, at least 3 and at most 5: both figures are medians (with one untimed
    // run, lesson 13's same-priority variant gave timed/untimed 1.00 and 1.50 in two sessions on an H200).
    const int measured = std::max(1, m_plan->scenario->run.iterations);
    if (int(m_untimedMakespans.size()) >= std::clamp(measured, 3, 5))
        return false;
    if (m_untimedNow)
        return true;
    m_untimedNow = true;
    m_timedEndNs = hostNowNs();
    m_depsBeforeUntimed = m_deps.size();
    m_opEventsTimed = m_opEvents;
    m_opEvents = false;
    if (m_cuptiOn) {
        // The timed iterations' records are read now, and CUPTI detached: the untimed iterations run with no CUPTI
        // in the process, as the same work would without StreamScope.
        CuptiTracer::instance().disable();
        collectCupti();
        m_cuptiDetachError = CuptiTracer::instance().detach();
        m_cuptiDetached = m_cuptiDetachError.empty();
        instantiateUntimedGraphs();
    }
    m_cuptiOn = false;
    m_stampsOn = false;
    return true;
}

// Where no CUPTI is in the process (kernel stamps alone, or per-op events), an untimed iteration can run between two
// measured ones: timing comes back on afterwards without anything to attach. The Runner then alternates them, so
// that the host's launch rate, which drifts over a run (an H200 host issued the same launches at 4.3 and 7.7 us in
// two processes minutes apart), weighs on the timed and the untimed makespans alike.
bool CudaBackend::interleavesUntimedIterations() const
{
    return m_prepared && m_options.timeOps && m_options.measureUntimed && !m_cuptiUsed;
}

Status CudaBackend::endUntimedIteration()
{
    if (!m_untimedNow || m_cuptiUsed)
        return {};
    m_untimedNow = false;
    m_untimedInterleaved = true;
    m_opEvents = m_opEventsTimed;
    m_stampsOn = m_kernelStamps;
    m_timedEndNs = INT64_MAX;
    return anchorAll(); // origins, clock samples and start anchors for the next measured iteration
}

// Fresh instances of the scenario's graphs, made with CUPTI disabled, for the untimed iterations (off the clock:
// between iterations). Where one cannot be made, the untimed iterations launch the timed instance.
void CudaBackend::instantiateUntimedGraphs()
{
    for (auto& tsp : m_threads)
        for (auto& res : tsp->ops) {
            if (!res.graph || !res.graph->graph)
                continue;
            auto& g = *res.graph;
            const auto& dev = *m_devices[size_t(g.device)];
            if (cudaSetDevice(g.device) != cudaSuccess
                || cudaGraphInstantiate(&g.untimedExec, g.graph, 0) != cudaSuccess
                || cudaGraphUpload(g.untimedExec, dev.captureStream) != cudaSuccess) {
                (void)cudaGetLastError();
                if (g.untimedExec)
                    (void)cudaGraphExecDestroy(g.untimedExec);
                g.untimedExec = nullptr;
            }
        }
    for (int d : m_deviceList)
        if (cudaSetDevice(d) != cudaSuccess || cudaDeviceSynchronize() != cudaSuccess)
            (void)cudaGetLastError();
}

Status CudaBackend::endIteration(int iteration)
{
    // Timing "cupti": the iteration ends when the devices are idle; the end anchors go in after that, so that neither
    // their host cost nor their completion counts in the timed makespan (128 of them made 128 streams' run 20 %
    // longer than its untimed one on an H200).
    int64_t idle = -1;
    if (m_cuptiOn || m_stampsOn) {
        for (int d : m_deviceList)
            if (cudaSetDevice(d) != cudaSuccess || cudaDeviceSynchronize() != cudaSuccess)
                (void)cudaGetLastError(); // collect() below reports it
        idle = hostNowNs();
        recordEndAnchors();
    }
    m_iteration = iteration;
    Status st = collect("at the end of iteration " + std::to_string(iteration));
    if (idle >= 0)
        m_lastSyncDone = idle;
    if (const int64_t done = m_threadsIdleAt.exchange(-1); done >= 0)
        m_lastSyncDone = std::min(m_lastSyncDone, done);
    if (Status clocks = sampleGpuClocks(true); st && !clocks)
        st = clocks;
    noteIterationMakespan(iteration);
    if (m_untimedNow) {
        std::lock_guard lock(m_depMutex);
        m_deps.resize(std::min(m_deps.size(), m_depsBeforeUntimed));
    }
    resetIterationState();
    // Every iteration starts with the same device memory: what malloc ops left is freed, free ops get their
    // buffers back.
    for (auto& tsp : m_threads) {
        for (const auto& a : tsp->mallocs) {
            (void)cudaSetDevice(a.device);
            if (cudaError_t e = cudaFree(a.ptr); e != cudaSuccess && st)
                st = cudaFailure("cudaFree", e, "thread \"" + tsp->name + "\"", "an allocation of a malloc op");
        }
        tsp->mallocs.clear();
    }
    if (st)
        st = fillFreePools();
    if (st && m_plan && iteration + 1 < m_plan->totalIterations())
        st = anchorAll();
    return st;
}

Status CudaBackend::keep(Status st)
{
    if (!st && m_finishStatus)
        m_finishStatus = st;
    return st;
}

Status CudaBackend::finish(Recording& rec)
{
    m_finishStatus = {};
    if (m_prepared) {
        // What the last (possibly failed) iteration timed is still read back, so that a partial trace keeps it.
        bool pending = false;
        for (const auto& ts : m_threads)
            pending = pending || !ts->timings.empty() || !ts->hostFuncTimings.empty();
        bool stampsPending = false;
        for (const auto& ts : m_threads)
            stampsPending = stampsPending || !ts->stamps.empty();
        if (pending)
            keep(collect("while finishing the run"));
        if (stampsPending)
            keep(sampleGpuClocks(true));
        if (m_cuptiOn)
            CuptiTracer::instance().disable();
        collectCupti();
        if (m_info)
            storeTimingSettings();
        if (m_info && (m_timing == TimingMode::Events || m_timing == TimingMode::Both))
            setSetting(*m_info, "shared_start_events",
                       std::to_string(m_sharedStarts.load()) + " of " + std::to_string(m_timedStarts.load()));
        std::lock_guard lock(m_depMutex);
        appendDeps(rec);
    }
    release();
    return m_finishStatus;
}

} // namespace streamscope::cuda_backend
