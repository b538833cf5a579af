// Package safetext is the one rule for printing text that a server or a
// file supplied: escaped, on one line. Such text is an S3 or Temporal
// server's error, a workflow's failure, the Hub's answer, a dataset's
// metadata.json, a config file's keys, a process's command line. Nothing it
// returns holds a character a terminal acts on or that reorders text, so no
// such text can clear the screen, rewrite the title, write the clipboard
// with OSC 52, print a line that passes for whestbake's own, or show the
// rest of a line backwards with U+202E.
package safetext

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"unicode/utf8"
)

// Line is s on one line with every control character escaped: C0, tab and
// newline too, which would break a table or forge a line; DEL, C1, the
// bidirectional controls and the line and paragraph separators, each as
// \xNN or \uNNNN; a byte that is not UTF-8 as \xNN. Every other character,
// ordinary Unicode included, is kept as it is. Line is idempotent: what it
// returns needs no escape.
func Line(s string) string {
	if !needsEscape(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r < 0x80 && IsControl(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case IsControl(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

func needsEscape(s string) bool {
	for _, r := range s {
		if r == utf8.RuneError || IsControl(r) {
			return true
		}
	}
	return false
}

// IsControl reports the characters a terminal acts on or that reorder
// text: C0, DEL, C1, the bidirectional marks, embeddings, overrides and
// isolates that Unicode calls Bidi_Control, and the line and paragraph
// separators.
func IsControl(r rune) bool {
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

// Multiline is an error that whestbake words on several lines of its own,
// such as a list of problems, of changed keys, or a server's last log
// lines: Lines are its lines, and Error their join by newlines. Whatever
// else its lines quote is escaped by ErrorLines, line by line.
type Multiline interface {
	error
	Lines() []string
}

// LinesError is a Multiline of whestbake's own: Text are its lines, and
// Err, if not nil, what it wraps for errors.Is and errors.As.
type LinesError struct {
	Text []string
	Err  error
}

func (e LinesError) Error() string   { return strings.Join(e.Text, "\n") }
func (e LinesError) Lines() []string { return e.Text }
func (e LinesError) Unwrap() error   { return e.Err }

// ErrorLines are err's lines as printed: one, escaped by Line, unless err
// is, or ends with, a Multiline, as an error that wraps one as "what: %w"
// does, whose own lines are kept, each escaped.
func ErrorLines(err error) []string {
	var m Multiline
	if errors.As(err, &m) {
		text, own := err.Error(), m.Error()
		if prefix, ok := strings.CutSuffix(text, own); ok {
			lines := append([]string(nil), m.Lines()...)
			if len(lines) == 0 {
				lines = []string{""}
			}
			lines[0] = prefix + lines[0]
			for i, l := range lines {
				lines[i] = Line(l)
			}
			return lines
		}
	}
	return []string{Line(err.Error())}
}

// Strings is a deep copy of v with every string it holds, in exported
// fields, elements and map entries, escaped by Line: what a text printer
// gets from the application, so that none of its fields reaches a terminal
// raw, whichever the printer names.
func Strings[T any](v T) T {
	out := clean(reflect.ValueOf(&v).Elem())
	return out.Interface().(T)
}

func clean(v reflect.Value) reflect.Value {
	switch v.Kind() {
	case reflect.String:
		return reflect.ValueOf(Line(v.String())).Convert(v.Type())
	case reflect.Struct:
		out := reflect.New(v.Type()).Elem()
		out.Set(v)
		for i := range v.NumField() {
			if f := out.Field(i); f.CanSet() {
				f.Set(clean(v.Field(i)))
			}
		}
		return out
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return v
		}
		if v.Kind() == reflect.Interface {
			out := reflect.New(v.Type()).Elem()
			out.Set(clean(v.Elem()))
			return out
		}
		out := reflect.New(v.Type().Elem())
		out.Elem().Set(clean(v.Elem()))
		return out
	case reflect.Slice:
		if v.IsNil() {
			return v
		}
		out := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		for i := range v.Len() {
			out.Index(i).Set(clean(v.Index(i)))
		}
		return out
	case reflect.Array:
		out := reflect.New(v.Type()).Elem()
		for i := range v.Len() {
			out.Index(i).Set(clean(v.Index(i)))
		}
		return out
	case reflect.Map:
		if v.IsNil() {
			return v
		}
		out := reflect.MakeMapWithSize(v.Type(), v.Len())
		for it := v.MapRange(); it.Next(); {
			out.SetMapIndex(clean(it.Key()), clean(it.Value()))
		}
		return out
	}
	return v
}
