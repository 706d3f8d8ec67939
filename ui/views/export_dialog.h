// The Export Image dialog: the size and how the image shows the timeline (fill or crop, scale, text size, the range,
// arrows by kind, the critical path, the concurrency strip, the legend, a transparent background), each choice
// remembered for next time.
#pragma once

#include "image_export.h"

#include <QDialog>

#include <array>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QSpinBox;

namespace streamscope {

class ExportImageDialog : public QDialog {
    Q_OBJECT
public:
    // `arrowsShown`: the arrow kinds the timeline shows now (the dialog starts from them); `pdf`: sizes in points.
    ExportImageDialog(const std::array<bool, kFlowKindCount>& arrowsShown, bool pdf, bool hasCriticalPath,
                      QWidget* parent = nullptr);

    // The options chosen; the range is nullopt for "what the timeline shows", else the whole trace's (set by the
    // caller from the view, which knows it).
    ImageOptions options() const;
    bool wholeTrace() const;
    // Stores the choices (QSettings "export/…") for next time.
    void remember() const;

private:
    QSpinBox* m_width = nullptr;
    QSpinBox* m_height = nullptr;
    QComboBox* m_fit = nullptr;
    QDoubleSpinBox* m_scale = nullptr;
    QSpinBox* m_text = nullptr; // percent; 0: automatic
    QComboBox* m_range = nullptr;
    std::array<QCheckBox*, kFlowKindCount> m_arrows{};
    QCheckBox* m_critical = nullptr;
    QCheckBox* m_concurrency = nullptr;
    QCheckBox* m_legend = nullptr;
    QCheckBox* m_transparent = nullptr;
};

} // namespace streamscope
