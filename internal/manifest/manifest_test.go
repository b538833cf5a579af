package manifest_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/whestbake/whestbake/internal/devstack/devtest"
	"github.com/whestbake/whestbake/internal/keys"
	"github.com/whestbake/whestbake/internal/manifest"
	"github.com/whestbake/whestbake/internal/store"
)

func TestFetchChecksEveryFileAgainstTheManifest(t *testing.T) {
	cfg, bucket := devtest.StartStore(t)
	ctx := context.Background()
	st, err := store.Open(ctx, cfg, bucket)
	if err != nil {
		t.Fatal(err)
	}
	body := []byte("abc")
	if err := st.Put(ctx, "d/data/x.txt", body); err != nil {
		t.Fatal(err)
	}
	// sha256("abc"), the published test vector.
	good := manifest.File{
		Path:   "data/x.txt",
		SHA256: "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
		Size:   3,
	}
	listing := `{"files": [{"path": "data/x.txt", "sha256": "` + good.SHA256 + `", "size": 3}]}`
	if err := st.Put(ctx, keys.Manifest("d"), []byte(listing)); err != nil {
		t.Fatal(err)
	}
	m, _, err := manifest.Read(ctx, st, "d")
	if err != nil || len(m.Files) != 1 || m.Files[0] != good {
		t.Fatalf("Read = %+v, %v", m, err)
	}
	dir := t.TempDir()
	if err := manifest.Fetch(ctx, st, "d", m, dir); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "data", "x.txt")); string(got) != "abc" {
		t.Fatalf("fetched %q", got)
	}
	cases := map[string]struct {
		file manifest.File
		want error
	}{
		"wrong sha256": {
			manifest.File{Path: good.Path, SHA256: "00", Size: 3},
			manifest.ErrMismatch,
		},
		"wrong size": {
			manifest.File{Path: good.Path, SHA256: good.SHA256, Size: 4},
			manifest.ErrMismatch,
		},
		"escape": {
			manifest.File{Path: "../x.txt", SHA256: good.SHA256, Size: 3},
			manifest.ErrUnsafePath,
		},
		"absolute": {
			manifest.File{Path: "/etc/passwd", SHA256: good.SHA256, Size: 3},
			manifest.ErrUnsafePath,
		},
	}
	for name, c := range cases {
		err := manifest.Fetch(
			ctx,
			st,
			"d",
			manifest.Manifest{Files: []manifest.File{c.file}},
			t.TempDir(),
		)
		if !errors.Is(err, c.want) {
			t.Errorf("%s: err = %v, want %v", name, err, c.want)
		}
	}
	if err := st.Put(ctx, keys.Manifest("bad"), []byte("not json")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := manifest.Read(ctx, st, "bad"); !errors.Is(err, manifest.ErrMalformed) {
		t.Errorf("malformed manifest: %v", err)
	}
	if _, _, err := manifest.Read(ctx, st, "missing"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("missing manifest: %v", err)
	}
}

// A manifest or a listed object is written by whoever may write to the
// bucket: reading one is bounded. A manifest over MaxBytes is refused
// before it is decoded, one that lists a file twice (counted twice) is
// refused, and an object larger than its entry is refused from its size,
// with nothing written to disk.
func TestReadsOfAManifestAndItsFilesAreBounded(t *testing.T) {
	cfg, bucket := devtest.StartStore(t)
	ctx := context.Background()
	st, err := store.Open(ctx, cfg, bucket)
	if err != nil {
		t.Fatal(err)
	}
	const sum = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" // sha256("abc")
	entry := `{"path": "data/x.txt", "sha256": "` + sum + `", "size": 3}`
	padding := bytes.Repeat([]byte(" "), manifest.MaxBytes)
	huge := append([]byte(`{"files": [`+entry+`]}`), padding...)
	for prefix, body := range map[string][]byte{
		"huge": huge,
		"dup":  []byte(`{"files": [` + entry + `, ` + entry + `]}`),
		"neg":  []byte(`{"files": [{"path": "a", "sha256": "` + sum + `", "size": -1}]}`),
	} {
		if err := st.Put(ctx, keys.Manifest(prefix), body); err != nil {
			t.Fatal(err)
		}
		if _, _, err := manifest.Read(ctx, st, prefix); !errors.Is(err, manifest.ErrMalformed) {
			t.Errorf("%s manifest: %v, want ErrMalformed", prefix, err)
		}
	}
	if _, _, err := manifest.Read(ctx, st, "huge"); err == nil ||
		!strings.Contains(err.Error(), "manifest.MaxBytes") {
		t.Errorf("the error does not name the limit: %v", err)
	}

	big := bytes.Repeat([]byte("x"), 1<<20)
	if err := st.Put(ctx, "d/data/x.txt", big); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	err = manifest.Fetch(
		ctx,
		st,
		"d",
		manifest.Manifest{Files: []manifest.File{{Path: "data/x.txt", SHA256: sum, Size: 3}}},
		dir,
	)
	if !errors.Is(err, manifest.ErrMismatch) || !errors.Is(err, store.ErrTooLarge) {
		t.Fatalf("an object larger than its entry: %v, want ErrMismatch and store.ErrTooLarge", err)
	}
	if left, _ := os.ReadDir(filepath.Join(dir, "data")); len(left) != 0 {
		t.Errorf("the refused object left %v on disk", left)
	}
	if _, err := st.GetMax(ctx, "d/data/x.txt", 1<<20-1); !errors.Is(err, store.ErrTooLarge) {
		t.Errorf("GetMax of a larger object: %v", err)
	}
	if got, err := st.GetMax(ctx, "d/data/x.txt", 1<<20); err != nil || !bytes.Equal(got, big) {
		t.Errorf("GetMax at the limit: %d bytes, %v", len(got), err)
	}
}

// A list of paths read from a document is put in one spelling first and
// must then name every file once, inside its folder, never a file as
// another's folder.
func TestCleanPaths(t *testing.T) {
	files := func(paths ...string) []manifest.File {
		var fs []manifest.File
		for _, p := range paths {
			fs = append(fs, manifest.File{Path: p})
		}
		return fs
	}
	ok := files("./README.md", "data/../metadata.json", "data//public.parquet", "report/")
	if err := manifest.CleanPaths("m.json", ok); err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"README.md", "metadata.json", "data/public.parquet", "report"} {
		if ok[i].Path != want {
			t.Errorf("path %d cleaned to %q, want %q", i, ok[i].Path, want)
		}
	}
	for name, c := range map[string]struct {
		paths []string
		want  string
		kind  error
	}{
		"twice":           {[]string{"a.txt", "./a.txt"}, `lists "a.txt" twice (as "./a.txt")`, nil},
		"twice, resolved": {[]string{"d/a", "d/x/../a"}, `lists "d/a" twice`, nil},
		"empty":           {[]string{""}, `names ""`, manifest.ErrUnsafePath},
		"the folder":      {[]string{"."}, `names "."`, manifest.ErrUnsafePath},
		"escape":          {[]string{"a/../../x"}, `names "a/../../x"`, manifest.ErrUnsafePath},
		"absolute":        {[]string{"/etc/passwd"}, `names "/etc/passwd"`, manifest.ErrUnsafePath},
		"file and folder": {[]string{"d/a", "d"}, `lists "d" as a file and as the folder of "d/a"`, nil},
	} {
		err := manifest.CleanPaths("m.json", files(c.paths...))
		if !errors.Is(err, manifest.ErrMalformed) || !strings.Contains(err.Error(), c.want) ||
			(c.kind != nil && !errors.Is(err, c.kind)) {
			t.Errorf("%s: %v, want ErrMalformed saying %s", name, err, c.want)
		}
	}
}
