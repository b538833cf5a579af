package activities_test

import (
	"context"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/whestbake/whestbake/activities"
	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/dataset"
	"github.com/whestbake/whestbake/gpuengine"
	"github.com/whestbake/whestbake/internal/hub/hubtest"
	"github.com/whestbake/whestbake/internal/keys"
	"github.com/whestbake/whestbake/internal/manifest"
	"github.com/whestbake/whestbake/internal/seal"
)

// testPushRefusesAPreparedTreeUnlikeTheParquet: a committed dataset whose
// every file matches its manifest, but whose prepared Arrow split is
// truncated, or holds another bake's rows, is published neither by Push
// nor by HubPush: whestbench's loader would read the tree instead of the
// parquet files. The refusal is for good and names the file; no release
// file and no Hub repository appear.
func testPushRefusesAPreparedTreeUnlikeTheParquet(t *testing.T, f *fixture) {
	ctx := context.Background()
	good := bakeDataset(t, f, "prepared-good", 11)
	other := bakeDataset(t, f, "prepared-other", 12)
	a := f.acts(gpuengine.CPU{})
	arrow := path.Join(dataset.PreparedDir, split, "data-00000-of-00001.arrow")
	srv := hubtest.New(t)
	const token = "hf_prepared_token_4242"
	srv.AddToken(token, "alice", "write")
	a.HubToken = func() (string, error) { return token, nil }

	for i, c := range []struct {
		name  string
		spoil func(t *testing.T, dir string)
		want  string
	}{
		{"truncated", func(t *testing.T, dir string) {
			p := filepath.Join(dir, filepath.FromSlash(arrow))
			st, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Truncate(p, st.Size()/2); err != nil {
				t.Fatal(err)
			}
		}, "it is truncated"},
		{"another bake's rows", func(t *testing.T, dir string) {
			theirs := fetch(t, f, other.Prefix)
			for _, name := range []string{"data-00000-of-00001.arrow", "state.json"} {
				data, err := os.ReadFile(filepath.Join(theirs, dataset.PreparedDir, split, name))
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(
					filepath.Join(dir, dataset.PreparedDir, split, name),
					data,
					0o644,
				); err != nil {
					t.Fatal(err)
				}
			}
		}, "differs from the rows of data/public-*.parquet"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := fetch(t, f, good.Prefix)
			c.spoil(t, dir)
			bad := keys.Bake("prepared-bad-" + string(rune('0'+i))).Dataset()
			if _, _, err := activities.CommitDir(
				ctx,
				f.st,
				dir,
				bad,
				seal.Seal{Bake: "prepared-bad"},
			); err != nil {
				t.Fatal(err)
			}
			tag := "bad" + string(rune('0'+i))
			_, err := run[bakeapi.PushOutput](a, a.Push, releaseInput(f, bad, "demo", tag))
			app := wantAppError(t, err, bakeapi.ErrCorruptPartial)
			for _, want := range []string{bad + "/" + arrow, c.want, "nothing is published"} {
				if !strings.Contains(app.Error(), want) {
					t.Errorf("Push: error %q does not say %q", app.Error(), want)
				}
			}
			rel := keys.Release("datasets", "demo", tag)
			if keys, err := f.st.List(ctx, rel+"/"); err != nil || len(keys) > 0 {
				t.Errorf("the refused push wrote %v (%v)", keys, err)
			}

			repo := "alice/bad" + string(rune('0'+i))
			_, err = run[bakeapi.HubPushOutput](
				a,
				a.HubPush,
				bakeapi.HubPushInput{
					DatasetPrefix: bad,
					Hub:           bakeapi.HubSpec{Repo: repo, Endpoint: srv.URL},
				},
			)
			app = wantAppError(t, err, bakeapi.ErrCorruptPartial)
			if !strings.Contains(app.Error(), c.want) {
				t.Errorf("HubPush: error %q does not say %q", app.Error(), c.want)
			}
			if exists, _ := srv.Exists(repo); exists {
				t.Error("the refused Hub push created the repository")
			}
		})
	}
	// The dataset as the bake committed it is published.
	mustRun[bakeapi.PushOutput](t, a, a.Push, releaseInput(f, good.Prefix, "demo", "good"))
	mustRun[bakeapi.HubPushOutput](
		t,
		a,
		a.HubPush,
		bakeapi.HubPushInput{
			DatasetPrefix: good.Prefix,
			Hub:           bakeapi.HubSpec{Repo: "alice/good", Endpoint: srv.URL},
		},
	)
}

// fetch copies the committed directory at prefix into a new local folder.
func fetch(t *testing.T, f *fixture, prefix string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "ds")
	if err := manifest.Fetch(
		context.Background(),
		f.st,
		prefix,
		readManifest(t, f.st, prefix),
		dir,
	); err != nil {
		t.Fatal(err)
	}
	return dir
}
