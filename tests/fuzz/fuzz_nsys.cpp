// libFuzzer harness: the Nsight Systems SQLite reader (loadNsysSqliteFile) on database files. Any input must give a
// trace or an error, never a crash, a hang, undefined behaviour or unbounded memory (tests/fuzz/CMakeLists.txt runs
// it under ASan and UBSan). SQLite reads a path, so each input is written to one temporary file first.
#include "nsys_sqlite.h"

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

std::string databasePath()
{
    const char* dir = std::getenv("TMPDIR");
    return std::string(dir && *dir ? dir : "/tmp") + "/streamscope-fuzz-nsys-" + std::to_string(::getpid()) + ".sqlite";
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    static const std::string path = databasePath();
    FILE* f = std::fopen(path.c_str(), "wb");
    if (!f)
        return 0;
    const bool written = std::fwrite(data, 1, size, f) == size;
    std::fclose(f);
    if (written) {
        streamscope::NsysLimits limits;
        limits.maxQuerySeconds = 2; // a view that does not end costs the run 2 s, not 30
        limits.maxRows = 1'000'000;
        (void)streamscope::loadNsysSqliteFile(path, limits);
    }
    std::remove(path.c_str());
    return 0;
}
