// The evidence the diagnostic rules share: a finalized trace with its launch flows, incoming flows, the embedded
// scenario and the device limits, and the wording helpers of the messages. Internal to core (diagnostics.cpp and the
// rules: serialization_rules.cpp, host_rules.cpp, effect_rules.cpp, timing_rules.cpp); not installed.
#pragma once

#include "analysis.h"
#include "device_profile.h"
#include "diagnostics.h"
#include "file_io.h"
#include "metrics.h"
#include "scenario_json.h"
#include "span_names.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace streamscope::diag {

inline constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();
inline constexpr int64_t kMinTime = std::numeric_limits<int64_t>::min();

inline std::string quoted(std::string_view s)
{
    return "'" + std::string(s) + "'";
}

// "a", "a and b", "a, b and c", "a, b, c and 4 more".
inline std::string joinNames(const std::vector<std::string>& names, size_t maxNamed)
{
    const size_t shown = std::min(names.size(), std::max<size_t>(1, maxNamed));
    std::string s;
    for (size_t i = 0; i < shown; ++i) {
        if (i > 0)
            s += (i + 1 == shown && shown == names.size()) ? " and " : ", ";
        s += names[i];
    }
    if (shown < names.size())
        s += " and " + std::to_string(names.size() - shown) + " more";
    return s;
}

inline std::string plural(int64_t n, const std::string& one, const std::string& many)
{
    return std::to_string(n) + " " + (n == 1 ? one : many);
}

struct DeviceCaps {
    int64_t smCount = 0;
    int64_t maxThreadsPerSm = 0;
    int64_t maxBlocksPerSm = 0;
};

// How many GPU operations ran at once over a set of spans (dated from effStart).
struct Concurrency {
    int64_t busyNs = 0;  // at least one running
    int64_t multiNs = 0; // at least two running
    int maxRunning = 0;
    int64_t firstStart = 0, lastEnd = 0;
    int64_t workNs = 0; // sum of durations
};

// Sorts v by `less`, a strict total order, into exactly what std::sort gives: it merges the ascending runs v already
// holds (the spans of a track come sorted by start, so a device's spans are a few runs, not a random order), in
// O(n log runs) instead of O(n log n).
template <class T, class Less>
void sortRuns(std::vector<T>& v, Less less)
{
    std::vector<size_t> bounds{0};
    for (size_t i = 1; i < v.size(); ++i)
        if (less(v[i], v[i - 1]))
            bounds.push_back(i);
    bounds.push_back(v.size());
    if (bounds.size() <= 2)
        return;
    std::vector<T> buf(v.size());
    while (bounds.size() > 2) {
        std::vector<size_t> next{0};
        for (size_t r = 0; r + 1 < bounds.size(); r += 2) {
            const size_t a = bounds[r], m = bounds[r + 1], e = r + 2 < bounds.size() ? bounds[r + 2] : m;
            std::merge(v.begin() + a, v.begin() + m, v.begin() + m, v.begin() + e, buf.begin() + a, less);
            next.push_back(e);
        }
        v.swap(buf);
        bounds = std::move(next);
    }
}

class Context {
public:
    // `incoming`: the trace's IncomingFlows, built by the caller; nullptr: built here.
    Context(const Trace& trace, const DiagnosticOptions& options, const IncomingFlows* incoming)
        : t(trace), o(options), th(options.thresholds), n(trace.spanCount()),
          ownIncoming(incoming ? std::nullopt : std::optional<IncomingFlows>(std::in_place, trace)),
          in(incoming ? *incoming : *ownIncoming), launchOf(n, kNone), m_start(trace.spans.start.toVector()),
          m_end(trace.spans.end.toVector())
    {
        for (const auto& f : t.flows) {
            if (f.kind == FlowKind::Launch) {
                anyLaunch = true;
                if (f.to < n && launchOf[f.to] == kNone)
                    launchOf[f.to] = f.from;
            }
            anyImplicit = anyImplicit || f.kind == FlowKind::Implicit;
        }
        if (!t.info.scenarioJson.empty()) {
            auto parsed = parseScenario(t.info.scenarioJson, "embedded scenario");
            if (parsed)
                scenario = std::move(parsed->scenario);
        }
        origin = t.timeRange().first;
        for (const auto& [k, v] : t.info.settings)
            if (k == "timing" && (v == "events" || v.rfind("CUDA events", 0) == 0)) // now "events"; older traces
                eventTimed = true;
        if (eventTimed) {
            m_effStart = m_start;
            for (uint32_t i = 0; i < n; ++i)
                if (const int64_t nominal = nominalNs(i); nominal > 0 && end(i) - nominal > start(i))
                    m_effStart[i] = end(i) - nominal;
        }
    }

    const Trace& t;
    const DiagnosticOptions& o;
    const DiagnosticThresholds& th;
    const size_t n;
    const std::optional<IncomingFlows> ownIncoming; // built here where the caller gives none
    const IncomingFlows& in;
    std::vector<uint32_t> launchOf; // GPU span -> the API call that launched it
    bool anyLaunch = false;
    bool anyImplicit = false;
    std::optional<Scenario> scenario;
    // Timed with CUDA events on each op's stream (StreamScope's CUDA backend): a span starts when its stream reached
    // it, which includes the time it waited for SMs or for a hardware queue.
    bool eventTimed = false;
    int64_t origin = 0; // the trace's first span start

    // Busy intervals (merged) of one device's GPU spans, computed for every device in one pass on the first call (a
    // pass per device was devices x spans).
    const std::vector<Interval>& deviceBusy(int device) const
    {
        std::call_once(m_busyOnce, [this] {
            std::map<int, std::vector<Interval>> of;
            // Reserved at their size, not grown by doubling: every GPU span is here at once. Counted track by
            // track (a track's spans are consecutive), one look-up of the device per track.
            std::map<int, size_t> counts;
            for (uint32_t tr = 0; tr < t.tracks.size(); ++tr) {
                size_t count = 0;
                for (uint32_t i = t.trackBegin(tr); i < t.trackEnd(tr); ++i)
                    count += isGpuSpan(t.spans.kind[i]);
                if (count > 0)
                    counts[t.tracks[tr].device] += count;
            }
            for (const auto& [d, count] : counts)
                of[d].reserve(count);
            for (uint32_t i = 0; i < n; ++i)
                if (isGpuSpan(t.spans.kind[i]))
                    of[this->device(i)].push_back({effStart(i), end(i)});
            for (auto& [d, v] : of) {
                // In order of start already, mergeIntervals does not sort them again; the spans of each track are
                // a run sorted by start, so merging the runs is cheaper than a sort.
                sortRuns(v, [](const Interval& a, const Interval& b) { return a.start < b.start; });
                auto merged = mergeIntervals(std::move(v));
                merged.shrink_to_fit(); // kept while the diagnostics run: the room of the unmerged spans given back
                m_busy.emplace(d, std::move(merged));
            }
        });
        static const std::vector<Interval> kNoInterval;
        auto it = m_busy.find(device);
        return it != m_busy.end() ? it->second : kNoInterval;
    }

    // GPU spans on stream tracks, per device, in order of when they ran (effStart); computed once.
    const std::map<int, std::vector<uint32_t>>& gpuSpansByDevice() const
    {
        std::call_once(m_gpuByDeviceOnce, [this] {
            for (uint32_t i = 0; i < n; ++i)
                if (gpuOnStream(i))
                    m_gpuByDevice[device(i)].push_back(i);
            for (auto& [d, spans] : m_gpuByDevice)
                sortRuns(spans, [this](uint32_t a, uint32_t b) {
                    return effStart(a) != effStart(b) ? effStart(a) < effStart(b) : a < b;
                });
        });
        return m_gpuByDevice;
    }

    // How many of a device's GPU operations ran at once; computed once per device.
    const Concurrency& concurrency(int dev) const
    {
        const std::lock_guard lock(m_concurrencyMutex); // held while computing: a rule asking meanwhile waits
        if (auto it = m_concurrency.find(dev); it != m_concurrency.end())
            return it->second;
        Concurrency r;
        // The starts come in order (the spans are sorted by effStart); the ends are sorted apart and the two merged,
        // ends before starts at the same time (one sort of 2 n (time, +-1) edges cost more).
        std::vector<int64_t> starts, ends;
        if (auto it = gpuSpansByDevice().find(dev); it != gpuSpansByDevice().end()) {
            starts.reserve(it->second.size());
            ends.reserve(it->second.size());
            for (uint32_t i : it->second) {
                if (end(i) <= effStart(i))
                    continue;
                starts.push_back(effStart(i));
                ends.push_back(end(i));
                r.workNs += effDur(i);
            }
        }
        if (!starts.empty()) {
            sortRuns(ends, std::less<int64_t>());
            r.firstStart = std::min(starts.front(), ends.front());
            r.lastEnd = std::max(starts.back(), ends.back());
            int running = 0;
            int64_t last = r.firstStart;
            for (size_t s = 0, e = 0; s < starts.size() || e < ends.size();) {
                const bool isEnd = s == starts.size() || (e < ends.size() && ends[e] <= starts[s]);
                const int64_t time = isEnd ? ends[e++] : starts[s++];
                if (running >= 1)
                    r.busyNs += time - last;
                if (running >= 2)
                    r.multiNs += time - last;
                running += isEnd ? -1 : +1;
                r.maxRunning = std::max(r.maxRunning, running);
                last = time;
            }
        }
        return m_concurrency.emplace(dev, r).first->second;
    }

    bool onStream(uint32_t i) const
    {
        const uint32_t tr = t.spans.track[i];
        return tr < t.tracks.size() && t.tracks[tr].kind == TrackKind::Stream;
    }
    bool gpuOnStream(uint32_t i) const { return isGpuSpan(t.spans.kind[i]) && onStream(i); }
    int device(uint32_t i) const
    {
        const uint32_t tr = t.spans.track[i];
        return tr < t.tracks.size() ? t.tracks[tr].device : -1;
    }
    int64_t start(uint32_t i) const { return m_start[i]; }
    // Every span's start, for binary searches within a track ([trackBegin, trackEnd) is sorted).
    const std::vector<int64_t>& starts() const { return m_start; }
    int64_t end(uint32_t i) const { return m_end[i]; }
    int64_t dur(uint32_t i) const { return m_end[i] - m_start[i]; }
    // When the operation ran at the latest: on an event-timed trace, a kernel whose duration alone is known (a spin
    // kernel of the embedded scenario: its waves times its per-block time) ran at most that long before its end;
    // everywhere else the span's start.
    int64_t effStart(uint32_t i) const { return m_effStart.empty() ? start(i) : m_effStart[i]; }
    int64_t effDur(uint32_t i) const { return end(i) - effStart(i); }

    // Blocks of `block` threads that one SM of the device holds at once, and the device's SMs times that.
    int64_t blocksPerSm(const DeviceCaps& caps, Dim3 block) const
    {
        const int64_t threads = int64_t(block.count());
        return threads > 0 && block.x > 0 && caps.maxThreadsPerSm > 0
            ? std::max<int64_t>(1, std::min(caps.maxBlocksPerSm, caps.maxThreadsPerSm / threads))
            : caps.maxBlocksPerSm;
    }

    // How long a spin kernel of the embedded scenario runs alone: waves of blocks times the time per block; 0 when
    // unknown (another kernel, no scenario, no device limits).
    int64_t nominalNs(uint32_t i) const
    {
        if (t.spans.kind[i] != SpanKind::Kernel || !onStream(i))
            return 0;
        const Op* op = scenarioOp(i);
        if (!op || op->kind != OpKind::Kernel || op->kernel != KernelKind::Spin || op->durationUs <= 0)
            return 0;
        const DeviceCaps dc = caps(device(i));
        const int64_t resident = dc.smCount * blocksPerSm(dc, t.spans.blockOf(i));
        const int64_t blocks = int64_t(t.spans.gridOf(i).count());
        if (resident <= 0 || blocks <= 0)
            return 0;
        const int64_t waves = (blocks + resident - 1) / resident;
        return int64_t(std::llround(double(waves) * op->durationUs * 1000.0));
    }
    const std::string& trackName(uint32_t i) const { return t.tracks[t.spans.track[i]].name; }

    // The previous span in the same stream, or kNone.
    uint32_t streamPred(uint32_t i) const
    {
        const uint32_t tr = t.spans.track[i];
        if (tr >= t.tracks.size() || i == 0 || i <= t.trackBegin(tr))
            return kNone;
        return i - 1;
    }

    // The first span of [from, to) (spans of one track, sorted by start) that started after `time`, where no span
    // before `from` did: an exponential search from `from`, so that a caller whose time only grows walks each track
    // once in steps of log(distance) instead of a binary search over the whole track each time.
    uint32_t firstStartAfter(uint32_t from, uint32_t to, int64_t time) const
    {
        if (from >= to || start(from) > time)
            return from;
        uint32_t lo = from; // start(lo) <= time
        uint32_t step = 1;
        while (to - lo > step && start(lo + step) <= time) {
            lo += step;
            step *= 2;
        }
        const uint32_t hi = to - lo > step ? lo + step : to; // start(hi) > time, or hi == to
        const auto b = m_start.begin();
        return uint32_t(std::upper_bound(b + lo + 1, b + hi, time) - b);
    }

    // When a GPU operation could have started: its launch call had returned, its stream predecessor and the work
    // it waits for (event and implicit flows) had ended. Without a launch flow, and with nothing before it in its
    // stream, the issue time is unknown and the span's start is returned (no wait can be measured).
    int64_t ready(uint32_t i, uint32_t exclude = kNone, bool* known = nullptr) const
    {
        int64_t r = kMinTime;
        bool launchKnown = false;
        if (launchOf[i] != kNone) {
            r = end(launchOf[i]);
            launchKnown = true;
        }
        if (const uint32_t p = streamPred(i); p != kNone && p != exclude)
            r = std::max(r, end(p));
        for (uint32_t k : in.of(i)) {
            const Flow& f = t.flows[k];
            if ((f.kind == FlowKind::Event || f.kind == FlowKind::Implicit) && f.from != exclude && f.from < n)
                r = std::max(r, end(f.from));
        }
        if (known)
            *known = launchKnown;
        return r == kMinTime ? start(i) : r;
    }

    // The span's name as sentences show it: demangled and shortened (span_names.h).
    std::string name(uint32_t i) const { return shortSpanName(t.spanName(i)); }

    // "'h2d 0' (s0)" for a GPU span, "cudaFree on host thread main" for a host span.
    std::string label(uint32_t i) const
    {
        const uint32_t tr = t.spans.track[i];
        if (tr >= t.tracks.size())
            return quoted(name(i));
        if (t.tracks[tr].kind == TrackKind::Stream)
            return quoted(name(i)) + " (" + t.tracks[tr].name + ")";
        return std::string(t.spanName(i)) + " on host thread " + t.tracks[tr].name;
    }
    // A duration; and a point in time, as on the timeline's axis: from the trace's first span (imported traces keep
    // their source's clock, often seconds since an epoch).
    std::string at(int64_t ns) const { return formatDuration(ns); }
    std::string when(int64_t t) const { return formatDuration(t - origin); }

    DeviceCaps caps(int dev) const
    {
        const std::lock_guard lock(m_capsMutex);
        if (auto it = m_caps.find(dev); it != m_caps.end())
            return it->second;
        return m_caps.emplace(dev, readCaps(dev)).first->second;
    }
    DeviceCaps readCaps(int dev) const
    {
        DeviceCaps c;
        std::string profileId;
        for (const auto& d : t.info.devices) {
            if (d.index != dev)
                continue;
            for (const auto& [k, v] : d.properties) {
                if (k == "sm_count")
                    c.smCount = leadingInt(v).value_or(0);
                else if (k == "max_threads_per_sm")
                    c.maxThreadsPerSm = leadingInt(v).value_or(0);
                else if (k == "max_blocks_per_sm")
                    c.maxBlocksPerSm = leadingInt(v).value_or(0);
                else if (k == "profile")
                    profileId = v;
            }
        }
        if (profileId.empty() && scenario)
            if (const DeviceSpec* spec = scenario->device(dev))
                profileId = spec->profile;
        if ((c.smCount == 0 || c.maxThreadsPerSm == 0 || c.maxBlocksPerSm == 0) && !profileId.empty()) {
            if (auto p = findDeviceProfile(profileId)) {
                c.smCount = c.smCount ? c.smCount : p->smCount;
                c.maxThreadsPerSm = c.maxThreadsPerSm ? c.maxThreadsPerSm : p->maxThreadsPerSm;
                c.maxBlocksPerSm = c.maxBlocksPerSm ? c.maxBlocksPerSm : p->maxBlocksPerSm;
            }
        }
        if (c.smCount > 0 && c.maxBlocksPerSm == 0)
            c.maxBlocksPerSm = 32; // the limit of every architecture since Maxwell but Turing (16)
        return c;
    }

    int maxConnections() const
    {
        for (const auto& [k, v] : t.info.settings)
            if (k == "CUDA_DEVICE_MAX_CONNECTIONS")
                if (auto c = leadingInt(v); c && *c > 0)
                    return int(*c);
        if (scenario)
            if (auto c = scenario->run.maxConnections())
                return *c;
        return th.defaultMaxConnections;
    }

    const Op* scenarioOp(uint32_t i) const
    {
        if (!scenario)
            return nullptr;
        const int th_ = t.spans.threadOf(i), op = t.spans.opOf(i);
        if (th_ < 0 || size_t(th_) >= scenario->threads.size())
            return nullptr;
        const auto& ops = scenario->threads[size_t(th_)].ops;
        if (op < 0 || size_t(op) >= ops.size())
            return nullptr;
        return &ops[size_t(op)];
    }

    Diagnostic make(std::string_view rule, std::string message, std::vector<uint32_t> spans) const
    {
        Diagnostic d;
        d.rule = std::string(rule);
        const DiagnosticRule* r = findDiagnosticRule(rule);
        d.severity = r ? std::string(r->severity) : "warning";
        d.message = std::move(message);
        orderSpans(spans);
        d.spans = std::move(spans);
        return d;
    }
    // The spans of a diagnostic as make() lists them: in time order, each once, at most maxSpans.
    void orderSpans(std::vector<uint32_t>& spans) const
    {
        const auto less = [this](uint32_t a, uint32_t b) { return start(a) != start(b) ? start(a) < start(b) : a < b; };
        // A long list (200 000 spans on a 1.5 M-span trace) keeps only its first maxSpans: select the smallest m
        // in linear time and sort those, with m doubled until they hold maxSpans distinct spans. The first m of
        // the sorted list are the same whichever way they are found, so the result is the full sort's.
        size_t m = o.maxSpans < spans.size() / 4 ? std::max<size_t>(2 * o.maxSpans, 1) : spans.size();
        while (m < spans.size()) {
            const auto mid = spans.begin() + ptrdiff_t(m);
            std::nth_element(spans.begin(), mid, spans.end(), less);
            std::sort(spans.begin(), mid, less);
            size_t distinct = 1;
            for (auto it = spans.begin() + 1; it != mid; ++it)
                distinct += *it != *(it - 1);
            if (distinct >= o.maxSpans) {
                spans.erase(std::unique(spans.begin(), mid), spans.end());
                spans.resize(o.maxSpans);
                return;
            }
            m *= 2;
        }
        std::sort(spans.begin(), spans.end(), less);
        spans.erase(std::unique(spans.begin(), spans.end()), spans.end());
        if (spans.size() > o.maxSpans)
            spans.resize(o.maxSpans);
    }

private:
    // What several rules ask for, computed by the first that asks; rules run on several threads at once
    // (diagnose), so each is guarded.
    mutable std::once_flag m_busyOnce;
    mutable std::map<int, std::vector<Interval>> m_busy;
    mutable std::mutex m_capsMutex;
    mutable std::map<int, DeviceCaps> m_caps;
    mutable std::once_flag m_gpuByDeviceOnce;
    mutable std::map<int, std::vector<uint32_t>> m_gpuByDevice;
    mutable std::mutex m_concurrencyMutex;
    mutable std::map<int, Concurrency> m_concurrency;
    // The span times unpacked from the trace's TimeColumns for the rules' duration: they read them at random (sorts,
    // binary searches), where a plain array costs one load (diagnose of the 1.5 M-span trace: 0.40 s of CPU reading
    // the columns, 0.24 s these, measured under the same load).
    std::vector<int64_t> m_start, m_end;
    std::vector<int64_t> m_effStart; // event-timed traces only
};

// Time not covered by `busy` (merged) inside [from, to]: binary search to the first interval, then a walk.
inline int64_t idleWithin(const std::vector<Interval>& busy, int64_t from, int64_t to)
{
    if (to <= from)
        return 0;
    auto it = std::partition_point(busy.begin(), busy.end(), [from](const Interval& x) { return x.end <= from; });
    int64_t covered = 0;
    for (; it != busy.end() && it->start < to; ++it)
        covered += std::min(it->end, to) - std::max(it->start, from);
    return (to - from) - covered;
}

// Problem rules, in the order diagnose() runs them: serialization_rules.cpp ...
void legacyDefaultStream(const Context& c, std::vector<Diagnostic>& out);
void hardwareQueues(const Context& c, std::vector<Diagnostic>& out);
void gpuFillingKernel(const Context& c, std::vector<Diagnostic>& out);
void hostFuncSerialization(const Context& c, std::vector<Diagnostic>& out);
// ... and host_rules.cpp.
void pageableMemcpy(const Context& c, std::vector<Diagnostic>& out);
void syncInLoop(const Context& c, std::vector<Diagnostic>& out);
void launchBound(const Context& c, std::vector<Diagnostic>& out);
void implicitSync(const Context& c, std::vector<Diagnostic>& out);
void waitUnrecordedEvent(const Context& c, std::vector<Diagnostic>& out);

// Rules that name the effect a run shows (effect_rules.cpp), in the order diagnose() reports them after the problems.
void streamsOverlap(const Context& c, std::vector<Diagnostic>& out);
void streamSerialization(const Context& c, std::vector<Diagnostic>& out);
void copyComputeOverlap(const Context& c, std::vector<Diagnostic>& out);
void eventDependency(const Context& c, std::vector<Diagnostic>& out);
void multiDeviceOverlap(const Context& c, std::vector<Diagnostic>& out);
void streamPriority(const Context& c, std::vector<Diagnostic>& out);
void graphLaunch(const Context& c, std::vector<Diagnostic>& out);
void timingPerturbation(const Context& c, std::vector<Diagnostic>& out); // timing_rules.cpp
void straggler(const Context& c, std::vector<Diagnostic>& out);          // rank_rules.cpp

} // namespace streamscope::diag
