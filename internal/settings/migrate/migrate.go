// Package migrate turns a flag-value config file of an older whestbake
// into the sectioned schema every verb reads, for `whestbake config
// migrate`: each flag's value under the config key the flag defaults to,
// and the flags that have no key listed for the command line.
package migrate

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/viper"
	"go.yaml.in/yaml/v3"

	"github.com/whestbake/whestbake/internal/settings"
)

// Flag is a flag of the verb an old file was written for.
type Flag struct {
	// Key is the config key the flag defaults to; "" for a flag that has
	// none, such as --output and --slice, which stays on the command line.
	Key string
	// SplitKey is the key of the one bake.splits entry that holds the
	// flag: dataset bake's --split, --config, --n-mlps, --seed and
	// --mlp-seeds; "" for any other flag.
	SplitKey string
	// Path says the value is a path: it is made absolute, since the old
	// file's paths were relative to where the verb ran and the new file's
	// are relative to the file.
	Path bool
}

// Input is an old file and what the verb it was written for took.
type Input struct {
	File string
	// Verb is the verb's command path, such as `whestbake dataset bake`,
	// which the output names in its comments.
	Verb string
	// Flags are the verb's flags, by name.
	Flags map[string]Flag
	// DefaultSplit names the bake.splits entry of a file that sets split
	// flags but not the split's name.
	DefaultSplit string
}

// FlagFile reads in.File, YAML, JSON or TOML, as flag values of in.Verb and
// writes them as config keys, then checks that the result loads as every
// verb would load it. Keys and values are the old file's, so anything may
// be in them: the keys reach the output only through the YAML encoder, as
// keys and values or as comment text, which it writes with a '#' on every
// line; a newline in them cannot start a live key. The command-line hint
// quotes each value for a POSIX shell.
func FlagFile(in Input) ([]byte, error) {
	file := in.File
	data, err := settings.ReadConfigFile(file)
	if err != nil {
		return nil, err
	}
	v := viper.New()
	v.SetConfigType("yaml")
	ext := strings.TrimPrefix(filepath.Ext(file), ".")
	if slices.Contains([]string{"yaml", "yml", "json", "toml"}, ext) {
		v.SetConfigType(ext)
	}
	if err := v.ReadConfig(bytes.NewReader(data)); err != nil {
		return nil, fmt.Errorf("%s: %v", file, err)
	}
	doc := map[string]any{}
	split := map[string]any{}
	var flagOnly, unknown []string
	for _, name := range v.AllKeys() {
		val := v.Get(name)
		f, ok := in.Flags[name]
		switch {
		case !ok:
			unknown = append(unknown, name)
			continue
		case f.Path:
			val = absPath(fmt.Sprint(val))
		}
		switch {
		case f.SplitKey != "":
			split[f.SplitKey] = val
		case f.Key != "":
			setPath(doc, strings.Split(f.Key, "."), val)
		default:
			flagOnly = append(flagOnly, "--"+name+" "+shellQuote(flagText(val)))
		}
	}
	if len(split) > 0 {
		if _, ok := split["name"]; !ok {
			split["name"] = in.DefaultSplit
		}
		setPath(doc, []string{"bake", "splits"}, []any{split})
	}
	out, err := in.encode(doc, flagOnly, unknown)
	if err != nil {
		return nil, err
	}
	if err := checkMigrated(out); err != nil {
		return nil, fmt.Errorf(
			"%s migrated does not load (fix the value in %s): %w",
			file,
			file,
			err,
		)
	}
	return out, nil
}

// encode writes doc as YAML indented as configs/example.yaml is, with a
// head comment naming the old file and a foot comment listing the flags
// that stay on the command line and the keys that were no flags.
func (in Input) encode(doc map[string]any, flagOnly, unknown []string) ([]byte, error) {
	var body yaml.Node
	if err := body.Encode(doc); err != nil {
		return nil, err
	}
	out := &yaml.Node{
		Kind:    yaml.DocumentNode,
		Content: []*yaml.Node{&body},
		HeadComment: fmt.Sprintf("%s in the sections of configs/example.yaml, for `%s` "+
			"(by `whestbake config migrate`).", in.File, in.Verb),
	}
	var foot []string
	if len(flagOnly) > 0 {
		foot = append(foot, "Not config keys; pass them on the command line:",
			"  "+strings.Join(flagOnly, " "))
	}
	if len(unknown) > 0 {
		for i, k := range unknown {
			unknown[i] = strconv.Quote(k)
		}
		ignored := fmt.Sprintf(
			"Not flags of `%s`, so the old file's reader ignored them: %s",
			in.Verb,
			strings.Join(unknown, ", "),
		)
		foot = append(foot, ignored)
	}
	out.FootComment = strings.Join(foot, "\n")
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(out); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// shellQuote is s as one word of a POSIX shell command line: as it is when
// it holds only characters no shell treats specially, else in single
// quotes, within which sh(1) expands nothing: $(…), `…`, $VAR, globs and
// newlines are literal. Each single quote of s is written as
//
//	'\''
func shellQuote(s string) string {
	const plain = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-+=.,:/@%"
	if s != "" && strings.Trim(s, plain) == "" {
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

// flagText spells a file value as a flag takes it: lists joined with
// commas, as the old reader joined them.
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

// absPath is p made absolute against the working directory; "" stays "".
func absPath(p string) string {
	if a, err := filepath.Abs(p); p != "" && err == nil {
		return a
	}
	return p
}
