// Scenario JSON of a job of several ranks: collective ops, the "ranks" section (count, hosts, link, device binding,
// per-rank overrides), and the scenario one rank runs (scenario_json.h, docs/SCENARIO.md "Ranks").
#include "scenario_json_internal.h"

namespace streamscope::scenario_json {

void ScenarioReader::readCollective(const Json& v, const std::string& path, Op& op, const ThreadSpec& thread)
{
    readStream(v, path, op, thread, nullptr);
    op.bytes = readBytes(required(v, "bytes", path, "the data a collective moves"), child(path, "bytes"));
    if (const Json* a = find(v, "algorithm")) {
        const std::string name = readString(*a, child(path, "algorithm"));
        const auto parsed = collectiveAlgorithmFromString(name);
        if (!parsed)
            fail(child(path, "algorithm"),
                 "unknown algorithm " + jsonQuoted(name)
                     + hint(name, std::vector<std::string>{"ring", "tree", "auto"}));
        op.algorithm = *parsed;
        const bool treeAllowed =
            op.collective == CollectiveKind::AllReduce || op.collective == CollectiveKind::Broadcast;
        if (op.algorithm == CollectiveAlgorithm::Tree && !treeAllowed)
            fail(child(path, "algorithm"),
                 "\"tree\" applies only to all-reduce and broadcast (NCCL runs " + std::string(toString(op.collective))
                     + " as a ring)");
        const bool p2p = op.collective == CollectiveKind::Send || op.collective == CollectiveKind::Recv;
        if (p2p && op.algorithm != CollectiveAlgorithm::Auto)
            fail(child(path, "algorithm"), "\"algorithm\" does not apply to send and recv: they use one link");
    }
    if (op.collective == CollectiveKind::Broadcast) {
        if (const Json* r = find(v, "root"))
            op.root = int(readIntIn(*r, child(path, "root"), "root", 0, kMaxRankCount - 1));
    }
    if (op.collective == CollectiveKind::Send || op.collective == CollectiveKind::Recv) {
        const std::string p = child(path, "peer");
        const Json& peer =
            required(v, "peer", path, "the rank to send to or receive from: a rank, \"next\" or \"previous\"");
        if (peer.is_string()) {
            const std::string s = peer.get<std::string>();
            if (s == "next")
                op.peerOffset = 1;
            else if (s == "previous")
                op.peerOffset = -1;
            else
                fail(p, "peer must be a rank, \"next\" or \"previous\", got " + jsonQuoted(s));
        } else {
            op.peer = int(readIntIn(peer, p, "peer", 0, kMaxRankCount - 1));
        }
    }
}

void ScenarioReader::readRanks(const Json& root)
{
    const Json* ranks = find(root, "ranks");
    if (!ranks)
        return;
    expectObject(*ranks, "/ranks");
    checkFields(*ranks, "/ranks", kRanksFields);
    RankSpec& spec = m_scenario.ranks;
    spec.count = int(readIntIn(required(*ranks, "count", "/ranks", "the number of ranks of a run without a launcher"),
                               "/ranks/count", "count", 1, kMaxRankCount));
    if (const Json* h = find(*ranks, "per_host"))
        spec.perHost = int(readIntIn(*h, "/ranks/per_host", "per_host", 1, kMaxRankCount));
    if (const Json* l = find(*ranks, "link")) {
        const std::string name = readString(*l, "/ranks/link");
        const auto parsed = rankLinkFromString(name);
        if (!parsed)
            fail("/ranks/link",
                 "unknown link " + jsonQuoted(name) + hint(name, std::vector<std::string>{"nvlink", "pcie"})
                     + " (the GPUs of one host; hosts are connected by InfiniBand)");
        spec.link = *parsed;
    }
    if (const Json* d = find(*ranks, "device")) {
        const std::string name = readString(*d, "/ranks/device");
        if (name == "local-rank")
            spec.bindDeviceByLocalRank = true;
        else if (name != "scenario")
            fail("/ranks/device",
                 "\"device\" must be \"local-rank\" (each rank uses GPU <local rank>) or \"scenario\" (the devices "
                 "the scenario names), got "
                     + jsonQuoted(name));
    }
    if (spec.bindDeviceByLocalRank) {
        for (size_t t = 0; t < m_scenario.threads.size(); ++t)
            if (m_scenario.threads[t].device != 0)
                fail(child(child("/threads", t), "device"),
                     "with \"ranks\": {\"device\": \"local-rank\"} a rank's threads use device 0, which becomes GPU "
                     "<local rank>");
        for (size_t s = 0; s < m_scenario.streams.size(); ++s)
            if (m_scenario.streams[s].device != 0)
                fail(child(child("/streams", s), "device"),
                     "with \"ranks\": {\"device\": \"local-rank\"} a rank's streams are on device 0, which becomes "
                     "GPU <local rank>");
    }
    checkCollectiveRanks();
    if (const Json* o = find(*ranks, "overrides")) {
        expectArray(*o, "/ranks/overrides");
        // Each override is checked against a copy of the whole scenario: at most one per rank keeps that bounded.
        if (o->size() > size_t(kMaxRankCount))
            fail("/ranks/overrides",
                 "at most " + std::to_string(kMaxRankCount) + " overrides, not " + std::to_string(o->size()));
        for (size_t i = 0; i < o->size(); ++i) {
            const std::string path = child("/ranks/overrides", i);
            const Json& item = (*o)[i];
            expectObject(item, path);
            checkFields(item, path, kRankOverrideFields);
            RankOverride ov;
            const Json& list = required(item, "ranks", path, "the ranks it applies to");
            expectArray(list, child(path, "ranks"));
            if (list.empty())
                fail(child(path, "ranks"), "an override applies to at least one rank");
            for (size_t r = 0; r < list.size(); ++r)
                ov.ranks.push_back(
                    int(readIntIn(list[r], child(child(path, "ranks"), r), "a rank", 0, spec.count - 1)));
            const Json& set = required(item, "set", path, "the changes, as a variant's \"set\"");
            expectObject(set, child(path, "set"));
            checkSetPointers(set, child(path, "set"));
            for (const auto& entry : set.items())
                if (entry.key() == "/ranks" || entry.key().starts_with("/ranks/"))
                    fail(child(child(path, "set"), entry.key()), "a rank override cannot change the ranks");
            ov.why = optionalString(item, "why", path);
            ov.patchJson = dumpJson(set);
            // The scenario as each of its ranks runs it must be valid too: check it now, not when the job runs.
            // Its expectations and variants name the job's rows ("rank R · name"): checked with the job, not here.
            Json patched = root;
            patched.erase("ranks");
            patched.erase("expect");
            patched.erase("variants");
            applySet(patched, set, child(path, "set"), m_file, m_limits);
            try {
                (void)ScenarioReader(m_file, m_limits).read(patched);
            } catch (ReadFailure& failure) {
                failure.error.message += " (with " + path + " applied)";
                throw;
            }
            spec.overrides.push_back(std::move(ov));
        }
    }
}

// Broadcast roots and send/recv peers that name a rank must be ranks of the job.
void ScenarioReader::checkCollectiveRanks() const
{
    const int count = m_scenario.ranks.count;
    for (size_t t = 0; t < m_scenario.threads.size(); ++t)
        for (size_t o = 0; o < m_scenario.threads[t].ops.size(); ++o) {
            const Op& op = m_scenario.threads[t].ops[o];
            if (op.kind != OpKind::Collective)
                continue;
            const std::string path = child(child(child("/threads", t), "ops"), o);
            if (op.collective == CollectiveKind::Broadcast && op.root >= count)
                fail(child(path, "root"),
                     "root " + std::to_string(op.root) + " is not a rank of this job of " + std::to_string(count)
                         + " ranks (/ranks/count)");
            if (op.peer >= count)
                fail(child(path, "peer"),
                     "peer " + std::to_string(op.peer) + " is not a rank of this job of " + std::to_string(count)
                         + " ranks (/ranks/count)");
        }
}

} // namespace streamscope::scenario_json

namespace streamscope {

using namespace scenario_json;

Result<Scenario> scenarioForRank(const Scenario& scenario, int rank, int localRank, const std::string& file)
{
    if (scenario.ranks.overrides.empty() && !scenario.ranks.bindDeviceByLocalRank)
        return scenario;
    try {
        Json root = parseJsonText(scenarioToJson(scenario), file, 64);
        root.erase("ranks");
        root.erase("expect");
        root.erase("variants");
        ScenarioLimits limits;
        limits.maxBytes = std::numeric_limits<size_t>::max();
        const auto& overrides = scenario.ranks.overrides;
        for (size_t i = 0; i < overrides.size(); ++i) {
            const auto& ov = overrides[i];
            if (std::find(ov.ranks.begin(), ov.ranks.end(), rank) == ov.ranks.end())
                continue;
            applySet(root, Json::parse(ov.patchJson), "/ranks/overrides/" + std::to_string(i) + "/set", file, limits);
        }
        ScenarioReadResult read = ScenarioReader(file, limits).read(root);
        Scenario out = std::move(read.scenario);
        out.ranks = scenario.ranks;
        out.ranks.overrides.clear();
        out.ranks.bindDeviceByLocalRank = false; // applied below: the rank's scenario names its own GPU
        out.expect = scenario.expect;
        out.variants = scenario.variants;
        if (scenario.ranks.bindDeviceByLocalRank && localRank != 0) {
            // The rank's device 0 is GPU <local rank> (cudaSetDevice(local rank), as launchers expect).
            for (auto& d : out.devices)
                d.index += localRank;
            for (auto& s : out.streams)
                s.device += localRank;
            for (auto& t : out.threads)
                t.device += localRank;
        }
        return out;
    } catch (const ReadFailure& failure) {
        Error e = failure.error;
        e.message += " (on rank " + std::to_string(rank) + ")";
        return e;
    } catch (const std::exception& e) {
        return Error{file, "/ranks", std::string("cannot apply the rank overrides: ") + e.what()};
    }
}

} // namespace streamscope

namespace streamscope {

namespace {

void moveOps(std::vector<Op>& ops, const std::string& prefix, int streamBase, int device,
             const std::unordered_map<int, int>& eventOf)
{
    for (Op& op : ops) {
        if (!op.stream.empty())
            op.stream = prefix + op.stream;
        if (op.streamIndex >= 0)
            op.streamIndex += streamBase;
        if (!op.event.empty())
            op.event = prefix + op.event;
        if (op.eventIndex >= 0)
            op.eventIndex = eventOf.at(op.eventIndex);
        if (op.dstDevice >= 0)
            op.dstDevice += device;
        moveOps(op.ops, prefix, streamBase, device, eventOf);
    }
}

} // namespace

Result<Scenario> expandJob(const Scenario& scenario, int worldSize, const std::string& file)
{
    if (worldSize < 1 || worldSize > kMaxRankCount)
        return Error{file, "/ranks/count",
                     "a job has 1 to " + std::to_string(kMaxRankCount) + " ranks, not " + std::to_string(worldSize)};
    // Every rank is simulated in one process: the whole job must stay within what one run may issue and hold,
    // checked as each rank is built, before the next is (a rank's overrides may change its repeats).
    const ScenarioLimits limits;
    int64_t issued = 0, threads = 0, streams = 0;
    std::vector<Scenario> ranks;
    int devicesPerRank = 1;
    for (int r = 0; r < worldSize; ++r) {
        // Each rank has its own simulated GPUs, so the device binding changes nothing here.
        auto rs = scenarioForRank(scenario, r, 0, file);
        if (!rs)
            return rs.error();
        issued = saturatingAdd(issued, countOperations(*rs));
        threads += int64_t(rs->threads.size());
        streams += int64_t(rs->streams.size());
        if (issued > limits.maxIssued)
            return Error{file, "/ranks/count",
                         "the job of " + std::to_string(worldSize) + " ranks issues more than "
                             + std::to_string(limits.maxIssued)
                             + " operations in all (the most one simulation issues), from rank " + std::to_string(r)
                             + " on"};
        if (threads > limits.maxThreads || streams > limits.maxStreams)
            return Error{
                file, "/ranks/count",
                "the job of " + std::to_string(worldSize) + " ranks has more than " + std::to_string(limits.maxThreads)
                    + " host threads or " + std::to_string(limits.maxStreams)
                    + " streams in all (the most one simulation holds), from rank " + std::to_string(r) + " on"};
        for (const auto& d : rs->devices)
            devicesPerRank = std::max(devicesPerRank, d.index + 1);
        for (const auto& s : rs->streams)
            devicesPerRank = std::max(devicesPerRank, s.device + 1);
        for (const auto& t : rs->threads)
            devicesPerRank = std::max(devicesPerRank, t.device + 1);
        ranks.push_back(std::move(*rs));
    }
    Scenario job;
    job.id = scenario.id;
    job.title = scenario.title;
    job.description = scenario.description;
    job.effect = scenario.effect;
    job.run = scenario.run;
    job.expect = scenario.expect;
    job.job.worldSize = worldSize;
    job.job.perHost = scenario.ranks.perHost;
    job.job.link = scenario.ranks.link;
    job.job.devicesPerRank = devicesPerRank;
    for (int r = 0; r < worldSize; ++r) {
        Scenario& rs = ranks[size_t(r)];
        const std::string prefix = rankPrefix(r);
        const int device = r * devicesPerRank;
        const int streamBase = int(job.streams.size());
        for (const auto& d : rs.devices)
            job.devices.push_back(DeviceSpec{d.index + device, d.profile});
        for (auto s : rs.streams) {
            s.name = prefix + s.name;
            s.device += device;
            job.streams.push_back(std::move(s));
            job.job.streamRank.push_back(r);
        }
        std::unordered_map<int, int> eventOf;
        for (size_t e = 0; e < rs.events.size(); ++e) {
            eventOf[int(e)] = int(job.events.size());
            job.events.push_back(prefix + rs.events[e]);
        }
        for (size_t t = 0; t < rs.threads.size(); ++t) {
            ThreadSpec th = std::move(rs.threads[t]);
            th.name = prefix + th.name;
            th.device += device;
            moveOps(th.ops, prefix, streamBase, device, eventOf);
            job.threads.push_back(std::move(th));
            job.job.threadRank.push_back(r);
            job.job.localThread.push_back(int(t));
        }
    }
    return job;
}

} // namespace streamscope
