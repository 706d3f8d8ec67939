// The window in front of a class, on a 1280×720 screen (the offscreen platform configured so): Help ▸ About with
// the version and About Qt; Save As (Ctrl+Shift+S) and Quit (Ctrl+Q) on every key scheme and while presentation
// mode hides the menu bar; a geometry and dock layout saved on a bigger screen restored to fit this one (in the
// compact layout on a small screen); a window made smaller than the compact size gets that layout, and the wide one
// again when it grows, unless the user arranged the docks; View ▸ Reset Layout puts
// the docks back and the window at its default size; the compare window fits the screen with its table and Close
// button on it; the timeline shows rows, in the default layout and maximized with the sweep (and, in
// tst_window_layout_scale2, at Qt's scale 2 on a 1920×1080 screen), the whole window on the screen with the sweep
// open; presentation mode there too. With STREAMSCOPE_LAYOUT_SHOTS=DIR the About box,
// the compare window and the window of the rows check are saved there as PNGs.
#include "compare_view.h"
#include "concurrency_plot.h"
#include "main_window.h"
#include "offscreen_screen.h"
#include "presentation_mode.h"
#include "screen_fit.h"
#include "sweep_view.h"
#include "timeline_view.h"
#include "window_fixture.h"

#include <QAction>
#include <QApplication>
#include <QDir>
#include <QDockWidget>
#include <QHeaderView>
#include <QLabel>
#include <QMessageBox>
#include <QPushButton>
#include <QScreen>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTableWidget>
#include <QTemporaryFile>
#include <QTest>
#include <QToolBar>

#include <map>
#include <memory>

using namespace streamscope;

namespace {

constexpr QSize kScreen{1280, 720};

struct DockPlace {
    Qt::DockWidgetArea area;
    bool visible;
    bool floating;
    QStringList tabbedWith;
    bool operator==(const DockPlace&) const = default;
};

std::map<QString, DockPlace> dockPlaces(const QMainWindow& w)
{
    std::map<QString, DockPlace> places;
    const auto docks = w.findChildren<QDockWidget*>();
    for (QDockWidget* d : docks) {
        QStringList tabbed;
        const auto others = w.tabifiedDockWidgets(d);
        for (const QDockWidget* o : others)
            tabbed << o->objectName();
        tabbed.sort();
        places[d->objectName()] = {w.dockWidgetArea(d), !d->isHidden(), d->isFloating(), tabbed};
    }
    return places;
}

QString describe(const std::map<QString, DockPlace>& places)
{
    QStringList out;
    for (const auto& [name, p] : places)
        out << QStringLiteral("%1: area %2 %3%4 [%5]")
                   .arg(name)
                   .arg(int(p.area))
                   .arg(p.visible ? QStringLiteral("shown") : QStringLiteral("hidden"))
                   .arg(p.floating ? QStringLiteral(" floating") : QString())
                   .arg(p.tabbedWith.join(QLatin1Char(',')));
    return out.join(QStringLiteral("; "));
}

QRect available()
{
    return QGuiApplication::primaryScreen()->availableGeometry();
}

void shot(QWidget* w, const QString& name)
{
    const QString dir = qEnvironmentVariable("STREAMSCOPE_LAYOUT_SHOTS");
    if (dir.isEmpty())
        return;
    QDir().mkpath(dir);
    QTest::qWait(300);
    QVERIFY(w->grab().save(QDir(dir).filePath(name + QStringLiteral(".png"))));
}

// What holds a window's minimum up, for failure messages: its bars, the centre and every dock shown.
QString minimums(const MainWindow& w)
{
    QStringList out;
    auto add = [&out](const QString& name, const QWidget* x) {
        if (!x || !x->isVisible())
            return;
        const QSize m = x->minimumSizeHint().expandedTo(x->minimumSize());
        out << QStringLiteral("%1 %2x%3 (now %4x%5)")
                   .arg(name)
                   .arg(m.width())
                   .arg(m.height())
                   .arg(x->width())
                   .arg(x->height());
    };
    add(QStringLiteral("menu"), w.menuWidget());
    add(QStringLiteral("centre"), w.centralWidget());
    add(QStringLiteral("timeline"), w.timeline());
    add(QStringLiteral("strip"), w.concurrencyPlot());
    const auto bars = w.findChildren<QToolBar*>(Qt::FindDirectChildrenOnly);
    for (const QToolBar* b : bars)
        add(b->objectName(), b);
    const auto docks = w.findChildren<QDockWidget*>(Qt::FindDirectChildrenOnly);
    for (const QDockWidget* d : docks)
        add(d->objectName(), d);
    return out.join(QStringLiteral("; "));
}

int actionsWithKey(const QWidget& w, const QKeySequence& key)
{
    int n = 0;
    const auto actions = w.findChildren<QAction*>();
    for (const QAction* a : actions)
        n += a->shortcuts().contains(key) ? 1 : 0;
    return n;
}

} // namespace

class TestWindowLayout : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName(QStringLiteral("StreamScopeTest"));
        QCoreApplication::setApplicationName(QStringLiteral("tst_window_layout"));
        QSettings().clear();
        if (qEnvironmentVariableIsEmpty("STREAMSCOPE_LAYOUT_SCREEN"))
            QCOMPARE(QGuiApplication::primaryScreen()->geometry().size(), kScreen);
    }

    void cleanup() { QSettings().clear(); }

    void fitWithinTheScreen()
    {
        const QRect screen(0, 0, 1280, 720);
        QCOMPARE(fitWithin(QRect(100, 80, 1600, 1000), screen), screen);
        QCOMPARE(fitWithin(QRect(100, 80, 1600, 1000), screen, QMargins(4, 30, 4, 4)), QRect(4, 30, 1272, 686));
        QCOMPARE(fitWithin(QRect(900, 600, 800, 400), screen), QRect(480, 320, 800, 400)); // moved in, not shrunk
        QCOMPARE(fitWithin(QRect(-50, -20, 400, 300), screen), QRect(0, 0, 400, 300));
        QCOMPARE(fitWithin(QRect(10, 10, 400, 300), screen), QRect(10, 10, 400, 300));
        QCOMPARE(sizeWithin(QSize(1400, 950), screen, 0.9), QSize(1152, 648));
        QCOMPARE(sizeWithin(QSize(800, 600), screen, 0.9), QSize(800, 600));
    }

    void aboutShowsTheVersion()
    {
        auto w = testing::makeTestWindow({1200, 680});
        auto* about = w->findChild<QAction*>(QStringLiteral("about"));
        auto* aboutQt = w->findChild<QAction*>(QStringLiteral("about-qt"));
        QVERIFY(about && aboutQt);
        QCOMPARE(aboutQt->text(), QStringLiteral("About &Qt"));
        QCOMPARE(aboutQt->menuRole(), QAction::AboutQtRole);
        about->trigger();
        QMessageBox* box = nullptr;
        QTRY_VERIFY((box = w->findChild<QMessageBox*>(QStringLiteral("aboutBox"))) && box->isVisible());
        QVERIFY2(box->text().contains(QStringLiteral("StreamScope")), qPrintable(box->text()));
        QVERIFY2(box->text().contains(QStringLiteral(STREAMSCOPE_VERSION)), qPrintable(box->text()));
        // The libraries' licences, and no licence StreamScope does not have.
        QVERIFY2(box->text().contains(QStringLiteral("QCustomPlot 2."))
                     && box->text().contains(QStringLiteral("GPL-3+")),
                 qPrintable(box->text()));
        QVERIFY2(box->text().contains(QStringLiteral("declares none")), qPrintable(box->text()));
        // What it runs on, for a bug report.
        QVERIFY2(box->text().contains(QStringLiteral("Qt ") + QString::fromLatin1(qVersion())),
                 qPrintable(box->text()));
        QVERIFY2(box->text().contains(QStringLiteral("QCustomPlot 2.")), qPrintable(box->text()));
        shot(box, QStringLiteral("about"));
        box->accept();
        QTRY_VERIFY(!w->findChild<QMessageBox*>(QStringLiteral("aboutBox")));
    }

    void saveAsAndQuitKeys()
    {
        auto w = testing::makeTestWindow({1200, 680});
        const QKeySequence saveAsKey(Qt::CTRL | Qt::SHIFT | Qt::Key_S), quitKey(Qt::CTRL | Qt::Key_Q);
        auto* saveAs = w->findChild<QAction*>(QStringLiteral("save-as"));
        auto* quit = w->findChild<QAction*>(QStringLiteral("quit"));
        QVERIFY(saveAs && quit);
        QVERIFY(saveAs->shortcuts().contains(saveAsKey));
        QVERIFY(quit->shortcuts().contains(quitKey));
        for (const QKeySequence& k : QKeySequence::keyBindings(QKeySequence::SaveAs))
            QVERIFY(saveAs->shortcuts().contains(k));
        // One action each, on the window itself (they work while the menu bar is hidden).
        QCOMPARE(actionsWithKey(*w, saveAsKey), 1);
        QCOMPARE(actionsWithKey(*w, quitKey), 1);
        QVERIFY(w->actions().contains(saveAs));
        QVERIFY(w->actions().contains(quit));
        // Not Delete: the editor's stays the scenario tree's.
        QCOMPARE(actionsWithKey(*w, QKeySequence(QKeySequence::Delete)), 1);
        for (const QAction* a : w->actions())
            QVERIFY2(!a->shortcuts().contains(QKeySequence(QKeySequence::Delete)), qPrintable(a->text()));
    }

    void quitWorksWhilePresenting()
    {
        auto w = testing::makeTestWindow({1200, 680});
        QVERIFY(testing::openAndRun(*w, QStringLiteral("01")));
        w->activateWindow(); // window shortcuts go to the active window
        QVERIFY(QTest::qWaitForWindowActive(w.get()));
        auto* presentation = w->findChild<PresentationMode*>();
        QVERIFY(presentation);
        presentation->enter();
        QVERIFY(presentation->isActive());
        QTest::keyClick(w.get(), Qt::Key_Q, Qt::ControlModifier);
        QTRY_VERIFY(!w->isVisible());
        QVERIFY(!presentation->isActive());
    }

    void oversizedSavedGeometryFitsTheScreen()
    {
        QByteArray saved;
        {
            MainWindow big;
            big.setGpuProbeEnabled(false);
            big.setGeometry(QRect(60, 40, 1600, 1000));
            saved = big.saveGeometry();
        }
        QSettings().setValue(QStringLiteral("window/geometry"), saved);
        MainWindow w;
        w.setGpuProbeEnabled(false);
        w.setUnsavedPrompt([] { return MainWindow::UnsavedChoice::Discard; });
        QVERIFY2(available().contains(w.geometry()),
                 qPrintable(QStringLiteral("%1,%2 %3x%4").arg(w.x()).arg(w.y()).arg(w.width()).arg(w.height())));
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QTRY_VERIFY2(available().contains(w.frameGeometry()),
                     qPrintable(QStringLiteral("%1,%2 %3x%4")
                                    .arg(w.frameGeometry().x())
                                    .arg(w.frameGeometry().y())
                                    .arg(w.frameGeometry().width())
                                    .arg(w.frameGeometry().height())));
        QVERIFY(w.width() >= 1000); // shrunk to the screen, not to nothing
    }

    // A window closed on a big screen, with its docks right of and below the timeline, opened again on this one: it
    // fits the screen, and on a screen below the compact size (tst_window_layout_scale2: 960x540) its docks are
    // tabs of one column on the left, as a first start there would place them; on a bigger screen the saved layout
    // stays as it was.
    void savedLayoutFitsASmallScreen()
    {
        QByteArray geometry, state;
        {
            MainWindow big;
            big.setGpuProbeEnabled(false);
            big.setUnsavedPrompt([] { return MainWindow::UnsavedChoice::Discard; });
            // The layout of a big screen, whatever this one is.
            auto* spans = big.findChild<QDockWidget*>(QStringLiteral("spansDock"));
            auto* analysis = big.findChild<QDockWidget*>(QStringLiteral("analysisDock"));
            auto* inspector = big.findChild<QDockWidget*>(QStringLiteral("inspectorDock"));
            big.addDockWidget(Qt::RightDockWidgetArea, analysis);
            big.addDockWidget(Qt::RightDockWidgetArea, inspector);
            big.addDockWidget(Qt::BottomDockWidgetArea, spans);
            big.setGeometry(QRect(60, 40, 1600, 1000));
            big.show();
            QVERIFY(QTest::qWaitForWindowExposed(&big));
            QCOMPARE(big.dockWidgetArea(spans), Qt::BottomDockWidgetArea);
            geometry = big.saveGeometry();
            state = big.saveState();
        }
        QSettings().setValue(QStringLiteral("window/geometry"), geometry);
        QSettings().setValue(QStringLiteral("window/state"), state);
        MainWindow w;
        w.setGpuProbeEnabled(false);
        w.setUnsavedPrompt([] { return MainWindow::UnsavedChoice::Discard; });
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        const QRect room = available();
        const bool small = room.width() < MainWindow::kCompactLayoutSize.width()
            || room.height() < MainWindow::kCompactLayoutSize.height();
        const auto places = dockPlaces(w);
        const QString where =
            QStringLiteral("screen %1x%2: %3").arg(room.width()).arg(room.height()).arg(describe(places));
        for (const auto& [name, place] : places) {
            QVERIFY2(!place.floating, qPrintable(where));
            if (small)
                QVERIFY2(place.area == Qt::LeftDockWidgetArea, qPrintable(where));
        }
        if (!small) {
            QCOMPARE(places.at(QStringLiteral("spansDock")).area, Qt::BottomDockWidgetArea);
            QCOMPARE(places.at(QStringLiteral("analysisDock")).area, Qt::RightDockWidgetArea);
        } else {
            QVERIFY2(places.at(QStringLiteral("scenarioDock")).tabbedWith.contains(QStringLiteral("spansDock")),
                     qPrintable(where));
        }
        QTRY_VERIFY2(room.contains(w.frameGeometry()),
                     qPrintable(QStringLiteral("%1,%2 %3x%4, %5")
                                    .arg(w.frameGeometry().x())
                                    .arg(w.frameGeometry().y())
                                    .arg(w.frameGeometry().width())
                                    .arg(w.frameGeometry().height())
                                    .arg(where)));
        const QSize least = w.minimumSizeHint().expandedTo(w.minimumSize());
        QVERIFY2(least.width() <= room.width() && least.height() <= room.height(),
                 qPrintable(QStringLiteral("minimum %1x%2, %3").arg(least.width()).arg(least.height()).arg(where)));
        // The timeline keeps its rows.
        QTRY_VERIFY2(w.timeline()->timeAxisRect().height() >= 4 * w.timeline()->laneHeight(), qPrintable(where));
    }

    void resetLayoutRestoresTheDocks()
    {
        auto w = testing::makeTestWindow({1200, 680});
        QVERIFY(QTest::qWaitForWindowExposed(w.get()));
        const auto defaults = dockPlaces(*w);
        QCOMPARE(defaults.at(QStringLiteral("scenarioDock")).area, Qt::LeftDockWidgetArea);
        QVERIFY(!defaults.at(QStringLiteral("sweepDock")).visible);

        // Rearranged by hand: closed, floated, moved, the sweep shown, the window small.
        w->findChild<QDockWidget*>(QStringLiteral("inspectorDock"))->close();
        w->findChild<QDockWidget*>(QStringLiteral("spansDock"))->close();
        w->findChild<QDockWidget*>(QStringLiteral("analysisDock"))->setFloating(true);
        w->addDockWidget(Qt::RightDockWidgetArea, w->findChild<QDockWidget*>(QStringLiteral("scenarioDock")));
        w->findChild<QDockWidget*>(QStringLiteral("sweepDock"))->show();
        w->resize(700, 500);
        QTest::qWait(50);
        QVERIFY(dockPlaces(*w) != defaults);

        auto* reset = w->findChild<QAction*>(QStringLiteral("reset-layout"));
        QVERIFY(reset);
        reset->trigger();
        QCOMPARE(describe(dockPlaces(*w)), describe(defaults));
        QTRY_VERIFY(available().contains(w->frameGeometry()));
        QVERIFY2(w->width() >= kScreen.width() - 40 && w->height() >= kScreen.height() - 80,
                 qPrintable(QStringLiteral("%1x%2").arg(w->width()).arg(w->height())));
        // The side docks at their widths again.
        auto* scenario = w->findChild<QDockWidget*>(QStringLiteral("scenarioDock"));
        QTRY_VERIFY2(scenario->width() > 250 && scenario->width() < 500,
                     qPrintable(QString::number(scenario->width())));
    }

    // A window made smaller than the compact size gets the compact layout, and the wide one again when it grows
    // back (a half-screen window had kept the docks beside the timeline); docks the user arranged stay where they are.
    void docksFollowTheWindowSize()
    {
        auto w = testing::makeTestWindow({1200, 680});
        QVERIFY(QTest::qWaitForWindowExposed(w.get()));
        const auto area = [&w](const char* name) {
            return w->dockWidgetArea(w->findChild<QDockWidget*>(QLatin1String(name)));
        };
        QCOMPARE(area("analysisDock"), Qt::RightDockWidgetArea);
        QCOMPARE(area("spansDock"), Qt::BottomDockWidgetArea);
        const int wideTimeline = w->timeline()->width();

        w->resize(900, 600);
        QTRY_COMPARE(area("analysisDock"), Qt::LeftDockWidgetArea);
        for (const auto& [name, place] : dockPlaces(*w))
            QVERIFY2(place.area == Qt::LeftDockWidgetArea && !place.floating, qPrintable(describe(dockPlaces(*w))));
        QVERIFY(dockPlaces(*w).at(QStringLiteral("scenarioDock")).tabbedWith.contains(QStringLiteral("spansDock")));
        QTRY_VERIFY2(w->timeline()->width() > 900 / 2,
                     qPrintable(QStringLiteral("timeline %1 px wide").arg(w->timeline()->width())));

        w->resize(1200, 680);
        QTRY_COMPARE(area("analysisDock"), Qt::RightDockWidgetArea);
        QCOMPARE(area("spansDock"), Qt::BottomDockWidgetArea);
        QTRY_COMPARE(w->timeline()->width(), wideTimeline);

        // Arranged by hand: a dock floated. Smaller again, nothing moves.
        w->findChild<QDockWidget*>(QStringLiteral("inspectorDock"))->setFloating(true);
        w->resize(900, 600);
        QTest::qWait(400);
        QCOMPARE(area("analysisDock"), Qt::RightDockWidgetArea);
        QCOMPARE(area("spansDock"), Qt::BottomDockWidgetArea);
        QVERIFY(w->findChild<QDockWidget*>(QStringLiteral("inspectorDock"))->isFloating());
    }

    // Every dock moved to the left by hand in a wide window looks like the compact layout, but it is the user's: a
    // resize keeps it (the wide layout came back), and so does the next start. Reset Layout gives the window's
    // layouts back, and with them a resize follows the size again.
    void docksMovedByHandStay()
    {
        if (available().width() < MainWindow::kCompactLayoutSize.width()
            || available().height() < MainWindow::kCompactLayoutSize.height())
            QSKIP("needs a screen with room for the wide layout");
        auto w = testing::makeTestWindow({1200, 680});
        QVERIFY(QTest::qWaitForWindowExposed(w.get()));
        const auto allLeft = [](const MainWindow& win) {
            const auto places = dockPlaces(win);
            return std::all_of(places.begin(), places.end(), [](const auto& p) {
                return p.second.area == Qt::LeftDockWidgetArea && !p.second.floating;
            });
        };
        QCOMPARE(w->dockWidgetArea(w->findChild<QDockWidget*>(QStringLiteral("spansDock"))), Qt::BottomDockWidgetArea);
        QDockWidget* last = w->findChild<QDockWidget*>(QStringLiteral("scenarioDock"));
        for (const char* name : {"analysisDock", "inspectorDock", "runInfoDock", "spansDock", "sweepDock"}) {
            QDockWidget* d = w->findChild<QDockWidget*>(QLatin1String(name));
            w->addDockWidget(Qt::LeftDockWidgetArea, d);
            w->tabifyDockWidget(last, d);
            last = d;
        }
        QVERIFY2(allLeft(*w), qPrintable(describe(dockPlaces(*w))));
        w->resize(1250, 700);
        QTest::qWait(400);
        QVERIFY2(allLeft(*w), qPrintable(describe(dockPlaces(*w))));

        // Closed and opened again: still the user's.
        w->close();
        w.reset();
        auto again = testing::makeTestWindow({1200, 680});
        QVERIFY(QTest::qWaitForWindowExposed(again.get()));
        QVERIFY2(allLeft(*again), qPrintable(describe(dockPlaces(*again))));
        again->resize(1250, 700);
        QTest::qWait(400);
        QVERIFY2(allLeft(*again), qPrintable(describe(dockPlaces(*again))));

        // Reset Layout: the wide layout, and the compact one when the window gets small.
        again->findChild<QAction*>(QStringLiteral("reset-layout"))->trigger();
        again->resize(1200, 680);
        const auto area = [&again](const char* name) {
            return again->dockWidgetArea(again->findChild<QDockWidget*>(QLatin1String(name)));
        };
        QTRY_COMPARE(area("spansDock"), Qt::BottomDockWidgetArea);
        again->resize(900, 600);
        QTRY_COMPARE(area("analysisDock"), Qt::LeftDockWidgetArea);
        again->resize(1200, 680);
        QTRY_COMPARE(area("analysisDock"), Qt::RightDockWidgetArea);
    }

    // The timeline shows rows on this screen: in the default layout, and maximized with the Sweep dock and the
    // concurrency histogram open (at 1280x720 the timeline once had 50 px and no row). Run again at Qt's scale 2
    // on a 1920x1080 screen (ctest tst_window_layout_scale2: 960x540 logical pixels).
    void timelineRowsVisible()
    {
        // At the size it opens at on this screen.
        auto w = std::make_unique<MainWindow>();
        w->setGpuProbeEnabled(false);
        w->setUnsavedPrompt([] { return MainWindow::UnsavedChoice::Discard; });
        w->show();
        QVERIFY(testing::openAndRun(*w, QStringLiteral("11")));
        QVERIFY(QTest::qWaitForWindowExposed(w.get()));
        TimelineView* timeline = w->timeline();
        const auto rows = [&] {
            return double(timeline->timeAxisRect().height()) / std::max(1, timeline->laneHeight());
        };
        const QString where = QStringLiteral("screen %1x%2, scale %3")
                                  .arg(available().width())
                                  .arg(available().height())
                                  .arg(w->devicePixelRatioF());
        QTRY_VERIFY2(available().contains(w->frameGeometry()), qPrintable(where));
        QTRY_VERIFY2(rows() >= 6, qPrintable(QStringLiteral("%1 rows, %2").arg(rows()).arg(where)));
        w->findChild<QAction*>(QStringLiteral("sweep"))->trigger(); // Analysis ▸ Sweep: the dock shown and raised
        w->concurrencyPlot()->setMode(ConcurrencyPlot::Mode::Histogram);
        w->showMaximized();
        QTest::qWait(100);
        shot(w.get(), QStringLiteral("rows-") + QString::number(available().width()));
        QTRY_VERIFY2(rows() >= 4,
                     qPrintable(QStringLiteral("%1 rows maximized with the sweep, %2").arg(rows()).arg(where)));
        QTRY_VERIFY2(w->frameGeometry().width() <= available().width(),
                     qPrintable(QStringLiteral("%1 wide (minimum %2) on %3")
                                    .arg(w->frameGeometry().width())
                                    .arg(w->minimumSizeHint().width())
                                    .arg(where)));
        // The whole window on the screen, and not held bigger by its minimum (at scale 2 the sweep once made it
        // 603 px high on a 540 px screen).
        const QSize least = w->minimumSizeHint().expandedTo(w->minimumSize());
        QVERIFY2(least.width() <= available().width() && least.height() <= available().height(),
                 qPrintable(QStringLiteral("minimum %1x%2, %3: %4")
                                .arg(least.width())
                                .arg(least.height())
                                .arg(where, minimums(*w))));
        QTRY_VERIFY2(w->frameGeometry().height() <= available().height(),
                     qPrintable(QStringLiteral("%1 high, %2").arg(w->frameGeometry().height()).arg(where)));
        // The histogram's labels (lesson 11 has 33 rows) never on top of one another.
        {
            ConcurrencyPlot* strip = w->concurrencyPlot();
            QTRY_VERIFY(strip->itemCount() > 0);
            QTest::qWait(100);
            std::vector<std::pair<double, QString>> shown;
            for (int i = 0; i < strip->itemCount(); ++i)
                if (auto* label = qobject_cast<QCPItemText*>(strip->item(i)); label && label->visible())
                    shown.push_back({label->position->pixelPosition().y(), label->text()});
            std::sort(shown.begin(), shown.end());
            const int lineHeight = QFontMetrics(qobject_cast<QCPItemText*>(strip->item(0))->font()).height();
            for (size_t i = 1; i < shown.size(); ++i)
                QVERIFY2(shown[i].first - shown[i - 1].first >= lineHeight - 1,
                         qPrintable(QStringLiteral("'%1' at %2 and '%3' at %4 (a line is %5 px), %6")
                                        .arg(shown[i - 1].second)
                                        .arg(shown[i - 1].first)
                                        .arg(shown[i].second)
                                        .arg(shown[i].first)
                                        .arg(lineHeight)
                                        .arg(where
                                             + QStringLiteral(" row %1 px, %2 labels")
                                                   .arg(strip->yAxis->coordToPixel(0) - strip->yAxis->coordToPixel(1))
                                                   .arg(shown.size()))));
        }
        // The sweep is there to be used: its dock on screen with room for its plot.
        auto* sweep = w->findChild<QDockWidget*>(QStringLiteral("sweepDock"));
        QVERIFY(sweep->isVisible());
        QVERIFY2(
            sweep->width() >= 200 && sweep->height() >= 150,
            qPrintable(QStringLiteral("sweep dock %1x%2, %3").arg(sweep->width()).arg(sweep->height()).arg(where)));
        // Its chart as wide as the column allows: in a narrow column the controls, chart and table are stacked (side
        // by side the chart was 220 px of a 384 px column at scale 2).
        auto* sweepPlot = sweep->findChild<QWidget*>(QStringLiteral("sweepPlot"));
        QVERIFY(sweepPlot);
        const int wanted = sweep->width() < SweepView::kSideBySideWidth ? sweep->width() - 60 : 300;
        QTRY_VERIFY2(sweepPlot->width() >= wanted && sweepPlot->height() >= 150,
                     qPrintable(QStringLiteral("sweep chart %1x%2 in a dock %3 wide, %4")
                                    .arg(sweepPlot->width())
                                    .arg(sweepPlot->height())
                                    .arg(sweep->width())
                                    .arg(where)));
        // And smaller again after maximized (no minimum left behind by the wider view), the timeline's rows still
        // there.
        w->showNormal();
        const QSize smaller = available().size() - QSize(60, 20);
        w->resize(smaller);
        QTRY_COMPARE(w->size(), smaller);
        QTRY_VERIFY2(rows() >= 4, qPrintable(QStringLiteral("%1 rows after maximized, %2").arg(rows()).arg(where)));
    }

    // Presentation mode on this screen, with the sweep open: the explanation below or beside the timeline, never
    // over it, the timeline's rows visible, and on leaving the window as it was (run again at scale 2 by
    // tst_window_layout_scale2).
    void presentsOnThisScreen()
    {
        auto w = std::make_unique<MainWindow>();
        w->setGpuProbeEnabled(false);
        w->setUnsavedPrompt([] { return MainWindow::UnsavedChoice::Discard; });
        w->show();
        QVERIFY(QTest::qWaitForWindowExposed(w.get()));
        QVERIFY(testing::openAndRun(*w, QStringLiteral("01"), {}, 60000));
        w->findChild<QAction*>(QStringLiteral("sweep"))->trigger();
        QTest::qWait(100);
        const QRect geometry = w->geometry();
        const auto docksBefore = describe(dockPlaces(*w));
        auto* p = w->findChild<PresentationMode*>();
        QVERIFY(p);
        p->enter();
        p->step();
        QTRY_COMPARE_WITH_TIMEOUT(p->runState(), PresentationMode::RunState::Finished, 60000);
        p->step();
        p->step();
        QCOMPARE(p->currentStep(), PresentationMode::Step::Explanation);
        QTRY_VERIFY(w->timeline()->isVisible());
        QTest::qWait(200);
        auto* panel = p->stage()->findChild<QLabel*>(QStringLiteral("presentationExplanation"));
        QVERIFY(panel && panel->isVisible());
        const QRect timelineRect(w->timeline()->mapTo(p->stage(), QPoint(0, 0)), w->timeline()->size());
        const QString where = QStringLiteral("screen %1x%2: explanation %3,%4 %5x%6, timeline %7,%8 %9x%10")
                                  .arg(available().width())
                                  .arg(available().height())
                                  .arg(panel->geometry().x())
                                  .arg(panel->geometry().y())
                                  .arg(panel->width())
                                  .arg(panel->height())
                                  .arg(timelineRect.x())
                                  .arg(timelineRect.y())
                                  .arg(timelineRect.width())
                                  .arg(timelineRect.height());
        QVERIFY2(!panel->geometry().intersects(timelineRect), qPrintable(where));
        QVERIFY2(p->stage()->rect().contains(panel->geometry()), qPrintable(where));
        QVERIFY2(w->timeline()->timeAxisRect().height() >= 2 * w->timeline()->laneHeight(), qPrintable(where));
        shot(w.get(), QStringLiteral("presentation-") + QString::number(available().width()));
        p->leave();
        QTRY_COMPARE(w->geometry(), geometry);
        QCOMPARE(describe(dockPlaces(*w)), docksBefore);
    }

    void compareWindowFitsTheScreen()
    {
        auto w = testing::makeTestWindow({1200, 680});
        QVERIFY(testing::openAndRun(*w, QStringLiteral("01")));
        CompareView* view = w->compareWithVariant(QStringLiteral("one-stream"));
        QVERIFY(view);
        QSignalSpy shown(view, &CompareView::comparisonShown);
        QVERIFY(shown.count() > 0 || shown.wait(30000));
        QVERIFY(QTest::qWaitForWindowExposed(view));
        QVERIFY(view->isWindow());
        const QRect room = available();
        QVERIFY2(view->width() <= room.width() * 0.9 + 1 && view->height() <= room.height() * 0.9 + 1,
                 qPrintable(QStringLiteral("%1x%2").arg(view->width()).arg(view->height())));
        QTRY_VERIFY(room.contains(view->frameGeometry()));
        // Resizable, not fixed: bigger and smaller than it opened.
        QVERIFY(view->maximumWidth() > room.width() && view->maximumHeight() > room.height());
        QVERIFY2(view->minimumSizeHint().height() <= view->height(),
                 qPrintable(QString::number(view->minimumSizeHint().height())));

        // The table and Close on screen.
        auto* table = view->findChild<QTableWidget*>(QStringLiteral("compareTable"));
        QVERIFY(table && table->isVisible());
        QVERIFY2(table->height() >= 4 * table->verticalHeader()->defaultSectionSize(),
                 qPrintable(QString::number(table->height())));
        QPushButton* close = nullptr;
        const auto buttons = view->findChildren<QPushButton*>();
        for (QPushButton* b : buttons)
            if (b->text() == QLatin1String("Close"))
                close = b;
        QVERIFY(close && close->isVisible());
        for (const QWidget* part : {static_cast<const QWidget*>(table), static_cast<const QWidget*>(close)}) {
            const QRect onScreen(part->mapToGlobal(QPoint(0, 0)), part->size());
            QVERIFY2(room.contains(onScreen), qPrintable(part->objectName()));
        }
        shot(view, QStringLiteral("compare"));
        QTest::mouseClick(close, Qt::LeftButton);
        QTRY_VERIFY(!view->isVisible());
    }
};

// One 1280×720 screen (the offscreen platform's own is 800×600), set before the application exists.
int main(int argc, char** argv)
{
    QTemporaryFile config(QDir::temp().filePath(QStringLiteral("tst_window_layout-XXXXXX.json")));
    if (!testing::useOffscreenScreen(config, kScreen, QStringLiteral("Projector")))
        return 1;
    QApplication app(argc, argv);
    TestWindowLayout test;
    QTEST_SET_MAIN_SOURCE_PATH
    return QTest::qExec(&test, argc, argv);
}

#include "tst_window_layout.moc"
