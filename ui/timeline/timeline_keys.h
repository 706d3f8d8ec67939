// The timeline's navigation keys wherever the window's focus is, unless a text field is being typed in: W/S (and
// +/-/=) zoom, A/D pan, F focuses the selection, 0 and Home fit. Installed on the application for one window; a key
// pressed with Ctrl, Alt or Meta, in another window, in a dialog, or in a line edit, text edit, spin box or editable
// combo box goes where it was going. Esc in the window's line edits (the Spans filter) hands the focus back to the
// timeline, so that the keys work again at once.
#pragma once

#include <QObject>
#include <QPointer>

class QWidget;

namespace streamscope {

class TimelineView;

class TimelineKeys : public QObject {
    Q_OBJECT
public:
    TimelineKeys(QWidget* window, TimelineView* timeline);
    ~TimelineKeys() override;

    // Whether `key` with `modifiers` is one of the timeline's navigation keys.
    static bool isNavigationKey(int key, Qt::KeyboardModifiers modifiers);
    // Whether typing into `w` means text: line edits, text edits, spin boxes, editable combo boxes.
    static bool takesText(const QWidget* w);

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    QPointer<QWidget> m_window;
    QPointer<TimelineView> m_timeline;
};

} // namespace streamscope
