// Collective ops on GPUs through NCCL (docs/RANKS.md "Collectives on GPUs"): where libnccl.so.2 is looked for (no
// GPU needed), the clear error when it is missing (no GPU needed: said before CUDA is touched), and on a GPU a job of
// one rank (docs/examples/nccl-collectives.json) through the API and through streamscope-cli under a launcher's
// variables, a job of more ranks than GPUs refused, and, where the machine has two GPUs, two ranks in one process
// and two ranks as two processes merged into one job. The GPU tests skip without a GPU or without NCCL.
#include "gpu_test_support.h"
#include "nccl_loader.h"
#include "trace_json.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace streamscope::gputest {
namespace {

namespace fs = std::filesystem;

// Skips the test, saying why, where NCCL cannot be loaded.
#define STREAMSCOPE_REQUIRE_NCCL()                                                                                     \
    do {                                                                                                               \
        if (const std::string why = ::streamscope::loadNccl(); !why.empty())                                           \
            GTEST_SKIP() << "NCCL not usable: " << why;                                                                \
    } while (0)

class TempDir {
public:
    TempDir()
    {
        m_path = fs::temp_directory_path()
            / ("streamscope-nccl-" + std::to_string(::getpid()) + "-" + std::to_string(s_next++));
        fs::create_directories(m_path);
    }
    ~TempDir()
    {
        std::error_code ec;
        fs::remove_all(m_path, ec);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    const fs::path& path() const { return m_path; }
    std::string file(const std::string& relative, const std::string& text = "x") const
    {
        const fs::path p = m_path / relative;
        fs::create_directories(p.parent_path());
        std::ofstream(p) << text;
        return p.string();
    }

private:
    fs::path m_path;
    static inline int s_next = 0;
};

NcclEnvLookup table(std::map<std::string, std::string> vars)
{
    return [vars = std::move(vars)](const char* name) -> const char* {
        const auto it = vars.find(name);
        return it == vars.end() ? nullptr : it->second.c_str();
    };
}

struct CliRun {
    int code = -1;
    std::string output; // stdout and stderr
};

std::string quoted(const std::string& s)
{
    std::string out = "'";
    for (char c : s)
        out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

// Starts streamscope-cli with `env` (VAR=value words) and the arguments, in `dir`; finish() waits for it.
FILE* startCli(const std::string& env, const std::vector<std::string>& args, const fs::path& dir)
{
    std::string cmd = "cd " + quoted(dir.string()) + " && env " + env + " " + quoted(STREAMSCOPE_CLI);
    for (const auto& a : args)
        cmd += " " + quoted(a);
    cmd += " 2>&1";
    return ::popen(cmd.c_str(), "r");
}

CliRun finish(FILE* pipe)
{
    CliRun r;
    if (!pipe)
        return r;
    std::array<char, 4096> buf{};
    size_t n = 0;
    while ((n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0)
        r.output.append(buf.data(), n);
    const int status = ::pclose(pipe);
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return r;
}

CliRun cli(const std::string& env, const std::vector<std::string>& args, const fs::path& dir)
{
    return finish(startCli(env, args, dir));
}

std::string setting(const Trace& t, const std::string& key)
{
    for (const auto& [k, v] : t.info.settings)
        if (k == key)
            return v;
    return {};
}

// The GPU spans of a trace's collective ops (by the scenario it embeds).
struct CollectiveSpans {
    size_t count = 0;
    std::vector<std::string> problems;
};

CollectiveSpans collectiveSpans(const Trace& t, const Scenario& s)
{
    CollectiveSpans out;
    const auto& sp = t.spans;
    for (uint32_t i = 0; i < t.spanCount(); ++i) {
        if (!isGpuSpan(sp.kind[i]) || sp.threadOf(i) < 0 || sp.opOf(i) < 0
            || size_t(sp.threadOf(i)) >= s.threads.size())
            continue;
        const auto& ops = s.threads[size_t(sp.threadOf(i))].ops;
        if (size_t(sp.opOf(i)) >= ops.size() || ops[size_t(sp.opOf(i))].kind != OpKind::Collective)
            continue;
        const Op& op = ops[size_t(sp.opOf(i))];
        ++out.count;
        const std::string where = std::string(t.spanName(i)) + " (span " + std::to_string(i) + ")";
        if (sp.kind[i] != SpanKind::Kernel)
            out.problems.push_back(where + ": not of kind kernel");
        if (t.spanName(i) != displayName(op))
            out.problems.push_back(where + ": named other than its op, " + displayName(op));
        if (sp.bytesOf(i) != op.bytes)
            out.problems.push_back(where + ": " + std::to_string(sp.bytesOf(i)) + " bytes, the op says "
                                   + std::to_string(op.bytes));
        if (sp.end[i] <= sp.start[i] || sp.end[i] - sp.start[i] > 1'000'000'000)
            out.problems.push_back(where + ": duration " + std::to_string(sp.end[i] - sp.start[i]) + " ns");
    }
    return out;
}

Scenario example()
{
    auto loaded = loadScenarioFile(STREAMSCOPE_NCCL_EXAMPLE);
    EXPECT_TRUE(loaded.ok()) << (loaded.ok() ? "" : loaded.error().toString());
    return loaded.ok() ? loaded->scenario : Scenario{};
}

// Collective calls per measured run of the example: iterations x repeat x collective ops.
size_t exampleCalls(const Scenario& s)
{
    size_t perPass = 0;
    for (const Op& op : s.threads[0].ops)
        perPass += op.kind == OpKind::Collective ? 1 : 0;
    return size_t(s.run.iterations) * size_t(s.threads[0].repeat) * perPass;
}

// ---- where NCCL is looked for (no GPU) ------------------------------------------------------------------------

TEST(NcclLoader, TheEnvironmentNamesTheOnlyFile)
{
    const NcclSearch s = ncclSearchList(table({{"STREAMSCOPE_NCCL_LIBRARY", "/opt/nccl/libnccl.so.2"}}));
    ASSERT_EQ(s.candidates.size(), 1u);
    EXPECT_EQ(s.candidates[0], "/opt/nccl/libnccl.so.2");
    EXPECT_EQ(s.fromEnvironment, "/opt/nccl/libnccl.so.2");
}

TEST(NcclLoader, SearchOrderLoaderThenCudaThenPythonPackages)
{
    TempDir d;
    const std::string root = (d.path() / "usr" / "lib").string();
    const std::string a = d.file("usr/lib/python3.12/dist-packages/nvidia/nccl/lib/libnccl.so.2");
    const std::string b = d.file("usr/lib/python3.10/site-packages/nvidia/nccl/lib/libnccl.so.2");
    d.file("usr/lib/python3.11/site-packages/nvidia/cublas/lib/libcublas.so.12"); // no NCCL there
    d.file("usr/lib/python2.7/site-packages/nvidia/nccl/lib/libnccl.so.2");       // not Python 3
    const NcclSearch s =
        ncclSearchList(table({}), {root, (d.path() / "missing").string()}, {"/cuda/lib64", "/cuda/lib"});
    const std::vector<std::string> expected{"libnccl.so.2", "/cuda/lib64/libnccl.so.2", "/cuda/lib/libnccl.so.2", b, a};
    EXPECT_EQ(s.candidates, expected);
    EXPECT_TRUE(s.fromEnvironment.empty());
}

TEST(NcclLoader, DefaultRootsFollowVirtualEnvCondaAndHome)
{
    TempDir d;
    const std::string venv = d.file("venv/lib/python3.11/site-packages/nvidia/nccl/lib/libnccl.so.2");
    const std::string conda = d.file("conda/lib/python3.10/site-packages/nvidia/nccl/lib/libnccl.so.2");
    const std::string home = d.file("home/.local/lib/python3.12/site-packages/nvidia/nccl/lib/libnccl.so.2");
    const NcclSearch s = ncclSearchList(table({{"VIRTUAL_ENV", (d.path() / "venv").string()},
                                               {"CONDA_PREFIX", (d.path() / "conda").string()},
                                               {"HOME", (d.path() / "home").string()}}));
    ASSERT_GE(s.candidates.size(), 6u);
    EXPECT_EQ(s.candidates[0], "libnccl.so.2");
    EXPECT_EQ(s.candidates[1], "/usr/local/cuda/lib64/libnccl.so.2");
    EXPECT_EQ(s.candidates[2], "/usr/local/cuda/lib/libnccl.so.2");
    const auto& c = s.candidates;
    const auto at = [&](const std::string& p) { return std::find(c.begin(), c.end(), p) - c.begin(); };
    EXPECT_LT(at(venv), at(conda));
    EXPECT_LT(at(conda), at(home));
    EXPECT_LT(at(home), std::ptrdiff_t(c.size()));
}

TEST(NcclLoader, LoadsWhereInstalled)
{
    STREAMSCOPE_REQUIRE_NCCL();
    EXPECT_FALSE(ncclVersionText().empty());
    EXPECT_FALSE(ncclLoadedFrom().empty());
    std::cout << "NCCL " << ncclVersionText() << " from " << ncclLoadedFrom() << '\n';
}

// A missing library: exit 3, the file named, before any GPU is looked for (so this runs without one).
TEST(NcclCli, MissingLibraryIsAClearError)
{
    if (!ncclBuiltIntoBackend())
        GTEST_SKIP() << "this build has no NCCL support (nccl.h not found at build time)";
    TempDir d;
    const CliRun r =
        cli("STREAMSCOPE_NCCL_LIBRARY=/nonexistent", {"run", STREAMSCOPE_NCCL_EXAMPLE, "--backend", "cuda"}, d.path());
    EXPECT_EQ(r.code, 3) << r.output;
    EXPECT_NE(r.output.find("NCCL could not be loaded from STREAMSCOPE_NCCL_LIBRARY=/nonexistent"), std::string::npos)
        << r.output;
    EXPECT_NE(r.output.find("/nonexistent: no such file"), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find("Segmentation"), std::string::npos) << r.output;
}

// What NCCL cannot run is refused (exit 2) before any CUDA call, so this runs without a GPU: a send to the rank's own
// rank (NCCL pairs it with its recv in one group call only) and collectives in a worker pool (no fixed issue order).
TEST(NcclChecks, RefusedBeforeCudaIsTouched)
{
    if (!ncclBuiltIntoBackend())
        GTEST_SKIP() << "this build has no NCCL support (nccl.h not found at build time)";
    STREAMSCOPE_REQUIRE_NCCL();
    const std::string base = R"({"format": "streamscope-scenario", "version": 1, "devices": [{"index": 0}],
        "streams": [{"name": "comm", "kind": "non-blocking"}], "threads": [{"name": "t", )";
    const std::vector<std::pair<std::string, std::string>> cases{
        {base + R"("ops": [{"op": "send", "stream": "comm", "bytes": 1024, "peer": 0}]}]})", "names its own rank"},
        {base + R"("workers": 2, "repeat": 2, "ops": [{"op": "all-reduce", "stream": "comm", "bytes": 1024}]}]})",
         "worker pool"},
    };
    for (const auto& [text, expected] : cases) {
        auto parsed = parseScenario(text, "case.json");
        ASSERT_TRUE(parsed.ok()) << parsed.error().toString();
        auto backend = makeCudaBackend();
        const RunOutcome out = runScenario(parsed->scenario, *backend);
        ASSERT_FALSE(out.status.ok()) << text;
        EXPECT_EQ(out.status.errorClass(), ErrorClass::BadInput) << out.status.error().toString();
        EXPECT_NE(out.status.error().toString().find(expected), std::string::npos) << out.status.error().toString();
    }
}

// ---- on a GPU ----------------------------------------------------------------------------------------------------

// One rank on one GPU: every call of every iteration is one collective span, with the op's name and bytes, under
// CUPTI (the default) and under events.
TEST(NcclGpu, OneRankJobGivesOneSpanPerCall)
{
    STREAMSCOPE_REQUIRE_GPU();
    STREAMSCOPE_REQUIRE_NCCL();
    const Scenario s = example();
    ASSERT_FALSE(s.threads.empty());
    applyCudaEnvironment(s);
    for (TimingMode timing : {TimingMode::Auto, TimingMode::Events}) {
        SCOPED_TRACE(std::string("timing ") + (timing == TimingMode::Auto ? "auto" : "events"));
        CudaBackendOptions options;
        options.timing = timing;
        auto backend = makeCudaBackend(options);
        const RunOutcome out = runScenario(s, *backend);
        ASSERT_TRUE(out.status.ok()) << out.status.error().toString();
        auto job = expandJob(s, 1);
        ASSERT_TRUE(job.ok());
        const CollectiveSpans c = collectiveSpans(out.trace, *job);
        EXPECT_EQ(c.count, exampleCalls(s));
        for (const auto& p : c.problems)
            ADD_FAILURE() << p;
        EXPECT_NE(setting(out.trace, "nccl").find("NCCL "), std::string::npos) << setting(out.trace, "nccl");
        std::cout << "nccl: " << setting(out.trace, "nccl")
                  << "\ncollective timing: " << setting(out.trace, "collective_timing") << '\n';
    }
}

// Under a launcher's variables (Open MPI, world size 1), through streamscope-cli: the rank's trace has every call.
TEST(NcclGpu, OneRankUnderALauncher)
{
    STREAMSCOPE_REQUIRE_GPU();
    STREAMSCOPE_REQUIRE_NCCL();
    TempDir d;
    const CliRun r = cli("OMPI_COMM_WORLD_RANK=0 OMPI_COMM_WORLD_SIZE=1 OMPI_COMM_WORLD_LOCAL_RANK=0",
                         {"run", STREAMSCOPE_NCCL_EXAMPLE, "--backend", "cuda", "-o", "job.%r.json"}, d.path());
    ASSERT_EQ(r.code, 0) << r.output;
    auto trace = loadTraceFile((d.path() / "job.0.json").string());
    ASSERT_TRUE(trace.ok()) << trace.error().toString();
    auto own = scenarioForRank(example(), 0, 0);
    ASSERT_TRUE(own.ok());
    const CollectiveSpans c = collectiveSpans(*trace, *own);
    EXPECT_EQ(c.count, exampleCalls(*own));
    for (const auto& p : c.problems)
        ADD_FAILURE() << p;
}

// More ranks than GPUs in one process: refused (exit 2), saying how many GPUs the job needs.
TEST(NcclGpu, MoreRanksThanGpusAreRefused)
{
    STREAMSCOPE_REQUIRE_GPU();
    STREAMSCOPE_REQUIRE_NCCL();
    TempDir d;
    const int ranks = probe().deviceCount + 1;
    std::ifstream in(STREAMSCOPE_NCCL_EXAMPLE);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::string from = "\"count\": 1";
    ASSERT_NE(text.find(from), std::string::npos);
    text.replace(text.find(from), from.size(), "\"count\": " + std::to_string(ranks));
    const std::string file = d.file("many.json", text);
    const CliRun r = cli("NCCL_NVLS_ENABLE=0", {"run", file, "--backend", "cuda"}, d.path());
    EXPECT_EQ(r.code, 2) << r.output;
    EXPECT_NE(r.output.find("needs " + std::to_string(ranks) + " GPUs"), std::string::npos) << r.output;
}

// Two ranks in one process, one GPU each: each rank's calls are linked across the ranks.
TEST(NcclGpu, TwoRanksInOneProcess)
{
    STREAMSCOPE_REQUIRE_GPU();
    STREAMSCOPE_REQUIRE_NCCL();
    if (probe().deviceCount < 2)
        GTEST_SKIP() << "needs 2 GPUs, this machine has " << probe().deviceCount;
    Scenario s = example();
    s.ranks.count = 2;
    applyCudaEnvironment(s);
    auto backend = makeCudaBackend();
    const RunOutcome out = runScenario(s, *backend);
    ASSERT_TRUE(out.status.ok()) << out.status.error().toString();
    auto job = expandJob(s, 2);
    ASSERT_TRUE(job.ok());
    const CollectiveSpans c = collectiveSpans(out.trace, *job);
    EXPECT_EQ(c.count, 2 * exampleCalls(s));
    for (const auto& p : c.problems)
        ADD_FAILURE() << p;
    EXPECT_NE(setting(out.trace, "collectives").find(std::to_string(exampleCalls(s)) + " calls linked"),
              std::string::npos)
        << setting(out.trace, "collectives");
}

// Two ranks as two processes under a launcher's variables (rank 0's NCCL id through a file), then merged: one job
// whose calls are linked across the ranks.
TEST(NcclGpu, TwoRanksUnderALauncherMerge)
{
    STREAMSCOPE_REQUIRE_GPU();
    STREAMSCOPE_REQUIRE_NCCL();
    if (probe().deviceCount < 2)
        GTEST_SKIP() << "needs 2 GPUs, this machine has " << probe().deviceCount;
    TempDir d;
    std::vector<FILE*> ranks;
    for (int r = 0; r < 2; ++r)
        // The job key: each rank's parent here is a shell of its own, not one launcher daemon.
        ranks.push_back(startCli("PMIX_NAMESPACE=streamscope-test-" + std::to_string(::getpid())
                                     + " OMPI_COMM_WORLD_RANK=" + std::to_string(r) + " OMPI_COMM_WORLD_SIZE=2 "
                                     + "OMPI_COMM_WORLD_LOCAL_RANK=" + std::to_string(r),
                                 {"run", STREAMSCOPE_NCCL_EXAMPLE, "--backend", "cuda", "-o", "job.%r.json",
                                  "--nccl-id-file", (d.path() / "id").string()},
                                 d.path()));
    for (int r = 0; r < 2; ++r) {
        const CliRun done = finish(ranks[size_t(r)]);
        EXPECT_EQ(done.code, 0) << "rank " << r << ":\n" << done.output;
    }
    const CliRun merged = cli("", {"merge", "job.0.json", "job.1.json", "-o", "job.json"}, d.path());
    ASSERT_EQ(merged.code, 0) << merged.output;
    const CliRun analyzed = cli("", {"analyze", "job.json"}, d.path());
    EXPECT_EQ(analyzed.code, 0) << analyzed.output;
    std::cout << merged.output << analyzed.output;
    auto trace = loadTraceFile((d.path() / "job.json").string());
    ASSERT_TRUE(trace.ok()) << trace.error().toString();
    size_t links = 0;
    for (const Flow& f : trace->flows)
        links += f.kind == FlowKind::Collective ? 1 : 0;
    const Scenario s = example();
    EXPECT_EQ(links, exampleCalls(s)) << "one collective flow per call of two ranks";
    EXPECT_FALSE(fs::exists(d.path() / "id.0")) << "rank 0 removes the id file once every rank has read it";
}

} // namespace
} // namespace streamscope::gputest
