// Timeline images for slides and papers: PNG, SVG (QSvgGenerator) and PDF (QPdfWriter) of a given size, rendered
// without a display (works on the offscreen platform): a title, the legend of span kinds, row labels and the time
// axis with units, in the light theme whatever the window's (theme.h). The format comes from the file extension
// (.png, .svg, .pdf).
#pragma once

#include <QByteArray>
#include <QSize>
#include <QString>

#include <optional>

namespace streamscope {

class Trace;
class TimelineView;

enum class ImageFormat { Png, Svg, Pdf };

// The format a path's extension names (case-insensitive), or nullopt.
std::optional<ImageFormat> imageFormatForPath(const QString& path);

// A title for an image: the scenario title (and variant) of the trace, else the file name of `tracePath`.
QString defaultImageTitle(const Trace& trace, const QString& tracePath = {});

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
