// The simulator's shared resources: what work running at the same time on one device takes from each other. Copies
// share the link (both directions at once), work on the device memory shares its bandwidth (memsets,
// device-to-device copies, memory-bound kernels), and compute-bound kernels share the SMs' pipelines. Each op or
// batch of thread blocks runs at a rate; when what runs beside it changes, its rate is set again and its end moved
// (the event at the old end is then ignored).
#include "simulator_state.h"

namespace streamscope::sim_detail {

namespace {

// Work (a batch of blocks, a copy) whose rate changes now: what it did at its old rate is done, the rest takes its
// new one. False when the rate is unchanged (its end stands).
template <class Work>
bool changeRate(Work& w, double rate, int64_t now)
{
    if (rate == w.rate)
        return false;
    w.workLeftNs = std::max(0.0, w.workLeftNs - double(now - w.progressAt) * w.rate);
    w.progressAt = now;
    w.rate = rate;
    w.end = now + int64_t(std::ceil(w.workLeftNs / rate));
    return true;
}

// The fraction of the device's block slots a kernel holds now, and would hold with all its blocks on the SMs.
double heldNow(const GpuOp& k)
{
    return double(k.resident) / k.capacity;
}
double heldWhole(const GpuOp& k)
{
    return std::min(1.0, double(k.blocksTotal) / k.capacity);
}

// A memory-bound kernel's speed alone. A streaming kernel of fewer blocks than the device holds reaches the device's
// bandwidth already at memory_saturation of the resident blocks (each block keeps more loads in flight than its
// share needs; on an H200 a triad of 264 blocks, a quarter of what the device holds, moved 192 MiB at 1.56 TB/s,
// half the full-grid rate). A tiled kernel's blocks wait at a barrier for each tile: they run in proportion (the
// transpose of 264 blocks ran 163 µs where its share of the rate gives 175 µs).
double aloneSpeed(const GpuOp& k, const DeviceProfile& p)
{
    if (k.load != KernelLoad::Streaming)
        return 1.0;
    return 1.0 / std::clamp(heldWhole(k), std::min(1.0, p.memorySaturation), 1.0);
}

} // namespace

// The device memory's load, in units of its bandwidth: each memset and device-to-device copy saturates it alone (1),
// a memory-bound kernel takes the fraction its blocks move at their speed alone.
double Simulation::dramDemand(const DeviceState& dev) const
{
    double d = double(dev.dramRunning.size());
    for (uint32_t g : dev.runningKernels) {
        const auto& k = m_ops[g];
        if (k.load == KernelLoad::Streaming || k.load == KernelLoad::Tiled)
            d += heldNow(k) * aloneSpeed(k, *dev.profile);
    }
    return d;
}

void Simulation::setRates(DeviceState& dev)
{
    const double dram = dramDemand(dev);
    setKernelRates(dev, dram);
    setCopyRates(dev, dram);
}

// Kernels side by side (measured on an H200, tests/data/h200/experiments/kernel-interference/):
// - Compute-bound kernels (fma, matmul) share the SMs' pipelines with every kernel that works beside them. A
//   compute-bound kernel of few blocks reaches the device's full rate at compute_saturation of the resident blocks;
//   the blocks of all working kernels on the SMs count towards that, so beside others it gets less. Two 264-block
//   matmuls side by side ran 241-245 µs against 198 alone, one beside a 264-block transpose or triad slowed too;
//   beside a spin (whose blocks wait on the clock) it did not.
// - Memory-bound kernels, memsets and device-to-device copies share the device memory's bandwidth: while their
//   demand (dramDemand) exceeds it, each runs at its speed alone divided by the demand.
void Simulation::setKernelRates(DeviceState& dev, double dram)
{
    const DeviceProfile& p = *dev.profile;
    double working = 0;
    for (uint32_t g : dev.runningKernels)
        if (m_ops[g].load != KernelLoad::None)
            working += heldNow(m_ops[g]);
    for (uint32_t g : dev.runningKernels) {
        auto& k = m_ops[g];
        switch (k.load) {
        case KernelLoad::None: k.speed = 1.0; break;
        case KernelLoad::Compute:
            k.speed = 1.0 / std::clamp(std::max(working, heldWhole(k)), std::min(1.0, p.computeSaturation), 1.0);
            break;
        case KernelLoad::Streaming:
        case KernelLoad::Tiled: k.speed = aloneSpeed(k, p) / std::max(1.0, dram); break;
        }
    }
    for (uint32_t b : dev.runningBatches) {
        auto& batch = m_batches[b];
        if (changeRate(batch, m_ops[batch.kernel].speed, m_now)) {
            ++batch.pending;
            schedule(batch.end, EvType::BlocksDone, b);
        }
    }
}

// Pinned copies in both directions at once share the link: each runs at its duplex bandwidth while the other
// runs. Memsets and device-to-device copies each saturate the device memory: with other work on it they run at
// their rate divided by the memory's demand (k of them alone: 1/k).
void Simulation::setCopyRates(DeviceState& dev, double dram)
{
    const uint32_t h2d = dev.engineRunning.empty() ? kNone : dev.engineRunning[0];
    const uint32_t d2h = dev.engineRunning.size() >= 2 ? dev.engineRunning[1] : kNone;
    const bool duplex = h2d != kNone && d2h != kNone && m_ops[h2d].duplexRate < 1.0 && m_ops[d2h].duplexRate < 1.0;
    const double dramShare = 1.0 / std::max(1.0, dram);
    auto setRate = [&](uint32_t g) {
        auto& op = m_ops[g];
        double rate = duplex && (g == h2d || g == d2h) ? op.duplexRate : 1.0;
        if (op.dramBound)
            rate *= dramShare;
        if (changeRate(op, rate, m_now))
            schedule(op.end, EvType::OpDone, g);
    };
    for (uint32_t g : dev.engineRunning)
        if (g != kNone && m_ops[g].device == int(&dev - m_devices.data())) // a peer copy: its source's business
            setRate(g);
    for (uint32_t g : dev.dramRunning)
        if (m_ops[g].type == GpuOpType::Memset)
            setRate(g); // (device-to-device copies are among engineRunning)
}

} // namespace streamscope::sim_detail
