// The simulator backend: a deterministic discrete-event simulation of the CUDA rules of DESIGN §3 (stream order,
// legacy default stream barrier, events, block dispatch with leftovers, hardware work queues, copy engines,
// pageable copies, host functions, implicit syncs, graphs), driven by a device profile per device.
#pragma once

#include "backend.h"
#include "device_profile.h"

#include <map>
#include <optional>

namespace streamscope {

struct SimulatorOptions {
    // Overrides every device's profile (the CLI's --profile); otherwise each device's scenario profile, else h200.
    std::optional<DeviceProfile> profile;
    // Profiles by device index, taking precedence over the scenario's names.
    std::map<int, DeviceProfile> deviceProfiles;
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
