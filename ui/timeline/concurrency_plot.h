// Concurrency under the timeline: how many GPU operations ran at once. Two views of the same question, switched by
// the "Histogram" button in the strip's corner (the choice is remembered):
// - over time: a step function on the timeline's time axis, aligned under it and following its zoom and pan;
// - histogram: horizontal bars, one per k = 0..max, the time during which exactly k GPU operations ran (from
//   analyzeTrace's ConcurrencyProfile::timeAtNs), each labelled with its duration and share of the analysed range
//   (the makespan: first GPU operation start to last end). With several devices a chooser picks all or one.
// Both keep "operations running" on the vertical axis, so switching changes only what the horizontal axis means.
// The strip is short (70-300 px, 120 px for lesson 11's 33 histogram rows at 1280x720): its axis texts are fitted to
// the size it gets (concurrency_plot_fit.cpp), never cut.
#pragma once

#include "analysis.h"
#include "timeline_plottable.h" // includes QCustomPlot (see there)
#include "trace.h"

#include <QStringList>

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

class QComboBox;
class QToolButton;

namespace streamscope {

class TimelineView;

// Time with exactly k GPU operations running, k = 0..max, over the analysed range of one device or all of them.
struct ConcurrencyHistogram {
    int device = -1;               // -1: all devices
    std::vector<int64_t> timeAtNs; // [k]
    int64_t totalNs = 0;           // the analysed range (sum of timeAtNs): the makespan of the device or run
};

// Tick labels for a duration axis that starts at 0: "0", "0.5 ms", "1 ms", in the unit the range calls for.
class DurationTicker : public QCPAxisTicker {
protected:
    double getTickStep(const QCPRange& range) override;
    QString getTickLabel(double tick, const QLocale& locale, QChar formatChar, int precision) override;

private:
    double m_scale = 1;
    QString m_suffix;
};

// The count axis: over time, 0 and the peak always (the number a reader looks for first; an exported strip of a
// 3-operation peak was labelled "2" alone), and between them multiples of 1, 2 or 5 × 10^k where the axis has
// room (tickCount() gaps in all); with no peak set (the histogram's rows), integers as QCPAxisTickerFixed makes them.
class CountTicker : public QCPAxisTickerFixed {
public:
    void setPeak(int peak) { m_peak = std::max(0, peak); }

protected:
    QVector<double> createTickVector(double tickStep, const QCPRange& range) override;

private:
    int m_peak = 0;
};

// Per device and overall, from analyzeTrace (index 0: all devices, then ascending device index).
std::vector<ConcurrencyHistogram> concurrencyHistograms(const Trace& trace);

// Bar labels: "1.02 ms · 25 %"; "none" for k that never occurred.
QString histogramBarLabel(int64_t ns, int64_t totalNs);

// What the plot draws over time, built once per trace (off the GUI thread for a big one, with the timeline's
// layout): the whole step function of the GPU operations running, and the most of each block of kStepBlock steps,
// so that a pixel column's maximum costs O(its blocks), not O(its steps).
struct ConcurrencyPlotData {
    static constexpr size_t kStepBlock = 64;
    ConcurrencySeries series;
    std::vector<uint16_t> blockMax;
    int64_t origin = 0; // the trace's first span: the plot's times are relative to it
    int64_t end = 0;    // the trace's last end: the last step closes there
    // The histograms too, where they were asked for (a strip showing them when its steps were counted off the GUI
    // thread); otherwise the plot computes them when it first shows them.
    std::optional<std::vector<ConcurrencyHistogram>> histograms;
};
// `cancel`, where given and set meanwhile (another trace shown), stops the counting early: what it returns then is
// incomplete, for a trace no longer shown.
std::shared_ptr<const ConcurrencyPlotData> makeConcurrencyPlotData(const Trace& trace, bool withHistograms = false,
                                                                   const std::atomic<bool>* cancel = nullptr);

class ConcurrencyPlot : public QCustomPlot {
    Q_OBJECT
public:
    enum class Mode { OverTime, Histogram };

    explicit ConcurrencyPlot(QWidget* parent = nullptr);
    ~ConcurrencyPlot() override;

    // `data`: the trace's plot data built beforehand (makeConcurrencyPlotData); null: built now, unless
    // `dataToCome`: then the strip says that it is counting until setData brings them (a big trace is drawn first).
    void setTrace(std::shared_ptr<const Trace> trace, std::shared_ptr<const ConcurrencyPlotData> data = nullptr,
                  bool dataToCome = false);
    // The data counted for `trace` off the GUI thread; dropped where another trace is shown by now.
    void setData(const std::shared_ptr<const Trace>& trace, std::shared_ptr<const ConcurrencyPlotData> data);
    // True from setTrace(..., dataToCome) until setData: the strip draws nothing but a note that it is counting.
    bool isCounting() const { return m_counting; }
    // Follows the timeline: the same visible time range, the plot area aligned under the timeline's.
    void followTimeline(TimelineView* timeline);
    // The step function shown: points (time ns relative to the trace's first span, operations running). Where the
    // view holds more steps than pixel columns, one point per column: the most operations running within it.
    const QCPGraph* graph0() const { return m_graph; }
    // Operations running at `t` (ns relative to the trace's first span), from the whole step function; -1 outside
    // the trace.
    int runningAt(double t) const;
    int maxConcurrency() const { return m_max; }
    // The visible range in absolute ns, as on the timeline (kept while the histogram is shown).
    std::pair<double, double> visibleTimeRange() const;

    Mode mode() const { return m_mode; }
    void setMode(Mode mode);
    QToolButton* modeButton() const { return m_modeButton; }

    // The histogram (computed when first shown): the chosen device's, or all devices'.
    const ConcurrencyHistogram& histogram();
    // Devices with GPU work (the chooser lists them when there are two or more); -1 is all devices.
    std::vector<int> histogramDevices();
    int histogramDevice() const { return m_histogramDevice; }
    void setHistogramDevice(int device);
    QComboBox* deviceChooser() const { return m_deviceBox; }
    // The bars drawn in histogram mode (key: k, value: ns) and their labels, bottom (k = 0) first.
    const QCPBars* histogramBars() const { return m_bars; }
    QStringList histogramBarLabels() const;
    // Where the mode button sits: in the left margin (the corner under the timeline's row labels) or, where that
    // margin is too narrow for it beside the vertical axis over time, in the top right corner.
    bool modeButtonInRightCorner() const { return m_buttonInRightCorner; }

    // For an image (image_export.cpp): over time whatever the window's choice (the choice stays as it is), in
    // `theme`, text of `px` pixels, the plot area at `plotMargins` (aligned under the timeline's), no controls.
    void prepareForImage(const Theme& theme, int px, const QMargins& plotMargins);

public Q_SLOTS:
    void setVisibleTimeRange(double startNs, double endNs);

Q_SIGNALS:
    void modeChanged(ConcurrencyPlot::Mode mode);

public:
    // Its layout's minimum width grows with the width it was given (as the timeline's, TimelineView::minimumSizeHint):
    // a minimum that follows the timeline's instead.
    QSize minimumSizeHint() const override;

protected:
    void resizeEvent(QResizeEvent* event) override;
    bool event(QEvent* event) override;
    void changeEvent(QEvent* event) override; // a new palette: the theme's colours

private:
    void applyTheme();
    void alignWith(const TimelineView* timeline);
    void ensureHistograms();
    void setHistograms(std::vector<ConcurrencyHistogram> histograms); // and the device chooser's entries
    void showData();                                                  // m_data's steps, in the current mode
    void updateHistogram();
    void layoutHistogramLabels();
    void applyMode();
    void placeControls();
    void updateHeight();
    void updateCountTicks();
    void fitCountAxis(int plotHeight, const QFont& font);
    // Fits the axes to the strip's size (concurrency_plot_fit.cpp): the vertical axis' title as long as its height
    // allows ("operations running", wrapped, "running"), as many tick labels as fit, the histogram's time axis label
    // shortened to its width, and a left margin wide enough for the mode button beside the vertical axis. True when
    // something changed (a replot then lays the strip out again).
    bool fitToSize();
    // The histogram's padding above its top row and below its bottom one (rows): half a label line, so that the
    // labels of the end rows are not cut by the plot's edge.
    double histogramRowPadding(int topRow, int labelHeight) const;
    void updateShownSteps();                      // the graph's points for the visible range and width
    int maxOfSteps(size_t from, size_t to) const; // the most of the step counts [from, to)
    size_t stepCount() const;                     // the steps, the end of the trace closing the last one
    double stepKey(size_t i) const;               // step i's time relative to m_origin
    int stepValue(size_t i) const;
    size_t firstStepAfter(double t) const; // the first step later than t (stepCount() if none)

    std::shared_ptr<const Trace> m_trace;
    QCPGraph* m_graph = nullptr;
    QCPBars* m_bars = nullptr;
    std::vector<QCPItemText*> m_labels;
    QSharedPointer<CountTicker> m_countTicker;
    QSharedPointer<QCPAxisTicker> m_durationTicker;
    QToolButton* m_modeButton = nullptr;
    QComboBox* m_deviceBox = nullptr;
    const Theme* m_theme = nullptr;
    const Theme* m_fixedTheme = nullptr; // images: the light theme whatever the window's
    Mode m_mode = Mode::OverTime;
    double m_origin = 0;
    std::pair<double, double> m_timeRange{0, 1}; // relative to m_origin
    int m_max = 0;
    std::shared_ptr<const ConcurrencyPlotData> m_data;             // null: no trace
    TimeColumn::View m_stepTimes;                                  // m_data's, read in loops
    std::optional<std::vector<ConcurrencyHistogram>> m_histograms; // computed when the histogram is first shown
    int m_histogramDevice = -1;
    ConcurrencyHistogram m_shown;
    QStringList m_timeLabels;  // the histogram's time axis label, longest first (fitToSize picks)
    QMargins m_alignedMargins; // the timeline's plot margins (alignWith)
    // What fitToSize fitted the texts to: a zoom or pan replots the strip without changing any of it.
    struct FitKey {
        QRect plot;
        QSize size;
        Mode mode;
        QMargins aligned, margins;
        int max, rows;
        bool chooser;
        QString timeLabel;
        QFont labelFont;
        bool operator==(const FitKey&) const = default;
    };
    std::optional<FitKey> m_fitted;
    bool m_buttonInRightCorner = false;
    bool m_counting = false;               // setTrace(..., dataToCome) until setData
    QCPItemText* m_countingNote = nullptr; // "Counting the GPU operations running…", while m_counting
};

} // namespace streamscope
