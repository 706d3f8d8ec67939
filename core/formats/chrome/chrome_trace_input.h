// The input of the Chrome Trace Event reader (chrome_trace_reader.h): a buffer refilled from the file, or a text
// in memory. Internal to core.
#pragma once

#include "file_io.h"
#include "import_progress.h"

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include <sys/stat.h>

namespace streamscope::chrome::detail {

// Reading: a hand-written JSON tokenizer (chrome_trace_tokenizer.h) over a buffer that is refilled from the file.
// Events are parsed one at a time into fields; a value cut by the end of the buffer throws NeedMore, and the event
// is parsed again from its start once more bytes are in (once per buffer, so the cost is nil).

struct NeedMore {};
struct Fail {
    uint64_t offset;
    std::string message;
};

class Input {
public:
    explicit Input(std::string_view text)
        : m_size(text.size()), m_begin(text.data()), m_end(text.data() + text.size()), m_eof(true)
    {}
    // A piece of a larger input that starts at byte `base` of it (chrome_trace_chunks.h): `last` when it runs to the
    // input's end, else a value cut by its end throws NeedMore, to be read by the reader of the whole.
    Input(std::string_view piece, uint64_t base, bool last)
        : m_begin(piece.data()), m_end(piece.data() + piece.size()), m_base(base), m_eof(last)
    {}
    explicit Input(int fd) : m_fd(fd), m_eof(false)
    {
        struct stat st {};
        if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
            m_size = uint64_t(st.st_size);
        // 256 KiB: the parser reads what the kernel just copied while it is still in the processor's cache (4 MiB
        // took about 7 % more CPU time, docs/PERFORMANCE.md). An event longer than half of it grows it (refill).
        m_storage.resize(size_t(256) << 10);
        m_begin = m_end = m_storage.data();
    }

    const char* begin() const { return m_begin; }
    const char* end() const { return m_end; }
    bool eof() const { return m_eof; }
    uint64_t offset(const char* p) const { return m_base + uint64_t(p - m_begin); }
    uint64_t total() const { return m_base + uint64_t(m_end - m_begin); }
    // The whole input's size where it is known (a regular file, a text), else 0.
    uint64_t expectedSize() const { return m_size; }

    // Keeps [keep, end), reads more after it; `keep` points to the same byte afterwards. Returns the error text of
    // a failed read, or an empty string.
    std::string refill(const char*& keep)
    {
        if (m_eof)
            return {};
        const size_t kept = size_t(m_end - keep);
        m_base += uint64_t(keep - m_begin);
        if (kept * 2 > m_storage.size()) {
            std::vector<char> bigger(m_storage.size() * 2);
            std::memcpy(bigger.data(), keep, kept);
            m_storage.swap(bigger);
        } else if (kept) {
            std::memmove(m_storage.data(), keep, kept);
        }
        const ssize_t r = readFully(m_fd, m_storage.data() + kept, m_storage.size() - kept);
        if (r < 0)
            return errnoText(errno);
        const size_t filled = kept + size_t(r);
        m_eof = filled < m_storage.size();
        m_begin = m_storage.data();
        m_end = m_begin + filled;
        keep = m_begin;
        if (!import_detail::step(m_base, m_size)) // a window's Cancel, once per buffer
            return kImportCancelled;
        return {};
    }

private:
    int m_fd = -1;
    uint64_t m_size = 0; // of a regular file, for progress
    std::vector<char> m_storage;
    const char* m_begin = nullptr;
    const char* m_end = nullptr;
    uint64_t m_base = 0;
    bool m_eof = true;
};

} // namespace streamscope::chrome::detail
