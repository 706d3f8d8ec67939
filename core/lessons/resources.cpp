#include "resources.h"

#include "scenario_json.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

#ifndef STREAMSCOPE_RESOURCES_SOURCE_DIR
#define STREAMSCOPE_RESOURCES_SOURCE_DIR ""
#endif
#ifndef STREAMSCOPE_RESOURCES_INSTALL_DIR
#define STREAMSCOPE_RESOURCES_INSTALL_DIR ""
#endif
#ifndef STREAMSCOPE_RESOURCES_RELATIVE_DIR
#define STREAMSCOPE_RESOURCES_RELATIVE_DIR ""
#endif

namespace streamscope {

namespace fs = std::filesystem;

namespace {

bool isDirectory(const std::string& dir)
{
    std::error_code ec;
    return !dir.empty() && fs::is_directory(dir, ec);
}

// The folder of the running executable, symlinks resolved (Linux: /proc/self/exe); empty where it cannot be read.
const std::string& executableDir()
{
    static const std::string dir = [] {
        std::error_code ec;
        const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
        return ec ? std::string() : exe.parent_path().string();
    }();
    return dir;
}

// Where an installed executable finds them: bin/../share/streamscope, wherever the prefix was installed or moved to.
std::string besideExecutable()
{
    const std::string relative = STREAMSCOPE_RESOURCES_RELATIVE_DIR;
    if (relative.empty() || executableDir().empty())
        return {};
    return (fs::path(executableDir()) / relative).lexically_normal().string();
}

// Lesson files are small; anything larger is not a lesson and is not read for the listing.
constexpr std::uintmax_t kMaxPresetBytes = 16u << 20;

// Title and variant ids only: the full validation happens when the preset is loaded to run.
void readPresetHeader(PresetInfo& info)
{
    std::error_code ec;
    const auto size = fs::file_size(info.path, ec);
    if (ec || size > kMaxPresetBytes)
        return;
    std::ifstream in(info.path, std::ios::binary);
    if (!in)
        return;
    std::ostringstream text;
    text << in.rdbuf();
    const auto doc = nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
    if (!doc.is_object())
        return;
    if (auto it = doc.find("title"); it != doc.end() && it->is_string())
        info.title = it->get<std::string>();
    auto variants = doc.find("variants");
    if (variants == doc.end())
        return;
    if (variants->is_array()) {
        for (const auto& v : *variants)
            if (v.is_object())
                if (auto id = v.find("id"); id != v.end() && id->is_string())
                    info.variants.push_back(id->get<std::string>());
    } else if (variants->is_object()) {
        for (const auto& item : variants->items())
            info.variants.push_back(item.key());
    }
}

bool allDigits(const std::string& s)
{
    return !s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c) != 0; });
}

// The lesson number of an id such as "01-two-streams" (-1 when it has none).
long leadingNumber(const std::string& id)
{
    size_t n = 0;
    while (n < id.size() && std::isdigit(static_cast<unsigned char>(id[n])))
        ++n;
    if (n == 0 || n > 9)
        return -1;
    return std::strtol(id.substr(0, n).c_str(), nullptr, 10);
}

std::string joinIds(const std::vector<PresetInfo>& presets)
{
    std::string s;
    for (const auto& p : presets) {
        if (!s.empty())
            s += ", ";
        s += p.id;
    }
    return s;
}

} // namespace

std::string resourcesDir()
{
    if (const char* env = std::getenv("STREAMSCOPE_RESOURCES"); env && *env)
        return env;
    if (std::string installed = besideExecutable(); isDirectory(installed))
        return installed;
    // A build tree's executables have no share/ beside them: the source tree it was built from, so that lessons
    // edited there are the ones that run, then the configured install location.
    if (isDirectory(STREAMSCOPE_RESOURCES_SOURCE_DIR) || !isDirectory(STREAMSCOPE_RESOURCES_INSTALL_DIR))
        return STREAMSCOPE_RESOURCES_SOURCE_DIR;
    return STREAMSCOPE_RESOURCES_INSTALL_DIR;
}

std::vector<PresetInfo> listPresets()
{
    std::vector<PresetInfo> presets;
    const fs::path dir = fs::path(resourcesDir()) / "presets";
    std::error_code ec;
    fs::directory_iterator it(dir, ec);
    if (ec)
        return presets;
    for (const auto& entry : it) {
        const fs::path& p = entry.path();
        std::error_code fileEc;
        if (p.extension() != ".json" || !entry.is_regular_file(fileEc))
            continue;
        PresetInfo info;
        info.id = p.stem().string();
        info.path = p.string();
        readPresetHeader(info);
        presets.push_back(std::move(info));
    }
    std::sort(presets.begin(), presets.end(), [](const PresetInfo& a, const PresetInfo& b) { return a.id < b.id; });
    return presets;
}

Result<PresetInfo> findPreset(const std::string& idOrNumber)
{
    std::string query = idOrNumber;
    if (query.size() > 5 && query.ends_with(".json"))
        query.resize(query.size() - 5);
    auto presets = listPresets();
    if (presets.empty())
        return Error{{},
                     {},
                     "no presets found in " + (fs::path(resourcesDir()) / "presets").string()
                         + " (set STREAMSCOPE_RESOURCES to the resources folder)"};
    if (query.empty())
        return Error{{}, {}, "empty preset name; presets: " + joinIds(presets)};

    for (const auto& p : presets)
        if (p.id == query)
            return p;

    std::vector<PresetInfo> matches;
    if (allDigits(query)) {
        const long number = query.size() <= 9 ? std::strtol(query.c_str(), nullptr, 10) : -2;
        for (const auto& p : presets)
            if (leadingNumber(p.id) == number)
                matches.push_back(p);
    } else {
        // A suffix that starts a word of the id: "two-streams" finds "01-two-streams", "streams" finds every
        // "...-streams" (and is then ambiguous).
        for (const auto& p : presets)
            if (p.id.size() > query.size() && p.id.ends_with(query) && p.id[p.id.size() - query.size() - 1] == '-')
                matches.push_back(p);
    }
    if (matches.size() == 1)
        return matches.front();
    if (matches.size() > 1)
        return Error{{}, {}, "preset name '" + idOrNumber + "' is ambiguous: " + joinIds(matches)};
    return Error{{}, {}, "unknown preset '" + idOrNumber + "'; presets: " + joinIds(presets)};
}

std::string lessonEffect(const RunInfo& info)
{
    if (!info.scenarioJson.empty())
        if (auto embedded = parseScenario(info.scenarioJson, "embedded scenario");
            embedded && !embedded->scenario.effect.empty())
            return embedded->scenario.effect;
    if (info.scenarioId.empty())
        return {};
    auto preset = findPreset(info.scenarioId);
    if (!preset || preset->id != info.scenarioId)
        return {};
    auto loaded = loadScenarioFile(preset->path, info.variant);
    return loaded ? loaded->scenario.effect : std::string();
}

} // namespace streamscope
