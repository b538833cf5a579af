package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/whestbake/whestbake/internal/bakeclient"
)

func newCancelCmd() *cobra.Command {
	var noWait, asJSON bool
	cmd := starterVerb(&cobra.Command{
		Use: "cancel ID",
		Short: "Cancel a running bake and wait until it has stopped " +
			"(its splits and running slices are cancelled; finished work stays in S3)",
		Args: bakeIDArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, _, err := openClient(cmd)
			if err != nil {
				return err
			}
			defer c.Close()
			ctx := cmd.Context()
			out := cmd.OutOrStdout()
			k, err := c.Cancel(ctx, args[0])
			if err != nil {
				return err
			}
			// With --json the object is all that goes to stdout: what is
			// waited for goes to stderr.
			notes := out
			if asJSON {
				notes = cmd.ErrOrStderr()
			}
			if noWait {
				fmt.Fprintf(notes, "Cancellation of bake %s requested; "+
					"`whestbake watch %s` shows it wind down. "+
					"Starting it again with the same ID waits until it has stopped, "+
					"then reuses every finished MLP.\n", k.ID, k.ID)
			} else {
				fmt.Fprintf(notes, "Cancellation of bake %s requested.\n", k.ID)
				if err := c.WaitStopped(ctx, k, printWaiting(notes)); err != nil {
					return err
				}
				fmt.Fprintf(notes, "Bake %s has stopped. Starting it again with the same ID "+
					"reuses every finished MLP.\n", k.ID)
			}
			if asJSON {
				return writeJSON(out, cancelJSON{
					Schema:       cancelSchema,
					Cancellation: k,
					Stopped:      !noWait,
				})
			}
			return nil
		},
	})
	cmd.Flags().BoolVar(&noWait, "no-wait", false, "return once the cancellation is requested, "+
		"without waiting for the running slices to save their checkpoints and stop")
	jsonFlag(cmd, &asJSON, "print what was cancelled as JSON; the notes go to stderr")
	return cmd
}

// cancelJSON is whestbake.cancel/v1.
type cancelJSON struct {
	Schema string `json:"schema"`
	bakeclient.Cancellation
	// Stopped: the bake and its splits have stopped. It is false with
	// --no-wait, which returns once the cancel is requested.
	Stopped bool `json:"stopped"`
}
