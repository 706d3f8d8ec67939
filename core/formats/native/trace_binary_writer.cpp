// The binary native trace format, writing: traceToBinary (docs/TRACE.md "Binary format").
#include "trace_binary.h"
#include "trace_binary_layout.h"
#include "trace_json.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#ifdef STREAMSCOPE_HAVE_ZSTD
#include <zstd.h>
#endif

namespace streamscope {

namespace {

using namespace trace_binary;

// Level 1 compresses our columns at about 300 MB/s per core and unpacks them at over 1 GB/s; higher levels gain
// little on integer columns and cost several times the time.
constexpr int kZstdLevel = 1;

struct PendingBlock {
    uint32_t id;
    const void* data;
    size_t size;
};

void padTo8(std::string& out)
{
    out.append((8 - out.size() % 8) % 8, '\0');
}

template <typename T>
void add(std::vector<PendingBlock>& blocks, uint32_t id, const std::vector<T>& v)
{
    blocks.push_back({id, v.data(), v.size() * sizeof(T)});
}

#ifdef STREAMSCOPE_HAVE_ZSTD
// One zstd frame of the block's entries shuffled group by group (Codec::ZstdShuffled): its size, or a zstd error
// code. `capacity` is at least ZSTD_compressBound(size).
size_t compressShuffled(ZSTD_CCtx* cctx, char* dst, size_t capacity, const void* data, size_t size, size_t entry)
{
    const auto* src = static_cast<const char*>(data);
    const size_t count = size / entry;
    std::vector<char> group(std::min(count, kShuffleGroup) * entry);
    ZSTD_CCtx_reset(cctx, ZSTD_reset_session_only); // a new frame, whatever the last call left
    ZSTD_outBuffer out{dst, capacity, 0};
    for (size_t first = 0; first < count; first += kShuffleGroup) {
        const size_t n = std::min(kShuffleGroup, count - first);
        shuffleBytes(src + first * entry, group.data(), n, entry);
        ZSTD_inBuffer in{group.data(), n * entry, 0};
        const bool last = first + n == count;
        size_t left = 0;
        do {
            left = ZSTD_compressStream2(cctx, &out, &in, last ? ZSTD_e_end : ZSTD_e_continue);
            if (ZSTD_isError(left))
                return left;
        } while (last ? left != 0 : in.pos < in.size);
    }
    return out.pos;
}
#endif

} // namespace

bool binaryTraceCompressionSupported()
{
#ifdef STREAMSCOPE_HAVE_ZSTD
    return true;
#else
    return false;
#endif
}

bool looksLikeBinaryTrace(std::string_view prefix)
{
    return prefix.substr(0, kBinaryTraceMagic.size()) == kBinaryTraceMagic;
}

bool hasBinaryTraceExtension(std::string_view path)
{
    if (path.size() < kBinaryTraceExtension.size())
        return false;
    const std::string_view tail = path.substr(path.size() - kBinaryTraceExtension.size());
    return std::equal(tail.begin(), tail.end(), kBinaryTraceExtension.begin(),
                      [](char a, char b) { return (a >= 'A' && a <= 'Z' ? char(a - 'A' + 'a') : a) == b; });
}

std::string traceToBinary(const Trace& input, const BinaryTraceOptions& options)
{
    static_assert(std::endian::native == std::endian::little, "the binary trace format is little-endian");
    Trace storage;
    const Trace& t = finalizedView(input, storage);
    const size_t n = t.spans.size();
    const auto& s = t.spans;

    // The header's fields (info, legends, tracks) as the JSON format writes them, so both formats share one reader
    // and one set of checks for them.
    Trace header;
    header.info = t.info;
    header.tracks = t.tracks;
    const std::string meta = traceToJson(header);

    std::vector<uint64_t> stringOffsets;
    stringOffsets.reserve(t.strings.size() + 1);
    stringOffsets.push_back(0);
    std::string stringBytes;
    for (const auto& str : t.strings) {
        stringBytes += str;
        stringOffsets.push_back(stringBytes.size());
    }

    std::vector<PendingBlock> blocks;
    blocks.push_back({Meta, meta.data(), meta.size()});
    add(blocks, StringOffsets, stringOffsets);
    blocks.push_back({StringBytes, stringBytes.data(), stringBytes.size()});
    add(blocks, SpanTrack, s.track);
    add(blocks, SpanKind_, s.kind);
    add(blocks, SpanName, s.name);
    // The times as TimeColumn holds them: offsets, bases, and the exceptions as (index, value) pairs of i64.
    std::vector<int64_t> startExceptions, endExceptions;
    const auto addTimes = [&](const TimeColumn& c, uint32_t offsetsId, std::vector<int64_t>& exceptions) {
        add(blocks, offsetsId, c.offsets());
        add(blocks, offsetsId + 1, c.bases());
        for (const auto& [index, value] : c.exceptions())
            exceptions.insert(exceptions.end(), {int64_t(index), value});
        if (!exceptions.empty())
            add(blocks, offsetsId + 2, exceptions);
    };
    addTimes(s.start, SpanStartOffsets, startExceptions);
    addTimes(s.end, SpanEndOffsets, endExceptions);
    // The optional columns the trace holds (after finalize(), each is empty or has an entry per span).
    if (s.thread.size() == n && n > 0)
        add(blocks, SpanThread, s.thread);
    if (s.op.size() == n && n > 0)
        add(blocks, SpanOp, s.op);
    if (s.iteration.size() == n && n > 0)
        add(blocks, SpanIteration, s.iteration);
    std::vector<uint8_t> details;
    if (s.detail.size() == n && n > 0) {
        add(blocks, SpanDetailIndex, s.detail);
        details.resize(s.details.size() * 32);
        for (size_t i = 0; i < s.details.size(); ++i) {
            const SpanDetail& d = s.details[i];
            const uint32_t dims[6] = {d.grid.x, d.grid.y, d.grid.z, d.block.x, d.block.y, d.block.z};
            std::memcpy(details.data() + 32 * i, &d.bytes, 8);
            std::memcpy(details.data() + 32 * i + 8, dims, sizeof dims);
        }
        add(blocks, SpanDetailTable, details);
    }
    // Optional columns only where the JSON writer writes them (a span differs from the default).
    if (!s.timing.empty())
        add(blocks, SpanTiming_, s.timing);
    if (!s.eventStartError.empty()) {
        add(blocks, SpanEventStartError, s.eventStartError);
        add(blocks, SpanEventEndError, s.eventEndError);
    }
    if (!s.wait.empty()) {
        add(blocks, SpanWait, s.wait);
        add(blocks, SpanWaitFor, s.waitFor);
    }
    if (s.task.size() == n && n > 0)
        add(blocks, SpanTask, s.task);
    std::vector<uint32_t> flowFrom(t.flows.size()), flowTo(t.flows.size());
    std::vector<uint8_t> flowKind(t.flows.size());
    for (size_t i = 0; i < t.flows.size(); ++i) {
        flowFrom[i] = t.flows[i].from;
        flowTo[i] = t.flows[i].to;
        flowKind[i] = uint8_t(t.flows[i].kind);
    }
    add(blocks, FlowFrom, flowFrom);
    add(blocks, FlowTo, flowTo);
    add(blocks, FlowKind_, flowKind);

    Header h{};
    std::memcpy(h.magic, kBinaryTraceMagic.data(), sizeof h.magic);
    const bool shuffle = options.shuffle && options.compress && binaryTraceCompressionSupported();
    h.version = shuffle ? kBinaryTraceVersion : 2;
    h.blockCount = uint32_t(blocks.size());
    h.spanCount = n;
    h.flowCount = t.flows.size();
    h.stringCount = t.strings.size();

    std::vector<BlockEntry> directory(blocks.size());
    std::string out;
    size_t rawTotal = sizeof h + directory.size() * sizeof(BlockEntry);
    for (const auto& b : blocks)
        rawTotal += b.size + 8;
    out.reserve(options.compress && binaryTraceCompressionSupported() ? rawTotal / 3 : rawTotal);
    out.resize(sizeof h + directory.size() * sizeof(BlockEntry));
#ifdef STREAMSCOPE_HAVE_ZSTD
    // A checksum in every frame: a damaged compressed block is an error, not columns of wrong values.
    std::unique_ptr<ZSTD_CCtx, size_t (*)(ZSTD_CCtx*)> cctx(options.compress ? ZSTD_createCCtx() : nullptr,
                                                            ZSTD_freeCCtx);
    if (cctx) {
        ZSTD_CCtx_setParameter(cctx.get(), ZSTD_c_compressionLevel, kZstdLevel);
        ZSTD_CCtx_setParameter(cctx.get(), ZSTD_c_checksumFlag, 1);
    }
#endif
    for (size_t i = 0; i < blocks.size(); ++i) {
        const PendingBlock& b = blocks[i];
        padTo8(out);
        BlockEntry& e = directory[i];
        e.id = b.id;
        e.codec = uint32_t(Codec::Raw);
        e.offset = out.size();
        e.rawSize = b.size;
        e.storedSize = b.size;
#ifdef STREAMSCOPE_HAVE_ZSTD
        // Tiny blocks stay raw: a zstd frame costs more than it saves there.
        if (cctx && b.size >= 64) {
            const size_t bound = ZSTD_compressBound(b.size);
            out.resize(e.offset + bound);
            const size_t entry = shapeOf(b.id).elementSize;
            const size_t packed = shuffle && entry > 1
                ? compressShuffled(cctx.get(), out.data() + e.offset, bound, b.data, b.size, entry)
                : ZSTD_compress2(cctx.get(), out.data() + e.offset, bound, b.data, b.size);
            if (!ZSTD_isError(packed) && packed < b.size) {
                e.codec = uint32_t(shuffle && entry > 1 ? Codec::ZstdShuffled : Codec::Zstd);
                e.storedSize = packed;
                out.resize(e.offset + packed);
                continue;
            }
            out.resize(e.offset);
        }
#endif
        if (b.size)
            out.append(static_cast<const char*>(b.data), b.size);
    }
    std::memcpy(out.data(), &h, sizeof h);
    std::memcpy(out.data() + sizeof h, directory.data(), directory.size() * sizeof(BlockEntry));
    return out;
}

} // namespace streamscope
