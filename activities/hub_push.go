package activities

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path"
	"strings"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/dataset"
	"github.com/whestbake/whestbake/internal/hub"
	"github.com/whestbake/whestbake/internal/keys"
	"github.com/whestbake/whestbake/internal/manifest"
	"github.com/whestbake/whestbake/internal/seal"
	"github.com/whestbake/whestbake/internal/store"
)

// HubPush publishes the committed dataset at in.DatasetPrefix on the
// Hugging Face Hub in one commit, streaming every file from the store (the
// manifest lists them with their sha256s) with the card re-rendered for
// the repository. A revision that holds the files already gets no commit,
// and a retried attempt re-sends only the LFS objects the Hub lacks.
func (a *Activities) HubPush(
	ctx context.Context,
	in bakeapi.HubPushInput,
) (bakeapi.HubPushOutput, error) {
	p := hubPush{a: a, in: in}
	c, err := p.client(ctx)
	if err != nil {
		return bakeapi.HubPushOutput{}, err
	}
	m, err := p.manifest(ctx)
	if err != nil {
		return bakeapi.HubPushOutput{}, err
	}
	files, err := p.files(ctx, m)
	if err != nil {
		return bakeapi.HubPushOutput{}, err
	}
	return p.push(ctx, c, files)
}

// hubPush is one attempt of HubPush, a method a step: the client, the
// committed directory's manifest, the files of it the Hub gets, the push.
type hubPush struct {
	a  *Activities
	in bakeapi.HubPushInput
}

// client is the Hub client of the worker's token, its deadlines inside
// the heartbeat timeout.
func (p hubPush) client(ctx context.Context) (*hub.Client, error) {
	if p.a.HubToken == nil {
		return nil, fatal(
			bakeapi.ErrHubAccess,
			"this control worker has no Hub token: "+
				"set %s in its environment or release.hub.token-file in its config",
			hub.TokenEnv,
		)
	}
	token, err := p.a.HubToken()
	if err != nil {
		return nil, fatal(bakeapi.ErrHubAccess, "control worker: %v", err)
	}
	c, err := hub.New(p.in.Hub.Endpoint, token)
	if err != nil {
		return nil, fatal(bakeapi.ErrInvalidConfig, "release.hub.endpoint: %v", err)
	}
	boundByHeartbeat(ctx, c)
	return c, nil
}

// manifest is the committed directory's manifest, once its prepared tree
// is vouched for or checked: nothing that fails the check is published.
func (p hubPush) manifest(ctx context.Context) (manifest.Manifest, error) {
	prefix := p.in.DatasetPrefix
	m, sum, err := readManifest(ctx, p.a.Store, prefix, seal.Seal{})
	switch {
	case damaged(err):
		return m, lost(err)
	case errors.Is(err, store.ErrNotFound): // CombineSplits committed it before HubPush ran
		return m, goneDir(p.a.Store, prefix, "")
	case err != nil:
		return m, storeErr(err)
	}
	return m, p.a.vouchedOrCheck(ctx, prefix, m, sum)
}

// files are the files of m that the Hub gets, each read from the store
// where a part starts, and the card re-rendered for the repository.
func (p hubPush) files(ctx context.Context, m manifest.Manifest) ([]hub.File, error) {
	var files []hub.File
	for _, f := range m.Files {
		// The Hub gets the dataset's own files only, as from dataset
		// upload; whatever else the directory's manifest lists stays in S3.
		if !dataset.IsDatasetFile(f.Path) {
			activity.GetLogger(ctx).Warn(
				"not pushed to the Hub: not a file of the dataset's layout",
				"Manifest", keys.Manifest(p.in.DatasetPrefix),
				"File", f.Path,
			)
			continue
		}
		key := path.Join(p.in.DatasetPrefix, f.Path)
		files = append(files, hub.File{
			Path:   f.Path,
			Size:   f.Size,
			SHA256: f.SHA256,
			Open: func(ctx context.Context, off int64) (io.ReadCloser, error) {
				return p.a.Store.OpenAt(ctx, key, off)
			},
		})
	}
	files, err := hub.WithCard(ctx, files, p.in.Hub.Repo)
	if err != nil {
		return nil, fatal(bakeapi.ErrCorruptPartial, "%s: %v", p.in.DatasetPrefix, err)
	}
	return files, nil
}

// push commits files to the repository, heartbeating as it moves, and
// says what the Hub holds after it, as far as it got when it failed.
func (p hubPush) push(
	ctx context.Context,
	c *hub.Client,
	files []hub.File,
) (bakeapi.HubPushOutput, error) {
	opt := p.in.Hub
	var res hub.Result
	err := heartbeatOnProgress(ctx, func(ctx context.Context, progress func(hub.Progress)) error {
		var err error
		res, err = c.Push(
			ctx,
			hub.Options{
				Repo:     opt.Repo,
				Revision: opt.Revision,
				Tag:      opt.Tag,
				Message:  opt.Message,
				Private:  opt.Private,
				Replace:  opt.Replace,
				Progress: progress,
			},
			files,
		)
		return err
	})
	out := bakeapi.HubPushOutput{
		Commit:  res.Commit,
		URL:     res.URL,
		NoOp:    res.NoOp,
		Sent:    res.Sent,
		Reused:  res.Reused,
		Deleted: res.Deleted,
	}
	return out, hubErr(err)
}

// HubPushProgress is HubPush's heartbeat: where the push is (the stage,
// and the file and its bytes sent while uploading), and once a request
// stalled, the error that names the Hub and the file, which `whestbake
// status` shows with the heartbeat's age until the next attempt moves.
type HubPushProgress struct {
	hub.Progress
	Stalled string `json:",omitempty"`
}

// boundByHeartbeat fits c's deadlines and retry waits inside the
// activity's heartbeat timeout: a Hub that stalls a request fails it
// within half a heartbeat timeout, and a retry waits at most an eighth,
// so that between two moves of a push that is still trying there is less
// than a heartbeat timeout, and a stall surfaces as the client's error
// naming the Hub and the file rather than as a heartbeat timeout.
func boundByHeartbeat(ctx context.Context, c *hub.Client) {
	if !activity.IsActivity(ctx) || activity.GetInfo(ctx).HeartbeatTimeout <= 0 {
		return
	}
	half := activity.GetInfo(ctx).HeartbeatTimeout / 2
	c.Deadlines = hub.Deadlines{
		Connect: min(c.Deadlines.Connect, half),
		Headers: min(c.Deadlines.Headers, half),
		Idle:    min(c.Deadlines.Idle, half),
	}
	c.MaxBackoff = min(c.MaxBackoff, half/4)
	c.Backoff = min(c.Backoff, c.MaxBackoff)
}

// heartbeatOnProgress runs push and heartbeats when, and only when, it
// moves (pushMoves: a byte of a file sent for the first time, a stage or a
// file reached, a second of a wait the Hub asked for; checked every eighth
// of the heartbeat timeout, watchProgress). A part sent again after a
// stall moves nothing until it passes the byte its earlier try reached, so
// retries of a request the Hub holds open do not keep the attempt alive:
// after three quarters of the heartbeat timeout without a move the push is
// stopped, before Temporal times the attempt out, with an error naming what
// the client was retrying (the Hub or its storage, and the file), recorded
// in a last heartbeat. Its requests' deadlines (see boundByHeartbeat) fail
// a silent request before that.
func heartbeatOnProgress(
	ctx context.Context,
	push func(ctx context.Context, progress func(hub.Progress)) error,
) error {
	moves := &pushMoves{done: map[string]int64{}}
	watch := progressWatch[hub.Progress]{
		checks:    8,
		quiet:     6,
		heartbeat: func(p hub.Progress) any { return HubPushProgress{Progress: p} },
		stalled: func(p hub.Progress, quiet time.Duration) error {
			return fmt.Errorf("%w for %s (three quarters of the activity's heartbeat timeout) "+
				"since %s; %s: stopping this attempt",
				errPushStill, quiet, describeProgress(p), moves.lastRetry())
		},
	}
	last, err := watchProgress(ctx, watch, func(ctx context.Context, report func(hub.Progress)) error {
		return push(ctx, func(p hub.Progress) {
			if moves.moved(p) {
				report(p)
			}
		})
	})
	stalled := errors.Is(err, hub.ErrStalled) || errors.Is(err, errPushStill)
	if stalled && activity.IsActivity(ctx) && activity.GetInfo(ctx).HeartbeatTimeout > 0 {
		activity.RecordHeartbeat(ctx, HubPushProgress{Progress: last, Stalled: err.Error()})
	}
	return err
}

// errPushStill is a push that moved nothing for too long.
var errPushStill = errors.New("the push to the Hub moved no new byte")

// pushMoves tells a push's moves from its other reports: a file's bytes
// count once each (Done past the most reported of that stage and file), a
// stage or file reached is a move, a wait the Hub asked for is one every
// second, and a retry is none but is kept to name what stalled. A compare
// stage starting again (the branch moved under the push) starts the count
// afresh: the next pass sends what the Hub still lacks, once more. Its
// methods are called from the push's goroutines.
type pushMoves struct {
	mu    sync.Mutex
	done  map[string]int64 // stage and file → the most bytes (or files) reported
	retry string
}

func (m *pushMoves) moved(p hub.Progress) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case p.Stage == hub.StageRetry:
		m.retry = p.Retry
		return false
	case p.Stage == hub.StageWait:
		return true
	case p.Stage == hub.StageCompare && p.Done == 0:
		clear(m.done)
	}
	key := p.Stage + "\x00" + p.File
	most, seen := m.done[key]
	if seen && p.Done <= most {
		return false
	}
	m.done[key] = p.Done
	return true
}

// lastRetry says what the push was last retrying after.
func (m *pushMoves) lastRetry() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.retry == "" {
		return "no request failed"
	}
	return "it was retrying after: " + m.retry
}

// describeProgress is p in words, for an error.
func describeProgress(p hub.Progress) string {
	switch {
	case p.Stage == "":
		return "it started"
	case p.File != "":
		return fmt.Sprintf("%s of %s reached byte %d of %d", p.Stage, p.File, p.Done, p.Total)
	}
	return "it reached stage " + p.Stage
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
