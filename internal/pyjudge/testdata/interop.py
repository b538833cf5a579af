"""The judge's side of the interop tests: whestbench's CLI and the loaders.

Run as `python interop.py REQUEST RESULT`. REQUEST is a JSON file holding
{"jobs": [...]}, run in order in this one process, so that a test pays
Python's start-up once; RESULT receives one JSON answer per job.

A job is one of:

  {"kind": "whest", "argv": [...]}
      whestbench's command line, whestbench.cli.main(argv), as the `whest`
      script calls it: {"code", "stdout", "stderr"}.
  {"kind": "parquet", "files": [...]}
      pyarrow.parquet on those files, in order: {"rows"}.
  {"kind": "whestbench", "path": DIR, "split": S or null}
      whestbench.load_dataset(DIR[, split=S]).
  {"kind": "datasets", "path": DIR, "config": C or null, "split": S or null}
      datasets.load_dataset(DIR[, C][, split=S]).
  {"kind": "disk", "path": DIR}
      datasets.load_from_disk(DIR).

A loader's answer is {"splits": {name: {"rows", "from", "features_ok"}}}
(one entry for a Dataset, one a split for a DatasetDict), and for
whestbench's loader its metadata side channel, whestbench.metadata. "from"
says where the rows were read: "prepared" when every Arrow file the Dataset
maps lies under DIR/prepared (datasets.load_from_disk of the prepared tree),
"cache" when they were built from the parquet files into HF_HOME. Any job
that raises answers {"error": "..."}.

Rows are compared bit for bit: every float is written as the hex of its
IEEE-754 double bits (a float32 widens to a double exactly), so -0.0, 0.0
and every NaN payload stay apart; integers and strings are written as they
are.
"""

import contextlib
import io
import json
import os
import struct
import sys
import traceback


def canonical(value):
    if isinstance(value, float):
        return "%016x" % struct.unpack("<Q", struct.pack("<d", value))[0]
    if isinstance(value, dict):
        return {k: canonical(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [canonical(v) for v in value]
    return value


def run_whest(job):
    from whestbench.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(job["argv"])
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
        except Exception:
            traceback.print_exc()
            code = 1
    return {"code": code, "stdout": out.getvalue(), "stderr": err.getvalue()}


def parquet_rows(job):
    import pyarrow as pa
    import pyarrow.parquet as pq

    tables = [pq.read_table(f) for f in job["files"]]
    table = pa.concat_tables(tables)
    return {"rows": canonical(table.to_pylist())}


def split_answer(ds, root, width, depth):
    from whestbench.dataset_io import make_features

    prepared = os.path.join(os.path.realpath(root), "prepared") + os.sep
    files = [os.path.realpath(c["filename"]) for c in ds.cache_files]
    where = "prepared" if files and all(f.startswith(prepared) for f in files) else "cache"
    return {
        "rows": canonical(ds.to_list()),
        "from": where,
        "features_ok": ds.features == make_features(width=width, depth=depth),
    }


def loader_answer(loaded, job, split_name=None):
    from datasets import DatasetDict

    root, width, depth = job["path"], job["width"], job["depth"]
    if isinstance(loaded, DatasetDict):
        splits = {n: split_answer(d, root, width, depth) for n, d in loaded.items()}
    else:
        name = split_name or str(loaded.split)
        splits = {name: split_answer(loaded, root, width, depth)}
    return {"splits": splits}


def load_whestbench(job):
    import whestbench

    ds = whestbench.load_dataset(job["path"], split=job.get("split"))
    answer = loader_answer(ds, job)
    answer["metadata"] = whestbench.metadata(ds)
    return answer


def load_datasets(job):
    import datasets

    args = [job["path"]]
    if job.get("config"):
        args.append(job["config"])
    ds = datasets.load_dataset(*args, split=job.get("split"))
    return loader_answer(ds, job)


def load_disk(job):
    import datasets

    ds = datasets.load_from_disk(job["path"])
    return loader_answer(ds, dict(job, path=os.path.dirname(os.path.dirname(job["path"]))))


KINDS = {
    "whest": run_whest,
    "parquet": parquet_rows,
    "whestbench": load_whestbench,
    "datasets": load_datasets,
    "disk": load_disk,
}


def main():
    import datasets

    datasets.disable_progress_bars()
    with open(sys.argv[1]) as f:
        jobs = json.load(f)["jobs"]
    answers = []
    for job in jobs:
        try:
            answers.append(KINDS[job["kind"]](job))
        except Exception as exc:
            answers.append({"error": "%s: %s" % (type(exc).__name__, exc)})
    with open(sys.argv[2], "w") as f:
        json.dump(answers, f)


if __name__ == "__main__":
    main()
