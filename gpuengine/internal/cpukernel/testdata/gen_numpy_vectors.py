#!/usr/bin/env python3
"""Writes numpy_vectors.json: independent expected values for the kernel tests.

numpy's float32 ufuncs round every multiply and add separately (IEEE binary32,
round to nearest even, no FMA contraction), so a per-i loop over whole arrays is
the MulAdd contract computed by a second implementation. The column sums are the
exact expressions whestbench uses: x.astype(float64).sum(0) and the same on the
squares. Regenerate with: /usr/bin/python3 gen_numpy_vectors.py > numpy_vectors.json
"""
import base64
import json

import numpy as np


def b64(a):
    return base64.b64encode(np.ascontiguousarray(a).astype(a.dtype.newbyteorder("<")).tobytes()).decode()


SPECIAL = np.array(
    [0.0, -0.0, 1.0, -1.0, 0.5, 2.0**-24, 3 * 2.0**-25, 1 + 2.0**-23, 1 - 2.0**-24,
     2.0**-126, 2.0**-149, -(2.0**-149), 5 * 2.0**-149, 2.0**100, -(2.0**100),
     3.4028234663852886e38, np.inf, -np.inf, np.nan, 0.1, -1 / 3, 1e-30, -7e-39],
    dtype=np.float32,
)


def values(rng, kind, shape, scale):
    if kind == "normal":
        return (rng.standard_normal(shape) * scale).astype(np.float32)
    if kind == "special":
        return rng.choice(SPECIAL, size=shape)
    if kind == "ties":
        # ±(1 + k/4096)·2^e: products carry bits down to 2^-24 relative, so
        # sums land on exact float32 midpoints often.
        k = rng.integers(0, 4096, size=shape)
        e = rng.integers(-13, 1, size=shape)
        s = rng.choice([-1.0, 1.0], size=shape)
        return (s * (1 + k / 4096.0) * np.exp2(e)).astype(np.float32)
    raise ValueError(kind)


def muladd(x, w):
    acc = np.zeros((x.shape[0], w.shape[1]), dtype=np.float32)
    for i in range(w.shape[0]):
        acc = acc + x[:, i : i + 1] * w[i : i + 1, :]
        assert acc.dtype == np.float32
    return np.where(acc > 0, acc, np.float32(0))


def main():
    rng = np.random.default_rng(20240607)
    out = {"muladd": [], "columns": []}
    with np.errstate(all="ignore"):
        for rows, width, kind in [(6, 37, "normal"), (5, 24, "special"), (7, 33, "ties")]:
            x = values(rng, kind, (rows, width), 1.0)
            w = values(rng, kind, (width, width), np.sqrt(2.0 / width))
            y = muladd(x, w)
            out["muladd"].append({"rows": rows, "width": width, "kind": kind,
                                  "x": b64(x), "w": b64(w), "want": b64(y)})
        for rows, width in [(100, 37), (64, 9)]:
            # Mixed magnitudes make the float64 sums depend on the order.
            mag = np.exp2(rng.integers(-40, 60, size=(rows, width)))
            x = (rng.standard_normal((rows, width)) * mag).astype(np.float32)
            x[rng.random((rows, width)) < 0.3] = 0
            x64 = x.astype(np.float64)
            out["columns"].append({"rows": rows, "width": width, "x": b64(x),
                                   "sums": b64(x64.sum(0)), "squares": b64((x64**2).sum(0))})
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
