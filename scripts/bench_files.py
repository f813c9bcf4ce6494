#!/usr/bin/env python3
"""Helper of scripts/bench-files.sh: writes the pyarrow files of the file
benchmark, runs pyarrow's side of it, times a child process when
/usr/bin/time is missing, and checks the answers and prints the report.

  bench_files.py write DIR ROWS     pyarrow files (needs pyarrow, numpy)
  bench_files.py kinds DIR ROWS     pyarrow's files of booleans and decimals
                                    for the GPU page route (pa-kinds-v1 and -v2)
  bench_files.py split DIR ROWS     pa-split.parquet: row groups of random and
                                    of compressible values, for the GPU page
                                    route's chunk-by-chunk planning
  bench_files.py query FILE         pyarrow's answer as JSON (needs pyarrow)
  bench_files.py exec STATS -- CMD  run CMD, write "wall_s maxrss_kb" to STATS
  bench_files.py report LOGS        check the answers, print the markdown table
  bench_files.py selftest           the generator's first rows (no numpy)

The data (bench/cmd/duckfiles/data.go defines it; duckfiles writes the same
rows): row i draws r_c = mix(4i + c), c = 0..3, mix being splitmix64's
output function over the golden-ratio increment, and takes
  i32 = int32(low 32 bits of r_0)
  i64 = int64(r_1) >> 27
  f64 = null when (r_2 & 0xffff) < 3277, else float64(int64(r_2 >> 11) - 2^52) / 2^20
  f32 = float32(int32(r_3 >> 40) - 2^23) / 2^10
Every file of the set holds these rows, so every engine on every file must
give the same answers.
"""

import json
import math
import os
import struct
import subprocess
import sys
import time

M64 = (1 << 64) - 1
GOLDEN = 0x9E3779B97F4A7C15
C1 = 0xBF58476D1CE4E5B9
C2 = 0x94D049BB133111EB
NULL_BELOW = 3277
CHUNK = 1 << 20  # rows per generated batch, row group and IPC batch
GPU_GROUP = 16  # batches per row group of the GPU-friendly file


def mix_py(x):
    x = (x + GOLDEN) & M64
    x = ((x ^ (x >> 30)) * C1) & M64
    x = ((x ^ (x >> 27)) * C2) & M64
    return x ^ (x >> 31)


def row_py(i):
    """Row i in pure Python: (i32, i64, f64 or None, f32)."""
    r0, r1, r2, r3 = (mix_py(4 * i + c) for c in range(4))
    i32 = r0 & 0xFFFFFFFF
    i32 -= (i32 >> 31) << 32
    s1 = r1 - ((r1 >> 63) << 64)
    i64 = s1 >> 27
    f64 = None if (r2 & 0xFFFF) < NULL_BELOW else float((r2 >> 11) - (1 << 52)) / (1 << 20)
    f32 = float((r3 >> 40) - (1 << 23)) / (1 << 10)
    return i32, i64, f64, f32


# The first rows as bench/cmd/duckfiles's TestRows has them (float bits).
SELFTEST = [
    (0, 2065550767, -59571323503, 4739854121213663056, 3318082008),
    (1, -499938614, 53156995476, 4746427126525655024, 3303121144),
    (2, -275433930, -43655733289, 13974069565133253110, 3309054576),
    (3, -1713467645, -31788173569, 13962660957781632032, 1139503712),
]


def selftest():
    for i, i32, i64, f64bits, f32bits in SELFTEST:
        a, b, c, d = row_py(i)
        got = (a, b, struct.unpack("<Q", struct.pack("<d", c))[0], struct.unpack("<I", struct.pack("<f", d))[0])
        if got != (i32, i64, f64bits, f32bits):
            sys.exit(f"selftest: row {i}: {got}, want {(i32, i64, f64bits, f32bits)}")
    nulls = sum(row_py(i)[2] is None for i in range(20000))
    if not 800 <= nulls <= 1200:
        sys.exit(f"selftest: {nulls} nulls in 20000 rows, want about 5%")
    print("selftest: ok")


def mix_np(np, x):
    """mix_py over a numpy array of uint64 (wrapping as uint64 does)."""
    x = x + np.uint64(GOLDEN)
    x = (x ^ (x >> np.uint64(30))) * np.uint64(C1)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(C2)
    return x ^ (x >> np.uint64(31))


def gen_batch(pa, np, lo, hi):
    i = np.arange(lo, hi, dtype=np.uint64)
    four = i * np.uint64(4)
    r0, r1, r2, r3 = (mix_np(np, four + np.uint64(c)) for c in range(4))
    i32 = r0.astype(np.uint32).view(np.int32)
    i64 = r1.view(np.int64) >> np.int64(27)
    valid = (r2 & np.uint64(0xFFFF)) >= np.uint64(NULL_BELOW)
    f64 = ((r2 >> np.uint64(11)).astype(np.int64) - np.int64(1 << 52)).astype(np.float64) / np.float64(1 << 20)
    f32 = ((r3 >> np.uint64(40)).astype(np.int64) - np.int64(1 << 23)).astype(np.float32) / np.float32(1 << 10)
    return pa.record_batch([
        pa.array(i32),
        pa.array(i64),
        pa.array(f64, mask=~valid),
        pa.array(f32),
    ], names=["i32", "i64", "f64", "f32"])


def write(d, rows, only=()):
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    b = gen_batch(pa, np, 0, 4)
    for (i, i32, i64, f64bits, f32bits) in SELFTEST:
        got = (b.column(0)[i].as_py(), b.column(1)[i].as_py(),
               struct.unpack("<Q", struct.pack("<d", b.column(2)[i].as_py()))[0],
               struct.unpack("<I", struct.pack("<f", b.column(3)[i].as_py()))[0])
        if got != (i32, i64, f64bits, f32bits):
            sys.exit(f"write: numpy row {i}: {got}, want {(i32, i64, f64bits, f32bits)}")
    schema = b.schema
    os.makedirs(d, exist_ok=True)
    names = {
        "pa-snappy.parquet": lambda p: pq.ParquetWriter(p, schema, compression="snappy"),
        "pa-none.parquet": lambda p: pq.ParquetWriter(p, schema, compression="none"),
        # "GPU-friendly": row groups of GPU_GROUP batches, no dictionary
        # (the values are random), pages of 1 MiB: many pages per chunk.
        "pa-snappy-gpu.parquet": lambda p: pq.ParquetWriter(p, schema, compression="snappy", use_dictionary=False,
                                                            data_page_size=1 << 20, write_statistics=False),
        # One row group of every row (pyarrow's defaults otherwise): a file
        # whose chunks are as many as its columns.
        "pa-snappy-one.parquet": lambda p: pq.ParquetWriter(p, schema, compression="snappy"),
        # The codecs the host decompresses (pyarrow's defaults otherwise).
        "pa-zstd.parquet": lambda p: pq.ParquetWriter(p, schema, compression="zstd"),
        "pa-gzip.parquet": lambda p: pq.ParquetWriter(p, schema, compression="gzip"),
        "pa-lz4.parquet": lambda p: pq.ParquetWriter(p, schema, compression="lz4"),  # (LZ4_RAW)
        # (level 1: brotli's default level writes a few MB a second)
        "pa-brotli.parquet": lambda p: pq.ParquetWriter(p, schema, compression="brotli", compression_level=1),
        "pa.arrow": lambda p: pa.ipc.new_file(p, schema),
        "pa-zstd.arrow": lambda p: pa.ipc.new_file(p, schema, options=pa.ipc.IpcWriteOptions(compression="zstd")),
    }
    writers = {}
    for name, mk in names.items():
        if only and name not in only:
            continue
        path = os.path.join(d, name)
        if os.path.exists(path):
            print(f"bench_files: {path} exists, kept", file=sys.stderr)
            continue
        writers[name] = (mk(path + ".tmp"), path)
    if not writers:
        return
    start = time.perf_counter()
    held = []  # the batches of the GPU-friendly file's next row group
    whole = []  # the batches of the one-row-group file
    for lo in range(0, rows, CHUNK):
        batch = gen_batch(pa, np, lo, min(lo + CHUNK, rows))
        for name, (w, _) in writers.items():
            if name == "pa-snappy-gpu.parquet":
                held.append(batch)
                if len(held) == GPU_GROUP or lo + CHUNK >= rows:
                    w.write_table(pa.Table.from_batches(held), row_group_size=GPU_GROUP * CHUNK)
                    held = []
            elif name == "pa-snappy-one.parquet":
                whole.append(batch)
                if lo + CHUNK >= rows:
                    w.write_table(pa.Table.from_batches(whole), row_group_size=rows)
                    whole = []
            elif name.endswith(".parquet"):
                w.write_batch(batch, row_group_size=CHUNK)
            else:
                w.write_batch(batch)
    for w, path in writers.values():
        w.close()
        os.replace(path + ".tmp", path)
    print(f"bench_files: wrote {', '.join(writers)} ({rows} rows) in {time.perf_counter() - start:.1f}s", file=sys.stderr)


def kinds(d, rows):
    """The booleans and integer-stored decimals of the GPU page route:
    pa-kinds-v1.parquet and pa-kinds-v2.parquet (data pages v1 and v2, where
    pyarrow writes booleans PLAIN and RLE), snappy, no dictionary, 1 MiB
    pages, row groups of GPU_GROUP batches. Row i draws r_c = mix(4i + c) as
    the file benchmark does; its columns:
      b    = null when (r_0 & 0xffff) < 3277, else r_0 >> 63 (random bits)
      bRun = (i >> 12) & 1 (runs of 4096 alike)
      d9   = decimal(9, 2) of int32(r_1 >> 32) % 10^9 (INT32)
      d18  = decimal(18, 4) of int64(r_2) % 10^18, null like b (INT64)
    """
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    def batch(lo, hi):
        i = np.arange(lo, hi, dtype=np.uint64)
        four = i * np.uint64(4)
        r0, r1, r2 = (mix_np(np, four + np.uint64(c)) for c in range(3))
        valid = (r0 & np.uint64(0xFFFF)) >= np.uint64(NULL_BELOW)
        d9 = np.fmod((r1 >> np.uint64(32)).astype(np.uint32).view(np.int32).astype(np.int64), 10**9)
        d18 = np.fmod(r2.view(np.int64), np.int64(10**18))
        return pa.record_batch([
            pa.array((r0 >> np.uint64(63)).astype(bool), mask=~valid),
            pa.array(((i >> np.uint64(12)) & np.uint64(1)).astype(bool)),
            pa.Array.from_buffers(pa.decimal128(9, 2), len(i), [None, pa.py_buffer(
                np.stack([d9, d9 >> np.int64(63)], axis=1).tobytes())]),
            pa.Array.from_buffers(pa.decimal128(18, 4), len(i), [
                pa.array(valid).buffers()[1], pa.py_buffer(np.stack([d18, d18 >> np.int64(63)], axis=1).tobytes())],
                null_count=int((~valid).sum())),
        ], names=["b", "bRun", "d9", "d18"])

    os.makedirs(d, exist_ok=True)
    schema = batch(0, 1).schema
    for v in ("1.0", "2.0"):
        path = os.path.join(d, f"pa-kinds-v{v[0]}.parquet")
        if os.path.exists(path):
            print(f"bench_files: {path} exists, kept", file=sys.stderr)
            continue
        w = pq.ParquetWriter(path + ".tmp", schema, compression="snappy", use_dictionary=False,
                             data_page_size=1 << 20, write_statistics=False, data_page_version=v,
                             store_decimal_as_integer=True)
        for lo in range(0, rows, GPU_GROUP * CHUNK):
            w.write_batch(batch(lo, min(lo + GPU_GROUP * CHUNK, rows)), row_group_size=GPU_GROUP * CHUNK)
        w.close()
        os.replace(path + ".tmp", path)
        md = pq.ParquetFile(path).metadata
        print(f"bench_files: wrote {path} ({rows} rows):",
              ", ".join(f"{md.schema.column(c).name} {md.row_group(0).column(c).physical_type} "
                        f"{'/'.join(md.row_group(0).column(c).encodings)}" for c in range(md.num_columns)),
              file=sys.stderr)


def num(x):
    if x is None:
        return None
    if isinstance(x, float):
        if math.isnan(x):
            return "NaN"
        if math.isinf(x):
            return "Inf" if x > 0 else "-Inf"
    return x


def query(path):
    import pyarrow as pa
    import pyarrow.compute as pc

    with open(path, "rb") as f:
        magic = f.read(6)
    if magic == b"ARROW1":
        table = pa.ipc.open_file(pa.memory_map(path)).read_all()
    else:
        import pyarrow.parquet as pq
        table = pq.read_table(path)
    out = {"rows": table.num_rows, "version": pa.__version__, "columns": []}
    for name, col in zip(table.column_names, table.columns):
        t = col.type
        if not (pa.types.is_integer(t) or pa.types.is_floating(t)):
            continue
        mm = pc.min_max(col)
        out["columns"].append({
            "name": name, "type": str(t),
            "count": pc.count(col).as_py(), "sum": num(pc.sum(col).as_py()),
            "min": num(mm["min"].as_py()), "max": num(mm["max"].as_py()),
        })
    json.dump(out, sys.stdout)
    print()


def exec_timed(stats, cmd):
    """Runs cmd (stdout and stderr inherited) and writes its wall time and
    peak RSS (the child's own, from wait4) to stats; exits as it did."""
    start = time.perf_counter()
    p = subprocess.Popen(cmd)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - start
    p.returncode = os.waitstatus_to_exitcode(status)
    with open(stats, "w") as f:
        f.write(f"{wall:.6f} {ru.ru_maxrss}\n")
    sys.exit(p.returncode if p.returncode >= 0 else 128 - p.returncode)


# Float32 columns: arrowagg and DuckDB print their min and max as float32
# (shortest), pyarrow as the float64 of the float32: compare them as float32.
FLOAT32_TYPES = {"float32", "float", "FLOAT"}
FLOAT_TYPES = FLOAT32_TYPES | {"float64", "double", "DOUBLE"}


def as_f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def normalize(res):
    """{column: {count, sum, min, max, float}} and rows of an answer."""
    cols = {}
    for c in res.get("columns", []):
        t = c.get("type", "")
        isf = t in FLOAT_TYPES
        v = {k: c.get(k) for k in ("count", "sum", "min", "max")}
        if t in FLOAT32_TYPES:
            for k in ("min", "max"):
                if isinstance(v[k], (int, float)):
                    v[k] = as_f32(float(v[k]))
        v["float"] = isf
        cols[c["name"]] = v
    return res.get("rows"), cols


def agree(a, b, isf, rtol=1e-9):
    """Integers (and null, "NaN", ...) exactly, floats within rtol."""
    if not isf or not isinstance(a, (int, float)) or not isinstance(b, (int, float)):
        return a == b
    a, b = float(a), float(b)
    return a == b or abs(a - b) <= rtol * max(abs(a), abs(b))


def differences(ref, res):
    (rrows, rcols), (rows, cols) = ref, res
    diffs = []
    if rows != rrows:
        diffs.append(f"rows {rows} != {rrows}")
    for name, rv in rcols.items():
        v = cols.get(name)
        if v is None:
            diffs.append(f"{name} missing")
            continue
        for k in ("count", "sum", "min", "max"):
            if not agree(v[k], rv[k], rv["float"] and k != "count"):
                diffs.append(f"{name}.{k} {v[k]} != {rv[k]}")
    return diffs


def median(xs):
    xs = sorted(xs)
    n = len(xs)
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2


def report(logs):
    """Reads LOGS/runs.tsv (file, size, engine, rep, wall_s, rss_kb, rc;
    rep 0 is the warm-up) and each run's answer LOGS/answers/FILE.ENGINE.json,
    checks every answer against the first, prints the markdown table and the
    ratios, and exits 1 when an answer differs or a run failed."""
    runs = {}
    order = []
    sizes = {}
    failed = []
    with open(os.path.join(logs, "runs.tsv")) as f:
        for line in f:
            if not line.strip() or line.startswith("file\t"):
                continue
            fname, size, engine, rep, wall, rss, rc = line.rstrip("\n").split("\t")
            key = (fname, engine)
            sizes[fname] = int(size)
            if key not in runs:
                runs[key] = []
                order.append(key)
            if rc != "0":
                failed.append(f"{fname} {engine} rep {rep}: exit status {rc}")
            if rep != "0":
                runs[key].append((float(wall), int(rss) if rss else None, rc))
    ref = None
    refname = None
    check = {}
    for key in order:
        path = os.path.join(logs, "answers", f"{key[0]}.{key[1]}.json")
        try:
            with open(path) as f:
                res = normalize(json.load(f))
        except (OSError, ValueError) as e:
            check[key] = f"no answer ({e.__class__.__name__})"
            continue
        if ref is None:
            ref, refname = res, f"{key[1]} on {key[0]}"
            check[key] = "reference"
            continue
        d = differences(ref, res)
        check[key] = "ok" if not d else "DIFFERS: " + "; ".join(d)
    med = {k: median([w for w, _, _ in v]) for k, v in runs.items() if v}
    print(f"answers compared with {refname}: integers exactly, floats within 1e-9 relative (float32 min/max as float32)")
    print()
    print("| file | MiB | engine | median s | GB/s | peak RSS MiB | answer |")
    print("|---|---:|---|---:|---:|---:|---|")
    for key in order:
        fname, engine = key
        if key not in med:
            continue
        t = med[key]
        rss = [r for _, r, _ in runs[key] if r]
        rss_s = f"{max(rss) / 1024:.0f}" if rss else "?"
        gbs = sizes[fname] / t / 1e9 if t > 0 else float("inf")
        print(f"| {fname} | {sizes[fname] / 2**20:.0f} | {engine} | {t:.3f} | {gbs:.2f} | {rss_s} | {check.get(key, '?')} |")
    print()
    print("| file | cuda auto / CPU build | cuda gpu / CPU build | DuckDB / CPU build | DuckDB / cuda auto | pyarrow / CPU build |")
    print("|---|---:|---:|---:|---:|---:|")
    files = []
    for fname, _ in order:
        if fname not in files:
            files.append(fname)

    def ratio(f, a, b):
        x, y = med.get((f, a)), med.get((f, b))
        return f"{x / y:.2f}" if x and y else "-"

    for fname in files:
        print(f"| {fname} | {ratio(fname, 'arrowagg-cuda-auto', 'arrowagg')} | {ratio(fname, 'arrowagg-cuda-gpu', 'arrowagg')} | "
              f"{ratio(fname, 'duckdb', 'arrowagg')} | {ratio(fname, 'duckdb', 'arrowagg-cuda-auto')} | {ratio(fname, 'pyarrow', 'arrowagg')} |")
    print()
    print("Time ratios: cuda auto / CPU build at most 1 means the GPU build's automatic choice is no slower;"
          " DuckDB / ours at least 1.2 is the target.")
    bad = [f"{k[0]} {k[1]}: {v}" for k, v in check.items() if v.startswith(("DIFFERS", "no answer"))]
    for line in failed + bad:
        print(f"bench-files: {line}", file=sys.stderr)
    if failed or bad:
        sys.exit(1)


def split(d, rows):
    """pa-split.parquet: one int64 column "i64", snappy, no dictionary, 1 MiB
    pages, row groups of GPU_GROUP batches that alternate: the file
    benchmark's i64 values (random: snappy keeps 7 bytes of 8) in the even
    ones, runs of 4096 alike, (i >> 12), in the odd ones (snappy keeps about
    a twentieth)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, "pa-split.parquet")
    if os.path.exists(path):
        print(f"bench_files: {path} exists, kept", file=sys.stderr)
        return
    schema = pa.schema([("i64", pa.int64())])
    w = pq.ParquetWriter(path + ".tmp", schema, compression="snappy", use_dictionary=False,
                         data_page_size=1 << 20, write_statistics=False)
    group = GPU_GROUP * CHUNK
    for g, lo in enumerate(range(0, rows, group)):
        i = np.arange(lo, min(lo + group, rows), dtype=np.uint64)
        if g % 2 == 0:
            v = mix_np(np, i * np.uint64(4) + np.uint64(1)).view(np.int64) >> np.int64(27)
        else:
            v = (i >> np.uint64(12)).astype(np.int64)
        w.write_batch(pa.record_batch([pa.array(v)], schema=schema), row_group_size=group)
    w.close()
    os.replace(path + ".tmp", path)
    md = pq.ParquetFile(path).metadata
    print(f"bench_files: wrote {path} ({rows} rows, {md.num_row_groups} row groups):",
          ", ".join(f"{g}: {md.row_group(g).column(0).total_compressed_size}/{md.row_group(g).column(0).total_uncompressed_size}"
                    for g in range(min(md.num_row_groups, 2))), file=sys.stderr)


def main():
    args = sys.argv[1:]
    if not args:
        sys.exit(__doc__)
    cmd = args[0]
    if cmd == "write" and len(args) >= 3:
        write(args[1], int(args[2]), tuple(args[3:]))  # then the files to write (default: all)
    elif cmd == "kinds" and len(args) == 3:
        kinds(args[1], int(args[2]))
    elif cmd == "split" and len(args) == 3:
        split(args[1], int(args[2]))
    elif cmd == "query" and len(args) == 2:
        query(args[1])
    elif cmd == "exec" and len(args) >= 4 and args[2] == "--":
        exec_timed(args[1], args[3:])
    elif cmd == "report" and len(args) == 2:
        report(args[1])
    elif cmd == "selftest":
        selftest()
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
