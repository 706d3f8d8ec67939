#include "import_progress.h"

namespace streamscope::import_detail {

namespace {
thread_local const ImportProgress* t_progress = nullptr;
thread_local double t_lastReported = -1;
} // namespace

ProgressScope::ProgressScope(const ImportProgress* progress) : m_previous(t_progress)
{
    t_progress = progress;
    t_lastReported = -1;
}

ProgressScope::~ProgressScope()
{
    t_progress = m_previous;
}

bool cancelled()
{
    return t_progress && t_progress->cancel && t_progress->cancel->load(std::memory_order_relaxed);
}

bool active()
{
    return t_progress != nullptr;
}

bool step(uint64_t done, uint64_t total)
{
    if (!t_progress)
        return true;
    if (cancelled())
        return false;
    if (t_progress->report && total > 0) {
        const double fraction = done >= total ? 1.0 : double(done) / double(total);
        if (fraction >= 1.0 || fraction - t_lastReported >= 0.01) {
            t_lastReported = fraction;
            t_progress->report(fraction);
        }
    }
    return true;
}

} // namespace streamscope::import_detail
