#!/usr/bin/env bash
# A real 4-rank job on the simulator: streamscope-cli run under Open MPI's mpirun on this host, one trace per rank,
# the ranks meeting at a TCP rendezvous on 127.0.0.1 to measure their clock offsets to rank 0, then merge (ctest
# mpirun_job, label core); the same traces, made to look as if ranks 2 and 3 had run on a second host, merge aligned by
# those measured offsets, with the error stated; then the straggler lesson (19), whose all-reduces must come out linked
# across the four ranks with rank 2 named as the straggler. Exit 77 (skipped) where mpirun is not installed;
# tools/setup.sh installs it (Debian: openmpi-bin) and jq.
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
# No GPU, whatever the machine has: the job is simulated, so its result is the same everywhere. The rendezvous port is
# a random one; if another program holds it, rank 0 says so and another is tried.
for attempt in 1 2 3 4 5; do
    port=$((20000 + RANDOM % 40000))
    if CUDA_VISIBLE_DEVICES=-1 mpirun "${as_root[@]}" --oversubscribe -np 4 -x CUDA_VISIBLE_DEVICES \
        "$cli" run 08 --rendezvous "127.0.0.1:$port" -o 'job.%r.json' >run.log 2>&1; then
        break
    fi
    grep -q "is in use on this host" run.log && [ "$attempt" -lt 5 ] && continue
    cat run.log
    exit 1
done
for r in 0 1 2 3; do
    [ -s "job.$r.json" ] || { echo "rank $r wrote no job.$r.json"; cat run.log; exit 1; }
    grep -q '"launcher": "Open MPI' "job.$r.json" || { echo "job.$r.json does not name Open MPI as its launcher"; exit 1; }
    grep -q '"clock_sync": "ping-pong to rank 0 over TCP"' "job.$r.json" ||
        { echo "job.$r.json has no clock offset measured at the rendezvous"; cat run.log; exit 1; }
done
grep "rendezvous at 127.0.0.1:$port (--rendezvous): 4 ranks; clock offset to rank 0" run.log ||
    { echo "rank 0 did not report the ranks' clock offsets"; cat run.log; exit 1; }
"$cli" merge job.0.json job.1.json job.2.json job.3.json -o job.json | tee merge.log
grep -q "merged 4 rank traces of 08-copy-compute-pipeline" merge.log
grep -q "clock alignment: simulated ranks" merge.log
# Two hosts: ranks 2 and 3 as if recorded on node-b, with the offsets they measured; every rank's time 0 somewhere on
# its host's steady clock. The merge must align them by those offsets and say how well.
if command -v jq >/dev/null; then
    mkdir hosts
    for r in 0 1 2 3; do
        host=node-a
        [ "$r" -ge 2 ] && host=node-b
        jq --arg host "$host" --arg origin "$((1000000 + r * 1000))" \
            '.info.host = $host | .info.settings.clock = "host steady clock"
             | .info.settings.clock_origin_ns = $origin | .info.settings.clock_sync_host = "node-a"' \
            "job.$r.json" >"hosts/job.$r.json"
    done
    "$cli" merge hosts -o hosts.json | tee hosts.log
    grep -Eq "clock alignment: 2 hosts, aligned by ping-pong to rank 0 \(host node-a\): error up to [0-9.]+ µs" hosts.log ||
        { echo "the two hosts' ranks are not aligned by their measured offsets"; exit 1; }
    jq -e '.info.settings.clock_alignment | startswith("2 hosts, aligned by ping-pong")' hosts.json >/dev/null ||
        { echo "the merged trace does not state its alignment"; exit 1; }
    # Host b's ranks without their offsets: refused, naming them.
    for r in 2 3; do jq 'del(.info.settings.clock_sync)' "hosts/job.$r.json" >"hosts/job.$r.tmp" && mv "hosts/job.$r.tmp" "hosts/job.$r.json"; done
    if "$cli" merge hosts -o refused.json 2>refused.log; then echo "ranks without offsets were merged"; exit 1; fi
    grep -q "ranks 2, 3 (host node-b) carry no clock offset to rank 0 (host node-a)" refused.log ||
        { echo "the refusal does not name ranks 2 and 3"; cat refused.log; exit 1; }
else
    echo "jq not found (tools/setup.sh installs it): the two-host merge is not checked"
fi
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
