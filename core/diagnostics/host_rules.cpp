// Problem rules: what the host did that held the GPU back — copies from pageable memory, a synchronization after
// nearly every launch, operations shorter than their launches, calls that synchronize the device implicitly, and
// waits on events that are never recorded.
#include "diagnostics_context.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <set>

namespace streamscope::diag {

// ---- pageable-memcpy --------------------------------------------------------------------------------------------

namespace {

// In traces without launch flows: the host memcpy call that overlaps the copy most (binary search per host track).
uint32_t copyCall(const Context& c, uint32_t copy)
{
    uint32_t best = kNone;
    int64_t bestCovered = 0;
    const int dev = c.device(copy);
    for (uint32_t tr = 0; tr < c.t.tracks.size(); ++tr) {
        const Track& track = c.t.tracks[tr];
        if (track.kind != TrackKind::HostThread || (track.device >= 0 && dev >= 0 && track.device != dev))
            continue;
        const auto b = c.starts().begin() + c.t.trackBegin(tr);
        const auto e = c.starts().begin() + c.t.trackEnd(tr);
        auto pos = std::lower_bound(b, e, c.end(copy));
        for (int steps = 0; pos != b && steps < 8; ++steps) {
            --pos;
            const auto h = uint32_t(pos - c.starts().begin());
            if (c.end(h) <= c.start(copy))
                break;
            const std::string_view name = c.t.spanName(h);
            const bool memcpyCall = name.starts_with("cudaMemcpy") || name.starts_with("cuMemcpy");
            if (c.t.spans.kind[h] != SpanKind::ApiCall || !memcpyCall)
                continue;
            const int64_t covered = std::min(c.end(h), c.end(copy)) - std::max(c.start(h), c.start(copy));
            if (covered > bestCovered) {
                best = h;
                bestCovered = covered;
            }
        }
    }
    return best;
}

} // namespace

void pageableMemcpy(const Context& c, std::vector<Diagnostic>& out)
{
    std::vector<uint32_t> copies, spans;
    std::vector<std::string> names;
    int64_t byScenario = 0, blocking = 0;
    uint32_t example = kNone, exampleCall = kNone;
    for (uint32_t i = 0; i < c.n; ++i) {
        const SpanKind k = c.t.spans.kind[i];
        if ((k != SpanKind::MemcpyH2D && k != SpanKind::MemcpyD2H) || !c.onStream(i))
            continue;
        const uint32_t api = c.launchOf[i] != kNone ? c.launchOf[i] : (c.anyLaunch ? kNone : copyCall(c, i));
        bool blocked = false;
        if (api != kNone) {
            const int64_t covered = std::min(c.end(api), c.end(i)) - std::max(c.start(api), c.start(i));
            blocked =
                c.dur(api) >= c.th.pageableMinCallNs && double(covered) >= c.th.pageableCallCoverage * double(c.dur(i));
        }
        const Op* op = c.scenarioOp(i);
        const bool pageable =
            op && op->kind == OpKind::Memcpy && !op->pinned && (op->copy == CopyKind::H2D || op->copy == CopyKind::D2H);
        if (!blocked && !pageable)
            continue;
        blocking += blocked;
        byScenario += pageable;
        copies.push_back(i);
        spans.push_back(i);
        if (api != kNone)
            spans.push_back(api);
        if (blocked && example == kNone) {
            example = i;
            exampleCall = api;
        }
        names.push_back(c.label(i));
    }
    if (copies.empty())
        return;
    std::string msg = plural(int64_t(copies.size()), "copy", "copies") + " ";
    if (blocking > 0) {
        const uint32_t api = exampleCall;
        msg += "blocked the host thread: " + std::string(c.t.spanName(api)) + " for " + c.label(example)
            + " returned only when the copy was done (a " + c.at(c.dur(api)) + " call for a " + c.at(c.dur(example))
            + " copy)";
        if (copies.size() > 1)
            msg += ", and likewise "
                + joinNames(std::vector<std::string>(names.begin() + 1, names.end()), c.o.maxNamedSpans);
        if (byScenario > 0)
            msg += "; the scenario uses pageable host memory for "
                + (byScenario == int64_t(copies.size()) ? std::string("all of them")
                                                        : std::to_string(byScenario) + " of them");
        msg += ", so the runtime stages each copy and cudaMemcpyAsync behaves synchronously: nothing overlaps them.";
    } else {
        msg += "(" + joinNames(names, c.o.maxNamedSpans)
            + ") use pageable host memory, which makes cudaMemcpyAsync stage the copy and return only when it is done.";
    }
    out.push_back(c.make("pageable-memcpy", std::move(msg), std::move(spans)));
}

// ---- sync-in-loop -----------------------------------------------------------------------------------------------

void syncInLoop(const Context& c, std::vector<Diagnostic>& out)
{
    // What each launch call enqueued, to find "the next operation" after a sync.
    std::vector<uint32_t> launched(c.n, kNone);
    for (uint32_t i = 0; i < c.n; ++i)
        if (c.launchOf[i] != kNone && launched[c.launchOf[i]] == kNone)
            launched[c.launchOf[i]] = i;
    for (uint32_t tr = 0; tr < c.t.tracks.size(); ++tr) {
        if (c.t.tracks[tr].kind != TrackKind::HostThread)
            continue;
        const uint32_t b = c.t.trackBegin(tr), e = c.t.trackEnd(tr);
        if (b == e)
            continue;
        int64_t launches = 0, syncs = 0, followed = 0;
        bool pending = false; // a launch not yet followed by a sync
        std::vector<uint32_t> syncSpans;
        for (uint32_t i = b; i < e; ++i) {
            const SpanKind k = c.t.spans.kind[i];
            if (k == SpanKind::ApiCall && launched[i] != kNone) {
                ++launches;
                pending = true;
            } else if (k == SpanKind::Sync) {
                ++syncs;
                syncSpans.push_back(i);
                if (pending)
                    ++followed;
                pending = false;
            }
        }
        if (syncs < c.th.minSyncs || launches == 0
            || double(followed) < c.th.syncAfterLaunchFraction * double(launches))
            continue;
        // GPU idle between each sync's release and this thread's next GPU operation.
        int64_t idle = 0;
        int device = -1;
        std::vector<uint32_t> spans;
        uint32_t example = kNone, exampleAwaited = kNone, exampleNext = kNone;
        int64_t exampleGap = 0;
        for (uint32_t s : syncSpans) {
            uint32_t next = kNone;
            for (uint32_t j = s + 1; j < e && next == kNone; ++j)
                if (launched[j] != kNone)
                    next = launched[j];
            if (next == kNone)
                continue;
            int64_t released = kMinTime;
            uint32_t awaited = kNone;
            for (uint32_t k : c.in.of(s)) {
                const Flow& f = c.t.flows[k];
                if (f.kind == FlowKind::Sync && f.from < c.n && c.end(f.from) > released) {
                    released = c.end(f.from);
                    awaited = f.from;
                }
            }
            if (released == kMinTime)
                released = c.end(s);
            device = c.device(next);
            const int64_t gap = idleWithin(c.deviceBusy(device), released, c.start(next));
            if (gap > 0) {
                idle += gap;
                spans.push_back(s);
                if (awaited != kNone)
                    spans.push_back(awaited);
                if (example == kNone) {
                    example = s;
                    exampleAwaited = awaited;
                    exampleNext = next;
                    exampleGap = gap;
                }
            }
        }
        const int64_t active = c.end(e - 1) - c.start(b);
        int64_t threadEnd = kMinTime, threadStart = std::numeric_limits<int64_t>::max();
        for (uint32_t i = b; i < e; ++i) {
            threadEnd = std::max(threadEnd, c.end(i));
            threadStart = std::min(threadStart, c.start(i));
        }
        const int64_t range = std::max(active, threadEnd - threadStart);
        if (example == kNone || range <= 0 || double(idle) < c.th.syncIdleFraction * double(range))
            continue;
        std::string msg = "Host thread " + c.t.tracks[tr].name + " synchronizes after nearly every launch ("
            + plural(syncs, "sync", "syncs") + " for " + plural(launches, "launch", "launches") + "), and device "
            + std::to_string(device) + " sat idle " + c.at(idle) + " ("
            + std::to_string(int(std::lround(100.0 * double(idle) / double(range))))
            + "% of the thread's time) between each sync's return and the thread's next GPU operation: e.g. "
            + std::string(c.t.spanName(example)) + " at " + c.when(c.start(example))
            + (exampleAwaited != kNone ? " waited for " + c.label(exampleAwaited) + ", and the GPU stayed idle "
                                       : std::string(" returned, and the GPU stayed idle "))
            + c.at(exampleGap) + " until " + c.label(exampleNext) + " started.";
        out.push_back(c.make("sync-in-loop", std::move(msg), std::move(spans)));
    }
}

// ---- launch-bound -----------------------------------------------------------------------------------------------

void launchBound(const Context& c, std::vector<Diagnostic>& out)
{
    struct Acc {
        int64_t launched = 0, shortOnes = 0, gpuNs = 0, callNs = 0;
        int64_t first = std::numeric_limits<int64_t>::max(), last = kMinTime;
        int device = -1;
        std::vector<uint32_t> spans;
        uint32_t example = kNone;
    };
    // The GPU work a launch call issued: its operation, and the following operations in that stream that no call
    // launched (the other nodes of a graph).
    std::vector<int64_t> workOf(c.n, 0);
    for (uint32_t tr = 0; tr < c.t.tracks.size(); ++tr) {
        if (c.t.tracks[tr].kind != TrackKind::Stream)
            continue;
        uint32_t head = kNone;
        for (uint32_t i = c.t.trackBegin(tr); i < c.t.trackEnd(tr); ++i) {
            if (!isGpuSpan(c.t.spans.kind[i]))
                continue;
            if (c.launchOf[i] != kNone)
                head = i;
            if (head != kNone)
                workOf[head] += c.effDur(i);
        }
    }
    std::map<uint32_t, Acc> perThread; // host track -> its launches
    for (uint32_t i = 0; i < c.n; ++i) {
        const uint32_t api = c.launchOf[i];
        if (api == kNone || !c.gpuOnStream(i))
            continue;
        Acc& a = perThread[c.t.spans.track[api]];
        ++a.launched;
        if (workOf[i] >= c.dur(api))
            continue;
        ++a.shortOnes;
        a.gpuNs += workOf[i];
        a.callNs += c.dur(api);
        a.first = std::min(a.first, c.effStart(i));
        a.last = std::max(a.last, c.end(i));
        a.device = c.device(i);
        a.spans.push_back(i);
        if (a.example == kNone)
            a.example = i;
    }
    for (auto& [track, a] : perThread) {
        if (a.shortOnes < c.th.minShortLaunches || double(a.shortOnes) < c.th.shortLaunchFraction * double(a.launched))
            continue;
        const int64_t idle = idleWithin(c.deviceBusy(a.device), a.first, a.last);
        const double idleFraction = a.last > a.first ? double(idle) / double(a.last - a.first) : 0.0;
        if (idleFraction < c.th.launchIdleFraction)
            continue;
        const uint32_t api = c.launchOf[a.example];
        std::string msg = "Host thread " + c.t.tracks[track].name + " launched "
            + plural(a.shortOnes, "GPU operation", "GPU operations") + " shorter than the calls that issued them (e.g. "
            + c.label(a.example) + ": " + c.at(a.gpuNs / a.shortOnes) + " on the GPU on average, "
            + c.at(a.callNs / a.shortOnes) + " per " + std::string(c.t.spanName(api)) + "), so device "
            + std::to_string(a.device) + " sat idle " + std::to_string(int(std::lround(100.0 * idleFraction)))
            + "% of that time (" + c.at(idle) + ") waiting for launches.";
        out.push_back(c.make("launch-bound", std::move(msg), std::move(a.spans)));
    }
}

// ---- implicit-sync ----------------------------------------------------------------------------------------------

namespace {

bool isImplicitlySyncingCall(std::string_view name)
{
    static const std::set<std::string_view> calls = {
        "cudaMalloc",    "cudaFree",         "cudaMallocHost",     "cudaFreeHost",
        "cudaHostAlloc", "cudaHostRegister", "cudaHostUnregister", "cudaMallocPitch",
        "cudaMalloc3D",  "cudaMallocArray",  "cudaFreeArray",      "cuMemAlloc",
        "cuMemFree",     "cuMemAllocHost",   "cuMemFreeHost",      "cuMemHostAlloc",
    };
    return calls.count(name) > 0 || calls.count(name.substr(0, name.find("_v"))) > 0;
}

} // namespace

void implicitSync(const Context& c, std::vector<Diagnostic>& out)
{
    struct Hit {
        uint32_t call;
        std::vector<uint32_t> drained; // GPU work it waited for
        int64_t blockedNs;
        int64_t idleAfterNs;
    };
    std::vector<Hit> hits;
    // Whether each distinct name is an implicitly synchronizing call (-1: not looked up yet): a set lookup per API
    // call span was most of this rule's time on a 1.5 M-span trace, which has a few distinct names.
    std::vector<signed char> syncing(c.t.strings.size(), -1);
    auto implicitlySyncing = [&](uint32_t h) {
        signed char& known = syncing[c.t.spans.name[h]];
        if (known < 0)
            known = isImplicitlySyncingCall(c.t.spanName(h)) ? 1 : 0;
        return known == 1;
    };
    for (uint32_t tr = 0; tr < c.t.tracks.size(); ++tr) {
        if (c.t.tracks[tr].kind != TrackKind::HostThread)
            continue;
        for (uint32_t h = c.t.trackBegin(tr); h < c.t.trackEnd(tr); ++h) {
            if (c.t.spans.kind[h] != SpanKind::ApiCall)
                continue;
            std::vector<uint32_t> drained;
            int64_t lastEnd = kMinTime;
            for (uint32_t k : c.in.of(h)) {
                const Flow& f = c.t.flows[k];
                if (f.kind != FlowKind::Implicit || f.from >= c.n || !isGpuSpan(c.t.spans.kind[f.from]))
                    continue;
                if (c.end(f.from) > c.start(h)) {
                    drained.push_back(f.from);
                    lastEnd = std::max(lastEnd, c.end(f.from));
                }
            }
            if (drained.empty() && !c.anyImplicit && implicitlySyncing(h)) {
                // No flows: the GPU work of its device that was pending or running during the call and ended
                // inside it.
                const int dev = c.t.tracks[tr].device;
                for (uint32_t st = 0; st < c.t.tracks.size(); ++st) {
                    if (c.t.tracks[st].kind != TrackKind::Stream || (dev >= 0 && c.t.tracks[st].device != dev))
                        continue;
                    const auto b = c.starts().begin() + c.t.trackBegin(st);
                    const auto e = c.starts().begin() + c.t.trackEnd(st);
                    auto pos = std::lower_bound(b, e, c.end(h));
                    for (int steps = 0; pos != b && steps < 64; ++steps) {
                        --pos;
                        const auto i = uint32_t(pos - c.starts().begin());
                        if (c.end(i) <= c.start(h))
                            break;
                        if (isGpuSpan(c.t.spans.kind[i]) && c.end(i) <= c.end(h)) {
                            drained.push_back(i);
                            lastEnd = std::max(lastEnd, c.end(i));
                        }
                    }
                }
            }
            if (drained.empty())
                continue;
            const int64_t blocked = std::min(lastEnd, c.end(h)) - c.start(h);
            if (blocked < c.th.implicitMinBlockNs)
                continue;
            const int dev = c.device(drained.front());
            // The device drained: idle from the call's end until its next GPU operation.
            const auto& b = c.deviceBusy(dev);
            auto next = std::partition_point(b.begin(), b.end(), [&](const Interval& x) { return x.end <= c.end(h); });
            int64_t idleAfter = 0;
            if (next != b.end() && next->start > c.end(h))
                idleAfter = next->start - c.end(h);
            hits.push_back({h, std::move(drained), blocked, idleAfter});
        }
    }
    if (hits.empty())
        return;
    std::vector<uint32_t> spans;
    int64_t blocked = 0;
    for (const auto& h : hits) {
        spans.push_back(h.call);
        spans.insert(spans.end(), h.drained.begin(), h.drained.end());
        blocked += h.blockedNs;
    }
    const Hit& ex = hits.front();
    std::vector<std::string> drainedNames;
    for (uint32_t d : ex.drained)
        drainedNames.push_back(c.label(d));
    std::string msg = c.label(ex.call) + " waited " + c.at(ex.blockedNs) + " for "
        + joinNames(drainedNames, c.o.maxNamedSpans) + " to finish because it synchronizes the device implicitly";
    if (ex.idleAfterNs > 0)
        msg += ", and the drained GPU then sat idle " + c.at(ex.idleAfterNs) + " until the next operation";
    if (hits.size() > 1)
        msg += "; " + plural(int64_t(hits.size()), "such call", "such calls") + " blocked the host " + c.at(blocked)
            + " in all";
    msg += ".";
    out.push_back(c.make("implicit-sync", std::move(msg), std::move(spans)));
}

// ---- wait-unrecorded-event --------------------------------------------------------------------------------------

namespace {

void collectRecords(const std::vector<Op>& ops, std::set<std::string>& recorded)
{
    for (const auto& op : ops) {
        if (op.kind == OpKind::Record)
            recorded.insert(op.event);
        collectRecords(op.ops, recorded);
    }
}

} // namespace

void waitUnrecordedEvent(const Context& c, std::vector<Diagnostic>& out)
{
    if (!c.scenario)
        return;
    const Scenario& s = *c.scenario;
    std::set<std::string> recorded;
    for (const auto& t : s.threads)
        collectRecords(t.ops, recorded);
    // Most scenarios wait only on recorded events: then there is nothing to index (a map entry per span of the
    // trace cost more than the rest of the rule on a 1.5 M-span trace).
    const bool anyUnrecorded = std::any_of(s.threads.begin(), s.threads.end(), [&recorded](const auto& t) {
        return std::any_of(t.ops.begin(), t.ops.end(),
                           [&recorded](const Op& op) { return op.kind == OpKind::Wait && !recorded.count(op.event); });
    });
    if (!anyUnrecorded)
        return;
    // Spans by (scenario thread, op index).
    std::map<std::pair<int, int>, std::vector<uint32_t>> spansOf;
    for (uint32_t i = 0; i < c.n; ++i)
        if (c.t.spans.threadOf(i) >= 0 && c.t.spans.opOf(i) >= 0)
            spansOf[{c.t.spans.threadOf(i), c.t.spans.opOf(i)}].push_back(i);
    for (size_t t = 0; t < s.threads.size(); ++t) {
        const auto& ops = s.threads[t].ops;
        for (size_t w = 0; w < ops.size(); ++w) {
            const Op& wait = ops[w];
            if (wait.kind != OpKind::Wait || recorded.count(wait.event))
                continue;
            std::vector<uint32_t> spans;
            if (auto it = spansOf.find({int(t), int(w)}); it != spansOf.end())
                spans = it->second;
            // The work it should have held back: the next GPU op of this thread in the waiting stream.
            std::string consumer;
            for (size_t j = w + 1; j < ops.size(); ++j) {
                if (!isGpuOp(ops[j].kind) || ops[j].stream != wait.stream)
                    continue;
                if (auto it = spansOf.find({int(t), int(j)}); it != spansOf.end()) {
                    uint32_t gpu = kNone;
                    for (uint32_t i : it->second)
                        if (c.gpuOnStream(i)) {
                            spans.push_back(i);
                            if (gpu == kNone || c.start(i) < c.start(gpu))
                                gpu = i;
                        }
                    if (gpu != kNone)
                        consumer = c.label(gpu) + ", the next operation in that stream, was not held back by it (it "
                            + "started at " + c.when(c.start(gpu)) + ")";
                }
                if (consumer.empty())
                    consumer = quoted(displayName(ops[j])) + " (" + wait.stream
                        + "), the next operation in that stream, was not held back by it";
                break;
            }
            std::string msg = "Thread " + s.threads[t].name + " makes stream " + wait.stream + " wait on event "
                + quoted(wait.event) + ", which no operation ever records, so the wait does nothing (CUDA treats it "
                + "as already complete)";
            msg += consumer.empty() ? "." : ": " + consumer + ".";
            out.push_back(c.make("wait-unrecorded-event", std::move(msg), std::move(spans)));
        }
    }
}

} // namespace streamscope::diag
