// The inspector dock: the selected span — its short name as the title and, when that leaves something out, the
// full demangled name (and the mangled symbol) to read and copy; kind, stream or thread, times (for a GPU run, how
// far they are known: measured, start corrected or uncertain, the CUDA events' error against CUPTI), size, launch
// configuration, the scenario op it came from — and its dependencies: what it waited for and what waited for it,
// as links that select those spans.
#pragma once

#include <QWidget>

#include <memory>

class QTextBrowser;
class QUrl;

namespace streamscope {

class Trace;

// The inspector's content for span `span` of `trace` as HTML (exposed for tests); links are "span:N" and
// "op:THREAD:OP"; colours are classes of the theme's rich-text style sheet (Theme::richTextStyleSheet) but for the
// kind's swatch, in the application theme's kind colour.
QString spanInspectorHtml(const Trace& trace, int span);

class SpanInspector : public QWidget {
    Q_OBJECT
public:
    explicit SpanInspector(QWidget* parent = nullptr);
    void setTrace(std::shared_ptr<const Trace> trace);
    void showSpan(int span);
    int span() const { return m_span; }
    QString html() const;

Q_SIGNALS:
    // A dependency link was clicked.
    void spanActivated(int span);
    // The "scenario op" link was clicked.
    void opActivated(int thread, int op);

protected:
    void changeEvent(QEvent* event) override; // a new palette: the theme's colours

private:
    void linkClicked(const QUrl& url);
    void refresh();
    QTextBrowser* m_browser;
    std::shared_ptr<const Trace> m_trace;
    int m_span = -1;
};

} // namespace streamscope
