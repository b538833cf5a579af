package cli

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/whestbake/whestbake/dataset"
	"github.com/whestbake/whestbake/internal/cmdline"
)

func newMergeCmd() *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use: "merge PARTIAL... --output DIR",
		Short: "Merge slice partials of one split into a complete dataset " +
			"(bit-identical to an unsliced bake)",
		Args: cobra.MinimumNArgs(1),
		Annotations: map[string]string{
			cmdline.OperandsAnnotation: "the partials to merge " +
				"(PARTIAL...: the directories of `dataset bake --slice K/N`, all N of them)",
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := cmdline.CheckRequired(cmd, nil); err != nil {
				return err
			}
			start := time.Now()
			fmt.Fprintf(cmd.OutOrStdout(), "Merging %d partials → %s\n", len(args), output)
			if err := dataset.Merge(args, output, time.Now()); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "✓ Merged in %s → %s\n",
				formatDuration(time.Since(start)), output)
			return nil
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "output directory (must not exist)")
	cmdline.Require(cmd, "output")
	return cmd
}
