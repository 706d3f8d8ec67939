#include "span_table_model.h"

#include "format.h"
#include "timeline_plottable.h"
#include "trace.h"

namespace streamscope {

namespace {

QString trackName(const Trace& t, uint32_t track)
{
    const Track& tr = t.tracks[track];
    if (tr.kind == TrackKind::Ranges && tr.parent >= 0 && size_t(tr.parent) < t.tracks.size())
        return trackName(t, uint32_t(tr.parent)) + QStringLiteral(" · depth ") + QString::number(tr.depth);
    if (tr.kind == TrackKind::HostThread)
        return trackNameText(QStringLiteral("thread"), tr.name);
    return qs(tr.name) + QStringLiteral(" (GPU ") + QString::number(tr.device) + QLatin1Char(')');
}

} // namespace

SpanTableModel::SpanTableModel(QObject* parent) : QAbstractTableModel(parent) {}
SpanTableModel::~SpanTableModel() = default;

void SpanTableModel::setTrace(std::shared_ptr<const Trace> trace,
                              std::shared_ptr<const std::vector<uint32_t>> launchingOps)
{
    beginResetModel();
    m_trace = std::move(trace);
    m_names.reset(m_trace.get());
    m_origin = m_trace ? m_trace->timeRange().first : 0;
    m_launchOp = !m_trace ? nullptr
        : launchingOps    ? std::move(launchingOps)
                          : std::make_shared<const std::vector<uint32_t>>(streamscope::launchingOps(*m_trace));
    endResetModel();
}

int SpanTableModel::rowCount(const QModelIndex& parent) const
{
    if (parent.isValid() || !m_trace)
        return 0;
    return int(m_trace->spanCount());
}

int SpanTableModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant SpanTableModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal)
        return {};
    if (role == Qt::DisplayRole) {
        switch (section) {
        case NameColumn: return QStringLiteral("Name");
        case KindColumn: return QStringLiteral("Kind");
        case TrackColumn: return QStringLiteral("Stream / thread");
        case StartColumn: return QStringLiteral("Start");
        case DurationColumn: return QStringLiteral("Duration");
        case EndColumn: return QStringLiteral("End");
        case OriginColumn: return QStringLiteral("Op");
        case BytesColumn: return QStringLiteral("Bytes");
        case GridColumn: return QStringLiteral("Grid × block");
        case LaunchedByColumn: return QStringLiteral("Launched by");
        default: return {};
        }
    }
    if (role == Qt::ToolTipRole && section == StartColumn)
        return QStringLiteral("Time since the first span of the trace");
    if (role == Qt::ToolTipRole && section == LaunchedByColumn)
        return QStringLiteral(
            "The op (CPU op, annotation) whose runtime call launched the GPU work, or the call was made in");
    if (role == Qt::ToolTipRole && section == OriginColumn)
        return QStringLiteral(
            "The scenario op the span came from: host thread · op · iteration, and which repeat (pool task) of the "
            "thread's ops where it repeats them (r3)");
    return {};
}

QVariant SpanTableModel::data(const QModelIndex& index, int role) const
{
    if (!m_trace || !index.isValid() || index.row() < 0 || size_t(index.row()) >= m_trace->spanCount())
        return {};
    const Trace& t = *m_trace;
    const auto i = uint32_t(index.row());
    const SpanColumns& s = t.spans;
    const auto launchOpName = [&](uint32_t span) {
        const uint32_t op = m_launchOp && span < m_launchOp->size() ? (*m_launchOp)[span] : kNoOrigin;
        return op == kNoOrigin ? QString() : qs(t.spanName(op));
    };
    if (role == SpanIndexRole)
        return int(i);
    if (role == Qt::TextAlignmentRole) {
        switch (index.column()) {
        case StartColumn:
        case DurationColumn:
        case EndColumn:
        case BytesColumn: return int(Qt::AlignRight | Qt::AlignVCenter);
        default: return {};
        }
    }
    if (role == Qt::DecorationRole && index.column() == KindColumn)
        return spanKindColor(s.kind[i]);
    if (role == SortRole) {
        switch (index.column()) {
        case NameColumn: return m_names.shortName(i);
        case KindColumn: return int(s.kind[i]);
        case TrackColumn: return int(s.track[i]);
        case StartColumn: return qlonglong(s.start[i]);
        case DurationColumn: return qlonglong(s.end[i] - s.start[i]);
        case EndColumn: return qlonglong(s.end[i]);
        case OriginColumn:
            return ((qlonglong(s.threadOf(i)) * (1LL << 20) + qlonglong(s.opOf(i))) * (1LL << 12) + s.iterationOf(i))
                * (1LL << 20)
                + s.taskOf(i);
        case BytesColumn: return qlonglong(s.bytesOf(i));
        case GridColumn: return qlonglong(s.gridOf(i).count());
        case LaunchedByColumn: return launchOpName(i);
        default: return {};
        }
    }
    if (role != Qt::DisplayRole && role != Qt::ToolTipRole)
        return {};
    switch (index.column()) {
    case NameColumn: return role == Qt::ToolTipRole ? m_names.fullName(i) : m_names.shortName(i);
    case KindColumn: return spanKindLabel(s.kind[i]);
    case TrackColumn: return trackName(t, s.track[i]);
    case StartColumn: return formatNs(double(s.start[i] - m_origin));
    case DurationColumn: return formatNs(double(s.end[i] - s.start[i]));
    case EndColumn: return formatNs(double(s.end[i] - m_origin));
    case OriginColumn:
        if (s.threadOf(i) < 0)
            return QString();
        if (!s.task.empty())
            return QStringLiteral("%1 · %2 · %3 · r%4")
                .arg(s.threadOf(i))
                .arg(s.opOf(i))
                .arg(s.iterationOf(i))
                .arg(s.taskOf(i));
        return QStringLiteral("%1 · %2 · %3").arg(s.threadOf(i)).arg(s.opOf(i)).arg(s.iterationOf(i));
    case BytesColumn: return s.bytesOf(i) > 0 ? formatBytes(s.bytesOf(i)) : QString();
    case GridColumn:
        if (s.gridOf(i).count() == 0)
            return QString();
        return QString(formatDim3(s.gridOf(i)) + QStringLiteral(" × ") + formatDim3(s.blockOf(i)));
    case LaunchedByColumn: return launchOpName(i);
    default: return {};
    }
}

SpanTableProxy::SpanTableProxy(QObject* parent) : QSortFilterProxyModel(parent)
{
    setSortRole(SpanTableModel::SortRole);
    setFilterCaseSensitivity(Qt::CaseInsensitive);
}

void SpanTableProxy::setFilterText(const QString& text)
{
    if (text == m_filterText)
        return;
    m_filterText = text;
    invalidateFilter();
}

int SpanTableProxy::rowOfSpan(int span) const
{
    if (!sourceModel() || span < 0 || span >= sourceModel()->rowCount())
        return -1;
    const QModelIndex p = mapFromSource(sourceModel()->index(span, 0));
    return p.isValid() ? p.row() : -1;
}

int SpanTableProxy::spanAtRow(int row) const
{
    const QModelIndex s = mapToSource(index(row, 0));
    return s.isValid() ? s.row() : -1;
}

bool SpanTableProxy::filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const
{
    const QString& needle = m_filterText;
    if (needle.isEmpty())
        return true;
    for (int c : {SpanTableModel::NameColumn, SpanTableModel::KindColumn, SpanTableModel::TrackColumn,
                  SpanTableModel::LaunchedByColumn}) {
        const QString text = sourceModel()->index(sourceRow, c, sourceParent).data().toString();
        if (text.contains(needle, Qt::CaseInsensitive))
            return true;
    }
    // The full demangled name too (the Name column's tooltip): "MulFunctor" finds "vectorized_elementwise_kernel<…>".
    const QString full =
        sourceModel()->index(sourceRow, SpanTableModel::NameColumn, sourceParent).data(Qt::ToolTipRole).toString();
    return full.contains(needle, Qt::CaseInsensitive);
}

OpGpuTimeModel::OpGpuTimeModel(QObject* parent) : QAbstractTableModel(parent) {}
OpGpuTimeModel::~OpGpuTimeModel() = default;

void OpGpuTimeModel::setTrace(const std::shared_ptr<const Trace>& trace,
                              std::shared_ptr<const std::vector<OpGpuTime>> rows)
{
    beginResetModel();
    m_rows = !trace ? std::vector<OpGpuTime>{} : rows ? *rows : gpuTimeByLaunchingOp(*trace);
    m_totalNs = 0;
    for (const OpGpuTime& g : m_rows)
        m_totalNs += g.gpuNs;
    endResetModel();
}

int OpGpuTimeModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

int OpGpuTimeModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant OpGpuTimeModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case OpColumn: return QStringLiteral("Launched by");
    case SpansColumn: return QStringLiteral("GPU ops");
    case GpuTimeColumn: return QStringLiteral("GPU time");
    case ShareColumn: return QStringLiteral("Share");
    default: return {};
    }
}

QVariant OpGpuTimeModel::data(const QModelIndex& index, int role) const
{
    if (!index.isValid() || index.row() < 0 || size_t(index.row()) >= m_rows.size())
        return {};
    const OpGpuTime& g = m_rows[size_t(index.row())];
    const double share = m_totalNs > 0 ? double(g.gpuNs) / double(m_totalNs) : 0.0;
    if (role == Qt::TextAlignmentRole && index.column() != OpColumn)
        return int(Qt::AlignRight | Qt::AlignVCenter);
    if (role == SortRole) {
        switch (index.column()) {
        case OpColumn: return qs(g.op);
        case SpansColumn: return qlonglong(g.spans);
        case GpuTimeColumn: return qlonglong(g.gpuNs);
        case ShareColumn: return share;
        default: return {};
        }
    }
    if (role != Qt::DisplayRole && role != Qt::ToolTipRole)
        return {};
    switch (index.column()) {
    case OpColumn: return g.op.empty() ? QStringLiteral("(no op)") : qs(g.op);
    case SpansColumn: return QString::number(g.spans);
    case GpuTimeColumn: return formatNs(double(g.gpuNs));
    case ShareColumn: return QStringLiteral("%1 %").arg(share * 100, 0, 'f', 1);
    default: return {};
    }
}

} // namespace streamscope
