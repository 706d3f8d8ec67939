// What the analysis's JSON and text writers share (analysis_report.cpp, analysis_compare.cpp; ratios also in
// analysis.cpp): numbers as the reports write them, and the JSON dump. Internal to the analysis.
#pragma once

#include "trace.h"

#include <nlohmann/json.hpp>

#include <algorithm>
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
// change at it is applied, then at(instant, running before, running after) is called. Starts and ends are ascending
// sequences with empty(), top() and pop().
template <typename Starts, typename Ends, typename At>
void sweepSortedConcurrency(Starts& starts, Ends& ends, At&& at)
{
    int running = 0;
    while (!starts.empty() || !ends.empty()) {
        const int64_t next = starts.empty() ? ends.top()
            : ends.empty()                  ? starts.top()
                                            : std::min(starts.top(), ends.top());
        const int before = running;
        while (!ends.empty() && ends.top() == next) {
            --running;
            ends.pop();
        }
        while (!starts.empty() && starts.top() == next) {
            ++running;
            starts.pop();
        }
        at(next, before, running);
    }
}

// A sorted vector as such a sequence.
class SortedTimes {
public:
    explicit SortedTimes(const std::vector<int64_t>& v) : m_v(v) {}
    bool empty() const { return m_i == m_v.size(); }
    int64_t top() const { return m_v[m_i]; }
    void pop() { ++m_i; }

private:
    const std::vector<int64_t>& m_v;
    size_t m_i = 0;
};

template <typename At>
void sweepConcurrency(const std::vector<int64_t>& starts, const std::vector<int64_t>& ends, At&& at)
{
    SortedTimes s(starts), e(ends);
    sweepSortedConcurrency(s, e, at);
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
