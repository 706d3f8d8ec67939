#include "property_editor.h"

#include "device_profile.h"
#include "format.h"

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

const QString kErrorStyle = QStringLiteral("color:#c62828;");
const QString kWarningStyle = QStringLiteral("color:#9a6700;");

bool matchesField(const QString& issueField, const QString& key)
{
    return issueField == key || issueField.startsWith(key + QLatin1Char('/'));
}

bool isSizeKernel(KernelKind k)
{
    return k == KernelKind::Fma || k == KernelKind::Triad || k == KernelKind::Matmul || k == KernelKind::Transpose ||
           k == KernelKind::Reduce;
}

// Kernels whose grid follows from the problem size unless one is given (see effectiveGrid).
bool hasDerivedGrid(KernelKind k)
{
    return k == KernelKind::Matmul || k == KernelKind::Transpose || k == KernelKind::Triad || k == KernelKind::Reduce;
}

bool opHasStream(OpKind k)
{
    return k != OpKind::EventSync && k != OpKind::DeviceSync && k != OpKind::HostWork && k != OpKind::Malloc &&
           k != OpKind::Free;
}

bool opHasEvent(OpKind k)
{
    return k == OpKind::Record || k == OpKind::Wait || k == OpKind::EventSync;
}

const OpKind kAllOpKinds[] = {OpKind::Kernel,   OpKind::Memcpy,   OpKind::Memset,     OpKind::Record,
                              OpKind::Wait,     OpKind::HostFunc, OpKind::StreamSync, OpKind::EventSync,
                              OpKind::DeviceSync, OpKind::HostWork, OpKind::Graph,    OpKind::Malloc,
                              OpKind::Free};

} // namespace

PropertyEditor::PropertyEditor(QWidget* parent)
    : QWidget(parent), m_header(new QLabel), m_itemMessage(new QLabel)
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
    // Validation messages: under their field, or above the form.
    QStringList general;
    QString generalStyle = kWarningStyle;
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
                target->message->setText(target->message->text().isEmpty() ? text
                                                                            : target->message->text() + QLatin1Char('\n') + text);
                target->message->setStyleSheet(error ? kErrorStyle : kWarningStyle);
                target->message->show();
            } else {
                general << text + (issue.field.isEmpty() ? QString() : QStringLiteral(" (%1)").arg(issue.path));
                if (error)
                    generalStyle = kErrorStyle;
            }
        }
    }
    m_itemMessage->setText(general.join(QLatin1Char('\n')));
    m_itemMessage->setStyleSheet(generalStyle);
    m_itemMessage->setVisible(!general.isEmpty());
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
    case ScenarioItemType::None:
        m_header->setText(QStringLiteral("Select an item of the scenario to edit it."));
        break;
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
        items.emplace_back(QStringLiteral("GPU %1").arg(d.index) +
                               (d.profile.empty() ? QString() : QStringLiteral(" (%1)").arg(qs(d.profile))),
                           d.index);
    return items;
}

std::vector<std::pair<QString, QVariant>> PropertyEditor::streamChoices() const
{
    std::vector<std::pair<QString, QVariant>> items;
    for (const StreamSpec& s : m_model->scenario().streams)
        items.emplace_back(qs(s.name), qs(s.name));
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

// ---- forms -----------------------------------------------------------------------------------------------------

void PropertyEditor::buildSettings()
{
    m_header->setText(QStringLiteral("Scenario"));
    ScenarioModel* m = m_model;
    auto edit = [m](const QString& field, const std::function<void(ScenarioSettings&)>& change) {
        ScenarioSettings s = m->settings();
        change(s);
        m->setSettings(s, field);
    };
    addText(QStringLiteral("title"), QStringLiteral("Title"), [m] { return qs(m->scenario().title); },
            [edit](const QString& v) { edit(QStringLiteral("title"), [&](ScenarioSettings& s) { s.title = v.toStdString(); }); });
    addText(QStringLiteral("id"), QStringLiteral("Id"), [m] { return qs(m->scenario().id); },
            [edit](const QString& v) { edit(QStringLiteral("id"), [&](ScenarioSettings& s) { s.id = v.toStdString(); }); });

    // The description is long text: it is committed when the editor loses focus.
    m_description = new QPlainTextEdit;
    m_description->setTabChangesFocus(true);
    m_description->setMinimumHeight(60);
    m_description->setMaximumHeight(110);
    m_description->installEventFilter(this);
    QPlainTextEdit* desc = m_description;
    addField(QStringLiteral("description"), QStringLiteral("What to look for"), desc, [desc, m] {
        const QString v = qs(m->scenario().description);
        if (desc->toPlainText() != v) {
            const QSignalBlocker b(desc);
            desc->setPlainText(v);
        }
    });

    addInt(QStringLiteral("run/warmup"), QStringLiteral("Warm-up iterations"), 0, 1000,
           [m] { return m->scenario().run.warmup; },
           [edit](int v) { edit(QStringLiteral("warm-up"), [&](ScenarioSettings& s) { s.run.warmup = v; }); });
    addInt(QStringLiteral("run/iterations"), QStringLiteral("Measured iterations"), 1, 100000,
           [m] { return m->scenario().run.iterations; },
           [edit](int v) { edit(QStringLiteral("iterations"), [&](ScenarioSettings& s) { s.run.iterations = v; }); });
    addInt(QStringLiteral("run/env/CUDA_DEVICE_MAX_CONNECTIONS"), QStringLiteral("Hardware queues"), 0, 32,
           [m] { return m->scenario().run.maxConnections().value_or(0); },
           [edit](int v) {
               edit(QStringLiteral("hardware queues"), [&](ScenarioSettings& s) {
                   if (v == 0)
                       s.run.env.erase("CUDA_DEVICE_MAX_CONNECTIONS");
                   else
                       s.run.env["CUDA_DEVICE_MAX_CONNECTIONS"] = std::to_string(v);
               });
           },
           {}, QStringLiteral("default (8)"));
    m_fields.back().editor->setToolTip(QStringLiteral("CUDA_DEVICE_MAX_CONNECTIONS: streams share this many "
                                                      "hardware work queues; streams on one queue falsely depend on "
                                                      "each other."));
}

bool PropertyEditor::eventFilter(QObject* watched, QEvent* event)
{
    if (watched == m_description && event->type() == QEvent::FocusOut && m_model) {
        const std::string text = m_description->toPlainText().toStdString();
        if (text != m_model->scenario().description) {
            ScenarioSettings s = m_model->settings();
            s.description = text;
            m_model->setSettings(s, QStringLiteral("description"));
        }
    }
    return QWidget::eventFilter(watched, event);
}

void PropertyEditor::buildDevice()
{
    ScenarioModel* m = m_model;
    m_header->setText(QStringLiteral("GPU %1").arg(m->device(item())->index));
    // The item is looked up on every use: it may have moved since the form was built.
    auto get = [this]() -> DeviceSpec {
        const DeviceSpec* d = m_model->device(item());
        return d ? *d : DeviceSpec{};
    };
    auto set = [this](const DeviceSpec& s, const QString& field) {
        if (m_model->device(item()))
            m_model->setDevice(item().a, s, field);
    };
    addInt(QStringLiteral("index"), QStringLiteral("Device index"), 0, 63, [get] { return get().index; },
           [get, set](int v) {
               DeviceSpec s = get();
               s.index = v;
               set(s, QStringLiteral("index"));
           });
    std::vector<std::pair<QString, QVariant>> profiles{{QStringLiteral("default (h200)"), QString()}};
    for (const auto& id : builtinProfileIds()) {
        QString text = qs(id);
        if (auto p = findDeviceProfile(id))
            text += QStringLiteral(" — ") + qs(p->name);
        profiles.emplace_back(text, qs(id));
    }
    addChoice(QStringLiteral("profile"), QStringLiteral("Simulator profile"), profiles,
              [get] { return QVariant(qs(get().profile)); },
              [get, set](const QVariant& v) {
                  DeviceSpec s = get();
                  s.profile = v.toString().toStdString();
                  set(s, QStringLiteral("profile"));
              });
}

void PropertyEditor::buildStream()
{
    m_header->setText(QStringLiteral("Stream ") + qs(m_model->stream(item())->name));
    auto get = [this]() -> StreamSpec {
        const StreamSpec* s = m_model->stream(item());
        return s ? *s : StreamSpec{};
    };
    auto set = [this](const QString& field, const std::function<void(StreamSpec&)>& change) {
        const StreamSpec* old = m_model->stream(item());
        if (!old)
            return;
        StreamSpec s = *old;
        change(s);
        m_model->setStream(item().a, s, field);
    };
    addText(QStringLiteral("name"), QStringLiteral("Name"), [get] { return qs(get().name); },
            [set](const QString& v) { set(QStringLiteral("name"), [&](StreamSpec& s) { s.name = v.toStdString(); }); });
    addChoice(QStringLiteral("device"), QStringLiteral("Device"), deviceChoices(), [get] { return QVariant(get().device); },
              [set](const QVariant& v) { set(QStringLiteral("device"), [&](StreamSpec& s) { s.device = v.toInt(); }); });
    addChoice(QStringLiteral("kind"), QStringLiteral("Kind"),
              {{QStringLiteral("blocking (cudaStreamCreate)"), int(StreamKind::Blocking)},
               {QStringLiteral("non-blocking (cudaStreamNonBlocking)"), int(StreamKind::NonBlocking)},
               {QStringLiteral("legacy default stream (NULL)"), int(StreamKind::LegacyDefault)},
               {QStringLiteral("per-thread default stream"), int(StreamKind::PerThreadDefault)}},
              [get] { return QVariant(int(get().kind)); },
              [set](const QVariant& v) { set(QStringLiteral("kind"), [&](StreamSpec& s) { s.kind = StreamKind(v.toInt()); }); });
    addInt(QStringLiteral("priority"), QStringLiteral("Priority"), -5, 0, [get] { return get().priority; },
           [set](int v) { set(QStringLiteral("priority"), [&](StreamSpec& s) { s.priority = v; }); });
    m_fields.back().editor->setToolTip(QStringLiteral("Lower is more urgent (H200: 0 .. -5). Priorities order the "
                                                      "dispatch of new thread blocks; running blocks are not preempted."));
}

void PropertyEditor::buildThread()
{
    m_header->setText(QStringLiteral("Host thread ") + qs(m_model->thread(item())->name));
    auto get = [this]() -> ThreadSpec {
        const ThreadSpec* t = m_model->thread(item());
        if (!t)
            return ThreadSpec{};
        ThreadSpec copy = *t;
        copy.ops.clear(); // not needed here, and may be long
        return copy;
    };
    auto set = [this](const QString& field, const std::function<void(ThreadSpec&)>& change) {
        const ThreadSpec* old = m_model->thread(item());
        if (!old || item().type != ScenarioItemType::Thread)
            return;
        ThreadSpec s;
        s.name = old->name;
        s.device = old->device;
        s.repeat = old->repeat;
        s.workers = old->workers;
        change(s);
        m_model->setThread(item().a, s, field);
    };
    addText(QStringLiteral("name"), QStringLiteral("Name"), [get] { return qs(get().name); },
            [set](const QString& v) { set(QStringLiteral("name"), [&](ThreadSpec& s) { s.name = v.toStdString(); }); });
    addChoice(QStringLiteral("device"), QStringLiteral("Device (cudaSetDevice)"), deviceChoices(),
              [get] { return QVariant(get().device); },
              [set](const QVariant& v) { set(QStringLiteral("device"), [&](ThreadSpec& s) { s.device = v.toInt(); }); });
    addInt(QStringLiteral("repeat"), QStringLiteral("Repeat"), 1, 1000000, [get] { return get().repeat; },
           [set](int v) { set(QStringLiteral("repeat"), [&](ThreadSpec& s) { s.repeat = v; }); }, QStringLiteral(" ×"));
    m_fields.back().editor->setToolTip(QStringLiteral("Times the op list is issued per iteration (tasks, for a "
                                                      "worker pool)"));
    addInt(QStringLiteral("workers"), QStringLiteral("Worker threads"), 1, 1024, [get] { return get().workers; },
           [set](int v) { set(QStringLiteral("workers"), [&](ThreadSpec& s) { s.workers = v; }); });
    m_fields.back().editor->setToolTip(QStringLiteral("More than 1: a pool of this many host threads taking the "
                                                      "repeats as tasks from a queue"));
}

void PropertyEditor::editOp(const QString& field, const std::function<void(Op&)>& change)
{
    const ScenarioItemRef it = item();
    const Op* o = m_model->op(it);
    if (!o)
        return;
    Op v = *o;
    change(v);
    m_model->setOp(it, v, field);
}

void PropertyEditor::buildOp()
{
    ScenarioModel* m = m_model;
    const ScenarioItemRef it = item();
    const Op& op = *m->op(it);
    const bool node = it.type == ScenarioItemType::GraphNode;
    m_header->setText((node ? QStringLiteral("Graph node ") : QStringLiteral("Operation ")) + qs(displayName(op)));
    auto get = [this]() -> const Op& {
        static const Op none;
        const Op* o = m_model->op(item());
        return o ? *o : none;
    };
    auto edit = [this](const QString& field, const std::function<void(Op&)>& change) { editOp(field, change); };

    std::vector<std::pair<QString, QVariant>> kinds;
    for (OpKind k : kAllOpKinds)
        if (!node || ScenarioModel::isGraphNodeKind(k))
            kinds.emplace_back(qs(toString(k)) + QStringLiteral("  (") + qs(cudaApiName(k)) + QLatin1Char(')'), int(k));
    addChoice(QStringLiteral("op"), QStringLiteral("Operation"), kinds, [get] { return QVariant(int(get().kind)); },
              [this, m](const QVariant& v) {
                  // A new kind starts from that kind's defaults; the name and stream stay.
                  const ScenarioItemRef r = item();
                  const Op old = *m->op(r);
                  Op fresh = ScenarioModel::defaultOp(m->scenario(), r.a, OpKind(v.toInt()));
                  fresh.name = old.name;
                  if (!old.stream.empty() && !fresh.stream.empty())
                      fresh.stream = old.stream;
                  if (r.type == ScenarioItemType::GraphNode)
                      fresh.stream = m->op(ScenarioItemRef::op(r.a, r.b))->stream;
                  m->setOp(r, fresh, QStringLiteral("operation"));
              });
    addText(QStringLiteral("name"), QStringLiteral("Name"), [get] { return qs(get().name); },
            [edit](const QString& v) { edit(QStringLiteral("name"), [&](Op& o) { o.name = v.toStdString(); }); },
            QStringLiteral("(default: ") + qs(displayName([&] {
                Op unnamed = op;
                unnamed.name.clear();
                return unnamed;
            }())) + QLatin1Char(')'));

    if (opHasStream(op.kind)) {
        addChoice(QStringLiteral("stream"), QStringLiteral("Stream"), streamChoices(),
                  [get] { return QVariant(qs(get().stream)); },
                  [edit](const QVariant& v) {
                      edit(QStringLiteral("stream"), [&](Op& o) {
                          const std::string name = v.toString().toStdString();
                          // A graph's nodes are captured from the graph's stream: they follow it.
                          for (Op& n : o.ops)
                              if (n.stream == o.stream)
                                  n.stream = name;
                          o.stream = name;
                      });
                  });
        if (node) {
            m_fields.back().editor->setEnabled(false);
            m_fields.back().editor->setToolTip(QStringLiteral("Graph nodes are captured from the graph's stream"));
        }
    }
    if (opHasEvent(op.kind))
        addChoice(QStringLiteral("event"), QStringLiteral("Event"), eventChoices(),
                  [get] { return QVariant(qs(get().event)); },
                  [edit](const QVariant& v) {
                      edit(QStringLiteral("event"), [&](Op& o) { o.event = v.toString().trimmed().toStdString(); });
                  },
                  /*editable=*/true);

    switch (op.kind) {
    case OpKind::Kernel: {
        std::vector<std::pair<QString, QVariant>> kernels;
        for (KernelKind k : {KernelKind::Spin, KernelKind::Empty, KernelKind::Fma, KernelKind::Triad,
                             KernelKind::Matmul, KernelKind::Transpose, KernelKind::Reduce})
            kernels.emplace_back(qs(toString(k)), int(k));
        addChoice(QStringLiteral("kernel"), QStringLiteral("Kernel"), kernels, [get] { return QVariant(int(get().kernel)); },
                  [edit](const QVariant& v) {
                      edit(QStringLiteral("kernel"), [&](Op& o) {
                          o.kernel = KernelKind(v.toInt());
                          if (o.kernel == KernelKind::Spin && o.durationUs <= 0)
                              o.durationUs = 100;
                          if (isSizeKernel(o.kernel) && o.size <= 0)
                              o.size = o.kernel == KernelKind::Matmul ? 1024 : o.kernel == KernelKind::Transpose ? 4096 : 1 << 24;
                      });
                  });
        if (op.kernel == KernelKind::Spin)
            addNumber(QStringLiteral("duration_us"), QStringLiteral("Duration per block"), 0.0, 3.6e9, 2,
                      [get] { return get().durationUs; },
                      [edit](double v) { edit(QStringLiteral("duration"), [&](Op& o) { o.durationUs = v; }); },
                      QStringLiteral(" µs"));
        if (isSizeKernel(op.kernel)) {
            addNumber(QStringLiteral("size"), QStringLiteral("Problem size"), 0, 1e15, 0,
                      [get] { return double(get().size); },
                      [edit](double v) { edit(QStringLiteral("size"), [&](Op& o) { o.size = int64_t(v); }); });
            m_fields.back().editor->setToolTip(op.kernel == KernelKind::Matmul      ? QStringLiteral("n of an n×n×n multiply")
                                               : op.kernel == KernelKind::Transpose ? QStringLiteral("n of an n×n transpose")
                                               : op.kernel == KernelKind::Fma ? QStringLiteral("FMA iterations per thread")
                                                                              : QStringLiteral("floats"));
        }
        if (hasDerivedGrid(op.kernel)) {
            auto* fromSize = new QCheckBox(QStringLiteral("derived from the problem size"));
            connect(fromSize, &QCheckBox::toggled, this, [edit](bool on) {
                edit(QStringLiteral("grid"), [&](Op& o) {
                    if (!on)
                        o.grid = effectiveGrid(o);
                    o.gridGiven = !on;
                });
            });
            addField(QStringLiteral("grid-auto"), QStringLiteral("Grid"), fromSize, [fromSize, get] {
                const QSignalBlocker b(fromSize);
                fromSize->setChecked(!get().gridGiven);
            });
        }
        addDim3(QStringLiteral("grid"), hasDerivedGrid(op.kernel) ? QString() : QStringLiteral("Grid"),
                [get] { return effectiveGrid(get()); },
                [edit](Dim3 d) {
                    edit(QStringLiteral("grid"), [&](Op& o) {
                        o.grid = d;
                        o.gridGiven = true;
                    });
                });
        if (hasDerivedGrid(op.kernel) && !op.gridGiven)
            m_fields.back().editor->setEnabled(false);
        addDim3(QStringLiteral("block"), QStringLiteral("Block"), [get] { return get().block; },
                [edit](Dim3 d) { edit(QStringLiteral("block"), [&](Op& o) { o.block = d; }); });
        addBytes(QStringLiteral("shared_bytes"), QStringLiteral("Shared memory / block"), [get] { return get().sharedBytes; },
                 [edit](int64_t v) { edit(QStringLiteral("shared memory"), [&](Op& o) { o.sharedBytes = v; }); });
        break;
    }
    case OpKind::Memcpy:
        addChoice(QStringLiteral("kind"), QStringLiteral("Direction"),
                  {{QStringLiteral("host → device (H2D)"), int(CopyKind::H2D)},
                   {QStringLiteral("device → host (D2H)"), int(CopyKind::D2H)},
                   {QStringLiteral("device → device (D2D)"), int(CopyKind::D2D)},
                   {QStringLiteral("peer: device → other device"), int(CopyKind::P2P)}},
                  [get] { return QVariant(int(get().copy)); },
                  [edit](const QVariant& v) { edit(QStringLiteral("direction"), [&](Op& o) { o.copy = CopyKind(v.toInt()); }); });
        addBytes(QStringLiteral("bytes"), QStringLiteral("Bytes"), [get] { return get().bytes; },
                 [edit](int64_t v) { edit(QStringLiteral("bytes"), [&](Op& o) { o.bytes = v; }); });
        if (op.copy == CopyKind::H2D || op.copy == CopyKind::D2H)
            addChoice(QStringLiteral("host"), QStringLiteral("Host memory"),
                      {{QStringLiteral("pinned (cudaMallocHost)"), true}, {QStringLiteral("pageable (malloc)"), false}},
                      [get] { return QVariant(get().pinned); },
                      [edit](const QVariant& v) { edit(QStringLiteral("host memory"), [&](Op& o) { o.pinned = v.toBool(); }); });
        if (op.copy == CopyKind::P2P)
            addChoice(QStringLiteral("dst_device"), QStringLiteral("Destination"), deviceChoices(),
                      [get] { return QVariant(get().dstDevice); },
                      [edit](const QVariant& v) { edit(QStringLiteral("destination"), [&](Op& o) { o.dstDevice = v.toInt(); }); });
        break;
    case OpKind::Memset:
    case OpKind::Malloc:
    case OpKind::Free:
        addBytes(QStringLiteral("bytes"), QStringLiteral("Bytes"), [get] { return get().bytes; },
                 [edit](int64_t v) { edit(QStringLiteral("bytes"), [&](Op& o) { o.bytes = v; }); });
        break;
    case OpKind::HostFunc:
    case OpKind::HostWork:
        addNumber(QStringLiteral("duration_us"), QStringLiteral("Duration on the host"), 0.0, 3.6e9, 2,
                  [get] { return get().durationUs; },
                  [edit](double v) { edit(QStringLiteral("duration"), [&](Op& o) { o.durationUs = v; }); },
                  QStringLiteral(" µs"));
        break;
    case OpKind::Graph:
        m_form->addRow(new QLabel(QStringLiteral("%1 nodes, captured from the stream once and launched as one "
                                                 "CUDA graph. Add nodes with Add ▸ Graph node.")
                                      .arg(op.ops.size())));
        break;
    default: break;
    }
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
