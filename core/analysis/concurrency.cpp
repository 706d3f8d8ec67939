// SPDX-FileCopyrightText: StreamScope contributors
// The step function of the number of GPU operations running at once (concurrencySeries), built without sorting
// every span: a finalized trace holds each track's spans sorted by start, so the starts come as one sorted run per
// track (and the ends too, unless a track's spans overlap), and the runs are merged as they are swept.
#include "analysis.h"
#include "analysis_text.h"

#include <algorithm>
#include <limits>
#include <utility>
#include <vector>

namespace streamscope {

namespace {

// One sorted run of times: the starts (or the ends) of one track's GPU spans of positive length, unpacked a chunk at
// a time from the trace's columns; or, for the ends of a track whose spans overlap (they need not end in the order
// they start), all of them, sorted.
class Run {
public:
    Run(const SpanColumns& s, uint32_t first, uint32_t last, bool ends)
        : m_s(&s), m_next(first), m_last(last), m_ends(ends)
    {}
    // Takes the whole run now, sorted (the ends of an overlapping track).
    void takeAllSorted()
    {
        std::vector<int64_t> all;
        while (refill())
            all.insert(all.end(), m_buf.begin() + std::ptrdiff_t(m_pos), m_buf.end()), m_pos = m_buf.size();
        std::sort(all.begin(), all.end());
        m_buf = std::move(all);
        m_pos = 0;
    }
    // False once the run is exhausted; else head() is its next time.
    bool refill()
    {
        while (m_pos == m_buf.size() && m_next < m_last) {
            const uint32_t n = std::min<uint32_t>(kChunk, m_last - m_next);
            m_start.resize(n);
            m_end.resize(n);
            m_s->start.copyTo(m_next, m_next + n, m_start.data());
            m_s->end.copyTo(m_next, m_next + n, m_end.data());
            m_buf.clear();
            m_pos = 0;
            const SpanKind* kind = m_s->kind.data() + m_next;
            for (uint32_t i = 0; i < n; ++i)
                if (isGpuSpan(kind[i]) && m_end[i] > m_start[i])
                    m_buf.push_back(m_ends ? m_end[i] : m_start[i]);
            m_next += n;
        }
        return m_pos < m_buf.size();
    }
    int64_t head() const { return m_buf[m_pos]; }
    // Moves past the head; false once the run is exhausted.
    bool pop()
    {
        ++m_pos;
        return m_pos < m_buf.size() || refill();
    }

private:
    static constexpr uint32_t kChunk = 4096;
    const SpanColumns* m_s;
    uint32_t m_next, m_last;
    bool m_ends;
    std::vector<int64_t> m_buf, m_start, m_end;
    size_t m_pos = 0;
};

// The runs merged into one ascending sequence by a tournament of their heads (a loser tree: one match per level
// for each time taken): one pass over the spans, nothing the size of the trace held (the runs were merged pairwise
// before, in four arrays of 8 bytes a GPU span: 13.4 s against 12.4 s at 100 M spans, docs/PERFORMANCE.md).
class Merged {
public:
    explicit Merged(std::vector<Run> runs) : m_runs(std::move(runs))
    {
        while (m_size < m_runs.size())
            m_size *= 2;
        m_key.assign(m_size, 0);
        m_done.assign(m_size, 1); // the leaves past the runs are exhausted runs
        for (uint32_t r = 0; r < m_runs.size(); ++r)
            if (m_runs[r].refill())
                m_key[r] = m_runs[r].head(), m_done[r] = 0, ++m_active;
        // Matches bottom-up: each node keeps the loser, the winner goes up.
        m_loser.assign(m_size, 0);
        std::vector<uint32_t> winner(2 * m_size);
        for (uint32_t i = 0; i < m_size; ++i)
            winner[m_size + i] = i;
        for (uint32_t n = m_size - 1; n >= 1; --n) {
            const uint32_t a = winner[2 * n], b = winner[2 * n + 1];
            winner[n] = less(a, b) ? a : b;
            m_loser[n] = less(a, b) ? b : a;
        }
        m_winner = winner[1];
    }
    bool empty() const { return m_active == 0; }
    int64_t top() const { return m_key[m_winner]; }
    void pop()
    {
        uint32_t w = m_winner;
        if (m_runs[w].pop()) {
            m_key[w] = m_runs[w].head();
        } else {
            m_done[w] = 1;
            --m_active;
        }
        for (uint32_t n = (w + m_size) / 2; n >= 1; n /= 2)
            if (less(m_loser[n], w))
                std::swap(m_loser[n], w);
        m_winner = w;
    }

private:
    // An exhausted run loses to every other; ties between live runs go either way (equal times).
    bool less(uint32_t a, uint32_t b) const
    {
        if (m_done[a] != m_done[b])
            return m_done[b];
        return m_key[a] < m_key[b];
    }

    std::vector<Run> m_runs;
    uint32_t m_size = 1; // leaves: the runs, padded to a power of two
    std::vector<int64_t> m_key;
    std::vector<uint8_t> m_done;
    std::vector<uint32_t> m_loser; // per inner node 1 .. m_size - 1
    uint32_t m_winner = 0;
    size_t m_active = 0;
};

} // namespace

size_t ConcurrencySeries::memoryBytes() const
{
    return times.memoryBytes() + counts.capacity() * sizeof(uint16_t);
}

namespace {

// The starts and the ends of the GPU spans of `device`'s tracks (-1: all), a sorted run per track; false when
// `cancel` (where given) was set first.
bool gpuRuns(const Trace& trace, int device, const std::atomic<bool>* cancel, std::vector<Run>& startRuns,
             std::vector<Run>& endRuns)
{
    const SpanColumns& s = trace.spans;
    for (uint32_t t = 0; t < trace.tracks.size(); ++t) {
        if (cancel && cancel->load(std::memory_order_relaxed))
            return false;
        if (device >= 0 && trace.tracks[t].device != device)
            continue;
        const uint32_t first = trace.trackBegin(t), last = trace.trackEnd(t);
        if (first == last || std::none_of(s.kind.begin() + first, s.kind.begin() + last, isGpuSpan))
            continue;
        startRuns.emplace_back(s, first, last, false);
        // Spans of one stream end in the order they start unless they overlap (an imported trace's may).
        Run ends(s, first, last, true), check = ends;
        int64_t previous = std::numeric_limits<int64_t>::min();
        bool sorted = true;
        for (bool more = check.refill(); more && sorted; more = check.pop()) {
            sorted = check.head() >= previous;
            previous = check.head();
        }
        if (!sorted)
            ends.takeAllSorted();
        endRuns.push_back(std::move(ends));
    }
    return true;
}

} // namespace

int maxGpuConcurrency(const Trace& input, int device)
{
    Trace storage;
    const Trace& trace = finalizedView(input, storage);
    std::vector<Run> startRuns, endRuns;
    gpuRuns(trace, device, nullptr, startRuns, endRuns);
    Merged starts(std::move(startRuns)), ends(std::move(endRuns));
    int most = 0;
    analysis_detail::sweepSortedConcurrency(starts, ends,
                                            [&most](int64_t, int, int running) { most = std::max(most, running); });
    return most;
}

ConcurrencySeries concurrencySeries(const Trace& input, int device, const std::atomic<bool>* cancel)
{
    auto cancelled = [cancel] { return cancel && cancel->load(std::memory_order_relaxed); };
    Trace storage;
    const Trace& trace = finalizedView(input, storage);
    std::vector<Run> startRuns, endRuns;
    if (!gpuRuns(trace, device, cancel, startRuns, endRuns))
        return {};
    ConcurrencySeries series;
    Merged starts(std::move(startRuns)), ends(std::move(endRuns));
    // A step only where the count changes. The flag is read every 65,536 instants: the sweep takes tens of seconds
    // at 100 M spans, a check costs nothing beside it.
    struct Cancelled {};
    uint32_t sinceCheck = 0;
    try {
        analysis_detail::sweepSortedConcurrency(starts, ends, [&](int64_t next, int, int running) {
            if (++sinceCheck == 65536) {
                sinceCheck = 0;
                if (cancelled())
                    throw Cancelled{};
            }
            series.maxCount = std::max(series.maxCount, running);
            const auto count = uint16_t(std::min(running, int(std::numeric_limits<uint16_t>::max())));
            if (series.counts.empty() || series.counts.back() != count) {
                series.times.push_back(next);
                series.counts.push_back(count);
            }
        });
    } catch (const Cancelled&) {
        return {};
    }
    series.times.shrink_to_fit();
    series.counts.shrink_to_fit();
    return series;
}

} // namespace streamscope
