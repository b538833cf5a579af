package cli

import (
	"fmt"
	"path/filepath"
	"sort"
	"time"

	"github.com/spf13/cobra"

	"github.com/whestbake/whestbake/dataset"
	"github.com/whestbake/whestbake/internal/cmdline"
	"github.com/whestbake/whestbake/internal/report"
)

func newMergeCmd() *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "merge PARTIAL... --output DIR",
		Short: "Merge slice partials of one split into a complete dataset (bit-identical to an unsliced bake)",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if output == "" {
				return cmdline.Usagef("--output is required")
			}
			start := time.Now()
			fmt.Fprintf(cmd.OutOrStdout(), "Merging %d partials → %s\n", len(args), output)
			if err := dataset.Merge(args, output, time.Now()); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "✓ Merged in %s → %s\n", formatDuration(time.Since(start)), output)
			return nil
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "output directory (must not exist)")
	return cmd
}

func newCombineCmd() *cobra.Command {
	var output, defaultSplit string
	cmd := &cobra.Command{
		Use:   "combine-splits DATASET... --output DIR [--default-split NAME]",
		Short: "Combine complete single-split datasets into one multi-split dataset, with its report",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if output == "" {
				return cmdline.Usagef("--output is required")
			}
			// A finished dataset carries its report, as the Temporal bake's
			// does: the same inputs give the same bytes either way.
			if err := report.Combine(args, output, defaultSplit); err != nil {
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
				fmt.Fprintf(cmd.OutOrStdout(), "  - %s  (n_mlps=%d)\n", n, counts[n])
			}
			fmt.Fprintf(cmd.OutOrStdout(), "with its report in %s\n", filepath.Join(output, dataset.ReportDir, dataset.ReportPage))
			return nil
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "output directory (must not exist)")
	cmd.Flags().StringVar(&defaultSplit, "default-split", "", "split that the `default` config loads (default: the input whose config is `default`, if exactly one)")
	return cmd
}
