// streamscope-cli: run scenarios and lessons on a GPU or the simulator, analyze, check and convert traces.
// Qt-free, so that it builds on headless GPU servers. Exit codes: 0 success, 1 a check failed, 2 bad input,
// 3 a GPU/runtime error.
#include "analysis.h"
#include "device_profile.h"
#include "diagnostics.h"
#include "duration_format.h"
#include "expect.h"
#include "metrics.h"
#include "resources.h"
#include "runner.h"
#include "scenario_json.h"
#include "simulator.h"
#include "trace_import.h"
#include "trace_json.h"
#include "whatif.h"

#ifdef STREAMSCOPE_HAVE_CUDA
#include "calibrate.h"
#include "cuda_backend.h"
#endif

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#ifndef STREAMSCOPE_VERSION
#define STREAMSCOPE_VERSION "0.1.0"
#endif

namespace ss = streamscope;

namespace {

enum ExitCode : int {
    kExitOk = 0,
    kExitCheckFailed = 1,
    kExitBadInput = 2,
    kExitRuntime = 3,
};

int exitCodeOf(ss::ErrorClass cls)
{
    return cls == ss::ErrorClass::BadInput ? kExitBadInput : kExitRuntime;
}

int fail(const ss::Error& e, int code)
{
    std::cerr << "error: " << e.toString() << '\n';
    return code;
}

int fail(const std::string& message, int code)
{
    return fail(ss::Error{{}, {}, message}, code);
}

bool cudaBuiltIn()
{
#ifdef STREAMSCOPE_HAVE_CUDA
    return true;
#else
    return false;
#endif
}

// The command line's tables: ASCII, µs with two decimals.
std::string formatDuration(int64_t ns)
{
    return ss::formatDuration(double(ns), {ss::DurationPrecision::Table, true});
}

std::string formatNumber(double v, const char* fmt)
{
    char buf[64];
    std::snprintf(buf, sizeof buf, fmt, v);
    return buf;
}

std::string padRight(std::string s, size_t width)
{
    if (s.size() < width)
        s.append(width - s.size(), ' ');
    return s;
}

// The command line as a shell would take it back, for the trace's run info.
std::string commandLine(int argc, char** argv)
{
    std::string s;
    for (int i = 0; i < argc; ++i) {
        std::string_view a = argv[i];
        if (i > 0)
            s += ' ';
        const bool plain = !a.empty() && a.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                                             "0123456789-_./=:,+@%") == std::string_view::npos;
        if (plain) {
            s += a;
            continue;
        }
        s += '\'';
        for (char c : a) {
            if (c == '\'')
                s += "'\\''";
            else
                s += c;
        }
        s += '\'';
    }
    return s;
}

void printWarnings(const std::vector<ss::Warning>& warnings)
{
    for (const auto& w : warnings)
        std::cerr << "warning: " << w.toString() << '\n';
}

// The desktop app reads these lines ("  device N: NAME") from `run` to name the GPU it found.
void printDevices(const ss::Trace& trace)
{
    for (const auto& d : trace.info.devices)
        std::cout << "  device " << d.index << ": " << (d.name.empty() ? "(unnamed)" : d.name) << '\n';
}

// The metrics part of the summaries of `run` and `analyze`.
void printMetrics(const ss::TraceMetrics& m)
{
    std::cout << "makespan:             " << formatDuration(m.makespanNs) << '\n';
    std::cout << "GPU work:             " << formatDuration(m.gpuWorkNs) << " (all GPU operations back to back)\n";
    std::cout << "speedup over serial:  " << formatNumber(m.speedup, "%.2fx") << '\n';
    std::cout << "max concurrency:      " << m.maxConcurrency << '\n';
    std::cout << "copy/compute overlap: " << formatDuration(m.copyComputeOverlapNs) << '\n';
    if (m.streams.empty())
        return;
    size_t width = 6;
    for (const auto& s : m.streams)
        width = std::max(width, s.name.size());
    std::cout << "streams:\n";
    for (const auto& s : m.streams) {
        const double share = m.makespanNs > 0 ? 100.0 * double(s.busyNs) / double(m.makespanNs) : 0.0;
        std::cout << "  " << padRight(s.name, width) << "  device " << s.device << "  busy "
                  << padRight(formatDuration(s.busyNs), 10) << " (" << formatNumber(share, "%5.1f") << "%)  "
                  << s.spanCount << (s.spanCount == 1 ? " span" : " spans") << '\n';
    }
}

void printScenarioLine(const ss::RunInfo& info)
{
    std::cout << "scenario: " << (info.scenarioId.empty() ? "(unnamed)" : info.scenarioId);
    if (!info.scenarioTitle.empty())
        std::cout << " - " << info.scenarioTitle;
    if (!info.variant.empty())
        std::cout << " [variant " << info.variant << "]";
    std::cout << '\n';
}

// Prints one PASS/FAIL line per expectation, with the sentence saying why it should hold; true when all passed.
bool printChecks(const ss::Trace& trace, const std::vector<ss::Expectation>& expect)
{
    const std::string& variant = trace.info.variant;
    if (expect.empty()) {
        std::cout << "checks: none in this scenario\n";
        return true;
    }
    const auto results = ss::evaluateExpectations(trace, expect);
    int passed = 0;
    int failed = 0;
    bool keyFailed = false;
    std::cout << "checks:\n";
    for (const auto& r : results) {
        (r.passed ? passed : failed)++;
        keyFailed = keyFailed || (!r.passed && r.expectation.key);
        std::cout << (r.passed ? "PASS  " : "FAIL  ");
        if (!r.expectation.id.empty())
            std::cout << r.expectation.id << ": ";
        std::cout << (r.description.empty() ? r.expectation.metric : r.description);
        if (!r.error.empty() && r.description.find(r.error) == std::string::npos)
            std::cout << " (" << r.error << ")";
        std::cout << '\n';
        if (!r.expectation.why.empty())
            std::cout << "      " << r.expectation.why << '\n';
    }
    // The effect the lesson teaches: the analysis must name it.
    if (const std::string effect = ss::lessonEffect(trace.info); !effect.empty()) {
        const auto found = ss::findEffect(trace, effect);
        (found ? passed : failed)++;
        std::cout << (found ? "PASS  " : "FAIL  ") << "effect: the analysis names " << effect;
        if (const ss::DiagnosticRule* rule = ss::findDiagnosticRule(effect))
            std::cout << " (" << rule->title << ")";
        std::cout << '\n' << "      " << (found ? found->message : "no such finding in this trace") << '\n';
    }
    std::cout << "checks: " << passed << " passed, " << failed << " failed\n";
    if (keyFailed && !variant.empty())
        std::cout << "note: variant " << variant << " is this lesson's contrast: its key check is meant to fail\n";
    return failed == 0 && ss::allPassed(results);
}

bool looksLikeFile(const std::string& arg)
{
    std::error_code ec;
    return std::filesystem::exists(arg, ec) || arg.find('/') != std::string::npos || arg.ends_with(".json");
}

// A scenario file, or a lesson by id or number, with the variant applied.
ss::Result<ss::ScenarioReadResult> loadScenarioArg(const std::string& arg, const std::string& variant,
                                                   std::string* file = nullptr)
{
    std::string path = arg;
    if (!looksLikeFile(path)) {
        auto preset = ss::findPreset(path);
        if (!preset)
            return preset.error();
        path = preset->path;
    }
    if (file)
        *file = path;
    return ss::loadScenarioFile(path, variant);
}

// ---- presets, profiles ----------------------------------------------------------------------------------------

int cmdPresets()
{
    const auto presets = ss::listPresets();
    if (presets.empty())
        std::cerr << "no presets found in " << (std::filesystem::path(ss::resourcesDir()) / "presets").string()
                  << " (set STREAMSCOPE_RESOURCES to the resources folder)\n";
    for (const auto& p : presets)
        std::cout << p.id << "  " << (p.title.empty() ? "(untitled)" : p.title) << '\n';
    return kExitOk;
}

int cmdProfiles()
{
    const auto ids = ss::builtinProfileIds();
    if (ids.empty())
        std::cerr << "no device profiles found in "
                  << (std::filesystem::path(ss::resourcesDir()) / "profiles").string() << '\n';
    for (const auto& id : ids) {
        auto profile = ss::findDeviceProfile(id);
        if (profile)
            std::cout << id << "  " << (profile->name.empty() ? "(unnamed)" : profile->name) << '\n';
        else
            std::cout << id << "  (unreadable: " << profile.error().toString() << ")\n";
    }
    return kExitOk;
}

// ---- calibrate -------------------------------------------------------------------------------------------------

struct CalibrateArgs {
    int device = 0;
    std::string output;
    int repeats = 5;
    bool quick = false;
};

// Measures a device profile on this machine's GPU; progress lines on stderr, the profile to -o or stdout.
int cmdCalibrate(const CalibrateArgs& args, const std::string& command)
{
#ifdef STREAMSCOPE_HAVE_CUDA
    ss::CalibrationOptions options;
    options.device = args.device;
    options.repeats = args.repeats;
    options.quick = args.quick;
    options.command = command;
    options.toolVersion = STREAMSCOPE_VERSION;
    options.progress = [](const std::string& line) { std::cerr << line << std::endl; };
    auto profile = ss::calibrateDevice(options);
    if (!profile)
        return fail(profile.error(), kExitRuntime);
    const std::string text = ss::deviceProfileToJson(*profile);
    if (auto back = ss::parseDeviceProfile(text, args.output.empty() ? "<calibrated>" : args.output); !back)
        return fail(back.error(), kExitRuntime);
    if (args.output.empty()) {
        std::cout << text;
        return kExitOk;
    }
    if (auto st = ss::saveTextFileAtomic(args.output, text); !st)
        return fail(st.error(), kExitRuntime);
    std::cerr << "wrote " << args.output << "; simulate with it: streamscope-cli run SCENARIO --backend sim --profile "
              << args.output << '\n';
    return kExitOk;
#else
    (void)args;
    (void)command;
    return fail("calibrate needs a CUDA build of streamscope-cli (this one was built without CUDA)", kExitRuntime);
#endif
}

// ---- run -------------------------------------------------------------------------------------------------------

struct RunArgs {
    std::string scenario;
    std::string backend = "auto";
    std::string output;
    bool check = false;
    std::string profile;
    std::string variant;
    bool progress = false;
    std::string timing;        // auto, cupti, events, both; empty: the scenario's run.timing
    std::string cuptiCapture;  // where set: the CUPTI records of the last measured iteration (test fixtures)
    std::string injectFault;   // "illegal-address:OP": that kernel op faults (checks what a failed run leaves)
};

struct ChosenBackend {
    std::unique_ptr<ss::Backend> backend;
    int exitCode = kExitOk; // non-zero: could not create one
};

ChosenBackend chooseBackend(const RunArgs& args, const ss::Scenario& scenario)
{
    ChosenBackend chosen;
    bool useCuda = false;
    if (args.backend == "cuda" || args.backend == "auto") {
#ifdef STREAMSCOPE_HAVE_CUDA
        // CUDA_DEVICE_MAX_CONNECTIONS and friends are read when the first context is created: set them first.
        ss::applyCudaEnvironment(scenario);
        const ss::CudaProbe probe = ss::probeCuda();
        if (probe.usable) {
            useCuda = true;
        } else if (args.backend == "cuda") {
            chosen.exitCode = fail("no usable GPU: " + probe.reason, kExitRuntime);
            return chosen;
        } else {
            std::cerr << "no usable GPU (" << probe.reason << "); using the simulator\n";
        }
#else
        (void)scenario;
        if (args.timing == "cupti" || args.timing == "both")
            std::cerr << "note: --timing " << args.timing << " applies to GPU runs only\n";
        if (args.backend == "cuda") {
            chosen.exitCode = fail("the CUDA backend is not built into this streamscope-cli "
                                   "(no CUDA toolkit at build time); use --backend sim",
                                   kExitRuntime);
            return chosen;
        }
        std::cerr << "no usable GPU (the CUDA backend is not built into this streamscope-cli); using the simulator\n";
#endif
    }

    if (useCuda) {
#ifdef STREAMSCOPE_HAVE_CUDA
        if (!args.profile.empty())
            std::cerr << "warning: --profile applies to the simulator only; ignored on the GPU\n";
        ss::CudaBackendOptions cuda;
        cuda.timing = args.timing.empty() ? scenario.run.timing : *ss::timingModeFromString(args.timing);
        cuda.cuptiCapturePath = args.cuptiCapture;
        if (args.injectFault.starts_with("illegal-address:"))
            cuda.illegalAddressOp = args.injectFault.substr(std::string_view("illegal-address:").size());
        chosen.backend = ss::makeCudaBackend(cuda);
        if (!chosen.backend)
            chosen.exitCode = fail("could not create the CUDA backend", kExitRuntime);
#endif
        return chosen;
    }

    ss::SimulatorOptions options;
    if (!args.profile.empty()) {
        auto profile = ss::findDeviceProfile(args.profile);
        if (!profile) {
            chosen.exitCode = fail(profile.error(), exitCodeOf(profile.errorClass()));
            return chosen;
        }
        options.profile = std::move(profile).value();
    }
    chosen.backend = std::make_unique<ss::SimulatorBackend>(std::move(options));
    return chosen;
}

// Which timing a GPU run used, why it fell back, and what timing cost: one or two lines.
void printTiming(const ss::RunInfo& info)
{
    std::string timing;
    std::string reason;
    std::string perturbation;
    for (const auto& [k, v] : info.settings) {
        if (k == "timing")
            timing = v;
        else if (k == "timing_reason")
            reason = v;
        else if (k == "timing_perturbation")
            perturbation = v;
    }
    if (timing.empty())
        return;
    std::cout << "timing: " << timing;
    if (!perturbation.empty())
        std::cout << " (timed/untimed makespan " << perturbation << ")";
    std::cout << '\n';
    if (!reason.empty())
        std::cerr << reason << '\n';
}

int cmdRun(const RunArgs& args, const std::string& command)
{
    auto loaded = loadScenarioArg(args.scenario, args.variant);
    if (!loaded)
        return fail(loaded.error(), exitCodeOf(loaded.errorClass()));
    printWarnings(loaded->warnings);
    const ss::Scenario& scenario = loaded->scenario;

    if (!args.injectFault.empty()) {
        const std::string target = args.injectFault.substr(args.injectFault.find(':') + 1);
        bool found = false;
        auto visit = [&](const std::vector<ss::Op>& ops, auto& self) -> void {
            for (const ss::Op& op : ops) {
                found = found || (op.kind == ss::OpKind::Kernel && ss::displayName(op) == target);
                self(op.ops, self);
            }
        };
        for (const ss::ThreadSpec& t : scenario.threads)
            visit(t.ops, visit);
        if (!found)
            return fail(args.scenario + ": --inject-fault: no kernel op is named \"" + target + "\"", kExitBadInput);
    }

    ChosenBackend chosen = chooseBackend(args, scenario);
    if (chosen.exitCode != kExitOk)
        return chosen.exitCode;

    ss::RunOptions options;
    options.variant = args.variant;
    options.command = command;
    if (args.progress) {
        // One line per finished iteration, for the desktop app's progress display.
        options.progress = [](int done, int total) {
            std::cerr << "progress: " << done << "/" << total << " iterations" << std::endl;
        };
    }
    ss::RunOutcome outcome = ss::runScenario(scenario, *chosen.backend, options);
    const ss::Trace& trace = outcome.trace;

    int code = kExitOk;
    if (!outcome.status) {
        code = fail(outcome.status.error(), exitCodeOf(outcome.status.errorClass()));
    } else {
        printScenarioLine(trace.info);
        std::cout << "backend: " << chosen.backend->name() << '\n';
        printTiming(trace.info);
        printDevices(trace);
        printMetrics(ss::computeMetrics(trace));
        if (args.check && !printChecks(trace, scenario.expect))
            code = kExitCheckFailed;
    }

    if (!args.output.empty()) {
        // Also after a failure: the partial trace shows how far the run got.
        if (ss::Status saved = ss::saveTextFileAtomic(args.output, ss::traceToJson(trace)); !saved) {
            const bool ranWell = code == kExitOk || code == kExitCheckFailed;
            return fail(saved.error(), ranWell ? exitCodeOf(saved.errorClass()) : code);
        }
        std::cerr << (outcome.status ? "trace written to " : "partial trace written to ") << args.output << '\n';
    }
    return code;
}

// ---- analyze, check, convert -----------------------------------------------------------------------------------

int cmdAnalyzeOne(const std::string& path, bool json)
{
    auto trace = ss::importTraceFile(path);
    if (!trace)
        return fail(trace.error(), exitCodeOf(trace.errorClass()));
    const ss::RunInfo& info = trace->info;
    if (json) {
        auto j = nlohmann::ordered_json::parse(ss::analysisToJson(*trace));
        j["source"] = std::string(ss::toString(info.source));
        j["backend"] = info.backend;
        j["scenario_id"] = info.scenarioId;
        j["variant"] = info.variant;
        if (const std::string effect = ss::lessonEffect(info); !effect.empty()) {
            // Whether the analysis names the effect the lesson teaches (one of the diagnostics above).
            j["effect"] = {{"rule", effect}, {"named", ss::findEffect(*trace, effect).has_value()}};
        }
        std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
        return kExitOk;
    }
    const ss::TraceMetrics m = ss::computeMetrics(*trace);
    std::cout << "trace: " << path << '\n';
    printScenarioLine(info);
    std::cout << "source: " << ss::toString(info.source);
    if (!info.backend.empty())
        std::cout << " (backend " << info.backend << ")";
    std::cout << '\n';
    if (!info.date.empty())
        std::cout << "recorded: " << info.date << (info.host.empty() ? "" : " on " + info.host) << '\n';
    if (!info.command.empty())
        std::cout << "command: " << info.command << '\n';
    printDevices(*trace);
    std::cout << "spans: " << trace->spanCount() << " (" << m.gpuSpanCount << " on the GPU, " << m.apiCallCount
              << " API calls), tracks: " << trace->tracks.size() << ", flows: " << trace->flows.size() << '\n';
    std::cout << '\n' << ss::analysisReport(*trace);
    if (const std::string effect = ss::lessonEffect(info); !effect.empty())
        std::cout << "\nlesson effect: " << effect
                  << (ss::findEffect(*trace, effect) ? " (named above)" : " (not found in this trace)") << '\n';
    return kExitOk;
}

// Two traces: their metrics side by side and the differences (B - A).
int cmdCompare(const std::string& pathA, const std::string& pathB, bool json)
{
    auto a = ss::importTraceFile(pathA);
    if (!a)
        return fail(a.error(), exitCodeOf(a.errorClass()));
    auto b = ss::importTraceFile(pathB);
    if (!b)
        return fail(b.error(), exitCodeOf(b.errorClass()));
    const ss::TraceComparison c = ss::compareTraces(*a, *b);
    if (json)
        std::cout << ss::comparisonToJson(c) << '\n';
    else
        std::cout << ss::comparisonReport(c, pathA, pathB);
    return kExitOk;
}

int cmdAnalyze(const std::vector<std::string>& paths, bool json)
{
    if (paths.size() == 2)
        return cmdCompare(paths[0], paths[1], json);
    return cmdAnalyzeOne(paths.at(0), json);
}

int cmdCheck(const std::string& path)
{
    auto trace = ss::importTraceFile(path);
    if (!trace)
        return fail(trace.error(), exitCodeOf(trace.errorClass()));
    const ss::RunInfo& info = trace->info;
    if (info.scenarioJson.empty())
        return fail(ss::Error{path, {}, "the trace carries no scenario, so it has no expectations to check"},
                    kExitBadInput);
    // The embedded scenario is the one that ran, its variant already applied.
    auto scenario = ss::parseScenario(info.scenarioJson, path + " (embedded scenario)");
    if (!scenario)
        return fail(scenario.error(), kExitBadInput);
    std::cout << "trace: " << path << '\n';
    printScenarioLine(info);
    return printChecks(*trace, scenario->scenario.expect) ? kExitOk : kExitCheckFailed;
}

int cmdConvert(const std::string& in, const std::string& out, const std::string& to)
{
    const auto format = ss::exportFormatFromString(to);
    if (!format)
        return fail("unknown output format '" + to + "' (streamscope, chrome or csv)", kExitBadInput);
    // The input format (StreamScope, Chrome/Perfetto JSON, PyTorch profiler, Nsight Systems SQLite, CSV) is
    // recognized from the content.
    auto trace = ss::importTraceFile(in);
    if (!trace)
        return fail(trace.error(), exitCodeOf(trace.errorClass()));
    if (ss::Status saved = ss::exportTrace(*trace, out, *format); !saved)
        return fail(saved.error(), exitCodeOf(saved.errorClass()));
    std::cerr << "wrote " << out << " (" << trace->spanCount() << " spans, " << trace->flows.size() << " flows)\n";
    return kExitOk;
}

// ---- sweep -----------------------------------------------------------------------------------------------------

struct SweepArgs {
    std::string scenario;
    std::string knob = "streams";
    std::vector<double> values;
    std::string backend = "sim";
    std::string profile;
    std::string variant;
    int thread = -1;
    bool json = false;
    std::string timing;
};

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
            std::cerr << "sweep " << (i + 1) << "/" << scenarios->size() << ": " << args.knob << " = "
                      << spec.values[i] << " on " << chosen.backend->name() << "\n";
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
        std::cout << padRight(args.knob, 12) << "  " << padRight("makespan", 12) << "  speedup  vs first  concurrency\n";
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

struct ReplayArgs {
    std::string trace;
    std::vector<std::string> sets;
    std::string output;
    std::string profile;
    bool json = false;
};

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
        if (ss::Status saved = ss::saveTextFileAtomic(args.output, ss::traceToJson(replay->changed)); !saved)
            return fail(saved.error(), exitCodeOf(saved.errorClass()));
        std::cerr << "replayed trace written to " << args.output << '\n';
    }
    return kExitOk;
}

int runMain(int argc, char** argv)
{
    CLI::App app{"StreamScope: see what CUDA streams do. Runs scenarios and lessons on a GPU or the simulator, "
                 "and analyzes, checks and converts traces.",
                 "streamscope-cli"};
    // The desktop app looks for "no CUDA backend" in this line to know whether GPU runs are possible at all.
    app.set_version_flag("--version", std::string("streamscope-cli ") + STREAMSCOPE_VERSION +
                                          (cudaBuiltIn() ? " (CUDA backend built)" : " (no CUDA backend)"));
    app.require_subcommand(1);
    app.failure_message([](const CLI::App*, const CLI::Error& e) {
        return "error: " + std::string(e.what()) + "\nRun with --help for more information.\n";
    });
    app.footer("Exit codes: 0 success, 1 a check failed, 2 bad input, 3 GPU or runtime error.");

    app.add_subcommand("presets", "List the lessons: id and title per line");
    app.add_subcommand("profiles", "List the shipped simulator device profiles");

    RunArgs run;
    CLI::App* runCmd = app.add_subcommand("run", "Run a scenario file or a lesson (by id, number or name)");
    runCmd->add_option("scenario", run.scenario, "Scenario JSON file, or a preset: \"01\", \"two-streams\"")
        ->required();
    runCmd->add_option("--backend", run.backend, "auto: the GPU when one is usable, else the simulator")
        ->check(CLI::IsMember({"auto", "cuda", "sim"}))
        ->capture_default_str();
    runCmd->add_option("-o,--output", run.output, "Write the trace (JSON) here");
    runCmd->add_flag("--check", run.check, "Evaluate the scenario's expectations; exit 1 if one fails");
    runCmd->add_option("--profile", run.profile, "Simulator device profile: a shipped id or a JSON file");
    runCmd->add_option("--variant", run.variant, "Run this variant of the scenario");
    runCmd->add_flag("--progress", run.progress, "Print \"progress: I/N iterations\" lines on stderr as the run goes");
    const auto timingCheck = CLI::IsMember({"auto", "cupti", "events", "both"});
    const char* timingHelp = "GPU timing: cupti (CUPTI activity records; the default where usable), events (CUDA "
                             "events around every op), both (CUPTI plus the events' error); default: the scenario's "
                             "run.timing, else auto";
    runCmd->add_option("--timing", run.timing, timingHelp)->check(timingCheck);
    runCmd->add_option("--cupti-capture", run.cuptiCapture,
                       "Write the CUPTI records of the last measured iteration to this file (test fixtures)")
        ->group("");
    runCmd->add_option("--inject-fault", run.injectFault,
                       "illegal-address:OP: every launch of kernel op OP writes to an unmapped address (GPU runs; "
                       "checks what a failed run leaves)")
        ->check([](const std::string& v) {
            return v.starts_with("illegal-address:") && v.size() > std::string_view("illegal-address:").size()
                       ? std::string()
                       : std::string("expected illegal-address:OP, OP the name of a kernel op");
        })
        ->group("");

    std::vector<std::string> analyzePaths;
    bool analyzeJson = false;
    CLI::App* analyzeCmd = app.add_subcommand(
        "analyze", "Metrics, critical path and diagnostics of a trace; with two traces, compare them (B - A)");
    analyzeCmd->add_option("trace", analyzePaths, "Trace JSON file (two: compare them)")->required()->expected(1, 2);
    analyzeCmd->add_flag("--json", analyzeJson, "Print one JSON object instead");

    SweepArgs sweep;
    CLI::App* sweepCmd = app.add_subcommand("sweep", "Vary one knob of a scenario and report makespan and speedup");
    sweepCmd->add_option("scenario", sweep.scenario, "Scenario JSON file or a preset")->required();
    sweepCmd->add_option("--knob", sweep.knob, "streams, chunks or kernel-size")
        ->check(CLI::IsMember({"streams", "chunks", "kernel-size"}))
        ->capture_default_str();
    sweepCmd->add_option("--values", sweep.values, "Values to try, e.g. 1,2,4,8 (default: the knob's range)")
        ->delimiter(',');
    sweepCmd->add_option("--backend", sweep.backend, "sim (instant) or cuda/auto (one GPU run per value)")
        ->check(CLI::IsMember({"auto", "cuda", "sim"}))
        ->capture_default_str();
    sweepCmd->add_option("--profile", sweep.profile, "Simulator device profile");
    sweepCmd->add_option("--variant", sweep.variant, "Sweep this variant of the scenario");
    sweepCmd->add_option("--thread", sweep.thread, "chunks, kernel-size: only this scenario thread (index)");
    sweepCmd->add_flag("--json", sweep.json, "Print one JSON object");
    sweepCmd->add_option("--timing", sweep.timing, timingHelp)->check(timingCheck);

    ReplayArgs replay;
    CLI::App* replayCmd = app.add_subcommand(
        "replay", "Simulate a GPU recording with the durations it measured, with one setting changed, beside the "
                  "recording (the replay's error on the unchanged run first)");
    replayCmd->add_option("trace", replay.trace, "A trace StreamScope recorded on a GPU (its scenario is embedded)")
        ->required();
    std::string setHelp = "Change a setting (repeatable):";
    for (const auto& k : ss::replayKeys())
        setHelp += " " + k.key + "=" + k.values + ";";
    setHelp.pop_back();
    replayCmd->add_option("--set", replay.sets, setHelp)->expected(1)->take_all();
    replayCmd->add_option("-o,--output", replay.output, "Write the replayed (changed) trace here");
    replayCmd->add_option("--profile", replay.profile, "Simulator device profile for what is modelled");
    replayCmd->add_flag("--json", replay.json, "Print one JSON object");

    CalibrateArgs calibrate;
    CLI::App* calibrateCmd = app.add_subcommand(
        "calibrate", "Measure a simulator device profile on this machine's GPU (progress on stderr)");
    calibrateCmd->add_option("--device", calibrate.device, "CUDA device index")->capture_default_str()->check(
        CLI::NonNegativeNumber);
    calibrateCmd->add_option("-o,--output", calibrate.output, "Write the profile (JSON) here; default: stdout");
    calibrateCmd->add_option("--repeats", calibrate.repeats, "Repeats per figure (the median is kept)")
        ->capture_default_str()
        ->check(CLI::Range(1, 100));
    calibrateCmd->add_flag("--quick", calibrate.quick, "Fewer calls per repeat and smaller problems (rougher figures)");

    std::string checkPath;
    CLI::App* checkCmd = app.add_subcommand("check", "Evaluate the expectations of the scenario in a trace");
    checkCmd->add_option("trace", checkPath, "Trace JSON file")->required();

    std::string convertIn;
    std::string convertOut;
    std::string convertTo = "streamscope";
    CLI::App* convertCmd = app.add_subcommand(
        "convert", "Convert a trace (StreamScope, Chrome/Perfetto, PyTorch, Nsight Systems SQLite, CSV) to another format");
    convertCmd->add_option("input", convertIn, "Input trace")->required();
    convertCmd->add_option("-o,--output", convertOut, "Output file")->required();
    convertCmd->add_option("--to", convertTo, "Output format")
        ->check(CLI::IsMember({"streamscope", "chrome", "perfetto", "csv"}))
        ->capture_default_str();

    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        app.exit(e);
        return kExitBadInput;
    }

    if (app.got_subcommand("presets"))
        return cmdPresets();
    if (app.got_subcommand("profiles"))
        return cmdProfiles();
    if (*runCmd)
        return cmdRun(run, commandLine(argc, argv));
    if (*analyzeCmd)
        return cmdAnalyze(analyzePaths, analyzeJson);
    if (*checkCmd)
        return cmdCheck(checkPath);
    if (*calibrateCmd)
        return cmdCalibrate(calibrate, commandLine(argc, argv));
    if (*sweepCmd)
        return cmdSweep(sweep);
    if (*replayCmd)
        return cmdReplay(replay, commandLine(argc, argv));
    if (*convertCmd)
        return cmdConvert(convertIn, convertOut, convertTo);
    return kExitBadInput;
}

} // namespace

int main(int argc, char** argv)
{
    try {
        return runMain(argc, argv);
    } catch (const std::bad_alloc&) {
        std::cerr << "error: out of memory\n";
        return kExitRuntime;
    } catch (const std::exception& e) {
        std::cerr << "error: " << e.what() << '\n';
        return kExitRuntime;
    }
}
