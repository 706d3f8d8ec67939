// What the Chrome export writes and the Chrome import must recognize (chrome_export.cpp, chrome_trace_builder.cpp).
// Internal.
#pragma once

#include "trace.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace streamscope::chrome {

// Written into "otherData" so that our own exports are recognized and read back exactly.
inline constexpr std::string_view kExportFormat = "streamscope-chrome-export";
inline constexpr int kExportVersion = 1;
// The category of every span and arrow of the export: Chrome DevTools binds a flow event only to an event of its own
// category, and an arrow joins spans of different kinds (a kernel's launch is an api-call). The kind is in args.
inline constexpr std::string_view kCategory = "streamscope";
// Process ids of the export: a device's index, so that they read like PyTorch's; the host and streams of no known
// device get ids no GPU index reaches.
inline constexpr int64_t kHostPid = 1'000'000;
inline constexpr int64_t kNoDevicePid = 1'000'001;

// The process id the export gives a track.
int64_t exportPid(const Track& t);
// A string as a JSON string literal, quotes included (invalid UTF-8 replaced).
std::string quotedJson(std::string_view s);

} // namespace streamscope::chrome
