// Scenario JSON: reading with validation (every error names the file, the JSON path and what is wrong) and
// writing. See docs/SCENARIO.md for the format.
#pragma once

#include "result.h"
#include "scenario.h"

#include <string>
#include <vector>

namespace streamscope {

// Limits against hostile files.
struct ScenarioLimits {
    size_t maxBytes = 64u << 20;   // file size
    int maxDepth = 32;             // JSON nesting depth
    int64_t maxOps = 2'000'000;    // ops in all threads, graph nodes included, before repeats
    int64_t maxIssued = 5'000'000; // ops issued over the whole run (repeats, workers and iterations included);
                                   // a run needs about 290 bytes per issued op (docs/SCENARIO.md)
    int maxThreads = 1024;         // host threads (pool workers included)
    int maxStreams = 4096;
    int maxDevices = 64;
};

struct ScenarioReadResult {
    Scenario scenario;
    std::vector<Warning> warnings; // legal but suspicious: a wait on a never-recorded event, pageable async copy
};

// Parses and validates scenario JSON text. `file` names the source in messages. Applies `variant` (by id) when
// given; an unknown variant is an error.
Result<ScenarioReadResult> parseScenario(const std::string& text, const std::string& file,
                                         const std::string& variant = {}, const ScenarioLimits& limits = {});
Result<ScenarioReadResult> loadScenarioFile(const std::string& path, const std::string& variant = {},
                                            const ScenarioLimits& limits = {});
// Validates an in-memory scenario (the editor's model): resolves stream and event names, checks every rule.
// The paths in the errors are the JSON paths the scenario would have when written.
Result<ScenarioReadResult> validateScenario(Scenario scenario, const std::string& file = {},
                                            const ScenarioLimits& limits = {});

// The scenario rank `rank` of a job runs: the overrides of "ranks" that name it applied, and with "device":
// "local-rank" its device 0 moved to GPU `localRank`. Errors name `file`, the JSON path and the rank.
Result<Scenario> scenarioForRank(const Scenario& scenario, int rank, int localRank, const std::string& file = {});

// The whole job of `worldSize` ranks as one scenario for the simulator: rank R's scenario (scenarioForRank) with its
// devices moved to R * devicesPerRank + d and its streams, threads and events named "rank R · name"; `job` says
// which rank each thread is. The run settings and expectations are the scenario's.
Result<Scenario> expandJob(const Scenario& scenario, int worldSize, const std::string& file = {});

// Writes the scenario as JSON (pretty, 2 spaces), in a form parseScenario reads back to an equal scenario.
std::string scenarioToJson(const Scenario& scenario);
// Writes one expectation as JSON (for embedding and for the variants' lists).
std::string expectationToJson(const Expectation& e);

} // namespace streamscope
