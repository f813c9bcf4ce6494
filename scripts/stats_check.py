#!/usr/bin/env python3
"""Compares arrowagg's statistics with pyarrow.compute on a generated file.

Writes (once) a Parquet file (an Arrow IPC file when FILE ends in .arrow,
which arrowagg reads in place: with --device gpu its columns go to the GPU,
where Parquet pages are folded on the CPU in every build) of ROWS rows with
a fixed seed: integers and
floats of several scales (a float column of a large mean and a small
spread among them), 5% nulls, strings and booleans; runs each given arrowagg
binary on it with its flags and

    -a count,mean,stddev,variance,approx_distinct -f json --progress never

and compares, column by column, mean with pyarrow.compute.mean, stddev and
variance with pyarrow.compute.stddev / variance with ddof=1 (the sample
statistics: arrowagg's are DuckDB's stddev and variance; pyarrow's default
is ddof=0), and approx_distinct with pyarrow.compute.count_distinct.

Bounds: mean, stddev and variance within REL (default 1e-9) relative of
pyarrow's; approx_distinct within 2% of the exact count. Prints a table and
the largest differences; exits 1 when a bound is missed.

Usage:
    python3 scripts/stats_check.py FILE ROWS BINARY [FLAGS...] [-- BINARY [FLAGS...]]...
e.g.
    python3 scripts/stats_check.py /tmp/stats.parquet 4000000 \
        gpu-bin/arrowagg-cuda --device gpu -- gpu-bin/arrowagg-cuda --device cpu
"""

import json
import os
import subprocess
import sys

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

REL = float(os.environ.get("REL", "1e-9"))
DISTINCT = 0.02


def write(path, rows):
    rng = np.random.default_rng(20261125)

    def nulls():
        return rng.random(rows) < 0.05

    cats = np.array(["user-%d@example.org" % i for i in range(5000)], dtype=object)
    cols = {
        "i32": pa.array(rng.integers(-1_000_000, 1_000_000, rows, dtype=np.int32), mask=nulls()),
        "i64": pa.array(rng.integers(-10**12, 10**12, rows, dtype=np.int64), mask=nulls()),
        "u32": pa.array(rng.integers(0, 2**32, rows, dtype=np.uint32), mask=nulls()),
        "f64": pa.array(rng.standard_normal(rows), mask=nulls()),
        "f64_mean": pa.array(1e6 + rng.standard_normal(rows), mask=nulls()),
        "f64_wide": pa.array(rng.standard_normal(rows) * 10.0 ** rng.integers(-8, 9, rows), mask=nulls()),
        "f32": pa.array((100 + 10 * rng.standard_normal(rows)).astype(np.float32), mask=nulls()),
        "small": pa.array(rng.integers(0, 300, rows, dtype=np.int64), mask=nulls()),
        "cat": pa.array(cats[rng.integers(0, len(cats), rows)], type=pa.string(), mask=nulls()),
        "flag": pa.array(rng.random(rows) < 0.3, mask=nulls()),
    }
    tmp = path + ".tmp"
    table = pa.table(cols)
    if path.endswith(".arrow"):
        with pa.OSFile(tmp, "wb") as sink:
            with pa.ipc.new_file(sink, table.schema) as w:
                for batch in table.to_batches(max_chunksize=1 << 20):
                    w.write_batch(batch)
    else:
        pq.write_table(table, tmp, row_group_size=1 << 20)
    os.replace(tmp, path)


def read(path):
    if path.endswith(".arrow"):
        with pa.memory_map(path) as src:
            return pa.ipc.open_file(src).read_all()
    return pq.read_table(path)


def rel(a, b):
    if a == b:
        return 0.0
    return abs(a - b) / max(abs(a), abs(b))


def check(path, table, argv):
    cmd = argv + ["-a", "count,mean,stddev,variance,approx_distinct", "-f", "json", "--progress", "never", path]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True)
    got = {c["name"]: c for c in json.loads(out.stdout)["columns"]}
    failures, worst = [], {"mean": 0.0, "stddev": 0.0, "variance": 0.0, "approx_distinct": 0.0}
    print("== %s" % " ".join(argv))
    print("%-9s %12s %24s %24s %24s %10s %10s" % ("column", "count", "mean", "stddev", "variance", "distinct", "exact"))
    for name in table.column_names:
        col, g = table.column(name), got[name]
        want = {"count": pc.count(col).as_py(), "distinct": pc.count_distinct(col).as_py()}
        numeric = not pa.types.is_string(col.type) and not pa.types.is_boolean(col.type)
        if numeric:
            want["mean"] = pc.mean(col).as_py()
            want["stddev"] = pc.stddev(col, ddof=1).as_py()
            want["variance"] = pc.variance(col, ddof=1).as_py()
        print("%-9s %12d %24s %24s %24s %10d %10d" % (name, g["count"], g.get("mean"), g.get("stddev"),
                                                       g.get("variance"), g["approx_distinct"], want["distinct"]))
        if g["count"] != want["count"]:
            failures.append("%s: count %s, pyarrow %s" % (name, g["count"], want["count"]))
        for k in ("mean", "stddev", "variance"):
            if not numeric:
                continue
            r = rel(float(g[k]), want[k])
            worst[k] = max(worst[k], r)
            if not r <= REL:
                failures.append("%s: %s %r, pyarrow %r (relative %.3g > %g)" % (name, k, g[k], want[k], r, REL))
        r = rel(float(g["approx_distinct"]), float(want["distinct"]))
        worst["approx_distinct"] = max(worst["approx_distinct"], r)
        if not r <= DISTINCT:
            failures.append("%s: approx_distinct %d, count_distinct %d (%.2f%%)" % (
                name, g["approx_distinct"], want["distinct"], 100 * r))
    print("largest relative differences: " + ", ".join("%s %.3g" % kv for kv in worst.items()))
    return failures


def main():
    if len(sys.argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    path, rows = sys.argv[1], int(sys.argv[2])
    if not os.path.exists(path):
        write(path, rows)
    table = read(path)
    runs, cur = [], []
    for a in sys.argv[3:]:
        if a == "--":
            runs.append(cur)
            cur = []
        else:
            cur.append(a)
    runs.append(cur)
    failures = []
    for argv in runs:
        failures += check(path, table, argv)
    for f in failures:
        print("FAIL " + f)
    print("stats_check: %s" % ("FAIL" if failures else "ok"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
