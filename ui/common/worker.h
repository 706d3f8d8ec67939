// Work off the GUI thread, its result handed back on it: the one way the UI runs what may take long (reading a
// trace, simulating, a sweep, a comparison) without blocking the window. The worker is a QThread of its own, deleted
// when it finishes. Its result reaches the GUI thread as a queued call, and is dropped there when the object that
// asked is gone or a newer request has superseded it (the object's generation counter moved on): the newest
// request wins.
#pragma once

#include <QCoreApplication>
#include <QMetaObject>
#include <QObject>
#include <QPointer>
#include <QThread>

#include <memory>
#include <type_traits>
#include <utility>

namespace streamscope {

// Calls fn(*context) on the GUI thread, unless `context` has been destroyed by then. Safe from any thread.
template <class Context, class Fn>
void postToGuiThread(const QPointer<Context>& context, Fn fn)
{
    QMetaObject::invokeMethod(
        qApp,
        [context, fn = std::move(fn)]() mutable {
            if (context)
                fn(*context);
        },
        Qt::QueuedConnection);
}

// Runs work() on a thread of its own, then done(*context, result) on the GUI thread (done(*context) when work
// returns nothing), unless by then `context` is destroyed or context->*generation differs from its value at this
// call. The caller increments the counter where a request supersedes the ones before it.
template <class Context, class Work, class Done>
void runOffGuiThread(Context* context, quint64 Context::*generation, Work work, Done done)
{
    const quint64 asked = context->*generation;
    QPointer<Context> self(context);
    QThread* worker =
        QThread::create([self, generation, asked, work = std::move(work), done = std::move(done)]() mutable {
            const auto current = [generation, asked](Context& c) { return c.*generation == asked; };
            if constexpr (std::is_void_v<std::invoke_result_t<Work&>>) {
                work();
                postToGuiThread(self, [current, done = std::move(done)](Context& c) mutable {
                    if (current(c))
                        done(c);
                });
            } else {
                auto result = std::make_shared<std::invoke_result_t<Work&>>(work());
                postToGuiThread(self, [current, result, done = std::move(done)](Context& c) mutable {
                    if (current(c))
                        done(c, std::move(*result));
                });
            }
        });
    QObject::connect(worker, &QThread::finished, worker, &QObject::deleteLater);
    worker->start();
}

} // namespace streamscope
