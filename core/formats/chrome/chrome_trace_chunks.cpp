// Parsing a Chrome trace on several threads: the workers (chrome_trace_chunks.h).
#include "chrome_trace_chunks.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <unistd.h>

namespace streamscope::chrome::detail {

namespace {

// An event that runs past its chunk is parsed to its end from this many bytes more; a longer one is left to the
// reader.
constexpr size_t kChunkOverlap = size_t(64) << 10;

// A chunk parsed ahead takes about three times its bytes (its bytes and its events' fields: PreEvent is 480 bytes,
// and an event of the bench_import file about 230), and the chunks alive at once (those parsed ahead and the one
// given back for reuse) take at most 1/64 of the input: a Chrome trace takes a tenth of its file's size in memory
// or more (the bench_import file 1/9.4), so they add at most a sixth of the trace to the peak. Chunks of 1 MiB:
// small beside the trace, large enough that handing them over costs nothing; smaller in a file under 768 MiB, so
// that three of them fit that share (at 1 MiB, a 306 MiB file's window of two and the chunk given back took 1/32).
constexpr uint64_t kChunkCost = ChunkPipeline::kChunkCost;
constexpr uint64_t kWindowShare = 64;
constexpr size_t kDefaultChunkBytes = size_t(1) << 20;
constexpr size_t kMinChunkBytes = size_t(64) << 10;
// Below this the threads cost more than they save.
constexpr uint64_t kMinThreadedBytes = uint64_t(16) << 20;
constexpr unsigned kMaxThreads = 8;
// Threads by default only where there are this many cores: the reader's own work (the spans, flows and names, in
// file order) is about three quarters of the whole even with the events parsed elsewhere (measured on the 2-core VM
// of docs/PERFORMANCE.md), so two cores gain little, and under load the threads only wait on each other.
constexpr unsigned kMinCoresForThreads = 4;

// The events of one chunk, parsed from the first '{' that opens a line.
class ChunkParser : EventFields {
public:
    explicit ChunkParser(Input& in) : EventFields(in) { m_keepScratch = true; }

    void parse(Chunk& chunk, const char* first)
    {
        m_p = first;
        for (;;) {
            const char* start = m_p;
            const uint64_t at = m_in.offset(start);
            if (at >= chunk.end)
                break;
            PreEvent pre;
            pre.start = at;
            try {
                fields(pre.ev);
            } catch (const NeedMore&) {
                break; // runs past the bytes read: the reader parses it
            } catch (const Fail& f) {
                chunk.failed = true;
                chunk.failStart = at;
                chunk.failOffset = f.offset;
                chunk.failMessage = f.message;
                break;
            }
            pre.end = m_in.offset(m_p);
            chunk.events.push_back(pre);
            try { // the next event, after a ','; anything else ends the chunk's run
                skipWs();
                if (*m_p != ',')
                    break;
                ++m_p;
                skipWs();
                if (*m_p != '{')
                    break;
            } catch (const NeedMore&) {
                break;
            } catch (const Fail&) {
                break;
            }
        }
        chunk.scratch = std::move(m_scratch);
    }
};

// The first '{' in [p, end) that follows a line break and white space; nullptr if none.
const char* lineStartingBrace(const char* p, const char* end, const char* limit)
{
    while (p < end) {
        const auto* nl = static_cast<const char*>(std::memchr(p, '\n', size_t(end - p)));
        if (!nl)
            return nullptr;
        const char* q = nl + 1;
        while (q < limit && (*q == ' ' || *q == '\t' || *q == '\r' || *q == '\n'))
            ++q;
        if (q < end && *q == '{')
            return q;
        p = q;
    }
    return nullptr;
}

bool preadFully(int fd, char* buf, size_t size, uint64_t offset)
{
    while (size > 0) {
        const ssize_t r = ::pread(fd, buf, size, off_t(offset));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return false;
        buf += r;
        size -= size_t(r);
        offset += uint64_t(r);
    }
    return true;
}

} // namespace

ChunkPlan planChunks(uint64_t size, const ReadOptions& options)
{
    ChunkPlan plan;
    unsigned threads = options.threads;
    if (threads == 0) {
        const unsigned cores = std::thread::hardware_concurrency();
        threads = cores >= kMinCoresForThreads ? std::min(cores, kMaxThreads) : 1;
    }
    plan.chunkBytes = options.chunkBytes
        ? options.chunkBytes
        : size_t(std::clamp<uint64_t>(size / (kChunkCost * kWindowShare * 4), kMinChunkBytes, kDefaultChunkBytes));
    const uint64_t least = options.chunkBytes ? 2 * uint64_t(plan.chunkBytes) : kMinThreadedBytes;
    if (threads > 1 && size >= least)
        plan.workers = threads - 1; // the reader's thread is the last one
    return plan;
}

ChunkPipeline::ChunkPipeline(int fd, std::string_view text, uint64_t size, const ChunkPlan& plan)
    : m_fd(fd), m_text(text), m_size(size), m_chunkBytes(std::max<size_t>(plan.chunkBytes, 1)),
      m_count(size_t((size + m_chunkBytes - 1) / m_chunkBytes)), m_window(windowFor(size, plan)), m_chunks(m_count),
      m_done(m_count, 0)
{
    try {
        for (unsigned i = 0; i < plan.workers; ++i)
            m_threads.emplace_back([this] { work(); });
    } catch (...) { // no threads to be had: the reader does with those there are, or alone
    }
}

size_t ChunkPipeline::windowFor(uint64_t size, const ChunkPlan& plan)
{
    // Whole shares of chunks in 1/64 of the input, less the one let go; two at least, and no more than the workers
    // can keep busy.
    const uint64_t chunk = std::max<uint64_t>(plan.chunkBytes, 1);
    return std::clamp<size_t>(size_t(size / (chunk * kChunkCost * kWindowShare)), 3, plan.workers + 3) - 1;
}

ChunkPipeline::~ChunkPipeline()
{
    {
        std::lock_guard lock(m_mutex);
        m_stop = true;
    }
    m_wake.notify_all();
    for (auto& t : m_threads)
        t.join();
}

void ChunkPipeline::work()
{
    for (;;) {
        size_t index;
        {
            std::unique_lock lock(m_mutex);
            m_wake.wait(lock, [this] { return m_stop || m_taken >= m_count || m_taken < m_current + m_window; });
            if (m_stop || m_taken >= m_count)
                return;
            index = m_taken++;
        }
        std::unique_ptr<Chunk> chunk;
        {
            std::lock_guard lock(m_mutex);
            if (!m_free.empty()) {
                chunk = std::move(m_free.back());
                m_free.pop_back();
            }
        }
        try {
            if (!chunk)
                chunk = std::make_unique<Chunk>();
            parse(index, *chunk);
        } catch (...) { // out of memory: the reader parses this chunk itself
            chunk.reset();
        }
        {
            std::lock_guard lock(m_mutex);
            if (index >= m_current)
                m_chunks[index] = std::move(chunk);
            m_done[index] = 1;
        }
        m_ready.notify_all();
    }
}

void ChunkPipeline::parse(size_t index, Chunk& chunk)
{
    chunk.begin = uint64_t(index) * m_chunkBytes;
    chunk.end = std::min<uint64_t>(m_size, chunk.begin + m_chunkBytes);
    const uint64_t readEnd = std::min<uint64_t>(m_size, chunk.end + kChunkOverlap);
    std::string_view bytes;
    if (m_fd >= 0) {
        chunk.bytes.resize(size_t(readEnd - chunk.begin));
        if (!preadFully(m_fd, chunk.bytes.data(), chunk.bytes.size(), chunk.begin))
            return; // the reader reads it, and says what is wrong
        bytes = std::string_view(chunk.bytes.data(), chunk.bytes.size());
    } else {
        bytes = m_text.substr(size_t(chunk.begin), size_t(readEnd - chunk.begin));
    }
    const char* first =
        lineStartingBrace(bytes.data(), bytes.data() + (chunk.end - chunk.begin), bytes.data() + bytes.size());
    if (!first)
        return;
    Input in(bytes, chunk.begin, readEnd == m_size);
    ChunkParser parser(in);
    chunk.events.reserve(size_t(chunk.end - chunk.begin) / 128);
    parser.parse(chunk, first);
}

const PreEvent* ChunkPipeline::at(uint64_t offset)
{
    for (;;) {
        if (m_current >= m_count)
            return nullptr;
        const uint64_t begin = uint64_t(m_current) * m_chunkBytes;
        const uint64_t end = std::min<uint64_t>(m_size, begin + m_chunkBytes);
        if (offset < begin)
            return nullptr;
        if (offset >= end) { // past this chunk: let it go
            std::unique_ptr<Chunk> old;
            {
                std::lock_guard lock(m_mutex);
                old = std::move(m_chunks[m_current]);
                ++m_current;
                m_next = 0;
            }
            if (old) { // kept for another chunk: its memory is not given back and faulted in again
                old->events.clear();
                old->scratch.clear();
                old->failed = false;
                std::lock_guard lock(m_mutex);
                m_free.push_back(std::move(old));
            }
            m_wake.notify_all();
            continue;
        }
        if (m_threads.empty())
            return nullptr;
        Chunk* chunk;
        {
            std::unique_lock lock(m_mutex);
            m_ready.wait(lock, [this] { return m_done[m_current] != 0; });
            chunk = m_chunks[m_current].get();
        }
        if (!chunk)
            return nullptr;
        auto& events = chunk->events;
        while (m_next < events.size() && events[m_next].start < offset)
            ++m_next;
        if (m_next < events.size() && events[m_next].start == offset)
            return &events[m_next];
        if (chunk->failed && chunk->failStart == offset)
            throw Fail{chunk->failOffset, chunk->failMessage};
        return nullptr;
    }
}

} // namespace streamscope::chrome::detail
