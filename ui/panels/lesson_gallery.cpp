#include "lesson_gallery.h"

#include "format.h"
#include "resources.h"
#include "scenario_json.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QListView>
#include <QPushButton>
#include <QSplitter>
#include <QTextBrowser>
#include <QVBoxLayout>

namespace streamscope {

LessonListModel::LessonListModel(QObject* parent) : QAbstractListModel(parent)
{
    reload();
}

void LessonListModel::reload()
{
    beginResetModel();
    m_lessons.clear();
    for (const PresetInfo& p : listPresets()) {
        LessonEntry e;
        e.id = qs(p.id);
        e.title = qs(p.title);
        e.path = qs(p.path);
        if (auto loaded = loadScenarioFile(p.path)) {
            const Scenario& s = loaded->scenario;
            e.description = qs(s.description);
            for (const Variant& v : s.variants) {
                e.variantIds << qs(v.id);
                e.variantTitles << (v.title.empty() ? qs(v.id) : qs(v.title));
                e.variantDescriptions << qs(v.description);
            }
        } else {
            e.description = QStringLiteral("This lesson cannot be read: ") + qs(loaded.error().toString());
        }
        m_lessons.push_back(std::move(e));
    }
    endResetModel();
}

int LessonListModel::rowOf(const QString& idOrNumber) const
{
    for (size_t i = 0; i < m_lessons.size(); ++i) {
        const QString& id = m_lessons[i].id;
        if (id == idOrNumber)
            return int(i);
        // "01" or "1": the number the id starts with; "two-streams": the id without its number.
        bool isNumber = false;
        const int n = idOrNumber.toInt(&isNumber);
        if (isNumber && id.section(QLatin1Char('-'), 0, 0).toInt() == n)
            return int(i);
        if (!isNumber && id.section(QLatin1Char('-'), 1) == idOrNumber)
            return int(i);
    }
    return -1;
}

int LessonListModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : int(m_lessons.size());
}

QVariant LessonListModel::data(const QModelIndex& index, int role) const
{
    if (!index.isValid() || index.row() < 0 || size_t(index.row()) >= m_lessons.size())
        return {};
    const LessonEntry& e = m_lessons[size_t(index.row())];
    switch (role) {
    case Qt::DisplayRole: return QString(e.id.section(QLatin1Char('-'), 0, 0) + QStringLiteral("  ") + e.title);
    case Qt::ToolTipRole: return e.description;
    case IdRole: return e.id;
    case TitleRole: return e.title;
    case DescriptionRole: return e.description;
    case PathRole: return e.path;
    case VariantIdsRole: return e.variantIds;
    case VariantTitlesRole: return e.variantTitles;
    default: return {};
    }
}

LessonGallery::LessonGallery(QWidget* parent)
    : QWidget(parent), m_model(new LessonListModel(this)), m_list(new QListView), m_text(new QTextBrowser),
      m_variant(new QComboBox), m_open(new QPushButton(QStringLiteral("Open lesson")))
{
    m_list->setModel(m_model);
    m_list->setWordWrap(true);
    m_list->setUniformItemSizes(false);
    m_list->setAlternatingRowColors(true);
    m_list->setSpacing(1);
    m_text->setOpenLinks(false);
    m_variant->setToolTip(QStringLiteral("Each lesson has a contrasting variant that breaks the rule it teaches"));

    auto* openRow = new QHBoxLayout;
    openRow->addWidget(new QLabel(QStringLiteral("Variant:")));
    openRow->addWidget(m_variant, 1);
    openRow->addWidget(m_open);

    auto* bottom = new QWidget;
    auto* bottomLayout = new QVBoxLayout(bottom);
    bottomLayout->setContentsMargins(0, 0, 0, 0);
    bottomLayout->addWidget(m_text, 1);
    bottomLayout->addLayout(openRow);

    auto* split = new QSplitter(Qt::Vertical);
    split->addWidget(m_list);
    split->addWidget(bottom);
    split->setStretchFactor(0, 1);
    split->setStretchFactor(1, 1);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(split);

    connect(m_list->selectionModel(), &QItemSelectionModel::currentChanged, this, &LessonGallery::showSelected);
    connect(m_variant, &QComboBox::currentIndexChanged, this, &LessonGallery::showSelected);
    const auto openSelected = [this] {
        if (!selectedLesson().isEmpty())
            Q_EMIT openRequested(selectedLesson(), selectedVariant());
    };
    connect(m_list, &QListView::activated, this, [this] { Q_EMIT openRequested(selectedLesson(), {}); });
    connect(m_open, &QPushButton::clicked, this, openSelected);
    // Picking a variant opens it (the combo changed by setCurrentLesson opens nothing: activated is the user's).
    connect(m_variant, &QComboBox::activated, this, openSelected);
    // Nothing is highlighted until a lesson is open or picked: the window may show a new scenario or a file.
    showSelected();
}

void LessonGallery::clearCurrentLesson()
{
    m_list->selectionModel()->clear();
    m_list->setCurrentIndex({});
    showSelected();
}

void LessonGallery::setCurrentLesson(const QString& idOrNumber, const QString& variant)
{
    const int row = m_model->rowOf(idOrNumber);
    if (row < 0) {
        clearCurrentLesson(); // no lesson (or none of these) is open
        return;
    }
    m_list->setCurrentIndex(m_model->index(row));
    const int v = m_variant->findData(variant);
    m_variant->setCurrentIndex(v >= 0 ? v : 0);
}

QString LessonGallery::selectedLesson() const
{
    return m_list->currentIndex().data(LessonListModel::IdRole).toString();
}

QString LessonGallery::selectedVariant() const
{
    return m_variant->currentData().toString();
}

void LessonGallery::showSelected()
{
    const QModelIndex index = m_list->currentIndex();
    const int row = index.row();
    m_open->setEnabled(row >= 0);
    if (row < 0) {
        const QSignalBlocker block(m_variant);
        m_variant->clear();
        m_variant->setProperty("lesson", QString());
        m_text->setHtml(QStringLiteral("<p>Pick a lesson to read what it shows; double-click it or press <b>Open "
                                       "lesson</b> to open it, or pick one of its variants.</p>"));
        return;
    }
    const LessonEntry& e = m_model->lessons()[size_t(row)];
    // The variant list follows the selected lesson.
    if (m_variant->property("lesson").toString() != e.id) {
        const QSignalBlocker block(m_variant);
        m_variant->clear();
        m_variant->addItem(QStringLiteral("The lesson as written"), QString());
        for (qsizetype i = 0; i < e.variantIds.size(); ++i)
            m_variant->addItem(e.variantTitles[i], e.variantIds[i]);
        m_variant->setProperty("lesson", e.id);
    }
    QString h = QStringLiteral("<h3 style='margin-bottom:4px'>") + e.title.toHtmlEscaped() + QStringLiteral("</h3><p>")
        + e.description.toHtmlEscaped() + QStringLiteral("</p>");
    if (!e.variantIds.isEmpty()) {
        h += QStringLiteral("<p style='margin-bottom:2px'><b>Variants</b></p><ul style='margin-top:0'>");
        for (qsizetype i = 0; i < e.variantIds.size(); ++i)
            h += QStringLiteral("<li><b>") + e.variantTitles[i].toHtmlEscaped() + QStringLiteral("</b>: ")
                + e.variantDescriptions[i].toHtmlEscaped() + QStringLiteral("</li>");
        h += QStringLiteral("</ul>");
    }
    m_text->setHtml(h);
}

} // namespace streamscope
