package cli

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/whestbake/whestbake/internal/bakeclient"
	"github.com/whestbake/whestbake/internal/bytesize"
	"github.com/whestbake/whestbake/internal/cmdline"
	"github.com/whestbake/whestbake/internal/settings"
)

func newGCCmd() *cobra.Command {
	var force, asJSON bool
	cmd := starterVerb(&cobra.Command{
		Use: "gc ID [--force]",
		Short: "Delete what a bake left in S3: intermediates of a completed bake, " +
			"everything but the record of a failed or cancelled one",
		Long: `Deletes a bake's objects in s3.bucket; a running bake (or any of its split
workflows) is refused. Releases are never touched.

gc deletes only what the Temporal server the bake was started on says is
closed: the bake records that server's cluster and namespace at its first
start, and gc refuses when this config connects to another one (a server or
namespace that does not know the bake proves nothing), or when the bake has
no such record (started by an earlier release). --force skips that proof, for
an operator who knows the bake is not running anywhere.

Of a completed bake, gc deletes the intermediates its steps left (with
bake.keep-intermediates, or written by a slice attempt that outlived its
slice): identity blocks, per-MLP results, checkpoints, slice partials and
merged splits. Its record, seeds files and final dataset stay, so
` + "`dataset download bake:ID`" + ` still works. The same holds for a bake this Temporal
server no longer knows (its history expired) whose final dataset is committed.

Of a failed, cancelled, terminated or timed-out bake, gc deletes everything but
its record (which keeps the ID bound to its spec): starting it again with
` + "`whestbake bake --id ID`" + ` recomputes it from scratch.

gc holds the bake's lock while it deletes, commit markers first: a
` + "`whestbake bake`" + ` of the same ID is refused until gc is done, and gc is refused
while such a start stores its inputs. A gc that dies releases it within 10
minutes.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id := args[0]
			if err := settings.CheckBakeID(id); err != nil {
				return cmdline.Usagef("bake ID %v", err)
			}
			cfg, err := starterConfig(cmd, nil)
			if err != nil {
				return err
			}
			c := bakeclient.New(cfg, cmd.ErrOrStderr())
			defer c.Close()
			res, err := c.GC(cmd.Context(), bakeclient.GCInput{ID: id, Force: force})
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), gcJSON{Schema: gcSchema, GCOutput: res})
			}
			printGC(cmd.OutOrStdout(), res)
			return nil
		},
	})
	cmd.Flags().BoolVar(&force, "force", false, "delete without proving that the bake is closed "+
		"on the Temporal cluster and namespace it was started in")
	jsonFlag(cmd, &asJSON, "print what was deleted and kept as JSON")
	return cmd
}

// gcJSON is whestbake.gc/v1.
type gcJSON struct {
	Schema string `json:"schema"`
	bakeclient.GCOutput
}

// printGC says what gc deleted, why it could, and what it kept.
func printGC(out io.Writer, res bakeclient.GCOutput) {
	how := "it " + res.BakeState
	if res.BakeState == bakeclient.UnknownState {
		how = "its namespace no longer holds its history"
		if res.Forced {
			how = "this Temporal namespace does not know it; --force"
		}
	}
	fmt.Fprintf(out, "Deleted %d objects (%s) of bake %s (%s) in %s\n",
		res.Deleted.Objects, bytesize.Format(res.Deleted.Bytes), res.ID, how, res.Location)
	if res.AbortedUploads > 0 {
		fmt.Fprintf(out, "Aborted %d incomplete uploads that killed workers left "+
			"under it and at its release.\n", res.AbortedUploads)
	}
	if res.Completed {
		fmt.Fprintf(out, "Kept its record, seeds and final dataset: %d objects, %s.\n",
			res.Kept.Objects, bytesize.Format(res.Kept.Bytes))
	} else {
		fmt.Fprintf(out, "Kept its record only; `whestbake bake --id %s` with the same config "+
			"would recompute it from scratch.\n", res.ID)
	}
}
