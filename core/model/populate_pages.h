// SPDX-FileCopyrightText: StreamScope contributors
// Faulting in a vector's reserved pages ahead of the writes, by one call (MADV_POPULATE_WRITE, Linux 5.14; elsewhere
// nothing happens and the pages fault in one by one as they are written). Where a page fault is dear (a virtual
// machine's trap, docs/PERFORMANCE.md), a column written entry by entry spends less in the kernel this way; the
// pages are the ones the writes would fault in anyway, so the peak memory does not change.
// And the other way: a vector's room beyond its entries given back to the kernel in place, without the copy into a
// fresh block that shrink_to_fit makes.
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

// Asks the kernel to back v's reserved block with 4 KiB pages (MADV_NOHUGEPAGE) although the programs' operator new
// advises huge pages for big blocks (large_pages.cpp). For a column filled entry by entry while it is read, where the
// reader cannot know where it will end: a 2 MiB page is resident whole from its first write, so each column being
// filled holds up to 2 MiB more than its entries until the reading ends (the Chrome import of a 306 MiB file peaked
// at 1.45 - 1.54x its trace with huge pages, 1.26 - 1.30x without, at the same CPU time: docs/PERFORMANCE.md). Call
// it after reserving, before the pages are first written: pages already backed by a huge page stay so.
template <typename T>
void adviseSmallPages(std::vector<T>& v)
{
#if defined(__linux__) && defined(MADV_NOHUGEPAGE)
    constexpr uintptr_t kPage = 4096;
    const auto base = reinterpret_cast<uintptr_t>(v.data());
    const uintptr_t begin = (base + kPage - 1) & ~(kPage - 1);
    const uintptr_t end = (base + v.capacity() * sizeof(T)) & ~(kPage - 1);
    if (end > begin)
        ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_NOHUGEPAGE); // advice: failure changes nothing
#else
    (void)v;
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

// Room of this many bytes or more beyond a vector's entries is given back in place; below it, by a copy.
constexpr size_t kRoomInPlaceBytes = size_t(256) << 10;

// Gives back a vector's room beyond its entries. Room of kRoomInPlaceBytes or more: its whole pages go back to the
// kernel in place (MADV_DONTNEED: they hold no memory until touched again, then read as zeros); the capacity stays,
// so nothing is copied and no pointer moves. Smaller room, where it is more than an eighth of the entries (or where
// the pages cannot be given back: not Linux): shrink_to_fit, a copy into a block of the entries' size.
template <typename T>
void giveBackRoom(std::vector<T>& v)
{
    const size_t room = (v.capacity() - v.size()) * sizeof(T);
    if (room >= kRoomInPlaceBytes) {
#if defined(__linux__)
        constexpr uintptr_t kPage = 4096;
        const auto base = reinterpret_cast<uintptr_t>(v.data());
        const uintptr_t begin = (base + v.size() * sizeof(T) + kPage - 1) & ~(kPage - 1);
        const uintptr_t end = (base + v.capacity() * sizeof(T)) & ~(kPage - 1);
        if (::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED) == 0)
            return;
#endif
        v.shrink_to_fit();
    } else if (v.capacity() > v.size() + v.size() / 8) {
        v.shrink_to_fit();
    }
}

// The bytes a vector holds after giveBackRoom: its entries, and its room where that is below kRoomInPlaceBytes
// (larger room was given back).
template <typename T>
size_t heldBytes(const std::vector<T>& v)
{
    const size_t room = (v.capacity() - v.size()) * sizeof(T);
    if (room < kRoomInPlaceBytes)
        return v.capacity() * sizeof(T);
    constexpr size_t kPage = 4096;
    return (v.size() * sizeof(T) + kPage - 1) / kPage * kPage;
}

} // namespace streamscope
