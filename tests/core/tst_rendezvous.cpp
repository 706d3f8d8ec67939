// The ranks' TCP rendezvous (rendezvous.h) on localhost: where the ranks meet, four ranks as threads sharing bytes,
// waiting for each other and measuring their clock offsets (one host: the true offset is 0), and the failures a
// user meets (a rank that never comes, one that leaves, a port in use, a bad address); then four streamscope-cli
// processes under torchrun's variables meeting at MASTER_PORT + 1. Timeouts are generous: nothing here depends on the
// machine's speed except that a round trip on localhost takes less than a second.
#include "rendezvous.h"
#include "trace_json.h"

#include "cli_process.h"

#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <functional>
#include <map>
#include <thread>

namespace ss = streamscope;
using namespace std::chrono_literals;

namespace {

ss::EnvLookup table(std::map<std::string, std::string> vars)
{
    return [vars = std::move(vars)](const char* name) -> const char* {
        const auto it = vars.find(name);
        return it == vars.end() ? nullptr : it->second.c_str();
    };
}

// A TCP port that was free a moment ago (the kernel's choice for port 0); `holder`, if given, keeps it taken.
int freePort(int* holder = nullptr)
{
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0
        || ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0)
        return 0;
    if (holder) {
        ::listen(fd, 1);
        *holder = fd;
    } else {
        ::close(fd);
    }
    return ntohs(a.sin_port);
}

ss::RendezvousAddress localhost(int port)
{
    return {"127.0.0.1", port, "test"};
}

// Runs `rank(r)` for ranks 0..n-1 on threads of their own; their error messages ("" where it succeeded).
std::vector<std::string> onThreads(int n, const std::function<std::string(int)>& rank)
{
    std::vector<std::string> out(static_cast<size_t>(n));
    std::vector<std::thread> threads;
    for (int r = 0; r < n; ++r)
        threads.emplace_back([&, r] { out[size_t(r)] = rank(r); });
    for (auto& t : threads)
        t.join();
    return out;
}

ss::RendezvousOptions quick(std::chrono::milliseconds timeout)
{
    ss::RendezvousOptions o;
    o.timeout = timeout;
    o.host = "testhost";
    return o;
}

} // namespace

class TestRendezvous : public QObject {
    Q_OBJECT

private slots:
    void addressesAreRead()
    {
        auto a = ss::parseRendezvousAddress("node1:29600", "x");
        QVERIFY(a);
        QCOMPARE(QString::fromStdString(a->host), QStringLiteral("node1"));
        QCOMPARE(a->port, 29600);
        auto v6 = ss::parseRendezvousAddress("[::1]:80", "x");
        QVERIFY(v6);
        QCOMPARE(QString::fromStdString(v6->host), QStringLiteral("::1"));
        QCOMPARE(QString::fromStdString(v6->text()), QStringLiteral("[::1]:80"));
        for (const char* bad : {"node1", "node1:", ":80", "node1:0", "node1:65536", "node1:8x", "::1:80", "[::1]80"}) {
            auto e = ss::parseRendezvousAddress(bad, "--rendezvous");
            QVERIFY2(!e, bad);
            QCOMPARE(e.errorClass(), ss::ErrorClass::BadInput);
            QVERIFY2(QString::fromStdString(e.error().message).startsWith(QLatin1String("--rendezvous: \"")),
                     e.error().message.c_str());
        }

        // The option, then STREAMSCOPE_RENDEZVOUS, then torchrun's MASTER_ADDR with MASTER_PORT + 1.
        const auto torch = table({{"MASTER_ADDR", "10.0.0.1"}, {"MASTER_PORT", "29500"}});
        auto t = ss::rendezvousAddress("", torch);
        QVERIFY(t && *t);
        QCOMPARE(QString::fromStdString((*t)->text()), QStringLiteral("10.0.0.1:29501"));
        QVERIFY(QString::fromStdString((*t)->source).contains(QLatin1String("MASTER_PORT=29500 + 1")));
        auto env = ss::rendezvousAddress(
            "", table({{"STREAMSCOPE_RENDEZVOUS", "h:7"}, {"MASTER_ADDR", "x"}, {"MASTER_PORT", "1"}}));
        QVERIFY(env && *env);
        QCOMPARE(QString::fromStdString((*env)->text()), QStringLiteral("h:7"));
        auto opt = ss::rendezvousAddress("o:9", torch);
        QVERIFY(opt && *opt);
        QCOMPARE(QString::fromStdString((*opt)->text()), QStringLiteral("o:9"));
        auto off = ss::rendezvousAddress("none", torch);
        QVERIFY(off && !*off);
        auto offEnv = ss::rendezvousAddress(
            "", table({{"STREAMSCOPE_RENDEZVOUS", "none"}, {"MASTER_ADDR", "x"}, {"MASTER_PORT", "1"}}));
        QVERIFY(offEnv && !*offEnv);
        auto nothing = ss::rendezvousAddress("", table({}));
        QVERIFY(nothing && !*nothing);
        auto top = ss::rendezvousAddress("", table({{"MASTER_ADDR", "x"}, {"MASTER_PORT", "65535"}}));
        QVERIFY(!top);
        QVERIFY(QString::fromStdString(top.error().message).contains(QLatin1String("from 1 to 65534")));
        auto badEnv = ss::rendezvousAddress("", table({{"STREAMSCOPE_RENDEZVOUS", "nohost"}}));
        QVERIFY(!badEnv);
        QVERIFY(QString::fromStdString(badEnv.error().message).contains(QLatin1String("STREAMSCOPE_RENDEZVOUS")));
    }

    void fourRanksShareBytesWaitAndMeasureTheirClocks()
    {
        const int port = freePort();
        QVERIFY(port > 0);
        std::string blob(128, '\0'); // an NCCL unique id's size, every byte value, zeros included
        for (size_t i = 0; i < blob.size(); ++i)
            blob[i] = char(i * 37);
        std::vector<std::string> received(4), jobs(4), roots(4);
        std::vector<ss::ClockOffset> offsets(4), all;
        const auto errors = onThreads(4, [&](int r) -> std::string {
            auto rv = ss::Rendezvous::join(localhost(port), r, 4, quick(60s));
            if (!rv)
                return rv.error().toString();
            auto got = (*rv)->broadcast(r == 0 ? blob : std::string("ignored"));
            if (!got)
                return got.error().toString();
            received[size_t(r)] = *got;
            if (auto b = (*rv)->barrier(); !b)
                return b.error().toString();
            auto o = (*rv)->measureClockOffset(32, r == 0 ? &all : nullptr);
            if (!o)
                return o.error().toString();
            offsets[size_t(r)] = *o;
            if (auto b = (*rv)->barrier(); !b)
                return b.error().toString();
            jobs[size_t(r)] = (*rv)->jobId();
            roots[size_t(r)] = (*rv)->rootHost();
            return {};
        });
        for (int r = 0; r < 4; ++r) {
            QVERIFY2(errors[size_t(r)].empty(), errors[size_t(r)].c_str());
            QVERIFY(received[size_t(r)] == blob);
            QCOMPARE(jobs[size_t(r)], jobs[0]);
            QCOMPARE(QString::fromStdString(roots[size_t(r)]), QStringLiteral("testhost"));
        }
        QCOMPARE(jobs[0].size(), size_t(16));
        QCOMPARE(offsets[0].offsetNs, int64_t(0));
        QCOMPARE(offsets[0].samples, 0);
        QCOMPARE(all.size(), size_t(4));
        for (int r = 1; r < 4; ++r) {
            const ss::ClockOffset& o = offsets[size_t(r)];
            QCOMPARE(o.samples, 32);
            // One host, one steady clock: the true offset is 0, and it lies within the uncertainty (rank 0 read its
            // clock between the ping's send and the pong's arrival), whatever the scheduler did.
            QVERIFY2(std::llabs(o.offsetNs) <= o.uncertaintyNs + 1,
                     qPrintable(QStringLiteral("rank %1: %2 ± %3 ns").arg(r).arg(o.offsetNs).arg(o.uncertaintyNs)));
            QVERIFY(o.uncertaintyNs > 0);
            QVERIFY(o.uncertaintyNs < 500'000'000); // the best of 32 localhost round trips: far below a second
            QCOMPARE(all[size_t(r)].offsetNs, o.offsetNs);
            QCOMPARE(all[size_t(r)].uncertaintyNs, o.uncertaintyNs);
        }
    }

    void aWorldOfOneNeedsNoNetwork()
    {
        auto rv = ss::Rendezvous::join({"no-such-host.invalid", 1, "test"}, 0, 1, quick(1s));
        QVERIFY(rv);
        QCOMPARE(*(*rv)->broadcast("id"), std::string("id"));
        QVERIFY((*rv)->barrier());
        auto o = (*rv)->measureClockOffset();
        QVERIFY(o);
        QCOMPARE(o->offsetNs, int64_t(0));
        QCOMPARE(o->uncertaintyNs, int64_t(0));
    }

    void aRankThatNeverComesIsNamed()
    {
        const int port = freePort();
        // Ranks 0-2 of 4: rank 0 gives up after its timeout and tells the others which rank did not come.
        const auto errors = onThreads(3, [&](int r) -> std::string {
            auto rv = ss::Rendezvous::join(localhost(port), r, 4, quick(r == 0 ? 3s : 30s));
            if (rv)
                return {};
            return (rv.errorClass() == ss::ErrorClass::Runtime ? "runtime: " : "bad input: ") + rv.error().toString();
        });
        for (int r = 0; r < 3; ++r)
            QVERIFY2(
                QString::fromStdString(errors[size_t(r)]).contains(QLatin1String("runtime: rendezvous at 127.0.0.1:"))
                    && QString::fromStdString(errors[size_t(r)])
                           .contains(QLatin1String("rank 3 of 4 did not join within 3 s")),
                errors[size_t(r)].c_str());

        // Rank 0 never comes: the others say they could not reach it.
        auto lonely = ss::Rendezvous::join(localhost(freePort()), 1, 2, quick(300ms));
        QVERIFY(!lonely);
        QCOMPARE(lonely.errorClass(), ss::ErrorClass::Runtime);
        QVERIFY2(QString::fromStdString(lonely.error().message).contains(QLatin1String("could not reach rank 0")),
                 lonely.error().message.c_str());
    }

    void aRankLateAtTheBarrierOrGoneIsNamed()
    {
        const int port = freePort();
        const auto errors = onThreads(3, [&](int r) -> std::string {
            auto rv = ss::Rendezvous::join(localhost(port), r, 3, quick(r == 0 ? 3s : 20s));
            if (!rv)
                return "join: " + rv.error().toString();
            if (r == 2) {
                std::this_thread::sleep_for(5s); // never reaches the barrier in rank 0's time
                return "slept";
            }
            auto b = (*rv)->barrier();
            return b ? std::string("passed") : b.error().toString();
        });
        QVERIFY2(QString::fromStdString(errors[0]).contains(QLatin1String("rank 2 of 3 did not reach the barrier")),
                 errors[0].c_str());
        QVERIFY2(QString::fromStdString(errors[1]).contains(QLatin1String("rank 0: rank 2 of 3 did not reach")),
                 errors[1].c_str());

        // A rank whose process ends: its connection closes, and rank 0 says so at once.
        const int port2 = freePort();
        const auto gone = onThreads(2, [&](int r) -> std::string {
            auto rv = ss::Rendezvous::join(localhost(port2), r, 2, quick(20s));
            if (!rv)
                return "join: " + rv.error().toString();
            if (r == 1)
                return "left";
            auto o = (*rv)->measureClockOffset();
            return o ? std::string("measured") : o.error().toString();
        });
        QVERIFY2(QString::fromStdString(gone[0]).contains(QLatin1String("rank 1 left the rendezvous")),
                 gone[0].c_str());
    }

    void strangersAreTurnedAway()
    {
        const int port = freePort();
        const auto errors = onThreads(3, [&](int r) -> std::string {
            if (r == 2) {
                // Something that is not a rank connects first and sends garbage: rank 0 drops it and goes on.
                const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
                sockaddr_in a{};
                a.sin_family = AF_INET;
                a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
                a.sin_port = htons(uint16_t(port));
                for (int i = 0; i < 200 && ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0; ++i)
                    std::this_thread::sleep_for(10ms);
                const char junk[] = "GET / HTTP/1.0\r\n\r\n";
                [[maybe_unused]] auto n = ::send(fd, junk, sizeof junk, MSG_NOSIGNAL);
                char buf[256];
                [[maybe_unused]] auto m = ::recv(fd, buf, sizeof buf, 0);
                ::close(fd);
                return {};
            }
            if (r == 1)
                std::this_thread::sleep_for(300ms);
            auto rv = ss::Rendezvous::join(localhost(port), r, 2, quick(20s));
            return rv ? std::string() : rv.error().toString();
        });
        QVERIFY2(errors[0].empty(), errors[0].c_str());
        QVERIFY2(errors[1].empty(), errors[1].c_str());
    }

    void aPortInUseOrABadHostIsSaid()
    {
        int holder = -1;
        const int port = freePort(&holder);
        auto rv = ss::Rendezvous::join(localhost(port), 0, 2, quick(1s));
        ::close(holder);
        QVERIFY(!rv);
        QCOMPARE(rv.errorClass(), ss::ErrorClass::Runtime);
        QVERIFY2(QString::fromStdString(rv.error().message).contains(QLatin1String("is in use on this host")),
                 rv.error().message.c_str());

        auto bad = ss::Rendezvous::join({"no-such-host.invalid", 29600, "--rendezvous"}, 0, 2, quick(1s));
        QVERIFY(!bad);
        QVERIFY2(QString::fromStdString(bad.error().message).contains(QLatin1String("cannot resolve")),
                 bad.error().message.c_str());
    }

    // Four streamscope-cli processes under torchrun's variables meet at MASTER_PORT + 1 and record their offsets.
    void torchrunVariablesMeetAtMasterPortPlusOne()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const int port = freePort();
        std::vector<std::unique_ptr<QProcess>> ranks;
        for (int r = 0; r < 4; ++r) {
            auto env = QProcessEnvironment::systemEnvironment();
            for (const char* k : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID", "STREAMSCOPE_RENDEZVOUS"})
                env.remove(QString::fromLatin1(k));
            env.insert(QStringLiteral("CUDA_VISIBLE_DEVICES"), QStringLiteral("-1"));
            env.insert(QStringLiteral("RANK"), QString::number(r));
            env.insert(QStringLiteral("WORLD_SIZE"), QStringLiteral("4"));
            env.insert(QStringLiteral("LOCAL_RANK"), QString::number(r));
            env.insert(QStringLiteral("LOCAL_WORLD_SIZE"), QStringLiteral("4"));
            env.insert(QStringLiteral("MASTER_ADDR"), QStringLiteral("127.0.0.1"));
            env.insert(QStringLiteral("MASTER_PORT"), QString::number(port - 1));
            auto p = std::make_unique<QProcess>();
            p->setProcessEnvironment(env);
            p->setWorkingDirectory(dir.path());
            p->start(
                QStringLiteral(STREAMSCOPE_CLI),
                {QStringLiteral("run"), QStringLiteral("01"), QStringLiteral("-o"), QStringLiteral("job.%r.json")});
            QVERIFY(p->waitForStarted(10000));
            ranks.push_back(std::move(p));
        }
        QString rank0Err;
        for (int r = 0; r < 4; ++r) {
            QProcess& p = *ranks[size_t(r)];
            QVERIFY(p.waitForFinished(120000));
            const QString err = QString::fromUtf8(p.readAllStandardError());
            QVERIFY2(p.exitStatus() == QProcess::NormalExit && p.exitCode() == 0, qPrintable(err));
            if (r == 0)
                rank0Err = err;
        }
        QVERIFY2(rank0Err.contains(QStringLiteral("rendezvous at 127.0.0.1:%1 (torchrun's MASTER_ADDR").arg(port))
                     && rank0Err.contains(QLatin1String("4 ranks; clock offset to rank 0"))
                     && rank0Err.contains(QLatin1String("clock offset to rank 0 again after the run: rank 1 ")),
                 qPrintable(rank0Err));
        // A run this short tells no drift: rank 0 says so once, not after every rank (or gives each rank's drift).
        const qsizetype tooSoon = rank0Err.count(QLatin1String("too soon to tell a drift"));
        QVERIFY2(tooSoon == 1 ? rank0Err.contains(QLatin1String("; at most "))
                              : rank0Err.count(QLatin1String("ppm over")) == 3,
                 qPrintable(rank0Err));
        std::string job;
        for (int r = 0; r < 4; ++r) {
            auto t = ss::loadTraceFile(dir.filePath(QStringLiteral("job.%1.json").arg(r)).toStdString());
            QVERIFY(t);
            auto sync = ss::readClockSync(t->info);
            QVERIFY(sync && *sync);
            QCOMPARE((*sync)->samples, r == 0 ? 0 : 32);
            QCOMPARE((*sync)->rootHost, ss::localHostName());
            QVERIFY(std::llabs((*sync)->offsetNs) <= (*sync)->uncertaintyNs + 1);
            // Measured again after the run, later on the rank's clock, and again 0 within its uncertainty (one host).
            QVERIFY((*sync)->atNs && (*sync)->after);
            QVERIFY((*sync)->after->atNs > *(*sync)->atNs);
            QCOMPARE((*sync)->after->samples, r == 0 ? 0 : 32);
            QVERIFY(std::llabs((*sync)->after->offsetNs) <= (*sync)->after->uncertaintyNs + 1);
            if (r == 0)
                job = (*sync)->job;
            QCOMPARE((*sync)->job, job);
        }

        // A bad address is bad input (exit 2) before anything runs.
        auto env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("RANK"), QStringLiteral("0"));
        env.insert(QStringLiteral("WORLD_SIZE"), QStringLiteral("2"));
        env.insert(QStringLiteral("CUDA_VISIBLE_DEVICES"), QStringLiteral("-1"));
        const auto bad =
            ss::testing::runCli({QStringLiteral("run"), QStringLiteral("01"), QStringLiteral("--rendezvous"),
                                 QStringLiteral("node1:http"), QStringLiteral("-o"), QStringLiteral("x.%r.json")},
                                env, dir.path());
        QCOMPARE(bad.code, 2);
        QVERIFY2(bad.err.contains(QLatin1String("--rendezvous: \"node1:http\" is not a rendezvous address")),
                 qPrintable(bad.describe()));
        // A rank that never comes: a runtime error (exit 3) naming it, and no trace.
        const auto alone =
            ss::testing::runCli({QStringLiteral("run"), QStringLiteral("01"), QStringLiteral("--rendezvous"),
                                 QStringLiteral("127.0.0.1:%1").arg(freePort()), QStringLiteral("--rendezvous-timeout"),
                                 QStringLiteral("0.5"), QStringLiteral("-o"), QStringLiteral("x.%r.json")},
                                env, dir.path());
        QCOMPARE(alone.code, 3);
        QVERIFY2(alone.err.contains(QLatin1String("rank 1 of 2 did not join within 0.5 s")),
                 qPrintable(alone.describe()));
        QVERIFY(!QFile::exists(dir.filePath(QStringLiteral("x.0.json"))));
    }
};

QTEST_GUILESS_MAIN(TestRendezvous)
#include "tst_rendezvous.moc"
