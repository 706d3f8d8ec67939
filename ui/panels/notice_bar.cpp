#include "notice_bar.h"

#include "theme.h"

#include <QEvent>
#include <QFontMetrics>
#include <QHBoxLayout>
#include <QLabel>
#include <QResizeEvent>
#include <QToolButton>

#include <algorithm>

namespace streamscope {

NoticeBar::NoticeBar(Tone tone, QWidget* parent)
    : QFrame(parent), m_tone(tone), m_title(new QLabel), m_body(new QLabel), m_more(new QToolButton),
      m_action(new QToolButton), m_close(new QToolButton)
{
    setObjectName(tone == Tone::Warning ? QStringLiteral("timingWarningBar") : QStringLiteral("timingInfoBar"));
    QFont bold = m_title->font();
    bold.setBold(true);
    m_title->setFont(bold);
    m_title->setTextFormat(Qt::PlainText);
    m_body->setTextFormat(Qt::PlainText);
    m_body->setTextInteractionFlags(Qt::TextSelectableByMouse);
    // The body takes what the title and buttons leave, whatever its text: it is elided to that width.
    m_body->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    m_body->setMinimumWidth(40);
    m_body->installEventFilter(this);
    m_more->setText(QStringLiteral("More"));
    m_more->setAutoRaise(true);
    m_more->setToolTip(QStringLiteral("Show the whole message"));
    connect(m_more, &QToolButton::clicked, this, [this] { setExpanded(!m_expanded); });
    m_action->setAutoRaise(false);
    m_action->hide();
    connect(m_action, &QToolButton::clicked, this, &NoticeBar::actionTriggered);
    m_close->setText(QStringLiteral("✕"));
    m_close->setAutoRaise(true);
    m_close->setToolTip(QStringLiteral("Dismiss"));
    connect(m_close, &QToolButton::clicked, this, [this] {
        hide();
        Q_EMIT dismissed();
    });

    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(8, 2, 4, 2);
    layout->setSpacing(6);
    layout->addWidget(m_title, 0, Qt::AlignTop);
    layout->addWidget(m_body, 1);
    layout->addWidget(m_more, 0, Qt::AlignTop);
    layout->addWidget(m_action, 0, Qt::AlignTop);
    layout->addWidget(m_close, 0, Qt::AlignTop);
    // Title and body sit on the buttons' text line.
    const int pad = std::max(0, (m_more->sizeHint().height() - m_title->sizeHint().height()) / 2);
    m_title->setContentsMargins(0, pad, 0, pad);
    m_body->setContentsMargins(0, pad, 0, pad);
    applyColors();
    // A style sheet colours the bar, so that no PaletteChange comes when the application's palette changes.
    onApplicationPaletteChange(this, [this] { applyColors(&Theme::current()); });
    hide();
}

QString NoticeBar::fullText() const
{
    return m_titleText.isEmpty() ? m_fullText : m_titleText + QLatin1Char(' ') + m_fullText;
}

void NoticeBar::setNotice(const QString& title, const QString& text)
{
    m_titleText = title;
    m_fullText = text;
    m_title->setText(title);
    m_title->setVisible(!title.isEmpty());
    setToolTip(fullText());
    m_expanded = false;
    updateText();
    setVisible(!title.isEmpty() || !text.isEmpty());
}

void NoticeBar::setAction(const QString& text, const QString& toolTip)
{
    m_action->setText(text);
    m_action->setToolTip(toolTip);
    m_action->setVisible(!text.isEmpty());
    updateText();
}

void NoticeBar::setExpanded(bool expanded)
{
    m_expanded = expanded;
    updateText();
}

QString NoticeBar::shownText() const
{
    return m_body->text();
}

void NoticeBar::updateText()
{
    m_body->setWordWrap(m_expanded);
    if (m_expanded) {
        m_body->setText(m_fullText);
        // As tall as the text is at the width the body has: the bar's place (a tool bar) does not lay out height
        // for width, and a wrapped label's own size hint guesses a narrow, tall box.
        m_body->setFixedHeight(std::max(m_body->fontMetrics().height(), m_body->heightForWidth(m_body->width())));
        m_more->setText(QStringLiteral("Less"));
        m_more->setToolTip(QStringLiteral("Back to one line"));
        m_more->show();
        return;
    }
    m_body->setMinimumHeight(0);
    m_body->setMaximumHeight(QWIDGETSIZE_MAX);
    const int width = m_body->contentsRect().width();
    const QString elided = m_body->fontMetrics().elidedText(m_fullText, Qt::ElideRight, std::max(0, width));
    m_body->setText(elided);
    m_more->setText(QStringLiteral("More"));
    m_more->setToolTip(QStringLiteral("Show the whole message"));
    m_more->setVisible(elided != m_fullText);
}

bool NoticeBar::eventFilter(QObject* watched, QEvent* event)
{
    // A new width: elide again, or (expanded) wrap to a new height; a new height alone changes nothing.
    if (watched == m_body && event->type() == QEvent::Resize
        && static_cast<QResizeEvent*>(event)->oldSize().width() != m_body->width())
        updateText();
    return QFrame::eventFilter(watched, event);
}

void NoticeBar::changeEvent(QEvent* event)
{
    QFrame::changeEvent(event);
    if (!m_applying && (isThemeChange(event) || event->type() == QEvent::ParentChange))
        applyColors();
}

void NoticeBar::applyColors(const Theme* given)
{
    // Light or dark from the window's palette (not our own, which the style sheet below sets).
    const Theme& theme = given ? *given : parentWidget() ? Theme::of(parentWidget()) : Theme::current();
    const ThemeBox& box = m_tone == Tone::Warning ? theme.note : theme.notice;
    m_background = box.background;
    m_border = box.border;
    m_foreground = box.text;
    m_applying = true;
    const QString name = objectName();
    setStyleSheet(QStringLiteral("#%1 { background:%2; border:1px solid %3; } "
                                 "#%1 QLabel, #%1 QToolButton { color:%4; }")
                      .arg(name, m_background.name(), m_border.name(), m_foreground.name()));
    m_applying = false;
}

} // namespace streamscope
