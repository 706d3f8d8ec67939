// The timeline's colours (from the theme, theme.cpp), line styles and labels of span and flow kinds: one palette for
// bars, arrows, legends and the panels that name kinds.
#include "timeline_plottable.h"

namespace streamscope {

QColor spanKindColor(SpanKind kind, const Theme& theme)
{
    return theme.spanKind(kind);
}

QColor spanKindTextColor(SpanKind kind, const Theme& theme)
{
    return theme.spanKindText(kind);
}

QColor spanDividerColor(SpanKind kind, const Theme& theme)
{
    const QColor c = theme.spanKind(kind);
    // Relative luminance (sRGB weights, close enough to choose a direction): light bars get a darker line.
    const double luminance = 0.2126 * c.redF() + 0.7152 * c.greenF() + 0.0722 * c.blueF();
    return luminance > 0.4 ? c.darker(150) : c.lighter(170);
}

QString spanKindLabel(SpanKind kind)
{
    switch (kind) {
    case SpanKind::Kernel: return QStringLiteral("kernel");
    case SpanKind::MemcpyH2D: return QStringLiteral("memcpy HtoD");
    case SpanKind::MemcpyD2H: return QStringLiteral("memcpy DtoH");
    case SpanKind::MemcpyD2D: return QStringLiteral("memcpy DtoD");
    case SpanKind::MemcpyP2P: return QStringLiteral("memcpy peer");
    case SpanKind::Memset: return QStringLiteral("memset");
    case SpanKind::HostFunc: return QStringLiteral("host function");
    case SpanKind::ApiCall: return QStringLiteral("API call");
    case SpanKind::Sync: return QStringLiteral("sync (blocked)");
    case SpanKind::HostWork: return QStringLiteral("host work");
    case SpanKind::Range: return QStringLiteral("range (op, annotation)");
    }
    return {};
}

QString trackNameText(const QString& word, const std::string& name)
{
    const QString n = QString::fromStdString(name);
    const QString noun = word.section(QLatin1Char(' '), -1); // "host thread" -> "thread"
    if (n.startsWith(noun + QLatin1Char(' '), Qt::CaseInsensitive))
        return word.chopped(noun.size()) + n;
    return word + QLatin1Char(' ') + n;
}

QColor flowKindColor(FlowKind kind, const Theme& theme)
{
    return theme.flowKind(kind);
}

QString flowKindLabel(FlowKind kind)
{
    switch (kind) {
    case FlowKind::Launch: return QStringLiteral("launch");
    case FlowKind::Event: return QStringLiteral("event");
    case FlowKind::Sync: return QStringLiteral("sync");
    case FlowKind::Implicit: return QStringLiteral("implicit");
    case FlowKind::Call: return QStringLiteral("op call");
    case FlowKind::Collective: return QStringLiteral("collective");
    }
    return {};
}

Qt::PenStyle flowKindPenStyle(FlowKind kind)
{
    switch (kind) {
    case FlowKind::Launch: return Qt::SolidLine;
    case FlowKind::Event: return Qt::SolidLine;
    case FlowKind::Sync: return Qt::DashLine;
    case FlowKind::Implicit: return Qt::DotLine;
    case FlowKind::Call: return Qt::SolidLine;
    case FlowKind::Collective: return Qt::DashDotLine;
    }
    return Qt::SolidLine;
}
} // namespace streamscope
