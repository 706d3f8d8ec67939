// SPDX-FileCopyrightText: StreamScope contributors
#include "time_column.h"

#include "populate_pages.h"

#include <algorithm>
#include <atomic>

namespace streamscope {

namespace {
template <typename It>
It findException(It first, It last, size_t i)
{
    return std::lower_bound(first, last, uint32_t(i),
                            [](const std::pair<uint32_t, int64_t>& e, uint32_t k) { return e.first < k; });
}
auto findException(auto& list, size_t i)
{
    return findException(list.begin(), list.end(), i);
}
} // namespace

int64_t TimeColumn::View::exception(size_t i) const
{
    return findException(m_exceptions, m_exceptions + m_exceptionCount, i)->second;
}

void TimeColumn::View::copyTo(size_t first, size_t last, int64_t* out) const
{
    int64_t* const out0 = out;
    for (size_t i = first; i < last;) {
        const size_t block = i >> kBlockBits;
        const size_t blockEnd = std::min(last, (block + 1) << kBlockBits);
        // In unsigned arithmetic: an escaped entry (or an unset second base) may wrap here; it is overwritten below.
        const uint64_t b0 = uint64_t(m_base[2 * block]), b1 = uint64_t(m_base[2 * block + 1]);
        for (; i < blockEnd; ++i) {
            const uint32_t o = m_offset[i];
            *out++ = int64_t(((o >> 31) ? b1 : b0) + (o & kOffsetMask));
        }
    }
    const Exception* const end = m_exceptions + m_exceptionCount;
    for (const Exception* e = findException(m_exceptions, end, first); e != end && e->first < last; ++e)
        out0[e->first - first] = e->second;
}

void TimeColumn::putException(size_t i, int64_t v)
{
    const auto it = findException(m_exceptions, i);
    if (it != m_exceptions.end() && it->first == i)
        it->second = v;
    else
        m_exceptions.insert(it, {uint32_t(i), v});
}

void TimeColumn::eraseException(size_t i)
{
    const auto it = findException(m_exceptions, i);
    if (it != m_exceptions.end() && it->first == i)
        m_exceptions.erase(it);
}

uint64_t TimeColumn::identify()
{
    static std::atomic<uint64_t> next{1};
    if (m_contentId == 0)
        m_contentId = next.fetch_add(1, std::memory_order_relaxed);
    return m_contentId;
}

void TimeColumn::set(size_t i, int64_t v)
{
    m_contentId = 0;
    const bool wasException = m_offset[i] == kEscape;
    m_offset[i] = encode(i, v);
    if (m_offset[i] != kEscape) {
        if (wasException)
            eraseException(i);
        return;
    }
    putException(i, v);
}

void TimeColumn::populatePages(size_t from, size_t to)
{
    streamscope::populatePages(m_offset, from, to);
    streamscope::populatePages(m_base, 2 * (from >> kBlockBits), 2 * ((to + kBlock - 1) >> kBlockBits));
}

void TimeColumn::adviseSmallPages()
{
    streamscope::adviseSmallPages(m_offset);
    streamscope::adviseSmallPages(m_base);
}

void TimeColumn::giveBackRoom()
{
    streamscope::giveBackRoom(m_offset);
    streamscope::giveBackRoom(m_base);
    streamscope::giveBackRoom(m_exceptions);
}

size_t TimeColumn::memoryBytes() const
{
    return heldBytes(m_offset) + heldBytes(m_base) + heldBytes(m_exceptions);
}

void TimeColumn::shift(int64_t d)
{
    // Offsets are relative to their block's bases: moving the bases and the exceptions moves every entry.
    m_contentId = 0;
    for (int64_t& b : m_base)
        if (b != kUnset)
            b = int64_t(uint64_t(b) + uint64_t(d));
    for (auto& e : m_exceptions)
        e.second = int64_t(uint64_t(e.second) + uint64_t(d));
}

} // namespace streamscope

namespace streamscope {

std::optional<TimeColumn::AdoptError> TimeColumn::adopt(std::vector<uint32_t> offsets, std::vector<int64_t> bases,
                                                        std::vector<Exception> exceptions)
{
    clear();
    using Where = AdoptError::Where;
    const size_t n = offsets.size();
    const size_t blocks = (n + kBlock - 1) / kBlock;
    if (bases.size() != 2 * blocks)
        return AdoptError{Where::Base, bases.size(),
                          std::to_string(bases.size()) + " bases for " + std::to_string(n) + " entries; blocks of "
                              + std::to_string(kBlock) + " take two each: " + std::to_string(2 * blocks)};
    for (size_t b = 0; b < blocks; ++b)
        if (bases[2 * b] == kUnset)
            return AdoptError{Where::Base, 2 * b, "the first base of a block is never unset"};
    size_t next = 0; // the exception the next escaped entry must be
    for (size_t i = 0; i < n; ++i) {
        const uint32_t o = offsets[i];
        if (o == kEscape) {
            if (next >= exceptions.size() || exceptions[next].first != i)
                return AdoptError{Where::Entry, i, "an escaped entry without its exception"};
            ++next;
            continue;
        }
        const int64_t base = bases[2 * (i >> kBlockBits) + (o >> 31)];
        if ((o >> 31) && base == kUnset)
            return AdoptError{Where::Entry, i, "an offset from its block's second base, which is unset"};
        if (base > INT64_MAX - int64_t(o & kOffsetMask))
            return AdoptError{Where::Entry, i, "base plus offset overflows 64 bits"};
    }
    if (next != exceptions.size())
        return AdoptError{Where::Exception, next,
                          "exception for entry " + std::to_string(exceptions[next].first)
                              + ", which is not escaped (or the exceptions are not in entry order)"};
    m_offset = std::move(offsets);
    m_base = std::move(bases);
    m_exceptions = std::move(exceptions);
    return std::nullopt;
}

} // namespace streamscope
