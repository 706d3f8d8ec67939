// NCCL, loaded at run time (dlopen of libnccl.so.2): the library is a few hundred MB, is not part of the CUDA
// runtime StreamScope links, and on many GPU machines exists only inside PyTorch's wheel (nvidia/nccl/lib). Only the
// collective ops of a scenario need it (docs/RANKS.md "Collectives on GPUs"). Plain C++ header: the NCCL types stay
// in nccl_api.h, for the files that make NCCL calls.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace streamscope {

// getenv, or a table in tests.
using NcclEnvLookup = std::function<const char*(const char*)>;

// Where libnccl.so.2 is looked for, in order. With STREAMSCOPE_NCCL_LIBRARY set, that file only (the user named
// it). Else: "libnccl.so.2" (the dynamic loader's own search: LD_LIBRARY_PATH, the ld.so cache), then
// /usr/local/cuda/lib64 and /usr/local/cuda/lib, then the nvidia/nccl/lib folder of every Python 3 site-packages or
// dist-packages folder found under the roots (/usr/lib, /usr/local/lib, $VIRTUAL_ENV/lib, $CONDA_PREFIX/lib,
// $HOME/.local/lib: PyTorch's wheel ships NCCL there), only those that exist. `roots` replaces the default roots
// (tests); `cudaDirs` the two CUDA folders.
struct NcclSearch {
    std::vector<std::string> candidates; // file paths, or the bare name for the loader's own search
    std::string fromEnvironment;         // STREAMSCOPE_NCCL_LIBRARY, when set
};
NcclSearch ncclSearchList(const NcclEnvLookup& env);
NcclSearch ncclSearchList(const NcclEnvLookup& env, const std::vector<std::string>& roots,
                          const std::vector<std::string>& cudaDirs);

// Loads NCCL once per process and resolves the functions StreamScope calls. An empty string on success, else a
// message that names every place looked at and how to point StreamScope at the library. Thread-safe.
std::string loadNccl();
// Whether this build can run collectives on GPUs (nccl.h was found at build time).
bool ncclBuiltIn();
// After a successful loadNccl(): the file loaded ("libnccl.so.2 (found by the dynamic loader)" for a bare name)
// and NCCL's version as text ("2.28.9"); empty before.
std::string ncclLoadedFrom();
std::string ncclVersionText();

} // namespace streamscope
