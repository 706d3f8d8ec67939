// Parsing a Chrome trace on several threads (chrome_trace_reader.h). Workers cut the input into chunks and parse the
// events of each ahead of the reader into their fields (EventFields); the reader, still reading every byte in file
// order on its own thread, takes an event's fields from them wherever an event it reaches starts at the very byte
// where a worker parsed one, and parses it itself everywhere else. The fields of an event depend on its bytes alone,
// so the result is the single-threaded one, byte for byte, whatever the workers guessed; the interning, tracks,
// spans and flows stay on the reader's thread, in file order.
//
// Where events start is a guess: a '{' that opens a line. A raw line break is never inside a JSON string (it must
// be escaped), so this is outside every string; it may still be a nested object of a pretty-printed event, which
// the reader then never lands on. Files without line breaks between events are parsed on the reader's thread
// alone. Internal to core.
#pragma once

#include "chrome_trace.h"
#include "chrome_trace_reader.h"

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace streamscope::chrome::detail {

// One event parsed by a worker: its fields and where its bytes are in the input.
struct PreEvent {
    uint64_t start = 0; // its '{'
    uint64_t end = 0;   // just past its '}'
    Event ev;           // views into its chunk's bytes and unescaped strings
};

struct Chunk {
    uint64_t begin = 0, end = 0;     // it holds the parsed events that start in [begin, end)
    std::vector<char> bytes;         // read from the file (empty over a text in memory)
    std::vector<PreEvent> events;    // in file order
    std::deque<std::string> scratch; // the unescaped strings its events point to
    bool failed = false;             // the event after the last one is not valid: parsing it fails ...
    uint64_t failStart = 0;          // ... at the event that starts here
    uint64_t failOffset = 0;         // ... with this error
    std::string failMessage;
};

// How many threads and how large a chunk, for an input of `size` bytes: workers (0: none, parse on one thread).
struct ChunkPlan {
    unsigned workers = 0;
    size_t chunkBytes = 0;
};
ChunkPlan planChunks(uint64_t size, const ReadOptions& options);

class ChunkPipeline {
public:
    // Over the file `fd` (read with pread, beside the reader's reads) or, where fd < 0, over `text`.
    ChunkPipeline(int fd, std::string_view text, uint64_t size, const ChunkPlan& plan);
    ~ChunkPipeline();
    ChunkPipeline(const ChunkPipeline&) = delete;
    ChunkPipeline& operator=(const ChunkPipeline&) = delete;

    // The event a worker parsed that starts at byte `offset`, or nullptr: parse it yourself. Offsets must not go
    // back; chunks before `offset` are let go. Throws the worker's Fail where the event there is not valid.
    const PreEvent* at(uint64_t offset);

    // How many chunks the workers parse ahead of the reader at most, for an input of `size` bytes: with the chunk
    // let go for reuse, the chunks alive at once take at most 1/64 of the input (chrome_trace_chunks.cpp).
    static size_t windowFor(uint64_t size, const ChunkPlan& plan);
    // Bytes of memory a chunk takes, its bytes and its parsed events, per byte of it (about).
    static constexpr uint64_t kChunkCost = 3;

private:
    void work();
    void parse(size_t index, Chunk& chunk);

    int m_fd;
    std::string_view m_text;
    uint64_t m_size;
    size_t m_chunkBytes;
    size_t m_count;  // chunks
    size_t m_window; // chunks parsed ahead of the reader at most (the memory bound)

    std::mutex m_mutex;
    std::condition_variable m_wake;  // workers: a chunk may be taken, or stop
    std::condition_variable m_ready; // the reader: a chunk is parsed
    std::vector<std::unique_ptr<Chunk>> m_chunks;
    std::vector<std::unique_ptr<Chunk>> m_free; // parsed and let go: their memory serves the next ones
    std::vector<char> m_done;
    size_t m_taken = 0;   // chunks handed to workers
    size_t m_current = 0; // the chunk the reader is in
    bool m_stop = false;
    size_t m_next = 0; // the reader's place in the current chunk's events
    std::vector<std::thread> m_threads;
};

} // namespace streamscope::chrome::detail
