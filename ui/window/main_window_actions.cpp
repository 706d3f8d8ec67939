// The main window's menus and toolbars (createActions, createToolbars) and the Analysis menu's windows: compare,
// sweep, what if, presentation mode.
#include "main_window.h"
#include "main_window_parts.h"

#include "analysis.h"
#include "concurrency_plot.h"

#include "analysis_panel.h"
#include "calibrate_dialog.h"
#include "compare_view.h"
#include "export_dialog.h"
#include "format.h"
#include "image_export.h"
#include "lesson_gallery.h"
#include "notice_bar.h"
#include "presentation_mode.h"
#include "property_editor.h"
#include "quick_controls.h"
#include "resources.h"
#include "run_info_panel.h"
#include "scenario_editor.h"
#include "scenario_json.h"
#include "scenario_model.h"
#include "screen_fit.h"
#include "span_inspector.h"
#include "span_table_model.h"
#include "sweep_view.h"
#include "text_file.h"
#include "theme.h"
#include "timeline_plottable.h"
#include "timeline_view.h"
#include "timing_text.h"
#include "trace_binary.h"
#include "trace_import.h"
#include "trace_json.h"
#include "whatif_dialog.h"
#include "worker.h"

#include <QAction>
#include <QActionGroup>
#include <QApplication>
#include <QCheckBox>
#include <QCloseEvent>
#include <QComboBox>
#include <QDialog>
#include <QDialogButtonBox>
#include <QDir>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QFrame>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QKeySequence>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QPixmap>
#include <QPointer>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollArea>
#include <QSettings>
#include <QSortFilterProxyModel>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTableView>
#include <QThread>
#include <QTimer>
#include <QToolBar>
#include <QToolButton>
#include <QTreeView>
#include <QUndoStack>
#include <QUrl>
#include <QVBoxLayout>

#include <signal.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <initializer_list>
#include <utility>

namespace streamscope {

// ---- menus and toolbars -----------------------------------------------------------------------------------------

void MainWindow::createActions()
{
    // File
    QMenu* file = menuBar()->addMenu(QStringLiteral("&File"));
    m_newAction = file->addAction(QStringLiteral("&New Scenario"), this, &MainWindow::newScenario);
    m_newAction->setShortcut(QKeySequence::New);
    m_newAction->setIconText(QStringLiteral("New"));
    QAction* open = m_openAction = file->addAction(QStringLiteral("&Open…"), this, [this] {
        QSettings settings;
        const QString path = QFileDialog::getOpenFileName(
            this, QStringLiteral("Open a scenario or trace"), settings.value(QStringLiteral("lastDir")).toString(),
            QStringLiteral("Scenarios and traces (*.json *.json.gz *.sstrace *.csv *.sqlite);;All files (*)"));
        if (!path.isEmpty()) {
            settings.setValue(QStringLiteral("lastDir"), QFileInfo(path).absolutePath());
            openPath(path);
        }
    });
    open->setShortcut(QKeySequence::Open);
    open->setIconText(QStringLiteral("Open"));
    createJobOpenAction(file);
    QMenu* lessons = file->addMenu(QStringLiteral("Open &Lesson"));
    for (const LessonEntry& e : m_gallery->model()->lessons()) {
        lessons->addAction(e.id.section(QLatin1Char('-'), 0, 0) + QStringLiteral("  ") + e.title, this,
                           [this, id = e.id] { openPath(id); });
    }
    m_recentMenu = file->addMenu(QStringLiteral("Open &Recent"));
    file->addSeparator();
    m_saveAction = file->addAction(QStringLiteral("&Save Scenario"), this, &MainWindow::save);
    m_saveAction->setShortcut(QKeySequence::Save);
    m_saveAction->setIconText(QStringLiteral("Save"));
    QAction* saveAs = m_saveAsAction = file->addAction(QStringLiteral("Save Scenario &As…"), this, [this] {
        QSettings settings;
        QString suggestion = m_path;
        if (suggestion.isEmpty())
            suggestion = QDir(settings.value(QStringLiteral("lastDir"), QDir::homePath()).toString())
                             .filePath((m_lessonId.isEmpty() ? QStringLiteral("scenario") : m_lessonId)
                                       + QStringLiteral(".json"));
        const QString path = QFileDialog::getSaveFileName(this, QStringLiteral("Save the scenario"), suggestion,
                                                          QStringLiteral("Scenario (*.json)"));
        if (!path.isEmpty())
            saveScenarioAs(path);
    });
    saveAs->setShortcuts(standardShortcuts(QKeySequence::SaveAs, QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_S)));
    saveAs->setObjectName(QStringLiteral("save-as"));
    m_saveTraceAction = file->addAction(QStringLiteral("Save &Trace As…"), this, [this] {
        QSettings settings;
        // Big traces are offered the binary format first: it opens at disk speed where JSON parses at about
        // 65 MB/s (docs/PERFORMANCE.md).
        const bool big = m_trace && m_trace->trace->spanCount() >= kBinaryTraceSuggestedSpans;
        const QString suggestion =
            QDir(settings.value(QStringLiteral("lastDir"), QDir::homePath()).toString())
                .filePath(documentTitle() + (big ? QStringLiteral(".sstrace") : QStringLiteral(".trace.json")));
        const QString json = QStringLiteral("StreamScope trace (*.json)");
        const QString binary = QStringLiteral("StreamScope binary trace (*.sstrace)");
        const QString chrome = QStringLiteral("Chrome/Perfetto trace (*.json)");
        const QString csv = QStringLiteral("CSV, one row per span (*.csv)");
        QString filter = big ? binary : json;
        const QString path = QFileDialog::getSaveFileName(
            this, QStringLiteral("Save the trace"), suggestion,
            json + QStringLiteral(";;") + binary + QStringLiteral(";;") + chrome + QStringLiteral(";;") + csv, &filter);
        if (path.isEmpty())
            return;
        const ExportFormat format = filter == chrome                                     ? ExportFormat::Chrome
            : filter == csv || path.endsWith(QLatin1String(".csv"), Qt::CaseInsensitive) ? ExportFormat::Csv
            : filter == binary || hasBinaryTraceExtension(path.toStdString()) ? ExportFormat::StreamscopeBinary
                                                                              : ExportFormat::Streamscope;
        saveTraceAs(path, format);
    });
    m_exportAction = file->addAction(QStringLiteral("&Export Image…"), this, [this] {
        QSettings settings;
        const QString suggestion = QDir(settings.value(QStringLiteral("lastDir"), QDir::homePath()).toString())
                                       .filePath(documentTitle() + QStringLiteral(".png"));
        QString filter;
        const QString path = QFileDialog::getSaveFileName(
            this, QStringLiteral("Export the timeline"), suggestion,
            QStringLiteral("PNG image (*.png);;SVG drawing (*.svg);;PDF document (*.pdf)"), &filter);
        if (path.isEmpty())
            return;
        QString chosen = path;
        if (!imageFormatForPath(chosen))
            chosen += filter.startsWith(QLatin1String("SVG")) ? QStringLiteral(".svg")
                : filter.startsWith(QLatin1String("PDF"))     ? QStringLiteral(".pdf")
                                                              : QStringLiteral(".png");
        // The size and what the image shows, remembered for next time (PDF: points).
        std::array<bool, kFlowKindCount> shown{};
        for (int k = 0; k < kFlowKindCount; ++k)
            shown[size_t(k)] = m_timeline->isFlowKindVisible(FlowKind(k));
        ExportImageDialog dialog(shown, imageFormatForPath(chosen) == ImageFormat::Pdf,
                                 m_criticalPathAction && m_criticalPathAction->isChecked(), this);
        if (dialog.exec() != QDialog::Accepted)
            return;
        dialog.remember();
        ImageOptions options = dialog.options();
        if (dialog.wholeTrace() && m_trace)
            options.range = wholeTraceRange(*m_trace->trace);
        if (exportImage(chosen, options))
            m_statusText->setText(QStringLiteral("Exported %1.").arg(chosen));
    });
    m_exportAction->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_E));
    m_exportAction->setIconText(QStringLiteral("Export Image"));
    file->addSeparator();
    QAction* quit = file->addAction(QStringLiteral("&Quit"), this, &QWidget::close);
    quit->setShortcuts(standardShortcuts(QKeySequence::Quit, QKeySequence(Qt::CTRL | Qt::Key_Q)));
    quit->setObjectName(QStringLiteral("quit"));
    quit->setMenuRole(QAction::QuitRole);

    // Edit
    QMenu* edit = menuBar()->addMenu(QStringLiteral("&Edit"));
    QAction* undo = m_model->undoStack()->createUndoAction(this, QStringLiteral("&Undo"));
    undo->setShortcut(QKeySequence::Undo);
    QAction* redo = m_model->undoStack()->createRedoAction(this, QStringLiteral("&Redo"));
    redo->setShortcuts({QKeySequence::Redo, QKeySequence(Qt::CTRL | Qt::Key_Y)});
    edit->addAction(undo);
    edit->addAction(redo);
    edit->addSeparator();
    edit->addMenu(m_editor->addMenu());
    edit->addAction(m_editor->removeAction());
    edit->addAction(m_editor->moveUpAction());
    edit->addAction(m_editor->moveDownAction());
    edit->addAction(m_editor->duplicateAction());

    // Run
    QMenu* run = menuBar()->addMenu(QStringLiteral("&Run"));
    m_runAction = run->addAction(QStringLiteral("&Run"), this, &MainWindow::runScenario);
    m_runAction->setShortcuts({QKeySequence(Qt::Key_F5), QKeySequence(Qt::CTRL | Qt::Key_R)});
    m_runAction->setToolTip(QStringLiteral("Run the scenario on the chosen backend (F5)"));
    m_cancelAction = run->addAction(QStringLiteral("&Cancel"), this, [this] {
        if (isOpening())
            cancelOpening(); // a file being read
        else
            m_runner->cancel();
    });
    m_cancelAction->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_Period));
    m_cancelAction->setEnabled(false);
    run->addSeparator();
    run->addAction(QStringLiteral("Check the &GPU Again"), this, [this] {
        m_probed = true;
        m_runner->probeGpu();
    });

    // View
    m_viewMenu = menuBar()->addMenu(QStringLiteral("&View"));
    QAction* fit = m_viewMenu->addAction(QStringLiteral("&Fit to View"), m_timeline, &TimelineView::fitToView);
    fit->setToolTip(QStringLiteral("Show the whole trace (0 or Home on the timeline)"));
    // Which arrows are drawn is kept between sessions; they start as defaultArrowKinds() says (sync arrows off).
    QMenu* arrows = m_viewMenu->addMenu(QStringLiteral("Dependency &Arrows"));
    for (FlowKind k : {FlowKind::Launch, FlowKind::Event, FlowKind::Sync, FlowKind::Implicit, FlowKind::Call,
                       FlowKind::Collective}) {
        QAction* a = arrows->addAction(flowKindLabel(k));
        const std::string_view name = toString(k);
        const QString key = QStringLiteral("view/arrows/") + QString::fromLatin1(name.data(), qsizetype(name.size()));
        const bool on = QSettings().value(key, defaultArrowKinds()[size_t(k)]).toBool();
        m_timeline->setFlowKindVisible(k, on);
        a->setCheckable(true);
        a->setChecked(on);
        a->setObjectName(QStringLiteral("arrows-") + flowKindLabel(k));
        connect(a, &QAction::toggled, this, [this, k, key](bool visible) {
            m_timeline->setFlowKindVisible(k, visible);
            QSettings().setValue(key, visible);
        });
    }
    m_criticalPathAction = m_viewMenu->addAction(QStringLiteral("Highlight &Critical Path"));
    m_criticalPathAction->setObjectName(QStringLiteral("highlight-critical-path"));
    m_criticalPathAction->setCheckable(true);
    m_criticalPathAction->setShortcut(QKeySequence(QStringLiteral("Ctrl+K")));
    m_criticalPathAction->setToolTip(QStringLiteral("Outline the chain of operations that decided the run's length"));
    connect(m_criticalPathAction, &QAction::toggled, this, &MainWindow::updateCriticalPath);
    m_viewMenu->addSeparator();
    const auto docks = findChildren<QDockWidget*>();
    for (QDockWidget* d : docks)
        m_viewMenu->addAction(d->toggleViewAction());

    // Analysis: compare, sweep, presentation (each part adds its own actions).
    m_analysisMenu = menuBar()->addMenu(QStringLiteral("&Analysis"));
    createCompareActions();
    createSweepActions();
    createPresentationActions();
    m_viewMenu->addSeparator();
    addThemeMenu(m_viewMenu);
    QAction* resetLayout = m_viewMenu->addAction(QStringLiteral("&Reset Layout"), this, &MainWindow::resetLayout);
    resetLayout->setObjectName(QStringLiteral("reset-layout"));
    resetLayout->setStatusTip(QStringLiteral("Put the docks back where they start and the window at its default size"));

    // Tools: a profile measured on this GPU becomes the simulator's profile.
    QMenu* tools = menuBar()->addMenu(QStringLiteral("&Tools"));
    addCalibrateAction(tools, m_runner, this, [this](const QString& path) {
        selectProfileFile(m_profileBox, path);
        m_runner->setProfileId(path);
        scheduleLiveRun();
    });

    QMenu* help = menuBar()->addMenu(QStringLiteral("&Help"));
    help->addAction(QStringLiteral("&Keys and Mouse"), this, [this] {
        QMessageBox::information(
            this, QStringLiteral("Keys and mouse"),
            QStringLiteral("<p><b>Timeline</b> (Perfetto/Tracy style)</p><table>"
                           "<tr><td>Wheel, W / S</td><td>zoom in / out</td></tr>"
                           "<tr><td>Drag, A / D, ← →</td><td>pan</td></tr>"
                           "<tr><td>↑ ↓, Page Up / Down</td><td>scroll the rows</td></tr>"
                           "<tr><td>Shift+drag, right drag</td><td>measure a range</td></tr>"
                           "<tr><td>Click</td><td>select a span (inspector, span table)</td></tr>"
                           "<tr><td>F</td><td>focus the selection</td></tr>"
                           "<tr><td>0, Home</td><td>fit to view</td></tr>"
                           "<tr><td>Esc</td><td>clear selection and range</td></tr></table>"
                           "<p>W/A/S/D, + / −, F, 0 and Home work wherever the focus is, except while a text field "
                           "is being typed in; Esc in the Spans filter goes back to the timeline.</p>"
                           "<p><b>Scenario</b>: Delete removes, Ctrl+↑/↓ moves, Ctrl+D duplicates, Ctrl+Z/Ctrl+Shift+Z "
                           "undo/redo. F5 runs.</p>"
                           "<p><b>Presentation mode</b> (F11): Space, → or Page Down steps forward (set up, run, "
                           "timeline, explanation, then the contrast and the next lesson); ←, Page Up back; Esc "
                           "leaves.</p>"));
    });
    // Not modal to the application (QMessageBox::about would be): it can be looked at beside the window.
    QAction* about = help->addAction(QStringLiteral("&About StreamScope"), this, [this] {
        auto* box = new QMessageBox(QMessageBox::NoIcon, QStringLiteral("About StreamScope"), aboutText(),
                                    QMessageBox::Ok, this);
        box->setObjectName(QStringLiteral("aboutBox"));
        box->setAttribute(Qt::WA_DeleteOnClose);
        if (!windowIcon().isNull())
            box->setIconPixmap(windowIcon().pixmap(64, 64));
        box->open();
    });
    about->setObjectName(QStringLiteral("about"));
    about->setMenuRole(QAction::AboutRole);
    QAction* aboutQt = help->addAction(QStringLiteral("About &Qt"), qApp, &QApplication::aboutQt);
    aboutQt->setObjectName(QStringLiteral("about-qt"));
    aboutQt->setMenuRole(QAction::AboutQtRole);
}

void MainWindow::addThemeMenu(QMenu* view)
{
    // Applied at once and kept for the next start (main applies the kept one before the window exists).
    QMenu* menu = view->addMenu(QStringLiteral("&Theme"));
    menu->setObjectName(QStringLiteral("themeMenu"));
    auto* group = new QActionGroup(menu);
    const std::pair<ThemeChoice, QString> choices[] = {
        {ThemeChoice::System, QStringLiteral("&System")},
        {ThemeChoice::Light, QStringLiteral("&Light")},
        {ThemeChoice::Dark, QStringLiteral("&Dark")},
    };
    for (const auto& [choice, label] : choices) {
        QAction* a = menu->addAction(label);
        a->setObjectName(QStringLiteral("theme-") + themeChoiceName(choice));
        a->setCheckable(true);
        a->setChecked(appliedThemeChoice() == choice);
        a->setActionGroup(group);
        connect(a, &QAction::triggered, this, [choice = choice] {
            applyThemeChoice(choice);
            saveThemeChoice(choice);
        });
    }
    menu->actions().first()->setStatusTip(QStringLiteral("Light or dark as the system's palette is"));
}

QString MainWindow::aboutText()
{
    // The licences of the libraries it is built with, as their Debian packages state them (Help ▸ About Qt has
    // Qt's in full); StreamScope's own source declares none, and the box says so rather than claim one. The
    // libraries' versions, for a bug report.
    return QStringLiteral("<p><b>StreamScope</b> %1</p>"
                          "<p>StreamScope shows what CUDA streams do: configure host threads, devices, streams and "
                          "the work they issue, run it on a GPU or the simulator, and explore the timeline.</p>"
                          "<p><small>Qt %2 (built with %3; LGPL-3, see About Qt), QCustomPlot %4 (GPL-3+).<br>"
                          "Licence: StreamScope's own source declares none yet.</small></p>")
        .arg(QStringLiteral(STREAMSCOPE_VERSION).toHtmlEscaped(), QString::fromLatin1(qVersion()),
             QStringLiteral(QT_VERSION_STR), QStringLiteral(QCUSTOMPLOT_VERSION_STR));
}

void MainWindow::createToolbars()
{
    QToolBar* bar = addToolBar(QStringLiteral("Main"));
    bar->setObjectName(QStringLiteral("mainToolBar"));
    bar->setMovable(false);
    bar->setToolButtonStyle(Qt::ToolButtonTextOnly);
    bar->addAction(m_newAction);
    bar->addAction(m_openAction);
    bar->addAction(m_saveAction);
    bar->addSeparator();

    bar->addWidget(new QLabel(QStringLiteral(" Backend ")));
    m_backendBox = new QComboBox;
    m_backendBox->addItem(QStringLiteral("Simulator"), int(RunBackend::Simulator));
    m_backendBox->addItem(QStringLiteral("GPU"), int(RunBackend::Gpu));
    m_backendBox->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    connect(m_backendBox, &QComboBox::activated, this, [this] {
        m_userChoseBackend = true;
        m_gpuRunPending = false;
        updateBackendControls();
    });
    bar->addWidget(m_backendBox);
    bar->addWidget(new QLabel(QStringLiteral(" Profile ")));
    m_profileBox = new QComboBox;
    m_profileBox->addItem(QStringLiteral("scenario's"), QString());
    for (const QString& id : RunController::profileIds())
        m_profileBox->addItem(id, id);
    m_profileBox->setToolTip(QStringLiteral("Simulator device profile for every GPU (the scenario's own by default)"));
    connect(m_profileBox, &QComboBox::activated, this, [this] {
        m_runner->setProfileId(m_profileBox->currentData().toString());
        scheduleLiveRun();
    });
    bar->addWidget(m_profileBox);
    bar->addWidget(new QLabel(QStringLiteral(" Timing ")));
    m_timingBox = new QComboBox;
    m_timingBox->setObjectName(QStringLiteral("timingBox"));
    for (TimingMode mode : {TimingMode::Auto, TimingMode::Cupti, TimingMode::Events, TimingMode::Both}) {
        m_timingBox->addItem(timingModeLabel(mode), int(mode));
        m_timingBox->setItemData(m_timingBox->count() - 1, timingModeDescription(mode), Qt::ToolTipRole);
    }
    m_timingBox->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    connect(m_timingBox, &QComboBox::activated, this,
            [this] { setTimingMode(TimingMode(m_timingBox->currentData().toInt())); });
    bar->addWidget(m_timingBox);
    bar->addAction(m_runAction);
    bar->addAction(m_cancelAction);
    m_liveBox = new QCheckBox(QStringLiteral("Live"));
    m_liveBox->setChecked(true);
    m_liveBox->setToolTip(QStringLiteral("Re-simulate (in-process) after every edit; Run uses the chosen backend"));
    bar->addWidget(m_liveBox);
    bar->addSeparator();
    QAction* fit = bar->addAction(QStringLiteral("Fit"), m_timeline, &TimelineView::fitToView);
    fit->setToolTip(QStringLiteral("Show the whole trace (0 or Home on the timeline)"));
    bar->addAction(m_exportAction);

    // The timing banners, the window's width under the run controls.
    addToolBarBreak(Qt::TopToolBarArea);
    m_noticeToolBar = addToolBar(QStringLiteral("Timing notices"));
    m_noticeToolBar->setObjectName(QStringLiteral("timingNoticeToolBar"));
    m_noticeToolBar->setMovable(false);
    m_noticeToolBar->setFloatable(false);
    m_noticeToolBar->toggleViewAction()->setVisible(false); // shown by the trace, not by the user
    auto* notices = new QWidget;
    notices->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Preferred);
    auto* noticesLayout = new QVBoxLayout(notices);
    noticesLayout->setContentsMargins(0, 0, 0, 0);
    noticesLayout->setSpacing(2);
    noticesLayout->addWidget(m_timingWarning);
    noticesLayout->addWidget(m_timingInfo);
    m_noticeToolBar->addWidget(notices);
    m_noticeToolBar->hide();
}

// ---- Analysis menu ------------------------------------------------------------------------------------------------

void MainWindow::createCompareActions()
{
    // Two runs side by side on one time scale, with what changed (compare_view.h).
    QAction* variant = m_analysisMenu->addAction(QStringLiteral("Compare with &Variant…"), this, [this] {
        const bool offerWithout = !m_variant.isEmpty() && (!m_lessonId.isEmpty() || !m_path.isEmpty());
        if (const auto choice = chooseVariant(this, documentTitle(), m_model->scenario(), m_variant, offerWithout))
            compareWithVariant(*choice);
    });
    m_compareVariantAction = variant;
    variant->setObjectName(QStringLiteral("compare-variant"));
    variant->setStatusTip(QStringLiteral("Simulate the scenario and one of its variants, and show both timelines and "
                                         "what changed"));
    QAction* file = m_analysisMenu->addAction(QStringLiteral("Compare with &File…"), this, [this] {
        if (!m_trace) {
            showError(QStringLiteral("There is no trace to compare yet: run the scenario or open a trace first."));
            return;
        }
        QSettings settings;
        const QString path = QFileDialog::getOpenFileName(
            this, QStringLiteral("Compare with a trace or scenario"),
            settings.value(QStringLiteral("lastDir")).toString(),
            QStringLiteral("Traces and scenarios (*.json *.json.gz *.sstrace *.csv *.sqlite);;All files (*)"));
        if (path.isEmpty())
            return;
        settings.setValue(QStringLiteral("lastDir"), QFileInfo(path).absolutePath());
        compareWithFile(path);
    });
    file->setObjectName(QStringLiteral("compare-file"));
    file->setStatusTip(QStringLiteral("Show the trace on the timeline above a trace or scenario from a file, on one "
                                      "time scale, and what changed"));
    createCompareRanksAction();
    // A GPU recording replayed with the durations it measured and one setting changed (whatif_dialog.h).
    m_whatIfAction = m_analysisMenu->addAction(QStringLiteral("What &if…"), this, [this] {
        if (!m_trace || !m_trace->trace)
            return;
        auto scenario = recordedScenario(*m_trace->trace);
        if (!scenario) {
            showError(qs(scenario.error().toString()));
            return;
        }
        WhatIfDialog dialog(*scenario, documentTitle(), this);
        if (dialog.exec() == QDialog::Accepted)
            replayWhatIf({dialog.setting()});
    });
    m_whatIfAction->setObjectName(QStringLiteral("what-if"));
    m_analysisMenu->setToolTipsVisible(true); // the reason What if… is disabled
    updateWhatIfAction();
    m_analysisMenu->addSeparator();
}

void MainWindow::updateWhatIfAction()
{
    if (!m_whatIfAction)
        return;
    QString why;
    if (!m_trace || !m_trace->trace) {
        why = QStringLiteral("Open a trace recorded on a GPU by StreamScope to replay it with a setting changed");
    } else if (auto scenario = recordedScenario(*m_trace->trace); !scenario) {
        why = QStringLiteral("What if… replays a GPU recording of StreamScope's with its scenario embedded; this "
                             "trace: ")
            + qs(scenario.error().message);
    }
    m_whatIfAction->setEnabled(why.isEmpty());
    const QString tip = why.isEmpty() ? QStringLiteral("Replay the recording on the simulator with the durations it "
                                                       "measured and one setting changed, beside the recording")
                                      : why;
    m_whatIfAction->setToolTip(tip);
    m_whatIfAction->setStatusTip(tip);
}

CompareView* MainWindow::replayWhatIf(const std::vector<ReplaySetting>& settings)
{
    if (!m_trace || !m_trace->trace)
        return nullptr;
    if (auto scenario = recordedScenario(*m_trace->trace); !scenario) {
        showError(qs(scenario.error().toString()));
        return nullptr;
    }
    ensureCompareView();
    m_compareView->compareWithReplay(m_trace->trace, documentTitle(), settings);
    showCompareView();
    return m_compareView;
}

CompareView* MainWindow::compareView() const
{
    return m_compareView;
}

CompareView* MainWindow::ensureCompareView()
{
    if (!m_compareView) {
        m_compareView = new CompareView(this);
        m_compareView->setWindowFlag(Qt::Window);
    }
    return m_compareView;
}

void MainWindow::showCompareView()
{
    const bool first = !m_compareView->isVisible();
    m_compareView->show();
    if (first) // on the window's screen, whole (a window system may have placed it partly off it)
        fitToScreen(m_compareView);
    m_compareView->raise();
    m_compareView->activateWindow();
}

CompareView* MainWindow::compareWithVariant(const QString& variant)
{
    const auto scenario = m_model->validatedScenario();
    if (!scenario) {
        showError(QStringLiteral("The scenario cannot be compared: it has an error (see the scenario editor)."));
        return nullptr;
    }
    std::shared_ptr<const Scenario> asWritten;
    if (variant.isEmpty()) {
        const auto doc = loadDocument(m_lessonId.isEmpty() ? m_path : m_lessonId);
        if (!doc || doc->kind != DocumentKind::Scenario) {
            showError(doc ? QStringLiteral("%1 is not a scenario.").arg(m_path) : qs(doc.error().toString()));
            return nullptr;
        }
        asWritten = std::make_shared<const Scenario>(doc->scenario);
    }
    ensureCompareView();
    if (asWritten)
        m_compareView->compareScenarios(scenario, documentTitle(), asWritten,
                                        QStringLiteral("without the variant (as written)"), m_runner->profileId());
    else
        m_compareView->compareWithVariant(scenario, documentTitle(), variant, m_runner->profileId());
    showCompareView();
    return m_compareView;
}

CompareView* MainWindow::compareWithFile(const QString& path)
{
    if (!m_trace)
        return nullptr;
    ensureCompareView();
    m_compareView->compareWithFile(m_trace->trace, documentTitle(), path, m_runner->profileId());
    showCompareView();
    return m_compareView;
}

void MainWindow::createSweepActions()
{
    // Makespan and speedup against one knob of the scenario in the editor (sweep_view.h): a dock under the
    // timeline, next to the span table.
    auto* view = new SweepView;
    view->setRunController(m_runner);
    view->setScenario(m_model->validatedScenario());
    connect(m_model, &ScenarioModel::scenarioChanged, view,
            [this, view] { view->setScenario(m_model->validatedScenario()); });
    // Placed, beside the span table and hidden, by arrangeDocks.
    // In a scroll area: its row of controls (606 px) made the window wider than a 1280x720 screen at scale 2.
    auto* scroll = new QScrollArea;
    scroll->setWidget(view);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setMinimumWidth(200);
    QDockWidget* dock = makeDock(QStringLiteral("Sweep"), QStringLiteral("sweepDock"), scroll, this);
    auto* scenarioDock = findChild<QDockWidget*>(QStringLiteral("scenarioDock"));
    auto* analysisDock = findChild<QDockWidget*>(QStringLiteral("analysisDock"));
    // A double-clicked point: its rewritten scenario simulated onto the timeline; the editor keeps the scenario.
    connect(view, &SweepView::pointActivated, this, [this, view](int index) {
        auto rewritten = view->scenarioForPoint(index);
        if (!rewritten) {
            showError(QStringLiteral("Cannot show that point: ") + qs(rewritten.error().toString()));
            return;
        }
        m_previewRun = false;
        m_runner->run(RunBackend::Simulator, std::make_shared<const Scenario>(std::move(rewritten).value()));
        const QString shown = QStringLiteral("The timeline shows %1 = %2 from the sweep, simulated; the editor keeps "
                                             "your scenario (F5 runs it).")
                                  .arg(qs(toString(view->sweptSpec().knob)))
                                  .arg(view->points()[size_t(index)].value);
        // Said once that run is on the timeline; any later run drops the note.
        auto note = std::make_shared<std::array<QMetaObject::Connection, 2>>();
        (*note)[0] = connect(m_runner, &RunController::finished, this, [this, note, shown] {
            disconnect((*note)[0]);
            disconnect((*note)[1]);
            m_statusText->setText(shown);
        });
        (*note)[1] = connect(m_runner, &RunController::started, this, [this, note] {
            disconnect((*note)[0]);
            disconnect((*note)[1]);
        });
    });
    QAction* action =
        m_analysisMenu->addAction(QStringLiteral("&Sweep…"), this, [this, dock, view, scenarioDock, analysisDock] {
            // Showing it must not squeeze the side docks.
            const QList<int> sideWidths{scenarioDock ? scenarioDock->width() : 0,
                                        analysisDock ? analysisDock->width() : 0};
            dock->show();
            dock->raise();
            resizeDocks({dock}, {qMax(dock->height(), 360)}, Qt::Vertical);
            if (scenarioDock && analysisDock && scenarioDock->isVisible() && analysisDock->isVisible())
                resizeDocks({scenarioDock, analysisDock}, sideWidths, Qt::Horizontal);
            view->setFocus();
        });
    action->setObjectName(QStringLiteral("sweep"));
    action->setShortcut(QKeySequence(QStringLiteral("Ctrl+Shift+W")));
    action->setToolTip(QStringLiteral("Vary streams, chunks or kernel size and plot makespan and speedup"));
    m_viewMenu->addAction(dock->toggleViewAction());
}

void MainWindow::createPresentationActions()
{
    // Slides of the open lesson for a classroom projector (presentation_mode.h).
    auto* presentation = new PresentationMode(this);
    QAction* action = m_analysisMenu->addAction(QStringLiteral("&Presentation Mode"));
    action->setObjectName(QStringLiteral("presentation-mode"));
    action->setCheckable(true);
    action->setShortcut(QKeySequence(Qt::Key_F11));
    action->setToolTip(QStringLiteral("Full-screen slides of the lesson: set up, run, timeline, explanation "
                                      "(Space or → steps, ← back, Esc leaves)"));
    addAction(action); // the shortcut works while the menu bar is hidden
    m_viewMenu->addSeparator();
    m_viewMenu->addAction(action);
    connect(action, &QAction::toggled, presentation, &PresentationMode::setActive);
    connect(presentation, &PresentationMode::activeChanged, action, &QAction::setChecked);
    connect(presentation, &PresentationMode::activeChanged, this, [this](bool on) {
        m_presenting = on;
        updateNoticeVisibility(); // leaving restores the window's state, the banner's visibility included
    });
}

} // namespace streamscope
