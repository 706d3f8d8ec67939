#include "metrics.h"

#include "analysis.h" // maxGpuConcurrency

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
    if (a.empty() || b.empty())
        return 0;
    const int64_t lo = std::max(a.front().start, b.front().start);
    const int64_t hi = std::min(a.back().end, b.back().end);
    if (hi <= lo)
        return 0;
    auto firstEndingAfter = [lo](const std::vector<Interval>& v) {
        return std::partition_point(v.begin(), v.end(), [lo](const Interval& x) { return x.end <= lo; });
    };
    // Only the intervals that begin before hi can meet the other list's; past them the walk stops.
    auto startingBefore = [hi](const std::vector<Interval>& v) {
        return std::partition_point(v.begin(), v.end(), [hi](const Interval& x) { return x.start < hi; });
    };
    const Interval* ia = a.data() + (firstEndingAfter(a) - a.begin());
    const Interval* ib = b.data() + (firstEndingAfter(b) - b.begin());
    const Interval* const aEnd = a.data() + (startingBefore(a) - a.begin());
    const Interval* const bEnd = b.data() + (startingBefore(b) - b.begin());
    // Without branches on the data: which list moves on is as good as random where many streams are busy at once,
    // and a mispredicted branch per step cost most of this walk (every pair of 56 busy streams: 10 M spans).
    int64_t sum = 0;
    while (ia < aEnd && ib < bEnd) {
        const int64_t s = std::max(ia->start, ib->start);
        const int64_t e = std::min(ia->end, ib->end);
        sum += std::max<int64_t>(e - s, 0);
        const bool aFirst = ia->end < ib->end;
        ia += aFirst;
        ib += !aFirst;
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
    if (kinds.empty())
        return maxGpuConcurrency(trace, device); // each track's spans merged as they are swept, none sorted
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

TraceMetrics computeMetrics(const Trace& input)
{
    Trace storage;
    const Trace& trace = finalizedView(input, storage);
    TraceMetrics m;
    const auto& s = trace.spans;
    int64_t gpuFirst = std::numeric_limits<int64_t>::max();
    int64_t gpuLast = std::numeric_limits<int64_t>::min();
    // Track by track, each one's spans in start order (a finalized trace's): its busy time, and its copies and kernels
    // merged before all tracks' are (at 10 M spans the copies of every span, sorted, and a list per track were
    // most of the time and memory here).
    std::vector<Interval> copies, kernels, trackCopies, trackKernels, trackBusy;
    std::vector<size_t> copyRuns{0}, kernelRuns{0}; // where each track's merged list begins in copies, kernels
    auto appendMerged = [](std::vector<Interval>& scratch, std::vector<Interval>& all, std::vector<size_t>& runs) {
        std::vector<Interval> merged = mergeIntervals(std::move(scratch));
        all.insert(all.end(), merged.begin(), merged.end());
        runs.push_back(all.size());
        scratch = std::move(merged); // its room, for the next track
        scratch.clear();
    };
    // The tracks' sorted lists merged pairwise, a pass per level (log2 of the tracks, not of the spans), into one
    // list sorted by start, for mergeIntervals.
    auto mergeRuns = [](std::vector<Interval>& v, std::vector<size_t> runs) {
        while (runs.size() > 2) {
            std::vector<size_t> next{0};
            for (size_t r = 0; r + 1 < runs.size(); r += 2) {
                const size_t mid = runs[r + 1], hi = r + 2 < runs.size() ? runs[r + 2] : runs[r + 1];
                std::inplace_merge(v.begin() + std::ptrdiff_t(runs[r]), v.begin() + std::ptrdiff_t(mid),
                                   v.begin() + std::ptrdiff_t(hi), byStart);
                next.push_back(hi);
            }
            runs = std::move(next);
        }
    };
    constexpr uint32_t kChunk = 4096;
    std::vector<int64_t> start(kChunk), end(kChunk);
    for (uint32_t t = 0; t < trace.tracks.size(); ++t) {
        trackCopies.clear();
        trackKernels.clear();
        trackBusy.clear();
        for (uint32_t c = trace.trackBegin(t), last = trace.trackEnd(t); c < last; c += kChunk) {
            const uint32_t n = std::min(kChunk, last - c);
            s.start.copyTo(c, c + n, start.data());
            s.end.copyTo(c, c + n, end.data());
            for (uint32_t j = 0; j < n; ++j) {
                const SpanKind k = s.kind[c + j];
                if (k == SpanKind::ApiCall)
                    ++m.apiCallCount;
                if (!isGpuSpan(k))
                    continue;
                ++m.gpuSpanCount;
                gpuFirst = std::min(gpuFirst, start[j]);
                gpuLast = std::max(gpuLast, end[j]);
                m.gpuWorkNs += end[j] - start[j];
                if (isCopySpan(k))
                    trackCopies.push_back({start[j], end[j]});
                else if (k == SpanKind::Kernel)
                    trackKernels.push_back({start[j], end[j]});
                trackBusy.push_back({start[j], end[j]});
            }
        }
        appendMerged(trackCopies, copies, copyRuns);
        appendMerged(trackKernels, kernels, kernelRuns);
        const Track& track = trace.tracks[t];
        if (track.kind != TrackKind::Stream)
            continue;
        StreamMetrics sm;
        sm.track = t;
        sm.name = track.name;
        sm.device = track.device;
        sm.spanCount = int64_t(trackBusy.size());
        sm.busyNs = totalLength(mergeIntervals(std::move(trackBusy)));
        trackBusy = {};
        m.streams.push_back(std::move(sm));
    }
    if (m.gpuSpanCount > 0)
        m.makespanNs = gpuLast - gpuFirst;
    m.speedup = m.makespanNs > 0 ? double(m.gpuWorkNs) / double(m.makespanNs) : 0.0;
    m.maxConcurrency = maxGpuConcurrency(trace);
    mergeRuns(copies, std::move(copyRuns));
    mergeRuns(kernels, std::move(kernelRuns));
    m.copyComputeOverlapNs = intersectionLength(mergeIntervals(std::move(copies)), mergeIntervals(std::move(kernels)));
    const auto [first, last] = workTimeRange(trace);
    m.hostMakespanNs = last - first;
    return m;
}

} // namespace streamscope
