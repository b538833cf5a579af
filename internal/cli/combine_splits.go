package cli

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/whestbake/whestbake/dataset"
	"github.com/whestbake/whestbake/internal/cmdline"
	"github.com/whestbake/whestbake/internal/report"
	"github.com/whestbake/whestbake/internal/safetext"
)

func newCombineCmd() *cobra.Command {
	var output, defaultSplit string
	var skipPrepared bool
	cmd := &cobra.Command{
		Use: "combine-splits DATASET... --output DIR " +
			"[--default-split NAME] [--skip-prepared-arrow]",
		Short: "Combine complete single-split datasets into one multi-split dataset, " +
			"with its report and prepared Arrow splits",
		Args: cobra.MinimumNArgs(1),
		Annotations: map[string]string{
			cmdline.OperandsAnnotation: "the splits to combine (DATASET...: " +
				"complete single-split datasets, from `dataset merge` or an unsliced bake)",
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := cmdline.CheckRequired(cmd, nil); err != nil {
				return err
			}
			// A finished dataset carries its report, as the Temporal bake's
			// does: the same inputs give the same bytes either way.
			var opts []report.Option
			if skipPrepared {
				opts = append(opts, report.SkipPrepared())
			}
			if err := report.Combine(args, output, defaultSplit, opts...); err != nil {
				return err
			}
			// Combine checked every row of its inputs and copied their
			// files; the counts are the metadata's.
			d, err := dataset.Open(output, false)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Combined %d splits into %s:\n", len(d.Splits), output)
			names := make([]string, 0, len(d.Splits))
			counts := map[string]int64{}
			for _, s := range d.Info.Splits {
				names = append(names, s.Name)
				counts[s.Name] = s.NMLPs
			}
			sort.Strings(names)
			for _, n := range names {
				fmt.Fprintf(cmd.OutOrStdout(), "  - %s  (n_mlps=%d)\n", safetext.Line(n), counts[n])
			}
			if !skipPrepared {
				fmt.Fprintf(cmd.OutOrStdout(), "  prepared Arrow artifacts: %s\n",
					safetext.Line(strings.Join(names, ", ")))
			}
			fmt.Fprintf(cmd.OutOrStdout(), "with its report in %s\n",
				filepath.Join(output, dataset.ReportDir, dataset.ReportPage))
			return nil
		},
	}
	cmd.Flags().BoolVar(&skipPrepared, "skip-prepared-arrow", false,
		"write no prepared/<split>/ Arrow folders "+
			"(whestbench's loader then reads the parquet files)")
	cmd.Flags().StringVarP(&output, "output", "o", "", "output directory (must not exist)")
	cmdline.Require(cmd, "output")
	cmd.Flags().StringVar(&defaultSplit, "default-split", "",
		"split that the `default` config loads "+
			"(default: the input whose config is `default`, if exactly one)")
	return cmd
}
