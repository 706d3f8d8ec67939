#include "stream_spread.h"

#include <map>
#include <utility>

namespace streamscope {

bool isCreatedStream(StreamKind kind)
{
    return kind == StreamKind::Blocking || kind == StreamKind::NonBlocking;
}

namespace {

bool startsChain(OpKind k)
{
    return k == OpKind::Kernel || k == OpKind::Memcpy || k == OpKind::Memset || k == OpKind::HostFunc
        || k == OpKind::Graph;
}

bool usesStream(OpKind k)
{
    return startsChain(k) || k == OpKind::Record || k == OpKind::Wait || k == OpKind::StreamSync;
}

// Points `op` and those of its graph nodes that run in `from` (or name no stream) at `to`.
void retarget(Op& op, const std::string& from, const std::string& to)
{
    for (Op& node : op.ops)
        if (node.stream.empty() || node.stream == from)
            retarget(node, from, to);
    op.stream = to;
}

} // namespace

size_t spreadChains(const Scenario& scenario, std::vector<Op>& ops, const ChainDealer& deal)
{
    std::map<std::string, int> deviceOf; // created streams only
    for (const auto& s : scenario.streams)
        if (isCreatedStream(s.kind))
            deviceOf[s.name] = s.device;
    std::map<std::string, std::string> current; // stream -> where the chain it is in now went
    std::string lastStream;                     // stream of the previous stream op
    size_t chains = 0;
    for (Op& op : ops) {
        if (!usesStream(op.kind))
            continue;
        const auto device = deviceOf.find(op.stream);
        if (device == deviceOf.end())
            continue;
        const std::string from = op.stream;
        const bool seen = current.count(from) != 0;
        if (!seen || (startsChain(op.kind) && from != lastStream)) {
            current[from] = deal(from, device->second);
            ++chains;
        }
        lastStream = from;
        retarget(op, from, current[from]);
    }
    return chains;
}

ChainDealer roundRobin(std::vector<std::string> targets)
{
    return [targets = std::move(targets), next = size_t(0)](const std::string&, int) mutable {
        return targets[next++ % targets.size()];
    };
}

} // namespace streamscope
