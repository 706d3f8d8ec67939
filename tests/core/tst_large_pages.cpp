// SPDX-FileCopyrightText: StreamScope contributors
// The programs' operator new (core/model/large_pages.cpp): a block of 4 MiB or more is advised onto transparent huge
// pages (its mapping's VmFlags in /proc/self/smaps carry "hg"), a smaller one is not, and STREAMSCOPE_HUGE_PAGES=0
// turns the advice off. Run as `tst_large_pages on` and, with STREAMSCOPE_HUGE_PAGES=0, `tst_large_pages off`.
// Exit 77 (skipped) where the kernel has no transparent huge pages.
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace {

// The VmFlags of the mapping that holds `address`, or "" if none is found.
std::string vmFlagsAt(const void* address)
{
    const auto a = reinterpret_cast<std::uintptr_t>(address);
    std::ifstream smaps("/proc/self/smaps");
    std::string line;
    bool inside = false;
    while (std::getline(smaps, line)) {
        unsigned long long from = 0, to = 0;
        if (std::sscanf(line.c_str(), "%llx-%llx ", &from, &to) == 2 && line.find(':') > line.find(' '))
            inside = a >= from && a < to;
        else if (inside && line.rfind("VmFlags:", 0) == 0)
            return line;
    }
    return {};
}

bool advised(const void* address)
{
    std::istringstream flags(vmFlagsAt(address));
    for (std::string flag; flags >> flag;)
        if (flag == "hg")
            return true;
    return false;
}

} // namespace

int main(int argc, char** argv)
{
    const bool expectOn = argc > 1 && std::string(argv[1]) == "on";
    if (!std::ifstream("/sys/kernel/mm/transparent_hugepage/enabled")) {
        std::puts("SKIP: this kernel has no transparent huge pages");
        return 77;
    }
    // A 1 MiB block gets a mapping of its own from malloc (above its 128 KiB threshold) and is left alone.
    auto small = std::make_unique<std::vector<char>>(std::size_t(1) << 20);
    auto big = std::make_unique<std::vector<char>>(std::size_t(64) << 20);
    const char* middle = big->data() + (std::size_t(32) << 20);
    int failures = 0;
    if (advised(middle) != expectOn) {
        std::printf("FAIL: a 64 MiB block %s advised onto huge pages (%s)\n", expectOn ? "is not" : "is",
                    vmFlagsAt(middle).c_str());
        ++failures;
    }
    if (advised(small->data() + (std::size_t(1) << 19))) {
        std::printf("FAIL: a 1 MiB block is advised onto huge pages (%s)\n", vmFlagsAt(small->data()).c_str());
        ++failures;
    }
    if (failures == 0)
        std::printf("PASS: a 64 MiB block %s advised onto huge pages\n", expectOn ? "is" : "is not");
    return failures == 0 ? 0 : 1;
}
