// Diagnostics: rules that read a trace (and the scenario embedded in it, when there is one) and explain in one
// sentence why work did not overlap or the GPU sat idle, naming the spans involved. They work on imported traces
// too, from the spans and flows alone; the evidence and thresholds of each rule are in docs/ANALYSIS.md.
#pragma once

#include "trace.h"

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace streamscope {

class IncomingFlows;

struct Diagnostic {
    std::string rule;            // a rule id of diagnosticRules()
    std::string severity;        // "info", "warning" or "error"
    std::string message;         // one sentence naming the spans by name and stream
    std::vector<uint32_t> spans; // the spans involved (trace span indices), in time order
};

struct DiagnosticRule {
    std::string_view id; // "pageable-memcpy", ...
    std::string_view severity;
    std::string_view title; // a few words
    std::string_view fix;   // what to do about it, one sentence
};

// Every rule, in the order diagnose() reports them.
const std::vector<DiagnosticRule>& diagnosticRules();
// A rule by id, or nullptr.
const DiagnosticRule* findDiagnosticRule(std::string_view id);

// The thresholds of the rules (docs/ANALYSIS.md says why each has its value).
struct DiagnosticThresholds {
    // An operation "waited" when it started at least this long after it was ready (its launch call had returned,
    // its stream predecessor and the events it waits for had ended). Launch latency is a few µs; events cost
    // about 1 µs each: 20 µs is well above both.
    int64_t minWaitNs = 20'000;
    // An operation started "right after" another ended when it started at most this long after that end.
    int64_t backToBackNs = 10'000;

    // pageable-memcpy: the copy's API call lasted at least this long and covered this fraction of the copy.
    int64_t pageableMinCallNs = 20'000;
    double pageableCallCoverage = 0.7;

    // hardware-queue-false-dependency: this many operations held back by unrelated ones.
    int minFalseDependencies = 2;
    int defaultMaxConnections = 8; // CUDA's default when the trace does not say

    // gpu-filling-kernel: the waiting kernel started after this fraction of the big kernel's run and waited at
    // least this fraction of the big kernel's duration.
    double fillingTailFraction = 0.75;
    double fillingMinWaitFraction = 0.25;

    // host-func-serialization: at most this gap between one host function's end and the next one's start.
    int64_t hostFuncGapNs = 20'000;

    // sync-in-loop: at least this many syncs; at least this fraction of launches followed by a sync before the
    // next launch; the GPU idle at least this fraction of the host thread's time between a sync and the next op.
    int minSyncs = 4;
    double syncAfterLaunchFraction = 0.75;
    double syncIdleFraction = 0.10;

    // launch-bound: at least this many GPU operations shorter than the calls that launched them, at least this
    // fraction of the thread's launched operations, and the device idle at least this fraction of their time.
    int minShortLaunches = 16;
    double shortLaunchFraction = 0.5;
    double launchIdleFraction = 0.3;

    // timing-perturbation: the timed makespan exceeds the untimed one by more than this factor (DESIGN.md §4).
    double timingPerturbationMax = 1.05;

    // implicit-sync: the host call blocked at least this long waiting for GPU work.
    int64_t implicitMinBlockNs = 5'000;

    // ---- effects: what a run shows (severity "info")
    // streams-overlap: two or more operations of different streams ran at once for at least this fraction of the
    // device's busy time, and at least overlapMinNs.
    double overlapMinFraction = 0.2;
    int64_t overlapMinNs = 10'000;
    // stream-serialization: at least this many GPU operations on the device, this fraction of them in one stream,
    // at most this fraction of the busy time with two running, and at least this fraction of the stream's
    // operations issued while their predecessor ran and started right after it ended.
    int serialMinOps = 4;
    double serialStreamShare = 0.9;
    double serialMaxConcurrentFraction = 0.05;
    double serialHeldFraction = 0.5;
    // copy-compute-overlap: a kernel ran during at least this fraction of the device's copy time.
    double copyComputeMinFraction = 0.2;
    // multi-device-overlap: two devices were busy at once for at least this fraction of the less busy one's time.
    double multiDeviceMinFraction = 0.25;
    // stream-priority: the higher-priority kernel ended at least this fraction of the other's duration before it.
    double priorityMinLeadFraction = 0.1;
};

struct DiagnosticOptions {
    DiagnosticThresholds thresholds;
    std::vector<std::string> rules; // run only these rule ids; empty: all
    size_t maxNamedSpans = 3;       // spans named in a message; the rest are counted
    size_t maxSpans = 10'000;       // span indices listed per diagnostic
    // Set (from another thread): the rules not run yet are skipped, and what was found so far is returned. The
    // window stops the analysis of a trace it no longer shows, so that its memory goes back at once.
    const std::atomic<bool>* cancel = nullptr;
    // The trace's IncomingFlows where the caller holds them for another analysis too (the window's report runs the
    // critical path beside the diagnostics: one index instead of two); nullptr: built by the diagnostics.
    const IncomingFlows* incoming = nullptr;
};

// Runs the rules on a finalized trace (an unfinalized one is analysed on a finalized copy). Results are in rule
// order, then time order.
std::vector<Diagnostic> diagnose(const Trace& trace, const DiagnosticOptions& options = {});

// The diagnostic of rule `effect` on the trace (the first, when several), or nullopt when the rule does not fire.
std::optional<Diagnostic> findEffect(const Trace& trace, const std::string& effect,
                                     const DiagnosticOptions& options = {});

} // namespace streamscope
