// The quick controls' knobs as plain functions over a Scenario (no Qt): read the knobs a scenario has, and derive
// the scenario a set of knob values stands for. The knobs are always applied to a *base* scenario (the one the user
// opened or last edited by hand), so that turning a knob back restores exactly what was there.
#pragma once

#include "scenario.h"
#include "stream_spread.h" // isCreatedStream

#include <memory>

namespace streamscope {

// Host memory of the H2D/D2H copies.
enum class MemoryMode {
    None,     // no H2D/D2H copies: the knob does nothing
    Pinned,   // cudaMallocHost: copies overlap with kernels
    Pageable, // malloc: cudaMemcpyAsync is staged and synchronous
    Mixed,    // both occur (left as they are)
};

// How the scenario's streams relate to the default stream.
enum class DefaultStreamMode {
    Legacy,      // created streams are blocking: they synchronize with the legacy default stream (NULL stream)
    PerThread,   // --default-stream per-thread: the default stream is an ordinary stream per host thread
    NonBlocking, // created streams are cudaStreamNonBlocking: no synchronization with the legacy default stream
    Mixed,       // none of the above (left as it is)
};

struct QuickSettings {
    int threads = 1;          // host threads (workers of a lone worker pool count as threads)
    int streamsPerThread = 0; // created streams a thread spreads its work over; 0: no thread issues stream work
    int chunks = 0;           // chunks per thread: runs of consecutive ops in one created stream; 0: none
    MemoryMode memory = MemoryMode::None;
    double kernelScale = 1.0; // kernel work relative to the base scenario (spin durations, problem sizes)
    DefaultStreamMode streamMode = DefaultStreamMode::Mixed;
    bool operator==(const QuickSettings&) const = default;
};

// The knob values `scenario` has now (kernelScale is always 1: the base is the reference).
QuickSettings detectQuickSettings(const Scenario& scenario);

// The scenario `wanted` stands for, derived from `base` (whose knobs are `baseSettings`). Knobs equal to the base's
// are not applied, so a scenario that does not fit a knob's pattern is left alone by it. Knob meanings:
// - threads: the last host thread is cloned (its own streams and events cloned with it, so that the clones issue
//   independent work) or host threads are dropped from the end; a lone worker pool changes its worker count;
// - chunks: a thread's chunks (runs of consecutive ops in one created stream; ops without a stream ride with the
//   chunk before them) are repeated round-robin or dropped from the end; op names ending in a number are renumbered;
// - streamsPerThread: chunk j of a thread goes to stream j mod n; streams are created (like the thread's first) or
//   dropped when no op uses them any more. Not the streams sweep (core/whatif/whatif.h), which replaces every ordinary
//   stream with N new ones and deals chains across all threads: the knob edits the scenario the user keeps;
// - memory: every H2D/D2H copy becomes pinned or pageable;
// - kernelScale: spin kernels' durations scale by it, problem sizes so that the work scales by it;
// - streamMode: created streams become blocking or non-blocking; default streams legacy or per-thread.
Scenario applyQuickSettings(const Scenario& base, const QuickSettings& baseSettings, const QuickSettings& wanted);

// What the quick controls remember between edits; kept with each undo step by ScenarioModel.
struct QuickState {
    Scenario base;
    QuickSettings baseSettings;
    QuickSettings settings;
};

} // namespace streamscope
