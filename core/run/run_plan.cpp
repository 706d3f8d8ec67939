#include "run_plan.h"

#include <algorithm>
#include <set>

namespace streamscope {

namespace {

void collectStreams(const std::vector<Op>& ops, std::set<int>& used)
{
    for (const auto& op : ops) {
        if (op.streamIndex >= 0)
            used.insert(op.streamIndex);
        collectStreams(op.ops, used);
    }
}

} // namespace

Result<RunPlan> RunPlan::make(const Scenario& s)
{
    RunPlan plan;
    plan.scenario = &s;
    const int maxConnDefault = 8;

    for (size_t t = 0; t < s.threads.size(); ++t) {
        const auto& th = s.threads[t];
        plan.firstHostThread.push_back(int(plan.hostThreads.size()));
        const int workers = std::max(1, th.workers);
        for (int w = 0; w < workers; ++w) {
            PlannedHostThread h;
            h.name = workers > 1 ? th.name + "#" + std::to_string(w) : th.name;
            h.thread = int(t);
            h.worker = w;
            h.device = th.device;
            plan.hostThreads.push_back(std::move(h));
        }
    }

    plan.m_streamOf.assign(s.streams.size(), std::vector<int>(plan.hostThreads.size(), -1));
    // Created streams first, in scenario order; then per-thread default streams as each host thread uses them.
    for (size_t i = 0; i < s.streams.size(); ++i) {
        const auto& ss = s.streams[i];
        if (ss.kind == StreamKind::PerThreadDefault)
            continue;
        PlannedStream p{ss.name, ss.device, ss.kind, ss.priority, int(i), -1, 0};
        plan.streams.push_back(p);
        std::fill(plan.m_streamOf[i].begin(), plan.m_streamOf[i].end(), int(plan.streams.size() - 1));
    }
    for (size_t h = 0; h < plan.hostThreads.size(); ++h) {
        std::set<int> used;
        const auto& th = s.threads[size_t(plan.hostThreads[h].thread)];
        collectStreams(th.ops, used);
        for (int si : used) {
            if (si < 0 || size_t(si) >= s.streams.size())
                return Error{{}, {}, "op refers to a stream that does not exist (scenario not validated)"};
            const auto& ss = s.streams[size_t(si)];
            if (ss.kind != StreamKind::PerThreadDefault)
                continue;
            PlannedStream p{ss.name + "@" + plan.hostThreads[h].name, ss.device, ss.kind, ss.priority, si, int(h), 0};
            plan.streams.push_back(p);
            plan.m_streamOf[size_t(si)][h] = int(plan.streams.size() - 1);
        }
    }

    // Hardware work queues: streams of a device take queues round-robin in creation order.
    int maxDevice = 0;
    for (const auto& st : plan.streams)
        maxDevice = std::max(maxDevice, st.device);
    for (const auto& d : s.devices)
        maxDevice = std::max(maxDevice, d.index);
    plan.deviceConnections.assign(size_t(maxDevice + 1), s.run.maxConnections().value_or(maxConnDefault));
    std::vector<int> nextQueue(size_t(maxDevice + 1), 0);
    for (auto& st : plan.streams) {
        const int conn = plan.deviceConnections[size_t(st.device)];
        st.hardwareQueue = nextQueue[size_t(st.device)]++ % conn;
    }
    return plan;
}

int RunPlan::totalIterations() const
{
    return std::max(0, scenario->run.warmup) + std::max(1, scenario->run.iterations);
}

int RunPlan::stream(int scenarioStream, int hostThread) const
{
    if (scenarioStream < 0 || size_t(scenarioStream) >= m_streamOf.size())
        return -1;
    const auto& row = m_streamOf[size_t(scenarioStream)];
    if (hostThread < 0 || size_t(hostThread) >= row.size())
        return -1;
    return row[size_t(hostThread)];
}

PlannedOp RunPlan::plannedOp(int hostThread, int opIndex, int iteration, int task) const
{
    const auto& h = hostThreads[size_t(hostThread)];
    const auto& op = scenario->threads[size_t(h.thread)].ops[size_t(opIndex)];
    PlannedOp p;
    p.op = &op;
    p.thread = h.thread;
    p.opIndex = opIndex;
    p.iteration = iteration;
    p.task = task;
    p.stream = stream(op.streamIndex, hostThread);
    p.warmup = iteration < std::max(0, scenario->run.warmup);
    return p;
}

std::vector<int> RunPlan::devices() const
{
    std::set<int> d;
    for (const auto& dev : scenario->devices)
        d.insert(dev.index);
    for (const auto& h : hostThreads)
        d.insert(h.device);
    for (const auto& st : streams)
        d.insert(st.device);
    return {d.begin(), d.end()};
}

} // namespace streamscope
