package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/internal/datasettest"
	"github.com/whestbake/whestbake/internal/devstack"
	"github.com/whestbake/whestbake/internal/keys"
	"github.com/whestbake/whestbake/internal/manifest"
)

// TestStoredStateIntegrity: what a bake stores and later trusts is checked
// on every read, whatever S3's metadata says (issue 18, items 1-3 and 7).
func TestStoredStateIntegrity(t *testing.T) {
	s := newStack(t)
	s.startWorker("control")
	gpu := s.startWorker("gpu")
	ctx := context.Background()
	statusCfg := s.writeConfig("status", s.baseConfig())

	// A finished MLP's result changed by one ulp with a plain PUT, and an
	// unfinished one's checkpoint changed in one hex digit of an exact sum
	// with the old recorded sha256 kept: before seals the first was
	// published and the second failed the slice's every attempt. Now both
	// are discarded and recomputed, status says so, and the release is the
	// local bake's, bit for bit.
	t.Run("damaged result and checkpoint are recomputed", func(t *testing.T) {
		s := s.sub(t)
		b := bakeSpec{
			ID:          "damaged",
			Width:       64,
			Depth:       4,
			NSamples:    3_000_000,
			SliceSize:   2,
			MaxInFlight: 1,
			Tag:         "damaged",
			Splits:      []splitSpec{{"public", "default", 3, 11}},
		}
		cfg := s.bakeConfig(b)
		s.mustWhestbake("bake", "--config-file", cfg, "--id", b.ID)
		bk := keys.Bake(b.ID)
		s.killInsideMLP2(t, gpu, b.ID, 90*time.Second)

		res, err := s.art.Get(ctx, bk.MLPResult("public", 1))
		if err != nil {
			t.Fatal(err)
		}
		var r struct {
			Bits []uint32 `json:"layer_means_bits"`
		}
		if err := json.Unmarshal(res, &r); err != nil || len(r.Bits) == 0 {
			t.Fatalf("result of MLP 1: %v", err)
		}
		first := fmt.Appendf(nil, `"layer_means_bits":[%d`, r.Bits[0])
		ulp := bytes.Replace(res, first, fmt.Appendf(nil, `"layer_means_bits":[%d`, r.Bits[0]+1), 1)
		if bytes.Equal(ulp, res) {
			t.Fatal("the test did not change the result")
		}
		if err := s.art.Put(ctx, bk.MLPResult("public", 1), ulp); err != nil {
			t.Fatal(err)
		}

		ck, err := s.art.Get(ctx, bk.MLPCheckpoint("public", 2))
		if err != nil {
			t.Fatal(err)
		}
		var cp struct {
			Exact []string `json:"layer_exact"`
		}
		if err := json.Unmarshal(ck, &cp); err != nil || len(cp.Exact) == 0 || cp.Exact[0] == "" {
			t.Fatalf("checkpoint of MLP 2 has no exact sums (%v)", err)
		}
		sum := cp.Exact[0]
		digit := "0"
		if sum[len(sum)-1] == '0' {
			digit = "1"
		}
		damaged := bytes.Replace(ck, []byte(`"`+sum+`"`), []byte(`"`+sum[:len(sum)-1]+digit+`"`), 1)
		info, err := s.art.Stat(ctx, bk.MLPCheckpoint("public", 2))
		if err != nil {
			t.Fatal(err)
		}
		keepDigest := minio.PutObjectOptions{UserMetadata: map[string]string{"sha256": info.SHA256}}
		_, err = s.raw(t).PutObject(ctx, artifactBucket, bk.MLPCheckpoint("public", 2),
			bytes.NewReader(damaged), int64(len(damaged)), keepDigest)
		if err != nil {
			t.Fatal(err)
		}

		s.startWorker("gpu")
		s.mustWhestbake("bake", "--config-file", cfg, "--id", b.ID, "--wait") // reattaches
		var slice1 *sliceRun
		for _, run := range s.sliceRuns(bakeapi.SplitWorkflowID(b.ID, "public")) {
			if run.In.Slice == 1 {
				slice1 = &run
			}
		}
		if slice1 == nil || slice1.Out.Discarded != 2 || slice1.Out.Computed != 2 ||
			slice1.Out.Reused != 0 || slice1.Out.Resumed != 0 {
			t.Errorf("slice 1 after the damage: %+v, "+
				"want the result and the checkpoint discarded and both MLPs computed", slice1)
		}
		st := s.mustWhestbake("status", b.ID, "--config-file", statusCfg)
		if !strings.Contains(st.stdout, "split public: 2 damaged objects") {
			t.Errorf("status does not tell of the discarded objects:\n%s", st.stdout)
		}
		datasettest.SameDataset(t, s.download(b), s.localBake(b))
	})

	// A release may not point into the bakes' folder: there its Push wrote
	// another bake's dataset, which that bake then published as its own,
	// and gc of that bake deleted the release.
	t.Run("a release cannot point into a bake", func(t *testing.T) {
		s := s.sub(t)
		b := smallBake("attacker", 500)
		cfg := s.bakeConfigMap(b)
		cfg["release"] = map[string]any{
			"bucket": artifactBucket,
			"prefix": "bakes",
			"name":   "victim",
			"tag":    "dataset",
		}
		r := s.whestbake(nil, "bake", "--config-file", s.writeConfig("bake-attacker", cfg),
			"--id", b.ID)
		if !r.refused("release.prefix", "inside bakes/") {
			t.Errorf("a release into bakes/victim/dataset: "+
				"want a refusal naming release.prefix:\n%s", r)
		}
		if left, err := s.art.List(ctx, keys.Bake(b.ID).Prefix()); err != nil || len(left) != 0 {
			t.Errorf("the refused bake stored %v (%v)", left, err)
		}
		_, err := s.tc.DescribeWorkflowExecution(ctx, bakeapi.BakeWorkflowID(b.ID), "")
		if err == nil {
			t.Error("the refused bake was started")
		}
	})

	// gc against another namespace, where the running bake is unknown,
	// deleted its seeds and identity blocks. Now gc deletes only what the
	// namespace and cluster the bake was started in say is closed.
	t.Run("gc proves the bake closed where it was started", func(t *testing.T) {
		s := s.sub(t)
		slow := bakeSpec{
			ID:          "gc-elsewhere",
			Width:       64,
			Depth:       4,
			NSamples:    5_000_000,
			SliceSize:   1,
			MaxInFlight: 1,
			Tag:         "gc-elsewhere",
			Splits:      []splitSpec{{"public", "default", 3, 9}},
		}
		s.mustWhestbake("bake", "--config-file", s.bakeConfig(slow), "--id", slow.ID)
		bk := keys.Bake(slow.ID)
		waitFor(t, time.Minute, "the identity blocks", func() bool {
			ok, err := s.art.Exists(ctx, bk.IdentitiesDone("public"))
			return err == nil && ok
		})
		const other = "elsewhere"
		registration := &workflowservice.RegisterNamespaceRequest{
			Namespace:                        other,
			WorkflowExecutionRetentionPeriod: durationpb.New(24 * time.Hour),
		}
		if _, err := s.tc.WorkflowService().RegisterNamespace(ctx, registration); err != nil {
			t.Fatal(err)
		}
		// The bakes' search attributes, as a namespace whestbake runs in has them.
		attrs := map[string]enumspb.IndexedValueType{}
		for _, sa := range devstack.SearchAttributes {
			attrs[sa.Name] = enumspb.INDEXED_VALUE_TYPE_KEYWORD
		}
		addition := &operatorservice.AddSearchAttributesRequest{
			Namespace:        other,
			SearchAttributes: attrs,
		}
		if _, err := s.tc.OperatorService().AddSearchAttributes(ctx, addition); err != nil {
			t.Fatal(err)
		}
		oc, err := client.Dial(client.Options{
			HostPort:  s.opts.TemporalAddr(),
			Namespace: other,
			Logger:    tlog.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil))),
		})
		if err != nil {
			t.Fatal(err)
		}
		defer oc.Close()
		// The new namespace answers as the wrong one did: it does not know the bake.
		waitFor(t, time.Minute, "namespace "+other+" to serve", func() bool {
			_, err := oc.DescribeWorkflowExecution(ctx, bakeapi.BakeWorkflowID(slow.ID), "")
			var nf *serviceerror.NotFound
			if !errors.As(err, &nf) {
				return false
			}
			_, err = oc.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
				Namespace: other,
				Query:     bakeapi.BakeIDAttribute + " = '" + slow.ID + "'",
			})
			return err == nil
		})
		elsewhere := s.baseConfig()
		elsewhere["temporal"].(map[string]any)["namespace"] = other
		r := s.whestbake(nil, "gc", slow.ID, "--config-file", s.writeConfig("elsewhere", elsewhere))
		if !r.refused("was started in namespace default", "connects to namespace "+other,
			"nothing was deleted") {
			t.Errorf("gc of a running bake from another namespace: "+
				"want a refusal that says where the bake runs:\n%s", r)
		}
		// Nor does a start of the same bake ID in the other namespace run
		// a second copy of it into the same objects.
		other2 := s.bakeConfigMap(slow)
		other2["temporal"].(map[string]any)["namespace"] = other
		r = s.whestbake(nil, "bake", "--config-file", s.writeConfig("bake-elsewhere", other2),
			"--id", slow.ID)
		if !r.refused("was started in namespace default", "a bake runs in one namespace") {
			t.Errorf("a start of the running bake in another namespace: want a refusal:\n%s", r)
		}
		_, err = oc.DescribeWorkflowExecution(ctx, bakeapi.BakeWorkflowID(slow.ID), "")
		if err == nil {
			t.Error("the bake was started a second time, in namespace " + other)
		}
		for _, key := range []string{
			bk.Seeds("public"),
			bk.IdentityBlock("public", 0),
			bk.IdentitiesDone("public"),
			bk.Record(),
		} {
			if ok, err := s.art.Exists(ctx, key); err != nil || !ok {
				t.Errorf("after the refused gc, %s is gone (%v)", key, err)
			}
		}
		// Where it was started, once closed, gc deletes; a bake without a
		// record of where it was started (an earlier release's) only with --force.
		s.cancelAndWaitClosed(t, statusCfg, slow.ID, "public")
		if err := s.art.Delete(ctx, bk.StartedIn()); err != nil {
			t.Fatal(err)
		}
		r = s.whestbake(nil, "gc", slow.ID, "--config-file", statusCfg)
		if !r.refused("has no record of the Temporal cluster and namespace it was started in",
			"gc --force") {
			t.Errorf("gc of a bake without its started-in record: "+
				"want a refusal pointing at --force:\n%s", r)
		}
		s.mustWhestbake("gc", slow.ID, "--config-file", statusCfg, "--force")
		left, err := s.art.List(ctx, bk.Prefix())
		if err != nil || len(left) != 1 || left[0] != bk.Record() {
			t.Errorf("after gc --force of the cancelled bake: %v (%v), want its record alone",
				left, err)
		}
	})
}

// TestASliceRewrittenBehindTheMergeHealsAtTheRestart: a slice's parquet
// rewritten after the merge read it, and the control worker killed. The
// merge's next attempt finds the slice unlike its manifest and fails the
// bake for good, merging nothing from it and discarding its commit; the
// restart that the failure names commits the slice again from its per-MLP
// results, and the release is the local bake's. The restart used to fail
// the same way: the slice was taken as committed on its manifest alone,
// and the failure said to bake again under a new --id.
func TestASliceRewrittenBehindTheMergeHealsAtTheRestart(t *testing.T) {
	s := newStack(t)
	control := s.startWorker("control")
	s.startWorker("gpu")
	ctx := context.Background()
	// About a second per MLP, one slice at a time: the merge has read the
	// first slice long before the last is baked.
	b := bakeSpec{
		ID:          "rewritten",
		Width:       32,
		Depth:       3,
		NSamples:    3_000_000,
		SliceSize:   1,
		MaxInFlight: 1,
		Tag:         "rewritten",
		Splits:      []splitSpec{{"public", "default", 5, 71}},
	}
	cfg := s.bakeConfig(b)
	bk := keys.Bake(b.ID)
	s.mustWhestbake("bake", "--config-file", cfg, "--id", b.ID)
	waitFor(t, time.Minute, "the merge to take slice 0 (its uploads open)", func() bool {
		return len(s.uploads(t, artifactBucket, bk.Dataset()+"/")) == 2
	})
	control.kill()
	m, _, err := manifest.Read(ctx, s.art, bk.Slice("public", 0))
	if err != nil {
		t.Fatal(err)
	}
	var parquet string
	for _, f := range m.Files {
		if strings.HasSuffix(f.Path, ".parquet") {
			parquet = path.Join(bk.Slice("public", 0), f.Path)
		}
	}
	data, err := s.art.Get(ctx, parquet)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)/2] ^= 1
	if err := s.art.Put(ctx, parquet, data); err != nil {
		t.Fatal(err)
	}
	s.startWorker("control")
	r := s.whestbake(nil, "watch", b.ID, "--config-file", cfg, "--interval", "200ms")
	if !r.failed(parquet, "cannot be merged", "was discarded", "whestbake bake --id "+b.ID) ||
		strings.Contains(r.stdout, "new --id") {
		t.Fatalf("the merge of a rewritten slice: want a failure naming it "+
			"and the restart that heals it:\n%s", r)
	}
	r = s.mustWhestbake("bake", "--config-file", cfg, "--id", b.ID, "--wait")
	if !strings.Contains(r.stdout, "Restarted") {
		t.Errorf("the restart:\n%s", r)
	}
	datasettest.SameDataset(t, s.download(b), s.localBake(b))
}
