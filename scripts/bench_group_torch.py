#!/usr/bin/env python3
"""GPU grouped aggregation with PyTorch and CuPy, on the shapes of the CUDA
backend's BenchmarkGroupResident (backend/cuda/group_test.go), for
comparison:

  bench_group_torch.py [--rows N] [--groups 10,1000,1000000]
                       [--values int64,int32,float64] [--repeat R]

Per number of groups and value type: N int64 keys uniform in [0, groups) and
N values (int64 uniform in [-2^62, 2^62), int32 uniform over its range,
float64 normal), both already
in device memory, no nulls. Per group: count (torch.bincount / cupy.bincount),
sum (torch index_add_, torch scatter_reduce "sum", cupyx.scatter_add), min and
max (torch scatter_reduce "amin"/"amax", cupyx.scatter_min/scatter_max), each
timed alone, then all four one after another (what arrowagg's one launch
answers). Their int32 sums are int32 (they wrap; arrowagg's are exact). Times are CUDA-event medians of R runs after a warm-up; GB/s is the
bytes of input (keys, plus values where the operation reads them) counted
once, per second, the measure BenchmarkGroupResident reports (b.SetBytes of
the keys and values). Torch's float sums use atomics: their bits may differ
run to run; arrowagg's do not.

Needs a CUDA GPU and torch; CuPy is optional (skipped when missing).
"""

import argparse
import statistics
import sys


def timed(fn, repeat, sync, event):
    """Median seconds of fn over repeat runs after one warm-up."""
    fn()
    sync()
    times = []
    for _ in range(repeat):
        start, end = event(), event()
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / 1e3)
    return statistics.median(times)


def report(lib, op, groups, vtype, seconds, nbytes):
    print(f"{lib:6} {op:22} groups={groups:<8} values={vtype:8} {seconds * 1e3:9.3f} ms  {nbytes / seconds / 1e9:8.1f} GB/s",
          flush=True)


def bench_torch(torch, n, groups, vtype, repeat):
    dev = torch.device("cuda")
    gen = torch.Generator(device=dev).manual_seed(groups)
    keys = torch.randint(0, groups, (n,), dtype=torch.int64, device=dev, generator=gen)
    if vtype == "int64":
        vals = torch.randint(-(2**62), 2**62, (n,), dtype=torch.int64, device=dev, generator=gen)
    elif vtype == "int32":
        vals = torch.randint(-(2**31), 2**31, (n,), dtype=torch.int32, device=dev, generator=gen)
    else:
        vals = torch.randn((n,), dtype=torch.float64, device=dev, generator=gen)
    kb, vb = keys.numel() * 8, vals.numel() * vals.element_size()
    sync, event = torch.cuda.synchronize, lambda: torch.cuda.Event(enable_timing=True)

    def count():
        return torch.bincount(keys, minlength=groups)

    def index_add():
        return torch.zeros(groups, dtype=vals.dtype, device=dev).index_add_(0, keys, vals)

    def reduce(how):
        return lambda: torch.zeros(groups, dtype=vals.dtype, device=dev).scatter_reduce_(
            0, keys, vals, reduce=how, include_self=False)

    def all_four():
        count()
        reduce("sum")()
        reduce("amin")()
        reduce("amax")()

    report("torch", "count (bincount)", groups, vtype, timed(count, repeat, sync, event), kb)
    report("torch", "sum (index_add_)", groups, vtype, timed(index_add, repeat, sync, event), kb + vb)
    for how in ("sum", "amin", "amax"):
        report("torch", f"{how} (scatter_reduce)", groups, vtype, timed(reduce(how), repeat, sync, event), kb + vb)
    report("torch", "count+sum+min+max", groups, vtype, timed(all_four, repeat, sync, event), kb + vb)
    del keys, vals
    torch.cuda.empty_cache()


def bench_cupy(cp, cpx, n, groups, vtype, repeat):
    rs = cp.random.RandomState(groups)
    keys = rs.randint(0, groups, size=n, dtype=cp.int64)
    if vtype == "int64":
        vals = rs.randint(-(2**62), 2**62, size=n, dtype=cp.int64)
    elif vtype == "int32":
        vals = rs.randint(-(2**31), 2**31, size=n, dtype=cp.int32)
    else:
        vals = rs.standard_normal(n, dtype=cp.float64)
    kb, vb = keys.nbytes, vals.nbytes
    sync = cp.cuda.Device().synchronize
    event = cp.cuda.Event

    class Ev:  # cupy's events with torch's method names
        def __init__(self):
            self.e = event()

        def record(self):
            self.e.record()

        def synchronize(self):
            self.e.synchronize()

        def elapsed_time(self, end):
            return cp.cuda.get_elapsed_time(self.e, end.e)

    info = cp.finfo(cp.float64) if vtype == "float64" else cp.iinfo(vals.dtype)

    def count():
        return cp.bincount(keys, minlength=groups)

    def add():
        out = cp.zeros(groups, dtype=vals.dtype)
        cpx.scatter_add(out, keys, vals)
        return out

    def smin():
        out = cp.full(groups, info.max, dtype=vals.dtype)
        cpx.scatter_min(out, keys, vals)
        return out

    def smax():
        out = cp.full(groups, info.min, dtype=vals.dtype)
        cpx.scatter_max(out, keys, vals)
        return out

    def all_four():
        count()
        add()
        smin()
        smax()

    report("cupy", "count (bincount)", groups, vtype, timed(count, repeat, sync, Ev), kb)
    for name, fn in (("sum (scatter_add)", add), ("min (scatter_min)", smin), ("max (scatter_max)", smax)):
        try:
            report("cupy", name, groups, vtype, timed(fn, repeat, sync, Ev), kb + vb)
        except (TypeError, NotImplementedError) as e:  # a dtype the scatter does not take
            print(f"cupy   {name:22} groups={groups:<8} values={vtype:8} unsupported: {e}", flush=True)
            return
    report("cupy", "count+sum+min+max", groups, vtype, timed(all_four, repeat, sync, Ev), kb + vb)
    del keys, vals
    cp.get_default_memory_pool().free_all_blocks()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=100_000_000)
    ap.add_argument("--groups", default="10,1000,1000000")
    ap.add_argument("--values", default="int64,float64")
    ap.add_argument("--repeat", type=int, default=10)
    args = ap.parse_args()
    groups = [int(g) for g in args.groups.split(",")]
    vtypes = args.values.split(",")
    for v in vtypes:
        if v not in ("int64", "int32", "float64"):
            sys.exit(f"bench_group_torch: values of {v}: int64, int32 or float64")

    import torch

    if not torch.cuda.is_available():
        sys.exit("bench_group_torch: no CUDA device for torch")
    print(f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}, {args.rows} rows", flush=True)
    try:
        import cupy as cp
        import cupyx as cpx
    except ImportError:
        cp = cpx = None
        print("cupy: not installed, skipped", flush=True)
    for g in groups:
        for v in vtypes:
            bench_torch(torch, args.rows, g, v, args.repeat)
            if cp is not None:
                bench_cupy(cp, cpx, args.rows, g, v, args.repeat)


if __name__ == "__main__":
    main()
