// Metrics of a trace: what the lessons' expectations and the analysis speak about.
// All computed over GPU spans (kernels, copies, memsets, host functions) unless the name says otherwise.
#pragma once

#include "result.h"
#include "trace.h"

#include <map>
#include <string>
#include <vector>

namespace streamscope {

struct Interval {
    int64_t start = 0, end = 0;
};

// Union of intervals, sorted and merged.
std::vector<Interval> mergeIntervals(std::vector<Interval> v);
int64_t totalLength(const std::vector<Interval>& merged);
// Length of the intersection of two merged interval lists.
int64_t intersectionLength(const std::vector<Interval>& a, const std::vector<Interval>& b);

struct StreamMetrics {
    uint32_t track = 0;
    std::string name;
    int device = -1;
    int64_t busyNs = 0; // union of its GPU spans
    int64_t spanCount = 0;
};

struct TraceMetrics {
    int64_t makespanNs = 0;           // first GPU span start to last GPU span end (all devices)
    int64_t gpuWorkNs = 0;            // sum of GPU span durations (the work serialized)
    double speedup = 0;               // gpuWorkNs / makespanNs
    int maxConcurrency = 0;           // most GPU spans running at one instant
    int64_t copyComputeOverlapNs = 0; // time a copy and a kernel ran at once
    int64_t hostMakespanNs = 0;       // first to last span of any kind but ranges (workTimeRange)
    int64_t gpuSpanCount = 0;
    int64_t apiCallCount = 0;
    std::vector<StreamMetrics> streams;
};

TraceMetrics computeMetrics(const Trace& trace);
// Earliest start and latest end of the spans that are work or calls: every kind but ranges, which only enclose them
// (0, 0 when there are none).
std::pair<int64_t, int64_t> workTimeRange(const Trace& trace);
// Busy intervals (merged) of a track's GPU spans.
std::vector<Interval> busyIntervals(const Trace& trace, uint32_t track);
// Most GPU spans running at one instant, among tracks of `device` (-1: all) and the given kinds (empty: all GPU).
int maxConcurrency(const Trace& trace, int device = -1, const std::vector<SpanKind>& kinds = {});

} // namespace streamscope
