// What the main window's files share (main_window*.cpp, presentation_mode.cpp). Internal to the main window.
#pragma once

#include <QDockWidget>
#include <QKeySequence>
#include <QList>
#include <QMainWindow>
#include <QString>
#include <QWidget>

namespace streamscope {

// Rows first: the window's timeline keeps room for its legend, axis and this many lanes before the strip below it
// and the docks get more (TimelineView::setMinimumVisibleLanes). Presentation mode sizes the lanes to the slide
// instead and lifts it while it shows the timeline.
inline constexpr int kTimelineMinimumLanes = 6;

inline QDockWidget* makeDock(const QString& title, const QString& objectName, QWidget* content, QMainWindow* parent)
{
    auto* dock = new QDockWidget(title, parent);
    dock->setObjectName(objectName);
    dock->setWidget(content);
    dock->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable
                      | QDockWidget::DockWidgetClosable);
    return dock;
}

// The platform's keys for a standard action, and `usual` too: some desktops' key schemes (and Qt's fallback theme,
// which follows Windows) have none for Save As or Quit, and a user who knows Ctrl+Shift+S or Ctrl+Q must not
// find them gone.
inline QList<QKeySequence> standardShortcuts(QKeySequence::StandardKey key, const QKeySequence& usual)
{
    QList<QKeySequence> keys = QKeySequence::keyBindings(key);
    if (!keys.contains(usual))
        keys.append(usual);
    return keys;
}

} // namespace streamscope
