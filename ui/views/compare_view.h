// The compare window: two runs side by side — A above B, each on its own timeline, both starting at 0 on the same
// time scale (zoom or pan one and the other follows, row labels of equal width so that the same time is at the
// same x) — with what changed between them: a table of metrics from compareTraces (makespan, speedup over the
// work serialized, concurrency, copy/compute overlap, idle time, busy time per stream, overlap per stream pair)
// with A, B and the change, and the concurrency histograms of both runs in one chart.
//
// The runs come from the simulator (a scenario against one of its variants, or against another scenario), from
// files (any scenario or trace the app opens), or from the replay of a GPU recording with a setting changed (the
// recording against the replay, the replay's error on the unchanged run stated first, above the summary); loading
// and simulating happen on a worker thread, and comparisonShown or failed tells when it is done.
#pragma once

#include "analysis.h"
#include "scenario.h"
#include "trace.h"
#include "whatif.h"

#include <QString>
#include <QStringList>
#include <QWidget>

#include <functional>
#include <memory>
#include <optional>

class QCustomPlot;
class QLabel;
class QSplitter;
class QTableWidget;

namespace streamscope {

class TimelineView;

// The scenario with one of its variants applied (the variant's changes on top of the scenario as it is now).
Result<Scenario> scenarioWithVariant(const Scenario& scenario, const QString& variant);

// Asks which variant of `scenario` to compare with (a list of their titles): its id, an empty string for
// "without the variant" (offered when `offerWithout`), or nothing when cancelled or there is nothing to choose
// (then a message says why). `current` (the variant applied now) is left out of the list.
std::optional<QString> chooseVariant(QWidget* parent, const QString& documentTitle, const Scenario& scenario,
                                     const QString& current, bool offerWithout);

// The rows of the metrics table, for the view and for reports: section headers have empty values.
struct ComparisonRow {
    QString metric;
    QString a, b, change;
    int better = 0;       // +1: B is better on this metric, -1: worse, 0: neither (or no judgement)
    bool section = false; // a heading ("Streams: busy time")
    QString toolTip;
};
std::vector<ComparisonRow> comparisonRows(const TraceComparison& c);

class CompareView : public QWidget {
    Q_OBJECT
public:
    explicit CompareView(QWidget* parent = nullptr);
    ~CompareView() override;

    // Shows two finalized traces; the names label them ("04-default-stream", "variant “blocking”").
    void setTraces(std::shared_ptr<const Trace> a, const QString& nameA, std::shared_ptr<const Trace> b,
                   const QString& nameB);
    // Simulates a scenario (A) and the same with `variant` applied (B).
    void compareWithVariant(std::shared_ptr<const Scenario> scenario, const QString& nameA, const QString& variant,
                            const QString& profileId = {});
    // Simulates two scenarios.
    void compareScenarios(std::shared_ptr<const Scenario> a, const QString& nameA, std::shared_ptr<const Scenario> b,
                          const QString& nameB, const QString& profileId = {});
    // A trace (A) against a file (B): a trace in any format the app opens, or a scenario (simulated).
    void compareWithFile(std::shared_ptr<const Trace> a, const QString& nameA, const QString& path,
                         const QString& profileId = {});

    // A GPU recording (A) against its replay with `settings` changed (B), core replayRecordedRun: the notice states
    // the replay's error on the unchanged run, then how the measured durations were carried over.
    void compareWithReplay(std::shared_ptr<const Trace> recorded, const QString& nameA,
                           std::vector<ReplaySetting> settings);

    bool isBusy() const { return m_busy; }
    // What the comparison shown says first (the replay's error); empty for other comparisons.
    QString notice() const { return m_notice; }
    QString nameA() const { return m_nameA; }
    QString nameB() const { return m_nameB; }
    const std::optional<TraceComparison>& comparison() const { return m_comparison; }
    TimelineView* timelineA() const { return m_timelineA; }
    TimelineView* timelineB() const { return m_timelineB; }
    QTableWidget* metricsTable() const { return m_table; }
    // The histogram chart: one QCPBars per run (A, then B), key k, value ns.
    QCustomPlot* histogramPlot() const { return m_histogram; }
    // The row of the table whose metric is `metric` (its texts: metric, A, B, change), or empty.
    QStringList metricRow(const QString& metric) const;
    // The summary line above the timelines.
    QString summary() const;

public Q_SLOTS:
    // Both timelines show everything (the longer run's length).
    void fitBoth();

Q_SIGNALS:
    void comparisonShown();
    void failed(const QString& message);

protected:
    void changeEvent(QEvent* event) override; // a new palette: the table, histogram and messages re-coloured

private:
    struct Loaded;
    void start(const QString& what, std::function<Result<Loaded>()> work);
    void showLoaded(Loaded loaded);
    void syncRange(TimelineView* from, TimelineView* to);
    void alignRowLabels();
    void fillTable();
    void createHistogram(); // compare_view_histogram.cpp
    void fillHistogram();   // compare_view_histogram.cpp
    void showMessage(const QString& text, bool error);
    void applyTheme(); // the summary's and the hint's colours

    TimelineView* m_timelineA = nullptr;
    TimelineView* m_timelineB = nullptr;
    QLabel* m_summary = nullptr;
    QLabel* m_hint = nullptr;
    QLabel* m_captionA = nullptr;
    QLabel* m_captionB = nullptr;
    QTableWidget* m_table = nullptr;
    QCustomPlot* m_histogram = nullptr;
    QSplitter* m_splitter = nullptr;
    QString m_nameA, m_nameB;
    QString m_notice;
    std::optional<TraceComparison> m_comparison;
    bool m_summaryError = false; // the summary is an error message
    bool m_syncing = false;
    bool m_busy = false;
    quint64 m_generation = 0;
};

} // namespace streamscope
