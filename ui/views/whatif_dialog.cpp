#include "whatif_dialog.h"

#include "format.h"
#include "theme.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QLabel>
#include <QPushButton>
#include <QVBoxLayout>

#include <algorithm>

namespace streamscope {

namespace {

// The value the recording ran with, as the starting value of the key.
QString recordedValue(const Scenario& s, const QString& key)
{
    if (key == QStringLiteral("streams")) {
        int n = 0;
        for (const auto& st : s.streams)
            n += st.kind == StreamKind::Blocking || st.kind == StreamKind::NonBlocking;
        return QString::number(std::max(1, n));
    }
    if (key == QStringLiteral("connections"))
        return QString::number(s.run.maxConnections().value_or(8));
    if (key == QStringLiteral("pinned")) {
        for (const auto& t : s.threads)
            for (const auto& op : t.ops)
                if (op.kind == OpKind::Memcpy && !op.pinned)
                    return QStringLiteral("false");
        return QStringLiteral("true");
    }
    if (key == QStringLiteral("priorities"))
        return QStringLiteral("off");
    for (const auto& st : s.streams) {
        if (key == QStringLiteral("priority.") + qs(st.name))
            return QString::number(st.priority);
        if (key == QStringLiteral("kind.") + qs(st.name))
            return qs(toString(st.kind));
    }
    return {};
}

// Values offered in the (editable) value box.
QStringList suggestedValues(const QString& key)
{
    if (key == QStringLiteral("streams"))
        return {QStringLiteral("1"), QStringLiteral("2"),  QStringLiteral("4"),
                QStringLiteral("8"), QStringLiteral("16"), QStringLiteral("32")};
    if (key == QStringLiteral("connections"))
        return {QStringLiteral("1"), QStringLiteral("2"),  QStringLiteral("4"),
                QStringLiteral("8"), QStringLiteral("16"), QStringLiteral("32")};
    if (key == QStringLiteral("pinned"))
        return {QStringLiteral("true"), QStringLiteral("false")};
    if (key == QStringLiteral("priorities"))
        return {QStringLiteral("off")};
    if (key.startsWith(QStringLiteral("priority.")))
        return {QStringLiteral("0"),  QStringLiteral("-1"), QStringLiteral("-2"),
                QStringLiteral("-3"), QStringLiteral("-4"), QStringLiteral("-5")};
    if (key.startsWith(QStringLiteral("kind.")))
        return {QStringLiteral("blocking"), QStringLiteral("non-blocking")};
    return {};
}

} // namespace

WhatIfDialog::WhatIfDialog(const Scenario& scenario, const QString& documentTitle, QWidget* parent)
    : QDialog(parent), m_scenario(scenario)
{
    setWindowTitle(QStringLiteral("What if… — %1").arg(documentTitle));
    auto* intro = new QLabel(QStringLiteral(
        "Replays the recorded run on the simulator with the durations the GPU measured, with one setting changed, "
        "and shows it beside the recording. The replay of the unchanged run is compared with the recording first: "
        "its error is how far to trust the change."));
    intro->setWordWrap(true);

    m_key = new QComboBox;
    m_key->setObjectName(QStringLiteral("whatIfKey"));
    for (const ReplayKey& k : replayKeys()) {
        const QString key = qs(k.key);
        const bool perStream = key.endsWith(QStringLiteral(".<stream>"));
        if (!perStream) {
            m_key->addItem(key, key);
            m_key->setItemData(m_key->count() - 1, qs(k.help), Qt::ToolTipRole);
            continue;
        }
        const QString prefix = key.left(key.indexOf(QLatin1Char('.')) + 1);
        for (const StreamSpec& st : scenario.streams) {
            if (prefix == QStringLiteral("kind.") && st.kind != StreamKind::Blocking
                && st.kind != StreamKind::NonBlocking)
                continue;
            const QString name = prefix + qs(st.name);
            m_key->addItem(name, name);
            m_key->setItemData(m_key->count() - 1, qs(k.help), Qt::ToolTipRole);
        }
    }
    m_value = new QComboBox;
    m_value->setObjectName(QStringLiteral("whatIfValue"));
    m_value->setEditable(true);
    m_help = new QLabel;
    m_help->setWordWrap(true);
    m_error = new QLabel;
    m_error->setObjectName(QStringLiteral("whatIfError"));
    m_error->setWordWrap(true);
    m_error->setStyleSheet(QStringLiteral("color:%1;").arg(Theme::of(this).fail.name()));
    m_error->hide();

    auto* form = new QFormLayout;
    form->addRow(QStringLiteral("&Setting:"), m_key);
    form->addRow(QStringLiteral("&Value:"), m_value);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
    buttons->button(QDialogButtonBox::Ok)->setText(QStringLiteral("Replay"));
    connect(buttons, &QDialogButtonBox::accepted, this, &WhatIfDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &WhatIfDialog::reject);

    auto* layout = new QVBoxLayout(this);
    layout->addWidget(intro);
    layout->addLayout(form);
    layout->addWidget(m_help);
    layout->addWidget(m_error);
    layout->addWidget(buttons);

    connect(m_key, &QComboBox::currentIndexChanged, this, &WhatIfDialog::keyChanged);
    keyChanged();
}

void WhatIfDialog::keyChanged()
{
    const QString key = m_key->currentData().toString();
    m_value->clear();
    m_value->addItems(suggestedValues(key));
    m_value->setCurrentText(recordedValue(m_scenario, key));
    QString help;
    for (const ReplayKey& k : replayKeys()) {
        const QString pattern = qs(k.key);
        const QString prefix = pattern.left(pattern.indexOf(QLatin1Char('.')) + 1);
        if (pattern == key || (pattern.endsWith(QStringLiteral(".<stream>")) && key.startsWith(prefix)))
            help = qs(k.help) + QStringLiteral(" (") + qs(k.values) + QStringLiteral("); the recording: ")
                + recordedValue(m_scenario, key) + QStringLiteral(".");
    }
    m_help->setText(help);
    m_error->hide();
}

void WhatIfDialog::setSetting(const QString& key, const QString& value)
{
    const int i = m_key->findData(key);
    if (i >= 0)
        m_key->setCurrentIndex(i);
    m_value->setCurrentText(value);
}

ReplaySetting WhatIfDialog::setting() const
{
    return {m_key->currentData().toString().toStdString(), m_value->currentText().trimmed().toStdString()};
}

QString WhatIfDialog::errorText() const
{
    return m_error->isVisible() || !m_error->text().isEmpty() ? m_error->text() : QString();
}

void WhatIfDialog::accept()
{
    const ReplaySetting s = setting();
    auto parsed = parseReplaySetting(s.key + "=" + s.value);
    if (!parsed) {
        m_error->setText(qs(parsed.error().toString()));
        m_error->show();
        return;
    }
    m_error->clear();
    m_error->hide();
    QDialog::accept();
}

} // namespace streamscope
