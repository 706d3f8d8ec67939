#include "scenario_model.h"

#include "format.h"
#include "scenario_json.h"
#include "timeline_plottable.h"
#include "unique_name.h"

#include <QIcon>
#include <QPainter>
#include <QPixmap>
#include <QStringList>
#include <QUndoCommand>
#include <QUndoStack>

#include <algorithm>
#include <set>

namespace streamscope {

// The objects child indexes point at (internalPointer): the root, the two groups, each device, each thread and
// each graph op. They move with their items, so an index's parent stays right across inserts, removes and moves.
struct ScenarioModel::Node {
    ScenarioItemType type = ScenarioItemType::None; // None: the root
    int row = 0;                                    // device, thread: index; graph op: op index in its thread
    Node* parent = nullptr;                         // graph op: its thread's node
    std::vector<std::unique_ptr<Node>> graphs;      // thread: nodes of its graph ops
};

namespace {

QString quotedName(const std::string& s)
{
    return QStringLiteral("“") + qs(s) + QStringLiteral("”");
}

QString itemTypeName(ScenarioItemType t)
{
    switch (t) {
    case ScenarioItemType::Device: return QStringLiteral("device");
    case ScenarioItemType::Stream: return QStringLiteral("stream");
    case ScenarioItemType::Thread: return QStringLiteral("host thread");
    case ScenarioItemType::Op: return QStringLiteral("operation");
    case ScenarioItemType::GraphNode: return QStringLiteral("graph node");
    default: return QStringLiteral("scenario");
    }
}

QIcon issueIcon(bool error)
{
    static QIcon icons[2];
    QIcon& icon = icons[error ? 1 : 0];
    if (icon.isNull()) {
        QPixmap pm(16, 16);
        pm.fill(Qt::transparent);
        QPainter p(&pm);
        p.setRenderHint(QPainter::Antialiasing);
        p.setPen(Qt::NoPen);
        p.setBrush(error ? QColor(0xd3, 0x2f, 0x2f) : QColor(0xe6, 0x9f, 0x00));
        p.drawEllipse(QRectF(1.5, 1.5, 13, 13));
        p.setPen(QPen(Qt::white, 2));
        p.drawLine(QPointF(8, 4.5), QPointF(8, 9));
        p.drawPoint(QPointF(8, 11.5));
        p.end();
        icon = QIcon(pm);
    }
    return icon;
}

SpanKind spanKindOfOp(const Op& op)
{
    switch (op.kind) {
    case OpKind::Kernel:
    case OpKind::Memcpy:
    case OpKind::Memset:
    case OpKind::HostFunc:
    case OpKind::Graph: return gpuSpanKindOf(op);
    case OpKind::HostWork: return SpanKind::HostWork;
    case OpKind::StreamSync:
    case OpKind::EventSync:
    case OpKind::DeviceSync: return SpanKind::Sync;
    default: return SpanKind::ApiCall;
    }
}

QIcon opIcon(const Op& op)
{
    static QIcon icons[kSpanKindCount];
    const int k = int(spanKindOfOp(op));
    if (icons[k].isNull()) {
        QPixmap pm(16, 16);
        pm.fill(Qt::transparent);
        QPainter p(&pm);
        p.setPen(spanKindColor(SpanKind(k)).darker(130));
        p.setBrush(spanKindColor(SpanKind(k)));
        p.drawRect(QRect(3, 4, 10, 8));
        p.end();
        icons[k] = QIcon(pm);
    }
    return icons[k];
}

QString streamKindText(const StreamSpec& st)
{
    QString s;
    switch (st.kind) {
    case StreamKind::LegacyDefault: s = QStringLiteral("legacy default stream (NULL)"); break;
    case StreamKind::PerThreadDefault: s = QStringLiteral("per-thread default stream"); break;
    case StreamKind::Blocking: s = QStringLiteral("blocking"); break;
    case StreamKind::NonBlocking: s = QStringLiteral("non-blocking"); break;
    }
    if (st.priority != 0)
        s += QStringLiteral(" · priority ") + QString::number(st.priority);
    return s;
}

} // namespace

// ---- commands --------------------------------------------------------------------------------------------------

// Every edit: keeps the quick controls' state of the step and revalidates after redo and undo.
class ScenarioModel::Command : public QUndoCommand {
public:
    Command(ScenarioModel* model, const QString& text, std::shared_ptr<const QuickState> quickAfter = {})
        : QUndoCommand(text), m_model(model), m_quickBefore(model->m_quick), m_quickAfter(std::move(quickAfter))
    {
    }
    void redo() final
    {
        doRedo();
        m_model->m_quick = m_quickAfter;
        m_model->finishEdit();
    }
    void undo() final
    {
        doUndo();
        m_model->m_quick = m_quickBefore;
        m_model->finishEdit();
    }

protected:
    virtual void doRedo() = 0;
    virtual void doUndo() = 0;
    ScenarioModel* m_model;
    std::shared_ptr<const QuickState> m_quickBefore, m_quickAfter;
};

class ScenarioModel::SetCommand final : public Command {
public:
    SetCommand(ScenarioModel* model, const ScenarioItemRef& item, ItemValue before, ItemValue after, QString field,
               const QString& text)
        : Command(model, text), m_item(item), m_before(std::move(before)), m_after(std::move(after)),
          m_field(std::move(field))
    {
    }
    int id() const override { return 1; }
    bool mergeWith(const QUndoCommand* other) override
    {
        const auto* o = dynamic_cast<const SetCommand*>(other);
        if (!o || o->m_item != m_item || o->m_field != m_field || !o->m_renamed.empty() || !m_renamed.empty())
            return false;
        m_after = o->m_after;
        return true;
    }

protected:
    void doRedo() override
    {
        // A renamed stream: the ops that used the old name follow it (found once, so undo restores exactly them).
        const auto* before = std::get_if<StreamSpec>(&m_before);
        const auto* after = std::get_if<StreamSpec>(&m_after);
        if (before && after && before->name != after->name && !m_renameFound) {
            m_renameFound = true;
            for (size_t t = 0; t < m_model->m_scenario.threads.size(); ++t) {
                const auto& ops = m_model->m_scenario.threads[t].ops;
                for (size_t o = 0; o < ops.size(); ++o) {
                    if (ops[o].stream == before->name)
                        m_renamed.push_back(ScenarioItemRef::op(int(t), int(o)));
                    for (size_t n = 0; n < ops[o].ops.size(); ++n)
                        if (ops[o].ops[n].stream == before->name)
                            m_renamed.push_back(ScenarioItemRef::node(int(t), int(o), int(n)));
                }
            }
        }
        m_model->primSet(m_item, m_after);
        if (after && !m_renamed.empty())
            m_model->primSetOpStreams(m_renamed, after->name);
    }
    void doUndo() override
    {
        m_model->primSet(m_item, m_before);
        if (const auto* before = std::get_if<StreamSpec>(&m_before); before && !m_renamed.empty())
            m_model->primSetOpStreams(m_renamed, before->name);
    }

private:
    ScenarioItemRef m_item;
    ItemValue m_before, m_after;
    QString m_field;
    bool m_renameFound = false;
    std::vector<ScenarioItemRef> m_renamed;
};

class ScenarioModel::InsertCommand final : public Command {
public:
    InsertCommand(ScenarioModel* model, const ScenarioItemRef& at, ItemValue value, const QString& text)
        : Command(model, text), m_at(at), m_value(std::move(value))
    {
    }

protected:
    void doRedo() override { m_model->primInsert(m_at, m_value); }
    void doUndo() override { m_model->primRemove(m_at); }

private:
    ScenarioItemRef m_at;
    ItemValue m_value;
};

class ScenarioModel::RemoveCommand final : public Command {
public:
    RemoveCommand(ScenarioModel* model, const ScenarioItemRef& item, const QString& text)
        : Command(model, text), m_item(item)
    {
    }

protected:
    void doRedo() override { m_value = m_model->primRemove(m_item); }
    void doUndo() override { m_model->primInsert(m_item, m_value); }

private:
    ScenarioItemRef m_item;
    ItemValue m_value;
};

class ScenarioModel::MoveCommand final : public Command {
public:
    MoveCommand(ScenarioModel* model, const ScenarioItemRef& item, int delta, const QString& text)
        : Command(model, text), m_item(item), m_delta(delta)
    {
    }
    ScenarioItemRef moved() const { return m_moved; }

protected:
    void doRedo() override { m_moved = m_model->primMove(m_item, m_delta); }
    void doUndo() override { m_model->primMove(m_moved, -m_delta); }

private:
    ScenarioItemRef m_item, m_moved;
    int m_delta;
};

class ScenarioModel::ReplaceCommand final : public Command {
public:
    ReplaceCommand(ScenarioModel* model, Scenario before, Scenario after, const QString& text,
                   std::shared_ptr<const QuickState> quick, QString mergeKey)
        : Command(model, text, std::move(quick)), m_before(std::move(before)), m_after(std::move(after)),
          m_mergeKey(std::move(mergeKey))
    {
    }
    int id() const override { return m_mergeKey.isEmpty() ? -1 : 2; }
    bool mergeWith(const QUndoCommand* other) override
    {
        const auto* o = dynamic_cast<const ReplaceCommand*>(other);
        if (!o || o->m_mergeKey != m_mergeKey)
            return false;
        m_after = o->m_after;
        m_quickAfter = o->m_quickAfter;
        return true;
    }

protected:
    void doRedo() override { m_model->primReplace(m_after); }
    void doUndo() override { m_model->primReplace(m_before); }

private:
    Scenario m_before, m_after;
    QString m_mergeKey;
};

// ---- model -----------------------------------------------------------------------------------------------------

ScenarioModel::ScenarioModel(QObject* parent)
    : QAbstractItemModel(parent), m_undoStack(new QUndoStack(this)), m_root(std::make_unique<Node>()),
      m_devicesGroup(std::make_unique<Node>()), m_threadsGroup(std::make_unique<Node>())
{
    m_root->type = ScenarioItemType::None;
    m_devicesGroup->type = ScenarioItemType::DevicesGroup;
    m_devicesGroup->row = 1;
    m_threadsGroup->type = ScenarioItemType::ThreadsGroup;
    m_threadsGroup->row = 2;
    revalidate();
}

ScenarioModel::~ScenarioModel() = default;

void ScenarioModel::setScenario(Scenario scenario)
{
    m_undoStack->clear();
    beginResetModel();
    m_scenario = std::move(scenario);
    m_quick.reset();
    rebuildNodes();
    endResetModel();
    finishEdit();
    m_undoStack->setClean();
}

void ScenarioModel::finishEdit()
{
    revalidate();
    Q_EMIT scenarioChanged();
}

void ScenarioModel::pushCommand(QUndoCommand* command)
{
    m_undoStack->push(command);
}

// ---- structure -------------------------------------------------------------------------------------------------

void ScenarioModel::rebuildNodes()
{
    m_deviceNodes.clear();
    for (size_t d = 0; d < m_scenario.devices.size(); ++d) {
        auto n = std::make_unique<Node>();
        n->type = ScenarioItemType::Device;
        n->row = int(d);
        n->parent = m_devicesGroup.get();
        m_deviceNodes.push_back(std::move(n));
    }
    m_threadNodes.clear();
    for (size_t t = 0; t < m_scenario.threads.size(); ++t) {
        auto n = std::make_unique<Node>();
        n->type = ScenarioItemType::Thread;
        n->row = int(t);
        n->parent = m_threadsGroup.get();
        m_threadNodes.push_back(std::move(n));
        for (size_t o = 0; o < m_scenario.threads[t].ops.size(); ++o)
            syncGraphNode(int(t), int(o));
    }
    rebuildStreamRows();
}

int ScenarioModel::deviceRowOfStream(const StreamSpec& stream) const
{
    for (size_t d = 0; d < m_scenario.devices.size(); ++d)
        if (m_scenario.devices[d].index == stream.device)
            return int(d);
    // A stream on an undeclared device (validation reports it) stays visible under the first device.
    return m_scenario.devices.empty() ? -1 : 0;
}

void ScenarioModel::rebuildStreamRows()
{
    m_deviceStreams.assign(m_scenario.devices.size(), {});
    m_streamDeviceRow.assign(m_scenario.streams.size(), -1);
    m_streamRow.assign(m_scenario.streams.size(), -1);
    for (size_t s = 0; s < m_scenario.streams.size(); ++s) {
        const int d = deviceRowOfStream(m_scenario.streams[s]);
        m_streamDeviceRow[s] = d;
        if (d >= 0) {
            m_streamRow[s] = int(m_deviceStreams[size_t(d)].size());
            m_deviceStreams[size_t(d)].push_back(int(s));
        }
    }
}

void ScenarioModel::renumberThreadNodes()
{
    for (size_t t = 0; t < m_threadNodes.size(); ++t)
        m_threadNodes[t]->row = int(t);
}

ScenarioModel::Node* ScenarioModel::graphNode(int thread, int op) const
{
    if (thread < 0 || size_t(thread) >= m_threadNodes.size())
        return nullptr;
    for (const auto& g : m_threadNodes[size_t(thread)]->graphs)
        if (g->row == op)
            return g.get();
    return nullptr;
}

void ScenarioModel::syncGraphNode(int thread, int op)
{
    Node* threadNode = m_threadNodes[size_t(thread)].get();
    const bool isGraph = m_scenario.threads[size_t(thread)].ops[size_t(op)].kind == OpKind::Graph;
    Node* existing = graphNode(thread, op);
    if (isGraph && !existing) {
        auto n = std::make_unique<Node>();
        n->type = ScenarioItemType::Op;
        n->row = op;
        n->parent = threadNode;
        threadNode->graphs.push_back(std::move(n));
    }
    // A node of an op that stopped being a graph stays: it has no children and costs nothing.
}

// ---- QAbstractItemModel ----------------------------------------------------------------------------------------

QModelIndex ScenarioModel::index(int row, int column, const QModelIndex& parent) const
{
    if (row < 0 || column < 0 || column >= ColumnCount || row >= rowCount(parent))
        return {};
    if (!parent.isValid())
        return createIndex(row, column, m_root.get());
    const ScenarioItemRef p = itemAt(parent);
    switch (p.type) {
    case ScenarioItemType::DevicesGroup: return createIndex(row, column, m_devicesGroup.get());
    case ScenarioItemType::ThreadsGroup: return createIndex(row, column, m_threadsGroup.get());
    case ScenarioItemType::Device: return createIndex(row, column, m_deviceNodes[size_t(p.a)].get());
    case ScenarioItemType::Thread: return createIndex(row, column, m_threadNodes[size_t(p.a)].get());
    case ScenarioItemType::Op: return createIndex(row, column, graphNode(p.a, p.b));
    default: return {};
    }
}

QModelIndex ScenarioModel::parent(const QModelIndex& child) const
{
    if (!child.isValid())
        return {};
    const auto* p = static_cast<const Node*>(child.internalPointer());
    if (!p || p == m_root.get())
        return {};
    switch (p->type) {
    case ScenarioItemType::DevicesGroup:
    case ScenarioItemType::ThreadsGroup: return createIndex(p->row, 0, m_root.get());
    case ScenarioItemType::Device: return createIndex(p->row, 0, m_devicesGroup.get());
    case ScenarioItemType::Thread: return createIndex(p->row, 0, m_threadsGroup.get());
    case ScenarioItemType::Op: return createIndex(p->row, 0, p->parent);
    default: return {};
    }
}

int ScenarioModel::rowCount(const QModelIndex& parent) const
{
    if (!parent.isValid())
        return 3;
    if (parent.column() != 0)
        return 0;
    const ScenarioItemRef p = itemAt(parent);
    switch (p.type) {
    case ScenarioItemType::DevicesGroup: return int(m_scenario.devices.size());
    case ScenarioItemType::ThreadsGroup: return int(m_scenario.threads.size());
    case ScenarioItemType::Device: return int(m_deviceStreams[size_t(p.a)].size());
    case ScenarioItemType::Thread: return int(m_scenario.threads[size_t(p.a)].ops.size());
    case ScenarioItemType::Op: {
        const Op* o = op(p);
        return o && o->kind == OpKind::Graph && graphNode(p.a, p.b) ? int(o->ops.size()) : 0;
    }
    default: return 0;
    }
}

int ScenarioModel::columnCount(const QModelIndex&) const
{
    return ColumnCount;
}

ScenarioItemRef ScenarioModel::itemAt(const QModelIndex& index) const
{
    if (!index.isValid() || index.model() != this)
        return {};
    const auto* p = static_cast<const Node*>(index.internalPointer());
    const int row = index.row();
    if (p == m_root.get()) {
        static const ScenarioItemType top[] = {ScenarioItemType::Settings, ScenarioItemType::DevicesGroup,
                                               ScenarioItemType::ThreadsGroup};
        return row >= 0 && row < 3 ? ScenarioItemRef{top[row]} : ScenarioItemRef{};
    }
    switch (p->type) {
    case ScenarioItemType::DevicesGroup: return ScenarioItemRef::device(row);
    case ScenarioItemType::ThreadsGroup: return ScenarioItemRef::thread(row);
    case ScenarioItemType::Device: {
        const auto& list = m_deviceStreams[size_t(p->row)];
        return size_t(row) < list.size() ? ScenarioItemRef::stream(list[size_t(row)]) : ScenarioItemRef{};
    }
    case ScenarioItemType::Thread: return ScenarioItemRef::op(p->row, row);
    case ScenarioItemType::Op: return ScenarioItemRef::node(p->parent->row, p->row, row);
    default: return {};
    }
}

QModelIndex ScenarioModel::indexOf(const ScenarioItemRef& item, int column) const
{
    switch (item.type) {
    case ScenarioItemType::Settings: return createIndex(0, column, m_root.get());
    case ScenarioItemType::DevicesGroup: return createIndex(1, column, m_root.get());
    case ScenarioItemType::ThreadsGroup: return createIndex(2, column, m_root.get());
    case ScenarioItemType::Device:
        if (item.a < 0 || size_t(item.a) >= m_scenario.devices.size())
            return {};
        return createIndex(item.a, column, m_devicesGroup.get());
    case ScenarioItemType::Stream:
        if (item.a < 0 || size_t(item.a) >= m_scenario.streams.size() || m_streamDeviceRow[size_t(item.a)] < 0)
            return {};
        return createIndex(m_streamRow[size_t(item.a)], column,
                           m_deviceNodes[size_t(m_streamDeviceRow[size_t(item.a)])].get());
    case ScenarioItemType::Thread:
        if (!thread(item))
            return {};
        return createIndex(item.a, column, m_threadsGroup.get());
    case ScenarioItemType::Op:
        if (!op(item))
            return {};
        return createIndex(item.b, column, m_threadNodes[size_t(item.a)].get());
    case ScenarioItemType::GraphNode: {
        Node* g = graphNode(item.a, item.b);
        if (!op(item) || !g)
            return {};
        return createIndex(item.c, column, g);
    }
    case ScenarioItemType::None: break;
    }
    return {};
}

Qt::ItemFlags ScenarioModel::flags(const QModelIndex& index) const
{
    if (!index.isValid())
        return Qt::NoItemFlags;
    return Qt::ItemIsEnabled | Qt::ItemIsSelectable;
}

QVariant ScenarioModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    return section == NameColumn ? QStringLiteral("Item") : QStringLiteral("Details");
}

QString ScenarioModel::opSummary(const Op& op)
{
    QStringList parts;
    switch (op.kind) {
    case OpKind::Kernel: {
        QString k = QStringLiteral("kernel ") + qs(toString(op.kernel));
        if (op.kernel == KernelKind::Spin)
            k += QLatin1Char(' ') + formatNs(op.durationUs * 1e3);
        else if (op.kernel != KernelKind::Empty)
            k += QLatin1Char(' ') + QString::number(op.size);
        parts << k;
        if (!op.stream.empty())
            parts << qs(op.stream);
        parts << formatDim3(effectiveGrid(op)) + QStringLiteral(" × ") + formatDim3(op.block);
        break;
    }
    case OpKind::Memcpy: {
        QString c = QStringLiteral("memcpy ") + qs(toString(op.copy)).toUpper() + QLatin1Char(' ') + formatBytes(op.bytes);
        if (op.copy == CopyKind::H2D || op.copy == CopyKind::D2H)
            c += op.pinned ? QStringLiteral(" pinned") : QStringLiteral(" pageable");
        if (op.copy == CopyKind::P2P)
            c += QStringLiteral(" → GPU ") + QString::number(op.dstDevice);
        parts << c;
        if (!op.stream.empty())
            parts << qs(op.stream);
        break;
    }
    case OpKind::Memset:
        parts << QStringLiteral("memset ") + formatBytes(op.bytes);
        if (!op.stream.empty())
            parts << qs(op.stream);
        break;
    case OpKind::Record:
    case OpKind::Wait:
        parts << qs(toString(op.kind)) + QLatin1Char(' ') + qs(op.event) << qs(op.stream);
        break;
    case OpKind::HostFunc:
        parts << QStringLiteral("host-func ") + formatNs(op.durationUs * 1e3) << qs(op.stream);
        break;
    case OpKind::HostWork: parts << QStringLiteral("host-work ") + formatNs(op.durationUs * 1e3); break;
    case OpKind::StreamSync: parts << QStringLiteral("stream-sync ") + qs(op.stream); break;
    case OpKind::EventSync: parts << QStringLiteral("event-sync ") + qs(op.event); break;
    case OpKind::DeviceSync: parts << QStringLiteral("device-sync"); break;
    case OpKind::Graph:
        parts << QStringLiteral("graph of %1 nodes").arg(op.ops.size()) << qs(op.stream);
        break;
    case OpKind::Malloc:
    case OpKind::Free: parts << qs(toString(op.kind)) + QLatin1Char(' ') + formatBytes(op.bytes); break;
    }
    parts.removeAll(QString());
    return parts.join(QStringLiteral(" · "));
}

QString ScenarioModel::displayText(const ScenarioItemRef& item, int column) const
{
    const bool name = column == NameColumn;
    switch (item.type) {
    case ScenarioItemType::Settings:
        if (name)
            return QStringLiteral("Scenario");
        return (m_scenario.title.empty() ? qs(m_scenario.id) : qs(m_scenario.title));
    case ScenarioItemType::DevicesGroup:
        return name ? QStringLiteral("Devices") : QStringLiteral("%1 GPU(s)").arg(m_scenario.devices.size());
    case ScenarioItemType::ThreadsGroup:
        return name ? QStringLiteral("Host threads") : QStringLiteral("%1 thread(s)").arg(m_scenario.threads.size());
    case ScenarioItemType::Device: {
        const DeviceSpec* d = device(item);
        if (name)
            return QStringLiteral("GPU ") + QString::number(d->index);
        return d->profile.empty() ? QStringLiteral("default profile") : QStringLiteral("profile ") + qs(d->profile);
    }
    case ScenarioItemType::Stream: {
        const StreamSpec* s = stream(item);
        return name ? qs(s->name) : streamKindText(*s);
    }
    case ScenarioItemType::Thread: {
        const ThreadSpec* t = thread(item);
        if (name)
            return qs(t->name);
        QStringList parts{QStringLiteral("GPU ") + QString::number(t->device)};
        if (t->repeat != 1)
            parts << QStringLiteral("×%1").arg(t->repeat);
        if (t->workers > 1)
            parts << QStringLiteral("pool of %1 workers").arg(t->workers);
        parts << QStringLiteral("%1 ops").arg(t->ops.size());
        return parts.join(QStringLiteral(" · "));
    }
    case ScenarioItemType::Op:
    case ScenarioItemType::GraphNode: {
        const Op* o = op(item);
        return name ? qs(displayName(*o)) : opSummary(*o);
    }
    case ScenarioItemType::None: break;
    }
    return {};
}

int ScenarioModel::issueSeverity(const QModelIndex& index) const
{
    const ScenarioItemRef item = itemAt(index);
    auto it = m_severity.find({int(item.type), item.a, item.b, item.c});
    return it == m_severity.end() ? -1 : it->second;
}

QVariant ScenarioModel::data(const QModelIndex& index, int role) const
{
    const ScenarioItemRef item = itemAt(index);
    if (!item.isValid())
        return {};
    switch (role) {
    case Qt::DisplayRole: return displayText(item, index.column());
    case Qt::ToolTipRole: {
        const QString messages = data(index, IssueMessageRole).toString();
        if (!messages.isEmpty())
            return messages;
        return index.column() == DetailsColumn ? displayText(item, DetailsColumn) : QVariant();
    }
    case Qt::DecorationRole: {
        if (index.column() != NameColumn)
            return {};
        const int sev = issueSeverity(index);
        if (sev >= 0)
            return issueIcon(sev == 0);
        if (item.isOp())
            return opIcon(*op(item));
        return {};
    }
    case ItemTypeRole: return int(item.type);
    case IssueSeverityRole: return issueSeverity(index);
    case IssueMessageRole: {
        QStringList lines;
        for (const ScenarioIssue& issue : m_issues)
            if (issue.item == item)
                lines << (issue.severity == ScenarioIssue::Severity::Error ? QStringLiteral("Error: ")
                                                                          : QStringLiteral("Warning: ")) +
                             issue.message;
        return lines.join(QLatin1Char('\n'));
    }
    default: return {};
    }
}

// ---- items -----------------------------------------------------------------------------------------------------

const DeviceSpec* ScenarioModel::device(const ScenarioItemRef& item) const
{
    if (item.type != ScenarioItemType::Device || item.a < 0 || size_t(item.a) >= m_scenario.devices.size())
        return nullptr;
    return &m_scenario.devices[size_t(item.a)];
}

const StreamSpec* ScenarioModel::stream(const ScenarioItemRef& item) const
{
    if (item.type != ScenarioItemType::Stream || item.a < 0 || size_t(item.a) >= m_scenario.streams.size())
        return nullptr;
    return &m_scenario.streams[size_t(item.a)];
}

const ThreadSpec* ScenarioModel::thread(const ScenarioItemRef& item) const
{
    if (item.a < 0 || size_t(item.a) >= m_scenario.threads.size())
        return nullptr;
    if (item.type != ScenarioItemType::Thread && !item.isOp())
        return nullptr;
    return &m_scenario.threads[size_t(item.a)];
}

const Op* ScenarioModel::op(const ScenarioItemRef& item) const
{
    return const_cast<ScenarioModel*>(this)->mutableOp(item);
}

Op* ScenarioModel::mutableOp(const ScenarioItemRef& item)
{
    if (!item.isOp() || item.a < 0 || size_t(item.a) >= m_scenario.threads.size())
        return nullptr;
    auto& ops = m_scenario.threads[size_t(item.a)].ops;
    if (item.b < 0 || size_t(item.b) >= ops.size())
        return nullptr;
    Op& o = ops[size_t(item.b)];
    if (item.type == ScenarioItemType::Op)
        return &o;
    if (item.c < 0 || size_t(item.c) >= o.ops.size())
        return nullptr;
    return &o.ops[size_t(item.c)];
}

ScenarioSettings ScenarioModel::settings() const
{
    return {m_scenario.id, m_scenario.title, m_scenario.description, m_scenario.run};
}

ScenarioModel::ItemValue ScenarioModel::valueOf(const ScenarioItemRef& item) const
{
    switch (item.type) {
    case ScenarioItemType::Device: return *device(item);
    case ScenarioItemType::Stream: return *stream(item);
    case ScenarioItemType::Thread: return *thread(item);
    case ScenarioItemType::Op:
    case ScenarioItemType::GraphNode: return *op(item);
    default: return settings();
    }
}

// ---- primitive changes -----------------------------------------------------------------------------------------

void ScenarioModel::primSet(const ScenarioItemRef& item, const ItemValue& value)
{
    switch (item.type) {
    case ScenarioItemType::Settings: {
        const auto& s = std::get<ScenarioSettings>(value);
        m_scenario.id = s.id;
        m_scenario.title = s.title;
        m_scenario.description = s.description;
        m_scenario.run = s.run;
        Q_EMIT dataChanged(indexOf(item, 0), indexOf(item, ColumnCount - 1));
        return;
    }
    case ScenarioItemType::Device: {
        const auto& d = std::get<DeviceSpec>(value);
        if (d.index != m_scenario.devices[size_t(item.a)].index) {
            // The streams under the device follow its index: a reset keeps that simple (devices are few).
            beginResetModel();
            m_scenario.devices[size_t(item.a)] = d;
            rebuildNodes();
            endResetModel();
            return;
        }
        m_scenario.devices[size_t(item.a)] = d;
        Q_EMIT dataChanged(indexOf(item, 0), indexOf(item, ColumnCount - 1));
        return;
    }
    case ScenarioItemType::Stream: {
        const auto& s = std::get<StreamSpec>(value);
        const size_t i = size_t(item.a);
        const int oldDevice = m_streamDeviceRow[i];
        const int newDevice = deviceRowOfStream(s);
        if (oldDevice != newDevice && oldDevice >= 0 && newDevice >= 0) {
            int newRow = 0;
            for (size_t j = 0; j < i; ++j)
                newRow += m_streamDeviceRow[j] == newDevice ? 1 : 0;
            beginMoveRows(indexOf(ScenarioItemRef::device(oldDevice)), m_streamRow[i], m_streamRow[i],
                          indexOf(ScenarioItemRef::device(newDevice)), newRow);
            m_scenario.streams[i] = s;
            rebuildStreamRows();
            endMoveRows();
        } else {
            m_scenario.streams[i] = s;
            rebuildStreamRows();
        }
        Q_EMIT dataChanged(indexOf(item, 0), indexOf(item, ColumnCount - 1));
        return;
    }
    case ScenarioItemType::Thread: {
        ThreadSpec t = std::get<ThreadSpec>(value);
        t.ops = std::move(m_scenario.threads[size_t(item.a)].ops);
        m_scenario.threads[size_t(item.a)] = std::move(t);
        Q_EMIT dataChanged(indexOf(item, 0), indexOf(item, ColumnCount - 1));
        return;
    }
    case ScenarioItemType::Op:
    case ScenarioItemType::GraphNode: {
        Op newOp = std::get<Op>(value);
        Op* o = mutableOp(item);
        const bool wasGraph = o->kind == OpKind::Graph && item.type == ScenarioItemType::Op;
        const bool isGraph = newOp.kind == OpKind::Graph && item.type == ScenarioItemType::Op;
        const QModelIndex idx = indexOf(item);
        if (wasGraph && isGraph) {
            newOp.ops = std::move(o->ops); // the nodes are edited as items of their own
            *o = std::move(newOp);
        } else if (wasGraph) {
            newOp.ops.clear();
            if (!o->ops.empty()) {
                beginRemoveRows(idx, 0, int(o->ops.size()) - 1);
                *o = std::move(newOp);
                endRemoveRows();
            } else {
                *o = std::move(newOp);
            }
        } else if (isGraph) {
            std::vector<Op> nodes = std::move(newOp.ops);
            newOp.ops.clear();
            *o = std::move(newOp);
            syncGraphNode(item.a, item.b);
            if (!nodes.empty()) {
                beginInsertRows(idx, 0, int(nodes.size()) - 1);
                o->ops = std::move(nodes);
                endInsertRows();
            }
        } else {
            newOp.ops.clear();
            *o = std::move(newOp);
        }
        Q_EMIT dataChanged(indexOf(item, 0), indexOf(item, ColumnCount - 1));
        return;
    }
    default: return;
    }
}

void ScenarioModel::primSetOpStreams(const std::vector<ScenarioItemRef>& ops, const std::string& stream)
{
    for (const ScenarioItemRef& r : ops) {
        if (Op* o = mutableOp(r)) {
            o->stream = stream;
            Q_EMIT dataChanged(indexOf(r, 0), indexOf(r, ColumnCount - 1));
        }
    }
}

void ScenarioModel::primInsert(const ScenarioItemRef& at, const ItemValue& value)
{
    switch (at.type) {
    case ScenarioItemType::Stream: {
        const auto& s = std::get<StreamSpec>(value);
        const size_t i = std::min(size_t(std::max(at.a, 0)), m_scenario.streams.size());
        const int d = deviceRowOfStream(s);
        if (d < 0) {
            m_scenario.streams.insert(m_scenario.streams.begin() + std::ptrdiff_t(i), s);
            rebuildStreamRows();
            return;
        }
        int row = 0;
        for (size_t j = 0; j < i; ++j)
            row += m_streamDeviceRow[j] == d ? 1 : 0;
        beginInsertRows(indexOf(ScenarioItemRef::device(d)), row, row);
        m_scenario.streams.insert(m_scenario.streams.begin() + std::ptrdiff_t(i), s);
        rebuildStreamRows();
        endInsertRows();
        return;
    }
    case ScenarioItemType::Thread: {
        const int t = std::clamp(at.a, 0, int(m_scenario.threads.size()));
        beginInsertRows(indexOf(ScenarioItemRef{ScenarioItemType::ThreadsGroup}), t, t);
        m_scenario.threads.insert(m_scenario.threads.begin() + t, std::get<ThreadSpec>(value));
        auto n = std::make_unique<Node>();
        n->type = ScenarioItemType::Thread;
        n->parent = m_threadsGroup.get();
        m_threadNodes.insert(m_threadNodes.begin() + t, std::move(n));
        renumberThreadNodes();
        for (size_t o = 0; o < m_scenario.threads[size_t(t)].ops.size(); ++o)
            syncGraphNode(t, int(o));
        endInsertRows();
        return;
    }
    case ScenarioItemType::Op: {
        auto& ops = m_scenario.threads[size_t(at.a)].ops;
        const int o = std::clamp(at.b, 0, int(ops.size()));
        beginInsertRows(indexOf(ScenarioItemRef::thread(at.a)), o, o);
        ops.insert(ops.begin() + o, std::get<Op>(value));
        for (auto& g : m_threadNodes[size_t(at.a)]->graphs)
            if (g->row >= o)
                ++g->row;
        syncGraphNode(at.a, o);
        endInsertRows();
        return;
    }
    case ScenarioItemType::GraphNode: {
        auto& nodes = m_scenario.threads[size_t(at.a)].ops[size_t(at.b)].ops;
        const int n = std::clamp(at.c, 0, int(nodes.size()));
        syncGraphNode(at.a, at.b);
        beginInsertRows(indexOf(ScenarioItemRef::op(at.a, at.b)), n, n);
        nodes.insert(nodes.begin() + n, std::get<Op>(value));
        endInsertRows();
        return;
    }
    default: return;
    }
}

ScenarioModel::ItemValue ScenarioModel::primRemove(const ScenarioItemRef& item)
{
    ItemValue value = valueOf(item);
    switch (item.type) {
    case ScenarioItemType::Stream: {
        const size_t i = size_t(item.a);
        const int d = m_streamDeviceRow[i];
        if (d >= 0)
            beginRemoveRows(indexOf(ScenarioItemRef::device(d)), m_streamRow[i], m_streamRow[i]);
        m_scenario.streams.erase(m_scenario.streams.begin() + item.a);
        rebuildStreamRows();
        if (d >= 0)
            endRemoveRows();
        break;
    }
    case ScenarioItemType::Thread: {
        beginRemoveRows(indexOf(ScenarioItemRef{ScenarioItemType::ThreadsGroup}), item.a, item.a);
        m_scenario.threads.erase(m_scenario.threads.begin() + item.a);
        std::unique_ptr<Node> gone = std::move(m_threadNodes[size_t(item.a)]);
        m_threadNodes.erase(m_threadNodes.begin() + item.a);
        renumberThreadNodes();
        endRemoveRows();
        break;
    }
    case ScenarioItemType::Op: {
        beginRemoveRows(indexOf(ScenarioItemRef::thread(item.a)), item.b, item.b);
        auto& ops = m_scenario.threads[size_t(item.a)].ops;
        ops.erase(ops.begin() + item.b);
        auto& graphs = m_threadNodes[size_t(item.a)]->graphs;
        std::unique_ptr<Node> gone;
        for (auto it = graphs.begin(); it != graphs.end(); ++it) {
            if ((*it)->row == item.b) {
                gone = std::move(*it);
                graphs.erase(it);
                break;
            }
        }
        for (auto& g : graphs)
            if (g->row > item.b)
                --g->row;
        endRemoveRows();
        break;
    }
    case ScenarioItemType::GraphNode: {
        beginRemoveRows(indexOf(ScenarioItemRef::op(item.a, item.b)), item.c, item.c);
        auto& nodes = m_scenario.threads[size_t(item.a)].ops[size_t(item.b)].ops;
        nodes.erase(nodes.begin() + item.c);
        endRemoveRows();
        break;
    }
    default: break;
    }
    return value;
}

ScenarioItemRef ScenarioModel::primMove(const ScenarioItemRef& item, int delta)
{
    switch (item.type) {
    case ScenarioItemType::Stream: {
        const size_t i = size_t(item.a);
        const int d = m_streamDeviceRow[i];
        const int row = m_streamRow[i];
        const int target = row + delta;
        const size_t j = size_t(m_deviceStreams[size_t(d)][size_t(target)]);
        const QModelIndex parent = indexOf(ScenarioItemRef::device(d));
        beginMoveRows(parent, row, row, parent, delta > 0 ? target + 1 : target);
        std::swap(m_scenario.streams[i], m_scenario.streams[j]);
        rebuildStreamRows();
        endMoveRows();
        return ScenarioItemRef::stream(int(j));
    }
    case ScenarioItemType::Thread: {
        const int t = item.a, target = item.a + delta;
        const QModelIndex parent = indexOf(ScenarioItemRef{ScenarioItemType::ThreadsGroup});
        beginMoveRows(parent, t, t, parent, delta > 0 ? target + 1 : target);
        std::swap(m_scenario.threads[size_t(t)], m_scenario.threads[size_t(target)]);
        std::swap(m_threadNodes[size_t(t)], m_threadNodes[size_t(target)]);
        renumberThreadNodes();
        endMoveRows();
        return ScenarioItemRef::thread(target);
    }
    case ScenarioItemType::Op: {
        const int o = item.b, target = item.b + delta;
        const QModelIndex parent = indexOf(ScenarioItemRef::thread(item.a));
        beginMoveRows(parent, o, o, parent, delta > 0 ? target + 1 : target);
        auto& ops = m_scenario.threads[size_t(item.a)].ops;
        std::swap(ops[size_t(o)], ops[size_t(target)]);
        for (auto& g : m_threadNodes[size_t(item.a)]->graphs) {
            if (g->row == o)
                g->row = target;
            else if (g->row == target)
                g->row = o;
        }
        endMoveRows();
        return ScenarioItemRef::op(item.a, target);
    }
    case ScenarioItemType::GraphNode: {
        const int n = item.c, target = item.c + delta;
        const QModelIndex parent = indexOf(ScenarioItemRef::op(item.a, item.b));
        beginMoveRows(parent, n, n, parent, delta > 0 ? target + 1 : target);
        auto& nodes = m_scenario.threads[size_t(item.a)].ops[size_t(item.b)].ops;
        std::swap(nodes[size_t(n)], nodes[size_t(target)]);
        endMoveRows();
        return ScenarioItemRef::node(item.a, item.b, target);
    }
    default: return item;
    }
}

void ScenarioModel::primReplace(const Scenario& scenario)
{
    beginResetModel();
    m_scenario = scenario;
    rebuildNodes();
    endResetModel();
}

// ---- validation ------------------------------------------------------------------------------------------------

ScenarioItemRef ScenarioModel::itemForPath(const QString& jsonPath, QString* field)
{
    const QStringList t = jsonPath.split(QLatin1Char('/'), Qt::SkipEmptyParts);
    auto number = [&](int i) {
        bool ok = false;
        const int v = i < t.size() ? t[i].toInt(&ok) : -1;
        return ok ? v : -1;
    };
    auto rest = [&](int from) { return t.mid(from).join(QLatin1Char('/')); };
    ScenarioItemRef item = ScenarioItemRef::settings();
    int consumed = 0;
    if (t.size() == 1 && (t[0] == QLatin1String("devices") || t[0] == QLatin1String("streams"))) {
        item = ScenarioItemRef{ScenarioItemType::DevicesGroup};
        consumed = 1;
    } else if (t.size() == 1 && t[0] == QLatin1String("threads")) {
        item = ScenarioItemRef{ScenarioItemType::ThreadsGroup};
        consumed = 1;
    } else if (t.size() >= 2 && t[0] == QLatin1String("devices") && number(1) >= 0) {
        item = ScenarioItemRef::device(number(1));
        consumed = 2;
    } else if (t.size() >= 2 && t[0] == QLatin1String("streams") && number(1) >= 0) {
        item = ScenarioItemRef::stream(number(1));
        consumed = 2;
    } else if (t.size() >= 2 && t[0] == QLatin1String("threads") && number(1) >= 0) {
        item = ScenarioItemRef::thread(number(1));
        consumed = 2;
        if (t.size() >= 4 && t[2] == QLatin1String("ops") && number(3) >= 0) {
            item = ScenarioItemRef::op(number(1), number(3));
            consumed = 4;
            if (t.size() >= 6 && t[4] == QLatin1String("ops") && number(5) >= 0) {
                item = ScenarioItemRef::node(number(1), number(3), number(5));
                consumed = 6;
            }
        }
    }
    if (field)
        *field = rest(consumed);
    return item;
}

QString ScenarioModel::pathOf(const ScenarioItemRef& item)
{
    switch (item.type) {
    case ScenarioItemType::Device: return QStringLiteral("/devices/%1").arg(item.a);
    case ScenarioItemType::Stream: return QStringLiteral("/streams/%1").arg(item.a);
    case ScenarioItemType::Thread: return QStringLiteral("/threads/%1").arg(item.a);
    case ScenarioItemType::Op: return QStringLiteral("/threads/%1/ops/%2").arg(item.a).arg(item.b);
    case ScenarioItemType::GraphNode:
        return QStringLiteral("/threads/%1/ops/%2/ops/%3").arg(item.a).arg(item.b).arg(item.c);
    case ScenarioItemType::DevicesGroup: return QStringLiteral("/devices");
    case ScenarioItemType::ThreadsGroup: return QStringLiteral("/threads");
    default: return {};
    }
}

void ScenarioModel::revalidate()
{
    std::vector<ScenarioIssue> issues;
    auto add = [&](const Error& e, ScenarioIssue::Severity sev) {
        ScenarioIssue issue;
        issue.severity = sev;
        issue.path = qs(e.path);
        issue.message = qs(e.message);
        issue.item = itemForPath(issue.path, &issue.field);
        if (!indexOf(issue.item).isValid()) // a path beyond the items (never expected): show it on the scenario
            issue.item = ScenarioItemRef::settings();
        issues.push_back(std::move(issue));
    };
    auto result = validateScenario(m_scenario);
    if (!result) {
        add(result.error(), ScenarioIssue::Severity::Error);
        m_validated.reset();
    } else {
        for (const Warning& w : result->warnings)
            add(w, ScenarioIssue::Severity::Warning);
        m_validated = std::make_shared<const Scenario>(std::move(result->scenario));
    }
    const bool changed = issues.size() != m_issues.size() ||
                         !std::equal(issues.begin(), issues.end(), m_issues.begin(),
                                     [](const ScenarioIssue& x, const ScenarioIssue& y) {
                                         return x.path == y.path && x.message == y.message &&
                                                x.severity == y.severity && x.item == y.item;
                                     });
    // Items that show an issue (or showed one) and their ancestors repaint.
    std::vector<QModelIndex> touched;
    auto collect = [&](const std::vector<ScenarioIssue>& list) {
        for (const ScenarioIssue& issue : list)
            for (QModelIndex i = indexOf(issue.item); i.isValid(); i = i.parent())
                touched.push_back(i);
    };
    collect(m_issues);
    m_issues = std::move(issues);
    // An item shows its own issues and its descendants' (so that a collapsed tree still shows where they are).
    m_severity.clear();
    for (const ScenarioIssue& issue : m_issues) {
        const int sev = issue.severity == ScenarioIssue::Severity::Error ? 0 : 1;
        for (QModelIndex i = indexOf(issue.item); i.isValid(); i = i.parent()) {
            const ScenarioItemRef r = itemAt(i);
            auto [it, inserted] = m_severity.emplace(std::array<int, 4>{int(r.type), r.a, r.b, r.c}, sev);
            if (!inserted)
                it->second = std::min(it->second, sev);
        }
    }
    collect(m_issues);
    for (const QModelIndex& i : touched)
        if (i.isValid())
            Q_EMIT dataChanged(i.siblingAtColumn(0), i.siblingAtColumn(ColumnCount - 1));
    if (changed)
        Q_EMIT validationChanged();
}

std::optional<ScenarioIssue> ScenarioModel::error() const
{
    for (const ScenarioIssue& issue : m_issues)
        if (issue.severity == ScenarioIssue::Severity::Error)
            return issue;
    return std::nullopt;
}

std::vector<ScenarioIssue> ScenarioModel::issuesAt(const ScenarioItemRef& item) const
{
    std::vector<ScenarioIssue> out;
    for (const ScenarioIssue& issue : m_issues)
        if (issue.item == item)
            out.push_back(issue);
    return out;
}

// ---- editing ---------------------------------------------------------------------------------------------------

void ScenarioModel::setSettings(const ScenarioSettings& value, const QString& field)
{
    pushCommand(new SetCommand(this, ScenarioItemRef::settings(), settings(), value, field,
                               QStringLiteral("Change %1 of the scenario").arg(field)));
}

void ScenarioModel::setDevice(int d, const DeviceSpec& value, const QString& field)
{
    const ScenarioItemRef item = ScenarioItemRef::device(d);
    const DeviceSpec* old = device(item);
    if (!old)
        return;
    if (old->index != value.index) {
        // A new index: streams, threads and peer copies on the device follow it.
        Scenario s = m_scenario;
        const int from = old->index;
        s.devices[size_t(d)] = value;
        for (auto& st : s.streams)
            if (st.device == from)
                st.device = value.index;
        for (auto& t : s.threads) {
            if (t.device == from)
                t.device = value.index;
            for (auto& o : t.ops)
                if (o.kind == OpKind::Memcpy && o.copy == CopyKind::P2P && o.dstDevice == from)
                    o.dstDevice = value.index;
        }
        applyScenario(std::move(s), QStringLiteral("Change index of GPU %1 to %2").arg(from).arg(value.index));
        return;
    }
    pushCommand(new SetCommand(this, item, *old, value, field,
                               QStringLiteral("Change %1 of GPU %2").arg(field).arg(old->index)));
}

void ScenarioModel::setStream(int s, const StreamSpec& value, const QString& field)
{
    const ScenarioItemRef item = ScenarioItemRef::stream(s);
    const StreamSpec* old = stream(item);
    if (!old)
        return;
    pushCommand(new SetCommand(this, item, *old, value, field,
                               QStringLiteral("Change %1 of stream %2").arg(field, quotedName(old->name))));
}

void ScenarioModel::setThread(int t, const ThreadSpec& value, const QString& field)
{
    const ScenarioItemRef item = ScenarioItemRef::thread(t);
    const ThreadSpec* old = thread(item);
    if (!old)
        return;
    ThreadSpec before = *old;
    before.ops.clear();
    ThreadSpec after = value;
    after.ops.clear();
    pushCommand(new SetCommand(this, item, std::move(before), std::move(after), field,
                               QStringLiteral("Change %1 of thread %2").arg(field, quotedName(old->name))));
}

void ScenarioModel::setOp(const ScenarioItemRef& item, const Op& value, const QString& field)
{
    const Op* old = op(item);
    if (!old)
        return;
    Op after = value;
    if (old->kind == OpKind::Graph && after.kind == OpKind::Graph)
        after.ops.clear(); // kept by primSet
    pushCommand(new SetCommand(this, item, *old, std::move(after), field,
                               QStringLiteral("Change %1 of %2").arg(field, quotedName(displayName(*old)))));
}

void ScenarioModel::applyScenario(Scenario scenario, const QString& text, std::shared_ptr<const QuickState> quick,
                                  const QString& mergeKey)
{
    pushCommand(new ReplaceCommand(this, m_scenario, std::move(scenario), text, std::move(quick), mergeKey));
}

bool ScenarioModel::isGraphNodeKind(OpKind k)
{
    // What stream capture can record into a graph.
    return k == OpKind::Kernel || k == OpKind::Memcpy || k == OpKind::Memset || k == OpKind::HostFunc ||
           k == OpKind::Record || k == OpKind::Wait;
}

Op ScenarioModel::defaultOp(const Scenario& s, int thread, OpKind kind)
{
    Op op;
    op.kind = kind;
    const ThreadSpec* t = thread >= 0 && size_t(thread) < s.threads.size() ? &s.threads[size_t(thread)] : nullptr;
    // The stream: the one the thread used last, else the first on its device, else any.
    std::string stream;
    if (t) {
        for (auto it = t->ops.rbegin(); it != t->ops.rend() && stream.empty(); ++it)
            stream = it->stream;
        for (const auto& st : s.streams)
            if (stream.empty() && st.device == t->device)
                stream = st.name;
    }
    if (stream.empty() && !s.streams.empty())
        stream = s.streams.front().name;
    std::set<std::string> events;
    std::string lastRecorded;
    for (const auto& th : s.threads)
        for (const auto& o : th.ops) {
            if (!o.event.empty())
                events.insert(o.event);
            if (o.kind == OpKind::Record)
                lastRecorded = o.event;
        }
    switch (kind) {
    case OpKind::Kernel:
        op.stream = stream;
        op.kernel = KernelKind::Spin;
        op.durationUs = 100;
        op.grid = Dim3{66, 1, 1};
        op.gridGiven = true;
        op.block = Dim3{256, 1, 1};
        break;
    case OpKind::Memcpy:
        op.stream = stream;
        op.copy = CopyKind::H2D;
        op.bytes = 16 << 20;
        op.pinned = true;
        break;
    case OpKind::Memset:
        op.stream = stream;
        op.bytes = 16 << 20;
        break;
    case OpKind::Record: {
        op.stream = stream;
        std::string name = "e1";
        if (events.count(name))
            name = uniqueName(*events.rbegin(), events);
        op.event = name;
        break;
    }
    case OpKind::Wait:
    case OpKind::EventSync:
        if (kind == OpKind::Wait)
            op.stream = stream;
        op.event = lastRecorded.empty() ? (events.empty() ? std::string("e1") : *events.begin()) : lastRecorded;
        break;
    case OpKind::HostFunc:
        op.stream = stream;
        op.durationUs = 20;
        break;
    case OpKind::HostWork: op.durationUs = 50; break;
    case OpKind::StreamSync: op.stream = stream; break;
    case OpKind::DeviceSync: break;
    case OpKind::Graph: {
        op.stream = stream;
        Op node = defaultOp(s, thread, OpKind::Kernel);
        node.durationUs = 10;
        node.grid = Dim3{1, 1, 1};
        node.stream = stream;
        op.ops = {node, node, node};
        break;
    }
    case OpKind::Malloc:
    case OpKind::Free: op.bytes = 16 << 20; break;
    }
    return op;
}

ScenarioItemRef ScenarioModel::addDevice()
{
    Scenario s = m_scenario;
    DeviceSpec d;
    for (const auto& existing : s.devices)
        d.index = std::max(d.index, existing.index + 1);
    if (!s.devices.empty())
        d.profile = s.devices.front().profile;
    s.devices.push_back(d);
    applyScenario(std::move(s), QStringLiteral("Add GPU %1").arg(d.index));
    return ScenarioItemRef::device(int(m_scenario.devices.size()) - 1);
}

ScenarioItemRef ScenarioModel::addStream(const ScenarioItemRef& context)
{
    if (m_scenario.devices.empty())
        return {};
    StreamSpec st;
    st.device = m_scenario.devices.front().index;
    size_t pos = m_scenario.streams.size();
    if (const DeviceSpec* d = device(context)) {
        st.device = d->index;
        for (size_t i = 0; i < m_scenario.streams.size(); ++i)
            if (m_scenario.streams[i].device == d->index)
                pos = i + 1;
    } else if (const StreamSpec* other = stream(context)) {
        st.device = other->device;
        st.kind = isCreatedStream(other->kind) ? other->kind : StreamKind::Blocking;
        pos = size_t(context.a) + 1;
    }
    std::set<std::string> names;
    for (const auto& existing : m_scenario.streams)
        names.insert(existing.name);
    st.name = "s" + std::to_string(m_scenario.streams.size() + 1);
    if (names.count(st.name))
        st.name = uniqueName(st.name, names);
    const ScenarioItemRef at = ScenarioItemRef::stream(int(pos));
    pushCommand(new InsertCommand(this, at, st, QStringLiteral("Add stream %1").arg(quotedName(st.name))));
    return at;
}

ScenarioItemRef ScenarioModel::addThread()
{
    ThreadSpec t;
    std::set<std::string> names;
    for (const auto& existing : m_scenario.threads)
        names.insert(existing.name);
    t.name = "thread " + std::to_string(m_scenario.threads.size() + 1);
    if (names.count(t.name))
        t.name = uniqueName(t.name, names);
    t.device = m_scenario.devices.empty() ? 0 : m_scenario.devices.front().index;
    Scenario probe = m_scenario;
    probe.threads.push_back(t);
    t.ops.push_back(defaultOp(probe, int(probe.threads.size()) - 1, OpKind::Kernel));
    const ScenarioItemRef at = ScenarioItemRef::thread(int(m_scenario.threads.size()));
    pushCommand(new InsertCommand(this, at, t, QStringLiteral("Add host thread %1").arg(quotedName(t.name))));
    return at;
}

ScenarioItemRef ScenarioModel::addOp(const ScenarioItemRef& context, OpKind kind)
{
    const ThreadSpec* t = thread(context);
    if (!t)
        return {};
    const int pos = context.isOp() ? context.b + 1 : int(t->ops.size());
    const ScenarioItemRef at = ScenarioItemRef::op(context.a, pos);
    pushCommand(new InsertCommand(this, at, defaultOp(m_scenario, context.a, kind),
                                  QStringLiteral("Add %1").arg(qs(toString(kind)))));
    return at;
}

ScenarioItemRef ScenarioModel::addGraphNode(const ScenarioItemRef& context, OpKind kind)
{
    if (!isGraphNodeKind(kind) || !context.isOp())
        return {};
    const Op* graph = op(ScenarioItemRef::op(context.a, context.b));
    if (!graph || graph->kind != OpKind::Graph)
        return {};
    const int pos = context.type == ScenarioItemType::GraphNode ? context.c + 1 : int(graph->ops.size());
    Op node = defaultOp(m_scenario, context.a, kind);
    node.stream = graph->stream;
    if (kind == OpKind::Kernel) {
        node.durationUs = 10;
        node.grid = Dim3{1, 1, 1};
    }
    const ScenarioItemRef at = ScenarioItemRef::node(context.a, context.b, pos);
    pushCommand(new InsertCommand(this, at, node, QStringLiteral("Add graph node %1").arg(qs(toString(kind)))));
    return at;
}

bool ScenarioModel::canRemove(const ScenarioItemRef& item) const
{
    switch (item.type) {
    case ScenarioItemType::Device: return device(item) != nullptr;
    case ScenarioItemType::Stream: return stream(item) != nullptr;
    case ScenarioItemType::Thread: return thread(item) != nullptr;
    case ScenarioItemType::Op:
    case ScenarioItemType::GraphNode: return op(item) != nullptr;
    default: return false;
    }
}

bool ScenarioModel::remove(const ScenarioItemRef& item)
{
    if (!canRemove(item))
        return false;
    if (item.type == ScenarioItemType::Device) {
        // With its streams: a stream cannot live without its device.
        Scenario s = m_scenario;
        const int index = s.devices[size_t(item.a)].index;
        s.devices.erase(s.devices.begin() + item.a);
        std::erase_if(s.streams, [&](const StreamSpec& st) { return st.device == index; });
        applyScenario(std::move(s), QStringLiteral("Remove GPU %1 and its streams").arg(index));
        return true;
    }
    QString what;
    if (item.type == ScenarioItemType::Stream)
        what = quotedName(stream(item)->name);
    else if (item.type == ScenarioItemType::Thread)
        what = quotedName(thread(item)->name);
    else
        what = quotedName(displayName(*op(item)));
    pushCommand(new RemoveCommand(this, item, QStringLiteral("Remove %1 %2").arg(itemTypeName(item.type), what)));
    return true;
}

bool ScenarioModel::canMove(const ScenarioItemRef& item, int delta) const
{
    if (delta != -1 && delta != 1)
        return false;
    switch (item.type) {
    case ScenarioItemType::Device: {
        const int t = item.a + delta;
        return device(item) && t >= 0 && size_t(t) < m_scenario.devices.size();
    }
    case ScenarioItemType::Stream: {
        if (!stream(item) || m_streamDeviceRow[size_t(item.a)] < 0)
            return false;
        const int t = m_streamRow[size_t(item.a)] + delta;
        return t >= 0 && size_t(t) < m_deviceStreams[size_t(m_streamDeviceRow[size_t(item.a)])].size();
    }
    case ScenarioItemType::Thread: {
        const int t = item.a + delta;
        return thread(item) && t >= 0 && size_t(t) < m_scenario.threads.size();
    }
    case ScenarioItemType::Op: {
        const int t = item.b + delta;
        return op(item) && t >= 0 && size_t(t) < m_scenario.threads[size_t(item.a)].ops.size();
    }
    case ScenarioItemType::GraphNode: {
        const int t = item.c + delta;
        return op(item) && t >= 0 && size_t(t) < m_scenario.threads[size_t(item.a)].ops[size_t(item.b)].ops.size();
    }
    default: return false;
    }
}

ScenarioItemRef ScenarioModel::move(const ScenarioItemRef& item, int delta)
{
    if (!canMove(item, delta))
        return item;
    const QString dir = delta < 0 ? QStringLiteral("up") : QStringLiteral("down");
    if (item.type == ScenarioItemType::Device) {
        Scenario s = m_scenario;
        std::swap(s.devices[size_t(item.a)], s.devices[size_t(item.a + delta)]);
        applyScenario(std::move(s), QStringLiteral("Move GPU %1 %2").arg(device(item)->index).arg(dir));
        return ScenarioItemRef::device(item.a + delta);
    }
    QString what;
    if (item.type == ScenarioItemType::Stream)
        what = quotedName(stream(item)->name);
    else if (item.type == ScenarioItemType::Thread)
        what = quotedName(thread(item)->name);
    else
        what = quotedName(displayName(*op(item)));
    auto* cmd = new MoveCommand(this, item, delta, QStringLiteral("Move %1 %2").arg(what, dir));
    pushCommand(cmd);
    return cmd->moved();
}

bool ScenarioModel::canDuplicate(const ScenarioItemRef& item) const
{
    return canRemove(item);
}

ScenarioItemRef ScenarioModel::duplicate(const ScenarioItemRef& item)
{
    if (!canDuplicate(item))
        return {};
    switch (item.type) {
    case ScenarioItemType::Device: {
        Scenario s = m_scenario;
        DeviceSpec d = *device(item);
        for (const auto& existing : s.devices)
            d.index = std::max(d.index, existing.index + 1);
        s.devices.insert(s.devices.begin() + item.a + 1, d);
        applyScenario(std::move(s), QStringLiteral("Duplicate GPU %1").arg(device(item)->index));
        return ScenarioItemRef::device(item.a + 1);
    }
    case ScenarioItemType::Stream: {
        StreamSpec st = *stream(item);
        std::set<std::string> names;
        for (const auto& existing : m_scenario.streams)
            names.insert(existing.name);
        st.name = uniqueName(st.name, names, "-");
        const ScenarioItemRef at = ScenarioItemRef::stream(item.a + 1);
        pushCommand(new InsertCommand(this, at, st, QStringLiteral("Duplicate stream %1").arg(quotedName(stream(item)->name))));
        return at;
    }
    case ScenarioItemType::Thread: {
        ThreadSpec t = *thread(item);
        std::set<std::string> names;
        for (const auto& existing : m_scenario.threads)
            names.insert(existing.name);
        t.name = uniqueName(t.name, names);
        const ScenarioItemRef at = ScenarioItemRef::thread(item.a + 1);
        pushCommand(new InsertCommand(this, at, t, QStringLiteral("Duplicate thread %1").arg(quotedName(thread(item)->name))));
        return at;
    }
    case ScenarioItemType::Op:
    case ScenarioItemType::GraphNode: {
        ScenarioItemRef at = item;
        if (item.type == ScenarioItemType::Op)
            at.b += 1;
        else
            at.c += 1;
        pushCommand(new InsertCommand(this, at, *op(item), QStringLiteral("Duplicate %1").arg(quotedName(displayName(*op(item))))));
        return at;
    }
    default: return {};
    }
}

} // namespace streamscope
