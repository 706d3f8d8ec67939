// Two traces compared: compareTraces (their metrics side by side, per stream matched by name) and its JSON and text
// (`streamscope-cli analyze A B`, the app's Compare window).
#include "analysis.h"
#include "analysis_text.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

namespace streamscope {

using namespace analysis_detail;

TraceComparison compareTraces(const Trace& a, const Trace& b, const AnalysisOptions& options)
{
    TraceComparison c;
    c.a = analyzeTrace(a, options);
    c.b = analyzeTrace(b, options);
    c.makespanDeltaNs = c.b.makespanNs - c.a.makespanNs;
    c.makespanRatio = ratio(double(c.b.makespanNs), double(c.a.makespanNs));
    c.speedupOfB = ratio(double(c.a.makespanNs), double(c.b.makespanNs));
    c.speedupDelta = c.b.speedup - c.a.speedup;
    c.maxConcurrencyDelta = c.b.concurrency.maxConcurrency - c.a.concurrency.maxConcurrency;
    c.averageConcurrencyDelta = c.b.concurrency.averageConcurrency - c.a.concurrency.averageConcurrency;
    c.copyComputeOverlapDeltaNs = c.b.copyComputeOverlapNs - c.a.copyComputeOverlapNs;
    c.copyComputeOverlapDelta = c.b.copyComputeOverlap - c.a.copyComputeOverlap;
    c.idleDeltaNs = c.b.idleNs - c.a.idleNs;

    // Streams matched by (device, name), in A's order then B's new ones.
    std::map<std::pair<int, std::string>, size_t> index;
    for (const auto& s : c.a.streams) {
        const auto key = std::make_pair(s.device, s.name);
        if (index.count(key))
            continue;
        index[key] = c.streams.size();
        StreamComparison sc;
        sc.name = s.name;
        sc.device = s.device;
        sc.inA = true;
        sc.busyA = s.busyNs;
        c.streams.push_back(std::move(sc));
    }
    for (const auto& s : c.b.streams) {
        const auto key = std::make_pair(s.device, s.name);
        auto it = index.find(key);
        if (it == index.end()) {
            index[key] = c.streams.size();
            StreamComparison sc;
            sc.name = s.name;
            sc.device = s.device;
            c.streams.push_back(std::move(sc));
            it = index.find(key);
        }
        auto& sc = c.streams[it->second];
        if (sc.inB)
            continue;
        sc.inB = true;
        sc.busyB = s.busyNs;
    }
    for (auto& sc : c.streams)
        sc.busyDeltaNs = sc.busyB - sc.busyA;

    // Overlap of stream pairs present in both.
    std::set<std::string> names;
    std::set<std::string> repeated;
    for (const auto& sc : c.streams)
        if (!names.insert(sc.name).second)
            repeated.insert(sc.name);
    auto label = [&repeated](const StreamAnalysis& s) {
        return repeated.count(s.name) ? s.name + "@" + std::to_string(s.device) : s.name;
    };
    auto find = [](const TraceAnalysis& t, int device, const std::string& name) -> int {
        for (size_t i = 0; i < t.streams.size(); ++i)
            if (t.streams[i].device == device && t.streams[i].name == name)
                return int(i);
        return -1;
    };
    if (!c.a.overlapNs.empty() && !c.b.overlapNs.empty())
        for (size_t i = 0; i < c.a.streams.size(); ++i)
            for (size_t j = i + 1; j < c.a.streams.size(); ++j) {
                const int bi = find(c.b, c.a.streams[i].device, c.a.streams[i].name);
                const int bj = find(c.b, c.a.streams[j].device, c.a.streams[j].name);
                if (bi < 0 || bj < 0 || bi == bj)
                    continue;
                if (c.a.streams[i].spanCount == 0 && c.b.streams[size_t(bi)].spanCount == 0)
                    continue;
                if (c.a.streams[j].spanCount == 0 && c.b.streams[size_t(bj)].spanCount == 0)
                    continue;
                OverlapComparison oc;
                oc.streamA = label(c.a.streams[i]);
                oc.streamB = label(c.a.streams[j]);
                oc.fractionA = c.a.overlapFraction[i][j];
                oc.nsA = c.a.overlapNs[i][j];
                oc.fractionB = c.b.overlapFraction[size_t(bi)][size_t(bj)];
                oc.nsB = c.b.overlapNs[size_t(bi)][size_t(bj)];
                c.overlaps.push_back(std::move(oc));
            }
    return c;
}

std::string comparisonToJson(const TraceComparison& c, const ReportOptions& o)
{
    auto side = [&o](const TraceAnalysis& t) {
        OrderedJson j;
        j["makespan_ns"] = t.makespanNs;
        j["gpu_work_ns"] = t.gpuWorkNs;
        j["speedup"] = finite(t.speedup);
        j["busy_ns"] = t.busyNs;
        j["idle_ns"] = t.idleNs;
        j["max_concurrency"] = t.concurrency.maxConcurrency;
        j["average_concurrency"] = finite(t.concurrency.averageConcurrency);
        j["concurrency_time_at_ns"] = t.concurrency.timeAtNs;
        j["copy_compute_overlap_ns"] = t.copyComputeOverlapNs;
        j["copy_compute_overlap"] = finite(t.copyComputeOverlap);
        j["launches_per_second"] = finite(t.launchesPerSecond);
        (void)o;
        return j;
    };
    OrderedJson j;
    j["a"] = side(c.a);
    j["b"] = side(c.b);
    OrderedJson d;
    d["makespan_ns"] = c.makespanDeltaNs;
    d["makespan_ratio"] = finite(c.makespanRatio);
    d["speedup_of_b"] = finite(c.speedupOfB);
    d["speedup"] = finite(c.speedupDelta);
    d["max_concurrency"] = c.maxConcurrencyDelta;
    d["average_concurrency"] = finite(c.averageConcurrencyDelta);
    d["copy_compute_overlap_ns"] = c.copyComputeOverlapDeltaNs;
    d["copy_compute_overlap"] = finite(c.copyComputeOverlapDelta);
    d["idle_ns"] = c.idleDeltaNs;
    j["difference"] = std::move(d);
    auto streams = OrderedJson::array();
    for (const auto& s : c.streams) {
        OrderedJson js;
        js["name"] = s.name;
        js["device"] = s.device;
        js["in_a"] = s.inA;
        js["in_b"] = s.inB;
        js["busy_a_ns"] = s.busyA;
        js["busy_b_ns"] = s.busyB;
        js["busy_difference_ns"] = s.busyDeltaNs;
        streams.push_back(std::move(js));
    }
    j["streams"] = std::move(streams);
    auto overlaps = OrderedJson::array();
    for (const auto& ov : c.overlaps) {
        OrderedJson jo;
        jo["streams"] = {ov.streamA, ov.streamB};
        jo["fraction_a"] = finite(ov.fractionA);
        jo["fraction_b"] = finite(ov.fractionB);
        jo["ns_a"] = ov.nsA;
        jo["ns_b"] = ov.nsB;
        overlaps.push_back(std::move(jo));
    }
    j["overlap"] = std::move(overlaps);
    return dumpJson(j, o.indent);
}

std::string comparisonReport(const TraceComparison& c, const std::string& nameA, const std::string& nameB)
{
    std::string r;
    auto line = [&r](const std::string& s) { r += s + '\n'; };
    auto signedDuration = [](int64_t ns) { return (ns > 0 ? "+" : "") + formatDuration(ns); };
    auto signedNum = [](double v, const char* fmt) { return (v > 0 ? "+" : "") + num(v, fmt); };
    line("                      " + nameA + " -> " + nameB);
    line("makespan:             " + formatDuration(c.a.makespanNs) + " -> " + formatDuration(c.b.makespanNs) + " ("
         + signedDuration(c.makespanDeltaNs) + ", " + nameB + " " + num(c.speedupOfB, "%.2fx")
         + (c.speedupOfB >= 1 ? " faster)" : " as fast)"));
    line("speedup over serial:  " + num(c.a.speedup, "%.2fx") + " -> " + num(c.b.speedup, "%.2fx") + " ("
         + signedNum(c.speedupDelta, "%.2f") + ")");
    line("max concurrency:      " + std::to_string(c.a.concurrency.maxConcurrency) + " -> "
         + std::to_string(c.b.concurrency.maxConcurrency));
    line("average concurrency:  " + num(c.a.concurrency.averageConcurrency) + " -> "
         + num(c.b.concurrency.averageConcurrency));
    line("GPU idle:             " + formatDuration(c.a.idleNs) + " -> " + formatDuration(c.b.idleNs) + " ("
         + signedDuration(c.idleDeltaNs) + ")");
    line("copy/compute overlap: " + pct(c.a.copyComputeOverlap) + " -> " + pct(c.b.copyComputeOverlap));
    if (!c.streams.empty()) {
        line("busy per stream:");
        for (const auto& s : c.streams)
            line("  " + s.name + " (device " + std::to_string(s.device)
                 + "): " + (s.inA ? formatDuration(s.busyA) : std::string("-")) + " -> "
                 + (s.inB ? formatDuration(s.busyB) : std::string("-")) + " (" + signedDuration(s.busyDeltaNs) + ")");
    }
    size_t listed = 0;
    for (const auto& ov : c.overlaps) {
        if (ov.nsA == 0 && ov.nsB == 0)
            continue;
        if (listed++ == 0)
            line("overlap between streams:");
        if (listed > 24) {
            line("  ...");
            break;
        }
        line("  " + ov.streamA + " / " + ov.streamB + ": " + pct(ov.fractionA) + " -> " + pct(ov.fractionB));
    }
    return r;
}

} // namespace streamscope
