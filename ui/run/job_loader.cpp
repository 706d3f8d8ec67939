#include "job_loader.h"

#include "format.h"
#include "rank_parts.h"
#include "ranks.h"
#include "trace_formats.h"

#include <QDir>
#include <QFileInfo>

#include <algorithm>
#include <memory>

namespace streamscope {

bool isJobRequest(const QStringList& paths)
{
    return paths.size() > 1 || (paths.size() == 1 && QFileInfo(paths.front()).isDir());
}

QStringList jobPathsOf(const QString& path)
{
    const QFileInfo info(path);
    if (info.isDir())
        return {path};
    const QString name = info.fileName();
    if (info.exists() || (!name.contains(QLatin1Char('*')) && !name.contains(QLatin1Char('?'))))
        return {};
    QDir dir = info.dir();
    QStringList files;
    for (const QString& f : dir.entryList({name}, QDir::Files | QDir::Readable, QDir::Name))
        files << dir.filePath(f);
    return files;
}

Result<QStringList> jobFiles(const QStringList& paths)
{
    QStringList files;
    if (paths.isEmpty())
        return Error{{}, {}, "no rank traces to open as a job"};
    for (const QString& path : paths) {
        const QFileInfo info(path);
        if (!info.exists())
            return Error{path.toStdString(), {}, "no such file or folder"};
        if (!info.isDir()) {
            files << path;
            continue;
        }
        // A folder: its traces in name order (native, Chrome/PyTorch JSON, compressed or not), as merge reads it.
        QDir dir(path);
        const QStringList found = dir.entryList({QStringLiteral("*.json"), QStringLiteral("*.json.gz")},
                                                QDir::Files | QDir::Readable, QDir::Name);
        if (found.isEmpty())
            return Error{path.toStdString(), {}, "no trace files (*.json, *.json.gz) in this folder"};
        for (const QString& f : found)
            files << dir.filePath(f);
    }
    if (files.size() > kMaxRanks)
        return Error{{},
                     {},
                     std::to_string(files.size()) + " traces: at most " + std::to_string(kMaxRanks)
                         + " ranks are merged"};
    return files;
}

QString jobDocumentPath(const QStringList& paths)
{
    if (paths.size() == 1)
        return QDir::cleanPath(paths.front());
    if (paths.isEmpty())
        return {};
    // The names' common start and end around a star: job.0.json, job.1.json -> job.*.json (in their folder).
    const QString dir = QFileInfo(paths.front()).absolutePath();
    QString prefix = QFileInfo(paths.front()).fileName(), suffix = prefix;
    bool oneFolder = true;
    qsizetype shortest = prefix.size();
    for (const QString& p : paths) {
        const QFileInfo info(p);
        oneFolder = oneFolder && info.absolutePath() == dir;
        const QString name = info.fileName();
        qsizetype i = 0;
        while (i < prefix.size() && i < name.size() && prefix[i] == name[i])
            ++i;
        prefix.truncate(i);
        qsizetype j = 0;
        while (j < suffix.size() && j < name.size() && suffix[suffix.size() - 1 - j] == name[name.size() - 1 - j])
            ++j;
        suffix = suffix.right(j);
        shortest = std::min(shortest, name.size());
    }
    // Start and end do not overlap in the shortest name ("a.json", "ab.json": "a*.json").
    if (prefix.size() + suffix.size() > shortest)
        suffix = suffix.right(shortest - prefix.size());
    return QDir(dir).filePath((oneFolder ? prefix : QString()) + QLatin1Char('*') + (oneFolder ? suffix : QString()));
}

Result<LoadedDocument> loadJob(const QStringList& paths, const ImportProgress* progress, size_t analyzeBelowSpans,
                               const MergeOptions& options)
{
    auto files = jobFiles(paths);
    if (!files)
        return Result<LoadedDocument>(files.error(), files.errorClass());
    std::vector<RankTrace> ranks;
    ranks.reserve(size_t(files->size()));
    const double n = double(files->size());
    for (qsizetype i = 0; i < files->size(); ++i) {
        const std::string file = files->at(i).toStdString();
        Result<Trace> trace = Error{file, {}, "not read"};
        if (progress) {
            // One bar over all the files: file i fills its share.
            ImportProgress part;
            part.cancel = progress->cancel;
            if (progress->report)
                part.report = [progress, i, n](double f) { progress->report((double(i) + f) / n); };
            trace = importTraceFile(file, part);
        } else {
            trace = importTraceFile(file);
        }
        if (!trace)
            return Result<LoadedDocument>(trace.error(), trace.errorClass());
        ranks.push_back({file, std::move(trace).value()});
    }
    auto merged = mergeRankTraces(std::move(ranks), options);
    if (!merged)
        return Result<LoadedDocument>(merged.error(), ErrorClass::BadInput);
    for (const std::string& note : merged->notes)
        merged->trace.info.settings.emplace_back("merge note", note);
    LoadedDocument doc;
    doc.kind = DocumentKind::Trace;
    doc.path = jobDocumentPath(paths);
    doc.variant = qs(merged->trace.info.variant);
    if (merged->trace.spanCount() < analyzeBelowSpans) {
        doc.trace = makeAnalyzedTrace(std::move(merged->trace));
    } else {
        auto shown = std::make_shared<AnalyzedTrace>();
        shown->trace = std::make_shared<const Trace>(std::move(merged->trace));
        shown->analysed = false;
        doc.trace = withViewParts(std::move(shown), ViewSteps::Later);
    }
    return doc;
}

QString jobKindText(const Trace& trace)
{
    const size_t ranks = ranksOfTrace(trace).size();
    if (ranks == 0)
        return {};
    QString what = QStringLiteral("job of %1 rank%2").arg(ranks).arg(ranks == 1 ? QString() : QStringLiteral("s"));
    switch (trace.info.source) {
    case TraceSource::Simulator: return what + QStringLiteral(" (simulated)");
    case TraceSource::Cupti:
    case TraceSource::CudaEvents: return what + QStringLiteral(" (GPU run)");
    case TraceSource::Imported: return what + QStringLiteral(" (imported)");
    }
    return what;
}

QString jobSummaryText(const Trace& trace)
{
    const size_t ranks = ranksOfTrace(trace).size();
    if (ranks == 0)
        return {};
    QString text = QStringLiteral("%1 rank%2").arg(ranks).arg(ranks == 1 ? QString() : QStringLiteral("s"));
    if (const std::string* of = findSetting(trace.info, "ranks"))
        text = QStringLiteral("Ranks: %1").arg(qs(*of));
    text += QLatin1Char('.');
    if (const std::string* alignment = findSetting(trace.info, "clock_alignment"))
        text += QStringLiteral(" Clock alignment: %1.").arg(qs(*alignment));
    if (const std::string* linked = findSetting(trace.info, "collectives"))
        text += QStringLiteral(" Collectives: %1.").arg(qs(*linked));
    for (const auto& [key, value] : trace.info.settings)
        if (key == "merge note")
            text += QStringLiteral(" Note: %1.").arg(qs(value));
    return text;
}

} // namespace streamscope
