package cli

import (
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/converter"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/internal/cmdline"
)

func newListCmd() *cobra.Command {
	var limit int
	cmd := starterVerb(&cobra.Command{
		Use:   "list",
		Short: "List recent bakes with their status and stage (newest first)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if limit < 1 {
				return cmdline.Usagef("--limit must be at least 1, got %d", limit)
			}
			c, cfg, err := connect(cmd)
			if err != nil {
				return err
			}
			defer c.Close()
			// The same query finds them in the Web UI's list view.
			resp, err := c.ListWorkflow(cmd.Context(), &workflowservice.ListWorkflowExecutionsRequest{
				Namespace: cfg.Temporal.Namespace, PageSize: int32(limit),
				Query: fmt.Sprintf("WorkflowType = 'BakeWorkflow' AND %s IS NOT NULL", bakeapi.BakeIDAttribute),
			})
			if err != nil {
				return fmt.Errorf("listing bakes: %w", err)
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "BAKE ID\tSTATUS\tSTAGE\tSTARTED\tDURATION")
			dc := converter.GetDefaultDataConverter()
			for _, e := range resp.GetExecutions() {
				id, ok := bakeapi.BakeIDFromWorkflowID(e.GetExecution().GetWorkflowId())
				if !ok {
					continue
				}
				var stage string
				if p := e.GetSearchAttributes().GetIndexedFields()[bakeapi.BakeStageAttribute]; p != nil {
					_ = dc.FromPayload(p, &stage)
				}
				start := e.GetStartTime().AsTime()
				end := time.Now()
				if e.GetCloseTime() != nil {
					end = e.GetCloseTime().AsTime()
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", id, statusWord(e.GetStatus()), stage, start.Local().Format(time.DateTime), formatDuration(end.Sub(start)))
			}
			if len(resp.GetExecutions()) == 0 {
				fmt.Fprintln(tw, "(no bakes yet: start one with `whestbake bake --config-file FILE --id ID`)")
			}
			return tw.Flush()
		},
	})
	cmd.Flags().IntVar(&limit, "limit", 20, "how many bakes")
	return cmd
}
