package dataset

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/whestbake/whestbake/bakeapi"
)

// fakeReport puts the report's files (any bytes) into dir.
func fakeReport(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, ReportDir), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range ReportPaths() {
		err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(p)), []byte("x"), 0o644)
		if err != nil {
			t.Fatal(err)
		}
	}
}

func TestWriteCardLinksTheReportOnlyWhenTheDirectoryHasIt(t *testing.T) {
	dir := writeTestDir(t, t.TempDir(), "ds", testInfo(bakeapi.Spec{Width: 4, Depth: 2}, 3, 0, 0))
	card := func() string {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(dir, readmeFile))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if err := WriteCard(dir); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(card(), "## Report") {
		t.Error("the card of a dataset without a report has a report section")
	}
	fakeReport(t, dir)
	// A push names the repository: the report section stays.
	if err := WriteCard(dir, CardRepo("aicrowd/whest-gt")); err != nil {
		t.Fatal(err)
	}
	got := card()
	for _, frag := range []string{
		"## Report",
		"(report/index.html)",
		"![Distribution of final means](report/final_means.png)",
		`load_dataset("aicrowd/whest-gt"`,
	} {
		if !strings.Contains(got, frag) {
			t.Errorf("card lacks %q", frag)
		}
	}
	for _, f := range ReportFigures {
		if !strings.Contains(got, "](report/"+f.File+")") {
			t.Errorf("card does not show %s", f.File)
		}
	}
	if strings.Index(got, "## Report") > strings.Index(got, "## Reproducing") {
		t.Error("the report section comes after the re-bake recipe; it belongs with the summary")
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*")); len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}
	// One figure missing: no section pointing at it.
	if err := os.Remove(filepath.Join(dir, ReportDir, ReportFigures[0].File)); err != nil {
		t.Fatal(err)
	}
	if err := WriteCard(dir); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(card(), "## Report") {
		t.Error("the card links an incomplete report")
	}
}

func TestCombineFinishRunsOnTheStagedDatasetAndItsFailureLeavesNothing(t *testing.T) {
	parent := t.TempDir()
	a := writeTestDir(t, parent, "a", testInfo(bakeapi.Spec{Width: 4, Depth: 2}, 3, 0, 0))
	out := filepath.Join(parent, "out")
	var staged string
	err := Combine([]string{a}, out, "", CombineFinish(func(dir string) error {
		staged = dir
		if _, err := Open(dir, false); err != nil {
			t.Errorf("finish sees an incomplete dataset: %v", err)
		}
		return os.WriteFile(filepath.Join(dir, "extra"), []byte("x"), 0o644)
	}))
	if err != nil {
		t.Fatal(err)
	}
	if staged == out {
		t.Error("finish ran on the output in place, not on the staged copy")
	}
	if _, err := os.Stat(filepath.Join(out, "extra")); err != nil {
		t.Errorf("what finish wrote is not in the output: %v", err)
	}
	failed := filepath.Join(parent, "failed")
	boom := errors.New("boom")
	finish := CombineFinish(func(string) error { return boom })
	if err := Combine([]string{a}, failed, "", finish); !errors.Is(err, boom) {
		t.Errorf("Combine whose finish failed: %v, want its error", err)
	}
	if left, _ := filepath.Glob(filepath.Join(parent, ".*")); len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}
	if _, err := os.Stat(failed); err == nil {
		t.Error("Combine whose finish failed wrote its output")
	}
}
