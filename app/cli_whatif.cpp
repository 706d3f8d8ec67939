// streamscope-cli sweep and replay: a scenario swept over one knob (simulated, or run by run on a GPU), and a GPU
// recording replayed on the simulator with settings changed.
#include "cli.h"

#include "analysis.h"
#include "device_profile.h"
#include "diagnostics.h"
#include "expect.h"
#include "metrics.h"
#include "resources.h"
#include "runner.h"
#include "scenario_json.h"
#include "trace_formats.h"
#include "trace_import.h"
#include "trace_json.h"
#include "whatif.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace cli {

// ---- sweep -----------------------------------------------------------------------------------------------------

// Makespan and speedup against one knob: instantly on the simulator, or run by run (with progress) on a GPU.
int cmdSweep(const SweepArgs& args)
{
    std::string path;
    auto loaded = loadScenarioArg(args.scenario, args.variant, &path);
    if (!loaded)
        return fail(loaded.error(), exitCodeOf(loaded.errorClass()));
    const auto knob = ss::sweepKnobFromString(args.knob);
    if (!knob)
        return fail("unknown knob '" + args.knob + "' (streams, chunks or kernel-size)", kExitBadInput);
    ss::SweepSpec spec;
    spec.knob = *knob;
    spec.values = args.values.empty() ? ss::defaultSweepValues(*knob) : args.values;
    spec.thread = args.thread;

    std::vector<ss::SweepPoint> points;
    if (args.backend == "sim") {
        ss::SimulatorOptions options;
        if (!args.profile.empty()) {
            auto profile = ss::findDeviceProfile(args.profile);
            if (!profile)
                return fail(profile.error(), exitCodeOf(profile.errorClass()));
            options.profile = std::move(profile).value();
        }
        points = ss::runSweep(loaded->scenario, spec, options);
    } else {
        auto scenarios = ss::sweepScenarios(loaded->scenario, spec);
        if (!scenarios)
            return fail(scenarios.error(), exitCodeOf(scenarios.errorClass()));
        RunArgs runArgs;
        runArgs.backend = args.backend;
        runArgs.profile = args.profile;
        runArgs.timing = args.timing;
        for (size_t i = 0; i < scenarios->size(); ++i) {
            const ss::Scenario& sc = (*scenarios)[i];
            ChosenBackend chosen = chooseBackend(runArgs, sc);
            if (chosen.exitCode != kExitOk)
                return chosen.exitCode;
            std::cerr << "sweep " << (i + 1) << "/" << scenarios->size() << ": " << args.knob << " = " << spec.values[i]
                      << " on " << chosen.backend->name() << "\n";
            ss::RunOutcome outcome = ss::runScenario(sc, *chosen.backend);
            ss::SweepPoint point;
            point.value = spec.values[i];
            if (!outcome.status) {
                point.error = outcome.status.error().toString();
            } else {
                const auto m = ss::computeMetrics(outcome.trace);
                point.makespanNs = m.makespanNs;
                point.speedup = m.speedup;
                point.maxConcurrency = m.maxConcurrency;
                point.gpuWorkNs = m.gpuWorkNs;
            }
            points.push_back(point);
        }
        ss::setRelativeSpeedups(points);
    }

    if (args.json) {
        std::cout << ss::sweepToJson(spec, points) << '\n';
    } else {
        std::cout << "sweep of " << args.knob << " over " << path << '\n';
        std::cout << padRight(args.knob, 12) << "  " << padRight("makespan", 12)
                  << "  speedup  vs first  concurrency\n";
        for (const auto& p : points) {
            char value[32];
            std::snprintf(value, sizeof value, "%g", p.value);
            if (!p.error.empty()) {
                std::cout << padRight(value, 12) << "  error: " << p.error << '\n';
                continue;
            }
            std::cout << padRight(value, 12) << "  " << padRight(formatDuration(p.makespanNs), 12) << "  "
                      << padRight(formatNumber(p.speedup, "%.2fx"), 7) << "  "
                      << padRight(formatNumber(p.relativeSpeedup, "%.2fx"), 7) << "  " << p.maxConcurrency << '\n';
        }
    }
    for (const auto& p : points)
        if (!p.error.empty())
            return kExitRuntime;
    return kExitOk;
}

// ---- replay ----------------------------------------------------------------------------------------------------

// A GPU recording replayed on the simulator with the durations it measured, with settings changed: the replay's
// error on the unchanged run first, then the changed run against the recording.
int cmdReplay(const ReplayArgs& args, const std::string& command)
{
    ss::ReplayOptions options;
    for (const std::string& s : args.sets) {
        auto set = ss::parseReplaySetting(s);
        if (!set)
            return fail(set.error(), kExitBadInput);
        options.settings.push_back(std::move(set).value());
    }
    if (!args.profile.empty()) {
        auto profile = ss::findDeviceProfile(args.profile);
        if (!profile)
            return fail(profile.error(), exitCodeOf(profile.errorClass()));
        options.simulator.profile = std::move(profile).value();
    }
    auto trace = ss::importTraceFile(args.trace);
    if (!trace)
        return fail(trace.error(), exitCodeOf(trace.errorClass()));
    auto replay = ss::replayRecordedRun(*trace, options, args.trace);
    if (!replay)
        return fail(replay.error(), exitCodeOf(replay.errorClass()));
    if (args.json) {
        std::cout << ss::replayToJson(*replay) << '\n';
    } else {
        std::cout << "trace: " << args.trace << '\n';
        printScenarioLine(trace->info);
        std::cout << "setting: " << ss::replaySettingsText(replay->settings) << '\n';
        std::cout << ss::replayReport(*replay, "recorded");
    }
    if (!args.output.empty()) {
        replay->changed.info.command = command;
        if (ss::Status saved = ss::saveNativeTrace(replay->changed, args.output); !saved)
            return fail(saved.error(), exitCodeOf(saved.errorClass()));
        std::cerr << "replayed trace written to " << args.output << '\n';
    }
    return kExitOk;
}

} // namespace cli
