"""The untimed makespans of a recording folder's runs, for tools/sim_accuracy.py and tools/heldout_accuracy.py:
FOLDER/untimed_runs.txt lists `NAME RUN UNTIMED_NS TIMED_NS` per line (the same work run in several processes)."""
import os


def read_untimed_runs(folder):
    """NAME -> the untimed makespans of its runs (empty when there is no such file; runs with none left out)."""
    runs = {}
    path = os.path.join(folder, "untimed_runs.txt")
    if os.path.exists(path):
        for line in open(path):
            parts = line.split()
            if len(parts) >= 3 and parts[2] not in ("None", "-"):
                runs.setdefault(parts[0], []).append(float(parts[2]))
    return runs


def truth(makespans):
    """The truth of several runs: their mean less the highest and lowest tenth (none of fewer than ten), as
    `streamscope-cli calibrate` keeps the host figures of its fresh processes. A run's launch cost falls in one of two
    groups from process to process (tests/data/h200/experiments/launch-cpu/), and a median of a few lands in either."""
    v = sorted(makespans)
    k = len(v) // 10
    v = v[k : len(v) - k]
    return sum(v) / len(v)
