// What the analysis's JSON and text writers share (analysis_report.cpp, analysis_compare.cpp; ratios also in
// analysis.cpp): numbers as the reports write them, and the JSON dump. Internal to the analysis.
#pragma once

#include "trace.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

namespace streamscope::analysis_detail {

using OrderedJson = nlohmann::ordered_json;

// The sweep behind the concurrency profile (analysis.cpp) and series (concurrency.cpp) over sorted starts and ends:
// half-open spans, so back-to-back spans are not concurrent. At each instant where something starts or ends, every
// change at it is applied, then at(instant, running before, running after) is called.
template <typename At>
void sweepConcurrency(const std::vector<int64_t>& starts, const std::vector<int64_t>& ends, At&& at)
{
    constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
    size_t i = 0, j = 0;
    int running = 0;
    while (i < starts.size() || j < ends.size()) {
        const int64_t next = std::min(i < starts.size() ? starts[i] : kMax, j < ends.size() ? ends[j] : kMax);
        const int before = running;
        while (j < ends.size() && ends[j] == next) {
            --running;
            ++j;
        }
        while (i < starts.size() && starts[i] == next) {
            ++running;
            ++i;
        }
        at(next, before, running);
    }
}

inline double ratio(double num, double den)
{
    return den > 0 ? num / den : 0.0;
}
// NaN and infinities are written as 0: JSON has no spelling for them, and a report should not show them.
inline double finite(double v)
{
    return std::isfinite(v) ? v : 0.0;
}

inline std::string dumpJson(const OrderedJson& j, int indent)
{
    return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

// "42%"
inline std::string pct(double fraction)
{
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.0f%%", 100.0 * finite(fraction));
    return buf;
}

inline std::string num(double v, const char* fmt = "%.2f")
{
    char buf[64];
    std::snprintf(buf, sizeof buf, fmt, finite(v));
    return buf;
}

} // namespace streamscope::analysis_detail
