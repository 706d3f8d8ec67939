// Chrome Trace Event import, the last step: tracks, devices and flows of a Trace from a RawTrace
// (chrome_trace_reader.h), our own exports read back exactly from their "otherData"; the rules that tell span kinds
// and devices from the names profilers write; parseChromeTrace and loadChromeTraceFile.
#include "chrome_trace.h"
#include "chrome_trace_format.h"

#include "import_limits.h"
#include "trace_json.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <limits>
#include <map>
#include <new>
#include <numeric>
#include <optional>
#include <set>
#include <system_error>
#include <unordered_map>

namespace streamscope {

namespace {

using Json = nlohmann::ordered_json;
using chrome::FlowEnd;
using chrome::kNoSpan;

using chrome::exportPid;
using chrome::kExportFormat;
using chrome::kExportVersion;
using chrome::quotedJson;

// Building tracks

std::string lower(std::string_view s)
{
    std::string out(s);
    for (char& c : out)
        c = char(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

bool startsWithNoCase(std::string_view s, std::string_view prefix)
{
    return s.size() >= prefix.size() && lower(s.substr(0, prefix.size())) == prefix;
}

std::string idText(int64_t number, const std::string& text)
{
    return text.empty() ? std::to_string(number) : text;
}

// The processes by (pid, pid text), for looking up each thread's in log time (a linear search per thread was
// quadratic: 300 000 pids took hours).
std::map<std::pair<int64_t, std::string_view>, const chrome::RawProcess*> processIndex(const chrome::RawTrace& raw)
{
    std::map<std::pair<int64_t, std::string_view>, const chrome::RawProcess*> index;
    for (const auto& p : raw.processes)
        index.emplace(std::make_pair(p.pid, std::string_view(p.pidText)), &p);
    return index;
}

struct OwnExport {
    Trace header; // info and tracks
    int64_t origin = 0;
};

// Our own export's "otherData.streamscope", if the file has one.
Result<std::optional<OwnExport>> readOwnExport(const std::string& otherData, const std::string& file)
{
    if (otherData.empty())
        return std::optional<OwnExport>();
    Json other = Json::parse(otherData, nullptr, false);
    if (other.is_discarded() || !other.is_object())
        return std::optional<OwnExport>();
    const auto it = other.find("streamscope");
    if (it == other.end() || !it->is_object())
        return std::optional<OwnExport>();
    const Json& ss = *it;
    const auto format = ss.find("format");
    if (format == ss.end() || !format->is_string() || format->get<std::string>() != kExportFormat)
        return std::optional<OwnExport>();
    const auto version = ss.find("version");
    if (version == ss.end() || !version->is_number_integer() || version->get<int64_t>() != kExportVersion)
        return Error{file, "/otherData/streamscope/version",
                     "unsupported version " + (version == ss.end() ? std::string("(none)") : version->dump())
                         + " of StreamScope's Chrome export (this StreamScope reads version "
                         + std::to_string(kExportVersion) + ")"};
    OwnExport own;
    const auto origin = ss.find("time_origin_ns");
    if (origin != ss.end()) {
        if (!origin->is_number_integer())
            return Error{file, "/otherData/streamscope/time_origin_ns", "must be an integer"};
        own.origin = origin->get<int64_t>();
    }
    const auto trace = ss.find("trace");
    if (trace == ss.end() || !trace->is_object())
        return Error{file, "/otherData/streamscope/trace", "missing: the run info and tracks of the export"};
    auto header = parseTrace(trace->dump(-1, ' ', false, Json::error_handler_t::replace), file);
    if (!header) {
        Error e = header.error();
        e.path = "/otherData/streamscope/trace" + e.path;
        return e;
    }
    own.header = std::move(header.value());
    return std::optional<OwnExport>(std::move(own));
}

// Tracks for raw threads of a file that is not our own export (or events added to one); an error for devices that
// are too many or fit no int.
std::optional<Error> genericTracks(const chrome::RawTrace& raw, Trace& t, std::vector<uint32_t>& threadTrack,
                                   const std::vector<bool>& done, const std::string& file)
{
    const auto processes = processIndex(raw);
    std::set<int64_t> devices;
    struct Candidate {
        uint32_t thread;
        bool stream;
        int64_t device;
        int64_t processSort, threadSort;
    };
    std::vector<Candidate> cands;
    // Devices for stream rows without a "device" arg: the process name, else a small numeric pid, else in order.
    std::map<std::pair<int64_t, std::string>, int64_t> pidDevice;
    int64_t nextDevice = 0;
    for (uint32_t i = 0; i < raw.threads.size(); ++i) {
        const auto& th = raw.threads[i];
        if (done[i] || th.spans == 0)
            continue;
        const bool stream = th.gpuSpans > 0 || startsWithNoCase(th.name, "stream");
        const auto found = processes.find(std::make_pair(th.pid, std::string_view(th.pidText)));
        const chrome::RawProcess* proc = found == processes.end() ? nullptr : found->second;
        int64_t device = -1;
        if (stream) {
            device = th.device;
            if (device < 0 && proc)
                device = chrome::deviceFromProcessName(proc->name);
            if (device < 0 && th.pidText.empty() && th.pid >= 0 && th.pid < 64)
                device = th.pid;
            if (device < 0) {
                const auto key = std::make_pair(th.pid, th.pidText);
                auto it = pidDevice.find(key);
                if (it == pidDevice.end())
                    it = pidDevice.emplace(key, nextDevice++).first;
                device = it->second;
            } else {
                nextDevice = std::max(nextDevice, device + 1);
            }
            const std::string where = "pid " + idText(th.pid, th.pidText) + ", tid " + idText(th.tid, th.tidText);
            if (const std::string problem = deviceIndexProblem(device); !problem.empty())
                return Error{file, where, problem};
            if (devices.insert(device).second && devices.size() > kMaxImportedDevices)
                return Error{file, where, tooManyDevicesMessage()};
        }
        cands.push_back(
            {i, stream, device, proc && proc->hasSortIndex ? proc->sortIndex : 0, th.hasSortIndex ? th.sortIndex : 0});
    }
    // Host threads first, then streams by device; the file's sort indices, then its order, within each.
    std::stable_sort(cands.begin(), cands.end(), [](const Candidate& a, const Candidate& b) {
        if (a.stream != b.stream)
            return !a.stream;
        if (a.stream && a.device != b.device)
            return a.device < b.device;
        if (a.processSort != b.processSort)
            return a.processSort < b.processSort;
        return a.threadSort < b.threadSort;
    });
    for (const auto& c : cands) {
        const auto& th = raw.threads[c.thread];
        Track tr;
        if (c.stream) {
            tr.kind = TrackKind::Stream;
            tr.device = int(c.device);
            if (!th.stream.empty())
                tr.name = th.streamIsNumber ? "stream " + th.stream : th.stream;
            else if (!th.name.empty())
                tr.name = th.name;
            else
                tr.name = "stream " + idText(th.tid, th.tidText);
            if (th.streamIsNumber)
                tr.id = std::strtoll(th.stream.c_str(), nullptr, 10);
            else if (th.tidText.empty())
                tr.id = th.tid;
        } else {
            tr.kind = TrackKind::HostThread;
            tr.device = -1;
            tr.name = !th.name.empty() ? th.name : "thread " + idText(th.tid, th.tidText);
            if (th.tidText.empty())
                tr.id = th.tid;
        }
        threadTrack[c.thread] = t.addTrack(std::move(tr));
    }
    return std::nullopt;
}

void addDevices(Trace& t)
{
    std::set<int> seen;
    for (const auto& tr : t.tracks)
        if (tr.kind == TrackKind::Stream && tr.device >= 0)
            seen.insert(tr.device);
    for (const auto& di : t.info.devices)
        seen.erase(di.index);
    for (int d : seen)
        t.info.devices.push_back({d, {}, {}});
    std::sort(t.info.devices.begin(), t.info.devices.end(),
              [](const DeviceInfo& a, const DeviceInfo& b) { return a.index < b.index; });
}

Result<Trace> buildChrome(chrome::RawTrace&& raw, const std::string& file)
{
    auto own = readOwnExport(raw.otherData, file);
    if (!own)
        return own.error();
    std::vector<uint32_t> threadTrack(raw.threads.size(), kNoSpan);
    std::vector<bool> done(raw.threads.size(), false);
    std::vector<Track> tracks;
    RunInfo info;
    int64_t origin = 0;
    if (own->has_value()) {
        OwnExport& ex = **own;
        info = std::move(ex.header.info);
        tracks = std::move(ex.header.tracks);
        origin = ex.origin;
        for (uint32_t i = 0; i < raw.threads.size(); ++i) {
            const auto& th = raw.threads[i];
            if (!th.pidText.empty() || !th.tidText.empty() || th.tid < 1 || uint64_t(th.tid) > tracks.size())
                continue;
            if (exportPid(tracks[size_t(th.tid - 1)]) != th.pid)
                continue;
            threadTrack[i] = uint32_t(th.tid - 1);
            done[i] = true;
        }
    } else {
        info.source = TraceSource::Imported;
        info.backend = "chrome";
        for (const auto& [k, v] : raw.topLevel)
            info.settings.emplace_back(k, v);
    }
    if (raw.withoutDur > 0)
        info.settings.emplace_back("x_events_without_dur", std::to_string(raw.withoutDur) + " read as instants");
    Trace& t = raw.trace;
    t.info = std::move(info);
    for (auto& tr : tracks)
        t.addTrack(std::move(tr));
    if (own->has_value() && !(**own).header.strings.empty()) {
        // Names in the export's order; names the export does not list (events added to it) after them.
        std::vector<std::string> strings = std::move((**own).header.strings);
        std::unordered_map<std::string_view, uint32_t> index;
        for (uint32_t i = 0; i < strings.size(); ++i)
            index.emplace(strings[i], i);
        std::vector<uint32_t> remap(t.strings.size());
        std::vector<std::string> extra;
        for (uint32_t i = 0; i < t.strings.size(); ++i) {
            auto it = index.find(t.strings[i]);
            if (it != index.end()) {
                remap[i] = it->second;
            } else {
                remap[i] = uint32_t(strings.size() + extra.size());
                extra.push_back(std::move(t.strings[i]));
            }
        }
        index.clear();
        for (auto& e : extra)
            strings.push_back(std::move(e));
        for (auto& name : t.spans.name)
            name = remap[name];
        t.strings = std::move(strings);
    }
    if (auto failed = genericTracks(raw, t, threadTrack, done, file))
        return *failed;
    if (!own->has_value()) {
        // Device names from the process names ("GPU 0: NVIDIA H200" as we write them, or anything else): the
        // first process that names each device.
        addDevices(t);
        std::map<int, std::string> names;
        for (const auto& p : raw.processes) {
            const auto colon = p.name.find(": ");
            if (colon != std::string::npos)
                names.emplace(chrome::deviceFromProcessName(p.name), p.name.substr(colon + 2));
        }
        for (auto& d : t.info.devices)
            if (const auto it = names.find(d.index); it != names.end() && d.name.empty())
                d.name = it->second;
    }
    return chrome::finish(std::move(raw), threadTrack, {}, true, origin, file);
}

// Stable sort of the spans by (track, start, end), as Trace::finalize orders them; flows are remapped.
void sortSpans(Trace& t)
{
    auto& s = t.spans;
    const size_t n = s.size();
    bool sorted = true;
    for (size_t i = 1; i < n && sorted; ++i) {
        if (s.track[i - 1] != s.track[i])
            sorted = s.track[i - 1] < s.track[i];
        else
            sorted = s.start[i - 1] < s.start[i] || (s.start[i - 1] == s.start[i] && s.end[i - 1] <= s.end[i]);
    }
    if (sorted)
        return;
    std::vector<uint32_t> order(n);
    std::iota(order.begin(), order.end(), 0u);
    std::stable_sort(order.begin(), order.end(), [&s](uint32_t a, uint32_t b) {
        if (s.track[a] != s.track[b])
            return s.track[a] < s.track[b];
        if (s.start[a] != s.start[b])
            return s.start[a] < s.start[b];
        return s.end[a] < s.end[b];
    });
    const auto permute = [&order](auto& v) {
        std::remove_reference_t<decltype(v)> out;
        out.reserve(v.size());
        for (uint32_t i : order)
            out.push_back(v[i]);
        v = std::move(out);
    };
    permute(s.track);
    permute(s.kind);
    permute(s.name);
    permute(s.start);
    permute(s.end);
    s.compact(); // optional columns empty or full
    for (auto* col : {&s.thread, &s.op, &s.iteration, &s.task})
        if (!col->empty())
            permute(*col);
    if (!s.detail.empty())
        permute(s.detail);
    std::vector<uint32_t> newIndex(n);
    for (uint32_t i = 0; i < n; ++i)
        newIndex[order[i]] = i;
    order = {};
    for (auto& f : t.flows) {
        f.from = newIndex[f.from];
        f.to = newIndex[f.to];
    }
}

std::optional<FlowKind> flowKindByEnds(const Trace& t, uint32_t from, uint32_t to)
{
    const bool fromStream = t.tracks[t.spans.track[from]].kind == TrackKind::Stream;
    const bool toStream = t.tracks[t.spans.track[to]].kind == TrackKind::Stream;
    if (!fromStream && toStream)
        return FlowKind::Launch;
    if (fromStream && toStream)
        return FlowKind::Event;
    if (fromStream && !toStream)
        return FlowKind::Sync;
    return std::nullopt; // host to host: no CUDA dependency of ours
}

} // namespace

// ---------------------------------------------------------------------------------------------------------------

namespace chrome {

std::optional<SpanKind> kindFromCategory(std::string_view cat, std::string_view name)
{
    if (cat == "kernel" || cat == "Kernel")
        return SpanKind::Kernel;
    if (cat == "gpu_memcpy" || cat == "Memcpy" || cat == "memcpy")
        return memcpyKindFromName(name);
    if (cat == "gpu_memset" || cat == "Memset" || cat == "memset")
        return SpanKind::Memset;
    // "Runtime": Kineto's category for CUDA runtime calls before 2022 (with "Kernel", "Memcpy", "Memset").
    if (cat == "cuda_runtime" || cat == "cuda_driver" || cat == "Runtime")
        return name.find("Synchronize") != std::string_view::npos ? SpanKind::Sync : SpanKind::ApiCall;
    if (const auto k = spanKindFromString(cat))
        return *k;
    return std::nullopt;
}

bool isPyTorchRangeCategory(std::string_view cat)
{
    // "Operator": Kineto's CPU ops before 2022; some versions wrote "gpu_user_Annotation".
    return cat == "cpu_op" || cat == "Operator" || cat == "user_annotation" || cat == "python_function"
        || lower(cat) == "gpu_user_annotation";
}

SpanKind memcpyKindFromName(std::string_view name)
{
    const auto has = [name](std::string_view s) { return name.find(s) != std::string_view::npos; };
    if (has("PtoP") || has("Peer-to-Peer") || has("PEER"))
        return SpanKind::MemcpyP2P;
    if (has("HtoD") || has("HtoA") || has("HtoH") || has("Host-to-Device") || has("Host-to-Array")
        || has("Host-to-Host"))
        return SpanKind::MemcpyH2D;
    if (has("DtoH") || has("AtoH") || has("Device-to-Host") || has("Array-to-Host"))
        return SpanKind::MemcpyD2H;
    return SpanKind::MemcpyD2D;
}

int deviceFromProcessName(std::string_view name)
{
    const std::string l = lower(name);
    for (const std::string_view prefix : {"gpu ", "gpu", "device ", "device", "cuda:", "cuda "}) {
        const size_t at = l.find(prefix);
        if (at == std::string::npos)
            continue;
        size_t i = at + prefix.size();
        if (i >= l.size() || !std::isdigit(static_cast<unsigned char>(l[i])))
            continue;
        int v = 0;
        const auto r = std::from_chars(l.data() + i, l.data() + l.size(), v);
        if (r.ec == std::errc() && v >= 0 && v < 1 << 20)
            return v;
    }
    return -1;
}

Result<Trace> finish(RawTrace&& raw, const std::vector<uint32_t>& threadTrack, std::vector<IndexFlow> extra,
                     bool bindUnbound, int64_t origin, const std::string& file)
{
    try {
        Trace t = std::move(raw.trace);
        auto& s = t.spans;
        const size_t n = s.size();
        for (size_t i = 0; i < n; ++i) {
            const uint32_t tr = s.track[i] < threadTrack.size() ? threadTrack[s.track[i]] : kNoSpan;
            if (tr >= t.tracks.size())
                return Error{file, {}, "internal error: a span without a track"};
            s.track[i] = tr;
            if (s.kind[i] == kUnknownKind)
                s.kind[i] = t.tracks[tr].kind == TrackKind::Stream ? SpanKind::Kernel : SpanKind::HostWork;
            if ((origin > 0 && s.end[i] > std::numeric_limits<int64_t>::max() - origin)
                || (origin < 0 && s.start[i] < std::numeric_limits<int64_t>::min() - origin))
                return Error{file, "/otherData/streamscope/time_origin_ns", "time origin out of range"};
        }
        // Every time moves by the origin: the columns' bases move, not each entry (TimeColumn::shift).
        s.start.shift(origin);
        s.end.shift(origin);
        // The reader's arrows are the trace's flows already; the caller's extra ones join them (finalize() sorts
        // them all), and each kind still open is decided by the ends, in place: no second list of every arrow.
        auto& flows = t.flows;
        flows.reserve(flows.size() + extra.size());
        for (const auto& f : extra)
            flows.push_back({f.from, f.to, flowKindOrByEnds(f.kind)});
        size_t kept = 0;
        for (Flow f : flows) {
            if (f.from >= n || f.to >= n)
                continue;
            if (f.kind == kFlowKindByEnds) {
                const auto kind = flowKindByEnds(t, f.from, f.to);
                if (!kind)
                    continue;
                f.kind = *kind;
            }
            flows[kept++] = f;
        }
        flows.resize(kept);
        extra = {};
        sortSpans(t);

        if (bindUnbound && !raw.unboundFlows.empty()) {
            std::vector<uint32_t> offsets(t.tracks.size() + 1, 0);
            for (size_t i = 0; i < n; ++i)
                ++offsets[s.track[i] + 1];
            for (size_t k = 0; k < t.tracks.size(); ++k)
                offsets[k + 1] += offsets[k];
            const auto bind = [&](const FlowEnd& e) -> uint32_t {
                if (e.thread >= threadTrack.size() || threadTrack[e.thread] == kNoSpan)
                    return kNoSpan;
                const uint32_t tr = threadTrack[e.thread];
                const int64_t ts = e.ts + origin;
                const auto b = s.start.begin() + offsets[tr];
                const auto en = s.start.begin() + offsets[tr + 1];
                if (!e.enclosing) {
                    const auto it = std::lower_bound(b, en, ts);
                    return it == en ? kNoSpan : uint32_t(it - s.start.begin());
                }
                // The latest-starting span that contains ts (the deepest, where they nest); not a range around it
                // (PyTorch's CPU ops), which is no end of a CUDA dependency.
                auto it = std::upper_bound(b, en, ts);
                for (int steps = 0; it != b && steps < 64; ++steps) {
                    --it;
                    const auto i = uint32_t(it - s.start.begin());
                    if (s.end[i] >= ts && s.kind[i] != SpanKind::Range)
                        return i;
                }
                return kNoSpan;
            };
            for (const auto& f : raw.unboundFlows) {
                const uint32_t from = bind(f.from);
                const uint32_t to = bind(f.to);
                if (from == kNoSpan || to == kNoSpan || from == to)
                    continue;
                std::optional<FlowKind> kind;
                if (f.kind >= 0 && f.kind < kFlowKindCount)
                    kind = FlowKind(f.kind);
                else
                    kind = flowKindByEnds(t, from, to);
                if (f.launchOnly && kind != FlowKind::Launch)
                    continue;
                if (kind)
                    t.flows.push_back({from, to, *kind});
            }
        }
        raw.unboundFlows = {};
        t.finalize();
        return t;
    } catch (const std::bad_alloc&) {
        return Error{file, {}, "out of memory while reading the trace"};
    }
}

} // namespace chrome

Result<Trace> parseChromeTrace(std::string_view text, const std::string& file, const chrome::ReadOptions& options)
{
    auto raw = chrome::readText(text, file, chrome::Dialect::Generic, options);
    if (!raw)
        return raw.error();
    return buildChrome(std::move(raw.value()), file);
}

Result<Trace> loadChromeTraceFile(const std::string& path, const chrome::ReadOptions& options)
{
    auto raw = chrome::readFile(path, chrome::Dialect::Generic, options);
    if (!raw)
        return raw.error();
    return buildChrome(std::move(raw.value()), path);
}

} // namespace streamscope