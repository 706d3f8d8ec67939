// Names for what the user adds or copies (streams, host threads, events, chunks): the next free one in the numbering
// the name already has, so that "s1" is followed by "s2" and "main" by "main 2".
#pragma once

#include <set>
#include <string>
#include <utility>

namespace streamscope {

// "h2d 3" -> ("h2d ", 3); no trailing number (or one of more than nine digits): (name, -1).
std::pair<std::string, long long> splitTrailingNumber(const std::string& name);

// A name not in `taken`: "prefix N" continuing the numbering of `like` when it ends in a number, else
// like + separator + "2" (or the next free number).
std::string uniqueName(const std::string& like, const std::set<std::string>& taken, const std::string& separator = " ");

} // namespace streamscope
