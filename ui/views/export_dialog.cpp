#include "export_dialog.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QSettings>
#include <QSpinBox>

namespace streamscope {

namespace {

QString arrowLabel(FlowKind k)
{
    switch (k) {
    case FlowKind::Launch: return QStringLiteral("Launch");
    case FlowKind::Event: return QStringLiteral("Event");
    case FlowKind::Sync: return QStringLiteral("Sync");
    case FlowKind::Implicit: return QStringLiteral("Implicit");
    case FlowKind::Call: return QStringLiteral("Call");
    case FlowKind::Collective: return QStringLiteral("Collective");
    }
    return {};
}

} // namespace

ExportImageDialog::ExportImageDialog(const std::array<bool, kFlowKindCount>& arrowsShown, bool pdf,
                                     bool hasCriticalPath, QWidget* parent)
    : QDialog(parent)
{
    setWindowTitle(QStringLiteral("Export Image"));
    QSettings settings;
    const QSize last = settings.value(QStringLiteral("exportSize"), QSize(1920, 1080)).toSize();
    auto* form = new QFormLayout(this);

    m_width = new QSpinBox;
    m_height = new QSpinBox;
    m_width->setRange(200, 16000);
    m_height->setRange(150, 16000);
    m_width->setValue(last.width());
    m_height->setValue(last.height());
    m_width->setObjectName(QStringLiteral("export-width"));
    m_height->setObjectName(QStringLiteral("export-height"));
    const QString unit = pdf ? QStringLiteral(" pt") : QStringLiteral(" px");
    m_width->setSuffix(unit);
    m_height->setSuffix(unit);
    form->addRow(QStringLiteral("Width"), m_width);
    form->addRow(QStringLiteral("Height"), m_height);

    m_fit = new QComboBox;
    m_fit->setObjectName(QStringLiteral("export-fit"));
    m_fit->addItem(QStringLiteral("Rows fill the height"), false);
    m_fit->addItem(QStringLiteral("Crop the height to the rows"), true);
    m_fit->setCurrentIndex(settings.value(QStringLiteral("export/crop"), false).toBool() ? 1 : 0);
    form->addRow(QStringLiteral("Fit"), m_fit);

    m_scale = new QDoubleSpinBox;
    m_scale->setObjectName(QStringLiteral("export-scale"));
    m_scale->setRange(0.25, 8);
    m_scale->setSingleStep(0.5);
    m_scale->setSuffix(QStringLiteral("×"));
    m_scale->setValue(settings.value(QStringLiteral("export/scale"), 1.0).toDouble());
    m_scale->setToolTip(QStringLiteral("PNG: device pixels per pixel (2× = twice the pixels, 192 dpi)"));
    m_scale->setEnabled(!pdf);
    form->addRow(QStringLiteral("Scale (PNG)"), m_scale);

    m_text = new QSpinBox;
    m_text->setObjectName(QStringLiteral("export-text"));
    m_text->setRange(0, 800);
    m_text->setSingleStep(25);
    m_text->setSuffix(QStringLiteral(" %"));
    m_text->setSpecialValueText(QStringLiteral("Automatic (from the size)"));
    m_text->setValue(settings.value(QStringLiteral("export/textPercent"), 0).toInt());
    form->addRow(QStringLiteral("Text size"), m_text);

    m_range = new QComboBox;
    m_range->setObjectName(QStringLiteral("export-range"));
    m_range->addItem(QStringLiteral("What the timeline shows"));
    m_range->addItem(QStringLiteral("The whole trace"));
    m_range->setCurrentIndex(settings.value(QStringLiteral("export/wholeTrace"), false).toBool() ? 1 : 0);
    form->addRow(QStringLiteral("Time range"), m_range);

    auto* arrows = new QHBoxLayout;
    for (int k = 0; k < kFlowKindCount; ++k) {
        auto* box = new QCheckBox(arrowLabel(FlowKind(k)));
        box->setObjectName(QStringLiteral("export-arrow-") + QString::fromUtf8(toString(FlowKind(k)).data()));
        box->setChecked(arrowsShown[size_t(k)]);
        arrows->addWidget(box);
        m_arrows[size_t(k)] = box;
    }
    arrows->addStretch();
    form->addRow(QStringLiteral("Arrows"), arrows);

    m_critical = new QCheckBox(QStringLiteral("Outline the critical path"));
    m_critical->setObjectName(QStringLiteral("export-critical-path"));
    m_critical->setChecked(hasCriticalPath);
    m_concurrency = new QCheckBox(QStringLiteral("Concurrency strip (operations running over time)"));
    m_concurrency->setObjectName(QStringLiteral("export-concurrency"));
    m_concurrency->setChecked(settings.value(QStringLiteral("export/concurrency"), false).toBool());
    m_legend = new QCheckBox(QStringLiteral("Legend"));
    m_legend->setObjectName(QStringLiteral("export-legend"));
    m_legend->setChecked(settings.value(QStringLiteral("export/legend"), true).toBool());
    m_transparent = new QCheckBox(QStringLiteral("Transparent background"));
    m_transparent->setObjectName(QStringLiteral("export-transparent"));
    m_transparent->setChecked(settings.value(QStringLiteral("export/transparent"), false).toBool());
    form->addRow(QString(), m_critical);
    form->addRow(QString(), m_concurrency);
    form->addRow(QString(), m_legend);
    form->addRow(QString(), m_transparent);

    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    form->addRow(buttons);
}

ImageOptions ExportImageDialog::options() const
{
    ImageOptions o;
    o.size = QSize(m_width->value(), m_height->value());
    o.crop = m_fit->currentData().toBool();
    o.scale = m_scale->isEnabled() ? m_scale->value() : 1.0;
    o.textScale = m_text->value() / 100.0;
    std::array<bool, kFlowKindCount> on{};
    for (int k = 0; k < kFlowKindCount; ++k)
        on[size_t(k)] = m_arrows[size_t(k)]->isChecked();
    o.arrows = on;
    o.criticalPath = m_critical->isChecked();
    o.concurrency = m_concurrency->isChecked();
    o.legend = m_legend->isChecked();
    o.transparent = m_transparent->isChecked();
    return o;
}

bool ExportImageDialog::wholeTrace() const
{
    return m_range->currentIndex() == 1;
}

void ExportImageDialog::remember() const
{
    QSettings settings;
    settings.setValue(QStringLiteral("exportSize"), QSize(m_width->value(), m_height->value()));
    settings.setValue(QStringLiteral("export/crop"), m_fit->currentData().toBool());
    settings.setValue(QStringLiteral("export/scale"), m_scale->value());
    settings.setValue(QStringLiteral("export/textPercent"), m_text->value());
    settings.setValue(QStringLiteral("export/wholeTrace"), wholeTrace());
    settings.setValue(QStringLiteral("export/legend"), m_legend->isChecked());
    settings.setValue(QStringLiteral("export/concurrency"), m_concurrency->isChecked());
    settings.setValue(QStringLiteral("export/transparent"), m_transparent->isChecked());
}

} // namespace streamscope
