#include "analysis_panel.h"

#include "format.h"
#include "job_report.h"
#include "span_names.h"
#include "theme.h"

#include <QEvent>
#include <QScrollBar>
#include <QTextBrowser>
#include <QTextDocument>
#include <QUrl>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace streamscope {

namespace {

QString esc(const QString& s)
{
    return s.toHtmlEscaped();
}

QString row(const QString& label, const QString& value, const QString& hint = {})
{
    QString r = QStringLiteral("<tr><td class='muted' style='padding-right:10px'>") + esc(label)
        + QStringLiteral("</td><td><b>") + esc(value) + QStringLiteral("</b>");
    if (!hint.isEmpty())
        r += QStringLiteral(" <span class='faint'>") + esc(hint) + QStringLiteral("</span>");
    return r + QStringLiteral("</td></tr>");
}

} // namespace

QString analysisHtml(const AnalyzedTrace* at, const QString& lessonTitle, const QString& lessonText,
                     const QString& variantText)
{
    QString h;
    const TraceReport* a = at ? &at->report : nullptr;
    const QString title = !lessonTitle.isEmpty() ? lessonTitle : a ? a->scenarioTitle : QString();
    const QString text = !lessonTitle.isEmpty() ? lessonText : a ? a->scenarioDescription : QString();
    if (!title.isEmpty())
        h += QStringLiteral("<h3 style='margin-bottom:4px'>") + esc(title) + QStringLiteral("</h3>");
    if (!variantText.isEmpty())
        h += QStringLiteral("<p class='note' style='margin-top:0'>") + esc(variantText) + QStringLiteral("</p>");
    auto addLessonText = [&] {
        if (!text.isEmpty())
            h += QStringLiteral("<h4 style='margin-bottom:2px'>What to look for</h4><p style='margin-top:0'>")
                + esc(text) + QStringLiteral("</p>");
    };
    if (!a) {
        addLessonText();
        h += QStringLiteral("<p class='faint'>Run the scenario to see its checks and metrics.</p>");
        return h;
    }
    if (!at->analysed) {
        addLessonText();
        h += QStringLiteral("<p class='faint'>Analysing the trace: its checks, metrics and diagnostics follow in a "
                            "moment.</p>");
        return h;
    }

    // The checks first: they are the lesson's verdict on this run.
    h += QStringLiteral("<h4 style='margin-bottom:4px'>Checks</h4>");
    if (a->checks.empty()) {
        h += QStringLiteral("<p class='faint'>") + esc(a->note) + QStringLiteral("</p>");
    } else {
        h += QStringLiteral("<table cellspacing='0' cellpadding='3' width='100%'>");
        for (const CheckResult& c : a->checks) {
            const bool pass = c.passed && c.error.empty();
            const QString badge = pass ? QStringLiteral("<b class='pass'>✔&nbsp;PASS</b>")
                                       : QStringLiteral("<b class='fail'>✖&nbsp;FAIL</b>");
            QString detail = esc(qs(c.description));
            if (!c.error.empty())
                detail += QStringLiteral("<br><span class='fail'>") + esc(qs(c.error)) + QStringLiteral("</span>");
            if (!c.expectation.why.empty())
                detail +=
                    QStringLiteral("<br><span class='muted'>") + esc(qs(c.expectation.why)) + QStringLiteral("</span>");
            h += QStringLiteral("<tr><td valign='top' nowrap>") + badge + QStringLiteral("</td><td>") + detail
                + QStringLiteral("</td></tr>");
        }
        h += QStringLiteral("</table>");
    }
    // The effect the lesson teaches, as the analysis names it in this run.
    const Diagnostic* effect = nullptr;
    if (!a->effect.isEmpty()) {
        for (const Diagnostic& d : a->diagnostics)
            if (qs(d.rule) == a->effect && !effect)
                effect = &d;
        const DiagnosticRule* rule = findDiagnosticRule(a->effect.toStdString());
        h += QStringLiteral("<h4 style='margin-bottom:4px'>What this run shows</h4>");
        if (effect) {
            h += QStringLiteral("<table cellspacing='0' cellpadding='4' width='100%' class='effect'><tr><td>"
                                "<b class='pass'>✔&nbsp;")
                + esc(rule ? qs(rule->title) : a->effect) + QStringLiteral("</b><br>") + esc(qs(effect->message));
            if (!effect->spans.empty())
                h += QStringLiteral(" <a href='span:%1'>show</a>").arg(effect->spans.front());
            h += QStringLiteral("</td></tr></table>");
        } else {
            h += QStringLiteral("<p class='warning' style='margin-top:0'>✖ The effect this lesson teaches (")
                + esc(rule ? qs(rule->title) : a->effect)
                + QStringLiteral(") does not show in this run: the analysis does not find it.</p>");
        }
    }

    addLessonText();
    h += jobReportHtml(*at); // a job of several ranks: its clocks, ranks and collective calls

    const bool moreDiagnostics = a->diagnostics.size() > (effect ? 1u : 0u);
    if (moreDiagnostics) {
        h += QStringLiteral("<h4 style='margin-bottom:4px'>Diagnostics</h4><table cellspacing='0' cellpadding='2'>");
        for (const Diagnostic& d : a->diagnostics) {
            if (&d == effect)
                continue;
            const QString sev = qs(d.severity);
            const QString tone = sev == QLatin1String("error") ? QStringLiteral("fail")
                : sev == QLatin1String("warning")              ? QStringLiteral("warning")
                                                               : QStringLiteral("info");
            QString line = esc(qs(d.message));
            if (const DiagnosticRule* rule = findDiagnosticRule(d.rule); rule && !rule->fix.empty())
                line += QStringLiteral("<br><span class='muted'>") + esc(qs(rule->fix)) + QStringLiteral("</span>");
            if (!d.spans.empty())
                line += QStringLiteral(" <a href='span:%1'>show</a>").arg(d.spans.front());
            h += QStringLiteral("<tr><td valign='top' class='") + tone + QStringLiteral("'>")
                + (sev == QLatin1String("info") ? QStringLiteral("ℹ") : QStringLiteral("⚠"))
                + QStringLiteral("</td><td>") + line + QStringLiteral("</td></tr>");
        }
        h += QStringLiteral("</table>");
    }

    // The critical path, each part with what it contributed to the run's length.
    if (const CriticalPath& path = a->criticalPath; !path.segments.empty()) {
        QString summary =
            QStringLiteral("%1 from its start to the end: %2 busy (GPU %3, host %4), %5 idle between its "
                           "parts; %6 parts (View ▸ Highlight Critical Path outlines them).")
                .arg(formatNs(double(path.lengthNs)), formatNs(double(path.busyNs)), formatNs(double(path.gpuNs)),
                     formatNs(double(path.hostNs)), formatNs(double(path.idleNs)))
                .arg(path.segments.size());
        if (path.resourceWaitNs > 0)
            summary += QStringLiteral(" Its operations waited %1 for resources held by the part before them.")
                           .arg(formatNs(double(path.resourceWaitNs)));
        // The idle time by what it was, the largest first.
        if (const auto idle = idleLargestFirst(path); !idle.empty()) {
            QStringList parts;
            for (const auto& [cause, ns] : idle)
                parts << formatNs(double(ns)) + QLatin1Char(' ') + qs(toString(cause));
            summary += QStringLiteral(" Idle: ") + parts.join(QStringLiteral("; ")) + QLatin1Char('.');
        }
        h += QStringLiteral("<h4 style='margin-bottom:4px'>Critical path</h4><p style='margin:0 0 4px 0'>")
            + esc(summary)
            + QStringLiteral("</p><table cellspacing='0' cellpadding='1'><tr class='muted'><td>part</td>"
                             "<td>released by</td><td align='right'>adds</td><td align='right'>idle before</td></tr>");
        // Long paths: the parts that contribute most, in time order.
        constexpr size_t kShown = 25;
        std::vector<size_t> shown(path.segments.size());
        for (size_t i = 0; i < shown.size(); ++i)
            shown[i] = i;
        if (shown.size() > kShown) {
            std::nth_element(shown.begin(), shown.begin() + kShown, shown.end(), [&path](size_t x, size_t y) {
                return path.segments[x].contributionNs > path.segments[y].contributionNs;
            });
            shown.resize(kShown);
            std::sort(shown.begin(), shown.end());
        }
        const Trace* t = at->trace.get();
        for (size_t i : shown) {
            const CriticalPathSegment& seg = path.segments[i];
            const QString track = t && seg.track < t->tracks.size() ? qs(t->tracks[seg.track].name) : QString();
            h += QStringLiteral("<tr><td><a href='span:%1'>").arg(seg.span) + esc(qs(shortSpanName(seg.name)))
                + QStringLiteral("</a> <span class='faint'>") + esc(track) + QStringLiteral("</span></td><td>")
                + esc(qs(i == 0  ? std::string("start")
                             : t ? describeRelease(*t, path, i)
                                 : "after " + std::string(toString(seg.reason))))
                + QStringLiteral("</td><td align='right'>") + formatNs(double(seg.contributionNs))
                + QStringLiteral("</td><td align='right'>")
                + (seg.idleBeforeNs > 0 ? formatNs(double(seg.idleBeforeNs)) : QString())
                + QStringLiteral("</td></tr>");
        }
        h += QStringLiteral("</table>");
        if (path.segments.size() > kShown)
            h += QStringLiteral("<p class='faint' style='margin-top:2px'>The %1 parts that add most, of %2.</p>")
                     .arg(kShown)
                     .arg(path.segments.size());
    }

    const TraceMetrics& m = a->metrics;
    h += QStringLiteral("<h4 style='margin-bottom:4px'>Metrics</h4><table cellspacing='0' cellpadding='1'>");
    h += row(QStringLiteral("Makespan"), formatNs(double(m.makespanNs)), QStringLiteral("first to last GPU op"));
    h += row(QStringLiteral("GPU work"), formatNs(double(m.gpuWorkNs)), QStringLiteral("all GPU ops back to back"));
    h += row(QStringLiteral("Speedup over serial"),
             std::isfinite(m.speedup) ? QString::number(m.speedup, 'f', 2) + QStringLiteral("×") : QStringLiteral("–"));
    h += row(QStringLiteral("Max concurrency"), QString::number(m.maxConcurrency), QStringLiteral("GPU ops at once"));
    h += row(QStringLiteral("Copy/compute overlap"), formatNs(double(m.copyComputeOverlapNs)));
    h += row(QStringLiteral("GPU operations"), QString::number(m.gpuSpanCount));
    h += row(QStringLiteral("API calls"), QString::number(m.apiCallCount));
    h += QStringLiteral("</table>");
    if (!m.streams.empty()) {
        h += QStringLiteral("<h4 style='margin-bottom:4px'>Streams</h4><table cellspacing='0' cellpadding='2'>"
                            "<tr class='muted'><td>stream</td><td>GPU</td><td align='right'>busy</td>"
                            "<td align='right'>of makespan</td><td align='right'>ops</td></tr>");
        for (const StreamMetrics& s : m.streams) {
            const double share = m.makespanNs > 0 ? 100.0 * double(s.busyNs) / double(m.makespanNs) : 0.0;
            h += QStringLiteral("<tr><td>") + esc(qs(s.name)) + QStringLiteral("</td><td>") + QString::number(s.device)
                + QStringLiteral("</td><td align='right'>") + formatNs(double(s.busyNs))
                + QStringLiteral("</td><td align='right'>") + QString::number(share, 'f', 1)
                + QStringLiteral(" %</td><td align='right'>") + QString::number(s.spanCount)
                + QStringLiteral("</td></tr>");
        }
        h += QStringLiteral("</table>");
    }
    return h;
}

AnalysisPanel::AnalysisPanel(QWidget* parent) : QWidget(parent), m_browser(new QTextBrowser(this))
{
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_browser);
    m_browser->setOpenLinks(false);
    connect(m_browser, &QTextBrowser::anchorClicked, this, [this](const QUrl& url) {
        const QString link = url.toString();
        if (link.startsWith(QLatin1String("span:")))
            Q_EMIT spanActivated(link.mid(5).toInt());
    });
    refresh();
}

void AnalysisPanel::setLesson(const QString& title, const QString& description, const QString& variantText)
{
    m_lessonTitle = title;
    m_lessonText = description;
    m_variantText = variantText;
    refresh();
}

void AnalysisPanel::setTrace(std::shared_ptr<const AnalyzedTrace> trace)
{
    m_trace = std::move(trace);
    refresh();
}

QString AnalysisPanel::html() const
{
    return analysisHtml(m_trace.get(), m_lessonTitle, m_lessonText, m_variantText);
}

int AnalysisPanel::passedChecks() const
{
    int n = 0;
    if (m_trace)
        for (const auto& c : m_trace->report.checks)
            n += c.passed && c.error.empty() ? 1 : 0;
    return n;
}

int AnalysisPanel::failedChecks() const
{
    return m_trace ? int(m_trace->report.checks.size()) - passedChecks() : 0;
}

void AnalysisPanel::refresh()
{
    // Live re-simulation refreshes this often: keep the reader's place.
    const int scroll = m_browser->verticalScrollBar()->value();
    m_browser->document()->setDefaultStyleSheet(Theme::of(this).richTextStyleSheet());
    m_browser->setHtml(html());
    m_browser->verticalScrollBar()->setValue(scroll);
}

void AnalysisPanel::changeEvent(QEvent* event)
{
    QWidget::changeEvent(event);
    if (isThemeChange(event))
        refresh();
}

} // namespace streamscope
