#include "device_profile.h"

#include "resources.h"
#include "trace_json.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <map>

namespace streamscope {

namespace {

using json = nlohmann::json;

struct Field {
    enum Type { Int, Int64, Double, Gbps, Tflops, String } type;
    std::function<void*(DeviceProfile&)> target;
};

const std::map<std::string, Field>& fields()
{
    static const std::map<std::string, Field> f = {
        {"id", {Field::String, [](DeviceProfile& p) -> void* { return &p.id; }}},
        {"name", {Field::String, [](DeviceProfile& p) -> void* { return &p.name; }}},
        {"sources", {Field::String, [](DeviceProfile& p) -> void* { return &p.sources; }}},
        {"sm_count", {Field::Int, [](DeviceProfile& p) -> void* { return &p.smCount; }}},
        {"max_threads_per_sm", {Field::Int, [](DeviceProfile& p) -> void* { return &p.maxThreadsPerSm; }}},
        {"max_blocks_per_sm", {Field::Int, [](DeviceProfile& p) -> void* { return &p.maxBlocksPerSm; }}},
        {"shared_bytes_per_sm", {Field::Int64, [](DeviceProfile& p) -> void* { return &p.sharedBytesPerSm; }}},
        {"copy_engines", {Field::Int, [](DeviceProfile& p) -> void* { return &p.copyEngines; }}},
        {"hardware_queues", {Field::Int, [](DeviceProfile& p) -> void* { return &p.hardwareQueues; }}},
        {"priority_lowest", {Field::Int, [](DeviceProfile& p) -> void* { return &p.priorityLowest; }}},
        {"priority_highest", {Field::Int, [](DeviceProfile& p) -> void* { return &p.priorityHighest; }}},
        {"h2d_pinned_gbps", {Field::Gbps, [](DeviceProfile& p) -> void* { return &p.h2dPinnedBps; }}},
        {"d2h_pinned_gbps", {Field::Gbps, [](DeviceProfile& p) -> void* { return &p.d2hPinnedBps; }}},
        {"h2d_pageable_gbps", {Field::Gbps, [](DeviceProfile& p) -> void* { return &p.h2dPageableBps; }}},
        {"d2h_pageable_gbps", {Field::Gbps, [](DeviceProfile& p) -> void* { return &p.d2hPageableBps; }}},
        {"d2d_gbps", {Field::Gbps, [](DeviceProfile& p) -> void* { return &p.d2dBps; }}},
        {"p2p_gbps", {Field::Gbps, [](DeviceProfile& p) -> void* { return &p.p2pBps; }}},
        {"dram_gbps", {Field::Gbps, [](DeviceProfile& p) -> void* { return &p.dramBps; }}},
        {"fp32_tflops", {Field::Tflops, [](DeviceProfile& p) -> void* { return &p.fp32Flops; }}},
        {"matmul_tflops", {Field::Tflops, [](DeviceProfile& p) -> void* { return &p.matmulFlops; }}},
        {"launch_api_ns", {Field::Int64, [](DeviceProfile& p) -> void* { return &p.launchApiNs; }}},
        {"copy_api_ns", {Field::Int64, [](DeviceProfile& p) -> void* { return &p.copyApiNs; }}},
        {"event_record_api_ns", {Field::Int64, [](DeviceProfile& p) -> void* { return &p.eventRecordApiNs; }}},
        {"stream_wait_api_ns", {Field::Int64, [](DeviceProfile& p) -> void* { return &p.streamWaitApiNs; }}},
        {"host_func_api_ns", {Field::Int64, [](DeviceProfile& p) -> void* { return &p.hostFuncApiNs; }}},
        {"sync_api_ns", {Field::Int64, [](DeviceProfile& p) -> void* { return &p.syncApiNs; }}},
        {"malloc_api_ns", {Field::Int64, [](DeviceProfile& p) -> void* { return &p.mallocApiNs; }}},
        {"graph_launch_api_ns", {Field::Int64, [](DeviceProfile& p) -> void* { return &p.graphLaunchApiNs; }}},
        {"launch_latency_ns", {Field::Int64, [](DeviceProfile& p) -> void* { return &p.launchLatencyNs; }}},
        {"kernel_overhead_ns", {Field::Int64, [](DeviceProfile& p) -> void* { return &p.kernelOverheadNs; }}},
        {"graph_node_overhead_ns", {Field::Int64, [](DeviceProfile& p) -> void* { return &p.graphNodeOverheadNs; }}},
        {"copy_latency_ns", {Field::Int64, [](DeviceProfile& p) -> void* { return &p.copyLatencyNs; }}},
        {"host_func_latency_ns", {Field::Int64, [](DeviceProfile& p) -> void* { return &p.hostFuncLatencyNs; }}},
        {"min_kernel_ns", {Field::Int64, [](DeviceProfile& p) -> void* { return &p.minKernelNs; }}},
        {"event_sync_wake_ns", {Field::Int64, [](DeviceProfile& p) -> void* { return &p.eventSyncWakeNs; }}},
    };
    return f;
}

} // namespace

Result<DeviceProfile> parseDeviceProfile(const std::string& text, const std::string& file)
{
    json doc;
    try {
        doc = json::parse(text);
    } catch (const json::parse_error& e) {
        return Error{file, {}, std::string("not JSON: ") + e.what()};
    }
    if (!doc.is_object())
        return Error{file, "", "a device profile is a JSON object"};
    if (doc.value("format", std::string()) != "streamscope-device-profile")
        return Error{file, "/format", "expected \"streamscope-device-profile\""};
    if (!doc.contains("version") || !doc["version"].is_number_integer() || doc["version"].get<int>() != 1)
        return Error{file, "/version", "unsupported version (this StreamScope reads device profile version 1)"};
    DeviceProfile p;
    for (const auto& [key, value] : doc.items()) {
        if (key == "format" || key == "version")
            continue;
        auto it = fields().find(key);
        if (it == fields().end())
            return Error{file, "/" + key, "unknown field \"" + key + "\""};
        void* target = it->second.target(p);
        const auto type = it->second.type;
        if (type == Field::String) {
            if (!value.is_string())
                return Error{file, "/" + key, "expected a string"};
            *static_cast<std::string*>(target) = value.get<std::string>();
            continue;
        }
        if (!value.is_number())
            return Error{file, "/" + key, "expected a number"};
        const double v = value.get<double>();
        const bool mayBeNegative = key == "priority_highest" || key == "priority_lowest";
        if (!mayBeNegative && v < 0)
            return Error{file, "/" + key, "must not be negative"};
        switch (type) {
        case Field::Int:
            *static_cast<int*>(target) = int(v);
            break;
        case Field::Int64:
            *static_cast<int64_t*>(target) = int64_t(v);
            break;
        case Field::Double:
            *static_cast<double*>(target) = v;
            break;
        case Field::Gbps:
            *static_cast<double*>(target) = v * 1e9;
            break;
        case Field::Tflops:
            *static_cast<double*>(target) = v * 1e12;
            break;
        case Field::String:
            break;
        }
    }
    if (p.smCount < 1 || p.maxThreadsPerSm < 32 || p.maxBlocksPerSm < 1)
        return Error{file, "/sm_count", "a device needs at least one SM, 32 threads and one block per SM"};
    if (p.copyEngines < 1)
        return Error{file, "/copy_engines", "a device needs at least one copy engine"};
    if (p.hardwareQueues < 1)
        return Error{file, "/hardware_queues", "must be at least 1"};
    for (const char* bw : {"h2d_pinned_gbps", "d2h_pinned_gbps", "h2d_pageable_gbps", "d2h_pageable_gbps", "d2d_gbps",
                           "p2p_gbps", "dram_gbps", "fp32_tflops", "matmul_tflops"}) {
        if (doc.contains(bw) && doc[bw].get<double>() <= 0)
            return Error{file, std::string("/") + bw, "must be positive"};
    }
    return p;
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
