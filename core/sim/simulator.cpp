// The simulator backend: SimulatorBackend prepares the device profiles of a run plan and runs a Simulation
// (simulator_state.h; its host side in simulator_host.cpp, its GPU side in simulator_gpu.cpp).
#include "simulator.h"
#include "simulator_state.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace streamscope {

using sim_detail::Simulation;

SimulatorBackend::SimulatorBackend(SimulatorOptions options) : m_options(std::move(options)) {}
SimulatorBackend::~SimulatorBackend() = default;

Status SimulatorBackend::prepare(const RunPlan& plan, RunInfo& info)
{
    const auto devices = plan.devices();
    const int maxDevice = devices.empty() ? 0 : devices.back();
    m_profiles.assign(size_t(maxDevice + 1), DeviceProfile{});
    std::vector<bool> used(size_t(maxDevice + 1), false);
    for (int d : devices)
        used[size_t(d)] = true;
    for (int d = 0; d <= maxDevice; ++d) {
        if (m_options.profile) {
            m_profiles[size_t(d)] = *m_options.profile;
            continue;
        }
        if (auto it = m_options.deviceProfiles.find(d); it != m_options.deviceProfiles.end()) {
            m_profiles[size_t(d)] = it->second;
            continue;
        }
        const DeviceSpec* spec = plan.scenario->device(d);
        auto p = findDeviceProfile(spec && !spec->profile.empty() ? spec->profile : std::string("h200"));
        if (!p)
            return Status(p.error(), ErrorClass::BadInput);
        m_profiles[size_t(d)] = *p;
    }
    info.devices.clear();
    for (int d : devices) {
        const auto& p = m_profiles[size_t(d)];
        DeviceInfo di;
        di.index = d;
        di.name = p.name + " (simulated)";
        di.properties = {
            {"profile", p.id},
            {"sm_count", std::to_string(p.smCount)},
            {"max_threads_per_sm", std::to_string(p.maxThreadsPerSm)},
            {"copy_engines", std::to_string(p.copyEngines)},
            {"hardware_queues", std::to_string(plan.deviceConnections[size_t(d)])},
        };
        info.devices.push_back(std::move(di));
        info.settings.emplace_back("profile[" + std::to_string(d) + "]", p.id);
    }
    info.clockAlignmentErrorNs = 0;
    return {};
}

Status SimulatorBackend::simulate(const RunPlan& plan, Recording& out)
{
    if (m_profiles.empty())
        return Error{{}, {}, "simulator: prepare() was not called"};
    try {
        Simulation sim(plan, m_profiles, m_options, out);
        return sim.run();
    } catch (const std::logic_error& e) {
        return Error{{}, {}, std::string("simulator: internal error: ") + e.what()};
    }
}

Status SimulatorBackend::finish(Recording&)
{
    return {};
}

} // namespace streamscope
