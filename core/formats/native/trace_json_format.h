// What the native trace writer and reader share (trace_json_writer.cpp, trace_json_reader.cpp). Internal to core.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

namespace streamscope::trace_json {

// ordered_json keeps keys in the order written, so files read like the reference in docs/TRACE.md and the
// embedded scenario keeps its own key order.
using Json = nlohmann::ordered_json;

inline constexpr std::string_view kFormat = "streamscope-trace";

inline std::string dumpJson(const Json& j, int indent = -1)
{
    // Names come from CUDA, the OS and imported files: invalid UTF-8 is replaced rather than thrown on.
    return j.dump(indent, ' ', false, Json::error_handler_t::replace);
}

} // namespace streamscope::trace_json
