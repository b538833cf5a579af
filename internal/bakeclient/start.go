package bakeclient

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	enums "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/dataset"
	"github.com/whestbake/whestbake/internal/keys"
	"github.com/whestbake/whestbake/internal/mlps"
	"github.com/whestbake/whestbake/internal/preflight"
	"github.com/whestbake/whestbake/internal/safetext"
	"github.com/whestbake/whestbake/internal/store"
)

// Action is what starting a bake ID did.
type Action string

const (
	// Started: no bake had this ID.
	Started Action = "started"
	// Reattached: the bake runs; its own input stands.
	Reattached Action = "reattached"
	// Restarted: the bake failed or was cancelled; a new run reuses its
	// finished MLPs and slices.
	Restarted Action = "restarted"
)

// StartInput is what a start needs besides the config.
type StartInput struct {
	// Waiting, if set, is told which of the bake's workflows a restart
	// still waits for, whenever that changes, as a cancel winds down.
	Waiting func(workflowIDs []string)
}

// StartOutput is the bake a start started or attached to.
type StartOutput struct {
	Action Action
	// LastRun is how the run a restart follows ended: failed, canceled,
	// terminated or timed_out; or "cancelling" for one that was still
	// winding down when the start looked.
	LastRun    string
	WorkflowID string
	RunID      string
	// Input is the workflow input the start sent: the config's bake, with
	// what its record fixes, the creation time and fingerprints.
	Input bakeapi.BakeInput
}

// Start starts the config's bake on the Temporal workers, after validating
// the whole config and checking the S3 store. The bake ID decides what
// happens: a running bake with that ID is reattached, a failed or
// cancelled one is restarted once nothing of its last run still runs, and
// a completed one is refused. The bake's inputs go to S3, and its workflow
// starts, under the bake's lock, which gc takes too.
func (c *Client) Start(ctx context.Context, in StartInput) (StartOutput, error) {
	// Step 1. Everything is checked before anything is written or started.
	bi, err := preflight.Bake(c.cfg)
	if err != nil {
		return StartOutput{}, err
	}
	st, err := store.Open(ctx, c.cfg.StoreConfig(), c.cfg.S3.Bucket)
	if err != nil {
		return StartOutput{}, err
	}
	if bi.Release.Bucket != "" {
		if err := checkReleaseFree(ctx, st, bi); err != nil {
			return StartOutput{}, err
		}
	}
	tc, err := c.connect(ctx)
	if err != nil {
		return StartOutput{}, err
	}
	id := bi.BakeID

	// Step 2. What a bake with this ID already did decides what happens; a
	// restart waits until nothing of the last run runs, as a cancel winds down.
	last, err := lastRun(ctx, tc, id)
	if err != nil {
		return StartOutput{}, err
	}
	if last.drain {
		if err := waitStopped(ctx, tc, id, splitNames(bi.Splits), in.Waiting); err != nil {
			return StartOutput{}, err
		}
		if last, err = lastRun(ctx, tc, id); err != nil {
			return StartOutput{}, err
		}
	}
	// Steps 3 to 5, under the bake's lock, which gc takes too.
	run, err := c.startLocked(ctx, tc, st, &bi, &last)
	if err != nil {
		return StartOutput{}, err
	}
	return StartOutput{
		Action:     last.action,
		LastRun:    last.ended,
		WorkflowID: bakeapi.BakeWorkflowID(id),
		RunID:      run.GetRunID(),
		Input:      bi,
	}, nil
}

// startLocked stores the bake's inputs and starts its workflow, or attaches
// to the running one, holding the bake's lock, which gc takes too: so gc
// never deletes the seeds files just uploaded before the workflow runs, and
// a bake never starts while gc deletes. docs/TEMPORAL.md, "gc versus a
// restart", says why. The lock goes as soon as the workflow runs: gc
// refuses a running bake by itself. Under the lock a start asks again what
// the bake does, last: of two starts of one ID, the one that takes the lock
// second finds the run the first started, and attaches to it as such.
func (c *Client) startLocked(ctx context.Context, tc client.Client, st *store.Store,
	in *bakeapi.BakeInput, last *lastRunOf,
) (client.WorkflowRun, error) {
	lock := newLock(tc, c.cfg.Temporal.Namespace, in.BakeID, "bake")
	if err := lock.take(ctx, "nothing was started"); err != nil {
		return nil, err
	}
	defer lock.releaseOrWarn(c.log)
	now, err := lastRun(ctx, tc, in.BakeID)
	if err != nil {
		return nil, err
	}
	if now.action == Reattached {
		*last = now
	}
	// Steps 3 and 4. What decides the bake's numbers goes to S3, or must match what is there.
	if err := c.storeBakeInputs(ctx, st, tc, in); err != nil {
		return nil, err
	}
	// Step 5. Start, while the lock certainly holds: past it, gc may have
	// deleted what step 3 stored.
	if left := lock.left(); left < lockMargin {
		return nil, fmt.Errorf("bake %s: storing its inputs took until %s before its lock ends, "+
			"and gc may run after it: nothing was started; run `whestbake bake` again",
			in.BakeID, left.Round(time.Second))
	}
	return startBakeWorkflow(ctx, tc, *in)
}

// storeBakeInputs puts the bake's seeds files and record in S3 and notes where
// it runs, then fills in what the record fixes: creation time, fingerprints.
func (c *Client) storeBakeInputs(ctx context.Context, st *store.Store, tc client.Client,
	in *bakeapi.BakeInput,
) error {
	// Step 3. User seeds files go to S3 create-only; a different file already there is refused.
	sums, err := c.uploadSeeds(ctx, st)
	if err != nil {
		return err
	}
	// Step 4. The bake's record: the first start writes it, every later start must match it.
	rec, err := recordBake(ctx, st, *in, sums)
	if err != nil {
		return err
	}
	in.CreatedAt = rec.CreatedAt
	for i := range in.Splits {
		in.Splits[i].Fingerprint = rec.Fingerprint(in.Splits[i].Name)
	}
	// Where it runs: the first start records it, every later start must match; gc relies on it.
	return recordStartedIn(ctx, st, tc, c.cfg.Temporal.Namespace, in.BakeID)
}

// startBakeWorkflow starts the BakeWorkflow of in, or attaches to its running one.
func startBakeWorkflow(ctx context.Context, tc client.Client, in bakeapi.BakeInput,
) (client.WorkflowRun, error) {
	id := in.BakeID
	stage := temporal.NewSearchAttributeKeyKeyword(bakeapi.BakeStageAttribute)
	run, err := tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID:                       bakeapi.BakeWorkflowID(id),
		TaskQueue:                bakeapi.ControlQueue,
		WorkflowIDConflictPolicy: enums.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		WorkflowIDReusePolicy:    enums.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE_FAILED_ONLY,
		// A completed bake is refused with completedError, not handed back as its last run.
		WorkflowExecutionErrorWhenAlreadyStarted: true,
		TypedSearchAttributes: temporal.NewSearchAttributes(
			temporal.NewSearchAttributeKeyKeyword(bakeapi.BakeIDAttribute).ValueSet(id),
			stage.ValueSet(bakeapi.StageSeeding)),
		StaticSummary: summary(in),
		StaticDetails: details(in),
	}, bakeapi.BakeWorkflowName, in)
	if err != nil {
		var started *serviceerror.WorkflowExecutionAlreadyStarted
		if errors.As(err, &started) {
			return nil, completedError(id)
		}
		if missingSearchAttribute(err) {
			return nil, fmt.Errorf("starting bake %s: %v: register the search attributes "+
				"BakeID and BakeStage (Keyword) on the server; `whestbake dev up` does", id, err)
		}
		return nil, fmt.Errorf("starting bake %s: %w", id, err)
	}
	return run, nil
}

// lastRunOf is what a start of a bake ID does, from what its last run did.
type lastRunOf struct {
	action Action
	ended  string // StartOutput.LastRun
	// drain: the start must first wait for that run to stop. That is a
	// restart, or a running bake being cancelled, which a start restarts
	// once it has stopped rather than attach to it.
	drain bool
}

// lastRun says what starting bake id does, from what its last run did.
func lastRun(ctx context.Context, tc client.Client, id string) (lastRunOf, error) {
	desc, err := tc.DescribeWorkflowExecution(ctx, bakeapi.BakeWorkflowID(id), "")
	var nf *serviceerror.NotFound
	switch {
	case errors.As(err, &nf):
		return lastRunOf{action: Started}, nil
	case err != nil:
		return lastRunOf{}, err
	}
	info := desc.GetWorkflowExecutionInfo()
	switch s := info.GetStatus(); s {
	case enums.WORKFLOW_EXECUTION_STATUS_RUNNING:
		runID := info.GetExecution().GetRunId()
		cancelling, err := cancelRequested(ctx, tc, bakeapi.BakeWorkflowID(id), runID)
		if err != nil {
			return lastRunOf{}, err
		}
		if cancelling {
			return lastRunOf{action: Restarted, ended: "cancelling", drain: true}, nil
		}
		return lastRunOf{action: Reattached}, nil
	case enums.WORKFLOW_EXECUTION_STATUS_COMPLETED:
		return lastRunOf{}, completedError(id)
	default:
		return lastRunOf{action: Restarted, ended: stateWord(s), drain: true}, nil
	}
}

func completedError(id string) error {
	return fmt.Errorf("bake %s already completed, and a completed bake is never redone: "+
		"download it with `whestbake dataset download bake:%s --output DIR`, or choose a new --id",
		id, id)
}

// uploadSeeds puts each split's seeds file at its input key, create-only, and
// returns the files' sha256 by split name.
func (c *Client) uploadSeeds(ctx context.Context, st *store.Store) (map[string]string, error) {
	sums := map[string]string{}
	id := c.cfg.Bake.ID
	for _, s := range c.cfg.Bake.Splits {
		if s.SeedsFile == "" {
			continue
		}
		data, err := mlps.ReadSeedsFile(s.SeedsFile, int(s.NMLPs))
		if err != nil {
			return nil, fmt.Errorf("split %s: seeds-file: %w", s.Name, err)
		}
		key := keys.Bake(id).InputSeeds(s.Name)
		err = st.PutCreate(ctx, key, data)
		if errors.Is(err, store.ErrExists) {
			old, gerr := st.Get(ctx, key)
			if gerr != nil {
				return nil, gerr
			}
			if !bytes.Equal(old, data) {
				return nil, fmt.Errorf("split %s: bake %s already has a different seeds file "+
					"at s3://%s/%s (sha256 %s, yours %s): "+
					"a bake's seeds never change; choose a new --id",
					s.Name, id, c.cfg.S3.Bucket, key, store.SHA256Hex(old), store.SHA256Hex(data))
			}
		} else if err != nil {
			return nil, err
		}
		sums[s.Name] = store.SHA256Hex(data)
	}
	return sums, nil
}

// recordBake writes the bake's record create-only, or compares the config
// with the record an earlier start wrote and refuses every difference: a bake
// ID stands for one spec, so its stored results can never mix two.
func recordBake(ctx context.Context, st *store.Store, in bakeapi.BakeInput,
	fileSHA256 map[string]string,
) (bakeapi.Record, error) {
	rec := bakeapi.NewRecord(in, fileSHA256, time.Now())
	key := keys.Bake(in.BakeID).Record()
	data, _ := json.MarshalIndent(rec, "", "  ")
	err := st.PutCreate(ctx, key, data)
	if err == nil {
		return rec, nil
	}
	if !errors.Is(err, store.ErrExists) {
		return rec, err
	}
	old, err := st.Get(ctx, key)
	if err != nil {
		return rec, err
	}
	var was bakeapi.Record
	if err := json.Unmarshal(old, &was); err != nil {
		return rec, fmt.Errorf("bake %s: its record s3://%s/%s is not valid JSON (%v): "+
			"choose a new --id", in.BakeID, st.Bucket(), key, err)
	}
	if changes := was.Diff(rec); len(changes) > 0 {
		lines := []string{fmt.Sprintf("bake %s was started with a different spec, "+
			"and one bake ID never mixes results of two specs:", in.BakeID)}
		for _, c := range changes {
			lines = append(lines, "  - "+c.String())
		}
		lines = append(lines, fmt.Sprintf("nothing was started: restore these settings "+
			"to continue bake %s, or start this config under a new --id", in.BakeID))
		return rec, safetext.LinesError{Text: lines}
	}
	return was, nil
}

// checkReleaseFree refuses, before anything runs, a release tag that already
// holds a dataset other than this bake's own; a re-push of it is a no-op.
func checkReleaseFree(ctx context.Context, st *store.Store, in bakeapi.BakeInput) error {
	r := in.Release
	dest, err := st.WithBucket(ctx, r.Bucket)
	if err != nil {
		return fmt.Errorf("release.bucket: %w", err)
	}
	released, err := dest.Get(ctx, keys.Manifest(keys.Release(r.Prefix, r.Name, r.Tag)))
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	own, err := st.Get(ctx, keys.Manifest(keys.Bake(in.BakeID).Dataset()))
	if err == nil && bytes.Equal(own, released) {
		return nil
	}
	return fmt.Errorf("release.tag %q: %s already holds a released dataset (manifest sha256 %s) "+
		"and releases are immutable: choose another release.tag",
		r.Tag, keys.ReleaseURI(r.Bucket, r.Prefix, r.Name, r.Tag), store.SHA256Hex(released))
}

// summary is the one line the Web UI shows for the bake.
func summary(in bakeapi.BakeInput) string {
	var parts []string
	for _, s := range in.Splits {
		parts = append(parts, fmt.Sprintf("%s %d", s.Name, s.NMLPs))
	}
	return fmt.Sprintf("bake %s: %s MLPs, %dx%d, %d samples, %s", in.BakeID,
		strings.Join(parts, " + "), in.Spec.Width, in.Spec.Depth, in.Spec.NSamples, in.Spec.Sampler)
}

// details is the bake's markdown card in the Web UI.
func details(in bakeapi.BakeInput) string {
	var b strings.Builder
	fmt.Fprintf(&b, "**Bake %s**\n\n", in.BakeID)
	b.WriteString("| split | config | MLPs | seeds |\n|---|---|---|---|\n")
	for _, s := range in.Splits {
		seeds := "OS entropy (stored once)"
		switch {
		case s.SeedsKey != "":
			seeds = "file " + s.SeedsKey
		case s.Seed != nil:
			seeds = fmt.Sprintf("root seed %d", *s.Seed)
		}
		fmt.Fprintf(&b, "| %s | %s | %d | %s |\n", s.Name, s.Config, s.NMLPs, seeds)
	}
	fmt.Fprintf(&b, "\nShape: width %d, depth %d, %d samples per MLP, sampler %s. "+
		"Slices of %d MLPs, %s in flight per split on queue `%s`.\n",
		in.Spec.Width, in.Spec.Depth, in.Spec.NSamples, in.Spec.Sampler,
		in.SliceSize, InFlightText(in.MaxInFlight), in.GPUQueue)
	if salt := SaltNote(in.Spec); salt != "" {
		fmt.Fprintf(&b, "\n%s.\n", salt)
	}
	if r := in.Release; r.Bucket != "" {
		fmt.Fprintf(&b, "\nRelease: %s\n", keys.ReleaseURI(r.Bucket, r.Prefix, r.Name, r.Tag))
	}
	if h := in.Hub; h != nil {
		fmt.Fprintf(&b, "\nHugging Face Hub: %s@%s\n", h.Repo, cmp.Or(h.Tag, h.Revision, "main"))
	}
	return b.String()
}

// SaltNote names a protocol-4.0 bake's salt by its SHA-256, never by its
// value, and says where it goes; "" under protocol 3.0.
func SaltNote(spec bakeapi.Spec) string {
	s := spec.Salt
	if spec.Protocol() != bakeapi.SeedProtocolV4 {
		return ""
	}
	where := "published in metadata.json"
	if s.Withhold {
		where = fmt.Sprintf("withheld, id %s: keep it, readers need it in %s",
			s.ID, dataset.SaltEnv)
	}
	return fmt.Sprintf("Seed protocol 4.0, salt SHA-256 %s (%s)", s.SHA256, where)
}

// missingSearchAttribute reports whether the server refused a start because
// BakeID or BakeStage is not registered: an InvalidArgument that names one.
func missingSearchAttribute(err error) bool {
	var inv *serviceerror.InvalidArgument
	if !errors.As(err, &inv) {
		return false
	}
	return strings.Contains(inv.Message, bakeapi.BakeIDAttribute) ||
		strings.Contains(inv.Message, bakeapi.BakeStageAttribute)
}
