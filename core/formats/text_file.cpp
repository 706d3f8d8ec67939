#include "text_file.h"

#include "file_io.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <new>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace streamscope {

namespace {

std::string parentDir(const std::string& path)
{
    const auto slash = path.find_last_of('/');
    if (slash == std::string::npos)
        return ".";
    if (slash == 0)
        return "/";
    return path.substr(0, slash);
}

std::string baseName(const std::string& path)
{
    const auto slash = path.find_last_of('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

} // namespace

Status saveTextFileAtomic(const std::string& path, const std::string& text)
{
    if (path.empty())
        return Error{{}, {}, "no file name given"};
    std::string target = path;
    struct stat st {};
    // Saving through a symbolic link replaces the file it points to, not the link.
    if (::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
        if (char* real = ::realpath(path.c_str(), nullptr)) {
            target = real;
            std::free(real);
        }
    }
    const bool exists = ::stat(target.c_str(), &st) == 0;
    if (exists && S_ISDIR(st.st_mode))
        return Error{path, {}, "cannot save: it is a directory"};

    // The temporary file lives beside the target so that rename() replaces it in one step (same file system).
    static std::atomic<unsigned> counter{0};
    const std::string dir = parentDir(target);
    const std::string stem = baseName(target).substr(0, 200);
    std::string tmp;
    int fd = -1;
    for (int attempt = 0; attempt < 100 && fd < 0; ++attempt) {
        tmp = dir + "/." + stem + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
        fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd < 0 && errno != EEXIST)
            break;
    }
    if (fd < 0)
        return Error{path, {}, "cannot save: cannot create a file in " + dir + ": " + errnoText(errno)};
    if (exists && S_ISREG(st.st_mode))
        (void)::fchmod(fd, st.st_mode & 07777);

    const auto failWith = [&](const std::string& what, int err) {
        if (fd >= 0)
            ::close(fd);
        ::unlink(tmp.c_str());
        return Status(Error{path, {}, "cannot save: " + what + ": " + errnoText(err)});
    };
    size_t done = 0;
    while (done < text.size()) {
        const ssize_t w = ::write(fd, text.data() + done, text.size() - done);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return failWith("write failed", errno);
        }
        done += size_t(w);
    }
    if (::fsync(fd) != 0)
        return failWith("fsync failed", errno);
    const int closed = ::close(fd);
    fd = -1;
    if (closed != 0)
        return failWith("close failed", errno);
    if (::rename(tmp.c_str(), target.c_str()) != 0)
        return failWith("cannot replace the file", errno);
    // Makes the rename itself durable; a failure here leaves a complete file either way.
    if (int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); dfd >= 0) {
        (void)::fsync(dfd);
        ::close(dfd);
    }
    return Status::success();
}

Result<std::string> readTextFile(const std::string& path, size_t maxBytes)
{
    OpenFile file;
    if (Status opened = openForReading(path, file); !opened)
        return opened.error();
    const struct stat& st = file.status;
    const auto tooLarge = [&](uint64_t size) {
        return Error{path,
                     {},
                     "file is too large (" + std::to_string(size) + " bytes; the limit is " + std::to_string(maxBytes)
                         + ")"};
    };
    if (S_ISREG(st.st_mode) && uint64_t(st.st_size) > maxBytes)
        return tooLarge(uint64_t(st.st_size));

    std::string text;
    try {
        // Regular files: their size, then a probe for growth; pipes and devices: grown as read. Bounded by maxBytes.
        text.resize(S_ISREG(st.st_mode) ? size_t(st.st_size) : std::min(maxBytes, size_t(64) << 10));
        size_t done = 0;
        for (;;) {
            const ssize_t r = readFully(file.fd, text.data() + done, text.size() - done);
            if (r < 0)
                return Error{path, {}, "cannot read: " + errnoText(errno)};
            done += size_t(r);
            if (done < text.size())
                break; // the end of the file
            char probe;
            const ssize_t p = readFully(file.fd, &probe, 1);
            if (p < 0)
                return Error{path, {}, "cannot read: " + errnoText(errno)};
            if (p == 0)
                break;
            if (done + 1 > maxBytes)
                return tooLarge(uint64_t(done) + 1);
            text.resize(std::min(maxBytes, std::max(done * 2, size_t(64) << 10)));
            text[done++] = probe;
        }
        text.resize(done);
    } catch (const std::bad_alloc&) {
        return Error{path, {}, "not enough memory to read the file"};
    }
    return text;
}

} // namespace streamscope
