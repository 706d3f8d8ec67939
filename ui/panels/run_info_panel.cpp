#include "run_info_panel.h"

#include "format.h"
#include "theme.h"
#include "timing_text.h"
#include "trace.h"

#include <QEvent>
#include <QTextBrowser>
#include <QTextDocument>
#include <QVBoxLayout>

namespace streamscope {

namespace {

QString esc(const QString& s)
{
    return s.toHtmlEscaped();
}

QString rowHtml(const QString& label, const QString& valueHtml)
{
    if (valueHtml.isEmpty())
        return {};
    return QStringLiteral("<tr><td valign='top' class='muted' style='padding-right:10px'>") + esc(label)
        + QStringLiteral("</td><td>") + valueHtml + QStringLiteral("</td></tr>");
}

QString row(const QString& label, const QString& value)
{
    return rowHtml(label, esc(value));
}

// The settings a GPU run writes about its timing: shown in words under Source, not again in the list.
bool isTimingSetting(const std::string& key)
{
    return key == "timing" || key == "timing_reason" || key == "timed_makespan_ns" || key == "untimed_makespan_ns"
        || key == "timing_perturbation" || key == "event_timing_corrections" || key == "clock_check"
        || key == "cupti_records";
}

// Timing, what it cost (bold past the diagnostic's limit), why CUPTI was not used, and its checks.
QString timingRows(const RunInfo& i)
{
    QString h = row(QStringLiteral("Timing"), timingSettingText(runSetting(i, "timing")));
    if (const auto cost = timingCost(i)) {
        const QString text = esc(timingCostText(*cost));
        h += rowHtml(QStringLiteral("Timing cost"),
                     cost->ratio > timingPerturbationLimit() ? QStringLiteral("<b>") + text + QStringLiteral("</b>")
                                                             : text);
    }
    h += row(QStringLiteral("Why not CUPTI"), runSetting(i, "timing_reason"));
    h += row(QStringLiteral("Event corrections"), runSetting(i, "event_timing_corrections"));
    h += row(QStringLiteral("CUPTI records"), runSetting(i, "cupti_records"));
    h += row(QStringLiteral("Clock check"), runSetting(i, "clock_check"));
    return h;
}

QString sourceText(TraceSource s)
{
    switch (s) {
    case TraceSource::CudaEvents: return QStringLiteral("GPU, timed with CUDA events");
    case TraceSource::Cupti: return QStringLiteral("GPU, timed with CUPTI");
    case TraceSource::Simulator: return QStringLiteral("simulator");
    case TraceSource::Imported: return QStringLiteral("imported");
    }
    return {};
}

} // namespace

QString runInfoHtml(const Trace* t, const QString& file, double wallMs)
{
    if (!t)
        return QStringLiteral("<p class='faint'>No trace yet.</p>");
    const RunInfo& i = t->info;
    QString h = QStringLiteral("<table cellspacing='0' cellpadding='2'>");
    h += row(QStringLiteral("Source"),
             sourceText(i.source)
                 + (i.backend.empty() ? QString() : QStringLiteral(" (backend ") + qs(i.backend) + QLatin1Char(')')));
    h += timingRows(i);
    QString scenario = qs(i.scenarioId);
    if (!i.scenarioTitle.empty())
        scenario += (scenario.isEmpty() ? QString() : QStringLiteral(" — ")) + qs(i.scenarioTitle);
    h += row(QStringLiteral("Scenario"), scenario);
    h += row(QStringLiteral("Variant"), qs(i.variant));
    h += row(QStringLiteral("File"), file);
    h += row(QStringLiteral("Date"), qs(i.date));
    h += row(QStringLiteral("Host"), qs(i.host));
    h += row(QStringLiteral("Command"), qs(i.command));
    if (wallMs >= 0)
        h += row(QStringLiteral("Run took"), formatNs(wallMs * 1e6));
    if (i.clockAlignmentErrorNs > 0)
        h += row(QStringLiteral("Clock alignment error"), QStringLiteral("≤ ") + formatNs(i.clockAlignmentErrorNs));
    // A merged job's: how its ranks' clocks were put on one, and how well (rank_merge.h).
    h += row(QStringLiteral("Clock alignment"), runSetting(i, "clock_alignment"));
    for (const auto& [k, v] : i.settings)
        if (!isTimingSetting(k) && k != "clock_alignment")
            h += row(qs(k), qs(v));
    const auto [first, last] = t->timeRange();
    h += row(QStringLiteral("Spans"),
             QStringLiteral("%1 on %2 tracks, %3 dependency arrows")
                 .arg(t->spanCount())
                 .arg(t->tracks.size())
                 .arg(t->flows.size()));
    h += row(QStringLiteral("Time span"), formatNs(double(last - first)));
    h += QStringLiteral("</table>");
    for (const DeviceInfo& d : i.devices) {
        h += QStringLiteral("<h4 style='margin-bottom:2px'>GPU ") + QString::number(d.index) + QStringLiteral(": ")
            + esc(qs(d.name)) + QStringLiteral("</h4><table cellspacing='0' cellpadding='1'>");
        for (const auto& [k, v] : d.properties)
            h += row(qs(k), qs(v));
        h += QStringLiteral("</table>");
    }
    return h;
}

RunInfoPanel::RunInfoPanel(QWidget* parent) : QWidget(parent), m_browser(new QTextBrowser(this))
{
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_browser);
    refresh();
}

void RunInfoPanel::setTrace(std::shared_ptr<const Trace> trace, const QString& file, double wallMs)
{
    m_trace = std::move(trace);
    m_file = file;
    m_wallMs = wallMs;
    refresh();
}

QString RunInfoPanel::html() const
{
    return runInfoHtml(m_trace.get(), m_file, m_wallMs);
}

void RunInfoPanel::refresh()
{
    m_browser->document()->setDefaultStyleSheet(Theme::of(this).richTextStyleSheet());
    m_browser->setHtml(html());
}

void RunInfoPanel::changeEvent(QEvent* event)
{
    QWidget::changeEvent(event);
    if (isThemeChange(event))
        refresh();
}

} // namespace streamscope
