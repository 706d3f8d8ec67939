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
# shellcheck source=tools/setup.sh
source "$ROOT/tools/setup.sh"

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
backend=(--backend auto)
for a in "$@"; do [[ $a == --backend* ]] && backend=(); done
say "running lesson 01: streamscope-cli run 01 ${backend[*]} --check -o $trace $*"
set +e
"$cli" run 01 "${backend[@]}" --check -o "$trace" "$@"
status=$?
set -e
if [[ -f $trace ]]; then
    say "analysis of $trace"
    "$cli" analyze "$trace"
fi
exit "$status"
