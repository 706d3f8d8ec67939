// Trace metrics and the expectation checks of the lessons, each on small traces whose answers are worked out by
// hand in the comments.
#include "expect.h"
#include "metrics.h"
#include "trace_spec.h"

#include <QTest>

#include <cmath>
#include <map>
#include <string>

using namespace streamscope;
using streamscope::testing::traceOf;

namespace {

QString q(const std::string& s)
{
    return QString::fromStdString(s);
}

std::vector<std::string> strings(const QString& commaSeparated)
{
    std::vector<std::string> out;
    for (const QString& s : commaSeparated.split(QLatin1Char(','), Qt::SkipEmptyParts))
        out.push_back(s.trimmed().toStdString());
    return out;
}

// Intervals written "0-5 3-8 10-12".
std::vector<Interval> intervals(const QString& text)
{
    std::vector<Interval> out;
    for (const QString& part : text.split(QLatin1Char(' '), Qt::SkipEmptyParts)) {
        const auto ends = part.split(QLatin1Char('~'));
        out.push_back({ends[0].toLongLong(), ends[1].toLongLong()});
    }
    return out;
}

QString toText(const std::vector<Interval>& v)
{
    QStringList parts;
    for (const auto& i : v)
        parts << QString::number(i.start) + QLatin1Char('~') + QString::number(i.end);
    return parts.join(QLatin1Char(' '));
}

// The trace the expectation tests speak about (times in ns):
//   s1 (dev 0):       A 1000-5000, A 6000-8000
//   s2 (dev 0):       C (memcpy-h2d) 0-2000, B 3000-9000
//   s3 (dev 1):       D 10000-12000
//   pt@t0, pt@t1:     per-thread default instances of "pt": E 2000-4000, E 3000-5000
//   q@x:              a blocking stream whose name merely contains '@': F 0-1000
//   main (host, 0):   api-call 0-500, sync 500-9000
//   worker (host, 1): sync 0-1000
Trace lessonTrace()
{
    Trace t;
    const uint32_t s1 = t.addTrack({TrackKind::Stream, "s1", 0});
    const uint32_t s2 = t.addTrack({TrackKind::Stream, "s2", 0});
    const uint32_t s3 = t.addTrack({TrackKind::Stream, "s3", 1});
    const uint32_t pt0 = t.addTrack({TrackKind::Stream, "pt@t0", 0, StreamKind::PerThreadDefault});
    const uint32_t pt1 = t.addTrack({TrackKind::Stream, "pt@t1", 0, StreamKind::PerThreadDefault});
    const uint32_t qx = t.addTrack({TrackKind::Stream, "q@x", 0, StreamKind::Blocking});
    const uint32_t main = t.addTrack({TrackKind::HostThread, "main", 0});
    const uint32_t worker = t.addTrack({TrackKind::HostThread, "worker", 1});
    t.addSpan({s1, SpanKind::Kernel, "A", 1000, 5000});
    t.addSpan({s1, SpanKind::Kernel, "A", 6000, 8000});
    t.addSpan({s2, SpanKind::MemcpyH2D, "C", 0, 2000});
    t.addSpan({s2, SpanKind::Kernel, "B", 3000, 9000});
    t.addSpan({s3, SpanKind::Kernel, "D", 10000, 12000});
    t.addSpan({pt0, SpanKind::Kernel, "E", 2000, 4000});
    t.addSpan({pt1, SpanKind::Kernel, "E", 3000, 5000});
    t.addSpan({qx, SpanKind::Memset, "F", 0, 1000});
    t.addSpan({main, SpanKind::ApiCall, "cudaLaunchKernel", 0, 500});
    t.addSpan({main, SpanKind::Sync, "cudaStreamSynchronize", 500, 9000});
    t.addSpan({worker, SpanKind::Sync, "cudaDeviceSynchronize", 0, 1000});
    t.finalize();
    return t;
}

Expectation expectation(const QString& metric, const QString& streams = {}, const QString& spans = {},
                        const QString& kinds = {}, int device = -1)
{
    Expectation e;
    e.metric = metric.toStdString();
    e.streams = strings(streams);
    e.spans = strings(spans);
    e.kinds = strings(kinds);
    e.device = device;
    return e;
}

} // namespace

class TestMetrics : public QObject {
    Q_OBJECT

private slots:
    void mergeIntervals_data()
    {
        QTest::addColumn<QString>("input");
        QTest::addColumn<QString>("merged");
        QTest::addColumn<qlonglong>("length");
        QTest::newRow("empty") << QString() << QString() << 0LL;
        QTest::newRow("one") << QStringLiteral("3~7") << QStringLiteral("3~7") << 4LL;
        QTest::newRow("overlapping") << QStringLiteral("0~5 3~8 10~12") << QStringLiteral("0~8 10~12") << 10LL;
        QTest::newRow("touching") << QStringLiteral("0~5 5~8") << QStringLiteral("0~8") << 8LL;
        QTest::newRow("contained") << QStringLiteral("0~10 2~3 4~9") << QStringLiteral("0~10") << 10LL;
        QTest::newRow("unsorted") << QStringLiteral("20~30 0~5 4~6") << QStringLiteral("0~6 20~30") << 16LL;
        QTest::newRow("empty intervals dropped") << QStringLiteral("5~5 7~6 1~2") << QStringLiteral("1~2") << 1LL;
        QTest::newRow("negative times") << QStringLiteral("-10~-5 -6~0") << QStringLiteral("-10~0") << 10LL;
        QTest::newRow("same start") << QStringLiteral("0~3 0~9 0~1") << QStringLiteral("0~9") << 9LL;
    }

    void mergeIntervals()
    {
        QFETCH(QString, input);
        QFETCH(QString, merged);
        QFETCH(qlonglong, length);
        const auto m = streamscope::mergeIntervals(intervals(input));
        QCOMPARE(toText(m), merged);
        QCOMPARE(qlonglong(totalLength(m)), length);
    }

    void intersectionLength_data()
    {
        QTest::addColumn<QString>("a");
        QTest::addColumn<QString>("b");
        QTest::addColumn<qlonglong>("expected");
        QTest::newRow("disjoint") << QStringLiteral("0~5") << QStringLiteral("5~9") << 0LL;
        QTest::newRow("partial") << QStringLiteral("0~5") << QStringLiteral("3~9") << 2LL;
        QTest::newRow("inside") << QStringLiteral("0~10") << QStringLiteral("2~4 6~7") << 3LL;
        QTest::newRow("interleaved") << QStringLiteral("0~2 4~6 8~10") << QStringLiteral("1~9") << 4LL;
        QTest::newRow("one empty") << QStringLiteral("0~10") << QString() << 0LL;
        QTest::newRow("identical") << QStringLiteral("0~3 5~8") << QStringLiteral("0~3 5~8") << 6LL;
    }

    void intersectionLength()
    {
        QFETCH(QString, a);
        QFETCH(QString, b);
        QFETCH(qlonglong, expected);
        const auto ma = streamscope::mergeIntervals(intervals(a));
        const auto mb = streamscope::mergeIntervals(intervals(b));
        QCOMPARE(qlonglong(streamscope::intersectionLength(ma, mb)), expected);
        QCOMPARE(qlonglong(streamscope::intersectionLength(mb, ma)), expected);
    }

    void computeMetrics_data()
    {
        QTest::addColumn<QString>("spans");
        QTest::addColumn<qlonglong>("makespan");
        QTest::addColumn<qlonglong>("gpuWork");
        QTest::addColumn<double>("speedup");
        QTest::addColumn<int>("maxConcurrency");
        QTest::addColumn<qlonglong>("copyComputeOverlap");
        QTest::addColumn<qlonglong>("hostMakespan");
        QTest::addColumn<QString>("busy"); // per stream: name=busy ns

        QTest::newRow("empty") << QString() << 0LL << 0LL << 0.0 << 0 << 0LL << 0LL << QString();
        QTest::newRow("two overlapping kernels") << QStringLiteral("s1:kernel:0:10 s2:kernel:5:15") << 15LL << 20LL
                                                 << 20.0 / 15 << 2 << 0LL << 15LL << QStringLiteral("s1=10,s2=10");
        QTest::newRow("back to back: ends before starts")
            << QStringLiteral("s1:kernel:0:10 s2:kernel:10:20") << 20LL << 20LL << 1.0 << 1 << 0LL << 20LL
            << QStringLiteral("s1=10,s2=10");
        // copies 0-12 (union), kernels 5-20: overlap 7; at 8-10 an h2d, a kernel and a d2h run at once.
        QTest::newRow("copy and compute")
            << QStringLiteral("s1:memcpy-h2d:0:10 s2:kernel:5:20 s3:memcpy-d2h:8:12") << 20LL << 29LL << 29.0 / 20 << 3
            << 7LL << 20LL << QStringLiteral("s1=10,s2=15,s3=4");
        QTest::newRow("host spans are not GPU work")
            << QStringLiteral("h1:api-call:0:100 h1:sync:100:150 s1:kernel:10:20") << 10LL << 10LL << 1.0 << 1 << 0LL
            << 150LL << QStringLiteral("s1=10");
        QTest::newRow("memset and host-func are GPU, not copies")
            << QStringLiteral("s1:memset:0:10 s2:kernel:0:10 s3:host-func:0:10") << 10LL << 30LL << 3.0 << 3 << 0LL
            << 10LL << QStringLiteral("s1=10,s2=10,s3=10");
        QTest::newRow("zero-length span runs at no instant")
            << QStringLiteral("s1:kernel:5:5 s2:kernel:0:10") << 10LL << 10LL << 1.0 << 1 << 0LL << 10LL
            << QStringLiteral("s1=0,s2=10");
        QTest::newRow("overlap within one stream counted once in busy")
            << QStringLiteral("s1:kernel:0:10 s1:kernel:2:4 s1:kernel:20:30") << 30LL << 22LL << 22.0 / 30 << 2 << 0LL
            << 30LL << QStringLiteral("s1=20");
        QTest::newRow("two devices") << QStringLiteral("s1/0:kernel:0:10 s2/1:kernel:0:10 s3/1:memcpy-p2p:5:15") << 15LL
                                     << 30LL << 2.0 << 3 << 5LL << 15LL << QStringLiteral("s1=10,s2=10,s3=10");
        QTest::newRow("negative times") << QStringLiteral("s1:kernel:-100:-50 s2:memcpy-d2d:-60:0") << 100LL << 110LL
                                        << 1.1 << 2 << 10LL << 100LL << QStringLiteral("s1=50,s2=60");
    }

    void computeMetrics()
    {
        QFETCH(QString, spans);
        QFETCH(qlonglong, makespan);
        QFETCH(qlonglong, gpuWork);
        QFETCH(double, speedup);
        QFETCH(int, maxConcurrency);
        QFETCH(qlonglong, copyComputeOverlap);
        QFETCH(qlonglong, hostMakespan);
        QFETCH(QString, busy);

        const Trace t = traceOf(spans);
        const TraceMetrics m = streamscope::computeMetrics(t);
        QCOMPARE(qlonglong(m.makespanNs), makespan);
        QCOMPARE(qlonglong(m.gpuWorkNs), gpuWork);
        QVERIFY2(std::abs(m.speedup - speedup) < 1e-12, qPrintable(QString::number(m.speedup)));
        QCOMPARE(m.maxConcurrency, maxConcurrency);
        QCOMPARE(qlonglong(m.copyComputeOverlapNs), copyComputeOverlap);
        QCOMPARE(qlonglong(m.hostMakespanNs), hostMakespan);

        QStringList actualBusy;
        for (const auto& s : m.streams) {
            actualBusy << q(s.name) + QLatin1Char('=') + QString::number(s.busyNs);
            QCOMPARE(qlonglong(totalLength(busyIntervals(t, s.track))), qlonglong(s.busyNs));
        }
        QCOMPARE(actualBusy.join(QLatin1Char(',')), busy);
    }

    void countsAndStreams()
    {
        const Trace t = traceOf(QStringLiteral("h1:api-call:0:1 h1:api-call:1:2 h1:sync:2:9 s1:kernel:0:5 "
                                               "s1:kernel:5:8 s2/1:memset:0:1"));
        const TraceMetrics m = streamscope::computeMetrics(t);
        QCOMPARE(m.apiCallCount, 2);
        QCOMPARE(m.gpuSpanCount, 3);
        QCOMPARE(m.streams.size(), size_t(2)); // host threads are not streams
        QCOMPARE(q(m.streams[0].name), QStringLiteral("s1"));
        QCOMPARE(m.streams[0].spanCount, 2);
        QCOMPARE(m.streams[0].device, 0);
        QCOMPARE(m.streams[1].device, 1);
    }

    void busyIntervalsOfUnfinalizedTrace()
    {
        Trace t;
        const uint32_t s = t.addTrack({TrackKind::Stream, "s"});
        const uint32_t h = t.addTrack({TrackKind::HostThread, "h"});
        t.addSpan({s, SpanKind::Kernel, "k", 10, 20});
        t.addSpan({h, SpanKind::ApiCall, "a", 0, 100});
        t.addSpan({s, SpanKind::Kernel, "k", 0, 5});
        QVERIFY(!t.finalized());
        QCOMPARE(toText(busyIntervals(t, s)), QStringLiteral("0~5 10~20"));
        QCOMPARE(toText(busyIntervals(t, h)), QString()); // host spans are not GPU work
        QCOMPARE(streamscope::computeMetrics(t).streams[0].busyNs, 15);
    }

    void maxConcurrency_data()
    {
        QTest::addColumn<QString>("spans");
        QTest::addColumn<int>("device");
        QTest::addColumn<QString>("kinds");
        QTest::addColumn<int>("expected");
        const QString twoDevices = QStringLiteral("s1/0:kernel:0:10 s2/1:kernel:0:10 s3/1:kernel:5:6");
        QTest::newRow("all devices") << twoDevices << -1 << QString() << 3;
        QTest::newRow("device 0") << twoDevices << 0 << QString() << 1;
        QTest::newRow("device 1") << twoDevices << 1 << QString() << 2;
        QTest::newRow("no such device") << twoDevices << 7 << QString() << 0;
        const QString mixed = QStringLiteral("s1:kernel:0:10 s2:memcpy-h2d:0:10 s3:kernel:5:15 h1:api-call:0:10");
        QTest::newRow("all GPU kinds") << mixed << -1 << QString() << 3;
        QTest::newRow("kernels only") << mixed << -1 << QStringLiteral("kernel") << 2;
        QTest::newRow("copies only") << mixed << -1 << QStringLiteral("memcpy-h2d") << 1;
        QTest::newRow("kernels and copies") << mixed << -1 << QStringLiteral("kernel,memcpy-h2d") << 3;
        QTest::newRow("host kinds when named")
            << QStringLiteral("h1:api-call:0:10 h2:api-call:5:10") << -1 << QStringLiteral("api-call") << 2;
        QTest::newRow("host kinds not by default")
            << QStringLiteral("h1:api-call:0:10 h2:api-call:5:10") << -1 << QString() << 0;
        QTest::newRow("many ends at the start of many")
            << QStringLiteral("s1:kernel:0:10 s2:kernel:0:10 s3:kernel:10:20 s4:kernel:10:20") << -1 << QString() << 2;
        QTest::newRow("nested") << QStringLiteral("s1:kernel:0:100 s2:kernel:10:20 s3:kernel:15:30 s4:kernel:19:21")
                                << -1 << QString() << 4;
    }

    void maxConcurrency()
    {
        QFETCH(QString, spans);
        QFETCH(int, device);
        QFETCH(QString, kinds);
        QFETCH(int, expected);
        std::vector<SpanKind> k;
        for (const auto& name : strings(kinds))
            k.push_back(*spanKindFromString(name));
        QCOMPARE(streamscope::maxConcurrency(traceOf(spans), device, k), expected);
    }

    void manySpans()
    {
        // 1M spans: two streams of back-to-back kernels and two of back-to-back copies, the odd ones staggered by
        // half a span, so that all four run at every instant but the first and last 50 ns. A quadratic algorithm
        // would not finish.
        Trace t;
        const int streams = 4;
        for (int s = 0; s < streams; ++s)
            t.addTrack({TrackKind::Stream, "s" + std::to_string(s)});
        const int perStream = 250000;
        for (int s = 0; s < streams; ++s)
            for (int i = 0; i < perStream; ++i) {
                const int64_t offset = (s % 2) * 50;
                t.addSpan({uint32_t(s), s < 2 ? SpanKind::Kernel : SpanKind::MemcpyH2D, "k", offset + int64_t(i) * 100,
                           offset + int64_t(i) * 100 + 100});
            }
        t.finalize();
        const TraceMetrics m = streamscope::computeMetrics(t);
        QCOMPARE(m.maxConcurrency, 4);
        QCOMPARE(m.makespanNs, int64_t(perStream) * 100 + 50);
        QCOMPARE(m.gpuWorkNs, int64_t(streams) * perStream * 100);
        // copies cover [0, 25000050), kernels the same: all copy time overlaps.
        QCOMPARE(m.copyComputeOverlapNs, int64_t(perStream) * 100 + 50);
        for (const auto& s : m.streams)
            QCOMPARE(s.busyNs, int64_t(perStream) * 100);
    }

    void expectationMetrics_data()
    {
        QTest::addColumn<QString>("metric");
        QTest::addColumn<QString>("streams");
        QTest::addColumn<QString>("spans");
        QTest::addColumn<QString>("kinds");
        QTest::addColumn<int>("device");
        QTest::addColumn<double>("expected");
        const QString none;
        // GPU spans start at 0 (C) and end at 12000 (D); device 0 ends at 9000 (B); device 1 is D alone.
        QTest::newRow("makespan_us") << QStringLiteral("makespan_us") << none << none << none << -1 << 12.0;
        QTest::newRow("makespan_us device 0") << QStringLiteral("makespan_us") << none << none << none << 0 << 9.0;
        QTest::newRow("makespan_us device 1") << QStringLiteral("makespan_us") << none << none << none << 1 << 2.0;
        // Work: A 4000+2000, C 2000, B 6000, D 2000, E 2000+2000, F 1000 = 21000 ns.
        QTest::newRow("speedup") << QStringLiteral("speedup") << none << none << none << -1 << 21000.0 / 12000;
        QTest::newRow("speedup device 0") << QStringLiteral("speedup") << none << none << none << 0 << 19000.0 / 9000;
        QTest::newRow("busy_us s1") << QStringLiteral("busy_us") << QStringLiteral("s1") << none << none << -1 << 6.0;
        QTest::newRow("busy_us s2") << QStringLiteral("busy_us") << QStringLiteral("s2") << none << none << -1 << 8.0;
        // s1 [1000,5000] [6000,8000] with s2 [0,2000] [3000,9000]: 1000 + 2000 + 2000.
        QTest::newRow("overlap_us") << QStringLiteral("overlap_us") << QStringLiteral("s1,s2") << none << none << -1
                                    << 5.0;
        QTest::newRow("overlap") << QStringLiteral("overlap") << QStringLiteral("s1,s2") << none << none << -1
                                 << 5000.0 / 6000;
        QTest::newRow("overlap is symmetric")
            << QStringLiteral("overlap") << QStringLiteral("s2,s1") << none << none << -1 << 5000.0 / 6000;
        QTest::newRow("overlap of disjoint streams")
            << QStringLiteral("overlap") << QStringLiteral("s1,s3") << none << none << -1 << 0.0;
        // At 3000-4000: A, B, E, E.
        QTest::newRow("max_concurrency") << QStringLiteral("max_concurrency") << none << none << none << -1 << 4.0;
        QTest::newRow("max_concurrency copies")
            << QStringLiteral("max_concurrency") << none << none << QStringLiteral("memcpy-h2d") << -1 << 1.0;
        QTest::newRow("max_concurrency device 1")
            << QStringLiteral("max_concurrency") << none << none << none << 1 << 1.0;
        // Copy C [0,2000]; kernels cover [1000,9000]: half the copy overlaps.
        QTest::newRow("copy_compute_overlap")
            << QStringLiteral("copy_compute_overlap") << none << none << none << -1 << 0.5;
        QTest::newRow("copy_compute_overlap without copies")
            << QStringLiteral("copy_compute_overlap") << none << none << none << 1 << 0.0;
        QTest::newRow("gap_us C then B") << QStringLiteral("gap_us") << none << QStringLiteral("C,B") << none << -1
                                         << 1.0;
        QTest::newRow("gap_us negative") << QStringLiteral("gap_us") << none << QStringLiteral("A,B") << none << -1
                                         << -5.0;
        QTest::newRow("gap_us across devices")
            << QStringLiteral("gap_us") << none << QStringLiteral("B,D") << none << -1 << 1.0;
        QTest::newRow("start_us") << QStringLiteral("start_us") << none << QStringLiteral("A") << none << -1 << 1.0;
        QTest::newRow("end_us") << QStringLiteral("end_us") << none << QStringLiteral("A") << none << -1 << 8.0;
        QTest::newRow("duration_us") << QStringLiteral("duration_us") << none << QStringLiteral("A") << none << -1
                                     << 6.0;
        QTest::newRow("duration_us of two instances")
            << QStringLiteral("duration_us") << none << QStringLiteral("E") << none << -1 << 4.0;
        QTest::newRow("start_us on device 1 counts from its first span")
            << QStringLiteral("start_us") << none << QStringLiteral("D") << none << 1 << 0.0;
        QTest::newRow("start_us of a host span")
            << QStringLiteral("start_us") << none << QStringLiteral("cudaStreamSynchronize") << none << -1 << 0.5;
        QTest::newRow("span_count all") << QStringLiteral("span_count") << none << none << none << -1 << 11.0;
        QTest::newRow("span_count kernels")
            << QStringLiteral("span_count") << none << none << QStringLiteral("kernel") << -1 << 6.0;
        QTest::newRow("span_count by name")
            << QStringLiteral("span_count") << none << QStringLiteral("A") << none << -1 << 2.0;
        QTest::newRow("span_count by names")
            << QStringLiteral("span_count") << none << QStringLiteral("A,E") << none << -1 << 4.0;
        QTest::newRow("span_count by kind and name")
            << QStringLiteral("span_count") << none << QStringLiteral("C") << QStringLiteral("kernel") << -1 << 0.0;
        QTest::newRow("span_count of an absent name")
            << QStringLiteral("span_count") << none << QStringLiteral("Z") << none << -1 << 0.0;
        QTest::newRow("span_count device 1") << QStringLiteral("span_count") << none << none << none << 1 << 2.0;
        // main: 500-9000; worker: 0-1000.
        QTest::newRow("host_sync_us") << QStringLiteral("host_sync_us") << none << none << none << -1 << 9.5;
        QTest::newRow("host_sync_us device 1") << QStringLiteral("host_sync_us") << none << none << none << 1 << 1.0;
        // Per-thread default streams: "pt" stands for pt@t0 and pt@t1, union [2000,5000].
        QTest::newRow("ptds busy is the union")
            << QStringLiteral("busy_us") << QStringLiteral("pt") << none << none << -1 << 3.0;
        QTest::newRow("ptds instance by full name")
            << QStringLiteral("busy_us") << QStringLiteral("pt@t0") << none << none << -1 << 2.0;
        // s1 [1000,5000] [6000,8000] with pt [2000,5000]: 3000 of min(6000, 3000).
        QTest::newRow("ptds overlap") << QStringLiteral("overlap") << QStringLiteral("s1,pt") << none << none << -1
                                      << 1.0;
        QTest::newRow("blocking stream with @ by full name")
            << QStringLiteral("busy_us") << QStringLiteral("q@x") << none << none << -1 << 1.0;
    }

    void expectationMetrics()
    {
        QFETCH(QString, metric);
        QFETCH(QString, streams);
        QFETCH(QString, spans);
        QFETCH(QString, kinds);
        QFETCH(int, device);
        QFETCH(double, expected);
        const Expectation e = expectation(metric, streams, spans, kinds, device);
        QCOMPARE(q(streamscope::validateExpectation(e)), QString());
        auto v = evaluateMetric(lessonTrace(), e);
        QVERIFY2(v.ok(), v.error().toString().c_str());
        QVERIFY2(std::abs(*v - expected) < 1e-12,
                 qPrintable(QStringLiteral("got %1, expected %2").arg(*v, 0, 'g', 17).arg(expected, 0, 'g', 17)));
    }

    void everyListedMetricIsAccepted()
    {
        const auto metrics = streamscope::expectationMetrics();
        QCOMPARE(metrics.size(), size_t(15));
        for (const auto& [name, description] : metrics) {
            QVERIFY(!description.empty());
            // Any complaint may be about arguments, never about the metric's name.
            const QString message = q(streamscope::validateExpectation(expectation(q(name))));
            QVERIFY2(!message.contains(QStringLiteral("unknown metric")), name.c_str());
        }
    }

    void evaluationErrors_data()
    {
        QTest::addColumn<QString>("metric");
        QTest::addColumn<QString>("streams");
        QTest::addColumn<QString>("spans");
        QTest::addColumn<int>("device");
        QTest::addColumn<QString>("error");
        QTest::newRow("unknown stream") << QStringLiteral("busy_us") << QStringLiteral("s9") << QString() << -1
                                        << QStringLiteral("no stream named \"s9\" in the trace (streams: s1, s2, s3, "
                                                          "pt@t0, pt@t1, q@x)");
        QTest::newRow("second stream unknown") << QStringLiteral("overlap") << QStringLiteral("s1,nope") << QString()
                                               << -1 << QStringLiteral("no stream named \"nope\"");
        QTest::newRow("stream on another device") << QStringLiteral("busy_us") << QStringLiteral("s1") << QString() << 1
                                                  << QStringLiteral("no stream named \"s1\" in the trace on "
                                                                    "device 1 (streams: s3)");
        QTest::newRow("ptds prefix needs a ptds stream") << QStringLiteral("busy_us") << QStringLiteral("q")
                                                         << QString() << -1 << QStringLiteral("no stream named \"q\"");
        QTest::newRow("prefix without @ does not match") << QStringLiteral("busy_us") << QStringLiteral("p")
                                                         << QString() << -1 << QStringLiteral("no stream named \"p\"");
        QTest::newRow("unknown span") << QStringLiteral("start_us") << QString() << QStringLiteral("Z") << -1
                                      << QStringLiteral("no span named \"Z\" in the trace");
        QTest::newRow("gap with unknown second span") << QStringLiteral("gap_us") << QString() << QStringLiteral("A,Z")
                                                      << -1 << QStringLiteral("no span named \"Z\"");
        QTest::newRow("span on another device") << QStringLiteral("end_us") << QString() << QStringLiteral("A") << 1
                                                << QStringLiteral("no span named \"A\" on device 1");
        QTest::newRow("unknown device") << QStringLiteral("makespan_us") << QString() << QString() << 5
                                        << QStringLiteral("no track on device 5");
        QTest::newRow("invalid expectation") << QStringLiteral("overlap") << QStringLiteral("s1") << QString() << -1
                                             << QStringLiteral("overlap needs two streams");
    }

    void evaluationErrors()
    {
        QFETCH(QString, metric);
        QFETCH(QString, streams);
        QFETCH(QString, spans);
        QFETCH(int, device);
        QFETCH(QString, error);
        Expectation e = expectation(metric, streams, spans, {}, device);
        e.value = -1e9; // any value would pass ">=" were the metric computed
        const auto results = evaluateExpectations(lessonTrace(), {e});
        QCOMPARE(results.size(), size_t(1));
        QVERIFY(!results[0].passed);
        QVERIFY2(q(results[0].error).contains(error), results[0].error.c_str());
        QVERIFY2(q(results[0].description).contains(error), results[0].description.c_str());
        QVERIFY(!allPassed(results));
        QVERIFY(!evaluateMetric(lessonTrace(), e).ok());
    }

    void comparisons_data()
    {
        QTest::addColumn<QString>("op");
        QTest::addColumn<double>("value");
        QTest::addColumn<bool>("passed");
        // makespan_us of the lesson trace is exactly 12.
        QTest::newRow("< above") << QStringLiteral("<") << 13.0 << true;
        QTest::newRow("< equal") << QStringLiteral("<") << 12.0 << false;
        QTest::newRow("<= equal") << QStringLiteral("<=") << 12.0 << true;
        QTest::newRow("<= below") << QStringLiteral("<=") << 11.9 << false;
        QTest::newRow("> below") << QStringLiteral(">") << 11.9 << true;
        QTest::newRow("> equal") << QStringLiteral(">") << 12.0 << false;
        QTest::newRow(">= equal") << QStringLiteral(">=") << 12.0 << true;
        QTest::newRow(">= above") << QStringLiteral(">=") << 12.1 << false;
        QTest::newRow("== equal") << QStringLiteral("==") << 12.0 << true;
        QTest::newRow("== within 1e-9 relative") << QStringLiteral("==") << 12.00000001 << true;
        QTest::newRow("== beyond the tolerance") << QStringLiteral("==") << 12.0000002 << false;
        QTest::newRow("== far") << QStringLiteral("==") << 11.0 << false;
    }

    void comparisons()
    {
        QFETCH(QString, op);
        QFETCH(double, value);
        QFETCH(bool, passed);
        Expectation e = expectation(QStringLiteral("makespan_us"));
        e.op = op.toStdString();
        e.value = value;
        const auto r = evaluateExpectations(lessonTrace(), {e});
        QCOMPARE(r[0].actual, 12.0);
        QVERIFY(r[0].error.empty());
        QCOMPARE(r[0].passed, passed);
        QCOMPARE(allPassed(r), passed);
    }

    void equalityOfFractions()
    {
        // overlap(s1, s2) is 5/6: the decimal a lesson writes compares equal.
        Expectation e = expectation(QStringLiteral("overlap"), QStringLiteral("s1,s2"));
        e.op = "==";
        e.value = 0.8333333333333;
        QVERIFY(evaluateExpectations(lessonTrace(), {e})[0].passed);
        e.value = 0.8333;
        QVERIFY(!evaluateExpectations(lessonTrace(), {e})[0].passed);
    }

    void descriptions_data()
    {
        QTest::addColumn<QString>("metric");
        QTest::addColumn<QString>("streams");
        QTest::addColumn<QString>("kinds");
        QTest::addColumn<int>("device");
        QTest::addColumn<QString>("op");
        QTest::addColumn<double>("value");
        QTest::addColumn<QString>("description");
        QTest::addColumn<bool>("passed");
        QTest::newRow("fraction") << QStringLiteral("overlap") << QStringLiteral("s1,s2") << QString() << -1
                                  << QStringLiteral(">=") << 0.8
                                  << QStringLiteral("overlap(s1, s2) = 0.8333, expected >= 0.8") << true;
        // 0.83333 vs 0.83334: more digits, so that a failing check never reads "0.8333, expected >= 0.8333".
        QTest::newRow("close miss") << QStringLiteral("overlap") << QStringLiteral("s1,s2") << QString() << -1
                                    << QStringLiteral(">=") << 0.83334
                                    << QStringLiteral("overlap(s1, s2) = 0.83333, expected >= 0.83334") << false;
        QTest::newRow("trailing zeros dropped")
            << QStringLiteral("speedup") << QString() << QString() << -1 << QStringLiteral(">=") << 2.0
            << QStringLiteral("speedup = 1.75, expected >= 2") << false;
        QTest::newRow("whole number") << QStringLiteral("makespan_us") << QString() << QString() << -1
                                      << QStringLiteral("<=") << 20.0
                                      << QStringLiteral("makespan_us = 12, expected <= 20") << true;
        QTest::newRow("kinds and device") << QStringLiteral("max_concurrency") << QString()
                                          << QStringLiteral("kernel,memcpy-h2d") << 0 << QStringLiteral("==") << 1.0
                                          << QStringLiteral("max_concurrency(kernel|memcpy-h2d, device 0) = 4, "
                                                            "expected == 1")
                                          << false;
    }

    void descriptions()
    {
        QFETCH(QString, metric);
        QFETCH(QString, streams);
        QFETCH(QString, kinds);
        QFETCH(int, device);
        QFETCH(QString, op);
        QFETCH(double, value);
        QFETCH(QString, description);
        QFETCH(bool, passed);
        Expectation e = expectation(metric, streams, {}, kinds, device);
        e.op = op.toStdString();
        e.value = value;
        e.why = "because";
        e.id = "check-1";
        const auto r = evaluateExpectations(lessonTrace(), {e});
        QCOMPARE(q(r[0].description), description);
        QCOMPARE(r[0].passed, passed);
        QVERIFY(r[0].error.empty());
        QCOMPARE(q(r[0].expectation.why), QStringLiteral("because"));
        QCOMPARE(q(r[0].expectation.id), QStringLiteral("check-1"));
    }

    void descriptionOfTimes_data()
    {
        QTest::addColumn<qlonglong>("endNs");
        QTest::addColumn<double>("value");
        QTest::addColumn<QString>("description");
        QTest::newRow("large, fixed notation")
            << 1234567LL << 2000.0 << QStringLiteral("makespan_us = 1234.6, expected <= 2000");
        QTest::newRow("beyond 4 digits") << 123456789LL << 2e5
                                         << QStringLiteral("makespan_us = 123456.8, expected <= 200000");
        QTest::newRow("small") << 1234LL << 2.0 << QStringLiteral("makespan_us = 1.234, expected <= 2");
        QTest::newRow("tiny") << 1LL << 2.0 << QStringLiteral("makespan_us = 0.001, expected <= 2");
        QTest::newRow("close to the limit")
            << 1999999LL << 2000.0 << QStringLiteral("makespan_us = 1999.999, expected <= 2000");
    }

    void descriptionOfTimes()
    {
        QFETCH(qlonglong, endNs);
        QFETCH(double, value);
        QFETCH(QString, description);
        Expectation e = expectation(QStringLiteral("makespan_us"));
        e.op = "<=";
        e.value = value;
        const auto r = evaluateExpectations(traceOf(QStringLiteral("s:kernel:0:") + QString::number(endNs)), {e});
        QCOMPARE(q(r[0].description), description);
    }

    void resultsFollowTheExpectations()
    {
        Expectation pass = expectation(QStringLiteral("busy_us"), QStringLiteral("s1"));
        pass.op = "==";
        pass.value = 6;
        Expectation fail = expectation(QStringLiteral("busy_us"), QStringLiteral("s2"));
        fail.op = "<";
        fail.value = 1;
        const auto r = evaluateExpectations(lessonTrace(), {pass, fail, pass});
        QCOMPARE(r.size(), size_t(3));
        QVERIFY(r[0].passed);
        QVERIFY(!r[1].passed);
        QCOMPARE(r[1].actual, 8.0);
        QVERIFY(r[2].passed);
        QVERIFY(!allPassed(r));
        QVERIFY(allPassed({r[0], r[2]}));
        QVERIFY(allPassed({}));
    }

    void validateExpectation_data()
    {
        QTest::addColumn<QString>("metric");
        QTest::addColumn<QString>("streams");
        QTest::addColumn<QString>("spans");
        QTest::addColumn<QString>("kinds");
        QTest::addColumn<QString>("op");
        QTest::addColumn<double>("value");
        QTest::addColumn<int>("device");
        QTest::addColumn<QString>("message"); // empty: well-formed
        const QString none;
        const QString ge = QStringLiteral(">=");
        QTest::newRow("overlap ok") << QStringLiteral("overlap") << QStringLiteral("s1,s2") << none << none << ge << 0.8
                                    << -1 << QString();
        QTest::newRow("span_count with everything")
            << QStringLiteral("span_count") << none << QStringLiteral("a,b,c") << QStringLiteral("kernel,memset")
            << QStringLiteral("==") << 3.0 << 0 << QString();
        QTest::newRow("max_concurrency kinds")
            << QStringLiteral("max_concurrency") << none << none << QStringLiteral("kernel,memcpy-h2d")
            << QStringLiteral("<=") << 1.0 << 1 << QString();
        QTest::newRow("every op: <") << QStringLiteral("makespan_us") << none << none << none << QStringLiteral("<")
                                     << 1.0 << -1 << QString();
        QTest::newRow("every op: >") << QStringLiteral("makespan_us") << none << none << none << QStringLiteral(">")
                                     << 1.0 << -1 << QString();
        QTest::newRow("typo in metric") << QStringLiteral("overlaps") << QStringLiteral("s1,s2") << none << none << ge
                                        << 0.8 << -1
                                        << QStringLiteral("unknown metric \"overlaps\" (did you mean \"overlap\"?)");
        QTest::newRow("typo in metric 2") << QStringLiteral("makespan") << none << none << none << ge << 0.0 << -1
                                          << QStringLiteral("unknown metric \"makespan\" (did you mean "
                                                            "\"makespan_us\"?)");
        QTest::newRow("no such metric") << QStringLiteral("frobnication_index") << none << none << none << ge << 0.0
                                        << -1
                                        << QStringLiteral("unknown metric \"frobnication_index\" (known: "
                                                          "makespan_us, busy_us, overlap");
        QTest::newRow("no metric") << QString() << none << none << none << ge << 0.0 << -1
                                   << QStringLiteral("missing metric");
        QTest::newRow("overlap with one stream") << QStringLiteral("overlap") << QStringLiteral("s1") << none << none
                                                 << ge << 0.8 << -1 << QStringLiteral("overlap needs two streams");
        QTest::newRow("overlap with three streams")
            << QStringLiteral("overlap_us") << QStringLiteral("a,b,c") << none << none << ge << 0.8 << -1
            << QStringLiteral("overlap_us takes two streams, not 3");
        QTest::newRow("busy without stream") << QStringLiteral("busy_us") << none << none << none << ge << 0.0 << -1
                                             << QStringLiteral("busy_us needs one stream");
        QTest::newRow("makespan with a stream") << QStringLiteral("makespan_us") << QStringLiteral("s1") << none << none
                                                << ge << 0.0 << -1 << QStringLiteral("makespan_us takes no streams");
        QTest::newRow("gap with one span") << QStringLiteral("gap_us") << none << QStringLiteral("a") << none << ge
                                           << 0.0 << -1 << QStringLiteral("gap_us needs two span names");
        QTest::newRow("start without span") << QStringLiteral("start_us") << none << none << none << ge << 0.0 << -1
                                            << QStringLiteral("start_us needs one span name");
        QTest::newRow("busy with spans") << QStringLiteral("busy_us") << QStringLiteral("s1") << QStringLiteral("a")
                                         << none << ge << 0.0 << -1 << QStringLiteral("busy_us takes no span names");
        QTest::newRow("busy with kinds") << QStringLiteral("busy_us") << QStringLiteral("s1") << none
                                         << QStringLiteral("kernel") << ge << 0.0 << -1
                                         << QStringLiteral("busy_us takes no kinds");
        QTest::newRow("empty stream name") << QStringLiteral("busy_us") << QStringLiteral(" ") << none << none << ge
                                           << 0.0 << -1 << QStringLiteral("busy_us: empty stream name");
        QTest::newRow("kind typo") << QStringLiteral("max_concurrency") << none << none << QStringLiteral("kernal")
                                   << ge << 1.0 << -1
                                   << QStringLiteral("unknown span kind \"kernal\" (did you mean \"kernel\"?)");
        QTest::newRow("unknown kind") << QStringLiteral("span_count") << none << none << QStringLiteral("gpu-stuff")
                                      << ge << 1.0 << -1
                                      << QStringLiteral("unknown span kind \"gpu-stuff\" (known: kernel, memcpy-h2d");
        QTest::newRow("op =>") << QStringLiteral("makespan_us") << none << none << none << QStringLiteral("=>") << 1.0
                               << -1 << QStringLiteral("unknown comparison \"=>\" (use <, <=, >, >= or ==)");
        QTest::newRow("op !=") << QStringLiteral("makespan_us") << none << none << none << QStringLiteral("!=") << 1.0
                               << -1 << QStringLiteral("unknown comparison \"!=\"");
        QTest::newRow("op empty") << QStringLiteral("makespan_us") << none << none << none << QString() << 1.0 << -1
                                  << QStringLiteral("unknown comparison \"\"");
        QTest::newRow("value not finite") << QStringLiteral("makespan_us") << none << none << none << ge << std::nan("")
                                          << -1 << QStringLiteral("value must be a finite number");
        QTest::newRow("negative device") << QStringLiteral("makespan_us") << none << none << none << ge << 1.0 << -2
                                         << QStringLiteral("device must be a device index");
    }

    void validateExpectation()
    {
        QFETCH(QString, metric);
        QFETCH(QString, streams);
        QFETCH(QString, spans);
        QFETCH(QString, kinds);
        QFETCH(QString, op);
        QFETCH(double, value);
        QFETCH(int, device);
        QFETCH(QString, message);
        Expectation e = expectation(metric, {}, spans, kinds, device);
        // " " stands for one empty name.
        e.streams = streams == QStringLiteral(" ") ? std::vector<std::string>{""} : strings(streams);
        e.op = op.toStdString();
        e.value = value;
        const QString actual = q(streamscope::validateExpectation(e));
        if (message.isEmpty())
            QCOMPARE(actual, QString());
        else
            QVERIFY2(actual.startsWith(message), qPrintable(actual));
    }
};

QTEST_GUILESS_MAIN(TestMetrics)
#include "tst_metrics.moc"
