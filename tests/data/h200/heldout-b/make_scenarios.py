"""Writes the second held-out set (scenarios/NAME.json): twelve small scenarios written after the simulator's rules
and the shipped profile, before any of them was simulated or run, to test the simulator on work nobody tuned for."""
import json
import os


def nb(*names, priority=None):
    return [{"name": n, "kind": "non-blocking", **({"priority": priority[n]} if priority and n in priority else {})}
            for n in names]


def spin(name, stream, us, grid=1, block=32):
    return {"op": "kernel", "name": name, "stream": stream, "kernel": "spin", "duration_us": us, "grid": grid,
            "block": block}


def case(name, title, streams, threads):
    return {"format": "streamscope-scenario", "version": 1, "id": name, "title": title, "streams": streams,
            "threads": threads, "run": {"warmup": 1, "iterations": 1}}


MiB = 1 << 20
cases = [
    case("d2h-beside-triad", "Two pinned 64 MiB device-to-host copies beside a triad over 16 Mi floats",
         nb("k", "c"),
         [{"name": "main", "ops": [
             {"op": "kernel", "name": "triad", "stream": "k", "kernel": "triad", "size": 16 * MiB},
             {"op": "memcpy", "name": "d2h 1", "stream": "c", "kind": "d2h", "bytes": 64 * MiB},
             {"op": "memcpy", "name": "d2h 2", "stream": "c", "kind": "d2h", "bytes": 64 * MiB}]}]),
    case("event-fanout-8", "One kernel, then eight streams waiting for its event, each with a kernel of 16 blocks",
         nb("root", *[f"s{i}" for i in range(8)]),
         [{"name": "main", "ops": [spin("root", "root", 100, 132, 256), {"op": "record", "stream": "root",
                                                                        "event": "go"}]
           + [op for i in range(8) for op in ({"op": "wait", "stream": f"s{i}", "event": "go"},
                                              spin(f"leaf {i}", f"s{i}", 50, 16, 256))]}]),
    case("memsets-500-small", "500 memsets of 4 KiB in one stream", nb("s"),
         [{"name": "main", "repeat": 500, "ops": [{"op": "memset", "name": "memset", "stream": "s", "bytes": 4096}]}]),
    case("two-threads-sync-loop", "Two host threads, each launching 100 kernels of 10 us with a stream sync after each",
         nb("a", "b"),
         [{"name": t, "repeat": 100, "ops": [spin("k", t, 10), {"op": "stream-sync", "stream": t}]} for t in "ab"]),
    case("h2d-64x1mib-4-streams", "64 pinned 1 MiB host-to-device copies round robin over 4 streams",
         nb("s0", "s1", "s2", "s3"),
         [{"name": "main", "repeat": 16, "ops": [{"op": "memcpy", "name": f"h2d {i}", "stream": f"s{i}", "kind": "h2d",
                                                  "bytes": MiB} for i in range(4)]}]),
    case("matmul-beside-fma", "A 2048 matmul beside an fma kernel of 1000 blocks", nb("a", "b"),
         [{"name": "main", "ops": [
             {"op": "kernel", "name": "matmul", "stream": "a", "kernel": "matmul", "size": 2048, "block": [16, 16]},
             {"op": "kernel", "name": "fma", "stream": "b", "kernel": "fma", "size": 20000, "grid": 1000,
              "block": 256}]}]),
    case("device-sync-loop-100", "100 full-GPU kernels of 10 us, a device sync after each", nb("s"),
         [{"name": "main", "repeat": 100, "ops": [spin("k", "s", 10, 132, 256), {"op": "device-sync"}]}]),
    case("host-func-chain-50", "50 rounds of a 5 us kernel and a 5 us host function in one stream", nb("s"),
         [{"name": "main", "repeat": 50, "ops": [spin("k", "s", 5),
                                                 {"op": "host-func", "name": "cb", "stream": "s",
                                                  "duration_us": 5}]}]),
    case("graph-50-spins-x20", "A graph of 50 kernels of 5 us, launched 20 times into one stream", nb("s"),
         [{"name": "main", "repeat": 20, "ops": [{"op": "graph", "name": "graph", "stream": "s",
                                                  "ops": [{"op": "kernel", "kernel": "spin", "grid": 1, "block": 32,
                                                           "duration_us": 5} for _ in range(50)]}]}]),
    case("priority-late-high", "Four 500 us kernels of 528 blocks at low priority, then a 100 us one at high",
         nb("low", "high", priority={"high": -5}),
         [{"name": "main", "ops": [spin(f"low {i}", "low", 500, 528, 256) for i in range(4)]
           + [spin("high", "high", 100, 132, 256)]}]),
    case("reduce-then-small-d2h", "Four rounds of a reduce over 64 Mi floats and a 4 KiB device-to-host copy",
         nb("s"),
         [{"name": "main", "repeat": 4, "ops": [
             {"op": "kernel", "name": "reduce", "stream": "s", "kernel": "reduce", "size": 64 * MiB},
             {"op": "memcpy", "name": "d2h", "stream": "s", "kind": "d2h", "bytes": 4096}]}]),
    case("pageable-d2h-8x16mib", "Eight pageable 16 MiB device-to-host copies over two streams", nb("a", "b"),
         [{"name": "main", "repeat": 4, "ops": [
             {"op": "memcpy", "name": f"d2h {s}", "stream": s, "kind": "d2h", "bytes": 16 * MiB, "host": "pageable"}
             for s in "ab"]}]),
]
out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "scenarios")
for c in cases:
    with open(os.path.join(out, c["id"] + ".json"), "w") as f:
        json.dump(c, f, indent=1)
print(len(cases), "scenarios")
