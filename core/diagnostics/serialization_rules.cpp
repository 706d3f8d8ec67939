// Problem rules: why work in different streams of one device ran one after another when it could have overlapped —
// the legacy default stream's barriers, streams sharing a hardware queue, a kernel that filled the GPU, host functions
// that queue behind each other. Each names the spans it is about and what to change.
#include "diagnostics_context.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <set>

namespace streamscope::diag {

// ---- legacy-default-stream --------------------------------------------------------------------------------------

namespace {

bool isBlockingKind(StreamKind k)
{
    return k == StreamKind::Blocking || k == StreamKind::PerThreadDefault;
}

// The waits of several operations, [ready, start) each: their sum counts time in which two of them waited twice, so
// the text also gives the time during which at least one of them waited ("10 ms of waiting" in a 4 ms run is a sum).
std::string waitingText(const Context& c, std::vector<std::pair<int64_t, int64_t>> waits)
{
    std::sort(waits.begin(), waits.end());
    int64_t sum = 0;
    int64_t wall = 0;
    int64_t coveredTo = std::numeric_limits<int64_t>::min();
    for (const auto& [from, to] : waits) {
        if (to <= from)
            continue;
        sum += to - from;
        if (to > coveredTo) {
            wall += to - std::max(from, coveredTo);
            coveredTo = to;
        }
    }
    if (waits.size() < 2 || wall >= sum)
        return c.at(sum) + " of waiting";
    return c.at(sum) + " of waiting summed over the operations, during " + c.at(wall) + " of the run";
}

} // namespace

void legacyDefaultStream(const Context& c, std::vector<Diagnostic>& out)
{
    const auto& tracks = c.t.tracks;
    const int64_t tol = c.th.backToBackNs;
    // (a) The barrier between the legacy default stream and blocking streams, from implicit flows between GPU
    // operations, or — in traces without implicit flows — from spans that started right when a span of the other
    // side ended although they were ready earlier.
    std::vector<std::pair<uint32_t, uint32_t>> held; // (waited for, waited)
    if (c.anyImplicit) {
        for (const auto& f : c.t.flows) {
            if (f.kind != FlowKind::Implicit || f.from >= c.n || f.to >= c.n)
                continue;
            if (!c.gpuOnStream(f.from) || !c.gpuOnStream(f.to))
                continue;
            const int64_t own = c.ready(f.to, f.from);
            if (c.start(f.to) >= c.end(f.from) - tol && own < c.end(f.from) - tol)
                held.emplace_back(f.from, f.to);
        }
    } else {
        for (uint32_t lt = 0; lt < tracks.size(); ++lt) {
            if (tracks[lt].kind != TrackKind::Stream || tracks[lt].streamKind != StreamKind::LegacyDefault)
                continue;
            for (uint32_t bt = 0; bt < tracks.size(); ++bt) {
                if (bt == lt || tracks[bt].kind != TrackKind::Stream || tracks[bt].device != tracks[lt].device
                    || !isBlockingKind(tracks[bt].streamKind))
                    continue;
                // Either side waiting for the other: its span started right after the other's ended, and it had
                // been ready (launched, its own stream done) well before.
                auto scan = [&](uint32_t fromTrack, uint32_t toTrack) {
                    for (uint32_t j = c.t.trackBegin(toTrack); j < c.t.trackEnd(toTrack); ++j) {
                        if (!isGpuSpan(c.t.spans.kind[j]))
                            continue;
                        const auto b = c.starts().begin() + c.t.trackBegin(fromTrack);
                        const auto e = c.starts().begin() + c.t.trackEnd(fromTrack);
                        auto pos = std::upper_bound(b, e, c.start(j));
                        for (int steps = 0; pos != b && steps < 4; ++steps) {
                            --pos;
                            const auto p = uint32_t(pos - c.starts().begin());
                            if (c.end(p) <= c.start(j) && c.end(p) >= c.start(j) - tol) {
                                bool known = false;
                                const int64_t own = c.ready(j, kNone, &known);
                                if (known && own < c.end(p) - c.th.minWaitNs)
                                    held.emplace_back(p, j);
                                break;
                            }
                        }
                    }
                };
                scan(lt, bt);
                scan(bt, lt);
            }
        }
    }
    if (!held.empty() && (c.anyImplicit || held.size() >= 2)) {
        std::sort(held.begin(), held.end(), [&c](auto a, auto b) { return c.start(a.second) < c.start(b.second); });
        std::vector<std::string> pairs;
        std::vector<uint32_t> spans;
        std::set<uint32_t> waited;
        std::vector<std::pair<int64_t, int64_t>> waits;
        std::set<int> devices;
        for (const auto& [from, to] : held) {
            spans.push_back(from);
            spans.push_back(to);
            if (waited.insert(to).second) {
                pairs.push_back(c.label(to) + " waited for " + c.label(from));
                waits.emplace_back(c.ready(to, from), c.start(to));
            }
            devices.insert(c.device(to));
        }
        std::string msg = "The legacy default stream is a barrier for the blocking streams of device "
            + std::to_string(*devices.begin()) + ": " + joinNames(pairs, c.o.maxNamedSpans) + "; "
            + plural(int64_t(waited.size()), "operation", "operations")
            + " waited for this implicit synchronization although nothing else ordered them ("
            + waitingText(c, std::move(waits)) + ").";
        out.push_back(c.make("legacy-default-stream", std::move(msg), std::move(spans)));
    }

    // (b) Several host threads sharing the one legacy default stream of a device: their work serializes in it.
    for (uint32_t lt = 0; lt < tracks.size(); ++lt) {
        if (tracks[lt].kind != TrackKind::Stream || tracks[lt].streamKind != StreamKind::LegacyDefault)
            continue;
        std::set<uint32_t> hosts;
        std::vector<uint32_t> spans;
        int64_t waited = 0, lost = 0;
        uint32_t example = kNone;
        for (uint32_t j = c.t.trackBegin(lt); j < c.t.trackEnd(lt); ++j) {
            const uint32_t api = c.launchOf[j];
            if (api == kNone)
                continue;
            hosts.insert(c.t.spans.track[api]);
            const uint32_t p = c.streamPred(j);
            if (p == kNone || c.launchOf[p] == kNone || c.t.spans.track[c.launchOf[p]] == c.t.spans.track[api])
                continue;
            // Launched by another host thread, and started only when that thread's work ended.
            if (c.end(api) < c.end(p) - c.th.minWaitNs && c.start(j) >= c.end(p) - c.th.backToBackNs) {
                ++waited;
                lost += c.start(j) - c.end(api);
                spans.push_back(j);
                spans.push_back(p);
                if (example == kNone)
                    example = j;
            }
        }
        if (hosts.size() < 2 || waited < 2)
            continue;
        std::vector<std::string> hostNames;
        for (uint32_t h : hosts)
            hostNames.push_back(tracks[h].name);
        const uint32_t p = c.streamPred(example);
        std::string msg = "Host threads " + joinNames(hostNames, 4) + " all issue into the legacy default stream "
            + quoted(tracks[lt].name) + " of device " + std::to_string(tracks[lt].device)
            + ", so their work runs one operation at a time: " + c.label(example) + " of "
            + tracks[c.t.spans.track[c.launchOf[example]]].name + " waited for " + c.label(p) + " of "
            + tracks[c.t.spans.track[c.launchOf[p]]].name + ", and " + plural(waited, "operation", "operations")
            + " waited for other threads' work (" + c.at(lost) + " in total).";
        out.push_back(c.make("legacy-default-stream", std::move(msg), std::move(spans)));
    }
}

// ---- hardware-queue-false-dependency ----------------------------------------------------------------------------

void hardwareQueues(const Context& c, std::vector<Diagnostic>& out)
{
    const int connections = c.maxConnections();
    std::map<int, std::vector<uint32_t>> streamsOf; // device -> stream tracks with GPU work, in track order
    for (uint32_t tr = 0; tr < c.t.tracks.size(); ++tr) {
        const Track& track = c.t.tracks[tr];
        if (track.kind != TrackKind::Stream)
            continue;
        bool gpu = false;
        for (uint32_t i = c.t.trackBegin(tr); i < c.t.trackEnd(tr) && !gpu; ++i)
            gpu = isGpuSpan(c.t.spans.kind[i]);
        if (gpu)
            streamsOf[track.device].push_back(tr);
    }
    for (const auto& [device, streams] : streamsOf) {
        if (int(streams.size()) <= connections)
            continue;
        // CUDA deals streams to the queues round-robin in creation order; the trace's track order is that order
        // for traces StreamScope recorded, and a guess for imported ones.
        std::vector<size_t> queueOf(c.t.tracks.size(), 0);
        for (size_t k = 0; k < streams.size(); ++k)
            queueOf[streams[k]] = k % size_t(connections);
        const DeviceCaps caps = c.caps(device);
        std::vector<uint32_t> spans;
        std::vector<std::pair<uint32_t, uint32_t>> held; // (blocker, held back)
        // The operations that waited (ready well before they started), in stream order, with when they were ready.
        std::vector<std::pair<uint32_t, int64_t>> waited;
        std::vector<uint32_t> trackOf; // index into streams, per waited operation
        for (size_t x = 0; x < streams.size(); ++x) {
            const uint32_t tr = streams[x];
            for (uint32_t i = c.t.trackBegin(tr); i < c.t.trackEnd(tr); ++i) {
                const SpanKind k = c.t.spans.kind[i];
                if (!isGpuSpan(k) || k == SpanKind::HostFunc)
                    continue;
                bool known = false;
                const int64_t ready = c.ready(i, kNone, &known);
                if ((!known && c.streamPred(i) == kNone) || c.start(i) - ready < c.th.minWaitNs)
                    continue;
                waited.emplace_back(i, ready);
                trackOf.push_back(uint32_t(x));
            }
        }
        // The unrelated operation each waited behind: one that ended just before it started in another stream of the
        // device, preferably one sharing its queue. They are visited in order of start across all streams, so that
        // the position in each other stream of its first span that started later only moves forward: each stream
        // is read once (a binary search over every other stream per waiting operation, or a pass over them per
        // stream, was most of the rule's time on a 1.5 M-span trace).
        std::vector<uint32_t> order(waited.size());
        for (uint32_t q = 0; q < order.size(); ++q)
            order[q] = q;
        sortRuns(order, [&](uint32_t x, uint32_t y) {
            const int64_t sx = c.start(waited[x].first), sy = c.start(waited[y].first);
            return sx != sy ? sx < sy : x < y;
        });
        std::vector<uint32_t> after(streams.size());
        for (size_t x = 0; x < streams.size(); ++x)
            after[x] = c.t.trackBegin(streams[x]);
        std::vector<uint32_t> blockerOf(waited.size(), kNone);
        for (uint32_t q : order) {
            const auto [i, ready] = waited[q];
            const uint32_t tr = streams[trackOf[q]];
            uint32_t blocker = kNone;
            bool sameQueue = false;
            for (size_t x = 0; x < streams.size(); ++x) {
                const uint32_t other = streams[x];
                if (other == tr)
                    continue;
                const uint32_t b = c.t.trackBegin(other);
                uint32_t pos = c.firstStartAfter(after[x], c.t.trackEnd(other), c.start(i));
                after[x] = pos;
                for (int steps = 0; pos != b && steps < 4; ++steps) {
                    const uint32_t p = --pos;
                    if (c.end(p) > c.start(i))
                        continue;
                    if (c.end(p) >= c.start(i) - c.th.backToBackNs && isGpuSpan(c.t.spans.kind[p])
                        && c.end(p) > ready) {
                        const bool same = queueOf[other] == queueOf[tr];
                        if (blocker == kNone || (same && !sameQueue)) {
                            blocker = p;
                            sameQueue = same;
                        }
                    }
                    break;
                }
            }
            blockerOf[q] = blocker;
        }
        for (size_t q = 0; q < waited.size(); ++q) {
            const uint32_t i = waited[q].first, blocker = blockerOf[q];
            if (blocker == kNone || c.t.spans.kind[blocker] == SpanKind::HostFunc)
                continue;
            // A blocker that overfills the SMs explains the wait by resources (gpu-filling-kernel), not queues.
            if (c.t.spans.kind[blocker] == SpanKind::Kernel && caps.smCount > 0) {
                const Dim3 blk = c.t.spans.blockOf(blocker);
                const int64_t threads = int64_t(blk.count());
                const int64_t perSm = threads > 0 && caps.maxThreadsPerSm > 0
                    ? std::min(caps.maxBlocksPerSm, caps.maxThreadsPerSm / threads)
                    : caps.maxBlocksPerSm;
                if (int64_t(c.t.spans.gridOf(blocker).count()) > caps.smCount * std::max<int64_t>(1, perSm)
                    && c.t.spans.gridOf(blocker).x > 0)
                    continue;
            }
            held.emplace_back(blocker, i);
        }
        if (int(held.size()) < c.th.minFalseDependencies)
            continue;
        std::sort(held.begin(), held.end(), [&c](auto a, auto b) { return c.start(a.second) < c.start(b.second); });
        std::vector<std::pair<int64_t, int64_t>> waits;
        for (const auto& [blocker, i] : held) {
            spans.push_back(i);
            spans.push_back(blocker);
            waits.emplace_back(c.ready(i), c.start(i));
        }
        const auto [blocker, first] = held.front();
        std::string msg = "Device " + std::to_string(device) + " ran " + std::to_string(streams.size()) + " streams on "
            + plural(connections, "hardware queue", "hardware queues") + " (CUDA_DEVICE_MAX_CONNECTIONS="
            + std::to_string(connections) + "), so streams share queues: " + c.label(first) + " was ready at "
            + c.when(c.ready(first)) + " but started only at " + c.when(c.start(first)) + ", right after "
            + c.label(blocker) + " ended, with no stream-order or event dependency between them; "
            + plural(int64_t(held.size()), "operation was", "operations were") + " held back like this ("
            + waitingText(c, std::move(waits)) + ").";
        out.push_back(c.make("hardware-queue-false-dependency", std::move(msg), std::move(spans)));
    }
}

// ---- gpu-filling-kernel -----------------------------------------------------------------------------------------

void gpuFillingKernel(const Context& c, std::vector<Diagnostic>& out)
{
    std::map<int, std::vector<uint32_t>> kernelsOf; // device -> kernels on streams
    for (uint32_t i = 0; i < c.n; ++i)
        if (c.t.spans.kind[i] == SpanKind::Kernel && c.onStream(i))
            kernelsOf[c.device(i)].push_back(i);
    for (auto& [device, kernels] : kernelsOf) {
        const DeviceCaps caps = c.caps(device);
        if (caps.smCount <= 0)
            continue;
        std::sort(kernels.begin(), kernels.end(), [&c](uint32_t a, uint32_t b) { return c.start(a) < c.start(b); });
        Diagnostic first;          // the first case, worded
        std::vector<uint32_t> all; // the spans of the cases after the first
        int64_t cases = 0;
        for (uint32_t big : kernels) {
            const Dim3 grid = c.t.spans.gridOf(big);
            const Dim3 block = c.t.spans.blockOf(big);
            if (grid.x == 0 || c.effDur(big) <= 0)
                continue;
            const int64_t threads = int64_t(block.count());
            const int64_t perSm = c.blocksPerSm(caps, block);
            const int64_t resident = caps.smCount * perSm;
            if (int64_t(grid.count()) < resident)
                continue;
            // Kernels of other streams that were ready while it ran and got SMs only in its tail (a grid of exactly
            // one wave: only when its blocks finished).
            std::vector<uint32_t> waiting;
            const bool more = int64_t(grid.count()) > resident;
            const int64_t tailStart = more ? c.effStart(big) + int64_t(c.th.fillingTailFraction * double(c.effDur(big)))
                                           : c.end(big) - c.th.backToBackNs;
            const int64_t minWait =
                std::max<int64_t>(c.th.minWaitNs, int64_t(c.th.fillingMinWaitFraction * double(c.effDur(big))));
            auto from = std::lower_bound(kernels.begin(), kernels.end(), c.start(big),
                                         [&c](uint32_t k, int64_t t) { return c.start(k) < t; });
            for (auto it = from; it != kernels.end() && c.start(*it) <= c.end(big) + c.th.backToBackNs; ++it) {
                const uint32_t w = *it;
                if (w == big || c.t.spans.track[w] == c.t.spans.track[big])
                    continue;
                // On an event-timed trace the span starts when its stream reached it; effStart is when it ran.
                const int64_t ready = c.ready(w);
                if (c.effStart(w) >= tailStart && ready < c.end(big) - c.th.backToBackNs
                    && c.effStart(w) - ready >= minWait)
                    waiting.push_back(w);
            }
            if (waiting.empty())
                continue;
            std::vector<uint32_t> spans{big};
            spans.insert(spans.end(), waiting.begin(), waiting.end());
            ++cases;
            if (cases > 1) {
                // Only the first case is worded: the others add their spans (in the order and number one
                // diagnostic of their own would list) and are counted. Wording every case was most of the rule's
                // time on a 1.5 M-span trace.
                c.orderSpans(spans);
                all.insert(all.end(), spans.begin(), spans.end());
                continue;
            }
            std::vector<std::string> names;
            // Whether they got SMs before it ended (its last wave freed some) or only once it had ended.
            const bool afterEnd = std::all_of(waiting.begin(), waiting.end(), [&](uint32_t w) {
                return c.effStart(w) >= c.end(big) - c.th.backToBackNs;
            });
            for (uint32_t w : waiting)
                names.push_back(c.label(w) + " (ready at " + c.when(c.ready(w)) + ", "
                                + (c.effStart(w) > c.start(w) ? "running from " : "started at ") + c.when(c.effStart(w))
                                + ")");
            std::string msg = c.label(big) + " has " + std::to_string(grid.count()) + " blocks, "
                + (more ? "more than" : "as many as") + " device " + std::to_string(device) + " holds at once ("
                + std::to_string(caps.smCount) + " SMs x " + std::to_string(perSm)
                + (threads > 0 ? " blocks of " + std::to_string(threads) + " threads" : std::string(" blocks")) + " = "
                + std::to_string(resident) + "), so "
                + (more ? "it took every SM slot that freed" : "it left no SM slot free until its blocks finished")
                + ": " + joinNames(names, c.o.maxNamedSpans)
                + (afterEnd ? " could start only when it ended, although " : " got SMs only in its tail, although ")
                + (waiting.size() == 1 ? "it was" : "they were") + " in another stream.";
            first = c.make("gpu-filling-kernel", std::move(msg), std::move(spans));
        }
        // One diagnostic per device: the first case, and how often it happened.
        if (cases == 0)
            continue;
        if (cases > 1) {
            first.message +=
                " The same happened with " + plural(cases - 1, "more kernel", "more kernels") + " on this device.";
            // The spans of every case: the worded one's with the others'.
            all.insert(all.begin(), first.spans.begin(), first.spans.end());
            first = c.make("gpu-filling-kernel", std::move(first.message), std::move(all));
        }
        out.push_back(std::move(first));
    }
}

// ---- host-func-serialization ------------------------------------------------------------------------------------

void hostFuncSerialization(const Context& c, std::vector<Diagnostic>& out)
{
    std::map<int, std::vector<uint32_t>> funcsOf;
    for (uint32_t i = 0; i < c.n; ++i)
        if (c.t.spans.kind[i] == SpanKind::HostFunc && c.onStream(i))
            funcsOf[c.device(i)].push_back(i);
    for (auto& [device, funcs] : funcsOf) {
        if (funcs.size() < 2)
            continue;
        std::sort(funcs.begin(), funcs.end(), [&c](uint32_t a, uint32_t b) { return c.start(a) < c.start(b); });
        // Never overlapped: host functions of this device ran one at a time.
        bool overlapped = false;
        int64_t lastEnd = kMinTime;
        for (uint32_t f : funcs) {
            overlapped = overlapped || c.start(f) < lastEnd;
            lastEnd = std::max(lastEnd, c.end(f));
        }
        if (overlapped)
            continue;
        std::vector<std::pair<uint32_t, uint32_t>> held;
        for (size_t k = 1; k < funcs.size(); ++k) {
            const uint32_t a = funcs[k - 1], b = funcs[k];
            if (c.t.spans.track[a] == c.t.spans.track[b])
                continue;
            const int64_t gapTol = std::max<int64_t>(c.th.hostFuncGapNs, c.dur(b) / 10);
            const bool backToBack = c.start(b) >= c.end(a) && c.start(b) - c.end(a) <= gapTol;
            if (backToBack && c.ready(b) <= c.end(a) - c.th.minWaitNs)
                held.emplace_back(a, b);
        }
        if (held.empty())
            continue;
        std::vector<std::string> names;
        std::vector<uint32_t> spans;
        std::set<uint32_t> streams;
        int64_t lost = 0;
        for (const auto& [a, b] : held) {
            spans.push_back(a);
            spans.push_back(b);
            streams.insert(c.t.spans.track[a]);
            streams.insert(c.t.spans.track[b]);
            lost += c.start(b) - c.ready(b);
        }
        const auto [a, b] = held.front();
        std::string msg = "Host functions of " + std::to_string(streams.size())
            + " streams ran one at a time on the driver thread: " + c.label(b) + " was ready at " + c.when(c.ready(b))
            + " but ran only after " + c.label(a) + " ended at " + c.when(c.end(a));
        if (held.size() > 1)
            msg += ", and " + plural(int64_t(held.size() - 1), "more host function", "more host functions")
                + " waited likewise";
        msg += " (" + c.at(lost) + " of waiting in their streams in total).";
        out.push_back(c.make("host-func-serialization", std::move(msg), std::move(spans)));
    }
}

} // namespace streamscope::diag
