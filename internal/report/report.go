// Package report makes a dataset's report, the one `whestbake dataset report`
// writes: plots of the ground truth as PNGs and one self-contained HTML page
// in the dataset's report/ folder, dataset.ReportDir, linked from the card.
// The plots show the distribution of final means, the mean activation and
// dead neurons per layer and the distribution of avg_variance, one series
// per split.
//
// The statistics are gathered by streaming the rows, so memory is one row
// plus a few kilobytes per split and layer, however large the dataset. The
// same rows give the same bytes, which is what lets a re-pushed bake be
// recognised as identical and a Temporal bake be compared byte for byte
// with a local one.
package report

import (
	"fmt"

	"github.com/whestbake/whestbake/dataset"
)

// Option adjusts Write.
type Option func(*config)

type config struct {
	progress     func(done, total int64)
	skipPrepared bool
}

// Progress has Write call f after each row it reads with the rows read so
// far and the dataset's total.
func Progress(f func(done, total int64)) Option { return func(c *config) { c.progress = f } }

// SkipPrepared has Combine leave out the prepared Arrow tree, as
// dataset.CombineSkipPrepared does.
func SkipPrepared() Option { return func(c *config) { c.skipPrepared = true } }

// Write makes the report of the complete dataset in dir: it reads every row,
// checking it as `dataset inspect` does, renders the figures and the page
// and installs them with dataset.InstallReport, which replaces dir/report at
// once and rewrites the card with the report's section.
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
	if err := dataset.CheckReportFolder(dir); err != nil {
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
	return dataset.InstallReport(dir, files)
}

// Combine is dataset.Combine, with the prepared Arrow tree unless
// SkipPrepared, with the report made from the rows as the combine reads
// them, once, and installed on the staged output, so the combined dataset
// appears with its report or not at all. It is what a finished dataset
// is, wherever it is made: `whestbake dataset combine-splits` and the
// Temporal bake's CombineSplits both call it, and its report is Write's.
func Combine(inputs []string, out, defaultSplit string, opts ...Option) error {
	var cfg config
	for _, o := range opts {
		o(&cfg)
	}
	splits := map[string]*Split{}
	eachRow := func(name string, r dataset.Row) error {
		s := splits[name]
		if s == nil {
			width := len(r.FinalMeans)
			s = NewSplit(name, width, len(r.LayerMeans)/width)
			splits[name] = s
		}
		s.Add(r)
		return nil
	}
	finish := func(dir string) error { return install(dir, splits) }
	dopts := []dataset.CombineOption{dataset.CombineEachRow(eachRow), dataset.CombineFinish(finish)}
	if cfg.skipPrepared {
		dopts = append(dopts, dataset.CombineSkipPrepared())
	}
	return dataset.Combine(inputs, out, defaultSplit, dopts...)
}

// CombineSummaries is Combine for splits whose rows were read where they
// were merged, as dataset.CombineMade takes them: each input holds a split's
// metadata.json, splits holds the statistics of each split's rows by name,
// gathered with NewSplit and Add where the rows were, and out gets the combined
// metadata, card and report, the same bytes Combine gives for the same
// rows.
func CombineSummaries(inputs []string, splits []*Split, out, defaultSplit string) error {
	byName := map[string]*Split{}
	for _, s := range splits {
		byName[s.Name] = s
	}
	finish := func(dir string) error { return install(dir, byName) }
	return dataset.CombineMade(inputs, out, defaultSplit, dataset.CombineFinish(finish))
}

// install renders the report of the combined dataset in dir, whose rows'
// statistics are splits by name, and installs it with dataset.InstallReport.
func install(dir string, splits map[string]*Split) error {
	md, err := dataset.ReadMetadata(dir)
	if err != nil {
		return err
	}
	info, err := dataset.ParseInfo(md, false)
	if err != nil {
		return err
	}
	if err := dataset.CheckReportFolder(dir); err != nil {
		return err
	}
	st := &Stats{Info: info}
	for i := range info.Splits {
		split := &info.Splits[i]
		s := splits[split.Name]
		if s == nil { // a split without rows
			s = NewSplit(split.Name, info.Width, info.Depth)
		}
		s.Config, s.NMLPs = split.HFConfig(), split.NMLPs
		st.Splits = append(st.Splits, s)
	}
	files, err := render(st)
	if err != nil {
		return err
	}
	return dataset.InstallReport(dir, files)
}

// render makes the report's files, by name in dataset.ReportDir: the
// figures and the page.
func render(st *Stats) (map[string][]byte, error) {
	pngs, err := figures(st)
	if err != nil {
		return nil, err
	}
	html, err := renderPage(st, pngs)
	if err != nil {
		return nil, fmt.Errorf("report: rendering the page: %w", err)
	}
	files := map[string][]byte{dataset.ReportPage: html}
	for i, f := range dataset.ReportFigures {
		files[f.File] = pngs[i]
	}
	return files, nil
}
