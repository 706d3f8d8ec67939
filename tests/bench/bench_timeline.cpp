// Timeline rendering benchmark: replot time of the timeline at 1920x1080, offscreen, at full view and at 1 % and
// 0.01 % zoom, for synthetic traces of 100k, 1M and 10M spans (100M with --max 100000000: about 9 GB) over 64 tracks
// (8 host threads issuing API calls with launch arrows, 56 streams of kernels and copies); full view and 1 % also
// without the lanes' summaries (the span walk, for comparison); the hover hit test; memory per span; and, as the
// naive baseline, the same 100k spans drawn as one QCPItemRect each.
//
//   bench_timeline [--json] [--max SPANS] [--reps R] [--no-naive]     (offscreen unless QT_QPA_PLATFORM says otherwise)
#include "timeline_plottable.h"
#include "timeline_view.h"

#include "synthetic_trace.h"

#include <QApplication>
#include <QElapsedTimer>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

using namespace streamscope;
using namespace streamscope::bench;

namespace {

constexpr QSize kSize(1920, 1080);

// Shown (on the offscreen platform), so that the widget really is 1920x1080 and each replot also paints it.
void show(QWidget& w)
{
    w.show();
    for (int i = 0; i < 5; ++i)
        QCoreApplication::processEvents();
    if (w.size() != kSize) {
        std::fprintf(stderr, "bench_timeline: widget is %dx%d, not %dx%d\n", w.width(), w.height(), kSize.width(),
                     kSize.height());
        std::exit(1);
    }
}

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}

double processCpuMs()
{
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return double(ts.tv_sec) * 1e3 + double(ts.tv_nsec) / 1e6;
}

// Median wall time of a replot (layout, drawing into the paint buffer, painting the widget); `cpuMs` gets the median
// CPU time of the process over the same replots (steadier than wall time on a shared machine).
double replotMs(QCustomPlot& plot, int reps, double* cpuMs = nullptr)
{
    plot.replot(QCustomPlot::rpImmediateRefresh); // warm-up: buffers, glyph caches
    if (plot.viewport().size() != kSize) {
        std::fprintf(stderr, "bench_timeline: plot viewport is not %dx%d\n", kSize.width(), kSize.height());
        std::exit(1);
    }
    std::vector<double> times, cpu;
    for (int r = 0; r < reps; ++r) {
        QElapsedTimer timer;
        const double c0 = processCpuMs();
        timer.start();
        plot.replot(QCustomPlot::rpImmediateRefresh);
        times.push_back(double(timer.nsecsElapsed()) / 1e6);
        cpu.push_back(processCpuMs() - c0);
    }
    if (cpuMs)
        *cpuMs = median(cpu);
    return median(times);
}

struct Result {
    double fullMs = 0, zoom1Ms = 0, zoom001Ms = 0, hoverUs = 0, bytesPerSpan = 0;
    double fullCpu = 0, zoom1Cpu = 0, zoom001Cpu = 0;
    double fullWalkMs = 0, fullWalkCpu = 0, zoom1WalkMs = 0; // the same views drawn from the spans, no summaries
    double setTraceMs = 0, setTraceCpu = 0;
    double traceBytesPerSpan = 0; // Trace::memoryBytes() alone, without the timeline's index
    TimelineDrawStats full, zoom1, zoom001;
};

Result benchTimeline(size_t n, int reps)
{
    Result r;
    auto trace = syntheticTrace(n);
    TimelineView view;
    view.resize(kSize);
    show(view);
    QElapsedTimer timer;
    const double setTraceCpu0 = processCpuMs();
    timer.start();
    view.setTrace(trace);
    r.setTraceMs = double(timer.nsecsElapsed()) / 1e6;
    r.setTraceCpu = processCpuMs() - setTraceCpu0;

    view.fitToView();
    view.spansPlottable()->setSummariesUsed(false);
    r.fullWalkMs = replotMs(view, reps, &r.fullWalkCpu);
    view.spansPlottable()->setSummariesUsed(true);
    r.fullMs = replotMs(view, reps, &r.fullCpu);
    r.full = view.spansPlottable()->lastDrawStats();
    const auto [lo, hi] = view.visibleTimeRange();
    const double mid = (lo + hi) / 2, width = hi - lo;
    view.setVisibleTimeRange(mid - width * 0.005, mid + width * 0.005);
    view.spansPlottable()->setSummariesUsed(false);
    r.zoom1WalkMs = replotMs(view, reps);
    view.spansPlottable()->setSummariesUsed(true);
    r.zoom1Ms = replotMs(view, reps, &r.zoom1Cpu);
    r.zoom1 = view.spansPlottable()->lastDrawStats();

    // Hover: hit tests at random points of the chart area at 1 % zoom.
    const QRect area = view.axisRect()->rect();
    std::mt19937 rng(7);
    std::vector<QPoint> points(20000);
    for (QPoint& p : points)
        p = QPoint(area.left() + int(rng() % uint32_t(area.width())),
                   area.top() + int(rng() % uint32_t(area.height())));
    int hits = 0;
    timer.restart();
    for (const QPoint& p : points)
        hits += view.spanAt(p) >= 0;
    r.hoverUs = double(timer.nsecsElapsed()) / 1e3 / double(points.size());
    (void)hits;

    view.setVisibleTimeRange(mid - width * 0.00005, mid + width * 0.00005);
    r.zoom001Ms = replotMs(view, reps, &r.zoom001Cpu);
    r.zoom001 = view.spansPlottable()->lastDrawStats();

    r.bytesPerSpan =
        double(trace->memoryBytes() + view.timelineLayout().memoryBytes() + view.spansPlottable()->memoryBytes())
        / double(n);
    r.traceBytesPerSpan = double(trace->memoryBytes()) / double(n);
    return r;
}

// The naive way: one QCPItemRect per span (same rows, same colours), at full view.
double benchNaive(size_t n, int reps)
{
    auto trace = syntheticTrace(n);
    const TimelineLayout layout(*trace);
    QCustomPlot plot;
    plot.resize(kSize);
    show(plot);
    plot.yAxis->setRangeReversed(true);
    for (uint32_t i = 0; i < trace->spanCount(); ++i) {
        auto* rect = new QCPItemRect(&plot);
        const int row = layout.rowOfTrack(trace->spans.track[i]);
        const double lane = layout.rows()[size_t(row)].firstLane + layout.laneOfSpan(i);
        rect->topLeft->setCoords(double(trace->spans.start[i] - layout.origin()), lane + 0.1);
        rect->bottomRight->setCoords(double(trace->spans.end[i] - layout.origin()), lane + 0.9);
        rect->setPen(Qt::NoPen);
        rect->setBrush(spanKindColor(trace->spans.kind[i]));
    }
    plot.xAxis->setRange(0, double(layout.endTime() - layout.origin()));
    plot.yAxis->setRange(0, 1080.0 / 18);
    return replotMs(plot, reps);
}

} // namespace

int main(int argc, char** argv)
{
    if (!qEnvironmentVariableIsSet("QT_QPA_PLATFORM"))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    bool json = false;
    size_t maxSpans = 10'000'000;
    int reps = 15;
    bool naiveRun = true;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--json") == 0)
            json = true;
        else if (std::strcmp(argv[i], "--max") == 0 && i + 1 < argc)
            maxSpans = std::stoull(argv[++i]);
        else if (std::strcmp(argv[i], "--no-naive") == 0)
            naiveRun = false;
        else if (std::strcmp(argv[i], "--reps") == 0 && i + 1 < argc)
            reps = std::max(1, std::atoi(argv[++i]));
        else {
            std::fprintf(stderr, "usage: bench_timeline [--json] [--max SPANS] [--reps R] [--no-naive]\n");
            return 2;
        }
    }

    std::map<size_t, Result> results;
    for (size_t n : {size_t(100'000), size_t(1'000'000), size_t(10'000'000), size_t(100'000'000)}) {
        if (n > maxSpans)
            continue;
        results[n] = benchTimeline(n, reps);
        if (!json) {
            const Result& r = results[n];
            std::printf("%9zu spans: full %7.2f ms  1%% %7.2f ms  0.01%% %7.2f ms  hover %6.2f us  %5.1f B/span  "
                        "setTrace %7.1f ms\n",
                        n, r.fullMs, r.zoom1Ms, r.zoom001Ms, r.hoverUs, r.bytesPerSpan, r.setTraceMs);
            std::printf("           cpu: full %.2f ms  1%% %.2f ms  0.01%% %.2f ms  setTrace %.1f ms\n", r.fullCpu,
                        r.zoom1Cpu, r.zoom001Cpu, r.setTraceCpu);
            std::printf("           memory: trace %.1f B/span, timeline index %.1f B/span\n", r.traceBytesPerSpan,
                        r.bytesPerSpan - r.traceBytesPerSpan);
            std::printf("           without summaries (span walk): full %.2f ms (cpu %.2f ms)  1%% %.2f ms\n",
                        r.fullWalkMs, r.fullWalkCpu, r.zoom1WalkMs);
            std::printf("           rects full %zu (merged %zu, visited %zu)  1%% %zu (labels %zu, arrows %zu, "
                        "skipped %zu)  0.01%% %zu (labels %zu, arrows %zu)\n",
                        r.full.rects(), r.full.mergedRects, r.full.spansVisited, r.zoom1.rects(), r.zoom1.labels,
                        r.zoom1.flows, r.zoom1.flowsSkipped, r.zoom001.rects(), r.zoom001.labels, r.zoom001.flows);
            std::fflush(stdout);
        }
    }
    const double naive = naiveRun ? benchNaive(100'000, std::min(reps, 3)) : 0;
    if (json) {
        std::printf("{\"spans\": {");
        bool first = true;
        for (const auto& [n, r] : results) {
            std::printf("%s\"%zu\": {\"full_ms\": %.3f, \"zoom1_ms\": %.3f, \"zoom001_ms\": %.3f, \"hover_us\": %.3f, "
                        "\"bytes_per_span\": %.1f, \"trace_bytes_per_span\": %.1f, \"full_walk_ms\": %.3f, "
                        "\"zoom1_walk_ms\": %.3f}",
                        first ? "" : ", ", n, r.fullMs, r.zoom1Ms, r.zoom001Ms, r.hoverUs, r.bytesPerSpan,
                        r.traceBytesPerSpan, r.fullWalkMs, r.zoom1WalkMs);
            first = false;
        }
        std::printf("}, \"naive_100k_full_ms\": %.3f}\n", naive);
    } else {
        std::printf("naive: 100000 QCPItemRects, full view: %.1f ms", naive);
        if (results.count(100'000))
            std::printf(" (%.0fx slower than the timeline)", naive / std::max(1e-9, results[100'000].fullMs));
        std::printf("\n");
    }
    return 0;
}
