// How well the rendezvous' ping-pong measures clock offsets (rendezvous.h), on this machine: RANKS processes (fork)
// meet at 127.0.0.1:PORT and measure their offsets to rank 0 REPEATS times, 32 round trips each. On one host the true
// offset is 0, so every offset is an error, and it must lie within its uncertainty. Prints one line per repeat and a
// summary (docs/RANKS.md has figures).
//
//   bench_rendezvous [RANKS=4] [REPEATS=20] [PORT=29710]
#include "rendezvous.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace ss = streamscope;

int main(int argc, char** argv)
{
    const int ranks = argc > 1 ? std::atoi(argv[1]) : 4;
    const int repeats = argc > 2 ? std::atoi(argv[2]) : 20;
    const int port = argc > 3 ? std::atoi(argv[3]) : 29710;
    if (ranks < 2 || ranks > 256 || repeats < 1 || port < 1 || port > 65535) {
        std::fprintf(stderr, "usage: bench_rendezvous [RANKS 2-256] [REPEATS] [PORT]\n");
        return 2;
    }
    const ss::RendezvousAddress address{"127.0.0.1", port, "bench"};
    std::vector<pid_t> children;
    for (int r = 1; r < ranks; ++r) {
        const pid_t pid = fork();
        if (pid == 0) {
            auto rv = ss::Rendezvous::join(address, r, ranks);
            if (!rv) {
                std::fprintf(stderr, "rank %d: %s\n", r, rv.error().toString().c_str());
                _exit(1);
            }
            for (int i = 0; i < repeats; ++i)
                if (!(*rv)->measureClockOffset(32) || !(*rv)->barrier())
                    _exit(1);
            _exit(0);
        }
        children.push_back(pid);
    }
    auto rv = ss::Rendezvous::join(address, 0, ranks);
    if (!rv) {
        std::fprintf(stderr, "rank 0: %s\n", rv.error().toString().c_str());
        return 1;
    }
    std::vector<double> uncertainties;
    double worstOffset = 0;
    int outside = 0;
    for (int i = 0; i < repeats; ++i) {
        std::vector<ss::ClockOffset> all;
        if (auto o = (*rv)->measureClockOffset(32, &all); !o) {
            std::fprintf(stderr, "%s\n", o.error().toString().c_str());
            return 1;
        }
        if (!(*rv)->barrier())
            return 1;
        std::printf("repeat %2d:", i + 1);
        for (const ss::ClockOffset& c : all) {
            if (c.rank == 0)
                continue;
            std::printf(" rank %d %+.2f ± %.2f µs", c.rank, double(c.offsetNs) / 1e3, double(c.uncertaintyNs) / 1e3);
            uncertainties.push_back(double(c.uncertaintyNs) / 1e3);
            worstOffset = std::max(worstOffset, std::abs(double(c.offsetNs)) / 1e3);
            outside += std::llabs(c.offsetNs) > c.uncertaintyNs + 1;
        }
        std::printf("\n");
    }
    int failed = 0;
    for (pid_t pid : children) {
        int status = 0;
        waitpid(pid, &status, 0);
        failed += !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    std::sort(uncertainties.begin(), uncertainties.end());
    std::printf("%d ranks, %d repeats of 32 round trips: uncertainty min %.2f, median %.2f, max %.2f µs; largest "
                "|offset| %.2f µs (true offset 0); %d offsets outside their uncertainty; %d ranks failed\n",
                ranks, repeats, uncertainties.front(), uncertainties[uncertainties.size() / 2], uncertainties.back(),
                worstOffset, outside, failed);
    return failed == 0 && outside == 0 ? 0 : 1;
}
