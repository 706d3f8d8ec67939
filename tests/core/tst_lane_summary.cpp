// The timeline's summaries by zoom level (lane_summary.h): at every level every span is in exactly one item (none
// hidden), items follow each other in time, a block holds the short spans of one bucket, and its kind is the kind
// with the most time among them.
#include "lane_summary.h"

#include <QTest>

#include <map>
#include <random>

using namespace streamscope;

namespace {

struct Lane {
    TimeColumn start, end;
    std::vector<SpanKind> kind;
    std::vector<uint32_t> list; // empty: positions are span indices
    LaneSpans spans() const
    {
        LaneSpans s;
        s.start = start.view();
        s.end = end.view();
        s.kind = kind.data();
        s.list = list.empty() ? nullptr : list.data();
        s.count = list.empty() ? start.size() : list.size();
        return s;
    }
};

// `n` disjoint spans in start order: durations and gaps spread over several orders of magnitude (some 0 ns long,
// some back to back), `kinds` kinds. `interleaved`: the lane's spans are every other span of the columns (a list).
Lane randomLane(size_t n, int kinds, uint64_t seed, bool interleaved, int64_t t0 = 1000)
{
    std::mt19937_64 rng(seed);
    Lane lane;
    int64_t t = t0;
    for (size_t i = 0; i < n; ++i) {
        const int64_t scale = int64_t(1) << (rng() % 18);
        const int64_t d = (rng() % 17 == 0) ? 0 : int64_t(rng() % uint64_t(scale)) + 1;
        const int64_t gap = (rng() % 4 == 0) ? 0 : int64_t(rng() % uint64_t(scale));
        if (interleaved) { // a span of another lane in between
            lane.start.push_back(t);
            lane.end.push_back(t + 1);
            lane.kind.push_back(SpanKind::ApiCall);
        }
        const size_t index = lane.start.size();
        lane.start.push_back(t);
        lane.end.push_back(t + d);
        lane.kind.push_back(SpanKind(int(rng() % uint64_t(kinds))));
        if (interleaved)
            lane.list.push_back(uint32_t(index));
        t += d + gap;
    }
    return lane;
}

QString describe(const LaneSummaryLevel& level, size_t i)
{
    const LaneSummaryItem& it = level.items[i];
    return QStringLiteral("level %1 item %2: [%3, %4) first %5 count %6 kind %7")
        .arg(level.shift)
        .arg(i)
        .arg(it.start)
        .arg(it.end)
        .arg(it.first)
        .arg(it.count)
        .arg(int(it.kind));
}

} // namespace

class TestLaneSummary : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void everyLevelCoversEverySpan_data()
    {
        QTest::addColumn<int>("spans");
        QTest::addColumn<int>("kinds");
        QTest::addColumn<bool>("interleaved");
        QTest::newRow("one kind") << 20000 << 1 << false;
        QTest::newRow("three kinds") << 20000 << 3 << false;
        QTest::newRow("every kind, a list") << 30000 << kSpanKindCount << true;
        QTest::newRow("small") << 300 << 2 << false;
    }

    void everyLevelCoversEverySpan()
    {
        QFETCH(int, spans);
        QFETCH(int, kinds);
        QFETCH(bool, interleaved);
        const int64_t origin = 500;
        const Lane lane = randomLane(size_t(spans), kinds, uint64_t(spans * 31 + kinds), interleaved);
        const LaneSpans ls = lane.spans();
        const LaneSummary summary(ls, origin);
        QVERIFY(!summary.levels().empty());
        int previousShift = -1;
        size_t previousItems = SIZE_MAX;
        for (const LaneSummaryLevel& level : summary.levels()) {
            // Consecutive levels, each much smaller than the lane, none bigger than the one below.
            QVERIFY(previousShift < 0 || level.shift == previousShift + 1);
            QVERIFY2(level.items.size() * LaneSummary::kReduction <= ls.count,
                     qPrintable(QString::number(level.shift)));
            QVERIFY(level.items.size() <= previousItems);
            previousShift = level.shift;
            previousItems = level.items.size();
            const int64_t bucket = level.bucketNs();
            uint32_t next = 0; // the next position to be covered
            for (size_t i = 0; i < level.items.size(); ++i) {
                const LaneSummaryItem& it = level.items[i];
                // Every span in exactly one item, in lane order.
                QVERIFY2(it.first == next && it.count >= 1, qPrintable(describe(level, i)));
                next += it.count;
                QCOMPARE(it.start, lane.start[ls.at(it.first)]);
                QCOMPARE(it.end, lane.end[ls.at(it.first + it.count - 1)]);
                if (i > 0)
                    QVERIFY2(level.items[i - 1].end <= it.start, qPrintable(describe(level, i)));
                const bool own = it.count == 1 && it.end - it.start >= bucket;
                std::map<SpanKind, int64_t> ns;
                for (uint32_t p = it.first; p < it.first + it.count; ++p) {
                    const uint32_t s = ls.at(p);
                    if (!own) {
                        // A block: short spans that start in the item's bucket.
                        QVERIFY2(lane.end[s] - lane.start[s] < bucket, qPrintable(describe(level, i)));
                        QCOMPARE((lane.start[s] - origin) >> level.shift, (it.start - origin) >> level.shift);
                    }
                    ns[lane.kind[s]] += std::max<int64_t>(1, lane.end[s] - lane.start[s]);
                }
                // Its kind: the most time; a tie to the lower kind.
                SpanKind dominant = ns.begin()->first;
                for (const auto& [k, t] : ns)
                    if (t > ns[dominant])
                        dominant = k;
                QVERIFY2(it.kind == dominant, qPrintable(describe(level, i)));
                QCOMPARE(double(it.weight), double(float(ns[dominant])));
                // One block per bucket: the next item is in a later bucket, or a span of its own.
                if (!own && i + 1 < level.items.size()) {
                    const LaneSummaryItem& after = level.items[i + 1];
                    const bool afterOwn = after.count == 1 && after.end - after.start >= bucket;
                    QVERIFY2(afterOwn
                                 || ((after.start - origin) >> level.shift) != ((it.start - origin) >> level.shift),
                             qPrintable(describe(level, i)));
                }
            }
            QCOMPARE(size_t(next), ls.count);
        }
        // Small enough to keep: a few bytes a span for all levels.
        QVERIFY2(summary.memoryBytes() <= 4 * ls.count + 4096, qPrintable(QString::number(summary.memoryBytes())));
    }

    void levelForAView()
    {
        const Lane lane = randomLane(50000, 2, 7, false);
        const LaneSummary summary(lane.spans(), 0);
        const auto& levels = summary.levels();
        QVERIFY(levels.size() >= 3);
        const int64_t finest = levels.front().bucketNs();
        QCOMPARE(summary.levelFor(double(finest) - 1), nullptr); // finer than the finest: walk the spans
        QCOMPARE(summary.levelFor(double(finest))->shift, levels.front().shift);
        QCOMPARE(summary.levelFor(double(finest) * 3)->shift, levels.front().shift + 1);
        QCOMPARE(summary.levelFor(1e30)->shift, levels.back().shift);
    }

    void aBurstKeepsFineLevels()
    {
        // 100k spans of 10 ns every 20 ns in one millisecond, then one span a second later: the mean spacing says
        // 10 us, but the burst is summarized at buckets of a fraction of a microsecond too.
        Lane lane;
        for (int i = 0; i < 100000; ++i) {
            lane.start.push_back(int64_t(i) * 20);
            lane.end.push_back(int64_t(i) * 20 + 10);
            lane.kind.push_back(i % 3 ? SpanKind::Kernel : SpanKind::Memset);
        }
        lane.start.push_back(1'000'000'000);
        lane.end.push_back(1'000'000'100);
        lane.kind.push_back(SpanKind::Kernel);
        const LaneSummary summary(lane.spans(), 0);
        QVERIFY(!summary.levels().empty());
        QVERIFY2(summary.levels().front().bucketNs() <= 1024,
                 qPrintable(QString::number(summary.levels().front().shift)));
        // Kernels have twice the memsets' time: every block of the burst is a kernel block.
        for (const LaneSummaryItem& it : summary.levels().front().items)
            QVERIFY(it.kind == SpanKind::Kernel);
    }

    void smallLanesHaveNoLevels()
    {
        const Lane lane = randomLane(LaneSummary::kMinSpans - 1, 2, 3, false);
        QVERIFY(LaneSummary(lane.spans(), 0).levels().empty());
        QVERIFY(LaneSummary().levels().empty());
    }

    void itemSearch()
    {
        const Lane lane = randomLane(20000, 2, 11, false);
        const LaneSummary summary(lane.spans(), 0);
        const LaneSummaryLevel& level = summary.levels().front();
        const int64_t t = level.items[level.items.size() / 2].start;
        const size_t p = firstItemEndingAfter(level, 0, t);
        QVERIFY(level.items[p].end > t);
        QVERIFY(p == 0 || level.items[p - 1].end <= t);
        const size_t q = firstItemStartingAtOrAfter(level, p, t + 1);
        QVERIFY(q == level.items.size() || level.items[q].start >= t + 1);
        QVERIFY(level.items[q - 1].start < t + 1);
    }
};

QTEST_GUILESS_MAIN(TestLaneSummary)
#include "tst_lane_summary.moc"
