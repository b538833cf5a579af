package cli

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/whestbake/whestbake/dataset"
)

// Every bad input gets one clear message naming the field and the fix, a
// non-zero exit code, and leaves nothing behind in the output's directory.
func TestBakeRejectsBadInput(t *testing.T) {
	dir := t.TempDir()
	seeds := func(name, content string) string {
		return writeFile(t, filepath.Join(dir, name), content)
	}
	good := seeds("good.json", "[11, 22, 33, 44, 55]")
	existing := filepath.Join(dir, "exists")
	if err := os.Mkdir(existing, 0o755); err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(dir, "work")
	if err := os.Mkdir(work, 0o755); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(work, "out")
	salt := strings.Repeat("ab", 32)
	t.Setenv("WHEST_SEED_SALT", "")
	base := func(extra ...string) []string {
		args := []string{"dataset", "bake",
			"--n-mlps", "5", "--width", "4", "--depth", "2", "--n-samples", "1000", "--output", out}
		return append(args, extra...)
	}
	// replace sets flag to value in base's arguments.
	replace := func(flag, value string, extra ...string) []string {
		a := base(extra...)
		for i := range a {
			if a[i] == flag {
				a[i+1] = value
			}
		}
		return a
	}
	cases := []struct {
		name string
		args []string
		want string // substring of stderr
	}{
		{"zero mlps", replace("--n-mlps", "0"),
			"--n-mlps is missing or 0: must be in [1, 16777216]"},
		{"absurd mlps", replace("--n-mlps", "1e15"),
			"--n-mlps = 1000000000000000: must be in [1, 16777216]"},
		{"negative mlps", replace("--n-mlps", "-3"), "negative"},
		{"zero samples", replace("--n-samples", "0"),
			"--n-samples is missing or 0: must be in [1, "},
		{"fractional samples", replace("--n-samples", "2.5"), "not a whole number"},
		{"garbage samples", replace("--n-samples", "lots"), "not a number"},
		{"bad underscores", replace("--n-samples", "1__000"), "underscores"},
		{"absurd samples", replace("--n-samples", "1e30"), "absurdly large"},
		{"zero width", replace("--width", "0"), "--width is missing or 0: must be in [1, 16384]"},
		{"absurd width", replace("--width", "100000"), "--width = 100000: must be in [1, 16384]"},
		{"every field at once", replace("--width", "0", "--depth", "5000"),
			"--width is missing or 0: must be in [1, 16384] (neurons per layer); " +
				"--depth = 5000: must be in [1, 1024]"},
		{"zero depth", replace("--depth", "0"), "--depth is missing or 0"},
		{"shape too big for memory", replace("--width", "16384", "--depth", "1024"),
			"a 16384×1024 MLP needs about 3.0 TB of memory to bake and write " +
				"(one row alone is 1.0 TB)"},
		{"shape above --max-memory",
			append(replace("--width", "1024", "--depth", "16"), "--max-memory", "100MiB"),
			"above the 100.0 MB this process may use"},
		{"missing output",
			[]string{"dataset", "bake",
				"--n-mlps", "1", "--width", "4", "--depth", "1", "--n-samples", "9"},
			"--output is required"},
		{"malformed seeds", base("--mlp-seeds", seeds("bad.json", "[1, 2,")), "invalid JSON"},
		{"seeds not an array", base("--mlp-seeds", seeds("obj.json", `{"seeds": [1]}`)),
			"must contain a JSON array"},
		{"duplicate seeds", base("--mlp-seeds", seeds("dup.json", "[1, 2, 3, 2, 5]")),
			"duplicate at indices [1, 3]"},
		{"seed too large",
			base("--mlp-seeds", seeds("big.json", "[1, 2, 3, 4, 9223372036854775808]")),
			"out of range [0, 2**63)"},
		{"negative seed", base("--mlp-seeds", seeds("neg.json", "[1, 2, -3, 4, 5]")),
			"mlp_seeds[2] = -3 is out of range"},
		{"float seed", base("--mlp-seeds", seeds("float.json", "[1, 2, 3.0, 4, 5]")),
			"mlp_seeds[2] must be an integer"},
		{"string seed", base("--mlp-seeds", seeds("str.json", `[1, 2, "3", 4, 5]`)),
			"must be an integer; got a string"},
		{"wrong seed count", base("--mlp-seeds", seeds("four.json", "[1, 2, 3, 4]")),
			"has 4 seeds, expected n-mlps = 5"},
		{"missing seeds file", base("--mlp-seeds", filepath.Join(dir, "nope.json")),
			"cannot read --mlp-seeds"},
		// Read up to a bound, not until memory runs out.
		{"endless seeds file", base("--mlp-seeds", "/dev/zero"),
			"seeds file /dev/zero is over 4416 bytes, more than a JSON list of 5 seeds takes"},
		{"split name too long for a file name", base("--split", strings.Repeat("s", 300)),
			"--split"},
		{"split name datasets cannot load", base("--split", "mini-a"),
			`--split "mini-a" cannot be loaded: a split name is a lowercase ASCII letter ` +
				`followed by lowercase ASCII letters and digits, [a-z][a-z0-9]*`},
		{"seeds and seed", base("--mlp-seeds", good, "--seed", "3"),
			"either --mlp-seeds or --seed"},
		{"slice K = N", base("--slice", "4/4"), "need 0 <= K < N"},
		{"zero slices", base("--slice", "0/0"), "at least 1"},
		{"more slices than MLPs", base("--slice", "1/6"), "leave some slices empty"},
		{"malformed slice", base("--slice", "half"), "--slice must be K/N"},
		{"range beyond n", base("--mlp-range", "3-9"), "is invalid for 5 MLPs"},
		{"reversed range", base("--mlp-range", "4-2"), "is invalid for 5 MLPs"},
		{"slice and range", base("--slice", "0/2", "--mlp-range", "0-1"),
			"either --mlp-range or --slice"},
		{"uppercase split", base("--split", "Public"), "--split"},
		{"underscore split", base("--split", "my_split"), `use "mysplit"`},
		{"trailing hyphen split", base("--split", "public-"), `use "public"`},
		{"bad config", base("--config", "1st"), "--config"},
		{"existing output", replace("--output", existing), "already exists"},
		{"unknown sampler", base("--sampler", "torch"), `--sampler "torch" is unknown`},
		{"cuda without build", base("--device", "cuda"), "built without CUDA"},
		{"unknown device", base("--device", "tpu"), `--device "tpu" unknown`},
		{"numpy with chunk size", base("--sampler", "numpy", "--chunk-size", "100"),
			"--chunk-size = 100: the numpy sampler always uses whestbench's chunk rule"},
		{"unknown dot product", base("--sampler", "numpy", "--dot-product", "fast"),
			"--dot-product \"fast\" is unknown"},
		{"unknown precision", base("--precision", "tf32"), `--precision "tf32" is unknown`},
		{"tf32x3 with numpy", base("--sampler", "numpy", "--precision", "tf32x3"),
			`--precision "tf32x3" runs the philox sampler only`},
		{"tf32x3 left to auto", base("--precision", "tf32x3"),
			`--device "auto": precision tf32x3 runs on the cuda device only`},
		{"tf32x3 on the cpu", base("--precision", "tf32x3", "--device", "cpu"),
			`--device "cpu": precision tf32x3 runs on the cuda device only`},
		{"bad config file", base("--config-file", seeds("cfg.yaml", "width: [oops\n")),
			"cfg.yaml: line 1"},
		{"salt under 3.0", base("--seed-salt", salt),
			"--seed-salt is only meaningful for seed protocol 4.0"},
		{"withheld salt under 3.0", base("--withhold-salt", "--salt-id", "h"),
			"--withhold-salt is only meaningful for seed protocol 4.0"},
		{"protocol 2.0", base("--seed-protocol", "2.0"),
			"--seed-protocol 2.0 is whestbench's legacy protocol"},
		{"unknown protocol", base("--seed-protocol", "4"), `--seed-protocol "4" is unknown`},
		{"short salt", base("--seed-protocol", "4.0", "--seed-salt", "abcd"),
			"--seed-salt is 2 bytes: bake with a 32-byte salt"},
		{"non-hex salt", base("--seed-protocol", "4.0", "--seed-salt", "xyz"),
			"--seed-salt is not a hex string"},
		{"sliced 4.0 without salt", base("--seed-protocol", "4.0", "--slice", "0/2"),
			"sliced seed protocol 4.0 bake (--slice or --mlp-range) needs --seed-salt"},
		{"whole range 4.0 without salt", base("--seed-protocol", "4.0", "--mlp-range", "0-4"),
			"needs --seed-salt"},
		{"withheld salt not in env",
			base("--seed-protocol", "4.0", "--withhold-salt", "--salt-id", "h"),
			"--withhold-salt takes the salt from WHEST_SEED_SALT, which is not set"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, stdout, stderr := run(t, c.args...)
			if code == 0 {
				t.Fatalf("accepted; stdout:\n%s", stdout)
			}
			if !strings.Contains(stderr, c.want) {
				t.Fatalf("stderr %q does not mention %q", stderr, c.want)
			}
			if strings.Count(strings.TrimSpace(stderr), "\n") > 1 {
				t.Errorf("want one clear message, got:\n%s", stderr)
			}
			if left := entries(t, work); len(left) != 0 {
				t.Fatalf("left behind %v", left)
			}
		})
	}
}

func TestMergeAndReadRejectBadDatasets(t *testing.T) {
	dir := t.TempDir()
	seeds := writeFile(t, filepath.Join(dir, "s.json"), "[1, 2, 3, 4]")
	other := writeFile(t, filepath.Join(dir, "o.json"), "[5, 6, 7, 8]")
	bk := func(name string, extra ...string) string {
		p := filepath.Join(dir, name)
		args := []string{"dataset", "bake",
			"--n-mlps", "4", "--width", "4", "--depth", "2", "--n-samples", "500", "--output", p}
		args = append(args, extra...)
		mustRun(t, args...)
		return p
	}
	p0 := bk("p0", "--mlp-seeds", seeds, "--mlp-range", "0-1")
	p1 := bk("p1", "--mlp-seeds", seeds, "--mlp-range", "2-3")
	p12 := bk("p12", "--mlp-seeds", seeds, "--mlp-range", "1-2")
	p3 := bk("p3", "--mlp-seeds", seeds, "--mlp-range", "3-3")
	pOther := bk("pother", "--mlp-seeds", other, "--mlp-range", "2-3")
	pNumpy := bk("pnumpy", "--mlp-seeds", seeds, "--mlp-range", "2-3", "--sampler", "numpy")
	full := bk("full", "--mlp-seeds", seeds)

	corrupt := bk("corrupt", "--mlp-seeds", seeds, "--mlp-range", "2-3")
	pq := filepath.Join(corrupt, "data", "public-00000-of-00001.parquet")
	b := readBytes(t, pq)
	if err := os.WriteFile(pq, b[:len(b)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	liar := bk("liar", "--mlp-seeds", seeds)
	mdPath := filepath.Join(liar, "metadata.json")
	md := strings.Replace(string(readBytes(t, mdPath)), `"width": 4`, `"width": 8`, 1)
	writeFile(t, mdPath, md)

	work := filepath.Join(dir, "work")
	if err := os.Mkdir(work, 0o755); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(work, "out")
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"overlap", []string{"dataset", "merge", p0, p12, p1, "--output", out},
			"mlp_range starts at"},
		{"gap", []string{"dataset", "merge", p0, p3, "--output", out}, "gap"},
		{"missing tail", []string{"dataset", "merge", p0, "--output", out}, "gap"},
		{"different seeds file", []string{"dataset", "merge", p0, pOther, "--output", out},
			"seed_file_sha256"},
		{"different sampler", []string{"dataset", "merge", p0, pNumpy, "--output", out}, "sampler"},
		{"complete input", []string{"dataset", "merge", full, "--output", out}, "complete"},
		{"truncated parquet", []string{"dataset", "merge", p0, corrupt, "--output", out},
			"parquet"},
		{"inspect truncated", []string{"dataset", "inspect", corrupt}, "parquet"},
		{"metadata lies", []string{"dataset", "inspect", liar}, "width"},
		{"partial to combine", []string{"dataset", "combine-splits", p0, "--output", out},
			"partial"},
		{"not a dataset", []string{"dataset", "inspect", seeds}, "metadata.json"},
		{"merge into existing", []string{"dataset", "merge", p0, p1, "--output", full},
			"already exists"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, _, stderr := run(t, c.args...)
			if code == 0 || !strings.Contains(stderr, c.want) {
				t.Fatalf("exit %d, stderr %q; want failure mentioning %q", code, stderr, c.want)
			}
			if left := entries(t, work); len(left) != 0 {
				t.Fatalf("left behind %v", left)
			}
		})
	}
}

// A row whose statistics no bake produces (a NaN or an infinity in any
// array, an avg_variance that is not a finite variance of float32 values)
// is refused by every reader: inspect, verify, compare, merge,
// combine-splits, report and upload, each naming the file, the row and the
// field, and none leaving an output or reaching the Hub.
func TestReadersRefuseNonFiniteStatistics(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	at := func(name string) string { return filepath.Join(dir, name) }
	seeds := writeFile(t, at("s.json"), "[1, 2, 3]")
	clean := at("clean")
	mustRun(t, "dataset", "bake", "--n-mlps", "3", "--width", "4", "--depth", "2",
		"--n-samples", "300", "--mlp-seeds", seeds, "-o", clean)
	part := at("part")
	for rng, p := range map[string]string{"0-1": part, "2-2": part + "-rest"} {
		mustRun(t, "dataset", "bake", "--n-mlps", "3", "--width", "4", "--depth", "2",
			"--n-samples", "300", "--mlp-seeds", seeds, "--mlp-range", rng, "-o", p)
	}
	nan32, inf32 := float32(math.NaN()), float32(math.Inf(1))
	work := at("work")
	if err := os.Mkdir(work, 0o755); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(work, "out")
	t.Setenv("HF_TOKEN", "hf_never_used_token")
	for _, c := range []struct {
		field string
		edit  func(r *dataset.Row)
	}{
		{"weights[5] is NaN", func(r *dataset.Row) { r.Weights[5] = nan32 }},
		{"all_layer_means[2] is +Inf", func(r *dataset.Row) { r.LayerMeans[2] = inf32 }},
		{"final_means[0] is -Inf", func(r *dataset.Row) { r.FinalMeans[0] = -inf32 }},
		{"avg_variance is NaN", func(r *dataset.Row) { r.AvgVariance = math.NaN() }},
		{"avg_variance is 1e+300", func(r *dataset.Row) { r.AvgVariance = 1e300 }},
	} {
		spoil := func(rows []dataset.Row) { c.edit(&rows[1]) }
		bad := rewrite(t, clean, at(c.field), spoil)
		badPart := rewrite(t, part, at(c.field+" partial"), spoil)
		want := "public-00000-of-00001.parquet, row 1: row mlp_id=1: " + c.field
		for _, args := range [][]string{
			{"dataset", "inspect", bad},
			{"dataset", "verify", bad, "--k", "1"},
			{"dataset", "compare", clean, bad},
			{"dataset", "merge", badPart, at("part") + "-rest", "--output", out},
			{"dataset", "combine-splits", bad, "--output", out},
			{"dataset", "report", bad},
			{"dataset", "upload", bad, "--repo", "alice/x", "--endpoint", "http://127.0.0.1:1"},
		} {
			code, _, errs := run(t, args...)
			if code == 0 || !strings.Contains(errs, want) {
				t.Errorf("%s: %v: exit %d, stderr %q; want %q", c.field, args[:2], code, errs, want)
			}
			if left := entries(t, work); len(left) != 0 {
				t.Fatalf("%v left %v behind", args[:2], left)
			}
		}
	}
}
