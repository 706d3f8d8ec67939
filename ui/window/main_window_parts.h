// What the main window's files share (main_window*.cpp). Internal to the main window.
#pragma once

#include <QDockWidget>
#include <QMainWindow>
#include <QString>
#include <QWidget>

namespace streamscope {

inline QDockWidget* makeDock(const QString& title, const QString& objectName, QWidget* content, QMainWindow* parent)
{
    auto* dock = new QDockWidget(title, parent);
    dock->setObjectName(objectName);
    dock->setWidget(content);
    dock->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable
                      | QDockWidget::DockWidgetClosable);
    return dock;
}

} // namespace streamscope
