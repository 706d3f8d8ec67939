// Ranges: named intervals of a framework or an annotation — PyTorch's CPU ops, record_function ranges and Python
// functions on a host thread, gpu_user_annotation on a stream — that enclose the calls and the GPU work they caused.
// They are no work of their own, so they are kept apart from it: on tracks of kind Ranges, one per nesting depth,
// next to the host thread or stream they annotate (one track per depth keeps every track's spans disjoint), and no
// metric, diagnostic or critical path counts them. "call" arrows lead from a range to the runtime calls made in it,
// so that a GPU operation walks back to the op that launched it: range -call-> runtime call -launch-> GPU op.
#pragma once

#include "trace.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace streamscope {

// Moves every range (SpanKind::Range) that lies on a host-thread or stream track onto Ranges tracks of that track,
// one per nesting depth (depth 0: the outermost), added after the existing tracks, ordered by parent and depth. A
// range that starts inside another and ends after it goes one deeper than its neighbours, so that no two ranges of a
// track overlap. Finalizes the trace (span indices change; flows follow them).
void placeRangesOnTracks(Trace& trace);

// Python functions as PyTorch's Python tracer names them: "model.py(12): forward", "nn.Module: Linear_0",
// "nn.Optimizer: SGD", "<built-in method matmul of type object at 0x...>".
bool isPythonFunctionName(std::string_view name);

inline constexpr uint32_t kNoOrigin = 0xffffffffu; // no such span

// Where a GPU operation came from.
struct LaunchOrigin {
    uint32_t call = kNoOrigin;   // the runtime call that enqueued it (its launch arrow)
    uint32_t op = kNoOrigin;     // the innermost range the call was made in (the call's "call" arrow)
    uint32_t python = kNoOrigin; // the innermost Python function around that range, where Python was traced
};

// Answers "which op launched this GPU span" for a finalized trace; built once (linear in spans and flows), then each
// query is a few binary searches.
class LaunchOrigins {
public:
    explicit LaunchOrigins(const Trace& trace);
    // Any span: a GPU operation goes through its launch arrow, a runtime call straight to its range.
    LaunchOrigin of(uint32_t span) const;
    // The ranges around a span on its host thread or stream, outermost first (the span itself excluded).
    std::vector<uint32_t> enclosingRanges(uint32_t span) const;

private:
    const Trace& m_t;
    std::vector<uint32_t> m_launchedBy;         // per span: the call with a launch arrow to it, or kNoOrigin
    std::vector<uint32_t> m_calledIn;           // per span: the range with a call arrow to it, or kNoOrigin
    std::vector<std::vector<uint32_t>> m_lanes; // per track: its Ranges tracks by depth
};

// The text the inspector shows: "aten::mm (python: model.py(12): forward)"; empty when the span has no op.
std::string launchOriginText(const Trace& trace, const LaunchOrigin& origin);

// GPU time grouped by the op that launched it (the op's name; "" for GPU work whose launch has no op).
struct OpGpuTime {
    std::string op;
    uint32_t spans = 0; // GPU operations
    int64_t gpuNs = 0;  // the sum of their durations
};
// Most GPU time first; ties by name.
std::vector<OpGpuTime> gpuTimeByLaunchingOp(const Trace& trace);
// The same from launchingOps(trace) computed before (a finalized trace).
std::vector<OpGpuTime> gpuTimeByLaunchingOp(const Trace& trace, const std::vector<uint32_t>& launchingOps);
// Per span of a finalized trace: LaunchOrigins::of(span).op (kNoOrigin where none; all kNoOrigin if not finalized).
std::vector<uint32_t> launchingOps(const Trace& trace);

} // namespace streamscope
