// The concurrency histogram and the compare window on the offscreen platform: the histogram's bars are the time
// with exactly k GPU operations running (k = 0..max) and add up to the makespan, per device too; the strip under
// the timeline switches between over time and histogram and stays aligned; the compare window shows two runs on
// one time scale (zooming or panning one moves the other) with the metric differences (lesson 04 against its
// blocking variant, and against a trace file), and reports files it cannot open.
//
// With STREAMSCOPE_SCREENSHOT_DIR set, the tests also save what they show there (compare.png, histogram.png), for
// looking at the result.
#include "analysis.h"
#include "compare_view.h"
#include "concurrency_plot.h"
#include "document_loader.h"
#include "main_window.h"
#include "run_controller.h"
#include "timeline_view.h"
#include "trace_formats.h"
#include "window_fixture.h"

#include <QAction>
#include <QComboBox>
#include <QCoreApplication>
#include <QDir>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QToolButton>

#include <cmath>
#include <memory>
#include <numeric>

using namespace streamscope;

namespace {

std::shared_ptr<const Trace> simulateLesson(const QString& lesson, const QString& variant = {})
{
    auto doc = loadDocument(lesson, variant);
    if (!doc)
        return nullptr;
    auto trace = RunController::simulate(doc->scenario, {}, variant);
    if (!trace)
        return nullptr;
    return std::make_shared<const Trace>(std::move(trace).value());
}

double barSum(const QCPBars* bars)
{
    double sum = 0;
    for (auto it = bars->data()->constBegin(); it != bars->data()->constEnd(); ++it)
        sum += it->value;
    return sum;
}

// The visible range of a timeline relative to its trace's start.
std::pair<double, double> relativeRange(const TimelineView* t)
{
    const auto [from, to] = t->visibleTimeRange();
    const double o = double(t->timelineLayout().origin());
    return {from - o, to - o};
}

void saveScreenshot(QWidget* w, const QString& name)
{
    const QString dir = qEnvironmentVariable("STREAMSCOPE_SCREENSHOT_DIR");
    if (!dir.isEmpty())
        w->grab().save(QDir(dir).filePath(name));
}

} // namespace

class TestCompare : public QObject {
    Q_OBJECT
private:
    std::unique_ptr<MainWindow> makeWindow() { return testing::makeTestWindow({1600, 1000}); }

    bool openAndRun(MainWindow& w, const QString& lesson, const QString& variant = {})
    {
        return testing::openAndRun(w, lesson, variant, 10000);
    }

private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName(QStringLiteral("StreamScopeTest"));
        QCoreApplication::setApplicationName(QStringLiteral("tst_compare"));
        QSettings().clear();
    }

    // The strip's mode is remembered between windows: every test starts from the default.
    void init() { QSettings().clear(); }

    void histogramSumsToTheMakespan_data()
    {
        QTest::addColumn<QString>("lesson");
        QTest::addColumn<QString>("variant");
        QTest::newRow("04 non-blocking") << QStringLiteral("04") << QString();
        QTest::newRow("04 blocking") << QStringLiteral("04") << QStringLiteral("blocking");
        QTest::newRow("08 pipeline") << QStringLiteral("08") << QString();
        QTest::newRow("10 small kernels") << QStringLiteral("10") << QString();
    }

    void histogramSumsToTheMakespan()
    {
        QFETCH(QString, lesson);
        QFETCH(QString, variant);
        const auto trace = simulateLesson(lesson, variant);
        QVERIFY(trace);
        const TraceAnalysis analysis = analyzeTrace(*trace);
        QVERIFY(analysis.makespanNs > 0);

        ConcurrencyPlot plot;
        plot.resize(900, 200);
        plot.show();
        plot.setTrace(trace);
        plot.setMode(ConcurrencyPlot::Mode::Histogram);
        const QCPBars* bars = plot.histogramBars();
        QVERIFY(bars->visible());
        QVERIFY(!plot.graph0()->visible());
        // One bar per k = 0..max, as long as the time with exactly k running; together the whole makespan.
        QCOMPARE(bars->dataCount(), analysis.concurrency.maxConcurrency + 1);
        QCOMPARE(plot.maxConcurrency(), analysis.concurrency.maxConcurrency);
        for (int k = 0; k < bars->dataCount(); ++k) {
            QCOMPARE(bars->data()->at(k)->key, double(k));
            QCOMPARE(int64_t(bars->data()->at(k)->value), analysis.concurrency.timeAtNs[size_t(k)]);
        }
        QCOMPARE(int64_t(std::llround(barSum(bars))), analysis.makespanNs);
        QCOMPARE(plot.histogram().totalNs, analysis.makespanNs);
        // Labelled with duration and share: the longest bar's share is its time over the makespan.
        const QStringList labels = plot.histogramBarLabels();
        QCOMPARE(labels.size(), bars->dataCount());
        const auto longest =
            std::max_element(analysis.concurrency.timeAtNs.begin(), analysis.concurrency.timeAtNs.end());
        const double share = 100.0 * double(*longest) / double(analysis.makespanNs);
        const QString label = labels.at(int(longest - analysis.concurrency.timeAtNs.begin()));
        QVERIFY2(label.contains(QString::number(share, 'f', share >= 9.95 ? 0 : 1) + QStringLiteral(" %")),
                 qPrintable(label));
        // Axis titles say what the bars are.
        QCOMPARE(plot.yAxis->label(), QStringLiteral("operations running"));
        QVERIFY(plot.xAxis->label().startsWith(QStringLiteral("time")));
        // The time axis leaves room for the longest bar's label.
        QVERIFY(plot.xAxis->range().upper > double(*longest));
    }

    void histogramPerDevice()
    {
        const auto trace = simulateLesson(QStringLiteral("07"));
        QVERIFY(trace);
        const TraceAnalysis analysis = analyzeTrace(*trace);
        QVERIFY(analysis.devices.size() >= 2);
        ConcurrencyPlot plot;
        plot.resize(900, 220);
        plot.show();
        plot.setTrace(trace);
        plot.setMode(ConcurrencyPlot::Mode::Histogram);
        QVERIFY(plot.deviceChooser()->isVisible());
        const std::vector<int> devices = plot.histogramDevices();
        QCOMPARE(devices.size(), analysis.devices.size() + 1);
        QCOMPARE(devices.front(), -1);
        for (const DeviceAnalysis& d : analysis.devices) {
            plot.setHistogramDevice(d.device);
            QCOMPARE(plot.histogramDevice(), d.device);
            QCOMPARE(plot.histogramBars()->dataCount(), d.concurrency.maxConcurrency + 1);
            QCOMPARE(int64_t(std::llround(barSum(plot.histogramBars()))), d.makespanNs);
            QVERIFY(plot.xAxis->label().contains(QStringLiteral("GPU %1").arg(d.device)));
        }
        // The chooser picks the same.
        plot.deviceChooser()->setCurrentIndex(0);
        Q_EMIT plot.deviceChooser()->activated(0);
        QCOMPARE(plot.histogramDevice(), -1);
        QCOMPARE(int64_t(std::llround(barSum(plot.histogramBars()))), analysis.makespanNs);

        // A one-device trace has no chooser.
        plot.setTrace(simulateLesson(QStringLiteral("01")));
        QVERIFY(!plot.deviceChooser()->isVisible());
        QCOMPARE(plot.histogramDevice(), -1);
    }

    // A big trace's strip is drawn before its steps are counted (setTrace with dataToCome): it says so and shows no
    // steps or bars, ignores data counted for another trace, and then shows exactly what it would have built itself,
    // the histograms with them where they were asked for.
    void stripCountsAfterTheTraceIsDrawn()
    {
        const auto trace = simulateLesson(QStringLiteral("07"));
        const auto other = simulateLesson(QStringLiteral("08"));
        QVERIFY(trace && other);
        ConcurrencyPlot reference;
        reference.resize(900, 200);
        reference.show();
        reference.setTrace(trace);
        reference.setVisibleTimeRange(double(trace->timeRange().first), double(trace->timeRange().second));
        QVERIFY(reference.graph0()->dataCount() > 0);

        ConcurrencyPlot plot;
        plot.resize(900, 200);
        plot.show();
        plot.setTrace(trace, nullptr, true);
        plot.setVisibleTimeRange(double(trace->timeRange().first), double(trace->timeRange().second));
        QVERIFY(plot.isCounting());
        QCOMPARE(plot.graph0()->dataCount(), 0);
        QCOMPARE(plot.runningAt(1000), -1);
        plot.setMode(ConcurrencyPlot::Mode::Histogram); // nothing computed on the GUI thread meanwhile
        QCOMPARE(plot.histogramBars()->dataCount(), 0);
        QVERIFY(plot.histogramDevices().empty());
        plot.setMode(ConcurrencyPlot::Mode::OverTime);

        plot.setData(other, makeConcurrencyPlotData(*other)); // counted for a trace no longer shown: dropped
        QVERIFY(plot.isCounting());
        plot.setData(trace, makeConcurrencyPlotData(*trace, true));
        QVERIFY(!plot.isCounting());
        QCOMPARE(plot.maxConcurrency(), reference.maxConcurrency());
        QCOMPARE(plot.graph0()->dataCount(), reference.graph0()->dataCount());
        for (int i = 0; i < plot.graph0()->dataCount(); ++i) {
            QCOMPARE(plot.graph0()->data()->at(i)->key, reference.graph0()->data()->at(i)->key);
            QCOMPARE(plot.graph0()->data()->at(i)->value, reference.graph0()->data()->at(i)->value);
        }
        const double mid = (plot.graph0()->data()->at(0)->key + plot.graph0()->data()->at(1)->key) / 2;
        QCOMPARE(plot.runningAt(mid), reference.runningAt(mid));
        // The histograms came with the steps: the same as computed when first shown.
        QCOMPARE(plot.histogramDevices(), reference.histogramDevices());
        plot.setMode(ConcurrencyPlot::Mode::Histogram);
        reference.setMode(ConcurrencyPlot::Mode::Histogram);
        QCOMPARE(plot.histogram().timeAtNs, reference.histogram().timeAtNs);
        QCOMPARE(plot.histogramBarLabels(), reference.histogramBarLabels());
    }

    void histogramToggleUnderTheTimeline()
    {
        auto w = makeWindow();
        QVERIFY(openAndRun(*w, QStringLiteral("04")));
        ConcurrencyPlot* plot = w->concurrencyPlot();
        QCOMPARE(plot->mode(), ConcurrencyPlot::Mode::OverTime);
        const int overTimeHeight = plot->height();
        QSignalSpy modes(plot, &ConcurrencyPlot::modeChanged);
        QTest::mouseClick(plot->modeButton(), Qt::LeftButton);
        QCOMPARE(modes.count(), 1);
        QCOMPARE(plot->mode(), ConcurrencyPlot::Mode::Histogram);
        const TraceAnalysis analysis = analyzeTrace(*w->currentTrace()->trace);
        QCOMPARE(plot->histogramBars()->dataCount(), analysis.concurrency.maxConcurrency + 1);
        QCOMPARE(int64_t(std::llround(barSum(plot->histogramBars()))), analysis.makespanNs);
        // The strip grows to give each bar a labelled row, and its vertical axis stays under the timeline's.
        QTRY_VERIFY(plot->height() > overTimeHeight);
        // The timeline makes room: the strip stays whole inside the centre.
        QTRY_VERIFY(plot->geometry().bottom() < plot->parentWidget()->height());
        QVERIFY(w->timeline()->geometry().bottom() <= plot->geometry().top());
        w->timeline()->replot(QCustomPlot::rpImmediateRefresh);
        plot->replot(QCustomPlot::rpImmediateRefresh);
        QCOMPARE(plot->axisRect()->left(), w->timeline()->timeAxisRect().left());
        saveScreenshot(w.get(), QStringLiteral("histogram.png"));
        // Zooming the timeline meanwhile is remembered: back to over time, the plot shows the timeline's range.
        const auto [first, last] = w->currentTrace()->trace->timeRange();
        w->timeline()->setVisibleTimeRange(double(first) + 0.2 * double(last - first),
                                           double(first) + 0.6 * double(last - first));
        w->timeline()->replot(QCustomPlot::rpImmediateRefresh);
        QCOMPARE(plot->xAxis->range().lower, 0.0); // the histogram's time axis starts at 0 whatever the zoom
        QTest::mouseClick(plot->modeButton(), Qt::LeftButton);
        QCOMPARE(plot->mode(), ConcurrencyPlot::Mode::OverTime);
        QVERIFY(plot->graph0()->visible());
        QVERIFY(!plot->histogramBars()->visible());
        const auto [a, b] = plot->visibleTimeRange();
        const auto [ta, tb] = w->timeline()->visibleTimeRange();
        QVERIFY(std::abs(a - ta) < 1 && std::abs(b - tb) < 1);
        QVERIFY(std::abs(plot->xAxis->range().lower - (ta - double(first))) < 1);
        // The choice is remembered for the next window.
        plot->setMode(ConcurrencyPlot::Mode::Histogram);
        auto w2 = makeWindow();
        QCOMPARE(w2->concurrencyPlot()->mode(), ConcurrencyPlot::Mode::Histogram);
        w2->concurrencyPlot()->setMode(ConcurrencyPlot::Mode::OverTime);
    }

    void compareWithVariantAlignsTimelines()
    {
        auto w = makeWindow();
        QVERIFY(openAndRun(*w, QStringLiteral("04")));
        QAction* menuEntry = w->findChild<QAction*>(QStringLiteral("compare-variant"));
        QVERIFY(menuEntry && menuEntry->isEnabled());
        QVERIFY(w->findChild<QAction*>(QStringLiteral("compare-file")));
        CompareView* view = w->compareWithVariant(QStringLiteral("blocking"));
        QVERIFY(view);
        QCOMPARE(w->compareView(), view);
        QSignalSpy shown(view, &CompareView::comparisonShown);
        QVERIFY(view->isBusy());
        QVERIFY(shown.wait(10000));
        QVERIFY(view->isVisible());
        QVERIFY(view->comparison());
        const TraceComparison& c = *view->comparison();
        // 04 as written uses non-blocking streams (about 1 ms); its blocking variant serializes (about 4 ms).
        QVERIFY2(c.b.makespanNs > 3 * c.a.makespanNs,
                 qPrintable(QStringLiteral("%1 vs %2").arg(c.a.makespanNs).arg(c.b.makespanNs)));
        QCOMPARE(view->timelineA()->trace()->info.variant, std::string());
        QCOMPARE(view->timelineB()->trace()->info.variant, std::string("blocking"));
        QVERIFY(view->nameB().contains(QStringLiteral("Blocking streams")));

        // Both start at 0 on the same scale: the longer run fits, the shorter one shows the same span of time.
        view->timelineA()->replot(QCustomPlot::rpImmediateRefresh);
        view->timelineB()->replot(QCustomPlot::rpImmediateRefresh);
        auto [a0, a1] = relativeRange(view->timelineA());
        auto [b0, b1] = relativeRange(view->timelineB());
        QVERIFY(a0 <= 0 && a0 > -0.05 * double(c.b.makespanNs));
        QVERIFY(std::abs(a0 - b0) < 1 && std::abs(a1 - b1) < 1);
        QVERIFY(a1 >= double(c.b.makespanNs));
        // The same time is at the same x: time axes of equal left edge and width.
        QCOMPARE(view->timelineA()->timeAxisRect().left(), view->timelineB()->timeAxisRect().left());
        QCOMPARE(view->timelineA()->timeAxisRect().width(), view->timelineB()->timeAxisRect().width());

        // Zoom A with the keyboard: B follows; pan B: A follows.
        QTest::keyClick(view->timelineA(), Qt::Key_W);
        QTest::keyClick(view->timelineA(), Qt::Key_W);
        std::tie(a0, a1) = relativeRange(view->timelineA());
        std::tie(b0, b1) = relativeRange(view->timelineB());
        QVERIFY(a1 - a0 < 0.9 * double(c.b.makespanNs));
        QVERIFY(std::abs(a0 - b0) < 1 && std::abs(a1 - b1) < 1);
        QTest::keyClick(view->timelineB(), Qt::Key_D);
        const auto [a2, a3] = relativeRange(view->timelineA());
        const auto [b2, b3] = relativeRange(view->timelineB());
        QVERIFY(b2 > b0);
        QVERIFY(std::abs(a2 - b2) < 1 && std::abs(a3 - b3) < 1);
        view->fitBoth();
        std::tie(b0, b1) = relativeRange(view->timelineB());
        QVERIFY(b1 >= double(c.b.makespanNs) && b0 <= 0);

        // The table: makespan longer in B (a "+" change, marked worse), speedup and concurrency lower.
        const QStringList makespan = view->metricRow(QStringLiteral("Makespan"));
        QCOMPARE(makespan.size(), 4);
        QCOMPARE(makespan[1], QString::fromStdString(formatDuration(c.a.makespanNs)));
        QCOMPARE(makespan[2], QString::fromStdString(formatDuration(c.b.makespanNs)));
        QVERIFY2(makespan[3].startsWith(QStringLiteral("+")), qPrintable(makespan[3]));
        QVERIFY(makespan[3].contains(QStringLiteral("×")));
        QVERIFY(c.makespanDeltaNs > 0);
        const QStringList speedup = view->metricRow(QStringLiteral("Speedup over serialized work"));
        QVERIFY2(speedup.value(3).startsWith(QStringLiteral("\u2212")), qPrintable(speedup.value(3)));
        const QStringList maxConcurrency = view->metricRow(QStringLiteral("Max concurrency"));
        QCOMPARE(maxConcurrency.value(1), QString::number(c.a.concurrency.maxConcurrency));
        QCOMPARE(maxConcurrency.value(2), QString::number(c.b.concurrency.maxConcurrency));
        QVERIFY(!view->metricRow(QStringLiteral("Idle inside the makespan")).isEmpty());
        // Per stream and per stream pair.
        QCOMPARE(view->metricRow(QStringLiteral("s1")).size(), 4);
        const QStringList pair = view->metricRow(QStringLiteral("s1 ∥ s2"));
        QCOMPARE(pair.size(), 4);
        QVERIFY2(pair[3].startsWith(QStringLiteral("\u2212")), qPrintable(pair[3])); // overlap lost in B
        QVERIFY(view->summary().contains(QStringLiteral("as long")));

        // The histogram chart: one bar series per run, each adding up to its makespan.
        QCOMPARE(view->histogramPlot()->plottableCount(), 2);
        auto* barsA = qobject_cast<QCPBars*>(view->histogramPlot()->plottable(0));
        auto* barsB = qobject_cast<QCPBars*>(view->histogramPlot()->plottable(1));
        QVERIFY(barsA && barsB);
        QCOMPARE(int64_t(std::llround(barSum(barsA))), c.a.makespanNs);
        QCOMPARE(int64_t(std::llround(barSum(barsB))), c.b.makespanNs);
        QCOMPARE(barsA->dataCount(), c.a.concurrency.maxConcurrency + 1);
        QCOMPARE(barsB->dataCount(), c.b.concurrency.maxConcurrency + 1);
        view->resize(1500, 1000);
        QTest::qWait(50);
        saveScreenshot(view, QStringLiteral("compare.png"));

        // Comparing again reuses the window.
        QCOMPARE(w->compareWithVariant(QStringLiteral("per-thread-default")), view);
        QVERIFY(shown.wait(10000));
        QVERIFY(view->nameB().contains(QStringLiteral("per-thread")));
    }

    void compareVariantAgainstTheLessonAsWritten()
    {
        auto w = makeWindow();
        QVERIFY(openAndRun(*w, QStringLiteral("04"), QStringLiteral("blocking")));
        CompareView* view = w->compareWithVariant(QString());
        QVERIFY(view);
        QSignalSpy shown(view, &CompareView::comparisonShown);
        QVERIFY(shown.wait(10000));
        // A is the blocking variant open in the window, B the lesson without it: B is the faster one.
        QVERIFY(view->comparison()->makespanDeltaNs < 0);
        QVERIFY2(view->metricRow(QStringLiteral("Makespan")).value(3).startsWith(QStringLiteral("\u2212")),
                 qPrintable(view->metricRow(QStringLiteral("Makespan")).value(3)));
        QVERIFY(view->summary().contains(QStringLiteral("faster")));
    }

    void compareWithFile()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const auto blocking = simulateLesson(QStringLiteral("04"), QStringLiteral("blocking"));
        QVERIFY(blocking);
        const QString path = dir.filePath(QStringLiteral("blocking.chrome.json"));
        QVERIFY(exportTrace(*blocking, path.toStdString(), ExportFormat::Chrome));

        auto w = makeWindow();
        QVERIFY(openAndRun(*w, QStringLiteral("04")));
        CompareView* view = w->compareWithFile(path);
        QVERIFY(view);
        QSignalSpy shown(view, &CompareView::comparisonShown);
        QVERIFY(shown.wait(10000));
        QCOMPARE(view->timelineA()->trace(), w->currentTrace()->trace);
        QCOMPARE(view->nameB(), QStringLiteral("blocking.chrome.json"));
        const TraceComparison& c = *view->comparison();
        QCOMPARE(c.b.makespanNs, analyzeTrace(*blocking).makespanNs);
        QVERIFY(c.makespanDeltaNs > 0);
        QVERIFY(view->metricRow(QStringLiteral("Makespan")).value(3).startsWith(QStringLiteral("+")));

        // A file that is no trace: the window says so and nothing is compared.
        const QString bad = dir.filePath(QStringLiteral("bad.json"));
        QFile f(bad);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("{\"format\": \"streamscope-trace\", \"version\": ");
        f.close();
        QSignalSpy failed(view, &CompareView::failed);
        QCOMPARE(w->compareWithFile(bad), view);
        QVERIFY(failed.wait(10000));
        QVERIFY(failed.first().first().toString().contains(QStringLiteral("bad.json")));
        QVERIFY(!view->isBusy());
    }

    void comparisonRowsAreReadable()
    {
        const auto a = simulateLesson(QStringLiteral("09"));
        const auto b = simulateLesson(QStringLiteral("09"), QStringLiteral("pageable"));
        QVERIFY(a && b);
        const TraceComparison c = compareTraces(*a, *b);
        const std::vector<ComparisonRow> rows = comparisonRows(c);
        QVERIFY(!rows.empty());
        QVERIFY(rows.front().section);
        int sections = 0;
        bool copyRow = false;
        for (const ComparisonRow& r : rows) {
            sections += r.section;
            if (r.section)
                QVERIFY(r.a.isEmpty() && r.b.isEmpty() && r.change.isEmpty());
            if (r.metric == QLatin1String("Copy/compute overlap")) {
                copyRow = true;
                QVERIFY2(r.a.contains(QStringLiteral("%")), qPrintable(r.a));
                // Pageable copies do not overlap kernels: B is worse.
                QCOMPARE(r.better, -1);
            }
            if (r.metric == QLatin1String("Makespan"))
                QCOMPARE(r.better, c.makespanDeltaNs > 0 ? -1 : 1);
        }
        QVERIFY(copyRow);
        QVERIFY(sections >= 2);
        // The same trace against itself: no change anywhere.
        for (const ComparisonRow& r : comparisonRows(compareTraces(*a, *a)))
            if (!r.section && r.metric != QLatin1String("Makespan"))
                QCOMPARE(r.better, 0);
    }
};

QTEST_MAIN(TestCompare)
#include "tst_compare.moc"
