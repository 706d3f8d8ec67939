#!/usr/bin/env bash
# Whether pageable copies follow the host's memory speed of the moment: round after round, one process each, the
# held-out case pageable-d2h-8x16mib, the same copies from pinned memory, lesson 09's pageable variant, and between
# them a host-only probe (Python copying a 256 MiB buffer into another with memmove, eight times: the median GB/s) and the
# hypervisor's steal time. untimed_runs.txt lists NAME RUN UNTIMED_NS TIMED_NS STEAL_TICKS SECONDS (from the start);
# host_probe.txt lists RUN GBPS SECONDS. The first round's traces are kept as NAME.json.
#   run.sh CLI OUTDIR [SECONDS]      (default 360: no round starts after that)
set -u
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CLI="$(realpath "$1")"
OUTDIR="$2"
LIMIT="${3:-360}"
mkdir -p "$OUTDIR/runs"
{
    echo "== lscpu"; lscpu
    echo "== transparent hugepages"; cat /sys/kernel/mm/transparent_hugepage/enabled /sys/kernel/mm/transparent_hugepage/defrag
    echo "== meminfo"; head -20 /proc/meminfo
    echo "== nvidia-smi"; nvidia-smi --query-gpu=name,driver_version,pci.bus_id,pcie.link.gen.current,pcie.link.width.current --format=csv
} >"$OUTDIR/topology.txt" 2>&1
steal() { awk '/^cpu /{print $9}' /proc/stat; }
record() { # NAME RUN OUT STEAL
    python3 - "$3" "$1" "$2" "$4" "$SECONDS" >>"$OUTDIR/untimed_runs.txt" <<'PY'
import json, sys
out, name, r, st, sec = sys.argv[1:6]
try:
    s = json.load(open(out))["info"]["settings"]
    print(name, r, s.get("untimed_makespan_ns", "-"), s.get("timed_makespan_ns", "-"), st, sec)
except Exception as e:
    print(name, r, "-", "-", st, sec, "#", e)
PY
}
probe() {
    python3 - "$1" "$SECONDS" >>"$OUTDIR/host_probe.txt" <<'PY'
import sys, time
a = bytearray(b"\x01") * (256 << 20)   # touched
b = bytearray(len(a))
b[:] = a
mb = memoryview(b)
rates = []
for _ in range(8):
    t = time.perf_counter()
    mb[:] = a
    rates.append(len(a) / (time.perf_counter() - t) / 1e9)
rates.sort()
print(sys.argv[1], round((rates[3] + rates[4]) / 2, 2), sys.argv[2])
PY
}
: >"$OUTDIR/untimed_runs.txt"
: >"$OUTDIR/host_probe.txt"
r=0
while [ "$SECONDS" -lt "$LIMIT" ]; do
    r=$((r + 1))
    probe "$r"
    for s in "$HERE"/scenarios/*.json 09-pinned-vs-pageable--pageable; do
        name="$(basename "$s" .json)"
        out="$OUTDIR/runs/$name-$r.json"
        before=$(steal)
        if [ -f "$s" ]; then
            "$CLI" run "$s" --backend cuda -o "$out" >"${out%.json}.log" 2>&1
        else
            "$CLI" run 09-pinned-vs-pageable --variant pageable --backend cuda -o "$out" >"${out%.json}.log" 2>&1
        fi
        record "$name" "$r" "$out" $(($(steal) - before))
        [ "$r" = 1 ] && cp "$out" "$OUTDIR/$name.json" 2>/dev/null
        rm -f "$out"
    done
done
echo "$r rounds in $SECONDS s" >>"$OUTDIR/topology.txt"
