#!/usr/bin/env python3
"""Which float32 summation order numpy's x @ w has on OpenBLAS: measured.

For one random float32 product x (M x K) @ w (K x K), computed by numpy on
the OpenBLAS kernel and thread count set in the environment
(OPENBLAS_CORETYPE, OPENBLAS_NUM_THREADS), counts the outputs that differ
from each candidate order, all but muladd with one correctly rounded
binary32 fused multiply-add per term:

  sequential      acc = 0; for k in 0..K-1: acc = fma(x[k], w[k][j], acc)
                  (whestbake's --dot-product fma)
  muladd          acc = 0; for k in 0..K-1: acc = acc + float32(x[k]*w[k][j])
                  (whestbake's --dot-product muladd)
  blocked Q/R     the k range cut as OpenBLAS's level-3 driver cuts it:
                  blocks of Q while 2Q or more remain, then the rest in two
                  halves, the first half rounded up to a multiple of R; each
                  block a sequential chain from 0 (of fused multiply-adds,
                  or of muladd's roundings), the blocks' sums added in
                  order, each addition rounded
  lanes16         16 chains, chain l over k = l mod 16, combined pairwise
                  ((c0+c1)+(c2+c3))+... (what the small-matrix kernel does for
                  the last K mod 16 output columns)
  groups8         chains over groups of 8 consecutive k, each group's sum
                  added to the running result (gemv, M = 1)

Usage: OPENBLAS_CORETYPE=SkylakeX OPENBLAS_NUM_THREADS=1 \\
         .pyjudge/bin/python openblas_order.py M K [Q]
Prints the kernel and thread count threadpoolctl reports, then one line per
candidate; docs/NUMPY.md lists what it printed.
"""
import sys

import numpy as np


def fma32(a, b, c):
    """Correctly rounded binary32 a*b + c, elementwise: the float64 product
    is exact, the float64 sum is made round-to-odd from its exact error
    (TwoSum), so the final rounding to binary32 is the only one."""
    p = a.astype(np.float64) * b.astype(np.float64)
    c = c.astype(np.float64)
    s = p + c
    v = s - p
    err = (p - (s - v)) + (c - v)
    bits = s.view(np.int64).copy()
    odd = (err != 0) & ((bits & 1) == 0)
    away = np.signbit(err) == np.signbit(s)
    bits = np.where(odd, np.where(away, bits + 1, bits - 1), bits)
    return bits.view(np.float64).astype(np.float32)


def chain(x, w, k0, k1, step=1):
    acc = np.zeros((x.shape[0], w.shape[1]), np.float32)
    for k in range(k0, k1, step):
        acc = fma32(x[:, k:k + 1], w[k:k + 1, :], acc)
    return acc


def blocks(K, Q, R):
    out, start = [], 0
    while start < K:
        n = K - start
        if n >= 2 * Q:
            n = Q
        elif n > Q:
            n = (n // 2 + R - 1) // R * R
        out.append((start, start + n))
        start += n
    return out


def summed(parts):
    total = parts[0]
    for p in parts[1:]:
        total = (total + p).astype(np.float32)
    return total


def pairwise(parts):
    while len(parts) > 1:
        parts = [(parts[i] + parts[i + 1]).astype(np.float32) for i in range(0, len(parts), 2)]
    return parts[0]


def muladd(x, w, k0, k1):
    acc = np.zeros((x.shape[0], w.shape[1]), np.float32)
    for k in range(k0, k1):
        acc = (acc + x[:, k:k + 1] * w[k:k + 1, :]).astype(np.float32)
    return acc


def blas():
    """The kernel OpenBLAS runs and its thread count, as threadpoolctl reports
    them (whestbench's environment has it)."""
    from threadpoolctl import threadpool_info
    for lib in threadpool_info():
        if lib.get("user_api") == "blas":
            return f"{lib.get('internal_api')} {lib.get('version')}, kernel {lib.get('architecture')}, {lib.get('num_threads')} threads"
    return "no BLAS found"


def main():
    M, K = int(sys.argv[1]), int(sys.argv[2])
    Q = int(sys.argv[3]) if len(sys.argv) > 3 else 0
    rng = np.random.default_rng(2)
    x = rng.standard_normal((M, K), dtype=np.float32)
    w = (rng.standard_normal((K, K)) * np.sqrt(2.0 / K)).astype(np.float32)
    y = x @ w
    # Rows are independent in every order but the kernel's edge cases: the
    # first and the last 32 rows show both.
    rows = np.unique(np.r_[0:min(M, 32), max(0, M - 32):M])
    x, y = x[rows], y[rows]
    print(f"{blas()}; numpy {np.__version__}; M={M} K={K}, {y.size} outputs compared")
    candidates = {"sequential": chain(x, w, 0, K), "muladd": muladd(x, w, 0, K)}
    if Q:
        for R in (16, 1):
            bl = blocks(K, Q, R)
            candidates[f"blocked Q={Q} R={R} {bl}"] = summed([chain(x, w, a, b) for a, b in bl])
            candidates[f"blocked muladd Q={Q} R={R}"] = summed([muladd(x, w, a, b) for a, b in bl])
    candidates["lanes16"] = pairwise([chain(x, w, lane, K, 16) for lane in range(16)])
    candidates["groups8"] = summed([chain(x, w, g, min(K, g + 8)) for g in range(0, K, 8)])
    for name, got in candidates.items():
        d = got != y
        cols = np.nonzero(d.any(axis=0))[0]
        hit = rows[d.any(axis=1)]
        where = f" (rows {hit.min()}..{hit.max()}, columns {cols.min()}..{cols.max()})" if len(cols) else ""
        print(f"  {name}: {int(d.sum())} differ{where}")


if __name__ == "__main__":
    main()
