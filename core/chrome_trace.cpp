#include "chrome_trace.h"
#include "chrome_trace_format.h"

#include "file_io.h"
#include "import_limits.h"

#include "trace_json.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <limits>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <system_error>
#include <unordered_map>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace streamscope {

namespace {

using Json = nlohmann::ordered_json;
using chrome::FlowEnd;
using chrome::kNoSpan;

// Nesting deeper than this is refused (values are skipped by recursion).
constexpr int kMaxDepth = 256;

using chrome::exportPid;
using chrome::kExportFormat;
using chrome::kExportVersion;
using chrome::quotedJson;

// ---------------------------------------------------------------------------------------------------------------
// Reading: a hand-written JSON tokenizer over a buffer that is refilled from the file. Events are parsed one at a
// time into fields; a value cut by the end of the buffer throws NeedMore, and the event is parsed again from its
// start once more bytes are in (once per buffer, so the cost is nil).

struct NeedMore {};
struct Fail {
    uint64_t offset;
    std::string message;
};

class Input {
public:
    explicit Input(std::string_view text) : m_begin(text.data()), m_end(text.data() + text.size()), m_eof(true) {}
    explicit Input(int fd) : m_fd(fd), m_eof(false)
    {
        m_storage.resize(size_t(4) << 20);
        m_begin = m_end = m_storage.data();
    }

    const char* begin() const { return m_begin; }
    const char* end() const { return m_end; }
    bool eof() const { return m_eof; }
    uint64_t offset(const char* p) const { return m_base + uint64_t(p - m_begin); }
    uint64_t total() const { return m_base + uint64_t(m_end - m_begin); }

    // Keeps [keep, end), reads more after it; `keep` points to the same byte afterwards. Returns the error text of
    // a failed read, or an empty string.
    std::string refill(const char*& keep)
    {
        if (m_eof)
            return {};
        const size_t kept = size_t(m_end - keep);
        m_base += uint64_t(keep - m_begin);
        if (kept * 2 > m_storage.size()) {
            std::vector<char> bigger(m_storage.size() * 2);
            std::memcpy(bigger.data(), keep, kept);
            m_storage.swap(bigger);
        } else if (kept) {
            std::memmove(m_storage.data(), keep, kept);
        }
        const ssize_t r = readFully(m_fd, m_storage.data() + kept, m_storage.size() - kept);
        if (r < 0)
            return errnoText(errno);
        const size_t filled = kept + size_t(r);
        m_eof = filled < m_storage.size();
        m_begin = m_storage.data();
        m_end = m_begin + filled;
        keep = m_begin;
        return {};
    }

private:
    int m_fd = -1;
    std::vector<char> m_storage;
    const char* m_begin = nullptr;
    const char* m_end = nullptr;
    uint64_t m_base = 0;
    bool m_eof = true;
};

// A number as written; converted on demand.
struct NumberText {
    const char* begin = nullptr;
    const char* end = nullptr;
    bool plainInteger = true; // no fraction, no exponent
};

struct Id {
    int64_t number = 0;
    std::string_view text; // non-empty: the value was a string
    bool present = false;
};

// The fields of one event that matter here. Views point into the input buffer or the scratch strings.
struct Event {
    char ph = 0;
    bool hasTs = false, hasDur = false;
    int64_t ts = 0, dur = 0;
    Id pid, tid;
    std::string_view name, cat, bp;
    std::string_view flowEnd; // args.end of a flow event of our export: "from" or "to", the end of the arrow
    bool hasId = false;
    uint64_t id = 0;
    bool hasBindId = false;
    uint64_t bindId = 0;
    bool flowIn = false, flowOut = false;
    // args
    std::string_view argName, argKind, labels, syncKind;
    bool hasSortIndex = false;
    int64_t sortIndex = 0;
    int64_t device = -1;
    Id stream;
    bool hasGrid = false, hasBlock = false;
    Dim3 grid{0, 0, 0}, block{0, 0, 0};
    int64_t bytes = 0;
    int64_t thread = -1, op = -1, iteration = -1;
    bool hasCorrelation = false;
    int64_t correlation = -1;
    bool hasExternalId = false;
    int64_t externalId = -1; // Kineto's "External id": the CPU op a runtime call was made in
    int64_t spanHint = -1;
    std::string_view wait;   // our own exports: what held the GPU op ("sms", ...), and the span that held it
    int64_t waitFor = -1;
    int64_t waitOnStream = -1, recordCorrelation = -1;
};

uint64_t hashText(std::string_view s) { return std::hash<std::string_view>{}(s); }

// Equality with a literal, compared inline (a memcmp of known length), not by a call per key.
template <size_t N>
bool is(std::string_view s, const char (&literal)[N])
{
    return s.size() == N - 1 && std::memcmp(s.data(), literal, N - 1) == 0;
}

struct StringHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
};

struct ThreadKey {
    int64_t pid, tid;
    uint32_t pidText, tidText; // indices + 1 into the key texts when the id was a string, else 0
    bool operator==(const ThreadKey&) const = default;
};
struct ThreadKeyHash {
    size_t operator()(const ThreadKey& k) const noexcept
    {
        uint64_t h = uint64_t(k.pid) * 0x9e3779b97f4a7c15ull;
        h ^= uint64_t(k.tid) + 0x7f4a7c159e3779b9ull + (h << 6) + (h >> 2);
        h ^= (uint64_t(k.pidText) << 32) ^ k.tidText;
        return size_t(h);
    }
};

struct FlowKey {
    uint64_t id, cat, name;
    bool operator==(const FlowKey&) const = default;
};
struct FlowKeyHash {
    size_t operator()(const FlowKey& k) const noexcept
    {
        return size_t(k.id * 0x9e3779b97f4a7c15ull ^ (k.cat + 0x632be59bd9b4e019ull) ^ (k.name << 1));
    }
};

// A bound or unbound end of a v1 flow, waiting for its other end.
struct OpenFlow {
    FlowEnd end;
    uint32_t span = kNoSpan; // known exactly (our own exports)
    int kind = -1;
    bool launchOnly = false;
    bool target = false; // an "s" at the arrow's target (our exports start a flow at its earlier end)
};

class Reader {
public:
    Reader(Input& in, chrome::Dialect dialect) : m_in(in), m_dialect(dialect)
    {
        m_p = in.begin();
        m_end = in.end();
    }

    chrome::RawTrace run()
    {
        enum class State { Start, Key, AfterValue, FirstEvent, NextEvent, AfterRoot, Done };
        State state = State::Start;
        bool bareArray = false;
        for (;;) {
            const char* mark = m_p;
            try {
                switch (state) {
                case State::Start: {
                    if (m_end - m_p < 3 && !m_in.eof())
                        throw NeedMore{};
                    if (m_end - m_p >= 3 && static_cast<unsigned char>(m_p[0]) == 0xef
                        && static_cast<unsigned char>(m_p[1]) == 0xbb && static_cast<unsigned char>(m_p[2]) == 0xbf)
                        m_p += 3; // a UTF-8 byte order mark
                    skipWs();
                    if (*m_p == '[') {
                        ++m_p;
                        bareArray = true;
                        state = State::FirstEvent;
                    } else if (*m_p == '{') {
                        ++m_p;
                        skipWs();
                        if (*m_p == '}') {
                            ++m_p;
                            state = State::AfterRoot;
                        } else {
                            state = State::Key;
                        }
                    } else {
                        fail(m_p, "not a Chrome trace: expected a JSON object {\"traceEvents\": [...]} or an array "
                                  "of events");
                    }
                    break;
                }
                case State::Key: {
                    skipWs();
                    if (*m_p != '"')
                        fail(m_p, "not valid JSON: expected a key (a string in double quotes)");
                    const std::string key(string());
                    skipWs();
                    expect(':', "after an object key");
                    skipWs();
                    if (is(key, "traceEvents")) {
                        if (*m_p != '[')
                            fail(m_p, "\"traceEvents\" must be an array");
                        ++m_p;
                        m_sawEvents = true;
                        state = State::FirstEvent;
                    } else {
                        topLevelValue(key);
                        state = State::AfterValue;
                    }
                    break;
                }
                case State::AfterValue: {
                    skipWs();
                    if (*m_p == ',') {
                        ++m_p;
                        state = State::Key;
                    } else if (*m_p == '}') {
                        ++m_p;
                        state = State::AfterRoot;
                    } else {
                        fail(m_p, "not valid JSON: expected ',' or '}' after a value");
                    }
                    break;
                }
                case State::FirstEvent:
                case State::NextEvent: {
                    if (bareArray && atEnd()) { // the format allows the closing ']' to be missing
                        state = State::Done;
                        break;
                    }
                    skipWs();
                    if (*m_p == ']') {
                        ++m_p;
                        state = bareArray ? State::AfterRoot : State::AfterValue;
                        break;
                    }
                    if (state == State::NextEvent) {
                        expect(',', "between events");
                        if (bareArray && atEnd()) {
                            state = State::Done;
                            break;
                        }
                        skipWs();
                        if (*m_p == ']') { // a trailing comma, as streaming writers leave it
                            ++m_p;
                            state = bareArray ? State::AfterRoot : State::AfterValue;
                            break;
                        }
                    }
                    event();
                    state = State::NextEvent;
                    break;
                }
                case State::AfterRoot: {
                    if (atEnd()) {
                        state = State::Done;
                        break;
                    }
                    skipWs();
                    fail(m_p, "not valid JSON: unexpected text after the end of the trace");
                }
                case State::Done: break;
                }
            } catch (const NeedMore&) {
                m_p = mark;
                const std::string err = m_in.refill(m_p);
                if (!err.empty())
                    throw Fail{m_in.offset(m_p), "cannot read: " + err};
                m_end = m_in.end();
                continue;
            }
            if (state == State::Done)
                break;
        }
        if (!bareArray && !m_sawEvents)
            throw Fail{0, "not a Chrome trace: the JSON object has no \"traceEvents\" array"};
        closeOpenSpans();
        m_raw.bytes = m_in.total();
        return std::move(m_raw);
    }

private:
    // ---- tokens
    [[noreturn]] void fail(const char* at, std::string message) { throw Fail{m_in.offset(at), std::move(message)}; }

    [[noreturn]] void more()
    {
        if (!m_in.eof())
            throw NeedMore{};
        fail(m_end, "unexpected end of file: the trace is cut off (truncated?)");
    }

    // True when nothing but white space is left.
    bool atEnd()
    {
        for (;;) {
            while (m_p != m_end && (*m_p == ' ' || *m_p == '\n' || *m_p == '\r' || *m_p == '\t'))
                ++m_p;
            if (m_p != m_end)
                return false;
            if (m_in.eof())
                return true;
            throw NeedMore{};
        }
    }

    void skipWs()
    {
        for (;;) {
            if (m_p == m_end)
                more();
            const char c = *m_p;
            if (c == ' ' || c == '\n' || c == '\r' || c == '\t')
                ++m_p;
            else
                return;
        }
    }

    void expect(char c, const char* where)
    {
        if (m_p == m_end)
            more();
        if (*m_p != c)
            fail(m_p, std::string("not valid JSON: expected '") + c + "' " + where);
        ++m_p;
    }

    static void appendUtf8(std::string& out, uint32_t cp)
    {
        if (cp < 0x80) {
            out += char(cp);
        } else if (cp < 0x800) {
            out += char(0xc0 | (cp >> 6));
            out += char(0x80 | (cp & 0x3f));
        } else if (cp < 0x10000) {
            out += char(0xe0 | (cp >> 12));
            out += char(0x80 | ((cp >> 6) & 0x3f));
            out += char(0x80 | (cp & 0x3f));
        } else {
            out += char(0xf0 | (cp >> 18));
            out += char(0x80 | ((cp >> 12) & 0x3f));
            out += char(0x80 | ((cp >> 6) & 0x3f));
            out += char(0x80 | (cp & 0x3f));
        }
    }

    uint32_t hex4()
    {
        uint32_t v = 0;
        for (int k = 0; k < 4; ++k) {
            if (m_p == m_end)
                more();
            const char c = *m_p;
            v <<= 4;
            if (c >= '0' && c <= '9')
                v |= uint32_t(c - '0');
            else if (c >= 'a' && c <= 'f')
                v |= uint32_t(c - 'a' + 10);
            else if (c >= 'A' && c <= 'F')
                v |= uint32_t(c - 'A' + 10);
            else
                fail(m_p, "not valid JSON: \\u must be followed by four hexadecimal digits");
            ++m_p;
        }
        return v;
    }

    // A string at m_p (which is '"'). The view is valid until the next event is parsed.
    std::string_view string()
    {
        const char* s = ++m_p;
        for (;;) {
            if (m_p == m_end)
                more();
            const auto c = static_cast<unsigned char>(*m_p);
            if (c == '"') {
                const std::string_view v(s, size_t(m_p - s));
                ++m_p;
                return v;
            }
            if (c == '\\')
                break;
            if (c < 0x20)
                fail(m_p, "not valid JSON: a control character inside a string");
            ++m_p;
        }
        // Escapes: the unescaped text goes into a scratch string.
        if (m_scratchUsed == m_scratch.size())
            m_scratch.emplace_back();
        std::string& out = m_scratch[m_scratchUsed++];
        out.assign(s, m_p);
        for (;;) {
            if (m_p == m_end)
                more();
            const char c = *m_p;
            if (c == '"') {
                ++m_p;
                return out;
            }
            if (static_cast<unsigned char>(c) < 0x20)
                fail(m_p, "not valid JSON: a control character inside a string");
            if (c != '\\') {
                out += c;
                ++m_p;
                continue;
            }
            ++m_p;
            if (m_p == m_end)
                more();
            const char e = *m_p++;
            switch (e) {
            case '"': out += '"'; break;
            case '\\': out += '\\'; break;
            case '/': out += '/'; break;
            case 'b': out += '\b'; break;
            case 'f': out += '\f'; break;
            case 'n': out += '\n'; break;
            case 'r': out += '\r'; break;
            case 't': out += '\t'; break;
            case 'u': {
                uint32_t cp = hex4();
                if (cp >= 0xd800 && cp <= 0xdbff) {
                    // A surrogate pair; a lone half becomes U+FFFD.
                    if (m_end - m_p < 2)
                        more();
                    if (m_p[0] == '\\' && m_p[1] == 'u') {
                        m_p += 2;
                        const uint32_t lo = hex4();
                        cp = lo >= 0xdc00 && lo <= 0xdfff ? 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00) : 0xfffd;
                    } else {
                        cp = 0xfffd;
                    }
                } else if (cp >= 0xdc00 && cp <= 0xdfff) {
                    cp = 0xfffd;
                }
                appendUtf8(out, cp);
                break;
            }
            default: fail(m_p - 1, "not valid JSON: unknown escape sequence in a string");
            }
        }
    }

    void skipString()
    {
        ++m_p;
        for (;;) {
            if (m_p == m_end)
                more();
            const auto c = static_cast<unsigned char>(*m_p);
            if (c == '"') {
                ++m_p;
                return;
            }
            if (c == '\\') {
                ++m_p;
                if (m_p == m_end)
                    more();
            } else if (c < 0x20) {
                fail(m_p, "not valid JSON: a control character inside a string");
            }
            ++m_p;
        }
    }

    bool isDigit(char c) { return c >= '0' && c <= '9'; }

    // Past a run of digits (refilling the buffer as needed).
    void skipDigits()
    {
        while (true) {
            if (m_p == m_end)
                more();
            if (!isDigit(*m_p))
                break;
            ++m_p;
        }
    }

    NumberText number()
    {
        NumberText n;
        n.begin = m_p;
        if (*m_p == '-') {
            ++m_p;
            if (m_p == m_end)
                more();
        }
        if (!isDigit(*m_p))
            fail(m_p, "not valid JSON: a number must have digits");
        skipDigits();
        if (*m_p == '.') {
            n.plainInteger = false;
            ++m_p;
            if (m_p == m_end)
                more();
            if (!isDigit(*m_p))
                fail(m_p, "not valid JSON: a digit must follow the decimal point");
            skipDigits();
        }
        if (*m_p == 'e' || *m_p == 'E') {
            n.plainInteger = false;
            ++m_p;
            if (m_p == m_end)
                more();
            if (*m_p == '+' || *m_p == '-') {
                ++m_p;
                if (m_p == m_end)
                    more();
            }
            if (!isDigit(*m_p))
                fail(m_p, "not valid JSON: an exponent must have digits");
            skipDigits();
        }
        n.end = m_p;
        return n;
    }

    double toDouble(const NumberText& n)
    {
        std::string s(n.begin, n.end);
        return std::strtod(s.c_str(), nullptr);
    }

    int64_t doubleToInt(double d, const char* at, const char* what)
    {
        if (!std::isfinite(d) || d >= 9.2e18 || d <= -9.2e18)
            fail(at, std::string(what) + " is out of range");
        return std::llround(d);
    }

    int64_t toInt(const NumberText& n, const char* what)
    {
        if (n.plainInteger) {
            int64_t v = 0;
            const auto r = std::from_chars(n.begin, n.end, v);
            if (r.ec != std::errc() || r.ptr != n.end)
                fail(n.begin, std::string(what) + " is out of range");
            return v;
        }
        return doubleToInt(toDouble(n), n.begin, what);
    }

    // Microseconds as written -> nanoseconds, exactly for decimals (the format's times are µs with fractions).
    int64_t microsToNs(const NumberText& n, const char* what)
    {
        const char* p = n.begin;
        const bool neg = *p == '-';
        if (neg)
            ++p;
        const char* dot = p;
        while (dot != n.end && isDigit(*dot))
            ++dot;
        if (dot != n.end && *dot != '.') // an exponent
            return doubleToInt(toDouble(n) * 1000.0, n.begin, what);
        uint64_t whole = 0;
        constexpr uint64_t kMaxWhole = (uint64_t(std::numeric_limits<int64_t>::max()) - 1000) / 1000;
        for (const char* q = p; q != dot; ++q) {
            whole = whole * 10 + uint64_t(*q - '0');
            if (whole > kMaxWhole)
                fail(n.begin, std::string(what) + " is out of range");
        }
        uint64_t frac = 0;
        int digits = 0;
        bool roundUp = false;
        if (dot != n.end) {
            for (const char* q = dot + 1; q != n.end; ++q) {
                if (digits < 3) {
                    frac = frac * 10 + uint64_t(*q - '0');
                    ++digits;
                } else {
                    roundUp = *q >= '5';
                    break;
                }
            }
        }
        for (; digits < 3; ++digits)
            frac *= 10;
        const auto v = int64_t(whole * 1000 + frac + (roundUp ? 1 : 0));
        return neg ? -v : v;
    }

    void literal(std::string_view word)
    {
        for (char c : word) {
            if (m_p == m_end)
                more();
            if (*m_p != c)
                fail(m_p, "not valid JSON: unexpected character");
            ++m_p;
        }
    }

    // The members of an object whose '{' was just read: onMember(key) reads each value (it starts after the ':').
    template <typename OnMember>
    void members(OnMember&& onMember, const char* where)
    {
        skipWs();
        if (*m_p == '}') {
            ++m_p;
            return;
        }
        for (;;) {
            skipWs();
            if (*m_p != '"')
                fail(m_p, "not valid JSON: expected a key (a string in double quotes)");
            const std::string_view key = string();
            skipWs();
            expect(':', "after an object key");
            onMember(key);
            skipWs();
            if (*m_p == ',') {
                ++m_p;
                continue;
            }
            expect('}', where);
            return;
        }
    }

    // The elements of an array whose '[' was just read: onElement() reads each one.
    template <typename OnElement>
    void elements(OnElement&& onElement)
    {
        skipWs();
        if (*m_p == ']') {
            ++m_p;
            return;
        }
        for (;;) {
            onElement();
            skipWs();
            if (*m_p == ',') {
                ++m_p;
                continue;
            }
            expect(']', "or ',' in an array");
            return;
        }
    }

    void skipValue(int depth = 0)
    {
        if (depth > kMaxDepth)
            fail(m_p, "JSON nested deeper than " + std::to_string(kMaxDepth) + " levels");
        skipWs();
        const char c = *m_p;
        if (c == '"') {
            skipString();
        } else if (c == '{') {
            ++m_p;
            skipWs();
            if (*m_p == '}') {
                ++m_p;
                return;
            }
            for (;;) {
                skipWs();
                if (*m_p != '"')
                    fail(m_p, "not valid JSON: expected a key (a string in double quotes)");
                skipString();
                skipWs();
                expect(':', "after an object key");
                skipValue(depth + 1);
                skipWs();
                if (*m_p == ',') {
                    ++m_p;
                    continue;
                }
                expect('}', "or ',' in an object");
                return;
            }
        } else if (c == '[') {
            ++m_p;
            elements([this, depth] { skipValue(depth + 1); });
        } else if (c == '-' || isDigit(c)) {
            number();
        } else if (c == 't') {
            literal("true");
        } else if (c == 'f') {
            literal("false");
        } else if (c == 'n') {
            literal("null");
        } else {
            fail(m_p, "not valid JSON: unexpected character");
        }
    }

    // ---- typed values of an event

    int64_t intValue(const char* what)
    {
        skipWs();
        const char c = *m_p;
        if (c == '-' || isDigit(c))
            return toInt(number(), what);
        if (c == '"') { // "123": some writers quote numbers
            const char* at = m_p;
            const std::string_view s = string();
            int64_t v = 0;
            const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
            if (r.ec != std::errc() || r.ptr != s.data() + s.size())
                fail(at, std::string(what) + " must be a number, not the string " + quotedJson(s));
            return v;
        }
        fail(m_p, std::string(what) + " must be a number");
    }

    int64_t timeValue(const char* what)
    {
        skipWs();
        const char c = *m_p;
        if (c == '-' || isDigit(c))
            return microsToNs(number(), what);
        if (c == '"') {
            const char* at = m_p;
            const std::string s(string());
            char* endp = nullptr;
            const double d = std::strtod(s.c_str(), &endp);
            if (s.empty() || endp != s.c_str() + s.size())
                fail(at, std::string(what) + " must be a number, not the string " + quotedJson(s));
            return doubleToInt(d * 1000.0, at, what);
        }
        fail(m_p, std::string(what) + " must be a number");
    }

    // A string, or null / a number / a boolean read as absent.
    std::string_view stringValue()
    {
        skipWs();
        if (*m_p == '"')
            return string();
        skipValue();
        return {};
    }

    Id idValue()
    {
        skipWs();
        Id id;
        const char c = *m_p;
        if (c == '"') {
            id.text = string();
            id.present = true;
            if (id.text.empty())
                id.text = std::string_view("\"\"", 2); // keeps an empty string apart from a number
        } else if (c == '-' || isDigit(c)) {
            // A number that fits no int64 (2^64, 1e300) is an error, never folded into another id.
            id.number = toInt(number(), "a numeric id (from -2^63 to 2^63-1)");
            id.present = true;
        } else {
            skipValue();
        }
        return id;
    }

    uint64_t flowId(const Id& id)
    {
        if (id.text.empty())
            return uint64_t(id.number);
        const std::string_view s = id.text;
        uint64_t v = 0;
        if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
            const auto r = std::from_chars(s.data() + 2, s.data() + s.size(), v, 16);
            if (r.ec == std::errc() && r.ptr == s.data() + s.size())
                return v;
        } else {
            const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
            if (r.ec == std::errc() && r.ptr == s.data() + s.size())
                return v;
        }
        return hashText(s) | (uint64_t(1) << 63);
    }

    bool boolValue()
    {
        skipWs();
        if (*m_p == 't') {
            literal("true");
            return true;
        }
        if (*m_p == 'f') {
            literal("false");
            return false;
        }
        skipValue();
        return false;
    }

    // [x, y, z] (fewer components default to 1, as CUDA's dim3 does).
    bool dim3Value(Dim3& d, const char* what)
    {
        skipWs();
        if (*m_p != '[') {
            skipValue();
            return false;
        }
        ++m_p;
        uint32_t v[3] = {1, 1, 1};
        int count = 0;
        elements([&] {
            skipWs();
            const char* at = m_p;
            const int64_t x = intValue(what);
            if (x < 0 || x > int64_t(std::numeric_limits<uint32_t>::max()))
                fail(at, std::string(what) + " is out of range (0 to 4294967295)");
            if (count < 3)
                v[count] = uint32_t(x);
            ++count;
        });
        d = Dim3{v[0], v[1], v[2]};
        return true;
    }

    void args(Event& ev)
    {
        skipWs();
        if (*m_p != '{') {
            skipValue();
            return;
        }
        ++m_p;
        members(
            [&](std::string_view key) {
                // By length first: most keys of most files are none of these, and are told apart without a compare.
                switch (key.size()) {
                case 2:
                    if (is(key, "op"))
                        ev.op = intValue("args.op");
                    else
                        skipValue(1);
                    break;
                case 3:
                    if (is(key, "end"))
                        ev.flowEnd = stringValue();
                    else
                        skipValue(1);
                    break;
                case 4:
                    if (is(key, "name"))
                        ev.argName = stringValue();
                    else if (is(key, "kind"))
                        ev.argKind = stringValue();
                    else if (is(key, "grid"))
                        ev.hasGrid = dim3Value(ev.grid, "args.grid");
                    else if (is(key, "span"))
                        ev.spanHint = intValue("args.span");
                    else if (is(key, "wait"))
                        ev.wait = stringValue();
                    else
                        skipValue(1);
                    break;
                case 5:
                    if (is(key, "bytes"))
                        ev.bytes = intValue("args.bytes");
                    else if (is(key, "block"))
                        ev.hasBlock = dim3Value(ev.block, "args.block");
                    else
                        skipValue(1);
                    break;
                case 6:
                    if (is(key, "device")) {
                        const char* at = m_p;
                        ev.device = intValue("args.device");
                        // -1: no device (as some writers mark host work); else an index that fits an int.
                        if (ev.device != -1)
                            if (const std::string problem = deviceIndexProblem(ev.device); !problem.empty())
                                fail(at, "args.device: " + problem);
                    }
                    else if (is(key, "stream"))
                        ev.stream = idValue();
                    else if (is(key, "thread"))
                        ev.thread = intValue("args.thread");
                    else if (is(key, "labels"))
                        ev.labels = stringValue();
                    else
                        skipValue(1);
                    break;
                case 8:
                    if (is(key, "wait_for"))
                        ev.waitFor = intValue("args.wait_for");
                    else
                        skipValue(1);
                    break;
                case 9:
                    if (is(key, "iteration"))
                        ev.iteration = intValue("args.iteration");
                    else
                        skipValue(1);
                    break;
                case 10:
                    if (is(key, "sort_index"))
                        ev.sortIndex = intValue("args.sort_index"), ev.hasSortIndex = true;
                    else
                        skipValue(1);
                    break;
                case 11:
                    if (is(key, "correlation"))
                        ev.correlation = intValue("args.correlation"), ev.hasCorrelation = true;
                    else if (is(key, "External id"))
                        ev.externalId = intValue("args.External id"), ev.hasExternalId = true;
                    else
                        skipValue(1);
                    break;
                case 14:
                    if (is(key, "cuda_sync_kind"))
                        ev.syncKind = stringValue();
                    else if (is(key, "wait_on_stream"))
                        ev.waitOnStream = intValue("args.wait_on_stream");
                    else
                        skipValue(1);
                    break;
                case 33:
                    if (is(key, "wait_on_cuda_event_record_corr_id"))
                        ev.recordCorrelation = intValue("args.wait_on_cuda_event_record_corr_id");
                    else
                        skipValue(1);
                    break;
                default: skipValue(1);
                }
            },
            "or ',' in an object");
    }

    // ---- events

    void event()
    {
        skipWs();
        const char* start = m_p;
        if (*m_p != '{') {
            if (*m_p == '"' || *m_p == '[' || *m_p == '-' || isDigit(*m_p) || *m_p == 't' || *m_p == 'f'
                || *m_p == 'n')
                fail(m_p, "an event must be a JSON object");
            fail(m_p, "not valid JSON: unexpected character");
        }
        ++m_p;
        m_scratchUsed = 0;
        Event ev;
        members(
            [&](std::string_view key) {
                skipWs();
                switch (key.size()) {
                case 2:
                    if (is(key, "ph")) {
                        const std::string_view ph = stringValue();
                        ev.ph = ph.size() == 1 ? ph[0] : '?';
                    } else if (is(key, "ts")) {
                        ev.ts = timeValue("\"ts\"");
                        ev.hasTs = true;
                    } else if (is(key, "id")) {
                        const Id id = idValue();
                        ev.hasId = id.present;
                        ev.id = flowId(id);
                    } else if (is(key, "bp")) {
                        ev.bp = stringValue();
                    } else {
                        skipValue(1);
                    }
                    break;
                case 3:
                    if (is(key, "dur")) {
                        ev.dur = timeValue("\"dur\"");
                        ev.hasDur = true;
                    } else if (is(key, "pid")) {
                        ev.pid = idValue();
                    } else if (is(key, "tid")) {
                        ev.tid = idValue();
                    } else if (is(key, "cat")) {
                        ev.cat = stringValue();
                    } else {
                        skipValue(1);
                    }
                    break;
                case 4:
                    if (is(key, "name"))
                        ev.name = stringValue();
                    else if (is(key, "args"))
                        args(ev);
                    else
                        skipValue(1);
                    break;
                case 7:
                    if (is(key, "bind_id")) {
                        const Id id = idValue();
                        ev.hasBindId = id.present;
                        ev.bindId = flowId(id);
                    } else if (is(key, "flow_in")) {
                        ev.flowIn = boolValue();
                    } else {
                        skipValue(1);
                    }
                    break;
                case 8:
                    if (is(key, "flow_out"))
                        ev.flowOut = boolValue();
                    else
                        skipValue(1);
                    break;
                default: skipValue(1);
                }
            },
            "or ',' in an event");
        handle(ev, start);
    }

    uint32_t keyText(std::string_view s)
    {
        if (s.empty())
            return 0;
        auto it = m_keyTexts.find(s);
        if (it != m_keyTexts.end())
            return it->second;
        const auto id = uint32_t(m_keyTextList.size() + 1);
        m_keyTextList.emplace_back(s);
        m_keyTexts.emplace(std::string(s), id);
        return id;
    }

    uint32_t threadFor(const Event& ev)
    {
        // The format: a missing tid is the pid.
        const Id& pid = ev.pid;
        const Id& tid = ev.tid.present ? ev.tid : ev.pid;
        ThreadKey key{pid.text.empty() ? pid.number : -1, tid.text.empty() ? tid.number : -1, keyText(pid.text),
                      keyText(tid.text)};
        if (m_lastThread != kNoSpan && key == m_lastKey)
            return m_lastThread;
        auto it = m_threads.find(key);
        uint32_t index;
        if (it != m_threads.end()) {
            index = it->second;
        } else {
            if (m_raw.threads.size() >= kMaxImportedTracks)
                fail(m_p, tooManyTracksMessage() + " (pid and tid pairs)");
            index = uint32_t(m_raw.threads.size());
            chrome::RawThread t;
            t.pid = key.pid;
            t.tid = key.tid;
            t.pidText = std::string(pid.text);
            t.tidText = std::string(tid.text);
            m_raw.threads.push_back(std::move(t));
            m_threads.emplace(key, index);
            processFor(ev);
        }
        m_lastKey = key;
        m_lastThread = index;
        return index;
    }

    chrome::RawProcess& processFor(const Event& ev)
    {
        const auto key = std::make_pair(ev.pid.text.empty() ? ev.pid.number : -1, std::string(ev.pid.text));
        auto it = m_processes.find(key);
        if (it != m_processes.end())
            return m_raw.processes[it->second];
        chrome::RawProcess p;
        p.pid = key.first;
        p.pidText = key.second;
        m_processes.emplace(key, m_raw.processes.size());
        m_raw.processes.push_back(std::move(p));
        return m_raw.processes.back();
    }

    uint32_t intern(std::string_view s)
    {
        if (m_lastNameId != kNoSpan && s == m_lastName)
            return m_lastNameId;
        auto& strings = m_raw.trace.strings;
        auto it = m_names.find(s);
        if (it == m_names.end()) {
            if (strings.size() >= size_t(std::numeric_limits<uint32_t>::max()))
                throw Fail{0, "too many distinct names"};
            strings.emplace_back(s);
            it = m_names.emplace(strings.back(), uint32_t(strings.size() - 1)).first;
        }
        // The map's key, not the vector's string: the vector moves its strings when it grows.
        m_lastName = it->first;
        m_lastNameId = it->second;
        return it->second;
    }

    uint32_t addSpan(const Event& ev, uint32_t thread, SpanKind kind, int64_t start, int64_t end)
    {
        auto& s = m_raw.trace.spans;
        if (s.size() >= size_t(std::numeric_limits<uint32_t>::max()) - 1)
            throw Fail{0, "too many spans (more than 4294967294)"};
        const auto index = uint32_t(s.size());
        s.track.push_back(thread);
        s.kind.push_back(kind);
        s.name.push_back(intern(ev.name));
        s.start.push_back(start);
        s.end.push_back(end);
        const auto clamp32 = [](int64_t v) {
            return int32_t(std::clamp<int64_t>(v, std::numeric_limits<int32_t>::min(),
                                               std::numeric_limits<int32_t>::max()));
        };
        s.thread.push_back(clamp32(ev.thread));
        s.op.push_back(clamp32(ev.op));
        s.iteration.push_back(clamp32(ev.iteration));
        s.bytes.push_back(ev.bytes);
        s.grid.push_back(ev.hasGrid ? ev.grid : Dim3{0, 0, 0});
        s.block.push_back(ev.hasBlock ? ev.block : Dim3{0, 0, 0});

        chrome::RawThread& t = m_raw.threads[thread];
        ++t.spans;
        if (kind != chrome::kUnknownKind && isGpuSpan(kind))
            ++t.gpuSpans;
        if (ev.device >= 0 && t.device < 0)
            t.device = ev.device;
        if (ev.stream.present && t.stream.empty()) {
            t.streamIsNumber = ev.stream.text.empty();
            t.stream = t.streamIsNumber ? std::to_string(ev.stream.number) : std::string(ev.stream.text);
        }
        if (ev.hasCorrelation)
            m_raw.correlations.emplace_back(index, ev.correlation);
        if (ev.hasExternalId && m_dialect == chrome::Dialect::PyTorch)
            m_raw.externalIds.emplace_back(index, ev.externalId);
        if (!ev.wait.empty() && ev.waitFor >= 0 && ev.waitFor < int64_t(kNoSpan))
            if (const auto cause = waitCauseFromString(ev.wait))
                m_raw.trace.setWait(index, *cause, uint32_t(ev.waitFor));
        return index;
    }

    // The span kind of an event, or kUnknownKind; nullopt: not a span in this dialect.
    std::optional<SpanKind> spanKind(const Event& ev)
    {
        if (!ev.argKind.empty())
            if (const auto k = spanKindFromString(ev.argKind))
                return *k;
        if (m_dialect == chrome::Dialect::PyTorch) {
            // The CUDA work and calls, and the ranges around them (CPU ops, annotations, Python functions); the
            // profiler's own rows ("Trace", "overhead") are no spans.
            if (chrome::isPyTorchRangeCategory(ev.cat))
                return SpanKind::Range;
            const auto k = chrome::kindFromCategory(ev.cat, ev.name);
            if (!k)
                return std::nullopt;
            return k;
        }
        const auto k = chrome::kindFromCategory(ev.cat, ev.name);
        return k ? *k : chrome::kUnknownKind;
    }

    void handle(const Event& ev, const char* start)
    {
        switch (ev.ph) {
        case 'X': {
            if (!ev.hasTs)
                fail(start, "a complete event (\"ph\": \"X\") without \"ts\"");
            // Writers that lose a duration (or mean an instant) should not cost the whole file: such an event is kept
            // as an instant, and the trace counts them (settings "x_events_without_dur").
            if (!ev.hasDur)
                ++m_raw.withoutDur;
            if (ev.dur < 0)
                fail(start, "a complete event with a negative \"dur\"");
            if (m_dialect == chrome::Dialect::PyTorch && is(ev.cat, "cuda_sync")) {
                syncRecord(ev);
                return;
            }
            const auto kind = spanKind(ev);
            if (!kind) {
                ++m_raw.skippedEvents;
                return;
            }
            const uint32_t thread = threadFor(ev);
            if (ev.ts > std::numeric_limits<int64_t>::max() - ev.dur)
                fail(start, "\"ts\" + \"dur\" is out of range");
            const uint32_t span = addSpan(ev, thread, *kind, ev.ts, ev.ts + ev.dur);
            if (ev.hasBindId && (ev.flowIn || ev.flowOut))
                bindIdFlow(ev, span);
            return;
        }
        case 'B': {
            if (!ev.hasTs)
                fail(start, "a begin event (\"ph\": \"B\") without \"ts\"");
            const auto kind = spanKind(ev);
            if (!kind) {
                ++m_raw.skippedEvents;
                return;
            }
            const uint32_t thread = threadFor(ev);
            const uint32_t span = addSpan(ev, thread, *kind, ev.ts, ev.ts);
            m_raw.threads[thread].open.push_back(span);
            if (ev.hasBindId && (ev.flowIn || ev.flowOut))
                bindIdFlow(ev, span);
            return;
        }
        case 'E': {
            if (!ev.hasTs)
                fail(start, "an end event (\"ph\": \"E\") without \"ts\"");
            auto& open = m_raw.threads[threadFor(ev)].open;
            if (open.empty())
                return;
            const uint32_t span = open.back();
            open.pop_back();
            auto& s = m_raw.trace.spans;
            s.end[span] = std::max(s.start[span], ev.ts);
            return;
        }
        case 'M': metadata(ev); return;
        case 's':
        case 't':
        case 'f': flowEvent(ev); return;
        default: ++m_raw.skippedEvents; return;
        }
    }

    void metadata(const Event& ev)
    {
        if (ev.name == "process_name") {
            processFor(ev).name = std::string(ev.argName);
        } else if (ev.name == "process_labels") {
            processFor(ev).labels = std::string(ev.labels);
        } else if (ev.name == "process_sort_index") {
            if (ev.hasSortIndex) {
                auto& p = processFor(ev);
                p.sortIndex = ev.sortIndex;
                p.hasSortIndex = true;
            }
        } else if (ev.name == "thread_name") {
            m_raw.threads[threadFor(ev)].name = std::string(ev.argName);
        } else if (ev.name == "thread_sort_index") {
            if (ev.hasSortIndex) {
                auto& t = m_raw.threads[threadFor(ev)];
                t.sortIndex = ev.sortIndex;
                t.hasSortIndex = true;
            }
        }
    }

    void syncRecord(const Event& ev)
    {
        chrome::SyncRecord r;
        r.thread = threadFor(ev);
        r.ts = ev.ts;
        const std::string_view kind = !ev.syncKind.empty() ? ev.syncKind : ev.name;
        if (kind == "Stream Wait Event")
            r.type = chrome::SyncRecord::StreamWait;
        else if (kind == "Stream Sync")
            r.type = chrome::SyncRecord::StreamSync;
        else if (kind == "Event Sync")
            r.type = chrome::SyncRecord::EventSync;
        else if (kind == "Context Sync")
            r.type = chrome::SyncRecord::ContextSync;
        r.device = ev.device >= 0 ? ev.device : (ev.pid.text.empty() ? ev.pid.number : -1);
        r.stream = ev.stream.present && ev.stream.text.empty() ? ev.stream.number : -1;
        r.waitOnStream = ev.waitOnStream;
        r.recordCorrelation = ev.recordCorrelation;
        r.correlation = ev.hasCorrelation ? ev.correlation : -1;
        m_raw.syncs.push_back(r);
    }

    static int flowKindFromName(std::string_view name)
    {
        if (const auto k = flowKindFromString(name))
            return int(*k);
        return -1;
    }

    void bindIdFlow(const Event& ev, uint32_t span)
    {
        // Perfetto's flow events v2: "bind_id" with "flow_out" on the source slice, "flow_in" on the target.
        const FlowKey key{ev.bindId, 0, 1};
        auto it = m_open.find(key);
        if (it == m_open.end()) {
            OpenFlow o;
            o.span = span;
            o.kind = ev.flowIn ? -2 : -1; // -2: this end is a target, waiting for its source
            m_open.emplace(key, o);
            return;
        }
        const OpenFlow o = it->second;
        m_open.erase(it);
        if (o.kind == -2)
            m_raw.indexFlows.push_back({span, o.span, -1});
        else
            m_raw.indexFlows.push_back({o.span, span, -1});
        if (ev.flowIn && ev.flowOut) { // a step: also the source of the next part
            OpenFlow next;
            next.span = span;
            m_open.emplace(key, next);
        }
    }

    void flowEvent(const Event& ev)
    {
        if (!ev.hasId || !ev.hasTs)
            return;
        OpenFlow here;
        here.end.thread = threadFor(ev);
        here.end.ts = ev.ts;
        here.end.enclosing = ev.ph != 'f' || ev.bp == "e";
        here.kind = flowKindFromName(ev.name);
        here.launchOnly = ev.name == "ac2g";
        // Our exports name the slice; it is trusted only when it is where the event says.
        if (ev.spanHint >= 0 && uint64_t(ev.spanHint) < m_raw.trace.spans.size()) {
            const auto hint = uint32_t(ev.spanHint);
            if (m_raw.trace.spans.track[hint] == here.end.thread && m_raw.trace.spans.start[hint] == ev.ts)
                here.span = hint;
        }
        const FlowKey key{ev.id, hashText(ev.cat), hashText(ev.name)};
        if (ev.ph == 's') {
            here.target = ev.flowEnd == "to";
            m_open[key] = here;
            return;
        }
        auto it = m_open.find(key);
        if (it == m_open.end())
            return;
        const OpenFlow from = it->second;
        if (ev.ph == 'f')
            m_open.erase(it);
        else
            it->second = here; // a step ends one arrow and starts the next
        if (from.span != kNoSpan && here.span != kNoSpan) {
            if (from.target)
                m_raw.indexFlows.push_back({here.span, from.span, from.kind});
            else
                m_raw.indexFlows.push_back({from.span, here.span, from.kind});
        } else {
            chrome::UnboundFlow f;
            f.from = from.target ? here.end : from.end;
            f.to = from.target ? from.end : here.end;
            f.kind = from.kind;
            f.launchOnly = from.launchOnly;
            m_raw.unboundFlows.push_back(f);
        }
    }

    void closeOpenSpans()
    {
        // "B" without "E": they end where the trace ends.
        auto& s = m_raw.trace.spans;
        int64_t last = 0;
        bool any = false;
        for (const auto& t : m_raw.threads)
            any = any || !t.open.empty();
        if (!any)
            return;
        for (size_t i = 0; i < s.size(); ++i)
            last = std::max(last, s.end[i]);
        for (auto& t : m_raw.threads) {
            for (uint32_t span : t.open)
                s.end[span] = std::max(s.start[span], last);
            t.open.clear();
            t.open.shrink_to_fit();
        }
    }

    // A top-level value other than "traceEvents".
    void topLevelValue(const std::string& key)
    {
        skipWs();
        const char* start = m_p;
        const char c = *m_p;
        if (is(key, "otherData") || is(key, "deviceProperties")) {
            skipValue(1);
            (is(key, "otherData") ? m_raw.otherData : m_raw.deviceProperties).assign(start, m_p);
            return;
        }
        if (c == '"') {
            m_scratchUsed = 0;
            const std::string_view v = string();
            m_raw.topLevel.emplace_back(key, std::string(v));
        } else if (c == '-' || isDigit(c)) {
            number();
            m_raw.topLevel.emplace_back(key, std::string(start, m_p));
        } else if (c == 't' || c == 'f') {
            skipValue(1);
            m_raw.topLevel.emplace_back(key, std::string(start, m_p));
        } else {
            skipValue(1);
        }
    }

    Input& m_in;
    chrome::Dialect m_dialect;
    const char* m_p = nullptr;
    const char* m_end = nullptr;
    bool m_sawEvents = false;
    std::deque<std::string> m_scratch;
    size_t m_scratchUsed = 0;

    chrome::RawTrace m_raw;
    std::unordered_map<std::string, uint32_t, StringHash, std::equal_to<>> m_names;
    std::string_view m_lastName;
    uint32_t m_lastNameId = kNoSpan;
    std::unordered_map<std::string, uint32_t, StringHash, std::equal_to<>> m_keyTexts;
    std::vector<std::string> m_keyTextList;
    std::unordered_map<ThreadKey, uint32_t, ThreadKeyHash> m_threads;
    ThreadKey m_lastKey{};
    uint32_t m_lastThread = kNoSpan;
    std::map<std::pair<int64_t, std::string>, size_t> m_processes;
    std::unordered_map<FlowKey, OpenFlow, FlowKeyHash> m_open;
};

Result<chrome::RawTrace> readInput(Input& in, const std::string& file, chrome::Dialect dialect)
{
    try {
        Reader reader(in, dialect);
        return reader.run();
    } catch (const Fail& f) {
        return Error{file, "byte " + std::to_string(f.offset), f.message};
    } catch (const std::bad_alloc&) {
        return Error{file, {}, "out of memory while reading the trace"};
    }
}

// ---------------------------------------------------------------------------------------------------------------
// Building tracks

std::string lower(std::string_view s)
{
    std::string out(s);
    for (char& c : out)
        c = char(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

bool startsWithNoCase(std::string_view s, std::string_view prefix)
{
    return s.size() >= prefix.size() && lower(s.substr(0, prefix.size())) == prefix;
}

std::string idText(int64_t number, const std::string& text) { return text.empty() ? std::to_string(number) : text; }

// The processes by (pid, pid text), for looking up each thread's in log time (a linear search per thread was
// quadratic: 300 000 pids took hours).
std::map<std::pair<int64_t, std::string_view>, const chrome::RawProcess*> processIndex(const chrome::RawTrace& raw)
{
    std::map<std::pair<int64_t, std::string_view>, const chrome::RawProcess*> index;
    for (const auto& p : raw.processes)
        index.emplace(std::make_pair(p.pid, std::string_view(p.pidText)), &p);
    return index;
}

struct OwnExport {
    Trace header;       // info and tracks
    int64_t origin = 0;
};

// Our own export's "otherData.streamscope", if the file has one.
Result<std::optional<OwnExport>> readOwnExport(const std::string& otherData, const std::string& file)
{
    if (otherData.empty())
        return std::optional<OwnExport>();
    Json other = Json::parse(otherData, nullptr, false);
    if (other.is_discarded() || !other.is_object())
        return std::optional<OwnExport>();
    const auto it = other.find("streamscope");
    if (it == other.end() || !it->is_object())
        return std::optional<OwnExport>();
    const Json& ss = *it;
    const auto format = ss.find("format");
    if (format == ss.end() || !format->is_string() || format->get<std::string>() != kExportFormat)
        return std::optional<OwnExport>();
    const auto version = ss.find("version");
    if (version == ss.end() || !version->is_number_integer() || version->get<int64_t>() != kExportVersion)
        return Error{file, "/otherData/streamscope/version",
                     "unsupported version " + (version == ss.end() ? std::string("(none)") : version->dump())
                         + " of StreamScope's Chrome export (this StreamScope reads version "
                         + std::to_string(kExportVersion) + ")"};
    OwnExport own;
    const auto origin = ss.find("time_origin_ns");
    if (origin != ss.end()) {
        if (!origin->is_number_integer())
            return Error{file, "/otherData/streamscope/time_origin_ns", "must be an integer"};
        own.origin = origin->get<int64_t>();
    }
    const auto trace = ss.find("trace");
    if (trace == ss.end() || !trace->is_object())
        return Error{file, "/otherData/streamscope/trace", "missing: the run info and tracks of the export"};
    auto header = parseTrace(trace->dump(-1, ' ', false, Json::error_handler_t::replace), file);
    if (!header) {
        Error e = header.error();
        e.path = "/otherData/streamscope/trace" + e.path;
        return e;
    }
    own.header = std::move(header.value());
    return std::optional<OwnExport>(std::move(own));
}

// Tracks for raw threads of a file that is not our own export (or events added to one); an error for devices that
// are too many or fit no int.
std::optional<Error> genericTracks(const chrome::RawTrace& raw, Trace& t, std::vector<uint32_t>& threadTrack,
                                   const std::vector<bool>& done, const std::string& file)
{
    const auto processes = processIndex(raw);
    std::set<int64_t> devices;
    struct Candidate {
        uint32_t thread;
        bool stream;
        int64_t device;
        int64_t processSort, threadSort;
    };
    std::vector<Candidate> cands;
    // Devices for stream rows without a "device" arg: the process name, else a small numeric pid, else in order.
    std::map<std::pair<int64_t, std::string>, int64_t> pidDevice;
    int64_t nextDevice = 0;
    for (uint32_t i = 0; i < raw.threads.size(); ++i) {
        const auto& th = raw.threads[i];
        if (done[i] || th.spans == 0)
            continue;
        const bool stream = th.gpuSpans > 0 || startsWithNoCase(th.name, "stream");
        const auto found = processes.find(std::make_pair(th.pid, std::string_view(th.pidText)));
        const chrome::RawProcess* proc = found == processes.end() ? nullptr : found->second;
        int64_t device = -1;
        if (stream) {
            device = th.device;
            if (device < 0 && proc)
                device = chrome::deviceFromProcessName(proc->name);
            if (device < 0 && th.pidText.empty() && th.pid >= 0 && th.pid < 64)
                device = th.pid;
            if (device < 0) {
                const auto key = std::make_pair(th.pid, th.pidText);
                auto it = pidDevice.find(key);
                if (it == pidDevice.end())
                    it = pidDevice.emplace(key, nextDevice++).first;
                device = it->second;
            } else {
                nextDevice = std::max(nextDevice, device + 1);
            }
            const std::string where = "pid " + idText(th.pid, th.pidText) + ", tid " + idText(th.tid, th.tidText);
            if (const std::string problem = deviceIndexProblem(device); !problem.empty())
                return Error{file, where, problem};
            if (devices.insert(device).second && devices.size() > kMaxImportedDevices)
                return Error{file, where, tooManyDevicesMessage()};
        }
        cands.push_back({i, stream, device, proc && proc->hasSortIndex ? proc->sortIndex : 0,
                         th.hasSortIndex ? th.sortIndex : 0});
    }
    // Host threads first, then streams by device; the file's sort indices, then its order, within each.
    std::stable_sort(cands.begin(), cands.end(), [](const Candidate& a, const Candidate& b) {
        if (a.stream != b.stream)
            return !a.stream;
        if (a.stream && a.device != b.device)
            return a.device < b.device;
        if (a.processSort != b.processSort)
            return a.processSort < b.processSort;
        return a.threadSort < b.threadSort;
    });
    for (const auto& c : cands) {
        const auto& th = raw.threads[c.thread];
        Track tr;
        if (c.stream) {
            tr.kind = TrackKind::Stream;
            tr.device = int(c.device);
            if (!th.stream.empty())
                tr.name = th.streamIsNumber ? "stream " + th.stream : th.stream;
            else if (!th.name.empty())
                tr.name = th.name;
            else
                tr.name = "stream " + idText(th.tid, th.tidText);
            if (th.streamIsNumber)
                tr.id = std::strtoll(th.stream.c_str(), nullptr, 10);
            else if (th.tidText.empty())
                tr.id = th.tid;
        } else {
            tr.kind = TrackKind::HostThread;
            tr.device = -1;
            tr.name = !th.name.empty() ? th.name : "thread " + idText(th.tid, th.tidText);
            if (th.tidText.empty())
                tr.id = th.tid;
        }
        threadTrack[c.thread] = t.addTrack(std::move(tr));
    }
    return std::nullopt;
}

void addDevices(Trace& t)
{
    std::set<int> seen;
    for (const auto& tr : t.tracks)
        if (tr.kind == TrackKind::Stream && tr.device >= 0)
            seen.insert(tr.device);
    for (const auto& di : t.info.devices)
        seen.erase(di.index);
    for (int d : seen)
        t.info.devices.push_back({d, {}, {}});
    std::sort(t.info.devices.begin(), t.info.devices.end(),
              [](const DeviceInfo& a, const DeviceInfo& b) { return a.index < b.index; });
}

Result<Trace> buildChrome(chrome::RawTrace&& raw, const std::string& file)
{
    auto own = readOwnExport(raw.otherData, file);
    if (!own)
        return own.error();
    std::vector<uint32_t> threadTrack(raw.threads.size(), kNoSpan);
    std::vector<bool> done(raw.threads.size(), false);
    std::vector<Track> tracks;
    RunInfo info;
    int64_t origin = 0;
    if (own->has_value()) {
        OwnExport& ex = **own;
        info = std::move(ex.header.info);
        tracks = std::move(ex.header.tracks);
        origin = ex.origin;
        for (uint32_t i = 0; i < raw.threads.size(); ++i) {
            const auto& th = raw.threads[i];
            if (!th.pidText.empty() || !th.tidText.empty() || th.tid < 1 || uint64_t(th.tid) > tracks.size())
                continue;
            if (exportPid(tracks[size_t(th.tid - 1)]) != th.pid)
                continue;
            threadTrack[i] = uint32_t(th.tid - 1);
            done[i] = true;
        }
    } else {
        info.source = TraceSource::Imported;
        info.backend = "chrome";
        for (const auto& [k, v] : raw.topLevel)
            info.settings.emplace_back(k, v);
    }
    if (raw.withoutDur > 0)
        info.settings.emplace_back("x_events_without_dur", std::to_string(raw.withoutDur) + " read as instants");
    Trace& t = raw.trace;
    t.info = std::move(info);
    for (auto& tr : tracks)
        t.addTrack(std::move(tr));
    if (own->has_value() && !(**own).header.strings.empty()) {
        // Names in the export's order; names the export does not list (events added to it) after them.
        std::vector<std::string> strings = std::move((**own).header.strings);
        std::unordered_map<std::string_view, uint32_t> index;
        for (uint32_t i = 0; i < strings.size(); ++i)
            index.emplace(strings[i], i);
        std::vector<uint32_t> remap(t.strings.size());
        std::vector<std::string> extra;
        for (uint32_t i = 0; i < t.strings.size(); ++i) {
            auto it = index.find(t.strings[i]);
            if (it != index.end()) {
                remap[i] = it->second;
            } else {
                remap[i] = uint32_t(strings.size() + extra.size());
                extra.push_back(std::move(t.strings[i]));
            }
        }
        index.clear();
        for (auto& e : extra)
            strings.push_back(std::move(e));
        for (auto& name : t.spans.name)
            name = remap[name];
        t.strings = std::move(strings);
    }
    if (auto failed = genericTracks(raw, t, threadTrack, done, file))
        return *failed;
    if (!own->has_value()) {
        // Device names from the process names ("GPU 0: NVIDIA H200" as we write them, or anything else): the
        // first process that names each device.
        addDevices(t);
        std::map<int, std::string> names;
        for (const auto& p : raw.processes) {
            const auto colon = p.name.find(": ");
            if (colon != std::string::npos)
                names.emplace(chrome::deviceFromProcessName(p.name), p.name.substr(colon + 2));
        }
        for (auto& d : t.info.devices)
            if (const auto it = names.find(d.index); it != names.end() && d.name.empty())
                d.name = it->second;
    }
    return chrome::finish(std::move(raw), threadTrack, {}, true, origin, file);
}

// Stable sort of the spans by (track, start, end), as Trace::finalize orders them; flows are remapped.
void sortSpans(Trace& t)
{
    auto& s = t.spans;
    const size_t n = s.size();
    bool sorted = true;
    for (size_t i = 1; i < n && sorted; ++i) {
        if (s.track[i - 1] != s.track[i])
            sorted = s.track[i - 1] < s.track[i];
        else
            sorted = s.start[i - 1] < s.start[i] || (s.start[i - 1] == s.start[i] && s.end[i - 1] <= s.end[i]);
    }
    if (sorted)
        return;
    std::vector<uint32_t> order(n);
    std::iota(order.begin(), order.end(), 0u);
    std::stable_sort(order.begin(), order.end(), [&s](uint32_t a, uint32_t b) {
        if (s.track[a] != s.track[b])
            return s.track[a] < s.track[b];
        if (s.start[a] != s.start[b])
            return s.start[a] < s.start[b];
        return s.end[a] < s.end[b];
    });
    const auto permute = [&order](auto& v) {
        std::remove_reference_t<decltype(v)> out;
        out.reserve(v.size());
        for (uint32_t i : order)
            out.push_back(v[i]);
        v = std::move(out);
    };
    permute(s.track);
    permute(s.kind);
    permute(s.name);
    permute(s.start);
    permute(s.end);
    permute(s.thread);
    permute(s.op);
    permute(s.iteration);
    permute(s.bytes);
    permute(s.grid);
    permute(s.block);
    std::vector<uint32_t> newIndex(n);
    for (uint32_t i = 0; i < n; ++i)
        newIndex[order[i]] = i;
    order = {};
    for (auto& f : t.flows) {
        f.from = newIndex[f.from];
        f.to = newIndex[f.to];
    }
}

std::optional<FlowKind> flowKindByEnds(const Trace& t, uint32_t from, uint32_t to)
{
    const bool fromStream = t.tracks[t.spans.track[from]].kind == TrackKind::Stream;
    const bool toStream = t.tracks[t.spans.track[to]].kind == TrackKind::Stream;
    if (!fromStream && toStream)
        return FlowKind::Launch;
    if (fromStream && toStream)
        return FlowKind::Event;
    if (fromStream && !toStream)
        return FlowKind::Sync;
    return std::nullopt; // host to host: no CUDA dependency of ours
}

} // namespace

// ---------------------------------------------------------------------------------------------------------------

namespace chrome {

std::optional<SpanKind> kindFromCategory(std::string_view cat, std::string_view name)
{
    if (cat == "kernel" || cat == "Kernel")
        return SpanKind::Kernel;
    if (cat == "gpu_memcpy" || cat == "Memcpy" || cat == "memcpy")
        return memcpyKindFromName(name);
    if (cat == "gpu_memset" || cat == "Memset" || cat == "memset")
        return SpanKind::Memset;
    // "Runtime": Kineto's category for CUDA runtime calls before 2022 (with "Kernel", "Memcpy", "Memset").
    if (cat == "cuda_runtime" || cat == "cuda_driver" || cat == "Runtime")
        return name.find("Synchronize") != std::string_view::npos ? SpanKind::Sync : SpanKind::ApiCall;
    if (const auto k = spanKindFromString(cat))
        return *k;
    return std::nullopt;
}

bool isPyTorchRangeCategory(std::string_view cat)
{
    // "Operator": Kineto's CPU ops before 2022; some versions wrote "gpu_user_Annotation".
    return cat == "cpu_op" || cat == "Operator" || cat == "user_annotation" || cat == "python_function"
        || lower(cat) == "gpu_user_annotation";
}

SpanKind memcpyKindFromName(std::string_view name)
{
    const auto has = [name](std::string_view s) { return name.find(s) != std::string_view::npos; };
    if (has("PtoP") || has("Peer-to-Peer") || has("PEER"))
        return SpanKind::MemcpyP2P;
    if (has("HtoD") || has("HtoA") || has("HtoH") || has("Host-to-Device") || has("Host-to-Array")
        || has("Host-to-Host"))
        return SpanKind::MemcpyH2D;
    if (has("DtoH") || has("AtoH") || has("Device-to-Host") || has("Array-to-Host"))
        return SpanKind::MemcpyD2H;
    return SpanKind::MemcpyD2D;
}

int deviceFromProcessName(std::string_view name)
{
    const std::string l = lower(name);
    for (const std::string_view prefix : {"gpu ", "gpu", "device ", "device", "cuda:", "cuda "}) {
        const size_t at = l.find(prefix);
        if (at == std::string::npos)
            continue;
        size_t i = at + prefix.size();
        if (i >= l.size() || !std::isdigit(static_cast<unsigned char>(l[i])))
            continue;
        int v = 0;
        const auto r = std::from_chars(l.data() + i, l.data() + l.size(), v);
        if (r.ec == std::errc() && v >= 0 && v < 1 << 20)
            return v;
    }
    return -1;
}

Dialect detectDialect(std::string_view prefix)
{
    const auto has = [prefix](std::string_view s) { return prefix.find(s) != std::string_view::npos; };
    // Kineto's top-level keys; or, in traces from before it wrote them, its categories with its "External id".
    if (has("\"schemaVersion\"") || has("\"deviceProperties\""))
        return Dialect::PyTorch;
    if (has("\"External id\""))
        for (const std::string_view cat :
             {"cuda_runtime", "cpu_op", "ac2g", "python_function", "gpu_memcpy", "Runtime", "Operator", "Kernel"})
            if (has("\"cat\": \"" + std::string(cat) + "\"") || has("\"cat\":\"" + std::string(cat) + "\""))
                return Dialect::PyTorch;
    return Dialect::Generic;
}

Result<RawTrace> readText(std::string_view text, const std::string& file, Dialect dialect)
{
    Input in(text);
    return readInput(in, file, dialect);
}

Result<RawTrace> readFile(const std::string& path, Dialect dialect)
{
    OpenFile file;
    if (Status opened = openForReading(path, file); !opened)
        return opened.error();
    Input in(file.fd);
    return readInput(in, path, dialect);
}

Result<Trace> finish(RawTrace&& raw, const std::vector<uint32_t>& threadTrack, std::vector<IndexFlow> extra,
                     bool bindUnbound, int64_t origin, const std::string& file)
{
    try {
        Trace t = std::move(raw.trace);
        auto& s = t.spans;
        const size_t n = s.size();
        for (size_t i = 0; i < n; ++i) {
            const uint32_t tr = s.track[i] < threadTrack.size() ? threadTrack[s.track[i]] : kNoSpan;
            if (tr >= t.tracks.size())
                return Error{file, {}, "internal error: a span without a track"};
            s.track[i] = tr;
            if (s.kind[i] == kUnknownKind)
                s.kind[i] = t.tracks[tr].kind == TrackKind::Stream ? SpanKind::Kernel : SpanKind::HostWork;
            if (origin != 0) {
                if ((origin > 0 && s.end[i] > std::numeric_limits<int64_t>::max() - origin)
                    || (origin < 0 && s.start[i] < std::numeric_limits<int64_t>::min() - origin))
                    return Error{file, "/otherData/streamscope/time_origin_ns", "time origin out of range"};
                s.start[i] += origin;
                s.end[i] += origin;
            }
        }
        extra.insert(extra.end(), raw.indexFlows.begin(), raw.indexFlows.end());
        raw.indexFlows = {};
        t.flows.reserve(extra.size());
        for (const auto& f : extra) {
            if (f.from >= n || f.to >= n)
                continue;
            std::optional<FlowKind> kind;
            if (f.kind >= 0 && f.kind < kFlowKindCount)
                kind = FlowKind(f.kind);
            else
                kind = flowKindByEnds(t, f.from, f.to);
            if (kind)
                t.flows.push_back({f.from, f.to, *kind});
        }
        extra = {};
        sortSpans(t);

        if (bindUnbound && !raw.unboundFlows.empty()) {
            std::vector<uint32_t> offsets(t.tracks.size() + 1, 0);
            for (size_t i = 0; i < n; ++i)
                ++offsets[s.track[i] + 1];
            for (size_t k = 0; k < t.tracks.size(); ++k)
                offsets[k + 1] += offsets[k];
            const auto bind = [&](const FlowEnd& e) -> uint32_t {
                if (e.thread >= threadTrack.size() || threadTrack[e.thread] == kNoSpan)
                    return kNoSpan;
                const uint32_t tr = threadTrack[e.thread];
                const int64_t ts = e.ts + origin;
                const auto b = s.start.begin() + offsets[tr];
                const auto en = s.start.begin() + offsets[tr + 1];
                if (!e.enclosing) {
                    const auto it = std::lower_bound(b, en, ts);
                    return it == en ? kNoSpan : uint32_t(it - s.start.begin());
                }
                // The latest-starting span that contains ts (the deepest, where they nest); not a range around it
                // (PyTorch's CPU ops), which is no end of a CUDA dependency.
                auto it = std::upper_bound(b, en, ts);
                for (int steps = 0; it != b && steps < 64; ++steps) {
                    --it;
                    const auto i = uint32_t(it - s.start.begin());
                    if (s.end[i] >= ts && s.kind[i] != SpanKind::Range)
                        return i;
                }
                return kNoSpan;
            };
            for (const auto& f : raw.unboundFlows) {
                const uint32_t from = bind(f.from);
                const uint32_t to = bind(f.to);
                if (from == kNoSpan || to == kNoSpan || from == to)
                    continue;
                std::optional<FlowKind> kind;
                if (f.kind >= 0 && f.kind < kFlowKindCount)
                    kind = FlowKind(f.kind);
                else
                    kind = flowKindByEnds(t, from, to);
                if (f.launchOnly && kind != FlowKind::Launch)
                    continue;
                if (kind)
                    t.flows.push_back({from, to, *kind});
            }
        }
        raw.unboundFlows = {};
        t.finalize();
        return t;
    } catch (const std::bad_alloc&) {
        return Error{file, {}, "out of memory while reading the trace"};
    }
}

} // namespace chrome

Result<Trace> parseChromeTrace(std::string_view text, const std::string& file)
{
    auto raw = chrome::readText(text, file, chrome::Dialect::Generic);
    if (!raw)
        return raw.error();
    return buildChrome(std::move(raw.value()), file);
}

Result<Trace> loadChromeTraceFile(const std::string& path)
{
    auto raw = chrome::readFile(path, chrome::Dialect::Generic);
    if (!raw)
        return raw.error();
    return buildChrome(std::move(raw.value()), path);
}

} // namespace streamscope
