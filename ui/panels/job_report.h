// The analysis panel's section on a job of several ranks (docs/RANKS.md): how the ranks' clocks were aligned and how
// well, what the merge noted (missing ranks), a table of the ranks (GPU busy, time in collectives, time waiting in
// them for the last rank, calls reached last) and one of the collective calls (ranks, start, length, who arrived
// last, how long the others waited).
#pragma once

#include <QString>

namespace streamscope {

struct AnalyzedTrace;

// The section as HTML (the panel's classes: muted, faint, warning); empty for a trace of no ranks.
QString jobReportHtml(const AnalyzedTrace& trace);

} // namespace streamscope
