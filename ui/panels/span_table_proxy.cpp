// SPDX-FileCopyrightText: StreamScope contributors
// SpanTableProxy (span_table_model.h): the span table's rows sorted and filtered by SpanTableModel's typed helpers.
#include "span_table_model.h"

#include "trace.h"
#include "worker.h"

#include <algorithm>
#include <numeric>

namespace streamscope {

namespace {

// The spans matching `filter` (all when empty), sorted by `column` (-1: in span order).
// Stopped by `cancel` (where given), the rows are of no use: the request that set it drops them.
std::vector<uint32_t> rowsFor(const SpanTableModel::Source& source, const QString& filter, int column,
                              Qt::SortOrder order, const std::atomic<bool>* cancel = nullptr)
{
    std::vector<uint32_t> rows;
    if (filter.isEmpty()) {
        rows.resize(source.trace ? size_t(source.trace->spanCount()) : 0);
        std::iota(rows.begin(), rows.end(), 0u);
    } else {
        rows = SpanTableModel::spansMatching(source, filter, cancel);
    }
    if (column >= 0)
        SpanTableModel::sortSpans(source, rows, column, order, cancel);
    return rows;
}

} // namespace

SpanTableProxy::SpanTableProxy(QObject* parent) : QAbstractProxyModel(parent) {}

SpanTableProxy::~SpanTableProxy()
{
    stopWorker();
}

void SpanTableProxy::stopWorker()
{
    if (m_cancel)
        *m_cancel = true;
    m_cancel.reset();
}

void SpanTableProxy::setSourceModel(QAbstractItemModel* model)
{
    beginResetModel();
    for (const QMetaObject::Connection& c : m_connections)
        disconnect(c);
    m_connections.clear();
    QAbstractProxyModel::setSourceModel(model);
    m_spans = qobject_cast<const SpanTableModel*>(model);
    if (m_spans) {
        // SpanTableModel changes only by a reset (a new trace): the rows are rebuilt with the filter and sort kept.
        m_connections.push_back(
            connect(m_spans, &QAbstractItemModel::modelAboutToBeReset, this, [this] { beginResetModel(); }));
        m_connections.push_back(connect(m_spans, &QAbstractItemModel::modelReset, this, [this] {
            requestRows(true);
            endResetModel();
            Q_EMIT pageChanged();
        }));
    }
    requestRows(true);
    endResetModel();
    Q_EMIT pageChanged();
}

void SpanTableProxy::setFilterText(const QString& text)
{
    if (text == m_filterText)
        return;
    m_filterText = text;
    requestRows(false);
}

void SpanTableProxy::sort(int column, Qt::SortOrder order)
{
    if (column == m_sortColumn && order == m_sortOrder)
        return;
    m_sortColumn = column;
    m_sortOrder = order;
    requestRows(false);
}

void SpanTableProxy::setAsyncRows(qsizetype rows)
{
    m_asyncRows = rows;
}

void SpanTableProxy::requestRows(bool inReset)
{
    ++m_generation;
    stopWorker();
    const bool identity = identityAsked();
    m_updating = false;
    if (identity || m_spans->rowCount() < m_asyncRows) {
        std::vector<uint32_t> rows =
            identity ? std::vector<uint32_t>{} : rowsFor(m_spans->source(), m_filterText, m_sortColumn, m_sortOrder);
        if (inReset)
            setRows(identity, std::move(rows));
        else
            changeRows(identity, std::move(rows));
        Q_EMIT rowsReady();
        return;
    }
    if (inReset)
        setRows(false, {}); // a new trace: no rows until its own come
    m_updating = true;
    if (!inReset)
        Q_EMIT pageChanged(); // the pager says what is being done (a reset's end says it anyway)
    m_cancel = std::make_shared<std::atomic<bool>>(false);
    runOffGuiThread(
        this, &SpanTableProxy::m_generation,
        [source = m_spans->source(), filter = m_filterText, column = m_sortColumn, order = m_sortOrder,
         cancel = m_cancel] { return rowsFor(source, filter, column, order, cancel.get()); },
        [](SpanTableProxy& proxy, std::vector<uint32_t> rows) {
            proxy.m_cancel.reset();
            proxy.m_updating = false;
            proxy.changeRows(false, std::move(rows));
            Q_EMIT proxy.rowsReady();
        });
}

void SpanTableProxy::setRows(bool identity, std::vector<uint32_t> rows)
{
    m_page = 0;
    m_identity = identity;
    m_rows = std::move(rows);
    m_rowOf.clear();
}

void SpanTableProxy::changeRows(bool identity, std::vector<uint32_t> rows)
{
    Q_EMIT layoutAboutToBeChanged({}, QAbstractItemModel::VerticalSortHint);
    // The views' selection and current row follow their spans; a span filtered out loses them.
    const QModelIndexList from = persistentIndexList();
    std::vector<int> spans;
    spans.reserve(size_t(from.size()));
    for (const QModelIndex& p : from)
        spans.push_back(spanAtRow(p.row()));
    setRows(identity, std::move(rows));
    QModelIndexList to;
    to.reserve(from.size());
    for (qsizetype k = 0; k < from.size(); ++k) {
        const int row = rowOfSpan(spans[size_t(k)]);
        to.push_back(row < 0 ? QModelIndex() : index(row, from[k].column()));
    }
    changePersistentIndexList(from, to);
    Q_EMIT layoutChanged({}, QAbstractItemModel::VerticalSortHint);
    Q_EMIT pageChanged();
}

qsizetype SpanTableProxy::totalRows() const
{
    if (!m_spans)
        return 0;
    return m_identity ? qsizetype(m_spans->rowCount()) : qsizetype(m_rows.size());
}

int SpanTableProxy::pageCount() const
{
    return int(std::max<qsizetype>(1, (totalRows() + m_pageRows - 1) / m_pageRows));
}

void SpanTableProxy::setPage(int page)
{
    page = std::clamp(page, 0, pageCount() - 1);
    if (page == m_page)
        return;
    beginResetModel();
    m_page = page;
    endResetModel();
    Q_EMIT pageChanged();
}

void SpanTableProxy::setPageRows(int rows)
{
    beginResetModel();
    m_pageRows = std::max(1, rows);
    m_page = 0;
    endResetModel();
    Q_EMIT pageChanged();
}

int SpanTableProxy::pageOfSpan(int span) const
{
    const int row = logicalRowOfSpan(span);
    return row < 0 ? -1 : row / m_pageRows;
}

int SpanTableProxy::rowOfSpan(int span) const
{
    const qsizetype row = logicalRowOfSpan(span), first = firstRowOfPage();
    return row >= first && row < first + rowCount() ? int(row - first) : -1;
}

int SpanTableProxy::logicalRowOfSpan(int span) const
{
    if (!m_spans || span < 0 || span >= m_spans->rowCount())
        return -1;
    if (m_identity)
        return span;
    if (m_rowOf.empty()) {
        m_rowOf.assign(size_t(m_spans->rowCount()), -1);
        for (size_t r = 0; r < m_rows.size(); ++r)
            m_rowOf[m_rows[r]] = int32_t(r);
    }
    return m_rowOf[size_t(span)];
}

int SpanTableProxy::spanAtRow(int row) const
{
    if (row < 0 || row >= rowCount())
        return -1;
    return spanAtLogicalRow(firstRowOfPage() + row);
}

int SpanTableProxy::spanAtLogicalRow(qsizetype row) const
{
    if (row < 0 || row >= totalRows())
        return -1;
    return m_identity ? int(row) : int(m_rows[size_t(row)]);
}

QModelIndex SpanTableProxy::index(int row, int column, const QModelIndex& parent) const
{
    if (parent.isValid() || row < 0 || row >= rowCount() || column < 0 || column >= columnCount())
        return {};
    return createIndex(row, column);
}

QModelIndex SpanTableProxy::parent(const QModelIndex&) const
{
    return {};
}

bool SpanTableProxy::hasChildren(const QModelIndex& parent) const
{
    return !parent.isValid() && rowCount() > 0 && columnCount() > 0;
}

int SpanTableProxy::rowCount(const QModelIndex& parent) const
{
    if (parent.isValid() || !m_spans)
        return 0;
    return int(std::clamp<qsizetype>(totalRows() - firstRowOfPage(), 0, m_pageRows));
}

int SpanTableProxy::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() || !m_spans ? 0 : m_spans->columnCount();
}

QModelIndex SpanTableProxy::mapToSource(const QModelIndex& proxyIndex) const
{
    if (!proxyIndex.isValid() || proxyIndex.model() != this || !m_spans)
        return {};
    const int span = spanAtRow(proxyIndex.row());
    return span < 0 ? QModelIndex() : m_spans->index(span, proxyIndex.column());
}

QModelIndex SpanTableProxy::mapFromSource(const QModelIndex& sourceIndex) const
{
    if (!sourceIndex.isValid() || sourceIndex.model() != m_spans)
        return {};
    const int row = rowOfSpan(sourceIndex.row());
    return row < 0 ? QModelIndex() : index(row, sourceIndex.column());
}

QVariant SpanTableProxy::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (!m_spans)
        return {};
    // The columns are the model's, whatever rows are shown (none, filtered out).
    if (orientation == Qt::Horizontal)
        return m_spans->headerData(section, orientation, role);
    const int span = spanAtRow(section);
    return span < 0 ? QVariant() : m_spans->headerData(span, orientation, role);
}

} // namespace streamscope
