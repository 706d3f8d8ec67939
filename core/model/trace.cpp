#include "trace.h"

#include "enum_names.h"
#include "populate_pages.h"

#include <algorithm>
#include <array>
#include <numeric>
#include <tuple>

namespace streamscope {

namespace {

using detail::lookup;
using detail::nameOf;

constexpr std::array<std::pair<SpanKind, std::string_view>, kSpanKindCount> kSpanKinds{{
    {SpanKind::Kernel, "kernel"},
    {SpanKind::MemcpyH2D, "memcpy-h2d"},
    {SpanKind::MemcpyD2H, "memcpy-d2h"},
    {SpanKind::MemcpyD2D, "memcpy-d2d"},
    {SpanKind::MemcpyP2P, "memcpy-p2p"},
    {SpanKind::Memset, "memset"},
    {SpanKind::HostFunc, "host-func"},
    {SpanKind::ApiCall, "api-call"},
    {SpanKind::Sync, "sync"},
    {SpanKind::HostWork, "host-work"},
    {SpanKind::Range, "range"},
}};

constexpr std::array<std::pair<FlowKind, std::string_view>, kFlowKindCount> kFlowKinds{{
    {FlowKind::Launch, "launch"},
    {FlowKind::Event, "event"},
    {FlowKind::Sync, "sync"},
    {FlowKind::Implicit, "implicit"},
    {FlowKind::Call, "call"},
    {FlowKind::Collective, "collective"},
}};

constexpr std::array<std::pair<TrackKind, std::string_view>, 3> kTrackKinds{{
    {TrackKind::HostThread, "host-thread"},
    {TrackKind::Stream, "stream"},
    {TrackKind::Ranges, "ranges"},
}};

constexpr std::array<std::pair<TraceSource, std::string_view>, 4> kSources{{
    {TraceSource::CudaEvents, "cuda-events"},
    {TraceSource::Cupti, "cupti"},
    {TraceSource::Simulator, "simulator"},
    {TraceSource::Imported, "imported"},
}};

template <typename T>
void permute(std::vector<T>& v, const std::vector<uint32_t>& order)
{
    std::vector<T> out;
    out.reserve(v.size());
    for (uint32_t i : order)
        out.push_back(v[i]);
    v = std::move(out);
}
void permute(TimeColumn& v, const std::vector<uint32_t>& order)
{
    // Rebuilt in the new order, so that each block's base suits the entries it now holds.
    TimeColumn out;
    out.reserve(v.size());
    for (uint32_t i : order)
        out.push_back(v[i]);
    v = std::move(out);
}

std::pair<int64_t, int64_t> scanTimeRange(const SpanColumns& spans)
{
    if (spans.size() == 0)
        return {0, 0};
    // Unpacked a chunk at a time: a plain array's min and max vectorize, a walk through operator[] does not.
    constexpr size_t kChunk = 4096;
    std::array<int64_t, kChunk> buf;
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    const TimeColumn::View start = spans.start.view(), end = spans.end.view();
    for (size_t i = 0; i < start.size(); i += kChunk) {
        const size_t m = std::min(kChunk, start.size() - i);
        start.copyTo(i, i + m, buf.data());
        lo = std::min(lo, *std::min_element(buf.begin(), buf.begin() + ptrdiff_t(m)));
        end.copyTo(i, i + m, buf.data());
        hi = std::max(hi, *std::max_element(buf.begin(), buf.begin() + ptrdiff_t(m)));
    }
    return {lo, hi};
}

} // namespace

std::string_view toString(SpanKind k)
{
    return nameOf(kSpanKinds, k);
}
std::string_view toString(FlowKind k)
{
    return nameOf(kFlowKinds, k);
}
std::string_view toString(TrackKind k)
{
    return nameOf(kTrackKinds, k);
}
std::string_view toString(TraceSource k)
{
    return nameOf(kSources, k);
}
std::optional<SpanKind> spanKindFromString(std::string_view s)
{
    return lookup(kSpanKinds, s);
}
std::optional<FlowKind> flowKindFromString(std::string_view s)
{
    return lookup(kFlowKinds, s);
}
std::optional<TrackKind> trackKindFromString(std::string_view s)
{
    return lookup(kTrackKinds, s);
}
std::optional<TraceSource> traceSourceFromString(std::string_view s)
{
    return lookup(kSources, s);
}

namespace {
constexpr std::array<std::pair<SpanTiming, std::string_view>, 3> kSpanTimings{{
    {SpanTiming::Measured, "measured"},
    {SpanTiming::Corrected, "corrected"},
    {SpanTiming::Uncertain, "uncertain"},
}};
constexpr std::array<std::pair<WaitCause, std::string_view>, kWaitCauseCount> kWaitCauses{{
    {WaitCause::None, "none"},
    {WaitCause::Sms, "sms"},
    {WaitCause::CopyEngine, "copy-engine"},
    {WaitCause::HardwareQueue, "hardware-queue"},
    {WaitCause::HostFuncThread, "host-func-thread"},
}};
} // namespace

std::string_view toString(WaitCause k)
{
    return nameOf(kWaitCauses, k);
}
std::optional<WaitCause> waitCauseFromString(std::string_view s)
{
    return lookup(kWaitCauses, s);
}

std::string_view toString(SpanTiming k)
{
    return nameOf(kSpanTimings, k);
}
std::optional<SpanTiming> spanTimingFromString(std::string_view s)
{
    return lookup(kSpanTimings, s);
}

bool isGpuSpan(SpanKind k)
{
    return k != SpanKind::ApiCall && k != SpanKind::Sync && k != SpanKind::HostWork && k != SpanKind::Range;
}

bool isCopySpan(SpanKind k)
{
    return k == SpanKind::MemcpyH2D || k == SpanKind::MemcpyD2H || k == SpanKind::MemcpyD2D || k == SpanKind::MemcpyP2P;
}

SpanKind gpuSpanKindOf(const Op& op)
{
    switch (op.kind) {
    case OpKind::Memcpy:
        switch (op.copy) {
        case CopyKind::H2D: return SpanKind::MemcpyH2D;
        case CopyKind::D2H: return SpanKind::MemcpyD2H;
        case CopyKind::D2D: return SpanKind::MemcpyD2D;
        case CopyKind::P2P: return SpanKind::MemcpyP2P;
        }
        return SpanKind::MemcpyH2D;
    case OpKind::Memset: return SpanKind::Memset;
    case OpKind::HostFunc: return SpanKind::HostFunc;
    default: return SpanKind::Kernel;
    }
}

const SpanDetail SpanColumns::kNoDetail{};

size_t SpanDetailHash::operator()(const SpanDetail& d) const
{
    uint64_t h = uint64_t(d.bytes) * 0x9e3779b97f4a7c15ull;
    for (uint32_t v : {d.grid.x, d.grid.y, d.grid.z, d.block.x, d.block.y, d.block.z})
        h = (h ^ v) * 0x100000001b3ull + (h >> 29);
    return size_t(h);
}

void SpanColumns::reserve(size_t n)
{
    track.reserve(n);
    kind.reserve(n);
    name.reserve(n);
    start.reserve(n);
    end.reserve(n);
    // An optional column in use grows with the spans: reserved with them, it is not copied as it doubles.
    const auto reserveInUse = [n](auto& col) {
        if (!col.empty())
            col.reserve(n);
    };
    reserveInUse(thread);
    reserveInUse(op);
    reserveInUse(iteration);
    reserveInUse(detail);
    reserveInUse(timing);
    reserveInUse(task);
    reserveInUse(eventStartError);
    reserveInUse(eventEndError);
    reserveInUse(wait);
    reserveInUse(waitFor);
}

void SpanColumns::clear()
{
    *this = SpanColumns{};
}

uint32_t SpanColumns::internDetail(const SpanDetail& d)
{
    if (details.empty())
        details.push_back(SpanDetail{});
    // Details may have been filled directly (a reader, a copy of the trace): index them lazily.
    if (m_detailIndex.size() != details.size()) {
        m_detailIndex.clear();
        for (uint32_t i = 0; i < details.size(); ++i)
            m_detailIndex.emplace(details[i], i);
    }
    // (find before emplace: emplace makes a node, and frees it, for every detail seen before.)
    if (const auto it = m_detailIndex.find(d); it != m_detailIndex.end())
        return it->second;
    const auto index = uint32_t(details.size());
    m_detailIndex.emplace(d, index);
    details.push_back(d);
    return index;
}

void SpanColumns::setDetail(size_t i, const SpanDetail& d)
{
    if (detail.size() <= i && d == kNoDetail)
        return;
    // No hashing for the default (entry 0) or for the previous span's detail (a run of equal kernels or copies):
    // the hash lookup of every span made the Chrome import 15 % slower.
    uint32_t index = 0;
    if (!(d == kNoDetail)) {
        if (i > 0 && i - 1 < detail.size() && details[detail[i - 1]] == d)
            index = detail[i - 1];
        else
            index = internDetail(d);
    }
    setOptional(detail, i, index, 0u);
}

void SpanColumns::setBytes(size_t i, int64_t b)
{
    SpanDetail d = detailOf(i);
    d.bytes = b;
    setDetail(i, d);
}

void SpanColumns::setDetails(const std::vector<int64_t>& bytes, const std::vector<Dim3>& grid,
                             const std::vector<Dim3>& block)
{
    detail.clear();
    details.clear();
    m_detailIndex.clear();
    const size_t n = std::min({bytes.size(), grid.size(), block.size()});
    for (size_t i = 0; i < n; ++i) {
        const SpanDetail d{bytes[i], grid[i], block[i]};
        if (detail.empty() && d == kNoDetail)
            continue;
        if (detail.empty())
            detail.reserve(n);
        detail.resize(i, 0);
        uint32_t index = 0;
        if (!(d == kNoDetail))
            index = i > 0 && !details.empty() && details[detail[i - 1]] == d ? detail[i - 1] : internDetail(d);
        detail.push_back(index);
    }
}

std::vector<int64_t> SpanColumns::bytesColumn() const
{
    std::vector<int64_t> out(size());
    for (size_t i = 0; i < out.size(); ++i)
        out[i] = bytesOf(i);
    return out;
}

std::vector<Dim3> SpanColumns::gridColumn() const
{
    std::vector<Dim3> out(size());
    for (size_t i = 0; i < out.size(); ++i)
        out[i] = gridOf(i);
    return out;
}

std::vector<Dim3> SpanColumns::blockColumn() const
{
    std::vector<Dim3> out(size());
    for (size_t i = 0; i < out.size(); ++i)
        out[i] = blockOf(i);
    return out;
}

namespace {
// Pads a short optional column with its default; drops it (memory included) when every entry is the default.
template <typename T>
void compactColumn(std::vector<T>& col, size_t n, T def)
{
    if (col.empty())
        return;
    col.resize(n, def);
    if (std::all_of(col.begin(), col.end(), [def](const T& v) { return v == def; }))
        std::vector<T>().swap(col);
    else
        giveBackRoom(col);
}
} // namespace

void SpanColumns::compact()
{
    const size_t n = size();
    // The room beyond the spans is given back (populate_pages.h): columns grown by doubling, or reserved for the
    // spans a reader expected (the Chrome reader projects them from the bytes read so far, twice the spans where a
    // file's arrows come after them, and faults pages in ahead of its writes), so that memoryBytes() is what the
    // trace holds. Large room goes back in place, without a copy.
    giveBackRoom(track);
    giveBackRoom(kind);
    giveBackRoom(name);
    start.giveBackRoom();
    end.giveBackRoom();
    compactColumn(thread, n, -1);
    compactColumn(op, n, -1);
    compactColumn(iteration, n, -1);
    compactColumn(detail, n, 0u);
    if (detail.empty()) {
        std::vector<SpanDetail>().swap(details);
        m_detailIndex.clear();
    }
    compactColumn(timing, n, SpanTiming::Measured);
    compactColumn(task, n, 0);
    // The event errors come in pairs, and so do wait and waitFor: one column is dropped only with the other.
    if (!eventStartError.empty() || !eventEndError.empty()) {
        eventStartError.resize(n, kNoEventError);
        eventEndError.resize(n, kNoEventError);
        if (std::all_of(eventStartError.begin(), eventStartError.end(), [](int64_t v) { return v == kNoEventError; }))
            std::vector<int64_t>().swap(eventStartError), std::vector<int64_t>().swap(eventEndError);
    }
    if (!wait.empty()) {
        wait.resize(n, WaitCause::None);
        waitFor.resize(n, kNoSpan);
    }
}

size_t SpanColumns::memoryBytes() const
{
    return heldBytes(track) + heldBytes(kind) + heldBytes(name) + start.memoryBytes() + end.memoryBytes()
        + heldBytes(thread) + heldBytes(op) + heldBytes(iteration) + heldBytes(detail) + heldBytes(details)
        + m_detailIndex.size() * (sizeof(SpanDetail) + sizeof(uint32_t) + 2 * sizeof(void*)) + heldBytes(timing)
        + heldBytes(eventStartError) + heldBytes(eventEndError) + heldBytes(wait) + heldBytes(waitFor)
        + heldBytes(task);
}

uint32_t Trace::intern(std::string_view s)
{
    auto it = m_stringIndex.find(s);
    if (it != m_stringIndex.end())
        return it->second;
    // Strings may have been filled directly (by a reader): index them lazily.
    if (m_stringIndex.size() != strings.size()) {
        m_stringIndex.clear();
        for (uint32_t i = 0; i < strings.size(); ++i)
            m_stringIndex.emplace(strings[i], i);
        it = m_stringIndex.find(s);
        if (it != m_stringIndex.end())
            return it->second;
    }
    const auto id = uint32_t(strings.size());
    strings.emplace_back(s);
    m_stringIndex.emplace(strings.back(), id);
    return id;
}

uint32_t Trace::addTrack(Track t)
{
    tracks.push_back(std::move(t));
    m_finalized = false;
    return uint32_t(tracks.size() - 1);
}

const std::string* findSetting(const RunInfo& info, std::string_view key)
{
    for (const auto& [k, v] : info.settings)
        if (k == key)
            return &v;
    return nullptr;
}

void setSetting(RunInfo& info, std::string_view key, std::string value)
{
    for (auto& [k, v] : info.settings)
        if (k == key) {
            v = std::move(value);
            return;
        }
    info.settings.emplace_back(std::string(key), std::move(value));
}

uint32_t Trace::addSpan(const SpanInit& s)
{
    spans.track.push_back(s.track);
    spans.kind.push_back(s.kind);
    spans.name.push_back(intern(s.name));
    spans.start.push_back(s.start);
    spans.end.push_back(std::max(s.start, s.end));
    const size_t n = spans.size();
    spans.setThread(n - 1, s.thread);
    spans.setOp(n - 1, s.op);
    spans.setIteration(n - 1, s.iteration);
    spans.setDetail(n - 1, {s.bytes, s.grid, s.block});
    if (s.timing != SpanTiming::Measured || !spans.timing.empty()) {
        spans.timing.resize(n - 1, SpanTiming::Measured);
        spans.timing.push_back(s.timing);
    }
    if (s.task != 0 || !spans.task.empty()) {
        spans.task.resize(n - 1, 0);
        spans.task.push_back(s.task);
    }
    if (s.eventStartError != kNoEventError || !spans.eventStartError.empty()) {
        spans.eventStartError.resize(n - 1, kNoEventError);
        spans.eventEndError.resize(n - 1, kNoEventError);
        spans.eventStartError.push_back(s.eventStartError);
        spans.eventEndError.push_back(s.eventEndError);
    }
    if (!spans.wait.empty()) {
        spans.wait.push_back(WaitCause::None);
        spans.waitFor.push_back(kNoSpan);
    }
    m_finalized = false;
    return uint32_t(spans.size() - 1);
}

void Trace::setWait(uint32_t waiter, WaitCause cause, uint32_t holder)
{
    const size_t n = spans.size();
    if (waiter >= n)
        return;
    if (spans.wait.empty()) {
        if (cause == WaitCause::None)
            return;
        spans.wait.assign(n, WaitCause::None);
        spans.waitFor.assign(n, kNoSpan);
    }
    spans.wait.resize(n, WaitCause::None);
    spans.waitFor.resize(n, kNoSpan);
    spans.wait[waiter] = cause;
    spans.waitFor[waiter] = cause == WaitCause::None ? kNoSpan : holder;
    m_finalized = false;
}

SpanInit Trace::spanInit(uint32_t i) const
{
    SpanInit s;
    s.track = spans.track[i];
    s.kind = spans.kind[i];
    s.name = spanName(i);
    s.start = spans.start[i];
    s.end = spans.end[i];
    s.thread = spans.threadOf(i);
    s.op = spans.opOf(i);
    s.iteration = spans.iterationOf(i);
    const SpanDetail& d = spans.detailOf(i);
    s.bytes = d.bytes;
    s.grid = d.grid;
    s.block = d.block;
    s.timing = spans.timingOf(i);
    if (spans.hasEventError(i)) {
        s.eventStartError = spans.eventStartError[i];
        s.eventEndError = spans.eventEndError[i];
    }
    s.task = spans.taskOf(i);
    return s;
}

uint32_t Trace::copySpanFrom(const Trace& src, uint32_t i, uint32_t track, int64_t shift)
{
    SpanInit s = src.spanInit(i);
    s.track = track;
    s.start += shift;
    s.end += shift;
    return addSpan(s);
}

void Trace::copyWaitsFrom(const Trace& src, const std::vector<uint32_t>& spanMap)
{
    const auto n = uint32_t(std::min(src.spanCount(), spanMap.size()));
    for (uint32_t i = 0; i < n; ++i) {
        const WaitCause w = src.spans.waitOf(i);
        if (w == WaitCause::None || spanMap[i] == kNoSpan)
            continue;
        const uint32_t holder = src.spans.waitForOf(i);
        setWait(spanMap[i], w, holder < spanMap.size() ? spanMap[holder] : kNoSpan);
    }
}

namespace {

// The spans in the trace's order: by track, then start, then end, ties kept in span order (a stable sort). Counted
// into their tracks first (stable), then each track's spans sorted by (start, end, index) with their times read
// once: a stable sort of an index comparing the time columns read two spans' times per comparison (a simulated
// trace of 1.5 M spans: 6 % of its run's instructions).
std::vector<uint32_t> spanOrder(const SpanColumns& spans)
{
    const size_t n = spans.size();
    uint32_t tracks = 0;
    for (size_t i = 0; i < n; ++i)
        tracks = std::max(tracks, spans.track[i] + 1);
    std::vector<uint32_t> first(size_t(tracks) + 1, 0);
    for (size_t i = 0; i < n; ++i)
        ++first[spans.track[i] + 1];
    std::partial_sum(first.begin(), first.end(), first.begin());
    std::vector<uint32_t> order(n);
    {
        std::vector<uint32_t> next(first.begin(), first.end() - 1);
        for (size_t i = 0; i < n; ++i)
            order[next[spans.track[i]]++] = uint32_t(i);
    }
    struct Key {
        int64_t start, end;
        uint32_t span;
        bool operator<(const Key& o) const { return std::tie(start, end, span) < std::tie(o.start, o.end, o.span); }
    };
    std::vector<Key> keys;
    for (uint32_t t = 0; t < tracks; ++t) {
        const size_t b = first[t], e = first[t + 1];
        keys.resize(e - b);
        for (size_t i = b; i < e; ++i)
            keys[i - b] = {spans.start[order[i]], spans.end[order[i]], order[i]};
        if (std::is_sorted(keys.begin(), keys.end()))
            continue;
        std::sort(keys.begin(), keys.end());
        for (size_t i = b; i < e; ++i)
            order[i] = keys[i - b].span;
    }
    return order;
}

} // namespace

void Trace::finalize()
{
    const size_t n = spans.size();
    // Readers that fill the columns directly leave the optional ones short, or full of the default.
    spans.compact();
    // Traces read from a file are in order already: one pass instead of sorting an index of every span, the times
    // unpacked a chunk at a time (through operator[] it was 13 % of opening a binary trace of 100 M spans).
    // The same pass finds the time range (timeRange() keeps it).
    bool identity = true;
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    {
        constexpr size_t kChunk = 4096;
        std::vector<int64_t> start(kChunk + 1), end(kChunk + 1);
        for (size_t first = 0; first < n && identity; first += kChunk) {
            const size_t last = std::min(n, first + kChunk + 1); // entries [first, last): the chunk and the next one
            spans.start.copyTo(first, last, start.data());
            spans.end.copyTo(first, last, end.data());
            lo = std::min(lo, *std::min_element(start.begin(), start.begin() + ptrdiff_t(last - first)));
            hi = std::max(hi, *std::max_element(end.begin(), end.begin() + ptrdiff_t(last - first)));
            const uint32_t* track = spans.track.data() + first;
            for (size_t i = 1; i < last - first; ++i) {
                const bool ordered = track[i] != track[i - 1] ? track[i] > track[i - 1]
                    : start[i] != start[i - 1]                ? start[i] > start[i - 1]
                                                              : end[i] >= end[i - 1];
                if (!ordered) {
                    identity = false;
                    break;
                }
            }
        }
    }
    std::vector<uint32_t> order;
    if (!identity) {
        order = spanOrder(spans);
        identity = true;
        for (size_t i = 0; i < n && identity; ++i)
            identity = order[i] == i;
    }
    if (!identity) {
        permute(spans.track, order);
        permute(spans.kind, order);
        permute(spans.name, order);
        permute(spans.start, order);
        permute(spans.end, order);
        // After compact() an optional column is empty or full.
        if (!spans.thread.empty())
            permute(spans.thread, order);
        if (!spans.op.empty())
            permute(spans.op, order);
        if (!spans.iteration.empty())
            permute(spans.iteration, order);
        if (!spans.detail.empty())
            permute(spans.detail, order);
        if (!spans.timing.empty())
            permute(spans.timing, order);
        if (!spans.task.empty())
            permute(spans.task, order);
        if (!spans.eventStartError.empty()) {
            permute(spans.eventStartError, order);
            permute(spans.eventEndError, order);
        }
        std::vector<uint32_t> newIndex(n);
        for (uint32_t i = 0; i < n; ++i)
            newIndex[order[i]] = i;
        if (!spans.wait.empty()) {
            permute(spans.wait, order);
            permute(spans.waitFor, order);
            for (auto& h : spans.waitFor)
                if (h != kNoSpan)
                    h = h < n ? newIndex[h] : kNoSpan;
        }
        for (auto& f : flows) {
            if (f.from < n)
                f.from = newIndex[f.from];
            if (f.to < n)
                f.to = newIndex[f.to];
        }
    }
    std::erase_if(flows, [n](const Flow& f) { return f.from >= n || f.to >= n; });
    const auto flowBefore = [](const Flow& a, const Flow& b) {
        return std::tie(a.from, a.to, a.kind) < std::tie(b.from, b.to, b.kind);
    };
    if (!std::is_sorted(flows.begin(), flows.end(), flowBefore))
        std::sort(flows.begin(), flows.end(), flowBefore);
    flows.erase(std::unique(flows.begin(), flows.end()), flows.end());
    giveBackRoom(flows); // a reader grows it by doubling: up to half of it is room

    m_trackOffsets.assign(tracks.size() + 1, 0);
    for (size_t i = 0; i < n; ++i)
        if (spans.track[i] < tracks.size())
            ++m_trackOffsets[spans.track[i] + 1];
    for (size_t t = 0; t < tracks.size(); ++t)
        m_trackOffsets[t + 1] += m_trackOffsets[t];
    m_finalized = true;
    // Reordered spans have the same range; a pass cut short by the first span out of order did not see them all.
    m_timeRange = n > 0 && order.empty() ? std::pair{lo, hi} : scanTimeRange(spans);
    m_timeRangeOf = {spans.start.identify(), spans.end.identify()};
}

std::pair<int64_t, int64_t> Trace::timeRange() const
{
    if (m_timeRangeOf.first != 0 && m_timeRangeOf == std::pair{spans.start.contentId(), spans.end.contentId()})
        return m_timeRange;
    return scanTimeRange(spans);
}

int Trace::findStreamTrack(std::string_view name, int device) const
{
    for (size_t i = 0; i < tracks.size(); ++i)
        if (tracks[i].kind == TrackKind::Stream && tracks[i].name == name && (device < 0 || tracks[i].device == device))
            return int(i);
    return -1;
}

size_t Trace::memoryBytes() const
{
    size_t bytes = spans.memoryBytes();
    bytes += heldBytes(flows);
    for (const auto& s : strings)
        bytes += s.capacity() + sizeof(std::string);
    bytes += m_trackOffsets.size() * sizeof(uint32_t);
    return bytes;
}

const Trace& finalizedView(const Trace& trace, Trace& storage)
{
    if (trace.finalized())
        return trace;
    storage = trace;
    storage.finalize();
    return storage;
}

} // namespace streamscope
