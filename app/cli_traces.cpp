// streamscope-cli analyze, check and convert: what a trace file shows (or two compared), its lesson's expectations
// checked, and the trace written in another format.
#include "cli.h"

#include "analysis.h"
#include "device_profile.h"
#include "diagnostics.h"
#include "expect.h"
#include "metrics.h"
#include "resources.h"
#include "runner.h"
#include "scenario_json.h"
#include "trace_import.h"
#include "trace_json.h"

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

// ---- analyze, check, convert -----------------------------------------------------------------------------------

namespace {

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

} // namespace

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

} // namespace cli
