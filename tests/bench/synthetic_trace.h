// A synthetic trace for the benchmarks that need one of any size without running the simulator (100 M spans in about
// 2.2 GB): 64 tracks, 8 host threads issuing API calls with launch arrows and 56 streams of kernels and copies on 2
// devices, spans of 1-20 us with 0-5 us gaps, the same for the same size (fixed seed).
#pragma once

#include "trace.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace streamscope::bench {

inline constexpr int kHostTracks = 8;
inline constexpr int kStreamTracks = 56;

// Spans laid out track by track in start order (so finalize() has nothing to move): 1-20 us each with 0-5 us gaps.
inline std::shared_ptr<Trace> syntheticTrace(size_t n)
{
    auto t = std::make_shared<Trace>();
    for (int h = 0; h < kHostTracks; ++h) {
        Track tr;
        tr.kind = TrackKind::HostThread;
        tr.name = "thread " + std::to_string(h);
        t->addTrack(tr);
    }
    for (int s = 0; s < kStreamTracks; ++s) {
        Track tr;
        tr.kind = TrackKind::Stream;
        tr.device = s % 2;
        tr.name = "s" + std::to_string(s);
        t->addTrack(tr);
    }
    for (int d = 0; d < 2; ++d) {
        DeviceInfo info;
        info.index = d;
        info.name = "synthetic GPU";
        t->info.devices.push_back(info);
    }
    const int tracks = kHostTracks + kStreamTracks;
    t->spans.reserve(n);
    std::mt19937_64 rng(42);
    std::uniform_int_distribution<int64_t> dur(1000, 20000), gap(0, 5000);
    const SpanKind gpuKinds[] = {SpanKind::Kernel,    SpanKind::Kernel,    SpanKind::Kernel,
                                 SpanKind::MemcpyH2D, SpanKind::MemcpyD2H, SpanKind::Memset};
    const char* gpuNames[] = {"gemm", "softmax", "layernorm", "h2d chunk", "d2h chunk", "memset"};
    std::vector<std::vector<int64_t>> streamStarts(kStreamTracks);
    for (int tr = 0; tr < tracks; ++tr) {
        const size_t count = n / tracks + (size_t(tr) < n % tracks ? 1 : 0);
        int64_t time = gap(rng);
        const bool host = tr < kHostTracks;
        for (size_t i = 0; i < count; ++i) {
            SpanInit s;
            s.track = uint32_t(tr);
            const int k = int(rng() % 6);
            s.kind = host ? (i % 8 == 7 ? SpanKind::Sync : SpanKind::ApiCall) : gpuKinds[k];
            s.name = host ? (s.kind == SpanKind::Sync ? "cudaStreamSynchronize" : "cudaLaunchKernel") : gpuNames[k];
            s.start = time;
            s.end = time + dur(rng);
            s.bytes = isCopySpan(s.kind) ? 1 << 20 : 0;
            time = s.end + gap(rng);
            if (!host)
                streamStarts[size_t(tr - kHostTracks)].push_back(s.start);
            t->addSpan(s);
        }
    }
    // Launch arrows: each API call to the next op of one of its thread's streams (short in time, as real ones are).
    t->finalize();
    for (int h = 0; h < kHostTracks; ++h) {
        for (uint32_t i = t->trackBegin(uint32_t(h)); i < t->trackEnd(uint32_t(h)); ++i) {
            if (t->spans.kind[i] != SpanKind::ApiCall)
                continue;
            const int s = (h * 7 + int(i % 7)) % kStreamTracks;
            const auto& starts = streamStarts[size_t(s)];
            const auto it = std::lower_bound(starts.begin(), starts.end(), t->spans.start[i]);
            if (it == starts.end())
                continue;
            const uint32_t to = t->trackBegin(uint32_t(kHostTracks + s)) + uint32_t(it - starts.begin());
            t->addFlow(i, to, FlowKind::Launch);
        }
    }
    t->finalize();
    return t;
}

} // namespace streamscope::bench
