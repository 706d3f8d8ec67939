// SPDX-FileCopyrightText: StreamScope contributors
#include "time_column.h"

#include <algorithm>

namespace streamscope {

namespace {
auto findException(auto& list, size_t i)
{
    return std::lower_bound(list.begin(), list.end(), uint32_t(i),
                            [](const std::pair<uint32_t, int64_t>& e, uint32_t k) { return e.first < k; });
}
} // namespace

int64_t TimeColumn::exception(size_t i) const
{
    return findException(m_exceptions, i)->second;
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
