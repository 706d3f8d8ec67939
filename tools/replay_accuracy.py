#!/usr/bin/env python3
"""The replay of a recorded run against the recording (docs/ACCURACY.md, "Replay of a recorded run").

1. Every lesson and variant recorded on the H200 (tests/data/h200) replayed unchanged with `streamscope-cli replay
   --json`: the replay's makespan (first to last GPU span) against the recording's, and its host makespan against
   the recording's untimed run (settings.untimed_makespan_ns).
2. What-if against a real answer: a recording replayed with the setting that its lesson's other recording changed,
   against that other recording's makespan.

Prints Markdown tables and a summary line.

    tools/replay_accuracy.py [path/to/streamscope-cli]      (default: build/app/streamscope-cli)
"""
import glob
import json
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CLI = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build", "app", "streamscope-cli")
DATA = os.path.join(ROOT, "tests", "data", "h200")

# (recording, settings, the recording of the changed run)
WHAT_IF = [
    ("01-two-streams", ["streams=1"], "variants/01-two-streams--one-stream"),
    ("04-default-stream", ["kind.s1=blocking", "kind.s2=blocking", "kind.s3=blocking", "kind.s4=blocking"],
     "variants/04-default-stream--blocking"),
    ("09-pinned-vs-pageable", ["pinned=false"], "variants/09-pinned-vs-pageable--pageable"),
    ("variants/09-pinned-vs-pageable--pageable", ["pinned=true"], "09-pinned-vs-pageable"),
    ("11-hardware-queues", ["connections=8"], "variants/11-hardware-queues--connections-8"),
    ("11-hardware-queues", ["connections=1"], "variants/11-hardware-queues--connections-1"),
    ("variants/11-hardware-queues--connections-8", ["connections=32"], "11-hardware-queues"),
    ("13-stream-priorities", ["priorities=off"], "variants/13-stream-priorities--same-priority"),
    ("variants/13-stream-priorities--same-priority", ["priority.high=-5"], "13-stream-priorities"),
]


def replay(name, settings=()):
    args = [CLI, "replay", os.path.join(DATA, name + ".json"), "--json"]
    for s in settings:
        args += ["--set", s]
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"{name}: {r.stderr.strip()}")
    return json.loads(r.stdout)


def makespan(name):
    r = subprocess.run([CLI, "analyze", "--json", os.path.join(DATA, name + ".json")], capture_output=True, text=True)
    return json.loads(r.stdout)["metrics"]["makespan_ns"]


def pct(e):
    return f"{e * 100:+.1f} %"


def main():
    files = sorted(glob.glob(os.path.join(DATA, "*.json"))) + sorted(glob.glob(os.path.join(DATA, "variants/*.json")))
    rows, errors, untimed_errors = [], [], []
    for f in files:
        name = os.path.relpath(f, DATA)[:-5]
        j = replay(name)
        e = j["replay_error"]
        d = j["durations"]
        errors.append(abs(e["makespan_error"]))
        label = os.path.basename(name).replace("--", " / ")
        if e["untimed_makespan_ns"]:
            untimed_errors.append(abs(e["untimed_error"]))
            untimed = f"{e['untimed_makespan_ns'] / 1e3:.1f} | {e['replay_host_makespan_ns'] / 1e3:.1f} | {pct(e['untimed_error'])}"
        else:
            untimed = "– | – | –"
        rows.append(f"| {label} | {e['recorded_makespan_ns'] / 1e3:.1f} | {e['replay_makespan_ns'] / 1e3:.1f} | "
                    f"{pct(e['makespan_error'])} | {untimed} | {d['gpu_ops_measured']}/{d['gpu_ops']} |")
    print("| lesson / variant | recorded (µs) | replay (µs) | error | untimed (µs) | replay host (µs) | error | GPU ops measured |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    print("\n".join(rows))
    print()
    print(f"{len(errors)} replayed: {sum(e <= 0.01 for e in errors)} within 1 %, {sum(e <= 0.05 for e in errors)} "
          f"within 5 %, median |error| {statistics.median(errors) * 100:.1f} % (recorded makespan); against the untimed "
          f"run {sum(e <= 0.05 for e in untimed_errors)} of {len(untimed_errors)} within 5 %, median "
          f"{statistics.median(untimed_errors) * 100:.1f} %")
    print()
    print("| recording | --set | replay (µs) | the changed run recorded (µs) | error |")
    print("|---|---|---:|---:|---:|")
    for name, settings, other in WHAT_IF:
        j = replay(name, settings)
        changed = j["changed"]["makespan_ns"]
        real = makespan(other)
        print(f"| {os.path.basename(name).replace('--', ' / ')} | `{' '.join(settings)}` | {changed / 1e3:.1f} | "
              f"{real / 1e3:.1f} ({os.path.basename(other).replace('--', ' / ')}) | {pct(changed / real - 1)} |")


if __name__ == "__main__":
    main()
