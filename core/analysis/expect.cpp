#include "expect.h"

#include "collectives.h"
#include "metrics.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <limits>

namespace streamscope {

namespace {

// What a metric takes. Stream and span arguments: an exact count, or kAny (zero or more).
constexpr int kAny = -1;

struct MetricSpec {
    std::string_view name;
    int streams = 0;
    int spans = 0;
    bool kinds = false;
    std::string_view description;
};

constexpr std::array<MetricSpec, 15> kMetrics{{
    {"makespan_us", 0, 0, false, "time from the first GPU span's start to the last GPU span's end (µs)"},
    {"busy_us", 1, 0, false, "time the stream had GPU work, overlapping spans counted once (µs)"},
    {"overlap", 2, 0, false,
     "time both streams were busy at once, as a fraction of the less busy stream's busy time (0..1)"},
    {"overlap_us", 2, 0, false, "time both streams were busy at once (µs)"},
    {"max_concurrency", 0, 0, true, "most GPU spans (of the given kinds) running at one instant"},
    {"speedup", 0, 0, false, "sum of GPU span durations divided by the makespan (1 = fully serialized)"},
    {"copy_compute_overlap", 0, 0, false, "fraction of copy time during which a kernel ran (0..1)"},
    {"gap_us", 0, 2, true,
     "earliest start of the second span name minus latest end of the first (µs; negative: the second started first)"},
    {"start_us", 0, 1, true, "earliest start of the spans with this name, after the first GPU span's start (µs)"},
    {"end_us", 0, 1, true, "latest end of the spans with this name, after the first GPU span's start (µs)"},
    {"duration_us", 0, 1, true, "sum of the durations of the spans with this name (µs)"},
    {"span_count", 0, kAny, true, "number of spans (of the given kinds and names; all when none are given)"},
    {"host_sync_us", 0, 0, false, "total time host threads spent blocked in synchronizing calls (µs)"},
    {"collective_calls", 0, 0, false, "collective calls linked across the ranks of a job"},
    {"collective_wait_us", 0, 0, false,
     "longest time a rank waited in a collective call for the last rank to reach it (µs; 0 without collectives)"},
}};

const MetricSpec* findMetric(std::string_view name)
{
    for (const auto& m : kMetrics)
        if (m.name == name)
            return &m;
    return nullptr;
}

constexpr std::array<std::string_view, 5> kOps{"<", "<=", ">", ">=", "=="};

size_t editDistance(std::string_view a, std::string_view b)
{
    std::vector<size_t> row(b.size() + 1);
    for (size_t j = 0; j <= b.size(); ++j)
        row[j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= b.size(); ++j) {
            const size_t up = row[j];
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
            diag = up;
        }
    }
    return row[b.size()];
}

// The closest known name within a small edit distance (or one that begins with `s`), for "did you mean".
template <typename Names>
std::string_view closest(std::string_view s, const Names& names)
{
    std::string_view best;
    size_t bestDistance = std::max<size_t>(2, s.size() / 3) + 1;
    for (std::string_view n : names) {
        const size_t d = s.size() >= 4 && n.substr(0, s.size()) == s ? 1 : editDistance(s, n);
        if (d < bestDistance) {
            bestDistance = d;
            best = n;
        }
    }
    return best;
}

std::string inQuotes(std::string_view s)
{
    return "\"" + std::string(s) + "\"";
}

std::string plural(int n, std::string_view one, std::string_view many)
{
    static constexpr std::array<std::string_view, 3> kWords{"no", "one", "two"};
    return std::string(n >= 0 && n < 3 ? kWords[size_t(n)] : std::to_string(n)) + " "
        + std::string(n == 1 ? one : many);
}

std::string argumentError(const MetricSpec& m, int wanted, size_t given, std::string_view one, std::string_view many)
{
    if (wanted == 0)
        return std::string(m.name) + " takes no " + std::string(many);
    if (given < size_t(wanted))
        return std::string(m.name) + " needs " + plural(wanted, one, many);
    return std::string(m.name) + " takes " + plural(wanted, one, many) + ", not " + std::to_string(given);
}

bool compare(double actual, std::string_view op, double value)
{
    if (op == "<")
        return actual < value;
    if (op == "<=")
        return actual <= value;
    if (op == ">")
        return actual > value;
    if (op == ">=")
        return actual >= value;
    // ==: equal within a relative tolerance, so that computed fractions compare equal to written decimals.
    return std::abs(actual - value) <= 1e-9 * std::max(std::abs(actual), std::abs(value));
}

// `precision` significant digits, in fixed notation for the magnitudes times and fractions have (1234.5, not
// 1.234e+03); whole numbers without a fraction.
std::string formatNumber(double v, int precision)
{
    if (!std::isfinite(v))
        return std::isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf");
    const double magnitude = std::abs(v);
    if (v == std::floor(v) && magnitude < 1e15)
        return std::to_string(int64_t(v));
    char buf[64];
    if (magnitude < 1e-3 || magnitude >= 1e15) {
        std::snprintf(buf, sizeof buf, "%.*g", precision, v);
        return buf;
    }
    const int exponent = int(std::floor(std::log10(magnitude)));
    std::snprintf(buf, sizeof buf, "%.*f", std::max(1, precision - 1 - exponent), v);
    std::string s = buf;
    while (s.back() == '0')
        s.pop_back();
    if (s.back() == '.')
        s.pop_back();
    return s;
}

std::string joinKinds(const std::vector<std::string>& kinds)
{
    std::string k;
    for (const auto& kind : kinds)
        k += (k.empty() ? "" : "|") + kind;
    return k;
}

// The metric with its arguments: "overlap(s1, s2)", "max_concurrency(kernel, device 0)".
std::string label(const Expectation& e)
{
    std::vector<std::string> args(e.streams.begin(), e.streams.end());
    args.insert(args.end(), e.spans.begin(), e.spans.end());
    if (!e.kinds.empty())
        args.push_back(joinKinds(e.kinds));
    if (e.device >= 0)
        args.push_back("device " + std::to_string(e.device));
    std::string s = e.metric;
    if (!args.empty()) {
        s += '(';
        for (size_t i = 0; i < args.size(); ++i)
            s += (i ? ", " : "") + args[i];
        s += ')';
    }
    return s;
}

// ---------------------------------------------------------------------------------------------------------------
// Evaluation

constexpr double kNsPerUs = 1000.0;

struct Context {
    const Trace& trace;
    const Expectation& e;

    bool onDevice(uint32_t span) const
    {
        if (e.device < 0)
            return true;
        const uint32_t t = trace.spans.track[span];
        return t < trace.tracks.size() && trace.tracks[t].device == e.device;
    }
};

// Stream tracks a name in "streams" stands for: the stream with that name, and every per-thread default stream
// instance "name@hostthread" that the run plan made of it.
std::vector<uint32_t> matchStreams(const Trace& trace, const std::string& name, int device)
{
    std::vector<uint32_t> out;
    const std::string prefix = name + "@";
    for (uint32_t t = 0; t < trace.tracks.size(); ++t) {
        const Track& tr = trace.tracks[t];
        if (tr.kind != TrackKind::Stream || (device >= 0 && tr.device != device))
            continue;
        if (tr.name == name
            || (tr.streamKind == StreamKind::PerThreadDefault && tr.name.size() > prefix.size()
                && tr.name.compare(0, prefix.size(), prefix) == 0))
            out.push_back(t);
    }
    return out;
}

Result<std::vector<Interval>> streamBusy(const Trace& trace, const std::string& name, int device)
{
    const auto tracks = matchStreams(trace, name, device);
    if (tracks.empty()) {
        std::string known;
        for (const auto& t : trace.tracks)
            if (t.kind == TrackKind::Stream && (device < 0 || t.device == device))
                known += (known.empty() ? "" : ", ") + t.name;
        std::string msg = "no stream named " + inQuotes(name) + " in the trace";
        if (device >= 0)
            msg += " on device " + std::to_string(device);
        msg += known.empty() ? " (it has no streams)" : " (streams: " + known + ")";
        return Error{{}, {}, msg};
    }
    std::vector<Interval> all;
    for (uint32_t t : tracks) {
        auto b = busyIntervals(trace, t);
        all.insert(all.end(), b.begin(), b.end());
    }
    return mergeIntervals(std::move(all));
}

std::vector<SpanKind> parseKinds(const std::vector<std::string>& kinds)
{
    std::vector<SpanKind> out;
    for (const auto& k : kinds)
        if (auto sk = spanKindFromString(k))
            out.push_back(*sk);
    return out;
}

// The string indices that spell `name` (a reader may have stored a name more than once).
std::vector<uint32_t> nameIds(const Trace& trace, const std::string& name)
{
    std::vector<uint32_t> ids;
    for (uint32_t i = 0; i < trace.strings.size(); ++i)
        if (trace.strings[i] == name)
            ids.push_back(i);
    return ids;
}

struct NamedSpans {
    int64_t count = 0;
    int64_t firstStart = std::numeric_limits<int64_t>::max();
    int64_t lastEnd = std::numeric_limits<int64_t>::min();
    int64_t totalNs = 0;
};

Result<NamedSpans> namedSpans(const Context& c, const std::string& name)
{
    const auto ids = nameIds(c.trace, name);
    const auto kinds = parseKinds(c.e.kinds);
    const auto& s = c.trace.spans;
    NamedSpans out;
    for (uint32_t i = 0; i < s.size(); ++i) {
        if (std::find(ids.begin(), ids.end(), s.name[i]) == ids.end() || !c.onDevice(i))
            continue;
        if (!kinds.empty() && std::find(kinds.begin(), kinds.end(), s.kind[i]) == kinds.end())
            continue;
        ++out.count;
        out.firstStart = std::min(out.firstStart, s.start[i]);
        out.lastEnd = std::max(out.lastEnd, s.end[i]);
        out.totalNs += s.end[i] - s.start[i];
    }
    if (out.count == 0) {
        std::string msg = "no span named " + inQuotes(name);
        if (!kinds.empty())
            msg += " of kind " + joinKinds(c.e.kinds);
        if (c.e.device >= 0)
            msg += " on device " + std::to_string(c.e.device);
        return Error{{}, {}, msg + " in the trace"};
    }
    return out;
}

struct GpuRange {
    bool any = false;
    int64_t first = 0, last = 0, workNs = 0;
};

GpuRange gpuRange(const Context& c)
{
    GpuRange r;
    int64_t first = std::numeric_limits<int64_t>::max(), last = std::numeric_limits<int64_t>::min();
    const auto& s = c.trace.spans;
    for (uint32_t i = 0; i < s.size(); ++i) {
        if (!isGpuSpan(s.kind[i]) || !c.onDevice(i))
            continue;
        r.any = true;
        first = std::min(first, s.start[i]);
        last = std::max(last, s.end[i]);
        r.workNs += s.end[i] - s.start[i];
    }
    if (r.any) {
        r.first = first;
        r.last = last;
    }
    return r;
}

// Times of start_us/end_us count from the first GPU span, the moment a reader of the timeline sees as zero.
int64_t timeOrigin(const Context& c)
{
    const GpuRange r = gpuRange(c);
    return r.any ? r.first : c.trace.timeRange().first;
}

Status checkDevice(const Context& c)
{
    if (c.e.device < 0)
        return {};
    for (const auto& t : c.trace.tracks)
        if (t.device == c.e.device)
            return {};
    return Error{{}, {}, "no track on device " + std::to_string(c.e.device) + " in the trace"};
}

Result<double> compute(const Context& c)
{
    const Trace& trace = c.trace;
    const Expectation& e = c.e;
    const std::string& m = e.metric;
    if (Status st = checkDevice(c); !st)
        return st.error();

    if (m == "makespan_us" || m == "speedup") {
        const GpuRange r = gpuRange(c);
        const int64_t makespan = r.last - r.first;
        if (m == "makespan_us")
            return double(makespan) / kNsPerUs;
        return makespan > 0 ? double(r.workNs) / double(makespan) : 0.0;
    }
    if (m == "busy_us") {
        auto busy = streamBusy(trace, e.streams[0], e.device);
        if (!busy)
            return busy.error();
        return double(totalLength(*busy)) / kNsPerUs;
    }
    if (m == "overlap" || m == "overlap_us") {
        auto a = streamBusy(trace, e.streams[0], e.device);
        if (!a)
            return a.error();
        auto b = streamBusy(trace, e.streams[1], e.device);
        if (!b)
            return b.error();
        const int64_t both = intersectionLength(*a, *b);
        if (m == "overlap_us")
            return double(both) / kNsPerUs;
        const int64_t less = std::min(totalLength(*a), totalLength(*b));
        return less > 0 ? double(both) / double(less) : 0.0;
    }
    if (m == "max_concurrency")
        return double(maxConcurrency(trace, e.device, parseKinds(e.kinds)));
    if (m == "copy_compute_overlap") {
        std::vector<Interval> copies, kernels;
        const auto& s = trace.spans;
        for (uint32_t i = 0; i < s.size(); ++i) {
            if (!c.onDevice(i))
                continue;
            if (isCopySpan(s.kind[i]))
                copies.push_back({s.start[i], s.end[i]});
            else if (s.kind[i] == SpanKind::Kernel)
                kernels.push_back({s.start[i], s.end[i]});
        }
        const auto copyUnion = mergeIntervals(std::move(copies));
        const int64_t copyNs = totalLength(copyUnion);
        if (copyNs == 0)
            return 0.0;
        return double(intersectionLength(copyUnion, mergeIntervals(std::move(kernels)))) / double(copyNs);
    }
    if (m == "gap_us") {
        auto a = namedSpans(c, e.spans[0]);
        if (!a)
            return a.error();
        auto b = namedSpans(c, e.spans[1]);
        if (!b)
            return b.error();
        return double(b->firstStart - a->lastEnd) / kNsPerUs;
    }
    if (m == "start_us" || m == "end_us" || m == "duration_us") {
        auto a = namedSpans(c, e.spans[0]);
        if (!a)
            return a.error();
        if (m == "duration_us")
            return double(a->totalNs) / kNsPerUs;
        const int64_t origin = timeOrigin(c);
        return double((m == "start_us" ? a->firstStart : a->lastEnd) - origin) / kNsPerUs;
    }
    if (m == "span_count") {
        std::vector<uint32_t> ids;
        for (const auto& name : e.spans) {
            const auto more = nameIds(trace, name);
            ids.insert(ids.end(), more.begin(), more.end());
        }
        const auto kinds = parseKinds(e.kinds);
        const auto& s = trace.spans;
        int64_t count = 0;
        for (uint32_t i = 0; i < s.size(); ++i) {
            if (!c.onDevice(i))
                continue;
            if (!kinds.empty() && std::find(kinds.begin(), kinds.end(), s.kind[i]) == kinds.end())
                continue;
            if (!e.spans.empty() && std::find(ids.begin(), ids.end(), s.name[i]) == ids.end())
                continue;
            ++count;
        }
        return double(count);
    }
    if (m == "host_sync_us") {
        const auto& s = trace.spans;
        int64_t total = 0;
        for (uint32_t i = 0; i < s.size(); ++i) {
            const uint32_t t = s.track[i];
            if (s.kind[i] == SpanKind::Sync && t < trace.tracks.size() && trace.tracks[t].kind == TrackKind::HostThread
                && c.onDevice(i))
                total += s.end[i] - s.start[i];
        }
        return double(total) / kNsPerUs;
    }
    if (m == "collective_calls" || m == "collective_wait_us") {
        const auto calls = collectiveCalls(trace);
        if (m == "collective_calls")
            return double(calls.size());
        int64_t longest = 0;
        for (const auto& call : calls)
            longest = std::max(longest, call.waitedNs);
        return double(longest) / kNsPerUs;
    }
    return Error{{}, {}, "unknown metric " + inQuotes(m)};
}

} // namespace

std::vector<std::pair<std::string, std::string>> expectationMetrics()
{
    std::vector<std::pair<std::string, std::string>> out;
    for (const auto& m : kMetrics)
        out.emplace_back(m.name, m.description);
    return out;
}

std::string validateExpectation(const Expectation& e)
{
    if (e.metric.empty())
        return "missing metric";
    const MetricSpec* m = findMetric(e.metric);
    if (!m) {
        std::vector<std::string_view> names;
        for (const auto& metric : kMetrics)
            names.push_back(metric.name);
        const std::string_view guess = closest(e.metric, names);
        if (!guess.empty())
            return "unknown metric " + inQuotes(e.metric) + " (did you mean " + inQuotes(guess) + "?)";
        std::string list;
        for (auto n : names)
            list += (list.empty() ? "" : ", ") + std::string(n);
        return "unknown metric " + inQuotes(e.metric) + " (known: " + list + ")";
    }
    if (m->streams != kAny && e.streams.size() != size_t(m->streams))
        return argumentError(*m, m->streams, e.streams.size(), "stream", "streams");
    if (m->spans != kAny && e.spans.size() != size_t(m->spans))
        return argumentError(*m, m->spans, e.spans.size(), "span name", "span names");
    for (const auto& s : e.streams)
        if (s.empty())
            return std::string(m->name) + ": empty stream name";
    for (const auto& s : e.spans)
        if (s.empty())
            return std::string(m->name) + ": empty span name";
    if (!m->kinds && !e.kinds.empty())
        return std::string(m->name) + " takes no kinds";
    for (const auto& k : e.kinds) {
        if (spanKindFromString(k))
            continue;
        std::vector<std::string_view> names;
        for (int i = 0; i < kSpanKindCount; ++i)
            names.push_back(toString(SpanKind(i)));
        const std::string_view guess = closest(k, names);
        std::string list;
        for (auto n : names)
            list += (list.empty() ? "" : ", ") + std::string(n);
        return "unknown span kind " + inQuotes(k)
            + (guess.empty() ? " (known: " + list + ")" : " (did you mean " + inQuotes(guess) + "?)");
    }
    if (std::find(kOps.begin(), kOps.end(), e.op) == kOps.end())
        return "unknown comparison " + inQuotes(e.op) + " (use <, <=, >, >= or ==)";
    if (!std::isfinite(e.value))
        return "value must be a finite number";
    if (e.device < -1)
        return "device must be a device index (0 or more)";
    return {};
}

Result<double> evaluateMetric(const Trace& trace, const Expectation& e)
{
    if (std::string msg = validateExpectation(e); !msg.empty())
        return Error{{}, {}, msg};
    return compute(Context{trace, e});
}

std::vector<CheckResult> evaluateExpectations(const Trace& trace, const std::vector<Expectation>& expect)
{
    std::vector<CheckResult> out;
    out.reserve(expect.size());
    for (const auto& e : expect) {
        CheckResult r;
        r.expectation = e;
        const std::string what = label(e);
        auto value = evaluateMetric(trace, e);
        if (!value) {
            r.error = value.error().message;
            r.description = what + ": " + r.error;
            out.push_back(std::move(r));
            continue;
        }
        r.actual = *value;
        r.passed = compare(r.actual, e.op, e.value);
        // Enough digits that a failing check never reads "0.8, expected >= 0.8".
        int precision = 4;
        std::string actual = formatNumber(r.actual, precision), expected = formatNumber(e.value, precision);
        while (actual == expected && r.actual != e.value && precision < 17) {
            ++precision;
            actual = formatNumber(r.actual, precision);
            expected = formatNumber(e.value, precision);
        }
        r.description = what + " = " + actual + ", expected " + e.op + " " + expected;
        out.push_back(std::move(r));
    }
    return out;
}

bool allPassed(const std::vector<CheckResult>& results)
{
    return std::all_of(results.begin(), results.end(), [](const CheckResult& r) { return r.passed; });
}

} // namespace streamscope
