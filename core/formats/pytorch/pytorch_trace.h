// PyTorch profiler traces (torch.profiler's export_chrome_trace, written by Kineto): GPU kernels, memcpys and
// memsets per device and stream, CUDA runtime/driver calls per host thread, launch arrows from the correlation ids,
// event and sync arrows from the CUDA synchronization records where the trace has them, and the devices'
// properties. Read with the Chrome reader's streaming tokenizer (chrome_trace.h). docs/FORMATS.md has the mapping.
#pragma once

#include "result.h"
#include "trace.h"

#include <string>
#include <string_view>

namespace streamscope {

Result<Trace> parsePyTorchTrace(std::string_view text, const std::string& file);
Result<Trace> loadPyTorchTraceFile(const std::string& path);

} // namespace streamscope
