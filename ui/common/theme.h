// The window's colours, light and dark: one home for every colour the panels and plots draw with (plot background,
// axes, grid and text; the span and flow kinds; pass, fail, warning and info text; the tinted boxes of notes, notices
// and errors), and the choice of theme (View ▸ Theme: System, Light or Dark, kept in QSettings).
//
// A widget's theme follows its palette: dark when the palette's window colour is dark (Theme::of). So the window
// re-themes itself on QEvent::PaletteChange, a system palette that is dark is honoured without any setting, and a
// widget under a palette of its own (presentation mode's white stage) gets the matching theme. Image exports pick
// their theme themselves (light, for slides and papers: image_export.h).
//
// Every text colour reads at WCAG AA (contrast ratio 4.5:1 or more) on the background it is drawn on (the palette's
// base or window colour, or its box); kind colours, drawn as bars and lines, reach 3:1 on the plot background where
// their hue allows (the pale range slate is a frame around work, not work, and stays faint on purpose).
#pragma once

#include "trace.h"

#include <QColor>
#include <QPalette>
#include <QString>

#include <array>
#include <functional>
#include <optional>

class QEvent;
class QObject;
class QWidget;

namespace streamscope {

// A tinted box: a note in a panel, a notice bar, an error message.
struct ThemeBox {
    QColor background, border, text;
};

struct Theme {
    bool isDark = false;

    // Plots: the timeline, the concurrency strip, the compare window's histogram, the sweep chart.
    QColor plotBackground, plotText, plotTitle, plotAxis, plotSubTick;
    QColor plotGrid;                               // grid lines of the charts (opaque)
    QColor timelineGrid;                           // the timeline's time grid, drawn over row shading (translucent)
    QColor plotFaintText;                          // labels of empty bars ("none")
    QColor rowHeader, rowHeaderRule, rowAlternate; // the timeline's row shading: device headers, every other row
    QColor rowHeaderText, rowText, rowRangesText;  // row labels
    QColor scrollTrack, scrollThumb;               // the timeline's scroll bar
    QColor hintBackground, hintText;               // "12 arrows in view — zoom in to show them"
    QColor measureBand, measureLine, measureLabel, measureLabelText; // the measured range and its duration box
    QColor hoverOutline, selectionOuter, selectionInner;             // around the hovered and the selected bar
    QColor arrowHalo;                                                // under the selected span's arrows
    QColor criticalPath;                                             // a colour no span kind uses
    QColor seriesBlue, seriesOrange, seriesGreen, seriesRed; // chart series: A and B, makespan and speedups, failures

    // Text on the palette's base or window colour.
    QColor muted; // labels of values ("Makespan", "stream")
    QColor faint; // hints, "No trace yet."
    QColor pass, fail, warning, info;
    QColor better, worse;     // the compare table's change column
    QColor sectionBackground; // the compare table's section rows

    ThemeBox note;   // the lesson variant's note in the analysis panel; warning notices
    ThemeBox effect; // "What this run shows" when the effect shows (its title in `pass`)
    ThemeBox notice; // information notices (the embedded scenario, CUPTI not used)
    ThemeBox error;  // run and file errors above the timeline, in the sweep and compare windows

    std::array<QColor, kSpanKindCount> spanKinds;
    std::array<QColor, kFlowKindCount> flowKinds;

    QColor spanKind(SpanKind kind) const { return spanKinds[size_t(kind)]; }
    QColor flowKind(FlowKind kind) const { return flowKinds[size_t(kind)]; }
    // Dark text on light bars, white on dark ones.
    QColor spanKindText(SpanKind kind) const;

    // The rich-text style sheet of the panels' HTML (QTextDocument::setDefaultStyleSheet): the classes muted, faint,
    // pass, fail, warning, info (text colours) and note, effect (box backgrounds) in this theme's colours, so that
    // the HTML names what a text is and the theme says how it looks.
    QString richTextStyleSheet() const;

    static const Theme& light();
    static const Theme& dark();
    // Dark when the palette's window colour is (lightness below 128).
    static const Theme& forPalette(const QPalette& palette);
    // The theme of a widget's palette; of the application's for nullptr.
    static const Theme& of(const QWidget* widget);
    // The application palette's.
    static const Theme& current();
};

// Whether an event means that a widget's theme may have changed (its palette, or the application's).
bool isThemeChange(const QEvent* event);

// Calls `apply` each time the application's palette changes (a theme chosen, a new system palette), for as long as
// `context` lives; Theme::current() is the new theme then. For widgets coloured by a style sheet: Qt sends them no
// PaletteChange when the application's palette changes, since the style sheet's palette is their own.
void onApplicationPaletteChange(QObject* context, std::function<void()> apply);

// WCAG 2 contrast ratio of two opaque colours, 1 to 21 (AA asks 4.5 for text, 3 for graphics).
double contrastRatio(const QColor& a, const QColor& b);

// ---- the choice: View ▸ Theme and --theme -------------------------------------------------------------------------

enum class ThemeChoice { System, Light, Dark };

QString themeChoiceName(ThemeChoice choice); // "system", "light", "dark"
std::optional<ThemeChoice> parseThemeChoice(const QString& name);

// Fusion's palettes: its own light one, and a dark one with the same roles.
QPalette lightPalette();
QPalette darkPalette();

// Sets the application's style and palette: Light and Dark are the Fusion style with lightPalette() or
// darkPalette(); System puts back the style the application started with and the platform's palette (on Qt 6.5 and
// later, the dark palette where the platform says it prefers dark but its style draws light). Every widget gets a
// QEvent::PaletteChange. Needs a QApplication.
void applyThemeChoice(ThemeChoice choice);
// What applyThemeChoice last set (System before any call).
ThemeChoice appliedThemeChoice();
// The choice kept in QSettings ("view/theme"); System when none or an unknown one is kept.
ThemeChoice savedThemeChoice();
void saveThemeChoice(ThemeChoice choice);

} // namespace streamscope
