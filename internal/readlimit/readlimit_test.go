package readlimit_test

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/whestbake/whestbake/internal/readlimit"
)

// A file at the cap is read; one byte more, an endless device and a large
// sparse file are refused with the cap in the message, each without
// memory beyond the cap.
func TestFileReadsUpToItsCap(t *testing.T) {
	dir := t.TempDir()
	at := filepath.Join(dir, "at-cap")
	if err := os.WriteFile(at, []byte(strings.Repeat("a", 1024)), 0o600); err != nil {
		t.Fatal(err)
	}
	if data, err := readlimit.File(at, 1024); err != nil || len(data) != 1024 {
		t.Errorf("a file of exactly the cap: %d bytes, %v", len(data), err)
	}
	over := filepath.Join(dir, "over")
	if err := os.WriteFile(over, []byte(strings.Repeat("a", 1025)), 0o600); err != nil {
		t.Fatal(err)
	}
	huge := filepath.Join(dir, "huge")
	f, err := os.Create(huge)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(100 << 30); err != nil { // 100 GiB, sparse
		t.Fatal(err)
	}
	f.Close()
	for _, p := range []string{over, huge, "/dev/zero"} {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		_, err := readlimit.File(p, 1024)
		runtime.ReadMemStats(&after)
		var tl *readlimit.TooLargeError
		if !errors.As(err, &tl) || !strings.Contains(err.Error(), "larger than 1 KiB") {
			t.Errorf("%s: %v; want a TooLargeError naming 1 KiB", p, err)
		}
		if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<10 {
			t.Errorf("%s: reading it allocated %d bytes for a 1 KiB cap", p, grew)
		}
	}
	_, err = readlimit.File(filepath.Join(dir, "missing"), 1024)
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing file: %v", err)
	}
}

func TestSizeSpellsTheCap(t *testing.T) {
	for n, want := range map[int64]string{
		1 << 20:  "1 MiB",
		64 << 10: "64 KiB",
		1000:     "1000 bytes",
		3 << 19:  "1536 KiB",
	} {
		if got := readlimit.Size(n); got != want {
			t.Errorf("Size(%d) = %q, want %q", n, got, want)
		}
	}
}

// A document's tokens are bounded by the cap it was read under, one per
// TokenBytes: real documents pass, a cap's worth of empty objects does not,
// and closing brackets do not count.
func TestJSONTokensBoundsATreeByItsCap(t *testing.T) {
	const limit = 64 * readlimit.TokenBytes // 64 tokens
	ok := []byte(`{"a": [1, 2, 3], "b": {"c": "d"}}`)
	if err := readlimit.JSONTokens(ok, limit); err != nil {
		t.Errorf("a small object: %v", err)
	}
	atLimit := []byte("[" + strings.Repeat("{},", 62) + "{}]") // 1 + 63 opening brackets
	if err := readlimit.JSONTokens(atLimit, limit); err != nil {
		t.Errorf("64 tokens: %v", err)
	}
	over := []byte("[" + strings.Repeat("{},", 63) + "{}]")
	err := readlimit.JSONTokens(over, limit)
	if err == nil || !strings.Contains(err.Error(), "over 64 JSON tokens") ||
		!strings.Contains(err.Error(), "2 KiB") {
		t.Errorf("65 tokens: %v, want a refusal naming 64 tokens and the 2 KiB cap", err)
	}
	if err := readlimit.JSONTokens([]byte(`{"a": `), limit); err != nil {
		t.Errorf("malformed JSON is the decoder's to refuse, got %v", err)
	}
}
