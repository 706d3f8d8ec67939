// Collectives across ranks, rule by rule (docs/SCENARIO.md "Ranks" and "Collectives"): the link model's formulas,
// a collective starting when the last rank reaches it (a straggler holds everyone), an all-reduce in a second stream
// overlapping backward kernels, send/recv pairing, per-rank overrides and device binding, the job's rows cut out per
// rank and merged back with the calls linked, the straggler diagnostic, and bad input.
#include "analysis.h"
#include "collective_model.h"
#include "collectives.h"
#include "diagnostics.h"
#include "job.h"
#include "rank_merge.h"
#include "runner.h"
#include "scenario_json.h"
#include "simulator.h"

#include "cli_process.h"

#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <nlohmann/json.hpp>

#include <cmath>
#include <string>

namespace ss = streamscope;

namespace {

constexpr int64_t kMiB = 1 << 20;

// A job of `ranks` ranks on one stream each: a 500 µs kernel, then an all-reduce of 16 MiB; `extra` goes into the
// scenario's top level (overrides, more ops).
std::string jobJson(int ranks, const std::string& ops, const std::string& rankExtra = {},
                    const std::string& streams = R"([{"name": "s"}])")
{
    return R"({"format": "streamscope-scenario", "version": 1, "id": "job",
        "devices": [{"index": 0, "profile": "h200"}], "streams": )"
        + streams + R"(, "threads": [{"name": "t", "ops": )" + ops + R"(}],
        "ranks": {"count": )"
        + std::to_string(ranks) + rankExtra + "}}";
}

const std::string kComputeThenAllReduce =
    R"([{"op": "kernel", "name": "compute", "stream": "s", "kernel": "spin", "duration_us": 500, "grid": 1},
        {"op": "all-reduce", "stream": "s", "bytes": 16777216}])";

ss::Scenario parse(const std::string& json)
{
    auto r = ss::parseScenario(json, "job.json");
    if (!r)
        qFatal("%s", r.error().toString().c_str());
    return r->scenario;
}

ss::RunOutcome simulate(const ss::Scenario& s)
{
    ss::SimulatorBackend sim;
    auto out = ss::runScenario(s, sim);
    if (!out.status)
        qFatal("%s", out.status.error().toString().c_str());
    return out;
}

// The GPU spans of one name on one rank's stream row.
std::vector<uint32_t> spansOf(const ss::Trace& t, const std::string& row, const std::string& name)
{
    std::vector<uint32_t> out;
    const int track = t.findStreamTrack(row);
    if (track < 0)
        return out;
    for (uint32_t i = t.trackBegin(uint32_t(track)); i < t.trackEnd(uint32_t(track)); ++i)
        if (t.spanName(i) == name)
            out.push_back(i);
    return out;
}

QString errorOf(const std::string& json)
{
    auto r = ss::parseScenario(json, "job.json");
    return r ? QString() : QString::fromStdString(r.error().toString());
}

} // namespace

class TestCollectives : public QObject {
    Q_OBJECT

private slots:
    // The alpha-beta formulas of collective_model.h, exactly.
    void model()
    {
        using K = ss::CollectiveKind;
        using A = ss::CollectiveAlgorithm;
        const double bw = 100e9; // 100 GB/s: 1 byte = 0.01 ns
        const int64_t lat = 1000;
        const int64_t s = 100 * kMiB;
        const double sNs = double(s) / bw * 1e9;
        // Ring all-reduce: 2(n-1)/n * S/bw + 2(n-1) * latency.
        QCOMPARE(ss::collectiveNs(K::AllReduce, A::Ring, s, 4, bw, lat), std::llround(1.5 * sNs + 6 * 1000));
        QCOMPARE(ss::collectiveNs(K::AllReduce, A::Ring, s, 8, bw, lat), std::llround(1.75 * sNs + 14 * 1000));
        // Tree all-reduce: 2 * S/bw + 2 * ceil(log2 n) * latency.
        QCOMPARE(ss::collectiveNs(K::AllReduce, A::Tree, s, 8, bw, lat), std::llround(2 * sNs + 6 * 1000));
        QCOMPARE(ss::collectiveNs(K::AllReduce, A::Tree, s, 5, bw, lat), std::llround(2 * sNs + 6 * 1000));
        // All-gather and reduce-scatter: half the all-reduce's ring.
        QCOMPARE(ss::collectiveNs(K::AllGather, A::Auto, s, 4, bw, lat), std::llround(0.75 * sNs + 3 * 1000));
        QCOMPARE(ss::collectiveNs(K::ReduceScatter, A::Ring, s, 4, bw, lat), std::llround(0.75 * sNs + 3 * 1000));
        // Broadcast: S/bw plus the ring's or the tree's steps; send/recv: one step over one link.
        QCOMPARE(ss::collectiveNs(K::Broadcast, A::Ring, s, 8, bw, lat), std::llround(sNs + 7 * 1000));
        QCOMPARE(ss::collectiveNs(K::Broadcast, A::Tree, s, 8, bw, lat), std::llround(sNs + 3 * 1000));
        QCOMPARE(ss::collectiveNs(K::Send, A::Auto, s, 2, bw, lat), std::llround(sNs + 1000));
        // One rank moves nothing.
        QCOMPARE(ss::collectiveNs(K::AllReduce, A::Ring, s, 1, bw, lat), int64_t(0));
        // Auto: the tree for a small buffer (fewer steps), the ring for a large one (less data per link).
        QVERIFY(ss::chosenAlgorithm(K::AllReduce, A::Auto, 1024, 64, bw, lat) == A::Tree);
        QVERIFY(ss::chosenAlgorithm(K::AllReduce, A::Auto, s, 8, bw, lat) == A::Ring);
        QVERIFY(ss::chosenAlgorithm(K::AllGather, A::Auto, 1024, 64, bw, lat) == A::Ring);
    }

    // The simulated all-reduce lasts the ring formula over the profile's nominal NVLink figures.
    void allReduceTakesTheRingTime()
    {
        const auto out = simulate(parse(jobJson(4, kComputeThenAllReduce)));
        const ss::Trace& t = out.trace;
        const auto ar = spansOf(t, "rank 1 · s", "all-reduce");
        QCOMPARE(ar.size(), size_t(1));
        const ss::DeviceProfile p; // h200 defaults of the link fields: nominal, not measured
        const int64_t expected = ss::collectiveNs(ss::CollectiveKind::AllReduce, ss::CollectiveAlgorithm::Ring,
                                                  16 * kMiB, 4, p.nvlinkBps, p.nvlinkLatencyNs);
        QCOMPARE(t.duration(ar[0]), expected);
        QVERIFY(ss::findSetting(t.info, "ranks"));
    }

    // A straggler (rank 2's kernel 1500 µs) delays every rank's all-reduce to the moment it arrives.
    void stragglerDelaysEveryRank()
    {
        const std::string overrides =
            R"(, "overrides": [{"ranks": [2], "set": {"/threads/0/ops/0/duration_us": 1500}, "why": "slow"}])";
        const auto out = simulate(parse(jobJson(4, kComputeThenAllReduce, overrides)));
        const ss::Trace& t = out.trace;
        const auto slow = spansOf(t, "rank 2 · s", "compute");
        QCOMPARE(slow.size(), size_t(1));
        int64_t start = -1;
        for (int r = 0; r < 4; ++r) {
            const auto ar = spansOf(t, "rank " + std::to_string(r) + " · s", "all-reduce");
            QCOMPARE(ar.size(), size_t(1));
            QVERIFY2(t.spans.start[ar[0]] >= t.spans.end[slow[0]], "no rank starts before the straggler arrives");
            if (start < 0)
                start = t.spans.start[ar[0]];
            QCOMPARE(t.spans.start[ar[0]], start); // all at once
        }
        // The calls are linked, and the straggler diagnostic names rank 2 and about 1 ms of waiting.
        const auto calls = ss::collectiveCalls(t);
        QCOMPARE(calls.size(), size_t(1));
        QCOMPARE(calls[0].spans.size(), size_t(4));
        QCOMPARE(ss::rankOfTrack(t, t.spans.track[calls[0].last]), 2);
        QVERIFY(calls[0].waitedNs > 900'000 && calls[0].waitedNs < 1'100'000);
        const auto d = ss::findEffect(t, "straggler");
        QVERIFY(d.has_value());
        QVERIFY2(d->message.starts_with("Rank 2 reached 1 of 1 collective calls last"), d->message.c_str());
        // The JSON report lists the call with its last rank.
        const auto json = nlohmann::json::parse(ss::analysisToJson(t));
        QCOMPARE(json.at("collectives").size(), size_t(1));
        QCOMPARE(json["collectives"][0].at("last_rank").get<int>(), 2);
        QCOMPARE(json["collectives"][0].at("spans").size(), size_t(4));
        // Balanced, nobody waits and the rule is silent.
        const auto balanced = simulate(parse(jobJson(4, kComputeThenAllReduce)));
        QVERIFY(!ss::findEffect(balanced.trace, "straggler").has_value());
    }

    // In a communication stream of its own (as NCCL's), the all-reduce arrives when the event it waits on does: the
    // straggler is still found, although the collective's launch and its stream were ready long before.
    void stragglerFoundThroughAnEventWait()
    {
        const std::string ops =
            R"([{"op": "kernel", "name": "compute", "stream": "s", "kernel": "spin", "duration_us": 500, "grid": 1},
                {"op": "record", "stream": "s", "event": "grads"},
                {"op": "wait", "stream": "comm", "event": "grads"},
                {"op": "all-reduce", "stream": "comm", "bytes": 16777216}])";
        const std::string overrides =
            R"(, "overrides": [{"ranks": [2], "set": {"/threads/0/ops/0/duration_us": 1500}, "why": "slow"}])";
        const auto out =
            simulate(parse(jobJson(4, ops, overrides, R"([{"name": "s"}, {"name": "comm", "kind": "non-blocking"}])")));
        const auto calls = ss::collectiveCalls(out.trace);
        QCOMPARE(calls.size(), size_t(1));
        QCOMPARE(ss::rankOfTrack(out.trace, out.trace.spans.track[calls[0].last]), 2);
        QVERIFY2(calls[0].waitedNs > 900'000 && calls[0].waitedNs < 1'100'000,
                 std::to_string(calls[0].waitedNs).c_str());
        QVERIFY(ss::findEffect(out.trace, "straggler").has_value());
    }

    // An all-reduce in a second stream, after an event, overlaps the next backward kernel of the compute stream.
    void allReduceInSecondStreamOverlapsBackward()
    {
        const std::string ops = R"([
            {"op": "kernel", "name": "backward 1", "stream": "compute", "kernel": "spin", "duration_us": 400, "grid": 1},
            {"op": "record", "stream": "compute", "event": "g1"},
            {"op": "wait", "stream": "comm", "event": "g1"},
            {"op": "all-reduce", "name": "bucket 1", "stream": "comm", "bytes": 67108864},
            {"op": "kernel", "name": "backward 0", "stream": "compute", "kernel": "spin", "duration_us": 400, "grid": 1}])";
        const auto out = simulate(parse(jobJson(
            2, ops, {}, R"([{"name": "compute", "kind": "non-blocking"}, {"name": "comm", "kind": "non-blocking"}])")));
        const ss::Trace& t = out.trace;
        const auto b1 = spansOf(t, "rank 0 · compute", "backward 1");
        const auto b0 = spansOf(t, "rank 0 · compute", "backward 0");
        const auto ar = spansOf(t, "rank 0 · comm", "bucket 1");
        QVERIFY(b1.size() == 1 && b0.size() == 1 && ar.size() == 1);
        QVERIFY(t.spans.start[ar[0]] >= t.spans.end[b1[0]]); // after its gradients
        QVERIFY(t.spans.start[ar[0]] < t.spans.end[b0[0]]);  // while the next backward kernel runs
        QVERIFY(t.spans.end[ar[0]] > t.spans.start[b0[0]]);
    }

    // send/recv: the k-th send from a to b meets the k-th recv on b from a; "next"/"previous" go around the ring.
    void sendRecvPairing()
    {
        const std::string ops = R"([
            {"op": "kernel", "name": "stage", "stream": "s", "kernel": "spin", "duration_us": 100, "grid": 1},
            {"op": "send", "stream": "s", "bytes": 1048576, "peer": "next"},
            {"op": "recv", "stream": "s", "bytes": 1048576, "peer": "previous"}])";
        // Rank 1 receives first, then sends (the other order on both ranks would deadlock, as NCCL's blocking
        // send/recv outside a group do).
        const std::string overrides = R"(, "overrides": [{"ranks": [1], "set": {
            "/threads/0/ops/1": {"op": "recv", "stream": "s", "bytes": 1048576, "peer": "previous"},
            "/threads/0/ops/2": {"op": "send", "stream": "s", "bytes": 1048576, "peer": "next"}}},
            {"ranks": [0], "set": {"/threads/0/ops/0/duration_us": 300}}])";
        const auto out = simulate(parse(jobJson(2, ops, overrides)));
        const ss::Trace& t = out.trace;
        const auto send0 = spansOf(t, "rank 0 · s", "send");
        const auto recv1 = spansOf(t, "rank 1 · s", "recv");
        const auto send1 = spansOf(t, "rank 1 · s", "send");
        const auto recv0 = spansOf(t, "rank 0 · s", "recv");
        QVERIFY(send0.size() == 1 && recv1.size() == 1 && send1.size() == 1 && recv0.size() == 1);
        // Rank 1's recv waits for rank 0's send (rank 0 is late); rank 1's send then meets rank 0's recv; each pair
        // runs together and is linked send -> recv.
        QCOMPARE(t.spans.start[send0[0]], t.spans.start[recv1[0]]);
        QCOMPARE(t.spans.start[send1[0]], t.spans.start[recv0[0]]);
        QVERIFY(t.spans.start[send1[0]] >= t.spans.end[send0[0]]);
        int links = 0;
        for (const auto& f : t.flows)
            if (f.kind == ss::FlowKind::Collective) {
                ++links;
                QVERIFY((f.from == send0[0] && f.to == recv1[0]) || (f.from == send1[0] && f.to == recv0[0]));
            }
        QCOMPARE(links, 2);
    }

    // A send nobody receives stalls the job: the error names the call and who reached it.
    void unmatchedSendIsAnError()
    {
        const std::string ops = R"([{"op": "send", "stream": "s", "bytes": 1024, "peer": 1}])";
        const std::string overrides = R"(, "overrides": [{"ranks": [1], "set": {"/threads/0/ops/0/peer": 0}}])";
        ss::SimulatorBackend sim;
        const auto out = ss::runScenario(parse(jobJson(2, ops, overrides)), sim);
        QVERIFY(!out.status);
        const std::string m = out.status.error().toString();
        QVERIFY2(m.find("send/recv #1 from rank 0 to rank 1") != std::string::npos, m.c_str());
        QVERIFY2(m.find("a send needs its recv") != std::string::npos, m.c_str());
        QCOMPARE(out.status.errorClass(), ss::ErrorClass::BadInput);
    }

    // Through streamscope-cli: ranks whose calls do not match are bad input (exit 2) naming the file and the op.
    void mismatchThroughCli()
    {
        QTemporaryDir dir;
        const QString file = dir.filePath(QStringLiteral("job.json"));
        QFile f(file);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(QByteArray::fromStdString(jobJson(
            2, kComputeThenAllReduce, R"(, "overrides": [{"ranks": [1], "set": {"/threads/0/ops/1/bytes": 8}}])")));
        f.close();
        const auto r = streamscope::testing::runCli(
            {QStringLiteral("run"), file, QStringLiteral("--backend"), QStringLiteral("sim")});
        QCOMPARE(r.code, 2);
        QVERIFY2(r.err.contains(file
                                + QStringLiteral(": /threads/0/ops/1: rank 1 calls all-reduce of 8 bytes where "
                                                 "rank 0 calls all-reduce of 16777216 bytes")),
                 qPrintable(r.describe()));
    }

    // One rank's part of the job, cut out as its process under a launcher writes it, merges back with the calls
    // linked; device binding by local rank moves the rank's device 0.
    void rankTracesMergeWithLinks()
    {
        const std::string overrides = R"(, "device": "local-rank",
            "overrides": [{"ranks": [1], "set": {"/threads/0/ops/0/duration_us": 900}}])";
        const ss::Scenario s = parse(jobJson(3, kComputeThenAllReduce, overrides));
        const auto out = simulate(s);
        QVERIFY(out.job.expanded());
        std::vector<ss::RankTrace> ranks;
        for (int r = 0; r < 3; ++r) {
            ss::Trace own = ss::extractRankTrace(out.trace, out.job, r);
            QCOMPARE(own.findStreamTrack("s") >= 0, true);
            QCOMPARE(own.info.devices.size(), size_t(1));
            QCOMPARE(own.info.devices[0].index, 0);
            auto rs = ss::scenarioForRank(s, r, r);
            QVERIFY(rs.ok());
            QCOMPARE(rs->threads[0].device, r); // bound to GPU <local rank>
            QCOMPARE(rs->threads[0].ops[0].durationUs, r == 1 ? 900.0 : 500.0);
            own.info.scenarioJson = ss::scenarioToJson(*rs);
            own.info.settings.emplace_back("rank", std::to_string(r));
            own.info.settings.emplace_back("world_size", "3");
            own.info.settings.emplace_back("clock", "simulated");
            ranks.push_back({"job." + std::to_string(r) + ".json", std::move(own)});
        }
        auto merged = ss::mergeRankTraces(std::move(ranks));
        QVERIFY2(merged.ok(), merged.ok() ? "" : merged.error().toString().c_str());
        const auto calls = ss::collectiveCalls(merged->trace);
        QCOMPARE(calls.size(), size_t(1));
        QCOMPARE(ss::rankOfTrack(merged->trace, merged->trace.spans.track[calls[0].last]), 1);
        QVERIFY(ss::findSetting(merged->trace.info, "collectives"));
    }

    // Bad input: each error names the file, the JSON path and what is wrong.
    void badInput_data()
    {
        QTest::addColumn<QString>("json");
        QTest::addColumn<QString>("expected");
        const auto row = [](const char* name, const std::string& json, const char* expected) {
            QTest::newRow(name) << QString::fromStdString(json) << QString::fromLatin1(expected);
        };
        row("no bytes", jobJson(2, R"([{"op": "all-reduce", "stream": "s"}])"),
            "job.json: /threads/0/ops/0: missing field \"bytes\"");
        row("bad algorithm", jobJson(2, R"([{"op": "all-reduce", "stream": "s", "bytes": 8, "algorithm": "rign"}])"),
            "job.json: /threads/0/ops/0/algorithm: unknown algorithm \"rign\" (did you mean \"ring\"?)");
        row("tree all-gather", jobJson(2, R"([{"op": "all-gather", "stream": "s", "bytes": 8, "algorithm": "tree"}])"),
            "job.json: /threads/0/ops/0/algorithm: \"tree\" applies only to all-reduce and broadcast");
        row("root out of the job", jobJson(2, R"([{"op": "broadcast", "stream": "s", "bytes": 8, "root": 2}])"),
            "job.json: /threads/0/ops/0/root: root 2 is not a rank of this job of 2 ranks");
        row("root on all-reduce", jobJson(2, R"([{"op": "all-reduce", "stream": "s", "bytes": 8, "root": 0}])"),
            "job.json: /threads/0/ops/0/root: \"root\" applies only to broadcast ops");
        row("send without peer", jobJson(2, R"([{"op": "send", "stream": "s", "bytes": 8}])"),
            "job.json: /threads/0/ops/0: missing field \"peer\"");
        row("bad peer word", jobJson(2, R"([{"op": "recv", "stream": "s", "bytes": 8, "peer": "left"}])"),
            "job.json: /threads/0/ops/0/peer: peer must be a rank, \"next\" or \"previous\"");
        row("zero ranks", jobJson(0, kComputeThenAllReduce), "job.json: /ranks/count: count must be between 1");
        row("override of a rank out of the job",
            jobJson(2, kComputeThenAllReduce, R"(, "overrides": [{"ranks": [2], "set": {}}])"),
            "job.json: /ranks/overrides/0/ranks/0: a rank must be between 0 and 1");
        row("override that breaks the scenario",
            jobJson(2, kComputeThenAllReduce,
                    R"(, "overrides": [{"ranks": [1], "set": {"/threads/0/ops/0/duration_us": -1}}])"),
            "job.json: /threads/0/ops/0/duration_us: duration_us must be greater than 0");
        row("override of the ranks",
            jobJson(2, kComputeThenAllReduce, R"(, "overrides": [{"ranks": [1], "set": {"/ranks/count": 3}}])"),
            "a rank override cannot change the ranks");
        row("unknown link", jobJson(2, kComputeThenAllReduce, R"(, "link": "nvlnk")"),
            "job.json: /ranks/link: unknown link \"nvlnk\" (did you mean \"nvlink\"?)");
        row("collective in a graph",
            jobJson(2, R"([{"op": "graph", "stream": "s", "ops": [{"op": "all-reduce", "bytes": 8}]}])"),
            "job.json: /threads/0/ops/0/ops/0/op: a graph node cannot be a all-reduce op");
    }
    void badInput()
    {
        QFETCH(QString, json);
        QFETCH(QString, expected);
        const QString e = errorOf(json.toStdString());
        QVERIFY2(e.contains(expected), qPrintable(e + QStringLiteral("\n  expected: ") + expected));
    }

    // Written and read back: the ranks section and every collective field survive.
    void roundTrip()
    {
        const std::string ops = R"([
            {"op": "broadcast", "stream": "s", "bytes": 64, "root": 1, "algorithm": "tree"},
            {"op": "reduce-scatter", "stream": "s", "bytes": 64},
            {"op": "send", "stream": "s", "bytes": 8, "peer": "next"},
            {"op": "recv", "stream": "s", "bytes": 8, "peer": 0}])";
        const ss::Scenario a = parse(jobJson(
            3, ops,
            R"(, "per_host": 2, "link": "pcie", "overrides": [{"ranks": [0, 2], "set": {"/threads/0/repeat": 2}}])"));
        const std::string json = ss::scenarioToJson(a);
        const ss::Scenario b = parse(json);
        QCOMPARE(QString::fromStdString(ss::scenarioToJson(b)), QString::fromStdString(json));
        QCOMPARE(b.ranks.count, 3);
        QCOMPARE(b.ranks.perHost, 2);
        QVERIFY(b.ranks.link == ss::RankLink::Pcie);
        QCOMPARE(b.threads[0].ops[0].root, 1);
        QCOMPARE(b.threads[0].ops[2].peerOffset, 1);
        QCOMPARE(b.threads[0].ops[3].peer, 0);
    }

    // Ranks on several hosts: the calls that cross hosts use InfiniBand, which is slower than NVLink.
    void crossHostUsesInfiniBand()
    {
        const auto one = simulate(parse(jobJson(4, kComputeThenAllReduce)));
        const auto two = simulate(parse(jobJson(4, kComputeThenAllReduce, R"(, "per_host": 2)")));
        const auto a = spansOf(one.trace, "rank 0 · s", "all-reduce");
        const auto b = spansOf(two.trace, "rank 0 · s", "all-reduce");
        const ss::DeviceProfile p;
        QCOMPARE(two.trace.duration(b[0]),
                 ss::collectiveNs(ss::CollectiveKind::AllReduce, ss::CollectiveAlgorithm::Auto, 16 * kMiB, 4, p.ibBps,
                                  p.ibLatencyNs));
        QVERIFY(two.trace.duration(b[0]) > one.trace.duration(a[0]));
    }
};

QTEST_GUILESS_MAIN(TestCollectives)
#include "tst_collectives.moc"
