// Windows that fit the screen they are on. A window saved on a big monitor and restored on a 1280×720 projector, or
// a window whose default size is bigger than a laptop's screen, must still show its edges, its buttons and its
// title bar: sizes are shrunk to the screen's available geometry (without the task bar and panels) and positions
// moved inside it.
#pragma once

#include <QMargins>
#include <QRect>
#include <QSize>

class QWidget;

namespace streamscope {

// `wanted`, each side shrunk to `share` of `available` where it is bigger.
QSize sizeWithin(QSize wanted, const QRect& available, double share = 1.0);
// `window` (the client area, as QWidget::geometry) shrunk and moved so that it and its window frame (`frame`, the
// title bar and borders around it) lie inside `available`.
QRect fitWithin(QRect window, const QRect& available, const QMargins& frame = {});
// The available geometry of the screen a top-level widget is on (or the primary screen's).
QRect availableGeometry(const QWidget* window);
// A top-level widget's geometry fitted to its screen (fitWithin), frame included where it is known.
void fitToScreen(QWidget* window);

} // namespace streamscope
