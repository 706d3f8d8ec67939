// Analysis ▸ What if…: picks one setting to change in the replay of a GPU recording (core replayRecordedRun):
// more or fewer streams, another CUDA_DEVICE_MAX_CONNECTIONS, pinned or pageable copies, stream priorities or kinds.
// The key list comes from core (replayKeys), the per-stream keys expanded for the recording's streams; the value is
// checked with core's parseReplaySetting before the dialog accepts, and the error names the key.
#pragma once

#include "scenario.h"
#include "whatif.h"

#include <QDialog>
#include <QString>

class QComboBox;
class QLabel;

namespace streamscope {

class WhatIfDialog : public QDialog {
    Q_OBJECT
public:
    // `scenario`: the one embedded in the recording (its streams and their settings as recorded).
    explicit WhatIfDialog(const Scenario& scenario, const QString& documentTitle, QWidget* parent = nullptr);

    // The setting chosen (valid once the dialog was accepted).
    ReplaySetting setting() const;
    // For tests and for reopening with the last choice: select a key and type a value.
    void setSetting(const QString& key, const QString& value);
    QComboBox* keyBox() const { return m_key; }
    QComboBox* valueBox() const { return m_value; }
    QString errorText() const;

    void accept() override;

private:
    void keyChanged();

    Scenario m_scenario;
    QComboBox* m_key = nullptr;
    QComboBox* m_value = nullptr;
    QLabel* m_help = nullptr;
    QLabel* m_error = nullptr;
};

} // namespace streamscope
