// The scenario model: the tree of devices, streams, host threads, ops and graph nodes over a Scenario, as Qt's item
// model (index, parent, data: names, summaries, icons, issues). Edits: scenario_model_edit.cpp; the changes the
// undo commands apply: scenario_model_changes.cpp.
#include "scenario_model.h"
#include "scenario_model_internal.h"

#include "format.h"
#include "scenario_json.h"
#include "timeline_plottable.h"

#include <QIcon>
#include <QPainter>
#include <QPixmap>
#include <QStringList>
#include <QUndoCommand>
#include <QUndoStack>

#include <algorithm>
#include <set>
namespace streamscope {

namespace {

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
    case OpKind::Graph:
    case OpKind::Collective: return gpuSpanKindOf(op);
    case OpKind::HostWork: return SpanKind::HostWork;
    case OpKind::StreamSync:
    case OpKind::EventSync:
    case OpKind::DeviceSync: return SpanKind::Sync;
    default: return SpanKind::ApiCall;
    }
}

QIcon opIcon(const Op& op)
{
    // The kind's colour in the application's theme, as the timeline draws it.
    static QIcon icons[2][kSpanKindCount];
    const Theme& theme = Theme::current();
    const int k = int(spanKindOfOp(op));
    QIcon& icon = icons[theme.isDark ? 1 : 0][k];
    if (icon.isNull()) {
        QPixmap pm(16, 16);
        pm.fill(Qt::transparent);
        QPainter p(&pm);
        p.setPen(theme.spanKind(SpanKind(k)).darker(130));
        p.setBrush(theme.spanKind(SpanKind(k)));
        p.drawRect(QRect(3, 4, 10, 8));
        p.end();
        icon = QIcon(pm);
    }
    return icon;
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

using scenario_model_detail::itemTypeName;
using scenario_model_detail::quotedName;

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
        QString c =
            QStringLiteral("memcpy ") + qs(toString(op.copy)).toUpper() + QLatin1Char(' ') + formatBytes(op.bytes);
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
    case OpKind::Wait: parts << qs(toString(op.kind)) + QLatin1Char(' ') + qs(op.event) << qs(op.stream); break;
    case OpKind::HostFunc:
        parts << QStringLiteral("host-func ") + formatNs(op.durationUs * 1e3) << qs(op.stream);
        break;
    case OpKind::HostWork: parts << QStringLiteral("host-work ") + formatNs(op.durationUs * 1e3); break;
    case OpKind::StreamSync: parts << QStringLiteral("stream-sync ") + qs(op.stream); break;
    case OpKind::EventSync: parts << QStringLiteral("event-sync ") + qs(op.event); break;
    case OpKind::DeviceSync: parts << QStringLiteral("device-sync"); break;
    case OpKind::Graph: parts << QStringLiteral("graph of %1 nodes").arg(op.ops.size()) << qs(op.stream); break;
    case OpKind::Malloc:
    case OpKind::Free: parts << qs(toString(op.kind)) + QLatin1Char(' ') + formatBytes(op.bytes); break;
    case OpKind::Collective: parts << qs(opName(op)) + QLatin1Char(' ') + formatBytes(op.bytes) << qs(op.stream); break;
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
                                                                           : QStringLiteral("Warning: "))
                        + issue.message;
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

} // namespace streamscope
