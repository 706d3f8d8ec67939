// The simulator, rule by rule (DESIGN §3): each test builds the smallest scenario that shows one rule and
// fails when the rule is removed from the simulator. This header holds what the test's files share: the scenario
// builder, simulating with a profile and queries on the trace, and the test class. The tests: tst_simulator.cpp
// (streams, events, hardware queues, block dispatch and kernel durations), tst_simulator_copies.cpp (copy engines,
// the link and memory bandwidth, older GPUs' shared queues), tst_simulator_host.cpp (host threads, their calls and
// host functions, graphs, iterations), tst_simulator_kernels.cpp (kernels side by side).
#pragma once

#include "device_profile.h"
#include "runner.h"
#include "scenario_json.h"
#include "simulator.h"
#include "trace_json.h"

#include <QTest>

#include <cmath>
#include <string>

using namespace streamscope;

inline QString q(const std::string& s)
{
    return QString::fromStdString(s);
}
inline QString operator""_q(const char* s, size_t n)
{
    return QString::fromUtf8(s, qsizetype(n));
}

// Builds scenarios in code.
class Builder {
public:
    Builder()
    {
        m_s.id = "test";
        m_s.devices.push_back({0, ""});
    }
    Builder& device(int index, const std::string& profile = {})
    {
        if (!m_s.device(index))
            m_s.devices.push_back({index, profile});
        else
            for (auto& d : m_s.devices)
                if (d.index == index)
                    d.profile = profile;
        return *this;
    }
    Builder& stream(const std::string& name, StreamKind kind = StreamKind::NonBlocking, int device = 0,
                    int priority = 0)
    {
        m_s.streams.push_back({name, device, kind, priority});
        return *this;
    }
    Builder& thread(const std::string& name, int device = 0, int repeat = 1, int workers = 1)
    {
        ThreadSpec t;
        t.name = name;
        t.device = device;
        t.repeat = repeat;
        t.workers = workers;
        m_s.threads.push_back(t);
        return *this;
    }
    Builder& env(const std::string& k, const std::string& v)
    {
        m_s.run.env[k] = v;
        return *this;
    }
    Builder& iterations(int warmup, int measured)
    {
        m_s.run.warmup = warmup;
        m_s.run.iterations = measured;
        return *this;
    }
    Builder& op(Op o)
    {
        m_s.threads.back().ops.push_back(std::move(o));
        return *this;
    }
    Builder& spin(const std::string& name, const std::string& stream, double us, uint32_t grid = 1,
                  uint32_t block = 256)
    {
        return op(spinOp(name, stream, us, grid, block));
    }
    Builder& copy(const std::string& name, const std::string& stream, CopyKind kind, int64_t bytes, bool pinned = true)
    {
        Op o;
        o.kind = OpKind::Memcpy;
        o.name = name;
        o.stream = stream;
        o.copy = kind;
        o.bytes = bytes;
        o.pinned = pinned;
        return op(o);
    }
    Builder& simple(OpKind kind, const std::string& stream = {}, const std::string& event = {}, double us = 0,
                    const std::string& name = {})
    {
        Op o;
        o.kind = kind;
        o.stream = stream;
        o.event = event;
        o.durationUs = us;
        o.name = name;
        o.bytes = kind == OpKind::Malloc || kind == OpKind::Free ? 1 << 20 : 0;
        return op(o);
    }
    static Op spinOp(const std::string& name, const std::string& stream, double us, uint32_t grid = 1,
                     uint32_t block = 256)
    {
        Op o;
        o.kind = OpKind::Kernel;
        o.kernel = KernelKind::Spin;
        o.name = name;
        o.stream = stream;
        o.durationUs = us;
        o.grid = {grid, 1, 1};
        o.gridGiven = true;
        o.block = {block, 1, 1};
        return o;
    }
    Scenario build() const
    {
        auto r = validateScenario(m_s, "test");
        if (!r) {
            qWarning("%s", r.error().toString().c_str());
            return m_s;
        }
        return r->scenario;
    }

private:
    Scenario m_s;
};

inline Trace simulate(const Scenario& s, const std::string& profile = "h200")
{
    SimulatorOptions opt;
    auto p = findDeviceProfile(profile);
    if (p)
        opt.profile = *p;
    SimulatorBackend sim(opt);
    auto out = runScenario(s, sim);
    if (!out.status)
        qWarning("%s", out.status.error().toString().c_str());
    return std::move(out.trace);
}

// With a profile of chosen figures (the h200 profile, then `change` applied).
template <typename F>
Trace simulateWith(const Scenario& s, F&& change)
{
    auto p = findDeviceProfile("h200");
    if (!p)
        qFatal("%s", p.error().toString().c_str());
    DeviceProfile profile = *p;
    change(profile);
    SimulatorOptions opt;
    opt.profile = profile;
    SimulatorBackend sim(opt);
    auto out = runScenario(s, sim);
    if (!out.status)
        qWarning("%s", out.status.error().toString().c_str());
    return std::move(out.trace);
}

// The GPU span with this name (the n-th, in start order), or -1.
inline int span(const Trace& t, const std::string& name, int nth = 0)
{
    std::vector<uint32_t> found;
    for (uint32_t i = 0; i < t.spanCount(); ++i)
        if (isGpuSpan(t.spans.kind[i]) && t.spanName(i) == name)
            found.push_back(i);
    std::sort(found.begin(), found.end(), [&](uint32_t a, uint32_t b) { return t.spans.start[a] < t.spans.start[b]; });
    return nth < int(found.size()) ? int(found[size_t(nth)]) : -1;
}

inline int hostSpan(const Trace& t, const std::string& name, int nth = 0)
{
    int seen = 0;
    for (uint32_t i = 0; i < t.spanCount(); ++i)
        if (!isGpuSpan(t.spans.kind[i]) && t.spanName(i) == name && seen++ == nth)
            return int(i);
    return -1;
}

inline int64_t startOf(const Trace& t, int i)
{
    return t.spans.start[size_t(i)];
}
inline int64_t endOf(const Trace& t, int i)
{
    return t.spans.end[size_t(i)];
}
inline bool overlaps(const Trace& t, int a, int b)
{
    return startOf(t, a) < endOf(t, b) && startOf(t, b) < endOf(t, a);
}

inline bool hasFlow(const Trace& t, int from, int to, FlowKind kind)
{
    for (const auto& f : t.flows)
        if (int(f.from) == from && int(f.to) == to && f.kind == kind)
            return true;
    return false;
}

constexpr int64_t us = 1000;

class TestSimulator : public QObject {
    Q_OBJECT

private slots:
    void initTestCase();
    void streamOrder();
    void twoStreamsOverlap();
    void legacyStreamBarrier();
    void nonBlockingStreamsExempt();
    void perThreadDefaultIsBlocking();
    void eventWait();
    void waitOnUnrecordedEventIsNoOp();
    void eventsAcrossDevices();
    void hardwareQueueFalseDependency_data();
    void hardwareQueueFalseDependency();
    void copyEngines();
    void duplexCopiesShareTheLink();
    void engineQueuesAreSharedByEveryStream();
    void batchedKernelCompletion();
    void overlapDataTransfersOrdering();
    void memsetsAndDeviceCopiesShareMemoryBandwidth();
    void smallMemsetsLastMinMemset();
    void peerCopyOccupiesBothDevices();
    void pageableCopyBlocksHost_data();
    void pageableCopyBlocksHost();
    void leftoverBlockDispatch();
    void prioritiesDoNotPreempt();
    void hostFunctionsSerialize();
    void recordsWhatHeldEachOp();
    void roundRobinLaunchCost();
    void launchesFromSeveralThreadsContend();
    void graphLaunchPerNodeAndMemsetBandwidth();
    void hostFunctionWakeUpAndSpacing();
    void kernelDurations();
    void hostFunctionThreadDozes();
    void hostFunctionWakeFollowsCurve();
    void hostFunctionFirstWakeOfIteration();
    void hostFunctionReleasesItsStream();
    void freeSynchronizesImplicitly();
    void mallocDoesNotWait();
    void l2Residency();
    void computeKernelsShareTheSms();
    void fewBlocksStreamFasterThanTheirShare();
    void batchSlotsAreReused();
    void memoryKernelsShareBandwidth();
    void syncBlocksHost();
    void graphLaunchCost();
    void graphNodesAndSpinCost();
    void workerPoolSharesTasks();
    void iterationsAndWarmup();
    void deterministic();
    void kernelTooLargeForSmIsAnError();
    void endedOpsGiveTheirSlotsBack();
    void laterWorkAsksAboutReleasedOps();
};
