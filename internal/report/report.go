// Package report makes a dataset's report (`whestbake dataset report`):
// plots of the ground truth (the distribution of final means, the mean
// activation and dead neurons per layer, the distribution of avg_variance;
// one series per split) as PNGs and one self-contained HTML page in the
// dataset's report/ folder (dataset.ReportDir), linked from the card.
//
// The statistics are gathered by streaming the rows, so memory is one row
// plus a few kilobytes per split and layer, however large the dataset. The
// same rows give the same bytes, which is what lets a re-pushed bake be
// recognised as identical and a Temporal bake be compared byte for byte
// with a local one.
package report

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/whestbake/whestbake/dataset"
)

// Option adjusts Write.
type Option func(*config)

type config struct{ progress func(done, total int64) }

// Progress has Write call f after each row it reads with the rows read so
// far and the dataset's total.
func Progress(f func(done, total int64)) Option { return func(c *config) { c.progress = f } }

// stagingPrefix names Write's temporary folders in the dataset directory.
const stagingPrefix = ".report.tmp-"

// Write makes the report of the complete dataset in dir: it reads every row
// (checking it as `dataset inspect` does), renders the figures and the page
// into a temporary folder in dir, puts it in place of dir/report at once,
// and rewrites the card with the report's section (dataset.WriteCard).
// Running it again gives the same bytes.
func Write(dir string, opts ...Option) error {
	var cfg config
	for _, o := range opts {
		o(&cfg)
	}
	d, err := dataset.Open(dir, false)
	if err != nil {
		return err
	}
	var done func()
	if cfg.progress != nil {
		var total, n int64
		for _, s := range d.Info.Splits {
			total += s.NMLPs
		}
		done = func() { n++; cfg.progress(n, total) }
	}
	st, err := compute(d, done)
	if err != nil {
		return err
	}
	files, err := render(st)
	if err != nil {
		return err
	}
	if err := install(dir, files); err != nil {
		return err
	}
	return dataset.WriteCard(dir)
}

// Combine is dataset.Combine followed by Write on the staged output, so the
// combined dataset appears with its report or not at all. It is what a
// finished dataset is, wherever it is made: `whestbake dataset
// combine-splits` and the Temporal bake's CombineSplits both call it.
func Combine(inputs []string, out, defaultSplit string, opts ...Option) error {
	return dataset.Combine(inputs, out, defaultSplit, dataset.CombineFinish(func(dir string) error {
		return Write(dir, opts...)
	}))
}

type file struct {
	name string
	data []byte
}

// render makes the report's files: the figures, then the page.
func render(st *Stats) ([]file, error) {
	pngs, err := figures(st)
	if err != nil {
		return nil, err
	}
	html, err := renderPage(st, pngs)
	if err != nil {
		return nil, fmt.Errorf("report: rendering the page: %w", err)
	}
	var files []file
	for i, f := range dataset.ReportFigures {
		files = append(files, file{f.File, pngs[i]})
	}
	return append(files, file{dataset.ReportPage, html}), nil
}

// install writes files into a temporary folder in dir and puts it in place
// of dir/report. Staging folders left by an interrupted run are removed
// first: nothing else writes them.
func install(dir string, files []file) (err error) {
	stale, err := filepath.Glob(filepath.Join(dir, stagingPrefix+"*"))
	if err != nil {
		return err
	}
	for _, s := range stale {
		if err := os.RemoveAll(s); err != nil {
			return fmt.Errorf("report: removing %s, left by an interrupted run: %w", s, err)
		}
	}
	tmp, err := os.MkdirTemp(dir, stagingPrefix)
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
	for _, f := range files {
		if err := writeFileSync(filepath.Join(tmp, f.name), f.data); err != nil {
			return fmt.Errorf("report: %w", err)
		}
	}
	// After the swap tmp holds the old report, which the deferred RemoveAll
	// deletes.
	if err := swap(tmp, filepath.Join(dir, dataset.ReportDir)); err != nil {
		return fmt.Errorf("report: putting the new report in place: %w", err)
	}
	return nil
}

func writeFileSync(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
