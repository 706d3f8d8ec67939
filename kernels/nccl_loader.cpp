// NCCL found and opened at run time (nccl_loader.h), its functions resolved by name (nccl_api.h).
#include "nccl_loader.h"

#include "nccl_api.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <string>
#include <system_error>
#include <vector>

namespace streamscope {

namespace fs = std::filesystem;

namespace {

constexpr const char* kLibraryName = "libnccl.so.2";
constexpr const char* kEnvVariable = "STREAMSCOPE_NCCL_LIBRARY";

bool isFile(const std::string& path)
{
    std::error_code ec;
    return fs::is_regular_file(path, ec) || (fs::is_symlink(path, ec) && fs::exists(path, ec));
}

// The nvidia/nccl/lib/libnccl.so.2 of every python3*/{site,dist}-packages folder under `root`, sorted.
std::vector<std::string> pythonCandidates(const std::string& root)
{
    std::vector<std::string> out;
    std::error_code ec;
    if (root.empty() || !fs::is_directory(root, ec))
        return out;
    std::vector<std::string> pythons;
    for (fs::directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
        const std::string name = it->path().filename().string();
        if (name.starts_with("python3") && it->is_directory(ec))
            pythons.push_back(it->path().string());
    }
    std::sort(pythons.begin(), pythons.end());
    for (const auto& py : pythons)
        for (const char* packages : {"dist-packages", "site-packages"}) {
            const std::string lib = (fs::path(py) / packages / "nvidia" / "nccl" / "lib" / kLibraryName).string();
            if (isFile(lib))
                out.push_back(lib);
        }
    return out;
}

} // namespace

NcclSearch ncclSearchList(const NcclEnvLookup& env, const std::vector<std::string>& roots,
                          const std::vector<std::string>& cudaDirs)
{
    NcclSearch s;
    if (const char* file = env(kEnvVariable); file && *file) {
        s.fromEnvironment = file;
        s.candidates.push_back(file);
        return s;
    }
    s.candidates.push_back(kLibraryName);
    for (const auto& dir : cudaDirs)
        s.candidates.push_back((fs::path(dir) / kLibraryName).string());
    for (const auto& root : roots)
        for (auto& lib : pythonCandidates(root))
            if (std::find(s.candidates.begin(), s.candidates.end(), lib) == s.candidates.end())
                s.candidates.push_back(std::move(lib));
    return s;
}

NcclSearch ncclSearchList(const NcclEnvLookup& env)
{
    std::vector<std::string> roots{"/usr/lib", "/usr/local/lib"};
    for (const char* var : {"VIRTUAL_ENV", "CONDA_PREFIX"})
        if (const char* v = env(var); v && *v)
            roots.push_back((fs::path(v) / "lib").string());
    if (const char* home = env("HOME"); home && *home)
        roots.push_back((fs::path(home) / ".local" / "lib").string());
    return ncclSearchList(env, roots, {"/usr/local/cuda/lib64", "/usr/local/cuda/lib"});
}

#ifdef STREAMSCOPE_HAVE_NCCL

namespace {

std::mutex g_mutex;
bool g_tried = false;
std::string g_error;
std::string g_from;
std::string g_version;
NcclApi g_api;

template <typename Fn>
bool resolve(void* lib, const char* name, Fn& out, std::vector<std::string>& missing)
{
    out = reinterpret_cast<Fn>(dlsym(lib, name));
    if (!out)
        missing.emplace_back(name);
    return out != nullptr;
}

std::string versionText(int code)
{
    // NCCL_VERSION_CODE: major*1000 + minor*100 + patch before 2.9, major*10000 + minor*100 + patch since.
    const int major = code >= 10000 ? code / 10000 : code / 1000;
    const int minor = code >= 10000 ? (code % 10000) / 100 : (code % 1000) / 100;
    return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(code % 100);
}

std::string load()
{
    const NcclSearch search = ncclSearchList([](const char* v) { return std::getenv(v); });
    std::string tried;
    void* lib = nullptr;
    for (const auto& path : search.candidates) {
        const bool bare = path.find('/') == std::string::npos;
        if (!bare && !isFile(path)) {
            tried += "\n  " + path + ": no such file";
            continue;
        }
        lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (lib) {
            g_from = bare ? path + " (found by the dynamic loader)" : path;
            break;
        }
        const char* why = dlerror();
        tried += "\n  " + path + (bare ? " (the dynamic loader's search path)" : "") + ": "
            + (why ? why : "could not be opened");
    }
    if (!lib) {
        if (!search.fromEnvironment.empty())
            return "NCCL could not be loaded from " + std::string(kEnvVariable) + "=" + search.fromEnvironment + ":"
                + tried + "\nset " + kEnvVariable
                + " to the path of libnccl.so.2, or unset it to search the usual places";
        return "NCCL (libnccl.so.2) was not found; collective ops on GPUs need it. Looked at:" + tried + "\nset "
            + kEnvVariable
            + " to the path of libnccl.so.2 (e.g. the nvidia/nccl/lib folder of a PyTorch "
              "installation), or run with --backend sim";
    }
    std::vector<std::string> missing;
    NcclApi api;
    resolve(lib, "ncclGetVersion", api.getVersion, missing);
    resolve(lib, "ncclGetUniqueId", api.getUniqueId, missing);
    resolve(lib, "ncclCommInitRank", api.commInitRank, missing);
    resolve(lib, "ncclCommInitAll", api.commInitAll, missing);
    resolve(lib, "ncclCommDestroy", api.commDestroy, missing);
    resolve(lib, "ncclCommAbort", api.commAbort, missing);
    resolve(lib, "ncclGetErrorString", api.getErrorString, missing);
    resolve(lib, "ncclGroupStart", api.groupStart, missing);
    resolve(lib, "ncclGroupEnd", api.groupEnd, missing);
    resolve(lib, "ncclAllReduce", api.allReduce, missing);
    resolve(lib, "ncclAllGather", api.allGather, missing);
    resolve(lib, "ncclReduceScatter", api.reduceScatter, missing);
    resolve(lib, "ncclBroadcast", api.broadcast, missing);
    resolve(lib, "ncclSend", api.send, missing);
    resolve(lib, "ncclRecv", api.recv, missing);
    std::vector<std::string> optional;
    resolve(lib, "ncclGetLastError", api.getLastError, optional);
    if (!missing.empty()) {
        std::string names;
        for (const auto& m : missing)
            names += (names.empty() ? "" : ", ") + m;
        dlclose(lib);
        return "the NCCL library " + g_from + " lacks " + names
            + " (StreamScope needs NCCL 2.7 or later, which has ncclSend and ncclRecv)";
    }
    int code = 0;
    if (api.getVersion(&code) != ncclSuccess) {
        dlclose(lib);
        return "ncclGetVersion failed in " + g_from;
    }
    g_version = versionText(code);
    g_api = api; // the library stays open for the life of the process: NCCL keeps threads and state in it
    return {};
}

} // namespace

std::string loadNccl()
{
    std::lock_guard lock(g_mutex);
    if (!g_tried) {
        g_tried = true;
        g_error = load();
        if (!g_error.empty())
            g_from.clear();
    }
    return g_error;
}

bool ncclBuiltIn()
{
    return true;
}

std::string ncclLoadedFrom()
{
    std::lock_guard lock(g_mutex);
    return g_error.empty() ? g_from : std::string();
}

std::string ncclVersionText()
{
    std::lock_guard lock(g_mutex);
    return g_error.empty() ? g_version : std::string();
}

const NcclApi& ncclApi()
{
    return g_api;
}

#else

std::string loadNccl()
{
    return "this streamscope-cli was built without NCCL support (nccl.h was not found in the CUDA toolkit at build "
           "time): collective ops run on the simulator only (--backend sim)";
}

bool ncclBuiltIn()
{
    return false;
}

std::string ncclLoadedFrom()
{
    return {};
}

std::string ncclVersionText()
{
    return {};
}

#endif

} // namespace streamscope
