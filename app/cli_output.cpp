// What streamscope-cli's commands share: exit codes and errors, durations and numbers as its tables write them, the
// summaries `run`, `analyze` and `check` print, and scenario arguments (a file or a lesson).
#include "cli.h"

#include "analysis.h"
#include "device_profile.h"
#include "diagnostics.h"
#include "duration_format.h"
#include "expect.h"
#include "metrics.h"
#include "resources.h"
#include "runner.h"
#include "scenario_json.h"
#include "trace_import.h"
#include "trace_json.h"

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
        const bool plain = !a.empty()
            && a.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                   "0123456789-_./=:,+@%")
                == std::string_view::npos;
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
                                                   std::string* file)
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

} // namespace cli
