// Presentation mode: the open lesson as slides for a classroom projector. The window goes full screen with its
// docks, toolbars, menu and status bar hidden; text is large and bold, the timeline high-contrast. Each lesson is
// four steps: Set up (its title, what to look for, the streams and host threads with their operations), Run (runs
// it on the window's backend, simulator or GPU, with progress), Timeline (fitted, large labels) and Explanation (the
// key check's verdict, the diagnostics and the key metrics beside the timeline, the spans they name outlined).
// Space, Right and Page Down step forward (presentation clickers send Page Down/Up); after the last step they open
// the lesson's contrasting variant, then the next lesson. Left and Page Up step back; Esc leaves and puts the window
// back exactly as it was: the lesson and variant it showed (not the one presented last), its trace and zoom, its
// docks and size.
#pragma once

#include <QByteArray>
#include <QObject>
#include <QPointer>
#include <QRect>
#include <QString>

#include <map>
#include <memory>
#include <utility>
#include <vector>

class QBoxLayout;
class QFrame;
class QLabel;
class QProgressBar;
class QTimer;
class QWidget;

namespace streamscope {

class MainWindow;
struct ShownDocument;

class PresentationMode : public QObject {
    Q_OBJECT
public:
    enum class Step { SetUp, Run, Timeline, Explanation };
    static constexpr int kStepCount = 4;
    static QString stepName(Step step); // "Set up", "Run", "Timeline", "Explanation"

    // The run started by the Run step.
    enum class RunState { Idle, Running, Finished, Failed };

    // Lives as long as `window` (its child); does nothing until entered.
    explicit PresentationMode(MainWindow* window);
    ~PresentationMode() override;

    bool isActive() const { return m_active; }
    Step currentStep() const { return m_step; }
    // "2/4 Run"
    QString stepIndicator() const;
    RunState runState() const { return m_runState; }
    // What the slide says, as plain text: title, step indicator and the text of the step.
    QString slideText() const;
    // The explanation of the trace shown (the text of the Explanation step), as plain text.
    QString explanationText() const;
    // The slide (the window's central widget while active), or nullptr.
    QWidget* stage() const { return m_stage; }
    // Pixel size of the body text on the slides (0 when not active).
    int bodyPixelSize() const;
    // The lesson and variant that stepping past the last step opens; empty when none follows.
    std::pair<QString, QString> nextDocument() const;

public Q_SLOTS:
    void setActive(bool active);
    void enter();
    void leave();
    // The next step; after the last one, the next variant or lesson (opened and shown from its Set up step).
    void step();
    // The previous step; before the first one, the previous variant or lesson (shown from its Explanation step).
    void back();

Q_SIGNALS:
    void activeChanged(bool active);
    void stepChanged(streamscope::PresentationMode::Step step);

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    struct BaseMetrics {
        long long makespanNs = 0;
        double speedup = 0;
    };

    void buildStage();
    void setStep(Step step);
    void startRun();
    void openDocument(const std::pair<QString, QString>& document, Step step);
    std::vector<std::pair<QString, QString>> lessonSequence() const;
    int sequenceIndex() const;
    bool waitingForTrace() const { return m_loading || m_awaitingTrace; }
    // Lays the slide out for the current step and fills in its text.
    void refresh();
    void scheduleRefresh();
    void applySizes();
    void fitTimeline();
    void highlightDiagnostics();
    void restoreHighlight();
    QString setUpHtml(double scale) const;
    QString runHtml(double scale) const;
    // `columns`: two columns, for the wide space under a timeline of few rows.
    QString explanationHtml(double scale, bool columns) const;
    // Height of a timeline lane on the slides, in pixels.
    int laneTarget() const;
    // Timeline above the explanation (few rows) or beside it; the share of the height the timeline gets.
    void layoutBody(bool explanation);
    QString footerText() const;
    // Sets `html(scale)` on `label` with the largest scale (1 down to 0.55) at which it fits the label's size.
    template <typename Html>
    void fitText(QLabel* label, Html html);

    MainWindow* m_window;
    bool m_active = false;
    Step m_step = Step::SetUp;
    RunState m_runState = RunState::Idle;
    QString m_runMessage; // progress while running; the error when it failed
    double m_runWallMs = 0;
    bool m_runOnGpu = false;
    bool m_loading = false;                       // a lesson was asked for and has not opened yet
    bool m_awaitingTrace = false;                 // the trace on the timeline is not yet the open lesson's
    std::map<QString, BaseMetrics> m_baseMetrics; // per lesson id: its run without a variant, for the contrast

    // What is restored on leaving: the document and zoom, the docks, bars and window.
    std::shared_ptr<const ShownDocument> m_shown;
    QByteArray m_savedState;
    QRect m_savedGeometry;
    Qt::WindowStates m_savedWindowState;
    bool m_menuBarVisible = true;
    bool m_statusBarVisible = true;
    bool m_concurrencyVisible = true;
    double m_savedFontScale = 1;
    int m_savedLaneHeight = 0;
    std::vector<QPointer<QWidget>> m_hidden; // docks and toolbars hidden on entering
    QPointer<QWidget> m_savedFocus;
    QPointer<QWidget> m_central; // the window's own central widget (with the timeline), shown inside the slide

    // The slide.
    QPointer<QWidget> m_stage;
    QFrame* m_header = nullptr;
    QLabel* m_title = nullptr;
    QLabel* m_indicator = nullptr;
    QWidget* m_textColumn = nullptr;
    QLabel* m_text = nullptr;
    QProgressBar* m_progress = nullptr;
    QLabel* m_explanation = nullptr;
    bool m_explanationBelow = false; // under the timeline (few rows), else beside it
    QBoxLayout* m_body = nullptr;
    QLabel* m_keysHint = nullptr;
    QLabel* m_nextHint = nullptr;
    QString m_textHtml, m_explanationHtml;
    QTimer* m_refreshTimer = nullptr;
    int m_stageHeight = 0;
};

} // namespace streamscope
