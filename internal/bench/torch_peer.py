#!/usr/bin/env python3
"""torch peer for the GPU engine benchmarks: whestbench's torch sampling loop.

A replica of whestbench's eager torch backend (src/whestbench/dataset_torch.py),
written for timing: MLPs run in batches of --mlps-per-batch with float32 He-init
weights on the device; per chunk, every MLP of the batch draws its float32 normal
inputs from its own torch.Generator into a preallocated (B, chunk, W) buffer; per
layer x = bmm(x, W_l).clamp_min_(0) with float64 column sums; after the last layer
the float64 column sum of squares; per batch the means and average variance are
finalised and copied to the host, as the reference does before writing rows.
No determinism or TF32 switch is touched (the reference sets none); the JSON line
records torch's float32 matmul precision ("highest": no TF32).

Prints one JSON line, the protocol of numpy_peer.py. flops count 2*W*W*D per
sample; "seconds" is wall time between two device synchronisations.
"""
import argparse
import json
import math
import sys
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
    p.add_argument("--mlps-per-batch", type=int, default=0,
                   help="MLPs per bmm batch (0: whestbench's default, min(n-mlps, 16))")
    p.add_argument("--warmup", type=int, default=3,
                   help="untimed chunks first (CUDA context, cuBLAS handles, allocator)")
    p.add_argument("--threads", type=int, default=0,
                   help="torch CPU threads (0: torch's default)")
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args()
    for name in ("width", "depth", "n_samples", "n_mlps"):
        if getattr(a, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be at least 1")
    for name in ("chunk_size", "mlps_per_batch", "warmup", "threads"):
        if getattr(a, name) < 0:
            p.error(f"--{name.replace('_', '-')} must be 0 or more")
    return a


def auto_chunk_size(torch, device, batch, width):
    """whestbench's _auto_chunk_size: a quarter of free memory (at most 2 GiB) for the buffer."""
    if device.type != "cuda":
        return 65536
    free = torch.cuda.mem_get_info(device)[0]
    target = min(2 << 30, free // 4)
    return max(65536, min(1 << 20, target // (batch * width * 4)))


def batch_statistics(torch, weights, gens, n_samples, buf):
    """Means and average variance of one batch: weights (D, B, W, W), one generator per MLP."""
    depth, batch, width = weights.shape[0], weights.shape[1], weights.shape[2]
    chunk = buf.shape[1]
    layer_sums = torch.zeros((batch, depth, width), dtype=torch.float64, device=buf.device)
    sum_sq = torch.zeros((batch, width), dtype=torch.float64, device=buf.device)
    for c0 in range(0, n_samples, chunk):
        x = buf[:batch, : min(chunk, n_samples - c0)]
        for b in range(batch):
            torch.randn(x.shape[1:], generator=gens[b], out=x[b])
        for layer in range(depth):
            x = torch.bmm(x, weights[layer]).clamp_min_(0)
            layer_sums[:, layer] += x.to(torch.float64).sum(dim=1)
        sum_sq += (x.to(torch.float64) ** 2).sum(dim=1)
    means = (layer_sums / n_samples).to(torch.float32)
    final = means[:, -1].to(torch.float64)
    avg_var = (sum_sq / n_samples - final**2).mean(dim=1)
    return means.cpu(), avg_var.cpu()


def main():
    args = parse_args()
    try:
        import torch
    except ImportError as e:
        print(f"torch_peer: PyTorch is not importable by {sys.executable} ({e}); "
              "install it (pip install torch) or run whestbake bench without --torch-peer",
              file=sys.stderr)
        return 2
    if args.device == "cuda" and not torch.cuda.is_available():
        print(f"torch_peer: --device cuda but torch {torch.__version__} sees no CUDA GPU; "
              "use --torch-device cpu or a CUDA build of torch", file=sys.stderr)
        return 2
    if args.threads:
        torch.set_num_threads(args.threads)

    device = torch.device(args.device)
    W, D, N, M = args.width, args.depth, args.n_samples, args.n_mlps
    per_batch = args.mlps_per_batch or min(M, 16)
    chunk = args.chunk_size or auto_chunk_size(torch, device, per_batch, W)

    def sync():
        if device.type == "cuda":
            torch.cuda.synchronize(device)

    # Layer-major (D, M, W, W): a batch's layer l is one contiguous (B, W, W) slice for bmm.
    wgen = torch.Generator(device=device).manual_seed(args.seed)
    weights = torch.randn((D, M, W, W), generator=wgen, device=device, dtype=torch.float32)
    weights *= math.sqrt(2.0 / W)
    buf = torch.empty((per_batch, min(chunk, N), W), dtype=torch.float32, device=device)

    def generators(first, count, stream):
        return [torch.Generator(device=device).manual_seed((args.seed + stream) * 1_000_003 + m)
                for m in range(first, first + count)]

    if args.warmup:
        batch = min(per_batch, M)
        batch_statistics(torch, weights[:, :batch], generators(0, batch, 1),
                         min(N, args.warmup * buf.shape[1]), buf)
    sync()

    events = None
    if device.type == "cuda":
        events = (torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
    start = time.perf_counter()
    if events:
        events[0].record()
    variances = []
    for b0 in range(0, M, per_batch):
        batch = min(per_batch, M - b0)
        _, avg_var = batch_statistics(torch, weights[:, b0:b0 + batch], generators(b0, batch, 0), N, buf)
        variances.append(avg_var)
    if events:
        events[1].record()
    sync()
    seconds = time.perf_counter() - start

    # Non-finite statistics mean a broken run; fail rather than report a time.
    if not all(torch.isfinite(v).all() for v in variances):
        print("torch_peer: non-finite statistics", file=sys.stderr)
        return 1
    samples = N * M
    flops = 2.0 * W * W * D * samples
    report = {
        "impl": f"torch-{device.type}",
        "device": device.type,
        "device_name": torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu",
        "torch": torch.__version__,
        "width": W,
        "depth": D,
        "samples": samples,
        "mlps": M,
        "mlps_per_batch": per_batch,
        "chunk_size": chunk,
        "float32_matmul_precision": torch.get_float32_matmul_precision(),
        "seconds": round(seconds, 6),
        "samples_per_s": round(samples / seconds, 1),
        "gflops": round(flops / seconds / 1e9, 3),
        "tflops": round(flops / seconds / 1e12, 4),
    }
    if events:
        report["gpu_seconds"] = round(events[0].elapsed_time(events[1]) / 1e3, 6)
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
