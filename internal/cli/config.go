package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/whestbake/whestbake/internal/cmdline"
	"github.com/whestbake/whestbake/internal/preflight"
	"github.com/whestbake/whestbake/internal/settings"
	"github.com/whestbake/whestbake/internal/settings/migrate"
)

func newConfigCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Work with config files (one schema for every verb: configs/example.yaml)",
	}
	cmd.AddCommand(newConfigMigrateCmd(), newConfigCheckCmd())
	return cmd
}

func newConfigCheckCmd() *cobra.Command {
	var role string
	var asBake bool
	cmd := starterVerb(&cobra.Command{
		Use:   "check FILE [--role control|gpu|all] [--bake]",
		Short: "Validate a config file offline, listing every problem (exit status 1 if any)",
		Long: `Checks FILE, with this shell's WHESTBAKE_* variables, the way a whestbake-worker
started here reads it: the schema (unknown keys, types), every value, and the
files it names on this host (TLS CA bundles, client certificates and their keys,
which must match and be unexpired, seeds files, the Hub token file, the scratch
directory). With --bake, or when FILE sets bake.id or bake.splits, it is also
checked as ` + "`whestbake bake`" + ` reads it. Nothing is contacted: run it on each host
before a roll-out. The worker's role is --role, else worker.role, else all.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return checkConfig(cmd.OutOrStdout(), args[0], role, asBake)
		},
	})
	cmd.Flags().StringVar(&role, "role", "", "the worker role to check for (worker.role; default all)")
	cmd.Flags().BoolVar(&asBake, "bake", false, "also check it as `whestbake bake` reads it")
	return cmd
}

// checkConfig is `config check`: file loaded as a worker of role loads it,
// then checked offline; every problem comes back in one error.
func checkConfig(out io.Writer, file, role string, asBake bool) error {
	overrides := map[string]string{}
	if role != "" {
		overrides["worker.role"] = role
	}
	cfg, err := settings.Load(file, overrides)
	if err != nil {
		return err
	}
	if cfg.Worker.Role == "" {
		cfg.Worker.Role = settings.RoleAll
	}
	asBake = asBake || cfg.Bake.ID != "" || len(cfg.Bake.Splits) > 0
	if err := preflight.Config(cfg, asBake); err != nil {
		return err
	}
	as := "whestbake-worker --role " + cfg.Worker.Role
	if asBake {
		as += " and for whestbake bake"
	}
	fmt.Fprintf(out, "%s: valid for %s on this host "+
		"(every file it names was read; no server was contacted)\n", file, as)
	return nil
}

// splitFlags are the flags of `dataset bake` that a config file holds in
// one entry of bake.splits, flag → that entry's key.
var splitFlags = map[string]string{
	"split":     "name",
	"config":    "config",
	"n-mlps":    "n-mlps",
	"seed":      "seed",
	"mlp-seeds": "seeds-file",
}

func newConfigMigrateCmd() *cobra.Command {
	var verb, output string
	cmd := &cobra.Command{
		Use: "migrate FILE [--verb \"dataset bake\"] [--output NEW]",
		Short: "Print a flag-value config file of an older whestbake " +
			"in the sectioned schema every verb reads now",
		Long: `Older whestbakes read two kinds of config file: the local verbs took flag values
(n-samples: 1e9, at the top level), the Temporal verbs the sections of
configs/example.yaml. Every verb now reads the sections. migrate reads FILE
(YAML, JSON or TOML) as the flag values of --verb and prints the same settings
in sections on stdout (or into --output NEW): each flag under the key it now
defaults to (width → bake.width, threads → worker.threads), and for dataset
bake the split flags (--split, --config, --n-mlps, --seed, --mlp-seeds) as one
entry of bake.splits.
Flags that have no key (--output, --slice) are listed in a comment at the end:
pass them on the command line. Relative paths become absolute, since the old
file's paths were relative to where the verb ran and the new file's are
relative to the file. FILE may be at most 1 MiB.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			target, _, err := cmd.Root().Find(strings.Fields(verb))
			if err != nil || !target.Runnable() || target == cmd.Root() {
				return cmdline.Usagef("--verb %q: not a whestbake verb "+
					"(e.g. \"dataset bake\", \"calibrate\")", verb)
			}
			out, err := migrate.FlagFile(migrateInput(args[0], target))
			if err != nil {
				return err
			}
			if output != "" {
				return writeNewFile(output, out)
			}
			_, err = cmd.OutOrStdout().Write(out)
			return err
		},
	}
	cmd.Flags().StringVar(&verb, "verb", "dataset bake", "the verb FILE was written for")
	cmd.Flags().StringVarP(&output, "output", "o", "",
		"write to FILE (must not exist) instead of stdout")
	return cmd
}

// migrateInput is file as flag values of verb: its flags, inherited ones
// included, each with the config key it defaults to, and for dataset bake
// the split flags as one entry of bake.splits.
func migrateInput(file string, verb *cobra.Command) migrate.Input {
	flags := verb.Flags()
	flags.AddFlagSet(verb.InheritedFlags())
	bake := verb.CommandPath() == "whestbake dataset bake"
	in := migrate.Input{File: file, Verb: verb.CommandPath(), Flags: map[string]migrate.Flag{}}
	flags.VisitAll(func(f *pflag.Flag) {
		m := migrate.Flag{Key: keyOf(f), Path: f.Name == "mlp-seeds" || f.Name == "token-file"}
		if bake {
			m.SplitKey = splitFlags[f.Name]
		}
		in.Flags[f.Name] = m
	})
	if bake {
		in.DefaultSplit = flags.Lookup("split").DefValue
	}
	return in
}
