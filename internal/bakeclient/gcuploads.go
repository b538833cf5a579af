package bakeclient

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"go.temporal.io/api/workflowservice/v1"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/internal/keys"
	"github.com/whestbake/whestbake/internal/store"
)

// A worker killed in the middle of a multipart upload, such as a merge's
// shard or Push's copy of a large release file, leaves the upload open,
// holding its parts, and no object lists it. The writer's next attempt
// aborts it once its own upload of the key completes, in store.Upload and
// store.ServerCopy; gc aborts what no attempt came back for: under the
// bake's prefix, and at the release locations the bake's runs pushed to
// that hold no other bake's release.

// ownReleases lists the release folders, as stores and prefixes, that the
// bake's runs were started to push to and that hold no other dataset than
// this bake's: a folder without a release yet, or with the release of this
// bake's dataset. It is read before gc deletes, since the dataset of a
// failed bake goes. A run whose history is gone names none.
func (g *gcRun) ownReleases(ctx context.Context) ([]releaseFolder, error) {
	own, err := g.artifacts.Get(ctx, keys.Manifest(keys.Bake(g.bakeID).Dataset()))
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	runs, err := g.runs(ctx)
	if err != nil {
		return nil, err
	}
	var out []releaseFolder
	seen := map[bakeapi.ReleaseSpec]bool{}
	for _, run := range runs {
		in, err := startInput(ctx, g.temporal, g.bakeID, run)
		if err != nil {
			return nil, err
		}
		r := in.Release
		if r.Bucket == "" || seen[r] {
			continue
		}
		seen[r] = true
		dest, err := g.artifacts.WithBucket(ctx, r.Bucket)
		if err != nil {
			return nil, fmt.Errorf("release.bucket of bake %s: %w", g.bakeID, err)
		}
		prefix := keys.Release(r.Prefix, r.Name, r.Tag)
		switch released, err := dest.Get(ctx, keys.Manifest(prefix)); {
		case errors.Is(err, store.ErrNotFound), err == nil && bytes.Equal(released, own):
			out = append(out, releaseFolder{store: dest, prefix: prefix + "/"})
		case err != nil:
			return nil, err
		}
	}
	return out, nil
}

// releaseFolder is a release's folder in its bucket.
type releaseFolder struct {
	store  *store.Store
	prefix string
}

// runs lists the run IDs of the bake's workflow that its namespace knows.
func (g *gcRun) runs(ctx context.Context) ([]string, error) {
	var runs []string
	req := &workflowservice.ListWorkflowExecutionsRequest{
		Namespace: g.cfg.Temporal.Namespace,
		Query:     fmt.Sprintf("WorkflowId = '%s'", bakeapi.BakeWorkflowID(g.bakeID)),
	}
	for {
		resp, err := g.temporal.ListWorkflow(ctx, req)
		if err != nil {
			return nil, fmt.Errorf("listing the runs of bake %s: %w", g.bakeID, err)
		}
		for _, e := range resp.GetExecutions() {
			runs = append(runs, e.GetExecution().GetRunId())
		}
		if len(resp.GetNextPageToken()) == 0 {
			return runs, nil
		}
		req.NextPageToken = resp.GetNextPageToken()
	}
}

// abortUploads aborts the incomplete uploads under the bake's prefix and
// in releases, under the lock and its checks in batch, and returns how
// many it aborted.
func (g *gcRun) abortUploads(ctx context.Context, releases []releaseFolder) (int, error) {
	folders := append([]releaseFolder{{
		store:  g.artifacts,
		prefix: keys.Bake(g.bakeID).Prefix(),
	}}, releases...)
	aborted := 0
	for _, f := range folders {
		err := g.batch(ctx, func(ctx context.Context) error {
			n, err := f.store.AbortUploads(ctx, f.prefix)
			aborted += n
			return err
		})
		if err != nil {
			return aborted, err
		}
	}
	return aborted, nil
}
