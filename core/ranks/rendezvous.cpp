// The ranks' TCP rendezvous (rendezvous.h): where to meet, joining (rank 0 listens and admits, the others connect),
// broadcast, barrier and the ping-pong clock offset.
#include "rendezvous.h"

#include "tcp_messages.h"

#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <climits>
#include <cstdio>
#include <cstring>
#include <random>
#include <sstream>
#include <thread>

namespace streamscope {

using namespace tcp;

namespace {

constexpr const char* kHello = "streamscope-rendezvous/1";

// During the ping-pong both ends sleep in poll until the other's message arrives, and wake some microseconds later:
// most of a round trip on one host. Trying recv again instead of sleeping was measured on the 2-core test VM under
// load (2026-12-05): single round trips of 6 µs, but the best of 32 at a median of 1 ms (spinning processes were
// preempted), against 21 µs sleeping. So they sleep.

// A rank that connected but says nothing is not waited for longer than this (it is not one of ours).
constexpr std::chrono::milliseconds kHelloWait{10'000};

std::string seconds(std::chrono::milliseconds ms)
{
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g s", double(ms.count()) / 1000.0);
    return buf;
}

std::string rankList(const std::vector<int>& ranks)
{
    std::string s;
    for (int r : ranks)
        s += (s.empty() ? "" : ", ") + std::to_string(r);
    return (ranks.size() == 1 ? "rank " : "ranks ") + s;
}

template <typename T>
bool parseInt(std::string_view s, T& out)
{
    const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    return ec == std::errc() && ptr == s.data() + s.size() && !s.empty();
}

std::vector<std::string> words(const std::string& s)
{
    std::vector<std::string> out;
    std::istringstream in(s);
    for (std::string w; in >> w;)
        out.push_back(std::move(w));
    return out;
}

struct AddrInfo {
    addrinfo* list = nullptr;
    ~AddrInfo()
    {
        if (list)
            ::freeaddrinfo(list);
    }
};

// getaddrinfo's answer; a name that does not exist is BadInput (exit 2), a resolver that is only not answering now
// is Runtime (the caller may retry).
Result<int> resolve(const RendezvousAddress& a, AddrInfo& out)
{
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    const std::string port = std::to_string(a.port);
    const int rc = ::getaddrinfo(a.host.c_str(), port.c_str(), &hints, &out.list);
    if (rc == 0)
        return 0;
    const std::string msg = "rendezvous address " + a.text() + " (" + a.source + "): cannot resolve \"" + a.host
        + "\": " + ::gai_strerror(rc);
    return {Error{{}, {}, msg}, rc == EAI_AGAIN ? ErrorClass::Runtime : ErrorClass::BadInput};
}

bool isLoopback(const sockaddr* sa)
{
    if (sa->sa_family == AF_INET)
        return (ntohl(reinterpret_cast<const sockaddr_in*>(sa)->sin_addr.s_addr) >> 24) == 127;
    if (sa->sa_family == AF_INET6) {
        const in6_addr& a = reinterpret_cast<const sockaddr_in6*>(sa)->sin6_addr;
        return IN6_IS_ADDR_LOOPBACK(&a);
    }
    return false;
}

std::string newJobId()
{
    std::random_device rd;
    const uint64_t id = (uint64_t(rd()) << 32) ^ uint64_t(rd()) ^ uint64_t(steadyNs()) ^ (uint64_t(::getpid()) << 16);
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(id));
    return buf;
}

} // namespace

std::string RendezvousAddress::text() const
{
    return (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

Result<RendezvousAddress> parseRendezvousAddress(const std::string& text, const std::string& source)
{
    auto bad = [&](const std::string& what) {
        return Error{{}, {}, source + ": \"" + text + "\" is not a rendezvous address: " + what};
    };
    RendezvousAddress a;
    a.source = source;
    std::string port;
    if (text.starts_with("[")) {
        const size_t close = text.find(']');
        if (close == std::string::npos || close + 1 >= text.size() || text[close + 1] != ':')
            return bad("expected [IPV6]:PORT");
        a.host = text.substr(1, close - 1);
        port = text.substr(close + 2);
    } else {
        const size_t colon = text.rfind(':');
        if (colon == std::string::npos)
            return bad("expected HOST:PORT, e.g. node1:29600");
        a.host = text.substr(0, colon);
        port = text.substr(colon + 1);
        if (a.host.find(':') != std::string::npos)
            return bad("an IPv6 address is written in brackets: [::1]:29600");
    }
    if (a.host.empty())
        return bad("the host is missing");
    if (!parseInt(port, a.port) || a.port < 1 || a.port > 65535)
        return bad("the port must be a whole number from 1 to 65535");
    return a;
}

Result<std::optional<RendezvousAddress>> rendezvousAddress(const std::string& option, const EnvLookup& env)
{
    using Out = std::optional<RendezvousAddress>;
    if (!option.empty()) {
        if (option == "none")
            return Out();
        auto a = parseRendezvousAddress(option, "--rendezvous");
        if (!a)
            return a.error();
        return Out(std::move(*a));
    }
    if (const char* v = env("STREAMSCOPE_RENDEZVOUS"); v && *v) {
        if (std::string_view(v) == "none")
            return Out();
        auto a = parseRendezvousAddress(v, std::string("environment variable STREAMSCOPE_RENDEZVOUS"));
        if (!a)
            return a.error();
        return Out(std::move(*a));
    }
    const char* addr = env("MASTER_ADDR");
    const char* port = env("MASTER_PORT");
    if (!addr || !*addr || !port)
        return Out();
    const std::string source = std::string("torchrun's MASTER_ADDR=") + addr + " and MASTER_PORT=" + port + " + 1";
    int p = 0;
    if (!parseInt(std::string_view(port), p) || p < 1 || p > 65534)
        return Error{{}, {}, source + ": MASTER_PORT must be a whole number from 1 to 65534"};
    RendezvousAddress a;
    a.host = addr;
    if (a.host.size() > 2 && a.host.front() == '[' && a.host.back() == ']')
        a.host = a.host.substr(1, a.host.size() - 2);
    a.port = p + 1; // torchrun's own store listens on MASTER_PORT
    a.source = source;
    return Out(std::move(a));
}

Rendezvous::~Rendezvous()
{
    for (int fd : m_fds)
        if (fd >= 0)
            ::close(fd);
}

Result<std::unique_ptr<Rendezvous>> Rendezvous::join(const RendezvousAddress& address, int rank, int worldSize,
                                                     const RendezvousOptions& options)
{
    std::unique_ptr<Rendezvous> rv(new Rendezvous);
    rv->m_rank = rank;
    rv->m_worldSize = worldSize;
    rv->m_timeout = options.timeout;
    rv->m_address = address;
    const std::string host = options.host.empty() ? localHostName() : options.host;
    const std::string where = "rendezvous at " + address.text() + " (" + address.source + ")";
    auto runtime = [&](const std::string& msg) -> Result<std::unique_ptr<Rendezvous>> {
        return {Error{{}, {}, where + ": " + msg}, ErrorClass::Runtime};
    };
    if (rank < 0 || rank >= worldSize)
        return Error{{},
                     {},
                     where + ": rank " + std::to_string(rank) + " is not a rank of world size "
                         + std::to_string(worldSize)};
    if (worldSize == 1) {
        rv->m_jobId = newJobId();
        rv->m_rootHost = host;
        return rv;
    }
    const Deadline deadline = deadlineIn(options.timeout);
    AddrInfo resolved;
    // A name that does not exist fails every rank at once; a resolver that does not answer now is retried below.
    if (auto r = resolve(address, resolved); !r && (rank == 0 || r.errorClass() == ErrorClass::BadInput))
        return {r.error(), r.errorClass()};

    if (rank == 0) {
        // A loopback address is listened on as given (nothing outside this host can connect); any other on every
        // address of this host, since a name such as MASTER_ADDR may resolve to an address that is not a local
        // interface's (a load balancer, a NAT), as torchrun's own store does.
        const bool loopback = isLoopback(resolved.list->ai_addr);
        AddrInfo wildcard;
        if (!loopback) {
            addrinfo hints{};
            hints.ai_family = AF_UNSPEC;
            hints.ai_socktype = SOCK_STREAM;
            hints.ai_flags = AI_PASSIVE;
            const std::string port = std::to_string(address.port);
            if (::getaddrinfo(nullptr, port.c_str(), &hints, &wildcard.list) != 0)
                return runtime("cannot make a listening address");
        }
        int listener = -1;
        std::string why;
        for (addrinfo* ai = loopback ? resolved.list : wildcard.list; ai && listener < 0; ai = ai->ai_next) {
            const int fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
            if (fd < 0)
                continue;
            const int one = 1;
            const int zero = 0;
            ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one); // a previous job's TIME_WAIT is no clash
            if (ai->ai_family == AF_INET6 && !loopback)
                ::setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero); // IPv4 peers too
            if (::bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && ::listen(fd, 128) == 0 && prepareSocket(fd)) {
                listener = fd;
                break;
            }
            const int e = errno;
            ::close(fd);
            if (e == EADDRINUSE) {
                const std::string msg = "port " + std::to_string(address.port)
                    + " is in use on this host (another job, or torchrun's own store?): choose another with run "
                      "--rendezvous HOST:PORT or STREAMSCOPE_RENDEZVOUS";
                return runtime(msg);
            }
            why = std::strerror(e);
        }
        if (listener < 0)
            return runtime("rank 0 cannot listen: " + why);
        // One connection per rank: a large world needs more than the usual soft limit of 1024 open files.
        if (rlimit files{}; ::getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < rlim_t(worldSize) + 64) {
            files.rlim_cur = std::min<rlim_t>(files.rlim_max, rlim_t(worldSize) + 64);
            ::setrlimit(RLIMIT_NOFILE, &files);
        }
        rv->m_fds.assign(size_t(worldSize), -1);
        int joined = 1;
        while (joined < worldSize) {
            if (IoResult w = waitReady(listener, POLLIN, deadline); !w)
                break;
            const int fd = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
            if (fd < 0 && (errno == EMFILE || errno == ENFILE)) {
                ::close(listener);
                const std::string msg = "rank 0 cannot hold a connection to each of " + std::to_string(worldSize)
                    + " ranks: it may open no more files (ulimit -n)";
                for (int peer : rv->m_fds)
                    if (peer >= 0)
                        sendMessage(peer, MessageType::Refused, msg, deadlineIn(std::chrono::seconds(1)));
                return runtime(msg);
            }
            if (fd < 0)
                continue; // EINTR, EAGAIN (taken by nobody else, but harmless), ECONNABORTED: wait again
            Message hello;
            const Deadline helloBy = std::min(deadline, deadlineIn(kHelloWait));
            const std::vector<std::string> w =
                prepareSocket(fd) && recvMessage(fd, hello, helloBy) && hello.type == MessageType::Hello
                ? words(hello.payload)
                : std::vector<std::string>();
            int r = -1;
            int world = 0;
            std::string refusal;
            if (w.size() < 3 || w[0] != kHello || !parseInt(std::string_view(w[1]), r)
                || !parseInt(std::string_view(w[2]), world))
                refusal = "not a StreamScope rendezvous hello";
            else if (world != worldSize)
                refusal = "rank 0 has world size " + std::to_string(worldSize) + ", this rank " + std::to_string(world)
                    + ": not one job (two jobs on one port?)";
            else if (r < 1 || r >= worldSize)
                refusal = "rank " + std::to_string(r) + " is not a rank of world size " + std::to_string(worldSize);
            else if (rv->m_fds[size_t(r)] >= 0)
                refusal = "rank " + std::to_string(r) + " has joined already (two jobs on one port?)";
            if (!refusal.empty()) {
                sendMessage(fd, MessageType::Refused, refusal, deadlineIn(std::chrono::milliseconds(200)));
                ::close(fd);
                continue;
            }
            rv->m_fds[size_t(r)] = fd;
            ++joined;
        }
        ::close(listener);
        rv->m_jobId = newJobId();
        rv->m_rootHost = host;
        if (joined < worldSize) {
            std::vector<int> missing;
            for (int r = 1; r < worldSize; ++r)
                if (rv->m_fds[size_t(r)] < 0)
                    missing.push_back(r);
            const std::string msg = rankList(missing) + " of " + std::to_string(worldSize) + " did not join within "
                + seconds(options.timeout)
                + " (did they start? can they reach rank 0's host at this address? a longer wait: "
                  "--rendezvous-timeout)";
            for (int fd : rv->m_fds)
                if (fd >= 0)
                    sendMessage(fd, MessageType::Refused, "rank 0: " + msg, deadlineIn(std::chrono::seconds(1)));
            return runtime(msg);
        }
        for (int r = 1; r < worldSize; ++r)
            if (IoResult s = sendMessage(rv->m_fds[size_t(r)], MessageType::Welcome,
                                         rv->m_jobId + " " + (host.empty() ? std::string("?") : host), deadline);
                !s)
                return runtime("rank " + std::to_string(r) + " left before the rendezvous was complete");
        return rv;
    }

    // Rank 1 and up: connect, retrying while rank 0 is not listening yet (it may start later than we do).
    std::string lastError = "no address";
    int fd = -1;
    while (fd < 0) {
        if (!resolved.list) {
            if (auto r = resolve(address, resolved); !r) {
                if (r.errorClass() == ErrorClass::BadInput)
                    return {r.error(), r.errorClass()};
                lastError = r.error().message;
            }
        }
        for (addrinfo* ai = resolved.list; ai && fd < 0; ai = ai->ai_next) {
            const int s = ::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
            if (s < 0 || !prepareSocket(s)) {
                lastError = std::strerror(errno);
                if (s >= 0)
                    ::close(s);
                continue;
            }
            int rc = ::connect(s, ai->ai_addr, ai->ai_addrlen);
            int err = rc == 0 ? 0 : errno;
            if (rc != 0 && (err == EINPROGRESS || err == EINTR)) {
                // A non-blocking connect goes on in the background, even when interrupted: wait for its outcome.
                const Deadline by = std::min(deadline, deadlineIn(std::chrono::seconds(5)));
                if (IoResult w = waitReady(s, POLLOUT, by); !w) {
                    err = ETIMEDOUT;
                } else {
                    socklen_t len = sizeof err;
                    if (::getsockopt(s, SOL_SOCKET, SO_ERROR, &err, &len) != 0)
                        err = errno;
                }
            }
            if (err == 0) {
                fd = s;
            } else {
                lastError = std::strerror(err);
                ::close(s);
            }
        }
        if (fd >= 0)
            break;
        if (Clock::now() + std::chrono::milliseconds(50) >= deadline)
            return runtime("rank " + std::to_string(rank) + " could not reach rank 0 within " + seconds(options.timeout)
                           + " (" + lastError + "): did rank 0 start, and is this its host's address?");
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    rv->m_fds = {fd};
    const std::string hello = std::string(kHello) + " " + std::to_string(rank) + " " + std::to_string(worldSize) + " "
        + (host.empty() ? std::string("?") : host);
    if (!sendMessage(fd, MessageType::Hello, hello, deadline))
        return runtime("rank 0 closed the connection at once (is it a StreamScope rendezvous?)");
    // Rank 0 answers when every rank has come, or says which did not after its own timeout, which started before
    // ours: a little longer here lets its sentence arrive first.
    Message welcome;
    const IoResult got = recvMessage(fd, welcome, deadline + std::chrono::seconds(5));
    if (got && welcome.type == MessageType::Refused)
        return runtime(welcome.payload);
    if (got.status == Io::TimedOut)
        return runtime("rank 0 did not complete the rendezvous within " + seconds(options.timeout)
                       + " (other ranks missing?)");
    const std::vector<std::string> w = got ? words(welcome.payload) : std::vector<std::string>();
    if (!got || welcome.type != MessageType::Welcome || w.size() != 2)
        return runtime("rank 0 left or did not answer as a StreamScope rendezvous"
                       + (got.detail.empty() ? std::string() : " (" + got.detail + ")"));
    rv->m_jobId = w[0];
    rv->m_rootHost = w[1] == "?" ? std::string() : w[1];
    return rv;
}

namespace {

// Why an exchange with `peer` failed, as a sentence naming it.
std::string exchangeFailure(int peer, const IoResult& io, const Message& got, const std::string& during,
                            std::chrono::milliseconds timeout)
{
    if (io && got.type == MessageType::Refused)
        return got.payload; // rank 0's own sentence: which rank it gave up on
    const std::string who = "rank " + std::to_string(peer);
    switch (io.status) {
    case Io::TimedOut: return who + " did not reach the " + during + " within " + seconds(timeout);
    case Io::Closed: return who + " left the rendezvous during the " + during + " (its process ended?)";
    case Io::Failed: return during + " with " + who + ": " + io.detail;
    case Io::Ok: break;
    }
    return who + " sent a message out of turn during the " + during + " (not the same StreamScope version?)";
}

} // namespace

Status Rendezvous::failed(const std::string& why)
{
    // Rank 0 tells the others why, so that they stop now with its sentence instead of timing out on their own.
    if (m_rank == 0)
        for (int fd : m_fds)
            if (fd >= 0)
                sendMessage(fd, MessageType::Refused, "rank 0: " + why, deadlineIn(std::chrono::seconds(1)));
    return Status(Error{{}, {}, "rendezvous at " + m_address.text() + ": " + why}, ErrorClass::Runtime);
}

Status Rendezvous::receive(int peer, MessageType type, Message& out, Deadline deadline, const std::string& during)
{
    const int fd = m_fds[m_rank == 0 ? size_t(peer) : 0];
    const IoResult io = recvMessage(fd, out, deadline);
    if (io && out.type == type)
        return {};
    return failed(exchangeFailure(peer, io, out, during, m_timeout));
}

Status Rendezvous::send(int peer, MessageType type, const std::string& payload, Deadline deadline,
                        const std::string& during)
{
    const int fd = m_fds[m_rank == 0 ? size_t(peer) : 0];
    const IoResult io = sendMessage(fd, type, payload, deadline);
    if (io)
        return {};
    return failed(exchangeFailure(peer, io, Message{}, during, m_timeout));
}

// Ranks other than 0 wait a little longer than rank 0 does, so that rank 0's sentence about a missing rank reaches
// them before their own timeout.
Deadline Rendezvous::clientDeadline() const
{
    return deadlineIn(m_timeout) + std::chrono::seconds(5);
}

Result<std::string> Rendezvous::broadcast(const std::string& blob)
{
    if (m_worldSize == 1)
        return blob;
    if (m_rank == 0) {
        if (blob.size() > (1u << 20))
            return Error{{}, {}, "rendezvous broadcast: " + std::to_string(blob.size()) + " bytes, at most 1 MiB"};
        const Deadline deadline = deadlineIn(m_timeout);
        for (int r = 1; r < m_worldSize; ++r)
            if (Status s = send(r, MessageType::Broadcast, blob, deadline, "broadcast"); !s)
                return {s.error(), s.errorClass()};
        return blob;
    }
    Message m;
    if (Status s = receive(0, MessageType::Broadcast, m, clientDeadline(), "broadcast"); !s)
        return {s.error(), s.errorClass()};
    return std::move(m.payload);
}

Status Rendezvous::barrier()
{
    if (m_worldSize == 1)
        return {};
    if (m_rank != 0) {
        if (Status s = send(0, MessageType::BarrierArrive, {}, deadlineIn(m_timeout), "barrier"); !s)
            return s;
        Message m;
        return receive(0, MessageType::BarrierGo, m, clientDeadline(), "barrier");
    }
    const Deadline deadline = deadlineIn(m_timeout);
    std::vector<int> late;
    for (int r = 1; r < m_worldSize; ++r) {
        Message m;
        // Once one rank is late, the others are only checked for what has arrived: all the late ones are named.
        const IoResult io = recvMessage(m_fds[size_t(r)], m, late.empty() ? deadline : Clock::now());
        if (io.status == Io::TimedOut) {
            late.push_back(r);
            continue;
        }
        if (!io || m.type != MessageType::BarrierArrive)
            return failed(exchangeFailure(r, io, m, "barrier", m_timeout));
    }
    if (!late.empty())
        return failed(rankList(late) + " of " + std::to_string(m_worldSize) + " did not reach the barrier within "
                      + seconds(m_timeout));
    for (int r = 1; r < m_worldSize; ++r)
        if (Status s = send(r, MessageType::BarrierGo, {}, deadline, "barrier"); !s)
            return s;
    return {};
}

Result<ClockOffset> Rendezvous::measureClockOffset(int rounds, std::vector<ClockOffset>* all)
{
    ClockOffset own;
    own.rank = m_rank;
    own.atNs = steadyNs();
    if (m_rank == 0) {
        rounds = std::clamp(rounds, 1, 10'000);
        if (all) {
            all->assign(size_t(m_worldSize), ClockOffset{});
            for (int r = 0; r < m_worldSize; ++r)
                (*all)[size_t(r)].rank = r;
        }
        // One rank at a time: rank 0 answers each ping as soon as it arrives, undisturbed by the others' pings.
        for (int r = 1; r < m_worldSize; ++r) {
            const Deadline deadline = deadlineIn(m_timeout);
            if (Status s = send(r, MessageType::SyncStart, std::to_string(rounds), deadline, "clock ping-pong"); !s)
                return {s.error(), s.errorClass()};
            for (;;) {
                Message m;
                const IoResult io = recvMessage(m_fds[size_t(r)], m, deadline);
                if (io && m.type == MessageType::Ping) {
                    // When the ping arrived and when the pong leaves: the time between is rank 0's, not the
                    // network's, and is taken out of the round trip (NTP's four timestamps).
                    const int64_t arrived = steadyNs();
                    const int64_t leaves = steadyNs();
                    const std::string pong = std::to_string(arrived) + " " + std::to_string(leaves);
                    if (Status s = send(r, MessageType::Pong, pong, deadline, "clock ping-pong"); !s)
                        return {s.error(), s.errorClass()};
                    continue;
                }
                if (!io || m.type != MessageType::SyncDone) {
                    Status s = failed(exchangeFailure(r, io, m, "clock ping-pong", m_timeout));
                    return {s.error(), s.errorClass()};
                }
                const auto w = words(m.payload);
                ClockOffset o;
                o.rank = r;
                if (w.size() != 4 || !parseInt(std::string_view(w[0]), o.offsetNs)
                    || !parseInt(std::string_view(w[1]), o.uncertaintyNs)
                    || !parseInt(std::string_view(w[2]), o.samples) || !parseInt(std::string_view(w[3]), o.atNs)) {
                    Status s = failed("rank " + std::to_string(r) + " sent an unreadable clock offset");
                    return {s.error(), s.errorClass()};
                }
                if (all)
                    (*all)[size_t(r)] = o;
                break;
            }
        }
        return own;
    }
    if (m_worldSize == 1)
        return own;
    Message start;
    if (Status s = receive(0, MessageType::SyncStart, start, clientDeadline(), "clock ping-pong"); !s)
        return {s.error(), s.errorClass()};
    int n = 0;
    if (!parseInt(std::string_view(start.payload), n) || n < 1 || n > 10'000) {
        Status s = failed("rank 0 asked for an unreadable number of round trips");
        return {s.error(), s.errorClass()};
    }
    int64_t bestDelay = INT64_MAX;
    const Deadline deadline = deadlineIn(m_timeout);
    for (int i = 0; i < n; ++i) {
        const int64_t sent = steadyNs();
        if (Status s = send(0, MessageType::Ping, {}, deadline, "clock ping-pong"); !s)
            return {s.error(), s.errorClass()};
        Message pong;
        if (Status s = receive(0, MessageType::Pong, pong, deadline, "clock ping-pong"); !s)
            return {s.error(), s.errorClass()};
        const int64_t received = steadyNs();
        const auto w = words(pong.payload);
        int64_t arrived = 0;
        int64_t left = 0;
        if (w.size() != 2 || !parseInt(std::string_view(w[0]), arrived) || !parseInt(std::string_view(w[1]), left)
            || left < arrived) {
            Status s = failed("rank 0 sent an unreadable clock reading");
            return {s.error(), s.errorClass()};
        }
        // The ping reached rank 0 after we sent it, and the pong left rank 0 before we got it: with rank 0's clock =
        // ours + offset, the offset lies in [left - received, arrived - sent] whatever the two paths took. The
        // middle of that interval assumes they took the same time; the round trip with the least time in the
        // network gives the narrowest interval.
        const int64_t delay = std::max<int64_t>(0, (received - sent) - (left - arrived));
        if (delay < bestDelay) {
            bestDelay = delay;
            own.offsetNs = ((arrived - sent) + (left - received)) / 2;
            own.uncertaintyNs = (delay + 1) / 2;
            own.atNs = sent + (received - sent) / 2;
        }
    }
    own.samples = n;
    const std::string done = std::to_string(own.offsetNs) + " " + std::to_string(own.uncertaintyNs) + " "
        + std::to_string(own.samples) + " " + std::to_string(own.atNs);
    if (Status s = send(0, MessageType::SyncDone, done, deadline, "clock ping-pong"); !s)
        return {s.error(), s.errorClass()};
    return own;
}

} // namespace streamscope
