package cli

import (
	"cmp"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/whestbake/whestbake/internal/devstack"
	"github.com/whestbake/whestbake/internal/safetext"
)

func newDevCmd() *cobra.Command {
	opts := devstack.DefaultOptions()
	opts.Buckets = []string{devstack.ArtifactsBucket, devstack.ReleasesBucket}
	cmd := &cobra.Command{
		Use:   "dev",
		Short: "Run the local dev stack: Temporal dev server with Web UI, and MinIO",
		Long: `Run the local dev stack on 127.0.0.1: the Temporal dev server (workflow state in
<dir>/temporal.db, so a crash loses nothing) with its Web UI, and MinIO with the
buckets "` + devstack.ArtifactsBucket + `" and "` + devstack.ReleasesBucket +
			`". Logs go to <dir>/logs, pid files to <dir>/run.
The servers come from bin/ (` + "`make tools`" + `).

` + "`dev up`" + ` records the ports it starts the servers on in <dir>/stack.json. Every
dev verb then addresses those servers: a port flag is needed only to change a
port (after ` + "`dev down`" + `). A server of another stack on one of the ports is named
(pid and address), never taken for this one. The starter and the worker run
in the directory holding <dir> reach the recorded servers too, for a config
that sets neither temporal.address nor s3.endpoint (configs/demo.yaml).

MinIO's credentials are the config's s3.access-key / s3.secret-key (or
WHESTBAKE_S3_ACCESS_KEY / WHESTBAKE_S3_SECRET_KEY), by default "` +
			devstack.DevAccessKey + `" / "` + devstack.DevSecretKey +
			`": public development credentials,
only fit for a server that listens on loopback.`,
	}
	pf := cmd.PersistentFlags()
	pf.StringVar(&opts.Dir, "dir", opts.Dir, "directory for the stack's state, logs and pid files")
	pf.StringVar(&opts.BinDir, "bin-dir", opts.BinDir,
		"directory holding the temporal and minio binaries")
	const recorded = "; default: the one recorded in <dir>/stack.json, else"
	pf.IntVar(&opts.TemporalPort, "temporal-port", opts.TemporalPort,
		"Temporal frontend (gRPC) port"+recorded)
	pf.IntVar(&opts.UIPort, "ui-port", opts.UIPort, "Temporal Web UI port"+recorded)
	pf.IntVar(&opts.MinIOPort, "minio-port", opts.MinIOPort, "MinIO S3 API port"+recorded)
	pf.IntVar(&opts.MinIOConsolePort, "minio-console-port", opts.MinIOConsolePort,
		"MinIO web console port"+recorded)
	cmd.AddCommand(newDevUpCmd(&opts), newDevDownCmd(&opts), newDevStatusCmd(&opts))
	return cmd
}

// devOptions is opts as a dev verb runs with it: MinIO's root user set to
// the one the config's s3 keys name, so that the worker and the starter
// reading the same file can log in; and each port the command line leaves
// unset zero, so that it comes from the stack's record before the default.
func devOptions(cmd *cobra.Command, opts devstack.Options) devstack.Options {
	s3 := loadedConfig(cmd).S3
	opts.AccessKey = cmp.Or(s3.AccessKey.Reveal(), devstack.DevAccessKey)
	opts.SecretKey = cmp.Or(s3.SecretKey.Reveal(), devstack.DevSecretKey)
	for flag, port := range map[string]*int{
		"temporal-port":      &opts.TemporalPort,
		"ui-port":            &opts.UIPort,
		"minio-port":         &opts.MinIOPort,
		"minio-console-port": &opts.MinIOConsolePort,
	} {
		if !cmd.Flags().Changed(flag) {
			*port = 0
		}
	}
	return opts
}

// newDevUpCmd, newDevDownCmd and newDevStatusCmd read opts when they run,
// after `dev`'s persistent flags have filled it.
func newDevUpCmd(opts *devstack.Options) *cobra.Command {
	var move bool
	cmd := &cobra.Command{
		Use:   "up",
		Short: "Start the dev stack (or confirm it is running) and print its links",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			out := cmd.OutOrStdout()
			up := devOptions(cmd, *opts)
			up.MoveIfTaken = move
			st, err := devstack.Up(cmd.Context(), up, out)
			if err != nil {
				return err
			}
			o := st.Options
			fmt.Fprintf(out, "\nTemporal  %s (namespace %s)\n",
				o.TemporalAddr(), devstack.Namespace)
			fmt.Fprintf(out, "Web UI    %s\n", o.UIURL())
			fmt.Fprintf(out, "S3        http://%s (buckets %s)\n",
				o.S3Config().Endpoint, strings.Join(o.Buckets, ", "))
			fmt.Fprintf(out, "Console   %s "+
				"(log in with WHESTBAKE_S3_ACCESS_KEY / WHESTBAKE_S3_SECRET_KEY; "+
				"dev defaults in `whestbake dev --help`)\n", o.ConsoleURL())
			fmt.Fprintf(out, "State in %s (ports in stack.json); stop with `whestbake dev down`.\n",
				o.Dir)
			return nil
		},
	}
	cmd.Flags().BoolVar(&move, "move-if-taken", false,
		"start a server whose port another program holds on a free port instead "+
			"(recorded in <dir>/stack.json), as make demo does")
	return cmd
}

func newDevDownCmd(opts *devstack.Options) *cobra.Command {
	return &cobra.Command{
		Use:   "down",
		Short: "Stop the dev stack; its state stays for the next `dev up`",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return devstack.Down(devOptions(cmd, *opts), cmd.OutOrStdout())
		},
	}
}

func newDevStatusCmd(opts *devstack.Options) *cobra.Command {
	return &cobra.Command{
		Use:   "status",
		Short: "Show whether each dev server runs and is healthy (exit 1 if not all are)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o, err := devOptions(cmd, *opts).Resolved()
			if err != nil {
				return err
			}
			states, err := devstack.Status(cmd.Context(), o)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			allUp := true
			for _, s := range states {
				switch {
				case s.PID == 0 && s.Other != "":
					fmt.Fprintf(out, "%-8s not running from this --dir; "+
						"%s is held by another program (%s), not by this stack\n",
						s.Component, s.Addr, s.Other)
				case s.PID == 0:
					fmt.Fprintf(out, "%-8s not running\n", s.Component)
				case s.Healthy:
					fmt.Fprintf(out, "%-8s running (pid %d), healthy on %s\n",
						s.Component, s.PID, s.Addr)
				default:
					fmt.Fprintf(out, "%-8s running (pid %d), NOT healthy on %s: %s\n",
						s.Component, s.PID, s.Addr, safetext.Line(s.Problem))
				}
				allUp = allUp && s.Healthy
			}
			if !allUp {
				return errors.New("the dev stack is not fully up: run `whestbake dev up`")
			}
			fmt.Fprintf(out, "Web UI %s, MinIO console %s\n", o.UIURL(), o.ConsoleURL())
			return nil
		},
	}
}
