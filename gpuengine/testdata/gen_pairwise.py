"""Writes pairwise_sum.json: numpy's float64 sum and mean of 1-D arrays of many lengths.

Run once with Debian's numpy (/usr/bin/python3 gen_pairwise.py); the Go test reads the
checked-in output, so tests never need numpy. Values are given as float64 bit patterns.
"""
import json
import struct

import numpy as np

def bits(x):
    return "%016x" % struct.unpack("<Q", struct.pack("<d", float(x)))[0]

rng = np.random.default_rng(20261122)
cases = []
for n in list(range(1, 40)) + [63, 64, 100, 127, 128, 129, 130, 200, 255, 256, 257, 300, 511, 512, 1000, 1024]:
    # mixed magnitudes make the summation order visible in the last bits
    a = rng.standard_normal(n) * np.exp(rng.uniform(-20, 20, n))
    cases.append({"x": [bits(v) for v in a], "sum": bits(np.sum(a)), "mean": bits(np.mean(a))})
with open("pairwise_sum.json", "w") as f:
    json.dump({"numpy": np.__version__, "cases": cases}, f)
