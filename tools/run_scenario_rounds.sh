#!/usr/bin/env bash
# Runs every scenario of a folder on the GPU in ROUNDS processes each (the scenarios in turn, round after round) and
# lists each run's untimed and timed makespan in OUTDIR/untimed_runs.txt (NAME RUN UNTIMED_NS TIMED_NS); the first
# round's traces are kept as OUTDIR/NAME.json. What each experiment of tests/data/h200/experiments/*/run.sh runs.
#
#   tools/run_scenario_rounds.sh CLI SCENARIO_DIR OUTDIR [ROUNDS]      (default: 3 rounds)
set -u
CLI="$1"
SCENARIOS="$2"
OUTDIR="$3"
ROUNDS="${4:-3}"
mkdir -p "$OUTDIR/runs"
: >"$OUTDIR/untimed_runs.txt"
for r in $(seq 1 "$ROUNDS"); do
    for s in "$SCENARIOS"/*.json; do
        name="$(basename "$s" .json)"
        "$CLI" run "$s" --backend cuda -o "$OUTDIR/runs/$name-$r.json" >"$OUTDIR/runs/$name-$r.log" 2>&1
        python3 - "$OUTDIR/runs/$name-$r.json" "$name" "$r" >>"$OUTDIR/untimed_runs.txt" <<'PY'
import json, sys
try:
    s = json.load(open(sys.argv[1]))["info"]["settings"]
    print(sys.argv[2], sys.argv[3], s.get("untimed_makespan_ns", "-"), s.get("timed_makespan_ns", "-"))
except Exception as e:
    print(sys.argv[2], sys.argv[3], "-", "-", "#", e)
PY
    done
done
for s in "$SCENARIOS"/*.json; do
    name="$(basename "$s" .json)"
    cp "$OUTDIR/runs/$name-1.json" "$OUTDIR/$name.json" 2>/dev/null
done
