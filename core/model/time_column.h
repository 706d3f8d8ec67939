// SPDX-FileCopyrightText: StreamScope contributors
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace streamscope {

// A column of times (int64 ns) in about 4 bytes an entry. Entries come in blocks of kBlock that share two 64-bit
// bases; an entry is a 31-bit offset from one of them and one bit saying which. The first base is set by the
// block's first entry, the second by the first entry that does not fit the first (a block that holds the end of
// one track and the start of the next, or an end far after its start), each a little before that entry. So a
// block whose entries lie in at most two windows of about 2 s (spans in time order on a track, or any trace shorter
// than that) holds every entry in its offset. An entry that fits neither is kept whole in a sorted list of
// exceptions, so every int64 value round-trips exactly.
//
// Read with operator[] (a value, not a reference); write with push_back() and set(). Loops read through a View (or
// the iterators, which hold one), and copyTo() unpacks a range into a plain array.
class TimeColumn {
    using Exception = std::pair<uint32_t, int64_t>; // (index, value)
    static constexpr uint32_t kEscape = 0xffffffffu;
    static constexpr uint32_t kOffsetMask = 0x7fffffffu; // kEscape's offset: never a stored one

public:
    static constexpr unsigned kBlockBits = 8;
    static constexpr size_t kBlock = size_t(1) << kBlockBits;
    // How far before the entry that sets it a base lies: entries up to this much earlier still fit.
    static constexpr int64_t kSlack = int64_t(1) << 26; // 67 ms

    // The column's arrays as raw pointers, for reading in loops. Reading through the column itself reloads its
    // vectors' data pointers after every store the compiler cannot prove leaves them alone (a push_back into the
    // caller's own vector is enough); a View held in a local keeps them in registers. Valid until the column is next
    // modified by anything but shift(), which moves the bases in place (push_back, set, assign, clear, reserve and
    // shrink_to_fit may move or resize its arrays), as a vector's pointers are.
    class View {
    public:
        View() = default;
        int64_t operator[](size_t i) const
        {
            const uint32_t o = m_offset[i];
            if (o != kEscape) [[likely]]
                return m_base[2 * (i >> kBlockBits) + (o >> 31)] + int64_t(o & kOffsetMask);
            return exception(i);
        }
        size_t size() const { return m_size; }
        bool empty() const { return m_size == 0; }
        // Asks for entry i's storage to be brought into the cache (a lookahead for walks that jump).
        void prefetch(size_t i) const
        {
            __builtin_prefetch(m_offset + i);
            __builtin_prefetch(m_base + 2 * (i >> kBlockBits));
        }
        // Entries [first, last) into out[0, last - first): a block at a time without a test per entry, then the
        // exceptions of the range written over their places. For loops that read every entry of a range.
        void copyTo(size_t first, size_t last, int64_t* out) const;

    private:
        friend class TimeColumn;
        int64_t exception(size_t i) const;

        const uint32_t* m_offset = nullptr;
        const int64_t* m_base = nullptr;
        const Exception* m_exceptions = nullptr;
        size_t m_exceptionCount = 0;
        size_t m_size = 0;
    };

    class const_iterator {
    public:
        using iterator_category = std::random_access_iterator_tag;
        using value_type = int64_t;
        using difference_type = std::ptrdiff_t;
        using pointer = void;
        using reference = int64_t;

        // Holds a View: invalidated as the View is (unlike the column's old iterators, which survived a push_back).
        const_iterator() = default;
        const_iterator(const View& v, size_t i) : m_v(v), m_i(i) {}
        int64_t operator*() const { return m_v[m_i]; }
        int64_t operator[](difference_type n) const { return m_v[size_t(difference_type(m_i) + n)]; }
        // Asks for entry n's storage to be brought into the cache (a lookahead for walks that jump).
        void prefetch(difference_type n) const { m_v.prefetch(size_t(difference_type(m_i) + n)); }
        // The column's View and this iterator's index in it.
        const View& view() const { return m_v; }
        size_t index() const { return m_i; }
        const_iterator& operator++()
        {
            ++m_i;
            return *this;
        }
        const_iterator operator++(int)
        {
            auto t = *this;
            ++m_i;
            return t;
        }
        const_iterator& operator--()
        {
            --m_i;
            return *this;
        }
        const_iterator operator--(int)
        {
            auto t = *this;
            --m_i;
            return t;
        }
        const_iterator& operator+=(difference_type n)
        {
            m_i = size_t(difference_type(m_i) + n);
            return *this;
        }
        const_iterator& operator-=(difference_type n)
        {
            m_i = size_t(difference_type(m_i) - n);
            return *this;
        }
        friend const_iterator operator+(const_iterator a, difference_type n) { return a += n; }
        friend const_iterator operator+(difference_type n, const_iterator a) { return a += n; }
        friend const_iterator operator-(const_iterator a, difference_type n) { return a -= n; }
        friend difference_type operator-(const const_iterator& a, const const_iterator& b)
        {
            return difference_type(a.m_i) - difference_type(b.m_i);
        }
        friend bool operator==(const const_iterator& a, const const_iterator& b) { return a.m_i == b.m_i; }
        friend auto operator<=>(const const_iterator& a, const const_iterator& b) { return a.m_i <=> b.m_i; }

    private:
        View m_v;
        size_t m_i = 0;
    };

    TimeColumn() = default;
    TimeColumn(const TimeColumn&) = default; // the same entries: the same contentId
    TimeColumn& operator=(const TimeColumn&) = default;
    TimeColumn(TimeColumn&& other) noexcept
        : m_offset(std::move(other.m_offset)), m_base(std::move(other.m_base)),
          m_exceptions(std::move(other.m_exceptions)), m_contentId(std::exchange(other.m_contentId, 0))
    {}
    TimeColumn& operator=(TimeColumn&& other) noexcept
    {
        m_offset = std::move(other.m_offset);
        m_base = std::move(other.m_base);
        m_exceptions = std::move(other.m_exceptions);
        m_contentId = std::exchange(other.m_contentId, 0);
        return *this;
    }
    TimeColumn(std::initializer_list<int64_t> values)
    {
        for (int64_t v : values)
            push_back(v);
    }
    explicit TimeColumn(const std::vector<int64_t>& values) { assign(values.begin(), values.end()); }

    int64_t operator[](size_t i) const
    {
        const uint32_t o = m_offset[i];
        if (o != kEscape) [[likely]]
            return m_base[2 * (i >> kBlockBits) + (o >> 31)] + int64_t(o & kOffsetMask);
        return view().exception(i);
    }
    void prefetch(size_t i) const
    {
        __builtin_prefetch(m_offset.data() + i);
        __builtin_prefetch(m_base.data() + 2 * (i >> kBlockBits));
    }
    int64_t front() const { return (*this)[0]; }
    int64_t back() const { return (*this)[size() - 1]; }
    size_t size() const { return m_offset.size(); }
    size_t capacity() const { return m_offset.capacity(); }
    bool empty() const { return m_offset.empty(); }
    View view() const
    {
        View v;
        v.m_offset = m_offset.data();
        v.m_base = m_base.data();
        v.m_exceptions = m_exceptions.data();
        v.m_exceptionCount = m_exceptions.size();
        v.m_size = m_offset.size();
        return v;
    }
    void copyTo(size_t first, size_t last, int64_t* out) const { view().copyTo(first, last, out); }
    const_iterator begin() const { return {view(), 0}; }
    const_iterator end() const { return {view(), size()}; }

    void push_back(int64_t v)
    {
        m_contentId = 0;
        const size_t i = m_offset.size();
        if ((i & (kBlock - 1)) == 0) {
            m_base.push_back(baseFor(v));
            m_base.push_back(kUnset);
        }
        m_offset.push_back(encode(i, v));
        if (m_offset.back() == kEscape)
            m_exceptions.emplace_back(uint32_t(i), v); // the largest index so far: the list stays sorted
    }
    void set(size_t i, int64_t v);
    template <typename It>
    void assign(It first, It last)
    {
        clear();
        if constexpr (std::is_base_of_v<std::random_access_iterator_tag,
                                        typename std::iterator_traits<It>::iterator_category>)
            reserve(size_t(std::distance(first, last)));
        for (; first != last; ++first)
            push_back(*first);
    }
    // Adds d to every entry (a clock shift).
    void shift(int64_t d);
    void reserve(size_t n)
    {
        m_offset.reserve(n);
        m_base.reserve(2 * ((n + kBlock - 1) / kBlock));
    }
    void clear()
    {
        m_contentId = 0;
        m_offset.clear();
        m_base.clear();
        m_exceptions.clear();
    }
    void shrink_to_fit()
    {
        m_offset.shrink_to_fit();
        m_base.shrink_to_fit();
        m_exceptions.shrink_to_fit();
    }
    // Faults in the pages of the arrays' room for entries [from, to), within the reserved room (populate_pages.h).
    void populatePages(size_t from, size_t to);
    // Asks for 4 KiB pages for the arrays' reserved room (populate_pages.h, adviseSmallPages).
    void adviseSmallPages();
    // Gives back the arrays' room beyond the entries: large room in place, without a copy (populate_pages.h).
    void giveBackRoom();
    std::vector<int64_t> toVector() const
    {
        std::vector<int64_t> v(size());
        copyTo(0, size(), v.data());
        return v;
    }
    size_t exceptionCount() const { return m_exceptions.size(); }

    // An id of the column's entries as they are now, for a cache of what is computed from them (Trace::timeRange):
    // 0 until identify() gives one; unique in the process; copies share it (they hold the same entries); any change
    // to the entries resets it to 0.
    uint64_t contentId() const { return m_contentId; }
    uint64_t identify();

    // The column's own arrays, for a file format that stores them as they are (the binary trace format): an offset
    // per entry, two bases per block of kBlock entries (the second kUnsetBase where no entry of the block uses it),
    // and the exceptions as (index, value) sorted by index.
    static constexpr int64_t kUnsetBase = INT64_MAX;
    const std::vector<uint32_t>& offsets() const { return m_offset; }
    const std::vector<int64_t>& bases() const { return m_base; }
    const std::vector<std::pair<uint32_t, int64_t>>& exceptions() const { return m_exceptions; }
    // Takes such arrays as the column's, after checking that they describe a column: two bases per block, every
    // entry's base set and its value within int64, the escaped entries exactly those of the exceptions, in order.
    // On failure the column is left empty and the result names the first entry (or block, or exception) at fault.
    struct AdoptError {
        enum class Where { Entry, Base, Exception } where;
        size_t index;
        std::string message;
    };
    std::optional<AdoptError> adopt(std::vector<uint32_t> offsets, std::vector<int64_t> bases,
                                    std::vector<std::pair<uint32_t, int64_t>> exceptions);
    // The bytes the arrays hold: their entries, and their room where it is small (large room holds no memory once
    // given back: heldBytes, populate_pages.h).
    size_t memoryBytes() const;

    friend bool operator==(const TimeColumn& a, const TimeColumn& b)
    {
        if (a.size() != b.size())
            return false;
        const View va = a.view(), vb = b.view();
        for (size_t i = 0; i < va.size(); ++i)
            if (va[i] != vb[i])
                return false;
        return true;
    }

private:
    static constexpr int64_t kUnset = kUnsetBase; // a block's second base before any entry needs it
    static int64_t baseFor(int64_t v) { return v >= INT64_MIN + kSlack ? v - kSlack : INT64_MIN; }
    static bool fits(int64_t v, int64_t base) { return v >= base && uint64_t(v) - uint64_t(base) < kOffsetMask; }
    // Entry i's code: its offset from the first base of its block, or from the second (set here if unset), or
    // kEscape (then the caller keeps v as an exception).
    uint32_t encode(size_t i, int64_t v)
    {
        int64_t* base = &m_base[2 * (i >> kBlockBits)];
        if (fits(v, base[0])) [[likely]]
            return uint32_t(uint64_t(v) - uint64_t(base[0]));
        if (base[1] == kUnset)
            base[1] = baseFor(v);
        if (fits(v, base[1]))
            return uint32_t(uint64_t(v) - uint64_t(base[1])) | ~kOffsetMask;
        return kEscape;
    }
    void putException(size_t i, int64_t v);
    void eraseException(size_t i);

    std::vector<uint32_t> m_offset;
    std::vector<int64_t> m_base;         // two per block
    std::vector<Exception> m_exceptions; // sorted by index
    uint64_t m_contentId = 0;            // see contentId()
};

// The vectors' page calls of populate_pages.h, for a time column: callers that go over vectors and time columns alike
// (a reader's columns) call one name for both.
inline void populatePages(TimeColumn& c, size_t from, size_t to)
{
    c.populatePages(from, to);
}
inline void adviseSmallPages(TimeColumn& c)
{
    c.adviseSmallPages();
}

} // namespace streamscope
