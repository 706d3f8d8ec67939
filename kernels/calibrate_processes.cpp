// Host API costs measured again in fresh processes (Calibrator::hostCostsInFreshProcesses, calibrator.h). What a
// launch costs the host differs from process to process on one machine — on the H200 machines one process issued
// empty-kernel launches at 3.6 µs each and fresh ones at 4.1-5.3 µs (tests/data/h200/experiments/launch-cost/) — and
// every scenario run is a fresh process, so one process's figure is not the machine's. Each child is
// `streamscope-cli calibrate --host-costs-only` of the same device and repeats; its profile comes back through a
// temporary file, and each host figure becomes the trimmed mean over the children of each child's median: the
// per-process figures fall in two groups (on one H200 machine 3.37-3.79 us and 4.19-5.34 us a launch in 34
// processes, tests/data/h200/experiments/launch-cpu/), and the median of a handful lands in either.
#include "calibrator.h"

#include "device_profile.h"
#include "text_file.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

extern char** environ;

namespace streamscope::calibrate {

namespace {

// A temporary file name of this process that no one else uses; removed by the guard.
struct TempFile {
    std::string path;
    TempFile()
    {
        std::string dir = "/tmp";
        if (const char* t = std::getenv("TMPDIR"); t && *t)
            dir = t;
        std::string pattern = dir + "/streamscope-calibrate-XXXXXX";
        const int fd = mkstemp(pattern.data());
        if (fd < 0)
            throw CudaFailure{"cannot create a temporary file in " + dir + " for the host-cost processes"};
        close(fd);
        path = pattern;
    }
    ~TempFile()
    {
        std::error_code ec;
        std::filesystem::remove(path, ec);
    }
};

// Runs `argv` with stdout and stderr to /dev/null; returns its exit status (-1 when it could not start or died).
int runQuietly(const std::vector<std::string>& argv)
{
    std::vector<char*> args;
    for (const auto& a : argv)
        args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
    pid_t pid = 0;
    const int started = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (started != 0)
        return -1;
    int status = 0;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

} // namespace

void Calibrator::hostCostsInFreshProcesses(size_t firstHostFigure, size_t endHostFigure)
{
    const int processes = m_opt.hostProcesses;
    if (processes <= 0)
        return;
    if (m_opt.executable.empty()) {
        m_cal.notes.push_back(
            "host API costs and pageable copies measured in the calibrating process only (no executable to run fresh "
            "processes of)");
        return;
    }
    if (m_opt.progress)
        m_opt.progress("host API costs and pageable copies again in " + std::to_string(processes)
                       + " fresh processes (each scenario run is one):");
    std::map<std::string, std::vector<double>> perProcess; // key -> each child's median
    for (int k = 0; k < processes; ++k) {
        if (m_opt.cancel && m_opt.cancel->load())
            throw Cancelled{};
        TempFile out;
        std::vector<std::string> argv{m_opt.executable,
                                      "calibrate",
                                      "--host-costs-only",
                                      "--device",
                                      std::to_string(m_opt.device),
                                      "--repeats",
                                      std::to_string(m_repeats),
                                      "--host-processes",
                                      "0",
                                      "-o",
                                      out.path};
        if (m_opt.quick)
            argv.push_back("--quick");
        const int status = runQuietly(argv);
        if (status != 0)
            throw CudaFailure{"host-cost process " + std::to_string(k + 1) + " of " + std::to_string(processes) + " ("
                              + m_opt.executable + " calibrate --host-costs-only) failed with exit status "
                              + std::to_string(status)};
        auto text = readTextFile(out.path);
        if (!text)
            throw CudaFailure{text.error().toString()};
        auto child = parseDeviceProfile(*text, out.path);
        if (!child)
            throw CudaFailure{"host-cost process " + std::to_string(k + 1) + ": " + child.error().toString()};
        for (const auto& f : child->calibration.figures)
            perProcess[f.key].push_back(f.value);
    }
    for (size_t i = firstHostFigure; i < endHostFigure; ++i) {
        CalibrationFigure& f = m_cal.figures[i];
        const auto it = perProcess.find(f.key);
        if (it == perProcess.end() || int(it->second.size()) != processes)
            throw CudaFailure{"the host-cost processes did not measure " + f.key};
        const double here = f.value;
        setRepeats(f, it->second);
        f.value = roundTo(trimmedMean(f.repeats), f.unit);
        f.trimmedMean = true;
        f.method += "; the mean over " + std::to_string(processes)
            + " fresh processes, less the highest and lowest tenth, of each one's median of "
            + std::to_string(m_repeats) + " repeats (repeats: one per process; the calibrating process itself measured "
            + formatValue(here, f.unit) + ")";
        if (m_opt.progress)
            m_opt.progress("  " + f.key + ": " + formatValue(f.value, f.unit) + " (" + std::to_string(processes)
                           + " processes, spread " + formatValue(f.spread, f.unit) + "; this process "
                           + formatValue(here, f.unit) + ")");
    }
}

} // namespace streamscope::calibrate
