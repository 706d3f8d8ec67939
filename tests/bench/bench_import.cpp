// Import benchmark: generates a trace file of about 1 GB (our own export of a synthetic run: 16 host threads
// launching kernels and copies into 32 streams on 2 devices, with launch, event and sync arrows) in a temporary
// directory, then imports it with importTraceFile in a fresh process and reports throughput and peak memory against
// the size of the loaded trace (Trace::memoryBytes). For comparison it also times nlohmann's SAX parser over the same
// file with handlers that do nothing (the floor for a SAX-based importer; JSON formats only).
//
//   bench_import [--json] [--mb 1024] [--dir DIR] [--keep] [--no-sax] [--format FORMAT]
//
// FORMAT: chrome (the default), streamscope (native JSON), streamscope-binary (zstd-compressed columns where zstd is
// built in) or streamscope-binary-raw (uncompressed). For the binary formats --mb is the size of the uncompressed
// file, about the size of the trace in memory: the compressed file of the same trace is smaller.
//
// Generation, import and the SAX pass each run in a child process (this executable re-executed), so that each peak
// resident memory (getrusage ru_maxrss) belongs to that step alone.
#include "chrome_trace.h"
#include "trace.h"
#include "trace_binary.h"
#include "trace_formats.h"
#include "trace_json.h"

#include "bench_process.h"

#include <nlohmann/json.hpp>

#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

namespace ss = streamscope;
using namespace streamscope::bench;

namespace {

struct Config {
    bool json = false;
    int64_t mb = 1024;
    std::string dir;
    bool keep = false;
    bool sax = true;
    std::string format = "chrome";
    std::string child; // "generate", "import", "sax"
    std::string file;
    int64_t ops = 0;  // generate: operations
    int threads = -1; // import: the Chrome reader's threads (chrome::ReadOptions); -1: importTraceFile's choice
};

// A run of `ops` operations: each host thread launches into its two streams, copies now and then, records events
// that the next thread's stream waits on, and synchronizes.
ss::Trace synthetic(int64_t ops)
{
    constexpr int kThreads = 16, kStreams = 32, kDevices = 2;
    static const char* const kKernels[] = {"void gemm_kernel<float, 128, 64>(float const*, float const*, float*, int)",
                                           "void elementwise_kernel<128, 4>(int, at::native::AddFunctor<float>)",
                                           "transpose_kernel",
                                           "reduce_kernel",
                                           "softmax_warp_forward",
                                           "layer_norm_kernel",
                                           "spin"};
    ss::Trace t;
    t.info.source = ss::TraceSource::Simulator;
    t.info.backend = "simulator";
    t.info.scenarioId = "bench-import";
    for (int d = 0; d < kDevices; ++d)
        t.info.devices.push_back({d, "simulated NVIDIA H200", {{"sm_count", "132"}}});
    std::vector<uint32_t> threads, streams;
    for (int i = 0; i < kThreads; ++i)
        threads.push_back(t.addTrack({ss::TrackKind::HostThread, "host" + std::to_string(i), i % kDevices}));
    for (int i = 0; i < kStreams; ++i)
        streams.push_back(t.addTrack({ss::TrackKind::Stream, "s" + std::to_string(i), i % kDevices,
                                      i % 2 ? ss::StreamKind::Blocking : ss::StreamKind::NonBlocking}));
    std::vector<int64_t> hostTime(kThreads, 0), streamTime(kStreams, 0);
    std::vector<uint32_t> lastOnStream(kStreams, 0xffffffffu);
    t.spans.reserve(size_t(ops) * 2 + size_t(ops) / 8);
    t.flows.reserve(size_t(ops) + size_t(ops) / 4);
    for (int64_t op = 0; op < ops; ++op) {
        const int th = int(op % kThreads);
        const int iteration = int(op / kThreads);
        const int st = (2 * th + iteration % 2) % kStreams;
        const uint32_t host = threads[size_t(th)];
        const uint32_t stream = streams[size_t(st)];
        const bool copy = op % 10 == 3;
        const int64_t callStart = hostTime[size_t(th)];
        const int64_t callEnd = callStart + 2500 + op % 1500;
        hostTime[size_t(th)] = callEnd + 300;
        const uint32_t call = t.addSpan({host, ss::SpanKind::ApiCall, copy ? "cudaMemcpyAsync" : "cudaLaunchKernel",
                                         callStart, callEnd, th, iteration % 10, iteration});
        const int64_t start = std::max(callEnd + 1200, streamTime[size_t(st)]);
        const int64_t end = start + (copy ? 20000 : 5000 + (op * 7919) % 90000);
        streamTime[size_t(st)] = end;
        ss::SpanInit g{stream,
                       copy ? (op % 20 == 3 ? ss::SpanKind::MemcpyH2D : ss::SpanKind::MemcpyD2H) : ss::SpanKind::Kernel,
                       copy ? "Memcpy HtoD (Pinned -> Device)" : kKernels[op % std::size(kKernels)],
                       start,
                       end,
                       th,
                       iteration % 10,
                       iteration};
        if (copy)
            g.bytes = 1 << 20;
        else {
            g.grid = ss::Dim3{uint32_t(132 * (1 + op % 4)), 1, 1};
            g.block = ss::Dim3{256, 1, 1};
        }
        const uint32_t gpu = t.addSpan(g);
        t.addFlow(call, gpu, ss::FlowKind::Launch);
        // Every 8th op waits for the previous work of another stream (an event), every 64th the host syncs.
        const int other = (st + 3) % kStreams;
        if (op % 8 == 5 && lastOnStream[size_t(other)] != 0xffffffffu)
            t.addFlow(lastOnStream[size_t(other)], gpu, ss::FlowKind::Event);
        lastOnStream[size_t(st)] = gpu;
        if (op % 64 == 63) {
            const int64_t syncStart = hostTime[size_t(th)];
            const int64_t syncEnd = std::max(syncStart + 1000, end + 500);
            hostTime[size_t(th)] = syncEnd + 200;
            const uint32_t sync =
                t.addSpan({host, ss::SpanKind::Sync, "cudaStreamSynchronize", syncStart, syncEnd, th, 11, iteration});
            t.addFlow(gpu, sync, ss::FlowKind::Sync);
        }
    }
    t.finalize();
    return t;
}

int runGenerate(const Config& cfg)
{
    const auto t0 = std::chrono::steady_clock::now();
    const ss::Trace t = synthetic(cfg.ops);
    ss::Status st;
    if (cfg.format.rfind("streamscope-binary", 0) == 0)
        st = ss::saveTextFileAtomic(cfg.file,
                                    ss::traceToBinary(t, ss::BinaryTraceOptions{cfg.format == "streamscope-binary"}));
    else
        st = ss::exportTrace(t, cfg.file,
                             cfg.format == "streamscope" ? ss::ExportFormat::Streamscope : ss::ExportFormat::Chrome);
    if (!st) {
        std::cerr << "bench_import: " << st.error().toString() << '\n';
        return 1;
    }
    struct stat sb {};
    ::stat(cfg.file.c_str(), &sb);
    nlohmann::ordered_json j;
    j["ops"] = cfg.ops;
    j["bytes"] = int64_t(sb.st_size);
    j["seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    j["spans"] = t.spanCount();
    j["flows"] = t.flows.size();
    std::cout << j.dump() << std::endl;
    return 0;
}

int runImport(const Config& cfg)
{
    const double rss0 = peakRssMb();
    const double cpu0 = cpuSeconds();
    const auto t0 = std::chrono::steady_clock::now();
    // --threads N reads the Chrome file with that many threads (1: one core); else importTraceFile decides.
    auto trace = cfg.threads >= 0 && cfg.format == "chrome"
        ? ss::loadChromeTraceFile(cfg.file, ss::chrome::ReadOptions{unsigned(cfg.threads), 0})
        : ss::importTraceFile(cfg.file);
    const auto t1 = std::chrono::steady_clock::now();
    const double cpu = cpuSeconds() - cpu0;
    if (!trace) {
        std::cerr << "bench_import: " << trace.error().toString() << '\n';
        return 1;
    }
    struct stat sb {};
    ::stat(cfg.file.c_str(), &sb);
    const double seconds = std::chrono::duration<double>(t1 - t0).count();
    const double mb = double(sb.st_size) / (1024.0 * 1024.0);
    nlohmann::ordered_json j;
    j["file_mb"] = mb;
    j["seconds"] = seconds;
    j["cpu_seconds"] = cpu;
    j["threads"] = cfg.threads;
    j["mb_per_second"] = seconds > 0 ? mb / seconds : 0.0;
    j["mb_per_cpu_second"] = cpu > 0 ? mb / cpu : 0.0;
    j["spans"] = trace->spanCount();
    j["flows"] = trace->flows.size();
    j["trace_mb"] = double(trace->memoryBytes()) / (1024.0 * 1024.0);
    j["trace_mb_per_second"] = seconds > 0 ? double(trace->memoryBytes()) / (1024.0 * 1024.0) / seconds : 0.0;
    j["peak_rss_mb"] = peakRssMb();
    j["rss_before_mb"] = rss0;
    j["peak_over_trace"] = trace->memoryBytes() ? peakRssMb() * 1024.0 * 1024.0 / double(trace->memoryBytes()) : 0.0;
    std::cout << j.dump() << std::endl;
    return 0;
}

// SAX events counted, nothing kept: how fast nlohmann's parser alone gets through the file.
struct CountingSax final : nlohmann::json_sax<nlohmann::json> {
    uint64_t events = 0;
    bool null() override { return ++events; }
    bool boolean(bool) override { return ++events; }
    bool number_integer(number_integer_t) override { return ++events; }
    bool number_unsigned(number_unsigned_t) override { return ++events; }
    bool number_float(number_float_t, const string_t&) override { return ++events; }
    bool string(string_t&) override { return ++events; }
    bool binary(binary_t&) override { return ++events; }
    bool start_object(std::size_t) override { return ++events; }
    bool key(string_t&) override { return ++events; }
    bool end_object() override { return ++events; }
    bool start_array(std::size_t) override { return ++events; }
    bool end_array() override { return ++events; }
    bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override { return false; }
};

int runSax(const Config& cfg)
{
    std::FILE* f = std::fopen(cfg.file.c_str(), "rb");
    if (!f) {
        std::cerr << "bench_import: cannot open " << cfg.file << '\n';
        return 1;
    }
    CountingSax sax;
    const double cpu0 = cpuSeconds();
    const auto t0 = std::chrono::steady_clock::now();
    const bool ok = nlohmann::json::sax_parse(f, &sax);
    const auto t1 = std::chrono::steady_clock::now();
    const double cpu = cpuSeconds() - cpu0;
    std::fclose(f);
    struct stat sb {};
    ::stat(cfg.file.c_str(), &sb);
    const double seconds = std::chrono::duration<double>(t1 - t0).count();
    const double mb = double(sb.st_size) / (1024.0 * 1024.0);
    nlohmann::ordered_json j;
    j["ok"] = ok;
    j["seconds"] = seconds;
    j["cpu_seconds"] = cpu;
    j["mb_per_second"] = seconds > 0 ? mb / seconds : 0.0;
    j["mb_per_cpu_second"] = cpu > 0 ? mb / cpu : 0.0;
    j["sax_events"] = sax.events;
    std::cout << j.dump() << std::endl;
    return ok ? 0 : 1;
}

bool parseArgs(int argc, char** argv, Config& cfg)
{
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        auto next = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
        if (arg == "--json") {
            cfg.json = true;
        } else if (arg == "--keep") {
            cfg.keep = true;
        } else if (arg == "--no-sax") {
            cfg.sax = false;
        } else if (arg == "--mb" || arg == "--dir" || arg == "--child" || arg == "--file" || arg == "--ops"
                   || arg == "--format" || arg == "--threads") {
            const char* v = next();
            if (!v)
                return false;
            if (arg == "--mb")
                cfg.mb = std::atoll(v);
            else if (arg == "--dir")
                cfg.dir = v;
            else if (arg == "--child")
                cfg.child = v;
            else if (arg == "--file")
                cfg.file = v;
            else if (arg == "--format")
                cfg.format = v;
            else if (arg == "--threads")
                cfg.threads = std::atoi(v);
            else
                cfg.ops = std::atoll(v);
        } else {
            return false;
        }
    }
    return cfg.mb > 0
        && (cfg.format == "chrome" || cfg.format == "streamscope" || cfg.format == "streamscope-binary"
            || cfg.format == "streamscope-binary-raw");
}

} // namespace

int main(int argc, char** argv)
{
    Config cfg;
    if (!parseArgs(argc, argv, cfg)) {
        std::cerr << "usage: bench_import [--json] [--mb 1024] [--dir DIR] [--keep] [--no-sax] [--format chrome|"
                     "streamscope|streamscope-binary|streamscope-binary-raw] [--threads N]\n";
        return 2;
    }
    if (cfg.child == "generate")
        return runGenerate(cfg);
    if (cfg.child == "import")
        return runImport(cfg);
    if (cfg.child == "sax")
        return runSax(cfg);

    std::string dir = cfg.dir;
    bool madeDir = false;
    if (dir.empty()) {
        std::string tmpl = (std::filesystem::temp_directory_path() / "bench_import.XXXXXX").string();
        if (!mkdtemp(tmpl.data())) {
            std::cerr << "bench_import: cannot create a temporary directory\n";
            return 1;
        }
        dir = tmpl;
        madeDir = true;
    }
    const std::string self = shellQuote(selfPath(argv[0]));
    const bool binary = cfg.format.rfind("streamscope-binary", 0) == 0;
    const std::string file =
        (std::filesystem::path(dir) / (binary ? "bench.sstrace" : "bench." + cfg.format + ".json")).string();
    if (binary)
        cfg.sax = false;

    // Bytes per operation from a small export (uncompressed for the binary formats), then the size asked for.
    const std::string probeFormat = binary ? "streamscope-binary-raw" : cfg.format;
    const nlohmann::json probe =
        runChild(self, "--child generate --ops 20000 --format " + probeFormat + " --file " + shellQuote(file));
    if (probe.is_null() || !probe.contains("bytes")) {
        std::cerr << "bench_import: generating the trace failed\n";
        return 1;
    }
    const double perOp = double(probe["bytes"].get<int64_t>()) / 20000.0;
    const auto ops = int64_t(double(cfg.mb) * 1024.0 * 1024.0 / perOp);
    if (!cfg.json)
        std::printf("bench_import: generating a %s trace of ~%lld MB (%lld operations) in %s\n", cfg.format.c_str(),
                    static_cast<long long>(cfg.mb), static_cast<long long>(ops), dir.c_str());
    const nlohmann::json gen = runChild(self,
                                        "--child generate --ops " + std::to_string(ops) + " --format " + cfg.format
                                            + " --file " + shellQuote(file));
    if (gen.is_null()) {
        std::cerr << "bench_import: generating the trace failed\n";
        return 1;
    }
    const nlohmann::json imp = runChild(self,
                                        "--child import --format " + cfg.format + " --threads "
                                            + std::to_string(cfg.threads) + " --file " + shellQuote(file));
    nlohmann::json sax;
    if (cfg.sax)
        sax = runChild(self, "--child sax --file " + shellQuote(file));
    if (!cfg.keep) {
        std::filesystem::remove(file);
        if (madeDir)
            std::filesystem::remove(dir);
    }
    if (imp.is_null()) {
        std::cerr << "bench_import: importing the trace failed\n";
        return 1;
    }
    nlohmann::ordered_json out;
    out["format"] = cfg.format;
    out["generate"] = gen;
    out["import"] = imp;
    if (cfg.sax)
        out["nlohmann_sax"] = sax;
    if (cfg.json) {
        std::cout << out.dump(2) << std::endl;
        return 0;
    }
    std::printf("file: %.1f MB, %lld spans, %lld flows (generated in %.1f s)\n", imp["file_mb"].get<double>(),
                static_cast<long long>(imp["spans"].get<int64_t>()),
                static_cast<long long>(imp["flows"].get<int64_t>()), gen["seconds"].get<double>());
    std::printf("import:        %6.2f s wall, %6.2f s CPU, %7.1f MB/s (%.1f MB per CPU second) of the file\n",
                imp["seconds"].get<double>(), imp["cpu_seconds"].get<double>(), imp["mb_per_second"].get<double>(),
                imp["mb_per_cpu_second"].get<double>());
    std::printf("               %7.1f MB/s of the trace in memory\n", imp["trace_mb_per_second"].get<double>());
    std::printf("memory:        trace %.1f MB, peak RSS %.1f MB (%.2f x the trace)\n", imp["trace_mb"].get<double>(),
                imp["peak_rss_mb"].get<double>(), imp["peak_over_trace"].get<double>());
    if (cfg.sax && !sax.is_null())
        std::printf("nlohmann SAX:  %6.2f s wall, %6.2f s CPU, %7.1f MB/s, handlers doing nothing\n",
                    sax["seconds"].get<double>(), sax["cpu_seconds"].get<double>(), sax["mb_per_second"].get<double>());
    return 0;
}
