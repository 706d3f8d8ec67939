// The primitive changes of the scenario model that its undo commands apply (set, insert, remove, move, replace),
// each with the item model's signals, so that views and indexes follow.
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

} // namespace streamscope
