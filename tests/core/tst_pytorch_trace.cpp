// PyTorch profiler traces: hand-written fixtures that mimic Kineto (streams, events, threads, missing correlation
// ids), and real ones from tests/data/pytorch when present.
#include "import_export_fixtures.h"

#include <QTest>

class TestPyTorchTrace : public QObject {
    Q_OBJECT

private slots:
    // ---- PyTorch profiler traces

    void pytorchTwoStreamsEvent()
    {
        const fs::path path = kFixtures / "two-streams-event.json";
        QCOMPARE(n(detectTraceFormat(path.string())), n(TraceFormat::PyTorch));
        auto r = importTraceFile(path.string());
        QVERIFY2(r.ok(), r.error().toString().c_str());
        const Trace& t = *r;
        QCOMPARE(q(t.info.backend), QStringLiteral("pytorch"));
        QCOMPARE(n(t.info.source), QStringLiteral("imported"));
        // Tracks: the host thread, then the two streams of device 0 by id; then the ranges' lanes (tst_ranges).
        QCOMPARE(t.tracks.size(), size_t(7));
        QCOMPARE(q(t.tracks[0].name), QStringLiteral("thread 4242 (python3)"));
        QCOMPARE(n(t.tracks[0].kind), QStringLiteral("host-thread"));
        QCOMPARE(t.tracks[0].id, int64_t(4242));
        QCOMPARE(q(t.tracks[1].name), QStringLiteral("stream 7"));
        QCOMPARE(t.tracks[1].id, int64_t(7));
        QCOMPARE(t.tracks[1].device, 0);
        QCOMPARE(q(t.tracks[2].name), QStringLiteral("stream 13"));
        // Spans per stream and kind; CPU ops, Python functions and annotations are ranges, sync records no spans.
        QCOMPARE(countSpans(t, "stream 7", 0, {SpanKind::Kernel}), 1);
        QCOMPARE(countSpans(t, "stream 7", 0, {SpanKind::Memset}), 1);
        QCOMPARE(countSpans(t, "stream 13", 0, {SpanKind::Kernel}), 1);
        QCOMPARE(countSpans(t, "stream 13", 0, {SpanKind::MemcpyH2D}), 1);
        QCOMPARE(countSpans(t, "thread 4242 (python3)", -2, {SpanKind::ApiCall}), 6);
        QCOMPARE(countSpans(t, "thread 4242 (python3)", -2, {SpanKind::Sync}), 2);
        QCOMPARE(t.spanCount(), size_t(12 + 4)); // and four ranges
        for (uint32_t i = 0; i < t.spanCount(); ++i) {
            if (t.spans.kind[i] == SpanKind::Kernel && t.tracks[t.spans.track[i]].name == "stream 7") {
                QCOMPARE(t.spans.start[i], int64_t(110000));
                QCOMPARE(t.spans.end[i], int64_t(160125));
                QVERIFY(t.spans.gridOf(i) == (Dim3{264, 1, 1}));
                QVERIFY(t.spans.blockOf(i) == (Dim3{256, 1, 1}));
            }
            if (t.spans.kind[i] == SpanKind::MemcpyH2D) {
                QCOMPARE(t.spans.bytesOf(i), int64_t(4194304));
                QCOMPARE(q(std::string(t.spanName(i))), QStringLiteral("Memcpy HtoD (Pinned -> Device)"));
            }
        }
        // Arrows: each launch by its correlation id; the stream wait (record on stream 7 -> next work of stream
        // 13); cudaStreamSynchronize waited for the copy; cudaDeviceSynchronize found the GPU idle.
        QCOMPARE(flowNames(t, FlowKind::Launch),
                 (QStringList{QStringLiteral("cudaLaunchKernel -> transpose_kernel"),
                              QStringLiteral("cudaLaunchKernel -> void gemm_kernel<float, 128, 64>(float const*, "
                                             "float const*, float*, int)"),
                              QStringLiteral("cudaMemcpyAsync -> Memcpy HtoD (Pinned -> Device)"),
                              QStringLiteral("cudaMemsetAsync -> Memset (Device)")}));
        QCOMPARE(flowNames(t, FlowKind::Event),
                 QStringList{QStringLiteral(
                     "void gemm_kernel<float, 128, 64>(float const*, float const*, float*, int) -> transpose_kernel")});
        QCOMPARE(flowNames(t, FlowKind::Sync),
                 QStringList{QStringLiteral("Memcpy HtoD (Pinned -> Device) -> cudaStreamSynchronize")});
        QCOMPARE(t.flows.size(), size_t(6 + 8)); // and a call arrow to each of the eight runtime calls
        // Device properties under the CUDA backend's names; the file's scalars as settings.
        QCOMPARE(t.info.devices.size(), size_t(1));
        QCOMPARE(q(t.info.devices[0].name), QStringLiteral("NVIDIA H200"));
        std::map<std::string, std::string> props(t.info.devices[0].properties.begin(),
                                                 t.info.devices[0].properties.end());
        QCOMPARE(q(props["sm_count"]), QStringLiteral("132"));
        QCOMPARE(q(props["compute_capability"]), QStringLiteral("9.0"));
        QCOMPARE(q(props["memory_bytes"]), QStringLiteral("150109880320"));
        QCOMPARE(q(props["warpSize"]), QStringLiteral("32"));
        std::map<std::string, std::string> settings(t.info.settings.begin(), t.info.settings.end());
        QCOMPARE(q(settings["cuda_runtime_version"]), QStringLiteral("12080"));
        QCOMPARE(q(settings["trace_id"]), QStringLiteral("4F1A2B3C4D5E6F70"));

        // Through our Chrome export and back: nothing lost.
        auto again = parseChromeTrace(traceToChromeJson(t), "again.json");
        QVERIFY2(again.ok(), again.error().toString().c_str());
        QCOMPARE(traceToJson(*again), traceToJson(t));
    }

    void pytorchStreamWaitWithoutLinks()
    {
        // Kineto leaves "wait_on_stream" and the record's correlation at -1 where it could not link them (torch 2.11
        // with CUDA 13): the record is the last cudaEventRecord* of the waiting thread, the recorded stream the one
        // it last launched into.
        std::string text = readFile(kFixtures / "two-streams-event.json");
        const std::string linked = "\"wait_on_stream\": 7,\n      \"wait_on_cuda_event_record_corr_id\": 102,";
        const auto at = text.find(linked);
        QVERIFY(at != std::string::npos);
        text.replace(at, linked.size(), "\"wait_on_stream\": -1, \"wait_on_cuda_event_record_corr_id\": -1,");
        auto r = parsePyTorchTrace(text, "unlinked.json");
        QVERIFY2(r.ok(), r.error().toString().c_str());
        QCOMPARE(flowNames(*r, FlowKind::Event),
                 QStringList{QStringLiteral(
                     "void gemm_kernel<float, 128, 64>(float const*, float const*, float*, int) -> transpose_kernel")});
    }

    void pytorchThreadsOwnStreams()
    {
        auto r = importTraceFile((kFixtures / "threads-own-streams.json").string());
        QVERIFY2(r.ok(), r.error().toString().c_str());
        const Trace& t = *r;
        QCOMPARE(t.tracks.size(), size_t(4));
        QCOMPARE(q(t.tracks[0].name), QStringLiteral("thread 5001 (worker-0)"));
        QCOMPARE(q(t.tracks[1].name), QStringLiteral("thread 5002 (worker-1)"));
        QCOMPARE(t.tracks[2].device, 0);
        QCOMPARE(q(t.tracks[2].name), QStringLiteral("stream 7"));
        QCOMPARE(t.tracks[3].device, 1);
        QCOMPARE(q(t.tracks[3].name), QStringLiteral("stream 21"));
        QCOMPARE(countSpans(t, "stream 7", 0, {SpanKind::Kernel}), 3);
        QCOMPARE(countSpans(t, "stream 21", 1, {SpanKind::Kernel}), 2);
        QCOMPARE(countSpans(t, "stream 21", 1, {SpanKind::MemcpyD2H}), 1);
        QCOMPARE(countSpans(t, "thread 5001 (worker-0)", -2, {SpanKind::ApiCall}), 3); // one is cuLaunchKernel
        QCOMPARE(countSpans(t, "thread 5001 (worker-0)", -2, {SpanKind::Sync}), 1);
        QCOMPARE(countSpans(t, "thread 5002 (worker-1)", -2, {SpanKind::ApiCall}), 3);
        QCOMPARE(countSpans(t, "thread 5002 (worker-1)", -2, {SpanKind::Sync}), 1);
        QCOMPARE(countFlows(t, FlowKind::Launch), 6);
        QCOMPARE(flowNames(t, FlowKind::Sync),
                 (QStringList{QStringLiteral("Memcpy DtoH (Device -> Pageable) -> cudaDeviceSynchronize"),
                              QStringLiteral("add_kernel_\u00e9 -> cudaStreamSynchronize")}));
        QCOMPARE(t.info.devices.size(), size_t(2));
        // Launch arrows go from each thread to its own stream only.
        for (const auto& f : t.flows)
            if (f.kind == FlowKind::Launch)
                QCOMPARE(t.spans.track[f.from] == 0 ? 0 : 1, t.spans.track[f.to] == 2 ? 0 : 1);
    }

    void pytorchWithoutCorrelationIds()
    {
        // Older traces: no "correlation" in args; the "ac2g" flow events give the launch arrows.
        auto r = importTraceFile((kFixtures / "copy-pipeline-legacy.json").string());
        QVERIFY2(r.ok(), r.error().toString().c_str());
        const Trace& t = *r;
        QCOMPARE(t.tracks.size(), size_t(3));
        for (const char* stream : {"stream 7", "stream 13"}) {
            QCOMPARE(countSpans(t, stream, 0, {SpanKind::MemcpyH2D}), 1);
            QCOMPARE(countSpans(t, stream, 0, {SpanKind::Kernel}), 1);
            QCOMPARE(countSpans(t, stream, 0, {SpanKind::MemcpyD2H}), 1);
        }
        QCOMPARE(countSpans(t, "thread 6000 (python)", -2, {SpanKind::ApiCall}), 6);
        QCOMPARE(countSpans(t, "thread 6000 (python)", -2, {SpanKind::Sync}), 1);
        QCOMPARE(countFlows(t, FlowKind::Launch), 6);
        QCOMPARE(t.flows.size(), size_t(6));
        for (const auto& f : t.flows) {
            QCOMPARE(n(t.tracks[t.spans.track[f.from]].kind), QStringLiteral("host-thread"));
            QCOMPARE(n(t.tracks[t.spans.track[f.to]].kind), QStringLiteral("stream"));
        }
        QCOMPARE(q(t.info.devices.at(0).name), QStringLiteral("NVIDIA A100-SXM4-80GB"));
    }

    // Traces recorded on a GPU by tools/make_pytorch_traces.py, checked against the counts the script took from
    // the profiler's own events (in the provenance file beside each trace).
    void pytorchRecorded_data()
    {
        QTest::addColumn<QString>("provenance");
        const fs::path dir = kSource / "tests" / "data" / "pytorch";
        int rows = 0;
        if (fs::is_directory(dir))
            for (const auto& e : fs::directory_iterator(dir))
                if (e.path().filename().string().ends_with(".provenance.json")) {
                    QTest::newRow(e.path().filename().string().c_str()) << q(e.path().string());
                    ++rows;
                }
        if (rows == 0)
            QTest::newRow("none") << QString();
    }
    void pytorchRecorded()
    {
        QFETCH(QString, provenance);
        if (provenance.isEmpty())
            QSKIP("no PyTorch traces recorded on a GPU in tests/data/pytorch yet: run "
                  "tools/make_pytorch_traces.py tests/data/pytorch on a machine with a GPU");
        const Json prov = Json::parse(readFile(provenance.toStdString()), nullptr, false);
        QVERIFY(prov.is_object());
        const fs::path tracePath =
            fs::path(provenance.toStdString()).parent_path() / prov.at("trace").get<std::string>();
        QCOMPARE(n(detectTraceFormat(tracePath.string())), n(TraceFormat::PyTorch));
        auto r = importTraceFile(tracePath.string());
        QVERIFY2(r.ok(), r.error().toString().c_str());
        const Trace& t = *r;
        const Json expected = prov.at("expected"); // copies: GCC 13 -Wdangling-reference
        const Json streamCounts = expected.at("streams");
        // GPU work per (device, stream).
        for (const Json& s : streamCounts) {
            const int device = s.at("device");
            const std::string name = "stream " + std::to_string(s.at("stream").get<int64_t>());
            QCOMPARE(countSpans(t, name, device, {SpanKind::Kernel}), s.at("kernels").get<int>());
            QCOMPARE(countSpans(t, name, device,
                                {SpanKind::MemcpyH2D, SpanKind::MemcpyD2H, SpanKind::MemcpyD2D, SpanKind::MemcpyP2P}),
                     s.at("memcpys").get<int>());
            QCOMPARE(countSpans(t, name, device, {SpanKind::Memset}), s.at("memsets").get<int>());
        }
        int streams = 0, hostCalls = 0;
        for (const auto& tr : t.tracks)
            streams += tr.kind == TrackKind::Stream;
        for (uint32_t i = 0; i < t.spanCount(); ++i)
            hostCalls += t.spans.kind[i] == SpanKind::ApiCall || t.spans.kind[i] == SpanKind::Sync;
        QCOMPARE(streams, int(expected.at("streams").size()));
        QCOMPARE(hostCalls, expected.at("runtime_calls").get<int>());
        QCOMPARE(countFlows(t, FlowKind::Launch), expected.at("launch_links").get<int>());
        if (expected.value("stream_wait_events", 0) > 0)
            QVERIFY2(countFlows(t, FlowKind::Event) >= 1, "stream wait events recorded, but no event arrow");
        QCOMPARE(int(t.info.devices.size()) >= 1, true);
        // And our Chrome export of it comes back whole.
        auto again = parseChromeTrace(traceToChromeJson(t), "again.json");
        QVERIFY2(again.ok(), again.error().toString().c_str());
        QCOMPARE(traceToJson(*again), traceToJson(t));
    }
};

QTEST_GUILESS_MAIN(TestPyTorchTrace)
#include "tst_pytorch_trace.moc"
