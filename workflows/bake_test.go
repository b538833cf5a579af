package workflows_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/internal/datasettest"

	"github.com/whestbake/whestbake/activities"
	"github.com/whestbake/whestbake/dataset"
	"github.com/whestbake/whestbake/gpuengine"
	"github.com/whestbake/whestbake/internal/devstack/devtest"
	"github.com/whestbake/whestbake/internal/hub/hubtest"
	"github.com/whestbake/whestbake/internal/keys"
	"github.com/whestbake/whestbake/internal/seeds"
	"github.com/whestbake/whestbake/internal/shards"
	"github.com/whestbake/whestbake/internal/store"
	"github.com/whestbake/whestbake/workflows"
)

// TestBakeWorkflowWithRealActivities runs the whole DAG in process: the real
// activities on the CPU engine against a real MinIO, two splits of several
// slices. The release must validate and its parquet files must be the bytes a
// local bake + merge + combine of the same seeds writes.
func TestBakeWorkflowWithRealActivities(t *testing.T) { bakeWithRealActivities(t) }

// TestBakeWorkflowWritesShardsAsTheLocalVerbs is that bake with splits cut
// into shards of two rows (internal/shards), slices of two rows too: the
// merge beside each split streams every shard of both formats to the
// dataset, the release and the Hub, and they are the local verbs' files,
// byte for byte.
func TestBakeWorkflowWritesShardsAsTheLocalVerbs(t *testing.T) {
	t.Cleanup(shards.SetLimit(shards.FileBytes + 2*shards.RowBytes(4, 2)))
	got := bakeWithRealActivities(t)
	want := map[string]int{"data": 5, "prepared/public": 5, "prepared/holdout": 4}
	for dir, n := range want {
		files, err := os.ReadDir(filepath.Join(got, dir))
		if err != nil || len(files) != n {
			t.Errorf("the release's %s holds %d files (%v), want %d", dir, len(files), err, n)
		}
	}
}

// bakeWithRealActivities runs the bake of TestBakeWorkflowWithRealActivities
// and returns the folder its release was downloaded into.
func bakeWithRealActivities(t *testing.T) string {
	t.Helper()
	cfg, bucket := devtest.StartStore(t)
	ctx := context.Background()
	st, err := store.Open(ctx, cfg, bucket)
	if err != nil {
		t.Fatal(err)
	}
	hubSrv := hubtest.New(t)
	hubSrv.AddToken("hf_wf_token", "alice", "write")
	a := &activities.Activities{
		Store:    st,
		Engine:   gpuengine.CPU{},
		Threads:  1,
		TempDir:  t.TempDir(),
		HubToken: func() (string, error) { return "hf_wf_token", nil },
	}
	env := newEnv()
	env.RegisterWorkflow(workflows.SplitWorkflow)
	env.RegisterActivity(a)
	in := twoSplitInput("inproc")
	in.Release = bakeapi.ReleaseSpec{
		Bucket: bucket,
		Prefix: "releases",
		Name:   "wf",
		Tag:    "v1",
	}
	in.Hub = &bakeapi.HubSpec{Repo: "alice/wf", Tag: "v1", Endpoint: hubSrv.URL}
	env.SetTestTimeout(2 * time.Minute)
	env.ExecuteWorkflow(workflows.BakeWorkflow, in)
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	var out bakeapi.BakeOutput
	if err := env.GetWorkflowResult(&out); err != nil {
		t.Fatal(err)
	}
	relPrefix := keys.Release("releases", "wf", "v1")
	if want := "s3://" + bucket + "/" + relPrefix + "/"; out.ReleaseURI != want ||
		out.DatasetPrefix != keys.Bake("inproc").Dataset() {
		t.Errorf(
			"result %+v, want dataset %s released at %s",
			out,
			keys.Bake("inproc").Dataset(),
			want,
		)
	}

	tmp := t.TempDir()
	got := filepath.Join(tmp, "release")
	m := download(t, st, relPrefix, got)
	if manifest, err := st.Get(ctx, keys.Manifest(relPrefix)); err != nil ||
		store.SHA256Hex(manifest) != out.ManifestSHA256 {
		t.Errorf(
			"release manifest sha256 differs from the bake's result %s (%v)",
			out.ManifestSHA256,
			err,
		)
	}
	d, err := dataset.ReadDir(got, false)
	if err != nil {
		t.Fatalf("the release does not validate: %v", err)
	}
	for i, s := range in.Splits {
		sd := d.Splits[i]
		if sd.Name != s.Name || len(sd.Rows) != s.NMLPs {
			t.Fatalf(
				"split %d: %s with %d rows, want %s with %d",
				i,
				sd.Name,
				len(sd.Rows),
				s.Name,
				s.NMLPs,
			)
		}
		want, _ := seeds.GenerateInputSeeds(s.NMLPs, s.Seed)
		var gotSeeds []int64
		for _, r := range sd.Rows {
			gotSeeds = append(gotSeeds, r.Seed)
		}
		if !slices.Equal(gotSeeds, want) {
			t.Errorf(
				"split %s seeds %v, want %v (generate-seeds --seed %d)",
				s.Name,
				gotSeeds,
				want,
				*s.Seed,
			)
		}
	}
	datasettest.SameDataset(t, got, localBake(t, in, filepath.Join(tmp, "local")))
	if len(m.Files) < 4 {
		t.Errorf(
			"release manifest lists %d files, want metadata, card and one parquet file per split",
			len(m.Files),
		)
	}
	// The release carries the prepared Arrow tree (and the Hub below every
	// file of the release).
	listed := map[string]bool{}
	for _, f := range m.Files {
		listed[f.Path] = true
	}
	paths, err := d.PreparedPaths()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range paths {
		if !listed[p] {
			t.Errorf("the release manifest does not list %s", p)
		}
	}
	// The Hub holds the release's files, its card re-rendered for the repository.
	onHub, err := hubSrv.Files("alice/wf", "v1")
	if err != nil || out.HubCommit == "" {
		t.Fatalf("Hub revision v1: %v (result %+v)", err, out)
	}
	for _, f := range m.Files {
		local, _ := os.ReadFile(filepath.Join(got, filepath.FromSlash(f.Path)))
		if f.Path == "README.md" {
			if !strings.Contains(string(onHub[f.Path]), "alice/wf") {
				t.Errorf("the card on the Hub does not name the repository")
			}
		} else if !bytes.Equal(onHub[f.Path], local) {
			t.Errorf("%s on the Hub differs from the release", f.Path)
		}
	}
	return got
}
