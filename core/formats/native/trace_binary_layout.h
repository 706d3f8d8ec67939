// What the binary trace writer and reader share (trace_binary_writer.cpp, trace_binary_reader.cpp): the header,
// the block directory and the block ids. Internal to core; docs/TRACE.md "Binary format" is the reference.
#pragma once

#include "trace.h"

#include <cstdint>
#include <cstring>
#include <string_view>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace streamscope::trace_binary {

// Every number is little-endian; the column blocks are the in-memory arrays of a little-endian machine.
struct Header {
    char magic[8];
    uint32_t version;
    uint32_t blockCount;
    uint64_t spanCount;
    uint64_t flowCount;
    uint64_t stringCount;
    uint64_t reserved; // 0
};
static_assert(sizeof(Header) == 48);

// ZstdShuffled (version 3): the block's entries in groups of kShuffleGroup (the last one shorter), each group's bytes
// by their place in the entry — byte 0 of every entry, then byte 1, … — compressed with zstd as one frame. The high
// bytes of offsets, indices and counts repeat from entry to entry; grouped, zstd packs them far better (a 10 M-span
// trace: 84 MB as version 2, 53 MB shuffled).
enum class Codec : uint32_t { Raw = 0, Zstd = 1, ZstdShuffled = 2 };
inline constexpr size_t kShuffleGroup = 65536;

// One group of `count` entries of `size` bytes: to planes (shuffle) and back (unshuffle). Back, entries of 4 and 8
// bytes (nearly every block) go 16 entries at a time with SSE2 (part of x86-64): opening a 1 GB trace spent 30 % of its
// time in the byte-at-a-time unshuffle (docs/PERFORMANCE.md).
inline void shuffleBytes(const char* in, char* out, size_t count, size_t size)
{
    for (size_t i = 0; i < count; ++i)
        for (size_t b = 0; b < size; ++b)
            out[b * count + i] = in[i * size + b];
}
inline void unshuffleBytesPlain(const char* in, char* out, size_t count, size_t size, size_t from = 0)
{
    for (size_t b = 0; b < size; ++b)
        for (size_t i = from; i < count; ++i)
            out[i * size + b] = in[b * count + i];
}

#if defined(__SSE2__)
namespace simd {
inline __m128i load(const char* p)
{
    return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
}
inline void store(char* p, __m128i v)
{
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p), v);
}
// Sixteen entries of 4 bytes from four planes.
inline void unshuffle4(const char* in, char* out, size_t count, size_t i)
{
    const __m128i p0 = load(in + i), p1 = load(in + count + i), p2 = load(in + 2 * count + i),
                  p3 = load(in + 3 * count + i);
    const __m128i lo01 = _mm_unpacklo_epi8(p0, p1), hi01 = _mm_unpackhi_epi8(p0, p1);
    const __m128i lo23 = _mm_unpacklo_epi8(p2, p3), hi23 = _mm_unpackhi_epi8(p2, p3);
    char* o = out + 4 * i;
    store(o, _mm_unpacklo_epi16(lo01, lo23));
    store(o + 16, _mm_unpackhi_epi16(lo01, lo23));
    store(o + 32, _mm_unpacklo_epi16(hi01, hi23));
    store(o + 48, _mm_unpackhi_epi16(hi01, hi23));
}
// Sixteen entries of 8 bytes from eight planes.
inline void unshuffle8(const char* in, char* out, size_t count, size_t i)
{
    __m128i p[8];
    for (size_t b = 0; b < 8; ++b)
        p[b] = load(in + b * count + i);
    // Bytes in pairs, pairs in fours, fours in eights: entries 0 – 3, 4 – 7, 8 – 11, 12 – 15 of bytes 0 – 3 in
    // q[0][0 .. 3] and of bytes 4 – 7 in q[1][0 .. 3].
    __m128i q[2][4];
    for (size_t h = 0; h < 2; ++h) {
        const __m128i lo01 = _mm_unpacklo_epi8(p[4 * h], p[4 * h + 1]),
                      hi01 = _mm_unpackhi_epi8(p[4 * h], p[4 * h + 1]);
        const __m128i lo23 = _mm_unpacklo_epi8(p[4 * h + 2], p[4 * h + 3]),
                      hi23 = _mm_unpackhi_epi8(p[4 * h + 2], p[4 * h + 3]);
        q[h][0] = _mm_unpacklo_epi16(lo01, lo23);
        q[h][1] = _mm_unpackhi_epi16(lo01, lo23);
        q[h][2] = _mm_unpacklo_epi16(hi01, hi23);
        q[h][3] = _mm_unpackhi_epi16(hi01, hi23);
    }
    char* o = out + 8 * i;
    for (size_t k = 0; k < 4; ++k) {
        store(o + 32 * k, _mm_unpacklo_epi32(q[0][k], q[1][k]));
        store(o + 32 * k + 16, _mm_unpackhi_epi32(q[0][k], q[1][k]));
    }
}
} // namespace simd
#endif

inline void unshuffleBytes(const char* in, char* out, size_t count, size_t size)
{
    size_t done = 0;
#if defined(__SSE2__)
    if (size == 4 || size == 8) {
        for (; done + 16 <= count; done += 16)
            size == 4 ? simd::unshuffle4(in, out, count, done) : simd::unshuffle8(in, out, count, done);
    }
#endif
    unshuffleBytesPlain(in, out, count, size, done);
}

struct BlockEntry {
    uint32_t id;
    uint32_t codec;
    uint64_t offset;     // from the start of the file, a multiple of 8
    uint64_t storedSize; // bytes in the file
    uint64_t rawSize;    // bytes once unpacked
};
static_assert(sizeof(BlockEntry) == 32);

enum BlockId : uint32_t {
    Meta = 1,          // a native JSON trace (docs/TRACE.md) with the run info, legends and tracks, and no spans
    StringOffsets = 2, // u64 x (strings + 1): string i is bytes [offsets[i], offsets[i+1]) of StringBytes
    StringBytes = 3,
    SpanTrack = 16,      // u32 per span
    SpanKind_,           // u8: index into the meta's span_kinds
    SpanName,            // u32: index into the strings
    SpanStart,           // i64 ns
    SpanEnd,             // i64 ns
    SpanThread,          // i32
    SpanOp,              // i32
    SpanIteration,       // i32
    SpanBytes,           // i64
    SpanGrid,            // 3 x u32
    SpanBlock,           // 3 x u32
    SpanTiming_,         // u8, optional
    SpanEventStartError, // i64, optional, with SpanEventEndError
    SpanEventEndError,
    SpanWait,    // u8, optional, with SpanWaitFor
    SpanWaitFor, // u32, 0xffffffff: none
    SpanTask,    // i32, optional
    // Version 2: the details as the trace holds them, a table and an index per span, instead of 24 – 26.
    SpanDetailIndex, // u32: index into SpanDetailTable, optional (absent: every span has the default)
    SpanDetailTable, // 32 bytes per distinct detail: i64 bytes, 3 x u32 grid, 3 x u32 block; entry 0 the default
    // Version 2: the times as TimeColumn holds them (time_column.h), instead of 19 and 20: a u32 offset per span,
    // two i64 bases per block of 256 spans, and the entries that fit neither as (i64 index, i64 value) pairs.
    SpanStartOffsets = 36,
    SpanStartBases,
    SpanStartExceptions,
    SpanEndOffsets,
    SpanEndBases,
    SpanEndExceptions,
    FlowFrom = 48, // u32 per flow
    FlowTo,        // u32
    FlowKind_,     // u8: index into the meta's flow_kinds
};

// Which count a block's length follows and the bytes per entry: the reader checks rawSize against them before it
// allocates anything.
// TimeBases: two per block of TimeColumn::kBlock spans. A block of CountOf::None holds whole entries of its size.
enum class CountOf { None, Spans, Flows, StringsPlusOne, TimeBases };
struct BlockShape {
    std::string_view name;
    CountOf count;
    uint32_t elementSize;
    bool required; // in version 1 (requiredIn gives both versions)
};

inline BlockShape shapeOf(uint32_t id)
{
    switch (id) {
    case Meta: return {"meta", CountOf::None, 1, true};
    case StringOffsets: return {"string_offsets", CountOf::StringsPlusOne, 8, true};
    case StringBytes: return {"string_bytes", CountOf::None, 1, true};
    case SpanTrack: return {"span track", CountOf::Spans, 4, true};
    case SpanKind_: return {"span kind", CountOf::Spans, 1, true};
    case SpanName: return {"span name", CountOf::Spans, 4, true};
    case SpanStart: return {"span start", CountOf::Spans, 8, true};
    case SpanEnd: return {"span end", CountOf::Spans, 8, true};
    case SpanThread: return {"span thread", CountOf::Spans, 4, true};
    case SpanOp: return {"span op", CountOf::Spans, 4, true};
    case SpanIteration: return {"span iteration", CountOf::Spans, 4, true};
    case SpanBytes: return {"span bytes", CountOf::Spans, 8, true};
    case SpanGrid: return {"span grid", CountOf::Spans, 12, true};
    case SpanBlock: return {"span block", CountOf::Spans, 12, true};
    case SpanTiming_: return {"span timing", CountOf::Spans, 1, false};
    case SpanEventStartError: return {"span event_start_error", CountOf::Spans, 8, false};
    case SpanEventEndError: return {"span event_end_error", CountOf::Spans, 8, false};
    case SpanWait: return {"span wait", CountOf::Spans, 1, false};
    case SpanWaitFor: return {"span wait_for", CountOf::Spans, 4, false};
    case SpanTask: return {"span task", CountOf::Spans, 4, false};
    case SpanDetailIndex: return {"span detail", CountOf::Spans, 4, false};
    case SpanDetailTable: return {"span details", CountOf::None, 32, false};
    case SpanStartOffsets: return {"span start offsets", CountOf::Spans, 4, false};
    case SpanStartBases: return {"span start bases", CountOf::TimeBases, 8, false};
    case SpanStartExceptions: return {"span start exceptions", CountOf::None, 16, false};
    case SpanEndOffsets: return {"span end offsets", CountOf::Spans, 4, false};
    case SpanEndBases: return {"span end bases", CountOf::TimeBases, 8, false};
    case SpanEndExceptions: return {"span end exceptions", CountOf::None, 16, false};
    case FlowFrom: return {"flow from", CountOf::Flows, 4, true};
    case FlowTo: return {"flow to", CountOf::Flows, 4, true};
    case FlowKind_: return {"flow kind", CountOf::Flows, 1, true};
    default: return {{}, CountOf::None, 0, false};
    }
}

inline constexpr uint32_t kBlockIdLimit = 64; // ids are below this

// Which blocks a file of each version must hold, and which it may. Version 1 holds the times whole (19, 20) and
// every span's thread, op, iteration, bytes, grid and block (21 – 26); version 2 the times as offsets from bases
// (36 – 41) and the details as a table with an index (33, 34), and thread, op and iteration only where some span
// has one.
inline bool requiredIn(uint32_t id, uint32_t version)
{
    if (version == 1)
        return shapeOf(id).required;
    switch (id) {
    case SpanStart:
    case SpanEnd:
    case SpanThread:
    case SpanOp:
    case SpanIteration:
    case SpanBytes:
    case SpanGrid:
    case SpanBlock: return false;
    case SpanStartOffsets:
    case SpanStartBases:
    case SpanEndOffsets:
    case SpanEndBases: return true;
    default: return shapeOf(id).required;
    }
}
inline bool allowedIn(uint32_t id, uint32_t version)
{
    if (version == 1)
        return id < SpanDetailIndex || id >= FlowFrom;
    switch (id) {
    case SpanStart:
    case SpanEnd:
    case SpanBytes:
    case SpanGrid:
    case SpanBlock: return false;
    default: return true;
    }
}

// Blocks whose stored bytes unpack to more than this many times the file's size (and more than kSmallTraceBytes in
// all) are refused before anything is allocated: a few kilobytes must not claim gigabytes. zstd packs the lesson
// traces and bench_import's 1 GB trace about 6:1 in all (docs/PERFORMANCE.md), far below the limit.
inline constexpr uint64_t kMaxExpansion = 256;
inline constexpr uint64_t kSmallTraceBytes = uint64_t(256) << 20;

} // namespace streamscope::trace_binary
