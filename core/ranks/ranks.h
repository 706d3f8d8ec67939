// Per-rank runs under the launchers people already use: `mpirun`/`mpiexec` (Open MPI, MPICH's Hydra), Slurm's `srun`
// and PyTorch's `torchrun`. Which rank this process is, read from the launcher's environment; the per-rank output
// file (`-o job.%r.json`); and what a rank's trace records about itself and its clock, so that `merge`
// (rank_merge.h) can put the ranks on one timeline. docs/RANKS.md describes both.
#pragma once

#include "result.h"
#include "trace.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace streamscope {

inline constexpr int kMaxRanks = 4096; // world sizes above it are refused (merge holds every rank in memory)

struct RankInfo {
    int rank = 0;
    int worldSize = 1;
    int localRank = 0;      // the rank among those on this host
    int localWorldSize = 0; // ranks on this host; 0: the launcher does not say
    std::string launcher;   // "Open MPI", "MPICH", "torchrun", "Slurm"
    std::string variables;  // the variables it came from, for messages: "OMPI_COMM_WORLD_RANK=1, ..."
};

// getenv, or a table in tests.
using EnvLookup = std::function<const char*(const char*)>;

// The first launcher whose variables are set, in this order: Open MPI (OMPI_COMM_WORLD_RANK, _SIZE, _LOCAL_RANK,
// _LOCAL_SIZE), MPICH (PMI_RANK, PMI_SIZE, MPI_LOCALRANKID, MPI_LOCALNRANKS), torchrun (RANK, WORLD_SIZE, LOCAL_RANK,
// LOCAL_WORLD_SIZE), Slurm inside a job step (SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID; only with SLURM_STEP_ID
// set, so that a batch script's own environment is not taken for a rank). torchrun comes before Slurm because
// `srun torchrun ...` gives each process torchrun's global rank and Slurm's per-node one. nullopt: no launcher.
// An error names the variable and what is wrong with its value.
Result<std::optional<RankInfo>> rankFromEnvironment(const EnvLookup& env);
Result<std::optional<RankInfo>> rankFromEnvironment(); // the process's environment

// The output file of one rank: %r is the rank, %l the local rank, %h the host name, %% a percent sign. With more than
// one rank the pattern must contain %r: ranks never share a file.
Result<std::string> expandRankPattern(const std::string& pattern, const RankInfo& rank, const std::string& host);

// This machine's host name ("" when it cannot be read).
std::string localHostName();

// This rank's steady clock against rank 0's, measured by ping-pong through the rendezvous (rendezvous.h): rank 0's
// steady clock = this rank's + offsetNs, within ±uncertaintyNs. Rank 0 itself: offset 0, uncertainty 0, 0 samples.
struct ClockSync {
    int64_t offsetNs = 0;
    int64_t uncertaintyNs = 0;
    int samples = 0;
    std::string rootHost; // rank 0's host
    std::string job;      // the rendezvous' id: ranks of one job share it
    // This rank's steady clock when the offset was measured (the middle of the round trip it was taken from); not in
    // traces written before the offset was measured twice.
    std::optional<int64_t> atNs;
    // The same measurement again after the run, so that `merge` corrects the hosts' clock drift between the two
    // (clock_alignment.h). Absent where it could not be taken; `afterMissing` then says why.
    struct Sample {
        int64_t offsetNs = 0;
        int64_t uncertaintyNs = 0;
        int samples = 0;
        int64_t atNs = 0;
    };
    std::optional<Sample> after;
    std::string afterMissing;
};

// How a rank's trace times relate to its host's clocks, sampled when the run ends.
struct RankClock {
    bool simulated = false;        // simulated time: every rank starts at 0
    int64_t originNs = 0;          // trace time 0 on the host's steady clock (CLOCK_MONOTONIC)
    int64_t wallOffsetNs = 0;      // system clock (CLOCK_REALTIME) minus steady clock, from the best of several samples
    int64_t wallOffsetErrorNs = 0; // half the read interval of that sample
    std::optional<ClockSync> sync; // measured when the ranks met at a rendezvous
};

// The offset between the system clock and the steady clock now: the tightest of `samples` back-to-back reads.
RankClock sampleWallOffset(int samples = 9);

// Records rank, world size, local rank, launcher, host and clock in the trace's settings (keys in docs/RANKS.md).
void addRankSettings(RunInfo& info, const RankInfo& rank, const std::string& host, const RankClock& clock);

// The clock_sync_* settings of a rank's trace; nullopt when it has none. An error names the setting that is not
// what addRankSettings writes.
Result<std::optional<ClockSync>> readClockSync(const RunInfo& info);

} // namespace streamscope
