// The compare window's histogram: for each run, the time during which k GPU operations ran at once, as bars side by
// side per k, labelled with their duration where the bar is wide enough, in the theme's series colours (A blue, B
// vermillion).
#include "compare_view.h"

#include "concurrency_plot.h"
#include "duration_format.h"
#include "plot_theme.h"
#include "theme.h"

#include <QHelpEvent>
#include <QToolTip>

#include <algorithm>
#include <cmath>

namespace streamscope {

namespace {

// The histogram chart's tooltip: what each bar stands for.
class HistogramChart : public QCustomPlot {
public:
    using QCustomPlot::QCustomPlot;
    QString names[2];
    std::vector<int64_t> times[2];
    int64_t totals[2] = {0, 0};
    std::vector<std::pair<QCPItemText*, int>> labels; // with their text width

    // Labels wider than their bar would run into the neighbour's: those are left to the tooltip.
    void updateLabels()
    {
        const double barPx = std::abs(xAxis->coordToPixel(0.4) - xAxis->coordToPixel(0.0));
        for (auto& [label, width] : labels)
            label->setVisible(width <= barPx + 10);
    }

protected:
    bool event(QEvent* event) override
    {
        if (event->type() != QEvent::ToolTip)
            return QCustomPlot::event(event);
        auto* help = static_cast<QHelpEvent*>(event);
        const long k = std::lround(xAxis->pixelToCoord(help->pos().x()));
        QString text;
        if (axisRect()->rect().contains(help->pos()) && k >= 0) {
            text = QStringLiteral("%1 GPU operation%2 running").arg(k).arg(k == 1 ? QString() : QStringLiteral("s"));
            for (int r = 0; r < 2; ++r) {
                const int64_t ns = size_t(k) < times[r].size() ? times[r][size_t(k)] : 0;
                text += QStringLiteral("\n%1: %2")
                            .arg(r == 0 ? QStringLiteral("A") : QStringLiteral("B"), histogramBarLabel(ns, totals[r]));
            }
        }
        if (text.isEmpty())
            QToolTip::hideText();
        else
            QToolTip::showText(help->globalPos(), text, this);
        return true;
    }
};

// "4.04 ms": three significant digits, for labels on narrow bars (bar lengths are never negative).
QString shortDuration(int64_t ns)
{
    const DurationParts p = durationParts(double(ns), {DurationPrecision::Significant});
    return QString::number(p.value, 'f', p.decimals) + QLatin1Char(' ') + QString::fromUtf8(p.unit);
}

} // namespace

void CompareView::createHistogram()
{
    auto* chart = new HistogramChart;
    m_histogram = chart;
    connect(chart, &QCustomPlot::afterLayout, chart, [chart] { chart->updateLabels(); });
    m_histogram->setObjectName(QStringLiteral("compareHistogram"));
    m_histogram->setMinimumSize(320, 200);
    m_histogram->xAxis->setLabel(QStringLiteral("operations running"));
    m_histogram->yAxis->setLabel(QStringLiteral("time"));
    auto countTicker = QSharedPointer<QCPAxisTickerFixed>::create();
    countTicker->setTickStep(1.0);
    countTicker->setScaleStrategy(QCPAxisTickerFixed::ssMultiples);
    m_histogram->xAxis->setTicker(countTicker);
    m_histogram->xAxis->setSubTicks(false);
    m_histogram->xAxis->grid()->setVisible(false);
    m_histogram->yAxis->setTicker(QSharedPointer<DurationTicker>::create());
    m_histogram->yAxis->setSubTicks(false);
    m_histogram->plotLayout()->insertRow(0);
    auto* title = new QCPTextElement(m_histogram, QStringLiteral("Time with k GPU operations running"));
    title->setFont(QFont(font().family(), -1, QFont::Bold));
    m_histogram->plotLayout()->addElement(0, 0, title);
    // The legend goes in a row of its own under the title, clear of the bars.
    m_histogram->legend->setVisible(true);
    m_histogram->legend->setBorderPen(Qt::NoPen);
    m_histogram->legend->setBrush(Qt::NoBrush);
    m_histogram->legend->setFillOrder(QCPLegend::foRowsFirst);
    m_histogram->axisRect()->insetLayout()->take(m_histogram->legend);
    m_histogram->plotLayout()->insertRow(1);
    m_histogram->plotLayout()->addElement(1, 0, m_histogram->legend);
    m_histogram->plotLayout()->setRowStretchFactor(0, 0.001);
    m_histogram->plotLayout()->setRowStretchFactor(1, 0.001);
    m_histogram->plotLayout()->setRowSpacing(0);
    applyPlotTheme(*m_histogram, Theme::of(this));
}

void CompareView::fillHistogram()
{
    auto* chart = static_cast<HistogramChart*>(m_histogram);
    chart->clearPlottables();
    chart->clearItems();
    applyPlotTheme(*chart, Theme::of(this));
    if (!m_comparison)
        return;
    const TraceAnalysis* runs[2] = {&m_comparison->a, &m_comparison->b};
    const Theme& theme = Theme::of(this);
    const QColor colors[2] = {theme.seriesBlue, theme.seriesOrange};
    const QString letters[2] = {QStringLiteral("A"), QStringLiteral("B")};
    auto* group = new QCPBarsGroup(chart);
    group->setSpacingType(QCPBarsGroup::stAbsolute);
    group->setSpacing(2);
    int maxK = 0;
    double longest = 1;
    for (int r = 0; r < 2; ++r) {
        const std::vector<int64_t>& t = runs[r]->concurrency.timeAtNs;
        chart->names[r] = r == 0 ? m_nameA : m_nameB;
        chart->times[r] = t;
        chart->totals[r] = 0;
        for (int64_t v : t)
            chart->totals[r] += v;
        maxK = std::max(maxK, int(t.size()) - 1);
        for (int64_t v : t)
            longest = std::max(longest, double(v));
    }
    chart->labels.clear();
    const QFontMetrics fm(chart->font());
    for (int r = 0; r < 2; ++r) {
        auto* bars = new QCPBars(chart->xAxis, chart->yAxis);
        bars->setName(letters[r] + QStringLiteral(": ") + chart->names[r]);
        bars->setWidth(0.4);
        bars->setPen(QPen(theme.isDark ? colors[r].lighter(120) : colors[r].darker(120), 1));
        bars->setBrush(colors[r]);
        bars->setBarsGroup(group);
        const std::vector<int64_t>& t = chart->times[r];
        for (size_t k = 0; k < t.size(); ++k) {
            bars->addData(double(k), double(t[k]));
            if (t[k] <= 0)
                continue;
            const QString text = shortDuration(t[k]);
            auto* label = new QCPItemText(chart);
            chart->labels.emplace_back(label, fm.horizontalAdvance(text));
            label->position->setAxes(chart->xAxis, chart->yAxis);
            label->position->setCoords(double(k) + (r == 0 ? -0.21 : 0.21), double(t[k]));
            label->setPositionAlignment(Qt::AlignHCenter | Qt::AlignBottom);
            label->setText(text);
            label->setColor(theme.isDark ? colors[r].lighter(125) : colors[r].darker(140));
        }
    }
    chart->xAxis->setRange(-0.7, maxK + 0.7);
    chart->yAxis->setRange(0, longest * 1.15);
    chart->replot(QCustomPlot::rpQueuedReplot);
}

} // namespace streamscope
