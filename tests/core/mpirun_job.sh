#!/usr/bin/env bash
# A real 4-rank job on the simulator: streamscope-cli run under Open MPI's mpirun on this host, one trace per rank,
# then merge (ctest mpirun_job, label core). Exit 77 (skipped) where mpirun is not installed; tools/setup.sh
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
