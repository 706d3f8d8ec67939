// What if: the scenario changed and simulated. Sweeps vary one knob over a range of values (streams, chunks, kernel
// size) and report makespan and speedup per value. The replay of a recorded run simulates the scenario embedded in
// a GPU recording of StreamScope's with the durations measured in it, with one setting changed, and states first how
// far the replay of the unchanged run is from the recording. See docs/ANALYSIS.md.
#pragma once

#include "analysis.h"
#include "result.h"
#include "scenario.h"
#include "simulator.h"
#include "trace.h"

#include <atomic>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace streamscope {

// ---- what-if sweeps ---------------------------------------------------------------------------------------------

// The most streams a sweep or a replay deals a scenario's work to.
inline constexpr int kMaxSweepStreams = 4096;

enum class SweepKnob : uint8_t {
    Streams,    // "streams": the scenario rewritten with N streams, its work dealt round-robin
    Chunks,     // "chunks": a thread's repeat set to N
    KernelSize, // "kernel-size": kernel durations and problem sizes scaled by a factor
};
std::string_view toString(SweepKnob);
std::optional<SweepKnob> sweepKnobFromString(std::string_view);
// The values a GUI or CLI sweeps by default: streams 1..16, chunks 1, 2, 4, 8, 16, kernel size 0.25 .. 4.
std::vector<double> defaultSweepValues(SweepKnob knob);

// Scales the work of one kernel by `f`, the rule the kernel-size sweep and the quick controls' kernel knob share:
// spin kernels' durations linearly, problem sizes so that the work scales by f (matmul n^3 work, transpose n^2,
// fma/triad/reduce n); empty kernels and other ops are left alone, graph nodes are the caller's to visit.
// `spinDecimals` >= 0 rounds spin durations to that many decimals of a microsecond (at least one such step), as
// the quick controls show them; -1 keeps them exact, as the sweep does.
void scaleKernelWork(Op& op, double f, int spinDecimals = -1);

struct SweepSpec {
    SweepKnob knob = SweepKnob::Streams;
    std::vector<double> values; // empty: defaultSweepValues(knob)
    int thread = -1;            // Chunks, KernelSize: the scenario thread to change; -1: every thread
    bool keepTotalWork = true;  // Chunks: scale each op's duration/size/bytes by oldRepeat / N
};

// The scenario rewritten for one value of the knob (validated; variants dropped, and expectations dropped when
// streams are rewritten). Rules: docs/ANALYSIS.md.
Result<Scenario> sweepScenario(const Scenario& scenario, SweepKnob knob, double value, int thread = -1,
                               bool keepTotalWork = true);
// One rewritten scenario per value.
Result<std::vector<Scenario>> sweepScenarios(const Scenario& scenario, const SweepSpec& spec);

struct SweepPoint {
    double value = 0;
    int64_t makespanNs = 0;
    double speedup = 0;         // over the same work serialized (gpu work / makespan)
    double relativeSpeedup = 0; // first point's makespan / this makespan
    int maxConcurrency = 0;
    int64_t gpuWorkNs = 0;
    std::string error; // set when this value could not be rewritten or simulated
};

// Sets each point's relativeSpeedup: the makespan of the first point that ran over its own (0 for failed points).
void setRelativeSpeedups(std::vector<SweepPoint>& points);

// Rewrites and simulates the scenario for each value.
std::vector<SweepPoint> runSweep(const Scenario& scenario, const SweepSpec& spec,
                                 const SimulatorOptions& simulator = {}, const std::atomic<bool>* cancel = nullptr);
std::string sweepToJson(const SweepSpec& spec, const std::vector<SweepPoint>& points, int indent = 2);

// ---- replay of a recorded run -----------------------------------------------------------------------------------

// One setting a replay changes: `streamscope-cli replay TRACE --set KEY=VALUE`.
struct ReplaySetting {
    std::string key;
    std::string value;
    bool operator==(const ReplaySetting&) const = default;
};

// The keys a replay understands: streams=N, connections=N, pinned=true|false, priorities=off, priority.<stream>=P,
// kind.<stream>=blocking|non-blocking. `key` is the spelling shown ("priority.<stream>").
struct ReplayKey {
    std::string key;
    std::string values; // "1..4096", "true | false"
    std::string help;   // one sentence
};
const std::vector<ReplayKey>& replayKeys();

// Reads "KEY=VALUE" and checks the key and the form of its value; the error names the key. Stream names are checked
// against the scenario when the setting is applied.
Result<ReplaySetting> parseReplaySetting(std::string_view keyValue);
// "streams=4, pinned=true"; "no change" when empty.
std::string replaySettingsText(const std::vector<ReplaySetting>& settings);

// The durations a recorded trace measured, per scenario op (MeasuredOpKey: thread, op index, graph node): the mean
// over the op's spans in each measured iteration (its repeats and pool tasks: their total is the op's work there),
// then the median over the measured iterations. GPU: the spans of kernels, copies, memsets and host functions (spans
// with an uncertain start are left out). Host: API calls that do not wait (launches, event records and waits,
// graph launches, pinned and device copies), host work, cudaMalloc, and cudaFree from the end of the GPU work it
// waited for; and the host time before each call, after the thread's previous call returned.
// A graph's node spans are told apart by their order in their stream: node k of n is the k-th of every n spans.
struct MeasuredDurations {
    std::map<MeasuredOpKey, int64_t> gpuNs;
    std::map<MeasuredOpKey, int64_t> hostNs;
    std::map<MeasuredOpKey, int64_t> hostGapNs;   // host time before the op's call, after the previous call returned
    std::map<MeasuredOpKey, int64_t> streamGapNs; // GPU time between the op and the previous one in its stream,
                                                  // where the op was queued behind it
    size_t spans = 0;                             // spans the medians were taken over
    size_t skippedSpans = 0; // spans of ops left out: uncertain start, not matched to a scenario op
};
MeasuredDurations measureDurations(const Trace& trace, const Scenario& scenario);

// The scenario embedded in a GPU recording of StreamScope's (source cupti or cuda-events). Errors (bad input) name
// the file and say why a trace cannot be replayed: no embedded scenario, not recorded on a GPU, an embedded
// scenario that does not read back.
Result<Scenario> recordedScenario(const Trace& trace, const std::string& file = {});

struct ReplayOptions {
    std::vector<ReplaySetting> settings; // applied in order; none: the unchanged run only
    SimulatorOptions simulator;          // the profile for what is modelled; its measured maps are filled in here
    const std::atomic<bool>* cancel = nullptr;
};

struct ReplayResult {
    std::vector<ReplaySetting> settings;
    Trace unchanged; // the recorded scenario as it ran, replayed
    Trace changed;   // with the settings applied (the unchanged replay when there are none)
    // The replay's error: the unchanged replay against the recording. The makespan is first to last GPU span on
    // both sides; the untimed run (settings.untimed_makespan_ns, host clock from the first issuing call to the
    // device sync, no events, no CUPTI) is compared with the replay's host makespan (first to last span of any kind).
    int64_t recordedMakespanNs = 0;
    int64_t replayMakespanNs = 0;
    double makespanError = 0;      // replay / recorded - 1
    int64_t untimedMakespanNs = 0; // 0: the trace has no untimed run
    int64_t replayHostMakespanNs = 0;
    double untimedError = 0; // replay host makespan / untimed - 1 (0 without an untimed run)
    // What was measured and what modelled in the changed run: GPU ops (graph nodes counted) and host calls that do
    // not wait, per scenario op.
    size_t gpuOps = 0, gpuOpsMeasured = 0;
    size_t hostCalls = 0, hostCallsMeasured = 0;
    int fitPasses = 0;              // simulations that fitted the kernels' times to their measured spans
    std::vector<std::string> notes; // how the measured durations were carried over to the changed scenario
    TraceComparison comparison;     // the recording (A) against the changed replay (B)
};

// Replays a recorded run: its embedded scenario simulated with the durations measured in it, unchanged and with the
// settings applied. Copies, memsets, host functions and host calls take their measured time; a kernel takes the time
// per wave of blocks that makes its span in the unchanged replay match its measured span (fitted in a few
// simulations, so that time it spent sharing the SMs in the recording is not counted twice). Ops without a
// measurement, and copies whose host memory a setting changes, are modelled by the device profile. Errors: bad
// input (not replayable, a bad key, value or stream name: the message names the key), runtime (the simulation).
Result<ReplayResult> replayRecordedRun(const Trace& recorded, const ReplayOptions& options,
                                       const std::string& file = {});

// "replay of the unchanged run: makespan 2.61 ms against 2.66 ms recorded (−1.8 %); host makespan 2.70 ms against
// the untimed run's 2.64 ms (+2.3 %)": the line stated before anything else.
std::string replayErrorLine(const ReplayResult& r);
// The error line, what was measured and modelled, the notes, the setting's effect on the replay, then the
// comparison of the recording with the changed replay (comparisonReport).
std::string replayReport(const ReplayResult& r, const std::string& recordedName = "recorded");
std::string replayToJson(const ReplayResult& r, int indent = 2);

} // namespace streamscope
