// The Chrome reader on several threads (core/formats/chrome/chrome_trace_chunks.h) gives exactly what it gives on
// one: the same trace, byte for byte in the native format, or the same error at the same byte, on generated traces
// of every layout (one event a line, pretty-printed, one line), strings with braces, quotes, escapes and unicode,
// numbers in every JSON form, nested args, files cut off or broken in a later chunk, and the PyTorch traces in
// tests/data/pytorch.
#include "chrome_trace.h"
#include "chrome_trace_chunks.h"
#include "pytorch_trace.h"
#include "trace_formats.h"
#include "trace_json.h"

#include <QTemporaryDir>
#include <QTest>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

using namespace streamscope;
namespace fs = std::filesystem;

namespace {

const fs::path kSource = STREAMSCOPE_SOURCE_DIR;

enum class Layout { Lines, Pretty, OneLine, BareArray };

// A JSON number in one of its forms (integers, fractions, exponents, signs, quoted), mostly in range.
std::string number(std::mt19937& r, bool negative)
{
    std::uniform_int_distribution<int> form(0, 13), small(0, 999), big(0, 2000000);
    switch (form(r)) {
    case 0: return std::to_string(big(r));
    case 1: return std::to_string(big(r)) + "." + std::to_string(small(r));
    case 2: return std::to_string(big(r)) + ".0004999";
    case 3: return std::to_string(big(r)) + ".0005";
    case 4: return std::to_string(big(r)) + ".123456789012";
    case 5: return std::to_string(small(r) % 9 + 1) + "e" + std::to_string(small(r) % 6);
    case 6: return std::to_string(small(r)) + ".25E+2";
    case 7: return "1e-3";
    case 8: return negative ? "-" + std::to_string(small(r)) : "0";
    case 9: return negative ? "-0.0" : "0.0";
    case 10: return "\"" + std::to_string(small(r)) + "\"";
    case 11: return "123456789012345";
    case 12: return std::to_string(big(r)) + ".5";
    default: return std::to_string(small(r));
    }
}

// A string with braces, quotes, escapes, unicode escapes (surrogate pairs too) and text that looks like an event
// boundary.
std::string text(std::mt19937& r)
{
    static const char* const kParts[] = {"plain",
                                         "br{ace}",
                                         "q\\\"uote",
                                         "back\\\\slash",
                                         "\\u00e9\\u4e2d",
                                         "\\ud83d\\ude00",
                                         "\\n\\t",
                                         "},{",
                                         "\\\"},\\n{\\\"",
                                         "[x]",
                                         "void gemm_kernel<float, 128, 64>(float const*)",
                                         "\\/",
                                         "\\ud800"};
    std::uniform_int_distribution<int> count(0, 4), part(0, int(std::size(kParts)) - 1);
    std::string s = "\"";
    for (int i = count(r); i > 0; --i)
        s += kParts[part(r)];
    return s + "\"";
}

std::string event(std::mt19937& r, Layout layout)
{
    std::uniform_int_distribution<int> d(0, 99);
    static const char* const kPh[] = {"X", "X", "X", "X", "B", "E", "i", "M", "s", "f", "t"};
    const std::string ph = kPh[d(r) % std::size(kPh)];
    std::vector<std::string> f;
    if (ph == "M") {
        static const char* const kMeta[] = {"thread_name", "process_name", "thread_sort_index", "process_sort_index"};
        f = {"\"ph\":\"M\"", std::string("\"name\":\"") + kMeta[d(r) % 4] + "\"", "\"pid\":" + std::to_string(d(r) % 4),
             "\"tid\":" + std::to_string(d(r) % 6),
             "\"args\":{\"name\":" + text(r) + ",\"sort_index\":" + std::to_string(d(r) % 11 - 5) + "}"};
    } else {
        f = {"\"ph\":\"" + ph + "\"", "\"ts\":" + number(r, true),
             "\"pid\":" + (d(r) < 80 ? std::to_string(d(r) % 4) : text(r)),
             "\"tid\":" + (d(r) < 80 ? std::to_string(d(r) % 6) : text(r)), "\"name\":" + text(r)};
        static const char* const kCat[] = {"\"kernel\"", "\"cuda_runtime\"", "\"gpu_memcpy\"", "\"streamscope\""};
        f.push_back("\"cat\":" + (d(r) < 70 ? std::string(kCat[d(r) % 4]) : text(r)));
        if (ph == "X")
            f.push_back("\"dur\":" + number(r, false));
        if (ph == "s" || ph == "f" || ph == "t")
            f.push_back("\"id\":" + (d(r) < 60 ? std::to_string(d(r) % 20) : "\"0x" + std::to_string(d(r) % 9) + "\""));
        std::vector<std::string> args = {
            "\"nested\":{\"a\":[1,{\"b\":\"}\"},[]],\"c\":null,\"d\":[true,false,-1.5e-3]}",
            "\"device\":" + std::to_string(d(r) % 3),
            "\"stream\":" + (d(r) < 50 ? std::to_string(d(r) % 9) : text(r)),
            "\"grid\":[" + std::to_string(d(r) % 9 + 1) + "," + std::to_string(d(r) % 9 + 1) + "]",
            "\"bytes\":" + std::to_string(d(r) * 4096),
            "\"correlation\":" + std::to_string(d(r) % 50),
            "\"External id\":" + std::to_string(d(r) % 50),
            "\"op\":" + std::to_string(d(r) % 12 - 2),
            std::string("\"kind\":") + (d(r) < 50 ? "\"kernel\"" : "\"memcpy-h2d\""),
        };
        std::shuffle(args.begin(), args.end(), r);
        args.resize(size_t(d(r)) % (args.size() + 1));
        std::string a = "\"args\":{";
        for (size_t i = 0; i < args.size(); ++i)
            a += (i ? (layout == Layout::Pretty ? ",\n      " : ",") : (layout == Layout::Pretty ? "\n      " : ""))
                + args[i];
        f.push_back(a + (layout == Layout::Pretty ? "\n    }" : "}"));
    }
    std::shuffle(f.begin(), f.end(), r);
    std::string e = layout == Layout::Pretty ? "{\n    " : "{";
    for (size_t i = 0; i < f.size(); ++i)
        e += (i ? (layout == Layout::Pretty ? ",\n    " : ", ") : "") + f[i];
    return e + (layout == Layout::Pretty ? "\n  }" : "}");
}

std::string generated(unsigned seed, int events, Layout layout)
{
    std::mt19937 r(seed);
    std::string s = layout == Layout::BareArray ? "[\n" : "{\"otherData\":{\"x\":1},\"traceEvents\":[\n";
    const char* sep = layout == Layout::OneLine ? "," : (layout == Layout::Pretty ? ",\n  " : ",\n");
    for (int i = 0; i < events; ++i)
        s += (i ? sep : (layout == Layout::Pretty ? "  " : "")) + event(r, layout);
    return s + (layout == Layout::BareArray ? "\n]\n" : "\n]}\n");
}

// The native text of a result, or its error.
std::string outcome(const Result<Trace>& t)
{
    return t ? traceToJson(*t) : "error: " + t.error().toString();
}

std::string slurp(const fs::path& p)
{
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

} // namespace

class TestChromeChunks : public QObject {
    Q_OBJECT

private slots:
    void sameTraceOnAnyThreads_data()
    {
        QTest::addColumn<int>("layout");
        QTest::addColumn<unsigned>("seed");
        const char* const names[] = {"lines", "pretty", "one-line", "bare-array"};
        for (int layout = 0; layout < 4; ++layout)
            for (unsigned seed = 1; seed <= 6; ++seed)
                QTest::newRow((std::string(names[layout]) + " " + std::to_string(seed)).c_str()) << layout << seed;
    }
    void sameTraceOnAnyThreads()
    {
        QFETCH(int, layout);
        QFETCH(unsigned, seed);
        const std::string json = generated(seed, 400, Layout(layout));
        const std::string plain = outcome(parseChromeTrace(json, "g.json", {1, 0}));
        QVERIFY2(plain.rfind("error", 0) != 0, plain.c_str()); // the generated traces are valid
        for (const unsigned threads : {2u, 3u, 5u})
            for (const size_t chunk : {size_t(37), size_t(256), size_t(1000), size_t(4096)}) {
                const std::string threaded = outcome(parseChromeTrace(json, "g.json", {threads, chunk}));
                QVERIFY2(threaded == plain,
                         (std::to_string(threads) + " threads, chunks of " + std::to_string(chunk) + ": "
                          + threaded.substr(0, 300))
                             .c_str());
            }
    }

    // The chunks alive at once (those parsed ahead and the one let go for reuse) take at most 1/64 of the input
    // wherever a chunk can be that small (inputs of 48 MiB and more), and three chunks of 64 KiB below that.
    void chunksAliveStayWithinTheirShare()
    {
        using chrome::detail::ChunkPipeline;
        constexpr uint64_t MiB = uint64_t(1) << 20;
        for (const unsigned threads : {2u, 4u, 8u, 16u})
            for (const uint64_t size : {16 * MiB, 48 * MiB, 100 * MiB, 306 * MiB, 767 * MiB, 1031 * MiB, 4096 * MiB}) {
                const auto plan = chrome::detail::planChunks(size, {threads, 0});
                QCOMPARE(plan.workers, threads - 1);
                QVERIFY(plan.chunkBytes >= (64u << 10) && plan.chunkBytes <= MiB);
                const size_t window = ChunkPipeline::windowFor(size, plan);
                QVERIFY(window >= 2 && window <= plan.workers + 2);
                const uint64_t alive = (window + 1) * plan.chunkBytes * ChunkPipeline::kChunkCost;
                const uint64_t bound = size >= 48 * MiB ? size / 64 : 3 * (64u << 10) * ChunkPipeline::kChunkCost;
                QVERIFY2(alive <= bound,
                         (std::to_string(size) + " bytes, " + std::to_string(threads)
                          + " threads: " + std::to_string(alive) + " > " + std::to_string(bound))
                             .c_str());
            }
        // One thread, or an input under 16 MiB: no workers.
        QCOMPARE(chrome::detail::planChunks(306 * MiB, {1, 0}).workers, 0u);
        QCOMPARE(chrome::detail::planChunks(15 * MiB, {8, 0}).workers, 0u);
    }

    void workersParseAhead()
    {
        // The events of a one-event-a-line file are parsed by the workers: the reader finds them at their bytes.
        const std::string json = generated(7, 300, Layout::Lines);
        const size_t second = json.find("\n{", json.size() / 2) + 1;
        chrome::detail::ChunkPipeline chunks(-1, json, json.size(), chrome::detail::ChunkPlan{2, 1024});
        const chrome::detail::PreEvent* pre = chunks.at(second);
        QVERIFY(pre != nullptr);
        QCOMPARE(pre->start, uint64_t(second));
        QCOMPARE(json[size_t(pre->end) - 1], '}');
        QVERIFY(chunks.at(second + 1) == nullptr); // no event starts there
    }

    void brokenInALaterChunk_data()
    {
        QTest::addColumn<QString>("damage");
        QTest::newRow("control character") << QStringLiteral("\x01");
        QTest::newRow("no colon") << QStringLiteral(";");
        QTest::newRow("unknown escape") << QStringLiteral("\\x");
        QTest::newRow("unclosed object") << QStringLiteral("{");
        QTest::newRow("cut off") << QStringLiteral("<cut>");
        QTest::newRow("negative dur") << QStringLiteral("<negative dur>");
        QTest::newRow("duplicate ts") << QStringLiteral("<duplicate ts>");
    }
    void brokenInALaterChunk()
    {
        QFETCH(QString, damage);
        std::string json = generated(11, 2000, Layout::Lines);
        const size_t at = json.find("{\"", json.size() * 3 / 4); // an event three quarters in
        QVERIFY(at != std::string::npos);
        if (damage == QLatin1String("<cut>")) {
            json.resize(at + 20);
        } else if (damage == QLatin1String("<negative dur>")) {
            json.insert(at + 1, "\"ph\":\"X\",\"dur\":-5,\"ts\":1,\"x\":");
        } else if (damage == QLatin1String("<duplicate ts>")) {
            json.insert(at + 1, "\"ts\":1,\"ts\":2,\"x\":");
        } else {
            const size_t colon = json.find(':', at);
            json.replace(colon, 1, damage == QLatin1String(";") ? ";" : "");
            if (damage != QLatin1String(";"))
                json.insert(json.find('"', colon + 1) + 1, damage.toStdString());
        }
        auto plain = parseChromeTrace(json, "broken.json", {1, 0});
        QVERIFY(!plain.ok());
        const std::string where = plain.error().toString();
        // The error is past the first chunks, where the workers read.
        const auto byte = std::stoull(where.substr(where.find("byte ") + 5));
        QVERIFY2(byte > 4 * 4096, where.c_str());
        for (const unsigned threads : {2u, 4u})
            for (const size_t chunk : {size_t(64), size_t(4096)}) {
                auto threaded = parseChromeTrace(json, "broken.json", {threads, chunk});
                QVERIFY(!threaded.ok());
                QCOMPARE(threaded.error().toString(), where);
            }
    }

    void fromAFile()
    {
        // The workers read their chunks from the file (pread) while the reader reads it in order.
        QTemporaryDir dir;
        const std::string path = dir.filePath(QStringLiteral("t.json")).toStdString();
        const std::string json = generated(5, 3000, Layout::Lines);
        std::ofstream(path, std::ios::binary) << json;
        const std::string plain = outcome(parseChromeTrace(json, path, {1, 0}));
        QCOMPARE(outcome(loadChromeTraceFile(path, {1, 0})), plain);
        QCOMPARE(outcome(loadChromeTraceFile(path, {3, 777})), plain);
        QCOMPARE(outcome(loadChromeTraceFile(path, {2, 65536})), plain);
    }

    void fuzzSeedsAndFixtures_data()
    {
        // The Chrome fuzz seeds and the exports of the traces recorded on an H200, whole and cut short (errors at the
        // end).
        QTest::addColumn<QString>("path");
        for (const fs::path& dir :
             {kSource / "tests" / "fuzz" / "seeds" / "chrome", kSource / "tests" / "data" / "h200"})
            for (const auto& e : fs::directory_iterator(dir))
                if (e.path().extension() == ".json")
                    QTest::newRow(e.path().lexically_relative(kSource).string().c_str())
                        << QString::fromStdString(e.path().string());
    }
    void fuzzSeedsAndFixtures()
    {
        QFETCH(QString, path);
        std::string whole = slurp(path.toStdString());
        if (path.contains(QLatin1String("data/h200"))) { // recorded traces in the native format: their Chrome export
            auto t = importTraceFile(path.toStdString());
            QVERIFY2(t.ok(), t.error().toString().c_str());
            whole = traceToChromeJson(*t);
        }
        for (const size_t keep : {whole.size(), whole.size() * 7 / 8, whole.size() / 2}) {
            const std::string json = whole.substr(0, keep);
            const std::string plain = outcome(parseChromeTrace(json, "f.json", {1, 0}));
            for (const size_t chunk : {size_t(50), size_t(700)})
                QCOMPARE(outcome(parseChromeTrace(json, "f.json", {3, chunk})), plain);
        }
    }

    void pytorchTraces_data()
    {
        QTest::addColumn<QString>("path");
        for (const fs::path& dir :
             {kSource / "tests" / "data" / "pytorch", kSource / "tests" / "data" / "pytorch" / "fixtures"})
            for (const auto& e : fs::directory_iterator(dir))
                if (e.path().extension() == ".json" && e.path().string().find("provenance") == std::string::npos)
                    QTest::newRow(e.path().filename().string().c_str()) << QString::fromStdString(e.path().string());
    }
    void pytorchTraces()
    {
        QFETCH(QString, path);
        const std::string file = path.toStdString();
        const std::string json = slurp(file);
        const std::string plain = outcome(parsePyTorchTrace(json, file, {1, 0}));
        QVERIFY2(plain.rfind("error", 0) != 0, plain.c_str());
        for (const size_t chunk : {size_t(100), size_t(1024), size_t(8192)}) {
            QCOMPARE(outcome(parsePyTorchTrace(json, file, {3, chunk})), plain);
            QCOMPARE(outcome(loadPyTorchTraceFile(file, {2, chunk})), plain);
        }
    }
};

QTEST_GUILESS_MAIN(TestChromeChunks)
#include "tst_chrome_chunks.moc"
