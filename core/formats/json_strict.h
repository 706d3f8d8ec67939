// JSON documents read strictly (internal to core): nlohmann's parse keeps the last of two equal keys in an object
// and says nothing, so a hostile or hand-merged file could mean one thing to StreamScope and another to the tool
// that wrote it. This parser builds the same document through nlohmann's SAX interface and refuses a repeated key,
// naming it and the JSON pointer of its object. Linear in the text (nlohmann's parser callback is not: it rescans
// the enclosing array after every object it closes).
#pragma once

#include "file_io.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

namespace streamscope {

// Thrown by parseJsonStrict for a key that its object already has.
struct DuplicateJsonKey {
    std::string pointer; // of the object, "" for the root
    std::string key;
};

namespace detail_json {

template <typename BasicJson>
class StrictSax {
public:
    using number_integer_t = typename BasicJson::number_integer_t;
    using number_unsigned_t = typename BasicJson::number_unsigned_t;
    using number_float_t = typename BasicJson::number_float_t;
    using string_t = typename BasicJson::string_t;
    using binary_t = typename BasicJson::binary_t;

    explicit StrictSax(BasicJson& root) : m_dom(root, true) {}

    bool null() { return value() && m_dom.null(); }
    bool boolean(bool v) { return value() && m_dom.boolean(v); }
    bool number_integer(number_integer_t v) { return value() && m_dom.number_integer(v); }
    bool number_unsigned(number_unsigned_t v) { return value() && m_dom.number_unsigned(v); }
    bool number_float(number_float_t v, const string_t& s) { return value() && m_dom.number_float(v, s); }
    bool string(string_t& v) { return value() && m_dom.string(v); }
    bool binary(binary_t& v) { return value() && m_dom.binary(v); }
    bool start_object(std::size_t n)
    {
        value();
        m_levels.push_back({true, {}, 0, {}});
        return m_dom.start_object(n);
    }
    bool key(string_t& k)
    {
        Level& level = m_levels.back();
        if (!level.keys.insert(k).second)
            throw DuplicateJsonKey{pointer(), k};
        level.token = "/" + jsonPointerToken(k);
        return m_dom.key(k);
    }
    bool end_object()
    {
        m_levels.pop_back();
        return m_dom.end_object();
    }
    bool start_array(std::size_t n)
    {
        value();
        m_levels.push_back({false, {}, 0, {}});
        return m_dom.start_array(n);
    }
    bool end_array()
    {
        m_levels.pop_back();
        return m_dom.end_array();
    }
    template <class Exception>
    bool parse_error(std::size_t position, const std::string& token, const Exception& ex)
    {
        return m_dom.parse_error(position, token, ex);
    }

private:
    struct Level {
        bool object = false;
        std::unordered_set<string_t> keys; // an object's keys so far
        std::size_t next = 0;              // an array's next index
        std::string token;                 // the pointer token of the value being read in it
    };

    // A value starts: in an array, it is the next element.
    bool value()
    {
        if (!m_levels.empty() && !m_levels.back().object)
            m_levels.back().token = "/" + std::to_string(m_levels.back().next++);
        return true;
    }

    // The pointer of the innermost open object (the tokens of the levels around it).
    std::string pointer() const
    {
        std::string p;
        for (std::size_t i = 0; i + 1 < m_levels.size(); ++i)
            p += m_levels[i].token;
        return p;
    }

    nlohmann::detail::json_sax_dom_parser<BasicJson> m_dom;
    std::vector<Level> m_levels;
};

} // namespace detail_json

// Parses like BasicJson::parse(text) (throwing its parse_error on malformed text), and throws DuplicateJsonKey for
// an object with two equal keys.
template <typename BasicJson = nlohmann::json>
BasicJson parseJsonStrict(const std::string& text)
{
    BasicJson root;
    detail_json::StrictSax<BasicJson> sax(root);
    BasicJson::sax_parse(text, &sax);
    return root;
}

// The byte offset at which the text first nests deeper than maxDepth containers, if it does (scenarios, profiles and
// native traces check it before parsing). A linear pass over the text instead of nlohmann's parser callback: that
// callback's parser rescans the enclosing array after every object it closes (quadratic: a million ops took
// minutes). Strings are skipped, so brackets in names don't count; on malformed text the parser afterwards reports
// the syntax error.
inline std::optional<size_t> nestingTooDeepAt(const std::string& text, int maxDepth)
{
    int depth = 0;
    bool inString = false;
    for (size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (inString) {
            if (c == '\\')
                ++i;
            else if (c == '"')
                inString = false;
            continue;
        }
        if (c == '"') {
            inString = true;
        } else if (c == '[' || c == '{') {
            if (++depth > maxDepth)
                return i;
        } else if (c == ']' || c == '}') {
            --depth;
        }
    }
    return std::nullopt;
}

} // namespace streamscope
