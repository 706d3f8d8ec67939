// Tables of enum values and their JSON spellings, shared by the model's toString/fromString functions.
#pragma once

#include <array>
#include <optional>
#include <string_view>
#include <utility>

namespace streamscope::detail {

template <typename E, size_t N>
std::optional<E> lookup(const std::array<std::pair<E, std::string_view>, N>& table, std::string_view s)
{
    for (const auto& [e, name] : table)
        if (name == s)
            return e;
    return std::nullopt;
}

template <typename E, size_t N>
std::string_view nameOf(const std::array<std::pair<E, std::string_view>, N>& table, E e)
{
    for (const auto& [k, name] : table)
        if (k == e)
            return name;
    return "?";
}

} // namespace streamscope::detail
