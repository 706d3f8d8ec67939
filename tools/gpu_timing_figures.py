#!/usr/bin/env python3
"""What timing costs and how far CUDA events are from CUPTI, measured on the GPU (docs/PERFORMANCE.md, "Timing").

    tools/gpu_timing_figures.py CLI OUTDIR

For each case (lessons 08, 10, 11 and their variants; 32 and 128 one-block streams; 1000 empty kernels in one
stream) and each timing (cupti, events, both; TIMING_MODES=cupti,events for fewer) it runs
`CLI run CASE --timing MODE` and reads from the trace the timed
and untimed makespans (host clock, first issue to device sync; the untimed iteration runs the same work with no
events and no CUPTI) and the median host cost of a launch call. Every lesson and variant is also run with
--timing both, and the per-span event error against CUPTI is pooled over all of them. Writes OUTDIR/timing.json and
prints the tables in Markdown.
"""
import json
import os
import statistics
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCENARIOS = os.path.join(REPO, "tests", "bench", "scenarios")
CASES = [
    ("08", None), ("08", "one-stream"),
    ("10", None), ("10", "one-stream"),
    ("11", None), ("11", "connections-1"), ("11", "connections-8"),
    (os.path.join(SCENARIOS, "32-streams-one-block.json"), None),
    (os.path.join(SCENARIOS, "128-streams-one-block.json"), None),
    (os.path.join(SCENARIOS, "one-stream-1000-empty-kernels.json"), None),
]
# TIMING_MODES=cupti,events limits the modes; EVENT_ERROR=0 leaves out the lessons run under `both`.
MODES = [m for m in os.environ.get("TIMING_MODES", "cupti,events,both").split(",") if m]
LAUNCHES = ("cudaLaunchKernel", "cudaMemcpyAsync", "cudaMemsetAsync", "cudaGraphLaunch", "cudaLaunchHostFunc")


def run(cli, scenario, variant, mode, out):
    cmd = [cli, "run", scenario, "--backend", "cuda", "--timing", mode, "-o", out]
    if variant:
        cmd += ["--variant", variant]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if not os.path.exists(out):
        raise RuntimeError(" ".join(cmd) + " wrote no trace: " + p.stderr.strip()[-300:])
    with open(out) as f:
        return json.load(f)


def figures(trace):
    settings = trace["info"]["settings"]
    spans = trace["spans"]
    names = trace["strings"]
    kinds = trace["span_kinds"]
    calls = [spans["end"][i] - spans["start"][i] for i in range(len(spans["start"]))
             if kinds[spans["kind"][i]] == "api-call" and names[spans["name"][i]] in LAUNCHES]
    timed = int(settings.get("timed_makespan_ns", 0))
    untimed = int(settings.get("untimed_makespan_ns", 0))
    return {
        "timing": settings.get("timing"),
        "timed_ms": timed / 1e6,
        "untimed_ms": untimed / 1e6,
        "ratio": timed / untimed if untimed else None,
        "launch_call_us": statistics.median(calls) / 1000 if calls else None,
        "calls": len(calls),
    }


def event_errors(trace):
    spans = trace["spans"]
    if "event_start_error" not in spans:
        return [], []
    kinds = trace["span_kinds"]
    starts, ends = [], []
    for i, k in enumerate(spans["kind"]):
        if kinds[k] in ("api-call", "sync", "host-work", "host-func"):
            continue
        s, e = spans["event_start_error"][i], spans["event_end_error"][i]
        if s == -(2 ** 63):
            continue
        starts.append(s)
        ends.append(e)
    return starts, ends


def pct(v, p):
    v = sorted(v)
    if not v:
        return None
    pos = p * (len(v) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (pos - lo)


def main():
    cli, outdir = sys.argv[1], sys.argv[2]
    os.makedirs(outdir, exist_ok=True)
    tmp = os.path.join(outdir, "timing-trace.json")
    rows = []
    for scenario, variant in CASES:
        label = os.path.basename(scenario).replace(".json", "") + (f" / {variant}" if variant else "")
        for mode in MODES:
            try:
                f = figures(run(cli, scenario, variant, mode, tmp))
            except Exception as e:  # keep going: one failure must not lose the rest
                f = {"error": str(e)}
            f.update({"case": label, "mode": mode})
            rows.append(f)
            print(json.dumps(f), flush=True)

    presets = subprocess.run([cli, "presets"], capture_output=True, text=True).stdout.splitlines()
    ids = [line.split()[0] for line in presets if line.strip()]
    if os.environ.get("EVENT_ERROR", "1") == "0":
        ids = []
    per_lesson = []
    all_starts, all_ends = [], []
    for pid in ids:
        with open(os.path.join(REPO, "resources", "presets", pid + ".json")) as f:
            variants = [None] + [v["id"] for v in json.load(f).get("variants", [])]
        for v in variants:
            try:
                t = run(cli, pid, v, "both", tmp)
            except Exception as e:
                per_lesson.append({"case": pid, "variant": v, "error": str(e)})
                continue
            s, e = event_errors(t)
            all_starts += s
            all_ends += e
            if s:
                per_lesson.append({"case": pid, "variant": v, "spans": len(s),
                                   "start_median_us": pct([abs(x) for x in s], 0.5) / 1000,
                                   "start_p90_us": pct([abs(x) for x in s], 0.9) / 1000,
                                   "end_median_us": pct([abs(x) for x in e], 0.5) / 1000,
                                   "end_p90_us": pct([abs(x) for x in e], 0.9) / 1000})
    pooled = {}
    if all_starts:
        pooled = {"spans": len(all_starts),
                  "start_median_us": pct([abs(x) for x in all_starts], 0.5) / 1000,
                  "start_p90_us": pct([abs(x) for x in all_starts], 0.9) / 1000,
                  "start_early_fraction": sum(1 for x in all_starts if x < 0) / len(all_starts),
                  "end_median_us": pct([abs(x) for x in all_ends], 0.5) / 1000,
                  "end_p90_us": pct([abs(x) for x in all_ends], 0.9) / 1000}
    with open(os.path.join(outdir, "timing.json"), "w") as f:
        json.dump({"modes": rows, "event_error_per_lesson": per_lesson, "event_error_pooled": pooled}, f, indent=1)
    os.remove(tmp)

    print("\n| case | timing | timed ms | untimed ms | timed/untimed | launch call (median) |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        if "error" in r:
            print(f"| {r['case']} | {r['mode']} | error: {r['error'][:60]} | | | |")
            continue
        ratio = f"{r['ratio']:.3f}" if r["ratio"] else "-"
        call = f"{r['launch_call_us']:.2f} us" if r["launch_call_us"] else "-"
        print(f"| {r['case']} | {r['timing']} | {r['timed_ms']:.3f} | {r['untimed_ms']:.3f} | {ratio} | {call} |")
    print("\n| lesson | variant | spans | start error median / p90 | end error median / p90 |")
    print("|---|---|---|---|---|")
    for r in per_lesson:
        if "error" in r:
            print(f"| {r['case']} | {r['variant'] or ''} | error | | |")
            continue
        print(f"| {r['case']} | {r['variant'] or ''} | {r['spans']} | {r['start_median_us']:.1f} / "
              f"{r['start_p90_us']:.1f} us | {r['end_median_us']:.1f} / {r['end_p90_us']:.1f} us |")
    if pooled:
        print(f"\npooled over {pooled['spans']} spans: start {pooled['start_median_us']:.1f} / "
              f"{pooled['start_p90_us']:.1f} us (median / p90; {100 * pooled['start_early_fraction']:.0f} % early), "
              f"end {pooled['end_median_us']:.1f} / {pooled['end_p90_us']:.1f} us")


if __name__ == "__main__":
    main()
