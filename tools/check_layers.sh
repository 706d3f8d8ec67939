#!/usr/bin/env bash
# The layering of docs/ARCHITECTURE.md, checked on the #include lines (ctest: check_layers, label core):
#   - core/ includes no Qt and no CUDA header, and nothing of ui/ or kernels/: it builds where neither exists;
#   - ui/ includes nothing of kernels/: GPU runs go through streamscope-cli in a child process;
#   - only what-if includes the simulator (core/sim/simulator.h): the rest of core works on traces, whichever backend
#     made them. The allow-list below names the few places outside what-if that run a scenario on the simulator;
#   - core/model (the scenario and trace model) includes nothing from the other folders of core: everything builds on it;
#   - core/formats (the trace file formats) includes nothing of core but the model and the formats: a reader makes a
#     Trace and a writer takes one, whatever ran, analysed or diagnosed it.
# Every folder is scanned with its subfolders; a quoted include is told apart by its file name (each folder of core
# and ui is an include directory, so "trace.h" is core/model/trace.h).
# Tests and benchmarks (tests/) may include anything. Prints each broken rule as FILE:LINE: why, and exits 1.
#
#   tools/check_layers.sh [SOURCE_ROOT]
set -euo pipefail

ROOT="${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
cd "$ROOT"

# Outside what-if, these include simulator.h, each because it picks the simulator as the backend of a run:
SIMULATOR_ALLOWED=(
    'core/sim/simulator*'       # the simulator itself
    'core/whatif/*'             # what-if: sweeps and replays simulate changed scenarios
    app/cli_run.cpp             # streamscope-cli run --backend sim
    ui/run/run_controller.cpp   # RunController::simulate: the app's in-process runs
    ui/views/sweep_view_run.cpp # SimulatorOptions (the chosen profile) for runSweep
)

failures=0
fail() {
    echo "$1: $2"
    failures=$((failures + 1))
}

# File names of a folder's headers (its subfolders included), one a line.
headers_of() { find "$1" -type f \( -name '*.h' -o -name '*.cuh' \) -printf '%f\n' | sort -u; }
mapfile -t CORE_HEADERS < <(headers_of core)
# The folder of core that holds each of core's headers (trace.h -> model, chrome_trace.h -> formats/chrome).
declare -A CORE_FOLDER_OF
while IFS=' ' read -r header dir; do
    CORE_FOLDER_OF[$header]="${dir#core/}"
done < <(find core -type f \( -name '*.h' -o -name '*.cuh' \) -printf '%f %h\n')
mapfile -t UI_HEADERS < <(comm -23 <(headers_of ui) <(headers_of core))
mapfile -t KERNEL_HEADERS < <(comm -23 <(headers_of kernels) <(sort -u <(headers_of core) <(headers_of ui)))

# True when $1 matches one of the glob patterns that follow.
matches_any() {
    local name="$1"
    shift
    local pattern
    for pattern in "$@"; do
        # shellcheck disable=SC2053 # the pattern is a glob on purpose
        [[ $name == $pattern ]] && return 0
    done
    return 1
}

is_in() {
    local needle="$1"
    shift
    local x
    for x in "$@"; do
        [[ $x == "$needle" ]] && return 0
    done
    return 1
}

# Prints FILE:LINE:HEADER:KIND (KIND: q for "quoted", a for <angled>) for every #include of the given files.
includes_of() {
    grep -HnE '^[[:space:]]*#[[:space:]]*include[[:space:]]*["<]' "$@" 2>/dev/null \
        | sed -E 's/^([^:]+):([0-9]+):[[:space:]]*#[[:space:]]*include[[:space:]]*([<"])([^>"]+)[>"].*/\1:\2:\4:\3/' \
        | sed -E 's/:"$/:q/; s/:<$/:a/'
}

# The sources of a folder and its subfolders.
sources_of() { find "$1" -type f \( -name '*.h' -o -name '*.cpp' \) | sort; }

check_folder() {
    local folder="$1"
    local file line header kind base from to
    local -a files
    mapfile -t files < <(sources_of "$folder")
    ((${#files[@]} > 0)) || return 0
    while IFS=: read -r file line header kind; do
        base="${header##*/}"
        if [[ $folder == core && $kind == q && -n ${CORE_FOLDER_OF[$base]:-} ]]; then
            from="${file#core/}"
            from="${from%/*}"
            to="${CORE_FOLDER_OF[$base]}"
            if [[ $from == model && $to != model ]]; then
                fail "$file:$line" "core/model includes nothing from the rest of core (\"$header\" is in core/$to)"
            fi
            if [[ ($from == formats || $from == formats/*) && $to != model && $to != formats && $to != formats/* ]]; then
                fail "$file:$line" "core/formats includes only core/model and core/formats (\"$header\" is in core/$to)"
            fi
        fi
        if [[ $folder == core ]]; then
            if [[ $kind == a && ($header =~ ^Q || $header =~ ^qt || $header =~ ^Qt) ]]; then
                fail "$file:$line" "core includes a Qt header <$header>"
            fi
            # core's own cupti_records.h is Qt-free and CUDA-free (it matches records, it does not call CUPTI).
            if { [[ $kind == a ]] || ! is_in "$base" "${CORE_HEADERS[@]}"; } \
                && [[ $header =~ ^(cuda|cupti|cublas|nvtx|nvml|nvrtc|curand|cufft|thrust/|cub/) || $header == *.cuh ]]; then
                fail "$file:$line" "core includes a CUDA header ($header)"
            fi
            if [[ $header == ../ui/* || $header == ui/* ]] || { [[ $kind == q ]] && is_in "$base" "${UI_HEADERS[@]}"; }; then
                fail "$file:$line" "core includes a ui/ header ($header)"
            fi
        fi
        if [[ $folder == core || $folder == ui ]]; then
            if [[ $header == ../kernels/* || $header == kernels/* ]] \
                || { [[ $kind == q ]] && is_in "$base" "${KERNEL_HEADERS[@]}"; }; then
                fail "$file:$line" "$folder includes a kernels/ header ($header)"
            fi
        fi
        if [[ $base == simulator.h ]] && ! matches_any "$file" "${SIMULATOR_ALLOWED[@]}"; then
            fail "$file:$line" "only what-if includes the simulator (core/sim/simulator.h); run scenarios through core/whatif/whatif.h or core/run/runner.h, or add the file to the allow-list of tools/check_layers.sh with the reason"
        fi
    done < <(includes_of "${files[@]}")
}

for folder in core ui app; do
    [[ -d $folder ]] && check_folder "$folder"
done

if ((failures > 0)); then
    echo "check_layers: $failures include(s) break the layering (docs/ARCHITECTURE.md, the paragraph on tools/check_layers.sh)"
    exit 1
fi
echo "check_layers: core, ui and app keep to their layers"
