#!/usr/bin/env python3
"""Records three small PyTorch profiler traces on a GPU, for StreamScope's importer tests.

    python3 tools/make_pytorch_traces.py tests/data/pytorch
    python3 tools/make_pytorch_traces.py --gzip tests/data/pytorch    # NAME-gzip.json.gz, as the profiler writes .gz

Writes, into the directory given:

    two-streams-event.json      a matrix multiply in one stream, a CUDA event, and a stream that waits on it
    threads-own-streams.json    host threads, each bound to a device and using its own stream
    copy-pipeline.json          H2D copy -> kernel -> D2H copy per chunk, pinned host memory, two streams

and beside each a NAME.provenance.json: the GPU, driver, torch and CUDA versions, the command, the date, and the
counts tests/core/tst_pytorch_trace.cpp checks the import against (GPU work per device and stream, CUDA API calls,
launch links, stream waits), taken here from the profiler's own events with Python's json module.

Traces are torch.profiler's export_chrome_trace output, unedited. CUDA synchronization records
(enable_cuda_sync_events) are turned on where this torch has them, so that stream waits become event arrows.
Runs in a few seconds; needs a CUDA GPU.
"""

import datetime
import gzip
import json
import os
import platform
import shlex
import subprocess
import sys
import threading
import time


def fail(message):
    print("make_pytorch_traces: " + message, file=sys.stderr)
    sys.exit(2)


try:
    import torch
    from torch.profiler import ProfilerActivity, profile
except ImportError:
    fail("PyTorch is not installed (pip install torch)")


def profiler():
    """A profiler of CPU and CUDA activity, with CUDA sync records where this torch has them."""
    kwargs = dict(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], record_shapes=False, with_stack=False)
    try:
        kwargs["experimental_config"] = torch._C._profiler._ExperimentalConfig(enable_cuda_sync_events=True)
        return profile(**kwargs)
    except (AttributeError, TypeError):
        kwargs.pop("experimental_config", None)
        return profile(**kwargs)


def two_streams_event():
    """s1: a matmul, then an event; s2 waits on the event, transposes the product, and runs an independent kernel."""
    dev = torch.device("cuda", 0)
    s1 = torch.cuda.Stream(device=dev)
    s2 = torch.cuda.Stream(device=dev)
    a = torch.randn(2048, 2048, device=dev)
    b = torch.randn(2048, 2048, device=dev)
    torch.cuda.synchronize(dev)
    with profiler() as prof:
        for _ in range(3):
            done = torch.cuda.Event()
            with torch.cuda.stream(s1):
                c = a @ b
                done.record(s1)
            with torch.cuda.stream(s2):
                s2.wait_event(done)
                d = c.t().contiguous()
                e = a * 2.0
            c.record_stream(s2)
            del d, e
        s2.synchronize()
        torch.cuda.synchronize(dev)
    return prof


def threads_own_streams():
    """One host thread per device (or three on one GPU), each with its own stream, a few kernels, then a sync."""
    count = max(2, min(3, torch.cuda.device_count() or 1))
    devices = [i % torch.cuda.device_count() for i in range(count)]
    work = []
    for d in devices:
        dev = torch.device("cuda", d)
        work.append((dev, torch.cuda.Stream(device=dev), torch.randn(1024, 1024, device=dev),
                     torch.randn(1024, 1024, device=dev)))
    for d in set(devices):
        torch.cuda.synchronize(d)
    barrier = threading.Barrier(count)

    def worker(i):
        dev, stream, x, w = work[i]
        torch.cuda.set_device(dev)
        barrier.wait()
        with torch.cuda.stream(stream):
            for _ in range(4):
                x = torch.relu(x @ w)
        stream.synchronize()

    with profiler() as prof:
        threads = [threading.Thread(target=worker, args=(i,), name="worker-%d" % i) for i in range(count)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for d in set(devices):
            torch.cuda.synchronize(d)
    return prof


def copy_pipeline():
    """Four chunks over two streams: pinned H2D copy, two kernels, pinned D2H copy; a device sync at the end."""
    dev = torch.device("cuda", 0)
    chunks, n = 4, 1 << 22  # 16 MiB per chunk
    host_in = [torch.randn(n).pin_memory() for _ in range(chunks)]
    host_out = [torch.empty(n).pin_memory() for _ in range(chunks)]
    buffers = [torch.empty(n, device=dev) for _ in range(chunks)]
    streams = [torch.cuda.Stream(device=dev) for _ in range(2)]
    torch.cuda.synchronize(dev)
    with profiler() as prof:
        for i in range(chunks):
            with torch.cuda.stream(streams[i % 2]):
                buffers[i].copy_(host_in[i], non_blocking=True)
                buffers[i].mul_(2.0).add_(1.0)
                host_out[i].copy_(buffers[i], non_blocking=True)
        torch.cuda.synchronize(dev)
    return prof


GPU_CATEGORIES = {"kernel": "kernels", "gpu_memcpy": "memcpys", "gpu_memset": "memsets"}


def expected_counts(path):
    """What the importer must find, from the trace's own events."""
    with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
        doc = json.load(f)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    streams = {}
    call_correlations = set()
    runtime_calls = 0
    stream_waits = 0
    gpu_correlations = []
    for e in events:
        if e.get("ph") != "X":
            continue
        cat = e.get("cat")
        args = e.get("args") or {}
        if cat in GPU_CATEGORIES:
            key = (int(e["pid"]), int(e["tid"]))
            counts = streams.setdefault(key, {"kernels": 0, "memcpys": 0, "memsets": 0})
            counts[GPU_CATEGORIES[cat]] += 1
            if "correlation" in args:
                gpu_correlations.append(args["correlation"])
        elif cat in ("cuda_runtime", "cuda_driver"):
            runtime_calls += 1
            if "correlation" in args:
                call_correlations.add(args["correlation"])
        elif cat == "cuda_sync" and args.get("cuda_sync_kind", e.get("name")) == "Stream Wait Event":
            stream_waits += 1
    return {
        "streams": [dict(device=d, stream=s, **c) for (d, s), c in sorted(streams.items())],
        "runtime_calls": runtime_calls,
        "launch_links": sum(1 for c in gpu_correlations if c in call_correlations),
        "stream_wait_events": stream_waits,
    }


def driver_version():
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=20)
        if out.returncode == 0 and out.stdout.strip():
            return out.stdout.strip().splitlines()[0]
    except (OSError, subprocess.SubprocessError):
        pass
    return "unknown"


def main():
    args = sys.argv[1:]
    compress = "--gzip" in args
    args = [a for a in args if a != "--gzip"]
    if len(args) != 1:
        fail("usage: make_pytorch_traces.py [--gzip] OUTPUT_DIR")
    if not torch.cuda.is_available():
        fail("no CUDA GPU is usable here (torch.cuda.is_available() is False)")
    out_dir = args[0]
    os.makedirs(out_dir, exist_ok=True)
    # The CUDA context and the kernels' first-use costs stay out of the traces.
    torch.zeros(1, device="cuda").add_(1)
    torch.cuda.synchronize()

    common = {
        "gpu": torch.cuda.get_device_name(0),
        "gpus": [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())],
        "driver": driver_version(),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "python": platform.python_version(),
        "host": platform.node(),
        "command": " ".join(shlex.quote(a) for a in [sys.executable] + sys.argv),
        "date": datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0).isoformat().replace(
            "+00:00", "Z"),
    }
    for name, make in [("two-streams-event", two_streams_event), ("threads-own-streams", threads_own_streams),
                       ("copy-pipeline", copy_pipeline)]:
        started = time.monotonic()
        prof = make()
        if compress:
            name += "-gzip"
        file_name = name + (".json.gz" if compress else ".json")
        trace = os.path.join(out_dir, file_name)
        # torch's export_chrome_trace compresses a path ending in .gz itself.
        prof.export_chrome_trace(trace)
        provenance = dict(trace=file_name, what=make.__doc__, **common)
        if compress:
            with open(trace, "rb") as f:
                if f.read(2) != b"\x1f\x8b":
                    fail("%s: this torch's export_chrome_trace did not compress it" % trace)
            provenance["compressed_by"] = "torch.profiler export_chrome_trace (path ending in .gz)"
        provenance["expected"] = expected_counts(trace)
        with open(os.path.join(out_dir, name + ".provenance.json"), "w") as f:
            json.dump(provenance, f, indent=2)
            f.write("\n")
        e = provenance["expected"]
        print("%s: %d streams, %d CUDA calls, %d launch links, %d stream waits (%.1f s)" % (
            trace, len(e["streams"]), e["runtime_calls"], e["launch_links"], e["stream_wait_events"],
            time.monotonic() - started))


if __name__ == "__main__":
    main()
