// The NCCL functions StreamScope calls, resolved from the library loadNccl() opened (nccl_loader.h). Compiled against
// the toolkit's nccl.h for the types only: nothing links libnccl. Internal to kernels/; only where
// STREAMSCOPE_HAVE_NCCL is defined (nccl.h found at build time).
#pragma once

#ifdef STREAMSCOPE_HAVE_NCCL

#include <nccl.h>

namespace streamscope {

struct NcclApi {
    ncclResult_t (*getVersion)(int*) = nullptr;
    ncclResult_t (*getUniqueId)(ncclUniqueId*) = nullptr;
    ncclResult_t (*commInitRank)(ncclComm_t*, int, ncclUniqueId, int) = nullptr;
    ncclResult_t (*commInitAll)(ncclComm_t*, int, const int*) = nullptr;
    ncclResult_t (*commDestroy)(ncclComm_t) = nullptr;
    ncclResult_t (*commAbort)(ncclComm_t) = nullptr;
    const char* (*getErrorString)(ncclResult_t) = nullptr;
    const char* (*getLastError)(ncclComm_t) = nullptr; // optional (NCCL 2.13 and later)
    ncclResult_t (*groupStart)() = nullptr;
    ncclResult_t (*groupEnd)() = nullptr;
    ncclResult_t (*allReduce)(const void*, void*, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t,
                              cudaStream_t) = nullptr;
    ncclResult_t (*allGather)(const void*, void*, size_t, ncclDataType_t, ncclComm_t, cudaStream_t) = nullptr;
    ncclResult_t (*reduceScatter)(const void*, void*, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t,
                                  cudaStream_t) = nullptr;
    ncclResult_t (*broadcast)(const void*, void*, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t) = nullptr;
    ncclResult_t (*send)(const void*, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t) = nullptr;
    ncclResult_t (*recv)(void*, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t) = nullptr;
};

// The resolved functions; valid only after loadNccl() returned an empty string.
const NcclApi& ncclApi();

} // namespace streamscope

#endif
