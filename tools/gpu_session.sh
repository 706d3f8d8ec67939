#!/usr/bin/env bash
# One session on a GPU machine: build without the GUI, run the GPU tests and the CUDA overhead benchmark, measure
# what each timing mode costs and the CUDA events' error against CUPTI, capture CUPTI records for the CPU tests, run
# every lesson and variant on the GPU in the default timing with its checks (the analysis must name each one's
# effect), sweep three lessons on the GPU, and pack the traces. Keeps going past failures and ends with a summary.
#
#   tools/gpu_session.sh [OUTDIR]        (default: $OUT, else ./gpu-session-<date>)
#
# Needs: cmake, ninja, nvcc (CUDA toolkit), nlohmann_json, CLI11 and GoogleTest; no Qt. Environment:
#   BUILD_DIR     build directory (default: <repo>/build-gpu)
#   CUDA_ARCH     CMAKE_CUDA_ARCHITECTURES (default: 90, the H100/H200)
#   JOBS          parallel build jobs (default: all cores)
#
# Everything lands in OUTDIR: session.log (all output), summary.txt, nvidia-smi.txt, ctest.log, bench.json,
# traces/<preset>.json with traces/<preset>.log, and traces.tar.gz. The exit status is 0 only when the build,
# the tests, the benchmark and every lesson passed.
set -u
set -o pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export NCCL_NVLS_ENABLE=0 # the lent GPU machines require it in every run
OUTDIR="${1:-${OUT:-$PWD/gpu-session-$(date +%Y%m%d-%H%M%S)}}"
BUILD_DIR="${BUILD_DIR:-$REPO/build-gpu}"
CUDA_ARCH="${CUDA_ARCH:-90}"
JOBS="${JOBS:-$(nproc 2>/dev/null || echo 8)}"

mkdir -p "$OUTDIR/traces" || { echo "cannot create $OUTDIR" >&2; exit 2; }
OUTDIR="$(cd "$OUTDIR" && pwd)"
LOG="$OUTDIR/session.log"
SUMMARY="$OUTDIR/summary.txt"
: >"$LOG"
: >"$SUMMARY"
# From here on, everything the script and its commands print goes to the log as well.
exec > >(tee -a "$LOG") 2>&1

FAILURES=0
note() { echo "[$(date +%H:%M:%S)] $*"; }
result() { # result NAME STATUS [DETAIL]
    printf '%-40s %s%s\n' "$1" "$2" "${3:+  ($3)}" >>"$SUMMARY"
    [ "$2" = ok ] || [ "$2" = skipped ] || FAILURES=$((FAILURES + 1))
}
step() { # step NAME COMMAND...: runs it, records ok/FAILED
    local name="$1"
    shift
    note "== $name: $*"
    local start=$SECONDS
    "$@"
    local rc=$?
    if [ $rc -eq 0 ]; then
        result "$name" ok "$((SECONDS - start)) s"
    else
        result "$name" FAILED "exit $rc after $((SECONDS - start)) s"
    fi
    return $rc
}

note "StreamScope GPU session: repo $REPO, build $BUILD_DIR, output $OUTDIR"
{
    echo "date: $(date -Iseconds)"
    echo "host: $(hostname)"
    if commit=$(git -C "$REPO" rev-parse HEAD 2>/dev/null); then
        git -C "$REPO" diff --quiet HEAD 2>/dev/null || commit+=" (with local changes)"
    else
        commit="unknown (not a git checkout)"
    fi
    echo "commit: $commit"
    echo "uname: $(uname -a)"
    echo "cmake: $(cmake --version 2>/dev/null | head -1)"
    echo "nvcc: $(nvcc --version 2>/dev/null | tail -1)"
} | tee "$OUTDIR/machine.txt"

# ---- the GPU ---------------------------------------------------------------------------------------------
if command -v nvidia-smi >/dev/null; then
    nvidia-smi 2>&1 | tee "$OUTDIR/nvidia-smi.txt"
    nvidia-smi -q >"$OUTDIR/nvidia-smi-q.txt" 2>&1
    nvidia-smi topo -m >>"$OUTDIR/nvidia-smi.txt" 2>&1
    result nvidia-smi ok
else
    note "nvidia-smi not found"
    result nvidia-smi FAILED "not found"
fi

# ---- build -----------------------------------------------------------------------------------------------
built=0
if step configure cmake -S "$REPO" -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DSTREAMSCOPE_GUI=OFF -DSTREAMSCOPE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES="$CUDA_ARCH"; then
    if step build cmake --build "$BUILD_DIR" -j "$JOBS"; then
        built=1
    fi
fi

CLI="$BUILD_DIR/app/streamscope-cli"
BENCH="$BUILD_DIR/tests/bench/bench_cuda_overhead"

run_ctest() { # run_ctest LOGFILE ARGS...: ctest in the build directory, its output also in LOGFILE
    local log="$1"
    shift
    (cd "$BUILD_DIR" && ctest --output-on-failure "$@" 2>&1 | tee "$log")
}

# ---- GPU tests -------------------------------------------------------------------------------------------
if [ $built = 1 ]; then
    step "ctest -L gpu" run_ctest "$OUTDIR/ctest.log" -L gpu --timeout 600
    skipped=$(grep -c '\*\*\*Skipped' "$OUTDIR/ctest.log" 2>/dev/null || true)
    [ "${skipped:-0}" != 0 ] && note "ctest: $skipped GPU test(s) skipped (see ctest.log for the reasons)"
    # The GPU-free suites too, when they were built: a quick sanity check of the same build.
    step "ctest (not gpu)" run_ctest "$OUTDIR/ctest-cpu.log" -LE gpu
else
    result "ctest -L gpu" FAILED "not built"
fi

# ---- benchmark -------------------------------------------------------------------------------------------
if [ -x "$BENCH" ]; then
    step bench_cuda_overhead bash -c "'$BENCH' --json >'$OUTDIR/bench.json'"
    cat "$OUTDIR/bench.json" 2>/dev/null
else
    result bench_cuda_overhead FAILED "not built"
fi

# ---- timing: what each mode costs, the events' error against CUPTI, CUPTI captures for the CPU tests -------
if [ -x "$CLI" ]; then
    mkdir -p "$OUTDIR/timing" "$OUTDIR/cupti"
    step "timing figures" bash -c "timeout 1200 python3 '$REPO/tools/gpu_timing_figures.py' '$CLI' '$OUTDIR/timing' \
        >'$OUTDIR/timing/figures.md' 2>&1"
    tail -n 80 "$OUTDIR/timing/figures.md"
    step "cupti capture 14" "$CLI" run 14-cuda-graph --backend cuda --timing cupti \
        --cupti-capture "$OUTDIR/cupti/14-cuda-graph.capture.json" -o "$OUTDIR/cupti/14-cuda-graph.trace.json"
    step "cupti capture graph-mixed-nodes" "$CLI" run "$REPO/tests/bench/scenarios/graph-mixed-nodes.json" \
        --backend cuda --timing cupti --cupti-capture "$OUTDIR/cupti/graph-mixed-nodes.capture.json" \
        -o "$OUTDIR/cupti/graph-mixed-nodes.trace.json"
fi

# ---- every lesson on the GPU -----------------------------------------------------------------------------
if [ -x "$CLI" ]; then
    "$CLI" presets >"$OUTDIR/presets.txt" 2>&1 || note "streamscope-cli presets failed"
    ids=$(awk 'NF {print $1}' "$OUTDIR/presets.txt")
    [ -n "$ids" ] || result presets FAILED "streamscope-cli presets listed nothing"
    # Jobs of several ranks with collectives (lessons 18, 19) run through NCCL, one GPU per rank: on a machine with
    # fewer GPUs they are refused (exit 2, "needs N GPUs to run in one process") and count as skipped.
    # NVLink SHARP off, as the lent machines require.
    export NCCL_NVLS_ENABLE=0
    step "nccl example" "$CLI" run "$REPO/docs/examples/nccl-collectives.json" --backend cuda \
        -o "$OUTDIR/traces/nccl-collectives.json"
    for id in $ids; do
        trace="$OUTDIR/traces/$id.json"
        plog="$OUTDIR/traces/$id.log"
        note "== preset $id"
        start=$SECONDS
        # A lesson that hangs must not stop the session.
        timeout 600 "$CLI" run "$id" --backend cuda --check -o "$trace" >"$plog" 2>&1
        rc=$?
        cat "$plog"
        case $rc in
        0) result "preset $id" ok "$((SECONDS - start)) s" ;;
        1) result "preset $id" FAILED "a check failed" ;;
        2)
            if grep -q "GPUs to run in one process" "$plog"; then
                result "preset $id" skipped "a job of several ranks: needs one GPU per rank"
            else
                result "preset $id" FAILED "bad input"
            fi
            ;;
        3)
            if grep -q "does not exist: this machine has" "$plog"; then
                result "preset $id" skipped "needs more GPUs than this machine has"
            else
                result "preset $id" FAILED "GPU/runtime error"
            fi
            ;;
        124) result "preset $id" FAILED "timed out" ;;
        *) result "preset $id" FAILED "exit $rc" ;;
        esac
        if [ -s "$trace" ]; then
            "$CLI" analyze "$trace" >"$OUTDIR/traces/$id.analysis.txt" 2>&1 || true
        fi
    done
    # Every variant too (contrasting variants are meant to fail their key check: exit 1 is a recording, not a
    # failure); their traces let the analysis be checked on real hardware.
    mkdir -p "$OUTDIR/traces/variants"
    for id in $ids; do
        variants=$(python3 -c "import json,sys; print(' '.join(v['id'] for v in json.load(open(sys.argv[1])).get('variants', [])))" \
            "$REPO/resources/presets/$id.json" 2>/dev/null)
        for v in $variants; do
            trace="$OUTDIR/traces/variants/$id--$v.json"
            vlog="$OUTDIR/traces/variants/$id--$v.log"
            timeout 600 "$CLI" run "$id" --variant "$v" --backend cuda --check -o "$trace" >"$vlog" 2>&1
            rc=$?
            case $rc in
            0 | 1) result "variant $id/$v" ok "checks exit $rc" ;;
            2) if grep -q "GPUs to run in one process" "$vlog"; then
                   result "variant $id/$v" skipped "a job of several ranks: needs one GPU per rank"
               else
                   result "variant $id/$v" FAILED "bad input"
               fi ;;
            3) if grep -q "does not exist: this machine has" "$vlog"; then
                   result "variant $id/$v" skipped "needs more GPUs than this machine has"
                   rm -f "$trace"
               else
                   result "variant $id/$v" FAILED "GPU/runtime error"
               fi ;;
            *) result "variant $id/$v" FAILED "exit $rc" ;;
            esac
        done
    done
    # The analysis names each lesson's effect on these GPU runs too (run --check prints it as a check).
    bad_effects=$(grep -l "^FAIL  effect:" "$OUTDIR"/traces/*.log "$OUTDIR"/traces/variants/*.log 2>/dev/null)
    if [ -z "$bad_effects" ]; then
        result "effects named" ok "$(cat "$OUTDIR"/traces/*.log "$OUTDIR"/traces/variants/*.log 2>/dev/null | grep -c "^PASS  effect:") runs"
    else
        result "effects named" FAILED "$(echo $bad_effects | xargs -n1 basename | tr '\n' ' ')"
    fi
    # Sweeps on the GPU: one run per value, with progress on stderr.
    for sweep in "10-many-small-kernels streams 1,2,4,8,16,32" "01-two-streams streams 1,2,4" \
        "08-copy-compute-pipeline streams 1,2,4,8"; do
        set -- $sweep
        step "sweep $1 $2" bash -c "timeout 600 '$CLI' sweep $1 --knob $2 --values $3 --backend cuda --json \
            >'$OUTDIR/traces/sweep-$1.json' 2>'$OUTDIR/traces/sweep-$1.log'"
        cat "$OUTDIR/traces/sweep-$1.log" "$OUTDIR/traces/sweep-$1.json"
    done
    if ls "$OUTDIR"/traces/* >/dev/null 2>&1; then
        if tar -C "$OUTDIR" -czf "$OUTDIR/traces.tar.gz" traces timing cupti; then
            result "traces.tar.gz" ok
        else
            result "traces.tar.gz" FAILED "tar"
        fi
    fi
else
    result presets FAILED "streamscope-cli not built"
fi

# ---- summary ---------------------------------------------------------------------------------------------
{
    echo
    if [ $FAILURES -eq 0 ]; then echo "ALL OK"; else echo "$FAILURES FAILED"; fi
} >>"$SUMMARY"
note "summary ($SUMMARY):"
cat "$SUMMARY"
note "log: $LOG"
[ $FAILURES -eq 0 ]
