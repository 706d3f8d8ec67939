// The binary native trace format, reading: parseBinaryTrace and loadBinaryTraceFile (docs/TRACE.md "Binary
// format"). Every offset, size and count is checked against the file before it is used or allocated, and every
// value against the same rules as the JSON reader's, so that a damaged file gives an error naming the block and the
// span, never a crash.
#include "trace_binary.h"
#include "trace_binary_layout.h"
#include "trace_json.h"
#include "trace_json_format.h"

#include "file_io.h"
#include "import_progress.h"
#include "mapped_file.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstring>
#include <future>
#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <sys/mman.h>

#ifdef STREAMSCOPE_HAVE_ZSTD
#include <zstd.h>
#endif

namespace streamscope {

namespace {

using namespace trace_binary;

struct ReadError {
    std::string where;
    std::string message;
};

[[noreturn]] void fail(std::string where, std::string message)
{
    throw ReadError{std::move(where), std::move(message)};
}

std::string blockWhere(uint32_t id)
{
    return "block \"" + std::string(shapeOf(id).name) + "\"";
}

std::string spanWhere(uint32_t id, size_t i)
{
    return blockWhere(id) + ", entry " + std::to_string(i);
}

// Unpacked bytes between progress reports (and the pages of a mapped file released behind them).
constexpr size_t kChunk = size_t(64) << 20;
// Bytes of a column unpacked at a time: small enough to stay in the cache between the column's growth and its
// writing.
constexpr size_t kPiece = size_t(1) << 20;

class BinaryReader {
public:
    BinaryReader(std::string_view bytes, bool mapped) : m_bytes(bytes), m_mapped(mapped) {}

    Trace read()
    {
        readHeader();
        readDirectory();
        Trace t = readMeta();
        readStrings(t);
        // The span times and the flows on a second thread, the other span columns on this one (disjoint members of
        // the trace): the 100 M-span synthetic trace opens in about half the time (docs/PERFORMANCE.md). Where this
        // thread fails, the other stops at its next step and its future waits for it.
        auto timesAndFlows = std::async(std::launch::async, [this, &t] {
            readTimes(t);
            readFlows(t);
        });
        try {
            readSpans(t);
        } catch (...) {
            m_stop = true;
            throw;
        }
        timesAndFlows.get();
        t.finalize();
        return t;
    }

private:
    void readHeader()
    {
        if (m_bytes.size() < kBinaryTraceMagic.size() || !looksLikeBinaryTrace(m_bytes))
            fail("header", "not a binary StreamScope trace: wrong magic number");
        if (m_bytes.size() < sizeof(Header))
            fail("header",
                 "truncated: " + std::to_string(m_bytes.size()) + " bytes, less than the "
                     + std::to_string(sizeof(Header)) + "-byte header");
        std::memcpy(&m_header, m_bytes.data(), sizeof m_header);
        if (m_header.version < kBinaryTraceOldestVersion || m_header.version > kBinaryTraceVersion)
            fail("header",
                 "unsupported version " + std::to_string(m_header.version) + " (this StreamScope reads versions "
                     + std::to_string(kBinaryTraceOldestVersion) + " to " + std::to_string(kBinaryTraceVersion) + ")");
        // Span and flow indices are 32-bit, and 0xffffffff means "no span".
        if (m_header.spanCount >= kNoSpan)
            fail("header", "span count " + std::to_string(m_header.spanCount) + " is more than a trace can hold");
        if (m_header.flowCount > std::numeric_limits<uint32_t>::max())
            fail("header", "flow count " + std::to_string(m_header.flowCount) + " is more than a trace can hold");
        if (m_header.stringCount > std::numeric_limits<uint32_t>::max())
            fail("header", "string count " + std::to_string(m_header.stringCount) + " is more than a trace can hold");
        if (m_header.blockCount == 0 || m_header.blockCount > kBlockIdLimit)
            fail("header",
                 "block count " + std::to_string(m_header.blockCount) + " is out of range (1 to "
                     + std::to_string(kBlockIdLimit) + ")");
    }

    void readDirectory()
    {
        const uint64_t dirEnd = sizeof(Header) + uint64_t(m_header.blockCount) * sizeof(BlockEntry);
        if (dirEnd > m_bytes.size())
            fail("block directory",
                 "truncated: the file has " + std::to_string(m_bytes.size()) + " bytes, the directory of "
                     + std::to_string(m_header.blockCount) + " blocks ends at byte " + std::to_string(dirEnd));
        uint64_t packedRaw = 0;
        for (uint32_t i = 0; i < m_header.blockCount; ++i) {
            BlockEntry e;
            std::memcpy(&e, m_bytes.data() + sizeof(Header) + i * sizeof(BlockEntry), sizeof e);
            const std::string where = "block directory, entry " + std::to_string(i);
            const BlockShape shape = shapeOf(e.id);
            if (shape.name.empty())
                fail(where, "unknown block id " + std::to_string(e.id));
            if (m_entries[e.id])
                fail(where, "a second " + blockWhere(e.id));
            if (!allowedIn(e.id, m_header.version))
                fail(where,
                     blockWhere(e.id) + " does not belong in a file of version " + std::to_string(m_header.version));
            if (e.codec != uint32_t(Codec::Raw) && e.codec != uint32_t(Codec::Zstd)
                && e.codec != uint32_t(Codec::ZstdShuffled))
                fail(where, "unknown codec " + std::to_string(e.codec) + " (0: raw, 1: zstd, 2: zstd shuffled)");
            if (e.codec == uint32_t(Codec::ZstdShuffled) && m_header.version < 3)
                fail(where,
                     "codec 2 (zstd shuffled) in a file of version " + std::to_string(m_header.version)
                         + " (from version 3 on)");
            if (e.offset < dirEnd || e.offset % 8 != 0)
                fail(where, "offset " + std::to_string(e.offset) + " is inside the header or not a multiple of 8");
            if (e.offset > m_bytes.size() || e.storedSize > m_bytes.size() - e.offset)
                fail(where,
                     "truncated: " + blockWhere(e.id) + " ends at byte "
                         + std::to_string(e.offset + std::min<uint64_t>(e.storedSize, m_bytes.size()))
                         + " of a file of " + std::to_string(m_bytes.size()) + " bytes");
            if (e.codec == uint32_t(Codec::Raw) && e.storedSize != e.rawSize)
                fail(where, "an uncompressed block whose stored and unpacked sizes differ");
            if (const std::optional<uint64_t> count = expectedCount(shape.count)) {
                if (e.rawSize / shape.elementSize != *count || e.rawSize % shape.elementSize != 0)
                    fail(where,
                         blockWhere(e.id) + " holds " + std::to_string(e.rawSize) + " bytes; " + std::to_string(*count)
                             + " entries of " + std::to_string(shape.elementSize) + " bytes are "
                             + std::to_string(*count * shape.elementSize));
            } else if (e.rawSize % shape.elementSize != 0) {
                fail(where,
                     blockWhere(e.id) + " holds " + std::to_string(e.rawSize) + " bytes, not a whole number of "
                         + std::to_string(shape.elementSize) + "-byte entries");
            }
            if (e.codec != uint32_t(Codec::Raw)) {
                // Each block alone, then the sum saturating: two blocks of 2^63 bytes must not add up to nothing.
                if (e.rawSize > kSmallTraceBytes && e.rawSize / kMaxExpansion > m_bytes.size())
                    fail(where,
                         "a compressed block that claims " + std::to_string(e.rawSize) + " bytes, more than "
                             + std::to_string(kMaxExpansion) + " times the file's size");
                packedRaw = e.rawSize > UINT64_MAX - packedRaw ? UINT64_MAX : packedRaw + e.rawSize;
            }
            m_entries[e.id] = e;
        }
        // Checked before anything is allocated: a few compressed bytes must not claim gigabytes.
        if (packedRaw > kSmallTraceBytes && packedRaw / kMaxExpansion > m_bytes.size())
            fail("block directory",
                 "the compressed blocks claim " + std::to_string(packedRaw) + " bytes, more than "
                     + std::to_string(kMaxExpansion) + " times the file's size");
        for (uint32_t id = 0; id < kBlockIdLimit; ++id)
            if (requiredIn(id, m_header.version) && !m_entries[id])
                fail("block directory", "missing " + blockWhere(id));
        if (bool(m_entries[SpanEventStartError]) != bool(m_entries[SpanEventEndError]))
            fail("block directory", "blocks \"span event_start_error\" and \"span event_end_error\" come together");
        if (bool(m_entries[SpanWait]) != bool(m_entries[SpanWaitFor]))
            fail("block directory", "blocks \"span wait\" and \"span wait_for\" come together");
        if (bool(m_entries[SpanDetailIndex]) != bool(m_entries[SpanDetailTable]))
            fail("block directory", "blocks \"span detail\" and \"span details\" come together");
        for (const auto& e : m_entries)
            if (e)
                m_totalRaw += e->rawSize;
    }

    std::optional<uint64_t> expectedCount(CountOf c) const
    {
        switch (c) {
        case CountOf::None: return std::nullopt;
        case CountOf::Spans: return m_header.spanCount;
        case CountOf::Flows: return m_header.flowCount;
        case CountOf::StringsPlusOne: return m_header.stringCount + 1;
        case CountOf::TimeBases: return 2 * ((m_header.spanCount + TimeColumn::kBlock - 1) / TimeColumn::kBlock);
        }
        return std::nullopt;
    }

    // Unpacks block `id` a piece of whole entries at a time: take(n) says where its next n bytes go (a column grows
    // by each piece just before it is written, so that its pages are not zero-filled first and written again).
    // Reports progress as it goes.
    template <typename Take>
    void unpack(uint32_t id, Take take)
    {
        const BlockEntry& e = *m_entries[id];
        const char* src = m_bytes.data() + e.offset;
        const size_t entry = shapeOf(id).elementSize;
        const size_t piece = std::max<size_t>(1, kPiece / entry) * entry;
        if (e.codec == uint32_t(Codec::Raw)) {
            for (size_t done = 0; done < e.rawSize;) {
                const size_t n = std::min<size_t>(piece, e.rawSize - done);
                std::memcpy(take(n), src + done, n);
                release(src + done, n);
                done += n;
                progress(n);
            }
            return;
        }
#ifdef STREAMSCOPE_HAVE_ZSTD
        const std::unique_ptr<ZSTD_DCtx, size_t (*)(ZSTD_DCtx*)> owner(ZSTD_createDCtx(), ZSTD_freeDCtx);
        ZSTD_DCtx* ctx = owner.get();
        if (!ctx)
            throw std::bad_alloc();
        ZSTD_inBuffer in{src, e.storedSize, 0};
        uint64_t unpacked = 0;
        size_t ret = 1;
        // The next `n` bytes of the frame into `where`; false where the frame ends early or is corrupt.
        const auto fill = [&](char* where, size_t n) {
            ZSTD_outBuffer outBuf{where, n, 0};
            while (outBuf.pos < n) {
                const size_t before = outBuf.pos, consumed = in.pos;
                ret = ZSTD_decompressStream(ctx, &outBuf, &in);
                if (ZSTD_isError(ret))
                    return false;
                unpacked += outBuf.pos - before;
                if (outBuf.pos < n && (ret == 0 || (outBuf.pos == before && in.pos == consumed)))
                    return false; // the frame or the input ends short of the directory's size
            }
            progress(n);
            return true;
        };
        bool whole = true;
        if (e.codec == uint32_t(Codec::ZstdShuffled)) {
            const size_t count = e.rawSize / entry;
            std::vector<char> group(std::min(count, kShuffleGroup) * entry);
            for (size_t first = 0; first < count && whole; first += kShuffleGroup) {
                const size_t k = std::min(kShuffleGroup, count - first);
                whole = fill(group.data(), k * entry);
                if (whole)
                    unshuffleBytes(group.data(), take(k * entry), k, entry);
            }
        } else {
            for (size_t done = 0; done < e.rawSize && whole;) {
                const size_t n = std::min<size_t>(piece, e.rawSize - done);
                // A frame that ended with the last piece ends short, as where it ends inside one.
                whole = (done == 0 || ret != 0) && fill(take(n), n);
                done += n;
            }
        }
        bool overflow = false;
        if (whole && ret != 0) {
            // The directory's size is reached: the frame must end here, with no byte more.
            char probe = 0;
            ZSTD_outBuffer extra{&probe, 1, 0};
            ret = ZSTD_decompressStream(ctx, &extra, &in);
            overflow = !ZSTD_isError(ret) && extra.pos > 0;
        }
        if (overflow)
            fail(blockWhere(id),
                 "corrupt zstd data: unpacks to more than the " + std::to_string(e.rawSize)
                     + " bytes the directory gives");
        if (ZSTD_isError(ret))
            fail(blockWhere(id), std::string("corrupt zstd data: ") + ZSTD_getErrorName(ret));
        if (ret != 0 || unpacked != e.rawSize)
            fail(blockWhere(id),
                 "corrupt zstd data: unpacks to " + std::to_string(unpacked) + " bytes, the directory gives "
                     + std::to_string(e.rawSize));
        if (in.pos != in.size)
            fail(blockWhere(id), "corrupt zstd data: bytes after the end of the compressed block");
        release(src, e.storedSize);
#else
        (void)src;
        (void)take;
        fail(blockWhere(id),
             "compressed with zstd, and this StreamScope was built without zstd (libzstd-dev): convert the trace "
             "with a build that has it (streamscope-cli convert IN -o OUT.json), or rebuild with libzstd-dev");
#endif
    }

    // A take() for unpack() into a buffer of the block's raw size.
    static auto into(char* out)
    {
        return [out](size_t n) mutable {
            char* at = out;
            out += n;
            return at;
        };
    }

    // Times are stored whole in the file and as offsets in memory (TimeColumn).
    void unpackInto(uint32_t id, TimeColumn& v)
    {
        std::vector<int64_t> whole;
        unpackInto(id, whole);
        v.assign(whole.begin(), whole.end());
    }

    template <typename T>
    void unpackInto(uint32_t id, std::vector<T>& v)
    {
        const BlockEntry& e = *m_entries[id];
        const size_t count = e.rawSize / sizeof(T);
        const char* src = m_bytes.data() + e.offset;
        v.clear();
        v.reserve(count); // on 2 MiB pages in the programs (core/model/large_pages.cpp)
        if (e.codec == uint32_t(Codec::Raw) && reinterpret_cast<uintptr_t>(src) % alignof(T) == 0) {
            // Appended from the file's bytes: no zero-filling of a column that is overwritten at once.
            const auto* first = reinterpret_cast<const T*>(src);
            const size_t step = std::max<size_t>(1, kChunk / sizeof(T));
            for (size_t done = 0; done < count;) {
                const size_t k = std::min(step, count - done);
                v.insert(v.end(), first + done, first + done + k);
                release(reinterpret_cast<const char*>(first + done), k * sizeof(T));
                done += k;
                progress(k * sizeof(T));
            }
            return;
        }
        static_assert(sizeof(T) <= 8 || sizeof(T) == sizeof(Dim3));
        if (count == 0)
            return; // an empty block is not unpacked (nor its stored bytes checked)
        unpack(id, [&v](size_t n) {
            const size_t at = v.size();
            v.resize(at + n / sizeof(T)); // within the reserve: no copy
            return reinterpret_cast<char*>(v.data() + at);
        });
    }

    // A mapped file's pages are dropped once copied, so that its bytes are not counted twice in memory.
    void release(const char* p, size_t n)
    {
        if (!m_mapped || n == 0)
            return;
        constexpr uintptr_t kPage = 4096;
        const uintptr_t begin = (reinterpret_cast<uintptr_t>(p) + kPage - 1) & ~(kPage - 1);
        const uintptr_t end = (reinterpret_cast<uintptr_t>(p) + n) & ~(kPage - 1);
        if (end > begin)
            ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
    }

    // Reported (and a cancel heeded) on the thread that reads; the second thread only counts, and stops once the
    // first has failed.
    void progress(size_t n)
    {
        const uint64_t done = m_done += n;
        if (m_stop || !import_detail::step(done, std::max<uint64_t>(m_totalRaw, 1)))
            fail({}, kImportCancelled);
    }

    Trace readMeta()
    {
        const BlockEntry& e = *m_entries[Meta];
        std::string text(e.rawSize, '\0');
        if (!text.empty())
            unpack(Meta, into(text.data()));
        auto parsed = parseTrace(text, "meta");
        if (!parsed)
            fail(blockWhere(Meta) + (parsed.error().path.empty() ? "" : " " + parsed.error().path),
                 parsed.error().message);
        Trace t = std::move(parsed).value();
        if (t.spanCount() != 0 || !t.strings.empty() || !t.flows.empty())
            fail(blockWhere(Meta), "carries spans, strings or flows: they belong in their blocks");
        // The legends: a kind byte is an index into them, as in the JSON format.
        const auto doc = trace_json::Json::parse(text, nullptr, false);
        for (const auto& name : doc.at("span_kinds"))
            m_spanKinds.push_back(*spanKindFromString(name.get<std::string>()));
        for (const auto& name : doc.at("flow_kinds"))
            m_flowKinds.push_back(*flowKindFromString(name.get<std::string>()));
        return t;
    }

    void readStrings(Trace& t)
    {
        std::vector<uint64_t> offsets;
        unpackInto(StringOffsets, offsets);
        std::string bytes(m_entries[StringBytes]->rawSize, '\0');
        if (!bytes.empty())
            unpack(StringBytes, into(bytes.data()));
        if (offsets.front() != 0)
            fail(spanWhere(StringOffsets, 0), "the first string must start at 0");
        for (size_t i = 1; i < offsets.size(); ++i)
            if (offsets[i] < offsets[i - 1] || offsets[i] > bytes.size())
                fail(spanWhere(StringOffsets, i),
                     "offset " + std::to_string(offsets[i]) + " is before the previous one or past the "
                         + std::to_string(bytes.size()) + " string bytes");
        if (offsets.back() != bytes.size())
            fail(spanWhere(StringOffsets, offsets.size() - 1), "the last string must end at the end of the bytes");
        t.strings.reserve(offsets.size() - 1);
        for (size_t i = 0; i + 1 < offsets.size(); ++i)
            t.strings.emplace_back(bytes, offsets[i], offsets[i + 1] - offsets[i]);
    }

    template <typename T>
    void checkIndex(uint32_t id, const std::vector<T>& v, size_t count, std::string_view what, std::string_view table)
    {
        for (size_t i = 0; i < v.size(); ++i)
            if (size_t(v[i]) >= count)
                fail(spanWhere(id, i),
                     std::string(what) + " " + std::to_string(uint64_t(v[i])) + " is out of range ("
                         + std::string(table) + " has " + std::to_string(count)
                         + (count == 1 ? " entry)" : " entries)"));
    }

    void readSpans(Trace& t)
    {
        auto& s = t.spans;
        const size_t n = m_header.spanCount;
        unpackInto(SpanTrack, s.track);
        checkIndex(SpanTrack, s.track, t.tracks.size(), "track", "tracks");
        unpackInto(SpanKind_, s.kind);
        {
            const auto* raw = reinterpret_cast<const uint8_t*>(s.kind.data());
            for (size_t i = 0; i < n; ++i)
                if (raw[i] >= m_spanKinds.size())
                    fail(spanWhere(SpanKind_, i),
                         "kind " + std::to_string(raw[i]) + " is out of range (span_kinds has "
                             + std::to_string(m_spanKinds.size()) + " entries)");
            for (auto& k : s.kind)
                k = m_spanKinds[size_t(k)];
        }
        unpackInto(SpanName, s.name);
        checkIndex(SpanName, s.name, t.strings.size(), "name", "strings");
        // Version 1 holds these for every span; version 2 only where some span has one (finalize() drops a
        // column of defaults either way).
        if (m_entries[SpanThread])
            unpackInto(SpanThread, s.thread);
        if (m_entries[SpanOp])
            unpackInto(SpanOp, s.op);
        if (m_entries[SpanIteration])
            unpackInto(SpanIteration, s.iteration);
        if (m_header.version == 1) {
            // Read in full, then kept as a table of the distinct details (SpanColumns::detail).
            std::vector<int64_t> bytes;
            std::vector<Dim3> grid, block;
            unpackInto(SpanBytes, bytes);
            unpackInto(SpanGrid, grid);
            unpackInto(SpanBlock, block);
            s.setDetails(bytes, grid, block);
        } else if (m_entries[SpanDetailIndex]) {
            readDetails(s);
        }
        if (m_entries[SpanTiming_]) {
            unpackInto(SpanTiming_, s.timing);
            const auto* raw = reinterpret_cast<const uint8_t*>(s.timing.data());
            for (size_t i = 0; i < n; ++i)
                if (raw[i] > uint8_t(SpanTiming::Uncertain))
                    fail(spanWhere(SpanTiming_, i),
                         "timing " + std::to_string(raw[i]) + " is not 0 (measured), 1 (corrected) or 2 (uncertain)");
        }
        if (m_entries[SpanEventStartError]) {
            unpackInto(SpanEventStartError, s.eventStartError);
            unpackInto(SpanEventEndError, s.eventEndError);
        }
        if (m_entries[SpanWait]) {
            unpackInto(SpanWait, s.wait);
            const auto* raw = reinterpret_cast<const uint8_t*>(s.wait.data());
            for (size_t i = 0; i < n; ++i)
                if (raw[i] >= kWaitCauseCount)
                    fail(spanWhere(SpanWait, i),
                         "wait " + std::to_string(raw[i]) + " is not a wait cause (0 to "
                             + std::to_string(kWaitCauseCount - 1) + ")");
            unpackInto(SpanWaitFor, s.waitFor);
            for (size_t i = 0; i < n; ++i)
                if (s.waitFor[i] != kNoSpan && s.waitFor[i] >= n)
                    fail(spanWhere(SpanWaitFor, i),
                         "span " + std::to_string(s.waitFor[i]) + " is out of range (spans has " + std::to_string(n)
                             + " entries)");
        }
        if (m_entries[SpanTask]) {
            unpackInto(SpanTask, s.task);
            for (size_t i = 0; i < n; ++i)
                if (s.task[i] < 0)
                    fail(spanWhere(SpanTask, i),
                         "task " + std::to_string(s.task[i]) + " is not a repeat index (0 or more)");
        }
    }

    // Version 2: the table of distinct details and each span's index into it, as SpanColumns holds them.
    void readDetails(SpanColumns& s)
    {
        std::vector<uint8_t> table;
        unpackInto(SpanDetailTable, table);
        const size_t count = table.size() / 32;
        if (count == 0 || !std::all_of(table.begin(), table.begin() + 32, [](uint8_t b) { return b == 0; }))
            fail(spanWhere(SpanDetailTable, 0), "the first detail must be the default (no bytes, grid or block)");
        s.details.resize(count);
        for (size_t i = 0; i < count; ++i) {
            SpanDetail& d = s.details[i];
            uint32_t dims[6];
            std::memcpy(&d.bytes, table.data() + 32 * i, 8);
            std::memcpy(dims, table.data() + 32 * i + 8, sizeof dims);
            d.grid = {dims[0], dims[1], dims[2]};
            d.block = {dims[3], dims[4], dims[5]};
        }
        unpackInto(SpanDetailIndex, s.detail);
        checkIndex(SpanDetailIndex, s.detail, count, "detail", "span details");
    }

    // Version 2: a time column as TimeColumn holds it, checked as it is taken.
    void readPackedTimes(uint32_t offsetsId, TimeColumn& column)
    {
        std::vector<uint32_t> offsets;
        std::vector<int64_t> bases, pairs;
        unpackInto(offsetsId, offsets);
        unpackInto(offsetsId + 1, bases);
        if (m_entries[offsetsId + 2])
            unpackInto(offsetsId + 2, pairs);
        std::vector<std::pair<uint32_t, int64_t>> exceptions(pairs.size() / 2);
        for (size_t i = 0; i < exceptions.size(); ++i) {
            if (pairs[2 * i] < 0 || uint64_t(pairs[2 * i]) >= offsets.size())
                fail(spanWhere(offsetsId + 2, i),
                     "span " + std::to_string(pairs[2 * i]) + " is out of range (spans has "
                         + std::to_string(offsets.size()) + " entries)");
            exceptions[i] = {uint32_t(pairs[2 * i]), pairs[2 * i + 1]};
        }
        std::vector<int64_t>().swap(pairs);
        if (const auto error = column.adopt(std::move(offsets), std::move(bases), std::move(exceptions))) {
            using Where = TimeColumn::AdoptError::Where;
            const uint32_t id = error->where == Where::Entry ? offsetsId
                : error->where == Where::Base                ? offsetsId + 1
                                                             : offsetsId + 2;
            fail(spanWhere(id, error->index), error->message);
        }
    }

    // The span times (on the second thread: only Trace::spans.start and .end are written).
    void readTimes(Trace& t)
    {
        auto& s = t.spans;
        if (m_header.version >= 2) {
            readPackedTimes(SpanStartOffsets, s.start);
            readPackedTimes(SpanEndOffsets, s.end);
            // End before start, a chunk of both columns at a time.
            constexpr size_t kStep = 4096;
            std::vector<int64_t> start(kStep), end(kStep);
            for (size_t first = 0; first < s.end.size(); first += kStep) {
                const size_t last = std::min(s.end.size(), first + kStep);
                s.start.copyTo(first, last, start.data());
                s.end.copyTo(first, last, end.data());
                for (size_t i = 0; i < last - first; ++i)
                    if (end[i] < start[i])
                        fail(spanWhere(SpanEndOffsets, first + i),
                             "end before start (" + std::to_string(end[i]) + " < " + std::to_string(start[i]) + ")");
            }
            return;
        }
        unpackInto(SpanStart, s.start);
        std::vector<int64_t> end;
        unpackInto(SpanEnd, end);
        const TimeColumn::View start = s.start.view();
        for (size_t i = 0; i < end.size(); ++i)
            if (end[i] < start[i])
                fail(spanWhere(SpanEnd, i),
                     "end before start (" + std::to_string(end[i]) + " < " + std::to_string(start[i]) + ")");
        s.end.assign(end.begin(), end.end());
    }

    // The flows (on the second thread: only Trace::flows is written).
    void readFlows(Trace& t)
    {
        const size_t n = m_header.flowCount;
        std::vector<uint32_t> from, to;
        std::vector<uint8_t> kind;
        unpackInto(FlowFrom, from);
        checkIndex(FlowFrom, from, size_t(m_header.spanCount), "span", "spans");
        unpackInto(FlowTo, to);
        checkIndex(FlowTo, to, size_t(m_header.spanCount), "span", "spans");
        unpackInto(FlowKind_, kind);
        checkIndex(FlowKind_, kind, m_flowKinds.size(), "kind", "flow_kinds");
        t.flows.reserve(n);
        for (size_t i = 0; i < n; ++i)
            t.flows.push_back({from[i], to[i], m_flowKinds[kind[i]]});
    }

    std::string_view m_bytes;
    bool m_mapped;
    Header m_header{};
    std::optional<BlockEntry> m_entries[kBlockIdLimit];
    uint64_t m_totalRaw = 0;
    std::atomic<uint64_t> m_done = 0;
    std::atomic<bool> m_stop = false;
    std::vector<SpanKind> m_spanKinds;
    std::vector<FlowKind> m_flowKinds;
};

Result<Trace> readBinary(std::string_view bytes, const std::string& file, bool mapped)
{
    if constexpr (std::endian::native != std::endian::little)
        return Error{file, {}, "binary traces are read on little-endian machines only: use the JSON format"};
    try {
        return BinaryReader(bytes, mapped).read();
    } catch (const ReadError& e) {
        return Error{file, e.where, e.message};
    } catch (const std::bad_alloc&) {
        return Error{file, {}, "out of memory while reading the trace"};
    } catch (const std::length_error&) {
        return Error{file, {}, "a block too large for this machine's memory"};
    }
}

} // namespace

Result<Trace> parseBinaryTrace(std::string_view bytes, const std::string& file)
{
    return readBinary(bytes, file, false);
}

Result<Trace> loadBinaryTraceFile(const std::string& path)
{
    OpenFile file;
    if (Status opened = openForReading(path, file); !opened)
        return opened.error();
    MappedFile map;
    if (S_ISREG(file.status.st_mode) && file.status.st_size > 0 && map.map(file.fd, size_t(file.status.st_size))) {
        auto trace = readBinary({map.data(), map.size()}, path, true);
        // Cut short while it was read: what was read from there on were zeros, whether or not they made sense.
        if (map.changed())
            return Error{path, {}, fileChangedWhileRead()};
        return trace;
    }
    // Not a regular file (a pipe), or the mapping failed: read it whole.
    auto bytes = readTextFile(path);
    if (!bytes)
        return bytes.error();
    return readBinary(*bytes, path, false);
}

} // namespace streamscope
