// Presentation mode's slide text, as HTML scaled to the screen: the set-up (devices, streams, host threads and their
// ops), the run (progress, makespan) and the explanation (checks, the effect the run shows, diagnostics).
#include "presentation_mode.h"
#include "presentation_style.h"

#include "analysis.h"
#include "concurrency_plot.h"
#include "format.h"
#include "lesson_gallery.h"
#include "main_window.h"
#include "scenario_model.h"
#include "timeline_view.h"

#include <QAction>
#include <QApplication>
#include <QBoxLayout>
#include <QDockWidget>
#include <QFontInfo>
#include <QFrame>
#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QMenuBar>
#include <QProgressBar>
#include <QStatusBar>
#include <QTextDocument>
#include <QTextDocumentFragment>
#include <QTimer>
#include <QToolBar>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <set>

namespace streamscope {

using namespace presentation_detail;

namespace {

// "s1, s2" or "s0, s1, s2, …, s31" for long lists.
QString nameList(const QStringList& names)
{
    if (names.size() <= 6)
        return names.join(QStringLiteral(", "));
    return names.mid(0, 3).join(QStringLiteral(", ")) + QStringLiteral(", …, ") + names.last();
}

QString streamKindText(StreamKind kind)
{
    switch (kind) {
    case StreamKind::LegacyDefault: return QStringLiteral("legacy default stream");
    case StreamKind::PerThreadDefault: return QStringLiteral("per-thread default stream");
    case StreamKind::Blocking: return QStringLiteral("blocking");
    case StreamKind::NonBlocking: return QStringLiteral("non-blocking");
    }
    return {};
}
} // namespace

// ---- slide text --------------------------------------------------------------------------------------------------

QString PresentationMode::setUpHtml(double scale) const
{
    const double body = bodyPixelSize() * scale;
    const double detail = body * 0.78;
    const Scenario& s = m_window->scenarioModel()->scenario();
    QString h = QStringLiteral("<div style='color:%1'>").arg(colour(kInk));
    if (m_loading) {
        h += QStringLiteral("<p style='font-size:%1'>Opening the lesson…</p></div>").arg(px(body));
        return h;
    }
    // A variant: what it changes (its title is under the slide's title), before what the lesson itself shows.
    const QString variant = m_window->lessonVariant();
    QString change;
    for (const Variant& v : s.variants)
        if (!variant.isEmpty() && qs(v.id) == variant)
            change = qs(v.description);
    if (!change.isEmpty())
        h += QStringLiteral("<table width='100%' cellpadding='%1' style='background-color:#FFE08A; margin-bottom:%2'>"
                            "<tr><td style='font-size:%3'><b>What changes:</b> %4</td></tr></table>")
                 .arg(int(body * 0.3))
                 .arg(px(body * 0.4), px(body), esc(change));
    if (!s.description.empty())
        h += QStringLiteral("<p style='font-size:%1; margin-bottom:%2'>%3</p>")
                 .arg(px(body), px(body * 0.5), esc(qs(s.description)));

    h += QStringLiteral("<p style='font-size:%1; font-weight:bold; color:%2; margin-bottom:%3'>What runs</p>")
             .arg(px(body * 0.9), colour(kAccent), px(body * 0.2));
    h += QStringLiteral("<table cellspacing='0' cellpadding='%1' style='font-size:%2'>")
             .arg(int(detail * 0.15))
             .arg(px(detail));
    auto row = [&](const QString& label, const QString& html) {
        h += QStringLiteral("<tr><td valign='top' style='padding-right:%1'><b>").arg(px(detail)) + label
            + QStringLiteral("</b></td><td valign='top'>") + html + QStringLiteral("</td></tr>");
    };

    // Streams, grouped by what they are.
    std::vector<std::pair<QString, QStringList>> groups;
    for (const StreamSpec& stream : s.streams) {
        QString what = streamKindText(stream.kind) + QStringLiteral(", GPU ") + QString::number(stream.device);
        if (stream.priority != 0)
            what += QStringLiteral(", priority ") + QString::number(stream.priority);
        auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == what; });
        if (it == groups.end())
            groups.emplace_back(what, QStringList{qs(stream.name)});
        else
            it->second << qs(stream.name);
    }
    QStringList streamLines;
    for (const auto& [what, names] : groups)
        streamLines << QStringLiteral("<b>") + esc(nameList(names)) + QStringLiteral("</b> — ") + esc(what)
                + (names.size() > 6 ? QStringLiteral(" (%1 streams)").arg(names.size()) : QString());
    if (!streamLines.isEmpty())
        row(s.streams.size() == 1 ? QStringLiteral("Stream") : QStringLiteral("Streams"),
            streamLines.join(QStringLiteral("<br>")));

    // Host threads and the operations they issue.
    for (size_t t = 0; t < s.threads.size() && t < size_t(kMaxThreadsListed); ++t) {
        const ThreadSpec& thread = s.threads[t];
        QString what = QStringLiteral("on GPU ") + QString::number(thread.device);
        if (thread.workers > 1)
            what += QStringLiteral(", a pool of %1 workers taking %2 tasks").arg(thread.workers).arg(thread.repeat);
        else if (thread.repeat > 1)
            what += QStringLiteral(", %1 times").arg(thread.repeat);
        QStringList ops;
        for (size_t i = 0; i < thread.ops.size() && i < size_t(kMaxOpsListed); ++i) {
            const Op& op = thread.ops[i];
            const QString name = qs(displayName(op));
            const QString summary = ScenarioModel::opSummary(op);
            ops << (summary.contains(name)
                        ? esc(summary)
                        : QStringLiteral("<b>") + esc(name) + QStringLiteral("</b>: ") + esc(summary));
        }
        if (thread.ops.size() > size_t(kMaxOpsListed))
            ops << QStringLiteral("… and %1 more").arg(thread.ops.size() - size_t(kMaxOpsListed));
        row(QStringLiteral("Thread ") + esc(qs(thread.name)),
            esc(what) + QStringLiteral(":<br>") + QStringLiteral("• ") + ops.join(QStringLiteral("<br>• ")));
    }
    if (s.threads.size() > size_t(kMaxThreadsListed))
        row(QString(), QStringLiteral("… and %1 more host threads").arg(s.threads.size() - size_t(kMaxThreadsListed)));
    if (const auto connections = s.run.maxConnections())
        row(QStringLiteral("Setting"), QStringLiteral("CUDA_DEVICE_MAX_CONNECTIONS = %1").arg(*connections));
    h += QStringLiteral("</table></div>");
    return h;
}

QString PresentationMode::runHtml(double scale) const
{
    const double body = bodyPixelSize() * scale;
    const double big = body * 1.25;
    RunController* runner = m_window->runController();
    const bool gpu = m_runState == RunState::Idle ? m_window->backend() == RunBackend::Gpu : m_runOnGpu;
    QString where;
    if (gpu) {
        const QString name = runner->gpuStatus().description;
        where = name.isEmpty() ? QStringLiteral("the GPU") : QStringLiteral("the GPU (") + esc(name) + QLatin1Char(')');
    } else {
        where = QStringLiteral("the simulator");
        if (!runner->profileId().isEmpty())
            where += QStringLiteral(" (%1 profile)").arg(esc(runner->profileId()));
    }
    QString h = QStringLiteral("<div style='color:%1'>").arg(colour(kInk));
    auto line = [&](double size, const QString& html, const char* ink = kInk, bool bold = false) {
        h += QStringLiteral("<p style='font-size:%1; color:%2;%3 margin-bottom:%4'>")
                 .arg(px(size), colour(ink), bold ? QStringLiteral(" font-weight:bold;") : QString(), px(size * 0.4))
            + html + QStringLiteral("</p>");
    };
    if (m_loading) {
        line(big, QStringLiteral("Opening the lesson…"), kInk, true);
    } else if (m_runState == RunState::Running || (m_runState == RunState::Idle && m_awaitingTrace)) {
        line(big, QStringLiteral("Running on ") + where + QStringLiteral("…"), kInk, true);
        if (!m_runMessage.isEmpty())
            line(body, esc(m_runMessage), kMuted);
    } else if (m_runState == RunState::Failed) {
        line(big, QStringLiteral("✖ The run failed"), kFail, true);
        line(body, esc(m_runMessage), kInk);
    } else if (m_runState == RunState::Finished) {
        const auto trace = m_window->currentTrace();
        line(big, QStringLiteral("✔ Finished on ") + where, kPass, true);
        QString done = (m_runOnGpu ? QStringLiteral("Ran in ") : QStringLiteral("Simulated in "))
            + formatDurationNs((long long)(m_runWallMs * 1e6)) + QLatin1Char('.');
        if (trace && trace->trace)
            done += QStringLiteral(" %1 GPU operations and %2 API calls recorded.")
                        .arg(trace->report.metrics.gpuSpanCount)
                        .arg(trace->report.metrics.apiCallCount);
        line(body, done, kInk);
        line(body, QStringLiteral("Next: the timeline →"), kAccent, true);
    } else {
        line(big, QStringLiteral("Ready to run on ") + where, kInk, true);
    }
    if (m_step != Step::Run && !m_loading)
        line(body, QStringLiteral("The %1 appears when the run has finished.").arg(stepName(m_step).toLower()), kMuted);
    h += QStringLiteral("</div>");
    return h;
}

QString PresentationMode::explanationHtml(double scale, bool columns) const
{
    const auto analyzed = m_window->currentTrace();
    const double body = (m_active ? bodyPixelSize() : 28) * scale;
    const double small = body * 0.8;
    const QString open = QStringLiteral("<div style='color:%1'>").arg(colour(kInk));
    if (!analyzed)
        return open
            + QStringLiteral("<p style='font-size:%1'>Run the lesson to see what happened.</p></div>").arg(px(body));
    const TraceReport& report = analyzed->report;
    const bool isVariant = !m_window->lessonVariant().isEmpty();
    auto heading = [&](const QString& text, bool first = false) -> QString {
        return QStringLiteral("<p style='font-size:%1; font-weight:bold; color:%2; margin-top:%3; margin-bottom:%4'>")
                   .arg(px(body * 0.85), colour(kAccent), px(first ? 0 : body * 0.5), px(body * 0.15))
            + text + QStringLiteral("</p>");
    };

    // The verdict: the key check (the one the contrasting variant fails).
    QString verdict;
    const CheckResult* key = nullptr;
    for (const CheckResult& c : report.checks)
        if (c.expectation.key && !key)
            key = &c;
    if (!key && !report.checks.empty())
        key = &report.checks.front();
    if (key) {
        const bool pass = key->passed && key->error.empty();
        verdict +=
            QStringLiteral("<p style='font-size:%1; font-weight:bold; color:%2; margin-top:0; margin-bottom:%3'>%4</p>")
                .arg(px(body * 1.25), colour(pass ? kPass : kFail), px(body * 0.2),
                     pass ? QStringLiteral("✔ PASS") : QStringLiteral("✖ FAIL"));
        if (!key->expectation.why.empty())
            verdict += QStringLiteral("<p style='font-size:%1; margin-bottom:%2'>%3</p>")
                           .arg(px(body), px(body * 0.2), esc(qs(key->expectation.why)));
        verdict += QStringLiteral("<p style='font-size:%1; color:%2'>%3%4</p>")
                       .arg(px(small), colour(kMuted), esc(qs(key->description)),
                            key->error.empty() ? QString() : QStringLiteral(" — ") + esc(qs(key->error)));
        if (isVariant)
            verdict += QStringLiteral("<p style='font-size:%1; color:%2'>%3</p>")
                           .arg(px(small), colour(kMuted),
                                pass ? QStringLiteral("This variant was meant to fail the key check: compare it with "
                                                      "the lesson itself.")
                                     : QStringLiteral("As intended: this variant breaks what the lesson shows."));
    } else if (!report.note.isEmpty()) {
        verdict += QStringLiteral("<p style='font-size:%1; color:%2; margin-top:0'>%3</p>")
                       .arg(px(small), colour(kMuted), esc(report.note));
    }

    // The numbers that show the effect.
    const TraceMetrics& m = report.metrics;
    QString makespan = QStringLiteral("Makespan <b>%1</b>").arg(formatDurationNs(m.makespanNs));
    if (const auto base = m_baseMetrics.find(m_window->lessonId());
        isVariant && base != m_baseMetrics.end() && base->second.makespanNs > 0 && m.makespanNs > 0) {
        const double ratio = double(m.makespanNs) / double(base->second.makespanNs);
        makespan +=
            QStringLiteral("<br>%1 without the change: <b>%2× %3</b>")
                .arg(formatDurationNs(base->second.makespanNs), QString::number(ratio >= 1 ? ratio : 1 / ratio, 'f', 2),
                     ratio >= 1 ? QStringLiteral("slower") : QStringLiteral("faster"));
    }
    QStringList numbers{makespan};
    if (std::isfinite(m.speedup) && m.speedup > 0)
        numbers << QStringLiteral("Speedup over serial <b>%1×</b>").arg(QString::number(m.speedup, 'f', 2));
    numbers << (m.maxConcurrency == 1 ? QStringLiteral("One GPU operation at a time")
                                      : QStringLiteral("Up to <b>%1</b> GPU operations at once").arg(m.maxConcurrency));
    if (m.copyComputeOverlapNs > 0)
        numbers << QStringLiteral("Copies overlap kernels for <b>%1</b>").arg(formatDurationNs(m.copyComputeOverlapNs));
    const QString effect = heading(QStringLiteral("What the run shows"), verdict.isEmpty())
        + QStringLiteral("<p style='font-size:%1; margin-top:0'>").arg(px(body)) + numbers.join(QStringLiteral("<br>"))
        + QStringLiteral("</p>");

    // Why: the diagnostics, one sentence each (with what to do about a problem).
    QString why;
    if (!report.diagnostics.empty()) {
        bool spans = false;
        for (const Diagnostic& d : report.diagnostics)
            spans = spans || !d.spans.empty();
        why += heading(
            spans
                ? QStringLiteral("Why <span style='color:%1'>(outlined on the timeline)</span>").arg(colour(kHighlight))
                : QStringLiteral("Why"),
            columns);
        for (const Diagnostic* shown : diagnosticsToShow(report)) {
            const Diagnostic& d = *shown;
            const bool info = d.severity == "info";
            why += QStringLiteral("<p style='font-size:%1; margin-bottom:%2'>%3 %4")
                       .arg(px(body * 0.9), px(body * 0.25), info ? QStringLiteral("ℹ") : QStringLiteral("⚠"),
                            esc(qs(d.message)));
            if (const DiagnosticRule* rule = findDiagnosticRule(d.rule); !info && rule && !rule->fix.empty())
                why += QStringLiteral("<br><span style='font-size:%1; color:%2'>%3</span>")
                           .arg(px(small), colour(kMuted), esc(qs(rule->fix)));
            why += QStringLiteral("</p>");
        }
    }

    // The other checks, one line each.
    QStringList others;
    for (const CheckResult& c : report.checks) {
        if (&c == key)
            continue;
        const bool pass = c.passed && c.error.empty();
        others << QStringLiteral("<span style='color:%1'><b>%2</b></span> %3")
                      .arg(colour(pass ? kPass : kFail), pass ? QStringLiteral("✔") : QStringLiteral("✖"),
                           esc(qs(c.description)));
    }
    if (!others.isEmpty())
        why += heading(QStringLiteral("Other checks"), columns && why.isEmpty())
            + QStringLiteral("<p style='font-size:%1; margin-top:0'>").arg(px(small))
            + others.join(QStringLiteral("<br>")) + QStringLiteral("</p>");

    if (!columns)
        return open + verdict + effect + why + QStringLiteral("</div>");
    // Below a short timeline: the verdict and numbers on the left, the reasons on the right.
    return open
        + QStringLiteral("<table width='100%' cellspacing='0' cellpadding='0'><tr><td width='47%' valign='top'>")
        + verdict + effect + QStringLiteral("</td><td width='6%'></td><td width='47%' valign='top'>") + why
        + QStringLiteral("</td></tr></table></div>");
}

} // namespace streamscope
