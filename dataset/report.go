package dataset

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"

	"github.com/whestbake/whestbake/dataset/internal/card"
	"github.com/whestbake/whestbake/dataset/internal/staging"
)

// The report that `whestbake dataset report` makes with internal/report is part of a
// finished dataset's directory, like data/ and the card: its layout is
// fixed by the card, which links it, so that every push of the same dataset
// carries the same file names.
const (
	// ReportDir is the report's folder in the dataset directory.
	ReportDir = card.ReportDir
	// ReportPage is the self-contained HTML page in ReportDir.
	ReportPage = card.ReportPage
)

// ReportFigure is one PNG of the report, in ReportDir.
type ReportFigure = card.ReportFigure

// ReportFigures are the report's PNGs, in the order the card and the page
// show them; each has one series per split.
var ReportFigures = card.ReportFigures

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
// Code that sees a dataset as a list of files, as a push from S3 does, decides with
// it whether the card gets the report's section.
func ReportPaths() []string { return card.ReportPaths() }

// CheckReportFolder refuses a report folder in dir that holds anything
// besides the report's own files, ReportPaths: the report replaces the
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
		return fmt.Errorf("report: %s holds %q, which the report did not write: "+
			"a new report replaces the folder whole and would delete them; "+
			"move them out of %s and run again",
			folder, foreign, ReportDir+"/")
	}
	return nil
}

// reportStagingPrefix names InstallReport's temporary folders in the
// dataset directory.
const reportStagingPrefix = ".report.tmp-"

// InstallReport puts files, the report's page and figures by name in
// ReportDir, in place of dir/report at once, so a reader sees the old
// report or the new one, and rewrites the card with the report's section
// by WriteCard. CheckReportFolder refuses a report folder holding
// anything else. Staging folders left by an interrupted run are
// removed first: nothing else writes them.
func InstallReport(dir string, files map[string][]byte) (err error) {
	for _, p := range ReportPaths() {
		if _, ok := files[path.Base(p)]; !ok {
			return fmt.Errorf("dataset: the report lacks %s", p)
		}
	}
	if len(files) != len(ReportPaths()) {
		return fmt.Errorf("dataset: the report has %d files, want the page and %d figures",
			len(files), len(ReportFigures))
	}
	if err := CheckReportFolder(dir); err != nil {
		return err
	}
	if err := staging.RemoveLeftovers(dir, reportStagingPrefix); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(dir, reportStagingPrefix)
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	defer func() {
		rmErr := os.RemoveAll(tmp)
		if err == nil && rmErr != nil && !errors.Is(rmErr, fs.ErrNotExist) {
			err = rmErr
		}
	}()
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	for name, data := range files {
		if err := staging.WriteNew(filepath.Join(tmp, name), data); err != nil {
			return fmt.Errorf("report: %w", err)
		}
	}
	// After the swap tmp holds the old report, which the deferred RemoveAll
	// deletes.
	if err := staging.Swap(tmp, filepath.Join(dir, ReportDir)); err != nil {
		return fmt.Errorf("report: putting the new report in place: %w", err)
	}
	return WriteCard(dir)
}

// WriteCard renders dir's card from its metadata.json with opts, adding the
// report's section when dir holds the report, and replaces README.md with a
// rename, so a reader sees the old card or the new one. It is how anything
// that changes a finished dataset's card, such as the report or a push that
// names the repository with CardRepo, keeps every section the directory calls for.
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
	return staging.Replace(filepath.Join(dir, readmeFile), []byte(renderCard(info, opts...)))
}
