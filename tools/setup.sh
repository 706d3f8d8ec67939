# Shared by tools/run.sh and tools/test.sh (sourced, not run): installs the missing system packages (and, for the
# tests, npm packages into a cache), finds a CUDA toolkit (never installs one), configures and builds build/. Expects
# ROOT and BUILD to be set.
say() { printf '==> %s\n' "$*"; }

# Debian 12 / Ubuntu 24.04 package names. clang builds the fuzz harnesses of .ci/run (CMake preset fuzz);
# clang-format checks the layout of the C++ files (tools/check_format.sh, ctest check_format); openmpi-bin runs the
# 4-rank job of the tests (mpirun_job), jq edits its traces into a two-host job; desktop-file-utils and appstream
# validate the app's menu entry and metainfo (validate_desktop_file, validate_metainfo, install_tree).
PACKAGES=(build-essential cmake ninja-build pkg-config nlohmann-json3-dev libcli11-dev qt6-base-dev qt6-svg-dev
          libqcustomplot-dev xvfb xauth libgtest-dev libsqlite3-dev zlib1g-dev libzstd-dev clang clang-format
          openmpi-bin jq desktop-file-utils appstream)

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
    say "installing missing system packages: ${missing[*]}"
    apt_install "${missing[@]}"
}

# apt_install PACKAGE...
apt_install() {
    local sudo=()
    if [[ $(id -u) != 0 ]]; then
        command -v sudo >/dev/null || { echo "error: need root (or sudo) to install: $*" >&2; exit 1; }
        sudo=(sudo)
    fi
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$@"
}

# The readers of the Chrome export that tests/interop loads under node: pinned, with the two dependencies the trace
# engine asks for as "latest" pinned too, in a cache outside the source tree (tools/test.sh hands it to CMake as
# STREAMSCOPE_NPM_DIR). Installed here, never at build time.
NPM_DIR="${STREAMSCOPE_NPM_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/streamscope/npm}"
NPM_PACKAGES=("@paulirish/trace_engine@0.0.65" "speedscope@1.25.0")
NPM_OVERRIDES=("third-party-web@0.30.0" "legacy-javascript@0.0.1")

npm_manifest() {
    local deps=() overrides=() p
    for p in "${NPM_PACKAGES[@]}"; do deps+=("\"${p%@*}\": \"${p##*@}\""); done
    for p in "${NPM_OVERRIDES[@]}"; do overrides+=("\"${p%@*}\": \"${p##*@}\""); done
    local IFS=,
    printf '{"private": true, "description": "written by StreamScope tools/setup.sh for tests/interop",\n'
    printf ' "dependencies": {%s},\n "overrides": {%s}}\n' "${deps[*]}" "${overrides[*]}"
}

ensure_npm_packages() {
    if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
        command -v dpkg-query >/dev/null ||
            { echo "error: node and npm are needed for tests/interop; install them (Node.js 18 or later)" >&2; exit 1; }
        say "installing node and npm (for tests/interop)"
        apt_install nodejs npm
    fi
    local manifest p have missing=()
    manifest="$(npm_manifest)"
    for p in "${NPM_PACKAGES[@]}" "${NPM_OVERRIDES[@]}"; do
        have="$(node -p "require('$NPM_DIR/node_modules/${p%@*}/package.json').version" 2>/dev/null || true)"
        [[ $have == "${p##*@}" ]] || missing+=("$p")
    done
    if ((${#missing[@]} == 0)) && [[ -f $NPM_DIR/package.json && $(<"$NPM_DIR/package.json") == "$manifest" ]]; then
        say "npm packages: all ${#NPM_PACKAGES[@]} present in $NPM_DIR"
        return
    fi
    say "installing npm packages into $NPM_DIR: ${NPM_PACKAGES[*]}"
    mkdir -p "$NPM_DIR"
    printf '%s\n' "$manifest" >"$NPM_DIR/package.json"
    npm install --prefix "$NPM_DIR" --no-audit --no-fund --ignore-scripts --loglevel=error ||
        { echo "error: npm could not install ${NPM_PACKAGES[*]} into $NPM_DIR" >&2; exit 1; }
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
