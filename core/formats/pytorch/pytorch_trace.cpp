#include "pytorch_trace.h"

#include "chrome_trace.h"
#include "import_limits.h"
#include "ranges.h"
#include "trace_formats.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>

namespace streamscope {

namespace {

using Json = nlohmann::ordered_json;

std::string scalarText(const Json& v)
{
    if (v.is_string())
        return v.get<std::string>();
    return v.dump(-1, ' ', false, Json::error_handler_t::replace);
}

// Kineto's deviceProperties (cudaDeviceProp fields) under the names the CUDA backend gives them, where there is one.
std::string propertyName(const std::string& key)
{
    static const std::map<std::string, std::string> names{
        {"numSms", "sm_count"},
        {"totalGlobalMem", "memory_bytes"},
        {"maxThreadsPerMultiprocessor", "max_threads_per_sm"},
        {"sharedMemPerMultiprocessor", "shared_memory_per_sm"},
        {"sharedMemPerBlockOptin", "shared_memory_per_block_optin"},
        {"regsPerMultiprocessor", "registers_per_sm"},
    };
    auto it = names.find(key);
    return it == names.end() ? key : it->second;
}

Status readDeviceProperties(const std::string& text, RunInfo& info, const std::string& file)
{
    if (text.empty())
        return Status::success();
    const Json props = Json::parse(text, nullptr, false);
    if (props.is_discarded() || !props.is_array())
        return Error{file, "/deviceProperties", "must be an array of objects, one per device"};
    for (size_t i = 0; i < props.size(); ++i) {
        const Json& d = props[i];
        if (!d.is_object())
            return Error{file, "/deviceProperties/" + std::to_string(i), "must be an object"};
        DeviceInfo dev;
        dev.index = int(i);
        if (auto it = d.find("id"); it != d.end() && it->is_number_integer())
            dev.index = it->get<int>();
        if (auto it = d.find("name"); it != d.end() && it->is_string())
            dev.name = it->get<std::string>();
        const auto major = d.find("computeMajor");
        const auto minor = d.find("computeMinor");
        if (major != d.end() && minor != d.end())
            dev.properties.emplace_back("compute_capability", scalarText(*major) + "." + scalarText(*minor));
        for (auto it = d.begin(); it != d.end(); ++it) {
            if (it.key() == "id" || it.key() == "name" || it.key() == "computeMajor" || it.key() == "computeMinor")
                continue;
            if (it->is_object() || it->is_array() || it->is_null())
                continue;
            dev.properties.emplace_back(propertyName(it.key()), scalarText(*it));
        }
        info.devices.push_back(std::move(dev));
    }
    return Status::success();
}

// Kineto links a stream wait to its event record through "wait_on_stream" and
// "wait_on_cuda_event_record_corr_id", but leaves both -1 where it could not (torch 2.11 with CUDA 13 does, for
// cudaEventRecordWithFlags). Then the record is taken to be the last cudaEventRecord* call of the waiting call's host
// thread before the wait, and the recorded stream the one into which that thread last launched work before the
// record (other than the waiting stream): what `event.record(s1); s2.wait_event(event)` in one thread does.
class WaitFallback {
public:
    struct Guess {
        int64_t stream;
        int64_t time; // of the record call
    };

    WaitFallback(const Trace& t, const std::vector<std::pair<uint32_t, int64_t>>& correlations,
                 const std::vector<uint32_t>& threadTrack)
        : m_t(t)
    {
        std::unordered_map<int64_t, uint32_t> callOf;
        for (const auto& [span, corr] : correlations) {
            const SpanKind k = t.spans.kind[span];
            if (k != SpanKind::ApiCall && k != SpanKind::Sync)
                continue;
            callOf[corr] = span;
            const std::string_view name = t.spanName(span);
            if (name.rfind("cudaEventRecord", 0) == 0 || name.rfind("cuEventRecord", 0) == 0)
                m_records[t.spans.track[span]].push_back(t.spans.start[span]);
        }
        for (const auto& [span, corr] : correlations) {
            if (!isGpuSpan(t.spans.kind[span]))
                continue;
            const auto call = callOf.find(corr);
            if (call == callOf.end())
                continue;
            const Track& tr = t.tracks[threadTrack[t.spans.track[span]]];
            m_launched[t.spans.track[call->second]].push_back({t.spans.start[call->second], tr.device, tr.id});
        }
        for (auto& [thread, v] : m_records)
            std::sort(v.begin(), v.end());
        for (auto& [thread, v] : m_launched)
            std::sort(v.begin(), v.end(), [](const Launch& a, const Launch& b) { return a.time < b.time; });
    }

    std::optional<Guess> recordBefore(const CudaDependencies::Call& wait, int64_t device, int64_t waitingStream) const
    {
        const uint32_t thread = m_t.spans.track[wait.span];
        const auto records = m_records.find(thread);
        const auto launched = m_launched.find(thread);
        if (records == m_records.end() || launched == m_launched.end())
            return std::nullopt;
        const auto& r = records->second;
        auto it = std::lower_bound(r.begin(), r.end(), wait.start);
        if (it == r.begin())
            return std::nullopt;
        const int64_t recordTime = *(it - 1);
        const auto& l = launched->second;
        for (auto li = std::lower_bound(l.begin(), l.end(), recordTime,
                                        [](const Launch&x, int64_t time) { return x.time < time; });
             li != l.begin();) {
            --li;
            if (li->device == device && li->stream != waitingStream)
                return Guess{li->stream, recordTime};
        }
        return std::nullopt;
    }

private:
    struct Launch {
        int64_t time, device, stream;
    };
    const Trace& m_t;
    std::unordered_map<uint32_t, std::vector<int64_t>> m_records; // raw thread -> record call starts
    std::unordered_map<uint32_t, std::vector<Launch>> m_launched; // raw thread -> its launches
};

// "call" arrows: each runtime call from the range it was made in. Kineto gives a call the "External id" of the
// innermost CPU op (or record_function) around it; a call without one, or whose op is not on its thread, gets the
// innermost range around it on its thread. Parse-time span indices.
std::vector<chrome::IndexFlow> callArrows(const chrome::RawTrace& raw)
{
    const auto& s = raw.trace.spans;
    std::vector<std::vector<uint32_t>> ranges(raw.threads.size()), calls(raw.threads.size());
    for (uint32_t i = 0; i < s.size(); ++i) {
        if (s.track[i] >= raw.threads.size())
            continue;
        if (s.kind[i] == SpanKind::Range)
            ranges[s.track[i]].push_back(i);
        else if (s.kind[i] == SpanKind::ApiCall || s.kind[i] == SpanKind::Sync)
            calls[s.track[i]].push_back(i);
    }
    std::unordered_map<uint32_t, int64_t> externalId;
    std::map<std::pair<uint32_t, int64_t>, uint32_t> rangeById; // (raw thread, External id) -> range
    for (const auto& [span, id] : raw.externalIds) {
        if (s.kind[span] == SpanKind::Range)
            rangeById.emplace(std::make_pair(s.track[span], id), span);
        else
            externalId.emplace(span, id);
    }
    std::vector<chrome::IndexFlow> out;
    std::vector<uint32_t> open;
    for (size_t th = 0; th < raw.threads.size(); ++th) {
        auto& rs = ranges[th];
        auto& cs = calls[th];
        if (rs.empty() || cs.empty())
            continue;
        const auto byStart = [&s](uint32_t a, uint32_t b) {
            return s.start[a] != s.start[b] ? s.start[a] < s.start[b] : s.end[a] > s.end[b];
        };
        std::sort(rs.begin(), rs.end(), byStart);
        std::sort(cs.begin(), cs.end(), byStart);
        open.clear();
        size_t next = 0;
        for (uint32_t c : cs) {
            while (next < rs.size() && s.start[rs[next]] <= s.start[c])
                open.push_back(rs[next++]);
            while (!open.empty() && s.end[open.back()] <= s.start[c])
                open.pop_back();
            uint32_t from = open.empty() ? chrome::kNoSpan : open.back();
            if (const auto id = externalId.find(c); id != externalId.end())
                if (const auto r = rangeById.find({uint32_t(th), id->second}); r != rangeById.end())
                    from = r->second;
            if (from != chrome::kNoSpan)
                out.push_back({from, c, int(FlowKind::Call)});
        }
    }
    return out;
}

Result<Trace> build(chrome::RawTrace&& raw, const std::string& file)
{
    RunInfo info;
    info.source = TraceSource::Imported;
    info.backend = "pytorch";
    if (Status st = readDeviceProperties(raw.deviceProperties, info, file); !st)
        return st.error();
    for (const auto& [k, v] : raw.topLevel)
        info.settings.emplace_back(k, v);
    if (raw.withoutDur > 0)
        info.settings.emplace_back("x_events_without_dur", std::to_string(raw.withoutDur) + " read as instants");

    // Streams are the rows with GPU work (Kineto: pid = device, tid = stream id); the rest are host threads.
    struct Row {
        uint32_t thread;
        bool stream;
        int64_t device, id;
    };
    std::vector<Row> rows;
    std::set<int64_t> devices; // of the streams
    for (uint32_t i = 0; i < raw.threads.size(); ++i) {
        const auto& th = raw.threads[i];
        if (th.spans == 0)
            continue;
        Row r{i, th.gpuSpans > 0, -1, th.tidText.empty() ? th.tid : -1};
        if (r.stream) {
            r.device = th.pidText.empty() ? th.pid : th.device;
            if (th.device >= 0)
                r.device = th.device;
            if (th.streamIsNumber)
                r.id = std::strtoll(th.stream.c_str(), nullptr, 10);
            const std::string where = "pid " + (th.pidText.empty() ? std::to_string(th.pid) : th.pidText) + ", tid "
                + (th.tidText.empty() ? std::to_string(th.tid) : th.tidText);
            if (r.device != -1) { // -1: a stream of a process named by text, on no known device
                if (const std::string problem = deviceIndexProblem(r.device); !problem.empty())
                    return Error{file, where, problem};
                if (devices.insert(r.device).second && devices.size() > kMaxImportedDevices)
                    return Error{file, where, tooManyDevicesMessage()};
            }
        }
        rows.push_back(r);
    }
    std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
        if (a.stream != b.stream)
            return !a.stream;
        if (!a.stream)
            return false; // host threads in the order they appear
        if (a.device != b.device)
            return a.device < b.device;
        return a.id < b.id;
    });
    Trace& t = raw.trace;
    std::vector<uint32_t> threadTrack(raw.threads.size(), chrome::kNoSpan);
    for (const Row& r : rows) {
        const auto& th = raw.threads[r.thread];
        Track tr;
        tr.id = r.id;
        if (r.stream) {
            tr.kind = TrackKind::Stream;
            tr.device = int(r.device);
            tr.name = "stream " + (r.id >= 0 ? std::to_string(r.id) : th.tidText);
        } else {
            tr.kind = TrackKind::HostThread;
            tr.device = -1;
            const std::string tid = th.tidText.empty() ? std::to_string(th.tid) : th.tidText;
            tr.name = !th.name.empty() ? th.name : "thread " + tid;
        }
        threadTrack[r.thread] = t.addTrack(std::move(tr));
    }
    for (const DeviceInfo& di : info.devices)
        devices.erase(di.index);
    for (int64_t d : devices)
        info.devices.push_back({int(d), {}, {}});
    std::sort(info.devices.begin(), info.devices.end(),
              [](const DeviceInfo& a, const DeviceInfo& b) { return a.index < b.index; });
    t.info = std::move(info);

    // Arrows from the correlation ids: launch (call -> its GPU work), and where Kineto recorded CUDA
    // synchronization (enable_cuda_sync_events), event (recorded work -> the work that waited) and sync.
    CudaDependencies deps;
    const auto& s = t.spans;
    for (const auto& [span, corr] : raw.correlations) {
        const SpanKind k = s.kind[span];
        if (k == SpanKind::ApiCall || k == SpanKind::Sync) {
            deps.apiCall(0, corr, span, s.start[span]);
        } else if (isGpuSpan(k)) {
            const Track& tr = t.tracks[threadTrack[s.track[span]]];
            deps.gpuOp(0, corr, span, tr.device, tr.id, s.start[span], s.end[span]);
        }
    }
    const WaitFallback fallback(t, raw.correlations, threadTrack);
    for (const auto& r : raw.syncs) {
        const auto call = deps.findCall(0, r.correlation);
        const auto record = deps.findCall(0, r.recordCorrelation);
        const auto& th = raw.threads[r.thread];
        const int64_t device = r.device >= 0 ? r.device : (th.pidText.empty() ? th.pid : -1);
        const int64_t stream = r.stream >= 0 ? r.stream : (th.tidText.empty() ? th.tid : -1);
        switch (r.type) {
        case chrome::SyncRecord::StreamSync:
            if (call)
                deps.streamSync(0, device, stream, *call);
            break;
        case chrome::SyncRecord::ContextSync:
            if (call)
                deps.contextSync(0, device, *call);
            break;
        case chrome::SyncRecord::StreamWait:
            if (record && r.waitOnStream >= 0)
                deps.streamWait(0, device, stream, call ? call->start : r.ts, r.waitOnStream, record->start);
            else if (call)
                if (const auto guess = fallback.recordBefore(*call, device, stream))
                    deps.streamWait(0, device, stream, call->start, guess->stream, guess->time);
            break;
        case chrome::SyncRecord::EventSync:
            if (call && record && r.waitOnStream >= 0)
                deps.eventSync(0, device, r.waitOnStream, record->start, *call);
            break;
        case chrome::SyncRecord::Other: break;
        }
    }
    std::vector<chrome::IndexFlow> flows = callArrows(raw);
    for (const Flow& f : deps.flows())
        flows.push_back({f.from, f.to, int(f.kind)});
    // Without correlation ids (old traces) the "ac2g" flow events are the launch arrows.
    const bool bindFlowEvents = raw.correlations.empty();
    auto trace = chrome::finish(std::move(raw), threadTrack, std::move(flows), bindFlowEvents, 0, file);
    if (trace)
        placeRangesOnTracks(*trace); // from their host thread or stream onto lanes of their own
    return trace;
}

} // namespace

Result<Trace> parsePyTorchTrace(std::string_view text, const std::string& file, const chrome::ReadOptions& options)
{
    auto raw = chrome::readText(text, file, chrome::Dialect::PyTorch, options);
    if (!raw)
        return raw.error();
    return build(std::move(raw.value()), file);
}

Result<Trace> loadPyTorchTraceFile(const std::string& path, const chrome::ReadOptions& options)
{
    auto raw = chrome::readFile(path, chrome::Dialect::PyTorch, options);
    if (!raw)
        return raw.error();
    return build(std::move(raw.value()), path);
}

} // namespace streamscope
