package activities

import (
	"context"
	"errors"
	"io"
	"net/http"
	"path"
	"strings"

	"go.temporal.io/sdk/activity"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/dataset"
	"github.com/whestbake/whestbake/internal/hub"
	"github.com/whestbake/whestbake/internal/keys"
	"github.com/whestbake/whestbake/internal/seal"
)

// HubPush publishes the committed dataset at in.DatasetPrefix on the
// Hugging Face Hub in one commit, streaming every file from the store (the
// manifest lists them with their sha256s) with the card re-rendered for
// the repository. A revision that holds the files already gets no commit,
// and a retried attempt re-sends only the LFS objects the Hub lacks.
func (a *Activities) HubPush(ctx context.Context, in bakeapi.HubPushInput) (bakeapi.HubPushOutput, error) {
	var out bakeapi.HubPushOutput
	if a.HubToken == nil {
		return out, fatal(bakeapi.ErrHubAccess, "this control worker has no Hub token: set %s in its environment or release.hub.token-file in its config", hub.TokenEnv)
	}
	token, err := a.HubToken()
	if err != nil {
		return out, fatal(bakeapi.ErrHubAccess, "control worker: %v", err)
	}
	c, err := hub.New(in.Hub.Endpoint, token)
	if err != nil {
		return out, fatal(bakeapi.ErrInvalidConfig, "release.hub.endpoint: %v", err)
	}
	m, _, err := readManifest(ctx, a.Store, in.DatasetPrefix, seal.Seal{})
	if damaged(err) {
		return out, lost(err)
	}
	if err != nil {
		return out, storeErr(err)
	}
	if err := a.checkPrepared(ctx, in.DatasetPrefix, m); err != nil {
		return out, err
	}
	var files []hub.File
	for _, f := range m.Files {
		// The Hub gets the dataset's own files only, as from dataset
		// upload; whatever else the directory's manifest lists stays in S3.
		if !dataset.IsDatasetFile(f.Path) {
			activity.GetLogger(ctx).Warn("not pushed to the Hub: not a file of the dataset's layout", "Manifest", keys.Manifest(in.DatasetPrefix), "File", f.Path)
			continue
		}
		key := path.Join(in.DatasetPrefix, f.Path)
		files = append(files, hub.File{Path: f.Path, Size: f.Size, SHA256: f.SHA256,
			Open: func(ctx context.Context, off int64) (io.ReadCloser, error) { return a.Store.OpenAt(ctx, key, off) }})
	}
	if files, err = hub.WithCard(ctx, files, in.Hub.Repo); err != nil {
		return out, fatal(bakeapi.ErrCorruptPartial, "%s: %v", in.DatasetPrefix, err)
	}
	stop := keepAlive(ctx)
	defer stop()
	res, err := c.Push(ctx, hub.Options{Repo: in.Hub.Repo, Revision: in.Hub.Revision, Tag: in.Hub.Tag, Message: in.Hub.Message,
		Private: in.Hub.Private, Replace: in.Hub.Replace, Progress: func(p hub.Progress) { activityHeartbeat(ctx, p) }}, files)
	out = bakeapi.HubPushOutput{Commit: res.Commit, URL: res.URL, NoOp: res.NoOp, Sent: res.Sent, Reused: res.Reused, Deleted: res.Deleted}
	return out, hubErr(err)
}

// hubErr marks what no retry fixes as non-retryable: every refusal of the
// Hub but a 5xx or 429 (retried already, and worth retrying later) and a
// branch that kept moving (the next attempt re-reads it); a tag on another
// commit is a conflict of destinations, like an S3 release tag that is taken.
func hubErr(err error) error {
	var he *hub.Error
	switch {
	case err == nil:
		return nil
	case errors.As(err, &he):
		switch {
		case he.Status >= 500 || he.Status == http.StatusTooManyRequests:
			return err
		case he.Status == http.StatusConflict || he.Status == http.StatusPreconditionFailed:
			if strings.HasPrefix(he.Op, "tag") {
				return fatal(bakeapi.ErrDestinationConflict, "%v", err)
			}
			return err
		}
		return fatal(bakeapi.ErrHubAccess, "%v", err)
	case errors.Is(err, hub.ErrOtherDataset):
		return fatal(bakeapi.ErrDestinationConflict, "%v", err)
	case errors.Is(err, hub.ErrNoToken):
		return fatal(bakeapi.ErrHubAccess, "%v", err)
	}
	return err
}
