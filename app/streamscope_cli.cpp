// streamscope-cli: run scenarios and lessons on a GPU or the simulator, analyze, check and convert traces.
// Qt-free, so that it builds on headless GPU servers. Exit codes: 0 success, 1 a check failed, 2 bad input,
// 3 a GPU/runtime error. This file is the command line itself (CLI11); the commands are in cli_*.cpp (cli.h).
#include "cli.h"

#include "resources.h"
#include "whatif.h"

#include <CLI/CLI.hpp>

#include <exception>
#include <functional>
#include <iostream>
#include <new>
#include <string>
#include <vector>

using namespace cli;

namespace {

int runMain(int argc, char** argv)
{
    CLI::App app{"StreamScope: see what CUDA streams do. Runs scenarios and lessons on a GPU or the simulator, "
                 "and analyzes, checks and converts traces.",
                 "streamscope-cli"};
    // The desktop app looks for "no CUDA backend" in the first line to know whether GPU runs are possible at all.
    // The second says where the lessons and profiles come from (an installed tree: its own share/streamscope).
    app.set_version_flag("--version", std::function<std::string()>([] {
                             return std::string("streamscope-cli ") + STREAMSCOPE_VERSION
                                 + (cudaBuiltIn() ? " (CUDA backend built)" : " (no CUDA backend)")
                                 + "\nlessons and profiles: " + ss::resourcesDir();
                         }));
    app.require_subcommand(1);
    app.failure_message([](const CLI::App*, const CLI::Error& e) {
        return "error: " + std::string(e.what()) + "\nRun with --help for more information.\n";
    });
    app.footer("Exit codes: 0 success, 1 a check failed, 2 bad input, 3 GPU or runtime error.");

    app.add_subcommand("presets", "List the lessons: id and title per line");
    app.add_subcommand("profiles", "List the shipped simulator device profiles");

    RunArgs run;
    CLI::App* runCmd = app.add_subcommand("run", "Run a scenario file or a lesson (by id, number or name)");
    runCmd->add_option("scenario", run.scenario, "Scenario JSON file, or a preset: \"01\", \"two-streams\"")
        ->required();
    runCmd->add_option("--backend", run.backend, "auto: the GPU when one is usable, else the simulator")
        ->check(CLI::IsMember({"auto", "cuda", "sim"}))
        ->capture_default_str();
    runCmd->add_option("-o,--output", run.output, "Write the trace here (binary for *.sstrace, else JSON)");
    runCmd->add_flag("--check", run.check, "Evaluate the scenario's expectations; exit 1 if one fails");
    runCmd->add_option("--profile", run.profile, "Simulator device profile: a shipped id or a JSON file");
    runCmd->add_option("--variant", run.variant, "Run this variant of the scenario");
    runCmd->add_flag("--progress", run.progress, "Print \"progress: I/N iterations\" lines on stderr as the run goes");
    runCmd->add_option("--rendezvous", run.rendezvous,
                       "Under a launcher: where the ranks meet to measure their clock offsets to rank 0, HOST:PORT "
                       "(rank 0's host; rank 0 listens), or none; default: STREAMSCOPE_RENDEZVOUS, else torchrun's "
                       "MASTER_ADDR and MASTER_PORT + 1, else no rendezvous");
    runCmd->add_option("--rendezvous-timeout", run.rendezvousTimeout, "Seconds to wait for the other ranks")
        ->capture_default_str()
        ->check(CLI::Range(0.1, 86400.0));
    const auto timingCheck = CLI::IsMember({"auto", "cupti", "events", "both"});
    const char* timingHelp = "GPU timing: cupti (CUPTI activity records; the default where usable), events (CUDA "
                             "events around every op), both (CUPTI plus the events' error); default: the scenario's "
                             "run.timing, else auto";
    runCmd->add_option("--timing", run.timing, timingHelp)->check(timingCheck);
    runCmd->add_option("--nccl-id-file", run.ncclIdFile,
                       "GPU runs of collectives under a launcher: the file through which rank 0 shares NCCL's unique "
                       "id with the other ranks (default: derived from -o, e.g. job.ranks.json.nccl-id)");
    runCmd
        ->add_option("--cupti-capture", run.cuptiCapture,
                     "Write the CUPTI records of the last measured iteration to this file (test fixtures)")
        ->group("");
    runCmd
        ->add_option("--inject-fault", run.injectFault,
                     "illegal-address:OP: every launch of kernel op OP writes to an unmapped address (GPU runs; "
                     "checks what a failed run leaves)")
        ->check([](const std::string& v) {
            return v.starts_with("illegal-address:") && v.size() > std::string_view("illegal-address:").size()
                ? std::string()
                : std::string("expected illegal-address:OP, OP the name of a kernel op");
        })
        ->group("");

    std::vector<std::string> analyzePaths;
    bool analyzeJson = false;
    CLI::App* analyzeCmd = app.add_subcommand(
        "analyze", "Metrics, critical path and diagnostics of a trace; with two traces, compare them (B - A)");
    analyzeCmd->add_option("trace", analyzePaths, "Trace JSON file (two: compare them)")->required()->expected(1, 2);
    analyzeCmd->add_flag("--json", analyzeJson, "Print one JSON object instead");
    std::string analyzeRanks;
    analyzeCmd->add_option(
        "--ranks", analyzeRanks,
        "A job of several ranks: compare two of them, A,B (0,3: rank 0's part (A) against rank 3's)");

    SweepArgs sweep;
    CLI::App* sweepCmd = app.add_subcommand("sweep", "Vary one knob of a scenario and report makespan and speedup");
    sweepCmd->add_option("scenario", sweep.scenario, "Scenario JSON file or a preset")->required();
    sweepCmd->add_option("--knob", sweep.knob, "streams, chunks or kernel-size")
        ->check(CLI::IsMember({"streams", "chunks", "kernel-size"}))
        ->capture_default_str();
    sweepCmd->add_option("--values", sweep.values, "Values to try, e.g. 1,2,4,8 (default: the knob's range)")
        ->delimiter(',');
    sweepCmd->add_option("--backend", sweep.backend, "sim (instant) or cuda/auto (one GPU run per value)")
        ->check(CLI::IsMember({"auto", "cuda", "sim"}))
        ->capture_default_str();
    sweepCmd->add_option("--profile", sweep.profile, "Simulator device profile");
    sweepCmd->add_option("--variant", sweep.variant, "Sweep this variant of the scenario");
    sweepCmd->add_option("--thread", sweep.thread, "chunks, kernel-size: only this scenario thread (index)");
    sweepCmd->add_flag("--json", sweep.json, "Print one JSON object");
    sweepCmd->add_option("--timing", sweep.timing, timingHelp)->check(timingCheck);

    ReplayArgs replay;
    CLI::App* replayCmd = app.add_subcommand(
        "replay",
        "Simulate a GPU recording with the durations it measured, with one setting changed, beside the "
        "recording (the replay's error on the unchanged run first)");
    replayCmd->add_option("trace", replay.trace, "A trace StreamScope recorded on a GPU (its scenario is embedded)")
        ->required();
    std::string setHelp = "Change a setting (repeatable):";
    for (const auto& k : ss::replayKeys())
        setHelp += " " + k.key + "=" + k.values + ";";
    setHelp.pop_back();
    replayCmd->add_option("--set", replay.sets, setHelp)->expected(1)->take_all();
    replayCmd->add_option("-o,--output", replay.output, "Write the replayed (changed) trace here");
    replayCmd->add_option("--profile", replay.profile, "Simulator device profile for what is modelled");
    replayCmd->add_flag("--json", replay.json, "Print one JSON object");

    CalibrateArgs calibrate;
    CLI::App* calibrateCmd = app.add_subcommand(
        "calibrate", "Measure a simulator device profile on this machine's GPU (progress on stderr)");
    calibrateCmd->add_option("--device", calibrate.device, "CUDA device index")
        ->capture_default_str()
        ->check(CLI::NonNegativeNumber);
    calibrateCmd->add_option("-o,--output", calibrate.output, "Write the profile (JSON) here; default: stdout");
    calibrateCmd->add_option("--repeats", calibrate.repeats, "Repeats per figure (the median is kept)")
        ->capture_default_str()
        ->check(CLI::Range(1, 100));
    calibrateCmd->add_flag("--quick", calibrate.quick, "Fewer calls per repeat and smaller problems (rougher figures)");
    calibrateCmd
        ->add_option("--host-processes", calibrate.hostProcesses,
                     "Measure the host API costs and pageable copies again in this many fresh processes and keep their "
                     "mean less the highest and lowest tenth (both differ from process to process; 0: this "
                     "process only)")
        ->capture_default_str()
        ->check(CLI::Range(0, 100));
    // What each of those processes runs; not for users.
    calibrateCmd->add_flag("--host-costs-only", calibrate.hostCostsOnly)->group("");

    std::string checkPath;
    CLI::App* checkCmd = app.add_subcommand("check", "Evaluate the expectations of the scenario in a trace");
    checkCmd->add_option("trace", checkPath, "Trace JSON file")->required();

    std::string convertIn;
    std::string convertOut;
    std::string convertTo; // by the output's name: streamscope-binary for *.sstrace, else streamscope
    CLI::App* convertCmd = app.add_subcommand(
        "convert",
        "Convert a trace (StreamScope, Chrome/Perfetto, PyTorch, Nsight Systems SQLite, CSV) to another format");
    convertCmd->add_option("input", convertIn, "Input trace")->required();
    convertCmd->add_option("-o,--output", convertOut, "Output file")->required();
    convertCmd
        ->add_option("--to", convertTo,
                     "Output format; default: streamscope-binary for an output named *.sstrace, else streamscope "
                     "(JSON)")
        ->check(CLI::IsMember({"streamscope", "streamscope-binary", "chrome", "perfetto", "csv"}));

    MergeArgs merge;
    CLI::App* mergeCmd = app.add_subcommand(
        "merge", "Merge the per-rank traces of one job (run under mpirun, srun or torchrun) into one trace");
    mergeCmd->add_option("traces", merge.inputs, "Per-rank trace files, or folders of them")->required();
    mergeCmd->add_option("-o,--output", merge.output, "The merged trace")->required();
    mergeCmd
        ->add_option("--align", merge.align,
                     "How to align ranks on several hosts: auto (refuse: they share no clock) or wall-clock "
                     "(each host's system clock; its error is not known)")
        ->check(CLI::IsMember({"auto", "wall-clock"}))
        ->capture_default_str();
    mergeCmd->add_flag("--ranks-by-order", merge.ranksByOrder,
                       "Traces without a rank (not run under a launcher) get their order on the command line");

    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        app.exit(e);
        return kExitBadInput;
    }

    if (app.got_subcommand("presets"))
        return cmdPresets();
    if (app.got_subcommand("profiles"))
        return cmdProfiles();
    if (*runCmd)
        return cmdRun(run, commandLine(argc, argv));
    if (*analyzeCmd)
        return cmdAnalyze(analyzePaths, analyzeJson, analyzeRanks);
    if (*checkCmd)
        return cmdCheck(checkPath);
    if (*calibrateCmd)
        return cmdCalibrate(calibrate, commandLine(argc, argv));
    if (*sweepCmd)
        return cmdSweep(sweep);
    if (*replayCmd)
        return cmdReplay(replay, commandLine(argc, argv));
    if (*convertCmd)
        return cmdConvert(convertIn, convertOut, convertTo);
    if (*mergeCmd)
        return cmdMerge(merge);
    return kExitBadInput;
}

} // namespace

int main(int argc, char** argv)
{
    try {
        return runMain(argc, argv);
    } catch (const std::bad_alloc&) {
        std::cerr << "error: out of memory\n";
        return kExitRuntime;
    } catch (const std::exception& e) {
        std::cerr << "error: " << e.what() << '\n';
        return kExitRuntime;
    }
}
