#include "analysis.h"

#include "diagnostics.h"
#include "event_timing.h"
#include "span_names.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <set>

namespace streamscope {

namespace {

using OrderedJson = nlohmann::ordered_json;

constexpr int64_t kMaxTime = std::numeric_limits<int64_t>::max();
constexpr int64_t kMinTime = std::numeric_limits<int64_t>::min();

double ratio(double num, double den) { return den > 0 ? num / den : 0.0; }

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
    return gaps;
}

// The sweep behind the concurrency profile over sorted starts and ends: half-open spans, so back-to-back spans
// are not concurrent. Also yields the busy intervals (merged), which saves sorting the spans a second time.
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
    size_t i = 0, j = 0;
    int running = 0;
    int64_t t = from;
    while (i < starts.size() || j < ends.size()) {
        const int64_t next = std::min(i < starts.size() ? starts[i] : kMaxTime, j < ends.size() ? ends[j] : kMaxTime);
        if (next > t) {
            add(running, std::min(next, to) - std::max(t, from));
            t = next;
        }
        const int before = running;
        while (j < ends.size() && ends[j] == next) {
            --running;
            ++j;
        }
        while (i < starts.size() && starts[i] == next) {
            ++running;
            ++i;
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
    }
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

// Intersection of two merged lists, restricted to the window where both have intervals.
int64_t overlapOf(const std::vector<Interval>& a, const std::vector<Interval>& b)
{
    if (a.empty() || b.empty())
        return 0;
    const int64_t lo = std::max(a.front().start, b.front().start);
    const int64_t hi = std::min(a.back().end, b.back().end);
    if (hi <= lo)
        return 0;
    auto firstEndingAfter = [lo](const std::vector<Interval>& v) {
        return std::partition_point(v.begin(), v.end(), [lo](const Interval& x) { return x.end <= lo; });
    };
    auto ia = firstEndingAfter(a);
    auto ib = firstEndingAfter(b);
    int64_t sum = 0;
    while (ia != a.end() && ib != b.end() && ia->start < hi && ib->start < hi) {
        const int64_t s = std::max(ia->start, ib->start);
        const int64_t e = std::min(ia->end, ib->end);
        if (e > s)
            sum += e - s;
        if (ia->end < ib->end)
            ++ia;
        else
            ++ib;
    }
    return sum;
}

bool isLaunchName(std::string_view name)
{
    return name.starts_with("cudaLaunch") || name.starts_with("cudaMemcpy") || name.starts_with("cudaMemset")
        || name.starts_with("cudaGraphLaunch") || name.starts_with("cuLaunch") || name.starts_with("cuMemcpy")
        || name.starts_with("cuMemset") || name.starts_with("cuGraphLaunch");
}

std::string streamLabel(const Trace& trace, uint32_t track)
{
    if (track >= trace.tracks.size())
        return "?";
    return trace.tracks[track].name;
}

} // namespace

// ---- metrics ----------------------------------------------------------------------------------------------------

TraceAnalysis analyzeTrace(const Trace& input, const AnalysisOptions& options)
{
    Trace storage;
    const Trace& trace = finalizedView(input, storage);
    TraceAnalysis a;
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
    std::vector<Interval> allCopies, allKernels, allBusy;
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
            allBusy.insert(allBusy.end(), busy.begin(), busy.end());
            const auto mid = std::ptrdiff_t(allStarts.size());
            allStarts.insert(allStarts.end(), d.starts.begin(), d.starts.end());
            std::inplace_merge(allStarts.begin(), allStarts.begin() + mid, allStarts.end());
            const auto midEnd = std::ptrdiff_t(allEnds.size());
            allEnds.insert(allEnds.end(), d.ends.begin(), d.ends.end());
            std::inplace_merge(allEnds.begin(), allEnds.begin() + midEnd, allEnds.end());
            allCopies.insert(allCopies.end(), copies.begin(), copies.end());
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
        const auto busyAll = mergeIntervals(std::move(allBusy));
        a.busyNs = totalLength(busyAll);
        a.gaps = gapsOf(busyAll, a.firstStart, a.lastEnd);
        a.concurrency = profileOf(allStarts, allEnds, a.firstStart, a.lastEnd, options.concurrencySteps);
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

    // Streams.
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
        for (size_t i = 0; i < streamCount; ++i) {
            a.overlapNs[i][i] = a.streams[i].busyNs;
            a.overlapFraction[i][i] = a.streams[i].busyNs > 0 ? 1.0 : 0.0;
            for (size_t j = i + 1; j < streamCount; ++j) {
                const int64_t both = overlapOf(busyOf[i], busyOf[j]);
                const double frac = ratio(double(both), double(std::min(a.streams[i].busyNs, a.streams[j].busyNs)));
                a.overlapNs[i][j] = a.overlapNs[j][i] = both;
                a.overlapFraction[i][j] = a.overlapFraction[j][i] = frac;
            }
        }
    }

    // Host threads. A launch is an API call that is the source of a launch flow; traces without launch flows
    // (imported ones) are counted by the API's name.
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
    return a;
}

std::vector<ConcurrencyStep> concurrencySteps(const Trace& trace, int device)
{
    std::vector<int64_t> starts, ends;
    const auto& s = trace.spans;
    int64_t first = kMaxTime, last = kMinTime;
    for (uint32_t i = 0; i < s.size(); ++i) {
        if (!isGpuSpan(s.kind[i]) || s.end[i] <= s.start[i])
            continue;
        if (device >= 0 && trackDevice(trace, s.track[i]) != device)
            continue;
        starts.push_back(s.start[i]);
        ends.push_back(s.end[i]);
        first = std::min(first, s.start[i]);
        last = std::max(last, s.end[i]);
    }
    if (starts.empty())
        return {};
    std::sort(starts.begin(), starts.end());
    std::sort(ends.begin(), ends.end());
    return profileOf(starts, ends, first, last, true).steps;
}

// ---- JSON and text ----------------------------------------------------------------------------------------------

namespace {

double finite(double v) { return std::isfinite(v) ? v : 0.0; }

// The longest `limit` gaps, in time order.
std::vector<Interval> longestGaps(const std::vector<Interval>& gaps, size_t limit)
{
    if (gaps.size() <= limit)
        return gaps;
    std::vector<Interval> v = gaps;
    std::nth_element(v.begin(), v.begin() + std::ptrdiff_t(limit), v.end(),
                     [](const Interval& x, const Interval& y) { return x.end - x.start > y.end - y.start; });
    v.resize(limit);
    std::sort(v.begin(), v.end(), [](const Interval& x, const Interval& y) { return x.start < y.start; });
    return v;
}

OrderedJson gapsJson(const std::vector<Interval>& gaps, int64_t total, size_t limit)
{
    OrderedJson j;
    j["count"] = gaps.size();
    j["total_ns"] = total;
    auto list = OrderedJson::array();
    for (const auto& g : longestGaps(gaps, limit))
        list.push_back({{"start_ns", g.start}, {"end_ns", g.end}});
    j["longest"] = std::move(list);
    return j;
}

OrderedJson concurrencyJson(const ConcurrencyProfile& p, bool steps)
{
    OrderedJson j;
    j["max"] = p.maxConcurrency;
    j["average"] = finite(p.averageConcurrency);
    j["time_at_ns"] = p.timeAtNs;
    if (steps) {
        auto list = OrderedJson::array();
        for (const auto& st : p.steps)
            list.push_back({st.time, st.count});
        j["steps"] = std::move(list); // [time_ns, count]
    }
    return j;
}

OrderedJson metricsJson(const Trace& trace, const TraceAnalysis& a, const ReportOptions& o)
{
    const TraceMetrics& m = a.metrics;
    OrderedJson j;
    j["makespan_ns"] = m.makespanNs;
    j["gpu_work_ns"] = m.gpuWorkNs;
    j["speedup"] = finite(m.speedup);
    j["max_concurrency"] = m.maxConcurrency;
    j["copy_compute_overlap_ns"] = a.copyComputeOverlapNs;
    j["host_makespan_ns"] = m.hostMakespanNs;
    j["gpu_span_count"] = m.gpuSpanCount;
    j["api_call_count"] = m.apiCallCount;
    j["first_start_ns"] = a.firstStart;
    j["last_end_ns"] = a.lastEnd;
    j["busy_ns"] = a.busyNs;
    j["idle_ns"] = a.idleNs;
    j["copy_compute_overlap"] = finite(a.copyComputeOverlap);
    j["average_concurrency"] = finite(a.concurrency.averageConcurrency);
    j["launches_per_second"] = finite(a.launchesPerSecond);
    j["gaps"] = gapsJson(a.gaps, a.idleNs, o.maxGapsPerItem);
    j["concurrency"] = concurrencyJson(a.concurrency, o.concurrencySteps);

    auto devices = OrderedJson::array();
    for (const auto& d : a.devices) {
        OrderedJson jd;
        jd["device"] = d.device;
        jd["name"] = d.name;
        jd["stream_count"] = d.streamCount;
        jd["span_count"] = d.spanCount;
        jd["first_start_ns"] = d.firstStart;
        jd["last_end_ns"] = d.lastEnd;
        jd["makespan_ns"] = d.makespanNs;
        jd["busy_ns"] = d.busyNs;
        jd["idle_ns"] = d.idleNs;
        jd["gpu_work_ns"] = d.gpuWorkNs;
        jd["speedup"] = finite(d.speedup);
        jd["copy_ns"] = d.copyNs;
        jd["kernel_ns"] = d.kernelNs;
        jd["copy_compute_overlap_ns"] = d.copyComputeOverlapNs;
        jd["copy_compute_overlap"] = finite(d.copyComputeOverlap);
        jd["gaps"] = gapsJson(d.gaps, d.idleNs, o.maxGapsPerItem);
        jd["concurrency"] = concurrencyJson(d.concurrency, o.concurrencySteps);
        devices.push_back(std::move(jd));
    }
    j["devices"] = std::move(devices);

    auto streams = OrderedJson::array();
    for (const auto& st : a.streams) {
        OrderedJson js;
        js["name"] = st.name;
        js["device"] = st.device;
        js["busy_ns"] = st.busyNs;
        js["span_count"] = st.spanCount;
        js["track"] = st.track;
        js["kind"] = std::string(toString(st.kind));
        js["priority"] = st.priority;
        js["first_start_ns"] = st.firstStart;
        js["last_end_ns"] = st.lastEnd;
        js["gpu_work_ns"] = st.gpuWorkNs;
        js["idle_ns"] = st.idleNs;
        js["utilization"] = finite(st.utilization);
        js["gaps"] = gapsJson(st.gaps, st.idleNs, o.maxGapsPerItem);
        streams.push_back(std::move(js));
    }
    j["streams"] = std::move(streams);

    if (!a.overlapNs.empty()) {
        OrderedJson ov;
        auto names = OrderedJson::array();
        for (const auto& st : a.streams)
            names.push_back(st.name);
        ov["streams"] = std::move(names);
        ov["ns"] = a.overlapNs;
        auto frac = OrderedJson::array();
        for (const auto& row : a.overlapFraction) {
            auto r = OrderedJson::array();
            for (double v : row)
                r.push_back(finite(v));
            frac.push_back(std::move(r));
        }
        ov["fraction"] = std::move(frac);
        j["overlap"] = std::move(ov);
    }

    auto hosts = OrderedJson::array();
    for (const auto& h : a.hostThreads) {
        OrderedJson jh;
        jh["name"] = h.name;
        jh["track"] = h.track;
        jh["device"] = h.device;
        jh["active_ns"] = h.activeNs;
        jh["api_calls"] = h.apiCalls;
        jh["launch_calls"] = h.launchCalls;
        jh["sync_calls"] = h.syncCalls;
        jh["api_ns"] = h.apiNs;
        jh["launch_ns"] = h.launchNs;
        jh["sync_ns"] = h.syncNs;
        jh["host_work_ns"] = h.hostWorkNs;
        jh["launches_per_second"] = finite(h.launchesPerSecond);
        jh["mean_launch_ns"] = finite(h.meanLaunchNs);
        hosts.push_back(std::move(jh));
    }
    j["host_threads"] = std::move(hosts);
    (void)trace;
    return j;
}

std::string dumpJson(const OrderedJson& j, int indent)
{
    return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string pct(double fraction)
{
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.0f%%", 100.0 * finite(fraction));
    return buf;
}

std::string num(double v, const char* fmt = "%.2f")
{
    char buf[64];
    std::snprintf(buf, sizeof buf, fmt, finite(v));
    return buf;
}

} // namespace

std::string analysisToJson(const Trace& input, const TraceAnalysis& a, const CriticalPath& path,
                           const std::vector<Diagnostic>& diagnostics, const ReportOptions& o)
{
    Trace storage;
    const Trace& trace = finalizedView(input, storage);
    OrderedJson j;
    j["metrics"] = metricsJson(trace, a, o);
    if (const TimingSummary ts = summarizeTiming(trace); !ts.timing.empty()) {
        OrderedJson tj;
        tj["timing"] = ts.timing;
        if (!ts.reason.empty())
            tj["reason"] = ts.reason;
        if (ts.perturbation > 0) {
            tj["timed_makespan_ns"] = ts.timedMakespanNs;
            tj["untimed_makespan_ns"] = ts.untimedMakespanNs;
            tj["perturbation"] = ts.perturbation;
        }
        if (ts.eventError) {
            const auto& e = *ts.eventError;
            tj["event_error"] = {{"spans", e.spans},           {"start_median_ns", e.startMedianNs},
                                 {"start_p90_ns", e.startP90Ns}, {"start_mean_ns", e.startMeanNs},
                                 {"end_median_ns", e.endMedianNs}, {"end_p90_ns", e.endP90Ns}};
        }
        if (ts.timing == "events") {
            tj["corrected_starts"] = ts.corrected;
            tj["uncertain_starts"] = ts.uncertain;
        }
        if (!ts.clockCheck.empty())
            tj["clock_check"] = ts.clockCheck;
        j["timing"] = std::move(tj);
    }

    auto cp = OrderedJson::array();
    const size_t count = path.segments.size();
    const size_t from
        = o.maxCriticalPathSegments > 0 && count > o.maxCriticalPathSegments ? count - o.maxCriticalPathSegments : 0;
    for (size_t k = from; k < count; ++k) {
        const auto& seg = path.segments[k];
        OrderedJson js;
        js["span"] = seg.span;
        js["name"] = seg.name;
        js["kind"] = std::string(toString(seg.kind));
        js["track"] = seg.track;
        js["track_name"] = streamLabel(trace, seg.track);
        js["start_ns"] = seg.start;
        js["end_ns"] = seg.end;
        js["contribution_ns"] = seg.contributionNs;
        js["idle_before_ns"] = seg.idleBeforeNs;
        js["reason"] = std::string(toString(seg.reason));
        if (seg.reason == PathReason::Resource)
            js["wait"] = {{"cause", std::string(toString(seg.wait))},
                          {"ns", seg.waitNs},
                          {"inferred", seg.waitInferred},
                          {"text", describeRelease(trace, path, k)}};
        cp.push_back(std::move(js));
    }
    j["critical_path"] = std::move(cp);
    OrderedJson summary;
    summary["segments"] = count;
    summary["listed"] = count - from;
    summary["start_ns"] = path.startNs;
    summary["end_ns"] = path.endNs;
    summary["length_ns"] = path.lengthNs;
    summary["busy_ns"] = path.busyNs;
    summary["idle_ns"] = path.idleNs;
    summary["resource_wait_ns"] = path.resourceWaitNs;
    OrderedJson idle = OrderedJson::object();
    for (int c = 0; c < kIdleCauseCount; ++c)
        if (path.idleByCause[size_t(c)] > 0)
            idle[std::string(idleCauseKey(IdleCause(c)))] = path.idleByCause[size_t(c)];
    summary["idle_by_cause_ns"] = std::move(idle);
    summary["gpu_ns"] = path.gpuNs;
    summary["host_ns"] = path.hostNs;
    j["critical_path_summary"] = std::move(summary);

    auto diags = OrderedJson::array();
    for (const auto& d : diagnostics) {
        OrderedJson jd;
        jd["rule"] = d.rule;
        jd["severity"] = d.severity;
        jd["message"] = d.message;
        jd["spans"] = d.spans;
        diags.push_back(std::move(jd));
    }
    j["diagnostics"] = std::move(diags);
    return dumpJson(j, o.indent);
}

std::string analysisToJson(const Trace& input, const ReportOptions& o)
{
    Trace storage;
    const Trace& trace = finalizedView(input, storage);
    AnalysisOptions ao;
    ao.concurrencySteps = o.concurrencySteps;
    return analysisToJson(trace, analyzeTrace(trace, ao), criticalPath(trace), diagnose(trace), o);
}

std::string analysisReport(const Trace& input, const TraceAnalysis& a, const CriticalPath& path,
                           const std::vector<Diagnostic>& diagnostics, const ReportOptions& o)
{
    Trace storage;
    const Trace& trace = finalizedView(input, storage);
    std::string r;
    auto line = [&r](const std::string& s) { r += s + '\n'; };
    line("makespan:             " + formatDuration(a.makespanNs));
    r += timingReport(summarizeTiming(trace));
    line("GPU work:             " + formatDuration(a.gpuWorkNs) + " (all GPU operations back to back)");
    line("speedup over serial:  " + num(a.speedup, "%.2fx"));
    line("GPU busy / idle:      " + formatDuration(a.busyNs) + " / " + formatDuration(a.idleNs) + " in "
         + std::to_string(a.gaps.size()) + (a.gaps.size() == 1 ? " gap" : " gaps"));
    line("concurrency:          max " + std::to_string(a.concurrency.maxConcurrency) + ", average "
         + num(a.concurrency.averageConcurrency));
    {
        std::string at = "  time at k running:  ";
        for (size_t k = 0; k < a.concurrency.timeAtNs.size(); ++k)
            at += (k ? ", " : "") + std::to_string(k) + ": "
                + pct(ratio(double(a.concurrency.timeAtNs[k]), double(a.makespanNs)));
        line(at);
    }
    line("copy/compute overlap: " + formatDuration(a.copyComputeOverlapNs) + " (" + pct(a.copyComputeOverlap)
         + " of copy time)");
    if (a.devices.size() > 1)
        for (const auto& d : a.devices)
            line("device " + std::to_string(d.device) + ": makespan " + formatDuration(d.makespanNs) + ", busy "
                 + formatDuration(d.busyNs) + ", speedup " + num(d.speedup, "%.2fx") + ", max concurrency "
                 + std::to_string(d.concurrency.maxConcurrency));
    if (!a.streams.empty()) {
        size_t width = 6;
        for (const auto& s : a.streams)
            width = std::max(width, s.name.size());
        line("streams:");
        for (const auto& s : a.streams) {
            std::string name = s.name;
            name.resize(width, ' ');
            line("  " + name + "  device " + std::to_string(s.device) + "  busy " + formatDuration(s.busyNs) + " ("
                 + pct(s.utilization) + ")  idle " + formatDuration(s.idleNs) + " in " + std::to_string(s.gaps.size())
                 + " gaps  " + std::to_string(s.spanCount) + (s.spanCount == 1 ? " span" : " spans"));
        }
    }
    if (!a.overlapFraction.empty() && a.streams.size() > 1 && a.streams.size() <= 16) {
        bool header = false;
        for (size_t i = 0; i < a.streams.size(); ++i)
            for (size_t j = i + 1; j < a.streams.size(); ++j) {
                if (a.overlapNs[i][j] <= 0)
                    continue;
                if (!header)
                    line("overlap between streams (fraction of the less busy one):");
                header = true;
                line("  " + a.streams[i].name + " / " + a.streams[j].name + ": " + pct(a.overlapFraction[i][j]) + " ("
                     + formatDuration(a.overlapNs[i][j]) + ")");
            }
    }
    for (const auto& h : a.hostThreads)
        line("host thread " + h.name + ": " + std::to_string(h.launchCalls) + " launches in "
             + formatDuration(h.activeNs) + " (" + num(h.launchesPerSecond, "%.0f") + "/s, mean call "
             + formatDuration(int64_t(h.meanLaunchNs)) + "), blocked in syncs " + formatDuration(h.syncNs));

    line("critical path: " + formatDuration(path.lengthNs) + " (" + formatDuration(path.gpuNs) + " GPU, "
         + formatDuration(path.hostNs) + " host, " + formatDuration(path.idleNs) + " idle), "
         + std::to_string(path.segments.size()) + " segments"
         + (path.resourceWaitNs > 0 ? "; its ops waited " + formatDuration(path.resourceWaitNs) + " for resources"
                                    : std::string()));
    if (path.idleNs > 0) {
        // The idle time by what released the segment after it, largest first.
        std::string l = "  idle:";
        for (const auto& [cause, ns] : idleLargestFirst(path))
            l += (l.back() == ':' ? " " : "; ") + formatDuration(ns) + " " + std::string(toString(cause));
        line(l);
    }
    const size_t count = path.segments.size();
    const size_t limit = o.maxCriticalPathSegments ? std::min<size_t>(o.maxCriticalPathSegments, 40) : 40;
    const size_t shown = std::min(count, limit);
    if (shown < count)
        line("  ... " + std::to_string(count - shown) + " earlier segments");
    for (size_t k = count - shown; k < count; ++k) {
        const auto& seg = path.segments[k];
        std::string l = "  " + formatDuration(seg.contributionNs) + "  " + shortSpanName(seg.name) + " ("
            + streamLabel(trace, seg.track) + ", " + std::string(toString(seg.kind)) + ")";
        if (k > 0)
            l += " " + describeRelease(trace, path, k);
        if (seg.idleBeforeNs > 0) {
            l += ", " + formatDuration(seg.idleBeforeNs) + " idle before";
            if (const std::string where = describeIdle(trace, path, k); !where.empty())
                l += " (host time " + where + ")";
        }
        line(l);
    }
    if (diagnostics.empty()) {
        line("diagnostics: none");
    } else {
        line("diagnostics:");
        for (const auto& d : diagnostics)
            line("  [" + d.severity + "] " + d.rule + ": " + d.message);
    }
    return r;
}

std::string analysisReport(const Trace& input, const ReportOptions& o)
{
    Trace storage;
    const Trace& trace = finalizedView(input, storage);
    AnalysisOptions ao;
    ao.concurrencySteps = false;
    return analysisReport(trace, analyzeTrace(trace, ao), criticalPath(trace), diagnose(trace), o);
}

// ---- comparison -------------------------------------------------------------------------------------------------

TraceComparison compareTraces(const Trace& a, const Trace& b, const AnalysisOptions& options)
{
    TraceComparison c;
    c.a = analyzeTrace(a, options);
    c.b = analyzeTrace(b, options);
    c.makespanDeltaNs = c.b.makespanNs - c.a.makespanNs;
    c.makespanRatio = ratio(double(c.b.makespanNs), double(c.a.makespanNs));
    c.speedupOfB = ratio(double(c.a.makespanNs), double(c.b.makespanNs));
    c.speedupDelta = c.b.speedup - c.a.speedup;
    c.maxConcurrencyDelta = c.b.concurrency.maxConcurrency - c.a.concurrency.maxConcurrency;
    c.averageConcurrencyDelta = c.b.concurrency.averageConcurrency - c.a.concurrency.averageConcurrency;
    c.copyComputeOverlapDeltaNs = c.b.copyComputeOverlapNs - c.a.copyComputeOverlapNs;
    c.copyComputeOverlapDelta = c.b.copyComputeOverlap - c.a.copyComputeOverlap;
    c.idleDeltaNs = c.b.idleNs - c.a.idleNs;

    // Streams matched by (device, name), in A's order then B's new ones.
    std::map<std::pair<int, std::string>, size_t> index;
    for (const auto& s : c.a.streams) {
        const auto key = std::make_pair(s.device, s.name);
        if (index.count(key))
            continue;
        index[key] = c.streams.size();
        StreamComparison sc;
        sc.name = s.name;
        sc.device = s.device;
        sc.inA = true;
        sc.busyA = s.busyNs;
        c.streams.push_back(std::move(sc));
    }
    for (const auto& s : c.b.streams) {
        const auto key = std::make_pair(s.device, s.name);
        auto it = index.find(key);
        if (it == index.end()) {
            index[key] = c.streams.size();
            StreamComparison sc;
            sc.name = s.name;
            sc.device = s.device;
            c.streams.push_back(std::move(sc));
            it = index.find(key);
        }
        auto& sc = c.streams[it->second];
        if (sc.inB)
            continue;
        sc.inB = true;
        sc.busyB = s.busyNs;
    }
    for (auto& sc : c.streams)
        sc.busyDeltaNs = sc.busyB - sc.busyA;

    // Overlap of stream pairs present in both.
    std::set<std::string> names;
    std::set<std::string> repeated;
    for (const auto& sc : c.streams)
        if (!names.insert(sc.name).second)
            repeated.insert(sc.name);
    auto label = [&repeated](const StreamAnalysis& s) {
        return repeated.count(s.name) ? s.name + "@" + std::to_string(s.device) : s.name;
    };
    auto find = [](const TraceAnalysis& t, int device, const std::string& name) -> int {
        for (size_t i = 0; i < t.streams.size(); ++i)
            if (t.streams[i].device == device && t.streams[i].name == name)
                return int(i);
        return -1;
    };
    if (!c.a.overlapNs.empty() && !c.b.overlapNs.empty())
        for (size_t i = 0; i < c.a.streams.size(); ++i)
            for (size_t j = i + 1; j < c.a.streams.size(); ++j) {
                const int bi = find(c.b, c.a.streams[i].device, c.a.streams[i].name);
                const int bj = find(c.b, c.a.streams[j].device, c.a.streams[j].name);
                if (bi < 0 || bj < 0 || bi == bj)
                    continue;
                if (c.a.streams[i].spanCount == 0 && c.b.streams[size_t(bi)].spanCount == 0)
                    continue;
                if (c.a.streams[j].spanCount == 0 && c.b.streams[size_t(bj)].spanCount == 0)
                    continue;
                OverlapComparison oc;
                oc.streamA = label(c.a.streams[i]);
                oc.streamB = label(c.a.streams[j]);
                oc.fractionA = c.a.overlapFraction[i][j];
                oc.nsA = c.a.overlapNs[i][j];
                oc.fractionB = c.b.overlapFraction[size_t(bi)][size_t(bj)];
                oc.nsB = c.b.overlapNs[size_t(bi)][size_t(bj)];
                c.overlaps.push_back(std::move(oc));
            }
    return c;
}

std::string comparisonToJson(const TraceComparison& c, const ReportOptions& o)
{
    auto side = [&o](const TraceAnalysis& t) {
        OrderedJson j;
        j["makespan_ns"] = t.makespanNs;
        j["gpu_work_ns"] = t.gpuWorkNs;
        j["speedup"] = finite(t.speedup);
        j["busy_ns"] = t.busyNs;
        j["idle_ns"] = t.idleNs;
        j["max_concurrency"] = t.concurrency.maxConcurrency;
        j["average_concurrency"] = finite(t.concurrency.averageConcurrency);
        j["concurrency_time_at_ns"] = t.concurrency.timeAtNs;
        j["copy_compute_overlap_ns"] = t.copyComputeOverlapNs;
        j["copy_compute_overlap"] = finite(t.copyComputeOverlap);
        j["launches_per_second"] = finite(t.launchesPerSecond);
        (void)o;
        return j;
    };
    OrderedJson j;
    j["a"] = side(c.a);
    j["b"] = side(c.b);
    OrderedJson d;
    d["makespan_ns"] = c.makespanDeltaNs;
    d["makespan_ratio"] = finite(c.makespanRatio);
    d["speedup_of_b"] = finite(c.speedupOfB);
    d["speedup"] = finite(c.speedupDelta);
    d["max_concurrency"] = c.maxConcurrencyDelta;
    d["average_concurrency"] = finite(c.averageConcurrencyDelta);
    d["copy_compute_overlap_ns"] = c.copyComputeOverlapDeltaNs;
    d["copy_compute_overlap"] = finite(c.copyComputeOverlapDelta);
    d["idle_ns"] = c.idleDeltaNs;
    j["difference"] = std::move(d);
    auto streams = OrderedJson::array();
    for (const auto& s : c.streams) {
        OrderedJson js;
        js["name"] = s.name;
        js["device"] = s.device;
        js["in_a"] = s.inA;
        js["in_b"] = s.inB;
        js["busy_a_ns"] = s.busyA;
        js["busy_b_ns"] = s.busyB;
        js["busy_difference_ns"] = s.busyDeltaNs;
        streams.push_back(std::move(js));
    }
    j["streams"] = std::move(streams);
    auto overlaps = OrderedJson::array();
    for (const auto& ov : c.overlaps) {
        OrderedJson jo;
        jo["streams"] = {ov.streamA, ov.streamB};
        jo["fraction_a"] = finite(ov.fractionA);
        jo["fraction_b"] = finite(ov.fractionB);
        jo["ns_a"] = ov.nsA;
        jo["ns_b"] = ov.nsB;
        overlaps.push_back(std::move(jo));
    }
    j["overlap"] = std::move(overlaps);
    return dumpJson(j, o.indent);
}

std::string comparisonReport(const TraceComparison& c, const std::string& nameA, const std::string& nameB)
{
    std::string r;
    auto line = [&r](const std::string& s) { r += s + '\n'; };
    auto signedDuration = [](int64_t ns) { return (ns > 0 ? "+" : "") + formatDuration(ns); };
    auto signedNum = [](double v, const char* fmt) { return (v > 0 ? "+" : "") + num(v, fmt); };
    line("                      " + nameA + " -> " + nameB);
    line("makespan:             " + formatDuration(c.a.makespanNs) + " -> " + formatDuration(c.b.makespanNs) + " ("
         + signedDuration(c.makespanDeltaNs) + ", " + nameB + " " + num(c.speedupOfB, "%.2fx")
         + (c.speedupOfB >= 1 ? " faster)" : " as fast)"));
    line("speedup over serial:  " + num(c.a.speedup, "%.2fx") + " -> " + num(c.b.speedup, "%.2fx") + " ("
         + signedNum(c.speedupDelta, "%.2f") + ")");
    line("max concurrency:      " + std::to_string(c.a.concurrency.maxConcurrency) + " -> "
         + std::to_string(c.b.concurrency.maxConcurrency));
    line("average concurrency:  " + num(c.a.concurrency.averageConcurrency) + " -> "
         + num(c.b.concurrency.averageConcurrency));
    line("GPU idle:             " + formatDuration(c.a.idleNs) + " -> " + formatDuration(c.b.idleNs) + " ("
         + signedDuration(c.idleDeltaNs) + ")");
    line("copy/compute overlap: " + pct(c.a.copyComputeOverlap) + " -> " + pct(c.b.copyComputeOverlap));
    if (!c.streams.empty()) {
        line("busy per stream:");
        for (const auto& s : c.streams)
            line("  " + s.name + " (device " + std::to_string(s.device)
                 + "): " + (s.inA ? formatDuration(s.busyA) : std::string("-")) + " -> "
                 + (s.inB ? formatDuration(s.busyB) : std::string("-")) + " (" + signedDuration(s.busyDeltaNs) + ")");
    }
    size_t listed = 0;
    for (const auto& ov : c.overlaps) {
        if (ov.nsA == 0 && ov.nsB == 0)
            continue;
        if (listed++ == 0)
            line("overlap between streams:");
        if (listed > 24) {
            line("  ...");
            break;
        }
        line("  " + ov.streamA + " / " + ov.streamB + ": " + pct(ov.fractionA) + " -> " + pct(ov.fractionB));
    }
    return r;
}

} // namespace streamscope
