package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/whestbake/whestbake/dataset"
)

// run executes the CLI in-process and returns exit code, stdout, stderr.
func run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Execute(args, &out, &errb)
	return code, out.String(), errb.String()
}

func mustRun(t *testing.T, args ...string) string {
	t.Helper()
	code, out, errs := run(t, args...)
	if code != 0 {
		t.Fatalf("whestbake %s: exit %d\nstdout:\n%s\nstderr:\n%s",
			strings.Join(args, " "), code, out, errs)
	}
	return out
}

func writeFile(t *testing.T, path, content string) string {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func readBytes(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// entries lists a directory's names, to prove failed commands leave nothing behind.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range des {
		out = append(out, d.Name())
	}
	return out
}

// bakeSplits bakes into dir/<split> a dataset of each split, from its
// seeds (a JSON list), with shape giving --n-mlps and the rest.
func bakeSplits(t *testing.T, dir string, seeds map[string]string, shape ...string) {
	t.Helper()
	for split, list := range seeds {
		out := filepath.Join(dir, split)
		args := []string{"dataset", "bake",
			"--mlp-seeds", writeFile(t, out+".json", list), "--split", split, "-o", out}
		mustRun(t, append(args, shape...)...)
	}
}

var small = []string{"--width", "6", "--depth", "3", "--n-samples", "3_000"}

func bakeArgs(out string, extra ...string) []string {
	args := append([]string{"dataset", "bake", "--n-mlps", "5", "--output", out}, small...)
	return append(args, extra...)
}

// Slices merged must be byte-identical to the unsliced bake's parquet, for both samplers.
func TestSlicesMergeToTheUnslicedBake(t *testing.T) {
	dir := t.TempDir()
	seeds := filepath.Join(dir, "seeds.json")
	mustRun(t, "dataset", "generate-seeds", "--n-mlps", "5", "--seed", "7", "--output", seeds)
	for _, sampler := range []string{"philox", "numpy"} {
		d := filepath.Join(dir, sampler)
		full := filepath.Join(d, "full")
		mustRun(t, bakeArgs(full,
			"--mlp-seeds", seeds, "--sampler", sampler, "--split", "mycustom")...)
		var parts []string
		for _, s := range []string{"0/3", "1/3", "2/3"} {
			p := filepath.Join(d, "p"+s[:1])
			mustRun(t, bakeArgs(p, "--mlp-seeds", seeds, "--sampler", sampler,
				"--split", "mycustom", "--slice", s, "--threads", "1")...)
			parts = append(parts, p)
		}
		merged := filepath.Join(d, "merged")
		mustRun(t, "dataset", "merge", "--output", merged, parts[2], parts[0], parts[1])
		name := "data/mycustom-00000-of-00001.parquet"
		unsliced := readBytes(t, filepath.Join(full, name))
		if !bytes.Equal(unsliced, readBytes(t, filepath.Join(merged, name))) {
			t.Fatalf("%s: merged parquet differs from the unsliced bake", sampler)
		}
		out := mustRun(t, "dataset", "verify", merged, "--mlps", "all")
		if strings.Count(out, "✓") != 5 || !strings.Contains(out, "statistics bit-exact") {
			t.Fatalf("verify:\n%s", out)
		}
	}
}

// whestbench's three fixture datasets: every row's weights, names and statistics
// recomputed bit for bit (numpy sampler, FMA dot products; protocol 2.0 and 3.0).
func TestVerifyReproducesWhestbenchFixtures(t *testing.T) {
	for _, f := range []string{
		"single_split_v3_protocol",
		"multi_split_v3.0",
		"multi_config_v3.0",
	} {
		fixture := filepath.Join("..", "..", "testdata", "whestbench-fixtures", f)
		out := mustRun(t, "dataset", "verify", fixture, "--mlps", "all")
		rows := strings.Count(out, "✓ mlp")
		if rows == 0 || strings.Contains(out, "✗") ||
			strings.Count(out, "statistics bit-exact") != rows ||
			strings.Count(out, "name ok") != rows {
			t.Fatalf("%s:\n%s", f, out)
		}
	}
}

func TestCombineInspectAndGenerateSeeds(t *testing.T) {
	dir := t.TempDir()
	code, out, _ := run(t, "dataset", "generate-seeds", "--n-mlps", "3", "--seed", "5")
	if code != 0 || !strings.HasPrefix(out, "[") || strings.Count(out, ",") != 2 {
		t.Fatalf("generate-seeds: %d %q", code, out)
	}
	code2, out2, _ := run(t, "dataset", "generate-seeds", "--n-mlps", "3", "--seed", "5")
	if code2 != 0 || out2 != out {
		t.Fatal("--seed is not deterministic")
	}
	pub, hold := filepath.Join(dir, "pub"), filepath.Join(dir, "hold")
	mustRun(t, bakeArgs(pub, "--seed", "1")...)
	mustRun(t, "dataset", "bake", "--n-mlps", "2", "--width", "6", "--depth", "3",
		"--n-samples", "3e3", "--seed", "2",
		"--split", "holdout", "--config", "holdout", "--output", hold)
	all := filepath.Join(dir, "all")
	out = mustRun(t, "dataset", "combine-splits", pub, hold, "--output", all)
	if !strings.Contains(out, "public  (n_mlps=5)") ||
		!strings.Contains(out, "holdout  (n_mlps=2)") ||
		!strings.Contains(out, filepath.Join(all, "report", "index.html")) {
		t.Fatalf("combine output:\n%s", out)
	}
	// And its prepared Arrow splits (whestbench's default), which
	// prepare-arrow rebuilds with the same bytes; --skip-prepared-arrow
	// leaves them out.
	if !strings.Contains(out, "prepared Arrow artifacts: holdout, public") {
		t.Errorf("combine output does not name the prepared splits:\n%s", out)
	}
	arrowFile := filepath.Join(all, "prepared", "public", "data-00000-of-00001.arrow")
	arrow := readBytes(t, arrowFile)
	out = mustRun(t, "dataset", "prepare-arrow", all)
	patched := "Patched " + all + " with prepared Arrow artifacts for 2 split(s): public, holdout"
	if !strings.Contains(out, patched) || !bytes.Equal(arrow, readBytes(t, arrowFile)) {
		t.Errorf("prepare-arrow of a combined dataset: new bytes, or:\n%s", out)
	}
	bare := filepath.Join(dir, "bare")
	out = mustRun(t, "dataset", "combine-splits", pub, hold, "--skip-prepared-arrow",
		"--output", bare)
	if strings.Contains(out, "prepared") {
		t.Errorf("--skip-prepared-arrow: %s", out)
	}
	if _, err := os.Stat(filepath.Join(bare, "prepared")); err == nil {
		t.Error("--skip-prepared-arrow wrote prepared/")
	}
	code, _, stderr := run(t, "dataset", "prepare-arrow", pub)
	if code != 1 || !strings.Contains(stderr, "only meaningful for multi-split datasets") {
		t.Errorf("prepare-arrow of a single split: exit %d, %s", code, stderr)
	}
	// A finished dataset has its report, linked from the card; verify and
	// inspect below read past it.
	card := string(readBytes(t, filepath.Join(all, "README.md")))
	for _, f := range dataset.ReportFigures {
		readBytes(t, filepath.Join(all, "report", f.File))
		if !strings.Contains(card, "](report/"+f.File+")") {
			t.Errorf("the card does not link report/%s", f.File)
		}
	}
	// `dataset report` of a dataset that has one writes the same bytes.
	page := readBytes(t, filepath.Join(all, "report", "index.html"))
	out = mustRun(t, "dataset", "report", all)
	if !strings.Contains(out, "Report in "+filepath.Join(all, "report")) ||
		!bytes.Equal(page, readBytes(t, filepath.Join(all, "report", "index.html"))) {
		t.Errorf("dataset report of a combined dataset: "+
			"a new page, or the output does not say where:\n%s", out)
	}
	// And of a single split, which combine-splits has not touched.
	mustRun(t, "dataset", "report", pub)
	readBytes(t, filepath.Join(pub, "report", "index.html"))
	// A file an operator put in report/ is never deleted: the report
	// refuses, naming it, before reading a row, and leaves the folder.
	notes := writeFile(t, filepath.Join(pub, "report", "notes.txt"), "the operator's notes")
	before := readBytes(t, filepath.Join(pub, "report", "index.html"))
	code, _, errs := run(t, "dataset", "report", pub)
	if code != 1 ||
		!strings.Contains(errs, `"notes.txt"`) ||
		!strings.Contains(errs, "move them out of report/") {
		t.Errorf("dataset report with a foreign file in report/: exit %d, stderr %q", code, errs)
	}
	if string(readBytes(t, notes)) != "the operator's notes" ||
		!bytes.Equal(before, readBytes(t, filepath.Join(pub, "report", "index.html"))) {
		t.Error("the refused report changed the report folder")
	}
	if err := os.Remove(notes); err != nil {
		t.Fatal(err)
	}
	out = mustRun(t, "dataset", "inspect", all)
	for _, want := range []string{
		"split public: 5 MLPs", "split holdout: 2 MLPs", "philox", "mlp_name",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("inspect lacks %q:\n%s", want, out)
		}
	}
	mustRun(t, "dataset", "verify", all, "--k", "2")
	mustRun(t, "dataset", "verify", all, "--k", "1", "--max-samples", "500")
}

// A YAML syntax error in a verb's config file names the line that holds it.
func TestConfigFileSyntaxErrorNamesItsLine(t *testing.T) {
	cfg := writeFile(t, filepath.Join(t.TempDir(), "bake.yaml"),
		"n-mlps: 2\nwidth: 4\n\tdepth: 2\n")
	code, _, errs := run(t, "dataset", "bake", "--config-file", cfg,
		"--output", filepath.Join(t.TempDir(), "out"))
	const tabOnLine3 = "bake.yaml: line 3: found a tab character that violates indentation"
	if code == 0 || !strings.Contains(errs, tabOnLine3) {
		t.Fatalf("exit %d, stderr %q; want the error on line 3", code, errs)
	}
}
