// The timeline's bars as a class sees them at full view: ten back-to-back kernels of one stream (lesson 01's
// transposes, less than a microsecond apart) stay ten bars, each boundary a gap or a one-pixel divider in a shade of
// the bar's colour; names show in bars that have room for them, whatever the lane height, and a bar too narrow for
// its name shows its first characters and an ellipsis (its tooltip says the rest). Views shown offscreen, pixels
// read from what they painted.
#include "timeline_plottable.h"
#include "timeline_view.h"

#include <QImage>
#include <QTest>

#include <memory>

using namespace streamscope;

namespace {

// `count` kernels named `name` in one stream, `length` ns each and `gap` ns apart, from time 0.
std::shared_ptr<Trace> backToBack(int count, int64_t length, int64_t gap, const char* name = "transpose")
{
    auto t = std::make_shared<Trace>();
    Track stream;
    stream.kind = TrackKind::Stream;
    stream.name = "s2";
    t->addTrack(stream);
    for (int i = 0; i < count; ++i) {
        SpanInit init;
        init.track = 0;
        init.kind = SpanKind::Kernel;
        init.name = name;
        init.start = i * (length + gap);
        init.end = init.start + length;
        t->addSpan(init);
    }
    t->finalize();
    return t;
}

std::unique_ptr<TimelineView> show(std::shared_ptr<const Trace> trace, QSize size, int laneHeight = 0)
{
    auto v = std::make_unique<TimelineView>();
    v->resize(size);
    if (laneHeight > 0)
        v->setLaneHeight(laneHeight);
    v->setTrace(std::move(trace));
    v->show();
    if (!QTest::qWaitForWindowExposed(v.get()))
        qWarning("timeline view not exposed");
    v->replot(QCustomPlot::rpImmediateRefresh);
    return v;
}

// Widens or narrows the view, fitted to its trace, until one `period` (ns) takes about `pixels` of the chart (the
// view cannot zoom out beyond its trace).
void scale(TimelineView& v, double period, double pixels)
{
    for (int i = 0; i < 4; ++i) {
        v.fitToView();
        v.replot(QCustomPlot::rpImmediateRefresh);
        const auto [a, b] = v.visibleTimeRange();
        const double plot = v.timeAxisRect().width();
        const double wanted = pixels * (b - a) / period;
        v.resize(v.width() + int(std::lround(wanted - plot)), v.height());
        QCoreApplication::processEvents();
    }
    v.fitToView();
    v.replot(QCustomPlot::rpImmediateRefresh);
}

// The image the view shows, in widget pixels.
QImage shown(TimelineView& v)
{
    return v.grab().toImage().convertToFormat(QImage::Format_RGB32);
}

// The y of the middle of the only stream's bars.
int barMiddle(const TimelineView& v)
{
    const TimelineRow& row = v.timelineLayout().rows().back();
    return int(std::lround(v.yAxis->coordToPixel(row.firstLane + 0.5)));
}

// The columns of `y` painted in `colour`, as runs [from, to).
std::vector<std::pair<int, int>> runsOf(const QImage& image, int y, QColor colour, int x0, int x1)
{
    std::vector<std::pair<int, int>> runs;
    for (int x = x0; x < x1; ++x) {
        if (QColor(image.pixel(x, y)) != colour)
            continue;
        if (!runs.empty() && runs.back().second == x)
            ++runs.back().second;
        else
            runs.push_back({x, x + 1});
    }
    return runs;
}

// Colours equal but for 8-bit rounding.
bool near(const QColor& a, const QColor& b)
{
    return std::abs(a.red() - b.red()) <= 2 && std::abs(a.green() - b.green()) <= 2
        && std::abs(a.blue() - b.blue()) <= 2;
}

} // namespace

class TestTimelineBars : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // Lesson 01's ten transposes at 1280x720: 172 us each, 0.68 us apart, about 23 px at full view. Every boundary
    // shows, as a gap or as a divider of the shade spanDividerColor gives; the bars keep their colour.
    void backToBackBarsStayApart()
    {
        const auto trace = backToBack(10, 172'220, 676);
        auto v = show(trace, {900, 300});
        scale(*v, 172'896, 23.7);
        const QImage image = shown(*v);
        const QRect area = v->timeAxisRect();
        const int y = barMiddle(*v);
        const QColor bar = spanKindColor(SpanKind::Kernel, v->theme());
        const QColor divider = spanDividerColor(SpanKind::Kernel, v->theme());
        QVERIFY(divider != bar);
        QVERIFY(divider != v->theme().plotBackground);
        // Between two bars of the kernel colour, at least one column that is not: a gap or a divider.
        const auto runs = runsOf(image, y + 3, bar, area.left(), area.right()); // below the labels' middle
        QVERIFY2(runs.size() == 10, qPrintable(QString::number(runs.size())));
        int dividers = 0;
        for (size_t i = 1; i < runs.size(); ++i) {
            const int between = runs[i].first - runs[i - 1].second;
            QVERIFY2(between >= 1 && between <= 2, qPrintable(QString::number(between)));
            dividers += near(QColor(image.pixel(runs[i - 1].second, y + 3)), divider) ? 1 : 0;
        }
        QVERIFY2(dividers >= 3, qPrintable(QString::number(dividers))); // the rest fell on pixel boundaries
        // The draw list says so too: each bar after the first is a divider's or a gap's away from the one before.
        TimelineDrawList list;
        v->spansPlottable()->computeDrawList(list);
        QCOMPARE(list.runs.size(), size_t(10));
        for (size_t i = 1; i < list.runs.size(); ++i)
            QVERIFY(list.runs[i].divider || list.runs[i].x0 > list.runs[i - 1].x1);
    }

    // Bars narrower than 3 px get no divider: they are a texture at that size, not bars to count.
    void thinBarsHaveNoDivider()
    {
        const auto trace = backToBack(100, 20'000, 100);
        auto v = show(trace, {900, 300});
        scale(*v, 20'100, 2.5);
        TimelineDrawList list;
        v->spansPlottable()->computeDrawList(list);
        for (const TimelineDrawList::Run& r : list.runs)
            QVERIFY(!r.divider);
    }

    // Tall lanes (an exported slide: rows that fill the image) label a bar that has room for its name: the 44 px
    // transposes of a 900 px export of lesson 01 were left blank because the threshold grew with the lane height.
    void labelsInTallLanes()
    {
        const auto trace = backToBack(10, 172'220, 676);
        auto v = show(trace, {900, 400}, 60);
        v->spansPlottable()->setMaxLabelPixelSize(12);
        scale(*v, 172'896, 44);
        TimelineDrawList list;
        v->spansPlottable()->computeDrawList(list);
        QVERIFY(list.runs.size() == 10 && list.runs[0].x1 - list.runs[0].x0 >= 40);
        QCOMPARE(list.labels.size(), size_t(10));
        // And the text is there: pixels of the label colour inside every bar.
        const QImage image = shown(*v);
        const QColor text = spanKindTextColor(SpanKind::Kernel, v->theme());
        const QColor bar = spanKindColor(SpanKind::Kernel, v->theme());
        for (const auto& label : list.labels) {
            int inked = 0;
            for (int y = label.rect.top(); y <= label.rect.bottom(); ++y)
                for (int x = label.rect.left(); x <= label.rect.right(); ++x) {
                    const QColor c(image.pixel(x, y));
                    inked += c != bar && std::abs(c.lightness() - text.lightness()) < 60 ? 1 : 0;
                }
            QVERIFY2(inked >= 10, qPrintable(QString::number(inked)));
        }
    }

    // A bar too narrow for its whole name still says which op it is: its first characters and an ellipsis.
    void narrowBarsShowTheStartOfTheirName()
    {
        const auto trace = backToBack(10, 172'220, 676);
        auto v = show(trace, {900, 300});
        scale(*v, 172'896, 23.7);
        TimelineDrawList list;
        v->spansPlottable()->computeDrawList(list);
        QVERIFY(!list.runs.empty());
        const int width = list.runs[0].x1 - list.runs[0].x0;
        QVERIFY2(width >= 20 && width <= 26, qPrintable(QString::number(width))); // as at 1280x720
        QVERIFY2(list.labels.size() >= 8, qPrintable(QString::number(list.labels.size())));
        const QImage image = shown(*v);
        const QColor text = spanKindTextColor(SpanKind::Kernel, v->theme());
        const QColor bar = spanKindColor(SpanKind::Kernel, v->theme());
        int labelled = 0;
        for (const auto& label : list.labels) {
            int inked = 0;
            for (int y = label.rect.top(); y <= label.rect.bottom(); ++y)
                for (int x = label.rect.left(); x <= label.rect.right(); ++x) {
                    const QColor c(image.pixel(x, y));
                    inked += c != bar && std::abs(c.lightness() - text.lightness()) < 60 ? 1 : 0;
                }
            labelled += inked >= 6 ? 1 : 0;
        }
        QVERIFY2(labelled >= 8, qPrintable(QString::number(labelled)));
        // The tooltip names the whole op.
        QVERIFY(v->spanToolTip(0).contains(QStringLiteral("transpose")));
    }
};

QTEST_MAIN(TestTimelineBars)
#include "tst_timeline_bars.moc"
