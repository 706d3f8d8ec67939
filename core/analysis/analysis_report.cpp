// The analysis written out: analysisToJson (the JSON of docs/ANALYSIS.md: metrics, critical path, diagnostics) and
// analysisReport (the readable summary `streamscope-cli analyze` prints).
#include "analysis.h"
#include "analysis_text.h"
#include "collectives.h"

#include "diagnostics.h"
#include "event_timing.h"
#include "span_names.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

namespace streamscope {

using namespace analysis_detail;

namespace {

std::string streamLabel(const Trace& trace, uint32_t track)
{
    if (track >= trace.tracks.size())
        return "?";
    return trace.tracks[track].name;
}

// The longest `limit` gaps, in time order.
std::vector<Interval> longestGaps(const std::vector<Interval>& gaps, size_t limit)
{
    if (gaps.size() <= limit)
        return gaps;
    std::vector<Interval> v = gaps;
    std::nth_element(v.begin(), v.begin() + std::ptrdiff_t(limit), v.end(),
                     [](const Interval& x, const Interval& y) { return x.end - x.start > y.end - y.start; });
    v.resize(limit);
    std::sort(v.begin(), v.end(), [](const Interval& x, const Interval& y) { return x.start < y.start; });
    return v;
}

OrderedJson gapsJson(const std::vector<Interval>& gaps, int64_t total, size_t limit)
{
    OrderedJson j;
    j["count"] = gaps.size();
    j["total_ns"] = total;
    auto list = OrderedJson::array();
    for (const auto& g : longestGaps(gaps, limit))
        list.push_back({{"start_ns", g.start}, {"end_ns", g.end}});
    j["longest"] = std::move(list);
    return j;
}

OrderedJson concurrencyJson(const ConcurrencyProfile& p, bool steps)
{
    OrderedJson j;
    j["max"] = p.maxConcurrency;
    j["average"] = finite(p.averageConcurrency);
    j["time_at_ns"] = p.timeAtNs;
    if (steps) {
        auto list = OrderedJson::array();
        for (const auto& st : p.steps)
            list.push_back({st.time, st.count});
        j["steps"] = std::move(list); // [time_ns, count]
    }
    return j;
}

OrderedJson metricsJson(const Trace& trace, const TraceAnalysis& a, const ReportOptions& o)
{
    const TraceMetrics& m = a.metrics;
    OrderedJson j;
    j["makespan_ns"] = m.makespanNs;
    j["gpu_work_ns"] = m.gpuWorkNs;
    j["speedup"] = finite(m.speedup);
    j["max_concurrency"] = m.maxConcurrency;
    j["copy_compute_overlap_ns"] = a.copyComputeOverlapNs;
    j["host_makespan_ns"] = m.hostMakespanNs;
    j["gpu_span_count"] = m.gpuSpanCount;
    j["api_call_count"] = m.apiCallCount;
    j["first_start_ns"] = a.firstStart;
    j["last_end_ns"] = a.lastEnd;
    j["busy_ns"] = a.busyNs;
    j["idle_ns"] = a.idleNs;
    j["copy_compute_overlap"] = finite(a.copyComputeOverlap);
    j["average_concurrency"] = finite(a.concurrency.averageConcurrency);
    j["launches_per_second"] = finite(a.launchesPerSecond);
    j["gaps"] = gapsJson(a.gaps, a.idleNs, o.maxGapsPerItem);
    j["concurrency"] = concurrencyJson(a.concurrency, o.concurrencySteps);

    auto devices = OrderedJson::array();
    for (const auto& d : a.devices) {
        OrderedJson jd;
        jd["device"] = d.device;
        jd["name"] = d.name;
        jd["stream_count"] = d.streamCount;
        jd["span_count"] = d.spanCount;
        jd["first_start_ns"] = d.firstStart;
        jd["last_end_ns"] = d.lastEnd;
        jd["makespan_ns"] = d.makespanNs;
        jd["busy_ns"] = d.busyNs;
        jd["idle_ns"] = d.idleNs;
        jd["gpu_work_ns"] = d.gpuWorkNs;
        jd["speedup"] = finite(d.speedup);
        jd["copy_ns"] = d.copyNs;
        jd["kernel_ns"] = d.kernelNs;
        jd["copy_compute_overlap_ns"] = d.copyComputeOverlapNs;
        jd["copy_compute_overlap"] = finite(d.copyComputeOverlap);
        jd["gaps"] = gapsJson(d.gaps, d.idleNs, o.maxGapsPerItem);
        jd["concurrency"] = concurrencyJson(d.concurrency, o.concurrencySteps);
        devices.push_back(std::move(jd));
    }
    j["devices"] = std::move(devices);

    auto streams = OrderedJson::array();
    for (const auto& st : a.streams) {
        OrderedJson js;
        js["name"] = st.name;
        js["device"] = st.device;
        js["busy_ns"] = st.busyNs;
        js["span_count"] = st.spanCount;
        js["track"] = st.track;
        js["kind"] = std::string(toString(st.kind));
        js["priority"] = st.priority;
        js["first_start_ns"] = st.firstStart;
        js["last_end_ns"] = st.lastEnd;
        js["gpu_work_ns"] = st.gpuWorkNs;
        js["idle_ns"] = st.idleNs;
        js["utilization"] = finite(st.utilization);
        js["gaps"] = gapsJson(st.gaps, st.idleNs, o.maxGapsPerItem);
        streams.push_back(std::move(js));
    }
    j["streams"] = std::move(streams);

    if (!a.overlapNs.empty()) {
        OrderedJson ov;
        auto names = OrderedJson::array();
        for (const auto& st : a.streams)
            names.push_back(st.name);
        ov["streams"] = std::move(names);
        ov["ns"] = a.overlapNs;
        auto frac = OrderedJson::array();
        for (const auto& row : a.overlapFraction) {
            auto r = OrderedJson::array();
            for (double v : row)
                r.push_back(finite(v));
            frac.push_back(std::move(r));
        }
        ov["fraction"] = std::move(frac);
        j["overlap"] = std::move(ov);
    }

    auto hosts = OrderedJson::array();
    for (const auto& h : a.hostThreads) {
        OrderedJson jh;
        jh["name"] = h.name;
        jh["track"] = h.track;
        jh["device"] = h.device;
        jh["active_ns"] = h.activeNs;
        jh["api_calls"] = h.apiCalls;
        jh["launch_calls"] = h.launchCalls;
        jh["sync_calls"] = h.syncCalls;
        jh["api_ns"] = h.apiNs;
        jh["launch_ns"] = h.launchNs;
        jh["sync_ns"] = h.syncNs;
        jh["host_work_ns"] = h.hostWorkNs;
        jh["launches_per_second"] = finite(h.launchesPerSecond);
        jh["mean_launch_ns"] = finite(h.meanLaunchNs);
        hosts.push_back(std::move(jh));
    }
    j["host_threads"] = std::move(hosts);
    (void)trace;
    return j;
}

} // namespace

std::string analysisToJson(const Trace& input, const TraceAnalysis& a, const CriticalPath& path,
                           const std::vector<Diagnostic>& diagnostics, const ReportOptions& o)
{
    Trace storage;
    const Trace& trace = finalizedView(input, storage);
    OrderedJson j;
    j["metrics"] = metricsJson(trace, a, o);
    if (const TimingSummary ts = summarizeTiming(trace); !ts.timing.empty()) {
        OrderedJson tj;
        tj["timing"] = ts.timing;
        if (!ts.reason.empty())
            tj["reason"] = ts.reason;
        if (ts.perturbation > 0) {
            tj["timed_makespan_ns"] = ts.timedMakespanNs;
            tj["untimed_makespan_ns"] = ts.untimedMakespanNs;
            tj["perturbation"] = ts.perturbation;
        }
        if (ts.eventError) {
            const auto& e = *ts.eventError;
            tj["event_error"] = {{"spans", e.spans},
                                 {"start_median_ns", e.startMedianNs},
                                 {"start_p90_ns", e.startP90Ns},
                                 {"start_mean_ns", e.startMeanNs},
                                 {"end_median_ns", e.endMedianNs},
                                 {"end_p90_ns", e.endP90Ns}};
        }
        if (ts.timing == "events") {
            tj["corrected_starts"] = ts.corrected;
            tj["uncertain_starts"] = ts.uncertain;
        }
        if (!ts.clockCheck.empty())
            tj["clock_check"] = ts.clockCheck;
        j["timing"] = std::move(tj);
    }

    auto cp = OrderedJson::array();
    const size_t count = path.segments.size();
    const size_t from =
        o.maxCriticalPathSegments > 0 && count > o.maxCriticalPathSegments ? count - o.maxCriticalPathSegments : 0;
    for (size_t k = from; k < count; ++k) {
        const auto& seg = path.segments[k];
        OrderedJson js;
        js["span"] = seg.span;
        js["name"] = seg.name;
        js["kind"] = std::string(toString(seg.kind));
        js["track"] = seg.track;
        js["track_name"] = streamLabel(trace, seg.track);
        js["start_ns"] = seg.start;
        js["end_ns"] = seg.end;
        js["contribution_ns"] = seg.contributionNs;
        js["idle_before_ns"] = seg.idleBeforeNs;
        js["reason"] = seg.waitPart != kNoSpan ? std::string("collective wait") : std::string(toString(seg.reason));
        if (seg.waitPart != kNoSpan)
            js["wait"] = {{"cause", "collective"},
                          {"rank", seg.waitRank},
                          {"part", seg.waitPart},
                          {"ns", seg.waitNs},
                          {"text", describeRelease(trace, path, k)}};
        else if (seg.reason == PathReason::Resource)
            js["wait"] = {{"cause", std::string(toString(seg.wait))},
                          {"ns", seg.waitNs},
                          {"inferred", seg.waitInferred},
                          {"text", describeRelease(trace, path, k)}};
        cp.push_back(std::move(js));
    }
    j["critical_path"] = std::move(cp);
    OrderedJson summary;
    summary["segments"] = count;
    summary["listed"] = count - from;
    summary["start_ns"] = path.startNs;
    summary["end_ns"] = path.endNs;
    summary["length_ns"] = path.lengthNs;
    summary["busy_ns"] = path.busyNs;
    summary["idle_ns"] = path.idleNs;
    summary["resource_wait_ns"] = path.resourceWaitNs;
    summary["collective_wait_ns"] = path.collectiveWaitNs;
    OrderedJson idle = OrderedJson::object();
    for (int c = 0; c < kIdleCauseCount; ++c)
        if (path.idleByCause[size_t(c)] > 0)
            idle[std::string(idleCauseKey(IdleCause(c)))] = path.idleByCause[size_t(c)];
    summary["idle_by_cause_ns"] = std::move(idle);
    summary["gpu_ns"] = path.gpuNs;
    summary["host_ns"] = path.hostNs;
    j["critical_path_summary"] = std::move(summary);

    // A job of several ranks: each collective call linked across its ranks (only where there are some).
    if (const auto calls = collectiveCalls(trace); !calls.empty()) {
        auto list = OrderedJson::array();
        for (const auto& c : calls) {
            OrderedJson jc;
            jc["name"] = c.name;
            jc["spans"] = c.spans;
            jc["arrival_ns"] = c.arrival;
            jc["start_ns"] = c.start;
            jc["end_ns"] = c.end;
            jc["last_rank"] = rankOfTrack(trace, trace.spans.track[c.last]);
            jc["last_span"] = c.last;
            jc["longest_wait_ns"] = c.waitedNs;
            jc["total_wait_ns"] = c.totalWaitNs;
            list.push_back(std::move(jc));
        }
        j["collectives"] = std::move(list);
    }

    auto diags = OrderedJson::array();
    for (const auto& d : diagnostics) {
        OrderedJson jd;
        jd["rule"] = d.rule;
        jd["severity"] = d.severity;
        jd["message"] = d.message;
        jd["spans"] = d.spans;
        diags.push_back(std::move(jd));
    }
    j["diagnostics"] = std::move(diags);
    return dumpJson(j, o.indent);
}

std::string analysisToJson(const Trace& input, const ReportOptions& o)
{
    Trace storage;
    const Trace& trace = finalizedView(input, storage);
    AnalysisOptions ao;
    ao.concurrencySteps = o.concurrencySteps;
    return analysisToJson(trace, analyzeTrace(trace, ao), criticalPath(trace), diagnose(trace), o);
}

std::string analysisReport(const Trace& input, const TraceAnalysis& a, const CriticalPath& path,
                           const std::vector<Diagnostic>& diagnostics, const ReportOptions& o)
{
    Trace storage;
    const Trace& trace = finalizedView(input, storage);
    std::string r;
    auto line = [&r](const std::string& s) { r += s + '\n'; };
    line("makespan:             " + formatDuration(a.makespanNs));
    r += timingReport(summarizeTiming(trace));
    line("GPU work:             " + formatDuration(a.gpuWorkNs) + " (all GPU operations back to back)");
    line("speedup over serial:  " + num(a.speedup, "%.2fx"));
    line("GPU busy / idle:      " + formatDuration(a.busyNs) + " / " + formatDuration(a.idleNs) + " in "
         + std::to_string(a.gaps.size()) + (a.gaps.size() == 1 ? " gap" : " gaps"));
    line("concurrency:          max " + std::to_string(a.concurrency.maxConcurrency) + ", average "
         + num(a.concurrency.averageConcurrency));
    {
        std::string at = "  time at k running:  ";
        for (size_t k = 0; k < a.concurrency.timeAtNs.size(); ++k)
            at += (k ? ", " : "") + std::to_string(k) + ": "
                + pct(ratio(double(a.concurrency.timeAtNs[k]), double(a.makespanNs)));
        line(at);
    }
    line("copy/compute overlap: " + formatDuration(a.copyComputeOverlapNs) + " (" + pct(a.copyComputeOverlap)
         + " of copy time)");
    if (a.devices.size() > 1)
        for (const auto& d : a.devices)
            line("device " + std::to_string(d.device) + ": makespan " + formatDuration(d.makespanNs) + ", busy "
                 + formatDuration(d.busyNs) + ", speedup " + num(d.speedup, "%.2fx") + ", max concurrency "
                 + std::to_string(d.concurrency.maxConcurrency));
    if (!a.streams.empty()) {
        size_t width = 6;
        for (const auto& s : a.streams)
            width = std::max(width, s.name.size());
        line("streams:");
        for (const auto& s : a.streams) {
            std::string name = s.name;
            name.resize(width, ' ');
            line("  " + name + "  device " + std::to_string(s.device) + "  busy " + formatDuration(s.busyNs) + " ("
                 + pct(s.utilization) + ")  idle " + formatDuration(s.idleNs) + " in " + std::to_string(s.gaps.size())
                 + " gaps  " + std::to_string(s.spanCount) + (s.spanCount == 1 ? " span" : " spans"));
        }
    }
    if (!a.overlapFraction.empty() && a.streams.size() > 1 && a.streams.size() <= 16) {
        bool header = false;
        for (size_t i = 0; i < a.streams.size(); ++i)
            for (size_t j = i + 1; j < a.streams.size(); ++j) {
                if (a.overlapNs[i][j] <= 0)
                    continue;
                if (!header)
                    line("overlap between streams (fraction of the less busy one):");
                header = true;
                line("  " + a.streams[i].name + " / " + a.streams[j].name + ": " + pct(a.overlapFraction[i][j]) + " ("
                     + formatDuration(a.overlapNs[i][j]) + ")");
            }
    }
    for (const auto& h : a.hostThreads)
        line("host thread " + h.name + ": " + std::to_string(h.launchCalls) + " launches in "
             + formatDuration(h.activeNs) + " (" + num(h.launchesPerSecond, "%.0f") + "/s, mean call "
             + formatDuration(int64_t(h.meanLaunchNs)) + "), blocked in syncs " + formatDuration(h.syncNs));

    // A job of several ranks: each collective call linked across its ranks, with who reached it last.
    if (const auto calls = collectiveCalls(trace); !calls.empty()) {
        line("collectives: " + std::to_string(calls.size()) + " calls linked across ranks");
        const size_t shownCalls = std::min<size_t>(calls.size(), 20);
        for (size_t k = 0; k < shownCalls; ++k) {
            const auto& c = calls[k];
            const int last = rankOfTrack(trace, trace.spans.track[c.last]);
            line("  " + shortSpanName(c.name) + ": " + std::to_string(c.spans.size()) + " ranks, started at "
                 + formatDuration(c.start - trace.timeRange().first) + ", took " + formatDuration(c.end - c.start)
                 + "; last to arrive: " + (last >= 0 ? "rank " + std::to_string(last) : std::string("?"))
                 + ", the others waited up to " + formatDuration(c.waitedNs) + " (" + formatDuration(c.totalWaitNs)
                 + " in all)");
        }
        if (shownCalls < calls.size())
            line("  ... " + std::to_string(calls.size() - shownCalls) + " more");
    }
    line("critical path: " + formatDuration(path.lengthNs) + " (" + formatDuration(path.gpuNs) + " GPU, "
         + formatDuration(path.hostNs) + " host, " + formatDuration(path.idleNs) + " idle), "
         + std::to_string(path.segments.size()) + " segments"
         + (path.resourceWaitNs > 0 ? "; its ops waited " + formatDuration(path.resourceWaitNs) + " for resources"
                                    : std::string())
         + (path.collectiveWaitNs > 0
                ? "; its collectives waited " + formatDuration(path.collectiveWaitNs) + " for other ranks"
                : std::string()));
    if (path.idleNs > 0) {
        // The idle time by what released the segment after it, largest first.
        std::string l = "  idle:";
        for (const auto& [cause, ns] : idleLargestFirst(path))
            l += (l.back() == ':' ? " " : "; ") + formatDuration(ns) + " " + std::string(toString(cause));
        line(l);
    }
    const size_t count = path.segments.size();
    const size_t limit = o.maxCriticalPathSegments ? std::min<size_t>(o.maxCriticalPathSegments, 40) : 40;
    const size_t shown = std::min(count, limit);
    if (shown < count)
        line("  ... " + std::to_string(count - shown) + " earlier segments");
    for (size_t k = count - shown; k < count; ++k) {
        const auto& seg = path.segments[k];
        std::string l = "  " + formatDuration(seg.contributionNs) + "  " + shortSpanName(seg.name) + " ("
            + streamLabel(trace, seg.track) + ", " + std::string(toString(seg.kind)) + ")";
        if (k > 0)
            l += " " + describeRelease(trace, path, k);
        if (seg.idleBeforeNs > 0) {
            l += ", " + formatDuration(seg.idleBeforeNs) + " idle before";
            if (const std::string where = describeIdle(trace, path, k); !where.empty())
                l += " (host time " + where + ")";
        }
        line(l);
    }
    if (diagnostics.empty()) {
        line("diagnostics: none");
    } else {
        line("diagnostics:");
        for (const auto& d : diagnostics)
            line("  [" + d.severity + "] " + d.rule + ": " + d.message);
    }
    return r;
}

std::string analysisReport(const Trace& input, const ReportOptions& o)
{
    Trace storage;
    const Trace& trace = finalizedView(input, storage);
    AnalysisOptions ao;
    ao.concurrencySteps = false;
    return analysisReport(trace, analyzeTrace(trace, ao), criticalPath(trace), diagnose(trace), o);
}

} // namespace streamscope
