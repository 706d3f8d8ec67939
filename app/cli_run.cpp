// streamscope-cli presets, profiles, calibrate and run: the lessons and profiles shipped, a device profile measured,
// and a scenario run on the GPU or the simulator (which backend, the run's summary, its trace).
#include "cli.h"

#include "analysis.h"
#include "clock_alignment.h"
#include "device_profile.h"
#include "diagnostics.h"
#include "expect.h"
#include "job.h"
#include "metrics.h"
#include "rank_broadcast.h"
#include "ranks.h"
#include "rendezvous.h"
#include "resources.h"
#include "runner.h"
#include "scenario_json.h"
#include "simulator.h"
#include "trace_formats.h"
#include "trace_import.h"
#include "trace_json.h"

#ifdef STREAMSCOPE_HAVE_CUDA
#include "calibrate.h"
#include "cuda_backend.h"
#endif

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cli {

// ---- presets, profiles ----------------------------------------------------------------------------------------

int cmdPresets()
{
    const auto presets = ss::listPresets();
    if (presets.empty())
        std::cerr << "no presets found in " << (std::filesystem::path(ss::resourcesDir()) / "presets").string()
                  << " (set STREAMSCOPE_RESOURCES to the resources folder)\n";
    for (const auto& p : presets)
        std::cout << p.id << "  " << (p.title.empty() ? "(untitled)" : p.title) << '\n';
    return kExitOk;
}

int cmdProfiles()
{
    const auto ids = ss::builtinProfileIds();
    if (ids.empty())
        std::cerr << "no device profiles found in " << (std::filesystem::path(ss::resourcesDir()) / "profiles").string()
                  << '\n';
    for (const auto& id : ids) {
        auto profile = ss::findDeviceProfile(id);
        if (profile)
            std::cout << id << "  " << (profile->name.empty() ? "(unnamed)" : profile->name) << '\n';
        else
            std::cout << id << "  (unreadable: " << profile.error().toString() << ")\n";
    }
    return kExitOk;
}

// ---- calibrate -------------------------------------------------------------------------------------------------

#ifdef STREAMSCOPE_HAVE_CUDA
namespace {

// This program's own file, to run fresh processes of (Linux: /proc/self/exe); empty where it cannot be told.
std::string selfExecutable()
{
    std::error_code ec;
    const auto path = std::filesystem::read_symlink("/proc/self/exe", ec);
    return ec ? std::string() : path.string();
}

} // namespace
#endif

// Measures a device profile on this machine's GPU; progress lines on stderr, the profile to -o or stdout.
int cmdCalibrate(const CalibrateArgs& args, const std::string& command)
{
#ifdef STREAMSCOPE_HAVE_CUDA
    ss::CalibrationOptions options;
    options.device = args.device;
    options.repeats = args.repeats;
    options.quick = args.quick;
    options.hostProcesses = args.hostProcesses;
    options.hostCostsOnly = args.hostCostsOnly;
    options.executable = selfExecutable();
    options.command = command;
    options.toolVersion = STREAMSCOPE_VERSION;
    options.progress = [](const std::string& line) { std::cerr << line << std::endl; };
    auto profile = ss::calibrateDevice(options);
    if (!profile)
        return fail(profile.error(), kExitRuntime);
    const std::string text = ss::deviceProfileToJson(*profile);
    if (auto back = ss::parseDeviceProfile(text, args.output.empty() ? "<calibrated>" : args.output); !back)
        return fail(back.error(), kExitRuntime);
    if (args.output.empty()) {
        std::cout << text;
        return kExitOk;
    }
    if (auto st = ss::saveTextFileAtomic(args.output, text); !st)
        return fail(st.error(), kExitRuntime);
    std::cerr << "wrote " << args.output << "; simulate with it: streamscope-cli run SCENARIO --backend sim --profile "
              << args.output << '\n';
    return kExitOk;
#else
    (void)args;
    (void)command;
    return fail("calibrate needs a CUDA build of streamscope-cli (this one was built without CUDA)", kExitRuntime);
#endif
}

// ---- run -------------------------------------------------------------------------------------------------------

#ifdef STREAMSCOPE_HAVE_CUDA
namespace {

// GPUs a job of several ranks needs when it runs in this process (no launcher): one per rank and device of a rank.
int gpusForWholeJob(const ss::Scenario& scenario)
{
    auto job = ss::expandJob(scenario, scenario.ranks.count);
    if (!job)
        return 0; // the run reports what is wrong with it
    int highest = -1;
    for (const auto& st : job->streams)
        highest = std::max(highest, st.device);
    for (const auto& t : job->threads)
        highest = std::max(highest, t.device);
    return highest + 1;
}

} // namespace
#endif

ChosenBackend chooseBackend(const RunArgs& args, const ss::Scenario& scenario, const ss::RankInfo* rank)
{
    ChosenBackend chosen;
    bool useCuda = false;
    if (args.backend == "cuda" || args.backend == "auto") {
#ifdef STREAMSCOPE_HAVE_CUDA
        // CUDA_DEVICE_MAX_CONNECTIONS and friends are read when the first context is created: set them first.
        ss::applyCudaEnvironment(scenario);
        const bool collectives = ss::hasCollectives(scenario);
        // A missing NCCL is said first, before CUDA is touched.
        if (collectives && args.backend == "cuda")
            if (std::string why = ss::ncclUnavailableReason(); !why.empty()) {
                chosen.exitCode = fail(why, kExitRuntime);
                return chosen;
            }
        const ss::CudaProbe probe = ss::probeCuda();
        if (probe.usable) {
            useCuda = true;
        } else if (args.backend == "cuda") {
            chosen.exitCode = fail("no usable GPU: " + probe.reason, kExitRuntime);
            return chosen;
        } else {
            std::cerr << "no usable GPU (" << probe.reason << "); using the simulator\n";
        }
        if (useCuda && collectives && args.backend == "auto")
            if (std::string why = ss::ncclUnavailableReason(); !why.empty()) {
                std::cerr << why << "\nusing the simulator for this scenario's collectives\n";
                useCuda = false;
            }
        if (useCuda && !rank && scenario.ranks.given()) {
            // Without a launcher the whole job runs here, one GPU per rank (NCCL refuses two ranks on one GPU).
            const int need = gpusForWholeJob(scenario);
            if (need > probe.deviceCount) {
                const std::string why = "this job of " + std::to_string(scenario.ranks.count) + " rank"
                    + (scenario.ranks.count == 1 ? "" : "s") + " needs " + std::to_string(need)
                    + " GPUs to run in one process (one per rank: NCCL refuses two ranks on one GPU); this machine "
                      "has "
                    + std::to_string(probe.deviceCount);
                if (args.backend == "cuda") {
                    chosen.exitCode = fail(why
                                               + ". Start one process per rank with a launcher (mpirun, srun, "
                                                 "torchrun) on machines with enough GPUs, or use --backend sim",
                                           kExitBadInput);
                    return chosen;
                }
                std::cerr << why << "; using the simulator\n";
                useCuda = false;
            }
        }
#else
        (void)scenario;
        (void)rank;
        if (args.timing == "cupti" || args.timing == "both")
            std::cerr << "note: --timing " << args.timing << " applies to GPU runs only\n";
        if (args.backend == "cuda") {
            chosen.exitCode = fail("the CUDA backend is not built into this streamscope-cli "
                                   "(no CUDA toolkit at build time); use --backend sim",
                                   kExitRuntime);
            return chosen;
        }
        std::cerr << "no usable GPU (the CUDA backend is not built into this streamscope-cli); using the simulator\n";
#endif
    }

    if (useCuda) {
#ifdef STREAMSCOPE_HAVE_CUDA
        if (!args.profile.empty())
            std::cerr << "warning: --profile applies to the simulator only; ignored on the GPU\n";
        ss::CudaBackendOptions cuda;
        cuda.timing = args.timing.empty() ? scenario.run.timing : *ss::timingModeFromString(args.timing);
        cuda.cuptiCapturePath = args.cuptiCapture;
        if (args.injectFault.starts_with("illegal-address:"))
            cuda.illegalAddressOp = args.injectFault.substr(std::string_view("illegal-address:").size());
        if (rank && ss::hasCollectives(scenario)) {
            // One process per rank: rank 0's NCCL unique id reaches the others through a file (ranks on one host, or
            // a folder every host sees).
            const std::string key = ss::jobKeyFromEnvironment([](const char* v) { return std::getenv(v); });
            chosen.ncclIdFile = args.ncclIdFile.empty()
                ? ss::defaultBroadcastPath(args.output, ss::localHostName(), key)
                : args.ncclIdFile;
            cuda.collectives.rank = rank->rank;
            cuda.collectives.worldSize = rank->worldSize;
            cuda.collectives.broadcast = ss::fileBroadcast(chosen.ncclIdFile, rank->rank, key);
        }
        chosen.backend = ss::makeCudaBackend(cuda);
        if (!chosen.backend)
            chosen.exitCode = fail("could not create the CUDA backend", kExitRuntime);
#endif
        return chosen;
    }

    ss::SimulatorOptions options;
    if (!args.profile.empty()) {
        auto profile = ss::findDeviceProfile(args.profile);
        if (!profile) {
            chosen.exitCode = fail(profile.error(), exitCodeOf(profile.errorClass()));
            return chosen;
        }
        options.profile = std::move(profile).value();
    }
    chosen.backend = std::make_unique<ss::SimulatorBackend>(std::move(options));
    return chosen;
}

namespace {

// Which timing a GPU run used, why it fell back, and what timing cost: one or two lines.
void printTiming(const ss::RunInfo& info)
{
    std::string timing;
    std::string reason;
    std::string perturbation;
    for (const auto& [k, v] : info.settings) {
        if (k == "timing")
            timing = v;
        else if (k == "timing_reason")
            reason = v;
        else if (k == "timing_perturbation")
            perturbation = v;
    }
    if (timing.empty())
        return;
    std::cout << "timing: " << timing;
    if (!perturbation.empty())
        std::cout << " (timed/untimed makespan " << perturbation << ")";
    std::cout << '\n';
    if (!reason.empty())
        std::cerr << reason << '\n';
}

std::string microseconds(int64_t ns, bool sign = false)
{
    char buf[64];
    std::snprintf(buf, sizeof buf, sign ? "%+.1f µs" : "%.1f µs", double(ns) / 1000.0);
    return buf;
}

// The ranks meet at the rendezvous, if there is one, and measure their clock offsets to rank 0. Before the run, so
// that a rank that never comes is found before any work is done (the offsets are measured again after it:
// measureAgain). Rank 0 reports every rank's offset on stderr.
int meetRanks(const RunArgs& args, const ss::RankInfo& rank, const std::string& host,
              std::unique_ptr<ss::Rendezvous>& out, std::optional<ss::ClockSync>& sync,
              std::vector<ss::ClockOffset>& all)
{
    auto address = ss::rendezvousAddress(args.rendezvous, [](const char* n) -> const char* { return std::getenv(n); });
    if (!address)
        return fail(address.error(), kExitBadInput);
    if (!*address)
        return kExitOk;
    ss::RendezvousOptions options;
    options.timeout = std::chrono::milliseconds(int64_t(args.rendezvousTimeout * 1000.0));
    options.host = host;
    auto joined = ss::Rendezvous::join(**address, rank.rank, rank.worldSize, options);
    if (!joined)
        return fail(joined.error(), exitCodeOf(joined.errorClass()));
    auto offset = (*joined)->measureClockOffset(32, &all);
    if (!offset)
        return fail(offset.error(), exitCodeOf(offset.errorClass()));
    // Every rank starts its run once all have measured: no rank's run disturbs another's round trips.
    if (ss::Status s = (*joined)->barrier(); !s)
        return fail(s.error(), exitCodeOf(s.errorClass()));
    sync = ss::ClockSync{offset->offsetNs,   offset->uncertaintyNs, offset->samples, (*joined)->rootHost(),
                         (*joined)->jobId(), offset->atNs,          std::nullopt,    {}};
    if (rank.rank == 0 && rank.worldSize > 1) {
        std::string line = "rendezvous at " + (*address)->text() + " (" + (*address)->source
            + "): " + std::to_string(rank.worldSize) + " ranks; clock offset to rank 0, best of " + std::to_string(32)
            + " round trips:";
        int64_t worst = 0;
        for (const ss::ClockOffset& o : all) {
            worst = std::max(worst, o.uncertaintyNs);
            if (o.rank > 0 && o.rank <= 16)
                line += " rank " + std::to_string(o.rank) + " " + microseconds(o.offsetNs, true) + " ± "
                    + microseconds(o.uncertaintyNs) + (o.rank < rank.worldSize - 1 ? "," : "");
        }
        if (rank.worldSize > 17)
            line += " ...";
        std::cerr << line << "; largest uncertainty " << microseconds(worst) << '\n';
    }
    out = std::move(*joined);
    return kExitOk;
}

// After the run the ranks measure their offsets again, so that `merge` corrects the clocks' drift between the two
// measurements (docs/RANKS.md). A rank that does not come within the timeout (it ran minutes longer, or died) costs
// only the correction: every rank still writes its trace, saying why the second measurement is missing.
void measureAgain(ss::Rendezvous& rendezvous, const ss::RankInfo& rank, ss::ClockSync& sync,
                  const std::vector<ss::ClockOffset>& before)
{
    std::vector<ss::ClockOffset> all;
    auto offset = rendezvous.measureClockOffset(32, &all);
    if (!offset) {
        sync.afterMissing = offset.error().message;
        std::cerr << "note: the clock offset to rank 0 was not measured again after the run (" << sync.afterMissing
                  << "): merge cannot correct this rank's clock drift\n";
        return;
    }
    sync.after = ss::ClockSync::Sample{offset->offsetNs, offset->uncertaintyNs, offset->samples, offset->atNs};
    if (rank.rank != 0 || rank.worldSize < 2 || before.size() != all.size())
        return;
    // Each rank's drift; where no rank's two measurements lie far enough apart to tell one (a short run), that is
    // said once at the end rather than after every rank.
    std::string line = "clock offset to rank 0 again after the run:";
    bool anyDrift = false;
    int64_t apartNs = 0;
    for (const ss::ClockOffset& o : all)
        if (o.rank > 0 && o.rank <= 16)
            anyDrift = anyDrift
                || ss::measuresDrift(before[size_t(o.rank)].uncertaintyNs, o.uncertaintyNs,
                                     o.atNs - before[size_t(o.rank)].atNs);
    for (const ss::ClockOffset& o : all) {
        if (o.rank <= 0 || o.rank > 16)
            continue;
        const ss::ClockOffset& b = before[size_t(o.rank)];
        line += " rank " + std::to_string(o.rank) + " " + microseconds(o.offsetNs, true) + " ± "
            + microseconds(o.uncertaintyNs);
        apartNs = std::max(apartNs, o.atNs - b.atNs);
        char drift[96] = "";
        if (ss::measuresDrift(b.uncertaintyNs, o.uncertaintyNs, o.atNs - b.atNs))
            std::snprintf(drift, sizeof drift, " (drift %+.2f ± %.2f ppm over %.1f s)",
                          double(o.offsetNs - b.offsetNs) / double(o.atNs - b.atNs) * 1e6,
                          double(o.uncertaintyNs + b.uncertaintyNs) / double(o.atNs - b.atNs) * 1e6,
                          double(o.atNs - b.atNs) / 1e9);
        else if (anyDrift)
            std::snprintf(drift, sizeof drift, " (%.2f s after the first: too soon to tell a drift)",
                          double(o.atNs - b.atNs) / 1e9);
        line += drift;
        line += o.rank < rank.worldSize - 1 ? "," : "";
    }
    if (rank.worldSize > 17)
        line += " ...";
    if (!anyDrift) {
        char once[96];
        std::snprintf(once, sizeof once, "; at most %.2f s after the first: too soon to tell a drift",
                      double(apartNs) / 1e9);
        line += once;
    }
    std::cerr << line << '\n';
}

} // namespace

int cmdRun(const RunArgs& args, const std::string& command)
{
    // Under mpirun, srun or torchrun: this process is one rank, and writes its own file.
    auto rank = ss::rankFromEnvironment();
    if (!rank)
        return fail(rank.error(), kExitBadInput);
    std::string output = args.output;
    std::string host;
    if (*rank) {
        host = ss::localHostName();
        if (!output.empty()) {
            auto expanded = ss::expandRankPattern(output, **rank, host);
            if (!expanded)
                return fail(expanded.error(), kExitBadInput);
            output = *expanded;
        }
    }
    std::string scenarioFile;
    auto loaded = loadScenarioArg(args.scenario, args.variant, &scenarioFile);
    if (!loaded)
        return fail(loaded.error(), exitCodeOf(loaded.errorClass()));
    printWarnings(loaded->warnings);
    const ss::Scenario& scenario = loaded->scenario;

    if (!args.injectFault.empty()) {
        const std::string target = args.injectFault.substr(args.injectFault.find(':') + 1);
        bool found = false;
        auto visit = [&](const std::vector<ss::Op>& ops, auto& self) -> void {
            for (const ss::Op& op : ops) {
                found = found || (op.kind == ss::OpKind::Kernel && ss::displayName(op) == target);
                self(op.ops, self);
            }
        };
        for (const ss::ThreadSpec& t : scenario.threads)
            visit(t.ops, visit);
        if (!found)
            return fail(args.scenario + ": --inject-fault: no kernel op is named \"" + target + "\"", kExitBadInput);
    }

    ChosenBackend chosen = chooseBackend(args, scenario, *rank ? &**rank : nullptr);
    if (chosen.exitCode != kExitOk)
        return chosen.exitCode;

    ss::RunOptions options;
    options.variant = args.variant;
    options.command = command;
    if (args.progress) {
        // One line per finished iteration, for the desktop app's progress display.
        options.progress = [](int done, int total) {
            std::cerr << "progress: " << done << "/" << total << " iterations" << std::endl;
        };
    }
    // A job of several ranks (collectives, "ranks"): on the simulator every rank's process simulates the whole job,
    // which is deterministic, and keeps its own rank's part; on a GPU each rank runs its own scenario.
    ss::Scenario toRun = scenario;
    const bool job = scenario.ranks.given() || ss::hasCollectives(scenario);
    if (*rank && job) {
        const ss::RankInfo& r = **rank;
        if (chosen.backend->simulatesHostThreads()) {
            if (scenario.ranks.given() && scenario.ranks.count != r.worldSize)
                std::cerr << "note: the scenario has " << scenario.ranks.count << " ranks and " << r.launcher
                          << " started " << r.worldSize << ": simulating " << r.worldSize << '\n';
            toRun.ranks.count = r.worldSize;
        } else {
            auto own = ss::scenarioForRank(scenario, r.rank, r.localRank, scenarioFile);
            if (!own)
                return fail(own.error(), kExitBadInput);
            toRun = std::move(own).value();
            toRun.ranks = {};
        }
    }
    std::unique_ptr<ss::Rendezvous> rendezvous; // held for the run: a GPU backend may share bytes (NCCL's id) over it
    std::optional<ss::ClockSync> clockSync;
    std::vector<ss::ClockOffset> offsetsBefore; // rank 0: every rank's, for its report after the run
    if (*rank) {
        if (const int met = meetRanks(args, **rank, host, rendezvous, clockSync, offsetsBefore); met != kExitOk)
            return met;
    } else if (!args.rendezvous.empty() && args.rendezvous != "none") {
        std::cerr << "note: no launcher (mpirun, srun, torchrun) started this run: --rendezvous is not used\n";
    }
    ss::RunOutcome outcome = ss::runScenario(toRun, *chosen.backend, options);
    if (rendezvous && clockSync)
        measureAgain(*rendezvous, **rank, *clockSync, offsetsBefore);
    if (!chosen.ncclIdFile.empty() && (*rank)->rank == 0)
        ss::removeBroadcastFiles(chosen.ncclIdFile, int(toRun.threads.size())); // every rank has read them by now
    std::optional<ss::Trace> jobTrace;
    if (*rank && outcome.job.expanded()) {
        // The lesson's checks are about the whole job: evaluated on it, not on the rank's part.
        if (args.check)
            jobTrace = outcome.trace;
        ss::Trace own = ss::extractRankTrace(outcome.trace, outcome.job, (*rank)->rank);
        if (auto rs = ss::scenarioForRank(scenario, (*rank)->rank, (*rank)->localRank, scenarioFile))
            own.info.scenarioJson = ss::scenarioToJson(*rs);
        outcome.trace = std::move(own);
    }
    if (*rank) {
        ss::RankClock clock = ss::sampleWallOffset();
        clock.simulated = outcome.simulatedClock;
        clock.originNs = outcome.clockOriginNs;
        clock.sync = clockSync;
        ss::addRankSettings(outcome.trace.info, **rank, host, clock);
    }
    const ss::Trace& trace = outcome.trace;

    int code = kExitOk;
    if (!outcome.status) {
        ss::Error error = outcome.status.error();
        // What the simulation found wrong in the scenario (collectives that do not match across ranks) names its op's
        // JSON path: the file is this one.
        if (outcome.status.errorClass() == ss::ErrorClass::BadInput && error.file.empty() && !error.path.empty())
            error.file = scenarioFile;
        code = fail(error, exitCodeOf(outcome.status.errorClass()));
    } else {
        printScenarioLine(trace.info);
        std::cout << "backend: " << chosen.backend->name() << '\n';
        printTiming(trace.info);
        printDevices(trace);
        printMetrics(ss::computeMetrics(trace));
        if (args.check && jobTrace)
            std::cout << "the checks are the whole job's (" << (*rank)->worldSize
                      << " ranks, simulated in every rank)\n";
        if (args.check && !printChecks(jobTrace ? *jobTrace : trace, scenario.expect))
            code = kExitCheckFailed;
    }

    if (!output.empty()) {
        // Also after a failure: the partial trace shows how far the run got.
        if (ss::Status saved = ss::saveNativeTrace(trace, output); !saved) {
            const bool ranWell = code == kExitOk || code == kExitCheckFailed;
            return fail(saved.error(), ranWell ? exitCodeOf(saved.errorClass()) : code);
        }
        std::cerr << (outcome.status ? "trace written to " : "partial trace written to ") << output << '\n';
    }
    return code;
}

} // namespace cli
