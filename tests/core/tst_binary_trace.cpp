// The binary native trace format (trace_binary.h): every field of rich traces round-trips JSON -> binary -> JSON
// exactly, compressed or not; the format is recognized by content wherever a trace is opened and chosen by the
// *.sstrace name where one is saved; damaged files give an error naming the block, never a crash.
#include "import_export_fixtures.h"

#include "cli_process.h"
#include "trace_binary.h"
#include "trace_binary_layout.h"

#include <QTemporaryDir>
#include <QTest>

#include <atomic>
#include <cstring>
#include <random>

using streamscope::testing::runCli;
namespace tb = streamscope::trace_binary;

namespace {

// The traces the round trip covers: every kind of field (richTrace), the lessons as simulated (waits, tasks,
// scenarios), PyTorch imports with CPU ops, annotations and flows, recorded GPU traces (event timing, errors).
std::vector<std::pair<std::string, Trace>> richTraces()
{
    std::vector<std::pair<std::string, Trace>> out;
    out.emplace_back("rich", richTrace());
    for (const auto& preset : listPresets())
        out.emplace_back("lesson " + preset.id, simulated(preset.id));
    for (const char* name : {"copy-pipeline.json", "two-streams-event.json", "threads-own-streams.json"}) {
        auto t = importTraceFile((kSource / "tests" / "data" / "pytorch" / name).string());
        if (t)
            out.emplace_back(std::string("pytorch ") + name, std::move(*t));
    }
    for (const auto& dir : {kSource / "tests" / "data" / "h200", kSource / "tests" / "data" / "cupti"})
        for (const auto& entry : fs::directory_iterator(dir))
            if (entry.path().extension() == ".json" && entry.path().string().find(".capture.") == std::string::npos)
                if (auto t = importTraceFile(entry.path().string()))
                    out.emplace_back(entry.path().filename().string(), std::move(*t));
    Trace empty;
    empty.finalize();
    out.emplace_back("empty", std::move(empty));
    return out;
}

tb::Header headerOf(const std::string& bytes)
{
    tb::Header h{};
    std::memcpy(&h, bytes.data(), sizeof h);
    return h;
}

void setHeader(std::string& bytes, const tb::Header& h)
{
    std::memcpy(bytes.data(), &h, sizeof h);
}

// The directory entry of block `id` (its index in the directory, or -1).
int entryIndex(const std::string& bytes, uint32_t id)
{
    const tb::Header h = headerOf(bytes);
    for (uint32_t i = 0; i < h.blockCount; ++i) {
        tb::BlockEntry e{};
        std::memcpy(&e, bytes.data() + sizeof h + i * sizeof e, sizeof e);
        if (e.id == id)
            return int(i);
    }
    return -1;
}

tb::BlockEntry entryAt(const std::string& bytes, int i)
{
    tb::BlockEntry e{};
    std::memcpy(&e, bytes.data() + sizeof(tb::Header) + size_t(i) * sizeof e, sizeof e);
    return e;
}

void setEntry(std::string& bytes, int i, const tb::BlockEntry& e)
{
    std::memcpy(bytes.data() + sizeof(tb::Header) + size_t(i) * sizeof e, &e, sizeof e);
}

// A small uncompressed trace whose blocks the bad-input tests edit in place.
Trace smallTrace()
{
    Trace t;
    const uint32_t host = t.addTrack({TrackKind::HostThread, "main"});
    const uint32_t s = t.addTrack({TrackKind::Stream, "s1", 0});
    for (int64_t i = 0; i < 50; ++i) {
        const uint32_t api = t.addSpan({host, SpanKind::ApiCall, "cudaLaunchKernel", i * 1000, i * 1000 + 300});
        SpanInit kernel{s, SpanKind::Kernel, "kernel", i * 1000 + 400, i * 1000 + 900};
        kernel.grid = {uint32_t(1 + i % 2), 1, 1}; // two distinct details beside the default
        kernel.block = {128, 1, 1};
        const uint32_t k = t.addSpan(kernel);
        t.addFlow(api, k, FlowKind::Launch);
    }
    t.finalize();
    return t;
}

std::string rawBytes()
{
    return traceToBinary(smallTrace(), BinaryTraceOptions{false});
}

// Overwrites a value of block `id` at entry `index` (uncompressed files only).
template <typename T>
void poke(std::string& bytes, uint32_t id, size_t index, T value)
{
    const tb::BlockEntry e = entryAt(bytes, entryIndex(bytes, id));
    std::memcpy(bytes.data() + e.offset + index * sizeof(T), &value, sizeof value);
}

QString errorOf(const std::string& bytes)
{
    auto r = parseBinaryTrace(bytes, "bad.sstrace");
    return r ? QString() : q(r.error().toString());
}

} // namespace

class TestBinaryTrace : public QObject {
    Q_OBJECT

private slots:
    void roundTripsEveryField()
    {
        const auto traces = richTraces();
        QVERIFY(traces.size() > 30); // lessons, PyTorch, recorded traces
        for (const auto& [name, t] : traces) {
            const std::string json = traceToJson(t);
            // Through the JSON reader first, as a file on disk is.
            auto fromJson = parseTrace(json, name);
            QVERIFY2(fromJson.ok(), fromJson.error().toString().c_str());
            // Raw, compressed as version 2, compressed with shuffled columns (version 3).
            for (const BinaryTraceOptions options :
                 {BinaryTraceOptions{false, false}, BinaryTraceOptions{true, false}, BinaryTraceOptions{true, true}}) {
                const std::string bytes = traceToBinary(*fromJson, options);
                QVERIFY(looksLikeBinaryTrace(bytes));
                QCOMPARE(headerOf(bytes).version,
                         options.compress && options.shuffle && binaryTraceCompressionSupported() ? 3u : 2u);
                QCOMPARE(n(detectTraceFormatFromContent(bytes)), n(TraceFormat::StreamscopeBinary));
                auto back = parseBinaryTrace(bytes, name);
                QVERIFY2(back.ok(), (name + ": " + back.error().toString()).c_str());
                QVERIFY2(traceToJson(*back) == json, name.c_str());
                // Written again, the same bytes.
                QVERIFY2(traceToBinary(*back, options) == bytes, name.c_str());
                // The columns as they were, optional ones included.
                const Trace& want = *fromJson;
                QCOMPARE(back->spans.timing.size(), want.spans.timing.size());
                QCOMPARE(back->spans.wait.size(), want.spans.wait.size());
                QCOMPARE(back->spans.task.size(), want.spans.task.size());
                QCOMPARE(back->spans.eventStartError.size(), want.spans.eventStartError.size());
                QVERIFY(back->spans.start == want.spans.start && back->spans.end == want.spans.end);
                QVERIFY(back->spans.gridColumn() == want.spans.gridColumn()
                        && back->spans.blockColumn() == want.spans.blockColumn());
                QVERIFY(back->flows == want.flows);
                QVERIFY(back->strings == want.strings);
            }
        }
    }

    void readsVersion1Files()
    {
        // Files of version 1 (times whole, every span's details): the fuzzer's seeds were written by it. Read,
        // written as version 2 and read again, the same trace; version 2 holds fewer bytes.
        int seen = 0;
        for (const auto& entry : fs::directory_iterator(kSource / "tests" / "fuzz" / "seeds" / "binary")) {
            const std::string bytes = readFile(entry.path().string());
            const std::string name = entry.path().filename().string();
            if (headerOf(bytes).version != 1)
                continue;
            ++seen;
            auto v1 = parseBinaryTrace(bytes, name);
            if (!v1.ok() && !binaryTraceCompressionSupported())
                continue; // a compressed seed in a build without zstd
            QVERIFY2(v1.ok(), (name + ": " + v1.error().toString()).c_str());
            QVERIFY(v1->spanCount() > 0);
            const bool raw = name.find("-raw") != std::string::npos;
            const std::string v2 = traceToBinary(*v1, BinaryTraceOptions{!raw});
            QCOMPARE(headerOf(v2).version, raw || !binaryTraceCompressionSupported() ? 2u : kBinaryTraceVersion);
            auto back = parseBinaryTrace(v2, name);
            QVERIFY2(back.ok(), (name + ": " + back.error().toString()).c_str());
            QVERIFY2(traceToJson(*back) == traceToJson(*v1), name.c_str());
            if (raw)
                QVERIFY2(v2.size() < bytes.size(),
                         qPrintable(
                             QStringLiteral("%1: %2 bytes against %3").arg(q(name)).arg(v2.size()).arg(bytes.size())));
        }
        QVERIFY(seen >= 4);
    }

    // The fuzzer's seeds of each version (v1 NAME, v2-NAME, v3-NAME: the same trace converted) read as one trace.
    void seedsOfEveryVersionReadAlike()
    {
        if (!binaryTraceCompressionSupported())
            QSKIP("built without zstd: the compressed seeds are refused");
        const fs::path dir = kSource / "tests" / "fuzz" / "seeds" / "binary";
        int seen = 0;
        for (const char* name : {"01", "03", "10", "15", "h200-03"}) {
            std::string json;
            for (const std::string prefix : {"", "v2-", "v3-"}) {
                const std::string file = prefix + name + ".sstrace";
                const std::string bytes = readFile((dir / file).string());
                QCOMPARE(headerOf(bytes).version, prefix.empty() ? 1u : prefix == "v2-" ? 2u : 3u);
                auto t = parseBinaryTrace(bytes, file);
                QVERIFY2(t.ok(), (file + ": " + t.error().toString()).c_str());
                if (json.empty())
                    json = traceToJson(*t);
                else
                    QVERIFY2(traceToJson(*t) == json, file.c_str());
                ++seen;
            }
        }
        QCOMPARE(seen, 15);
    }

    void compressionIsUsedWhereBuiltIn()
    {
        const Trace t = simulated("10-many-small-kernels");
        const std::string raw = traceToBinary(t, BinaryTraceOptions{false});
        const std::string packed = traceToBinary(t, BinaryTraceOptions{true});
        if (binaryTraceCompressionSupported())
            QVERIFY2(packed.size() * 3 < raw.size(),
                     qPrintable(QStringLiteral("%1 vs %2").arg(packed.size()).arg(raw.size())));
        else
            QVERIFY(packed == raw);
    }

    void filesAreRecognizedAndChosenByName()
    {
        QTemporaryDir dir;
        const Trace t = richTrace();
        const std::string binPath = dir.filePath(QStringLiteral("t.sstrace")).toStdString();
        const std::string jsonPath = dir.filePath(QStringLiteral("t.json")).toStdString();
        QVERIFY(saveNativeTrace(t, binPath).ok());
        QVERIFY(saveNativeTrace(t, jsonPath).ok());
        QCOMPARE(n(detectTraceFormat(binPath)), n(TraceFormat::StreamscopeBinary));
        QCOMPARE(n(detectTraceFormat(jsonPath)), n(TraceFormat::Streamscope));
        QVERIFY(nativeFormatForPath("A.SSTRACE") == ExportFormat::StreamscopeBinary);
        QVERIFY(nativeFormatForPath("a.sstrace.json") == ExportFormat::Streamscope);
        QVERIFY(exportFormatFromString("streamscope-binary") == ExportFormat::StreamscopeBinary);
        QCOMPARE(n(TraceFormat::StreamscopeBinary), QStringLiteral("streamscope-binary"));
        // Opened by content whatever its name.
        const std::string renamed = dir.filePath(QStringLiteral("renamed.json")).toStdString();
        fs::copy_file(binPath, renamed);
        auto back = importTraceFile(renamed);
        QVERIFY2(back.ok(), back.error().toString().c_str());
        QCOMPARE(q(traceToJson(*back)), q(traceToJson(t)));
        // In memory too (importTraceText: gzip-compressed files come this way).
        auto text = importTraceText(readFile(binPath), "t.sstrace");
        QVERIFY2(text.ok(), text.error().toString().c_str());
        QCOMPARE(q(traceToJson(*text)), q(traceToJson(t)));
    }

    void progressAndCancel()
    {
        Trace t;
        const uint32_t s = t.addTrack({TrackKind::Stream, "s1", 0});
        for (int64_t i = 0; i < 2'000'000; ++i)
            t.addSpan({s, SpanKind::Kernel, "k", i * 10, i * 10 + 5});
        t.finalize();
        QTemporaryDir dir;
        const std::string path = dir.filePath(QStringLiteral("big.sstrace")).toStdString();
        QVERIFY(saveNativeTrace(t, path).ok());
        std::vector<double> seen;
        ImportProgress progress;
        progress.report = [&](double f) { seen.push_back(f); };
        auto back = importTraceFile(path, progress);
        QVERIFY2(back.ok(), back.error().toString().c_str());
        QCOMPARE(back->spanCount(), t.spanCount());
        QVERIFY2(seen.size() >= 3, qPrintable(QString::number(seen.size())));
        QVERIFY(std::is_sorted(seen.begin(), seen.end()));
        QCOMPARE(seen.back(), 1.0);
        std::atomic<bool> cancel{false};
        progress.cancel = &cancel;
        progress.report = [&](double) { cancel = true; };
        auto stopped = importTraceFile(path, progress);
        QVERIFY(!stopped.ok());
        QCOMPARE(q(stopped.error().message), QStringLiteral("cancelled"));
    }

    // Another program cutting the file short while it is read (the reader maps it): an error, not SIGBUS.
    void fileCutShortWhileReadIsAnError()
    {
        Trace t;
        const uint32_t s = t.addTrack({TrackKind::Stream, "s1", 0});
        std::mt19937 random(7); // times that do not pack to nothing
        int64_t at = 0;
        for (int64_t i = 0; i < 2'000'000; ++i, at += 10 + int64_t(random() % 1000))
            t.addSpan({s, SpanKind::Kernel, "k", at, at + 5 + int64_t(random() % 100)});
        t.finalize();
        QTemporaryDir dir;
        const std::string path = dir.filePath(QStringLiteral("cut.sstrace")).toStdString();
        QVERIFY(saveNativeTrace(t, path).ok());
        QVERIFY(fs::file_size(path) > (size_t(1) << 20));
        bool cut = false;
        ImportProgress progress;
        progress.report = [&](double f) {
            if (!cut && f < 1.0) {
                fs::resize_file(path, 4096);
                cut = true;
            }
        };
        auto back = importTraceFile(path, progress);
        QVERIFY(cut);
        QVERIFY(!back.ok());
        QCOMPARE(q(back.error().message), QStringLiteral("the file changed (it was cut short) while it was read"));
        // The next file is read as ever.
        QVERIFY(saveNativeTrace(t, path).ok());
        auto again = importTraceFile(path);
        QVERIFY2(again.ok(), again.error().toString().c_str());
        QCOMPARE(again->spanCount(), t.spanCount());
    }

    void badInput_data()
    {
        QTest::addColumn<QString>("expected");
        QTest::addColumn<int>("edit");
        QTest::newRow("wrong magic") << QStringLiteral("wrong magic number") << 0;
        QTest::newRow("header truncated") << QStringLiteral("less than the 48-byte header") << 1;
        QTest::newRow("version") << QStringLiteral("unsupported version 99 (this StreamScope reads versions 1 to 3)")
                                 << 2;
        QTest::newRow("huge span count") << QStringLiteral("span count 4294967295 is more than a trace can hold") << 3;
        QTest::newRow("span count off") << QStringLiteral("entries of 4 bytes are") << 4;
        QTest::newRow("block count") << QStringLiteral("block count 1000 is out of range") << 5;
        QTest::newRow("directory truncated") << QStringLiteral("the directory of") << 6;
        QTest::newRow("offset past the end")
            << QStringLiteral("truncated: block \"span start offsets\" ends at byte") << 7;
        QTest::newRow("offset misaligned") << QStringLiteral("not a multiple of 8") << 8;
        QTest::newRow("unknown block") << QStringLiteral("unknown block id 63") << 9;
        QTest::newRow("duplicate block") << QStringLiteral("a second block \"span start offsets\"") << 10;
        QTest::newRow("unknown codec") << QStringLiteral("unknown codec 7") << 11;
        QTest::newRow("track out of range")
            << QStringLiteral("block \"span track\", entry 3: track 9 is out of range (tracks has 2 entries)") << 12;
        QTest::newRow("end before start")
            << QStringLiteral("block \"span end offsets\", entry 0: end before start (-67108564 < 0)") << 13;
        QTest::newRow("kind out of range") << QStringLiteral("kind 200 is out of range (span_kinds has 11") << 14;
        QTest::newRow("name out of range") << QStringLiteral("name 77 is out of range (strings has 2 entries)") << 15;
        QTest::newRow("flow out of range") << QStringLiteral("block \"flow to\", entry 1: span 100000") << 16;
        QTest::newRow("string offsets") << QStringLiteral("block \"string_offsets\", entry 1") << 17;
        QTest::newRow("meta not JSON") << QStringLiteral("block \"meta\"") << 18;
        QTest::newRow("missing block") << QStringLiteral("missing block \"flow kind\"") << 19;
        QTest::newRow("compressed claim too big") << QStringLiteral("times the file's size") << 20;
        QTest::newRow("zstd block") << QStringLiteral("block \"span start offsets\": ") << 21;
        QTest::newRow("empty file") << QStringLiteral("wrong magic number") << 22;
        // The times as offsets from bases (version 2), checked before they are taken.
        QTest::newRow("escape without exception")
            << QStringLiteral("block \"span start offsets\", entry 5: an escaped entry without its exception") << 23;
        QTest::newRow("unset second base")
            << QStringLiteral("block \"span start offsets\", entry 5: an offset from its block's second base, which "
                              "is unset")
            << 24;
        QTest::newRow("unset first base")
            << QStringLiteral("block \"span end bases\", entry 0: the first base of a block is never unset") << 25;
        QTest::newRow("base overflows") << QStringLiteral(
            "block \"span start offsets\", entry 0: base plus offset overflows 64 bits")
                                        << 26;
        QTest::newRow("bases count") << QStringLiteral("block \"span start bases\" holds 8 bytes; 2 entries") << 27;
        QTest::newRow("exceptions not whole")
            << QStringLiteral("block \"span start exceptions\" holds 8 bytes, not a whole number of 16-byte entries")
            << 28;
        // The details as a table and an index (version 2).
        QTest::newRow("detail out of range")
            << QStringLiteral("block \"span detail\", entry 1: detail 9 is out of range (span details has 3 entries)")
            << 29;
        QTest::newRow("first detail not the default")
            << QStringLiteral("block \"span details\", entry 0: the first detail must be the default") << 30;
        QTest::newRow("a version 1 block in version 2")
            << QStringLiteral("block \"span start\" does not belong in a file of version 2") << 31;
        QTest::newRow("detail without details")
            << QStringLiteral("blocks \"span detail\" and \"span details\" come together") << 32;
    }

    void badInput()
    {
        QFETCH(QString, expected);
        QFETCH(int, edit);
        std::string b = rawBytes();
        QVERIFY(parseBinaryTrace(b, "good").ok());
        tb::Header h = headerOf(b);
        const int start = entryIndex(b, tb::SpanStartOffsets);
        tb::BlockEntry e = entryAt(b, start);
        switch (edit) {
        case 0: b[1] = 'X'; break;
        case 1: b.resize(20); break;
        case 2: h.version = 99, setHeader(b, h); break;
        case 3: h.spanCount = 0xffffffffu, setHeader(b, h); break;
        case 4: h.spanCount = 99, setHeader(b, h); break;
        case 5: h.blockCount = 1000, setHeader(b, h); break;
        case 6: b.resize(sizeof h + 40); break;
        case 7: e.offset = (b.size() - 8) & ~uint64_t(7), setEntry(b, start, e); break;
        case 8: e.offset += 4, setEntry(b, start, e); break;
        case 9: e.id = 63, setEntry(b, start, e); break;
        case 10: e.id = tb::SpanStartOffsets, setEntry(b, entryIndex(b, tb::SpanEndOffsets), e); break;
        case 11: e.codec = 7, setEntry(b, start, e); break;
        case 12: poke<uint32_t>(b, tb::SpanTrack, 3, 9); break;
        case 13: poke<uint32_t>(b, tb::SpanEndOffsets, 0, 0); break; // the span at 0: its end at the base
        case 14: poke<uint8_t>(b, tb::SpanKind_, 0, 200); break;
        case 15: poke<uint32_t>(b, tb::SpanName, 0, 77); break;
        case 16: poke<uint32_t>(b, tb::FlowTo, 1, 100000); break;
        case 17: poke<uint64_t>(b, tb::StringOffsets, 1, 1u << 30); break;
        case 18: poke<char>(b, tb::Meta, 0, '['); break;
        case 19: {
            const int last = int(h.blockCount) - 1;
            QCOMPARE(entryAt(b, last).id, uint32_t(tb::FlowKind_));
            h.blockCount -= 1, setHeader(b, h);
            break;
        }
        case 20: {
            // A few bytes that claim 3 GB once unpacked: refused before anything is allocated.
            h.spanCount = 400'000'000, setHeader(b, h);
            for (uint32_t i = 0; i < h.blockCount; ++i) {
                tb::BlockEntry x = entryAt(b, int(i));
                const tb::BlockShape shape = tb::shapeOf(x.id);
                if (shape.count == tb::CountOf::Spans)
                    x.codec = uint32_t(tb::Codec::Zstd), x.rawSize = h.spanCount * shape.elementSize,
                    setEntry(b, int(i), x);
                if (shape.count == tb::CountOf::TimeBases)
                    x.codec = uint32_t(tb::Codec::Zstd), x.rawSize = 2 * ((h.spanCount + 255) / 256) * 8,
                    setEntry(b, int(i), x);
            }
            break;
        }
        case 21: e.codec = uint32_t(tb::Codec::Zstd), setEntry(b, start, e); break; // raw bytes are no zstd frame
        case 22: b.clear(); break;
        case 23: poke<uint32_t>(b, tb::SpanStartOffsets, 5, 0xffffffffu); break;
        case 24: poke<uint32_t>(b, tb::SpanStartOffsets, 5, 0x80000000u); break;
        case 25: poke<int64_t>(b, tb::SpanEndBases, 0, INT64_MAX); break;
        case 26: poke<int64_t>(b, tb::SpanStartBases, 0, INT64_MAX - 5); break;
        case 27: {
            const int i = entryIndex(b, tb::SpanStartBases);
            tb::BlockEntry x = entryAt(b, i);
            x.rawSize = x.storedSize = 8, setEntry(b, i, x);
            break;
        }
        case 28: {
            // An exceptions block of half an entry (pointing at the bases' bytes: only its size is read first).
            const int i = entryIndex(b, tb::SpanStartBases);
            tb::BlockEntry x = entryAt(b, i);
            x.id = tb::SpanStartExceptions, x.rawSize = x.storedSize = 8;
            // Appended to the directory in place of the last flow block, which is then missing: the size is
            // checked first.
            setEntry(b, int(h.blockCount) - 1, x);
            break;
        }
        case 29: poke<uint32_t>(b, tb::SpanDetailIndex, 1, 9); break;
        case 30: poke<int64_t>(b, tb::SpanDetailTable, 0, 5); break;
        case 31: e.id = tb::SpanStart, setEntry(b, start, e); break;
        case 32: {
            const int i = entryIndex(b, tb::SpanDetailTable);
            tb::BlockEntry x = entryAt(b, i);
            x.id = tb::SpanTiming_, x.rawSize = x.storedSize = h.spanCount; // another optional block in its place
            setEntry(b, i, x);
            break;
        }
        }
        const QString error = errorOf(b);
        QVERIFY2(error.startsWith(QStringLiteral("bad.sstrace: ")), qPrintable(error));
        QVERIFY2(error.contains(expected), qPrintable(error));
        if (edit == 21 && !binaryTraceCompressionSupported())
            QVERIFY2(error.contains(QStringLiteral("built without zstd")), qPrintable(error));
        else if (edit == 21)
            QVERIFY2(error.contains(QStringLiteral("corrupt zstd data")), qPrintable(error));
    }

    void corruptCompressedBlocks_data()
    {
        QTest::addColumn<bool>("shuffle");
        QTest::newRow("zstd") << false;
        QTest::newRow("zstd shuffled") << true;
    }

    void corruptCompressedBlocks()
    {
        if (!binaryTraceCompressionSupported())
            QSKIP("built without zstd: tested by badInput's \"zstd block\"");
        QFETCH(bool, shuffle);
        const Trace t = simulated("08-copy-compute-pipeline");
        const std::string good = traceToBinary(t, BinaryTraceOptions{true, shuffle});
        const int start = entryIndex(good, tb::SpanTrack);
        QVERIFY(start >= 0);
        const tb::BlockEntry e = entryAt(good, start);
        QCOMPARE(e.codec, uint32_t(shuffle ? tb::Codec::ZstdShuffled : tb::Codec::Zstd));
        // Bytes of the frame changed, its end cut, its unpacked size misstated: errors, each naming the block.
        std::string flipped = good;
        for (uint64_t i = e.offset + 4; i < e.offset + e.storedSize; i += 7)
            flipped[i] = char(flipped[i] ^ 0x5a);
        QVERIFY(errorOf(flipped).contains(QStringLiteral("block \"span track\": corrupt zstd data")));
        std::string shorter = good;
        tb::BlockEntry cut = e;
        cut.storedSize /= 2;
        setEntry(shorter, start, cut);
        QVERIFY2(errorOf(shorter).contains(QStringLiteral("corrupt zstd data")), qPrintable(errorOf(shorter)));
        // Shuffled blocks belong in version 3 on.
        if (shuffle) {
            std::string older = good;
            tb::Header h = headerOf(older);
            h.version = 2;
            setHeader(older, h);
            QVERIFY2(errorOf(older).contains(QStringLiteral("codec 2 (zstd shuffled) in a file of version 2")),
                     qPrintable(errorOf(older)));
        }
    }

    // A column of multi-byte entries packs smaller shuffled: the span names' and times' high bytes repeat.
    void shuffledColumnsPackSmaller()
    {
        if (!binaryTraceCompressionSupported())
            QSKIP("built without zstd");
        const Trace t = simulated("10-many-small-kernels");
        const std::string plain = traceToBinary(t, BinaryTraceOptions{true, false});
        const std::string shuffled = traceToBinary(t, BinaryTraceOptions{true, true});
        for (const uint32_t id : {uint32_t(tb::SpanName), uint32_t(tb::SpanStartOffsets), uint32_t(tb::FlowFrom)}) {
            const tb::BlockEntry a = entryAt(plain, entryIndex(plain, id)),
                                 b = entryAt(shuffled, entryIndex(shuffled, id));
            QCOMPARE(b.codec, uint32_t(tb::Codec::ZstdShuffled));
            QVERIFY2(b.storedSize < a.storedSize,
                     qPrintable(
                         QStringLiteral("block %1: %2 shuffled, %3 not").arg(id).arg(b.storedSize).arg(a.storedSize)));
        }
        QVERIFY(shuffled.size() < plain.size());
    }

    // The unshuffle's 16-entries-at-a-time path against the plain loop, and shuffle then unshuffle giving the entries
    // back: every entry size the blocks use, counts around the steps of 16 and a whole group.
    void unshuffleMatchesThePlainLoop()
    {
        std::mt19937 rng(11);
        for (const size_t size : {1, 4, 8, 12, 16, 32})
            for (const size_t count : {0, 1, 15, 16, 17, 31, 32, 33, 100, 4099, int(tb::kShuffleGroup)}) {
                std::string entries(count * size, '\0'), planes(entries.size(), '\0');
                for (auto& c : entries)
                    c = char(rng());
                tb::shuffleBytes(entries.data(), planes.data(), count, size);
                std::string fast(entries.size(), 'x'), plain(entries.size(), 'y');
                tb::unshuffleBytes(planes.data(), fast.data(), count, size);
                tb::unshuffleBytesPlain(planes.data(), plain.data(), count, size);
                QVERIFY2(fast == plain && fast == entries,
                         qPrintable(QStringLiteral("entries of %1 bytes, %2 of them").arg(size).arg(count)));
            }
    }

    void everyTruncationAndByteFlipIsAnError()
    {
        // Never a crash: each prefix of a small file, and random damage to a compressed one.
        const std::string raw = rawBytes();
        for (size_t len = 0; len < raw.size(); len += 3)
            QVERIFY(!parseBinaryTrace(std::string_view(raw).substr(0, len), "cut").ok());
        const std::string packed = traceToBinary(simulated("03-record-wait"));
        std::mt19937 rng(7);
        for (int round = 0; round < 2000; ++round) {
            std::string b = packed;
            for (int k = 0; k < 4; ++k)
                b[rng() % b.size()] = char(rng());
            (void)parseBinaryTrace(b, "flipped"); // a value or an error
        }
    }

    void commandLine()
    {
        QTemporaryDir dir;
        const QString json = dir.filePath(QStringLiteral("t.json"));
        const QString bin = dir.filePath(QStringLiteral("t.sstrace"));
        const QString again = dir.filePath(QStringLiteral("again.sstrace"));
        QVERIFY(saveNativeTrace(richTrace(), json.toStdString()).ok());
        // By the output's name, or by --to; --to streamscope keeps JSON whatever the name.
        auto r = runCli({QStringLiteral("convert"), json, QStringLiteral("-o"), bin});
        QVERIFY2(r.code == 0, qPrintable(r.describe()));
        QCOMPARE(n(detectTraceFormat(bin.toStdString())), n(TraceFormat::StreamscopeBinary));
        r = runCli({QStringLiteral("convert"), bin, QStringLiteral("-o"), again, QStringLiteral("--to"),
                    QStringLiteral("streamscope")});
        QVERIFY2(r.code == 0, qPrintable(r.describe()));
        QCOMPARE(n(detectTraceFormat(again.toStdString())), n(TraceFormat::Streamscope));
        QCOMPARE(q(readFile(again.toStdString())), q(readFile(json.toStdString())));
        const QString bin2 = dir.filePath(QStringLiteral("b.json"));
        r = runCli({QStringLiteral("convert"), json, QStringLiteral("-o"), bin2, QStringLiteral("--to"),
                    QStringLiteral("streamscope-binary")});
        QVERIFY2(r.code == 0, qPrintable(r.describe()));
        QVERIFY(readFile(bin2.toStdString()) == readFile(bin.toStdString()));
        // A damaged binary trace: exit 2 and a message naming the file and the block.
        std::string bytes = readFile(bin.toStdString());
        bytes.resize(bytes.size() / 2);
        const QString cut = dir.filePath(QStringLiteral("cut.sstrace"));
        QVERIFY(writeFile(cut.toStdString(), bytes));
        r = runCli({QStringLiteral("analyze"), cut});
        QVERIFY2(r.code == 2, qPrintable(r.describe()));
        QVERIFY2(r.err.contains(QStringLiteral("cut.sstrace: ")) && r.err.contains(QStringLiteral("truncated")),
                 qPrintable(r.describe()));
    }
};

QTEST_GUILESS_MAIN(TestBinaryTrace)
#include "tst_binary_trace.moc"
