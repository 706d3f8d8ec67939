// PyTorch's ranges in the window: the inspector names the op that launched a kernel, the span table shows and
// searches it and groups GPU time by it, and the timeline puts each host thread's or stream's ranges in one row
// directly above it, a lane per nesting depth.
#include "format.h"
#include "ranges.h"
#include "span_inspector.h"
#include "span_table_model.h"
#include "timeline_layout.h"
#include "trace.h"
#include "trace_formats.h"

#include <QAbstractItemModelTester>
#include <QTest>
#include <QTextDocument>

#include <filesystem>
#include <memory>

using namespace streamscope;
namespace fs = std::filesystem;

namespace {

const fs::path kData = fs::path(STREAMSCOPE_SOURCE_DIR) / "tests" / "data" / "pytorch";

std::shared_ptr<const Trace> load(const fs::path& p)
{
    auto r = importTraceFile(p.string());
    if (!r)
        qFatal("%s", r.error().toString().c_str());
    return std::make_shared<const Trace>(std::move(*r));
}

int findSpan(const Trace& t, std::string_view name, SpanKind kind)
{
    for (uint32_t i = 0; i < t.spanCount(); ++i)
        if (t.spans.kind[i] == kind && t.spanName(i) == name)
            return int(i);
    return -1;
}

QString plain(const QString& html)
{
    QTextDocument doc;
    doc.setHtml(html);
    return doc.toPlainText();
}

const char* const kGemm = "void gemm_kernel<float, 128, 64>(float const*, float const*, float*, int)";

} // namespace

class TestRangesView : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void inspectorSaysWhichOpLaunchedAKernel()
    {
        const auto t = load(kData / "fixtures" / "two-streams-event.json");
        const int gemm = findSpan(*t, kGemm, SpanKind::Kernel);
        QVERIFY(gemm >= 0);
        const QString text = plain(spanInspectorHtml(*t, gemm));
        QVERIFY2(text.contains(QStringLiteral("Launched by")), qPrintable(text));
        QVERIFY2(text.contains(QStringLiteral("aten::mm (python: torch/nn/modules/module.py(1736): _call_impl)")),
                 qPrintable(text));
        // The call says which op it was made in; the op which ranges it is in.
        const int call = findSpan(*t, "cudaLaunchKernel", SpanKind::ApiCall);
        QVERIFY(plain(spanInspectorHtml(*t, call)).contains(QStringLiteral("Called in")));
        const int mm = findSpan(*t, "aten::mm", SpanKind::Range);
        const QString op = plain(spanInspectorHtml(*t, mm));
        QVERIFY2(op.contains(QStringLiteral("Inside")) && op.contains(QStringLiteral("ProfilerStep#0")),
                 qPrintable(op));
        QVERIFY(op.contains(QStringLiteral("ranges of host thread")));
    }

    void spanTableShowsAndSearchesTheLaunchingOp()
    {
        const auto t = load(kData / "two-streams-event.json");
        SpanTableModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        SpanTableProxy proxy;
        proxy.setSourceModel(&model);
        model.setTrace(t);
        // Every kernel of this trace was launched in an aten op.
        int kernels = 0;
        for (uint32_t i = 0; i < t->spanCount(); ++i)
            if (t->spans.kind[i] == SpanKind::Kernel) {
                ++kernels;
                QVERIFY(model.index(int(i), SpanTableModel::LaunchedByColumn)
                            .data()
                            .toString()
                            .startsWith(QStringLiteral("aten::")));
            }
        QCOMPARE(kernels, 9);
        // "aten" finds the 36 ops, and what they launched and called.
        proxy.setFilterText(QStringLiteral("aten"));
        int ops = 0, gpu = 0;
        for (int r = 0; r < proxy.rowCount(); ++r) {
            const auto i = uint32_t(proxy.spanAtRow(r));
            ops += t->spans.kind[i] == SpanKind::Range;
            gpu += isGpuSpan(t->spans.kind[i]);
        }
        QCOMPARE(ops, 36);
        QCOMPARE(gpu, 9);
        proxy.setFilterText(QStringLiteral("aten::mm"));
        QVERIFY(proxy.rowCount() >= 3 + 3); // three aten::mm and their GEMMs (and calls)
    }

    void gpuTimeGroupedByOp()
    {
        const auto t = load(kData / "two-streams-event.json");
        OpGpuTimeModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setTrace(t);
        QVERIFY(model.rowCount() >= 3);
        // Most GPU time first: the GEMMs of aten::mm; the rows add up to all GPU work.
        QCOMPARE(model.index(0, OpGpuTimeModel::OpColumn).data().toString(), QStringLiteral("aten::mm"));
        QCOMPARE(model.index(0, OpGpuTimeModel::SpansColumn).data().toString(), QStringLiteral("3"));
        int64_t sum = 0, work = 0;
        int spans = 0;
        for (int r = 0; r < model.rowCount(); ++r) {
            sum += model.index(r, OpGpuTimeModel::GpuTimeColumn).data(OpGpuTimeModel::SortRole).toLongLong();
            spans += model.index(r, OpGpuTimeModel::SpansColumn).data(OpGpuTimeModel::SortRole).toInt();
        }
        for (uint32_t i = 0; i < t->spanCount(); ++i)
            if (isGpuSpan(t->spans.kind[i]))
                work += t->duration(i);
        QCOMPARE(sum, work);
        QCOMPARE(spans, 9);
        model.setTrace(nullptr);
        QCOMPARE(model.rowCount(), 0);
    }

    void rangesRowAboveItsParent()
    {
        const auto t = load(kData / "fixtures" / "two-streams-event.json");
        const TimelineLayout layout(*t);
        const auto& rows = layout.rows();
        std::vector<TimelineRowKind> kinds;
        for (const TimelineRow& r : rows)
            kinds.push_back(r.kind);
        const std::vector<TimelineRowKind> expected{TimelineRowKind::HostHeader, TimelineRowKind::Ranges,
                                                    TimelineRowKind::HostThread, TimelineRowKind::DeviceHeader,
                                                    TimelineRowKind::Ranges,     TimelineRowKind::Stream,
                                                    TimelineRowKind::Stream};
        QVERIFY(kinds == expected);
        QCOMPARE(rows[1].laneCount, 3); // annotation, Python function, aten::mm
        QCOMPARE(rows[1].track, rows[2].track);
        QCOMPARE(rows[4].laneCount, 1); // the GPU annotation of stream 7
        QCOMPARE(rows[4].track, rows[5].track);
        // Each range is drawn on the lane of its depth, its row the one above its parent.
        for (uint32_t i = 0; i < t->spanCount(); ++i) {
            const Track& tr = t->tracks[t->spans.track[i]];
            if (tr.kind != TrackKind::Ranges)
                continue;
            QCOMPARE(layout.laneOfSpan(i), tr.depth);
            QCOMPARE(layout.rowOfTrack(t->spans.track[i]) + 1, layout.rowOfTrack(uint32_t(tr.parent)));
        }
        int lanes = 0;
        for (const TimelineRow& r : rows)
            lanes += r.laneCount;
        QCOMPARE(layout.totalLanes(), lanes);
    }
};

QTEST_MAIN(TestRangesView)
#include "tst_ranges_view.moc"
