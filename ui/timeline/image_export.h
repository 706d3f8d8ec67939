// Timeline images for slides and papers: PNG, SVG (QSvgGenerator) and PDF (QPdfWriter) of a given size, rendered
// without a display (works on the offscreen platform): a title, the legend of span kinds, row labels and the time
// axis with units, optionally the concurrency strip under it, in the light theme whatever the window's (theme.h).
// The format comes from the file extension (.png, .svg, .pdf).
#pragma once

#include "trace.h"

#include <QByteArray>
#include <QSize>
#include <QString>

#include <array>
#include <optional>
#include <utility>

namespace streamscope {

class Trace;
class TimelineView;

enum class ImageFormat { Png, Svg, Pdf };

// The format a path's extension names (case-insensitive), or nullopt.
std::optional<ImageFormat> imageFormatForPath(const QString& path);

// A title for an image: the scenario title (and variant) of the trace, else the file name of `tracePath`.
QString defaultImageTitle(const Trace& trace, const QString& tracePath = {});

// What an image shows and how (the Export Image dialog and `streamscope FILE --export` set them).
struct ImageOptions {
    QSize size{1600, 900}; // PNG and SVG: pixels (CSS pixels for SVG); PDF: points (1/72 in)
    bool crop = false;     // false: the rows grow to fill the height; true: the image is only as high as its rows
    double scale = 1.0;    // PNG: device pixels per pixel (2: a 3840 x 2160 file of a 1920 x 1080 layout, 192 dpi)
    double textScale = 0;  // text size against the 1280 x 720 design (1: 13 px); 0: from the size
    std::optional<std::pair<double, double>> range;         // absolute trace ns; none: the view's (or the whole trace)
    std::optional<std::array<bool, kFlowKindCount>> arrows; // arrow kinds drawn; none: the view's (or all)
    bool criticalPath = false; // the critical path outlined and joined, as Analysis shows it
    bool concurrency = false;  // the concurrency strip (GPU operations running over time) under the time axis
    bool legend = true;        // the legend of span and arrow kinds
    bool transparent = false;  // no background (PNG alpha, SVG and PDF without a filled page)
    QString title;
};

// A time range as the time axis reads it, from the trace's first span: "0.2ms..1.5ms", "200us..1.5ms", "0..3 s"
// (ns, us or µs, ms, s; a bare number is ms). Returns absolute trace ns, or nullopt with a message in `error`.
std::optional<std::pair<double, double>> parseImageTimeRange(const QString& text, const Trace& trace,
                                                             QString* error = nullptr);
// Arrow kinds: "all", "none", or kinds separated by commas ("launch,event,sync,implicit,call"). nullopt with a
// message in `error` when a name is unknown.
std::optional<std::array<bool, kFlowKindCount>> parseImageArrows(const QString& text, QString* error = nullptr);
// The arrow kinds drawn where nothing says otherwise: in a new window (View ▸ Dependency Arrows) and in an image made
// with `streamscope FILE --export` without --arrows. All but sync arrows: a 32-stream lesson draws one from every
// stream to each synchronize call, and they hide the arrows between streams.
std::array<bool, kFlowKindCount> defaultArrowKinds();

// The trace's whole time range (first span start to last end), for ImageOptions::range.
std::pair<double, double> wholeTraceRange(const Trace& trace);

bool exportTimelineImage(const Trace& trace, const QString& path, const ImageOptions& options,
                         QString* error = nullptr);
bool exportTimelineImage(const TimelineView& view, const QString& path, const ImageOptions& options,
                         QString* error = nullptr);

// Renders the whole trace (fit to view, all rows, all arrows) into `path`. `size` is in pixels for PNG and SVG and
// in points (1/72 in) for PDF. Returns false with a message in `error` (when given) on failure. Needs a
// QApplication (any platform, offscreen included).
bool exportTimelineImage(const Trace& trace, const QString& path, QSize size, const QString& title,
                         QString* error = nullptr);

// Renders what `view` shows (its time range, hidden arrow kinds, selection) at `size`, with all rows.
bool exportTimelineImage(const TimelineView& view, const QString& path, QSize size, const QString& title,
                         QString* error = nullptr);

// SVG text with every font-family a family that browsers and slide tools resolve alike: QSvgGenerator writes the
// family Qt asked fontconfig for ("Sans Serif", "Monospace"), a name no browser knows, so that the text fell back to
// the viewer's default (often a serif). Qt's generic names become CSS's (sans-serif, serif, monospace); a named
// family keeps its name with sans-serif after it.
QByteArray svgWithGenericFontFamilies(const QByteArray& svg);

} // namespace streamscope
