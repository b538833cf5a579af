package cli

import (
	"encoding/xml"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// forgery is what a hostile server or file puts in a text whestbake
// quotes: a newline and a line that passes for whestbake's own, a screen
// clear, and a byte that is not UTF-8.
const forgery = "refused\nerror: upload your token to evil.example\x1b[2J\xff"

// wantOwnLines fails unless stderr is n lines, the first whestbake's
// "error: ", none of them the forged one, with no control character or
// invalid UTF-8 of the forgery raw, and the forgery shown.
func wantOwnLines(t *testing.T, what, stderr string, n int) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
	switch {
	case len(lines) != n || !strings.HasPrefix(lines[0], "error: "):
		t.Errorf("%s: %d lines, want %d beginning with \"error: \":\n%s", what, len(lines), n, stderr)
	case strings.Contains(stderr, "\nerror: upload") || strings.ContainsAny(stderr, "\x1b") ||
		!utf8.ValidString(stderr):
		t.Errorf("%s: the forged text reached the terminal raw:\n%q", what, stderr)
	case !strings.Contains(stderr, "error: upload your token"):
		t.Errorf("%s: the forged text is not shown:\n%q", what, stderr)
	}
}

// Every kind of error quotes what it was given, and none of what it quotes
// prints a line of its own: S3's and Temporal's answers, the Hub's, a config
// file's keys and a dataset's metadata.json. Plain errors used to print a
// server's newline as it was, while --json and status escaped it.
func TestErrorsQuoteNoLineOfTheirOwn(t *testing.T) {
	isolate(t)
	t.Chdir(t.TempDir())
	dir := t.TempDir()

	s3 := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(http.StatusBadRequest)
		_ = xml.NewEncoder(w).Encode(struct {
			XMLName xml.Name `xml:"Error"`
			Code    string
			Message string
		}{Code: "InvalidArgument", Message: forgery})
	}))
	defer s3.Close()
	t.Setenv("WHESTBAKE_S3_ENDPOINT", strings.TrimPrefix(s3.URL, "http://"))
	_, _, errs := run(t, "dataset", "download", "s3://whestbake/datasets/x/v1",
		"--output", filepath.Join(dir, "d"))
	wantOwnLines(t, "an S3 server's error", errs, 1)

	temporal := grpc.NewServer(grpc.UnknownServiceHandler(func(any, grpc.ServerStream) error {
		return status.Error(codes.InvalidArgument, forgery)
	}))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = temporal.Serve(l) }()
	defer temporal.Stop()
	t.Setenv("WHESTBAKE_TEMPORAL_ADDRESS", l.Addr().String())
	_, _, errs = run(t, "status", "some-bake")
	wantOwnLines(t, "a Temporal server's error", errs, 1)

	hubSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"error": ` + jsonQuote(forgery) + `}`))
	}))
	defer hubSrv.Close()
	_, _, errs = run(t, "dataset", "info", "hf://alice/x", "--endpoint", hubSrv.URL)
	wantOwnLines(t, "the Hub's error", errs, 1)

	// Two unknown keys: the error's own three lines, the key quoted escaped.
	cfg := writeFile(t, filepath.Join(dir, "c.yaml"),
		"bake: {\"refused\\nerror: upload your token to evil.example\\e[2J\": 1, nope: 2}\n")
	_, _, errs = run(t, "status", "some-bake", "--config-file", cfg)
	wantOwnLines(t, "a config file's keys", errs, 3)

	bad := filepath.Join(dir, "bad")
	if err := os.Mkdir(bad, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(bad, "metadata.json"),
		`{"schema_version": `+jsonQuote(forgery)+`, "splits": {}}`)
	_, _, errs = run(t, "dataset", "inspect", bad)
	wantOwnLines(t, "a dataset's metadata.json", errs, 1)
}
