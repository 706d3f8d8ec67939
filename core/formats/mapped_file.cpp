// SPDX-FileCopyrightText: StreamScope contributors
#include "mapped_file.h"

#include <cerrno>

#if defined(__linux__)
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <mutex>
#endif

namespace streamscope {

#if defined(__linux__)

namespace {

// The mappings the SIGBUS handler answers for: a fixed table read without locks (a signal handler may not take
// one); slots are taken and given back under a mutex.
constexpr int kSlots = 64;
struct Slot {
    std::atomic<uintptr_t> begin{0};
    std::atomic<uintptr_t> end{0};
    std::atomic<int> changed{0};
};
Slot g_slots[kSlots];
std::mutex g_slotsMutex;
struct sigaction g_previous {};

// Set before the handler is installed: the handler may not initialise a static (that takes a lock).
std::atomic<uintptr_t> g_pageSize{4096};

void onSigbus(int sig, siginfo_t* info, void* context)
{
    const auto address = reinterpret_cast<uintptr_t>(info->si_addr);
    for (Slot& slot : g_slots) {
        const uintptr_t begin = slot.begin.load(std::memory_order_acquire);
        const uintptr_t end = slot.end.load(std::memory_order_acquire);
        if (begin == 0 || address < begin || address >= end)
            continue;
        // The file was cut short under the mapping: zero-filled pages from the faulting page to the mapping's end,
        // so that the access is retried and reads zeros. mmap is a plain system call, safe here.
        const uintptr_t page = address & ~(g_pageSize.load(std::memory_order_relaxed) - 1);
        const int savedErrno = errno;
        void* p = ::mmap(reinterpret_cast<void*>(page), end - page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
                         -1, 0);
        errno = savedErrno;
        if (p != MAP_FAILED) {
            slot.changed.store(1, std::memory_order_release);
            return;
        }
        break;
    }
    // Not a fault of ours (or it could not be mended): what would have happened without this handler.
    if ((g_previous.sa_flags & SA_SIGINFO) && g_previous.sa_sigaction) {
        g_previous.sa_sigaction(sig, info, context);
        return;
    }
    if (g_previous.sa_handler != SIG_DFL && g_previous.sa_handler != SIG_IGN) {
        g_previous.sa_handler(sig);
        return;
    }
    // The default action: taken when the faulting access is retried with the handler gone.
    ::sigaction(SIGBUS, &g_previous, nullptr);
}

void installHandler()
{
    static std::once_flag once;
    std::call_once(once, [] {
        g_pageSize.store(uintptr_t(::sysconf(_SC_PAGESIZE)), std::memory_order_relaxed);
        struct sigaction action {};
        action.sa_sigaction = onSigbus;
        action.sa_flags = SA_SIGINFO | SA_ONSTACK;
        sigemptyset(&action.sa_mask);
        ::sigaction(SIGBUS, &action, &g_previous);
    });
}

} // namespace

bool MappedFile::map(int fd, size_t size)
{
    if (size == 0) {
        errno = EINVAL;
        return false;
    }
    installHandler();
    int slot = -1;
    {
        std::lock_guard lock(g_slotsMutex);
        for (int i = 0; i < kSlots && slot < 0; ++i)
            if (g_slots[i].end.load(std::memory_order_relaxed) == 0)
                slot = i;
        if (slot < 0) { // more mappings at once than the table holds: the caller reads the file instead
            errno = ENOMEM;
            return false;
        }
        g_slots[slot].end.store(1, std::memory_order_relaxed); // taken
    }
    void* p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
        const int err = errno;
        g_slots[slot].end.store(0, std::memory_order_release);
        errno = err;
        return false;
    }
    ::madvise(p, size, MADV_SEQUENTIAL);
    const auto begin = reinterpret_cast<uintptr_t>(p);
    Slot& s = g_slots[slot];
    s.changed.store(0, std::memory_order_relaxed);
    s.end.store(begin + size, std::memory_order_release);
    s.begin.store(begin, std::memory_order_release);
    m_data = static_cast<const char*>(p);
    m_size = size;
    m_slot = slot;
    return true;
}

MappedFile::~MappedFile()
{
    if (!m_data)
        return;
    Slot& s = g_slots[m_slot];
    s.begin.store(0, std::memory_order_release);
    ::munmap(const_cast<char*>(m_data), m_size);
    std::lock_guard lock(g_slotsMutex);
    s.end.store(0, std::memory_order_release);
}

bool MappedFile::changed() const
{
    return m_data && g_slots[m_slot].changed.load(std::memory_order_acquire) != 0;
}

#else // not Linux: no mapping, the readers read the file

bool MappedFile::map(int, size_t)
{
    errno = ENOTSUP;
    return false;
}
MappedFile::~MappedFile() = default;
bool MappedFile::changed() const
{
    return false;
}

#endif

} // namespace streamscope
