# Shared by tools/run.sh and tools/test.sh (sourced, not run): installs the missing system packages, finds a CUDA
# toolkit (never installs one), configures and builds build/. Expects ROOT and BUILD to be set.
say() { printf '==> %s\n' "$*"; }

# Debian 12 / Ubuntu 24.04 package names.
PACKAGES=(build-essential cmake ninja-build pkg-config nlohmann-json3-dev libcli11-dev qt6-base-dev qt6-svg-dev
          libqcustomplot-dev xvfb xauth libgtest-dev libsqlite3-dev zlib1g-dev)

ensure_packages() {
    if ! command -v dpkg-query >/dev/null; then
        say "not a Debian/Ubuntu system: not checking packages (${PACKAGES[*]})"
        return
    fi
    local missing=() p
    for p in "${PACKAGES[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
    done
    if ((${#missing[@]} == 0)); then
        say "system packages: all ${#PACKAGES[@]} present"
        return
    fi
    local sudo=()
    if [[ $(id -u) != 0 ]]; then
        command -v sudo >/dev/null || { echo "error: need root (or sudo) to install: ${missing[*]}" >&2; exit 1; }
        sudo=(sudo)
    fi
    say "installing missing system packages: ${missing[*]}"
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
}

# CMake arguments for the CUDA toolkit, in CUDA_ARGS: one is used when present, never installed.
find_cuda() {
    local nvcc=""
    if command -v nvcc >/dev/null; then
        nvcc="$(command -v nvcc)"
    elif [[ -x /usr/local/cuda/bin/nvcc ]]; then
        nvcc=/usr/local/cuda/bin/nvcc
    fi
    if [[ -n $nvcc ]]; then
        say "CUDA toolkit: $nvcc ($("$nvcc" --version | grep -o 'release [0-9.]*' || echo 'unknown release'))"
        CUDA_ARGS=(-DSTREAMSCOPE_CUDA=AUTO "-DCMAKE_CUDA_COMPILER=$nvcc")
    else
        say "no CUDA toolkit found: building without the CUDA backend (the simulator still works)"
        CUDA_ARGS=(-DSTREAMSCOPE_CUDA=OFF)
    fi
}

# configure_and_build [extra CMake arguments]
configure_and_build() {
    local fresh=()
    if [[ -f $BUILD/CMakeCache.txt ]] && ! grep -q '^CMAKE_GENERATOR:INTERNAL=Ninja$' "$BUILD/CMakeCache.txt"; then
        say "$BUILD was configured with another generator: configuring it afresh"
        fresh=(--fresh)
    fi
    find_cuda
    say "configuring $BUILD (Ninja, RelWithDebInfo${*:+, $*})"
    cmake "${fresh[@]}" -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "${CUDA_ARGS[@]}" "$@" |
        { grep -E "^-- StreamScope" || true; }
    say "building with $(nproc) jobs"
    cmake --build "$BUILD" -j "$(nproc)" || { echo "error: the build failed (see above)" >&2; exit 1; }
}
