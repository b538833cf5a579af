package cli

import (
	"fmt"

	"github.com/spf13/cobra"
	enums "go.temporal.io/api/enums/v1"

	"github.com/whestbake/whestbake/bakeapi"
)

func newCancelCmd() *cobra.Command {
	return starterVerb(&cobra.Command{
		Use:   "cancel ID",
		Short: "Cancel a running bake (its splits and running slices are cancelled; finished work stays in S3)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, _, err := connect(cmd)
			if err != nil {
				return err
			}
			defer c.Close()
			id, wid := args[0], bakeapi.BakeWorkflowID(args[0])
			desc, err := c.DescribeWorkflowExecution(cmd.Context(), wid, "")
			if err != nil {
				return noSuchBake(id, err)
			}
			if s := desc.GetWorkflowExecutionInfo().GetStatus(); s != enums.WORKFLOW_EXECUTION_STATUS_RUNNING {
				return fmt.Errorf("bake %s is not running (it %s); nothing to cancel", id, statusWord(s))
			}
			if err := c.CancelWorkflow(cmd.Context(), wid, ""); err != nil {
				return noSuchBake(id, err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Cancellation of bake %s requested; `whestbake watch %s` shows it wind down. Starting it again with the same ID reuses every finished MLP.\n", id, id)
			return nil
		},
	})
}
