package pyjudge

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// bakeJudge is the Python side of the bake tests: one process that runs a
// list of jobs in order and writes their results, as JSON, to the file
// named by its first argument. whestbench is imported once for all of them
// (the import costs seconds), and the jobs are what a user runs:
//
//   - cli: `whest ARGS...`, through the entry point the `whest` script calls
//     (whestbench/cli.py main), with its exit status as the shell would see
//     it, SystemExit and uncaught exceptions included;
//   - api: whestbench.dataset.create_dataset(**kwargs), the only way to bake
//     seed protocol 4.0 (the CLI has no flag for it);
//   - dump: a dataset directory read with pyarrow, every column of every
//     row: weights as the sha256 of their float32 bytes, the statistics as
//     hex bits, the rest as values, with the file's Arrow schema and
//     metadata.json's text;
//   - reference: for the bound of bake_bound_test.go, each MLP's inputs
//     drawn as whestbench's sample_layer_statistics draws them (its chunk
//     rule and sample stream) and pushed through its weights in float64:
//     the mean |x| of every input and the root mean square of every neuron
//     of the exact network, layer by layer.
//
// The first result also carries the BLAS that threadpoolctl sees.
const bakeJudge = `
import contextlib, hashlib, io, json, sys, traceback
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import threadpoolctl
import flopscope.numpy as fnp
from whestbench import cli
from whestbench.dataset import create_dataset
from whestbench.generation import sample_mlp
from whestbench.seeds import derive_seed_streams
from whestbench.simulation import _pick_chunk_size


def exit_code(e):
    if e.code is None:
        return 0
    return e.code if isinstance(e.code, int) else 1


def guarded(fn):
    err = io.StringIO()
    code = 0
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        try:
            code = fn() or 0
        except SystemExit as e:
            code = exit_code(e)
            if isinstance(e.code, str):
                err.write(e.code)
        except Exception:
            code = 1
            err.write(traceback.format_exc())
    return {"code": code, "stderr": err.getvalue()[-4000:]}


def api(kwargs):
    if kwargs.get("mlp_range") is not None:
        kwargs["mlp_range"] = tuple(kwargs["mlp_range"])

    def bake():
        create_dataset(**kwargs)

    return guarded(bake)


def values(column):
    arr = column.combine_chunks()
    if isinstance(arr, pa.ExtensionArray):
        arr = arr.storage
    while pa.types.is_list(arr.type) or pa.types.is_fixed_size_list(arr.type) or pa.types.is_large_list(arr.type):
        arr = arr.flatten()
    return np.asarray(arr)


def dump(folder):
    folder = Path(folder)
    shards = sorted((folder / "data").glob("*.parquet"))
    table = pq.read_table(shards[0])
    n = table.num_rows
    weights = values(table.column("weights")).astype(np.float32)
    means = values(table.column("all_layer_means")).astype(np.float32)
    final = values(table.column("final_means")).astype(np.float32)
    wn, mn, fn_ = len(weights) // n, len(means) // n, len(final) // n
    rows = []
    for i in range(n):
        rows.append({
            "mlp_id": table.column("mlp_id")[i].as_py(),
            "mlp_name": table.column("mlp_name")[i].as_py(),
            "mlp_seed": table.column("mlp_seed")[i].as_py(),
            "weights_sha256": hashlib.sha256(weights[i * wn:(i + 1) * wn].tobytes()).hexdigest(),
            "all_layer_means": [f"{b:08x}" for b in means[i * mn:(i + 1) * mn].view(np.uint32).tolist()],
            "final_means": [f"{b:08x}" for b in final[i * fn_:(i + 1) * fn_].view(np.uint32).tolist()],
            "avg_variance": f"{np.float64(table.column('avg_variance')[i].as_py()).view(np.uint64):016x}",
            "sampling_budget_breakdown": table.column("sampling_budget_breakdown")[i].as_py(),
        })
    meta = table.schema.metadata or {}
    return {
        "shards": [s.name for s in shards],
        "schema": table.schema.to_string(show_schema_metadata=False),
        "schema_metadata": {k.decode(): v.decode() for k, v in meta.items()},
        "metadata": (folder / "metadata.json").read_text(),
        "rows": rows,
    }


def reference(job):
    W, D, N = job["width"], job["depth"], job["n_samples"]
    chunk = _pick_chunk_size(W)
    out = []
    for seed in job["seeds"]:
        weight_ss, sample_ss, _ = derive_seed_streams(seed)
        mlp = sample_mlp(W, D, fnp.random.default_rng(weight_ss))
        weights = [np.asarray(w, dtype=np.float64) for w in mlp.weights]
        rng = fnp.random.default_rng(sample_ss)
        abs_sum = np.zeros(W)
        sq = np.zeros((D + 1, W))
        for start in range(0, N, chunk):
            x = np.asarray(rng.standard_normal((min(chunk, N - start), W), dtype=np.float32), dtype=np.float64)
            abs_sum += np.abs(x).sum(0)
            sq[0] += (x * x).sum(0)
            for layer, w in enumerate(weights):
                x = np.maximum(x @ w, 0.0)
                sq[layer + 1] += (x * x).sum(0)
        out.append({"mean_abs_input": (abs_sum / N).tolist(), "rms": np.sqrt(sq / N).tolist()})
    return out


def main():
    jobs = json.load(sys.stdin)
    results = []
    for job in jobs:
        if "cli" in job:
            results.append(guarded(lambda: cli.main(job["cli"])))
        elif "api" in job:
            results.append(api(job["api"]))
        else:
            try:
                if "dump" in job:
                    results.append({"dump": dump(job["dump"])})
                else:
                    results.append({"reference": reference(job["reference"])})
            except Exception:
                results.append({"code": 1, "stderr": traceback.format_exc()})
    blas = [p for p in threadpoolctl.threadpool_info() if p.get("user_api") == "blas"]
    Path(sys.argv[1]).write_text(json.dumps({"blas": blas, "results": results}))


main()
`

// judgeJob is one job of bakeJudge; exactly one field is set.
type judgeJob struct {
	CLI       []string       `json:"cli,omitempty"`
	API       map[string]any `json:"api,omitempty"`
	Dump      string         `json:"dump,omitempty"`
	Reference *referenceJob  `json:"reference,omitempty"`
}

type referenceJob struct {
	Width    int     `json:"width"`
	Depth    int     `json:"depth"`
	NSamples int64   `json:"n_samples"`
	Seeds    []int64 `json:"seeds"`
}

// judgeResult is one job's result: the exit status and standard error of
// a cli or api job, or a dump, or a reference.
type judgeResult struct {
	Code      int            `json:"code"`
	Stderr    string         `json:"stderr"`
	Dump      *dumped        `json:"dump"`
	Reference []referenceMLP `json:"reference"`
}

// dumped is a dataset directory as pyarrow reads it.
type dumped struct {
	Shards         []string          `json:"shards"`
	Schema         string            `json:"schema"`
	SchemaMetadata map[string]string `json:"schema_metadata"`
	Metadata       string            `json:"metadata"`
	Rows           []dumpedRow       `json:"rows"`
}

type dumpedRow struct {
	MLPID         int64    `json:"mlp_id"`
	MLPName       string   `json:"mlp_name"`
	MLPSeed       int64    `json:"mlp_seed"`
	WeightsSHA256 string   `json:"weights_sha256"`
	LayerMeans    []string `json:"all_layer_means"`
	FinalMeans    []string `json:"final_means"`
	AvgVariance   string   `json:"avg_variance"`
	Breakdown     string   `json:"sampling_budget_breakdown"`
}

// referenceMLP is one MLP's exact network: the mean |x| of each input and
// the root mean square of each neuron, RMS[0] the inputs' and RMS[l] layer
// l's.
type referenceMLP struct {
	MeanAbsInput []float64   `json:"mean_abs_input"`
	RMS          [][]float64 `json:"rms"`
}

// judged is what one run of bakeJudge returned.
type judged struct {
	BLAS []struct {
		Architecture string `json:"architecture"`
		Version      string `json:"version"`
		NumThreads   int    `json:"num_threads"`
	} `json:"blas"`
	Results []judgeResult `json:"results"`
}

// runJudge runs jobs in one bakeJudge process with extraEnv added to its
// environment.
func runJudge(t *testing.T, env *Env, jobs []judgeJob, extraEnv []string) judged {
	t.Helper()
	j, err := judgeJobs(env, jobs, extraEnv, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// judgeJobs is runJudge for any goroutine: its result file goes in dir.
func judgeJobs(env *Env, jobs []judgeJob, extraEnv []string, dir string) (judged, error) {
	in, err := json.Marshal(jobs)
	if err != nil {
		return judged{}, err
	}
	out := filepath.Join(dir, "judged.json")
	r, err := env.run(Cmd{Env: extraEnv, Stdin: in}, env.Python, "-c", bakeJudge, out)
	if err != nil {
		return judged{}, err
	}
	if r.Code != 0 {
		return judged{}, fmt.Errorf("the judge exited %d:\n%s", r.Code, r.Stderr)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		return judged{}, err
	}
	var got judged
	if err := json.Unmarshal(b, &got); err != nil {
		return judged{}, err
	}
	if len(got.Results) != len(jobs) {
		return judged{}, fmt.Errorf("the judge returned %d results for %d jobs", len(got.Results), len(jobs))
	}
	return got, nil
}
