#include "lane_summary.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <deque>

namespace streamscope {

namespace {

// b - a for a <= b, saturating: a trace's times may lie anywhere in int64 (an imported file), and no difference of
// two of them may overflow.
int64_t distance(int64_t a, int64_t b)
{
    const uint64_t d = uint64_t(b) - uint64_t(a);
    return d > uint64_t(INT64_MAX) ? INT64_MAX : int64_t(d);
}

// Builds one level: the items of the level below (or the spans themselves) folded into buckets of 2^shift ns, each
// item handed on to the level above as it is closed, so that all levels are built in one pass over the spans. Time
// per kind is summed exactly (in a column per kind present in the lane) so that each block's dominant kind is that
// of its spans, not a vote of the blocks below. A level keeps its items only while it can still be kept (at most
// `keepLimit` of them): the finer levels, which are not, were a third of the layout's time as growing arrays.
class LevelBuilder {
public:
    LevelBuilder(int shift, int64_t origin, int kinds, const std::array<SpanKind, kSpanKindCount>& kindOfSlot,
                 size_t keepLimit, LevelBuilder* above)
        : m_shift(shift), m_origin(origin), m_kinds(kinds), m_kindOfSlot(kindOfSlot), m_keepLimit(keepLimit),
          m_above(above)
    {
        m_level.shift = shift;
    }

    // An item of the level below (or a span: count 1) with its time per kind.
    void add(int64_t start, int64_t end, uint32_t first, uint32_t count, const int64_t* kindNs)
    {
        if (count == 1 && distance(start, end) >= (int64_t(1) << m_shift)) { // a span of its own at this level too
            flush();
            begin(start, end, first, count, kindNs);
            flush();
            return;
        }
        const int64_t key = int64_t((uint64_t(start) - uint64_t(m_origin)) >> m_shift);
        if (m_open && key == m_key) {
            m_pending.end = end;
            m_pending.count += count;
            for (int k = 0; k < m_kinds; ++k)
                m_pendingNs[size_t(k)] =
                    kindNs[k] > INT64_MAX - m_pendingNs[size_t(k)] ? INT64_MAX : m_pendingNs[size_t(k)] + kindNs[k];
            return;
        }
        flush();
        begin(start, end, first, count, kindNs);
        m_key = key;
    }

    // Closes the last item (and hands it on); afterwards itemCount() and, where it is at most keepLimit, take().
    void finish() { flush(); }
    size_t itemCount() const { return m_count; }
    LaneSummaryLevel take() { return std::move(m_level); }

private:
    void begin(int64_t start, int64_t end, uint32_t first, uint32_t count, const int64_t* kindNs)
    {
        m_open = true;
        m_key = -1;
        m_pending = {start, end, first, count, 0.f, SpanKind::Kernel};
        std::copy(kindNs, kindNs + m_kinds, m_pendingNs.begin());
    }

    void flush()
    {
        if (!m_open)
            return;
        m_open = false;
        if (++m_count <= m_keepLimit) {
            int best = 0; // slots are in SpanKind order: a tie goes to the lower kind
            for (int k = 1; k < m_kinds; ++k)
                if (m_pendingNs[size_t(k)] > m_pendingNs[size_t(best)])
                    best = k;
            m_pending.kind = m_kindOfSlot[size_t(best)];
            m_pending.weight = float(m_pendingNs[size_t(best)]);
            m_level.items.push_back(m_pending);
        } else if (!m_level.items.empty()) {
            std::vector<LaneSummaryItem>().swap(m_level.items); // too many to be kept
        }
        if (m_above)
            m_above->add(m_pending.start, m_pending.end, m_pending.first, m_pending.count, m_pendingNs.data());
    }

    int m_shift;
    int64_t m_origin;
    int m_kinds;
    const std::array<SpanKind, kSpanKindCount>& m_kindOfSlot;
    size_t m_keepLimit;
    LevelBuilder* m_above;
    LaneSummaryLevel m_level;
    size_t m_count = 0;
    bool m_open = false;
    int64_t m_key = -1;
    LaneSummaryItem m_pending;
    std::array<int64_t, kSpanKindCount> m_pendingNs{};
};

} // namespace

LaneSummary::LaneSummary(const LaneSpans& spans, int64_t origin)
{
    const size_t n = spans.count;
    if (n < kMinSpans || n > UINT32_MAX)
        return;
    // The kinds present, each a column of time sums, in SpanKind order.
    std::array<bool, kSpanKindCount> present{};
    for (size_t p = 0; p < n; ++p)
        present[size_t(spans.kind[spans.at(p)])] = true;
    std::array<int, kSpanKindCount> slotOfKind{};
    std::array<SpanKind, kSpanKindCount> kindOfSlot{};
    int kinds = 0;
    for (int k = 0; k < kSpanKindCount; ++k)
        if (present[size_t(k)]) {
            slotOfKind[size_t(k)] = kinds;
            kindOfSlot[size_t(kinds++)] = SpanKind(k);
        }

    // Start at buckets of about four times the lane's typical spacing (the median of a sample): finer levels would
    // have more items than a sixteenth of the spans where the spans are, even in a lane that is busy in bursts.
    std::vector<int64_t> spacings;
    const size_t step = std::max<size_t>(1, (n - 1) / 1024);
    for (size_t p = 0; p + 1 < n; p += step)
        spacings.push_back(distance(spans.start[spans.at(p)], spans.start[spans.at(p + 1)]));
    std::nth_element(spacings.begin(), spacings.begin() + ptrdiff_t(spacings.size() / 2), spacings.end());
    const int64_t spacing = std::max<int64_t>(1, spacings[spacings.size() / 2]);
    int shift = std::min(60, int(std::bit_width(uint64_t(spacing))) - 1 + 2);

    // A level of buckets of 2^shift ns for each shift from the first to 61, each fed by the one below. Which are
    // kept is decided as before: each level that has at most 1/kReduction of the spans as items, up to the first
    // level of at most one item (or of 2^61-ns buckets).
    const size_t keepLimit = n / kReduction;
    const int firstShift = shift;
    std::deque<LevelBuilder> builders;
    for (int s = 61; s >= firstShift; --s)
        builders.emplace_front(s, origin, kinds, kindOfSlot, keepLimit, builders.empty() ? nullptr : &builders.front());
    LevelBuilder& first = builders.front();
    std::array<int64_t, kSpanKindCount> ns{};
    // The times a chunk at a time into plain arrays (unpacked a block at a time where the lane is a range of the
    // columns), so that the builder's stores do not interleave with the columns' reads.
    constexpr size_t kChunk = 1024;
    std::array<int64_t, kChunk> starts, ends;
    std::array<uint8_t, kChunk> slots;
    for (size_t p0 = 0; p0 < n; p0 += kChunk) {
        const size_t m = std::min(kChunk, n - p0);
        if (spans.list) {
            const uint32_t* list = spans.list + p0;
            for (size_t j = 0; j < m; ++j) {
                starts[j] = spans.start[list[j]];
                ends[j] = spans.end[list[j]];
                slots[j] = uint8_t(slotOfKind[size_t(spans.kind[list[j]])]);
            }
        } else {
            const size_t s0 = spans.base + p0;
            spans.start.copyTo(s0, s0 + m, starts.data());
            spans.end.copyTo(s0, s0 + m, ends.data());
            for (size_t j = 0; j < m; ++j)
                slots[j] = uint8_t(slotOfKind[size_t(spans.kind[s0 + j])]);
        }
        for (size_t j = 0; j < m; ++j) {
            const size_t slot = slots[j];
            // A span of 0 ns counts as 1 ns, so that a block's kind is always one of its spans'.
            ns[slot] = std::max<int64_t>(1, distance(starts[j], ends[j]));
            first.add(starts[j], ends[j], uint32_t(p0 + j), 1, ns.data());
            ns[slot] = 0;
        }
    }
    for (LevelBuilder& b : builders)
        b.finish(); // finest first: each closes its last item before the level above closes its own
    for (size_t k = 0; k < builders.size(); ++k) {
        const size_t count = builders[k].itemCount();
        if (count <= keepLimit)
            m_levels.push_back(builders[k].take());
        if (count <= 1)
            break;
    }
    for (LaneSummaryLevel& l : m_levels)
        l.items.shrink_to_fit();
}

const LaneSummaryLevel* LaneSummary::levelFor(double nsPerPixel) const
{
    for (auto it = m_levels.rbegin(); it != m_levels.rend(); ++it)
        if (double(it->bucketNs()) <= nsPerPixel)
            return &*it;
    return nullptr;
}

size_t LaneSummary::memoryBytes() const
{
    size_t bytes = m_levels.capacity() * sizeof(LaneSummaryLevel);
    for (const LaneSummaryLevel& l : m_levels)
        bytes += l.items.capacity() * sizeof(LaneSummaryItem);
    return bytes;
}

size_t firstItemEndingAfter(const LaneSummaryLevel& level, size_t from, int64_t t)
{
    const auto& items = level.items;
    return size_t(std::partition_point(items.begin() + ptrdiff_t(std::min(from, items.size())), items.end(),
                                       [t](const LaneSummaryItem& it) { return it.end <= t; })
                  - items.begin());
}

size_t firstItemStartingAtOrAfter(const LaneSummaryLevel& level, size_t from, int64_t t)
{
    const auto& items = level.items;
    return size_t(std::partition_point(items.begin() + ptrdiff_t(std::min(from, items.size())), items.end(),
                                       [t](const LaneSummaryItem& it) { return it.start < t; })
                  - items.begin());
}

} // namespace streamscope
