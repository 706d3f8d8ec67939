// Per-rank traces of other tools merged as one job (docs/RANKS.md "Other tools' traces"): a folder of PyTorch profiler
// traces (Kineto writes each rank in "distributedInfo") or several Nsight Systems SQLite exports (the rank from the
// file name, or the files' order). Neither tool records a clock that the ranks share exactly, so their times are
// aligned by the wall clock each trace records (PyTorch: baseTimeNanoseconds; Nsight Systems: the session's start,
// utcEpochNs), with an error the merge cannot know and says so; a trace without one is refused. NCCL kernels
// (ncclDevKernel_AllReduce_..., ncclKernel_...) become collective calls linked across ranks, so that the straggler
// diagnostic and the critical path read them as they read a simulated job's collectives.
#pragma once

#include "rank_merge.h"
#include "result.h"
#include "trace.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace streamscope {

// Which tool wrote a rank's trace, as far as merging goes.
enum class RankTraceTool { StreamScope, PyTorch, Nsys, Other };
std::string_view toString(RankTraceTool); // "StreamScope", "PyTorch profiler", "Nsight Systems", "other"
RankTraceTool rankTraceToolOf(const Trace& trace);

// The one entry point of `merge`: StreamScope's own per-rank traces go to mergeRankTraces; PyTorch or Nsight Systems
// traces get their rank and clock read here first. Traces of different tools are refused (they share no clock),
// as are traces of tools that record neither rank nor clock (Chrome JSON, CSV).
Result<MergeResult> mergeJobTraces(std::vector<RankTrace> ranks, const MergeOptions& options = {});

// The NCCL collective a kernel's name runs ("AllReduce", "AllGather", "ReduceScatter", "Broadcast", "Reduce",
// "SendRecv", "Generic", ...), empty where the kernel is not NCCL's.
std::string_view ncclCollectiveOf(std::string_view kernelName);

// Links the NCCL kernels of a merged job (rows "rank R · ...") across ranks by flows of kind "collective". The rule:
// on each rank, the streams that run NCCL kernels are numbered in the order of (device, stream id) -- NCCL runs each
// communicator's kernels in a stream of their own, and ranks that create their communicators in the same order get
// them in the same order -- and the k-th NCCL kernel of the n-th such stream of every rank is one call (NCCL requires
// every rank to issue a communicator's collectives in the same order). A call whose kernels run different
// collectives is not linked (the streams do not pair up); point-to-point kernels (SendRecv, Send, Recv) are not
// linked, since their kernels do not say the peer. Notes say what was left unlinked. Returns the calls linked.
size_t linkNcclKernels(Trace& merged, std::vector<std::string>& notes);

// The rank a file name gives: the last whole number in the file's name ("report.3.sqlite", "trace_rank12.json"),
// nullopt where it has none.
std::optional<int> rankFromFileName(std::string_view path);

} // namespace streamscope
