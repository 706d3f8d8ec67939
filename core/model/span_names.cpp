#include "span_names.h"

#include "ranges.h"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>

namespace streamscope {

namespace {

constexpr std::string_view kEllipsis = "\u2026";

bool isMangled(std::string_view s)
{
    return s.size() > 2 && s[0] == '_' && s[1] == 'Z';
}

// Index of the bracket that closes the one at `open`, counting (), <> and [] alike; npos when unbalanced.
size_t closing(std::string_view s, size_t open)
{
    int depth = 0;
    for (size_t i = open; i < s.size(); ++i) {
        const char c = s[i];
        if (c == '(' || c == '<' || c == '[')
            ++depth;
        else if (c == ')' || c == '>' || c == ']') {
            if (--depth == 0)
                return i;
        }
    }
    return std::string_view::npos;
}

// The string with every top-level "<...>" folded to "<…>" and the characters outside brackets kept.
std::string foldTemplates(std::string_view s)
{
    std::string out;
    for (size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '<' && !(i + 1 < s.size() && s[i + 1] == '<')) { // "operator<<" stays
            const size_t close = closing(s, i);
            if (close == std::string_view::npos) {
                out.append(s.substr(i));
                break;
            }
            // One plain type name (cutlass::Kernel2<cutlass_80_simt_sgemm_256x128_8x4_nn_align1>) is what tells the
            // kernel apart: keep it, without its namespaces.
            std::string_view arg = s.substr(i + 1, close - i - 1);
            const bool plain = !arg.empty() && arg.find_first_of(",<( ") == std::string_view::npos;
            if (plain && arg.rfind("::") != std::string_view::npos)
                arg = arg.substr(arg.rfind("::") + 2);
            out += '<';
            out += plain ? std::string(arg) : std::string(kEllipsis);
            out += '>';
            i = close;
            continue;
        }
        out += s[i];
    }
    return out;
}

} // namespace

std::string demangledName(std::string_view name)
{
    if (!isMangled(name))
        return std::string(name);
    const std::string symbol(name);
    int status = 0;
    std::unique_ptr<char, void (*)(void*)> out(abi::__cxa_demangle(symbol.c_str(), nullptr, nullptr, &status),
                                               std::free);
    return status == 0 && out ? std::string(out.get()) : symbol;
}

std::string shortSpanName(std::string_view name, size_t maxChars)
{
    const std::string full = demangledName(name);
    std::string_view s = full;
    // Only names that look like C++ signatures are reshaped; "memcpy h2d", "aten::mm" and lesson op names stay, and
    // so do Python functions as PyTorch names them ("model.py(12): forward", "<built-in method mm ...>").
    const bool signature =
        (s.find('(') != std::string_view::npos || s.find('<') != std::string_view::npos) && !isPythonFunctionName(s);
    std::string shortened;
    if (signature) {
        // Drop the parameter list: the top-level "(" that is not part of a template argument.
        size_t cut = std::string_view::npos;
        for (size_t i = 0; i < s.size(); ++i) {
            if (s[i] == '<' || s[i] == '[') {
                const size_t close = closing(s, i);
                if (close == std::string_view::npos)
                    break;
                i = close;
            } else if (s[i] == '(') {
                // "(anonymous namespace)::f" is part of the name, not its parameters.
                if (s.substr(i).rfind("(anonymous namespace)", 0) == 0) {
                    i += std::string_view("(anonymous namespace)").size() - 1;
                    continue;
                }
                cut = i;
                break;
            }
        }
        std::string_view head = s.substr(0, cut);
        // Drop the return type: what comes before the last top-level space.
        size_t space = std::string_view::npos;
        for (size_t i = 0; i < head.size(); ++i) {
            if (head[i] == '<') {
                const size_t close = closing(head, i);
                if (close == std::string_view::npos)
                    break;
                i = close;
            } else if (head[i] == ' ' && head.substr(i + 1).rfind("namespace)", 0) != 0) {
                space = i;
            }
        }
        if (space != std::string_view::npos)
            head = head.substr(space + 1);
        std::string folded = foldTemplates(head);
        // Drop enclosing namespaces and classes: after the last top-level "::".
        if (const size_t colons = folded.rfind("::"); colons != std::string::npos && colons + 2 < folded.size())
            folded = folded.substr(colons + 2);
        shortened = folded.empty() ? full : folded;
    } else {
        shortened = full;
    }
    // Cut at a character boundary (UTF-8 continuation bytes are 10xxxxxx).
    size_t chars = 0;
    for (size_t i = 0; i < shortened.size(); ++i) {
        if ((static_cast<unsigned char>(shortened[i]) & 0xC0) == 0x80)
            continue;
        if (chars == maxChars)
            return shortened.substr(0, i) + std::string(kEllipsis);
        ++chars;
    }
    return shortened;
}

} // namespace streamscope
