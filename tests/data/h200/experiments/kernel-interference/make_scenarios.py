"""Writes the scenarios of this experiment (scenarios/NAME.json): lessons 01 and 02's matmul (768 x 768, 264 blocks of
16 x 16) and transpose (4096 x 4096, 264 blocks of 32 x 8), each ten times, alone in one stream or beside another
kernel of 264 blocks in a second stream: each other, a 300 us spin (SMs, no memory), a triad over 16 Mi floats
(192 MiB of traffic), and each beside itself. Lesson 01 runs the matmul beside the transpose 9-15 % slower than either
alone; which of them slows which, and whether it is the memory traffic or the SMs, is what the spans say."""
import json
import os

MM = {"kernel": "matmul", "size": 768, "grid": 264, "block": [16, 16]}
TR = {"kernel": "transpose", "size": 4096, "grid": 264, "block": [32, 8]}
SPIN = {"kernel": "spin", "duration_us": 300, "grid": 264, "block": [256]}
TRIAD = {"kernel": "triad", "size": 16 << 20, "grid": 264, "block": [256]}


def case(name, title, a, b=None):
    ops = [{"op": "kernel", "name": a[0], "stream": "s1", **a[1]}]
    if b:
        ops.append({"op": "kernel", "name": b[0], "stream": "s2", **b[1]})
    return name, {"format": "streamscope-scenario", "version": 1, "id": name, "title": title,
                  "streams": [{"name": "s1", "kind": "non-blocking"}, {"name": "s2", "kind": "non-blocking"}],
                  "threads": [{"name": "main", "repeat": 10, "ops": ops}],
                  "run": {"warmup": 1, "iterations": 1}}


cases = dict([
    case("mm-alone", "the matmul alone, ten times", ("matmul", MM)),
    case("tr-alone", "the transpose alone, ten times", ("transpose", TR)),
    case("mm-beside-tr", "the matmul beside the transpose (lesson 01)", ("matmul", MM), ("transpose", TR)),
    case("mm-beside-spin", "the matmul beside a 300 us spin", ("matmul", MM), ("spin", SPIN)),
    case("tr-beside-spin", "the transpose beside a 300 us spin", ("transpose", TR), ("spin", SPIN)),
    case("mm-beside-triad", "the matmul beside a triad over 16 Mi floats", ("matmul", MM), ("triad", TRIAD)),
    case("tr-beside-triad", "the transpose beside a triad over 16 Mi floats", ("transpose", TR), ("triad", TRIAD)),
    case("mm-beside-mm", "two matmuls side by side", ("matmul", MM), ("matmul b", MM)),
    case("tr-beside-tr", "two transposes side by side", ("transpose", TR), ("transpose b", TR)),
    case("triad-alone", "the triad alone, ten times", ("triad", TRIAD)),
])
out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "scenarios")
for name, s in cases.items():
    with open(os.path.join(out, name + ".json"), "w") as f:
        json.dump(s, f, indent=1)
print(len(cases), "scenarios")
