#include "scenario.h"

#include "enum_names.h"

#include <algorithm>
#include <array>
#include <charconv>

namespace streamscope {

namespace {

using detail::lookup;
using detail::nameOf;

constexpr std::array<std::pair<StreamKind, std::string_view>, 4> kStreamKinds{{
    {StreamKind::LegacyDefault, "legacy-default"},
    {StreamKind::PerThreadDefault, "per-thread-default"},
    {StreamKind::Blocking, "blocking"},
    {StreamKind::NonBlocking, "non-blocking"},
}};

constexpr std::array<std::pair<OpKind, std::string_view>, 14> kOpKinds{{
    {OpKind::Kernel, "kernel"},
    {OpKind::Memcpy, "memcpy"},
    {OpKind::Memset, "memset"},
    {OpKind::Record, "record"},
    {OpKind::Wait, "wait"},
    {OpKind::HostFunc, "host-func"},
    {OpKind::StreamSync, "stream-sync"},
    {OpKind::EventSync, "event-sync"},
    {OpKind::DeviceSync, "device-sync"},
    {OpKind::HostWork, "host-work"},
    {OpKind::Graph, "graph"},
    {OpKind::Malloc, "malloc"},
    {OpKind::Free, "free"},
    {OpKind::Collective, "collective"},
}};

constexpr std::array<std::pair<CollectiveKind, std::string_view>, 6> kCollectiveKinds{{
    {CollectiveKind::AllReduce, "all-reduce"},
    {CollectiveKind::AllGather, "all-gather"},
    {CollectiveKind::ReduceScatter, "reduce-scatter"},
    {CollectiveKind::Broadcast, "broadcast"},
    {CollectiveKind::Send, "send"},
    {CollectiveKind::Recv, "recv"},
}};

constexpr std::array<std::pair<CollectiveAlgorithm, std::string_view>, 3> kAlgorithms{{
    {CollectiveAlgorithm::Auto, "auto"},
    {CollectiveAlgorithm::Ring, "ring"},
    {CollectiveAlgorithm::Tree, "tree"},
}};

constexpr std::array<std::pair<RankLink, std::string_view>, 2> kRankLinks{{
    {RankLink::NvLink, "nvlink"},
    {RankLink::Pcie, "pcie"},
}};

constexpr std::array<std::pair<CopyKind, std::string_view>, 4> kCopyKinds{{
    {CopyKind::H2D, "h2d"},
    {CopyKind::D2H, "d2h"},
    {CopyKind::D2D, "d2d"},
    {CopyKind::P2P, "p2p"},
}};

constexpr std::array<std::pair<KernelKind, std::string_view>, 7> kKernelKinds{{
    {KernelKind::Spin, "spin"},
    {KernelKind::Empty, "empty"},
    {KernelKind::Fma, "fma"},
    {KernelKind::Triad, "triad"},
    {KernelKind::Matmul, "matmul"},
    {KernelKind::Transpose, "transpose"},
    {KernelKind::Reduce, "reduce"},
}};

constexpr std::array<std::pair<TimingMode, std::string_view>, 4> kTimingModes{{
    {TimingMode::Auto, "auto"},
    {TimingMode::Cupti, "cupti"},
    {TimingMode::Events, "events"},
    {TimingMode::Both, "both"},
}};

uint32_t ceilDiv(int64_t a, int64_t b)
{
    return uint32_t(std::max<int64_t>(1, (a + b - 1) / b));
}

} // namespace

std::string_view toString(StreamKind k)
{
    return nameOf(kStreamKinds, k);
}
std::string_view toString(OpKind k)
{
    return nameOf(kOpKinds, k);
}
std::string_view toString(CopyKind k)
{
    return nameOf(kCopyKinds, k);
}
std::string_view toString(KernelKind k)
{
    return nameOf(kKernelKinds, k);
}
std::string_view toString(TimingMode k)
{
    return nameOf(kTimingModes, k);
}
std::optional<TimingMode> timingModeFromString(std::string_view s)
{
    return lookup(kTimingModes, s);
}
std::optional<StreamKind> streamKindFromString(std::string_view s)
{
    return lookup(kStreamKinds, s);
}
// A collective is spelled by its kind ("all-reduce"); "collective" itself names no op a scenario can hold.
std::optional<OpKind> opKindFromString(std::string_view s)
{
    if (lookup(kCollectiveKinds, s))
        return OpKind::Collective;
    if (s == "collective")
        return std::nullopt;
    return lookup(kOpKinds, s);
}
std::string_view toString(CollectiveKind k)
{
    return nameOf(kCollectiveKinds, k);
}
std::string_view toString(CollectiveAlgorithm k)
{
    return nameOf(kAlgorithms, k);
}
std::string_view toString(RankLink k)
{
    return nameOf(kRankLinks, k);
}
std::optional<CollectiveKind> collectiveKindFromString(std::string_view s)
{
    return lookup(kCollectiveKinds, s);
}
std::optional<CollectiveAlgorithm> collectiveAlgorithmFromString(std::string_view s)
{
    return lookup(kAlgorithms, s);
}
std::optional<RankLink> rankLinkFromString(std::string_view s)
{
    return lookup(kRankLinks, s);
}
std::string_view opName(const Op& op)
{
    return op.kind == OpKind::Collective ? toString(op.collective) : toString(op.kind);
}
std::string rankPrefix(int rank)
{
    return "rank " + std::to_string(rank) + " · ";
}
bool hasCollectives(const Scenario& s)
{
    for (const auto& t : s.threads)
        for (const auto& op : t.ops)
            if (op.kind == OpKind::Collective)
                return true;
    return false;
}
std::optional<CopyKind> copyKindFromString(std::string_view s)
{
    return lookup(kCopyKinds, s);
}
std::optional<KernelKind> kernelKindFromString(std::string_view s)
{
    return lookup(kKernelKinds, s);
}

std::optional<int> RunSettings::maxConnections() const
{
    auto it = env.find("CUDA_DEVICE_MAX_CONNECTIONS");
    if (it == env.end())
        return std::nullopt;
    int v = 0;
    auto [p, ec] = std::from_chars(it->second.data(), it->second.data() + it->second.size(), v);
    if (ec != std::errc() || p != it->second.data() + it->second.size() || v < 1)
        return std::nullopt;
    return v;
}

int Scenario::streamIndex(std::string_view name) const
{
    for (size_t i = 0; i < streams.size(); ++i)
        if (streams[i].name == name)
            return int(i);
    return -1;
}

int Scenario::eventIndex(std::string_view name) const
{
    for (size_t i = 0; i < events.size(); ++i)
        if (events[i] == name)
            return int(i);
    return -1;
}

const DeviceSpec* Scenario::device(int index) const
{
    for (const auto& d : devices)
        if (d.index == index)
            return &d;
    return nullptr;
}

bool isGpuOp(OpKind k)
{
    switch (k) {
    case OpKind::Kernel:
    case OpKind::Memcpy:
    case OpKind::Memset:
    case OpKind::HostFunc:
    case OpKind::Graph:
    case OpKind::Collective: return true;
    default: return false;
    }
}

std::string displayName(const Op& op)
{
    if (!op.name.empty())
        return op.name;
    switch (op.kind) {
    case OpKind::Kernel: return std::string(toString(op.kernel));
    case OpKind::Memcpy: return "memcpy " + std::string(toString(op.copy));
    case OpKind::Record: return "record " + op.event;
    case OpKind::Wait: return "wait " + op.event;
    case OpKind::EventSync: return "event-sync " + op.event;
    case OpKind::StreamSync: return "stream-sync " + op.stream;
    case OpKind::Collective: return std::string(toString(op.collective));
    default: return std::string(toString(op.kind));
    }
}

Dim3 effectiveGrid(const Op& op)
{
    if (op.gridGiven || op.kind != OpKind::Kernel)
        return op.grid;
    const int64_t threads = std::max<int64_t>(1, int64_t(op.block.count()));
    const int64_t n = std::max<int64_t>(1, op.size);
    switch (op.kernel) {
    case KernelKind::Matmul:
    case KernelKind::Transpose: {
        // 2D tiles of block.x x block.y (the library uses 16x16 or 32x8 tiles)
        const uint32_t tile = std::max<uint32_t>(1, op.block.x);
        return Dim3{ceilDiv(n, tile), ceilDiv(n, tile), 1};
    }
    case KernelKind::Triad:
    case KernelKind::Reduce: return Dim3{std::min<uint32_t>(ceilDiv(n, threads), 1u << 20), 1, 1};
    default: return op.grid;
    }
}

int64_t countOperations(const Scenario& s)
{
    int64_t total = 0;
    for (const auto& t : s.threads) {
        int64_t perPass = 0;
        for (const auto& op : t.ops)
            perPass += 1 + int64_t(op.ops.size());
        total += perPass * std::max(1, t.repeat);
    }
    return total * std::max(1, s.run.iterations);
}

} // namespace streamscope

namespace streamscope {

std::string_view cudaApiName(OpKind k)
{
    switch (k) {
    case OpKind::Kernel: return "cudaLaunchKernel";
    case OpKind::Memcpy: return "cudaMemcpyAsync";
    case OpKind::Memset: return "cudaMemsetAsync";
    case OpKind::Record: return "cudaEventRecord";
    case OpKind::Wait: return "cudaStreamWaitEvent";
    case OpKind::HostFunc: return "cudaLaunchHostFunc";
    case OpKind::StreamSync: return "cudaStreamSynchronize";
    case OpKind::EventSync: return "cudaEventSynchronize";
    case OpKind::DeviceSync: return "cudaDeviceSynchronize";
    case OpKind::HostWork: return "host-work";
    case OpKind::Graph: return "cudaGraphLaunch";
    case OpKind::Malloc: return "cudaMalloc";
    case OpKind::Free: return "cudaFree";
    case OpKind::Collective: return "ncclCollective";
    }
    return "?";
}

} // namespace streamscope
