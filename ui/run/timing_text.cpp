#include "timing_text.h"

#include "format.h"
#include "run_controller.h"

#include <QRegularExpression>

#include <cmath>
#include <cstdlib>

namespace streamscope {

namespace {

// "--timing cupti" as the window offers it: Timing “CUPTI”.
QString withWindowChoices(QString text, std::optional<TimingMode>* firstNamed)
{
    static const QRegularExpression flag(QStringLiteral("--timing (auto|cupti|events|both)"));
    QString out;
    qsizetype last = 0;
    auto it = flag.globalMatch(text);
    while (it.hasNext()) {
        const auto m = it.next();
        const auto mode = timingModeFromString(m.captured(1).toStdString());
        if (!mode)
            continue;
        if (firstNamed && !*firstNamed)
            *firstNamed = mode;
        out += text.mid(last, m.capturedStart() - last) + QStringLiteral("Timing “") + timingModeLabel(*mode)
            + QStringLiteral("”");
        last = m.capturedEnd();
    }
    return out + text.mid(last);
}

QString capitalized(QString s)
{
    if (!s.isEmpty())
        s[0] = s[0].toUpper();
    return s;
}

QString sentence(QString s)
{
    s = s.trimmed();
    if (!s.isEmpty() && !s.endsWith(QLatin1Char('.')))
        s += QLatin1Char('.');
    return s;
}

} // namespace

QString runSetting(const RunInfo& info, std::string_view key)
{
    const std::string* v = findSetting(info, key);
    return v ? qs(*v) : QString();
}

QString timingSettingText(const QString& timing)
{
    if (timing == QLatin1String("cupti"))
        return QStringLiteral("CUPTI activity records");
    if (timing == QLatin1String("events"))
        return QStringLiteral("CUDA events around every operation");
    if (timing == QLatin1String("both"))
        return QStringLiteral("CUPTI, with per-op CUDA event times beside it (both)");
    if (timing == QLatin1String("none"))
        return QStringLiteral("none (the operations were not timed)");
    return timing;
}

double timingPerturbationLimit()
{
    return DiagnosticThresholds{}.timingPerturbationMax;
}

std::optional<TimingCost> timingCost(const RunInfo& info)
{
    TimingCost c;
    c.timedNs = runSetting(info, "timed_makespan_ns").toLongLong();
    c.untimedNs = runSetting(info, "untimed_makespan_ns").toLongLong();
    bool ok = false;
    const double ratio = runSetting(info, "timing_perturbation").toDouble(&ok);
    if (ok && ratio > 0)
        c.ratio = ratio;
    else if (c.timedNs > 0 && c.untimedNs > 0)
        c.ratio = double(c.timedNs) / double(c.untimedNs);
    if (c.ratio <= 0)
        return std::nullopt;
    return c;
}

QString timingCostText(const TimingCost& cost)
{
    const int pct = int(std::lround(100.0 * (cost.ratio - 1.0)));
    const QString percent = (pct < 0 ? QStringLiteral("\u2212") : QStringLiteral("+")) + QString::number(std::abs(pct))
        + QStringLiteral(" %");
    if (cost.timedNs > 0 && cost.untimedNs > 0)
        return QStringLiteral("timed %1 vs %2 without timing (%3)")
            .arg(formatNs(double(cost.timedNs)), formatNs(double(cost.untimedNs)), percent);
    return percent + QStringLiteral(" against the same work without timing");
}

TimingNotice timingNotice(const Trace& trace, const std::vector<Diagnostic>& diagnostics)
{
    TimingNotice notice;
    const RunInfo& info = trace.info;
    const Diagnostic* diagnostic = nullptr;
    for (const Diagnostic& d : diagnostics)
        if (d.rule == "timing-perturbation") {
            diagnostic = &d;
            break;
        }
    const auto cost = timingCost(info);
    if (diagnostic || (cost && cost->ratio > timingPerturbationLimit())) {
        notice.perturbation.title = QStringLiteral("Timing changed this run:");
        // The diagnostic's message: "The timed run took A, P% longer than … (B): <cause>. <fix>" — its numbers are
        // said here from the settings, then its cause and fix.
        QString causeAndFix;
        if (diagnostic) {
            const QString message = qs(diagnostic->message);
            const qsizetype colon = message.indexOf(QStringLiteral("): "));
            causeAndFix = cost && colon >= 0 ? capitalized(message.mid(colon + 3)) : message;
        } else if (const DiagnosticRule* rule = findDiagnosticRule("timing-perturbation")) {
            causeAndFix = qs(rule->fix);
        }
        causeAndFix = withWindowChoices(sentence(causeAndFix), &notice.suggested);
        if (!diagnostic || !notice.suggested) {
            // The generic fix names both: suggest the other kind of timing than the one that cost.
            const QString timing = runSetting(info, "timing");
            if (timing == QLatin1String("events") || timing == QLatin1String("both"))
                notice.suggested = TimingMode::Cupti;
            else if (timing == QLatin1String("cupti"))
                notice.suggested = TimingMode::Events;
            else
                notice.suggested.reset();
        }
        notice.perturbation.text =
            cost ? sentence(timingCostText(*cost)) + QLatin1Char(' ') + causeAndFix : causeAndFix;
    }
    QString reason = runSetting(info, "timing_reason");
    if (!reason.isEmpty()) {
        static const QString prefix = QStringLiteral("CUDA events instead of CUPTI: ");
        if (reason.startsWith(prefix))
            reason = reason.mid(prefix.size());
        notice.fallback.title = QStringLiteral("CUPTI was not used:");
        notice.fallback.text = sentence(reason) + QStringLiteral(" The run was timed with CUDA events instead.");
    }
    return notice;
}

bool hasMeasuredTiming(const Trace& t, uint32_t i)
{
    if (i >= t.spanCount() || !isGpuSpan(t.spans.kind[i]))
        return false;
    return t.info.source == TraceSource::Cupti || t.info.source == TraceSource::CudaEvents || !t.spans.timing.empty()
        || t.spans.hasEventError(i);
}

QString spanTimingText(const Trace& t, uint32_t i)
{
    if (!hasMeasuredTiming(t, i))
        return {};
    const SpanKind kind = t.spans.kind[i];
    switch (t.spans.timingOf(i)) {
    case SpanTiming::Measured: {
        // By the timing the run used; older traces describe it in a sentence: their source says it.
        const QString timing = runSetting(t.info, "timing");
        const bool named =
            timing == QLatin1String("cupti") || timing == QLatin1String("both") || timing == QLatin1String("events");
        const bool cupti = named ? timing != QLatin1String("events") : t.info.source == TraceSource::Cupti;
        const bool events = named ? timing == QLatin1String("events") : t.info.source == TraceSource::CudaEvents;
        return cupti ? QStringLiteral("measured (CUPTI)")
            : events ? QStringLiteral("measured (CUDA events)")
                     : QStringLiteral("measured");
    }
    case SpanTiming::Corrected:
        if (isCopySpan(kind))
            return QStringLiteral("start corrected: the start event fired before the copy could run; drawn from where "
                                  "the previous copy on its copy engine ended");
        if (kind == SpanKind::Kernel)
            return QStringLiteral("start corrected: the start event fired before the kernel could run; drawn its "
                                  "known run time before its end");
        return QStringLiteral("start corrected: the start event fired before the operation could run; drawn where "
                              "the evidence puts it");
    case SpanTiming::Uncertain:
        return QStringLiteral("start uncertain: the op may have waited for SMs; it began at or after the drawn start");
    }
    return {};
}

QString spanEventErrorText(const Trace& t, uint32_t i)
{
    if (i >= t.spanCount() || !t.spans.hasEventError(i))
        return {};
    QString text = QStringLiteral("CUDA events: start ") + formatSignedNs(double(t.spans.eventStartError[i]));
    if (!t.spans.eventEndError.empty() && t.spans.eventEndError[i] != kNoEventError)
        text += QStringLiteral(", end ") + formatSignedNs(double(t.spans.eventEndError[i]));
    return text + QStringLiteral(" from CUPTI");
}

} // namespace streamscope
