// Progress and Cancel of a long trace import, for a caller that shows them (the window's status bar). The caller
// passes an ImportProgress to importTraceFile; the readers report how far through the file they are and stop soon
// after the cancel flag is set. Readers reach it through the scope importTraceFile sets on its thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>

namespace streamscope {

struct ImportProgress {
    // The fraction of the file read and parsed, 0..1: called on the importing thread, about every 1 % or 4 MiB.
    // Formats read in one piece (SQLite, CSV) call it only at the end.
    std::function<void(double fraction)> report;
    // Set by the caller: the import stops at the next report with the error "cancelled".
    const std::atomic<bool>* cancel = nullptr;
};

// The message of the error an import that was cancelled returns.
inline constexpr const char* kImportCancelled = "cancelled";

namespace import_detail {

// For the readers. Sets the import of this thread's calls for its lifetime.
class ProgressScope {
public:
    explicit ProgressScope(const ImportProgress* progress);
    ~ProgressScope();
    ProgressScope(const ProgressScope&) = delete;
    ProgressScope& operator=(const ProgressScope&) = delete;

private:
    const ImportProgress* m_previous;
};

// `done` of `total` bytes: reported to this thread's import, if any. Returns false when it is cancelled.
bool step(uint64_t done, uint64_t total);
// Whether this thread's import is cancelled.
bool cancelled();
// Whether an import on this thread reports progress (readers take a slower path only then).
bool active();

} // namespace import_detail

} // namespace streamscope
