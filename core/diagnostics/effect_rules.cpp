// Rules that name the effect a run shows, the way the lessons teach it: streams that overlapped, one stream that
// serialized its work, copies that overlapped kernels, an event that ordered two streams, devices that worked at
// the same time, a higher-priority stream that overtook a running kernel, a graph that launched many operations
// with one call. Each reports at most one diagnostic per device (or host thread), with severity "info".
#include "diagnostics_context.h"

#include "parallel_for.h"

#include <algorithm>
#include <functional>
#include <queue>
#include <set>
#include <unordered_map>

namespace streamscope::diag {

namespace {

std::string percent(double fraction)
{
    return std::to_string(int(std::lround(100.0 * fraction))) + "%";
}

std::string times(double factor)
{
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2fx", factor);
    return buf;
}

std::string deviceStream(const Context& c, uint32_t span)
{
    return quoted(c.name(span)) + " (" + c.trackName(span) + ", device " + std::to_string(c.device(span)) + ")";
}

} // namespace

// ---- streams-overlap --------------------------------------------------------------------------------------------

void streamsOverlap(const Context& c, std::vector<Diagnostic>& out)
{
    for (const auto& [device, spans] : c.gpuSpansByDevice()) {
        const Concurrency k = c.concurrency(device);
        if (k.busyNs <= 0 || k.multiNs < c.th.overlapMinNs
            || double(k.multiNs) < c.th.overlapMinFraction * double(k.busyNs))
            continue;
        // Stream pairs that ran at once, with the two spans that overlapped longest for each.
        struct PairInfo {
            int64_t ns = 0, best = 0;
            uint32_t a = kNone, b = kNone;
        };
        // Keyed by (lower track, higher track); sorted by key at the end, as a map would hold them, before the
        // stable sort by overlap (a std::map lookup per pair of running spans cost most of this rule). A device with
        // up to 512 streams keeps its pairs in a matrix indexed by the streams' rank in track order (at most 8 MB):
        // a hash lookup per pair of running spans still cost 40 % of the analysis with 28 streams busy at once.
        std::unordered_map<uint64_t, PairInfo> pairs;
        std::vector<char> seen(c.t.tracks.size(), 0);
        for (const uint32_t i : spans)
            seen[c.t.spans.track[i]] = 1;
        std::vector<uint32_t> denseTracks; // sorted; a track's index here is its row and column in `matrix`
        for (uint32_t tr = 0; tr < seen.size(); ++tr)
            if (seen[tr])
                denseTracks.push_back(tr);
        constexpr size_t kMaxDense = 512;
        const size_t dense = denseTracks.size() <= kMaxDense ? denseTracks.size() : 0;
        std::vector<PairInfo> matrix(dense * dense);
        std::vector<uint32_t> denseOf; // track -> index in denseTracks
        if (dense > 0) {
            denseOf.assign(size_t(denseTracks.back()) + 1, 0);
            for (size_t x = 0; x < dense; ++x)
                denseOf[denseTracks[x]] = uint32_t(x);
        }
        auto pairOf = [&](uint32_t lo, uint32_t hi) -> PairInfo* {
            if (dense > 0)
                return &matrix[size_t(denseOf[lo]) * dense + denseOf[hi]];
            const uint64_t key = (uint64_t(lo) << 32) | hi;
            auto found = pairs.find(key);
            if (found == pairs.end()) {
                if (pairs.size() >= (size_t(1) << 20))
                    return nullptr;
                found = pairs.emplace(key, PairInfo{}).first;
            }
            return &found->second;
        };
        // The spans still running, in the order they came, as a list linked through their arrival numbers (kNone
        // ends it), and their ends in a heap: the spans that ended are unlinked in constant time, and the last ones
        // read from the tail (a scan of all running spans per span was quadratic: 100 000 streams at once). Each
        // node holds what the pairs need of its span (end, track, kind): read by span index, those were three
        // cache misses per pair of running spans, half of this rule's time with 28 streams busy at once.
        struct Node { // 24 bytes: its span is spans[its arrival]
            uint32_t prev = kNone, next = kNone;
            uint32_t track = 0;
            SpanKind kind = SpanKind::Kernel;
            int64_t end = 0;
        };
        std::vector<Node> nodes(spans.size());
        uint32_t tail = kNone;
        std::priority_queue<std::pair<int64_t, size_t>, std::vector<std::pair<int64_t, size_t>>, std::greater<>> ends;
        for (size_t arrival = 0; arrival < spans.size(); ++arrival) {
            const uint32_t i = spans[arrival];
            const int64_t s = c.effStart(i);
            while (!ends.empty() && ends.top().first <= s) {
                const Node& gone = nodes[ends.top().second];
                ends.pop();
                if (gone.prev != kNone)
                    nodes[gone.prev].next = gone.next;
                if (gone.next != kNone)
                    nodes[gone.next].prev = gone.prev;
                else
                    tail = gone.prev;
            }
            Node& node = nodes[arrival];
            node.track = c.t.spans.track[i];
            node.end = c.end(i);
            node.kind = c.t.spans.kind[i];
            // The 64 that came last, oldest first; pairs beyond a million (tracks far past any real trace) are
            // not counted.
            const Node* last[64];
            size_t count = 0;
            for (uint32_t x = tail; x != kNone && count < 64; x = nodes[x].prev)
                last[count++] = &nodes[x];
            for (size_t x = count; x-- > 0;) {
                const Node& a = *last[x];
                if (a.track == node.track)
                    continue;
                // Event-timed copies in one direction seem to overlap while one waits for the copy engine: not an
                // example of streams running at once.
                if (c.eventTimed && a.kind == node.kind && isCopySpan(a.kind))
                    continue;
                const int64_t ov = std::min(a.end, node.end) - s;
                if (ov <= 0)
                    continue;
                PairInfo* found = pairOf(std::min(a.track, node.track), std::max(a.track, node.track));
                if (!found)
                    continue;
                PairInfo& p = *found;
                p.ns += ov;
                if (ov > p.best) {
                    p.best = ov;
                    p.a = spans[size_t(&a - nodes.data())];
                    p.b = i;
                }
            }
            node.prev = tail;
            if (tail != kNone)
                nodes[tail].next = uint32_t(arrival);
            tail = uint32_t(arrival);
            ends.push({node.end, arrival});
        }
        std::vector<std::pair<std::pair<uint32_t, uint32_t>, PairInfo>> sorted;
        sorted.reserve(pairs.size());
        for (const auto& [key, info] : pairs)
            sorted.push_back({{uint32_t(key >> 32), uint32_t(key)}, info});
        for (size_t lo = 0; lo < dense; ++lo) // in key order already
            for (size_t hi = lo + 1; hi < dense; ++hi)
                if (const PairInfo& p = matrix[lo * dense + hi]; p.ns > 0)
                    sorted.push_back({{denseTracks[lo], denseTracks[hi]}, p});
        if (sorted.empty())
            continue;
        std::sort(sorted.begin(), sorted.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
        std::stable_sort(sorted.begin(), sorted.end(),
                         [](const auto& x, const auto& y) { return x.second.ns > y.second.ns; });
        std::set<uint32_t> streamSet;
        for (const auto& [tracks, info] : sorted)
            if (info.ns >= c.th.overlapMinNs / 10) {
                streamSet.insert(tracks.first);
                streamSet.insert(tracks.second);
            }
        std::vector<uint32_t> streamTracks(streamSet.begin(), streamSet.end());
        std::vector<std::string> streamNames;
        for (uint32_t tr : streamTracks)
            streamNames.push_back(c.t.tracks[tr].name);
        std::vector<uint32_t> example;
        std::vector<std::string> exampleText;
        for (size_t x = 0; x < sorted.size() && x < c.o.maxNamedSpans; ++x) {
            const PairInfo& p = sorted[x].second;
            example.push_back(p.a);
            example.push_back(p.b);
            exampleText.push_back(c.label(p.b) + " ran beside " + c.label(p.a));
        }
        const int64_t makespan = k.lastEnd - k.firstStart;
        std::string msg = (streamNames.size() == 2 ? "Streams " + joinNames(streamNames, 2)
                                                   : std::to_string(streamNames.size()) + " streams ("
                                   + joinNames(streamNames, c.o.maxNamedSpans) + ")")
            + " of device " + std::to_string(device) + " ran at the same time: " + joinNames(exampleText, 2)
            + ". Two or more operations (up to " + std::to_string(k.maxRunning) + ") ran at once for " + c.at(k.multiNs)
            + ", " + percent(double(k.multiNs) / double(k.busyNs)) + " of the time the device was busy";
        if (makespan > 0 && k.workNs > makespan)
            msg += ", so work that takes " + c.at(k.workNs) + " one operation at a time finished in " + c.at(makespan)
                + " (" + times(double(k.workNs) / double(makespan)) + ")";
        msg += ".";
        out.push_back(c.make("streams-overlap", std::move(msg), std::move(example)));
    }
}

// ---- stream-serialization ---------------------------------------------------------------------------------------

void streamSerialization(const Context& c, std::vector<Diagnostic>& out)
{
    for (const auto& [device, spans] : c.gpuSpansByDevice()) {
        if (spans.size() < size_t(std::max(1, c.th.serialMinOps)))
            continue;
        std::map<uint32_t, size_t> perTrack;
        for (uint32_t i : spans)
            ++perTrack[c.t.spans.track[i]];
        const auto top = std::max_element(perTrack.begin(), perTrack.end(),
                                          [](const auto& x, const auto& y) { return x.second < y.second; });
        if (double(top->second) < c.th.serialStreamShare * double(spans.size()))
            continue;
        const Concurrency k = c.concurrency(device);
        if (k.busyNs <= 0 || double(k.multiNs) > c.th.serialMaxConcurrentFraction * double(k.busyNs))
            continue;
        // Operations issued while their stream predecessor still ran, which started right after it ended.
        const uint32_t tr = top->first;
        std::vector<uint32_t> held;
        int64_t launched = 0;
        uint32_t prev = kNone;
        for (uint32_t i = c.t.trackBegin(tr); i < c.t.trackEnd(tr); ++i) {
            if (!isGpuSpan(c.t.spans.kind[i]))
                continue;
            const uint32_t api = c.launchOf[i];
            if (api != kNone && prev != kNone) {
                ++launched;
                const int64_t gap = c.effStart(i) - c.end(prev);
                if (c.end(api) < c.end(prev) && gap >= -c.th.backToBackNs && gap <= c.th.backToBackNs)
                    held.push_back(i);
            }
            prev = i;
        }
        if (held.size() < 2 || double(held.size()) < c.th.serialHeldFraction * double(launched))
            continue;
        const uint32_t ex = held.front();
        const uint32_t exPred = c.streamPred(ex);
        std::string msg = "Device " + std::to_string(device) + " ran "
            + (top->second == spans.size()
                   ? "its " + plural(int64_t(spans.size()), "GPU operation", "GPU operations")
                   : std::to_string(top->second) + " of its " + std::to_string(spans.size()) + " GPU operations")
            + " in one stream, " + c.t.tracks[tr].name + ", one at a time: " + std::to_string(held.size())
            + " were issued while the operation before them still ran and started only when it ended (stream "
              "order), e.g. "
            + c.label(ex) + ", issued at " + c.when(c.end(c.launchOf[ex])) + ", started at " + c.when(c.effStart(ex))
            + (exPred != kNone ? " right after " + c.label(exPred) : std::string()) + ". "
            + (k.multiNs == 0 ? std::string("No two operations ran at once")
                              : "Two operations ran at once for only " + c.at(k.multiNs))
            + ", so the work took " + c.at(k.lastEnd - k.firstStart) + ", as long as its operations one after another ("
            + c.at(k.workNs) + ").";
        std::vector<uint32_t> spansOut(held.begin(), held.end());
        if (exPred != kNone)
            spansOut.push_back(exPred);
        out.push_back(c.make("stream-serialization", std::move(msg), std::move(spansOut)));
    }
}

// ---- copy-compute-overlap ---------------------------------------------------------------------------------------

void copyComputeOverlap(const Context& c, std::vector<Diagnostic>& out)
{
    for (const auto& [device, spans] : c.gpuSpansByDevice()) {
        std::vector<uint32_t> copies, kernels;
        std::vector<Interval> copyIv, kernelIv;
        for (uint32_t i : spans) {
            const SpanKind kind = c.t.spans.kind[i];
            if (isCopySpan(kind)) {
                copies.push_back(i);
                copyIv.push_back({c.effStart(i), c.end(i)});
            } else if (kind == SpanKind::Kernel) {
                kernels.push_back(i);
                kernelIv.push_back({c.effStart(i), c.end(i)});
            }
        }
        if (copies.empty() || kernels.empty())
            continue;
        const auto copyU = mergeIntervals(copyIv);
        const auto kernelU = mergeIntervals(std::move(kernelIv));
        const int64_t copyNs = totalLength(copyU);
        const int64_t ov = intersectionLength(copyU, kernelU);
        if (copyNs <= 0 || ov < c.th.overlapMinNs || double(ov) < c.th.copyComputeMinFraction * double(copyNs))
            continue;
        // The copies that overlapped a kernel, the one that overlapped most first.
        std::vector<std::pair<int64_t, uint32_t>> overlapped;
        for (size_t x = 0; x < copies.size(); ++x)
            if (const int64_t o =
                    (copyIv[x].end - copyIv[x].start) - idleWithin(kernelU, copyIv[x].start, copyIv[x].end);
                o > 0)
                overlapped.emplace_back(o, copies[x]);
        std::stable_sort(overlapped.begin(), overlapped.end(),
                         [](const auto& a, const auto& b) { return a.first > b.first; });
        const uint32_t copy = overlapped.front().second;
        uint32_t kernel = kNone;
        int64_t best = 0;
        for (uint32_t kk : kernels) {
            const int64_t o = std::min(c.end(kk), c.end(copy)) - std::max(c.effStart(kk), c.effStart(copy));
            if (o > best) {
                best = o;
                kernel = kk;
            }
        }
        std::string msg = "On device " + std::to_string(device) + " kernels ran during "
            + percent(double(ov) / double(copyNs)) + " of the copy time (" + c.at(ov) + " of " + c.at(copyNs)
            + "): " + c.label(copy) + " was copied while "
            + (kernel != kNone ? c.label(kernel) : std::string("a kernel")) + " computed";
        if (overlapped.size() > 1)
            msg +=
                ", and " + plural(int64_t(overlapped.size() - 1), "more copy", "more copies") + " overlapped kernels";
        msg += ": the copy engines and the SMs worked at the same time.";
        std::vector<uint32_t> spansOut;
        for (const auto& [o, i] : overlapped)
            spansOut.push_back(i);
        if (kernel != kNone)
            spansOut.push_back(kernel);
        out.push_back(c.make("copy-compute-overlap", std::move(msg), std::move(spansOut)));
    }
}

// ---- event-dependency -------------------------------------------------------------------------------------------

void eventDependency(const Context& c, std::vector<Diagnostic>& out)
{
    struct Held {
        uint32_t producer, consumer;
        int64_t otherwise;
    };
    std::map<int, std::vector<Held>> perDevice;
    for (const Flow& f : c.t.flows) {
        if (f.kind != FlowKind::Event || f.from >= c.n || f.to >= c.n)
            continue;
        const uint32_t p = f.from, q = f.to;
        if (!c.gpuOnStream(p) || !c.gpuOnStream(q) || c.t.spans.track[p] == c.t.spans.track[q])
            continue;
        const int64_t gap = c.start(q) - c.end(p);
        if (gap < -c.th.backToBackNs || gap > c.th.backToBackNs)
            continue;
        const int64_t otherwise = c.ready(q, p);
        if (c.end(p) - otherwise < c.th.minWaitNs)
            continue;
        perDevice[c.device(q)].push_back({p, q, otherwise});
    }
    for (auto& [device, held] : perDevice) {
        std::sort(held.begin(), held.end(),
                  [&c](const Held& a, const Held& b) { return c.start(a.consumer) < c.start(b.consumer); });
        const Held& h = held.front();
        const uint32_t pred = c.streamPred(h.consumer);
        std::string msg = c.label(h.consumer) + " waited on the GPU for " + c.label(h.producer)
            + " in another stream (an event recorded after it, cudaStreamWaitEvent): it could have started at "
            + c.when(h.otherwise) + " but started at " + c.when(c.start(h.consumer)) + ", right after "
            + quoted(c.name(h.producer)) + " ended";
        if (pred != kNone && c.end(pred) > c.effStart(h.producer) && c.effStart(pred) < c.end(h.producer))
            msg += ", while " + c.label(pred) + " before it in its stream ran beside " + quoted(c.name(h.producer));
        if (held.size() > 1)
            msg += "; " + plural(int64_t(held.size() - 1), "more operation", "more operations") + " waited likewise";
        msg += ". The wait ordered the streams on the GPU; the host thread did not block.";
        std::vector<uint32_t> spans;
        for (const Held& x : held) {
            spans.push_back(x.producer);
            spans.push_back(x.consumer);
        }
        out.push_back(c.make("event-dependency", std::move(msg), std::move(spans)));
    }
}

// ---- multi-device-overlap ---------------------------------------------------------------------------------------

void multiDeviceOverlap(const Context& c, std::vector<Diagnostic>& out)
{
    const auto& byDevice = c.gpuSpansByDevice();
    if (byDevice.size() < 2)
        return;
    std::vector<int> devices;
    std::map<int, int64_t> busy;
    for (const auto& [device, spans] : byDevice) {
        devices.push_back(device);
        busy[device] = totalLength(c.deviceBusy(device));
    }
    // Every pair's overlap, row by row on every core where there are many devices (a job of 64 ranks: 2,016
    // pairs, each a walk over both devices' busy intervals); each row writes only its own cells.
    const size_t count = devices.size();
    std::vector<const std::vector<Interval>*> busyOf(count);
    for (size_t a = 0; a < count; ++a)
        busyOf[a] = &c.deviceBusy(devices[a]);
    std::vector<int64_t> overlap(count * count, 0);
    constexpr size_t kDevicesForThreads = 8;
    parallelFor(
        count,
        [&](size_t a) {
            for (size_t b = a + 1; b < count; ++b)
                overlap[a * count + b] = intersectionLength(*busyOf[a], *busyOf[b]);
        },
        count >= kDevicesForThreads ? 0 : 1);
    std::set<int> involved;
    int64_t bestNs = 0;
    std::pair<int, int> bestPair{-1, -1};
    for (size_t a = 0; a < count; ++a)
        for (size_t b = a + 1; b < count; ++b) {
            const int da = devices[a], db = devices[b];
            const int64_t ov = overlap[a * count + b];
            const int64_t less = std::min(busy[da], busy[db]);
            if (less <= 0 || ov < c.th.overlapMinNs || double(ov) < c.th.multiDeviceMinFraction * double(less))
                continue;
            involved.insert(da);
            involved.insert(db);
            if (ov > bestNs) {
                bestNs = ov;
                bestPair = {da, db};
            }
        }
    if (involved.size() < 2)
        return;
    // Time at least two of the involved devices were busy at once. Each device's busy intervals are apart and in
    // order, so the devices' edges are merged as they are walked (a heap of one cursor per device), ends before
    // starts at one time, without a list of every edge (64 devices of 43,000 intervals: 88 MB, sorted, before).
    struct Cursor {
        int64_t time;
        int delta; // -1: the interval at `at` ends; +1: it starts
        const std::vector<Interval>* busy;
        size_t at;
    };
    auto later = [](const Cursor& a, const Cursor& b) {
        return a.time != b.time ? a.time > b.time : a.delta > b.delta;
    };
    std::priority_queue<Cursor, std::vector<Cursor>, decltype(later)> edges(later);
    for (int d : involved)
        if (const auto& iv = c.deviceBusy(d); !iv.empty())
            edges.push({iv.front().start, +1, &iv, 0});
    int64_t together = 0, last = edges.empty() ? 0 : edges.top().time;
    int running = 0, maxRunning = 0;
    while (!edges.empty()) {
        Cursor e = edges.top();
        edges.pop();
        if (running >= 2)
            together += e.time - last;
        running += e.delta;
        maxRunning = std::max(maxRunning, running);
        last = e.time;
        if (e.delta > 0)
            edges.push({(*e.busy)[e.at].end, -1, e.busy, e.at});
        else if (e.at + 1 < e.busy->size())
            edges.push({(*e.busy)[e.at + 1].start, +1, e.busy, e.at + 1});
    }
    // The longest operation of each device of the best pair, as the example.
    auto longest = [&c, &byDevice](int d) {
        uint32_t best = kNone;
        for (uint32_t i : byDevice.at(d))
            if (best == kNone || c.effDur(i) > c.effDur(best))
                best = i;
        return best;
    };
    const uint32_t ea = longest(bestPair.first), eb = longest(bestPair.second);
    std::vector<std::string> names;
    for (int d : involved)
        names.push_back(std::to_string(d));
    std::string msg = "Devices " + joinNames(names, 8) + " worked at the same time: up to " + std::to_string(maxRunning)
        + " of them were busy at once, for " + c.at(together) + " in all; " + deviceStream(c, eb) + " ran while "
        + deviceStream(c, ea) + " ran (devices " + std::to_string(bestPair.first) + " and "
        + std::to_string(bestPair.second) + " overlapped for " + c.at(bestNs) + ", "
        + percent(double(bestNs) / double(std::min(busy[bestPair.first], busy[bestPair.second])))
        + " of the less busy one's time). Each device runs its own work on its own SMs.";
    out.push_back(c.make("multi-device-overlap", std::move(msg), {ea, eb}));
}

// ---- stream-priority --------------------------------------------------------------------------------------------

void streamPriority(const Context& c, std::vector<Diagnostic>& out)
{
    for (const auto& [device, gpuSpans] : c.gpuSpansByDevice()) {
        std::vector<uint32_t> kernels;
        for (uint32_t i : gpuSpans)
            if (c.t.spans.kind[i] == SpanKind::Kernel)
                kernels.push_back(i);
        std::set<int> priorities;
        for (uint32_t i : kernels)
            priorities.insert(c.t.tracks[c.t.spans.track[i]].priority);
        if (priorities.size() < 2)
            continue;
        std::vector<std::pair<uint32_t, uint32_t>> overtook; // (urgent, background)
        for (size_t x = 0; x < kernels.size(); ++x) {
            const uint32_t urgent = kernels[x];
            const int pu = c.t.tracks[c.t.spans.track[urgent]].priority;
            const int64_t arrived = c.ready(urgent);
            // Kernels of lower priority (numerically higher) that started before it arrived and ended well after it.
            for (size_t y = x; y-- > 0 && x - y <= 256;) {
                const uint32_t bg = kernels[y];
                if (c.t.tracks[c.t.spans.track[bg]].priority <= pu)
                    continue;
                const int64_t lead =
                    std::max<int64_t>(c.th.backToBackNs, int64_t(c.th.priorityMinLeadFraction * double(c.effDur(bg))));
                if (c.effStart(bg) < arrived && arrived < c.end(bg) && c.end(urgent) <= c.end(bg) - lead) {
                    overtook.emplace_back(urgent, bg);
                    break;
                }
            }
        }
        if (overtook.empty())
            continue;
        const auto [u, b] = overtook.front();
        const auto& tu = c.t.tracks[c.t.spans.track[u]];
        const auto& tb = c.t.tracks[c.t.spans.track[b]];
        std::string msg = quoted(c.name(u)) + " (" + tu.name + ", priority " + std::to_string(tu.priority)
            + ") arrived at " + c.when(c.ready(u)) + " while " + quoted(c.name(b)) + " (" + tb.name + ", priority "
            + std::to_string(tb.priority) + ") ran, and finished at " + c.when(c.end(u)) + ", "
            + c.at(c.end(b) - c.end(u)) + " before it: as blocks of " + quoted(c.name(b))
            + " finished, the GPU gave the free SMs to the higher-priority stream first (running blocks are not "
              "preempted)";
        if (overtook.size() > 1)
            msg += "; " + plural(int64_t(overtook.size() - 1), "more kernel", "more kernels") + " overtook likewise";
        msg += ".";
        std::vector<uint32_t> spans;
        for (const auto& [x, y] : overtook) {
            spans.push_back(x);
            spans.push_back(y);
        }
        out.push_back(c.make("stream-priority", std::move(msg), std::move(spans)));
    }
}

// ---- graph-launch -----------------------------------------------------------------------------------------------

void graphLaunch(const Context& c, std::vector<Diagnostic>& out)
{
    // GPU spans each launch call issued: its own, and the following spans of that stream that no call launched;
    // (call, span) in stream order, then grouped by call with a counting sort that keeps that order (a vector per
    // span of the trace was 1.5 M allocations on a 1.5 M-span trace).
    std::vector<std::pair<uint32_t, uint32_t>> byStream;
    for (uint32_t tr = 0; tr < c.t.tracks.size(); ++tr) {
        if (c.t.tracks[tr].kind != TrackKind::Stream)
            continue;
        uint32_t api = kNone;
        for (uint32_t i = c.t.trackBegin(tr); i < c.t.trackEnd(tr); ++i) {
            if (!isGpuSpan(c.t.spans.kind[i]))
                continue;
            if (c.launchOf[i] != kNone)
                api = c.launchOf[i];
            if (api != kNone)
                byStream.emplace_back(api, i);
        }
    }
    std::vector<uint32_t> issuedBegin(c.n + 1, 0); // the spans of call a: issued[issuedBegin[a], issuedBegin[a + 1])
    for (const auto& [api, i] : byStream)
        ++issuedBegin[api + 1];
    for (size_t a = 0; a < c.n; ++a)
        issuedBegin[a + 1] += issuedBegin[a];
    std::vector<uint32_t> issued(byStream.size());
    {
        std::vector<uint32_t> fill(issuedBegin.begin(), issuedBegin.end() - 1);
        for (const auto& [api, i] : byStream)
            issued[fill[api]++] = i;
    }
    // Whether each distinct call name is a graph launch (-1: not looked up yet).
    std::vector<signed char> graphCall(c.t.strings.size(), -1);
    struct Acc {
        int64_t launches = 0, ops = 0, callNs = 0;
        int64_t first = std::numeric_limits<int64_t>::max(), last = kMinTime;
        int device = -1;
        std::string graph;
        std::vector<uint32_t> spans;
    };
    std::map<uint32_t, Acc> perThread;
    for (uint32_t api = 0; api < c.n; ++api) {
        const uint32_t from = issuedBegin[api], to = issuedBegin[api + 1];
        if (from == to)
            continue;
        signed char& isGraph = graphCall[c.t.spans.name[api]];
        if (isGraph < 0)
            isGraph = c.t.spanName(api).find("GraphLaunch") != std::string_view::npos ? 1 : 0;
        if (isGraph == 0)
            continue;
        const uint32_t first = issued[from];
        int64_t nodes = int64_t(to - from);
        if (const Op* op = c.scenarioOp(first); op && op->kind == OpKind::Graph)
            nodes = int64_t(op->ops.size());
        Acc& a = perThread[c.t.spans.track[api]];
        ++a.launches;
        a.ops += nodes;
        a.callNs += c.dur(api);
        a.device = c.device(first);
        if (a.graph.empty())
            a.graph = std::string(c.t.spanName(first));
        for (uint32_t x = from; x < to; ++x) {
            const uint32_t i = issued[x];
            a.first = std::min(a.first, c.effStart(i));
            a.last = std::max(a.last, c.end(i));
        }
        a.spans.push_back(api);
        a.spans.push_back(first);
    }
    for (auto& [track, a] : perThread) {
        if (a.ops < 2 * a.launches)
            continue;
        const int64_t busyNs =
            a.last > a.first ? (a.last - a.first) - idleWithin(c.deviceBusy(a.device), a.first, a.last) : 0;
        std::string msg = "Host thread " + c.t.tracks[track].name + " launched "
            + plural(a.ops, "GPU operation", "GPU operations") + " with "
            + plural(a.launches, "cudaGraphLaunch call", "cudaGraphLaunch calls") + " (graph " + quoted(a.graph) + ", "
            + std::to_string(a.ops / a.launches) + " operations per launch): " + c.at(a.callNs)
            + " of launch calls in all, " + c.at(a.callNs / a.ops) + " per operation, and device "
            + std::to_string(a.device) + " ran the graphs' operations back to back ("
            + percent(a.last > a.first ? double(busyNs) / double(a.last - a.first) : 0.0)
            + " busy from the first graph's start to the last one's end).";
        out.push_back(c.make("graph-launch", std::move(msg), std::move(a.spans)));
    }
}

} // namespace streamscope::diag
