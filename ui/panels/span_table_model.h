// The table of spans: one row per span of a trace (row = span index), sortable and filterable through
// SpanTableProxy (which sorts by the numbers, not the text shown). The Name column shows the short name
// (span_display_names.h), its tooltip the full demangled one.
#pragma once

#include "ranges.h"
#include "span_display_names.h"

#include <QAbstractProxyModel>
#include <QAbstractTableModel>

#include <atomic>
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

    // What the rows are made of, shared with a worker thread: the trace and each span's launching op, neither
    // changed once set (a new trace replaces them).
    struct Source {
        std::shared_ptr<const Trace> trace;
        std::shared_ptr<const std::vector<uint32_t>> launchOp;
    };
    Source source() const { return {m_trace, m_launchOp}; }

    // For SpanTableProxy, without a QVariant per row (bench_window, 10 M spans: sorted in 0.9 s of CPU, filtered
    // in 0.3 s): the spans whose name (short or full), kind, stream/thread or launching op contains `text`
    // (case-insensitive), in span order; and `spans` ordered by `column` as SortRole orders them (numbers as
    // numbers, names as text), ties kept in the order given. Safe on any thread: each call names the spans with a
    // SpanDisplayNames of its own. `cancel`, where given and set meanwhile (a newer request, another trace), stops
    // either early: spansMatching then returns what it found so far, sortSpans returns false with `spans` in an
    // order of no meaning.
    static std::vector<uint32_t> spansMatching(const Source& source, const QString& text,
                                               const std::atomic<bool>* cancel = nullptr);
    static bool sortSpans(const Source& source, std::vector<uint32_t>& spans, int column, Qt::SortOrder order,
                          const std::atomic<bool>* cancel = nullptr);

private:
    uint32_t launchingOp(uint32_t span) const;
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

// The span table's rows sorted (by SortRole's order) and filtered (by a text that must occur in the name, kind,
// stream/thread or launching op) over a SpanTableModel. Unsorted and unfiltered it is the model's rows as they are and
// holds nothing (QSortFilterProxyModel maps every row both ways: 0.7 s on the GUI thread at 10 M spans); sorted or
// filtered it holds the rows' spans in order, and the reverse map once asked for.
// More rows than a page (kPageRows) are shown a page at a time: a view keeps per-row state for every row it is given
// (QHeaderView 8 bytes a row, set up on the GUI thread: 3 s and 0.8 GB at 100 M spans), so it is given one page.
// Rows below are the page's; rowOfSpan is -1 for a span on another page (pageOfSpan says which).
// A trace of kAsyncRows spans or more is sorted and filtered on a worker thread (a sort takes about 0.1 s at 1 M spans
// and took 9 s at 100 M: from about 200 thousand on it would hold the GUI thread longer than a frame or two): until
// its rows are ready (isUpdating()), the table shows the rows it showed, and the newest request wins.
class SpanTableProxy : public QAbstractProxyModel {
    Q_OBJECT
public:
    static constexpr int kPageRows = 1'000'000;
    static constexpr qsizetype kAsyncRows = 200'000;
    explicit SpanTableProxy(QObject* parent = nullptr);
    ~SpanTableProxy() override;
    // A SpanTableModel (another model shows no rows).
    void setSourceModel(QAbstractItemModel* model) override;
    // Rows whose name (the short or the full demangled one), kind, stream/thread or launching op contains `text`
    // (case-insensitive); empty: all rows.
    void setFilterText(const QString& text);
    QString filterText() const { return m_filterText; }
    // Column -1: the model's order.
    void sort(int column, Qt::SortOrder order = Qt::AscendingOrder) override;
    int sortColumn() const { return m_sortColumn; }
    Qt::SortOrder sortOrder() const { return m_sortOrder; }
    // The proxy row of a span (on the page shown), or -1 when it is filtered out or on another page.
    int rowOfSpan(int span) const;
    int spanAtRow(int row) const;

    // Pages: the sorted and filtered rows kPageRows (or setPageRows') at a time. A new filter, sort or trace shows
    // the first page.
    qsizetype totalRows() const; // on every page
    int pageCount() const;
    int page() const { return m_page; }
    qsizetype firstRowOfPage() const { return qsizetype(m_page) * m_pageRows; }
    void setPage(int page);                        // clamped; a model reset when it changes
    int pageOfSpan(int span) const;                // -1: filtered out
    void setPageRows(int rows);                    // for tests: pages of fewer rows
    bool isUpdating() const { return m_updating; } // a worker sorts or filters the rows
    void setAsyncRows(qsizetype rows);             // for tests: a worker from this many spans on

    QModelIndex index(int row, int column, const QModelIndex& parent = {}) const override;
    QModelIndex parent(const QModelIndex& child) const override;
    bool hasChildren(const QModelIndex& parent = {}) const override;
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QModelIndex mapToSource(const QModelIndex& proxyIndex) const override;
    QModelIndex mapFromSource(const QModelIndex& sourceIndex) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    bool identityAsked() const { return !m_spans || (m_filterText.isEmpty() && m_sortColumn < 0); }
    // The rows for the filter and sort now: set at once, or (a big trace) asked of a worker and set when they come,
    // as a layout change. Inside a model reset (`inReset`) rows set at once need no layout change.
    void requestRows(bool inReset);
    void stopWorker(); // the rows a worker makes for the latest request are of no use any more
    void setRows(bool identity, std::vector<uint32_t> rows); // the first page shown
    // setRows() as a layout change that keeps the views' selection on its spans.
    void changeRows(bool identity, std::vector<uint32_t> rows);
    int logicalRowOfSpan(int span) const; // over every page
    int spanAtLogicalRow(qsizetype row) const;
    const SpanTableModel* m_spans = nullptr;
    QString m_filterText;
    int m_sortColumn = -1;
    Qt::SortOrder m_sortOrder = Qt::AscendingOrder;
    bool m_identity = true;               // neither filtered nor sorted: row = span
    std::vector<uint32_t> m_rows;         // otherwise: the span of each row
    mutable std::vector<int32_t> m_rowOf; // the row of each span (-1: filtered out), built when first asked for
    std::vector<QMetaObject::Connection> m_connections;
    int m_page = 0;
    int m_pageRows = kPageRows;
    qsizetype m_asyncRows = kAsyncRows;
    bool m_updating = false;
    quint64 m_generation = 0; // of the latest request for rows (a worker's older rows are dropped)
    // Set to stop the worker making the rows of the latest request, once a newer one (or the proxy's end) makes
    // them of no use: a sort of 100 M spans holds the trace and 3 GB for 10 s.
    std::shared_ptr<std::atomic<bool>> m_cancel;

Q_SIGNALS:
    void pageChanged(); // the page, or how many there are, or isUpdating()
    void rowsReady();   // the rows of the latest filter and sort are shown
};

} // namespace streamscope
