package cli

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	enums "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/dataset"
	"github.com/whestbake/whestbake/internal/bake"
	"github.com/whestbake/whestbake/internal/cmdline"
	"github.com/whestbake/whestbake/internal/keys"
	"github.com/whestbake/whestbake/internal/preflight"
	"github.com/whestbake/whestbake/internal/settings"
	"github.com/whestbake/whestbake/internal/store"
)

func newBakeTemporalCmd() *cobra.Command {
	var wait bool
	cmd := starterVerb(&cobra.Command{
		Use:   "bake --config-file FILE [--id ID] [--wait]",
		Short: "Start a bake on the Temporal workers (or reattach to it); --wait shows per-split progress until it ends",
		Long: `Starts the BakeWorkflow of the config's bake on the Temporal workers
(whestbake-worker), after validating the whole config and checking the S3 store.

The bake ID decides what happens: a running bake with that ID is reattached
(its own input stands), a failed or cancelled one is restarted (finished MLPs
and slices are reused from S3), and a completed one is refused. A restart
first waits until nothing of the last run still runs: a bake being cancelled
is restarted once it has stopped, not reattached. While ` + "`whestbake gc`" + ` of the
same ID deletes, the start is refused, naming it.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := starterConfig(cmd, map[string]string{"id": "bake.id"})
			if err != nil {
				return err
			}
			if cmd.Flags().Changed("id") && settings.CheckBakeID(cfg.Bake.ID) != nil {
				// A bad --id is a usage error (exit 2), reported with
				// every other problem of the config, before any connection.
				_, err := preflight.Bake(cfg)
				return cmdline.Usage(err)
			}
			return runTemporalBake(cmd.Context(), cfg, wait, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	})
	cmd.Flags().String("id", "", "bake ID (bake.id): [A-Za-z0-9][A-Za-z0-9._-]*")
	cmd.Flags().BoolVar(&wait, "wait", false, "show per-split progress bars until the bake ends; exit status 1 if it failed")
	return cmd
}

func runTemporalBake(ctx context.Context, cfg settings.Config, wait bool, out, errOut io.Writer) error {
	// Step 1. Everything is checked before anything is written or started.
	in, err := preflight.Bake(cfg)
	if err != nil {
		return err
	}
	st, err := store.Open(ctx, cfg.StoreConfig(), cfg.S3.Bucket)
	if err != nil {
		return err
	}
	if in.Release.Bucket != "" {
		if err := checkReleaseFree(ctx, st, in); err != nil {
			return err
		}
	}
	c, err := dial(ctx, cfg, errOut)
	if err != nil {
		return err
	}
	defer c.Close()
	id := in.BakeID

	// Step 2. What a bake with this ID already did decides what happens; a
	// restart waits until nothing of the last run runs (a cancel winds down).
	verb, note, drain, err := lastRun(ctx, c, id)
	if err != nil {
		return err
	}
	if drain {
		if err := waitStopped(ctx, c, id, splitNames(in.Splits), out); err != nil {
			return err
		}
		if verb, _, _, err = lastRun(ctx, c, id); err != nil {
			return err
		}
	}
	// Steps 3 to 5, under the bake's lock, which gc takes too.
	run, err := startLocked(ctx, c, st, cfg, &in, errOut)
	if err != nil {
		return err
	}
	wid := bakeapi.BakeWorkflowID(id)
	fmt.Fprintf(out, "%s bake %s (workflow %s, run %s)\n%s", verb, id, wid, run.GetRunID(), note)
	if salt := saltNote(in.Spec); salt != "" {
		fmt.Fprintf(out, "%s; every GPU worker of this bake needs it in %s.\n", salt, dataset.SaltEnv)
	}
	fmt.Fprintf(out, "Web UI: %s\n", webUILink(cfg, wid))
	if !wait {
		fmt.Fprintf(out, "Follow it with `whestbake watch %s`.\n", id)
		return nil
	}
	// Step 6. Progress until the end, then the result or the failure.
	return followToEnd(ctx, c, cfg, id, out)
}

// startLocked stores the bake's inputs and starts its workflow (or attaches
// to the running one) holding the bake's lock, which gc takes too: so gc
// never deletes the seeds files just uploaded before the workflow runs, and
// a bake never starts while gc deletes (docs/TEMPORAL.md, "gc versus a
// restart"). The lock goes as soon as the workflow runs: gc refuses a
// running bake by itself.
func startLocked(ctx context.Context, c client.Client, st *store.Store, cfg settings.Config, in *bakeapi.BakeInput, errOut io.Writer) (client.WorkflowRun, error) {
	lock := newLock(c, cfg.Temporal.Namespace, in.BakeID, "bake")
	if err := lock.take(ctx, "nothing was started"); err != nil {
		return nil, err
	}
	defer lock.releaseOrWarn(errOut)
	// Steps 3 and 4. What decides the bake's numbers goes to S3, or must match what is there.
	if err := storeBakeInputs(ctx, st, c, cfg, in); err != nil {
		return nil, err
	}
	// Step 5. Start, while the lock certainly holds: past it, gc may have
	// deleted what step 3 stored.
	if left := lock.left(); left < lockMargin {
		return nil, fmt.Errorf("bake %s: storing its inputs took until %s before its lock ends, and gc may run after it: "+
			"nothing was started; run `whestbake bake` again", in.BakeID, left.Round(time.Second))
	}
	return startBakeWorkflow(ctx, c, *in)
}

// storeBakeInputs puts the bake's seeds files and record in S3 and notes where
// it runs, then fills in what the record fixes: creation time, fingerprints.
func storeBakeInputs(ctx context.Context, st *store.Store, c client.Client, cfg settings.Config, in *bakeapi.BakeInput) error {
	// Step 3. User seeds files go to S3 create-only; a different file already there is refused.
	sums, err := uploadSeeds(ctx, st, cfg)
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
	// Where it runs: the first start records it, every later start must match (gc relies on it).
	return recordStartedIn(ctx, st, c, cfg.Temporal.Namespace, in.BakeID)
}

// startBakeWorkflow starts the BakeWorkflow of in, or attaches to its running one.
func startBakeWorkflow(ctx context.Context, c client.Client, in bakeapi.BakeInput) (client.WorkflowRun, error) {
	id := in.BakeID
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID:                                       bakeapi.BakeWorkflowID(id),
		TaskQueue:                                bakeapi.ControlQueue,
		WorkflowIDConflictPolicy:                 enums.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		WorkflowIDReusePolicy:                    enums.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE_FAILED_ONLY,
		WorkflowExecutionErrorWhenAlreadyStarted: true,
		TypedSearchAttributes: temporal.NewSearchAttributes(
			temporal.NewSearchAttributeKeyKeyword(bakeapi.BakeIDAttribute).ValueSet(id),
			temporal.NewSearchAttributeKeyKeyword(bakeapi.BakeStageAttribute).ValueSet(bakeapi.StageSeeding)),
		StaticSummary: summary(in),
		StaticDetails: details(in),
	}, bakeapi.BakeWorkflowName, in)
	if err != nil {
		var started *serviceerror.WorkflowExecutionAlreadyStarted
		if errors.As(err, &started) {
			return nil, completedError(id)
		}
		if missingSearchAttribute(err) {
			return nil, fmt.Errorf("starting bake %s: %v: register the search attributes BakeID and BakeStage (Keyword) on the server; `whestbake dev up` does", id, err)
		}
		return nil, fmt.Errorf("starting bake %s: %w", id, err)
	}
	return run, nil
}

// followToEnd shows bake id's progress until it ends, then its result, or
// its failure as the error.
func followToEnd(ctx context.Context, c client.Client, cfg settings.Config, id string, out io.Writer) error {
	start := time.Now()
	state, err := follow(ctx, c, cfg, id, out)
	if err != nil {
		return err
	}
	if state.Result == nil {
		return fmt.Errorf("bake %s %s: %s\n  details: `whestbake status %s` or %s", id, statusWord(state.Status), failureText(state.Failure), id, webUILink(cfg, bakeapi.BakeWorkflowID(id)))
	}
	r := state.Result
	fmt.Fprintf(out, "✓ Bake %s done in %s\n  dataset  s3://%s/%s (manifest sha256 %s)\n", id, formatDuration(time.Since(start)), cfg.S3.Bucket, r.DatasetPrefix, r.ManifestSHA256)
	if r.ReleaseURI != "" {
		fmt.Fprintf(out, "  release  %s\n  download `whestbake dataset download %s --output DIR`\n", r.ReleaseURI, strings.TrimSuffix(r.ReleaseURI, "/"))
	}
	if r.HubURL != "" {
		fmt.Fprintf(out, "  hub      %s (commit %s)\n", r.HubURL, r.HubCommit)
	}
	return nil
}

// lastRun says what starting bake id does, from what its last run did: the
// verb and note to print, and whether the start must first wait for that
// run to stop (a restart, or a running bake being cancelled, which a start
// restarts once it has stopped rather than attach to it).
func lastRun(ctx context.Context, c client.Client, id string) (verb, note string, drain bool, err error) {
	desc, err := c.DescribeWorkflowExecution(ctx, bakeapi.BakeWorkflowID(id), "")
	var nf *serviceerror.NotFound
	switch {
	case errors.As(err, &nf):
		return "Started", "", false, nil
	case err != nil:
		return "", "", false, err
	}
	info := desc.GetWorkflowExecutionInfo()
	switch s := info.GetStatus(); s {
	case enums.WORKFLOW_EXECUTION_STATUS_RUNNING:
		cancelling, err := cancelRequested(ctx, c, bakeapi.BakeWorkflowID(id), info.GetExecution().GetRunId())
		if err != nil {
			return "", "", false, err
		}
		if cancelling {
			return "Restarted (the last run was cancelled; finished MLPs and slices are reused)", "", true, nil
		}
		return "Reattached to running", "This config matches the bake's record, so nothing that decides its numbers changed. The running bake keeps\n" +
			"the input it started with: changes to slice-size, max-in-flight, policy or release apply only to a new bake ID.\n", false, nil
	case enums.WORKFLOW_EXECUTION_STATUS_COMPLETED:
		return "", "", false, completedError(id)
	default:
		return fmt.Sprintf("Restarted (the last run %s; finished MLPs and slices are reused)", statusWord(s)), "", true, nil
	}
}

func completedError(id string) error {
	return fmt.Errorf("bake %s already completed, and a completed bake is never redone: download it with `whestbake dataset download bake:%s --output DIR`, or choose a new --id", id, id)
}

// uploadSeeds puts each split's seeds file at its input key, create-only, and
// returns the files' sha256 by split name.
func uploadSeeds(ctx context.Context, st *store.Store, cfg settings.Config) (map[string]string, error) {
	sums := map[string]string{}
	for _, s := range cfg.Bake.Splits {
		if s.SeedsFile == "" {
			continue
		}
		data, err := bake.ReadSeedsFile(s.SeedsFile, int(s.NMLPs))
		if err != nil {
			return nil, fmt.Errorf("split %s: seeds-file: %w", s.Name, err)
		}
		key := keys.Bake(cfg.Bake.ID).InputSeeds(s.Name)
		err = st.PutCreate(ctx, key, data)
		if errors.Is(err, store.ErrExists) {
			old, gerr := st.Get(ctx, key)
			if gerr != nil {
				return nil, gerr
			}
			if !bytes.Equal(old, data) {
				return nil, fmt.Errorf("split %s: bake %s already has a different seeds file at s3://%s/%s (sha256 %s, yours %s): a bake's seeds never change; choose a new --id",
					s.Name, cfg.Bake.ID, cfg.S3.Bucket, key, store.SHA256Hex(old), store.SHA256Hex(data))
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
func recordBake(ctx context.Context, st *store.Store, in bakeapi.BakeInput, fileSHA256 map[string]string) (bakeapi.Record, error) {
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
		return rec, fmt.Errorf("bake %s: its record s3://%s/%s is not valid JSON (%v): choose a new --id", in.BakeID, st.Bucket(), key, err)
	}
	if changes := was.Diff(rec); len(changes) > 0 {
		lines := make([]string, len(changes))
		for i, c := range changes {
			lines[i] = "  - " + c.String()
		}
		return rec, fmt.Errorf("bake %s was started with a different spec, and one bake ID never mixes results of two specs:\n%s\n"+
			"nothing was started: restore these settings to continue bake %s, or start this config under a new --id",
			in.BakeID, strings.Join(lines, "\n"), in.BakeID)
	}
	return was, nil
}

// checkReleaseFree refuses, before anything runs, a release tag that already
// holds a dataset other than this bake's own (a re-push of it is a no-op).
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
	return fmt.Errorf("release.tag %q: %s already holds a released dataset (manifest sha256 %s) and releases are immutable: choose another release.tag",
		r.Tag, keys.ReleaseURI(r.Bucket, r.Prefix, r.Name, r.Tag), store.SHA256Hex(released))
}

// summary is the one line the Web UI shows for the bake.
func summary(in bakeapi.BakeInput) string {
	var parts []string
	for _, s := range in.Splits {
		parts = append(parts, fmt.Sprintf("%s %d", s.Name, s.NMLPs))
	}
	return fmt.Sprintf("bake %s: %s MLPs, %dx%d, %d samples, %s", in.BakeID, strings.Join(parts, " + "),
		in.Spec.Width, in.Spec.Depth, in.Spec.NSamples, in.Spec.Sampler)
}

// details is the bake's markdown card in the Web UI.
func details(in bakeapi.BakeInput) string {
	var b strings.Builder
	fmt.Fprintf(&b, "**Bake %s**\n\n| split | config | MLPs | seeds |\n|---|---|---|---|\n", in.BakeID)
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
	fmt.Fprintf(&b, "\nShape: width %d, depth %d, %d samples per MLP, sampler %s. Slices of %d MLPs, %s in flight per split on queue `%s`.\n",
		in.Spec.Width, in.Spec.Depth, in.Spec.NSamples, in.Spec.Sampler, in.SliceSize, inFlightText(in.MaxInFlight), in.GPUQueue)
	if salt := saltNote(in.Spec); salt != "" {
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

// missingSearchAttribute reports whether the server refused a start because
// BakeID or BakeStage is not registered: an InvalidArgument that names one.
func missingSearchAttribute(err error) bool {
	var inv *serviceerror.InvalidArgument
	if !errors.As(err, &inv) {
		return false
	}
	return strings.Contains(inv.Message, bakeapi.BakeIDAttribute) || strings.Contains(inv.Message, bakeapi.BakeStageAttribute)
}
