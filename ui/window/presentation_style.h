// What presentation mode's files share (presentation_mode.cpp, presentation_slides.cpp): the projector colours and
// limits, the diagnostics a slide explains, and small HTML helpers. Internal to presentation mode.
#pragma once

#include "analysis.h"
#include "diagnostics.h"
#include "document_loader.h"
#include "format.h"
#include "timeline_view.h"

#include <QString>

#include <algorithm>
#include <cmath>
#include <vector>

namespace streamscope::presentation_detail {

// Colours for a projector: near-black text on white, saturated accents that stay apart when washed out.
inline constexpr auto kInk = "#111111";
inline constexpr auto kMuted = "#333333";
inline constexpr auto kAccent = "#0060A0";
inline constexpr auto kPass = "#15803d";
inline constexpr auto kFail = "#c62828";
inline constexpr auto kHighlight = "#F03C96"; // the timeline's highlight outline
inline constexpr int kMaxOpsListed = 6;
inline constexpr int kMaxThreadsListed = 4;
inline constexpr size_t kMaxHighlightedSpans = 400;
inline constexpr int kMaxLanesAboveText = 12;
inline constexpr size_t kMaxDiagnosticsShown = 3; // timelines with more lanes go beside the explanation

// The diagnostics to explain, at most kMaxDiagnosticsShown: the one naming the effect the lesson teaches first,
// then the others in rule order.
inline std::vector<const Diagnostic*> diagnosticsToShow(const TraceReport& report)
{
    std::vector<const Diagnostic*> shown;
    for (const Diagnostic& d : report.diagnostics)
        if (qs(d.rule) == report.effect) {
            shown.push_back(&d);
            break;
        }
    for (const Diagnostic& d : report.diagnostics)
        if (shown.size() < kMaxDiagnosticsShown && (shown.empty() || &d != shown.front()))
            shown.push_back(&d);
    return shown;
}

inline QString esc(const QString& s)
{
    return s.toHtmlEscaped();
}

inline QString px(double size)
{
    return QString::number(std::max(8, int(std::lround(size)))) + QStringLiteral("px");
}

inline QString colour(const char* name)
{
    return QLatin1String(name);
}

inline QString formatDurationNs(long long ns)
{
    return TimelineView::formatDuration(double(ns));
}

} // namespace streamscope::presentation_detail
