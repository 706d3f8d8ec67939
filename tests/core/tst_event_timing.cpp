// GPU timing without a GPU: CUPTI records captured on an H200 matched to their ops and mapped onto the host clock
// (tests/data/cupti/), the corrections of event-timed spans, the event-error summary, the timing-perturbation
// diagnostic, and the optional timing columns and run setting in the file formats.
#include "cupti_records.h"
#include "diagnostics.h"
#include "event_timing.h"
#include "scenario_json.h"
#include "trace_json.h"
#include "trace_spec.h"

#include <QTest>

#include <fstream>
#include <sstream>

using namespace streamscope;
using streamscope::testing::traceOf;

namespace {

std::string readFile(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

std::string dataPath(const char* name)
{
    return std::string(STREAMSCOPE_SOURCE_DIR) + "/tests/data/cupti/" + name;
}

QString q(const std::string& s)
{
    return QString::fromStdString(s);
}

void setSetting(Trace& t, const std::string& k, const std::string& v)
{
    t.info.settings.emplace_back(k, v);
}

bool fires(const Trace& t, const std::string& rule, std::string* message = nullptr)
{
    DiagnosticOptions o;
    o.rules = {rule};
    const auto d = diagnose(t, o);
    if (!d.empty() && message)
        *message = d.front().message;
    return !d.empty();
}

} // namespace

class TestEventTiming : public QObject {
    Q_OBJECT

private slots:
    // The captures: every issued op found its records, graph nodes come in chain order, no GPU op starts before the
    // call that issued it, and the recorded trace holds exactly these times.
    void cuptiCapturesMatch_data()
    {
        QTest::addColumn<QString>("name");
        QTest::addColumn<int>("nodesPerLaunch");
        QTest::newRow("lesson 14: graphs of 20 kernels") << QStringLiteral("14-cuda-graph") << 20;
        QTest::newRow("graph of kernel, memset, kernel, copy") << QStringLiteral("graph-mixed-nodes") << 4;
    }
    void cuptiCapturesMatch()
    {
        QFETCH(QString, name);
        QFETCH(int, nodesPerLaunch);
        const std::string base = name.toStdString();
        auto capture = parseCuptiCapture(readFile(dataPath((base + ".capture.json").c_str())), base);
        QVERIFY2(capture.ok(), capture.ok() ? "" : capture.error().toString().c_str());
        auto trace = loadTraceFile(dataPath((base + ".trace.json").c_str()));
        QVERIFY2(trace.ok(), trace.ok() ? "" : trace.error().toString().c_str());

        const CuptiMatch m =
            matchCuptiRecords(capture->records, capture->issues, capture->hostMinusCupti, capture->timedEnd);
        QCOMPARE(m.times.size(), capture->issues.size());
        for (size_t i = 0; i < m.times.size(); ++i) {
            QCOMPARE(int(m.times[i].size()), nodesPerLaunch);
            QVERIFY2(m.times[i].front().start + 2000 >= capture->issueApiStart[i],
                     "a graph's first node starts before its cudaGraphLaunch call");
            for (size_t k = 1; k < m.times[i].size(); ++k)
                QVERIFY2(m.times[i][k].start >= m.times[i][k - 1].end, "graph nodes of a chain overlap");
        }
        // Records of no issued op are the backend's own preparation (buffer memsets, stream warm-up kernels).
        QCOMPARE(m.matched + m.unmatched + m.late, capture->records.size());

        // The trace: its graph launches are the last issues of the capture (the measured iterations), rebased.
        std::vector<uint32_t> launches;
        std::vector<uint32_t> nodes;
        for (uint32_t i = 0; i < trace->spanCount(); ++i) {
            if (trace->spanName(i) == "cudaGraphLaunch")
                launches.push_back(i);
            else if (isGpuSpan(trace->spans.kind[i]))
                nodes.push_back(i);
        }
        std::sort(launches.begin(), launches.end(),
                  [&](uint32_t a, uint32_t b) { return trace->spans.start[a] < trace->spans.start[b]; });
        std::sort(nodes.begin(), nodes.end(),
                  [&](uint32_t a, uint32_t b) { return trace->spans.start[a] < trace->spans.start[b]; });
        QVERIFY(!launches.empty());
        QCOMPARE(nodes.size(), launches.size() * size_t(nodesPerLaunch));
        const size_t first = capture->issues.size() - launches.size();
        const int64_t origin = capture->issueApiStart[first] - trace->spans.start[launches.front()];
        for (size_t l = 0; l < launches.size(); ++l)
            for (int k = 0; k < nodesPerLaunch; ++k) {
                const uint32_t span = nodes[l * size_t(nodesPerLaunch) + size_t(k)];
                const auto& want = m.times[first + l][size_t(k)];
                QCOMPARE(trace->spans.start[span], want.start - origin);
                QCOMPARE(trace->spans.end[span], want.end - origin);
            }
        QVERIFY(trace->info.source == TraceSource::Cupti);
    }

    // The same captures matched without correlation ids, by each call's place in its stream (what the backend does
    // when no stream is shared between host threads): the same times for every issue.
    void cuptiCapturesMatchByOrder()
    {
        for (const char* base : {"14-cuda-graph", "graph-mixed-nodes"}) {
            auto capture = parseCuptiCapture(readFile(dataPath((std::string(base) + ".capture.json").c_str())), base);
            QVERIFY(capture.ok());
            const CuptiMatch byIds =
                matchCuptiRecords(capture->records, capture->issues, capture->hostMinusCupti, capture->timedEnd);
            // Each issue's stream, from the records its ids matched.
            std::map<uint32_t, std::pair<uint32_t, uint32_t>> streamOf;
            for (const auto& r : capture->records)
                streamOf[r.correlationId] = {r.deviceId, r.streamId};
            std::vector<CuptiIssue> issues;
            for (size_t i = 0; i < capture->issues.size(); ++i) {
                const auto [device, stream] = streamOf.at(capture->issues[i].runtimeId);
                issues.push_back({0, 0, device, stream, capture->issueApiStart[i]});
            }
            const CuptiMatch byOrder =
                matchCuptiRecords(capture->records, issues, capture->hostMinusCupti, capture->timedEnd);
            QCOMPARE(byOrder.matched, byIds.matched);
            QCOMPARE(byOrder.unmatched + byOrder.late, byIds.unmatched + byIds.late);
            for (size_t i = 0; i < issues.size(); ++i) {
                QCOMPARE(byOrder.times[i].size(), byIds.times[i].size());
                for (size_t k = 0; k < byIds.times[i].size(); ++k) {
                    QCOMPARE(byOrder.times[i][k].start, byIds.times[i][k].start);
                    QCOMPARE(byOrder.times[i][k].end, byIds.times[i][k].end);
                }
            }
        }
    }

    // By order: the k-th distinct id of a stream is its k-th call; what ended before the first call is not matched;
    // a stream whose ids do not number its calls is left unmatched, not guessed.
    void matchingByOrder()
    {
        auto rec = [](uint32_t id, uint32_t stream, int64_t start) {
            CuptiRecord r;
            r.correlationId = id;
            r.streamId = stream;
            r.start = start;
            r.end = start + 10;
            return r;
        };
        const std::vector<CuptiRecord> records{rec(40, 5, 500), rec(12, 5, 300), rec(3, 5, 10), rec(13, 6, 320),
                                               rec(12, 5, 310)};
        // Stream 5: calls at 250 and 450 (given out of order); stream 6: one call.
        const std::vector<CuptiIssue> issues{{0, 0, 0, 5, 450}, {0, 0, 0, 5, 250}, {0, 0, 0, 6, 300}};
        const CuptiMatch m = matchCuptiRecords(records, issues, 0);
        QCOMPARE(m.times[1].size(), size_t(2)); // id 12: two records (a graph launch's nodes)
        QCOMPARE(m.times[1][0].start, int64_t(300));
        QCOMPARE(m.times[0].size(), size_t(1));
        QCOMPARE(m.times[0][0].start, int64_t(500));
        QCOMPARE(m.times[2][0].start, int64_t(320));
        QCOMPARE(m.unmatched, size_t(1)); // the record at 10: before stream 5's first call
        // One call too many for the records: nothing of that stream is guessed.
        const CuptiMatch short1 = matchCuptiRecords(records, {{0, 0, 0, 6, 300}, {0, 0, 0, 6, 301}}, 0);
        QVERIFY(short1.times[0].empty() && short1.times[1].empty());
        QCOMPARE(short1.matched, size_t(0));
    }

    void badCaptureIsAnError()
    {
        QVERIFY(!parseCuptiCapture("{}", "x").ok());
        QVERIFY(!parseCuptiCapture("[1]", "x").ok());
        auto r = parseCuptiCapture(R"({"format": "streamscope-cupti-capture", "host_minus_cupti_ns": 0,
            "issues": [], "records": [{"kind": "warp", "correlation_id": 1, "start": 0, "end": 1}]})",
                                   "x");
        QVERIFY(!r.ok());
        QVERIFY(r.error().path.find("/records/0/kind") != std::string::npos);
    }

    void matchingUsesTheClockOffset()
    {
        std::vector<CuptiRecord> records(2);
        records[0].correlationId = 7;
        records[0].start = 100;
        records[0].end = 200;
        records[1].correlationId = 99; // issued by nobody
        const auto m = matchCuptiRecords(records, {CuptiIssue{7, 0}}, 1000);
        QCOMPARE(m.matched, size_t(1));
        QCOMPARE(m.unmatched, size_t(1));
        QCOMPARE(m.times[0].front().start, int64_t(1100));
        QCOMPARE(m.times[0].front().end, int64_t(1200));
    }

    // Same-direction copies use one engine in order: the second is drawn from the first's end.
    void eventTimedCopiesAreCorrected()
    {
        Trace t = traceOf("a:memcpy-h2d:0:300:c1 b:memcpy-h2d:10:600:c2 c:memcpy-d2h:20:100:d1");
        const auto c = correctEventTimedSpans(t, nullptr);
        QCOMPARE(c.corrected, size_t(1));
        QCOMPARE(c.movedNs, int64_t(290));
        for (uint32_t i = 0; i < t.spanCount(); ++i) {
            if (t.spanName(i) == "c2") {
                QCOMPARE(t.spans.start[i], int64_t(300));
                QVERIFY(t.spans.timingOf(i) == SpanTiming::Corrected);
            } else {
                QVERIFY(t.spans.timingOf(i) == SpanTiming::Measured);
            }
        }
    }

    // A kernel whose event fired while another stream's kernel ran may have waited for SMs.
    void overlappingKernelStartsAreUncertain()
    {
        Trace t = traceOf("a:kernel:0:1000:big b:kernel:100:1200:small c:kernel:2000:2100:alone");
        const auto c = correctEventTimedSpans(t, nullptr);
        QCOMPARE(c.uncertain, size_t(1));
        for (uint32_t i = 0; i < t.spanCount(); ++i)
            QCOMPARE(t.spans.timingOf(i) == SpanTiming::Uncertain, t.spanName(i) == "small");
    }

    // A one-wave spin kernel runs its duration: its start moves to end - duration.
    void spinKernelsAreCorrected()
    {
        auto sc = parseScenario(R"({"format": "streamscope-scenario", "version": 1, "id": "x", "title": "x",
            "devices": [{"index": 0}], "streams": [{"name": "s", "kind": "non-blocking"}],
            "threads": [{"name": "main", "ops": [{"op": "kernel", "kernel": "spin", "name": "k", "stream": "s",
                         "duration_us": 100, "grid": 4, "block": 32}]}]})",
                                "x");
        QVERIFY2(sc.ok(), sc.ok() ? "" : sc.error().toString().c_str());
        Trace t = traceOf("s:kernel:0:150000:k");
        t.spans.setThread(0, 0);
        t.spans.setOp(0, 0);
        t.info.devices.push_back(DeviceInfo{0, "H200", {{"sm_count", "132"}}});
        const auto c = correctEventTimedSpans(t, &sc->scenario);
        QCOMPARE(c.corrected, size_t(1));
        QCOMPARE(t.spans.start[0], int64_t(50000));
    }

    void eventErrorSummary()
    {
        Trace t;
        const uint32_t tr = t.addTrack(Track{});
        for (int i = 0; i < 10; ++i) {
            SpanInit s;
            s.track = tr;
            s.name = "k";
            s.start = i * 1000;
            s.end = i * 1000 + 500;
            s.eventStartError = -int64_t(i) * 100; // 0, -100, ..., -900
            s.eventEndError = 50;
            t.addSpan(s);
        }
        t.finalize();
        const auto e = summarizeEventTimingError(t);
        QVERIFY(e.has_value());
        QCOMPARE(e->spans, size_t(10));
        QCOMPARE(e->startMedianNs, 450.0);
        QCOMPARE(e->startP90Ns, 810.0);
        QCOMPARE(e->startMeanNs, -450.0);
        QCOMPARE(e->endMedianNs, 50.0);
        QVERIFY(!summarizeEventTimingError(traceOf("a:kernel:0:10:k")).has_value());
    }

    void timingColumnsRoundTrip()
    {
        Trace t = traceOf("a:kernel:0:1000:big b:kernel:100:1200:small");
        correctEventTimedSpans(t, nullptr);
        t.spans.eventStartError.assign(t.spanCount(), -7);
        t.spans.eventEndError.assign(t.spanCount(), 3);
        auto back = parseTrace(traceToJson(t), "round-trip");
        QVERIFY2(back.ok(), back.ok() ? "" : back.error().toString().c_str());
        QVERIFY(back->spans.timing == t.spans.timing);
        QVERIFY(back->spans.eventStartError == t.spans.eventStartError);
        QVERIFY(back->spans.eventEndError == t.spans.eventEndError);
        // A trace without them writes none.
        QVERIFY(traceToJson(traceOf("a:kernel:0:10:k")).find("\"timing\"") == std::string::npos);
    }

    void badTimingColumnIsAnError()
    {
        Trace t = traceOf("a:kernel:0:1000:k");
        std::string json = traceToJson(t);
        const auto at = json.find("\"block\"");
        QVERIFY(at != std::string::npos);
        json.insert(at, "\"timing\": [7],\n    ");
        auto r = parseTrace(json, "bad.json");
        QVERIFY(!r.ok());
        QVERIFY2(r.error().path.find("/spans/timing/0") != std::string::npos, r.error().toString().c_str());
    }

    void scenarioTimingSetting()
    {
        const char* text = R"({"format": "streamscope-scenario", "version": 1, "id": "x", "title": "x",
            "devices": [{"index": 0}], "streams": [{"name": "s"}],
            "threads": [{"name": "main", "ops": [{"op": "kernel", "kernel": "empty", "stream": "s", "grid": 1}]}],
            "run": {"timing": "both"}})";
        auto sc = parseScenario(text, "x");
        QVERIFY2(sc.ok(), sc.ok() ? "" : sc.error().toString().c_str());
        QVERIFY(sc->scenario.run.timing == TimingMode::Both);
        auto again = parseScenario(scenarioToJson(sc->scenario), "again");
        QVERIFY(again.ok());
        QVERIFY(again->scenario.run.timing == TimingMode::Both);
        std::string bad = text;
        bad.replace(bad.find("\"both\""), 6, "\"cuda\"");
        auto r = parseScenario(bad, "bad.json");
        QVERIFY(!r.ok());
        QCOMPARE(q(r.error().path), QStringLiteral("/run/timing"));
        QVERIFY(r.error().message.find("auto, cupti, events or both") != std::string::npos);
    }

    // timing-perturbation fires above 5 % and names what it can see.
    void timingPerturbation()
    {
        std::string spans;
        for (int i = 0; i < 12; ++i)
            spans += "s" + std::to_string(i) + ":kernel:0:1000:k" + std::to_string(i) + " ";
        Trace t = traceOf(spans.c_str());
        setSetting(t, "timing", "events");
        setSetting(t, "CUDA_DEVICE_MAX_CONNECTIONS", "8 (default)");
        setSetting(t, "timed_makespan_ns", "4100000");
        setSetting(t, "untimed_makespan_ns", "1100000");
        std::string msg;
        QVERIFY(fires(t, "timing-perturbation", &msg));
        QVERIFY2(msg.find("273% longer") != std::string::npos, msg.c_str());
        QVERIFY2(msg.find("12 streams on 8 queues") != std::string::npos, msg.c_str());
        QVERIFY2(msg.find("--timing cupti") != std::string::npos, msg.c_str());
        {
            DiagnosticOptions o;
            o.rules = {"timing-perturbation"};
            const auto d = diagnose(t, o);
            QCOMPARE(d.front().spans.size(), size_t(12)); // the operations of the device whose queues they shared
        }

        Trace within = traceOf("s:kernel:0:1000:k");
        setSetting(within, "timing", "cupti");
        setSetting(within, "timed_makespan_ns", "1030000");
        setSetting(within, "untimed_makespan_ns", "1000000");
        QVERIFY(!fires(within, "timing-perturbation"));

        Trace graphs = traceOf("h0:api-call:0:10:cudaGraphLaunch s:kernel:20:1000:k");
        QVERIFY(fires(within, "timing-perturbation") == false);
        setSetting(graphs, "timing", "cupti");
        setSetting(graphs, "timed_makespan_ns", "2400000");
        setSetting(graphs, "untimed_makespan_ns", "1000000");
        QVERIFY(fires(graphs, "timing-perturbation", &msg));
        QVERIFY2(msg.find("graph") != std::string::npos && msg.find("--timing events") != std::string::npos,
                 msg.c_str());

        QVERIFY(!fires(traceOf("s:kernel:0:1000:k"), "timing-perturbation")); // simulator, imports: no figures
    }

    void analysisReportsTiming()
    {
        Trace t = traceOf("s:kernel:0:1000:k");
        setSetting(t, "timing", "both");
        setSetting(t, "timed_makespan_ns", "1020000");
        setSetting(t, "untimed_makespan_ns", "1000000");
        t.spans.eventStartError.assign(1, -4000);
        t.spans.eventEndError.assign(1, 1000);
        const std::string r = timingReport(summarizeTiming(t));
        QVERIFY2(r.find("timing:               both") != std::string::npos, r.c_str());
        QVERIFY2(r.find("+2.0 %") != std::string::npos, r.c_str());
        QVERIFY2(r.find("start error median 4.0 us") != std::string::npos, r.c_str());
    }
};

QTEST_GUILESS_MAIN(TestEventTiming)
#include "tst_event_timing.moc"
