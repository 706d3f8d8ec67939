// SPDX-FileCopyrightText: StreamScope contributors
// The programs' operator new (core/model/large_pages.cpp): a block of 4 MiB or more is advised onto transparent huge
// pages (its mapping's VmFlags in /proc/self/smaps carry "hg"), a smaller one is not, and STREAMSCOPE_HUGE_PAGES=0
// turns the advice off. Run as `tst_large_pages on` and, with STREAMSCOPE_HUGE_PAGES=0, `tst_large_pages off`.
// A column the Chrome reader fills span by span is kept on 4 KiB pages either way ("nh"): a 2 MiB page is resident
// whole from its first write, so the last one of each column being filled would raise the import's peak.
// Exit 77 (skipped) where the kernel has no transparent huge pages.
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "chrome_trace.h"

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

bool hasFlag(const void* address, const std::string& wanted)
{
    std::istringstream flags(vmFlagsAt(address));
    for (std::string flag; flags >> flag;)
        if (flag == wanted)
            return true;
    return false;
}

bool advised(const void* address)
{
    return hasFlag(address, "hg");
}

// A Chrome trace of n complete events on one thread, as text.
std::string chromeTrace(int n)
{
    std::string text = "{\"traceEvents\":[\n";
    text.reserve(size_t(n) * 64 + 64);
    for (int i = 0; i < n; ++i) {
        text += "{\"name\":\"k\",\"ph\":\"X\",\"ts\":" + std::to_string(2 * i) + ",\"dur\":1,\"pid\":1,\"tid\":1}";
        text += i + 1 < n ? ",\n" : "\n";
    }
    return text + "]}\n";
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
    // 1.2 M spans: the reader reserves its columns for them (4.8 MB for the names' ids), big enough for the advice.
    const auto trace = streamscope::parseChromeTrace(chromeTrace(1'200'000), "generated.json");
    if (!trace.ok() || trace.value().spans.size() != 1'200'000) {
        std::printf("FAIL: the generated Chrome trace was not read whole\n");
        ++failures;
    } else {
        const auto& names = trace.value().spans.name;
        const void* column = names.data() + names.size() / 2;
        if (advised(column) || !hasFlag(column, "nh")) {
            std::printf("FAIL: a column the Chrome reader filled is not on small pages (%s)\n",
                        vmFlagsAt(column).c_str());
            ++failures;
        }
    }
    if (failures == 0)
        std::printf("PASS: a 64 MiB block %s advised onto huge pages, the Chrome reader's columns are not\n",
                    expectOn ? "is" : "is not");
    return failures == 0 ? 0 : 1;
}
