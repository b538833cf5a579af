package settings

import (
	"errors"
	"fmt"
	"reflect"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/whestbake/whestbake/internal/safetext"
)

// checkFile reads a config file's YAML before viper does, to say where it
// is wrong in the file's own line numbers: a syntax error on the line that
// holds it, by YAMLSyntax, and every unknown key with the known key it most
// likely meant, which UnmarshalExact names without a line or a suggestion.
// Everything else, types and ranges, is left to Load and Validate.
func checkFile(data []byte) error {
	if err := YAMLSyntax(data); err != nil {
		return err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil || len(doc.Content) == 0 {
		return nil // decoding errors are viper's to report; an empty file sets nothing
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return fmt.Errorf(
			"line %d: the file is not a YAML mapping of the sections of configs/example.yaml%s",
			root.Line,
			migrateHint,
		)
	}
	if flat := flagValues(root); len(flat) > 0 {
		return fmt.Errorf(
			"%s at the top level: these are flag values, the schema local verbs read before; "+
				"every verb now reads the sections of configs/example.yaml%s",
			strings.Join(flat, ", "),
			migrateHint,
		)
	}
	var unknown []string
	walkKeys(root, reflect.TypeOf(Config{}), "", &unknown)
	switch len(unknown) {
	case 0:
		return nil
	case 1:
		return errors.New(unknown[0])
	}
	lines := []string{fmt.Sprintf("%d keys are not config keys:", len(unknown))}
	for _, u := range unknown {
		lines = append(lines, "  "+u)
	}
	return safetext.LinesError{Text: lines}
}

// migrateHint ends the errors about an older whestbake's flag-value files.
const migrateHint = ": `whestbake config migrate FILE` prints such a file in sections (docs/CLI.md)"

// flagValues lists the top-level keys of root that are not sections and
// hold no mapping: the flag values of an older whestbake's local verbs,
// such as `n-samples: 1e9`, with their lines. A mistyped section, `bakee:`
// over keys, is left to walkKeys, which suggests the section.
func flagValues(root *yaml.Node) []string {
	sections := map[string]bool{}
	t := reflect.TypeOf(Config{})
	for i := range t.NumField() {
		sections[t.Field(i).Tag.Get("mapstructure")] = true
	}
	var out []string
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		if !sections[strings.ToLower(k.Value)] && k.Tag != "!!merge" &&
			v.Kind != yaml.MappingNode &&
			v.Kind != yaml.AliasNode {
			out = append(out, fmt.Sprintf("%s (line %d)", k.Value, k.Line))
		}
	}
	return out
}

// YAMLSyntax returns data's YAML syntax error, if any, on the line that holds
// it. yaml.v3, viper's parser, reports the line of the construct around a
// problem, counted from 0 for parser errors, so often one line too early,
// and no line at all on line 1.
func YAMLSyntax(data []byte) error {
	var doc yaml.Node
	err := yaml.Unmarshal(data, &doc)
	var typeErr *yaml.TypeError
	if err == nil || errors.As(err, &typeErr) {
		return nil // decoding, not syntax: its lines are right
	}
	line, problem := syntaxErrorLine(data, err)
	if line == 0 {
		return errors.New(problem)
	}
	return fmt.Errorf("line %d: %s", line, problem)
}

// syntaxErrorLine finds the line of a YAML syntax error: the first line at
// which the file, cut after that line, fails with the same problem. Lines
// before the problem parse; the line that holds it, such as an unclosed
// bracket or quote, a bad indent or a tab, is the first whose prefix fails
// that way. A prefix that fails otherwise only cut a multi-line value short.
func syntaxErrorLine(data []byte, err error) (int, string) {
	problem := yamlProblem(err)
	lines := strings.SplitAfter(string(data), "\n")
	var prefix strings.Builder
	for i, l := range lines {
		prefix.WriteString(l)
		var n yaml.Node
		if e := yaml.Unmarshal([]byte(prefix.String()), &n); e != nil && yamlProblem(e) == problem {
			return i + 1, problem
		}
	}
	return 0, problem
}

// yamlProblem is a yaml.v3 syntax error without its "yaml: line N: " prefix.
func yamlProblem(err error) string {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if _, after, ok := strings.Cut(rest, ": "); ok {
			return after
		}
	}
	return msg
}

// walkKeys checks the keys of mapping node n against the config struct t,
// by its mapstructure tags, which viper matches without regard to case,
// descending into nested structs and lists of structs. Values of the wrong
// kind are left to the decoder, which names them.
func walkKeys(n *yaml.Node, t reflect.Type, prefix string, unknown *[]string) {
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n.Kind != yaml.MappingNode {
		return
	}
	fields := map[string]reflect.StructField{}
	for i := range t.NumField() {
		f := t.Field(i)
		fields[f.Tag.Get("mapstructure")] = f
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Tag == "!!merge" {
			walkKeys(v, t, prefix, unknown)
			continue
		}
		f, ok := fields[strings.ToLower(k.Value)]
		if !ok {
			*unknown = append(*unknown, unknownKey(k, prefix, t))
			continue
		}
		key := prefix + f.Tag.Get("mapstructure")
		switch ft := f.Type; {
		case ft.Kind() == reflect.Struct && ft.PkgPath() == t.PkgPath():
			walkKeys(v, ft, key+".", unknown)
		case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct:
			if v.Kind == yaml.AliasNode {
				v = v.Alias
			}
			if v.Kind != yaml.SequenceNode {
				continue
			}
			for j, item := range v.Content {
				walkKeys(item, ft.Elem(), fmt.Sprintf("%s[%d].", key, j), unknown)
			}
		}
	}
}

// unknownKey describes key node k, unknown among the fields of t, with the
// known key it most likely meant: a sibling within a few typing mistakes,
// with _ read as -, else the same name elsewhere in the config.
func unknownKey(k *yaml.Node, prefix string, t reflect.Type) string {
	msg := fmt.Sprintf("line %d: %s%s is not a config key", k.Line, prefix, k.Value)
	name := strings.ReplaceAll(strings.ToLower(k.Value), "_", "-")
	best, bestDist := "", 0
	var siblings []string
	for i := range t.NumField() {
		tag := t.Field(i).Tag.Get("mapstructure")
		siblings = append(siblings, tag)
		if d := editDistance(name, tag); best == "" || d < bestDist {
			best, bestDist = tag, d
		}
	}
	if best != "" && bestDist <= max(1, len(best)/3) {
		return msg + "; did you mean " + prefix + best + "?"
	}
	if path := findKey(reflect.TypeOf(Config{}), "", name); path != "" {
		return msg + "; did you mean " + path + "?"
	}
	where := "the top level"
	if prefix != "" {
		where = strings.TrimSuffix(prefix, ".")
	}
	return msg + " (" + where + " takes " + strings.Join(siblings, ", ") + ")"
}

// findKey is the first key of the config named name, as a full path.
func findKey(t reflect.Type, prefix, name string) string {
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("mapstructure")
		if tag == name {
			return prefix + tag
		}
		ft := f.Type
		if ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct {
			ft = ft.Elem()
			tag += "[]"
		}
		if ft.Kind() == reflect.Struct && ft.PkgPath() == t.PkgPath() {
			if p := findKey(ft, prefix+tag+".", name); p != "" {
				return p
			}
		}
	}
	return ""
}

// editDistance counts the insertions, deletions, substitutions and swaps of
// adjacent letters that turn a into b, the optimal string alignment, so
// that "depht" is one mistake away from "depth", as a typist would count it.
func editDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}
