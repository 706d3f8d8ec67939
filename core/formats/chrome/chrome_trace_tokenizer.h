// The JSON tokenizer of the Chrome Trace Event reader (chrome_trace_reader.h): a buffer refilled from the file,
// strings, numbers and the typed values an event has. Internal to core. Its functions are defined in the class, so
// that they are inlined into the event loop: they run once per byte of a trace of gigabytes.
#pragma once

#include "chrome_trace.h"
#include "chrome_trace_format.h"
#include "chrome_trace_input.h"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <limits>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace streamscope::chrome::detail {

// Nesting deeper than this is refused (values are skipped by recursion).
constexpr int kMaxDepth = 256;

// ---------------------------------------------------------------------------------------------------------------
// Reading: a hand-written JSON tokenizer over a buffer that is refilled from the file. Events are parsed one at a
// time into fields; a value cut by the end of the buffer throws NeedMore, and the event is parsed again from its
// start once more bytes are in (once per buffer, so the cost is nil).

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

// The first byte in [p, end) that ends the plain part of a string: '"', '\\' or a control character (< 0x20);
// `end` if there is none. Sixteen bytes at a time with SSE2, which every x86-64 processor has (no runtime check
// needed); a byte at a time elsewhere. Names of kernels and templates run to hundreds of bytes.
inline const char* stringStop(const char* p, const char* end)
{
#if defined(__SSE2__)
    const __m128i quote = _mm_set1_epi8('"');
    const __m128i backslash = _mm_set1_epi8('\\');
    const __m128i control = _mm_set1_epi8(0x1f);
    while (end - p >= 16) {
        const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
        // v <= 0x1f unsigned  <=>  max(v, 0x1f) == 0x1f
        const __m128i hit = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)),
                                         _mm_cmpeq_epi8(_mm_max_epu8(v, control), control));
        const int mask = _mm_movemask_epi8(hit);
        if (mask != 0)
            return p + __builtin_ctz(unsigned(mask));
        p += 16;
    }
#endif
    while (p != end) {
        const auto c = static_cast<unsigned char>(*p);
        if (c == '"' || c == '\\' || c < 0x20)
            return p;
        ++p;
    }
    return p;
}

inline uint64_t hashText(std::string_view s)
{
    return std::hash<std::string_view>{}(s);
}

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

// The tokens of the JSON text. A value cut by the end of the buffer throws NeedMore; an error throws Fail.
class JsonTokenizer {
public:
    explicit JsonTokenizer(Input& in) : m_in(in)
    {
        m_p = in.begin();
        m_end = in.end();
    }

protected:
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

    // A string at m_p (which is '"'). The view is valid until the next event is parsed. Inlined: an event has a
    // dozen and more keys and strings, nearly all without escapes.
    [[gnu::always_inline]] std::string_view string()
    {
        const char* s = ++m_p;
        const char* stop = stringStop(s, m_end);
        if (stop != m_end && *stop == '"') {
            m_p = stop + 1;
            return std::string_view(s, size_t(stop - s));
        }
        m_p = stop;
        return escapedString(s);
    }

    // The rest of a string that starts at `s` and has an escape, a control character or the buffer's end at m_p.
    [[gnu::noinline]] std::string_view escapedString(const char* s)
    {
        if (m_p == m_end)
            more();
        if (*m_p != '\\')
            fail(m_p, "not valid JSON: a control character inside a string");
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
            m_p = stringStop(m_p, m_end);
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

    // The decimal digits at p, at most Max of them, added to v; returns the first byte that is no digit, or p + Max.
    // The caller has made sure that p + Max is inside the buffer: no check of its end per digit, and a loop of a
    // known length that the compiler unrolls (ids, times and counts are read a few million times a file).
    template <int Max>
    [[gnu::always_inline]] static const char* digitRun(const char* p, uint64_t& v)
    {
#pragma GCC unroll 19
        for (int k = 0; k < Max; ++k) {
            const unsigned d = unsigned(static_cast<unsigned char>(p[k])) - unsigned('0');
            if (d > 9)
                return p + k;
            v = v * 10 + d;
        }
        return p + Max;
    }

    // A plain integer of at most 18 digits (every id, index and count of real traces), converted as it is scanned;
    // false, with m_p unmoved, for anything else (a fraction, an exponent, more digits, "-"), which number() and its
    // conversions then read as before, errors included.
    bool plainInt(int64_t& out)
    {
        const char* p = m_p;
        const bool neg = *p == '-';
        p += neg;
        const char* digits = p;
        uint64_t v = 0;
        if (m_end - p > 19) {
            p = digitRun<19>(p, v); // 19 digits: more than 18, refused below as the loop would
        } else {
            while (p != m_end && isDigit(*p)) {
                v = v * 10 + uint64_t(*p - '0');
                ++p;
            }
        }
        const ptrdiff_t count = p - digits;
        if (p == m_end || count == 0 || count > 18 || *p == '.' || *p == 'e' || *p == 'E')
            return false;
        m_p = p;
        out = neg ? -int64_t(v) : int64_t(v);
        return true;
    }

    // Microseconds without an exponent and with a whole part of at most 15 digits (what writers of the format
    // produce) -> nanoseconds, exactly as microsToNs converts them; false, with m_p unmoved, for anything else.
    bool plainMicros(int64_t& out)
    {
        const char* p = m_p;
        const bool neg = *p == '-';
        p += neg;
        const char* digits = p;
        uint64_t whole = 0;
        // Room for 16 digits, a point and three decimals: no check of the buffer's end per digit.
        const bool room = m_end - p > 21;
        if (room) {
            p = digitRun<16>(p, whole); // 16 digits: more than 15, refused below as the loop would
        } else {
            while (p != m_end && isDigit(*p)) {
                whole = whole * 10 + uint64_t(*p - '0');
                ++p;
            }
        }
        const ptrdiff_t count = p - digits;
        if (p == m_end || count == 0 || count > 15)
            return false;
        uint64_t frac = 0;
        int places = 0;
        bool roundUp = false;
        if (*p == '.') {
            ++p;
            if (room) {
                const char* q = digitRun<3>(p, frac);
                places = int(q - p);
                p = q;
            } else {
                while (p != m_end && isDigit(*p) && places < 3) {
                    frac = frac * 10 + uint64_t(*p - '0');
                    ++p;
                    ++places;
                }
            }
            if (places == 0)
                return false;
            if (p != m_end && isDigit(*p)) { // a fourth decimal rounds (half up), the rest are dropped
                roundUp = *p >= '5';
                while (p != m_end && isDigit(*p))
                    ++p;
            }
            if (p == m_end)
                return false;
        }
        if (*p == 'e' || *p == 'E')
            return false;
        for (int k = places; k < 3; ++k)
            frac *= 10;
        m_p = p;
        const auto v = int64_t(whole * 1000 + frac + (roundUp ? 1 : 0));
        out = neg ? -v : v;
        return true;
    }

    int64_t intValue(const char* what)
    {
        skipWs();
        const char c = *m_p;
        if (c == '-' || isDigit(c)) {
            int64_t v = 0;
            if (plainInt(v))
                return v;
            return toInt(number(), what);
        }
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
        if (c == '-' || isDigit(c)) {
            int64_t v = 0;
            if (plainMicros(v))
                return v;
            return microsToNs(number(), what);
        }
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
            if (!plainInt(id.number))
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
        // As writers put it, [x,y,z] with nothing between and up to nine digits each (below 2^32), read at once
        // where the buffer has room for it; anything else (white space, signs, more or fewer components, longer
        // numbers) by the general path below, from the '['.
        if (m_end - m_p > 32) {
            const char* p = m_p + 1;
            uint32_t xyz[3];
            int k = 0;
            for (; k < 3; ++k) {
                uint64_t x = 0;
                const char* q = digitRun<10>(p, x);
                if (q == p || q - p > 9 || *q != (k < 2 ? ',' : ']'))
                    break;
                xyz[k] = uint32_t(x);
                p = q + 1;
            }
            if (k == 3) {
                m_p = p;
                d = Dim3{xyz[0], xyz[1], xyz[2]};
                return true;
            }
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

    Input& m_in;
    const char* m_p = nullptr;
    const char* m_end = nullptr;
    std::deque<std::string> m_scratch;
    size_t m_scratchUsed = 0;
};

} // namespace streamscope::chrome::detail
