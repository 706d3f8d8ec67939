// The main window on the offscreen platform: opening a lesson runs it on the simulator and the timeline gets the
// trace; a quick-control change re-simulates; selection follows between timeline, span table and inspector; saving
// is atomic and round-trips; traces open by content; GPU runs go through streamscope-cli (a stand-in script here)
// with errors shown and Cancel killing the child; and the built app exports images headless. This header holds what
// the test's files share: the helpers and the test class. The tests: tst_mainwindow.cpp (runs, on the simulator and
// through the CLI, and the views that follow them), tst_mainwindow_documents.cpp (saving, autosave, opening scenarios
// and traces), tst_mainwindow_export.cpp (images, from the window and headless).
#pragma once

#include "analysis.h"
#include "analysis_panel.h"
#include "concurrency_plot.h"
#include "document_loader.h"
#include "format.h"
#include "main_window.h"
#include "metrics.h"
#include "property_editor.h"
#include "quick_controls.h"
#include "run_controller.h"
#include "scenario_editor.h"
#include "scenario_json.h"
#include "scenario_model.h"
#include "span_inspector.h"
#include "span_table_model.h"
#include "timeline_view.h"
#include "trace_import.h"
#include "trace_json.h"
#include "window_fixture.h"

#include <QCoreApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QImage>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QMenu>
#include <QProcess>
#include <QProgressBar>
#include <QSet>
#include <QSettings>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QToolBar>
#include <QTreeView>
#include <QUndoStack>

using namespace streamscope;

inline QString appPath()
{
    // The app is built next to streamscope-cli.
    return QFileInfo(QStringLiteral(STREAMSCOPE_CLI)).dir().filePath(QStringLiteral("streamscope"));
}

// A stand-in for streamscope-cli: a shell script.
inline QString writeScript(const QTemporaryDir& dir, const QString& name, const QString& body)
{
    const QString path = dir.filePath(name);
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly))
        return {};
    f.write("#!/bin/sh\n");
    f.write(body.toUtf8());
    f.close();
    f.setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner);
    return path;
}

struct Process {
    int code = -1;
    QString out, err;
};

inline Process runApp(const QStringList& args, const QProcessEnvironment& env)
{
    QProcess p;
    p.setProcessEnvironment(env);
    p.start(appPath(), args);
    Process r;
    if (!p.waitForFinished(60000)) {
        p.kill();
        p.waitForFinished();
        r.err = QStringLiteral("timed out");
        return r;
    }
    r.code = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    r.out = QString::fromUtf8(p.readAllStandardOutput());
    r.err = QString::fromUtf8(p.readAllStandardError());
    return r;
}

// The title as the window manager shows it: "[*]" becomes "*" while there are unsaved edits.
inline QString shownTitle(const QWidget& w)
{
    const QString mark = w.isWindowModified() ? QStringLiteral("*") : QString();
    return QString(w.windowTitle()).replace(QStringLiteral("[*]"), mark);
}

inline QProcessEnvironment headlessEnv()
{
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.remove(QStringLiteral("DISPLAY"));
    env.remove(QStringLiteral("WAYLAND_DISPLAY"));
    env.remove(QStringLiteral("QT_QPA_PLATFORM"));
    env.insert(QStringLiteral("STREAMSCOPE_RESOURCES"), QStringLiteral(STREAMSCOPE_SOURCE_DIR "/resources"));
    return env;
}

class TestMainWindow : public QObject {
    Q_OBJECT

private:
    std::unique_ptr<MainWindow> makeWindow() { return testing::makeTestWindow({1400, 900}); }

    bool openAndRun(MainWindow& w, const QString& lesson, const QString& variant = {})
    {
        return testing::openAndRun(w, lesson, variant, 10000);
    }

private Q_SLOTS:
    void initTestCase();
    void openLessonRunsOnTheSimulator();
    void criticalPathHighlight();
    void arrowChoicesAreKept();
    void theSpanFilterIsTheDocuments();
    void navigationKeysReachTheTimeline();
    void concurrencyPlotFollowsTheTimeline();
    void fewRowsFillTheTimeline();
    void quickControlReSimulates();
    void anInvalidEditKeepsTheTraceAndSaysWhy();
    void selectionFollows();
    void autosaveAndRecovery();
    void saveIsAtomicAndRoundTrips();
    void unsavedEditsPrompt();
    void opensTracesByContent();
    void aBigTraceIsDrawnBeforeItsAnalysis_data();
    void aBigTraceIsDrawnBeforeItsAnalysis();
    void spanTableTurnsPages();
    void bigSpanTablesSortOnAWorker();
    void openingABigTraceCanBeCancelled();
    void anImportedTraceIsATrace();
    void aTraceShowsTheScenarioItEmbedsReadOnly();
    void runningAnEmbeddedScenarioRunsACopy();
    void kernelSignaturesReadShortInTheWindow();
    void badFilesSayWhereAndWhat();
    void gpuRunsThroughTheCli();
    void gpuProbe();
    void gpuRunWithTheRealCli();
    void exportFromTheWindow();
    void headlessExport_data();
    void headlessExport();
    void headlessExportOfATraceAndSvg();
    void headlessExportBadInput_data();
    void headlessExportBadInput();
};
