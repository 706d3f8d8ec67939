// A job of several ranks in the window (docs/RANKS.md): File ▸ Open Job… (a folder, or several rank traces), the
// same from the command line and by dropping several files; Analysis ▸ Compare Ranks… (two ranks' parts of the job
// side by side in the compare window).
#include "main_window.h"
#include "main_window_parts.h"

#include "compare_view.h"
#include "format.h"
#include "job_loader.h"
#include "rank_parts.h"
#include "worker.h"

#include <QAction>
#include <QComboBox>
#include <QDialog>
#include <QDialogButtonBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QLabel>
#include <QMenu>
#include <QProgressBar>
#include <QSettings>

#include <algorithm>

namespace streamscope {

bool MainWindow::openJob(const QStringList& paths)
{
    if (!maybeSave())
        return false;
    const QString name = jobDocumentPath(paths);
    const std::shared_ptr<ImportProgress> progress = startOpening(QStringLiteral("Opening the job %1…").arg(name));
    // As one file: a big job is drawn first and analysed after.
    runOffGuiThread(
        this, &MainWindow::m_openGeneration,
        [paths, progress] { return loadJob(paths, progress.get(), kAnalyzeLaterSpans); },
        [name](MainWindow& w, Result<LoadedDocument> loaded) {
            w.endOpening();
            if (!loaded) {
                // The merge's refusals name the file and say why (ranks on hosts that share no clock, a rank twice).
                w.showError(QStringLiteral("Could not open the job %1: %2").arg(name, qs(loaded.error().toString())));
                w.m_statusText->setText(QStringLiteral("Could not open the job."));
                return;
            }
            const std::shared_ptr<const AnalyzedTrace> trace = loaded->trace;
            w.applyDocument(std::move(loaded.value()));
            const QString summary = jobSummaryText(*trace->trace);
            w.m_statusText->setText(QStringLiteral("Opened the job %1. %2").arg(name, summary));
            if (!trace->analysed)
                w.m_statusText->setText(w.m_statusText->text() + QStringLiteral(" Analysing…"));
        });
    return true;
}

void MainWindow::createJobOpenAction(QMenu* file)
{
    // A file dialog picks either a folder or files: a folder of rank traces (merge's usual input, job.%r.json
    // written into one) or several rank traces, each its own entry.
    QMenu* job = file->addMenu(QStringLiteral("Open &Job"));
    job->setObjectName(QStringLiteral("open-job"));
    job->setToolTipsVisible(true);
    QAction* folder = job->addAction(QStringLiteral("&Folder of Rank Traces…"), this, [this] {
        QSettings settings;
        const QString dir =
            QFileDialog::getExistingDirectory(this, QStringLiteral("Open a job: the folder of its rank traces"),
                                              settings.value(QStringLiteral("lastDir")).toString());
        if (dir.isEmpty())
            return;
        settings.setValue(QStringLiteral("lastDir"), dir);
        openJob({dir});
    });
    folder->setObjectName(QStringLiteral("open-job-folder"));
    folder->setStatusTip(QStringLiteral("Open the rank traces in a folder (*.json, *.json.gz) as one job"));
    QAction* files = job->addAction(QStringLiteral("Rank &Traces…"), this, [this] {
        QSettings settings;
        const QStringList picked = QFileDialog::getOpenFileNames(
            this, QStringLiteral("Open a job: its rank traces"), settings.value(QStringLiteral("lastDir")).toString(),
            QStringLiteral("Rank traces (*.json *.json.gz *.sstrace *.csv *.sqlite);;All files (*)"));
        if (picked.isEmpty())
            return;
        settings.setValue(QStringLiteral("lastDir"), QFileInfo(picked.front()).absolutePath());
        openJob(picked);
    });
    files->setObjectName(QStringLiteral("open-job-files"));
    files->setStatusTip(QStringLiteral("Open several rank traces of one job (mpirun, srun, torchrun) as one timeline"));
}

void MainWindow::createCompareRanksAction()
{
    m_compareRanksAction =
        m_analysisMenu->addAction(QStringLiteral("Compare &Ranks…"), this, &MainWindow::chooseRanksToCompare);
    m_compareRanksAction->setObjectName(QStringLiteral("compare-ranks"));
    connect(this, &MainWindow::traceShown, this, &MainWindow::updateCompareRanksAction);
    updateCompareRanksAction();
}

void MainWindow::updateCompareRanksAction()
{
    if (!m_compareRanksAction)
        return;
    const size_t ranks = m_trace && m_trace->trace ? ranksOfTrace(*m_trace->trace).size() : 0;
    const bool usable = ranks >= 2;
    m_compareRanksAction->setEnabled(usable);
    const QString tip = usable
        ? QStringLiteral("Show two ranks of the job side by side, on one time scale, and what "
                         "differs")
        : QStringLiteral("Open a job of several ranks (File ▸ Open Job…) to compare two of them");
    m_compareRanksAction->setToolTip(tip);
    m_compareRanksAction->setStatusTip(tip);
}

void MainWindow::chooseRanksToCompare()
{
    if (!m_trace || !m_trace->trace)
        return;
    const std::vector<int> ranks = ranksOfTrace(*m_trace->trace);
    if (ranks.size() < 2) {
        showError(QStringLiteral("The trace shown is not a job of several ranks: there are no two ranks to compare."));
        return;
    }
    // B starts as the rank that held the others most often (the straggler), when it is not the first.
    int suggested = ranks[1];
    size_t most = 0;
    for (const RankSummary& r : summarizeRanks(*m_trace->trace))
        if (r.arrivedLast > most && r.rank != ranks.front()) {
            most = r.arrivedLast;
            suggested = r.rank;
        }
    QDialog dialog(this);
    dialog.setWindowTitle(QStringLiteral("Compare Ranks"));
    auto* form = new QFormLayout(&dialog);
    form->addRow(new QLabel(QStringLiteral("Each rank's part of the job on its own timeline, A above B:")));
    auto* a = new QComboBox;
    auto* b = new QComboBox;
    a->setObjectName(QStringLiteral("rankA"));
    b->setObjectName(QStringLiteral("rankB"));
    for (int r : ranks) {
        a->addItem(QStringLiteral("rank %1").arg(r), r);
        b->addItem(QStringLiteral("rank %1").arg(r), r);
    }
    b->setCurrentIndex(b->findData(suggested));
    form->addRow(QStringLiteral("Rank &A"), a);
    form->addRow(QStringLiteral("Rank &B"), b);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
    form->addRow(buttons);
    connect(buttons, &QDialogButtonBox::accepted, &dialog, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
    if (dialog.exec() == QDialog::Accepted)
        compareRanks(a->currentData().toInt(), b->currentData().toInt());
}

CompareView* MainWindow::compareRanks(int a, int b)
{
    if (!m_trace || !m_trace->trace)
        return nullptr;
    const Trace& job = *m_trace->trace;
    const std::vector<int> ranks = ranksOfTrace(job);
    for (int r : {a, b})
        if (std::find(ranks.begin(), ranks.end(), r) == ranks.end()) {
            showError(ranks.empty() ? QStringLiteral("The trace shown is not a job of several ranks.")
                                    : QStringLiteral("The job shown has no rank %1.").arg(r));
            return nullptr;
        }
    // Copies of two ranks' rows: a few of the job's spans, quick even for a big job.
    auto partA = std::make_shared<const Trace>(rankPartOfTrace(job, a));
    auto partB = std::make_shared<const Trace>(rankPartOfTrace(job, b));
    ensureCompareView();
    m_compareView->setTraces(std::move(partA), QStringLiteral("rank %1").arg(a), std::move(partB),
                             QStringLiteral("rank %1").arg(b));
    showCompareView();
    return m_compareView;
}

} // namespace streamscope
