#include "screen_fit.h"

#include <QGuiApplication>
#include <QScreen>
#include <QWidget>

#include <algorithm>
#include <cmath>

namespace streamscope {

QSize sizeWithin(QSize wanted, const QRect& available, double share)
{
    if (available.isEmpty())
        return wanted;
    const int w = int(std::floor(available.width() * share));
    const int h = int(std::floor(available.height() * share));
    return {std::min(wanted.width(), w), std::min(wanted.height(), h)};
}

QRect fitWithin(QRect window, const QRect& available, const QMargins& frame)
{
    if (available.isEmpty())
        return window;
    const QRect room = available.marginsRemoved(frame);
    window.setWidth(std::min(window.width(), room.width()));
    window.setHeight(std::min(window.height(), room.height()));
    // Moved in from the right and bottom first, then from the left and top: the title bar stays reachable.
    window.moveLeft(std::max(std::min(window.left(), room.right() - window.width() + 1), room.left()));
    window.moveTop(std::max(std::min(window.top(), room.bottom() - window.height() + 1), room.top()));
    return window;
}

QRect availableGeometry(const QWidget* window)
{
    const QScreen* screen = window ? window->screen() : nullptr;
    if (!screen)
        screen = QGuiApplication::primaryScreen();
    return screen ? screen->availableGeometry() : QRect();
}

void fitToScreen(QWidget* window)
{
    const QRect frame = window->frameGeometry(), client = window->geometry();
    // Known once the window system has framed the window; before that, none.
    const QMargins margins = window->isVisible()
        ? QMargins(client.left() - frame.left(), client.top() - frame.top(), frame.right() - client.right(),
                   frame.bottom() - client.bottom())
        : QMargins();
    const QRect fitted = fitWithin(client, availableGeometry(window), margins);
    if (fitted != client)
        window->setGeometry(fitted);
}

} // namespace streamscope
