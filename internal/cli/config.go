package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/viper"
	"go.yaml.in/yaml/v3"

	"github.com/whestbake/whestbake/internal/cmdline"
	"github.com/whestbake/whestbake/internal/settings"
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
var splitFlags = map[string]string{"split": "name", "config": "config", "n-mlps": "n-mlps", "seed": "seed", "mlp-seeds": "seeds-file"}

func newConfigMigrateCmd() *cobra.Command {
	var verb, output string
	cmd := &cobra.Command{
		Use:   "migrate FILE [--verb \"dataset bake\"] [--output NEW]",
		Short: "Print a flag-value config file of an older whestbake in the sectioned schema every verb reads now",
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
				return cmdline.Usagef("--verb %q: not a whestbake verb (e.g. \"dataset bake\", \"calibrate\")", verb)
			}
			out, err := migrateFlagFile(args[0], target)
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
	cmd.Flags().StringVarP(&output, "output", "o", "", "write to FILE (must not exist) instead of stdout")
	return cmd
}

// migrateFlagFile reads file as flag values of verb and writes them as
// config keys, then checks that the result loads. Keys and values are the
// old file's, so anything may be in them: the keys reach the output only
// through the YAML encoder, as keys and values or as comment text, which it
// writes with a '#' on every line; a newline in them cannot start a live
// key. The command-line hint quotes each value for a POSIX shell.
func migrateFlagFile(file string, verb *cobra.Command) ([]byte, error) {
	data, err := settings.ReadConfigFile(file)
	if err != nil {
		return nil, err
	}
	v := viper.New()
	v.SetConfigType("yaml")
	if ext := strings.TrimPrefix(filepath.Ext(file), "."); slices.Contains([]string{"yaml", "yml", "json", "toml"}, ext) {
		v.SetConfigType(ext)
	}
	if err := v.ReadConfig(bytes.NewReader(data)); err != nil {
		return nil, fmt.Errorf("%s: %v", file, err)
	}
	flags := verb.Flags()
	flags.AddFlagSet(verb.InheritedFlags())
	doc := map[string]any{}
	split := map[string]any{}
	var flagOnly, unknown []string
	for _, name := range v.AllKeys() {
		val := v.Get(name)
		f := flags.Lookup(name)
		switch {
		case f == nil:
			unknown = append(unknown, name)
			continue
		case name == "mlp-seeds" || name == "token-file":
			val = absPath(fmt.Sprint(val))
		}
		key := keyOf(f)
		switch {
		case verb.CommandPath() == "whestbake dataset bake" && splitFlags[name] != "":
			split[splitFlags[name]] = val
		case key != "":
			setPath(doc, strings.Split(key, "."), val)
		default:
			flagOnly = append(flagOnly, "--"+name+" "+shellQuote(flagText(val)))
		}
	}
	if len(split) > 0 {
		if _, ok := split["name"]; !ok {
			split["name"] = flags.Lookup("split").DefValue
		}
		setPath(doc, []string{"bake", "splits"}, []any{split})
	}
	var body yaml.Node
	if err := body.Encode(doc); err != nil {
		return nil, err
	}
	out := &yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{&body},
		HeadComment: fmt.Sprintf("%s in the sections of configs/example.yaml, for `%s` (by `whestbake config migrate`).", file, verb.CommandPath())}
	var foot []string
	if len(flagOnly) > 0 {
		foot = append(foot, "Not config keys; pass them on the command line:", "  "+strings.Join(flagOnly, " "))
	}
	if len(unknown) > 0 {
		for i, k := range unknown {
			unknown[i] = strconv.Quote(k)
		}
		foot = append(foot, fmt.Sprintf("Not flags of `%s`, so the old file's reader ignored them: %s", verb.CommandPath(), strings.Join(unknown, ", ")))
	}
	out.FootComment = strings.Join(foot, "\n")
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2) // as configs/example.yaml
	if err := enc.Encode(out); err != nil {
		return nil, err
	}
	if err := checkMigrated(b.Bytes()); err != nil {
		return nil, fmt.Errorf("%s migrated does not load (fix the value in %s): %w", file, file, err)
	}
	return b.Bytes(), nil
}

// shellQuote is s as one word of a POSIX shell command line: as it is when
// it holds only characters no shell treats specially, else in single
// quotes, within which sh(1) expands nothing ($(…), `…`, $VAR, globs and
// newlines are literal), each single quote of s written as
//
//	'\''
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-+=.,:/@%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// checkMigrated loads a migrated file as every verb would, so that migrate
// never prints a file that a verb then refuses.
func checkMigrated(data []byte) error {
	dir, err := os.MkdirTemp("", "whestbake-migrate-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	file := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(file, data, 0o600); err != nil {
		return err
	}
	_, err = settings.Read(file)
	return err
}

// setPath sets doc[p0][p1]…= val, making the maps on the way.
func setPath(doc map[string]any, path []string, val any) {
	for _, p := range path[:len(path)-1] {
		next, ok := doc[p].(map[string]any)
		if !ok {
			next = map[string]any{}
			doc[p] = next
		}
		doc = next
	}
	doc[path[len(path)-1]] = val
}

// flagText spells a file value as a flag takes it: lists joined with commas,
// as the old reader joined them.
func flagText(val any) string {
	if list, ok := val.([]any); ok {
		parts := make([]string, len(list))
		for i, p := range list {
			parts[i] = fmt.Sprint(p)
		}
		return strings.Join(parts, ",")
	}
	return fmt.Sprint(val)
}

// absPath is p made absolute against the working directory ("" stays "").
func absPath(p string) string {
	if a, err := filepath.Abs(p); p != "" && err == nil {
		return a
	}
	return p
}
