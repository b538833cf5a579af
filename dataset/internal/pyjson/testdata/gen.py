"""Regenerate the Python json.dumps samples the Go encoder is tested against.

Run from this directory with /usr/bin/python3 gen.py. Outputs are checked in;
tests never run Python.
"""
import json
import random
import struct

nested = {
    "a": 1,
    "b": [1, 2.5, "x"],
    "c": {},
    "d": [],
    "e": None,
    "f": True,
    "g": {"h": [[], {}, [[1]]], "i": "\u00fcn\u00efc\u00f6d\u00e9 \u2028 \U0001F600 \"q\" \\ \n\t\r\b\f\x01\x1f\x7f/"},
    "big": 2**70,
    "neg": -5,
    "zero": 0,
    "floats": [0.1, 1e16, 1e15, 1e-05, 0.0001, 123456789.0, -0.0, 1.5e300, 5e-324, 2.0**-1074 * 3, 1 / 3],
}
# Non-finite floats are encoded like Python (NaN, Infinity) but are not JSON,
# so the decoder need not read them back: a separate, encode-only sample.
with open("specials_indent.json", "w") as f:
    f.write(json.dumps([float("nan"), float("inf"), float("-inf")], indent=2))
with open("nested_indent.json", "w") as f:
    f.write(json.dumps(nested, indent=2))
with open("nested_compact.json", "w") as f:
    f.write(json.dumps(nested))

# The single-bake metadata key order the brief specifies, with fixed values;
# dataset.NewBakeMetadata must produce exactly these bytes.
bake = {
    "schema_version": "3.0",
    "format": "hf-datasets-parquet",
    "backend": "whestbake",
    "seed_protocol": {"name": "whestbench_explicit_per_mlp_seeds", "version": "3.0"},
    "created_at_utc": "2026-11-22T10:11:12.345678+00:00",
    "split": "my-custom-split",
    "config": "full",
    "n_mlps": 4,
    "n_samples": 1000000000,
    "width": 1024,
    "depth": 16,
    "hardware": {
        "hostname": "gpu-7",
        "os": "Linux",
        "os_release": "6.1.0-18-amd64",
        "platform": "Linux-6.1.0-18-amd64-x86_64",
        "machine": "x86_64",
        "cpu_brand": "AMD EPYC 9454 48-Core Processor",
        "cpu_count_logical": 16,
        "ram_total_bytes": 137438953472,
        "go_version": "go1.26.8",
    },
    "whestbake_version": "0.1.0",
    "sampler": "numpy",
    "engine": "cpu",
    "algorithm_version": "numpy-fma-1",
    "dot_product": "fma",
    "device": "cpu",
    "chunk_size": 1024,
    "seed_file_sha256": "ab" * 32,
    "is_partial": True,
    "mlp_range": [4, 8],
    "total_n_mlps": 10,
}
with open("bake_partial.json", "w") as f:
    f.write(json.dumps(bake, indent=2))

# Float repr: hex bits and Python's repr, for random bit patterns (all
# magnitudes) and random decimals (the short-digit cases).
rng = random.Random(20261122)
lines = []
for i in range(3000):
    if i % 3 == 0:
        x = rng.uniform(-1e6, 1e6) / 10 ** rng.randint(0, 12)
    elif i % 3 == 1:
        x = float(f"{rng.randint(1, 99999)}e{rng.randint(-30, 30)}")
    else:
        while True:
            (x,) = struct.unpack("<d", struct.pack("<Q", rng.getrandbits(64)))
            if x == x and abs(x) != float("inf"):
                break
    bits = struct.unpack("<Q", struct.pack("<d", x))[0]
    lines.append(f"{bits:016x} {json.dumps(x)}")
with open("floats.txt", "w") as f:
    f.write("\n".join(lines) + "\n")
