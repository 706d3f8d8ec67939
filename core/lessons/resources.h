// Where StreamScope finds its shipped files (lessons, device profiles): $STREAMSCOPE_RESOURCES; else, for an
// installed executable, share/streamscope beside its bin/ (found from the executable's own path, so an installed
// tree works wherever its prefix is); else the source tree's resources/ (running from a build directory); else the
// configured install location.
#pragma once

#include "result.h"
#include "scenario.h"
#include "trace.h"

#include <string>
#include <vector>

namespace streamscope {

std::string resourcesDir();

struct PresetInfo {
    std::string id; // file name without .json, e.g. "01-two-streams"
    std::string title;
    std::string path;
    std::vector<std::string> variants;
};

// The lessons in resources/presets/, ordered by id.
std::vector<PresetInfo> listPresets();
// A preset by id (also accepts the number alone: "1" or "01"), or an error listing the ids.
Result<PresetInfo> findPreset(const std::string& idOrNumber);

// The effect a trace's scenario teaches (Scenario::effect, a diagnostic rule id): the embedded scenario's, or, for
// a trace recorded before its lesson named one, the shipped lesson's of the same id and variant. Empty when none.
std::string lessonEffect(const RunInfo& info);

} // namespace streamscope
