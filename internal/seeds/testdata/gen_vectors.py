#!/usr/bin/python3
"""Generate seeds/testdata/vectors.json: ground truth from numpy and the C library.

Run once with Debian's python3 + numpy on an x86-64 Linux host whose CPU has
FMA and AVX2 (glibc then picks its FMA build of log1p, the one numpy calls):

    /usr/bin/python3 seeds/testdata/gen_vectors.py > seeds/testdata/vectors.json

Generated with numpy 1.24.2, glibc 2.36 (Debian 12). Everything here comes
from numpy/libm itself; nothing is computed by the Go code under test.
Tests read the JSON; they never run python.
"""

import ctypes
import decimal
import hashlib
import json
import math
import random
import sys

import numpy as np
from numpy.random import PCG64, Generator, SeedSequence

NOR_R = 3.6541528853610087963519472518  # numpy's ziggurat_nor_r: |x| > r only from the tail
MASK64 = (1 << 64) - 1


def h64(x):
    return format(int(x), "016x")


def h32(x):
    return format(int(x), "08x")


def f64hex(v):
    return h64(np.float64(v).view(np.uint64))


def f32hex(v):
    return h32(np.float32(v).view(np.uint32))


def sha(arr, dtype):
    return hashlib.sha256(np.ascontiguousarray(arr, dtype=np.dtype(dtype).newbyteorder("<")).tobytes()).hexdigest()


def require_fma():
    flags = open("/proc/cpuinfo").read()
    if " fma " not in flags or " avx2 " not in flags:
        sys.exit("this host lacks FMA/AVX2: glibc would use its non-FMA log1p and the vectors would not match numpy on modern CPUs")


def generate_state_vectors():
    entropies = [0, 1, 2**32 - 1, 2**32, 2**63 - 1, 2**64 - 1, 6717184059027789272]
    keys = [(), (0,), (1,), (2,), (5, 7), (0, 1, 2, 3, 4), (4294967295,)]
    out = []
    for e in entropies:
        for k in keys:
            ss = SeedSequence(e, spawn_key=k)
            out.append({
                "entropy": e,
                "spawn_key": list(k),
                "state32": [int(v) for v in ss.generate_state(9)],
                "state64": [int(v) for v in ss.generate_state(5, np.uint64)],
            })
    return out


def rng_vectors():
    """First draws of default_rng(SeedSequence(s)) through numpy's own entry points."""
    out = []
    for s in [0, 1, 42, 6717184059027789272]:
        bg = PCG64(SeedSequence(s))
        st = bg.state
        seeded = {"state": st["state"]["state"], "inc": st["state"]["inc"]}
        u64 = [int(v) for v in bg.random_raw(20)]

        bg = PCG64(SeedSequence(s))
        gen = Generator(bg)
        c = bg.ctypes
        ops = []
        # A pattern that leaves and consumes the 32-bit buffer in every way.
        pattern = ["u32", "u64", "u32", "u32", "u32", "f64", "u32", "f32", "f32", "u64",
                   "f32", "u32", "f64", "u32", "u32", "u32", "f32", "u64", "u32", "f64"]
        for op in pattern:
            if op == "u32":
                ops.append([op, h32(c.next_uint32(c.state))])
            elif op == "u64":
                ops.append([op, h64(c.next_uint64(c.state))])
            elif op == "f64":
                ops.append([op, f64hex(gen.random())])
            else:
                ops.append([op, f32hex(gen.random(dtype=np.float32))])
        st = bg.state
        after = {"state": st["state"]["state"], "inc": st["state"]["inc"],
                 "has_uint32": int(st["has_uint32"]), "uinteger": int(st["uinteger"])}

        gen = Generator(PCG64(SeedSequence(s)))
        doubles = [f64hex(gen.random()) for _ in range(20)]
        gen = Generator(PCG64(SeedSequence(s)))
        floats = [f32hex(v) for v in gen.random(20, dtype=np.float32)]
        out.append({"seed": s, "seeded": seeded, "uint64": [h64(v) for v in u64],
                    "ops": ops, "after_ops": after, "doubles": doubles, "floats": floats})
    return out


def normal_vectors(dtype, n, want):
    """n standard normals for the first `want` seeds (scanning up from 0) whose
    stream reaches the ziggurat tail (|x| > r) at least twice, so the tail
    loop and its log1p/log1pf calls are exercised."""
    out = []
    seed = 0
    while len(out) < want:
        x = Generator(PCG64(SeedSequence(seed))).standard_normal(n, dtype=dtype)
        tail = [int(i) for i in np.nonzero(np.abs(x.astype(np.float64)) > NOR_R)[0]]
        if len(tail) >= 2:
            hexf = f32hex if dtype == np.float32 else f64hex
            out.append({
                "seed": seed,
                "n": n,
                "sha256": sha(x, dtype),
                "first": [hexf(v) for v in x[:50]],
                "tail_index": tail,
                "tail_value": [hexf(x[i]) for i in tail],
            })
        seed += 1
    return out


def odd_offset_f32():
    """float32 normals after one stray next_uint32, so the fill starts on a buffered half."""
    bg = PCG64(SeedSequence(7))
    bg.ctypes.next_uint32(bg.ctypes.state)
    x = Generator(bg).standard_normal(5001, dtype=np.float32)
    return {"seed": 7, "n": 5001, "sha256": sha(x, np.float32), "first": [f32hex(v) for v in x[:20]]}


def weights(width, depth, weight_ss):
    """whestbench sample_mlp: float64 normals * sqrt(2/width), rounded to float32."""
    rng = Generator(PCG64(weight_ss))
    scale = float(np.sqrt(2.0 / width))
    return np.concatenate([(rng.standard_normal((width, width)) * scale).astype(np.float32).ravel()
                           for _ in range(depth)])


def weight_vectors():
    out = []
    for s in [0, 1001, 42, 6717184059027789272]:
        ws = SeedSequence(s).spawn(3)[0]
        for w, d in [(4, 2), (8, 2), (256, 1)]:
            x = weights(w, d, ws)
            out.append({"input_seed": s, "width": w, "depth": d, "sha256": sha(x, np.float32),
                        "first": [f32hex(v) for v in x[:8]]})
    return out


def input_seed_vectors():
    out = []
    for s in [0, 12345]:
        bg = PCG64(SeedSequence(s))
        out.append({"seed": s, "seeds": [int(v) >> 1 for v in bg.random_raw(10)]})
    return out


def splitmix64(i):
    z = ((i + 1) * 0x9E3779B97F4A7C15) & MASK64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
    return z ^ (z >> 31)


def libm_vectors():
    libm = ctypes.CDLL("libm.so.6")
    log1p = libm.log1p
    log1p.restype, log1p.argtypes = ctypes.c_double, [ctypes.c_double]
    log1pf = libm.log1pf
    log1pf.restype, log1pf.argtypes = ctypes.c_float, [ctypes.c_float]

    # log1pf on every argument the float tail can pass: -k*2^-24, k < 2^24.
    buf = np.empty(1 << 24, dtype=np.float32)
    for k in range(1 << 24):
        buf[k] = log1pf(-(k * (1.0 / 16777216.0)))  # -0.0 at k=0, as the tail passes
    log1pf_sha = sha(buf, np.float32)

    # log1p on 2^20 arguments -u, u = ((splitmix64(i) >> 11) >> (i % 48)) * 2^-53.
    n = 1 << 20
    buf = np.empty(n, dtype=np.float64)
    for i in range(n):
        u = ((splitmix64(i) >> 11) >> (i % 48)) * 2.0**-53
        buf[i] = log1p(-u)
    log1p_sha = sha(buf, np.float64)

    # Hand-picked edges of glibc's argument reduction.
    us = [0.0, 2.0**-53, 2.0**-31, 2.0**-29, 2.0**-29 + 2.0**-53, 0.5, 0.75, 1 - 2.0**-53, 1 - 2.0**-52]
    us += [1 - 2.0**-j for j in range(1, 53)]
    us += [1 - 2.0**-j + 2.0**-(j + 20) for j in range(1, 34)]
    for hi in [0x3FD2BEC2, 0x3FD2BEC3, 0x3FD2BEC4]:
        for lo in [0, 0xFFFFF800]:
            us.append(float(np.uint64(hi << 32 | lo).view(np.float64)))
    edges = [[f64hex(u), f64hex(log1p(-u))] for u in us]

    # Correctly rounded exp on wedge-like arguments, from decimal arithmetic.
    decimal.getcontext().prec = 60
    r = random.Random(20240601)
    ts = [0.0, -1e-300, -6.68, -0.5 * NOR_R * NOR_R]
    ts += [-0.5 * x * x for x in (r.uniform(0, NOR_R) for _ in range(2000))]
    exp_cr = [[f64hex(t), f64hex(float(decimal.Decimal(t).exp()))] for t in ts]
    return {"log1pf_all_sha256": log1pf_sha, "log1p_splitmix_n": n, "log1p_splitmix_sha256": log1p_sha,
            "log1p_edges": edges, "exp_correctly_rounded": exp_cr}


def main():
    require_fma()
    doc = {
        "generator": "seeds/testdata/gen_vectors.py",
        "numpy": np.__version__,
        "generate_state": generate_state_vectors(),
        "rng": rng_vectors(),
        "normal_f64": normal_vectors(np.float64, 10000, 4),
        "normal_f32": normal_vectors(np.float32, 100000, 3),
        "normal_f32_odd_offset": odd_offset_f32(),
        "weights": weight_vectors(),
        "input_seeds": input_seed_vectors(),
        "libm": libm_vectors(),
    }
    json.dump(doc, sys.stdout, separators=(",", ":"))
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
