#!/usr/bin/env bash
# Whether a launch's cost depends on the process's address-space layout: launch-1024-one-stream in ROUNDS processes
# with address-space randomization (the default) and ROUNDS under `setarch -R` (none), in turn; then three processes
# of 40 iterations (aslr/launch-1024-one-stream-40.json), whose traces show whether one process's launch cost drifts
# from iteration to iteration. aslr/untimed_runs.txt: MODE RUN UNTIMED_NS TIMED_NS.
#   run_aslr.sh CLI OUTDIR [ROUNDS]      (default 20)
set -u
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CLI="$(realpath "$1")"
OUTDIR="$2"
ROUNDS="${3:-20}"
S="$HERE/scenarios/launch-1024-one-stream.json"
mkdir -p "$OUTDIR/runs"
: >"$OUTDIR/untimed_runs.txt"
cat /proc/sys/kernel/randomize_va_space >"$OUTDIR/aslr.txt"
for r in $(seq 1 "$ROUNDS"); do
    for mode in aslr noaslr; do
        f="$OUTDIR/runs/$mode-$r.json"
        if [ "$mode" = aslr ]; then
            "$CLI" run "$S" --backend cuda -o "$f" >/dev/null 2>&1
        else
            setarch -R "$CLI" run "$S" --backend cuda -o "$f" >/dev/null 2>&1
        fi
        python3 -c "import json,sys; s=json.load(open(sys.argv[1]))['info']['settings']; print(sys.argv[2], sys.argv[3], s.get('untimed_makespan_ns'), s.get('timed_makespan_ns'))" \
            "$f" "$mode" "$r" >>"$OUTDIR/untimed_runs.txt"
    done
done
for r in 1 2 3; do
    "$CLI" run "$HERE/aslr/launch-1024-one-stream-40.json" --backend cuda -o "$OUTDIR/runs/iter40-$r.json" >/dev/null 2>&1
done
