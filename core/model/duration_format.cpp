#include "duration_format.h"

#include <cmath>
#include <cstdio>

namespace streamscope {

namespace {

struct Unit {
    double scale;
    const char* name;
    int decimals;
};

Unit unitFor(double magnitudeNs, DurationPrecision precision)
{
    const double v = magnitudeNs;
    switch (precision) {
    case DurationPrecision::Report:
        if (v < 1e6)
            return {1e3, "us", 1};
        return v < 1e9 ? Unit{1e6, "ms", 3} : Unit{1e9, "s", 3};
    case DurationPrecision::Table:
        if (v < 1e6)
            return {1e3, "us", 2};
        return v < 1e9 ? Unit{1e6, "ms", 3} : Unit{1e9, "s", 3};
    case DurationPrecision::Panel:
        if (v < 1e6)
            return {1e3, "us", v < 1e4 ? 2 : 1};
        if (v < 1e9)
            return {1e6, "ms", v < 1e7 ? 3 : 2};
        return {1e9, "s", 3};
    case DurationPrecision::Significant: {
        const Unit u = v < 1e6 ? Unit{1e3, "us", 0} : v < 1e9 ? Unit{1e6, "ms", 0} : Unit{1e9, "s", 0};
        const double scaled = v / u.scale;
        return {u.scale, u.name, scaled < 10 ? 2 : (scaled < 100 ? 1 : 0)};
    }
    }
    return {1e3, "us", 1};
}

} // namespace

DurationParts durationParts(double ns, DurationFormat format)
{
    const double a = std::fabs(ns);
    if (a < 1e3)
        return {ns, 0, "ns"};
    const Unit u = unitFor(a, format.precision);
    const bool micro = u.scale == 1e3;
    return {ns / u.scale, u.decimals, micro && !format.ascii ? "\u00B5s" : u.name};
}

std::string formatDuration(double ns, DurationFormat format)
{
    const DurationParts p = durationParts(ns, format);
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f %s", p.decimals, p.value, p.unit);
    return buf;
}

} // namespace streamscope
