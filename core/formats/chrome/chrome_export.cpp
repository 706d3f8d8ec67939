// The Chrome Trace Event export (chrome_trace.h): a process per device and one for the host, a thread per stream
// and per host thread, spans as complete events, dependency arrows as flow events, and StreamScope's own run
// information in "otherData" so that the import reads our exports back exactly.
#include "chrome_trace.h"
#include "chrome_trace_format.h"

#include "file_io.h"
#include "trace_json.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <string>
#include <vector>

namespace streamscope {

namespace chrome {

int64_t exportPid(const Track& t)
{
    // Ranges go with what they annotate: a host thread's (device -1) with the host, a stream's with its device.
    if (t.kind == TrackKind::HostThread || (t.kind == TrackKind::Ranges && t.device < 0))
        return kHostPid;
    return t.device >= 0 ? t.device : kNoDevicePid;
}

} // namespace chrome

namespace {

using chrome::exportPid;
using chrome::kCategory;
using chrome::kExportFormat;
using chrome::kExportVersion;
using chrome::kHostPid;
using chrome::kNoDevicePid;

// Nanoseconds as microseconds with three decimals: exact, and what the format's "ts" and "dur" are in. Differences
// of int64 times, taken unsigned (no overflow), are never negative here.
void appendMicros(std::string& out, uint64_t v)
{
    char buf[24];
    const auto r = std::to_chars(buf, buf + sizeof buf, v / 1000);
    out.append(buf, r.ptr);
    const auto frac = unsigned(v % 1000);
    out += '.';
    out += char('0' + frac / 100);
    out += char('0' + frac / 10 % 10);
    out += char('0' + frac % 10);
}

// A span's "dur" that viewers turn into its end exactly. Chrome DevTools and Perfetto add "ts" and "dur" as doubles;
// speedscope first subtracts the earliest "ts" of the thread (`rowStart` here) from every "ts" and then adds "dur".
// Where the three decimals add up to a hair past the end in either, a span that starts there (the next call, the next
// kernel in the stream) seems to start inside this one: Chrome DevTools leaves it out, speedscope ends the wrong
// frame. Then the double near them that adds up exactly in both (or, failing that, in the first) is written, in full
// ("2246.9619999999995"), which still reads back as the same nanoseconds (three decimals, a fourth rounds; Perfetto
// rounds to ns). Only within 2^42 ns (73 minutes) of the origin, where doubles of microseconds resolve a millionth of
// one.
void appendDuration(std::string& out, uint64_t start, uint64_t end, uint64_t rowStart)
{
    if (end < (uint64_t(1) << 42) && rowStart <= start) {
        const double ts = double(start) / 1000, until = double(end) / 1000, base = double(rowStart) / 1000;
        const auto chromeExact = [&](double dur) { return ts + dur == until; };
        const auto speedscopeExact = [&](double dur) { return (ts - base) + dur == until - base; };
        const double decimals = double(end - start) / 1000;
        if (!chromeExact(decimals) || !speedscopeExact(decimals)) {
            // The difference and the doubles next to it, nearest first.
            std::vector<double> candidates{until - ts};
            double down = until - ts, up = until - ts;
            for (int k = 0; k < 64; ++k) {
                down = std::nextafter(down, 0.0);
                up = std::nextafter(up, until);
                candidates.push_back(down);
                candidates.push_back(up);
            }
            const auto firstOf = [&](const auto& exact) {
                const auto it = std::find_if(candidates.begin(), candidates.end(), exact);
                return it == candidates.end() ? nullptr : &*it;
            };
            const double* pick = firstOf([&](double dur) { return chromeExact(dur) && speedscopeExact(dur); });
            if (!pick && !chromeExact(decimals))
                pick = firstOf(chromeExact);
            if (pick) {
                char buf[40];
                const auto r = std::to_chars(buf, buf + sizeof buf, *pick, std::chars_format::fixed);
                out.append(buf, r.ptr);
                return;
            }
        }
    }
    appendMicros(out, end - start);
}

// Length of the valid UTF-8 sequence at s[i], or 0.
size_t utf8Length(std::string_view s, size_t i)
{
    const auto c = static_cast<unsigned char>(s[i]);
    size_t n = 0;
    uint32_t cp = 0;
    if (c < 0x80)
        return 1;
    if ((c & 0xe0) == 0xc0) {
        n = 2;
        cp = c & 0x1f;
    } else if ((c & 0xf0) == 0xe0) {
        n = 3;
        cp = c & 0x0f;
    } else if ((c & 0xf8) == 0xf0) {
        n = 4;
        cp = c & 0x07;
    } else {
        return 0;
    }
    if (i + n > s.size())
        return 0;
    for (size_t k = 1; k < n; ++k) {
        const auto cc = static_cast<unsigned char>(s[i + k]);
        if ((cc & 0xc0) != 0x80)
            return 0;
        cp = (cp << 6) | (cc & 0x3f);
    }
    // Overlong forms, surrogates and values beyond U+10FFFF are not valid UTF-8.
    if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10ffff
        || (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return n;
}

// A JSON string literal. Invalid UTF-8 becomes U+FFFD, as in the native format; no \u escapes other than for
// control characters (old Perfetto versions refuse \u).
void appendJsonString(std::string& out, std::string_view s)
{
    out += '"';
    for (size_t i = 0; i < s.size();) {
        const char c = s[i];
        const auto uc = static_cast<unsigned char>(c);
        if (c == '"' || c == '\\') {
            out += '\\';
            out += c;
            ++i;
        } else if (uc < 0x20) {
            static constexpr char kHex[] = "0123456789abcdef";
            switch (c) {
            case '\n': out += "\\n"; break;
            case '\r': out += "\\r"; break;
            case '\t': out += "\\t"; break;
            case '\b': out += "\\b"; break;
            case '\f': out += "\\f"; break;
            default:
                out += "\\u00";
                out += kHex[uc >> 4];
                out += kHex[uc & 15];
            }
            ++i;
        } else if (uc < 0x80) {
            out += c;
            ++i;
        } else if (const size_t n = utf8Length(s, i)) {
            out.append(s.data() + i, n);
            i += n;
        } else {
            out += "\xef\xbf\xbd";
            ++i;
        }
    }
    out += '"';
}

bool isZero(const Dim3& d)
{
    return d.x == 0 && d.y == 0 && d.z == 0;
}

std::string deviceProcessName(const Trace& t, int device)
{
    std::string name = "GPU " + std::to_string(device);
    for (const auto& d : t.info.devices)
        if (d.index == device && !d.name.empty())
            return name + ": " + d.name;
    return name;
}

void appendMetadata(std::string& out, bool& first, std::string_view what, int64_t pid, int64_t tid,
                    std::string_view key, const std::string& valueJson)
{
    out += first ? "\n" : ",\n";
    first = false;
    out += "{\"ph\":\"M\",\"name\":\"";
    out += what;
    out += "\",\"pid\":";
    appendInt(out, pid);
    out += ",\"tid\":";
    appendInt(out, tid);
    out += ",\"args\":{\"";
    out += key;
    out += "\":";
    out += valueJson;
    out += "}}";
}

// The "process_name" / "thread_name" metadata and sort indices: the host first, then the devices; tracks in trace
// order.
void appendProcessesAndThreads(std::string& out, bool& first, const Trace& t,
                               const std::vector<std::string>& trackNames)
{
    bool host = false;
    std::vector<int64_t> devicePids;
    for (const auto& tr : t.tracks) {
        if (exportPid(tr) == kHostPid)
            host = true;
        else if (std::find(devicePids.begin(), devicePids.end(), exportPid(tr)) == devicePids.end())
            devicePids.push_back(exportPid(tr));
    }
    std::sort(devicePids.begin(), devicePids.end());
    if (host) {
        appendMetadata(out, first, "process_name", kHostPid, 0, "name", "\"Host\"");
        appendMetadata(out, first, "process_sort_index", kHostPid, 0, "sort_index", "0");
    }
    for (const int64_t pid : devicePids) {
        const std::string name = pid == kNoDevicePid ? "GPU (unknown device)" : deviceProcessName(t, int(pid));
        appendMetadata(out, first, "process_name", pid, 0, "name", chrome::quotedJson(name));
        appendMetadata(out, first, "process_sort_index", pid, 0, "sort_index",
                       std::to_string(pid == kNoDevicePid ? pid : pid + 1));
    }
    for (size_t i = 0; i < t.tracks.size(); ++i) {
        const int64_t pid = exportPid(t.tracks[i]);
        appendMetadata(out, first, "thread_name", pid, int64_t(i) + 1, "name", trackNames[i]);
        appendMetadata(out, first, "thread_sort_index", pid, int64_t(i) + 1, "sort_index", std::to_string(i));
    }
}

// Span i as a complete event ("ph": "X"), its details in "args".
void appendSpan(std::string& out, bool& first, const Trace& t, size_t i, int64_t origin,
                const std::vector<std::string>& names, const std::vector<std::string>& trackNames)
{
    const auto& s = t.spans;
    const size_t n = t.spanCount();
    const uint32_t tr = s.track[i];
    const Track& track = t.tracks[tr];
    out += first ? "\n" : ",\n";
    first = false;
    out += "{\"ph\":\"X\",\"ts\":";
    appendMicros(out, uint64_t(s.start[i]) - uint64_t(origin));
    out += ",\"dur\":";
    // speedscope's thread: this track; the first span of a finalized track starts earliest.
    appendDuration(out, uint64_t(s.start[i]) - uint64_t(origin), uint64_t(s.end[i]) - uint64_t(origin),
                   uint64_t(s.start[t.trackBegin(tr)]) - uint64_t(origin));
    out += ",\"pid\":";
    appendInt(out, exportPid(track));
    out += ",\"tid\":";
    appendInt(out, int64_t(tr) + 1);
    out += ",\"name\":";
    out += names[s.name[i]];
    out += ",\"cat\":\"";
    out += kCategory;
    out += "\",\"args\":{\"kind\":\"";
    out += toString(s.kind[i]);
    out += '"';
    if (track.kind == TrackKind::Stream) {
        out += ",\"device\":";
        appendInt(out, track.device);
        out += ",\"stream\":";
        out += trackNames[tr];
    }
    if (s.bytesOf(i) != 0 || isCopySpan(s.kind[i]) || s.kind[i] == SpanKind::Memset) {
        out += ",\"bytes\":";
        appendInt(out, s.bytesOf(i));
    }
    if (!isZero(s.gridOf(i))) {
        out += ",\"grid\":";
        appendDim3(out, s.gridOf(i));
    }
    if (!isZero(s.blockOf(i))) {
        out += ",\"block\":";
        appendDim3(out, s.blockOf(i));
    }
    if (s.threadOf(i) != -1) {
        out += ",\"thread\":";
        appendInt(out, s.threadOf(i));
    }
    if (s.opOf(i) != -1) {
        out += ",\"op\":";
        appendInt(out, s.opOf(i));
    }
    if (s.iterationOf(i) != -1) {
        out += ",\"iteration\":";
        appendInt(out, s.iterationOf(i));
    }
    if (s.taskOf(i) != 0) {
        out += ",\"task\":";
        appendInt(out, s.taskOf(i));
    }
    if (const WaitCause w = s.waitOf(i); w != WaitCause::None && s.waitForOf(i) < n) {
        out += ",\"wait\":\"";
        out += toString(w);
        out += "\",\"wait_for\":";
        appendInt(out, s.waitForOf(i));
    }
    out += ",\"span\":";
    appendInt(out, int64_t(i));
    out += "}}";
}

// Flows last, each start right before its end. Viewers bind a flow event to a slice by the slice's start
// time: Perfetto to the slice open on the thread at "ts" (it sorts complete events before flow events of equal
// time), Chrome DevTools' trace engine to the first event of the same pid, tid, "ts" and "cat" -- so slices
// and flows share one category. Perfetto reads events in time order and drops an "f" that comes before its
// "s", so "s" is the end that starts first: for a sync arrow whose call began before the GPU work it waited
// for, the arrow's target. Both viewers draw an arrow from the earlier slice anyway; "end" tells our reader
// which end each is, "span" the slice exactly (the index of the "X" event, also in its args), where times
// alone could not (equal starts).
void appendFlows(std::string& out, bool& first, const Trace& t, int64_t origin)
{
    const auto& s = t.spans;
    for (size_t k = 0; k < t.flows.size(); ++k) {
        const Flow& f = t.flows[k];
        const bool backwards = s.start[f.to] < s.start[f.from];
        for (int end = 0; end < 2; ++end) {
            const bool from = (end == 0) != backwards;
            const uint32_t span = from ? f.from : f.to;
            const uint32_t tr = s.track[span];
            out += first ? "\n" : ",\n";
            first = false;
            out += end == 0 ? "{\"ph\":\"s\",\"ts\":" : "{\"ph\":\"f\",\"ts\":";
            appendMicros(out, uint64_t(s.start[span]) - uint64_t(origin));
            if (end == 1)
                out += ",\"bp\":\"e\"";
            out += ",\"id\":";
            appendInt(out, int64_t(k) + 1);
            out += ",\"pid\":";
            appendInt(out, exportPid(t.tracks[tr]));
            out += ",\"tid\":";
            appendInt(out, int64_t(tr) + 1);
            out += ",\"cat\":\"";
            out += kCategory;
            out += "\",\"name\":\"";
            out += toString(f.kind);
            out += "\",\"args\":{\"span\":";
            appendInt(out, span);
            out += from ? ",\"end\":\"from\"}}" : ",\"end\":\"to\"}}";
        }
    }
}

// Run info and tracks: the native format's header (a trace without spans), read back with its own reader.
// The string table too, so that names keep their indices and the native text comes back byte for byte.
void appendOtherData(std::string& out, const Trace& t, int64_t origin)
{
    Trace header;
    header.info = t.info;
    header.tracks = t.tracks;
    header.strings = t.strings;
    out += "\n],\n\"otherData\":{\"producer\":";
    appendJsonString(out, "StreamScope " STREAMSCOPE_VERSION);
    out += ",\"streamscope\":{\"format\":\"";
    out += kExportFormat;
    out += "\",\"version\":";
    appendInt(out, kExportVersion);
    out += ",\"time_origin_ns\":";
    appendInt(out, origin);
    out += ",\"trace\":";
    std::string native = traceToJson(header);
    while (!native.empty() && (native.back() == '\n' || native.back() == ' '))
        native.pop_back();
    out += native;
    out += "}}}\n";
}

std::string writeChrome(const Trace& t)
{
    const size_t n = t.spanCount();
    const int64_t origin = n ? t.timeRange().first : 0;
    std::vector<std::string> names(t.strings.size());
    for (size_t i = 0; i < t.strings.size(); ++i)
        names[i] = chrome::quotedJson(t.strings[i]);
    std::vector<std::string> trackNames(t.tracks.size());
    for (size_t i = 0; i < t.tracks.size(); ++i)
        trackNames[i] = chrome::quotedJson(t.tracks[i].name);

    std::string out;
    out.reserve(8192 + n * 210 + t.flows.size() * 200);
    out += "{\"traceEvents\":[";
    bool first = true;

    appendProcessesAndThreads(out, first, t, trackNames);
    for (size_t i = 0; i < n; ++i)
        appendSpan(out, first, t, i, origin, names, trackNames);
    appendFlows(out, first, t, origin);
    appendOtherData(out, t, origin);
    return out;
}

} // namespace

namespace chrome {

std::string quotedJson(std::string_view s)
{
    std::string out;
    appendJsonString(out, s);
    return out;
}

} // namespace chrome

std::string traceToChromeJson(const Trace& trace)
{
    if (trace.finalized())
        return writeChrome(trace);
    Trace copy = trace;
    copy.finalize();
    return writeChrome(copy);
}

} // namespace streamscope
