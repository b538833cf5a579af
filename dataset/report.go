package dataset

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// The report (`whestbake dataset report`, internal/report) is part of a
// finished dataset's directory, like data/ and the card: its layout is
// fixed here so that the card can link it and every push of the same
// dataset carries the same file names.
const (
	// ReportDir is the report's folder in the dataset directory.
	ReportDir = "report"
	// ReportPage is the self-contained HTML page in ReportDir.
	ReportPage = "index.html"
)

// ReportFigure is one PNG of the report, in ReportDir.
type ReportFigure struct {
	File    string // file name in ReportDir
	Caption string // the card's alt text and the page's heading
}

// ReportFigures are the report's PNGs, in the order the card and the page
// show them; each has one series per split.
var ReportFigures = []ReportFigure{
	{"final_means.png", "Distribution of final means"},
	{"layer_means.png", "Mean activation per layer"},
	{"layer_variance.png", "Variance of the activation per layer"},
	{"dead_neurons.png", "Dead neurons per layer"},
	{"avg_variance.png", "Distribution of avg_variance"},
}

// CardReport adds the report's section to the card: every figure as an
// image with a relative path (which the Hub renders from the repository)
// and a link to the page. Only pass it for a directory that holds the
// report; WriteCard decides that itself.
func CardReport() CardOption { return func(c *cardConfig) { c.report = true } }

// HasReport reports whether dir holds the complete report: the page and
// every figure.
func HasReport(dir string) (bool, error) {
	for _, p := range ReportPaths() {
		_, err := os.Stat(filepath.Join(dir, filepath.FromSlash(p)))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return false, nil
		case err != nil:
			return false, fmt.Errorf("dataset: looking for the report in %s: %w", dir, err)
		}
	}
	return true, nil
}

// ReportPaths are the report's files, '/'-separated and relative to the
// dataset directory: a dataset holds the report when it holds all of them.
// Code that sees a dataset as a list of files (a push from S3) decides with
// it whether the card gets the report's section.
func ReportPaths() []string {
	paths := []string{ReportDir + "/" + ReportPage}
	for _, f := range ReportFigures {
		paths = append(paths, ReportDir+"/"+f.File)
	}
	return paths
}

// CheckReportFolder refuses a report folder in dir that holds anything
// besides the report's own files (ReportPaths): the report replaces the
// folder whole, and would delete what an operator put there. Callers
// check before the work that leads to InstallReport, which checks again.
func CheckReportFolder(dir string) error {
	folder := filepath.Join(dir, ReportDir)
	entries, err := os.ReadDir(folder)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("report: %w", err)
	}
	own := map[string]bool{}
	for _, p := range ReportPaths() {
		own[path.Base(p)] = true
	}
	var foreign []string
	for _, e := range entries {
		if !own[e.Name()] || !e.Type().IsRegular() {
			foreign = append(foreign, e.Name())
		}
	}
	if len(foreign) > 0 {
		return fmt.Errorf("report: %s holds %q, which the report did not write: a new report replaces the folder whole and would delete them; move them out of %s and run again",
			folder, foreign, ReportDir+"/")
	}
	return nil
}

// reportStagingPrefix names InstallReport's temporary folders in the
// dataset directory.
const reportStagingPrefix = ".report.tmp-"

// InstallReport puts files (the report's page and figures, by name in
// ReportDir) in place of dir/report at once, so a reader sees the old
// report or the new one, and rewrites the card with the report's section
// (WriteCard). A report folder holding anything else is refused
// (CheckReportFolder). Staging folders left by an interrupted run are
// removed first: nothing else writes them.
func InstallReport(dir string, files map[string][]byte) (err error) {
	for _, p := range ReportPaths() {
		if _, ok := files[path.Base(p)]; !ok {
			return fmt.Errorf("dataset: the report lacks %s", p)
		}
	}
	if len(files) != len(ReportPaths()) {
		return fmt.Errorf("dataset: the report has %d files, want the page and %d figures", len(files), len(ReportFigures))
	}
	if err := CheckReportFolder(dir); err != nil {
		return err
	}
	if err := removeStaging(dir, reportStagingPrefix); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(dir, reportStagingPrefix)
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	defer func() {
		if rmErr := os.RemoveAll(tmp); err == nil && rmErr != nil && !errors.Is(rmErr, fs.ErrNotExist) {
			err = rmErr
		}
	}()
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	for name, data := range files {
		if err := writeFileSync(filepath.Join(tmp, name), data); err != nil {
			return fmt.Errorf("report: %w", err)
		}
	}
	// After the swap tmp holds the old report, which the deferred RemoveAll
	// deletes.
	if err := swap(tmp, filepath.Join(dir, ReportDir)); err != nil {
		return fmt.Errorf("report: putting the new report in place: %w", err)
	}
	return WriteCard(dir)
}

// WriteCard renders dir's card from its metadata.json with opts, adding the
// report's section when dir holds the report, and replaces README.md with a
// rename, so a reader sees the old card or the new one. It is how anything
// that changes a finished dataset's card (the report, a push that names
// the repository with CardRepo) keeps every section the directory calls for.
func WriteCard(dir string, opts ...CardOption) error {
	md, err := ReadMetadata(dir)
	if err != nil {
		return err
	}
	info, err := ParseInfo(md, true)
	if err != nil {
		return invalidf("%s: %v", filepath.Join(dir, MetadataFile), err)
	}
	has, err := HasReport(dir)
	if err != nil {
		return err
	}
	if has {
		opts = append(opts[:len(opts):len(opts)], CardReport())
	}
	return replaceFile(filepath.Join(dir, readmeFile), []byte(renderCard(info, opts...)))
}

// removeStaging removes the staging folders named prefix* in dir that an
// interrupted run left: nothing else writes them.
func removeStaging(dir, prefix string) error {
	stale, err := filepath.Glob(filepath.Join(dir, prefix+"*"))
	if err != nil {
		return err
	}
	for _, s := range stale {
		if err := os.RemoveAll(s); err != nil {
			return fmt.Errorf("dataset: removing %s, left by an interrupted run: %w", s, err)
		}
	}
	return nil
}

// replaceFile writes data beside path and renames it over path.
func replaceFile(path string, data []byte) (err error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			os.Remove(f.Name())
		}
	}()
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// Title is the dataset's name as its card shows it: pretty_name, or a
// default.
func (in *Info) Title() string { return prettyName(in) }

// report is the card's section on the report.
func (c *card) report(b *strings.Builder) {
	if !c.withReport {
		return
	}
	b.WriteString("## Report\n\n")
	fmt.Fprintf(b, "Plots of the ground truth, one series per split, made by `whestbake dataset report` from the "+
		"rows; [%s/%s](%[1]s/%[2]s) shows them on one self-contained page with the numbers behind them "+
		"and what each plot measures.\n\n", ReportDir, ReportPage)
	for _, f := range ReportFigures {
		fmt.Fprintf(b, "![%s](%s/%s)\n\n", f.Caption, ReportDir, f.File)
	}
}
