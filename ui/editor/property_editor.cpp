// The property editor: the form of the item selected in the scenario tree, its fields with their issues shown
// under them, read-only for an embedded scenario; the field kinds (text, numbers, sizes, choices). The forms of each
// item kind: property_forms.cpp.
#include "property_editor.h"

#include "device_profile.h"
#include "format.h"
#include "theme.h"

#include <QAbstractButton>
#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QEvent>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QSizePolicy>
#include <QSpinBox>
#include <QVBoxLayout>

#include <set>

namespace streamscope {

namespace {

QString messageStyle(const QWidget* widget, bool error)
{
    const Theme& theme = Theme::of(widget);
    return QStringLiteral("color:%1;").arg((error ? theme.fail : theme.warning).name());
}

bool matchesField(const QString& issueField, const QString& key)
{
    return issueField == key || issueField.startsWith(key + QLatin1Char('/'));
}
} // namespace

PropertyEditor::PropertyEditor(QWidget* parent) : QWidget(parent), m_header(new QLabel), m_itemMessage(new QLabel)
{
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    QFont bold = m_header->font();
    bold.setBold(true);
    m_header->setFont(bold);
    m_header->setWordWrap(true);
    m_itemMessage->setWordWrap(true);
    m_itemMessage->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_itemMessage->hide();
    layout->addWidget(m_header);
    layout->addWidget(m_itemMessage);
    layout->addStretch(1);
    rebuild();
}

void PropertyEditor::setModel(ScenarioModel* model)
{
    if (m_model)
        m_model->disconnect(this);
    m_model = model;
    m_index = QPersistentModelIndex();
    if (m_model) {
        connect(m_model, &ScenarioModel::scenarioChanged, this, &PropertyEditor::refresh);
        connect(m_model, &ScenarioModel::modelReset, this, [this] { setCurrentIndex({}); });
    }
    rebuild();
}

void PropertyEditor::setCurrentIndex(const QModelIndex& index)
{
    m_index = index.isValid() ? QPersistentModelIndex(index.siblingAtColumn(0)) : QPersistentModelIndex();
    refresh();
}

ScenarioItemRef PropertyEditor::item() const
{
    if (!m_model || !m_index.isValid())
        return {};
    return m_model->itemAt(m_index);
}

QString PropertyEditor::signature() const
{
    const ScenarioItemRef it = item();
    QString s = QString::number(int(it.type));
    if (const Op* o = m_model ? m_model->op(it) : nullptr)
        s += QStringLiteral("/%1/%2/%3").arg(int(o->kind)).arg(int(o->kernel)).arg(int(o->copy));
    return s;
}

void PropertyEditor::refresh()
{
    if (signature() != m_builtSignature) {
        rebuild();
        return;
    }
    for (const Field& f : m_fields)
        if (f.load)
            f.load();
    if (const QString header = itemHeader(); !header.isEmpty())
        m_header->setText(header);
    // Validation messages: under their field, or above the form.
    QStringList general;
    bool generalError = false;
    for (Field& f : m_fields) {
        f.message->clear();
        f.message->hide();
    }
    if (m_model) {
        for (const ScenarioIssue& issue : m_model->issuesAt(item())) {
            const bool error = issue.severity == ScenarioIssue::Severity::Error;
            Field* target = nullptr;
            for (Field& f : m_fields)
                if (!issue.field.isEmpty() && matchesField(issue.field, f.key))
                    target = &f;
            const QString text = (error ? QStringLiteral("✖ ") : QStringLiteral("⚠ ")) + issue.message;
            if (target) {
                target->message->setText(
                    target->message->text().isEmpty() ? text : target->message->text() + QLatin1Char('\n') + text);
                target->message->setStyleSheet(messageStyle(this, error));
                target->message->show();
            } else {
                general << text + (issue.field.isEmpty() ? QString() : QStringLiteral(" (%1)").arg(issue.path));
                generalError = generalError || error;
            }
        }
    }
    m_itemMessage->setText(general.join(QLatin1Char('\n')));
    m_itemMessage->setStyleSheet(messageStyle(this, generalError));
    m_itemMessage->setVisible(!general.isEmpty());
}

void PropertyEditor::changeEvent(QEvent* event)
{
    QWidget::changeEvent(event);
    if (isThemeChange(event))
        refresh();
}

void PropertyEditor::rebuild()
{
    m_fields.clear();
    m_description = nullptr;
    if (m_formHost) {
        // The old editors must not commit anything while they go (focus-out of a line edit being deleted).
        const auto children = m_formHost->findChildren<QObject*>();
        for (QObject* c : children)
            QObject::disconnect(c, nullptr, this, nullptr);
        m_formHost->hide();
        layout()->removeWidget(m_formHost);
        m_formHost->deleteLater();
    }
    m_formHost = new QWidget;
    m_form = new QFormLayout(m_formHost);
    m_form->setContentsMargins(0, 0, 0, 0);
    m_form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    m_form->setLabelAlignment(Qt::AlignLeft | Qt::AlignTop);
    static_cast<QVBoxLayout*>(layout())->insertWidget(2, m_formHost);
    m_builtSignature = signature();

    const ScenarioItemRef it = item();
    switch (it.type) {
    case ScenarioItemType::Settings: buildSettings(); break;
    case ScenarioItemType::Device: buildDevice(); break;
    case ScenarioItemType::Stream: buildStream(); break;
    case ScenarioItemType::Thread: buildThread(); break;
    case ScenarioItemType::Op:
    case ScenarioItemType::GraphNode: buildOp(); break;
    case ScenarioItemType::DevicesGroup:
        m_header->setText(QStringLiteral("Devices"));
        m_form->addRow(new QLabel(QStringLiteral("The GPUs the scenario uses. Add one with Add ▸ GPU.")));
        break;
    case ScenarioItemType::ThreadsGroup:
        m_header->setText(QStringLiteral("Host threads"));
        m_form->addRow(new QLabel(QStringLiteral("Host threads issue their operations in order.")));
        break;
    case ScenarioItemType::None: m_header->setText(QStringLiteral("Select an item of the scenario to edit it.")); break;
    }
    applyReadOnly();
    refresh();
}

void PropertyEditor::setReadOnly(bool readOnly)
{
    if (readOnly == m_readOnly)
        return;
    m_readOnly = readOnly;
    rebuild(); // fresh editors: leaving read-only restores each one as built
}

void PropertyEditor::applyReadOnly()
{
    if (!m_readOnly || !m_formHost)
        return;
    // Text fields read-only (still selectable, not greyed); choices and check boxes disabled.
    const auto widgets = m_formHost->findChildren<QWidget*>();
    for (QWidget* w : widgets) {
        if (auto* line = qobject_cast<QLineEdit*>(w))
            line->setReadOnly(true);
        else if (auto* text = qobject_cast<QPlainTextEdit*>(w))
            text->setReadOnly(true);
        else if (auto* spin = qobject_cast<QAbstractSpinBox*>(w)) {
            spin->setReadOnly(true);
            spin->setButtonSymbols(QAbstractSpinBox::NoButtons);
        } else if (qobject_cast<QComboBox*>(w) || qobject_cast<QAbstractButton*>(w))
            w->setEnabled(false);
    }
}

void PropertyEditor::addField(const QString& key, const QString& label, QWidget* editor, std::function<void()> load)
{
    auto* cell = new QWidget;
    auto* v = new QVBoxLayout(cell);
    v->setContentsMargins(0, 0, 0, 0);
    v->setSpacing(1);
    v->addWidget(editor);
    auto* message = new QLabel;
    message->setWordWrap(true);
    message->setTextInteractionFlags(Qt::TextSelectableByMouse);
    message->hide();
    v->addWidget(message);
    m_form->addRow(label, cell);
    m_fields.push_back(Field{key, editor, message, std::move(load)});
}

void PropertyEditor::addText(const QString& key, const QString& label, std::function<QString()> get,
                             std::function<void(const QString&)> set, const QString& placeholder)
{
    auto* edit = new QLineEdit;
    edit->setPlaceholderText(placeholder);
    connect(edit, &QLineEdit::editingFinished, this, [edit, get, set] {
        if (edit->text() != get())
            set(edit->text());
    });
    addField(key, label, edit, [edit, get] {
        const QSignalBlocker b(edit);
        if (edit->text() != get()) {
            edit->setText(get());
            edit->setCursorPosition(0); // show the beginning of a long title, not its end
        }
    });
}

void PropertyEditor::addInt(const QString& key, const QString& label, int min, int max, std::function<int()> get,
                            std::function<void(int)> set, const QString& suffix, const QString& specialValue)
{
    auto* box = new QSpinBox;
    box->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Fixed);
    box->setMinimumWidth(box->fontMetrics().horizontalAdvance(QStringLiteral("0000000 ×")) + 24);
    box->setRange(min, max);
    box->setKeyboardTracking(false);
    box->setSuffix(suffix);
    box->setSpecialValueText(specialValue);
    connect(box, &QSpinBox::valueChanged, this, [get, set](int v) {
        if (v != get())
            set(v);
    });
    addField(key, label, box, [box, get] {
        const QSignalBlocker b(box);
        box->setValue(get());
    });
}

void PropertyEditor::addNumber(const QString& key, const QString& label, double min, double max, int decimals,
                               std::function<double()> get, std::function<void(double)> set, const QString& suffix)
{
    auto* box = new QDoubleSpinBox;
    box->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Fixed); // a wide range must not widen the dock
    box->setMinimumWidth(box->fontMetrics().horizontalAdvance(QStringLiteral("0000000.00 µs")) + 24);
    box->setRange(min, max);
    box->setDecimals(decimals);
    box->setKeyboardTracking(false);
    box->setStepType(QAbstractSpinBox::AdaptiveDecimalStepType);
    box->setSuffix(suffix);
    connect(box, &QDoubleSpinBox::valueChanged, this, [get, set](double v) {
        if (v != get())
            set(v);
    });
    addField(key, label, box, [box, get] {
        const QSignalBlocker b(box);
        box->setValue(get());
    });
}

void PropertyEditor::addChoice(const QString& key, const QString& label,
                               const std::vector<std::pair<QString, QVariant>>& items, std::function<QVariant()> get,
                               std::function<void(const QVariant&)> set, bool editable)
{
    auto* box = new QComboBox;
    box->setEditable(editable);
    // Long item texts ("stream-sync  (cudaStreamSynchronize)") must not widen the dock; the popup shows them whole.
    box->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    box->setMinimumContentsLength(8);
    for (const auto& [text, data] : items)
        box->addItem(text, data);
    if (editable) {
        connect(box->lineEdit(), &QLineEdit::editingFinished, this, [box, get, set] {
            const QString t = box->currentText().trimmed();
            // The items show "name" as their text; typed text is a (new) name.
            if (QVariant(t) != get())
                set(t);
        });
    }
    connect(box, &QComboBox::activated, this, [box, get, set](int i) {
        const QVariant v = box->itemData(i);
        if (v != get())
            set(v);
    });
    addField(key, label, box, [box, get] {
        const QSignalBlocker b(box);
        const QVariant v = get();
        int i = box->findData(v);
        if (i < 0) {
            // A value the list does not offer (a stream that does not exist): shown so it can be fixed.
            box->addItem(v.toString() + QStringLiteral(" (unknown)"), v);
            i = box->count() - 1;
        }
        box->setCurrentIndex(i);
        if (box->isEditable())
            box->setEditText(v.toString());
    });
}

void PropertyEditor::addBytes(const QString& key, const QString& label, std::function<int64_t()> get,
                              std::function<void(int64_t)> set)
{
    auto* edit = new QLineEdit;
    edit->setToolTip(QStringLiteral("Bytes: 4096, 64 KiB, 16 MiB, 1.5 GiB"));
    connect(edit, &QLineEdit::editingFinished, this, [edit, get, set] {
        const int64_t b = parseBytes(edit->text());
        if (b < 0) {
            edit->setText(formatBytes(get())); // not a size: back to the value
            return;
        }
        if (b != get())
            set(b);
    });
    addField(key, label, edit, [edit, get] {
        const QSignalBlocker b(edit);
        edit->setText(formatBytes(get()));
    });
}

void PropertyEditor::addDim3(const QString& key, const QString& label, std::function<Dim3()> get,
                             std::function<void(Dim3)> set)
{
    auto* host = new QWidget;
    auto* h = new QHBoxLayout(host);
    h->setContentsMargins(0, 0, 0, 0);
    QSpinBox* boxes[3];
    for (int i = 0; i < 3; ++i) {
        boxes[i] = new QSpinBox;
        boxes[i]->setRange(0, std::numeric_limits<int>::max());
        boxes[i]->setKeyboardTracking(false);
        boxes[i]->setPrefix(i == 0 ? QStringLiteral("x ") : i == 1 ? QStringLiteral("y ") : QStringLiteral("z "));
        // The range's ten digits would make three boxes wider than the dock: they share the width instead.
        boxes[i]->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Fixed);
        boxes[i]->setMinimumWidth(boxes[i]->fontMetrics().horizontalAdvance(QStringLiteral("x 00000")) + 24);
        h->addWidget(boxes[i], 1);
    }
    auto commit = [b0 = boxes[0], b1 = boxes[1], b2 = boxes[2], get, set] {
        const Dim3 d{uint32_t(b0->value()), uint32_t(b1->value()), uint32_t(b2->value())};
        if (!(d == get()))
            set(d);
    };
    for (QSpinBox* b : boxes)
        connect(b, &QSpinBox::valueChanged, this, commit);
    addField(key, label, host, [b0 = boxes[0], b1 = boxes[1], b2 = boxes[2], get] {
        const Dim3 d = get();
        const QSignalBlocker s0(b0), s1(b1), s2(b2);
        b0->setValue(int(std::min<uint32_t>(d.x, uint32_t(std::numeric_limits<int>::max()))));
        b1->setValue(int(std::min<uint32_t>(d.y, uint32_t(std::numeric_limits<int>::max()))));
        b2->setValue(int(std::min<uint32_t>(d.z, uint32_t(std::numeric_limits<int>::max()))));
    });
}

std::vector<std::pair<QString, QVariant>> PropertyEditor::deviceChoices() const
{
    std::vector<std::pair<QString, QVariant>> items;
    for (const DeviceSpec& d : m_model->scenario().devices)
        items.emplace_back(QStringLiteral("GPU %1").arg(d.index)
                               + (d.profile.empty() ? QString() : QStringLiteral(" (%1)").arg(qs(d.profile))),
                           d.index);
    return items;
}

std::vector<std::pair<QString, QVariant>> PropertyEditor::streamChoices() const
{
    // With several GPUs each stream says which one it is on ("s1 (GPU 1)"): the names alone do not tell.
    const Scenario& sc = m_model->scenario();
    std::set<int> devices;
    for (const StreamSpec& s : sc.streams)
        devices.insert(s.device);
    std::vector<std::pair<QString, QVariant>> items;
    for (const StreamSpec& s : sc.streams)
        items.emplace_back(
            devices.size() > 1 ? QStringLiteral("%1 (GPU %2)").arg(qs(s.name)).arg(s.device) : qs(s.name), qs(s.name));
    return items;
}

std::vector<std::pair<QString, QVariant>> PropertyEditor::eventChoices() const
{
    std::set<std::string> names;
    for (const ThreadSpec& t : m_model->scenario().threads)
        for (const Op& o : t.ops) {
            if (!o.event.empty())
                names.insert(o.event);
            for (const Op& n : o.ops)
                if (!n.event.empty())
                    names.insert(n.event);
        }
    std::vector<std::pair<QString, QVariant>> items;
    for (const auto& n : names)
        items.emplace_back(qs(n), qs(n));
    return items;
}

QWidget* PropertyEditor::fieldEditor(const QString& key) const
{
    for (const Field& f : m_fields)
        if (f.key == key)
            return f.editor;
    return nullptr;
}

QString PropertyEditor::fieldMessage(const QString& key) const
{
    for (const Field& f : m_fields)
        if (f.key == key)
            return f.message->isVisible() || !f.message->isHidden() ? f.message->text() : QString();
    return {};
}

QString PropertyEditor::header() const
{
    return m_header->text();
}

QString PropertyEditor::itemMessage() const
{
    return m_itemMessage->isHidden() ? QString() : m_itemMessage->text();
}

QStringList PropertyEditor::fieldKeys() const
{
    QStringList keys;
    for (const Field& f : m_fields)
        keys << f.key;
    return keys;
}

} // namespace streamscope