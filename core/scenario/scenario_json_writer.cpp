// Scenario -> JSON: the form parseScenario reads back to an equal scenario, fields in the order of docs/SCENARIO.md.
#include "scenario_json_internal.h"

#include "expect.h"

namespace streamscope {

namespace {

using scenario_json::isProblemSizeKernel;
using scenario_json::kernelNeedsGrid;
using scenario_json::kFormat;
using scenario_json::OrderedJson;
using scenario_json::parseDecimal;

OrderedJson dimToJson(const Dim3& d)
{
    if (d.y == 1 && d.z == 1)
        return d.x;
    if (d.z == 1)
        return OrderedJson::array({d.x, d.y});
    return OrderedJson::array({d.x, d.y, d.z});
}

OrderedJson opToJson(const Op& op, const Op* graph)
{
    OrderedJson j;
    j["op"] = opName(op);
    if (!op.name.empty())
        j["name"] = op.name;
    // Graph nodes inherit the graph's stream; a different one is written so that validation reports it.
    const auto writeStream = [&] {
        if (!graph || (!op.stream.empty() && op.stream != graph->stream))
            j["stream"] = op.stream;
    };
    switch (op.kind) {
    case OpKind::Kernel:
        writeStream();
        j["kernel"] = toString(op.kernel);
        if (op.gridGiven || kernelNeedsGrid(op.kernel))
            j["grid"] = dimToJson(op.grid);
        if (op.block != Dim3{256, 1, 1})
            j["block"] = dimToJson(op.block);
        if (op.kernel == KernelKind::Spin)
            j["duration_us"] = op.durationUs;
        if (isProblemSizeKernel(op.kernel))
            j["size"] = op.size;
        if (op.sharedBytes != 0)
            j["shared_bytes"] = op.sharedBytes;
        break;
    case OpKind::Memcpy:
        writeStream();
        j["kind"] = toString(op.copy);
        j["bytes"] = op.bytes;
        if (!op.pinned && (op.copy == CopyKind::H2D || op.copy == CopyKind::D2H))
            j["host"] = "pageable";
        if (op.copy == CopyKind::P2P)
            j["dst_device"] = op.dstDevice;
        break;
    case OpKind::Memset:
        writeStream();
        j["bytes"] = op.bytes;
        break;
    case OpKind::Record:
    case OpKind::Wait:
        writeStream();
        j["event"] = op.event;
        break;
    case OpKind::HostFunc:
        writeStream();
        if (op.durationUs != 0)
            j["duration_us"] = op.durationUs;
        break;
    case OpKind::StreamSync: writeStream(); break;
    case OpKind::EventSync: j["event"] = op.event; break;
    case OpKind::DeviceSync: break;
    case OpKind::HostWork: j["duration_us"] = op.durationUs; break;
    case OpKind::Graph: {
        writeStream();
        OrderedJson nodes = OrderedJson::array();
        for (const auto& node : op.ops)
            nodes.push_back(opToJson(node, &op));
        j["ops"] = std::move(nodes);
        break;
    }
    case OpKind::Malloc: j["bytes"] = op.bytes; break;
    case OpKind::Free:
        if (op.bytes != 0)
            j["bytes"] = op.bytes;
        break;
    case OpKind::Collective:
        writeStream();
        j["bytes"] = op.bytes;
        if (op.algorithm != CollectiveAlgorithm::Auto)
            j["algorithm"] = toString(op.algorithm);
        if (op.collective == CollectiveKind::Broadcast && op.root != 0)
            j["root"] = op.root;
        if (op.collective == CollectiveKind::Send || op.collective == CollectiveKind::Recv) {
            if (op.peerOffset != 0)
                j["peer"] = op.peerOffset > 0 ? "next" : "previous";
            else
                j["peer"] = op.peer;
        }
        break;
    }
    return j;
}

OrderedJson expectationJson(const Expectation& e)
{
    OrderedJson j;
    if (!e.id.empty())
        j["id"] = e.id;
    j["metric"] = e.metric;
    if (!e.streams.empty())
        j["streams"] = e.streams;
    if (!e.spans.empty())
        j["spans"] = e.spans;
    if (!e.kinds.empty())
        j["kinds"] = e.kinds;
    if (e.device != -1)
        j["device"] = e.device;
    j["op"] = e.op;
    j["value"] = e.value;
    if (!e.why.empty())
        j["why"] = e.why;
    if (e.key)
        j["key"] = true;
    return j;
}

OrderedJson expectationsJson(const std::vector<Expectation>& list)
{
    OrderedJson a = OrderedJson::array();
    for (const auto& e : list)
        a.push_back(expectationJson(e));
    return a;
}

std::string dumpOrdered(const OrderedJson& j, int indent)
{
    return j.dump(indent, ' ', false, OrderedJson::error_handler_t::replace);
}

} // namespace

std::string scenarioToJson(const Scenario& s)
{
    OrderedJson j;
    j["format"] = kFormat;
    j["version"] = s.version;
    if (!s.id.empty())
        j["id"] = s.id;
    if (!s.title.empty())
        j["title"] = s.title;
    if (!s.description.empty())
        j["description"] = s.description;
    if (!s.effect.empty())
        j["effect"] = s.effect;
    if (!s.devices.empty()) {
        OrderedJson devices = OrderedJson::array();
        for (const auto& d : s.devices) {
            OrderedJson dj;
            dj["index"] = d.index;
            if (!d.profile.empty())
                dj["profile"] = d.profile;
            devices.push_back(std::move(dj));
        }
        j["devices"] = std::move(devices);
    }
    OrderedJson streams = OrderedJson::array();
    for (const auto& st : s.streams) {
        OrderedJson sj;
        sj["name"] = st.name;
        if (st.device != 0)
            sj["device"] = st.device;
        if (st.kind != StreamKind::Blocking)
            sj["kind"] = toString(st.kind);
        if (st.priority != 0)
            sj["priority"] = st.priority;
        streams.push_back(std::move(sj));
    }
    j["streams"] = std::move(streams);
    OrderedJson threads = OrderedJson::array();
    for (const auto& t : s.threads) {
        OrderedJson tj;
        tj["name"] = t.name;
        if (t.device != 0)
            tj["device"] = t.device;
        if (t.repeat != 1)
            tj["repeat"] = t.repeat;
        if (t.workers != 1)
            tj["workers"] = t.workers;
        OrderedJson ops = OrderedJson::array();
        for (const auto& op : t.ops)
            ops.push_back(opToJson(op, nullptr));
        tj["ops"] = std::move(ops);
        threads.push_back(std::move(tj));
    }
    j["threads"] = std::move(threads);

    OrderedJson run = OrderedJson::object();
    if (s.run.warmup != 0)
        run["warmup"] = s.run.warmup;
    if (s.run.iterations != 1)
        run["iterations"] = s.run.iterations;
    if (!s.run.env.empty()) {
        OrderedJson env = OrderedJson::object();
        for (const auto& [name, value] : s.run.env) {
            int64_t n = 0;
            // CUDA_DEVICE_MAX_CONNECTIONS reads best as the number it is; other values stay text.
            if (name == "CUDA_DEVICE_MAX_CONNECTIONS" && parseDecimal(value, n) && std::to_string(n) == value)
                env[name] = n;
            else
                env[name] = value;
        }
        run["env"] = std::move(env);
    }
    if (s.run.timing != TimingMode::Auto)
        run["timing"] = std::string(toString(s.run.timing));
    if (!run.empty())
        j["run"] = std::move(run);
    if (s.ranks.given()) {
        OrderedJson ranks;
        ranks["count"] = s.ranks.count;
        if (s.ranks.perHost != 0)
            ranks["per_host"] = s.ranks.perHost;
        if (s.ranks.link != RankLink::NvLink)
            ranks["link"] = toString(s.ranks.link);
        if (s.ranks.bindDeviceByLocalRank)
            ranks["device"] = "local-rank";
        if (!s.ranks.overrides.empty()) {
            OrderedJson overrides = OrderedJson::array();
            for (const auto& o : s.ranks.overrides) {
                OrderedJson oj;
                oj["ranks"] = o.ranks;
                OrderedJson set = OrderedJson::parse(o.patchJson, nullptr, false);
                oj["set"] = set.is_discarded() ? OrderedJson(o.patchJson) : std::move(set);
                if (!o.why.empty())
                    oj["why"] = o.why;
                overrides.push_back(std::move(oj));
            }
            ranks["overrides"] = std::move(overrides);
        }
        j["ranks"] = std::move(ranks);
    }
    if (!s.expect.empty())
        j["expect"] = expectationsJson(s.expect);
    if (!s.variants.empty()) {
        OrderedJson variants = OrderedJson::array();
        for (const auto& v : s.variants) {
            OrderedJson vj;
            vj["id"] = v.id;
            if (!v.title.empty())
                vj["title"] = v.title;
            if (!v.description.empty())
                vj["description"] = v.description;
            if (!v.patchJson.empty()) {
                // Text that is not a JSON object is kept as a string, so that validation points at it.
                OrderedJson set = OrderedJson::parse(v.patchJson, nullptr, false);
                vj["set"] = set.is_discarded() ? OrderedJson(v.patchJson) : std::move(set);
            }
            if (v.hasExpect)
                vj["expect"] = expectationsJson(v.expect);
            if (!v.effect.empty())
                vj["effect"] = v.effect;
            variants.push_back(std::move(vj));
        }
        j["variants"] = std::move(variants);
    }
    return dumpOrdered(j, 2) + "\n";
}

std::string expectationToJson(const Expectation& e)
{
    return dumpOrdered(expectationJson(e), -1);
}

} // namespace streamscope