#!/usr/bin/env bash
# Builds StreamScope (installing missing system packages first), then opens the desktop app on the first lesson
# (`build/app/streamscope 01`): it runs on the GPU when one is usable and on the simulator otherwise. Without the
# GUI (not built, or no display), or with --cli, it runs the first lesson through the command-line tool instead and
# prints the analysis of its trace.
# Safe to run again and again: it only installs what is missing and only rebuilds what changed.
#
#   tools/run.sh [extra arguments for the app, e.g. --variant one-stream or --backend sim]
#   tools/run.sh --cli [extra arguments for `streamscope-cli run`, e.g. --backend sim or --variant ID]
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="$ROOT/build"
say() { printf '==> %s\n' "$*"; }

# Debian 12 / Ubuntu 24.04 package names (the same list as tools/test.sh).
PACKAGES=(build-essential cmake ninja-build pkg-config nlohmann-json3-dev libcli11-dev qt6-base-dev qt6-svg-dev
          libqcustomplot-dev xvfb xauth libgtest-dev libsqlite3-dev)

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

configure_and_build() {
    local fresh=()
    if [[ -f $BUILD/CMakeCache.txt ]] && ! grep -q '^CMAKE_GENERATOR:INTERNAL=Ninja$' "$BUILD/CMakeCache.txt"; then
        say "$BUILD was configured with another generator: configuring it afresh"
        fresh=(--fresh)
    fi
    find_cuda
    say "configuring $BUILD (Ninja, RelWithDebInfo)"
    cmake "${fresh[@]}" -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "${CUDA_ARGS[@]}" | { grep -E "^-- StreamScope" || true; }
    say "building with $(nproc) jobs"
    cmake --build "$BUILD" -j "$(nproc)" || { echo "error: the build failed (see above)" >&2; exit 1; }
}

use_cli=0
args=()
for a in "$@"; do
    if [[ $a == --cli ]]; then use_cli=1; else args+=("$a"); fi
done
set -- "${args[@]+"${args[@]}"}"

ensure_packages
configure_and_build

app="$BUILD/app/streamscope"
if ((use_cli == 0)); then
    if [[ ! -x $app ]]; then
        say "the desktop app was not built (STREAMSCOPE_GUI=OFF or Qt missing): using the command-line tool"
    elif [[ -z ${DISPLAY:-} && -z ${WAYLAND_DISPLAY:-} ]]; then
        say "no display (DISPLAY and WAYLAND_DISPLAY are unset): using the command-line tool"
        say "(headless images still work: $app 01 --export lesson-01.png)"
    else
        say "opening the desktop app on lesson 01: $app 01 $*"
        exec "$app" 01 "$@"
    fi
fi

cli="$BUILD/app/streamscope-cli"
trace="$BUILD/lesson-01.trace.json"
say "running lesson 01: streamscope-cli run 01 --backend auto --check -o $trace $*"
set +e
"$cli" run 01 --backend auto --check -o "$trace" "$@"
status=$?
set -e
if [[ -f $trace ]]; then
    say "analysis of $trace"
    "$cli" analyze "$trace"
fi
exit "$status"
