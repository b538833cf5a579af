package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/spf13/cobra"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/whestbake/whestbake/internal/cmdline"
	"github.com/whestbake/whestbake/internal/devstack"
	"github.com/whestbake/whestbake/internal/preflight"
	"github.com/whestbake/whestbake/internal/settings"
	"github.com/whestbake/whestbake/internal/temporalconn"
)

// The Temporal verbs (bake, status, watch, cancel, list, gc) read the whole
// configuration themselves (starterConfig), flags included, so they skip the
// root's filling of flags from keys; starterVerb wires that up.
func starterVerb(cmd *cobra.Command) *cobra.Command {
	cmd.PersistentPreRunE = func(*cobra.Command, []string) error { return nil }
	return cmd
}

// starterConfig reads the verb's config file, the environment and the flags of
// flagKeys (flag name → config key). A server the config does not name is
// the dev stack's that `whestbake dev up` recorded in this directory, if
// any (devstack.ClientDefaults), and so is the Web UI of its frontend.
func starterConfig(cmd *cobra.Command, flagKeys map[string]string) (settings.Config, error) {
	devDir := devstack.DefaultOptions().Dir
	dev, err := devstack.ClientDefaults(devDir)
	if err != nil {
		return settings.Config{}, err
	}
	cfg, err := settings.LoadUnder(cmdline.ConfigFile(cmd.Flags()), dev, settings.FlagOverrides(cmd.Flags(), flagKeys))
	if err == nil && cfg.Temporal.UI == "" {
		cfg.Temporal.UI = devstack.WebUI(devDir, cfg.Temporal.Address)
	}
	return cfg, err
}

// webUILink is the Web UI page of workflow wid, or why there is none.
func webUILink(cfg settings.Config, wid string) string {
	if u := cfg.WorkflowURL(wid); u != "" {
		return u
	}
	return fmt.Sprintf("unknown for %s (set temporal.ui to its Web UI's base URL for a link)", cfg.Temporal.Address)
}

// dial connects to Temporal, logging only the SDK's warnings.
func dial(ctx context.Context, cfg settings.Config, stderr io.Writer) (client.Client, error) {
	if err := preflight.Temporal(cfg); err != nil {
		return nil, err
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	return temporalconn.Dial(ctx, cfg.Temporal.Conn(), log)
}

// connect is the read-only verbs' way in: config from --config-file/env, then Temporal.
func connect(cmd *cobra.Command) (client.Client, settings.Config, error) {
	cfg, err := starterConfig(cmd, nil)
	if err != nil {
		return nil, cfg, err
	}
	c, err := dial(cmd.Context(), cfg, cmd.ErrOrStderr())
	return c, cfg, err
}

// noSuchBake turns Temporal's NotFound into a message that names the bake
// and the server and namespace asked: a bake is often "missing" because
// the config points at another server.
func noSuchBake(t settings.Temporal, id string, err error) error {
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return fmt.Errorf("no bake %q on the Temporal server at %s, namespace %s: check the id with `whestbake list`, "+
			"or where temporal.address and temporal.namespace point", id, t.Address, t.Namespace)
	}
	return err
}

// bakeIDArg is the Args of the verbs that take a bake ID: exactly one, and
// one that can be a bake ID, so that `status "my bake"` is a usage error
// before anything connects.
func bakeIDArg(cmd *cobra.Command, args []string) error {
	if err := cobra.ExactArgs(1)(cmd, args); err != nil {
		return err
	}
	if err := settings.CheckBakeID(args[0]); err != nil {
		return fmt.Errorf("bake ID %w", err)
	}
	return nil
}
