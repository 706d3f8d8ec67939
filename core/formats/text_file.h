// Whole text files: read with a size limit, and saved atomically. Every file StreamScope writes is saved this way
// (scenarios, traces and their exports, calibrations), so that a crash or a full disk never leaves half a file.
#pragma once

#include "result.h"

#include <cstddef>
#include <string>

namespace streamscope {

// Writes atomically: to a temporary file beside `path`, then renamed over it.
Status saveTextFileAtomic(const std::string& path, const std::string& text);
Result<std::string> readTextFile(const std::string& path, size_t maxBytes = size_t(4) << 30);

} // namespace streamscope
