// Rank detection, output names and the clock record of a per-rank run (ranks.h).
#include "ranks.h"

#include <unistd.h>

#include <array>
#include <charconv>
#include <chrono>
#include <climits>
#include <cstdlib>

namespace streamscope {

namespace {

struct LauncherVars {
    const char* launcher;
    const char* rank;
    const char* size;
    const char* localRank;
    const char* localSize;
    const char* required; // must also be set for the launcher to count (nullptr: none)
};

constexpr std::array<LauncherVars, 4> kLaunchers{{
    {"Open MPI", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
     "OMPI_COMM_WORLD_LOCAL_SIZE", nullptr},
    {"MPICH", "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", "MPI_LOCALNRANKS", nullptr},
    {"torchrun", "RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", nullptr},
    {"Slurm", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", nullptr, "SLURM_STEP_ID"},
}};

Error envError(const char* var, const char* value, const std::string& what)
{
    return Error{{}, {}, std::string("environment variable ") + var + "=\"" + value + "\": " + what};
}

// A whole number in [lo, hi] from the variable, or an error naming it.
Result<int> envInt(const char* var, const char* value, int lo, int hi)
{
    int v = 0;
    const char* end = value + std::char_traits<char>::length(value);
    const auto [ptr, ec] = std::from_chars(value, end, v);
    if (ec == std::errc::result_out_of_range || (ec == std::errc() && ptr == end && (v < lo || v > hi)))
        return envError(var, value, "expected a whole number from " + std::to_string(lo) + " to " + std::to_string(hi));
    if (ec != std::errc() || ptr != end || ptr == value)
        return envError(var, value, "not a whole number");
    return v;
}

int64_t nowNs(auto clock)
{
    return std::chrono::duration_cast<std::chrono::nanoseconds>(clock.time_since_epoch()).count();
}

} // namespace

Result<std::optional<RankInfo>> rankFromEnvironment(const EnvLookup& env)
{
    for (const LauncherVars& l : kLaunchers) {
        const char* rank = env(l.rank);
        if (!rank || (l.required && !env(l.required)))
            continue;
        const char* size = env(l.size);
        if (!size)
            return Error{{},
                         {},
                         std::string("environment variable ") + l.rank + " is set (" + l.launcher + ") but " + l.size
                             + " is not: the world size is unknown"};
        RankInfo info;
        info.launcher = l.launcher;
        auto ws = envInt(l.size, size, 1, kMaxRanks);
        if (!ws)
            return ws.error();
        info.worldSize = *ws;
        auto r = envInt(l.rank, rank, 0, info.worldSize - 1);
        if (!r)
            return r.error();
        info.rank = *r;
        info.variables = std::string(l.rank) + "=" + rank + ", " + l.size + "=" + size;
        if (const char* ls = l.localSize ? env(l.localSize) : nullptr) {
            auto n = envInt(l.localSize, ls, 1, info.worldSize);
            if (!n)
                return n.error();
            info.localWorldSize = *n;
            info.variables += std::string(", ") + l.localSize + "=" + ls;
        }
        if (const char* lr = env(l.localRank)) {
            const int hi = info.localWorldSize > 0 ? info.localWorldSize - 1 : info.worldSize - 1;
            auto n = envInt(l.localRank, lr, 0, hi);
            if (!n)
                return n.error();
            info.localRank = *n;
            info.variables += std::string(", ") + l.localRank + "=" + lr;
        } else {
            info.localRank = info.rank; // one host: the launcher does not say otherwise
        }
        return std::optional<RankInfo>(std::move(info));
    }
    return std::optional<RankInfo>();
}

Result<std::optional<RankInfo>> rankFromEnvironment()
{
    return rankFromEnvironment([](const char* name) -> const char* { return std::getenv(name); });
}

Result<std::string> expandRankPattern(const std::string& pattern, const RankInfo& rank, const std::string& host)
{
    std::string out;
    bool hasRank = false;
    for (size_t i = 0; i < pattern.size(); ++i) {
        if (pattern[i] != '%' || i + 1 == pattern.size()) {
            out += pattern[i];
            continue;
        }
        switch (pattern[++i]) {
        case 'r':
            out += std::to_string(rank.rank);
            hasRank = true;
            break;
        case 'l': out += std::to_string(rank.localRank); break;
        case 'h': out += host.empty() ? "host" : host; break;
        case '%': out += '%'; break;
        default: out += '%'; out += pattern[i];
        }
    }
    if (!hasRank && rank.worldSize > 1)
        return Error{pattern,
                     {},
                     "rank " + std::to_string(rank.rank) + " of " + std::to_string(rank.worldSize) + " ("
                         + rank.launcher
                         + ") would write the same file as every other rank: put %r in the name, "
                           "e.g. -o job.%r.json"};
    return out;
}

std::string localHostName()
{
    char host[256] = {};
    if (gethostname(host, sizeof host - 1) != 0)
        return {};
    return host;
}

RankClock sampleWallOffset(int samples)
{
    RankClock best;
    int64_t bestSpan = INT64_MAX;
    for (int i = 0; i < std::max(1, samples); ++i) {
        const int64_t a = nowNs(std::chrono::steady_clock::now());
        const int64_t w = nowNs(std::chrono::system_clock::now());
        const int64_t b = nowNs(std::chrono::steady_clock::now());
        if (b - a < bestSpan) {
            bestSpan = b - a;
            best.wallOffsetNs = w - (a + (b - a) / 2);
            best.wallOffsetErrorNs = (b - a + 1) / 2;
        }
    }
    return best;
}

void addRankSettings(RunInfo& info, const RankInfo& rank, const std::string& host, const RankClock& clock)
{
    auto set = [&info](std::string_view key, std::string value) { setSetting(info, key, std::move(value)); };
    set("rank", std::to_string(rank.rank));
    set("world_size", std::to_string(rank.worldSize));
    set("local_rank", std::to_string(rank.localRank));
    if (rank.localWorldSize > 0)
        set("local_world_size", std::to_string(rank.localWorldSize));
    set("launcher", rank.launcher + " (" + rank.variables + ")");
    if (info.host.empty())
        info.host = host;
    if (clock.simulated) {
        set("clock", "simulated");
    } else {
        set("clock", "host steady clock");
        set("clock_origin_ns", std::to_string(clock.originNs));
        set("clock_wall_offset_ns", std::to_string(clock.wallOffsetNs));
        set("clock_wall_offset_error_ns", std::to_string(clock.wallOffsetErrorNs));
    }
    if (clock.sync) {
        set("clock_sync", "ping-pong to rank 0 over TCP");
        set("clock_sync_offset_ns", std::to_string(clock.sync->offsetNs));
        set("clock_sync_uncertainty_ns", std::to_string(clock.sync->uncertaintyNs));
        set("clock_sync_samples", std::to_string(clock.sync->samples));
        set("clock_sync_host", clock.sync->rootHost);
        set("clock_sync_job", clock.sync->job);
        if (clock.sync->atNs)
            set("clock_sync_at_ns", std::to_string(*clock.sync->atNs));
        if (const auto& a = clock.sync->after) {
            set("clock_sync_after_offset_ns", std::to_string(a->offsetNs));
            set("clock_sync_after_uncertainty_ns", std::to_string(a->uncertaintyNs));
            set("clock_sync_after_samples", std::to_string(a->samples));
            set("clock_sync_after_at_ns", std::to_string(a->atNs));
        } else if (!clock.sync->afterMissing.empty()) {
            set("clock_sync_after", "not measured: " + clock.sync->afterMissing);
        }
    }
}

Result<std::optional<ClockSync>> readClockSync(const RunInfo& info)
{
    if (!findSetting(info, "clock_sync"))
        return std::optional<ClockSync>();
    auto number = [&info](const char* key, int64_t lo, int64_t& out) -> std::optional<Error> {
        const std::string* v = findSetting(info, key);
        const char* end = v ? v->data() + v->size() : nullptr;
        if (v) {
            const auto [ptr, ec] = std::from_chars(v->data(), end, out);
            if (ec == std::errc() && ptr == end && !v->empty() && out >= lo)
                return std::nullopt;
        }
        return Error{{},
                     "info.settings." + std::string(key),
                     std::string(v ? "\"" + *v + "\" is not " : "missing: expected ")
                         + (lo == INT64_MIN ? "a whole number" : "a whole number from " + std::to_string(lo))
                         + " (clock_sync is set)"};
    };
    // One measurement: clock_sync_{offset_ns,uncertainty_ns,samples}, or the same after "clock_sync_after_".
    auto measurement = [&number](const std::string& prefix, int64_t& offset, int64_t& uncertainty,
                                 int& samples) -> std::optional<Error> {
        int64_t n = 0;
        if (auto e = number((prefix + "offset_ns").c_str(), INT64_MIN, offset))
            return e;
        if (auto e = number((prefix + "uncertainty_ns").c_str(), 0, uncertainty))
            return e;
        if (auto e = number((prefix + "samples").c_str(), 0, n))
            return e;
        samples = int(std::min<int64_t>(n, INT_MAX));
        return std::nullopt;
    };
    ClockSync sync;
    if (auto e = measurement("clock_sync_", sync.offsetNs, sync.uncertaintyNs, sync.samples))
        return *e;
    const std::string* host = findSetting(info, "clock_sync_host");
    const std::string* job = findSetting(info, "clock_sync_job");
    if (!host || !job || job->empty())
        return Error{{},
                     std::string("info.settings.") + (!host ? "clock_sync_host" : "clock_sync_job"),
                     "missing: the rank 0 this rank's clock was measured against is unknown (clock_sync is set)"};
    sync.rootHost = *host;
    sync.job = *job;
    if (findSetting(info, "clock_sync_at_ns")) {
        int64_t at = 0;
        if (auto e = number("clock_sync_at_ns", INT64_MIN, at))
            return *e;
        sync.atNs = at;
    }
    if (findSetting(info, "clock_sync_after_offset_ns")) {
        // Drift is corrected between the two measurements: the second needs the first's time, and comes after it.
        ClockSync::Sample after;
        if (auto e = measurement("clock_sync_after_", after.offsetNs, after.uncertaintyNs, after.samples))
            return *e;
        if (auto e = number("clock_sync_after_at_ns", INT64_MIN, after.atNs))
            return *e;
        if (!sync.atNs)
            return Error{{},
                         "info.settings.clock_sync_at_ns",
                         "missing: the offset was measured again after the run (clock_sync_after_offset_ns), but "
                         "when it was first measured is unknown"};
        if (after.atNs <= *sync.atNs)
            return Error{{},
                         "info.settings.clock_sync_after_at_ns",
                         std::to_string(after.atNs) + " is not after clock_sync_at_ns (" + std::to_string(*sync.atNs)
                             + "): the second measurement must come after the first"};
        sync.after = after;
    } else if (const std::string* missing = findSetting(info, "clock_sync_after")) {
        sync.afterMissing = missing->rfind("not measured: ", 0) == 0 ? missing->substr(14) : *missing;
    }
    return std::optional<ClockSync>(std::move(sync));
}

} // namespace streamscope
