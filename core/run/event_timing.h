// What CUDA events can and cannot say about a GPU span, and how far they are from the truth (DESIGN.md §4).
//
// A start event completes when its stream reaches it, before the op gets SMs or a copy engine; the end event is
// within a few µs of the op's real end (measured on an H200 against CUPTI: ends 0.1–3 µs late, starts a median
// of 3–40 µs early, a copy waiting for its copy engine drawn as running for up to 3 ms). So an event-timed trace
// corrects the starts where the evidence allows and marks the rest as uncertain; a "both" trace carries, per span,
// the event times' distance from the CUPTI times of the same run.
#pragma once

#include "trace.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace streamscope {

struct EventTimingCorrections {
    size_t corrected = 0; // starts moved to where the evidence puts them
    size_t uncertain = 0; // starts that may include a wait for SMs
    int64_t movedNs = 0;  // time no longer drawn as running, over all corrected spans
};

// For an event-timed trace (finalized): copies in one direction on one device use one copy engine in issue order,
// so a copy starts no earlier than the previous copy of that direction ended; a spin kernel of one wave runs its
// known per-block duration, so it started no earlier than that before its end. Other kernels and memsets whose
// start event fired while another kernel of the device was running are marked Uncertain. Re-finalizes the trace.
// `scenario` is the one run (spin durations); without it only copies move.
EventTimingCorrections correctEventTimedSpans(Trace& trace, const Scenario* scenario);

// The event-timing error of a "both" trace: event time minus CUPTI time, over the GPU spans that carry one.
struct EventTimingError {
    size_t spans = 0;
    double startMedianNs = 0, startP90Ns = 0; // of |start error|
    double endMedianNs = 0, endP90Ns = 0;     // of |end error|
    double startMeanNs = 0;                   // signed: negative when the events start early
    double endMeanNs = 0;
};
std::optional<EventTimingError> summarizeEventTimingError(const Trace& trace);

// How a GPU trace was timed and what timing cost, from its run info and spans (analyze, the window).
struct TimingSummary {
    std::string timing;            // "cupti", "events", "both"; empty: not a GPU run of StreamScope's
    std::string reason;            // why CUPTI was not used, where it was asked for
    int64_t timedMakespanNs = 0;   // host clock, first issue to device sync (median of the measured iterations)
    int64_t untimedMakespanNs = 0; // the same work with no timing at all; 0: not measured
    double perturbation = 0;       // timed / untimed; 0: not measured
    std::optional<EventTimingError> eventError; // timing "both"
    size_t corrected = 0;                       // timing "events": spans whose start was corrected, and left uncertain
    size_t uncertain = 0;
    std::string clockCheck; // timing "cupti": the anchor events' check
};
TimingSummary summarizeTiming(const Trace& trace);
// The summary as report lines (empty when the trace has no timing information).
std::string timingReport(const TimingSummary& s);

} // namespace streamscope
