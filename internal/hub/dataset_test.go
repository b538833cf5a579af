package hub_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/whestbake/whestbake/internal/hub"
)

// copyFixture copies whestbench's single-split fixture into a new directory.
func copyFixture(t *testing.T) string {
	t.Helper()
	src := filepath.Join("..", "..", "testdata", "whestbench-fixtures", "single_split_v3_protocol")
	dir := filepath.Join(t.TempDir(), "ds")
	if err := os.CopyFS(dir, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	return dir
}

// A dataset directory is pushed as its own files, the card re-rendered
// with the repository's id; anything else in it stays behind and is named.
// A directory that inspect would refuse gives no files at all.
func TestDatasetFiles(t *testing.T) {
	dir := copyFixture(t)
	for _, name := range []string{"token.txt", ".notes"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	files, left, err := hub.DatasetFiles(context.Background(), dir, "alice/whest-gt")
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	var card string
	for _, f := range files {
		paths = append(paths, f.Path)
		if f.Path == "README.md" {
			r, err := f.Open(context.Background(), 0)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(r)
			r.Close()
			card = string(b)
		}
	}
	want := []string{"README.md", "data/public-00000-of-00001.parquet", "metadata.json"}
	wantLeft := []string{".notes", "token.txt"}
	if !reflect.DeepEqual(paths, want) || !reflect.DeepEqual(left, wantLeft) {
		t.Errorf("pushes %v and leaves %v", paths, left)
	}
	if !strings.Contains(card, "alice/whest-gt") {
		t.Errorf("the card does not name the repository:\n%s", card)
	}

	pq := filepath.Join(dir, "data", "public-00000-of-00001.parquet")
	data, err := os.ReadFile(pq)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pq, data[:len(data)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	files, _, err = hub.DatasetFiles(context.Background(), dir, "alice/whest-gt")
	if err == nil || files != nil {
		t.Errorf("a truncated parquet file: %d files, %v", len(files), err)
	}
}
