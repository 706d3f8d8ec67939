// What a GPU trace says about its own timing, in words (DESIGN.md §4): which timing it used and why CUPTI was not,
// what timing cost the run (the timed makespan against the same work untimed), and how far each span's times are
// known (measured, start corrected, start uncertain; the CUDA events' distance from CUPTI in a "both" run). One home
// for these sentences: the banner above the timeline, the span inspector, the timeline's tooltip and the run info
// panel all say it the same way. Simulator and imported traces carry none of it: every function then says nothing.
#pragma once

#include "diagnostics.h"
#include "scenario.h"
#include "trace.h"

#include <QString>

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace streamscope {

// A run setting of the trace (RunInfo::settings) by key; empty when the trace has none.
QString runSetting(const RunInfo& info, std::string_view key);

// The "timing" setting in words: "CUPTI activity records", "CUDA events around every operation", ...
QString timingSettingText(const QString& timing);

// What timing cost the run, from the settings the CUDA backend writes (timing_perturbation, timed_makespan_ns,
// untimed_makespan_ns); nullopt when the trace has neither the ratio nor both makespans.
struct TimingCost {
    double ratio = 0;    // timed / untimed makespan
    int64_t timedNs = 0; // 0: not in the trace
    int64_t untimedNs = 0;
};
std::optional<TimingCost> timingCost(const RunInfo& info);
// "timed 2.96 ms vs 2.05 ms without timing (+44 %)", or "+44 % against the same work without timing".
QString timingCostText(const TimingCost& cost);
// Above this ratio timing is said to have changed the run (the timing-perturbation diagnostic's threshold).
double timingPerturbationLimit();

// The lines of the banner above the timeline: a bold title and the rest.
struct NoticeText {
    QString title; // "Timing changed this run:"
    QString text;  // "timed 2.96 ms vs 2.05 ms without timing (+44 %). The CUDA event recorded after …"
    bool isEmpty() const { return title.isEmpty() && text.isEmpty(); }
    QString full() const { return title.isEmpty() ? text : title + QLatin1Char(' ') + text; }
};
struct TimingNotice {
    // When the trace has the timing-perturbation diagnostic or a timing_perturbation over the limit: the cost and
    // the diagnostic's cause and fix (CLI flags named as the window's Timing choice).
    NoticeText perturbation;
    // When timing_reason is set: CUPTI was not used, and why.
    NoticeText fallback;
    // The timing the perturbation's fix recommends, if it names one.
    std::optional<TimingMode> suggested;
};
// `diagnostics`: the trace's (TraceReport::diagnostics, computed off the GUI thread).
TimingNotice timingNotice(const Trace& trace, const std::vector<Diagnostic>& diagnostics);

// Whether span `span` is a GPU operation timed on a real GPU (CUPTI or CUDA events), or carries timing columns.
bool hasMeasuredTiming(const Trace& trace, uint32_t span);
// How far the span's times are known: "measured (CUPTI)", "start corrected: …", "start uncertain: the op may have
// waited for SMs; it began at or after the drawn start"; empty when hasMeasuredTiming is false.
QString spanTimingText(const Trace& trace, uint32_t span);
// "CUDA events: start −12.3 µs, end +1.2 µs from CUPTI"; empty when the span has no event-timing error.
QString spanEventErrorText(const Trace& trace, uint32_t span);

} // namespace streamscope
