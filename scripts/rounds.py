#!/usr/bin/env python3
"""Interleaved timing of several command lines on one file, whole processes.

Each round runs every command once on FILE, the order rotated by one every
round, so that a drift of the host falls on all of them alike; round 0 is a
warm-up, not counted. Prints per command the median, min and quartiles of
the wall time in ms. A run that exits non-zero is reported.

Usage: scripts/rounds.py ROUNDS FILE NAME=COMMAND... (COMMAND is split on
spaces; FILE is appended to it), e.g.
  scripts/rounds.py 31 pa.arrow "cpu=gpu-bin/arrowagg --device cpu -f json" \
      "auto=gpu-bin/arrowagg-cuda --device auto -f json"
"""
import os
import statistics
import subprocess
import sys
import time


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    rounds, path = int(sys.argv[1]), sys.argv[2]
    cmds = [a.split("=", 1) for a in sys.argv[3:]]
    with open(path, "rb") as f:  # into the page cache
        while f.read(1 << 24):
            pass
    times = {name: [] for name, _ in cmds}
    for r in range(rounds + 1):
        k = r % len(cmds)
        for name, cmd in cmds[k:] + cmds[:k]:
            t0 = time.perf_counter()
            p = subprocess.run(cmd.split() + [path], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            took = (time.perf_counter() - t0) * 1e3
            if p.returncode != 0:
                print(f"{name}: exit {p.returncode}", file=sys.stderr)
            if r > 0:
                times[name].append(took)
    for name, _ in cmds:
        v = sorted(times[name])
        q = statistics.quantiles(v, n=4) if len(v) > 1 else [v[0]] * 3
        print(f"{os.path.basename(path):20s} {name:14s} median {statistics.median(v):8.2f} ms  "
              f"min {v[0]:8.2f}  p25 {q[0]:8.2f}  p75 {q[2]:8.2f}  n={len(v)}")


if __name__ == "__main__":
    main()
