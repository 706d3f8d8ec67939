// SPDX-FileCopyrightText: StreamScope contributors
// A regular file mapped whole for reading (internal to core): the binary trace reader takes a big file's columns
// from where the page cache holds them.
//
// A file mapped is a file that may change under the reader: where another program cuts it short while it is read,
// an access to a page beyond its new end raises SIGBUS, which would end the program. A handler installed with the
// first mapping (and chained to any handler before it for every other fault) puts zero-filled pages over the rest
// of the mapping and marks it changed, so the reader goes on over zeros and then reports that the file changed while
// it was read (changed()). Linux only; elsewhere map() fails and the readers read the file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace streamscope {

class MappedFile {
public:
    MappedFile() = default;
    ~MappedFile();
    MappedFile(const MappedFile&) = delete;
    MappedFile& operator=(const MappedFile&) = delete;

    // Maps `size` bytes of the open regular file `fd` read-only; false (errno set) if it cannot (then nothing is
    // mapped). Gives an empty file no mapping and returns false.
    bool map(int fd, size_t size);

    const char* data() const { return m_data; }
    size_t size() const { return m_size; }
    bool mapped() const { return m_data != nullptr; }

    // Whether an access found the file shorter than when it was mapped (SIGBUS): the bytes from there read as zeros.
    bool changed() const;

private:
    const char* m_data = nullptr;
    size_t m_size = 0;
    int m_slot = -1; // in the SIGBUS guard's table
};

// The message of a reader that found its mapped file changed.
inline std::string fileChangedWhileRead()
{
    return "the file changed (it was cut short) while it was read";
}

} // namespace streamscope
