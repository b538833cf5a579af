package card

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// The card's YAML front matter is written in PyYAML's yaml.dump block style,
// default_flow_style=False and allow_unicode=True, which is what HF and
// whestbench cards look like: mapping keys sorted, sequence items at their
// parent's indentation, plain scalars where they are unambiguous and single
// quotes otherwise. Only the shapes a card needs are supported: mappings
// as map[string]any, sequences as []any, strings and integers.

func yamlDump(v map[string]any) string {
	var b strings.Builder
	yamlMapping(&b, v, 0, false)
	return b.String()
}

func yamlMapping(b *strings.Builder, m map[string]any, indent int, inItem bool) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for i, k := range keys {
		// The first key of a sequence item shares the "- " line.
		if !(inItem && i == 0) {
			b.WriteString(strings.Repeat(" ", indent))
		}
		b.WriteString(yamlScalar(k))
		b.WriteByte(':')
		yamlValue(b, m[k], indent)
	}
}

// yamlValue writes what follows "key:" at a mapping indented by indent.
func yamlValue(b *strings.Builder, v any, indent int) {
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 0 {
			b.WriteString(" {}\n")
			return
		}
		b.WriteByte('\n')
		yamlMapping(b, x, indent+2, false)
	case []any:
		if len(x) == 0 {
			b.WriteString(" []\n")
			return
		}
		b.WriteByte('\n')
		for _, item := range x {
			b.WriteString(strings.Repeat(" ", indent))
			b.WriteString("- ")
			if m, ok := item.(map[string]any); ok && len(m) > 0 {
				yamlMapping(b, m, indent+2, true)
				continue
			}
			b.WriteString(yamlScalarValue(item))
			b.WriteByte('\n')
		}
	default:
		b.WriteByte(' ')
		b.WriteString(yamlScalarValue(v))
		b.WriteByte('\n')
	}
}

func yamlScalarValue(v any) string {
	switch x := v.(type) {
	case string:
		return yamlScalar(x)
	case int:
		return strconv.Itoa(x)
	case int64:
		return strconv.FormatInt(x, 10)
	}
	panic(fmt.Sprintf("yamlDump: unsupported value %T", v)) // the card builds only the types above
}

// Strings PyYAML's YAML 1.1 resolver would read as something other than a
// string, such as a null, bool, int, float, timestamp, merge or value, which
// must therefore be quoted.
var yamlImplicit = regexp.MustCompile(`^(?:` +
	`~|null|Null|NULL` +
	`|yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF` +
	`|[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+` +
	`|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+` +
	`|[-+]?[0-9][0-9_]*\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9_]+(?:[eE][-+][0-9]+)?` +
	`|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)` +
	`|[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}` +
	`(?:(?:[Tt]|[ \t]+)[0-9]{1,2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]*)?` +
	`(?:[ \t]*(?:Z|[-+][0-9]{1,2}(?::[0-9]{2})?))?)?` +
	`|<<|=)$`)

// yamlScalar writes s plain when that reads back as the same string, else
// single-quoted, else, for control characters, double-quoted.
func yamlScalar(s string) string {
	if yamlPlainOK(s) {
		return s
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f || r == 0x85 || r == 0x2028 || r == 0x2029 || r == 0xfeff {
			return strconv.Quote(s) // YAML double-quoted escapes agree with Go's for these
		}
	}
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

func yamlPlainOK(s string) bool {
	if s == "" || yamlImplicit.MatchString(s) {
		return false
	}
	// Indicator characters cannot start a plain scalar; "-", "?" and ":" only
	// when a space or the end follows, since then they open a block item.
	if strings.ContainsRune(",[]{}#&*!|>'\"%@` \t", rune(s[0])) {
		return false
	}
	if strings.ContainsRune("-?:", rune(s[0])) && (len(s) == 1 || s[1] == ' ' || s[1] == '\t') {
		return false
	}
	if strings.Contains(s, ": ") ||
		strings.Contains(s, " #") ||
		strings.HasSuffix(s, ":") ||
		strings.HasSuffix(s, " ") {
		return false
	}
	for _, r := range s {
		if r < 0x20 ||
			r == 0x7f ||
			r >= 0x80 && r < 0xa0 ||
			r == 0x2028 ||
			r == 0x2029 ||
			r == 0xfeff {
			return false
		}
	}
	return true
}
