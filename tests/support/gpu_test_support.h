// Helpers of the GPU tests: the probe that skips a test visibly when no GPU is usable, scenario builders, and
// queries on traces.
#pragma once

#include "cuda_backend.h"
#include "runner.h"
#include "scenario.h"
#include "scenario_json.h"
#include "trace.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace streamscope::gputest {

inline const CudaProbe& probe()
{
    static const CudaProbe p = probeCuda();
    return p;
}

// Skips the test, with the reason in the output (ctest reports it as skipped), when no GPU is usable.
#define STREAMSCOPE_REQUIRE_GPU()                                                                                      \
    do {                                                                                                               \
        if (!::streamscope::gputest::probe().usable)                                                                   \
            GTEST_SKIP() << "no usable GPU: " << ::streamscope::gputest::probe().reason;                               \
    } while (0)

// ---- scenario builders (validated before use, so names resolve as in a scenario file) ----------------------

inline StreamSpec stream(std::string name, StreamKind kind, int device = 0, int priority = 0)
{
    StreamSpec s;
    s.name = std::move(name);
    s.kind = kind;
    s.device = device;
    s.priority = priority;
    return s;
}

inline Op spin(std::string streamName, double us, uint32_t grid = 1, uint32_t block = 32, std::string name = {})
{
    Op op;
    op.kind = OpKind::Kernel;
    op.kernel = KernelKind::Spin;
    op.stream = std::move(streamName);
    op.durationUs = us;
    op.grid = Dim3{grid, 1, 1};
    op.gridGiven = true;
    op.block = Dim3{block, 1, 1};
    op.name = std::move(name);
    return op;
}

inline Op kernel(std::string streamName, KernelKind k, int64_t size, Dim3 block, std::string name = {})
{
    Op op;
    op.kind = OpKind::Kernel;
    op.kernel = k;
    op.stream = std::move(streamName);
    op.size = size;
    op.block = block;
    op.name = std::move(name);
    if (k == KernelKind::Fma) {
        op.grid = Dim3{4, 1, 1};
        op.gridGiven = true;
    }
    return op;
}

inline Op copy(std::string streamName, CopyKind kind, int64_t bytes, bool pinned = true, int dstDevice = -1)
{
    Op op;
    op.kind = OpKind::Memcpy;
    op.stream = std::move(streamName);
    op.copy = kind;
    op.bytes = bytes;
    op.pinned = pinned;
    op.dstDevice = dstDevice;
    return op;
}

inline Op simple(OpKind kind, std::string streamName = {}, std::string event = {})
{
    Op op;
    op.kind = kind;
    op.stream = std::move(streamName);
    op.event = std::move(event);
    return op;
}

inline Op withBytes(Op op, int64_t bytes)
{
    op.bytes = bytes;
    return op;
}

inline Op withDuration(Op op, double us)
{
    op.durationUs = us;
    return op;
}

inline Op graph(std::string streamName, std::vector<Op> nodes, std::string name = {})
{
    Op op;
    op.kind = OpKind::Graph;
    op.stream = streamName;
    for (auto& n : nodes)
        n.stream = streamName;
    op.ops = std::move(nodes);
    op.name = std::move(name);
    return op;
}

inline ThreadSpec thread(std::string name, std::vector<Op> ops, int device = 0, int repeat = 1, int workers = 1)
{
    ThreadSpec t;
    t.name = std::move(name);
    t.ops = std::move(ops);
    t.device = device;
    t.repeat = repeat;
    t.workers = workers;
    return t;
}

inline Scenario scenario(std::string id, std::vector<StreamSpec> streams, std::vector<ThreadSpec> threads,
                         std::vector<int> devices = {0})
{
    Scenario s;
    s.id = std::move(id);
    s.title = s.id;
    for (int d : devices)
        s.devices.push_back(DeviceSpec{d, {}});
    s.streams = std::move(streams);
    s.threads = std::move(threads);
    return s;
}

// Resolves stream and event names; fails the test on a scenario the validator rejects.
inline Scenario validated(const Scenario& s)
{
    auto r = validateScenario(s);
    if (!r.ok()) {
        ADD_FAILURE() << "scenario " << s.id << " does not validate: " << r.error().toString();
        return s;
    }
    return r->scenario;
}

// The backend's own tests time with CUDA events unless they say otherwise (tst_cuda_timing covers every mode).
inline CudaBackendOptions eventTiming()
{
    CudaBackendOptions o;
    o.timing = TimingMode::Events;
    return o;
}

inline RunOutcome runOnGpu(const Scenario& s, const CudaBackendOptions& options = eventTiming())
{
    auto backend = makeCudaBackend(options);
    return runScenario(s, *backend);
}

// ---- trace queries ----------------------------------------------------------------------------------------

struct SpanRef {
    uint32_t index = 0;
    int64_t start = 0;
    int64_t end = 0;
};

// Spans of one track (by stream or host-thread name), optionally of one kind, in start order.
inline std::vector<SpanRef> spansOn(const Trace& t, std::string_view trackName, std::optional<SpanKind> kind = {})
{
    std::vector<SpanRef> out;
    for (uint32_t tr = 0; tr < t.tracks.size(); ++tr) {
        if (t.tracks[tr].name != trackName)
            continue;
        for (uint32_t i = t.trackBegin(tr); i < t.trackEnd(tr); ++i)
            if (!kind || t.spans.kind[i] == *kind)
                out.push_back({i, t.spans.start[i], t.spans.end[i]});
    }
    return out;
}

inline size_t countSpans(const Trace& t, SpanKind kind)
{
    size_t n = 0;
    for (size_t i = 0; i < t.spanCount(); ++i)
        n += t.spans.kind[i] == kind;
    return n;
}

inline size_t countSpansNamed(const Trace& t, std::string_view name)
{
    size_t n = 0;
    for (uint32_t i = 0; i < t.spanCount(); ++i)
        n += t.spanName(i) == name;
    return n;
}

inline size_t countFlows(const Trace& t, FlowKind kind)
{
    size_t n = 0;
    for (const auto& f : t.flows)
        n += f.kind == kind;
    return n;
}

inline std::string_view trackOf(const Trace& t, uint32_t span)
{
    return t.tracks[t.spans.track[span]].name;
}

// Flows of a kind from a span on track `from` to a span on track `to`.
inline size_t countFlowsBetween(const Trace& t, FlowKind kind, std::string_view from, std::string_view to)
{
    size_t n = 0;
    for (const auto& f : t.flows)
        n += f.kind == kind && trackOf(t, f.from) == from && trackOf(t, f.to) == to;
    return n;
}

// Time during which both sets of intervals are busy, over the time the shorter-busy one is busy.
inline double overlapFraction(const std::vector<SpanRef>& a, const std::vector<SpanRef>& b)
{
    auto busy = [](const std::vector<SpanRef>& v) {
        int64_t s = 0;
        for (const auto& x : v)
            s += x.end - x.start;
        return s;
    };
    int64_t both = 0;
    for (const auto& x : a)
        for (const auto& y : b)
            both += std::max<int64_t>(0, std::min(x.end, y.end) - std::max(x.start, y.start));
    const int64_t shorter = std::min(busy(a), busy(b));
    return shorter > 0 ? double(both) / double(shorter) : 0.0;
}

inline std::string settingOf(const RunInfo& info, std::string_view key)
{
    for (const auto& [k, v] : info.settings)
        if (k == key)
            return v;
    return {};
}

} // namespace streamscope::gputest
