package worker

import (
	"io"
	"log/slog"

	"github.com/spf13/cobra"

	"github.com/whestbake/whestbake/internal/cmdline"
	"github.com/whestbake/whestbake/internal/devstack"
	"github.com/whestbake/whestbake/internal/settings"
)

// flagKeys maps the worker's flags to config keys.
var flagKeys = map[string]string{
	"role":           "worker.role",
	"device":         "worker.device",
	"threads":        "worker.threads",
	"metrics-listen": "worker.metrics-listen",
}

// NewCommand is the whestbake-worker command line; it runs until SIGINT/SIGTERM
// cancels the caller's context.
func NewCommand(stderr io.Writer) *cobra.Command {
	var logFormat string
	cmd := &cobra.Command{
		Use: "whestbake-worker --role control|gpu|all " +
			"[--device auto|cpu|cuda] [--config-file FILE]",
		Short: "Run the Temporal workers of whestbake bakes",
		Long: `Runs the Temporal workers of whestbake bakes until SIGINT or SIGTERM.

  --role control  workflows and CPU activities (seeds, merge, combine, push); any host
  --role gpu      BakeSlice (and NameSplit, which needs the seed salt), one at a time;
                  one process per GPU (CUDA_VISIBLE_DEVICES)
  --role all      both in one process, for development and the demo

Settings come from --config-file FILE (or WHESTBAKE_CONFIG_FILE), the other
WHESTBAKE_* environment variables and these flags (see configs/example.yaml);
S3 credentials from the file or WHESTBAKE_S3_ACCESS_KEY /
WHESTBAKE_S3_SECRET_KEY only.`,
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			log, err := newLogger(stderr, logFormat)
			if err != nil {
				return err
			}
			// A server the config does not name is the one of the dev
			// stack `whestbake dev up` recorded here, as for the starter.
			dev := settings.Under{
				Keys: devstack.ClientKeys,
				Read: func() (map[string]string, error) {
					return devstack.ClientDefaults(devstack.DefaultOptions().Dir)
				},
			}
			cfg, err := settings.LoadUnder(
				cmdline.ConfigFile(cmd.Flags()),
				dev,
				settings.FlagOverrides(cmd.Flags(), flagKeys),
			)
			if err != nil {
				return err
			}
			return Run(cmd.Context(), cfg, log)
		},
	}
	fl := cmd.Flags()
	fl.String(
		cmdline.FileFlag,
		"",
		"YAML config file (keys in configs/example.yaml); also "+cmdline.FileEnv,
	)
	fl.String("role", "", "control, gpu or all (worker.role)")
	fl.String(
		"device",
		"auto",
		"slice engine device: auto, cpu or cuda; explicit choices never fall back (worker.device)",
	)
	fl.Int("threads", 0, "CPU threads per MLP (worker.threads; default all cores)")
	fl.String(
		"metrics-listen",
		"",
		"host:port serving /metrics, /healthz and /readyz: "+
			"127.0.0.1:9464 for this host only, :9464 for every interface "+
			"(worker.metrics-listen; default off)",
	)
	fl.StringVar(
		&logFormat,
		"log-format",
		"text",
		"text (for terminals) or json (one object per line, for log collectors)",
	)
	cmdline.Strict(cmd)
	return cmd
}

func newLogger(w io.Writer, format string) (*slog.Logger, error) {
	opts := &slog.HandlerOptions{ReplaceAttr: durationText}
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, cmdline.Usagef("--log-format %q unknown: use text or json", format)
}

// durationText writes a duration as a person reads it, "3m0s", in JSON
// too, where slog writes integer nanoseconds: the worker's own lines and
// the Temporal SDK's, which log timeouts and backoffs.
func durationText(_ []string, a slog.Attr) slog.Attr {
	if a.Value.Kind() == slog.KindDuration {
		a.Value = slog.StringValue(a.Value.Duration().String())
	}
	return a
}
