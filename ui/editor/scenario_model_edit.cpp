// Editing the scenario model: validation (issues on their items, by JSON path), and every edit as an undo command
// (set, add, remove, move, duplicate), with the defaults and free names of what is added.
#include "scenario_model.h"
#include "scenario_model_internal.h"
#include "unique_name.h"

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

using scenario_model_detail::itemTypeName;
using scenario_model_detail::quotedName;

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
    const bool changed = issues.size() != m_issues.size()
        || !std::equal(issues.begin(), issues.end(), m_issues.begin(),
                       [](const ScenarioIssue& x, const ScenarioIssue& y) {
                           return x.path == y.path && x.message == y.message && x.severity == y.severity
                               && x.item == y.item;
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
    return k == OpKind::Kernel || k == OpKind::Memcpy || k == OpKind::Memset || k == OpKind::HostFunc
        || k == OpKind::Record || k == OpKind::Wait;
}

Op ScenarioModel::defaultOp(const Scenario& s, int thread, OpKind kind, int position)
{
    Op op;
    op.kind = kind;
    const ThreadSpec* t = thread >= 0 && size_t(thread) < s.threads.size() ? &s.threads[size_t(thread)] : nullptr;
    // The stream: that of the nearest op above with one, else the first on the thread's device, else any.
    std::string stream;
    if (t) {
        const size_t above = position < 0 ? t->ops.size() : std::min(size_t(position), t->ops.size());
        for (size_t i = above; i-- > 0 && stream.empty();)
            stream = t->ops[i].stream;
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
    case OpKind::Collective:
        op.stream = stream;
        op.bytes = 64 << 20;
        break;
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
    pushCommand(new InsertCommand(this, at, defaultOp(m_scenario, context.a, kind, pos),
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
        pushCommand(
            new InsertCommand(this, at, st, QStringLiteral("Duplicate stream %1").arg(quotedName(stream(item)->name))));
        return at;
    }
    case ScenarioItemType::Thread: {
        ThreadSpec t = *thread(item);
        std::set<std::string> names;
        for (const auto& existing : m_scenario.threads)
            names.insert(existing.name);
        t.name = uniqueName(t.name, names);
        const ScenarioItemRef at = ScenarioItemRef::thread(item.a + 1);
        pushCommand(
            new InsertCommand(this, at, t, QStringLiteral("Duplicate thread %1").arg(quotedName(thread(item)->name))));
        return at;
    }
    case ScenarioItemType::Op:
    case ScenarioItemType::GraphNode: {
        ScenarioItemRef at = item;
        if (item.type == ScenarioItemType::Op)
            at.b += 1;
        else
            at.c += 1;
        pushCommand(new InsertCommand(this, at, *op(item),
                                      QStringLiteral("Duplicate %1").arg(quotedName(displayName(*op(item))))));
        return at;
    }
    default: return {};
    }
}

} // namespace streamscope