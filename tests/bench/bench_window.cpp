// Window benchmark: the whole main window (timeline, concurrency strip, span table, inspector, analysis and run
// panels) at 1920x1080 on a big trace. It simulates bench_workload.h's scenario at the size asked for (1 M spans by
// default), saves it as a StreamScope trace, opens that file in the window as a user does (File ▸ Open), and then
// times what the user waits for:
//   - open: from openPath to the first frame with the trace on the timeline, to the concurrency strip's steps shown
//     (counted after the first frame for a big trace file) and to the analysis shown;
//   - zoom (one wheel notch, in and out in turn), pan (the D and A keys) and hover (the mouse moved across the
//     rows), each at the full view, at 1 % and at 0.01 % of the trace: from the input event until every repaint it
//     caused is done (the event queue drained), wall and CPU time;
//   - the span table: sorted by a click on the Duration header, filtered by "memcpy", and both undone.
// A frame is within budget at 16 ms.
//
//   bench_window [--json] [--spans N] [--reps R] [--file TRACE] [--binary] [--synthetic] [--stages] [--switch]
//                [--first-frame]                           (offscreen unless QT_QPA_PLATFORM says otherwise)
// --stages times each stage of an open alone (import, the timeline's layout, the view parts built beside it, the
// report: stage_*_ms and stage_*_cpu_ms) and exits without opening the window. --first-frame opens the trace in the
// window without the stages alone first, and exits once its first frame is drawn (open_first_frame_ms, peak_rss_mb).
// --switch opens the trace and, at its first frame, lesson 01: trace_released_ms is how long until nothing holds the
// trace any more (its analysis on a worker stopped), rss_shown_mb and rss_after_mb the resident set before and then.
// --binary saves the generated trace in the binary native format (*.sstrace) instead of JSON. --synthetic writes
// synthetic_trace.h's trace (bench_timeline's) of N spans instead of simulating the workload, for sizes the simulator
// would need too much memory for (100 M spans); it implies --binary. With --file, the synthetic trace is written to
// that file where it does not exist yet, and kept.
#include "bench_process.h"
#include "bench_workload.h"

#include "concurrency_plot.h"
#include "document_loader.h"
#include "main_window.h"
#include "runner.h"
#include "scenario_json.h"
#include "simulator.h"
#include "span_table_model.h"
#include "synthetic_trace.h"
#include "text_file.h"
#include "timeline_layout.h"
#include "timeline_plottable.h"
#include "timeline_view.h"
#include "trace_formats.h"
#include "trace_json.h"

#include <QApplication>
#include <QCoreApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QHeaderView>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QSettings>
#include <QStandardPaths>
#include <QTableView>
#include <QTemporaryDir>
#include <QTimer>
#include <QWheelEvent>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

using namespace streamscope;
using namespace streamscope::bench;

namespace {

struct Config {
    bool json = false;
    int64_t spans = 1'000'000;
    int reps = 15;
    QString file;
    bool binary = false;
    bool synthetic = false;
    bool stages = false;     // each stage of an open alone, then exit
    bool switchAway = false; // open the trace, then a lesson at its first frame: when is its memory given back?
    bool firstFrame = false; // open the trace in the window only, until its first frame
};

// Counts the paint events of one widget: a measured step must have repainted the timeline.
class PaintCounter : public QObject {
public:
    int paints = 0;

protected:
    bool eventFilter(QObject*, QEvent* event) override
    {
        if (event->type() == QEvent::Paint)
            ++paints;
        return false;
    }
};

// Everything the last input caused: posted events (queued replots, the panels following the timeline) and the
// repaints, until a pass finds nothing more to do.
void drain()
{
    for (int i = 0; i < 4; ++i) {
        QCoreApplication::sendPostedEvents();
        QCoreApplication::processEvents(QEventLoop::AllEvents);
    }
}

// Handles the events that come, waiting for them; a timer ticks every 10 ms so that the caller's loop goes round.
// (QCoreApplication::processEvents(flags, ms) drops WaitForMoreEvents and returns at once when no event is pending:
// the loops around it kept one of the two cores busy that the window's loader needed.)
void waitForEvents()
{
    static QTimer* const tick = [] {
        auto* t = new QTimer(qApp);
        t->start(10);
        return t;
    }();
    (void)tick;
    QCoreApplication::processEvents(QEventLoop::AllEvents | QEventLoop::WaitForMoreEvents);
}

struct Sample {
    double wallMs = 0, cpuMs = 0;
};

struct Summary {
    double medianMs = 0, p90Ms = 0, maxMs = 0, medianCpuMs = 0, maxCpuMs = 0;
    int paints = 0;
};

Summary summarize(std::vector<Sample> samples, int paints)
{
    Summary s;
    s.paints = paints;
    if (samples.empty())
        return s;
    auto at = [&](double q, auto member) {
        std::vector<double> v;
        for (const Sample& x : samples)
            v.push_back(x.*member);
        std::sort(v.begin(), v.end());
        return v[std::min(v.size() - 1, size_t(q * double(v.size() - 1) + 0.5))];
    };
    s.medianMs = at(0.5, &Sample::wallMs);
    s.p90Ms = at(0.9, &Sample::wallMs);
    s.maxMs = at(1.0, &Sample::wallMs);
    s.medianCpuMs = at(0.5, &Sample::cpuMs);
    s.maxCpuMs = at(1.0, &Sample::cpuMs);
    return s;
}

template <class Step>
Sample timed(Step step)
{
    const double cpu0 = cpuSeconds();
    QElapsedTimer timer;
    timer.start();
    step();
    drain();
    return {double(timer.nsecsElapsed()) / 1e6, (cpuSeconds() - cpu0) * 1e3};
}

// --switch: the trace opened (`open` started at openPath), and at its first frame lesson 01 opened instead, as a
// user who opened the wrong file would; how long until the window and its workers let go of the trace (its
// analysis, which runs for minutes at 100 M spans, included), and the resident set then.
int switchAway(MainWindow& window, const QString& file, QElapsedTimer& open, nlohmann::ordered_json& out, bool json)
{
    bool shown = false;
    const auto connection = QObject::connect(&window, &MainWindow::traceShown, &window, [&] { shown = true; });
    while (!shown && open.elapsed() < 600'000)
        waitForEvents();
    if (!shown || !window.currentTrace() || !window.currentTrace()->trace) {
        std::fprintf(stderr, "bench_window: %s did not open\n", qPrintable(file));
        return 1;
    }
    out["spans"] = window.currentTrace()->trace->spanCount();
    out["open_shown_ms"] = double(open.nsecsElapsed()) / 1e6;
    out["rss_shown_mb"] = residentMb();
    std::weak_ptr<const Trace> big = window.currentTrace()->trace;
    shown = false;
    QElapsedTimer away;
    away.start();
    window.openPath(QStringLiteral("01"));
    double lessonMs = -1, releasedMs = -1;
    while ((lessonMs < 0 || releasedMs < 0) && away.elapsed() < 600'000) {
        waitForEvents();
        if (shown && lessonMs < 0)
            lessonMs = double(away.nsecsElapsed()) / 1e6;
        if (big.expired() && releasedMs < 0)
            releasedMs = double(away.nsecsElapsed()) / 1e6;
    }
    QObject::disconnect(connection);
    drain();
    out["lesson_shown_ms"] = lessonMs;
    out["trace_released_ms"] = releasedMs;
    out["rss_after_mb"] = residentMb();
    out["peak_rss_mb"] = peakRssMb();
    std::printf("%s\n", out.dump(json ? -1 : 2).c_str());
    return releasedMs >= 0 ? 0 : 1;
}

bool parseArgs(int argc, char** argv, Config& cfg)
{
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        auto next = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
        if (arg == "--json") {
            cfg.json = true;
        } else if (arg == "--binary") {
            cfg.binary = true;
        } else if (arg == "--synthetic") {
            cfg.synthetic = cfg.binary = true;
        } else if (arg == "--stages") {
            cfg.stages = true;
        } else if (arg == "--switch") {
            cfg.switchAway = true;
        } else if (arg == "--first-frame") {
            cfg.firstFrame = true;
        } else if (arg == "--spans" || arg == "--reps" || arg == "--file") {
            const char* v = next();
            if (!v)
                return false;
            if (arg == "--spans")
                cfg.spans = std::atoll(v);
            else if (arg == "--reps")
                cfg.reps = std::max(3, std::atoi(v));
            else
                cfg.file = QString::fromLocal8Bit(v);
        } else {
            return false;
        }
    }
    return cfg.spans > 0;
}

// The workload simulated at about `spans` spans (or synthetic_trace.h's), saved where `path` says. Returns the span
// count, or -1.
int64_t writeTrace(int64_t spans, const std::string& path, bool synthetic)
{
    if (synthetic) {
        const auto trace = syntheticTrace(size_t(spans));
        if (Status saved = saveNativeTrace(*trace, path); !saved) {
            std::fprintf(stderr, "bench_window: %s\n", saved.error().toString().c_str());
            return -1;
        }
        return int64_t(trace->spanCount());
    }
    ScenarioLimits limits;
    const int64_t ops = spans * 2 / 3; // 1.5 spans per operation
    limits.maxIssued = std::max<int64_t>(limits.maxIssued, ops * 2);
    auto validated = validateScenario(generate(ops, 16, 32), "bench", limits);
    if (!validated) {
        std::fprintf(stderr, "bench_window: generated scenario is invalid: %s\n", validated.error().toString().c_str());
        return -1;
    }
    SimulatorBackend backend;
    RunOutcome outcome = runScenario(validated->scenario, backend);
    if (!outcome.status) {
        std::fprintf(stderr, "bench_window: simulation failed: %s\n", outcome.status.error().toString().c_str());
        return -1;
    }
    if (Status saved = saveNativeTrace(outcome.trace, path); !saved) {
        std::fprintf(stderr, "bench_window: %s\n", saved.error().toString().c_str());
        return -1;
    }
    return int64_t(outcome.trace.spanCount());
}

} // namespace

int main(int argc, char** argv)
{
    if (!std::getenv("QT_QPA_PLATFORM"))
        setenv("QT_QPA_PLATFORM", "offscreen", 1);
    Config cfg;
    if (!parseArgs(argc, argv, cfg)) {
        std::fprintf(stderr,
                     "usage: bench_window [--json] [--spans N] [--reps R] [--file TRACE] [--binary] "
                     "[--synthetic] [--stages] [--switch] [--first-frame]\n");
        return 2;
    }
    QStandardPaths::setTestModeEnabled(true); // the user's settings and recent files are left alone
    QApplication app(argc, argv);
    QCoreApplication::setOrganizationName(QStringLiteral("StreamScopeBench"));
    QSettings().clear();

    QTemporaryDir dir;
    QString file = cfg.file;
    nlohmann::ordered_json out;
    if (file.isEmpty() || (cfg.synthetic && !QFileInfo::exists(file))) {
        if (file.isEmpty())
            file =
                dir.filePath(cfg.binary ? QStringLiteral("bench-window.sstrace") : QStringLiteral("bench-window.json"));
        QElapsedTimer t;
        t.start();
        const int64_t spans = writeTrace(cfg.spans, file.toStdString(), cfg.synthetic);
        if (spans < 0)
            return 1;
        out["generate_s"] = double(t.nsecsElapsed()) / 1e9;
    }
    out["file"] = file.toStdString();
    out["file_mb"] = double(QFileInfo(file).size()) / (1024.0 * 1024.0);

    // The stages of an open, each alone on this thread: reading the file, the analysis.
    if (!cfg.switchAway && !cfg.firstFrame) {
        QElapsedTimer t;
        t.start();
        auto trace = importTraceFile(file.toStdString());
        if (!trace) {
            std::fprintf(stderr, "bench_window: %s\n", trace.error().toString().c_str());
            return 1;
        }
        out["stage_import_ms"] = double(t.nsecsElapsed()) / 1e6;
        if (cfg.stages) {
            // What makeAnalyzedTrace does, a part at a time: the timeline's layout, the view parts built beside it
            // (withViewParts), the report.
            const Trace& tr = *trace;
            auto stage = [&](const char* key, auto&& f) {
                QElapsedTimer st;
                const double cpu0 = cpuSeconds();
                st.start();
                f();
                out[std::string("stage_") + key + "_ms"] = double(st.nsecsElapsed()) / 1e6;
                out[std::string("stage_") + key + "_cpu_ms"] = (cpuSeconds() - cpu0) * 1e3;
            };
            stage("layout", [&] { TimelineLayout layout(tr, {}); });
            stage("concurrency_plot", [&] { (void)makeConcurrencyPlotData(tr); });
            std::vector<uint32_t> ops;
            stage("launching_ops", [&] { ops = launchingOps(tr); });
            stage("gpu_time_by_op", [&] { (void)gpuTimeByLaunchingOp(tr, ops); });
            stage("report", [&] { (void)reportOnTrace(tr); });
            out["peak_rss_mb"] = peakRssMb();
            std::printf("%s\n", out.dump(cfg.json ? -1 : 2).c_str());
            return 0;
        }
        t.restart();
        const auto analyzed = makeAnalyzedTrace(std::move(trace).value());
        out["stage_analysis_ms"] = double(t.nsecsElapsed()) / 1e6;
    }

    MainWindow window;
    window.setGpuProbeEnabled(false);
    window.setLiveSimulation(false);
    window.resize(1920, 1080);
    window.show();
    drain();
    TimelineView* timeline = window.timeline();
    PaintCounter counter;
    timeline->installEventFilter(&counter);

    // ---- open
    bool shown = false;
    QObject::connect(&window, &MainWindow::traceShown, &window, [&] { shown = true; });
    double concurrencyMs = -1; // the strip's steps shown: with the first frame, or after it for a big trace file
    QObject::connect(&window, &MainWindow::concurrencyShown, &window, [&] { concurrencyMs = -2; });
    bool failed = false;
    QObject::connect(&window, &MainWindow::errorShown, &window, [&](const QString& message) {
        std::fprintf(stderr, "bench_window: %s\n", qPrintable(message));
        failed = true;
    });
    const double openCpu0 = cpuSeconds();
    QElapsedTimer open;
    open.start();
    window.openPath(file);
    if (cfg.switchAway)
        return switchAway(window, file, open, out, cfg.json);
    const int paintsBefore = counter.paints;
    double firstFrameMs = -1, analysisMs = -1;
    while (!failed && open.elapsed() < 600'000) {
        waitForEvents();
        if (shown && firstFrameMs < 0) {
            drain();
            if (counter.paints > paintsBefore)
                firstFrameMs = double(open.nsecsElapsed()) / 1e6;
            if (firstFrameMs >= 0 && !window.concurrencyPlot()->isCounting())
                concurrencyMs = firstFrameMs;
        }
        if (concurrencyMs == -2) {
            drain();
            concurrencyMs = double(open.nsecsElapsed()) / 1e6;
        }
        if (firstFrameMs >= 0 && analysisMs < 0 && window.isAnalysisShown()) {
            drain();
            analysisMs = double(open.nsecsElapsed()) / 1e6;
        }
        if (analysisMs >= 0 && concurrencyMs >= 0)
            break;
        if (cfg.firstFrame && firstFrameMs >= 0) {
            out["open_first_frame_ms"] = firstFrameMs;
            out["open_cpu_ms"] = (cpuSeconds() - openCpu0) * 1e3;
            out["peak_rss_mb"] = peakRssMb();
            std::printf("%s\n", out.dump(cfg.json ? -1 : 2).c_str());
            std::fflush(stdout);
            std::_Exit(0); // the analysis begun on a worker thread is not waited for
        }
    }
    if (failed || firstFrameMs < 0) {
        std::fprintf(stderr, "bench_window: the trace did not open\n");
        return 1;
    }
    drain();
    out["spans"] = window.currentTrace()->trace->spanCount();
    out["open_first_frame_ms"] = firstFrameMs;
    out["open_concurrency_ms"] = concurrencyMs;
    out["open_analysis_ms"] = analysisMs;
    out["open_cpu_ms"] = (cpuSeconds() - openCpu0) * 1e3;

    // ---- zoom, pan and hover at three zoom levels
    const auto [t0, t1] = timeline->visibleTimeRange();
    const QRect area = timeline->timeAxisRect();
    const QPoint centre = area.center();
    struct Level {
        const char* name;
        double fraction;
    };
    for (const Level level : {Level{"full", 1.0}, Level{"zoom1", 0.01}, Level{"zoom0.01", 0.0001}}) {
        const double mid = (t0 + t1) / 2, half = (t1 - t0) * level.fraction / 2;
        timeline->setVisibleTimeRange(mid - half, mid + half);
        drain();
        nlohmann::ordered_json j;
        auto run = [&](const char* name, auto step) {
            std::vector<Sample> samples;
            const int paints0 = counter.paints;
            for (int r = 0; r < cfg.reps; ++r)
                samples.push_back(timed([&] { step(r); }));
            const Summary s = summarize(samples, counter.paints - paints0);
            j[name] = {{"median_ms", s.medianMs},        {"p90_ms", s.p90Ms},        {"max_ms", s.maxMs},
                       {"median_cpu_ms", s.medianCpuMs}, {"max_cpu_ms", s.maxCpuMs}, {"timeline_paints", s.paints}};
        };
        // Each plot's replot alone, for where the time goes.
        run("timeline_replot", [&](int) { timeline->replot(QCustomPlot::rpImmediateRefresh); });
        run("concurrency_replot", [&](int) { window.concurrencyPlot()->replot(QCustomPlot::rpImmediateRefresh); });
        run("zoom", [&](int r) {
            QWheelEvent wheel(centre, timeline->mapToGlobal(centre), QPoint(), QPoint(0, r % 2 ? -120 : 120),
                              Qt::NoButton, Qt::NoModifier, Qt::NoScrollPhase, false);
            QCoreApplication::sendEvent(timeline, &wheel);
        });
        run("pan", [&](int r) {
            const int key = r % 2 ? Qt::Key_A : Qt::Key_D;
            QKeyEvent press(QEvent::KeyPress, key, Qt::NoModifier, QString(QLatin1Char(r % 2 ? 'a' : 'd')));
            QCoreApplication::sendEvent(timeline, &press);
            QKeyEvent release(QEvent::KeyRelease, key, Qt::NoModifier, QString(QLatin1Char(r % 2 ? 'a' : 'd')));
            QCoreApplication::sendEvent(timeline, &release);
        });
        run("hover", [&](int r) {
            const QPoint p(area.left() + (r * 97) % std::max(1, area.width()),
                           area.top() + (r * 53) % std::max(1, area.height()));
            QMouseEvent move(QEvent::MouseMove, p, timeline->mapToGlobal(p), Qt::NoButton, Qt::NoButton,
                             Qt::NoModifier);
            QCoreApplication::sendEvent(timeline, &move);
        });
        timeline->replot(QCustomPlot::rpImmediateRefresh);
        const TimelineDrawStats& st = timeline->spansPlottable()->lastDrawStats();
        j["drawn"] = {{"rects", st.rects()},  {"labels", st.labels},
                      {"arrows", st.flows},   {"arrows_skipped", st.flowsSkipped},
                      {"rows", st.rowsDrawn}, {"spans_visited", st.spansVisited}};
        out["levels"][level.name] = j;
    }
    // ---- the span table: a click on the Duration header (longest first), a filter typed, both undone
    {
        QHeaderView* header = window.spanTable()->horizontalHeader();
        SpanTableProxy* proxy = window.spanProxy();
        nlohmann::ordered_json j;
        // "ms": the step on the GUI thread; a big trace's rows come from a worker later ("ready_ms" from the step's
        // start), and "longest_gui_ms" the longest turn of the GUI thread's event loop until then (a 2 ms timer ticks
        // through the wait, so a turn is at least its wait for the tick).
        auto step = [&](const char* name, auto action) {
            QElapsedTimer sinceStart;
            sinceStart.start();
            const Sample sample = timed([&] { action(); });
            double longest = sample.wallMs;
            QTimer tick;
            tick.start(2);
            QElapsedTimer turn;
            while (proxy->isUpdating()) {
                turn.start();
                QCoreApplication::processEvents(QEventLoop::WaitForMoreEvents);
                longest = std::max(longest, double(turn.nsecsElapsed()) / 1e6);
            }
            j[name] = {{"ms", sample.wallMs},
                       {"cpu_ms", sample.cpuMs},
                       {"ready_ms", double(sinceStart.nsecsElapsed()) / 1e6},
                       {"longest_gui_ms", longest},
                       {"rows", proxy->totalRows()}};
        };
        step("sort_by_duration",
             [&] { header->setSortIndicator(SpanTableModel::DurationColumn, Qt::DescendingOrder); });
        step("filter_memcpy", [&] { proxy->setFilterText(QStringLiteral("memcpy")); });
        step("filter_cleared", [&] { proxy->setFilterText({}); });
        step("unsorted", [&] { header->setSortIndicator(-1, Qt::AscendingOrder); });
        out["span_table"] = j;
    }
    out["peak_rss_mb"] = peakRssMb();

    if (cfg.json) {
        std::printf("%s\n", out.dump().c_str());
        return 0;
    }
    std::printf("window 1920x1080, %lld spans, %.1f MB trace file\n",
                static_cast<long long>(out["spans"].get<int64_t>()), out["file_mb"].get<double>());
    std::printf("stages alone: import %.0f ms, analysis %.0f ms\n", out["stage_import_ms"].get<double>(),
                out["stage_analysis_ms"].get<double>());
    std::printf("open: first frame %.0f ms, concurrency strip %.0f ms, analysis shown %.0f ms (CPU %.0f ms)\n",
                firstFrameMs, concurrencyMs, out["open_analysis_ms"].get<double>(), out["open_cpu_ms"].get<double>());
    std::printf("%-9s %-18s %10s %8s %8s %12s %10s %7s\n", "view", "input", "median ms", "p90 ms", "max ms",
                "median CPU ms", "max CPU ms", "paints");
    for (const auto& [levelName, level] : out["levels"].items())
        for (const auto& [input, s] : level.items())
            if (input != "drawn")
                std::printf("%-9s %-18s %10.2f %8.2f %8.2f %12.2f %10.2f %7d\n", levelName.c_str(), input.c_str(),
                            s["median_ms"].get<double>(), s["p90_ms"].get<double>(), s["max_ms"].get<double>(),
                            s["median_cpu_ms"].get<double>(), s["max_cpu_ms"].get<double>(),
                            s["timeline_paints"].get<int>());
    for (const auto& [levelName, level] : out["levels"].items())
        std::printf("%-9s drawn: %s\n", levelName.c_str(), level["drawn"].dump().c_str());
    for (const auto& [name, t] : out["span_table"].items())
        std::printf("span table %-17s %9.1f ms (CPU %.1f ms), %d rows\n", name.c_str(), t["ms"].get<double>(),
                    t["cpu_ms"].get<double>(), t["rows"].get<int>());
    std::printf("peak RSS %.0f MB\n", out["peak_rss_mb"].get<double>());
    return 0;
}
