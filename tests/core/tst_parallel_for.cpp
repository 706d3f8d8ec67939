// parallelFor (parallel_for.h): every index exactly once, on several threads where asked, the caller's among them;
// a thrown exception reaches the caller after every thread has stopped.
#include "parallel_for.h"

#include <QTest>

#include <atomic>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

using namespace streamscope;

class TestParallelFor : public QObject {
    Q_OBJECT
private slots:
    void callsEveryIndexOnce_data();
    void callsEveryIndexOnce();
    void usesSeveralThreads();
    void rethrowsTheFirstError();
};

void TestParallelFor::callsEveryIndexOnce_data()
{
    QTest::addColumn<int>("count");
    QTest::addColumn<int>("threads");
    QTest::newRow("none") << 0 << 4;
    QTest::newRow("one part") << 1 << 4;
    QTest::newRow("fewer parts than threads") << 3 << 8;
    QTest::newRow("many parts") << 10000 << 4;
    QTest::newRow("one thread") << 100 << 1;
    QTest::newRow("one per core") << 1000 << 0;
}

void TestParallelFor::callsEveryIndexOnce()
{
    QFETCH(int, count);
    QFETCH(int, threads);
    std::vector<std::atomic<int>> calls(static_cast<size_t>(count));
    parallelFor(
        size_t(count), [&](size_t i) { ++calls[i]; }, unsigned(threads));
    for (int i = 0; i < count; ++i)
        QCOMPARE(calls[size_t(i)].load(), 1);
}

void TestParallelFor::usesSeveralThreads()
{
    // Each part waits until two threads have started one: only two threads at once get past it.
    std::atomic<int> started{0};
    std::mutex m;
    std::set<std::thread::id> ids;
    parallelFor(
        2,
        [&](size_t) {
            ++started;
            while (started.load() < 2)
                std::this_thread::yield();
            const std::lock_guard lock(m);
            ids.insert(std::this_thread::get_id());
        },
        2);
    QCOMPARE(ids.size(), size_t(2));
    QVERIFY(ids.count(std::this_thread::get_id()) == 1); // the caller's thread is one of them
}

void TestParallelFor::rethrowsTheFirstError()
{
    std::atomic<int> calls{0};
    bool thrown = false;
    try {
        parallelFor(
            1000,
            [&](size_t i) {
                ++calls;
                if (i == 10)
                    throw std::runtime_error("part 10");
            },
            4);
    } catch (const std::runtime_error& e) {
        thrown = QByteArray(e.what()) == "part 10";
    }
    QVERIFY(thrown);
    QVERIFY(calls.load() >= 11);
}

QTEST_GUILESS_MAIN(TestParallelFor)
#include "tst_parallel_for.moc"
