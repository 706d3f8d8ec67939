// Chrome Trace Event reading, part 2: each event's fields into the spans, threads, processes and flows of a RawTrace
// (chrome_trace_reader.h): complete and begin/end events, metadata, PyTorch's sync records, flow events v1 and v2.
#include "chrome_trace_reader.h"

#include "import_limits.h"
#include "populate_pages.h"

#include <algorithm>
#include <cstring>
#include <limits>

namespace streamscope::chrome::detail {

uint32_t EventReader::internKeyText(std::string_view s)
{
    auto it = m_keyTexts.find(s);
    if (it != m_keyTexts.end())
        return it->second;
    const auto id = uint32_t(m_keyTextList.size() + 1);
    m_keyTextList.emplace_back(s);
    m_keyTexts.emplace(std::string(s), id);
    return id;
}

uint32_t EventReader::threadFor(const Event& ev)
{
    // The format: a missing tid is the pid.
    const Id& pid = ev.pid;
    const Id& tid = ev.tid.present ? ev.tid : ev.pid;
    ThreadKey key{pid.text.empty() ? pid.number : -1, tid.text.empty() ? tid.number : -1, keyText(pid.text),
                  keyText(tid.text)};
    for (size_t k = 0; k < kRecentThreads; ++k)
        if (m_recentThreads[k] != kNoSpan && m_recentKeys[k] == key)
            return m_recentThreads[k];
    auto it = m_threads.find(key);
    uint32_t index;
    if (it != m_threads.end()) {
        index = it->second;
    } else {
        if (m_raw.threads.size() >= kMaxImportedTracks)
            fail(m_p, tooManyTracksMessage() + " (pid and tid pairs)");
        index = uint32_t(m_raw.threads.size());
        chrome::RawThread t;
        t.pid = key.pid;
        t.tid = key.tid;
        t.pidText = std::string(pid.text);
        t.tidText = std::string(tid.text);
        m_raw.threads.push_back(std::move(t));
        m_threads.emplace(key, index);
        processFor(ev);
    }
    m_recentKeys[m_recentNext] = key;
    m_recentThreads[m_recentNext] = index;
    m_recentNext = (m_recentNext + 1) % kRecentThreads;
    return index;
}

chrome::RawProcess& EventReader::processFor(const Event& ev)
{
    const auto key = std::make_pair(ev.pid.text.empty() ? ev.pid.number : -1, std::string(ev.pid.text));
    auto it = m_processes.find(key);
    if (it != m_processes.end())
        return m_raw.processes[it->second];
    chrome::RawProcess p;
    p.pid = key.first;
    p.pidText = key.second;
    m_processes.emplace(key, m_raw.processes.size());
    m_raw.processes.push_back(std::move(p));
    return m_raw.processes.back();
}

// A slot of the names' direct-mapped cache, from the length and the first and last eight bytes: no pass over a
// long kernel name as std::hash makes (names repeat, and most spans' names are among a few hundred).
static size_t nameSlot(std::string_view s)
{
    uint64_t a = s.size(), b = 0;
    if (s.size() >= 8) {
        std::memcpy(&a, s.data(), 8);
        std::memcpy(&b, s.data() + s.size() - 8, 8);
    } else if (!s.empty()) {
        std::memcpy(&b, s.data(), s.size());
    }
    const uint64_t h = (a ^ (b * 0x9e3779b97f4a7c15ull) ^ (uint64_t(s.size()) << 56)) * 0xff51afd7ed558ccdull;
    return size_t(h >> (64 - kNameCacheBits));
}

uint32_t EventReader::intern(std::string_view s)
{
    if (m_lastNameId != kNoSpan && s == m_lastName)
        return m_lastNameId;
    NameSlot& slot = m_nameCache[nameSlot(s)];
    if (slot.id != kNoSpan && s == slot.name) {
        m_lastName = slot.name;
        m_lastNameId = slot.id;
        return slot.id;
    }
    auto& strings = m_raw.trace.strings;
    auto it = m_names.find(s);
    if (it == m_names.end()) {
        if (strings.size() >= size_t(std::numeric_limits<uint32_t>::max()))
            throw Fail{0, "too many distinct names"};
        strings.emplace_back(s);
        it = m_names.emplace(strings.back(), uint32_t(strings.size() - 1)).first;
    }
    // The map's key, not the vector's string: the vector moves its strings when it grows.
    m_lastName = it->first;
    m_lastNameId = it->second;
    slot.name = it->first;
    slot.id = it->second;
    return it->second;
}

namespace {

// The columns the reader fills span by span, each given to f: those every span has, and the optional ones it sets
// (an optional column not in use has no room: the page calls leave it alone).
template <typename F>
void forColumnsFilled(SpanColumns& s, F&& f)
{
    f(s.track);
    f(s.kind);
    f(s.name);
    f(s.start);
    f(s.end);
    f(s.thread);
    f(s.op);
    f(s.iteration);
    f(s.detail);
}

} // namespace

void EventReader::populateSpans()
{
    // The columns' next pages faulted in ahead, 16384 spans (1.1 MB) at a time: taken one page at a time as the
    // spans were written, page faults were 13.6 % of the import's time (perf, the 2-core VM of docs/PERFORMANCE.md,
    // where a fault is dear), 6.2 % when populated ahead.
    constexpr size_t kAhead = 16384;
    auto& s = m_raw.trace.spans;
    const size_t from = s.size(), to = from + kAhead;
    forColumnsFilled(s, [from, to](auto& col) { populatePages(col, from, to); });
    m_populatedSpans = to;
}

void EventReader::addFlow(Flow f)
{
    // Grown by doubling as a vector would, and the pages of the next 8192 arrows faulted in ahead of the writes as
    // the spans' are (populateSpans): a fault taken per page of a fresh block was 2 % of importing a file whose
    // arrows follow its spans. Grown here, not by push_back, so that a fresh block is faulted in from its start.
    auto& flows = m_raw.trace.flows;
    if (flows.size() == flows.capacity()) {
        flows.reserve(std::max<size_t>(4096, 2 * flows.capacity()));
        adviseSmallPages(flows); // as the span columns' (reserveSpans)
        m_populatedFlows = 0;
    }
    populateAhead(flows, m_populatedFlows, 8192);
    flows.push_back(f);
}

void EventReader::reserveSpans()
{
    // Room for the spans the rest of the input is expected to hold, projected from the bytes read so far: the
    // columns are not copied again and again as they double, each copy faulting in fresh pages (measured: a tenth
    // of the import's time), and none is left at twice the room it needs (the peak: 1.38x the trace before, 1.26x
    // after, docs/PERFORMANCE.md). Pages reserved and never written cost no memory.
    auto& s = m_raw.trace.spans;
    const size_t n = s.size();
    size_t want = n + n / 2 + 1024;
    const uint64_t done = m_in.offset(m_p), total = m_in.expectedSize();
    if (n >= 4096 && done > 0 && total > done) {
        const double projected = double(n) * double(total) / double(done) * 1.03 + 1024;
        if (projected > double(want))
            want = size_t(std::min(projected, double(kNoSpan)));
    }
    s.reserve(want);
    // 4 KiB pages for the columns being filled: with 2 MiB ones the last page of each was resident whole while the
    // file was read (the peak 1.45 - 1.54x the trace of a 306 MiB file, 1.26 - 1.30x with small pages, at the same
    // CPU time; docs/PERFORMANCE.md).
    forColumnsFilled(s, [](auto& col) { adviseSmallPages(col); });
}

uint32_t EventReader::addSpan(const Event& ev, uint32_t thread, SpanKind kind, int64_t start, int64_t end)
{
    auto& s = m_raw.trace.spans;
    if (s.size() >= size_t(std::numeric_limits<uint32_t>::max()) - 1)
        throw Fail{0, "too many spans (more than 4294967294)"};
    const auto index = uint32_t(s.size());
    if (s.start.size() == s.start.capacity())
        reserveSpans();
    if (index >= m_populatedSpans)
        populateSpans();
    s.track.push_back(thread);
    s.kind.push_back(kind);
    s.name.push_back(intern(ev.name));
    s.start.push_back(start);
    s.end.push_back(end);
    const auto clamp32 = [](int64_t v) {
        return int32_t(
            std::clamp<int64_t>(v, std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max()));
    };
    // Optional columns: made only where some span has the field (SpanColumns).
    s.setThread(index, clamp32(ev.thread));
    s.setOp(index, clamp32(ev.op));
    s.setIteration(index, clamp32(ev.iteration));
    if (ev.task > 0 || !s.task.empty()) { // only where some span repeats (SpanColumns::task)
        s.task.resize(index, 0);
        s.task.push_back(clamp32(std::max<int64_t>(0, ev.task)));
    }
    s.setDetail(index, {ev.bytes, ev.hasGrid ? ev.grid : Dim3{0, 0, 0}, ev.hasBlock ? ev.block : Dim3{0, 0, 0}});

    chrome::RawThread& t = m_raw.threads[thread];
    ++t.spans;
    if (kind != chrome::kUnknownKind && isGpuSpan(kind))
        ++t.gpuSpans;
    if (ev.device >= 0 && t.device < 0)
        t.device = ev.device;
    if (ev.stream.present && t.stream.empty()) {
        t.streamIsNumber = ev.stream.text.empty();
        t.stream = t.streamIsNumber ? std::to_string(ev.stream.number) : std::string(ev.stream.text);
    }
    if (ev.hasCorrelation)
        m_raw.correlations.emplace_back(index, ev.correlation);
    if (ev.hasExternalId && m_dialect == chrome::Dialect::PyTorch)
        m_raw.externalIds.emplace_back(index, ev.externalId);
    if (!ev.wait.empty() && ev.waitFor >= 0 && ev.waitFor < int64_t(kNoSpan))
        if (const auto cause = waitCauseFromString(ev.wait))
            m_raw.trace.setWait(index, *cause, uint32_t(ev.waitFor));
    return index;
}

// The span kind of an event, or kUnknownKind; nullopt: not a span in this dialect.
std::optional<SpanKind> EventReader::spanKind(const Event& ev)
{
    if (!ev.argKind.empty())
        if (const auto k = spanKindFromString(ev.argKind))
            return *k;
    if (m_dialect == chrome::Dialect::PyTorch) {
        // The CUDA work and calls, and the ranges around them (CPU ops, annotations, Python functions); the
        // profiler's own rows ("Trace", "overhead") are no spans.
        if (chrome::isPyTorchRangeCategory(ev.cat))
            return SpanKind::Range;
        const auto k = chrome::kindFromCategory(ev.cat, ev.name);
        if (!k)
            return std::nullopt;
        return k;
    }
    const auto k = chrome::kindFromCategory(ev.cat, ev.name);
    return k ? *k : chrome::kUnknownKind;
}

void EventReader::handle(const Event& ev, const char* start)
{
    switch (ev.ph) {
    case 'X': {
        if (!ev.hasTs)
            fail(start, "a complete event (\"ph\": \"X\") without \"ts\"");
        // Writers that lose a duration (or mean an instant) should not cost the whole file: such an event is kept
        // as an instant, and the trace counts them (settings "x_events_without_dur").
        if (!ev.hasDur)
            ++m_raw.withoutDur;
        if (ev.dur < 0)
            fail(start, "a complete event with a negative \"dur\"");
        if (m_dialect == chrome::Dialect::PyTorch && is(ev.cat, "cuda_sync")) {
            syncRecord(ev);
            return;
        }
        const auto kind = spanKind(ev);
        if (!kind) {
            ++m_raw.skippedEvents;
            return;
        }
        const uint32_t thread = threadFor(ev);
        if (ev.ts > std::numeric_limits<int64_t>::max() - ev.dur)
            fail(start, "\"ts\" + \"dur\" is out of range");
        const uint32_t span = addSpan(ev, thread, *kind, ev.ts, ev.ts + ev.dur);
        if (ev.hasBindId && (ev.flowIn || ev.flowOut))
            bindIdFlow(ev, span);
        return;
    }
    case 'B': {
        if (!ev.hasTs)
            fail(start, "a begin event (\"ph\": \"B\") without \"ts\"");
        const auto kind = spanKind(ev);
        if (!kind) {
            ++m_raw.skippedEvents;
            return;
        }
        const uint32_t thread = threadFor(ev);
        const uint32_t span = addSpan(ev, thread, *kind, ev.ts, ev.ts);
        m_raw.threads[thread].open.push_back(span);
        if (ev.hasBindId && (ev.flowIn || ev.flowOut))
            bindIdFlow(ev, span);
        return;
    }
    case 'E': {
        if (!ev.hasTs)
            fail(start, "an end event (\"ph\": \"E\") without \"ts\"");
        auto& open = m_raw.threads[threadFor(ev)].open;
        if (open.empty())
            return;
        const uint32_t span = open.back();
        open.pop_back();
        auto& s = m_raw.trace.spans;
        s.end.set(span, std::max(s.start[span], ev.ts));
        return;
    }
    case 'M': metadata(ev); return;
    case 's':
    case 't':
    case 'f': flowEvent(ev); return;
    default: ++m_raw.skippedEvents; return;
    }
}

void EventReader::metadata(const Event& ev)
{
    if (ev.name == "process_name") {
        processFor(ev).name = std::string(ev.argName);
    } else if (ev.name == "process_labels") {
        processFor(ev).labels = std::string(ev.labels);
    } else if (ev.name == "process_sort_index") {
        if (ev.hasSortIndex) {
            auto& p = processFor(ev);
            p.sortIndex = ev.sortIndex;
            p.hasSortIndex = true;
        }
    } else if (ev.name == "thread_name") {
        m_raw.threads[threadFor(ev)].name = std::string(ev.argName);
    } else if (ev.name == "thread_sort_index") {
        if (ev.hasSortIndex) {
            auto& t = m_raw.threads[threadFor(ev)];
            t.sortIndex = ev.sortIndex;
            t.hasSortIndex = true;
        }
    }
}

void EventReader::syncRecord(const Event& ev)
{
    chrome::SyncRecord r;
    r.thread = threadFor(ev);
    r.ts = ev.ts;
    const std::string_view kind = !ev.syncKind.empty() ? ev.syncKind : ev.name;
    if (kind == "Stream Wait Event")
        r.type = chrome::SyncRecord::StreamWait;
    else if (kind == "Stream Sync")
        r.type = chrome::SyncRecord::StreamSync;
    else if (kind == "Event Sync")
        r.type = chrome::SyncRecord::EventSync;
    else if (kind == "Context Sync")
        r.type = chrome::SyncRecord::ContextSync;
    r.device = ev.device >= 0 ? ev.device : (ev.pid.text.empty() ? ev.pid.number : -1);
    r.stream = ev.stream.present && ev.stream.text.empty() ? ev.stream.number : -1;
    r.waitOnStream = ev.waitOnStream;
    r.recordCorrelation = ev.recordCorrelation;
    r.correlation = ev.hasCorrelation ? ev.correlation : -1;
    m_raw.syncs.push_back(r);
}

int EventReader::flowKindFromName(std::string_view name)
{
    if (const auto k = flowKindFromString(name))
        return int(*k);
    return -1;
}

void EventReader::bindIdFlow(const Event& ev, uint32_t span)
{
    // Perfetto's flow events v2: "bind_id" with "flow_out" on the source slice, "flow_in" on the target.
    const FlowKey key{ev.bindId, 0, 1};
    auto it = m_open.find(key);
    if (it == m_open.end()) {
        OpenFlow o;
        o.span = span;
        o.kind = ev.flowIn ? -2 : -1; // -2: this end is a target, waiting for its source
        m_open.emplace(key, o);
        return;
    }
    const OpenFlow o = it->second;
    m_open.erase(it);
    if (o.kind == -2)
        addFlow({span, o.span, kFlowKindByEnds});
    else
        addFlow({o.span, span, kFlowKindByEnds});
    if (ev.flowIn && ev.flowOut) { // a step: also the source of the next part
        OpenFlow next;
        next.span = span;
        m_open.emplace(key, next);
    }
}

void EventReader::flowEvent(const Event& ev)
{
    if (!ev.hasId || !ev.hasTs)
        return;
    OpenFlow here;
    here.end.thread = threadFor(ev);
    here.end.ts = ev.ts;
    here.end.enclosing = ev.ph != 'f' || ev.bp == "e";
    here.kind = flowKindFromName(ev.name);
    here.launchOnly = ev.name == "ac2g";
    // Our exports name the slice; it is trusted only when it is where the event says.
    if (ev.spanHint >= 0 && uint64_t(ev.spanHint) < m_raw.trace.spans.size()) {
        const auto hint = uint32_t(ev.spanHint);
        if (m_raw.trace.spans.track[hint] == here.end.thread && m_raw.trace.spans.start[hint] == ev.ts)
            here.span = hint;
    }
    // The flow started last waits beside the open ones (m_open never holds its key): most writers end a flow right
    // after starting it, and then neither end is hashed nor stored.
    const bool latest = m_latestOpen && m_latest.id == ev.id && m_latest.cat == ev.cat && m_latest.name == ev.name;
    const auto keyOf = [](uint64_t id, std::string_view cat, std::string_view name) {
        return FlowKey{id, hashText(cat), hashText(name)};
    };
    if (ev.ph == 's') {
        here.target = ev.flowEnd == "to";
        if (!latest) {
            if (m_latestOpen)
                m_open[keyOf(m_latest.id, m_latest.cat, m_latest.name)] = m_latest.flow;
            if (!m_open.empty())
                m_open.erase(keyOf(ev.id, ev.cat, ev.name));
            m_latestOpen = true;
            m_latest.id = ev.id;
            m_latest.cat.assign(ev.cat);
            m_latest.name.assign(ev.name);
        }
        m_latest.flow = here;
        return;
    }
    OpenFlow from;
    if (latest) {
        from = m_latest.flow;
        if (ev.ph == 'f')
            m_latestOpen = false;
        else
            m_latest.flow = here; // a step ends one arrow and starts the next
    } else {
        if (m_open.empty())
            return;
        auto it = m_open.find(keyOf(ev.id, ev.cat, ev.name));
        if (it == m_open.end())
            return;
        from = it->second;
        if (ev.ph == 'f')
            m_open.erase(it);
        else
            it->second = here;
    }
    if (from.span != kNoSpan && here.span != kNoSpan) {
        if (from.target)
            addFlow({here.span, from.span, flowKindOrByEnds(from.kind)});
        else
            addFlow({from.span, here.span, flowKindOrByEnds(from.kind)});
    } else {
        chrome::UnboundFlow f;
        f.from = from.target ? here.end : from.end;
        f.to = from.target ? from.end : here.end;
        f.kind = from.kind;
        f.launchOnly = from.launchOnly;
        m_raw.unboundFlows.push_back(f);
    }
}

void EventReader::closeOpenSpans()
{
    // "B" without "E": they end where the trace ends.
    auto& s = m_raw.trace.spans;
    int64_t last = 0;
    bool any = false;
    for (const auto& t : m_raw.threads)
        any = any || !t.open.empty();
    if (!any)
        return;
    for (size_t i = 0; i < s.size(); ++i)
        last = std::max(last, s.end[i]);
    for (auto& t : m_raw.threads) {
        for (uint32_t span : t.open)
            s.end.set(span, std::max(s.start[span], last));
        t.open.clear();
        t.open.shrink_to_fit();
    }
}

} // namespace streamscope::chrome::detail
