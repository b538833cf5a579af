package pyjudge

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// inputCase is one input to `dataset bake`, given to both programs.
type inputCase struct {
	name string
	// seeds is the --mlp-seeds file's content ("" for none).
	seeds string
	// flags replace the shape's flags where they name the same one.
	flags []string
	// existing gives both an output directory that holds a file.
	existing bool
	// whestTakes and oursTake say whether each program bakes it.
	whestTakes, oursTake bool
	// why explains a difference; docs/WHESTBENCH.md's table says the same.
	why string
}

// inputCases: whest and whestbake take and refuse the same seeds files and
// shapes, with the differences docs/WHESTBENCH.md lists.
var inputCases = []inputCase{
	{name: "seeds", seeds: "[1, 2, 3]", whestTakes: true, oursTake: true},
	{name: "seeds-spaced", seeds: " [1,2,3] \n", whestTakes: true, oursTake: true},
	{name: "seeds-int63-max", seeds: "[1, 2, 9223372036854775807]", whestTakes: true, oursTake: true},
	{name: "seeds-minus-zero", seeds: "[1, 2, -0]", whestTakes: true, oursTake: true},
	{name: "seeds-duplicate", seeds: "[1, 2, 2]"},
	{name: "seeds-float", seeds: "[1, 2.0, 3]"},
	{name: "seeds-exponent", seeds: "[1, 2, 1e2]"},
	{name: "seeds-bool", seeds: "[1, true, 3]"},
	{name: "seeds-negative", seeds: "[1, -2, 3]"},
	{name: "seeds-2^63", seeds: "[1, 9223372036854775808, 3]"},
	{name: "seeds-too-few", seeds: "[1, 2]"},
	{name: "seeds-object", seeds: `{"a": 1}`},
	{name: "seeds-truncated", seeds: "[1, 2, 3"},
	{name: "seeds-bom", seeds: "\ufeff[1, 2, 3]"},
	{name: "seeds-trailing-value", seeds: "[1, 2, 3] [4]"},
	{name: "seeds-nan", seeds: "[1, 2, NaN]"},
	{name: "seeds-leading-zero", seeds: "[01, 2, 3]"},
	{name: "seeds-trailing-comma", seeds: "[1, 2, 3, ]"},
	{name: "width-0", seeds: "[1, 2, 3]", flags: []string{"--width", "0"}},
	{name: "depth-0", seeds: "[1, 2, 3]", flags: []string{"--depth", "0"}},
	{name: "n-mlps-0", flags: []string{"--n-mlps", "0"}},
	{name: "slice-past-end", seeds: "[1, 2, 3]", flags: []string{"--slice", "3/3"}},
	{name: "slice-empty", seeds: "[1, 2, 3]", flags: []string{"--slice", "0/4"}},
	{name: "slice-malformed", seeds: "[1, 2, 3]", flags: []string{"--slice", "1-2"}},
	{name: "mlp-range-reversed", seeds: "[1, 2, 3]", flags: []string{"--mlp-range", "2-1"}},
	{name: "mlp-range-past-end", seeds: "[1, 2, 3]", flags: []string{"--mlp-range", "0-3"}},
	{name: "slice-and-mlp-range", seeds: "[1, 2, 3]", flags: []string{"--slice", "0/2", "--mlp-range", "0-1"}},
	{name: "split-capital", seeds: "[1, 2, 3]", flags: []string{"--split", "Public"}},
	{name: "config-underscore", seeds: "[1, 2, 3]", flags: []string{"--config", "my_conf"}},
	{name: "config-hyphen", seeds: "[1, 2, 3]", flags: []string{"--config", "my-conf"}, whestTakes: true, oursTake: true},
	{
		name: "chunk-size", seeds: "[1, 2, 3]", flags: []string{"--chunk-size", "1000"}, whestTakes: true,
		why: "whest's CPU backend ignores --chunk-size; whestbake's numpy sampler refuses what it would not use",
	},
	{
		name: "mlps-per-batch", seeds: "[1, 2, 3]", flags: []string{"--mlps-per-batch", "2"}, whestTakes: true,
		why: "whest's CPU backend ignores --mlps-per-batch; whestbake has no such flag and says what it has",
	},
	{
		name: "split-hyphen", seeds: "[1, 2, 3]", flags: []string{"--split", "mini-a"}, whestTakes: true,
		why: "Hugging Face datasets cannot load a split named mini-a",
	},
	{
		name: "split-all", seeds: "[1, 2, 3]", flags: []string{"--split", "all"}, whestTakes: true,
		why: `Hugging Face datasets reads split="all" as every split`,
	},
	{
		name: "n-samples-0", seeds: "[1, 2, 3]", flags: []string{"--n-samples", "0"}, whestTakes: true,
		why: "whest writes NaN statistics for no samples",
	},
	{
		name: "n-samples-negative", seeds: "[1, 2, 3]", flags: []string{"--n-samples", "-4"}, whestTakes: true,
		why: "whest writes NaN statistics for a negative count",
	},
	{
		name: "n-samples-exponent", seeds: "[1, 2, 3]", flags: []string{"--n-samples", "1e1"}, oursTake: true,
		why: "whestbake reads 1e9 as a count",
	},
	{
		name: "output-not-empty", seeds: "[1, 2, 3]", existing: true,
		why: "whest bakes, then fails to write; whestbake refuses before it bakes",
	},
	{
		name: "root-seed", flags: []string{"--seed", "5"}, oursTake: true,
		why: "whest refuses its protocol-2.0 --seed; whestbake derives the seeds list from it",
	},
}

// whest and whestbake take and refuse the same `dataset bake` inputs, but
// for those inputCases say otherwise, and bake the same rows of those both
// take; a refusal by whestbake names what it refuses.
func TestWhestBakeInputs(t *testing.T) {
	env := Need(t)
	root := t.TempDir()
	var jobs []judgeJob
	type prepared struct {
		c          inputCase
		bake, dump int
		whest      string
		code       int
		stderr     string
	}
	var runs []prepared
	for _, c := range inputCases {
		dir := filepath.Join(root, c.name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		args := c.args(t, dir)
		p := prepared{c: c, whest: filepath.Join(dir, "whest"), bake: len(jobs)}
		if c.existing {
			for _, out := range []string{p.whest, filepath.Join(dir, "ours")} {
				if err := os.MkdirAll(out, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(out, "notes.txt"), []byte("mine"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
		jobs = append(jobs, judgeJob{CLI: append(append([]string{"dataset", "bake"}, args...), "--output", p.whest)})
		ours := append([]string{"dataset", "bake", "--sampler", "numpy"}, args...)
		_, p.stderr, p.code = whestbakeRun(append(ours, "--output", filepath.Join(dir, "ours"))...)
		if c.whestTakes && c.oursTake {
			p.dump = len(jobs)
			jobs = append(jobs, judgeJob{Dump: p.whest}, judgeJob{Dump: filepath.Join(dir, "ours")})
		}
		runs = append(runs, p)
	}
	res := runJudge(t, env, jobs, nil).Results
	for _, p := range runs {
		t.Run(p.c.name, func(t *testing.T) {
			whest := res[p.bake]
			if (whest.Code == 0) != p.c.whestTakes {
				t.Errorf("whest exits %d, want it to take it: %v\n%s", whest.Code, p.c.whestTakes, whest.Stderr)
			}
			if (p.code == 0) != p.c.oursTake {
				t.Errorf("whestbake exits %d, want it to take it: %v\n%s", p.code, p.c.oursTake, p.stderr)
			}
			if named := p.c.named(); !p.c.oursTake && !strings.Contains(p.stderr, named) {
				t.Errorf("whestbake's refusal does not name %s:\n%s", named, p.stderr)
			}
			if p.c.whestTakes && p.c.oursTake {
				a, b := res[p.dump].Dump, res[p.dump+1].Dump
				for i := range a.Rows {
					x, y := a.Rows[i], b.Rows[i]
					if x.MLPSeed != y.MLPSeed || x.MLPName != y.MLPName || x.WeightsSHA256 != y.WeightsSHA256 {
						t.Errorf("row %d: whest (%d, %s), whestbake (%d, %s)", i, x.MLPSeed, x.MLPName, y.MLPSeed, y.MLPName)
					}
				}
			}
		})
	}
}

// named is what a refusal of c must name: its first flag, the output
// directory, or else the seeds file.
func (c inputCase) named() string {
	switch {
	case len(c.flags) > 0:
		return c.flags[0]
	case c.existing:
		return "--output"
	}
	return "seeds.json"
}

// args are the flags of c's bake: a tiny shape, c's seeds file in dir,
// then c's own flags, which argparse and cobra both let override the
// shape's.
func (c inputCase) args(t *testing.T, dir string) []string {
	t.Helper()
	args := []string{"--n-mlps", "3", "--n-samples", "10", "--width", "2", "--depth", "1"}
	if c.seeds != "" {
		f := filepath.Join(dir, "seeds.json")
		if err := os.WriteFile(f, []byte(c.seeds), 0o644); err != nil {
			t.Fatal(err)
		}
		args = append(args, "--mlp-seeds", f)
	}
	return append(args, c.flags...)
}
