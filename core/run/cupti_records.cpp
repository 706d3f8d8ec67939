#include "cupti_records.h"

#include "enum_names.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <map>
#include <unordered_map>

namespace streamscope {

namespace {

constexpr std::array<std::pair<CuptiRecordKind, std::string_view>, 4> kRecordKinds{{
    {CuptiRecordKind::Kernel, "kernel"},
    {CuptiRecordKind::Memcpy, "memcpy"},
    {CuptiRecordKind::MemcpyPeer, "memcpy-peer"},
    {CuptiRecordKind::Memset, "memset"},
}};

} // namespace

std::string_view toString(CuptiRecordKind k)
{
    return detail::nameOf(kRecordKinds, k);
}

CuptiMatch matchCuptiRecords(const std::vector<CuptiRecord>& records, const std::vector<CuptiIssue>& issues,
                             int64_t hostMinusCupti, int64_t latestStart)
{
    CuptiMatch m;
    m.times.resize(issues.size());
    // Runtime ids first: a record names the runtime call's id where CUPTI gives it that one, else its driver
    // call's. Both are unique per call, so neither map can name another op.
    std::unordered_map<uint32_t, uint32_t> byRuntime;
    std::unordered_map<uint32_t, uint32_t> byDriver;
    byRuntime.reserve(issues.size());
    byDriver.reserve(issues.size());
    for (uint32_t i = 0; i < issues.size(); ++i) {
        if (issues[i].runtimeId)
            byRuntime.emplace(issues[i].runtimeId, i);
        if (issues[i].driverId)
            byDriver.emplace(issues[i].driverId, i);
    }
    // Streams whose issues carry no ids: the issues of each, in call order.
    using StreamKey = std::pair<uint32_t, uint32_t>; // (device, CUPTI stream id)
    std::map<StreamKey, std::vector<uint32_t>> byOrder;
    for (uint32_t i = 0; i < issues.size(); ++i)
        if (!issues[i].runtimeId && !issues[i].driverId && issues[i].streamId)
            byOrder[{issues[i].device, issues[i].streamId}].push_back(i);
    std::map<StreamKey, std::vector<const CuptiRecord*>> ordered; // their records
    auto place = [&](uint32_t issue, const CuptiRecord& r) {
        m.times[issue].push_back(
            {r.start + hostMinusCupti, std::max(r.start, r.end) + hostMinusCupti, r.kind, r.graphNodeId});
        ++m.matched;
    };
    for (const auto& r : records) {
        if (r.start + hostMinusCupti > latestStart) {
            ++m.late;
            continue;
        }
        if (auto it = byRuntime.find(r.correlationId); it != byRuntime.end()) {
            place(it->second, r);
            continue;
        }
        if (auto it = byDriver.find(r.correlationId); it != byDriver.end()) {
            place(it->second, r);
            continue;
        }
        if (auto s = byOrder.find({r.deviceId, r.streamId}); s != byOrder.end()) {
            ordered[s->first].push_back(&r);
            continue;
        }
        ++m.unmatched;
    }
    for (auto& [key, list] : ordered) {
        std::vector<uint32_t>& calls = byOrder[key];
        std::stable_sort(calls.begin(), calls.end(),
                         [&](uint32_t a, uint32_t b) { return issues[a].order < issues[b].order; });
        // What ended before the stream's first call began is not its work: the backend's own preparation.
        const int64_t firstCall = issues[calls.front()].order;
        const auto before = std::remove_if(list.begin(), list.end(), [&](const CuptiRecord* r) {
            return std::max(r->start, r->end) + hostMinusCupti < firstCall;
        });
        m.unmatched += size_t(list.end() - before);
        list.erase(before, list.end());
        std::stable_sort(list.begin(), list.end(), [](const CuptiRecord* a, const CuptiRecord* b) {
            return a->correlationId < b->correlationId;
        });
        size_t distinct = 0;
        for (size_t k = 0; k < list.size(); ++k)
            distinct += k == 0 || list[k]->correlationId != list[k - 1]->correlationId;
        if (distinct != calls.size()) {
            m.unmatched += list.size();
            continue;
        }
        size_t call = 0;
        for (size_t k = 0; k < list.size(); ++k) {
            if (k > 0 && list[k]->correlationId != list[k - 1]->correlationId)
                ++call;
            place(calls[call], *list[k]);
        }
    }
    for (auto& list : m.times)
        std::sort(list.begin(), list.end(), [](const CuptiSpanTime& a, const CuptiSpanTime& b) {
            return a.start != b.start ? a.start < b.start : a.end < b.end;
        });
    return m;
}

std::string cuptiCaptureToJson(const CuptiCapture& c)
{
    nlohmann::ordered_json j;
    j["format"] = "streamscope-cupti-capture";
    j["version"] = 1;
    j["host_minus_cupti_ns"] = c.hostMinusCupti;
    j["offset_error_ns"] = c.offsetErrorNs;
    if (c.timedEnd != INT64_MAX)
        j["timed_end_ns"] = c.timedEnd;
    auto issues = nlohmann::ordered_json::array();
    for (size_t i = 0; i < c.issues.size(); ++i) {
        nlohmann::ordered_json o;
        o["runtime_id"] = c.issues[i].runtimeId;
        o["driver_id"] = c.issues[i].driverId;
        if (i < c.issueApiStart.size())
            o["api_start"] = c.issueApiStart[i];
        if (i < c.issueApiEnd.size())
            o["api_end"] = c.issueApiEnd[i];
        if (i < c.issueNames.size())
            o["name"] = c.issueNames[i];
        issues.push_back(std::move(o));
    }
    j["issues"] = std::move(issues);
    auto records = nlohmann::ordered_json::array();
    for (const auto& r : c.records) {
        nlohmann::ordered_json o;
        o["kind"] = std::string(toString(r.kind));
        o["correlation_id"] = r.correlationId;
        o["device"] = r.deviceId;
        o["stream"] = r.streamId;
        o["start"] = r.start;
        o["end"] = r.end;
        if (r.graphNodeId)
            o["graph_node_id"] = r.graphNodeId;
        if (r.graphId)
            o["graph_id"] = r.graphId;
        if (r.bytes)
            o["bytes"] = r.bytes;
        if (!r.name.empty())
            o["name"] = r.name;
        records.push_back(std::move(o));
    }
    j["records"] = std::move(records);
    return j.dump(1) + "\n";
}

Result<CuptiCapture> parseCuptiCapture(const std::string& text, const std::string& file)
{
    const auto j = nlohmann::json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_object())
        return Error{file, {}, "not a JSON object"};
    if (j.value("format", std::string()) != "streamscope-cupti-capture")
        return Error{file, "/format", "expected \"streamscope-cupti-capture\""};
    CuptiCapture c;
    try {
        c.hostMinusCupti = j.at("host_minus_cupti_ns").get<int64_t>();
        c.offsetErrorNs = j.value("offset_error_ns", int64_t(0));
        c.timedEnd = j.value("timed_end_ns", INT64_MAX);
        const auto& issues = j.at("issues");
        for (size_t i = 0; i < issues.size(); ++i) {
            const auto& o = issues[i];
            c.issues.push_back({o.at("runtime_id").get<uint32_t>(), o.at("driver_id").get<uint32_t>()});
            c.issueApiStart.push_back(o.value("api_start", int64_t(-1)));
            c.issueApiEnd.push_back(o.value("api_end", int64_t(-1)));
            c.issueNames.push_back(o.value("name", std::string()));
        }
        const auto& records = j.at("records");
        for (size_t i = 0; i < records.size(); ++i) {
            const auto& o = records[i];
            CuptiRecord r;
            const auto kind = detail::lookup(kRecordKinds, o.at("kind").get<std::string>());
            if (!kind)
                return Error{file, "/records/" + std::to_string(i) + "/kind", "unknown record kind"};
            r.kind = *kind;
            r.correlationId = o.at("correlation_id").get<uint32_t>();
            r.deviceId = o.value("device", 0u);
            r.streamId = o.value("stream", 0u);
            r.start = o.at("start").get<int64_t>();
            r.end = o.at("end").get<int64_t>();
            r.graphNodeId = o.value("graph_node_id", uint64_t(0));
            r.graphId = o.value("graph_id", 0u);
            r.bytes = o.value("bytes", int64_t(0));
            r.name = o.value("name", std::string());
            c.records.push_back(std::move(r));
        }
    } catch (const nlohmann::json::exception& e) {
        return Error{file, {}, std::string("malformed CUPTI capture: ") + e.what()};
    }
    return c;
}

} // namespace streamscope
