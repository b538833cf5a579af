package cli

import (
	"fmt"

	"github.com/spf13/cobra"
)

func newCancelCmd() *cobra.Command {
	var noWait bool
	cmd := starterVerb(&cobra.Command{
		Use:   "cancel ID",
		Short: "Cancel a running bake and wait until it has stopped (its splits and running slices are cancelled; finished work stays in S3)",
		Args:  bakeIDArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, _, err := openClient(cmd)
			if err != nil {
				return err
			}
			defer c.Close()
			ctx, out := cmd.Context(), cmd.OutOrStdout()
			k, err := c.Cancel(ctx, args[0])
			if err != nil {
				return err
			}
			if noWait {
				fmt.Fprintf(out, "Cancellation of bake %s requested; `whestbake watch %s` shows it "+
					"wind down. Starting it again with the same ID waits until it has stopped, "+
					"then reuses every finished MLP.\n", k.ID, k.ID)
			} else {
				fmt.Fprintf(out, "Cancellation of bake %s requested.\n", k.ID)
				if err := c.WaitStopped(ctx, k, printWaiting(out)); err != nil {
					return err
				}
				fmt.Fprintf(out, "Bake %s has stopped. Starting it again with the same ID "+
					"reuses every finished MLP.\n", k.ID)
			}
			return nil
		},
	})
	cmd.Flags().BoolVar(&noWait, "no-wait", false, "return once the cancellation is requested, without waiting for the running slices to save their checkpoints and stop")
	return cmd
}
