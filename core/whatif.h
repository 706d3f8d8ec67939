// What if: the scenario changed and simulated. Sweeps vary one knob over a range of values (streams, chunks, kernel
// size) and report makespan and speedup per value. See docs/ANALYSIS.md.
#pragma once

#include "result.h"
#include "scenario.h"
#include "simulator.h"

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace streamscope {

// ---- what-if sweeps ---------------------------------------------------------------------------------------------

enum class SweepKnob : uint8_t {
    Streams,    // "streams": the scenario rewritten with N streams, its work dealt round-robin
    Chunks,     // "chunks": a thread's repeat set to N
    KernelSize, // "kernel-size": kernel durations and problem sizes scaled by a factor
};
std::string_view toString(SweepKnob);
std::optional<SweepKnob> sweepKnobFromString(std::string_view);
// The values a GUI or CLI sweeps by default: streams 1..16, chunks 1, 2, 4, 8, 16, kernel size 0.25 .. 4.
std::vector<double> defaultSweepValues(SweepKnob knob);

struct SweepSpec {
    SweepKnob knob = SweepKnob::Streams;
    std::vector<double> values;   // empty: defaultSweepValues(knob)
    int thread = -1;              // Chunks, KernelSize: the scenario thread to change; -1: every thread
    bool keepTotalWork = true;    // Chunks: scale each op's duration/size/bytes by oldRepeat / N
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
    double speedup = 0;           // over the same work serialized (gpu work / makespan)
    double relativeSpeedup = 0;   // first point's makespan / this makespan
    int maxConcurrency = 0;
    int64_t gpuWorkNs = 0;
    std::string error;            // set when this value could not be rewritten or simulated
};

// Sets each point's relativeSpeedup: the makespan of the first point that ran over its own (0 for failed points).
void setRelativeSpeedups(std::vector<SweepPoint>& points);

// Rewrites and simulates the scenario for each value.
std::vector<SweepPoint> runSweep(const Scenario& scenario, const SweepSpec& spec,
                                 const SimulatorOptions& simulator = {}, const std::atomic<bool>* cancel = nullptr);
std::string sweepToJson(const SweepSpec& spec, const std::vector<SweepPoint>& points, int indent = 2);

} // namespace streamscope
