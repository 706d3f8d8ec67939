// The CUDA backend's preparation of one op (or graph node), called by prepareThreads for every op of every host
// thread: its device buffers, zeroed (allocateDevice), its kernel's arguments and shape checks, its host memory
// and copy endpoints (prepareOp), and for a graph op its nodes, captured once on the device's private capture
// stream, instantiated and uploaded (captureGraph), with event-record nodes between the nodes where graphs are
// timed per node. Everything lands in the op's OpResources (cuda_backend_state.h); release() frees it.
#include "cuda_backend_state.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace streamscope::cuda_backend {

namespace {

bool isCapturable(OpKind k)
{
    return k == OpKind::Kernel || k == OpKind::Memcpy || k == OpKind::Memset || k == OpKind::HostFunc;
}

} // namespace

Status CudaBackend::allocateDevice(OpResources& res, int device, size_t bytes, void** out)
{
    *out = nullptr;
    // At least 256 bytes, so that zero-byte copies and memsets still get valid pointers.
    bytes = std::max<size_t>(bytes, 256);
    if (cudaError_t e = cudaSetDevice(device); e != cudaSuccess)
        return cudaFailure("cudaSetDevice", e, res.where, "device " + std::to_string(device));
    if (cudaError_t e = cudaMalloc(out, bytes); e != cudaSuccess)
        return cudaFailure("cudaMalloc", e, res.where,
                           bytesText(double(bytes)) + " on device " + std::to_string(device) + ", while preparing");
    res.deviceMemory.push_back({*out, device, int64_t(bytes)});
    // Zeros: real numbers for the kernels, no denormals, no NaNs.
    if (cudaError_t e = cudaMemset(*out, 0, bytes); e != cudaSuccess)
        return cudaFailure("cudaMemset", e, res.where, "while preparing");
    return {};
}

Status CudaBackend::prepareOp(ThreadState& ts, const Op& op, int device, OpResources& res, const std::string& path)
{
    switch (op.kind) {
    case OpKind::Collective: return prepareCollective(ts, op, device, res, path);
    case OpKind::Kernel: {
        const auto k = libraryKernel(op.kernel);
        const Dim3 grid = effectiveGrid(op);
        if (std::string why = kernels::checkShape(k, toDim3(grid), toDim3(op.block), op.size); !why.empty())
            return Status(Error{{}, path, why + " (thread \"" + ts.name + "\", op \"" + res.name + "\")"},
                          ErrorClass::BadInput);
        if (op.sharedBytes < 0)
            return Status(Error{{}, path + "/shared", "dynamic shared memory must not be negative"},
                          ErrorClass::BadInput);
        const auto& dev = *m_devices[size_t(device)];
        const int64_t sharedTotal = int64_t(kernels::ownSharedBytes(k, toDim3(op.block))) + op.sharedBytes;
        if (sharedTotal > dev.sharedOptin)
            return runtimeError("op \"" + res.name + "\" of thread \"" + ts.name + "\" needs "
                                + std::to_string(sharedTotal) + " B of dynamic shared memory per block; device "
                                + std::to_string(device) + " allows at most " + std::to_string(dev.sharedOptin) + " B");
        auto& a = res.launch;
        a.kernel = k;
        a.grid = toDim3(grid);
        a.block = toDim3(op.block);
        a.sharedBytes = size_t(op.sharedBytes);
        a.size = op.size;
        a.spinNs = uint64_t(std::llround(std::max(0.0, op.durationUs) * 1000.0));
        a.illegalAddress = !m_options.illegalAddressOp.empty() && res.name == m_options.illegalAddressOp;
        const auto needs = kernels::bufferNeeds(k, op.size, a.grid, a.block);
        void* p = nullptr;
        if (needs.outFloats) {
            if (Status st = allocateDevice(res, device, needs.outFloats * sizeof(float), &p); !st)
                return st;
            a.out = static_cast<float*>(p);
            a.outCount = int64_t(needs.outFloats);
        }
        if (needs.in0Floats) {
            if (Status st = allocateDevice(res, device, needs.in0Floats * sizeof(float), &p); !st)
                return st;
            a.in0 = static_cast<const float*>(p);
        }
        if (needs.in1Floats) {
            if (Status st = allocateDevice(res, device, needs.in1Floats * sizeof(float), &p); !st)
                return st;
            a.in1 = static_cast<const float*>(p);
        }
        if (needs.scratchBytes) {
            if (Status st = allocateDevice(res, device, needs.scratchBytes, &p); !st)
                return st;
            a.scratch = p;
        }
        if (cudaError_t e = cudaSetDevice(device); e != cudaSuccess)
            return cudaFailure("cudaSetDevice", e, res.where);
        if (cudaError_t e = kernels::prepareSharedMemory(k, a.block, a.sharedBytes); e != cudaSuccess)
            return cudaFailure("cudaFuncSetAttribute", e, res.where,
                               std::to_string(sharedTotal) + " B of dynamic shared memory");
        if (cudaError_t e = kernels::preload(k, a.block); e != cudaSuccess)
            return cudaFailure("cudaFuncGetAttributes", e, res.where, "loading the kernel");
        return {};
    }
    case OpKind::Memcpy: {
        res.bytes = size_t(std::max<int64_t>(op.bytes, 0));
        const size_t alloc = std::max<size_t>(res.bytes, 256);
        void* a = nullptr;
        void* b = nullptr;
        res.srcDevice = device;
        res.dstDevice = device;
        if (op.copy == CopyKind::H2D || op.copy == CopyKind::D2H) {
            if (op.pinned) {
                if (cudaError_t e = cudaMallocHost(&res.hostMemory, alloc); e != cudaSuccess)
                    return cudaFailure("cudaMallocHost", e, res.where, bytesText(double(alloc)) + ", while preparing");
                res.hostPinned = true;
            } else {
                res.hostMemory = std::malloc(alloc);
                if (!res.hostMemory)
                    return runtimeError("malloc of " + bytesText(double(alloc)) + " of pageable host memory failed for "
                                        + res.where);
            }
            // Touch every page now, so that first-touch faults do not land in the measured copies.
            std::memset(res.hostMemory, 0, alloc);
            if (Status st = allocateDevice(res, device, res.bytes, &a); !st)
                return st;
            res.src = op.copy == CopyKind::H2D ? res.hostMemory : a;
            res.dst = op.copy == CopyKind::H2D ? a : res.hostMemory;
        } else if (op.copy == CopyKind::D2D) {
            if (Status st = allocateDevice(res, device, res.bytes, &a); !st)
                return st;
            if (Status st = allocateDevice(res, device, res.bytes, &b); !st)
                return st;
            res.src = a;
            res.dst = b;
        } else {
            if (op.dstDevice < 0)
                return Status(Error{{}, path + "/dst_device", "a peer copy needs a destination device"},
                              ErrorClass::BadInput);
            res.dstDevice = op.dstDevice;
            if (Status st = allocateDevice(res, device, res.bytes, &a); !st)
                return st;
            if (Status st = allocateDevice(res, op.dstDevice, res.bytes, &b); !st)
                return st;
            res.src = a;
            res.dst = b;
        }
        return {};
    }
    case OpKind::Memset: {
        res.bytes = size_t(std::max<int64_t>(op.bytes, 0));
        void* a = nullptr;
        if (Status st = allocateDevice(res, device, res.bytes, &a); !st)
            return st;
        res.dst = a;
        return {};
    }
    case OpKind::HostFunc:
        res.hostFunc.us = op.durationUs;
        res.hostFunc.abort = &m_abort;
        return {};
    case OpKind::Graph: {
        res.graph = std::make_unique<GraphResources>();
        auto& g = *res.graph;
        g.device = device;
        g.nodes.resize(op.ops.size());
        for (size_t n = 0; n < op.ops.size(); ++n) {
            const Op& node = op.ops[n];
            auto& nr = g.nodes[n];
            nr.name = displayName(node);
            nr.where = res.where + " node " + std::to_string(n) + " \"" + nr.name + "\"";
            const std::string nodePath = path + "/ops/" + std::to_string(n);
            if (!isCapturable(node.kind))
                return Status(Error{{},
                                    nodePath + "/kind",
                                    "a graph holds kernel, memcpy, memset and host-func ops; \""
                                        + std::string(toString(node.kind)) + "\" cannot be captured (" + nr.where
                                        + ")"},
                              ErrorClass::BadInput);
            if (Status st = prepareOp(ts, node, device, nr, nodePath); !st)
                return st;
        }
        const bool nodeTiming = m_opEvents && !m_cuptiOn && m_options.graphNodeTiming && !op.ops.empty();
        Status st = captureGraph(ts, op, device, res, nodeTiming);
        if (!st && nodeTiming) // per-node timing is a refinement: fall back to one span for the whole graph
            st = captureGraph(ts, op, device, res, false);
        return st;
    }
    default: return {};
    }
}

Status CudaBackend::captureGraph(ThreadState&, const Op& op, int device, OpResources& res, bool nodeTiming)
{
    auto& g = *res.graph;
    auto& dev = *m_devices[size_t(device)];
    // Drop what an earlier attempt left.
    if (g.exec)
        (void)cudaGraphExecDestroy(g.exec);
    if (g.graph)
        (void)cudaGraphDestroy(g.graph);
    g.exec = nullptr;
    g.graph = nullptr;
    for (auto ev : g.placeholders)
        (void)cudaEventDestroy(ev);
    g.placeholders.clear();
    g.timingNodes.clear();
    g.nodeTiming = nodeTiming;

    if (cudaError_t e = cudaSetDevice(device); e != cudaSuccess)
        return cudaFailure("cudaSetDevice", e, res.where);
    if (nodeTiming) {
        g.placeholders.resize(op.ops.size() + 1, nullptr);
        for (auto& ev : g.placeholders)
            if (cudaError_t e = cudaEventCreateWithFlags(&ev, cudaEventDefault); e != cudaSuccess)
                return cudaFailure("cudaEventCreateWithFlags", e, res.where, "graph timing events");
    }
    cudaStream_t cs = dev.captureStream;
    if (cudaError_t e = cudaStreamBeginCapture(cs, cudaStreamCaptureModeThreadLocal); e != cudaSuccess)
        return cudaFailure("cudaStreamBeginCapture", e, res.where);
    auto abandon = [&](std::string_view api, cudaError_t e, const std::string& where, std::string_view detail) {
        cudaGraph_t partial = nullptr;
        (void)cudaStreamEndCapture(cs, &partial);
        if (partial)
            (void)cudaGraphDestroy(partial);
        return cudaFailure(api, e, where, detail);
    };
    if (nodeTiming)
        if (cudaError_t e = cudaEventRecordWithFlags(g.placeholders[0], cs, cudaEventRecordExternal); e != cudaSuccess)
            return abandon("cudaEventRecordWithFlags", e, res.where, "graph timing node, during capture");
    for (size_t n = 0; n < op.ops.size(); ++n) {
        if (cudaError_t e = enqueue(op.ops[n], g.nodes[n], cs); e != cudaSuccess) {
            std::string detail = "during capture";
            if (op.ops[n].kind == OpKind::Memcpy && !op.ops[n].pinned
                && (op.ops[n].copy == CopyKind::H2D || op.ops[n].copy == CopyKind::D2H))
                detail += "; copies in a graph need pinned host memory";
            else if (op.ops[n].kind == OpKind::Kernel)
                detail = launchDetail(op.ops[n], g.nodes[n]) + ", " + detail;
            return abandon(apiName(op.ops[n]), e, g.nodes[n].where, detail);
        }
        if (nodeTiming)
            if (cudaError_t e = cudaEventRecordWithFlags(g.placeholders[n + 1], cs, cudaEventRecordExternal);
                e != cudaSuccess)
                return abandon("cudaEventRecordWithFlags", e, res.where, "graph timing node, during capture");
    }
    if (cudaError_t e = cudaStreamEndCapture(cs, &g.graph); e != cudaSuccess)
        return cudaFailure("cudaStreamEndCapture", e, res.where);
    if (cudaError_t e = cudaGraphInstantiate(&g.exec, g.graph, 0); e != cudaSuccess)
        return cudaFailure("cudaGraphInstantiate", e, res.where);
    if (cudaError_t e = cudaGraphUpload(g.exec, cs); e != cudaSuccess)
        return cudaFailure("cudaGraphUpload", e, res.where);
    if (!nodeTiming)
        return {};

    // Find the captured event-record nodes by their placeholder events.
    size_t count = 0;
    if (cudaError_t e = cudaGraphGetNodes(g.graph, nullptr, &count); e != cudaSuccess)
        return cudaFailure("cudaGraphGetNodes", e, res.where);
    std::vector<cudaGraphNode_t> nodes(count);
    if (cudaError_t e = cudaGraphGetNodes(g.graph, nodes.data(), &count); e != cudaSuccess)
        return cudaFailure("cudaGraphGetNodes", e, res.where);
    g.timingNodes.assign(g.placeholders.size(), nullptr);
    for (auto node : nodes) {
        cudaGraphNodeType type{};
        if (cudaGraphNodeGetType(node, &type) != cudaSuccess || type != cudaGraphNodeTypeEventRecord)
            continue;
        cudaEvent_t ev = nullptr;
        if (cudaGraphEventRecordNodeGetEvent(node, &ev) != cudaSuccess)
            continue;
        const auto it = std::find(g.placeholders.begin(), g.placeholders.end(), ev);
        if (it != g.placeholders.end())
            g.timingNodes[size_t(it - g.placeholders.begin())] = node;
    }
    (void)cudaGetLastError();
    if (std::find(g.timingNodes.begin(), g.timingNodes.end(), nullptr) != g.timingNodes.end())
        return runtimeError("the timing nodes of graph " + res.where + " were not found after capture");
    g.launchEvents.assign(g.placeholders.size(), nullptr);
    return {};
}

} // namespace streamscope::cuda_backend
