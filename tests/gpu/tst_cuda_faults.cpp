// GPU faults, as a user meets them: streamscope-cli (what the window starts for every GPU run) is run as a child
// process on a scenario that fails on the GPU — out of memory, an illegal address in a kernel, a device that does
// not exist — and on one whose kernel never ends, which is cancelled. Each must end in seconds with exit code 3
// and CUDA's message (the cancelled one when signalled), leave a readable partial trace, and the next run on the
// same GPU must work.
#include "gpu_test_support.h"
#include "trace_json.h"

#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace streamscope::gputest {
namespace {

namespace fs = std::filesystem;

struct Child {
    int exitCode = -1;  // exit status, or -1 when it did not exit by itself
    int signal = 0;     // the signal that ended it, if any
    double seconds = 0; // from start to exit
    std::string output; // stdout and stderr
};

class Faults : public ::testing::Test {
protected:
    void SetUp() override
    {
        dir = fs::temp_directory_path() / ("streamscope-faults-" + std::to_string(::getpid()));
        fs::create_directories(dir);
    }
    void TearDown() override
    {
        std::error_code ec;
        fs::remove_all(dir, ec);
    }

    std::string write(const std::string& name, const std::string& text) const
    {
        const fs::path p = dir / name;
        std::ofstream(p) << text;
        return p.string();
    }

    // Starts streamscope-cli with the arguments; when killAfter > 0, sends SIGTERM after that many seconds (as
    // the window's Cancel does, followed by SIGKILL 1.5 s later). Gives up (SIGKILL) after `limit` seconds.
    Child cli(const std::vector<std::string>& args, double killAfter = 0, double limit = 60) const
    {
        const std::string log = (dir / "child.log").string();
        posix_spawn_file_actions_t actions;
        posix_spawn_file_actions_init(&actions);
        posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        posix_spawn_file_actions_adddup2(&actions, 1, 2);
        std::vector<std::string> all{STREAMSCOPE_CLI};
        all.insert(all.end(), args.begin(), args.end());
        std::vector<char*> argv;
        for (auto& a : all)
            argv.push_back(a.data());
        argv.push_back(nullptr);
        pid_t pid = 0;
        const auto t0 = std::chrono::steady_clock::now();
        const int rc = posix_spawn(&pid, STREAMSCOPE_CLI, &actions, nullptr, argv.data(), environ);
        posix_spawn_file_actions_destroy(&actions);
        Child c;
        if (rc != 0) {
            c.output = "posix_spawn failed";
            return c;
        }
        auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
        bool termSent = false;
        int status = 0;
        for (;;) {
            const pid_t done = ::waitpid(pid, &status, WNOHANG);
            if (done == pid)
                break;
            if (killAfter > 0 && !termSent && elapsed() >= killAfter) {
                ::kill(pid, SIGTERM);
                termSent = true;
            }
            if (termSent && elapsed() >= killAfter + 1.5)
                ::kill(pid, SIGKILL);
            if (elapsed() >= limit)
                ::kill(pid, SIGKILL);
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        c.seconds = elapsed();
        if (WIFEXITED(status))
            c.exitCode = WEXITSTATUS(status);
        if (WIFSIGNALED(status))
            c.signal = WTERMSIG(status);
        std::ifstream in(log);
        std::stringstream ss;
        ss << in.rdbuf();
        c.output = ss.str();
        return c;
    }

    // The next run on the GPU works: a small scenario, exit 0.
    void expectTheNextRunWorks() const
    {
        const std::string ok = write("ok.json", R"({"format": "streamscope-scenario", "version": 1, "id": "ok",
            "streams": [{"name": "s", "kind": "non-blocking"}],
            "threads": [{"name": "main", "ops": [{"op": "kernel", "stream": "s", "kernel": "spin",
                                                  "grid": 1, "block": 32, "duration_us": 50, "name": "fine"}]}]})");
        const Child c = cli({"run", ok, "--backend", "cuda"});
        EXPECT_EQ(c.exitCode, 0) << c.output;
    }

    fs::path dir;
};

// The partial trace exists and reads back: the run's tracks, and what was issued before the failure.
Trace readPartialTrace(const std::string& path)
{
    auto t = loadTraceFile(path);
    EXPECT_TRUE(t.ok()) << (t ? std::string() : t.error().toString());
    return t ? std::move(t).value() : Trace{};
}

const char* kFaultScenario = R"({"format": "streamscope-scenario", "version": 1, "id": "fault",
    "streams": [{"name": "s", "kind": "non-blocking"}],
    "run": {"warmup": 0, "iterations": 1},
    "threads": [{"name": "main", "ops": [
        {"op": "kernel", "stream": "s", "kernel": "spin", "grid": 1, "block": 32, "duration_us": 100, "name": "before"},
        {"op": "kernel", "stream": "s", "kernel": "spin", "grid": 1, "block": 32, "duration_us": 10, "name": "boom"},
        {"op": "kernel", "stream": "s", "kernel": "spin", "grid": 1, "block": 32, "duration_us": 100, "name": "after"},
        {"op": "device-sync"}]}]})";

TEST_F(Faults, IllegalAddressInAKernel)
{
    STREAMSCOPE_REQUIRE_GPU();
    const std::string scenario = write("fault.json", kFaultScenario);
    const std::string out = (dir / "illegal.json").string();
    const Child c = cli({"run", scenario, "--backend", "cuda", "--inject-fault", "illegal-address:boom", "-o", out});
    std::cout << "illegal address: exit " << c.exitCode << " after " << c.seconds << " s\n" << c.output;
    EXPECT_EQ(c.exitCode, 3) << c.output;
    EXPECT_NE(c.output.find("illegal memory access"), std::string::npos) << "CUDA's message: " << c.output;
    EXPECT_NE(c.output.find("partial trace written"), std::string::npos) << c.output;
    EXPECT_LT(c.seconds, 30.0);
    const Trace t = readPartialTrace(out);
    EXPECT_FALSE(t.tracks.empty());
    EXPECT_GE(countSpansNamed(t, "cudaLaunchKernel"), 1u) << "the host calls issued before the failure are kept";
    expectTheNextRunWorks();
}

TEST_F(Faults, OutOfMemory)
{
    STREAMSCOPE_REQUIRE_GPU();
    // More than any GPU has, asked for in the issue path after a kernel was issued.
    const std::string scenario = write("oom.json", R"({"format": "streamscope-scenario", "version": 1, "id": "oom",
        "streams": [{"name": "s", "kind": "non-blocking"}],
        "run": {"warmup": 0, "iterations": 1},
        "threads": [{"name": "main", "ops": [
            {"op": "kernel", "stream": "s", "kernel": "spin", "grid": 1, "block": 32, "duration_us": 100, "name": "before"},
            {"op": "malloc", "bytes": 1099511627776000},
            {"op": "kernel", "stream": "s", "kernel": "spin", "grid": 1, "block": 32, "duration_us": 100, "name": "after"}]}]})");
    const std::string out = (dir / "oom-trace.json").string();
    const Child c = cli({"run", scenario, "--backend", "cuda", "-o", out});
    std::cout << "out of memory: exit " << c.exitCode << " after " << c.seconds << " s\n" << c.output;
    EXPECT_EQ(c.exitCode, 3) << c.output;
    EXPECT_NE(c.output.find("out of memory"), std::string::npos) << "CUDA's message: " << c.output;
    EXPECT_LT(c.seconds, 30.0);
    const Trace t = readPartialTrace(out);
    EXPECT_EQ(countSpansNamed(t, "before"), 1u) << "the kernel issued before the failure is kept";
    EXPECT_EQ(countSpansNamed(t, "after"), 0u);
    expectTheNextRunWorks();
}

TEST_F(Faults, DeviceThatDoesNotExist)
{
    STREAMSCOPE_REQUIRE_GPU();
    const int bad = probe().deviceCount;
    const std::string d = std::to_string(bad);
    const std::string scenario = write("nodev.json",
                                       R"({"format": "streamscope-scenario", "version": 1,
        "id": "no-such-device", "devices": [{"index": )"
                                           + d + R"(}],
        "streams": [{"name": "s", "kind": "non-blocking", "device": )"
                                           + d + R"(}],
        "threads": [{"name": "main", "device": )"
                                           + d + R"(, "ops": [
            {"op": "kernel", "stream": "s", "kernel": "spin", "grid": 1, "block": 32, "duration_us": 10}]}]})");
    const std::string out = (dir / "nodev-trace.json").string();
    const Child c = cli({"run", scenario, "--backend", "cuda", "-o", out});
    std::cout << "invalid device: exit " << c.exitCode << " after " << c.seconds << " s\n" << c.output;
    EXPECT_EQ(c.exitCode, 3) << c.output;
    EXPECT_NE(c.output.find("device " + d + " does not exist"), std::string::npos) << c.output;
    EXPECT_LT(c.seconds, 30.0);
    const Trace t = readPartialTrace(out);
    EXPECT_FALSE(t.tracks.empty());
    expectTheNextRunWorks();
}

// A kernel that runs for an hour: the window's Cancel (SIGTERM, then SIGKILL 1.5 s later) ends the run at once,
// and the GPU is free for the next run.
TEST_F(Faults, KernelThatNeverEndsIsCancelled)
{
    STREAMSCOPE_REQUIRE_GPU();
    const std::string scenario = write("forever.json", R"({"format": "streamscope-scenario", "version": 1,
        "id": "forever", "streams": [{"name": "s", "kind": "non-blocking"}],
        "run": {"warmup": 0, "iterations": 1},
        "threads": [{"name": "main", "ops": [
            {"op": "kernel", "stream": "s", "kernel": "spin", "grid": 1, "block": 32, "duration_us": 3600000000, "name": "forever"},
            {"op": "device-sync"}]}]})");
    const Child c = cli({"run", scenario, "--backend", "cuda", "-o", (dir / "forever-trace.json").string()}, 5.0);
    std::cout << "never-ending kernel: exit " << c.exitCode << ", signal " << c.signal << " after " << c.seconds
              << " s\n"
              << c.output;
    EXPECT_TRUE(c.signal == SIGTERM || c.signal == SIGKILL || c.exitCode == 3) << c.output;
    EXPECT_LT(c.seconds, 5.0 + 1.5 + 2.0) << "cancelling took longer than the window waits";
    const auto t0 = std::chrono::steady_clock::now();
    expectTheNextRunWorks();
    const double next = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::cout << "next run after the cancel: " << next << " s\n";
    EXPECT_LT(next, 30.0) << "the cancelled kernel still held the GPU";
}

} // namespace
} // namespace streamscope::gputest
