// A small TCP rendezvous between the ranks of one job (docs/RANKS.md, "Clocks across hosts"): rank 0 listens on
// HOST:PORT, every other rank connects to it. Over it the ranks share bytes (`broadcast`: e.g. an NCCL unique id),
// wait for each other (`barrier`) and measure each rank's steady-clock offset to rank 0's by ping-pong
// (`measureClockOffset`), so that `merge` can align ranks that ran on different hosts, which share no clock.
// POSIX sockets only: no MPI is needed, so it works the same under mpirun, srun and torchrun.
#pragma once

#include "ranks.h"
#include "result.h"
#include "tcp_messages.h"

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace streamscope {

struct RendezvousAddress {
    std::string host; // a name or an address (IPv6 written without brackets)
    int port = 0;
    std::string source; // where it came from, for messages: "--rendezvous", "STREAMSCOPE_RENDEZVOUS=...", ...
    std::string text() const;
};

// "HOST:PORT" or "[IPV6]:PORT", PORT from 1 to 65535. A bad address is BadInput, naming `source`.
Result<RendezvousAddress> parseRendezvousAddress(const std::string& text, const std::string& source);

// Where the ranks meet: `option` (run --rendezvous) where given, else STREAMSCOPE_RENDEZVOUS, else torchrun's
// MASTER_ADDR with MASTER_PORT + 1 (torchrun's own store listens on MASTER_PORT). "none" in the option or the
// variable turns the rendezvous off. nullopt: no rendezvous.
Result<std::optional<RendezvousAddress>> rendezvousAddress(const std::string& option, const EnvLookup& env);

// One rank's steady-clock offset to rank 0's, from the round trip with the least time in the network (NTP's rule:
// the shortest round trip is the one least delayed by queues). Rank 0's clock = this rank's clock + offsetNs, within
// ±uncertaintyNs: half that round trip less the time rank 0 held the ping (it read its clock as the ping arrived and
// as the pong left, so the bound holds whatever the two paths took; taking the middle assumes they took the same).
struct ClockOffset {
    int rank = 0;
    int64_t offsetNs = 0;
    int64_t uncertaintyNs = 0;
    int samples = 0;  // round trips made; 0 for rank 0 itself
    int64_t atNs = 0; // this rank's steady clock at the middle of the round trip the offset came from
};

struct RendezvousOptions {
    std::chrono::milliseconds timeout{60'000}; // for every wait: ranks arriving, each exchange
    std::string host;                          // this host's name, sent to rank 0 (empty: localHostName())
};

class Rendezvous {
public:
    // Rank 0 listens (port in use: a runtime error saying so) and waits for the other ranks; the others connect,
    // retrying while rank 0 is not yet listening. An address that does not resolve is BadInput; ranks that never
    // come are a runtime error naming them. World size 1: nothing is opened.
    static Result<std::unique_ptr<Rendezvous>> join(const RendezvousAddress& address, int rank, int worldSize,
                                                    const RendezvousOptions& options = {});
    ~Rendezvous();
    Rendezvous(const Rendezvous&) = delete;
    Rendezvous& operator=(const Rendezvous&) = delete;

    int rank() const { return m_rank; }
    int worldSize() const { return m_worldSize; }
    // Chosen by rank 0 and shared at join: the same on every rank of this rendezvous, different for every job.
    const std::string& jobId() const { return m_jobId; }
    // Rank 0's host name, as rank 0 reported it.
    const std::string& rootHost() const { return m_rootHost; }
    const RendezvousAddress& address() const { return m_address; }

    // Rank 0's `blob` on every rank (the others' argument is ignored). At most 1 MiB.
    Result<std::string> broadcast(const std::string& blob);
    // Returns once every rank has called it; a rank that does not within the timeout is named.
    Status barrier();
    // Collective: rank 0 serves each rank in turn, `rounds` round trips each. Returns this rank's offset (rank 0:
    // 0 exactly); on rank 0, `all` (if given) receives every rank's, index = rank, for its report.
    Result<ClockOffset> measureClockOffset(int rounds = 32, std::vector<ClockOffset>* all = nullptr);

private:
    Rendezvous() = default;
    Status failed(const std::string& why);
    Status receive(int peer, tcp::MessageType type, tcp::Message& out, tcp::Deadline deadline,
                   const std::string& during);
    Status send(int peer, tcp::MessageType type, const std::string& payload, tcp::Deadline deadline,
                const std::string& during);
    tcp::Deadline clientDeadline() const;
    int m_rank = 0;
    int m_worldSize = 1;
    std::chrono::milliseconds m_timeout{60'000};
    std::string m_jobId;
    std::string m_rootHost;
    RendezvousAddress m_address;
    std::vector<int> m_fds; // rank 0: one per rank (index = rank; its own is -1); others: [0] = rank 0
};

} // namespace streamscope
