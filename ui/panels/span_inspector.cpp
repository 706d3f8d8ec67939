#include "span_inspector.h"

#include "analysis.h"
#include "format.h"
#include "ranges.h"
#include "span_names.h"
#include "theme.h"
#include "timeline_plottable.h"
#include "timing_text.h"
#include "trace.h"

#include <QEvent>
#include <QTextBrowser>
#include <QTextDocument>
#include <QUrl>
#include <QVBoxLayout>

namespace streamscope {

namespace {

QString esc(const QString& s)
{
    return s.toHtmlEscaped();
}

QString trackText(const Trace& t, uint32_t track)
{
    const Track& tr = t.tracks[track];
    if (tr.kind == TrackKind::Ranges && tr.parent >= 0 && size_t(tr.parent) < t.tracks.size())
        return QStringLiteral("ranges of ") + trackText(t, uint32_t(tr.parent))
            + QStringLiteral(", depth %1").arg(tr.depth);
    if (tr.kind == TrackKind::HostThread)
        return trackNameText(QStringLiteral("host thread"), tr.name);
    return trackNameText(QStringLiteral("stream"), tr.name) + QStringLiteral(" on GPU ") + QString::number(tr.device);
}

QString row(const QString& label, const QString& valueHtml)
{
    return QStringLiteral("<tr><td valign='top' class='muted' style='padding-right:10px'>") + esc(label)
        + QStringLiteral("</td><td>") + valueHtml + QStringLiteral("</td></tr>");
}

QString swatch(SpanKind k)
{
    return QStringLiteral("<span style='color:") + spanKindColor(k).name() + QStringLiteral("'>■</span> ");
}

QString flowText(FlowKind k, bool incoming)
{
    switch (k) {
    case FlowKind::Launch: return incoming ? QStringLiteral("launched by") : QStringLiteral("launched");
    case FlowKind::Event: return incoming ? QStringLiteral("waited for event after") : QStringLiteral("event released");
    case FlowKind::Sync: return incoming ? QStringLiteral("waited for") : QStringLiteral("released the host in");
    case FlowKind::Implicit:
        return incoming ? QStringLiteral("implicitly waited for") : QStringLiteral("implicitly held back");
    case FlowKind::Call: return incoming ? QStringLiteral("called in") : QStringLiteral("made the call");
    case FlowKind::Collective:
        return incoming ? QStringLiteral("same collective call as") : QStringLiteral("same collective call as");
    }
    return {};
}

} // namespace

namespace {

// Why the span started when it did: what released it, by the critical path's rule (releaseOf) — the previous op in
// its stream, its launch, the event it waited for, or the resource that held it although it was ready.
QString startedText(const Trace& t, uint32_t i, int64_t origin)
{
    const CriticalPath p = releaseOf(t, i);
    if (p.segments.size() != 2)
        return {};
    const CriticalPathSegment& by = p.segments[0];
    const CriticalPathSegment& seg = p.segments[1];
    const QString what = QStringLiteral("<a href='span:%1'>").arg(by.span) + esc(qs(shortSpanName(by.name)))
        + QStringLiteral("</a> (") + esc(trackText(t, by.track)) + QStringLiteral(")");
    const QString ended = QStringLiteral(" ended at ") + formatNs(double(by.end - origin));
    switch (seg.reason) {
    case PathReason::Resource: return esc(qs(describeRelease(t, p, 1)));
    case PathReason::StreamOrder:
        return QStringLiteral("after ") + what + QStringLiteral(", the previous operation in its stream,") + ended;
    case PathReason::Launch: return QStringLiteral("after its launch ") + what + ended;
    case PathReason::EventWait:
        return QStringLiteral("after ") + what + QStringLiteral(", which the event it waited for followed,") + ended;
    case PathReason::Sync:
        return QStringLiteral("after ") + what + QStringLiteral(", the GPU work it waited for,") + ended;
    case PathReason::Implicit:
        return QStringLiteral("after ") + what + QStringLiteral(" (an implicit synchronization)") + ended;
    case PathReason::HostIssueOrder:
        return QStringLiteral("after ") + what + QStringLiteral(", the previous call of its thread,") + ended;
    case PathReason::Start: break;
    }
    return {};
}

} // namespace

QString spanInspectorHtml(const Trace& t, int span)
{
    if (span < 0 || size_t(span) >= t.spanCount())
        return QStringLiteral("<p class='faint'>Click a bar on the timeline or a row of the span table.</p>");
    const auto i = uint32_t(span);
    const SpanColumns& s = t.spans;
    const int64_t origin = t.timeRange().first;
    const std::string_view raw = t.spanName(i);
    const QString shortName = qs(shortSpanName(raw));
    QString h = QStringLiteral("<h3 style='margin-bottom:4px'>") + swatch(s.kind[i]) + esc(shortName)
        + QStringLiteral("</h3><table cellspacing='0' cellpadding='1'>");
    h += row(QStringLiteral("Kind"), esc(spanKindLabel(s.kind[i])));
    h += row(QStringLiteral("On"), esc(trackText(t, s.track[i])));
    // Where it came from (ranges.h): the op a GPU operation's launch was called in, with its Python function.
    const LaunchOrigins origins(t);
    const auto link = [&t](uint32_t r) -> QString {
        return QStringLiteral("<a href='span:%1'>").arg(r) + esc(qs(shortSpanName(t.spanName(r))))
            + QStringLiteral("</a>");
    };
    if (const LaunchOrigin o = origins.of(i); o.op != kNoOrigin) {
        QString v = link(o.op);
        if (o.python != kNoOrigin)
            v += QStringLiteral(" (python: ") + link(o.python) + QLatin1Char(')');
        h += row(isGpuSpan(s.kind[i]) ? QStringLiteral("Launched by") : QStringLiteral("Called in"), v);
    } else if (s.kind[i] == SpanKind::Range) {
        QStringList chain;
        for (uint32_t r : origins.enclosingRanges(i))
            chain << link(r);
        if (!chain.isEmpty())
            h += row(QStringLiteral("Inside"), chain.join(QStringLiteral(" › ")));
    }
    h += row(QStringLiteral("Start"), formatNs(double(s.start[i] - origin)));
    h += row(QStringLiteral("End"), formatNs(double(s.end[i] - origin)));
    h += row(QStringLiteral("Duration"),
             QStringLiteral("<b>") + formatNs(double(s.end[i] - s.start[i])) + QStringLiteral("</b>"));
    // How far a GPU span's times are known (timing_text.h): a start that is only a bound says so first.
    if (const QString timing = spanTimingText(t, i); !timing.isEmpty()) {
        const qsizetype colon = timing.indexOf(QLatin1Char(':'));
        QString v = s.timingOf(i) == SpanTiming::Measured || colon < 0
            ? esc(timing)
            : QStringLiteral("<b>") + esc(timing.left(colon)) + QStringLiteral("</b>") + esc(timing.mid(colon));
        if (const QString error = spanEventErrorText(t, i); !error.isEmpty())
            v += QStringLiteral("<br>") + esc(error);
        h += row(QStringLiteral("Timing"), v);
    }
    if (s.bytesOf(i) > 0) {
        QString b = formatBytes(s.bytesOf(i));
        if (s.end[i] > s.start[i] && isCopySpan(s.kind[i]))
            b += QStringLiteral(" (%1 GB/s)").arg(double(s.bytesOf(i)) / double(s.end[i] - s.start[i]), 0, 'f', 1);
        h += row(QStringLiteral("Bytes"), b);
    }
    if (s.gridOf(i).count() > 0)
        h += row(QStringLiteral("Grid × block"),
                 formatDim3(s.gridOf(i)) + QStringLiteral(" × ") + formatDim3(s.blockOf(i))
                     + QStringLiteral(" (%1 blocks)").arg(s.gridOf(i).count()));
    if (s.threadOf(i) >= 0)
        h += row(QStringLiteral("Scenario op"),
                 QStringLiteral("<a href='op:%1:%2'>thread %1, op %2</a>, iteration %3")
                         .arg(s.threadOf(i))
                         .arg(s.opOf(i))
                         .arg(s.iterationOf(i))
                     + (s.task.empty() ? QString() : QStringLiteral(", repeat %1").arg(s.taskOf(i))));
    if (const QString why = startedText(t, i, origin); !why.isEmpty())
        h += row(QStringLiteral("Started"), why);
    h += QStringLiteral("</table>");
    // The name as recorded, to read and to copy: a kernel's whole signature, and the symbol when it was mangled.
    if (const QString full = qs(demangledName(raw)); full != shortName || full != qs(raw)) {
        h += QStringLiteral("<h4 style='margin-bottom:2px'>Full name</h4><p style='margin-top:0'>") + esc(full)
            + QStringLiteral("</p>");
        if (full != qs(raw))
            h +=
                QStringLiteral("<p class='muted' style='margin-top:0'>symbol ") + esc(qs(raw)) + QStringLiteral("</p>");
    }

    QString in, out;
    for (const Flow& f : t.flows) {
        const bool incoming = f.to == i;
        if (!incoming && f.from != i)
            continue;
        const uint32_t other = incoming ? f.from : f.to;
        const QString line = QStringLiteral("<li>") + esc(flowText(f.kind, incoming)) + QStringLiteral(" ")
            + swatch(s.kind[other]) + QStringLiteral("<a href='span:%1'>").arg(other)
            + esc(qs(shortSpanName(t.spanName(other)))) + QStringLiteral("</a> <span class='faint'>(")
            + esc(trackText(t, s.track[other])) + QStringLiteral(", ")
            + (incoming ? QStringLiteral("ended at ") + formatNs(double(s.end[other] - origin))
                        : QStringLiteral("started at ") + formatNs(double(s.start[other] - origin)))
            + QStringLiteral(")</span></li>");
        (incoming ? in : out) += line;
    }
    h += QStringLiteral("<h4 style='margin-bottom:2px'>Depends on</h4>");
    h += in.isEmpty() ? QStringLiteral("<p class='faint'>nothing recorded</p>")
                      : QStringLiteral("<ul style='margin-top:0'>") + in + QStringLiteral("</ul>");
    h += QStringLiteral("<h4 style='margin-bottom:2px'>Depended on by</h4>");
    h += out.isEmpty() ? QStringLiteral("<p class='faint'>nothing recorded</p>")
                       : QStringLiteral("<ul style='margin-top:0'>") + out + QStringLiteral("</ul>");
    return h;
}

SpanInspector::SpanInspector(QWidget* parent) : QWidget(parent), m_browser(new QTextBrowser(this))
{
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_browser);
    m_browser->setOpenLinks(false);
    connect(m_browser, &QTextBrowser::anchorClicked, this, &SpanInspector::linkClicked);
    refresh();
}

void SpanInspector::setTrace(std::shared_ptr<const Trace> trace)
{
    m_trace = std::move(trace);
    m_span = -1;
    refresh();
}

void SpanInspector::showSpan(int span)
{
    m_span = span;
    refresh();
}

void SpanInspector::refresh()
{
    m_browser->document()->setDefaultStyleSheet(Theme::of(this).richTextStyleSheet());
    m_browser->setHtml(html());
}

void SpanInspector::changeEvent(QEvent* event)
{
    QWidget::changeEvent(event);
    if (isThemeChange(event))
        refresh();
}

QString SpanInspector::html() const
{
    if (!m_trace)
        return QStringLiteral("<p class='faint'>No trace yet.</p>");
    return spanInspectorHtml(*m_trace, m_span);
}

void SpanInspector::linkClicked(const QUrl& url)
{
    const QString s = url.toString();
    if (s.startsWith(QLatin1String("span:"))) {
        Q_EMIT spanActivated(s.mid(5).toInt());
    } else if (s.startsWith(QLatin1String("op:"))) {
        const QStringList parts = s.split(QLatin1Char(':'));
        if (parts.size() == 3)
            Q_EMIT opActivated(parts[1].toInt(), parts[2].toInt());
    }
}

} // namespace streamscope
