#include "quick_settings.h"

#include "stream_spread.h"
#include "unique_name.h"
#include "whatif.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace streamscope {

namespace {

// The kernel knob rounds spin durations to 0.01 µs, the step the property editor shows.
constexpr int kSpinDecimals = 2;

// Calls f on every op of a thread, graph nodes included.
void forEachOp(std::vector<Op>& ops, const std::function<void(Op&)>& f)
{
    for (Op& op : ops) {
        f(op);
        forEachOp(op.ops, f);
    }
}

void forEachOp(const std::vector<Op>& ops, const std::function<void(const Op&)>& f)
{
    for (const Op& op : ops) {
        f(op);
        forEachOp(op.ops, f);
    }
}

void forEachOp(Scenario& s, const std::function<void(Op&)>& f)
{
    for (ThreadSpec& t : s.threads)
        forEachOp(t.ops, f);
}

void forEachOp(const Scenario& s, const std::function<void(const Op&)>& f)
{
    for (const ThreadSpec& t : s.threads)
        forEachOp(t.ops, f);
}

const StreamSpec* findStream(const Scenario& s, const std::string& name)
{
    for (const StreamSpec& st : s.streams)
        if (st.name == name)
            return &st;
    return nullptr;
}

bool isChunkOp(const Scenario& s, const Op& op)
{
    if (op.stream.empty())
        return false;
    const StreamSpec* st = findStream(s, op.stream);
    return st && isCreatedStream(st->kind);
}

// A thread's ops cut into chunks: runs of consecutive ops in one created stream. Ops without such a stream ride with
// the chunk before them, except those before the first chunk (prefix) and after the last (suffix).
struct ThreadChunks {
    std::vector<Op> prefix;
    std::vector<std::vector<Op>> chunks;
    std::vector<std::string> chunkStream;
    std::vector<Op> suffix;

    // Created streams the chunks use, in first-use order.
    std::vector<std::string> streams() const
    {
        std::vector<std::string> out;
        for (const auto& name : chunkStream)
            if (std::find(out.begin(), out.end(), name) == out.end())
                out.push_back(name);
        return out;
    }

    std::vector<Op> join() const
    {
        std::vector<Op> ops = prefix;
        for (const auto& c : chunks)
            ops.insert(ops.end(), c.begin(), c.end());
        ops.insert(ops.end(), suffix.begin(), suffix.end());
        return ops;
    }
};

ThreadChunks splitThread(const Scenario& s, const ThreadSpec& t)
{
    ThreadChunks out;
    size_t first = t.ops.size(), last = 0;
    for (size_t i = 0; i < t.ops.size(); ++i) {
        if (isChunkOp(s, t.ops[i])) {
            first = std::min(first, i);
            last = i;
        }
    }
    if (first == t.ops.size()) {
        out.prefix = t.ops;
        return out;
    }
    for (size_t i = 0; i < t.ops.size(); ++i) {
        const Op& op = t.ops[i];
        if (i < first) {
            out.prefix.push_back(op);
        } else if (i > last) {
            out.suffix.push_back(op);
        } else if (isChunkOp(s, op) && (out.chunks.empty() || out.chunkStream.back() != op.stream)) {
            out.chunks.push_back({op});
            out.chunkStream.push_back(op.stream);
        } else {
            out.chunks.back().push_back(op);
        }
    }
    return out;
}

std::set<std::string> streamNames(const Scenario& s)
{
    std::set<std::string> names;
    for (const auto& st : s.streams)
        names.insert(st.name);
    return names;
}

// Drops the streams among `candidates` that no op and no expectation names any more.
void dropUnusedStreams(Scenario& s, const std::set<std::string>& candidates)
{
    std::set<std::string> used;
    forEachOp(std::as_const(s), [&](const Op& op) {
        if (!op.stream.empty())
            used.insert(op.stream);
    });
    auto markExpect = [&](const std::vector<Expectation>& list) {
        for (const auto& e : list)
            used.insert(e.streams.begin(), e.streams.end());
    };
    markExpect(s.expect);
    for (const auto& v : s.variants)
        markExpect(v.expect);
    std::erase_if(s.streams, [&](const StreamSpec& st) { return candidates.count(st.name) && !used.count(st.name); });
}

// ---- threads ---------------------------------------------------------------------------------------------------

void cloneThread(Scenario& s, const Scenario& base, size_t templateIndex, int ordinal)
{
    const ThreadSpec& tmpl = base.threads[templateIndex];
    // Streams and events only the template uses go with the clone, so that the clone's work is independent.
    std::set<std::string> ownStreams, ownEvents, otherStreams, otherEvents;
    for (size_t t = 0; t < base.threads.size(); ++t) {
        forEachOp(base.threads[t].ops, [&](const Op& op) {
            auto& streams = t == templateIndex ? ownStreams : otherStreams;
            auto& events = t == templateIndex ? ownEvents : otherEvents;
            if (!op.stream.empty())
                streams.insert(op.stream);
            if (!op.event.empty())
                events.insert(op.event);
        });
    }
    ThreadSpec clone = tmpl;
    std::set<std::string> threadNames;
    for (const auto& t : s.threads)
        threadNames.insert(t.name);
    clone.name = uniqueName(tmpl.name, threadNames, " ");

    const std::string suffix = "-" + std::to_string(ordinal);
    std::map<std::string, std::string> streamRename, eventRename;
    std::set<std::string> taken = streamNames(s);
    for (const auto& name : ownStreams) {
        const StreamSpec* st = findStream(base, name);
        if (!st || !isCreatedStream(st->kind) || otherStreams.count(name))
            continue;
        StreamSpec copy = *st;
        copy.name = name + suffix;
        while (taken.count(copy.name))
            copy.name += "'";
        taken.insert(copy.name);
        streamRename[name] = copy.name;
        s.streams.push_back(copy);
    }
    for (const auto& name : ownEvents)
        if (!otherEvents.count(name))
            eventRename[name] = name + suffix;
    forEachOp(clone.ops, [&](Op& op) {
        if (auto it = streamRename.find(op.stream); it != streamRename.end())
            op.stream = it->second;
        if (auto it = eventRename.find(op.event); it != eventRename.end())
            op.event = it->second;
    });
    s.threads.push_back(std::move(clone));
}

void applyThreads(Scenario& s, const Scenario& base, int n)
{
    n = std::max(1, n);
    if (s.threads.size() == 1 && s.threads[0].workers > 1) {
        s.threads[0].workers = n;
        return;
    }
    if (int(s.threads.size()) > n) {
        std::set<std::string> released;
        for (size_t t = size_t(n); t < s.threads.size(); ++t)
            forEachOp(s.threads[t].ops, [&](const Op& op) {
                if (!op.stream.empty())
                    released.insert(op.stream);
            });
        s.threads.resize(size_t(n));
        dropUnusedStreams(s, released);
        return;
    }
    for (int ordinal = int(s.threads.size()) + 1; int(s.threads.size()) < n; ++ordinal)
        cloneThread(s, base, base.threads.size() - 1, ordinal);
}

// ---- chunks and streams ----------------------------------------------------------------------------------------

void renumberChunk(std::vector<Op>& chunk, long long from, long long to)
{
    forEachOp(chunk, [&](Op& op) {
        auto [prefix, number] = splitTrailingNumber(op.name);
        if (number >= 0 && number == from)
            op.name = prefix + std::to_string(to);
    });
}

// The streams-per-thread knob: chunk j of the thread goes to stream j mod n of its own streams, which keep their
// names; missing streams are created like its last one, right after it. Each chunk is one chain of the spreading rule
// (stream_spread.h), dealt round robin from the thread's first stream.
void spreadChunksOverStreams(Scenario& s, ThreadChunks& split, const std::vector<std::string>& oldStreams, int streams)
{
    const size_t n = size_t(streams);
    std::vector<std::string> target(oldStreams.begin(), oldStreams.begin() + std::min(n, oldStreams.size()));
    if (target.size() < n) {
        const StreamSpec* like = findStream(s, oldStreams.back());
        StreamSpec spec = like ? *like : StreamSpec{};
        std::set<std::string> taken = streamNames(s);
        // New streams go right after the thread's last one, so related rows stay together.
        auto insertAt = std::find_if(s.streams.begin(), s.streams.end(),
                                     [&](const StreamSpec& st) { return st.name == oldStreams.back(); });
        size_t pos = insertAt == s.streams.end() ? s.streams.size() : size_t(insertAt - s.streams.begin()) + 1;
        std::string last = oldStreams.back();
        while (target.size() < n) {
            spec.name = uniqueName(last, taken, "-");
            taken.insert(spec.name);
            last = spec.name;
            target.push_back(spec.name);
            s.streams.insert(s.streams.begin() + std::ptrdiff_t(pos++), spec);
        }
    }
    const ChainDealer deal = roundRobin(target);
    for (size_t j = 0; j < split.chunks.size(); ++j)
        spreadChains(s, split.chunks[j], [&](const std::string& from, int device) {
            split.chunkStream[j] = deal(from, device);
            return split.chunkStream[j];
        });
}

void reshapeThread(Scenario& s, size_t threadIndex, int chunks, bool chunksChanged, int streams, bool streamsChanged)
{
    ThreadSpec& t = s.threads[threadIndex];
    ThreadChunks split = splitThread(s, t);
    const size_t k = split.chunks.size();
    if (k == 0)
        return;
    const std::vector<std::string> oldStreams = split.streams();

    if (chunksChanged && chunks >= 1) {
        const size_t m = size_t(chunks);
        std::vector<std::vector<Op>> newChunks;
        std::vector<std::string> newStreams;
        for (size_t j = 0; j < m; ++j) {
            std::vector<Op> c = split.chunks[j % k];
            if (j >= k)
                renumberChunk(c, (long long)(j % k), (long long)j);
            newChunks.push_back(std::move(c));
            newStreams.push_back(split.chunkStream[j % k]);
        }
        split.chunks = std::move(newChunks);
        split.chunkStream = std::move(newStreams);
    }

    if (streamsChanged && streams >= 1)
        spreadChunksOverStreams(s, split, oldStreams, streams);

    s.threads[threadIndex].ops = split.join();
    if (streamsChanged && streams >= 1 && size_t(streams) < oldStreams.size())
        dropUnusedStreams(s, std::set<std::string>(oldStreams.begin() + streams, oldStreams.end()));
}

// ---- memory, kernels, default stream ---------------------------------------------------------------------------

bool isHostCopy(const Op& op)
{
    return op.kind == OpKind::Memcpy && (op.copy == CopyKind::H2D || op.copy == CopyKind::D2H);
}

// Points every op using a stream of `from` at `to` and drops the streams in `from`.
void mergeStreams(Scenario& s, const std::set<std::string>& from, const std::string& to)
{
    forEachOp(s, [&](Op& op) {
        if (from.count(op.stream))
            op.stream = to;
    });
    for (auto& e : s.expect)
        for (auto& name : e.streams)
            if (from.count(name))
                name = to;
    std::erase_if(s.streams, [&](const StreamSpec& st) { return from.count(st.name) != 0; });
}

void applyStreamMode(Scenario& s, DefaultStreamMode mode)
{
    if (mode == DefaultStreamMode::Mixed)
        return;
    for (StreamSpec& st : s.streams)
        if (isCreatedStream(st.kind))
            st.kind = mode == DefaultStreamMode::NonBlocking ? StreamKind::NonBlocking : StreamKind::Blocking;
    if (mode == DefaultStreamMode::PerThread) {
        for (StreamSpec& st : s.streams)
            if (st.kind == StreamKind::LegacyDefault)
                st.kind = StreamKind::PerThreadDefault;
        return;
    }
    // Legacy default stream: one per device, so per-thread default streams of a device merge into it.
    std::map<int, std::vector<std::string>> perDevice;
    std::map<int, std::string> legacy;
    for (const StreamSpec& st : s.streams) {
        if (st.kind == StreamKind::LegacyDefault && !legacy.count(st.device))
            legacy[st.device] = st.name;
        if (st.kind == StreamKind::PerThreadDefault)
            perDevice[st.device].push_back(st.name);
    }
    for (auto& [device, names] : perDevice) {
        std::string target;
        if (auto it = legacy.find(device); it != legacy.end()) {
            target = it->second;
        } else {
            target = names.front();
            names.erase(names.begin());
            for (StreamSpec& st : s.streams)
                if (st.name == target)
                    st.kind = StreamKind::LegacyDefault;
        }
        if (!names.empty())
            mergeStreams(s, std::set<std::string>(names.begin(), names.end()), target);
    }
}

} // namespace

QuickSettings detectQuickSettings(const Scenario& s)
{
    QuickSettings q;
    q.threads = s.threads.size() == 1 && s.threads[0].workers > 1 ? s.threads[0].workers : int(s.threads.size());
    for (const ThreadSpec& t : s.threads) {
        ThreadChunks split = splitThread(s, t);
        if (!split.chunks.empty()) {
            q.chunks = int(split.chunks.size());
            q.streamsPerThread = int(split.streams().size());
            break;
        }
    }
    bool pinned = false, pageable = false;
    forEachOp(s, [&](const Op& op) {
        if (isHostCopy(op))
            (op.pinned ? pinned : pageable) = true;
    });
    q.memory = pinned && pageable ? MemoryMode::Mixed
        : pinned                  ? MemoryMode::Pinned
        : pageable                ? MemoryMode::Pageable
                                  : MemoryMode::None;
    bool legacy = false, perThread = false, blocking = false, nonBlocking = false;
    for (const StreamSpec& st : s.streams) {
        legacy |= st.kind == StreamKind::LegacyDefault;
        perThread |= st.kind == StreamKind::PerThreadDefault;
        blocking |= st.kind == StreamKind::Blocking;
        nonBlocking |= st.kind == StreamKind::NonBlocking;
    }
    if (perThread && !legacy && !nonBlocking)
        q.streamMode = DefaultStreamMode::PerThread;
    else if (nonBlocking && !blocking && !perThread)
        q.streamMode = DefaultStreamMode::NonBlocking;
    else if (!nonBlocking && !perThread)
        q.streamMode = DefaultStreamMode::Legacy;
    else
        q.streamMode = DefaultStreamMode::Mixed;
    return q;
}

Scenario applyQuickSettings(const Scenario& base, const QuickSettings& baseSettings, const QuickSettings& wanted)
{
    Scenario s = base;
    if (wanted.threads != baseSettings.threads)
        applyThreads(s, base, wanted.threads);

    const bool chunksChanged = wanted.chunks != baseSettings.chunks && wanted.chunks > 0;
    const bool streamsChanged = wanted.streamsPerThread != baseSettings.streamsPerThread && wanted.streamsPerThread > 0;
    if (chunksChanged || streamsChanged)
        for (size_t t = 0; t < s.threads.size(); ++t)
            reshapeThread(s, t, wanted.chunks, chunksChanged, wanted.streamsPerThread, streamsChanged);

    if (wanted.memory != baseSettings.memory
        && (wanted.memory == MemoryMode::Pinned || wanted.memory == MemoryMode::Pageable)) {
        const bool pinned = wanted.memory == MemoryMode::Pinned;
        forEachOp(s, [&](Op& op) {
            if (isHostCopy(op))
                op.pinned = pinned;
        });
    }

    if (wanted.kernelScale != baseSettings.kernelScale && wanted.kernelScale > 0 && baseSettings.kernelScale > 0) {
        const double f = wanted.kernelScale / baseSettings.kernelScale;
        forEachOp(s, [&](Op& op) { scaleKernelWork(op, f, kSpinDecimals); });
    }

    if (wanted.streamMode != baseSettings.streamMode)
        applyStreamMode(s, wanted.streamMode);
    return s;
}

} // namespace streamscope
