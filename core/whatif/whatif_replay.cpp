// The replay of a recorded run (whatif.h): the recording's scenario simulated with the durations the GPU measured,
// unchanged and with settings changed. Rules: docs/ANALYSIS.md §5a.
#include "whatif.h"

#include "metrics.h"
#include "runner.h"
#include "scenario_json.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>

namespace streamscope {

namespace {

using OrderedJson = nlohmann::ordered_json;

double finite(double v)
{
    return std::isfinite(v) ? v : 0.0;
}

std::string dumpJson(const OrderedJson& j, int indent)
{
    return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

} // namespace

namespace {

constexpr int kMaxConnections = 32; // CUDA_DEVICE_MAX_CONNECTIONS range
constexpr int kMinPriority = -5;    // CUDA's greatest priority on current GPUs (H200: 0 .. -5)
constexpr int kMaxFitPasses = 4;
constexpr double kFitTolerance = 0.005;

std::optional<long> parseInteger(std::string_view v)
{
    if (v.empty() || v.size() > 9)
        return std::nullopt;
    size_t i = v[0] == '-' || v[0] == '+' ? 1 : 0;
    if (i == v.size())
        return std::nullopt;
    long n = 0;
    for (; i < v.size(); ++i) {
        if (v[i] < '0' || v[i] > '9')
            return std::nullopt;
        n = n * 10 + (v[i] - '0');
    }
    return v[0] == '-' ? -n : n;
}

std::optional<bool> parseBool(std::string_view v)
{
    if (v == "true" || v == "on" || v == "yes" || v == "1")
        return true;
    if (v == "false" || v == "off" || v == "no" || v == "0")
        return false;
    return std::nullopt;
}

Error settingError(const std::string& key, const std::string& message)
{
    return Error{{}, "--set " + key, message};
}

// A host call that returns without waiting for GPU work: its measured time is its own cost.
bool callDoesNotWait(const Op& op)
{
    switch (op.kind) {
    case OpKind::Kernel:
    case OpKind::Memset:
    case OpKind::HostFunc:
    case OpKind::Graph:
    case OpKind::Record:
    case OpKind::Wait:
    case OpKind::HostWork: return true;
    case OpKind::Memcpy:
        // A pageable H2D/D2H copy is staged: the call returns when the copy is done.
        return op.pinned || (op.copy != CopyKind::H2D && op.copy != CopyKind::D2H);
    default: return false;
    }
}

// Host calls whose own cost a replay takes from the recording: those that do not wait, cudaMalloc (which does not
// wait either) and cudaFree, whose cost after the implicit synchronization is the time from the end of the GPU work it
// waited for.
bool hasHostCall(const Op& op)
{
    return callDoesNotWait(op) || op.kind == OpKind::Malloc || op.kind == OpKind::Free;
}

int64_t median(std::vector<int64_t> v)
{
    if (v.empty())
        return 0;
    const size_t mid = v.size() / 2;
    std::nth_element(v.begin(), v.begin() + std::ptrdiff_t(mid), v.end());
    const int64_t hi = v[mid];
    if (v.size() % 2)
        return hi;
    const int64_t lo = *std::max_element(v.begin(), v.begin() + std::ptrdiff_t(mid));
    return lo + (hi - lo) / 2;
}

// The GPU nodes of a graph op: indices into op.ops of the nodes that have a GPU span.
std::vector<int> graphGpuNodes(const Op& op)
{
    std::vector<int> nodes;
    for (size_t n = 0; n < op.ops.size(); ++n)
        if (isGpuOp(op.ops[n].kind))
            nodes.push_back(int(n));
    return nodes;
}

// Per op and measured iteration: the sum and count of its spans' durations.
struct PerIteration {
    std::map<int, std::pair<int64_t, int64_t>> sums;
    void add(int iteration, int64_t d)
    {
        auto& [sum, n] = sums[iteration];
        sum += d;
        ++n;
    }
};

struct Samples {
    std::map<MeasuredOpKey, PerIteration> gpu, host, gap, streamGap;
    std::vector<MeasuredOpKey> gpuKeyOf; // per span: the op of a measured GPU span; thread -1 for the others
    size_t spans = 0, skipped = 0;
};

constexpr MeasuredOpKey kNoOp{-1, -1, -1};

// The time the GPU left between an op and the previous one in its stream, where the op was queued behind it: its
// launch call had returned before that op ended (graph nodes after the first: always), and no event or implicit
// dependency of the op ended later than that op.
void collectStreamGaps(const Trace& trace, Samples& out)
{
    const auto& sp = trace.spans;
    std::vector<int64_t> launchEnd(sp.size(), -1);
    std::vector<int64_t> otherDepEnd(sp.size(), std::numeric_limits<int64_t>::min());
    for (const Flow& f : trace.flows) {
        if (f.from >= sp.size() || f.to >= sp.size())
            continue;
        if (f.kind == FlowKind::Launch)
            launchEnd[f.to] = sp.end[f.from];
        else if (f.kind == FlowKind::Event || f.kind == FlowKind::Implicit)
            otherDepEnd[f.to] = std::max(otherDepEnd[f.to], sp.end[f.from]);
    }
    for (uint32_t track = 0; track < trace.tracks.size() && trace.finalized(); ++track) {
        if (trace.tracks[track].kind != TrackKind::Stream)
            continue;
        uint32_t prev = kNoSpan;
        for (uint32_t i = trace.trackBegin(track); i < trace.trackEnd(track); ++i) {
            if (!isGpuSpan(sp.kind[i]))
                continue;
            const MeasuredOpKey& key = out.gpuKeyOf[i];
            const bool graphNode = key.node > 0;
            if (prev != kNoSpan && key.thread >= 0 && sp.iterationOf(i) == sp.iterationOf(prev)
                && sp.start[i] >= sp.end[prev] && otherDepEnd[i] <= sp.end[prev]
                && (graphNode || (launchEnd[i] >= 0 && launchEnd[i] <= sp.end[prev])))
                out.streamGap[key].add(sp.iterationOf(i), sp.start[i] - sp.end[prev]);
            prev = i;
        }
    }
}

Samples collectSamples(const Trace& trace, const Scenario& scenario, bool hostToo)
{
    Samples out;
    struct GraphSpan {
        uint32_t track;
        int64_t start;
        int64_t duration;
        int iteration;
        uint32_t span;
    };
    out.gpuKeyOf.assign(trace.spans.size(), kNoOp);
    std::map<std::pair<int, int>, std::vector<GraphSpan>> graphs;
    const auto& sp = trace.spans;
    std::map<int, std::vector<int64_t>> gpuEnds; // per device, sorted: what a free waited for
    for (size_t i = 0; i < sp.size(); ++i)
        if (isGpuSpan(sp.kind[i]) && sp.track[i] < trace.tracks.size())
            gpuEnds[trace.tracks[sp.track[i]].device].push_back(sp.end[i]);
    for (auto& [device, ends] : gpuEnds)
        std::sort(ends.begin(), ends.end());
    for (size_t i = 0; i < sp.size(); ++i) {
        const SpanKind kind = sp.kind[i];
        const int t = sp.threadOf(i), o = sp.opOf(i);
        const bool gpu = isGpuSpan(kind);
        if (!gpu && kind != SpanKind::ApiCall && kind != SpanKind::HostWork)
            continue;
        if (!gpu && !hostToo)
            continue;
        if (t < 0 || o < 0 || size_t(t) >= scenario.threads.size()
            || size_t(o) >= scenario.threads[size_t(t)].ops.size()) {
            ++out.skipped;
            continue;
        }
        const Op& op = scenario.threads[size_t(t)].ops[size_t(o)];
        const int64_t d = sp.end[i] - sp.start[i];
        if (gpu) {
            if (sp.timingOf(i) == SpanTiming::Uncertain) {
                ++out.skipped;
                continue;
            }
            if (op.kind == OpKind::Graph) {
                graphs[{t, o}].push_back({sp.track[i], sp.start[i], d, sp.iterationOf(i), uint32_t(i)});
                continue;
            }
            if (!isGpuOp(op.kind) || op.kind == OpKind::Graph) {
                ++out.skipped;
                continue;
            }
            out.gpu[{t, o, -1}].add(sp.iterationOf(i), d);
            out.gpuKeyOf[i] = {t, o, -1};
            ++out.spans;
            continue;
        }
        const bool matches =
            kind == SpanKind::HostWork ? op.kind == OpKind::HostWork : op.kind != OpKind::HostWork && hasHostCall(op);
        if (!matches)
            continue;
        int64_t own = d;
        if (op.kind == OpKind::Free) { // cudaFree waits for the device; cudaMalloc does not
            const auto& ends = gpuEnds[scenario.threads[size_t(t)].device];
            auto it = std::upper_bound(ends.begin(), ends.end(), sp.end[i]);
            if (it != ends.begin())
                own = sp.end[i] - std::max(sp.start[i], *std::prev(it));
        }
        out.host[{t, o, -1}].add(sp.iterationOf(i), own);
        ++out.spans;
    }
    if (hostToo) {
        // The host time between calls: per host-thread track, from one call's end to the next one's start.
        const Trace& ft = trace;
        for (uint32_t track = 0; track < ft.tracks.size() && ft.finalized(); ++track) {
            if (ft.tracks[track].kind != TrackKind::HostThread)
                continue;
            int64_t prevEnd = 0;
            int prevIteration = -1;
            for (uint32_t i = ft.trackBegin(track); i < ft.trackEnd(track); ++i) {
                const SpanKind kind = sp.kind[i];
                if (kind != SpanKind::ApiCall && kind != SpanKind::Sync && kind != SpanKind::HostWork)
                    continue;
                const int t = sp.threadOf(i), o = sp.opOf(i);
                const bool known = t >= 0 && o >= 0 && size_t(t) < scenario.threads.size()
                    && size_t(o) < scenario.threads[size_t(t)].ops.size();
                if (known && prevIteration == sp.iterationOf(i) && sp.start[i] >= prevEnd)
                    out.gap[{t, o, -1}].add(sp.iterationOf(i), sp.start[i] - prevEnd);
                prevEnd = sp.end[i];
                prevIteration = sp.iterationOf(i);
            }
        }
    }
    for (auto& [key, spans] : graphs) {
        const Op& op = scenario.threads[size_t(key.first)].ops[size_t(key.second)];
        const std::vector<int> nodes = graphGpuNodes(op);
        if (nodes.empty() || spans.size() % nodes.size() != 0) {
            // Records missing: the nodes cannot be told apart, so the graph is modelled.
            out.skipped += spans.size();
            continue;
        }
        std::sort(spans.begin(), spans.end(), [](const GraphSpan& a, const GraphSpan& b) {
            return a.track != b.track ? a.track < b.track : a.start < b.start;
        });
        for (size_t k = 0; k < spans.size(); ++k) {
            const MeasuredOpKey node{key.first, key.second, nodes[k % nodes.size()]};
            out.gpu[node].add(spans[k].iteration, spans[k].duration);
            out.gpuKeyOf[spans[k].span] = node;
        }
        out.spans += spans.size();
    }
    if (hostToo)
        collectStreamGaps(trace, out);
    return out;
}

// Per op: the mean over its spans in each measured iteration (repeats within an iteration ran different
// neighbours: their total is the op's work in that iteration), then the median over the iterations.
std::map<MeasuredOpKey, int64_t> medians(const std::map<MeasuredOpKey, PerIteration>& samples)
{
    std::map<MeasuredOpKey, int64_t> out;
    for (const auto& [key, per] : samples) {
        std::vector<int64_t> means;
        for (const auto& [iteration, sn] : per.sums)
            means.push_back(sn.first / std::max<int64_t>(1, sn.second));
        if (const int64_t m = median(std::move(means)); m > 0)
            out[key] = m;
    }
    return out;
}

// The same, keeping zero (back-to-back ops in a stream: no gap is a measurement too).
std::map<MeasuredOpKey, int64_t> mediansWithZero(const std::map<MeasuredOpKey, PerIteration>& samples)
{
    std::map<MeasuredOpKey, int64_t> out;
    for (const auto& [key, per] : samples) {
        std::vector<int64_t> means;
        for (const auto& [iteration, sn] : per.sums)
            means.push_back(sn.first / std::max<int64_t>(1, sn.second));
        if (!means.empty())
            out[key] = median(std::move(means));
    }
    return out;
}

bool isKernelKey(const Scenario& s, const MeasuredOpKey& k)
{
    const Op& op = s.threads[size_t(k.thread)].ops[size_t(k.op)];
    const Op& target = k.node >= 0 ? op.ops[size_t(k.node)] : op;
    return target.kind == OpKind::Kernel;
}

std::string streamList(const Scenario& s)
{
    std::string out;
    for (const auto& st : s.streams)
        out += (out.empty() ? "" : ", ") + st.name;
    return out;
}

// Sets the host memory of every H2D/D2H copy (graph nodes included); collects the copies that changed.
void setPinned(std::vector<Op>& ops, bool pinned, int thread, int opIndex, int node,
               std::vector<MeasuredOpKey>& changed)
{
    for (size_t i = 0; i < ops.size(); ++i) {
        Op& op = ops[i];
        const int o = node < -1 ? int(i) : opIndex;
        const int n = node < -1 ? -1 : int(i);
        if (op.kind == OpKind::Graph && node < -1)
            setPinned(op.ops, pinned, thread, int(i), -1, changed);
        if (op.kind == OpKind::Memcpy && (op.copy == CopyKind::H2D || op.copy == CopyKind::D2H)
            && op.pinned != pinned) {
            op.pinned = pinned;
            changed.push_back({thread, o, n});
        }
    }
}

struct Applied {
    Scenario scenario;
    std::vector<MeasuredOpKey> modelled; // keys (of the changed scenario) whose measurements no longer apply
    std::vector<std::string> notes;
};

Result<Applied> applySettings(const Scenario& recorded, const std::vector<ReplaySetting>& settings)
{
    Applied a;
    a.scenario = recorded;
    a.scenario.variants.clear();
    for (const ReplaySetting& set : settings) {
        Scenario& s = a.scenario;
        const std::string& k = set.key;
        if (k == "streams") {
            const long n = *parseInteger(set.value);
            auto rewritten = sweepScenario(s, SweepKnob::Streams, double(n));
            if (!rewritten)
                return settingError(k, rewritten.error().toString());
            // The rewrite unrolls repeats: carry the modelled keys along by op index modulo the original list.
            std::vector<MeasuredOpKey> modelled;
            for (const auto& key : a.modelled) {
                const size_t before = s.threads[size_t(key.thread)].ops.size();
                const size_t after = rewritten->threads[size_t(key.thread)].ops.size();
                for (size_t j = size_t(key.op); j < after; j += std::max<size_t>(1, before))
                    modelled.push_back({key.thread, int(j), key.node});
            }
            a.modelled = std::move(modelled);
            s = std::move(rewritten).value();
            a.notes.push_back("streams=" + set.value + ": the scenario's work is dealt round-robin to " + set.value
                              + " streams (as the sweep deals it); every op keeps the durations measured for it "
                                "(thread and op index), repeats unrolled by the rewrite each take the median of the "
                                "op's repeats");
        } else if (k == "connections") {
            s.run.env["CUDA_DEVICE_MAX_CONNECTIONS"] = set.value;
            a.notes.push_back("connections=" + set.value + ": CUDA_DEVICE_MAX_CONNECTIONS " + set.value
                              + " hardware work queues per device; the measured durations are kept");
        } else if (k == "pinned") {
            const bool pinned = *parseBool(set.value);
            std::vector<MeasuredOpKey> changed;
            for (size_t t = 0; t < s.threads.size(); ++t)
                setPinned(s.threads[t].ops, pinned, int(t), -1, -2, changed);
            if (changed.empty()) {
                a.notes.push_back(std::string("pinned=") + (pinned ? "true" : "false")
                                  + ": no H2D or D2H copy changes its host memory");
            } else {
                a.modelled.insert(a.modelled.end(), changed.begin(), changed.end());
                a.notes.push_back(std::string("pinned=") + (pinned ? "true" : "false") + ": "
                                  + std::to_string(changed.size()) + " H2D/D2H cop"
                                  + (changed.size() == 1 ? "y moves" : "ies move") + " to "
                                  + (pinned ? "pinned" : "pageable")
                                  + " host memory; their copy and call times are modelled by the device profile, "
                                    "not measured");
            }
        } else if (k == "priorities") {
            for (auto& st : s.streams)
                st.priority = 0;
            a.notes.push_back("priorities=off: every stream gets priority 0; the measured durations are kept");
        } else if (k.rfind("priority.", 0) == 0 || k.rfind("kind.", 0) == 0) {
            const bool priority = k[0] == 'p';
            const std::string name = k.substr(priority ? 9 : 5);
            StreamSpec* st = nullptr;
            for (auto& x : s.streams)
                if (x.name == name)
                    st = &x;
            if (!st)
                return settingError(k,
                                    "no stream \"" + name + "\" in the scenario (its streams: " + streamList(s) + ")");
            if (priority) {
                st->priority = int(*parseInteger(set.value));
            } else {
                if (st->kind != StreamKind::Blocking && st->kind != StreamKind::NonBlocking)
                    return settingError(k,
                                        "stream \"" + name + "\" is " + std::string(toString(st->kind))
                                            + "; only blocking and non-blocking streams can change kind");
                st->kind = *streamKindFromString(set.value);
            }
            a.notes.push_back(k + "=" + set.value + ": the measured durations are kept");
        }
        auto valid = validateScenario(s, s.id.empty() ? std::string("replay") : s.id);
        if (!valid)
            return settingError(k, valid.error().toString());
        s = std::move(valid->scenario);
    }
    return a;
}

// The measured maps carried over to the changed scenario: an op keeps its measurement by (thread, op index, node);
// a thread whose op list was unrolled (streams=N) maps op j to j modulo the recorded list.
std::map<MeasuredOpKey, int64_t> carry(const std::map<MeasuredOpKey, int64_t>& measured, const Scenario& recorded,
                                       const Scenario& changed, const std::vector<MeasuredOpKey>& modelled)
{
    std::map<MeasuredOpKey, int64_t> out;
    for (size_t t = 0; t < changed.threads.size() && t < recorded.threads.size(); ++t) {
        const size_t before = recorded.threads[t].ops.size();
        const size_t after = changed.threads[t].ops.size();
        if (before == 0 || after % before != 0)
            continue;
        for (const auto& [key, ns] : measured) {
            if (size_t(key.thread) != t)
                continue;
            for (size_t j = size_t(key.op); j < after; j += before)
                out[{key.thread, int(j), key.node}] = ns;
        }
    }
    for (const auto& key : modelled)
        out.erase(key);
    return out;
}

// The GPU ops and the host calls that do not wait, per scenario op, and how many of them carry a measurement.
void countMeasured(const Scenario& s, const SimulatorOptions& o, ReplayResult& r)
{
    for (size_t t = 0; t < s.threads.size(); ++t)
        for (size_t i = 0; i < s.threads[t].ops.size(); ++i) {
            const Op& op = s.threads[t].ops[i];
            const MeasuredOpKey key{int(t), int(i), -1};
            if (hasHostCall(op)) {
                ++r.hostCalls;
                r.hostCallsMeasured += o.measuredHostNs.count(key);
            }
            if (op.kind == OpKind::Graph) {
                for (int n : graphGpuNodes(op)) {
                    ++r.gpuOps;
                    r.gpuOpsMeasured += o.measuredGpuNs.count({int(t), int(i), n});
                }
            } else if (isGpuOp(op.kind)) {
                ++r.gpuOps;
                r.gpuOpsMeasured += o.measuredGpuNs.count(key);
            }
        }
}

Result<Trace> simulate(const Scenario& s, const SimulatorOptions& options, const std::atomic<bool>* cancel)
{
    SimulatorBackend sim(options);
    RunOptions ro;
    ro.cancel = cancel;
    auto out = runScenario(s, sim, ro);
    if (!out.status)
        return Result<Trace>(out.status.error(), out.status.errorClass());
    return std::move(out.trace);
}

std::string signedPercent(double fraction)
{
    char buf[32];
    std::snprintf(buf, sizeof buf, "%+.1f %%", 100.0 * finite(fraction));
    return buf;
}

} // namespace

const std::vector<ReplayKey>& replayKeys()
{
    static const std::vector<ReplayKey> keys{
        {"streams", "1.." + std::to_string(kMaxSweepStreams),
         "the scenario's work dealt round-robin to N streams, as the sweep deals it"},
        {"connections", "1.." + std::to_string(kMaxConnections),
         "CUDA_DEVICE_MAX_CONNECTIONS: the hardware work queues per device"},
        {"pinned", "true | false", "host memory of every H2D and D2H copy: pinned or pageable"},
        {"priorities", "off", "every stream at priority 0"},
        {"priority.<stream>", std::to_string(kMinPriority) + "..0", "one stream's priority (lower is higher)"},
        {"kind.<stream>", "blocking | non-blocking", "whether a stream synchronizes with the legacy default stream"},
    };
    return keys;
}

Result<ReplaySetting> parseReplaySetting(std::string_view keyValue)
{
    const size_t eq = keyValue.find('=');
    if (eq == std::string_view::npos || eq == 0)
        return Error{{}, "--set " + std::string(keyValue), "expected KEY=VALUE, e.g. streams=4"};
    ReplaySetting s{std::string(keyValue.substr(0, eq)), std::string(keyValue.substr(eq + 1))};
    const std::string& k = s.key;
    const std::string& v = s.value;
    auto range = [&](long lo, long hi, const std::string& what) -> std::optional<Error> {
        const auto n = parseInteger(v);
        if (!n || *n < lo || *n > hi)
            return settingError(k,
                                what + " must be an integer from " + std::to_string(lo) + " to " + std::to_string(hi)
                                    + " (got \"" + v + "\")");
        return std::nullopt;
    };
    if (k == "streams") {
        if (auto e = range(1, kMaxSweepStreams, "the number of streams"))
            return *e;
    } else if (k == "connections") {
        if (auto e = range(1, kMaxConnections, "CUDA_DEVICE_MAX_CONNECTIONS"))
            return *e;
    } else if (k == "pinned") {
        const auto b = parseBool(v);
        if (!b)
            return settingError(k, "expected true or false (got \"" + v + "\")");
        s.value = *b ? "true" : "false";
    } else if (k == "priorities") {
        if (v == "on")
            return settingError(k,
                                "priorities=on would not say which stream gets which: set one stream's with "
                                "priority.<stream>=P ("
                                    + std::to_string(kMinPriority) + "..0)");
        if (v != "off")
            return settingError(k, "expected off (got \"" + v + "\")");
    } else if (k.rfind("priority.", 0) == 0 && k.size() > 9) {
        if (auto e = range(kMinPriority, 0, "a stream priority"))
            return *e;
    } else if (k.rfind("kind.", 0) == 0 && k.size() > 5) {
        if (v != "blocking" && v != "non-blocking")
            return settingError(k, "expected blocking or non-blocking (got \"" + v + "\")");
    } else {
        std::string known;
        for (const auto& rk : replayKeys())
            known += (known.empty() ? "" : ", ") + rk.key;
        return settingError(k, "unknown key (known: " + known + ")");
    }
    if (v.empty())
        return settingError(k, "no value");
    return s;
}

std::string replaySettingsText(const std::vector<ReplaySetting>& settings)
{
    if (settings.empty())
        return "no change";
    std::string out;
    for (const auto& s : settings)
        out += (out.empty() ? "" : ", ") + s.key + "=" + s.value;
    return out;
}

MeasuredDurations measureDurations(const Trace& trace, const Scenario& scenario)
{
    Samples samples = collectSamples(trace, scenario, true);
    MeasuredDurations m;
    m.gpuNs = medians(samples.gpu);
    m.hostNs = medians(samples.host);
    m.hostGapNs = medians(samples.gap);
    m.streamGapNs = mediansWithZero(samples.streamGap);
    m.spans = samples.spans;
    m.skippedSpans = samples.skipped;
    return m;
}

Result<Scenario> recordedScenario(const Trace& trace, const std::string& file)
{
    const RunInfo& info = trace.info;
    if (info.source != TraceSource::Cupti && info.source != TraceSource::CudaEvents)
        return Error{file,
                     {},
                     "not recorded on a GPU (source " + std::string(toString(info.source))
                         + "): a replay needs the durations a GPU run of StreamScope's measured"};
    if (info.scenarioJson.empty())
        return Error{file,
                     {},
                     "the trace carries no scenario: a replay needs the scenario a GPU run of "
                     "StreamScope's embeds"};
    auto parsed =
        parseScenario(info.scenarioJson, (file.empty() ? std::string("trace") : file) + " (embedded scenario)");
    if (!parsed)
        return parsed.error();
    return std::move(parsed->scenario);
}

Result<ReplayResult> replayRecordedRun(const Trace& recorded, const ReplayOptions& options, const std::string& file)
{
    auto scenario = recordedScenario(recorded, file);
    if (!scenario)
        return scenario.error();
    for (const auto& set : options.settings)
        if (auto checked = parseReplaySetting(set.key + "=" + set.value); !checked)
            return checked.error();
    auto applied = applySettings(*scenario, options.settings);
    if (!applied)
        return applied.error();

    const MeasuredDurations measured = measureDurations(recorded, *scenario);
    SimulatorOptions base = options.simulator;
    base.measuredGpuNs = measured.gpuNs;
    base.measuredHostNs = measured.hostNs;
    base.measuredHostGapNs = measured.hostGapNs;
    base.measuredStreamGapNs = measured.streamGapNs;

    ReplayResult r;
    r.settings = options.settings;
    // Kernels: fit the time per wave so that each kernel's span in the unchanged replay is its measured span. A
    // kernel's span includes time it shared the SMs; the simulation models that sharing, so what is fitted is the
    // kernel's own time.
    Trace unchanged;
    for (int pass = 0; pass < kMaxFitPasses; ++pass) {
        auto t = simulate(*scenario, base, options.cancel);
        if (!t)
            return t.error();
        unchanged = std::move(t).value();
        r.fitPasses = pass + 1;
        const auto simulated = medians(collectSamples(unchanged, *scenario, false).gpu);
        double worst = 0;
        for (auto& [key, ns] : base.measuredGpuNs) {
            if (!isKernelKey(*scenario, key))
                continue;
            const auto it = simulated.find(key);
            const auto want = measured.gpuNs.find(key);
            if (it == simulated.end() || it->second <= 0 || want == measured.gpuNs.end())
                continue;
            const double f = double(want->second) / double(it->second);
            worst = std::max(worst, std::abs(f - 1.0));
            if (pass + 1 < kMaxFitPasses)
                ns = std::max<int64_t>(1, std::llround(double(ns) * std::clamp(f, 0.25, 4.0)));
        }
        if (worst <= kFitTolerance || (options.cancel && options.cancel->load()))
            break;
    }

    const TraceMetrics rec = computeMetrics(recorded);
    const TraceMetrics rep = computeMetrics(unchanged);
    r.recordedMakespanNs = rec.makespanNs;
    r.replayMakespanNs = rep.makespanNs;
    r.makespanError = rec.makespanNs > 0 ? double(rep.makespanNs) / double(rec.makespanNs) - 1.0 : 0.0;
    r.replayHostMakespanNs = rep.hostMakespanNs;
    if (const std::string* v = findSetting(recorded.info, "untimed_makespan_ns"))
        r.untimedMakespanNs = parseInteger(*v).value_or(0);
    if (r.untimedMakespanNs > 0)
        r.untimedError = double(rep.hostMakespanNs) / double(r.untimedMakespanNs) - 1.0;

    SimulatorOptions changedOptions = options.simulator;
    changedOptions.measuredGpuNs = carry(base.measuredGpuNs, *scenario, applied->scenario, applied->modelled);
    changedOptions.measuredHostNs = carry(base.measuredHostNs, *scenario, applied->scenario, applied->modelled);
    changedOptions.measuredHostGapNs = carry(base.measuredHostGapNs, *scenario, applied->scenario, {});
    changedOptions.measuredStreamGapNs = carry(base.measuredStreamGapNs, *scenario, applied->scenario, {});
    countMeasured(applied->scenario, changedOptions, r);
    if (options.settings.empty()) {
        r.changed = unchanged;
    } else {
        auto t = simulate(applied->scenario, changedOptions, options.cancel);
        if (!t)
            return t.error();
        r.changed = std::move(t).value();
    }
    r.notes = std::move(applied->notes);
    if (recorded.info.source == TraceSource::CudaEvents)
        r.notes.push_back("the recording is timed with CUDA events: a span starts when its stream reached the op, so "
                          "an op that waited there for SMs or a copy engine carries that wait as its own time "
                          "(docs/TRACE.md, Timing); CUPTI recordings measure the ops themselves");
    if (measured.skippedSpans > 0)
        r.notes.push_back(std::to_string(measured.skippedSpans)
                          + " recorded spans were left out of the measurements (an uncertain start under event "
                            "timing, or no scenario op to match)");

    const std::string recordedFrom = recorded.info.scenarioId
        + (recorded.info.date.empty() ? "" : ", recorded " + recorded.info.date)
        + (file.empty() ? "" : " (" + file + ")");
    for (Trace* t : {&unchanged, &r.changed}) {
        t->info.settings.emplace_back("replay_of", recordedFrom);
        t->info.settings.emplace_back("replay_durations",
                                      "measured in the recording (median per op); kernels fitted in "
                                          + std::to_string(r.fitPasses) + " simulations");
    }
    r.changed.info.settings.emplace_back("replay_settings", replaySettingsText(options.settings));
    r.unchanged = std::move(unchanged);
    r.comparison = compareTraces(recorded, r.changed);
    return r;
}

std::string replayErrorLine(const ReplayResult& r)
{
    std::string s = "replay of the unchanged run: makespan " + formatDuration(r.replayMakespanNs) + " against "
        + formatDuration(r.recordedMakespanNs) + " recorded (" + signedPercent(r.makespanError) + ")";
    if (r.untimedMakespanNs > 0)
        s += "; host makespan " + formatDuration(r.replayHostMakespanNs) + " against the untimed run's "
            + formatDuration(r.untimedMakespanNs) + " (" + signedPercent(r.untimedError) + ")";
    else
        s += "; the recording has no untimed run";
    return s;
}

std::string replayReport(const ReplayResult& r, const std::string& recordedName)
{
    std::string out = replayErrorLine(r) + "\n";
    out += "durations: " + std::to_string(r.gpuOpsMeasured) + " of " + std::to_string(r.gpuOps) + " GPU ops and "
        + std::to_string(r.hostCallsMeasured) + " of " + std::to_string(r.hostCalls)
        + " host calls measured (median per op), the rest modelled; kernels fitted in " + std::to_string(r.fitPasses)
        + " simulation" + (r.fitPasses == 1 ? "" : "s") + "\n";
    for (const auto& n : r.notes)
        out += "  " + n + "\n";
    const std::string changed = "replay (" + replaySettingsText(r.settings) + ")";
    if (!r.settings.empty()) {
        const int64_t b = computeMetrics(r.changed).makespanNs;
        out += "the change in the replay: makespan " + formatDuration(r.replayMakespanNs) + " -> " + formatDuration(b)
            + " (" + signedPercent(r.replayMakespanNs > 0 ? double(b) / double(r.replayMakespanNs) - 1.0 : 0.0) + ")\n";
    }
    out += "\n" + comparisonReport(r.comparison, recordedName, changed);
    return out;
}

std::string replayToJson(const ReplayResult& r, int indent)
{
    OrderedJson j;
    j["replay_error"] = {
        {"recorded_makespan_ns", r.recordedMakespanNs},
        {"replay_makespan_ns", r.replayMakespanNs},
        {"makespan_error", finite(r.makespanError)},
        {"untimed_makespan_ns", r.untimedMakespanNs},
        {"replay_host_makespan_ns", r.replayHostMakespanNs},
        {"untimed_error", r.untimedMakespanNs > 0 ? OrderedJson(finite(r.untimedError)) : OrderedJson(nullptr)},
    };
    auto settings = OrderedJson::array();
    for (const auto& s : r.settings)
        settings.push_back({{"key", s.key}, {"value", s.value}});
    j["settings"] = std::move(settings);
    j["durations"] = {
        {"gpu_ops", r.gpuOps},       {"gpu_ops_measured", r.gpuOpsMeasured},
        {"host_calls", r.hostCalls}, {"host_calls_measured", r.hostCallsMeasured},
        {"fit_passes", r.fitPasses},
    };
    j["notes"] = r.notes;
    const int64_t changed = computeMetrics(r.changed).makespanNs;
    j["changed"] = {
        {"makespan_ns", changed},
        {"relative_to_unchanged_replay", r.replayMakespanNs > 0 ? double(changed) / double(r.replayMakespanNs) : 0.0},
    };
    ReportOptions ro;
    ro.indent = -1;
    j["comparison"] = OrderedJson::parse(comparisonToJson(r.comparison, ro));
    return dumpJson(j, indent);
}

} // namespace streamscope
