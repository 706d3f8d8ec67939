#!/usr/bin/env bash
# Whether a launch's cost depends on the CPU the issuing thread runs on: the machine's CPU and PCI topology and the
# hypervisor's steal time (topology.txt), then each scenario in ROUNDS processes unpinned and in ROUNDS processes
# pinned to each CPU in turn (`taskset -c CPU`), the CPUs in turn, round after round. untimed_runs.txt lists
# NAME PLACEMENT RUN UNTIMED_NS TIMED_NS STEAL_TICKS (the machine's steal time during the process, in USER_HZ ticks).
#   run.sh CLI OUTDIR [ROUNDS]      (default 2)
set -u
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CLI="$(realpath "$1")"
OUTDIR="$2"
ROUNDS="${3:-2}"
mkdir -p "$OUTDIR/runs"
{
    echo "== lscpu"; lscpu
    echo "== nvidia-smi topo -m"; nvidia-smi topo -m
    echo "== GPU PCI"; for d in /sys/bus/pci/devices/*; do
        [ "$(cat "$d/vendor" 2>/dev/null)" = 0x10de ] && echo "$d numa_node=$(cat "$d/numa_node") local_cpulist=$(cat "$d/local_cpulist")"
    done
    echo "== /proc/cpuinfo MHz"; grep MHz /proc/cpuinfo
    echo "== /proc/stat"; grep '^cpu' /proc/stat
} >"$OUTDIR/topology.txt" 2>&1
steal() { awk '/^cpu /{print $9}' /proc/stat; }
: >"$OUTDIR/untimed_runs.txt"
ncpu=$(nproc --all)
for r in $(seq 1 "$ROUNDS"); do
    for place in any $(seq 0 $((ncpu - 1))); do
        for s in "$HERE"/scenarios/*.json; do
            name="$(basename "$s" .json)"
            out="$OUTDIR/runs/$name-$place-$r.json"
            before=$(steal)
            if [ "$place" = any ]; then
                "$CLI" run "$s" --backend cuda -o "$out" >"${out%.json}.log" 2>&1
            else
                taskset -c "$place" "$CLI" run "$s" --backend cuda -o "$out" >"${out%.json}.log" 2>&1
            fi
            after=$(steal)
            python3 - "$out" "$name" "$place" "$r" $((after - before)) >>"$OUTDIR/untimed_runs.txt" <<'PY'
import json, sys
out, name, place, r, st = sys.argv[1:6]
try:
    s = json.load(open(out))["info"]["settings"]
    print(name, place, r, s.get("untimed_makespan_ns", "-"), s.get("timed_makespan_ns", "-"), st)
except Exception as e:
    print(name, place, r, "-", "-", st, "#", e)
PY
        done
    done
done
echo "== /proc/stat after" >>"$OUTDIR/topology.txt"; grep '^cpu' /proc/stat >>"$OUTDIR/topology.txt"
for s in "$HERE"/scenarios/*.json; do
    name="$(basename "$s" .json)"
    cp "$OUTDIR/runs/$name-any-1.json" "$OUTDIR/$name.json" 2>/dev/null
done
