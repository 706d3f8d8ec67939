// The table of spans: one row per span of a trace (row = span index), sortable and filterable through
// SpanTableProxy (a QSortFilterProxyModel that sorts by the numbers, not the text shown). The Name column shows the
// short name (span_display_names.h), its tooltip the full demangled one.
#pragma once

#include "ranges.h"
#include "span_display_names.h"

#include <QAbstractTableModel>
#include <QSortFilterProxyModel>

#include <memory>
#include <vector>

namespace streamscope {

class Trace;

class SpanTableModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column {
        NameColumn,
        KindColumn,
        TrackColumn,
        StartColumn, // relative to the trace's first span, as on the timeline
        DurationColumn,
        EndColumn,
        OriginColumn, // host thread / op / iteration of the scenario
        BytesColumn,
        GridColumn,
        LaunchedByColumn, // the op (range) whose runtime call launched a GPU span, or a call was made in (ranges.h)
        ColumnCount
    };
    enum Role {
        SortRole = Qt::UserRole + 1, // numbers for the numeric columns
        SpanIndexRole,               // the span's index in the trace
    };

    explicit SpanTableModel(QObject* parent = nullptr);
    ~SpanTableModel() override;

    // `launchingOps`: launchingOps(*trace) computed beforehand; null: computed now.
    void setTrace(std::shared_ptr<const Trace> trace,
                  std::shared_ptr<const std::vector<uint32_t>> launchingOps = nullptr);
    const std::shared_ptr<const Trace>& trace() const { return m_trace; }

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    std::shared_ptr<const Trace> m_trace;
    SpanDisplayNames m_names;
    int64_t m_origin = 0;
    std::shared_ptr<const std::vector<uint32_t>> m_launchOp; // per span: LaunchOrigin::op
};

// The span table grouped: GPU time by the op that launched it (gpuTimeByLaunchingOp), most first. One row per op
// name; GPU work whose launch was made in no op is the row "(no op)".
class OpGpuTimeModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { OpColumn, SpansColumn, GpuTimeColumn, ShareColumn, ColumnCount };
    enum Role { SortRole = Qt::UserRole + 1 };

    explicit OpGpuTimeModel(QObject* parent = nullptr);
    ~OpGpuTimeModel() override;
    // `rows`: gpuTimeByLaunchingOp(*trace) computed beforehand; null: computed now.
    void setTrace(const std::shared_ptr<const Trace>& trace,
                  std::shared_ptr<const std::vector<OpGpuTime>> rows = nullptr);

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    std::vector<OpGpuTime> m_rows;
    int64_t m_totalNs = 0;
};

// Sorting by SortRole and filtering by a text that must occur in the name, kind or track.
class SpanTableProxy : public QSortFilterProxyModel {
    Q_OBJECT
public:
    explicit SpanTableProxy(QObject* parent = nullptr);
    // Rows whose name (the short or the full demangled one), kind or stream/thread contains `text`
    // (case-insensitive); empty: all rows.
    void setFilterText(const QString& text);
    QString filterText() const { return m_filterText; }
    // The proxy row of a span, or -1 when it is filtered out.
    int rowOfSpan(int span) const;
    int spanAtRow(int row) const;

protected:
    bool filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const override;

private:
    QString m_filterText;
};

} // namespace streamscope
