// Summaries of one timeline lane by zoom level ("mipmaps", as the Perfetto UI keeps them), built once when a trace
// is shown, so that drawing a wide view costs O(pixel columns), not O(spans in view): a 10 M-span trace at full view
// has hundreds of spans under each pixel of each lane, and walking them (even by galloping search) misses the cache
// once per pixel column and lane.
//
// A lane is a sequence of spans that do not overlap, sorted by start and by end (timeline_layout.h). At level k time
// is cut into buckets of 2^k ns from `origin`. A level is a list of items in time order:
// - a span at least 2^k long is an item of its own (drawn as its bar when it is a pixel wide);
// - the spans shorter than 2^k that start in one bucket are one block item: their positions in the lane
//   [first, first + count), their time extent, and their dominant kind (the kind with the most time among them;
//   a tie goes to the lower SpanKind).
// Every span of the lane is in exactly one item of every level (nothing is hidden), and items do not overlap in
// time. Only levels that are much smaller than the lane are kept (at most 1/16 of its spans, so all levels together
// cost under 4 bytes per span); a view finer than the finest level walks the spans themselves.
#pragma once

#include "trace.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace streamscope {

struct LaneSummaryItem {
    int64_t start = 0;  // the first span's start
    int64_t end = 0;    // the last span's end
    uint32_t first = 0; // position in the lane of its first span
    uint32_t count = 0; // spans it stands for (1 and end - start >= 2^level: a span of its own)
    float weight = 0;   // ns of `kind` among its spans (to pick the dominant kind of a pixel column of items)
    SpanKind kind = SpanKind::Kernel;
};

struct LaneSummaryLevel {
    int shift = 0; // buckets of 2^shift ns
    std::vector<LaneSummaryItem> items;
    int64_t bucketNs() const { return int64_t(1) << shift; }
};

// The spans of one lane: position p is span `list ? list[p] : base + p` of the columns start/end/kind.
struct LaneSpans {
    TimeColumn::View start;
    TimeColumn::View end;
    const SpanKind* kind = nullptr;
    const uint32_t* list = nullptr;
    uint32_t base = 0;
    size_t count = 0;
    uint32_t at(size_t position) const { return list ? list[position] : base + uint32_t(position); }
};

class LaneSummary {
public:
    // Lanes with fewer spans than this get no levels (walking them is as fast).
    static constexpr size_t kMinSpans = 256;
    // A level is kept when it has at most this share of the lane's spans as items.
    static constexpr size_t kReduction = 16;

    LaneSummary() = default;
    // `origin` <= every start of the lane (the timeline's time origin, so that all lanes' buckets line up).
    LaneSummary(const LaneSpans& spans, int64_t origin);

    // Finest first; empty when the lane is small or its spans too sparse to summarize.
    const std::vector<LaneSummaryLevel>& levels() const { return m_levels; }
    // The coarsest level whose buckets are at most `nsPerPixel` wide (a pixel column then covers one to three
    // buckets), or nullptr when the view is finer than the finest level.
    const LaneSummaryLevel* levelFor(double nsPerPixel) const;
    size_t memoryBytes() const;

private:
    std::vector<LaneSummaryLevel> m_levels;
};

// Positions, in a level, of the first item ending after t and of the first item starting at or after t.
size_t firstItemEndingAfter(const LaneSummaryLevel& level, size_t from, int64_t t);
size_t firstItemStartingAtOrAfter(const LaneSummaryLevel& level, size_t from, int64_t t);

} // namespace streamscope
