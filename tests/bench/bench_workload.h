// The workload the benchmarks share (bench_sim, bench_window): 16 host threads over 32 streams on one simulated
// H200; each thread repeats a task of 10 operations -- a pinned H2D copy, a spin kernel, an event record, a wait on
// the next thread's event, a triad kernel, a pinned D2H copy, a second record, an empty kernel, a stream sync and an
// event sync. About 1.5 spans and 0.8 arrows per operation.
#pragma once

#include "scenario.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace streamscope::bench {

inline Op gpuOp(OpKind kind, const std::string& stream)
{
    Op op;
    op.kind = kind;
    op.stream = stream;
    return op;
}

inline Op eventOp(OpKind kind, const std::string& stream, const std::string& event)
{
    Op op = gpuOp(kind, stream);
    op.event = event;
    return op;
}

// One task of a host thread: a small copy/compute pipeline over two of its streams, with a cross-thread event
// dependency, and a stream and an event synchronization at the end. 10 ops.
inline std::vector<Op> taskOps(int thread, int threads, const std::string& a, const std::string& b)
{
    std::vector<Op> ops;
    Op h2d = gpuOp(OpKind::Memcpy, a);
    h2d.copy = CopyKind::H2D;
    h2d.bytes = 256 << 10;
    ops.push_back(h2d);

    Op spin = gpuOp(OpKind::Kernel, a);
    spin.kernel = KernelKind::Spin;
    spin.grid = Dim3{8, 1, 1};
    spin.gridGiven = true;
    spin.durationUs = 10;
    ops.push_back(spin);

    ops.push_back(eventOp(OpKind::Record, a, "produced" + std::to_string(thread)));
    // Waits on the neighbour thread's event: a dependency between host threads, like a producer/consumer pair.
    ops.push_back(eventOp(OpKind::Wait, b, "produced" + std::to_string((thread + 1) % threads)));

    Op triad = gpuOp(OpKind::Kernel, b);
    triad.kernel = KernelKind::Triad;
    triad.size = 1 << 20;
    ops.push_back(triad);

    Op d2h = gpuOp(OpKind::Memcpy, b);
    d2h.copy = CopyKind::D2H;
    d2h.bytes = 256 << 10;
    ops.push_back(d2h);

    ops.push_back(eventOp(OpKind::Record, b, "done" + std::to_string(thread)));

    Op empty = gpuOp(OpKind::Kernel, a);
    empty.kernel = KernelKind::Empty;
    empty.grid = Dim3{1, 1, 1};
    empty.gridGiven = true;
    ops.push_back(empty);

    ops.push_back(gpuOp(OpKind::StreamSync, a));
    Op eventSync;
    eventSync.kind = OpKind::EventSync;
    eventSync.event = "done" + std::to_string(thread);
    ops.push_back(eventSync);
    return ops;
}

inline Scenario generate(int64_t targetOps, int threads, int streams)
{
    Scenario s;
    s.id = "bench-" + std::to_string(targetOps);
    s.title = "simulator benchmark";
    s.devices.push_back(DeviceSpec{0, "h200"});
    for (int i = 0; i < streams; ++i) {
        // Half blocking, half non-blocking; no legacy default stream, which would serialize everything.
        const auto kind = i % 2 == 0 ? StreamKind::NonBlocking : StreamKind::Blocking;
        s.streams.push_back(StreamSpec{"s" + std::to_string(i), 0, kind, 0});
    }
    const int64_t opsPerTask = int64_t(taskOps(0, threads, "a", "b").size());
    const auto repeat = int((targetOps + threads * opsPerTask - 1) / (threads * opsPerTask));
    for (int t = 0; t < threads; ++t) {
        ThreadSpec th;
        th.name = "host" + std::to_string(t);
        th.device = 0;
        th.repeat = std::max(1, repeat);
        const std::string a = "s" + std::to_string((2 * t) % streams);
        const std::string b = "s" + std::to_string((2 * t + 1) % streams);
        th.ops = taskOps(t, threads, a, b);
        s.threads.push_back(std::move(th));
    }
    return s;
}

} // namespace streamscope::bench
