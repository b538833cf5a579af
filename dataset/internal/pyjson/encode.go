package pyjson

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Dumps encodes a canonical value, as Object describes it, byte-for-byte like
// Python's json.dumps. With indent it is json.dumps(v, indent=2): items end in
// "," plus a newline, every list element on its own line, {} and [] for empty
// containers, no trailing newline. Without it is json.dumps(v) with the
// default ", " and ": " separators on one line. Both escape non-ASCII as
// \uXXXX, as ensure_ascii=True does.
func Dumps(v any, indent bool) ([]byte, error) {
	e := pyEncoder{indent: indent}
	if err := e.value(v, 0); err != nil {
		return nil, err
	}
	return e.buf.Bytes(), nil
}

type pyEncoder struct {
	buf    bytes.Buffer
	indent bool
}

func (e *pyEncoder) newline(depth int) {
	if e.indent {
		e.buf.WriteByte('\n')
		e.buf.WriteString(strings.Repeat("  ", depth))
	}
}

func (e *pyEncoder) separator() {
	if e.indent {
		e.buf.WriteByte(',')
	} else {
		e.buf.WriteString(", ")
	}
}

func (e *pyEncoder) value(v any, depth int) error {
	switch x := v.(type) {
	case nil:
		e.buf.WriteString("null")
	case bool:
		e.buf.WriteString(strconv.FormatBool(x))
	case string:
		writePyString(&e.buf, x)
	case json.Number:
		return e.number(x)
	case float64:
		e.buf.WriteString(FloatRepr(x))
	case *Object:
		return e.object(x, depth)
	case []any:
		return e.array(x, depth)
	default:
		if c := Canonical(v); isCanonical(c) {
			return e.value(c, depth)
		}
		return fmt.Errorf("dataset: cannot encode %T as JSON; "+
			"use string, bool, integers, floats, *Object or slices", v)
	}
	return nil
}

func isCanonical(v any) bool {
	switch v.(type) {
	case nil, bool, string, json.Number, float64, *Object, []any:
		return true
	}
	return false
}

func (e *pyEncoder) number(n json.Number) error {
	s := string(n)
	if IsIntText(s) {
		if !validBigInt(s) {
			return fmt.Errorf("dataset: %q is not a JSON integer", s)
		}
		// Python reads "-0" as the int 0 and writes it back as "0".
		if s == "-0" {
			s = "0"
		}
		e.buf.WriteString(s)
		return nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && !isRangeErr(err) {
		return fmt.Errorf("dataset: %q is not a JSON number", s)
	}
	e.buf.WriteString(FloatRepr(f))
	return nil
}

func validBigInt(s string) bool {
	s = strings.TrimPrefix(s, "-")
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func isRangeErr(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

func (e *pyEncoder) object(o *Object, depth int) error {
	if o.Len() == 0 {
		e.buf.WriteString("{}")
		return nil
	}
	e.buf.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			e.separator()
		}
		e.newline(depth + 1)
		writePyString(&e.buf, k)
		e.buf.WriteString(": ")
		if err := e.value(o.vals[k], depth+1); err != nil {
			return err
		}
	}
	e.newline(depth)
	e.buf.WriteByte('}')
	return nil
}

func (e *pyEncoder) array(a []any, depth int) error {
	if len(a) == 0 {
		e.buf.WriteString("[]")
		return nil
	}
	e.buf.WriteByte('[')
	for i, v := range a {
		if i > 0 {
			e.separator()
		}
		e.newline(depth + 1)
		if err := e.value(v, depth+1); err != nil {
			return err
		}
	}
	e.newline(depth)
	e.buf.WriteByte(']')
	return nil
}

// writePyString writes s as Python's ensure_ascii encoder does: the short
// escapes for " \ \n \r \t \b \f, everything outside printable ASCII as
// lowercase \uXXXX, astral characters as surrogate pairs. Invalid UTF-8 is
// written as U+FFFD, which is what decoding it in Python would have produced.
func writePyString(b *bytes.Buffer, s string) {
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		default:
			switch {
			case r >= 0x20 && r <= 0x7e:
				b.WriteRune(r)
			case r > 0xffff:
				r -= 0x10000
				fmt.Fprintf(b, `\u%04x\u%04x`, 0xd800+(r>>10), 0xdc00+(r&0x3ff))
			default:
				if r == utf8.RuneError {
					r = 0xfffd
				}
				fmt.Fprintf(b, `\u%04x`, r)
			}
		}
	}
	b.WriteByte('"')
}

// Compact renders a value for an error message, as one line of JSON
// or "null" for a missing value.
func Compact(v any) string {
	b, err := Dumps(v, false)
	if err != nil {
		return fmt.Sprintf("%v", v)
	}
	return string(b)
}
