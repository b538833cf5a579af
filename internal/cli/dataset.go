package cli

import (
	"github.com/spf13/cobra"

	"github.com/whestbake/whestbake/internal/cmdline"
)

func newDatasetCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use: "dataset",
		Short: "Local dataset verbs (no Temporal needed): " +
			"generate-seeds, bake, merge, combine-splits, prepare-arrow, report, " +
			"info, inspect, verify, compare, download, upload",
		RunE: func(cmd *cobra.Command, _ []string) error {
			return cmdline.Usagef("dataset needs a verb: " +
				"generate-seeds, bake, merge, combine-splits, prepare-arrow, report, " +
				"info, inspect, verify, compare, download or upload (see --help)")
		},
	}
	cmd.AddCommand(
		newGenerateSeedsCmd(),
		newBakeCmd(),
		newMergeCmd(),
		newCombineCmd(),
		newPrepareArrowCmd(),
		newReportCmd(),
		newInfoCmd(),
		newInspectCmd(),
		newVerifyCmd(),
		newCompareCmd(),
		newDownloadCmd(),
		newUploadCmd(),
	)
	return cmd
}
