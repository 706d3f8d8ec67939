// Opening a job of several ranks as one trace: per-rank trace files, or folders of them, read and merged
// (mergeRankTraces, docs/RANKS.md) as `streamscope-cli merge` does. Plain functions, safe on any thread: the window
// calls them on a worker, headless export directly.
#pragma once

#include "document_loader.h"
#include "import_progress.h"
#include "rank_merge.h"
#include "result.h"

#include <QString>
#include <QStringList>

namespace streamscope {

// Whether these paths are a job rather than one document: several files, or a folder.
bool isJobRequest(const QStringList& paths);

// The paths of a job that one path names: a folder (itself), or a pattern of file names ("runs/job.*.json", as a
// shell or the window's title writes it) that matches files (them, in name order); empty for anything else.
QStringList jobPathsOf(const QString& path);

// The trace files of a job: the files named, and each folder's *.json and *.json.gz files in name order (as merge
// reads a folder). Errors name the folder with no traces, or a path that does not exist.
Result<QStringList> jobFiles(const QStringList& paths);

// What the job is called (the window's title, the run info's file): a folder's path, or the files' common part with
// a `*` where they differ ("/runs/job.*.json").
QString jobDocumentPath(const QStringList& paths);

// Reads the ranks' traces (progress over all of them; its cancel stops the reading) and merges them. The document
// is a trace whose settings also hold the merge's notes ("merge note"), so that they travel with a saved copy; its
// path is jobDocumentPath. `analyzeBelowSpans` as for loadDocument.
Result<LoadedDocument> loadJob(const QStringList& paths, const ImportProgress* progress = nullptr,
                               size_t analyzeBelowSpans = SIZE_MAX, const MergeOptions& options = {});

// What a job's trace is, for the window's title: "job of 4 ranks (simulated)"; empty for a trace of no ranks.
QString jobKindText(const Trace& trace);

// What the window says of a job it opened: its ranks, how their clocks were aligned (MergeResult::alignment, kept in
// the setting "clock_alignment") and the merge's notes ("merge note"). Empty for a trace of no ranks.
QString jobSummaryText(const Trace& trace);

} // namespace streamscope
