// PyTorch profiler traces (torch.profiler's export_chrome_trace, written by Kineto): GPU kernels, memcpys and
// memsets per device and stream, CUDA runtime/driver calls per host thread, launch arrows from the correlation ids,
// event and sync arrows from the CUDA synchronization records where the trace has them, and the devices'
// properties. Read with the Chrome reader's streaming tokenizer (chrome_trace.h). docs/FORMATS.md has the mapping.
#pragma once

#include "chrome_trace.h"
#include "result.h"
#include "trace.h"

#include <string>
#include <string_view>

namespace streamscope {

// `options`: how the Chrome reader parses (threads, chunks); the result is the same with any.
Result<Trace> parsePyTorchTrace(std::string_view text, const std::string& file,
                                const chrome::ReadOptions& options = {});
Result<Trace> loadPyTorchTraceFile(const std::string& path, const chrome::ReadOptions& options = {});

} // namespace streamscope
