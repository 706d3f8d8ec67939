#include "unique_name.h"

#include <cctype>

namespace streamscope {

std::pair<std::string, long long> splitTrailingNumber(const std::string& name)
{
    size_t i = name.size();
    while (i > 0 && std::isdigit(static_cast<unsigned char>(name[i - 1])))
        --i;
    if (i == name.size() || name.size() - i > 9)
        return {name, -1};
    return {name.substr(0, i), std::stoll(name.substr(i))};
}

std::string uniqueName(const std::string& like, const std::set<std::string>& taken, const std::string& separator)
{
    auto [prefix, number] = splitTrailingNumber(like);
    if (number < 0) {
        prefix = like + separator;
        number = 1;
    }
    for (long long n = number + 1;; ++n) {
        std::string candidate = prefix + std::to_string(n);
        if (!taken.count(candidate))
            return candidate;
    }
}

} // namespace streamscope
