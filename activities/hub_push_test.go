package activities_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/whestbake/whestbake/activities"
	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/gpuengine"
	"github.com/whestbake/whestbake/internal/hub"
	"github.com/whestbake/whestbake/internal/hub/hubtest"
)

// HubPush against the in-process stand-in of the Hub: what no retry can fix
// fails at once as HubAccess (or DestinationConflict for a tag on another
// commit); a Hub outage stays retryable; and the token shows in no error.
func TestHubPushFailuresAreTypedByWhetherARetryHelps(t *testing.T) {
	f := newFixture(t)
	ds := bakeDataset(t, f, "hubpush", 7)
	srv := hubtest.New(t)
	const token = "hf_activity_token_31337"
	srv.AddToken(token, "alice", "write")
	srv.AddToken("hf_read_token_31337", "alice", "read")
	withToken := func(tok string) func() (string, error) {
		return func() (string, error) { return tok, nil }
	}
	in := bakeapi.HubPushInput{
		DatasetPrefix: ds.Prefix,
		Hub:           bakeapi.HubSpec{Repo: "alice/gt", Tag: "v1", Endpoint: srv.URL},
	}

	a := f.acts(gpuengine.CPU{})
	_, err := run[bakeapi.HubPushOutput](a, a.HubPush, in)
	wantAppError(t, err, bakeapi.ErrHubAccess) // no token on this worker
	if !strings.Contains(err.Error(), "HF_TOKEN") {
		t.Errorf("no-token error %v does not say how to give one", err)
	}

	noBranch := bakeapi.HubPushInput{
		DatasetPrefix: ds.Prefix,
		Hub:           bakeapi.HubSpec{Repo: "alice/gt", Revision: "nope", Endpoint: srv.URL},
	}
	for _, c := range []struct {
		name, token string
		in          bakeapi.HubPushInput
		kind        string
	}{
		{"rejected token", "hf_unknown_31337", in, bakeapi.ErrHubAccess},
		{"read token", "hf_read_token_31337", in, bakeapi.ErrHubAccess},
		{"missing branch", token, noBranch, bakeapi.ErrHubAccess},
	} {
		a.HubToken = withToken(c.token)
		_, err := run[bakeapi.HubPushOutput](a, a.HubPush, c.in)
		wantAppError(t, err, c.kind)
		if strings.Contains(err.Error(), "31337") {
			t.Errorf("%s: the error shows the token: %v", c.name, err)
		}
	}

	a.HubToken = withToken(token)
	out := mustRun[bakeapi.HubPushOutput](t, a, a.HubPush, in)
	if out.NoOp || len(out.Commit) != 40 || out.Sent == 0 {
		t.Fatalf("push: %+v", out)
	}
	again := mustRun[bakeapi.HubPushOutput](t, a, a.HubPush, in)
	if !again.NoOp || again.Commit != out.Commit || again.Sent != 0 {
		t.Errorf("a retried push %+v, want a no-op at %s", again, out.Commit)
	}
	// Someone else commits: the same files at a new head, where tag v1 is not.
	srv.CommitFiles("alice/gt", "main", "someone else", map[string][]byte{"NOTES.md": []byte("x")})
	_, err = run[bakeapi.HubPushOutput](a, a.HubPush, in)
	wantAppError(t, err, bakeapi.ErrDestinationConflict)

	// Another bake's dataset on the same branch replaces it only when the
	// config says so (release.hub.replace).
	other := bakeDataset(t, f, "hubpush-b", 8)
	next := bakeapi.HubPushInput{
		DatasetPrefix: other.Prefix,
		Hub:           bakeapi.HubSpec{Repo: "alice/gt", Endpoint: srv.URL},
	}
	_, err = run[bakeapi.HubPushOutput](a, a.HubPush, next)
	wantAppError(t, err, bakeapi.ErrDestinationConflict)
	if !strings.Contains(err.Error(), "holds another dataset") {
		t.Errorf("push of another dataset: %v", err)
	}
	next.Hub.Replace = true
	if replaced := mustRun[bakeapi.HubPushOutput](t, a, a.HubPush, next); replaced.NoOp ||
		replaced.Sent == 0 {
		t.Errorf("push with Replace: %+v, want a commit of the other dataset's files", replaced)
	}
}

func TestHubErrorsRetryOnlyWhatARetryCanFix(t *testing.T) {
	for _, c := range []struct {
		op     string
		status int
		kind   string // "" retryable
	}{
		{"whoami", 401, bakeapi.ErrHubAccess},
		{"create repo alice/gt", 403, bakeapi.ErrHubAccess},
		{"read revision main of alice/gt", 404, bakeapi.ErrHubAccess},
		{"commit to alice/gt@main", 413, bakeapi.ErrHubAccess},
		{"preupload to alice/gt", 400, bakeapi.ErrHubAccess},
		{"commit to alice/gt@main", 409, ""},
		{"commit to alice/gt@main", 412, ""},
		{"tag v1 of alice/gt", 409, bakeapi.ErrDestinationConflict},
		{"upload of data/x.parquet part 2", 503, ""},
		{"LFS batch of alice/gt", 429, ""},
	} {
		err := activities.HubErr(&hub.Error{Op: c.op, Status: c.status})
		var app *temporal.ApplicationError
		switch {
		case c.kind == "" && errors.As(err, &app) && app.NonRetryable():
			t.Errorf("%s → %d: %v is not retryable", c.op, c.status, err)
		case c.kind != "" && (!errors.As(err, &app) || !app.NonRetryable() || app.Type() != c.kind):
			t.Errorf("%s → %d: %v, want non-retryable %s", c.op, c.status, err, c.kind)
		}
	}
	var app *temporal.ApplicationError
	otherDataset := &hub.OtherDatasetError{Repo: "alice/gt", Revision: "main"}
	if err := activities.HubErr(otherDataset); !errors.As(err, &app) ||
		!app.NonRetryable() ||
		app.Type() != bakeapi.ErrDestinationConflict {
		t.Errorf(
			"another dataset on the branch: %v, want non-retryable %s",
			err,
			bakeapi.ErrDestinationConflict,
		)
	}
	if err := activities.HubErr(hub.ErrNoToken); !temporal.IsApplicationError(err) {
		t.Errorf("no token: %v, want HubAccess", err)
	}
}

// hubPushOnce is HubPush as BakeWorkflow runs it, with one attempt and the
// given heartbeat timeout.
func hubPushOnce(
	ctx workflow.Context,
	in bakeapi.HubPushInput,
	heartbeat time.Duration,
) (bakeapi.HubPushOutput, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 40 * time.Second,
		HeartbeatTimeout:    heartbeat,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 1},
	})
	var out bakeapi.HubPushOutput
	err := workflow.ExecuteActivity(ctx, bakeapi.HubPushActivity, in).Get(ctx, &out)
	return out, err
}

// A Hub whose storage stops taking a part: HubPush heartbeats only while
// the push moves (never while it hangs), its requests' deadlines end each
// stalled try within half a heartbeat timeout, and the attempt fails with
// its own error, naming the Hub's storage and the file, recorded in a last
// heartbeat for `whestbake status` (not as a heartbeat timeout). Before,
// a keep-alive heartbeat and no deadlines kept such a push "healthy" until
// push-timeout, two hours by default.
func TestHubPushOfAStalledPartFailsTheAttemptNamingTheHubAndFile(t *testing.T) {
	f := newFixture(t)
	ds := bakeDataset(t, f, "hubstall", 9)
	srv := hubtest.New(t)
	srv.ChunkSize = 4 << 10 // every parquet file goes in parts
	const token = "hf_stall_token_4242"
	srv.AddToken(token, "alice", "write")
	srv.Hang("part", 0)
	a := f.acts(gpuengine.CPU{})
	a.HubToken = func() (string, error) { return token, nil }
	in := bakeapi.HubPushInput{
		DatasetPrefix: ds.Prefix,
		Hub:           bakeapi.HubSpec{Repo: "alice/gt", Endpoint: srv.URL},
	}

	env := newWorkflowEnv()
	env.RegisterWorkflow(hubPushOnce)
	returned := make(chan time.Time, 1)
	env.RegisterActivityWithOptions(
		func(ctx context.Context, in bakeapi.HubPushInput) (bakeapi.HubPushOutput, error) {
			out, err := a.HubPush(ctx, in)
			returned <- time.Now()
			return out, err
		},
		activity.RegisterOptions{Name: bakeapi.HubPushActivity},
	)
	var mu sync.Mutex
	var beats []activities.HubPushProgress
	env.SetOnActivityHeartbeatListener(func(_ *activity.Info, details converter.EncodedValues) {
		var p activities.HubPushProgress
		if details.Get(&p) == nil {
			mu.Lock()
			beats = append(beats, p)
			mu.Unlock()
		}
	})
	const heartbeat = 2 * time.Second
	start := time.Now()
	env.ExecuteWorkflow(hubPushOnce, in, heartbeat)
	err := env.GetWorkflowError()
	storage := strings.TrimPrefix(srv.StorageURL, "http://")
	if err == nil || !strings.Contains(err.Error(), "stalled") ||
		!strings.Contains(err.Error(), "the Hub's storage at "+storage) ||
		!strings.Contains(err.Error(), "upload of data/") ||
		strings.Contains(err.Error(), "Heartbeat") {
		t.Fatalf(
			"a push whose part hangs: %v; want the attempt's own error naming the storage and "+
				"the file",
			err,
		)
	}
	select {
	case at := <-returned:
		if took := at.Sub(start); took > 15*heartbeat {
			t.Errorf("the stalled attempt ran %s", took)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the failed attempt is still pushing 10 s later")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(beats) == 0 || beats[len(beats)-1].Stalled == "" ||
		!strings.Contains(beats[len(beats)-1].Stalled, "upload of data/") {
		t.Errorf("heartbeats %+v: want the last to say what stalled", beats)
	}
	if n := len(srv.History("alice/gt", "main")); n != 1 {
		t.Errorf("%d commits, want only the repository's initial one", n)
	}
}

// A Hub that takes the start of every try of a part and then holds it
// open: each retry of the part sends its bytes again, which is no
// progress. HubPush heartbeats only on bytes sent for the first time, so
// every heartbeat carries more of its file than the one before, and the
// attempt ends, retryably and naming the storage and the file it was
// retrying, within a heartbeat timeout of the last new byte. Before, each
// retry's bytes counted as progress: the attempt heartbeated on the same
// 4,096 bytes for as long as the client's retries lasted, 3.7 heartbeat
// timeouts.
func TestHubPushOfAPartTheHubHoldsOpenEndsSoonAfterItsLastNewByte(t *testing.T) {
	f := newFixture(t)
	ds := bakeDataset(t, f, "hubheld", 11)
	srv := hubtest.New(t)
	srv.ChunkSize = 4 << 10
	const token = "hf_held_token_5151"
	srv.AddToken(token, "alice", "write")
	srv.Hang("part", 1000)
	a := f.acts(gpuengine.CPU{})
	a.HubToken = func() (string, error) { return token, nil }
	in := bakeapi.HubPushInput{
		DatasetPrefix: ds.Prefix,
		Hub:           bakeapi.HubSpec{Repo: "alice/gt", Endpoint: srv.URL},
	}
	env := newWorkflowEnv()
	env.RegisterWorkflow(hubPushOnce)
	returned := make(chan time.Time, 1)
	env.RegisterActivityWithOptions(
		func(ctx context.Context, in bakeapi.HubPushInput) (bakeapi.HubPushOutput, error) {
			out, err := a.HubPush(ctx, in)
			returned <- time.Now()
			return out, err
		},
		activity.RegisterOptions{Name: bakeapi.HubPushActivity},
	)
	type beat struct {
		at time.Time
		p  activities.HubPushProgress
	}
	var mu sync.Mutex
	var beats []beat
	env.SetOnActivityHeartbeatListener(func(_ *activity.Info, details converter.EncodedValues) {
		var p activities.HubPushProgress
		if details.Get(&p) == nil {
			mu.Lock()
			beats = append(beats, beat{time.Now(), p})
			mu.Unlock()
		}
	})
	const heartbeat = 4 * time.Second
	env.ExecuteWorkflow(hubPushOnce, in, heartbeat)
	err := env.GetWorkflowError()
	var app *temporal.ApplicationError
	storage := strings.TrimPrefix(srv.StorageURL, "http://")
	if err == nil || (errors.As(err, &app) && app.NonRetryable()) ||
		!strings.Contains(err.Error(), "the Hub's storage at "+storage) ||
		!strings.Contains(err.Error(), "upload of data/") ||
		strings.Contains(err.Error(), "Heartbeat") {
		t.Fatalf("a push whose part the Hub holds open: %v; want the attempt's own retryable "+
			"error naming the storage and the file", err)
	}
	end := <-returned
	mu.Lock()
	defer mu.Unlock()
	most := map[string]int64{}
	var lastMove time.Time
	for _, b := range beats {
		if b.p.Stalled != "" {
			continue
		}
		key := b.p.Stage + " " + b.p.File
		if d, ok := most[key]; ok && b.p.Done <= d {
			t.Errorf("a heartbeat on %s at byte %d, where an earlier one was at %d: "+
				"bytes sent again are no progress", key, b.p.Done, d)
			continue
		}
		most[key], lastMove = b.p.Done, b.at
	}
	if lastMove.IsZero() || end.Sub(lastMove) > heartbeat {
		t.Errorf("the attempt ended %s after its last heartbeat of new bytes, "+
			"want within the heartbeat timeout (%s); %d heartbeats", end.Sub(lastMove),
			heartbeat, len(beats))
	}
	if len(beats) == 0 || !strings.Contains(beats[len(beats)-1].p.Stalled, storage) {
		t.Errorf("heartbeats %+v: want the last to say what stalled", beats)
	}
}
