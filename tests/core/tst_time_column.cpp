// The compact column of span times (TimeColumn): every int64 value comes back exactly, whether it fits its block's
// 32-bit offset or is kept as an exception, through push_back, set, shift, iteration, views, copyTo and the trace's
// reordering; the id of its entries (contentId), and the trace's time range kept by finalize() while they stay.
#include "time_column.h"
#include "trace.h"

#include <QTest>

#include <algorithm>
#include <limits>
#include <random>
#include <vector>

using namespace streamscope;

class TestTimeColumn : public QObject {
    Q_OBJECT
private slots:
    void roundTripsEveryValue();
    void setMovesEntriesInAndOutOfExceptions();
    void shiftMovesEveryEntry();
    void iteratorsSearchLikeAVector();
    void sortedTrackTimesNeedNoExceptions();
    void finalizeKeepsTimesExact();
    void viewReadsLikeTheColumn();
    void copyToUnpacksAnyRange();
    void viewOfAnEmptyColumn();
    void viewAfterSetAndShift();
    void contentIdFollowsTheEntries();
    void timeRangeKeptOnlyWhileTimesAre();
};

namespace {
void expectSame(const TimeColumn& c, const std::vector<int64_t>& want)
{
    QCOMPARE(c.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i)
        if (c[i] != want[i])
            QFAIL(qPrintable(QStringLiteral("entry %1: %2, want %3").arg(i).arg(c[i]).arg(want[i])));
    QVERIFY(c.toVector() == want);
}
} // namespace

void TestTimeColumn::roundTripsEveryValue()
{
    constexpr int64_t kMin = std::numeric_limits<int64_t>::min(), kMax = std::numeric_limits<int64_t>::max();
    std::vector<int64_t> want{0,
                              1,
                              -1,
                              kMin,
                              kMax,
                              kMin + 1,
                              kMax - 1,
                              int64_t(1) << 53,
                              -(int64_t(1) << 40),
                              5'157'186'974'000'000'000,
                              4'294'967'295,
                              4'294'967'296};
    std::mt19937_64 rng(7);
    for (int i = 0; i < 5000; ++i) // runs of close times with jumps of any size between them
        want.push_back(i % 700 == 0 ? int64_t(rng() >> 2) - (int64_t(1) << 61)
                                    : want.back() + int64_t(rng() % 100'000));
    TimeColumn c;
    for (int64_t v : want)
        c.push_back(v);
    expectSame(c, want);
    QVERIFY(c.exceptionCount() > 0); // the extremes cannot share a block's base
    QVERIFY(c.exceptionCount() < want.size() / 10);
    expectSame(TimeColumn(want), want);
}

void TestTimeColumn::setMovesEntriesInAndOutOfExceptions()
{
    std::vector<int64_t> want(1000);
    for (size_t i = 0; i < want.size(); ++i)
        want[i] = 1'000'000'000 + int64_t(i) * 1000;
    TimeColumn c(want);
    QCOMPARE(c.exceptionCount(), size_t(0));
    const int64_t far = int64_t(1) << 60;
    auto put = [&](size_t i, int64_t v) {
        c.set(i, v);
        want[i] = v;
    };
    put(3, far + 3);     // a second window of block 0: its second base
    put(300, far + 300); // block 1's second base
    expectSame(c, want);
    QCOMPARE(c.exceptionCount(), size_t(0));
    put(200, -far);    // a third window of block 0: an exception
    put(999, far);     // block 3's second base
    put(998, far / 2); // a third window of block 3
    expectSame(c, want);
    QCOMPARE(c.exceptionCount(), size_t(2));
    put(200, 1'000'000'123); // back within block 0's first window
    put(998, -7);            // still fits neither base: the exception replaced in place
    expectSame(c, want);
    QCOMPARE(c.exceptionCount(), size_t(1));
}

void TestTimeColumn::shiftMovesEveryEntry()
{
    std::vector<int64_t> want{10, 20, int64_t(1) << 50, 30};
    for (int i = 0; i < 600; ++i)
        want.push_back(40 + i);
    TimeColumn c(want);
    constexpr int64_t kEpoch = 5'157'186'974'000'000'000;
    c.shift(kEpoch);
    for (int64_t& v : want)
        v += kEpoch;
    expectSame(c, want);
}

void TestTimeColumn::iteratorsSearchLikeAVector()
{
    std::vector<int64_t> want;
    for (int i = 0; i < 3000; ++i)
        want.push_back(int64_t(i) * int64_t(i) * 997);
    const TimeColumn c(want);
    for (int64_t t : {int64_t(-1), int64_t(0), int64_t(5'000'000), want[1234], want.back() + 1}) {
        const auto a = std::lower_bound(c.begin(), c.end(), t) - c.begin();
        const auto b = std::lower_bound(want.begin(), want.end(), t) - want.begin();
        QCOMPARE(a, b);
    }
    QCOMPARE(*std::max_element(c.begin(), c.end()), want.back());
    QCOMPARE(c.begin()[17], want[17]);
    QCOMPARE(*(c.end() - 1), want.back());
}

void TestTimeColumn::sortedTrackTimesNeedNoExceptions()
{
    // A stream of a minute-long run: each block of entries covers far less than 4 s, so each fits its offsets.
    TimeColumn c;
    for (int64_t i = 0; i < 100'000; ++i)
        c.push_back(60'000'000'000 + i * 600'000);
    QCOMPARE(c.exceptionCount(), size_t(0));
    c.shrink_to_fit();
    QVERIFY(c.memoryBytes() < c.size() * 4 + c.size() / 8);
}

void TestTimeColumn::finalizeKeepsTimesExact()
{
    // Two tracks far apart in time, spans added out of order: finalize() reorders them and every time stays exact.
    Trace t;
    t.addTrack({});
    t.addTrack({});
    std::vector<std::pair<int64_t, int64_t>> want[2];
    std::mt19937_64 rng(3);
    for (int i = 0; i < 4000; ++i) {
        const uint32_t track = uint32_t(rng() % 2);
        const int64_t s = (track ? int64_t(1) << 45 : 0) + int64_t(rng() % 10'000'000'000);
        const int64_t e = s + int64_t(rng() % 1'000'000);
        SpanInit init;
        init.track = track;
        init.name = "k";
        init.start = s;
        init.end = e;
        t.addSpan(init);
        want[track].emplace_back(s, e);
    }
    t.finalize();
    // The block that holds the end of one track and the start of the other takes its second base there.
    QCOMPARE(t.spans.start.exceptionCount(), size_t(0));
    QCOMPARE(t.spans.end.exceptionCount(), size_t(0));
    for (uint32_t tr = 0; tr < 2; ++tr) {
        std::sort(want[tr].begin(), want[tr].end());
        QCOMPARE(size_t(t.trackEnd(tr) - t.trackBegin(tr)), want[tr].size());
        for (uint32_t i = t.trackBegin(tr); i < t.trackEnd(tr); ++i) {
            QCOMPARE(t.spans.start[i], want[tr][i - t.trackBegin(tr)].first);
            QCOMPARE(t.spans.end[i], want[tr][i - t.trackBegin(tr)].second);
        }
    }
}

namespace {
// Blocks without exceptions, blocks with several (at a block's last entry too), and a short last block: exceptions
// at kBlock + 9, 2 * kBlock - 1 and 3 * kBlock + 57, 107, 157, 207.
std::vector<int64_t> valuesWithExceptions()
{
    std::vector<int64_t> want;
    std::mt19937_64 rng(11);
    for (size_t i = 0; i < 5 * TimeColumn::kBlock + 37; ++i) {
        const size_t inBlock = i % TimeColumn::kBlock, block = i / TimeColumn::kBlock;
        // In blocks 1, 3 and 5 the first far value takes the block's second base, the others are exceptions.
        const bool odd = (block == 1 && (inBlock == 5 || inBlock == 9 || inBlock == TimeColumn::kBlock - 1))
            || (block == 3 && inBlock % 50 == 7) || (block == 5 && inBlock == 36);
        want.push_back(odd ? int64_t(rng()) : 1'000'000'000 + int64_t(i) * 1000);
    }
    // Block 2 holds two windows (its second base) and no exception.
    for (size_t i = 2 * TimeColumn::kBlock + 100; i < 3 * TimeColumn::kBlock; ++i)
        want[i] += int64_t(1) << 50;
    return want;
}
} // namespace

void TestTimeColumn::viewReadsLikeTheColumn()
{
    const std::vector<int64_t> want = valuesWithExceptions();
    const TimeColumn c(want);
    QCOMPARE(c.exceptionCount(), size_t(6));
    const TimeColumn::View v = c.view();
    QCOMPARE(v.size(), want.size());
    QVERIFY(!v.empty());
    for (size_t i = 0; i < want.size(); ++i)
        QCOMPARE(v[i], want[i]);
    // Iterators carry the view: an iterator into the middle reads from there, and says where it is.
    const auto it = c.begin() + 300;
    QCOMPARE(it.index(), size_t(300));
    QCOMPARE(it.view()[301], want[301]);
    QCOMPARE(*it, want[300]);
}

void TestTimeColumn::copyToUnpacksAnyRange()
{
    const std::vector<int64_t> want = valuesWithExceptions();
    const TimeColumn c(want);
    const size_t n = want.size(), B = TimeColumn::kBlock;
    // Empty ranges, single entries, ranges that start or end on a block boundary or on an exception, the whole.
    const std::vector<std::pair<size_t, size_t>> ranges{
        {0, 0},         {0, n},         {0, 1},     {B, B + 1}, {B - 1, B + 1},       {B + 9, B + 10},   {B + 5, 3 * B},
        {2 * B, 3 * B}, {3 * B + 7, n}, {n - 1, n}, {n, n},     {B + 1, 4 * B + 200}, {2 * B - 1, 2 * B}};
    for (const auto& [first, last] : ranges) {
        std::vector<int64_t> out(last - first + 2, -42);
        c.copyTo(first, last, out.data() + 1);
        QCOMPARE(out.front(), int64_t(-42)); // nothing written outside the range
        QCOMPARE(out.back(), int64_t(-42));
        for (size_t i = first; i < last; ++i)
            if (out[i - first + 1] != want[i])
                QFAIL(qPrintable(QStringLiteral("[%1, %2) entry %3: %4, want %5")
                                     .arg(first)
                                     .arg(last)
                                     .arg(i)
                                     .arg(out[i - first + 1])
                                     .arg(want[i])));
    }
    // Every range of a short column against the vector (the extremes of int64 among the values).
    constexpr int64_t kMin = std::numeric_limits<int64_t>::min(), kMax = std::numeric_limits<int64_t>::max();
    const std::vector<int64_t> small{5, kMax, kMin, 7, -3, kMax - 1, 9};
    const TimeColumn sc(small);
    for (size_t first = 0; first <= small.size(); ++first)
        for (size_t last = first; last <= small.size(); ++last) {
            std::vector<int64_t> out(last - first);
            sc.copyTo(first, last, out.data());
            QVERIFY(std::equal(out.begin(), out.end(), small.begin() + ptrdiff_t(first)));
        }
}

void TestTimeColumn::viewOfAnEmptyColumn()
{
    const TimeColumn c;
    const TimeColumn::View v = c.view();
    QCOMPARE(v.size(), size_t(0));
    QVERIFY(v.empty());
    v.copyTo(0, 0, nullptr);
    QVERIFY(c.toVector().empty());
    QVERIFY(c.begin() == c.end());
    const TimeColumn::View none;
    QVERIFY(none.empty());
}

void TestTimeColumn::viewAfterSetAndShift()
{
    std::vector<int64_t> want = valuesWithExceptions();
    TimeColumn c(want);
    // shift() moves the bases and exceptions in place: a view taken before reads the shifted times.
    const TimeColumn::View before = c.view();
    constexpr int64_t kEpoch = 5'157'186'974'000'000'000;
    c.shift(kEpoch);
    for (int64_t& v : want)
        v = int64_t(uint64_t(v) + uint64_t(kEpoch));
    for (size_t i = 0; i < want.size(); ++i)
        QCOMPARE(before[i], want[i]);
    // set() may add or remove exceptions (moving that list): a view taken after it reads the new values.
    const size_t B = TimeColumn::kBlock;
    const size_t exceptions = c.exceptionCount();
    auto put = [&](size_t i, int64_t v) {
        c.set(i, v);
        want[i] = v;
    };
    put(3, int64_t(1) << 62);            // block 0's second base
    put(4, -(int64_t(1) << 62));         // a third window of block 0: a new exception
    put(B + 9, int64_t(1) << 61);        // an exception replaced in place
    put(4 * B + 5, int64_t(1) << 62);    // block 4's second base
    put(4 * B + 6, -5);                  // a new exception
    put(2 * B - 1, want[2 * B - 2] + 1); // was an exception: back in its block's first window
    QCOMPARE(c.exceptionCount(), exceptions + 1);
    const TimeColumn::View after = c.view();
    std::vector<int64_t> out(want.size());
    after.copyTo(0, want.size(), out.data());
    QVERIFY(out == want);
    for (size_t i = 0; i < want.size(); ++i)
        QCOMPARE(after[i], want[i]);
}

void TestTimeColumn::contentIdFollowsTheEntries()
{
    TimeColumn c{5, 7, 9};
    QCOMPARE(c.contentId(), uint64_t(0)); // none until asked for
    const uint64_t id = c.identify();
    QVERIFY(id != 0);
    QCOMPARE(c.identify(), id); // kept while the entries stay
    TimeColumn copy = c;        // the same entries: the same id
    QCOMPARE(copy.contentId(), id);
    TimeColumn other{5, 7, 9}; // equal entries, another column: an id of its own
    QVERIFY(other.identify() != id);
    // Every change of the entries drops the id.
    auto dropped = [&](auto change) {
        TimeColumn d = c;
        change(d);
        return d.contentId() == 0;
    };
    QVERIFY(dropped([](TimeColumn& d) { d.push_back(11); }));
    QVERIFY(dropped([](TimeColumn& d) { d.set(1, 8); }));
    QVERIFY(dropped([](TimeColumn& d) { d.shift(1); }));
    QVERIFY(dropped([](TimeColumn& d) { d.clear(); }));
    QVERIFY(dropped([](TimeColumn& d) {
        const std::vector<int64_t> v{1, 2};
        d.assign(v.begin(), v.end());
    }));
    QVERIFY(dropped([](TimeColumn& d) { QVERIFY(!d.adopt({0}, {100, TimeColumn::kUnsetBase}, {})); }));
    // A move takes the id with the entries; the column moved from has neither.
    TimeColumn moved = std::move(copy);
    QCOMPARE(moved.contentId(), id);
    QCOMPARE(copy.contentId(), uint64_t(0)); // NOLINT(bugprone-use-after-move): the moved-from state is the point
    TimeColumn assigned;
    assigned = std::move(moved);
    QCOMPARE(assigned.contentId(), id);
    QCOMPARE(moved.contentId(), uint64_t(0)); // NOLINT(bugprone-use-after-move)
}

void TestTimeColumn::timeRangeKeptOnlyWhileTimesAre()
{
    Trace t;
    const uint32_t a = t.addTrack({});
    const uint32_t b = t.addTrack({});
    t.addSpan({b, SpanKind::Kernel, "k", 40, 90}); // out of order: finalize() sorts
    t.addSpan({a, SpanKind::Kernel, "k", 10, 20});
    t.addSpan({a, SpanKind::Kernel, "k", 15, 120});
    t.finalize();
    QCOMPARE(t.timeRange(), (std::pair<int64_t, int64_t>{10, 120}));
    // Times changed after finalize(): the range follows them, never the one kept.
    t.spans.end.set(1, 300);
    QCOMPARE(t.timeRange(), (std::pair<int64_t, int64_t>{10, 300}));
    t.spans.start.shift(-5);
    t.spans.end.shift(-5);
    QCOMPARE(t.timeRange(), (std::pair<int64_t, int64_t>{5, 295}));
    t.finalize();
    QCOMPARE(t.timeRange(), (std::pair<int64_t, int64_t>{5, 295}));
    // A copy keeps it and answers the same; columns swapped in from elsewhere are scanned.
    const Trace copy = t;
    QCOMPARE(copy.timeRange(), (std::pair<int64_t, int64_t>{5, 295}));
    t.spans.start = TimeColumn{1, 2, 3};
    QCOMPARE(t.timeRange(), (std::pair<int64_t, int64_t>{1, 295}));
    // Empty, and a single span (the pass in finalize() covers it too).
    Trace one;
    one.addTrack({});
    one.addSpan({0, SpanKind::Kernel, "k", -7, 3});
    one.finalize();
    QCOMPARE(one.timeRange(), (std::pair<int64_t, int64_t>{-7, 3}));
    Trace none;
    none.finalize();
    QCOMPARE(none.timeRange(), (std::pair<int64_t, int64_t>{0, 0}));
}

QTEST_GUILESS_MAIN(TestTimeColumn)
#include "tst_time_column.moc"
