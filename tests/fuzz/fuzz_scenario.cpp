// libFuzzer harness: the scenario reader (parseScenario), with and without a variant. Any input must give a value or an
// error, never a crash, a hang, undefined behaviour or unbounded memory (tests/fuzz/CMakeLists.txt runs it under ASan
// and UBSan).
#include "scenario_json.h"

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    const std::string text(reinterpret_cast<const char*>(data), size);
    (void)streamscope::parseScenario(text, "fuzz.json");
    // A variant copies and patches the document before reading it: a second path through the reader.
    (void)streamscope::parseScenario(text, "fuzz.json", "v");
    return 0;
}
