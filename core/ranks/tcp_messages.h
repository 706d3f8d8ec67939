// Framed messages over a non-blocking TCP socket, every wait bounded by a deadline (rendezvous.h): the plumbing that
// `Rendezvous` is built on. Interrupted calls (EINTR) are retried, short reads and writes continued, a peer that
// closes its end is told apart from one that is only slow.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace streamscope::tcp {

using Clock = std::chrono::steady_clock;
using Deadline = Clock::time_point;

enum class Io { Ok, TimedOut, Closed, Failed };

struct IoResult {
    Io status = Io::Ok;
    std::string detail; // for Failed: what the system said
    explicit operator bool() const { return status == Io::Ok; }
};

// What the rendezvous says to each other. Values are part of the wire protocol: only add.
enum class MessageType : uint32_t {
    Hello = 1,         // rank -> 0: "streamscope-rendezvous/1 RANK WORLD HOST"
    Welcome = 2,       // 0 -> rank: "JOB HOST" (rank 0's host)
    Refused = 3,       // either way: why the rendezvous cannot go on, a sentence
    Broadcast = 4,     // 0 -> rank: the bytes
    BarrierArrive = 5, // rank -> 0
    BarrierGo = 6,     // 0 -> rank
    SyncStart = 7,     // 0 -> rank: "ROUNDS"
    Ping = 8,          // rank -> 0
    Pong = 9,          // 0 -> rank: rank 0's steady clock, ns, when the ping arrived
    SyncDone = 10,     // rank -> 0: "OFFSET UNCERTAINTY SAMPLES"
};

inline constexpr uint32_t kMaxPayload = (1u << 20) + 4096; // a broadcast of 1 MiB, and a little

struct Message {
    MessageType type = MessageType::Refused;
    std::string payload;
};

int64_t steadyNs();
Deadline deadlineIn(std::chrono::milliseconds ms);

// Waits until `fd` is ready for `events` (poll flags) or the deadline passes.
IoResult waitReady(int fd, short events, Deadline deadline);
IoResult sendAll(int fd, const void* data, size_t size, Deadline deadline);
IoResult recvAll(int fd, void* data, size_t size, Deadline deadline);

IoResult sendMessage(int fd, MessageType type, const std::string& payload, Deadline deadline);
// A payload longer than kMaxPayload or an unknown type is Failed ("not a StreamScope rendezvous").
IoResult recvMessage(int fd, Message& out, Deadline deadline);

// The socket options every rendezvous connection gets: non-blocking, and TCP_NODELAY (a ping must leave at once, not
// wait for Nagle's algorithm to fill a segment).
bool prepareSocket(int fd);

} // namespace streamscope::tcp
