#!/usr/bin/env python3
"""Writes naming/testdata/names.tsv, the bulk oracle for the Go naming package.

Only the standard library is used: `random.Random(seed).choices(...)` is CPython's own
MT19937 + weighted choice, the same calls faker 37.12.0 makes in `seed_instance`,
`first_name()` and `last_name()`; slugify and the collision rule restate whestbench's
naming.py with the stdlib `re` module. The name lists come from naming/data/*.tsv (their
provenance is checked separately against the reference checksums).

Rows are `seed<TAB>name<TAB>unique`, where `unique` is the collision-resolved name over the
whole seed column in file order. Run from the repository root:
    python3 naming/testdata/gen_names.py > naming/testdata/names.tsv
"""

import random
import re

DATA = "naming/data/"

EDGE_SEEDS = [
    -1,
    -5,
    -(2**31),
    2**31 - 1,
    2**31,
    2**32 - 1,
    2**32,
    2**32 + 1,
    2**53 + 1,
    2**62,
    2**63 - 1,
    -(2**63),
    # Fixture estimator seeds (whestbench's tests/fixtures, in testdata/whestbench-fixtures).
    3622263192,
    3259458125,
    4076086378,
    755867,
    2749604155,
    480482724,
    2543531098,
    1780620601,
    1311118443,
    2895795964,
    3039846940,
    3051805348,
    2176965858,
    1459250831,
    2556076278,
    4151336380,
    # Repeats so the collision column exercises -2 and -3 suffixes.
    0,
    0,
    42,
]


def load(fname):
    names, weights = [], []
    with open(DATA + fname, encoding="ascii") as f:
        for line in f:
            name, weight = line.rstrip("\n").split("\t")
            names.append(name)
            weights.append(float(weight))
    return names, weights


def slugify(text):
    text = re.sub(r"[^a-z\s-]", "", text.lower())
    return re.sub(r"[\s-]+", "-", text).strip("-")


def main():
    first, first_w = load("first_names.tsv")
    last, last_w = load("last_names.tsv")
    seeds = list(range(3000)) + EDGE_SEEDS
    seen = {}
    for seed in seeds:
        rng = random.Random(seed)
        given = rng.choices(first, first_w, k=1)[0]
        family = rng.choices(last, last_w, k=1)[0]
        name = f"{slugify(given)}-{slugify(family)}"
        count = seen.get(name, 0) + 1
        seen[name] = count
        unique = name if count == 1 else f"{name}-{count}"
        print(f"{seed}\t{name}\t{unique}")


if __name__ == "__main__":
    main()
