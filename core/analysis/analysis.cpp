// The metrics of a trace: analyzeTrace (busy and idle time, gaps, concurrency, overlap, speedup, launch rates per run,
// device, stream and host thread) and concurrencySteps. Written out by analysis_report.cpp; two traces compared by
// analysis_compare.cpp.
#include "analysis.h"
#include "analysis_text.h"

#include "diagnostics.h"
#include "event_timing.h"
#include "parallel_for.h"
#include "span_names.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <set>

namespace streamscope {

using namespace analysis_detail;

namespace {

constexpr int64_t kMaxTime = std::numeric_limits<int64_t>::max();
constexpr int64_t kMinTime = std::numeric_limits<int64_t>::min();

int trackDevice(const Trace& trace, uint32_t track)
{
    return track < trace.tracks.size() ? trace.tracks[track].device : -1;
}

// Idle intervals inside [from, to] not covered by the merged list `busy`.
std::vector<Interval> gapsOf(const std::vector<Interval>& busy, int64_t from, int64_t to)
{
    std::vector<Interval> gaps;
    int64_t t = from;
    for (const auto& b : busy) {
        if (b.start > t)
            gaps.push_back({t, std::min(b.start, to)});
        t = std::max(t, b.end);
        if (t >= to)
            break;
    }
    if (t < to)
        gaps.push_back({t, to});
    std::erase_if(gaps, [](const Interval& g) { return g.end <= g.start; });
    gaps.shrink_to_fit(); // kept in the analysis
    return gaps;
}

// The concurrency profile from sorted starts and ends (sweepConcurrency). Also yields the busy intervals (merged),
// which saves sorting the spans a second time.
ConcurrencyProfile profileOf(const std::vector<int64_t>& starts, const std::vector<int64_t>& ends, int64_t from,
                             int64_t to, bool wantSteps, std::vector<Interval>* busy = nullptr)
{
    ConcurrencyProfile p;
    auto add = [&p](int k, int64_t ns) {
        if (ns <= 0)
            return;
        if (size_t(k) >= p.timeAtNs.size())
            p.timeAtNs.resize(size_t(k) + 1, 0);
        p.timeAtNs[size_t(k)] += ns;
    };
    int64_t t = from;
    sweepConcurrency(starts, ends, [&](int64_t next, int before, int running) {
        if (next > t) {
            add(before, std::min(next, to) - std::max(t, from));
            t = next;
        }
        p.maxConcurrency = std::max(p.maxConcurrency, running);
        if (busy) {
            if (before == 0 && running > 0)
                busy->push_back({next, next});
            else if (before > 0 && running == 0)
                busy->back().end = next;
        }
        // All changes at one instant are applied before the step is recorded.
        if (wantSteps && (p.steps.empty() || p.steps.back().count != running))
            p.steps.push_back({next, running});
    });
    if (to > t)
        add(0, to - std::max(t, from));
    if (p.timeAtNs.empty() && to > from)
        p.timeAtNs.push_back(to - from);
    if (p.timeAtNs.size() < size_t(p.maxConcurrency) + 1)
        p.timeAtNs.resize(size_t(p.maxConcurrency) + 1, 0);
    double weighted = 0;
    for (size_t k = 0; k < p.timeAtNs.size(); ++k)
        weighted += double(k) * double(p.timeAtNs[k]);
    p.averageConcurrency = ratio(weighted, double(to - from));
    return p;
}

bool isLaunchName(std::string_view name)
{
    return name.starts_with("cudaLaunch") || name.starts_with("cudaMemcpy") || name.starts_with("cudaMemset")
        || name.starts_with("cudaGraphLaunch") || name.starts_with("cuLaunch") || name.starts_with("cuMemcpy")
        || name.starts_with("cuMemset") || name.starts_with("cuGraphLaunch");
}

} // namespace

// ---- metrics ----------------------------------------------------------------------------------------------------

namespace {

// The GPU side per device and for the run: busy and idle time, gaps, the concurrency profile, copy/compute overlap,
// speedup (and the count of API calls, on the way over every span).
void analyzeDevices(const Trace& trace, const AnalysisOptions& options, TraceAnalysis& a)
{
    TraceMetrics& m = a.metrics;
    const auto& s = trace.spans;
    const size_t n = s.size();

    // Per device: every GPU span, grouped by its track's device. Each sort happens once: the sweep over the
    // sorted starts and ends gives the concurrency profile and the busy intervals.
    struct DeviceAcc {
        std::vector<int64_t> starts, ends;
        std::vector<Interval> copies, kernels;
        bool otherKinds = false; // memsets or host functions: the kernel union is not the busy union
        int64_t first = kMaxTime, last = kMinTime, work = 0, spans = 0;
    };
    std::map<int, DeviceAcc> perDevice;
    // Each device's lists reserved at their size, not grown by doubling: a job of 64 devices holds every GPU span's
    // times here at once. Counted track by track (a track's spans are consecutive), one look-up of the device per
    // track; a device gets its entry only where it has GPU spans, as below.
    std::map<int, std::array<size_t, 3>> counts; // spans with a length, copies, kernels
    for (uint32_t tr = 0; tr < trace.tracks.size(); ++tr) {
        std::array<size_t, 4> c{}; // GPU spans, then as counts
        for (uint32_t i = trace.trackBegin(tr); i < trace.trackEnd(tr); ++i) {
            const SpanKind k = s.kind[i];
            if (!isGpuSpan(k))
                continue;
            ++c[0];
            c[1] += s.end[i] > s.start[i];
            c[2] += isCopySpan(k);
            c[3] += k == SpanKind::Kernel;
        }
        if (c[0] > 0) {
            auto& total = counts[trace.tracks[tr].device];
            for (size_t k = 0; k < 3; ++k)
                total[k] += c[k + 1];
        }
    }
    for (const auto& [device, c] : counts) {
        DeviceAcc& d = perDevice[device];
        d.starts.reserve(c[0]);
        d.ends.reserve(c[0]);
        d.copies.reserve(c[1]);
        d.kernels.reserve(c[2]);
    }
    for (uint32_t i = 0; i < n; ++i) {
        const SpanKind k = s.kind[i];
        if (k == SpanKind::ApiCall)
            ++m.apiCallCount;
        if (!isGpuSpan(k))
            continue;
        DeviceAcc& d = perDevice[trackDevice(trace, s.track[i])];
        const int64_t b = s.start[i], e = s.end[i];
        d.first = std::min(d.first, b);
        d.last = std::max(d.last, e);
        d.work += e - b;
        ++d.spans;
        if (e > b) {
            d.starts.push_back(b);
            d.ends.push_back(e);
        }
        if (isCopySpan(k))
            d.copies.push_back({b, e});
        else if (k == SpanKind::Kernel)
            d.kernels.push_back({b, e});
        else
            d.otherKinds = true;
    }

    std::vector<int64_t> allStarts, allEnds;
    std::vector<Interval> allCopies, allKernels;
    // Without a copy anywhere the run's copy/compute overlap is 0: the kernels of every device are not collected.
    bool anyCopies = false;
    for (const auto& [index, d] : perDevice)
        anyCopies = anyCopies || !d.copies.empty();
    if (perDevice.size() > 1) {
        size_t times = 0;
        for (const auto& [index, d] : perDevice)
            times += d.starts.size();
        allStarts.reserve(times);
        allEnds.reserve(times);
    }
    int64_t first = kMaxTime, last = kMinTime;
    for (auto& [index, d] : perDevice) {
        DeviceAnalysis da;
        da.device = index;
        for (const auto& info : trace.info.devices)
            if (info.index == index)
                da.name = info.name;
        da.spanCount = d.spans;
        da.firstStart = d.first;
        da.lastEnd = d.last;
        da.makespanNs = d.last - d.first;
        da.gpuWorkNs = d.work;
        da.speedup = ratio(double(d.work), double(da.makespanNs));
        first = std::min(first, d.first);
        last = std::max(last, d.last);
        m.gpuWorkNs += d.work;
        m.gpuSpanCount += d.spans;
        std::sort(d.starts.begin(), d.starts.end());
        std::sort(d.ends.begin(), d.ends.end());
        std::vector<Interval> busy;
        da.concurrency = profileOf(d.starts, d.ends, d.first, d.last, options.concurrencySteps, &busy);
        da.busyNs = totalLength(busy);
        da.gaps = gapsOf(busy, d.first, d.last);
        da.idleNs = totalLength(da.gaps);
        // Without copies there is no copy/compute overlap to measure, and without other kinds the kernels' union is
        // the busy union: both save a sort of every span.
        std::vector<Interval> kernels;
        if (d.copies.empty() && !d.otherKinds)
            kernels = busy;
        else
            kernels = mergeIntervals(std::move(d.kernels));
        const auto copies = mergeIntervals(std::move(d.copies));
        da.copyNs = totalLength(copies);
        da.kernelNs = totalLength(kernels);
        da.copyComputeOverlapNs = copies.empty() ? 0 : intersectionLength(copies, kernels);
        da.copyComputeOverlap = ratio(double(da.copyComputeOverlapNs), double(da.copyNs));
        if (perDevice.size() > 1) {
            const auto mid = std::ptrdiff_t(allStarts.size());
            allStarts.insert(allStarts.end(), d.starts.begin(), d.starts.end());
            std::inplace_merge(allStarts.begin(), allStarts.begin() + mid, allStarts.end());
            const auto midEnd = std::ptrdiff_t(allEnds.size());
            allEnds.insert(allEnds.end(), d.ends.begin(), d.ends.end());
            std::inplace_merge(allEnds.begin(), allEnds.begin() + midEnd, allEnds.end());
            // The device's times are in the run's lists now: their room is given back before the next device's.
            std::vector<int64_t>().swap(d.starts);
            std::vector<int64_t>().swap(d.ends);
            allCopies.insert(allCopies.end(), copies.begin(), copies.end());
            if (anyCopies)
                allKernels.insert(allKernels.end(), kernels.begin(), kernels.end());
        }
        a.devices.push_back(std::move(da));
        if (perDevice.size() == 1) {
            // One device: the run's figures are the device's.
            const DeviceAnalysis& only = a.devices.back();
            a.concurrency = only.concurrency;
            a.busyNs = only.busyNs;
            a.gaps = only.gaps;
            a.copyComputeOverlapNs = only.copyComputeOverlapNs;
            a.copyComputeOverlap = only.copyComputeOverlap;
        }
    }
    if (first != kMaxTime) {
        a.firstStart = first;
        a.lastEnd = last;
    }
    if (perDevice.size() > 1) {
        // The sweep over every device's times gives the run's busy intervals (their union, merged) on the way.
        std::vector<Interval> busyAll;
        a.concurrency = profileOf(allStarts, allEnds, a.firstStart, a.lastEnd, options.concurrencySteps, &busyAll);
        a.busyNs = totalLength(busyAll);
        a.gaps = gapsOf(busyAll, a.firstStart, a.lastEnd);
        // As the lessons' copy_compute_overlap metric: any copy against any kernel, all devices together.
        const auto copies = mergeIntervals(std::move(allCopies));
        a.copyComputeOverlapNs = intersectionLength(copies, mergeIntervals(std::move(allKernels)));
        a.copyComputeOverlap = ratio(double(a.copyComputeOverlapNs), double(totalLength(copies)));
    }
    a.idleNs = totalLength(a.gaps);
    a.makespanNs = m.gpuSpanCount > 0 ? a.lastEnd - a.firstStart : 0;
    a.gpuWorkNs = m.gpuWorkNs;
    a.speedup = ratio(double(a.gpuWorkNs), double(a.makespanNs));
    m.makespanNs = a.makespanNs;
    m.speedup = a.speedup;
    m.maxConcurrency = a.concurrency.maxConcurrency;
    m.copyComputeOverlapNs = a.copyComputeOverlapNs;
    const auto [rangeFirst, rangeLast] = workTimeRange(trace); // not the ranges (CPU ops) around the work
    m.hostMakespanNs = rangeLast - rangeFirst;
}

// Per stream: busy time, gaps, utilization of its device; and the overlap of every pair of streams.
void analyzeStreams(const Trace& trace, const AnalysisOptions& options, TraceAnalysis& a)
{
    TraceMetrics& m = a.metrics;
    const auto& s = trace.spans;
    std::vector<std::vector<Interval>> busyOf;
    for (uint32_t t = 0; t < trace.tracks.size(); ++t) {
        const Track& track = trace.tracks[t];
        if (track.kind != TrackKind::Stream)
            continue;
        StreamAnalysis sa;
        sa.track = t;
        sa.name = track.name;
        sa.device = track.device;
        sa.kind = track.streamKind;
        sa.priority = track.priority;
        int64_t f = kMaxTime, l = kMinTime;
        std::vector<Interval> v;
        for (uint32_t i = trace.trackBegin(t); i < trace.trackEnd(t); ++i) {
            if (!isGpuSpan(s.kind[i]))
                continue;
            ++sa.spanCount;
            sa.gpuWorkNs += s.end[i] - s.start[i];
            f = std::min(f, s.start[i]);
            l = std::max(l, s.end[i]);
            v.push_back({s.start[i], s.end[i]});
        }
        auto busy = mergeIntervals(std::move(v));
        if (sa.spanCount > 0) {
            sa.firstStart = f;
            sa.lastEnd = l;
            sa.busyNs = totalLength(busy);
            sa.gaps = gapsOf(busy, f, l);
            sa.idleNs = totalLength(sa.gaps);
            for (const auto& d : a.devices)
                if (d.device == sa.device)
                    sa.utilization = ratio(double(sa.busyNs), double(d.makespanNs));
        }
        busyOf.push_back(std::move(busy));
        m.streams.push_back({sa.track, sa.name, sa.device, sa.busyNs, sa.spanCount});
        a.streams.push_back(std::move(sa));
    }
    const size_t streamCount = a.streams.size();
    for (auto& d : a.devices)
        for (const auto& st : a.streams)
            d.streamCount += st.device == d.device && st.spanCount > 0;
    if (streamCount <= options.maxOverlapStreams) {
        a.overlapNs.assign(streamCount, std::vector<int64_t>(streamCount, 0));
        a.overlapFraction.assign(streamCount, std::vector<double>(streamCount, 0.0));
        // Row by row on every core where the walks are long: each pair is a walk over both streams' busy intervals
        // (56 streams busy at once, 10 M spans: 1,540 walks of 300,000 steps); row i writes only cells (i, j) and
        // (j, i) for j > i. A small trace stays on this thread (starting threads would cost more).
        size_t intervals = 0;
        for (const auto& busy : busyOf)
            intervals += busy.size();
        constexpr size_t kStepsForThreads = size_t(1) << 22;
        const unsigned threads = intervals * streamCount >= kStepsForThreads ? 0 : 1;
        parallelFor(
            streamCount,
            [&](size_t i) {
                a.overlapNs[i][i] = a.streams[i].busyNs;
                a.overlapFraction[i][i] = a.streams[i].busyNs > 0 ? 1.0 : 0.0;
                for (size_t j = i + 1; j < streamCount; ++j) {
                    const int64_t both = intersectionLength(busyOf[i], busyOf[j]);
                    const double frac = ratio(double(both), double(std::min(a.streams[i].busyNs, a.streams[j].busyNs)));
                    a.overlapNs[i][j] = a.overlapNs[j][i] = both;
                    a.overlapFraction[i][j] = a.overlapFraction[j][i] = frac;
                }
            },
            threads);
    }
}

// Per host thread: API calls, launches and their rate, time blocked in syncs. A launch is an API call that is the
// source of a launch flow; traces without launch flows (imported ones) are counted by the API's name.
void analyzeHostThreads(const Trace& trace, TraceAnalysis& a)
{
    const auto& s = trace.spans;
    const size_t n = s.size();
    std::vector<uint8_t> launches(n, 0);
    bool anyLaunchFlow = false;
    for (const auto& fl : trace.flows)
        if (fl.kind == FlowKind::Launch && fl.from < n) {
            launches[fl.from] = 1;
            anyLaunchFlow = true;
        }
    int64_t hostFirst = kMaxTime, hostLast = kMinTime, allLaunches = 0;
    for (uint32_t t = 0; t < trace.tracks.size(); ++t) {
        const Track& track = trace.tracks[t];
        if (track.kind != TrackKind::HostThread)
            continue;
        HostThreadAnalysis h;
        h.track = t;
        h.name = track.name;
        h.device = track.device;
        int64_t f = kMaxTime, l = kMinTime;
        for (uint32_t i = trace.trackBegin(t); i < trace.trackEnd(t); ++i) {
            f = std::min(f, s.start[i]);
            l = std::max(l, s.end[i]);
            const int64_t d = s.end[i] - s.start[i];
            switch (s.kind[i]) {
            case SpanKind::ApiCall: {
                ++h.apiCalls;
                h.apiNs += d;
                const bool launch = anyLaunchFlow ? launches[i] != 0 : isLaunchName(trace.spanName(i));
                if (launch) {
                    ++h.launchCalls;
                    h.launchNs += d;
                }
                break;
            }
            case SpanKind::Sync:
                ++h.syncCalls;
                h.syncNs += d;
                break;
            case SpanKind::HostWork: h.hostWorkNs += d; break;
            default: break;
            }
        }
        if (f != kMaxTime) {
            h.firstStart = f;
            h.lastEnd = l;
            h.activeNs = l - f;
            hostFirst = std::min(hostFirst, f);
            hostLast = std::max(hostLast, l);
        }
        h.launchesPerSecond = ratio(double(h.launchCalls) * 1e9, double(h.activeNs));
        h.meanLaunchNs = ratio(double(h.launchNs), double(h.launchCalls));
        allLaunches += h.launchCalls;
        a.hostThreads.push_back(std::move(h));
    }
    if (hostFirst != kMaxTime)
        a.launchesPerSecond = ratio(double(allLaunches) * 1e9, double(hostLast - hostFirst));
}

} // namespace

TraceAnalysis analyzeTrace(const Trace& input, const AnalysisOptions& options)
{
    Trace storage;
    const Trace& trace = finalizedView(input, storage);
    TraceAnalysis a;
    analyzeDevices(trace, options, a);
    analyzeStreams(trace, options, a);
    analyzeHostThreads(trace, a);
    return a;
}

std::vector<ConcurrencyStep> concurrencySteps(const Trace& trace, int device)
{
    const ConcurrencySeries series = concurrencySeries(trace, device);
    std::vector<ConcurrencyStep> steps;
    steps.reserve(series.size());
    const TimeColumn::View times = series.times.view();
    for (size_t i = 0; i < series.size(); ++i)
        steps.push_back({times[i], int(series.counts[i])});
    return steps;
}

} // namespace streamscope
