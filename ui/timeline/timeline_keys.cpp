#include "timeline_keys.h"

#include "timeline_view.h"

#include <QAbstractSpinBox>
#include <QApplication>
#include <QComboBox>
#include <QKeyEvent>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QTextEdit>

namespace streamscope {

TimelineKeys::TimelineKeys(QWidget* window, TimelineView* timeline)
    : QObject(window), m_window(window), m_timeline(timeline)
{
    qApp->installEventFilter(this);
}

TimelineKeys::~TimelineKeys()
{
    qApp->removeEventFilter(this);
}

bool TimelineKeys::isNavigationKey(int key, Qt::KeyboardModifiers modifiers)
{
    if (modifiers & (Qt::ControlModifier | Qt::AltModifier | Qt::MetaModifier))
        return false;
    switch (key) {
    case Qt::Key_W:
    case Qt::Key_A:
    case Qt::Key_S:
    case Qt::Key_D:
    case Qt::Key_Plus:
    case Qt::Key_Minus:
    case Qt::Key_Equal:
    case Qt::Key_F:
    case Qt::Key_0:
    case Qt::Key_Home: return true;
    default: return false;
    }
}

bool TimelineKeys::takesText(const QWidget* w)
{
    if (!w)
        return false;
    if (const auto* line = qobject_cast<const QLineEdit*>(w))
        return !line->isReadOnly();
    if (const auto* combo = qobject_cast<const QComboBox*>(w))
        return combo->isEditable();
    if (const auto* text = qobject_cast<const QTextEdit*>(w))
        return !text->isReadOnly();
    if (const auto* plain = qobject_cast<const QPlainTextEdit*>(w))
        return !plain->isReadOnly();
    return qobject_cast<const QAbstractSpinBox*>(w) != nullptr;
}

bool TimelineKeys::eventFilter(QObject* watched, QEvent* event)
{
    if (event->type() != QEvent::KeyPress || !m_window || !m_timeline)
        return QObject::eventFilter(watched, event);
    // Only the key as it first reaches the focused widget (the filter sees it again as it propagates to parents).
    QWidget* focus = QApplication::focusWidget();
    if (watched != focus || !focus || focus == m_timeline || focus->window() != m_window)
        return QObject::eventFilter(watched, event);
    auto* key = static_cast<QKeyEvent*>(event);
    if (key->key() == Qt::Key_Escape && qobject_cast<QLineEdit*>(focus) && m_timeline->isVisible()) {
        m_timeline->setFocus(Qt::ShortcutFocusReason);
        return true;
    }
    if (takesText(focus) || !isNavigationKey(key->key(), key->modifiers()) || !m_timeline->isVisible())
        return QObject::eventFilter(watched, event);
    QKeyEvent copy(QEvent::KeyPress, key->key(), key->modifiers(), key->text(), key->isAutoRepeat(), key->count());
    QCoreApplication::sendEvent(m_timeline, &copy);
    return true;
}

} // namespace streamscope
