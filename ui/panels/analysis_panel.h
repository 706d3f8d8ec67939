// The analysis dock: what the lesson says to look for, its checks (PASS/FAIL with the sentence saying why) and the
// metrics of the trace (makespan, GPU work, speedup over serial, concurrency, per-stream busy time).
#pragma once

#include "document_loader.h"

#include <QWidget>

#include <memory>

class QTextBrowser;

namespace streamscope {

// The panel's content as HTML (exposed for tests). Its colours are classes of the theme's rich-text style sheet
// (Theme::richTextStyleSheet): muted, faint, pass, fail, warning, info, note, effect.
// `variantText`: what the lesson's variant that is open changes (empty: none).
QString analysisHtml(const AnalyzedTrace* trace, const QString& lessonTitle, const QString& lessonText,
                     const QString& variantText = {});

class AnalysisPanel : public QWidget {
    Q_OBJECT
public:
    explicit AnalysisPanel(QWidget* parent = nullptr);

    // The lesson text shown above the checks (the scenario open in the editor); empty: the trace's scenario's.
    void setLesson(const QString& title, const QString& description, const QString& variantText = {});
    void setTrace(std::shared_ptr<const AnalyzedTrace> trace);
    QString html() const;
    // Number of checks that passed and failed in the shown trace.
    int passedChecks() const;
    int failedChecks() const;

Q_SIGNALS:
    // A diagnostic's "show" link: the first span it names.
    void spanActivated(int span);

protected:
    void changeEvent(QEvent* event) override; // a new palette: the theme's colours

private:
    void refresh();
    QTextBrowser* m_browser;
    std::shared_ptr<const AnalyzedTrace> m_trace;
    QString m_lessonTitle, m_lessonText, m_variantText;
};

} // namespace streamscope
