package cli

import (
	"context"
	"errors"
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/whestbake/whestbake/internal/cmdline"
	"github.com/whestbake/whestbake/internal/settings"
)

// Every verb reads one config schema: the sections of configs/example.yaml,
// from --config-file and WHESTBAKE_<SECTION>_<KEY>. A local verb's flag that
// says what the bake is, such as bake.width, or what this machine gives it,
// such as worker.threads, defaults to that key; a flag about this one
// invocation, such as --output or --slice, has no key and comes from the
// command line only.

// keyAnnotation is the pflag annotation that holds a flag's config key.
const keyAnnotation = "whestbake/config-key"

// fromKey makes fs's flags default to config keys, flag name → key: the
// file or the key's environment variable fills a flag the command line
// leaves unset. The key shows in the flag's help.
func fromKey(fs *pflag.FlagSet, keys map[string]string) {
	for name, key := range keys {
		f := fs.Lookup(name)
		if f == nil {
			panic("fromKey: no flag --" + name)
		}
		_ = fs.SetAnnotation(name, keyAnnotation, []string{key})
		f.Usage += " [config: " + key + "]"
	}
}

// keyOf is the config key flag f defaults to, "" if none.
func keyOf(f *pflag.Flag) string {
	if k := f.Annotations[keyAnnotation]; len(k) == 1 {
		return k[0]
	}
	return ""
}

type loadedKey struct{}

// loadConfig reads the config file and the environment, refuses the
// variables of an older schema, and fills every flag of cmd the command
// line left unset from its key: flags > environment > file > default. The
// configuration stays in cmd's context for verbs that read more of it.
func loadConfig(cmd *cobra.Command) error {
	if err := refuseFlagVariables(cmd.Flags()); err != nil {
		return err
	}
	cfg, err := settings.Read(cmdline.ConfigFile(cmd.Flags()))
	if err != nil {
		return err
	}
	var errs []error
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		key := keyOf(f)
		if f.Changed || key == "" || !cfg.Given(key) {
			return
		}
		if err := f.Value.Set(cfg.Flag(key)); err != nil {
			errs = append(errs, cmdline.Usagef("%s (from the config file or %s) for --%s: %v",
				key, settings.EnvName(key), f.Name, err))
			return
		}
		f.Changed = true
	})
	cmd.SetContext(context.WithValue(cmd.Context(), loadedKey{}, cfg))
	return errors.Join(errs...)
}

// loadedConfig is the configuration loadConfig read for cmd.
func loadedConfig(cmd *cobra.Command) settings.Loaded {
	cfg, _ := cmd.Context().Value(loadedKey{}).(settings.Loaded)
	return cfg
}

// refuseFlagVariables refuses WHESTBAKE_<FLAG> for fs's flags: an older
// whestbake read those, and one still set would now be ignored without a
// word, baking something other than its user meant.
func refuseFlagVariables(fs *pflag.FlagSet) error {
	var errs []error
	fs.VisitAll(func(f *pflag.Flag) {
		old := settings.EnvName(f.Name) // how the old schema named a flag's variable
		key := keyOf(f)
		if f.Name == cmdline.FileFlag ||
			os.Getenv(old) == "" ||
			(key != "" && settings.EnvName(key) == old) {
			return
		}
		fix := "pass --" + f.Name
		if key != "" {
			fix = "set " + settings.EnvName(key) + " (config key " + key + ") or pass --" + f.Name
		}
		errs = append(errs, cmdline.Usagef("%s is the variable of --%s in an older whestbake "+
			"and is no longer read: %s", old, f.Name, fix))
	})
	return errors.Join(errs...)
}
