// Shared by the window tests that need a screen of a given size: the offscreen platform configured with one screen
// of `screen` (STREAMSCOPE_LAYOUT_SCREEN=WxH another; with QT_SCALE_FACTOR, a projector at scale 2), set before the
// QApplication is made. `config` holds the platform's configuration file and must outlive the application.
#pragma once

#include <QByteArray>
#include <QList>
#include <QSize>
#include <QString>
#include <QTemporaryFile>

namespace streamscope::testing {

inline bool useOffscreenScreen(QTemporaryFile& config, QSize screen, const QString& name)
{
    if (!config.open())
        return false;
    if (const QByteArray size = qgetenv("STREAMSCOPE_LAYOUT_SCREEN"); !size.isEmpty()) {
        const QList<QByteArray> wh = size.split('x');
        if (wh.size() == 2 && wh[0].toInt() > 0 && wh[1].toInt() > 0)
            screen = QSize(wh[0].toInt(), wh[1].toInt());
    }
    config.write(QStringLiteral(R"({"screens": [{"name": "%1", "x": 0, "y": 0, "width": %2, "height": %3,
                    "logicalDpi": 96, "logicalBaseDpi": 96, "dpr": 1}]})")
                     .arg(name)
                     .arg(screen.width())
                     .arg(screen.height())
                     .toUtf8());
    config.flush();
    qputenv("QT_QPA_PLATFORM", QByteArray("offscreen:configfile=") + config.fileName().toLocal8Bit());
    return true;
}

} // namespace streamscope::testing
