// The concurrency strip's axes fitted to the size the window gives it. The strip is short and, at 960x540 or
// 1280x720, narrow: lesson 11's histogram (33 rows in 120 px) cut its title to "operations runnir" and its top
// label in half, and its time axis drew seven tick labels into 110 px. The count axis: its labels and the room
// above its peak.
#include "concurrency_plot.h"

#include <QComboBox>
#include <QToolButton>

#include <algorithm>

namespace streamscope {

namespace {

// As QCPAxisPainterPrivate measures an axis label: a multi-line text's bounding box, unrotated.
QSize labelSize(const QFont& font, const QString& text)
{
    if (text.isEmpty())
        return {0, 0};
    return QFontMetrics(font).boundingRect(QRect(), Qt::TextDontClip, text).size();
}

} // namespace

QVector<double> CountTicker::createTickVector(double tickStep, const QCPRange& range)
{
    if (m_peak <= 0)
        return QCPAxisTickerFixed::createTickVector(tickStep, range);
    // tickCount(): how many gaps of two lines fit the axis' height (ConcurrencyPlot::fitCountAxis).
    const int gaps = std::max(1, tickCount());
    QVector<double> ticks{0.0};
    if (gaps > 1 && m_peak > 1) {
        // The smallest round step that leaves at most gaps - 1 ticks between 0 and the peak, each a step from the next.
        int step = 1;
        for (int scale = 1; scale <= m_peak; scale *= 10) {
            bool found = false;
            for (const int m : {1, 2, 5}) {
                step = m * scale;
                if ((m_peak - 1) / step <= gaps - 1) {
                    found = true;
                    break;
                }
            }
            if (found)
                break;
        }
        for (int v = step; v + step <= m_peak; v += step)
            ticks.push_back(v);
    }
    ticks.push_back(m_peak);
    return ticks;
}

void ConcurrencyPlot::updateCountTicks()
{
    fitCountAxis(axisRect()->height(), yAxis->tickLabelFont());
}

// The count axis for a plot `plotHeight` px high whose labels are in `font`: as many labels as fit one above the
// other with a line of room between them (a 32-stream run in the strip's 70 px drew 0, 10, 20 and 30 on top of one
// another), and over time room above the peak for half of its label: a label that would cross the widget's edge
// is not drawn at all (lesson 11's exported strip had none).
void ConcurrencyPlot::fitCountAxis(int plotHeight, const QFont& font)
{
    const int fh = QFontMetrics(font).height();
    m_countTicker->setTickCount(std::clamp(plotHeight / std::max(1, 2 * fh), 1, 5));
    m_countTicker->setPeak(m_mode == Mode::OverTime ? std::max(1, m_max) : 0); // the histogram: a tick for each row
    if (m_mode != Mode::OverTime)
        return;
    const double peak = std::max(1, m_max);
    const double share = std::clamp((fh / 2.0 + 1) / std::max(1, plotHeight), 0.0, 0.45);
    yAxis->setRange(0, std::max(peak + 0.5, peak / (1 - share)));
}

double ConcurrencyPlot::histogramRowPadding(int topRow, int labelHeight) const
{
    // pad rows of padding are pad * h / (topRow + 2 pad) pixels in an axis h pixels high; half a label line (and a
    // pixel) needs pad >= (lh / 2 + 1) topRow / (h - lh - 2).
    const int h = axisRect()->height();
    if (h <= 2 * labelHeight + 4)
        return 0.6;
    return std::max(0.6, (labelHeight / 2.0 + 1) * topRow / double(h - labelHeight - 2));
}

bool ConcurrencyPlot::fitToSize()
{
    if (m_fixedTheme) // an image: prepareForImage lays it out
        return false;
    // Before its first layout the plot has no size yet: the widget's then (the margins are applied whatever it is,
    // so that a plot squeezed to nothing once gets its room back).
    QRect plot = axisRect()->rect();
    if (plot.height() <= 1 || plot.width() <= 1)
        plot = rect();
    const bool histogramMode = m_mode == Mode::Histogram;
    const FitKey key{plot,
                     size(),
                     m_mode,
                     m_alignedMargins,
                     axisRect()->margins(),
                     m_max,
                     int(m_shown.timeAtNs.size()),
                     m_deviceBox->isVisibleTo(this),
                     m_timeLabels.isEmpty() ? QString() : m_timeLabels.front(),
                     yAxis->labelFont()};
    if (m_fitted == key)
        return false;
    bool changed = false;

    // The vertical axis' title: rotated and centred on the plot, it may reach into the margins above and below it
    // but not past the strip's edge.
    const int titleRoom = plot.height() + 2 * std::max(0, std::min(plot.top(), height() - 1 - plot.bottom()));
    const QStringList titles = histogramMode
        ? QStringList{QStringLiteral("operations running"), QStringLiteral("operations\nrunning"),
                      QStringLiteral("running")}
        : QStringList{QStringLiteral("running")};
    QString title;
    for (const QString& t : titles)
        if (labelSize(yAxis->labelFont(), t).width() <= titleRoom) {
            title = t;
            break;
        }
    if (yAxis->label() != title) {
        yAxis->setLabel(title);
        changed = true;
    }

    // The left margin: over time the timeline's, so that the two time axes line up; the mode button (and the
    // device chooser) sit in it, left of the vertical axis' title and tick labels. A histogram's time axis is its
    // own, so its margin grows to make that room; over time the button moves to the top right corner instead.
    const int top = histogramMode ? std::max(0, int(m_shown.timeAtNs.size()) - 1) : std::max(1, m_max);
    const int axisWidth = yAxis->offset() + std::max(0, yAxis->tickLengthOut()) + yAxis->tickLabelPadding()
        + QFontMetrics(yAxis->tickLabelFont()).horizontalAdvance(QString::number(top))
        + (title.isEmpty() ? 0 : yAxis->labelPadding() + labelSize(yAxis->labelFont(), title).height()) + 2;
    int controls = m_modeButton->sizeHint().width();
    if (m_deviceBox->isVisibleTo(this))
        controls = std::max(controls, m_deviceBox->sizeHint().width());
    controls += 4 + 6; // from the strip's edge, and a gap before the title
    QMargins margins = m_alignedMargins;
    bool inRightCorner = false;
    if (histogramMode)
        margins.setLeft(std::max(margins.left(), controls + axisWidth));
    else
        inRightCorner = controls + axisWidth > margins.left();
    if (inRightCorner != m_buttonInRightCorner) {
        m_buttonInRightCorner = inRightCorner;
        placeControls();
    }
    const QMargins now = axisRect()->margins();
    if (now.left() != margins.left() || now.right() != margins.right()) {
        axisRect()->setMargins(QMargins(margins.left(), now.top(), margins.right(), now.bottom()));
        changed = true;
    }

    // The histogram's time axis: tick labels a label's width apart, and its label as long as the strip is wide
    // (it is centred under the plot and may reach into the narrower margin).
    if (histogramMode && !m_timeLabels.isEmpty()) {
        const QFontMetrics tick(xAxis->tickLabelFont());
        const int tickWidth = tick.horizontalAdvance(QStringLiteral("888.8 µs")) + tick.averageCharWidth() * 2;
        const int ticks = std::clamp(plot.width() / std::max(1, tickWidth), 2, 6);
        if (m_durationTicker->tickCount() != ticks) {
            m_durationTicker->setTickCount(ticks);
            changed = true;
        }
        const int room = plot.width() + 2 * std::min(margins.left(), margins.right());
        QString label = m_timeLabels.back();
        for (const QString& t : std::as_const(m_timeLabels))
            if (labelSize(xAxis->labelFont(), t).width() <= room) {
                label = t;
                break;
            }
        if (xAxis->label() != label) {
            xAxis->setLabel(label);
            changed = true;
        }
    }
    // Fitted once nothing changes any more (a change moves the plot: the next call measures it again).
    if (changed)
        m_fitted.reset();
    else
        m_fitted = key;
    return changed;
}

} // namespace streamscope
