// Spreading work over streams (core/scenario/stream_spread.h), the rule the streams sweep and the quick controls'
// streams-per-thread knob share: what a chain is, what moves with it and what stays.
#include "stream_spread.h"

#include <QTest>

#include <string>
#include <vector>

using namespace streamscope;

namespace {

Op op(OpKind kind, const std::string& stream, const std::string& event = {})
{
    Op o;
    o.kind = kind;
    o.stream = stream;
    o.event = event;
    return o;
}

Scenario scenario()
{
    Scenario s;
    s.streams = {{"legacy", 0, StreamKind::LegacyDefault},
                 {"a", 0, StreamKind::Blocking},
                 {"b", 0, StreamKind::NonBlocking},
                 {"c", 1, StreamKind::NonBlocking}};
    return s;
}

std::vector<std::string> streamsOf(const std::vector<Op>& ops)
{
    std::vector<std::string> out;
    for (const auto& o : ops)
        out.push_back(o.stream);
    return out;
}

} // namespace

class TestStreamSpread : public QObject {
    Q_OBJECT
private slots:
    void onlyCreatedStreamsAreSpread()
    {
        QVERIFY(isCreatedStream(StreamKind::Blocking));
        QVERIFY(isCreatedStream(StreamKind::NonBlocking));
        QVERIFY(!isCreatedStream(StreamKind::LegacyDefault));
        QVERIFY(!isCreatedStream(StreamKind::PerThreadDefault));
    }

    // A launch into another stream starts a chain; consecutive launches into one stream stay one chain.
    void launchesIntoAnotherStreamStartAChain()
    {
        std::vector<Op> ops{op(OpKind::Kernel, "a"), op(OpKind::Memcpy, "a"), op(OpKind::Kernel, "b"),
                            op(OpKind::Kernel, "a")};
        QCOMPARE(spreadChains(scenario(), ops, roundRobin({"x", "y", "z"})), size_t(3));
        QCOMPARE(streamsOf(ops), (std::vector<std::string>{"x", "x", "y", "z"}));
    }

    // A record, wait or sync joins the chain its stream is in, even after work in another stream: the record still
    // records after the kernel it follows in its stream.
    void recordsWaitsAndSyncsStayWithTheirStreamsChain()
    {
        std::vector<Op> ops{op(OpKind::Kernel, "a"), op(OpKind::Kernel, "b"), op(OpKind::Record, "a", "e"),
                            op(OpKind::Wait, "b", "e"), op(OpKind::StreamSync, "a")};
        QCOMPARE(spreadChains(scenario(), ops, roundRobin({"x", "y", "z"})), size_t(2));
        QCOMPARE(streamsOf(ops), (std::vector<std::string>{"x", "y", "x", "y", "x"}));
        // A wait in a stream with no chain yet starts one.
        std::vector<Op> first{op(OpKind::Wait, "b", "e"), op(OpKind::Kernel, "b")};
        QCOMPARE(spreadChains(scenario(), first, roundRobin({"x", "y"})), size_t(1));
        QCOMPARE(streamsOf(first), (std::vector<std::string>{"x", "x"}));
    }

    // Default-stream work, host work and device syncs stay; graph nodes go with their graph.
    void defaultStreamsAndHostOpsStayGraphNodesFollow()
    {
        Op graph = op(OpKind::Graph, "a");
        graph.ops = {op(OpKind::Kernel, "a"), op(OpKind::Kernel, "")};
        std::vector<Op> ops{op(OpKind::Kernel, "legacy"), op(OpKind::HostWork, ""), graph, op(OpKind::DeviceSync, "")};
        QCOMPARE(spreadChains(scenario(), ops, roundRobin({"x"})), size_t(1));
        QCOMPARE(streamsOf(ops), (std::vector<std::string>{"legacy", "", "x", ""}));
        QCOMPARE(ops[2].ops[0].stream, std::string("x"));
        QCOMPARE(ops[2].ops[1].stream, std::string("x"));
    }

    // The dealer learns each chain's stream and device, in issue order (the sweep deals per device).
    void theDealerSeesEachChainsStreamAndDevice()
    {
        std::vector<Op> ops{op(OpKind::Kernel, "a"), op(OpKind::Kernel, "c"), op(OpKind::Kernel, "b")};
        std::vector<std::pair<std::string, int>> seen;
        spreadChains(scenario(), ops, [&](const std::string& stream, int device) {
            seen.emplace_back(stream, device);
            return stream + "'";
        });
        QCOMPARE(seen, (std::vector<std::pair<std::string, int>>{{"a", 0}, {"c", 1}, {"b", 0}}));
        QCOMPARE(streamsOf(ops), (std::vector<std::string>{"a'", "c'", "b'"}));
    }
};

QTEST_GUILESS_MAIN(TestStreamSpread)
#include "tst_stream_spread.moc"
