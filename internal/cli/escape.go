package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/whestbake/whestbake/internal/safetext"
)

// Text that comes from a dataset, a server or a file is printed by one
// rule, internal/safetext's: escaped, on one line. A dataset's text is
// metadata.json, split names, mlp_name and file names; a server's is an S3
// or Temporal server's error, a workflow's failure, the Hub's answers. The
// text verbs print their application's output through safetext.Strings,
// errors through printError, and single fields through safetext.Line;
// JSON through writeJSON.

// printError writes err to w as the command's error: "error: " and its
// lines from safetext.ErrorLines, so that no text it quotes prints a line
// of its own or drives the terminal.
func printError(w io.Writer, err error) {
	lines := safetext.ErrorLines(err)
	fmt.Fprintf(w, "error: %s\n", lines[0])
	for _, l := range lines[1:] {
		fmt.Fprintln(w, l)
	}
}

// writeJSON writes v as indented JSON whose strings hold no character
// safetext.IsControl reports: encoding/json escapes C0 and the separators
// itself, and the rest, DEL, C1 and bidirectional controls, are written as
// \uNNNN here. A JSON reader gets the same values; a terminal showing the
// output gets no control sequence.
func writeJSON(w io.Writer, v any) error { return encodeJSON(w, v, "  ") }

// writeJSONLine writes v as writeJSON does, on one line: one object of a
// newline-delimited stream, as watch --json writes.
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
		if r >= 0x7f && safetext.IsControl(r) {
			fmt.Fprintf(&out, `\u%04x`, r)
			continue
		}
		out.WriteRune(r)
	}
	_, err := w.Write(out.Bytes())
	return err
}
