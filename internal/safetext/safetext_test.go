package safetext_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/whestbake/whestbake/internal/safetext"
)

func TestLineEscapesControlsAndKeepsUnicode(t *testing.T) {
	for in, want := range map[string]string{
		"\x1b[2J":                `\x1b[2J`,
		"\x1b]52;c;aGVsbG8=\x07": `\x1b]52;c;aGVsbG8=\x07`,
		"\u009b31m":              `\u009b31m`,
		"abc\u202edef":           `abc\u202edef`,
		"\u2066x\u2069 \u200f":   `\u2066x\u2069 \u200f`,
		"a\tb\nc\r\x7f":          `a\x09b\x0ac\x0d\x7f`,
		"bad \xff utf-8":         `bad \xff utf-8`,
		"ü✓ 日本 \u200d emoji 👩‍💻": "ü✓ 日本 \u200d emoji 👩‍💻",
	} {
		got := safetext.Line(in)
		if got != want {
			t.Errorf("Line(%q) = %q, want %q", in, got, want)
		}
		if again := safetext.Line(got); again != got {
			t.Errorf("Line(Line(%q)) = %q, want it unchanged", in, again)
		}
	}
}

// forged is what a hostile server or file puts in a text whestbake quotes:
// a line that passes for whestbake's own, a screen clear and a byte that
// is not UTF-8.
const forged = "no such key\nerror: upload your token to evil.example\x1b[2J\xff"

// An error prints as one line whatever it quotes; one of whestbake's own
// lines keeps them, each escaped, also when wrapped with a prefix.
func TestErrorLines(t *testing.T) {
	wantOne := func(t *testing.T, lines []string) {
		t.Helper()
		if len(lines) != 1 || strings.ContainsAny(lines[0], "\n\x1b") ||
			!strings.Contains(lines[0], `\x0aerror: upload`) || !strings.Contains(lines[0], `\xff`) {
			t.Errorf("lines %q, want the one line escaped", lines)
		}
	}
	wantOne(t, safetext.ErrorLines(fmt.Errorf("store: get b/k: %w", errors.New(forged))))
	own := safetext.LinesError{Text: []string{"2 keys are not config keys:", "  a", "  " + forged}}
	lines := safetext.ErrorLines(fmt.Errorf("config file c.yaml: %w", own))
	if len(lines) != 3 || lines[0] != "config file c.yaml: 2 keys are not config keys:" ||
		lines[2] != "  "+safetext.Line(forged) {
		t.Errorf("lines %q, want the error's own three, the quoted key escaped", lines)
	}
	// Wrapped in the middle of a sentence, its lines are not its own.
	wantOne(t, safetext.ErrorLines(fmt.Errorf("bake: %w; then stop", safetext.LinesError{
		Text: []string{"a", forged},
	})))
}

// Strings escapes every string a value holds, wherever it lies, and leaves
// the rest and the original as they are.
func TestStrings(t *testing.T) {
	type inner struct {
		Name  string
		Count int
	}
	type status struct {
		ID      string
		At      time.Time
		Splits  []inner
		Result  *inner
		Details map[string]string
		Any     any
		unseen  string
	}
	at := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	in := status{
		ID:      forged,
		At:      at,
		Splits:  []inner{{forged, 3}},
		Result:  &inner{Name: forged},
		Details: map[string]string{forged: forged},
		Any:     forged,
		unseen:  forged,
	}
	out := safetext.Strings(in)
	esc := safetext.Line(forged)
	if out.ID != esc || out.Splits[0].Name != esc || out.Splits[0].Count != 3 ||
		out.Result.Name != esc || out.Details[esc] != esc || out.Any != esc || !out.At.Equal(at) {
		t.Errorf("Strings = %+v, want every string escaped and the rest kept", out)
	}
	if in.ID != forged || in.Splits[0].Name != forged || in.Result.Name != forged {
		t.Errorf("Strings changed its argument: %+v", in)
	}
}
