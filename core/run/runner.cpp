#include "runner.h"

#include "collectives.h"
#include "event_timing.h"
#include "scenario_json.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <limits>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>

namespace streamscope {

Status Backend::simulate(const RunPlan&, Recording&)
{
    return Error{{}, {}, name() + " backend does not simulate"};
}
Status Backend::beginThread(HostThreadContext&)
{
    return {};
}
Status Backend::issue(HostThreadContext&, const PlannedOp&)
{
    return Error{{}, {}, name() + " backend does not issue from host threads"};
}
void Backend::endThread(HostThreadContext&) {}
Status Backend::endIteration(int)
{
    return {};
}

namespace {

// The host threads of a run: one OS thread per planned host thread, kept for the whole run and released into each
// iteration together. Fresh threads per iteration made the first CUDA call of every iteration pay the thread's
// start-up in the driver (14–17 µs on an H200) and, under CUPTI, up to 5.5 ms: the warm-up iterations must absorb
// such costs, so the measured ones run on the same threads.
class HostThreads {
public:
    HostThreads(const RunPlan& plan, Backend& backend, const std::atomic<bool>* cancel)
        : m_plan(plan), m_backend(backend), m_cancel(cancel), m_backendData(plan.hostThreads.size(), nullptr),
          m_nextTask(plan.scenario->threads.size())
    {
        m_threads.reserve(plan.hostThreads.size());
        for (size_t h = 0; h < plan.hostThreads.size(); ++h)
            m_threads.emplace_back([this, h] { loop(int(h)); });
    }
    ~HostThreads()
    {
        {
            std::lock_guard lock(m_mutex);
            m_quit = true;
        }
        m_start.notify_all();
        for (auto& t : m_threads)
            t.join();
    }
    HostThreads(const HostThreads&) = delete;
    HostThreads& operator=(const HostThreads&) = delete;

    // Runs one iteration on every host thread; the first failure stops the others.
    Status runIteration(Recording& rec, int iteration)
    {
        for (auto& n : m_nextTask)
            n.store(0);
        m_failure = {};
        m_stop = false;
        {
            std::lock_guard lock(m_mutex);
            m_rec = &rec;
            m_iteration = iteration;
            m_running = m_threads.size();
            m_unfinished.store(m_threads.size());
            ++m_generation;
            m_publishedGeneration.store(m_generation, std::memory_order_release);
        }
        m_start.notify_all();
        {
            std::unique_lock lock(m_mutex);
            m_done.wait(lock, [this] { return m_running == 0; });
        }
        if (!m_failure.ok())
            return m_failure;
        if (m_cancel && m_cancel->load())
            return Status(Error{{}, {}, "run cancelled"}, ErrorClass::Runtime);
        return m_backend.endIteration(iteration);
    }

private:
    void loop(int h)
    {
        uint64_t seen = 0;
        for (;;) {
            Recording* rec = nullptr;
            int iteration = 0;
            // Spin (yielding) a while before sleeping: a thread woken from sleep started its first call up to 360 µs
            // after the others on the H200 machines, and the pool's hand-out and the makespan were StreamScope's.
            const auto until = std::chrono::steady_clock::now() + kSpinBeforeSleep;
            while (m_publishedGeneration.load(std::memory_order_acquire) == seen
                   && std::chrono::steady_clock::now() < until)
                std::this_thread::yield();
            {
                std::unique_lock lock(m_mutex);
                m_start.wait(lock, [&] { return m_quit || m_generation != seen; });
                if (m_quit)
                    return;
                seen = m_generation;
                rec = m_rec;
                iteration = m_iteration;
            }
            body(h, *rec, iteration);
            // m_running reaches 0 only after lastThreadDone has returned.
            if (m_unfinished.fetch_sub(1) == 1)
                m_backend.lastThreadDone();
            {
                std::lock_guard lock(m_mutex);
                --m_running;
            }
            m_done.notify_one();
        }
    }

    void fail(Status st)
    {
        std::lock_guard lock(m_failMutex);
        if (m_failure.ok()) {
            m_failure = std::move(st);
            m_stop = true;
            m_backend.abort();
        }
    }

    void body(int h, Recording& rec, int iteration)
    {
        const auto& scenario = *m_plan.scenario;
        HostThreadContext ctx;
        ctx.hostThread = h;
        ctx.info = &m_plan.hostThreads[size_t(h)];
        ctx.records = &rec.records[size_t(h)];
        ctx.backendData = m_backendData[size_t(h)];
        if (Status st = m_backend.beginThread(ctx); !st) {
            fail(std::move(st));
            m_backendData[size_t(h)] = ctx.backendData;
            return;
        }
        const auto& th = scenario.threads[size_t(ctx.info->thread)];
        const int tasks = std::max(1, th.repeat);
        auto runTask = [&](int task) {
            for (size_t i = 0; i < th.ops.size(); ++i) {
                if (m_stop.load(std::memory_order_relaxed) || (m_cancel && m_cancel->load()))
                    return false;
                if (Status st = m_backend.issue(ctx, m_plan.plannedOp(h, int(i), iteration, task)); !st) {
                    fail(std::move(st));
                    return false;
                }
            }
            return true;
        };
        if (std::max(1, th.workers) == 1) {
            for (int task = 0; task < tasks; ++task)
                if (!runTask(task))
                    break;
        } else {
            // A worker pool: each worker takes the next task from the shared queue.
            for (;;) {
                const int task = m_nextTask[size_t(ctx.info->thread)].fetch_add(1);
                if (task >= tasks || !runTask(task))
                    break;
            }
        }
        m_backend.endThread(ctx);
        m_backendData[size_t(h)] = ctx.backendData;
    }

    const RunPlan& m_plan;
    Backend& m_backend;
    const std::atomic<bool>* m_cancel;
    std::vector<void*> m_backendData;
    std::vector<std::atomic<int>> m_nextTask;
    std::mutex m_failMutex;
    Status m_failure;
    std::atomic<bool> m_stop{false};

    std::mutex m_mutex;
    std::condition_variable m_start;
    std::condition_variable m_done;
    uint64_t m_generation = 0;
    size_t m_running = 0;
    std::atomic<size_t> m_unfinished{0};            // host threads still issuing in this iteration
    std::atomic<uint64_t> m_publishedGeneration{0}; // m_generation, for the threads spinning before they sleep
    static constexpr std::chrono::milliseconds kSpinBeforeSleep{5};
    bool m_quit = false;
    Recording* m_rec = nullptr;
    int m_iteration = 0;
    std::vector<std::thread> m_threads; // last: started once everything above exists
};

} // namespace

Trace buildTrace(const RunPlan& plan, Recording&& rec, RunInfo info, int64_t* originOut)
{
    const auto& scenario = *plan.scenario;
    const int warmup = std::max(0, scenario.run.warmup);
    Trace trace;
    trace.info = std::move(info);

    for (const auto& h : plan.hostThreads) {
        Track t;
        t.kind = TrackKind::HostThread;
        t.name = h.name;
        t.device = h.device;
        trace.addTrack(std::move(t));
    }
    const auto streamTrack0 = uint32_t(plan.hostThreads.size());
    for (const auto& s : plan.streams) {
        Track t;
        t.kind = TrackKind::Stream;
        t.name = s.name;
        t.device = s.device;
        t.streamKind = s.kind;
        t.priority = s.priority;
        trace.addTrack(std::move(t));
    }

    int64_t origin = std::numeric_limits<int64_t>::max();
    size_t kept = 0, apiSpans = 0, gpuSpans = 0;
    for (const auto& list : rec.records)
        for (const auto& r : list) {
            if (r.iteration < warmup)
                continue;
            ++kept;
            if (r.hasApi()) {
                origin = std::min(origin, r.apiStart);
                ++apiSpans;
            }
            if (r.hasGpu())
                origin = std::min(origin, r.gpuStart);
            gpuSpans += r.hasGpu() && r.stream >= 0;
        }
    if (origin == std::numeric_limits<int64_t>::max())
        origin = 0;
    if (originOut)
        *originOut = origin;
    // The columns the spans below fill, reserved at their size: grown by doubling, each column's copies faulted
    // fresh pages in and moved what it held (a 1 M-op simulation: a fifth of its page faults).
    const size_t spanCount = apiSpans + gpuSpans;
    trace.spans.reserve(spanCount);
    for (auto* column : {&trace.spans.thread, &trace.spans.op, &trace.spans.iteration, &trace.spans.task})
        column->reserve(spanCount);
    trace.spans.detail.reserve(spanCount);
    trace.flows.reserve(gpuSpans + rec.deps.size());

    constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();
    struct SpanPair {
        uint32_t api = kNone, gpu = kNone;
    };
    std::vector<std::vector<SpanPair>> spanOf(rec.records.size());
    // What held each GPU span (its holder's span is looked up once every span is in).
    struct Wait {
        uint32_t span;
        WaitCause cause;
        RecordRef holder;
    };
    std::vector<Wait> waits;
    // Each op's name, made once: records repeat their ops (every iteration, task and thread of a pool).
    std::unordered_map<const Op*, std::string> names;
    auto nameOf = [&names](const Op& op) -> std::string_view {
        auto [it, added] = names.try_emplace(&op);
        if (added)
            it->second = displayName(op);
        return it->second;
    };
    for (size_t h = 0; h < rec.records.size(); ++h) {
        spanOf[h].resize(rec.records[h].size());
        for (size_t i = 0; i < rec.records[h].size(); ++i) {
            const auto& r = rec.records[h][i];
            if (r.iteration < warmup)
                continue;
            const Op& scenarioOp = scenario.threads[size_t(r.thread)].ops[size_t(r.op)];
            const Op& op =
                r.node >= 0 && size_t(r.node) < scenarioOp.ops.size() ? scenarioOp.ops[size_t(r.node)] : scenarioOp;
            SpanInit s;
            s.thread = r.thread;
            s.op = r.op;
            s.iteration = r.iteration - warmup;
            s.task = r.task;
            if (r.hasApi()) {
                s.track = uint32_t(h);
                s.kind = r.apiKind;
                s.name = scenarioOp.kind == OpKind::HostWork ? nameOf(scenarioOp) : cudaApiName(scenarioOp.kind);
                s.start = r.apiStart - origin;
                s.end = r.apiEnd - origin;
                spanOf[h][i].api = trace.addSpan(s);
            }
            if (r.hasGpu() && r.stream >= 0) {
                s.track = streamTrack0 + uint32_t(r.stream);
                s.kind = r.gpuKind;
                s.name = nameOf(op);
                s.start = r.gpuStart - origin;
                s.end = r.gpuEnd - origin;
                s.bytes = op.bytes;
                s.eventStartError = r.eventStart >= 0 ? r.eventStart - r.gpuStart : kNoEventError;
                s.eventEndError = r.eventEnd >= 0 ? r.eventEnd - r.gpuEnd : kNoEventError;
                if (op.kind == OpKind::Kernel) {
                    s.grid = effectiveGrid(op);
                    s.block = op.block;
                }
                spanOf[h][i].gpu = trace.addSpan(s);
                if (spanOf[h][i].api != kNone)
                    trace.addFlow(spanOf[h][i].api, spanOf[h][i].gpu, FlowKind::Launch);
                if (r.gpuWait != WaitCause::None)
                    waits.push_back({spanOf[h][i].gpu, r.gpuWait, r.gpuWaitHolder});
            }
        }
        // The thread's records are in the trace now: their memory goes to the rest of it (the simulator's peak).
        std::vector<OpRecord>().swap(rec.records[h]);
    }
    auto lookup = [&](const RecordRef& ref, bool host) -> uint32_t {
        if (ref.hostThread >= spanOf.size() || ref.index >= spanOf[ref.hostThread].size())
            return kNone;
        const auto& p = spanOf[ref.hostThread][ref.index];
        return host ? p.api : p.gpu;
    };
    for (const Wait& w : waits)
        if (const uint32_t holder = lookup(w.holder, false); holder != kNone)
            trace.setWait(w.span, w.cause, holder);
    std::vector<Wait>().swap(waits);
    for (const auto& d : rec.deps) {
        const uint32_t from = lookup(d.from, d.fromHost);
        const uint32_t to = lookup(d.to, d.toHost);
        if (from != kNone && to != kNone && from != to)
            trace.addFlow(from, to, d.kind);
    }
    std::vector<DepRecord>().swap(rec.deps);
    std::vector<std::vector<SpanPair>>().swap(spanOf);
    trace.finalize();
    if (trace.info.source == TraceSource::CudaEvents) {
        const auto c = correctEventTimedSpans(trace, &scenario);
        trace.info.settings.emplace_back("event_timing_corrections",
                                         std::to_string(c.corrected) + " starts corrected ("
                                             + std::to_string(c.movedNs / 1000) + " us no longer drawn as running), "
                                             + std::to_string(c.uncertain) + " uncertain");
    }
    return trace;
}

RunOutcome runScenario(const Scenario& scenario, Backend& backend, const RunOptions& options)
{
    RunOutcome out;
    if (hasCollectives(scenario) && !backend.runsCollectives()) {
        out.status = Status(Error{{},
                                  {},
                                  "collective ops (all-reduce, send, ...) need NCCL on GPUs, and this build of the "
                                  "CUDA backend has none (nccl.h was not found at build time): use --backend sim"},
                            ErrorClass::BadInput);
        return out;
    }
    if (scenario.ranks.given() && !scenario.job.expanded() && backend.runsWholeJobs()) {
        // The simulator is deterministic: the whole job is simulated at once, each rank with its own devices. On
        // GPUs, without a launcher, the whole job runs in this process likewise, one GPU per rank.
        auto job = expandJob(scenario, scenario.ranks.count);
        if (!job) {
            out.status = Status(job.error(), ErrorClass::BadInput);
            return out;
        }
        out = runScenario(*job, backend, options);
        out.job = job->job;
        out.trace.info.scenarioJson = scenarioToJson(scenario);
        setSetting(out.trace.info, "ranks",
                   std::to_string(scenario.ranks.count) + " of world size " + std::to_string(scenario.ranks.count));
        setSetting(out.trace.info, "clock_alignment",
                   backend.simulatesHostThreads()
                       ? "simulated ranks: each starts at time 0 of the simulator's clock (exact)"
                       : "ranks run in one process: one host clock for all (exact)");
        setSetting(out.trace.info, "devices_per_rank", std::to_string(job->job.devicesPerRank));
        if (const size_t linked = linkCollectives(out.trace, *job); linked > 0)
            setSetting(out.trace.info, "collectives", std::to_string(linked) + " calls linked across ranks");
        return out;
    }
    auto planResult = RunPlan::make(scenario);
    if (!planResult) {
        out.status = Status(planResult.error(), ErrorClass::BadInput);
        return out;
    }
    const RunPlan& plan = *planResult;
    RunInfo info;
    info.source = backend.source();
    info.backend = backend.name();
    info.scenarioId = scenario.id;
    info.scenarioTitle = scenario.title;
    info.variant = options.variant;
    info.command = options.command;
    info.scenarioJson = scenarioToJson(scenario);
    for (const auto& [k, v] : scenario.run.env)
        info.settings.emplace_back(k, v);

    Recording rec;
    rec.records.resize(plan.hostThreads.size());
    Status status = backend.prepare(plan, info);
    if (status) {
        if (backend.simulatesHostThreads()) {
            status = backend.simulate(plan, rec);
            if (options.progress)
                options.progress(plan.totalIterations(), plan.totalIterations());
        } else {
            HostThreads threads(plan, backend, options.cancel);
            // The same work again without any timing: the observer effect as a number in the trace. Interleaved
            // with the measured iterations where the backend can, else after them; the records are discarded.
            int extra = 0;
            auto runUntimed = [&] {
                Recording untimed;
                untimed.records.resize(plan.hostThreads.size());
                return threads.runIteration(untimed, plan.totalIterations() + extra++);
            };
            const bool interleave = backend.interleavesUntimedIterations();
            const int warmup = std::max(0, scenario.run.warmup);
            for (int it = 0; it < plan.totalIterations() && status; ++it) {
                status = threads.runIteration(rec, it);
                if (status && options.progress)
                    options.progress(it + 1, plan.totalIterations());
                if (status && interleave && it >= warmup && backend.beginUntimedIteration()) {
                    status = runUntimed();
                    if (Status back = backend.endUntimedIteration(); status && !back)
                        status = back;
                }
            }
            while (status && backend.beginUntimedIteration())
                status = runUntimed();
        }
    }
    // finish() runs on every path: it collects what was timed and releases resources.
    Status fin = backend.finish(rec);
    if (status && !fin)
        status = fin;
    out.trace = buildTrace(plan, std::move(rec), std::move(info), &out.clockOriginNs);
    out.simulatedClock = backend.simulatesHostThreads();
    out.status = std::move(status);
    return out;
}

} // namespace streamscope
