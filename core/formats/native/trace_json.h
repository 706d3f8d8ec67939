// The native trace format ("format": "streamscope-trace", versioned): read (trace_json_reader.cpp) and write
// (trace_json_writer.cpp). docs/TRACE.md describes it.
#pragma once

#include "result.h"
#include "text_file.h" // readTextFile and saveTextFileAtomic, which the trace's users save and load with
#include "trace.h"

#include <string>

namespace streamscope {

std::string traceToJson(const Trace& trace);
Result<Trace> parseTrace(const std::string& text, const std::string& file);
Result<Trace> loadTraceFile(const std::string& path);

} // namespace streamscope
