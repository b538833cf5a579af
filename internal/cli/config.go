package cli

import (
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/whestbake/whestbake/internal/cmdline"
	"github.com/whestbake/whestbake/internal/settings/migrate"
)

func newConfigCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Work with config files (one schema for every verb: configs/example.yaml)",
	}
	cmd.AddCommand(newConfigMigrateCmd())
	return cmd
}

// splitFlags are the flags of `dataset bake` that a config file holds in
// one entry of bake.splits (flag → that entry's key).
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

// migrateInput is file as flag values of verb: its flags (inherited ones
// included), each with the config key it defaults to, and for dataset bake
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
