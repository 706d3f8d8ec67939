// A one-line banner above the timeline: a bold title, a sentence elided to the width it has (the whole of it in
// the tooltip and after "More"), an optional action button and a close button. For what a trace says about itself
// that the user should not miss (timing changed the run, CUPTI was not used), without taking the timeline's room.
// Its colours follow the palette: a pale tint with dark text on a light one, a deep tint with light text on a dark
// one (the theme's note and notice boxes, theme.h).
#pragma once

#include <QFrame>
#include <QString>

class QLabel;
class QToolButton;

namespace streamscope {

struct Theme;

class NoticeBar : public QFrame {
    Q_OBJECT
public:
    enum class Tone { Warning, Info };
    explicit NoticeBar(Tone tone, QWidget* parent = nullptr);

    // Shows the bar with this text (collapsed to one line); an empty title and text hide it.
    void setNotice(const QString& title, const QString& text);
    QString title() const { return m_titleText; }
    QString text() const { return m_fullText; }
    // Title and text, as one string (what the tooltip shows).
    QString fullText() const;
    // The action button (hidden while its text is empty).
    void setAction(const QString& text, const QString& toolTip = {});
    QToolButton* actionButton() const { return m_action; }
    QToolButton* closeButton() const { return m_close; }
    bool isExpanded() const { return m_expanded; }
    void setExpanded(bool expanded);
    // The text as shown now (elided when collapsed and too long).
    QString shownText() const;
    // The colours in use (for tests of contrast).
    QColor backgroundColor() const { return m_background; }
    QColor textColor() const { return m_foreground; }

Q_SIGNALS:
    void actionTriggered();
    void dismissed();

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;
    void changeEvent(QEvent* event) override;

private:
    // From `theme`, else from the theme of the window's palette.
    void applyColors(const Theme* theme = nullptr);
    void updateText();

    Tone m_tone;
    QLabel* m_title;
    QLabel* m_body;
    QToolButton* m_more;
    QToolButton* m_action;
    QToolButton* m_close;
    QString m_titleText;
    QString m_fullText;
    bool m_expanded = false;
    bool m_applying = false;
    QColor m_background, m_foreground, m_border;
};

} // namespace streamscope
