// SPDX-FileCopyrightText: StreamScope contributors
// Faulting in a vector's reserved pages ahead of the writes, by one call (MADV_POPULATE_WRITE, Linux 5.14; elsewhere
// nothing happens and the pages fault in one by one as they are written). Where a page fault is dear (a virtual
// machine's trap, docs/PERFORMANCE.md), a column written entry by entry spends less in the kernel this way; the
// pages are the ones the writes would fault in anyway, so the peak memory does not change.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace streamscope {

// The whole pages of v's room for entries [from, to), within its capacity.
template <typename T>
void populatePages(std::vector<T>& v, size_t from, size_t to)
{
#if defined(__linux__) && defined(MADV_POPULATE_WRITE)
    to = std::min(to, v.capacity());
    if (to <= from)
        return;
    constexpr uintptr_t kPage = 4096;
    const auto base = reinterpret_cast<uintptr_t>(v.data());
    const uintptr_t begin = (base + from * sizeof(T) + kPage - 1) & ~(kPage - 1);
    const uintptr_t end = (base + to * sizeof(T)) & ~(kPage - 1);
    if (end > begin)
        ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_POPULATE_WRITE);
#else
    (void)v, (void)from, (void)to;
#endif
}

// Before an append to v: where v reached `mark`, the pages of the next `ahead` entries are faulted in and `mark`
// moves past them.
template <typename T>
void populateAhead(std::vector<T>& v, size_t& mark, size_t ahead)
{
    if (v.size() < mark)
        return;
    mark = v.size() + ahead;
    populatePages(v, v.size(), mark);
}

} // namespace streamscope
