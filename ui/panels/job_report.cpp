#include "job_report.h"

#include "collectives.h"
#include "document_loader.h"
#include "format.h"

#include <QStringList>

#include <algorithm>
#include <numeric>

namespace streamscope {

namespace {

QString esc(const QString& s)
{
    return s.toHtmlEscaped();
}

QString cell(const QString& text, bool right = true)
{
    return (right ? QStringLiteral("<td align='right'>") : QStringLiteral("<td>")) + text + QStringLiteral("</td>");
}

} // namespace

QString jobReportHtml(const AnalyzedTrace& at)
{
    const TraceReport& a = at.report;
    if (a.ranks.empty() || !at.trace)
        return {};
    const Trace& trace = *at.trace;
    QString h = QStringLiteral("<h4 style='margin-bottom:4px'>Job: %1 rank%2</h4>")
                    .arg(a.ranks.size())
                    .arg(a.ranks.size() == 1 ? QString() : QStringLiteral("s"));
    QStringList lines;
    if (const std::string* of = findSetting(trace.info, "ranks"))
        lines << QStringLiteral("Ranks: ") + esc(qs(*of)) + QLatin1Char('.');
    if (const std::string* alignment = findSetting(trace.info, "clock_alignment"))
        lines << QStringLiteral("Clock alignment: ") + esc(qs(*alignment)) + QLatin1Char('.');
    else
        lines << QStringLiteral("<span class='faint'>The trace does not say how its ranks' clocks were "
                                "aligned.</span>");
    h += QStringLiteral("<p style='margin:0 0 4px 0'>") + lines.join(QStringLiteral("<br>")) + QStringLiteral("</p>");
    for (const auto& [key, value] : trace.info.settings)
        if (key == "merge note")
            h += QStringLiteral("<p class='warning' style='margin:0 0 4px 0'>⚠ ") + esc(qs(value))
                + QStringLiteral("</p>");

    // Ranks: what each did, and how long it waited in collectives for the one that came last. Narrow columns: the
    // dock is.
    h += QStringLiteral("<table cellspacing='0' cellpadding='2'><tr class='muted'><td>rank</td>"
                        "<td align='right'>GPU busy</td><td align='right'>collectives</td>"
                        "<td align='right'>waited</td><td align='right'>last</td></tr>");
    for (const RankSummary& r : a.ranks) {
        const bool straggler = r.arrivedLast > 0 && r.arrivedLast * 2 > r.calls;
        h += QStringLiteral("<tr><td nowrap>") + (straggler ? QStringLiteral("<b class='warning'>") : QString())
            + QStringLiteral("rank %1").arg(r.rank) + (straggler ? QStringLiteral("</b>") : QString())
            + QStringLiteral("</td>") + cell(formatNs(double(r.gpuBusyNs)))
            + cell(r.calls ? formatNs(double(r.collectiveNs)) : QStringLiteral("–"))
            + cell(r.calls ? formatNs(double(r.collectiveWaitNs)) : QStringLiteral("–"))
            + cell(r.calls ? QStringLiteral("%1&nbsp;of&nbsp;%2").arg(r.arrivedLast).arg(r.calls) : QStringLiteral("–"))
            + QStringLiteral("</tr>");
    }
    h += QStringLiteral("</table><p class='faint' style='margin-top:2px'>GPU busy: time any of the rank's GPU "
                        "operations ran. Collectives: time in its parts of collective calls; waited: how long it "
                        "was ready before the last rank of a call arrived; last: the calls it reached last.</p>");

    // Collective calls, in time order; a long job shows those the ranks waited longest in.
    if (a.collectives.empty()) {
        h += QStringLiteral("<p class='faint' style='margin-top:2px'>No collective calls are linked across the "
                            "ranks.</p>");
        return h;
    }
    constexpr size_t kShown = 25;
    std::vector<size_t> shown(a.collectives.size());
    std::iota(shown.begin(), shown.end(), size_t(0));
    if (shown.size() > kShown) {
        std::nth_element(shown.begin(), shown.begin() + kShown, shown.end(),
                         [&a](size_t x, size_t y) { return a.collectives[x].waitedNs > a.collectives[y].waitedNs; });
        shown.resize(kShown);
        std::sort(shown.begin(), shown.end());
    }
    h += QStringLiteral("<p style='margin:6px 0 2px 0'>Collective calls (the timeline's collective arrows link each "
                        "call's parts):</p><table cellspacing='0' cellpadding='2'><tr class='muted'><td>start</td>"
                        "<td>call</td><td align='right'>took</td><td>last</td><td align='right'>others waited"
                        "</td></tr>");
    const int64_t origin = trace.spanCount() ? trace.timeRange().first : 0;
    for (size_t i : shown) {
        const CollectiveCallView& c = a.collectives[i];
        QString last = QStringLiteral("–");
        if (c.last < trace.spanCount()) {
            const int rank = rankOfTrack(trace, trace.spans.track[c.last]);
            last = QStringLiteral("<a href='span:%1'>%2</a>")
                       .arg(c.last)
                       .arg(rank >= 0 ? QStringLiteral("rank&nbsp;%1").arg(rank)
                                      : esc(qs(trace.tracks[trace.spans.track[c.last]].name)));
        }
        const QString toolTip = QStringLiteral("%1 ranks; the others waited %2 in all")
                                    .arg(c.spans.size())
                                    .arg(formatNs(double(c.totalWaitNs)));
        h += QStringLiteral("<tr>") + cell(formatNs(double(c.start - origin)))
            + QStringLiteral("<td nowrap><a href='span:%1' title='%2'>")
                  .arg(c.spans.empty() ? c.last : c.spans.front())
                  .arg(esc(toolTip))
            + esc(qs(c.name)) + QStringLiteral("</a></td>") + cell(formatNs(double(c.end - c.start)))
            + QStringLiteral("<td nowrap>") + last + QStringLiteral("</td>") + cell(formatNs(double(c.waitedNs)))
            + QStringLiteral("</tr>");
    }
    h += QStringLiteral("</table>");
    if (a.collectives.size() > kShown)
        h += QStringLiteral("<p class='faint' style='margin-top:2px'>The %1 calls the ranks waited longest in, of "
                            "%2.</p>")
                 .arg(kShown)
                 .arg(a.collectives.size());
    return h;
}

} // namespace streamscope
