#!/usr/bin/env python3
"""The peer of whestbake's benchmarks: whestbench's own bake, timed.

--backend numpy runs whestbench.dataset.create_dataset, the CPU path of
`whest dataset bake` (numpy under flopscope's counting); --backend torch runs
whestbench.dataset_torch.create_dataset_torch on --device, the path of
`whest dataset bake --torch`. Either bakes --n-mlps MLPs of one shape into a
scratch directory, after an untimed bake of --warmup-samples samples that
pays what a process does once (imports, first calls, a CUDA context).

What is timed: whestbench's sampling function as the bake calls it, each
MLP's simulation.sample_layer_statistics (numpy) or each batch's
_simulation_torch.sample_layer_statistics_torch (torch), in wall time and in
this process's CPU time, summed over the bake. That is what whestbake's
engine rows time (inputs, forward pass, sums), and the regression gate
compares CPU time, which whestbench does not record. Not timed: the seeds,
weights and names before it and the rows and parquet file after it. On CUDA
the device is synchronised either side, so its queued work is inside.
whestbench's own per-row wall_time_s (sampling_budget_breakdown), read back
from the bake's parquet file, is printed beside it.

Prints one JSON line: impl, width, depth, samples (over all MLPs), seconds,
cpu_seconds, blas (what the matrix products ran on), and the versions.
A failure is explained in the last line of stderr, exit status 2.
"""
import argparse
import glob
import json
import math
import os
import sys
import tempfile
import time


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--backend", choices=("numpy", "torch"), required=True)
    p.add_argument("--width", type=int, required=True)
    p.add_argument("--depth", type=int, required=True)
    p.add_argument("--n-samples", type=int, required=True, help="samples per MLP")
    p.add_argument("--n-mlps", type=int, default=1)
    p.add_argument("--threads", type=int, default=0,
                   help="CPU threads, set by whestbench's apply_thread_limit (0: as the environment says)")
    p.add_argument("--device", choices=("cpu", "cuda"), default="cpu", help="torch only")
    p.add_argument("--chunk-size", type=int, default=0,
                   help="torch only: rows per chunk (0: whestbench's rule)")
    p.add_argument("--mlps-per-batch", type=int, default=0,
                   help="torch only: MLPs per bmm batch (0: whestbench's rule, min(n-mlps, 16))")
    p.add_argument("--warmup-samples", type=int, default=1024,
                   help="samples per MLP of the untimed first bake (0: none)")
    a = p.parse_args()
    for name in ("width", "depth", "n_samples", "n_mlps"):
        if getattr(a, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be at least 1")
    for name in ("threads", "chunk_size", "mlps_per_batch", "warmup_samples"):
        if getattr(a, name) < 0:
            p.error(f"--{name.replace('_', '-')} must be 0 or more")
    if a.backend == "numpy" and (a.device != "cpu" or a.chunk_size or a.mlps_per_batch):
        p.error("--device, --chunk-size and --mlps-per-batch are create_dataset_torch's (--backend torch)")
    return a


def fail(msg):
    print(f"whestbench_peer: {msg}", file=sys.stderr)
    sys.exit(2)


class Clocks:
    """Wraps whestbench's sampling function and sums its wall and CPU time."""

    def __init__(self, fn, sync):
        self.fn, self.sync = fn, sync
        self.calls, self.seconds, self.cpu_seconds = 0, 0.0, 0.0

    def __call__(self, *args, **kwargs):
        self.sync()
        wall, cpu = time.perf_counter(), time.process_time()
        out = self.fn(*args, **kwargs)
        self.sync()
        self.seconds += time.perf_counter() - wall
        self.cpu_seconds += time.process_time() - cpu
        self.calls += 1
        return out


def numpy_backend():
    """create_dataset with its sampling function timed, and the BLAS numpy's
    products run on (threadpoolctl, which whestbench's doctor reads too)."""
    import whestbench.dataset as wd
    from threadpoolctl import threadpool_info

    # create_dataset calls the name from its own module's globals.
    clocks = Clocks(wd.sample_layer_statistics, lambda: None)
    wd.sample_layer_statistics = clocks

    def blas():
        for lib in threadpool_info():
            if lib.get("user_api") == "blas":
                return {"name": lib.get("internal_api"), "version": lib.get("version"),
                        "core": lib.get("architecture"), "source": "threadpoolctl",
                        "threads": lib.get("num_threads")}
        return None

    def bake(args, n_samples, out):
        wd.create_dataset(n_mlps=args.n_mlps, n_samples=n_samples, width=args.width,
                          depth=args.depth, mlp_seeds=seeds(args.n_mlps), output_path=out)

    return clocks, bake, blas, {"impl": "whestbench create_dataset (numpy)"}


def torch_backend(args):
    """create_dataset_torch with its sampling function timed; torch's BLAS
    is its own (MKL on x86 CPUs, cuBLAS on CUDA), which threadpoolctl does
    not see, so torch says what it is."""
    try:
        import torch
        import whestbench._simulation_torch as st
        from whestbench.dataset_torch import create_dataset_torch
    except ImportError as e:
        fail(f"{sys.executable} cannot import torch ({e}): make pyjudge-torch, "
             "or give an interpreter with whestbench and PyTorch")
    if args.device == "cuda" and not torch.cuda.is_available():
        fail(f"--device cuda, but torch {torch.__version__} sees no CUDA GPU")
    if args.threads:
        torch.set_num_threads(args.threads)

    def sync():
        if args.device == "cuda":
            torch.cuda.synchronize()

    # create_dataset_torch imports the name from the module at each call.
    clocks = Clocks(st.sample_layer_statistics_torch, sync)
    st.sample_layer_statistics_torch = clocks

    def blas():
        if args.device == "cuda":
            return {"name": "cuBLAS", "version": torch.version.cuda,
                    "core": torch.cuda.get_device_name(), "source": "torch.cuda"}
        return {"name": "mkl" if torch.backends.mkl.is_available() else "torch",
                "version": None, "core": torch.backends.cpu.get_cpu_capability(),
                "source": "torch.backends", "threads": torch.get_num_threads()}

    def bake(a, n_samples, out):
        create_dataset_torch(n_mlps=a.n_mlps, n_samples=n_samples, width=a.width,
                             depth=a.depth, mlp_seeds=seeds(a.n_mlps), output_path=out,
                             device=a.device, chunk_size=a.chunk_size or None,
                             mlps_per_batch=a.mlps_per_batch or None)

    extra = {"impl": f"whestbench create_dataset_torch ({args.device})",
             "torch": torch.__version__,
             "float32_matmul_precision": torch.get_float32_matmul_precision()}
    return clocks, bake, blas, extra


def seeds(n):
    """Fixed, distinct whestbench input seeds: every run bakes the same MLPs."""
    return [1_000_003 + i for i in range(n)]


def read_back(out, n_mlps):
    """whestbench's per-row sampling wall time and the statistics' sanity,
    from the parquet file the bake wrote."""
    import pyarrow.parquet as pq

    files = glob.glob(os.path.join(out, "data", "*.parquet"))
    if len(files) != 1:
        fail(f"the bake in {out} wrote {len(files)} parquet files, want 1")
    t = pq.read_table(files[0], columns=["avg_variance", "sampling_budget_breakdown"])
    if t.num_rows != n_mlps:
        fail(f"the bake wrote {t.num_rows} rows, want {n_mlps}")
    # Non-finite statistics mean a broken run: no time is reported for it.
    if not all(math.isfinite(v) for v in t.column("avg_variance").to_pylist()):
        fail("the bake's avg_variance is not finite")
    with open(os.path.join(out, "metadata.json")) as f:
        md = json.load(f)
    walls = [json.loads(b)["wall_time_s"] for b in t.column("sampling_budget_breakdown").to_pylist()]
    return sum(walls), md


def check_timed(clocks, own_wall, n_mlps, per_batch, version):
    """The timed calls are the bake's sampling: one per MLP (numpy) or per
    batch (torch), each inside the span whestbench records as its wall_time_s
    (flopscope's BudgetContext; the batch's perf_counter in dataset_torch)."""
    want = -(-n_mlps // per_batch)
    if clocks.calls != want:
        fail(f"whestbench {version}'s bake called the timed sampling function "
             f"{clocks.calls} times, want {want}: its internals moved")
    if clocks.seconds > own_wall * (1 + 1e-9):
        fail(f"the peer timed {clocks.seconds} s of sampling, but whestbench {version} "
             f"records {own_wall} s around it: they no longer time the same calls")


def main():
    args = parse_args()
    try:
        from whestbench._provenance import whestbench_version
        from whestbench.concurrency import apply_thread_limit
    except ImportError as e:
        fail(f"{sys.executable} cannot import whestbench ({e}): make pyjudge, "
             "or give an interpreter with whestbench")
    if args.threads:
        # What `whest --max-threads` does: the thread variables for libraries
        # not loaded yet (torch), threadpoolctl for numpy's loaded BLAS.
        apply_thread_limit(args.threads)
    if args.backend == "numpy":
        clocks, bake, blas, report = numpy_backend()
    else:
        clocks, bake, blas, report = torch_backend(args)

    with tempfile.TemporaryDirectory(prefix="whestbench-peer-") as tmp:
        if args.warmup_samples:
            bake(args, min(args.n_samples, args.warmup_samples), os.path.join(tmp, "warmup"))
        clocks.calls, clocks.seconds, clocks.cpu_seconds = 0, 0.0, 0.0
        start = time.perf_counter()
        bake(args, args.n_samples, os.path.join(tmp, "bake"))
        bake_seconds = time.perf_counter() - start
        own_wall, md = read_back(os.path.join(tmp, "bake"), args.n_mlps)
    check_timed(clocks, own_wall, args.n_mlps, md.get("mlps_per_batch", 1), whestbench_version())

    import numpy
    samples = args.n_samples * args.n_mlps
    report.update({
        "backend": args.backend,
        "device": args.device,
        "width": args.width,
        "depth": args.depth,
        "mlps": args.n_mlps,
        "samples": samples,
        "seconds": round(clocks.seconds, 6),
        "cpu_seconds": round(clocks.cpu_seconds, 6),
        "whestbench_wall_time_s": round(own_wall, 6),
        "bake_seconds": round(bake_seconds, 6),
        "sampling_calls": clocks.calls,
        "samples_per_s": round(samples / clocks.seconds, 1),
        "gflops": round(2.0 * args.width**2 * args.depth * samples / clocks.seconds / 1e9, 3),
        "blas": blas(),
        "whestbench": whestbench_version(),
        "flopscope": md.get("flopscope_version"),
        "numpy": numpy.__version__,
    })
    for key in ("chunk_size", "mlps_per_batch"):
        if key in md:
            report[key] = md[key]
    print(json.dumps(report))


if __name__ == "__main__":
    main()
