#include "span_display_names.h"

#include "format.h"
#include "span_names.h"
#include "trace.h"

namespace streamscope {

void SpanDisplayNames::reset(const Trace* trace)
{
    m_trace = trace;
    m_entries.clear();
    if (m_trace)
        m_entries.resize(m_trace->strings.size());
}

const SpanDisplayNames::Entry& SpanDisplayNames::entry(uint32_t index) const
{
    static const Entry none{{}, {}, true};
    if (!m_trace || index >= m_trace->strings.size())
        return none;
    if (m_entries.size() < m_trace->strings.size()) // strings interned after reset
        m_entries.resize(m_trace->strings.size());
    Entry& e = m_entries[index];
    if (!e.ready) {
        const std::string_view raw = m_trace->strings[index];
        e.shortName = qs(shortSpanName(raw));
        const QString full = qs(demangledName(raw));
        if (full != e.shortName)
            e.fullName = full;
        e.ready = true;
    }
    return e;
}

const QString& SpanDisplayNames::shortNameOfString(uint32_t index) const
{
    return entry(index).shortName;
}

const QString& SpanDisplayNames::fullNameOfString(uint32_t index) const
{
    const Entry& e = entry(index);
    return e.fullName.isEmpty() ? e.shortName : e.fullName;
}

const QString& SpanDisplayNames::shortName(uint32_t span) const
{
    return shortNameOfString(m_trace && span < m_trace->spanCount() ? m_trace->spans.name[span] : UINT32_MAX);
}

const QString& SpanDisplayNames::fullName(uint32_t span) const
{
    return fullNameOfString(m_trace && span < m_trace->spanCount() ? m_trace->spans.name[span] : UINT32_MAX);
}

bool SpanDisplayNames::isShortened(uint32_t span) const
{
    return m_trace && span < m_trace->spanCount() && !entry(m_trace->spans.name[span]).fullName.isEmpty();
}

} // namespace streamscope
