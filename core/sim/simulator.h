// The simulator backend: a deterministic discrete-event simulation of the CUDA rules of DESIGN §3 (stream order,
// legacy default stream barrier, events, block dispatch with leftovers, hardware work queues, copy engines,
// pageable copies, host functions, implicit syncs, graphs), driven by a device profile per device.
#pragma once

#include "backend.h"
#include "device_profile.h"

#include <map>
#include <optional>

namespace streamscope {

// A scenario op as a recorded run names it: scenario thread, op index in that thread, graph node (-1: the op itself).
struct MeasuredOpKey {
    int thread = 0;
    int op = 0;
    int node = -1;
    auto operator<=>(const MeasuredOpKey&) const = default;
};

struct SimulatorOptions {
    // Overrides every device's profile (the CLI's --profile); otherwise each device's scenario profile, else h200.
    std::optional<DeviceProfile> profile;
    // Profiles by device index, taking precedence over the scenario's names.
    std::map<int, DeviceProfile> deviceProfiles;
    // Durations measured in a recorded run (the replay, whatif.h), used instead of the model's for the ops named:
    // a GPU op's span (a kernel's blocks then take that time per wave of the whole device), and the host time of a
    // call that does not wait (a launch, an event record or wait, host work, cudaMalloc), and the cost of cudaFree
    // after its implicit synchronization. Ops not named are modelled.
    std::map<MeasuredOpKey, int64_t> measuredGpuNs;
    std::map<MeasuredOpKey, int64_t> measuredHostNs;
    // The host time before an op's call, after the thread's previous call returned (outside CUDA calls).
    std::map<MeasuredOpKey, int64_t> measuredHostGapNs;
    // The time between a GPU op and the previous one in its stream, where the op was queued behind it (instead of the
    // profile's kernel_overhead_ns or graph_node_overhead_ns).
    std::map<MeasuredOpKey, int64_t> measuredStreamGapNs;
};

class SimulatorBackend final : public Backend {
public:
    explicit SimulatorBackend(SimulatorOptions options = {});
    ~SimulatorBackend() override;

    std::string name() const override { return "simulator"; }
    TraceSource source() const override { return TraceSource::Simulator; }
    bool simulatesHostThreads() const override { return true; }
    Status prepare(const RunPlan& plan, RunInfo& info) override;
    Status simulate(const RunPlan& plan, Recording& out) override;
    Status finish(Recording& rec) override;

private:
    SimulatorOptions m_options;
    std::vector<DeviceProfile> m_profiles; // by device index
};

} // namespace streamscope
