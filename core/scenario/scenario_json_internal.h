// The parts of the scenario JSON reader and writer (scenario_json.h) that its files share. Internal to core.
//   scenario_json.cpp         parseScenario, loadScenarioFile, validateScenario; JSON text and message helpers
//   scenario_json_reader.cpp  the document: header, devices, streams, threads and their ops
//   scenario_json_run.cpp     run settings, the issued-op limit, expectations, warnings
//   scenario_variants.cpp     variants: reading them, and applying one to the document
//   scenario_json_writer.cpp  Scenario -> JSON
#pragma once

#include "scenario_json.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace streamscope::scenario_json {

// Reading uses the sorted-map json: lookups stay O(log n) on hostile files with huge objects. Writing uses
// ordered_json so that files read in the order of docs/SCENARIO.md ("format" first).
using Json = nlohmann::json;
using OrderedJson = nlohmann::ordered_json;

inline constexpr std::string_view kFormat = "streamscope-scenario";
inline constexpr int kMinPriority = -5; // CUDA's greatest priority on current GPUs (H200: 0 .. -5)
inline constexpr int kMaxBlockThreads = 1024;
inline constexpr int kMaxBlockZ = 64;
inline constexpr int64_t kMaxGridX = std::numeric_limits<int32_t>::max();
inline constexpr int64_t kMaxGridYZ = 65535;
inline constexpr int kMaxConnections = 32; // CUDA_DEVICE_MAX_CONNECTIONS range
// As kMaxRanks of ranks.h: merge holds every rank in memory.
inline constexpr int kMaxRankCount = 4096;
// One hour: keeps nanosecond arithmetic far from overflow.
inline constexpr double kMaxDurationUs = 3600.0 * 1'000'000.0;

// The first error ends reading; it travels as an exception inside the reader only and leaves as a Result.
struct ReadFailure {
    Error error;
};

// ---------------------------------------------------------------------------------------------------------------
// Small helpers

std::string versionNote();

std::string dumpJson(const Json& j);

// A name as it appears in a message: JSON-quoted, so control characters in hostile names stay visible.
std::string jsonQuoted(std::string_view s);

std::string child(const std::string& path, std::string_view key);

std::string child(const std::string& path, size_t index);

std::string typeName(const Json& v);

size_t editDistance(std::string_view a, std::string_view b);

// The closest candidate, when it is close enough to be a likely typo.
template <typename Range>
std::optional<std::string> closest(std::string_view word, const Range& candidates)
{
    const size_t allowed = word.size() <= 3 ? 1 : word.size() <= 6 ? 2 : 3;
    std::optional<std::string> best;
    size_t bestDistance = allowed + 1;
    for (const auto& c : candidates) {
        const std::string_view candidate(c);
        // Long hostile names would make the quadratic distance expensive; typos are short.
        if (candidate.size() > 256 || word.size() > 256)
            continue;
        const size_t d = editDistance(word, candidate);
        if (d < bestDistance && d < std::max(word.size(), candidate.size())) {
            bestDistance = d;
            best = std::string(candidate);
        }
    }
    return best;
}

template <typename Range>
std::string joinQuoted(const Range& names)
{
    std::string out;
    for (const auto& n : names) {
        if (!out.empty())
            out += ", ";
        out += jsonQuoted(std::string_view(n));
    }
    return out;
}

// " (did you mean "x"?)" or " (one of: "a", "b")" for a value that is not one of `candidates`.
template <typename Range>
std::string hint(std::string_view word, const Range& candidates, bool listWhenNoMatch = true)
{
    if (auto best = closest(word, candidates))
        return " (did you mean " + jsonQuoted(*best) + "?)";
    if (!listWhenNoMatch || std::empty(candidates))
        return {};
    return " (one of: " + joinQuoted(candidates) + ")";
}

std::string formatNumber(double v);

// Saturating arithmetic for the issued-operation count: hostile repeat and iteration counts must not overflow.
int64_t saturatingMul(int64_t a, int64_t b);

int64_t saturatingAdd(int64_t a, int64_t b);

bool parseDecimal(std::string_view s, int64_t& out);

// ---------------------------------------------------------------------------------------------------------------
// JSON text -> document

std::pair<size_t, size_t> lineAndColumn(const std::string& text, size_t byte);

// nlohmann's what() is "[json.exception.parse_error.101] parse error at line 1, column 2: syntax error ...":
// keep only the part after the position, which we state ourselves.
std::string plainMessage(const char* what);

std::string positionText(const std::string& text, size_t byte);

Json parseJsonText(const std::string& text, const std::string& file, int maxDepth);

// ---------------------------------------------------------------------------------------------------------------
// Field tables

using FieldList = std::vector<std::string_view>;

inline const FieldList kTopFields{"format",  "version", "id",  "title",  "description", "effect", "devices",
                                  "streams", "threads", "run", "expect", "variants",    "ranks"};
inline const FieldList kRanksFields{"count", "per_host", "link", "device", "overrides"};
inline const FieldList kRankOverrideFields{"ranks", "set", "why"};
inline const FieldList kDeviceFields{"index", "profile"};
inline const FieldList kStreamFields{"name", "device", "kind", "priority"};
inline const FieldList kThreadFields{"name", "device", "repeat", "workers", "ops"};
inline const FieldList kRunFields{"warmup", "iterations", "env", "timing"};
inline const FieldList kExpectFields{"id",     "metric", "streams", "spans", "kinds",
                                     "device", "op",     "value",   "why",   "key"};
inline const FieldList kVariantFields{"id", "title", "description", "set", "expect", "effect"};
inline const FieldList kAllOpFields{"op",    "name",        "stream", "event",        "kernel", "grid",
                                    "block", "duration_us", "size",   "shared_bytes", "kind",   "bytes",
                                    "host",  "dst_device",  "ops",    "algorithm",    "root",   "peer"};
inline const std::vector<std::string_view> kCompareOps{"<", "<=", ">", ">=", "=="};

FieldList opFields(OpKind kind);

std::vector<std::string> opKindNames();

std::vector<std::string> kernelKindNames();

std::vector<std::string> copyKindNames();

std::vector<std::string> streamKindNames();

bool isProblemSizeKernel(KernelKind k);

// fma's size is iterations per thread, so its grid says how many threads there are; spin and empty have no size.
bool kernelNeedsGrid(KernelKind k);

bool isGraphNodeKind(OpKind k);

// Ops that work in the stream itself and so must be issued from the stream's device. cudaStreamSynchronize is
// legal on any device's stream, so stream-sync is left out.
bool needsStreamOnThreadDevice(OpKind k);

// Document -> Scenario: every field read and checked; the first error throws ReadFailure with its JSON path.
class ScenarioReader {
public:
    ScenarioReader(const std::string& file, const ScenarioLimits& limits) : m_file(file), m_limits(limits) {}

    // "format" and "version" only: a trace or a newer scenario gets that answer first.
    void readHeader(const Json& root);
    // The whole document, every rule checked; warnings in document order.
    ScenarioReadResult read(const Json& root);

private:
    // Values, devices, streams, threads and ops (scenario_json_reader.cpp).
    [[noreturn]] void fail(std::string path, std::string message) const;
    static const Json* find(const Json& obj, const char* key);
    void expectObject(const Json& v, const std::string& path) const;
    void expectArray(const Json& v, const std::string& path) const;
    std::string readString(const Json& v, const std::string& path) const;
    std::string readName(const Json& v, const std::string& path, std::string_view what) const;
    std::string optionalString(const Json& obj, const char* key, const std::string& path) const;
    int64_t readInt(const Json& v, const std::string& path) const;
    int64_t readIntIn(const Json& v, const std::string& path, std::string_view field, int64_t lo, int64_t hi) const;
    double readNumber(const Json& v, const std::string& path) const;
    bool readBool(const Json& v, const std::string& path) const;
    double readDuration(const Json& v, const std::string& path, bool positive) const;
    int64_t readBytes(const Json& v, const std::string& path) const;
    void checkFields(const Json& obj, const std::string& path, const FieldList& allowed, const FieldList& others = {},
                     std::string_view owner = {}) const;
    void missing(const std::string& path, std::string_view field, std::string_view why = {}) const;
    const Json& required(const Json& obj, const char* key, const std::string& path, std::string_view why = {}) const;
    void readDevices(const Json& root);
    int readDeviceIndex(const Json& v, const std::string& path, std::string_view field) const;
    int readDeviceRef(const Json& v, const std::string& path, std::string_view field);
    void readStreams(const Json& root);
    static std::string streamHint(const std::string& name, const std::set<std::string>& names);
    std::set<std::string> streamNames() const;
    std::set<std::string> expectStreamNames(std::set<std::string> names) const;
    void readThreads(const Json& root);
    void countOp(const std::string& path);
    Op readOp(const Json& v, const std::string& path, const ThreadSpec& thread, const Op* graph);
    void readStream(const Json& v, const std::string& path, Op& op, const ThreadSpec& thread, const Op* graph);
    void readEvent(const Json& v, const std::string& path, Op& op);
    Dim3 readDim(const Json& v, const std::string& path, std::string_view field, bool isGrid) const;
    void readKernel(const Json& v, const std::string& path, Op& op, const ThreadSpec& thread, const Op* graph);
    void readMemcpy(const Json& v, const std::string& path, Op& op, const ThreadSpec& thread, const Op* graph);
    void readGraph(const Json& v, const std::string& path, Op& op, const ThreadSpec& thread);
    void readCollective(const Json& v, const std::string& path, Op& op, const ThreadSpec& thread);

    // Ranks: count, link, device binding and per-rank overrides (scenario_json_ranks.cpp).
    void readRanks(const Json& root);
    void checkCollectiveRanks() const;

    // Run settings, the issued-op limit, expectations and warnings (scenario_json_run.cpp).
    void readRun(const Json& root);
    void checkIssuedCount() const;
    std::vector<std::string> readStringList(const Json& v, const std::string& path) const;
    Expectation readExpectation(const Json& v, const std::string& path, const std::set<std::string>& streams) const;
    std::vector<Expectation> readExpectations(const Json& v, const std::string& path,
                                              const std::set<std::string>& streams) const;
    void warn(std::string path, std::string message, int64_t op = -1);
    void warnUnrecordedEvents();

    // Variants: their "set" pointers, streams and effects (scenario_variants.cpp).
    void checkSetPointers(const Json& set, const std::string& setPath) const;
    std::set<std::string> variantStreamNames(const Json& set) const;
    std::string readEffect(const Json& object, const std::string& path);
    void readVariants(const Json& root);

    struct EventUse {
        std::string path;
        int event = -1;
        OpKind kind = OpKind::Wait;
        int64_t op = 0; // ordinal of the op, for document order
    };

    struct PendingWarning {
        int64_t op = 0;
        Warning warning;
    };

    const std::string& m_file;
    const ScenarioLimits& m_limits;
    Scenario m_scenario;
    std::vector<PendingWarning> m_warnings;
    bool m_devicesDeclared = false;
    std::set<int> m_usedDevices;
    std::unordered_map<std::string, int> m_streamByName;
    std::unordered_map<std::string, int> m_eventByName;
    std::vector<bool> m_eventRecorded;
    std::vector<EventUse> m_eventUses;
    int64_t m_opCount = 0;
};

// The index of the variant with this id in the document, or -1; `known` gets every variant id.
int findVariant(const Json& root, const std::string& id, std::vector<std::string>& known);
// Applies each "set" assignment of the variant to the document (scenario_variants.cpp).
void applyVariant(Json& root, size_t variantIndex, const std::string& file, const ScenarioLimits& limits);
// Applies each assignment of a "set" object (a variant's, a rank override's) to the document.
void applySet(Json& root, const Json& set, const std::string& setPath, const std::string& file,
              const ScenarioLimits& limits);

} // namespace streamscope::scenario_json
