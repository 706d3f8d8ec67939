// streamscope-cli's parts: what its commands share (exit codes, the tables' durations and numbers, the printed
// summaries, scenario arguments) and the commands themselves, one file per group:
//   cli_output.cpp   the shared helpers below;
//   cli_run.cpp      presets, profiles, calibrate, run;
//   cli_traces.cpp   analyze (and compare), check, convert;
//   cli_whatif.cpp   sweep, replay;
//   streamscope_cli.cpp  the command line itself (CLI11) and main.
#pragma once

#include "backend.h"
#include "expect.h"
#include "metrics.h"
#include "ranks.h"
#include "result.h"
#include "scenario_json.h"
#include "trace.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#ifndef STREAMSCOPE_VERSION
#define STREAMSCOPE_VERSION "0.1.0"
#endif

namespace ss = streamscope;

namespace cli {

enum ExitCode : int {
    kExitOk = 0,
    kExitCheckFailed = 1,
    kExitBadInput = 2,
    kExitRuntime = 3,
};

// ---- shared (cli_output.cpp) -----------------------------------------------------------------------------------

int exitCodeOf(ss::ErrorClass cls);
// Prints "error: ..." on stderr and returns `code`.
int fail(const ss::Error& e, int code);
int fail(const std::string& message, int code);
bool cudaBuiltIn();
// The command line's tables: ASCII, µs with two decimals.
std::string formatDuration(int64_t ns);
std::string formatNumber(double v, const char* fmt);
std::string padRight(std::string s, size_t width);
// The command line as a shell would take it back, for the trace's run info.
std::string commandLine(int argc, char** argv);
void printWarnings(const std::vector<ss::Warning>& warnings);
// The desktop app reads these lines ("  device N: NAME") from `run` to name the GPU it found.
void printDevices(const ss::Trace& trace);
// The metrics part of the summaries of `run` and `analyze`.
void printMetrics(const ss::TraceMetrics& m);
void printScenarioLine(const ss::RunInfo& info);
// Prints one PASS/FAIL line per expectation, with the sentence saying why it should hold; true when all passed.
bool printChecks(const ss::Trace& trace, const std::vector<ss::Expectation>& expect);
bool looksLikeFile(const std::string& arg);
// A scenario file, or a lesson by id or number, with the variant applied.
ss::Result<ss::ScenarioReadResult> loadScenarioArg(const std::string& arg, const std::string& variant,
                                                   std::string* file = nullptr);

// ---- commands --------------------------------------------------------------------------------------------------

struct CalibrateArgs {
    int device = 0;
    std::string output;
    int repeats = 5;
    bool quick = false;
    int hostProcesses = 11;
    bool hostCostsOnly = false;
};

struct RunArgs {
    std::string scenario;
    std::string backend = "auto";
    std::string output;
    bool check = false;
    std::string profile;
    std::string variant;
    bool progress = false;
    std::string timing;            // auto, cupti, events, both; empty: the scenario's run.timing
    std::string cuptiCapture;      // where set: the CUPTI records of the last measured iteration (test fixtures)
    std::string injectFault;       // "illegal-address:OP": that kernel op faults (checks what a failed run leaves)
    std::string rendezvous;        // HOST:PORT where the ranks meet, "none"; empty: STREAMSCOPE_RENDEZVOUS, MASTER_ADDR
    double rendezvousTimeout = 60; // seconds, for every wait of the rendezvous
    std::string ncclIdFile;        // GPU runs of collectives under a launcher: where rank 0 leaves NCCL's unique id
};

struct SweepArgs {
    std::string scenario;
    std::string knob = "streams";
    std::vector<double> values;
    std::string backend = "sim";
    std::string profile;
    std::string variant;
    int thread = -1;
    bool json = false;
    std::string timing;
};

struct ReplayArgs {
    std::string trace;
    std::vector<std::string> sets;
    std::string output;
    std::string profile;
    bool json = false;
};

struct MergeArgs {
    std::vector<std::string> inputs; // trace files, or folders of them
    std::string output;
    std::string align = "auto"; // auto, wall-clock
    bool ranksByOrder = false;
};

struct ChosenBackend {
    std::unique_ptr<ss::Backend> backend;
    int exitCode = kExitOk; // non-zero: could not create one
    std::string ncclIdFile; // the files through which rank 0 shares NCCL's unique id (GPU runs under a launcher)
};
// The backend `run` (and a sweep on a GPU) asked for: the GPU where usable, else the simulator (cli_run.cpp). `rank`:
// this process's rank under a launcher (collectives on GPUs then share NCCL's unique id through files).
ChosenBackend chooseBackend(const RunArgs& args, const ss::Scenario& scenario, const ss::RankInfo* rank = nullptr);

int cmdPresets();
int cmdProfiles();
// Measures a device profile on this machine's GPU; progress lines on stderr, the profile to -o or stdout.
int cmdCalibrate(const CalibrateArgs& args, const std::string& command);
int cmdRun(const RunArgs& args, const std::string& command);
// One trace: its summary or JSON analysis; two: their comparison (B - A). `ranks` ("0,3"): one job's two ranks
// compared, rank 0's part of it (A) against rank 3's (B).
int cmdAnalyze(const std::vector<std::string>& paths, bool json, const std::string& ranks = {});
int cmdCheck(const std::string& path);
int cmdConvert(const std::string& in, const std::string& out, const std::string& to);
// Per-rank traces of one job (run under mpirun, srun or torchrun) as one trace on one clock (cli_traces.cpp).
int cmdMerge(const MergeArgs& args);
// Makespan and speedup against one knob: instantly on the simulator, or run by run (with progress) on a GPU.
int cmdSweep(const SweepArgs& args);
// A GPU recording replayed on the simulator with the durations it measured, with settings changed: the replay's
// error on the unchanged run first, then the changed run against the recording.
int cmdReplay(const ReplayArgs& args, const std::string& command);

} // namespace cli
