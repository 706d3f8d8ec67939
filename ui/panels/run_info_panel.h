// The run info dock: where a trace comes from — source and backend, how a GPU run was timed and what timing cost
// it (right under the source), scenario and variant, devices and their properties, host, date, command, settings,
// clock alignment error — and its size.
#pragma once

#include <QWidget>

#include <memory>

class QTextBrowser;

namespace streamscope {

class Trace;

// The panel's content as HTML (exposed for tests). `file`: where the trace was read from, if anywhere. Colours are
// classes of the theme's rich-text style sheet (Theme::richTextStyleSheet).
QString runInfoHtml(const Trace* trace, const QString& file, double wallMs);

class RunInfoPanel : public QWidget {
    Q_OBJECT
public:
    explicit RunInfoPanel(QWidget* parent = nullptr);
    // `wallMs` < 0: unknown (a trace read from a file).
    void setTrace(std::shared_ptr<const Trace> trace, const QString& file = {}, double wallMs = -1);
    QString html() const;

protected:
    void changeEvent(QEvent* event) override; // a new palette: the theme's colours

private:
    void refresh();
    QTextBrowser* m_browser;
    std::shared_ptr<const Trace> m_trace;
    QString m_file;
    double m_wallMs = -1;
};

} // namespace streamscope
