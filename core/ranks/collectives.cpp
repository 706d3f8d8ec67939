// Linking the collective calls of a job across its ranks, and what each call shows (collectives.h).
#include "collectives.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <numeric>
#include <tuple>

namespace streamscope {

int collectivePeer(const Op& op, int rank, int world)
{
    if (op.kind != OpKind::Collective
        || (op.collective != CollectiveKind::Send && op.collective != CollectiveKind::Recv))
        return -1;
    if (op.peerOffset != 0 && world > 0)
        return ((rank + op.peerOffset) % world + world) % world;
    return op.peer;
}

size_t linkCollectiveSpans(Trace& trace, std::vector<CollectiveSpan> spans)
{
    trace.finalize();
    const auto& s = trace.spans;
    // Issue order per host thread: iteration, repeat, op index.
    std::sort(spans.begin(), spans.end(), [&](const CollectiveSpan& a, const CollectiveSpan& b) {
        return std::tuple(a.rank, a.thread, s.iterationOf(a.span), s.taskOf(a.span), s.opOf(a.span), s.start[a.span])
            < std::tuple(b.rank, b.thread, s.iterationOf(b.span), s.taskOf(b.span), s.opOf(b.span), s.start[b.span]);
    });
    std::map<std::tuple<int, int, int, int, int>, int64_t> seq;
    std::map<std::tuple<int, int, int, int64_t>, std::vector<std::pair<int, uint32_t>>> calls;
    for (const auto& c : spans) {
        const bool p2p = c.kind == CollectiveKind::Send || c.kind == CollectiveKind::Recv;
        const bool send = c.kind == CollectiveKind::Send;
        const int src = p2p ? (send ? c.rank : c.peer) : -1;
        const int dst = p2p ? (send ? c.peer : c.rank) : -1;
        // A send counts apart from a recv on its own rank: the k-th send meets the k-th recv.
        const int side = p2p ? (send ? 1 : 2) : 0;
        const int64_t k = seq[{c.thread, src, dst, side, p2p ? -1 : c.rank}]++;
        calls[{c.thread, src, dst, k}].emplace_back(p2p ? (send ? 0 : 1) : c.rank, c.span);
    }
    size_t linked = 0;
    for (auto& [key, parts] : calls) {
        if (parts.size() < 2)
            continue;
        std::sort(parts.begin(), parts.end());
        for (size_t i = 0; i + 1 < parts.size(); ++i)
            trace.addFlow(parts[i].second, parts[i + 1].second, FlowKind::Collective);
        ++linked;
    }
    trace.finalize();
    return linked;
}

size_t linkCollectives(Trace& trace, const Scenario& job)
{
    trace.finalize();
    std::vector<CollectiveSpan> spans;
    const auto& s = trace.spans;
    for (uint32_t i = 0; i < trace.spanCount(); ++i) {
        if (!isGpuSpan(s.kind[i]) || s.threadOf(i) < 0 || size_t(s.threadOf(i)) >= job.threads.size())
            continue;
        const auto& th = job.threads[size_t(s.threadOf(i))];
        if (s.opOf(i) < 0 || size_t(s.opOf(i)) >= th.ops.size())
            continue;
        const Op& op = th.ops[size_t(s.opOf(i))];
        if (op.kind != OpKind::Collective)
            continue;
        CollectiveSpan c;
        c.span = i;
        c.rank = job.job.expanded() ? job.job.threadRank[size_t(s.threadOf(i))] : 0;
        c.thread = job.job.expanded() ? job.job.localThread[size_t(s.threadOf(i))] : s.threadOf(i);
        c.kind = op.collective;
        c.peer = collectivePeer(op, c.rank, std::max(1, job.job.worldSize));
        spans.push_back(c);
    }
    return linkCollectiveSpans(trace, std::move(spans));
}

size_t linkMergedCollectives(Trace& merged, const std::vector<const Scenario*>& scenarios, int world)
{
    merged.finalize();
    std::vector<CollectiveSpan> spans;
    const auto& s = merged.spans;
    for (uint32_t i = 0; i < merged.spanCount(); ++i) {
        if (!isGpuSpan(s.kind[i]) || s.threadOf(i) < 0 || s.opOf(i) < 0)
            continue;
        const int rank = rankOfTrack(merged, s.track[i]);
        if (rank < 0 || size_t(rank) >= scenarios.size() || !scenarios[size_t(rank)])
            continue;
        const Scenario& sc = *scenarios[size_t(rank)];
        if (size_t(s.threadOf(i)) >= sc.threads.size()
            || size_t(s.opOf(i)) >= sc.threads[size_t(s.threadOf(i))].ops.size())
            continue;
        const Op& op = sc.threads[size_t(s.threadOf(i))].ops[size_t(s.opOf(i))];
        if (op.kind != OpKind::Collective)
            continue;
        spans.push_back({i, rank, s.threadOf(i), op.collective, collectivePeer(op, rank, world)});
    }
    return linkCollectiveSpans(merged, std::move(spans));
}

int rankOfTrack(const Trace& trace, uint32_t track)
{
    const std::string& name = trace.tracks[track].name;
    if (!name.starts_with("rank "))
        return -1;
    int rank = -1;
    const auto [p, ec] = std::from_chars(name.data() + 5, name.data() + name.size(), rank);
    if (ec != std::errc() || !std::string_view(p, size_t(name.data() + name.size() - p)).starts_with(" · "))
        return -1;
    return rank;
}

namespace {

// When a GPU span could have started: its launch call returned, the work of the events it waited on and the previous
// span of its stream ended. `launchEnd`: the latest end of its launch and event waits (INT64_MIN: none).
int64_t arrivalOf(const Trace& t, uint32_t span, int64_t launchEnd)
{
    int64_t ready = launchEnd;
    const uint32_t track = t.spans.track[span];
    if (span > t.trackBegin(track))
        ready = std::max(ready, t.spans.end[span - 1]);
    // A span with neither a launch nor an earlier span (an imported trace, say) arrived when it started.
    if (ready == INT64_MIN)
        return t.spans.start[span];
    return std::min(ready, t.spans.start[span]);
}

} // namespace

std::vector<CollectiveCallView> collectiveCalls(const Trace& trace)
{
    std::vector<CollectiveCallView> out;
    const size_t n = trace.spanCount();
    // The spans joined by collective arrows (the members), in span order, and a bit per span saying which spans
    // they are: what is kept per member (its neighbours in the call, its launch's end) is kept for them only, not
    // for every span of the trace (16 bytes a span: 100 MB for a job of 64 ranks x 100,000 spans).
    std::vector<bool> isMember(n, false);
    std::vector<uint32_t> members;
    for (const Flow& f : trace.flows)
        if (f.kind == FlowKind::Collective && f.from < n && f.to < n)
            for (const uint32_t s : {f.from, f.to})
                if (!isMember[s]) {
                    isMember[s] = true;
                    members.push_back(s);
                }
    if (members.empty())
        return out;
    std::sort(members.begin(), members.end());
    auto slot = [&members](uint32_t span) {
        return size_t(std::lower_bound(members.begin(), members.end(), span) - members.begin());
    };
    const size_t m = members.size();
    std::vector<uint32_t> next(m, kNoSpan), prev(m, kNoSpan);
    std::vector<int64_t> launchEnd(m, INT64_MIN);
    for (const Flow& f : trace.flows) {
        if (f.from >= n || f.to >= n)
            continue;
        if (f.kind == FlowKind::Collective) {
            next[slot(f.from)] = f.to;
            prev[slot(f.to)] = f.from;
        } else if ((f.kind == FlowKind::Launch || f.kind == FlowKind::Event || f.kind == FlowKind::Implicit)
                   && isMember[f.to]) {
            // What it waited for besides its stream: its launch, and the work of an event it waited on (a
            // collective in a communication stream of its own, as NCCL's, waits for the gradients' event).
            int64_t& e = launchEnd[slot(f.to)];
            e = std::max(e, trace.spans.end[f.from]);
        }
    }
    // A span belongs to one call: a file whose arrows join chains (two spans linked to one) is walked once, not once
    // per head.
    std::vector<bool> visited(m, false);
    for (size_t head = 0; head < m; ++head) {
        if (next[head] == kNoSpan || prev[head] != kNoSpan || visited[head])
            continue;
        CollectiveCallView call;
        call.name = std::string(trace.spanName(members[head]));
        std::vector<int64_t> launched; // per span of the call
        for (size_t k = head; !visited[k];) {
            visited[k] = true;
            call.spans.push_back(members[k]);
            launched.push_back(launchEnd[k]);
            if (next[k] == kNoSpan)
                break;
            k = slot(next[k]);
        }
        call.start = INT64_MAX;
        call.end = INT64_MIN;
        int64_t lastArrival = INT64_MIN;
        for (size_t k = 0; k < call.spans.size(); ++k) {
            const uint32_t c = call.spans[k];
            const int64_t a = arrivalOf(trace, c, launched[k]);
            call.arrival.push_back(a);
            call.start = std::min(call.start, trace.spans.start[c]);
            call.end = std::max(call.end, trace.spans.end[c]);
            if (a > lastArrival) {
                lastArrival = a;
                call.last = c;
            }
        }
        for (int64_t a : call.arrival) {
            // Saturating: times of an imported trace may lie anywhere in int64.
            const int64_t wait = a < 0 && lastArrival > INT64_MAX + a ? INT64_MAX : lastArrival - a;
            call.waitedNs = std::max(call.waitedNs, wait);
            call.totalWaitNs = wait > INT64_MAX - call.totalWaitNs ? INT64_MAX : call.totalWaitNs + wait;
        }
        out.push_back(std::move(call));
    }
    std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.start < b.start; });
    return out;
}

} // namespace streamscope
