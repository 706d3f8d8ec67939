// The quick controls: the knobs people turn to see a rule at work — host threads, streams per thread, chunks,
// pinned vs pageable memory, kernel work, default-stream mode. Each change is one undoable edit of the scenario
// (derived from the base scenario by applyQuickSettings, see quick_settings.h); the window re-simulates on it.
#pragma once

#include "quick_settings.h"

#include <QWidget>

class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QPushButton;
class QSpinBox;

namespace streamscope {

class ScenarioModel;

class QuickControls : public QWidget {
    Q_OBJECT
public:
    explicit QuickControls(QWidget* parent = nullptr);
    void setModel(ScenarioModel* model);

    // The knob values shown (those of the scenario in the model).
    QuickSettings settings() const { return m_shown; }
    // Applies knob values as one undoable edit (what the widgets do; public for tests and scripts).
    void apply(const QuickSettings& wanted, const QString& what);

    QSpinBox* threadsBox() const { return m_threads; }
    QSpinBox* streamsBox() const { return m_streams; }
    QSpinBox* chunksBox() const { return m_chunks; }
    QComboBox* memoryBox() const { return m_memory; }
    QDoubleSpinBox* kernelScaleBox() const { return m_kernelScale; }
    QComboBox* streamModeBox() const { return m_streamMode; }

private:
    void refresh();
    QuickState currentState() const;
    ScenarioModel* m_model = nullptr;
    QuickSettings m_shown;
    QSpinBox* m_threads;
    QSpinBox* m_streams;
    QSpinBox* m_chunks;
    QComboBox* m_memory;
    QDoubleSpinBox* m_kernelScale;
    QComboBox* m_streamMode;
    QPushButton* m_reset;
};

} // namespace streamscope
