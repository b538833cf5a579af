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
// flagKeys (flag name → config key).
func starterConfig(cmd *cobra.Command, flagKeys map[string]string) (settings.Config, error) {
	return settings.Load(cmdline.ConfigFile(cmd.Flags()), settings.FlagOverrides(cmd.Flags(), flagKeys))
}

// dial connects to Temporal, logging only the SDK's warnings.
func dial(ctx context.Context, cfg settings.Config, stderr io.Writer) (client.Client, error) {
	if err := cfg.ValidateTemporal(); err != nil {
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

// noSuchBake turns Temporal's NotFound into a message that names the bake.
func noSuchBake(id string, err error) error {
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return fmt.Errorf("no bake %q on this Temporal server: check the id with `whestbake list`", id)
	}
	return err
}
