// Rank 0's blob to every rank through files (rank_broadcast.h).
#include "rank_broadcast.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <optional>
#include <sstream>
#include <thread>

namespace streamscope {

namespace fs = std::filesystem;

namespace {

constexpr const char* kMagic = "streamscope-rank-broadcast 1";

std::string fileOf(const std::string& path, int index)
{
    return path + "." + std::to_string(index);
}

std::string encode(const std::string& jobKey, const std::string& blob)
{
    return std::string(kMagic) + "\nkey " + jobKey + "\nbytes " + std::to_string(blob.size()) + "\n" + blob;
}

// The blob of a file written for `jobKey`; nullopt when the file is not (yet) one of this job's.
std::optional<std::string> decode(const std::string& text, const std::string& jobKey)
{
    std::istringstream in(text);
    std::string magic, keyLine, bytesLine;
    if (!std::getline(in, magic) || magic != kMagic || !std::getline(in, keyLine) || keyLine != "key " + jobKey
        || !std::getline(in, bytesLine) || !bytesLine.starts_with("bytes "))
        return std::nullopt;
    size_t n = 0;
    try {
        n = size_t(std::stoull(bytesLine.substr(6)));
    } catch (...) {
        return std::nullopt;
    }
    const auto offset = size_t(in.tellg());
    if (offset > text.size() || text.size() - offset != n)
        return std::nullopt;
    return text.substr(offset);
}

Result<std::string> writeBlob(const std::string& file, const std::string& jobKey, const std::string& blob)
{
    const std::string tmp = file + ".tmp." + std::to_string(::getpid());
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        out << encode(jobKey, blob);
        out.close();
        if (!out)
            return Result<std::string>(Error{{}, {}, "rank 0 could not write " + tmp + " (is the folder writable?)"},
                                       ErrorClass::Runtime);
    }
    std::error_code ec;
    fs::rename(tmp, file, ec);
    if (ec) {
        fs::remove(tmp, ec);
        return Result<std::string>(Error{{}, {}, "rank 0 could not rename " + tmp + " into place: " + ec.message()},
                                   ErrorClass::Runtime);
    }
    return blob;
}

Result<std::string> readBlob(const std::string& file, int rank, const std::string& jobKey,
                             std::chrono::milliseconds timeout)
{
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    bool seenOther = false;
    for (;;) {
        std::ifstream in(file, std::ios::binary);
        if (in) {
            const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
            if (auto blob = decode(text, jobKey))
                return *blob;
            seenOther = true;
        }
        if (std::chrono::steady_clock::now() >= deadline)
            break;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(timeout).count();
    return Result<std::string>(
        Error{{},
              {},
              "rank " + std::to_string(rank) + " waited " + std::to_string(seconds) + " s for rank 0 to write " + file
                  + (seenOther ? " (the file there is another job's: job key \"" + jobKey + "\" expected)"
                               : " (it never appeared)")
                  + ": is rank 0 running, and do all ranks see this folder? (--nccl-id-file names another)"},
        ErrorClass::Runtime);
}

} // namespace

RankBroadcast fileBroadcast(std::string path, int rank, std::string jobKey, std::chrono::milliseconds timeout)
{
    auto next = std::make_shared<int>(0);
    return [path = std::move(path), rank, jobKey = std::move(jobKey), timeout,
            next](const std::string& blob) -> Result<std::string> {
        const std::string file = fileOf(path, (*next)++);
        if (rank == 0)
            return writeBlob(file, jobKey, blob);
        return readBlob(file, rank, jobKey, timeout);
    };
}

void removeBroadcastFiles(const std::string& path, int count)
{
    std::error_code ec;
    for (int i = 0; i < count; ++i)
        fs::remove(fileOf(path, i), ec);
}

std::string jobKeyFromEnvironment(const EnvLookup& env)
{
    std::string key;
    for (const char* var : {"SLURM_JOB_ID", "SLURM_STEP_ID", "PMIX_NAMESPACE", "OMPI_MCA_ess_base_jobid",
                            "TORCHELASTIC_RUN_ID", "PMI_KVSNAME"})
        if (const char* v = env(var); v && *v)
            key += std::string(key.empty() ? "" : ";") + var + "=" + v;
    if (key.empty())
        key = "ppid=" + std::to_string(::getppid());
    return key;
}

std::string defaultBroadcastPath(const std::string& outputPattern, const std::string& host, const std::string& jobKey)
{
    if (outputPattern.empty()) {
        char digest[32];
        std::snprintf(digest, sizeof digest, "%016zx", std::hash<std::string>{}(jobKey));
        std::error_code ec;
        fs::path tmp = fs::temp_directory_path(ec);
        if (ec)
            tmp = "/tmp";
        return (tmp / (std::string("streamscope-nccl-id.") + digest)).string();
    }
    std::string out;
    for (size_t i = 0; i < outputPattern.size(); ++i) {
        if (outputPattern[i] != '%' || i + 1 == outputPattern.size()) {
            out += outputPattern[i];
            continue;
        }
        const char c = outputPattern[++i];
        if (c == 'r' || c == 'l')
            out += "ranks";
        else if (c == 'h')
            out += host;
        else if (c == '%')
            out += '%';
        else {
            out += '%';
            out += c;
        }
    }
    return out + ".nccl-id";
}

} // namespace streamscope
