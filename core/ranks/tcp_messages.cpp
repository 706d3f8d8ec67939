// Framed messages over TCP with deadlines (tcp_messages.h). A frame is an 8-byte header, type and payload length as
// big-endian 32-bit numbers, then the payload.
#include "tcp_messages.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace streamscope::tcp {

namespace {

void putU32(unsigned char* p, uint32_t v)
{
    p[0] = static_cast<unsigned char>(v >> 24);
    p[1] = static_cast<unsigned char>(v >> 16);
    p[2] = static_cast<unsigned char>(v >> 8);
    p[3] = static_cast<unsigned char>(v);
}

uint32_t getU32(const unsigned char* p)
{
    return (uint32_t(p[0]) << 24) | (uint32_t(p[1]) << 16) | (uint32_t(p[2]) << 8) | uint32_t(p[3]);
}

IoResult failed(const char* what)
{
    return {Io::Failed, std::string(what) + ": " + std::strerror(errno)};
}

} // namespace

int64_t steadyNs()
{
    return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
}

Deadline deadlineIn(std::chrono::milliseconds ms)
{
    return Clock::now() + ms;
}

IoResult waitReady(int fd, short events, Deadline deadline)
{
    for (;;) {
        const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count();
        if (left <= 0)
            return {Io::TimedOut, {}};
        pollfd p{fd, events, 0};
        const int n = ::poll(&p, 1, int(std::min<int64_t>(left, 60'000)));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return failed("poll");
        if (n > 0)
            return {}; // ready, or an error/hang-up that the next send or recv reports
    }
}

IoResult sendAll(int fd, const void* data, size_t size, Deadline deadline)
{
    const auto* p = static_cast<const char*>(data);
    while (size > 0) {
        const ssize_t n = ::send(fd, p, size, MSG_NOSIGNAL); // a closed peer is an error here, not SIGPIPE
        if (n > 0) {
            p += n;
            size -= size_t(n);
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            if (IoResult w = waitReady(fd, POLLOUT, deadline); !w)
                return w;
            continue;
        }
        if (n < 0 && (errno == EPIPE || errno == ECONNRESET))
            return {Io::Closed, {}};
        return failed("send");
    }
    return {};
}

IoResult recvAll(int fd, void* data, size_t size, Deadline deadline)
{
    auto* p = static_cast<char*>(data);
    while (size > 0) {
        const ssize_t n = ::recv(fd, p, size, 0);
        if (n > 0) {
            p += n;
            size -= size_t(n);
            continue;
        }
        if (n == 0)
            return {Io::Closed, {}};
        if (errno == EINTR)
            continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            if (IoResult w = waitReady(fd, POLLIN, deadline); !w)
                return w;
            continue;
        }
        if (errno == ECONNRESET)
            return {Io::Closed, {}};
        return failed("recv");
    }
    return {};
}

IoResult sendMessage(int fd, MessageType type, const std::string& payload, Deadline deadline)
{
    std::string frame(8 + payload.size(), '\0');
    auto* h = reinterpret_cast<unsigned char*>(frame.data());
    putU32(h, uint32_t(type));
    putU32(h + 4, uint32_t(payload.size()));
    std::copy(payload.begin(), payload.end(), frame.begin() + 8);
    return sendAll(fd, frame.data(), frame.size(), deadline);
}

IoResult recvMessage(int fd, Message& out, Deadline deadline)
{
    unsigned char h[8];
    if (IoResult r = recvAll(fd, h, sizeof h, deadline); !r)
        return r;
    const uint32_t type = getU32(h);
    const uint32_t size = getU32(h + 4);
    if (type < uint32_t(MessageType::Hello) || type > uint32_t(MessageType::SyncDone) || size > kMaxPayload)
        return {Io::Failed, "the peer does not speak StreamScope's rendezvous protocol"};
    out.type = MessageType(type);
    out.payload.assign(size, '\0');
    return recvAll(fd, out.payload.data(), size, deadline);
}

bool prepareSocket(int fd)
{
    const int flags = ::fcntl(fd, F_GETFL, 0);
    if (flags < 0 || ::fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0)
        return false;
    const int one = 1;
    return ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) == 0;
}

} // namespace streamscope::tcp
