#!/usr/bin/env bash
# The long fuzz run of docs/PERFORMANCE.md ("Long fuzz runs"): every libFuzzer harness of tests/fuzz at once, each
# with its own workers (libFuzzer -jobs/-workers, sharing one corpus per harness), from the same seeds and with the
# same limits as the ctest label fuzz, for SECONDS; then one Markdown row per harness with the executions summed over
# its workers, the corpus size and the findings. Exit 1 when any worker left a crash, timeout, OOM or leak input.
#
#   tools/fuzz_long.sh [SECONDS] [OUTDIR]       (defaults: 540, ./fuzz-long-<date>)
#
# Environment: FUZZ_BIN (the harnesses; default build-fuzz/tests/fuzz, CMake preset fuzz), MAX_LEN (default 262144,
# as in ctest), CORPUS (default OUTDIR/corpus: give an earlier run's to continue it), WORKERS_<name> (workers of one
# harness, e.g. WORKERS_scenario=5; 0 leaves the harness out of the run; default: the cores shared out, at least 1
# each).
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SECS="${1:-540}"
OUTDIR="${2:-$PWD/fuzz-long-$(date +%Y%m%d-%H%M%S)}"
FUZZ_BIN="$(cd "${FUZZ_BIN:-$ROOT/build-fuzz/tests/fuzz}" && pwd)" || { echo "no harnesses: build the CMake preset fuzz" >&2; exit 2; }
MAX_LEN="${MAX_LEN:-262144}"
mkdir -p "$OUTDIR" && OUTDIR="$(cd "$OUTDIR" && pwd)"
CORPUS="${CORPUS:-$OUTDIR/corpus}"
export STREAMSCOPE_RESOURCES="$ROOT/resources" UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1}"

names=(scenario device_profile native_trace binary_trace chrome pytorch csv nsys)
declare -A seeds=(
    [scenario]="resources/presets" [device_profile]="resources/profiles"
    [native_trace]="tests/data/h200 tests/data/cupti" [binary_trace]="tests/fuzz/seeds/binary" [chrome]="tests/fuzz/seeds/chrome tests/data/pytorch/fixtures"
    [pytorch]="tests/data/pytorch" [csv]="tests/fuzz/seeds/csv" [nsys]="tests/fuzz/seeds/nsys")
share=$(($(nproc) / ${#names[@]}))
((share < 1)) && share=1

for n in "${names[@]}"; do
    var="WORKERS_$n"
    workers="${!var:-$share}"
    ((workers > 0)) || continue
    [ -x "$FUZZ_BIN/fuzz_$n" ] || { echo "missing $FUZZ_BIN/fuzz_$n" >&2; exit 2; }
    dict=(-dict="$ROOT/tests/fuzz/json.dict")
    [[ $n == nsys || $n == csv || $n == binary_trace ]] && dict=()
    dirs=()
    for s in ${seeds[$n]}; do dirs+=("$ROOT/$s"); done
    mkdir -p "$CORPUS/$n" "$OUTDIR/$n/artifacts"
    echo "$n: $workers worker(s) for $SECS s" >&2
    (cd "$OUTDIR/$n" && "$FUZZ_BIN/fuzz_$n" -jobs="$workers" -workers="$workers" -max_total_time="$SECS" -timeout=10 \
        -rss_limit_mb=2048 -max_len="$MAX_LEN" -print_final_stats=1 -artifact_prefix="$OUTDIR/$n/artifacts/" \
        "${dict[@]}" "$CORPUS/$n" "${dirs[@]}" >"$OUTDIR/$n/main.log" 2>&1) &
done
wait

found=0
echo "| harness | workers | seconds | executions | corpus | findings |"
echo "|---|---:|---:|---:|---:|---:|"
for n in "${names[@]}"; do
    var="WORKERS_$n"
    ((${!var:-$share} > 0)) || continue
    execs=$(cat "$OUTDIR/$n"/fuzz-*.log 2>/dev/null | awk '/stat::number_of_executed_units/ {s += $2} END {print s + 0}')
    art=$(find "$OUTDIR/$n/artifacts" -type f | wc -l)
    found=$((found + art))
    echo "| $n | ${!var:-$share} | $SECS | $execs | $(find "$CORPUS/$n" -type f | wc -l) | $art |"
done
exit $((found > 0))
