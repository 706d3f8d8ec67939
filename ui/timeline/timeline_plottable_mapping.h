// The pixel mapping of one draw of the timeline plottable, shared by its files (timeline_plottable.cpp,
// timeline_draw_list.cpp, timeline_arrows.cpp). Internal to the timeline.
#pragma once

#include "timeline_plottable.h"

namespace streamscope {

// Pixel mapping of one draw: x = ax + bx * key, y = ay + by * lane (by > 0: lanes grow downwards).
struct TimelinePlottable::Mapping {
    QRect rect;
    double ax = 0, bx = 1, ay = 0, by = 1;
    int64_t origin = 0;
    bool valid = false;
    double xOfTime(int64_t t) const { return ax + bx * double(t - origin); }
    double keyOfX(double x) const { return (x - ax) / bx; }
    double yOfLane(double lane) const { return ay + by * lane; }
    double laneOfY(double y) const { return (y - ay) / by; }
};

} // namespace streamscope
