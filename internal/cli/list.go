package cli

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/whestbake/whestbake/internal/bakeclient"
	"github.com/whestbake/whestbake/internal/cmdline"
	"github.com/whestbake/whestbake/internal/safetext"
)

func newListCmd() *cobra.Command {
	var limit int
	var asJSON bool
	cmd := starterVerb(&cobra.Command{
		Use:   "list",
		Short: "List recent bakes with their status and stage (newest first)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if limit < 1 {
				return cmdline.Usagef("--limit must be at least 1, got %d", limit)
			}
			c, _, err := openClient(cmd)
			if err != nil {
				return err
			}
			defer c.Close()
			bakes, err := c.List(cmd.Context(), limit)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), listJSON{Schema: listSchema, Bakes: bakes})
			}
			return printList(cmd.OutOrStdout(), bakes, time.Now())
		},
	})
	cmd.Flags().IntVar(&limit, "limit", 20, "how many bakes")
	jsonFlag(cmd, &asJSON, "print the bakes as JSON")
	return cmd
}

// listJSON is whestbake.list/v1.
type listJSON struct {
	Schema string                  `json:"schema"`
	Bakes  []bakeclient.ListedBake `json:"bakes"`
}

// printList prints one line per bake, a running one's duration up to now.
func printList(out io.Writer, bakes []bakeclient.ListedBake, now time.Time) error {
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "BAKE ID\tSTATUS\tSTAGE\tSTARTED\tDURATION")
	for _, b := range safetext.Strings(bakes) { // the server's words
		end := now
		if !b.End.IsZero() {
			end = b.End
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", b.ID, b.State, b.Stage,
			b.Start.Local().Format(time.DateTime), formatDuration(end.Sub(b.Start)))
	}
	if len(bakes) == 0 {
		fmt.Fprintln(tw,
			"(no bakes yet: start one with `whestbake bake --config-file FILE --id ID`)")
	}
	return tw.Flush()
}
