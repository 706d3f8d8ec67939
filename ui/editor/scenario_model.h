// The scenario editor's model: a tree over a Scenario — "Scenario" (title, run settings), "Devices" → devices →
// their streams, "Host threads" → threads → operations (→ graph nodes). Every edit is a QUndoCommand on the model's
// QUndoStack, and after every edit (undo and redo included) the scenario is validated by the core
// (validateScenario); the error and warnings, whose JSON paths name an item and a field, are placed on the items.
#pragma once

#include "quick_settings.h"
#include "scenario.h"

#include <QAbstractItemModel>
#include <QString>

#include <array>
#include <map>
#include <memory>
#include <optional>
#include <variant>
#include <vector>

class QUndoCommand;
class QUndoStack;

namespace streamscope {

enum class ScenarioItemType {
    None,
    Settings, // the scenario itself: id, title, description, run settings
    DevicesGroup,
    Device,
    Stream,
    ThreadsGroup,
    Thread,
    Op,
    GraphNode, // an op captured in a graph op
};

// Names an item by its place in the Scenario's vectors.
struct ScenarioItemRef {
    ScenarioItemType type = ScenarioItemType::None;
    int a = -1; // Device: index into devices; Stream: into streams; Thread, Op, GraphNode: thread
    int b = -1; // Op, GraphNode: op index in the thread
    int c = -1; // GraphNode: node index in the graph op

    static ScenarioItemRef settings() { return {ScenarioItemType::Settings}; }
    static ScenarioItemRef device(int d) { return {ScenarioItemType::Device, d}; }
    static ScenarioItemRef stream(int s) { return {ScenarioItemType::Stream, s}; }
    static ScenarioItemRef thread(int t) { return {ScenarioItemType::Thread, t}; }
    static ScenarioItemRef op(int t, int o) { return {ScenarioItemType::Op, t, o}; }
    static ScenarioItemRef node(int t, int o, int n) { return {ScenarioItemType::GraphNode, t, o, n}; }
    bool isValid() const { return type != ScenarioItemType::None; }
    bool isOp() const { return type == ScenarioItemType::Op || type == ScenarioItemType::GraphNode; }
    bool operator==(const ScenarioItemRef&) const = default;
};

// A message of the core's validation, placed on the item its JSON path names.
struct ScenarioIssue {
    enum class Severity { Error, Warning };
    Severity severity = Severity::Error;
    QString path;  // JSON pointer: "/threads/0/ops/3/stream"
    QString field; // the path below the item: "stream", "grid/0", "run/warmup"; empty: the item itself
    QString message;
    ScenarioItemRef item;
};

// The fields of the tree's "Scenario" row.
struct ScenarioSettings {
    std::string id;
    std::string title;
    std::string description;
    RunSettings run;
};

class ScenarioModel : public QAbstractItemModel {
    Q_OBJECT
public:
    enum Column { NameColumn, DetailsColumn, ColumnCount };
    enum Role {
        ItemTypeRole = Qt::UserRole + 1, // int(ScenarioItemType)
        IssueSeverityRole,               // -1 none, 0 error, 1 warning (own issues or, for ancestors, their items')
        IssueMessageRole,                // the messages of the item's own issues, one per line
    };

    explicit ScenarioModel(QObject* parent = nullptr);
    ~ScenarioModel() override;

    // Replaces the scenario (a file or lesson was opened) and clears the undo history.
    void setScenario(Scenario scenario);
    const Scenario& scenario() const { return m_scenario; }
    // The scenario as the core validated it (stream and event names resolved), ready to run; nullptr while the
    // scenario has an error.
    std::shared_ptr<const Scenario> validatedScenario() const { return m_validated; }
    QUndoStack* undoStack() const { return m_undoStack; }

    // Validation (up to date after every edit).
    const std::vector<ScenarioIssue>& issues() const { return m_issues; }
    std::optional<ScenarioIssue> error() const;
    std::vector<ScenarioIssue> issuesAt(const ScenarioItemRef& item) const;
    // The item and field a JSON path of the scenario names (paths outside devices/streams/threads: Settings).
    static ScenarioItemRef itemForPath(const QString& jsonPath, QString* field = nullptr);
    // The JSON path of an item ("/threads/0/ops/3"); "" for the scenario.
    static QString pathOf(const ScenarioItemRef& item);

    QModelIndex indexOf(const ScenarioItemRef& item, int column = 0) const;
    ScenarioItemRef itemAt(const QModelIndex& index) const;

    // Items (nullptr when the ref does not name one).
    const DeviceSpec* device(const ScenarioItemRef& item) const;
    const StreamSpec* stream(const ScenarioItemRef& item) const;
    const ThreadSpec* thread(const ScenarioItemRef& item) const;
    const Op* op(const ScenarioItemRef& item) const;
    ScenarioSettings settings() const;

    // ---- Editing: each call is one undo step; `field` names what changed (for the undo text, and so that
    // consecutive changes of one field of one item merge into one step).
    void setSettings(const ScenarioSettings& value, const QString& field);
    void setDevice(int device, const DeviceSpec& value, const QString& field);
    // Renaming a stream renames it in the ops that use it too.
    void setStream(int stream, const StreamSpec& value, const QString& field);
    // The thread's ops are kept (value.ops is ignored).
    void setThread(int thread, const ThreadSpec& value, const QString& field);
    // An op or graph node; a graph op's nodes are kept (value.ops is ignored) unless it stops being a graph.
    void setOp(const ScenarioItemRef& item, const Op& value, const QString& field);

    // New items with sensible defaults; they return the new item.
    ScenarioItemRef addDevice();
    // A stream on the device of `context` (a device, or a stream: inserted after it), else the first device.
    ScenarioItemRef addStream(const ScenarioItemRef& context = {});
    ScenarioItemRef addThread();
    // An op in the thread of `context` (a thread: appended; an op or graph node: after the op).
    ScenarioItemRef addOp(const ScenarioItemRef& context, OpKind kind);
    // A graph node in the graph op of `context` (the graph op: appended; a node: after it).
    ScenarioItemRef addGraphNode(const ScenarioItemRef& context, OpKind kind);
    static bool isGraphNodeKind(OpKind kind);

    bool canRemove(const ScenarioItemRef& item) const;
    bool remove(const ScenarioItemRef& item);
    // Moves an item among its siblings (delta -1: up, +1: down); returns where it went.
    bool canMove(const ScenarioItemRef& item, int delta) const;
    ScenarioItemRef move(const ScenarioItemRef& item, int delta);
    bool canDuplicate(const ScenarioItemRef& item) const;
    ScenarioItemRef duplicate(const ScenarioItemRef& item);

    // Replaces the whole scenario as one undo step (the quick controls). `quick` is kept with the step (and
    // restored by undo/redo); consecutive steps with the same non-empty `mergeKey` merge into one.
    void applyScenario(Scenario scenario, const QString& text, std::shared_ptr<const QuickState> quick = {},
                       const QString& mergeKey = {});
    // The quick controls' state of the current undo step; nullptr after any other edit.
    std::shared_ptr<const QuickState> quickState() const { return m_quick; }

    // A new op of `kind` with defaults that make sense in `thread` of the scenario. Its stream: that of the nearest
    // op above `position` (the index it will have; -1: the end) that has one, else the first stream of the
    // thread's device, else the first stream.
    static Op defaultOp(const Scenario& scenario, int thread, OpKind kind, int position = -1);
    // One-line description of an op: "kernel spin 100 µs · s1 · grid 66×256".
    static QString opSummary(const Op& op);

    // QAbstractItemModel
    QModelIndex index(int row, int column, const QModelIndex& parent = {}) const override;
    QModelIndex parent(const QModelIndex& child) const override;
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;
    Qt::ItemFlags flags(const QModelIndex& index) const override;

Q_SIGNALS:
    // After every change of the scenario (edit, undo, redo, setScenario); validation is up to date.
    void scenarioChanged();
    // The issues changed.
    void validationChanged();

private:
    struct Node;
    class Command;
    class SetCommand;
    class InsertCommand;
    class RemoveCommand;
    class MoveCommand;
    class ReplaceCommand;
    using ItemValue = std::variant<ScenarioSettings, DeviceSpec, StreamSpec, ThreadSpec, Op>;

    // Primitive changes, each with the model's notifications (used by the commands).
    void primSet(const ScenarioItemRef& item, const ItemValue& value);
    void primSetOpStreams(const std::vector<ScenarioItemRef>& ops, const std::string& stream);
    void primInsert(const ScenarioItemRef& at, const ItemValue& value);
    ItemValue primRemove(const ScenarioItemRef& item);
    ScenarioItemRef primMove(const ScenarioItemRef& item, int delta);
    void primReplace(const Scenario& scenario);
    void finishEdit();
    void pushCommand(QUndoCommand* command);

    ItemValue valueOf(const ScenarioItemRef& item) const;
    Op* mutableOp(const ScenarioItemRef& item);
    void rebuildNodes();
    void rebuildStreamRows();
    void renumberThreadNodes();
    Node* graphNode(int thread, int op) const;
    void syncGraphNode(int thread, int op);
    int deviceRowOfStream(const StreamSpec& stream) const;
    void revalidate();
    int issueSeverity(const QModelIndex& index) const;
    QString displayText(const ScenarioItemRef& item, int column) const;

    Scenario m_scenario;
    QUndoStack* m_undoStack = nullptr;
    std::vector<ScenarioIssue> m_issues;
    std::shared_ptr<const Scenario> m_validated;
    std::shared_ptr<const QuickState> m_quick;

    // Stable parents for internalPointer (a child index points at its parent's node, so that indexes survive edits).
    std::unique_ptr<Node> m_root, m_devicesGroup, m_threadsGroup;
    std::vector<std::unique_ptr<Node>> m_deviceNodes; // per device
    std::vector<std::unique_ptr<Node>> m_threadNodes; // per thread
    std::vector<std::vector<int>> m_deviceStreams;    // per device row: stream indices, in scenario order
    std::vector<int> m_streamDeviceRow, m_streamRow;  // per stream: its device row and row under it
    std::map<std::array<int, 4>, int> m_severity;     // item (type, a, b, c) -> 0 error, 1 warning (with ancestors)
};

} // namespace streamscope
