// streamscope-cli analyze, check and convert: what a trace file shows (or two compared), its lesson's expectations
// checked, and the trace written in another format.
#include "cli.h"

#include "analysis.h"
#include "device_profile.h"
#include "diagnostics.h"
#include "expect.h"
#include "foreign_ranks.h"
#include "metrics.h"
#include "rank_merge.h"
#include "rank_parts.h"
#include "ranks.h"
#include "resources.h"
#include "runner.h"
#include "scenario_json.h"
#include "trace_formats.h"
#include "trace_import.h"
#include "trace_json.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
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

// Two ranks of one job: rank A's part of it against rank B's.
int cmdCompareRanks(const std::string& path, const std::string& ranks, bool json)
{
    int a = -1, b = -1;
    const auto comma = ranks.find(',');
    const auto number = [](std::string_view text, int& out) {
        const auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
        return ec == std::errc() && p == text.data() + text.size() && out >= 0;
    };
    if (comma == std::string::npos || !number(std::string_view(ranks).substr(0, comma), a)
        || !number(std::string_view(ranks).substr(comma + 1), b))
        return fail(ss::Error{{}, {}, "--ranks must be two ranks of the job, A,B (as 0,3), got '" + ranks + "'"},
                    kExitBadInput);
    auto trace = ss::importTraceFile(path);
    if (!trace)
        return fail(trace.error(), exitCodeOf(trace.errorClass()));
    const std::vector<int> held = ss::ranksOfTrace(*trace);
    if (held.empty())
        return fail(ss::Error{path,
                              {},
                              "not a job of several ranks (no rows 'rank R · ...'): --ranks compares two "
                              "ranks of a merged job"},
                    kExitBadInput);
    for (int r : {a, b})
        if (std::find(held.begin(), held.end(), r) == held.end()) {
            std::string list;
            for (int h : held)
                list += (list.empty() ? "" : ", ") + std::to_string(h);
            return fail(ss::Error{path, {}, "the job has no rank " + std::to_string(r) + " (its ranks: " + list + ")"},
                        kExitBadInput);
        }
    const ss::TraceComparison c = ss::compareTraces(ss::rankPartOfTrace(*trace, a), ss::rankPartOfTrace(*trace, b));
    if (json)
        std::cout << ss::comparisonToJson(c) << '\n';
    else
        std::cout << ss::comparisonReport(c, path + " rank " + std::to_string(a), path + " rank " + std::to_string(b));
    return kExitOk;
}

} // namespace

int cmdAnalyze(const std::vector<std::string>& paths, bool json, const std::string& ranks)
{
    if (!ranks.empty()) {
        if (paths.size() != 1)
            return fail(ss::Error{{}, {}, "--ranks compares two ranks of one job: give one trace"}, kExitBadInput);
        return cmdCompareRanks(paths[0], ranks, json);
    }
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
    // No format named: the native format by the output's name (binary for *.sstrace, else JSON).
    const auto format = to.empty() ? std::optional(ss::nativeFormatForPath(out)) : ss::exportFormatFromString(to);
    if (!format)
        return fail("unknown output format '" + to + "' (streamscope, streamscope-binary, chrome or csv)",
                    kExitBadInput);
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

int cmdMerge(const MergeArgs& args)
{
    namespace fs = std::filesystem;
    std::vector<std::string> files;
    for (const std::string& in : args.inputs) {
        std::error_code ec;
        if (!fs::is_directory(in, ec)) {
            files.push_back(in);
            continue;
        }
        // A folder: its traces, in name order (native or PyTorch JSON, compressed or not; Nsight Systems SQLite).
        std::vector<std::string> found;
        for (const auto& e : fs::directory_iterator(in, ec)) {
            const std::string name = e.path().filename().string();
            const bool trace = name.ends_with(".json") || name.ends_with(".json.gz") || name.ends_with(".sqlite");
            if (trace && e.is_regular_file(ec))
                found.push_back(e.path().string());
        }
        if (ec)
            return fail(in + ": " + ec.message(), kExitBadInput);
        if (found.empty())
            return fail(in + ": no trace files (*.json, *.json.gz, *.sqlite) in this folder", kExitBadInput);
        std::sort(found.begin(), found.end());
        files.insert(files.end(), found.begin(), found.end());
    }
    if (files.size() > size_t(ss::kMaxRanks))
        return fail(std::to_string(files.size()) + " traces: at most " + std::to_string(ss::kMaxRanks)
                        + " ranks are merged",
                    kExitBadInput);
    std::vector<ss::RankTrace> ranks;
    for (const std::string& f : files) {
        auto t = ss::importTraceFile(f);
        if (!t)
            return fail(t.error(), exitCodeOf(t.errorClass()));
        ranks.push_back({f, std::move(*t)});
    }
    ss::MergeOptions options;
    options.alignWallClock = args.align == "wall-clock";
    options.ranksByOrder = args.ranksByOrder;
    auto merged = ss::mergeJobTraces(std::move(ranks), options);
    if (!merged)
        return fail(merged.error(), kExitBadInput);
    std::cout << "merged " << files.size() << " rank trace" << (files.size() == 1 ? "" : "s");
    if (!merged->trace.info.scenarioId.empty())
        std::cout << " of " << merged->trace.info.scenarioId;
    std::cout << ": " << merged->trace.spanCount() << " spans, " << merged->trace.tracks.size() << " rows, "
              << merged->trace.info.devices.size() << " devices\n";
    std::cout << "clock alignment: " << merged->alignment << '\n';
    if (const std::string* linked = ss::findSetting(merged->trace.info, "collectives"))
        std::cout << "collectives: " << *linked << '\n';
    for (const std::string& note : merged->notes)
        std::cout << "note: " << note << '\n';
    if (ss::Status saved = ss::saveNativeTrace(merged->trace, args.output); !saved)
        return fail(saved.error(), exitCodeOf(saved.errorClass()));
    std::cerr << "trace written to " << args.output << '\n';
    return kExitOk;
}

} // namespace cli
