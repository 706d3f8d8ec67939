// The scenario editor dock: quick controls on top, the scenario tree with its editing actions (add, remove, move
// up/down, duplicate), the validation status, and the property editor of the selected item.
#pragma once

#include "scenario_model.h"

#include <QWidget>

class QAction;
class QLabel;
class QMenu;
class QToolButton;
class QTreeView;

namespace streamscope {

class PropertyEditor;
class QuickControls;

class ScenarioEditor : public QWidget {
    Q_OBJECT
public:
    explicit ScenarioEditor(ScenarioModel* model, QWidget* parent = nullptr);

    QTreeView* tree() const { return m_tree; }
    PropertyEditor* propertyEditor() const { return m_properties; }
    QuickControls* quickControls() const { return m_quick; }
    ScenarioItemRef currentItem() const;
    void selectItem(const ScenarioItemRef& item);

    QAction* removeAction() const { return m_remove; }
    QAction* moveUpAction() const { return m_up; }
    QAction* moveDownAction() const { return m_down; }
    QAction* duplicateAction() const { return m_duplicate; }
    QMenu* addMenu() const { return m_addMenu; }

private:
    void updateActions();
    void updateStatus();
    void expandForScenario();
    void addOpOfKind(OpKind kind, bool graphNode);

    ScenarioModel* m_model;
    QuickControls* m_quick;
    QTreeView* m_tree;
    PropertyEditor* m_properties;
    QLabel* m_status;
    QMenu* m_addMenu;
    QMenu* m_addOpMenu;
    QMenu* m_addNodeMenu;
    QAction* m_addStream;
    QAction* m_remove;
    QAction* m_up;
    QAction* m_down;
    QAction* m_duplicate;
    ScenarioItemRef m_selectionBeforeReset;
};

} // namespace streamscope
