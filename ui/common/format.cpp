#include "format.h"

#include <QRegularExpression>

#include <cmath>

namespace streamscope {

QString formatBytes(int64_t bytes)
{
    static const char* const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = double(bytes);
    int u = 0;
    while (std::fabs(v) >= 1024.0 && u < 4) {
        v /= 1024.0;
        ++u;
    }
    if (u == 0)
        return QString::number(bytes) + QStringLiteral(" B");
    const bool whole = std::fabs(v - std::round(v)) < 1e-9;
    return QString::number(v, 'f', whole ? 0 : (std::fabs(v) < 10 ? 2 : 1)) + QLatin1Char(' ')
        + QLatin1String(units[u]);
}

QString formatNs(double ns)
{
    const DurationParts p = durationParts(ns, {DurationPrecision::Panel});
    return QString::number(p.value, 'f', p.decimals) + QLatin1Char(' ') + QString::fromUtf8(p.unit);
}

QString formatSignedNs(double ns)
{
    if (std::fabs(ns) < 0.5)
        return formatNs(0);
    return (ns < 0 ? QStringLiteral("\u2212") : QStringLiteral("+")) + formatNs(std::fabs(ns));
}

QString formatDim3(const Dim3& d)
{
    if (d.y == 1 && d.z == 1)
        return QString::number(d.x);
    if (d.z == 1)
        return QString::number(d.x) + QStringLiteral("×") + QString::number(d.y);
    return QString::number(d.x) + QStringLiteral("×") + QString::number(d.y) + QStringLiteral("×")
        + QString::number(d.z);
}

int64_t parseBytes(const QString& text)
{
    static const QRegularExpression re(QStringLiteral("^\\s*([0-9]+(?:\\.[0-9]*)?)\\s*([kKmMgGtT]?)(i?)([bB]?)\\s*$"));
    const auto m = re.match(text);
    if (!m.hasMatch())
        return -1;
    bool ok = false;
    const double v = m.captured(1).toDouble(&ok);
    if (!ok)
        return -1;
    const QChar unit = m.captured(2).isEmpty() ? QChar() : m.captured(2).at(0).toLower();
    // KiB and kB alike are powers of 1024: the sizes people type for buffers.
    double f = 1;
    if (unit == QLatin1Char('k'))
        f = 1024.0;
    else if (unit == QLatin1Char('m'))
        f = 1024.0 * 1024;
    else if (unit == QLatin1Char('g'))
        f = 1024.0 * 1024 * 1024;
    else if (unit == QLatin1Char('t'))
        f = 1024.0 * 1024 * 1024 * 1024;
    const double bytes = std::round(v * f);
    if (bytes > 9.0e18)
        return -1;
    return int64_t(bytes);
}

} // namespace streamscope
