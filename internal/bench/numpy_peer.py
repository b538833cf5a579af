#!/usr/bin/env python3
"""numpy peer for the CPU engine benchmarks: whestbench's reference CPU loop.

Per MLP: He-initialised float32 weights; per chunk of
max(1024, min(16384, 2**20 // W)) rows: float32 standard normal inputs, for each
layer x = max(x @ W_l, 0) with per-layer float64 column sums, and the float64
column sum of squares after the last layer. The matmul runs in the host BLAS
(OpenBLAS on Debian); --threads sets its thread count.

Prints one JSON line. flops count 2*W*W*D per sample, the count the Go kernel
benchmarks use. cpu_seconds is the process CPU time of the timed loop, which
the regression gate (make bench-check) compares: on a shared machine it varies
far less than the wall time in seconds.
"""
import argparse
import ctypes
import json
import os
import sys
import time


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--width", type=int, default=256)
    p.add_argument("--depth", type=int, default=8)
    p.add_argument("--n-samples", type=int, default=200_000, help="samples per MLP")
    p.add_argument("--n-mlps", type=int, default=1)
    p.add_argument("--threads", type=int, default=0,
                   help="BLAS threads (0: leave OPENBLAS_NUM_THREADS/OMP_NUM_THREADS as set)")
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args()
    for name in ("width", "depth", "n_samples", "n_mlps"):
        if getattr(a, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be at least 1")
    if a.threads < 0:
        p.error("--threads must be 0 (leave as set) or a positive thread count")
    return a


def blas_threads():
    """The thread count OpenBLAS actually uses, read from the loaded library."""
    try:
        with open("/proc/self/maps") as maps:
            libs = {line.split()[-1] for line in maps if "blas" in line and ".so" in line}
        for path in sorted(libs):
            fn = getattr(ctypes.CDLL(path), "openblas_get_num_threads", None)
            if fn is not None:
                return fn()
    except OSError:
        pass
    return None


def main():
    args = parse_args()
    if args.threads:
        # BLAS reads these when numpy loads it, so they must be set before the import.
        for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            os.environ[var] = str(args.threads)
    import numpy as np

    W, D, N = args.width, args.depth, args.n_samples
    chunk = max(1024, min(16384, 2**20 // W))
    start, cpu_start = time.perf_counter(), time.process_time()
    for m in range(args.n_mlps):
        rng = np.random.default_rng([args.seed, m])
        weights = [(rng.standard_normal((W, W)) * np.sqrt(2.0 / W)).astype(np.float32) for _ in range(D)]
        sums = np.zeros((D, W), dtype=np.float64)
        sum_sq = np.zeros(W, dtype=np.float64)
        for c0 in range(0, N, chunk):
            x = rng.standard_normal((min(chunk, N - c0), W), dtype=np.float32)
            for layer, w in enumerate(weights):
                x = np.maximum(x @ w, 0)
                sums[layer] += x.astype(np.float64).sum(0)
            sum_sq += (x.astype(np.float64) ** 2).sum(0)
        # Non-finite statistics mean a broken run; fail rather than report a time.
        if not np.isfinite(sum_sq).all() or not np.isfinite(sums).all():
            print("numpy_peer: non-finite statistics", file=sys.stderr)
            return 1
    seconds = time.perf_counter() - start
    cpu_seconds = time.process_time() - cpu_start
    samples = N * args.n_mlps
    print(json.dumps({
        "impl": "numpy-openblas",
        "width": W,
        "depth": D,
        "samples": samples,
        "seconds": round(seconds, 4),
        "cpu_seconds": round(cpu_seconds, 4),
        "samples_per_s": round(samples / seconds, 1),
        "gflops": round(2.0 * W * W * D * samples / seconds / 1e9, 3),
        "threads": blas_threads(),
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
