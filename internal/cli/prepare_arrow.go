package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/whestbake/whestbake/dataset"
	"github.com/whestbake/whestbake/internal/safetext"
)

func newPrepareArrowCmd() *cobra.Command {
	return &cobra.Command{
		Use: "prepare-arrow DIR",
		Short: "(Re)build a multi-split dataset's prepared/<split>/ Arrow folders " +
			"(datasets' save_to_disk layout) and record them in metadata.json",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := args[0]
			if err := dataset.PrepareArrow(dir); err != nil {
				return err
			}
			d, err := dataset.Open(dir, false)
			if err != nil {
				return err
			}
			names := make([]string, len(d.Splits))
			for i, s := range d.Splits {
				names[i] = s.Name
			}
			fmt.Fprintf(cmd.OutOrStdout(),
				"Patched %s with prepared Arrow artifacts for %d split(s): %s\n",
				dir, len(names), safetext.Line(strings.Join(names, ", ")))
			return nil
		},
	}
}
