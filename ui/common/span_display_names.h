// The names the window shows for spans (core/model/span_names.h): the short form ("vectorized_elementwise_kernel<…>")
// in bars, the span table, titles and lists, and the full demangled name where there is room for it (tooltips, the
// inspector). Kernel names as PyTorch or Nsight record them are whole template signatures of a few hundred
// characters; demangling and shortening one takes microseconds, so each distinct name of a trace (an index into
// Trace::strings) is done once, on first use: a trace of a million spans costs one per kernel name, not one per
// span, table row or frame.
#pragma once

#include <QString>

#include <cstdint>
#include <vector>

namespace streamscope {

class Trace;

class SpanDisplayNames {
public:
    SpanDisplayNames() = default;
    explicit SpanDisplayNames(const Trace* trace) { reset(trace); }

    // Forgets the names of the previous trace. `trace` (nullptr: none) must outlive the names' use, and is read
    // on the thread that asks.
    void reset(const Trace* trace);
    const Trace* trace() const { return m_trace; }

    // Of span `span` of the trace.
    const QString& shortName(uint32_t span) const;
    const QString& fullName(uint32_t span) const; // demangled, not shortened
    // Whether the short name leaves something out (then tooltips add the full one).
    bool isShortened(uint32_t span) const;

    // Of the string at `index` of Trace::strings.
    const QString& shortNameOfString(uint32_t index) const;
    const QString& fullNameOfString(uint32_t index) const;

private:
    struct Entry {
        QString shortName;
        QString fullName; // empty when it is the short name
        bool ready = false;
    };
    const Entry& entry(uint32_t index) const;

    const Trace* m_trace = nullptr;
    mutable std::vector<Entry> m_entries;
};

} // namespace streamscope
