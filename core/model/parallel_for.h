// SPDX-FileCopyrightText: StreamScope contributors
// parallelFor: fn(i) for every i in [0, count), on the machine's cores. For work that falls into independent parts
// of uneven size (a trace's tracks, a timeline's lanes): each thread takes the next part as it finishes one, so
// that one big part does not leave the other cores idle behind a static split. No thread is started for one part.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace streamscope {

// Calls fn(i) for i in [0, count), each exactly once, on up to `threads` threads (0: one per core) including the
// caller's. fn must be safe to call for different i at once. The first exception fn throws is rethrown here once
// every thread has stopped (the parts not yet begun are then skipped).
template <typename Fn>
void parallelFor(size_t count, Fn&& fn, unsigned threads = 0)
{
    if (threads == 0)
        threads = std::max(1u, std::thread::hardware_concurrency());
    threads = unsigned(std::min<size_t>(threads, count));
    if (threads <= 1) {
        for (size_t i = 0; i < count; ++i)
            fn(i);
        return;
    }
    std::atomic<size_t> next{0};
    std::atomic<bool> failed{false};
    std::exception_ptr error;
    std::mutex errorMutex;
    auto work = [&] {
        for (size_t i; !failed.load(std::memory_order_relaxed) && (i = next.fetch_add(1)) < count;) {
            try {
                fn(i);
            } catch (...) {
                const std::lock_guard lock(errorMutex);
                if (!error)
                    error = std::current_exception();
                failed = true;
            }
        }
    };
    std::vector<std::thread> pool;
    try {
        for (unsigned t = 1; t < threads; ++t)
            pool.emplace_back(work);
    } catch (const std::system_error&) { // no more threads to be had: the caller's and those started do it all
    }
    work();
    for (std::thread& t : pool)
        t.join();
    if (error)
        std::rethrow_exception(error);
}

} // namespace streamscope
