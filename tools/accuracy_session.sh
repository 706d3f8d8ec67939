#!/usr/bin/env bash
# The simulator's truth, recorded in one session on one GPU machine (docs/ACCURACY.md): the experiments given on the
# command line, then calibrate the GPU, then record every lesson, variant and held-out case in rounds (the first run
# with its checks, then more runs, one process each, for their untimed makespans). What it writes is laid out as
# tests/data/h200 is, so that it can replace those files as it is:
#
#   tools/accuracy_session.sh CLI OUTDIR [--lesson-runs N] [--heldout-runs N] [--host-processes N]
#                             [--deadline SECONDS] [EXPERIMENT...]
#
#   OUTDIR/h200.json                      the profile (`streamscope-cli calibrate --device 0 --host-processes N`,
#                                         default 11), calibrate.log
#   OUTDIR/lessons/ID.json, variants/     run 1 of each lesson and variant; untimed_runs.txt (NAME RUN UNTIMED TIMED)
#   OUTDIR/heldout/NAME.json              run 1 of each held-out case; untimed_runs.txt (and heldout-b/, the
#                                         second held-out set, alike)
#                                         (the lessons and the held-out cases are run in rounds: round R runs each
#                                         lesson and variant, then each held-out case, one process each)
#   OUTDIR/experiments/NAME/              what tests/data/h200/experiments/NAME/run.sh wrote
#   OUTDIR/session.log                    everything printed, with the time of each step
#
# A lesson that needs more GPUs than the machine has is skipped. Past the deadline (seconds from the start, default
# 560) no new step starts, so that a caller with a time limit still gets what was recorded.
set -u
CLI="$(realpath "$1")"
OUTDIR="$2"
shift 2
LESSON_RUNS=3
HELDOUT_RUNS=5
HOST_PROCESSES=11
DEADLINE=560
EXPERIMENTS=()
while [ $# -gt 0 ]; do
    case "$1" in
    --lesson-runs) LESSON_RUNS="$2"; shift 2 ;;
    --heldout-runs) HELDOUT_RUNS="$2"; shift 2 ;;
    --host-processes) HOST_PROCESSES="$2"; shift 2 ;;
    --deadline) DEADLINE="$2"; shift 2 ;;
    *) EXPERIMENTS+=("$1"); shift ;;
    esac
done
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export NCCL_NVLS_ENABLE=0 # the lent GPU machines require it in every run
mkdir -p "$OUTDIR/lessons/variants" "$OUTDIR/heldout" "$OUTDIR/experiments"
OUTDIR="$(cd "$OUTDIR" && pwd)"
exec > >(tee -a "$OUTDIR/session.log") 2>&1
note() { echo "[$(date -u +%H:%M:%S)] $*"; }
late() { [ "$SECONDS" -ge "$DEADLINE" ] && { note "deadline reached: $*"; return 0; }; return 1; }

# NAME RUN UNTIMED_NS TIMED_NS of a trace, from its settings as they were written.
makespans() {
    python3 - "$@" <<'PY'
import json, sys
path, name, run = sys.argv[1:4]
try:
    s = json.load(open(path))["info"].get("settings", {})
    print(name, run, s.get("untimed_makespan_ns", "-"), s.get("timed_makespan_ns", "-"))
except Exception as e:
    print(name, run, "-", "-", "#", e)
PY
}

note "accuracy session: $CLI, output $OUTDIR, $LESSON_RUNS lesson runs, $HELDOUT_RUNS held-out rounds"
nvidia-smi -L 2>&1 | sed 's/^/  /'
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')

# ---- experiments: first, so that what the model rules need is there even when time runs out ----------------
for e in "${EXPERIMENTS[@]}"; do
    late "experiment $e" && break
    note "== experiment $e"
    "$REPO/tests/data/h200/experiments/$e/run.sh" "$CLI" "$OUTDIR/experiments/$e"
done

# ---- calibrate ---------------------------------------------------------------------------------------------
if ! late calibrate; then
    note "== calibrate"
    "$CLI" calibrate --device 0 --host-processes "$HOST_PROCESSES" -o "$OUTDIR/h200.json" 2>"$OUTDIR/calibrate.log"
    note "calibrate exit $?"
fi

# ---- lessons, variants and held-out cases, in rounds ---------------------------------------------------------
# Round R runs every lesson and variant (while R <= the lesson runs) and then every held-out case (while R <= the
# held-out runs), one process each: a deadline cuts both alike, and drift over the session weighs on both.
names=()
for id in $("$CLI" presets | awk 'NF {print $1}'); do
    # Jobs of several ranks with collectives: lessons 18 and 19 need four GPUs; tools/gpu_session.sh records the
    # one-GPU NCCL example (tests/data/h200/nccl/).
    if grep -q '"ranks"' "$REPO/resources/presets/$id.json"; then
        note "$id: skipped, a job of several ranks (not recorded here)"
        continue
    fi
    names+=("$id")
    for v in $(python3 -c "import json,sys; print(' '.join(v['id'] for v in json.load(open(sys.argv[1])).get('variants', [])))" \
        "$REPO/resources/presets/$id.json"); do
        names+=("$id--$v")
    done
done
lesson_round() {
    local run="$1" name id args out needs
    for name in "${names[@]}"; do
        id="${name%%--*}"
        args=("$id")
        out="$OUTDIR/lessons/$id.json"
        if [ "$name" != "$id" ]; then
            args+=(--variant "${name#*--}")
            out="$OUTDIR/lessons/variants/$name.json"
        fi
        needs=$(python3 -c "import json,sys; print(max([1]+[d.get('index',0)+1 for d in json.load(open(sys.argv[1])).get('devices',[])]))" \
            "$REPO/resources/presets/$id.json")
        if [ "$needs" -gt "$gpus" ]; then
            [ "$run" = 1 ] && note "$name: skipped, needs $needs GPUs"
            continue
        fi
        if [ "$run" = 1 ]; then
            timeout 120 "$CLI" run "${args[@]}" --backend cuda --check -o "$out" >"$out.log" 2>&1
        else
            out="$OUTDIR/lessons/run.json"
            timeout 120 "$CLI" run "${args[@]}" --backend cuda -o "$out" >/dev/null 2>&1
        fi
        makespans "$out" "$name" "$run" >>"$OUTDIR/lessons/untimed_runs.txt"
    done
}
HELDOUT_SETS=(heldout heldout-b)
heldout_round() {
    local run="$1" set s name out
    for set in "${HELDOUT_SETS[@]}"; do
        for s in "$REPO/tests/data/h200/$set"/scenarios/*.json; do
            name="$(basename "$s" .json)"
            out="$OUTDIR/$set/$name.json"
            [ "$run" = 1 ] || out="$OUTDIR/$set/run.json"
            timeout 120 "$CLI" run "$s" --backend cuda -o "$out" >/dev/null 2>&1
            makespans "$out" "$name" "$run" >>"$OUTDIR/$set/untimed_runs.txt"
        done
    done
}
: >"$OUTDIR/lessons/untimed_runs.txt"
for set in "${HELDOUT_SETS[@]}"; do
    mkdir -p "$OUTDIR/$set"
    : >"$OUTDIR/$set/untimed_runs.txt"
done
rounds=$((LESSON_RUNS > HELDOUT_RUNS ? LESSON_RUNS : HELDOUT_RUNS))
for run in $(seq 1 "$rounds"); do
    late "round $run" && break
    note "== round $run"
    [ "$run" -le "$LESSON_RUNS" ] && lesson_round "$run"
    [ "$run" -le "$HELDOUT_RUNS" ] && heldout_round "$run"
done
rm -f "$OUTDIR/lessons/run.json" "$OUTDIR/heldout/run.json" "$OUTDIR/heldout-b/run.json"
note "done after $SECONDS s"
