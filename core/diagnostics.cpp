#include "diagnostics.h"

#include "diagnostics_context.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <set>

namespace streamscope {

namespace {

const std::vector<DiagnosticRule> kRules = {
    {"pageable-memcpy", "warning", "Copies from pageable host memory block the host",
     "Allocate the host buffers pinned (cudaMallocHost / cudaHostRegister) so that cudaMemcpyAsync returns at once "
     "and the copies overlap kernels."},
    {"legacy-default-stream", "warning", "The legacy default stream serializes work",
     "Create streams with cudaStreamNonBlocking, compile with --default-stream per-thread, or give each host thread "
     "its own stream instead of stream 0."},
    {"hardware-queue-false-dependency", "warning", "Streams share hardware queues: false dependencies",
     "Set CUDA_DEVICE_MAX_CONNECTIONS (up to 32) before the CUDA context is created, use fewer streams, or issue "
     "the work breadth-first (first op of every stream, then the second ...)."},
    {"gpu-filling-kernel", "warning", "A kernel fills the GPU and leaves no room for other streams",
     "Give the big kernel fewer blocks (a grid-stride loop over one or two waves), or a lower priority than the "
     "work that must not wait."},
    {"host-func-serialization", "warning", "Host functions of different streams run one at a time",
     "Keep host functions short, or move their work into kernels or onto host threads of your own and signal the "
     "stream with an event."},
    {"sync-in-loop", "warning", "A host thread synchronizes after nearly every launch",
     "Issue a batch of work before synchronizing, and synchronize on an event only where the host needs the "
     "result."},
    {"launch-bound", "warning", "GPU operations are shorter than their launches",
     "Capture the sequence into a CUDA graph, fuse the small kernels, or give each launch more work."},
    {"implicit-sync", "warning", "A call synchronized the device implicitly",
     "Allocate and free outside the loop (or use cudaMallocAsync / cudaFreeAsync and a memory pool)."},
    {"timing-perturbation", "warning", "Timing changed the run",
     "Time with CUPTI (--timing cupti) where per-op CUDA events share hardware queues; with CUDA events where CUPTI "
     "slows graph launches; the trace stores the untimed makespan to compare."},
    {"wait-unrecorded-event", "error", "A stream waits on an event that is never recorded",
     "Record the event (cudaEventRecord) in the producing stream before the consumer's stream waits on it."},
    // Effects: what the run shows, the way the lessons teach it.
    {"streams-overlap", "info", "Work in different streams overlapped",
     "Independent work in separate streams runs at once when the device has room for it."},
    {"stream-serialization", "info", "One stream ran its work one operation at a time",
     "Operations of one stream run in issue order; put work that does not depend on the previous operation into "
     "another stream (created with cudaStreamNonBlocking) so that it can overlap."},
    {"copy-compute-overlap", "info", "Copies overlapped kernels",
     "The copy engines and the SMs work at once when copies and kernels are in different streams and the host "
     "memory is pinned."},
    {"event-dependency", "info", "An event ordered work across streams",
     "cudaEventRecord + cudaStreamWaitEvent make one stream wait for another on the GPU without blocking the host."},
    {"multi-device-overlap", "info", "Several GPUs worked at the same time",
     "Each device has its own SMs and copy engines: give each device its own host thread or stream and its share "
     "of the work."},
    {"stream-priority", "info", "A higher-priority stream overtook a running kernel",
     "Give latency-critical work a stream created with cudaStreamCreateWithPriority and a higher (numerically "
     "lower) priority."},
    {"graph-launch", "info", "A CUDA graph launched many operations with one call",
     "Capture short, repeated sequences of operations into a CUDA graph and launch it with cudaGraphLaunch."},
};

using namespace diag;

// ---- pageable-memcpy --------------------------------------------------------------------------------------------

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
        const auto b = c.t.spans.start.begin() + c.t.trackBegin(tr);
        const auto e = c.t.spans.start.begin() + c.t.trackEnd(tr);
        auto pos = std::lower_bound(b, e, c.end(copy));
        for (int steps = 0; pos != b && steps < 8; ++steps) {
            --pos;
            const auto h = uint32_t(pos - c.t.spans.start.begin());
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
            blocked = c.dur(api) >= c.th.pageableMinCallNs
                && double(covered) >= c.th.pageableCallCoverage * double(c.dur(i));
        }
        const Op* op = c.scenarioOp(i);
        const bool pageable = op && op->kind == OpKind::Memcpy && !op->pinned
            && (op->copy == CopyKind::H2D || op->copy == CopyKind::D2H);
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

// ---- legacy-default-stream --------------------------------------------------------------------------------------

bool isBlockingKind(StreamKind k) { return k == StreamKind::Blocking || k == StreamKind::PerThreadDefault; }

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
                        const auto b = c.t.spans.start.begin() + c.t.trackBegin(fromTrack);
                        const auto e = c.t.spans.start.begin() + c.t.trackEnd(fromTrack);
                        auto pos = std::upper_bound(b, e, c.start(j));
                        for (int steps = 0; pos != b && steps < 4; ++steps) {
                            --pos;
                            const auto p = uint32_t(pos - c.t.spans.start.begin());
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
        int64_t lost = 0;
        std::set<int> devices;
        for (const auto& [from, to] : held) {
            spans.push_back(from);
            spans.push_back(to);
            if (waited.insert(to).second) {
                pairs.push_back(c.label(to) + " waited for " + c.label(from));
                lost += std::max<int64_t>(0, c.start(to) - c.ready(to, from));
            }
            devices.insert(c.device(to));
        }
        std::string msg = "The legacy default stream is a barrier for the blocking streams of device "
            + std::to_string(*devices.begin()) + ": " + joinNames(pairs, c.o.maxNamedSpans) + "; "
            + plural(int64_t(waited.size()), "operation", "operations")
            + " waited for this implicit synchronization although nothing else ordered them (" + c.at(lost)
            + " of waiting in total).";
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
        std::map<uint32_t, size_t> queueOf;
        for (size_t k = 0; k < streams.size(); ++k)
            queueOf[streams[k]] = k % size_t(connections);
        const DeviceCaps caps = c.caps(device);
        std::vector<uint32_t> spans;
        std::vector<std::pair<uint32_t, uint32_t>> held; // (blocker, held back)
        for (uint32_t tr : streams) {
            for (uint32_t i = c.t.trackBegin(tr); i < c.t.trackEnd(tr); ++i) {
                const SpanKind k = c.t.spans.kind[i];
                if (!isGpuSpan(k) || k == SpanKind::HostFunc)
                    continue;
                bool known = false;
                const int64_t ready = c.ready(i, kNone, &known);
                if ((!known && c.streamPred(i) == kNone) || c.start(i) - ready < c.th.minWaitNs)
                    continue;
                // The unrelated operation it waited behind: one that ended just before it started in another
                // stream of the device, preferably one sharing its queue.
                uint32_t blocker = kNone;
                bool sameQueue = false;
                for (uint32_t other : streams) {
                    if (other == tr)
                        continue;
                    const auto b = c.t.spans.start.begin() + c.t.trackBegin(other);
                    const auto e = c.t.spans.start.begin() + c.t.trackEnd(other);
                    auto pos = std::upper_bound(b, e, c.start(i));
                    for (int steps = 0; pos != b && steps < 4; ++steps) {
                        --pos;
                        const auto p = uint32_t(pos - c.t.spans.start.begin());
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
                if (blocker == kNone || c.t.spans.kind[blocker] == SpanKind::HostFunc)
                    continue;
                // A blocker that overfills the SMs explains the wait by resources (gpu-filling-kernel), not queues.
                if (c.t.spans.kind[blocker] == SpanKind::Kernel && caps.smCount > 0) {
                    const Dim3 blk = c.t.spans.block[blocker];
                    const int64_t threads = int64_t(blk.count());
                    const int64_t perSm = threads > 0 && caps.maxThreadsPerSm > 0
                        ? std::min(caps.maxBlocksPerSm, caps.maxThreadsPerSm / threads)
                        : caps.maxBlocksPerSm;
                    if (int64_t(c.t.spans.grid[blocker].count()) > caps.smCount * std::max<int64_t>(1, perSm)
                        && c.t.spans.grid[blocker].x > 0)
                        continue;
                }
                held.emplace_back(blocker, i);
            }
        }
        if (int(held.size()) < c.th.minFalseDependencies)
            continue;
        std::sort(held.begin(), held.end(), [&c](auto a, auto b) { return c.start(a.second) < c.start(b.second); });
        int64_t lost = 0;
        for (const auto& [blocker, i] : held) {
            spans.push_back(i);
            spans.push_back(blocker);
            lost += c.start(i) - c.ready(i);
        }
        const auto [blocker, first] = held.front();
        std::string msg = "Device " + std::to_string(device) + " ran " + std::to_string(streams.size()) + " streams on "
            + plural(connections, "hardware queue", "hardware queues") + " (CUDA_DEVICE_MAX_CONNECTIONS="
            + std::to_string(connections) + "), so streams share queues: " + c.label(first) + " was ready at "
            + c.when(c.ready(first)) + " but started only at " + c.when(c.start(first)) + ", right after "
            + c.label(blocker) + " ended, with no stream-order or event dependency between them; "
            + plural(int64_t(held.size()), "operation was", "operations were") + " held back like this (" + c.at(lost)
            + " of waiting in total).";
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
        std::vector<Diagnostic> found;
        for (uint32_t big : kernels) {
            const Dim3 grid = c.t.spans.grid[big];
            const Dim3 block = c.t.spans.block[big];
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
            const int64_t tailStart = more
                ? c.effStart(big) + int64_t(c.th.fillingTailFraction * double(c.effDur(big)))
                : c.end(big) - c.th.backToBackNs;
            const int64_t minWait
                = std::max<int64_t>(c.th.minWaitNs, int64_t(c.th.fillingMinWaitFraction * double(c.effDur(big))));
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
            std::vector<std::string> names;
            std::vector<uint32_t> spans{big};
            for (uint32_t w : waiting) {
                names.push_back(c.label(w) + " (ready at " + c.when(c.ready(w)) + ", "
                                + (c.effStart(w) > c.start(w) ? "running from " : "started at ") + c.when(c.effStart(w))
                                + ")");
                spans.push_back(w);
            }
            std::string msg = c.label(big) + " has " + std::to_string(grid.count()) + " blocks, "
                + (more ? "more than" : "as many as") + " device " + std::to_string(device) + " holds at once ("
                + std::to_string(caps.smCount) + " SMs x " + std::to_string(perSm)
                + (threads > 0 ? " blocks of " + std::to_string(threads) + " threads" : std::string(" blocks")) + " = "
                + std::to_string(resident) + "), so "
                + (more ? "it took every SM slot that freed" : "it left no SM slot free until its blocks finished")
                + ": " + joinNames(names, c.o.maxNamedSpans) + " got SMs only in its tail, although "
                + (waiting.size() == 1 ? "it was" : "they were") + " in another stream.";
            found.push_back(c.make("gpu-filling-kernel", std::move(msg), std::move(spans)));
        }
        // One diagnostic per device: the first case, and how often it happened.
        if (found.empty())
            continue;
        Diagnostic d = std::move(found.front());
        if (found.size() > 1) {
            d.message += " The same happened with " + plural(int64_t(found.size() - 1), "more kernel", "more kernels")
                + " on this device.";
            std::vector<uint32_t> all;
            for (const Diagnostic& f : found)
                all.insert(all.end(), f.spans.begin(), f.spans.end());
            d = c.make("gpu-filling-kernel", std::move(d.message), std::move(all));
        }
        out.push_back(std::move(d));
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

void implicitSync(const Context& c, std::vector<Diagnostic>& out)
{
    struct Hit {
        uint32_t call;
        std::vector<uint32_t> drained; // GPU work it waited for
        int64_t blockedNs;
        int64_t idleAfterNs;
    };
    std::vector<Hit> hits;
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
            if (drained.empty() && !c.anyImplicit && isImplicitlySyncingCall(c.t.spanName(h))) {
                // No flows: the GPU work of its device that was pending or running during the call and ended
                // inside it.
                const int dev = c.t.tracks[tr].device;
                for (uint32_t st = 0; st < c.t.tracks.size(); ++st) {
                    if (c.t.tracks[st].kind != TrackKind::Stream || (dev >= 0 && c.t.tracks[st].device != dev))
                        continue;
                    const auto b = c.t.spans.start.begin() + c.t.trackBegin(st);
                    const auto e = c.t.spans.start.begin() + c.t.trackEnd(st);
                    auto pos = std::lower_bound(b, e, c.end(h));
                    for (int steps = 0; pos != b && steps < 64; ++steps) {
                        --pos;
                        const auto i = uint32_t(pos - c.t.spans.start.begin());
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

void collectRecords(const std::vector<Op>& ops, std::set<std::string>& recorded)
{
    for (const auto& op : ops) {
        if (op.kind == OpKind::Record)
            recorded.insert(op.event);
        collectRecords(op.ops, recorded);
    }
}

void waitUnrecordedEvent(const Context& c, std::vector<Diagnostic>& out)
{
    if (!c.scenario)
        return;
    const Scenario& s = *c.scenario;
    std::set<std::string> recorded;
    for (const auto& t : s.threads)
        collectRecords(t.ops, recorded);
    // Spans by (scenario thread, op index).
    std::map<std::pair<int, int>, std::vector<uint32_t>> spansOf;
    for (uint32_t i = 0; i < c.n; ++i)
        if (c.t.spans.thread[i] >= 0 && c.t.spans.op[i] >= 0)
            spansOf[{c.t.spans.thread[i], c.t.spans.op[i]}].push_back(i);
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

} // namespace

const std::vector<DiagnosticRule>& diagnosticRules() { return kRules; }

const DiagnosticRule* findDiagnosticRule(std::string_view id)
{
    for (const auto& r : kRules)
        if (r.id == id)
            return &r;
    return nullptr;
}

std::vector<Diagnostic> diagnose(const Trace& input, const DiagnosticOptions& options)
{
    Trace storage;
    const Trace* tp = &input;
    if (!input.finalized()) {
        storage = input;
        storage.finalize();
        tp = &storage;
    }
    const Context c(*tp, options);
    auto wanted = [&options](std::string_view id) {
        const auto& r = options.rules;
        return r.empty() || std::find(r.begin(), r.end(), id) != r.end();
    };
    using RuleFn = void (*)(const Context&, std::vector<Diagnostic>&);
    const std::pair<std::string_view, RuleFn> rules[] = {
        {"pageable-memcpy", pageableMemcpy},
        {"legacy-default-stream", legacyDefaultStream},
        {"hardware-queue-false-dependency", hardwareQueues},
        {"gpu-filling-kernel", gpuFillingKernel},
        {"host-func-serialization", hostFuncSerialization},
        {"sync-in-loop", syncInLoop},
        {"launch-bound", launchBound},
        {"implicit-sync", implicitSync},
        {"timing-perturbation", timingPerturbation},
        {"wait-unrecorded-event", waitUnrecordedEvent},
        {"streams-overlap", streamsOverlap},
        {"stream-serialization", streamSerialization},
        {"copy-compute-overlap", copyComputeOverlap},
        {"event-dependency", eventDependency},
        {"multi-device-overlap", multiDeviceOverlap},
        {"stream-priority", streamPriority},
        {"graph-launch", graphLaunch},
    };
    std::vector<Diagnostic> out;
    for (const auto& [id, fn] : rules)
        if (wanted(id))
            fn(c, out);
    return out;
}

std::optional<Diagnostic> findEffect(const Trace& trace, const std::string& effect, const DiagnosticOptions& options)
{
    if (!findDiagnosticRule(effect))
        return std::nullopt;
    DiagnosticOptions only = options;
    only.rules = {effect};
    auto found = diagnose(trace, only);
    if (found.empty())
        return std::nullopt;
    return std::move(found.front());
}

} // namespace streamscope
