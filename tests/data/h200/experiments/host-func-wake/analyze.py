"""The wake-ups in this experiment's recordings: for each host function, the time from its kernel's end (the kernel's
own stamp) to its start (host clock inside it), and the time since the previous host function of the stream ended.
Prints, per scenario, the median and mean wake-up over all runs and its distribution in 5 us bins.
    analyze.py [FOLDER]     (default: this folder's runs/, else its NAME.json recordings)"""
import glob
import json
import os
import statistics
import sys

here = os.path.dirname(os.path.abspath(__file__))
folder = sys.argv[1] if len(sys.argv) > 1 else here
files = sorted(glob.glob(os.path.join(folder, "runs", "*.json"))) or sorted(glob.glob(os.path.join(folder, "*.json")))
by = {}
for f in files:
    d = json.load(open(f))
    s, kinds = d["spans"], d["span_kinds"]
    ops = sorted((s["start"][i], s["end"][i], kinds[s["kind"][i]]) for i in range(len(s["start"]))
                 if kinds[s["kind"][i]] in ("kernel", "host-func"))
    name = d["info"].get("scenario_id") or os.path.basename(f)
    rows = by.setdefault(name, [])
    last_hf_end = None
    for a, b in zip(ops, ops[1:]):
        if a[2] == "kernel" and b[2] == "host-func":
            rows.append((b[0] - a[1], None if last_hf_end is None else a[1] - last_hf_end))
        if b[2] == "host-func":
            last_hf_end = b[1]
print("| scenario | host functions | wake-up median (us) | mean (us) | since the previous one ended, median (us) "
      "| wake-ups in 5 us bins from 0 |")
print("|---|---:|---:|---:|---:|---|")


def natural(name):
    parts = name.replace("chain-k", "").split("-h")
    return (int(parts[0]), int(parts[1])) if len(parts) == 2 and all(p.isdigit() for p in parts) else (0, 0)


for name in sorted(by, key=natural):
    rows = by[name]
    if len(rows) < 2:
        continue
    w = [r[0] / 1000 for r in rows[1:]]  # the first one follows an idle thread
    since = [r[1] / 1000 for r in rows if r[1] is not None]
    bins = {}
    for x in w:
        bins[int(x // 5)] = bins.get(int(x // 5), 0) + 1
    hist = " ".join(f"{k * 5}:{bins[k]}" for k in sorted(bins))
    print(f"| {name} | {len(w)} | {statistics.median(w):.1f} | {statistics.mean(w):.1f} | "
          f"{statistics.median(since):.1f} | {hist} |")
