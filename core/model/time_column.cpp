// SPDX-FileCopyrightText: StreamScope contributors
#include "time_column.h"

#include <algorithm>

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

void TimeColumn::set(size_t i, int64_t v)
{
    const bool wasException = m_offset[i] == kEscape;
    m_offset[i] = encode(i, v);
    if (m_offset[i] != kEscape) {
        if (wasException)
            eraseException(i);
        return;
    }
    putException(i, v);
}

void TimeColumn::shift(int64_t d)
{
    // Offsets are relative to their block's bases: moving the bases and the exceptions moves every entry.
    for (int64_t& b : m_base)
        if (b != kUnset)
            b = int64_t(uint64_t(b) + uint64_t(d));
    for (auto& e : m_exceptions)
        e.second = int64_t(uint64_t(e.second) + uint64_t(d));
}

} // namespace streamscope
