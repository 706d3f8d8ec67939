"""Writes the scenarios of this experiment (scenarios/NAME.json): one stream, 50 rounds of a one-block spin kernel of
K us followed by a host function of H us. From each host function's start (host clock, inside it) and its kernel's
end (the kernel's own %globaltimer stamp) the recording gives the driver thread's wake-up after a kernel, against
the time since that thread last ran a host function (K plus the launch gap): whether a thread that ran a host
function a moment ago wakes sooner than one that sat idle (calibrate measures the wake-up after an idle thread)."""
import json
import os


def chain(kernel_us, hf_us, rounds=50):
    name = f"chain-k{kernel_us}-h{hf_us}"
    ops = [{"op": "kernel", "name": "k", "stream": "s", "kernel": "spin", "duration_us": kernel_us, "grid": 1,
            "block": 32},
           {"op": "host-func", "name": "cb", "stream": "s", "duration_us": hf_us}]
    return name, {"format": "streamscope-scenario", "version": 1, "id": name,
                  "title": f"{rounds} rounds of a {kernel_us} us kernel and a {hf_us} us host function in one stream",
                  "streams": [{"name": "s", "kind": "non-blocking"}],
                  "threads": [{"name": "main", "repeat": rounds, "ops": ops}],
                  "run": {"warmup": 1, "iterations": 1}}


out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "scenarios")
cases = dict(chain(k, 5) for k in (2, 5, 10, 20, 50, 100, 200))
cases.update(dict(chain(5, h) for h in (1, 20)))
for name, s in cases.items():
    with open(os.path.join(out, name + ".json"), "w") as f:
        json.dump(s, f, indent=1)
print(len(cases), "scenarios")
