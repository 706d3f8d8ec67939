// Rank 0's few bytes to every rank of a job: how the ranks of a GPU job share NCCL's unique id (128 bytes that
// rank 0 makes and every rank needs to join the communicator). The CUDA backend takes any RankBroadcast; this file
// provides one through a file on a filesystem the ranks share (ranks on one host), docs/RANKS.md "Collectives on
// GPUs".
#pragma once

#include "ranks.h"
#include "result.h"

#include <chrono>
#include <functional>
#include <string>

namespace streamscope {

// Called once per blob by every rank of the job, in the same order on every rank: rank 0 passes its blob and gets
// it back; the other ranks pass an empty string and get rank 0's blob. An error (timeout, unreadable file) says
// what was waited for and where.
using RankBroadcast = std::function<Result<std::string>(const std::string& blob)>;

// A RankBroadcast through files: the k-th broadcast of rank 0 writes `path`.k atomically (a temporary file renamed
// into place), holding `jobKey` and the blob; the other ranks poll for that file until `timeout` and take it only
// when it holds their own jobKey, so that a file an earlier job left behind is never read as this job's. Rank 0 may
// remove the files once every rank has read them (removeBroadcastFiles).
RankBroadcast fileBroadcast(std::string path, int rank, std::string jobKey,
                            std::chrono::milliseconds timeout = std::chrono::seconds(120));
// Removes the files rank 0 wrote for `count` broadcasts through `path`.
void removeBroadcastFiles(const std::string& path, int count);

// What tells this job from another, the same on every rank of it: the launcher's job variables (Slurm's job and
// step, Open MPI's or PMIx's namespace, torchrun's run id, MPICH's KVS name) where set, else the id of this
// process's parent (the launcher's daemon on this host: mpirun's, srun's slurmstepd, torchrun's agent).
std::string jobKeyFromEnvironment(const EnvLookup& env);

// The broadcast file a rank job uses when the command line names none: the output pattern with %r, %l replaced by
// "ranks" and ".nccl-id" appended ("job.%r.json" -> "job.ranks.json.nccl-id"), %h by the host; without an output
// pattern, streamscope-nccl-id.<jobKey digest> in the temporary folder.
std::string defaultBroadcastPath(const std::string& outputPattern, const std::string& host, const std::string& jobKey);

} // namespace streamscope
