// Durations as people read them: the one rule for "850 ns", "12.3 µs", "4.567 ms", "1.234 s" that the reports,
// the command line, the panels and the timeline share. The unit follows the magnitude (ns below 1 µs, µs below
// 1 ms, ms below 1 s); how many decimals follow is the precision, since a report's column and a tooltip ask for
// different ones.
#pragma once

#include <cstdint>
#include <string>

namespace streamscope {

enum class DurationPrecision : uint8_t {
    Report,      // µs with 1 decimal, ms and s with 3: "12.3 µs", "4.567 ms" (analysis reports, diagnostics)
    Table,       // µs with 2 decimals, ms and s with 3: "12.34 µs" (the command line's tables)
    Panel,       // 2 decimals below 10 µs, else 1; 3 below 10 ms, else 2; s with 3: "1.23 µs", "45.67 ms"
    Significant, // three digits in every unit: "1.23 µs", "12.3 µs", "123 µs" (the timeline's tooltips)
};

struct DurationFormat {
    DurationPrecision precision = DurationPrecision::Report;
    bool ascii = false; // "us" for "µs", for terminals and files that may not be UTF-8
};

// The number to write, its decimals and its unit ("ns", "µs" or "us", "ms", "s"): the rule itself, for callers
// that write the number with their own toolkit (the UI's QString::number).
struct DurationParts {
    double value = 0;
    int decimals = 0;
    const char* unit = "ns";
};
DurationParts durationParts(double ns, DurationFormat format = {});

// Whole nanoseconds below 1 µs ("850 ns"); negative durations keep their sign ("-12.3 µs").
std::string formatDuration(double ns, DurationFormat format = {});

} // namespace streamscope
