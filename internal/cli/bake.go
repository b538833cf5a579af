package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/whestbake/whestbake/dataset"
	"github.com/whestbake/whestbake/internal/bakeclient"
	"github.com/whestbake/whestbake/internal/cmdline"
	"github.com/whestbake/whestbake/internal/preflight"
	"github.com/whestbake/whestbake/internal/safetext"
	"github.com/whestbake/whestbake/internal/settings"
)

func newBakeCmd() *cobra.Command {
	var wait bool
	var rideOut time.Duration
	cmd := starterVerb(&cobra.Command{
		Use: "bake --config-file FILE [--id ID] [--wait]",
		Short: "Start a bake on the Temporal workers (or reattach to it); " +
			"--wait shows per-split progress until it ends",
		Long: `Starts the BakeWorkflow of the config's bake on the Temporal workers
(whestbake-worker), after validating the whole config and checking the S3 store.

The bake ID decides what happens: a running bake with that ID is reattached
(its own input stands), a failed or cancelled one is restarted (finished MLPs
and slices are reused from S3), and a completed one is refused. A restart
first waits until nothing of the last run still runs: a bake being cancelled
is restarted once it has stopped, not reattached. While ` + "`whestbake gc`" + ` of the
same ID deletes, the start is refused, naming it.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := starterConfig(cmd, map[string]string{"id": "bake.id"})
			if err != nil {
				return err
			}
			if cmd.Flags().Changed("id") && settings.CheckBakeID(cfg.Bake.ID) != nil {
				// A bad --id is a usage error (exit 2), reported with
				// every other problem of the config, before any connection.
				_, err := preflight.Bake(cfg)
				return cmdline.Usage(err)
			}
			return runBake(cmd.Context(), cfg, waiting{wait, rideOut},
				cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	})
	cmd.Flags().String("id", "", "bake ID (bake.id): [A-Za-z0-9][A-Za-z0-9._-]*")
	cmd.Flags().BoolVar(&wait, "wait", false,
		"show per-split progress bars until the bake ends; exit status 1 if it failed")
	reconnectFlag(cmd, &rideOut)
	return cmd
}

// waiting is bake's --wait and its --reconnect-for.
type waiting struct {
	wait    bool
	rideOut time.Duration
}

// runBake starts the bake and, with --wait, follows it to its end.
func runBake(
	ctx context.Context,
	cfg settings.Config,
	w waiting,
	out, errOut io.Writer,
) error {
	c := bakeclient.New(cfg, errOut)
	defer c.Close()
	started, err := c.Start(ctx, bakeclient.StartInput{Waiting: printWaiting(out)})
	if err != nil {
		return err
	}
	started = safetext.Strings(started) // the server's words
	id := started.Input.BakeID
	fmt.Fprintf(out, "%s bake %s (workflow %s, run %s)\n",
		startVerb(started), id, started.WorkflowID, started.RunID)
	if started.Action == bakeclient.Reattached {
		fmt.Fprint(out, "This config matches the bake's record, "+
			"so nothing that decides its numbers changed. The running bake keeps\n"+
			"the input it started with: changes to slice-size, "+
			"max-in-flight, policy or release apply only to a new bake ID.\n")
	}
	if salt := bakeclient.SaltNote(started.Input.Spec); salt != "" {
		fmt.Fprintf(out, "%s; every GPU worker of this bake needs it in %s.\n",
			salt, dataset.SaltEnv)
	}
	fmt.Fprintf(out, "Web UI: %s\n", webUILink(cfg, started.WorkflowID))
	if !w.wait {
		fmt.Fprintf(out, "Follow it with `whestbake watch %s`.\n", id)
		return nil
	}
	// Progress until the end, then the result or the failure.
	return followToEnd(ctx, c, cfg, id, w.rideOut, out)
}

// startVerb says what a start did, as its first line begins.
func startVerb(s bakeclient.StartOutput) string {
	switch {
	case s.Action == bakeclient.Reattached:
		return "Reattached to running"
	case s.Action == bakeclient.Restarted && s.LastRun == "cancelling":
		return "Restarted (the last run was cancelled; finished MLPs and slices are reused)"
	case s.Action == bakeclient.Restarted:
		return fmt.Sprintf("Restarted (the last run %s; finished MLPs and slices are reused)",
			s.LastRun)
	}
	return "Started"
}

// printWaiting prints, while a restart or a cancel waits for the bake to
// wind down, which of its workflows still run.
func printWaiting(out io.Writer) func([]string) {
	return func(running []string) {
		fmt.Fprintf(out, "Waiting for %s to stop (running slices save their checkpoints first; "+
			"a control worker must be running)…\n", strings.Join(running, ", "))
	}
}

// followToEnd shows bake id's progress until it ends, then its result, or
// its failure as the error.
func followToEnd(ctx context.Context, c *bakeclient.Client, cfg settings.Config, id string,
	rideOut time.Duration, out io.Writer,
) error {
	state, err := follow(ctx, c, cfg, id, rideOut, out)
	if err != nil {
		return err
	}
	state = safetext.Strings(state) // the server's words, and the workers'
	r := state.Result
	if r == nil {
		return fmt.Errorf("bake %s %s: %s; details: `whestbake status %s` or %s",
			id, state.State, state.Failure.Message, id, webUILink(cfg, state.WorkflowID))
	}
	// The bake's own times, from its workflow: a reattached --wait did
	// not see it start.
	fmt.Fprintf(out, "✓ Bake %s done in %s (its run: %s to %s)\n  dataset  %s (manifest sha256 %s)\n",
		id, formatDuration(state.End.Sub(state.Start)),
		state.Start.Local().Format(time.DateTime), state.End.Local().Format(time.TimeOnly),
		r.Dataset, r.ManifestSHA256)
	if r.Release != "" {
		fmt.Fprintf(out, "  release  %s\n  download `whestbake dataset download %s --output DIR`\n",
			r.Release, strings.TrimSuffix(r.Release, "/"))
	}
	if r.Hub != "" {
		fmt.Fprintf(out, "  hub      %s (commit %s)\n", r.Hub, r.HubCommit)
	}
	return nil
}
