#!/usr/bin/env python3
"""whestbench peer for the GPU engine benchmarks: whestbench's own create_dataset_torch.

Bakes --n-mlps MLPs of --n-samples samples with whestbench.dataset_torch
.create_dataset_torch (whestbench's torch backend, its defaults: MLPs batched by
min(n, 16), chunks sized from free GPU memory) into a temporary directory, after an
untimed bake of one MLP (CUDA context, cuBLAS handles, the allocator). "seconds" is the
timed call's wall time, generating the weights and writing the dataset included, as a
user waits for it; "sampling_seconds" is the part whestbench records as the sampling's
wall time (the rows' sampling_budget_breakdown, summed). No TF32 or determinism switch
is touched (whestbench sets none).

Takes torch_peer.py's arguments, so that `whestbake bench --torch-peer --torch-script`
runs it, and prints one JSON line, the protocol of numpy_peer.py. flops count 2*W*W*D
per sample.
"""
import argparse
import glob
import json
import os
import sys
import tempfile
import time


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--width", type=int, default=256)
    p.add_argument("--depth", type=int, default=8)
    p.add_argument("--n-samples", type=int, default=1 << 22, help="samples per MLP")
    p.add_argument("--n-mlps", type=int, default=10)
    p.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    p.add_argument("--chunk-size", type=int, default=0,
                   help="rows per chunk (0: whestbench's automatic rule)")
    p.add_argument("--threads", type=int, default=0,
                   help="torch CPU threads (0: torch's default)")
    a = p.parse_args()
    for name in ("width", "depth", "n_samples", "n_mlps"):
        if getattr(a, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be at least 1")
    return a


def sampling_seconds(out):
    """The sampling wall time whestbench recorded in the rows it wrote."""
    import pyarrow.parquet as pq
    total = 0.0
    for f in sorted(glob.glob(os.path.join(out, "data", "*.parquet"))):
        for b in pq.read_table(f, columns=["sampling_budget_breakdown"]).column(0).to_pylist():
            total += float((json.loads(b) if isinstance(b, str) else b)["wall_time_s"])
    return total


def main():
    args = parse_args()
    try:
        import torch
        from whestbench.dataset_torch import create_dataset_torch
    except ImportError as e:
        print(f"whestbench_peer: {sys.executable} cannot import torch and whestbench ({e}); "
              "install whestbench and its dependencies (docs/GPU.md: the wheels the "
              "acceptance run carries)", file=sys.stderr)
        return 2
    if args.device == "cuda" and not torch.cuda.is_available():
        print(f"whestbench_peer: --device cuda but torch {torch.__version__} sees no CUDA GPU",
              file=sys.stderr)
        return 2
    if args.threads:
        torch.set_num_threads(args.threads)
    W, D, N, M = args.width, args.depth, args.n_samples, args.n_mlps
    kwargs = {"width": W, "depth": D, "device": args.device}
    if args.chunk_size:
        kwargs["chunk_size"] = args.chunk_size
    with tempfile.TemporaryDirectory(prefix="whestbench-peer-") as tmp:
        create_dataset_torch(n_mlps=1, n_samples=min(N, 1 << 16), mlp_seeds=[1],
                             output_path=os.path.join(tmp, "warm"), **kwargs)
        out = os.path.join(tmp, "timed")
        if args.device == "cuda":
            torch.cuda.synchronize()
        start = time.perf_counter()
        create_dataset_torch(n_mlps=M, n_samples=N, mlp_seeds=list(range(1, M + 1)),
                             output_path=out, **kwargs)
        seconds = time.perf_counter() - start
        sampling = sampling_seconds(out)
    samples = N * M
    flops = 2.0 * W * W * D * samples
    import whestbench
    print(json.dumps({
        "impl": f"whestbench-torch-{args.device}",
        "device": args.device,
        "device_name": torch.cuda.get_device_name() if args.device == "cuda" else "cpu",
        "torch": torch.__version__,
        "whestbench": getattr(whestbench, "__version__", "unknown"),
        "width": W,
        "depth": D,
        "samples": samples,
        "mlps": M,
        "float32_matmul_precision": torch.get_float32_matmul_precision(),
        "seconds": round(seconds, 6),
        "sampling_seconds": round(sampling, 6),
        "samples_per_s": round(samples / seconds, 1),
        "tflops": round(flops / seconds / 1e12, 4),
        "sampling_tflops": round(flops / sampling / 1e12, 4) if sampling > 0 else None,
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
