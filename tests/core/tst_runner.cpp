// The Runner's order of iterations for real-thread backends (core/run/runner.cpp): warm-up and measured iterations,
// and the untimed ones that measure the observer effect — after the measured ones, or between them where the
// backend can (Backend::interleavesUntimedIterations). A backend that only notes what it is asked shows the order.
#include "runner.h"
#include "scenario_json.h"

#include <QTest>

#include <mutex>
#include <string>
#include <thread>
#include <vector>

using namespace streamscope;

namespace {

class OrderBackend final : public Backend {
public:
    OrderBackend(bool interleave, int untimed) : m_interleave(interleave), m_untimedWanted(untimed) {}
    std::string name() const override { return "order"; }
    TraceSource source() const override { return TraceSource::CudaEvents; }
    bool simulatesHostThreads() const override { return false; }
    Status prepare(const RunPlan&, RunInfo&) override { return {}; }
    Status issue(HostThreadContext&, const PlannedOp& op) override
    {
        std::lock_guard lock(m_mutex);
        m_issued.push_back(op.iteration);
        return {};
    }
    // Counts the untimed iterations as they end, as the CUDA backend counts their makespans.
    Status endIteration(int iteration) override
    {
        log(std::string(m_untimed ? "U" : "T") + std::to_string(iteration));
        m_untimedRun += m_untimed;
        return {};
    }
    // Called on the host thread that finished last: every host thread of the iteration has issued its op.
    void lastThreadDone() override
    {
        std::lock_guard lock(m_mutex);
        calls.push_back("last" + std::to_string(m_issued.size())
                        + (std::this_thread::get_id() == m_main ? "main" : ""));
    }
    bool beginUntimedIteration() override
    {
        if (m_untimedRun >= m_untimedWanted)
            return false;
        m_untimed = true;
        return true;
    }
    bool interleavesUntimedIterations() const override { return m_interleave; }
    Status endUntimedIteration() override
    {
        log("back");
        m_untimed = false;
        return {};
    }
    Status finish(Recording&) override { return {}; }

    std::vector<std::string> calls;

private:
    void log(std::string what)
    {
        std::lock_guard lock(m_mutex);
        calls.push_back(std::move(what));
    }
    bool m_interleave;
    int m_untimedWanted;
    int m_untimedRun = 0;
    bool m_untimed = false;
    std::mutex m_mutex;
    std::vector<int> m_issued;
    std::thread::id m_main = std::this_thread::get_id();
};

Scenario scenario(int warmup, int iterations, int threads = 1)
{
    const std::string text = R"({"format": "streamscope-scenario", "version": 1, "id": "order",
        "streams": [{"name": "s"}],
        "threads": [{"name": "main", "workers": )"
        + std::to_string(threads) + R"(, "repeat": )" + std::to_string(threads)
        + R"(, "ops": [{"op": "host-work", "duration_us": 1}]}],
        "run": {"warmup": )"
        + std::to_string(warmup) + R"(, "iterations": )" + std::to_string(iterations) + "}}";
    auto r = parseScenario(text, "order.json");
    if (!r)
        qFatal("%s", r.error().toString().c_str());
    return r->scenario;
}

} // namespace

class TestRunner : public QObject {
    Q_OBJECT
private slots:
    // After the measured iterations: T0 (warm-up) T1 T2 T3, then three untimed ones.
    void untimedIterationsFollowTheMeasuredOnes()
    {
        OrderBackend b(false, 3);
        const RunOutcome out = runScenario(scenario(1, 3), b);
        QVERIFY2(out.status.ok(), out.status.error().toString().c_str());
        const std::vector<std::string> want{"last1", "T0",    "last2", "T1",    "last3", "T2",    "last4",
                                            "T3",    "last5", "U4",    "last6", "U5",    "last7", "U6"};
        QCOMPARE(b.calls, want);
    }

    // Interleaved: each measured iteration is followed by an untimed one, and timing comes back on after it; the
    // warm-up is not.
    void untimedIterationsInterleaveWhereTheBackendCan()
    {
        OrderBackend b(true, 3);
        const RunOutcome out = runScenario(scenario(1, 3), b);
        QVERIFY2(out.status.ok(), out.status.error().toString().c_str());
        const std::vector<std::string> want{"last1", "T0", "last2", "T1",    "last3", "U4",    "back", "last4", "T2",
                                            "last5", "U5", "back",  "last6", "T3",    "last7", "U6",   "back"};
        QCOMPARE(b.calls, want);
    }

    // Fewer measured iterations than untimed ones wanted: the rest run after the measured ones.
    void theRestRunAfterTheMeasuredIterations()
    {
        OrderBackend b(true, 3);
        const RunOutcome out = runScenario(scenario(0, 1), b);
        QVERIFY2(out.status.ok(), out.status.error().toString().c_str());
        const std::vector<std::string> want{"last1", "T0", "last2", "U1", "back", "last3", "U2", "last4", "U3"};
        QCOMPARE(b.calls, want);
    }

    // The iteration ends on the host thread that finished last, once per iteration, after every thread issued its
    // work and before the Runner's endIteration (the CUDA backend waits for its devices there).
    void theLastHostThreadEndsTheIteration()
    {
        OrderBackend b(false, 0);
        const RunOutcome out = runScenario(scenario(0, 2, 3), b);
        QVERIFY2(out.status.ok(), out.status.error().toString().c_str());
        const std::vector<std::string> want{"last3", "T0", "last6", "T1"};
        QCOMPARE(b.calls, want);
    }
};

QTEST_GUILESS_MAIN(TestRunner)
#include "tst_runner.moc"
