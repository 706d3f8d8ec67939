#pragma once
// Spreading work over streams: the one rule behind the quick controls' streams-per-thread knob
// (ui/editor/quick_settings.cpp, reshapeThread) and the streams sweep (core/whatif/whatif.cpp, sweepScenario).
//
// A thread's stream work is cut into chains: a launch-type op (kernel, copy, memset, host function, graph) issued
// into a created stream other than the previous stream op's starts a new chain; an event record or wait and a stream
// sync join the chain their stream is in at that point (and start one when the stream has none yet), so that a
// record still records after the work it follows and a sync still waits for it. Spreading hands each chain, in issue
// order, to the stream a caller-given dealer picks, and rewrites the stream of every op of the chain (graph nodes
// included). The callers differ only in the streams they deal to and the order of dealing: the knob keeps each
// thread's own streams and deals its chains round robin from its first stream; the sweep replaces every created
// stream by N new ones per device and deals the chains of all threads round robin across them.

#include "scenario.h"

#include <functional>
#include <string>
#include <vector>

namespace streamscope {

// Streams an application creates (blocking or non-blocking): the ones work can be spread over. The default streams
// are never moved to or from.
bool isCreatedStream(StreamKind kind);

// Picks the stream a chain goes to, given the created stream it is in now and the device of that stream; called once
// per chain, in issue order.
using ChainDealer = std::function<std::string(const std::string& stream, int device)>;

// Spreads the chains of `ops` (one thread's op list, in issue order) with `deal`. Ops outside a created stream of
// `scenario` (host work, device syncs, default-stream work) stay where they are. Returns the number of chains.
size_t spreadChains(const Scenario& scenario, std::vector<Op>& ops, const ChainDealer& deal);

// Round-robin dealing over `targets`, from the first: the dealer of one thread for the streams-per-thread knob.
ChainDealer roundRobin(std::vector<std::string> targets);

} // namespace streamscope
