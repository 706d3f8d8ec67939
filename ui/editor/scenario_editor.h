// The scenario editor dock: quick controls on top, the scenario tree with its editing actions (add, remove, move
// up/down, duplicate), the validation status, and the property editor of the selected item. What it shows depends
// on where the scenario comes from (Mode): one to edit (a scenario file, a lesson, a new one); the one a StreamScope
// trace embeds, read-only under a note with "Edit a copy"; or none, for a trace imported from another tool, which
// has no scenario to show, edit or run.
#pragma once

#include "scenario_model.h"

#include <QWidget>

class QAction;
class QFrame;
class QLabel;
class QMenu;
class QPushButton;
class QStackedWidget;
class QToolBar;
class QToolButton;
class QTreeView;

namespace streamscope {

class PropertyEditor;
class QuickControls;

class ScenarioEditor : public QWidget {
    Q_OBJECT
public:
    enum class Mode {
        Editable,        // the scenario is the document
        EmbeddedInTrace, // the scenario a trace was run from, shown read-only; editCopyRequested turns it editable
        NoScenario,      // the trace carries none: a page that says so instead of an empty, invalid scenario
    };

    explicit ScenarioEditor(ScenarioModel* model, QWidget* parent = nullptr);

    // `detail`: NoScenario's explanation under its title (where the trace came from, what to do instead).
    void setMode(Mode mode, const QString& detail = {});
    Mode mode() const { return m_mode; }
    bool isReadOnly() const { return m_mode != Mode::Editable; }
    // The note above a read-only scenario, or the page of NoScenario, as plain text (empty when Editable).
    QString noticeText() const;
    QPushButton* editCopyButton() const { return m_editCopy; }

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

Q_SIGNALS:
    // "Edit a copy" was clicked on a scenario embedded in a trace.
    void editCopyRequested();

protected:
    void changeEvent(QEvent* event) override; // a new palette: the theme's colours

private:
    void updateActions();
    void updateStatus();
    void expandForScenario();
    void addOpOfKind(OpKind kind, bool graphNode);
    void applyNoticeColors();

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
    Mode m_mode = Mode::Editable;
    QStackedWidget* m_pages;
    QWidget* m_knobs;
    QToolBar* m_toolbar;
    QFrame* m_embeddedNote;
    QLabel* m_embeddedTitle;
    QLabel* m_embeddedText;
    QPushButton* m_editCopy;
    QLabel* m_noScenarioText;
};

} // namespace streamscope
