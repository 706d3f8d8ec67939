"""Writes the scenarios of this experiment (scenarios/NAME.json): a 3 ms spin kernel that holds the stream, then
N kernels of one kind, either as one CUDA graph (a chain of N nodes), as N stream launches, or as M launches of a
20-node graph. The difference of untimed makespans between N = 201 and N = 1 (M = 11 and M = 1) is the GPU's spacing
of those kernels, with the launch calls hidden behind the blocker."""
import json
import os

KINDS = {
    "empty": {"kernel": "empty"},
    "spin1": {"kernel": "spin", "duration_us": 1},
    "spin2": {"kernel": "spin", "duration_us": 2},
    "spin5": {"kernel": "spin", "duration_us": 5},
    "spin20": {"kernel": "spin", "duration_us": 20},
}


def kernel(kind, stream=None):
    k = {"op": "kernel", "name": kind, **KINDS[kind], "grid": 1, "block": 32}
    if stream:
        k["stream"] = stream
    return k


def scenario(name, title, ops):
    blocker = {"op": "kernel", "name": "blocker", "stream": "s", "kernel": "spin", "duration_us": 3000, "grid": 1,
               "block": 32}
    return {"format": "streamscope-scenario", "version": 1, "id": name, "title": title,
            "streams": [{"name": "s", "kind": "non-blocking"}],
            "threads": [{"name": "main", "ops": [blocker] + ops + [{"op": "device-sync"}]}],
            "run": {"warmup": 1, "iterations": 1}}


def graph(kind, nodes):
    return {"op": "graph", "name": f"{nodes} {kind}", "stream": "s", "ops": [kernel(kind) for _ in range(nodes)]}


out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "scenarios")
cases = {}
for kind in KINDS:
    for n in (1, 201):
        cases[f"graph-{kind}-{n}"] = scenario(f"graph-{kind}-{n}", f"3 ms blocker, one graph of {n} {kind} kernels",
                                              [graph(kind, n)])
        cases[f"stream-{kind}-{n}"] = scenario(f"stream-{kind}-{n}", f"3 ms blocker, {n} {kind} kernels launched",
                                               [kernel(kind, "s") for _ in range(n)])
for kind in ("empty", "spin1"):
    for m in (1, 11):
        cases[f"graphs-{kind}-20x{m}"] = scenario(f"graphs-{kind}-20x{m}",
                                                  f"3 ms blocker, {m} launches of a graph of 20 {kind} kernels",
                                                  [graph(kind, 20) for _ in range(m)])
for name, s in cases.items():
    with open(os.path.join(out, name + ".json"), "w") as f:
        json.dump(s, f, indent=1)
print(len(cases), "scenarios")
