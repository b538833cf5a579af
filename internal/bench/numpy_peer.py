#!/usr/bin/env python3
"""numpy peer for the CPU engine benchmarks: whestbench's reference CPU loop.

Per MLP: He-initialised float32 weights; per chunk of
max(1024, min(16384, 2**20 // W)) rows: float32 standard normal inputs, for each
layer x = max(x @ W_l, 0) with per-layer float64 column sums, and the float64
column sum of squares after the last layer. The matmul runs in the host BLAS
(OpenBLAS on Debian); --threads sets its thread count.

Prints one JSON line. flops count 2*W*W*D per sample, the count the Go kernel
benchmarks use.

With --mlp-seed the MLP's weights and inputs come from whestbench's seed
protocol 3.0 streams and --stats writes its statistics (all_layer_means as
float32 bits, avg_variance as float64 bits) finalised as whestbench does: the
reference numbers that numpy_evidence compares with whestbake's bakes.

cpu_seconds is the process CPU time of the timed loop, which the regression
gate (make bench-check) compares: on a shared machine it varies far less than
the wall time in seconds.
"""
import argparse
import ctypes
import importlib.util
import json
import os
import sys
import tempfile
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
    p.add_argument("--mlp-seed", type=int, action="append",
                   help="whestbench input seed of an MLP (repeat for several; replaces --n-mlps and --seed)")
    p.add_argument("--stats", help="write each MLP's statistics as JSON here (needs --mlp-seed)")
    a = p.parse_args()
    if a.stats and not a.mlp_seed:
        p.error("--stats needs --mlp-seed")
    if a.mlp_seed:
        a.n_mlps = len(a.mlp_seed)
    for name in ("width", "depth", "n_samples", "n_mlps"):
        if getattr(a, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be at least 1")
    if a.threads < 0:
        p.error("--threads must be 0 (leave as set) or a positive thread count")
    return a


def openblas_libs():
    """The loaded shared libraries that look like a BLAS, by path."""
    try:
        with open("/proc/self/maps") as maps:
            return sorted({line.split()[-1] for line in maps if "blas" in line and ".so" in line})
    except OSError:
        return []


def openblas_call(name, restype=ctypes.c_int):
    """Calls the first loaded library's OpenBLAS function name (no arguments)."""
    for path in openblas_libs():
        try:
            fn = getattr(ctypes.CDLL(path), name, None)
        except OSError:
            continue
        if fn is not None:
            fn.restype = restype
            return fn()
    return None


def blas_threads():
    """The thread count OpenBLAS actually uses, read from the loaded library."""
    return openblas_call("openblas_get_num_threads")


def import_numpy():
    """Imports numpy and finds which OpenBLAS core (kernel family) and version
    it runs, so that a ratio against this peer is read with the peer's
    kernels in mind: the same OpenBLAS build is 4x slower per core where it
    picks a slower core. In order of preference: threadpoolctl's report;
    else the "Core:" line OpenBLAS prints on stderr as it loads with
    OPENBLAS_VERBOSE=2 (captured here around the import); else
    openblas_get_corename. The version comes from threadpoolctl, else from
    openblas_get_config ("OpenBLAS 0.3.21 DYNAMIC_ARCH ... Cooperlake ...")."""
    have_tpc = importlib.util.find_spec("threadpoolctl") is not None
    verbose = None
    if have_tpc:
        import numpy as np
    else:
        os.environ["OPENBLAS_VERBOSE"] = "2"
        sys.stderr.flush()
        saved = os.dup(2)
        with tempfile.TemporaryFile() as err:
            os.dup2(err.fileno(), 2)
            try:
                import numpy as np
            finally:
                os.dup2(saved, 2)
                os.close(saved)
            err.seek(0)
            verbose = err.read().decode(errors="replace")
        sys.stderr.write("".join(l for l in verbose.splitlines(True) if not l.startswith("Core: ")))
    blas = {"name": None, "version": None, "core": None, "source": None}
    if have_tpc:
        from threadpoolctl import threadpool_info
        for lib in threadpool_info():
            if lib.get("user_api") == "blas":
                blas.update(name=lib.get("internal_api"), version=lib.get("version"),
                            core=lib.get("architecture"), source="threadpoolctl")
                break
    if blas["core"] is None and verbose:
        core = [l[len("Core: "):].strip() for l in verbose.splitlines() if l.startswith("Core: ")]
        if core:
            blas.update(name="openblas", core=core[0], source="OPENBLAS_VERBOSE=2")
    if blas["core"] is None:
        core = openblas_call("openblas_get_corename", ctypes.c_char_p)
        if core:
            blas.update(name="openblas", core=core.decode(), source="openblas_get_corename")
    if blas["version"] is None:
        config = openblas_call("openblas_get_config", ctypes.c_char_p)
        if config and config.decode().startswith("OpenBLAS "):
            blas["version"] = config.decode().split()[1]
    return np, blas


def streams(np, args, m, W, D):
    """Weights and the sample generator of MLP m: whestbench's protocol 3.0
    (SeedSequence(s).spawn(3), He weights from float64 normals) with
    --mlp-seed, else the benchmark's own seed."""
    if args.mlp_seed:
        weight_ss, sample_ss, _ = np.random.SeedSequence(args.mlp_seed[m]).spawn(3)
        wrng, rng = np.random.default_rng(weight_ss), np.random.default_rng(sample_ss)
    else:
        wrng = rng = np.random.default_rng([args.seed, m])
    weights = [(wrng.standard_normal((W, W)) * np.sqrt(2.0 / W)).astype(np.float32) for _ in range(D)]
    return weights, rng


def main():
    args = parse_args()
    if args.threads:
        # BLAS reads these when numpy loads it, so they must be set before the import.
        for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            os.environ[var] = str(args.threads)
    np, blas = import_numpy()

    W, D, N = args.width, args.depth, args.n_samples
    chunk = max(1024, min(16384, 2**20 // W))
    start, cpu_start = time.perf_counter(), time.process_time()
    stats = []
    for m in range(args.n_mlps):
        weights, rng = streams(np, args, m, W, D)
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
        if args.stats:
            # whestbench's finalisation: float32 means of float64 sums, the
            # last layer's float32 means squared in float64, numpy's mean.
            means = (sums / N).astype(np.float32)
            final = means[-1].astype(np.float64)
            avg_variance = np.mean(sum_sq / N - final * final)
            stats.append({
                "mlp_seed": args.mlp_seed[m],
                "all_layer_means": [f"{b:08x}" for b in means.reshape(-1).view(np.uint32).tolist()],
                "avg_variance": f"{np.float64(avg_variance).view(np.uint64):016x}",
            })
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
        "blas": blas,
        "numpy": np.__version__,
    }))
    if args.stats:
        with open(args.stats, "w") as f:
            json.dump(stats, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
