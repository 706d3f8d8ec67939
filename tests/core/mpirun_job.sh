#!/usr/bin/env bash
# A real 4-rank job on the simulator: streamscope-cli run under Open MPI's mpirun on this host, one trace per rank,
# then merge (ctest mpirun_job, label core); then the straggler lesson (19), whose all-reduces must come out linked
# across the four ranks with rank 2 named as the straggler. Exit 77 (skipped) where mpirun is not installed; tools/setup.sh
# installs it (Debian: openmpi-bin).
#
#   tests/core/mpirun_job.sh STREAMSCOPE_CLI
set -euo pipefail
cli="$1"
command -v mpirun >/dev/null || { echo "mpirun not found (Debian/Ubuntu: openmpi-bin; tools/setup.sh installs it)"; exit 77; }
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
cd "$dir"
as_root=()
[ "$(id -u)" = 0 ] && as_root=(--allow-run-as-root)
# No GPU, whatever the machine has: the job is simulated, so its result is the same everywhere.
CUDA_VISIBLE_DEVICES=-1 mpirun "${as_root[@]}" --oversubscribe -np 4 -x CUDA_VISIBLE_DEVICES \
    "$cli" run 08 -o 'job.%r.json' >run.log 2>&1 || { cat run.log; exit 1; }
for r in 0 1 2 3; do
    [ -s "job.$r.json" ] || { echo "rank $r wrote no job.$r.json"; cat run.log; exit 1; }
    grep -q '"launcher": "Open MPI' "job.$r.json" || { echo "job.$r.json does not name Open MPI as its launcher"; exit 1; }
done
"$cli" merge job.0.json job.1.json job.2.json job.3.json -o job.json | tee merge.log
grep -q "merged 4 rank traces of 08-copy-compute-pipeline" merge.log
grep -q "clock alignment: simulated ranks" merge.log
devices=$("$cli" analyze job.json | grep -c '^  device [0-9]*: rank [0-3] · ')
[ "$devices" = 4 ] || { echo "the merged job has $devices rank devices, not 4"; exit 1; }
echo "mpirun job: 4 ranks run, merged, 4 devices"

# Collectives: every rank's process simulates the whole job and keeps its own part; the merge links each call.
mkdir straggler && cd straggler
CUDA_VISIBLE_DEVICES=-1 mpirun "${as_root[@]}" --oversubscribe -np 4 -x CUDA_VISIBLE_DEVICES \
    "$cli" run 19 --check -o 'job.%r.json' >run.log 2>&1 || { cat run.log; exit 1; }
"$cli" merge job.0.json job.1.json job.2.json job.3.json -o job.json | tee merge.log
grep -q "merged 4 rank traces of 19-straggler" merge.log
grep -q "collectives: 3 calls linked across ranks" merge.log || { echo "the all-reduces are not linked"; exit 1; }
"$cli" analyze job.json >analyze.log
grep -q '\[warning\] straggler: Rank 2 reached 3 of 3 collective calls last' analyze.log ||
    { echo "the straggler is not named"; cat analyze.log; exit 1; }
linked=$(grep -c "^  all-reduce: 4 ranks, .*last to arrive: rank 2" analyze.log)
[ "$linked" = 3 ] || { echo "$linked all-reduces of 4 ranks with rank 2 last, not 3"; cat analyze.log; exit 1; }
echo "mpirun job of lesson 19: 3 all-reduces linked across 4 ranks, rank 2 named as the straggler"
