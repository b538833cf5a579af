"""whestbench's CPU bake of each shape numpyevidence asks for, statistics as bits.

Reads a JSON list of shapes on stdin, each {"width", "depth", "n_samples",
"seeds"}, and for each one runs whestbench.dataset.create_dataset (what
`whest dataset bake` runs without --torch) into a temporary folder, reads
its parquet back and keeps all_layer_means as float32 bits and
avg_variance as float64 bits, in hex. Prints one JSON object: the BLAS
threadpoolctl reports (its kernel as "architecture", version, threads) and
the statistics per shape.

The kernel and the thread count are the environment's
(OPENBLAS_CORETYPE, OPENBLAS_NUM_THREADS): OpenBLAS reads both when numpy
loads it, so numpyevidence starts one process per kernel and thread count.
"""
import json
import sys
import tempfile
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import threadpoolctl
from whestbench.dataset import create_dataset


def bake(shape, root):
    out = Path(root) / f"bake-{bake.count}"
    bake.count += 1
    create_dataset(
        n_mlps=len(shape["seeds"]),
        n_samples=shape["n_samples"],
        width=shape["width"],
        depth=shape["depth"],
        mlp_seeds=shape["seeds"],
        output_path=out,
    )
    table = pq.read_table(next((out / "data").glob("*.parquet")))
    means = table.column("all_layer_means").to_pylist()
    variances = table.column("avg_variance").to_pylist()
    rows = []
    for seed, m, v in zip(table.column("mlp_seed").to_pylist(), means, variances):
        flat = np.asarray(m, dtype=np.float32).reshape(-1)
        rows.append({
            "mlp_seed": seed,
            "all_layer_means": [f"{b:08x}" for b in flat.view(np.uint32).tolist()],
            "avg_variance": f"{np.float64(v).view(np.uint64):016x}",
        })
    return rows


bake.count = 0


def main():
    shapes = json.load(sys.stdin)
    blas = [lib for lib in threadpoolctl.threadpool_info() if lib.get("user_api") == "blas"]
    with tempfile.TemporaryDirectory(prefix="numpyevidence-") as root:
        stats = [bake(s, root) for s in shapes]
    print(json.dumps({"blas": blas[0] if blas else None, "numpy": np.__version__, "stats": stats}))


if __name__ == "__main__":
    main()
