#include "scenario_editor.h"

#include "format.h"
#include "property_editor.h"
#include "quick_controls.h"
#include "theme.h"

#include <QAction>
#include <QEvent>
#include <QGridLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QMenu>
#include <QPushButton>
#include <QScrollArea>
#include <QSplitter>
#include <QStackedWidget>
#include <QStyle>
#include <QTextDocument>
#include <QToolBar>
#include <QToolButton>
#include <QTreeView>
#include <QVBoxLayout>

namespace streamscope {

namespace {

const OpKind kMenuKinds[] = {OpKind::Kernel,     OpKind::Memcpy,   OpKind::Memset,     OpKind::Record,
                             OpKind::Wait,       OpKind::HostFunc, OpKind::StreamSync, OpKind::EventSync,
                             OpKind::DeviceSync, OpKind::HostWork, OpKind::Graph,      OpKind::Malloc,
                             OpKind::Free};

} // namespace

ScenarioEditor::ScenarioEditor(ScenarioModel* model, QWidget* parent)
    : QWidget(parent), m_model(model), m_quick(new QuickControls), m_tree(new QTreeView),
      m_properties(new PropertyEditor), m_status(new QLabel), m_pages(new QStackedWidget), m_knobs(nullptr),
      m_toolbar(new QToolBar), m_embeddedNote(new QFrame),
      m_embeddedTitle(new QLabel(QStringLiteral("Scenario embedded in the trace (read-only)"))),
      m_embeddedText(new QLabel), m_editCopy(new QPushButton(QStringLiteral("Edit a copy"))),
      m_noScenarioText(new QLabel)
{
    m_quick->setModel(model);
    m_properties->setModel(model);

    m_tree->setModel(model);
    m_tree->setUniformRowHeights(true);
    m_tree->setAlternatingRowColors(true);
    m_tree->setSelectionMode(QAbstractItemView::SingleSelection);
    m_tree->header()->setSectionResizeMode(ScenarioModel::NameColumn, QHeaderView::Interactive);
    m_tree->header()->setStretchLastSection(true);
    m_tree->setColumnWidth(ScenarioModel::NameColumn, 170);
    m_tree->setContextMenuPolicy(Qt::ActionsContextMenu);

    // Actions
    QToolBar* toolbar = m_toolbar;
    toolbar->setIconSize(QSize(16, 16));
    toolbar->setToolButtonStyle(Qt::ToolButtonTextOnly);
    m_addMenu = new QMenu(QStringLiteral("Add"), this);
    QAction* addDevice = m_addMenu->addAction(QStringLiteral("GPU"));
    m_addStream = m_addMenu->addAction(QStringLiteral("Stream"));
    QAction* addThread = m_addMenu->addAction(QStringLiteral("Host thread"));
    m_addOpMenu = m_addMenu->addMenu(QStringLiteral("Operation"));
    m_addNodeMenu = m_addMenu->addMenu(QStringLiteral("Graph node"));
    for (OpKind k : kMenuKinds) {
        QAction* a = m_addOpMenu->addAction(qs(toString(k)) + QStringLiteral("\t") + qs(cudaApiName(k)));
        connect(a, &QAction::triggered, this, [this, k] { addOpOfKind(k, false); });
        if (ScenarioModel::isGraphNodeKind(k)) {
            QAction* n = m_addNodeMenu->addAction(qs(toString(k)));
            connect(n, &QAction::triggered, this, [this, k] { addOpOfKind(k, true); });
        }
    }
    connect(addDevice, &QAction::triggered, this, [this] { selectItem(m_model->addDevice()); });
    connect(m_addStream, &QAction::triggered, this, [this] { selectItem(m_model->addStream(currentItem())); });
    connect(addThread, &QAction::triggered, this, [this] { selectItem(m_model->addThread()); });
    auto* addButton = new QToolButton;
    addButton->setText(QStringLiteral("Add"));
    addButton->setMenu(m_addMenu);
    addButton->setPopupMode(QToolButton::InstantPopup);
    addButton->setToolTip(QStringLiteral("Add a GPU, stream, host thread, operation or graph node"));
    toolbar->addWidget(addButton);

    m_remove = new QAction(QStringLiteral("Remove"), this);
    m_remove->setShortcut(QKeySequence::Delete);
    m_remove->setShortcutContext(Qt::WidgetWithChildrenShortcut);
    m_up = new QAction(QStringLiteral("Up"), this);
    m_up->setToolTip(QStringLiteral("Move up (Ctrl+Up)"));
    m_up->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_Up));
    m_up->setShortcutContext(Qt::WidgetWithChildrenShortcut);
    m_down = new QAction(QStringLiteral("Down"), this);
    m_down->setToolTip(QStringLiteral("Move down (Ctrl+Down)"));
    m_down->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_Down));
    m_down->setShortcutContext(Qt::WidgetWithChildrenShortcut);
    m_duplicate = new QAction(QStringLiteral("Duplicate"), this);
    m_duplicate->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_D));
    m_duplicate->setShortcutContext(Qt::WidgetWithChildrenShortcut);
    for (QAction* a : {m_remove, m_up, m_down, m_duplicate}) {
        toolbar->addAction(a);
        m_tree->addAction(a);
    }
    connect(m_remove, &QAction::triggered, this, [this] {
        const ScenarioItemRef it = currentItem();
        m_model->remove(it);
    });
    connect(m_up, &QAction::triggered, this, [this] { selectItem(m_model->move(currentItem(), -1)); });
    connect(m_down, &QAction::triggered, this, [this] { selectItem(m_model->move(currentItem(), +1)); });
    connect(m_duplicate, &QAction::triggered, this, [this] { selectItem(m_model->duplicate(currentItem())); });

    m_status->setWordWrap(true);
    m_status->setTextInteractionFlags(Qt::TextSelectableByMouse | Qt::LinksAccessibleByMouse);
    connect(m_status, &QLabel::linkActivated, this,
            [this](const QString& link) { selectItem(ScenarioModel::itemForPath(link)); });

    // A scenario embedded in a trace: what it is, and the way to change it.
    m_embeddedNote->setObjectName(QStringLiteral("embeddedScenarioNote"));
    QLabel* embeddedTitle = m_embeddedTitle;
    QFont bold = embeddedTitle->font();
    bold.setBold(true);
    embeddedTitle->setFont(bold);
    embeddedTitle->setWordWrap(true);
    m_embeddedText->setWordWrap(true);
    m_embeddedText->setText(QStringLiteral("The scenario as it ran. Edit a copy to change it and run it again."));
    m_editCopy->setObjectName(QStringLiteral("editScenarioCopy"));
    m_editCopy->setToolTip(QStringLiteral("Make this scenario an ordinary, unsaved scenario to edit and run; the "
                                          "trace stays on the timeline until it runs"));
    connect(m_editCopy, &QPushButton::clicked, this, &ScenarioEditor::editCopyRequested);
    auto* noteLayout = new QGridLayout(m_embeddedNote);
    noteLayout->setContentsMargins(8, 4, 4, 4);
    noteLayout->setHorizontalSpacing(8);
    noteLayout->setVerticalSpacing(2);
    noteLayout->addWidget(embeddedTitle, 0, 0, 1, 2);
    noteLayout->addWidget(m_embeddedText, 1, 0);
    noteLayout->addWidget(m_editCopy, 1, 1, Qt::AlignBottom);
    noteLayout->setColumnStretch(0, 1);
    m_embeddedNote->hide();

    // Layout: knobs / tree / properties.
    auto* knobs = new QGroupBox(QStringLiteral("Quick controls"));
    m_knobs = knobs;
    auto* knobsLayout = new QVBoxLayout(knobs);
    knobsLayout->setContentsMargins(6, 4, 6, 4);
    knobsLayout->addWidget(m_quick);

    auto* treeHost = new QWidget;
    auto* treeLayout = new QVBoxLayout(treeHost);
    treeLayout->setContentsMargins(0, 0, 0, 0);
    treeLayout->setSpacing(2);
    treeLayout->addWidget(toolbar);
    treeLayout->addWidget(m_tree, 1);
    treeLayout->addWidget(m_status);

    auto* scroll = new QScrollArea;
    scroll->setWidget(m_properties);
    scroll->setWidgetResizable(true);
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff); // the form follows the dock's width
    scroll->setFrameShape(QFrame::NoFrame);

    auto* split = new QSplitter(Qt::Vertical);
    split->addWidget(treeHost);
    split->addWidget(scroll);
    split->setStretchFactor(0, 1);
    split->setStretchFactor(1, 1);
    split->setSizes({280, 360});
    split->setChildrenCollapsible(false);

    auto* editorPage = new QWidget;
    auto* editorLayout = new QVBoxLayout(editorPage);
    editorLayout->setContentsMargins(0, 0, 0, 0);
    editorLayout->addWidget(m_embeddedNote);
    editorLayout->addWidget(knobs);
    editorLayout->addWidget(split, 1);

    // A trace without a scenario: say so, rather than show an empty scenario and its validation error.
    auto* nonePage = new QWidget;
    auto* noneLayout = new QVBoxLayout(nonePage);
    noneLayout->setContentsMargins(8, 8, 8, 8);
    m_noScenarioText->setObjectName(QStringLiteral("noScenarioText"));
    m_noScenarioText->setWordWrap(true);
    m_noScenarioText->setTextFormat(Qt::RichText);
    m_noScenarioText->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_noScenarioText->setAlignment(Qt::AlignLeft | Qt::AlignTop);
    noneLayout->addWidget(m_noScenarioText);
    noneLayout->addStretch(1);

    m_pages->addWidget(editorPage);
    m_pages->addWidget(nonePage);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(m_pages, 1);

    connect(m_tree->selectionModel(), &QItemSelectionModel::currentChanged, this, [this](const QModelIndex& current) {
        m_properties->setCurrentIndex(current);
        updateActions();
    });
    connect(m_model, &ScenarioModel::modelAboutToBeReset, this, [this] { m_selectionBeforeReset = currentItem(); });
    connect(m_model, &ScenarioModel::modelReset, this, [this] {
        expandForScenario();
        const ScenarioItemRef again = m_selectionBeforeReset;
        selectItem(m_model->indexOf(again).isValid() ? again : ScenarioItemRef::settings());
    });
    connect(m_model, &ScenarioModel::rowsInserted, this, [this](const QModelIndex& into) { m_tree->expand(into); });
    connect(m_model, &ScenarioModel::scenarioChanged, this, [this] {
        updateActions();
        updateStatus();
    });
    expandForScenario();
    updateActions();
    updateStatus();
}

void ScenarioEditor::setMode(Mode mode, const QString& detail)
{
    m_mode = mode;
    const bool readOnly = mode != Mode::Editable;
    m_pages->setCurrentIndex(mode == Mode::NoScenario ? 1 : 0);
    m_embeddedNote->setVisible(mode == Mode::EmbeddedInTrace);
    if (mode == Mode::EmbeddedInTrace)
        applyNoticeColors();
    m_noScenarioText->setText(mode == Mode::NoScenario
                                  ? QStringLiteral("<p><b>This trace carries no scenario</b></p><p>")
                                      + detail.toHtmlEscaped() + QStringLiteral("</p>")
                                  : QString());
    // Read-only: the tree and the fields stay to read; the knobs and editing actions, which would only be greyed
    // out, make room for them.
    m_knobs->setVisible(!readOnly);
    m_toolbar->setVisible(!readOnly);
    m_properties->setReadOnly(readOnly);
    m_status->setVisible(!readOnly);
    updateActions();
}

QString ScenarioEditor::noticeText() const
{
    switch (m_mode) {
    case Mode::Editable: return {};
    case Mode::EmbeddedInTrace: return m_embeddedTitle->text() + QLatin1Char('\n') + m_embeddedText->text();
    case Mode::NoScenario: {
        QTextDocument doc;
        doc.setHtml(m_noScenarioText->text());
        return doc.toPlainText().trimmed();
    }
    }
    return {};
}

void ScenarioEditor::applyNoticeColors()
{
    // The info tint of the window's notices (notice_bar.cpp), light or dark with the palette.
    const ThemeBox& box = Theme::of(this).notice;
    m_embeddedNote->setStyleSheet(QStringLiteral("#embeddedScenarioNote { background:%1; border:1px solid %2; } "
                                                 "#embeddedScenarioNote QLabel { color:%3; }")
                                      .arg(box.background.name(), box.border.name(), box.text.name()));
}

void ScenarioEditor::changeEvent(QEvent* event)
{
    QWidget::changeEvent(event);
    if (!isThemeChange(event))
        return;
    if (m_mode == Mode::EmbeddedInTrace)
        applyNoticeColors();
    updateStatus();
}

ScenarioItemRef ScenarioEditor::currentItem() const
{
    return m_model->itemAt(m_tree->currentIndex());
}

void ScenarioEditor::selectItem(const ScenarioItemRef& item)
{
    const QModelIndex index = m_model->indexOf(item);
    if (!index.isValid())
        return;
    m_tree->setCurrentIndex(index);
    m_tree->scrollTo(index);
    m_properties->setCurrentIndex(index);
}

void ScenarioEditor::expandForScenario()
{
    // Everything for a lesson-sized scenario; only devices and threads for a big one.
    const Scenario& s = m_model->scenario();
    size_t ops = 0;
    for (const auto& t : s.threads)
        ops += t.ops.size();
    if (ops <= 400)
        m_tree->expandAll();
    else
        m_tree->expandToDepth(0);
}

void ScenarioEditor::addOpOfKind(OpKind kind, bool graphNode)
{
    ScenarioItemRef context = currentItem();
    if (!context.isValid() || (context.type != ScenarioItemType::Thread && !context.isOp()))
        context = ScenarioItemRef::thread(0);
    const ScenarioItemRef added = graphNode ? m_model->addGraphNode(context, kind) : m_model->addOp(context, kind);
    selectItem(added);
}

void ScenarioEditor::updateActions()
{
    if (isReadOnly()) {
        for (QAction* a : {m_remove, m_up, m_down, m_duplicate})
            a->setEnabled(false);
        m_addMenu->menuAction()->setEnabled(false);
        return;
    }
    m_addMenu->menuAction()->setEnabled(true);
    const ScenarioItemRef it = currentItem();
    m_remove->setEnabled(m_model->canRemove(it));
    m_up->setEnabled(m_model->canMove(it, -1));
    m_down->setEnabled(m_model->canMove(it, +1));
    m_duplicate->setEnabled(m_model->canDuplicate(it));
    m_addStream->setEnabled(!m_model->scenario().devices.empty());
    m_addOpMenu->setEnabled(!m_model->scenario().threads.empty());
    bool inGraph = false;
    if (it.isOp())
        if (const Op* g = m_model->op(ScenarioItemRef::op(it.a, it.b)))
            inGraph = g->kind == OpKind::Graph;
    m_addNodeMenu->setEnabled(inGraph);
}

void ScenarioEditor::updateStatus()
{
    const auto& issues = m_model->issues();
    int errors = 0, warnings = 0;
    for (const auto& i : issues)
        (i.severity == ScenarioIssue::Severity::Error ? errors : warnings) += 1;
    const Theme& theme = Theme::of(this);
    if (issues.empty()) {
        m_status->setText(
            QStringLiteral("<span style='color:%1'>✔ The scenario is valid.</span>").arg(theme.pass.name()));
        return;
    }
    // The first problem, linked to its item.
    const ScenarioIssue& first = issues.front();
    const QString color = (first.severity == ScenarioIssue::Severity::Error ? theme.fail : theme.warning).name();
    const QString where = first.path.isEmpty() ? QStringLiteral("scenario") : first.path;
    QString text =
        QStringLiteral("<span style='color:%1'>%2 <a href='%3'>%4</a>: %5</span>")
            .arg(color, first.severity == ScenarioIssue::Severity::Error ? QStringLiteral("✖") : QStringLiteral("⚠"),
                 first.path.toHtmlEscaped(), where.toHtmlEscaped(), first.message.toHtmlEscaped());
    if (issues.size() > 1)
        text += QStringLiteral(" <span style='color:%1'>(%2 errors, %3 warnings in all)</span>")
                    .arg(theme.faint.name())
                    .arg(errors)
                    .arg(warnings);
    m_status->setText(text);
}

} // namespace streamscope
