// The property editor: the fields of the item selected in the scenario tree (scenario settings, device, stream,
// host thread, operation or graph node) as combo boxes, spin boxes and line edits. Each change is one undoable
// edit through the ScenarioModel; the core's validation message for a field is shown right under it.
#pragma once

#include "scenario_model.h"

#include <QPersistentModelIndex>
#include <QWidget>

#include <functional>
#include <vector>

class QFormLayout;
class QLabel;
class QPlainTextEdit;

namespace streamscope {

class PropertyEditor : public QWidget {
    Q_OBJECT
public:
    explicit PropertyEditor(QWidget* parent = nullptr);
    void setModel(ScenarioModel* model);
    // The item to edit: an index of the model (the tree's current index).
    void setCurrentIndex(const QModelIndex& index);
    ScenarioItemRef item() const;
    // Shows the fields without letting them change (a scenario embedded in a trace): text stays selectable.
    void setReadOnly(bool readOnly);
    bool isReadOnly() const { return m_readOnly; }

    // For tests: the editor widget of a field by its JSON name ("stream", "duration_us", "run/warmup"), and the
    // validation message shown under it (empty when none).
    QWidget* fieldEditor(const QString& key) const;
    QString fieldMessage(const QString& key) const;
    // Messages about the item that belong to no field shown.
    QString itemMessage() const;
    QStringList fieldKeys() const;
    // The form's header: what it edits ("Stream s1", "Operation matmul").
    QString header() const;

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;
    void changeEvent(QEvent* event) override; // a new palette: the messages in the theme's colours

private:
    struct Field {
        QString key;
        QWidget* editor = nullptr;
        QLabel* message = nullptr;
        std::function<void()> load; // shows the model's value (signals blocked)
    };

    void rebuild();
    void refresh();
    void applyReadOnly();
    QString signature() const;
    void addField(const QString& key, const QString& label, QWidget* editor, std::function<void()> load);
    void buildSettings();
    void buildDevice();
    void buildStream();
    void buildThread();
    void buildOp();
    // The current op (a default one once it is gone), and an edit of it as one undo step named by the field.
    using OpGetter = std::function<const Op&()>;
    using OpEditor = std::function<void(const QString& field, const std::function<void(Op&)>& change)>;
    void buildKernelFields(const Op& op, const OpGetter& get, const OpEditor& edit);
    void buildCopyFields(const Op& op, const OpGetter& get, const OpEditor& edit);

    // Editors bound to a getter and a setter of the current item; the setter runs only on a real change.
    void addText(const QString& key, const QString& label, std::function<QString()> get,
                 std::function<void(const QString&)> set, const QString& placeholder = {});
    void addInt(const QString& key, const QString& label, int min, int max, std::function<int()> get,
                std::function<void(int)> set, const QString& suffix = {}, const QString& specialValue = {});
    void addNumber(const QString& key, const QString& label, double min, double max, int decimals,
                   std::function<double()> get, std::function<void(double)> set, const QString& suffix = {});
    void addChoice(const QString& key, const QString& label, const std::vector<std::pair<QString, QVariant>>& items,
                   std::function<QVariant()> get, std::function<void(const QVariant&)> set, bool editable = false);
    void addBytes(const QString& key, const QString& label, std::function<int64_t()> get,
                  std::function<void(int64_t)> set);
    void addDim3(const QString& key, const QString& label, std::function<Dim3()> get, std::function<void(Dim3)> set);

    void editOp(const QString& field, const std::function<void(Op&)>& change);
    QString itemHeader() const;
    std::vector<std::pair<QString, QVariant>> deviceChoices() const;
    std::vector<std::pair<QString, QVariant>> streamChoices() const;
    std::vector<std::pair<QString, QVariant>> eventChoices() const;

    ScenarioModel* m_model = nullptr;
    QPersistentModelIndex m_index;
    QString m_builtSignature;
    QLabel* m_header;
    QLabel* m_itemMessage;
    QWidget* m_formHost = nullptr;
    QFormLayout* m_form = nullptr;
    QPlainTextEdit* m_description = nullptr;
    std::vector<Field> m_fields;
    bool m_readOnly = false;
};

} // namespace streamscope
