// CSV: one row per span, for spreadsheets and scripts. RFC 4180: comma-separated, CRLF line ends, fields with a
// comma, a double quote or a line break in double quotes (a quote inside doubled). The first row is the header:
//
//   device,stream,thread,kind,name,start_ns,end_ns,bytes
//
// device and stream are empty for host spans; stream is the stream's name as the source names it; thread is the
// host thread (for GPU spans: the one that launched it, where the trace has the launch arrow); kind is the trace
// model's kind name (kernel, memcpy-h2d, ..., api-call, sync, host-work). Rows go track by track, by start.
// Reading such a file back gives the spans on their streams and host threads (no arrows, no run info).
#pragma once

#include "result.h"
#include "trace.h"

#include <string>
#include <string_view>

namespace streamscope {

inline constexpr std::string_view kCsvHeader = "device,stream,thread,kind,name,start_ns,end_ns,bytes";

std::string traceToCsv(const Trace& trace);
// Errors name the row as a spreadsheet numbers it (the header is row 1) and the column.
Result<Trace> parseCsvTrace(std::string_view text, const std::string& file);
Result<Trace> loadCsvTraceFile(const std::string& path);

} // namespace streamscope
