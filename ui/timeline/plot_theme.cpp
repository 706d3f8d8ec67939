#include "plot_theme.h"

namespace streamscope {

namespace {

QPen recoloured(QPen pen, const QColor& colour)
{
    if (pen.style() != Qt::NoPen)
        pen.setColor(colour);
    return pen;
}

} // namespace

void applyPlotTheme(QCustomPlot& plot, const Theme& theme)
{
    plot.setBackground(QBrush(theme.plotBackground));
    const auto rects = plot.axisRects();
    for (QCPAxisRect* rect : rects) {
        const auto axes = rect->axes();
        for (QCPAxis* axis : axes) {
            axis->setBasePen(recoloured(axis->basePen(), theme.plotAxis));
            axis->setTickPen(recoloured(axis->tickPen(), theme.plotAxis));
            axis->setSubTickPen(recoloured(axis->subTickPen(), theme.plotSubTick));
            axis->setLabelColor(theme.plotText);
            axis->setTickLabelColor(theme.plotText);
            QCPGrid* grid = axis->grid();
            grid->setPen(recoloured(grid->pen(), theme.plotGrid));
            grid->setSubGridPen(recoloured(grid->subGridPen(), theme.plotGrid));
            grid->setZeroLinePen(recoloured(grid->zeroLinePen(), theme.plotAxis));
        }
    }
    if (QCPLegend* legend = plot.legend) {
        legend->setTextColor(theme.plotText);
        for (int i = 0; i < legend->itemCount(); ++i)
            if (QCPAbstractLegendItem* item = legend->item(i))
                item->setTextColor(theme.plotText);
    }
    const auto elements = plot.plotLayout()->elements(true);
    for (QCPLayoutElement* element : elements)
        if (auto* text = qobject_cast<QCPTextElement*>(element))
            text->setTextColor(theme.plotTitle);
}

} // namespace streamscope
