// SPDX-FileCopyrightText: StreamScope contributors
// The step function of the number of GPU operations running at once (concurrencySeries), built without sorting
// every span: a finalized trace holds each track's spans sorted by start, so the starts come as one sorted run per
// track (and the ends too, unless a track's spans overlap), and the runs are merged pairwise.
#include "analysis.h"
#include "analysis_text.h"

#include <algorithm>
#include <limits>

namespace streamscope {

namespace {

// Sorts `v`, made of sorted runs that start at runs[0] < runs[1] < ... (runs.back() == v.size()), by merging
// neighbouring runs until one is left: n log(runs) instead of n log(n).
void mergeRuns(std::vector<int64_t>& v, std::vector<size_t> runs)
{
    if (runs.size() <= 2)
        return; // one run: sorted already
    std::vector<int64_t> other(v.size());
    while (runs.size() > 2) {
        std::vector<size_t> merged{0};
        for (size_t r = 0; r + 1 < runs.size(); r += 2) {
            const size_t a = runs[r], mid = runs[r + 1], b = r + 2 < runs.size() ? runs[r + 2] : mid;
            // (An odd run out is merged with nothing: copied.)
            std::merge(v.begin() + std::ptrdiff_t(a), v.begin() + std::ptrdiff_t(mid), v.begin() + std::ptrdiff_t(mid),
                       v.begin() + std::ptrdiff_t(b), other.begin() + std::ptrdiff_t(a));
            merged.push_back(b);
        }
        v.swap(other);
        runs = std::move(merged);
    }
}

} // namespace

size_t ConcurrencySeries::memoryBytes() const
{
    return times.memoryBytes() + counts.capacity() * sizeof(uint16_t);
}

ConcurrencySeries concurrencySeries(const Trace& input, int device)
{
    Trace storage;
    const Trace& trace = finalizedView(input, storage);
    const SpanColumns& s = trace.spans;
    std::vector<int64_t> starts, ends, trackStarts, trackEnds;
    std::vector<size_t> runs{0};
    for (uint32_t t = 0; t < trace.tracks.size(); ++t) {
        if (device >= 0 && trace.tracks[t].device != device)
            continue;
        const uint32_t first = trace.trackBegin(t), last = trace.trackEnd(t);
        if (first == last)
            continue;
        trackStarts.resize(last - first);
        trackEnds.resize(last - first);
        s.start.view().copyTo(first, last, trackStarts.data());
        s.end.view().copyTo(first, last, trackEnds.data());
        const size_t runStart = starts.size();
        for (uint32_t i = first; i < last; ++i) {
            const int64_t b = trackStarts[i - first], e = trackEnds[i - first];
            if (!isGpuSpan(s.kind[i]) || e <= b)
                continue;
            starts.push_back(b);
            ends.push_back(e);
        }
        if (starts.size() == runStart)
            continue;
        // Spans of one stream end in the order they start unless they overlap (an imported trace's may).
        if (!std::is_sorted(ends.begin() + std::ptrdiff_t(runStart), ends.end()))
            std::sort(ends.begin() + std::ptrdiff_t(runStart), ends.end());
        runs.push_back(starts.size());
    }
    ConcurrencySeries series;
    if (starts.empty())
        return series;
    mergeRuns(starts, runs);
    mergeRuns(ends, std::move(runs));
    // A step only where the count changes.
    analysis_detail::sweepConcurrency(starts, ends, [&series](int64_t next, int, int running) {
        series.maxCount = std::max(series.maxCount, running);
        const auto count = uint16_t(std::min(running, int(std::numeric_limits<uint16_t>::max())));
        if (series.counts.empty() || series.counts.back() != count) {
            series.times.push_back(next);
            series.counts.push_back(count);
        }
    });
    series.times.shrink_to_fit();
    series.counts.shrink_to_fit();
    return series;
}

} // namespace streamscope
