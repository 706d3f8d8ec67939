// Limits every trace importer enforces against hostile files (internal to core; docs/FORMATS.md, "Limits"), each
// checked before the work it guards, with an error that names the file, the place in it and the limit.
#pragma once

#include <climits>
#include <cstddef>
#include <cstdint>
#include <string>

namespace streamscope {

// Tracks (host threads, streams, range lanes) in one trace: far more than any profiler records, and few enough that
// everything downstream (analysis, the timeline's rows) stays fast and small.
constexpr size_t kMaxImportedTracks = 200'000;
// Distinct devices in one trace.
constexpr size_t kMaxImportedDevices = 1024;

// "too many tracks: more than 200000 host threads and streams; the limit is 200000"
inline std::string tooManyTracksMessage()
{
    return "too many tracks: more than " + std::to_string(kMaxImportedTracks)
        + " host threads and streams; the limit is " + std::to_string(kMaxImportedTracks);
}

inline std::string tooManyDevicesMessage()
{
    return "too many devices: more than " + std::to_string(kMaxImportedDevices) + "; the limit is "
        + std::to_string(kMaxImportedDevices);
}

// A device index must be an int that is not negative; "" if it is, else what is wrong with it.
inline std::string deviceIndexProblem(int64_t device)
{
    if (device < 0 || device > INT_MAX)
        return "device " + std::to_string(device) + " is out of range: a device index is from 0 to "
            + std::to_string(INT_MAX);
    return {};
}

} // namespace streamscope
