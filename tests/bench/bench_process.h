// What the benchmarks share: CPU time and peak memory of this process, and re-running this executable as a child
// (so that each measured step gets a process, and a peak memory, of its own).
#pragma once

#include <nlohmann/json.hpp>

#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

namespace streamscope::bench {

// User plus system CPU time of this process so far: on a loaded machine it is steadier than wall time.
inline double cpuSeconds()
{
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    auto seconds = [](const timeval& t) { return double(t.tv_sec) + double(t.tv_usec) / 1e6; };
    return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

// The resident set now (/proc/self/statm), in MB.
inline double residentMb()
{
    long pages = 0, resident = 0;
    if (FILE* f = std::fopen("/proc/self/statm", "r")) {
        if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2)
            resident = 0;
        std::fclose(f);
    }
    return double(resident) * double(sysconf(_SC_PAGESIZE)) / (1024.0 * 1024.0);
}

// Minor page faults of this process so far (each a fresh page the kernel zeroed or mapped).
inline long minorFaults()
{
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return usage.ru_minflt;
}

// System (kernel) CPU time of this process so far.
inline double systemSeconds()
{
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return double(usage.ru_stime.tv_sec) + double(usage.ru_stime.tv_usec) / 1e6;
}

inline double peakRssMb()
{
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return double(usage.ru_maxrss) / 1024.0; // Linux reports kilobytes
}

inline std::string selfPath(const char* argv0)
{
    std::vector<char> buf(4096);
    const ssize_t n = readlink("/proc/self/exe", buf.data(), buf.size() - 1);
    if (n > 0)
        return std::string(buf.data(), size_t(n));
    return argv0;
}

inline std::string shellQuote(const std::string& s)
{
    std::string q = "'";
    for (char c : s)
        q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

// Runs `self` (shell-quoted) with `args`; the one JSON object it prints, or null when it failed.
inline nlohmann::ordered_json runChild(const std::string& self, const std::string& args)
{
    const std::string command = self + " " + args;
    FILE* p = popen(command.c_str(), "r");
    if (!p)
        return nullptr;
    std::string out;
    char buf[4096];
    while (size_t n = std::fread(buf, 1, sizeof buf, p))
        out.append(buf, n);
    if (pclose(p) != 0)
        return nullptr;
    auto j = nlohmann::ordered_json::parse(out, nullptr, false);
    return j.is_object() ? j : nlohmann::ordered_json(nullptr);
}

} // namespace streamscope::bench
