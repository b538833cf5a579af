package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// Strings that come from a dataset (metadata.json, split names, mlp_name,
// file names) or a server (the Hub's answers, error texts quoting them) are
// printed through printable, so that none of them can drive the terminal
// that shows them: ESC starts the CSI and OSC sequences that clear the
// screen, rewrite the title or write the clipboard (OSC 52), the C1
// controls U+0080–U+009F are the same introducers in one character, and the
// bidirectional controls reorder what is shown (U+202E prints the rest of a
// line backwards). Every other character, ordinary Unicode included, is
// printed as it is.

// printable is s with every control character escaped: C0 (tab and newline
// too, which would break a table or fake a line), DEL, C1, the
// bidirectional controls and the line and paragraph separators, each as
// \xNN or \uNNNN; a byte that is not UTF-8 as \xNN.
func printable(s string) string { return escapeControls(s, false) }

// printableLines is printable keeping newlines and tabs: for a message
// that is several lines of its own, such as an error.
func printableLines(s string) string { return escapeControls(s, true) }

func escapeControls(s string, keepLines bool) string {
	if !needsEscape(s, keepLines) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case keepLines && (r == '\n' || r == '\t'):
			b.WriteRune(r)
		case r < 0x80 && isControl(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case isControl(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

func needsEscape(s string, keepLines bool) bool {
	for _, r := range s {
		if r == utf8.RuneError || (isControl(r) && !(keepLines && (r == '\n' || r == '\t'))) {
			return true
		}
	}
	return false
}

// isControl reports the characters a terminal acts on or that reorder text:
// C0, DEL, C1, the bidirectional marks, embeddings, overrides and isolates
// (Unicode's Bidi_Control), and the line and paragraph separators.
func isControl(r rune) bool {
	switch {
	case r < 0x20, r >= 0x7f && r <= 0x9f:
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f,
		r >= 0x202a && r <= 0x202e,
		r >= 0x2066 && r <= 0x2069:
		return true
	case r == 0x2028, r == 0x2029:
		return true
	}
	return false
}

// writeJSON writes v as indented JSON whose strings hold no character
// isControl reports: encoding/json escapes C0 and the separators itself, and
// the rest (DEL, C1, bidirectional controls) are written as \uNNNN here. A
// JSON reader gets the same values; a terminal showing the output gets no
// control sequence.
func writeJSON(w io.Writer, v any) error { return encodeJSON(w, v, "  ") }

// writeJSONLine writes v as writeJSON does, on one line: one object of a
// newline-delimited stream (watch --json).
func writeJSONLine(w io.Writer, v any) error { return encodeJSON(w, v, "") }

func encodeJSON(w io.Writer, v any, indent string) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", indent)
	if err := enc.Encode(v); err != nil {
		return err
	}
	// Outside its strings JSON is ASCII without controls, so every such
	// character is inside a string, where \uNNNN means the same.
	var out bytes.Buffer
	for _, r := range buf.String() {
		if r >= 0x7f && isControl(r) {
			fmt.Fprintf(&out, `\u%04x`, r)
			continue
		}
		out.WriteRune(r)
	}
	_, err := w.Write(out.Bytes())
	return err
}
