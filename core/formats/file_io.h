// Reading files by descriptor, shared by the trace readers (internal to core): opening a file for reading, where a
// directory is an error, and reading with interrupted calls retried. Also the text helpers their writers share.
#pragma once

#include "result.h"
#include "trace.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>

namespace streamscope {

inline std::string errnoText(int err)
{
    return std::error_code(err, std::generic_category()).message();
}

// A descriptor closed when it goes.
struct OpenFile {
    int fd = -1;
    struct stat status {};
    OpenFile() = default;
    OpenFile(const OpenFile&) = delete;
    OpenFile& operator=(const OpenFile&) = delete;
    ~OpenFile()
    {
        if (fd >= 0)
            ::close(fd);
    }
};

// Opens `path` for reading into `file`: an error "cannot open: …", "cannot read: …" or "is a directory, not a
// file" naming the path, or success.
inline Status openForReading(const std::string& path, OpenFile& file)
{
    file.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (file.fd < 0)
        return Error{path, {}, "cannot open: " + errnoText(errno)};
    if (::fstat(file.fd, &file.status) != 0)
        return Error{path, {}, "cannot read: " + errnoText(errno)};
    if (S_ISDIR(file.status.st_mode))
        return Error{path, {}, "is a directory, not a file"};
    return Status::success();
}

// Reads until `size` bytes or the end of the file, retrying interrupted reads: the bytes read, or -1 with errno.
inline ssize_t readFully(int fd, char* buf, size_t size)
{
    size_t done = 0;
    while (done < size) {
        const ssize_t r = ::read(fd, buf + done, size - done);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -1;
        if (r == 0)
            break;
        done += size_t(r);
    }
    return ssize_t(done);
}

// The integer a setting's text starts with ("8", " 132 SMs"), or nothing.
inline std::optional<int64_t> leadingInt(std::string_view s)
{
    while (!s.empty() && s.front() == ' ')
        s.remove_prefix(1);
    int64_t v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || p == s.data())
        return std::nullopt;
    return v;
}

inline void appendInt(std::string& out, int64_t v)
{
    char buf[24];
    const auto r = std::to_chars(buf, buf + sizeof buf, v);
    out.append(buf, r.ptr);
}

// [x,y,z]
inline void appendDim3(std::string& out, const Dim3& d)
{
    out += '[';
    appendInt(out, d.x);
    out += ',';
    appendInt(out, d.y);
    out += ',';
    appendInt(out, d.z);
    out += ']';
}

// A key as one token of a JSON pointer (RFC 6901: '~' is written "~0", '/' is written "~1").
inline std::string jsonPointerToken(std::string_view key)
{
    std::string out;
    out.reserve(key.size());
    for (char c : key) {
        if (c == '~')
            out += "~0";
        else if (c == '/')
            out += "~1";
        else
            out += c;
    }
    return out;
}

} // namespace streamscope
