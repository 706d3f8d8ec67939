// The property editor's forms, one per item kind: settings, device, stream, host thread, and op (with the fields its
// kind has: kernel, copy, event, graph ...).
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

bool isSizeKernel(KernelKind k)
{
    return k == KernelKind::Fma || k == KernelKind::Triad || k == KernelKind::Matmul || k == KernelKind::Transpose
        || k == KernelKind::Reduce;
}

// Kernels whose grid follows from the problem size unless one is given (see effectiveGrid).
bool hasDerivedGrid(KernelKind k)
{
    return k == KernelKind::Matmul || k == KernelKind::Transpose || k == KernelKind::Triad || k == KernelKind::Reduce;
}

bool opHasStream(OpKind k)
{
    return k != OpKind::EventSync && k != OpKind::DeviceSync && k != OpKind::HostWork && k != OpKind::Malloc
        && k != OpKind::Free;
}

bool opHasEvent(OpKind k)
{
    return k == OpKind::Record || k == OpKind::Wait || k == OpKind::EventSync;
}

const OpKind kAllOpKinds[] = {OpKind::Kernel,     OpKind::Memcpy,   OpKind::Memset,     OpKind::Record,
                              OpKind::Wait,       OpKind::HostFunc, OpKind::StreamSync, OpKind::EventSync,
                              OpKind::DeviceSync, OpKind::HostWork, OpKind::Graph,      OpKind::Malloc,
                              OpKind::Free};

} // namespace

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
    addText(
        QStringLiteral("title"), QStringLiteral("Title"), [m] { return qs(m->scenario().title); },
        [edit](const QString& v) {
            edit(QStringLiteral("title"), [&](ScenarioSettings& s) { s.title = v.toStdString(); });
        });
    addText(
        QStringLiteral("id"), QStringLiteral("Id"), [m] { return qs(m->scenario().id); },
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

    addInt(
        QStringLiteral("run/warmup"), QStringLiteral("Warm-up iterations"), 0, 1000,
        [m] { return m->scenario().run.warmup; },
        [edit](int v) { edit(QStringLiteral("warm-up"), [&](ScenarioSettings& s) { s.run.warmup = v; }); });
    addInt(
        QStringLiteral("run/iterations"), QStringLiteral("Measured iterations"), 1, 100000,
        [m] { return m->scenario().run.iterations; },
        [edit](int v) { edit(QStringLiteral("iterations"), [&](ScenarioSettings& s) { s.run.iterations = v; }); });
    addInt(
        QStringLiteral("run/env/CUDA_DEVICE_MAX_CONNECTIONS"), QStringLiteral("Hardware queues"), 0, 32,
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
    addInt(
        QStringLiteral("index"), QStringLiteral("Device index"), 0, 63, [get] { return get().index; },
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
    addChoice(
        QStringLiteral("profile"), QStringLiteral("Simulator profile"), profiles,
        [get] { return QVariant(qs(get().profile)); },
        [get, set](const QVariant& v) {
            DeviceSpec s = get();
            s.profile = v.toString().toStdString();
            set(s, QStringLiteral("profile"));
        });
}

// The header of a named item, from the item as it is now (its name changes under an open form on a rename, and
// another item of the same kind takes the form after a delete); empty for the others.
QString PropertyEditor::itemHeader() const
{
    if (!m_model)
        return {};
    const ScenarioItemRef it = item();
    if (const StreamSpec* st = m_model->stream(it); st && it.type == ScenarioItemType::Stream)
        return QStringLiteral("Stream ") + qs(st->name);
    if (const ThreadSpec* th = m_model->thread(it); th && it.type == ScenarioItemType::Thread)
        return QStringLiteral("Host thread ") + qs(th->name);
    if (const Op* o = m_model->op(it))
        return (it.type == ScenarioItemType::GraphNode ? QStringLiteral("Graph node ") : QStringLiteral("Operation "))
            + qs(displayName(*o));
    return {};
}

void PropertyEditor::buildStream()
{
    m_header->setText(itemHeader());
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
    addText(
        QStringLiteral("name"), QStringLiteral("Name"), [get] { return qs(get().name); },
        [set](const QString& v) { set(QStringLiteral("name"), [&](StreamSpec& s) { s.name = v.toStdString(); }); });
    addChoice(
        QStringLiteral("device"), QStringLiteral("Device"), deviceChoices(), [get] { return QVariant(get().device); },
        [set](const QVariant& v) { set(QStringLiteral("device"), [&](StreamSpec& s) { s.device = v.toInt(); }); });
    addChoice(
        QStringLiteral("kind"), QStringLiteral("Kind"),
        {{QStringLiteral("blocking (cudaStreamCreate)"), int(StreamKind::Blocking)},
         {QStringLiteral("non-blocking (cudaStreamNonBlocking)"), int(StreamKind::NonBlocking)},
         {QStringLiteral("legacy default stream (NULL)"), int(StreamKind::LegacyDefault)},
         {QStringLiteral("per-thread default stream"), int(StreamKind::PerThreadDefault)}},
        [get] { return QVariant(int(get().kind)); },
        [set](const QVariant& v) {
            set(QStringLiteral("kind"), [&](StreamSpec& s) { s.kind = StreamKind(v.toInt()); });
        });
    addInt(
        QStringLiteral("priority"), QStringLiteral("Priority"), -5, 0, [get] { return get().priority; },
        [set](int v) { set(QStringLiteral("priority"), [&](StreamSpec& s) { s.priority = v; }); });
    m_fields.back().editor->setToolTip(
        QStringLiteral("Lower is more urgent (H200: 0 .. -5). Priorities order the "
                       "dispatch of new thread blocks; running blocks are not preempted."));
}

void PropertyEditor::buildThread()
{
    m_header->setText(itemHeader());
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
    addText(
        QStringLiteral("name"), QStringLiteral("Name"), [get] { return qs(get().name); },
        [set](const QString& v) { set(QStringLiteral("name"), [&](ThreadSpec& s) { s.name = v.toStdString(); }); });
    addChoice(
        QStringLiteral("device"), QStringLiteral("Device (cudaSetDevice)"), deviceChoices(),
        [get] { return QVariant(get().device); },
        [set](const QVariant& v) { set(QStringLiteral("device"), [&](ThreadSpec& s) { s.device = v.toInt(); }); });
    addInt(
        QStringLiteral("repeat"), QStringLiteral("Repeat"), 1, 1000000, [get] { return get().repeat; },
        [set](int v) { set(QStringLiteral("repeat"), [&](ThreadSpec& s) { s.repeat = v; }); }, QStringLiteral(" ×"));
    m_fields.back().editor->setToolTip(QStringLiteral("Times the op list is issued per iteration (tasks, for a "
                                                      "worker pool)"));
    addInt(
        QStringLiteral("workers"), QStringLiteral("Worker threads"), 1, 1024, [get] { return get().workers; },
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
    m_header->setText(itemHeader());
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
    addChoice(
        QStringLiteral("op"), QStringLiteral("Operation"), kinds, [get] { return QVariant(int(get().kind)); },
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
    addText(
        QStringLiteral("name"), QStringLiteral("Name"), [get] { return qs(get().name); },
        [edit](const QString& v) { edit(QStringLiteral("name"), [&](Op& o) { o.name = v.toStdString(); }); },
        QStringLiteral("(default: ") + qs(displayName([&] {
            Op unnamed = op;
            unnamed.name.clear();
            return unnamed;
        }()))
            + QLatin1Char(')'));

    if (opHasStream(op.kind)) {
        addChoice(
            QStringLiteral("stream"), QStringLiteral("Stream"), streamChoices(),
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
        addChoice(
            QStringLiteral("event"), QStringLiteral("Event"), eventChoices(),
            [get] { return QVariant(qs(get().event)); },
            [edit](const QVariant& v) {
                edit(QStringLiteral("event"), [&](Op& o) { o.event = v.toString().trimmed().toStdString(); });
            },
            /*editable=*/true);

    switch (op.kind) {
    case OpKind::Kernel: buildKernelFields(op, get, edit); break;
    case OpKind::Memcpy: buildCopyFields(op, get, edit); break;
    case OpKind::Memset:
    case OpKind::Malloc:
    case OpKind::Free:
        addBytes(
            QStringLiteral("bytes"), QStringLiteral("Bytes"), [get] { return get().bytes; },
            [edit](int64_t v) { edit(QStringLiteral("bytes"), [&](Op& o) { o.bytes = v; }); });
        break;
    case OpKind::HostFunc:
    case OpKind::HostWork:
        addNumber(
            QStringLiteral("duration_us"), QStringLiteral("Duration on the host"), 0.0, 3.6e9, 2,
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

// A kernel's fields: which kernel, its duration or problem size, grid (or derived from the size), block, shared memory.
void PropertyEditor::buildKernelFields(const Op& op, const OpGetter& get, const OpEditor& edit)
{
    std::vector<std::pair<QString, QVariant>> kernels;
    for (KernelKind k : {KernelKind::Spin, KernelKind::Empty, KernelKind::Fma, KernelKind::Triad, KernelKind::Matmul,
                         KernelKind::Transpose, KernelKind::Reduce})
        kernels.emplace_back(qs(toString(k)), int(k));
    addChoice(
        QStringLiteral("kernel"), QStringLiteral("Kernel"), kernels, [get] { return QVariant(int(get().kernel)); },
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
        addNumber(
            QStringLiteral("duration_us"), QStringLiteral("Duration per block"), 0.0, 3.6e9, 2,
            [get] { return get().durationUs; },
            [edit](double v) { edit(QStringLiteral("duration"), [&](Op& o) { o.durationUs = v; }); },
            QStringLiteral(" µs"));
    if (isSizeKernel(op.kernel)) {
        addNumber(
            QStringLiteral("size"), QStringLiteral("Problem size"), 0, 1e15, 0, [get] { return double(get().size); },
            [edit](double v) { edit(QStringLiteral("size"), [&](Op& o) { o.size = int64_t(v); }); });
        m_fields.back().editor->setToolTip(
            op.kernel == KernelKind::Matmul          ? QStringLiteral("n of an n×n×n multiply")
                : op.kernel == KernelKind::Transpose ? QStringLiteral("n of an n×n transpose")
                : op.kernel == KernelKind::Fma       ? QStringLiteral("FMA iterations per thread")
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
    addDim3(
        QStringLiteral("grid"), hasDerivedGrid(op.kernel) ? QString() : QStringLiteral("Grid"),
        [get] { return effectiveGrid(get()); },
        [edit](Dim3 d) {
            edit(QStringLiteral("grid"), [&](Op& o) {
                o.grid = d;
                o.gridGiven = true;
            });
        });
    if (hasDerivedGrid(op.kernel) && !op.gridGiven)
        m_fields.back().editor->setEnabled(false);
    addDim3(
        QStringLiteral("block"), QStringLiteral("Block"), [get] { return get().block; },
        [edit](Dim3 d) { edit(QStringLiteral("block"), [&](Op& o) { o.block = d; }); });
    addBytes(
        QStringLiteral("shared_bytes"), QStringLiteral("Shared memory / block"), [get] { return get().sharedBytes; },
        [edit](int64_t v) { edit(QStringLiteral("shared memory"), [&](Op& o) { o.sharedBytes = v; }); });
}

// A copy's fields: direction, bytes, pinned or pageable host memory, the peer device.
void PropertyEditor::buildCopyFields(const Op& op, const OpGetter& get, const OpEditor& edit)
{
    addChoice(
        QStringLiteral("kind"), QStringLiteral("Direction"),
        {{QStringLiteral("host → device (H2D)"), int(CopyKind::H2D)},
         {QStringLiteral("device → host (D2H)"), int(CopyKind::D2H)},
         {QStringLiteral("device → device (D2D)"), int(CopyKind::D2D)},
         {QStringLiteral("peer: device → other device"), int(CopyKind::P2P)}},
        [get] { return QVariant(int(get().copy)); },
        [edit](const QVariant& v) { edit(QStringLiteral("direction"), [&](Op& o) { o.copy = CopyKind(v.toInt()); }); });
    addBytes(
        QStringLiteral("bytes"), QStringLiteral("Bytes"), [get] { return get().bytes; },
        [edit](int64_t v) { edit(QStringLiteral("bytes"), [&](Op& o) { o.bytes = v; }); });
    if (op.copy == CopyKind::H2D || op.copy == CopyKind::D2H)
        addChoice(
            QStringLiteral("host"), QStringLiteral("Host memory"),
            {{QStringLiteral("pinned (cudaMallocHost)"), true}, {QStringLiteral("pageable (malloc)"), false}},
            [get] { return QVariant(get().pinned); },
            [edit](const QVariant& v) { edit(QStringLiteral("host memory"), [&](Op& o) { o.pinned = v.toBool(); }); });
    if (op.copy == CopyKind::P2P)
        addChoice(
            QStringLiteral("dst_device"), QStringLiteral("Destination"), deviceChoices(),
            [get] { return QVariant(get().dstDevice); },
            [edit](const QVariant& v) {
                edit(QStringLiteral("destination"), [&](Op& o) { o.dstDevice = v.toInt(); });
            });
}

} // namespace streamscope
