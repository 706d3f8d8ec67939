// Scenario JSON reading: the document's header, values, devices, streams, threads and their ops
// (scenario_json_internal.h).
#include "scenario_json_internal.h"

#include "diagnostics.h"
#include "expect.h"
#include "json_strict.h"

#include <cmath>

namespace streamscope::scenario_json {

[[noreturn]] void ScenarioReader::fail(std::string path, std::string message) const
{
    throw ReadFailure{Error{m_file, std::move(path), std::move(message)}};
}

// "format" and "version" first: a trace or a newer scenario gets that answer, not a list of unknown fields.
void ScenarioReader::readHeader(const Json& root)
{
    expectObject(root, "");
    const Json* format = find(root, "format");
    if (!format)
        fail("",
             "missing field \"format\": not a StreamScope scenario (expected \"format\": " + jsonQuoted(kFormat) + ")");
    const std::string f = readString(*format, "/format");
    if (f != kFormat)
        fail("/format", "not a StreamScope scenario: format is " + jsonQuoted(f) + ", expected " + jsonQuoted(kFormat));
    const Json* version = find(root, "version");
    if (!version)
        fail("", "missing field \"version\" (" + versionNote() + ")");
    const int64_t v = readInt(*version, "/version");
    if (v != kScenarioVersion)
        fail("/version", "unsupported version " + std::to_string(v) + " (" + versionNote() + ")");
    m_scenario.version = int(v);
}

ScenarioReadResult ScenarioReader::read(const Json& root)
{
    readHeader(root);
    checkFields(root, "", kTopFields);
    m_scenario.id = optionalString(root, "id", "");
    m_scenario.title = optionalString(root, "title", "");
    m_scenario.description = optionalString(root, "description", "");
    m_scenario.effect = readEffect(root, "");
    readDevices(root);
    readStreams(root);
    readThreads(root);
    readRun(root);
    readRanks(root);
    checkIssuedCount();
    if (const Json* e = find(root, "expect"))
        m_scenario.expect = readExpectations(*e, "/expect", expectStreamNames(streamNames()));
    readVariants(root);
    warnUnrecordedEvents();
    // Document order: event warnings are found only after all ops are read.
    std::stable_sort(m_warnings.begin(), m_warnings.end(),
                     [](const PendingWarning& a, const PendingWarning& b) { return a.op < b.op; });
    std::vector<Warning> warnings;
    warnings.reserve(m_warnings.size());
    for (auto& w : m_warnings)
        warnings.push_back(std::move(w.warning));
    if (!m_devicesDeclared) {
        for (int index : m_usedDevices)
            m_scenario.devices.push_back(DeviceSpec{index, {}});
    }
    return ScenarioReadResult{std::move(m_scenario), std::move(warnings)};
}

const Json* ScenarioReader::find(const Json& obj, const char* key)
{
    const auto it = obj.find(key);
    return it == obj.end() ? nullptr : &*it;
}

void ScenarioReader::expectObject(const Json& v, const std::string& path) const
{
    if (!v.is_object())
        fail(path, "expected an object, got " + typeName(v));
}

void ScenarioReader::expectArray(const Json& v, const std::string& path) const
{
    if (!v.is_array())
        fail(path, "expected an array, got " + typeName(v));
}

std::string ScenarioReader::readString(const Json& v, const std::string& path) const
{
    if (!v.is_string())
        fail(path, "expected a string, got " + typeName(v));
    return v.get<std::string>();
}

std::string ScenarioReader::readName(const Json& v, const std::string& path, std::string_view what) const
{
    std::string s = readString(v, path);
    if (s.empty())
        fail(path, std::string(what) + " must not be empty");
    return s;
}

std::string ScenarioReader::optionalString(const Json& obj, const char* key, const std::string& path) const
{
    const Json* v = find(obj, key);
    return v ? readString(*v, child(path, key)) : std::string();
}

int64_t ScenarioReader::readInt(const Json& v, const std::string& path) const
{
    if (v.is_number_unsigned()) {
        if (v.get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max()))
            fail(path, "integer " + dumpJson(v) + " is too large");
        return int64_t(v.get<uint64_t>());
    }
    if (v.is_number_integer())
        return v.get<int64_t>();
    if (v.is_number_float()) {
        // Writers such as Python's json may spell 1e6 as a float; accept whole numbers.
        const double d = v.get<double>();
        if (std::trunc(d) == d && std::abs(d) < 9.0e18)
            return int64_t(d);
    }
    fail(path, "expected an integer, got " + typeName(v));
}

// An integer in [lo, hi]; the message names the field and the allowed range.
int64_t ScenarioReader::readIntIn(const Json& v, const std::string& path, std::string_view field, int64_t lo,
                                  int64_t hi) const
{
    const int64_t x = readInt(v, path);
    const bool unbounded = hi >= std::numeric_limits<int>::max();
    if (x < lo && unbounded)
        fail(path, std::string(field) + " must be at least " + std::to_string(lo) + ", got " + std::to_string(x));
    if (x > hi && unbounded)
        fail(path, std::string(field) + " must be at most " + std::to_string(hi) + ", got " + std::to_string(x));
    if (x < lo || x > hi)
        fail(path,
             std::string(field) + " must be between " + std::to_string(lo) + " and " + std::to_string(hi) + ", got "
                 + std::to_string(x));
    return x;
}

double ScenarioReader::readNumber(const Json& v, const std::string& path) const
{
    if (!v.is_number())
        fail(path, "expected a number, got " + typeName(v));
    return v.get<double>();
}

bool ScenarioReader::readBool(const Json& v, const std::string& path) const
{
    if (!v.is_boolean())
        fail(path, "expected true or false, got " + typeName(v));
    return v.get<bool>();
}

double ScenarioReader::readDuration(const Json& v, const std::string& path, bool positive) const
{
    const double d = readNumber(v, path);
    if (positive && !(d > 0))
        fail(path, "duration_us must be greater than 0, got " + formatNumber(d));
    if (d < 0)
        fail(path, "duration_us must not be negative, got " + formatNumber(d));
    if (d > kMaxDurationUs)
        fail(path,
             "duration_us must be at most " + formatNumber(kMaxDurationUs) + " (one hour), got " + formatNumber(d));
    return d;
}

int64_t ScenarioReader::readBytes(const Json& v, const std::string& path) const
{
    const int64_t b = readInt(v, path);
    if (b < 0)
        fail(path, "bytes must not be negative, got " + std::to_string(b));
    if (b == 0)
        fail(path, "bytes must be at least 1");
    return b;
}

// Fields not in `allowed` are errors; a near miss gets a suggestion. `others` are fields that exist
// elsewhere (another op kind), which gets a clearer message than "unknown".
void ScenarioReader::checkFields(const Json& obj, const std::string& path, const FieldList& allowed,
                                 const FieldList& others, std::string_view owner) const
{
    for (const auto& item : obj.items()) {
        const std::string& key = item.key();
        if (std::find(allowed.begin(), allowed.end(), key) != allowed.end())
            continue;
        const std::string p = child(path, key);
        if (!owner.empty() && std::find(others.begin(), others.end(), key) != others.end())
            fail(p, "field " + jsonQuoted(key) + " does not apply to " + std::string(owner));
        fail(p, "unknown field " + jsonQuoted(key) + hint(key, allowed));
    }
}

void ScenarioReader::missing(const std::string& path, std::string_view field, std::string_view why) const
{
    fail(path, "missing field " + jsonQuoted(field) + (why.empty() ? std::string() : " (" + std::string(why) + ")"));
}

const Json& ScenarioReader::required(const Json& obj, const char* key, const std::string& path,
                                     std::string_view why) const
{
    const Json* v = find(obj, key);
    if (!v)
        missing(path, key, why);
    return *v;
}

void ScenarioReader::readDevices(const Json& root)
{
    const Json* devices = find(root, "devices");
    if (!devices)
        return;
    m_devicesDeclared = true;
    expectArray(*devices, "/devices");
    std::unordered_map<int, size_t> seen;
    for (size_t i = 0; i < devices->size(); ++i) {
        const std::string path = child("/devices", i);
        if (i >= size_t(m_limits.maxDevices))
            fail(path, "too many devices: the limit is " + std::to_string(m_limits.maxDevices));
        const Json& d = (*devices)[i];
        expectObject(d, path);
        checkFields(d, path, kDeviceFields);
        DeviceSpec spec;
        spec.index = readDeviceIndex(required(d, "index", path), child(path, "index"), "index");
        spec.profile = optionalString(d, "profile", path);
        if (auto [it, inserted] = seen.emplace(spec.index, i); !inserted)
            fail(child(path, "index"),
                 "duplicate device index " + std::to_string(spec.index) + " (also at " + child("/devices", it->second)
                     + ")");
        m_scenario.devices.push_back(std::move(spec));
    }
}

int ScenarioReader::readDeviceIndex(const Json& v, const std::string& path, std::string_view field) const
{
    const int64_t index = readInt(v, path);
    if (index < 0)
        fail(path, std::string(field) + " must not be negative, got " + std::to_string(index));
    if (index >= m_limits.maxDevices)
        fail(path,
             "device " + std::to_string(index) + " is out of range: device indices go from 0 to "
                 + std::to_string(m_limits.maxDevices - 1));
    return int(index);
}

// A device named by a stream, thread or peer copy: declared when "devices" is given, else collected.
int ScenarioReader::readDeviceRef(const Json& v, const std::string& path, std::string_view field)
{
    const int index = readDeviceIndex(v, path, field);
    if (m_devicesDeclared) {
        if (!m_scenario.device(index))
            fail(path, "device " + std::to_string(index) + " is not declared in \"devices\"");
    } else {
        m_usedDevices.insert(index);
    }
    return index;
}

void ScenarioReader::readStreams(const Json& root)
{
    const Json* streams = find(root, "streams");
    if (!streams)
        return;
    expectArray(*streams, "/streams");
    std::unordered_map<int, size_t> legacyByDevice;
    for (size_t i = 0; i < streams->size(); ++i) {
        const std::string path = child("/streams", i);
        if (i >= size_t(m_limits.maxStreams))
            fail(path, "too many streams: the limit is " + std::to_string(m_limits.maxStreams));
        const Json& s = (*streams)[i];
        expectObject(s, path);
        checkFields(s, path, kStreamFields);
        StreamSpec spec;
        spec.name = readName(required(s, "name", path), child(path, "name"), "a stream's name");
        if (auto [it, inserted] = m_streamByName.emplace(spec.name, int(i)); !inserted)
            fail(child(path, "name"),
                 "duplicate stream name " + jsonQuoted(spec.name) + " (also at " + child("/streams", size_t(it->second))
                     + ")");
        if (const Json* d = find(s, "device"))
            spec.device = readDeviceRef(*d, child(path, "device"), "device");
        else
            spec.device = readDeviceRef(Json(0), child(path, "device"), "device");
        if (const Json* k = find(s, "kind")) {
            const std::string kind = readString(*k, child(path, "kind"));
            const auto parsed = streamKindFromString(kind);
            if (!parsed)
                fail(child(path, "kind"), "unknown stream kind " + jsonQuoted(kind) + hint(kind, streamKindNames()));
            spec.kind = *parsed;
        }
        if (const Json* p = find(s, "priority"))
            spec.priority = int(readIntIn(*p, child(path, "priority"), "priority", kMinPriority, 0));
        if (spec.kind == StreamKind::LegacyDefault) {
            if (auto [it, inserted] = legacyByDevice.emplace(spec.device, i); !inserted)
                fail(child(path, "kind"),
                     "device " + std::to_string(spec.device) + " already has a legacy-default stream ("
                         + jsonQuoted(m_scenario.streams[it->second].name) + "): there is one NULL stream per device");
        }
        m_scenario.streams.push_back(std::move(spec));
    }
}

// A few names are listed; thousands would bury the message.
std::string ScenarioReader::streamHint(const std::string& name, const std::set<std::string>& names)
{
    if (names.empty())
        return " (\"streams\" declares none)";
    return hint(name, names, names.size() <= 8);
}

// A job's expectations name its streams as the merged job does: "rank R · name" (docs/SCENARIO.md "Ranks").
std::set<std::string> ScenarioReader::expectStreamNames(std::set<std::string> names) const
{
    if (!m_scenario.ranks.given())
        return names;
    std::set<std::string> all = names;
    for (int r = 0; r < m_scenario.ranks.count && r < 64; ++r)
        for (const auto& n : names)
            all.insert(rankPrefix(r) + n);
    return all;
}

std::set<std::string> ScenarioReader::streamNames() const
{
    std::set<std::string> names;
    for (const auto& s : m_scenario.streams)
        names.insert(s.name);
    return names;
}

void ScenarioReader::readThreads(const Json& root)
{
    const Json& threads = required(root, "threads", "", "a scenario needs at least one host thread");
    expectArray(threads, "/threads");
    if (threads.empty())
        fail("/threads", "a scenario needs at least one host thread");
    std::unordered_map<std::string, size_t> names;
    int64_t hostThreads = 0;
    for (size_t i = 0; i < threads.size(); ++i) {
        const std::string path = child("/threads", i);
        const Json& t = threads[i];
        expectObject(t, path);
        checkFields(t, path, kThreadFields);
        ThreadSpec spec;
        spec.name = readName(required(t, "name", path), child(path, "name"), "a thread's name");
        if (auto [it, inserted] = names.emplace(spec.name, i); !inserted)
            fail(child(path, "name"),
                 "duplicate thread name " + jsonQuoted(spec.name) + " (also at " + child("/threads", it->second) + ")");
        if (const Json* d = find(t, "device"))
            spec.device = readDeviceRef(*d, child(path, "device"), "device");
        else
            spec.device = readDeviceRef(Json(0), child(path, "device"), "device");
        if (const Json* r = find(t, "repeat"))
            spec.repeat = int(readIntIn(*r, child(path, "repeat"), "repeat", 1, std::numeric_limits<int>::max()));
        if (const Json* w = find(t, "workers"))
            spec.workers = int(readIntIn(*w, child(path, "workers"), "workers", 1, std::numeric_limits<int>::max()));
        hostThreads += spec.workers;
        if (hostThreads > m_limits.maxThreads)
            fail(find(t, "workers") ? child(path, "workers") : path,
                 "too many host threads: " + std::to_string(hostThreads) + " (pool workers included); the limit is "
                     + std::to_string(m_limits.maxThreads));
        if (const Json* ops = find(t, "ops")) {
            const std::string opsPath = child(path, "ops");
            expectArray(*ops, opsPath);
            spec.ops.reserve(ops->size());
            for (size_t o = 0; o < ops->size(); ++o)
                spec.ops.push_back(readOp((*ops)[o], child(opsPath, o), spec, nullptr));
        }
        m_scenario.threads.push_back(std::move(spec));
    }
}

void ScenarioReader::countOp(const std::string& path)
{
    if (++m_opCount > m_limits.maxOps)
        fail(path,
             "too many operations: the limit is " + std::to_string(m_limits.maxOps)
                 + " in all threads, graph nodes included");
}

Op ScenarioReader::readOp(const Json& v, const std::string& path, const ThreadSpec& thread, const Op* graph)
{
    expectObject(v, path);
    const Json& kindValue = required(v, "op", path);
    const std::string kindName = readString(kindValue, child(path, "op"));
    const auto kind = opKindFromString(kindName);
    if (!kind)
        fail(child(path, "op"), "unknown op " + jsonQuoted(kindName) + hint(kindName, opKindNames()));
    if (graph && *kind == OpKind::Collective)
        fail(child(path, "op"),
             "a graph node cannot be a " + kindName + " op: StreamScope does not capture collectives into graphs");
    if (graph && *kind == OpKind::Graph)
        fail(child(path, "op"), "graphs do not nest: a graph node is a kernel, memcpy, memset or host-func op");
    if (graph && !isGraphNodeKind(*kind))
        fail(child(path, "op"),
             "a graph node cannot be a " + kindName + " op: graph nodes are kernel, memcpy, memset and host-func ops");
    countOp(path);

    Op op;
    op.kind = *kind;
    checkFields(v, path, opFields(op.kind), kAllOpFields, "a " + kindName + " op");
    if (op.kind == OpKind::Collective && kindName != "broadcast" && find(v, "root"))
        fail(child(path, "root"), "\"root\" applies only to broadcast ops");
    if (op.kind == OpKind::Collective && kindName != "send" && kindName != "recv" && find(v, "peer"))
        fail(child(path, "peer"), "\"peer\" applies only to send and recv ops");
    op.name = optionalString(v, "name", path);

    switch (op.kind) {
    case OpKind::Kernel: readKernel(v, path, op, thread, graph); break;
    case OpKind::Memcpy: readMemcpy(v, path, op, thread, graph); break;
    case OpKind::Memset:
        readStream(v, path, op, thread, graph);
        op.bytes = readBytes(required(v, "bytes", path), child(path, "bytes"));
        break;
    case OpKind::Record:
    case OpKind::Wait:
        readStream(v, path, op, thread, graph);
        readEvent(v, path, op);
        break;
    case OpKind::HostFunc:
        readStream(v, path, op, thread, graph);
        if (const Json* d = find(v, "duration_us"))
            op.durationUs = readDuration(*d, child(path, "duration_us"), false);
        break;
    case OpKind::StreamSync: readStream(v, path, op, thread, graph); break;
    case OpKind::EventSync: readEvent(v, path, op); break;
    case OpKind::DeviceSync: break;
    case OpKind::HostWork:
        op.durationUs = readDuration(required(v, "duration_us", path), child(path, "duration_us"), false);
        break;
    case OpKind::Graph: readGraph(v, path, op, thread); break;
    case OpKind::Malloc: op.bytes = readBytes(required(v, "bytes", path), child(path, "bytes")); break;
    case OpKind::Free:
        if (const Json* b = find(v, "bytes"))
            op.bytes = readBytes(*b, child(path, "bytes"));
        break;
    case OpKind::Collective:
        op.collective = *collectiveKindFromString(kindName);
        readCollective(v, path, op, thread);
        break;
    }
    return op;
}

void ScenarioReader::readStream(const Json& v, const std::string& path, Op& op, const ThreadSpec& thread,
                                const Op* graph)
{
    const Json* s = find(v, "stream");
    const std::string p = child(path, "stream");
    if (graph) {
        // Nodes are captured from the graph's stream; naming another one would suggest a fork that isn't there.
        if (s) {
            const std::string name = readString(*s, p);
            if (name != graph->stream)
                fail(p,
                     "a graph node runs in its graph's stream " + jsonQuoted(graph->stream) + ", not "
                         + jsonQuoted(name) + " (leave \"stream\" out to inherit it)");
        }
        op.stream = graph->stream;
        op.streamIndex = graph->streamIndex;
        return;
    }
    if (!s)
        missing(path, "stream");
    op.stream = readString(*s, p);
    const auto it = m_streamByName.find(op.stream);
    if (it == m_streamByName.end())
        fail(p, "unknown stream " + jsonQuoted(op.stream) + streamHint(op.stream, streamNames()));
    op.streamIndex = it->second;
    const StreamSpec& stream = m_scenario.streams[size_t(op.streamIndex)];
    if (needsStreamOnThreadDevice(op.kind) && stream.device != thread.device)
        fail(p,
             "stream " + jsonQuoted(stream.name) + " is on device " + std::to_string(stream.device) + " but thread "
                 + jsonQuoted(thread.name) + " is bound to device " + std::to_string(thread.device));
}

void ScenarioReader::readEvent(const Json& v, const std::string& path, Op& op)
{
    const std::string p = child(path, "event");
    op.event = readName(required(v, "event", path), p, "an event's name");
    auto [it, inserted] = m_eventByName.emplace(op.event, int(m_scenario.events.size()));
    if (inserted) {
        m_scenario.events.push_back(op.event);
        m_eventRecorded.push_back(false);
    }
    op.eventIndex = it->second;
    if (op.kind == OpKind::Record)
        m_eventRecorded[size_t(op.eventIndex)] = true;
    else
        m_eventUses.push_back({p, op.eventIndex, op.kind, m_opCount});
}

Dim3 ScenarioReader::readDim(const Json& v, const std::string& path, std::string_view field, bool isGrid) const
{
    std::vector<std::pair<const Json*, std::string>> parts;
    if (v.is_array()) {
        if (v.empty() || v.size() > 3)
            fail(path, std::string(field) + " must have 1 to 3 dimensions, got " + std::to_string(v.size()));
        for (size_t i = 0; i < v.size(); ++i)
            parts.emplace_back(&v[i], child(path, i));
    } else if (v.is_number()) {
        parts.emplace_back(&v, path);
    } else {
        fail(path, "expected an integer or an array of 1 to 3 integers, got " + typeName(v));
    }
    static constexpr const char* kAxis[] = {"x", "y", "z"};
    uint32_t dims[3] = {1, 1, 1};
    for (size_t i = 0; i < parts.size(); ++i) {
        const int64_t n = readInt(*parts[i].first, parts[i].second);
        if (n == 0)
            fail(parts[i].second, std::string(field) + " must not be zero");
        if (n < 0)
            fail(parts[i].second, std::string(field) + " must be positive, got " + std::to_string(n));
        const int64_t max = isGrid ? (i == 0 ? kMaxGridX : kMaxGridYZ) : (i == 2 ? kMaxBlockZ : kMaxBlockThreads);
        if (n > max)
            fail(parts[i].second,
                 std::string(field) + "." + kAxis[i] + " must be at most " + std::to_string(max)
                     + " (a CUDA limit), got " + std::to_string(n));
        dims[i] = uint32_t(n);
    }
    return Dim3{dims[0], dims[1], dims[2]};
}

void ScenarioReader::readKernel(const Json& v, const std::string& path, Op& op, const ThreadSpec& thread,
                                const Op* graph)
{
    readStream(v, path, op, thread, graph);
    std::string kernelName = "spin";
    if (const Json* k = find(v, "kernel")) {
        kernelName = readString(*k, child(path, "kernel"));
        const auto parsed = kernelKindFromString(kernelName);
        if (!parsed)
            fail(child(path, "kernel"),
                 "unknown kernel " + jsonQuoted(kernelName) + hint(kernelName, kernelKindNames()));
        op.kernel = *parsed;
    }
    if (const Json* g = find(v, "grid")) {
        op.grid = readDim(*g, child(path, "grid"), "grid", true);
        op.gridGiven = true;
    } else if (kernelNeedsGrid(op.kernel)) {
        missing(path, "grid", "a " + kernelName + " kernel needs a grid");
    }
    if (const Json* b = find(v, "block")) {
        op.block = readDim(*b, child(path, "block"), "block", false);
        if (op.block.count() > kMaxBlockThreads)
            fail(child(path, "block"),
                 "block has " + std::to_string(op.block.count()) + " threads; CUDA allows at most 1024 per block");
    }
    if (op.kernel == KernelKind::Spin) {
        op.durationUs = readDuration(required(v, "duration_us", path, "a spin kernel runs each block for duration_us"),
                                     child(path, "duration_us"), true);
    } else if (find(v, "duration_us")) {
        fail(child(path, "duration_us"),
             "\"duration_us\" applies only to spin kernels (a " + kernelName
                 + " kernel takes the time its work takes)");
    }
    if (isProblemSizeKernel(op.kernel)) {
        op.size = readIntIn(required(v, "size", path, "a " + kernelName + " kernel needs a problem size"),
                            child(path, "size"), "size", 1, std::numeric_limits<int64_t>::max());
    } else if (find(v, "size")) {
        fail(child(path, "size"), "\"size\" applies only to fma, triad, matmul, transpose and reduce kernels");
    }
    if (const Json* s = find(v, "shared_bytes")) {
        op.sharedBytes = readInt(*s, child(path, "shared_bytes"));
        if (op.sharedBytes < 0)
            fail(child(path, "shared_bytes"),
                 "shared_bytes must not be negative, got " + std::to_string(op.sharedBytes));
    }
}

void ScenarioReader::readMemcpy(const Json& v, const std::string& path, Op& op, const ThreadSpec& thread,
                                const Op* graph)
{
    readStream(v, path, op, thread, graph);
    const std::string kindPath = child(path, "kind");
    const std::string kind = readString(required(v, "kind", path, "h2d, d2h, d2d or p2p"), kindPath);
    const auto parsed = copyKindFromString(kind);
    if (!parsed)
        fail(kindPath, "unknown copy kind " + jsonQuoted(kind) + hint(kind, copyKindNames()));
    op.copy = *parsed;
    op.bytes = readBytes(required(v, "bytes", path), child(path, "bytes"));
    const bool hostSide = op.copy == CopyKind::H2D || op.copy == CopyKind::D2H;
    if (const Json* h = find(v, "host")) {
        const std::string hostPath = child(path, "host");
        if (!hostSide)
            fail(hostPath, "\"host\" applies only to h2d and d2h copies");
        const std::string host = readString(*h, hostPath);
        if (host == "pageable") {
            op.pinned = false;
            warn(hostPath,
                 "an async copy from pageable memory runs synchronously: the host thread blocks and "
                 "the copy cannot overlap with kernels");
        } else if (host != "pinned") {
            fail(hostPath, "\"host\" must be \"pinned\" or \"pageable\", got " + jsonQuoted(host));
        }
    }
    if (op.copy == CopyKind::P2P) {
        const std::string dstPath = child(path, "dst_device");
        op.dstDevice = readDeviceRef(required(v, "dst_device", path, "a p2p copy needs a destination device"), dstPath,
                                     "dst_device");
        const int src = m_scenario.streams[size_t(op.streamIndex)].device;
        if (op.dstDevice == src)
            fail(dstPath, "a p2p copy needs a destination other than its stream's device " + std::to_string(src));
    } else if (find(v, "dst_device")) {
        fail(child(path, "dst_device"), "\"dst_device\" applies only to p2p copies");
    }
}

void ScenarioReader::readGraph(const Json& v, const std::string& path, Op& op, const ThreadSpec& thread)
{
    readStream(v, path, op, thread, nullptr);
    const std::string nodesPath = child(path, "ops");
    const Json& nodes = required(v, "ops", path, "the graph's nodes");
    expectArray(nodes, nodesPath);
    if (nodes.empty())
        fail(nodesPath, "a graph needs at least one node");
    op.ops.reserve(nodes.size());
    for (size_t i = 0; i < nodes.size(); ++i)
        op.ops.push_back(readOp(nodes[i], child(nodesPath, i), thread, &op));
}

} // namespace streamscope::scenario_json
