// Shared by the window tests: a main window that neither asks streamscope-cli about the GPU nor prompts about
// unsaved edits, and a lesson opened and run until its trace is on the timeline.
#pragma once

#include "main_window.h"

#include <QSignalSpy>
#include <QSize>

#include <memory>

namespace streamscope::testing {

inline std::unique_ptr<MainWindow> makeTestWindow(QSize size)
{
    auto w = std::make_unique<MainWindow>();
    w->setGpuProbeEnabled(false);
    w->setUnsavedPrompt([] { return MainWindow::UnsavedChoice::Discard; });
    w->resize(size);
    w->show();
    return w;
}

// Opens a lesson (by id, with an optional variant) and waits until its trace is on the timeline.
inline bool openAndRun(MainWindow& w, const QString& lesson, const QString& variant = {}, int timeoutMs = 10000)
{
    QSignalSpy shown(&w, &MainWindow::traceShown);
    if (!w.openPath(lesson, variant))
        return false;
    return shown.wait(timeoutMs) && w.currentTrace();
}

} // namespace streamscope::testing
