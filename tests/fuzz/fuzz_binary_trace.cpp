// libFuzzer harness: the binary native trace reader (parseBinaryTrace). Any input must give a value or an error, never
// a crash, a hang, undefined behaviour or unbounded memory (tests/fuzz/CMakeLists.txt runs it under ASan and UBSan).
// Its seeds (seeds/binary) are small lesson traces, compressed and not.
#include "trace_binary.h"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    (void)streamscope::parseBinaryTrace(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.sstrace");
    return 0;
}
