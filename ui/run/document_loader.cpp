#include "document_loader.h"

#include "concurrency_plot.h"
#include "format.h"
#include "resources.h"
#include "scenario_json.h"
#include "timeline_layout.h"
#include "trace_formats.h"
#include "trace_json.h"

#include <QFile>
#include <QFileInfo>
#include <QRegularExpression>

#include <future>

namespace streamscope {

TraceReport reportOnTrace(const Trace& trace, const std::atomic<bool>* cancel)
{
    TraceReport a;
    const auto cancelled = [cancel] { return cancel && cancel->load(std::memory_order_relaxed); };
    // The diagnostics on this thread, the metrics and the critical path on another: each reads the trace only (at
    // 10 M spans the diagnostics take 5.7 s, the metrics 1.9 – 2.7 s, the critical path 1.1 s; docs/PERFORMANCE.md).
    // The flows by target, which both the critical path and the diagnostics walk, are built once for the two.
    const IncomingFlows incoming(trace);
    auto other = std::async(std::launch::async, [&a, &trace, &cancelled, &incoming] {
        if (!cancelled())
            a.metrics = computeMetrics(trace);
        if (!cancelled())
            a.criticalPath = criticalPath(trace, &incoming);
    });
    DiagnosticOptions options;
    options.cancel = cancel;
    options.incoming = &incoming;
    a.diagnostics = diagnose(trace, options);
    other.get();
    if (cancelled())
        return a;
    a.effect = qs(lessonEffect(trace.info));
    a.ranks = summarizeRanks(trace);
    if (!a.ranks.empty())
        a.collectives = collectiveCalls(trace);
    if (trace.info.scenarioJson.empty()) {
        a.note = QStringLiteral("The trace carries no scenario, so there are no checks to evaluate.");
        return a;
    }
    auto scenario = parseScenario(trace.info.scenarioJson, "scenario in the trace");
    if (!scenario) {
        a.note = QStringLiteral("The scenario in the trace could not be read: ") + qs(scenario.error().toString());
        return a;
    }
    a.scenarioTitle = qs(scenario->scenario.title);
    a.scenarioDescription = qs(scenario->scenario.description);
    a.checks = evaluateExpectations(trace, scenario->scenario.expect);
    if (a.checks.empty())
        a.note = QStringLiteral("The scenario states no expectations.");
    return a;
}

std::shared_ptr<const AnalyzedTrace> withViewParts(std::shared_ptr<AnalyzedTrace> trace, ViewSteps steps)
{
    if (!trace->trace || !trace->trace->finalized())
        return trace;
    const Trace& t = *trace->trace;
    // The concurrency plot's steps on a thread of their own, the launching ops on another, the layout (itself on
    // every core) on this one. At 100 M spans the steps take 12.4 s, the layout and launching ops 7.6 s alone and
    // 14 s with the steps beside them on the two cores measured (docs/PERFORMANCE.md): a big trace leaves the steps
    // for later, counted once its first frame is drawn. The launching ops (1.3 s at 100 M spans, one thread) and the
    // arrow index (1.2 s) fill the cores where the layout's lanes leave them idle. (The futures' destructors wait
    // too, should this throw.)
    std::future<void> counted;
    if (steps == ViewSteps::Now)
        counted = std::async(std::launch::async, [&trace, &t] { trace->concurrency = makeConcurrencyPlotData(t); });
    trace->concurrencyToCome = steps == ViewSteps::Later;
    std::future<void> byOp = std::async(std::launch::async, [&trace, &t] {
        auto ops = std::make_shared<const std::vector<uint32_t>>(launchingOps(t));
        trace->opGpuTimes = std::make_shared<const std::vector<OpGpuTime>>(gpuTimeByLaunchingOp(t, *ops));
        trace->launchingOps = std::move(ops);
    });
    std::future<void> arrows =
        std::async(std::launch::async, [&trace, &t] { trace->flows = std::make_shared<const FlowIndex>(t); });
    trace->layout = std::make_shared<const TimelineLayout>(t, initiallyCollapsedRanks(t));
    arrows.get();
    byOp.get();
    if (counted.valid())
        counted.get();
    return trace;
}

std::shared_ptr<const AnalyzedTrace> makeAnalyzedTrace(Trace trace)
{
    auto out = std::make_shared<AnalyzedTrace>();
    auto shared = std::make_shared<Trace>(std::move(trace));
    out->report = reportOnTrace(*shared);
    out->trace = std::move(shared);
    return withViewParts(std::move(out));
}

std::shared_ptr<const AnalyzedTrace> makeAnalyzedTrace(std::shared_ptr<const Trace> trace,
                                                       const std::atomic<bool>* cancel)
{
    auto out = std::make_shared<AnalyzedTrace>();
    out->report = reportOnTrace(*trace, cancel);
    out->trace = std::move(trace);
    return out;
}

QString detectFormat(const std::string& text)
{
    // The first "format" key of the text: the writers put it first, and an embedded scenario's is escaped (\").
    static const QRegularExpression re(QStringLiteral("(?<!\\\\)\"format\"\\s*:\\s*\"([^\"\\\\]*)\""));
    const QString head = QString::fromUtf8(text.data(), qsizetype(std::min<size_t>(text.size(), 64 * 1024)));
    const auto m = re.match(head);
    return m.hasMatch() ? m.captured(1) : QString();
}

Result<LoadedDocument> loadDocument(const QString& pathOrLesson, const QString& variant, const ImportProgress* progress,
                                    size_t analyzeBelowSpans)
{
    LoadedDocument doc;
    doc.variant = variant;
    QString path = pathOrLesson;
    if (!QFileInfo::exists(path)) {
        const bool looksLikePath = path.contains(QLatin1Char('/')) || path.endsWith(QLatin1String(".json"));
        auto preset = findPreset(pathOrLesson.toStdString());
        if (!preset) {
            if (looksLikePath)
                return Error{pathOrLesson.toStdString(), {}, "no such file"};
            return Error{pathOrLesson.toStdString(), {}, "no such file, and not a lesson: " + preset.error().message};
        }
        path = qs(preset->path);
        doc.lessonId = qs(preset->id);
    }
    doc.path = path;
    const std::string file = path.toStdString();

    // Scenario or trace, by content: a scenario says so in its "format"; anything else goes to the trace importers
    // (StreamScope, Chrome/Perfetto JSON, PyTorch profiler, Nsight Systems SQLite, CSV), which detect their own.
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return Error{file, {}, "cannot read: " + f.errorString().toStdString()};
    const QByteArray head = f.read(64 * 1024);
    f.close();
    const QString format = detectFormat(std::string(head.constData(), size_t(head.size())));
    if (format == QLatin1String("streamscope-scenario")) {
        auto text = readTextFile(file);
        if (!text)
            return Result<LoadedDocument>(text.error(), text.errorClass());
        auto scenario = parseScenario(*text, file, variant.toStdString());
        if (!scenario)
            return Result<LoadedDocument>(scenario.error(), scenario.errorClass());
        doc.kind = DocumentKind::Scenario;
        doc.scenario = std::move(scenario->scenario);
        doc.hasScenario = true;
        doc.warnings = std::move(scenario->warnings);
        return doc;
    }
    auto trace = progress ? importTraceFile(file, *progress) : importTraceFile(file);
    if (!trace)
        return Result<LoadedDocument>(trace.error(), trace.errorClass());
    doc.kind = DocumentKind::Trace;
    if (!trace->info.scenarioJson.empty()) {
        // The scenario as run (variant already applied): it opens in the editor, to change and run again.
        auto embedded = parseScenario(trace->info.scenarioJson, file + " (embedded scenario)");
        if (embedded) {
            doc.scenario = std::move(embedded->scenario);
            doc.hasScenario = true;
        }
    }
    doc.variant = qs(trace->info.variant);
    if (trace->spanCount() < analyzeBelowSpans) {
        doc.trace = makeAnalyzedTrace(std::move(trace).value());
    } else {
        auto shown = std::make_shared<AnalyzedTrace>();
        shown->trace = std::make_shared<const Trace>(std::move(trace).value());
        shown->analysed = false;
        doc.trace = withViewParts(std::move(shown), ViewSteps::Later);
    }
    return doc;
}

} // namespace streamscope
