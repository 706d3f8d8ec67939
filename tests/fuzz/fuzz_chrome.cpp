// libFuzzer harness: the Chrome/Perfetto trace reader (parseChromeTrace). Any input must give a value or an error,
// never a crash, a hang, undefined behaviour or unbounded memory (tests/fuzz/CMakeLists.txt runs it under ASan and
// UBSan). Each input is read twice: on one thread, and with a worker parsing chunks of a few dozen bytes ahead of the
// reader (chrome_trace_chunks.h), which must give the very same trace or the very same error; a difference aborts.
#include "chrome_trace.h"
#include "trace_json.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {
std::string outcome(const streamscope::Result<streamscope::Trace>& t)
{
    return t ? streamscope::traceToJson(*t) : "error: " + t.error().toString();
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    const std::string text(reinterpret_cast<const char*>(data), size);
    const auto alone = streamscope::parseChromeTrace(text, "fuzz.json", {1, 0});
    // Chunks of 16 - 79 bytes, so that their seams fall anywhere in an event (the input's last byte picks one).
    const size_t chunk = 16 + (size ? data[size - 1] % 64 : 0);
    const auto threaded = streamscope::parseChromeTrace(text, "fuzz.json", {2, chunk});
    if (outcome(alone) != outcome(threaded)) {
        std::fprintf(stderr, "one thread and chunks of %zu bytes differ:\n%s\n---\n%s\n", chunk, outcome(alone).c_str(),
                     outcome(threaded).c_str());
        std::abort();
    }
    return 0;
}
