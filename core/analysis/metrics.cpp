#include "metrics.h"

#include <algorithm>
#include <limits>

namespace streamscope {

namespace {

bool byStart(const Interval& a, const Interval& b)
{
    return a.start < b.start || (a.start == b.start && a.end < b.end);
}

// Device of a span's track; -1 for a span whose track is out of range.
int spanDevice(const Trace& trace, uint32_t i)
{
    const uint32_t t = trace.spans.track[i];
    return t < trace.tracks.size() ? trace.tracks[t].device : -1;
}

} // namespace

std::vector<Interval> mergeIntervals(std::vector<Interval> v)
{
    // Empty intervals cover no time; dropping them keeps the merged list a list of real busy periods.
    std::erase_if(v, [](const Interval& i) { return i.end <= i.start; });
    // The sweep below needs the starts in order only (intervals of equal start merge whatever their order), so a
    // list already sorted by start is not sorted again.
    if (!std::is_sorted(v.begin(), v.end(), [](const Interval& a, const Interval& b) { return a.start < b.start; }))
        std::sort(v.begin(), v.end(), byStart);
    size_t w = 0;
    for (size_t i = 0; i < v.size(); ++i) {
        if (w > 0 && v[i].start <= v[w - 1].end)
            v[w - 1].end = std::max(v[w - 1].end, v[i].end);
        else
            v[w++] = v[i];
    }
    v.resize(w);
    return v;
}

int64_t totalLength(const std::vector<Interval>& merged)
{
    int64_t sum = 0;
    for (const auto& i : merged)
        sum += i.end - i.start;
    return sum;
}

int64_t intersectionLength(const std::vector<Interval>& a, const std::vector<Interval>& b)
{
    int64_t sum = 0;
    size_t i = 0, j = 0;
    while (i < a.size() && j < b.size()) {
        const int64_t lo = std::max(a[i].start, b[j].start);
        const int64_t hi = std::min(a[i].end, b[j].end);
        if (hi > lo)
            sum += hi - lo;
        if (a[i].end < b[j].end)
            ++i;
        else
            ++j;
    }
    return sum;
}

std::vector<Interval> busyIntervals(const Trace& trace, uint32_t track)
{
    std::vector<Interval> v;
    const auto& s = trace.spans;
    if (trace.finalized() && track < trace.tracks.size()) {
        for (uint32_t i = trace.trackBegin(track); i < trace.trackEnd(track); ++i)
            if (isGpuSpan(s.kind[i]))
                v.push_back({s.start[i], s.end[i]});
    } else {
        for (uint32_t i = 0; i < s.size(); ++i)
            if (s.track[i] == track && isGpuSpan(s.kind[i]))
                v.push_back({s.start[i], s.end[i]});
    }
    return mergeIntervals(std::move(v));
}

int maxConcurrency(const Trace& trace, int device, const std::vector<SpanKind>& kinds)
{
    bool wanted[kSpanKindCount] = {};
    for (int k = 0; k < kSpanKindCount; ++k)
        wanted[k] =
            kinds.empty() ? isGpuSpan(SpanKind(k)) : std::find(kinds.begin(), kinds.end(), SpanKind(k)) != kinds.end();
    const auto& s = trace.spans;
    std::vector<int64_t> starts, ends;
    for (uint32_t i = 0; i < s.size(); ++i) {
        // Half-open [start, end): a zero-length span is running at no instant.
        if (!wanted[size_t(s.kind[i])] || s.end[i] <= s.start[i])
            continue;
        if (device >= 0 && spanDevice(trace, i) != device)
            continue;
        starts.push_back(s.start[i]);
        ends.push_back(s.end[i]);
    }
    std::sort(starts.begin(), starts.end());
    std::sort(ends.begin(), ends.end());
    // Sweep: at equal times ends come first, so back-to-back spans do not count as concurrent.
    int running = 0, most = 0;
    size_t j = 0;
    for (int64_t t : starts) {
        while (j < ends.size() && ends[j] <= t) {
            --running;
            ++j;
        }
        most = std::max(most, ++running);
    }
    return most;
}

std::pair<int64_t, int64_t> workTimeRange(const Trace& trace)
{
    const auto& s = trace.spans;
    int64_t first = std::numeric_limits<int64_t>::max(), last = std::numeric_limits<int64_t>::min();
    for (size_t i = 0; i < s.size(); ++i)
        if (s.kind[i] != SpanKind::Range) {
            first = std::min(first, s.start[i]);
            last = std::max(last, s.end[i]);
        }
    return first > last ? std::pair<int64_t, int64_t>{0, 0} : std::pair{first, last};
}

TraceMetrics computeMetrics(const Trace& trace)
{
    TraceMetrics m;
    const auto& s = trace.spans;
    const size_t n = s.size();
    int64_t gpuFirst = std::numeric_limits<int64_t>::max();
    int64_t gpuLast = std::numeric_limits<int64_t>::min();
    std::vector<Interval> copies, kernels;
    std::vector<std::vector<Interval>> perTrack(trace.tracks.size());
    for (uint32_t i = 0; i < n; ++i) {
        const SpanKind k = s.kind[i];
        if (k == SpanKind::ApiCall)
            ++m.apiCallCount;
        if (!isGpuSpan(k))
            continue;
        ++m.gpuSpanCount;
        gpuFirst = std::min(gpuFirst, s.start[i]);
        gpuLast = std::max(gpuLast, s.end[i]);
        m.gpuWorkNs += s.end[i] - s.start[i];
        if (isCopySpan(k))
            copies.push_back({s.start[i], s.end[i]});
        else if (k == SpanKind::Kernel)
            kernels.push_back({s.start[i], s.end[i]});
        if (s.track[i] < perTrack.size())
            perTrack[s.track[i]].push_back({s.start[i], s.end[i]});
    }
    if (m.gpuSpanCount > 0)
        m.makespanNs = gpuLast - gpuFirst;
    m.speedup = m.makespanNs > 0 ? double(m.gpuWorkNs) / double(m.makespanNs) : 0.0;
    m.maxConcurrency = maxConcurrency(trace);
    m.copyComputeOverlapNs = intersectionLength(mergeIntervals(std::move(copies)), mergeIntervals(std::move(kernels)));
    const auto [first, last] = workTimeRange(trace);
    m.hostMakespanNs = last - first;

    for (uint32_t t = 0; t < trace.tracks.size(); ++t) {
        const Track& track = trace.tracks[t];
        if (track.kind != TrackKind::Stream)
            continue;
        StreamMetrics sm;
        sm.track = t;
        sm.name = track.name;
        sm.device = track.device;
        sm.spanCount = int64_t(perTrack[t].size());
        sm.busyNs = totalLength(mergeIntervals(std::move(perTrack[t])));
        m.streams.push_back(std::move(sm));
    }
    return m;
}

} // namespace streamscope
