#include "whatif.h"

#include "metrics.h"
#include "runner.h"
#include "scenario_json.h"
#include "stream_spread.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

namespace streamscope {

namespace {

using OrderedJson = nlohmann::ordered_json;

double ratio(double num, double den)
{
    return den > 0 ? num / den : 0.0;
}
double finite(double v)
{
    return std::isfinite(v) ? v : 0.0;
}

std::string num(double v, const char* fmt = "%.2f")
{
    char buf[64];
    std::snprintf(buf, sizeof buf, fmt, finite(v));
    return buf;
}

std::string dumpJson(const OrderedJson& j, int indent)
{
    return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

} // namespace

// ---- sweeps -----------------------------------------------------------------------------------------------------

std::string_view toString(SweepKnob k)
{
    switch (k) {
    case SweepKnob::Streams: return "streams";
    case SweepKnob::Chunks: return "chunks";
    case SweepKnob::KernelSize: return "kernel-size";
    }
    return "?";
}

std::optional<SweepKnob> sweepKnobFromString(std::string_view s)
{
    for (SweepKnob k : {SweepKnob::Streams, SweepKnob::Chunks, SweepKnob::KernelSize})
        if (toString(k) == s)
            return k;
    if (s == "kernel_size" || s == "size")
        return SweepKnob::KernelSize;
    return std::nullopt;
}

std::vector<double> defaultSweepValues(SweepKnob knob)
{
    switch (knob) {
    case SweepKnob::Streams: {
        std::vector<double> v;
        for (int i = 1; i <= 16; ++i)
            v.push_back(i);
        return v;
    }
    case SweepKnob::Chunks: return {1, 2, 4, 8, 16};
    case SweepKnob::KernelSize: return {0.25, 0.5, 1, 2, 4};
    }
    return {};
}

void scaleKernelWork(Op& op, double f, int spinDecimals)
{
    if (op.kind != OpKind::Kernel)
        return;
    const auto scaledSize = [&](double work) {
        if (op.size > 0)
            op.size = std::max<int64_t>(1, std::llround(double(op.size) * work));
    };
    switch (op.kernel) {
    case KernelKind::Spin:
        op.durationUs *= f;
        if (spinDecimals >= 0) {
            const double scale = std::pow(10.0, spinDecimals);
            op.durationUs = std::max(1.0 / scale, std::round(op.durationUs * scale) / scale);
        }
        break;
    case KernelKind::Empty: break;
    case KernelKind::Matmul: scaledSize(std::cbrt(f)); break;    // n^3 work
    case KernelKind::Transpose: scaledSize(std::sqrt(f)); break; // n^2 work
    case KernelKind::Fma:
    case KernelKind::Triad:
    case KernelKind::Reduce: scaledSize(f); break;
    }
}

namespace {

constexpr int64_t kMaxUnrolledOps = 100000;

// Scales the work of one op (graph nodes included) by `f`: kernels by scaleKernelWork, copy sizes and host
// durations linearly.
void scaleOp(Op& op, double f, bool kernelsOnly)
{
    for (auto& node : op.ops)
        scaleOp(node, f, kernelsOnly);
    if (op.kind == OpKind::Kernel) {
        scaleKernelWork(op, f);
        return;
    }
    if (kernelsOnly)
        return;
    if (op.kind == OpKind::Memcpy || op.kind == OpKind::Memset)
        op.bytes = std::max<int64_t>(1, std::llround(double(op.bytes) * f));
    if (op.kind == OpKind::HostFunc || op.kind == OpKind::HostWork)
        op.durationUs *= f;
}

// The streams sweep (and a replay's streams=N): the scenario's ordinary streams replaced by N new ones per device,
// named s0..s<N-1>, and its chains of stream work (consecutive ops of a thread in one stream) dealt to them
// round-robin across all threads, repeats unrolled so that they are dealt too. Not the quick controls'
// streams-per-thread knob (ui/editor/quick_settings.cpp, spreadChunksOverStreams), which keeps each thread's own
// streams and names and adds or drops streams per thread; both deal chains by the one rule of stream_spread.h. The
// sweep asks "what would N streams do for this work", the knob edits the scenario the user keeps.
Result<Scenario> dealChainsToNewStreams(const Scenario& in, int n)
{
    Scenario out = in;
    out.variants.clear();
    out.expect.clear();
    // One template per device: the first ordinary stream there.
    std::map<int, StreamSpec> templates;
    for (const auto& s : in.streams)
        if (isCreatedStream(s.kind) && !templates.count(s.device))
            templates[s.device] = s;
    if (templates.empty())
        return Error{{}, "/streams", "the scenario has no blocking or non-blocking stream to multiply"};

    std::vector<StreamSpec> streams;
    std::set<std::string> taken;
    for (const auto& s : in.streams)
        if (!isCreatedStream(s.kind)) {
            streams.push_back(s);
            taken.insert(s.name);
        }
    std::map<int, std::vector<std::string>> newNames; // per device
    const bool oneDevice = templates.size() == 1;
    for (const auto& [device, tmpl] : templates)
        for (int k = 0; k < n; ++k) {
            std::string name = (oneDevice ? "" : "d" + std::to_string(device)) + "s" + std::to_string(k);
            while (taken.count(name))
                name += "'";
            taken.insert(name);
            StreamSpec s = tmpl;
            s.name = name;
            streams.push_back(s);
            newNames[device].push_back(name);
        }

    std::map<int, int> next; // per device: the next stream to deal a chain to
    const ChainDealer deal = [&](const std::string&, int device) {
        const auto& names = newNames[device];
        return names[size_t(next[device]++ % int(names.size()))];
    };
    for (auto& t : out.threads) {
        const int repeat = std::max(1, t.repeat);
        if (t.workers <= 1 && repeat > 1 && int64_t(t.ops.size()) * repeat <= kMaxUnrolledOps) {
            // Unrolled, so that the repeats of the op list are dealt to different streams too.
            std::vector<Op> ops;
            ops.reserve(t.ops.size() * size_t(repeat));
            for (int r = 0; r < repeat; ++r)
                ops.insert(ops.end(), t.ops.begin(), t.ops.end());
            t.ops = std::move(ops);
            t.repeat = 1;
        }
        spreadChains(in, t.ops, deal);
    }
    out.streams = std::move(streams);
    auto valid = validateScenario(std::move(out), in.id.empty() ? std::string("sweep") : in.id);
    if (!valid)
        return valid.error();
    return std::move(valid->scenario);
}

} // namespace

Result<Scenario> sweepScenario(const Scenario& scenario, SweepKnob knob, double value, int thread, bool keepTotalWork)
{
    if (!std::isfinite(value) || value <= 0)
        return Error{{}, {}, "sweep value must be positive (got " + num(value, "%g") + ")"};
    if (thread >= int(scenario.threads.size()))
        return Error{{}, "/threads", "no thread " + std::to_string(thread) + " in the scenario"};
    auto selected = [thread](size_t t) { return thread < 0 || size_t(thread) == t; };
    switch (knob) {
    case SweepKnob::Streams: {
        const long n = std::lround(value);
        if (n < 1 || n > kMaxSweepStreams)
            return Error{{}, {}, "number of streams must be 1.." + std::to_string(kMaxSweepStreams)};
        return dealChainsToNewStreams(scenario, int(n));
    }
    case SweepKnob::Chunks: {
        const long n = std::lround(value);
        if (n < 1 || n > 1'000'000)
            return Error{{}, {}, "number of chunks must be 1..1000000"};
        Scenario out = scenario;
        out.variants.clear();
        for (size_t t = 0; t < out.threads.size(); ++t) {
            if (!selected(t))
                continue;
            auto& th = out.threads[t];
            const int old = std::max(1, th.repeat);
            th.repeat = int(n);
            if (keepTotalWork)
                for (auto& op : th.ops)
                    scaleOp(op, double(old) / double(n), false);
        }
        auto valid = validateScenario(std::move(out), scenario.id.empty() ? std::string("sweep") : scenario.id);
        if (!valid)
            return valid.error();
        return std::move(valid->scenario);
    }
    case SweepKnob::KernelSize: {
        Scenario out = scenario;
        out.variants.clear();
        for (size_t t = 0; t < out.threads.size(); ++t)
            if (selected(t))
                for (auto& op : out.threads[t].ops)
                    scaleOp(op, value, true);
        auto valid = validateScenario(std::move(out), scenario.id.empty() ? std::string("sweep") : scenario.id);
        if (!valid)
            return valid.error();
        return std::move(valid->scenario);
    }
    }
    return Error{{}, {}, "unknown sweep knob"};
}

Result<std::vector<Scenario>> sweepScenarios(const Scenario& scenario, const SweepSpec& spec)
{
    std::vector<Scenario> out;
    const auto values = spec.values.empty() ? defaultSweepValues(spec.knob) : spec.values;
    for (double v : values) {
        auto s = sweepScenario(scenario, spec.knob, v, spec.thread, spec.keepTotalWork);
        if (!s) {
            Error e = s.error();
            e.message = std::string(toString(spec.knob)) + " = " + num(v, "%g") + ": " + e.message;
            return e;
        }
        out.push_back(std::move(*s));
    }
    return out;
}

std::vector<SweepPoint> runSweep(const Scenario& scenario, const SweepSpec& spec, const SimulatorOptions& simulator,
                                 const std::atomic<bool>* cancel)
{
    std::vector<SweepPoint> points;
    const auto values = spec.values.empty() ? defaultSweepValues(spec.knob) : spec.values;
    for (double v : values) {
        if (cancel && cancel->load())
            break;
        SweepPoint p;
        p.value = v;
        auto s = sweepScenario(scenario, spec.knob, v, spec.thread, spec.keepTotalWork);
        if (!s) {
            p.error = s.error().toString();
        } else {
            SimulatorBackend sim(simulator);
            RunOptions ro;
            ro.cancel = cancel;
            auto out = runScenario(*s, sim, ro);
            if (!out.status) {
                p.error = out.status.error().toString();
            } else {
                const TraceMetrics m = computeMetrics(out.trace);
                p.makespanNs = m.makespanNs;
                p.speedup = m.speedup;
                p.maxConcurrency = m.maxConcurrency;
                p.gpuWorkNs = m.gpuWorkNs;
            }
        }
        points.push_back(std::move(p));
    }
    setRelativeSpeedups(points);
    return points;
}

void setRelativeSpeedups(std::vector<SweepPoint>& points)
{
    int64_t base = 0;
    for (const auto& p : points)
        if (p.error.empty() && p.makespanNs > 0) {
            base = p.makespanNs;
            break;
        }
    for (auto& p : points)
        p.relativeSpeedup = p.error.empty() ? ratio(double(base), double(p.makespanNs)) : 0.0;
}

std::string sweepToJson(const SweepSpec& spec, const std::vector<SweepPoint>& points, int indent)
{
    OrderedJson j;
    j["knob"] = std::string(toString(spec.knob));
    if (spec.thread >= 0)
        j["thread"] = spec.thread;
    auto list = OrderedJson::array();
    for (const auto& p : points) {
        OrderedJson jp;
        jp["value"] = p.value;
        if (!p.error.empty()) {
            jp["error"] = p.error;
        } else {
            jp["makespan_ns"] = p.makespanNs;
            jp["speedup"] = finite(p.speedup);
            jp["relative_speedup"] = finite(p.relativeSpeedup);
            jp["max_concurrency"] = p.maxConcurrency;
            jp["gpu_work_ns"] = p.gpuWorkNs;
        }
        list.push_back(std::move(jp));
    }
    j["points"] = std::move(list);
    return dumpJson(j, indent);
}

} // namespace streamscope
