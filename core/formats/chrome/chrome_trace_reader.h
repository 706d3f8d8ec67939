// The Chrome Trace Event reader: events read one at a time from the tokens (chrome_trace_tokenizer.h) into their
// fields (chrome_trace_events.cpp), then into the spans, threads and flows of a RawTrace (chrome_trace_spans.cpp).
// chrome_trace_builder.cpp makes a Trace of it. Internal to core.
#pragma once

#include "chrome_trace_tokenizer.h"

#include <array>
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

// The keys of an event and of its "args" that the reader tells apart (EventFields::fieldKey, argKey), as small
// codes: 0 is no key (an object's start), the last code any other key.
enum class FieldKey : uint8_t { Start, Ph, Ts, Id, Bp, Dur, Pid, Tid, Cat, Name, Args, BindId, FlowIn, FlowOut, Other };
enum class ArgKey : uint8_t {
    Start,
    Op,
    End,
    Name,
    Kind,
    Grid,
    Span,
    Wait,
    Task,
    Bytes,
    Block,
    Device,
    Stream,
    Thread,
    Labels,
    WaitFor,
    Iteration,
    SortIndex,
    Correlation,
    ExternalId,
    CudaSyncKind,
    WaitOnStream,
    RecordCorrelation,
    Other
};

// The bytes between one member's value and the next member's value, as the last events had them: a writer puts the
// keys of its events in the same order every time, so after "ts" of one event comes `,"dur":` as it did in the one
// before. Where the input has these very bytes, the member is read without scanning its key: the same bytes give the
// same key, so the result and every error are the generic path's. Learnt per preceding key (two kinds of events
// that differ after a key keep one step each), up to 32 bytes; keys with escapes are not learnt.
struct KeyStep {
    char bytes[32] = {};
    uint8_t length = 0; // 0: nothing learnt
    uint8_t key = 0;
};
template <size_t Keys>
struct KeySteps {
    KeyStep next[Keys][2]; // [the member before (0: the object's start)][the latest two]
};

// One event's fields from the tokens, with nothing of the reader's state: the reader does this for each event, and
// the workers of chrome_trace_chunks.h do it ahead of the reader (chrome_trace_events.cpp).
class EventFields : protected JsonTokenizer {
public:
    explicit EventFields(Input& in) : JsonTokenizer(in) {}

protected:
    // The event at m_p (after white space) into `ev`; returns where it starts.
    const char* fields(Event& ev);
    void args(Event& ev);
    static FieldKey fieldKey(std::string_view key);
    static ArgKey argKey(std::string_view key);
    void field(Event& ev, FieldKey key, uint32_t& seen);
    void arg(Event& ev, ArgKey key);

    // The members of an object whose '{' was just read, as members() reads them, with their keys as codes:
    // onMember(code) reads each value (it starts after the ':'). `keyOf` gives a key's code.
    template <size_t Keys, typename KeyOf, typename OnMember>
    void knownMembers(KeySteps<Keys>& steps, KeyOf&& keyOf, OnMember&& onMember, const char* where)
    {
        uint8_t before = 0;
        for (;;) {
            const char* from = m_p;
            const bool tried = m_end - m_p >= 32; // else the steps learnt may hold these bytes: learn nothing
            if (tried) {
                KeyStep* learnt = steps.next[before];
                const int hit = sameBytes(learnt[0]) ? 0 : sameBytes(learnt[1]) ? 1 : -1;
                if (hit >= 0) {
                    m_p += learnt[hit].length;
                    before = learnt[hit].key;
                    onMember(before);
                    continue;
                }
            }
            skipWs();
            if (before == 0) {
                if (*m_p == '}') {
                    ++m_p;
                    return;
                }
            } else if (*m_p == ',') {
                ++m_p;
            } else {
                expect('}', where);
                return;
            }
            skipWs();
            if (*m_p != '"')
                fail(m_p, "not valid JSON: expected a key (a string in double quotes)");
            const char* quote = m_p;
            const std::string_view key = string();
            const bool plain = key.data() == quote + 1; // no escapes: the view is into the input
            skipWs();
            expect(':', "after an object key");
            const auto code = uint8_t(keyOf(key));
            if (tried && plain && m_p - from <= 32) {
                KeyStep* learnt = steps.next[before];
                learnt[1] = learnt[0];
                learnt[0].length = uint8_t(m_p - from);
                learnt[0].key = code;
                std::memcpy(learnt[0].bytes, from, learnt[0].length);
            }
            before = code;
            onMember(code);
        }
    }

    // The next bytes are those of `step` (32 of them are in the buffer).
    bool sameBytes(const KeyStep& step) const
    {
        if (step.length == 0)
            return false;
#if defined(__SSE2__)
        const auto load = [](const char* p) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)); };
        uint32_t equal = uint32_t(_mm_movemask_epi8(_mm_cmpeq_epi8(load(m_p), load(step.bytes))));
        if (step.length > 16)
            equal |= uint32_t(_mm_movemask_epi8(_mm_cmpeq_epi8(load(m_p + 16), load(step.bytes + 16)))) << 16;
        const uint32_t want = step.length == 32 ? ~0u : (1u << step.length) - 1;
        return (equal & want) == want;
#else
        return std::memcmp(m_p, step.bytes, step.length) == 0;
#endif
    }

    bool m_keepScratch = false; // true: unescaped strings stay valid until the tokenizer is gone, not one event
    KeySteps<size_t(FieldKey::Other) + 1> m_fieldSteps;
    KeySteps<size_t(ArgKey::Other) + 1> m_argSteps;
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
    // A pid or tid given as a string: an index + 1 of its text; 0 for a number (most files: inline, no call).
    uint32_t keyText(std::string_view s) { return s.empty() ? 0 : internKeyText(s); }
    uint32_t internKeyText(std::string_view s);
    uint32_t threadFor(const Event& ev);
    chrome::RawProcess& processFor(const Event& ev);
    uint32_t intern(std::string_view s);
    void reserveSpans();
    void populateSpans();
    void addFlow(Flow f);
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
    size_t m_populatedFlows = 0; // and the arrows' up to this many arrows
    struct NameSlot {
        std::string_view name; // the key in m_names
        uint32_t id = kNoSpan;
    };
    std::vector<NameSlot> m_nameCache = std::vector<NameSlot>(size_t(1) << kNameCacheBits);
    std::unordered_map<std::string, uint32_t, StringHash, std::equal_to<>> m_keyTexts;
    std::vector<std::string> m_keyTextList;
    std::unordered_map<ThreadKey, uint32_t, ThreadKeyHash> m_threads;
    // The threads of the last few events, looked at before the map: a file's flow events alternate between the
    // thread of a launch and the streams of its kernels, and each used to miss a cache of one.
    static constexpr size_t kRecentThreads = 4;
    std::array<ThreadKey, kRecentThreads> m_recentKeys{};
    std::array<uint32_t, kRecentThreads> m_recentThreads = {kNoSpan, kNoSpan, kNoSpan, kNoSpan};
    size_t m_recentNext = 0; // the entry replaced next
    std::map<std::pair<int64_t, std::string>, size_t> m_processes;
    std::unordered_map<FlowKey, OpenFlow, FlowKeyHash> m_open;
    struct LatestFlow { // the v1 flow started last, while open (flowEvent)
        uint64_t id = 0;
        std::string cat, name;
        OpenFlow flow;
    } m_latest;
    bool m_latestOpen = false;
};

// Reads the whole input: the raw trace, or an error naming the byte offset.
Result<chrome::RawTrace> readInput(Input& in, const std::string& file, chrome::Dialect dialect,
                                   ChunkPipeline* chunks = nullptr);

} // namespace streamscope::chrome::detail
