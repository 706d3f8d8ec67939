// What the scenario model's files share (scenario_model.cpp, scenario_model_changes.cpp, scenario_model_edit.cpp):
// the nodes its indexes point at, the undo commands every edit is, and the wording of their names. Internal to ui.
#pragma once

#include "scenario_model.h"

#include "format.h"

#include <QUndoCommand>

#include <memory>
#include <string>
#include <vector>

namespace streamscope {

// The objects child indexes point at (internalPointer): the root, the two groups, each device, each thread and
// each graph op. They move with their items, so an index's parent stays right across inserts, removes and moves.
struct ScenarioModel::Node {
    ScenarioItemType type = ScenarioItemType::None; // None: the root
    int row = 0;                                    // device, thread: index; graph op: op index in its thread
    Node* parent = nullptr;                         // graph op: its thread's node
    std::vector<std::unique_ptr<Node>> graphs;      // thread: nodes of its graph ops
};

namespace scenario_model_detail {

inline QString quotedName(const std::string& s)
{
    return QStringLiteral("“") + qs(s) + QStringLiteral("”");
}

inline QString itemTypeName(ScenarioItemType t)
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

} // namespace scenario_model_detail

// ---- commands --------------------------------------------------------------------------------------------------

// Every edit: keeps the quick controls' state of the step and revalidates after redo and undo.
class ScenarioModel::Command : public QUndoCommand {
public:
    Command(ScenarioModel* model, const QString& text, std::shared_ptr<const QuickState> quickAfter = {})
        : QUndoCommand(text), m_model(model), m_quickBefore(model->m_quick), m_quickAfter(std::move(quickAfter))
    {}
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
    {}
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
    {}

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
    {}

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
    {}
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
    {}
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

} // namespace streamscope
