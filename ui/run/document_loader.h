// Opening files: a scenario or a trace (told apart by their content, not their name), or a lesson by id; and the
// analysis of a trace (metrics and the lesson's checks). Plain functions, safe to call on any thread: the window
// calls them on a worker thread so that large traces never freeze it; headless export calls them directly.
#pragma once

#include "analysis.h"
#include "collectives.h"
#include "diagnostics.h"
#include "expect.h"
#include "metrics.h"
#include "ranges.h"
#include "rank_parts.h"
#include "result.h"
#include "scenario.h"
#include "trace.h"
#include "trace_formats.h"

#include <QString>

#include <atomic>
#include <memory>
#include <vector>

namespace streamscope {

// What the metrics, the lesson's checks and the diagnostics say about a trace (computed off the GUI thread).
struct TraceReport {
    TraceMetrics metrics;
    std::vector<CheckResult> checks;     // the expectations of the scenario embedded in the trace
    std::vector<Diagnostic> diagnostics; // why work did not overlap, where the rules see it
    QString scenarioTitle;               // of the embedded scenario
    QString scenarioDescription;
    QString note;              // why there are no checks, when there are none
    QString effect;            // the rule id of the effect the scenario teaches (Scenario::effect), if any
    CriticalPath criticalPath; // the chain of operations that decided the run's length
    // A job of several ranks (rows "rank R · ..."): what each rank did, and each collective call across them.
    std::vector<RankSummary> ranks;
    std::vector<CollectiveCallView> collectives;
};

// `cancel` set (from another thread): the stages not begun are skipped (the report is then incomplete; the window
// drops it, as it no longer shows the trace).
TraceReport reportOnTrace(const Trace& trace, const std::atomic<bool>* cancel = nullptr);

// A trace with its analysis, shared between the panels.
class TimelineLayout;
struct FlowIndex;
struct ConcurrencyPlotData;

struct AnalyzedTrace {
    std::shared_ptr<const Trace> trace;
    TraceReport report;
    bool analysed = true; // false: the report is still to come (a big trace is drawn before it is analysed)
    // What the views build from `trace` before they show it, built beside it off the GUI thread (each costs seconds
    // at 10 M spans) for the views that show it first: the timeline's rows and lanes (the ranks folded as a new view
    // folds them) and its arrow index, the concurrency plot's step function, the op that launched each span (the
    // span table's column) and the GPU time by launching op. They take them (MainWindow::showTrace resets these on the
    // GUI thread), so that the views' later rebuilds do not keep these alive. Null: the view builds its own.
    mutable std::shared_ptr<const TimelineLayout> layout;
    mutable std::shared_ptr<const FlowIndex> flows;
    mutable std::shared_ptr<const ConcurrencyPlotData> concurrency;
    mutable std::shared_ptr<const std::vector<uint32_t>> launchingOps;
    mutable std::shared_ptr<const std::vector<OpGpuTime>> opGpuTimes;
    // The concurrency plot's steps were left out (withViewParts, ViewSteps::Later): the window counts them after it
    // has drawn the trace.
    bool concurrencyToCome = false;
};

// The same trace and report with the views' parts of it built now (see AnalyzedTrace::layout); the concurrency
// plot's steps on a second thread beside them, or left for later (the window draws a big trace before them).
enum class ViewSteps { Now, Later };
std::shared_ptr<const AnalyzedTrace> withViewParts(std::shared_ptr<AnalyzedTrace> trace,
                                                   ViewSteps steps = ViewSteps::Now);

std::shared_ptr<const AnalyzedTrace> makeAnalyzedTrace(Trace trace);
// The same trace with its report, computed now (the second step of opening a file with `analyze` false).
std::shared_ptr<const AnalyzedTrace> makeAnalyzedTrace(std::shared_ptr<const Trace> trace,
                                                       const std::atomic<bool>* cancel = nullptr);

enum class DocumentKind { Scenario, Trace };

struct LoadedDocument {
    DocumentKind kind = DocumentKind::Scenario;
    QString path;      // the file read (for a lesson: its file under resources/presets)
    QString lessonId;  // set when a lesson was opened by id
    QString variant;   // the variant applied, if any
    Scenario scenario; // Scenario: the scenario; Trace: the embedded one, if any (hasScenario)
    bool hasScenario = false;
    std::vector<Warning> warnings;
    std::shared_ptr<const AnalyzedTrace> trace; // Trace only
};

// "streamscope-trace", "streamscope-scenario", or empty: the "format" field at the top of a JSON text.
QString detectFormat(const std::string& text);

// Opens `pathOrLesson`: a file (scenario or trace by content) or, when no such file exists, a lesson id or number
// ("01", "two-streams"). `variant` applies to scenarios and lessons. Errors name the file and JSON path.
// `progress` (optional): how far reading a trace is, and its Cancel. A trace of `analyzeBelowSpans` spans or more
// comes without its report (AnalyzedTrace::analysed false), for a window that draws it first and analyses it on
// another worker; a smaller one with it.
Result<LoadedDocument> loadDocument(const QString& pathOrLesson, const QString& variant = {},
                                    const ImportProgress* progress = nullptr, size_t analyzeBelowSpans = SIZE_MAX);

} // namespace streamscope
