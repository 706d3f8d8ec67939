// Synthetic per-rank PyTorch profiler traces (Kineto's Chrome JSON) of a data-parallel job, for the merge tests and
// the merge benchmark. Each rank's host thread launches `kernelsPerStep` compute kernels into stream 7, records an
// event, makes the NCCL stream 20 wait for it (with the "Stream Wait Event" record Kineto writes under
// enable_cuda_sync_events), launches an NCCL all-reduce kernel into stream 20 and synchronizes that stream. As NCCL
// runs it, each rank's all-reduce kernel starts as soon as its own compute is done and ends when the last rank has
// arrived plus the transfer: a straggler rank (`extraNs` more compute per step) makes the others' kernels spin.
// Each rank has its own baseTimeNanoseconds (ts counts from it), so only an alignment by that base puts the ranks'
// all-reduce ends at one time. Qt-free: the benchmark uses it too.
#pragma once

#include <algorithm>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace streamscope::testing {

struct KinetoJobSpec {
    int ranks = 4;
    int steps = 3;
    int kernelsPerStep = 2;
    int64_t computeNs = 100'000;
    int64_t allReduceNs = 20'000;
    int straggler = 2;              // -1: none
    int64_t extraNs = 500'000;      // the straggler's extra compute per step
    int64_t baseStepNs = 7'000'000; // rank r's baseTimeNanoseconds: the job's base plus r times this
    bool distributedInfo = true;
    bool baseTime = true;
    std::string ncclKernel = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)";
};

namespace kineto_detail {

// Kineto writes ts and dur in µs with three decimals.
inline void appendUs(std::string& out, int64_t ns)
{
    char buf[48];
    std::snprintf(buf, sizeof buf, "%" PRId64 ".%03d", ns / 1000, int(ns % 1000));
    out += buf;
}

inline void appendEvent(std::string& out, const char* cat, const std::string& name, int64_t pid, int64_t tid,
                        int64_t tsNs, int64_t durNs, const std::string& args)
{
    out += out.back() == '[' ? "\n" : ",\n";
    out += "{\"ph\": \"X\", \"cat\": \"";
    out += cat;
    out += "\", \"name\": \"" + name + "\", \"pid\": " + std::to_string(pid) + ", \"tid\": " + std::to_string(tid);
    out += ", \"ts\": ";
    appendUs(out, tsNs);
    out += ", \"dur\": ";
    appendUs(out, durNs);
    out += ", \"args\": {" + args + "}}";
}

} // namespace kineto_detail

// The job's traces, one Kineto JSON text per rank; with `only` >= 0 that rank's text alone (the others are empty, their
// times still computed: each all-reduce ends after the last rank's arrival).
inline std::vector<std::string> kinetoJob(const KinetoJobSpec& spec, int only = -1)
{
    using kineto_detail::appendEvent;
    const int64_t jobBase = int64_t(1'790'857'026) * 1'000'000'000; // a Kineto base: a 3-month interval's start
    const int64_t launchNs = 4'000, callNs = 2'000;
    std::vector<std::string> out(size_t(spec.ranks));
    std::vector<int64_t> host(size_t(spec.ranks)), computeEnd(size_t(spec.ranks)), ncclEnd(size_t(spec.ranks), 0);
    std::vector<int64_t> corr(size_t(spec.ranks), 100);
    for (int r = 0; r < spec.ranks; ++r) {
        const int64_t base = jobBase + r * spec.baseStepNs;
        host[size_t(r)] = 100'000'000'000 + r * 1'000; // wall time of the first launch: 100 s after the job's base
        if (only >= 0 && r != only)
            continue;
        std::string& t = out[size_t(r)];
        t = "{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": [{\"id\": 0, \"name\": \"NVIDIA H200\", \"numSms\": "
            "132}],\n";
        if (spec.distributedInfo)
            t += "  \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": " + std::to_string(r)
                + ", \"world_size\": " + std::to_string(spec.ranks) + ", \"nccl_version\": \"2.27.5\"},\n";
        t += "  \"displayTimeUnit\": \"ms\",\n";
        if (spec.baseTime)
            t += "  \"baseTimeNanoseconds\": " + std::to_string(base) + ",\n";
        t += "  \"traceEvents\": [";
    }
    // Times below are on the job's wall clock minus jobBase; each rank writes them minus its own base's offset.
    auto local = [&](int r, int64_t wall) { return spec.baseTime ? wall - r * spec.baseStepNs : wall; };
    for (int step = 0; step < spec.steps; ++step) {
        for (int r = 0; r < spec.ranks; ++r) {
            std::string& t = out[size_t(r)];
            const bool w = only < 0 || r == only; // written, not only timed
            const int64_t pid = 1000 + r;
            int64_t& h = host[size_t(r)];
            int64_t end7 = std::max(computeEnd[size_t(r)], h);
            for (int k = 0; k < spec.kernelsPerStep; ++k) {
                const int64_t c = ++corr[size_t(r)];
                const std::string a = w ? "\"correlation\": " + std::to_string(c) : std::string();
                if (w)
                    appendEvent(t, "cuda_runtime", "cudaLaunchKernel", pid, pid, local(r, h), launchNs, a);
                const int64_t start = std::max(end7, h + launchNs) + 1'000;
                int64_t dur = spec.computeNs;
                if (r == spec.straggler && k == spec.kernelsPerStep - 1)
                    dur += spec.extraNs;
                if (w)
                    appendEvent(t, "kernel", "compute_kernel", 0, 7, local(r, start), dur,
                                "\"device\": 0, \"stream\": 7, " + a
                                    + ", \"grid\": [64, 1, 1], \"block\": [256, 1, 1]");
                end7 = start + dur;
                h += launchNs + 1'000;
            }
            computeEnd[size_t(r)] = end7;
            const int64_t record = ++corr[size_t(r)];
            if (w)
                appendEvent(t, "cuda_runtime", "cudaEventRecord", pid, pid, local(r, h), callNs,
                            "\"correlation\": " + std::to_string(record));
            h += callNs + 500;
            const int64_t wait = ++corr[size_t(r)];
            if (w)
                appendEvent(t, "cuda_runtime", "cudaStreamWaitEvent", pid, pid, local(r, h), callNs,
                            "\"correlation\": " + std::to_string(wait));
            if (w)
                appendEvent(t, "cuda_sync", "Stream Wait Event", 0, 20, local(r, h), 0,
                            "\"cuda_sync_kind\": \"Stream Wait Event\", \"wait_on_stream\": 7, "
                            "\"wait_on_cuda_event_record_corr_id\": "
                                + std::to_string(record) + ", \"stream\": 20, \"correlation\": " + std::to_string(wait)
                                + ", \"device\": 0");
            h += callNs + 500;
        }
        // NCCL: every rank's kernel starts when its compute is done, and all end together after the last arrival.
        int64_t lastArrival = 0;
        std::vector<int64_t> ncclStart(size_t(spec.ranks));
        for (int r = 0; r < spec.ranks; ++r) {
            const int64_t launchEnd = host[size_t(r)] + launchNs;
            ncclStart[size_t(r)] =
                std::max({launchEnd, computeEnd[size_t(r)], ncclEnd[size_t(r)]}) + 1'000 + r * 10; // apart by rank
            lastArrival = std::max(lastArrival, ncclStart[size_t(r)]);
        }
        const int64_t end = lastArrival + spec.allReduceNs;
        for (int r = 0; r < spec.ranks; ++r) {
            std::string& t = out[size_t(r)];
            const bool w = only < 0 || r == only; // written, not only timed
            const int64_t pid = 1000 + r;
            int64_t& h = host[size_t(r)];
            const int64_t c = ++corr[size_t(r)];
            const std::string a = w ? "\"correlation\": " + std::to_string(c) : std::string();
            if (w)
                appendEvent(t, "cuda_runtime", "cudaLaunchKernel", pid, pid, local(r, h), launchNs, a);
            if (w)
                appendEvent(t, "kernel", spec.ncclKernel, 0, 20, local(r, ncclStart[size_t(r)]),
                            end - ncclStart[size_t(r)],
                            "\"device\": 0, \"stream\": 20, " + a + ", \"grid\": [2, 1, 1], \"block\": [640, 1, 1]");
            ncclEnd[size_t(r)] = end;
            h += launchNs + 1'000;
            const int64_t sync = ++corr[size_t(r)];
            if (w)
                appendEvent(t, "cuda_runtime", "cudaStreamSynchronize", pid, pid, local(r, h), end + 3'000 - h,
                            "\"correlation\": " + std::to_string(sync));
            h = end + 10'000;
        }
    }
    for (auto& t : out)
        if (!t.empty())
            t += "\n  ]\n}\n";
    return out;
}

} // namespace streamscope::testing
