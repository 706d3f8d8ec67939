// What the sweep view's files share (sweep_view.cpp, sweep_view_run.cpp, sweep_view_plot.cpp): its limits and the
// texts of values and speed-ups (its colours are the theme's series, theme.h). Internal to the sweep view.
#pragma once

#include <QString>
#include <QTableWidgetItem>

#include <cmath>
#include <utility>

namespace streamscope::sweep_detail {

// The most values one sweep takes: each is a full run, and the plot's labels must stay readable.
inline constexpr int kMaxValues = 256;
// The limits of the core's rewrites (analysis.cpp), checked here so that the message comes before any run.
inline constexpr double kMaxStreams = 4096;
inline constexpr double kMaxChunks = 1'000'000;

inline QString valueText(double v)
{
    return QString::number(v, 'g', 10);
}

inline QString speedupText(double s)
{
    return QString::number(s, 'f', s < 10 ? 2 : 1) + QStringLiteral("×");
}

inline bool isWhole(double v)
{
    return std::fabs(v - std::round(v)) < 1e-9;
}

// The makespan axis' unit for a largest makespan: ns per unit and its name.
inline std::pair<double, QString> makespanUnit(double maxNs)
{
    if (maxNs < 1e6)
        return {1e3, QStringLiteral("µs")};
    if (maxNs < 1e9)
        return {1e6, QStringLiteral("ms")};
    return {1e9, QStringLiteral("s")};
}

inline QTableWidgetItem* cell(const QString& text, Qt::Alignment align = Qt::AlignRight | Qt::AlignVCenter)
{
    auto* item = new QTableWidgetItem(text);
    item->setTextAlignment(align);
    item->setFlags(Qt::ItemIsSelectable | Qt::ItemIsEnabled);
    return item;
}

} // namespace streamscope::sweep_detail
