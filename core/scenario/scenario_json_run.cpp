// Scenario JSON reading: run settings, the limit on issued operations, expectations and warnings
// (scenario_json_internal.h).
#include "scenario_json_internal.h"

#include "diagnostics.h"
#include "expect.h"
#include "json_strict.h"

#include <cmath>

namespace streamscope::scenario_json {

void ScenarioReader::readRun(const Json& root)
{
    const Json* run = find(root, "run");
    if (!run)
        return;
    expectObject(*run, "/run");
    checkFields(*run, "/run", kRunFields);
    RunSettings& settings = m_scenario.run;
    if (const Json* w = find(*run, "warmup"))
        settings.warmup = int(readIntIn(*w, "/run/warmup", "warmup", 0, std::numeric_limits<int>::max()));
    if (const Json* i = find(*run, "iterations"))
        settings.iterations = int(readIntIn(*i, "/run/iterations", "iterations", 1, std::numeric_limits<int>::max()));
    if (const Json* t = find(*run, "timing")) {
        if (!t->is_string())
            fail("/run/timing", "expected a string (auto, cupti, events or both), got " + typeName(*t));
        const auto mode = timingModeFromString(t->get<std::string>());
        if (!mode)
            fail("/run/timing",
                 "unknown timing " + jsonQuoted(t->get<std::string>()) + ": expected auto, cupti, events or both");
        settings.timing = *mode;
    }
    if (const Json* env = find(*run, "env")) {
        expectObject(*env, "/run/env");
        for (const auto& item : env->items()) {
            const std::string& name = item.key();
            const std::string p = child("/run/env", name);
            if (name.empty() || name.find('=') != std::string::npos || name.find('\0') != std::string::npos)
                fail(p, "not an environment variable name: " + jsonQuoted(name));
            std::string value;
            if (item.value().is_string())
                value = item.value().get<std::string>();
            else if (item.value().is_number_integer())
                value = std::to_string(readInt(item.value(), p));
            else
                fail(p, "expected a string or an integer, got " + typeName(item.value()));
            if (value.find('\0') != std::string::npos)
                fail(p, "an environment value cannot hold a NUL character");
            if (name == "CUDA_DEVICE_MAX_CONNECTIONS") {
                int64_t n = 0;
                if (!parseDecimal(value, n) || n < 1 || n > kMaxConnections)
                    fail(p,
                         "CUDA_DEVICE_MAX_CONNECTIONS must be an integer from 1 to " + std::to_string(kMaxConnections)
                             + ", got " + jsonQuoted(value));
            }
            settings.env[name] = std::move(value);
        }
    }
}

// Same count as countOperations() (graph nodes and repeats included; workers share the repeat tasks), plus
// the warm-up iterations, in arithmetic that saturates instead of overflowing on hostile counts.
void ScenarioReader::checkIssuedCount() const
{
    int64_t perIteration = 0;
    for (const auto& t : m_scenario.threads) {
        int64_t perPass = 0;
        for (const auto& op : t.ops)
            perPass = saturatingAdd(perPass, 1 + int64_t(op.ops.size()));
        // A repetition without ops still costs the runner a pass: counted as one, so that a huge repeat of
        // nothing cannot keep a run busy for hours.
        perPass = std::max<int64_t>(perPass, 1);
        perIteration = saturatingAdd(perIteration, saturatingMul(perPass, t.repeat));
    }
    const int64_t iterations = int64_t(m_scenario.run.iterations) + m_scenario.run.warmup;
    const int64_t issued = saturatingMul(perIteration, iterations);
    if (issued > m_limits.maxIssued) {
        const std::string count =
            issued == std::numeric_limits<int64_t>::max() ? std::string("more than 2^63") : std::to_string(issued);
        fail("",
             "the run would issue " + count + " operations (ops x repeat x (warm-up + iterations)); the limit is "
                 + std::to_string(m_limits.maxIssued));
    }
}

std::vector<std::string> ScenarioReader::readStringList(const Json& v, const std::string& path) const
{
    expectArray(v, path);
    std::vector<std::string> out;
    out.reserve(v.size());
    for (size_t i = 0; i < v.size(); ++i)
        out.push_back(readString(v[i], child(path, i)));
    return out;
}

Expectation ScenarioReader::readExpectation(const Json& v, const std::string& path,
                                            const std::set<std::string>& streams) const
{
    expectObject(v, path);
    checkFields(v, path, kExpectFields);
    Expectation e;
    e.id = optionalString(v, "id", path);
    e.metric = readName(required(v, "metric", path), child(path, "metric"), "metric");
    if (const Json* s = find(v, "streams"))
        e.streams = readStringList(*s, child(path, "streams"));
    if (const Json* s = find(v, "spans"))
        e.spans = readStringList(*s, child(path, "spans"));
    if (const Json* k = find(v, "kinds"))
        e.kinds = readStringList(*k, child(path, "kinds"));
    if (const Json* d = find(v, "device"))
        e.device = int(readIntIn(*d, child(path, "device"), "device", 0, m_limits.maxDevices - 1));
    if (const Json* o = find(v, "op")) {
        e.op = readString(*o, child(path, "op"));
        if (std::find(kCompareOps.begin(), kCompareOps.end(), e.op) == kCompareOps.end())
            fail(child(path, "op"),
                 "unknown comparison " + jsonQuoted(e.op) + " (one of: " + joinQuoted(kCompareOps) + ")");
    }
    e.value = readNumber(required(v, "value", path, "the number the metric is compared with"), child(path, "value"));
    e.why = optionalString(v, "why", path);
    if (const Json* k = find(v, "key"))
        e.key = readBool(*k, child(path, "key"));
    if (const std::string problem = validateExpectation(e); !problem.empty())
        fail(path, problem);
    for (size_t i = 0; i < e.streams.size(); ++i) {
        if (!streams.count(e.streams[i]))
            fail(child(child(path, "streams"), i),
                 "unknown stream " + jsonQuoted(e.streams[i]) + streamHint(e.streams[i], streams));
    }
    return e;
}

std::vector<Expectation> ScenarioReader::readExpectations(const Json& v, const std::string& path,
                                                          const std::set<std::string>& streams) const
{
    expectArray(v, path);
    std::vector<Expectation> out;
    std::unordered_map<std::string, size_t> ids;
    for (size_t i = 0; i < v.size(); ++i) {
        const std::string p = child(path, i);
        out.push_back(readExpectation(v[i], p, streams));
        const std::string& id = out.back().id;
        if (id.empty())
            continue;
        if (auto [it, inserted] = ids.emplace(id, i); !inserted)
            fail(child(p, "id"),
                 "duplicate expectation id " + jsonQuoted(id) + " (also at " + child(path, it->second) + ")");
    }
    return out;
}

void ScenarioReader::warn(std::string path, std::string message, int64_t op)
{
    m_warnings.push_back({op < 0 ? m_opCount : op, Warning{m_file, std::move(path), std::move(message)}});
}

// CUDA makes a wait on a never-recorded event a no-op; legal, but almost always a mistake in a scenario.
void ScenarioReader::warnUnrecordedEvents()
{
    for (const auto& use : m_eventUses) {
        if (m_eventRecorded[size_t(use.event)])
            continue;
        const std::string& name = m_scenario.events[size_t(use.event)];
        if (use.kind == OpKind::Wait)
            warn(use.path, "event " + jsonQuoted(name) + " is waited on but never recorded: the wait does nothing",
                 use.op);
        else
            warn(use.path,
                 "event " + jsonQuoted(name) + " is synchronized on but never recorded: the sync returns at once",
                 use.op);
    }
}

} // namespace streamscope::scenario_json
