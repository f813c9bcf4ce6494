#!/usr/bin/env python3
"""Writes snappy pages for bench/cuda/unsnap_bench.cu, which times
kernels/unsnap.cuh's decompressor alone on a GPU host.

  unsnap_pages.py DIR ROWS [COLUMN...]

For each column of scripts/bench_files.py's rows (i32, i64, f64 with its
nulls left out, f32) (or those named) it writes DIR/<column>.pages: the column's PLAIN values
cut into pages of 20,000 rows (pyarrow's default row limit a page), each
compressed by Arrow's snappy codec (the raw block format Parquet uses). The
file: b"UNSNAPB1", the page count (u32), each page's compressed and
uncompressed lengths (u32 pairs), the compressed pages one after the other,
then the uncompressed ones (the answers the harness checks). Needs pyarrow
and numpy.
"""

import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_files  # noqa: E402

PAGE_ROWS = 20000


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    d, rows, only = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
    import numpy as np
    import pyarrow as pa

    os.makedirs(d, exist_ok=True)
    cols = {"i32": [], "i64": [], "f64": [], "f32": []}
    step = 1 << 20
    for lo in range(0, rows, step):
        b = bench_files.gen_batch(pa, np, lo, min(rows, lo + step))
        for k, name in enumerate(cols):
            if only and name not in only:
                continue
            a = b.column(k)
            if a.null_count:
                a = a.drop_null()
            cols[name].append(a.to_numpy(zero_copy_only=False))
    for name, parts in cols.items():
        if only and name not in only:
            continue
        v = np.concatenate(parts)
        raw = v.tobytes()
        width = v.dtype.itemsize
        pages = [raw[i:i + PAGE_ROWS * width] for i in range(0, len(raw), PAGE_ROWS * width)]
        comp = [pa.compress(p, codec="snappy", asbytes=True) for p in pages]
        path = os.path.join(d, name + ".pages")
        with open(path, "wb") as f:
            f.write(b"UNSNAPB1")
            f.write(struct.pack("<I", len(pages)))
            for c, p in zip(comp, pages):
                f.write(struct.pack("<II", len(c), len(p)))
            for c in comp:
                f.write(c)
            for p in pages:
                f.write(p)
        print(f"{path}: {len(pages)} pages, {sum(map(len, comp))} bytes stored, {len(raw)} bytes of values")


if __name__ == "__main__":
    main()
