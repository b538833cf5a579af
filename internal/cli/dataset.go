package cli

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/whestbake/whestbake/internal/cmdline"
)

// datasetVerbs are the local dataset verbs, in the order the dataset
// command names them: its help, its usage error and its command tree all
// take them from here, and so do the tests.
var datasetVerbs = []func() *cobra.Command{
	newGenerateSeedsCmd,
	newDatasetBakeCmd,
	newMergeCmd,
	newCombineCmd,
	newPrepareArrowCmd,
	newReportCmd,
	newInfoCmd,
	newInspectCmd,
	newVerifyCmd,
	newCompareCmd,
	newDownloadCmd,
	newUploadCmd,
}

func newDatasetCmd() *cobra.Command {
	verbs := make([]*cobra.Command, len(datasetVerbs))
	names := make([]string, len(verbs))
	for i, newVerb := range datasetVerbs {
		verbs[i] = newVerb()
		names[i] = verbs[i].Name()
	}
	last := len(names) - 1
	cmd := &cobra.Command{
		Use:   "dataset",
		Short: "Local dataset verbs (no Temporal needed): " + strings.Join(names, ", "),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return cmdline.Usagef("dataset needs a verb: %s or %s (see --help)",
				strings.Join(names[:last], ", "), names[last])
		},
	}
	cmd.AddCommand(verbs...)
	return cmd
}
