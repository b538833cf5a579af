package card

import (
	"regexp"
	"strings"
	"unicode"
)

// The card shows free text from metadata.json, such as a CPU brand, an OS,
// a salt id or a pretty name, which whoever wrote the file chose. The Hub renders
// the card as Markdown with HTML, so such text is escaped where it lands:
// it can add no heading, line, table cell, link, image or HTML, and no
// shell word to a command a reader copies. Text that needs no escaping is
// written as it is, so ordinary cards keep their bytes.

// markdownPunct are the characters that start Markdown or HTML constructs
// within a line: emphasis, code, links and images, raw HTML and entities,
// table cells, headings, strike-through.
const markdownPunct = "\\`*_[]<>&|!#~"

// oneLine replaces control characters, line breaks among them, and
// Unicode line and paragraph separators with spaces: free text stays on
// the line it is written into.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' {
			return ' '
		}
		return r
	}, s)
}

// cardText is s as plain Markdown text on one line: every character that
// could start a construct is backslash-escaped.
func cardText(s string) string {
	s = oneLine(s)
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(markdownPunct, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// cardCode is s as one inline code span, in which Markdown renders nothing:
// fenced by one more backtick than its longest run of them, by CommonMark's
// rule, padded with a space where it begins or ends with a backtick or a
// space, which the fence would otherwise swallow.
func cardCode(s string) string {
	s = oneLine(s)
	run, longest := 0, 0
	for _, r := range s {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	pad := ""
	if strings.HasPrefix(s, "`") ||
		strings.HasSuffix(s, "`") ||
		strings.HasPrefix(s, " ") && strings.HasSuffix(s, " ") {
		pad = " "
	}
	return fence + pad + s + pad + fence
}

// tableCell makes s safe in a cell of a Markdown table: GitHub's tables
// split cells at every unescaped '|', inside code spans too.
func tableCell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// shellSafe are words a shell reads as themselves.
var shellSafe = regexp.MustCompile(`^[A-Za-z0-9._+:@%/=,-]+$`)

// shellWord is s as one shell word on one line: as it is when the shell
// reads it so, else single-quoted.
func shellWord(s string) string {
	if shellSafe.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(oneLine(s), "'", `'\''`) + "'"
}
