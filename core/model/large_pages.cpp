// SPDX-FileCopyrightText: StreamScope contributors
// The global operator new and delete of StreamScope's programs (linked into the app, the CLI and the benchmarks, not
// into the tests): malloc and free, and for a block of 4 MiB or more, madvise(MADV_HUGEPAGE) over its 2 MiB pages
// before it is first touched, so that the kernel backs a big trace's columns and the analyses' arrays with
// transparent huge pages where it offers them ("madvise", most distributions' default). A 10 M-span trace's
// arrays are hundreds of megabytes, allocated fresh by every stage: with 4 KiB pages the page faults and TLB misses
// cost as much as the work (docs/PERFORMANCE.md, "Huge pages"). glibc's own switch (GLIBC_TUNABLES
// glibc.malloc.hugetlb=1) does the same but only from the environment a program starts in.
// STREAMSCOPE_HUGE_PAGES=0 in the environment turns it off.
#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>

namespace {

constexpr std::size_t kHugePage = std::size_t(2) << 20;
constexpr std::size_t kAdviseFrom = std::size_t(4) << 20;

bool adviseEnabled()
{
    // getenv allocates nothing: safe on the first allocation of the program.
    static const bool enabled = [] {
        const char* v = std::getenv("STREAMSCOPE_HUGE_PAGES");
        return !(v && std::strcmp(v, "0") == 0);
    }();
    return enabled;
}

void* allocate(std::size_t n)
{
    void* p = std::malloc(n ? n : 1);
    if (!p)
        throw std::bad_alloc();
    if (n >= kAdviseFrom && adviseEnabled()) {
        const auto begin = (reinterpret_cast<std::uintptr_t>(p) + kHugePage - 1) & ~(kHugePage - 1);
        const auto end = (reinterpret_cast<std::uintptr_t>(p) + n) & ~(kHugePage - 1);
        if (end > begin)
            madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE); // advice: failure changes nothing
    }
    return p;
}

} // namespace

void* operator new(std::size_t n)
{
    return allocate(n);
}

void* operator new[](std::size_t n)
{
    return allocate(n);
}

void* operator new(std::size_t n, const std::nothrow_t&) noexcept
{
    try {
        return allocate(n);
    } catch (...) {
        return nullptr;
    }
}

void* operator new[](std::size_t n, const std::nothrow_t&) noexcept
{
    try {
        return allocate(n);
    } catch (...) {
        return nullptr;
    }
}

void operator delete(void* p) noexcept
{
    std::free(p);
}

void operator delete[](void* p) noexcept
{
    std::free(p);
}

void operator delete(void* p, std::size_t) noexcept
{
    std::free(p);
}

void operator delete[](void* p, std::size_t) noexcept
{
    std::free(p);
}

void operator delete(void* p, const std::nothrow_t&) noexcept
{
    std::free(p);
}

void operator delete[](void* p, const std::nothrow_t&) noexcept
{
    std::free(p);
}
