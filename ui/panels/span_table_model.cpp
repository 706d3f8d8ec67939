#include "span_table_model.h"

#include "format.h"
#include "timeline_plottable.h"
#include "trace.h"

#include <algorithm>
#include <numeric>

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

uint32_t launchingOpOf(const std::shared_ptr<const std::vector<uint32_t>>& ops, uint32_t span)
{
    return ops && span < ops->size() ? (*ops)[span] : kNoOrigin;
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
        const uint32_t op = launchingOp(span);
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

uint32_t SpanTableModel::launchingOp(uint32_t span) const
{
    return launchingOpOf(m_launchOp, span);
}

std::vector<uint32_t> SpanTableModel::spansMatching(const Source& source, const QString& text,
                                                    const std::atomic<bool>* cancel)
{
    std::vector<uint32_t> out;
    if (!source.trace)
        return out;
    const Trace& t = *source.trace;
    const SpanDisplayNames names(&t);
    const auto launchingOp = [&source](uint32_t span) { return launchingOpOf(source.launchOp, span); };
    const SpanColumns& s = t.spans;
    // Each name, kind and track is tested once: -1 not yet, 0 no, 1 yes.
    std::vector<int8_t> name(t.strings.size(), -1), opName(t.strings.size(), -1), track(t.tracks.size(), -1);
    int8_t kind[kSpanKindCount];
    std::fill(std::begin(kind), std::end(kind), int8_t(-1));
    auto test = [&text](int8_t& known, auto&& textOf) {
        if (known < 0)
            known = textOf().contains(text, Qt::CaseInsensitive) ? 1 : 0;
        return known == 1;
    };
    for (uint32_t i = 0; i < t.spanCount(); ++i) {
        if (i % (1u << 20) == 0 && cancel && *cancel)
            break;
        const uint32_t n = s.name[i], op = launchingOp(i);
        // The full demangled name too (the Name column's tooltip): "MulFunctor" finds
        // "vectorized_elementwise_kernel<…>".
        if (test(
                name[n],
                [&]() -> QString { return names.shortNameOfString(n) + QLatin1Char('\n') + names.fullNameOfString(n); })
            || test(kind[int(s.kind[i])], [&] { return spanKindLabel(s.kind[i]); })
            || test(track[s.track[i]], [&] { return trackName(t, s.track[i]); })
            || (op != kNoOrigin && test(opName[s.name[op]], [&] { return qs(t.spanName(op)); })))
            out.push_back(i);
    }
    return out;
}

bool SpanTableModel::sortSpans(const Source& source, std::vector<uint32_t>& spans, int column, Qt::SortOrder order,
                               const std::atomic<bool>* cancel)
{
    if (!source.trace || column < 0 || column >= ColumnCount)
        return true;
    auto cancelled = [cancel] { return cancel && cancel->load(std::memory_order_relaxed); };
    const Trace& t = *source.trace;
    const SpanDisplayNames names(&t);
    const auto launchingOp = [&source](uint32_t span) { return launchingOpOf(source.launchOp, span); };
    const SpanColumns& s = t.spans;
    // Names sort as text: each distinct one ranked once, the spans by their rank.
    auto ranksOf = [&t](auto&& textOf) {
        std::vector<uint32_t> ids(t.strings.size());
        std::iota(ids.begin(), ids.end(), 0u);
        std::vector<QString> texts(t.strings.size());
        for (uint32_t id : ids)
            texts[id] = textOf(id);
        std::stable_sort(ids.begin(), ids.end(), [&texts](uint32_t a, uint32_t b) { return texts[a] < texts[b]; });
        std::vector<int64_t> rank(ids.size());
        for (size_t r = 0; r < ids.size(); ++r)
            rank[ids[r]] = int64_t(r) + 1; // 0: no op
        return rank;
    };
    std::vector<int64_t> rank;
    if (column == NameColumn)
        rank = ranksOf([&names](uint32_t id) { return names.shortNameOfString(id); });
    else if (column == LaunchedByColumn)
        rank = ranksOf([&t](uint32_t id) { return qs(t.strings[id]); });
    const TimeColumn::View start = s.start.view(), end = s.end.view();
    auto keyOf = [&](uint32_t i) -> int64_t {
        switch (column) {
        case NameColumn: return rank[s.name[i]];
        case KindColumn: return int64_t(s.kind[i]);
        case TrackColumn: return int64_t(s.track[i]);
        case StartColumn: return start[i];
        case DurationColumn: return end[i] - start[i];
        case EndColumn: return end[i];
        case OriginColumn:
            return ((int64_t(s.threadOf(i)) * (1LL << 20) + int64_t(s.opOf(i))) * (1LL << 12) + s.iterationOf(i))
                * (1LL << 20)
                + s.taskOf(i);
        case BytesColumn: return s.bytesOf(i);
        case GridColumn: return int64_t(s.gridOf(i).count());
        case LaunchedByColumn: {
            const uint32_t op = launchingOp(i);
            return op == kNoOrigin ? 0 : rank[s.name[op]];
        }
        default: return 0;
        }
    };
    // Keys made, blocks of 2^20 sorted, and runs merged pass by pass: stable, as one stable_sort, and the flag read
    // between the steps (each a fraction of a second at 100 M spans).
    constexpr size_t kBlock = size_t(1) << 20;
    using Keyed = std::pair<int64_t, uint32_t>;
    std::vector<Keyed> keyed;
    keyed.reserve(spans.size());
    for (size_t k = 0; k < spans.size(); ++k) {
        if (k % kBlock == 0 && cancelled())
            return false;
        keyed.emplace_back(keyOf(spans[k]), spans[k]);
    }
    const bool ascending = order == Qt::AscendingOrder;
    auto before = [ascending](const Keyed& a, const Keyed& b) {
        return ascending ? a.first < b.first : a.first > b.first;
    };
    const auto at = [&keyed](size_t k) { return keyed.begin() + std::ptrdiff_t(k); };
    const size_t n = keyed.size();
    for (size_t lo = 0; lo < n; lo += kBlock) {
        if (cancelled())
            return false;
        std::stable_sort(at(lo), at(std::min(n, lo + kBlock)), before);
    }
    for (size_t width = kBlock; width < n; width *= 2)
        for (size_t lo = 0; lo + width < n; lo += 2 * width) {
            if (cancelled())
                return false;
            std::inplace_merge(at(lo), at(lo + width), at(std::min(n, lo + 2 * width)), before);
        }
    for (size_t k = 0; k < n; ++k)
        spans[k] = keyed[k].second;
    return true;
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
