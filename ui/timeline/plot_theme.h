// A theme's colours on a chart drawn with QCustomPlot (the concurrency strip, the compare window's histogram, the
// sweep chart): its background, every axis (pens, labels, tick labels, grid) and its legend's and titles' text. What
// a chart plots (its graphs and bars) the chart colours itself, from the same theme (theme.h).
#pragma once

#include "theme.h"
#include "timeline_plottable.h" // includes QCustomPlot (see there)

namespace streamscope {

void applyPlotTheme(QCustomPlot& plot, const Theme& theme);

} // namespace streamscope
