package cli

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/whestbake/whestbake/dataset"
	"github.com/whestbake/whestbake/internal/report"
)

func newReportCmd() *cobra.Command {
	return &cobra.Command{
		Use: "report DIR",
		Short: "Plot a complete dataset's ground truth into DIR/report (PNGs and one HTML page) " +
			"and link them from its card",
		Long: "Reads every row of the complete dataset DIR and writes, one series per split, " +
			"the distribution of final means, " +
			"the mean activation per layer (± 1 s.d.), the fraction of dead neurons per layer " +
			"and the distribution of avg_variance as PNGs in DIR/" + dataset.ReportDir + ", " +
			"with one self-contained HTML page (" + dataset.ReportPage + "), " +
			"and re-renders DIR/README.md, whestbake's card from metadata.json, " +
			"with a section linking them (a card written by another tool is replaced). " +
			"A run replaces the previous report at once; the same rows give the same bytes. " +
			"`dataset combine-splits` and the Temporal bake write the report themselves.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := args[0]
			start := time.Now()
			var bar *progress
			defer func() {
				if bar != nil {
					bar.Finish()
				}
			}()
			err := report.Write(dir, report.Progress(func(done, total int64) {
				if bar == nil {
					bar = newProgress(cmd.ErrOrStderr(), "Reading rows", "MLPs", total)
				}
				bar.Add(1)
			}))
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			reportDir := filepath.Join(dir, dataset.ReportDir)
			fmt.Fprintf(out, "✓ Report in %s (%s):\n", reportDir, formatDuration(time.Since(start)))
			for _, f := range dataset.ReportFigures {
				fmt.Fprintf(out, "  %s  %s\n", filepath.Join(reportDir, f.File), f.Caption)
			}
			fmt.Fprintf(out, "  %s  all of them on one page\n",
				filepath.Join(reportDir, dataset.ReportPage))
			fmt.Fprintf(out, "linked from %s\n", filepath.Join(dir, "README.md"))
			return nil
		},
	}
}
