// The native trace format ("format": "streamscope-trace", versioned): read and write.
#pragma once

#include "result.h"
#include "trace.h"

#include <string>

namespace streamscope {

std::string traceToJson(const Trace& trace);
Result<Trace> parseTrace(const std::string& text, const std::string& file);
Result<Trace> loadTraceFile(const std::string& path);
// Writes atomically: to a temporary file beside `path`, then renamed over it.
Status saveTextFileAtomic(const std::string& path, const std::string& text);
Result<std::string> readTextFile(const std::string& path, size_t maxBytes = size_t(4) << 30);

} // namespace streamscope
