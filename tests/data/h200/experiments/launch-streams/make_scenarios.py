"""Writes the scenarios of this experiment (scenarios/NAME.json): one host thread launching N empty <<<1, 32>>>
kernels, into one stream, round robin over 4 or 32 streams, or each into a stream of its own, with nothing else to
wait for: the untimed makespan over N is what a launch costs the host as the Runner issues it, by how many streams
the launches go to. And 128 launches each into a stream of its own of one-block spin kernels of 20, 100 and 1000 us,
which stay running while the later launches are issued (the held-out case streams-128-one-block is the 100 us one):
their makespan less the spin, over 128, is a launch's cost with that many kernels in flight."""
import json
import os


def scenario(name, title, streams, launches, spin_us=0):
    kernel = {"kernel": "spin", "duration_us": spin_us} if spin_us else {"kernel": "empty"}
    ops = [{"op": "kernel", "name": f"e{i}", "stream": f"s{i % streams}", **kernel, "grid": 1, "block": 32}
           for i in range(launches)]
    return {"format": "streamscope-scenario", "version": 1, "id": name, "title": title,
            "streams": [{"name": f"s{k}", "kind": "non-blocking"} for k in range(streams)],
            "threads": [{"name": "main", "ops": ops}], "run": {"warmup": 1, "iterations": 1}}


out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "scenarios")
cases = {}
for n in (128, 1024):
    for streams, what in ((1, "one stream"), (4, "round robin over 4 streams"), (32, "round robin over 32 streams"),
                          (n, "each into a stream of its own")):
        name = f"launch-{n}-streams-{streams}"
        cases[name] = scenario(name, f"{n} empty kernels, {what}", streams, n)
for us in (20, 100, 1000):
    name = f"launch-128-streams-128-spin{us}"
    cases[name] = scenario(name, f"128 one-block {us} us spin kernels, each into a stream of its own", 128, 128, us)
for name, s in cases.items():
    with open(os.path.join(out, name + ".json"), "w") as f:
        json.dump(s, f, indent=1)
print(len(cases), "scenarios")
