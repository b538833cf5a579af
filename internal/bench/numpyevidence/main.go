// Command numpyevidence measures which numpy + OpenBLAS configurations give
// the bits of `whestbake dataset bake --sampler numpy --dot-product X`: for
// each shape it bakes the same MLP seeds with every dot product, runs
// whestbench's own CPU bake of them once per OpenBLAS kernel and thread
// count, and prints markdown tables of how many statistics differ. That bake
// is judge.py's whestbench.dataset.create_dataset in the Python judge that
// `make pyjudge` installs.
// docs/NUMPY.md holds its output and the command line.
//
// It runs minutes of bakes, so it is a tool run by hand, not a test; the
// test that holds the table's conclusions is internal/pyjudge's
// TestWhestBakeJudgesNumpySampler.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/whestbake/whestbake/dataset"
)

type shape struct {
	Width    int     `json:"width"`
	Depth    int     `json:"depth"`
	NSamples int64   `json:"n_samples"`
	Seeds    []int64 `json:"seeds"`
	// chunks says how whestbench's chunk rule cuts NSamples, and why the
	// shape is here.
	chunks string
}

// The shapes: whestbench's fixture shapes; width 1, where numpy's column
// sum is a contiguous, pairwise one; small and odd widths, whose last
// column some kernels sum apart; widths either side of where OpenBLAS's
// sgemm splits the k sum into blocks: 384 for Sandybridge, 448 for
// SkylakeX, 512 for Nehalem; chunks small enough for OpenBLAS's
// small-matrix kernels; sample counts that leave a last chunk of one row,
// for which numpy calls gemv, or a whole bake of one row.
var shapes = []shape{
	{4, 2, 100, []int64{1001, 2002, 3003, 4004}, "100 (fixture single_split_v3_protocol's seeds)"},
	{8, 2, 100, []int64{42000, 42001, 99000, 99001}, "100 (fixture multi_config_v3.0's seeds)"},
	{1, 3, 5000, four, "5000 (W = 1)"},
	{3, 4, 2500, four, "2500"},
	{7, 3, 3000, four, "3000"},
	{9, 2, 300, four, "300"},
	{17, 3, 2000, four, "2000"},
	{33, 2, 1500, four, "1500"},
	{64, 4, 20000, four, "16384 + 3616"},
	{100, 2, 50, four, "50 (a small matrix)"},
	{100, 2, 3000, four, "3000"},
	{127, 2, 3000, four, "3000"},
	{256, 4, 5000, four, "4096 + 904"},
	{320, 2, 4000, four, "3276 + 724"},
	{384, 2, 3000, four, "2730 + 270"},
	{385, 2, 3000, four, "2723 + 277"},
	{448, 2, 3000, four, "2340 + 660"},
	{512, 2, 3000, four, "2048 + 952"},
	{700, 2, 2000, four, "1497 + 503"},
	{1024, 2, 2000, four, "1024 + 976"},
	{64, 2, 16385, four, "16384 + 1 (gemv)"},
	{256, 2, 4097, four, "4096 + 1 (gemv)"},
	{16, 3, 1, four, "1 (gemv)"},
}

// four are the MLP seeds of the shapes that are not a fixture's.
var four = []int64{7, 8, 9, 10}

var dots = []string{"fma", "muladd"}

// stats are one MLP's statistics as judge.py prints them: hex bits.
type stats struct {
	MLPSeed     int64    `json:"mlp_seed"`
	Means       []string `json:"all_layer_means"`
	AvgVariance string   `json:"avg_variance"`
}

type judged struct {
	BLAS struct {
		Architecture string `json:"architecture"`
		Version      string `json:"version"`
		NumThreads   int    `json:"num_threads"`
	} `json:"blas"`
	Numpy string    `json:"numpy"`
	Stats [][]stats `json:"stats"`
}

func main() {
	whestbake := flag.String("whestbake", "bin/whestbake", "the whestbake binary")
	python := flag.String("python", ".pyjudge/bin/python", "the Python judge's interpreter (make pyjudge)")
	judge := flag.String("judge", "internal/bench/numpyevidence/judge.py", "the judge's bake script")
	cores := flag.String("cores", "unset,SkylakeX,Haswell,Sandybridge,Nehalem,Prescott",
		"OPENBLAS_CORETYPE values to force, unset for OpenBLAS's own choice")
	flag.Parse()
	tmp, err := os.MkdirTemp("", "numpyevidence")
	check(err)
	defer os.RemoveAll(tmp)

	ours := make([]map[string][]dataset.Row, len(shapes))
	for i, s := range shapes {
		ours[i] = map[string][]dataset.Row{}
		for _, dot := range dots {
			ours[i][dot] = bake(*whestbake, tmp, i, s, dot)
		}
	}
	var runs []coreRun
	for _, core := range strings.Split(*cores, ",") {
		runs = append(runs, coreRun{core, runJudge(*python, *judge, core, 1), runJudge(*python, *judge, core, 2)})
	}
	for _, dot := range dots {
		printTable(fmt.Sprintf("One OpenBLAS thread against `--dot-product %s`", dot), runs,
			func(i int, r coreRun) string { return compare(ours[i][dot], r.one.Stats[i]) })
	}
	printTable("Two OpenBLAS threads against one", runs,
		func(i int, r coreRun) string { return compareJudged(r.two.Stats[i], r.one.Stats[i]) })
	fmt.Printf("judged by numpy %s, OpenBLAS %s\n", runs[0].one.Numpy, runs[0].one.BLAS.Version)
}

// coreRun is the judge's bakes of every shape on one OpenBLAS kernel, with
// one thread and with two.
type coreRun struct {
	core     string
	one, two judged
}

// printTable prints one markdown table: a row per shape, a column per
// kernel, each cell what cell says of that shape on that kernel.
func printTable(title string, runs []coreRun, cell func(i int, r coreRun) string) {
	fmt.Printf("%s (= identical; else means differing / means, avg_variance differing / MLPs):\n\n", title)
	header := "| W | D | N | chunk rows |"
	for _, r := range runs {
		header += fmt.Sprintf(" %s (%s) |", r.core, r.one.BLAS.Architecture)
	}
	fmt.Println(header)
	fmt.Println("|---|---|---|---|" + strings.Repeat("---|", len(runs)))
	for i, s := range shapes {
		row := fmt.Sprintf("| %d | %d | %d | %s |", s.Width, s.Depth, s.NSamples, s.chunks)
		for _, r := range runs {
			row += " " + cell(i, r) + " |"
		}
		fmt.Println(row)
	}
	fmt.Println()
}

// bake bakes shape s's MLPs with whestbake's numpy sampler and dot product
// dot and returns its rows.
func bake(whestbake, tmp string, i int, s shape, dot string) []dataset.Row {
	seedsFile := filepath.Join(tmp, fmt.Sprintf("seeds-%d.json", i))
	b, err := json.Marshal(s.Seeds)
	check(err)
	check(os.WriteFile(seedsFile, b, 0o644))
	out := filepath.Join(tmp, fmt.Sprintf("bake-%d-%s", i, dot))
	run(exec.Command(whestbake, "dataset", "bake",
		"--sampler", "numpy",
		"--dot-product", dot,
		"--n-mlps", strconv.Itoa(len(s.Seeds)),
		"--n-samples", strconv.FormatInt(s.NSamples, 10),
		"--width", strconv.Itoa(s.Width),
		"--depth", strconv.Itoa(s.Depth),
		"--mlp-seeds", seedsFile,
		"-o", out), nil)
	_, _, rows, err := dataset.ReadParquet(filepath.Join(out, "data", "public-00000-of-00001.parquet"))
	check(err)
	return rows
}

// runJudge runs whestbench's bake of every shape on OpenBLAS kernel core,
// where "unset" is OpenBLAS's choice, with threads threads.
func runJudge(python, judge, core string, threads int) judged {
	in, err := json.Marshal(shapes)
	check(err)
	cmd := exec.Command(python, judge)
	cmd.Env = blasEnv(core, threads)
	var got judged
	check(json.Unmarshal(lastLine(run(cmd, in)), &got))
	if got.BLAS.NumThreads != threads {
		check(fmt.Errorf("OpenBLAS runs %d threads, asked for %d", got.BLAS.NumThreads, threads))
	}
	return got
}

// blasEnv is this process's environment with OPENBLAS_CORETYPE set to core,
// or removed for "unset" so that OpenBLAS detects the CPU, the thread count
// set, and without OPENBLAS_L2_SIZE or a user site, so that a host's
// settings pick neither the kernel nor the packages.
func blasEnv(core string, threads int) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS":
		default:
			env = append(env, kv)
		}
	}
	env = append(env, "OPENBLAS_NUM_THREADS="+strconv.Itoa(threads), "PYTHONNOUSERSITE=1")
	if core != "unset" {
		env = append(env, "OPENBLAS_CORETYPE="+core)
	}
	return env
}

// compare counts the statistics where whestbake's rows and the judge's
// differ.
func compare(rows []dataset.Row, judge []stats) string {
	means, meansDiff, varDiff := 0, 0, 0
	for i, r := range rows {
		p := judge[i]
		if p.MLPSeed != r.Seed || len(p.Means) != len(r.LayerMeans) {
			panic(fmt.Sprintf("row %d: seed %d, the judge's %d", i, r.Seed, p.MLPSeed))
		}
		for j, m := range r.LayerMeans {
			bits, err := strconv.ParseUint(p.Means[j], 16, 32)
			check(err)
			means++
			if uint32(bits) != math.Float32bits(m) {
				meansDiff++
			}
		}
		bits, err := strconv.ParseUint(p.AvgVariance, 16, 64)
		check(err)
		if bits != math.Float64bits(r.AvgVariance) {
			varDiff++
		}
	}
	return verdict(meansDiff, means, varDiff, len(rows))
}

// compareJudged counts the statistics where two of the judge's runs differ.
func compareJudged(a, b []stats) string {
	means, meansDiff, varDiff := 0, 0, 0
	for i := range a {
		for j := range a[i].Means {
			means++
			if a[i].Means[j] != b[i].Means[j] {
				meansDiff++
			}
		}
		if a[i].AvgVariance != b[i].AvgVariance {
			varDiff++
		}
	}
	return verdict(meansDiff, means, varDiff, len(a))
}

func verdict(meansDiff, means, varDiff, rows int) string {
	if meansDiff == 0 && varDiff == 0 {
		return "="
	}
	return fmt.Sprintf("%d/%d, %d/%d", meansDiff, means, varDiff, rows)
}

// run runs cmd with stdin and returns its standard output, exiting with
// its standard error if it fails.
func run(cmd *exec.Cmd, stdin []byte) []byte {
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	out, err := cmd.Output()
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n%s", strings.Join(cmd.Args, " "), err, stderr.Bytes())
		os.Exit(1)
	}
	return out
}

func lastLine(out []byte) []byte {
	lines := bytes.Split(bytes.TrimSpace(out), []byte("\n"))
	return lines[len(lines)-1]
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "numpyevidence:", err)
		os.Exit(1)
	}
}
