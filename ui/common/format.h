// Small formatting helpers shared by the panels: sizes, durations, grids.
#pragma once

#include "duration_format.h" // the one duration rule (durationParts); formatNs is its Panel precision
#include "scenario.h"

#include <QString>

#include <cstdint>
#include <string>

namespace streamscope {

inline QString qs(const std::string& s)
{
    return QString::fromStdString(s);
}

inline QString qs(std::string_view s)
{
    return QString::fromUtf8(s.data(), qsizetype(s.size()));
}

// "512 B", "16 MiB", "1.5 GiB"
QString formatBytes(int64_t bytes);
// "850 ns", "1.23 µs", "12.3 µs", "4.567 ms", "45.67 ms", "1.234 s" (DurationPrecision::Panel)
QString formatNs(double ns);
// formatNs with its sign always written: "+1.20 µs", "−12.3 µs" (a true minus sign), "0 ns"
QString formatSignedNs(double ns);
// "264" for a 1-D grid, "64×64" or "8×8×2" otherwise
QString formatDim3(const Dim3& d);
// Parses "16 MiB", "4096", "1.5 GB", "64k" into bytes; -1 when it cannot.
int64_t parseBytes(const QString& text);

} // namespace streamscope
