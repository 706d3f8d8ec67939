#include "compare_view.h"

#include "concurrency_plot.h"
#include "document_loader.h"
#include "format.h"
#include "plot_theme.h"
#include "run_controller.h"
#include "scenario_json.h"
#include "screen_fit.h"
#include "theme.h"
#include "timeline_view.h"
#include "worker.h"

#include <QApplication>
#include <QEvent>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QInputDialog>
#include <QLabel>
#include <QMessageBox>
#include <QPointer>
#include <QPushButton>
#include <QSplitter>
#include <QTableWidget>
#include <QThread>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace streamscope {

namespace {

// The badges of A and B: white on the light theme's blue and vermillion (which tell apart for colour-blind readers
// too), the same chips on a light or dark window.
const QColor kColorA = Theme::light().seriesBlue;
const QColor kColorB = Theme::light().seriesOrange;
const QString kMinus = QStringLiteral("\u2212");

QString duration(int64_t ns)
{
    return qs(formatDuration(ns));
}

QString signedDuration(int64_t ns)
{
    if (ns == 0)
        return QStringLiteral("±0");
    return (ns > 0 ? QStringLiteral("+") : kMinus) + qs(formatDuration(ns > 0 ? ns : -ns));
}

QString signedNumber(double v, int decimals, const QString& suffix = {})
{
    if (std::abs(v) < 0.5 * std::pow(10.0, -decimals))
        return QStringLiteral("±0") + suffix;
    return (v > 0 ? QStringLiteral("+") : kMinus) + QString::number(std::abs(v), 'f', decimals) + suffix;
}

QString percent(double fraction)
{
    return QString::number(100.0 * fraction, 'f', 100.0 * fraction >= 9.95 || fraction == 0 ? 0 : 1)
        + QStringLiteral(" %");
}

// +1 when B is better, -1 when worse, for a metric where `higherIsBetter`; changes under 0.5 % count as none.
int judge(double a, double b, bool higherIsBetter)
{
    const double scale = std::max({std::abs(a), std::abs(b), 1e-12});
    if (std::abs(b - a) <= 0.005 * scale)
        return 0;
    return (b > a) == higherIsBetter ? 1 : -1;
}

int64_t copyNs(const TraceAnalysis& a)
{
    int64_t total = 0;
    for (const DeviceAnalysis& d : a.devices)
        total += d.copyNs;
    return total;
}

QString ratio(double r)
{
    return QString::number(r, 'f', r >= 10 ? 1 : 2) + QStringLiteral("×");
}

} // namespace

Result<Scenario> scenarioWithVariant(const Scenario& scenario, const QString& variant)
{
    auto parsed = parseScenario(scenarioToJson(scenario), scenario.id.empty() ? scenario.title : scenario.id,
                                variant.toStdString());
    if (!parsed)
        return Result<Scenario>(parsed.error(), parsed.errorClass());
    return std::move(parsed.value().scenario);
}

std::optional<QString> chooseVariant(QWidget* parent, const QString& documentTitle, const Scenario& scenario,
                                     const QString& current, bool offerWithout)
{
    QStringList labels, ids;
    for (const Variant& v : scenario.variants) {
        if (qs(v.id) == current)
            continue;
        labels << (v.title.empty() ? qs(v.id) : qs(v.title) + QStringLiteral("  [") + qs(v.id) + QLatin1Char(']'));
        ids << qs(v.id);
    }
    if (offerWithout) {
        labels << QStringLiteral("Without the variant “%1” (as written)").arg(current);
        ids << QString();
    }
    if (ids.isEmpty()) {
        QMessageBox::information(parent, QStringLiteral("Compare with Variant"),
                                 QStringLiteral("%1 has no variants to compare with. Variants are named changes of a "
                                                "scenario, as most lessons have (the scenario's \"variants\" list). "
                                                "Compare with File… compares with any other run.")
                                     .arg(documentTitle));
        return std::nullopt;
    }
    bool ok = false;
    const QString choice = QInputDialog::getItem(
        parent, QStringLiteral("Compare with Variant"),
        QStringLiteral("Simulate %1 (A) and, below it, the same with (B):").arg(documentTitle), labels, 0, false, &ok);
    if (!ok || labels.indexOf(choice) < 0)
        return std::nullopt;
    return ids.value(labels.indexOf(choice));
}

std::vector<ComparisonRow> comparisonRows(const TraceComparison& c)
{
    const TraceAnalysis& a = c.a;
    const TraceAnalysis& b = c.b;
    std::vector<ComparisonRow> rows;
    auto section = [&](const QString& title, const QString& toolTip = {}) {
        ComparisonRow r;
        r.metric = title;
        r.section = true;
        r.toolTip = toolTip;
        rows.push_back(r);
    };
    auto add = [&](const QString& metric, const QString& va, const QString& vb, const QString& change, int better,
                   const QString& toolTip) {
        rows.push_back(ComparisonRow{metric, va, vb, change, better, false, toolTip});
    };

    section(QStringLiteral("Run"));
    QString makespanChange = signedDuration(c.makespanDeltaNs);
    if (c.makespanRatio > 0 && c.makespanDeltaNs != 0)
        makespanChange += QStringLiteral("  (") + ratio(c.makespanRatio) + QLatin1Char(')');
    add(QStringLiteral("Makespan"), duration(a.makespanNs), duration(b.makespanNs), makespanChange,
        judge(double(a.makespanNs), double(b.makespanNs), false),
        QStringLiteral("First GPU operation start to last GPU operation end; in brackets B's as a multiple of A's"));
    add(QStringLiteral("GPU work (serialized)"), duration(a.gpuWorkNs), duration(b.gpuWorkNs),
        signedDuration(b.gpuWorkNs - a.gpuWorkNs), 0,
        QStringLiteral("All GPU operations back to back: the makespan if nothing overlapped"));
    add(QStringLiteral("Speedup over serialized work"), ratio(a.speedup), ratio(b.speedup),
        signedNumber(c.speedupDelta, 2, QStringLiteral("×")), judge(a.speedup, b.speedup, true),
        QStringLiteral("GPU work divided by the makespan: how much the overlap of operations gained"));
    add(QStringLiteral("Max concurrency"), QString::number(a.concurrency.maxConcurrency),
        QString::number(b.concurrency.maxConcurrency), signedNumber(c.maxConcurrencyDelta, 0),
        judge(a.concurrency.maxConcurrency, b.concurrency.maxConcurrency, true),
        QStringLiteral("The most GPU operations that ran at once"));
    add(QStringLiteral("Average concurrency"), QString::number(a.concurrency.averageConcurrency, 'f', 2),
        QString::number(b.concurrency.averageConcurrency, 'f', 2), signedNumber(c.averageConcurrencyDelta, 2),
        judge(a.concurrency.averageConcurrency, b.concurrency.averageConcurrency, true),
        QStringLiteral("GPU operations running at once, averaged over the makespan"));
    add(QStringLiteral("GPU busy"), duration(a.busyNs), duration(b.busyNs), signedDuration(b.busyNs - a.busyNs), 0,
        QStringLiteral("Time at least one GPU operation ran"));
    add(QStringLiteral("Idle inside the makespan"), duration(a.idleNs), duration(b.idleNs),
        signedDuration(c.idleDeltaNs), judge(double(a.idleNs), double(b.idleNs), false),
        QStringLiteral("Time no GPU operation ran, between the first start and the last end"));
    const int64_t copyA = copyNs(a), copyB = copyNs(b);
    if (copyA > 0 || copyB > 0) {
        auto overlapText = [](const TraceAnalysis& t, int64_t copies) {
            return copies > 0 ? duration(t.copyComputeOverlapNs) + QStringLiteral(" (") + percent(t.copyComputeOverlap)
                    + QLatin1Char(')')
                              : QStringLiteral("no copies");
        };
        add(QStringLiteral("Copy/compute overlap"), overlapText(a, copyA), overlapText(b, copyB),
            signedDuration(c.copyComputeOverlapDeltaNs) + QStringLiteral("  (")
                + signedNumber(100.0 * c.copyComputeOverlapDelta, 1, QStringLiteral(" pp")) + QLatin1Char(')'),
            judge(a.copyComputeOverlap, b.copyComputeOverlap, true),
            QStringLiteral("Time a copy and a kernel ran at once; in brackets the share of the copy time "
                           "(pp: percentage points)"));
    }

    if (!c.streams.empty()) {
        section(QStringLiteral("Busy time per stream"), QStringLiteral("Time each stream had a GPU operation running"));
        bool severalDevices = false;
        for (const StreamComparison& s : c.streams)
            severalDevices = severalDevices || s.device != c.streams.front().device;
        for (const StreamComparison& s : c.streams) {
            const QString name =
                severalDevices ? QStringLiteral("GPU %1 · %2").arg(s.device).arg(qs(s.name)) : qs(s.name);
            const QString change = s.inA && s.inB ? signedDuration(s.busyDeltaNs)
                : s.inA                           ? QStringLiteral("only in A")
                                                  : QStringLiteral("only in B");
            add(name, s.inA ? duration(s.busyA) : QStringLiteral("—"), s.inB ? duration(s.busyB) : QStringLiteral("—"),
                change, 0, QStringLiteral("Busy time of stream %1").arg(qs(s.name)));
        }
    }

    if (!c.overlaps.empty()) {
        // The pairs whose overlap changed most first; many streams make many pairs, so the list stops somewhere.
        std::vector<const OverlapComparison*> pairs;
        for (const OverlapComparison& o : c.overlaps)
            pairs.push_back(&o);
        std::stable_sort(pairs.begin(), pairs.end(), [](const OverlapComparison* x, const OverlapComparison* y) {
            return std::abs(x->fractionB - x->fractionA) > std::abs(y->fractionB - y->fractionA);
        });
        constexpr size_t kMaxPairs = 40;
        section(QStringLiteral("Overlap per stream pair"),
                QStringLiteral("Time both streams ran at once, as a share of the less busy one's busy time; "
                               "the pairs that changed most first"));
        for (size_t i = 0; i < pairs.size() && i < kMaxPairs; ++i) {
            const OverlapComparison& o = *pairs[i];
            add(qs(o.streamA) + QStringLiteral(" ∥ ") + qs(o.streamB), percent(o.fractionA), percent(o.fractionB),
                signedNumber(100.0 * (o.fractionB - o.fractionA), 1, QStringLiteral(" pp")),
                judge(o.fractionA, o.fractionB, true),
                QStringLiteral("%1 and %2 ran at once for %3 in A and %4 in B (pp: percentage points)")
                    .arg(qs(o.streamA), qs(o.streamB), duration(o.nsA), duration(o.nsB)));
        }
        if (pairs.size() > kMaxPairs)
            add(QStringLiteral("… %1 more pairs").arg(pairs.size() - kMaxPairs), {}, {}, {}, 0,
                QStringLiteral("Pairs whose overlap changed less are not listed"));
    }
    return rows;
}

// ---- the view ---------------------------------------------------------------------------------------------------

struct CompareView::Loaded {
    std::shared_ptr<const Trace> a, b;
    QString nameA, nameB;
    QString notice; // stated before the summary (plain text; lines)
    TraceComparison comparison;

    static Loaded of(Trace ta, const QString& nameA, Trace tb, const QString& nameB)
    {
        Loaded l;
        l.a = std::make_shared<const Trace>(std::move(ta));
        l.b = std::make_shared<const Trace>(std::move(tb));
        l.nameA = nameA;
        l.nameB = nameB;
        l.comparison = compareTraces(*l.a, *l.b);
        return l;
    }
};

namespace {

QLabel* makeCaption()
{
    auto* label = new QLabel;
    label->setTextFormat(Qt::RichText);
    label->setContentsMargins(6, 4, 6, 2);
    return label;
}

QString badge(const QString& letter, const QColor& color)
{
    return QStringLiteral("<span style=\"background:%1; color:white; font-weight:bold;\">&nbsp;%2&nbsp;</span>")
        .arg(color.name(), letter);
}

} // namespace

CompareView::CompareView(QWidget* parent) : QWidget(parent)
{
    setObjectName(QStringLiteral("compareView"));
    setWindowTitle(QStringLiteral("Compare runs — StreamScope"));
    setAttribute(Qt::WA_DeleteOnClose, false);

    m_summary = new QLabel;
    m_summary->setObjectName(QStringLiteral("compareSummary"));
    m_summary->setWordWrap(true);
    m_summary->setTextFormat(Qt::RichText);
    m_summary->setContentsMargins(8, 6, 8, 6);
    QFont big = m_summary->font();
    big.setPointSizeF(big.pointSizeF() * 1.1);
    m_summary->setFont(big);

    m_timelineA = new TimelineView;
    m_timelineB = new TimelineView;
    m_timelineA->setObjectName(QStringLiteral("compareTimelineA"));
    m_timelineB->setObjectName(QStringLiteral("compareTimelineB"));
    for (TimelineView* t : {m_timelineA, m_timelineB})
        t->setFocusPolicy(Qt::StrongFocus);
    m_captionA = makeCaption();
    m_captionB = makeCaption();
    auto pane = [](QLabel* caption, TimelineView* timeline) {
        auto* w = new QWidget;
        auto* l = new QVBoxLayout(w);
        l->setContentsMargins(0, 0, 0, 0);
        l->setSpacing(0);
        l->addWidget(caption);
        l->addWidget(timeline, 1);
        return w;
    };
    connect(m_timelineA, &TimelineView::visibleTimeRangeChanged, this, [this] { syncRange(m_timelineA, m_timelineB); });
    connect(m_timelineB, &TimelineView::visibleTimeRangeChanged, this, [this] { syncRange(m_timelineB, m_timelineA); });

    m_table = new QTableWidget(0, 4);
    m_table->setObjectName(QStringLiteral("compareTable"));
    m_table->setHorizontalHeaderLabels(
        {QStringLiteral("Metric"), QStringLiteral("A"), QStringLiteral("B"), QStringLiteral("Change (B vs A)")});
    m_table->horizontalHeaderItem(3)->setToolTip(
        QStringLiteral("B minus A; green where B is better, red where it is worse; pp: percentage points"));
    m_table->verticalHeader()->hide();
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setWordWrap(false);
    m_table->verticalHeader()->setDefaultSectionSize(m_table->fontMetrics().height() + 6);
    m_table->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);
    for (int c = 1; c < 4; ++c)
        m_table->horizontalHeader()->setSectionResizeMode(c, QHeaderView::ResizeToContents);

    createHistogram();

    auto* bottom = new QSplitter(Qt::Horizontal);
    bottom->addWidget(m_table);
    bottom->addWidget(m_histogram);
    bottom->setStretchFactor(0, 3);
    bottom->setStretchFactor(1, 2);
    bottom->setChildrenCollapsible(false);

    m_splitter = new QSplitter(Qt::Vertical);
    m_splitter->addWidget(pane(m_captionA, m_timelineA));
    m_splitter->addWidget(pane(m_captionB, m_timelineB));
    m_splitter->addWidget(bottom);
    m_splitter->setStretchFactor(0, 3);
    m_splitter->setStretchFactor(1, 3);
    m_splitter->setStretchFactor(2, 2);
    m_splitter->setChildrenCollapsible(false);

    auto* fit = new QPushButton(QStringLiteral("Fit Both"));
    fit->setToolTip(QStringLiteral("Show both runs whole, on the longer one's time scale (0 or Home on a timeline)"));
    connect(fit, &QPushButton::clicked, this, &CompareView::fitBoth);
    auto* close = new QPushButton(QStringLiteral("Close"));
    connect(close, &QPushButton::clicked, this, &QWidget::close);
    m_hint = new QLabel(QStringLiteral("Zoom or pan either timeline: the other follows."));
    auto* buttons = new QHBoxLayout;
    buttons->setContentsMargins(8, 4, 8, 6);
    buttons->addWidget(m_hint, 1);
    buttons->addWidget(fit);
    buttons->addWidget(close);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);
    layout->addWidget(m_summary);
    layout->addWidget(m_splitter, 1);
    layout->addLayout(buttons);
    // Roomy where the screen is, never bigger than most of it: at 1280×720 the table and Close stay on screen.
    resize(sizeWithin(QSize(1400, 950), availableGeometry(this), 0.9));
    showMessage(QStringLiteral("Nothing to compare yet."), false);
}

CompareView::~CompareView()
{
    ++m_generation; // work still running is dropped when it finishes
    disconnect(m_timelineA, nullptr, this, nullptr);
    disconnect(m_timelineB, nullptr, this, nullptr);
}

void CompareView::showMessage(const QString& text, bool error)
{
    m_summary->setText(text.toHtmlEscaped());
    m_summaryError = error;
    applyTheme();
}

void CompareView::applyTheme()
{
    const Theme& theme = Theme::of(this);
    m_summary->setStyleSheet(
        m_summaryError
            ? QStringLiteral("color:%1; background:%2;").arg(theme.error.text.name(), theme.error.background.name())
            : QString());
    m_hint->setStyleSheet(QStringLiteral("color:%1;").arg(theme.faint.name()));
}

void CompareView::changeEvent(QEvent* event)
{
    QWidget::changeEvent(event);
    if (!isThemeChange(event) || !m_hint)
        return;
    applyTheme();
    fillTable();
    fillHistogram();
}

void CompareView::setTraces(std::shared_ptr<const Trace> a, const QString& nameA, std::shared_ptr<const Trace> b,
                            const QString& nameB)
{
    Loaded l;
    l.a = std::move(a);
    l.b = std::move(b);
    l.nameA = nameA;
    l.nameB = nameB;
    if (l.a && l.b)
        l.comparison = compareTraces(*l.a, *l.b);
    showLoaded(std::move(l));
}

void CompareView::showLoaded(Loaded loaded)
{
    ++m_generation; // supersedes work in progress
    m_busy = false;
    m_nameA = loaded.nameA;
    m_nameB = loaded.nameB;
    m_notice = loaded.notice;
    const QString& nameA = m_nameA;
    const QString& nameB = m_nameB;
    std::shared_ptr<const Trace> a = std::move(loaded.a), b = std::move(loaded.b);
    m_comparison = (a && b) ? std::optional<TraceComparison>(std::move(loaded.comparison)) : std::nullopt;

    m_timelineA->setTrace(a);
    m_timelineB->setTrace(b);
    alignRowLabels();
    auto length = [](const TimelineView* t) {
        return double(t->timelineLayout().endTime() - t->timelineLayout().origin());
    };
    const double extent = std::max(length(m_timelineA), length(m_timelineB));
    m_timelineA->setMinimumTimeExtent(extent);
    m_timelineB->setMinimumTimeExtent(extent);
    fitBoth();

    auto caption = [](const QString& letter, const QColor& color, const QString& name, const TraceAnalysis* t) {
        QString text =
            badge(letter, color) + QStringLiteral("&nbsp; <b>") + name.toHtmlEscaped() + QStringLiteral("</b>");
        if (t)
            text += QStringLiteral(" &nbsp;—&nbsp; makespan %1, up to %2 GPU operation%3 at once")
                        .arg(duration(t->makespanNs))
                        .arg(t->concurrency.maxConcurrency)
                        .arg(t->concurrency.maxConcurrency == 1 ? QString() : QStringLiteral("s"));
        return text;
    };
    m_captionA->setText(caption(QStringLiteral("A"), kColorA, nameA, m_comparison ? &m_comparison->a : nullptr));
    m_captionB->setText(caption(QStringLiteral("B"), kColorB, nameB, m_comparison ? &m_comparison->b : nullptr));
    m_summaryError = false;
    applyTheme();
    m_summary->setText(summary());
    setWindowTitle(QStringLiteral("Compare: %1 vs %2 — StreamScope").arg(nameA, nameB));
    fillTable();
    fillHistogram();
    Q_EMIT comparisonShown();
}

QString CompareView::summary() const
{
    if (!m_comparison)
        return QStringLiteral("Nothing to compare yet.");
    const TraceComparison& c = *m_comparison;
    const QString a = badge(QStringLiteral("A"), kColorA), b = badge(QStringLiteral("B"), kColorB);
    const double ratioBA = c.makespanRatio;
    QString text;
    if (!m_notice.isEmpty()) {
        // The first line (the replay's error) in bold: it says how far to trust what follows.
        const QStringList lines = m_notice.split(QLatin1Char('\n'));
        text = QStringLiteral("<b>") + lines.first().toHtmlEscaped() + QStringLiteral("</b><br>");
        for (qsizetype i = 1; i < lines.size(); ++i)
            text += lines[i].toHtmlEscaped() + QStringLiteral("<br>");
    }
    if (c.a.makespanNs <= 0 || c.b.makespanNs <= 0) {
        text += QStringLiteral("%1 and %2: one of the runs has no GPU operations.").arg(a, b);
    } else if (std::abs(ratioBA - 1.0) < 0.005) {
        text += QStringLiteral("%1 and %2 take the same time: <b>%3</b>.").arg(a, b, duration(c.b.makespanNs));
    } else if (ratioBA > 1.0) {
        text += QStringLiteral("%1 takes <b>%2</b>, <b>%3 as long</b> as %4 (%5): %6.")
                    .arg(b, duration(c.b.makespanNs), ratio(ratioBA), a, duration(c.a.makespanNs),
                         signedDuration(c.makespanDeltaNs));
    } else {
        text += QStringLiteral("%1 takes <b>%2</b>, <b>%3 faster</b> than %4 (%5): %6.")
                    .arg(b, duration(c.b.makespanNs), ratio(c.speedupOfB), a, duration(c.a.makespanNs),
                         signedDuration(c.makespanDeltaNs));
    }
    text += QStringLiteral(" Up to %1 GPU operations ran at once in A, %2 in B; speedup over the work serialized "
                           "%3 in A, %4 in B.")
                .arg(c.a.concurrency.maxConcurrency)
                .arg(c.b.concurrency.maxConcurrency)
                .arg(ratio(c.a.speedup), ratio(c.b.speedup));
    return text;
}

void CompareView::alignRowLabels()
{
    m_timelineA->setMinimumRowLabelWidth(0);
    m_timelineB->setMinimumRowLabelWidth(0);
    const int width = std::max(m_timelineA->rowLabelWidth(), m_timelineB->rowLabelWidth());
    m_timelineA->setMinimumRowLabelWidth(width);
    m_timelineB->setMinimumRowLabelWidth(width);
}

void CompareView::fitBoth()
{
    m_syncing = true;
    m_timelineA->fitToView();
    m_timelineB->fitToView();
    m_syncing = false;
    syncRange(m_timelineA, m_timelineB);
}

void CompareView::syncRange(TimelineView* from, TimelineView* to)
{
    if (m_syncing)
        return;
    m_syncing = true;
    // Both time axes start at their trace's first span: the same offset from it is the same point on both.
    const auto [start, end] = from->visibleTimeRange();
    const double shift = double(to->timelineLayout().origin()) - double(from->timelineLayout().origin());
    to->setVisibleTimeRange(start + shift, end + shift);
    m_syncing = false;
}

void CompareView::fillTable()
{
    m_table->clearSpans();
    m_table->setRowCount(0);
    if (!m_comparison)
        return;
    const std::vector<ComparisonRow> rows = comparisonRows(*m_comparison);
    const Theme& theme = Theme::of(this);
    m_table->setRowCount(int(rows.size()));
    QFont bold = m_table->font();
    bold.setBold(true);
    for (int r = 0; r < int(rows.size()); ++r) {
        const ComparisonRow& row = rows[size_t(r)];
        if (row.section) {
            auto* item = new QTableWidgetItem(row.metric);
            item->setFont(bold);
            item->setBackground(theme.sectionBackground);
            item->setToolTip(row.toolTip);
            m_table->setItem(r, 0, item);
            m_table->setSpan(r, 0, 1, 4);
            continue;
        }
        const QString texts[4] = {row.metric, row.a, row.b, row.change};
        for (int c = 0; c < 4; ++c) {
            auto* item = new QTableWidgetItem(texts[c]);
            item->setToolTip(row.toolTip);
            if (c > 0)
                item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
            if (c == 3 && row.better != 0) {
                item->setForeground(row.better > 0 ? theme.better : theme.worse);
                item->setFont(bold);
            }
            m_table->setItem(r, c, item);
        }
    }
}

QStringList CompareView::metricRow(const QString& metric) const
{
    for (int r = 0; r < m_table->rowCount(); ++r) {
        const QTableWidgetItem* first = m_table->item(r, 0);
        if (!first || first->text() != metric || m_table->columnSpan(r, 0) > 1)
            continue;
        QStringList texts;
        for (int c = 0; c < m_table->columnCount(); ++c)
            texts << (m_table->item(r, c) ? m_table->item(r, c)->text() : QString());
        return texts;
    }
    return {};
}

void CompareView::start(const QString& what, std::function<Result<Loaded>()> work)
{
    ++m_generation;
    m_busy = true;
    showMessage(what, false);
    runOffGuiThread(this, &CompareView::m_generation, std::move(work), [](CompareView& v, Result<Loaded> result) {
        v.m_busy = false;
        if (!result) {
            const QString message = qs(result.error().toString());
            v.showMessage(QStringLiteral("Could not compare: ") + message, true);
            Q_EMIT v.failed(message);
            return;
        }
        v.showLoaded(std::move(result.value()));
    });
}

void CompareView::compareScenarios(std::shared_ptr<const Scenario> a, const QString& nameA,
                                   std::shared_ptr<const Scenario> b, const QString& nameB, const QString& profileId)
{
    start(QStringLiteral("Simulating A and B…"), [a, b, nameA, nameB, profileId]() -> Result<Loaded> {
        auto ta = RunController::simulate(*a, profileId);
        if (!ta)
            return Result<Loaded>(ta.error(), ta.errorClass());
        auto tb = RunController::simulate(*b, profileId);
        if (!tb)
            return Result<Loaded>(tb.error(), tb.errorClass());
        return Loaded::of(std::move(ta).value(), nameA, std::move(tb).value(), nameB);
    });
}

void CompareView::compareWithVariant(std::shared_ptr<const Scenario> scenario, const QString& nameA,
                                     const QString& variant, const QString& profileId)
{
    QString nameB = QStringLiteral("variant “%1”").arg(variant);
    for (const Variant& v : scenario->variants)
        if (qs(v.id) == variant && !v.title.empty())
            nameB = QStringLiteral("variant “%1”").arg(qs(v.title));
    start(QStringLiteral("Simulating A and B…"), [scenario, variant, nameA, nameB, profileId]() -> Result<Loaded> {
        auto withVariant = scenarioWithVariant(*scenario, variant);
        if (!withVariant)
            return Result<Loaded>(withVariant.error(), withVariant.errorClass());
        auto ta = RunController::simulate(*scenario, profileId);
        if (!ta)
            return Result<Loaded>(ta.error(), ta.errorClass());
        auto tb = RunController::simulate(*withVariant, profileId, variant);
        if (!tb)
            return Result<Loaded>(tb.error(), tb.errorClass());
        return Loaded::of(std::move(ta).value(), nameA, std::move(tb).value(), nameB);
    });
}

void CompareView::compareWithFile(std::shared_ptr<const Trace> a, const QString& nameA, const QString& path,
                                  const QString& profileId)
{
    start(QStringLiteral("Opening %1…").arg(path), [a, nameA, path, profileId]() -> Result<Loaded> {
        auto doc = loadDocument(path);
        if (!doc)
            return Result<Loaded>(doc.error(), doc.errorClass());
        Loaded l;
        l.a = a;
        l.nameA = nameA;
        l.nameB = QFileInfo(path).fileName();
        if (doc->kind == DocumentKind::Trace) {
            l.b = doc->trace->trace;
        } else {
            auto tb = RunController::simulate(doc->scenario, profileId, doc->variant);
            if (!tb)
                return Result<Loaded>(tb.error(), tb.errorClass());
            l.b = std::make_shared<const Trace>(std::move(tb).value());
            l.nameB += QStringLiteral(" (simulated)");
        }
        l.comparison = compareTraces(*l.a, *l.b);
        return l;
    });
}

void CompareView::compareWithReplay(std::shared_ptr<const Trace> recorded, const QString& nameA,
                                    std::vector<ReplaySetting> settings)
{
    const QString nameB = QStringLiteral("replay: ") + qs(replaySettingsText(settings));
    start(QStringLiteral("Replaying the recording with %1…").arg(qs(replaySettingsText(settings))),
          [recorded, nameA, nameB, settings = std::move(settings)]() -> Result<Loaded> {
              ReplayOptions options;
              options.settings = settings;
              auto r = replayRecordedRun(*recorded, options, nameA.toStdString());
              if (!r)
                  return Result<Loaded>(r.error(), r.errorClass());
              Loaded l;
              l.a = recorded;
              l.nameA = nameA + QStringLiteral(" (recorded)");
              l.b = std::make_shared<const Trace>(std::move(r->changed));
              l.nameB = nameB;
              QString notice = qs(replayErrorLine(*r)) + QStringLiteral(".");
              notice += QStringLiteral("\nMeasured: %1 of %2 GPU ops, %3 of %4 host calls; the rest modelled.")
                            .arg(r->gpuOpsMeasured)
                            .arg(r->gpuOps)
                            .arg(r->hostCallsMeasured)
                            .arg(r->hostCalls);
              for (const std::string& n : r->notes)
                  notice += QStringLiteral("\n") + qs(n) + QStringLiteral(".");
              l.notice = notice;
              l.comparison = std::move(r->comparison);
              return l;
          });
}

} // namespace streamscope
