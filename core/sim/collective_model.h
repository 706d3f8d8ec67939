// The simulator's model of a collective's time (docs/SCENARIO.md "Collectives", docs/PROFILES.md "Links"): the
// classic alpha-beta costs of the ring and tree algorithms NCCL uses, with the link's one-way bandwidth `bps` and the
// latency of one step `latencyNs`. n ranks, S bytes (the whole buffer, as nccl-tests counts it):
//   all-reduce     ring: 2(n-1)/n * S/bw + 2(n-1) * latency     tree: 2 * S/bw + 2 * ceil(log2 n) * latency
//   all-gather, reduce-scatter   ring: (n-1)/n * S/bw + (n-1) * latency
//   broadcast      ring: S/bw + (n-1) * latency                  tree: S/bw + ceil(log2 n) * latency
//   send/recv      S/bw + latency
// "auto" takes the faster of ring and tree where both apply, as NCCL's tuner picks per call: the tree for small
// buffers (fewer steps), the ring for large ones (less data per link). One rank moves nothing: 0.
#pragma once

#include "scenario.h"

#include <cstdint>

namespace streamscope {

int64_t collectiveNs(CollectiveKind kind, CollectiveAlgorithm algorithm, int64_t bytes, int ranks, double bps,
                     int64_t latencyNs);
// The algorithm "auto" resolves to for these figures (ring where there is no tree).
CollectiveAlgorithm chosenAlgorithm(CollectiveKind kind, CollectiveAlgorithm algorithm, int64_t bytes, int ranks,
                                    double bps, int64_t latencyNs);

} // namespace streamscope
