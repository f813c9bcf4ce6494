#!/usr/bin/env python3
"""Peers of arrowagg's GPU benchmarks, for the GPU host.

  gpu_peers.py measure --json peers.json
      CuPy (its reductions through CUB) and PyTorch sum / min / max over the
      same columns as the Go benchmarks (1 GiB of int32, int64, float32,
      float64 values, resident on the GPU), each timed with CUDA events, the
      median of 20 runs after 3 warm-ups; a device-to-device copy and a
      page-locked host-to-device copy as ceilings; PyTorch's end-to-end path
      from ordinary and page-locked host memory (copy + sum + aminmax).

  gpu_peers.py table --go-bench bench.log --peers peers.json
      Prints the comparison table (markdown) from the Go benchmark log and the
      peers' JSON.

  gpu_peers.py decision --go-bench bench.log
      Prints the planner's decision table (markdown) from BenchmarkDecision's
      log: per type, size and location the fastest round of forced CPU,
      forced GPU and auto, auto's choice and auto over the faster.
"""
import argparse
import json
import os
import re
import statistics
import sys
import time

GIB = 1 << 30
TYPES = ["int32", "int64", "float32", "float64"]


def measure(args):
    os.environ.setdefault("CUPY_ACCELERATORS", "cub")
    import numpy as np
    import torch
    try:
        import cupy as cp
    except ImportError:  # the table says so
        cp = None

    dev = torch.device("cuda")
    out = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__,
           "cupy": cp.__version__ if cp else None,
           "cupy_accelerators": os.environ.get("CUPY_ACCELERATORS"), "results": {}}

    def timed(fn, reps=20, warm=3):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        for _ in range(warm):
            fn()
        torch.cuda.synchronize()
        samples = []
        for _ in range(reps):
            start.record()
            fn()
            stop.record()
            stop.synchronize()
            samples.append(start.elapsed_time(stop) / 1e3)
        return statistics.median(samples)

    def wall(fn, reps=10, warm=2):
        for _ in range(warm):
            fn()
        torch.cuda.synchronize()
        samples = []
        for _ in range(reps):
            t = time.perf_counter()
            fn()
            torch.cuda.synchronize()
            samples.append(time.perf_counter() - t)
        return statistics.median(samples)

    res = out["results"]
    src = torch.empty(GIB, dtype=torch.uint8, device=dev)
    dst = torch.empty_like(src)
    res["d2d"] = 2 * GIB / timed(lambda: dst.copy_(src))
    host = torch.empty(GIB, dtype=torch.uint8).pin_memory()
    res["h2d_pinned"] = GIB / timed(lambda: dst.copy_(host, non_blocking=True), reps=10)
    del src, dst, host

    gen = torch.Generator(device=dev).manual_seed(1)
    for name in TYPES:
        dt = getattr(torch, name)
        n = GIB // torch.tensor([], dtype=dt).element_size()
        if dt.is_floating_point:
            x = torch.randn(n, dtype=dt, device=dev, generator=gen) * 1e3
        else:
            info = torch.iinfo(dt)
            x = torch.randint(info.min, info.max, (n,), dtype=dt, device=dev, generator=gen)
        r = res[name] = {}
        r["torch_sum"] = GIB / timed(lambda: x.sum())
        r["torch_min"] = GIB / timed(lambda: x.min())
        r["torch_max"] = GIB / timed(lambda: x.max())
        r["torch_aminmax"] = GIB / timed(lambda: torch.aminmax(x))
        r["torch_sum_aminmax"] = GIB / timed(lambda: (x.sum(), torch.aminmax(x)))
        if cp is not None:
            y = cp.from_dlpack(x)
            r["cupy_sum"] = GIB / timed(lambda: y.sum())
            r["cupy_min"] = GIB / timed(lambda: y.min())
            r["cupy_max"] = GIB / timed(lambda: y.max())
            r["cupy_sum_min_max"] = GIB / timed(lambda: (y.sum(), y.min(), y.max()))
            del y
        if name in ("int32", "float64"):
            a = x.cpu().numpy()
            pageable = torch.from_numpy(a)
            pinned = pageable.pin_memory()

            def e2e(h):
                t = h.to(dev, non_blocking=True)
                return t.sum(), torch.aminmax(t)

            r["torch_e2e_pageable"] = GIB / wall(lambda: e2e(pageable))
            r["torch_e2e_pinned"] = GIB / wall(lambda: e2e(pinned))
            del a, pageable, pinned
        del x
        torch.cuda.empty_cache()
    with open(args.json, "w") as f:
        json.dump(out, f, indent=1)
    print(json.dumps(out, indent=1))


BENCH_RE = re.compile(r"^(Benchmark\S+?)(?:-\d+)?\s+\d+\s+(.*)$")


def parse_bench(path):
    rows, ceil = {}, {}
    for line in open(path):
        m = re.match(r"ceilings: d2d ([\d.]+) TB/s .*pinned h2d ([\d.]+) GB/s", line)
        if m:
            ceil = {"d2d": float(m.group(1)) * 1e12, "h2d": float(m.group(2)) * 1e9}
        m = BENCH_RE.match(line.strip())
        if m:
            vals = m.group(2).split()
            rows[m.group(1)] = {vals[i + 1]: float(vals[i]) for i in range(0, len(vals) - 1, 2)}
    return rows, ceil


def prefixed_rows(rows, prefix):
    return [f"{name[len(prefix):]} {r['GB/s']:.1f} GB/s" for name, r in rows.items()
            if name.startswith(prefix) and "GB/s" in r]


def table(args):
    rows, ceil = parse_bench(args.go_bench)
    peers = json.load(open(args.peers)) if args.peers and os.path.exists(args.peers) else {"results": {}}
    pr = peers.get("results", {})
    d2d = ceil.get("d2d") or pr.get("d2d")
    h2d = ceil.get("h2d") or pr.get("h2d_pinned")

    def tb(x):
        return f"{x / 1e12:.2f} TB/s ({100 * x / d2d:.0f}%)" if x and d2d else "-"

    print(f"ceilings (Go, same run): D2D copy {d2d / 1e12:.2f} TB/s (read+write), pinned H2D {h2d / 1e9:.1f} GB/s"
          if d2d and h2d else "ceilings: not measured")
    if pr.get("d2d"):
        print(f"ceilings (PyTorch): D2D copy {pr['d2d'] / 1e12:.2f} TB/s, pinned H2D {pr['h2d_pinned'] / 1e9:.1f} GB/s")
    print()
    print("Resident 1 GiB column, fused sum+min+max+count (arrowagg: one launch; % of D2D copy):")
    print("| type | nulls | arrowagg | CuPy sum | CuPy sum+min+max | torch sum | torch sum+aminmax |")
    print("|---|---|---|---|---|---|---|")
    for t in TYPES:
        p = pr.get(t, {})
        for nulls in ("nonulls", "nulls10"):
            g = rows.get(f"BenchmarkResident/{t}/{nulls}", {})
            ours = g.get("TB/s", 0) * 1e12
            peer = [tb(p.get(k)) if nulls == "nonulls" else "" for k in
                    ("cupy_sum", "cupy_sum_min_max", "torch_sum", "torch_sum_aminmax")]
            print(f"| {t} | {nulls} | {tb(ours)} | " + " | ".join(peer) + " |")
    print()
    print("End to end from host memory, 1 GiB column (Update: upload + aggregate; % of pinned H2D):")
    print("| type | nulls | Go memory (staged) | pinned (HostAllocator) | CPU backend (same host) | torch pageable | torch pinned |")
    print("|---|---|---|---|---|---|---|")
    for t in ("int32", "float64"):
        p = pr.get(t, {})
        for nulls in ("nonulls", "nulls10"):
            cells = []
            for mode in ("staged", "pinned", "cpu"):
                g = rows.get(f"BenchmarkEndToEnd/{t}/{nulls}/{mode}", {})
                cells.append(f"{g['GB/s']:.1f} GB/s ({g['%h2d']:.0f}%)" if "GB/s" in g else "-")
            for k in ("torch_e2e_pageable", "torch_e2e_pinned"):
                x = p.get(k) if nulls == "nonulls" else None
                cells.append(f"{x / 1e9:.1f} GB/s ({100 * x / h2d:.0f}%)" if x and h2d else "")
            print(f"| {t} | {nulls} | " + " | ".join(cells) + " |")
    ch = prefixed_rows(rows, "BenchmarkChunks/")
    if ch:
        print()
        print("Staging pipeline, 1 GiB int32 in Go memory, other chunk sizes x streams (default 64 MiB x 3): " + "; ".join(ch))
    hc = prefixed_rows(rows, "BenchmarkHostCopy/")
    if hc:
        print()
        print("Host memcpy of 1 GiB of Go memory (destination/goroutines): " + "; ".join(hc))


def decision(args):
    rows, _ = parse_bench(args.go_bench)
    choice = {0: "cpu", 1: "gpu", 2: "cpu+gpu"}
    print("| data | type | elements | forced CPU (µs) | forced GPU (µs) | auto (µs) | auto chose | auto / faster (min) | (median) | (paired) | choice / faster |")
    print("|---|---|--:|--:|--:|--:|---|--:|--:|--:|--:|")
    worst = worst_choice = worst_paired = 0.0
    for name, r in rows.items():
        m = re.match(r"BenchmarkDecision(Resident|Pinned)?/(\w+)/(2\^\d+)$", name)
        if not m or "auto-min-µs" not in r:
            continue
        where = {"Resident": "device", "Pinned": "pinned"}.get(m.group(1), "host")
        c = choice.get(int(r.get("choice(0cpu,1gpu,2both)", -1)), "?")
        share = r.get("gpu-share", 0)
        if c == "cpu+gpu":
            c += f" ({100 * share:.0f}% GPU)"
        elif where == "device" and 0 < share < 1:
            # A contested resident column: its calls went to both backends.
            c += f" ({100 * share:.0f}% of calls on the GPU)"
        worst = max(worst, r["auto/faster-min"])
        # The forced run of the backend auto chose, over the faster forced
        # run: the cost of the choice itself, free of the noise between two
        # runs of the same code (a split has no forced run: auto's time).
        cpu, gpu = r["cpu-min-µs"], r["gpu-min-µs"]
        chosen = {"cpu": cpu, "gpu": gpu}.get(c, r["auto-min-µs"])
        if where == "device" and 0 < share < 1:
            chosen = share * gpu + (1 - share) * cpu
        regret = chosen / min(cpu, gpu)
        worst_choice = max(worst_choice, regret)
        paired = r.get("auto/faster-paired", float("nan"))
        worst_paired = max(worst_paired, paired)
        print(f"| {where} | {m.group(2)} | {m.group(3)} | {cpu:.1f} | {gpu:.1f} | "
              f"{r['auto-min-µs']:.1f} | {c} | {r['auto/faster-min']:.2f} | {r['auto/faster-median']:.2f} | "
              f"{paired:.2f} | {regret:.2f} |")
    print()
    print(f"worst auto / faster (fastest rounds): {worst:.3f}")
    print(f"worst auto / faster (paired, median over rounds): {worst_paired:.3f}")
    print(f"worst choice / faster (forced runs): {worst_choice:.3f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("measure")
    m.add_argument("--json", required=True)
    t = sub.add_parser("table")
    t.add_argument("--go-bench", required=True)
    t.add_argument("--peers")
    d = sub.add_parser("decision")
    d.add_argument("--go-bench", required=True)
    args = ap.parse_args()
    return {"measure": measure, "table": table, "decision": decision}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
