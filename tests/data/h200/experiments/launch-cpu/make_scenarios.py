"""Writes the scenarios of this experiment (scenarios/NAME.json): one host thread launching 1024 empty <<<1, 32>>>
kernels into one stream (three untimed iterations, so that a process's own spread shows), and the held-out case
streams-128-one-block (128 one-block 100 us spin kernels, each into a stream of its own). run.sh runs them unpinned
and pinned to each CPU in turn: whether a launch's cost depends on the CPU the issuing thread runs on."""
import json
import os


def scenario(name, title, streams, launches, spin_us=0, iterations=3):
    kernel = {"kernel": "spin", "duration_us": spin_us} if spin_us else {"kernel": "empty"}
    ops = [{"op": "kernel", "name": f"e{i}", "stream": f"s{i % streams}", **kernel, "grid": 1, "block": 32}
           for i in range(launches)]
    return {"format": "streamscope-scenario", "version": 1, "id": name, "title": title,
            "streams": [{"name": f"s{k}", "kind": "non-blocking"} for k in range(streams)],
            "threads": [{"name": "main", "ops": ops}], "run": {"warmup": 1, "iterations": iterations}}


out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "scenarios")
cases = {
    "launch-1024-one-stream": scenario("launch-1024-one-stream", "1024 empty kernels, one stream", 1, 1024),
    "streams-128-spin100": scenario("streams-128-spin100",
                                    "128 one-block 100 us spin kernels, each into a stream of its own", 128, 128, 100),
}
for name, s in cases.items():
    with open(os.path.join(out, name + ".json"), "w") as f:
        json.dump(s, f, indent=1)
print(len(cases), "scenarios")
