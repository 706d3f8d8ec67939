// The sweep's plot (makespan, relative to the first point, speed-up) and its table, legend and point tooltips.
#include "sweep_view.h"
#include "sweep_view_parts.h"

#include "device_profile.h"
#include "format.h"
#include "scenario_json.h"
#include "theme.h"
#include "trace_json.h"

#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QProgressBar>
#include <QPushButton>
#include <QRegularExpression>
#include <QScrollBar>
#include <QSplitter>
#include <QStandardItemModel>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QThread>
#include <QTimer>
#include <QToolButton>
#include <QToolTip>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

namespace streamscope {

using namespace sweep_detail;

// ---- plot and table --------------------------------------------------------------------------------------------

QString SweepView::knobLabel() const
{
    switch (m_spec.knob) {
    case SweepKnob::Streams: return QStringLiteral("streams");
    case SweepKnob::Chunks: return QStringLiteral("chunks (times the thread issues its ops)");
    case SweepKnob::KernelSize: return QStringLiteral("kernel size (× the scenario's)");
    }
    return {};
}

void SweepView::rebuildPlot()
{
    QVector<double> keys, makespans, relative, speedups;
    double maxNs = 0, maxSpeedup = 1;
    for (const auto& p : m_points)
        if (p.error.empty()) {
            maxNs = std::max(maxNs, double(p.makespanNs));
            maxSpeedup = std::max({maxSpeedup, p.speedup, p.relativeSpeedup});
        }
    const auto [unitNs, unitName] = makespanUnit(maxNs);
    QVector<double> failedKeys;
    for (const auto& p : m_points) {
        if (!p.error.empty()) {
            failedKeys << p.value;
            continue;
        }
        keys << p.value;
        makespans << double(p.makespanNs) / unitNs;
        relative << p.relativeSpeedup;
        speedups << p.speedup;
    }
    m_makespanGraph->setData(keys, makespans, true);
    m_relativeGraph->setData(keys, relative, true);
    m_speedupGraph->setData(keys, speedups, true);
    if (failedKeys.isEmpty())
        m_failedGraph->removeFromLegend();
    else
        m_failedGraph->addToLegend();

    // x: the values swept, each labelled; geometric values (1, 2, 4, 8) on a log scale so that they spread evenly.
    std::vector<double> xs = m_spec.values;
    std::sort(xs.begin(), xs.end());
    bool geometric = xs.size() >= 3 && xs.front() > 0;
    for (size_t i = 1; geometric && i < xs.size(); ++i)
        geometric = xs[i] / xs[i - 1] >= 1.45;
    QCPAxis* x = m_plot->xAxis;
    x->setScaleType(geometric ? QCPAxis::stLogarithmic : QCPAxis::stLinear);
    m_tickValues.clear();
    m_tickStride = 0;
    if (!xs.empty() && xs.size() <= 24) {
        m_tickValues = xs; // labelled in fitLegend, as many as fit
        x->setTicker(QSharedPointer<QCPAxisTickerText>::create());
        x->setSubTicks(false);
    } else if (geometric) {
        x->setTicker(QSharedPointer<QCPAxisTickerLog>::create());
        x->setSubTicks(true);
    } else {
        x->setTicker(QSharedPointer<QCPAxisTicker>::create());
        x->setSubTicks(true);
    }
    if (xs.empty()) {
        x->setScaleType(QCPAxis::stLinear);
        x->setRange(0, 1);
    } else if (geometric) {
        x->setRange(xs.front() / 1.25, xs.back() * 1.25);
    } else {
        const double pad = xs.size() > 1 ? 0.05 * (xs.back() - xs.front()) : 0.5;
        x->setRange(xs.front() - pad, xs.back() + pad);
    }
    x->setLabel(m_swept ? knobLabel() : QStringLiteral("knob value"));

    m_plot->yAxis->setLabel(QStringLiteral("makespan (%1)").arg(unitName));
    m_plot->yAxis->setRange(0, maxNs > 0 ? maxNs / unitNs * 1.12 : 1);
    // Failed values: a cross just above the value axis, where no makespan can be.
    const double failedAt = m_plot->yAxis->range().upper * 0.04;
    m_failedGraph->setData(failedKeys, QVector<double>(failedKeys.size(), failedAt), true);
    m_plot->yAxis2->setRange(0, maxSpeedup * 1.12);

    QString title = QStringLiteral("Sweep");
    if (m_swept) {
        const QString name = m_swept->id.empty()
            ? (m_swept->title.empty() ? QStringLiteral("the scenario") : qs(m_swept->title))
            : qs(m_swept->id);
        title =
            QStringLiteral("%1 over %2 values of %3, %4")
                .arg(name)
                .arg(m_spec.values.size())
                .arg(qs(toString(m_spec.knob)),
                     m_sweptBackend == RunBackend::Gpu ? QStringLiteral("on the GPU") : QStringLiteral("simulated"));
    }
    m_fullTitle = title;
    m_title->setText(title);
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void SweepView::rebuildTable()
{
    m_table->horizontalHeaderItem(0)->setText(m_swept ? qs(toString(m_spec.knob)) : QStringLiteral("Value"));
    m_table->setRowCount(int(m_points.size()));
    int best = -1;
    for (size_t i = 0; i < m_points.size(); ++i)
        if (m_points[i].error.empty() && (best < 0 || m_points[i].makespanNs < m_points[size_t(best)].makespanNs))
            best = int(i);
    for (size_t i = 0; i < m_points.size(); ++i) {
        const auto& p = m_points[i];
        const int row = int(i);
        m_table->setItem(row, 0, cell(valueText(p.value)));
        if (!p.error.empty()) {
            auto* failed = cell(QStringLiteral("failed"));
            failed->setForeground(Theme::of(this).fail);
            m_table->setItem(row, 1, failed);
            for (int c = 2; c < 5; ++c)
                m_table->setItem(row, c, cell(QStringLiteral("–")));
            auto* note = cell(qs(p.error), Qt::AlignLeft | Qt::AlignVCenter);
            note->setForeground(Theme::of(this).fail);
            m_table->setItem(row, 5, note);
            for (int c = 0; c < 6; ++c)
                m_table->item(row, c)->setToolTip(qs(p.error));
            continue;
        }
        m_table->setItem(row, 1, cell(formatNs(double(p.makespanNs))));
        m_table->setItem(row, 2, cell(speedupText(p.relativeSpeedup)));
        m_table->setItem(row, 3, cell(speedupText(p.speedup)));
        m_table->setItem(row, 4, cell(QString::number(p.maxConcurrency)));
        m_table->setItem(row, 5,
                         cell(row == best && m_points.size() > 1 ? QStringLiteral("fastest") : QString(),
                              Qt::AlignLeft | Qt::AlignVCenter));
        const QString tip = pointText(row);
        for (int c = 0; c < 6; ++c) {
            m_table->item(row, c)->setToolTip(tip);
            if (row == best) {
                QFont bold = m_table->font();
                bold.setBold(true);
                m_table->item(row, c)->setFont(bold);
            }
        }
    }
    // Wide enough for the numbers and a short note; a long error is elided (its tooltip has it all).
    for (int c = 0; c < 5; ++c)
        m_table->resizeColumnToContents(c);
    QFont bold = m_table->font();
    bold.setBold(true);
    int width = 2 * m_table->frameWidth() + m_table->verticalScrollBar()->sizeHint().width()
        + QFontMetrics(bold).horizontalAdvance(QStringLiteral("fastest")) + 24;
    for (int c = 0; c < 5; ++c)
        width += m_table->horizontalHeader()->sectionSize(c);
    // The dock stays narrow enough for small screens: the table asks for its width from the splitter instead of
    // forcing a minimum.
    if (auto* splitter = qobject_cast<QSplitter*>(m_table->parentWidget()); splitter && m_table->width() < width) {
        const int total = splitter->width();
        const int tableWidth = std::min(width, std::max(160, total / 2));
        splitter->setSizes({total - tableWidth, tableWidth});
    }
}

void SweepView::fitLegend()
{
    // As many legend entries per row as fit the plot's width (a narrow dock wraps them).
    QCPLegend* legend = m_plot->legend;
    const int available = m_plot->width() - 12;
    std::vector<int> widths;
    for (int i = 0; i < legend->itemCount(); ++i)
        if (const QCPAbstractLegendItem* item = legend->item(i)) // empty cells of the grid are null
            widths.push_back(item->minimumOuterSizeHint().width());
    // The grid's columns are as wide as their widest entry.
    int perRow = std::max<int>(1, int(widths.size()));
    for (; perRow > 1; --perRow) {
        std::vector<int> columns(size_t(perRow), 0);
        for (size_t i = 0; i < widths.size(); ++i)
            columns[i % size_t(perRow)] = std::max(columns[i % size_t(perRow)], widths[i]);
        int used = legend->margins().left() + legend->margins().right() + legend->columnSpacing() * (perRow - 1);
        for (int w : columns)
            used += w;
        if (used <= available)
            break;
    }
    if (legend->wrap() != perRow) {
        legend->setWrap(perRow);
        legend->setFillOrder(QCPLegend::foColumnsFirst, true);
    }
    // The title and the value labels fit the plot's width: a long title is elided, and when the values are
    // crowded only every second (third, …) one is labelled.
    const QString shownTitle =
        QFontMetrics(m_title->font()).elidedText(m_fullTitle, Qt::ElideRight, std::max(60, m_plot->width() - 16));
    if (m_title->text() != shownTitle)
        m_title->setText(shownTitle);
    if (auto ticker = m_plot->xAxis->ticker().dynamicCast<QCPAxisTickerText>(); ticker && !m_tickValues.empty()) {
        const QFontMetrics fm(m_plot->xAxis->tickLabelFont());
        int widest = 0;
        for (double v : m_tickValues)
            widest = std::max(widest, fm.horizontalAdvance(valueText(v)));
        const double axisWidth =
            std::max(1, m_plot->axisRect()->width() > 0 ? m_plot->axisRect()->width() : m_plot->width() - 100);
        const size_t stride =
            std::max<size_t>(1, size_t(std::ceil(double(m_tickValues.size()) * double(widest + 10) / axisWidth)));
        if (stride != m_tickStride) {
            m_tickStride = stride;
            ticker->clear();
            for (size_t i = 0; i < m_tickValues.size(); i += stride)
                ticker->addTick(m_tickValues[i], valueText(m_tickValues[i]));
        }
    }
}

int SweepView::pointNear(const QPoint& pos, double maxPixels) const
{
    if (!m_plot->axisRect()->rect().contains(pos))
        return -1;
    int best = -1;
    double bestDistance = maxPixels;
    for (size_t i = 0; i < m_points.size(); ++i) {
        if (!m_points[i].error.empty())
            continue;
        const double d = std::fabs(m_plot->xAxis->coordToPixel(m_points[i].value) - pos.x());
        if (d <= bestDistance) {
            bestDistance = d;
            best = int(i);
        }
    }
    return best;
}

QString SweepView::pointText(int index) const
{
    const auto& p = m_points[size_t(index)];
    return QStringLiteral("<b>%1 = %2</b><br>makespan %3<br>%4 vs the first value<br>%5 over serialized work "
                          "(GPU work %6)<br>up to %7 GPU operations at once<br><i>Double-click to see its timeline</i>")
        .arg(qs(toString(m_spec.knob)), valueText(p.value), formatNs(double(p.makespanNs)),
             speedupText(p.relativeSpeedup), speedupText(p.speedup), formatNs(double(p.gpuWorkNs)))
        .arg(p.maxConcurrency);
}

} // namespace streamscope