package naming

import (
	"strings"
	"unicode"
)

// slugify restates whestbench's _slugify: lowercase, drop everything but [a-z], whitespace
// and '-', collapse each whitespace/hyphen run to one '-', trim '-' at both ends.
func slugify(s string) string {
	var b strings.Builder
	pendingSep := false
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z':
			if pendingSep && b.Len() > 0 {
				b.WriteByte('-')
			}
			pendingSep = false
			b.WriteRune(r)
		case r == '-' || isPySpace(r):
			pendingSep = true
		}
	}
	return b.String()
}

// isPySpace approximates Python's str.isspace (what re's \s matches for str patterns);
// unlike unicode.IsSpace it also counts the ASCII separators U+001C..U+001F.
func isPySpace(r rune) bool {
	return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f)
}
