package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/whestbake/whestbake/dataset"
)

// compare reads what whestbench's loader reads: a dataset whose prepared
// Arrow rows were changed (prepared/public holding another seed's rows,
// which inspect and verify refuse) is not compared with the untouched one,
// in either order: exit 2, naming the file and the side, where reading the
// parquet files alone called the two identical. Two untouched copies are
// identical, and the result says whose prepared splits were read.
func TestCompareReadsThePreparedTree(t *testing.T) {
	dir := t.TempDir()
	at := func(name string) string { return filepath.Join(dir, name) }
	for _, ds := range []struct{ name, seeds string }{{"ds", "[1, 2, 3]"}, {"other", "[11, 12, 13]"}} {
		if err := os.Mkdir(at(ds.name+"-splits"), 0o755); err != nil {
			t.Fatal(err)
		}
		bakeSplits(t, at(ds.name+"-splits"), map[string]string{"public": ds.seeds, "holdout": "[6, 7, 8]"},
			"--n-mlps", "3", "--n-samples", "500", "--width", "4", "--depth", "2")
		mustRun(t, "dataset", "combine-splits",
			at(ds.name+"-splits/public"), at(ds.name+"-splits/holdout"), "-o", at(ds.name))
	}
	copyDir := func(src, dst string) {
		if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
			t.Fatal(err)
		}
	}
	copyDir(at("ds"), at("copy"))
	copyDir(at("ds"), at("changed"))
	for _, f := range []string{dataset.PreparedArrowFile, dataset.PreparedStateFile} {
		p := filepath.Join(dataset.PreparedDir, "public", f)
		writeFile(t, filepath.Join(at("changed"), p), string(readBytes(t, filepath.Join(at("other"), p))))
	}

	code, r, errs := compareJSON(t, at("ds"), at("copy"))
	if code != 0 || !r.Same || len(r.Splits) != 2 || !r.Splits[0].PreparedA || !r.Splits[1].PreparedB {
		t.Fatalf("two copies: exit %d, %+v %s", code, r, errs)
	}
	arrow := filepath.Join("changed", dataset.PreparedDir, "public", dataset.PreparedArrowFile)
	for _, c := range []struct {
		args []string
		side string
	}{
		{[]string{at("changed"), at("ds")}, "A: "},
		{[]string{at("ds"), at("changed")}, "B: "},
	} {
		code, _, errs := run(t, append([]string{"dataset", "compare"}, c.args...)...)
		if code != 2 || !strings.Contains(errs, c.side) || !strings.Contains(errs, arrow+": row 0") ||
			!strings.Contains(errs, "differs from the rows of data/public-*.parquet") {
			t.Errorf("compare %v: exit %d, %s; want 2 naming %s", c.args, code, errs, arrow)
		}
	}
	out := mustRun(t, "dataset", "compare", at("ds"), at("copy"))
	if !strings.Contains(out, "split public: 3 MLPs, n_samples 500 and 500: 0 differ "+
		"(the prepared Arrow splits of A and B read as their rows)") {
		t.Errorf("compare of two copies printed:\n%s", out)
	}
}
