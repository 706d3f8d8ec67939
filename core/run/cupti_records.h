// CUPTI activity records as plain values, and how they become GPU spans: each record is matched to the op that
// issued it by the correlation id of the issuing API call, and its times are mapped onto the trace's host clock.
// CUDA-free and CUPTI-free (the tracer in kernels/ fills these), so that the matching is tested in CI on records
// captured on a real GPU (tests/data/cupti/).
#pragma once

#include "result.h"

#include <cstdint>
#include <string>
#include <vector>

namespace streamscope {

enum class CuptiRecordKind : uint8_t {
    Kernel,     // "kernel":      CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL
    Memcpy,     // "memcpy":      CUPTI_ACTIVITY_KIND_MEMCPY
    MemcpyPeer, // "memcpy-peer": CUPTI_ACTIVITY_KIND_MEMCPY2
    Memset,     // "memset":      CUPTI_ACTIVITY_KIND_MEMSET
};

struct CuptiRecord {
    CuptiRecordKind kind = CuptiRecordKind::Kernel;
    uint32_t correlationId = 0;
    uint32_t deviceId = 0;
    uint32_t streamId = 0;
    int64_t start = 0; // ns on CUPTI's clock
    int64_t end = 0;
    uint64_t graphNodeId = 0; // 0: not a graph node
    uint32_t graphId = 0;
    int64_t bytes = 0;
    std::string name; // kernels: the function's (mangled) name
};

// One issued op (or graph launch) whose GPU work CUPTI records: the correlation ids its API call got, where the
// backend asked CUPTI for them (an API callback per issuing call). Without ids, an issue is matched by its place in
// its CUDA stream: `device` and `streamId` (CUPTI's id of the stream) name the stream, `order` (the host time of
// the call) orders the issues of one stream.
struct CuptiIssue {
    uint32_t runtimeId = 0;
    uint32_t driverId = 0;
    uint32_t device = 0;
    uint32_t streamId = 0; // 0: unknown (such an issue is matched by its ids only)
    int64_t order = 0;
};

struct CuptiSpanTime {
    int64_t start = 0; // ns on the host clock
    int64_t end = 0;
    CuptiRecordKind kind = CuptiRecordKind::Kernel;
    uint64_t graphNodeId = 0;
};

struct CuptiMatch {
    std::vector<std::vector<CuptiSpanTime>> times; // per issue, in start order (a graph launch: one per node)
    size_t matched = 0;
    size_t unmatched = 0; // records of no issued op (preparation, warm-up work of the backend itself)
    size_t late = 0;      // records that started after latestStart
};

// Issues with ids are matched by them. Issues without ids but with a stream are matched by order: CUPTI gives each
// API call its own correlation id, ascending in the order of the calls, so the k-th distinct correlation id among
// a stream's records belongs to the k-th call issued to that stream — where every issue of the stream came from
// one host thread (the backend's rule for turning the callbacks off). A stream whose distinct ids do not number its
// issues is left unmatched rather than guessed: its ops count as ops without records.
//
// hostMinusCupti: add to a CUPTI time to get the host time. Records starting after latestStart (host clock) are left
// out: a graph instantiated while CUPTI recorded keeps its nodes' records after CUPTI is disabled, with the
// correlation id of the last call CUPTI saw (seen on an H200, CUDA 13.0), so the untimed iteration's work would
// otherwise land on the last timed op.
CuptiMatch matchCuptiRecords(const std::vector<CuptiRecord>& records, const std::vector<CuptiIssue>& issues,
                             int64_t hostMinusCupti, int64_t latestStart = INT64_MAX);

// A capture for tests: the issues, their records and the clock offset of one run (see tests/data/cupti/).
struct CuptiCapture {
    int64_t hostMinusCupti = 0;
    int64_t timedEnd = INT64_MAX; // host clock when the timed iterations were over
    int64_t offsetErrorNs = 0;
    std::vector<CuptiIssue> issues;
    std::vector<int64_t> issueApiStart; // host clock, per issue: the issuing call's start and end
    std::vector<int64_t> issueApiEnd;
    std::vector<std::string> issueNames; // per issue: the op's display name
    std::vector<CuptiRecord> records;
};
std::string cuptiCaptureToJson(const CuptiCapture& capture);
Result<CuptiCapture> parseCuptiCapture(const std::string& text, const std::string& file);

std::string_view toString(CuptiRecordKind);

} // namespace streamscope
