#include "device_profile.h"

#include "json_strict.h"
#include "resources.h"
#include "trace_json.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <iterator>
#include <limits>
#include <optional>

namespace streamscope {

namespace {

using json = nlohmann::ordered_json;

struct Field {
    enum Type { Int, Int64, Double, Gbps, Tflops, String, Bool, Curve } type;
    std::function<void*(DeviceProfile&)> target;
};

// In the order profiles list them (deviceProfileToJson writes this order).
const std::vector<std::pair<std::string, Field>>& fields()
{
    static const std::vector<std::pair<std::string, Field>> f = {
        {"id", {Field::String, [](DeviceProfile& p) -> void* { return &p.id; }}},
        {"name", {Field::String, [](DeviceProfile& p) -> void* { return &p.name; }}},
        {"sources", {Field::String, [](DeviceProfile& p) -> void* { return &p.sources; }}},
        {"sm_count", {Field::Int, [](DeviceProfile& p) -> void* { return &p.smCount; }}},
        {"max_threads_per_sm", {Field::Int, [](DeviceProfile& p) -> void* { return &p.maxThreadsPerSm; }}},
        {"max_blocks_per_sm", {Field::Int, [](DeviceProfile& p) -> void* { return &p.maxBlocksPerSm; }}},
        {"shared_bytes_per_sm", {Field::Int64, [](DeviceProfile& p) -> void* { return &p.sharedBytesPerSm; }}},
        {"copy_engines", {Field::Int, [](DeviceProfile& p) -> void* { return &p.copyEngines; }}},
        {"hardware_queues", {Field::Int, [](DeviceProfile& p) -> void* { return &p.hardwareQueues; }}},
        {"work_queues", {Field::String, [](DeviceProfile& p) -> void* { return &p.workQueues; }}},
        {"batched_kernel_completion",
         {Field::Bool, [](DeviceProfile& p) -> void* { return &p.batchedKernelCompletion; }}},
        {"priority_lowest", {Field::Int, [](DeviceProfile& p) -> void* { return &p.priorityLowest; }}},
        {"priority_highest", {Field::Int, [](DeviceProfile& p) -> void* { return &p.priorityHighest; }}},
        {"h2d_pinned_gbps", {Field::Gbps, [](DeviceProfile& p) -> void* { return &p.h2dPinnedBps; }}},
        {"d2h_pinned_gbps", {Field::Gbps, [](DeviceProfile& p) -> void* { return &p.d2hPinnedBps; }}},
        {"h2d_pinned_duplex_gbps", {Field::Gbps, [](DeviceProfile& p) -> void* { return &p.h2dPinnedDuplexBps; }}},
        {"d2h_pinned_duplex_gbps", {Field::Gbps, [](DeviceProfile& p) -> void* { return &p.d2hPinnedDuplexBps; }}},
        {"h2d_pageable_gbps", {Field::Gbps, [](DeviceProfile& p) -> void* { return &p.h2dPageableBps; }}},
        {"d2h_pageable_gbps", {Field::Gbps, [](DeviceProfile& p) -> void* { return &p.d2hPageableBps; }}},
        {"d2d_gbps", {Field::Gbps, [](DeviceProfile& p) -> void* { return &p.d2dBps; }}},
        {"p2p_gbps", {Field::Gbps, [](DeviceProfile& p) -> void* { return &p.p2pBps; }}},
        {"dram_gbps", {Field::Gbps, [](DeviceProfile& p) -> void* { return &p.dramBps; }}},
        {"memset_gbps", {Field::Gbps, [](DeviceProfile& p) -> void* { return &p.memsetBps; }}},
        {"fp32_tflops", {Field::Tflops, [](DeviceProfile& p) -> void* { return &p.fp32Flops; }}},
        {"matmul_tflops", {Field::Tflops, [](DeviceProfile& p) -> void* { return &p.matmulFlops; }}},
        {"host_func_doze_ns", {Field::Int64, [](DeviceProfile& p) -> void* { return &p.hostFuncDozeNs; }}},
        {"host_func_deep_latency_ns",
         {Field::Int64, [](DeviceProfile& p) -> void* { return &p.hostFuncDeepLatencyNs; }}},
        {"l2_bytes", {Field::Int64, [](DeviceProfile& p) -> void* { return &p.l2Bytes; }}},
        {"l2_cold_factor", {Field::Double, [](DeviceProfile& p) -> void* { return &p.l2ColdFactor; }}},
        {"compute_saturation", {Field::Double, [](DeviceProfile& p) -> void* { return &p.computeSaturation; }}},
        {"memory_saturation", {Field::Double, [](DeviceProfile& p) -> void* { return &p.memorySaturation; }}},
        {"launch_api_ns", {Field::Int64, [](DeviceProfile& p) -> void* { return &p.launchApiNs; }}},
        {"launch_api_round_robin_ns",
         {Field::Int64, [](DeviceProfile& p) -> void* { return &p.launchApiRoundRobinNs; }}},
        {"launch_api_concurrent_ns",
         {Field::Int64, [](DeviceProfile& p) -> void* { return &p.launchApiConcurrentNs; }}},
        {"copy_api_ns", {Field::Int64, [](DeviceProfile& p) -> void* { return &p.copyApiNs; }}},
        {"event_record_api_ns", {Field::Int64, [](DeviceProfile& p) -> void* { return &p.eventRecordApiNs; }}},
        {"stream_wait_api_ns", {Field::Int64, [](DeviceProfile& p) -> void* { return &p.streamWaitApiNs; }}},
        {"host_func_api_ns", {Field::Int64, [](DeviceProfile& p) -> void* { return &p.hostFuncApiNs; }}},
        {"sync_api_ns", {Field::Int64, [](DeviceProfile& p) -> void* { return &p.syncApiNs; }}},
        {"malloc_api_ns", {Field::Int64, [](DeviceProfile& p) -> void* { return &p.mallocApiNs; }}},
        {"graph_launch_api_ns", {Field::Int64, [](DeviceProfile& p) -> void* { return &p.graphLaunchApiNs; }}},
        {"graph_launch_api_per_node_ns",
         {Field::Int64, [](DeviceProfile& p) -> void* { return &p.graphLaunchApiPerNodeNs; }}},
        {"launch_latency_ns", {Field::Int64, [](DeviceProfile& p) -> void* { return &p.launchLatencyNs; }}},
        {"kernel_overhead_ns", {Field::Int64, [](DeviceProfile& p) -> void* { return &p.kernelOverheadNs; }}},
        {"graph_node_overhead_ns", {Field::Int64, [](DeviceProfile& p) -> void* { return &p.graphNodeOverheadNs; }}},
        {"copy_latency_ns", {Field::Int64, [](DeviceProfile& p) -> void* { return &p.copyLatencyNs; }}},
        {"host_func_latency_ns", {Field::Int64, [](DeviceProfile& p) -> void* { return &p.hostFuncLatencyNs; }}},
        {"host_func_spacing_ns", {Field::Int64, [](DeviceProfile& p) -> void* { return &p.hostFuncSpacingNs; }}},
        {"min_kernel_ns", {Field::Int64, [](DeviceProfile& p) -> void* { return &p.minKernelNs; }}},
        {"graph_min_kernel_ns", {Field::Int64, [](DeviceProfile& p) -> void* { return &p.graphMinKernelNs; }}},
        {"spin_overhead_ns", {Field::Int64, [](DeviceProfile& p) -> void* { return &p.spinOverheadNs; }}},
        {"memset_api_ns", {Field::Int64, [](DeviceProfile& p) -> void* { return &p.memsetApiNs; }}},
        {"reduce_block_ns", {Field::Double, [](DeviceProfile& p) -> void* { return &p.reduceBlockNs; }}},
        {"host_func_wake_curve", {Field::Curve, [](DeviceProfile& p) -> void* { return &p.hostFuncWakeCurve; }}},
        {"host_func_first_wake_ns", {Field::Int64, [](DeviceProfile& p) -> void* { return &p.hostFuncFirstWakeNs; }}},
        {"host_func_release_ns", {Field::Int64, [](DeviceProfile& p) -> void* { return &p.hostFuncReleaseNs; }}},
        {"min_memset_ns", {Field::Int64, [](DeviceProfile& p) -> void* { return &p.minMemsetNs; }}},
        {"event_sync_wake_ns", {Field::Int64, [](DeviceProfile& p) -> void* { return &p.eventSyncWakeNs; }}},
        {"nvlink_gbps", {Field::Gbps, [](DeviceProfile& p) -> void* { return &p.nvlinkBps; }}},
        {"nvlink_latency_ns", {Field::Int64, [](DeviceProfile& p) -> void* { return &p.nvlinkLatencyNs; }}},
        {"pcie_gbps", {Field::Gbps, [](DeviceProfile& p) -> void* { return &p.pcieBps; }}},
        {"pcie_latency_ns", {Field::Int64, [](DeviceProfile& p) -> void* { return &p.pcieLatencyNs; }}},
        {"ib_gbps", {Field::Gbps, [](DeviceProfile& p) -> void* { return &p.ibBps; }}},
        {"ib_latency_ns", {Field::Int64, [](DeviceProfile& p) -> void* { return &p.ibLatencyNs; }}},
    };
    return f;
}

const Field* findField(const std::string& key)
{
    for (const auto& [name, field] : fields())
        if (name == key)
            return &field;
    return nullptr;
}

// The figures the simulator does not use yet default to what reproduces a profile without them.
void defaultNewFields(DeviceProfile& p, const json& doc)
{
    if (!doc.contains("launch_api_round_robin_ns"))
        p.launchApiRoundRobinNs = p.launchApiNs;
    if (!doc.contains("graph_min_kernel_ns"))
        p.graphMinKernelNs = p.minKernelNs;
    if (!doc.contains("memset_api_ns"))
        p.memsetApiNs = p.copyApiNs;
    if (!doc.contains("launch_api_concurrent_ns"))
        p.launchApiConcurrentNs = p.launchApiNs;
    if (!doc.contains("h2d_pinned_duplex_gbps"))
        p.h2dPinnedDuplexBps = p.h2dPinnedBps;
    if (!doc.contains("d2h_pinned_duplex_gbps"))
        p.d2hPinnedDuplexBps = p.d2hPinnedBps;
    if (!doc.contains("host_func_spacing_ns"))
        p.hostFuncSpacingNs = p.kernelOverheadNs + p.hostFuncLatencyNs;
    if (!doc.contains("memset_gbps"))
        p.memsetBps = p.dramBps;
}

// The values a profile may hold: what real devices have, with room to spare, and small enough that the simulator's
// state per SM and per copy engine and its arithmetic in nanoseconds stay bounded (docs/SCENARIO.md, "Device
// profiles"). Bandwidths in GB/s and throughputs in TFLOPS as the file writes them.
struct ValueRange {
    double min, max;
};

std::string shortNumber(double v)
{
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.15g", v);
    return buf;
}

ValueRange valueRange(const std::string& key, Field::Type type)
{
    static const std::pair<const char*, ValueRange> kCounts[] = {
        {"sm_count", {1, 4096}},
        {"max_threads_per_sm", {32, 65536}},
        {"max_blocks_per_sm", {1, 1024}},
        {"shared_bytes_per_sm", {0, 1 << 30}},
        {"copy_engines", {1, 64}},
        {"hardware_queues", {1, 128}},
        {"priority_lowest", {-1024, 1024}},
        {"priority_highest", {-1024, 1024}},
        {"l2_bytes", {0, 1e12}},
    };
    for (const auto& [name, range] : kCounts)
        if (key == name)
            return range;
    if (key == "compute_saturation" || key == "memory_saturation")
        return {0.01, 1}; // a fraction of the resident blocks
    if (key == "l2_cold_factor")
        return {1, 100}; // never faster than with the buffers in the L2
    if (key == "reduce_block_ns")
        return {0, 1e6}; // per block, one after another: up to a millisecond
    switch (type) {
    case Field::Gbps: return {1e-3, 1e5};   // 1 MB/s to 100 TB/s
    case Field::Tflops: return {1e-3, 1e5}; // 1 GFLOPS to 100 PFLOPS
    case Field::Int64: return {0, 1e10};    // nanoseconds: up to 10 s
    default: return {0, 1e15};
    }
}

Error badValue(const std::string& file, const std::string& path, const std::string& message)
{
    return Error{file, path, message};
}

std::optional<Error> readString(const json& obj, const char* key, std::string& out, const std::string& file,
                                const std::string& path)
{
    if (!obj.contains(key))
        return std::nullopt;
    if (!obj[key].is_string())
        return badValue(file, path + "/" + key, "expected a string");
    out = obj[key].get<std::string>();
    return std::nullopt;
}

// A curve: [[x_ns, y_ns], ...], x strictly increasing, both whole nanoseconds from 0 to 10 s.
std::optional<Error> parseCurve(const json& v, std::vector<std::pair<int64_t, int64_t>>& out, const std::string& file,
                                const std::string& path)
{
    if (!v.is_array())
        return badValue(file, path, "expected an array of [idle_ns, wake_ns] points");
    out.clear();
    for (size_t i = 0; i < v.size(); ++i) {
        const std::string p = path + "/" + std::to_string(i);
        const json& point = v[i];
        if (!point.is_array() || point.size() != 2 || !point[0].is_number() || !point[1].is_number())
            return badValue(file, p, "expected a point [idle_ns, wake_ns] of two numbers");
        int64_t xy[2] = {0, 0};
        for (int k = 0; k < 2; ++k) {
            const double d = point[size_t(k)].get<double>();
            if (!std::isfinite(d) || d < 0 || d > 1e10 || d != std::floor(d))
                return badValue(file, p + "/" + std::to_string(k), "expected whole nanoseconds from 0 to 10 s");
            xy[k] = int64_t(d);
        }
        if (!out.empty() && xy[0] <= out.back().first)
            return badValue(file, p + "/0", "the idle times must increase from point to point");
        out.emplace_back(xy[0], xy[1]);
    }
    return std::nullopt;
}

std::optional<Error> parseFigure(const std::string& key, const json& v, CalibrationFigure& f, const std::string& file,
                                 const std::string& path)
{
    if (!v.is_object())
        return badValue(file, path,
                        "a calibration figure is an object (median or trimmed_mean, spread, unit, repeats, method)");
    f.key = key;
    for (const auto& [k, value] : v.items()) {
        const std::string p = path + "/" + k;
        if (k == "median" || k == "trimmed_mean" || k == "spread") {
            if (!value.is_number())
                return badValue(file, p, "expected a number");
            const double d = value.get<double>();
            if (!std::isfinite(d) || (k == "spread" && d < 0))
                return badValue(file, p, k == "spread" ? "must not be negative" : "must be a finite number");
            (k == "spread" ? f.spread : f.value) = d;
            f.trimmedMean = f.trimmedMean || k == "trimmed_mean";
        } else if (k == "repeats") {
            if (!value.is_array() || value.empty())
                return badValue(file, p, "expected an array of numbers, one per repeat");
            for (size_t i = 0; i < value.size(); ++i) {
                if (!value[i].is_number() || !std::isfinite(value[i].get<double>()))
                    return badValue(file, p + "/" + std::to_string(i), "expected a number");
                f.repeats.push_back(value[i].get<double>());
            }
        } else if (k == "unit" || k == "method") {
            if (!value.is_string())
                return badValue(file, p, "expected a string");
            (k == "unit" ? f.unit : f.method) = value.get<std::string>();
        } else {
            return badValue(file, p,
                            "unknown field \"" + k + "\" (median or trimmed_mean, spread, unit, repeats, method)");
        }
    }
    if (v.contains("median") == v.contains("trimmed_mean"))
        return badValue(file, path, "a calibration figure needs its median or its trimmed_mean (one of them)");
    if (!f.repeats.empty()) {
        const auto [lo, hi] = std::minmax_element(f.repeats.begin(), f.repeats.end());
        if (f.value < *lo || f.value > *hi)
            return badValue(file, path + (f.trimmedMean ? "/trimmed_mean" : "/median"),
                            std::string(f.trimmedMean ? "the trimmed mean" : "the median")
                                + " lies outside its repeats");
    }
    return std::nullopt;
}

std::optional<Error> parseCalibration(const json& c, DeviceCalibration& out, const std::string& file)
{
    const std::string path = "/calibration";
    if (!c.is_object())
        return badValue(file, path, "expected an object (the machine and the measured figures)");
    static const char* const kStrings[] = {"tool",        "command",      "gpu",  "driver",
                                           "cuda_driver", "cuda_runtime", "date", "host"};
    for (const auto& [k, value] : c.items()) {
        if (std::find_if(std::begin(kStrings), std::end(kStrings), [&key = k](const char* s) { return key == s; })
            != std::end(kStrings))
            continue;
        if (k == "device" || k == "figures" || k == "notes")
            continue;
        return badValue(file, path + "/" + k, "unknown field \"" + k + "\"");
    }
    std::string* const targets[] = {&out.tool,       &out.command,     &out.gpu,  &out.driver,
                                    &out.cudaDriver, &out.cudaRuntime, &out.date, &out.host};
    for (size_t i = 0; i < std::size(kStrings); ++i)
        if (auto e = readString(c, kStrings[i], *targets[i], file, path))
            return e;
    if (c.contains("device")) {
        if (!c["device"].is_number_integer() || c["device"].get<int64_t>() < 0
            || c["device"].get<int64_t>() > std::numeric_limits<int>::max())
            return badValue(file, path + "/device", "expected a device index (an integer, 0 or more)");
        out.device = c["device"].get<int>();
    }
    if (c.contains("notes")) {
        const auto& n = c["notes"];
        if (!n.is_array())
            return badValue(file, path + "/notes", "expected an array of strings");
        for (size_t i = 0; i < n.size(); ++i) {
            if (!n[i].is_string())
                return badValue(file, path + "/notes/" + std::to_string(i), "expected a string");
            out.notes.push_back(n[i].get<std::string>());
        }
    }
    if (c.contains("figures")) {
        const auto& figs = c["figures"];
        if (!figs.is_object())
            return badValue(file, path + "/figures", "expected an object: figure name -> {median, spread, ...}");
        for (const auto& [k, value] : figs.items()) {
            CalibrationFigure f;
            if (auto e = parseFigure(k, value, f, file, path + "/figures/" + k))
                return e;
            out.figures.push_back(std::move(f));
        }
    }
    return std::nullopt;
}

json calibrationJson(const DeviceCalibration& c)
{
    json j;
    j["tool"] = c.tool;
    j["command"] = c.command;
    j["gpu"] = c.gpu;
    j["device"] = c.device;
    j["driver"] = c.driver;
    j["cuda_driver"] = c.cudaDriver;
    j["cuda_runtime"] = c.cudaRuntime;
    j["date"] = c.date;
    j["host"] = c.host;
    json figs = json::object();
    for (const auto& f : c.figures) {
        json o;
        o[f.trimmedMean ? "trimmed_mean" : "median"] = f.value;
        o["spread"] = f.spread;
        o["unit"] = f.unit;
        o["repeats"] = f.repeats;
        o["method"] = f.method;
        figs[f.key] = std::move(o);
    }
    j["figures"] = std::move(figs);
    j["notes"] = c.notes;
    return j;
}

} // namespace

const CalibrationFigure* DeviceCalibration::figure(std::string_view key) const
{
    for (const auto& f : figures)
        if (f.key == key)
            return &f;
    return nullptr;
}

Result<DeviceProfile> parseDeviceProfile(const std::string& text, const std::string& file)
{
    json doc;
    try {
        doc = parseJsonStrict<json>(text);
    } catch (const DuplicateJsonKey& d) {
        return Error{file, d.pointer, "duplicate key \"" + d.key + "\": an object names each key once"};
    } catch (const json::exception& e) { // parse errors, and numbers too large for a double (4e421)
        return Error{file, {}, std::string("not JSON: ") + e.what()};
    }
    if (!doc.is_object())
        return Error{file, "", "a device profile is a JSON object"};
    if (!doc.contains("format") || !doc["format"].is_string()
        || doc["format"].get<std::string>() != "streamscope-device-profile")
        return Error{file, "/format", "expected \"streamscope-device-profile\""};
    if (!doc.contains("version") || !doc["version"].is_number_integer() || doc["version"].get<int64_t>() != 1)
        return Error{file, "/version", "unsupported version (this StreamScope reads device profile version 1)"};
    DeviceProfile p;
    for (const auto& [key, value] : doc.items()) {
        if (key == "format" || key == "version")
            continue;
        if (key == "calibration") {
            if (auto e = parseCalibration(value, p.calibration, file))
                return *e;
            continue;
        }
        const Field* field = findField(key);
        if (!field)
            return Error{file, "/" + key, "unknown field \"" + key + "\""};
        void* target = field->target(p);
        const auto type = field->type;
        if (type == Field::String) {
            if (!value.is_string())
                return Error{file, "/" + key, "expected a string"};
            *static_cast<std::string*>(target) = value.get<std::string>();
            continue;
        }
        if (type == Field::Bool) {
            if (!value.is_boolean())
                return Error{file, "/" + key, "expected true or false"};
            *static_cast<bool*>(target) = value.get<bool>();
            continue;
        }
        if (type == Field::Curve) {
            if (auto e =
                    parseCurve(value, *static_cast<std::vector<std::pair<int64_t, int64_t>>*>(target), file, "/" + key))
                return *e;
            continue;
        }
        if (!value.is_number())
            return Error{file, "/" + key, "expected a number"};
        const double v = value.get<double>();
        if (!std::isfinite(v))
            return Error{file, "/" + key, "must be a finite number"};
        const bool mayBeNegative = key == "priority_highest" || key == "priority_lowest";
        if (!mayBeNegative && v < 0)
            return Error{file, "/" + key, "must not be negative"};
        const bool integral = type == Field::Int || type == Field::Int64;
        if (integral && v != std::floor(v))
            return Error{file, "/" + key, "expected a whole number"};
        // A zero rate is "must be positive" below.
        if (const ValueRange r = valueRange(key, type);
            (v < r.min && !((type == Field::Gbps || type == Field::Tflops) && v == 0)) || v > r.max)
            return Error{file, "/" + key,
                         value.dump() + " is out of range: from " + shortNumber(r.min) + " to " + shortNumber(r.max)};
        switch (type) {
        case Field::Int: *static_cast<int*>(target) = int(v); break;
        case Field::Int64: *static_cast<int64_t*>(target) = int64_t(v); break;
        case Field::Double: *static_cast<double*>(target) = v; break;
        case Field::Gbps: *static_cast<double*>(target) = v * 1e9; break;
        case Field::Tflops: *static_cast<double*>(target) = v * 1e12; break;
        case Field::String:
        case Field::Bool:
        case Field::Curve: break;
        }
    }
    if (p.workQueues != "connections" && p.workQueues != "engines")
        return Error{file, "/work_queues",
                     "expected \"connections\" (a hardware queue per connection) or \"engines\" (a queue per engine), "
                     "got \""
                         + p.workQueues + "\""};
    if (p.smCount < 1 || p.maxThreadsPerSm < 32 || p.maxBlocksPerSm < 1)
        return Error{file, "/sm_count", "a device needs at least one SM, 32 threads and one block per SM"};
    if (p.copyEngines < 1)
        return Error{file, "/copy_engines", "a device needs at least one copy engine"};
    if (p.hardwareQueues < 1)
        return Error{file, "/hardware_queues", "must be at least 1"};
    for (const char* bw : {"h2d_pinned_gbps", "d2h_pinned_gbps", "h2d_pinned_duplex_gbps", "d2h_pinned_duplex_gbps",
                           "h2d_pageable_gbps", "d2h_pageable_gbps", "d2d_gbps", "p2p_gbps", "dram_gbps", "memset_gbps",
                           "fp32_tflops", "matmul_tflops", "nvlink_gbps", "pcie_gbps", "ib_gbps"}) {
        if (doc.contains(bw) && doc[bw].get<double>() <= 0)
            return Error{file, std::string("/") + bw, "must be positive"};
    }
    defaultNewFields(p, doc);
    return p;
}

int64_t interpolateCurve(const std::vector<std::pair<int64_t, int64_t>>& curve, int64_t x)
{
    if (curve.empty())
        return 0;
    if (x <= curve.front().first)
        return curve.front().second;
    for (size_t i = 1; i < curve.size(); ++i) {
        const auto [x1, y1] = curve[i];
        if (x > x1)
            continue;
        const auto [x0, y0] = curve[i - 1];
        return y0 + int64_t(std::llround(double(y1 - y0) * double(x - x0) / double(x1 - x0)));
    }
    return curve.back().second;
}

std::string deviceProfileToJson(const DeviceProfile& profile)
{
    DeviceProfile p = profile; // fields() hands out pointers into a mutable profile
    json doc;
    doc["format"] = "streamscope-device-profile";
    doc["version"] = 1;
    for (const auto& [key, field] : fields()) {
        void* v = field.target(p);
        switch (field.type) {
        case Field::String: doc[key] = *static_cast<std::string*>(v); break;
        case Field::Int: doc[key] = *static_cast<int*>(v); break;
        case Field::Int64: doc[key] = *static_cast<int64_t*>(v); break;
        case Field::Double: doc[key] = *static_cast<double*>(v); break;
        case Field::Gbps: doc[key] = *static_cast<double*>(v) / 1e9; break;
        case Field::Tflops: doc[key] = *static_cast<double*>(v) / 1e12; break;
        case Field::Bool: doc[key] = *static_cast<bool*>(v); break;
        case Field::Curve: {
            json points = json::array();
            for (const auto& [x, y] : *static_cast<std::vector<std::pair<int64_t, int64_t>>*>(v))
                points.push_back(json::array({x, y}));
            doc[key] = points;
            break;
        }
        }
    }
    if (!p.calibration.empty())
        doc["calibration"] = calibrationJson(p.calibration);
    return doc.dump(2) + "\n";
}

Result<DeviceProfile> loadDeviceProfile(const std::string& path)
{
    auto text = readTextFile(path, 1 << 20);
    if (!text)
        return text.error();
    return parseDeviceProfile(*text, path);
}

std::vector<std::string> builtinProfileIds()
{
    std::vector<std::string> ids;
    std::error_code ec;
    const auto dir = std::filesystem::path(resourcesDir()) / "profiles";
    for (const auto& entry : std::filesystem::directory_iterator(dir, ec))
        if (entry.path().extension() == ".json")
            ids.push_back(entry.path().stem().string());
    std::sort(ids.begin(), ids.end());
    return ids;
}

Result<DeviceProfile> findDeviceProfile(const std::string& idOrPath)
{
    const std::string id = idOrPath.empty() ? std::string("h200") : idOrPath;
    std::error_code ec;
    if (id.find('/') != std::string::npos || id.ends_with(".json")) {
        if (!std::filesystem::exists(id, ec))
            return Error{id, {}, "no such device profile file"};
        return loadDeviceProfile(id);
    }
    const auto path = std::filesystem::path(resourcesDir()) / "profiles" / (id + ".json");
    if (!std::filesystem::exists(path, ec)) {
        std::string known;
        for (const auto& k : builtinProfileIds())
            known += (known.empty() ? "" : ", ") + k;
        return Error{{}, {}, "unknown device profile \"" + id + "\" (known: " + known + ")"};
    }
    return loadDeviceProfile(path.string());
}

} // namespace streamscope
