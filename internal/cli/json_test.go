package cli

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// -update rewrites testdata/json/*.golden from this run's output: for a
// change of a schema made on purpose, which docs/CLI.md describes and
// whose version it raises when a field is removed, renamed or changes
// meaning.
var updateGolden = flag.Bool("update", false, "rewrite testdata/json/*.golden from this run")

// fixture is one of whestbench's fixture datasets, as a relative path, so
// that the output naming it is the same on every machine.
func fixture(name string) string {
	return filepath.Join("..", "..", "testdata", "whestbench-fixtures", name)
}

// checkGolden compares a verb's JSON output with testdata/json/NAME.golden.
// The values of the keys in varying (a key's name matches it anywhere, a
// JSON Pointer that one place) differ from run to run (run IDs, times,
// digests of timestamped files): they are replaced by "<varies>", and the
// output re-indented with sorted keys, before comparing. Without varying
// the output is compared byte for byte.
func checkGolden(t *testing.T, name, out string, varying ...string) {
	t.Helper()
	got := []byte(out)
	if len(varying) > 0 {
		got = maskJSON(t, out, varying)
	}
	path := filepath.Join("testdata", "json", name+".golden")
	if *updateGolden {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -run %s -update writes it)", err, t.Name())
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from %s (-update rewrites it after a change made on purpose):\n%s",
			name, path, got)
	}
}

func maskJSON(t *testing.T, out string, varying []string) []byte {
	t.Helper()
	v := decodeStrict(t, out)
	var mask func(v any, pointer string) any
	mask = func(v any, pointer string) any {
		switch x := v.(type) {
		case map[string]any:
			for k, item := range x {
				p := pointer + "/" + k
				if item != nil && (slices.Contains(varying, k) || slices.Contains(varying, p)) {
					x[k] = "<varies>"
					continue
				}
				x[k] = mask(item, p)
			}
		case []any:
			for i := range x {
				x[i] = mask(x[i], pointer+"/"+strconv.Itoa(i))
			}
		}
		return v
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(mask(v, "")); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// decodeStrict decodes one JSON document as RFC 8259 has it (Go's decoder
// takes no NaN or Infinity), numbers kept as written.
func decodeStrict(t *testing.T, doc string) any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(doc))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, doc)
	}
	if dec.More() {
		t.Fatalf("more than one JSON document:\n%s", doc)
	}
	return v
}

// Each local verb's --json is its documented schema: the fixture's
// metadata.json in its own key order, the first rows, every check.
func TestLocalVerbsJSON(t *testing.T) {
	ms := fixture("multi_split_v3.0")
	checkGolden(t, "info", mustRun(t, "dataset", "info", ms, "--json"))
	checkGolden(t, "inspect", mustRun(t, "dataset", "inspect", ms, "--rows", "2", "--json"))
	// whestbench baked the fixture: every check passes.
	checkGolden(t, "verify", mustRun(t, "dataset", "verify", ms, "--mlps", "0,3", "--json"))
	out := mustRun(t, "dataset", "compare", ms, ms, "--json")
	v := decodeStrict(t, out).(map[string]any)
	if v["schema"] != "whestbake.compare/v1" || v["same"] != true {
		t.Errorf("compare --json: schema %v, same %v", v["schema"], v["same"])
	}
}

// --json changes what goes to stdout, never the exit code: a failure is
// text on stderr with stdout empty, a usage error exits 2.
func TestJSONKeepsExitCodes(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
		err  string
	}{
		{[]string{"dataset", "info", filepath.Join(t.TempDir(), "none"), "--json"}, 1, "error: "},
		{[]string{"dataset", "inspect", filepath.Join(t.TempDir(), "none"), "--json"}, 1,
			"error: "},
		{[]string{"dataset", "verify", fixture("multi_split_v3.0"), "--split", "nope", "--json"}, 2,
			"--split nope"},
		{[]string{"list", "--limit", "0", "--json"}, 2, "--limit must be at least 1"},
		{[]string{"status", "my bake", "--json"}, 2, "bake ID"},
	} {
		code, out, errs := run(t, c.args...)
		if code != c.code || out != "" || !strings.Contains(errs, c.err) {
			t.Errorf("%v: exit %d (want %d), stdout %q, stderr %q (want %q)",
				c.args, code, c.code, out, errs, c.err)
		}
	}
}

// metadata.json may hold a number JSON cannot carry: 1e400, which
// Python's json.loads reads as infinity (and whestbake after it). info and
// inspect still print JSON that every reader parses, the value as the
// string json.dumps spells it and its place in non_finite; a control
// character of the metadata's stays escaped.
func TestJSONOfNonFiniteMetadata(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ds")
	if err := os.CopyFS(dir, os.DirFS(fixture("multi_split_v3.0"))); err != nil {
		t.Fatal(err)
	}
	mdPath := filepath.Join(dir, "metadata.json")
	withNotes := `"n_samples": 100,
  "notes": {"peak": 1e400, "floor": -1e400, "list": [1e400, 2.5, 5.0], ` +
		`"say": "\u001b[2J\u202e"},`
	md := strings.Replace(string(readBytes(t, mdPath)), `"n_samples": 100,`, withNotes, 1)
	writeFile(t, mdPath, md)
	for _, verb := range []string{"info", "inspect"} {
		out := mustRun(t, "dataset", verb, dir, "--json")
		doc := decodeStrict(t, out).(map[string]any)
		notes := doc["metadata"].(map[string]any)["notes"].(map[string]any)
		want := []any{"/notes/peak", "/notes/floor", "/notes/list/0"}
		if !slices.Equal(doc["non_finite"].([]any), want) ||
			notes["peak"] != "Infinity" || notes["floor"] != "-Infinity" {
			t.Errorf("%s: non_finite %v, notes %v; want %v, Infinity and -Infinity",
				verb, doc["non_finite"], notes, want)
		}
		if strings.ContainsAny(out, "\x1b\u202e") {
			t.Errorf("%s: a control character of the metadata reached the output:\n%s", verb, out)
		}
		pythonAgrees(t, mdPath, out)
	}
}

// pythonAgrees checks, with Python's json module as the judge, that the
// metadata in out is metadata.json as json.loads reads it, once each value
// non_finite names is read back as the float its string spells, and that
// out is strict JSON (no NaN or Infinity). Without python3 it says so.
func pythonAgrees(t *testing.T, mdPath, out string) {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Log("no python3: the metadata is not compared with Python's reading")
		return
	}
	const script = `
import json, sys
def strict(c): raise ValueError("not strict JSON: " + c)
out = json.loads(sys.stdin.read(), parse_constant=strict)
want = json.load(open(sys.argv[1]))
got = out["metadata"]
for pointer in out["non_finite"]:
    *path, last = [p.replace("~1", "/").replace("~0", "~") for p in pointer.split("/")[1:]]
    parent = got
    for p in path:
        parent = parent[int(p)] if isinstance(parent, list) else parent[p]
    key = int(last) if isinstance(parent, list) else last
    parent[key] = float(parent[key])
assert got == want, (got, want)
assert list(got) == list(want), "key order"
`
	cmd := exec.Command(py, "-c", script, mdPath)
	cmd.Stdin = strings.NewReader(out)
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("Python disagrees: %v\n%s", err, msg)
	}
}
