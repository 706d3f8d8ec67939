// The native trace's JSON parse: a SAX handler that builds the document, except that the span and flow columns
// become plain integer arrays (RawColumn). Internal to core (trace_json_reader.cpp).
#pragma once

#include "json_strict.h"
#include "trace.h"
#include "trace_json_format.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace streamscope::trace_json {

inline std::string_view typeName(Json::value_t t)
{
    switch (t) {
    case Json::value_t::null: return "null";
    case Json::value_t::object: return "an object";
    case Json::value_t::array: return "an array";
    case Json::value_t::string: return "a string";
    case Json::value_t::boolean: return "a boolean";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned: return "an integer";
    case Json::value_t::number_float: return "a number with a fraction or exponent";
    default: return "something else";
    }
}

inline std::string typeName(const Json& j)
{
    return std::string(typeName(j.type()));
}

// One column of "spans" or "flows", captured while parsing instead of being built as JSON values: a million
// spans as a JSON DOM take several times the memory and time of the integers themselves.
struct RawColumn {
    bool dims = false;           // grid, block: [x, y, z] per entry
    std::vector<int64_t> values; // integer columns
    std::vector<Dim3> dim3;      // dims columns
    // The first entry that is not what the column holds: its index, a path below it ("/1" inside [x, y, z]).
    bool bad = false;
    size_t badIndex = 0;
    std::string badSuffix;
    std::string badMessage;

    size_t size() const { return dims ? dim3.size() : values.size(); }
    void markBad(size_t index, std::string suffix, std::string message)
    {
        if (bad)
            return;
        bad = true;
        badIndex = index;
        badSuffix = std::move(suffix);
        badMessage = std::move(message);
    }
};

inline constexpr std::string_view kDimMessage = "must be an array of three integers [x, y, z]";

// Builds the JSON document like nlohmann's DOM parser, except that arrays directly under the root's "spans" and
// "flows" objects become RawColumns (an empty array stands in for them in the document).
class TraceSax final : public nlohmann::json_sax<Json> {
public:
    Json root;
    std::map<std::string, RawColumn> columns; // by JSON path: "/spans/start"
    size_t errorByte = 0;
    std::string errorMessage;
    std::string duplicateKey, duplicatePath; // a key an object names twice (nlohmann would keep the last silently)

    bool null() override
    {
        return scalar(Json::value_t::null, [] { return Json(nullptr); });
    }
    bool boolean(bool v) override
    {
        return scalar(Json::value_t::boolean, [v] { return Json(v); });
    }
    bool number_float(number_float_t v, const string_t&) override
    {
        return scalar(Json::value_t::number_float, [v] { return Json(v); });
    }
    bool string(string_t& v) override
    {
        return scalar(Json::value_t::string, [&v] { return Json(std::move(v)); });
    }
    bool binary(binary_t& v) override
    {
        return scalar(Json::value_t::binary, [&v] { return Json(std::move(v)); });
    }

    bool number_integer(number_integer_t v) override
    {
        if (m_column)
            return integer(v, false);
        return place(Json(v)) != nullptr;
    }
    bool number_unsigned(number_unsigned_t v) override
    {
        if (m_column) {
            if (v > uint64_t(std::numeric_limits<int64_t>::max())) {
                const size_t index = m_column->size() - (m_captureDepth == 2 ? 1 : 0);
                m_column->markBad(index, m_captureDepth == 2 ? "/" + std::to_string(m_dimPos) : std::string(),
                                  std::to_string(v) + " is out of range");
                return integer(0, true);
            }
            return integer(int64_t(v), false);
        }
        return place(Json(v)) != nullptr;
    }

    bool start_object(std::size_t) override
    {
        if (m_column) {
            nested(Json::value_t::object);
            return true;
        }
        Json* o = place(Json::object());
        m_stack.push_back(o);
        return true;
    }
    bool key(string_t& k) override
    {
        if (m_column)
            return true;
        if (m_stack.back()->is_object() && m_stack.back()->contains(k)) {
            duplicateKey = k;
            duplicatePath = m_stack.size() == 1 ? std::string()
                : m_stack.size() == 2           ? "/" + jsonPointerToken(m_rootKey)
                                      : "/" + jsonPointerToken(m_rootKey) + "/" + jsonPointerToken(m_tableKey);
            return false;
        }
        if (m_stack.size() == 1)
            m_rootKey = k;
        else if (m_stack.size() == 2)
            m_tableKey = k;
        m_slot = &(*m_stack.back())[k];
        return true;
    }
    bool end_object() override
    {
        if (m_column) {
            --m_skipDepth;
            return true;
        }
        m_stack.pop_back();
        return true;
    }
    bool start_array(std::size_t) override
    {
        if (m_column) {
            if (m_skipDepth > 0) {
                ++m_skipDepth;
            } else if (m_captureDepth == 1 && m_column->dims) {
                m_captureDepth = 2;
                m_dimPos = 0;
                m_column->dim3.push_back({0, 0, 0});
            } else {
                nested(Json::value_t::array);
            }
            return true;
        }
        if (m_stack.size() == 2 && m_stack.back()->is_object() && (m_rootKey == "spans" || m_rootKey == "flows")) {
            const std::string path = "/" + m_rootKey + "/" + jsonPointerToken(m_tableKey);
            m_column = &(columns[path] = RawColumn{});
            m_column->dims = m_rootKey == "spans" && (m_tableKey == "grid" || m_tableKey == "block");
            m_captureDepth = 1;
            place(Json::array());
            return true;
        }
        m_stack.push_back(place(Json::array()));
        return true;
    }
    bool end_array() override
    {
        if (m_column) {
            if (m_skipDepth > 0) {
                --m_skipDepth;
            } else if (m_captureDepth == 2) {
                if (m_dimPos != 3)
                    m_column->markBad(m_column->dim3.size() - 1, {}, std::string(kDimMessage));
                m_captureDepth = 1;
            } else {
                m_column = nullptr;
                m_captureDepth = 0;
            }
            return true;
        }
        m_stack.pop_back();
        return true;
    }
    bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& ex) override
    {
        errorByte = position;
        errorMessage = ex.what();
        return false;
    }

private:
    Json* place(Json value)
    {
        if (m_stack.empty()) {
            root = std::move(value);
            return &root;
        }
        if (m_stack.back()->is_array()) {
            m_stack.back()->push_back(std::move(value));
            return &m_stack.back()->back();
        }
        *m_slot = std::move(value);
        return m_slot;
    }

    template <typename Make>
    bool scalar(Json::value_t type, Make&& make)
    {
        if (!m_column)
            return place(make()) != nullptr;
        if (m_skipDepth > 0)
            return true;
        wrongType(type);
        return true;
    }

    // An integer inside a captured column.
    bool integer(int64_t v, bool alreadyBad)
    {
        if (m_skipDepth > 0)
            return true;
        if (!m_column->dims) {
            m_column->values.push_back(v);
            return true;
        }
        if (m_captureDepth == 1) { // a bare number where [x, y, z] belongs
            m_column->markBad(m_column->dim3.size(), {}, std::string(kDimMessage));
            m_column->dim3.push_back({0, 0, 0});
            return true;
        }
        const size_t index = m_column->dim3.size() - 1;
        if (m_dimPos < 3 && !alreadyBad) {
            if (v < 0 || v > int64_t(std::numeric_limits<uint32_t>::max()))
                m_column->markBad(index, "/" + std::to_string(m_dimPos),
                                  std::to_string(v) + " is out of range (0 to 4294967295)");
            else
                (m_dimPos == 0       ? m_column->dim3.back().x
                     : m_dimPos == 1 ? m_column->dim3.back().y
                                     : m_column->dim3.back().z) = uint32_t(v);
        }
        ++m_dimPos;
        return true;
    }

    // A value of the wrong type at the current position of a captured column.
    void wrongType(Json::value_t type)
    {
        if (!m_column->dims) {
            m_column->markBad(m_column->values.size(), {}, "must be an integer, not " + std::string(typeName(type)));
            m_column->values.push_back(0);
        } else if (m_captureDepth == 1) {
            m_column->markBad(m_column->dim3.size(), {}, std::string(kDimMessage));
            m_column->dim3.push_back({0, 0, 0});
        } else {
            m_column->markBad(m_column->dim3.size() - 1, "/" + std::to_string(m_dimPos),
                              "must be an integer, not " + std::string(typeName(type)));
            ++m_dimPos;
        }
    }

    // An object or array where a column entry (or a component of one) belongs: reported, then skipped.
    void nested(Json::value_t type)
    {
        if (m_skipDepth == 0)
            wrongType(type);
        ++m_skipDepth;
    }

    std::vector<Json*> m_stack;
    Json* m_slot = nullptr;
    std::string m_rootKey, m_tableKey;
    RawColumn* m_column = nullptr;
    int m_captureDepth = 0; // 1: in the column, 2: in one [x, y, z]
    int m_skipDepth = 0;    // inside a wrong object or array in a column
    int m_dimPos = 0;
};

} // namespace streamscope::trace_json
