// The analysis of a trace (core/analysis/analysis.h): metrics on small traces whose answers are worked out by hand in
// the comments, the critical path through hand-made dependency graphs and through every lesson, the JSON and text
// forms, the comparison of two traces and the what-if sweeps. This header holds what the test's files share: the
// helpers and the test class. The tests: tst_analysis.cpp (metrics, JSON and text, comparison),
// tst_analysis_critical_path.cpp (the critical path), tst_analysis_sweeps.cpp (the what-if sweeps).
#pragma once

#include "analysis.h"
#include "diagnostics.h"
#include "expect.h"
#include "resources.h"
#include "runner.h"
#include "scenario_json.h"
#include "simulator.h"
#include "trace_formats.h"
#include "trace_json.h"
#include "trace_spec.h"
#include "whatif.h"

#include <QTest>

#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <map>
#include <string>

using namespace streamscope;
using streamscope::testing::traceOf;

inline QString q(const std::string& s)
{
    return QString::fromStdString(s);
}
inline QString operator""_q(const char* s, size_t n)
{
    return QString::fromUtf8(s, qsizetype(n));
}

inline QString joined(const std::vector<int64_t>& v)
{
    QStringList parts;
    for (int64_t x : v)
        parts << QString::number(x);
    return parts.join(QLatin1Char(','));
}

inline QString stepsText(const std::vector<ConcurrencyStep>& steps)
{
    QStringList parts;
    for (const auto& s : steps)
        parts << QString::number(s.time) + QLatin1Char('=') + QString::number(s.count);
    return parts.join(QLatin1Char(' '));
}

inline QString gapsText(const std::vector<Interval>& gaps)
{
    QStringList parts;
    for (const auto& g : gaps)
        parts << QString::number(g.start) + QLatin1Char('~') + QString::number(g.end);
    return parts.join(QLatin1Char(' '));
}

// "name:reason:contribution:idle" per segment.
inline QString pathText(const CriticalPath& p)
{
    QStringList parts;
    for (const auto& s : p.segments)
        parts << q(s.name) + QLatin1Char(':') + q(std::string(toString(s.reason))) + QLatin1Char(':')
                + QString::number(s.contributionNs) + QLatin1Char(':') + QString::number(s.idleBeforeNs);
    return parts.join(QLatin1Char(' '));
}

inline Scenario lesson(const std::string& id, const std::string& variant = {})
{
    auto p = findPreset(id);
    if (!p)
        qFatal("%s", p.error().toString().c_str());
    auto l = loadScenarioFile(p->path, variant);
    if (!l)
        qFatal("%s", l.error().toString().c_str());
    return std::move(l->scenario);
}

inline Trace simulate(const Scenario& s)
{
    SimulatorBackend sim;
    auto out = runScenario(s, sim);
    if (!out.status)
        qFatal("%s", out.status.error().toString().c_str());
    return std::move(out.trace);
}

// Every lesson and variant (sim), and every recorded trace: the inputs of the property tests.
inline void addEveryTrace()
{
    QTest::addColumn<QString>("lesson");
    QTest::addColumn<QString>("variant");
    QTest::addColumn<QString>("file");
    for (const auto& p : listPresets()) {
        QTest::newRow(("sim " + p.id).c_str()) << q(p.id) << QString() << QString();
        for (const auto& v : p.variants)
            QTest::newRow(("sim " + p.id + "/" + v).c_str()) << q(p.id) << q(v) << QString();
    }
    const std::filesystem::path dir = std::filesystem::path(STREAMSCOPE_SOURCE_DIR) / "tests" / "data" / "h200";
    std::vector<std::string> files;
    for (const auto& d : {dir, dir / "variants"})
        for (const auto& e : std::filesystem::directory_iterator(d))
            if (e.path().extension() == ".json")
                files.push_back(e.path().string());
    std::sort(files.begin(), files.end());
    for (const auto& f : files)
        QTest::newRow(("h200 " + std::filesystem::path(f).stem().string()).c_str()) << QString() << QString() << q(f);
}

inline Trace fetchTrace()
{
    QFETCH(QString, lesson);
    QFETCH(QString, variant);
    QFETCH(QString, file);
    if (!file.isEmpty()) {
        auto t = importTraceFile(file.toStdString()); // native, or another tool's format
        if (!t)
            qFatal("%s", t.error().toString().c_str());
        return std::move(*t);
    }
    return simulate(::lesson(lesson.toStdString(), variant.toStdString()));
}

inline double metric(const Trace& t, const std::string& name, std::vector<std::string> streams = {})
{
    Expectation e;
    e.metric = name;
    e.streams = std::move(streams);
    auto r = evaluateMetric(t, e);
    return r ? *r : -1;
}

class TestAnalysis : public QObject {
    Q_OBJECT

private slots:
    void initTestCase();

    // ---- metrics on hand-made traces ----------------------------------------------------------------------------
    void metrics_data();
    void metrics();
    void twoDevices();
    void concurrencySeriesAgreesWithTheProfile();
    void concurrencySeriesStopsWhenCancelled();
    void metricsAgreeWithACountPerNanosecond();
    void launchRate();
    void emptyTrace();
    void unfinalizedTrace();
    void metricsAgreeWithChecks_data();
    void metricsAgreeWithChecks();

    // ---- critical path ------------------------------------------------------------------------------------------
    void criticalPath_data();
    void criticalPath();
    void criticalPathOfLessons_data();
    void criticalPathOfLessons();
    void incomingFlowsSharedGiveTheSameResults_data();
    void incomingFlowsSharedGiveTheSameResults();
    void criticalPathNamesTheLessonsDependency_data();
    void criticalPathNamesTheLessonsDependency();
    void criticalPathFollowsResources_data();
    void criticalPathFollowsResources();
    void criticalPathInfersResources_data();
    void criticalPathInfersResources();
    void criticalPathNamesEveryLongWait_data();
    void criticalPathNamesEveryLongWait();
    void criticalPathOfAMillionSpans();
    void criticalPathNamesCollectiveWaits();
    void criticalPathCollectiveWaitOfALesson();

    // ---- JSON and text ------------------------------------------------------------------------------------------
    void json_data();
    void json();
    void jsonOnOneLine();
    void formatDuration_data();
    void formatDuration();

    // ---- comparison ---------------------------------------------------------------------------------------------
    void compare();
    void compareUnmatchedStreams();

    // ---- sweeps -------------------------------------------------------------------------------------------------
    void sweepStreams_data();
    void sweepStreams();
    void sweepKeepsDependencies();
    void sweepChunksAndSize();
    void sweepErrors_data();
    void sweepErrors();
    void runSweep();
    void knobNames();
};
