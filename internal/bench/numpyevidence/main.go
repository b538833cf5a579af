// Command numpyevidence measures which numpy + OpenBLAS configurations give
// the bits of `whestbake dataset bake --sampler numpy --dot-product X`: for
// each shape it bakes the same MLP seeds with every dot product, runs
// internal/bench/numpy_peer.py (whestbench's CPU loop on numpy) once per
// OPENBLAS_CORETYPE with one OpenBLAS thread and once with two, and prints
// a markdown table of how many statistics differ. docs/NUMPY.md holds its
// output and the command line.
//
// It needs Debian's python3-numpy and libopenblas0-pthread, so it is a tool
// run by hand, not a test.
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

type config struct {
	width, depth int
	nSamples     int64
	seeds        []int64
	chunkRows    string
}

// The shapes: whestbench's fixture shapes; widths either side of where
// OpenBLAS's sgemm splits the k sum into blocks (up to 320 columns for the
// Cooperlake kernel parameters, 448 for SkylakeX); a width that is not a
// multiple of 16 in a chunk small enough (rows·W·W <= 10^6) for OpenBLAS's
// small-matrix kernel, and the same width in a larger chunk; sample counts
// that leave a last chunk of one row (numpy then calls gemv).
var configs = []config{
	{4, 2, 100, []int64{1001, 2002, 3003, 4004}, "100 (seeds of fixture single_split_v3_protocol)"},
	{8, 2, 100, []int64{42000, 42001, 99000, 99001}, "100 (seeds of fixture multi_config_v3.0)"},
	{64, 4, 20000, []int64{7, 8}, "16384 + 3616"},
	{100, 2, 50, []int64{7, 8}, "50 (small-matrix kernel)"},
	{100, 2, 3000, []int64{7, 8}, "3000"},
	{256, 4, 5000, []int64{7, 8}, "4096 + 904"},
	{320, 2, 4000, []int64{7, 8}, "3276 + 724"},
	{384, 2, 3000, []int64{7, 8}, "2730 + 270"},
	{448, 2, 3000, []int64{7, 8}, "2340 + 660"},
	{512, 2, 3000, []int64{7, 8}, "2048 + 952"},
	{700, 2, 2000, []int64{7, 8}, "1497 + 503"},
	{1024, 2, 2000, []int64{7, 8}, "1024 + 976"},
	{64, 2, 16385, []int64{7, 8}, "16384 + 1 (gemv)"},
	{256, 2, 4097, []int64{7, 8}, "4096 + 1 (gemv)"},
}

var (
	coretypes = []string{"", "SkylakeX", "Haswell", "Sandybridge"}
	dots      = []string{"fma", "muladd"}
)

type peerStats struct {
	MLPSeed     int64    `json:"mlp_seed"`
	Means       []string `json:"all_layer_means"`
	AvgVariance string   `json:"avg_variance"`
}

func main() {
	whestbake := flag.String("whestbake", "bin/whestbake", "the whestbake binary")
	python := flag.String("python", "/usr/bin/python3", "Python with Debian's numpy")
	peer := flag.String("peer", "internal/bench/numpy_peer.py", "the numpy peer script")
	flag.Parse()
	tmp, err := os.MkdirTemp("", "numpyevidence")
	check(err)
	defer os.RemoveAll(tmp)

	fmt.Println("| W | D | N | chunk rows | OPENBLAS_CORETYPE | kernel " +
		"| 1 thread vs fma | 1 thread vs muladd | 2 threads vs 1 |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|")
	for ci, c := range configs {
		seedsFile := filepath.Join(tmp, fmt.Sprintf("seeds-%d.json", ci))
		b, _ := json.Marshal(c.seeds)
		check(os.WriteFile(seedsFile, b, 0o644))
		ours := map[string][]dataset.Row{}
		for _, dot := range dots {
			out := filepath.Join(tmp, fmt.Sprintf("bake-%d-%s", ci, dot))
			run(exec.Command(*whestbake, "dataset", "bake",
				"--sampler", "numpy",
				"--dot-product", dot,
				"--n-mlps", strconv.Itoa(len(c.seeds)),
				"--n-samples", strconv.FormatInt(c.nSamples, 10),
				"--width", strconv.Itoa(c.width),
				"--depth", strconv.Itoa(c.depth),
				"--mlp-seeds", seedsFile,
				"-o", out))
			parquet := filepath.Join(out, "data", "public-00000-of-00001.parquet")
			_, _, rows, err := dataset.ReadParquet(parquet)
			check(err)
			ours[dot] = rows
		}
		for _, core := range coretypes {
			numpy, kernel := runPeer(*python, *peer, tmp, c, core, 1)
			numpy2, _ := runPeer(*python, *peer, tmp, c, core, 2)
			var cells []string
			for _, dot := range dots {
				cells = append(cells, compare(ours[dot], numpy))
			}
			cells = append(cells, compareNumpy(numpy2, numpy))
			name := core
			if name == "" {
				name = "unset"
			}
			fmt.Printf("| %d | %d | %d | %s | %s | %s | %s |\n",
				c.width, c.depth, c.nSamples, c.chunkRows, name, kernel, strings.Join(cells, " | "))
		}
	}
}

// runPeer runs numpy_peer.py on c's MLPs with OpenBLAS kernel core and
// threads threads and returns its statistics and the kernel OpenBLAS
// reports.
func runPeer(python, peer, tmp string, c config, core string, threads int) ([]peerStats, string) {
	stats := filepath.Join(tmp, "stats.json")
	args := []string{peer,
		"--width", strconv.Itoa(c.width),
		"--depth", strconv.Itoa(c.depth),
		"--n-samples", strconv.FormatInt(c.nSamples, 10),
		"--threads", strconv.Itoa(threads),
		"--stats", stats,
	}
	for _, s := range c.seeds {
		args = append(args, "--mlp-seed", strconv.FormatInt(s, 10))
	}
	cmd := exec.Command(python, args...)
	cmd.Env = blasEnv(core)
	var report struct {
		BLAS struct {
			Core string `json:"core"`
		} `json:"blas"`
		Threads int `json:"threads"`
	}
	check(json.Unmarshal(lastLine(run(cmd)), &report))
	if report.Threads != threads {
		check(fmt.Errorf("OpenBLAS runs %d threads, asked for %d", report.Threads, threads))
	}
	var numpy []peerStats
	b, err := os.ReadFile(stats)
	check(err)
	check(json.Unmarshal(b, &numpy))
	return numpy, report.BLAS.Core
}

// blasEnv is this process's environment with OPENBLAS_CORETYPE set to core,
// or removed for "" (OpenBLAS then detects the CPU), and without
// OPENBLAS_L2_SIZE, so that a host's settings do not pick the kernel.
func blasEnv(core string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "OPENBLAS_CORETYPE=") &&
			!strings.HasPrefix(kv, "OPENBLAS_L2_SIZE=") {
			env = append(env, kv)
		}
	}
	if core != "" {
		env = append(env, "OPENBLAS_CORETYPE="+core)
	}
	return env
}

// compare counts the statistics where whestbake's rows and numpy's differ.
func compare(rows []dataset.Row, numpy []peerStats) string {
	means, meansDiff, varDiff := 0, 0, 0
	for i, r := range rows {
		p := numpy[i]
		if p.MLPSeed != r.Seed || len(p.Means) != len(r.LayerMeans) {
			panic(fmt.Sprintf("row %d: seed %d, numpy's %d", i, r.Seed, p.MLPSeed))
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

// compareNumpy counts the statistics where two numpy runs differ.
func compareNumpy(a, b []peerStats) string {
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
		return "**identical**"
	}
	return fmt.Sprintf("%d/%d means, %d/%d avg_variance differ", meansDiff, means, varDiff, rows)
}

func run(cmd *exec.Cmd) []byte {
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
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
