#include "event_timing.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace streamscope {

namespace {

// A block of a spin kernel starts within this of its kernel's start on an idle H200 (block dispatch); less than
// that is no evidence that the start event fired early.
constexpr int64_t kDispatchSlackNs = 1000;

int smCountOf(const Trace& t, int device)
{
    for (const auto& d : t.info.devices) {
        if (d.index != device)
            continue;
        for (const auto& [k, v] : d.properties)
            if (k == "sm_count")
                return std::atoi(v.c_str());
    }
    return 0;
}

const Op* scenarioOp(const Scenario* s, int32_t thread, int32_t op)
{
    if (!s || thread < 0 || size_t(thread) >= s->threads.size())
        return nullptr;
    const auto& ops = s->threads[size_t(thread)].ops;
    if (op < 0 || size_t(op) >= ops.size())
        return nullptr;
    return &ops[size_t(op)];
}

void markCorrected(Trace& t, uint32_t i, int64_t start, EventTimingCorrections& c)
{
    if (start <= t.spans.start[i])
        return;
    start = std::min(start, t.spans.end[i]);
    c.movedNs += start - t.spans.start[i];
    t.spans.start.set(i, start);
    if (t.spans.timing.empty())
        t.spans.timing.assign(t.spans.size(), SpanTiming::Measured);
    if (t.spans.timing[i] != SpanTiming::Corrected) {
        t.spans.timing[i] = SpanTiming::Corrected;
        ++c.corrected;
    }
}

double percentile(std::vector<double>& v, double p)
{
    if (v.empty())
        return 0;
    std::sort(v.begin(), v.end());
    const double pos = p * double(v.size() - 1);
    const size_t lo = size_t(pos);
    const size_t hi = std::min(lo + 1, v.size() - 1);
    return v[lo] + (v[hi] - v[lo]) * (pos - double(lo));
}

} // namespace

EventTimingCorrections correctEventTimedSpans(Trace& t, const Scenario* scenario)
{
    EventTimingCorrections c;
    if (!t.finalized()) // the runner hands it over finalized: no second sort
        t.finalize();
    const size_t n = t.spanCount();
    int maxDevice = -1;
    for (const auto& tr : t.tracks)
        maxDevice = std::max(maxDevice, tr.device);
    if (maxDevice < 0)
        return c;

    // Copies: one engine per direction and device, in order. Sorted by end, each starts after the one before.
    for (int d = 0; d <= maxDevice; ++d)
        for (SpanKind dir : {SpanKind::MemcpyH2D, SpanKind::MemcpyD2H}) {
            std::vector<uint32_t> copies;
            for (uint32_t i = 0; i < n; ++i)
                if (t.spans.kind[i] == dir && t.tracks[t.spans.track[i]].device == d)
                    copies.push_back(i);
            std::sort(copies.begin(), copies.end(), [&](uint32_t a, uint32_t b) {
                return t.spans.end[a] != t.spans.end[b] ? t.spans.end[a] < t.spans.end[b]
                                                        : t.spans.start[a] < t.spans.start[b];
            });
            for (size_t k = 1; k < copies.size(); ++k)
                markCorrected(t, copies[k], t.spans.end[copies[k - 1]], c);
        }

    // Spin kernels of one wave: each block runs the op's duration, so the kernel began no later than that before
    // its end; a start event earlier than that fired while the kernel waited (for SMs or its queue).
    for (uint32_t i = 0; i < n; ++i) {
        if (t.spans.kind[i] != SpanKind::Kernel)
            continue;
        const Op* op = scenarioOp(scenario, t.spans.threadOf(i), t.spans.opOf(i));
        if (!op || op->kind != OpKind::Kernel || op->kernel != KernelKind::Spin || op->durationUs <= 0)
            continue;
        const int sms = smCountOf(t, t.tracks[t.spans.track[i]].device);
        if (sms <= 0 || effectiveGrid(*op).count() > uint64_t(sms))
            continue;
        const int64_t latest = t.spans.end[i] - int64_t(std::llround(op->durationUs * 1000.0));
        if (latest > t.spans.start[i] + kDispatchSlackNs)
            markCorrected(t, i, latest, c);
    }

    // Kernels and memsets whose start event fired while another kernel of the device ran may have waited for SMs.
    for (int d = 0; d <= maxDevice; ++d) {
        std::vector<uint32_t> work;
        for (uint32_t i = 0; i < n; ++i) {
            const SpanKind k = t.spans.kind[i];
            if ((k == SpanKind::Kernel || k == SpanKind::Memset) && t.tracks[t.spans.track[i]].device == d)
                work.push_back(i);
        }
        std::sort(work.begin(), work.end(),
                  [&](uint32_t a, uint32_t b) { return t.spans.start[a] < t.spans.start[b]; });
        // Running maximum of the ends of earlier-starting spans of other tracks is enough for "was one running".
        int64_t latestEnd = INT64_MIN;
        uint32_t latestTrack = UINT32_MAX;
        int64_t secondEnd = INT64_MIN; // latest end among tracks other than latestTrack
        for (uint32_t i : work) {
            const uint32_t tr = t.spans.track[i];
            const int64_t otherEnd = tr == latestTrack ? secondEnd : latestEnd;
            if (otherEnd > t.spans.start[i] && t.spans.timingOf(i) == SpanTiming::Measured) {
                if (t.spans.timing.empty())
                    t.spans.timing.assign(n, SpanTiming::Measured);
                t.spans.timing[i] = SpanTiming::Uncertain;
                ++c.uncertain;
            }
            const int64_t e = t.spans.end[i];
            if (tr == latestTrack) {
                latestEnd = std::max(latestEnd, e);
            } else if (e > latestEnd) {
                secondEnd = latestEnd;
                latestEnd = e;
                latestTrack = tr;
            } else {
                secondEnd = std::max(secondEnd, e);
            }
        }
    }
    t.finalize();
    return c;
}

std::optional<EventTimingError> summarizeEventTimingError(const Trace& t)
{
    if (t.spans.eventStartError.empty())
        return std::nullopt;
    std::vector<double> starts;
    std::vector<double> ends;
    double startSum = 0;
    double endSum = 0;
    for (size_t i = 0; i < t.spanCount(); ++i) {
        if (!t.spans.hasEventError(i) || !isGpuSpan(t.spans.kind[i]))
            continue;
        const double s = double(t.spans.eventStartError[i]);
        const double e = double(t.spans.eventEndError[i]);
        starts.push_back(std::abs(s));
        ends.push_back(std::abs(e));
        startSum += s;
        endSum += e;
    }
    if (starts.empty())
        return std::nullopt;
    EventTimingError r;
    r.spans = starts.size();
    r.startMeanNs = startSum / double(r.spans);
    r.endMeanNs = endSum / double(r.spans);
    r.startMedianNs = percentile(starts, 0.5);
    r.startP90Ns = percentile(starts, 0.9);
    r.endMedianNs = percentile(ends, 0.5);
    r.endP90Ns = percentile(ends, 0.9);
    return r;
}

TimingSummary summarizeTiming(const Trace& t)
{
    TimingSummary s;
    for (const auto& [k, v] : t.info.settings) {
        if (k == "timing")
            s.timing = v;
        else if (k == "timing_reason")
            s.reason = v;
        else if (k == "timed_makespan_ns")
            s.timedMakespanNs = std::atoll(v.c_str());
        else if (k == "untimed_makespan_ns")
            s.untimedMakespanNs = std::atoll(v.c_str());
        else if (k == "clock_check")
            s.clockCheck = v;
    }
    if (s.timedMakespanNs > 0 && s.untimedMakespanNs > 0)
        s.perturbation = double(s.timedMakespanNs) / double(s.untimedMakespanNs);
    s.eventError = summarizeEventTimingError(t);
    for (size_t i = 0; i < t.spans.timing.size(); ++i) {
        s.corrected += t.spans.timing[i] == SpanTiming::Corrected;
        s.uncertain += t.spans.timing[i] == SpanTiming::Uncertain;
    }
    return s;
}

std::string timingReport(const TimingSummary& s)
{
    if (s.timing.empty() || s.timing == "none")
        return {};
    auto us = [](double ns) {
        char b[32];
        std::snprintf(b, sizeof b, "%.1f us", ns / 1000.0);
        return std::string(b);
    };
    std::string r = "timing:               " + s.timing;
    if (s.perturbation > 0) {
        char b[160];
        std::snprintf(b, sizeof b, " (timed %.3f ms, untimed %.3f ms: %+.1f %%)", double(s.timedMakespanNs) / 1e6,
                      double(s.untimedMakespanNs) / 1e6, 100.0 * (s.perturbation - 1.0));
        r += b;
    }
    r += '\n';
    if (!s.reason.empty())
        r += "  " + s.reason + '\n';
    if (s.eventError)
        r += "  CUDA events vs CUPTI over " + std::to_string(s.eventError->spans) + " spans: start error median "
            + us(s.eventError->startMedianNs) + ", p90 " + us(s.eventError->startP90Ns) + " (mean "
            + us(s.eventError->startMeanNs) + "); end error median " + us(s.eventError->endMedianNs) + ", p90 "
            + us(s.eventError->endP90Ns) + '\n';
    if (s.timing == "events")
        r += "  event-timed starts: " + std::to_string(s.corrected) + " corrected, " + std::to_string(s.uncertain)
            + " uncertain (may include a wait for SMs)\n";
    if (!s.clockCheck.empty())
        r += "  clock check: " + s.clockCheck + '\n';
    return r;
}

} // namespace streamscope
