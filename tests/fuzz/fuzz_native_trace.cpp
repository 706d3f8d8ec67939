// libFuzzer harness: StreamScope's own trace reader (parseTrace). Any input must give a value or an error, never a
// crash, a hang, undefined behaviour or unbounded memory (tests/fuzz/CMakeLists.txt runs it under ASan and UBSan).
#include "trace_json.h"

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    const std::string text(reinterpret_cast<const char*>(data), size);
    (void)streamscope::parseTrace(text, "fuzz.json");
    return 0;
}
