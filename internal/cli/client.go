package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/whestbake/whestbake/internal/bakeclient"
	"github.com/whestbake/whestbake/internal/cmdline"
	"github.com/whestbake/whestbake/internal/devstack"
	"github.com/whestbake/whestbake/internal/settings"
)

// The Temporal verbs bake, status, watch, cancel, list and gc read the whole
// configuration themselves in starterConfig, flags included, so they skip the
// root's filling of flags from keys; starterVerb wires that up.
func starterVerb(cmd *cobra.Command) *cobra.Command {
	cmd.PersistentPreRunE = func(*cobra.Command, []string) error { return nil }
	return cmd
}

// starterConfig reads the verb's config file, the environment and the flags of
// flagKeys, flag name → config key. A server the config does not name is
// the dev stack's that `whestbake dev up` recorded in this directory, if
// any, by devstack.ClientDefaults, and so is the Web UI of its frontend.
func starterConfig(cmd *cobra.Command, flagKeys map[string]string) (settings.Config, error) {
	devDir := devstack.DefaultOptions().Dir
	dev := settings.Under{
		Keys: devstack.ClientKeys,
		Read: func() (map[string]string, error) { return devstack.ClientDefaults(devDir) },
	}
	overrides := settings.FlagOverrides(cmd.Flags(), flagKeys)
	cfg, err := settings.LoadUnder(cmdline.ConfigFile(cmd.Flags()), dev, overrides)
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
	return fmt.Sprintf("unknown for %s (set temporal.ui to its Web UI's base URL for a link)",
		cfg.Temporal.Address)
}

// openClient is the read-only verbs' way in: config from --config-file/env,
// and a client of its servers, which connects on first use.
func openClient(cmd *cobra.Command) (*bakeclient.Client, settings.Config, error) {
	cfg, err := starterConfig(cmd, nil)
	if err != nil {
		return nil, cfg, err
	}
	return bakeclient.New(cfg, cmd.ErrOrStderr()), cfg, nil
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
