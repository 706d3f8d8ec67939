// The critical path (analysis.h): the chain of spans that decided the run's length, walked back from the span that
// ends last through what released each one: its stream or host-thread predecessor, a flow (launch, event, sync,
// implicit), or the resource that held it after it was ready (SMs, a copy engine, a hardware queue, the
// host-function thread).
#include "analysis.h"

#include "collectives.h"
#include "file_io.h"
#include "span_names.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace streamscope {

namespace {

constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();

int trackDevice(const Trace& trace, uint32_t track)
{
    return track < trace.tracks.size() ? trace.tracks[track].device : -1;
}

std::string trackName(const Trace& trace, uint32_t track)
{
    return track < trace.tracks.size() ? trace.tracks[track].name : std::string("?");
}

// The spans in order of (time, index). Sorted as pairs with each span's time beside it: a sort whose comparisons
// read the column at random took most of the critical path's time on a 1.5 M-span trace.
std::vector<uint32_t> sortedByTime(const std::vector<uint32_t>& spans, TimeColumn::View time)
{
    std::vector<std::pair<int64_t, uint32_t>> keyed(spans.size());
    for (size_t k = 0; k < spans.size(); ++k)
        keyed[k] = {time[spans[k]], spans[k]};
    std::sort(keyed.begin(), keyed.end());
    std::vector<uint32_t> sorted(spans.size());
    for (size_t k = 0; k < keyed.size(); ++k)
        sorted[k] = keyed[k].second;
    return sorted;
}

// What held a ready GPU op: the span whose end (or freed SMs) let it start.
struct Held {
    uint32_t span = kNone;
    WaitCause cause = WaitCause::None;
    bool inferred = false;
    int64_t readyAt = 0;
};

// The holder of a ready op: recorded by the simulator, else inferred from what ran on its device while it waited.
class ResourceHolders {
public:
    explicit ResourceHolders(const Trace& t) : m_t(t)
    {
        const auto& s = t.spans;
        const TimeColumn::View sStart = s.start.view(), sEnd = s.end.view();
        m_recorded = !s.wait.empty();
        std::map<int, int> streams;
        for (uint32_t tr = 0; tr < t.tracks.size(); ++tr)
            if (t.tracks[tr].kind == TrackKind::Stream)
                ++streams[t.tracks[tr].device];
        for (uint32_t i = 0; i < s.size(); ++i) {
            const uint32_t tr = s.track[i];
            if (tr >= t.tracks.size() || t.tracks[tr].kind != TrackKind::Stream || !isGpuSpan(s.kind[i]))
                continue;
            m_devices[t.tracks[tr].device].byEnd.push_back(i);
        }
        for (auto& [device, d] : m_devices) {
            d.byStart = sortedByTime(d.byEnd, sStart);
            d.byEnd = sortedByTime(d.byEnd, sEnd);
            d.streams = streams[device];
            d.connections = connections(device);
            d.smCount = property(device, "sm_count").value_or(0);
        }
        const auto [lo, hi] = t.timeRange();
        // Inferred only for waits no launch latency or clock jitter explains.
        m_minInferredWaitNs = std::max<int64_t>(5000, (hi - lo) / 200);
    }

    Held held(uint32_t cur, int64_t readyAt) const
    {
        const auto& s = m_t.spans;
        const TimeColumn::View sStart = s.start.view(), sEnd = s.end.view();
        if (sStart[cur] <= readyAt)
            return {};
        if (m_recorded) {
            // The simulator knows: a wait it did not record was no resource's.
            const uint32_t h = s.waitForOf(cur);
            if (s.waitOf(cur) == WaitCause::None || h >= s.size())
                return {};
            return {h, s.waitOf(cur), false, readyAt};
        }
        if (m_t.info.source == TraceSource::Simulator || sStart[cur] - readyAt < m_minInferredWaitNs)
            return {};
        const uint32_t tr = s.track[cur];
        auto it = m_devices.find(trackDevice(m_t, tr));
        if (it == m_devices.end())
            return {};
        const Device& d = it->second;
        // What ended while it waited, latest first: the first whose end can explain its start.
        auto pos = std::upper_bound(d.byEnd.begin(), d.byEnd.end(), sStart[cur],
                                    [&sEnd](int64_t t, uint32_t i) { return t < sEnd[i]; });
        for (int steps = 0; pos != d.byEnd.begin() && steps < 64; ++steps) {
            --pos;
            const uint32_t p = *pos;
            if (sEnd[p] <= readyAt)
                break;
            if (s.track[p] == tr)
                continue;
            if (const auto cause = causeOf(d, cur, p))
                return {p, *cause, true, readyAt};
        }
        // A kernel that started in the tail of a kernel holding the SMs: that kernel, still running.
        if (s.kind[cur] == SpanKind::Kernel) {
            auto sp = std::upper_bound(d.byStart.begin(), d.byStart.end(), readyAt,
                                       [&sStart](int64_t t, uint32_t i) { return t < sStart[i]; });
            uint32_t best = kNone;
            for (int steps = 0; sp != d.byStart.begin() && steps < 64; ++steps) {
                --sp;
                const uint32_t p = *sp;
                if (s.track[p] == tr || s.kind[p] != SpanKind::Kernel || sEnd[p] <= sStart[cur] || sEnd[p] > sEnd[cur])
                    continue;
                if (best == kNone || sEnd[p] > sEnd[best])
                    best = p;
            }
            if (best != kNone && !hadRoom(d, best, sStart[cur]))
                return {best, WaitCause::Sms, true, readyAt};
        }
        return {};
    }

private:
    struct Device {
        std::vector<uint32_t> byEnd, byStart; // GPU spans on the device's streams
        int streams = 0;
        int connections = 8;
        int64_t smCount = 0;
    };

    std::optional<int64_t> property(int device, std::string_view key) const
    {
        for (const auto& d : m_t.info.devices)
            if (d.index == device)
                for (const auto& [k, v] : d.properties)
                    if (k == key)
                        return leadingInt(v);
        return std::nullopt;
    }

    // The device's hardware work queues: as the simulator or the run recorded them, else CUDA's default of 8.
    int connections(int device) const
    {
        if (auto q = property(device, "hardware_queues"); q && *q > 0)
            return int(*q);
        if (const std::string* v = findSetting(m_t.info, "CUDA_DEVICE_MAX_CONNECTIONS"))
            if (auto c = leadingInt(*v); c && *c > 0)
                return int(*c);
        return 8;
    }

    // Whether SMs were left free at time t beside kernel `k`: the blocks of the kernels running then, where their
    // grids are known, number fewer than the SMs.
    bool hadRoom(const Device& d, uint32_t k, int64_t t) const
    {
        const auto& s = m_t.spans;
        const TimeColumn::View sStart = s.start.view(), sEnd = s.end.view();
        if (d.smCount <= 0)
            return false;
        uint64_t blocks = 0;
        auto sp = std::upper_bound(d.byStart.begin(), d.byStart.end(), t,
                                   [&sStart](int64_t x, uint32_t i) { return x < sStart[i]; });
        for (int steps = 0; sp != d.byStart.begin() && steps < 256; ++steps) {
            --sp;
            const uint32_t p = *sp;
            if (s.kind[p] != SpanKind::Kernel || (sEnd[p] <= t && p != k))
                continue;
            const uint64_t g = s.gridOf(p).count();
            if (g == 0)
                return false; // a grid not known: it may have filled the device
            blocks += g;
        }
        return blocks < uint64_t(d.smCount);
    }

    // Why `cur` could have waited for `p`, which ended while it was ready; none when nothing it needed was held.
    std::optional<WaitCause> causeOf(const Device& d, uint32_t cur, uint32_t p) const
    {
        const auto& s = m_t.spans;
        const TimeColumn::View sEnd = s.end.view();
        const SpanKind c = s.kind[cur], k = s.kind[p];
        const bool sharedQueue = d.streams > d.connections;
        if (isCopySpan(c) && k == c)
            return WaitCause::CopyEngine;
        if (c == SpanKind::HostFunc && k == SpanKind::HostFunc)
            return WaitCause::HostFuncThread;
        if ((c == SpanKind::Kernel || c == SpanKind::Memset) && k == SpanKind::Kernel) {
            if (!hadRoom(d, p, sEnd[p] - 1))
                return WaitCause::Sms;
            if (sharedQueue)
                return WaitCause::HardwareQueue;
            return std::nullopt;
        }
        if (sharedQueue && k != SpanKind::HostFunc)
            return WaitCause::HardwareQueue;
        return std::nullopt;
    }

    const Trace& m_t;
    bool m_recorded = false;
    int64_t m_minInferredWaitNs = 5000;
    std::map<int, Device> m_devices;
};

} // namespace

IncomingFlows::IncomingFlows(const Trace& trace)
{
    const size_t n = trace.spanCount();
    // A counting sort by target, placed through the offsets themselves (no second array of n): m_offsets[s + 1]
    // counts span s's flows, then after the prefix sum m_offsets[s] is where its first goes; placing advances it to
    // where the next span's flows begin, and a shift by one puts every offset back.
    m_offsets.assign(n + 1, 0);
    for (const auto& f : trace.flows)
        if (f.to < n)
            ++m_offsets[f.to + 1];
    for (size_t i = 0; i < n; ++i)
        m_offsets[i + 1] += m_offsets[i];
    m_flows.resize(m_offsets[n]);
    for (uint32_t k = 0; k < trace.flows.size(); ++k) {
        const auto& f = trace.flows[k];
        if (f.to < n)
            m_flows[m_offsets[f.to]++] = k;
    }
    std::copy_backward(m_offsets.begin(), m_offsets.end() - 1, m_offsets.end());
    m_offsets[0] = 0;
}

std::span<const uint32_t> IncomingFlows::of(uint32_t span) const
{
    if (size_t(span) + 1 >= m_offsets.size())
        return {};
    return {m_flows.data() + m_offsets[span], m_offsets[span + 1] - m_offsets[span]};
}

std::string_view toString(PathReason r)
{
    switch (r) {
    case PathReason::Start: return "start";
    case PathReason::StreamOrder: return "stream order";
    case PathReason::Launch: return "launch";
    case PathReason::EventWait: return "event wait";
    case PathReason::Sync: return "sync";
    case PathReason::Implicit: return "implicit";
    case PathReason::HostIssueOrder: return "host issue order";
    case PathReason::Resource: return "resource";
    }
    return "?";
}

namespace {

PathReason reasonOf(FlowKind k)
{
    switch (k) {
    case FlowKind::Launch: return PathReason::Launch;
    case FlowKind::Event: return PathReason::EventWait;
    case FlowKind::Sync: return PathReason::Sync;
    case FlowKind::Implicit: return PathReason::Implicit;
    case FlowKind::Call:
        return PathReason::HostIssueOrder; // from a range, which is never on the path
    // Linked parts of one collective run at the same time: neither ends before the other starts.
    case FlowKind::Collective: return PathReason::HostIssueOrder;
    }
    return PathReason::Launch;
}

// Among predecessors that end at the same time, the explicit dependency explains more than the orderings.
int rank(PathReason r)
{
    switch (r) {
    case PathReason::Resource: return 7;
    case PathReason::EventWait: return 6;
    case PathReason::Implicit: return 5;
    case PathReason::Sync: return 4;
    case PathReason::Launch: return 3;
    case PathReason::StreamOrder: return 2;
    case PathReason::HostIssueOrder: return 1;
    case PathReason::Start: return 0;
    }
    return 0;
}

} // namespace

namespace {

// A collective part that waited for another rank: the part that arrived last, its rank, how long this one waited.
struct CollectiveWait {
    uint32_t part = kNone;
    int rank = -1;
    int64_t waitNs = 0;
};

// A span on the critical path and why it could start: what released it (and, for a resource, what held it).
struct PathLink {
    uint32_t span;
    PathReason reason;     // why it could start: what released it
    Held held;             // reason Resource: what held it
    CollectiveWait waited; // reason Resource: the rank whose part of a collective it waited for
};

// Where the walk starts: the span that ends last; among equal ends a GPU span, then the one that started last.
// Ranges (CPU ops, annotations) enclose the work and are none of it.
uint32_t lastSpan(const Trace& trace)
{
    const auto& s = trace.spans;
    const TimeColumn::View sStart = s.start.view(), sEnd = s.end.view();
    const size_t n = s.size();
    uint32_t cur = 0;
    while (cur + 1 < n && s.kind[cur] == SpanKind::Range)
        ++cur;
    for (uint32_t i = cur + 1; i < n; ++i) {
        if (s.kind[i] == SpanKind::Range)
            continue;
        if (sEnd[i] != sEnd[cur]) {
            if (sEnd[i] > sEnd[cur])
                cur = i;
            continue;
        }
        const bool gi = isGpuSpan(s.kind[i]), gc = isGpuSpan(s.kind[cur]);
        if (gi != gc ? gi : sStart[i] > sStart[cur])
            cur = i;
    }
    return cur;
}

// A span's own predecessor: the one of its dependencies (the track's previous span, a flow into it, what a sync
// without flows waited for) that ended last, and why. Resources and other ranks are not looked at here.
struct Predecessor {
    uint32_t span = kNone;
    PathReason reason = PathReason::Start;
};

class Predecessors {
public:
    // `incoming`: the trace's, built by the caller; nullptr: built here.
    Predecessors(const Trace& trace, const IncomingFlows* incoming)
        : m_t(trace), m_own(incoming ? std::nullopt : std::optional<IncomingFlows>(std::in_place, trace)),
          m_incoming(incoming ? *incoming : *m_own)
    {
        // Stream tracks per device, for host syncs that carry no sync flows (imported traces).
        for (uint32_t t = 0; t < trace.tracks.size(); ++t)
            if (trace.tracks[t].kind == TrackKind::Stream) {
                m_streamTracks[trace.tracks[t].device].push_back(t);
                m_streamTracks[-2].push_back(t); // all devices
            }
    }
    // m_incoming may refer to m_own: not copied.
    Predecessors(const Predecessors&) = delete;
    Predecessors& operator=(const Predecessors&) = delete;

    const IncomingFlows& incoming() const { return m_incoming; }

    Predecessor of(uint32_t cur) const
    {
        const auto& s = m_t.spans;
        const TimeColumn::View sStart = s.start.view(), sEnd = s.end.view();
        Predecessor best;
        // A predecessor must end no later than the span (a blocking call ends after what it waited for); the
        // strict order on (end, start, index) makes every step go back, so the walk ends.
        auto consider = [&](uint32_t p, PathReason reason) {
            if (!precedes(p, cur))
                return;
            const bool later = best.span == kNone || sEnd[p] > sEnd[best.span];
            if (later || (sEnd[p] == sEnd[best.span] && rank(reason) > rank(best.reason)))
                best = {p, reason};
        };
        const uint32_t track = s.track[cur];
        if (track < m_t.tracks.size()) {
            const bool stream = m_t.tracks[track].kind == TrackKind::Stream;
            const PathReason order = stream ? PathReason::StreamOrder : PathReason::HostIssueOrder;
            // The previous span of the track; a longer one that contains this span is not its predecessor.
            const uint32_t begin = m_t.trackBegin(track);
            for (uint32_t p = cur, steps = 0; p > begin && steps < 4; ++steps) {
                --p;
                if (sEnd[p] <= sEnd[cur]) {
                    consider(p, order);
                    break;
                }
            }
        }
        bool hasSyncFlow = false;
        for (uint32_t k : m_incoming.of(cur)) {
            const Flow& f = m_t.flows[k];
            if (f.kind == FlowKind::Collective)
                continue; // the linked parts of one collective run at the same time: none released the other
            consider(f.from, reasonOf(f.kind));
            hasSyncFlow = hasSyncFlow || f.kind == FlowKind::Sync;
        }
        if (s.kind[cur] == SpanKind::Sync && !hasSyncFlow) {
            // What the sync waited for: on each stream of its device, the last span that ended inside it.
            const int device = trackDevice(m_t, track);
            auto it = m_streamTracks.find(device >= 0 && m_streamTracks.count(device) ? device : -2);
            if (it != m_streamTracks.end())
                for (uint32_t t : it->second) {
                    const auto b = s.start.begin() + m_t.trackBegin(t);
                    const auto e = s.start.begin() + m_t.trackEnd(t);
                    auto pos = std::lower_bound(b, e, sEnd[cur]);
                    for (int steps = 0; pos != b && steps < 4; ++steps) {
                        --pos;
                        const auto p = uint32_t(pos - s.start.begin());
                        if (sEnd[p] <= sEnd[cur]) {
                            if (sEnd[p] > sStart[cur] && isGpuSpan(s.kind[p]))
                                consider(p, PathReason::Sync);
                            break;
                        }
                    }
                }
        }
        return best;
    }

    // Whether p may come before cur on the path: it ends no later, and (end, start, index) orders it first.
    bool precedes(uint32_t p, uint32_t cur) const
    {
        const auto& s = m_t.spans;
        const TimeColumn::View sStart = s.start.view(), sEnd = s.end.view();
        if (p >= s.size() || p == cur || s.kind[p] == SpanKind::Range || sEnd[p] > sEnd[cur])
            return false;
        return sEnd[p] < sEnd[cur] || sStart[p] < sStart[cur] || (sStart[p] == sStart[cur] && p < cur);
    }

private:
    const Trace& m_t;
    std::optional<IncomingFlows> m_own;
    const IncomingFlows& m_incoming;
    std::map<int, std::vector<uint32_t>> m_streamTracks;
};

// The parts of each collective call of a job (linked across ranks by "collective" flows, rank_merge.h).
class CollectiveParts {
public:
    explicit CollectiveParts(const Trace& trace)
    {
        const size_t n = trace.spanCount();
        for (const Flow& f : trace.flows)
            if (f.kind == FlowKind::Collective && f.from < n && f.to < n && f.from != f.to) {
                m_next.emplace(f.from, f.to);
                m_prev.emplace(f.to, f.from);
            }
    }

    bool empty() const { return m_next.empty(); }

    // The parts of span's call, span among them; empty when it is no part of one.
    std::vector<uint32_t> of(uint32_t span) const
    {
        if (!m_next.count(span) && !m_prev.count(span))
            return {};
        // Bounded walks: a file whose arrows form a cycle must not hang the analysis.
        uint32_t head = span;
        for (size_t guard = 0; guard <= m_prev.size(); ++guard) {
            const auto it = m_prev.find(head);
            if (it == m_prev.end() || it->second == span)
                break;
            head = it->second;
        }
        std::vector<uint32_t> parts{head};
        for (size_t guard = 0; guard <= m_next.size(); ++guard) {
            const auto it = m_next.find(parts.back());
            if (it == m_next.end() || it->second == head)
                break;
            parts.push_back(it->second);
        }
        return parts;
    }

private:
    std::unordered_map<uint32_t, uint32_t> m_next, m_prev;
};

// The walk back from `cur`: at each span, the predecessor that ended last (the track's previous span, a flow into
// it, what a sync without flows waited for), or what held a GPU span that was ready and started later. A part of a
// collective call whose own dependencies ended before another rank's part was ready waited for that rank: its
// predecessor is what released the part that arrived last (NCCL's kernels start when launched and spin until every
// rank has arrived, so the early ranks' parts run longer; the simulator starts all parts when the last arrives).
std::vector<PathLink> walkBack(const Trace& trace, uint32_t cur, size_t maxLinks = SIZE_MAX,
                               const IncomingFlows* incoming = nullptr)
{
    const auto& s = trace.spans;
    const TimeColumn::View sStart = s.start.view(), sEnd = s.end.view();
    const size_t n = s.size();
    const Predecessors preds(trace, incoming);
    const CollectiveParts collectives(trace);
    const ResourceHolders resources(trace);
    std::vector<PathLink> chain; // from the end backwards
    for (size_t guard = 0; guard <= n; ++guard) {
        const Predecessor own = preds.of(cur);
        uint32_t best = own.span;
        PathReason bestReason = own.reason;
        // When the span was ready: its predecessor's end, or its start where nothing preceded it.
        const auto readyOf = [&](uint32_t span, const Predecessor& p) {
            return p.span == kNone ? sStart[span] : std::min(sEnd[p.span], sStart[span]);
        };
        CollectiveWait waited;
        if (!collectives.empty() && isGpuSpan(s.kind[cur])) {
            int64_t lastReady = readyOf(cur, own);
            const int64_t ownReady = lastReady;
            Predecessor lastPred;
            for (uint32_t part : collectives.of(cur)) {
                if (part == cur)
                    continue;
                const Predecessor p = preds.of(part);
                const int64_t ready = readyOf(part, p);
                if (p.span != kNone && ready > lastReady && preds.precedes(p.span, cur)) {
                    lastReady = ready;
                    lastPred = p;
                    waited = {part, rankOfTrack(trace, s.track[part]), ready - ownReady};
                }
            }
            if (waited.part != kNone) {
                best = lastPred.span;
                bestReason = PathReason::Resource;
            }
        }
        // Ready (its dependencies had ended) but started later: what held it is its predecessor on the path.
        Held held;
        if (best != kNone && waited.part == kNone && isGpuSpan(s.kind[cur])) {
            held = resources.held(cur, sEnd[best]);
            if (held.span != kNone && held.span != cur && sEnd[held.span] > sEnd[best]
                && (sEnd[held.span] < sEnd[cur] || (sEnd[held.span] == sEnd[cur] && sStart[held.span] < sStart[cur]))) {
                held.readyAt = sEnd[best];
                best = held.span;
                bestReason = PathReason::Resource;
            } else {
                held = {};
            }
        }
        chain.push_back({cur, bestReason, held, waited});
        if (best == kNone || chain.size() >= maxLinks)
            break;
        cur = best;
    }
    return chain;
}

// The chain, first span first, as the path's segments with their contributions and the idle time between them.
void addSegments(const Trace& trace, std::vector<PathLink> chain, CriticalPath& path)
{
    const auto& s = trace.spans;
    const TimeColumn::View sStart = s.start.view(), sEnd = s.end.view();
    std::reverse(chain.begin(), chain.end());
    // chain[k].reason is why chain[k] could start after chain[k-1]; the first has none.
    path.segments.reserve(chain.size());
    int64_t prevEnd = 0;
    for (size_t k = 0; k < chain.size(); ++k) {
        const uint32_t i = chain[k].span;
        CriticalPathSegment seg;
        seg.span = i;
        seg.name = std::string(trace.spanName(i));
        seg.kind = s.kind[i];
        seg.track = s.track[i];
        seg.start = sStart[i];
        seg.end = sEnd[i];
        if (k == 0) {
            seg.reason = PathReason::Start;
            seg.contributionNs = seg.end - seg.start;
        } else {
            seg.reason = chain[k].reason;
            seg.idleBeforeNs = std::max<int64_t>(0, seg.start - prevEnd);
            seg.contributionNs = seg.end - std::max(seg.start, prevEnd);
            if (const CollectiveWait& w = chain[k].waited; seg.reason == PathReason::Resource && w.part != kNone) {
                seg.waitRank = w.rank;
                seg.waitPart = w.part;
                seg.waitNs = std::max<int64_t>(0, w.waitNs);
                path.collectiveWaitNs += seg.waitNs;
            } else if (seg.reason == PathReason::Resource) {
                seg.wait = chain[k].held.cause;
                seg.waitInferred = chain[k].held.inferred;
                seg.waitNs = std::max<int64_t>(0, seg.start - chain[k].held.readyAt);
                path.resourceWaitNs += seg.waitNs;
            }
        }
        if (seg.idleBeforeNs > 0)
            path.idleByCause[size_t(idleCauseOf(seg))] += seg.idleBeforeNs;
        prevEnd = seg.end;
        path.busyNs += seg.contributionNs;
        path.idleNs += seg.idleBeforeNs;
        (isGpuSpan(seg.kind) ? path.gpuNs : path.hostNs) += seg.contributionNs;
        path.segments.push_back(std::move(seg));
    }
    path.startNs = path.segments.front().start;
    path.endNs = path.segments.back().end;
    path.lengthNs = path.endNs - path.startNs;
}

} // namespace

CriticalPath criticalPath(const Trace& input, const IncomingFlows* incoming)
{
    Trace storage;
    const Trace& trace = finalizedView(input, storage);
    CriticalPath path;
    if (trace.spans.size() == 0)
        return path;
    addSegments(trace, walkBack(trace, lastSpan(trace), SIZE_MAX, &trace == &input ? incoming : nullptr), path);
    return path;
}

CriticalPath releaseOf(const Trace& trace, uint32_t span)
{
    CriticalPath path;
    if (!trace.finalized() || span >= trace.spanCount() || trace.spans.kind[span] == SpanKind::Range)
        return path;
    // The span and the predecessor that released it (whose own reason is not used).
    addSegments(trace, walkBack(trace, span, 2), path);
    return path;
}

std::string describeRelease(const Trace& trace, const CriticalPath& path, size_t k)
{
    if (k >= path.segments.size())
        return {};
    const CriticalPathSegment& seg = path.segments[k];
    if (k == 0)
        return "start";
    if (seg.reason != PathReason::Resource)
        return "after " + std::string(toString(seg.reason));
    const CriticalPathSegment& holder = path.segments[k - 1];
    if (seg.waitPart != kNoSpan) {
        const std::string who = seg.waitRank >= 0 ? "rank " + std::to_string(seg.waitRank) : "another rank";
        return "waited " + formatDuration(seg.waitNs) + " in the collective for " + who
            + ", the last to reach it (its part ready when '" + shortSpanName(holder.name) + "' ("
            + trackName(trace, holder.track) + ") ended)";
    }
    const std::string by = "'" + shortSpanName(holder.name) + "' (" + trackName(trace, holder.track) + ")";
    std::string what;
    switch (seg.wait) {
    case WaitCause::Sms: what = "for SMs held by " + by; break;
    case WaitCause::CopyEngine: what = "for its copy engine, busy with " + by; break;
    case WaitCause::HardwareQueue:
        what = "in the hardware queue it shares with " + trackName(trace, holder.track) + ", until '"
            + shortSpanName(holder.name) + "' ended";
        break;
    case WaitCause::HostFuncThread: what = "for the host-function thread, busy with " + by; break;
    case WaitCause::None: what = "for " + by; break;
    }
    return "waited " + formatDuration(seg.waitNs) + " " + what + (seg.waitInferred ? " (inferred from what ran)" : "");
}

std::string describeIdle(const Trace& trace, const CriticalPath& path, size_t k)
{
    if (k == 0 || k >= path.segments.size())
        return {};
    const CriticalPathSegment& seg = path.segments[k];
    if (seg.idleBeforeNs <= 0 || idleCauseOf(seg) != IdleCause::HostGap)
        return {};
    // Host time outside CUDA calls, on a thread whose ranges were traced (a PyTorch CPU op, a Python function):
    // the range that covers most of the gap, the deeper one on ties.
    const int64_t from = seg.start - seg.idleBeforeNs, to = seg.start;
    const auto& s = trace.spans;
    const TimeColumn::View sStart = s.start.view(), sEnd = s.end.view();
    uint32_t best = kNone;
    int64_t bestCover = 0;
    int bestDepth = -1;
    for (uint32_t tr = 0; tr < trace.tracks.size(); ++tr) {
        const Track& lane = trace.tracks[tr];
        if (lane.kind != TrackKind::Ranges || lane.parent != int(seg.track))
            continue;
        const auto b = s.start.begin() + trace.trackBegin(tr), e = s.start.begin() + trace.trackEnd(tr);
        // Spans of a track are disjoint: the one starting last before `to`, and those before it that reach in.
        auto pos = std::lower_bound(b, e, to);
        for (int steps = 0; pos != b && steps < 64; ++steps) {
            --pos;
            const auto i = uint32_t(pos - s.start.begin());
            if (sEnd[i] <= from)
                break;
            const int64_t cover = std::min(sEnd[i], to) - std::max(sStart[i], from);
            if (cover > bestCover || (cover == bestCover && lane.depth > bestDepth)) {
                best = i;
                bestCover = cover;
                bestDepth = lane.depth;
            }
        }
    }
    if (best == kNone || bestCover * 2 < seg.idleBeforeNs)
        return {};
    return "in '" + shortSpanName(trace.spanName(best)) + "'";
}

std::vector<std::pair<IdleCause, int64_t>> idleLargestFirst(const CriticalPath& path)
{
    std::vector<std::pair<IdleCause, int64_t>> idle;
    for (int c = 0; c < kIdleCauseCount; ++c)
        if (path.idleByCause[size_t(c)] > 0)
            idle.emplace_back(IdleCause(c), path.idleByCause[size_t(c)]);
    std::sort(idle.begin(), idle.end(), [](const auto& a, const auto& b) {
        return a.second != b.second ? a.second > b.second : a.first > b.first;
    });
    return idle;
}

IdleCause idleCauseOf(const CriticalPathSegment& seg)
{
    const bool gpu = isGpuSpan(seg.kind);
    switch (seg.reason) {
    case PathReason::Launch: return gpu ? IdleCause::LaunchLatency : IdleCause::Other;
    case PathReason::StreamOrder:
        return seg.kind == SpanKind::HostFunc ? IdleCause::HostFuncLatency : IdleCause::StreamGap;
    case PathReason::HostIssueOrder: return IdleCause::HostGap;
    case PathReason::Sync: return IdleCause::SyncWake;
    case PathReason::EventWait:
    case PathReason::Implicit: return IdleCause::DependencyGap;
    case PathReason::Resource: return IdleCause::DependencyGap;
    case PathReason::Start: return IdleCause::Other;
    }
    return IdleCause::Other;
}

std::string_view idleCauseKey(IdleCause c)
{
    switch (c) {
    case IdleCause::LaunchLatency: return "launch_latency";
    case IdleCause::StreamGap: return "stream_gap";
    case IdleCause::HostFuncLatency: return "host_func_latency";
    case IdleCause::HostGap: return "host_gap";
    case IdleCause::SyncWake: return "sync_wake";
    case IdleCause::DependencyGap: return "dependency_gap";
    case IdleCause::Other: return "other";
    }
    return "other";
}

std::string_view toString(IdleCause c)
{
    switch (c) {
    case IdleCause::LaunchLatency: return "launch latency (from the launch call to the GPU starting the op)";
    case IdleCause::StreamGap: return "gaps between ops of a stream (the GPU's per-op overhead)";
    case IdleCause::HostFuncLatency: return "host-function wake-up (the driver thread starting a host function)";
    case IdleCause::HostGap: return "host time outside CUDA calls (the host thread issued nothing)";
    case IdleCause::SyncWake: return "sync wake-up (from the GPU op's end to the waiting call's return)";
    case IdleCause::DependencyGap: return "from a dependency's end to the start of what waited for it";
    case IdleCause::Other: return "other";
    }
    return "other";
}

} // namespace streamscope
