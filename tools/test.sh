#!/usr/bin/env bash
# Builds StreamScope with warnings as errors and runs every test (ctest). Safe to run again and again: it only
# installs what is missing and only rebuilds what changed. GPU tests (ctest label "gpu") skip themselves, with a
# message, where no GPU is usable.
#
#   tools/test.sh [extra ctest arguments, e.g. -R tst_cli or -L gpu]
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="$ROOT/build"
# shellcheck source=tools/setup.sh
source "$ROOT/tools/setup.sh"

ensure_packages
ensure_npm_packages
configure_and_build -DSTREAMSCOPE_WERROR=ON "-DSTREAMSCOPE_NPM_DIR=$NPM_DIR"

ctest_cmd=(ctest --output-on-failure -j "$(nproc)" "$@")
if [[ -z ${DISPLAY:-} ]] && command -v xvfb-run >/dev/null; then
    # GUI tests that need a real X server get a virtual one; the others run offscreen anyway.
    ctest_cmd=(xvfb-run -a -s "-screen 0 1920x1080x24" "${ctest_cmd[@]}")
fi
say "running the tests: ${ctest_cmd[*]}"
log="$BUILD/ctest.log"
set +e
(cd "$BUILD" && "${ctest_cmd[@]}") 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
set -e
summary="$(grep -E '^[0-9]+% tests passed' "$log" | tail -n 1 || true)"
echo
echo "${summary:-ctest printed no summary (exit status $status)}"
exit "$status"
