// A job of several ranks in the window (docs/RANKS.md): four rank traces of lesson 19 (a straggler), written by
// streamscope-cli under Open MPI's variables as `mpirun -np 4` would start it, opened as a folder, as several files
// and as a pattern; the timeline groups their rows rank -> device -> stream, the collectives are linked across the
// ranks, the straggler is named and the analysis says how the clocks were aligned and what each rank did; Compare
// Ranks shows two ranks' parts side by side; folders that are no job give a message, never a crash.
//
// With STREAMSCOPE_SCREENSHOT_DIR set, the test also saves the window showing the job there (job.png).
#include "analysis_panel.h"
#include "cli_process.h"
#include "collectives.h"
#include "compare_view.h"
#include "job_loader.h"
#include "main_window.h"
#include "rank_parts.h"
#include "timeline_layout.h"
#include "timeline_view.h"
#include "window_fixture.h"

#include <QAction>
#include <QComboBox>
#include <QDialog>
#include <QDialogButtonBox>
#include <QDir>
#include <QFile>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>

#include <algorithm>
#include <set>

using namespace streamscope;

class TestJob : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_dir;
    QString m_ranks; // the folder of the four rank traces

    std::unique_ptr<MainWindow> makeWindow() { return testing::makeTestWindow({1600, 1000}); }

    // Opens `paths` as a job; true once its trace is on the timeline and analysed.
    static bool openJobAndWait(MainWindow& w, const QStringList& paths)
    {
        QSignalSpy analysed(&w, &MainWindow::analysisShown);
        QSignalSpy failed(&w, &MainWindow::errorShown);
        if (!w.openJob(paths))
            return false;
        for (int i = 0; i < 100 && analysed.isEmpty() && failed.isEmpty(); ++i)
            analysed.wait(100);
        return !analysed.isEmpty() && failed.isEmpty() && w.currentTrace();
    }

    // Opens `paths` as a job that cannot be opened; the message shown.
    static QString openJobError(MainWindow& w, const QStringList& paths)
    {
        QSignalSpy failed(&w, &MainWindow::errorShown);
        if (!w.openJob(paths))
            return {};
        if (failed.isEmpty() && !failed.wait(10000))
            return {};
        return failed.front().front().toString();
    }

    QString writeRank(const QString& dir, int rank, int world)
    {
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("OMPI_COMM_WORLD_RANK"), QString::number(rank));
        env.insert(QStringLiteral("OMPI_COMM_WORLD_SIZE"), QString::number(world));
        env.insert(QStringLiteral("OMPI_COMM_WORLD_LOCAL_RANK"), QString::number(rank));
        env.insert(QStringLiteral("OMPI_COMM_WORLD_LOCAL_SIZE"), QString::number(world));
        const testing::CliResult r = testing::runCli(
            {QStringLiteral("run"), QStringLiteral(STREAMSCOPE_SOURCE_DIR "/resources/presets/19-straggler.json"),
             QStringLiteral("-o"), QDir(dir).filePath(QStringLiteral("job.%r.json"))},
            env);
        return r.code == 0 ? QDir(dir).filePath(QStringLiteral("job.%1.json").arg(rank)) : r.describe();
    }

private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName(QStringLiteral("StreamScopeTest"));
        QCoreApplication::setApplicationName(QStringLiteral("tst_job"));
        QSettings().clear();
        QVERIFY(m_dir.isValid());
        m_ranks = m_dir.filePath(QStringLiteral("ranks"));
        QVERIFY(QDir().mkpath(m_ranks));
        for (int r = 0; r < 4; ++r) {
            const QString written = writeRank(m_ranks, r, 4);
            QVERIFY2(QFile::exists(written), qPrintable(written));
        }
    }

    void folderShowsFourRanksGrouped()
    {
        auto w = makeWindow();
        QVERIFY(openJobAndWait(*w, {m_ranks}));
        const Trace& trace = *w->currentTrace()->trace;
        QCOMPARE(ranksOfTrace(trace), (std::vector<int>{0, 1, 2, 3}));
        QVERIFY2(w->windowTitle().contains(QLatin1String("job of 4 ranks")), qPrintable(w->windowTitle()));

        // Rank -> device -> stream: a header per rank, in order, and under it only its own rows, its host thread
        // first, then its device's header and its streams.
        const auto& rows = w->timeline()->timelineLayout().rows();
        std::vector<int> headers;
        int current = -1;
        for (size_t i = 0; i < rows.size(); ++i) {
            const TimelineRow& row = rows[i];
            if (row.kind == TimelineRowKind::RankHeader) {
                headers.push_back(row.rank);
                current = row.rank;
                QVERIFY2(QString::fromStdString(row.label).startsWith(QStringLiteral("▾ Rank %1").arg(row.rank)),
                         row.label.c_str());
                QVERIFY(i + 1 < rows.size());
                QCOMPARE(rows[i + 1].kind, TimelineRowKind::HostThread);
                continue;
            }
            QCOMPARE(row.rank, current);
            if (row.track >= 0)
                QVERIFY2(QString::fromStdString(trace.tracks[size_t(row.track)].name)
                             .startsWith(QStringLiteral("rank %1 · ").arg(current)),
                         trace.tracks[size_t(row.track)].name.c_str());
            if (row.kind == TimelineRowKind::DeviceHeader) // the rank's own GPU 0, not the job's device index
                QVERIFY2(QString::fromStdString(row.label).startsWith(QStringLiteral("GPU 0 · NVIDIA")),
                         row.label.c_str());
        }
        QCOMPARE(headers, (std::vector<int>{0, 1, 2, 3}));
        QVERIFY(std::none_of(rows.begin(), rows.end(),
                             [](const TimelineRow& r) { return r.kind == TimelineRowKind::HostHeader; }));

        // Each all-reduce linked across the four ranks: 3 calls, 3 links each.
        const auto collective = std::count_if(trace.flows.begin(), trace.flows.end(),
                                              [](const Flow& f) { return f.kind == FlowKind::Collective; });
        QCOMPARE(collective, 9);

        // The straggler named; the analysis says how the clocks were aligned and what each rank did.
        const TraceReport& report = w->currentTrace()->report;
        QVERIFY(std::any_of(report.diagnostics.begin(), report.diagnostics.end(),
                            [](const Diagnostic& d) { return d.rule == "straggler"; }));
        QCOMPARE(report.collectives.size(), size_t(3));
        QCOMPARE(report.ranks.size(), size_t(4));
        for (const RankSummary& r : report.ranks) {
            QCOMPARE(r.calls, size_t(3));
            QCOMPARE(r.arrivedLast, r.rank == 2 ? size_t(3) : size_t(0));
            QVERIFY(r.gpuBusyNs > 0);
            QCOMPARE(r.collectiveWaitNs > 0, r.rank != 2);
        }
        const QString html = w->analysisPanel()->html();
        QVERIFY(html.contains(QLatin1String("Job: 4 ranks")));
        QVERIFY2(html.contains(QLatin1String("Clock alignment: simulated ranks")), qPrintable(html));
        QVERIFY(html.contains(QLatin1String("3&nbsp;of&nbsp;3")));
        if (const QString dir = qEnvironmentVariable("STREAMSCOPE_SCREENSHOT_DIR"); !dir.isEmpty())
            w->grab().save(QDir(dir).filePath(QStringLiteral("job.png")));
    }

    void rankRowsFold()
    {
        auto w = makeWindow();
        QVERIFY(openJobAndWait(*w, {m_ranks}));
        TimelineView* timeline = w->timeline();
        const Trace& trace = *w->currentTrace()->trace;
        const int lanes = timeline->timelineLayout().totalLanes();
        auto headerRow = [&](int rank) {
            const auto& rows = timeline->timelineLayout().rows();
            for (size_t i = 0; i < rows.size(); ++i)
                if (rows[i].kind == TimelineRowKind::RankHeader && rows[i].rank == rank)
                    return int(i);
            return -1;
        };
        // The arrows' index came with the job (built by the loader, not on this thread), and folding keeps it.
        const FlowIndex* arrows = timeline->spansPlottable()->flowIndex().get();
        QVERIFY(arrows && arrows->trace == &trace);
        QCOMPARE(arrows->order.size(), trace.flows.size());
        // A click on rank 2's header label folds its rows; the header stays, marked closed.
        QTest::qWait(50);
        const TimelineRow header = timeline->timelineLayout().rows()[size_t(headerRow(2))];
        const QPoint at(timeline->axisRect()->rect().left() - 20,
                        int(timeline->yAxis->coordToPixel(header.firstLane + 0.5)));
        QTest::mouseClick(timeline, Qt::LeftButton, {}, at);
        QVERIFY(timeline->isRankCollapsed(2));
        const TimelineLayout& folded = timeline->timelineLayout();
        QVERIFY2(folded.rows()[size_t(headerRow(2))].label.starts_with("\xE2\x96\xB8 Rank 2"),
                 folded.rows()[size_t(headerRow(2))].label.c_str());
        QVERIFY(folded.totalLanes() < lanes);
        QCOMPARE(timeline->spansPlottable()->flowIndex().get(), arrows);
        // Its host threads are in no row; its streams are drawn over each other in the header's one lane.
        const TimelineRow& closed = folded.rows()[size_t(headerRow(2))];
        QCOMPARE(closed.laneCount, 1);
        QVERIFY(closed.overlaidLanes >= 2); // comm and compute
        for (uint32_t t = 0; t < trace.tracks.size(); ++t) {
            const bool ofRank2 = rankOfTrack(trace, t) == 2;
            const bool stream = trace.tracks[t].kind == TrackKind::Stream;
            QCOMPARE(folded.rowOfTrack(t), ofRank2 ? (stream ? headerRow(2) : -1) : folded.rowOfTrack(t));
            QVERIFY(ofRank2 || folded.rowOfTrack(t) >= 0);
        }
        QVERIFY(w->timeline()->selectedSpan() < 0); // the click selected nothing
        // Rank 2's compute (the straggler's long kernels) shows in its header row, and a point on it finds it.
        uint32_t longest = 0;
        for (uint32_t i = 0; i < trace.spanCount(); ++i)
            if (rankOfTrack(trace, trace.spans.track[i]) == 2 && trace.spans.kind[i] == SpanKind::Kernel
                && trace.duration(i) > trace.duration(longest))
                longest = i;
        QCOMPARE(rankOfTrack(trace, trace.spans.track[longest]), 2);
        QCOMPARE(folded.laneOfSpan(longest), 0);
        timeline->replot(QCustomPlot::rpImmediateRefresh);
        const QRectF bar = timeline->spansPlottable()->spanRect(longest);
        QVERIFY(bar.isValid());
        QCOMPARE(int(std::floor(timeline->yAxis->pixelToCoord(bar.center().y()))), closed.firstLane);
        QCOMPARE(timeline->spansPlottable()->spanAt(bar.center(), 2), int(longest));
        // Again: unfolded, as before.
        QTest::mouseClick(timeline, Qt::LeftButton, {}, at);
        QVERIFY(!timeline->isRankCollapsed(2));
        QCOMPARE(timeline->timelineLayout().totalLanes(), lanes);
        // Another job starts unfolded.
        timeline->setRankCollapsed(0, true);
        QVERIFY(openJobAndWait(*w, {m_ranks}));
        QVERIFY(!timeline->isRankCollapsed(0));
    }

    void manyRanksOpenFolded()
    {
        // A job of twelve ranks, each a host thread and two streams: it opens with every rank folded, a row each,
        // and every rank's GPU spans drawn in its row.
        auto job = std::make_shared<Trace>();
        const int ranks = 12;
        for (int r = 0; r < ranks; ++r) {
            const std::string rank = "rank " + std::to_string(r) + " \xC2\xB7 ";
            const uint32_t host = job->addTrack({TrackKind::HostThread, rank + "main", 0});
            for (int s = 0; s < 2; ++s) {
                const uint32_t stream = job->addTrack({TrackKind::Stream, rank + "s" + std::to_string(s), 0});
                SpanInit k;
                k.track = stream;
                k.name = "k";
                k.start = 1000 * (r + 1) + 500 * s;
                k.end = k.start + 400;
                job->addSpan(k);
            }
            SpanInit api;
            api.track = host;
            api.kind = SpanKind::ApiCall;
            api.name = "cudaLaunchKernel";
            api.start = 0;
            api.end = 100;
            job->addSpan(api);
        }
        job->finalize();
        // The loaders build the timeline's layout with the trace, off the GUI thread, folded as a new view folds.
        const std::shared_ptr<const AnalyzedTrace> analysed = makeAnalyzedTrace(Trace(*job));
        QVERIFY(analysed->layout);
        QCOMPARE(analysed->layout->trace(), analysed->trace.get());
        QCOMPARE(analysed->layout->collapsedRanks().size(), size_t(ranks));
        auto w = makeWindow();
        TimelineView* timeline = w->timeline();
        timeline->setTrace(analysed->trace, false, analysed->layout);
        QCOMPARE(&timeline->timelineLayout(), analysed->layout.get()); // taken, not built again
        // A layout of another trace is not taken.
        timeline->setTrace(job, false, analysed->layout);
        QVERIFY(&timeline->timelineLayout() != analysed->layout.get());
        QCOMPARE(timeline->timelineLayout().trace(), job.get());
        for (int r = 0; r < ranks; ++r)
            QVERIFY(timeline->isRankCollapsed(r));
        const TimelineLayout& layout = timeline->timelineLayout();
        QCOMPARE(int(layout.rows().size()), ranks);
        QCOMPARE(layout.totalLanes(), ranks);
        for (const TimelineRow& row : layout.rows()) {
            QCOMPARE(row.kind, TimelineRowKind::RankHeader);
            QCOMPARE(row.overlaidLanes, 2);
        }
        timeline->resize(1200, 800);
        timeline->fitToView();
        timeline->replot(QCustomPlot::rpImmediateRefresh);
        const TimelineDrawStats& drawn = timeline->spansPlottable()->lastDrawStats();
        QCOMPARE(int(drawn.rowsDrawn), ranks);
        QCOMPARE(int(drawn.rects()), 2 * ranks); // every stream span, none of the host threads'
        // A job of a few ranks opens unfolded (rankRowsFold); unfolding one of these shows its rows.
        timeline->setRankCollapsed(5, false);
        QCOMPARE(int(timeline->timelineLayout().rows().size()), ranks + 4); // host thread, GPU header, 2 streams
    }

    void filesAndPatternOpenTheSameJob()
    {
        auto w = makeWindow();
        QStringList files;
        for (int r = 0; r < 4; ++r)
            files << QDir(m_ranks).filePath(QStringLiteral("job.%1.json").arg(r));
        QVERIFY(openJobAndWait(*w, files));
        QCOMPARE(w->traceDocumentPath(), QDir(m_ranks).filePath(QStringLiteral("job.*.json")));
        QCOMPARE(ranksOfTrace(*w->currentTrace()->trace).size(), size_t(4));
        const size_t spans = w->currentTrace()->trace->spanCount();

        // The pattern the title shows opens again as a job (Open Recent keeps it).
        QSignalSpy analysed(w.get(), &MainWindow::analysisShown);
        QVERIFY(w->openPath(QDir(m_ranks).filePath(QStringLiteral("job.*.json"))));
        QVERIFY(analysed.wait(10000));
        QCOMPARE(w->currentTrace()->trace->spanCount(), spans);
        QVERIFY(w->recentFiles().contains(QDir(m_ranks).filePath(QStringLiteral("job.*.json"))));
    }

    void compareRanksShowsTwoSides()
    {
        auto w = makeWindow();
        QVERIFY(!w->compareRanksAction()->isEnabled()); // nothing shown yet
        QVERIFY(openJobAndWait(*w, {m_ranks}));
        QVERIFY(w->compareRanksAction()->isEnabled());

        // The dialog offers the straggler (rank 2) as B.
        bool offered = false;
        QTimer::singleShot(200, w.get(), [&] {
            auto* dialog = qobject_cast<QDialog*>(QApplication::activeModalWidget());
            if (!dialog)
                return;
            auto* a = dialog->findChild<QComboBox*>(QStringLiteral("rankA"));
            auto* b = dialog->findChild<QComboBox*>(QStringLiteral("rankB"));
            offered = a && b && a->count() == 4 && a->currentData().toInt() == 0 && b->currentData().toInt() == 2;
            dialog->accept();
        });
        w->compareRanksAction()->trigger();
        QVERIFY(offered);
        CompareView* view = w->compareView();
        QVERIFY(view);
        QCOMPARE(view->nameA(), QStringLiteral("rank 0"));
        QCOMPARE(view->nameB(), QStringLiteral("rank 2"));
        QVERIFY(view->comparison().has_value());
        for (TimelineView* side : {view->timelineA(), view->timelineB()}) {
            QVERIFY(side->trace());
            const Trace& part = *side->trace();
            QVERIFY(part.spanCount() > 0);
            // One rank's trace, named as its own run names it: no "rank R · " rows, no rank headers.
            for (const Track& t : part.tracks)
                QVERIFY2(!QString::fromStdString(t.name).startsWith(QLatin1String("rank ")), t.name.c_str());
            QVERIFY(ranksOfTrace(part).empty());
            QCOMPARE(part.info.devices.size(), size_t(1));
            QCOMPARE(part.info.devices.front().index, 0);
        }
        // The same ops on both ranks; rank 2's compute kernels take three times as long (the lesson's straggler).
        QCOMPARE(view->timelineB()->trace()->spanCount(), view->timelineA()->trace()->spanCount());
        QVERIFY(view->comparison()->b.gpuWorkNs > view->comparison()->a.gpuWorkNs);

        // A rank the job does not hold: a message, no window change.
        QVERIFY(!w->compareRanks(0, 9));
        QVERIFY(w->errorMessage().contains(QLatin1String("no rank 9")));
    }

    void badFoldersGiveAMessage()
    {
        auto w = makeWindow();
        // A folder with no traces.
        const QString empty = m_dir.filePath(QStringLiteral("empty"));
        QVERIFY(QDir().mkpath(empty));
        QString error = openJobError(*w, {empty});
        QVERIFY2(error.contains(QLatin1String("no trace files")), qPrintable(error));
        QVERIFY(!w->currentTrace());

        // A rank twice: the merge refuses, naming the files.
        const QString twice = m_dir.filePath(QStringLiteral("twice"));
        QVERIFY(QDir().mkpath(twice));
        QVERIFY(QFile::copy(QDir(m_ranks).filePath(QStringLiteral("job.0.json")),
                            QDir(twice).filePath(QStringLiteral("a.json"))));
        QVERIFY(QFile::copy(QDir(m_ranks).filePath(QStringLiteral("job.0.json")),
                            QDir(twice).filePath(QStringLiteral("b.json"))));
        error = openJobError(*w, {twice});
        QVERIFY2(error.contains(QLatin1String("rank 0 again")), qPrintable(error));

        // A file that is no trace: its name in the message.
        const QString broken = m_dir.filePath(QStringLiteral("broken"));
        QVERIFY(QDir().mkpath(broken));
        QFile f(QDir(broken).filePath(QStringLiteral("job.1.json")));
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("{\"format\": \"streamscope-trace\", \"spans\": [");
        f.close();
        QVERIFY(QFile::copy(QDir(m_ranks).filePath(QStringLiteral("job.0.json")),
                            QDir(broken).filePath(QStringLiteral("job.0.json"))));
        error = openJobError(*w, {broken});
        QVERIFY2(error.contains(QLatin1String("job.1.json")), qPrintable(error));

        // Ranks of two jobs (world sizes 4 and 2).
        const QString mixed = m_dir.filePath(QStringLiteral("mixed"));
        QVERIFY(QDir().mkpath(mixed));
        QVERIFY(QFile::exists(writeRank(mixed, 1, 2)));
        QVERIFY(QFile::copy(QDir(m_ranks).filePath(QStringLiteral("job.0.json")),
                            QDir(mixed).filePath(QStringLiteral("job.0.json"))));
        error = openJobError(*w, {mixed});
        QVERIFY2(error.contains(QLatin1String("world size")), qPrintable(error));
        QVERIFY(!w->currentTrace());

        // After all that, a good job still opens.
        QVERIFY(openJobAndWait(*w, {m_ranks}));
    }

    void missingRanksAreNoted()
    {
        // Three of four ranks: shown, with the merge's note.
        const QString three = m_dir.filePath(QStringLiteral("three"));
        QVERIFY(QDir().mkpath(three));
        for (int r : {0, 1, 3})
            QVERIFY(QFile::copy(QDir(m_ranks).filePath(QStringLiteral("job.%1.json").arg(r)),
                                QDir(three).filePath(QStringLiteral("job.%1.json").arg(r))));
        auto w = makeWindow();
        QVERIFY(openJobAndWait(*w, {three}));
        QCOMPARE(ranksOfTrace(*w->currentTrace()->trace), (std::vector<int>{0, 1, 3}));
        const QString html = w->analysisPanel()->html();
        QVERIFY2(html.contains(QLatin1String("are missing")), qPrintable(html));
        QVERIFY(jobSummaryText(*w->currentTrace()->trace).contains(QLatin1String("Clock alignment")));
    }

    void cliComparesTwoRanks()
    {
        // merge, then analyze --ranks: rank 0's part against rank 2's, as Compare Ranks shows them.
        const QString job = m_dir.filePath(QStringLiteral("job.json"));
        testing::CliResult r = testing::runCli({QStringLiteral("merge"), m_ranks, QStringLiteral("-o"), job});
        QVERIFY2(r.code == 0, qPrintable(r.describe()));
        r = testing::runCli({QStringLiteral("analyze"), job, QStringLiteral("--ranks"), QStringLiteral("0,2")});
        QVERIFY2(r.code == 0, qPrintable(r.describe()));
        QVERIFY2(r.out.contains(QLatin1String("rank 0 -> ")) && r.out.contains(QLatin1String("compute (device 0)")),
                 qPrintable(r.out));
        r = testing::runCli({QStringLiteral("analyze"), job, QStringLiteral("--ranks"), QStringLiteral("0,9")});
        QCOMPARE(r.code, 2);
        QVERIFY2(r.err.contains(QLatin1String("no rank 9")), qPrintable(r.describe()));
        r = testing::runCli({QStringLiteral("analyze"), job, QStringLiteral("--ranks"), QStringLiteral("two")});
        QCOMPARE(r.code, 2);
    }

    void jobDocumentPaths()
    {
        QCOMPARE(jobDocumentPath({QStringLiteral("/r/job.0.json"), QStringLiteral("/r/job.12.json")}),
                 QStringLiteral("/r/job.*.json"));
        QCOMPARE(jobDocumentPath({QStringLiteral("/r/a.json"), QStringLiteral("/r/ab.json")}),
                 QStringLiteral("/r/a*.json"));
        QCOMPARE(jobDocumentPath({QStringLiteral("/r/x/a.json"), QStringLiteral("/r/y/a.json")}),
                 QStringLiteral("/r/x/*"));
        QCOMPARE(jobDocumentPath({QStringLiteral("/r/ranks")}), QStringLiteral("/r/ranks"));
        QVERIFY(isJobRequest({QStringLiteral("a.json"), QStringLiteral("b.json")}));
        QVERIFY(!isJobRequest({QStringLiteral("a.json")}));
    }
};

QTEST_MAIN(TestJob)
#include "tst_job.moc"
