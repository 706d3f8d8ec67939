// Chrome Trace Event reading, part 1: the document's structure and each event's fields (chrome_trace_reader.h).
#include "chrome_trace_reader.h"

#include "chrome_trace_chunks.h"

#include "import_limits.h"

#include <new>
#include <string>

namespace streamscope {

namespace chrome::detail {

chrome::RawTrace EventReader::run()
{
    enum class State { Start, Key, AfterValue, FirstEvent, NextEvent, AfterRoot, Done };
    State state = State::Start;
    bool bareArray = false;
    for (;;) {
        const char* mark = m_p;
        try {
            switch (state) {
            case State::Start: {
                if (m_end - m_p < 3 && !m_in.eof())
                    throw NeedMore{};
                if (m_end - m_p >= 3 && static_cast<unsigned char>(m_p[0]) == 0xef
                    && static_cast<unsigned char>(m_p[1]) == 0xbb && static_cast<unsigned char>(m_p[2]) == 0xbf)
                    m_p += 3; // a UTF-8 byte order mark
                skipWs();
                if (*m_p == '[') {
                    ++m_p;
                    bareArray = true;
                    state = State::FirstEvent;
                } else if (*m_p == '{') {
                    ++m_p;
                    skipWs();
                    if (*m_p == '}') {
                        ++m_p;
                        state = State::AfterRoot;
                    } else {
                        state = State::Key;
                    }
                } else {
                    fail(m_p,
                         "not a Chrome trace: expected a JSON object {\"traceEvents\": [...]} or an array "
                         "of events");
                }
                break;
            }
            case State::Key: {
                skipWs();
                if (*m_p != '"')
                    fail(m_p, "not valid JSON: expected a key (a string in double quotes)");
                const std::string key(string());
                skipWs();
                expect(':', "after an object key");
                skipWs();
                if (is(key, "traceEvents")) {
                    if (*m_p != '[')
                        fail(m_p, "\"traceEvents\" must be an array");
                    ++m_p;
                    m_sawEvents = true;
                    state = State::FirstEvent;
                } else {
                    topLevelValue(key);
                    state = State::AfterValue;
                }
                break;
            }
            case State::AfterValue: {
                skipWs();
                if (*m_p == ',') {
                    ++m_p;
                    state = State::Key;
                } else if (*m_p == '}') {
                    ++m_p;
                    state = State::AfterRoot;
                } else {
                    fail(m_p, "not valid JSON: expected ',' or '}' after a value");
                }
                break;
            }
            case State::FirstEvent:
            case State::NextEvent: {
                if (bareArray && atEnd()) { // the format allows the closing ']' to be missing
                    state = State::Done;
                    break;
                }
                skipWs();
                if (*m_p == ']') {
                    ++m_p;
                    state = bareArray ? State::AfterRoot : State::AfterValue;
                    break;
                }
                if (state == State::NextEvent) {
                    expect(',', "between events");
                    if (bareArray && atEnd()) {
                        state = State::Done;
                        break;
                    }
                    skipWs();
                    if (*m_p == ']') { // a trailing comma, as streaming writers leave it
                        ++m_p;
                        state = bareArray ? State::AfterRoot : State::AfterValue;
                        break;
                    }
                }
                event();
                state = State::NextEvent;
                break;
            }
            case State::AfterRoot: {
                if (atEnd()) {
                    state = State::Done;
                    break;
                }
                skipWs();
                fail(m_p, "not valid JSON: unexpected text after the end of the trace");
            }
            case State::Done: break;
            }
        } catch (const NeedMore&) {
            m_p = mark;
            const std::string err = m_in.refill(m_p);
            if (!err.empty())
                throw Fail{m_in.offset(m_p), "cannot read: " + err};
            m_end = m_in.end();
            continue;
        }
        if (state == State::Done)
            break;
    }
    if (!bareArray && !m_sawEvents)
        throw Fail{0, "not a Chrome trace: the JSON object has no \"traceEvents\" array"};
    closeOpenSpans();
    m_raw.bytes = m_in.total();
    return std::move(m_raw);
}

ArgKey EventFields::argKey(std::string_view key)
{
    // By length first: most keys of most files are none of these, and are told apart without a compare.
    switch (key.size()) {
    case 2: return is(key, "op") ? ArgKey::Op : ArgKey::Other;
    case 3: return is(key, "end") ? ArgKey::End : ArgKey::Other;
    case 4:
        if (is(key, "name"))
            return ArgKey::Name;
        if (is(key, "kind"))
            return ArgKey::Kind;
        if (is(key, "grid"))
            return ArgKey::Grid;
        if (is(key, "span"))
            return ArgKey::Span;
        if (is(key, "wait"))
            return ArgKey::Wait;
        if (is(key, "task"))
            return ArgKey::Task;
        return ArgKey::Other;
    case 5:
        if (is(key, "bytes"))
            return ArgKey::Bytes;
        if (is(key, "block"))
            return ArgKey::Block;
        return ArgKey::Other;
    case 6:
        if (is(key, "device"))
            return ArgKey::Device;
        if (is(key, "stream"))
            return ArgKey::Stream;
        if (is(key, "thread"))
            return ArgKey::Thread;
        if (is(key, "labels"))
            return ArgKey::Labels;
        return ArgKey::Other;
    case 8: return is(key, "wait_for") ? ArgKey::WaitFor : ArgKey::Other;
    case 9: return is(key, "iteration") ? ArgKey::Iteration : ArgKey::Other;
    case 10: return is(key, "sort_index") ? ArgKey::SortIndex : ArgKey::Other;
    case 11:
        if (is(key, "correlation"))
            return ArgKey::Correlation;
        if (is(key, "External id"))
            return ArgKey::ExternalId;
        return ArgKey::Other;
    case 14:
        if (is(key, "cuda_sync_kind"))
            return ArgKey::CudaSyncKind;
        if (is(key, "wait_on_stream"))
            return ArgKey::WaitOnStream;
        return ArgKey::Other;
    case 33: return is(key, "wait_on_cuda_event_record_corr_id") ? ArgKey::RecordCorrelation : ArgKey::Other;
    default: return ArgKey::Other;
    }
}

void EventFields::arg(Event& ev, ArgKey key)
{
    switch (key) {
    case ArgKey::Op: ev.op = intValue("args.op"); break;
    case ArgKey::End: ev.flowEnd = stringValue(); break;
    case ArgKey::Name: ev.argName = stringValue(); break;
    case ArgKey::Kind: ev.argKind = stringValue(); break;
    case ArgKey::Grid: ev.hasGrid = dim3Value(ev.grid, "args.grid"); break;
    case ArgKey::Span: ev.spanHint = intValue("args.span"); break;
    case ArgKey::Wait: ev.wait = stringValue(); break;
    case ArgKey::Task: ev.task = intValue("args.task"); break;
    case ArgKey::Bytes: ev.bytes = intValue("args.bytes"); break;
    case ArgKey::Block: ev.hasBlock = dim3Value(ev.block, "args.block"); break;
    case ArgKey::Device: {
        const char* at = m_p;
        ev.device = intValue("args.device");
        // -1: no device (as some writers mark host work); else an index that fits an int.
        if (ev.device != -1)
            if (const std::string problem = deviceIndexProblem(ev.device); !problem.empty())
                fail(at, "args.device: " + problem);
        break;
    }
    case ArgKey::Stream: ev.stream = idValue(); break;
    case ArgKey::Thread: ev.thread = intValue("args.thread"); break;
    case ArgKey::Labels: ev.labels = stringValue(); break;
    case ArgKey::WaitFor: ev.waitFor = intValue("args.wait_for"); break;
    case ArgKey::Iteration: ev.iteration = intValue("args.iteration"); break;
    case ArgKey::SortIndex:
        ev.sortIndex = intValue("args.sort_index");
        ev.hasSortIndex = true;
        break;
    case ArgKey::Correlation:
        ev.correlation = intValue("args.correlation");
        ev.hasCorrelation = true;
        break;
    case ArgKey::ExternalId:
        ev.externalId = intValue("args.External id");
        ev.hasExternalId = true;
        break;
    case ArgKey::CudaSyncKind: ev.syncKind = stringValue(); break;
    case ArgKey::WaitOnStream: ev.waitOnStream = intValue("args.wait_on_stream"); break;
    case ArgKey::RecordCorrelation: ev.recordCorrelation = intValue("args.wait_on_cuda_event_record_corr_id"); break;
    case ArgKey::Start:
    case ArgKey::Other: skipValue(1); break;
    }
}

void EventFields::args(Event& ev)
{
    skipWs();
    if (*m_p != '{') {
        skipValue();
        return;
    }
    ++m_p;
    knownMembers(
        m_argSteps, [](std::string_view key) { return argKey(key); }, [&](uint8_t key) { arg(ev, ArgKey(key)); },
        "or ',' in an object");
}

void EventReader::event()
{
    skipWs();
    if (m_chunks) {
        // Parsed ahead by a worker where an event starts at this very byte: the same bytes give the same fields.
        const char* start = m_p;
        if (const PreEvent* pre = m_chunks->at(m_in.offset(start))) {
            const uint64_t length = pre->end - pre->start;
            if (uint64_t(m_end - start) >= length) {
                m_p = start + length;
                handle(pre->ev, start);
                return;
            }
            if (!m_in.eof())
                throw NeedMore{};
            // Shorter than the worker read it: the file changed meanwhile. Read here what is there now.
        }
    }
    Event ev;
    const char* start = fields(ev);
    handle(ev, start);
}

FieldKey EventFields::fieldKey(std::string_view key)
{
    switch (key.size()) {
    case 2:
        if (is(key, "ph"))
            return FieldKey::Ph;
        if (is(key, "ts"))
            return FieldKey::Ts;
        if (is(key, "id"))
            return FieldKey::Id;
        if (is(key, "bp"))
            return FieldKey::Bp;
        return FieldKey::Other;
    case 3:
        if (is(key, "dur"))
            return FieldKey::Dur;
        if (is(key, "pid"))
            return FieldKey::Pid;
        if (is(key, "tid"))
            return FieldKey::Tid;
        if (is(key, "cat"))
            return FieldKey::Cat;
        return FieldKey::Other;
    case 4:
        if (is(key, "name"))
            return FieldKey::Name;
        if (is(key, "args"))
            return FieldKey::Args;
        return FieldKey::Other;
    case 7:
        if (is(key, "bind_id"))
            return FieldKey::BindId;
        if (is(key, "flow_in"))
            return FieldKey::FlowIn;
        return FieldKey::Other;
    case 8: return is(key, "flow_out") ? FieldKey::FlowOut : FieldKey::Other;
    default: return FieldKey::Other;
    }
}

void EventFields::field(Event& ev, FieldKey key, uint32_t& seen)
{
    skipWs();
    // A field the reader uses, named twice in one event, is an error (JSON readers differ on which one wins).
    const auto once = [&](uint32_t bit, const char* name) {
        if (seen & bit)
            fail(m_p, std::string("duplicate key \"") + name + "\" in an event");
        seen |= bit;
    };
    switch (key) {
    case FieldKey::Ph: {
        once(1u << 0, "ph");
        const std::string_view ph = stringValue();
        ev.ph = ph.size() == 1 ? ph[0] : '?';
        break;
    }
    case FieldKey::Ts:
        once(1u << 1, "ts");
        ev.ts = timeValue("\"ts\"");
        ev.hasTs = true;
        break;
    case FieldKey::Id: {
        once(1u << 2, "id");
        const Id id = idValue();
        ev.hasId = id.present;
        ev.id = flowId(id);
        break;
    }
    case FieldKey::Bp: ev.bp = stringValue(); break;
    case FieldKey::Dur:
        once(1u << 3, "dur");
        ev.dur = timeValue("\"dur\"");
        ev.hasDur = true;
        break;
    case FieldKey::Pid:
        once(1u << 4, "pid");
        ev.pid = idValue();
        break;
    case FieldKey::Tid:
        once(1u << 5, "tid");
        ev.tid = idValue();
        break;
    case FieldKey::Cat: ev.cat = stringValue(); break;
    case FieldKey::Name:
        once(1u << 6, "name");
        ev.name = stringValue();
        break;
    case FieldKey::Args:
        once(1u << 7, "args");
        args(ev);
        break;
    case FieldKey::BindId: {
        const Id id = idValue();
        ev.hasBindId = id.present;
        ev.bindId = flowId(id);
        break;
    }
    case FieldKey::FlowIn: ev.flowIn = boolValue(); break;
    case FieldKey::FlowOut: ev.flowOut = boolValue(); break;
    case FieldKey::Start:
    case FieldKey::Other: skipValue(1); break;
    }
}

const char* EventFields::fields(Event& ev)
{
    skipWs();
    const char* start = m_p;
    if (*m_p != '{') {
        if (*m_p == '"' || *m_p == '[' || *m_p == '-' || isDigit(*m_p) || *m_p == 't' || *m_p == 'f' || *m_p == 'n')
            fail(m_p, "an event must be a JSON object");
        fail(m_p, "not valid JSON: unexpected character");
    }
    ++m_p;
    if (!m_keepScratch)
        m_scratchUsed = 0;
    uint32_t seen = 0;
    knownMembers(
        m_fieldSteps, [](std::string_view key) { return fieldKey(key); },
        [&](uint8_t key) { field(ev, FieldKey(key), seen); }, "or ',' in an event");
    return start;
}

// A top-level value other than "traceEvents".
void EventReader::topLevelValue(const std::string& key)
{
    skipWs();
    const char* start = m_p;
    const char c = *m_p;
    if (is(key, "otherData") || is(key, "deviceProperties")) {
        skipValue(1);
        (is(key, "otherData") ? m_raw.otherData : m_raw.deviceProperties).assign(start, m_p);
        return;
    }
    if (c == '{' && is(key, "distributedInfo")) {
        // Kineto's rank of a torch.distributed job ({"backend", "rank", "world_size", ...}), kept as JSON text: merge
        // reads the rank from it (foreign_ranks.h).
        skipValue(1);
        m_raw.topLevel.emplace_back(key, std::string(start, m_p));
        return;
    }
    if (c == '"') {
        m_scratchUsed = 0;
        const std::string_view v = string();
        m_raw.topLevel.emplace_back(key, std::string(v));
    } else if (c == '-' || isDigit(c)) {
        number();
        m_raw.topLevel.emplace_back(key, std::string(start, m_p));
    } else if (c == 't' || c == 'f') {
        skipValue(1);
        m_raw.topLevel.emplace_back(key, std::string(start, m_p));
    } else {
        skipValue(1);
    }
}

Result<chrome::RawTrace> readInput(Input& in, const std::string& file, chrome::Dialect dialect, ChunkPipeline* chunks)
{
    try {
        EventReader reader(in, dialect, chunks);
        return reader.run();
    } catch (const Fail& f) {
        return Error{file, "byte " + std::to_string(f.offset), f.message};
    } catch (const std::bad_alloc&) {
        return Error{file, {}, "out of memory while reading the trace"};
    }
}

} // namespace chrome::detail

namespace chrome {

using detail::Input;
using detail::readInput;

Dialect detectDialect(std::string_view prefix)
{
    const auto has = [prefix](std::string_view s) { return prefix.find(s) != std::string_view::npos; };
    // Kineto's top-level keys; or, in traces from before it wrote them, its categories with its "External id".
    if (has("\"schemaVersion\"") || has("\"deviceProperties\""))
        return Dialect::PyTorch;
    if (has("\"External id\""))
        for (const std::string_view cat :
             {"cuda_runtime", "cpu_op", "ac2g", "python_function", "gpu_memcpy", "Runtime", "Operator", "Kernel"})
            if (has("\"cat\": \"" + std::string(cat) + "\"") || has("\"cat\":\"" + std::string(cat) + "\""))
                return Dialect::PyTorch;
    return Dialect::Generic;
}

Result<RawTrace> readText(std::string_view text, const std::string& file, Dialect dialect, const ReadOptions& options)
{
    Input in(text);
    const detail::ChunkPlan plan = detail::planChunks(text.size(), options);
    if (plan.workers == 0)
        return readInput(in, file, dialect);
    try {
        detail::ChunkPipeline chunks(-1, text, text.size(), plan);
        return readInput(in, file, dialect, &chunks);
    } catch (const std::bad_alloc&) {
        return Error{file, {}, "out of memory while reading the trace"};
    }
}

Result<RawTrace> readFile(const std::string& path, Dialect dialect, const ReadOptions& options)
{
    OpenFile file;
    if (Status opened = openForReading(path, file); !opened)
        return opened.error();
    Input in(file.fd);
    // Regular files only: the workers read their chunks at their offsets.
    const detail::ChunkPlan plan = detail::planChunks(in.expectedSize(), options);
    if (plan.workers == 0 || !S_ISREG(file.status.st_mode))
        return readInput(in, path, dialect);
    try {
        detail::ChunkPipeline chunks(file.fd, {}, in.expectedSize(), plan);
        return readInput(in, path, dialect, &chunks);
    } catch (const std::bad_alloc&) {
        return Error{path, {}, "out of memory while reading the trace"};
    }
}
} // namespace chrome

} // namespace streamscope
