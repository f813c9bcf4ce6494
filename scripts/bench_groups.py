#!/usr/bin/env python3
"""Writes the grouped-aggregation benchmark's Parquet file with pyarrow, and
runs pyarrow's side of the benchmark:

  bench_groups.py OUT.parquet [ROWS]     write the file (needs pyarrow, numpy)
  bench_groups.py query FILE KEY [SEL]   pyarrow's GROUP BY KEY of i32, i64
                                         and f64 (count, sum, min, max), of
                                         the rows with sel < SEL when given;
                                         prints the number of groups

The rows are those bench/cmd/groupgen has DuckDB write (its data.go defines
them), so that either writer's file gives the same groups: of N rows, row i
holds the keys k10, k1k, k1m, k50m (int64) and s1k ("s" and three digits),
key c being ((A_c*i + B_c) mod N) mod D_c, and, from r_j = mix(4i + j)
(splitmix64's output function over the golden-ratio increment), i32, i64,
f64 (each null when the low 16 bits of its draw are below 3277) and sel.
Snappy, row groups of 2^20 rows, dictionary encoding on (pyarrow's
defaults but the row group size).
"""

import math
import sys

M64 = (1 << 64) - 1
GOLDEN = 0x9E3779B97F4A7C15
C1 = 0xBF58476D1CE4E5B9
C2 = 0x94D049BB133111EB
NULL_BELOW = 3277
CHUNK = 1 << 20

# name, distinct values for N rows, the fraction of N its multiplier is
# nearest, string key (groupgen's keySpecs)
KEYS = [
    ("k10", lambda n: 10, (math.sqrt(5) - 1) / 2, False),
    ("k1k", lambda n: 1000, math.sqrt(2) - 1, False),
    ("k1m", lambda n: 1_000_000, math.sqrt(3) - 1, False),
    ("k50m", lambda n: max(min(50_000_000, n // 2), 1), math.sqrt(5) - 2, False),
    ("s1k", lambda n: 1000, math.e - 2, True),
]


def mix_py(x):
    x = (x + GOLDEN) & M64
    x = ((x ^ (x >> 30)) * C1) & M64
    x = ((x ^ (x >> 27)) * C2) & M64
    return x ^ (x >> 31)


def weyl(c, n):
    _, distinct, frac, _ = KEYS[c]
    a = max(round(n * frac), 1)  # (Go's math.Round: halves away from zero; n*frac is never a half)
    while math.gcd(a, n) != 1:
        a += 1
    return a, mix_py(c) % n, distinct(n)


def query(path, key, sel):
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    t = pq.read_table(path, columns=[key, "i32", "i64", "f64"] + (["sel"] if sel is not None else []))
    if sel is not None:
        t = t.filter(pc.less(t["sel"], sel))
    aggs = [([], "count_all")] + [(c, a) for c in ("i32", "i64", "f64") for a in ("count", "sum", "min", "max")]
    g = t.group_by(key).aggregate(aggs).sort_by(key)
    print(f"bench_groups.py: {g.num_rows} groups")


def main():
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    if sys.argv[1] == "query":
        return query(sys.argv[2], sys.argv[3], int(sys.argv[4]) if len(sys.argv) > 4 else None)
    out = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 100_000_000
    ws = [weyl(c, n) for c in range(len(KEYS))]
    s1k = pa.array([f"s{k:03d}" for k in range(1000)])

    def mix(x):
        x = x + np.uint64(GOLDEN)
        x = (x ^ (x >> np.uint64(30))) * np.uint64(C1)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(C2)
        return x ^ (x >> np.uint64(31))

    schema = pa.schema([(k[0], pa.string() if k[3] else pa.int64()) for k in KEYS] +
                       [("i32", pa.int32()), ("i64", pa.int64()), ("f64", pa.float64()), ("sel", pa.int32())])
    with pq.ParquetWriter(out, schema, compression="snappy") as w:
        for lo in range(0, n, CHUNK):
            hi = min(n, lo + CHUNK)
            i = np.arange(lo, hi, dtype=np.int64)
            cols = []
            for (name, _, _, is_str), (a, b, d) in zip(KEYS, ws):
                k = (a * i + b) % n % d
                cols.append(s1k.take(pa.array(k)) if is_str else pa.array(k))
            u = i.astype(np.uint64) * np.uint64(4)
            r0, r1, r2, r3 = (mix(u + np.uint64(j)) for j in range(4))
            null = [(r & np.uint64(0xFFFF)) < np.uint64(NULL_BELOW) for r in (r0, r1, r2)]
            i32 = ((r0 >> np.uint64(32)).astype(np.int64) - (1 << 31)).astype(np.int32)
            i64 = (r1 >> np.uint64(27)).astype(np.int64) - (1 << 36)
            f64 = (r2 >> np.uint64(11)).astype(np.float64) / float(1 << 43)
            sel = (r3 % np.uint64(100)).astype(np.int32)
            cols += [pa.array(i32, mask=null[0]), pa.array(i64, mask=null[1]), pa.array(f64, mask=null[2]), pa.array(sel)]
            w.write_batch(pa.record_batch(cols, schema=schema), row_group_size=CHUNK)
    print(f"bench_groups.py: {n} rows to {out}")


if __name__ == "__main__":
    main()
