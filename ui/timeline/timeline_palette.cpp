// The timeline's colours, line styles and labels of span and flow kinds: one palette for bars, arrows, legends and
// the panels that name kinds.
#include "timeline_plottable.h"

namespace streamscope {

QColor spanKindColor(SpanKind kind)
{
    // Okabe & Ito (2008), "Color Universal Design": distinguishable with protanopia, deuteranopia and tritanopia.
    switch (kind) {
    case SpanKind::Kernel: return QColor(0x00, 0x72, 0xB2);    // blue
    case SpanKind::MemcpyH2D: return QColor(0x00, 0x9E, 0x73); // bluish green (Nsight: HtoD green)
    case SpanKind::MemcpyD2H: return QColor(0xD5, 0x5E, 0x00); // vermillion (Nsight: DtoH red)
    case SpanKind::MemcpyD2D: return QColor(0xE6, 0x9F, 0x00); // orange
    case SpanKind::MemcpyP2P: return QColor(0xCC, 0x79, 0xA7); // reddish purple
    case SpanKind::Memset: return QColor(0xF0, 0xE4, 0x42);    // yellow
    case SpanKind::HostFunc: return QColor(0x56, 0xB4, 0xE9);  // sky blue
    case SpanKind::ApiCall: return QColor(0xA6, 0xA6, 0xA6);   // grey: overhead, not work
    case SpanKind::Sync: return QColor(0x88, 0x22, 0x55);      // wine: the host thread is blocked
    case SpanKind::HostWork: return QColor(0xDD, 0xCC, 0x77);  // sand (Tol): CPU work
    case SpanKind::Range: return QColor(0xD4, 0xDC, 0xE6);     // pale slate: encloses work, is none itself
    }
    return QColor(Qt::gray);
}

QColor spanKindTextColor(SpanKind kind)
{
    const QColor c = spanKindColor(kind);
    // Relative luminance (sRGB approximation): dark text on light bars, white on dark ones.
    const double l = 0.2126 * c.redF() * c.redF() + 0.7152 * c.greenF() * c.greenF() + 0.0722 * c.blueF() * c.blueF();
    return l > 0.18 ? QColor(0x10, 0x10, 0x10) : QColor(Qt::white);
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

QColor flowKindColor(FlowKind kind)
{
    switch (kind) {
    case FlowKind::Launch: return QColor(0x50, 0x50, 0x50);
    case FlowKind::Event: return QColor(0xB3, 0x58, 0x06);
    case FlowKind::Sync: return QColor(0x88, 0x22, 0x55);
    case FlowKind::Implicit: return QColor(0x6A, 0x3D, 0x9A);
    case FlowKind::Call: return QColor(0x8A, 0x96, 0xA8); // the ranges' slate, darker: an annotation, no dependency
    }
    return QColor(Qt::black);
}

QString flowKindLabel(FlowKind kind)
{
    switch (kind) {
    case FlowKind::Launch: return QStringLiteral("launch");
    case FlowKind::Event: return QStringLiteral("event");
    case FlowKind::Sync: return QStringLiteral("sync");
    case FlowKind::Implicit: return QStringLiteral("implicit");
    case FlowKind::Call: return QStringLiteral("op call");
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
    }
    return Qt::SolidLine;
}
} // namespace streamscope
