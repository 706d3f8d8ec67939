// The concurrency strip under the timeline, read in the window at 960x540, 1280x720 and 1920x1080 (and, in
// tst_concurrency_strip_scale2, at Qt's scale 2 on a 1920x1080 screen): with lesson 11 (33 histogram rows in a
// strip of about 120 px) and lesson 07 (3 rows, the GPU chooser under the button) no text of it is cut or covered,
// over time and as a histogram. At 1280x720 lesson 11's title once read "operations runnir" and its top row's label
// was cut in half. With STREAMSCOPE_LAYOUT_SHOTS=DIR the strips
// are saved there as PNGs.
#include "concurrency_plot.h"
#include "main_window.h"
#include "offscreen_screen.h"
#include "theme.h"
#include "window_fixture.h"

#include <QApplication>
#include <QDir>
#include <QScreen>
#include <QSettings>
#include <QStandardPaths>
#include <QTemporaryFile>
#include <QTest>
#include <QToolButton>

#include <algorithm>

using namespace streamscope;

namespace {

QRect textRect(const QFont& font, const QString& text)
{
    return QFontMetrics(font).boundingRect(QRect(), Qt::TextDontClip, text);
}

// What is cut or covered in the strip, in words (empty: nothing).
QStringList stripProblems(ConcurrencyPlot& strip)
{
    QStringList problems;
    const QRect plot = strip.axisRect()->rect();
    const bool histogram = strip.mode() == ConcurrencyPlot::Mode::Histogram;
    if (plot.width() < 40 || plot.height() < 20)
        problems << QStringLiteral("plot %1x%2").arg(plot.width()).arg(plot.height());

    // The vertical axis' title: whole, in the histogram always there
    const QString title = strip.yAxis->label();
    const QRect titleBox = textRect(strip.yAxis->labelFont(), title);
    if (histogram && title.isEmpty())
        problems << QStringLiteral("no title on the vertical axis");
    // (centred on the plot, it may reach into the margins above and below it, not past the strip's edge).
    const int titleRoom = plot.height() + 2 * std::min(plot.top(), strip.height() - 1 - plot.bottom());
    if (titleBox.width() > titleRoom)
        problems << QStringLiteral("title '%1' %2 px long beside a plot %3 px high in a strip %4 px high")
                        .arg(title)
                        .arg(titleBox.width())
                        .arg(plot.height())
                        .arg(strip.height());

    // The column of the vertical axis (tick labels and title) clear of the mode button.
    int tickWidth = 0;
    const auto labels = strip.yAxis->tickVectorLabels();
    for (const QString& l : labels)
        tickWidth = std::max(tickWidth, QFontMetrics(strip.yAxis->tickLabelFont()).horizontalAdvance(l));
    const int axisLeft = plot.left() - strip.yAxis->offset() - std::max(0, strip.yAxis->tickLengthOut())
        - strip.yAxis->tickLabelPadding() - tickWidth
        - (title.isEmpty() ? 0 : strip.yAxis->labelPadding() + titleBox.height());
    const QRect button = strip.modeButton()->geometry();
    if (!strip.rect().contains(button))
        problems << QStringLiteral("mode button off the strip");
    if (!strip.modeButtonInRightCorner() && button.right() >= axisLeft)
        problems << QStringLiteral("mode button up to x %1 over the vertical axis from x %2")
                        .arg(button.right())
                        .arg(axisLeft);
    if (strip.modeButtonInRightCorner() && histogram)
        problems << QStringLiteral("histogram's mode button over its plot");

    if (!histogram)
        return problems;
    // Each bar label shown inside the plot (not cut by its edge); where the rows are a line apart, every bar
    // labelled.
    const double rowPx = std::abs(strip.yAxis->coordToPixel(1) - strip.yAxis->coordToPixel(0));
    for (int i = 0; i < strip.itemCount(); ++i) {
        auto* label = qobject_cast<QCPItemText*>(strip.item(i));
        if (!label)
            continue;
        if (!label->visible() && rowPx >= QFontMetrics(label->font()).height())
            problems << QStringLiteral("no label '%1' in rows %2 px apart").arg(label->text()).arg(rowPx);
        if (!label->visible())
            continue;
        const QRectF box(label->topLeft->pixelPosition(), label->bottomRight->pixelPosition());
        if (!QRectF(plot).adjusted(-1, -1, 1, 1).contains(box))
            problems << QStringLiteral("label '%1' at (%2, %3)-(%4, %5) cut by the plot (%6, %7)-(%8, %9)")
                            .arg(label->text())
                            .arg(box.left())
                            .arg(box.top())
                            .arg(box.right())
                            .arg(box.bottom())
                            .arg(plot.left())
                            .arg(plot.top())
                            .arg(plot.right())
                            .arg(plot.bottom());
    }
    // The time axis: tick labels apart from one another, its label as wide as the strip at most.
    const auto ticks = strip.xAxis->tickVector();
    const auto tickLabels = strip.xAxis->tickVectorLabels();
    double lastRight = -1e9;
    for (qsizetype i = 0; i < ticks.size() && i < tickLabels.size(); ++i) {
        const double x = strip.xAxis->coordToPixel(ticks[i]);
        if (x < plot.left() - 1 || x > plot.right() + 1)
            continue;
        const double half = QFontMetrics(strip.xAxis->tickLabelFont()).horizontalAdvance(tickLabels[i]) / 2.0;
        if (x - half < lastRight + 2)
            problems << QStringLiteral("time tick label '%1' on the one before it").arg(tickLabels[i]);
        lastRight = x + half;
    }
    const int labelWidth = textRect(strip.xAxis->labelFont(), strip.xAxis->label()).width();
    if (labelWidth > strip.width())
        problems << QStringLiteral("time axis label '%1' %2 px wide in a strip %3 px wide")
                        .arg(strip.xAxis->label())
                        .arg(labelWidth)
                        .arg(strip.width());
    return problems;
}

// Three kernels in three streams of one GPU, all running at once in the middle: a peak of 3.
std::shared_ptr<const Trace> threeAtOnce()
{
    auto t = std::make_shared<Trace>();
    for (int s = 0; s < 3; ++s) {
        Track track;
        track.kind = TrackKind::Stream;
        track.name = "s" + std::to_string(s);
        track.device = 0;
        t->addTrack(track);
    }
    for (uint32_t s = 0; s < 3; ++s) {
        SpanInit k;
        k.track = s;
        k.kind = SpanKind::Kernel;
        k.name = "k";
        k.start = 1000 * int64_t(s);
        k.end = 10'000 - 1000 * int64_t(s);
        t->addSpan(k);
    }
    t->finalize();
    return t;
}

QRect available()
{
    return QGuiApplication::primaryScreen()->availableGeometry();
}

} // namespace

class TestConcurrencyStrip : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName(QStringLiteral("StreamScopeTest"));
        QCoreApplication::setApplicationName(QStringLiteral("tst_concurrency_strip"));
        QSettings().clear();
    }

    void cleanupTestCase() { QSettings().clear(); }

    // An exported strip (prepareForImage) labels the peak, whatever its height: one of 3 operations was labelled
    // "2" alone, and lesson 11's peak label (32, at the plot's top edge) was not drawn at all. Where two labels fit
    // one above the other, 0 as well; every label a line and a half from the next.
    void thePeakIsLabelled_data()
    {
        QTest::addColumn<int>("height");
        for (const int h : {40, 65, 90, 160, 300})
            QTest::addRow("%d px", h) << h;
    }

    void thePeakIsLabelled()
    {
        QFETCH(int, height);
        ConcurrencyPlot strip;
        strip.resize(900, height);
        strip.setTrace(threeAtOnce());
        QCOMPARE(strip.maxConcurrency(), 3);
        const int px = 11;
        strip.prepareForImage(Theme::light(), px, QMargins(120, px / 2, 10, px / 2));
        strip.replot(QCustomPlot::rpImmediateRefresh);
        const QVector<double> ticks = strip.yAxis->tickVector();
        QVERIFY(!ticks.isEmpty());
        QCOMPARE(ticks.back(), 3.0);
        const int fh = QFontMetrics(strip.yAxis->tickLabelFont()).height();
        // The peak's label lies within the widget (QCustomPlot skips a label that would cross its edge).
        QVERIFY2(
            strip.yAxis->coordToPixel(3.0) - fh / 2.0 >= 0,
            qPrintable(QStringLiteral("the peak at %1 px, font %2 px").arg(strip.yAxis->coordToPixel(3.0)).arg(fh)));
        if (strip.axisRect()->height() >= 2 * fh)
            QCOMPARE(ticks.front(), 0.0);
        for (int i = 1; i < ticks.size(); ++i)
            QVERIFY(std::abs(strip.yAxis->coordToPixel(ticks[i]) - strip.yAxis->coordToPixel(ticks[i - 1]))
                    >= 1.5 * fh);
    }

    void readableAtEverySize_data()
    {
        QTest::addColumn<QString>("lesson");
        QTest::addColumn<QSize>("size");
        QTest::addColumn<bool>("histogram");
        // Lesson 11: 33 histogram rows; lesson 07: 3 rows and the GPU chooser under the button.
        for (const char* lesson : {"11", "07"})
            for (const QSize size : {QSize(960, 540), QSize(1280, 720), QSize(1920, 1080)})
                for (const bool histogram : {true, false})
                    QTest::addRow("%s %dx%d %s", lesson, size.width(), size.height(),
                                  histogram ? "histogram" : "over time")
                        << QString::fromLatin1(lesson) << size << histogram;
    }

    void readableAtEverySize()
    {
        QFETCH(QString, lesson);
        QFETCH(QSize, size);
        QFETCH(bool, histogram);
        if (size.width() > available().width() || size.height() > available().height())
            QSKIP("a window bigger than this screen");
        auto w = testing::makeTestWindow(size);
        QVERIFY(testing::openAndRun(*w, lesson));
        QVERIFY(QTest::qWaitForWindowExposed(w.get()));
        ConcurrencyPlot* strip = w->concurrencyPlot();
        strip->setMode(histogram ? ConcurrencyPlot::Mode::Histogram : ConcurrencyPlot::Mode::OverTime);
        QTest::qWait(200); // the queued replots that fit the texts to the laid-out plot
        const QString where = QStringLiteral("window %1x%2, strip %3x%4, scale %5")
                                  .arg(w->width())
                                  .arg(w->height())
                                  .arg(strip->width())
                                  .arg(strip->height())
                                  .arg(w->devicePixelRatioF());
        if (const QString dir = qEnvironmentVariable("STREAMSCOPE_LAYOUT_SHOTS"); !dir.isEmpty()) {
            QDir().mkpath(dir);
            strip->grab().save(
                QDir(dir).filePath(QStringLiteral("strip-%1-%2x%3-%4.png")
                                       .arg(lesson)
                                       .arg(size.width())
                                       .arg(size.height())
                                       .arg(histogram ? QStringLiteral("histogram") : QStringLiteral("over-time"))));
        }
        QTRY_VERIFY2(stripProblems(*strip).isEmpty(),
                     qPrintable(where + QStringLiteral(": ") + stripProblems(*strip).join(QStringLiteral("; "))));
        if (histogram && lesson == QLatin1String("11")) {
            // Lesson 11's longest bar (all 32 streams at once) is labelled at the top of the plot.
            QVERIFY(strip->histogramBarLabels().size() == 33);
            QVERIFY2(strip->histogramBarLabels().back().contains(QLatin1Char('%')),
                     qPrintable(strip->histogramBarLabels().back()));
        }
    }
};

int main(int argc, char** argv)
{
    QTemporaryFile config(QDir::temp().filePath(QStringLiteral("tst_concurrency_strip-XXXXXX.json")));
    if (!testing::useOffscreenScreen(config, QSize(1920, 1080), QStringLiteral("Screen")))
        return 1;
    QApplication app(argc, argv);
    TestConcurrencyStrip test;
    QTEST_SET_MAIN_SOURCE_PATH
    return QTest::qExec(&test, argc, argv);
}

#include "tst_concurrency_strip.moc"
