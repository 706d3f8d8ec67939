// The run plan: a scenario expanded into what actually runs — host threads (worker pools expanded), streams
// (per-thread default streams instantiated per host thread) and their hardware work queues.
#pragma once

#include "result.h"
#include "scenario.h"

#include <string>
#include <vector>

namespace streamscope {

struct PlannedStream {
    std::string name; // scenario name; per-thread default streams: "name@hostthread"
    int device = 0;
    StreamKind kind = StreamKind::Blocking;
    int priority = 0;
    int scenarioStream = -1;
    int hostThread = -1;   // per-thread default streams: the host thread that owns it
    int hardwareQueue = 0; // CUDA maps streams round-robin onto CUDA_DEVICE_MAX_CONNECTIONS queues
};

struct PlannedHostThread {
    std::string name; // thread name; pool workers: "name#worker"
    int thread = 0;   // scenario thread index
    int worker = 0;   // index within its pool (0 for plain threads)
    int device = 0;
};

// One op as a host thread issues it.
struct PlannedOp {
    const Op* op = nullptr; // the scenario op
    int thread = 0;         // scenario thread index
    int opIndex = 0;        // index within the thread's op list
    int iteration = 0;      // counts warm-up iterations first
    int task = 0;           // repeat index (task index, for a pool)
    int stream = -1;        // planned stream index, or -1
    bool warmup = false;
};

class RunPlan {
public:
    // Fails (BadInput) on a scenario that did not pass validation.
    static Result<RunPlan> make(const Scenario& scenario);

    const Scenario* scenario = nullptr;
    std::vector<PlannedStream> streams;
    std::vector<PlannedHostThread> hostThreads;
    std::vector<int> firstHostThread;   // per scenario thread: its first planned host thread
    std::vector<int> deviceConnections; // per device index: hardware queues in use
    int totalIterations() const;        // warm-up + measured

    // Planned stream of a scenario stream as used by a host thread.
    int stream(int scenarioStream, int hostThread) const;
    // Builds the PlannedOp for op `opIndex` of the scenario thread that `hostThread` belongs to.
    PlannedOp plannedOp(int hostThread, int opIndex, int iteration, int task) const;
    // Devices used (scenario device indices), ascending.
    std::vector<int> devices() const;

private:
    std::vector<std::vector<int>> m_streamOf; // [scenario stream][host thread] -> planned stream
};

} // namespace streamscope
