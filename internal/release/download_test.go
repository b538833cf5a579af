package release_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/dataset"
	"github.com/whestbake/whestbake/gpuengine"
	"github.com/whestbake/whestbake/internal/datasettest"
	"github.com/whestbake/whestbake/internal/devstack/devtest"
	"github.com/whestbake/whestbake/internal/keys"
	"github.com/whestbake/whestbake/internal/localbake"
	"github.com/whestbake/whestbake/internal/manifest"
	"github.com/whestbake/whestbake/internal/release"
	"github.com/whestbake/whestbake/internal/shards"
	"github.com/whestbake/whestbake/internal/store"
)

// bakeDataset writes a small complete dataset into a new directory.
func bakeDataset(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "src")
	p, err := localbake.Plan(localbake.Input{
		NMLPs:  3,
		Split:  "public",
		Config: "default",
		Spec: bakeapi.Spec{
			Width:    4,
			Depth:    2,
			NSamples: 64,
			Sampler:  bakeapi.SamplerPhilox,
		},
		Threads: 1,
		Output:  dir,
	})
	if err != nil {
		t.Fatal(err)
	}
	err = localbake.WriteDir(context.Background(), localbake.WriteInput{
		Plan:    p,
		Engine:  gpuengine.CPU{},
		Threads: 1,
		Output:  dir,
	})
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// publish puts every file of dir under prefix, damaged (its first byte
// flipped) where damage names it, and then the manifest, its sha256s
// computed here.
func publish(t *testing.T, st *store.Store, dir, prefix, damage string) manifest.Manifest {
	t.Helper()
	ctx := context.Background()
	var m manifest.Manifest
	err := filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		sum := sha256.Sum256(data)
		m.Files = append(m.Files, manifest.File{
			Path:   rel,
			SHA256: hex.EncodeToString(sum[:]),
			Size:   int64(len(data)),
		})
		if rel == damage {
			data = append([]byte{data[0] ^ 1}, data[1:]...)
		}
		return st.Put(ctx, path.Join(prefix, rel), data)
	})
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Put(ctx, keys.Manifest(prefix), data); err != nil {
		t.Fatal(err)
	}
	return m
}

// A release arrives byte for byte, readable by everyone, a split in
// shards shard for shard; a damaged one,
// one never committed or one whose manifest lists nothing leaves nothing
// at the output or beside it, and an existing output is refused.
func TestDownload(t *testing.T) {
	cfg, bucket := devtest.StartStore(t)
	ctx := context.Background()
	st, err := store.Open(ctx, cfg, bucket)
	if err != nil {
		t.Fatal(err)
	}
	src := bakeDataset(t)
	m := publish(t, st, src, "releases/demo/v1", "")
	publish(t, st, src, "releases/demo/damaged", "metadata.json")
	err = st.Put(ctx, keys.Manifest("releases/demo/empty"), []byte(`{"files": []}`))
	if err != nil {
		t.Fatal(err)
	}
	// One file listed twice, once spelled ./name: it was reported as two
	// files, every sha256 matching, and written once.
	twice := publish(t, st, src, "releases/demo/twice", "")
	twice.Files = append(twice.Files, twice.Files[0])
	twice.Files[len(twice.Files)-1].Path = "./" + twice.Files[0].Path
	listing, err := json.Marshal(twice)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Put(ctx, keys.Manifest("releases/demo/twice"), listing); err != nil {
		t.Fatal(err)
	}
	parent := t.TempDir()
	download := func(prefix, output string) (release.DownloadOutput, error) {
		return release.Download(ctx, release.DownloadInput{
			Store:  cfg,
			Bucket: bucket,
			Prefix: prefix,
			Output: output,
		})
	}

	out := filepath.Join(parent, "v1")
	res, err := download("releases/demo/v1", out)
	if err != nil {
		t.Fatal(err)
	}
	var size int64
	for _, f := range m.Files {
		size += f.Size
		got, err := os.ReadFile(filepath.Join(out, f.Path))
		want, _ := os.ReadFile(filepath.Join(src, f.Path))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: %v, or not the published bytes", f.Path, err)
		}
		if st, err := os.Stat(filepath.Join(out, f.Path)); err != nil || st.Mode().Perm() != 0o644 {
			t.Errorf("%s: mode %v, %v", f.Path, st.Mode(), err)
		}
	}
	if st, err := os.Stat(out); err != nil || st.Mode().Perm() != 0o755 {
		t.Errorf("the directory: %v, %v", st.Mode(), err)
	}
	if res.Files != len(m.Files) || res.Bytes != size {
		t.Errorf("reported %+v, want %d files of %d bytes", res, len(m.Files), size)
	}

	// A split in shards (one row a shard here) arrives shard for shard.
	restore := shards.SetLimit(shards.FileBytes + shards.RowBytes(4, 2))
	sharded := bakeDataset(t)
	restore()
	publish(t, st, sharded, "releases/demo/shards", "")
	if _, err := download("releases/demo/shards", filepath.Join(parent, "shards")); err != nil {
		t.Fatal(err)
	}
	if got := datasettest.ReadTree(t, filepath.Join(parent, "shards")); len(got) != 5 ||
		!bytes.Equal(got["data/public-00002-of-00003.parquet"],
			readFile(t, filepath.Join(sharded, "data", "public-00002-of-00003.parquet"))) {
		t.Errorf("the release of a split in shards arrived as %d files", len(got))
	}
	os.RemoveAll(filepath.Join(parent, "shards"))

	_, err = download("releases/demo/v1", out)
	if !errors.As(err, new(*dataset.OutputExistsError)) {
		t.Errorf("an existing output: %v", err)
	}
	for prefix, want := range map[string]string{
		"releases/demo/damaged": "the copy in S3 is damaged, nothing was written to",
		"releases/demo/missing": "has no manifest.json: it is not a release, " +
			"or the bake has not finished",
		"releases/demo/empty": "lists no files",
		"releases/demo/twice": fmt.Sprintf("lists %q twice (as %q)",
			twice.Files[0].Path, "./"+twice.Files[0].Path),
	} {
		out := filepath.Join(parent, path.Base(prefix))
		if _, err := download(prefix, out); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", prefix, err, want)
		}
	}
	if left, _ := os.ReadDir(parent); len(left) != 1 {
		t.Errorf("left beside the output: %v", left)
	}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
