// The panels' models and content: the span table (sorting, filtering, short names), the inspector, the analysis
// panel (checks, diagnoses, the critical path), the lesson list, and the parsing of sizes.
#include "tst_models.h"

#include "span_names.h"

#include <QItemSelectionModel>

#include <algorithm>
#include <atomic>
#include <memory>
#include <numeric>

// ---- span table -------------------------------------------------------------------------------------------

void TestModels::spanTable()
{
    auto simulated = RunController::simulate(loadLesson(QStringLiteral("08")));
    QVERIFY(simulated);
    auto trace = std::make_shared<const Trace>(std::move(simulated).value());
    SpanTableModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    SpanTableProxy proxy;
    QAbstractItemModelTester proxyTester(&proxy, QAbstractItemModelTester::FailureReportingMode::QtTest);
    proxy.setSourceModel(&model);
    QSignalSpy reset(&model, &QAbstractItemModel::modelReset);
    model.setTrace(trace);
    QCOMPARE(reset.count(), 1);
    QCOMPARE(model.rowCount(), int(trace->spanCount()));
    QCOMPARE(model.index(3, SpanTableModel::NameColumn).data().toString(), qs(trace->spanName(3)));
    QCOMPARE(model.index(3, 0).data(SpanTableModel::SpanIndexRole).toInt(), 3);

    // Sorted by duration (numbers, not text), longest first.
    proxy.sort(SpanTableModel::DurationColumn, Qt::DescendingOrder);
    int64_t last = std::numeric_limits<int64_t>::max();
    for (int r = 0; r < proxy.rowCount(); ++r) {
        const int span = proxy.spanAtRow(r);
        QCOMPARE(proxy.rowOfSpan(span), r);
        QVERIFY(trace->duration(uint32_t(span)) <= last);
        last = trace->duration(uint32_t(span));
    }
    // Filtered to the copies host to device.
    proxy.setFilterText(QStringLiteral("h2d"));
    QCOMPARE(proxy.rowCount(), 8);
    for (int r = 0; r < proxy.rowCount(); ++r)
        QVERIFY(proxy.index(r, SpanTableModel::NameColumn).data().toString().contains(QStringLiteral("h2d")));
    const int kernel = [&] {
        for (uint32_t i = 0; i < trace->spanCount(); ++i)
            if (trace->spans.kind[i] == SpanKind::Kernel)
                return int(i);
        return -1;
    }();
    QCOMPARE(proxy.rowOfSpan(kernel), -1);
    proxy.setFilterText({});
    QCOMPARE(proxy.rowCount(), model.rowCount());
    model.setTrace(nullptr);
    QCOMPARE(proxy.rowCount(), 0);
}

// The proxy sorts by the same order SortRole gives (text for names, numbers for the rest), keeps ties in the
// model's order, combines a sort with a filter, keeps both through a new trace, returns to the model's order with
// column -1, and keeps a view's current row on its span through every change.
void TestModels::spanTableProxyOrdersFiltersAndKeepsTheSelection()
{
    auto simulated = RunController::simulate(loadLesson(QStringLiteral("08")));
    QVERIFY(simulated);
    auto trace = std::make_shared<const Trace>(std::move(simulated).value());
    SpanTableModel model;
    SpanTableProxy proxy;
    QAbstractItemModelTester proxyTester(&proxy, QAbstractItemModelTester::FailureReportingMode::QtTest);
    proxy.setSourceModel(&model);
    model.setTrace(trace);
    QItemSelectionModel selection(&proxy);
    const int kernel = [&] {
        for (uint32_t i = trace->spanCount(); i-- > 0;)
            if (trace->spans.kind[i] == SpanKind::Kernel)
                return int(i);
        return -1;
    }();
    QVERIFY(kernel >= 0);
    selection.setCurrentIndex(proxy.index(proxy.rowOfSpan(kernel), 0), QItemSelectionModel::ClearAndSelect);
    QCOMPARE(proxy.rowOfSpan(kernel), kernel); // unsorted, unfiltered: the model's rows

    // Every column in both orders: rows in SortRole's order (QVariant's comparison, as a QSortFilterProxyModel
    // sorts), ties in span order, the current row on the kernel.
    for (int column = 0; column < SpanTableModel::ColumnCount; ++column) {
        for (const Qt::SortOrder order : {Qt::AscendingOrder, Qt::DescendingOrder}) {
            proxy.sort(column, order);
            QCOMPARE(proxy.rowCount(), model.rowCount());
            for (int r = 1; r < proxy.rowCount(); ++r) {
                const QVariant a = proxy.index(r - 1, column).data(SpanTableModel::SortRole);
                const QVariant b = proxy.index(r, column).data(SpanTableModel::SortRole);
                const auto c = QVariant::compare(a, b);
                const bool inOrder = c == QPartialOrdering::Equivalent
                    ? proxy.spanAtRow(r - 1) < proxy.spanAtRow(r)
                    : (order == Qt::AscendingOrder ? c == QPartialOrdering::Less : c == QPartialOrdering::Greater);
                QVERIFY2(inOrder,
                         qPrintable(QStringLiteral("column %1 row %2: %3 then %4")
                                        .arg(column)
                                        .arg(r)
                                        .arg(a.toString(), b.toString())));
            }
            QCOMPARE(proxy.spanAtRow(selection.currentIndex().row()), kernel);
        }
    }
    // Sorted and filtered; a new trace keeps both.
    proxy.sort(SpanTableModel::StartColumn, Qt::DescendingOrder);
    proxy.setFilterText(QStringLiteral("kernel"));
    QVERIFY(proxy.rowCount() > 0 && proxy.rowCount() < model.rowCount());
    QCOMPARE(proxy.spanAtRow(selection.currentIndex().row()), kernel);
    auto checkSortedKernels = [&] {
        for (int r = 0; r < proxy.rowCount(); ++r) {
            const auto i = uint32_t(proxy.spanAtRow(r));
            QCOMPARE(proxy.rowOfSpan(int(i)), r);
            QVERIFY(trace->spans.kind[i] == SpanKind::Kernel || trace->spans.kind[i] == SpanKind::ApiCall);
            if (r > 0)
                QVERIFY(trace->spans.start[i] <= trace->spans.start[uint32_t(proxy.spanAtRow(r - 1))]);
        }
    };
    checkSortedKernels();
    const int kernels = proxy.rowCount();
    model.setTrace(trace);
    QCOMPARE(proxy.rowCount(), kernels);
    checkSortedKernels();
    // A span filtered out has no row and loses the current row.
    selection.setCurrentIndex(proxy.index(0, 0), QItemSelectionModel::ClearAndSelect);
    const int first = proxy.spanAtRow(0);
    proxy.setFilterText(QStringLiteral("no span is called this"));
    QCOMPARE(proxy.rowCount(), 0);
    QCOMPARE(proxy.rowOfSpan(first), -1);
    QVERIFY(!selection.currentIndex().isValid());
    QCOMPARE(proxy.headerData(SpanTableModel::DurationColumn, Qt::Horizontal).toString(), QStringLiteral("Duration"));
    // Back to the model's order.
    proxy.setFilterText({});
    proxy.sort(-1);
    for (int r = 0; r < proxy.rowCount(); ++r)
        QCOMPARE(proxy.spanAtRow(r), r);
}

// Kernel signatures are shown by their short name; the full demangled one is the tooltip and is searched too.
void TestModels::spanSortOfMillionsIsStableAndStops()
{
    // Beyond 2^20 rows sortSpans sorts blocks and merges them (so that it can stop between the steps): the rows in
    // both orders as one stable sort has them (ties in span order), over three blocks; and stopped when asked.
    Trace t;
    const uint32_t s = t.addTrack({TrackKind::Stream, "s", 0});
    const uint32_t n = (1u << 21) + 777;
    for (uint32_t i = 0; i < n; ++i)
        t.addSpan({s, SpanKind::Kernel, "k", int64_t(i) * 100, int64_t(i) * 100 + int64_t((i * 7919u) % 50)});
    t.finalize();
    const SpanTableModel::Source source{std::make_shared<const Trace>(std::move(t)), nullptr};
    const Trace& trace = *source.trace;
    for (const Qt::SortOrder order : {Qt::AscendingOrder, Qt::DescendingOrder}) {
        std::vector<uint32_t> rows(n);
        std::iota(rows.begin(), rows.end(), 0u);
        QVERIFY(SpanTableModel::sortSpans(source, rows, SpanTableModel::DurationColumn, order));
        std::vector<uint32_t> expected(n);
        std::iota(expected.begin(), expected.end(), 0u);
        auto duration = [&trace](uint32_t i) { return trace.spans.end[i] - trace.spans.start[i]; };
        std::stable_sort(expected.begin(), expected.end(), [&](uint32_t a, uint32_t b) {
            return order == Qt::AscendingOrder ? duration(a) < duration(b) : duration(a) > duration(b);
        });
        QVERIFY(rows == expected);
    }
    std::atomic<bool> cancel{true};
    std::vector<uint32_t> rows(n);
    std::iota(rows.begin(), rows.end(), 0u);
    QVERIFY(!SpanTableModel::sortSpans(source, rows, SpanTableModel::DurationColumn, Qt::AscendingOrder, &cancel));
    QVERIFY(SpanTableModel::spansMatching(source, QStringLiteral("k"), &cancel).empty());
    cancel = false;
    QCOMPARE(SpanTableModel::spansMatching(source, QStringLiteral("k"), &cancel).size(), size_t(n));
}

void TestModels::spanTableShowsShortNames()
{
    const auto trace = kernelNamesTrace();
    SpanTableModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    SpanTableProxy proxy;
    proxy.setSourceModel(&model);
    model.setTrace(trace);
    const int kernel = findSpanNamed(*trace, kPyTorchKernel);
    const int mangled = findSpanNamed(*trace, kMangledKernel);
    const int launch = findSpanNamed(*trace, "cudaLaunchKernel");
    QVERIFY(kernel >= 0 && mangled >= 0 && launch >= 0);
    const QModelIndex name = model.index(kernel, SpanTableModel::NameColumn);
    QCOMPARE(name.data().toString(), kPyTorchKernelShort);
    QCOMPARE(name.data(Qt::ToolTipRole).toString(), QString::fromUtf8(kPyTorchKernel));
    QCOMPARE(name.data(SpanTableModel::SortRole).toString(), kPyTorchKernelShort);
    const QModelIndex symbol = model.index(mangled, SpanTableModel::NameColumn);
    QCOMPARE(symbol.data().toString(), QStringLiteral("vectorAdd"));
    QCOMPARE(symbol.data(Qt::ToolTipRole).toString(),
             QStringLiteral("vectorAdd(float const*, float const*, float*, int)"));
    // Names that are already short stay as they are, in the tooltip too.
    QCOMPARE(model.index(launch, SpanTableModel::NameColumn).data().toString(), QStringLiteral("cudaLaunchKernel"));
    QCOMPARE(model.index(launch, SpanTableModel::NameColumn).data(Qt::ToolTipRole).toString(),
             QStringLiteral("cudaLaunchKernel"));

    // The filter finds a kernel by what only its full name says, by its short name, and by the demangled
    // parameters of a mangled symbol.
    proxy.setFilterText(QStringLiteral("MulFunctor"));
    QCOMPARE(proxy.rowCount(), 2);
    for (int r = 0; r < proxy.rowCount(); ++r)
        QCOMPARE(trace->spanName(uint32_t(proxy.spanAtRow(r))), std::string_view(kPyTorchKernel));
    proxy.setFilterText(QStringLiteral("vectorized_elementwise"));
    QCOMPARE(proxy.rowCount(), 2);
    proxy.setFilterText(QStringLiteral("float const*"));
    QCOMPARE(proxy.rowCount(), 1);
    QCOMPARE(proxy.spanAtRow(0), mangled);
    proxy.setFilterText(QStringLiteral("vectorAdd"));
    QCOMPARE(proxy.rowCount(), 1);
    proxy.setFilterText(QStringLiteral("launchkernel"));
    QCOMPARE(proxy.rowCount(), 3);
    proxy.setFilterText(QStringLiteral("no such kernel"));
    QCOMPARE(proxy.rowCount(), 0);
    proxy.setFilterText({});
    QCOMPARE(proxy.rowCount(), int(trace->spanCount()));
    // Sorted by the name shown.
    proxy.sort(SpanTableModel::NameColumn, Qt::AscendingOrder);
    QStringList shown;
    for (int r = 0; r < proxy.rowCount(); ++r)
        shown << proxy.index(r, SpanTableModel::NameColumn).data().toString();
    QStringList sorted = shown;
    std::sort(sorted.begin(), sorted.end());
    QCOMPARE(shown, sorted);
}

void TestModels::inspectorTitlesTheShortNameAndShowsTheFullOne()
{
    const auto trace = kernelNamesTrace();
    const int kernel = findSpanNamed(*trace, kPyTorchKernel);
    const QString html = spanInspectorHtml(*trace, kernel);
    // The short name is the title; the full demangled one follows, once, under "Full name".
    QVERIFY2(html.contains(QStringLiteral("</span> ") + kPyTorchKernelShort.toHtmlEscaped() + QStringLiteral("</h3>")),
             qPrintable(html));
    QVERIFY(html.contains(QStringLiteral("Full name")));
    QCOMPARE(html.count(QString::fromUtf8(kPyTorchKernel).toHtmlEscaped()), 1);
    // The text of the inspector, as the reader sees (and selects) it.
    QTextDocument doc;
    doc.setHtml(html);
    const QString text = doc.toPlainText();
    QVERIFY(text.startsWith(QStringLiteral("■ ") + kPyTorchKernelShort));
    QVERIFY(text.contains(QString::fromUtf8(kPyTorchKernel)));
    // What launched it is listed by its name; the launch lists the kernel by its short name only.
    QVERIFY(text.contains(QStringLiteral("launched by ■ cudaLaunchKernel")));
    int launch = -1;
    for (const Flow& f : trace->flows)
        if (int(f.to) == kernel)
            launch = int(f.from);
    QVERIFY(launch >= 0);
    const QString launchHtml = spanInspectorHtml(*trace, launch);
    QVERIFY(launchHtml.contains(kPyTorchKernelShort.toHtmlEscaped()));
    QVERIFY(!launchHtml.contains(QStringLiteral("MulFunctor")));
    QVERIFY(!launchHtml.contains(QStringLiteral("Full name"))); // "cudaLaunchKernel" says it all

    // A mangled symbol: demangled in full, and the symbol as recorded.
    const QString symbolHtml = spanInspectorHtml(*trace, findSpanNamed(*trace, kMangledKernel));
    QVERIFY(symbolHtml.contains(QStringLiteral("vectorAdd</h3>")));
    QVERIFY(symbolHtml.contains(QStringLiteral("vectorAdd(float const*, float const*, float*, int)")));
    QVERIFY(symbolHtml.contains(QString::fromUtf8(kMangledKernel)));
}

void TestModels::analysisNamesSpansShortly()
{
    const auto analyzed = makeAnalyzedTrace(Trace(*kernelNamesTrace()));
    QVERIFY(!analyzed->report.criticalPath.segments.empty());
    const QString html = analysisHtml(analyzed.get(), {}, {});
    QVERIFY(html.contains(QStringLiteral("Critical path")));
    QVERIFY(html.contains(kPyTorchKernelShort.toHtmlEscaped()));
    QVERIFY2(!html.contains(QStringLiteral("MulFunctor")), qPrintable(html));
    QVERIFY(!html.contains(QString::fromUtf8(kMangledKernel)));
}

// ---- panels' content --------------------------------------------------------------------------------------

// The window stops the analysis of a trace it no longer shows: with the flag set, no stage runs (no checks, no
// diagnostics, no metrics); clear, the report is whole.
void TestModels::cancelledAnalysisSkipsItsStages()
{
    auto run = RunController::simulate(loadLesson(QStringLiteral("09"), QStringLiteral("pageable")), {},
                                       QStringLiteral("pageable"));
    QVERIFY(run);
    const auto trace = std::make_shared<const Trace>(std::move(run).value());
    std::atomic<bool> stop{false};
    const auto whole = makeAnalyzedTrace(trace, &stop);
    QVERIFY(!whole->report.checks.empty());
    QVERIFY(!whole->report.diagnostics.empty());
    QVERIFY(whole->report.metrics.makespanNs > 0);
    stop = true;
    const auto stopped = makeAnalyzedTrace(trace, &stop);
    QVERIFY(stopped->report.checks.empty());
    QVERIFY(stopped->report.diagnostics.empty());
    QCOMPARE(stopped->report.metrics.makespanNs, int64_t(0));
    QCOMPARE(stopped->trace, trace);
}

void TestModels::analysisSaysPassFailWhyAndDiagnoses()
{
    auto pinned = RunController::simulate(loadLesson(QStringLiteral("09")));
    QVERIFY(pinned);
    const auto good = makeAnalyzedTrace(std::move(pinned).value());
    QVERIFY(!good->report.checks.empty());
    const QString html = analysisHtml(good.get(), {}, {});
    QVERIFY(html.contains(QStringLiteral("PASS")));
    QVERIFY(!html.contains(QStringLiteral("FAIL")));
    QVERIFY(html.contains(qs(good->report.checks.front().expectation.why).toHtmlEscaped()));
    QVERIFY(html.contains(QStringLiteral("Makespan")));

    // The contrasting variant fails its key check, and a diagnostic says why, with a link to the spans.
    auto pageable = RunController::simulate(loadLesson(QStringLiteral("09"), QStringLiteral("pageable")), {},
                                            QStringLiteral("pageable"));
    QVERIFY(pageable);
    const auto bad = makeAnalyzedTrace(std::move(pageable).value());
    const QString badHtml =
        analysisHtml(bad.get(), QStringLiteral("Lesson"), QStringLiteral("Text"), QStringLiteral("Variant “pageable”"));
    QVERIFY(badHtml.contains(QStringLiteral("FAIL")));
    QVERIFY(badHtml.contains(QStringLiteral("Variant “pageable”")));
    QVERIFY2(!bad->report.diagnostics.empty(), "pageable copies are diagnosed");
    // The variant's effect comes first, named by the analysis, with a link to its spans.
    QCOMPARE(bad->report.effect, QStringLiteral("pageable-memcpy"));
    QVERIFY(badHtml.contains(QStringLiteral("What this run shows")));
    QVERIFY(badHtml.contains(QStringLiteral("Copies from pageable host memory block the host")));
    QVERIFY(badHtml.contains(qs(bad->report.diagnostics.front().message).toHtmlEscaped()));
    QVERIFY(badHtml.contains(QStringLiteral("href='span:")));
    // The lesson's own run shows copies overlapping kernels; its other findings are listed as diagnostics.
    QCOMPARE(good->report.effect, QStringLiteral("copy-compute-overlap"));
    QVERIFY(html.contains(QStringLiteral("What this run shows")));
    QVERIFY(html.contains(QStringLiteral("Copies overlapped kernels")));
    QVERIFY(html.contains(QStringLiteral("Diagnostics")));
    QVERIFY(!html.contains(QStringLiteral("does not show in this run")));
    // A trace whose effect the analysis does not find says so.
    auto serial = RunController::simulate(loadLesson(QStringLiteral("08"), QStringLiteral("one-stream")), {},
                                          QStringLiteral("one-stream"));
    QVERIFY(serial);
    auto wrong = makeAnalyzedTrace(std::move(serial).value());
    const_cast<AnalyzedTrace&>(*wrong).report.effect = QStringLiteral("copy-compute-overlap");
    QVERIFY(analysisHtml(wrong.get(), {}, {}).contains(QStringLiteral("does not show in this run")));
}

void TestModels::analysisListsTheCriticalPath()
{
    // One stream: the path runs through every kernel, each released by the one before it (stream order).
    auto serial = RunController::simulate(loadLesson(QStringLiteral("02")));
    QVERIFY(serial);
    const auto at = makeAnalyzedTrace(std::move(serial).value());
    const CriticalPath& path = at->report.criticalPath;
    QVERIFY(path.segments.size() >= 20);
    const QString html = analysisHtml(at.get(), {}, {});
    QVERIFY(html.contains(QStringLiteral("Critical path")));
    QVERIFY(html.contains(QStringLiteral("stream order")));
    QVERIFY(html.contains(formatNs(double(path.lengthNs))));
    // Each listed part links to its span.
    const CriticalPathSegment& last = path.segments.back();
    QVERIFY(html.contains(QStringLiteral("href='span:%1'").arg(last.span)));
    QVERIFY(html.contains(formatNs(double(last.contributionNs))));
}

// A ready kernel held by the SMs another kernel filled: the panel names the holder and the wait, not idle time.
void TestModels::analysisNamesWhatHeldTheCriticalPath()
{
    auto filled = RunController::simulate(loadLesson(QStringLiteral("12"), QStringLiteral("gpu-filling")), {},
                                          QStringLiteral("gpu-filling"));
    QVERIFY(filled);
    const auto at = makeAnalyzedTrace(std::move(filled).value());
    const CriticalPath& path = at->report.criticalPath;
    QVERIFY(path.resourceWaitNs >= 400'000);
    const QString html = analysisHtml(at.get(), {}, {});
    const auto small = std::find_if(path.segments.begin(), path.segments.end(),
                                    [](const CriticalPathSegment& seg) { return seg.name == "small"; });
    QVERIFY(small != path.segments.end());
    QVERIFY2(html.contains(QStringLiteral("waited ") + formatNs(double(small->waitNs))
                           + QStringLiteral(" for SMs held by ")),
             qPrintable(html));
    QVERIFY(html.contains(QStringLiteral("Its operations waited ") + formatNs(double(path.resourceWaitNs))));
    QVERIFY(!html.contains(QStringLiteral("500.0 µs idle")));
}

// What released a span, by the critical path's rule: lesson 02's second matmul waited for the transpose before it in
// its one stream (it was launched long before it started); lesson 12's small kernel for the SMs the big one held.
void TestModels::inspectorSaysWhyASpanStarted()
{
    auto one = RunController::simulate(loadLesson(QStringLiteral("02")));
    QVERIFY(one);
    int matmuls = 0, second = -1;
    for (uint32_t i = 0; i < one->spanCount() && second < 0; ++i)
        if (one->spans.kind[i] == SpanKind::Kernel && one->spanName(i) == "matmul" && ++matmuls == 2)
            second = int(i);
    QVERIFY(second >= 0);
    QTextDocument doc;
    doc.setHtml(spanInspectorHtml(*one, second));
    const QString text = doc.toPlainText();
    QVERIFY2(text.contains(QStringLiteral("Started"))
                 && text.contains(QStringLiteral("the previous operation in its stream")),
             qPrintable(text));
    const uint32_t before = one->trackBegin(one->spans.track[uint32_t(second)]);
    QVERIFY(uint32_t(second) > before);
    const auto previous = uint32_t(second) - 1; // spans of a track are in time order
    QVERIFY(text.contains(QStringLiteral("after ") + qs(shortSpanName(one->spanName(previous)))));
    QVERIFY(text.contains(QStringLiteral("ended at ")
                          + formatNs(double(one->spans.end[previous] - one->timeRange().first))));

    // The first kernel of an idle stream starts after its launch.
    uint32_t first = uint32_t(one->spanCount());
    for (uint32_t i = 0; i < one->spanCount(); ++i)
        if (one->spans.kind[i] == SpanKind::Kernel
            && (first == one->spanCount() || one->spans.start[i] < one->spans.start[first]))
            first = i;
    doc.setHtml(spanInspectorHtml(*one, int(first)));
    QVERIFY2(doc.toPlainText().contains(QStringLiteral("after its launch cudaLaunchKernel")),
             qPrintable(doc.toPlainText()));

    auto filling = RunController::simulate(loadLesson(QStringLiteral("12"), QStringLiteral("gpu-filling")));
    QVERIFY(filling);
    const int small = findSpanNamed(*filling, "small");
    QVERIFY(small >= 0);
    doc.setHtml(spanInspectorHtml(*filling, small));
    QVERIFY2(doc.toPlainText().contains(QStringLiteral("for SMs held by 'big'")), qPrintable(doc.toPlainText()));
}

void TestModels::inspectorListsDependencies()
{
    auto simulated = RunController::simulate(loadLesson(QStringLiteral("03")));
    QVERIFY(simulated);
    const Trace& t = *simulated;
    // A span that waited on an event: its inspector names the work it waited for.
    int waiter = -1;
    for (const Flow& f : t.flows)
        if (f.kind == FlowKind::Event)
            waiter = int(f.to);
    QVERIFY(waiter >= 0);
    const QString html = spanInspectorHtml(t, waiter);
    QVERIFY(html.contains(qs(t.spanName(uint32_t(waiter))).toHtmlEscaped()));
    QVERIFY(html.contains(QStringLiteral("waited for event after")));
    QVERIFY(html.contains(QStringLiteral("href='span:")));
    QVERIFY(html.contains(QStringLiteral("href='op:")));
    QVERIFY(spanInspectorHtml(t, -1).contains(QStringLiteral("Click a bar")));
}

// A thread's repeats are told apart: lesson 17 runs its two kernels ten times, and each span names its repeat in the
// inspector and the span table; a lesson whose threads run their ops once (03) shows no repeat.
void TestModels::repeatsAreToldApart()
{
    auto repeated = RunController::simulate(loadLesson(QStringLiteral("17")));
    QVERIFY(repeated);
    const Trace& t = *repeated;
    std::set<int> tasks;
    int third = -1;
    for (uint32_t i = 0; i < t.spanCount(); ++i)
        if (t.spans.kind[i] == SpanKind::Kernel && t.spanName(i) == "a") {
            tasks.insert(t.spans.taskOf(i));
            if (t.spans.taskOf(i) == 3)
                third = int(i);
        }
    QCOMPARE(tasks.size(), size_t(10));
    QVERIFY(third >= 0);
    QTextDocument doc;
    doc.setHtml(spanInspectorHtml(t, third));
    QVERIFY2(doc.toPlainText().contains(QStringLiteral("iteration 0, repeat 3")), qPrintable(doc.toPlainText()));
    SpanTableModel model;
    model.setTrace(std::make_shared<const Trace>(*repeated));
    QCOMPARE(model.data(model.index(third, SpanTableModel::OriginColumn)).toString(), QStringLiteral("0 · 0 · 0 · r3"));

    auto once = RunController::simulate(loadLesson(QStringLiteral("03")));
    QVERIFY(once);
    QVERIFY(once->spans.task.empty());
    doc.setHtml(spanInspectorHtml(*once, 0));
    QVERIFY(!doc.toPlainText().contains(QStringLiteral("repeat")));
}

// ---- lessons ----------------------------------------------------------------------------------------------

void TestModels::lessonList()
{
    LessonListModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QCOMPARE(model.rowCount(), int(listPresets().size()));
    QCOMPARE(model.rowOf(QStringLiteral("01")), 0);
    QCOMPARE(model.rowOf(QStringLiteral("1")), 0);
    QCOMPARE(model.rowOf(QStringLiteral("two-streams")), 0);
    QCOMPARE(model.rowOf(QStringLiteral("01-two-streams")), 0);
    QCOMPARE(model.rowOf(QStringLiteral("nope")), -1);
    const QModelIndex first = model.index(0);
    QVERIFY(!first.data(LessonListModel::DescriptionRole).toString().isEmpty());
    QVERIFY(first.data(LessonListModel::VariantIdsRole).toStringList().contains(QStringLiteral("one-stream")));

    LessonGallery gallery;
    QSignalSpy open(&gallery, &LessonGallery::openRequested);
    QVERIFY(gallery.selectedLesson().isEmpty()); // nothing highlighted before a lesson is open
    gallery.setCurrentLesson(QStringLiteral("08"), QStringLiteral("one-stream"));
    QCOMPARE(gallery.selectedLesson(), QStringLiteral("08-copy-compute-pipeline"));
    QCOMPARE(gallery.selectedVariant(), QStringLiteral("one-stream"));
    QCOMPARE(open.count(), 0); // highlighting opens nothing
    // Picking a variant opens it.
    auto* variants = gallery.findChild<QComboBox*>();
    QVERIFY(variants);
    const int plain = variants->findData(QString());
    QVERIFY(plain >= 0);
    variants->setCurrentIndex(plain);
    Q_EMIT variants->activated(plain);
    QCOMPARE(open.count(), 1);
    QCOMPARE(open.at(0).at(0).toString(), QStringLiteral("08-copy-compute-pipeline"));
    QCOMPARE(open.at(0).at(1).toString(), QString());
    gallery.clearCurrentLesson();
    QVERIFY(gallery.selectedLesson().isEmpty());
}

// ---- formatting -------------------------------------------------------------------------------------------

void TestModels::parseBytes_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<qlonglong>("bytes");
    QTest::newRow("plain") << "4096" << 4096LL;
    QTest::newRow("MiB") << "16 MiB" << 16LL * 1024 * 1024;
    QTest::newRow("GB") << "1.5 GB" << 1536LL * 1024 * 1024;
    QTest::newRow("k") << "64k" << 65536LL;
    QTest::newRow("B") << "12 B" << 12LL;
    QTest::newRow("junk") << "lots" << -1LL;
    QTest::newRow("negative") << "-5" << -1LL;
}

void TestModels::parseBytes()
{
    QFETCH(QString, text);
    QFETCH(qlonglong, bytes);
    QCOMPARE(qlonglong(streamscope::parseBytes(text)), bytes);
    if (bytes > 0)
        QCOMPARE(qlonglong(streamscope::parseBytes(formatBytes(bytes))), bytes);
}
