// The window in front of a class, on a 1280×720 screen (the offscreen platform configured so): Help ▸ About with
// the version and About Qt; Save As (Ctrl+Shift+S) and Quit (Ctrl+Q) on every key scheme and while presentation
// mode hides the menu bar. With STREAMSCOPE_LAYOUT_SHOTS=DIR the About box is saved there as a PNG.
#include "main_window.h"
#include "presentation_mode.h"
#include "window_fixture.h"

#include <QAction>
#include <QApplication>
#include <QDir>
#include <QMessageBox>
#include <QScreen>
#include <QSettings>
#include <QStandardPaths>
#include <QTemporaryFile>
#include <QTest>

#include <memory>

using namespace streamscope;

namespace {

constexpr QSize kScreen{1280, 720};

void shot(QWidget* w, const QString& name)
{
    const QString dir = qEnvironmentVariable("STREAMSCOPE_LAYOUT_SHOTS");
    if (dir.isEmpty())
        return;
    QDir().mkpath(dir);
    QTest::qWait(300);
    QVERIFY(w->grab().save(QDir(dir).filePath(name + QStringLiteral(".png"))));
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
        QCOMPARE(QGuiApplication::primaryScreen()->geometry().size(), kScreen);
    }

    void cleanup() { QSettings().clear(); }

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
        QVERIFY(!box->text().contains(QStringLiteral("icen"), Qt::CaseInsensitive)); // no licence it does not have
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
};

// One 1280×720 screen (the offscreen platform's own is 800×600), set before the application exists.
int main(int argc, char** argv)
{
    QTemporaryFile config(QDir::temp().filePath(QStringLiteral("tst_window_layout-XXXXXX.json")));
    if (!config.open())
        return 1;
    config.write(R"({"screens": [{"name": "Projector", "x": 0, "y": 0, "width": 1280, "height": 720,
                    "logicalDpi": 96, "logicalBaseDpi": 96, "dpr": 1}]})");
    config.flush();
    qputenv("QT_QPA_PLATFORM", QByteArray("offscreen:configfile=") + config.fileName().toLocal8Bit());
    QApplication app(argc, argv);
    TestWindowLayout test;
    QTEST_SET_MAIN_SOURCE_PATH
    return QTest::qExec(&test, argc, argv);
}

#include "tst_window_layout.moc"
