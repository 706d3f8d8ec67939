// The lesson gallery dock: the shipped lessons (resources/presets) with their title, the text saying what to look
// for and their contrasting variants; opening one loads it into the editor and runs it.
#pragma once

#include <QAbstractListModel>
#include <QStringList>
#include <QWidget>

#include <vector>

class QComboBox;
class QListView;
class QPushButton;
class QTextBrowser;

namespace streamscope {

struct LessonEntry {
    QString id; // "01-two-streams"
    QString title;
    QString description;
    QString path;
    QStringList variantIds, variantTitles, variantDescriptions;
};

// The lessons, one row each (read once, when constructed).
class LessonListModel : public QAbstractListModel {
    Q_OBJECT
public:
    enum Role {
        IdRole = Qt::UserRole + 1,
        TitleRole,
        DescriptionRole,
        PathRole,
        VariantIdsRole,    // QStringList
        VariantTitlesRole, // QStringList
    };
    explicit LessonListModel(QObject* parent = nullptr);
    void reload();
    const std::vector<LessonEntry>& lessons() const { return m_lessons; }
    // Row of a lesson by id ("01-two-streams") or number ("01", "1"), or -1.
    int rowOf(const QString& idOrNumber) const;

    int rowCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;

private:
    std::vector<LessonEntry> m_lessons;
};

class LessonGallery : public QWidget {
    Q_OBJECT
public:
    explicit LessonGallery(QWidget* parent = nullptr);
    LessonListModel* model() const { return m_model; }
    // Highlights the lesson that is open (by id or number); none for an empty or unknown one.
    void setCurrentLesson(const QString& idOrNumber, const QString& variant = {});
    // No lesson is open (a new scenario, a file): none highlighted.
    void clearCurrentLesson();
    QString selectedLesson() const;
    QString selectedVariant() const;

Q_SIGNALS:
    void openRequested(const QString& lessonId, const QString& variant);

private:
    void showSelected();
    LessonListModel* m_model;
    QListView* m_list;
    QTextBrowser* m_text;
    QComboBox* m_variant;
    QPushButton* m_open;
};

} // namespace streamscope
