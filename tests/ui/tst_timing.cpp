// How the window shows GPU timing (DESIGN.md §4): the Timing choice goes to streamscope-cli as --timing (runs and
// sweeps) and is kept in QSettings; a trace whose timing changed the run gets a one-line banner with the cost and
// the diagnostic's cause and fix, one where CUPTI was not used a notice saying why; the inspector says how far a
// span's times are known and how far its CUDA events were from CUPTI; the timeline marks uncertain starts. The
// trace is made here in code, as an event-timed GPU run would write it.
#include "document_loader.h"
#include "format.h"
#include "main_window.h"
#include "notice_bar.h"
#include "run_controller.h"
#include "run_info_panel.h"
#include "span_inspector.h"
#include "theme.h"
#include "timeline_plottable.h"
#include "timeline_view.h"
#include "timing_text.h"
#include "trace_json.h"
#include "window_fixture.h"

#include <QAction>
#include <QApplication>
#include <QComboBox>
#include <QCoreApplication>
#include <QDir>
#include <QDockWidget>
#include <QFile>
#include <QImage>
#include <QPalette>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QToolButton>

#include <cmath>

using namespace streamscope;

namespace {

// An event-timed GPU run of two streams: timing cost it 50 % (3 ms against 2 ms untimed), CUPTI was not usable,
// the consumer's start event fired while the producer held the SMs (uncertain), and "tail" carries the distance of
// its CUDA events from CUPTI (as a "both" run writes it).
struct TimingTrace {
    Trace trace;
    uint32_t producer = 0, consumer = 0, tail = 0;
};

TimingTrace makeTimingTrace()
{
    TimingTrace r;
    Trace& t = r.trace;
    t.info.source = TraceSource::CudaEvents;
    t.info.backend = "cuda";
    t.info.scenarioId = "timing-test";
    t.info.scenarioTitle = "Timing test";
    t.info.settings = {
        {"CUDA_DEVICE_MAX_CONNECTIONS", "8 (default)"},
        {"timing", "events"},
        {"timing_reason", "CUDA events instead of CUPTI: libcupti could not be loaded (the test says so)"},
        {"timed_makespan_ns", "3000000"},
        {"untimed_makespan_ns", "2000000"},
        {"timing_perturbation", "1.5000"},
        {"event_timing_corrections", "0 starts corrected (0 us no longer drawn as running), 1 uncertain"}};
    DeviceInfo d;
    d.index = 0;
    d.name = "NVIDIA H200";
    t.info.devices.push_back(d);
    Track host;
    host.kind = TrackKind::HostThread;
    host.name = "main";
    host.device = 0;
    const uint32_t h = t.addTrack(host);
    Track s1;
    s1.kind = TrackKind::Stream;
    s1.name = "s1";
    s1.device = 0;
    s1.streamKind = StreamKind::NonBlocking;
    const uint32_t a = t.addTrack(s1);
    Track s2 = s1;
    s2.name = "s2";
    const uint32_t b = t.addTrack(s2);
    auto span = [&](uint32_t track, SpanKind kind, const char* name, int64_t start, int64_t end) {
        SpanInit s;
        s.track = track;
        s.kind = kind;
        s.name = name;
        s.start = start;
        s.end = end;
        s.iteration = 0;
        return s;
    };
    t.addSpan(span(h, SpanKind::ApiCall, "cudaLaunchKernel", 0, 5'000));
    t.addSpan(span(h, SpanKind::ApiCall, "cudaLaunchKernel", 10'000, 15'000));
    t.addSpan(span(h, SpanKind::Sync, "cudaDeviceSynchronize", 20'000, 3'000'000));
    SpanInit producer = span(a, SpanKind::Kernel, "producer", 20'000, 1'600'000);
    producer.grid = Dim3{132, 1, 1};
    producer.block = Dim3{256, 1, 1};
    t.addSpan(producer);
    SpanInit consumer = span(b, SpanKind::Kernel, "consumer", 40'000, 2'400'000);
    consumer.timing = SpanTiming::Uncertain;
    t.addSpan(consumer);
    SpanInit tail = span(a, SpanKind::Kernel, "tail", 1'650'000, 2'950'000);
    tail.eventStartError = -12'300;
    tail.eventEndError = 1'200;
    t.addSpan(tail);
    t.finalize();
    for (uint32_t i = 0; i < t.spanCount(); ++i) {
        const std::string_view name = t.spanName(i);
        if (name == "producer")
            r.producer = i;
        else if (name == "consumer")
            r.consumer = i;
        else if (name == "tail")
            r.tail = i;
    }
    return r;
}

QString writeTrace(const QTemporaryDir& dir, const Trace& trace, const QString& name = QStringLiteral("timed.json"))
{
    const QString path = dir.filePath(name);
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly))
        return {};
    const std::string text = traceToJson(trace);
    f.write(text.data(), qint64(text.size()));
    return path;
}

// A stand-in for streamscope-cli: records its arguments, writes `canned` where -o says.
QString writeCli(const QTemporaryDir& dir, const QString& argsFile, const QString& canned)
{
    const QString path = dir.filePath(QStringLiteral("cli"));
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly))
        return {};
    f.write(QStringLiteral("#!/bin/sh\necho \"$@\" > '%1'\n"
                           "while [ $# -gt 0 ]; do [ \"$1\" = -o ] && out=$2; shift; done\n"
                           "cp '%2' \"$out\"\n")
                .arg(argsFile, canned)
                .toUtf8());
    f.close();
    f.setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner);
    return path;
}

QString readAll(const QString& path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? QString::fromUtf8(f.readAll()).trimmed() : QString();
}

// With STREAMSCOPE_TIMING_SCREENSHOTS set: a picture of the widget there.
void saveShot(QWidget* widget, const QString& name)
{
    const QString dir = qEnvironmentVariable("STREAMSCOPE_TIMING_SCREENSHOTS");
    if (dir.isEmpty())
        return;
    QDir().mkpath(dir);
    QTest::qWait(50); // layouts settle
    widget->grab().save(QDir(dir).filePath(name));
}

} // namespace

class TestTiming : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName(QStringLiteral("StreamScopeTest"));
        QCoreApplication::setApplicationName(QStringLiteral("tst_timing"));
        QSettings().clear();
    }

    // ---- run controls ------------------------------------------------------------------------------------------

    void gpuRunArgumentsCarryTheTiming_data()
    {
        QTest::addColumn<int>("mode");
        QTest::addColumn<QString>("flag");
        QTest::newRow("auto") << int(TimingMode::Auto) << "auto";
        QTest::newRow("cupti") << int(TimingMode::Cupti) << "cupti";
        QTest::newRow("events") << int(TimingMode::Events) << "events";
        QTest::newRow("both") << int(TimingMode::Both) << "both";
    }

    void gpuRunArgumentsCarryTheTiming()
    {
        QFETCH(int, mode);
        QFETCH(QString, flag);
        const QStringList args = gpuRunArguments(QStringLiteral("s.json"), QStringLiteral("t.json"), TimingMode(mode));
        QCOMPARE(args,
                 (QStringList{QStringLiteral("run"), QStringLiteral("s.json"), QStringLiteral("--backend"),
                              QStringLiteral("cuda"), QStringLiteral("-o"), QStringLiteral("t.json"),
                              QStringLiteral("--progress"), QStringLiteral("--timing"), flag}));
        QCOMPARE(timingArguments(TimingMode(mode)), (QStringList{QStringLiteral("--timing"), flag}));
        QVERIFY(!timingModeLabel(TimingMode(mode)).isEmpty());
        QVERIFY(!timingModeDescription(TimingMode(mode)).isEmpty());
    }

    // The window's choice reaches streamscope-cli (a stand-in script here) and is kept in QSettings.
    void timingChoiceReachesTheCli()
    {
        QTemporaryDir dir;
        const QString canned = writeTrace(dir, makeTimingTrace().trace, QStringLiteral("canned.json"));
        const QString argsFile = dir.filePath(QStringLiteral("args"));
        auto w = testing::makeTestWindow({1280, 720});
        QVERIFY(testing::openAndRun(*w, QStringLiteral("01")));
        // The simulator ignores it: the choice is disabled and says why.
        QCOMPARE(w->backend(), RunBackend::Simulator);
        QVERIFY(!w->timingBox()->isEnabled());
        QVERIFY2(w->timingBox()->toolTip().contains(QStringLiteral("GPU runs")), qPrintable(w->timingBox()->toolTip()));
        QCOMPARE(w->timingBox()->count(), 4);
        QCOMPARE(w->timingBox()->itemText(0), QStringLiteral("Auto (CUPTI where usable)"));
        QCOMPARE(int(w->timingMode()), int(TimingMode::Auto));

        w->runController()->setCliPath(writeCli(dir, argsFile, canned));
        w->setBackend(RunBackend::Gpu);
        QVERIFY(w->timingBox()->isEnabled());
        // Chosen as the user does: in the combo box.
        w->timingBox()->setCurrentIndex(w->timingBox()->findData(int(TimingMode::Both)));
        Q_EMIT w->timingBox()->activated(w->timingBox()->currentIndex());
        QCOMPARE(int(w->timingMode()), int(TimingMode::Both));
        QCOMPARE(int(w->runController()->timingMode()), int(TimingMode::Both));
        QSignalSpy finished(w->runController(), &RunController::finished);
        w->runScenario();
        QVERIFY(finished.wait(10000));
        const QString called = readAll(argsFile);
        QVERIFY2(called.startsWith(QStringLiteral("run ")), qPrintable(called));
        QVERIFY2(called.contains(QStringLiteral("--backend cuda")), qPrintable(called));
        QVERIFY2(called.endsWith(QStringLiteral("--timing both")), qPrintable(called));

        // Kept for the next start.
        w->close();
        QCOMPARE(QSettings().value(QStringLiteral("timing")).toString(), QStringLiteral("both"));
        auto again = testing::makeTestWindow({1280, 720});
        QCOMPARE(int(again->timingMode()), int(TimingMode::Both));
        QCOMPARE(int(again->runController()->timingMode()), int(TimingMode::Both));
        QCOMPARE(again->timingBox()->currentData().toInt(), int(TimingMode::Both));
        again->setTimingMode(TimingMode::Auto);
        again->close();
        QCOMPARE(QSettings().value(QStringLiteral("timing")).toString(), QStringLiteral("auto"));
    }

    // ---- the trace's own word on its timing --------------------------------------------------------------------

    void noticeFromTheDiagnostic()
    {
        const TimingTrace tt = makeTimingTrace();
        const auto analyzed = makeAnalyzedTrace(tt.trace);
        const Diagnostic* diagnostic = nullptr;
        for (const Diagnostic& d : analyzed->report.diagnostics)
            if (d.rule == "timing-perturbation")
                diagnostic = &d;
        QVERIFY2(diagnostic, "the timing-perturbation rule fires on a 1.5× timed run");
        const TimingNotice notice = timingNotice(*analyzed->trace, analyzed->report.diagnostics);
        const QString line = notice.perturbation.full();
        QVERIFY2(line.startsWith(QStringLiteral("Timing changed this run: timed 3.000 ms vs 2.000 ms without timing "
                                                "(+50 %). ")),
                 qPrintable(line));
        // The diagnostic's cause and fix follow, with its CLI flag named as the window's choice.
        const QString message = qs(diagnostic->message);
        const QString cause = message.mid(message.indexOf(QStringLiteral("): ")) + 3);
        QVERIFY2(line.contains(cause.mid(1, 30)), qPrintable(line + QStringLiteral(" | ") + message));
        QVERIFY2(!line.contains(QStringLiteral("--timing")), qPrintable(line));
        QVERIFY2(line.contains(QStringLiteral("Timing “CUPTI”")), qPrintable(line));
        QVERIFY(notice.suggested == std::optional<TimingMode>(TimingMode::Cupti));
        QCOMPARE(notice.fallback.title, QStringLiteral("CUPTI was not used:"));
        QVERIFY2(notice.fallback.text.startsWith(QStringLiteral("libcupti could not be loaded (the test says so).")),
                 qPrintable(notice.fallback.text));
    }

    void noticeFromTheSettingsAlone_data()
    {
        QTest::addColumn<QString>("ratio");
        QTest::addColumn<bool>("shown");
        QTest::newRow("1.5") << "1.5000" << true;
        QTest::newRow("1.06") << "1.0600" << true;
        QTest::newRow("1.04") << "1.0400" << false;
        QTest::newRow("none") << "" << false;
    }

    // Without the diagnostic (an older trace, rules filtered): the ratio alone decides, with the rule's fix.
    void noticeFromTheSettingsAlone()
    {
        QFETCH(QString, ratio);
        QFETCH(bool, shown);
        Trace t;
        t.info.source = TraceSource::Cupti;
        t.info.settings = {{"timing", "cupti"}};
        if (!ratio.isEmpty())
            t.info.settings.emplace_back("timing_perturbation", ratio.toStdString());
        t.finalize();
        const TimingNotice notice = timingNotice(t, {});
        QCOMPARE(!notice.perturbation.isEmpty(), shown);
        QVERIFY(notice.fallback.isEmpty());
        if (shown) {
            const int pct = int(std::lround(100 * (ratio.toDouble() - 1)));
            QVERIFY2(notice.perturbation.text.startsWith(
                         QStringLiteral("+%1 % against the same work without timing. ").arg(pct)),
                     qPrintable(notice.perturbation.text));
            QVERIFY(notice.suggested == std::optional<TimingMode>(TimingMode::Events));
        }
    }

    // The window: the banner and the notice over the timeline for that trace, nothing for a simulated one; the
    // banner's button sets the timing its fix names.
    void bannerAboveTheTimeline()
    {
        QTemporaryDir dir;
        const QString path = writeTrace(dir, makeTimingTrace().trace);
        QSettings().remove(QStringLiteral("window")); // the layout as at first start
        auto w = testing::makeTestWindow({1280, 720});
        QSignalSpy shown(w.get(), &MainWindow::traceShown);
        QVERIFY(w->openPath(path));
        QVERIFY(shown.wait(10000));
        NoticeBar* banner = w->timingWarningBar();
        QTRY_VERIFY(banner->isVisible());
        QVERIFY2(banner->fullText().contains(QStringLiteral("+50 %")), qPrintable(banner->fullText()));
        QVERIFY(banner->fullText().contains(QStringLiteral("3.000 ms vs 2.000 ms")));
        QCOMPARE(banner->toolTip(), banner->fullText());
        // One line at 1280×720: elided, the rest behind "More"; expanded, it wraps without growing the window.
        const int line = banner->fontMetrics().height();
        QVERIFY2(banner->height() <= 3 * line, qPrintable(QString::number(banner->height())));
        QVERIFY(banner->shownText().size() < banner->text().size());
        banner->setExpanded(true);
        QCOMPARE(banner->shownText(), banner->text());
        QTRY_VERIFY(banner->height() > line * 2);
        saveShot(w.get(), QStringLiteral("banner-expanded.png"));
        QCOMPARE(w->size(), QSize(1280, 720));
        banner->setExpanded(false);
        QTRY_VERIFY(banner->height() <= 3 * line);
        NoticeBar* info = w->timingInfoBar();
        QVERIFY(info->isVisible());
        QVERIFY2(info->fullText().contains(QStringLiteral("libcupti could not be loaded")),
                 qPrintable(info->fullText()));
        QVERIFY(info->height() <= 3 * line);
        // The banner sits right above the timeline.
        QVERIFY(banner->mapTo(w.get(), QPoint(0, 0)).y() < w->timeline()->mapTo(w.get(), QPoint(0, 0)).y());
        saveShot(w.get(), QStringLiteral("window-light.png"));

        // "Time with CUPTI" sets the choice and then goes.
        QToolButton* action = banner->actionButton();
        QVERIFY(action->isVisible());
        QVERIFY2(action->text().contains(QStringLiteral("CUPTI")), qPrintable(action->text()));
        action->click();
        QCOMPARE(int(w->timingMode()), int(TimingMode::Cupti));
        QVERIFY(!action->isVisible());

        // The run info panel: timing and its cost near the top, the cost in bold past the limit.
        const QString runInfo = w->runInfoPanel()->html();
        const qsizetype timing = runInfo.indexOf(QStringLiteral(">Timing<"));
        QVERIFY2(timing >= 0 && timing < runInfo.indexOf(QStringLiteral(">Scenario<")), qPrintable(runInfo));
        QVERIFY(runInfo.contains(QStringLiteral("CUDA events around every operation")));
        QVERIFY(runInfo.contains(QStringLiteral("<b>timed 3.000 ms vs 2.000 ms without timing (+50 %)</b>")));
        QVERIFY(runInfo.contains(QStringLiteral("Why not CUPTI")));
        QVERIFY2(!runInfo.contains(QStringLiteral("timing_perturbation")), "said in words, not as the raw key");

        // Selecting the uncertain span: the inspector says so.
        const TimingTrace tt = makeTimingTrace();
        w->timeline()->selectSpan(int(tt.consumer));
        QVERIFY2(w->inspector()->html().contains(QStringLiteral("uncertain")), qPrintable(w->inspector()->html()));
        saveShot(w.get(), QStringLiteral("inspector-uncertain.png"));
        w->timeline()->selectSpan(int(tt.tail));
        QVERIFY(w->inspector()->html().contains(QStringLiteral("from CUPTI")));
        saveShot(w.get(), QStringLiteral("inspector-error.png"));
        if (auto* dock = w->findChild<QDockWidget*>(QStringLiteral("runInfoDock")))
            dock->raise();
        saveShot(w.get(), QStringLiteral("run-info.png"));

        // Not over a presentation's slides; back after it, as it was.
        auto* presentation = w->findChild<QAction*>(QStringLiteral("presentation-mode"));
        QVERIFY(presentation);
        presentation->trigger();
        QVERIFY(!banner->isVisible());
        presentation->trigger();
        QTRY_VERIFY(banner->isVisible());
        QVERIFY(info->isVisible());
        // Dismissed, it stays away until the next trace.
        info->closeButton()->click();
        QVERIFY(!info->isVisible());
        QVERIFY(banner->isVisible());

        // A simulated run has nothing to say about timing.
        QVERIFY(testing::openAndRun(*w, QStringLiteral("01")));
        QVERIFY(!banner->isVisible());
        QVERIFY(!info->isVisible());
    }

    // The banner's colours read in a light and a dark palette (WCAG AA for normal text: 4.5:1).
    void bannerReadsInBothPalettes()
    {
        QTemporaryDir dir;
        const QString path = writeTrace(dir, makeTimingTrace().trace);
        const QPalette light = QApplication::palette();
        for (bool dark : {false, true}) {
            QApplication::setPalette(dark ? darkPalette() : light);
            auto w = testing::makeTestWindow({1280, 720});
            QSignalSpy shown(w.get(), &MainWindow::traceShown);
            QVERIFY(w->openPath(path));
            QVERIFY(shown.wait(10000));
            for (NoticeBar* bar : {w->timingWarningBar(), w->timingInfoBar()}) {
                QVERIFY(bar->isVisible());
                const double c = contrastRatio(bar->textColor(), bar->backgroundColor());
                QVERIFY2(c >= 4.5, qPrintable(QStringLiteral("%1: contrast %2").arg(bar->objectName()).arg(c)));
                // Dark text on a light window, light text on a dark one.
                QCOMPARE(bar->backgroundColor().lightness() < 128, dark);
            }
            saveShot(w.get(), dark ? QStringLiteral("window-dark.png") : QStringLiteral("window-light-2.png"));
        }
        QApplication::setPalette(light);
    }

    // ---- spans -------------------------------------------------------------------------------------------------

    void inspectorSaysHowFarTimesAreKnown()
    {
        const TimingTrace tt = makeTimingTrace();
        const Trace& t = tt.trace;
        const QString uncertain = spanInspectorHtml(t, int(tt.consumer));
        QVERIFY2(uncertain.contains(QStringLiteral("<b>start uncertain</b>: the op may have waited for SMs; it began "
                                                   "at or after the drawn start")),
                 qPrintable(uncertain));
        const QString tail = spanInspectorHtml(t, int(tt.tail));
        QVERIFY2(tail.contains(QStringLiteral("measured (CUDA events)")), qPrintable(tail));
        QVERIFY2(tail.contains(QStringLiteral("CUDA events: start \u221212.3 \u00B5s, end +1.20 \u00B5s from CUPTI")),
                 qPrintable(tail));
        QCOMPARE(spanEventErrorText(t, tt.producer), QString());
        // Host spans and simulated traces have no timing row.
        QVERIFY(!spanInspectorHtml(t, 0).contains(QStringLiteral(">Timing<")));
        Trace simulated = t;
        simulated.info.source = TraceSource::Simulator;
        simulated.spans.timing.clear();
        simulated.spans.eventStartError.clear();
        simulated.spans.eventEndError.clear();
        QVERIFY(!spanInspectorHtml(simulated, int(tt.tail)).contains(QStringLiteral(">Timing<")));

        // A corrected start says where it was moved to.
        Trace corrected = t;
        corrected.spans.timing[tt.producer] = SpanTiming::Corrected;
        QVERIFY(spanTimingText(corrected, tt.producer).startsWith(QStringLiteral("start corrected: ")));
        // The tooltip says it too.
        auto view = std::make_unique<TimelineView>();
        view->setTrace(std::make_shared<const Trace>(t));
        QVERIFY(view->spanToolTip(int(tt.consumer)).contains(QStringLiteral("start uncertain")));
        QVERIFY(view->spanToolTip(int(tt.tail)).contains(QStringLiteral("from CUPTI")));
    }

    void signedDurations_data()
    {
        QTest::addColumn<double>("ns");
        QTest::addColumn<QString>("text");
        QTest::newRow("negative") << -12300.0 << QStringLiteral("\u221212.3 \u00B5s");
        QTest::newRow("positive") << 1200.0 << QStringLiteral("+1.20 \u00B5s");
        QTest::newRow("zero") << 0.0 << QStringLiteral("0 ns");
        QTest::newRow("ns") << -850.0 << QStringLiteral("\u2212850 ns");
    }

    void signedDurations()
    {
        QFETCH(double, ns);
        QFETCH(QString, text);
        QCOMPARE(formatSignedNs(ns), text);
    }

    // A merged job's clock alignment (rank_merge.h) in words near the alignment error, not as a raw key further down.
    void runInfoStatesAMergedJobsClockAlignment()
    {
        Trace t;
        t.info.clockAlignmentErrorNs = 38'000;
        t.info.settings = {
            {"ranks", "4 of world size 4"},
            {"clock_alignment", "2 hosts, aligned by ping-pong to rank 0 (host a): error up to 38.0 µs"}};
        const QString html = runInfoHtml(&t, QStringLiteral("job.json"), -1);
        const qsizetype at = html.indexOf(QStringLiteral(">Clock alignment<"));
        QVERIFY2(at >= 0
                     && html.indexOf(QStringLiteral("aligned by ping-pong to rank 0 (host a): error up to 38.0 µs"))
                         > at,
                 qPrintable(html));
        QVERIFY2(!html.contains(QStringLiteral("clock_alignment")), qPrintable(html));
        QVERIFY(html.contains(QStringLiteral(">Clock alignment error<")));
    }

    // Uncertain starts get the mark (and only they); Corrected and Measured bars are drawn as before.
    void timelineMarksUncertainStarts()
    {
        const TimingTrace tt = makeTimingTrace();
        auto trace = std::make_shared<const Trace>(tt.trace);
        auto view = std::make_unique<TimelineView>();
        view->resize(1000, 400);
        view->setTrace(trace);
        view->show();
        QVERIFY(QTest::qWaitForWindowExposed(view.get()));
        view->fitToView();
        TimelineDrawList list;
        view->spansPlottable()->computeDrawList(list);
        QCOMPARE(list.stats.uncertainMarks, size_t(1));
        QCOMPARE(list.runs[list.uncertainRuns.front()].firstSpan, tt.consumer);

        // Drawn: the marked part of the bar is lighter than the rest of it (names off: only the bars count).
        view->spansPlottable()->setLabelsVisible(false);
        const QImage image = view->toPixmap(1000, 400).toImage();
        const QRect bar = view->spansPlottable()->spanRect(tt.consumer).toRect();
        const QRect mark = TimelinePlottable::uncertainStartRect(bar);
        QVERIFY(mark.width() >= 4 && mark.width() < bar.width() / 2);
        const int y = bar.center().y();
        auto lightness = [&](int x0, int x1) {
            int sum = 0;
            for (int x = x0; x < x1; ++x)
                sum += image.pixelColor(x, y).lightness();
            return double(sum) / std::max(1, x1 - x0);
        };
        const double marked = lightness(mark.left() + 1, mark.right());
        const double plain = lightness(mark.right() + 4, bar.right() - 4);
        QVERIFY2(marked > plain + 10, qPrintable(QStringLiteral("%1 vs %2").arg(marked).arg(plain)));

        // Without uncertain spans, nothing extra.
        Trace plainTrace = tt.trace;
        plainTrace.spans.timing.clear();
        view->setTrace(std::make_shared<const Trace>(plainTrace));
        view->spansPlottable()->computeDrawList(list);
        QCOMPARE(list.stats.uncertainMarks, size_t(0));
        QVERIFY(list.uncertainRuns.empty());
    }
};

QTEST_MAIN(TestTiming)
#include "tst_timing.moc"
