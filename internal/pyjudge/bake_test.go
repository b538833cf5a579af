package pyjudge

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// statsMode is how a case's statistics are judged.
type statsMode int

const (
	// bits: whest runs OpenBLAS's Sandybridge kernel on one thread (bitsEnv)
	// and whestbake --dot-product muladd; every statistic must be the same
	// bits.
	bits statsMode = iota
	// bound: whest runs as the host gives it (OpenBLAS's own choice of
	// kernel and threads) and whestbake --dot-product fma, its default;
	// every statistic must lie within the rounding bound of
	// bake_bound_test.go.
	bound
)

// bitsEnv is the numpy whose statistics whestbake reproduces bit for bit
// (docs/NUMPY.md measures it): OpenBLAS's Sandybridge kernel, on one
// thread. It multiplies and adds without fused multiply-adds, each output's
// products summed in ascending order within k blocks of 384 (OpenBLAS
// param.h SGEMM_DEFAULT_Q), which is whestbake's --dot-product muladd for
// widths up to 384, whatever the row count. The kernel needs AVX, which
// every x86-64 CI host has (Intel since Sandy Bridge, AMD since
// Bulldozer), with or without AVX-512: forcing it makes the test the same
// on all of them. The Nehalem kernel, which needs SSE4.2 only, sums the
// last column of an odd width in another order for the last rows of a
// chunk; at two threads OpenBLAS may split the product, so one thread.
var bitsEnv = []string{"OPENBLAS_CORETYPE=Sandybridge", "OPENBLAS_NUM_THREADS=1", "OMP_NUM_THREADS=1"}

// saltCase is a seed protocol 4.0 bake: whest's side goes through
// whestbench's Python API, whestbake's through --seed-protocol 4.0.
type saltCase struct {
	hex, id string
	// withhold records only the salt's digest: whestbake reads the salt
	// from WHEST_SEED_SALT, whestbench is given it as seed_salt.
	withhold bool
}

// bakeCase is one row of the table: one bake of whest's and whestbake's,
// of the same seeds file.
type bakeCase struct {
	name          string
	width, depth  int
	nSamples      int64
	seeds         []int64
	split, config string
	// parts are the bakes of a sliced split, each one flag both CLIs take
	// (--slice=K/N or --mlp-range=A-B); each side merges its own. None:
	// one whole bake.
	parts []string
	salt  *saltCase
	// whestOnly are flags only whest is given.
	whestOnly []string
	mode      statsMode
}

// The salt of the protocol 4.0 cases (32 bytes, as whestbench generates).
const testSalt = "5be1c0ffee5a17ed0123456789abcdef00112233445566778899aabbccddeeff"

// bakeCases: widths 1 to 512, odd ones among them, depths 1 to 8, 1 to 5
// MLPs, sample counts that leave a ragged last chunk of whestbench's chunk
// rule (max(1024, min(16384, 2^20 // W)) rows), slices and MLP ranges
// merged by each side, a holdout split and config, --chunk-size, and seed
// protocol 4.0 with a published and a withheld salt, whole and sliced.
var bakeCases = []bakeCase{
	{name: "fixture-seeds", width: 4, depth: 2, nSamples: 100, seeds: []int64{1001, 2002, 3003, 4004}},
	{name: "width-1", width: 1, depth: 3, nSamples: 2500, seeds: testSeeds(3, 3)},
	{name: "odd-and-deep", width: 7, depth: 8, nSamples: 1000, seeds: testSeeds(7, 2)},
	{name: "five-mlps", width: 33, depth: 5, nSamples: 1500, seeds: testSeeds(33, 5)},
	{name: "ragged-chunk", width: 64, depth: 4, nSamples: 20000, seeds: testSeeds(64, 1)},
	{name: "width-127", width: 127, depth: 2, nSamples: 3000, seeds: testSeeds(127, 2)},
	{name: "width-256-depth-8", width: 256, depth: 8, nSamples: 5000, seeds: testSeeds(256, 1)},
	{
		name: "slices", width: 16, depth: 3, nSamples: 700, seeds: testSeeds(16, 5),
		split: "holdout", config: "hc",
		parts: []string{"--slice=0/3", "--slice=1/3", "--slice=2/3"},
	},
	{
		name: "mlp-ranges", width: 9, depth: 2, nSamples: 300, seeds: testSeeds(9, 4),
		parts: []string{"--mlp-range=0-0", "--mlp-range=1-3"},
	},
	{
		// whest's CPU backend takes --chunk-size and ignores it
		// (cli.py passes it to create_dataset_torch only); whestbake's
		// numpy sampler refuses it (TestWhestBakeInputs).
		name: "chunk-size-ignored", width: 12, depth: 2, nSamples: 5000, seeds: testSeeds(12, 2),
		whestOnly: []string{"--chunk-size", "1000"},
	},
	{
		name: "protocol-4", width: 6, depth: 2, nSamples: 400, seeds: testSeeds(6, 3),
		salt: &saltCase{hex: testSalt, id: "public-2026"},
	},
	{
		name: "protocol-4-sliced", width: 5, depth: 3, nSamples: 200, seeds: testSeeds(5, 5),
		parts: []string{"--slice=0/2", "--slice=1/2"},
		salt:  &saltCase{hex: testSalt},
	},
	{
		name: "protocol-4-withheld", width: 8, depth: 2, nSamples: 300, seeds: testSeeds(8, 3),
		split: "holdout",
		parts: []string{"--mlp-range=0-1", "--mlp-range=2-2"},
		salt:  &saltCase{hex: testSalt, id: "holdout-2026", withhold: true},
	},
	{name: "fma-width-256", width: 256, depth: 1, nSamples: 3000, seeds: testSeeds(257, 2), mode: bound},
	{
		// 2048 + 1 rows: numpy's one-row product is OpenBLAS's gemv.
		name: "fma-width-512-one-row-chunk", width: 512, depth: 1, nSamples: 2049,
		seeds: testSeeds(512, 2), mode: bound,
	},
	{
		// rows·W² ≤ 10⁶: OpenBLAS's small-matrix kernel on AVX-512 hosts.
		name: "fma-small-matrix", width: 100, depth: 2, nSamples: 50, seeds: testSeeds(100, 2), mode: bound,
	},
	{name: "fma-one-sample", width: 16, depth: 3, nSamples: 1, seeds: testSeeds(17, 2), mode: bound},
	{name: "fma-odd", width: 37, depth: 2, nSamples: 1000, seeds: testSeeds(37, 3), mode: bound},
}

// testSeeds is n distinct int63 seeds derived from base.
func testSeeds(base int64, n int) []int64 {
	s := make([]int64, n)
	for i := range s {
		s[i] = base*1_000_003 + int64(i)*7919 + 1
	}
	return s
}

// cpuChunk is whestbench's CPU chunk rule (simulation.py _pick_chunk_size).
func cpuChunk(width int) int { return max(1024, min(16384, (1<<20)/width)) }

// lastChunkRows is how many rows the last chunk of whestbench's CPU loop
// holds.
func (c bakeCase) lastChunkRows() int64 {
	chunk := int64(cpuChunk(c.width))
	return c.nSamples - (c.nSamples-1)/chunk*chunk
}

// dotProduct is the --dot-product whestbake is given.
func (c bakeCase) dotProduct() string {
	if c.mode == bits {
		return "muladd"
	}
	return "fma"
}

// bakeRun is one case once baked by both sides: the directories of each
// part and of the merged split (or of the whole bake), and where in the
// judge's jobs each one's dump is.
type bakeRun struct {
	c         bakeCase
	seedsFile string
	// whest and ours are the directories compared pairwise: the parts,
	// then the merged split; or the whole bake.
	whest, ours []string
	// dumps[i] indexes the judge's results for whest[i] and ours[i].
	dumps [][2]int
	// bakes index whest's bakes and merge among the judge's jobs.
	bakes []int
	// refJob indexes the reference of a bound case.
	refJob int
}

// whestbench's `whest dataset bake` and `whestbake dataset bake --sampler
// numpy` bake the same seeds file into the same rows and metadata:
// mlp_id, mlp_name, mlp_seed and weights bit for bit under seed protocol
// 3.0 and 4.0, the statistics bit for bit where docs/NUMPY.md says numpy's
// BLAS sums as whestbake does (bitsEnv, --dot-product muladd) and within
// the bound of float32 rounding otherwise (whest's own kernel, fma),
// metadata.json key by key (metadataRules) and sampling_budget_breakdown
// field by field (breakdownTimings), for every part of a sliced bake and
// for the split each side merges.
func TestWhestBakeJudgesNumpySampler(t *testing.T) {
	env := Need(t)
	t.Setenv("WHEST_SEED_SALT", testSalt) // whestbake's withheld salt
	root := t.TempDir()
	jobs := map[statsMode][]judgeJob{}
	runs := make([]*bakeRun, len(bakeCases))
	for i, c := range bakeCases {
		runs[i] = prepareCase(t, root, c, jobs)
	}
	results := judgeBoth(t, env, jobs)
	checkBitsKernel(t, results[bits])
	if b := results[bound].BLAS; len(b) > 0 {
		t.Logf("bound cases: whest ran OpenBLAS %s, kernel %s, %d threads",
			b[0].Version, b[0].Architecture, b[0].NumThreads)
	}
	for _, r := range runs {
		t.Run(r.c.name, func(t *testing.T) {
			r.check(t, results[r.c.mode].Results)
		})
	}
}

// judgeBoth runs the bits cases' jobs under bitsEnv and the bound cases'
// as the host has it, in two processes at once.
func judgeBoth(t *testing.T, env *Env, jobs map[statsMode][]judgeJob) map[statsMode]judged {
	t.Helper()
	type outcome struct {
		j   judged
		err error
	}
	boundDir := t.TempDir()
	done := make(chan outcome, 1)
	go func() {
		j, err := judgeJobs(env, jobs[bound], nil, boundDir)
		done <- outcome{j, err}
	}()
	b, errBits := judgeJobs(env, jobs[bits], bitsEnv, t.TempDir())
	o := <-done
	for _, err := range []error{errBits, o.err} {
		if err != nil {
			t.Fatal(err)
		}
	}
	return map[statsMode]judged{bits: b, bound: o.j}
}

// checkBitsKernel fails unless the bits cases ran where bitsEnv puts them.
func checkBitsKernel(t *testing.T, j judged) {
	t.Helper()
	if len(j.BLAS) != 1 || j.BLAS[0].Architecture != "Sandybridge" || j.BLAS[0].NumThreads != 1 {
		t.Fatalf("the bits cases must run OpenBLAS's Sandybridge kernel (it needs AVX) on one thread; "+
			"threadpoolctl reports %+v", j.BLAS)
	}
}

// prepareCase bakes c with whestbake, merging its parts, and adds to jobs
// what whest must do for it: its bakes, its merge, the dumps of both sides'
// directories and, for a bound case, the reference.
func prepareCase(t *testing.T, root string, c bakeCase, jobs map[statsMode][]judgeJob) *bakeRun {
	t.Helper()
	if c.mode == bits && (c.width > 384 || c.lastChunkRows() == 1) {
		t.Fatalf("case %s: docs/NUMPY.md promises bits only for W ≤ 384 without a one-row "+
			"chunk; make it a bound case", c.name)
	}
	dir := filepath.Join(root, c.name)
	r := &bakeRun{c: c, seedsFile: filepath.Join(dir, "seeds.json")}
	b, err := json.Marshal(c.seeds)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(r.seedsFile, b, 0o644); err != nil {
		t.Fatal(err)
	}
	add := func(j judgeJob) int {
		jobs[c.mode] = append(jobs[c.mode], j)
		return len(jobs[c.mode]) - 1
	}
	parts := c.parts
	if len(parts) == 0 {
		parts = []string{""}
	}
	for i, p := range parts {
		w, o := filepath.Join(dir, "whest", strconv.Itoa(i)), filepath.Join(dir, "ours", strconv.Itoa(i))
		r.bakes = append(r.bakes, add(r.whestBake(p, w)))
		whestbake(t, r.oursBake(p, o)...)
		r.whest, r.ours = append(r.whest, w), append(r.ours, o)
	}
	if len(c.parts) > 0 {
		w, o := filepath.Join(dir, "whest", "merged"), filepath.Join(dir, "ours", "merged")
		merge := append(append([]string{"dataset", "merge"}, r.whest...), "--output", w)
		r.bakes = append(r.bakes, add(judgeJob{CLI: merge}))
		whestbake(t, append(append([]string{"dataset", "merge"}, r.ours...), "--output", o)...)
		r.whest, r.ours = append(r.whest, w), append(r.ours, o)
	}
	for i := range r.whest {
		r.dumps = append(r.dumps, [2]int{add(judgeJob{Dump: r.whest[i]}), add(judgeJob{Dump: r.ours[i]})})
	}
	if c.mode == bound {
		r.refJob = add(judgeJob{Reference: &referenceJob{
			Width: c.width, Depth: c.depth, NSamples: c.nSamples, Seeds: c.seeds,
		}})
	}
	return r
}

// whestBake is whest's bake of part p ("" for the whole split) into out:
// its CLI under protocol 3.0, whestbench.dataset.create_dataset under 4.0.
func (r *bakeRun) whestBake(p, out string) judgeJob {
	c := r.c
	if c.salt == nil {
		args := []string{"dataset", "bake",
			"--n-mlps", strconv.Itoa(len(c.seeds)),
			"--n-samples", strconv.FormatInt(c.nSamples, 10),
			"--width", strconv.Itoa(c.width),
			"--depth", strconv.Itoa(c.depth),
			"--mlp-seeds", r.seedsFile,
			"--output", out,
		}
		args = append(args, c.commonFlags(p)...)
		return judgeJob{CLI: append(args, c.whestOnly...)}
	}
	kwargs := map[string]any{
		"n_mlps":                len(c.seeds),
		"n_samples":             c.nSamples,
		"width":                 c.width,
		"depth":                 c.depth,
		"mlp_seeds":             c.seeds,
		"output_path":           out,
		"seed_protocol_version": "4.0",
		"seed_salt":             c.salt.hex,
		"withhold_salt":         c.salt.withhold,
	}
	if c.split != "" {
		kwargs["split"] = c.split
	}
	if c.config != "" {
		kwargs["config"] = c.config
	}
	if c.salt.id != "" {
		kwargs["salt_id"] = c.salt.id
	}
	if p != "" {
		kwargs["mlp_range"] = partRange(p, len(c.seeds))
	}
	return judgeJob{API: kwargs}
}

// oursBake is whestbake's command line for part p into out.
func (r *bakeRun) oursBake(p, out string) []string {
	c := r.c
	args := []string{"dataset", "bake",
		"--sampler", "numpy",
		"--dot-product", c.dotProduct(),
		"--n-mlps", strconv.Itoa(len(c.seeds)),
		"--n-samples", strconv.FormatInt(c.nSamples, 10),
		"--width", strconv.Itoa(c.width),
		"--depth", strconv.Itoa(c.depth),
		"--mlp-seeds", r.seedsFile,
		"--output", out,
	}
	args = append(args, c.commonFlags(p)...)
	if s := c.salt; s != nil {
		args = append(args, "--seed-protocol", "4.0")
		if s.withhold {
			args = append(args, "--withhold-salt")
		} else {
			args = append(args, "--seed-salt", s.hex)
		}
		if s.id != "" {
			args = append(args, "--salt-id", s.id)
		}
	}
	return args
}

// commonFlags are the flags both CLIs take for part p of c.
func (c bakeCase) commonFlags(p string) []string {
	var f []string
	if c.split != "" {
		f = append(f, "--split", c.split)
	}
	if c.config != "" {
		f = append(f, "--config", c.config)
	}
	if p != "" {
		f = append(f, p)
	}
	return f
}

// partRange is the [start, end) of MLPs that part flag p names, by
// whestbench's rule (cli.py _parse_mlp_range_cli): --slice=K/N holds
// [K·n // N, (K+1)·n // N), --mlp-range=A-B holds A to B inclusive.
func partRange(p string, n int) []int {
	flag, val, _ := strings.Cut(p, "=")
	a, b, _ := strings.Cut(val, map[string]string{"--slice": "/", "--mlp-range": "-"}[flag])
	x, _ := strconv.Atoi(a)
	y, _ := strconv.Atoi(b)
	if flag == "--slice" {
		return []int{x * n / y, (x + 1) * n / y}
	}
	return []int{x, y + 1}
}

// check compares every pair of directories of r.
func (r *bakeRun) check(t *testing.T, results []judgeResult) {
	for _, i := range r.bakes {
		if j := results[i]; j.Code != 0 {
			t.Fatalf("whest exits %d:\n%s", j.Code, j.Stderr)
		}
	}
	var ref []referenceMLP
	if r.c.mode == bound {
		ref = results[r.refJob].Reference
	}
	for i := range r.whest {
		theirs, ours := results[r.dumps[i][0]].Dump, results[r.dumps[i][1]].Dump
		if theirs == nil || ours == nil {
			t.Fatalf("%s: no dump", r.whest[i])
		}
		name := filepath.Base(r.whest[i])
		t.Run(name, func(t *testing.T) {
			r.checkPair(t, theirs, ours, r.ours[i], ref)
		})
	}
	if len(r.c.parts) > 0 {
		r.checkMergedTimes(t, results)
	}
}

// checkPair compares whest's directory theirs with whestbake's ours.
func (r *bakeRun) checkPair(t *testing.T, theirs, ours *dumped, oursDir string, ref []referenceMLP) {
	if !slices.Equal(theirs.Shards, ours.Shards) {
		t.Errorf("shards: whest %v, whestbake %v", theirs.Shards, ours.Shards)
	}
	if theirs.Schema != ours.Schema {
		t.Errorf("Arrow schema:\nwhest:\n%s\nwhestbake:\n%s", theirs.Schema, ours.Schema)
	}
	for k, v := range theirs.SchemaMetadata {
		if ours.SchemaMetadata[k] != v {
			t.Errorf("parquet schema metadata %q:\nwhest:     %s\nwhestbake: %s", k, v, ours.SchemaMetadata[k])
		}
	}
	checkMetadata(t, r, theirs.Metadata, ours.Metadata)
	if len(theirs.Rows) != len(ours.Rows) {
		t.Fatalf("rows: whest %d, whestbake %d", len(theirs.Rows), len(ours.Rows))
	}
	for i := range theirs.Rows {
		a, b := theirs.Rows[i], ours.Rows[i]
		if a.MLPID != b.MLPID || a.MLPName != b.MLPName || a.MLPSeed != b.MLPSeed {
			t.Errorf("row %d: whest (%d, %q, %d), whestbake (%d, %q, %d)", i,
				a.MLPID, a.MLPName, a.MLPSeed, b.MLPID, b.MLPName, b.MLPSeed)
		}
		if a.WeightsSHA256 != b.WeightsSHA256 {
			t.Errorf("row %d (mlp %d): weights differ (sha256 %s, whestbake's %s)",
				i, a.MLPID, a.WeightsSHA256, b.WeightsSHA256)
		}
		checkBreakdown(t, fmt.Sprintf("row %d", i), r.c, a.Breakdown, b.Breakdown)
	}
	if r.c.mode == bits {
		checkSameStats(t, theirs.Rows, ours.Rows)
		return
	}
	checkBoundedStats(t, r.c, theirs.Rows, ours.Rows, filepath.Join(oursDir, "data", ours.Shards[0]), ref)
}

// checkSameStats requires every statistic of every row to be the same bits.
func checkSameStats(t *testing.T, theirs, ours []dumpedRow) {
	t.Helper()
	for i := range theirs {
		a, b := theirs[i], ours[i]
		for name, pair := range map[string][2][]string{
			"all_layer_means": {a.LayerMeans, b.LayerMeans},
			"final_means":     {a.FinalMeans, b.FinalMeans},
		} {
			for j := range pair[0] {
				if pair[0][j] != pair[1][j] {
					t.Errorf("mlp %d: %s[%d] has bits %s, whestbake's %s", a.MLPID, name, j, pair[0][j], pair[1][j])
				}
			}
		}
		if a.AvgVariance != b.AvgVariance {
			t.Errorf("mlp %d: avg_variance has bits %s, whestbake's %s", a.MLPID, a.AvgVariance, b.AvgVariance)
		}
	}
}

// checkMergedTimes: each side's merged split was created when its first
// part was (whestbench's merge_datasets takes the earliest created_at_utc)
// and merged after that.
func (r *bakeRun) checkMergedTimes(t *testing.T, results []judgeResult) {
	last := len(r.whest) - 1
	for side, name := range []string{"whest", "whestbake"} {
		var created []string
		for i := 0; i < last; i++ {
			created = append(created, metadataString(t, results[r.dumps[i][side]].Dump.Metadata, "created_at_utc"))
		}
		merged := results[r.dumps[last][side]].Dump.Metadata
		if got := metadataString(t, merged, "created_at_utc"); got != slices.Min(created) {
			t.Errorf("%s's merged created_at_utc %s, want the earliest part's, %s", name, got, slices.Min(created))
		}
		if at := metadataString(t, merged, "merged_at_utc"); at < slices.Max(created) {
			t.Errorf("%s's merged_at_utc %s is before a part was created (%s)", name, at, slices.Max(created))
		}
	}
}

// seedsSHA256 is the hex sha256 of the case's seeds file.
func (r *bakeRun) seedsSHA256(t *testing.T) string {
	b, err := os.ReadFile(r.seedsFile)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
