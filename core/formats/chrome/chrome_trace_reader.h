// The Chrome Trace Event reader: events read one at a time from the tokens (chrome_trace_tokenizer.h) into their
// fields (chrome_trace_events.cpp), then into the spans, threads and flows of a RawTrace (chrome_trace_spans.cpp).
// chrome_trace_builder.cpp makes a Trace of it. Internal to core.
#pragma once

#include "chrome_trace_tokenizer.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace streamscope::chrome::detail {

// The fields of one event that matter here. Views point into the input buffer or the scratch strings.
struct Event {
    char ph = 0;
    bool hasTs = false, hasDur = false;
    int64_t ts = 0, dur = 0;
    Id pid, tid;
    std::string_view name, cat, bp;
    std::string_view flowEnd; // args.end of a flow event of our export: "from" or "to", the end of the arrow
    bool hasId = false;
    uint64_t id = 0;
    bool hasBindId = false;
    uint64_t bindId = 0;
    bool flowIn = false, flowOut = false;
    // args
    std::string_view argName, argKind, labels, syncKind;
    bool hasSortIndex = false;
    int64_t sortIndex = 0;
    int64_t device = -1;
    Id stream;
    bool hasGrid = false, hasBlock = false;
    Dim3 grid{0, 0, 0}, block{0, 0, 0};
    int64_t bytes = 0;
    int64_t thread = -1, op = -1, iteration = -1, task = 0;
    bool hasCorrelation = false;
    int64_t correlation = -1;
    bool hasExternalId = false;
    int64_t externalId = -1; // Kineto's "External id": the CPU op a runtime call was made in
    int64_t spanHint = -1;
    std::string_view wait; // our own exports: what held the GPU op ("sms", ...), and the span that held it
    int64_t waitFor = -1;
    int64_t waitOnStream = -1, recordCorrelation = -1;
};

struct ThreadKey {
    int64_t pid, tid;
    uint32_t pidText, tidText; // indices + 1 into the key texts when the id was a string, else 0
    bool operator==(const ThreadKey&) const = default;
};
struct ThreadKeyHash {
    size_t operator()(const ThreadKey& k) const noexcept
    {
        uint64_t h = uint64_t(k.pid) * 0x9e3779b97f4a7c15ull;
        h ^= uint64_t(k.tid) + 0x7f4a7c159e3779b9ull + (h << 6) + (h >> 2);
        h ^= (uint64_t(k.pidText) << 32) ^ k.tidText;
        return size_t(h);
    }
};

struct FlowKey {
    uint64_t id, cat, name;
    bool operator==(const FlowKey&) const = default;
};
struct FlowKeyHash {
    size_t operator()(const FlowKey& k) const noexcept
    {
        return size_t(k.id * 0x9e3779b97f4a7c15ull ^ (k.cat + 0x632be59bd9b4e019ull) ^ (k.name << 1));
    }
};

// A bound or unbound end of a v1 flow, waiting for its other end.
struct OpenFlow {
    FlowEnd end;
    uint32_t span = kNoSpan; // known exactly (our own exports)
    int kind = -1;
    bool launchOnly = false;
    bool target = false; // an "s" at the arrow's target (our exports start a flow at its earlier end)
};

// The names' direct-mapped cache (EventReader::intern) has 2^kNameCacheBits slots.
constexpr int kNameCacheBits = 10;

// One event's fields from the tokens, with nothing of the reader's state: the reader does this for each event, and
// the workers of chrome_trace_chunks.h do it ahead of the reader (chrome_trace_events.cpp).
class EventFields : protected JsonTokenizer {
public:
    explicit EventFields(Input& in) : JsonTokenizer(in) {}

protected:
    // The event at m_p (after white space) into `ev`; returns where it starts.
    const char* fields(Event& ev);
    void args(Event& ev);

    bool m_keepScratch = false; // true: unescaped strings stay valid until the tokenizer is gone, not one event
};

class ChunkPipeline;

class EventReader : EventFields {
public:
    // `chunks`: events parsed ahead on other threads (chrome_trace_chunks.h), or nullptr.
    EventReader(Input& in, chrome::Dialect dialect, ChunkPipeline* chunks = nullptr)
        : EventFields(in), m_dialect(dialect), m_chunks(chunks)
    {}

    // The whole input as a raw trace; throws Fail.
    chrome::RawTrace run();

private:
    // Events into their fields (chrome_trace_events.cpp).
    void event();
    void topLevelValue(const std::string& key);

    // Fields into spans, threads and flows of the raw trace (chrome_trace_spans.cpp).
    uint32_t keyText(std::string_view s);
    uint32_t threadFor(const Event& ev);
    chrome::RawProcess& processFor(const Event& ev);
    uint32_t intern(std::string_view s);
    void reserveSpans();
    void populateSpans();
    uint32_t addSpan(const Event& ev, uint32_t thread, SpanKind kind, int64_t start, int64_t end);
    std::optional<SpanKind> spanKind(const Event& ev);
    void handle(const Event& ev, const char* start);
    void metadata(const Event& ev);
    void syncRecord(const Event& ev);
    static int flowKindFromName(std::string_view name);
    void bindIdFlow(const Event& ev, uint32_t span);
    void flowEvent(const Event& ev);
    void closeOpenSpans();

    chrome::Dialect m_dialect;
    ChunkPipeline* m_chunks;
    bool m_sawEvents = false;

    chrome::RawTrace m_raw;
    std::unordered_map<std::string, uint32_t, StringHash, std::equal_to<>> m_names;
    std::string_view m_lastName;
    uint32_t m_lastNameId = kNoSpan;
    size_t m_populatedSpans = 0; // the columns' pages are faulted in up to this many spans
    struct NameSlot {
        std::string_view name; // the key in m_names
        uint32_t id = kNoSpan;
    };
    std::vector<NameSlot> m_nameCache = std::vector<NameSlot>(size_t(1) << kNameCacheBits);
    std::unordered_map<std::string, uint32_t, StringHash, std::equal_to<>> m_keyTexts;
    std::vector<std::string> m_keyTextList;
    std::unordered_map<ThreadKey, uint32_t, ThreadKeyHash> m_threads;
    ThreadKey m_lastKey{};
    uint32_t m_lastThread = kNoSpan;
    std::map<std::pair<int64_t, std::string>, size_t> m_processes;
    std::unordered_map<FlowKey, OpenFlow, FlowKeyHash> m_open;
};

// Reads the whole input: the raw trace, or an error naming the byte offset.
Result<chrome::RawTrace> readInput(Input& in, const std::string& file, chrome::Dialect dialect,
                                   ChunkPipeline* chunks = nullptr);

} // namespace streamscope::chrome::detail
