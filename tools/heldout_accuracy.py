#!/usr/bin/env python3
"""The simulator on scenarios that no model rule or profile figure was fitted to: each scenario of
tests/data/h200/heldout/scenarios simulated with the shipped profile, against its run on the H200
(tests/data/h200/heldout/NAME.json: the untimed makespan, settings.untimed_makespan_ns). Where
tests/data/h200/heldout/untimed_runs.txt lists the untimed makespans of several runs of each case, one process each
("NAME RUN UNTIMED_NS TIMED_NS" per line), the truth is their mean less the highest and lowest tenth
(tools/untimed_runs.py), with their range beside it: StreamScope's own runs of one scenario differ by up to 40 %
between processes on the H200 machines. Prints a Markdown table and a summary line (docs/ACCURACY.md).

    tools/heldout_accuracy.py [path/to/streamscope-cli] [--profile PROFILE] [--dir FOLDER]
        (defaults: build/app/streamscope-cli, the shipped profile, tests/data/h200/heldout; the second set, written
        and recorded later: --dir tests/data/h200/heldout-b)
"""
import glob
import json
import os
import statistics
import subprocess
import sys
import tempfile

from untimed_runs import read_untimed_runs, truth

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
args = [a for a in sys.argv[1:]]
profile = []
if "--profile" in args:
    i = args.index("--profile")
    profile = ["--profile", args[i + 1]]
    del args[i:i + 2]
DIR = os.path.join(ROOT, "tests", "data", "h200", "heldout")
if "--dir" in args:
    i = args.index("--dir")
    DIR = args[i + 1]
    del args[i:i + 2]
CLI = args[0] if args else os.path.join(ROOT, "build", "app", "streamscope-cli")


def main():
    rows, errors = [], []
    runs = read_untimed_runs(DIR)
    with tempfile.TemporaryDirectory() as tmp:
        for scenario in sorted(glob.glob(os.path.join(DIR, "scenarios", "*.json"))):
            name = os.path.basename(scenario)[:-5]
            recorded = json.load(open(os.path.join(DIR, name + ".json")))
            settings = recorded["info"].get("settings", {})
            untimed = float(settings["untimed_makespan_ns"])
            spread = ""
            if runs.get(name):
                untimed = truth(runs[name])
                spread = f" ({min(runs[name]) / 1e3:.1f}–{max(runs[name]) / 1e3:.1f}, {len(runs[name])} runs)"
            out = os.path.join(tmp, name + ".json")
            r = subprocess.run([CLI, "run", scenario, "--backend", "sim", "-o", out, *profile], capture_output=True,
                               text=True)
            if r.returncode != 0:
                sys.exit(f"{name}: {r.stderr.strip()}")
            a = subprocess.run([CLI, "analyze", "--json", out], capture_output=True, text=True)
            sim = json.loads(a.stdout)["metrics"]["host_makespan_ns"]
            e = (sim / untimed - 1) * 100
            errors.append(abs(e))
            title = json.load(open(scenario)).get("title", name)
            rows.append(f"| {name} | {title} | {untimed / 1e3:.1f}{spread} | {sim / 1e3:.1f} | {e:+.1f} % |")
    print("| case | what | H200 untimed (µs) | simulated (µs) | error |")
    print("|---|---|---:|---:|---:|")
    print("\n".join(rows))
    print()
    print(f"{len(errors)} held-out cases: {sum(e <= 5 for e in errors)} within 5 %, {sum(e <= 10 for e in errors)} "
          f"within 10 %, median |error| {statistics.median(errors):.1f} %")


if __name__ == "__main__":
    main()
